/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The ordered completion queue engine: the poll / dispatch / arm state
 * machine.  Pure logic: it touches the world only through ib_poll_cq(),
 * ib_req_notify_cq(), atomics and the &ocq_engine_ops.schedule hook, so the
 * same file runs on a real CQ, on the fake provider of the test module, and
 * in the userspace model checker (tools/testing/ocq).
 */
#ifndef _OCQ_ENGINE_H
#define _OCQ_ENGINE_H

#include <linux/atomic.h>
#include <linux/cache.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_ocq.h>

/*
 * Gate bits.  Every unit (the CQ run, a flow domain, a process worker, the
 * commit step) has a gate; a run of the unit exists exactly while OCQ_RUN is
 * set, so runs of one unit never overlap.
 */
#define OCQ_RUN BIT(0) /* a run is queued or executing */
#define OCQ_KICK BIT(1) /* work signalled since the last pass began */
#define OCQ_PAUSED BIT(2) /* CQ unit: neither poll nor arm */
#define OCQ_DEAD BIT(3) /* torn down: schedule nothing more */
#define OCQ_RESUMED BIT(4) /* CQ unit, postponed arm: arm when drained */
#define OCQ_WATCHDOG BIT(5) /* CQ unit: the watchdog started this run */
/*
 * CQ unit: OCQ_RUN is held for the host's timer (a deferred re-arm or a
 * suspension); whoever clears this bit takes the run: the timer, or a busy
 * poll
 */
#define OCQ_TIMER BIT(6)
/*
 * CQ unit: which pause is in force, counted modulo 2^23 by the cmpxchg that
 * sets OCQ_PAUSED, so that the lease ends only the pause it saw
 */
#define OCQ_PAUSE_GEN_SHIFT 8
#define OCQ_PAUSE_GEN_ONE BIT(OCQ_PAUSE_GEN_SHIFT)
#define OCQ_PAUSE_GEN (0x7fffff << OCQ_PAUSE_GEN_SHIFT)

#define OCQ_UNIT_CQ 0
#define OCQ_NO_STALL (-1)
/* e->stalled: the CQ run waits for any domain to make progress (parked) */
#define OCQ_STALL_ANY (-2)
/* ordering domains at most: the CQ run tracks them in one u64 */
#define OCQ_MAX_DOMAINS 64
/*
 * ocq_engine.mode of an %IB_OCQ_STRICT engine with a dispatch(): the CQ
 * run's deliver step picks its loop by mode, once per batch
 */
#define OCQ_STRICT_BY_WC (IB_OCQ_PARALLEL + 1)
/* completions taken from the CQ per ib_poll_cq() call */
#ifndef OCQ_BATCH
#define OCQ_BATCH 16
#endif
/*
 * %IB_OCQ_PARALLEL: reorder slots a worker claims at once, at most (its
 * share of what is published and unclaimed, at least one): under load one
 * claim and one kick of the commit unit serve this many completions, while
 * a lone slot behind a slow process() is still left to another worker
 */
#define OCQ_CLAIM_MAX 32U
/*
 * %IB_OCQ_DEFER_DIM: completions since the last arm or deferral before the
 * arm is deferred, at least; the threshold adapts between this and OCQ_BATCH
 */
#define OCQ_DEFER_DIM_MIN 2
/* %IB_OCQ_DEFER_DIM: deferral checks that found too few before it halves */
#define OCQ_DEFER_DIM_DECAY 16
/*
 * The moderation word (struct ocq_engine @tune): the deferred re-arm's
 * empty runs (0: no deferral), %IB_OCQ_DEFER_DIM's adaptation, and busy
 * polls' suspension, in one atomic_t, so that a holder of the CQ unit
 * never applies half of a retune
 */
#define OCQ_TUNE_POLLS GENMASK(7, 0)
#define OCQ_TUNE_DIM BIT(8)
#define OCQ_TUNE_SUSPEND BIT(9)

/**
 * struct ocq_tune - the moderation a retune sets (ocq_engine_tune())
 * @defer_polls: deferred re-arm: runs in a row that find nothing before the
 *	CQ is armed, at most %IB_OCQ_MAX_DEFER_POLLS; 0: the re-arm is not
 *	deferred
 * @dim: %IB_OCQ_DEFER_DIM's threshold of completions per deferral; needs
 *	@defer_polls
 * @suspend: busy polls may suspend the CQ's events; not with @dim
 */
