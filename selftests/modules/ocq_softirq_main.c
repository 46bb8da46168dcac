// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ocq_softirq_test - ordered CQs on %IB_POLL_SOFTIRQ, where irq_poll runs
 * every unit of a CPU one after another, on the fake provider.
 *
 * A test module in the kselftest_module.h pattern: init runs test= and
 * fails the load if a subtest failed.
 *
 * test=hol: the head-of-line bound there.  An %IB_OCQ_FLOW OCQ of two
 *	domains; flow A's QP in one, flow B's in the other.  A backlog of A
 *	completions (32, 96 and 200, within the engine's ring) is pushed at
 *	once; every unit then runs on the CPU that took its event, one after
 *	another.  While A's domain works through it, a B completion lands in
 *	the CQ during one of A's done() calls (every few of them, at each
 *	phase of the domain's batches): B's done() must come after at most
 *	2 * %IB_OCQ_HOL_DONES of A's done() calls, counting the one it landed
 *	in, as ib_ocq.h states for softirq.  Counted in done() calls, not time:
 *	on one CPU nothing else decides the order.  Every done() of a backlog
 *	must run on one CPU (else the measurement is not of the serial host),
 *	once and in its flow's order.
 * test=share: see share_run() below.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/hash.h>
#include <linux/hrtimer.h>
#include <linux/interrupt.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/kernel_stat.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/wait.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_ocq.h>

#include "ocq_test_compat.h"
#include "fake_provider.h"

#define SQ_CQE 256
/* how long the test waits for progress, in milliseconds */
#define SQ_WAIT_MS 30000

static char *test = "hol";
module_param(test, charp, 0444);
MODULE_PARM_DESC(test, "hol or share");

struct sq_ktap {
	unsigned int nr;
	unsigned int failed;
};

static void sq_result(struct sq_ktap *k, bool ok, const char *name,
		      const char *note)
{
	k->nr++;
	if (!ok)
		k->failed++;
	pr_info("%s %u %s%s%s\n", ok ? "ok" : "not ok", k->nr, name,
		note ? " # " : "", note ?: "");
}

/* Wait until @fcq is empty and armed: the OCQ's first run went through. */
static bool sq_wait_armed(struct fake_cq *fcq)
{
	unsigned long end = jiffies + msecs_to_jiffies(SQ_WAIT_MS);
	unsigned long flags;
	bool armed;

	for (;;) {
		spin_lock_irqsave(&fcq->lock, flags);
		armed = fcq->armed && fcq->head == fcq->tail && !fcq->ready;
		spin_unlock_irqrestore(&fcq->lock, flags);
		if (armed || time_after(jiffies, end))
			return armed;
		usleep_range(5000, 10000);
	}
}

/* --- test=hol --- */

/* A's backlogs, in completions: each within the engine's ring of SQ_CQE */
static const unsigned int hol_backlogs[] = { 32, 96, 200 };
/* the bound ib_ocq.h states for %IB_POLL_SOFTIRQ */
#define HOL_BOUND (2 * IB_OCQ_HOL_DONES)
/* A's QP number; B's is the first after it in the other domain */
#define HOL_QP_A 0x100
#define HOL_DOMAINS 2

/**
 * struct hol - flow A with a backlog, flow B one completion at a time
 * @ocq: the OCQ, %IB_OCQ_FLOW, %HOL_DOMAINS domains, %IB_POLL_SOFTIRQ
 * @fcq: its fake CQ
 * @qp_a: A's QP (only qp_num set: the engine's default flow key)
 * @qp_b: B's QP
 * @areqs: A's requests, one per backlog entry
 * @breq: B's one request
 * @a_seq: A's next sequence number pushed
 * @a_next: A's next sequence number done() expects
 * @a_dones: A's done() calls (A)
 * @a_end: @a_dones at which the current backlog ends
 * @b_next: push B in the A done() that makes @a_dones reach this
 * @b_at: @a_dones before the A done() in which B landed
 * @b_busy: B's completion is in flight (A)
 * @b_dones: B's done() calls (A)
 * @samples: B completions measured in this backlog
 * @max_wait: the most A done() calls a B completion waited for, this backlog
 * @cpu: the CPU of this backlog's done() calls, or -1 before the first
 * @cpus_ok: every done() of this backlog ran on @cpu
 * @bad: done() calls out of order or failed (A)
 * @wq: the test waits here
 */
struct hol {
	struct ib_ocq *ocq;
	struct fake_cq *fcq;
	struct ib_qp qp_a;
	struct ib_qp qp_b;
	struct ib_cqe areqs[SQ_CQE];
	struct ib_cqe breq;
	u32 a_seq;
	u32 a_next;
	atomic_t a_dones;
	int a_end;
	int b_next;
	int b_at;
	atomic_t b_busy;
	atomic_t b_dones;
	unsigned int samples;
	int max_wait;
	int cpu;
	bool cpus_ok;
	atomic_t bad;
	wait_queue_head_t wq;
};

/*
 * The domain of a QP number in an OCQ of %HOL_DOMAINS flow domains
 * without a flow_key, as the engine maps it (ocq_flow_of()).  If the
 * mapping changed and B landed in A's domain, B would wait for A's whole
 * backlog: the test would fail, never pass by accident.
 */
static unsigned int hol_domain(u32 qp_num)
{
	return reciprocal_scale(hash_32(qp_num, 32), HOL_DOMAINS);
}

static void hol_same_cpu(struct hol *h)
{
	int cpu = raw_smp_processor_id();

	if (h->cpu < 0)
		h->cpu = cpu;
	else if (h->cpu != cpu)
		h->cpus_ok = false;
}

static void hol_push(struct hol *h, struct ib_qp *qp, struct ib_cqe *cqe,
		     u32 seq)
{
	struct ib_wc wc = {
		.wr_cqe = cqe,
		.status = IB_WC_SUCCESS,
		.opcode = IB_WC_RECV,
		.qp = qp,
		.byte_len = seq,
	};
	u64 pos;

	if (!fake_cq_push(h->fcq, &wc, &pos))
		atomic_inc(&h->bad);
}

/*
 * A's done(): in order; and B's completion lands in the CQ during the one
 * that reaches @b_next, while enough of the backlog is left to tell.
 */
static void hol_a_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct hol *h = ib_ocq_private(cq);
	int k = atomic_read(&h->a_dones) + 1;

	hol_same_cpu(h);
	if (wc->status != IB_WC_SUCCESS || wc->byte_len != h->a_next++)
		atomic_inc(&h->bad);
	if (k >= h->b_next && h->a_end - k >= HOL_BOUND &&
	    !atomic_read(&h->b_busy)) {
		atomic_set(&h->b_busy, 1);
		h->b_at = k - 1;
		hol_push(h, &h->qp_b, &h->breq, 0);
	}
	atomic_set(&h->a_dones, k);
	wake_up(&h->wq);
}

