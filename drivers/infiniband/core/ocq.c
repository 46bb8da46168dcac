// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Ordered completion queues: the plumbing around the engine.  It gives the
 * engine a real CQ whose completion handler it owns, work items to run on,
 * a watchdog timer, statistics in debugfs and a registry of live objects.
 */
#include <linux/debugfs.h>
#include <linux/dim.h>
#include <linux/hrtimer.h>
#include <linux/interrupt.h>
#include <linux/irq_poll.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_ocq.h>

#include "ocq_engine.h"
#include "ocq_priv.h"

#define CREATE_TRACE_POINTS
#include <trace/events/ib_ocq.h>

/*
 * how long a CQ run backs off from a provider that fails or won't arm, in
 * jiffies: doubled for every run in a row that backed off, up to 64
 */
#define IB_OCQ_BACKOFF 1
#define IB_OCQ_BACKOFF_MAX_SHIFT 6

/* completions a softirq run dispatches before it lets others run */
#define IB_OCQ_BUDGET_SOFTIRQ 256

/**
 * struct ocq_work - what runs one unit of an engine
 * @dwork: queued on ib_ocq_wq (the CQ unit) or ib_ocq_unbound_wq (domains),
 *	at once or, to back off, IB_OCQ_BACKOFF or more later; with
 *	%IB_POLL_SOFTIRQ it only schedules @iop, after the back-off
 * @iop: %IB_POLL_SOFTIRQ: the unit's runs, in the irq_poll softirq
 * @pending: %IB_POLL_SOFTIRQ: a run was asked for since @iop last began
 * @ocq: owner
 * @unit: the engine unit it runs
 */
struct ocq_work {
	struct delayed_work dwork;
	struct irq_poll iop;
	atomic_t pending;
	struct ib_ocq *ocq;
	unsigned int unit;
};

static struct workqueue_struct *ib_ocq_wq;
static struct workqueue_struct *ib_ocq_unbound_wq;

static struct dentry *ib_ocq_debugfs;
static DEFINE_MUTEX(ib_ocq_lock);
static LIST_HEAD(ib_ocq_list);
static unsigned int ib_ocq_next_id;
/* memory the module holds for ordered CQs, in allocations (debugfs allocs) */
static atomic_long_t ib_ocq_allocs;
/* fault injection: the Nth allocation from now fails (debugfs fail_nth) */
static atomic_t ib_ocq_fail_nth;

/*
 * Fault injection for the error paths: the Debian kernels have no fault
 * injection framework, so the module counts down its own allocations.
 */
static bool ib_ocq_should_fail(void)
{
	int n = atomic_read(&ib_ocq_fail_nth);

	do {
		if (n <= 0)
			return false;
	} while (!atomic_try_cmpxchg(&ib_ocq_fail_nth, &n, n - 1));
	return n == 1;
}

static void *ib_ocq_kvcalloc(size_t n, size_t size)
{
	void *p;

	if (ib_ocq_should_fail())
		return NULL;
	p = kvcalloc(n, size, GFP_KERNEL);
	if (p)
		atomic_long_inc(&ib_ocq_allocs);
	return p;
}

static void ib_ocq_kvfree(void *p)
{
	if (!p)
		return;
	atomic_long_dec(&ib_ocq_allocs);
	kvfree(p);
}

static void *ib_ocq_engine_alloc(struct ocq_engine *e, size_t n, size_t size)
{
	return ib_ocq_kvcalloc(n, size);
}

static void ib_ocq_engine_free(struct ocq_engine *e, void *p)
{
	ib_ocq_kvfree(p);
}

/*
 * Ask for a softirq run of @w.  irq_poll_sched() does nothing while @iop is
 * still scheduled, which it is until ib_ocq_iop_poll() completes it: so
 * record the request first; the full barrier pairs with smp_mb() in
 * ib_ocq_iop_poll(), which looks at @pending after completing.  As ib_cq's
 * IB_POLL_SOFTIRQ handler does, this only raises the softirq: in hard irq
 * or softirq context it runs when that context ends, from a task
 * ksoftirqd runs it.  Never in the caller: a provider calls its completion
 * handler with its own CQ lock held (rxe does), a ULP may resume an OCQ
 * with locks of its own held, and done() must not run under them.  (A
 * local_bh_enable() here would run the softirq at once; on PREEMPT_RT,
 * where a provider's spinlock does not disable interrupts, the CQ run
 * would then poll the CQ under its own lock.)  A request that lands just
 * as a poll completes may cause one run more, without the unit's
 * OCQ_RUN: the iop never runs twice at once, and that run polls or drains
 * as any run does, so it finds at most what the next kick would (the
 * model checker's host does not make such runs).
 */
static void ib_ocq_iop_sched(struct ocq_work *w)
{
	atomic_set(&w->pending, 1);
	smp_mb__after_atomic(); /* pairs with smp_mb() in ib_ocq_iop_poll() */
	irq_poll_sched(&w->iop);
}

/*
 * Run @w's unit; return the completions it took from the CQ or dispatched.
 * DIM gets one sample per event cycle, as from ib_cq's poll runs that end
 * armed: what the CQ runs took from the CQ since the last run that ended
 * with the CQ armed, or (software DIM) with the re-arm deferred after
 * taking completions, the timer's next run being the cycle's event.  Runs
 * that yield, back off or park (flow and parallel mode, domains busy), and
 * the timer's runs that find nothing and defer again, add to the next
 * sample.
 */
static unsigned int ib_ocq_run(struct ocq_work *w)
{
	struct ib_ocq *ocq = w->ocq;
	struct ocq_engine *e = &ocq->engine;
	unsigned int work;
	struct dim *dim;
	u64 before, defers;

	/*
	 * A run that begins during teardown may see DIM go away.  Pairs with
	 * smp_store_release() in ib_ocq_dim_soft(): DIM's state is set up.
	 */
	dim = smp_load_acquire(&ocq->dim);
	if (w->unit != OCQ_UNIT_CQ || !dim || !READ_ONCE(ocq->dim_on))
		return ocq_engine_run(e, w->unit);
	/*
	 * The CQ unit's work item (or softirq poll) never runs twice at
	 * once, and only the CQ run moves e->taken and e->armed (busy polls
	 * do too, but an OCQ with them has no DIM: ib_ocq_dim_init(), and a
	 * retune turns DIM on only without busy polls, of which one that
	 * began before it may add its completions to one sample): they are
	 * this run's until the next run of the same item.
	 */
	before = READ_ONCE(e->taken);
	defers = READ_ONCE(e->defers);
	work = ocq_engine_run(e, w->unit);
	/* torn down: DIM's work must not moderate a CQ being destroyed */
	if (ocq_engine_dead(e, w->unit))
		return work;
	ocq->dim_taken += READ_ONCE(e->taken) - before;
	if (READ_ONCE(e->armed) ||
	    (READ_ONCE(e->defers) != defers && ocq->dim_taken)) {
		rdma_dim(dim, ocq->dim_taken);
		ocq->dim_taken = 0;
	}
	return work;
}

