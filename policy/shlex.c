/*
 * The command gate's shell-line splitter (policy/shlex.h): a lexer with
 * POSIX-ish quoting, then tokens into simple commands.  Whatever it
 * cannot see through is marked SH_BAD or c_bad, for the gate to refuse.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "charset.h"
#include "shlex.h"

enum { T_WORD, T_SEP, T_AND, T_OR, T_PIPE, T_BG, T_NL, T_REDIR, T_BAD };

struct gtok {
	int t_kind;
	int t_redir;
	unsigned t_flags;
	size_t t_off;  /* word text in lx_buf */
	size_t t_qpos; /* decoded offset of the first quoted byte */
};

struct glex {
	const char *lx_s;
	size_t lx_n;
	char *lx_buf;
	size_t lx_blen;
	struct gtok *lx_t;
	size_t lx_nt;
	size_t lx_tsz;
	int lx_hard;
	/* the word being built */
	int lx_in;
	size_t lx_wstart;
	unsigned lx_wflags;
	size_t lx_wq;
};

static void
lx_tok(struct glex *lx, int kind, int redir)
{
	struct gtok *t;

	if (lx->lx_nt >= lx->lx_tsz) {
		lx->lx_hard = 1;
		return;
	}
	t = &lx->lx_t[lx->lx_nt++];
	memset(t, 0, sizeof(*t));
	t->t_kind = kind;
	t->t_redir = redir;
}

static void
lx_start(struct glex *lx)
{
	if (!lx->lx_in) {
		lx->lx_in = 1;
		lx->lx_wstart = lx->lx_blen;
		lx->lx_wflags = 0;
		lx->lx_wq = SIZE_MAX;
	}
}

static void
lx_putc(struct glex *lx, char c, int quoted)
{
	lx_start(lx);
	if (quoted && lx->lx_wq == SIZE_MAX)
		lx->lx_wq = lx->lx_blen - lx->lx_wstart;
	lx->lx_buf[lx->lx_blen++] = c;
}

/* An empty quoted word ("" or '') still is a word. */
static void
lx_quoted_empty(struct glex *lx)
{
	lx_start(lx);
	if (lx->lx_wq == SIZE_MAX)
		lx->lx_wq = lx->lx_blen - lx->lx_wstart;
}

static void
lx_flag(struct glex *lx, unsigned f)
{
	lx_start(lx);
	lx->lx_wflags |= f;
}

static void
lx_endword(struct glex *lx)
{
	struct gtok *t;
	const char *w;

	if (!lx->lx_in)
		return;
	lx->lx_in = 0;
	lx->lx_buf[lx->lx_blen++] = '\0';
	w = lx->lx_buf + lx->lx_wstart;
	/* ~user, ~+, ~-: another directory the gate cannot name */
	if ((lx->lx_wflags & SH_TILDE) && w[1] != '\0' && w[1] != '/')
		lx->lx_wflags |= SH_BAD;
	lx_tok(lx, T_WORD, 0);
	if (lx->lx_hard)
		return;
	t = &lx->lx_t[lx->lx_nt - 1];
	t->t_off = lx->lx_wstart;
	t->t_flags = lx->lx_wflags;
	t->t_qpos = lx->lx_wq;
}

static int
sh_name1(char c)
{
	return charset_has("A-Za-z_", c);
}

static int
sh_namec(char c)
{
	return charset_has("A-Za-z0-9_", c);
}

/*
 * At s[i] == '$' (quoted: inside "").  Only $HOME / ${HOME} at the start
 * of a word is understood (as ~); any other expansion is refused.
 * Returns the index after what was consumed.
 */
