/*
 * Pure vault path rules (VA-2, VA-3, VA-5): one URL-decoding pass, the
 * lexical checks for reads, listings, mission folders and filename hints,
 * and chat note naming.  No I/O, no globals, no allocation.
 */
#ifndef CORDON_POLICY_VAULTPATH_H
#define CORDON_POLICY_VAULTPATH_H

#include <stddef.h>
#include <stdint.h>

#define VAULT_PATH_MAX	   1024 /* decoded vault-relative path, bytes */
#define VAULT_SEG_MAX	   255	/* one path segment, bytes */
#define VAULT_HINT_MAX	   96	/* VA-3: filename hint, chars */
#define VAULT_FOLDER_DEPTH 4	/* segments below a mission's own folder */
#define VAULT_NAME_MAX	   64	/* NAME: ^[a-z0-9][a-z0-9-]{0,63}$ */
#define VAULT_COLLISIONS   99	/* VA-5: -02 ... -99 */
#define VAULT_TIME_MAX	   253402300799999LL /* 9999-12-31T23:59:59.999Z */

#define VAULT_INBOX	 "00_Inbox/cordon"
#define VAULT_CHATS	 "00_Inbox/cordon/chats"
#define VAULT_MISSIONS	 "00_Inbox/cordon/missions"
#define VAULT_TMP_PREFIX ".cordon-tmp-" /* hidden from every reader */

/* A chat note name: "YYYY-MM-DD-HHMM-" + agent + "-" + sha8 + "-NN.md". */
#define VAULT_CHAT_NAME_MAX (16 + VAULT_NAME_MAX + 1 + 8 + 3 + 3 + 1)

/*
 * One URL-decoding pass over in[0..inlen): "%XX" (hex, either case)
 * becomes one byte, everything else is copied.  A malformed escape ("%",
 * "%4", "%ZZ") or a NUL, raw or decoded, refuses the whole input.  out
 * gets the decoded bytes and a NUL; outsz must leave room for it.
 * Returns the decoded length, or -1.  "%252e" decodes to the literal
 * "%2e": there is never a second pass.
 */
long vaultpath_decode(const char *in, size_t inlen, char *out, size_t outsz);

/*
 * VA-2: a decoded note path that may be read: relative, 1..VAULT_PATH_MAX
 * bytes, segments 1..VAULT_SEG_MAX bytes separated by single '/', no
 * segment starting with '.' (so no "." or "..", no .obsidian/.trash/.git
 * or other hidden entries), none equal to node_modules or 60_Attachments
 * (ASCII case ignored), no backslash, no control bytes (0x00-0x1f,
 * 0x7f), ending in ".md".  The caller checks UTF-8 (utf8_valid).
 * Returns 1 if acceptable, 0 if not.
 */
int vaultpath_read_ok(const char *path, size_t len);

/* VA-2: a folder that may be listed: "" (the vault root) or the rules
 * above without the ".md" ending. */
int vaultpath_dir_ok(const char *path, size_t len);

/*
 * VA-3: a filename hint is 1..VAULT_HINT_MAX chars of [A-Za-z0-9._-],
 * not starting with '.'.  The note's file name is the hint, with ".md"
 * appended unless it already ends so.  Writes the name and a NUL to out
 * (outsz >= VAULT_HINT_MAX + 4).  Returns 0, or -1 if the hint is refused.
 */
int vaultpath_hint_name(const char *hint, size_t len, char *out, size_t outsz);

/*
 * VA-3: folder is missions/<id> itself or beneath it, by segment:
 * "00_Inbox/cordon/missions/<id>" optionally followed by up to
 * VAULT_FOLDER_DEPTH segments of [A-Za-z0-9._-] not starting with '.',
 * with at most one trailing '/'.  Returns 1 if acceptable, 0 if not.
 */
int vaultpath_mission_folder_ok(const char *id, const char *folder, size_t len);

/* NAME: ^[a-z0-9][a-z0-9-]{0,63}$ (agents and mission ids). */
int vaultpath_name_ok(const char *name, size_t len);

/* A UTC time broken down from unix milliseconds (proleptic Gregorian). */
struct vault_utc {
	int vu_year, vu_mon, vu_day; /* 1-based month and day */
	int vu_hour, vu_min, vu_sec, vu_ms;
};

/* Breaks down ms in [0, VAULT_TIME_MAX]: 0, else -1. */
int vaultpath_utc(long long ms, struct vault_utc *);

/*
 * VA-5: "YYYY-MM-DD-HHMM-{agent}-{sha8}.md" (UTC), and for n in
 * 2..VAULT_COLLISIONS "...-{sha8}-NN.md".  agent must be a NAME, sha8
 * eight lowercase hex digits: no prompt character can reach the name.
 * Writes name + NUL to out (outsz >= VAULT_CHAT_NAME_MAX).  0, else -1.
 */
int vaultpath_chat_name(char *out, size_t outsz, long long ms,
    const char *agent, const char *sha8, unsigned n);

#endif
