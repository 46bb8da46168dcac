/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Shim of <linux/bug.h>: a warning fails the run (ocq_native_warn()). */
#ifndef _LINUX_BUG_H
#define _LINUX_BUG_H

#include <ocq_native.h>

#define WARN_ON(cond)							\
	({								\
		int __ret = !!(cond);					\
		if (__ret)						\
			ocq_native_warn(__FILE__, __LINE__, #cond);	\
		__ret;							\
	})
#define WARN_ON_ONCE(cond)	WARN_ON(cond)

#endif /* _LINUX_BUG_H */
