// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The ordered completion queue engine.
 *
 * A completion travels one straight line: the provider calls the completion
 * handler, which only kicks the CQ unit's gate; the run that the kick
 * schedules polls, hands completions on in CQ order and arms the CQ; done()
 * is called by exactly one run per ordering domain at a time.
 *
 * Each unit has a gate word.  A kick sets OCQ_KICK, and OCQ_RUN if it was
 * clear, in which case the kicker schedules the run.  A run clears OCQ_KICK
 * when it begins a pass, and may drop OCQ_RUN only while OCQ_KICK is still
 * clear: a kick that raced with the end of a pass makes the run look again
 * instead of being lost.  No spinlock is held around any loop.
 *
 * In the flow and parallel modes the CQ run hands completions on; in flow
 * mode it dispatches a short batch of one flow itself when every domain is
 * idle (ocq_flow_inline()), which saves the hop to a domain.  It does not
 * arm a drained CQ while the domains still hold work: the next
 * domain to make progress kicks it instead (ocq_park()), and the completions
 * that work brings about are polled in batches rather than raising an event
 * each.  The CQ is armed once it is drained with the domains idle.  A
 * domain with a backlog wakes a parked run every IB_OCQ_HOL_DONES done()
 * calls, so that another flow's completion never waits for the backlog.
 *
 * With a deferred re-arm (&ib_ocq_attr.defer_usecs) a run that drained the
 * CQ after finding work does not arm it either: it keeps OCQ_RUN and the
 * host starts the next run after the delay (ocq_defer()); only once
 * e->defer_polls of those runs in a row found nothing is the CQ armed.
 * With %IB_OCQ_DEFER_DIM the arm is deferred only once e->defer_min
 * completions, at least two, were taken since the last confirmed arm or
 * deferral; with fewer the CQ is armed as without it.  The threshold
 * doubles, up to OCQ_BATCH, after a deferral that did not pay (no later
 * check found that many again before the CQ was armed), drops back to two
 * after one that did, and halves after OCQ_DEFER_DIM_DECAY checks that
 * found too few (ocq_defer_adapt(), at the arm).
 *
 * Who may clear what: OCQ_KICK and OCQ_RESUMED are cleared only by the
 * pass that begins (ocq_pass_begin()), which then owns what they asked
 * for; OCQ_RUN only by ocq_release(), while OCQ_KICK is clear; OCQ_PAUSED
 * only by a resume.
 */
#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/bug.h>
#include <linux/export.h>
#include <linux/hash.h>
#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/math.h>
#include <linux/minmax.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_ocq.h>

#include "ocq_engine.h"
#include <trace/events/ib_ocq.h>

/*
 * What a step of the CQ run came to.  ocq_poll() returns the first six,
 * the deliver steps OCQ_MORE or OCQ_WAIT, a pass one of the last six.
 */
enum ocq_step {
	OCQ_MORE, /* a full batch was taken: hand it on, poll again */
	OCQ_ARMED, /* the CQ was drained and is armed: the run may end */
	OCQ_POSTPONE, /* drained, the arm postponed: pause instead */
	OCQ_PARK, /* drained while domains hold work: end unarmed */
	OCQ_DEFER, /* drained, the arm deferred: poll again after a delay */
	OCQ_BACKOFF, /* the provider failed or won't arm: retry later */
	OCQ_WAIT, /* waiting for a kick: paused, dead, stalled or parked */
	OCQ_YIELD, /* budget spent: requeue at once */
};

/* Polls, arms and repolls made by one __ib_poll_and_notify() call. */
struct ocq_pn_count {
	unsigned int polls;
	unsigned int arms;
	unsigned int repolls;
};

/* @policy without its %IB_ARM_SOLICITED modifier */
static inline enum ib_arm_policy ocq_arm_base(enum ib_arm_policy policy)
{
	return policy & ~IB_ARM_SOLICITED;
}

/* Whether @policy is a policy, with or without %IB_ARM_SOLICITED. */
static bool ocq_policy_valid(enum ib_arm_policy policy)
{
	return (unsigned int)ocq_arm_base(policy) <= IB_ARM_DOUBLE_POLL;
}

/* @policy with %IB_ARM_AUTO looked up for @dev, its modifier kept */
static enum ib_arm_policy ocq_policy_resolve(const struct ib_device *dev,
					     enum ib_arm_policy policy)
{
	if (ocq_arm_base(policy) == IB_ARM_AUTO)
		policy |= ib_cq_arm_policy(dev);
	return policy;
}

static int ocq_arm(struct ib_cq *cq, enum ib_arm_policy policy,
		   struct ocq_pn_count *cnt)
{
	enum ib_cq_notify_flags flags =
		policy & IB_ARM_SOLICITED ? IB_CQ_SOLICITED : IB_CQ_NEXT_COMP;

	cnt->arms++;
	if (ocq_arm_base(policy) == IB_ARM_REPORT_MISSED)
		flags |= IB_CQ_REPORT_MISSED_EVENTS;
	return ib_req_notify_cq(cq, flags);
}

/*
 * The arm of a CQ that a poll found drained (@n < @num_entries
 * completions in @wc), and with %IB_ARM_DOUBLE_POLL the poll after it:
 * n completions in all, or -errno; the arm's result in *@arm (0 armed,
 * > 0 not known to be armed, -errno).
 */
static int ocq_arm_drained(struct ib_cq *cq, int num_entries, struct ib_wc *wc,
			   enum ib_arm_policy policy, int n, int *arm,
			   struct ocq_pn_count *cnt)
{
	int m;

	*arm = ocq_arm(cq, policy, cnt);
	if (*arm < 0 || ocq_arm_base(policy) != IB_ARM_DOUBLE_POLL)
		return n;
	/* armed for what comes next: look once more for what came before */
	m = ib_poll_cq(cq, num_entries - n, wc + n);
	cnt->polls++;
	if (m < 0)
		*arm = m;
	else if (m > 0)
		*arm = 1;
	return m > 0 ? n + m : n;
}

/*
 * ib_poll_and_notify() from its first poll on, which returned @n: the
 * arm once the CQ is drained, and the polls and arms again while the
 * provider reports missed events on an empty CQ.  Completions already
 * taken from the CQ are never dropped: when a later step fails they are
 * returned with IB_PN_REPOLL, and the error shows up again on the next
 * call.  An empty CQ the provider won't confirm armed is polled again,
 * IB_POLL_ARM_TRIES times at most.
 */
static int ocq_notify_polled(struct ib_cq *cq, int num_entries,
			     struct ib_wc *wc, enum ib_arm_policy policy,
			     enum ib_pn_status *status,
			     struct ocq_pn_count *cnt, int n)
{
	unsigned int tries = 0;
	int arm = 0;

	for (;;) {
		if (n >= 0 && n < num_entries)
			n = ocq_arm_drained(cq, num_entries, wc, policy, n,
					    &arm, cnt);
		if (n < 0)
			return n;
		if (n == num_entries) {
			*status = IB_PN_MORE;
			return n;
		}
		if (!arm) {
			*status = n ? IB_PN_ARMED : IB_PN_EMPTY_ARMED;
			return n;
		}
		if (arm > 0)
			cnt->repolls++;
		if (n) {
			*status = IB_PN_REPOLL;
			return n;
		}
		if (arm < 0)
			return arm;
		if (++tries == IB_POLL_ARM_TRIES)
			return -EAGAIN;
		n = ib_poll_cq(cq, num_entries, wc);
		cnt->polls++;
	}
}

/*
 * The body of ib_poll_and_notify(), counting what it asks of the
 * provider: a poll, then ocq_notify_polled().
 */
static int __ib_poll_and_notify(struct ib_cq *cq, int num_entries,
				struct ib_wc *wc, enum ib_arm_policy policy,
				enum ib_pn_status *status,
				struct ocq_pn_count *cnt)
{
	int n = ib_poll_cq(cq, num_entries, wc);

	cnt->polls++;
	return ocq_notify_polled(cq, num_entries, wc, policy, status, cnt, n);
}

/**
 * ib_cq_arm_policy - the arm policy a provider's semantics allow
 * @dev: the device whose provider is looked up
 *
 * %IB_ARM_STRONG is correct only where the provider raises an event when it
 * is armed with unpolled entries, for every entry it can hold.  No provider
 * is proven to: mlx5 (mlx5_ib_generate_wc()) and mlx4 (its completions
 * made up in software after an internal error) keep entries the doorbell
 * does not see, which a plain %IB_CQ_NEXT_COMP arm after an empty poll
 * strands.  Their %IB_CQ_REPORT_MISSED_EVENTS costs a list check, not a
 * poll; rxe and siw report missed events by looking at the queue.  So
 * every device gets %IB_ARM_REPORT_MISSED, correct on any provider that
 * keeps the verbs contract; %IB_ARM_STRONG and %IB_ARM_DOUBLE_POLL stay
 * for a caller that knows its device.
 *
 * Context: any context.
 * Return: the policy to use on @dev; never %IB_ARM_AUTO.
 */
enum ib_arm_policy ib_cq_arm_policy(const struct ib_device *dev)
{
	return IB_ARM_REPORT_MISSED;
}
EXPORT_SYMBOL(ib_cq_arm_policy);

/**
 * ib_poll_and_notify - poll a CQ and, once it is drained, arm it
 * @cq: the CQ
 * @num_entries: room in @wc, at least 1
 * @wc: where completions are returned
 * @policy: how to arm; %IB_ARM_AUTO to look the provider up; with
 *	%IB_ARM_SOLICITED OR'ed in, armed solicited-only (see
 *	ib_poll_cq_and_arm_solicited())
 * @status: what the caller must do next, see &enum ib_pn_status
 *
 * One verb instead of a poll, an arm and a poll again: a provider with
 * strong arm semantics (%IB_ARM_STRONG) never pays for the extra poll, a
 * weak one stays correct.  Use it as::
 *
 *	do {
 *		n = ib_poll_and_notify(cq, ARRAY_SIZE(wcs), wcs,
 *				       IB_ARM_AUTO, &st);
 *		if (n < 0)
 *			goto requeue;	// not armed: try again later
 *		process(wcs, n);
 *	} while (st == IB_PN_MORE || st == IB_PN_REPOLL);
 *
 * Every call that does not end the loop returns completions, so the loop
 * ends once the CQ is drained.
 *
 * Context: any context the provider's poll_cq and req_notify_cq allow.
 * Return: the number of completions in @wc (>= 0), and @status set;
 * %IB_PN_REPOLL only with at least one.  Or, with @status not set and the
 * CQ NOT armed (nothing is lost, call again later, from a work item rather
 * than in a tight loop): -EAGAIN when the provider reported missed events on
 * an empty CQ %IB_POLL_ARM_TRIES times, -EINVAL for @num_entries < 1, a NULL
 * @wc or @status, or an unknown @policy, or the provider's -errno (then the
 * CQ is not known to be armed).
 */
