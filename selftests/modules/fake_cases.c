// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fake_cases - ocq_test_fake scenarios with runs of their own:
 * fake_poll_helpers, fake_flow_hol, fake_resume_race, fake_parallel_slow.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/wait.h>
#include <rdma/ib_ocq.h>
#include <rdma/ib_verbs.h>

#include "ocq_test_compat.h"
#include "fake.h"

/* --- fake_poll_helpers: the poll helpers on a plain CQ, no OCQ --- */

/* Room for completions in one helper call. */
#define FAKE_HELPER_BATCH 16
/* Helper calls one run of the consumer's work item makes before requeueing. */
#define FAKE_HELPER_CALLS 64

/**
 * struct fake_helper - a ULP polling its own CQ with a poll helper: the
 *	completion handler queues a work item, which calls the helper until it
 *	says the CQ is armed, and requeues itself on -EAGAIN
 * @r: the run: producers and the checks of every completion
 * @cq: a CQ of the fake device, from ib_create_cq()
 * @pn: ib_poll_and_notify() with @policy; else ib_poll_cq_and_arm(), or
 *	with %IB_ARM_SOLICITED in @policy ib_poll_cq_and_arm_solicited()
 * @policy: ib_poll_and_notify()'s arm policy
 * @work: the consumer
 * @tick: fake_lossy: the consumer's own safety net, queues @work now and then
 * @stop: the handler and the work item queue nothing more
 * @wcs: the completions of a call
 * @calls: helper calls
 * @eagain: of those, -EAGAIN returns (the consumer requeued itself later)
 * @errors: other errors
 * @armed: returns that said the CQ is armed
 * @max_arms: most req_notify_cq calls in one helper call
 * @zero_repolls: %IB_PN_REPOLL returns with no completion
 * @bad_status: statuses that do not match the completions returned
 */
struct fake_helper {
	struct fake_run *r;
	struct ib_cq *cq;
	bool pn;
	enum ib_arm_policy policy;
	struct delayed_work work;
	struct delayed_work tick;
	bool stop;
	struct ib_wc wcs[FAKE_HELPER_BATCH];
	u64 calls;
	u64 eagain;
	u64 errors;
	u64 armed;
	u64 max_arms;
	u64 zero_repolls;
	u64 bad_status;
};

static const struct fake_helper_model fake_helper_models[] = {
	{ "weak", 0, IB_ARM_REPORT_MISSED },
	{ "weak_double_poll", 0, IB_ARM_DOUBLE_POLL, true },
	{ "strong", FAKE_STRONG, IB_ARM_STRONG },
	{ "cb_and_1", FAKE_CB_AND_1, IB_ARM_REPORT_MISSED },
	{ "spurious", FAKE_SPURIOUS, IB_ARM_REPORT_MISSED },
	{ "concurrent", FAKE_CONCURRENT, IB_ARM_REPORT_MISSED },
	{ "lossy", FAKE_LOSSY, IB_ARM_REPORT_MISSED },
	{ "perpetual", FAKE_PERPETUAL, IB_ARM_REPORT_MISSED },
};

static u64 fake_cq_arms(struct fake_cq *fcq)
{
	unsigned long flags;
	u64 n;

	spin_lock_irqsave(&fcq->lock, flags);
	n = fcq->arms;
	spin_unlock_irqrestore(&fcq->lock, flags);
	return n;
}

static void fake_helper_requeue(struct fake_helper *h, unsigned long delay)
{
	if (!READ_ONCE(h->stop))
		queue_delayed_work(system_highpri_wq, &h->work, delay);
}

static void fake_helper_event(struct ib_cq *cq, void *ctx)
{
	fake_helper_requeue(ctx, 0);
}

/* One helper call, its completions delivered; its return value. */
static int fake_helper_call(struct fake_helper *h, enum ib_pn_status *st)
{
	struct fake_cq *fcq = h->r->fcq;
	u64 arms = fake_cq_arms(fcq);
	int n, i;

	if (h->pn)
		n = ib_poll_and_notify(h->cq, FAKE_HELPER_BATCH, h->wcs,
				       h->policy, st);
	else if (h->policy & IB_ARM_SOLICITED)
		n = ib_poll_cq_and_arm_solicited(h->cq, FAKE_HELPER_BATCH,
						 h->wcs);
	else
		n = ib_poll_cq_and_arm(h->cq, FAKE_HELPER_BATCH, h->wcs);
	h->calls++;
	h->max_arms = max(h->max_arms, fake_cq_arms(fcq) - arms);
	for (i = 0; i < n; i++)
		fake_deliver(h->r, container_of(h->wcs[i].wr_cqe,
						struct fake_req, cqe));
	return n;
}

/*
 * ib_poll_and_notify(): what @st asks for next; true if the CQ is armed.
 * Counts the statuses the API rules out.
 */
