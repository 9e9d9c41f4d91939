/*
 * cordon: the command-line tool.  `cordon run` is cordond in the
 * foreground.  Exit codes: 0 clean stop, 1 runtime failure, 2 bad usage
 * or bad config.
 */
#include <sys/stat.h>

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "cordon_vcs.h"
#include "cordond.h"
#include "log.h"
#include "text.h"
#include "util.h"

static int
parse_port(const char *s, int *out)
{
	char *end;
	long v;

	/* Plain decimal digits only: no sign, space or base prefix. */
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < 0 || v > 65535)
		return -1;
	*out = (int)v;
	return 0;
}

static int
demo_home(char *out, size_t sz)
{
	const char *st = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	char dir[PATH_MAX];
	int n;

	if (st != NULL && st[0] == '/')
		n = snprintf(out, sz, "%s/cordon-demo", st);
	else if (home != NULL && home[0] == '/')
		n = snprintf(out, sz, "%s/.local/state/cordon-demo", home);
	else
		return -1;
	if (n < 0 || (size_t)n >= sz)
		return -1;
	/* A fresh account may have no state dir yet (XDG: create it 0700). */
	if (st != NULL && st[0] == '/')
		return mkdir(st, 0700) == -1 && errno != EEXIST ? -1 : 0;
	if ((n = snprintf(dir, sizeof(dir), "%s/.local", home)) < 0 ||
	    (size_t)n >= sizeof(dir) ||
	    (mkdir(dir, 0700) == -1 && errno != EEXIST) ||
	    (n = snprintf(dir, sizeof(dir), "%s/.local/state", home)) < 0 ||
	    (size_t)n >= sizeof(dir) ||
	    (mkdir(dir, 0700) == -1 && errno != EEXIST))
		return -1;
	return 0;
}

/*
 * --demo: the home (*home, or the default demo home written into buf)
 * made as a directory only; its files come once the home is ours.  0, or
 * the exit code.
 */
static int
run_demo_dir(const char **home, char *buf, size_t bufsz)
{
	if (*home == NULL) {
		if (demo_home(buf, bufsz) == -1) {
			fprintf(stderr, "cordon: no state dir for the demo "
					"(HOME?); use --home\n");
			return 2;
		}
		*home = buf;
	}
	if (mkdir(*home, 0700) == -1 && errno != EEXIST) {
		log_warn("demo home");
		return 1;
	}
	return 0;
}

/*
 * The home's paths and cordon.yaml, read only once no other user can
 * change them (SU-5).  0, or the exit code after saying why.
 */
static int
run_home(struct cordon_config *cf, const char *home, const struct passwd *pw)
{
	if (home_resolve(cf, home) == -1)
		return 2;
	if (cf->cf_rundir[0] == '\0') {
		fprintf(stderr, "cordon: XDG_RUNTIME_DIR is not set; use "
				"--home DIR\n");
		return 2;
	}
	if (home_safe_make(cf, pw ? pw->pw_uid : (uid_t)-1) == -1)
		return 1;
	return config_load(cf) == -1 ? 2 : 0; /* reads only */
}

static int
cmd_run(int argc, char **argv)
{
	static struct option opts[] = {
	    {"home", required_argument, NULL, 'h'},
	    {"port", required_argument, NULL, 'p'},
	    {"demo", no_argument, NULL, 'D'},
	    {"user", required_argument, NULL, 'u'},
	    {"allow-root", no_argument, NULL, 'R'},
	    {"debug", no_argument, NULL, 'd'},
	    {NULL, 0, NULL, 0},
	};
	static struct cordon_config cf;
	char demo[PATH_MAX];
	const char *home = NULL;
	struct passwd *pw = NULL;
	int ch, port = -1;

	memset(&cf, 0, sizeof(cf));
	optind = 1;
	while ((ch = cli_getopt("run", argc, argv, "", opts)) != -1) {
		switch (ch) {
		case 'h':
			home = optarg;
			break;
		case 'p':
			if (parse_port(optarg, &port) == -1) {
				fprintf(stderr, "cordon: --port must be "
						"0..65535\n");
				return 2;
			}
			break;
		case 'D':
			cf.cf_demo = 1;
			break;
		case 'u':
			cf.cf_user = optarg;
			break;
		case 'R':
			cf.cf_allow_root = 1;
			break;
		case 'd':
			cf.cf_debug = 1;
			break;
		default:
			return 2;
		}
	}
	if (optind != argc)
		return cli_extra_arg("run", argv[optind]);
	log_init("cordond", cf.cf_debug);

	if (cli_root_rules(cf.cf_user, cf.cf_allow_root, &pw) != 0)
		return 2;
	if (getuid() == 0 && cf.cf_user == NULL)
		log_warnx("running as root with --allow-root: agents "
			  "run as uid 0 without capabilities");

	if (cf.cf_demo && (ch = run_demo_dir(&home, demo, sizeof(demo))) != 0)
		return ch;
	cf.cf_port = port;
	if ((ch = run_home(&cf, home, pw)) != 0)
		return ch;
	/* SU-1: nothing of the home is written before this. */
	if (home_lock(&cf) != 0)
		return 1;
	if (cf.cf_demo && home_make_demo(cf.cf_home) == -1) /* resolved */
		return 1;
	if (cf.cf_port == -1)
		cf.cf_port = 0;
	if (home_prepare(&cf, pw ? pw->pw_uid : (uid_t)-1,
		pw ? pw->pw_gid : (gid_t)-1) == -1)
		return 1;
	return cordond_main(&cf);
}