int ib_poll_and_notify(struct ib_cq *cq, int num_entries, struct ib_wc *wc,
		       enum ib_arm_policy policy, enum ib_pn_status *status)
{
	struct ocq_pn_count cnt = {};

	if (num_entries < 1 || !wc || !status || !ocq_policy_valid(policy))
		return -EINVAL;
	policy = ocq_policy_resolve(cq->device, policy);
	return __ib_poll_and_notify(cq, num_entries, wc, policy, status, &cnt);
}
EXPORT_SYMBOL(ib_poll_and_notify);

/*
 * ib_poll_cq_and_arm() and ib_poll_cq_and_arm_solicited(): @arm is
 * %IB_CQ_NEXT_COMP or %IB_CQ_SOLICITED.
 */
static int ocq_poll_cq_and_arm(struct ib_cq *cq, int num_entries,
			       struct ib_wc *wc, enum ib_cq_notify_flags arm)
{
	int i, n;

	if (num_entries < 1 || !wc)
		return -EINVAL;
	for (i = 0; i < IB_POLL_ARM_TRIES; i++) {
		n = ib_poll_cq(cq, num_entries, wc);
		if (n)
			return n;
		n = ib_req_notify_cq(cq, arm | IB_CQ_REPORT_MISSED_EVENTS);
		if (n <= 0)
			return n;
	}
	return -EAGAIN;
}

/**
 * ib_poll_cq_and_arm - poll a CQ; once it is drained, arm it
 * @cq: the CQ
 * @num_entries: room in @wc, at least 1
 * @wc: where completions are returned
 *
 * Arms with %IB_CQ_NEXT_COMP | %IB_CQ_REPORT_MISSED_EVENTS.  A positive
 * return from the provider means the CQ is NOT armed, so the CQ is polled
 * again here rather than by requeueing the caller.  Use it as::
 *
 *	while ((n = ib_poll_cq_and_arm(cq, ARRAY_SIZE(wcs), wcs)) > 0)
 *		process(wcs, n);
 *	if (n < 0)
 *		requeue();	// NOT armed: nothing else will look
 *
 * Context: any context the provider's poll_cq and req_notify_cq allow.
 * Return: > 0, the number of completions in @wc: process them and call
 * again.  0: the CQ was drained and is armed; the completion handler is
 * guaranteed to run once the CQ is not empty.  -EAGAIN: the provider kept
 * reporting missed events with an empty CQ %IB_POLL_ARM_TRIES times; the
 * CQ is NOT armed, nothing was lost, call again later (from a work item,
 * not in a tight loop).  -EINVAL: @num_entries < 1 or a NULL @wc.  Other
 * -errno: the provider failed; the CQ is NOT armed.
 */
int ib_poll_cq_and_arm(struct ib_cq *cq, int num_entries, struct ib_wc *wc)
{
	return ocq_poll_cq_and_arm(cq, num_entries, wc, IB_CQ_NEXT_COMP);
}
EXPORT_SYMBOL(ib_poll_cq_and_arm);

/**
 * ib_poll_cq_and_arm_solicited - poll a CQ; once it is drained, arm it for
 *	the next solicited completion
 * @cq: the CQ
 * @num_entries: room in @wc, at least 1
 * @wc: where completions are returned
 *
 * As ib_poll_cq_and_arm(), arming with %IB_CQ_SOLICITED |
 * %IB_CQ_REPORT_MISSED_EVENTS: for a receive CQ whose peer marks the end
 * of each message solicited (%IB_SEND_SOLICITED), as RDS does.  Once it
 * returns 0 the handler runs for the next solicited completion (and on
 * most providers the next unsuccessful one); completions that are neither
 * wait in the CQ until then.  What %IB_CQ_REPORT_MISSED_EVENTS reports
 * with a solicited arm differs by provider: rxe and siw report any entry,
 * mlx4 none and mlx5 only the completions it makes in software (their
 * doorbell raises the event for the hardware's); either way
 * a solicited completion that lands between the last poll and the arm is
 * returned by a later call or raises the handler.  Documentation/api.rst,
 * "Arming solicited-only", has the models.
 *
 * Context: any context the provider's poll_cq and req_notify_cq allow.
 * Return: as ib_poll_cq_and_arm(); 0: the CQ was drained and is armed for
 * the next solicited completion.
 */
int ib_poll_cq_and_arm_solicited(struct ib_cq *cq, int num_entries,
				 struct ib_wc *wc)
{
	return ocq_poll_cq_and_arm(cq, num_entries, wc, IB_CQ_SOLICITED);
}
EXPORT_SYMBOL(ib_poll_cq_and_arm_solicited);

/* Set OCQ_KICK; return true if the caller took OCQ_RUN and must schedule. */
static bool ocq_gate_kick(atomic_t *gate, int extra)
{
	int old = atomic_read(gate), val;

	do {
		if (old & OCQ_DEAD)
			return false;
		val = old | OCQ_KICK | extra;
		if (!(old & OCQ_PAUSED))
			val |= OCQ_RUN;
	} while (!atomic_try_cmpxchg(gate, &old, val));
	return !(old & OCQ_RUN) && (val & OCQ_RUN);
}

static void ocq_kick(struct ocq_engine *e, unsigned int unit)
{
	if (ocq_gate_kick(&e->units[unit].gate, 0))
		e->ops->schedule(e, unit);
}

/*
 * Begin a pass.  The fully ordered fetch_andnot pairs with the cmpxchg of
 * ocq_gate_kick(): a kick that lands after it is seen by ocq_release(), and
 * whatever the kicker published before kicking is seen by this pass.
 */
static int ocq_pass_begin(atomic_t *gate, int clear)
{
	return atomic_fetch_andnot(OCQ_KICK | clear, gate);
}

/*
 * Drop OCQ_RUN at the end of a run that waits for a kick.  Return true if
 * a kick came after the pass began: the run must make another pass.  While
 * paused or dead the run ends even so; resume or nothing will follow.  The
 * fully ordered cmpxchg pairs with the one of ocq_gate_kick() that takes
 * OCQ_RUN next: the next run, on whichever CPU, sees this run's stores.
 */
static bool ocq_release(atomic_t *gate)
{
	int old = atomic_read(gate), val;

	do {
		if ((old & (OCQ_KICK | OCQ_PAUSED | OCQ_DEAD)) == OCQ_KICK)
			return true;
		val = old & ~OCQ_RUN;
	} while (!atomic_try_cmpxchg(gate, &old, val));
	return false;
}

/*
 * End a run that must go on later: keep OCQ_RUN and queue the next run, at
 * once or, to back off from a provider that won't arm, a moment later.
 * During teardown too: the host's cancel of the unit waits for this run and
 * removes what it queued (see &struct ocq_engine_ops), and a queued run
 * that starts first ends at once on OCQ_DEAD.
 */
static void ocq_yield(struct ocq_engine *e, unsigned int unit, bool later)
{
	WRITE_ONCE(e->units[unit].yields, e->units[unit].yields + 1);
	trace_ocq_yield(e->cq, unit);
	if (later && e->ops->schedule_later)
		e->ops->schedule_later(e, unit, e->backoffs);
	else
		e->ops->schedule(e, unit);
}

/*
 * Hand OCQ_RUN to the host's timer: set OCQ_TIMER, then start the timer.
 * From the fully ordered fetch_or on, whoever clears OCQ_TIMER (the timer,
 * ocq_engine_timer(), or a busy poll, ocq_busy_take()) owns the run, so
 * every store of this run must come before it; the fetch_or pairs with
 * their cmpxchg.  The timer starts after the bit: a fire in between would
 * find no bit and queue nothing, and the run would wait for a busy poll.
 * A fire of an earlier start that finds the bit queues the run early: a
 * run too many, never one too few.
 */
static void ocq_timer_hold(struct ocq_engine *e,
			   void (*start)(struct ocq_engine *e))
{
	atomic_fetch_or(OCQ_TIMER, &e->units[OCQ_UNIT_CQ].gate);
	start(e);
}

/*
 * Deferred re-arm: end the CQ run with the CQ drained and unarmed, keeping
 * OCQ_RUN, and let the host start the next run after its delay.  Nothing
 * can be lost meanwhile: no event is needed, the next run polls.  A kick
 * that lands before it (a resume) waits for it; no domain holds work (a
 * run that left some parks instead); the watchdog leaves a unit with
 * OCQ_RUN alone.  During teardown the host cancels the delay after the CQ
 * unit's run, as for a yield.
 */
static void ocq_defer(struct ocq_engine *e)
{
	/* a deferral of a batch starts what ocq_defer_adapt() judges */
	if (!e->defer_chain && e->defer_got >= e->defer_min)
		e->defer_chain = e->runs;
	WRITE_ONCE(e->defers, e->defers + 1);
	trace_ocq_defer(e->cq);
	e->defer_got = 0;
	ocq_timer_hold(e, e->ops->defer);
}

/*
 * Suspension: a busy poll, found work or not, ends with the CQ drained (or
 * its budget spent) and not armed by it (one an earlier run armed stays
 * armed), and leaves OCQ_RUN to the timer: if the ULP polls again before
 * it fires, that poll takes the run and starts the timer again; if not,
 * the timer's run arms the CQ.
 */
static void ocq_suspend(struct ocq_engine *e)
{
	WRITE_ONCE(e->suspends, e->suspends + 1);
	/* as after a deferral: the timer's run counts afresh */
	e->defer_got = 0;
	ocq_timer_hold(e, e->ops->suspend);
}

static bool ocq_stopped(struct ocq_engine *e, unsigned int unit)
{
	return atomic_read(&e->units[unit].gate) & (OCQ_PAUSED | OCQ_DEAD);
}

/*
 * A completion the ULP did not post as a successful request: a flush, the
 * drain completion of ib_drain_qp(), or, without @dispatch, one without a
 * &ib_cqe.  Neither flow_key() nor process() sees it.
 */
static bool ocq_wc_unposted(const struct ocq_engine *e, const struct ib_wc *wc)
{
	return wc->status != IB_WC_SUCCESS || (!wc->wr_cqe && !e->dispatch);
}