static bool fake_helper_status(struct fake_helper *h, int n,
			       enum ib_pn_status st)
{
	switch (st) {
	case IB_PN_MORE:
		h->bad_status += !n;
		return false;
	case IB_PN_REPOLL:
		h->zero_repolls += !n;
		return false;
	case IB_PN_ARMED:
		h->bad_status += !n;
		return true;
	case IB_PN_EMPTY_ARMED:
		h->bad_status += !!n;
		return true;
	default:
		h->bad_status++;
		return false;
	}
}

static void fake_helper_work(struct work_struct *work)
{
	struct fake_helper *h =
		container_of(to_delayed_work(work), struct fake_helper, work);
	enum ib_pn_status st;
	unsigned int i;
	int n;

	for (i = 0; i < FAKE_HELPER_CALLS; i++) {
		st = IB_PN_MORE;
		n = fake_helper_call(h, &st);
		if (n < 0) {
			/* not armed: come back later, as the API asks */
			if (n == -EAGAIN)
				h->eagain++;
			else
				h->errors++;
			fake_helper_requeue(h, 1);
			return;
		}
		if (h->pn ? fake_helper_status(h, n, st) : !n) {
			h->armed++;
			return;
		}
	}
	fake_helper_requeue(h, 0);
}

static void fake_helper_tick(struct work_struct *work)
{
	struct fake_helper *h =
		container_of(to_delayed_work(work), struct fake_helper, tick);

	if (READ_ONCE(h->stop))
		return;
	fake_helper_requeue(h, 0);
	queue_delayed_work(system_highpri_wq, &h->tick,
			   msecs_to_jiffies(FAKE_WATCHDOG_MS));
}

static void fake_helper_check(struct fake_helper *h,
			      const struct fake_helper_model *m)
{
	struct fake_run *r = h->r;

	pr_info("# %s: %ld completions, %llu calls, %llu -EAGAIN, %llu errors, %llu armed, at most %llu arms in a call; provider polls=%llu arms=%llu positive=%llu callbacks=%ld\n",
		r->name, atomic_long_read(&r->delivered), h->calls, h->eagain,
		h->errors, h->armed, h->max_arms, r->fcq->polls, r->fcq->arms,
		r->fcq->positive, atomic_long_read(&r->fcq->callbacks));
	fake_check(r, h->max_arms <= IB_POLL_ARM_TRIES,
		   "no call arms more than IB_POLL_ARM_TRIES times");
	fake_check(r, !h->zero_repolls, "never IB_PN_REPOLL with nothing");
	fake_check(r, !h->bad_status,
		   "every status matches the completions returned");
	fake_check(r, !h->errors, "no error but -EAGAIN");
	if (m->sem & FAKE_PERPETUAL)
		fake_check(r, h->eagain > 0,
			   "-EAGAIN on a CQ that never arms, and requeued");
	else
		fake_check(r, h->armed > 0, "the CQ was armed");
	fake_check(r, !r->fcq->overruns, "no CQ overrun");
}

/*
 * Stream @r through a CQ polled with one helper on model @m (@pn:
 * ib_poll_and_notify()), then &fake_scenario.drive of @r's scenario.
 */
int fake_helper_stream(struct fake_run *r, struct fake_dev *fdev,
		       const struct fake_helper_model *m, bool pn)
{
	struct ib_cq_init_attr cq_attr = { .cqe = r->cqe };
	unsigned int bound = fake_params.stall_ms;
	struct fake_helper *h;
	bool ok = false;
	int ret;

	h = kzalloc(sizeof(*h), GFP_KERNEL);
	if (!h)
		return -ENOMEM;
	h->r = r;
	h->pn = pn;
	h->policy = m->policy;
	INIT_DELAYED_WORK(&h->work, fake_helper_work);
	INIT_DELAYED_WORK(&h->tick, fake_helper_tick);
	fake_run_reset(r);
	fdev->sem = m->sem;
	fdev->rnd = fake_seed(2000 + pn);
	fdev->ring = 0;
	h->cq = ib_create_cq(&fdev->ibdev, fake_helper_event, NULL, h,
			     &cq_attr);
	if (IS_ERR(h->cq)) {
		ret = PTR_ERR(h->cq);
		kfree(h);
		return ret;
	}
	r->fcq = to_fake_cq(h->cq);
	/* the first call finds the CQ empty and arms it */
	fake_helper_requeue(h, 0);
	if (m->sem & FAKE_LOSSY)
		queue_delayed_work(system_highpri_wq, &h->tick,
				   msecs_to_jiffies(FAKE_WATCHDOG_MS));
	if (m->sem & FAKE_PERPETUAL)
		bound = max_t(unsigned int, bound, FAKE_PERPETUAL_STALL_MS);
	ret = fake_producers_start(r);
	if (!ret) {
		ok = fake_wait_delivered(r, bound);
		if (!ok)
			fake_print_stall(r);
	}
	fake_producers_stop(r);
	if (!ret) {
		fake_check(r, ok,
			   "everything delivered within the stall bound");
		if (ok && !(m->sem & FAKE_PERPETUAL))
			fake_check(r,
				   fake_wait_armed(r->fcq,
						   fake_params.stall_ms),
				   "ends empty and armed");
		if (ok && r->sc->drive)
			r->sc->drive(r);
	}
	fake_cq_quiesce(r->fcq);
	WRITE_ONCE(h->stop, true);
	cancel_delayed_work_sync(&h->tick);
	cancel_delayed_work_sync(&h->work);
	if (!ret)
		fake_helper_check(h, m);
	ib_destroy_cq(h->cq);
	r->fcq = NULL;
	kfree(h);
	return ret;
}

