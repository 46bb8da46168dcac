// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fake_drain - ocq_test_fake's fake_drain_paused (ib_drain_qp() on a paused
 * or postponed OCQ) and fake_bad_attr (every -EINVAL, none with a warning).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/hash.h>
#include <linux/jiffies.h>
#include <linux/math.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/spinlock.h>
#include <rdma/ib_ocq.h>
#include <rdma/ib_verbs.h>

#include "ocq_test_compat.h"
#include "fake.h"

/* --- fake_drain_paused: ib_drain_qp() on a paused or postponed OCQ --- */

#define FAKE_DRAIN_QPS 2
/* completions of each QP, half delivered before the pause, half behind it */
#define FAKE_DRAIN_REQS 32
/*
 * The lease: a pause or postponed arm nobody ends lasts this to twice this.
 * Long enough that it is still on when the first drain begins.
 */
#define FAKE_DRAIN_PAUSE_MS 500
/*
 * Every ib_drain_qp() of a case returns within this: each of its two
 * drains (send, then receive) may wait for a whole lease of up to twice
 * pause_ms, and TCG is slow.
 */
#define FAKE_DRAIN_BOUND_MS (2 * 2 * FAKE_DRAIN_PAUSE_MS + 2000)
/* a drain that waited this long is reported as hung, and given up */
#define FAKE_DRAIN_GIVE_UP_MS 10000
/*
 * Keyed cases: how long the first done() behind a drain waits for the
 * drain's completion, which must not come meanwhile (it would overtake).
 */
#define FAKE_DRAIN_OVERTAKE_MS 300

struct fake_drain;

/**
 * struct fake_dqp - a fake QP that ib_drain_qp() can drain
 * @h: the case it belongs to
 * @f: its flow: @f.qp is the QP, with the device and both CQs set
 * @reqs: its completions, in sequence
 * @marker: the drain's own work request: a flush behind everything else
 * @drained: the marker's done() ran
 * @next_seq: the sequence number done() expects (D)
 * @dones: done() calls of @reqs (A)
 * @markers: markers pushed, one per drain (test)
 * @marked: the marker's done() calls (A)
 * @given_up: a drain timed out; the marker may still come (D, then test)
 */
struct fake_dqp {
	struct fake_drain *h;
	struct fake_flow f;
	struct fake_req reqs[FAKE_DRAIN_REQS];
	struct fake_req marker;
	struct completion drained;
	u32 next_seq;
	atomic_t dones;
	unsigned int markers;
	atomic_t marked;
	bool given_up;
};

/**
 * struct fake_drain - one case of fake_drain_paused
 * @ocq: the OCQ
 * @fcq: its fake CQ
 * @qps: the QPs sharing it
 * @keyed: a flow_key sends the first half of each QP's completions to one
 *	domain and the second half to another, by request (wr_cqe)
 * @keys: those two flow keys, in different domains
 * @failures: failed checks in done() and process()
 */
struct fake_drain {
	struct ib_ocq *ocq;
	struct fake_cq *fcq;
	struct fake_dqp qps[FAKE_DRAIN_QPS];
	bool keyed;
	u32 keys[2];
	atomic_t failures;
};

/* A failed check of @d's: @what. */
static void fake_drain_fail(struct fake_dqp *d, const char *what)
{
	atomic_inc(&d->h->failures);
	pr_info("# drain: qp %#x: %s\n", d->f.qp.qp_num, what);
}

/* The same, with the number it is about: a seq, a count, ms. */
static void fake_drain_fail_at(struct fake_dqp *d, const char *what, u32 n)
{
	atomic_inc(&d->h->failures);
	pr_info("# drain: qp %#x: %s (%u)\n", d->f.qp.qp_num, what, n);
}

