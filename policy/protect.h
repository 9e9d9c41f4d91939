/*
 * SBX-2: the paths an agent never reaches, as tables (DATA.md), and the
 * pure tests on them.  Every path handed in is absolute and already
 * resolved (realpath) by the caller; nothing here touches the filesystem.
 */
#ifndef CORDON_POLICY_PROTECT_H
#define CORDON_POLICY_PROTECT_H

#include <stddef.h>

#define PROTECT_EXTRA_MAX 8
#define PROTECT_LINKS_MAX 32
#define PROTECT_PATH_MAX  4096

struct protect_ctx {
	const char *pc_home; /* the operator's home, resolved; NULL: none */
	/* cordon's config dir (secrets), the audit dir, the vault: resolved */
	const char *pc_extra[PROTECT_EXTRA_MAX];
	size_t pc_nextra;
	/*
	 * The spawner's dir of the runs' private tmps, resolved, or NULL: no
	 * root may contain or enter it (other runs' tmps are in it), but
	 * protect_path_hit leaves it alone (the agent's own tmp is in it too).
	 */
	const char *pc_runs;
	/*
	 * Where the home's protected entries lead when one, or a dir above
	 * it, is a link (~/.bashrc -> ~/dotfiles/bashrc), resolved: each is
	 * as protected as the entry itself.
	 */
	const char *pc_links[PROTECT_LINKS_MAX];
	size_t pc_nlinks;
};

/* Home-relative protected entries (".ssh", ".config/gh", ...). */
const char *const *protect_home_list(size_t *n);
/* Shell start-up files: never writable (".bashrc", ...). */
const char *const *protect_startup_list(size_t *n);

/*
 * 1 if the file name (one component) is secret-looking: .env*, *.pem,
 * *.key, id_rsa*, id_ed25519*, private_key, .secret*, *secret*,
 * *credentials*.  Case-insensitive.
 */
int protect_name_secret(const char *name);

/* 1 if path is base or lies beneath it (both absolute, resolved). */
int protect_is_under(const char *path, const char *base);

/*
 * 1 if path is, or lies beneath, a protected path (the home list, the
 * start-up files, the extra dirs), or has a secret-looking component.
 */
int protect_path_hit(const struct protect_ctx *, const char *path);

/*
 * For a sandbox root (checked against pc_runs too): NULL if allowed;
 * else a fixed phrase saying why
 * ("is inside a protected path", "contains a protected path",
 * "is a protected path", "is the home directory", "is /").
 */
const char *protect_root_conflict(const struct protect_ctx *, const char *root);

#endif
