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

#include "config.h"
#include "cordond.h"
#include "log.h"

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: cordon run [--home DIR] [--port N] [--demo] [--user NAME]\n"
	    "                  [--allow-root] [--debug]\n"
	    "       cordon check [--home DIR]\n"
	    "       cordon status [--home DIR | --port N --token-file F] "
	    "[--json]\n"
	    "       cordon login [--home DIR | --port N --token-file F]\n"
	    "       cordon token FILE\n"
	    "       cordon audit verify|tail [--home DIR] [...]\n"
	    "       cordon gate [-- CMD ARGS...]\n"
	    "       cordon version\n"
	    "\n"
	    "  run      start cordon in the foreground and print the\n"
	    "           dashboard's one-time login URL\n"
	    "  --home   keep config, agents, audit, run files and the vault\n"
	    "           under DIR (default: the XDG directories)\n"
	    "  --port   listen port on 127.0.0.1 (0 picks a free one)\n"
	    "  --demo   create and use a demo home with a demo vault and\n"
	    "           agent (default DIR: $XDG_STATE_HOME/cordon-demo)\n"
	    "  --user   when started as root: the operator whose uid the\n"
	    "           spawner, vaultd and auditd take\n"
	    "  --allow-root  when started as root without --user: accept\n"
	    "           that agents would run as root (still without any\n"
	    "           capability)\n"
	    "  status   each daemon's confinement, the sandbox layers of\n"
	    "           this host and of each agent, from the running cordon\n"
	    "  login    a fresh one-time dashboard login URL (--port and\n"
	    "           --token-file: cordon under systemd)\n"
	    "  token    write a new API token to FILE (0600), for the\n"
	    "           broker's systemd credential\n"
	    "  gate     an agent's pre-tool hook inside a run: the command\n"
	    "           on stdin (Claude Code PreToolUse JSON) or after --\n"
	    "           is allowed (exit 0) or refused (exit 2; 1 after --)\n");
}

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
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
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
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	log_init("cordond", cf.cf_debug);

	if (getuid() == 0) {
		if (cf.cf_user == NULL && !cf.cf_allow_root) {
			fprintf(stderr,
			    "cordon: running as root: agents would "
			    "run as root. Pass --user NAME (the operator) or "
			    "--allow-root.\n");
			return 2;
		}
		if (cf.cf_user != NULL && (pw = getpwnam(cf.cf_user)) == NULL) {
			fprintf(stderr, "cordon: --user: no such user\n");
			return 2;
		}
		if (pw != NULL && pw->pw_uid == 0) {
			fprintf(stderr,
			    "cordon: --user names a uid 0 account; "
			    "use --allow-root to run agents as root\n");
			return 2;
		}
		if (cf.cf_user == NULL)
			log_warnx("running as root with --allow-root: agents "
				  "run as uid 0 without capabilities");
	} else if (cf.cf_user != NULL) {
		fprintf(stderr, "cordon: --user needs root\n");
		return 2;
	}

	if (cf.cf_demo) {
		if (home == NULL) {
			if (demo_home(demo, sizeof(demo)) == -1) {
				fprintf(stderr, "cordon: no state dir for the "
						"demo (HOME?); use --home\n");
				return 2;
			}
			home = demo;
		}
		if (home_make_demo(home) == -1)
			return 1;
	}
	if (home_resolve(&cf, home) == -1)
		return 2;
	if (cf.cf_rundir[0] == '\0') {
		fprintf(stderr, "cordon: XDG_RUNTIME_DIR is not set; use "
				"--home DIR\n");
		return 2;
	}
	cf.cf_port = port;
	if (config_load(&cf) == -1)
		return 2;
	if (cf.cf_port == -1)
		cf.cf_port = 0;
	if (home_prepare(&cf, pw ? pw->pw_uid : (uid_t)-1,
		pw ? pw->pw_gid : (gid_t)-1) == -1)
		return 1;
	return cordond_main(&cf);
}

/*
 * `cordon audit ...`: the cordon-audit program with the same arguments
 * (argv[0] "audit").  Returns only if it cannot be executed.
 */
static int
exec_audit(char **argv)
{
	char path[PATH_MAX + 32];

	if (cordon_program("cordon-audit", path, sizeof(path)) == 0)
		execv(path, argv);
	fprintf(stderr, "cordon: cannot run cordon-audit\n");
	return 2;
}

int
main(int argc, char **argv)
{
	log_init("cordon", 0);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "run") == 0)
		return cmd_run(argc - 1, argv + 1);
	if (strcmp(argv[1], "check") == 0)
		return cmd_check(argc - 1, argv + 1);
	if (strcmp(argv[1], "audit") == 0)
		return exec_audit(argv + 1);
	if (strcmp(argv[1], "status") == 0)
		return cmd_status(argc - 1, argv + 1);
	if (strcmp(argv[1], "login") == 0)
		return cmd_login(argc - 1, argv + 1);
	if (strcmp(argv[1], "token") == 0)
		return cmd_token(argc - 1, argv + 1);
	if (strcmp(argv[1], "gate") == 0)
		return cmd_gate(argc - 1, argv + 1);
	if (strcmp(argv[1], "version") == 0 ||
	    strcmp(argv[1], "--version") == 0) {
		printf("cordon %s\n", CORDON_VERSION);
		return 0;
	}
	if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0) {
		usage(stdout);
		return 0;
	}
	usage(stderr);
	return 2;
}
