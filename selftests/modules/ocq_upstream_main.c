// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ocq_upstream_test - ib_core's own calls on ordered CQs, as a ULP file that
 * the conversion missed makes them.  This file includes <rdma/ib_ocq.h>,
 * never <rdma/ib_ocq_dropin.h>: ib_free_cq() here is ib_core's.
 *
 * A test module in the kselftest_module.h pattern: init runs call= on an
 * ordered CQ of each kind, on the fake provider, and fails the load if a
 * subtest failed.  The kinds: a CQ of its own in each mode (strict on
 * %IB_POLL_WORKQUEUE, flow on %IB_POLL_UNBOUND_WORKQUEUE, parallel on
 * %IB_POLL_SOFTIRQ), a pooled one (ib_ocq_cq_pool_get(), the defaults) and
 * an %IB_POLL_DIRECT one.  For each, once the first run armed it:
 *
 * call=free: ib_free_cq() twice.  It must free nothing: the provider's
 *	destroy_cq is not called and the CQ keeps its users; the first call of
 *	the boot warns (its WARN_ON_ONCE() on the use ocq holds), the script
 *	checks that in the kernel log.
 * call=destroy: ib_destroy_cq_user(), what ib_destroy_cq() calls, twice:
 *	-EOPNOTSUPP (its WARN_ON_ONCE() on a shared CQ, once a boot), nothing
 *	destroyed; ib_resize_cq() and rdma_set_cq_moderation(): -EOPNOTSUPP,
 *	the provider's resize_cq and modify_cq never called.
 *
 * Then the CQ must still work: %UP_COMPLETIONS completions of two QPs,
 * pushed one at a time, reach done() once each and in order (the CQ's
 * order; in flow mode each QP's), in the poll context's context; and
 * ib_ocq_free_cq() (the pooled one: ib_ocq_cq_pool_put(), then
 * ib_ocq_cq_pool_destroy()) frees it: the provider's destroy_cq runs.  The
 * script checks that ib_ocq's live and allocs counts are back where they
 * were.
 *
 * A call that destroys the CQ under ocq (ib_free_cq() before ocq held a use
 * of it) fails the test, which then leaves that ordered CQ alone: it is
 * never freed, so that nothing touches the freed CQ again, and the guest
 * lives on for the tests after it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_ocq.h>

#include "ocq_test_ctx.h"
#include "fake_provider.h"

#define UP_CQE 256
/* completions pushed after the calls, over UP_FLOWS QPs */
#define UP_COMPLETIONS 128
#define UP_FLOWS 2
/* how long to wait for the first arm and for the completions */
#define UP_WAIT_MS 20000
/* what ib_ocq_process_cq_direct() takes per call */
#define UP_DIRECT_BUDGET 16

static char *call = "free";
module_param(call, charp, 0444);
MODULE_PARM_DESC(call, "free or destroy (the calls they make: see the source)");

/**
 * struct up_kind - a kind of ordered CQ
 * @name: subtest name
 * @ctx: poll context
 * @mode: ordering mode; the pooled one's comes from the pool's defaults
 * @pooled: from ib_ocq_cq_pool_get() with NULL attr
 */
struct up_kind {
	const char *name;
	enum ib_poll_context ctx;
	enum ib_ocq_mode mode;
	bool pooled;
};

static const struct up_kind up_kinds[] = {
	{ "strict", IB_POLL_WORKQUEUE, IB_OCQ_STRICT, false },
	{ "flow", IB_POLL_UNBOUND_WORKQUEUE, IB_OCQ_FLOW, false },
	{ "parallel", IB_POLL_SOFTIRQ, IB_OCQ_PARALLEL, false },
	{ "pooled", IB_POLL_WORKQUEUE, IB_OCQ_FLOW, true },
	{ "direct", IB_POLL_DIRECT, IB_OCQ_STRICT, false },
};

struct up_cq;

/**
 * struct up_req - one completion pushed after the calls
 * @cqe: its wr_cqe
 * @uc: the CQ under test
 * @flow: its QP, 0 or 1
 * @seq: its number within the QP's completions
 * @pos: its CQ position (given under the CQ lock)
 */
struct up_req {
	struct ib_cqe cqe;
	struct up_cq *uc;
	unsigned int flow;
	u32 seq;
	u64 pos;
};

/**
 * struct up_cq - the ordered CQ under test
 * @kind: its kind
 * @cq: the CQ
 * @fcq: its fake CQ
 * @qps: the QPs the completions name (only qp_num set)
 * @reqs: the completions
 * @next_seq: per QP, the next sequence number done() expects
 * @next_pos: the next CQ position done() expects (not flow mode)
 * @delivered: done() calls (A)
 * @bad: done() calls out of order, twice, or in the wrong context (A)
 */
struct up_cq {
	const struct up_kind *kind;
	struct ib_cq *cq;
	struct fake_cq *fcq;
	struct ib_qp qps[UP_FLOWS];
	struct up_req reqs[UP_COMPLETIONS];
	u32 next_seq[UP_FLOWS];
	u64 next_pos;
	atomic_t delivered;
	atomic_t bad;
};

struct up_ktap {
	unsigned int nr;
	unsigned int failed;
};

/* the provider's resize_cq calls: ib_resize_cq() must never get there (A) */
static atomic_t up_resizes = ATOMIC_INIT(0);

static int up_resize_cq(struct ib_cq *cq, int cqe, struct ib_udata *udata)
{
	atomic_inc(&up_resizes);
	return 0;
}

/* verbs the fake provider lacks, for ib_resize_cq() */
static const struct ib_device_ops up_ops = {
	.resize_cq = up_resize_cq,
};

static void up_result(struct up_ktap *k, bool ok, const char *name,
		      const char *note)
{
	k->nr++;
	if (!ok)
		k->failed++;
	pr_info("%s %u %s%s%s\n", ok ? "ok" : "not ok", k->nr, name,
		note ? " # " : "", note ?: "");
}

static bool up_check(struct up_cq *uc, bool ok, const char *what)
{
	if (!ok)
		pr_info("# %s: check failed: %s\n", uc->kind->name, what);
	return ok;
}

/* Each QP's order; the CQ's order too, but in flow mode; the context. */
static void up_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct up_req *req = container_of(wc->wr_cqe, struct up_req, cqe);
	struct up_cq *uc = req->uc;
	bool ok;

	ok = wc->status == IB_WC_SUCCESS && cq == uc->cq &&
	     req->seq == uc->next_seq[req->flow] &&
	     ocq_test_in_ctx(uc->kind->ctx, true);
	if (uc->kind->mode != IB_OCQ_FLOW) {
		ok = ok && req->pos == uc->next_pos;
		uc->next_pos = req->pos + 1;
	}
	uc->next_seq[req->flow] = req->seq + 1;
	if (!ok && atomic_inc_return(&uc->bad) <= 3)
		pr_info("# %s: done() of QP %u seq %u pos %llu out of order or context\n",
			uc->kind->name, req->flow, req->seq, req->pos);
	atomic_inc(&uc->delivered);
}