/*
 * A softirq run of one unit: ib_cq's IB_POLL_SOFTIRQ context.  It reports
 * the work it did, as ib_cq's poll does, so that irq_poll shares its
 * budget fairly with the CPU's other users.  A run asked for meanwhile
 * (the run's own yield, or a kick after it released the unit) keeps the
 * poll scheduled: irq_poll keeps a poll that used its whole weight and
 * moves it behind the others; one that did less is completed and
 * scheduled again, which also puts it behind the others.
 */
static int ib_ocq_iop_poll(struct irq_poll *iop, int budget)
{
	struct ocq_work *w = container_of(iop, struct ocq_work, iop);
	unsigned int work;

	atomic_set(&w->pending, 0);
	work = ib_ocq_run(w);
	if (work >= budget && atomic_read(&w->pending))
		return budget;
	irq_poll_complete(iop);
	smp_mb(); /* pairs with smp_mb__after_atomic() in ib_ocq_iop_sched() */
	if (atomic_read(&w->pending))
		irq_poll_sched(iop);
	/* a completed poll must report less than its weight */
	return min_t(unsigned int, work, budget - 1);
}

static void ib_ocq_queue(struct ocq_engine *e, unsigned int unit,
			 unsigned long delay)
{
	struct ib_ocq *ocq = container_of(e, struct ib_ocq, engine);
	struct ocq_work *w = &ocq->works[unit];

	if (ocq->poll_ctx == IB_POLL_SOFTIRQ && !delay) {
		ib_ocq_iop_sched(w);
		return;
	}

	/*
	 * With IB_POLL_WORKQUEUE the CQ run stays on the CPU that took the
	 * event, like ib_cq's; domains spread over all CPUs.
	 */
	bool bound = unit == OCQ_UNIT_CQ && ocq->poll_ctx == IB_POLL_WORKQUEUE;

	queue_delayed_work(bound ? ib_ocq_wq : ib_ocq_unbound_wq, &w->dwork,
			   delay);
}

static void ib_ocq_schedule(struct ocq_engine *e, unsigned int unit)
{
	ib_ocq_queue(e, unit, 0);
}

static void ib_ocq_schedule_later(struct ocq_engine *e, unsigned int unit,
				  unsigned int tries)
{
	unsigned int shift =
		min(tries ? tries - 1 : 0, IB_OCQ_BACKOFF_MAX_SHIFT);

	ib_ocq_queue(e, unit, IB_OCQ_BACKOFF << shift);
}

/* queue_delayed_work() is a no-op while a tick is queued: it stays first */
static void ib_ocq_lease_arm(struct ocq_engine *e)
{
	struct ib_ocq *ocq = container_of(e, struct ib_ocq, engine);

	queue_delayed_work(ib_ocq_wq, &ocq->lease,
			   msecs_to_jiffies(ocq->pause_ms));
}

static void ib_ocq_lease(struct work_struct *work)
{
	struct ib_ocq *ocq =
		container_of(to_delayed_work(work), struct ib_ocq, lease);

	if (ocq_engine_lease(&ocq->engine))
		ib_ocq_lease_arm(&ocq->engine);
}

/*
 * The timer of a deferred re-arm or a suspension: the CQ run or busy poll
 * that ended unarmed left its gate to the timer, which queues the next run
 * unless a busy poll took it first.  A soft hrtimer: the run it queues
 * executes in a work item or the irq_poll softirq anyway, so expiring in
 * hard irq would only add an interrupt-off section (and on PREEMPT_RT a
 * soft timer is what a hard one becomes).  Its expiry may slip behind
 * other softirq work: the delay is at least what was asked.
 */
static enum hrtimer_restart ib_ocq_defer_fire(struct hrtimer *timer)
{
	struct ib_ocq *ocq = container_of(timer, struct ib_ocq, defer);

	if (ocq_engine_timer(&ocq->engine))
		ib_ocq_queue(&ocq->engine, OCQ_UNIT_CQ, 0);
	return HRTIMER_NORESTART;
}

/*
 * Pinned where the CQ run is bound to the CPU that took the event (the
 * workqueue and softirq contexts, as ib_cq's): the next run is queued on
 * the same CPU.  An unbound CQ run's timer may expire anywhere.  A start
 * moves a pending timer.
 */
static void ib_ocq_timer_start(struct ib_ocq *ocq, unsigned int usecs)
{
	enum hrtimer_mode mode = HRTIMER_MODE_REL_PINNED_SOFT;
	u64 ns = (u64)usecs * NSEC_PER_USEC;

	if (ocq->poll_ctx == IB_POLL_UNBOUND_WORKQUEUE)
		mode = HRTIMER_MODE_REL_SOFT;
	hrtimer_start(&ocq->defer, ns_to_ktime(ns), mode);
}

static void ib_ocq_defer(struct ocq_engine *e)
{
	struct ib_ocq *ocq = container_of(e, struct ib_ocq, engine);

	/* pairs with WRITE_ONCE() in ib_ocq_dim_work(): one deferral's delay */
	ib_ocq_timer_start(ocq, READ_ONCE(ocq->defer_usecs));
}

static void ib_ocq_suspend(struct ocq_engine *e)
{
	struct ib_ocq *ocq = container_of(e, struct ib_ocq, engine);

	ib_ocq_timer_start(ocq, READ_ONCE(ocq->tuned.suspend_usecs));
}

#define IB_OCQ_ENGINE_OPS                                                     \
	.schedule = ib_ocq_schedule, .schedule_later = ib_ocq_schedule_later, \
	.lease = ib_ocq_lease_arm, .defer = ib_ocq_defer,                     \
	.suspend = ib_ocq_suspend, .alloc = ib_ocq_engine_alloc,              \
	.free = ib_ocq_engine_free

static const struct ocq_engine_ops ib_ocq_engine_ops = {
	IB_OCQ_ENGINE_OPS,
};

/* irq_poll runs every unit on the CPU that queued it, one after another */
static const struct ocq_engine_ops ib_ocq_softirq_ops = {
	IB_OCQ_ENGINE_OPS,
	.serial = true,
};

static void ib_ocq_work(struct work_struct *work)
{
	struct ocq_work *w =
		container_of(to_delayed_work(work), struct ocq_work, dwork);

	if (w->ocq->poll_ctx == IB_POLL_SOFTIRQ)
		ib_ocq_iop_sched(w);
	else
		ib_ocq_run(w);
}

static void ib_ocq_comp_handler(struct ib_cq *cq, void *cq_context);
static void ib_ocq_direct_handler(struct ib_cq *cq, void *cq_context);

/*
 * The OCQ of a CQ known to be ocq's, of a poll context other than
 * IB_POLL_DIRECT: what its own handlers use.  They are ocq's by
 * construction, also when a ULP chains to them from a comp_handler of its
 * own, which ib_ocq_of() would not recognise.
 */