/*
 * fake_poll_helpers: ib_poll_cq_and_arm() and ib_poll_and_notify() driven
 * by a completion handler and a work item of their own on every provider
 * model, checked as done() checks an OCQ's completions (CQ order).
 */
int fake_run_poll_helpers(const struct fake_scenario *sc, struct fake_dev *fdev,
			  struct fake_ktap *k)
{
	unsigned int i, pn;
	int ret = 0;

	for (i = 0; i < ARRAY_SIZE(fake_helper_models) && !ret; i++) {
		const struct fake_helper_model *m = &fake_helper_models[i];

		for (pn = m->pn_only; pn < 2 && !ret; pn++) {
			struct fake_run *r;

			r = fake_run_alloc(sc, IB_OCQ_STRICT,
					   fake_params.completions,
					   fake_params.cqe, false);
			if (!r)
				return -ENOMEM;
			snprintf(r->name, sizeof(r->name), "%s_%s", m->name,
				 pn ? "poll_and_notify" : "poll_cq_and_arm");
			if ((m->sem & FAKE_CONCURRENT) &&
			    num_online_cpus() < 2) {
				fake_skip(k, r->name, "needs two online CPUs");
				fake_run_free(r);
				continue;
			}
			ret = fake_helper_stream(r, fdev, m, pn);
			fake_result(k, !ret && !atomic_read(&r->failures),
				    r->name, NULL);
			fake_run_free(r);
		}
	}
	return ret;
}

/* --- fake_flow_hol: head-of-line blocking between flows --- */

/* A's done() takes this long, in milliseconds */
#define FAKE_HOL_A_MS 5
/* A's backlog in the first half; doubled in the second (within cqe=256) */
#define FAKE_HOL_BACKLOG 96
/* backlogs of A per half */
#define FAKE_HOL_ROUNDS 3
/*
 * The promise (ib_ocq.h): a completion of B waits in the CQ for at most
 * IB_OCQ_HOL_DONES done() calls of the busy domain A, and the scheduling of
 * one work item.  Counted in A's calls, with the fake CQ telling when B
 * left it (fake_hol_b_polled()): beyond IB_OCQ_HOL_DONES, the call A was
 * in when B came, and the calls A makes while the CQ run its kick queued
 * (a high-priority worker on A's CPU) waits for a CPU.  Then B's own
 * domain run is queued, another work item, before B's done().  In the
 * guest the workers preempt A at once; what a wait costs beyond that is
 * the host's: under TCG a vCPU the host deschedules stops its work while
 * A's vCPU goes on with its 5 ms calls (mdelay() counts host time).  See
 * FAKE_HOL_CQ_SLACK and FAKE_HOL_DONE_SLACK for the measurements.
 */
#define FAKE_HOL_CQ_SLACK 4
#define FAKE_HOL_DONE_SLACK 8
/* A calls B may wait in the CQ, and until its done() */
#define FAKE_HOL_CQ_BOUND (IB_OCQ_HOL_DONES + FAKE_HOL_CQ_SLACK)
#define FAKE_HOL_BOUND (FAKE_HOL_CQ_BOUND + FAKE_HOL_DONE_SLACK)
/* B's QP numbers tried: A's plus 2, 4, ... */
#define FAKE_HOL_B_TRIES 8
/*
 * the A backlog a B in the other domain must overtake (480 ms of done()):
 * twice FAKE_HOL_BOUND, the wait the rounds accept; in A's domain B waits
 * for all of it
 */
#define FAKE_HOL_PROBE FAKE_HOL_BACKLOG

/**
 * struct fake_hol - two flows: A with slow done() calls and a backlog, B
 *	with one cheap completion at a time
 * @ocq: the OCQ, %IB_OCQ_FLOW with two domains
 * @fcq: its fake CQ
 * @a: A's flow (its QP; requests in @areqs)
 * @b: B's flow, its one request in @breq
 * @areqs: A's requests, 2 * %FAKE_HOL_BACKLOG
 * @breq: B's request
 * @a_dones: A's done() calls
 * @a_next: A's next sequence number expected (A's domain)
 * @a_pushed: A's completions pushed
 * @a_inside: an A done() is running
 * @b_dones: B's done() calls
 * @b_polled: @a_dones when the CQ run last took B's completion from the CQ
 * @b_saw: @a_dones when B's last done() ran
 * @overlapped: a B done() ran while an A done() did
 * @failures: failed checks in done()
 * @wq: the test waits here
 */
