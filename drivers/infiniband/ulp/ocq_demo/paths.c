// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ocq_demo: the completion paths under comparison.  Each side of a run has
 * one CQ shared by all its connections, driven by one of:
 *
 * - ocq-strict, ocq-flow, ocq-parallel: an ordered CQ (ib_ocq_alloc());
 * - upstream-wq, upstream-unbound, upstream-softirq: ib_alloc_cq();
 * - naive: the seed loop "arm, then poll until empty", run from a per-CPU
 *   work item queued on whichever CPU took the event, so two CPUs may run
 *   it at once;
 * - locked: the seed loop "poll until empty, arm with REPORT_MISSED_EVENTS,
 *   repeat while it reports missed events", the same way, under a spinlock.
 *
 * The naive and locked loops dispatch at most OD_LOOP_BUDGET completions
 * and then requeue themselves on the same CPU: a loop that never finds the
 * CQ empty would otherwise hold the CPU (and, for locked, a spinlock) for
 * ever.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include "ocq_demo.h"

/* completions one naive/locked loop dispatches before it requeues itself */
#define OD_LOOP_BUDGET 1024
/* busy_poll_us: completions per ib_ocq_busy_poll() call */
#define OD_BUSY_BUDGET 64
/* busy_poll_us: how long a poll that found nothing is followed by more */
#define OD_BUSY_SPIN_US 50U

static struct workqueue_struct *od_loop_wq;

/**
 * od_begin - start timing one completion's processing
 *
 * Return: the time, for od_end().
 */
u64 od_begin(void)
{
	return ktime_get_ns();
}

/**
 * od_end - account one completion's processing
 * @dcq: the side's CQ it came from
 * @t0: od_begin()'s value
 */
void od_end(struct od_cq *dcq, u64 t0)
{
	atomic64_inc(&dcq->completions);
	atomic64_add(ktime_get_ns() - t0, &dcq->cpu_ns);
	if (dcq->run->p.postpone)
		od_cq_consumed(dcq);
	/* a run's done(): wake the busy poller, once */
	if (dcq->poller && current != dcq->poller &&
	    !READ_ONCE(dcq->poll_kick)) {
		WRITE_ONCE(dcq->poll_kick, true);
		wake_up(&dcq->poll_wait);
	}
}

/**
 * od_end_flushed - account an open-loop receive flushed at teardown
 * @dcq: the server's CQ it came from
 *
 * The open loop's server keeps OD_STREAM_RECV receives posted per
 * connection, and the drain flushes them all: more than the messages of a
 * short run.  They are left out of completions and cpu_ns, which count
 * the workload; only the postponed arm's resume is kept.
 *
 * Context: the server's done() of a flushed receive.
 */
void od_end_flushed(struct od_cq *dcq)
{
	if (dcq->run->p.postpone)
		od_cq_consumed(dcq);
}

/**
 * od_burn - spend the run's work_ns of CPU on one completion
 * @run: the run
 */
void od_burn(struct od_run *run)
{
	u64 end;

	if (!run->p.work_ns)
		return;
	end = ktime_get_ns() + run->p.work_ns;
	while (ktime_get_ns() < end)
		cpu_relax();
}

/**
 * od_in_process - whether verification and work happen in process()
 * @run: the run
 *
 * Return: true on ocq-parallel, where done() only commits.
 */
bool od_in_process(struct od_run *run)
{
	return run->p.path == OD_OCQ_PARALLEL;
}

/* ocq-parallel's unordered step: verify payloads, burn the work. */
static void od_process(struct ib_cq *cq, struct ib_wc *wc)
{
	struct od_cq *dcq = ib_ocq_private(cq);
	u64 t0 = od_begin();

	dcq->process(wc);
	od_burn(dcq->run);
	atomic64_add(ktime_get_ns() - t0, &dcq->cpu_ns);
}

static void od_resume_work(struct work_struct *work)
{
	struct od_cq *dcq = container_of(work, struct od_cq, resume_work);

	atomic_set(&dcq->resume_queued, 0);
	/* Pairs with the xchg in od_cq_consumed(): a later done() queues us again. */
	smp_mb__after_atomic();
	ib_ocq_resume(dcq->ocq);
}