/*
 * done() of @wc, or with @by_wc (@dispatch set: a constant in each caller's
 * copy, so that no loop tests @dispatch per completion) the ULP's
 * dispatch(), its wr_id untouched.  Without it, one without an ib_cqe is
 * dropped, as ib_cq does.
 */
static __always_inline void ocq_done(struct ocq_engine *e, struct ib_wc *wc,
				     bool by_wc)
{
	if (by_wc)
		e->dispatch(e->cq, wc);
	else if (likely(wc->wr_cqe))
		wc->wr_cqe->done(e->cq, wc);
	else
		WARN_ON_ONCE(wc->status == IB_WC_SUCCESS);
}

static __always_inline void ocq_dispatch(struct ocq_engine *e,
					 struct ocq_unit *u, struct ib_wc *wc,
					 bool by_wc)
{
	WRITE_ONCE(u->completions, u->completions + 1);
	ocq_done(e, wc, by_wc);
}

/*
 * The CQ run waits, as @stall (a unit, or OCQ_STALL_ANY), until @ready.
 * Publish the wait, then look again: the full barrier pairs with the one in
 * ocq_unstall(), so either this sees the progress the consumer made, or the
 * consumer sees the wait and kicks the CQ unit.  Return true if @ready
 * holds after all (the wait is withdrawn).
 */
static bool ocq_stall(struct ocq_engine *e, int stall,
		      bool (*ready)(struct ocq_engine *e, int stall))
{
	atomic_set(&e->stalled, stall);
	smp_mb(); /* pairs with smp_mb() in ocq_unstall() */
	if (ready(e, stall)) {
		atomic_set(&e->stalled, OCQ_NO_STALL);
		return true;
	}
	return false;
}

/*
 * A consumer of @unit made progress: wake the CQ run if it waits for room
 * in @unit, or for any domain (parked, or holding a completion back until
 * the domains are idle).
 */
static void ocq_unstall(struct ocq_engine *e, unsigned int unit)
{
	int s;

	smp_mb(); /* pairs with smp_mb() in ocq_stall() */
	s = atomic_read(&e->stalled);
	if ((s == (int)unit || s == OCQ_STALL_ANY) &&
	    atomic_cmpxchg(&e->stalled, s, OCQ_NO_STALL) == s)
		ocq_kick(e, OCQ_UNIT_CQ);
}

/*
 * A serial host (&ocq_engine_ops.serial) runs the units one after another
 * on one CPU: a run of the CQ unit that is queued waits for the domain run
 * under way to end.  So that a completion of another flow waits for
 * IB_OCQ_HOL_DONES done() calls of a busy domain there too, not for its
 * whole budget, a domain run lets a queued CQ run go first: it stops and
 * requeues itself behind it.  A CQ unit held for the host's timer is not
 * queued.
 */
static bool ocq_cq_goes_first(struct ocq_engine *e)
{
	return e->ops->serial && (atomic_read(&e->units[OCQ_UNIT_CQ].gate) &
				  (OCQ_RUN | OCQ_TIMER)) == OCQ_RUN;
}

/*
 * Whether completions handed on are still waiting in a flow domain or the
 * reorder ring.  Only the CQ run asks; it owns what it compares with.  In
 * flow mode it looks only at the domains it handed completions to since it
 * last saw them idle: a domain that dispatched all it was handed stays
 * idle until the CQ run hands it more.
 */
static bool ocq_domains_busy(struct ocq_engine *e)
{
	u64 maybe;

	if (e->mode == IB_OCQ_PARALLEL)
		/* pairs with smp_store_release() in ocq_commit_drain() */
		return e->produced != smp_load_acquire(&e->committed);
	for (maybe = e->maybe_busy; maybe; maybe &= maybe - 1) {
		unsigned int d = __ffs64(maybe);
		/* pairs with smp_store_release() in ocq_flow_drain() */
		u32 popped = smp_load_acquire(&e->units[1 + d].popped);

		if (e->fqueues[d].pushed != popped)
			return true;
		e->maybe_busy &= ~BIT_ULL(d);
	}
	return false;
}

static bool ocq_domains_idle(struct ocq_engine *e, int unused)
{
	return !ocq_domains_busy(e);
}

/* --- IB_OCQ_STRICT: the CQ run dispatches itself --- */

/*
 * Dispatch the rest of the batch in CQ order, stopping at a completion
 * boundary when a done() paused the OCQ or it is torn down.  The position
 * and the count live in registers across the done() calls, which may not
 * touch the CQ run's state (a busy poll from done() gets -EBUSY).
 */
static __always_inline enum ocq_step __ocq_strict_deliver(struct ocq_engine *e,
							  bool by_wc)
{
	struct ocq_unit *u = &e->units[OCQ_UNIT_CQ];
	struct ib_wc *wc = &e->wcs[e->wc_pos], *end = &e->wcs[e->wc_cnt];
	enum ocq_step step = OCQ_MORE;
	atomic_t *gate = &u->gate;
	unsigned int n;

	for (; wc < end; wc++) {
		if (atomic_read(gate) & (OCQ_PAUSED | OCQ_DEAD)) {
			step = OCQ_WAIT;
			break;
		}
		ocq_done(e, wc, by_wc);
	}
	n = wc - &e->wcs[e->wc_pos];
	WRITE_ONCE(u->completions, u->completions + n);
	e->wc_pos += n;
	return step;
}

static enum ocq_step ocq_strict_deliver(struct ocq_engine *e)
{
	return __ocq_strict_deliver(e, false);
}

static enum ocq_step ocq_strict_deliver_wc(struct ocq_engine *e)
{
	return __ocq_strict_deliver(e, true);
}

/* --- IB_OCQ_FLOW: the CQ run routes, one run per flow dispatches --- */

/*
 * The domain of a completion's flow.  hash_32(key, 32) is a multiply: the
 * product's low k bits depend only on the key's low k bits (bit 0 is its
 * parity), so taking it modulo nr_domains would put keys that share their
 * low bits, such as the QP numbers of a device's loopback receivers (one
 * parity) or aligned pointers, in a few domains.  reciprocal_scale() takes
 * the high, well-mixed bits instead.
 */
static inline unsigned int ocq_flow_of(struct ocq_engine *e,
				       const struct ib_wc *wc)
{
	u32 key;

	/* an unposted completion reaches here only without a flow_key */
	if (e->flow_key)
		key = e->flow_key(e->cq, wc);
	else
		key = wc->qp ? wc->qp->qp_num : 0;
	return 1 + reciprocal_scale(hash_32(key, 32), e->nr_domains);
}

/*
 * Whether the pool has a free slot for the CQ run: of its own, or freed by
 * the domains since it last looked, which it then takes whole.  The xchg
 * pairs with the cmpxchg of ocq_flow_return(): the slots' last reader,
 * done(), is done with them.  The plain look first spares the RMW while
 * the domains hold every slot (a stall's repeated look).
 */
static bool ocq_pool_has_room(struct ocq_engine *e, int unused)
{
	if (e->pool != OCQ_NIL)
		return true;
	if (atomic_read(&e->returned) == (int)OCQ_NIL)
		return false;
	e->pool = atomic_xchg(&e->returned, OCQ_NIL);
	return true;
}

/*
 * Kick the domains the CQ run handed completions to (@mask, which it
 * clears).  With several, one full barrier instead of an RMW each: a
 * domain whose gate then shows OCQ_KICK has a pass yet to begin, whose
 * fully ordered start (ocq_pass_begin()) sees every link made before the
 * barrier, so it needs no kick.
 */
static void ocq_kick_mask(struct ocq_engine *e, u64 *mask)
{
	bool many = *mask & (*mask - 1);

	if (many)
		smp_mb(); /* pairs with the fetch_andnot of ocq_pass_begin() */
	while (*mask) {
		unsigned int bit = __ffs64(*mask);

		*mask &= ~BIT_ULL(bit);
		if (many && (atomic_read(&e->units[1 + bit].gate) & OCQ_KICK))
			continue;
		ocq_kick(e, 1 + bit);
	}
}

/*
 * With a flow_key, an unposted completion may belong to a flow other than
 * its QP's earlier completions: it is dispatched here, by the CQ run, once
 * every domain has dispatched all it was handed.  Rings are emptied only
 * after done() returned, so no done() runs meanwhile.  Return false if the
 * run must wait for the domains.
 */
static bool ocq_flow_barrier(struct ocq_engine *e, struct ib_wc *wc)
{
	if (ocq_domains_busy(e) &&
	    !ocq_stall(e, OCQ_STALL_ANY, ocq_domains_idle))
		return false;
	ocq_dispatch(e, &e->units[OCQ_UNIT_CQ], wc, e->dispatch);
	return true;
}

/*
 * Hand @wc to its flow's queue; false if the run must wait for room.  The
 * pool is shared: the run waits only when the domains together hold a
 * CQ's worth, and then for any of them to free a slot.
 */
static bool ocq_flow_route(struct ocq_engine *e, struct ib_wc *wc, u64 *touched)
{
	unsigned int d = ocq_flow_of(e, wc) - 1;
	struct ocq_fqueue *q = &e->fqueues[d];
	struct ocq_fslot *slot;
	u32 idx;

	if (!ocq_pool_has_room(e, 0)) {
		ocq_kick_mask(e, touched);
		if (!ocq_stall(e, OCQ_STALL_ANY, ocq_pool_has_room)) {
			WRITE_ONCE(e->stalls, e->stalls + 1);
			return false;
		}
	}
	idx = e->pool;
	slot = &e->fslots[idx];
	e->pool = slot->next;
	slot->wc = *wc;
	slot->next = OCQ_NIL;
	/* pairs with smp_load_acquire() in ocq_flow_drain() */
	smp_store_release(&e->fslots[q->tail].next, idx);
	q->tail = idx;
	q->pushed++;
	e->maybe_busy |= BIT_ULL(d);
	*touched |= BIT_ULL(d);
	return true;
}

/*
 * No second hop when nothing could overlap: a short batch of one flow,
 * taken while every domain is idle, is dispatched by the CQ run itself.
 * An empty ring means that the flow's done() calls have all returned
 * (rings are emptied only after done()), and only the CQ run fills a ring,
 * so none of them runs meanwhile and the flow's next completion is handed
 * on after these.  Another flow's completion that arrives meanwhile waits
 * in the CQ for at most IB_OCQ_HOL_DONES done() calls, as it would behind
 * a busy domain.
 */