static size_t
lx_dollar(struct glex *lx, size_t i, int quoted)
{
	const char *s = lx->lx_s;
	size_t n = lx->lx_n, j;
	int at0 = !lx->lx_in || lx->lx_blen == lx->lx_wstart;

	if (i + 1 >= n || (quoted && s[i + 1] == '"') ||
	    !(sh_name1(s[i + 1]) || s[i + 1] == '{' || s[i + 1] == '(' ||
		(s[i + 1] >= '0' && s[i + 1] <= '9') ||
		strchr("@*#?$!-'\"[", s[i + 1]) != NULL)) {
		lx_putc(lx, '$', quoted);
		return i + 1;
	}
	if (s[i + 1] == '{') {
		if (at0 && n - i >= 7 && memcmp(s + i, "${HOME}", 7) == 0) {
			lx_putc(lx, '~', 0);
			lx->lx_wflags |= SH_TILDE;
			return i + 7;
		}
		lx_flag(lx, SH_BAD);
		lx_putc(lx, '$', quoted);
		return i + 1;
	}
	if (sh_name1(s[i + 1])) {
		for (j = i + 1; j < n && sh_namec(s[j]); j++)
			;
		if (at0 && j - i - 1 == 4 &&
		    memcmp(s + i + 1, "HOME", 4) == 0) {
			lx_putc(lx, '~', 0);
			lx->lx_wflags |= SH_TILDE;
			return j;
		}
	}
	/* $( $(( $[ $' $" $1 $@ $NAME ... */
	lx_flag(lx, SH_BAD);
	lx_putc(lx, '$', quoted);
	return i + 1;
}

static void
lx_redir(struct glex *lx, size_t *ip)
{
	const char *s = lx->lx_s;
	size_t i = *ip, n = lx->lx_n;
	const char *w;
	int op;

	/* "2>": a word of digits right before is the fd number */
	if (lx->lx_in) {
		lx->lx_buf[lx->lx_blen] = '\0';
		w = lx->lx_buf + lx->lx_wstart;
		if (lx->lx_wq == SIZE_MAX && lx->lx_wflags == 0 &&
		    w[0] != '\0' && strspn(w, "0123456789") == strlen(w) &&
		    strlen(w) <= 2) {
			lx->lx_in = 0;
			lx->lx_blen = lx->lx_wstart;
		} else
			lx_endword(lx);
	}
	if (s[i] == '<') {
		if (i + 1 < n && (s[i + 1] == '<' || s[i + 1] == '(')) {
			/* here-doc, here-string, process substitution */
			lx_tok(lx, T_BAD, 0);
			op = SH_R_IN;
			i += 2;
			if (i < n && (s[i] == '<' || s[i] == '-'))
				i++;
		} else if (i + 1 < n && s[i + 1] == '>') {
			op = SH_R_RW;
			i += 2;
		} else if (i + 1 < n && s[i + 1] == '&') {
			op = SH_R_DUPIN;
			i += 2;
		} else {
			op = SH_R_IN;
			i++;
		}
	} else if (s[i] == '&') { /* &> &>> */
		op = SH_R_OUT;
		i += 2;
		if (i < n && s[i] == '>')
			i++;
	} else {
		if (i + 1 < n && s[i + 1] == '(') {
			lx_tok(lx, T_BAD, 0);
			op = SH_R_OUT;
			i += 2;
		} else if (i + 1 < n && s[i + 1] == '&') {
			op = SH_R_DUPOUT;
			i += 2;
		} else if (i + 1 < n && (s[i + 1] == '>' || s[i + 1] == '|')) {
			op = SH_R_OUT;
			i += 2;
		} else {
			op = SH_R_OUT;
			i++;
		}
	}
	lx_tok(lx, T_REDIR, op);
	*ip = i;
}

/*
 * The lexer's steps: each takes the index of the character that chose
 * it and returns the index after what it consumed, or LX_OPEN when the
 * line ends inside a quote or after a lone backslash.
 */
#define LX_OPEN SIZE_MAX

/* ; or ;; (a case terminator: refused) */
static size_t
lx_semi(struct glex *lx, size_t i)
{
	lx_endword(lx);
	if (i + 1 < lx->lx_n && lx->lx_s[i + 1] == ';') {
		lx_tok(lx, T_BAD, 0);
		i++;
	}
	lx_tok(lx, T_SEP, 0);
	return i + 1;
}

/* An operator of one byte c or two (cc): kind1 or kind2. */
static size_t
lx_op(struct glex *lx, size_t i, int kind2, int kind1)
{
	lx_endword(lx);
	if (i + 1 < lx->lx_n && lx->lx_s[i + 1] == lx->lx_s[i]) {
		lx_tok(lx, kind2, 0);
		return i + 2;
	}
	lx_tok(lx, kind1, 0);
	return i + 1;
}

