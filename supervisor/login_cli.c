/*
 * cordon-login: `cordon agent login NAME [-- ARGS...]` (SBX-9), which
 * `cordon agent` executes.  Runs an agent CLI's own login (policy/argv.c,
 * argv_login) in that agent's private home, in the per-run sandbox of
 * sandbox/sandbox_*.c through the one spawn helper, with the operator's
 * terminal as fds 0-2 in a session of its own.  Confined first like the
 * spawner (its denylist, no capability, --user's uid as root).  Resolves
 * no secret; the network is on for the login alone.  Writes nothing
 * itself but the agent's home dir, made as the spawner makes it, and,
 * as root with --allow-root, a pids cgroup for the login, removed after.
 */
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include <json-c/json.h>

#include "sandbox.h"
#include "argv.h"
#include "cgroup.h"
#include "cli.h"
#include "confine.h"
#include "cordon_limits.h"
#include "cordond.h"
#include "env.h"
#include "log.h"
#include "manifest.h"
#include "roots.h"
#include "util.h"
#include "yamljson.h"

extern char **environ;

#define LOGIN_MAX_ERRS 32
#define LOGIN_GRACE_MS 3000 /* SIGTERM, then SIGKILL (API-4's grace) */

struct login {
	const char *lg_name;
	char *const *lg_args; /* after "--", or NULL */
	size_t lg_nargs;
	const char *lg_user;
	int lg_allow_root;
	struct cordon_config lg_cf;
	struct protect_ctx lg_pc;
	char lg_opbuf[PATH_MAX], lg_cfgdir[PATH_MAX], lg_pbuf[4][PATH_MAX];
	struct manifest lg_mf;
	int lg_have_mf;
	struct sandbox_plan lg_plan;
	int lg_have_plan;
	char lg_home[PATH_MAX], lg_bin[PATH_MAX];
	char **lg_argv, **lg_envp;
	/* SP-7, as root with --allow-root: the login's own pids group. */
	int lg_cgparent, lg_cgprocs;
	char lg_cgname[48];
	int lg_tty; /* fd 0 is a terminal, its modes in lg_tio */
	struct termios lg_tio;
};

static void
usage_err(const char *what)
{
	fprintf(stderr, "cordon agent: %s (cordon agent --help)\n", what);
}

/* login [--home DIR] [--user NAME] [--allow-root] NAME [-- ARGS...] */
static int
login_args(struct login *lg, int argc, char **argv, const char **home)
{
	static const struct option opts[] = {
	    {"home", required_argument, NULL, 'H'},
	    {"user", required_argument, NULL, 'u'},
	    {"allow-root", no_argument, NULL, 'R'}, {NULL, 0, NULL, 0}};
	int ch;

	optind = 1;
	while ((ch = cli_getopt("agent login", argc, argv, "+", opts)) != -1)
		if (ch == 'H')
			*home = optarg;
		else if (ch == 'u')
			lg->lg_user = optarg;
		else if (ch == 'R')
			lg->lg_allow_root = 1;
		else
			return 2;
	if (optind >= argc) {
		usage_err("login: which agent?");
		return 2;
	}
	lg->lg_name = argv[optind++];
	if (optind < argc && strcmp(argv[optind], "--") != 0)
		return cli_extra_arg("agent login", argv[optind]);
	if (optind < argc) {
		lg->lg_args = argv + optind + 1;
		lg->lg_nargs = (size_t)(argc - optind - 1);
	}
	return 0;
}

static int
is_yaml(const char *n)
{
	size_t l = strlen(n);

	return n[0] != '.' && l > 5 && strcmp(n + l - 5, ".yaml") == 0;
}

/*
 * The agent as the spawner would load it: the first valid manifest of
 * agents/, in file name order, whose name is NAME (the spawner disables
 * a later duplicate).
 */