static bool ocq_flow_inline(struct ocq_engine *e)
{
	unsigned int i, unit = 0;

	if (e->wc_cnt - e->wc_pos > IB_OCQ_HOL_DONES || ocq_domains_busy(e))
		return false;
	for (i = e->wc_pos; i < e->wc_cnt; i++) {
		const struct ib_wc *wc = &e->wcs[i];
		unsigned int d;

		/* ocq_flow_barrier() would dispatch it here: domains are idle */
		if (e->flow_key && ocq_wc_unposted(e, wc))
			continue;
		d = ocq_flow_of(e, wc);
		if (unit && d != unit)
			return false;
		unit = d;
	}
	return true;
}

static enum ocq_step ocq_flow_deliver(struct ocq_engine *e)
{
	unsigned int first = e->wc_pos;
	u64 touched = 0;
	enum ocq_step step = OCQ_MORE;

	if (first < e->wc_cnt && ocq_flow_inline(e)) {
		step = e->dispatch ? ocq_strict_deliver_wc(e) :
				     ocq_strict_deliver(e);
		WRITE_ONCE(e->inlined, e->inlined + e->wc_pos - first);
		return step;
	}
	while (e->wc_pos < e->wc_cnt) {
		struct ib_wc *wc = &e->wcs[e->wc_pos];
		bool done;

		if (ocq_stopped(e, OCQ_UNIT_CQ)) {
			step = OCQ_WAIT;
			break;
		}
		if (e->flow_key && ocq_wc_unposted(e, wc)) {
			ocq_kick_mask(e, &touched);
			done = ocq_flow_barrier(e, wc);
		} else {
			done = ocq_flow_route(e, wc, &touched);
		}
		if (!done) {
			step = OCQ_WAIT;
			break;
		}
		e->wc_pos++;
	}
	ocq_kick_mask(e, &touched);
	return step;
}

/* Slots a domain freed, chained through their @next, not given back yet. */
struct ocq_freed {
	u32 first;
	u32 last;
};

static void ocq_freed_add(struct ocq_engine *e, struct ocq_freed *f, u32 idx)
{
	e->fslots[idx].next = f->first;
	if (f->first == OCQ_NIL)
		f->last = idx;
	f->first = idx;
}

/*
 * Give the slots a domain freed back to the CQ run, in one RMW.  The fully
 * ordered cmpxchg pairs with the xchg of ocq_pool_has_room(): done() read
 * the slots before the CQ run fills them again.
 */
static void ocq_flow_return(struct ocq_engine *e, struct ocq_freed *f)
{
	int old = atomic_read(&e->returned);

	if (f->first == OCQ_NIL)
		return;
	do {
		e->fslots[f->last].next = old;
	} while (!atomic_try_cmpxchg(&e->returned, &old, f->first));
	f->first = OCQ_NIL;
}

/*
 * Whether the CQ run may wait for this domain: a plain look, between two
 * done() calls.  A wait it misses is seen IB_OCQ_HOL_DONES done() calls
 * later, and at the end of the pass with a full barrier (ocq_unstall()).
 */
static bool ocq_cq_waits(struct ocq_engine *e)
{
	return atomic_read(&e->stalled) != OCQ_NO_STALL;
}

/*
 * Dispatch up to @left completions of a flow domain's queue, freeing the
 * slots as it goes.  Every IB_OCQ_HOL_DONES of them, if the CQ run waits
 * (for this domain, for any, or for room), give the freed slots back and
 * wake it: another flow's completion may be waiting in the unarmed CQ
 * behind this backlog.
 */
static __always_inline unsigned int __ocq_flow_drain(struct ocq_engine *e,
						     unsigned int unit,
						     unsigned int left,
						     bool by_wc)
{
	struct ocq_freed freed = { .first = OCQ_NIL };
	struct ocq_unit *u = &e->units[unit];
	u32 stub = u->stub, next;
	unsigned int n = 0;

	while (n < left && !(atomic_read(&u->gate) & OCQ_DEAD)) {
		/* pairs with smp_store_release() in ocq_flow_route() */
		next = smp_load_acquire(&e->fslots[stub].next);
		if (next == OCQ_NIL)
			break;
		ocq_done(e, &e->fslots[next].wc, by_wc);
		ocq_freed_add(e, &freed, stub);
		stub = next;
		/* done() returned: pairs with ocq_domains_busy()'s acquire */
		smp_store_release(&u->popped, u->popped + 1);
		if (!(++n % IB_OCQ_HOL_DONES) && ocq_cq_waits(e)) {
			ocq_flow_return(e, &freed);
			ocq_unstall(e, unit);
			if (ocq_cq_goes_first(e))
				break;
		}
	}
	u->stub = stub;
	WRITE_ONCE(u->completions, u->completions + n);
	ocq_flow_return(e, &freed);
	return n;
}

static unsigned int ocq_flow_drain(struct ocq_engine *e, unsigned int unit,
				   unsigned int left)
{
	if (unlikely(e->dispatch))
		return __ocq_flow_drain(e, unit, left, true);
	return __ocq_flow_drain(e, unit, left, false);
}

/* --- IB_OCQ_PARALLEL: workers process, the commit unit commits in order --- */

static unsigned int ocq_commit_unit(struct ocq_engine *e)
{
	return e->nr_domains + 1;
}

static bool ocq_reorder_has_room(struct ocq_engine *e, int unit)
{
	/* pairs with smp_store_release() in ocq_commit_drain() */
	return e->produced - smp_load_acquire(&e->committed) <= e->ring_mask;
}

/*
 * @n slots were published: kick up to @n idle workers, so that a slot
 * published behind a slow process() is taken by another worker.  A busy
 * worker claims slots until none is left before it ends its run; if every
 * worker is busy, one is kicked so that it looks again before it ends.
 */
static void ocq_kick_workers(struct ocq_engine *e, unsigned int n)
{
	unsigned int i, kicked = 0;

	for (i = 1; i <= e->nr_domains && kicked < n; i++) {
		if (atomic_read(&e->units[i].gate) & OCQ_RUN)
			continue;
		ocq_kick(e, i);
		kicked++;
	}
	if (n && !kicked)
		ocq_kick(e, 1);
}

static enum ocq_step ocq_parallel_deliver(struct ocq_engine *e)
{
	unsigned int unit = ocq_commit_unit(e), n = 0;
	enum ocq_step step = OCQ_MORE;

	while (e->wc_pos < e->wc_cnt) {
		struct ocq_slot *slot;

		if (ocq_stopped(e, OCQ_UNIT_CQ)) {
			step = OCQ_WAIT;
			break;
		}
		if (!ocq_reorder_has_room(e, unit)) {
			ocq_kick_workers(e, n);
			n = 0;
			if (ocq_stall(e, unit, ocq_reorder_has_room))
				continue;
			WRITE_ONCE(e->stalls, e->stalls + 1);
			step = OCQ_WAIT;
			break;
		}
		slot = &e->slots[e->produced & e->ring_mask];
		slot->wc = e->wcs[e->wc_pos++];
		WRITE_ONCE(slot->processed, 0);
		/* pairs with smp_load_acquire() in ocq_claim() and commit */
		smp_store_release(&e->produced, e->produced + 1);
		n++;
	}
	ocq_kick_workers(e, n);
	return step;
}

/*
 * Claim published slots for processing, up to @max: a worker's share of
 * what is left (the others take the rest), so that one claim serves a
 * batch under load and a lone slot behind a slow process() is left to
 * another worker.  Return how many, from *@idx on; 0 if there is none.
 */
static unsigned int ocq_claim(struct ocq_engine *e, u32 *idx, unsigned int max)
{
	int c = atomic_read(&e->claimed);
	unsigned int k;
	u32 produced;
	s32 left;

	do {
		/*
		 * @c may be another worker's claim, made after it saw a newer
		 * @produced than this worker has: the kick of that publication
		 * went to that worker, which may be in a long process(), so
		 * this worker must see at least that @produced.  Pairs with
		 * the fully ordered cmpxchg below, in that worker, whose
		 * claim this read of @c (or the failed cmpxchg) returned.
		 */
		smp_rmb();
		/* pairs with smp_store_release() in ocq_parallel_deliver() */
		produced = smp_load_acquire(&e->produced);
		/*
		 * Both only grow and @claimed never passes @produced: only a
		 * slot strictly below @produced was published.
		 */
		left = produced - (u32)c;
		if (left <= 0)
			return 0;
		k = clamp_t(unsigned int, left / e->nr_domains, 1, max);
	} while (!atomic_try_cmpxchg(&e->claimed, &c, c + k));
	*idx = c;
	return k;
}

/*
 * Process claimed slots; after each claim's batch, kick the commit unit
 * once (every slot of the batch is marked processed by then).
 */
static unsigned int ocq_worker_drain(struct ocq_engine *e, unsigned int unit,
				     unsigned int left)
{
	unsigned int n = 0, k;
	u32 idx;

	while (n < left && !(atomic_read(&e->units[unit].gate) & OCQ_DEAD)) {
		k = ocq_claim(e, &idx, min(left - n, OCQ_CLAIM_MAX));
		if (!k)
			break;
		for (n += k; k; k--, idx++) {
			struct ocq_slot *slot = &e->slots[idx & e->ring_mask];

			if (!ocq_wc_unposted(e, &slot->wc))
				e->process(e->cq, &slot->wc);
			/* pairs with smp_load_acquire() in ocq_commit_drain() */
			smp_store_release(&slot->processed, 1);
		}
		ocq_kick(e, ocq_commit_unit(e));
	}
	return n;
}

static __always_inline unsigned int __ocq_commit_drain(struct ocq_engine *e,
						       unsigned int unit,
						       unsigned int left,
						       bool by_wc)
{
	struct ocq_unit *u = &e->units[unit];
	unsigned int n = 0;

	while (n < left && !(atomic_read(&u->gate) & OCQ_DEAD)) {
		struct ocq_slot *slot = &e->slots[e->committed & e->ring_mask];

		/* pairs with smp_store_release() in ocq_parallel_deliver() */
		if (e->committed == smp_load_acquire(&e->produced))
			break;
		/* pairs with smp_store_release() in ocq_worker_drain() */
		if (!smp_load_acquire(&slot->processed))
			break;
		ocq_dispatch(e, u, &slot->wc, by_wc);
		/* the slot is reused only after done() returned */
		smp_store_release(&e->committed, e->committed + 1);
		if (!(++n % IB_OCQ_HOL_DONES) && ocq_cq_waits(e)) {
			ocq_unstall(e, unit);
			if (ocq_cq_goes_first(e))
				break;
		}
	}
	return n;
}