/* && or &, or the redirection &> */
static size_t
lx_amp(struct glex *lx, size_t i)
{
	if (i + 1 < lx->lx_n && lx->lx_s[i + 1] == '>') {
		lx_redir(lx, &i);
		return i;
	}
	return lx_op(lx, i, T_AND, T_BG);
}

/* || or | (and |&) */
static size_t
lx_pipe(struct glex *lx, size_t i)
{
	size_t j = lx_op(lx, i, T_OR, T_PIPE);

	if (j == i + 1 && j < lx->lx_n && lx->lx_s[j] == '&')
		j++;
	return j;
}

/* '...': every byte literal */
static size_t
lx_squote(struct glex *lx, size_t i)
{
	const char *s = lx->lx_s;
	size_t n = lx->lx_n;

	lx_quoted_empty(lx);
	for (i++; i < n && s[i] != '\''; i++)
		lx_putc(lx, s[i], 1);
	return i >= n ? LX_OPEN : i + 1;
}

/* "...": backslash escapes, $ expansions, ` refused */
static size_t
lx_dquote(struct glex *lx, size_t i)
{
	const char *s = lx->lx_s;
	size_t n = lx->lx_n;

	lx_quoted_empty(lx);
	for (i++; i < n && s[i] != '"';) {
		if (s[i] == '\\' && i + 1 < n &&
		    strchr("$`\"\\\n", s[i + 1]) != NULL) {
			if (s[i + 1] != '\n')
				lx_putc(lx, s[i + 1], 1);
			i += 2;
		} else if (s[i] == '$') {
			i = lx_dollar(lx, i, 1);
		} else {
			if (s[i] == '`')
				lx_flag(lx, SH_BAD);
			lx_putc(lx, s[i], 1);
			i++;
		}
	}
	return i >= n ? LX_OPEN : i + 1;
}

/* \c: c quoted; backslash-newline joins lines */
static size_t
lx_backslash(struct glex *lx, size_t i)
{
	if (i + 1 >= lx->lx_n)
		return LX_OPEN;
	if (lx->lx_s[i + 1] != '\n')
		lx_putc(lx, lx->lx_s[i + 1], 1);
	return i + 2;
}

/* Any other byte: part of a word; a leading ~ or a glob is marked. */
static size_t
lx_plain(struct glex *lx, size_t i)
{
	char c = lx->lx_s[i];

	if (c == '~' && !lx->lx_in) {
		lx_putc(lx, c, 0);
		lx->lx_wflags |= SH_TILDE;
	} else {
		if (c == '*' || c == '?' || c == '[')
			lx_flag(lx, SH_GLOB);
		lx_putc(lx, c, 0);
	}
	return i + 1;
}

/* Lex s[0..n) (validated) into lx->lx_t; lx_hard on a fatal problem. */
static void
lx_run(struct glex *lx)
{
	const char *s = lx->lx_s;
	size_t i = 0, n = lx->lx_n;
	char c;

	while (i < n && !lx->lx_hard) {
		c = s[i];
		if (c == ' ' || c == '\t') {
			lx_endword(lx);
			i++;
		} else if (c == '\n') {
			lx_endword(lx);
			lx_tok(lx, T_NL, 0);
			i++;
		} else if (c == '#' && !lx->lx_in) {
			while (i < n && s[i] != '\n')
				i++;
		} else if (c == ';') {
			i = lx_semi(lx, i);
		} else if (c == '&') {
			i = lx_amp(lx, i);
		} else if (c == '|') {
			i = lx_pipe(lx, i);
		} else if (c == '<' || c == '>') {
			lx_redir(lx, &i);
		} else if (c == '(' || c == ')') {
			/* subshell, function definition, extglob */
			lx_endword(lx);
			lx_tok(lx, T_BAD, 0);
			i++;
		} else if (c == '{' || c == '}' || c == '`') {
			/* group, brace expansion, command substitution */
			lx_flag(lx, SH_BAD);
			lx_putc(lx, c, 0);
			i++;
		} else if (c == '\'') {
			i = lx_squote(lx, i);
		} else if (c == '"') {
			i = lx_dquote(lx, i);
		} else if (c == '\\') {
			i = lx_backslash(lx, i);
		} else if (c == '$') {
			i = lx_dollar(lx, i, 0);
		} else {
			i = lx_plain(lx, i);
		}
		if (i == LX_OPEN) {
			lx->lx_hard = 1;
			return;
		}
	}
	lx_endword(lx);
}