static int
login_manifest(struct login *lg)
{
	struct policy_err errs[LOGIN_MAX_ERRS];
	struct json_object *root;
	struct yaml_err ye;
	char **files, path[PATH_MAX];
	size_t i, n = 0, nerrs;

	if ((files = dir_names(lg->lg_cf.cf_agents, is_yaml, &n)) == NULL)
		n = 0;
	for (i = 0; i < n && !lg->lg_have_mf; i++) {
		if (snprintf(path, sizeof(path), "%s/%s", lg->lg_cf.cf_agents,
			files[i]) >= (int)sizeof(path) ||
		    (root = yaml_load_file(path, &ye)) == NULL)
			continue;
		nerrs = 0;
		if (manifest_parse(
			root, &lg->lg_mf, errs, LOGIN_MAX_ERRS, &nerrs) == 0) {
			if (strcmp(lg->lg_mf.m_name, lg->lg_name) == 0)
				lg->lg_have_mf = 1;
			else
				manifest_free(&lg->lg_mf);
		}
		json_object_put(root);
	}
	if (files != NULL)
		dir_names_free(files, n);
	if (!lg->lg_have_mf) {
		fprintf(stderr,
		    "cordon agent login: no valid agent by that name in %s "
		    "(cordon check says why a manifest is refused)\n",
		    lg->lg_cf.cf_agents);
		return -1;
	}
	return 0;
}

/*
 * SP-7: as root with --allow-root the kernel ignores RLIMIT_NPROC, so the
 * login gets a pids group of its own, made while we are still root and
 * named as cordond names its own (cordon.<pidns>.<pid>), with pids.max
 * = limits.nproc; without one it is refused.  Without capabilities we
 * cannot remove it from the hierarchy's root: the next cordon or login
 * to start sweeps it, as it sweeps a killed cordond's, once empty (the
 * login's pid namespace leaves nothing in it).  With --user,
 * RLIMIT_NPROC in its user namespace bounds it.
 */