static unsigned int ocq_commit_drain(struct ocq_engine *e, unsigned int unit,
				     unsigned int left)
{
	if (unlikely(e->dispatch))
		return __ocq_commit_drain(e, unit, left, true);
	return __ocq_commit_drain(e, unit, left, false);
}

/* --- the CQ run --- */

static enum ocq_step ocq_deliver(struct ocq_engine *e)
{
	switch ((unsigned int)e->mode) {
	case IB_OCQ_FLOW:
		return ocq_flow_deliver(e);
	case IB_OCQ_PARALLEL:
		return ocq_parallel_deliver(e);
	case OCQ_STRICT_BY_WC:
		return ocq_strict_deliver_wc(e);
	default:
		return ocq_strict_deliver(e);
	}
}

/*
 * The gate with a new pause set: OCQ_PAUSED, and the next generation, so
 * that a lease tick that saw an earlier pause does not take this one for
 * it (ocq_engine_lease()).
 */
static int ocq_pause_set(int old)
{
	unsigned int gen = (unsigned int)old + OCQ_PAUSE_GEN_ONE;

	return (old & ~OCQ_PAUSE_GEN) | (gen & OCQ_PAUSE_GEN) | OCQ_PAUSED;
}

/* Paused: record it, and let the host end the pause after its limit. */
static void ocq_paused(struct ocq_engine *e, bool postponed)
{
	atomic_long_inc(&e->pauses);
	trace_ocq_pause(e->cq, postponed);
	if (e->ops->lease)
		e->ops->lease(e);
}

/*
 * Postponed arm, drained without a resume pending: pause instead of arming,
 * unless a kick or a resume came in meanwhile (then the run looks again, in
 * a fresh pass).
 */
static void ocq_postpone(struct ocq_engine *e)
{
	atomic_t *gate = &e->units[OCQ_UNIT_CQ].gate;
	int old;

	old = atomic_read(gate);
	do {
		if (old & (OCQ_KICK | OCQ_RESUMED | OCQ_DEAD))
			return;
	} while (!atomic_try_cmpxchg(gate, &old, ocq_pause_set(old)));
	ocq_paused(e, true);
}

/*
 * The CQ is drained but domains still hold work: end the run unarmed and
 * let the next domain that makes progress kick it, so that what their
 * done() calls bring about is polled in batches instead of raising an event
 * each.  Return true if parked; false if they went idle meanwhile and the
 * run must go on (and arm).
 */
static bool ocq_park(struct ocq_engine *e)
{
	if (ocq_stall(e, OCQ_STALL_ANY, ocq_domains_idle))
		return false;
	WRITE_ONCE(e->parks, e->parks + 1);
	return true;
}

/*
 * Deferred re-arm, the CQ drained: whether the run leaves it unarmed and
 * polls again after the host's delay.  If at least e->defer_min
 * completions were taken since the last confirmed arm or deferral (@got,
 * e->defer_got with the last poll's), it does (a poll that finds
 * completions starts the count of empty runs again, ocq_poll()); if
 * fewer, but some, it arms at once: with %IB_OCQ_DEFER_DIM a single
 * completion per event is the load at which a deferral would only add
 * latency.  A run that found nothing since spends one of e->defer_polls.
 * Once they are spent every run arms until an arm is confirmed, so that a
 * provider that fails the arm is backed off from as without the deferral.
 */
static bool ocq_defer_due(struct ocq_engine *e, unsigned int got)
{
	if (got >= e->defer_min) {
		/* a batch again after a deferral of one: that deferral paid */
		if (e->defer_chain)
			e->defer_paid = true;
		return true;
	}
	if (got) {
		/* ocq_defer_adapt() halves a grown threshold after enough */
		if (e->defer_min > OCQ_DEFER_DIM_MIN)
			e->defer_short++;
		return false;
	}
	if (e->defer_idle < e->defer_polls)
		e->defer_idle++;
	return e->defer_idle < e->defer_polls;
}

/*
 * %IB_OCQ_DEFER_DIM, the CQ armed: if the arm had been deferred since the
 * last arm, adapt the threshold.  A deferral that paid (a later run took
 * a batch of the threshold's size again: the timer's polls replace events
 * under load) brings it back to two; one that did not doubles it, up to
 * OCQ_BATCH: at one request in flight a run may take a request's two
 * completions, and the timer's runs find a straggler at most (the next
 * send's completion) while the reply waits for them: a deferral there
 * adds latency and saves an event or none.  A run that takes OCQ_BATCH
 * completions always defers.
 */
static void ocq_defer_adapt(struct ocq_engine *e)
{
	bool chain = e->defer_chain, paid = e->defer_paid;

	e->defer_chain = 0;
	e->defer_paid = false;
	if (!(e->flags & IB_OCQ_DEFER_DIM))
		return;
	if (chain) {
		e->defer_min = paid ? OCQ_DEFER_DIM_MIN :
				      min(e->defer_min * 2, OCQ_BATCH);
		e->defer_short = 0;
	} else if (e->defer_short >= OCQ_DEFER_DIM_DECAY) {
		/*
		 * OCQ_DEFER_DIM_DECAY checks found too few since it moved:
		 * a load whose runs take a few completions each tries the
		 * deferral again, instead of never once the threshold grew
		 */
		e->defer_min /= 2;
		e->defer_short = 0;
	}
}

/* What one ocq_poll() took and asked of the provider. */
static void ocq_poll_account(struct ocq_engine *e, int n,
			     const struct ocq_pn_count *cnt)
{
	WRITE_ONCE(e->polls, e->polls + cnt->polls);
	WRITE_ONCE(e->arms, e->arms + cnt->arms);
	WRITE_ONCE(e->repolls, e->repolls + cnt->repolls);
	e->wc_pos = 0;
	e->wc_cnt = max(n, 0);
	e->defer_got += e->wc_cnt;
	WRITE_ONCE(e->taken, e->taken + e->wc_cnt);
}

/*
 * Take the next batch from the CQ into e->wcs, and arm the CQ once it is
 * drained, unless the arm is postponed (no resume taken by this pass), the
 * domains hold work, the arm is deferred (e->defer_got: completions
 * taken since the last confirmed arm or deferral), or @suspend: a busy
 * poll never arms, whether or not it took completions (NAPI's rule: the
 * suspension lasts while the ULP polls; the timer's run arms once it has
 * stopped).  Return what the poll came to.
 */
static enum ocq_step ocq_poll(struct ocq_engine *e, bool resumed, bool suspend)
{
	struct ocq_pn_count cnt = { .polls = 1 };
	enum ib_pn_status st = IB_PN_MORE;
	bool postpone = false, busy = false, defer = false;
	int n;

	/*
	 * Every step begins with a plain poll.  A full batch leaves nothing
	 * to decide (the CQ is not drained); a short one is where the arm is
	 * postponed, parked, deferred, suspended or made.
	 */
	n = ib_poll_cq(e->cq, OCQ_BATCH, e->wcs);
	if (likely(n == OCQ_BATCH) || n < 0)
		goto out;
	st = IB_PN_EMPTY_ARMED;
	postpone = (e->flags & IB_OCQ_POSTPONE_ARM) && !resumed;
	/* a busy poll suspends even while domains hold work: see below */
	busy = !postpone && !suspend && ocq_domains_busy(e);
	defer = !postpone && !busy && (e->defer_polls || suspend);
	if (!postpone && !busy && !defer) {
		/* drained: this poll is the one the arm follows */
		n = ocq_notify_polled(e->cq, OCQ_BATCH, e->wcs, e->policy, &st,
				      &cnt, n);
		goto out;
	}
	/*
	 * A busy poll, drained or empty, defers: the suspension goes on
	 * (ocq_suspend()).  A run with too few completions to defer
	 * (e->defer_min) hands this poll's on as a batch of their own, and
	 * the next poll, which finds the count still short, arms.
	 */
	if (defer && !suspend) {
		if (n > 0 && e->defer_got + n < e->defer_min)
			st = IB_PN_MORE;
		else
			defer = ocq_defer_due(e, e->defer_got + n);
	}
	/* a deferred run's last empty poll: poll again and arm */
	if (!postpone && !busy && !defer)
		n = __ib_poll_and_notify(e->cq, OCQ_BATCH, e->wcs, e->policy,
					 &st, &cnt);
out:
	ocq_poll_account(e, n, &cnt);
	trace_ocq_poll(e->cq, n,
		       n >= 0 &&
			       (st == IB_PN_ARMED || st == IB_PN_EMPTY_ARMED) &&
			       !postpone && !busy && !defer);
	if (n < 0) {
		/* -EAGAIN: the provider won't arm an empty CQ; else it failed */
		if (n != -EAGAIN)
			WRITE_ONCE(e->provider_errors, e->provider_errors + 1);
		e->backoffs++;
		return OCQ_BACKOFF;
	}
	e->backoffs = 0;
	/*
	 * A completion came: the run's last arm has fired, or will for it;
	 * and a deferred re-arm counts its empty runs from here.
	 */
	if (n > 0) {
		e->armed = false;
		e->defer_idle = 0;
	}
	if (st == IB_PN_MORE || st == IB_PN_REPOLL)
		return OCQ_MORE;
	if (defer)
		return OCQ_DEFER;
	/*
	 * Postponed arm: a pass that a callback started after a resume's
	 * arm, and that found nothing, must not pause: the CQ is still armed
	 * (the verbs contract: the handler runs once it is not empty), and a
	 * pause would turn that event into a kick nothing runs.
	 */
	if (postpone)
		return e->armed ? OCQ_ARMED : OCQ_POSTPONE;
	if (busy)
		return OCQ_PARK;
	e->armed = true;
	e->defer_idle = 0;
	/* what the arming poll took counts toward the next deferral check */
	e->defer_got = e->wc_cnt;
	ocq_defer_adapt(e);
	return OCQ_ARMED;
}

/*
 * One pass of the CQ run: hand the batch on, then act on what the poll
 * that took it came to, and poll again; until armed, stopped or spent.
 */
