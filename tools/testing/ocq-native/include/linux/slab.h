/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Shim of <linux/slab.h>: counted allocations (a leak check per scenario). */
#ifndef _LINUX_SLAB_H
#define _LINUX_SLAB_H

#include <linux/types.h>
#include <ocq_native.h>

#define GFP_KERNEL	0u

static inline void *kcalloc(size_t n, size_t size, gfp_t flags)
{
	(void)flags;
	if (size && n > (size_t)-1 / size)
		return NULL;
	return ocq_native_alloc(n, size);
}

static inline void *kvcalloc(size_t n, size_t size, gfp_t flags)
{
	return kcalloc(n, size, flags);
}

static inline void kfree(const void *p)
{
	ocq_native_free(p);
}

static inline void kvfree(const void *p)
{
	ocq_native_free(p);
}

#endif /* _LINUX_SLAB_H */