static int
login_cgroup(struct login *lg)
{
	char dir[PATH_MAX], prefix[40];
	struct stat nst;
	int kind, dfd;

	lg->lg_cgparent = lg->lg_cgprocs = -1;
	if (getuid() != 0 || lg->lg_user != NULL)
		return 0;
	if (stat("/proc/self/ns/pid", &nst) == -1)
		nst.st_ino = 0;
	snprintf(
	    prefix, sizeof(prefix), "cordon.%lu.", (unsigned long)nst.st_ino);
	snprintf(lg->lg_cgname, sizeof(lg->lg_cgname), "%s%d", prefix,
	    (int)getpid());
	if (cgroup_find_pids(dir, sizeof(dir), &kind) == -1 ||
	    (lg->lg_cgparent = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
		-1 ||
	    cgroup_sweep(lg->lg_cgparent, prefix, 1) < 0 ||
	    (kind == CGROUP_V2 && cgroup_enable_pids(lg->lg_cgparent) == -1) ||
	    cgroup_make(lg->lg_cgparent, lg->lg_cgname,
		(long)lg->lg_mf.m_limits.l_nproc, &dfd) == -1) {
		fprintf(stderr, "cordon agent login: running as root and no "
				"pids cgroup to bound the login (SP-7); use "
				"--user NAME\n");
		return -1;
	}
	(void)cgroup_set_memory(dfd, lg->lg_mf.m_limits.l_mem_bytes);
	lg->lg_cgprocs =
	    openat(dfd, "cgroup.procs", O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	close(dfd);
	if (lg->lg_cgprocs == -1) {
		fprintf(stderr, "cordon agent login: pids cgroup: %s\n",
		    strerror(errno));
		return -1;
	}
	return 0;
}

static void
login_cgroup_end(struct login *lg)
{
	if (lg->lg_cgprocs != -1)
		close(lg->lg_cgprocs);
	/* EACCES without capabilities: left for the next sweep. */
	if (lg->lg_cgparent != -1)
		(void)cgroup_remove(
		    lg->lg_cgparent, lg->lg_cgname, CGROUP_RM_NOWAIT);
	if (lg->lg_cgparent != -1)
		close(lg->lg_cgparent);
	lg->lg_cgprocs = lg->lg_cgparent = -1;
}

/* As the spawner confines itself: its denylist, no capability. */
static void
login_confine(struct login *lg)
{
	struct confine_spec spec;

	memset(&spec, 0, sizeof(spec));
	spec.cs_name = "cordon agent login";
	spec.cs_user = lg->lg_user;
	spec.cs_seccomp = CONFINE_SECCOMP_DENY;
	spec.cs_nofile = LIM_NOFILE_MAX; /* the ceiling a login may ask */
	spec.cs_no_landlock = 1; /* the login gets its own, as runs do */
	confine_self(&spec);
}

/*
 * SBX-9: the agent's sandbox as for a run (its roots too: a manifest may
 * point its CLI's config dir at a write root of its own), its home
 * added, but with the network on: the CLI talks to its provider's
 * sign-in servers.
 */
static int
login_plan(struct login *lg)
{
	struct manifest *mf = &lg->lg_mf;
	char why[AGENT_REASON_MAX];

	mf->m_sandbox.sb_network = MF_NET_ALLOW;
	if (sandbox_plan_build(
		mf, &lg->lg_pc, &lg->lg_plan, why, sizeof(why)) == -1) {
		fprintf(
		    stderr, "cordon agent login: %s: %s\n", lg->lg_name, why);
		return -1;
	}
	lg->lg_have_plan = 1;
	if (agent_home_make(lg->lg_cf.cf_state, lg->lg_name, lg->lg_home,
		sizeof(lg->lg_home)) == -1 ||
	    roots_add_home(&lg->lg_plan.pl_roots, lg->lg_home) == -1) {
		fprintf(stderr,
		    "cordon agent login: %s: no private home under %s: %s\n",
		    lg->lg_name, lg->lg_cf.cf_state, strerror(errno));
		return -1;
	}
	/* SBX-8, SBX-9: the spawner would not load this agent either. */
	if (env_home_foreign(&lg->lg_mf, lg->lg_home, why, sizeof(why)) == -1) {
		fprintf(
		    stderr, "cordon agent login: %s: %s\n", lg->lg_name, why);
		return -1;
	}
	return 0;
}

/* SP-4, SBX-9: the built env, no secret, HOME and the CLIs' dirs. */
static int
login_command(struct login *lg)
{
	const char *err = "out-of-memory";
	char why[AGENT_REASON_MAX];

	if (env_build((const char *const *)environ, &lg->lg_mf, lg->lg_home,
		NULL, NULL, 0, &lg->lg_envp, &err) == -1 ||
	    env_home(&lg->lg_envp, &lg->lg_mf, lg->lg_home) == -1) {
		fprintf(stderr, "cordon agent login: %s: environment: %s\n",
		    lg->lg_name, err);
		return -1;
	}
	if (argv_login(&lg->lg_mf, lg->lg_args, lg->lg_nargs, &lg->lg_argv,
		&err) == -1) {
		if (strcmp(err, "no-login") == 0)
			fprintf(stderr,
			    "cordon agent login: %s: no login command: its "
			    "program is none of claude, codex, gemini; add "
			    "login: [PROGRAM, ARGS...] to its manifest\n",
			    lg->lg_name);
		else if (strcmp(err, "secret-argument") == 0)
			fprintf(stderr,
			    "cordon agent login: an argument looks like a "
			    "secret; refused (SEC-3: no secret on a command "
			    "line)\n");
		else
			fprintf(stderr,
			    "cordon agent login: an argument is empty or too "
			    "long\n");
		return 2;
	}
	if (agent_bin_check(lg->lg_argv[0], lg->lg_envp, &lg->lg_plan.pl_roots,
		&lg->lg_pc, lg->lg_bin, sizeof(lg->lg_bin), why,
		sizeof(why)) == -1) {
		fprintf(
		    stderr, "cordon agent login: %s: %s\n", lg->lg_name, why);
		return -1;
	}
	return 0;
}

/*
 * Which step failed (SP-12), or the seccomp listener the child sent on
 * sock before execve into *notify; without it the login is ended.
 */
static void
login_started(pid_t pid, const struct spawn_status *st, int sock, int *notify)
{
	const char *step;
	int gate = -1;

	if (pid == -1) {
		step = sandbox_step_name(st->ss_step);
		fprintf(stderr, "cordon agent login: %s%s: %s\n",
		    st->ss_step >= SPAWN_STEP_HOOK_BASE ? "sandbox: "
							: "spawn: ",
		    step != NULL ? step : "unknown step",
		    strerror(st->ss_errno));
		return;
	}
	if (sock != -1 && (sandbox_recv_fds(sock, notify, &gate, NULL) == -1 ||
			      *notify == -1 || gate != -1)) {
		fprintf(stderr, "cordon agent login: sandbox: seccomp listener "
				"lost; login ended\n");
		(void)kill(-pid, SIGKILL);
	}
	if (gate != -1)
		close(gate);
}

/* Start it: the sandbox, the fds, the one spawn helper.  Its pid or -1. */
static pid_t
login_spawn(struct login *lg, struct sandbox_run *sx, int *notify, int *xs)
{
	static const struct spawn_fd stdio[] = {{0, 0}, {1, 1}, {2, 2}};
	struct spawn_rlimit rl[SBX_RLIMITS_MAX];
	struct spawn_fd fds[8];
	struct spawn_status st;
	struct spawn_req req;
	int ns[2] = {-1, -1};
	size_t nfd = 3;
	pid_t pid;

	memcpy(fds, stdio, sizeof(stdio));
	memset(&req, 0, sizeof(req));
	if (sandbox_run_prepare(sx, &lg->lg_plan, lg->lg_bin, lg->lg_home,
		lg->lg_envp, lg->lg_mf.m_limits.l_tmp_bytes) == -1) {
		fprintf(stderr,
		    "cordon agent login: sandbox: preparing the run: %s\n",
		    strerror(errno));
		return -1;
	}
	if (lg->lg_cgprocs != -1) {
		fds[nfd].sf_src = lg->lg_cgprocs;
		fds[nfd++].sf_dst = SBX_CGROUP_FD;
		sx->sx_cgroup = 1;
	}
	/* The child hands its seccomp listener back on this pair. */
	if (lg->lg_plan.pl_layers & SBX_L_SECCOMP) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ns) ==
		    -1)
			goto fail;
		fds[nfd].sf_src = ns[1];
		fds[nfd++].sf_dst = SBX_NOTIFY_FD;
	}
	/* SP-17: pid 1 of its namespace is cordon-init, as in a run. */
	if (sx->sx_init != NULL) {
		/* its go already in it: a login has no record to wait for */
		if (spawn_init_channel(xs, 1) == -1)
			goto fail;
		fds[nfd].sf_src = xs[1];
		fds[nfd++].sf_dst = SBX_INIT_FD;
		req.sr_init = sx->sx_init;
		req.sr_init_fd = SBX_INIT_FD;
	}
	req.sr_path = lg->lg_bin;
	req.sr_argv = lg->lg_argv;
	req.sr_envp = sx->sx_envp;
	req.sr_fds = fds;
	req.sr_nfds = nfd;
	/* No controlling terminal: no TIOCSTI into the operator's shell. */
	req.sr_setsid = 1;
	req.sr_pdeathsig = SIGKILL;
	req.sr_cwd = lg->lg_home;
	req.sr_rlimits = rl;
	req.sr_nrlimits =
	    sandbox_rlimits(&lg->lg_mf.m_limits, lg->lg_plan.pl_layers, rl);
	req.sr_set_umask = 1;
	req.sr_umask = 077;
	req.sr_clone_flags = sx->sx_clone;
	req.sr_hook = sandbox_child;
	req.sr_hook_arg = sx;
	req.sr_status = &st;
	pid = spawn_exec(&req);
	if (ns[1] != -1)
		close(ns[1]);
	if (xs[1] != -1) {
		close(xs[1]);
		xs[1] = -1;
	}
	login_started(pid, &st, ns[0], notify);
	if (ns[0] != -1)
		close(ns[0]);
	return pid;
