// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fake_defer - ocq_test_fake's fake_defer: the deferred re-arm
 * (&ib_ocq_attr.defer_usecs).  A stream pushed faster than the timer's
 * period raises far fewer events with it than the same stream without it,
 * and delivers everything once, in order; once the stream stops, the
 * timer's polls run out and the CQ ends armed, so that a completion pushed
 * after idle comes through one event; bad attributes are refused; an OCQ
 * freed while a deferral is pending goes cleanly.  With software DIM
 * (%IB_OCQ_DEFER_DIM) single completions are never deferred, each comes
 * through its event, pairs stop deferring once a deferral of one did not
 * pay, triples defer again once runs of them halved the threshold,
 * and bursts are deferred; the delay it picks (defer_usecs_now, in the
 * OCQ's debugfs info) starts at its first profile's, is what the timer
 * waits, and moves under a changing load.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/dim.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/seq_file.h>
#include <linux/uio.h>
#include <linux/math64.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/wait.h>
#include <rdma/ib_ocq.h>
#include <rdma/ib_verbs.h>

#include "ocq_test_compat.h"
#include "ocq_test_ctx.h"
#include "fake.h"

/* the timer's period, and the empty polls before the CQ is armed */
#define FAKE_DFR_USECS 100
#define FAKE_DFR_POLLS 20
/* QPs the stream alternates between: flow mode's flows */
#define FAKE_DFR_QPS 2
/* requests per QP: more than can be outstanding */
#define FAKE_DFR_REQS 16
/* completions the stream keeps outstanding at most, over all QPs */
#define FAKE_DFR_AHEAD 8
/* completions of a stream, and of a stream in another poll context */
#define FAKE_DFR_STREAM 4000
#define FAKE_DFR_SHORT 1000
/* the stream's pause between two pushes: well under the timer's period */
#define FAKE_DFR_GAP_US 20
/*
 * software DIM: its empty polls; single completions; pairs, and how many
 * may defer; attempts at the threshold's return; the pause between bursts
 */
#define FAKE_DFR_DIM_POLLS 100
#define FAKE_DFR_SINGLES 64
#define FAKE_DFR_PAIRS 32
#define FAKE_DFR_PAIRS_DEFERRED (FAKE_DFR_PAIRS / 4)
#define FAKE_DFR_TRIPLES 48
#define FAKE_DFR_BURST_GAP_US 50
/* software DIM's bursts: at most this fraction of an event per completion */
#define FAKE_DFR_DIM_RATIO 2
/* with the deferred re-arm, at most this fraction of the events without */
#define FAKE_DFR_RATIO 4
/* an idle interval: 2000 of the timer's periods */
#define FAKE_DFR_IDLE_MS 200
/* teardown cycles, and the completions each pushes before the free */
#define FAKE_DFR_CYCLES 48
#define FAKE_DFR_BURST 12

/**
 * struct fake_dfr - one OCQ and the QPs whose completions it delivers
 * @ocq: the OCQ
 * @fcq: its fake CQ
 * @mode: its mode
 * @poll_ctx: its poll context
 * @flags: &ib_ocq_attr.flags of the next fake_dfr_create()
 * @qps: the QPs; in flow mode each is a flow (its qp_num the flow key)
 * @reqs: each QP's requests
 * @pushed: completions pushed (test thread)
 * @next_pos: the CQ position done() expects next, strict (D)
 * @delivered: done() calls (A)
 * @inside: done() calls running now, strict (A)
 * @failures: failed checks (A)
 * @reports: failures printed (A)
 * @freed: ib_ocq_free() returned (A)
 * @busy_task: the task in ib_ocq_busy_poll() of tune_suspend, where a
 *	flow run's inline dispatch may call done() (A)
 * @last_done: when the last done() ran (D; read by the test once it saw
 *	that done()'s release of its flow's @completed)
 * @wq: the test waits here for done() calls
 */
struct fake_dfr {
	struct ib_ocq *ocq;
	struct fake_cq *fcq;
	enum ib_ocq_mode mode;
	enum ib_poll_context poll_ctx;
	unsigned int flags;
	struct fake_flow qps[FAKE_DFR_QPS];
	struct fake_req reqs[FAKE_DFR_QPS][FAKE_DFR_REQS];
	u64 pushed;
	u64 next_pos;
	atomic_long_t delivered;
	atomic_t inside;
	atomic_t failures;
	atomic_t reports;
	bool freed;
	struct task_struct *busy_task;
	ktime_t last_done;
	wait_queue_head_t wq;
};

static void fake_dfr_fail(struct fake_dfr *h, const char *what,
			  const struct fake_req *req)
{
	atomic_inc(&h->failures);
	if (atomic_inc_return(&h->reports) > FAKE_MAX_REPORTS)
		return;
	pr_info("# defer: %s: qp %#x seq %u pos %llu\n", what,
		req->flow->qp.qp_num, req->seq, req->pos);
}

static bool fake_dfr_check(struct fake_dfr *h, bool ok, const char *what)
{
	if (!ok) {
		atomic_inc(&h->failures);
		pr_info("# defer: check failed: %s\n", what);
	}
	return ok;
}

/* Once, in its flow's order, strict: in CQ order, one at a time. */
static void fake_dfr_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct fake_req *req = container_of(wc->wr_cqe, struct fake_req, cqe);
	struct fake_dfr *h = ib_ocq_private(cq);
	struct fake_flow *f = req->flow;
	atomic_t *inside = h->mode == IB_OCQ_FLOW ? &f->inside : &h->inside;

	if (atomic_inc_return(inside) != 1)
		fake_dfr_fail(h, "done() concurrent", req);
	if (!ocq_test_in_ctx(h->poll_ctx, false) &&
	    current != READ_ONCE(h->busy_task))
		fake_dfr_fail(h, "done() in the wrong context", req);
	if (READ_ONCE(h->freed))
		fake_dfr_fail(h, "done() after free", req);
	if (atomic_xchg(&req->state, FAKE_FREE) != FAKE_QUEUED)
		fake_dfr_fail(h, "delivered twice", req);
	if (req->seq != (u32)atomic_read(&f->completed))
		fake_dfr_fail(h, "out of flow order", req);
	if (h->mode != IB_OCQ_FLOW) {
		if (req->pos != h->next_pos)
			fake_dfr_fail(h, "out of CQ order", req);
		h->next_pos = req->pos + 1;
	}
	atomic_dec(inside);
	WRITE_ONCE(h->last_done, ktime_get());
	/* the request is reused after this: pairs with fake_dfr_room() */
	atomic_inc_return_release(&f->completed);
	atomic_long_inc(&h->delivered);
	wake_up(&h->wq);
}

static void fake_dfr_reset(struct fake_dfr *h, enum ib_ocq_mode mode,
			   enum ib_poll_context poll_ctx)
{
	unsigned int q, i;

	memset(h, 0, sizeof(*h));
	init_waitqueue_head(&h->wq);
	h->mode = mode;
	h->poll_ctx = poll_ctx;
	for (q = 0; q < FAKE_DFR_QPS; q++) {
		h->qps[q].qp.qp_num = 0x100 + q;
		for (i = 0; i < FAKE_DFR_REQS; i++) {
			h->reqs[q][i].cqe.done = fake_dfr_done;
			h->reqs[q][i].flow = &h->qps[q];
		}
	}
}

/*
 * A fresh OCQ: ib_ocq_alloc() for the workqueue context, else
 * ib_ocq_alloc_cq(); deferred by @usecs (0: not), @polls empty polls.
 */
static int fake_dfr_create(struct fake_dfr *h, struct fake_dev *fdev,
			   const struct fake_scenario *sc, unsigned int usecs,
			   unsigned int polls)
{
	struct ib_ocq_attr attr = {
		.mode = h->mode,
		.flags = h->flags,
		.nr_domains = FAKE_DFR_QPS,
		.defer_usecs = usecs,
		.defer_polls = polls,
	};
	struct ib_cq *cq;

	fdev->sem = sc->sem;
	fdev->rnd = fake_seed(6000 + h->mode);
	fdev->ring = 0;
	if (h->mode != IB_OCQ_FLOW)
		attr.nr_domains = 0;
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

		pr_info("# defer: ib_ocq_alloc: %d\n", ret);
		h->ocq = NULL;
		return ret;
	}
	h->fcq = to_fake_cq(ib_ocq_cq(h->ocq));
	return 0;
}

static void fake_dfr_free(struct fake_dfr *h)
{
	if (h->poll_ctx == IB_POLL_WORKQUEUE)
		ib_ocq_free(h->ocq);
	else
		ib_ocq_free_cq(ib_ocq_cq(h->ocq));
	WRITE_ONCE(h->freed, true);
	h->ocq = NULL;
	h->fcq = NULL;
}

