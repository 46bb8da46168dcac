/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Shim of <linux/log2.h>. */
#ifndef _LINUX_LOG2_H
#define _LINUX_LOG2_H

static inline unsigned long roundup_pow_of_two(unsigned long n)
{
	return n <= 1 ? 1 : 1UL << (64 - __builtin_clzl(n - 1));
}

static inline unsigned long rounddown_pow_of_two(unsigned long n)
{
	return 1UL << (63 - __builtin_clzl(n));
}

#endif /* _LINUX_LOG2_H */
