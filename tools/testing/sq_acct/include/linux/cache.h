/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef _SHIM_LINUX_CACHE_H
#define _SHIM_LINUX_CACHE_H

#define ____cacheline_aligned_in_smp __attribute__((__aligned__(64)))

#endif
