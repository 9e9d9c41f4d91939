/*
 * In the child: the secret-file scan of a run's write roots (SBX-2),
 * bounded (SBX_SCAN_MAX_ENTRIES, SBX_SCAN_MAX_DEPTH), never following a
 * link.  In a mount namespace each hit is covered by handle; without
 * one the run is refused on the first.  No logging, no allocation.
 */
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <linux/magic.h>

#include "protect.h"
#include "sandbox.h"
#include "sandbox_int.h"

/*
 * The secret-file cover (SBX-2), by handle: each hit is opened beneath
 * the dir fd the scan holds (O_PATH | O_NOFOLLOW), checked to be what the
 * scan saw (the inode getdents listed), and covered on that object.  A
 * sibling run sharing the root may rename or exchange folders across the
 * walk: an entry that is gone or is another inode than listed makes the
 * pass untrusted, and a pass that covered or missed anything is followed
 * by another; the run is refused if the tree will not hold still
 * (SBX_SCAN_PASSES).
 */
#define SBX_SCAN_PASSES 4
#define SBX_COVERS_MAX	256 /* folder covers per run */

struct scan {
	const struct sandbox_run *sc_sx;
	int sc_shadow;	/* 1: shadow hits; 0: refuse on the first */
	int sc_emptyfd; /* the empty file shadows bind from */
	struct stat sc_empty;
	size_t sc_entries;
	size_t sc_moved; /* covers made, entries moved: this pass */
	int sc_inocheck; /* getdents inodes are the ones opened */
	dev_t sc_dirdev[SBX_COVERS_MAX]; /* each folder cover's tmpfs */
	size_t sc_ndirs;
};

/* 1 if what fd holds is one of this run's covers already. */
static int
scan_covered(const struct scan *sc, const struct stat *st)
{
	size_t i;

	if (!S_ISDIR(st->st_mode))
		return st->st_dev == sc->sc_empty.st_dev &&
		       st->st_ino == sc->sc_empty.st_ino;
	for (i = 0; i < sc->sc_ndirs; i++)
		if (st->st_dev == sc->sc_dirdev[i])
			return 1;
	return 0;
}

/*
 * 1 if what fd holds is not the entry the scan listed (ino from
 * getdents): renamed or exchanged meanwhile, so the pass is not to be
 * trusted.  A mount root (a cover, a mount in the root) lists the inode
 * beneath it; overlayfs may list another inode than it gives: both kept.
 */
static int
scan_moved(const struct scan *sc, int fd, ino_t ino)
{
	struct statx stx;

	if (!sc->sc_inocheck || ino == 0)
		return 0;
	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_INO,
		&stx) == -1)
		return 1;
	if (stx.stx_attributes_mask & stx.stx_attributes &
	    STATX_ATTR_MOUNT_ROOT)
		return 0;
	return stx.stx_ino != ino;
}

/* Cover name beneath dfd, if it still is a dir (isdir) or a file. */
static int
scan_cover(struct scan *sc, int dfd, const char *name, int isdir, ino_t ino)
{
	struct stat st;
	int t, m, r;

	if (!sc->sc_shadow) {
		errno = EEXIST;
		return SBX_STEP_SECRET_FILE;
	}
	t = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (t == -1 && errno == ENOENT) {
		sc->sc_moved++; /* gone since listed: look again */
		return 0;
	}
	if (t == -1)
		return SBX_STEP_SHADOW;
	if (fstat(t, &st) == -1)
		goto fail;
	if (scan_covered(sc, &st)) {
		close(t);
		return 0;
	}
	/* Swapped for a link, a dir for a file, another entry: look again. */
	if (S_ISLNK(st.st_mode) || (S_ISDIR(st.st_mode) != isdir) ||
	    scan_moved(sc, t, ino)) {
		sc->sc_moved++;
		close(t);
		return 0;
	}
	if (isdir) {
		if (sc->sc_ndirs == SBX_COVERS_MAX) {
			errno = E2BIG;
			close(t);
			return SBX_STEP_SCAN_BOUND;
		}
		m = sbx_tmpfs_new(4096, "0555", SBX_MNT_DEAD);
	} else
		m = sbx_tree_clone(sc->sc_emptyfd, SBX_MNT_DEAD, 0);
	if (m == -1 || sbx_attach_fd(m, t) == -1)
		goto fail;
	if (isdir) {
		/* The cover's own dev, for the passes after this one. */
		r = fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW);
		if (r == 0)
			sc->sc_dirdev[sc->sc_ndirs++] = st.st_dev;
	}
	sc->sc_moved++; /* a pass that covered something is checked again */
	close(t);
	return 0;