struct fake_hol {
	struct ib_ocq *ocq;
	struct fake_cq *fcq;
	struct fake_flow a;
	struct fake_flow b;
	struct fake_req areqs[2 * FAKE_HOL_BACKLOG];
	struct fake_req breq;
	atomic_t a_dones;
	u32 a_next;
	u32 a_pushed;
	atomic_t a_inside;
	atomic_t b_dones;
	int b_polled;
	int b_saw;
	bool overlapped;
	atomic_t failures;
	wait_queue_head_t wq;
};

static void fake_hol_a_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct fake_req *req = container_of(wc->wr_cqe, struct fake_req, cqe);
	struct fake_hol *h = ib_ocq_private(cq);

	if (req->seq != h->a_next++ || wc->status != IB_WC_SUCCESS) {
		atomic_inc(&h->failures);
		pr_info("# flow A: seq %u out of order or failed\n", req->seq);
	}
	atomic_inc(&h->a_inside);
	mdelay(FAKE_HOL_A_MS);
	atomic_dec(&h->a_inside);
	atomic_inc(&h->a_dones);
	wake_up(&h->wq);
}

static void fake_hol_b_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct fake_hol *h = ib_ocq_private(cq);

	h->b_saw = atomic_read(&h->a_dones);
	if (atomic_read(&h->a_inside))
		h->overlapped = true;
	/* pairs with atomic_read_acquire() in fake_hol_round() */
	atomic_inc_return_release(&h->b_dones);
	wake_up(&h->wq);
}

/* The fake CQ's watch: B's completion leaves the CQ (under the CQ's lock). */
static void fake_hol_b_polled(struct fake_cq *fcq)
{
	struct fake_hol *h = fcq->ibcq.cq_context;

	h->b_polled = atomic_read(&h->a_dones);
}

static void fake_hol_push(struct fake_hol *h, struct fake_flow *f,
			  struct fake_req *req)
{
	fake_push_req(h->fcq, &f->qp, req, IB_WC_RECV, &h->failures);
}

/* The most A done() calls a B completion waited for, and how many B's. */
struct fake_hol_waits {
	int in_cq;
	int to_done;
	unsigned int samples;
};

/*
 * One backlog of @n A completions, then B completions one at a time while
 * enough of the backlog is left: the A done() calls each B waited for in
 * the CQ and until its done().
 */
static int fake_hol_round(struct fake_hol *h, u32 n, struct fake_hol_waits *w)
{
	unsigned long bound = msecs_to_jiffies(fake_params.stall_ms);
	int base = atomic_read(&h->a_dones), at, b;
	u32 i;

	for (i = 0; i < n; i++) {
		h->areqs[i].seq = h->a_pushed++;
		fake_hol_push(h, &h->a, &h->areqs[i]);
	}
	/* A's domain is busy with the backlog */
	if (!wait_event_timeout(h->wq, atomic_read(&h->a_dones) > base, bound))
		return -ETIMEDOUT;
	for (;;) {
		at = atomic_read(&h->a_dones);
		if (base + (int)n - at <= FAKE_HOL_BOUND)
			break; /* too little backlog left to tell */
		b = atomic_read(&h->b_dones);
		fake_hol_push(h, &h->b, &h->breq);
		if (!wait_event_timeout(h->wq,
					atomic_read_acquire(&h->b_dones) != b,
					bound))
			return -ETIMEDOUT;
		/* the CQ's lock, taken to poll B, came before B's done() */
		w->in_cq = max(w->in_cq, READ_ONCE(h->b_polled) - at);
		w->to_done = max(w->to_done, h->b_saw - at);
		w->samples++;
	}
	if (!wait_event_timeout(h->wq, atomic_read(&h->a_dones) == base + n,
				bound))
		return -ETIMEDOUT;
	return 0;
}

/*
 * Give B the first QP number of A's + 2, + 4, ... whose completion overtakes
 * a backlog of A's: one in the other domain.  QP numbers of one parity are
 * what a device's loopback receivers get, and a mapping of keys to domains
 * that keeps their low bits puts them all in A's domain: then @found stays
 * false.
 */
