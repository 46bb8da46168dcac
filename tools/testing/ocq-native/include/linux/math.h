/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Shim of <linux/math.h>: reciprocal_scale(), as the kernel defines it. */
#ifndef _LINUX_MATH_H
#define _LINUX_MATH_H

#include <linux/types.h>

static inline u32 reciprocal_scale(u32 val, u32 ep_ro)
{
	return (u32)(((u64)val * ep_ro) >> 32);
}

#endif /* _LINUX_MATH_H */