static enum ocq_step ocq_cq_pass(struct ocq_engine *e, bool resumed,
				 bool suspend, unsigned int budget,
				 unsigned int *taken)
{
	enum ocq_step polled = OCQ_MORE;

	for (;;) {
		if (ocq_stopped(e, OCQ_UNIT_CQ) ||
		    (e->wc_pos < e->wc_cnt && ocq_deliver(e) != OCQ_MORE))
			return OCQ_WAIT;
		switch (polled) {
		default:
			break;
		case OCQ_ARMED:
			return OCQ_ARMED;
		case OCQ_POSTPONE:
			/*
			 * Pause only once the last batch is handed on.  If a
			 * kick or a resume refused the pause, ocq_release()
			 * sees the kick and begins a fresh pass.
			 */
			ocq_postpone(e);
			return OCQ_WAIT;
		case OCQ_DEFER:
			/*
			 * The batch just handed on keeps a domain busy: park
			 * instead, so that the domain's progress, not the
			 * timer, starts the next run (the head-of-line bound).
			 * Not a busy poll: a park would let that run arm the
			 * CQ under the ULP's polls; the next busy poll, or the
			 * timer's run, polls the CQ instead.
			 */
			if (suspend || !ocq_domains_busy(e))
				return OCQ_DEFER;
			fallthrough;
		case OCQ_PARK:
			if (ocq_park(e))
				return OCQ_WAIT;
			break;
		}
		if (*taken >= budget)
			return OCQ_YIELD;
		polled = ocq_poll(e, resumed, suspend);
		if (polled == OCQ_BACKOFF)
			return OCQ_BACKOFF;
		*taken += e->wc_cnt;
	}
}

/*
 * Account a pass that is about to end the run or make it look again: @taken
 * completions so far in the run, @pass of them in this pass.
 */
static void ocq_cq_account(struct ocq_engine *e, unsigned int taken,
			   unsigned int pass, bool watchdog, bool *counted)
{
	if (!*counted && !taken)
		WRITE_ONCE(e->empty_runs, e->empty_runs + 1);
	*counted = true;
	if (taken > e->max_batch)
		WRITE_ONCE(e->max_batch, taken);
	if (watchdog && pass) {
		WRITE_ONCE(e->rescues, e->rescues + pass);
		trace_ocq_rescue(e->cq, pass);
	}
}

/* @t as the word of struct ocq_engine @tune */
static int ocq_tune_word(const struct ocq_tune *t)
{
	return t->defer_polls | (t->dim ? OCQ_TUNE_DIM : 0) |
	       (t->suspend ? OCQ_TUNE_SUSPEND : 0);
}

/*
 * A holder of the CQ unit takes on a retune (ocq_engine_tune()) as a pass
 * begins, before it polls: the fields it sets are the CQ run's own, so
 * that a run never sees them change under it.  A retune of the deferral or
 * of DIM starts the deferral's state afresh, as at init; one of the
 * suspension alone leaves it.  A deferral or a suspension under way when
 * the retune came ends as it began: the timer's run is a holder, and
 * decides with the new settings.
 */
static void ocq_tune_apply(struct ocq_engine *e, int tune)
{
	int changed = tune ^ e->tune_now;

	e->tune_now = tune;
	if (!(changed & (OCQ_TUNE_POLLS | OCQ_TUNE_DIM)))
		return;
	e->defer_polls = tune & OCQ_TUNE_POLLS;
	if (tune & OCQ_TUNE_DIM)
		e->flags |= IB_OCQ_DEFER_DIM;
	else
		e->flags &= ~IB_OCQ_DEFER_DIM;
	e->defer_min = tune & OCQ_TUNE_DIM ? OCQ_DEFER_DIM_MIN : 1;
	e->defer_idle = 0;
	e->defer_short = 0;
	e->defer_chain = 0;
	e->defer_paid = false;
}

/*
 * The passes of one hold of the CQ unit, a run's or a busy poll's, until it
 * releases the unit (OCQ_WAIT) or must go on later (OCQ_YIELD, OCQ_BACKOFF,
 * OCQ_DEFER): at most about @budget completions.  A pass takes
 * OCQ_RESUMED as it begins: the resume is then its own, and one that lands
 * later sets OCQ_KICK and OCQ_RESUMED again for the next pass.  Only this
 * clears OCQ_RESUMED; a pass that ends without arming gives its resume
 * back, so that the run that goes on arms.  @suspend: a busy poll's hold,
 * which suspends rather than arms, and is not counted as a run.
 */
static enum ocq_step ocq_cq_passes(struct ocq_engine *e, bool suspend,
				   unsigned int budget, unsigned int *taken)
{
	atomic_t *gate = &e->units[OCQ_UNIT_CQ].gate;
	bool watchdog = false, counted = suspend, resumed;
	enum ocq_step step;
	unsigned int before;
	int state, tune;

	/*
	 * A hold that begins with the CQ armed (an event's) counts afresh;
	 * one after a park or a yield goes on with the count of the last.
	 */
	if (e->armed)
		e->defer_got = 0;
	do {
		state = ocq_pass_begin(gate, OCQ_WATCHDOG | OCQ_RESUMED);
		resumed = state & OCQ_RESUMED;
		/* after the pass's begin, which sees what the tune's kick saw */
		tune = atomic_read(&e->tune);
		if (unlikely(tune != e->tune_now))
			ocq_tune_apply(e, tune);
		/*
		 * A run that a kick other than the domain's started finds a
		 * stall or park of an earlier run still set: this pass looks
		 * at everything again, and the watchdog must not keep waiting.
		 */
		atomic_set(&e->stalled, OCQ_NO_STALL);
		watchdog |= state & OCQ_WATCHDOG;
		before = *taken;
		step = ocq_cq_pass(e, resumed, suspend, budget, taken);
		if (resumed && step != OCQ_ARMED)
			atomic_or(OCQ_RESUMED, gate);
		ocq_cq_account(e, *taken, *taken - before, watchdog, &counted);
		if (step == OCQ_YIELD || step == OCQ_BACKOFF ||
		    step == OCQ_DEFER)
			return step;
		watchdog = false;
	} while (ocq_release(gate));
	return OCQ_WAIT;
}

static unsigned int ocq_cq_run(struct ocq_engine *e)
{
	unsigned int taken = 0;
	enum ocq_step step;

	WRITE_ONCE(e->runs, e->runs + 1);
	trace_ocq_run(e->cq, OCQ_UNIT_CQ);
	step = ocq_cq_passes(e, false, e->budget, &taken);
	if (step == OCQ_YIELD || step == OCQ_BACKOFF)
		ocq_yield(e, OCQ_UNIT_CQ, step == OCQ_BACKOFF);
	else if (step == OCQ_DEFER)
		ocq_defer(e);
	return taken;
}

/*
 * A run of a flow domain, a worker or the commit unit: the completions it
 * dispatched or processed.  It yields when its budget is spent and, on a
 * serial host, when the CQ run it woke is queued behind it.
 */
static unsigned int ocq_domain_run(struct ocq_engine *e, unsigned int unit)
{
	struct ocq_unit *u = &e->units[unit];
	bool commit = e->mode == IB_OCQ_PARALLEL && unit == ocq_commit_unit(e);
	unsigned int n = 0, got;

	WRITE_ONCE(u->runs, u->runs + 1);
	trace_ocq_run(e->cq, unit);
	do {
		ocq_pass_begin(&u->gate, 0);
		if (e->mode == IB_OCQ_FLOW)
			got = ocq_flow_drain(e, unit, e->budget - n);
		else if (commit)
			got = ocq_commit_drain(e, unit, e->budget - n);
		else
			got = ocq_worker_drain(e, unit, e->budget - n);
		n += got;
		if (got && (e->mode == IB_OCQ_FLOW || commit))
			ocq_unstall(e, unit);
		if (n >= e->budget || (got && ocq_cq_goes_first(e))) {
			ocq_yield(e, unit, false);
			return n;
		}
	} while (ocq_release(&u->gate));
	return n;
}

/**
 * ocq_engine_run - body of a scheduled run
 * @e: the engine
 * @unit: the unit the run was scheduled for
 *
 * Context: the host's work item (process context) or, for
 * %IB_POLL_SOFTIRQ, its irq_poll softirq; never concurrently for one unit.
 * Return: the run's work: the completions it took from the CQ (the CQ
 * unit) or dispatched or processed (the others); an irq_poll host reports
 * it to irq_poll as its poll's work.
 */
unsigned int ocq_engine_run(struct ocq_engine *e, unsigned int unit)
{
	/*
	 * A run queued by a kick that came just before the disable may
	 * begin after the host destroyed the CQ: it touches nothing but its
	 * gate (see ocq_engine_disable()).
	 */
	if (ocq_engine_dead(e, unit))
		return 0;
	if (unit == OCQ_UNIT_CQ)
		return ocq_cq_run(e);
	return ocq_domain_run(e, unit);
}

/**
 * ocq_engine_event - the CQ's completion handler
 * @e: the engine
 *
 * Only kicks the CQ unit: never polls or arms.
 *
 * Context: any context, including hard irq; on several CPUs at once.
 */
void ocq_engine_event(struct ocq_engine *e)
{
	atomic_long_inc(&e->events);
	trace_ocq_event(e->cq);
	ocq_kick(e, OCQ_UNIT_CQ);
}

/**
 * ocq_engine_cq_error - count an asynchronous CQ error
 * @e: the engine
 *
 * Context: any context.
 */
void ocq_engine_cq_error(struct ocq_engine *e)
{
	atomic_long_inc(&e->cq_errors);
}

/**
 * ocq_engine_pause - stop polling and arming
 * @e: the engine
 *
 * The run stops at the next completion boundary; done() calls already
 * started finish.  Completions already handed to a flow domain or a worker
 * are still dispatched.
 *
 * Context: any context, including done().
 */
void ocq_engine_pause(struct ocq_engine *e)
{
	atomic_t *gate = &e->units[OCQ_UNIT_CQ].gate;
	int old;

	old = atomic_read(gate);
	do {
		if (old & OCQ_DEAD)
			return;
	} while (!atomic_try_cmpxchg(gate, &old, ocq_pause_set(old)));
	ocq_paused(e, false);
}

/*
 * Clear OCQ_PAUSED and start a run that arms once drained; with @gen >= 0
 * only while the pause of that generation is in force.  *@old is the gate
 * as last read, and as found when the resume did not happen.
 */
static bool ocq_unpause(struct ocq_engine *e, int *old, int gen)
{
	atomic_t *gate = &e->units[OCQ_UNIT_CQ].gate;
	int val;

	do {
		if (*old & OCQ_DEAD)
			return false;
		if (gen >= 0 &&
		    (!(*old & OCQ_PAUSED) || (*old & OCQ_PAUSE_GEN) != gen))
			return false;
		val = (*old & ~OCQ_PAUSED) | OCQ_RUN | OCQ_KICK | OCQ_RESUMED;
	} while (!atomic_try_cmpxchg(gate, old, val));
	trace_ocq_resume(e->cq);
	if (!(*old & OCQ_RUN))
		e->ops->schedule(e, OCQ_UNIT_CQ);
	return true;
}