/**
 * od_cq_consumed - a done() finished: arm once the consumer caught up
 * @dcq: the side's CQ
 *
 * Postponed arm: the ordered CQ is left unarmed when drained; the resume
 * runs from a work item, i.e. after the burst of done() calls in progress.
 */
void od_cq_consumed(struct od_cq *dcq)
{
	if (!dcq->ocq || atomic_xchg(&dcq->resume_queued, 1))
		return;
	queue_work(od_wq, &dcq->resume_work);
}

/**
 * od_cq_resume - resume a postponed ordered CQ now (the monitor's safety net)
 * @dcq: the side's CQ
 */
void od_cq_resume(struct od_cq *dcq)
{
	if (dcq->ocq)
		ib_ocq_resume(dcq->ocq);
}

static void od_dispatch(struct od_cq *dcq, struct ib_wc *wc)
{
	wc->wr_cqe->done(dcq->cq, wc);
}

/* Seed pattern 1: arm, then poll one at a time until empty. */
static bool od_naive_loop(struct od_cq *dcq)
{
	struct ib_wc wc;
	int n = 0;

	atomic64_inc(&dcq->runs);
	atomic64_inc(&dcq->arms);
	ib_req_notify_cq(dcq->cq, IB_CQ_NEXT_COMP);
	while (ib_poll_cq(dcq->cq, 1, &wc) > 0) {
		od_dispatch(dcq, &wc);
		if (++n == OD_LOOP_BUDGET)
			return true;
	}
	if (!n)
		atomic64_inc(&dcq->empty_runs);
	return false;
}

/* Seed pattern 2 under a spinlock: poll until empty, arm, repeat if missed. */
static bool od_locked_loop(struct od_cq *dcq)
{
	int flags = IB_CQ_NEXT_COMP | IB_CQ_REPORT_MISSED_EVENTS;
	struct ib_wc wc;
	int n = 0, ret;

	spin_lock(&dcq->lock);
	atomic64_inc(&dcq->runs);
	do {
		while (ib_poll_cq(dcq->cq, 1, &wc) > 0) {
			od_dispatch(dcq, &wc);
			if (++n == OD_LOOP_BUDGET)
				goto out_budget;
		}
		atomic64_inc(&dcq->arms);
		ret = ib_req_notify_cq(dcq->cq, flags);
		if (ret > 0)
			atomic64_inc(&dcq->repolls);
	} while (ret > 0);
	spin_unlock(&dcq->lock);
	if (!n)
		atomic64_inc(&dcq->empty_runs);
	return false;

out_budget:
	spin_unlock(&dcq->lock);
	return true;
}

static void od_loop_work(struct work_struct *work)
{
	struct od_cq_work *w = container_of(work, struct od_cq_work, work);
	struct od_cq *dcq = w->dcq;
	bool more;

	more = dcq->path == OD_NAIVE ? od_naive_loop(dcq) : od_locked_loop(dcq);
	if (more && !READ_ONCE(dcq->dead))
		queue_work_on(raw_smp_processor_id(), od_loop_wq, work);
}

/*
 * The naive/locked completion handler: run the loop on the CPU that took
 * the event.  Polling right here could deadlock with the provider's own
 * callback context, hence the per-CPU work item.
 */
static void od_comp_handler(struct ib_cq *cq, void *ctx)
{
	struct od_cq *dcq = ctx;
	int cpu;

	atomic64_inc(&dcq->events);
	if (READ_ONCE(dcq->dead))
		return;
	cpu = get_cpu();
	queue_work_on(cpu, od_loop_wq, &per_cpu_ptr(dcq->pcpu, cpu)->work);
	put_cpu();
}

static void od_cq_event(struct ib_event *ev, void *ctx)
{
	pr_info("CQ event: %s\n", ib_event_msg(ev->event));
}

