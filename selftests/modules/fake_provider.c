// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fake_provider - the fake provider of the test modules: its events
 * (handler calls from the caller, hard irq, softirq or another CPU) and its
 * verbs.  The API is fake_provider.h.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/kallsyms.h>
#include <linux/kthread.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <linux/stacktrace.h>
#include <linux/string.h>
#include <rdma/ib_verbs.h>

#include "ocq_test_compat.h"
#include "fake_provider.h"

atomic_t fake_objects = ATOMIC_INIT(0);

/* --- calls done() must not run inside --- */

/* a slot being claimed: never a task, so never current */
#define FAKE_INSIDE_CLAIMED ((struct task_struct *)1)

/**
 * struct fake_inside - a call in progress that done() must not run inside
 * @task: the task (in an interrupt: the one it interrupted) that is inside
 *	the call; NULL for a free slot (A)
 * @pc: preempt_count() when the call began (written by @task before @task)
 * @irq: the call began in_interrupt() (written by @task before @task)
 */
struct fake_inside {
	struct task_struct *task;
	unsigned int pc;
	bool irq;
};

static struct fake_inside fake_insides[FAKE_INSIDE_SLOTS];
/* slots in use: done() looks at them only while there are any (A) */
static atomic_t fake_inside_nr = ATOMIC_INIT(0);

/**
 * fake_inside_enter - the current task enters a call done() must not run in
 *
 * Context: any context; done() of the same task, nested in the call, is
 * found by fake_inside_nested() until fake_inside_exit().
 * Return: the slot to pass to fake_inside_exit(), or -1 if all were taken
 * (the call then goes unwatched).
 */
int fake_inside_enter(void)
{
	int i;

	for (i = 0; i < FAKE_INSIDE_SLOTS; i++) {
		if (cmpxchg(&fake_insides[i].task, NULL, FAKE_INSIDE_CLAIMED))
			continue;
		WRITE_ONCE(fake_insides[i].pc, preempt_count());
		WRITE_ONCE(fake_insides[i].irq, in_interrupt());
		/* only this task compares @task with itself: program order */
		WRITE_ONCE(fake_insides[i].task, current);
		atomic_inc(&fake_inside_nr);
		return i;
	}
	return -1;
}

/**
 * fake_inside_exit - the call of fake_inside_enter()'s @slot returns
 * @slot: what fake_inside_enter() returned
 *
 * Context: the context of the fake_inside_enter() call.
 */
void fake_inside_exit(int slot)
{
	if (slot < 0)
		return;
	atomic_dec(&fake_inside_nr);
	/* pairs with the cmpxchg() of the next fake_inside_enter() */
	smp_store_release(&fake_insides[slot].task, NULL);
}

/*
 * Whether the softirq running now was run at an interrupt's end (a frame of
 * irq_exit_rcu()), not by a local_bh_enable() (a frame of
 * __local_bh_enable_ip()): the innermost of the two frames decides; a stack
 * with neither is not an interrupt's.  Looked at only when preempt_count()
 * cannot tell the two apart: an interrupt that lands while the task holds
 * preemption off (a spin_lock(), try_to_wake_up()) and runs softirqs at its
 * end shows the same count as a local_bh_enable() that runs them.  Not
 * inlined, and its own frame skipped: its name is no other function's.
 */
static noinline bool fake_softirq_at_irq_exit(void)
{
	static const char *const irq_exit[] = {
		"irq_exit_rcu",
		"__irq_exit_rcu",
		"irq_exit",
	};
	unsigned long entries[64];
	char sym[KSYM_SYMBOL_LEN];
	unsigned int i, j, n;

	n = stack_trace_save(entries, ARRAY_SIZE(entries), 1);
	for (i = 0; i < n; i++) {
		sprint_symbol_no_offset(sym, entries[i]);
		if (!strcmp(sym, "__local_bh_enable_ip"))
			return false;
		for (j = 0; j < ARRAY_SIZE(irq_exit); j++)
			if (!strcmp(sym, irq_exit[j]))
				return true;
	}
	return false;
}

