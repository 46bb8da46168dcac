/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shim of <linux/rcupdate.h>.  A read-side section is a count of readers
 * (a seq_cst increment, a release decrement); synchronize_rcu() waits,
 * with acquire loads, until the count is zero.  That waits for more than
 * RCU does (readers that began after it, too), never for less, and gives
 * ThreadSanitizer the edge from every earlier reader's unlock.
 */
#ifndef _LINUX_RCUPDATE_H
#define _LINUX_RCUPDATE_H

#include <ocq_native.h>

#define rcu_read_lock()		ocq_native_rcu_read_lock()
#define rcu_read_unlock()	ocq_native_rcu_read_unlock()
#define synchronize_rcu()	ocq_native_synchronize_rcu()

#endif /* _LINUX_RCUPDATE_H */
