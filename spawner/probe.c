/*
 * Health probes (SP-18): healthProbe.command (default [bin, --version])
 * under the same spawn rules as runs, without secrets; live when it
 * exits 0 and prints a version, degraded when it runs but fails, offline
 * when it cannot be started or times out.  At start and every
 * max(15, intervalSec) s.  Writes no file.
 */
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "env.h"
#include "log.h"
#include "redact.h"
#include "sanitize.h"
#include "secrets.h"
#include "spawner.h"
#include "util.h"

#define PROBE_OUT_MAX 4096

struct probe {
	struct agent *pr_agent;
	struct aproc pr_proc;
	char **pr_envp;
	char **pr_argv;
	struct evbuffer *pr_out;
};

static void
probe_free(struct probe *pr)
{
	strv_free(pr->pr_envp);
	free(pr->pr_argv);
	if (pr->pr_out)
		evbuffer_free(pr->pr_out);
	aproc_release(&pr->pr_proc);
	if (pr->pr_agent->ag_probe == pr)
		pr->pr_agent->ag_probe = NULL;
	free(pr);
}

static void
probe_out(struct aproc *ap, const char *s, size_t len)
{
	struct probe *pr = ap->ap_arg;
	size_t have = evbuffer_get_length(pr->pr_out);

	if (have < PROBE_OUT_MAX)
		evbuffer_add(pr->pr_out, s,
		    len < PROBE_OUT_MAX - have ? len : PROBE_OUT_MAX - have);
}

static void
probe_err(struct aproc *ap, const char *s, size_t len)
{
}

/*
 * Version: the first stdout line, cleaned and scrubbed like any output
 * (SP-10, SP-11: it leaves the spawner in /api/agents), at most 120 code
 * points.  A probe runs without secrets, but what it prints may come
 * from the agent's files (its home, its write roots), where a run of it
 * may have left a value it was given: the scrubber has the agent's
 * known values, those that resolve, as a run's does, besides the
 * patterns and home paths.
 */
static void
probe_version(struct probe *pr)
{
	struct agent *ag = pr->pr_agent;
	struct evbuffer *c = evbuffer_new(), *s = evbuffer_new();
	struct secret_set ss;
	const char *p;
	size_t n, i, cps = 0;

	memset(&ss, 0, sizeof(ss));
	ag->ag_version[0] = '\0';
	if (c == NULL || s == NULL)
		goto out;
	clean_buf((const char *)evbuffer_pullup(pr->pr_out, -1),
	    evbuffer_get_length(pr->pr_out), LIM_LINE_MAX, c);
	/* A value that does not resolve is in no run's hands either; an
	 * allocation failure (none missing) shows no version. */
	if ((secrets_resolve(sp.sp_secrets, &ag->ag_mf, &ss) == -1 &&
		ss.ss_nmissing == 0) ||
	    secrets_keys(&ss) == -1 ||
	    redact_buf(ss.ss_keys, (const char *)evbuffer_pullup(c, -1),
		evbuffer_get_length(c), 0, s) == -1)
		goto out;
	p = (const char *)evbuffer_pullup(s, -1);
	n = evbuffer_get_length(s);
	for (i = 0; i < n && p[i] != '\n'; i++) {
		if (((unsigned char)p[i] & 0xc0) != 0x80 &&
		    ++cps > LIM_PROBE_VERSION_MAX)
			break;
		if (i + 1 >= sizeof(ag->ag_version))
			break;
	}
	if (i > 0) /* an empty buffer pulls up to NULL */
		memcpy(ag->ag_version, p, i);
	ag->ag_version[i] = '\0';
out:
	secrets_clear(&ss);
	if (c != NULL)
		evbuffer_free(c);
	if (s != NULL)
		evbuffer_free(s);
}