/*
 * Whether a done() of the task of a call that began with @in is nested in
 * that call itself, rather than in an interrupt that arrived meanwhile.
 * A call that began in an interrupt: nothing else runs in that context
 * until it ends, and the end of an interrupt does not run softirqs inside
 * one.  On PREEMPT_RT the end of an interrupt never runs softirqs (the
 * softirq threads do).  Otherwise a task with softirqs enabled may be
 * interrupted, and the interrupt's end runs pending softirqs on top of it;
 * a local_bh_enable() inside the call that runs them keeps preemption
 * disabled once more while they run (__local_bh_enable_ip()), which the
 * interrupt's end does not, unless the task held preemption off when the
 * interrupt came: then the stack tells (fake_softirq_at_irq_exit()).  (The
 * handler's own path holds no preemption count while interrupts are on:
 * PREEMPT_RCU, as on Debian's and the debug kernel.)
 */
static bool fake_inside_inline(const struct fake_inside *in)
{
	if (READ_ONCE(in->irq) || IS_ENABLED(CONFIG_PREEMPT_RT))
		return true;
	return (preempt_count() & PREEMPT_MASK) >
		       (READ_ONCE(in->pc) & PREEMPT_MASK) &&
	       !fake_softirq_at_irq_exit();
}

/**
 * fake_inside_nested - whether done() runs inside a watched call
 *
 * Context: any context.
 * Return: true if the current task is inside a completion handler call of
 * the fake provider or a watched ib_ocq_resume(), and the caller runs
 * nested in that call (see fake_inside_inline()).
 */
bool fake_inside_nested(void)
{
	int i;

	if (!atomic_read(&fake_inside_nr))
		return false;
	for (i = 0; i < FAKE_INSIDE_SLOTS; i++)
		if (READ_ONCE(fake_insides[i].task) == current &&
		    fake_inside_inline(&fake_insides[i]))
			return true;
	return false;
}

/* --- the fake provider: events --- */

/*
 * Call the completion handler, counting what it finds; done() must not run
 * inside the call (fake_inside_nested()).
 */
void fake_callback(struct fake_cq *fcq)
{
	int slot;

	if (atomic_inc_return(&fcq->in_cb) > 1)
		atomic_long_inc(&fcq->overlaps);
	atomic_long_inc(&fcq->callbacks);
	/* racy on purpose: a sample of the CQ as the handler finds it */
	if (READ_ONCE(fcq->head) == READ_ONCE(fcq->tail))
		atomic_long_inc(&fcq->empty_callbacks);
	slot = fake_inside_enter();
	fcq->ibcq.comp_handler(&fcq->ibcq, fcq->ibcq.cq_context);
	fake_inside_exit(slot);
	atomic_dec(&fcq->in_cb);
}

/*
 * fake_concurrent: the two sides of an event meet here, then both call the
 * handler.  Arrivals pair up by their count (1 with 2, 3 with 4, ...); the
 * first of a pair waits a bounded time for the second, so a side that never
 * comes (coalesced) only costs the wait.
 */
static void fake_meet(struct fake_cq *fcq)
{
	int n = atomic_inc_return(&fcq->meet);
	u64 end = ktime_get_ns() + FAKE_MEET_NS;

	if (!(n & 1))
		return;
	while (atomic_read(&fcq->meet) == n && ktime_get_ns() < end)
		cpu_relax();
}

static void fake_remote_fn(void *info)
{
	struct fake_cq *fcq = info;

	fake_meet(fcq);
	fake_callback(fcq);
	/* pairs with atomic_read_acquire() in fake_cq_quiesce() */
	atomic_set_release(&fcq->remote_busy, 0);
}

/* fake_concurrent: raise the event on the next online CPU as well. */
static void fake_remote(struct fake_cq *fcq)
{
	int cpu = cpumask_next(smp_processor_id(), cpu_online_mask);

	if (cpu >= nr_cpu_ids)
		cpu = cpumask_first(cpu_online_mask);
	if (cpu == smp_processor_id() || READ_ONCE(fcq->quiesced))
		return;
	if (atomic_cmpxchg(&fcq->remote_busy, 0, 1))
		return; /* one is in flight: the events coalesce */
	if (smp_call_function_single_async(cpu, &fcq->csd))
		atomic_set(&fcq->remote_busy, 0);
}

/* An event the producer delivers itself, in process context. */
void fake_direct(struct fake_cq *fcq)
{
	if (!(fcq->sem & FAKE_CONCURRENT)) {
		fake_callback(fcq);
		return;
	}
	preempt_disable();
	fake_remote(fcq);
	fake_meet(fcq);
	fake_callback(fcq);
	preempt_enable();
}