static int fake_hol_pick_b(struct fake_hol *h, bool *found)
{
	unsigned long bound = msecs_to_jiffies(fake_params.stall_ms);
	unsigned int t, i;
	int base, b;

	*found = false;
	for (t = 1; t <= FAKE_HOL_B_TRIES && !*found; t++) {
		h->b.qp.qp_num = h->a.qp.qp_num + 2 * t;
		base = atomic_read(&h->a_dones);
		for (i = 0; i < FAKE_HOL_PROBE; i++) {
			h->areqs[i].seq = h->a_pushed++;
			fake_hol_push(h, &h->a, &h->areqs[i]);
		}
		b = atomic_read(&h->b_dones);
		fake_hol_push(h, &h->b, &h->breq);
		if (!wait_event_timeout(h->wq,
					atomic_read_acquire(&h->b_dones) != b,
					bound))
			return -ETIMEDOUT;
		/* in A's domain, B's done() runs after the whole backlog's */
		*found = h->b_saw < base + FAKE_HOL_PROBE;
		if (!wait_event_timeout(h->wq,
					atomic_read(&h->a_dones) ==
						base + FAKE_HOL_PROBE,
					bound))
			return -ETIMEDOUT;
	}
	return 0;
}

static void fake_hol_init(struct fake_hol *h)
{
	unsigned int i;

	init_waitqueue_head(&h->wq);
	/* the engine's default flow key: the QP number (B's: fake_hol_pick_b()) */
	h->a.qp.qp_num = 0x100;
	for (i = 0; i < ARRAY_SIZE(h->areqs); i++) {
		h->areqs[i].cqe.done = fake_hol_a_done;
		h->areqs[i].flow = &h->a;
	}
	h->breq.cqe.done = fake_hol_b_done;
	h->breq.flow = &h->b;
}

/*
 * fake_flow_hol: B is the first of QPs A + 2, A + 4, ... (A's parity) in
 * the other of the two domains (fake_hol_pick_b(); none is a failure).
 * Then, while A's domain works through a backlog of 5 ms done() calls, each
 * B completion waits in the CQ for at most IB_OCQ_HOL_DONES of them plus
 * FAKE_HOL_CQ_SLACK, and until its done() for FAKE_HOL_DONE_SLACK more,
 * counted in A done() calls rather than time, with FAKE_HOL_BACKLOG and
 * with twice that: the wait does not grow with the backlog.
 */
int fake_run_flow_hol(const struct fake_scenario *sc, struct fake_dev *fdev,
		      struct fake_ktap *k)
{
	struct ib_ocq_attr attr = {
		.mode = IB_OCQ_FLOW,
		.nr_domains = 2,
	};
	struct fake_hol_waits w[2] = {};
	unsigned int half, i;
	int ret = 0;
	struct fake_hol *h;
	bool ok, spread = false;

	if (num_online_cpus() < 2) {
		fake_skip(k, "flow", "needs two online CPUs");
		return 0;
	}
	h = kzalloc(sizeof(*h), GFP_KERNEL);
	if (!h)
		return -ENOMEM;
	fake_hol_init(h);
	fdev->sem = sc->sem;
	fdev->rnd = fake_seed(4000);
	fdev->ring = 0;
	h->ocq = ib_ocq_alloc(&fdev->ibdev, h, fake_params.cqe, 0, &attr);
	if (IS_ERR(h->ocq)) {
		ret = PTR_ERR(h->ocq);
		kfree(h);
		return ret;
	}
	h->fcq = to_fake_cq(ib_ocq_cq(h->ocq));
	spin_lock_irq(&h->fcq->lock);
	h->fcq->watch_cqe = &h->breq.cqe;
	h->fcq->watch = fake_hol_b_polled;
	spin_unlock_irq(&h->fcq->lock);
	ret = fake_hol_pick_b(h, &spread);
	h->overlapped = false; /* the rounds' own, not the probe's */
	if (!ret && !spread)
		pr_info("# flow: QPs %#x to %#x all in the domain of QP %#x\n",
			h->a.qp.qp_num + 2, h->b.qp.qp_num, h->a.qp.qp_num);
	else if (!ret)
		pr_info("# flow: A is QP %#x, B QP %#x\n", h->a.qp.qp_num,
			h->b.qp.qp_num);
	for (half = 0; half < 2 && !ret && spread; half++)
		for (i = 0; i < FAKE_HOL_ROUNDS && !ret; i++)
			ret = fake_hol_round(h, FAKE_HOL_BACKLOG << half,
					     &w[half]);
	for (half = 0; half < 2 && spread; half++)
		pr_info("# flow: A backlog %u: %u B completions waited for at most %d A done() calls in the CQ (bound %u), %d until their done() (bound %u)\n",
			FAKE_HOL_BACKLOG << half, w[half].samples,
			w[half].in_cq, FAKE_HOL_CQ_BOUND, w[half].to_done,
			FAKE_HOL_BOUND);
	if (ret)
		pr_info("# flow: no progress for %u ms: A done %d of %u, B done %d\n",
			fake_params.stall_ms, atomic_read(&h->a_dones),
			h->a_pushed, atomic_read(&h->b_dones));
	if (!h->overlapped)
		pr_info("# flow: no B done() ran during an A done(): one domain?\n");
	ib_ocq_free(h->ocq);
	ok = !ret && spread && !atomic_read(&h->failures) && h->overlapped;
	for (half = 0; half < 2; half++)
		ok = ok && w[half].samples &&
		     w[half].in_cq <= FAKE_HOL_CQ_BOUND &&
		     w[half].to_done <= FAKE_HOL_BOUND;
	fake_result(k, ok, "flow", NULL);
	kfree(h);
	return ret;
}

