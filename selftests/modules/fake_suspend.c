// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fake_suspend - ocq_test_fake's fake_suspend: consumer-driven suspension
 * (&ib_ocq_attr.suspend_usecs, ib_ocq_busy_poll()).  The fake CQ's events
 * are moderated (%FAKE_MODERATED), so that a busy poll can find a
 * completion before its event.  A kthread that busy-polls while a stream
 * comes keeps the CQ's events off after the first, takes the completions
 * itself and delivers each once, in order; once it stops, the timer's run
 * arms the CQ and the next completion comes through an event; an empty
 * busy poll arms nothing and keeps the suspension (NAPI's rule): the CQ
 * stays unarmed while the ULP polls, and the timer's run arms it after;
 * ib_ocq_busy_poll() from done(), on a paused OCQ, without suspend_usecs,
 * with a bad budget or on a CQ ocq did not make is refused; bad attributes
 * are refused; busy polls racing events and a short timer lose, reorder
 * and overlap nothing; an OCQ freed with the suspension's timer pending
 * goes cleanly.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/wait.h>
#include <rdma/ib_ocq.h>
#include <rdma/ib_verbs.h>

#include "ocq_test_compat.h"
#include "ocq_test_ctx.h"
#include "fake.h"

/* QPs the stream alternates between: flow mode's flows */
#define FAKE_SUS_QPS 2
/* requests per QP: more than can be outstanding */
#define FAKE_SUS_REQS 16
/* completions the stream keeps outstanding at most, over all QPs */
#define FAKE_SUS_AHEAD 8
/* the suspension: far longer than the stream's gaps, even under TCG */
#define FAKE_SUS_USECS 50000
/* completions of a stream, the pause between two pushes */
#define FAKE_SUS_STREAM 2000
#define FAKE_SUS_GAP_US 20
/* what one busy poll takes at most */
#define FAKE_SUS_BUDGET 64
/* the poller's nap while the CQ holds nothing for it */
#define FAKE_SUS_NAP_US 10
/*
 * Events a busy-polled stream may raise besides the first: one each time
 * the timer won (the poller held off for a whole suspension) or the
 * moderated event beat the poller; at most one per this many completions.
 */
#define FAKE_SUS_EVENT_RATIO 50
/* busy polls a test makes at most to enter a suspension */
#define FAKE_SUS_TRIES 20
/* fake_sus_keep(): empty busy polls, the sleep between two */
#define FAKE_SUS_KEEP_POLLS 30
#define FAKE_SUS_KEEP_GAP_MS 10
/* the race: a short suspension, the poller's naps up to twice as long */
#define FAKE_SUS_RACE_USECS 20
#define FAKE_SUS_RACE_STREAM 3000
/* teardown cycles */
#define FAKE_SUS_CYCLES 32

/**
 * struct fake_sus - one OCQ, the QPs whose completions it delivers, and
 * the busy polls of it
 * @ocq: the OCQ
 * @fcq: its fake CQ
 * @mode: its mode
 * @poll_ctx: its poll context
 * @usecs: its &ib_ocq_attr.suspend_usecs
 * @qps: the QPs; in flow mode each is a flow (its qp_num the flow key)
 * @reqs: each QP's requests
 * @pushed: completions pushed (test thread)
 * @next_pos: the CQ position done() expects next, strict (D)
 * @delivered: done() calls (A)
 * @by_caller: of those, in the task that busy-polls (A)
 * @inside: done() calls running now, strict (A)
 * @failures: failed checks (A)
 * @reports: failures printed (A)
 * @freed: ib_ocq_free() returned (A)
 * @self_poll: done() calls ib_ocq_busy_poll() once, and clears it (A)
 * @self_ret: what that call returned (A)
 * @caller: the task that busy-polls (A)
 * @poller: the busy-polling kthread, or NULL
 * @race: the poller polls whether or not the CQ holds anything
 * @rnd: the poller's random state
 * @calls: ib_ocq_busy_poll() calls (busy-polling task)
 * @took: calls that returned completions
 * @empty: calls that returned 0
 * @ebusy: calls that returned -EBUSY
 * @got: completions the calls returned
 * @last: what the last call returned
 * @wq: the test waits here for done() calls
 */
struct fake_sus {
	struct ib_ocq *ocq;
	struct fake_cq *fcq;
	enum ib_ocq_mode mode;
	enum ib_poll_context poll_ctx;
	unsigned int usecs;
	struct fake_flow qps[FAKE_SUS_QPS];
	struct fake_req reqs[FAKE_SUS_QPS][FAKE_SUS_REQS];
	u64 pushed;
	u64 next_pos;
	atomic_long_t delivered;
	atomic_long_t by_caller;
	atomic_t inside;
	atomic_t failures;
	atomic_t reports;
	bool freed;
	bool self_poll;
	int self_ret;
	struct task_struct *caller;
	struct task_struct *poller;
	bool race;
	u32 rnd;
	u64 calls;
	u64 took;
	u64 empty;
	u64 ebusy;
	u64 got;
	int last;
	wait_queue_head_t wq;
};

static void fake_sus_fail(struct fake_sus *h, const char *what,
			  const struct fake_req *req)
{
	atomic_inc(&h->failures);
	if (atomic_inc_return(&h->reports) > FAKE_MAX_REPORTS)
		return;
	pr_info("# suspend: %s: qp %#x seq %u pos %llu\n", what,
		req->flow->qp.qp_num, req->seq, req->pos);
}

static bool fake_sus_check(struct fake_sus *h, bool ok, const char *what)
{
	if (!ok) {
		atomic_inc(&h->failures);
		pr_info("# suspend: check failed: %s\n", what);
	}
	return ok;
}

/*
 * Once, in its flow's order, strict: in CQ order, one at a time; in the
 * task that busy-polls, or where the poll context promises.
 */
static void fake_sus_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct fake_req *req = container_of(wc->wr_cqe, struct fake_req, cqe);
	struct fake_sus *h = ib_ocq_private(cq);
	struct fake_flow *f = req->flow;
	atomic_t *inside = h->mode == IB_OCQ_FLOW ? &f->inside : &h->inside;
	bool caller = current == READ_ONCE(h->caller);

	if (atomic_inc_return(inside) != 1)
		fake_sus_fail(h, "done() concurrent", req);
	if (!caller && !ocq_test_in_ctx(h->poll_ctx, false))
		fake_sus_fail(h, "done() in the wrong context", req);
	if (READ_ONCE(h->freed))
		fake_sus_fail(h, "done() after free", req);
	if (atomic_xchg(&req->state, FAKE_FREE) != FAKE_QUEUED)
		fake_sus_fail(h, "delivered twice", req);
	if (req->seq != (u32)atomic_read(&f->completed))
		fake_sus_fail(h, "out of flow order", req);
	if (h->mode != IB_OCQ_FLOW) {
		if (req->pos != h->next_pos)
			fake_sus_fail(h, "out of CQ order", req);
		h->next_pos = req->pos + 1;
	}
	if (READ_ONCE(h->self_poll)) {
		WRITE_ONCE(h->self_ret, ib_ocq_busy_poll(cq, FAKE_SUS_BUDGET));
		WRITE_ONCE(h->self_poll, false);
	}
	atomic_dec(inside);
	if (caller)
		atomic_long_inc(&h->by_caller);
	/* the request is reused after this: pairs with fake_sus_room() */
	atomic_inc_return_release(&f->completed);
	atomic_long_inc(&h->delivered);
	wake_up(&h->wq);
}