fail:
	fprintf(stderr, "cordon agent login: %s\n", strerror(errno));
	if (ns[0] != -1) {
		close(ns[0]);
		close(ns[1]);
	}
	return -1;
}

/*
 * Wait for it: ^C, SIGTERM and a hangup go to its cordon-init (which
 * passes them on), SIGKILL for the group after the grace; a call its
 * seccomp layer hands over is refused and ends it, named.  Its wait
 * status.
 */
static int
login_wait(struct login *lg, pid_t pid, int notify, int sigfd)
{
	struct signalfd_siginfo si;
	struct pollfd pfd[2];
	char name[48];
	int st = 0, timeout = -1;

	for (;;) {
		pfd[0].fd = sigfd;
		pfd[0].events = POLLIN;
		pfd[1].fd = notify;
		pfd[1].events = POLLIN;
		pfd[0].revents = pfd[1].revents = 0;
		if (poll(pfd, notify != -1 ? 2 : 1, timeout) == 0) {
			(void)kill(-pid, SIGKILL);
			timeout = -1;
		}
		if (notify != -1 && pfd[1].revents != 0) {
			switch (
			    sandbox_notify_answer(notify, name, sizeof(name))) {
			case SBX_NOTIFY_GONE:
				close(notify);
				notify = -1;
				break;
			case SBX_NOTIFY_REFUSED:
				fprintf(stderr,
				    "cordon agent login: %s: %s; login ended\n",
				    lg->lg_name, name);
				/* FALLTHROUGH */
			case SBX_NOTIFY_FAILED:
				(void)kill(-pid, SIGKILL);
				break;
			default:
				break;
			}
		}
		if (!(pfd[0].revents & POLLIN) ||
		    read(sigfd, &si, sizeof(si)) != (ssize_t)sizeof(si))
			continue;
		if (si.ssi_signo != SIGCHLD) {
			if (si.ssi_signo != SIGTSTP && timeout == -1) {
				(void)kill(pid, SIGTERM);
				timeout = LOGIN_GRACE_MS;
			}
			continue;
		}
		if (waitpid(pid, &st, WNOHANG) == pid)
			break;
	}
	if (notify != -1)
		close(notify);
	return st;
}