/* --- fake_resume_race: resumes racing the run under postponed arm --- */

/* the lease: long enough never to end a postponed arm in the test */
#define FAKE_RACE_PAUSE_MS IB_OCQ_MAX_PAUSE_MS
/* after the last resume, everything must be delivered within this */
#define FAKE_RACE_QUIET_MS 500
/* completions pushed after the last resume, which must arrive without one */
#define FAKE_RACE_TAIL 4
/* the resumers' sleeps, in microseconds */
#define FAKE_RACE_MIN_US 10
#define FAKE_RACE_SPAN_US 200
/* the resumers' last resumes: how many, and at most how far apart in us */
#define FAKE_RACE_BURST 100
#define FAKE_RACE_BURST_US 10
/* most resumer kthreads */
#define FAKE_RACE_RESUMERS 8

/*
 * fake_resume_race: resume at random until stopped, then a burst of
 * resumes a few microseconds apart: each starts a pass, which arms, so the
 * last one lands at a random point of a pass, often while it arms.
 */
static int fake_resumer(void *arg)
{
	struct fake_run *r = arg;
	u32 rnd = fake_seed(300 + raw_smp_processor_id());
	unsigned int us, i;

	while (!kthread_should_stop()) {
		us = FAKE_RACE_MIN_US + fake_rand(&rnd) % FAKE_RACE_SPAN_US;
		usleep_range(us, us + FAKE_RACE_MIN_US);
		ib_ocq_resume(r->ocq);
	}
	for (i = 0; i < FAKE_RACE_BURST; i++) {
		udelay(1 + fake_rand(&rnd) % FAKE_RACE_BURST_US);
		ib_ocq_resume(r->ocq);
	}
	return 0;
}

static int fake_resumers_start(struct fake_run *r, struct task_struct **t,
			       unsigned int *nt)
{
	int cpu;

	*nt = 0;
	for_each_online_cpu(cpu) {
		if (*nt == FAKE_RACE_RESUMERS)
			break;
		t[*nt] = kthread_create_on_cpu(fake_resumer, r, cpu,
					       "ocq_resumer/%u");
		if (IS_ERR(t[*nt]))
			return PTR_ERR(t[*nt]);
		atomic_inc(&fake_objects);
		wake_up_process(t[(*nt)++]);
	}
	return 0;
}

static void fake_resumers_stop(struct task_struct **t, unsigned int *nt)
{
	while (*nt) {
		kthread_stop(t[--*nt]);
		atomic_dec(&fake_objects);
	}
}

/* Wait, spinning politely, until the producers pushed everything. */
static bool fake_wait_pushed(struct fake_run *r)
{
	unsigned long bound = msecs_to_jiffies(fake_params.stall_ms);
	unsigned long last_change = jiffies;
	long last = -1, now;

	while (!fake_finished(r)) {
		now = atomic_long_read(&r->delivered);
		if (now != last) {
			last = now;
			last_change = jiffies;
		} else if (time_after(jiffies, last_change + bound)) {
			return false;
		}
		usleep_range(5, 10);
	}
	return true;
}

/*
 * Push the last FAKE_RACE_TAIL completions of flow 0 (its producer left
 * them out) from the test thread, in one burst: the run the burst's event
 * starts sees them all, and postpones the arm only after them.
 */
static void fake_race_tail(struct fake_run *r)
{
	fake_push_batch(&r->flows[0], FAKE_RACE_TAIL);
}

/*
 * One stream: resumers on every CPU race the run while the producers push,
 * and stop (each with a last resume) as soon as everything is pushed; then
 * everything must be delivered without another resume, and so must a few
 * completions pushed after the last resume, whose arm they rely on.
 */