/*
 * A command that is a program of its own, run with the same arguments
 * (argv[0] the command's name).  Returns only if it cannot be executed.
 */
static int
exec_program(const char *name, char **argv)
{
	char path[PATH_MAX + 32];

	if (cordon_program(name, path, sizeof(path)) == 0)
		execv(path, argv);
	fprintf(stderr, "cordon: cannot run %s\n", name);
	return 2;
}

/* `cordon audit ...`: cordon-audit (libcrypto stays out of cordond). */
static int
exec_audit_cmd(int argc, char **argv)
{
	return exec_program("cordon-audit", argv);
}

/* `cordon agent login ...`: cordon-login (SBX-9; the sandbox code). */
static int
exec_agent_cmd(int argc, char **argv)
{
	return exec_program("cordon-login", argv);
}

/* `cordon mcp ...`: cordon-mcp (MC-1; an API client, no daemon code). */
static int
exec_mcp_cmd(int argc, char **argv)
{
	return exec_program("cordon-mcp", argv);
}

static int cmd_version(int, char **);
static int cmd_help(int, char **);
static int unknown_command(const char *);

/*
 * Every command: its synopsis and its help.  `cordon --help` lists them
 * in this order; the bash completion offers the same names (a test
 * compares the two).
 */
static const struct command {
	const char *c_name;
	int (*c_fn)(int, char **);
	const char *c_summary; /* one line for `cordon --help` */
	const char *c_usage;   /* synopsis: "cordon NAME ..." lines */
	const char *c_help;    /* its options */
} commands[] = {
    {"run", cmd_run, "start cordon in the foreground",
	"cordon run [--home DIR] [--port N] [--demo] [--user NAME]\n"
	"           [--allow-root] [--debug]\n",
	"Start cordond in the foreground and print the dashboard's one-time\n"
	"login URL.\n\n"
	"  --home DIR     keep config, agents, audit, run files and the\n"
	"                 vault under DIR (default: the XDG directories)\n"
	"  --port N       listen port on 127.0.0.1 (0 picks a free one)\n"
	"  --demo         create and use a demo home with a demo vault and\n"
	"                 agent (default DIR: $XDG_STATE_HOME/cordon-demo)\n"
	"  --user NAME    when started as root: the operator whose uid the\n"
	"                 spawner, vaultd and auditd take\n"
	"  --allow-root   when started as root without --user: accept that\n"
	"                 agents run as root (still without any capability)\n"
	"  --debug        log debug lines\n"},
    {"check", cmd_check, "validate agents and missions without running",
	"cordon check [--home DIR] [--json]\n",
	"Validate every agents/*.yaml and missions/*.yaml as cordon would at\n"
	"start, and report every problem at once as FILE:LINE:COL: KEY:\n"
	"MESSAGE, including what would refuse a run later (a binary not on\n"
	"PATH, a secret that does not resolve, a missing permission).\n"
	"Exit 0 if none, 1 if any.\n\n"
	"  --home DIR     the home to check (default: the XDG directories)\n"
	"  --json         one JSON document: {ok, agents, missions,\n"
	"                 problems: [{file, line, column, key, code,\n"
	"                 message}]}\n"},
    {"status", cmd_status, "each daemon's confinement and each agent's sandbox",
	"cordon status [--home DIR | --port N --token-file FILE] [--json]\n",
	"Ask the running cordon for each daemon's confinement, the sandbox\n"
	"layers of this host and of each agent.\n\n"
	"  --home DIR         the home whose running cordon to ask\n"
	"  --port N           cordon under systemd: the broker's port ...\n"
	"  --token-file FILE  ... and the token file it was given\n"
	"  --json             one JSON document: {ok, health, agents}\n"},
    {"login", cmd_login, "a fresh one-time dashboard login URL",
	"cordon login [--home DIR | --port N --token-file FILE]\n",
	"Print a fresh one-time dashboard login URL from the running "
	"cordon.\n\n"
	"  --home DIR         the home whose running cordon to ask\n"
	"  --port N           cordon under systemd: the broker's port ...\n"
	"  --token-file FILE  ... and the token file it was given\n"},
    {"job", cmd_job, "list, show or cancel detached jobs",
	"cordon job list [--home DIR | --port N --token-file FILE] [--json]\n"
	"cordon job show ID [--home DIR | ...] [--json]\n"
	"cordon job cancel ID [--home DIR | ...]\n",
	"list    the running cordon's detached jobs, newest first: id,\n"
	"        agent, state, start (UTC), events kept\n"
	"show    one job's meta, then its run's text as it streamed (tool\n"
	"        calls, notices and errors on lines of their own); --json:\n"
	"        {job, events}\n"
	"cancel  ask cordon to cancel a running job\n\n"
	"  ID                 ^[A-Za-z0-9_-]{1,80}$, as list shows it\n"
	"  --home DIR         the home whose running cordon to ask\n"
	"  --port N           cordon under systemd: the broker's port ...\n"
	"  --token-file FILE  ... and the token file it was given\n"
	"  --json             the API's answer as JSON\n"},
    {"worktree", cmd_worktree, "list or remove worktree runs' checkouts",
	"cordon worktree list [--home DIR | --port N --token-file FILE] "
	"[--json]\n"
	"cordon worktree remove ID [--home DIR | ...]\n",
	"list    the checkouts worktree runs left: id, agent, made (UTC),\n"
	"        files changed on its branch, the repository\n"
	"remove  delete one checkout and its branch cordon/ID (fetch the\n"
	"        branch into your repository first to keep it)\n\n"
	"  ID                 ^[A-Za-z0-9_-]{1,80}$, as list shows it\n"
	"  --home DIR         the home whose running cordon to ask\n"
	"  --port N           cordon under systemd: the broker's port ...\n"
	"  --token-file FILE  ... and the token file it was given\n"
	"  --json             the API's answer as JSON\n"},
    {"token", cmd_token, "write a new API token file", "cordon token FILE\n",
	"Write a new API token to FILE (0600, never over an existing file),\n"
	"for the broker's systemd credential.\n"},
    {"audit", exec_audit_cmd, "verify or read the audit trail",
	"cordon audit verify [--home DIR] [--heads FILE]\n"
	"cordon audit tail [-f] [-n N] [--kind K] [--agent A] [--home DIR]\n",
	"verify  walk every day file: the hash chain, the schema and the\n"
	"        anchored heads; name the first broken link (exit 1).  On a\n"
	"        terminal, progress is shown on stderr.\n"
	"tail    print the last N (20) records, oldest first, for jq;\n"
	"        -f follows new ones; --kind and --agent filter.\n\n"
	"  --home DIR     the home whose audit dir to read\n"
	"  --heads FILE   anchors to check against (lines with\n"
	"                 \"cordon-audit-head\", e.g. from the journal)\n"},
    {"agent", exec_agent_cmd, "log an agent's CLI in, in its sandbox",
	"cordon agent login [--home DIR] [--user NAME] [--allow-root] AGENT\n"
	"                   [-- ARGS...]\n",
	"login   run AGENT's CLI's own login (Claude Code: claude auth login;\n"
	"        Codex: codex login; Gemini CLI: gemini, then its sign-in;\n"
	"        or the manifest's login: command) in the agent's private\n"
	"        home, sandboxed as a run but with the network on, on this\n"
	"        terminal; its credentials stay in that home for the\n"
	"        agent's runs.  ARGS replace the login command's arguments\n"
	"        (never its program); no secret may be among them.  Not\n"
	"        audited: auditd alone writes the trail.\n\n"
	"  --home DIR     the home whose agent to log in\n"
	"  --user NAME    as root: the operator whose uid the login takes\n"
	"                 (as cordon run --user)\n"
	"  --allow-root   as root without --user: log in as uid 0, without\n"
	"                 any capability (as cordon run --allow-root)\n"},
    {"mcp", exec_mcp_cmd, "an MCP server on stdio for other agents' CLIs",
	"cordon mcp [--home DIR | --port N --token-file FILE]\n",
	"Serve MCP (JSON-RPC 2.0, one message per line) on stdin and stdout\n"
	"for an agent CLI that registers cordon as an MCP server: its tools\n"
	"list the agents and run one, through the running cordon's API with\n"
	"the operator's token, audited as runs via mcp.\n\n"
	"  --home DIR         the home whose running cordon to use\n"
	"  --port N           cordon under systemd: the broker's port ...\n"
	"  --token-file FILE  ... and the token file it was given\n"},
    {"gate", cmd_gate, "an agent's pre-tool hook inside a run",
	"cordon gate [-- CMD ARGS...]\n",
	"An agent CLI's pre-tool hook inside a cordon run: the command on\n"
	"stdin (the pre-tool hook JSON of Claude Code, Codex or Gemini CLI)\n"
	"or after -- is allowed (exit 0)\n"
	"or refused (exit 2; 1 after --).\n"},
    {"version", cmd_version, "the version, commit and build type",
	"cordon version\n", "Also: cordon --version.\n"},
    {"help", cmd_help, "this help, or a command's", "cordon help [COMMAND]\n",
	"Also: cordon -h, cordon --help, cordon COMMAND --help.\n"},
};