static struct ib_ocq *ib_ocq_of_engine(struct ib_cq *cq)
{
	/* pairs with smp_store_release() in ib_ocq_publish() */
	struct ib_wc *wcs = smp_load_acquire(&cq->wc);

	return wcs ? container_of(wcs, struct ib_ocq, engine.wcs[0]) : NULL;
}

/* The same for an IB_POLL_DIRECT one. */
static struct ib_ocq *ib_ocq_of_direct(struct ib_cq *cq)
{
	/* pairs with smp_store_release() in ib_ocq_publish() */
	struct ib_wc *wcs = smp_load_acquire(&cq->wc);

	return wcs ? container_of(wcs, struct ib_ocq, direct.wcs[0]) : NULL;
}

/*
 * The OCQ of one of its CQs, found without a lookup.  ib_core's cq->wc is
 * the array a CQ's poll context polls into, which ib_core's own handlers
 * use and only ib_cq's allocation and ib_free_cq() touch otherwise (the
 * latter refuses an ordered CQ, ib_ocq_own_cq()).  ocq points it at its
 * own poll batch, the engine's or the direct poller's, once the OCQ is
 * published, and clears it before teardown: so the completion handler,
 * which gets the ULP's cq_context as with ib_alloc_cq(), finds its OCQ
 * from the CQ.  NULL: the CQ is not ocq's, or the OCQ is not published
 * (yet, or any more).  (In ib_core a pointer of its own in struct ib_cq
 * would do.)
 */
static struct ib_ocq *ib_ocq_of(struct ib_cq *cq)
{
	if (cq->comp_handler == ib_ocq_comp_handler)
		return ib_ocq_of_engine(cq);
	if (cq->comp_handler == ib_ocq_direct_handler)
		return ib_ocq_of_direct(cq);
	return NULL;
}

static void ib_ocq_comp_handler(struct ib_cq *cq, void *cq_context)
{
	struct ib_ocq *ocq;

	/*
	 * A provider may call before the OCQ is published (a stale interrupt
	 * of a reused CQ) or after it was unpublished.  Nothing is lost by
	 * ignoring it: the engine starts paused, and its first run drains
	 * the CQ before arming it; teardown wants no more runs.  A call that
	 * found the OCQ returns before the provider's destroy of the CQ
	 * does, which is what teardown waits for (ib_ocq_destroy()).
	 */
	ocq = ib_ocq_of_engine(cq);
	if (ocq)
		ocq_engine_event(&ocq->engine);
}

static void ib_ocq_cq_error(struct ib_ocq *ocq, struct ib_event *event)
{
	if (!ocq)
		return;
	if (ocq->poll_ctx == IB_POLL_DIRECT)
		atomic64_inc(&ocq->direct.cq_errors);
	else
		ocq_engine_cq_error(&ocq->engine);
	pr_err_ratelimited("ib_ocq: ocq%u: %s on its CQ\n", ocq->id,
			   ib_event_msg(event->event));
}

static void ib_ocq_event_handler(struct ib_event *event, void *cq_context)
{
	ib_ocq_cq_error(ib_ocq_of_engine(event->element.cq), event);
}

static void ib_ocq_direct_event_handler(struct ib_event *event,
					void *cq_context)
{
	ib_ocq_cq_error(ib_ocq_of_direct(event->element.cq), event);
}

static void ib_ocq_watchdog(struct work_struct *work)
{
	struct ib_ocq *ocq =
		container_of(to_delayed_work(work), struct ib_ocq, watchdog);

	ocq_engine_watchdog(&ocq->engine);
	queue_delayed_work(ib_ocq_wq, &ocq->watchdog,
			   msecs_to_jiffies(ocq->watchdog_ms));
}

static int ib_ocq_stats_show(struct seq_file *m, void *unused)
{
	struct ib_ocq *ocq = m->private;
	struct ib_ocq_stats s;

	ib_ocq_get_stats(ocq, &s);
	seq_printf(m, "events %llu\nruns %llu\nempty_runs %llu\npolls %llu\n",
		   s.events, s.runs, s.empty_runs, s.polls);
	seq_printf(m,
		   "completions %llu\narms %llu\nrepolls %llu\nyields %llu\n",
		   s.completions, s.arms, s.repolls, s.yields);
	seq_printf(m, "pauses %llu\nrescues %llu\nstalls %llu\n", s.pauses,
		   s.rescues, s.stalls);
	seq_printf(m, "domain_runs %llu\ncq_errors %llu\nmax_batch %llu\n",
		   s.domain_runs, s.cq_errors, s.max_batch);
	seq_printf(m, "parks %llu\nprovider_errors %llu\nlease_resumes %llu\n",
		   s.parks, s.provider_errors, s.lease_resumes);
	seq_printf(m, "inlined %llu\ndefers %llu\ncontended %llu\n", s.inlined,
		   s.defers, s.contended);
	seq_printf(m, "busy_polls %llu\nsuspends %llu\n", s.busy_polls,
		   s.suspends);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ib_ocq_stats);

static int ib_ocq_info_show(struct seq_file *m, void *unused)
{
	static const char *const ctx[] = {
		[IB_POLL_SOFTIRQ] = "softirq",
		[IB_POLL_WORKQUEUE] = "workqueue",
		[IB_POLL_UNBOUND_WORKQUEUE] = "unbound_workqueue",
		[IB_POLL_DIRECT] = "direct",
	};
	static const char *const mode[] = { "strict", "flow", "parallel" };
	struct ib_ocq *ocq = m->private;
	struct ib_cq *cq = ocq->cq;
	struct ib_ocq_tune t;

	/* both checked at creation */
	if (WARN_ON_ONCE(ocq->poll_ctx >= ARRAY_SIZE(ctx) ||
			 ocq->attr.mode >= ARRAY_SIZE(mode)))
		return -EINVAL;
	seq_printf(m, "device %s\ncq_id %u\nowner %s\n",
		   dev_name(&cq->device->dev), cq->res.id,
		   cq->res.kern_name ?: "-");
	seq_printf(m,
		   "poll_ctx %s\nmode %s\ncomp_vector %u\ncqe %d\npooled %d\n",
		   ctx[ocq->poll_ctx], mode[ocq->attr.mode], cq->comp_vector,
		   cq->cqe, ocq->pooled);
	mutex_lock(&ocq->tune_lock);
	ib_ocq_read_tune(ocq, &t);
	mutex_unlock(&ocq->tune_lock);
	/* the empty runs in force: the default's, without a deferral none */
	if (t.defer_usecs && !t.defer_polls)
		t.defer_polls = IB_OCQ_DEFAULT_DEFER_POLLS;
	else if (!t.defer_usecs)
		t.defer_polls = 0;
	seq_printf(m, "defer_usecs %u\ndefer_polls %u\nsuspend_usecs %u\n",
		   t.defer_usecs, t.defer_polls, t.suspend_usecs);
	seq_printf(m, "dim %s\ndefer_usecs_now %u\n",
		   ocq->dim_provider	      ? "provider" :
		   t.flags & IB_OCQ_DEFER_DIM ? "defer" :
						"off",
		   READ_ONCE(ocq->defer_usecs));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ib_ocq_info);

