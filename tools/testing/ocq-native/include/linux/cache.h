/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Shim of <linux/cache.h>. */
#ifndef _LINUX_CACHE_H
#define _LINUX_CACHE_H

#define SMP_CACHE_BYTES 64
#define ____cacheline_aligned_in_smp __attribute__((__aligned__(SMP_CACHE_BYTES)))

#endif /* _LINUX_CACHE_H */
