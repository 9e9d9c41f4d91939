/*
 * Defaults and ceilings of DATA.md "Limits" (and SP-7 … SP-9, SP-14),
 * in one place.  Pure constants.  Not named limits.h: policy/ is on the
 * include path and would shadow the system <limits.h>.
 */
#ifndef CORDON_POLICY_LIMITS_H
#define CORDON_POLICY_LIMITS_H

/* API-3: prompt length in Unicode code points. */
#define LIM_PROMPT_MIN_CHARS 1
#define LIM_PROMPT_MAX_CHARS 256000
/* SP-2: one argv element, in bytes. */
#define LIM_ARG_MAX_BYTES (32 * 1024)
/* Elements of transportConfig.args / action command / probe command. */
#define LIM_ARGS_MAX 63
/* SP-5: manifest env. */
#define LIM_ENV_MAX_ENTRIES	64
#define LIM_ENV_VALUE_MAX_CHARS 4096
/* SP-15: actions. */
#define LIM_ACTIONS_MAX		  10
#define LIM_ACTION_ID_MAX	  32
#define LIM_ACTION_LABEL_MAX	  40
#define LIM_ACTION_HINT_MAX	  20
#define LIM_ACTION_TIMEOUT_DEF_MS 5000
#define LIM_ACTION_TIMEOUT_MAX_MS 60000
/* SP-8: runs (subprocess); a JSON stream has no default deadline (0). */
#define LIM_RUN_TIMEOUT_DEF_MS 120000
#define LIM_RUN_TIMEOUT_MAX_MS (24 * 3600 * 1000)
/* SP-18: health probes. */
#define LIM_PROBE_TIMEOUT_DEF_MS   5000
#define LIM_PROBE_TIMEOUT_MAX_MS   10000
#define LIM_PROBE_INTERVAL_DEF_SEC 60
#define LIM_PROBE_INTERVAL_MIN_SEC 15
#define LIM_PROBE_INTERVAL_MAX_SEC 86400
#define LIM_PROBE_VERSION_MAX	   120
/* SP-9: output caps in bytes (defaults; manifests clamp to ceilings). */
#define LIM_ACTION_OUTPUT_DEF (256 * 1024)
#define LIM_ACTION_OUTPUT_MAX (4 * 1024 * 1024)
#define LIM_RUN_OUTPUT_DEF    (8 * 1024 * 1024)
#define LIM_RUN_OUTPUT_MAX    (64 * 1024 * 1024)
/* SP-10: line clamp in code points. */
#define LIM_LINE_MAX 1000
/* API-3: session id ^[A-Za-z0-9._-]{1,96}$. */
#define LIM_SESSION_MAX 96
/*
 * SP-7: rlimits (default, ceiling).  memBytes 0 = no limit; it bounds the
 * run's memory.max where its cgroup has the memory controller, and each
 * process's RLIMIT_DATA (not RLIMIT_AS: V8 reserves far more address
 * space than it uses).  tmpBytes: the size of the run's private /tmp.
 */
#define LIM_CPU_SEC_DEF	   300
#define LIM_CPU_SEC_MAX	   3600
#define LIM_FILE_BYTES_DEF (100ULL * 1024 * 1024)
#define LIM_FILE_BYTES_MAX (1024ULL * 1024 * 1024)
#define LIM_NOFILE_DEF	   1024
#define LIM_NOFILE_MAX	   4096
#define LIM_NPROC_DEF	   50
#define LIM_NPROC_MAX	   512
#define LIM_MEM_BYTES_DEF  (2ULL * 1024 * 1024 * 1024)
#define LIM_MEM_BYTES_MAX  (64ULL * 1024 * 1024 * 1024)
#define LIM_TMP_BYTES_MIN  (1024ULL * 1024)
#define LIM_TMP_BYTES_DEF  (512ULL * 1024 * 1024)
#define LIM_TMP_BYTES_MAX  (8ULL * 1024 * 1024 * 1024)
/* SP-8/SP-17: SIGTERM, then SIGKILL after this grace. */
#define LIM_KILL_GRACE_MS 2000
/* API-4: cancel grace. */
#define LIM_CANCEL_GRACE_MS 3000
/*
 * SP-17: after SIGKILL, how long a run waits for its child to be reaped
 * before it ends without it (a descendant that cannot die, stuck in a
 * hung filesystem, keeps its pid namespace's init from exiting).
 */