/* %IB_OCQ_PARALLEL's unordered step: nothing to do */
static void up_process(struct ib_cq *cq, struct ib_wc *wc)
{
}

/* Wait until @uc's CQ is empty and armed: its first run went through. */
static bool up_wait_armed(struct up_cq *uc)
{
	unsigned long end = jiffies + msecs_to_jiffies(UP_WAIT_MS);
	struct fake_cq *fcq = uc->fcq;
	unsigned long flags;
	bool armed;

	for (;;) {
		spin_lock_irqsave(&fcq->lock, flags);
		armed = fcq->armed && fcq->head == fcq->tail;
		spin_unlock_irqrestore(&fcq->lock, flags);
		if (armed || time_after(jiffies, end))
			return armed;
		usleep_range(5000, 10000);
	}
}

static int up_alloc(struct up_cq *uc, struct fake_dev *fdev)
{
	const struct up_kind *kind = uc->kind;
	struct ib_ocq_attr attr = { .mode = kind->mode };
	unsigned int i;

	for (i = 0; i < UP_FLOWS; i++)
		uc->qps[i].qp_num = 0x200 + i;
	for (i = 0; i < UP_COMPLETIONS; i++) {
		uc->reqs[i].cqe.done = up_done;
		uc->reqs[i].uc = uc;
		uc->reqs[i].flow = i % UP_FLOWS;
		uc->reqs[i].seq = i / UP_FLOWS;
	}
	if (kind->mode == IB_OCQ_PARALLEL)
		attr.process = up_process;
	/* completions land at once; events from the pusher, hard or soft irq */
	fdev->sem = FAKE_PROMPT;
	fdev->rnd = 0x5eed + kind->ctx;
	fdev->ring = 0;
	if (kind->pooled)
		uc->cq = ib_ocq_cq_pool_get(&fdev->ibdev, UP_CQE, -1, kind->ctx,
					    NULL);
	else
		uc->cq = ib_ocq_alloc_cq(&fdev->ibdev, uc, UP_CQE, 0, kind->ctx,
					 &attr);
	if (IS_ERR(uc->cq)) {
		pr_info("# %s: allocation failed: %ld\n", kind->name,
			PTR_ERR(uc->cq));
		return PTR_ERR(uc->cq);
	}
	uc->fcq = to_fake_cq(uc->cq);
	if (kind->ctx != IB_POLL_DIRECT && !up_wait_armed(uc)) {
		pr_info("# %s: the first run did not arm the CQ\n", kind->name);
		return -ETIMEDOUT;
	}
	return 0;
}