static void fake_drain_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct fake_req *req = container_of(wc->wr_cqe, struct fake_req, cqe);
	struct fake_dqp *d = container_of(req->flow, struct fake_dqp, f);

	if (req->seq != d->next_seq || wc->status != IB_WC_SUCCESS)
		fake_drain_fail_at(d, "out of order or failed: seq", req->seq);
	d->next_seq = req->seq + 1;
	/*
	 * Keyed: the first completion behind the drain holds its domain a
	 * while, so that a flush sent to the other, idle domain would be
	 * dispatched meanwhile and overtake it.
	 */
	if (d->h->keyed && req->seq == FAKE_DRAIN_REQS / 2) {
		unsigned long end =
			jiffies + msecs_to_jiffies(FAKE_DRAIN_OVERTAKE_MS);

		while (!atomic_read(&d->marked) && time_before(jiffies, end))
			usleep_range(100, 200);
	}
	atomic_inc(&d->dones);
}

/*
 * The keyed cases' flow_key, by request, found through wr_cqe as a ULP
 * keys by its own request.  Asked of a drain's flush, it would send the
 * flush (its marker's sequence number is 0) to the first half's domain,
 * idle while the second half waits in the other.
 */
static u32 fake_drain_key(struct ib_cq *cq, const struct ib_wc *wc)
{
	struct fake_req *req = container_of(wc->wr_cqe, struct fake_req, cqe);
	struct fake_dqp *d = container_of(req->flow, struct fake_dqp, f);
	struct fake_drain *h = ib_ocq_private(cq);

	if (req == &d->marker)
		fake_drain_fail(d, "flow_key() of the drain's completion");
	return h->keys[req->seq >= FAKE_DRAIN_REQS / 2];
}

/* The drain's completion: every earlier one of its QP must have come. */
static void fake_drain_marker_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct fake_req *req = container_of(wc->wr_cqe, struct fake_req, cqe);
	struct fake_dqp *d = container_of(req->flow, struct fake_dqp, f);
	u32 n = atomic_read(&d->dones);

	/* the QP's completions are all pushed before its first drain */
	if (n != FAKE_DRAIN_REQS)
		fake_drain_fail_at(d, "drain before its completions: dones", n);
	atomic_inc(&d->marked);
	complete(&d->drained);
}

/* A drain's flush is no request of the ULP: process() must not see it. */
static void fake_drain_process(struct ib_cq *cq, struct ib_wc *wc)
{
	struct fake_req *req = container_of(wc->wr_cqe, struct fake_req, cqe);
	struct fake_dqp *d = container_of(req->flow, struct fake_dqp, f);

	if (req == &d->marker)
		fake_drain_fail(d, "process() of the drain's completion");
}

/*
 * The device's drain_sq and drain_rq, which ib_drain_qp() calls instead of
 * its own: what __ib_drain_sq() does, on a QP whose work is all in the CQ
 * already.  The QP's flush completion goes in behind it, and the drain
 * waits for that completion's done(); as ib_core's, it waits without
 * bound for a CQ that is processed, but gives up on one that hangs.
 */
static void fake_drain_wq(struct ib_qp *qp)
{
	unsigned long give_up = msecs_to_jiffies(FAKE_DRAIN_GIVE_UP_MS);
	struct fake_dqp *d = qp->qp_context;
	struct ib_wc wc = {
		.wr_cqe = &d->marker.cqe,
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_SEND,
		.qp = qp,
	};

	/* only fake_drain_init() makes QPs that can be drained */
	if (WARN_ON_ONCE(!d) || d->given_up)
		return;
	reinit_completion(&d->drained);
	if (!fake_cq_push(d->h->fcq, &wc, &d->marker.pos)) {
		fake_drain_fail(d, "CQ overrun on the drain's completion");
		return;
	}
	d->markers++;
	if (!wait_for_completion_timeout(&d->drained, give_up)) {
		d->given_up = true;
		fake_drain_fail_at(d, "the drain did not return within ms",
				   FAKE_DRAIN_GIVE_UP_MS);
	}
}

static void fake_drain_sq(struct ib_qp *qp)
{
	fake_drain_wq(qp);
}

static void fake_drain_rq(struct ib_qp *qp)
{
	fake_drain_wq(qp);
}

/* the test's verbs on top of the provider's: fake_drain_paused's drains */
const struct ib_device_ops fake_drain_ops = {
	.drain_sq = fake_drain_sq,
	.drain_rq = fake_drain_rq,
};