static void fake_sus_reset(struct fake_sus *h, enum ib_ocq_mode mode,
			   enum ib_poll_context poll_ctx, unsigned int usecs)
{
	unsigned int q, i;

	memset(h, 0, sizeof(*h));
	init_waitqueue_head(&h->wq);
	h->mode = mode;
	h->poll_ctx = poll_ctx;
	h->usecs = usecs;
	h->rnd = fake_seed(7000 + mode);
	for (q = 0; q < FAKE_SUS_QPS; q++) {
		h->qps[q].qp.qp_num = 0x100 + q;
		for (i = 0; i < FAKE_SUS_REQS; i++) {
			h->reqs[q][i].cqe.done = fake_sus_done;
			h->reqs[q][i].flow = &h->qps[q];
		}
	}
}

/*
 * A fresh OCQ with h->usecs, on a fake CQ whose events are moderated:
 * ib_ocq_alloc() for the workqueue context, else ib_ocq_alloc_cq().
 */
static int fake_sus_create(struct fake_sus *h, struct fake_dev *fdev,
			   const struct fake_scenario *sc)
{
	struct ib_ocq_attr attr = {
		.mode = h->mode,
		.nr_domains = h->mode == IB_OCQ_FLOW ? FAKE_SUS_QPS : 0,
		.suspend_usecs = h->usecs,
	};
	struct ib_cq *cq;

	fdev->sem = sc->sem;
	fdev->rnd = fake_seed(7100 + h->mode);
	fdev->ring = 0;
	if (h->poll_ctx == IB_POLL_WORKQUEUE) {
		h->ocq = ib_ocq_alloc(&fdev->ibdev, h, fake_params.cqe, 0,
				      &attr);
	} else {
		cq = ib_ocq_alloc_cq(&fdev->ibdev, h, fake_params.cqe, 0,
				     h->poll_ctx, &attr);
		h->ocq = IS_ERR(cq) ? ERR_CAST(cq) : ib_cq_to_ocq(cq);
	}
	if (IS_ERR(h->ocq)) {
		int ret = PTR_ERR(h->ocq);

		pr_info("# suspend: ib_ocq_alloc: %d\n", ret);
		h->ocq = NULL;
		return ret;
	}
	h->fcq = to_fake_cq(ib_ocq_cq(h->ocq));
	return 0;
}

static void fake_sus_free(struct fake_sus *h)
{
	if (h->poll_ctx == IB_POLL_WORKQUEUE)
		ib_ocq_free(h->ocq);
	else
		ib_ocq_free_cq(ib_ocq_cq(h->ocq));
	WRITE_ONCE(h->freed, true);
	h->ocq = NULL;
	h->fcq = NULL;
}

static void fake_sus_stats(struct fake_sus *h, struct ib_ocq_stats *s)
{
	ib_ocq_get_stats(h->ocq, s);
}

static void fake_sus_print(const char *name, const struct fake_sus *h,
			   const struct ib_ocq_stats *s)
{
	pr_info("# %s: completions %llu events %llu runs %llu arms %llu busy_polls %llu suspends %llu contended %llu domain_runs %llu inlined %llu parks %llu\n",
		name, s->completions, s->events, s->runs, s->arms,
		s->busy_polls, s->suspends, s->contended, s->domain_runs,
		s->inlined, s->parks);
	pr_info("# %s: busy polls: %llu calls, %llu took %llu completions, %llu empty, %llu -EBUSY; %ld done() in the poller\n",
		name, h->calls, h->took, h->got, h->empty, h->ebusy,
		atomic_long_read(&h->by_caller));
}

/* The fake CQ is armed and empty, now. */
static bool fake_sus_armed(struct fake_sus *h)
{
	unsigned long flags;
	bool armed;

	spin_lock_irqsave(&h->fcq->lock, flags);
	armed = h->fcq->armed && h->fcq->head == h->fcq->tail;
	spin_unlock_irqrestore(&h->fcq->lock, flags);
	return armed;
}

/* The fake CQ holds completions nobody polled yet (a racy look). */
static bool fake_sus_pending(struct fake_sus *h)
{
	return READ_ONCE(h->fcq->visible) != READ_ONCE(h->fcq->tail);
}