/*
 * Raise an event from a timer, %FAKE_EVENT_NS from now (%FAKE_MODERATED:
 * %FAKE_MODERATED_NS).  Under the CQ lock, so that a run the timer's
 * callback starts polls after the push that raised it; a timer already
 * queued has not called the handler yet and covers this event too.
 */
static void fake_defer(struct fake_cq *fcq, struct hrtimer *t,
		       enum hrtimer_mode mode)
{
	u64 ns = fcq->sem & FAKE_MODERATED ? FAKE_MODERATED_NS : FAKE_EVENT_NS;

	lockdep_assert_held(&fcq->lock);
	if (fcq->quiesced || hrtimer_is_queued(t))
		return;
	hrtimer_start(t, ns_to_ktime(ns), mode);
}

/*
 * An event is due (the CQ was armed and is not any more).  Return true if
 * the caller must deliver it in process context after dropping the lock;
 * timers are started here.  @direct: the caller may deliver it.
 */
static bool fake_event(struct fake_cq *fcq, bool direct)
{
	lockdep_assert_held(&fcq->lock);
	if ((fcq->sem & FAKE_LOSSY) && (++fcq->due == FAKE_LOSS_FIRST ||
					!(fake_rand(&fcq->rnd) % FAKE_LOSS))) {
		fcq->dropped++;
		return false;
	}
	if (direct && (fcq->sem & (FAKE_CONCURRENT | FAKE_INLINE)))
		return true;
	/* moderated: a consumer that polls meanwhile finds the completion */
	if (fcq->sem & FAKE_MODERATED) {
		fake_defer(fcq, &fcq->soft, HRTIMER_MODE_REL_SOFT);
		return false;
	}
	switch (fake_rand(&fcq->rnd) % FAKE_NR_CTX) {
	case FAKE_CTX_PROCESS:
		if (direct)
			return true;
		fallthrough;
	case FAKE_CTX_HARDIRQ:
		fake_defer(fcq, &fcq->hard, HRTIMER_MODE_REL_HARD);
		break;
	default:
		fake_defer(fcq, &fcq->soft, HRTIMER_MODE_REL_SOFT);
		break;
	}
	return false;
}

static enum hrtimer_restart fake_hard_fn(struct hrtimer *t)
{
	fake_callback(container_of(t, struct fake_cq, hard));
	return HRTIMER_NORESTART;
}

static enum hrtimer_restart fake_soft_fn(struct hrtimer *t)
{
	fake_callback(container_of(t, struct fake_cq, soft));
	return HRTIMER_NORESTART;
}

static enum hrtimer_restart fake_spurious_fn(struct hrtimer *t)
{
	fake_callback(container_of(t, struct fake_cq, spurious));
	hrtimer_forward_now(t, ns_to_ktime(FAKE_SPURIOUS_NS));
	return HRTIMER_RESTART;
}

/*
 * Stop every event source but the producers (stopped before) and the
 * injector (stopped by destroy_cq), and wait for callbacks in flight.
 */
void fake_cq_quiesce(struct fake_cq *fcq)
{
	unsigned long flags;

	spin_lock_irqsave(&fcq->lock, flags);
	fcq->quiesced = true;
	spin_unlock_irqrestore(&fcq->lock, flags);
	hrtimer_cancel(&fcq->spurious);
	hrtimer_cancel(&fcq->hard);
	hrtimer_cancel(&fcq->soft);
	/* pairs with atomic_set_release() in fake_remote_fn() */
	while (atomic_read_acquire(&fcq->remote_busy))
		cpu_relax();
}

/* --- the fake provider: verbs --- */