/* Push @n completions of each QP from @from on, one burst of CQEs. */
static void fake_drain_push(struct fake_drain *h, u32 from, u32 n)
{
	struct fake_cq *fcq = h->fcq;
	unsigned long flags;
	bool direct;
	u32 i, q;

	spin_lock_irqsave(&fcq->lock, flags);
	for (i = from; i < from + n; i++) {
		for (q = 0; q < FAKE_DRAIN_QPS; q++) {
			struct fake_dqp *d = &h->qps[q];
			struct ib_wc wc = {
				.wr_cqe = &d->reqs[i].cqe,
				.status = IB_WC_SUCCESS,
				.opcode = IB_WC_RECV,
				.qp = &d->f.qp,
			};

			if (!fake_cq_add(fcq, &wc, &d->reqs[i].pos))
				fake_drain_fail_at(d, "CQ overrun: seq", i);
		}
	}
	direct = fake_cq_land(fcq);
	spin_unlock_irqrestore(&fcq->lock, flags);
	if (direct)
		fake_direct(fcq);
}

/* Wait until every QP saw its first @n completions. */
static bool fake_drain_wait(struct fake_drain *h, u32 n)
{
	unsigned long end = jiffies + msecs_to_jiffies(fake_params.stall_ms);
	u32 q;

	for (q = 0; q < FAKE_DRAIN_QPS; q++) {
		while (atomic_read(&h->qps[q].dones) < n) {
			if (time_after(jiffies, end))
				return false;
			msleep(FAKE_POLL_MS);
		}
	}
	return true;
}

static void fake_drain_init(struct fake_drain *h, struct fake_dev *fdev)
{
	struct ib_cq *cq = ib_ocq_cq(h->ocq);
	u32 q, i;

	h->fcq = to_fake_cq(cq);
	for (q = 0; q < FAKE_DRAIN_QPS; q++) {
		struct fake_dqp *d = &h->qps[q];

		d->h = h;
		d->f.qp.qp_num = 0x100 + q;
		d->f.qp.device = &fdev->ibdev;
		d->f.qp.send_cq = cq;
		d->f.qp.recv_cq = cq;
		d->f.qp.qp_context = d;
		init_completion(&d->drained);
		for (i = 0; i < FAKE_DRAIN_REQS; i++) {
			d->reqs[i].cqe.done = fake_drain_done;
			d->reqs[i].flow = &d->f;
			d->reqs[i].seq = i;
		}
		d->marker.cqe.done = fake_drain_marker_done;
		d->marker.flow = &d->f;
	}
}

/*
 * Stream half of each QP's completions; then pause (or, postponed, stop
 * arming) and push the other half, which now waits in the CQ; then drain
 * every QP.  Each drain must return within FAKE_DRAIN_BOUND_MS, after every
 * completion of its QP.  Return the longest drain in ms, or -errno.
 */
static int fake_drain_case(struct fake_drain *h, bool postpone)
{
	const u32 half = FAKE_DRAIN_REQS / 2;
	int longest = 0;
	u32 q;

	if (postpone)
		ib_ocq_resume(h->ocq); /* the first arm; nobody arms again */
	if (!fake_wait_armed(h->fcq, fake_params.stall_ms)) {
		pr_info("# drain: the new CQ was not armed\n");
		return -ETIMEDOUT;
	}
	fake_drain_push(h, 0, half);
	if (!fake_drain_wait(h, half)) {
		pr_info("# drain: the first half was not delivered\n");
		return -ETIMEDOUT;
	}
	if (!postpone)
		ib_ocq_pause(h->ocq);
	fake_wait_quiet(h->fcq);
	fake_drain_push(h, half, FAKE_DRAIN_REQS - half);
	for (q = 0; q < FAKE_DRAIN_QPS; q++) {
		struct fake_dqp *d = &h->qps[q];
		ktime_t t0 = ktime_get();
		int ms;

		/* else the lease ended the wait first, and this tests nothing */
		if (!q && atomic_read(&d->dones) != half)
			fake_drain_fail_at(d, "went on before draining: dones",
					   atomic_read(&d->dones));
		ib_drain_qp(&d->f.qp);
		ms = ktime_ms_delta(ktime_get(), t0);
		longest = max(longest, ms);
		if (d->given_up)
			continue;
		if (ms > FAKE_DRAIN_BOUND_MS)
			fake_drain_fail_at(d, "drain over its bound: ms", ms);
		if (atomic_read(&d->marked) != d->markers)
			fake_drain_fail_at(d, "flush done() twice: calls",
					   atomic_read(&d->marked));
	}
	return longest;
}

