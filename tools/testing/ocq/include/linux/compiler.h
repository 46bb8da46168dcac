/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shim of <linux/compiler.h>.  READ_ONCE()/WRITE_ONCE() are NOT scheduling
 * points: the engine uses them only for counters owned by one run and for
 * a slot field published later by smp_store_release(), which is one.
 */
#ifndef _LINUX_COMPILER_H
#define _LINUX_COMPILER_H

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

#define READ_ONCE(x)	(*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, val)						\
	do {								\
		*(volatile __typeof__(x) *)&(x) = (val);		\
	} while (0)

#endif /* _LINUX_COMPILER_H */