static const struct command *
command_find(const char *name)
{
	size_t i;

	for (i = 0; i < nitems(commands); i++)
		if (strcmp(commands[i].c_name, name) == 0)
			return &commands[i];
	return NULL;
}

static void
usage_all(FILE *f)
{
	size_t i;

	fprintf(f, "usage: cordon COMMAND [OPTIONS]\n\ncommands:\n");
	for (i = 0; i < nitems(commands); i++)
		fprintf(f, "  %-8s %s\n", commands[i].c_name,
		    commands[i].c_summary);
	fprintf(f, "\n'cordon COMMAND --help' shows a command's options; "
		   "'cordon --version' the build.\n"
		   "Exit codes: 0 ok, 1 failure, 2 bad usage or config.\n");
}

static void
usage_one(FILE *f, const struct command *c)
{
	const char *p = c->c_usage, *nl;
	int first = 1;

	/* Each synopsis line after "usage: " or aligned under it. */
	for (; *p != '\0'; p = nl + 1, first = 0) {
		nl = strchr(p, '\n');
		fprintf(f, "%s%.*s\n", first ? "usage: " : "       ",
		    (int)(nl - p), p);
	}
	fprintf(f, "\n%s", c->c_help);
}

static int
cmd_version(int argc, char **argv)
{
	if (argc > 1)
		return cli_extra_arg("version", argv[1]);
	printf("cordon %s (commit %s, %s build)\n", CORDON_VERSION,
	    CORDON_COMMIT, CORDON_BUILDTYPE);
	return 0;
}