static int ib_ocq_live_show(struct seq_file *m, void *unused)
{
	struct ib_ocq *ocq;
	unsigned int n = 0;

	mutex_lock(&ib_ocq_lock);
	list_for_each_entry(ocq, &ib_ocq_list, entry)
		n++;
	mutex_unlock(&ib_ocq_lock);
	seq_printf(m, "%u\n", n);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ib_ocq_live);

static int ib_ocq_allocs_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "%ld\n", atomic_long_read(&ib_ocq_allocs));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ib_ocq_allocs);

static int ib_ocq_alloc_works(struct ib_ocq *ocq)
{
	unsigned int i, n = ocq->engine.nr_units;

	ocq->works = ib_ocq_kvcalloc(n, sizeof(*ocq->works));
	if (!ocq->works)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		INIT_DELAYED_WORK(&ocq->works[i].dwork, ib_ocq_work);
		irq_poll_init(&ocq->works[i].iop, IB_OCQ_BUDGET_SOFTIRQ,
			      ib_ocq_iop_poll);
		atomic_set(&ocq->works[i].pending, 0);
		ocq->works[i].ocq = ocq;
		ocq->works[i].unit = i;
	}
	return 0;
}

/*
 * Publish @ocq: registry, the CQ's way to it (ib_ocq_of()), debugfs,
 * watchdog; then run it.
 */
static void ib_ocq_publish(struct ib_ocq *ocq)
{
	struct ib_wc *wcs = ocq->poll_ctx == IB_POLL_DIRECT ? ocq->direct.wcs :
							      ocq->engine.wcs;
	char name[IB_DEVICE_NAME_MAX + 32];

	mutex_lock(&ib_ocq_lock);
	ocq->id = ib_ocq_next_id++;
	list_add_tail(&ocq->entry, &ib_ocq_list);
	/* the OCQ is ready: pairs with smp_load_acquire() in ib_ocq_of() */
	smp_store_release(&ocq->cq->wc, wcs);
	mutex_unlock(&ib_ocq_lock);

	/* what rdma res show cq calls it: the device and the CQ's id */
	snprintf(name, sizeof(name), "ocq%u-%s-cq%u", ocq->id,
		 dev_name(&ocq->cq->device->dev), ocq->cq->res.id);
	ocq->debugfs = debugfs_create_dir(name, ib_ocq_debugfs);
	debugfs_create_file("stats", 0400, ocq->debugfs, ocq,
			    &ib_ocq_stats_fops);
	debugfs_create_file("info", 0400, ocq->debugfs, ocq, &ib_ocq_info_fops);
	ib_ocq_tune_debugfs(ocq);

	if (ocq->poll_ctx == IB_POLL_DIRECT)
		return;
	if (ocq->watchdog_ms)
		queue_delayed_work(ib_ocq_wq, &ocq->watchdog,
				   msecs_to_jiffies(ocq->watchdog_ms));
	/* the first run drains whatever is there and arms the CQ */
	ocq_engine_resume(&ocq->engine);
}

/*
 * The moderation DIM picks, by profile: each step up doubles the
 * completions per event or, the next step, the time an event may wait;
 * from (1 completion, 2 us) to (16, 32 us).
 */
static u16 ib_ocq_dim_count(unsigned int ix)
{
	return 1 << ((ix + 1) / 2);
}

static u16 ib_ocq_dim_usec(unsigned int ix)
{
	return 2 << (ix / 2);
}

/*
 * Software DIM (%IB_OCQ_DEFER_DIM): the deferred re-arm's delay of a
 * profile, in even steps from a ninth of the deferral's delay, @ceiling
 * (&ib_ocq_attr.defer_usecs, or a retune's), at the first profile to all
 * of it at the last.
 */
static unsigned int ib_ocq_dim_defer(unsigned int ceiling, unsigned int ix)
{
	return max(1U, ceiling * (ix + 1) / RDMA_DIM_PARAMS_NUM_PROFILES);
}

/* DIM moved to another profile: tell the provider, or the timer. */
static void ib_ocq_dim_work(struct work_struct *work)
{
	struct dim *dim = container_of(work, struct dim, work);
	struct ib_ocq *ocq = dim->priv;
	struct ib_cq *cq = ocq->cq;
	unsigned int ix = min_t(unsigned int, dim->profile_ix,
				RDMA_DIM_PARAMS_NUM_PROFILES - 1);
	unsigned int usecs;

	dim->state = DIM_START_MEASURE;
	if (!ocq->dim_provider) {
		/*
		 * Under the lock of retunes: one that turned DIM off (and set
		 * the fixed delay) is not undone by a sample taken before it.
		 * Pairs with READ_ONCE() in ib_ocq_defer(), the next deferral.
		 */
		mutex_lock(&ocq->tune_lock);
		usecs = ib_ocq_dim_defer(ocq->tuned.defer_usecs, ix);
		if (ocq->dim_on)
			WRITE_ONCE(ocq->defer_usecs, usecs);
		mutex_unlock(&ocq->tune_lock);
		return;
	}
	cq->device->ops.modify_cq(cq, ib_ocq_dim_count(ix),
				  ib_ocq_dim_usec(ix));
}

/*
 * As ib_alloc_cq(): DIM on a device that can moderate and wants it; as
 * there, a CQ for which DIM's state cannot be allocated goes without.
 * With %IB_OCQ_DEFER_DIM on any device: DIM of the deferral's delay (the
 * deferred re-arm is moderation of its own, so never the provider's too).
 */
static struct dim *ib_ocq_dim_alloc(struct ib_ocq *ocq)
{
	struct dim *dim = ib_ocq_kvcalloc(1, sizeof(*dim));

	if (!dim)
		return NULL;
	dim->state = DIM_START_MEASURE;
	dim->tune_state = DIM_GOING_RIGHT;
	dim->profile_ix = RDMA_DIM_START_PROFILE;
	dim->priv = ocq;
	INIT_WORK(&dim->work, ib_ocq_dim_work);
	return dim;
}

/**
 * ib_ocq_dim_soft - turn software DIM of the deferred re-arm's delay on or off
 * @ocq: the ordered CQ, without the provider's DIM
 * @on: on: the delay follows DIM, from its profile of the last time it was
 *	on or its first; off: the delay is @ceiling
 * @ceiling: the deferral's delay a retune sets
 *
 * DIM's state, once allocated, stays until the OCQ is freed: a run that
 * began before a retune may still feed it.
 *
 * Context: process context, under @ocq's tune_lock.
 * Return: 0, or -ENOMEM if DIM's state could not be allocated: then
 * nothing changed.
 */