/* One busy poll from the calling task, counted; false on a bad return. */
static bool fake_sus_poll(struct fake_sus *h)
{
	int ret;

	WRITE_ONCE(h->caller, current);
	ret = ib_ocq_busy_poll(ib_ocq_cq(h->ocq), FAKE_SUS_BUDGET);
	h->calls++;
	h->last = ret;
	if (ret > 0) {
		h->took++;
		h->got += ret;
	} else if (!ret) {
		h->empty++;
	} else if (ret == -EBUSY) {
		h->ebusy++;
	} else {
		pr_info("# suspend: ib_ocq_busy_poll() returned %d\n", ret);
		atomic_inc(&h->failures);
		return false;
	}
	return true;
}

/*
 * The busy-polling kthread: polls while the CQ holds completions, else
 * (or after -EBUSY) naps briefly; in a race, polls and naps at random, up to twice the
 * suspension, whatever the CQ holds.
 */
static int fake_sus_poller(void *data)
{
	struct fake_sus *h = data;
	unsigned int nap;

	while (!kthread_should_stop()) {
		if (h->race) {
			if (!fake_sus_poll(h))
				break;
			nap = fake_rand(&h->rnd) % (2 * h->usecs + 1);
			usleep_range(nap, nap + FAKE_SUS_NAP_US);
		} else if (fake_sus_pending(h)) {
			if (!fake_sus_poll(h))
				break;
			/* a run holds the CQ and dispatches: stop a while */
			if (h->last == -EBUSY)
				usleep_range(FAKE_SUS_NAP_US,
					     2 * FAKE_SUS_NAP_US);
		} else {
			usleep_range(FAKE_SUS_NAP_US, 2 * FAKE_SUS_NAP_US);
		}
	}
	while (!kthread_should_stop())
		msleep(FAKE_POLL_MS);
	return 0;
}

static bool fake_sus_poller_start(struct fake_sus *h, const char *name)
{
	struct task_struct *t;

	t = kthread_run(fake_sus_poller, h, "fake_sus/%s", name);
	if (IS_ERR(t)) {
		pr_info("# %s: kthread_run: %ld\n", name, PTR_ERR(t));
		return false;
	}
	atomic_inc(&fake_objects);
	h->poller = t;
	return true;
}

static void fake_sus_poller_stop(struct fake_sus *h)
{
	if (!h->poller)
		return;
	kthread_stop(h->poller);
	atomic_dec(&fake_objects);
	h->poller = NULL;
}

/* The next push has a request free, and the stream is not too far ahead. */
static bool fake_sus_room(struct fake_sus *h)
{
	struct fake_flow *f = &h->qps[h->pushed % FAKE_SUS_QPS];

	/* pairs with atomic_inc_return_release() in fake_sus_done() */
	return f->pushed - (u32)atomic_read_acquire(&f->completed) <
		       FAKE_SUS_REQS &&
	       h->pushed - atomic_long_read(&h->delivered) < FAKE_SUS_AHEAD;
}

/* Push the next completion, of the QPs in turn. */
static void fake_sus_push(struct fake_sus *h)
{
	struct fake_flow *f = &h->qps[h->pushed % FAKE_SUS_QPS];
	struct fake_req *req =
		&h->reqs[h->pushed % FAKE_SUS_QPS][f->pushed % FAKE_SUS_REQS];

	req->seq = f->pushed++;
	atomic_set(&req->state, FAKE_QUEUED);
	fake_push_req(h->fcq, &f->qp, req, IB_WC_RECV, &h->failures);
	h->pushed++;
}

/* Wait until everything pushed was delivered; false after a stall. */
static bool fake_sus_wait_all(struct fake_sus *h)
{
	if (wait_event_timeout(h->wq,
			       atomic_long_read(&h->delivered) == h->pushed,
			       msecs_to_jiffies(fake_params.stall_ms)))
		return true;
	pr_info("# suspend: %ld of %llu delivered, then nothing for %u ms\n",
		atomic_long_read(&h->delivered), h->pushed,
		fake_params.stall_ms);
	return false;
}

/*
 * @n completions, one every %FAKE_SUS_GAP_US or so, at most
 * %FAKE_SUS_AHEAD outstanding; wait until all are delivered.
 */
static bool fake_sus_stream(struct fake_sus *h, u32 n)
{
	unsigned long bound = msecs_to_jiffies(fake_params.stall_ms);
	u32 i;

	for (i = 0; i < n; i++) {
		if (!wait_event_timeout(h->wq, fake_sus_room(h), bound)) {
			pr_info("# suspend: stream stalled after %u pushes, %ld delivered\n",
				i, atomic_long_read(&h->delivered));
			return false;
		}
		fake_sus_push(h);
		usleep_range(FAKE_SUS_GAP_US, 2 * FAKE_SUS_GAP_US);
	}
	return fake_sus_wait_all(h);
}

/*
 * Everything pushed was delivered once, in order; the counts agree (@s read
 * again until they count every completion pushed, fake_stats_settled()).
 */
static bool fake_sus_all_ok(struct fake_sus *h, struct ib_ocq_stats *s)
{
	if (s->completions < h->pushed)
		fake_stats_settled(h->ocq, s, h->pushed);
	return fake_sus_check(h,
			      atomic_long_read(&h->delivered) == h->pushed &&
				      s->completions == h->pushed,
			      "every completion delivered, and counted") &&
	       fake_sus_check(h, !h->fcq->overruns, "no CQ overrun") &&
	       !atomic_read(&h->failures);
}

/*
 * The busy polls the test counted are the OCQ's: every call that did not
 * return -EBUSY took the CQ unit and suspended (NAPI's rule: found work or
 * not; nothing here fails or pauses), every -EBUSY is contended, and (strict)
 * done() ran in the poller for each completion a call returned.
 */