static int
cmd_help(int argc, char **argv)
{
	const struct command *c;

	if (argc < 2) {
		usage_all(stdout);
		return 0;
	}
	if (argc > 2)
		return cli_extra_arg("help", argv[2]);
	if ((c = command_find(argv[1])) == NULL)
		return unknown_command(argv[1]);
	usage_one(stdout, c);
	return 0;
}

static int
unknown_command(const char *word)
{
	static const char *const top_opts[] = {"--help", "--version", NULL};
	const char *names[nitems(commands) + 1], *near;
	char clean[CLI_WORD_MAX + 8];
	size_t i;

	for (i = 0; i < nitems(commands); i++)
		names[i] = commands[i].c_name;
	names[i] = NULL;
	cli_clean(word, strlen(word), clean, sizeof(clean));
	if (word[0] == '-')
		fprintf(stderr, "cordon: unknown option %s", clean);
	else
		fprintf(stderr, "cordon: unknown command %s", clean);
	if ((near = text_nearest(word, word[0] == '-' ? top_opts : names)) !=
	    NULL)
		fprintf(stderr, "; did you mean %s?\n", near);
	else
		fprintf(stderr, " ('cordon --help' lists the commands)\n");
	return 2;
}

int
main(int argc, char **argv)
{
	const struct command *c;

	log_init("cordon", 0);
	if (argc < 2) {
		usage_all(stderr);
		return 2;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)
		return cmd_help(argc - 1, argv + 1);
	if (strcmp(argv[1], "--version") == 0)
		return cmd_version(argc - 1, argv + 1);
	if ((c = command_find(argv[1])) == NULL)
		return unknown_command(argv[1]);
	/*
	 * SUB --help and SUB -h, before the command parses anything.  The
	 * gate's exit status is a verdict, 0 an allow (SBX-6): only its
	 * flag alone is help, never a word of a command to judge, and that
	 * help exits 2, a refusal, so a hook written as `cordon gate --help`
	 * never allows (SBX-8).  `cordon help gate` is the gate's help with
	 * exit 0.
	 */
	if (c->c_fn == cmd_gate) {
		if (argc == 3 && (strcmp(argv[2], "-h") == 0 ||
				     strcmp(argv[2], "--help") == 0)) {
			usage_one(stdout, c);
			return 2;
		}
	} else if (cli_wants_help(argc - 1, argv + 1)) {
		usage_one(stdout, c);
		return 0;
	}
	return c->c_fn(argc - 1, argv + 1);
}
