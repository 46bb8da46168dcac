/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Shim of <linux/hash.h>: the kernel's generic hash_32(). */
#ifndef _LINUX_HASH_H
#define _LINUX_HASH_H

#include <linux/types.h>

#define GOLDEN_RATIO_32 0x61C88647

static inline u32 hash_32(u32 val, unsigned int bits)
{
	return (u32)(val * GOLDEN_RATIO_32) >> (32 - bits);
}

#endif /* _LINUX_HASH_H */