/* the cases: every mode, then flow mode keyed by request; paused, postponed */
static const char *const fake_drain_names[] = {
	"strict_paused",      "flow_paused",	      "parallel_paused",
	"flow_keyed_paused",  "strict_postponed",     "flow_postponed",
	"parallel_postponed", "flow_keyed_postponed",
};

#define FAKE_DRAIN_CASES (FAKE_NR_MODES + 1)

/* The domain the engine gives a flow key: see ocq_flow_of(). */
static u32 fake_drain_domain(u32 key, unsigned int nr_domains)
{
	return reciprocal_scale(hash_32(key, 32), nr_domains);
}

/* Case @i of fake_drain_paused: a fresh OCQ, drained; false if it failed. */
static bool fake_drain_one(struct fake_dev *fdev, unsigned int i)
{
	bool keyed = i % FAKE_DRAIN_CASES == FAKE_NR_MODES;
	enum ib_ocq_mode mode = keyed ? IB_OCQ_FLOW : i % FAKE_DRAIN_CASES;
	bool postpone = i >= FAKE_DRAIN_CASES;
	struct ib_ocq_attr attr = {
		.mode = mode,
		.nr_domains = mode == IB_OCQ_STRICT ? 0 : 4,
		.flags = postpone ? IB_OCQ_POSTPONE_ARM : 0,
		.pause_ms = FAKE_DRAIN_PAUSE_MS,
		.flow_key = keyed ? fake_drain_key : NULL,
		.process = mode == IB_OCQ_PARALLEL ? fake_drain_process : NULL,
	};
	struct ib_ocq_stats s;
	struct fake_drain *h;
	bool ok;
	int ms;

	h = kzalloc(sizeof(*h), GFP_KERNEL);
	if (!h)
		return false;
	h->keyed = keyed;
	/* keyed: two keys in different domains, as the engine spreads them */
	h->keys[0] = 1;
	h->keys[1] = 2;
	while (keyed && fake_drain_domain(h->keys[1], attr.nr_domains) ==
				fake_drain_domain(h->keys[0], attr.nr_domains))
		h->keys[1]++;
	h->ocq = ib_ocq_alloc(&fdev->ibdev, h, fake_params.cqe, 0, &attr);
	if (IS_ERR(h->ocq)) {
		pr_info("# drain: %s: ib_ocq_alloc: %ld\n", fake_drain_names[i],
			PTR_ERR(h->ocq));
		kfree(h);
		return false;
	}
	fake_drain_init(h, fdev);
	ms = fake_drain_case(h, postpone);
	if (!postpone)
		ib_ocq_resume(h->ocq);
	ib_ocq_get_stats(h->ocq, &s);
	/* what a given-up drain left behind ends with the OCQ */
	ib_ocq_free(h->ocq);
	if (ms >= 0)
		pr_info("# drain: %s: longest ib_drain_qp() %d ms (bound %d), lease_resumes %llu\n",
			fake_drain_names[i], ms, FAKE_DRAIN_BOUND_MS,
			s.lease_resumes);
	else
		pr_info("# drain: %s: no drain: %d\n", fake_drain_names[i], ms);
	ok = ms >= 0 && !atomic_read(&h->failures) && s.lease_resumes > 0;
	kfree(h);
	return ok;
}

/*
 * fake_drain_paused: ib_drain_qp() on every QP of an OCQ that is paused,
 * and of one whose arm is postponed and nobody arms, in every mode and in
 * flow mode keyed by request, with completions of both QPs waiting in the
 * CQ: each drain returns within two leases, after every completion of its
 * QP, in order, and neither process() nor flow_key() sees the drain's
 * flush.  The lease must have ended the wait.
 */
int fake_run_drain_paused(const struct fake_scenario *sc, struct fake_dev *fdev,
			  struct fake_ktap *k)
{
	unsigned int i;