/* B's done(): how many A done() calls it waited for. */
static void hol_b_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct hol *h = ib_ocq_private(cq);
	int now = atomic_read(&h->a_dones);

	hol_same_cpu(h);
	if (wc->status != IB_WC_SUCCESS)
		atomic_inc(&h->bad);
	h->max_wait = max(h->max_wait, now - h->b_at);
	h->samples++;
	/* the next B lands at another phase of A's batches */
	h->b_next = now + 1 + h->samples % IB_OCQ_HOL_DONES;
	atomic_inc(&h->b_dones);
	/* pairs with atomic_read_acquire() in hol_backlog() */
	atomic_set_release(&h->b_busy, 0);
	wake_up(&h->wq);
}

/* Push @n A completions at once, as a burst the HCA wrote: one event. */
static void hol_push_backlog(struct hol *h, unsigned int n)
{
	struct fake_cq *fcq = h->fcq;
	unsigned long flags;
	unsigned int i;
	bool direct;
	u64 pos;

	spin_lock_irqsave(&fcq->lock, flags);
	for (i = 0; i < n; i++) {
		struct ib_wc wc = {
			.wr_cqe = &h->areqs[i],
			.status = IB_WC_SUCCESS,
			.opcode = IB_WC_RECV,
			.qp = &h->qp_a,
			.byte_len = h->a_seq++,
		};

		if (!fake_cq_add(fcq, &wc, &pos))
			atomic_inc(&h->bad);
	}
	direct = fake_cq_land(fcq);
	spin_unlock_irqrestore(&fcq->lock, flags);
	if (direct)
		fake_direct(fcq);
}

