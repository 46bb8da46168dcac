/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shim of <linux/atomic.h> on real threads, with the orderings of
 * Documentation/atomic_t.txt:
 *
 *  - atomic_read()/atomic_set() and their long forms: relaxed;
 *  - the _acquire and _release forms: acquire/release;
 *  - the void RMWs (atomic_inc, atomic_or, atomic_andnot, ...): relaxed;
 *  - the value-returning RMWs (atomic_fetch_andnot, atomic_xchg,
 *    atomic_cmpxchg, atomic_try_cmpxchg when it succeeds): fully ordered.  A seq_cst RMW
 *    is what ThreadSanitizer understands; the kernel's "as if smp_mb()
 *    before and after" is stronger than C11's seq_cst RMW towards
 *    non-seq_cst accesses, so outside x86 (where a locked RMW is a full
 *    barrier anyway) the RMW is wrapped in seq_cst fences;
 *  - a failed cmpxchg: relaxed, as in the kernel.
 *
 * The count build of make cost counts every RMW, a failed cmpxchg too, and
 * every marked write (ocq_native.h); the others compile that to nothing.
 */
#ifndef _LINUX_ATOMIC_H
#define _LINUX_ATOMIC_H

#include <asm/barrier.h>
#include <linux/compiler.h>
#include <linux/types.h>
#include <ocq_native.h>

#define __RLX	__ATOMIC_RELAXED
#define __SC	__ATOMIC_SEQ_CST

#if defined(__x86_64__) || defined(__i386__)
#define __ocq_full_fence()	do { } while (0)
#else
#define __ocq_full_fence()	__atomic_thread_fence(__SC)
#endif

/* a fully ordered RMW */
#define __ocq_full(expr)						\
	({								\
		__ocq_full_fence();					\
		__typeof__(expr) __fr = (expr);				\
		__ocq_full_fence();					\
		ocq_native_maybe_jitter();				\
		__fr;							\
	})

#define __ocq_cnt(v)		(&(v)->counter)
/* make cost counts each RMW (a locked instruction on x86) and marked write */
#define __ocq_rmw(v)							\
	(ocq_native_count_rmw(__ocq_cnt(v)),				\
	 ocq_native_count_write(__ocq_cnt(v)))

#define atomic_read(v)		__atomic_load_n(__ocq_cnt(v), __RLX)
#define atomic_read_acquire(v)	__atomic_load_n(__ocq_cnt(v), __ATOMIC_ACQUIRE)
#define atomic_set(v, i)						\
	(ocq_native_count_write(__ocq_cnt(v)),				\
	 __atomic_store_n(__ocq_cnt(v), (i), __RLX))
#define atomic_set_release(v, i)					\
	(ocq_native_count_write(__ocq_cnt(v)),				\
	 __atomic_store_n(__ocq_cnt(v), (i), __ATOMIC_RELEASE))
#define atomic_inc(v)							\
	((void)(__ocq_rmw(v), __atomic_fetch_add(__ocq_cnt(v), 1, __RLX)))
#define atomic_dec(v)							\
	((void)(__ocq_rmw(v), __atomic_fetch_sub(__ocq_cnt(v), 1, __RLX)))
#define atomic_or(i, v)							\
	((void)(__ocq_rmw(v), __atomic_fetch_or(__ocq_cnt(v), (i), __RLX)))
#define atomic_andnot(i, v)						\
	((void)(__ocq_rmw(v),						\
		__atomic_fetch_and(__ocq_cnt(v), ~(i), __RLX)))
#define atomic_fetch_andnot(i, v)					\
	(__ocq_rmw(v),							\
	 __ocq_full(__atomic_fetch_and(__ocq_cnt(v), ~(i), __SC)))
#define atomic_fetch_or(i, v)						\
	(__ocq_rmw(v), __ocq_full(__atomic_fetch_or(__ocq_cnt(v), (i), __SC)))
#define atomic_xchg(v, i)						\
	(__ocq_rmw(v), __ocq_full(__atomic_exchange_n(__ocq_cnt(v), (i), __SC)))
#define atomic_inc_return(v)						\
	(__ocq_rmw(v), __ocq_full(__atomic_add_fetch(__ocq_cnt(v), 1, __SC)))

static inline int atomic_cmpxchg(atomic_t *v, int old, int val)
{
	int cur = old;

	__ocq_rmw(v);
	__ocq_full_fence();
	if (__atomic_compare_exchange_n(&v->counter, &cur, val, false, __SC,
					__RLX)) {
		__ocq_full_fence();
		ocq_native_maybe_jitter();
	}
	return cur;
}

static inline bool atomic_try_cmpxchg(atomic_t *v, int *old, int val)
{
	bool ok;

	__ocq_rmw(v);
	__ocq_full_fence();
	ok = __atomic_compare_exchange_n(&v->counter, old, val, false, __SC,
					 __RLX);
	if (ok) {
		__ocq_full_fence();
		ocq_native_maybe_jitter();
	}
	return ok;
}

#define atomic_long_read(v)	__atomic_load_n(__ocq_cnt(v), __RLX)
#define atomic_long_set(v, i)						\
	(ocq_native_count_write(__ocq_cnt(v)),				\
	 __atomic_store_n(__ocq_cnt(v), (i), __RLX))
#define atomic_long_inc(v)						\
	((void)(__ocq_rmw(v), __atomic_fetch_add(__ocq_cnt(v), 1, __RLX)))

#endif /* _LINUX_ATOMIC_H */