int
shlex_is_assignment(const struct sh_word *w)
{
	const char *s = w->w_s, *eq = strchr(s, '=');

	if (eq == NULL || eq == s || !sh_name1(s[0]) ||
	    (w->w_q != SIZE_MAX && w->w_q <= (size_t)(eq - s)))
		return 0;
	for (; s < eq; s++)
		if (!sh_namec(*s))
			return 0;
	return 1;
}

/* Tokens -> commands; -1 when the line is not a list of commands. */
static int
build_cmds(struct glex *lx, struct sh_cmd *cmds, size_t *ncmd)
{
	struct sh_cmd *c = NULL;
	struct gtok *t;
	size_t i, n = 0;
	int pend = -1, pipe_in = 0, last_op = T_NL;
	unsigned pf;

	for (i = 0; i < lx->lx_nt; i++) {
		t = &lx->lx_t[i];
		if (t->t_kind == T_WORD || t->t_kind == T_REDIR ||
		    t->t_kind == T_BAD) {
			if (c == NULL) {
				if (n >= SHLEX_CMDS_MAX)
					return -1;
				c = &cmds[n++];
				memset(c, 0, sizeof(*c));
				c->c_pipe_in = pipe_in;
			}
			if (t->t_kind == T_BAD) {
				c->c_bad = 1;
				continue;
			}
			if (t->t_kind == T_REDIR) {
				if (pend != -1)
					return -1;
				pend = t->t_redir;
				continue;
			}
			pf = t->t_flags;
			if (pend != -1) {
				if (c->c_nr >= SHLEX_WORDS_MAX)
					return -1;
				c->c_r[c->c_nr].r_op = pend;
				c->c_r[c->c_nr].r_s = lx->lx_buf + t->t_off;
				c->c_r[c->c_nr].r_f = pf;
				c->c_nr++;
				pend = -1;
				continue;
			}
			if (c->c_nw + c->c_nr >= SHLEX_WORDS_MAX)
				return -1;
			c->c_w[c->c_nw].w_s = lx->lx_buf + t->t_off;
			c->c_w[c->c_nw].w_f = pf;
			c->c_w[c->c_nw].w_q = t->t_qpos;
			c->c_nw++;
			continue;
		}
		/* an operator */
		if (pend != -1)
			return -1;
		if (c == NULL) {
			/* blank lines, and a newline after | && || */
			if (t->t_kind != T_NL)
				return -1;
			continue;
		}
		last_op = t->t_kind;
		pipe_in = t->t_kind == T_PIPE;
		c = NULL;
	}
	if (pend != -1 || (c == NULL && (last_op == T_AND || last_op == T_OR ||
					    last_op == T_PIPE)))
		return -1;
	*ncmd = n;
	return n == 0 ? -1 : 0;
}

void
shlex_free(struct sh_line *sl)
{
	if (sl == NULL)
		return;
	free(sl->sl_cmds);
	free(sl->sl_buf);
	memset(sl, 0, sizeof(*sl));
}

int
shlex_split(const char *s, size_t n, struct sh_line *out)
{
	struct glex lx;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	memset(&lx, 0, sizeof(lx));
	lx.lx_s = s;
	lx.lx_n = n;
	lx.lx_tsz = n + 2;
	lx.lx_buf = malloc(2 * n + 2);
	lx.lx_t = calloc(lx.lx_tsz, sizeof(*lx.lx_t));
	out->sl_cmds = malloc(SHLEX_CMDS_MAX * sizeof(*out->sl_cmds));
	if (lx.lx_buf == NULL || lx.lx_t == NULL || out->sl_cmds == NULL) {
		rc = -2;
		goto done;
	}
	lx_run(&lx);
	if (lx.lx_hard || build_cmds(&lx, out->sl_cmds, &out->sl_ncmd) == -1)
		goto done;
	out->sl_buf = lx.lx_buf;
	lx.lx_buf = NULL;
	rc = 0;
done:
	free(lx.lx_t);
	free(lx.lx_buf);
	if (rc != 0)
		shlex_free(out);
	return rc;
}