/* One backlog of @n; false if it did not drain in time. */
static bool hol_backlog(struct hol *h, unsigned int n)
{
	unsigned long bound = msecs_to_jiffies(SQ_WAIT_MS);
	int base = atomic_read(&h->a_dones);

	h->a_end = base + n;
	h->b_next = base + 1;
	h->samples = 0;
	h->max_wait = 0;
	h->cpu = -1;
	h->cpus_ok = true;
	hol_push_backlog(h, n);
	return wait_event_timeout(h->wq,
				  atomic_read(&h->a_dones) == h->a_end &&
					  !atomic_read_acquire(&h->b_busy),
				  bound);
}

static int hol_run(struct fake_dev *fdev, struct sq_ktap *k)
{
	struct ib_ocq_attr attr = {
		.mode = IB_OCQ_FLOW,
		.nr_domains = HOL_DOMAINS,
	};
	struct ib_ocq_stats s;
	unsigned int i;
	struct ib_cq *cq;
	struct hol *h;
	char name[32];
	bool ok;

	h = kzalloc(sizeof(*h), GFP_KERNEL);
	if (!h)
		return -ENOMEM;
	init_waitqueue_head(&h->wq);
	h->qp_a.qp_num = HOL_QP_A;
	h->qp_b.qp_num = HOL_QP_A + 1;
	while (hol_domain(h->qp_b.qp_num) == hol_domain(h->qp_a.qp_num))
		h->qp_b.qp_num++;
	for (i = 0; i < ARRAY_SIZE(h->areqs); i++)
		h->areqs[i].done = hol_a_done;
	h->breq.done = hol_b_done;
	/* completions land at once; every event from the pusher itself */
	fdev->sem = FAKE_PROMPT | FAKE_INLINE;
	fdev->rnd = 0x401;
	cq = ib_ocq_alloc_cq(&fdev->ibdev, h, SQ_CQE, 0, IB_POLL_SOFTIRQ,
			     &attr);
	if (IS_ERR(cq)) {
		kfree(h);
		return PTR_ERR(cq);
	}
	h->ocq = ib_cq_to_ocq(cq);
	h->fcq = to_fake_cq(cq);
	pr_info("# hol: A is QP %#x, B QP %#x (domains %u, %u), bound %u A done() calls\n",
		h->qp_a.qp_num, h->qp_b.qp_num, hol_domain(h->qp_a.qp_num),
		hol_domain(h->qp_b.qp_num), HOL_BOUND);
	ok = sq_wait_armed(h->fcq);
	for (i = 0; i < ARRAY_SIZE(hol_backlogs) && ok; i++) {
		ok = hol_backlog(h, hol_backlogs[i]);
		pr_info("# hol: A backlog %u: %u B completions waited for at most %d A done() calls; done() on one CPU: %s\n",
			hol_backlogs[i], h->samples, h->max_wait,
			h->cpus_ok ? "yes" : "no");
		snprintf(name, sizeof(name), "hol_backlog_%u", hol_backlogs[i]);
		sq_result(k,
			  ok && h->samples && h->max_wait <= HOL_BOUND &&
				  h->cpus_ok && !atomic_read(&h->bad),
			  name, ok ? NULL : "no progress");
	}
	ib_ocq_get_stats(h->ocq, &s);
	pr_info("# hol: stats runs=%llu domain_runs=%llu yields=%llu parks=%llu completions=%llu; %d bad done() calls\n",
		s.runs, s.domain_runs, s.yields, s.parks, s.completions,
		atomic_read(&h->bad));
	ib_ocq_free_cq(cq);
	kfree(h);
	return ok ? 0 : -ETIMEDOUT;
}

/* --- test=share --- */

/*
 * The OCQ's budget: a run yields once it took this many, which is after
 * its first poll, of a batch of up to SH_OCQ_BATCH (the engine polls whole
 * batches): 32 completions a tick make two runs that yield and one that
 * arms the CQ.
 */