#define LIM_REAP_GRACE_MS 1000
/* SP-14: concurrency. */
#define LIM_RUNS_TOTAL	       16
#define LIM_RUNS_PER_AGENT     4
#define LIM_RUNS_TOTAL_MAX     256 /* ceilings for spawner.maxRuns */
#define LIM_RUNS_PER_AGENT_MAX 64  /* and spawner.maxRunsPerAgent */
/*
 * MC-2: each git step of a worktree at most this long (clone, checkout,
 * origin, head, init, and a test hook's pause); the run is answered
 * before them, and can be cancelled during any.
 */
#define LIM_WORKTREE_STEP_MS 60000
/* MC-3: detached jobs kept (spawner.jobsKeep, spawner.jobsKeepMiB) */
#define LIM_JOBS_KEEP	      100
#define LIM_JOBS_KEEP_MAX     1000
#define LIM_JOBS_KEEP_MIB     256
#define LIM_JOBS_KEEP_MIB_MAX 65536
#define LIM_JOB_ID_MAX	      80		 /* ^[A-Za-z0-9_-]{1,80}$ */
#define LIM_JOB_EVENTS_BYTES  (16 * 1024 * 1024) /* one job's events file */
#define LIM_JOB_WAIT_MS_MAX   60000		 /* one wait */
#define LIM_JOB_PAGE_MAX      1000		 /* events in one answer */
/* SP-15: strings of a manifest. */
#define LIM_NAME_MAX	     64
#define LIM_DISPLAY_NAME_MAX 80
#define LIM_DESCRIPTION_MAX  1000
#define LIM_CAPABILITIES_MAX 32
#define LIM_CAPABILITY_MAX   64
#define LIM_SECRETS_MAX	     16
#define LIM_SECRET_PATH_MAX  128
/* A longer value is no value: missing-secret (the scrubber holds one). */
#define LIM_SECRET_VALUE_MAX 8192
#define LIM_ROOTS_MAX	     16
#define LIM_PATH_MAX	     4096

/* SBX-7: how long an ask waits for the operator by default, and the
 * bounds of an agent's commands.askTimeoutSec. */
#define GATE_ASK_TIMEOUT     60 /* seconds */
#define GATE_ASK_TIMEOUT_MIN 5
#define GATE_ASK_TIMEOUT_MAX 600
/*
 * SBX-8: an agent CLI lets a tool call through when its gate hook times
 * out or fails, so the gate must answer first.  `cordon gate` refuses
 * (no-verdict) once the ask's bound and GATE_ANSWER_MARGIN have passed
 * without a verdict (gate_answer_sec), and a hook's own timeout must
 * exceed that by GATE_HOOK_MARGIN: Gemini CLI's is cordon's own, the
 * manifest sets Claude Code's and Codex's (docs/agents.md).
 */
#define GATE_ANSWER_MARGIN 10 /* seconds */
#define GATE_HOOK_MARGIN   10 /* seconds */
#define GATE_ANSWER_MAX	   (GATE_ASK_TIMEOUT_MAX + GATE_ANSWER_MARGIN)
/*
 * SBX-8: each call carries its caller's bound.  gated denies
 * (past-deadline) a call it would allow or hold with less than
 * GATE_LATE_MS of that bound left, and holds an ask at most until then:
 * room for the verb.run record's round trip and the answer, so that the
 * trail does not record an allow its caller had already given up on.
 */
#define GATE_LATE_MS 2000

#endif