/* The OCQ's counters once they count every completion pushed. */
static void fake_dfr_stats(struct fake_dfr *h, struct ib_ocq_stats *s)
{
	fake_stats_settled(h->ocq, s, h->pushed);
}

/* The next push has a request free, and the stream is not too far ahead. */
static bool fake_dfr_room(struct fake_dfr *h)
{
	struct fake_flow *f = &h->qps[h->pushed % FAKE_DFR_QPS];

	/* pairs with atomic_inc_return_release() in fake_dfr_done() */
	return f->pushed - (u32)atomic_read_acquire(&f->completed) <
		       FAKE_DFR_REQS &&
	       h->pushed - atomic_long_read(&h->delivered) < FAKE_DFR_AHEAD;
}

/* Push the next completion, of the QPs in turn. */
static void fake_dfr_push(struct fake_dfr *h)
{
	struct fake_flow *f = &h->qps[h->pushed % FAKE_DFR_QPS];
	struct fake_req *req =
		&h->reqs[h->pushed % FAKE_DFR_QPS][f->pushed % FAKE_DFR_REQS];

	req->seq = f->pushed++;
	atomic_set(&req->state, FAKE_QUEUED);
	fake_push_req(h->fcq, &f->qp, req, IB_WC_RECV, &h->failures);
	h->pushed++;
}

/* Wait until everything pushed was delivered; false after a stall. */
static bool fake_dfr_wait_all(struct fake_dfr *h)
{
	if (wait_event_timeout(h->wq,
			       atomic_long_read(&h->delivered) == h->pushed,
			       msecs_to_jiffies(fake_params.stall_ms)))
		return true;
	pr_info("# defer: %ld of %llu delivered, then nothing for %u ms\n",
		atomic_long_read(&h->delivered), h->pushed,
		fake_params.stall_ms);
	return false;
}

/*
 * @n completions, one every %FAKE_DFR_GAP_US or so, at most
 * %FAKE_DFR_AHEAD outstanding; wait until all are delivered.
 */
static bool fake_dfr_stream(struct fake_dfr *h, u32 n)
{
	unsigned long bound = msecs_to_jiffies(fake_params.stall_ms);
	u32 i;

	for (i = 0; i < n; i++) {
		if (!wait_event_timeout(h->wq, fake_dfr_room(h), bound)) {
			pr_info("# defer: stream stalled after %u pushes, %ld delivered\n",
				i, atomic_long_read(&h->delivered));
			return false;
		}
		fake_dfr_push(h);
		usleep_range(FAKE_DFR_GAP_US, 2 * FAKE_DFR_GAP_US);
	}
	return fake_dfr_wait_all(h);
}

/*
 * @n completions in bursts of %FAKE_DFR_AHEAD, the next burst
 * %FAKE_DFR_BURST_GAP_US after the last was delivered; wait until all are.
 */
static bool fake_dfr_bursts(struct fake_dfr *h, u32 n)
{
	u32 i = 0;

	while (i < n) {
		while (i < n && fake_dfr_room(h)) {
			fake_dfr_push(h);
			i++;
		}
		if (!fake_dfr_wait_all(h))
			return false;
		usleep_range(FAKE_DFR_BURST_GAP_US, 2 * FAKE_DFR_BURST_GAP_US);
	}
	return true;
}

static void fake_dfr_print(const char *name, const struct ib_ocq_stats *s)
{
	pr_info("# %s: completions %llu events %llu runs %llu empty_runs %llu polls %llu arms %llu defers %llu inlined %llu domain_runs %llu\n",
		name, s->completions, s->events, s->runs, s->empty_runs,
		s->polls, s->arms, s->defers, s->inlined, s->domain_runs);
}

/* Everything pushed was delivered once, in order; the counts agree. */
static bool fake_dfr_all_ok(struct fake_dfr *h, const struct ib_ocq_stats *s)
{
	return fake_dfr_check(h,
			      atomic_long_read(&h->delivered) == h->pushed &&
				      s->completions == h->pushed,
			      "every completion delivered, and counted") &&
	       fake_dfr_check(h, !h->fcq->overruns, "no CQ overrun") &&
	       !atomic_read(&h->failures);
}

/*
 * The CQ ends armed once the timer's polls are spent, and the timer stops:
 * over an idle interval of %FAKE_DFR_IDLE_MS (2000 periods) at most
 * %FAKE_DFR_POLLS timer runs, plus the one a domain's kick may start.
 */
static bool fake_dfr_idle(struct fake_dfr *h, const char *name,
			  const char *when)
{
	struct ib_ocq_stats s0, s1;
	bool armed;

	fake_dfr_stats(h, &s0);
	msleep(FAKE_DFR_IDLE_MS);
	fake_dfr_stats(h, &s1);
	armed = fake_wait_armed(h->fcq, fake_params.stall_ms);
	pr_info("# %s: %s: %llu runs, %llu deferred, in %u ms idle; the CQ %s\n",
		name, when, s1.runs - s0.runs, s1.defers - s0.defers,
		FAKE_DFR_IDLE_MS, armed ? "armed" : "NOT armed");
	return fake_dfr_check(h, s1.runs - s0.runs <= FAKE_DFR_POLLS + 1,
			      "at most defer_polls + 1 runs while idle") &&
	       fake_dfr_check(h, armed, "the CQ ends empty and armed");
}

/*
 * After the stream, idle: the timer stops and the CQ is armed; then one
 * completion raises exactly one event, is deferred after, and the CQ ends
 * armed again.
 */
static bool fake_dfr_after_idle(struct fake_dfr *h, const char *name)
{
	struct ib_ocq_stats s0, s1;

	if (!fake_dfr_idle(h, name, "after the stream"))
		return false;
	fake_dfr_stats(h, &s0);
	fake_dfr_push(h);
	if (!fake_dfr_check(h, fake_dfr_wait_all(h),
			    "a completion after idle delivered"))
		return false;
	if (!fake_dfr_idle(h, name, "after one completion"))
		return false;
	fake_dfr_stats(h, &s1);
	pr_info("# %s: one completion after idle: %llu events, %llu runs, %llu deferred\n",
		name, s1.events - s0.events, s1.runs - s0.runs,
		s1.defers - s0.defers);
	return fake_dfr_check(h, s1.events - s0.events == 1,
			      "it came through exactly one event") &&
	       fake_dfr_check(h, s1.defers > s0.defers,
			      "the run that took it deferred the arm") &&
	       fake_dfr_all_ok(h, &s1);
}

/*
 * (a) and (b) in @mode: the same stream without and with the deferred
 * re-arm, each on a fresh OCQ.  Events per completion must fall by
 * %FAKE_DFR_RATIO at least; runs must have been deferred.
 */
static void fake_dfr_mode(struct fake_dfr *h, struct fake_dev *fdev,
			  const struct fake_scenario *sc, enum ib_ocq_mode mode,
			  struct fake_ktap *k)
{
	const char *mname = fake_mode_names[mode];
	struct ib_ocq_stats plain, dfr;
	char name[48];
	bool ok;

	/* without */
	fake_dfr_reset(h, mode, IB_POLL_WORKQUEUE);
	snprintf(name, sizeof(name), "%s_no_defer", mname);
	ok = !fake_dfr_create(h, fdev, sc, 0, 0);
	if (ok) {
		ok = fake_dfr_check(h, fake_dfr_stream(h, FAKE_DFR_STREAM),
				    "stream delivered");
		fake_dfr_stats(h, &plain);
		fake_dfr_print(name, &plain);
		ok = ok && fake_dfr_all_ok(h, &plain) &&
		     fake_dfr_check(h, !plain.defers, "no defers without it");
		fake_dfr_free(h);
	}
	fake_result(k, ok, name, NULL);
	if (!ok)
		return;

	/* with */
	fake_dfr_reset(h, mode, IB_POLL_WORKQUEUE);
	snprintf(name, sizeof(name), "%s_defer", mname);
	ok = !fake_dfr_create(h, fdev, sc, FAKE_DFR_USECS, FAKE_DFR_POLLS);
	if (!ok) {
		fake_result(k, false, name, "ib_ocq_alloc() failed");
		return;
	}
	ok = fake_dfr_check(h, fake_dfr_stream(h, FAKE_DFR_STREAM),
			    "stream delivered");
	fake_dfr_stats(h, &dfr);
	fake_dfr_print(name, &dfr);
	pr_info("# %s: events per 1000 completions: %llu without, %llu with defer_usecs %u\n",
		name,
		div64_u64(plain.events * 1000, max(plain.completions, 1ULL)),
		div64_u64(dfr.events * 1000, max(dfr.completions, 1ULL)),
		FAKE_DFR_USECS);
	ok = ok && fake_dfr_all_ok(h, &dfr) &&
	     fake_dfr_check(h, dfr.defers > 0, "runs were deferred") &&
	     fake_dfr_check(h, dfr.events * FAKE_DFR_RATIO < plain.events,
			    "far fewer events than without");
	fake_result(k, ok, name, NULL);