#define SH_OCQ_BUDGET 2
#define SH_OCQ_BATCH 16
/* completions per tick: the upstream CQ's, and the OCQ's (phase B) */
#define SH_U_PER_TICK 1
#define SH_O_PER_TICK 32
/* the timer's period, and its ticks per phase */
#define SH_TICK_NS (500 * NSEC_PER_USEC)
#define SH_TICKS 400
/* phases A and B, alternately, this many times; the median counts */
#define SH_REPS 3
/*
 * The most irq_poll rounds the OCQ may add per run of its, in
 * hundredths.  Runs that report their work (16 completions of irq_poll's
 * 256) add one round a tick, measured (the arming run's poll raises the
 * softirq again once it completed): 33 at three runs a tick.  Runs that
 * report their whole weight whenever they yield end the round each time:
 * two more a tick, 100.
 */
#define SH_MAX_ROUNDS_PCT 50

/**
 * struct share - an upstream softirq CQ beside a busy OCQ, on one CPU
 * @ucq: the upstream CQ, ib_alloc_cq() with %IB_POLL_SOFTIRQ
 * @ufcq: its fake CQ
 * @ocq: the OCQ, strict, %IB_POLL_SOFTIRQ, budget %SH_OCQ_BUDGET
 * @ofcq: its fake CQ
 * @ucqe: the upstream CQ's completions' wr_cqe
 * @ocqe: the OCQ's
 * @timer: raises both CQs' completions on @cpu
 * @cpu: the CPU of the measurement
 * @busy: phase B: the timer raises the OCQ's completions too
 * @ticks: the timer's ticks this phase (A)
 * @stop: the timer stops (A)
 * @u_pushed: upstream completions made ready
 * @o_pushed: the OCQ's
 * @u_dones: upstream done() calls (A)
 * @o_dones: the OCQ's (A)
 * @u_ksoftirqd: of @u_dones, those that ran in ksoftirqd (A)
 * @bad: done() calls out of order (A)
 */
struct share {
	struct ib_cq *ucq;
	struct fake_cq *ufcq;
	struct ib_ocq *ocq;
	struct fake_cq *ofcq;
	struct ib_cqe ucqe;
	struct ib_cqe ocqe;
	struct hrtimer timer;
	int cpu;
	bool busy;
	atomic_t ticks;
	atomic_t stop;
	u64 u_pushed;
	u64 o_pushed;
	atomic_long_t u_dones;
	atomic_long_t o_dones;
	atomic_long_t u_ksoftirqd;
	atomic_t bad;
};

/* one phase's counts */
struct share_phase {
	unsigned int ticks;
	unsigned int rounds;
	u64 ocq_runs;
	u64 ocq_yields;
	long u_ksoftirqd;
	long u_dones;
};

static bool share_in_ksoftirqd(void)
{
	return in_serving_softirq() && (current->flags & PF_KTHREAD) &&
	       !strncmp(current->comm, "ksoftirqd/", 10);
}

static void share_u_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct share *sh = cq->cq_context;
	long n = atomic_long_inc_return(&sh->u_dones) - 1;

	if (wc->byte_len != (u32)n)
		atomic_inc(&sh->bad);
	if (share_in_ksoftirqd())
		atomic_long_inc(&sh->u_ksoftirqd);
}

static void share_o_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct share *sh = ib_ocq_private(cq);
	long n = atomic_long_inc_return(&sh->o_dones) - 1;

	if (wc->byte_len != (u32)n)
		atomic_inc(&sh->bad);
}

/*
 * Make @n completions of @cqe ready on @fcq and raise the CQ's event if it
 * was armed, from here: the timer's context.
 */
static void share_fill(struct fake_cq *fcq, struct ib_cqe *cqe, u64 *pushed,
		       u64 n)
{
	struct ib_wc tmpl = {
		.wr_cqe = cqe,
		.status = IB_WC_SUCCESS,
		.opcode = IB_WC_RECV,
	};

	/* read by share_drained() */
	WRITE_ONCE(*pushed, *pushed + n);
	if (fake_cq_fill(fcq, n, &tmpl))
		fake_direct(fcq);
}

static enum hrtimer_restart share_tick(struct hrtimer *t)
{
	struct share *sh = container_of(t, struct share, timer);