struct ocq_tune {
	unsigned int defer_polls;
	bool dim;
	bool suspend;
};

/*
 * completions one run dispatches before it yields its worker: as for
 * ib_cq's IB_POLL_WORKQUEUE (IB_POLL_BUDGET_WORKQUEUE), since a requeue
 * costs a work item round trip and runs always execute in one
 */
#define OCQ_DEFAULT_BUDGET 65536
/*
 * bounds of the flow queues' shared pool (every domain's queue together)
 * or of the reorder ring, in completions: a CQ's worth
 */
#define OCQ_RING_MIN 64
#define OCQ_RING_MAX 4096
/* no slot: the end of a flow queue or of a free list of the pool */
#define OCQ_NIL (~0U)

struct ocq_engine;

/**
 * struct ocq_engine_ops - what the engine asks of its host
 * @schedule: queue a run of @unit that calls ocq_engine_run().  Called only
 *	by the context that set the unit's OCQ_RUN, so at most once per run,
 *	or by a run of @unit, or a busy poll, for the next one (it yields or
 *	backs off); the host also queues the CQ unit's run when
 *	ocq_engine_timer() gave the run to its timer: the host's cancel
 *	of a unit must wait for its run and remove what that run queued, as
 *	cancel_work_sync() does for a work item that requeues itself.  The
 *	engine asks no order between two runs of a unit from the host: the
 *	gate hands one run's state to the next.
 * @schedule_later: optional; like @schedule, but the run waits a moment,
 *	longer the larger @tries (the runs in a row that backed off).  Used
 *	when the provider fails, or keeps reporting missed events with an
 *	empty CQ, so that polling it again does not starve the CPU.
 * @alloc: optional; zeroed memory for @n objects of @size, or NULL.  Lets
 *	the host count the engine's memory and fail allocations on purpose.
 *	Without it the engine uses kvcalloc().
 * @free: frees what @alloc returned (never called with NULL); kvfree()
 *	without @alloc.
 * @lease: optional; the CQ unit was paused (ib_ocq_pause() or a postponed
 *	arm): call ocq_engine_lease() after the pause limit, unless a call is
 *	queued already.  Without it a pause lasts until ocq_engine_resume().
 *	Called from any context, never after ocq_engine_disable() returned
 *	and the runs were cancelled.
 * @defer: needed for &ib_ocq_attr.defer_usecs; a CQ run that keeps OCQ_RUN
 *	ends with the CQ unarmed: queue the next run of the CQ unit after the
 *	deferred re-arm's delay.  Called by the CQ run (the host's work item
 *	or softirq).  Teardown cancels the CQ unit (waiting for its run),
 *	then the delay, then the CQ unit again (the delay may have queued it).
 *	When the delay ends the host calls ocq_engine_timer(), and queues the
 *	run only if that returns true.
 * @suspend: needed for &ib_ocq_attr.suspend_usecs; a busy poll, found
 *	work or not, ends without arming the CQ and with OCQ_RUN kept for the
 *	timer: (re)start the timer of @defer with the suspension's delay.
 *	Called by the busy poll, from the ULP's context.
 * @serial: the host runs every unit on the CPU that queued it, one run
 *	after another (irq_poll): a domain run stops every IB_OCQ_HOL_DONES
 *	done() calls while a run of the CQ unit is queued, and requeues
 *	itself behind it.
 */
struct ocq_engine_ops {
	void (*schedule)(struct ocq_engine *e, unsigned int unit);
	void (*schedule_later)(struct ocq_engine *e, unsigned int unit,
			       unsigned int tries);
	void (*lease)(struct ocq_engine *e);
	void (*defer)(struct ocq_engine *e);
	void (*suspend)(struct ocq_engine *e);
	void *(*alloc)(struct ocq_engine *e, size_t n, size_t size);
	void (*free)(struct ocq_engine *e, void *p);
	bool serial;
};