static int fake_race_cycle(struct fake_run *r, struct fake_dev *fdev,
			   unsigned int cycle, u64 *pauses)
{
	struct task_struct *t[FAKE_RACE_RESUMERS];
	unsigned int nt = 0;
	struct ib_ocq_stats s;
	bool ok;
	int ret;

	fake_run_reset(r);
	fdev->sem = r->sc->sem;
	fdev->rnd = fake_seed(3000 + 8 * cycle + r->mode);
	fdev->ring = 0;
	ret = fake_ocq_create(r, fdev);
	if (ret)
		return ret;
	ret = fake_resumers_start(r, t, &nt);
	if (!ret)
		ret = fake_producers_start(r);
	if (ret)
		goto out;
	ok = fake_wait_pushed(r);
	fake_resumers_stop(t, &nt);
	if (!fake_check(r, ok, "the producers pushed everything"))
		goto out;
	if (!fake_wait_all(r, FAKE_RACE_QUIET_MS)) {
		pr_info("# %s: cycle %u: %llu of %llu delivered %u ms after the last resume: paused with work pending\n",
			r->name, cycle, (u64)atomic_long_read(&r->delivered),
			fake_pushed(r), FAKE_RACE_QUIET_MS);
		fake_print_stall(r);
		atomic_inc(&r->failures);
		/* the explicit "arm now" for the teardown */
		ib_ocq_resume(r->ocq);
		fake_wait_all(r, fake_params.stall_ms);
		goto out;
	}
	/*
	 * The last resume said "arm at the next drain": completions pushed
	 * now raise an event and arrive without another resume.  A resume the
	 * run swallowed leaves it postponed, and these in the CQ.
	 */
	fake_race_tail(r);
	if (!fake_wait_all(r, FAKE_RACE_QUIET_MS)) {
		pr_info("# %s: cycle %u: %llu of %llu delivered %u ms after %u pushed after the last resume: its arm was lost\n",
			r->name, cycle, (u64)atomic_long_read(&r->delivered),
			fake_pushed(r), FAKE_RACE_QUIET_MS, FAKE_RACE_TAIL);
		fake_print_stall(r);
		atomic_inc(&r->failures);
		ib_ocq_resume(r->ocq);
		fake_wait_all(r, fake_params.stall_ms);
		goto out;
	}
	ib_ocq_resume(r->ocq);
	fake_check(r, fake_wait_armed(r->fcq, fake_params.stall_ms),
		   "ends empty and armed");
	fake_cq_quiesce(r->fcq);
	ib_ocq_pause(r->ocq);
	fake_wait_quiet(r->fcq);
	fake_stats_settled(r->ocq, &s, r->fcq->pushed);
	*pauses += s.pauses;
	if (!fake_check(r, !ocq_compat_lease_resumes(&s),
			"no postponed arm ended by the lease"))
		fake_print_stats(r, &s);
	fake_check(r, s.completions == r->fcq->pushed, "completions == pushed");
out:
	fake_resumers_stop(t, &nt);
	fake_producers_stop(r);
	fake_ocq_free(r);
	return ret;
}

int fake_run_resume_race(struct fake_run *r, struct fake_dev *fdev,
			 struct fake_ktap *k)
{
	unsigned int i;
	u64 pauses = 0;
	int ret = 0;

	r->attr.flags = IB_OCQ_POSTPONE_ARM;
	ocq_compat_set_pause_ms(&r->attr, FAKE_RACE_PAUSE_MS);
	/* fake_race_tail() pushes these: the CQ positions stay below total */
	r->flows[0].quota -= FAKE_RACE_TAIL;
	for (i = 0; i < FAKE_RACE_CYCLES && !ret && !atomic_read(&r->failures);
	     i++)
		ret = fake_race_cycle(r, fdev, i, &pauses);
	pr_info("# %s: %u cycles of %llu completions, %llu postponed arms and pauses\n",
		r->name, i, r->total, pauses);
	fake_check(r, pauses > i, "arms were postponed");
	fake_result(k, !ret && !atomic_read(&r->failures), r->name, NULL);
	return ret;
}

/* --- fake_parallel_slow: a slow process() does not hold up the others --- */

/* completions behind the slow one, per round */
#define FAKE_PSLOW_OTHERS 8
/* the slow process() lasts this long, or until all the others ran */
#define FAKE_PSLOW_MS 1000
#define FAKE_PSLOW_ROUNDS 3

/**
 * struct fake_pslow - %IB_OCQ_PARALLEL with two workers: the first
 *	completion of a round takes long in process(), the others are cheap
 * @ocq: the OCQ
 * @fcq: its fake CQ, %FAKE_TRICKLE: one completion per poll, so that the
 *	CQ run hands them on one at a time
 * @f: the flow (its QP)
 * @reqs: a round's requests, the slow one first
 * @others: process() calls of the others in this round
 * @during: of those, how many ran while the slow one did
 * @next_seq: the sequence number done() expects
 * @seq: the next sequence number pushed
 * @dones: done() calls
 * @failures: failed checks in done()
 * @wq: the test waits here
 */
struct fake_pslow {
	struct ib_ocq *ocq;
	struct fake_cq *fcq;
	struct fake_flow f;
	struct fake_req reqs[FAKE_PSLOW_OTHERS + 1];
	atomic_t others;
	int during;
	u32 next_seq;
	u32 seq;
	atomic_t dones;
	atomic_t failures;
	wait_queue_head_t wq;
};

static void fake_pslow_process(struct ib_cq *cq, struct ib_wc *wc)
{
	struct fake_req *req = container_of(wc->wr_cqe, struct fake_req, cqe);
	struct fake_pslow *h = ib_ocq_private(cq);
	unsigned long end = jiffies + msecs_to_jiffies(FAKE_PSLOW_MS);

	if (req != &h->reqs[0]) {
		atomic_inc(&h->others);
		return;
	}
	while (atomic_read(&h->others) < FAKE_PSLOW_OTHERS &&
	       time_before(jiffies, end))
		usleep_range(10, 20);
	h->during = atomic_read(&h->others);
}

