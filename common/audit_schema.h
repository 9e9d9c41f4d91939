/*
 * The one audit schema (AU-2, AU-3, AU-4): every record kind with its
 * fields (type, pattern, bounds, required) and the processes allowed to
 * send it.  Pure: no I/O, no globals beyond the const table.  Used by
 * auditd, the broker's query check, the unit tests and the fuzzer.
 */
#ifndef CORDON_AUDIT_SCHEMA_H
#define CORDON_AUDIT_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include "proc.h"

struct json_object;

#define AUDIT_GENESIS                                                          \
	"0000000000000000000000000000000000000000000000000000000000000000"
#define AUDIT_COUNT_MAX	 9007199254740992LL /* 2^53: exact in every JSON */
#define AUDIT_KIND_MAX	 32		    /* longest kind name, bytes */
#define AUDIT_ARGS_MAX	 64		    /* argsRedacted elements */
#define AUDIT_ARG_MAX	 256		    /* bytes per argsRedacted element */
#define AUDIT_DATES_MAX	 400		    /* audit.retention deleted[] */
#define AUDIT_RECORD_MAX (48 * 1024)	    /* MSG_AUDIT_RECORD payload */

/* Named string shapes (the patterns of docs/audit.md). */
enum audit_pat {
	AP_NAME,     /* ^[a-z0-9][a-z0-9-]{0,63}$ */
	AP_ACTIONID, /* ^[a-z0-9][a-z0-9-]{0,31}$ */
	AP_RUNID,    /* ^[0-9a-f]{16}$ */
	AP_HEX8,     /* ^[0-9a-f]{8}$ */
	AP_BIN,	     /* ^[A-Za-z0-9._+-]{1,64}$ (also verb) */
	AP_VPATH,    /* ^[A-Za-z0-9._/-]{1,512}$, no "", "." or ".." part */
	AP_VERSION,  /* ^[0-9A-Za-z.+-]{1,32}$ */
	AP_ROUTE,    /* ^[a-z0-9/{}._-]{1,64}$ */
	AP_RULE,     /* ^[a-z0-9][a-z0-9.-]{0,63}$ */
	AP_ERRWORD,  /* ^[a-z][a-z-]{0,31}$ */
	AP_DATE,     /* ^[0-9]{4}-[0-9]{2}-[0-9]{2}$ */
	AP_HOST,     /* ^[a-z0-9:][a-z0-9.:-]{0,252}$ (a name or address) */
};

enum audit_ftype {
	AF_STR,	 /* a string of pattern af_pat */
	AF_ENUM, /* one of af_enum */
	AF_INT,	 /* an integer in [af_min, af_max] */
	AF_BOOL,
	AF_ARGS,  /* argsRedacted: <= 64 printable-ASCII strings <= 256 */
	AF_DATES, /* <= 400 strings of AP_DATE */
};

struct audit_field {
	const char *af_name;
	enum audit_ftype af_type;
	int af_required;
	enum audit_pat af_pat;
	const char *const *af_enum; /* NULL-terminated */
	long long af_min, af_max;
};

struct audit_kind {
	const char *ak_kind;
	uint32_t ak_senders; /* PROC_BIT mask; PROC_AUDITD = auditd itself */
	const struct audit_field *ak_fields;
	size_t ak_nfields;
};

/* The table, for docs and tests: *n gets its length. */
const struct audit_kind *audit_kinds(size_t *n);
const struct audit_kind *audit_kind_lookup(const char *kind);

/* 1 if s (NUL-free, len bytes) has the shape p. */
int audit_pattern_ok(enum audit_pat p, const char *s, size_t len);

/*
 * Check rec, a parsed JSON object received from `from`, against the
 * schema.  On success *out is a new object holding "kind" and then the
 * kind's fields in schema order (fresh copies), and 0 is returned.  Any
 * unknown kind or field, missing field, wrong type, bad pattern, bound or
 * sender gives -1 ("bad-record") and changes nothing.
 */
int audit_validate(
    struct json_object *rec, enum proc_id from, struct json_object **out);

#endif