static int od_cq_create_seed(struct od_cq *dcq, struct ib_device *dev,
			     int nr_cqe)
{
	struct ib_cq_init_attr attr = { .cqe = nr_cqe };
	int cpu;

	dcq->pcpu = alloc_percpu(struct od_cq_work);
	if (!dcq->pcpu)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		INIT_WORK(&per_cpu_ptr(dcq->pcpu, cpu)->work, od_loop_work);
		per_cpu_ptr(dcq->pcpu, cpu)->dcq = dcq;
	}
	dcq->cq = ib_create_cq(dev, od_comp_handler, od_cq_event, dcq, &attr);
	if (IS_ERR(dcq->cq)) {
		free_percpu(dcq->pcpu);
		dcq->pcpu = NULL;
		return PTR_ERR(dcq->cq);
	}
	ib_req_notify_cq(dcq->cq, IB_CQ_NEXT_COMP);
	return 0;
}

/*
 * busy_poll_us: poll the ordered CQ from this thread while it finds work,
 * which keeps the CQ suspended (no completion events).  Between two polls
 * that found work it waits a quarter of the suspension's delay, so that
 * each poll finds a batch and the timer does not fire meanwhile.  A poll
 * that finds nothing keeps the suspension too; the thread polls on for
 * OD_BUSY_SPIN_US at most (busy_poll_us if shorter), as a socket's busy
 * poll spins for its budget, so that the next completion is taken here;
 * then it sleeps: busy_poll_us after its last poll the timer's run arms
 * the CQ, and a run's done() wakes the thread once work came through an
 * event again.  -EBUSY (a run
 * holds the CQ and dispatches, and its done() kicks this thread) and
 * -EAGAIN (paused) end the spin at once.  The sleep is bounded, so that a
 * wake-up lost to the unlocked flag costs a second at most; a wake-up that
 * was no kick polls once, without a spin.
 */
static bool od_poll_kicked(struct od_cq *dcq)
{
	return READ_ONCE(dcq->poll_kick) || kthread_should_stop();
}

/* Sleep until a run's done() kicks the poller, a second at most. */
static bool od_poll_wait(struct od_cq *dcq)
{
	long left;

	left = wait_event_interruptible_timeout(dcq->poll_wait,
						od_poll_kicked(dcq), HZ);
	WRITE_ONCE(dcq->poll_kick, false);
	return left > 0;
}

static int od_poller(void *arg)
{
	struct od_cq *dcq = arg;
	unsigned int us = dcq->run->p.busy_poll_us, gap = us / 4;
	u64 spin = min(us, OD_BUSY_SPIN_US) * NSEC_PER_USEC;
	u64 spin_end = ktime_get_ns() + spin;
	int n;

	while (!kthread_should_stop()) {
		n = ib_ocq_busy_poll(dcq->cq, OD_BUSY_BUDGET);
		if (n > 0) {
			if (gap)
				usleep_range(gap, gap + gap / 4 + 1);
			else
				cond_resched();
			spin_end = ktime_get_ns() + spin;
			continue;
		}
		if (!n && ktime_get_ns() < spin_end) {
			cpu_relax();
			cond_resched();
			continue;
		}
		spin_end = od_poll_wait(dcq) ? ktime_get_ns() + spin : 0;
	}
	return 0;
}

static int od_poller_start(struct od_cq *dcq)
{
	struct task_struct *t;

	init_waitqueue_head(&dcq->poll_wait);
	t = kthread_run(od_poller, dcq, "ocq_demo_poll");
	if (IS_ERR(t))
		return PTR_ERR(t);
	dcq->poller = t;
	return 0;
}

static int od_cq_create_ocq(struct od_cq *dcq, struct ib_device *dev,
			    int nr_cqe)
{
	static const enum ib_ocq_mode modes[] = {
		[OD_OCQ_STRICT] = IB_OCQ_STRICT,
		[OD_OCQ_FLOW] = IB_OCQ_FLOW,
		[OD_OCQ_PARALLEL] = IB_OCQ_PARALLEL,
	};
	struct ib_ocq_attr attr = {
		.mode = modes[dcq->path],
		.policy = IB_ARM_AUTO,
		.flags = (dcq->run->p.postpone ? IB_OCQ_POSTPONE_ARM : 0) |
			 (dcq->run->p.defer_dim ? IB_OCQ_DEFER_DIM : 0),
		.defer_usecs = dcq->run->p.defer_us,
		.suspend_usecs = dcq->run->p.busy_poll_us,
	};
	int ret;

	if (dcq->path == OD_OCQ_PARALLEL)
		attr.process = od_process;
	dcq->ocq = ib_ocq_alloc(dev, dcq, nr_cqe, 0, &attr);
	if (IS_ERR(dcq->ocq)) {
		ret = PTR_ERR(dcq->ocq);
		dcq->ocq = NULL;
		return ret;
	}
	dcq->cq = ib_ocq_cq(dcq->ocq);
	if (!attr.suspend_usecs)
		return 0;
	ret = od_poller_start(dcq);
	if (ret) {
		ib_ocq_free(dcq->ocq);
		dcq->ocq = NULL;
		dcq->cq = NULL;
	}
	return ret;
}