static bool fake_sus_counts_ok(struct fake_sus *h, const struct ib_ocq_stats *s)
{
	return fake_sus_check(h, s->busy_polls == h->calls - h->ebusy,
			      "busy_polls counts the calls that polled") &&
	       fake_sus_check(h, s->contended == h->ebusy,
			      "contended counts the -EBUSY returns") &&
	       fake_sus_check(h, s->suspends == h->calls - h->ebusy,
			      "every call that polled suspended") &&
	       fake_sus_check(h,
			      h->mode != IB_OCQ_STRICT ||
				      atomic_long_read(&h->by_caller) == h->got,
			      "strict: done() in the poller for what it took");
}

/*
 * Wait until the CQ is armed and empty, and the moderated events of what
 * was pushed before have come (none is left to start a run later).
 */
static bool fake_sus_settle(struct fake_sus *h)
{
	unsigned long end = jiffies + msecs_to_jiffies(fake_params.stall_ms);

	do {
		if (fake_sus_armed(h) && !hrtimer_active(&h->fcq->soft))
			return true;
		msleep(FAKE_POLL_MS);
	} while (time_before(jiffies, end));
	return fake_sus_check(h, false, "the CQ settles armed");
}

/*
 * Enter a suspension from the test thread: on a settled CQ, push one
 * completion and busy-poll at once, before its moderated event; again if
 * the event's run took it.  True once a busy poll took it: the CQ is left
 * unarmed, the suspension's timer pending.
 */
static bool fake_sus_enter(struct fake_sus *h)
{
	unsigned int i;

	for (i = 0; i < FAKE_SUS_TRIES; i++) {
		if (!fake_sus_settle(h))
			return false;
		fake_sus_push(h);
		if (!fake_sus_poll(h))
			return false;
		if (h->last > 0)
			return true;
		if (!fake_sus_wait_all(h))
			return false;
	}
	return fake_sus_check(h, false, "a busy poll took a completion");
}

/*
 * (1) In @mode and @poll_ctx: a kthread busy-polls while a stream comes.
 * The first completion's event is the only one the stream must raise;
 * the poller takes the completions and delivers each once, in order;
 * busy polls suspended the CQ and are counted.  Then (2): the poller
 * stops, and without another call the timer's run arms the CQ; the next
 * completion comes through an event and a run, not a busy poll.
 */
static void fake_sus_busy(struct fake_sus *h, struct fake_dev *fdev,
			  const struct fake_scenario *sc, enum ib_ocq_mode mode,
			  enum ib_poll_context poll_ctx, const char *ctx,
			  struct fake_ktap *k)
{
	struct ib_ocq_stats s, s0, s1;
	char name[48];
	bool ok, armed, delivered;
	long caller;

	fake_sus_reset(h, mode, poll_ctx, FAKE_SUS_USECS);
	snprintf(name, sizeof(name), "%s_%s_busy_poll", fake_mode_names[mode],
		 ctx);
	if (fake_sus_create(h, fdev, sc)) {
		fake_result(k, false, name, "ib_ocq_alloc() failed");
		return;
	}
	ok = fake_sus_settle(h) && fake_sus_poller_start(h, name);
	ok = ok && fake_sus_check(h, fake_sus_stream(h, FAKE_SUS_STREAM),
				  "stream delivered");
	fake_sus_poller_stop(h);
	fake_sus_stats(h, &s);
	fake_sus_print(name, h, &s);
	delivered = ok && fake_sus_all_ok(h, &s) && fake_sus_counts_ok(h, &s);
	ok = delivered &&
	     fake_sus_check(h, s.suspends > 0, "busy polls suspended the CQ") &&
	     fake_sus_check(h, h->got * 2 > h->pushed,
			    "busy polls took most completions") &&
	     fake_sus_check(h, s.events <= 1 + h->pushed / FAKE_SUS_EVENT_RATIO,
			    "no events while the poller finds work");
	fake_result(k, ok, name, NULL);

	/* (2): the ULP stops; after a stream delivered whole, whatever it cost */
	snprintf(name, sizeof(name), "%s_%s_timer_arms", fake_mode_names[mode],
		 ctx);
	atomic_set(&h->failures, 0);
	ok = delivered && fake_sus_enter(h);
	if (ok) {
		fake_sus_stats(h, &s0);
		ok = fake_sus_check(h, !fake_sus_armed(h),
				    "the busy poll left the CQ unarmed") &&
		     fake_sus_check(h, fake_sus_wait_all(h),
				    "it delivered what it took");
		armed = ok && fake_wait_armed(h->fcq, fake_params.stall_ms);
		ok = ok && fake_sus_check(h, armed,
					  "the CQ armed without a busy poll");
		fake_sus_stats(h, &s1);
		pr_info("# %s: after the last busy poll: %llu runs, %llu arms, %llu events\n",
			name, s1.runs - s0.runs, s1.arms - s0.arms,
			s1.events - s0.events);
		ok = ok &&
		     fake_sus_check(h, s1.runs > s0.runs && s1.arms > s0.arms,
				    "a run armed it") &&
		     fake_sus_check(h, s1.busy_polls == s0.busy_polls,
				    "no busy poll meanwhile");
	}
	if (ok) {
		ok = fake_sus_settle(h);
		fake_sus_stats(h, &s0);
		caller = atomic_long_read(&h->by_caller);
		fake_sus_push(h);
		ok = ok &&
		     fake_sus_check(h, fake_sus_wait_all(h),
				    "a completion after the suspension") &&
		     fake_sus_settle(h);
		fake_sus_stats(h, &s1);
		pr_info("# %s: one completion after: %llu events, %llu runs\n",
			name, s1.events - s0.events, s1.runs - s0.runs);
		ok = ok &&
		     fake_sus_check(h, s1.events == s0.events + 1,
				    "it came through one event") &&
		     fake_sus_check(h, s1.runs > s0.runs, "and a run") &&
		     fake_sus_check(h,
				    atomic_long_read(&h->by_caller) == caller,
				    "not through a busy poll") &&
		     fake_sus_all_ok(h, &s1);
	}
	fake_result(k, ok, name, ok ? NULL : "after a failure or stall");
	fake_sus_free(h);
}