static void
probe_done(struct aproc *ap)
{
	struct probe *pr = ap->ap_arg;
	struct agent *ag = pr->pr_agent;

	ag->ag_why = NULL;
	if (ap->ap_end == AP_END_TIMEOUT) {
		ag->ag_ready = RD_OFFLINE;
		ag->ag_why = "probe-timeout";
	} else if (aproc_exit_code(ap) == 127) {
		ag->ag_ready = RD_OFFLINE;
		ag->ag_why = "binary-missing";
	} else if (aproc_exit_code(ap) == 0) {
		probe_version(pr);
		ag->ag_ready = ag->ag_version[0] ? RD_LIVE : RD_DEGRADED;
		if (!ag->ag_version[0])
			ag->ag_why = "no-version";
	} else {
		ag->ag_ready = RD_DEGRADED;
		ag->ag_why = "probe-exit";
	}
	probe_free(pr);
}

static const struct aproc_ops probe_ops = {probe_out, probe_err, probe_done};

static void
probe_run(struct agent *ag)
{
	const struct manifest *mf = &ag->ag_mf;
	struct secret_set none;
	struct aproc_spec as;
	struct probe *pr;
	const char *cwd, *err;
	char path[PATH_MAX];
	size_t i;

	if (ag->ag_probe != NULL)
		return; /* the previous one is still running */
	if ((pr = calloc(1, sizeof(*pr))) == NULL)
		return;
	pr->pr_agent = ag;
	memset(&none, 0, sizeof(none));
	if ((pr->pr_out = evbuffer_new()) == NULL ||
	    (pr->pr_argv = calloc(mf->m_nprobe_cmd + 1, sizeof(char *))) ==
		NULL ||
	    agent_env(ag, &none, &pr->pr_envp, &cwd, &err) == -1 ||
	    mf->m_nprobe_cmd == 0 ||
	    agent_bin_check(mf->m_probe_cmd[0], pr->pr_envp,
		&ag->ag_sb.pl_roots, &sp.sp_protect, path, sizeof(path),
		ag->ag_detail, sizeof(ag->ag_detail)) == -1) {
		ag->ag_ready = RD_OFFLINE;
		ag->ag_why = mf->m_nprobe_cmd > 0 && pr->pr_envp != NULL
				 ? "binary-missing"
				 : "probe-failed";
		ag->ag_version[0] = '\0';
		probe_free(pr);
		return;
	}
	for (i = 0; i < mf->m_nprobe_cmd; i++)
		pr->pr_argv[i] = mf->m_probe_cmd[i];
	aproc_spec_agent(&as, ag, path, pr->pr_argv, pr->pr_envp, cwd);
	as.as_timeout_ms = mf->m_probe_timeout_ms > 0
			       ? mf->m_probe_timeout_ms
			       : LIM_PROBE_TIMEOUT_DEF_MS;
	if (aproc_start(&pr->pr_proc, &as, &probe_ops, pr) == -1) {
		ag->ag_ready = RD_OFFLINE;
		ag->ag_why = "probe-failed";
		probe_free(pr);
		return;
	}
	ag->ag_probe = pr;
}

static void
probe_timer_cb(evutil_socket_t fd, short ev, void *arg)
{
	probe_run(arg);
}

void
probe_start_all(void)
{
	struct agent *ag;
	struct timeval tv;
	long sec;
	size_t i;

	for (i = 0; i < sp.sp_nagents; i++) {
		ag = sp.sp_agents[i];
		sec = ag->ag_mf.m_probe_interval_sec;
		if (sec < LIM_PROBE_INTERVAL_MIN_SEC)
			sec = LIM_PROBE_INTERVAL_MIN_SEC;
		tv.tv_sec = sec;
		tv.tv_usec = 0;
		ag->ag_probe_timer = event_new(
		    sp.sp_d.d_base, -1, EV_PERSIST, probe_timer_cb, ag);
		if (ag->ag_probe_timer == NULL ||
		    event_add(ag->ag_probe_timer, &tv) == -1)
			log_warnx("no probe timer for %s", ag->ag_mf.m_name);
		probe_run(ag);
	}
}

void
probe_stop(struct agent *ag)
{
	if (ag->ag_probe != NULL)
		aproc_kill(&ag->ag_probe->pr_proc, AP_END_CANCEL);
	if (ag->ag_probe_timer != NULL)
		event_del(ag->ag_probe_timer);
}
