/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shim of <linux/atomic.h>.  Every operation is one step of the model: a
 * scheduling point, then the operation, sequentially consistent, with no
 * other context running in between.
 */
#ifndef _LINUX_ATOMIC_H
#define _LINUX_ATOMIC_H

#include <asm/barrier.h>
#include <linux/compiler.h>
#include <linux/types.h>
#include <ocq_sim.h>

#define __SC	__ATOMIC_SEQ_CST

/* one step: the scheduling point, the operation, its value for the trace */
#define __ocq_step(name, expr)						\
	({								\
		ocq_sim_point(name);					\
		__typeof__(expr) __r = (expr);				\
		ocq_sim_value((long)__r);				\
		__r;							\
	})

#define __ocq_cnt(v)		(&(v)->counter)

#define atomic_read(v)							\
	__ocq_step("atomic_read", __atomic_load_n(__ocq_cnt(v), __SC))
#define atomic_read_acquire(v)						\
	__ocq_step("atomic_read_acquire",				\
		   __atomic_load_n(__ocq_cnt(v), __SC))
#define atomic_set(v, i)						\
	((void)__ocq_step("atomic_set",					\
			  (__atomic_store_n(__ocq_cnt(v), (i), __SC), (i))))
#define atomic_inc(v)							\
	((void)__ocq_step("atomic_inc",					\
			  __atomic_add_fetch(__ocq_cnt(v), 1, __SC)))
#define atomic_dec(v)							\
	((void)__ocq_step("atomic_dec",					\
			  __atomic_sub_fetch(__ocq_cnt(v), 1, __SC)))
#define atomic_or(i, v)							\
	((void)__ocq_step("atomic_or",					\
			  __atomic_or_fetch(__ocq_cnt(v), (i), __SC)))
#define atomic_andnot(i, v)						\
	((void)__ocq_step("atomic_andnot",				\
			  __atomic_and_fetch(__ocq_cnt(v), ~(i), __SC)))
#define atomic_fetch_andnot(i, v)					\
	__ocq_step("atomic_fetch_andnot",				\
		   __atomic_fetch_and(__ocq_cnt(v), ~(i), __SC))

static inline int atomic_cmpxchg(atomic_t *v, int old, int val)
{
	int cur = old;

	ocq_sim_point("atomic_cmpxchg");
	__atomic_compare_exchange_n(&v->counter, &cur, val, false, __SC, __SC);
	ocq_sim_value(cur);
	return cur;
}

static inline bool atomic_try_cmpxchg(atomic_t *v, int *old, int val)
{
	bool ok;

	ocq_sim_point("atomic_try_cmpxchg");
	ok = __atomic_compare_exchange_n(&v->counter, old, val, false, __SC,
					 __SC);
	ocq_sim_value(ok ? val : *old);
	return ok;
}

#define atomic_long_read(v)						\
	__ocq_step("atomic_long_read", __atomic_load_n(__ocq_cnt(v), __SC))
#define atomic_long_set(v, i)						\
	((void)__ocq_step("atomic_long_set",				\
			  (__atomic_store_n(__ocq_cnt(v), (i), __SC),	\
			   (long)(i))))
#define atomic_long_inc(v)						\
	((void)__ocq_step("atomic_long_inc",				\
			  __atomic_add_fetch(__ocq_cnt(v), 1, __SC)))

#endif /* _LINUX_ATOMIC_H */
