/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Shim of <linux/log2.h>. */
#ifndef _LINUX_LOG2_H
#define _LINUX_LOG2_H

static inline unsigned long roundup_pow_of_two(unsigned long n)
{
	return n <= 1 ? 1 : 1UL << (64 - __builtin_clzl(n - 1));
}

/* the kernel's order_base_2(): log2 of @n rounded up */
static inline int order_base_2(unsigned long n)
{
	return n <= 1 ? 0 : 64 - __builtin_clzl(n - 1);
}

#endif /* _LINUX_LOG2_H */
