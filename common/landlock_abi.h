/*
 * Landlock UAPI beyond what Debian 12's <linux/landlock.h> (ABI 1-2)
 * provides, plus syscall(2) wrappers (glibc has none).  The only place in
 * cordon that defines Landlock constants; everything is #ifndef-guarded.
 */
#ifndef CORDON_LANDLOCK_ABI_H
#define CORDON_LANDLOCK_ABI_H

#include <linux/landlock.h>
#include <linux/types.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif

#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif

/* ABI 1: filesystem rights, all thirteen are in every kernel we accept. */
#define CORDON_LL_FS_ABI1 ((1ULL << 13) - 1)

/* ABI 2 */
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
/* ABI 3 */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
/* ABI 4: TCP port rights, a second rule type and handled_access_net. */
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)
#endif
#ifndef LANDLOCK_ACCESS_NET_CONNECT_TCP
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#endif
/* An enum member in newer headers, so it gets cordon's own name. */
#define CORDON_LANDLOCK_RULE_NET_PORT 2
/* ABI 5 */
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
/* ABI 6: IPC scoping. */
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif

/* ABI 7: audit logging flags of landlock_restrict_self(2). */
#ifndef LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF
#define LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF (1U << 0)
#endif
#ifndef LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON
#define LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON (1U << 1)
#endif
#ifndef LANDLOCK_RESTRICT_SELF_LOG_SUBDOMAINS_OFF
#define LANDLOCK_RESTRICT_SELF_LOG_SUBDOMAINS_OFF (1U << 2)
#endif

/* Rights that apply to a file (not a directory) in a path-beneath rule. */
#define CORDON_LL_FS_FILE                                                      \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |          \
	    LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |       \
	    LANDLOCK_ACCESS_FS_IOCTL_DEV)

/*
 * The system struct landlock_ruleset_attr may stop at handled_access_fs,
 * so cordon carries the full layout.  The size passed to the kernel follows
 * the ABI: 8 bytes (ABI 1-3), 16 (ABI 4-5), 24 (ABI 6+).
 */
struct cordon_landlock_ruleset_attr {
	__u64 handled_access_fs;
	__u64 handled_access_net;
	__u64 scoped;
};

#define CORDON_LL_ATTR_SIZE(abi)                                               \
	((abi) >= 6 ? sizeof(struct cordon_landlock_ruleset_attr)              \
	    : (abi) >= 4                                                       \
		? offsetof(struct cordon_landlock_ruleset_attr, scoped)        \
		: offsetof(struct cordon_landlock_ruleset_attr,                \
		      handled_access_net))

/* Same layout as the kernel's packed landlock_path_beneath_attr. */
struct cordon_landlock_path_beneath_attr {
	__u64 allowed_access;
	__s32 parent_fd;
} __attribute__((packed));

struct cordon_landlock_net_port_attr {
	__u64 allowed_access;
	__u64 port;
};

static inline int
cordon_landlock_create_ruleset(const void *attr, size_t size, __u32 flags)
{
	return (int)syscall(__NR_landlock_create_ruleset, attr, size, flags);
}

static inline int
cordon_landlock_add_rule(
    int ruleset_fd, int rule_type, const void *attr, __u32 flags)
{
	return (int)syscall(
	    __NR_landlock_add_rule, ruleset_fd, rule_type, attr, flags);
}

static inline int
cordon_landlock_restrict_self(int ruleset_fd, __u32 flags)
{
	return (int)syscall(__NR_landlock_restrict_self, ruleset_fd, flags);
}

#endif
