/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef _SHIM_LINUX_LOG2_H
#define _SHIM_LINUX_LOG2_H

#include <linux/types.h>

static inline unsigned long roundup_pow_of_two(unsigned long n)
{
	return n <= 1 ? 1 : 1UL << (64 - __builtin_clzl(n - 1));
}

#endif
