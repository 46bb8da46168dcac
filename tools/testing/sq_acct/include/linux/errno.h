/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Userspace shim: the system's uapi errno values are the kernel's. */
#ifndef _SHIM_LINUX_ERRNO_H
#define _SHIM_LINUX_ERRNO_H

#include <asm/errno.h>

#endif