/*
 * Locking rules.  No lock: ownership moves with the gates.
 *
 * I: set by ocq_engine_init(), read-only afterwards.
 * A: atomic.
 * C: owned by the run of the CQ unit (the holder of its OCQ_RUN: a run
 *    the host scheduled, or a busy poll).
 * U: owned by the run of the unit the field belongs to.
 * M: owned by the commit unit's run.
 * W: written by ocq_engine_watchdog() only; its host never runs it twice
 *    at once.
 * L: written by ocq_engine_lease() only; its host never runs it twice at
 *    once.
 * P: producer/consumer index, written by one owner with smp_store_release()
 *    and read by the other with smp_load_acquire(); the comment says who.
 * T: a staged word: written whole by ocq_engine_tune() (its host never
 *    calls it twice at once), read by the CQ unit's holders, which copy
 *    it into their C fields.
 */

/**
 * struct ocq_unit - one serialised run, on a cache line of its own
 * @gate: OCQ_* bits (A)
 * @stub: flow domain: the slot of its queue it dispatched last, whose
 *	@next leads to the next one to dispatch (U)
 * @popped: flow domain: completions it dispatched, done() returned (P: U
 *	writes, C reads)
 * @runs: runs of this unit (U)
 * @completions: done() calls made by this unit (U)
 * @yields: runs that reached the budget (U)
 */
struct ocq_unit {
	atomic_t gate;
	u32 stub;
	u32 popped;
	u64 runs;
	u64 completions;
	u64 yields;
} ____cacheline_aligned_in_smp;

/**
 * struct ocq_fslot - a slot of the pool the flow domains' queues share
 * @wc: the completion (written by C before it links the slot)
 * @next: in a domain's queue, the next slot, or OCQ_NIL (P: C writes with
 *	a release, the domain reads with an acquire); on a free list, the
 *	next free slot (written by whoever frees the slot, read by C once the
 *	list is its own)
 *
 * A domain's queue is a list of slots that always holds one, its @stub:
 * the CQ run links a slot behind the last (&ocq_fqueue.tail), and the
 * domain dispatches the slot behind its stub, which becomes the stub
 * while the old stub is freed.  So neither side ever writes what the
 * other reads but @next, with a release and an acquire.
 */
struct ocq_fslot {
	struct ib_wc wc;
	u32 next;
};

/**
 * struct ocq_fqueue - the CQ run's end of a flow domain's queue
 * @tail: the last slot it linked (C)
 * @pushed: completions it handed to the domain (C)
 */
struct ocq_fqueue {
	u32 tail;
	u32 pushed;
};

/**
 * struct ocq_slot - a reorder ring entry of %IB_OCQ_PARALLEL
 * @wc: the completion (written by C before it publishes the slot)
 * @processed: set by the worker once ->process() returned (P: worker writes,
 *	M reads)
 */
struct ocq_slot {
	struct ib_wc wc;
	int processed;
};

