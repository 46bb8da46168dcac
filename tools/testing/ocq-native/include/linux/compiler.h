/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shim of <linux/compiler.h>.  READ_ONCE()/WRITE_ONCE() are relaxed atomic
 * loads and stores: the kernel's memory model (and KCSAN) treats a marked
 * access as never racing, so ThreadSanitizer must too.  The engine's
 * counters are written by their owner with WRITE_ONCE() and read by
 * ocq_engine_stats() from anywhere with READ_ONCE().
 */
#ifndef _LINUX_COMPILER_H
#define _LINUX_COMPILER_H

#include <ocq_native.h>

#define fallthrough __attribute__((__fallthrough__))
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

#ifdef OCQ_NATIVE_VOLATILE_ONCE
/*
 * The model checker's volatile accesses, to show the artefact: TSan then
 * reports ocq_engine_stats() against every counter's owner.
 */
#define READ_ONCE(x)	(*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, val)						\
	do {								\
		*(volatile __typeof__(x) *)&(x) = (val);		\
	} while (0)
#else
#define READ_ONCE(x)							\
	({								\
		__typeof__(x) __ro_v;					\
		__atomic_load(&(x), &__ro_v, __ATOMIC_RELAXED);		\
		__ro_v;							\
	})
#define WRITE_ONCE(x, val)						\
	do {								\
		__typeof__(x) __wo_v = (val);				\
		ocq_native_count_write(&(x));				\
		__atomic_store(&(x), &__wo_v, __ATOMIC_RELAXED);	\
	} while (0)
#endif

#endif /* _LINUX_COMPILER_H */