	snprintf(name, sizeof(name), "%s_defer_armed_after_idle", mname);
	if (ok)
		ok = fake_dfr_after_idle(h, name);
	fake_result(k, ok, name, ok ? NULL : "after a failure or stall");
	fake_dfr_free(h);
}

/* Push @n completions back to back and wait until all are delivered. */
static bool fake_dfr_push_n(struct fake_dfr *h, u32 n)
{
	while (n--)
		fake_dfr_push(h);
	return fake_dfr_wait_all(h);
}

/* The OCQ's deferred runs so far. */
static u64 fake_dfr_defers(struct fake_dfr *h)
{
	struct ib_ocq_stats s;

	fake_dfr_stats(h, &s);
	return s.defers;
}

/*
 * Push @n back to back, wait until they are delivered and the CQ is armed
 * again; true in *@deferred if a run deferred the arm meanwhile.
 */
static bool fake_dfr_round(struct fake_dfr *h, u32 n, bool *deferred)
{
	u64 before = fake_dfr_defers(h);

	if (!fake_dfr_check(h, fake_dfr_push_n(h, n), "a round delivered") ||
	    !fake_dfr_check(h, fake_wait_armed(h->fcq, fake_params.stall_ms),
			    "the CQ armed again after a round"))
		return false;
	*deferred = fake_dfr_defers(h) != before;
	return true;
}

/* (e1): single completions never defer; each comes through its event. */
static bool fake_dfr_dim_singles(struct fake_dfr *h)
{
	struct ib_ocq_stats s0, s1;
	bool deferred = false, ok = true;
	u32 i;

	fake_dfr_stats(h, &s0);
	for (i = 0; ok && !deferred && i < FAKE_DFR_SINGLES; i++)
		ok = fake_dfr_round(h, 1, &deferred);
	fake_dfr_stats(h, &s1);
	fake_dfr_print("dim_singles", &s1);
	return ok && fake_dfr_all_ok(h, &s1) &&
	       fake_dfr_check(h, !deferred,
			      "no single completion deferred the arm") &&
	       fake_dfr_check(h, s1.events - s0.events == FAKE_DFR_SINGLES,
			      "each came through its own event");
}

/*
 * (e2): pairs.  The first pair a run takes whole defers; nothing comes
 * while the timer polls, so the threshold doubles and later pairs arm,
 * until OCQ_DEFER_DIM_DECAY short runs (8 pairs at least) halve it and
 * one defers again: at most %FAKE_DFR_PAIRS_DEFERRED of %FAKE_DFR_PAIRS
 * (a quarter) do, where every pair a run takes whole would without it.
 */
static bool fake_dfr_dim_pairs(struct fake_dfr *h)
{
	u32 i, n = 0;
	bool ok = true, deferred;

	for (i = 0; ok && i < FAKE_DFR_PAIRS; i++) {
		ok = fake_dfr_round(h, 2, &deferred);
		n += deferred;
	}
	pr_info("# dim_pairs: %u of %u pairs deferred the arm\n", n,
		FAKE_DFR_PAIRS);
	return ok && fake_dfr_check(h, n <= FAKE_DFR_PAIRS_DEFERRED,
				    "the threshold grew: later pairs arm");
}

/*
 * (e3): after the pairs the threshold is above two, and a triple a run
 * takes whole does not defer; once runs that took too few have halved it
 * (OCQ_DEFER_DIM_DECAY of them: each round has one at least), a run that
 * takes two or three completions defers again: one of %FAKE_DFR_TRIPLES
 * rounds at least must.
 */
static bool fake_dfr_dim_decay(struct fake_dfr *h)
{
	bool ok = true, deferred = false;
	u32 i;

	for (i = 0; ok && !deferred && i < FAKE_DFR_TRIPLES; i++)
		ok = fake_dfr_round(h, 3, &deferred);
	pr_info("# dim_decay: %s after %u rounds of three\n",
		deferred ? "deferred" : "not deferred", i);
	return ok && fake_dfr_check(h, deferred,
				    "triples defer once the threshold decayed");
}

/*
 * Software DIM, (e) of fake_defer, on one OCQ (%FAKE_DFR_DIM_POLLS empty
 * polls, so that the timer polls for a millisecond at least): singles,
 * pairs, triples, then %FAKE_DFR_SHORT completions in
 * bursts of %FAKE_DFR_AHEAD, which must be deferred with fewer events than
 * half the completions, the CQ armed once idle.
 */
static void fake_dfr_dim(struct fake_dfr *h, struct fake_dev *fdev,
			 const struct fake_scenario *sc, struct fake_ktap *k)
{
	struct ib_ocq_stats s0, s1;
	bool ok;

	fake_dfr_reset(h, IB_OCQ_STRICT, IB_POLL_WORKQUEUE);
	h->flags = IB_OCQ_DEFER_DIM;
	if (fake_dfr_create(h, fdev, sc, FAKE_DFR_USECS, FAKE_DFR_DIM_POLLS)) {
		fake_result(k, false, "dim_singles", "ib_ocq_alloc() failed");
		return;
	}
	ok = fake_dfr_check(h, fake_wait_armed(h->fcq, fake_params.stall_ms),
			    "the new CQ is armed") &&
	     fake_dfr_dim_singles(h);
	fake_result(k, ok, "dim_singles", NULL);
	ok = ok && fake_dfr_dim_pairs(h);
	fake_result(k, ok, "dim_pairs", ok ? NULL : "after a failure");
	ok = ok && fake_dfr_dim_decay(h);
	fake_result(k, ok, "dim_decay", ok ? NULL : "after a failure");

	fake_dfr_stats(h, &s1);
	ok = ok && fake_dfr_bursts(h, FAKE_DFR_SHORT);
	fake_dfr_stats(h, &s0);
	fake_dfr_print("dim_bursts", &s0);
	ok = ok && fake_dfr_all_ok(h, &s0) &&
	     fake_dfr_check(h, s0.defers > s1.defers, "bursts were deferred") &&
	     fake_dfr_check(h,
			    (s0.events - s1.events) * FAKE_DFR_DIM_RATIO <
				    s0.completions - s1.completions,
			    "far fewer events than completions") &&
	     fake_dfr_check(h, fake_wait_armed(h->fcq, fake_params.stall_ms),
			    "the CQ ends empty and armed");
	fake_result(k, ok, "dim_bursts", ok ? NULL : "after a failure");
	fake_dfr_free(h);
}

/*
 * (f) software DIM's delay, on an OCQ of its own: the delay in force is
 * defer_usecs_now in the OCQ's debugfs info, which DIM moves between a
 * ninth of &ib_ocq_attr.defer_usecs (its first profile, where it starts)
 * and all of it.  The info file is found by the CQ's id: the directory is
 * ocq<id>-<device>-cq<CQ id>.
 */
#define FAKE_DFR_DEBUGFS "/sys/kernel/debug/ib_ocq"

/**
 * struct fake_dfr_dir - looks for one OCQ's debugfs directory
 * @ctx: iterate_dir()'s
 * @suffix: "-cq<CQ id>"
 * @name: the directory found
 * @found: directories that matched
 */
struct fake_dfr_dir {
	struct dir_context ctx;
	char suffix[16];
	char name[64];
	unsigned int found;
};

static bool fake_dfr_dirent(struct dir_context *ctx, const char *name, int len,
			    loff_t pos, u64 ino, unsigned int type)
{
	struct fake_dfr_dir *d = container_of(ctx, struct fake_dfr_dir, ctx);
	int n = strlen(d->suffix);

	if (len > n && len < sizeof(d->name) && !strncmp(name, "ocq", 3) &&
	    !memcmp(name + len - n, d->suffix, n)) {
		memcpy(d->name, name, len);
		d->name[len] = '\0';
		d->found++;
	}
	return true;
}

