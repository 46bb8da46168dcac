/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Shim of <linux/kernel.h>. */
#ifndef _LINUX_KERNEL_H
#define _LINUX_KERNEL_H

#include <errno.h>
#include <string.h>
#include <asm/processor.h>
#include <linux/compiler.h>
#include <linux/minmax.h>
#include <linux/types.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#endif /* _LINUX_KERNEL_H */
