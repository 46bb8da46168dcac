/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shim of <linux/atomic.h>.  Every operation is one step of the model: a
 * scheduling point, then the operation, with no other context running in
 * between.  The operation goes through the weak memory model (mm.cpp) with
 * the LKMM's ordering: atomic_read()/atomic_set() and the void RMWs
 * (atomic_inc(), atomic_or(), ...) are relaxed, atomic_read_acquire() is
 * an acquire, the value-returning RMWs and a successful cmpxchg are fully
 * ordered.  Cases without weak memory run every access sequentially
 * consistent.
 */
#ifndef _LINUX_ATOMIC_H
#define _LINUX_ATOMIC_H

#include <asm/barrier.h>
#include <linux/compiler.h>
#include <linux/types.h>
#include <ocq_sim.h>

/* one step: the scheduling point, the operation, its value for the trace */
#define __ocq_step(name, expr)						\
	({								\
		ocq_sim_point(name);					\
		__typeof__(expr) __r = (expr);				\
		ocq_sim_value((long)__r);				\
		__r;							\
	})

#define __ocq_cnt(v)		(&(v)->counter)
#define __ocq_sz(v)		((int)sizeof((v)->counter))

#define __ocq_load(name, v, order)					\
	((__typeof__((v)->counter))ocq_mm_load(__ocq_cnt(v), __ocq_sz(v), \
					       (order), name))
#define __ocq_store(v, i)						\
	ocq_mm_store(__ocq_cnt(v), __ocq_sz(v), (unsigned long)(i),	\
		     OCQ_MM_RELAXED)
#define __ocq_rmw(v, op, arg, order)					\
	((__typeof__((v)->counter))ocq_mm_rmw(__ocq_cnt(v), __ocq_sz(v), \
					      (op), (long)(arg), (order)))

#define atomic_read(v)							\
	__ocq_step("atomic_read", __ocq_load("atomic_read", v, OCQ_MM_RELAXED))
#define atomic_read_acquire(v)						\
	__ocq_step("atomic_read_acquire",				\
		   __ocq_load("atomic_read_acquire", v, OCQ_MM_ACQUIRE))
#define atomic_set(v, i)						\
	((void)__ocq_step("atomic_set", (__ocq_store(v, i), (i))))
#define atomic_inc(v)							\
	((void)__ocq_step("atomic_inc",					\
			  __ocq_rmw(v, OCQ_MM_ADD, 1, OCQ_MM_RELAXED)))
#define atomic_dec(v)							\
	((void)__ocq_step("atomic_dec",					\
			  __ocq_rmw(v, OCQ_MM_ADD, -1, OCQ_MM_RELAXED)))
#define atomic_or(i, v)							\
	((void)__ocq_step("atomic_or",					\
			  __ocq_rmw(v, OCQ_MM_OR, (i), OCQ_MM_RELAXED)))
#define atomic_andnot(i, v)						\
	((void)__ocq_step("atomic_andnot",				\
			  __ocq_rmw(v, OCQ_MM_AND, ~(i), OCQ_MM_RELAXED)))
#define atomic_fetch_andnot(i, v)					\
	__ocq_step("atomic_fetch_andnot",				\
		   __ocq_rmw(v, OCQ_MM_AND, ~(i), OCQ_MM_FULL))
#define atomic_fetch_or(i, v)						\
	__ocq_step("atomic_fetch_or",					\
		   __ocq_rmw(v, OCQ_MM_OR, (i), OCQ_MM_FULL))
#define atomic_fetch_add(i, v)						\
	__ocq_step("atomic_fetch_add",					\
		   __ocq_rmw(v, OCQ_MM_ADD, (i), OCQ_MM_FULL))
#define atomic_inc_return(v)	(atomic_fetch_add(1, v) + 1)
#define atomic_dec_return(v)	(atomic_fetch_add(-1, v) - 1)
#define atomic_xchg(v, i)						\
	__ocq_step("atomic_xchg",					\
		   __ocq_rmw(v, OCQ_MM_XCHG, (i), OCQ_MM_FULL))

static inline int atomic_cmpxchg(atomic_t *v, int old, int val)
{
	unsigned long cur = (unsigned int)old;

	ocq_sim_point("atomic_cmpxchg");
	ocq_mm_cmpxchg(&v->counter, 4, &cur, (unsigned int)val, OCQ_MM_FULL);
	ocq_sim_value((int)cur);
	return (int)cur;
}

static inline bool atomic_try_cmpxchg(atomic_t *v, int *old, int val)
{
	unsigned long cur = (unsigned int)*old;
	bool ok;

	ocq_sim_point("atomic_try_cmpxchg");
	ok = ocq_mm_cmpxchg(&v->counter, 4, &cur, (unsigned int)val,
			    OCQ_MM_FULL);
	if (!ok)
		*old = (int)cur;
	ocq_sim_value(ok ? val : *old);
	return ok;
}

/*
 * Relaxed variants the engine does not use: mutants (mutants.sh) weaken a
 * fully ordered RMW with them.
 */
#define atomic_fetch_andnot_relaxed(i, v)				\
	__ocq_step("atomic_fetch_andnot_relaxed",			\
		   __ocq_rmw(v, OCQ_MM_AND, ~(i), OCQ_MM_RELAXED))
#define atomic_fetch_or_relaxed(i, v)					\
	__ocq_step("atomic_fetch_or_relaxed",				\
		   __ocq_rmw(v, OCQ_MM_OR, (i), OCQ_MM_RELAXED))

#define atomic_xchg_relaxed(v, i)					\
	__ocq_step("atomic_xchg_relaxed",				\
		   __ocq_rmw(v, OCQ_MM_XCHG, (i), OCQ_MM_RELAXED))

static inline int atomic_cmpxchg_relaxed(atomic_t *v, int old, int val)
{
	unsigned long cur = (unsigned int)old;

	ocq_sim_point("atomic_cmpxchg_relaxed");
	ocq_mm_cmpxchg(&v->counter, 4, &cur, (unsigned int)val,
		       OCQ_MM_RELAXED);
	ocq_sim_value((int)cur);
	return (int)cur;
}

static inline bool atomic_try_cmpxchg_relaxed(atomic_t *v, int *old, int val)
{
	unsigned long cur = (unsigned int)*old;
	bool ok;

	ocq_sim_point("atomic_try_cmpxchg_relaxed");
	ok = ocq_mm_cmpxchg(&v->counter, 4, &cur, (unsigned int)val,
			    OCQ_MM_RELAXED);
	if (!ok)
		*old = (int)cur;
	ocq_sim_value(ok ? val : *old);
	return ok;
}

#define atomic_long_read(v)						\
	__ocq_step("atomic_long_read",					\
		   __ocq_load("atomic_long_read", v, OCQ_MM_RELAXED))
#define atomic_long_set(v, i)						\
	((void)__ocq_step("atomic_long_set",				\
			  (__ocq_store(v, i), (long)(i))))
#define atomic_long_inc(v)						\
	((void)__ocq_step("atomic_long_inc",				\
			  __ocq_rmw(v, OCQ_MM_ADD, 1, OCQ_MM_RELAXED)))

#endif /* _LINUX_ATOMIC_H */