/**
 * ocq_engine_resume - process what arrived while paused, and arm
 * @e: the engine
 *
 * Also the explicit "arm now" of %IB_OCQ_POSTPONE_ARM.
 *
 * Context: any context, including done().
 */
void ocq_engine_resume(struct ocq_engine *e)
{
	int old = atomic_read(&e->units[OCQ_UNIT_CQ].gate);

	ocq_unpause(e, &old, -1);
}

/* The lease's look at the gate: remember the pause in force, if any. */
static bool ocq_lease_mark(struct ocq_engine *e, int gate)
{
	e->lease_marked = (gate & (OCQ_PAUSED | OCQ_DEAD)) == OCQ_PAUSED;
	e->lease_mark = gate & OCQ_PAUSE_GEN;
	return e->lease_marked;
}

/**
 * ocq_engine_lease - the pause limit's tick
 * @e: the engine
 *
 * A pause (ib_ocq_pause() or a postponed arm) that lasted a whole tick,
 * with no pause since the previous tick, ends: the engine resumes as if
 * ocq_engine_resume() had been called.  So a pause the ULP never ends, or
 * one that ib_drain_qp() waits behind, lasts two ticks at most.  The tick
 * ends only the pause it saw at the previous tick: the resume is a cmpxchg
 * that checks the pause's generation in the gate word.
 *
 * Context: process context; never concurrently with itself.
 * Return: true while the engine is still paused: tick again later.
 */
bool ocq_engine_lease(struct ocq_engine *e)
{
	int gate = atomic_read(&e->units[OCQ_UNIT_CQ].gate);
	bool ended = false;

	if (e->lease_marked)
		ended = ocq_unpause(e, &gate, e->lease_mark);
	if (ended) {
		e->lease_marked = false;
		WRITE_ONCE(e->lease_resumes, e->lease_resumes + 1);
		return false;
	}
	return ocq_lease_mark(e, gate);
}

/**
 * ocq_engine_timer - the host's timer of a deferral or suspension fired
 * @e: the engine
 *
 * Context: any context.
 * Return: true if the timer took the CQ unit's run: the host must queue
 * it; false if a busy poll took it first, or the timer is stale.
 */
bool ocq_engine_timer(struct ocq_engine *e)
{
	atomic_t *gate = &e->units[OCQ_UNIT_CQ].gate;
	int old = atomic_read(gate);

	/* pairs with the fetch_or of ocq_timer_hold(): see its comment */
	do {
		if (!(old & OCQ_TIMER))
			return false;
	} while (!atomic_try_cmpxchg(gate, &old, old & ~OCQ_TIMER));
	return true;
}

/*
 * Take the CQ unit for a busy poll: when no run holds it, or from the
 * host's timer (OCQ_TIMER).  The fully ordered cmpxchg pairs with the one
 * of ocq_release() or the fetch_or of ocq_timer_hold() that let the last
 * holder go: the busy poll sees its stores.
 */
static bool ocq_busy_take(struct ocq_engine *e)
{
	atomic_t *gate = &e->units[OCQ_UNIT_CQ].gate;
	int old = atomic_read(gate);

	do {
		if (old & (OCQ_PAUSED | OCQ_DEAD))
			return false;
		if ((old & (OCQ_RUN | OCQ_TIMER)) == OCQ_RUN)
			return false;
	} while (!atomic_try_cmpxchg(gate, &old, (old | OCQ_RUN) & ~OCQ_TIMER));
	return true;
}

/**
 * ocq_engine_busy_poll - a CQ run in the ULP's own context
 * @e: the engine, made with &ib_ocq_attr.suspend_usecs
 * @budget: completions to take at most, about (whole batches)
 *
 * Takes the CQ unit as a run would, unless a run holds it, and dispatches
 * what it takes as a run does (in %IB_OCQ_STRICT, done() in the caller).
 * Whether or not it took completions, it never arms the CQ: it leaves the
 * unit to the host's timer (ops->suspend), so that no completion event
 * starts a run while the ULP keeps polling, found work or not (NAPI's
 * rule).  A poll that takes the unit from the timer starts it again; once
 * none has come for the timer's delay, the timer's run polls and arms the
 * CQ.  A CQ still armed from an earlier run stays armed: its event's kick
 * waits for the next busy poll or the timer.  A provider that fails the
 * poll hands the unit to a delayed run (ops->schedule_later), as a run
 * backs off; a pause that lands meanwhile ends the busy poll as it ends a
 * run.
 *
 * Context: the ULP's context, never concurrently with ocq_engine_disable().
 * Return: the completions taken, or -EBUSY if a run held the CQ unit,
 * -EAGAIN if it is paused (or, a misuse, torn down), -EOPNOTSUPP if @e's
 * moderation (as made, or staged by the last ocq_engine_tune()) has no
 * suspension.
 */
int ocq_engine_busy_poll(struct ocq_engine *e, unsigned int budget)
{
	unsigned int taken = 0;
	enum ocq_step step;

	/* the hold below applies it, if it is a retune's */
	if (!(atomic_read(&e->tune) & OCQ_TUNE_SUSPEND))
		return -EOPNOTSUPP;
	if (!ocq_busy_take(e)) {
		if (ocq_stopped(e, OCQ_UNIT_CQ))
			return -EAGAIN;
		atomic_long_inc(&e->contended);
		return -EBUSY;
	}
	WRITE_ONCE(e->busy_polls, e->busy_polls + 1);
	/* after OCQ_WAIT the unit is released: nothing of e's is ours */
	step = ocq_cq_passes(e, true, budget, &taken);
	if (step == OCQ_BACKOFF)
		ocq_yield(e, OCQ_UNIT_CQ, true);
	else if (step == OCQ_YIELD || step == OCQ_DEFER)
		ocq_suspend(e);
	return taken;
}

/**
 * ocq_engine_tune_check - whether ocq_engine_tune() would take @t
 * @e: the engine
 * @t: the moderation
 *
 * Context: any context.
 * Return: 0; -EINVAL for a @t the engine cannot take (more than
 * %IB_OCQ_MAX_DEFER_POLLS, @dim without @defer_polls or with @suspend);
 * -EOPNOTSUPP if the host has no @defer or @suspend op for it.
 */
int ocq_engine_tune_check(const struct ocq_engine *e, const struct ocq_tune *t)
{
	if (t->defer_polls > IB_OCQ_MAX_DEFER_POLLS ||
	    (t->dim && (!t->defer_polls || t->suspend)))
		return -EINVAL;
	if ((t->defer_polls && !e->ops->defer) ||
	    (t->suspend && !e->ops->suspend))
		return -EOPNOTSUPP;
	return 0;
}

/**
 * ocq_engine_tune - retune the deferred re-arm and the busy polls' suspension
 * @e: the engine
 * @t: the moderation from now on
 *
 * Stages @t in one word, which the holder of the CQ unit (a run, the
 * timer's run, or a busy poll) applies as its next pass begins; then kicks
 * the CQ unit, so that a pass comes soon even on an idle CQ (that run finds
 * the CQ empty and arms it, or defers as @t says).  The kick's fully ordered
 * RMW (ocq_gate_kick()) orders the host's stores before it, the delays its
 * ops read, before the run it starts.  Busy polls are allowed from the
 * staging on.
 *
 * Context: any context; the host never calls it twice at once, nor
 * concurrently with or after ocq_engine_disable().
 * Return: 0, or what ocq_engine_tune_check() returns, with nothing staged.
 */
int ocq_engine_tune(struct ocq_engine *e, const struct ocq_tune *t)
{
	int ret = ocq_engine_tune_check(e, t);

	if (ret)
		return ret;
	atomic_set(&e->tune, ocq_tune_word(t));
	ocq_kick(e, OCQ_UNIT_CQ);
	return 0;
}

/**
 * ocq_engine_disable - schedule nothing more
 * @e: the engine
 *
 * Sets OCQ_DEAD on every gate.  A kick that reads a gate afterwards
 * (ocq_engine_event(), a resume, the lease, the watchdog, a domain's)
 * schedules nothing; runs under way end at their next completion
 * boundary without another done() call, and a run that begins afterwards
 * touches nothing but its gate.  A kick that read its gate before may
 * still queue a run later, so the host cancels its units, from the CQ
 * unit on, destroys the CQ (after which its provider calls no handler),
 * and cancels them once more before it frees the engine.  No grace
 * period: the provider's destroy is what bounds the handlers.
 *
 * Context: any context.
 */
void ocq_engine_disable(struct ocq_engine *e)
{
	unsigned int i;

	for (i = 0; i < e->nr_units; i++)
		atomic_or(OCQ_DEAD, &e->units[i].gate);
}

/**
 * ocq_engine_watchdog - the safety net's periodic look
 * @e: the engine
 *
 * When no event came since the last call and no run is active, start a run
 * as if an event had come; what that run finds is counted as rescued.
 *
 * Context: process context; never concurrently with itself.
 */
void ocq_engine_watchdog(struct ocq_engine *e)
{
	atomic_t *gate = &e->units[OCQ_UNIT_CQ].gate;
	long events = atomic_long_read(&e->events);
	int old;

	if (events != e->wd_events) {
		e->wd_events = events;
		return;
	}
	/* a stalled or parked CQ run waits for a domain, not for an event */
	if (atomic_read(&e->stalled) != OCQ_NO_STALL)
		return;
	old = atomic_read(gate);
	do {
		if (old & (OCQ_RUN | OCQ_PAUSED | OCQ_DEAD))
			return;
	} while (!atomic_try_cmpxchg(gate, &old,
				     old | OCQ_RUN | OCQ_KICK | OCQ_WATCHDOG));
	e->ops->schedule(e, OCQ_UNIT_CQ);
}

/**
 * ocq_engine_stats - sum an engine's counters
 * @e: the engine
 * @s: filled in
 *
 * Context: any context; the counters are read without stopping the runs.
 */
