/*
 * The command line every `cordon` command shares (cli.c): option errors
 * that name the offending word (cleaned) and the nearest known option,
 * and the help switch.
 */
#ifndef CORDON_SUPERVISOR_CLI_H
#define CORDON_SUPERVISOR_CLI_H

#include <getopt.h>
#include <stddef.h>

#define CLI_WORD_MAX 32 /* bytes of an offending word shown */

/*
 * in[0 .. inlen) as printable ASCII (anything else '?'), at most
 * CLI_WORD_MAX bytes then "...", or "(not shown)" if it looks like a
 * secret.
 */
void cli_clean(const char *in, size_t inlen, char *out, size_t outsz);
/* 1 if -h or --help comes before any "--" in argv[1 ..). */
int cli_wants_help(int argc, char **argv);
/*
 * getopt_long with getopt's own messages off: an unknown option or a
 * missing value is said on stderr as "cordon CMD: unknown option
 * --hom; did you mean --home?" and '?' returned (the caller exits 2).
 * shortopts starting with '+' stop at the first operand.
 */
int cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
    const struct option *opts);
/*
 * The root rules of every command that runs agents (operator-guide.md,
 * Running as root): as root, --user NAME (no uid 0 account) or
 * --allow-root; --user only as root.  0 and *pw (NULL without --user),
 * or 2 once it has said why.
 */
struct passwd;
int cli_root_rules(const char *user, int allow_root, struct passwd **pw);

/* "cordon CMD: unexpected argument W"; returns 2. */
int cli_extra_arg(const char *cmd, const char *arg);

#endif
