/*
 * The per-run sandbox timed outside the spawner, for the benchmarks:
 * spawns of /bin/true through the one spawn helper with the sandbox hook,
 * as aproc_start makes them (private tmp made and removed, env, clone
 * into namespaces, the hook's layers, the seccomp listener handed back),
 * without the run's pids cgroup.  Touches only each spawn's private tmp.
 */
#ifndef BENCH_SANDBOX_H
#define BENCH_SANDBOX_H

#include "manifest.h"
#include "spawn_helper.h"

/* The request every spawn bench times: /bin/true, stderr kept, setsid. */
void bench_true_req(struct spawn_req *);

/*
 * n sandboxed spawns of /bin/true with network none and isolation iso,
 * each waited for; the seconds of each into secs[0..n).  0, or -1.
 */
int bench_sandbox_spawns(enum mf_isolation iso, long n, double *secs);

#endif