/*
 * Busy polls that find nothing, one every FAKE_SUS_KEEP_GAP_MS of a
 * suspension of h->usecs, for FAKE_SUS_KEEP_POLLS polls: none arms the CQ,
 * and no run comes between two of them that came within half the
 * suspension of each other (the host may delay a sleep: a longer gap is
 * counted as late, not checked); at least half of them must be on time.
 */
static bool fake_sus_keep(struct fake_sus *h, const char *name)
{
	struct ib_ocq_stats prev, now;
	u64 last, gap, half = (u64)h->usecs * NSEC_PER_USEC / 2;
	unsigned int i, late = 0, runs = 0;
	bool ok = true;

	fake_sus_stats(h, &prev);
	last = ktime_get_ns();
	for (i = 0; ok && i < FAKE_SUS_KEEP_POLLS; i++) {
		msleep(FAKE_SUS_KEEP_GAP_MS);
		fake_sus_stats(h, &now);
		gap = ktime_get_ns() - last;
		if (gap > half)
			late++;
		else if (now.runs != prev.runs || now.arms != prev.arms)
			runs++;
		ok = fake_sus_poll(h) &&
		     fake_sus_check(h, h->last == 0, "an empty busy poll: 0");
		last = ktime_get_ns();
		fake_sus_stats(h, &prev);
		ok = ok &&
		     fake_sus_check(h, prev.arms == now.arms,
				    "no busy poll arms the CQ") &&
		     fake_sus_check(h, !fake_sus_armed(h),
				    "the CQ unarmed while the ULP polls");
	}
	pr_info("# %s: %u empty busy polls, %u late, %u runs between two on time\n",
		name, i, late, runs);
	return ok && fake_sus_check(h, !runs, "no run while the ULP polls") &&
	       fake_sus_check(h, 2 * late <= FAKE_SUS_KEEP_POLLS,
			      "half of the polls on time");
}

/*
 * No busy poll since: the timer's run polls and arms the CQ (after the
 * longest suspension: the CQ may have stayed armed meanwhile).
 */
static bool fake_sus_timer_armed(struct fake_sus *h, const char *name,
				 const struct ib_ocq_stats *s0)
{
	struct ib_ocq_stats s1;
	bool armed;

	msleep(2 * IB_OCQ_MAX_SUSPEND_USECS / USEC_PER_MSEC + 200);
	armed = fake_wait_armed(h->fcq, fake_params.stall_ms);
	fake_sus_stats(h, &s1);
	pr_info("# %s: after the last busy poll: %llu runs, %llu arms, CQ %s\n",
		name, s1.runs - s0->runs, s1.arms - s0->arms,
		armed ? "armed" : "NOT armed");
	return fake_sus_check(h, armed, "the CQ armed without a busy poll") &&
	       fake_sus_check(h, s1.runs > s0->runs && s1.arms > s0->arms,
			      "the timer's run armed it") &&
	       fake_sus_all_ok(h, &s1);
}

/*
 * (3) NAPI's rule: an empty busy poll keeps the suspension.  On an idle
 * armed CQ, one returns 0, arms nothing and suspends; the CQ stays armed,
 * and once the timer's delay passed without another, its run arms it
 * again.  After a busy poll that took a completion (the CQ unarmed, its
 * event come and gone), empty busy polls, each within a tenth of the
 * suspension, keep it unarmed and no run comes; once they stop, the
 * timer's run arms it.
 */
static void fake_sus_empty(struct fake_sus *h, struct fake_dev *fdev,
			   const struct fake_scenario *sc, struct fake_ktap *k)
{
	struct ib_ocq_stats s0, s1;
	unsigned long end;
	u64 arms;
	bool ok;

	fake_sus_reset(h, IB_OCQ_STRICT, IB_POLL_WORKQUEUE,
		       IB_OCQ_MAX_SUSPEND_USECS);
	if (fake_sus_create(h, fdev, sc)) {
		fake_result(k, false, "empty_idle", "ib_ocq_alloc() failed");
		return;
	}
	ok = fake_sus_settle(h);
	fake_sus_stats(h, &s0);
	arms = h->fcq->arms;
	ok = ok && fake_sus_poll(h);
	fake_sus_stats(h, &s1);
	pr_info("# empty_idle: returned %d, %llu arms, %llu fake CQ arms, %llu suspends\n",
		h->last, s1.arms - s0.arms, h->fcq->arms - arms,
		s1.suspends - s0.suspends);
	ok = ok && fake_sus_check(h, h->last == 0, "an empty busy poll: 0") &&
	     fake_sus_check(h, s1.busy_polls == s0.busy_polls + 1,
			    "it polled") &&
	     fake_sus_check(h, s1.arms == s0.arms && h->fcq->arms == arms,
			    "no arm of a CQ still armed") &&
	     fake_sus_check(h, s1.suspends == s0.suspends + 1,
			    "it suspended") &&
	     fake_sus_check(h, fake_sus_armed(h), "the CQ still armed") &&
	     fake_sus_timer_armed(h, "empty_idle", &s1);
	fake_result(k, ok, "empty_idle", NULL);

	ok = ok && fake_sus_enter(h) &&
	     fake_sus_check(h, !fake_sus_armed(h), "suspended: unarmed") &&
	     fake_sus_check(h, fake_sus_wait_all(h), "delivered");
	/* its event comes while the timer holds the run: only a kick */
	end = jiffies + msecs_to_jiffies(fake_params.stall_ms);
	while (ok && hrtimer_active(&h->fcq->soft) && time_before(jiffies, end))
		usleep_range(100, 200);
	ok = ok && fake_sus_keep(h, "empty_keeps_suspension");
	fake_sus_stats(h, &s0);
	ok = ok && fake_sus_timer_armed(h, "empty_keeps_suspension", &s0);
	fake_result(k, ok, "empty_keeps_suspension", NULL);
	fake_sus_free(h);
}