/* The path of @h's OCQ's info file: 0, or -errno (-ENOENT: not one). */
static int fake_dfr_info_path(struct fake_dfr *h, char *path, size_t size)
{
	struct fake_dfr_dir d = { .ctx.actor = fake_dfr_dirent };
	struct file *dir;
	int ret;

	snprintf(d.suffix, sizeof(d.suffix), "-cq%u",
		 ib_ocq_cq(h->ocq)->res.id);
	dir = filp_open(FAKE_DFR_DEBUGFS, O_RDONLY | O_DIRECTORY, 0);
	if (IS_ERR(dir))
		return PTR_ERR(dir);
	ret = iterate_dir(dir, &d.ctx);
	filp_close(dir, NULL);
	if (!ret && d.found != 1)
		ret = -ENOENT;
	if (!ret)
		snprintf(path, size, FAKE_DFR_DEBUGFS "/%s/info", d.name);
	else
		pr_info("# dim_delay: no single %s/ocq*%s: %d, %u found\n",
			FAKE_DFR_DEBUGFS, d.suffix, ret, d.found);
	return ret;
}

/*
 * Read the debugfs seq_file @f into @buf: kernel_read() wants a read_iter,
 * which debugfs' proxy does not offer on these kernels, so the seq_file
 * behind it (its private_data, as single_open() set it) is read directly.
 */
static ssize_t fake_dfr_read(struct file *f, char *buf, size_t size)
{
	struct kvec kv = { .iov_base = buf, .iov_len = size };
	struct iov_iter iter;
	struct kiocb kiocb;

	init_sync_kiocb(&kiocb, f);
	iov_iter_kvec(&iter, READ, &kv, 1, size);
	return seq_read_iter(&kiocb, &iter);
}

/* defer_usecs_now of the info file at @path, or -1 */
static long fake_dfr_delay_now(const char *path)
{
	static const char key[] = "\ndefer_usecs_now ";
	unsigned int usecs;
	struct file *f;
	long ret = -1;
	ssize_t n;
	char *buf;

	buf = kzalloc(PAGE_SIZE, GFP_KERNEL);
	if (!buf)
		return -1;
	f = filp_open(path, O_RDONLY, 0);
	if (!IS_ERR(f)) {
		n = fake_dfr_read(f, buf, PAGE_SIZE - 1);
		filp_close(f, NULL);
		if (n > 0 && strstr(buf, key) &&
		    sscanf(strstr(buf, key) + strlen(key), "%u", &usecs) == 1)
			ret = usecs;
	}
	if (ret < 0)
		pr_info("# dim_delay: no defer_usecs_now in %s\n", path);
	kfree(buf);
	return ret;
}

/* &ib_ocq_attr.defer_usecs of the delay's OCQ, and its empty polls */
#define FAKE_DFR_DELAY_USECS IB_OCQ_MAX_DEFER_USECS
#define FAKE_DFR_DELAY_POLLS 2
/* RDMA DIM's profiles: the delay of profile ix is USECS * (ix + 1) / this */
#define FAKE_DFR_DELAY_STEPS RDMA_DIM_PARAMS_NUM_PROFILES
/* rounds whose probe times the delay; OCQ_BATCH, which always defers */
#define FAKE_DFR_DELAY_ROUNDS 16
#define FAKE_DFR_DELAY_BATCH 16
/* how long a round waits for its deferral to show in the counters */
#define FAKE_DFR_DELAY_WAIT_MS 100

/* The delay of DIM profile @ix. */
static unsigned int fake_dfr_profile_usecs(unsigned int ix)
{
	return max(1U, FAKE_DFR_DELAY_USECS * (ix + 1) / FAKE_DFR_DELAY_STEPS);
}

/* Whether @usecs is the delay of a DIM profile. */
static bool fake_dfr_is_profile(long usecs)
{
	unsigned int ix;

	for (ix = 0; ix < FAKE_DFR_DELAY_STEPS; ix++)
		if (usecs == fake_dfr_profile_usecs(ix))
			return true;
	return false;
}

/* Wait until the OCQ counted more than @defers deferrals; false if not. */
static bool fake_dfr_deferred_since(struct fake_dfr *h, u64 defers)
{
	unsigned long end = jiffies + msecs_to_jiffies(FAKE_DFR_DELAY_WAIT_MS);

	while (fake_dfr_defers(h) == defers) {
		if (time_after(jiffies, end))
			return false;
		usleep_range(20, 40);
	}
	return true;
}

/*
 * One timed round: a batch, whose run defers the arm after its last
 * done(); then, once the deferral shows, a probe, which lands on the
 * unarmed CQ and waits for the timer's run.  The probe's done() comes the
 * delay in force after the batch's last done() at least.  A round in which
 * the batch did not defer, or an event brought the probe (the CQ was armed
 * again first), times nothing: 0 in *@us.
 */
static bool fake_dfr_delay_round(struct fake_dfr *h, s64 *us)
{
	struct ib_ocq_stats s0, s1;
	ktime_t batch_done;
	bool armed;

	*us = 0;
	fake_dfr_stats(h, &s0);
	if (!fake_dfr_check(h, fake_dfr_push_n(h, FAKE_DFR_DELAY_BATCH),
			    "a batch delivered"))
		return false;
	/* pairs with the release in fake_dfr_done() */
	atomic_read_acquire(&h->qps[(h->pushed - 1) % FAKE_DFR_QPS].completed);
	batch_done = READ_ONCE(h->last_done);
	if (!fake_dfr_deferred_since(h, s0.defers)) {
		armed = fake_wait_armed(h->fcq, fake_params.stall_ms);
		return fake_dfr_check(h, armed, "the CQ armed after a batch");
	}
	fake_dfr_stats(h, &s1);
	if (!fake_dfr_check(h, fake_dfr_push_n(h, 1), "a probe delivered"))
		return false;
	atomic_read_acquire(&h->qps[(h->pushed - 1) % FAKE_DFR_QPS].completed);
	fake_dfr_stats(h, &s0);
	if (s0.events == s1.events)
		*us = ktime_us_delta(READ_ONCE(h->last_done), batch_done);
	return fake_dfr_check(h, fake_wait_armed(h->fcq, fake_params.stall_ms),
			      "the CQ armed after a probe");
}

/*
 * Rounds of @n completions, %FAKE_DIM_PHASE of each size from one up to
 * %FAKE_DFR_DELAY_BATCH, until the delay in force differs from @start:
 * the completions per event and per millisecond grow from one of DIM's
 * samples to the next, which it answers with a step to the right.  The
 * delay in force, or -1.
 */
static long fake_dfr_delay_drive(struct fake_dfr *h, const char *path,
				 long start)
{
	long now = start;
	bool deferred;
	unsigned int i;
	u32 n;

	for (i = 0; now == start && i < FAKE_DIM_PHASES * FAKE_DIM_PHASE; i++) {
		n = min(1U << (i / FAKE_DIM_PHASE), FAKE_DFR_DELAY_BATCH);
		if (!fake_dfr_round(h, n, &deferred))
			return -1;
		now = fake_dfr_delay_now(path);
	}
	pr_info("# dim_delay: defer_usecs_now %ld after %u rounds\n", now, i);
	return now;
}

/*
 * (f): the delay starts at DIM's first profile's; the timer waits the
 * delay in force (a probe behind a deferred batch comes through it no
 * sooner, and, one round at least, sooner than the ceiling would allow);
 * DIM moves it under a changing load, to another profile's.
 */
static void fake_dfr_dim_delay(struct fake_dfr *h, struct fake_dev *fdev,
			       const struct fake_scenario *sc,
			       struct fake_ktap *k)
{
	s64 us, shortest = S64_MAX;
	unsigned int i, timed = 0;
	struct ib_ocq_stats s;
	long start = -1, now;
	char path[128];
	bool ok;

	fake_dfr_reset(h, IB_OCQ_STRICT, IB_POLL_WORKQUEUE);
	h->flags = IB_OCQ_DEFER_DIM;
	if (fake_dfr_create(h, fdev, sc, FAKE_DFR_DELAY_USECS,
			    FAKE_DFR_DELAY_POLLS)) {
		fake_result(k, false, "dim_delay_starts_low",
			    "ib_ocq_alloc() failed");
		return;
	}
	ok = fake_dfr_check(h, fake_wait_armed(h->fcq, fake_params.stall_ms),
			    "the new CQ is armed") &&
	     !fake_dfr_info_path(h, path, sizeof(path));
	if (ok)
		start = fake_dfr_delay_now(path);
	pr_info("# dim_delay: defer_usecs_now %ld at the start, defer_usecs %u\n",
		start, FAKE_DFR_DELAY_USECS);
	ok = ok && fake_dfr_check(h, start == fake_dfr_profile_usecs(0),
				  "the delay starts at DIM's first profile's");
	fake_result(k, ok, "dim_delay_starts_low", NULL);

