/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Userspace shim: kcalloc()/kfree() on calloc()/free(), with failure
 * injection: when sqt_fail_alloc is > 0 it counts down and the allocation
 * that brings it to 0 fails.
 */
#ifndef _SHIM_LINUX_SLAB_H
#define _SHIM_LINUX_SLAB_H

#include <stdlib.h>
#include <linux/types.h>

#define GFP_KERNEL	0u

extern int sqt_fail_alloc;

static inline void *kcalloc(size_t n, size_t size, gfp_t gfp)
{
	(void)gfp;
	if (sqt_fail_alloc > 0 && --sqt_fail_alloc == 0)
		return NULL;
	return calloc(n, size);
}

static inline void kfree(const void *p)
{
	free((void *)p);
}

#endif