/**
 * od_cq_create - create one side's CQ on the run's path
 * @run: the run (its device and parameters)
 * @dcq: the side's CQ, zeroed
 * @nr_cqe: CQ entries
 * @process: the side's process() step, used on ocq-parallel
 *
 * Context: process context.
 * Return: 0 or -errno.
 */
int od_cq_create(struct od_run *run, struct od_cq *dcq, int nr_cqe,
		 void (*process)(struct ib_wc *wc))
{
	static const enum ib_poll_context ctx[] = {
		[OD_UP_WQ] = IB_POLL_WORKQUEUE,
		[OD_UP_UNBOUND] = IB_POLL_UNBOUND_WORKQUEUE,
		[OD_UP_SOFTIRQ] = IB_POLL_SOFTIRQ,
	};

	dcq->run = run;
	dcq->path = run->p.path;
	dcq->process = process;
	spin_lock_init(&dcq->lock);
	INIT_WORK(&dcq->resume_work, od_resume_work);
	switch (dcq->path) {
	case OD_OCQ_STRICT:
	case OD_OCQ_FLOW:
	case OD_OCQ_PARALLEL:
		return od_cq_create_ocq(dcq, run->dev, nr_cqe);
	case OD_NAIVE:
	case OD_LOCKED:
		return od_cq_create_seed(dcq, run->dev, nr_cqe);
	default:
		break;
	}
	dcq->cq = ib_alloc_cq(run->dev, dcq, nr_cqe, 0, ctx[dcq->path]);
	if (IS_ERR(dcq->cq)) {
		int ret = PTR_ERR(dcq->cq);

		dcq->cq = NULL;
		return ret;
	}
	return 0;
}

/**
 * od_cq_destroy - free a side's CQ; its QPs are destroyed
 * @dcq: the side's CQ (may never have been created)
 *
 * Context: process context.
 */
void od_cq_destroy(struct od_cq *dcq)
{
	int cpu;

	if (dcq->ocq) {
		/* ib_ocq_busy_poll() must not race ib_ocq_free() */
		if (dcq->poller)
			kthread_stop(dcq->poller);
		cancel_work_sync(&dcq->resume_work);
		ib_ocq_free(dcq->ocq);
		/* after the last done(): od_end() reads it */
		dcq->poller = NULL;
		dcq->ocq = NULL;
		dcq->cq = NULL;
		return;
	}
	if (!dcq->cq)
		return;
	if (!dcq->pcpu) {
		ib_free_cq(dcq->cq);
		dcq->cq = NULL;
		return;
	}
	WRITE_ONCE(dcq->dead, true);
	for_each_possible_cpu(cpu)
		cancel_work_sync(&per_cpu_ptr(dcq->pcpu, cpu)->work);
	ib_destroy_cq(dcq->cq);
	free_percpu(dcq->pcpu);
	dcq->pcpu = NULL;
	dcq->cq = NULL;
}

/**
 * od_paths_init - the naive/locked loops' workqueue
 *
 * Return: 0 or -ENOMEM.
 */
int od_paths_init(void)
{
	/* bound: a loop runs on the CPU its event was taken on */
	od_loop_wq = alloc_workqueue("ocq_demo_loop", WQ_HIGHPRI, 0);
	return od_loop_wq ? 0 : -ENOMEM;
}

/**
 * od_paths_exit - free what od_paths_init() allocated
 */
void od_paths_exit(void)
{
	destroy_workqueue(od_loop_wq);
}