/*
 * ib_free_cq() twice: it must free nothing.  Return false if it destroyed
 * the CQ (@uc->cq is gone then).
 */
static bool up_call_free(struct up_cq *uc)
{
	int objects = atomic_read(&fake_objects);
	int users = atomic_read(&uc->cq->usecnt);
	int i;

	for (i = 0; i < 2; i++) {
		ib_free_cq(uc->cq);
		if (atomic_read(&fake_objects) != objects) {
			pr_info("# %s: ib_free_cq() destroyed the CQ under ocq\n",
				uc->kind->name);
			return false;
		}
	}
	pr_info("# %s: two ib_free_cq() calls refused, %d user(s) before, %d after\n",
		uc->kind->name, users, atomic_read(&uc->cq->usecnt));
	return up_check(uc, atomic_read(&uc->cq->usecnt) == users,
			"ib_free_cq() left the users as they were");
}

/*
 * ib_destroy_cq_user() twice, ib_resize_cq(), rdma_set_cq_moderation():
 * -EOPNOTSUPP, nothing reaches the provider.  Return false if the CQ was
 * destroyed (@uc->cq is gone then).
 */
static bool up_call_destroy(struct up_cq *uc, bool *ok)
{
	int objects = atomic_read(&fake_objects);
	int resizes = atomic_read(&up_resizes);
	u64 moderations = READ_ONCE(uc->fcq->moderations);
	bool refused;
	int i, ret;

	for (i = 0; i < 2; i++) {
		ret = ib_destroy_cq_user(uc->cq, NULL);
		if (atomic_read(&fake_objects) != objects) {
			pr_info("# %s: ib_destroy_cq_user() destroyed the CQ under ocq\n",
				uc->kind->name);
			return false;
		}
		pr_info("# %s: ib_destroy_cq_user(): %d\n", uc->kind->name,
			ret);
		*ok &= up_check(uc, ret == -EOPNOTSUPP,
				"ib_destroy_cq_user() is -EOPNOTSUPP");
	}
	ret = ib_resize_cq(uc->cq, 2 * UP_CQE);
	pr_info("# %s: ib_resize_cq(): %d\n", uc->kind->name, ret);
	refused = ret == -EOPNOTSUPP && atomic_read(&up_resizes) == resizes;
	*ok &= up_check(uc, refused,
			"ib_resize_cq() is -EOPNOTSUPP, no resize_cq call");
	ret = rdma_set_cq_moderation(uc->cq, 16, 32);
	pr_info("# %s: rdma_set_cq_moderation(): %d\n", uc->kind->name, ret);
	refused = ret == -EOPNOTSUPP &&
		  READ_ONCE(uc->fcq->moderations) == moderations;
	*ok &= up_check(uc, refused,
			"rdma_set_cq_moderation() is -EOPNOTSUPP, unseen");
	return true;
}