int ib_ocq_dim_soft(struct ib_ocq *ocq, bool on, unsigned int ceiling)
{
	struct dim *dim = ocq->dim;
	unsigned int ix;

	lockdep_assert_held(&ocq->tune_lock);
	if (on && !dim) {
		dim = ib_ocq_dim_alloc(ocq);
		if (!dim)
			return -ENOMEM;
		/* pairs with smp_load_acquire() in ib_ocq_run() */
		smp_store_release(&ocq->dim, dim);
	}
	if (on) {
		/*
		 * DIM's profile as it left it, or its first.  A run that
		 * began before DIM was turned off may still move it in
		 * rdma_dim(): the delay is then one step off until DIM's
		 * next move, which sets it again.
		 */
		ix = min_t(unsigned int, data_race(dim->profile_ix),
			   RDMA_DIM_PARAMS_NUM_PROFILES - 1);
		WRITE_ONCE(ocq->defer_usecs, ib_ocq_dim_defer(ceiling, ix));
	} else {
		WRITE_ONCE(ocq->defer_usecs, ceiling);
	}
	WRITE_ONCE(ocq->dim_on, on);
	return 0;
}

static void ib_ocq_dim_init(struct ib_ocq *ocq)
{
	struct ib_device *dev = ocq->cq->device;
	bool soft = ocq->attr.flags & IB_OCQ_DEFER_DIM;
	struct dim *dim;

	/*
	 * Not with a suspension either: ib_ocq_run() reads the CQ run's
	 * counters after the run, when a busy poll may hold the CQ unit.
	 */
	if (!soft && (ocq->attr.defer_usecs || ocq->attr.suspend_usecs ||
		      !dev->ops.modify_cq || !dev->use_cq_dim))
		return;
	/* without DIM's state a soft CQ keeps its ceiling, a fixed delay */
	dim = ib_ocq_dim_alloc(ocq);
	if (!dim)
		return;
	if (soft)
		ocq->defer_usecs = ib_ocq_dim_defer(ocq->attr.defer_usecs,
						    RDMA_DIM_START_PROFILE);
	ocq->dim_provider = !soft;
	ocq->dim_on = true;
	ocq->dim = dim;
}

/* After the last run: nothing feeds DIM any more. */
static void ib_ocq_dim_exit(struct ib_ocq *ocq)
{
	if (!ocq->dim)
		return;
	cancel_work_sync(&ocq->dim->work);
	ib_ocq_kvfree(ocq->dim);
	WRITE_ONCE(ocq->dim, NULL);
}

/* A softirq run yields as ib_cq's IB_POLL_BUDGET_IRQ does. */
static int ib_ocq_engine_init(struct ib_ocq *ocq)
{
	const struct ocq_engine_ops *ops = &ib_ocq_engine_ops;
	struct ib_ocq_attr attr = ocq->attr;

	if (ocq->poll_ctx == IB_POLL_SOFTIRQ) {
		attr.budget = min_not_zero(attr.budget, IB_OCQ_BUDGET_SOFTIRQ);
		ops = &ib_ocq_softirq_ops;
	}
	return ocq_engine_init(&ocq->engine, ocq->cq, &attr, num_online_cpus(),
			       ops);
}

/*
 * Make @cq ocq's alone.  ib_core's calls that would free, destroy, resize
 * or moderate it under the engine refuse it, in the kernel's idiom:
 * ib_free_cq() refuses a CQ with users (WARN_ON_ONCE(), before it touches
 * anything: a ULP file the conversion missed leaves the CQ working, ocq's
 * free frees it later), so ocq holds one use of its own; ib_destroy_cq()
 * refuses a shared CQ (WARN_ON_ONCE()), ib_resize_cq() and
 * rdma_set_cq_moderation() too (-EOPNOTSUPP).  The use shows as one user
 * more in rdma's resource tracking.
 */
static void ib_ocq_own_cq(struct ib_cq *cq)
{
	cq->shared = true;
	atomic_inc(&cq->usecnt);
}

/* Give ocq's own CQ back to ib_core's destroy, before it destroys it. */
static void ib_ocq_disown_cq(struct ib_cq *cq)
{
	atomic_dec(&cq->usecnt);
	cq->shared = false;
}

/* Whether the only user of @ocq's CQ is ocq itself: no QP is left on it. */
static bool ib_ocq_cq_unused(struct ib_ocq *ocq)
{
	return atomic_read(&ocq->cq->usecnt) == 1;
}

/*
 * What an IB_POLL_DIRECT OCQ can honour: its ULP polls it, one caller at a
 * time, in the CQ's order, which keeps every QP's and flow's order too.
 * Parallel processing, a postponed arm and the watchdog need the engine.
 */
bool ib_ocq_direct_attr_ok(const struct ib_ocq_attr *attr)
{
	return !attr ||
	       (!ocq_engine_check_attr(attr) && attr->mode != IB_OCQ_PARALLEL &&
		!attr->flags && !attr->watchdog_ms && !attr->defer_usecs &&
		!attr->suspend_usecs);
}

/* A direct CQ is never armed: an event is a provider's stray one. */
static void ib_ocq_direct_handler(struct ib_cq *cq, void *cq_context)
{
}

/*
 * Destroy an OCQ's CQ; ocq's own use of it is given back first
 * (ib_ocq_own_cq()).  Once it returns, the provider calls none of its
 * handlers any more, and none is under way (ib_free_cq() frees the CQ on
 * the same promise).  Return false if the provider refused: then the CQ
 * lives on, and its handlers may still be called with this OCQ, so it is
 * kept (leaked), with the module text they point into.
 */
static bool ib_ocq_destroy_cq(struct ib_ocq *ocq)
{
	int ret;

	ib_ocq_disown_cq(ocq->cq);
	ret = ib_destroy_cq_user(ocq->cq, NULL);
	if (WARN_ONCE(ret, "ib_ocq: destroy of ocq%u's CQ failed: %d\n",
		      ocq->id, ret)) {
		__module_get(THIS_MODULE);
		return false;
	}
	return true;
}

/* A direct OCQ off the registry: no engine, no work items. */
static void ib_ocq_destroy_direct(struct ib_ocq *ocq)
{
	if (ib_ocq_destroy_cq(ocq))
		ib_ocq_kvfree(ocq);
}

/*
 * Make an OCQ: the CQ, the engine, the work items; then publish it.  @attr
 * NULL: the defaults (IB_OCQ_STRICT).  Checked here: what every way in
 * shares.
 */