static void fake_pslow_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct fake_req *req = container_of(wc->wr_cqe, struct fake_req, cqe);
	struct fake_pslow *h = ib_ocq_private(cq);

	if (req->seq != h->next_seq++ || wc->status != IB_WC_SUCCESS) {
		atomic_inc(&h->failures);
		pr_info("# parallel: seq %u out of order or failed\n",
			req->seq);
	}
	atomic_inc(&h->dones);
	wake_up(&h->wq);
}

/* Push a round's completions at once, as a burst of CQEs. */
static void fake_pslow_push(struct fake_pslow *h)
{
	struct fake_cq *fcq = h->fcq;
	unsigned long flags;
	unsigned int i;
	bool direct;

	spin_lock_irqsave(&fcq->lock, flags);
	for (i = 0; i < ARRAY_SIZE(h->reqs); i++) {
		struct ib_wc wc = {
			.wr_cqe = &h->reqs[i].cqe,
			.status = IB_WC_SUCCESS,
			.opcode = IB_WC_RECV,
			.qp = &h->f.qp,
		};

		h->reqs[i].seq = h->seq++;
		if (!fake_cq_add(fcq, &wc, &h->reqs[i].pos))
			atomic_inc(&h->failures);
	}
	direct = fake_cq_land(fcq);
	spin_unlock_irqrestore(&fcq->lock, flags);
	if (direct)
		fake_direct(fcq);
}

static int fake_pslow_round(struct fake_pslow *h, unsigned int round)
{
	unsigned long bound =
		msecs_to_jiffies(fake_params.stall_ms + FAKE_PSLOW_MS);
	int base = atomic_read(&h->dones);

	if (!fake_wait_armed(h->fcq, fake_params.stall_ms))
		return -ETIMEDOUT;
	atomic_set(&h->others, 0);
	h->during = -1;
	fake_pslow_push(h);
	if (!wait_event_timeout(h->wq,
				atomic_read(&h->dones) ==
					base + (int)ARRAY_SIZE(h->reqs),
				bound))
		return -ETIMEDOUT;
	pr_info("# parallel: round %u: %d of %u completions behind the slow process() were processed while it ran\n",
		round, h->during, FAKE_PSLOW_OTHERS);
	return h->during >= 1 ? 0 : -EAGAIN;
}

/*
 * fake_parallel_slow: in each round, a completion whose process() takes up
 * to FAKE_PSLOW_MS and FAKE_PSLOW_OTHERS cheap ones behind it, handed to
 * the workers one at a time: at least one of those must be processed by
 * the other worker while the slow one runs.  The CQ run does not poll
 * further while the commit step waits for the slow completion, so that
 * one may be all.
 */
int fake_run_parallel_slow(const struct fake_scenario *sc,
			   struct fake_dev *fdev, struct fake_ktap *k)
{
	struct ib_ocq_attr attr = {
		.mode = IB_OCQ_PARALLEL,
		.nr_domains = 2,
		.process = fake_pslow_process,
	};
	struct fake_pslow *h;
	unsigned int i, failed = 0;
	int ret = 0, r;

	if (num_online_cpus() < 2) {
		fake_skip(k, "parallel", "needs two online CPUs");
		return 0;
	}
	h = kzalloc(sizeof(*h), GFP_KERNEL);
	if (!h)
		return -ENOMEM;
	init_waitqueue_head(&h->wq);
	h->f.qp.qp_num = 0x100;
	for (i = 0; i < ARRAY_SIZE(h->reqs); i++) {
		h->reqs[i].cqe.done = fake_pslow_done;
		h->reqs[i].flow = &h->f;
	}
	fdev->sem = sc->sem;
	fdev->rnd = fake_seed(5000);
	fdev->ring = 0;
	h->ocq = ib_ocq_alloc(&fdev->ibdev, h, fake_params.cqe, 0, &attr);
	if (IS_ERR(h->ocq)) {
		ret = PTR_ERR(h->ocq);
		kfree(h);
		return ret;
	}
	h->fcq = to_fake_cq(ib_ocq_cq(h->ocq));
	for (i = 0; i < FAKE_PSLOW_ROUNDS && !ret; i++) {
		r = fake_pslow_round(h, i);
		if (r == -EAGAIN)
			failed++;
		else
			ret = r;
	}
	if (ret)
		pr_info("# parallel: no progress: %d done() calls of %u\n",
			atomic_read(&h->dones), h->seq);
	ib_ocq_free(h->ocq);
	fake_result(k, !ret && !failed && !atomic_read(&h->failures),
		    "parallel", NULL);
	kfree(h);
	return ret;
}