	for (i = 0; ok && i < FAKE_DFR_DELAY_ROUNDS; i++) {
		ok = fake_dfr_delay_round(h, &us);
		now = fake_dfr_delay_now(path);
		if (!ok || !us)
			continue;
		timed++;
		shortest = min(shortest, us);
		ok = fake_dfr_check(h, us >= min(start, now),
				    "the probe waited the delay in force");
		if (!ok)
			pr_info("# dim_delay: the probe came %lld us after the batch, the delay %ld us\n",
				us, min(start, now));
	}
	pr_info("# dim_delay: %u of %u rounds timed, the shortest %lld us\n",
		timed, i, timed ? shortest : 0);
	ok = ok && fake_dfr_check(h, timed, "a round timed the delay") &&
	     fake_dfr_check(h, shortest < FAKE_DFR_DELAY_USECS,
			    "the timer waits the delay, not the ceiling");
	fake_result(k, ok, "dim_delay_timer", ok ? NULL : "after a failure");

	now = ok ? fake_dfr_delay_drive(h, path, start) : -1;
	fake_dfr_stats(h, &s);
	ok = ok && fake_dfr_check(h, now != start, "DIM moved the delay") &&
	     fake_dfr_check(h, fake_dfr_is_profile(now),
			    "to another profile's delay") &&
	     fake_dfr_all_ok(h, &s);
	fake_result(k, ok, "dim_delay_moves", ok ? NULL : "after a failure");
	fake_dfr_free(h);
}

/* A short stream in another poll context: delivered, deferred, armed. */
static void fake_dfr_ctx(struct fake_dfr *h, struct fake_dev *fdev,
			 const struct fake_scenario *sc,
			 enum ib_poll_context poll_ctx, const char *name,
			 struct fake_ktap *k)
{
	struct ib_ocq_stats s;
	bool ok;

	fake_dfr_reset(h, IB_OCQ_STRICT, poll_ctx);
	if (fake_dfr_create(h, fdev, sc, FAKE_DFR_USECS, 0)) {
		fake_result(k, false, name, "ib_ocq_alloc_cq() failed");
		return;
	}
	ok = fake_dfr_check(h, fake_dfr_stream(h, FAKE_DFR_SHORT),
			    "stream delivered");
	fake_dfr_stats(h, &s);
	fake_dfr_print(name, &s);
	ok = ok && fake_dfr_all_ok(h, &s) &&
	     fake_dfr_check(h, s.defers > 0, "runs were deferred") &&
	     fake_dfr_check(h, fake_wait_armed(h->fcq, fake_params.stall_ms),
			    "the CQ ends empty and armed");
	fake_dfr_free(h);
	fake_result(k, ok, name, NULL);
}

/**
 * struct fake_dfr_attr - a deferred re-arm's attributes, good or bad
 * @name: subtest name
 * @mode: &ib_ocq_attr.mode
 * @flags: &ib_ocq_attr.flags
 * @usecs: &ib_ocq_attr.defer_usecs
 * @polls: &ib_ocq_attr.defer_polls
 * @direct: through ib_ocq_alloc_cq() with %IB_POLL_DIRECT
 * @ok: the allocation succeeds
 */
struct fake_dfr_attr {
	const char *name;
	enum ib_ocq_mode mode;
	unsigned int flags;
	unsigned int usecs;
	unsigned int polls;
	bool direct;
	bool ok;
};

static const struct fake_dfr_attr fake_dfr_attrs[] = {
	{ .name = "bad_defer_postpone",
	  .flags = IB_OCQ_POSTPONE_ARM,
	  .usecs = FAKE_DFR_USECS },
	{ .name = "bad_defer_polls_alone", .polls = 2 },
	{ .name = "bad_defer_usecs_too_big",
	  .usecs = IB_OCQ_MAX_DEFER_USECS + 1 },
	{ .name = "bad_defer_polls_too_big",
	  .usecs = FAKE_DFR_USECS,
	  .polls = IB_OCQ_MAX_DEFER_POLLS + 1 },
	{ .name = "bad_defer_direct", .usecs = FAKE_DFR_USECS, .direct = true },
	{ .name = "bad_defer_direct_polls_alone", .polls = 2, .direct = true },
	{ .name = "defer_limits",
	  .usecs = IB_OCQ_MAX_DEFER_USECS,
	  .polls = IB_OCQ_MAX_DEFER_POLLS,
	  .ok = true },
	{ .name = "defer_flow",
	  .mode = IB_OCQ_FLOW,
	  .usecs = 1,
	  .polls = 1,
	  .ok = true },
	{ .name = "defer_parallel",
	  .mode = IB_OCQ_PARALLEL,
	  .usecs = FAKE_DFR_USECS,
	  .ok = true },
	{ .name = "direct_without_defer", .direct = true, .ok = true },
	{ .name = "bad_dim_without_usecs", .flags = IB_OCQ_DEFER_DIM },
	{ .name = "bad_dim_postpone",
	  .flags = IB_OCQ_DEFER_DIM | IB_OCQ_POSTPONE_ARM,
	  .usecs = FAKE_DFR_USECS },
	{ .name = "bad_dim_direct",
	  .flags = IB_OCQ_DEFER_DIM,
	  .usecs = FAKE_DFR_USECS,
	  .direct = true },
	{ .name = "bad_flags", .flags = BIT(2), .usecs = FAKE_DFR_USECS },
	{ .name = "dim_flow",
	  .mode = IB_OCQ_FLOW,
	  .flags = IB_OCQ_DEFER_DIM,
	  .usecs = IB_OCQ_MAX_DEFER_USECS,
	  .ok = true },
};

static void fake_dfr_process(struct ib_cq *cq, struct ib_wc *wc)
{
}