/* Its exit: the CLI's own wait status, reported by cordon-init. */
static int
login_status(struct login *lg, int st, int xs)
{
	int v;

	if (xs != -1 && read(xs, &v, sizeof(v)) == (ssize_t)sizeof(v))
		st = v;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	if (WIFEXITED(st))
		fprintf(stderr,
		    "cordon agent login: %s: the login exited with status %d\n",
		    lg->lg_name, WEXITSTATUS(st));
	else
		fprintf(stderr,
		    "cordon agent login: %s: the login ended by signal %d\n",
		    lg->lg_name, WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	return 1;
}

/* Run it; the terminal's modes restored after, unread input dropped. */
static int
login_run(struct login *lg)
{
	struct sandbox_run sx;
	sigset_t set;
	int sigfd, notify = -1, xs[2] = {-1, -1}, st, rc = 1;
	pid_t pid;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGQUIT);
	sigaddset(&set, SIGTSTP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) == -1 ||
	    (sigfd = signalfd(-1, &set, SFD_CLOEXEC)) == -1) {
		log_warn("agent login: signals");
		return 1;
	}
	lg->lg_tty = tcgetattr(0, &lg->lg_tio) == 0;
	memset(&sx, 0, sizeof(sx));
	if ((pid = login_spawn(lg, &sx, &notify, xs)) != -1) {
		st = login_wait(lg, pid, notify, sigfd);
		rc = login_status(lg, st, xs[0]);
	}
	/*
	 * A CLI may leave the terminal raw, or the terminal may still be
	 * answering what it wrote: neither reaches the operator's shell.
	 */
	if (lg->lg_tty)
		(void)tcsetattr(0, TCSAFLUSH, &lg->lg_tio);
	if (xs[0] != -1)
		close(xs[0]);
	sandbox_run_end(&sx);
	close(sigfd);
	return rc;
}

static void
login_free(struct login *lg)
{
	login_cgroup_end(lg);
	strv_free(lg->lg_argv);
	strv_free(lg->lg_envp);
	if (lg->lg_have_plan)
		sandbox_plan_free(&lg->lg_plan);
	if (lg->lg_have_mf)
		manifest_free(&lg->lg_mf);
}

