/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Userspace shim: atomic_t on the compiler's __atomic builtins. */
#ifndef _SHIM_LINUX_ATOMIC_H
#define _SHIM_LINUX_ATOMIC_H

#include <linux/types.h>

typedef struct {
	int counter;
} atomic_t;

static inline int atomic_read(const atomic_t *v)
{
	return __atomic_load_n(&v->counter, __ATOMIC_RELAXED);
}

static inline void atomic_set(atomic_t *v, int i)
{
	__atomic_store_n(&v->counter, i, __ATOMIC_RELAXED);
}

static inline void atomic_inc(atomic_t *v)
{
	__atomic_fetch_add(&v->counter, 1, __ATOMIC_RELAXED);
}

static inline int atomic_add_return(int i, atomic_t *v)
{
	return __atomic_add_fetch(&v->counter, i, __ATOMIC_SEQ_CST);
}

/* Like the kernel's: fully ordered on success, *old updated on failure. */
static inline bool atomic_try_cmpxchg(atomic_t *v, int *old, int new_val)
{
	return __atomic_compare_exchange_n(&v->counter, old, new_val, false,
					   __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
}

#endif
