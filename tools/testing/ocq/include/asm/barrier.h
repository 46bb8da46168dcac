/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shim of <asm/barrier.h>.  The barriers are fences of the weak memory
 * model (mm.cpp), scheduling points only in the races/ cases
 * (CaseSpec::races): smp_mb() and
 * smp_mb__{before,after}_atomic() full fences, smp_rmb() an acquire fence,
 * smp_wmb() a release fence.  smp_load_acquire() and smp_store_release()
 * access shared memory, so they are scheduling points.
 * Documentation/model-checker.rst describes the model.
 */
#ifndef _ASM_BARRIER_H
#define _ASM_BARRIER_H

#include <ocq_sim.h>

#define smp_mb()		ocq_mm_fence(OCQ_MM_FULL)
#define smp_rmb()		ocq_mm_fence(OCQ_MM_ACQUIRE)
#define smp_wmb()		ocq_mm_fence(OCQ_MM_RELEASE)
#define smp_mb__before_atomic()	smp_mb()
#define smp_mb__after_atomic()	smp_mb()

#define smp_load_acquire(p)						\
	({								\
		__typeof__(*(p)) __v;					\
		ocq_sim_point("smp_load_acquire");			\
		__v = (__typeof__(*(p)))ocq_mm_load((p), sizeof(*(p)),	\
						    OCQ_MM_ACQUIRE,	\
						    "smp_load_acquire");	\
		ocq_sim_value((long)__v);				\
		__v;							\
	})

#define smp_store_release(p, v)						\
	do {								\
		__typeof__(*(p)) __v = (v);				\
		ocq_sim_point("smp_store_release");			\
		ocq_mm_store((p), sizeof(*(p)), (unsigned long)__v,	\
			     OCQ_MM_RELEASE);				\
		ocq_sim_value((long)__v);				\
	} while (0)

#endif /* _ASM_BARRIER_H */