	if (atomic_read(&sh->stop))
		return HRTIMER_NORESTART;
	share_fill(sh->ufcq, &sh->ucqe, &sh->u_pushed, SH_U_PER_TICK);
	if (sh->busy)
		share_fill(sh->ofcq, &sh->ocqe, &sh->o_pushed, SH_O_PER_TICK);
	atomic_inc(&sh->ticks);
	hrtimer_forward_now(t, ns_to_ktime(SH_TICK_NS));
	return HRTIMER_RESTART;
}

/*
 * The timer runs in hard irq, where completion interrupts come from; on
 * PREEMPT_RT the fake CQ's lock sleeps, so there it runs in the timer
 * softirq.
 */
static enum hrtimer_mode share_timer_mode(void)
{
	return IS_ENABLED(CONFIG_PREEMPT_RT) ? HRTIMER_MODE_REL_PINNED_SOFT :
					       HRTIMER_MODE_REL_PINNED_HARD;
}

/* Everything pushed was delivered. */
static bool share_drained(struct share *sh)
{
	return atomic_long_read(&sh->u_dones) ==
		       (long)READ_ONCE(sh->u_pushed) &&
	       atomic_long_read(&sh->o_dones) == (long)READ_ONCE(sh->o_pushed);
}

/*
 * One phase, on @sh->cpu (the caller is bound to it): the timer ticks
 * %SH_TICKS times, then everything is drained; @p gets the counts.
 */
static bool share_phase(struct share *sh, bool busy, struct share_phase *p)
{
	unsigned long end = jiffies + msecs_to_jiffies(SQ_WAIT_MS);
	unsigned int rounds = kstat_softirqs_cpu(IRQ_POLL_SOFTIRQ, sh->cpu);
	long u_ksoftirqd = atomic_long_read(&sh->u_ksoftirqd);
	long u_dones = atomic_long_read(&sh->u_dones);
	struct ib_ocq_stats s0, s1;

	ib_ocq_get_stats(sh->ocq, &s0);
	sh->busy = busy;
	atomic_set(&sh->ticks, 0);
	atomic_set(&sh->stop, 0);
	hrtimer_start(&sh->timer, ns_to_ktime(SH_TICK_NS), share_timer_mode());
	while (atomic_read(&sh->ticks) < SH_TICKS && time_before(jiffies, end))
		msleep(20);
	atomic_set(&sh->stop, 1);
	hrtimer_cancel(&sh->timer);
	while (!share_drained(sh) && time_before(jiffies, end))
		usleep_range(5000, 10000);
	if (!share_drained(sh))
		return false;
	/* the CQs armed again: every round of the phase has ended */
	if (!sq_wait_armed(sh->ufcq) || !sq_wait_armed(sh->ofcq))
		return false;
	ib_ocq_get_stats(sh->ocq, &s1);
	p->ticks = atomic_read(&sh->ticks);
	p->rounds = kstat_softirqs_cpu(IRQ_POLL_SOFTIRQ, sh->cpu) - rounds;
	p->ocq_runs = s1.runs - s0.runs;
	p->ocq_yields = s1.yields - s0.yields;
	p->u_ksoftirqd = atomic_long_read(&sh->u_ksoftirqd) - u_ksoftirqd;
	p->u_dones = atomic_long_read(&sh->u_dones) - u_dones;
	pr_info("# share: %s: %u ticks, %u irq_poll rounds, %llu OCQ runs (%llu yields), upstream done() %ld, %ld of them in ksoftirqd\n",
		busy ? "beside the busy OCQ" : "alone", p->ticks, p->rounds,
		p->ocq_runs, p->ocq_yields, p->u_dones, p->u_ksoftirqd);
	return p->ticks > 0;
}

/*
 * The irq_poll rounds the busy OCQ added per run of its, in hundredths:
 * phase B's rounds less what the upstream CQ's load alone took for as many
 * ticks (phase A), over the OCQ's runs.
 */
static long share_rounds_pct(const struct share_phase *a,
			     const struct share_phase *b)
{
	long added = (long)b->rounds -
		     DIV_ROUND_CLOSEST((long)a->rounds * b->ticks, a->ticks);

	return b->ocq_runs ? added * 100 / (long)b->ocq_runs : 0;
}

