// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fake_inline - ocq_test_fake's fake_flow_inline: when flow mode's CQ run
 * dispatches a batch itself, and when it must hand it to the domains.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <rdma/ib_ocq.h>
#include <rdma/ib_verbs.h>

#include "ocq_test_compat.h"
#include "fake.h"

/* completions of A pushed one at a time, each after the last one's done() */
#define FAKE_INL_SINGLES 32
/* a batch the CQ run must hand on: longer than the head-of-line bound */
#define FAKE_INL_LONG (IB_OCQ_HOL_DONES + 1)
/* A's backlog behind a blocked done(): A's domain busy well after the poll */
#define FAKE_INL_BUSY 16
/* A's requests: the singles, or the backlog and the one behind it */
#define FAKE_INL_REQS FAKE_INL_SINGLES
/* B's QP numbers tried: A's plus 1, 2, ... */
#define FAKE_INL_B_TRIES 8
/* how long a blocked A done() leaves the engine to misbehave */
#define FAKE_INL_GRACE_MS 100

/**
 * struct fake_inl - flow A, whose first done() of a batch may block, and
 *	flow B, which must land in the other domain
 * @ocq: the OCQ, %IB_OCQ_FLOW with two domains
 * @fcq: its fake CQ
 * @a: A's flow (its QP)
 * @b: B's flow (its QP)
 * @areqs: A's requests
 * @breq: B's request
 * @a_next: A's next sequence number expected
 * @a_dones: A's done() calls
 * @a_inside: A done() calls running now
 * @b_dones: B's done() calls
 * @block: the A done() of this sequence number waits for @release
 * @blocked: that done() is waiting
 * @release: set by the test to let it return
 * @failures: failed checks in done()
 * @wq: done() and the test wait here
 */
struct fake_inl {
	struct ib_ocq *ocq;
	struct fake_cq *fcq;
	struct fake_flow a;
	struct fake_flow b;
	struct fake_req areqs[FAKE_INL_REQS];
	struct fake_req breq;
	u32 a_next;
	atomic_t a_dones;
	atomic_t a_inside;
	atomic_t b_dones;
	int block;
	atomic_t blocked;
	atomic_t release;
	atomic_t failures;
	wait_queue_head_t wq;
};

static unsigned long fake_inl_bound(void)
{
	return msecs_to_jiffies(fake_params.stall_ms);
}

static void fake_inl_a_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct fake_req *req = container_of(wc->wr_cqe, struct fake_req, cqe);
	struct fake_inl *h = ib_ocq_private(cq);

	if (atomic_inc_return(&h->a_inside) > 1 || req->seq != h->a_next) {
		atomic_inc(&h->failures);
		pr_info("# inline: A done(seq %u) expected seq %u, %d running\n",
			req->seq, h->a_next, atomic_read(&h->a_inside) - 1);
	}
	h->a_next = req->seq + 1;
	if (req->seq == h->block) {
		atomic_set(&h->blocked, 1);
		wake_up(&h->wq);
		/* bounded: a lost release fails the test, not the guest */
		wait_event_timeout(h->wq, atomic_read(&h->release),
				   fake_inl_bound());
		atomic_set(&h->blocked, 0);
	} else if (h->block >= 0) {
		mdelay(2); /* the backlog keeps A's domain busy after the poll */
	}
	atomic_dec(&h->a_inside);
	atomic_inc(&h->a_dones);
	wake_up(&h->wq);
}

static void fake_inl_b_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct fake_inl *h = ib_ocq_private(cq);

	atomic_inc(&h->b_dones);
	wake_up(&h->wq);
}

static void fake_inl_push(struct fake_inl *h, struct fake_flow *f,
			  struct fake_req *req)
{
	fake_push_req(h->fcq, &f->qp, req, IB_WC_RECV, &h->failures);
}

/* Push @n of A's completions, from sequence number @seq on. */
static void fake_inl_push_a(struct fake_inl *h, u32 seq, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++) {
		h->areqs[i].seq = seq + i;
		fake_inl_push(h, &h->a, &h->areqs[i]);
	}
}

static bool fake_inl_wait(struct fake_inl *h, atomic_t *count, int n)
{
	return wait_event_timeout(h->wq, atomic_read(count) >= n,
				  fake_inl_bound());
}

static u64 fake_inl_inlined(struct fake_inl *h, u64 *domain_runs)
{
	struct ib_ocq_stats s;

	ib_ocq_get_stats(h->ocq, &s);
	if (domain_runs)
		*domain_runs = s.domain_runs;
	return s.inlined;
}

/*
 * One at a time, with the domains idle: the CQ run calls every done()
 * itself, and no domain ever runs.
 */
static bool fake_inl_singles(struct fake_inl *h)
{
	u64 runs, inlined;
	u32 i;

	for (i = 0; i < FAKE_INL_SINGLES; i++) {
		fake_inl_push_a(h, h->a_next, 1);
		if (!fake_inl_wait(h, &h->a_dones, i + 1))
			return false;
	}
	inlined = fake_inl_inlined(h, &runs);
	pr_info("# inline: %u single completions: %llu inlined, %llu domain runs\n",
		FAKE_INL_SINGLES, inlined, runs);
	return inlined == FAKE_INL_SINGLES && !runs;
}

/*
 * A batch pushed while the OCQ is paused is taken by one poll after the
 * resume.  Return the completions of it that the CQ run dispatched itself.
 */
