/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Shim of <linux/export.h>. */
#ifndef _LINUX_EXPORT_H
#define _LINUX_EXPORT_H

#define EXPORT_SYMBOL(sym)
#define EXPORT_SYMBOL_GPL(sym)

#endif /* _LINUX_EXPORT_H */
