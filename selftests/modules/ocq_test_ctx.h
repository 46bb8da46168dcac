/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The poll contexts as the test modules take them (poll_ctx=) and check
 * them: where a done() of each must run.
 */
#ifndef _OCQ_TEST_CTX_H
#define _OCQ_TEST_CTX_H

#include <linux/cpumask.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <rdma/ib_verbs.h>

/* The poll context named @name, or -EINVAL. */
static inline int ocq_test_poll_ctx(const char *name)
{
	static const char *const names[] = {
		[IB_POLL_SOFTIRQ] = "softirq",
		[IB_POLL_WORKQUEUE] = "workqueue",
		[IB_POLL_UNBOUND_WORKQUEUE] = "unbound",
		[IB_POLL_DIRECT] = "direct",
	};

	return match_string(names, ARRAY_SIZE(names), name);
}

/*
 * Whether the running done() is where @ctx promises: a workqueue worker
 * (unbound: one not bound to a CPU), the softirq, or (direct) a task the
 * test lets poll the CQ, @direct_caller.
 */
static inline bool ocq_test_in_ctx(enum ib_poll_context ctx, bool direct_caller)
{
	bool worker = in_task() && (current->flags & PF_WQ_WORKER);

	switch (ctx) {
	case IB_POLL_SOFTIRQ:
		return in_serving_softirq();
	case IB_POLL_WORKQUEUE:
		return worker;
	case IB_POLL_UNBOUND_WORKQUEUE:
		return worker &&
		       (current->nr_cpus_allowed > 1 || num_online_cpus() == 1);
	case IB_POLL_DIRECT:
		return in_task() && direct_caller;
	}
	return false;
}

#endif /* _OCQ_TEST_CTX_H */
