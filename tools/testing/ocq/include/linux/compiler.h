/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shim of <linux/compiler.h>.  READ_ONCE()/WRITE_ONCE() are relaxed
 * accesses of the weak memory model (mm.cpp), so a READ_ONCE() may return
 * a stale value; they are NOT scheduling points (the engine uses them for
 * counters and for a slot field published later by smp_store_release(),
 * which is one).
 */
#ifndef _LINUX_COMPILER_H
#define _LINUX_COMPILER_H

#include <ocq_sim.h>

#define fallthrough __attribute__((__fallthrough__))
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

#define READ_ONCE(x)							\
	((__typeof__(x))ocq_mm_load(&(x), sizeof(x), OCQ_MM_RELAXED,	\
				    "READ_ONCE"))
#define WRITE_ONCE(x, val)						\
	do {								\
		ocq_mm_store(&(x), sizeof(x), (unsigned long)(val),	\
			     OCQ_MM_RELAXED);				\
	} while (0)

#endif /* _LINUX_COMPILER_H */
