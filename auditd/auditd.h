/*
 * The map of cordon-auditd: the store (append, chain, group commit,
 * torn-tail recovery, day rollover, head anchors), retention, and the
 * ring of recent records that answers MSG_AUDIT_TAIL.
 */
#ifndef CORDON_AUDITD_H
#define CORDON_AUDITD_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "proc.h"
#include "sha256.h"

struct json_object;

#define AUDIT_DAY_LEN	 10 /* YYYY-MM-DD */
#define AUDIT_MAX_DAYS	 4096
#define AUDIT_HEADS_FILE "heads"
#define AUDIT_HEADS_KEEP 1000	       /* anchors kept in the heads file */
#define AUDIT_LINE_MAX	 (1024 * 1024) /* recovery refuses longer lines */
#define AUDIT_TAIL_MAX	 1000	       /* API-8 limit bound */
#define AUDIT_CLOCK_ENV	 "CORDON_AUDIT_CLOCK_OFFSET_S" /* test hook */

struct audit_store {
	int as_dirfd;
	int as_fd;			  /* newest day file, O_APPEND, or -1 */
	char as_day[AUDIT_DAY_LEN + 1];	  /* day of as_fd */
	char as_last[AUDIT_DAY_LEN + 1];  /* day file holding seq as_seq */
	uint64_t as_seq;		  /* seq of the last line, 0: none */
	char as_prev[SHA256_HEX_LEN + 1]; /* hash of the last line */
	uint64_t as_anchored;		  /* seq of the last anchor */
	long long as_clock_off;		  /* seconds; test hook only */
	unsigned int as_retention;	  /* days; 0 keeps everything */
	char as_swept[AUDIT_DAY_LEN + 1]; /* day retention last ran */
};

/* One record on its way to disk. */
struct audit_item {
	struct json_object *ai_rec; /* validated: kind, then fields */
	struct timespec ai_ts;	    /* when it arrived */
	uint64_t ai_seq;	    /* set by audit_store_append */
	enum proc_id ai_from;	    /* who to acknowledge */
	unsigned int ai_gen;	    /* that channel's generation */
	uint32_t ai_id;		    /* its request id; 0: nobody waits */
};

/* store.c */
int audit_clock_init(struct audit_store *); /* before confinement */
void audit_now(const struct audit_store *, struct timespec *);
void audit_day_of(const struct timespec *, char day[AUDIT_DAY_LEN + 1]);
int audit_store_open(struct audit_store *); /* recovery; -1 is fatal */
/*
 * Write items in order as one group: one write(2) and one fdatasync per
 * day file touched.  0 once every line is durable; -1 if any step failed
 * (nothing is then acknowledged and the caller exits: the restart
 * recovers from what is on disk).
 */
int audit_store_append(struct audit_store *, struct audit_item *, size_t n);
/* Log the chain head and keep it in the heads file (why: a word). */
void audit_anchor(struct audit_store *, const char *why);

/* retention.c */
/* Sorted day names of the YYYY-MM-DD.jsonl files; -1 on error. */
int audit_list_days(
    int dirfd, char (*days)[AUDIT_DAY_LEN + 1], size_t max, size_t *n);
int audit_day_valid(const char *name, size_t len);
/* AU-8: delete day files older than the retention and record it. */
int audit_retention_run(struct audit_store *);

/* tail.c */
/* Durable lines enter the ring (it takes its own references). */
void audit_tail_commit(struct json_object **lines, size_t n);
void audit_tail_load(struct audit_store *); /* newest file's last lines */
/* Matching records, oldest first: a new {"records": [...]} object. */
struct json_object *audit_tail_query(
    const char *kind, const char *agent, uint64_t since, size_t limit);

#endif
