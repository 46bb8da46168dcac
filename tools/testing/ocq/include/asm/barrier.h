/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shim of <asm/barrier.h>.  The model is sequentially consistent, so the
 * barriers order nothing that is not ordered already: they compile to a
 * full fence and are not scheduling points.  smp_load_acquire() and
 * smp_store_release() access shared memory, so they are.
 * Documentation/model-checker.rst argues each barrier of the engine.
 */
#ifndef _ASM_BARRIER_H
#define _ASM_BARRIER_H

#include <ocq_sim.h>

#define smp_mb()		__atomic_thread_fence(__ATOMIC_SEQ_CST)
#define smp_rmb()		smp_mb()
#define smp_wmb()		smp_mb()
#define smp_mb__before_atomic()	smp_mb()
#define smp_mb__after_atomic()	smp_mb()

#define smp_load_acquire(p)						\
	({								\
		__typeof__(*(p)) __v;					\
		ocq_sim_point("smp_load_acquire");			\
		__v = __atomic_load_n((p), __ATOMIC_SEQ_CST);		\
		ocq_sim_value((long)__v);				\
		__v;							\
	})

#define smp_store_release(p, v)						\
	do {								\
		__typeof__(*(p)) __v = (v);				\
		ocq_sim_point("smp_store_release");			\
		__atomic_store_n((p), __v, __ATOMIC_SEQ_CST);		\
		ocq_sim_value((long)__v);				\
	} while (0)

#endif /* _ASM_BARRIER_H */