static int fake_create_cq(struct ib_cq *ibcq,
			  const struct ib_cq_init_attr *attr,
			  ocq_compat_create_cq_arg *unused)
{
	struct fake_dev *fdev = to_fake_dev(ibcq->device);
	struct fake_cq *fcq = to_fake_cq(ibcq);
	u32 size;

	if (attr->cqe < 1 || attr->cqe > FAKE_MAX_CQE || attr->flags)
		return -EINVAL;
	/* %FAKE_COUNTED: the ring stays empty, one slot does */
	if (fdev->sem & FAKE_COUNTED)
		size = 1;
	else
		size = roundup_pow_of_two(max_t(u32, attr->cqe, fdev->ring));
	fcq->ring = kcalloc(size, sizeof(*fcq->ring), GFP_KERNEL);
	if (!fcq->ring)
		return -ENOMEM;
	atomic_inc(&fake_objects);
	spin_lock_init(&fcq->lock);
	fcq->mask = size - 1;
	fcq->sem = fdev->sem;
	fcq->rnd = fdev->rnd;
	hrtimer_init(&fcq->hard, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
	fcq->hard.function = fake_hard_fn;
	hrtimer_init(&fcq->soft, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	fcq->soft.function = fake_soft_fn;
	hrtimer_init(&fcq->spurious, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
	fcq->spurious.function = fake_spurious_fn;
	INIT_CSD(&fcq->csd, fake_remote_fn, fcq);
	fcq->mod_ix = -1;
	ibcq->cqe = roundup_pow_of_two(attr->cqe);
	return 0;
}

/*
 * The profile of a moderation, or -1: profile N asks for 2^((N+1)/2)
 * completions or 2 << (N/2) us, whichever comes first.
 */
static int fake_dim_profile(u16 count, u16 usec)
{
	int ix;

	for (ix = 0; ix < FAKE_DIM_PROFILES; ix++)
		if (count == 1 << ((ix + 1) / 2) && usec == 2 << (ix / 2))
			return ix;
	return -1;
}

/* DIM's choice reaches the provider: record it. */
static int fake_modify_cq(struct ib_cq *ibcq, u16 count, u16 usec)
{
	struct fake_cq *fcq = to_fake_cq(ibcq);
	int ix = fake_dim_profile(count, usec);
	unsigned long flags;

	spin_lock_irqsave(&fcq->lock, flags);
	fcq->moderations++;
	if (ix < 0) {
		fcq->bad_moderations++;
	} else {
		fcq->mod_ix = ix;
		__set_bit(ix, &fcq->mod_seen);
	}
	spin_unlock_irqrestore(&fcq->lock, flags);
	return 0;
}

/*
 * Like a real provider synchronizing its interrupt: no callback runs once
 * this returns, whatever still tries to raise one.
 */
static int fake_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct fake_cq *fcq = to_fake_cq(ibcq);

	if (fcq->injector) {
		kthread_stop(fcq->injector);
		atomic_dec(&fake_objects);
	}
	fcq->injector = NULL;
	fake_cq_quiesce(fcq);
	kfree(fcq->ring);
	atomic_dec(&fake_objects);
	return 0;
}

/* fake_provider_error: this call fails, taking nothing and arming nothing. */
static bool fake_fails(struct fake_cq *fcq)
{
	lockdep_assert_held(&fcq->lock);
	if (!(fcq->sem & FAKE_EIO) || fake_rand(&fcq->rnd) % FAKE_EIO_EVERY)
		return false;
	fcq->errors++;
	return true;
}

static int fake_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct fake_cq *fcq = to_fake_cq(ibcq);
	unsigned long flags;
	int n = 0;

	spin_lock_irqsave(&fcq->lock, flags);
	fcq->polls++;
	if (fcq->armed)
		fcq->armed_polls++;
	if (fake_fails(fcq)) {
		spin_unlock_irqrestore(&fcq->lock, flags);
		return -EIO;
	}
	if (fcq->sem & FAKE_TRICKLE)
		num_entries = min(num_entries, 1);
	if (fcq->sem & FAKE_COUNTED) {
		for (; n < num_entries && fcq->ready; n++, fcq->ready--) {
			wc[n] = fcq->tmpl;
			wc[n].byte_len = fcq->pushed - fcq->ready;
		}
	}
	while (n < num_entries && fcq->tail != fcq->visible) {
		wc[n] = fcq->ring[fcq->tail++ & fcq->mask];
		if (fcq->watch && wc[n].wr_cqe == fcq->watch_cqe)
			fcq->watch(fcq);
		n++;
	}
	/* fake_spurious: an interrupt for entries this poll already took */
	if ((fcq->sem & FAKE_SPURIOUS) && n && fcq->tail == fcq->head &&
	    !(fake_rand(&fcq->rnd) % FAKE_STALE))
		fake_defer(fcq, &fcq->soft, HRTIMER_MODE_REL_SOFT);
	spin_unlock_irqrestore(&fcq->lock, flags);
	return n;
}

/* A completion a solicited arm raises its event for: solicited, or failed. */
static bool fake_wc_solicited(const struct ib_wc *wc)
{
	return (wc->wc_flags & FAKE_WC_SOLICITED) ||
	       wc->status != IB_WC_SUCCESS;
}

/*
 * Whether the completions at CQ slots [@from, @to) owe a solicited arm its
 * event: one of them is solicited.  %FAKE_COUNTED: its completions have no
 * slots, and every one counts as solicited.  Under the CQ lock.
 */
static bool fake_owe_solicited(const struct fake_cq *fcq, u32 from, u32 to)
{
	lockdep_assert_held(&fcq->lock);
	if (fcq->sem & FAKE_COUNTED)
		return true;
	for (; from != to; from++)
		if (fake_wc_solicited(&fcq->ring[from & fcq->mask]))
			return true;
	return false;
}

/* Arm; the return value of req_notify_cq.  Under the CQ lock. */
static int fake_arm(struct fake_cq *fcq, enum ib_cq_notify_flags flags)
{
	bool missed = flags & IB_CQ_REPORT_MISSED_EVENTS;
	bool pending, match;

	/* the doorbell is ordered after every CQE the HCA wrote: they land */
	fcq->visible = fcq->head;
	pending = fcq->head != fcq->tail || fcq->ready;
	fcq->sol_arm = (flags & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED;
	fcq->sol_arms += fcq->sol_arm;
	/* pending completions the arm raises its event for */
	match = pending && (!fcq->sol_arm ||
			    fake_owe_solicited(fcq, fcq->tail, fcq->head));
	/* fake_perpetual: "missed events", always, and the CQ stays unarmed */
	if ((fcq->sem & FAKE_PERPETUAL) && missed)
		return 1;
	/* strong: the doorbell compares against the consumer index */
	if ((fcq->sem & FAKE_STRONG) && match) {
		fcq->armed = false;
		fcq->arm_events++;
		fake_event(fcq, false);
		return 0;
	}
	fcq->armed = true;
	/*
	 * strong, nothing pending that the arm is for (a solicited arm may
	 * leave unsolicited ones pending): armed, and REPORT_MISSED reports
	 * nothing (mlx5's reports only the CQEs it made in software)
	 */
	if (fcq->sem & FAKE_STRONG)
		return 0;
	/* fake_sol_narrow: a solicited arm reports what it would raise for */
	if ((fcq->sem & FAKE_SOL_NARROW) && fcq->sol_arm)
		pending = match;
	if (!missed || !pending)
		return 0;
	/*
	 * fake_weak: a 1 tells the consumer to poll again, and nothing
	 * promises an event after it.  Every other time there is none, so a
	 * consumer that took 1 for "armed" stalls instead of being rescued
	 * by the next completion.  Always the first time: a stream whose runs
	 * seldom arm a non-empty CQ (parallel mode, where the CQ run parks
	 * while the workers hold work) still meets one.
	 */
	if ((fcq->sem & FAKE_VOID_ARM) &&
	    (!fcq->voided || (fake_rand(&fcq->rnd) & 1))) {
		fcq->armed = false;
		fcq->voided++;
		return 1;
	}
	/* fake_cb_and_1: the event the arm raised consumes the arm */
	if (fcq->sem & FAKE_CB_AND_1) {
		fcq->armed = false;
		fcq->arm_events++;
		fake_event(fcq, false);
	}
	return 1;
}

static int fake_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct fake_cq *fcq = to_fake_cq(ibcq);
	unsigned long irqflags;
	int ret;

	spin_lock_irqsave(&fcq->lock, irqflags);
	fcq->arms++;
	if (fake_fails(fcq)) {
		spin_unlock_irqrestore(&fcq->lock, irqflags);
		return -EIO;
	}
	/* fake_spurious: callbacks from the first arm on, as on a live CQ */
	if ((fcq->sem & FAKE_SPURIOUS) && !fcq->ticking && !fcq->quiesced) {
		fcq->ticking = true;
		hrtimer_start(&fcq->spurious, ns_to_ktime(FAKE_SPURIOUS_NS),
			      HRTIMER_MODE_REL_HARD);
	}
	ret = fake_arm(fcq, flags);
	if (ret > 0)
		fcq->positive++;
	spin_unlock_irqrestore(&fcq->lock, irqflags);
	/* a slow doorbell: resumes land between the arm and its return */
	if (fcq->sem & FAKE_SLOW_ARM)
		udelay(FAKE_SLOW_ARM_US);
	return ret;
}

/*
 * Add a completion, as the HCA would: it takes the next CQ position.  Under
 * the CQ lock; fake_cq_land() makes it visible.  Return false on overrun.
 */
bool fake_cq_add(struct fake_cq *fcq, const struct ib_wc *wc, u64 *pos)
{
	lockdep_assert_held(&fcq->lock);
	if (fcq->head - fcq->tail > fcq->mask) {
		fcq->overruns++;
		return false;
	}
	*pos = fcq->pushed++;
	fcq->ring[fcq->head & fcq->mask] = *wc;
	WRITE_ONCE(fcq->head, fcq->head + 1);
	return true;
}

/*
 * The completions added land and raise an event if the CQ was armed.  Now
 * and then, on an unarmed CQ, they land late: poll_cq does not see them
 * yet, but req_notify_cq does (it lands everything), so arming finds
 * entries pending as on real hardware when a completion races with the
 * consumer's last poll.  On a CQ armed solicited-only, the event is raised
 * only if one of the completions added since the last fake_cq_land() is
 * solicited.  Under the CQ lock; return true if the caller must deliver the
 * event with fake_direct() once it dropped the lock.
 */
bool fake_cq_land(struct fake_cq *fcq)
{
	/* an armed CQ has every earlier completion landed: these are new */
	u32 from = fcq->visible;

	lockdep_assert_held(&fcq->lock);
	if (fcq->armed || (fcq->sem & FAKE_PROMPT) ||
	    fake_rand(&fcq->rnd) % FAKE_LATE)
		fcq->visible = fcq->head;
	if (!fcq->armed)
		return false;
	/* a solicited arm: none of them is solicited, the CQ stays armed */
	if (fcq->sol_arm && !fake_owe_solicited(fcq, from, fcq->head)) {
		fcq->sol_held++;
		return false;
	}
	fcq->armed = false;
	return fake_event(fcq, true);
}

/*
 * Add one completion and let it land; its CQ position goes to @pos.  Return
 * false on overrun.
 */
bool fake_cq_push(struct fake_cq *fcq, const struct ib_wc *wc, u64 *pos)
{
	unsigned long flags;
	bool direct;

	spin_lock_irqsave(&fcq->lock, flags);
	if (!fake_cq_add(fcq, wc, pos)) {
		spin_unlock_irqrestore(&fcq->lock, flags);
		return false;
	}
	direct = fake_cq_land(fcq);
	spin_unlock_irqrestore(&fcq->lock, flags);
	if (direct)
		fake_direct(fcq);
	return true;
}

/*
 * %FAKE_COUNTED: make @n more completions ready, copies of @tmpl, and let
 * them land.  Return true if the caller must deliver the event with
 * fake_direct() (the CQ was armed and the semantics put it there).
 */
bool fake_cq_fill(struct fake_cq *fcq, u64 n, const struct ib_wc *tmpl)
{
	unsigned long flags;
	bool direct;

	spin_lock_irqsave(&fcq->lock, flags);
	fcq->tmpl = *tmpl;
	fcq->ready += n;
	fcq->pushed += n;
	direct = fake_cq_land(fcq);
	spin_unlock_irqrestore(&fcq->lock, flags);
	return direct;
}

static const struct ib_device_ops fake_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.create_cq = fake_create_cq,
	.destroy_cq = fake_destroy_cq,
	.poll_cq = fake_poll_cq,
	.req_notify_cq = fake_req_notify_cq,
	.modify_cq = fake_modify_cq,
	INIT_RDMA_OBJ_SIZE(ib_cq, fake_cq, ibcq),
};

/*
 * A fake device; @ops, if not NULL, adds verbs of the user's own (the test's
 * drain_sq and drain_rq) to the provider's.
 */
struct fake_dev *fake_dev_alloc(const struct ib_device_ops *ops)
{
	struct fake_dev *fdev;

	fdev = ib_alloc_device(fake_dev, ibdev);
	if (!fdev)
		return NULL;
	ib_set_device_ops(&fdev->ibdev, &fake_dev_ops);
	if (ops)
		ib_set_device_ops(&fdev->ibdev, ops);
	fdev->ibdev.num_comp_vectors = 1;
	return fdev;
}
