/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Userspace shim: system headers include <linux/limits.h> too, so chain to it. */
#ifndef _SHIM_LINUX_LIMITS_H
#define _SHIM_LINUX_LIMITS_H

#include_next <linux/limits.h>

#ifndef INT_MAX
#define INT_MAX __INT_MAX__
#endif

#endif
