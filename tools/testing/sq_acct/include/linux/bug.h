/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Userspace shim: WARN_ON_ONCE() counts into sqt_warnings, which tests check. */
#ifndef _SHIM_LINUX_BUG_H
#define _SHIM_LINUX_BUG_H

#include <stdio.h>

extern int sqt_warnings;

#define WARN_ON_ONCE(cond) ({						\
	int __c = !!(cond);						\
	if (__c) {							\
		sqt_warnings++;						\
		fprintf(stderr, "WARNING: %s:%d: %s\n", __FILE__,	\
			__LINE__, #cond);				\
	}								\
	__c;								\
})

#endif