/* (c): each of fake_dfr_attrs, -EINVAL or a success, with no warning. */
static void fake_dfr_attrs_run(struct fake_dev *fdev, struct fake_ktap *k)
{
	unsigned int i;

	fdev->sem = 0;
	fdev->ring = 0;
	for (i = 0; i < ARRAY_SIZE(fake_dfr_attrs); i++) {
		const struct fake_dfr_attr *c = &fake_dfr_attrs[i];
		struct ib_ocq_attr attr = {
			.mode = c->mode,
			.flags = c->flags,
			.defer_usecs = c->usecs,
			.defer_polls = c->polls,
		};
		struct ib_ocq *ocq;
		struct ib_cq *cq;
		int ret;

		if (c->mode == IB_OCQ_PARALLEL)
			attr.process = fake_dfr_process;
		if (c->direct) {
			cq = ib_ocq_alloc_cq(&fdev->ibdev, NULL,
					     fake_params.cqe, 0, IB_POLL_DIRECT,
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
		fake_result(k, c->ok ? !ret : ret == -EINVAL, c->name, NULL);
	}
}

/*
 * (d): free an OCQ right after a burst, again and again: strict and flow,
 * the shortest and the longest delay, in each context (ib_ocq_free() in
 * the workqueue one, ib_ocq_free_cq() in the others), after the burst was
 * delivered (the deferral is pending: the timer is running) or at once
 * (the run may still be going).  Nothing
 * may be delivered once the free returned, and the provider's objects and
 * the OCQ must be gone (the script checks the plumbing's live count).
 */
static void fake_dfr_teardown(struct fake_dfr *h, struct fake_dev *fdev,
			      const struct fake_scenario *sc,
			      struct fake_ktap *k)
{
	static const enum ib_poll_context ctxs[] = {
		IB_POLL_WORKQUEUE,
		IB_POLL_SOFTIRQ,
		IB_POLL_UNBOUND_WORKQUEUE,
	};
	unsigned int i, j, pending = 0, waited = 0;
	struct ib_ocq_stats s;
	bool ok = true;
	long n;

	for (i = 0; i < FAKE_DFR_CYCLES && ok; i++) {
		enum ib_ocq_mode mode = i % 2 ? IB_OCQ_FLOW : IB_OCQ_STRICT;
		unsigned int usecs = (i / 2) % 2 ? IB_OCQ_MAX_DEFER_USECS :
						   FAKE_DFR_USECS;
		bool wait = (i / 4) % 2;
		unsigned long flags;

		fake_dfr_reset(h, mode, ctxs[(i / 8) % ARRAY_SIZE(ctxs)]);
		if (fake_dfr_create(h, fdev, sc, usecs, 0)) {
			ok = false;
			break;
		}
		for (j = 0; j < FAKE_DFR_BURST; j++)
			fake_dfr_push(h);
		if (wait) {
			waited++;
			ok = fake_dfr_check(h, fake_dfr_wait_all(h),
					    "a burst delivered");
			fake_dfr_stats(h, &s);
			spin_lock_irqsave(&h->fcq->lock, flags);
			if (s.defers && !h->fcq->armed)
				pending++;
			spin_unlock_irqrestore(&h->fcq->lock, flags);
		}
		fake_dfr_free(h);
		n = atomic_long_read(&h->delivered);
		/* a timer the free left behind would fire in this */
		msleep(2 * usecs / USEC_PER_MSEC + 2 * FAKE_POLL_MS);
		ok = fake_dfr_check(h, atomic_long_read(&h->delivered) == n,
				    "no done() after the free") &&
		     fake_dfr_check(h, !atomic_read(&fake_objects),
				    "the fake CQ is gone") &&
		     !atomic_read(&h->failures) && ok;
	}
	pr_info("# teardown: %u cycles, %u freed after their burst was delivered, %u of them with the arm deferred\n",
		i, waited, pending);
	fake_result(k, ok && pending, "teardown_deferred", NULL);
}

/*
 * (e): the pool shares a CQ only between callers that ask for the same
 * deferral: on one vector, with room for all three, two gets without it
 * share a CQ (the control: the pool does share) and a get with it does
 * not take that CQ.  The fake device has no max_cqe of its own: it gets
 * one for this, so that a pooled CQ has room to share.
 */
static void fake_dfr_pool(struct fake_dev *fdev, struct fake_ktap *k)
{
	struct ib_ocq_attr plain = { .mode = IB_OCQ_FLOW };
	struct ib_ocq_attr defer = { .mode = IB_OCQ_FLOW, .defer_usecs = 100 };
	struct ib_device *dev = &fdev->ibdev;
	int max_cqe = dev->attrs.max_cqe;
	struct ib_cq *cq[3];
	bool ok = true;
	int i;

	dev->attrs.max_cqe = fake_params.cqe;
	cq[0] = ib_ocq_cq_pool_get(dev, 1, 0, IB_POLL_WORKQUEUE, &plain);
	cq[1] = ib_ocq_cq_pool_get(dev, 1, 0, IB_POLL_WORKQUEUE, &plain);
	cq[2] = ib_ocq_cq_pool_get(dev, 1, 0, IB_POLL_WORKQUEUE, &defer);
	for (i = 0; i < ARRAY_SIZE(cq); i++) {
		if (IS_ERR(cq[i])) {
			pr_info("# pool: get %d returned %ld\n", i,
				PTR_ERR(cq[i]));
			ok = false;
		}
	}
	if (ok && cq[0] != cq[1]) {
		pr_info("# pool: two gets without the deferral did not share a CQ\n");
		ok = false;
	}
	if (ok && cq[2] == cq[0]) {
		pr_info("# pool: a get with the deferral shared a CQ without it\n");
		ok = false;
	}
	for (i = ARRAY_SIZE(cq) - 1; i >= 0; i--)
		if (!IS_ERR(cq[i]))
			ib_ocq_cq_pool_put(cq[i], 1);
	ib_ocq_cq_pool_destroy(dev);
	dev->attrs.max_cqe = max_cqe;
	fake_result(k, ok, "pool_keeps_defer_apart", NULL);
}

/*
 * fake_defer: the deferred re-arm, strict and flow, against the same
 * stream without it; other poll contexts; the attributes; teardown with a
 * deferral pending.  See the top of the file.
 */
int fake_run_defer(const struct fake_scenario *sc, struct fake_dev *fdev,
		   struct fake_ktap *k)
{
	struct fake_dfr *h;

	h = kzalloc(sizeof(*h), GFP_KERNEL);
	if (!h)
		return -ENOMEM;
	fake_dfr_mode(h, fdev, sc, IB_OCQ_STRICT, k);
	fake_dfr_mode(h, fdev, sc, IB_OCQ_FLOW, k);
	fake_dfr_ctx(h, fdev, sc, IB_POLL_SOFTIRQ, "softirq_defer", k);
	fake_dfr_ctx(h, fdev, sc, IB_POLL_UNBOUND_WORKQUEUE, "unbound_defer",
		     k);
	fake_dfr_dim(h, fdev, sc, k);
	fake_dfr_dim_delay(h, fdev, sc, k);
	fake_dfr_attrs_run(fdev, k);
	fake_dfr_teardown(h, fdev, sc, k);
	fake_dfr_pool(fdev, k);
	kfree(h);
	return 0;
}

/* fake_tune: the suspension it sets, and its busy polls */
#define FAKE_TUNE_SUSPEND_USECS 1000
#define FAKE_TUNE_BUSY_TRIES 100
#define FAKE_TUNE_BUDGET 16

static const char *fake_tune_str(const struct ib_ocq_tune *t, char *buf,
				 size_t size)
{
	snprintf(buf, size,
		 "flags %#x defer_usecs %u defer_polls %u suspend_usecs %u",
		 t->flags, t->defer_usecs, t->defer_polls, t->suspend_usecs);
	return buf;
}

/* ib_ocq_set_tune() of @h's CQ returned @want, and reads back @t if it was 0. */
static bool fake_tune_to(struct fake_dfr *h, const struct ib_ocq_tune *t,
			 int want)
{
	struct ib_cq *cq = ib_ocq_cq(h->ocq);
	struct ib_ocq_tune before, after;
	char b1[96], b2[96];
	int ret;

	ib_ocq_get_tune(cq, &before);
	ret = ib_ocq_set_tune(cq, t);
	ib_ocq_get_tune(cq, &after);
	if (ret != want) {
		pr_info("# tune: ib_ocq_set_tune(%s) returned %d, not %d\n",
			fake_tune_str(t, b1, sizeof(b1)), ret, want);
		return fake_dfr_check(h, false, "the retune's return");
	}
	if (!memcmp(&after, ret ? &before : t, sizeof(after)))
		return true;
	pr_info("# tune: after ib_ocq_set_tune(%s) = %d it reads %s\n",
		fake_tune_str(t, b1, sizeof(b1)), ret,
		fake_tune_str(&after, b2, sizeof(b2)));
	return fake_dfr_check(h, false,
			      ret ? "a refused retune changed nothing" :
				    "the retune reads back");
}

/*
 * tune_defer_on_off: an OCQ made without the deferral, the same stream
 * before, during and after a retune turns it on: events fall by
 * %FAKE_DFR_RATIO at least while it is on, runs defer only then, and
 * once off the CQ arms after every run again (no deferral, ends armed).
 */
static void fake_tune_defer(struct fake_dfr *h, struct fake_dev *fdev,
			    const struct fake_scenario *sc, struct fake_ktap *k)
{
	const struct ib_ocq_tune on = { .defer_usecs = FAKE_DFR_USECS,
					.defer_polls = FAKE_DFR_POLLS };
	const struct ib_ocq_tune off = {};
	struct ib_ocq_stats s0, s1, s2, s3, s4;
	bool ok;

	fake_dfr_reset(h, IB_OCQ_STRICT, IB_POLL_WORKQUEUE);
	if (fake_dfr_create(h, fdev, sc, 0, 0)) {
		fake_result(k, false, "tune_defer_on_off",
			    "ib_ocq_alloc() failed");
		return;
	}
	fake_dfr_stats(h, &s0);
	ok = fake_dfr_check(h, fake_dfr_stream(h, FAKE_DFR_SHORT),
			    "stream delivered before");
	fake_dfr_stats(h, &s1);
	ok = ok && fake_tune_to(h, &on, 0) &&
	     fake_dfr_check(h, fake_dfr_stream(h, FAKE_DFR_SHORT),
			    "stream delivered with the deferral");
	fake_dfr_stats(h, &s2);
	/* off once the timer's polls are spent: from then on no deferral */
	ok = ok && fake_dfr_idle(h, "tune_defer_on_off", "turned on") &&
	     fake_tune_to(h, &off, 0);
	fake_dfr_stats(h, &s3);
	ok = ok && fake_dfr_check(h, fake_dfr_stream(h, FAKE_DFR_SHORT),
				  "stream delivered after");
	fake_dfr_stats(h, &s4);
	pr_info("# tune_defer_on_off: events %llu off, %llu on, %llu off again; defers %llu, %llu, %llu\n",
		s1.events - s0.events, s2.events - s1.events,
		s4.events - s3.events, s1.defers - s0.defers,
		s2.defers - s1.defers, s4.defers - s3.defers);
	ok = ok && fake_dfr_all_ok(h, &s4) &&
	     fake_dfr_check(h, s1.defers == s0.defers, "no deferral before") &&
	     fake_dfr_check(h, s2.defers > s1.defers,
			    "runs deferred once on") &&
	     fake_dfr_check(h,
			    (s2.events - s1.events) * FAKE_DFR_RATIO <
				    s1.events - s0.events,
			    "far fewer events once on") &&
	     fake_dfr_check(h, s4.defers == s3.defers,
			    "no deferral once off again") &&
	     fake_dfr_check(h,
			    (s2.events - s1.events) * FAKE_DFR_RATIO <
				    s4.events - s3.events,
			    "events as before once off again") &&
	     fake_dfr_check(h, fake_wait_armed(h->fcq, fake_params.stall_ms),
			    "the CQ ends empty and armed");
	fake_result(k, ok, "tune_defer_on_off", NULL);
	fake_dfr_free(h);
}

/**
 * struct fake_tuner - the thread that retunes an OCQ during tune_race
 * @h: the OCQ's harness
 * @retunes: retunes it made (read once it stopped)
 * @errors: retunes that failed
 */
struct fake_tuner {
	struct fake_dfr *h;
	unsigned int retunes;
	unsigned int errors;
};

/* Retune through the settings in turn until stopped, a few us apart. */
static int fake_tuner_fn(void *data)
{
	static const struct ib_ocq_tune tunes[] = {
		{ .defer_usecs = FAKE_DFR_USECS,
		  .defer_polls = FAKE_DFR_POLLS },
		{ .flags = IB_OCQ_DEFER_DIM, .defer_usecs = FAKE_DFR_USECS },
		{ .suspend_usecs = FAKE_TUNE_SUSPEND_USECS },
		{ .defer_usecs = 1, .defer_polls = 1, .suspend_usecs = 1 },
		{},
	};
	struct fake_tuner *t = data;
	struct ib_cq *cq = ib_ocq_cq(t->h->ocq);

	while (!kthread_should_stop()) {
		if (ib_ocq_set_tune(cq, &tunes[t->retunes % ARRAY_SIZE(tunes)]))
			t->errors++;
		t->retunes++;
		usleep_range(FAKE_DFR_GAP_US, 4 * FAKE_DFR_GAP_US);
	}
	return 0;
}

/*
 * tune_race: flow mode, a stream of %FAKE_DFR_STREAM while a thread of its
 * own retunes the OCQ through the deferral, software DIM, the suspension
 * and none, a few microseconds apart, as the runs, the timer and DIM's work
 * go on.  Everything once, in its flow's order; tuned off at the end, the
 * CQ ends armed.
 */
static void fake_tune_race(struct fake_dfr *h, struct fake_dev *fdev,
			   const struct fake_scenario *sc, struct fake_ktap *k)
{
	const struct ib_ocq_tune off = {};
	struct fake_tuner t = { .h = h };
	struct task_struct *task;
	struct ib_ocq_stats s;
	bool ok;

	fake_dfr_reset(h, IB_OCQ_FLOW, IB_POLL_WORKQUEUE);
	if (fake_dfr_create(h, fdev, sc, 0, 0)) {
		fake_result(k, false, "tune_race", "ib_ocq_alloc() failed");
		return;
	}
	task = kthread_run(fake_tuner_fn, &t, "fake_tuner");
	if (IS_ERR(task)) {
		fake_result(k, false, "tune_race", "kthread_run() failed");
		fake_dfr_free(h);
		return;
	}
	ok = fake_dfr_check(h, fake_dfr_stream(h, FAKE_DFR_STREAM),
			    "stream delivered during the retunes");
	kthread_stop(task);
	ok = fake_tune_to(h, &off, 0) && ok;
	fake_dfr_stats(h, &s);
	fake_dfr_print("tune_race", &s);
	pr_info("# tune_race: %u retunes during the stream, %u failed\n",
		t.retunes, t.errors);
	ok = ok && fake_dfr_all_ok(h, &s) &&
	     fake_dfr_check(h, t.retunes >= 8, "retunes during the stream") &&
	     fake_dfr_check(h, !t.errors, "every retune taken") &&
	     fake_dfr_check(h, s.defers > 0, "runs deferred while on") &&
	     fake_dfr_check(h, fake_wait_armed(h->fcq, fake_params.stall_ms),
			    "the CQ ends empty and armed");
	fake_result(k, ok, "tune_race", NULL);
	fake_dfr_free(h);
}

/* Busy polls until one takes completions; the last return in *@ret. */
static bool fake_tune_busy_took(struct fake_dfr *h, int *ret)
{
	unsigned int i;

	for (i = 0; i < FAKE_TUNE_BUSY_TRIES; i++) {
		if (fake_dfr_room(h))
			fake_dfr_push(h);
		WRITE_ONCE(h->busy_task, current);
		*ret = ib_ocq_busy_poll(ib_ocq_cq(h->ocq), FAKE_TUNE_BUDGET);
		WRITE_ONCE(h->busy_task, NULL);
		if (*ret > 0 || (*ret < 0 && *ret != -EBUSY))
			break;
		usleep_range(FAKE_DFR_GAP_US, 2 * FAKE_DFR_GAP_US);
	}
	return *ret > 0;
}

/*
 * tune_suspend: flow mode (done() in the domains, or in the busy poll's
 * caller when the run dispatches a short batch itself), made without the
 * suspension: busy polls are refused until a retune allows them (at once:
 * on a paused OCQ, where no run has applied the retune yet, a busy poll is
 * -EAGAIN, not -EOPNOTSUPP), then one takes completions and suspends the
 * CQ's events, and once a retune ends it they are refused again; the
 * suspension under way ends by its timer, and the CQ ends armed.
 */
static void fake_tune_suspend(struct fake_dfr *h, struct fake_dev *fdev,
			      const struct fake_scenario *sc,
			      struct fake_ktap *k)
{
	const struct ib_ocq_tune on = { .suspend_usecs =
						FAKE_TUNE_SUSPEND_USECS };
	const struct ib_ocq_tune off = {};
	struct ib_ocq_stats s0, s1;
	int before, paused, during = 0, after;
	bool ok;

	fake_dfr_reset(h, IB_OCQ_FLOW, IB_POLL_WORKQUEUE);
	if (fake_dfr_create(h, fdev, sc, 0, 0)) {
		fake_result(k, false, "tune_suspend", "ib_ocq_alloc() failed");
		return;
	}
	before = ib_ocq_busy_poll(ib_ocq_cq(h->ocq), FAKE_TUNE_BUDGET);
	fake_dfr_stats(h, &s0);
	ib_ocq_pause(h->ocq);
	ok = fake_tune_to(h, &on, 0);
	paused = ib_ocq_busy_poll(ib_ocq_cq(h->ocq), FAKE_TUNE_BUDGET);
	ib_ocq_resume(h->ocq);
	ok = ok && fake_tune_busy_took(h, &during);
	fake_dfr_stats(h, &s1);
	ok = fake_tune_to(h, &off, 0) && ok;
	after = ib_ocq_busy_poll(ib_ocq_cq(h->ocq), FAKE_TUNE_BUDGET);
	pr_info("# tune_suspend: busy poll %d before, %d paused after the retune on, %d then, %d after off; suspends %llu\n",
		before, paused, during, after, s1.suspends - s0.suspends);
	ok = fake_dfr_check(h, before == -EOPNOTSUPP,
			    "busy polls refused before") &&
	     ok &&
	     fake_dfr_check(h, paused == -EAGAIN,
			    "paused, a busy poll is allowed at once") &&
	     fake_dfr_check(h, s1.suspends > s0.suspends,
			    "a busy poll suspended the CQ once on") &&
	     fake_dfr_check(h, after == -EOPNOTSUPP,
			    "busy polls refused once off") &&
	     fake_dfr_check(h, fake_dfr_wait_all(h), "everything delivered") &&
	     fake_dfr_check(h, fake_wait_armed(h->fcq, fake_params.stall_ms),
			    "the CQ ends empty and armed");
	fake_dfr_stats(h, &s1);
	ok = ok && fake_dfr_all_ok(h, &s1);
	fake_result(k, ok, "tune_suspend", NULL);
	fake_dfr_free(h);
}

/*
 * tune_dim: software DIM turned on by a retune of an OCQ made without it:
 * the delay in force (defer_usecs_now) is one of DIM's profiles', and
 * once a retune turns DIM off it is defer_usecs again.
 */
static void fake_tune_dim(struct fake_dfr *h, struct fake_dev *fdev,
			  const struct fake_scenario *sc, struct fake_ktap *k)
{
	const struct ib_ocq_tune fixed = { .defer_usecs =
						   FAKE_DFR_DELAY_USECS };
	struct ib_ocq_tune dim = fixed;
	long now_fixed = -1, now_dim = -1, now_off = -1;
	char path[128];
	bool ok;

	dim.flags = IB_OCQ_DEFER_DIM;
	fake_dfr_reset(h, IB_OCQ_STRICT, IB_POLL_WORKQUEUE);
	if (fake_dfr_create(h, fdev, sc, 0, 0)) {
		fake_result(k, false, "tune_dim", "ib_ocq_alloc() failed");
		return;
	}
	ok = !fake_dfr_info_path(h, path, sizeof(path));
	if (ok && fake_tune_to(h, &fixed, 0))
		now_fixed = fake_dfr_delay_now(path);
	if (ok && fake_tune_to(h, &dim, 0))
		now_dim = fake_dfr_delay_now(path);
	ok = ok && fake_dfr_check(h, fake_dfr_push_n(h, FAKE_DFR_BURST),
				  "a burst delivered with DIM");
	if (ok && fake_tune_to(h, &fixed, 0))
		now_off = fake_dfr_delay_now(path);
	pr_info("# tune_dim: defer_usecs_now %ld fixed, %ld with DIM, %ld without again\n",
		now_fixed, now_dim, now_off);
	ok = ok &&
	     fake_dfr_check(h, now_fixed == FAKE_DFR_DELAY_USECS,
			    "the fixed delay is defer_usecs") &&
	     fake_dfr_check(h,
			    fake_dfr_is_profile(now_dim) &&
				    now_dim < FAKE_DFR_DELAY_USECS,
			    "DIM's delay is a profile's") &&
	     fake_dfr_check(h, now_off == FAKE_DFR_DELAY_USECS,
			    "without DIM again, defer_usecs") &&
	     fake_dfr_check(h, fake_wait_armed(h->fcq, fake_params.stall_ms),
			    "the CQ ends empty and armed");
	fake_result(k, ok, "tune_dim", NULL);
	fake_dfr_free(h);
}

/* One OCQ of @poll_ctx and @flags for tune_bad, or NULL. */
static struct ib_cq *fake_tune_cq(struct fake_dev *fdev,
				  enum ib_poll_context poll_ctx,
				  unsigned int flags)
{
	struct ib_ocq_attr attr = { .flags = flags };
	struct ib_cq *cq;

	fdev->sem = 0;
	fdev->ring = 0;
	cq = ib_ocq_alloc_cq(&fdev->ibdev, NULL, fake_params.cqe, 0, poll_ctx,
			     &attr);
	if (!IS_ERR(cq))
		return cq;
	pr_info("# tune_bad: ib_ocq_alloc_cq(ctx %d, flags %#x): %ld\n",
		poll_ctx, flags, PTR_ERR(cq));
	return NULL;
}

/* ib_ocq_set_tune(@cq, @t) returns @want and, refused, leaves @cq as it was. */
static bool fake_tune_expect(struct ib_cq *cq, const char *what,
			     const struct ib_ocq_tune *t, int want)
{
	struct ib_ocq_tune before, after;
	int ret;

	ib_ocq_get_tune(cq, &before);
	ret = ib_ocq_set_tune(cq, t);
	ib_ocq_get_tune(cq, &after);
	if (ret == want && (!ret || !memcmp(&before, &after, sizeof(after))))
		return true;
	pr_info("# tune_bad: %s: %d (want %d)%s\n", what, ret, want,
		memcmp(&before, &after, sizeof(after)) ? ", and it changed" :
							 "");
	return false;
}

/* A CQ of the pool: shared, no ULP retunes it (-EBUSY). */
static bool fake_tune_pooled(struct fake_dev *fdev)
{
	const struct ib_ocq_tune dfr = { .defer_usecs = 1 };
	struct ib_device *dev = &fdev->ibdev;
	int max_cqe = dev->attrs.max_cqe;
	struct ib_cq *cq;
	bool ok;

	dev->attrs.max_cqe = fake_params.cqe;
	cq = ib_ocq_cq_pool_get(dev, 1, 0, IB_POLL_WORKQUEUE, NULL);
	ok = !IS_ERR(cq) && fake_tune_expect(cq, "pooled", &dfr, -EBUSY);
	if (IS_ERR(cq))
		pr_info("# tune_bad: ib_ocq_cq_pool_get: %ld\n", PTR_ERR(cq));
	else
		ib_ocq_cq_pool_put(cq, 1);
	ib_ocq_cq_pool_destroy(dev);
	dev->attrs.max_cqe = max_cqe;
	return ok;
}

/*
 * tune_bad: what ib_ocq_alloc_cq() refuses, a retune refuses with the same
 * -EINVAL and changes nothing; on a CQ made with %IB_OCQ_POSTPONE_ARM no
 * deferral, on %IB_POLL_SOFTIRQ no suspension, on %IB_POLL_DIRECT neither
 * (nothing to tune: all zero is taken).
 */
static void fake_tune_bad(struct fake_dev *fdev, struct fake_ktap *k)
{
	static const struct {
		const char *what;
		struct ib_ocq_tune t;
	} bad[] = {
		{ "unknown flag", { .flags = BIT(7) } },
		{ "postpone as a flag", { .flags = IB_OCQ_POSTPONE_ARM } },
		{ "DIM without a deferral", { .flags = IB_OCQ_DEFER_DIM } },
		{ "defer_usecs too long",
		  { .defer_usecs = IB_OCQ_MAX_DEFER_USECS + 1 } },
		{ "defer_polls too many",
		  { .defer_usecs = 1,
		    .defer_polls = IB_OCQ_MAX_DEFER_POLLS + 1 } },
		{ "defer_polls without a deferral", { .defer_polls = 1 } },
		{ "suspend_usecs too long",
		  { .suspend_usecs = IB_OCQ_MAX_SUSPEND_USECS + 1 } },
		{ "suspension with DIM",
		  { .flags = IB_OCQ_DEFER_DIM,
		    .defer_usecs = 1,
		    .suspend_usecs = 1 } },
	};
	const struct ib_ocq_tune dfr = { .defer_usecs = 1 };
	const struct ib_ocq_tune sus = { .suspend_usecs = 1 };
	const struct ib_ocq_tune zero = {};
	struct ib_cq *cq;
	bool ok;
	int i;

	cq = fake_tune_cq(fdev, IB_POLL_WORKQUEUE, 0);
	ok = cq && fake_tune_expect(cq, "a deferral", &dfr, 0);
	for (i = 0; ok && i < ARRAY_SIZE(bad); i++)
		ok = fake_tune_expect(cq, bad[i].what, &bad[i].t, -EINVAL);
	ok = ok && ib_ocq_set_tune(NULL, &zero) == -EINVAL &&
	     ib_ocq_set_tune(cq, NULL) == -EINVAL;
	if (cq)
		ib_ocq_free_cq(cq);

	cq = ok ? fake_tune_cq(fdev, IB_POLL_WORKQUEUE, IB_OCQ_POSTPONE_ARM) :
		  NULL;
	ok = cq && fake_tune_expect(cq, "postponed: deferral", &dfr, -EINVAL) &&
	     fake_tune_expect(cq, "postponed: suspension", &sus, -EINVAL) &&
	     fake_tune_expect(cq, "postponed: nothing", &zero, 0);
	if (cq)
		ib_ocq_free_cq(cq);

	cq = ok ? fake_tune_cq(fdev, IB_POLL_SOFTIRQ, 0) : NULL;
	ok = cq && fake_tune_expect(cq, "softirq: suspension", &sus, -EINVAL) &&
	     fake_tune_expect(cq, "softirq: deferral", &dfr, 0);
	if (cq)
		ib_ocq_free_cq(cq);

	cq = ok ? fake_tune_cq(fdev, IB_POLL_DIRECT, 0) : NULL;
	ok = cq && fake_tune_expect(cq, "direct: deferral", &dfr, -EINVAL) &&
	     fake_tune_expect(cq, "direct: suspension", &sus, -EINVAL) &&
	     fake_tune_expect(cq, "direct: nothing", &zero, 0);
	if (cq)
		ib_ocq_free_cq(cq);

	ok = ok && fake_tune_pooled(fdev);
	fake_result(k, ok, "tune_bad", NULL);
}

/*
 * fake_tune: ib_ocq_set_tune() on live OCQs: the deferral turned on and off,
 * retunes racing a flow stream, the suspension, software DIM, and what is
 * refused.  Its debugfs side: selftests/ocq/ocq_tune.sh.
 */
int fake_run_tune(const struct fake_scenario *sc, struct fake_dev *fdev,
		  struct fake_ktap *k)
{
	struct fake_dfr *h;

	h = kzalloc(sizeof(*h), GFP_KERNEL);
	if (!h)
		return -ENOMEM;
	fake_tune_defer(h, fdev, sc, k);
	fake_tune_race(h, fdev, sc, k);
	fake_tune_suspend(h, fdev, sc, k);
	fake_tune_dim(h, fdev, sc, k);
	fake_tune_bad(fdev, k);
	kfree(h);
	return 0;
}