/**
 * struct ocq_engine - an ordered completion queue's state machine
 * @cq: the CQ it polls and arms (I)
 * @ops: the host's hooks (I)
 * @mode: ordering domains, or OCQ_STRICT_BY_WC (I)
 * @policy: arm policy, never %IB_ARM_AUTO; %IB_ARM_SOLICITED may be in it (I)
 * @flags: %IB_OCQ_POSTPONE_ARM (I), %IB_OCQ_DEFER_DIM (C: from @tune)
 * @budget: completions per run (I)
 * @nr_domains: flow domains or process workers (I)
 * @nr_units: units in @units (I)
 * @defer_polls: deferred re-arm: runs in a row that find nothing before the
 *	CQ is armed; 0 when the re-arm is not deferred (C: from @tune)
 * @tune: the moderation the CQ unit's holders apply, an OCQ_TUNE_* word
 *	(T: written by ocq_engine_tune(), read by every hold of the CQ unit
 *	and by busy polls)
 * @ring_mask: capacity - 1 of the reorder ring, or of the flow pool
 *	without its stubs (I)
 * @flow_key: %IB_OCQ_FLOW key (I)
 * @process: %IB_OCQ_PARALLEL unordered step (I)
 * @dispatch: called in place of done() for every completion, or NULL (I)
 * @units: the CQ unit, then the flow domains, or the workers and the commit
 *	unit (I)
 * @slots: %IB_OCQ_PARALLEL reorder ring (I)
 * @fslots: %IB_OCQ_FLOW: the pool of the domains' queues, a CQ's worth
 *	and a stub per domain (I)
 * @fqueues: %IB_OCQ_FLOW: the CQ run's end of each domain's queue (I)
 * @pauses: pauses, requested and postponed arms (A)
 * @cq_errors: asynchronous CQ errors (A)
 * @events: completion handler calls (A, written from any CPU: on a line
 *	of its own with the other per-event counter)
 * @contended: busy polls that found another run of the CQ unit (A)
 * @stalled: unit the CQ run waits on for room, OCQ_STALL_ANY while it is
 *	parked or waits for room in the flow pool, or OCQ_NO_STALL (A)
 * @returned: %IB_OCQ_FLOW: the slots the domains freed, a list the CQ run
 *	takes whole (A: pushed with a cmpxchg, taken with an xchg)
 * @claimed: %IB_OCQ_PARALLEL: next slot a worker processes (A)
 * @wcs: completions of the last poll (C); the host's CQ points at it
 * @wc_pos: first completion of @wcs not yet handed on (C)
 * @wc_cnt: completions in @wcs (C)
 * @pool: %IB_OCQ_FLOW: the CQ run's own free slots of @fslots (C)
 * @maybe_busy: %IB_OCQ_FLOW: the domains it handed completions to and has
 *	not seen idle since (C)
 * @runs: runs of the CQ unit (C)
 * @empty_runs: runs that dispatched nothing before they first tried to end (C)
 * @polls: ib_poll_cq() calls (C)
 * @arms: ib_req_notify_cq() calls (C)
 * @repolls: passes repeated because the arm was not confirmed (C)
 * @rescues: completions found by runs the watchdog started (C)
 * @stalls: waits for room in a domain or the flow pool (C)
 * @parks: runs that ended unarmed while domains held work (C)
 * @inlined: %IB_OCQ_FLOW: completions the CQ run dispatched itself (C)
 * @defers: runs that ended with the arm deferred (C)
 * @busy_polls: busy polls that took the CQ unit (C)
 * @suspends: busy polls that ended with the CQ suspended (C)
 * @provider_errors: failed polls and arms the run backed off from (C)
 * @defer_idle: deferred re-arm: runs in a row that found nothing, since
 *	the last completion taken or confirmed arm (C)
 * @defer_min: deferred re-arm: @defer_got at which the arm is deferred;
 *	with fewer, but some, the CQ is armed; 1, or with %IB_OCQ_DEFER_DIM
 *	adapted between OCQ_DEFER_DIM_MIN and OCQ_BATCH (C)
 * @defer_got: deferred re-arm: completions taken since the last confirmed
 *	arm (those of the arming poll included, within its run) or deferral
 *	(C)
 * @defer_chain: deferred re-arm: the run (@runs) that first deferred the
 *	arm with @defer_got at @defer_min or more since the last confirmed
 *	arm; 0 if none did (C)
 * @defer_paid: ... and a later check found @defer_min again (C)
 * @defer_short: %IB_OCQ_DEFER_DIM: checks that found some completions,
 *	fewer than @defer_min, while it was above OCQ_DEFER_DIM_MIN, since
 *	it last moved (C)
 * @backoffs: runs in a row that backed off (C)
 * @tune_now: the @tune word the CQ unit's holders last applied (C)
 * @armed: the run's last arm was confirmed and no completion was taken
 *	since: the CQ is still armed (C)
 * @max_batch: most completions one run took (C)
 * @taken: completions taken from the CQ; what a run took is its change
 *	across the run, which ocq.c feeds to DIM (C)
 * @produced: %IB_OCQ_PARALLEL: next slot to fill (P: C writes, workers and
 *	M read; a line of its own)
 * @committed: %IB_OCQ_PARALLEL: next slot to commit (P: M writes, C reads;
 *	a line of its own)
 * @wd_events: @events at the watchdog's last tick (W)
 * @lease_mark: the pause generation (OCQ_PAUSE_GEN) the lease's last tick
 *	saw, if @lease_marked (L)
 * @lease_marked: the last tick found the engine paused (L)
 * @lease_resumes: pauses the lease ended (L)
 *
 * The layout follows who writes what: the read-mostly fields first, then
 * each field that two CPUs write on a line of its own or with the fields
 * the same CPUs write, and the CQ run's own fields together.
 */
