/*
 * The map of cordon-vaultd: daemon state, the symlink-proof file layer
 * (write.c), reads and listings (read.c) and note rendering (note.c).
 * Every file access is relative to the one held vault root fd.
 */
#ifndef CORDON_VAULTD_H
#define CORDON_VAULTD_H

#include <stddef.h>
#include <stdint.h>

#include "daemon.h"
#include "vaultpath.h"

struct json_object;

#define VAULT_READ_MAX	   (4u * 1024 * 1024) /* API-6 size cap, bytes */
#define VAULT_LIST_MAX	   4096		      /* entries per listing */
#define VAULT_PROMPT_CHARS 256000	      /* code points */
#define VAULT_PROMPT_BYTES (4u * VAULT_PROMPT_CHARS)
#define VAULT_BODY_BYTES   (8u * 1024 * 1024)	/* response / content */
#define VAULT_TMP_NAME	   32			/* ".cordon-tmp-" + 16 hex */
#define VAULT_RAW_MAX	   (3 * VAULT_PATH_MAX) /* a path before decoding */

/* Neutral outcomes, each with one fixed wire code (vault_err_code). */
enum vault_err {
	VE_OK = 0,
	VE_INVALID_REQUEST, /* malformed fields */
	VE_INVALID_PATH,    /* VA-2 / VA-3 lexical refusal */
	VE_NOT_FOUND,	    /* absent, not a note, or behind a symlink */
	VE_TOO_LARGE,	    /* over VAULT_READ_MAX or VAULT_LIST_MAX */
	VE_EXISTS,	    /* all VAULT_COLLISIONS names taken */
	VE_BUSY,	    /* the same mission note is being written */
	VE_WRITE_FAILED,    /* I/O error, or a symlink in the way */
	VE_AUDIT,	    /* auditd down or refused the record */
	VE_INTERNAL,
};

struct vault {
	struct daemon v_d;
	int v_root;	   /* O_DIRECTORY fd on the resolved vault root */
	int v_openat2;	   /* 1: openat2 RESOLVE_*; 0: O_NOFOLLOW walk */
	dev_t v_inbox_dev; /* the inbox Landlock lets us write, */
	ino_t v_inbox_ino; /* as made at start */
	unsigned v_gen[PROC_MAX]; /* bumped whenever a peer channel is new */
};

const char *vault_err_code(enum vault_err);

/* ---- write.c: the only way vaultd touches a file (VA-1, VA-4) ---- */

/* Probe openat2 once at start (before seccomp): sets v_openat2. */
void vault_probe_openat2(struct vault *);
/*
 * Open the vault-relative directory rel ("" = the root) one segment at a
 * time from v_root, never following a symlink; with create, missing
 * segments are made with mkdirat 0700 and their parent fsynced.  rel must
 * already be lexically checked.  Returns an O_DIRECTORY fd or -1.
 */
int vault_open_dir(struct vault *, const char *rel, int create);
/* One name in dirfd, never through a symlink: an fd or -1. */
int vault_open_in(
    struct vault *, int dirfd, const char *name, int flags, unsigned mode);
/* 1 if name exists in dirfd (as anything, symlinks not followed), 0 if
 * not, -1 on error. */
int vault_exists(int dirfd, const char *name);
/*
 * Stage len bytes in a fresh temp file in dirfd: O_CREAT|O_EXCL|
 * O_NOFOLLOW, write, then fsync and close.  tmp receives its name.  With
 * fdp, the temp is written only and its fd left in *fdp for
 * vault_stage_sync.  0 or -1 (and nothing left behind).
 */
int vault_stage(struct vault *, int dirfd, const void *buf, size_t len,
    char tmp[VAULT_TMP_NAME], int *fdp);
/* fsync and close a temp vault_stage wrote.  0 or -1 (temp removed). */
int vault_stage_sync(int dirfd, const char *tmp, int fd);
/*
 * Publish a staged temp as name: renameat2 (RENAME_NOREPLACE unless
 * replace), then fsync the directory.  On failure the temp is removed.
 * 0 or -1.
 */
int vault_publish(int dirfd, const char *tmp, const char *name, int replace);
void vault_discard(int dirfd, const char *tmp);
/* Remove temps a crash left in the inbox (at start).  Count removed. */
int vault_sweep(struct vault *);

/* ---- read.c: API-6 (VA-2) ---- */

/* Read the note at the decoded, checked path rel into *buf (malloc'd). */
enum vault_err vault_read(
    struct vault *, const char *rel, char **buf, size_t *len);
/* {notes: [{name, bytes, mtime}], folders: [name]} of a checked dir. */
enum vault_err vault_list(
    struct vault *, const char *rel, struct json_object **out);

/* ---- note.c: note bodies (VA-5) ---- */

/*
 * The chat note: frontmatter, title from the prompt's first 60 code
 * points, ## prompt, ## response, control characters removed.  prompt
 * and response are valid UTF-8.  *out is malloc'd.  0 or -1.
 */
int vault_note_chat(const char *agent, const char *prompt, size_t plen,
    const char *response, size_t rlen, long long time_ms, char **out,
    size_t *outlen);
/* A mission note: content with control characters removed. */
int vault_note_mission(
    const char *content, size_t len, char **out, size_t *outlen);

#endif