/* Push the completions one at a time; a direct CQ is polled meanwhile. */
static bool up_stream(struct up_cq *uc)
{
	unsigned long end = jiffies + msecs_to_jiffies(UP_WAIT_MS);
	unsigned int i;

	for (i = 0; i < UP_COMPLETIONS; i++) {
		struct up_req *req = &uc->reqs[i];
		struct ib_wc wc = {
			.wr_cqe = &req->cqe,
			.status = IB_WC_SUCCESS,
			.opcode = IB_WC_RECV,
			.qp = &uc->qps[req->flow],
		};

		if (!fake_cq_push(uc->fcq, &wc, &req->pos))
			return up_check(uc, false, "no CQ overrun");
	}
	while (atomic_read(&uc->delivered) < UP_COMPLETIONS &&
	       time_before(jiffies, end)) {
		if (uc->kind->ctx != IB_POLL_DIRECT ||
		    !ib_ocq_process_cq_direct(uc->cq, UP_DIRECT_BUDGET))
			usleep_range(100, 200);
	}
	pr_info("# %s: %d of %u completions delivered after the calls\n",
		uc->kind->name, atomic_read(&uc->delivered), UP_COMPLETIONS);
	if (!up_check(uc, atomic_read(&uc->delivered) == UP_COMPLETIONS,
		      "every completion delivered"))
		return false;
	return up_check(uc, !atomic_read(&uc->bad),
			"each once, in order, in the poll context's context");
}

/* Free @uc's CQ the way ocq's API does; the provider must destroy it. */
static bool up_free(struct up_cq *uc, struct fake_dev *fdev)
{
	int objects = atomic_read(&fake_objects);

	if (uc->kind->pooled) {
		ib_ocq_cq_pool_put(uc->cq, UP_CQE);
		ib_ocq_cq_pool_destroy(&fdev->ibdev);
	} else {
		ib_ocq_free_cq(uc->cq);
	}
	uc->cq = NULL;
	return up_check(uc, atomic_read(&fake_objects) == objects - 1,
			"ocq's free destroyed the CQ");
}

/*
 * One kind: alloc, the calls, stream, free.  Return -EIO if the calls
 * destroyed the CQ: the ordered CQ is then left alone, and nothing more
 * runs.
 */
static int up_run_kind(const struct up_kind *kind, struct fake_dev *fdev,
		       struct up_ktap *k)
{
	char name[32];
	struct up_cq *uc;
	bool ok = true;
	int ret;

	snprintf(name, sizeof(name), "%s_%s", call, kind->name);
	uc = kzalloc(sizeof(*uc), GFP_KERNEL);
	if (!uc)
		return -ENOMEM;
	uc->kind = kind;
	ret = up_alloc(uc, fdev);
	if (ret && !IS_ERR(uc->cq))
		up_free(uc, fdev);
	if (ret)
		goto out;
	if (!strcmp(call, "free") ? !up_call_free(uc) :
				    !up_call_destroy(uc, &ok)) {
		up_result(k, false, name, "the call destroyed the CQ");
		/* ocq still holds it: leaked, never touched again */
		return -EIO;
	}
	ok &= up_stream(uc);
	ok &= up_free(uc, fdev);
out:
	up_result(k, !ret && ok, name, NULL);
	kfree(uc);
	return 0;
}

static int __init up_init(void)
{
	struct up_ktap k = {};
	struct fake_dev *fdev;
	unsigned int i;
	int ret = 0;

	if (strcmp(call, "free") && strcmp(call, "destroy")) {
		pr_err("call= is free or destroy\n");
		return -EINVAL;
	}
	pr_info("KTAP version 1\n");
	pr_info("# call=%s\n", call);
	fdev = fake_dev_alloc(&up_ops);
	if (!fdev)
		return -ENOMEM;
	for (i = 0; i < ARRAY_SIZE(up_kinds) && !ret; i++)
		ret = up_run_kind(&up_kinds[i], fdev, &k);
	if (!ret && atomic_read(&fake_objects))
		up_result(&k, false, "objects",
			  "the provider's objects were not all freed");
	ib_dealloc_device(&fdev->ibdev);
	pr_info("1..%u\n", k.nr);
	pr_info("# totals: pass:%u fail:%u skip:0\n", k.nr - k.failed,
		k.failed);
	return k.failed ? -EINVAL : 0;
}

static void __exit up_exit(void)
{
	pr_info("# exit\n");
}

module_init(up_init);
module_exit(up_exit);
MODULE_DESCRIPTION("ib_core's own calls on ordered CQs");
MODULE_LICENSE("Dual BSD/GPL");