fail:
	r = errno;
	close(t);
	errno = r;
	return SBX_STEP_SHADOW;
}

/* Bounded walk of one directory; never follows a symlink. */
static int
scan_dir(struct scan *sc, int dfd, int depth)
{
	char buf[4096] __attribute__((aligned(8)));
	struct stat st;
	long n, off;
	int sub, r;

	if (depth > SBX_SCAN_MAX_DEPTH) {
		errno = E2BIG;
		return SBX_STEP_SCAN_BOUND;
	}
	for (;;) {
		n = syscall(SYS_getdents64, dfd, buf, sizeof(buf));
		if (n == -1)
			return SBX_STEP_SCAN_BOUND;
		if (n == 0)
			return 0;
		for (off = 0; off < n;) {
			struct dirent64 *de = (void *)(buf + off);
			const char *name = de->d_name;

			off += de->d_reclen;
			if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
				continue;
			if (++sc->sc_entries > SBX_SCAN_MAX_ENTRIES) {
				errno = E2BIG;
				return SBX_STEP_SCAN_BOUND;
			}
			/* d_type spares a stat per entry; not every fs fills
			 * it in. */
			if (de->d_type == DT_DIR)
				st.st_mode = S_IFDIR;
			else if (de->d_type == DT_LNK)
				st.st_mode = S_IFLNK;
			else if (de->d_type != DT_UNKNOWN)
				st.st_mode = S_IFREG;
			else if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) ==
				 -1)
				continue; /* gone meanwhile */
			if (S_ISLNK(st.st_mode))
				continue;
			/*
			 * A folder with a secret's name (secrets/,
			 * credentials/) holds secrets: covered with an empty
			 * read-only tmpfs, or the run refused, like a file.
			 */
			if (protect_name_secret(name)) {
				if ((r = scan_cover(sc, dfd, name,
					 S_ISDIR(st.st_mode), de->d_ino)) != 0)
					return r;
				continue;
			}
			if (!S_ISDIR(st.st_mode))
				continue;
			sub = openat(dfd, name,
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			/* Unreadable now, but its owner could chmod it later:
			 * fail closed. */
			if (sub == -1 &&
			    (errno == ENOENT || errno == ENOTDIR)) {
				sc->sc_moved++; /* moved since listed */
				continue;
			}
			if (sub == -1)
				return SBX_STEP_SCAN_BOUND;
			if (scan_moved(sc, sub, de->d_ino)) {
				sc->sc_moved++; /* another dir by that name */
				close(sub);
				continue;
			}
			r = scan_dir(sc, sub, depth + 1);
			close(sub);
			if (r != 0)
				return r;
		}
	}
}

int
sbx_scan_roots(const struct sandbox_run *sx, int shadow, int emptyfd)
{
	const struct roots *rt = &sx->sx_plan->pl_roots;
	struct statfs sf;
	struct scan sc;
	size_t i;
	int dfd, pass, r;

	memset(&sc, 0, sizeof(sc));
	sc.sc_sx = sx;
	sc.sc_shadow = shadow;
	sc.sc_emptyfd = emptyfd;
	if (shadow && fstat(emptyfd, &sc.sc_empty) == -1)
		return SBX_STEP_SHADOW;
	for (pass = 0; pass < SBX_SCAN_PASSES; pass++) {
		sc.sc_entries = 0;
		sc.sc_moved = 0;
		/* Not the agent's own home (SBX-9): its login lives there. */
		for (i = 0; i < rt->r_nscan; i++) {
			dfd = open(rt->r_write[i],
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (dfd == -1 && errno == ENOTDIR)
				continue; /* a file root: named at load */
			if (dfd == -1)
				return SBX_STEP_ROOT; /* a root that vanished */
			sc.sc_inocheck = fstatfs(dfd, &sf) == 0 &&
					 sf.f_type != OVERLAYFS_SUPER_MAGIC;
			r = scan_dir(&sc, dfd, 0);
			close(dfd);
			if (r != 0)
				return r;
		}
		if (sc.sc_moved == 0)
			return 0;
	}
	errno = EAGAIN; /* the tree kept moving under the scan */
	return SBX_STEP_SHADOW;
}
