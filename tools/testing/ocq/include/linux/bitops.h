/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Shim of <linux/bitops.h>. */
#ifndef _LINUX_BITOPS_H
#define _LINUX_BITOPS_H

#include <linux/types.h>

#define BIT(nr)		(1UL << (nr))
#define BIT_ULL(nr)	(1ULL << (nr))
/* <linux/bits.h>, which the kernel's <linux/bitops.h> includes */
#define GENMASK(h, l)	(((~0UL) << (l)) & (~0UL >> (8 * sizeof(long) - 1 - (h))))

static inline unsigned long __ffs64(u64 word)
{
	return __builtin_ctzll(word);
}

#endif /* _LINUX_BITOPS_H */