	fdev->sem = sc->sem;
	fdev->rnd = fake_seed(6000);
	fdev->ring = 0;
	for (i = 0; i < ARRAY_SIZE(fake_drain_names); i++)
		fake_result(k, fake_drain_one(fdev, i), fake_drain_names[i],
			    NULL);
	return 0;
}

/* --- fake_bad_attr: every -EINVAL, none with a warning --- */

static u32 fake_flow_key(struct ib_cq *cq, const struct ib_wc *wc)
{
	return wc->qp->qp_num;
}

static void fake_bad_comp(struct ib_cq *cq, void *ctx)
{
}

/**
 * struct fake_attr_case - an ib_ocq_attr, good or bad
 * @name: subtest name
 * @mode: &ib_ocq_attr.mode
 * @policy: &ib_ocq_attr.policy
 * @flags: &ib_ocq_attr.flags
 * @nr_domains: &ib_ocq_attr.nr_domains
 * @budget: &ib_ocq_attr.budget
 * @pause_ms: &ib_ocq_attr.pause_ms
 * @process: set &ib_ocq_attr.process
 * @flow_key: set &ib_ocq_attr.flow_key
 * @ok: ib_ocq_alloc() succeeds
 */
struct fake_attr_case {
	const char *name;
	unsigned int mode;
	unsigned int policy;
	unsigned int flags;
	unsigned int nr_domains;
	unsigned int budget;
	unsigned int pause_ms;
	bool process;
	bool flow_key;
	bool ok;
};

/*
 * Every flag bit that no version defines: every bit but the known flags.  A
 * flag added later is one bit of it, and leaves the others unknown, so the
 * value stays refused; it holds no known flag, so nothing but the check of
 * unknown flags can refuse it.
 */
#define FAKE_UNKNOWN_FLAGS \
	(~(unsigned int)(IB_OCQ_POSTPONE_ARM | IB_OCQ_DEFER_DIM))

static const struct fake_attr_case fake_attr_cases[] = {
	{ .name = "bad_mode", .mode = IB_OCQ_PARALLEL + 1 },
	{ .name = "bad_policy", .policy = IB_ARM_DOUBLE_POLL + 1 },
	{ .name = "bad_flags", .flags = FAKE_UNKNOWN_FLAGS },
	{ .name = "parallel_without_process", .mode = IB_OCQ_PARALLEL },
	{ .name = "process_without_parallel", .process = true },
	{ .name = "flow_key_without_flow", .flow_key = true },
	{ .name = "too_many_domains", .mode = IB_OCQ_FLOW, .nr_domains = 65 },
	{ .name = "budget_too_big", .budget = IB_OCQ_MAX_BUDGET + 1 },
	{ .name = "pause_ms_too_big", .pause_ms = IB_OCQ_MAX_PAUSE_MS + 1 },
	{ .name = "most_domains",
	  .mode = IB_OCQ_FLOW,
	  .nr_domains = 64,
	  .ok = true },
	{ .name = "biggest_budget", .budget = IB_OCQ_MAX_BUDGET, .ok = true },
	{ .name = "longest_pause_ms",
	  .pause_ms = IB_OCQ_MAX_PAUSE_MS,
	  .flags = IB_OCQ_POSTPONE_ARM,
	  .ok = true },
	{ .name = "flow_key",
	  .mode = IB_OCQ_FLOW,
	  .flow_key = true,
	  .ok = true },
	{ .name = "parallel",
	  .mode = IB_OCQ_PARALLEL,
	  .process = true,
	  .policy = IB_ARM_DOUBLE_POLL,
	  .ok = true },
};

static void fake_attr_make(const struct fake_attr_case *c,
			   struct ib_ocq_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->mode = c->mode;
	attr->policy = c->policy;
	attr->flags = c->flags;
	attr->nr_domains = c->nr_domains;
	attr->budget = c->budget;
	ocq_compat_set_pause_ms(attr, c->pause_ms);
	attr->process = c->process ? fake_process : NULL;
	attr->flow_key = c->flow_key ? fake_flow_key : NULL;
}

/* An allocation's result against what was expected; frees a success. */
static void fake_bad_result(struct fake_ktap *k, const char *name,
			    struct ib_ocq *ocq, bool want_ok)
{
	int ret = PTR_ERR_OR_ZERO(ocq);