static u64 fake_inl_batch(struct fake_inl *h, u32 na, bool with_b, bool *ok)
{
	int a = atomic_read(&h->a_dones), b = atomic_read(&h->b_dones);
	u64 before = fake_inl_inlined(h, NULL);

	ib_ocq_pause(h->ocq);
	fake_inl_push_a(h, h->a_next, na);
	if (with_b)
		fake_inl_push(h, &h->b, &h->breq);
	ib_ocq_resume(h->ocq);
	*ok = fake_inl_wait(h, &h->a_dones, a + na) &&
	      fake_inl_wait(h, &h->b_dones, b + with_b);
	return fake_inl_inlined(h, NULL) - before;
}

/*
 * A batch of %FAKE_INL_BUSY of A, whose first done() blocks: A's domain is
 * busy, and the CQ run parks until it makes progress.  One more A
 * completion waits in the CQ meanwhile; once polled (after IB_OCQ_HOL_DONES
 * of the backlog), it must go to A's ring behind the rest, not run beside
 * it: A's done() checks order and overlap.
 */
static bool fake_inl_busy(struct fake_inl *h)
{
	int a0 = atomic_read(&h->a_dones);
	u32 first = h->a_next;
	bool ok;

	h->block = first;
	ib_ocq_pause(h->ocq);
	fake_inl_push_a(h, first, FAKE_INL_BUSY);
	ib_ocq_resume(h->ocq);
	ok = fake_inl_wait(h, &h->blocked, 1);
	h->areqs[FAKE_INL_BUSY].seq = first + FAKE_INL_BUSY;
	fake_inl_push(h, &h->a, &h->areqs[FAKE_INL_BUSY]);
	msleep(FAKE_INL_GRACE_MS);
	atomic_set(&h->release, 1);
	wake_up(&h->wq);
	ok = ok && fake_inl_wait(h, &h->a_dones, a0 + FAKE_INL_BUSY + 1);
	h->block = -1;
	return ok;
}

/*
 * A and B in one batch: B takes the first QP number, A's plus 1, 2, ...,
 * whose batch with A the CQ run hands on (B in the other domain); with B in
 * A's domain the batch is of one domain and inlined.  None is a failure.
 */
static bool fake_inl_two_flows(struct fake_inl *h, bool *ok)
{
	unsigned int t;
	u64 n;

	for (t = 1; t <= FAKE_INL_B_TRIES && *ok; t++) {
		h->b.qp.qp_num = h->a.qp.qp_num + t;
		n = fake_inl_batch(h, 1, true, ok);
		pr_info("# inline: a batch of A and QP %#x: %llu inlined\n",
			h->b.qp.qp_num, n);
		if (!n)
			return true;
	}
	return false;
}

static bool fake_inl_cases(struct fake_inl *h)
{
	bool ok, step;
	u64 n;

	ok = fake_inl_singles(h);
	ok = fake_inl_busy(h) && ok;
	n = fake_inl_batch(h, IB_OCQ_HOL_DONES, false, &step);
	pr_info("# inline: a batch of %u of A: %llu inlined\n",
		IB_OCQ_HOL_DONES, n);
	ok = ok && step && n == IB_OCQ_HOL_DONES;
	n = fake_inl_batch(h, FAKE_INL_LONG, false, &step);
	pr_info("# inline: a batch of %u of A: %llu inlined\n", FAKE_INL_LONG,
		n);
	ok = ok && step && !n;
	step = true;
	if (!fake_inl_two_flows(h, &step)) {
		pr_info("# inline: every batch of A and B was inlined\n");
		ok = false;
	}
	return ok && step && !atomic_read(&h->failures);
}

/*
 * fake_flow_inline: flow mode dispatches a batch in the CQ run when it is
 * of one flow, no longer than IB_OCQ_HOL_DONES and every domain is idle
 * (A alone: always; A's batch of IB_OCQ_HOL_DONES), and hands it to the
 * domains otherwise (A's domain busy; a longer batch; A and B in one).
 * A's done() calls must follow A's order and never overlap.
 */
int fake_run_flow_inline(const struct fake_scenario *sc, struct fake_dev *fdev,
			 struct fake_ktap *k)
{
	struct ib_ocq_attr attr = {
		.mode = IB_OCQ_FLOW,
		.nr_domains = 2,
	};
	struct fake_inl *h;
	unsigned int i;
	bool ok;

	h = kzalloc(sizeof(*h), GFP_KERNEL);
	if (!h)
		return -ENOMEM;
	init_waitqueue_head(&h->wq);
	h->block = -1;
	h->a.qp.qp_num = 0x100;
	for (i = 0; i < ARRAY_SIZE(h->areqs); i++)
		h->areqs[i].cqe.done = fake_inl_a_done;
	h->breq.cqe.done = fake_inl_b_done;
	fdev->sem = sc->sem;
	fdev->rnd = fake_seed(5000);
	fdev->ring = 0;
	h->ocq = ib_ocq_alloc(&fdev->ibdev, h, fake_params.cqe, 0, &attr);
	if (IS_ERR(h->ocq)) {
		int ret = PTR_ERR(h->ocq);

		kfree(h);
		return ret;
	}
	h->fcq = to_fake_cq(ib_ocq_cq(h->ocq));
	ok = fake_inl_cases(h);
	ib_ocq_free(h->ocq);
	fake_result(k, ok, "flow", NULL);
	kfree(h);
	return 0;
}
