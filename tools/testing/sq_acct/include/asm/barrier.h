/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Userspace shim: kernel barriers as C11 atomics with the same ordering. */
#ifndef _SHIM_ASM_BARRIER_H
#define _SHIM_ASM_BARRIER_H

#define smp_load_acquire(p)		__atomic_load_n((p), __ATOMIC_ACQUIRE)
#define smp_store_release(p, v)		__atomic_store_n((p), (v), __ATOMIC_RELEASE)

#endif