static void fake_sus_expect(struct fake_ktap *k, const char *name, int ret,
			    int want)
{
	if (ret != want)
		pr_info("# %s: returned %d, expected %d\n", name, ret, want);
	fake_result(k, ret == want, name, NULL);
}

static void fake_sus_comp(struct ib_cq *cq, void *ctx)
{
}

/*
 * (4) What ib_ocq_busy_poll() refuses: a call from done() of the same CQ,
 * from an event's run and from a busy poll (-EBUSY, contended); a paused
 * OCQ (-EAGAIN, not contended); a budget of 0 or less, no CQ, a CQ ocq did
 * not make (-EINVAL); an OCQ without suspend_usecs, a direct one
 * (-EOPNOTSUPP).
 */
static void fake_sus_refusals(struct fake_sus *h, struct fake_dev *fdev,
			      const struct fake_scenario *sc,
			      struct fake_ktap *k)
{
	struct ib_cq_init_attr cq_attr = { .cqe = fake_params.cqe };
	struct ib_ocq_attr plain = {};
	struct ib_ocq_stats s0, s1;
	struct ib_ocq *ocq;
	struct ib_cq *cq;
	int ret;
	bool ok;

	fake_sus_reset(h, IB_OCQ_STRICT, IB_POLL_WORKQUEUE, FAKE_SUS_USECS);
	if (fake_sus_create(h, fdev, sc)) {
		fake_result(k, false, "refuse_from_done",
			    "ib_ocq_alloc() failed");
		return;
	}
	cq = ib_ocq_cq(h->ocq);
	/* from done() of an event's run */
	ok = fake_sus_settle(h);
	fake_sus_stats(h, &s0);
	WRITE_ONCE(h->self_ret, 1);
	WRITE_ONCE(h->self_poll, true);
	fake_sus_push(h);
	ok = ok && fake_sus_wait_all(h);
	fake_sus_stats(h, &s1);
	if (READ_ONCE(h->self_ret) != -EBUSY)
		pr_info("# refuse_from_done: returned %d\n",
			READ_ONCE(h->self_ret));
	fake_result(k,
		    ok && READ_ONCE(h->self_ret) == -EBUSY &&
			    s1.contended == s0.contended + 1 &&
			    s1.busy_polls == s0.busy_polls,
		    "refuse_from_done", "-EBUSY, contended");

	/* from done() of a busy poll: the caller holds the unit */
	ok = fake_sus_settle(h);
	fake_sus_stats(h, &s0);
	WRITE_ONCE(h->self_ret, 1);
	WRITE_ONCE(h->self_poll, true);
	fake_sus_push(h);
	ok = ok && fake_sus_poll(h) && fake_sus_wait_all(h);
	fake_sus_stats(h, &s1);
	if (READ_ONCE(h->self_ret) != -EBUSY)
		pr_info("# refuse_from_busy_poll: returned %d (the outer %d)\n",
			READ_ONCE(h->self_ret), h->last);
	fake_result(k,
		    ok && READ_ONCE(h->self_ret) == -EBUSY &&
			    s1.contended > s0.contended,
		    "refuse_from_busy_poll", "-EBUSY, contended");

	/* paused: -EAGAIN, not contended */
	ok = fake_sus_settle(h);
	ib_ocq_pause(h->ocq);
	fake_sus_stats(h, &s0);
	ret = ib_ocq_busy_poll(cq, FAKE_SUS_BUDGET);
	fake_sus_stats(h, &s1);
	ib_ocq_resume(h->ocq);
	if (s1.contended != s0.contended || s1.busy_polls != s0.busy_polls)
		ret = -EPROTO;
	fake_sus_expect(k, "refuse_paused", ok ? ret : -ETIME, -EAGAIN);
	fake_sus_expect(k, "refuse_budget_0", ib_ocq_busy_poll(cq, 0), -EINVAL);
	fake_sus_expect(k, "refuse_budget_negative", ib_ocq_busy_poll(cq, -1),
			-EINVAL);
	fake_sus_expect(k, "refuse_no_cq", ib_ocq_busy_poll(NULL, 1), -EINVAL);
	ok = fake_sus_settle(h);
	fake_sus_stats(h, &s1);
	fake_result(k, ok && fake_sus_all_ok(h, &s1), "refuse_left_it_working",
		    NULL);
	fake_sus_free(h);

	/* a CQ of the device that ocq did not make */
	fdev->sem = 0;
	fdev->ring = 0;
	cq = ib_create_cq(&fdev->ibdev, fake_sus_comp, NULL, NULL, &cq_attr);
	if (IS_ERR(cq)) {
		fake_result(k, false, "refuse_not_ocq",
			    "ib_create_cq() failed");
	} else {
		fake_sus_expect(k, "refuse_not_ocq",
				ib_ocq_busy_poll(cq, FAKE_SUS_BUDGET), -EINVAL);
		ib_destroy_cq(cq);
	}

	/* ordered CQs without suspend_usecs */
	ocq = ib_ocq_alloc(&fdev->ibdev, NULL, fake_params.cqe, 0, &plain);
	if (IS_ERR(ocq)) {
		fake_result(k, false, "refuse_no_suspend", "ib_ocq_alloc()");
	} else {
		fake_sus_expect(k, "refuse_no_suspend",
				ib_ocq_busy_poll(ib_ocq_cq(ocq),
						 FAKE_SUS_BUDGET),
				-EOPNOTSUPP);
		ib_ocq_free(ocq);
	}
	cq = ib_ocq_alloc_cq(&fdev->ibdev, NULL, fake_params.cqe, 0,
			     IB_POLL_DIRECT, &plain);
	if (IS_ERR(cq)) {
		fake_result(k, false, "refuse_direct", "ib_ocq_alloc_cq()");
	} else {
		fake_sus_expect(k, "refuse_direct",
				ib_ocq_busy_poll(cq, FAKE_SUS_BUDGET),
				-EOPNOTSUPP);
		ib_ocq_free_cq(cq);
	}
}

