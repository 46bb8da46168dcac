/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shim of <linux/rcupdate.h>.  A read-side section is a count of readers;
 * synchronize_rcu() blocks its context until no reader is left, which is
 * what the engine relies on (every reader that began before it ended).
 */
#ifndef _LINUX_RCUPDATE_H
#define _LINUX_RCUPDATE_H

#include <ocq_sim.h>

#define rcu_read_lock()		ocq_sim_rcu_read_lock()
#define rcu_read_unlock()	ocq_sim_rcu_read_unlock()
#define synchronize_rcu()	ocq_sim_synchronize_rcu()

#endif /* _LINUX_RCUPDATE_H */