struct ocq_engine {
	struct ib_cq *cq;
	const struct ocq_engine_ops *ops;
	enum ib_ocq_mode mode;
	enum ib_arm_policy policy;
	unsigned int flags;
	unsigned int budget;
	unsigned int nr_domains;
	unsigned int nr_units;
	unsigned int defer_polls;
	atomic_t tune;
	u32 ring_mask;
	u32 (*flow_key)(struct ib_cq *cq, const struct ib_wc *wc);
	void (*process)(struct ib_cq *cq, struct ib_wc *wc);
	void (*dispatch)(struct ib_cq *cq, struct ib_wc *wc);
	struct ocq_unit *units;
	struct ocq_slot *slots;
	struct ocq_fslot *fslots;
	struct ocq_fqueue *fqueues;
	atomic_long_t pauses;
	atomic_long_t cq_errors;

	atomic_long_t events ____cacheline_aligned_in_smp;
	atomic_long_t contended;

	atomic_t stalled ____cacheline_aligned_in_smp;
	atomic_t returned;

	atomic_t claimed ____cacheline_aligned_in_smp;

	struct ib_wc wcs[OCQ_BATCH] ____cacheline_aligned_in_smp;
	unsigned int wc_pos;
	unsigned int wc_cnt;
	u32 pool;
	u64 maybe_busy;
	u64 runs;
	u64 empty_runs;
	u64 polls;
	u64 arms;
	u64 repolls;
	u64 rescues;
	u64 stalls;
	u64 parks;
	u64 inlined;
	u64 defers;
	u64 busy_polls;
	u64 suspends;
	u64 provider_errors;
	unsigned int defer_idle;
	unsigned int defer_min;
	unsigned int defer_got;
	u64 defer_chain;
	bool defer_paid;
	unsigned int defer_short;
	unsigned int backoffs;
	int tune_now;
	bool armed;
	u64 max_batch;
	u64 taken;

	u32 produced ____cacheline_aligned_in_smp;

	u32 committed ____cacheline_aligned_in_smp;

	long wd_events ____cacheline_aligned_in_smp;
	int lease_mark;
	bool lease_marked;
	u64 lease_resumes;
};

/**
 * ocq_engine_dead - whether a unit of @e was disabled
 * @e: the engine
 * @unit: the unit
 *
 * Context: any context.
 * Return: true once ocq_engine_disable() set OCQ_DEAD on @unit's gate.
 */
static inline bool ocq_engine_dead(struct ocq_engine *e, unsigned int unit)
{
	return atomic_read(&e->units[unit].gate) & OCQ_DEAD;
}

int ocq_engine_init(struct ocq_engine *e, struct ib_cq *cq,
		    const struct ib_ocq_attr *attr, unsigned int nr_cpus,
		    const struct ocq_engine_ops *ops);
void ocq_engine_destroy(struct ocq_engine *e);
void ocq_engine_event(struct ocq_engine *e);
void ocq_engine_cq_error(struct ocq_engine *e);
unsigned int ocq_engine_run(struct ocq_engine *e, unsigned int unit);
void ocq_engine_pause(struct ocq_engine *e);
void ocq_engine_resume(struct ocq_engine *e);
void ocq_engine_disable(struct ocq_engine *e);
void ocq_engine_watchdog(struct ocq_engine *e);
bool ocq_engine_lease(struct ocq_engine *e);
bool ocq_engine_timer(struct ocq_engine *e);
int ocq_engine_busy_poll(struct ocq_engine *e, unsigned int budget);
int ocq_engine_tune_check(const struct ocq_engine *e, const struct ocq_tune *t);
int ocq_engine_tune(struct ocq_engine *e, const struct ocq_tune *t);
void ocq_engine_stats(struct ocq_engine *e, struct ib_ocq_stats *stats);
int ocq_engine_check_attr(const struct ib_ocq_attr *attr);

#endif /* _OCQ_ENGINE_H */
