/*
 * One checker for "a string of this character shape": the first byte
 * from one set, the rest from another, the length within bounds.  Sets
 * are written as in a bracket expression ("a-z0-9._-").  Pure: no I/O,
 * no allocation, no state.
 */
#ifndef CORDON_CHARSET_H
#define CORDON_CHARSET_H

#include <stddef.h>

/*
 * 1 if c is in set: ranges "a-z" and single bytes; a '-' first or last
 * stands for itself.  NUL is in no set.
 */
int charset_has(const char *set, char c);

/* 1 if len is in [min, max], s[0] is in first and every later byte is in
 * rest. */
int charset_shape(const char *s, size_t len, const char *first,
    const char *rest, size_t min, size_t max);

#endif
