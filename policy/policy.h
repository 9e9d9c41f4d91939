/*
 * Shared types of the pure policy layer: the one error record every
 * validator fills.  Messages are fixed phrases; they never quote a value
 * of the input (a key name, when it is a plain name, may be shown).
 */
#ifndef CORDON_POLICY_POLICY_H
#define CORDON_POLICY_POLICY_H

#include <stddef.h>

struct policy_err {
	unsigned long pe_line; /* 1-based; 0 if unknown */
	unsigned long pe_col;  /* 1-based; 0 if unknown */
	char pe_msg[160];      /* "key.path: phrase", e.g. "name: missing" */
	const char *pe_code;   /* a fixed code, e.g. "unknown-key" */
};

#endif