struct ib_ocq *ib_ocq_create(struct ib_device *dev, void *private, int nr_cqe,
			     int comp_vector, enum ib_poll_context poll_ctx,
			     const struct ib_ocq_attr *attr, const char *caller)
{
	static const struct ib_ocq_attr defaults = {};
	struct ib_cq_init_attr cq_attr = {
		.cqe = nr_cqe,
		.comp_vector = comp_vector,
	};
	struct ib_ocq *ocq;
	int ret;

	if (!dev || nr_cqe < 1 || comp_vector < 0 ||
	    comp_vector >= max(dev->num_comp_vectors, 1))
		return ERR_PTR(-EINVAL);
	/* as ib_alloc_cq(): an unknown poll context is -EINVAL */
	if ((unsigned int)poll_ctx > IB_POLL_DIRECT)
		return ERR_PTR(-EINVAL);
	if (poll_ctx == IB_POLL_DIRECT && !ib_ocq_direct_attr_ok(attr))
		return ERR_PTR(-EINVAL);
	/*
	 * A busy poll runs the CQ unit in the ULP's context; the irq_poll host
	 * may run it once more after a run without its gate (see
	 * ib_ocq_iop_sched()), which only the irq_poll's own serialisation
	 * makes safe.
	 */
	if (poll_ctx == IB_POLL_SOFTIRQ && attr && attr->suspend_usecs)
		return ERR_PTR(-EINVAL);
	ocq = ib_ocq_kvcalloc(1, sizeof(*ocq));
	if (!ocq)
		return ERR_PTR(-ENOMEM);
	ocq->attr = attr ? *attr : defaults;
	ocq->poll_ctx = poll_ctx;
	ocq->watchdog_ms = ocq->attr.watchdog_ms;
	mutex_init(&ocq->tune_lock);
	ocq->tuned = (struct ib_ocq_tune){
		.flags = ocq->attr.flags & IB_OCQ_DEFER_DIM,
		.defer_usecs = ocq->attr.defer_usecs,
		.defer_polls = ocq->attr.defer_polls,
		.suspend_usecs = ocq->attr.suspend_usecs,
	};
	ocq->defer_usecs = ocq->attr.defer_usecs;
	ocq->pause_ms = ocq->attr.pause_ms ?: IB_OCQ_DEFAULT_PAUSE_MS;
	INIT_DELAYED_WORK(&ocq->watchdog, ib_ocq_watchdog);
	INIT_DELAYED_WORK(&ocq->lease, ib_ocq_lease);
	/* hrtimer_setup() from 6.13 on; this tree builds for 6.1 and 6.12 */
	hrtimer_init(&ocq->defer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	ocq->defer.function = ib_ocq_defer_fire;

	/* the provider's allocation fails like ours under fault injection */
	if (ib_ocq_should_fail())
		ocq->cq = ERR_PTR(-ENOMEM);
	else
		ocq->cq = __ib_create_cq(dev,
					 poll_ctx == IB_POLL_DIRECT ?
						 ib_ocq_direct_handler :
						 ib_ocq_comp_handler,
					 poll_ctx == IB_POLL_DIRECT ?
						 ib_ocq_direct_event_handler :
						 ib_ocq_event_handler,
					 private, &cq_attr, caller);
	if (IS_ERR(ocq->cq)) {
		ret = PTR_ERR(ocq->cq);
		goto out_free_ocq;
	}
	/* reported where ib_alloc_cq()'s are: restrack, rdma res show cq */
	ocq->cq->poll_ctx = poll_ctx;
	ocq->cq->comp_vector = comp_vector;
	ib_ocq_own_cq(ocq->cq);
	if (poll_ctx != IB_POLL_DIRECT) {
		ret = ib_ocq_engine_init(ocq);
		if (ret)
			goto out_destroy_cq;
		ret = ib_ocq_alloc_works(ocq);
		if (ret)
			goto out_destroy_engine;
		ib_ocq_dim_init(ocq);
	}
	ib_ocq_publish(ocq);
	return ocq;

out_destroy_engine:
	ocq_engine_destroy(&ocq->engine);
out_destroy_cq:
	ib_ocq_disown_cq(ocq->cq);
	ib_destroy_cq(ocq->cq);
out_free_ocq:
	ib_ocq_kvfree(ocq);
	return ERR_PTR(ret);
}

/**
 * __ib_ocq_alloc - allocate a CQ whose completions an ordered CQ dispatches
 * @dev: device to allocate the CQ on
 * @private: ULP context: the CQ's cq_context, also returned by
 *	ib_ocq_private()
 * @nr_cqe: number of CQ entries
 * @comp_vector: completion vector
 * @attr: mode and tuning; see &struct ib_ocq_attr; NULL for the defaults
 *	(%IB_OCQ_STRICT), as with ib_ocq_alloc_cq()
 * @caller: module name for resource tracking
 *
 * Completions are dispatched through wc->wr_cqe->done() as with ib_alloc_cq()
 * with %IB_POLL_WORKQUEUE; the CQ's cq_context is @private.  The first run,
 * queued before this returns, drains the CQ and arms it.  ib_ocq_alloc_cq()
 * is the same as a drop-in for ib_alloc_cq().
 *
 * Context: process context; may sleep.
 * Return: the ordered CQ, or ERR_PTR(-EINVAL) for bad arguments,
 * ERR_PTR(-ENOMEM), or the provider's error.
 */
struct ib_ocq *__ib_ocq_alloc(struct ib_device *dev, void *private, int nr_cqe,
			      int comp_vector, const struct ib_ocq_attr *attr,
			      const char *caller)
{
	return ib_ocq_create(dev, private, nr_cqe, comp_vector,
			     IB_POLL_WORKQUEUE, attr, caller);
}
EXPORT_SYMBOL(__ib_ocq_alloc);

/*
 * Take @ocq off the registry and the handler table.  Only a live ordered
 * CQ is looked at, so a second free is refused without touching freed
 * memory: -ENOENT.  One whose CQ still has QPs stays registered: -EBUSY;
 * so does a pooled one freed as if it were not, or the reverse: -EPERM.
 */
static int ib_ocq_unpublish(struct ib_ocq *ocq, bool pooled)
{
	struct ib_ocq *pos;
	int ret = -ENOENT;

	mutex_lock(&ib_ocq_lock);
	list_for_each_entry(pos, &ib_ocq_list, entry) {
		if (pos != ocq)
			continue;
		ret = ocq->pooled == pooled ? -EBUSY : -EPERM;
		if (ret == -EBUSY && ib_ocq_cq_unused(ocq)) {
			list_del(&ocq->entry);
			/* handlers find it no more (ib_ocq_of()) */
			WRITE_ONCE(ocq->cq->wc, NULL);
			ret = 0;
		}
		break;
	}
	mutex_unlock(&ib_ocq_lock);
	return ret;
}

/**
 * ib_ocq_free - free an ordered CQ and its CQ
 * @ocq: the ordered CQ; its QPs destroyed (drain them first with
 *	ib_drain_qp(), which works as with ib_alloc_cq(), except with
 *	&ib_ocq_attr.dispatch: see there)
 *
 * Disables the engine (a completion handler racing with this schedules
 * nothing), cancels every queued run, destroys the CQ, then frees.  No
 * done() runs after it returns.  Must not be called from done().  Freeing
 * an ordered CQ twice, or one whose CQ still has QPs, warns once and does
 * nothing.
 *
 * Context: process context; may sleep.
 */
void ib_ocq_free(struct ib_ocq *ocq)
{
	if (!ocq)
		return;
	/* a pooled CQ is shared: it goes back with ib_ocq_cq_pool_put() */
	if (WARN_ON_ONCE(IS_ERR(ocq) || ib_ocq_unpublish(ocq, false)))
		return;
	ib_ocq_destroy(ocq);
}
EXPORT_SYMBOL(ib_ocq_free);

/*
 * Cancel a unit's queued run and wait for a running one, removing what that
 * run queued for itself (struct ocq_engine_ops).  irq_poll_disable() waits
 * for a softirq run and leaves the poll scheduled for good, so that none
 * follows (it must be called once only); a back-off that run queued is the
 * delayed work, cancelled after it.  A work item that requeues itself while
 * cancel_delayed_work_sync() waits for it is refused.
 */
static void ib_ocq_cancel(struct ocq_work *w)
{
	if (w->ocq->poll_ctx == IB_POLL_SOFTIRQ)
		irq_poll_disable(&w->iop);
	cancel_delayed_work_sync(&w->dwork);
}

/* The engine and its work items, after a grace period (softirq). */
static void ib_ocq_free_rcu(struct rcu_head *rcu)
{
	struct ib_ocq *ocq = container_of(rcu, struct ib_ocq, rcu);

	ocq_engine_destroy(&ocq->engine);
	ib_ocq_kvfree(ocq->works);
	ib_ocq_kvfree(ocq);
}

/*
 * Tear down an OCQ that is off the registry: a completion handler finds it
 * no more (ib_ocq_of()), but one that found it before may still be under
 * way.  No grace period is waited for:
 *
 * 1. the engine is disabled: a kick that reads a gate from now on
 *    schedules nothing, a run under way ends at its next completion, and
 *    one that begins later touches nothing but its gate;
 * 2. the units are cancelled, the CQ unit first (it is what kicks the
 *    domains), then the deferral's timer (the CQ run that deferred
 *    started it before its cancel returned; busy polls must have stopped
 *    before the free), the pause lease (no run is left to pause) and
 *    DIM's work item (no run is left to sample; the ones that begin
 *    later see the engine dead);
 * 3. the CQ is destroyed: a handler that read a gate before the disable
 *    has queued its run by the time the provider's destroy returns;
 * 4. every unit is cancelled once more: what such a handler, a domain
 *    that took the CQ unit's gate before the disable, the timer or the
 *    lease's last tick queued is removed before it begins, or waited for
 *    (it touches nothing);
 * 5. the memory is freed, after a grace period on %IB_POLL_SOFTIRQ only:
 *    a softirq poll that completed its iop (so irq_poll_disable() went
 *    through) may still be reading its ocq_work, and a softirq handler
 *    is an RCU reader.
 */
void ib_ocq_destroy(struct ib_ocq *ocq)
{
	unsigned int i;

	/*
	 * First, so that no retune through debugfs comes after the teardown
	 * began: the removal waits for the file's writers.
	 */
	debugfs_remove_recursive(ocq->debugfs);
	ocq->debugfs = NULL;
	if (ocq->poll_ctx == IB_POLL_DIRECT) {
		ib_ocq_destroy_direct(ocq);
		return;
	}
	cancel_delayed_work_sync(&ocq->watchdog);
	ocq_engine_disable(&ocq->engine);
	for (i = 0; i < ocq->engine.nr_units; i++)
		ib_ocq_cancel(&ocq->works[i]);
	hrtimer_cancel(&ocq->defer);
	cancel_delayed_work_sync(&ocq->lease);
	ib_ocq_dim_exit(ocq);
	if (!ib_ocq_destroy_cq(ocq))
		return;
	for (i = 0; i < ocq->engine.nr_units; i++)
		cancel_delayed_work_sync(&ocq->works[i].dwork);
	if (ocq->poll_ctx == IB_POLL_SOFTIRQ)
		call_rcu(&ocq->rcu, ib_ocq_free_rcu);
	else
		ib_ocq_free_rcu(&ocq->rcu);
}

/* Take a pooled OCQ off the registry before the pool destroys it. */
int ib_ocq_release(struct ib_ocq *ocq)
{
	return ib_ocq_unpublish(ocq, true);
}

/*
 * The live OCQ of @cq, found on the registry: a CQ freed meanwhile is not
 * touched (a second ib_ocq_free_cq() finds nothing), as ib_ocq_of() would.
 */
struct ib_ocq *ib_ocq_find(struct ib_cq *cq)
{
	struct ib_ocq *pos, *ocq = NULL;

	mutex_lock(&ib_ocq_lock);
	list_for_each_entry(pos, &ib_ocq_list, entry) {
		if (pos->cq == cq) {
			ocq = pos;
			break;
		}
	}
	mutex_unlock(&ib_ocq_lock);
	return ocq;
}

/* Ordered CQs on @comp_vector of @dev: ib_ocq_alloc_cq_any() spreads them. */
int ib_ocq_vector_users(struct ib_device *dev, int comp_vector)
{
	struct ib_ocq *ocq;
	int n = 0;

	mutex_lock(&ib_ocq_lock);
	list_for_each_entry(ocq, &ib_ocq_list, entry)
		n += ocq->cq->device == dev &&
		     ocq->cq->comp_vector == comp_vector;
	mutex_unlock(&ib_ocq_lock);
	return n;
}

/**
 * ib_cq_to_ocq - the ordered CQ of a CQ
 * @cq: a CQ
 *
 * For a ULP that allocated @cq with ib_ocq_alloc_cq(), ib_ocq_alloc_cq_any()
 * or ib_ocq_cq_pool_get() and wants ib_ocq_pause(), ib_ocq_resume() or
 * ib_ocq_get_stats() on it.
 *
 * Context: any context; @cq must stay allocated meanwhile.
 * Return: the ordered CQ, or NULL if ocq did not allocate @cq (or is
 * freeing it, or @cq's comp_handler is no longer ocq's).  No lookup: a few
 * loads from @cq.
 */
struct ib_ocq *ib_cq_to_ocq(struct ib_cq *cq)
{
	return ib_ocq_of(cq);
}
EXPORT_SYMBOL(ib_cq_to_ocq);

/**
 * ib_ocq_cq - the CQ of an ordered CQ
 * @ocq: the ordered CQ
 *
 * Pass it as send_cq/recv_cq when creating QPs.  Never poll or arm it:
 * the ordered CQ owns its notification path.  Its cq_context is the ULP's.
 *
 * Context: any context.
 * Return: the CQ.
 */
struct ib_cq *ib_ocq_cq(struct ib_ocq *ocq)
{
	return ocq->cq;
}
EXPORT_SYMBOL(ib_ocq_cq);

/**
 * ib_ocq_private - the ULP context of an ordered CQ's CQ
 * @cq: a CQ allocated by ib_ocq_alloc(), as passed to done()
 *
 * Context: any context.
 * Return: the @private given to ib_ocq_alloc(): cq->cq_context.
 */
void *ib_ocq_private(struct ib_cq *cq)
{
	return cq->cq_context;
}
EXPORT_SYMBOL(ib_ocq_private);

/**
 * ib_ocq_pause - stop polling and re-arming
 * @ocq: the ordered CQ
 *
 * For a consumer that cannot keep up: the provider raises no more events
 * once the current run stops, at the next completion boundary (a done()
 * in progress finishes).  Completions already handed to a flow domain or
 * a process worker are still delivered.  Nothing is lost: ib_ocq_resume()
 * delivers, in order, everything that arrived meanwhile.  A pause that
 * nobody ends lasts between &ib_ocq_attr.pause_ms and twice that; then the
 * OCQ resumes by itself (counted in &ib_ocq_stats.lease_resumes), so that
 * ib_drain_qp() on a paused OCQ returns.  An %IB_POLL_DIRECT CQ is polled
 * by its ULP only: nothing to pause, it does nothing.
 *
 * Context: any context, including done().
 */
void ib_ocq_pause(struct ib_ocq *ocq)
{
	if (WARN_ON_ONCE(IS_ERR_OR_NULL(ocq)))
		return;
	if (ocq->poll_ctx != IB_POLL_DIRECT)
		ocq_engine_pause(&ocq->engine);
}
EXPORT_SYMBOL(ib_ocq_pause);

/**
 * ib_ocq_resume - process what arrived while paused, then arm
 * @ocq: the ordered CQ
 *
 * Also the explicit "arm now" of %IB_OCQ_POSTPONE_ARM: the next run ends
 * armed instead of paused.  Does nothing on an %IB_POLL_DIRECT CQ.
 *
 * Context: any context, including done().
 */
void ib_ocq_resume(struct ib_ocq *ocq)
{
	if (WARN_ON_ONCE(IS_ERR_OR_NULL(ocq)))
		return;
	if (ocq->poll_ctx != IB_POLL_DIRECT)
		ocq_engine_resume(&ocq->engine);
}
EXPORT_SYMBOL(ib_ocq_resume);

/**
 * ib_ocq_busy_poll - poll an ordered CQ from the ULP's own context
 * @cq: a CQ of ocq's with &ib_ocq_attr.suspend_usecs
 * @budget: completions to take, at most about (whole batches of 16)
 *
 * Consumer-driven suspension: takes the CQ's run as an event's run would,
 * unless one holds it, and dispatches what it takes as that run does
 * (%IB_OCQ_STRICT: done() here, in CQ order).  It never arms the CQ,
 * whether or not it found work (NAPI's rule with irq_suspend_timeout): the
 * CQ is suspended, and no completion event starts a run while the ULP
 * keeps calling this; once it has not called it for
 * &ib_ocq_attr.suspend_usecs, a run from the OCQ's timer polls and arms
 * the CQ.  A CQ still armed when the call began stays armed, but its
 * event waits for the next call or the timer.  Whichever side stops
 * first, nothing is lost or dispatched out of order (what checks that:
 * see Documentation/design.rst, "Consumer-driven suspension").
 * Never concurrently with or after ib_ocq_free_cq() of @cq.
 *
 * A provider that fails the poll leaves the CQ to a delayed run
 * of the OCQ's, as a run backs off.  While the caller holds the CQ (it
 * may be preempted), no run dispatches; and while it is suspended, the
 * progress of a flow domain or process worker does not start a run as it
 * does otherwise: the next busy poll, or the timer's run, polls the CQ.
 *
 * Context: process context, where the CQ's done() calls may run (they may
 * sleep on a workqueue CQ).  From done() of @cq in %IB_OCQ_STRICT it
 * returns -EBUSY (the run holds the CQ); in the other modes done() runs in
 * a domain, and a busy poll from there only hands completions on.
 * Return: the completions taken (0 or more); -EBUSY if a run holds the CQ
 * (the run dispatches: stop polling), -EAGAIN if the OCQ is paused,
 * -EOPNOTSUPP without &ib_ocq_attr.suspend_usecs (as made, or as set
 * by ib_ocq_set_tune()), -EINVAL if @cq is not ocq's or @budget is not
 * positive.
 */
int ib_ocq_busy_poll(struct ib_cq *cq, int budget)
{
	struct ib_ocq *ocq;

	might_sleep();
	ocq = cq ? ib_cq_to_ocq(cq) : NULL;

	if (!ocq || budget <= 0)
		return -EINVAL;
	if (!READ_ONCE(ocq->tuned.suspend_usecs))
		return -EOPNOTSUPP;
	return ocq_engine_busy_poll(&ocq->engine, budget);
}
EXPORT_SYMBOL(ib_ocq_busy_poll);

/**
 * ib_ocq_get_stats - read an ordered CQ's counters
 * @ocq: the ordered CQ
 * @stats: filled in
 *
 * Context: any context.  The counters are read while runs go on, so they
 * need not be consistent with each other.
 */
void ib_ocq_get_stats(struct ib_ocq *ocq, struct ib_ocq_stats *stats)
{
	if (WARN_ON_ONCE(IS_ERR_OR_NULL(ocq) || !stats))
		return;
	if (ocq->poll_ctx == IB_POLL_DIRECT)
		ib_ocq_direct_stats(ocq, stats);
	else
		ocq_engine_stats(&ocq->engine, stats);
}
EXPORT_SYMBOL(ib_ocq_get_stats);

static int __init ib_ocq_init(void)
{
	unsigned int unbound = WQ_UNBOUND | WQ_HIGHPRI | WQ_MEM_RECLAIM;

	ib_ocq_wq = alloc_workqueue("ib_ocq", WQ_HIGHPRI | WQ_MEM_RECLAIM, 0);
	if (!ib_ocq_wq)
		return -ENOMEM;
	/* domains run wherever a CPU is free, so flows really overlap */
	ib_ocq_unbound_wq = alloc_workqueue("ib_ocq_unbound", unbound, 0);
	if (!ib_ocq_unbound_wq) {
		destroy_workqueue(ib_ocq_wq);
		return -ENOMEM;
	}
	if (ib_ocq_pool_init())
		goto out_destroy_wq;
	ib_ocq_debugfs = debugfs_create_dir("ib_ocq", NULL);
	debugfs_create_file("live", 0400, ib_ocq_debugfs, NULL,
			    &ib_ocq_live_fops);
	debugfs_create_file("allocs", 0400, ib_ocq_debugfs, NULL,
			    &ib_ocq_allocs_fops);
	debugfs_create_atomic_t("fail_nth", 0600, ib_ocq_debugfs,
				&ib_ocq_fail_nth);
	return 0;

out_destroy_wq:
	destroy_workqueue(ib_ocq_unbound_wq);
	destroy_workqueue(ib_ocq_wq);
	return -ENOMEM;
}

static void __exit ib_ocq_exit(void)
{
	/* frees the pooled CQs of every device */
	ib_ocq_pool_exit();
	/* the softirq OCQs' frees (ib_ocq_free_rcu()) */
	rcu_barrier();
	debugfs_remove_recursive(ib_ocq_debugfs);
	destroy_workqueue(ib_ocq_unbound_wq);
	destroy_workqueue(ib_ocq_wq);
}

module_init(ib_ocq_init);
module_exit(ib_ocq_exit);
MODULE_LICENSE("Dual BSD/GPL");
MODULE_DESCRIPTION("Ordered completion queues for kernel RDMA ULPs");
