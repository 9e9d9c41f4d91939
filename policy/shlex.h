/*
 * The command gate's shell-line splitter, pure: POSIX-ish quoting and
 * operators into simple commands (words plus redirections).  Constructs
 * it cannot see through (substitutions, here-docs, subshells, most
 * expansions) are marked so the gate refuses them; no I/O, no globals.
 */
#ifndef CORDON_POLICY_SHLEX_H
#define CORDON_POLICY_SHLEX_H

#include <stddef.h>

#define SHLEX_CMDS_MAX	32  /* simple commands in one line */
#define SHLEX_WORDS_MAX 256 /* words plus redirections in one command */

/* Word flags. */
#define SH_GLOB	 0x1 /* unquoted * ? [ */
#define SH_TILDE 0x2 /* starts with an expanding ~ (or $HOME) */
#define SH_BAD	 0x4 /* holds a construct the gate cannot analyse */

/* Redirection operators. */
enum { SH_R_IN, SH_R_OUT, SH_R_DUPIN, SH_R_DUPOUT, SH_R_RW };

struct sh_word {
	const char *w_s; /* decoded text: quotes and escapes removed */
	unsigned w_f;
	size_t w_q; /* decoded offset of the first quoted byte, or SIZE_MAX */
};

struct sh_redir {
	int r_op;
	const char *r_s; /* the target word */
	unsigned r_f;
};

struct sh_cmd {
	struct sh_word c_w[SHLEX_WORDS_MAX];
	size_t c_nw;
	struct sh_redir c_r[SHLEX_WORDS_MAX];
	size_t c_nr;
	int c_bad;     /* an operator the gate cannot analyse: ( ) << ;; */
	int c_pipe_in; /* stdin is the previous command's stdout */
};

/* A split line; the words point into sl_buf. */
struct sh_line {
	char *sl_buf;
	struct sh_cmd *sl_cmds;
	size_t sl_ncmd;
};

/*
 * Split s[0..n) (the caller has checked its bytes) into commands joined
 * by ; & && || | and newlines.  Returns 0 (free with shlex_free), -1
 * when it is not a list of simple commands (unbalanced quotes, a dangling
 * operator, too many commands or words), -2 when out of memory.
 */
int shlex_split(const char *s, size_t n, struct sh_line *out);
void shlex_free(struct sh_line *);

/* NAME=value with an unquoted, valid NAME. */
int shlex_is_assignment(const struct sh_word *);

#endif