	if (!ret)
		ib_ocq_free(ocq);
	if (want_ok ? ret : ret != -EINVAL)
		pr_info("# %s: ib_ocq_alloc() returned %d, expected %s\n", name,
			ret, want_ok ? "success" : "-EINVAL");
	fake_result(k, want_ok ? !ret : ret == -EINVAL, name, NULL);
}

/*
 * A case of fake_attr_cases on a direct CQ: refused as on any other, and
 * so are parallel mode, a postponed arm and the watchdog.
 */
static void fake_bad_direct(struct fake_ktap *k, struct ib_device *dev,
			    const struct fake_attr_case *c)
{
	struct ib_ocq_attr attr;
	struct ib_cq *cq;
	char name[64];
	bool ok;

	fake_attr_make(c, &attr);
	ok = c->ok && attr.mode != IB_OCQ_PARALLEL && !attr.flags &&
	     !attr.watchdog_ms;
	snprintf(name, sizeof(name), "direct_%s", c->name);
	cq = ib_ocq_alloc_cq(dev, NULL, fake_params.cqe, 0, IB_POLL_DIRECT,
			     &attr);
	fake_bad_result(k, name, IS_ERR(cq) ? ERR_CAST(cq) : ib_cq_to_ocq(cq),
			ok);
}

static void fake_bad_allocs(struct fake_dev *fdev, struct fake_ktap *k)
{
	struct ib_ocq_attr attr = {};
	struct ib_device *dev = &fdev->ibdev;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fake_attr_cases); i++) {
		const struct fake_attr_case *c = &fake_attr_cases[i];

		fake_attr_make(c, &attr);
		fake_bad_result(k, c->name,
				ib_ocq_alloc(dev, NULL, fake_params.cqe, 0,
					     &attr),
				c->ok);
	}
	/* the same through IB_POLL_DIRECT, which runs no engine */
	for (i = 0; i < ARRAY_SIZE(fake_attr_cases); i++)
		fake_bad_direct(k, dev, &fake_attr_cases[i]);
	memset(&attr, 0, sizeof(attr));
	fake_bad_result(k, "no_device",
			__ib_ocq_alloc(NULL, NULL, fake_params.cqe, 0, &attr,
				       KBUILD_MODNAME),
			false);
	/* NULL is the defaults, as for ib_ocq_alloc_cq() */
	fake_bad_result(k, "no_attr",
			ib_ocq_alloc(dev, NULL, fake_params.cqe, 0, NULL),
			true);
	fake_bad_result(k, "no_cqe", ib_ocq_alloc(dev, NULL, 0, 0, &attr),
			false);
	fake_bad_result(k, "negative_cqe",
			ib_ocq_alloc(dev, NULL, -1, 0, &attr), false);
	fake_bad_result(k, "negative_comp_vector",
			ib_ocq_alloc(dev, NULL, fake_params.cqe, -1, &attr),
			false);
	fake_bad_result(k, "comp_vector_too_big",
			ib_ocq_alloc(dev, NULL, fake_params.cqe,
				     max(dev->num_comp_vectors, 1), &attr),
			false);
}

static void fake_bad_expect(struct fake_ktap *k, const char *name, int ret,
			    int want)
{
	if (ret != want)
		pr_info("# %s: returned %d, expected %d\n", name, ret, want);
	fake_result(k, ret == want, name, NULL);
}

