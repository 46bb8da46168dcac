/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Shim of <linux/sizes.h>: the sizes the project's headers use. */
#ifndef _LINUX_SIZES_H
#define _LINUX_SIZES_H

#define SZ_1M	0x00100000

#endif /* _LINUX_SIZES_H */
