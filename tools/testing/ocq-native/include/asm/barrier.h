/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shim of <asm/barrier.h> on real threads, with the kernel's orderings:
 * smp_mb() is a sequentially consistent fence, smp_load_acquire() and
 * smp_store_release() are C11 acquire loads and release stores (which
 * ThreadSanitizer understands as synchronisation).  ThreadSanitizer does
 * not model fences; the engine's smp_mb() pairs order only atomic
 * accesses (store-buffering on @stalled against a ring index), so no
 * happens-before edge the engine's data needs goes through a fence.
 */
#ifndef _ASM_BARRIER_H
#define _ASM_BARRIER_H

#include <ocq_native.h>

/* counted by make cost: on x86 the kernel's smp_mb() is a locked add */
#define smp_mb()							\
	(ocq_native_count_mb(), __atomic_thread_fence(__ATOMIC_SEQ_CST))
#define smp_rmb()		__atomic_thread_fence(__ATOMIC_ACQUIRE)
#define smp_wmb()		__atomic_thread_fence(__ATOMIC_RELEASE)
/*
 * Fences here (see above); not counted: on x86 they are compiler barriers,
 * the locked RMW they go with being the barrier
 */
#define smp_mb__before_atomic()	__atomic_thread_fence(__ATOMIC_SEQ_CST)
#define smp_mb__after_atomic()	__atomic_thread_fence(__ATOMIC_SEQ_CST)

#define smp_load_acquire(p)	__atomic_load_n((p), __ATOMIC_ACQUIRE)
#define smp_store_release(p, v)						\
	do {								\
		__typeof__(*(p)) __sr_v = (v);				\
		ocq_native_count_write(p);				\
		__atomic_store_n((p), __sr_v, __ATOMIC_RELEASE);	\
	} while (0)

#endif /* _ASM_BARRIER_H */