/* The helpers' -EINVAL cases, then one good call of each on the empty CQ. */
static int fake_bad_helpers(struct fake_dev *fdev, struct fake_ktap *k)
{
	struct ib_cq_init_attr cq_attr = { .cqe = fake_params.cqe };
	enum ib_pn_status st = IB_PN_MORE;
	struct ib_wc wc[2];
	struct ib_cq *cq;
	int n;

	fdev->sem = 0;
	fdev->ring = 0;
	cq = ib_create_cq(&fdev->ibdev, fake_bad_comp, NULL, NULL, &cq_attr);
	if (IS_ERR(cq))
		return PTR_ERR(cq);
	fake_bad_expect(k, "poll_cq_and_arm_no_entries",
			ib_poll_cq_and_arm(cq, 0, wc), -EINVAL);
	fake_bad_expect(k, "poll_cq_and_arm_negative_entries",
			ib_poll_cq_and_arm(cq, -1, wc), -EINVAL);
	fake_bad_expect(k, "poll_cq_and_arm_no_wc",
			ib_poll_cq_and_arm(cq, 1, NULL), -EINVAL);
	fake_bad_expect(k, "poll_and_notify_no_entries",
			ib_poll_and_notify(cq, 0, wc, IB_ARM_REPORT_MISSED,
					   &st),
			-EINVAL);
	fake_bad_expect(k, "poll_and_notify_no_wc",
			ib_poll_and_notify(cq, 1, NULL, IB_ARM_REPORT_MISSED,
					   &st),
			-EINVAL);
	fake_bad_expect(k, "poll_and_notify_no_status",
			ib_poll_and_notify(cq, 1, wc, IB_ARM_REPORT_MISSED,
					   NULL),
			-EINVAL);
	fake_bad_expect(k, "poll_and_notify_bad_policy",
			ib_poll_and_notify(cq, 1, wc, IB_ARM_DOUBLE_POLL + 1,
					   &st),
			-EINVAL);
	fake_bad_expect(k, "poll_cq_and_arm_empty",
			ib_poll_cq_and_arm(cq, 2, wc), 0);
	n = ib_poll_and_notify(cq, 2, wc, IB_ARM_REPORT_MISSED, &st);
	if (!n && st != IB_PN_EMPTY_ARMED)
		pr_info("# poll_and_notify_empty: status %d, expected IB_PN_EMPTY_ARMED\n",
			st);
	fake_bad_expect(k, "poll_and_notify_empty",
			n || st != IB_PN_EMPTY_ARMED ? -EPROTO : 0, 0);
	ib_destroy_cq(cq);
	return 0;
}

/* An allocation of a CQ with a bad poll context: -EINVAL, as ib_core's. */
static void fake_bad_ctx_result(struct fake_ktap *k, struct ib_device *dev,
				const char *name, struct ib_cq *cq, bool pooled)
{
	if (!IS_ERR(cq) && pooled) {
		ib_ocq_cq_pool_put(cq, fake_params.cqe);
		ib_ocq_cq_pool_destroy(dev);
	} else if (!IS_ERR(cq)) {
		ib_ocq_free_cq(cq);
	}
	fake_bad_expect(k, name, PTR_ERR_OR_ZERO(cq), -EINVAL);
}

/*
 * An unknown poll context is -EINVAL, as from ib_alloc_cq() and
 * ib_cq_pool_get(); so is IB_POLL_DIRECT for a pool, which has none.
 */
static void fake_bad_poll_ctx(struct fake_dev *fdev, struct fake_ktap *k)
{
	enum ib_poll_context bad = IB_POLL_DIRECT + 1;
	struct ib_device *dev = &fdev->ibdev;
	unsigned int n = fake_params.cqe;

	fdev->sem = 0;
	fdev->ring = 0;
	fake_bad_ctx_result(k, dev, "alloc_cq_bad_poll_ctx",
			    ib_ocq_alloc_cq(dev, NULL, fake_params.cqe, 0, bad,
					    NULL),
			    false);
	fake_bad_ctx_result(k, dev, "alloc_cq_any_bad_poll_ctx",
			    ib_ocq_alloc_cq_any(dev, NULL, fake_params.cqe, bad,
						NULL),
			    false);
	fake_bad_ctx_result(k, dev, "pool_get_bad_poll_ctx",
			    ib_ocq_cq_pool_get(dev, n, -1, bad, NULL), true);
	fake_bad_ctx_result(k, dev, "pool_get_direct",
			    ib_ocq_cq_pool_get(dev, fake_params.cqe, -1,
					       IB_POLL_DIRECT, NULL),
			    true);
}

/*
 * fake_bad_attr: every bad argument of the allocation and the helpers is
 * -EINVAL, without a warning (the guest panics on one), and the limits
 * themselves are accepted.
 */
int fake_run_bad_attr(const struct fake_scenario *sc, struct fake_dev *fdev,
		      struct fake_ktap *k)
{
	fake_bad_allocs(fdev, k);
	fake_bad_poll_ctx(fdev, k);
	return fake_bad_helpers(fdev, k);
}
