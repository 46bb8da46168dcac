/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Shim of <linux/minmax.h>. */
#ifndef _LINUX_MINMAX_H
#define _LINUX_MINMAX_H

#define min(x, y)							\
	({								\
		__typeof__(x) __x = (x);				\
		__typeof__(y) __y = (y);				\
		__x < __y ? __x : __y;					\
	})
#define max(x, y)							\
	({								\
		__typeof__(x) __x = (x);				\
		__typeof__(y) __y = (y);				\
		__x > __y ? __x : __y;					\
	})
#define clamp_t(type, val, lo, hi)					\
	({								\
		type __v = (val), __l = (lo), __h = (hi);		\
		__v < __l ? __l : __v > __h ? __h : __v;		\
	})

#endif /* _LINUX_MINMAX_H */
