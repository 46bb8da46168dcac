// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ocq_api_test - defaults and refusals of ocq's API that a ULP author
 * meets.
 *
 * test=pool_defaults (rxe0): one pooled CQ from ib_ocq_cq_pool_get() with
 *	NULL attr on each pool context (%IB_POLL_SOFTIRQ,
 *	%IB_POLL_WORKQUEUE, %IB_POLL_UNBOUND_WORKQUEUE), and one with an
 *	explicit %IB_OCQ_FLOW on %IB_POLL_SOFTIRQ.  The module keeps them
 *	until it is unloaded and prints each CQ's id: the script reads their
 *	modes in ib_ocq's debugfs (strict on softirq, flow on the workqueues,
 *	the explicit flow kept).  Unloading puts the room back; the pool's
 *	CQs go with the device (or ib_ocq).
 * test=direct_no_cqe (fake provider): an %IB_POLL_DIRECT OCQ polled with
 *	ib_ocq_process_cq_direct() gets, in this order, a failed completion
 *	without a &ib_cqe (dropped silently, as ib_cq drops it), a successful
 *	one without (dropped, with one warning, as ib_cq warns: the script
 *	checks the kernel log for exactly that one), a successful one with a
 *	&ib_cqe (dispatched), and a second successful one without (dropped,
 *	no second warning).  Every one is polled and counted; only the one
 *	with a &ib_cqe reaches a done().
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/module.h>
#include <linux/string.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_ocq.h>

#include "fake_provider.h"

#define API_CQE 64
/* what one pooled CQ's user takes */
#define API_POOL_CQE 16

static char *test = "pool_defaults";
module_param(test, charp, 0444);
MODULE_PARM_DESC(test, "pool_defaults or direct_no_cqe");

static char *device = "rxe0";
module_param(device, charp, 0444);
MODULE_PARM_DESC(device, "pool_defaults: the device");

struct api_ktap {
	unsigned int nr;
	unsigned int failed;
};

static void api_result(struct api_ktap *k, bool ok, const char *name,
		       const char *note)
{
	k->nr++;
	if (!ok)
		k->failed++;
	pr_info("%s %u %s%s%s\n", ok ? "ok" : "not ok", k->nr, name,
		note ? " # " : "", note ?: "");
}

/* --- test=pool_defaults --- */

/**
 * struct api_pooled - a pooled CQ the module holds until it is unloaded
 * @name: what the script calls it
 * @ctx: its poll context
 * @flow: asked for with an explicit %IB_OCQ_FLOW; else NULL attr
 * @cq: the CQ, or NULL
 */
struct api_pooled {
	const char *name;
	enum ib_poll_context ctx;
	bool flow;
	struct ib_cq *cq;
};

static struct api_pooled api_pooled[] = {
	{ "softirq", IB_POLL_SOFTIRQ, false, NULL },
	{ "workqueue", IB_POLL_WORKQUEUE, false, NULL },
	{ "unbound", IB_POLL_UNBOUND_WORKQUEUE, false, NULL },
	{ "softirq_flow", IB_POLL_SOFTIRQ, true, NULL },
};

static struct ib_device *api_dev;

static void api_pool_put(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(api_pooled); i++) {
		if (api_pooled[i].cq)
			ib_ocq_cq_pool_put(api_pooled[i].cq, API_POOL_CQE);
		api_pooled[i].cq = NULL;
	}
	if (api_dev)
		ib_device_put(api_dev);
	api_dev = NULL;
}

/* Take room on a pooled CQ of each kind; print what the script looks up. */
static int api_pool_defaults(struct api_ktap *k)
{
	static const struct ib_ocq_attr flow = { .mode = IB_OCQ_FLOW };
	unsigned int i;

	api_dev = ib_device_get_by_name(device, RDMA_DRIVER_UNKNOWN);
	if (!api_dev) {
		api_result(k, false, "pool_defaults", "no such device");
		return -ENODEV;
	}
	for (i = 0; i < ARRAY_SIZE(api_pooled); i++) {
		struct api_pooled *p = &api_pooled[i];
		struct ib_cq *cq;

		cq = ib_ocq_cq_pool_get(api_dev, API_POOL_CQE, 0, p->ctx,
					p->flow ? &flow : NULL);
		api_result(k, !IS_ERR(cq), p->name,
			   IS_ERR(cq) ? "ib_ocq_cq_pool_get() failed" : NULL);
		if (IS_ERR(cq)) {
			pr_info("# %s: %ld\n", p->name, PTR_ERR(cq));
			api_pool_put();
			return PTR_ERR(cq);
		}
		p->cq = cq;
		pr_info("# pooled %s cq_id %u\n", p->name, cq->res.id);
	}
	return 0;
}