void ocq_engine_stats(struct ocq_engine *e, struct ib_ocq_stats *s)
{
	unsigned int i;

	memset(s, 0, sizeof(*s));
	s->events = atomic_long_read(&e->events);
	s->pauses = atomic_long_read(&e->pauses);
	s->cq_errors = atomic_long_read(&e->cq_errors);
	s->runs = READ_ONCE(e->runs);
	s->empty_runs = READ_ONCE(e->empty_runs);
	s->polls = READ_ONCE(e->polls);
	s->arms = READ_ONCE(e->arms);
	s->repolls = READ_ONCE(e->repolls);
	s->rescues = READ_ONCE(e->rescues);
	s->stalls = READ_ONCE(e->stalls);
	s->parks = READ_ONCE(e->parks);
	s->provider_errors = READ_ONCE(e->provider_errors);
	s->lease_resumes = READ_ONCE(e->lease_resumes);
	s->inlined = READ_ONCE(e->inlined);
	s->defers = READ_ONCE(e->defers);
	s->busy_polls = READ_ONCE(e->busy_polls);
	s->suspends = READ_ONCE(e->suspends);
	s->contended = atomic_long_read(&e->contended);
	s->max_batch = READ_ONCE(e->max_batch);
	for (i = 0; i < e->nr_units; i++) {
		struct ocq_unit *u = &e->units[i];

		s->completions += READ_ONCE(u->completions);
		s->yields += READ_ONCE(u->yields);
		if (i != OCQ_UNIT_CQ)
			s->domain_runs += READ_ONCE(u->runs);
	}
}

/**
 * ocq_engine_check_attr - whether @attr is one an ordered CQ accepts
 * @attr: the attributes
 *
 * Context: any context.
 * Return: 0, or -EINVAL.
 */
int ocq_engine_check_attr(const struct ib_ocq_attr *attr)
{
	if ((unsigned int)attr->mode > IB_OCQ_PARALLEL ||
	    !ocq_policy_valid(attr->policy))
		return -EINVAL;
	if (attr->flags & ~(IB_OCQ_POSTPONE_ARM | IB_OCQ_DEFER_DIM))
		return -EINVAL;
	if (attr->mode == IB_OCQ_PARALLEL && !attr->process)
		return -EINVAL;
	if (attr->mode != IB_OCQ_PARALLEL && attr->process)
		return -EINVAL;
	if (attr->mode != IB_OCQ_FLOW && attr->flow_key)
		return -EINVAL;
	if (attr->nr_domains > OCQ_MAX_DOMAINS)
		return -EINVAL;
	if (attr->budget > IB_OCQ_MAX_BUDGET ||
	    attr->pause_ms > IB_OCQ_MAX_PAUSE_MS)
		return -EINVAL;
	if (attr->defer_usecs > IB_OCQ_MAX_DEFER_USECS ||
	    attr->defer_polls > IB_OCQ_MAX_DEFER_POLLS)
		return -EINVAL;
	/* a postponed arm never arms by itself: there is nothing to defer */
	if ((attr->defer_usecs || (attr->flags & IB_OCQ_DEFER_DIM)) &&
	    (attr->flags & IB_OCQ_POSTPONE_ARM))
		return -EINVAL;
	/* the host picks the delay; the engine needs its ceiling */
	if ((attr->flags & IB_OCQ_DEFER_DIM) && !attr->defer_usecs)
		return -EINVAL;
	if (attr->defer_polls && !attr->defer_usecs)
		return -EINVAL;
	if (attr->suspend_usecs > IB_OCQ_MAX_SUSPEND_USECS)
		return -EINVAL;
	/*
	 * a postponed arm never arms by itself, and DIM's count of completions
	 * per deferral does not see what busy polls take
	 */
	if (attr->suspend_usecs &&
	    (attr->flags & (IB_OCQ_POSTPONE_ARM | IB_OCQ_DEFER_DIM)))
		return -EINVAL;
	return 0;
}

static void *ocq_alloc(struct ocq_engine *e, size_t n, size_t size)
{
	if (e->ops->alloc)
		return e->ops->alloc(e, n, size);
	return kvcalloc(n, size, GFP_KERNEL);
}

static void ocq_free(struct ocq_engine *e, void *p)
{
	if (!p)
		return;
	if (e->ops->alloc)
		e->ops->free(e, p);
	else
		kvfree(p);
}

/*
 * The flow domains' queues: a pool of @ring slots and a stub per domain.
 * Domain d's stub is slot d, the rest is the CQ run's free list.
 */
static int ocq_alloc_flow(struct ocq_engine *e, u32 ring)
{
	u32 i, n = ring + e->nr_domains;

	e->fslots = ocq_alloc(e, n, sizeof(*e->fslots));
	e->fqueues = ocq_alloc(e, e->nr_domains, sizeof(*e->fqueues));
	if (!e->fslots || !e->fqueues)
		return -ENOMEM;
	for (i = 0; i < e->nr_domains; i++) {
		e->fslots[i].next = OCQ_NIL;
		e->fqueues[i].tail = i;
		e->units[1 + i].stub = i;
	}
	for (i = e->nr_domains; i < n; i++)
		e->fslots[i].next = i + 1 < n ? i + 1 : OCQ_NIL;
	e->pool = e->nr_domains;
	atomic_set(&e->returned, OCQ_NIL);
	return 0;
}

static int ocq_alloc_units(struct ocq_engine *e, u32 ring)
{
	unsigned int i;

	e->units = ocq_alloc(e, e->nr_units, sizeof(*e->units));
	if (!e->units)
		return -ENOMEM;
	for (i = 0; i < e->nr_units; i++)
		atomic_set(&e->units[i].gate, 0);
	if (e->mode == IB_OCQ_FLOW)
		return ocq_alloc_flow(e, ring);
	if (e->mode == IB_OCQ_PARALLEL) {
		e->slots = ocq_alloc(e, ring, sizeof(*e->slots));
		if (!e->slots)
			return -ENOMEM;
	}
	return 0;
}

/*
 * The slots between the CQ run and the domains or workers: the CQ's size,
 * rounded down to a power of two.  Providers round a CQ up (rxe and mlx5 to
 * 2^k - 1 entries), so its size is between what the ULP asked for and
 * twice that; rounding down keeps the ring within what the ULP asked for.
 * The ring only buffers: when it is full the CQ run waits for room and the
 * CQ holds the rest.
 */
static u32 ocq_ring_size(const struct ib_cq *cq)
{
	u32 n = clamp_t(u32, cq->cqe, OCQ_RING_MIN, OCQ_RING_MAX);

	return rounddown_pow_of_two(n);
}

/*
 * Ordering domains or workers by default: one per CPU, and no more than
 * the ring holds batches (OCQ_BATCH entries each); a domain beyond that
 * adds memory and nothing to run in parallel.
 */
static unsigned int ocq_default_domains(const struct ib_cq *cq,
					unsigned int nr_cpus)
{
	unsigned int most = ocq_ring_size(cq) / OCQ_BATCH;

	if (most > OCQ_MAX_DOMAINS)
		most = OCQ_MAX_DOMAINS;
	return clamp_t(unsigned int, nr_cpus, 1, most);
}

/**
 * ocq_engine_init - set up an engine for a CQ
 * @e: the engine, zeroed by the caller
 * @cq: the CQ; its completion handler must call ocq_engine_event()
 * @attr: mode and tuning
 * @nr_cpus: online CPUs, the default number of domains
 * @ops: the host's hooks
 *
 * The engine starts paused: nothing is polled or armed until
 * ocq_engine_resume().  On failure everything allocated is freed.
 *
 * Context: process context; may sleep.
 * Return: 0, -EINVAL for a bad @attr, -EOPNOTSUPP for a deferred re-arm
 * or a suspension the host cannot time (no &ocq_engine_ops.defer or
 * &ocq_engine_ops.suspend), or -ENOMEM.
 */
int ocq_engine_init(struct ocq_engine *e, struct ib_cq *cq,
		    const struct ib_ocq_attr *attr, unsigned int nr_cpus,
		    const struct ocq_engine_ops *ops)
{
	struct ocq_tune t = {};
	u32 ring;
	int ret;

	ret = ocq_engine_check_attr(attr);
	if (ret)
		return ret;
	e->cq = cq;
	e->ops = ops;
	/* strict with a dispatch(): a mode of its own, told apart per batch */
	e->mode = attr->mode == IB_OCQ_STRICT && attr->dispatch ?
			  OCQ_STRICT_BY_WC :
			  attr->mode;
	e->policy = ocq_policy_resolve(cq->device, attr->policy);
	e->flags = attr->flags;
	e->budget = attr->budget ?: OCQ_DEFAULT_BUDGET;
	e->nr_domains = attr->nr_domains ?: ocq_default_domains(cq, nr_cpus);
	e->flow_key = attr->flow_key;
	e->process = attr->process;
	e->dispatch = attr->dispatch;
	if (attr->defer_usecs) {
		t.defer_polls = attr->defer_polls ?: IB_OCQ_DEFAULT_DEFER_POLLS;
		t.dim = attr->flags & IB_OCQ_DEFER_DIM;
	}
	t.suspend = attr->suspend_usecs;
	if ((t.defer_polls && !ops->defer) || (t.suspend && !ops->suspend))
		return -EOPNOTSUPP;
	/*
	 * As a retune, applied before any run: the first hold finds it done.
	 * -1 is no word applied yet (a word has 10 bits): all of it applies.
	 */
	e->tune_now = -1;
	ocq_tune_apply(e, ocq_tune_word(&t));
	atomic_set(&e->tune, e->tune_now);
	e->nr_units = 1;
	if (e->mode == IB_OCQ_FLOW)
		e->nr_units += e->nr_domains;
	else if (e->mode == IB_OCQ_PARALLEL)
		e->nr_units += e->nr_domains + 1;
	ring = ocq_ring_size(cq);
	e->ring_mask = ring - 1;
	atomic_long_set(&e->events, 0);
	atomic_long_set(&e->pauses, 0);
	atomic_long_set(&e->cq_errors, 0);
	atomic_set(&e->stalled, OCQ_NO_STALL);
	atomic_set(&e->claimed, 0);
	atomic_long_set(&e->contended, 0);
	e->lease_marked = false;

	ret = ocq_alloc_units(e, ring);
	if (ret) {
		ocq_engine_destroy(e);
		return ret;
	}
	atomic_set(&e->units[OCQ_UNIT_CQ].gate, OCQ_PAUSED);
	return 0;
}

/**
 * ocq_engine_destroy - free what ocq_engine_init() allocated
 * @e: the engine; disabled, with no run queued
 *
 * Context: process context.
 */
void ocq_engine_destroy(struct ocq_engine *e)
{
	ocq_free(e, e->fqueues);
	ocq_free(e, e->fslots);
	ocq_free(e, e->slots);
	ocq_free(e, e->units);
	e->fqueues = NULL;
	e->fslots = NULL;
	e->units = NULL;
	e->slots = NULL;
}