/**
 * struct fake_sus_attr - a suspension's attributes, good or bad
 * @name: subtest name
 * @mode: &ib_ocq_attr.mode
 * @flags: &ib_ocq_attr.flags
 * @usecs: &ib_ocq_attr.suspend_usecs
 * @defer: &ib_ocq_attr.defer_usecs
 * @cq: through ib_ocq_alloc_cq() with @poll_ctx, else ib_ocq_alloc()
 * @poll_ctx: the poll context, with @cq
 * @ok: the allocation succeeds
 */
struct fake_sus_attr {
	const char *name;
	enum ib_ocq_mode mode;
	unsigned int flags;
	unsigned int usecs;
	unsigned int defer;
	bool cq;
	enum ib_poll_context poll_ctx;
	bool ok;
};

static const struct fake_sus_attr fake_sus_attrs[] = {
	{ .name = "bad_suspend_too_big",
	  .usecs = IB_OCQ_MAX_SUSPEND_USECS + 1 },
	{ .name = "bad_suspend_postpone",
	  .flags = IB_OCQ_POSTPONE_ARM,
	  .usecs = FAKE_SUS_USECS },
	{ .name = "bad_suspend_defer_dim",
	  .flags = IB_OCQ_DEFER_DIM,
	  .usecs = FAKE_SUS_USECS,
	  .defer = 100 },
	{ .name = "bad_suspend_postpone_unbound",
	  .flags = IB_OCQ_POSTPONE_ARM,
	  .usecs = FAKE_SUS_USECS,
	  .cq = true,
	  .poll_ctx = IB_POLL_UNBOUND_WORKQUEUE },
	{ .name = "bad_suspend_defer_dim_unbound",
	  .flags = IB_OCQ_DEFER_DIM,
	  .usecs = FAKE_SUS_USECS,
	  .defer = 100,
	  .cq = true,
	  .poll_ctx = IB_POLL_UNBOUND_WORKQUEUE },
	{ .name = "bad_suspend_softirq",
	  .usecs = FAKE_SUS_USECS,
	  .cq = true,
	  .poll_ctx = IB_POLL_SOFTIRQ },
	{ .name = "bad_suspend_direct",
	  .usecs = FAKE_SUS_USECS,
	  .cq = true,
	  .poll_ctx = IB_POLL_DIRECT },
	{ .name = "bad_suspend_flow_too_big",
	  .mode = IB_OCQ_FLOW,
	  .usecs = IB_OCQ_MAX_SUSPEND_USECS + 1,
	  .cq = true,
	  .poll_ctx = IB_POLL_UNBOUND_WORKQUEUE },
	{ .name = "suspend_limit",
	  .usecs = IB_OCQ_MAX_SUSPEND_USECS,
	  .ok = true },
	{ .name = "suspend_with_defer",
	  .usecs = FAKE_SUS_USECS,
	  .defer = 100,
	  .ok = true },
	{ .name = "suspend_flow_unbound",
	  .mode = IB_OCQ_FLOW,
	  .usecs = 1,
	  .cq = true,
	  .poll_ctx = IB_POLL_UNBOUND_WORKQUEUE,
	  .ok = true },
	{ .name = "suspend_workqueue_cq",
	  .usecs = FAKE_SUS_USECS,
	  .cq = true,
	  .poll_ctx = IB_POLL_WORKQUEUE,
	  .ok = true },
	{ .name = "suspend_parallel",
	  .mode = IB_OCQ_PARALLEL,
	  .usecs = FAKE_SUS_USECS,
	  .ok = true },
	{ .name = "softirq_without_suspend",
	  .cq = true,
	  .poll_ctx = IB_POLL_SOFTIRQ,
	  .ok = true },
};

static void fake_sus_process(struct ib_cq *cq, struct ib_wc *wc)
{
}

/*
 * (5): each of fake_sus_attrs, -EINVAL or a success, with no warning and
 * the fake CQ of a refused one destroyed (the script checks that no OCQ
 * is left).
 */
static void fake_sus_attrs_run(struct fake_dev *fdev, struct fake_ktap *k)
{
	unsigned int i;

	fdev->sem = 0;
	fdev->ring = 0;
	for (i = 0; i < ARRAY_SIZE(fake_sus_attrs); i++) {
		const struct fake_sus_attr *c = &fake_sus_attrs[i];
		struct ib_ocq_attr attr = {
			.mode = c->mode,
			.flags = c->flags,
			.suspend_usecs = c->usecs,
			.defer_usecs = c->defer,
		};
		struct ib_ocq *ocq;
		struct ib_cq *cq;
		int ret;

		if (c->mode == IB_OCQ_PARALLEL)
			attr.process = fake_sus_process;
		if (c->cq) {
			cq = ib_ocq_alloc_cq(&fdev->ibdev, NULL,
					     fake_params.cqe, 0, c->poll_ctx,
					     &attr);
			ret = PTR_ERR_OR_ZERO(cq);
			if (!ret)
				ib_ocq_free_cq(cq);
		} else {
			ocq = ib_ocq_alloc(&fdev->ibdev, NULL, fake_params.cqe,
					   0, &attr);
			ret = PTR_ERR_OR_ZERO(ocq);
			if (!ret)
				ib_ocq_free(ocq);
		}
		if (c->ok ? ret : ret != -EINVAL)
			pr_info("# %s: returned %d, expected %s\n", c->name,
				ret, c->ok ? "success" : "-EINVAL");
		if (atomic_read(&fake_objects))
			pr_info("# %s: %d fake objects left\n", c->name,
				atomic_read(&fake_objects));
		fake_result(k,
			    (c->ok ? !ret : ret == -EINVAL) &&
				    !atomic_read(&fake_objects),
			    c->name, NULL);
	}
}