/* --- test=direct_no_cqe --- */

static atomic_t api_dones = ATOMIC_INIT(0);

static void api_done(struct ib_cq *cq, struct ib_wc *wc)
{
	atomic_inc(&api_dones);
}

static void api_push(struct fake_cq *fcq, struct ib_cqe *cqe,
		     enum ib_wc_status status, atomic_t *bad)
{
	struct ib_wc wc = {
		.wr_cqe = cqe,
		.status = status,
		.opcode = IB_WC_RECV,
	};
	u64 pos;

	if (!fake_cq_push(fcq, &wc, &pos))
		atomic_inc(bad);
}

static int api_direct_no_cqe(struct api_ktap *k)
{
	struct ib_cqe cqe = { .done = api_done };
	struct ib_ocq_stats s;
	struct fake_dev *fdev;
	atomic_t bad = ATOMIC_INIT(0);
	struct ib_cq *cq;
	int n = 0, i;

	fdev = fake_dev_alloc(NULL);
	if (!fdev)
		return -ENOMEM;
	fdev->sem = FAKE_PROMPT;
	cq = ib_ocq_alloc_cq(&fdev->ibdev, NULL, API_CQE, 0, IB_POLL_DIRECT,
			     NULL);
	if (IS_ERR(cq)) {
		api_result(k, false, "direct_no_cqe", "allocation failed");
		ib_dealloc_device(&fdev->ibdev);
		return PTR_ERR(cq);
	}
	api_push(to_fake_cq(cq), NULL, IB_WC_WR_FLUSH_ERR, &bad);
	api_push(to_fake_cq(cq), NULL, IB_WC_SUCCESS, &bad);
	api_push(to_fake_cq(cq), &cqe, IB_WC_SUCCESS, &bad);
	api_push(to_fake_cq(cq), NULL, IB_WC_SUCCESS, &bad);
	/* one at a time: each a call of its own */
	for (i = 0; i < 8 && n < 4; i++)
		n += ib_ocq_process_cq_direct(cq, 1);
	ib_ocq_get_stats(ib_cq_to_ocq(cq), &s);
	pr_info("# direct_no_cqe: %d polled, %llu counted, %d done() calls\n",
		n, s.completions, atomic_read(&api_dones));
	api_result(k,
		   n == 4 && s.completions == 4 &&
			   atomic_read(&api_dones) == 1 && !atomic_read(&bad),
		   "direct_no_cqe", NULL);
	ib_ocq_free_cq(cq);
	if (atomic_read(&fake_objects))
		api_result(k, false, "objects",
			   "the provider's objects were not all freed");
	ib_dealloc_device(&fdev->ibdev);
	return 0;
}

static int __init api_init(void)
{
	struct api_ktap k = {};
	int ret;

	pr_info("KTAP version 1\n");
	pr_info("# test=%s\n", test);
	if (!strcmp(test, "pool_defaults")) {
		ret = api_pool_defaults(&k);
	} else if (!strcmp(test, "direct_no_cqe")) {
		ret = api_direct_no_cqe(&k);
	} else {
		pr_err("test= is pool_defaults or direct_no_cqe\n");
		return -EINVAL;
	}
	pr_info("1..%u\n", k.nr);
	pr_info("# totals: pass:%u fail:%u skip:0\n", k.nr - k.failed,
		k.failed);
	return k.failed || !k.nr ? -EINVAL : ret;
}

static void __exit api_exit(void)
{
	api_pool_put();
	pr_info("# exit\n");
}

module_init(api_init);
module_exit(api_exit);
MODULE_DESCRIPTION("ocq API defaults and refusals a ULP meets");
MODULE_LICENSE("Dual BSD/GPL");