/* The home's config, the protected set, the agent. */
static int
login_load(struct login *lg, const char *home, uid_t user)
{
	const char *dirs[4];
	char *slash;

	if (home_resolve(&lg->lg_cf, home) == -1) {
		fprintf(
		    stderr, "cordon agent login: cannot resolve the home\n");
		return 2;
	}
	/* SU-5: it runs the agent a manifest names */
	if (home_safe_make(&lg->lg_cf, user) == -1)
		return 1;
	if (config_load(&lg->lg_cf) == -1) /* it said FILE:LINE:COL */
		return 2;
	/* SBX-2: the spawner's protected set (check.c builds the same). */
	snprintf(
	    lg->lg_cfgdir, sizeof(lg->lg_cfgdir), "%s", lg->lg_cf.cf_agents);
	if ((slash = strrchr(lg->lg_cfgdir, '/')) != NULL &&
	    slash != lg->lg_cfgdir)
		*slash = '\0';
	dirs[0] = lg->lg_cfgdir;
	dirs[1] = lg->lg_cf.cf_audit;
	dirs[2] = lg->lg_cf.cf_vault;
	dirs[3] = lg->lg_cf.cf_state;
	if (roots_protect_set(&lg->lg_pc, lg->lg_opbuf, sizeof(lg->lg_opbuf),
		dirs, 4, lg->lg_pbuf) == -1) {
		fprintf(stderr, "cordon agent login: no home directory\n");
		return 2;
	}
	return login_manifest(lg) == -1 ? 2 : 0;
}

/* cordon agent login ...: argv[0] "agent", argv[1] "login". */
int
main(int argc, char **argv)
{
	static struct login lg;
	struct passwd *pw;
	const char *home = NULL;
	int rc;

	log_init("cordon", 0);
	if (argc < 2 || strcmp(argv[1], "login") != 0) {
		usage_err(
		    argc < 2 ? "which subcommand?" : "unknown subcommand");
		return 2;
	}
	lg.lg_cgparent = lg.lg_cgprocs = -1;
	if ((rc = login_args(&lg, argc - 1, argv + 1, &home)) != 0 ||
	    (rc = cli_root_rules(lg.lg_user, lg.lg_allow_root, &pw)) != 0)
		return rc;
	/* As root, the group is made (and the manifest read) before the
	 * capabilities go; the home then belongs to --user's uid. */
	if ((rc = login_load(&lg, home, pw != NULL ? pw->pw_uid : (uid_t)-1)) !=
	    0)
		goto out;
	rc = 1;
	if (home_prepare_state(&lg.lg_cf, pw != NULL ? pw->pw_uid : (uid_t)-1,
		pw != NULL ? pw->pw_gid : (gid_t)-1) == -1 ||
	    login_cgroup(&lg) == -1)
		goto out;
	login_confine(&lg);
	sandbox_host_probe();
	sbx_host.sh_pids_cg = lg.lg_cgprocs != -1;
	sbx_host.sh_pids_required = geteuid() == 0 && lg.lg_cgprocs == -1;
	/* cordon's sockets under systemd: nothing there for a login. */
	sandbox_hide_dir("/run/cordon");
	if (sandbox_tmp_open() == -1) {
		fprintf(stderr, "cordon agent login: no dir for the login's "
				"private tmp\n");
		rc = 1;
		goto out;
	}
	lg.lg_pc.pc_runs = sandbox_tmp_dir();
	rc = 1;
	if (login_plan(&lg) == -1 || (rc = login_command(&lg)) != 0) {
		rc = rc == 2 ? 2 : 1;
		goto out_tmp;
	}
	/* AU-1: auditd alone writes the trail; a login leaves no record. */
	if (home_running(lg.lg_cf.cf_rundir))
		fprintf(stderr, "cordon agent login: cordon is running on "
				"this home; the login is not in its audit "
				"trail, and the agent's next runs use it\n");
	fprintf(stderr,
	    "cordon agent login: %s: its own login, in %s (network on for "
	    "the login)\n",
	    lg.lg_name, lg.lg_home);
	rc = login_run(&lg);
out_tmp:
	sandbox_tmp_close();
out:
	login_free(&lg);
	return rc;
}
