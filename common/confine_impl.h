/*
 * What the confine*.c files share with one another; not for callers
 * (confine.h is theirs).
 */
#ifndef CORDON_CONFINE_IMPL_H
#define CORDON_CONFINE_IMPL_H

#include <stdint.h>

/* confine_caps.c */
int cap_read(uint64_t *eff, uint64_t *prm, uint64_t *inh); /* 0 or -1 */
int cap_drop_bounding(void);

/* confine_landlock.c: Landlock's state in this process, recorded there
 * and by confine_self so that confine_status_json() needs no probe. */
extern int ll_abi;	 /* -2: not probed yet, -1: unavailable */
extern int ll_abi_errno; /* why the probe failed */
extern int ll_on;	 /* restrict_self succeeded (confine_self) */
const char *ll_unavailable_why(int err);

#endif