static int share_cmp(const void *x, const void *y)
{
	long a = *(const long *)x, b = *(const long *)y;

	return a < b ? -1 : a > b;
}

/* The kthread bound to the CPU of the measurement: SH_REPS of A, B. */
static int share_measure(struct share *sh, long *pct, bool *busy_ok)
{
	struct share_phase a, b;
	unsigned int i;

	*busy_ok = true;
	for (i = 0; i < SH_REPS; i++) {
		if (!share_phase(sh, false, &a) || !share_phase(sh, true, &b))
			return -ETIMEDOUT;
		pct[i] = share_rounds_pct(&a, &b);
		/* the premise: the OCQ ran and yielded, a run per batch */
		*busy_ok &= b.ocq_yields &&
			    b.ocq_runs * SH_OCQ_BATCH >=
				    (u64)b.ticks * SH_O_PER_TICK;
		pr_info("# share: rep %u: the busy OCQ added %ld irq_poll rounds per 100 runs of its\n",
			i + 1, pct[i]);
	}
	return 0;
}

struct share_thread {
	struct share *sh;
	long pct[SH_REPS];
	bool busy_ok;
	int ret;
	struct completion done;
};

static int share_thread_fn(void *arg)
{
	struct share_thread *st = arg;

	st->ret = share_measure(st->sh, st->pct, &st->busy_ok);
	complete(&st->done);
	/* kthread_stop() needs the task: wait for it */
	set_current_state(TASK_INTERRUPTIBLE);
	while (!kthread_should_stop()) {
		schedule();
		set_current_state(TASK_INTERRUPTIBLE);
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

static int share_alloc(struct share *sh, struct fake_dev *fdev)
{
	struct ib_ocq_attr attr = {
		.mode = IB_OCQ_STRICT,
		.budget = SH_OCQ_BUDGET,
	};
	struct ib_cq *cq;

	/* ready counts, not rings; every event from the timer that fills */
	fdev->sem = FAKE_COUNTED | FAKE_PROMPT | FAKE_INLINE;
	fdev->rnd = 0x5a;
	fdev->ring = 0;
	sh->ucqe.done = share_u_done;
	sh->ocqe.done = share_o_done;
	sh->ucq = ib_alloc_cq(&fdev->ibdev, sh, SQ_CQE, 0, IB_POLL_SOFTIRQ);
	if (IS_ERR(sh->ucq))
		return PTR_ERR(sh->ucq);
	sh->ufcq = to_fake_cq(sh->ucq);
	cq = ib_ocq_alloc_cq(&fdev->ibdev, sh, SQ_CQE, 0, IB_POLL_SOFTIRQ,
			     &attr);
	if (IS_ERR(cq)) {
		ib_free_cq(sh->ucq);
		return PTR_ERR(cq);
	}
	sh->ocq = ib_cq_to_ocq(cq);
	sh->ofcq = to_fake_cq(cq);
	return 0;
}

/*
 * test=share: an upstream %IB_POLL_SOFTIRQ CQ (ib_alloc_cq() on the fake
 * device) beside a busy OCQ, both on one CPU; a timer there raises their
 * completions, in hard irq as a completion interrupt would: one upstream
 * completion per tick, and in phase B also %SH_O_PER_TICK for the OCQ,
 * whose budget of %SH_OCQ_BUDGET makes it yield after each poll of up to
 * %SH_OCQ_BATCH, so that it is kicked again and again.
 *
 * What is measured, and why it is the other's share: irq_poll shares a
 * CPU's softirq between its users by the work their polls report.  One
 * round of it (irq_poll_softirq()) runs polls until they reported
 * irq_poll_budget (256) or a jiffy passed, then raises itself again; the
 * softirq code runs at most 10 such rounds (and 2 ms) at the end of an
 * interrupt, then hands every poll left, the other users' too, to
 * ksoftirqd.  The rounds a user's polls end are therefore taken from
 * every other user of the CPU: a poll that reports its whole weight after
 * one batch ends the round at once, and 10 of those push the upstream
 * CQ's next polls out of the interrupt's end into ksoftirqd.  So the test
 * counts IRQ_POLL softirq rounds on the CPU (/proc/softirqs' IRQ_POLL:
 * kstat_softirqs_cpu()): phase A, the upstream CQ's load alone; phase B,
 * the same load beside the busy OCQ; the rounds B adds over A, per run of
 * the OCQ, must stay under %SH_MAX_ROUNDS_PCT hundredths (see there).
 * Counts, not times; the median of %SH_REPS alternations.  The upstream
 * done() calls that ran in ksoftirqd are printed beside it: how
 * many depends on the kernel (6.1 lets ksoftirqd take every softirq while
 * it runs, 6.12 does not; PREEMPT_RT runs them in threads always).
 */
static int share_run(struct fake_dev *fdev, struct sq_ktap *k)
{
	struct share_thread st = { .ret = -EINTR };
	struct task_struct *t;
	struct share *sh;
	long pct[SH_REPS];
	int ret;

	sh = kzalloc(sizeof(*sh), GFP_KERNEL);
	if (!sh)
		return -ENOMEM;
	ret = share_alloc(sh, fdev);
	if (ret) {
		sq_result(k, false, "share", "allocation failed");
		goto out_free;
	}
	sh->cpu = cpumask_last(cpu_online_mask);
	hrtimer_init(&sh->timer, CLOCK_MONOTONIC, share_timer_mode());
	sh->timer.function = share_tick;
	st.sh = sh;
	init_completion(&st.done);
	t = kthread_create_on_cpu(share_thread_fn, &st, sh->cpu,
				  "ocq_share/%u");
	if (IS_ERR(t)) {
		ret = PTR_ERR(t);
		sq_result(k, false, "share", "no kthread");
		goto out_free_cqs;
	}
	wake_up_process(t);
	wait_for_completion(&st.done);
	kthread_stop(t);
	ret = st.ret;
	memcpy(pct, st.pct, sizeof(pct));
	sort(pct, SH_REPS, sizeof(pct[0]), share_cmp, NULL);
	pr_info("# share: on CPU %d the busy OCQ added %ld irq_poll rounds per 100 runs of its (median of %u; at most %u)\n",
		sh->cpu, pct[SH_REPS / 2], SH_REPS, SH_MAX_ROUNDS_PCT);
	sq_result(k,
		  !ret && st.busy_ok && !atomic_read(&sh->bad) &&
			  pct[SH_REPS / 2] <= SH_MAX_ROUNDS_PCT,
		  "share", ret ? "no progress" : NULL);
	if (!st.busy_ok)
		pr_info("# share: the OCQ did not run a run per %u completions\n",
			SH_OCQ_BATCH);
out_free_cqs:
	ib_ocq_free_cq(ib_ocq_cq(sh->ocq));
	ib_free_cq(sh->ucq);
out_free:
	kfree(sh);
	return ret;
}

static int __init sq_init(void)
{
	struct sq_ktap k = {};
	struct fake_dev *fdev;

	if (strcmp(test, "hol") && strcmp(test, "share")) {
		pr_err("test= is hol or share\n");
		return -EINVAL;
	}
	pr_info("KTAP version 1\n");
	pr_info("# test=%s cpus=%u\n", test, num_online_cpus());
	fdev = fake_dev_alloc(NULL);
	if (!fdev)
		return -ENOMEM;
	if (!strcmp(test, "hol"))
		hol_run(fdev, &k);
	else
		share_run(fdev, &k);
	if (atomic_read(&fake_objects))
		sq_result(&k, false, "objects",
			  "the provider's objects were not all freed");
	ib_dealloc_device(&fdev->ibdev);
	pr_info("1..%u\n", k.nr);
	pr_info("# totals: pass:%u fail:%u skip:0\n", k.nr - k.failed,
		k.failed);
	return k.failed || !k.nr ? -EINVAL : 0;
}

static void __exit sq_exit(void)
{
	pr_info("# exit\n");
}

module_init(sq_init);
module_exit(sq_exit);
MODULE_DESCRIPTION("ordered CQs on IB_POLL_SOFTIRQ: bound and share");
MODULE_LICENSE("Dual BSD/GPL");
