/*
 * What every `cordon` command shares on its command line: option parsing
 * that names the offending word (cleaned, never its value) with the
 * nearest known one, the help switch, and the "did you mean" lookup.
 * Writes only to stderr.
 */
#include <getopt.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "redact.h"
#include "text.h"

#define CLI_OPTS_MAX 32

void
cli_clean(const char *in, size_t inlen, char *out, size_t outsz)
{
	size_t i, o = 0;

	if (outsz == 0)
		return;
	/* A pasted token is not shown, even as a word. */
	if (redact_value_secretish(in)) {
		snprintf(out, outsz, "(not shown)");
		return;
	}
	for (i = 0; i < inlen && in[i] != '\0' && o + 4 < outsz; i++) {
		if (i == CLI_WORD_MAX) {
			memcpy(out + o, "...", 3);
			o += 3;
			break;
		}
		/* Printable ASCII only: no control, escape or bidi bytes. */
		out[o++] = in[i] > 0x20 && in[i] < 0x7f ? in[i] : '?';
	}
	out[o] = '\0';
}

int
cli_wants_help(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return 0;
		if (strcmp(argv[i], "-h") == 0 ||
		    strcmp(argv[i], "--help") == 0)
			return 1;
	}
	return 0;
}

/* "unknown option W; did you mean --X?" or "option W needs a value". */
static void
cli_bad_option(
    const char *cmd, int ch, int argc, char **argv, const struct option *opts)
{
	const char *cands[CLI_OPTS_MAX + 1], *el, *near = NULL;
	char word[CLI_WORD_MAX + 8], full[CLI_WORD_MAX + 8];
	size_t n = 0, len;
	int i;

	el = optind >= 1 && optind - 1 < argc ? argv[optind - 1] : "";
	if (strncmp(el, "--", 2) == 0) {
		/* The name only: what follows '=' is a value. */
		len = strcspn(el, "=");
		cli_clean(el, len, word, sizeof(word));
		for (i = 0; opts[i].name != NULL; i++)
			if (strlen(opts[i].name) == len - 2 &&
			    strncmp(opts[i].name, el + 2, len - 2) == 0)
				break;
		if (opts[i].name != NULL) {
			fprintf(stderr, "cordon %s: option %s %s\n", cmd, word,
			    ch == ':' ? "needs a value" : "takes no value");
			return;
		}
	} else {
		snprintf(full, sizeof(full), "-%c", optopt);
		cli_clean(full, strlen(full), word, sizeof(word));
		if (ch == ':') {
			fprintf(stderr, "cordon %s: option %s needs a value\n",
			    cmd, word);
			return;
		}
	}
	for (i = 0; opts[i].name != NULL && n < CLI_OPTS_MAX; i++)
		cands[n++] = opts[i].name;
	cands[n] = NULL;
	if (word[0] == '-' && word[1] == '-')
		near = text_nearest(word + 2, cands);
	else if (word[0] == '-')
		near = text_nearest(word + 1, cands);
	if (near != NULL)
		fprintf(stderr,
		    "cordon %s: unknown option %s; did you mean --%s?\n", cmd,
		    word, near);
	else
		fprintf(stderr,
		    "cordon %s: unknown option %s (cordon %s "
		    "--help lists them)\n",
		    cmd, word, cmd);
}

int
cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
    const struct option *opts)
{
	char so[32];
	int ch;

	opterr = 0;
	/* "+" (stop at the first operand) must lead, before ':'. */
	if (shortopts[0] == '+')
		snprintf(so, sizeof(so), "+:%s", shortopts + 1);
	else
		snprintf(so, sizeof(so), ":%s", shortopts);
	ch = getopt_long(argc, argv, so, opts, NULL);
	if (ch == '?' || ch == ':') {
		cli_bad_option(cmd, ch, argc, argv, opts);
		return '?';
	}
	return ch;
}

int
cli_extra_arg(const char *cmd, const char *arg)
{
	char word[CLI_WORD_MAX + 8];

	cli_clean(arg, strlen(arg), word, sizeof(word));
	fprintf(stderr,
	    "cordon %s: unexpected argument %s (cordon %s --help)\n", cmd, word,
	    cmd);
	return 2;
}

int
cli_root_rules(const char *user, int allow_root, struct passwd **pw)
{
	*pw = NULL;
	if (getuid() != 0) {
		if (user == NULL)
			return 0;
		fprintf(stderr, "cordon: --user needs root\n");
		return 2;
	}
	if (user == NULL && !allow_root) {
		fprintf(stderr,
		    "cordon: running as root: agents would "
		    "run as root. Pass --user NAME (the operator) or "
		    "--allow-root.\n");
		return 2;
	}
	if (user != NULL && (*pw = getpwnam(user)) == NULL) {
		fprintf(stderr, "cordon: --user: no such user\n");
		return 2;
	}
	if (*pw != NULL && (*pw)->pw_uid == 0) {
		fprintf(stderr, "cordon: --user names a uid 0 account; "
				"use --allow-root to run agents as root\n");
		return 2;
	}
	return 0;
}
