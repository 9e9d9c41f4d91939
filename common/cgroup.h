/*
 * The pids cgroup that bounds each agent run (SP-7): find this process's
 * cgroup in the hierarchy that carries the pids controller (cgroup v1
 * mount with "pids" among its super options, else cgroup2 where the
 * controller is offered), make and remove child groups, and empty them.
 * The line parsers are pure, so that hostile mountinfo and proc lines can
 * be unit-tested; the rest works on directory fds and never follows a
 * symlink out of the hierarchy.
 */
#ifndef CORDON_CGROUP_H
#define CORDON_CGROUP_H

#include <sys/types.h>

#include <stddef.h>

#define CGROUP_V1 1 /* a cgroup v1 mount with the pids controller */
#define CGROUP_V2 2 /* a cgroup2 mount */

/* Bounds on the cleanup loops: rounds of reading cgroup.procs. */
#define CGROUP_KILL_ROUNDS 200
#define CGROUP_PROCS_MAX   4096 /* pids read per round */

/*
 * One line of /proc/self/mountinfo (no newline needed): CGROUP_V1 or
 * CGROUP_V2 with the mount's root and mount point unescaped (\ooo) into
 * root and mnt; 0 for any other mount; -1 for a malformed line, a path
 * that does not fit, is not absolute or holds a control character.
 */
int cgroup_parse_mountinfo(
    const char *line, char *root, size_t rootsz, char *mnt, size_t mntsz);

/*
 * One line of /proc/self/cgroup: 1 and the path when the line is the
 * hierarchy of kind (CGROUP_V1: "pids" among its controllers; CGROUP_V2:
 * "0::"), 0 for another hierarchy, -1 malformed (a path that is not
 * absolute, has "." or ".." components, "//", or a control character).
 */
int cgroup_parse_proc(const char *line, int kind, char *path, size_t sz);

/*
 * The directory of cgroup path under a mount of the hierarchy's root
 * at mnt: 0, or -1 when path lies outside root or the result does not
 * fit.
 */
int cgroup_dir(
    const char *mnt, const char *root, const char *path, char *out, size_t sz);

/* 1 if word is one of the items of list, separated by any of seps. */
int cgroup_list_has(const char *list, const char *seps, const char *word);

/* The pid of a name "<prefix><decimal pid>" (no sign, no leading 0), or -1. */
pid_t cgroup_name_pid(const char *name, const char *prefix);

/*
 * cgroup.procs contents: one decimal pid per line.  The number of pids
 * stored (at most max; the rest are dropped), or -1 when malformed.
 */
int cgroup_parse_procs(const char *buf, size_t len, pid_t *pids, size_t max);

/*
 * This process's own directory in the pids hierarchy, from
 * /proc/self/mountinfo and /proc/self/cgroup; for cgroup2 only when its
 * cgroup.controllers offers pids.  0 with *kind set, or -1.
 */
int cgroup_find_pids(char *dir, size_t sz, int *kind);

/* CGROUP_V2 when dfd is a cgroup2 directory, CGROUP_V1 otherwise. */
int cgroup_kind_of(int dfd);

/*
 * mkdir name beneath pfd (mode 0755), and pids.max = max (0: leave
 * "max") in it.  0 and *dfd (O_DIRECTORY, close-on-exec), or -1 with
 * errno and no directory left behind.
 */
int cgroup_make(int pfd, const char *name, long max, int *dfd);

/*
 * SP-7: memory.max = max in the group at dfd, where the memory
 * controller is enabled there (cgroup2): 0 set, 1 no controller (or max
 * 0), -1 a write that failed.
 */
int cgroup_set_memory(int dfd, unsigned long long max);

/* cgroup_remove flags */
#define CGROUP_RM_IF_EMPTY 0x1 /* a group holding a process: EBUSY, no kill */
#define CGROUP_RM_NOWAIT   0x2 /* one kill pass, one rmdir, never a sleep */

/*
 * Kill what is in name beneath pfd and in its child groups (one level:
 * SIGKILL to each pid of cgroup.procs, read again until empty, or one
 * write to cgroup.kill where the kernel has it), then rmdir them and name;
 * ENOENT counts as done.  0, or -1 with errno. CGROUP_RM_IF_EMPTY: a group that
 * still holds a process is left alone
 * (-1, EBUSY) and nothing is killed.  CGROUP_RM_NOWAIT: whatever is in
 * the groups is sent SIGKILL once, and -1 with EBUSY says a process was
 * still there (or still on its way out): call again later.  Without it
 * the call waits, bounded by CGROUP_KILL_ROUNDS and a few hundred ms.
 */
int cgroup_remove(int pfd, const char *name, int flags);

/*
 * Leftover groups "<prefix><pid or number>" beneath pfd, from a process
 * that is gone: with dead_only, only those whose pid is dead (or is ours
 * now) and that hold nothing; otherwise every such group, its processes
 * killed.  The number of groups that could not be removed.
 */
int cgroup_sweep(int pfd, const char *prefix, int dead_only);

/*
 * cgroup2: offer the pids controller to dfd's child groups ("+pids" in
 * its cgroup.subtree_control) unless it already is.  0 or -1.
 */
int cgroup_enable_pids(int dfd);

#endif