/*
 * (6) A race, in @mode and @poll_ctx: suspend_usecs %FAKE_SUS_RACE_USECS,
 * a kthread busy-polls and naps at random up to twice that, whatever the
 * CQ holds, while a stream comes: busy polls, the timer's runs and the
 * events' runs take the CQ unit in turn.  Everything once, in order, no
 * done() overlapping another of its domain (done() checks); the counts
 * agree.
 */
static void fake_sus_race(struct fake_sus *h, struct fake_dev *fdev,
			  const struct fake_scenario *sc, enum ib_ocq_mode mode,
			  enum ib_poll_context poll_ctx, const char *ctx,
			  struct fake_ktap *k)
{
	struct ib_ocq_stats s;
	char name[48];
	bool ok;

	fake_sus_reset(h, mode, poll_ctx, FAKE_SUS_RACE_USECS);
	h->race = true;
	snprintf(name, sizeof(name), "%s_%s_race", fake_mode_names[mode], ctx);
	if (fake_sus_create(h, fdev, sc)) {
		fake_result(k, false, name, "ib_ocq_alloc() failed");
		return;
	}
	ok = fake_sus_settle(h) && fake_sus_poller_start(h, name);
	ok = ok && fake_sus_check(h, fake_sus_stream(h, FAKE_SUS_RACE_STREAM),
				  "stream delivered");
	fake_sus_poller_stop(h);
	ok = ok && fake_sus_settle(h);
	fake_sus_stats(h, &s);
	fake_sus_print(name, h, &s);
	ok = ok && fake_sus_all_ok(h, &s) && fake_sus_counts_ok(h, &s) &&
	     fake_sus_check(h, s.suspends > 0, "busy polls suspended the CQ") &&
	     fake_sus_check(h, h->got < h->pushed, "runs took completions too");
	fake_result(k, ok, name, NULL);
	fake_sus_free(h);
}

/*
 * (6) Teardown: free an OCQ right after a busy poll took a burst (the
 * CQ unarmed, the suspension's timer pending), again and again: strict
 * and flow, the shortest and longest suspension, the workqueue and the
 * unbound context.  Nothing may be delivered once the free returned, and
 * the provider's objects must be gone (the script checks the OCQs).
 */
static void fake_sus_teardown(struct fake_sus *h, struct fake_dev *fdev,
			      const struct fake_scenario *sc,
			      struct fake_ktap *k)
{
	unsigned int i, j, pending = 0;
	bool ok = true;
	long n;

	for (i = 0; i < FAKE_SUS_CYCLES && ok; i++) {
		enum ib_ocq_mode mode = i % 2 ? IB_OCQ_FLOW : IB_OCQ_STRICT;
		unsigned int usecs = (i / 2) % 2 ? IB_OCQ_MAX_SUSPEND_USECS : 1;
		enum ib_poll_context ctx = (i / 4) % 2 ?
						   IB_POLL_UNBOUND_WORKQUEUE :
						   IB_POLL_WORKQUEUE;

		fake_sus_reset(h, mode, ctx, usecs);
		if (fake_sus_create(h, fdev, sc)) {
			ok = false;
			break;
		}
		ok = fake_sus_settle(h);
		for (j = 0; ok && j < FAKE_SUS_AHEAD; j++)
			fake_sus_push(h);
		ok = ok && fake_sus_poll(h);
		if (ok && h->last > 0 && !fake_sus_armed(h))
			pending++;
		fake_sus_free(h);
		n = atomic_long_read(&h->delivered);
		/* a timer the free left behind would fire in this */
		msleep(2 * usecs / USEC_PER_MSEC + 2 * FAKE_POLL_MS);
		ok = fake_sus_check(h, atomic_long_read(&h->delivered) == n,
				    "no done() after the free") &&
		     fake_sus_check(h, !atomic_read(&fake_objects),
				    "the fake CQ is gone") &&
		     !atomic_read(&h->failures) && ok;
	}
	pr_info("# teardown: %u cycles, %u freed with a suspension pending\n",
		i, pending);
	fake_result(k, ok && pending, "teardown_suspended", NULL);
}

/*
 * fake_suspend: consumer-driven suspension, see the top of the file.
 */
int fake_run_suspend(const struct fake_scenario *sc, struct fake_dev *fdev,
		     struct fake_ktap *k)
{
	static const struct {
		enum ib_ocq_mode mode;
		enum ib_poll_context ctx;
		const char *name;
	} runs[] = {
		{ IB_OCQ_STRICT, IB_POLL_WORKQUEUE, "workqueue" },
		{ IB_OCQ_FLOW, IB_POLL_WORKQUEUE, "workqueue" },
		{ IB_OCQ_STRICT, IB_POLL_UNBOUND_WORKQUEUE, "unbound" },
		{ IB_OCQ_FLOW, IB_POLL_UNBOUND_WORKQUEUE, "unbound" },
	};
	struct fake_sus *h;
	unsigned int i;

	h = kzalloc(sizeof(*h), GFP_KERNEL);
	if (!h)
		return -ENOMEM;
	for (i = 0; i < ARRAY_SIZE(runs); i++)
		fake_sus_busy(h, fdev, sc, runs[i].mode, runs[i].ctx,
			      runs[i].name, k);
	fake_sus_empty(h, fdev, sc, k);
	fake_sus_refusals(h, fdev, sc, k);
	fake_sus_attrs_run(fdev, k);
	for (i = 0; i < ARRAY_SIZE(runs); i++)
		fake_sus_race(h, fdev, sc, runs[i].mode, runs[i].ctx,
			      runs[i].name, k);
	fake_sus_teardown(h, fdev, sc, k);
	kfree(h);
	return 0;
}
