/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Ordered completion queues: completion processing for kernel RDMA ULPs that
 * never loses a completion notification and never dispatches completions out
 * of order, wherever the provider's notifications land.
 */
#ifndef _RDMA_IB_OCQ_H
#define _RDMA_IB_OCQ_H

#include <linux/sizes.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

/**
 * enum ib_arm_policy - how a drained CQ is armed
 * @IB_ARM_AUTO: the policy ib_cq_arm_policy() picks for the device
 * @IB_ARM_REPORT_MISSED: arm with %IB_CQ_REPORT_MISSED_EVENTS; a positive
 *	return means the CQ is not armed and must be polled again.  Correct on
 *	every provider that honours the verbs contract; the safe default.
 * @IB_ARM_STRONG: arm with %IB_CQ_NEXT_COMP only.  Only for providers that
 *	raise an event at once when armed with unpolled entries.
 * @IB_ARM_DOUBLE_POLL: arm with %IB_CQ_NEXT_COMP, then poll once more; for
 *	providers where %IB_CQ_REPORT_MISSED_EVENTS is costly.
 * @IB_ARM_SOLICITED: not a policy: OR'ed into one of the above, the arm
 *	asks for %IB_CQ_SOLICITED instead of %IB_CQ_NEXT_COMP.  The handler
 *	then runs for the next solicited completion (and, on the providers
 *	that follow the IBA, the next unsuccessful one); completions before
 *	it wait in the CQ until it comes.  Documentation/api.rst, "Arming
 *	solicited-only", says what each provider model promises.
 */
enum ib_arm_policy {
	IB_ARM_AUTO,
	IB_ARM_REPORT_MISSED,
	IB_ARM_STRONG,
	IB_ARM_DOUBLE_POLL,
	IB_ARM_SOLICITED = 0x10,
};

/*
 * times ib_poll_cq_and_arm() and ib_poll_and_notify() poll an empty CQ that
 * the provider keeps reporting missed events on, before they give up with
 * -EAGAIN
 */
#define IB_POLL_ARM_TRIES 8

/**
 * enum ib_pn_status - what ib_poll_and_notify() asks of its caller next
 * @IB_PN_MORE: completions returned and the CQ may hold more; it is NOT
 *	armed: process them and call again.
 * @IB_PN_REPOLL: at least one completion returned, and the CQ is not known
 *	to be armed: the arm reported missed events, or more completions
 *	turned up after it.  Process them and call again.
 * @IB_PN_ARMED: at least one completion returned, the CQ was drained and is
 *	armed: process them and stop.
 * @IB_PN_EMPTY_ARMED: nothing returned, the CQ is empty and armed: stop.
 *
 * Todd Rimmer's iba_poll_and_rearm() (openib-general, September 2006)
 * named these SUCCESS, COMPLETED, POLL_NEEDED and NOT_DONE.  Its
 * POLL_NEEDED meant "rearmed, but poll until empty"; %IB_PN_REPOLL
 * promises no arm at all, which is what a provider
 * returning a positive value from ib_req_notify_cq() with
 * %IB_CQ_REPORT_MISSED_EVENTS allows.  After %IB_PN_ARMED and
 * %IB_PN_EMPTY_ARMED, and only then, the completion handler is guaranteed to
 * run for the next completion.
 */
enum ib_pn_status {
	IB_PN_MORE,
	IB_PN_REPOLL,
	IB_PN_ARMED,
	IB_PN_EMPTY_ARMED,
};

/**
 * enum ib_ocq_mode - ordering domains of an ordered completion queue
 * @IB_OCQ_STRICT: one domain per CQ: done() calls never overlap and follow
 *	CQ order.
 * @IB_OCQ_FLOW: one domain per flow (the QP, or the key returned by
 *	&ib_ocq_attr.flow_key): each flow strictly ordered, different flows
 *	dispatched on different CPUs at once (a short batch of one flow,
 *	with no other flow's done() running, by the CQ's own run).  A done()
 *	must not wait for a completion of another flow: the CQ is not polled
 *	for it while its own domain is busy, beyond %IB_OCQ_HOL_DONES done()
 *	calls.
 * @IB_OCQ_PARALLEL: &ib_ocq_attr.process runs for several completions at
 *	once on any CPU; done() (the commit step) then runs in CQ order, never
 *	concurrently (a short batch taken while nothing is pending is
 *	processed and committed by the CQ's own run).
 */
enum ib_ocq_mode {
	IB_OCQ_STRICT,
	IB_OCQ_FLOW,
	IB_OCQ_PARALLEL,
};

/* Leave the CQ unarmed when drained, until ib_ocq_resume() (postponed arm) */
#define IB_OCQ_POSTPONE_ARM BIT(0)
/*
 * Software DIM for the deferred re-arm: DIM picks the delay, at most
 * &ib_ocq_attr.defer_usecs, and a run defers only once it took an adapted
 * number of completions, two at least
 */
#define IB_OCQ_DEFER_DIM BIT(1)

/* &ib_ocq_attr.budget at most */
#define IB_OCQ_MAX_BUDGET SZ_1M
/*
 * &ib_ocq_attr.pause_ms when 0, and at most: a pause lasts up to twice it,
 * well below the hung task detector's default of 120 s
 */
#define IB_OCQ_DEFAULT_PAUSE_MS 1000
#define IB_OCQ_MAX_PAUSE_MS 30000
/*
 * %IB_OCQ_FLOW, %IB_OCQ_PARALLEL: while an ordering domain holds a backlog,
 * a completion of another domain waits in the CQ for at most this many
 * done() calls of the busy domain (and the scheduling of one work item);
 * on %IB_POLL_SOFTIRQ, where every unit runs on one CPU one after another,
 * for at most twice this many (the busy domain's next batch may run before
 * the other domain's)
 */
#define IB_OCQ_HOL_DONES 4
/* &ib_ocq_attr.defer_usecs at most (10 ms) */
#define IB_OCQ_MAX_DEFER_USECS 10000
/* &ib_ocq_attr.defer_polls when 0 */
#define IB_OCQ_DEFAULT_DEFER_POLLS 2
/* &ib_ocq_attr.defer_polls at most */
#define IB_OCQ_MAX_DEFER_POLLS 100
/* &ib_ocq_attr.suspend_usecs at most (100 ms) */
#define IB_OCQ_MAX_SUSPEND_USECS 100000

/**
 * struct ib_ocq_attr - how an ordered completion queue processes completions
 * @mode: ordering domains, see &enum ib_ocq_mode
 * @policy: arm policy, %IB_ARM_AUTO for the provider's table entry; with
 *	%IB_ARM_SOLICITED OR'ed in, the CQ is armed solicited-only
 * @flags: %IB_OCQ_POSTPONE_ARM, %IB_OCQ_DEFER_DIM
 * @budget: completions one run may dispatch before it yields its worker;
 *	0 for the default
 * @nr_domains: %IB_OCQ_FLOW: number of flow domains; %IB_OCQ_PARALLEL:
 *	number of process workers; 0 for the number of online CPUs, at most
 *	one per 16 entries of the CQ (its size rounded down to a power of
 *	two, at least 64) and at most 64
 * @watchdog_ms: poll after this long without an event (safety net for
 *	providers that lose events); 0 disables it.  With %IB_ARM_SOLICITED
 *	its runs also dispatch completions that wait for a solicited one,
 *	counted in &ib_ocq_stats.rescues.
 * @pause_ms: the longest an ib_ocq_pause() or a postponed arm lasts: after
 *	between @pause_ms and twice that without ib_ocq_resume(), the OCQ
 *	resumes by itself, so that ib_drain_qp() always returns; 0 for
 *	%IB_OCQ_DEFAULT_PAUSE_MS, at most %IB_OCQ_MAX_PAUSE_MS
 * @flow_key: %IB_OCQ_FLOW: the flow of a completion; NULL for its QP.
 *	Called only for successful completions that carry a &ib_cqe (with
 *	@dispatch: for every successful completion).
 * @process: %IB_OCQ_PARALLEL: the unordered step; runs before done().
 *	Called only for successful completions that carry a &ib_cqe (with
 *	@dispatch: for every successful completion).
 * @dispatch: for a ULP that posts its work requests with a wr_id, not a
 *	&ib_cqe: called with each completion in place of wc->wr_cqe->done(),
 *	in the same order and context, never concurrently within an ordering
 *	domain, wr_id as the provider returned it; the ULP tells its
 *	completions apart by wr_id and opcode.  NULL (the default) calls
 *	done().  With it, ib_drain_qp() must not be used on the CQ's QPs:
 *	its drain request carries ib_core's own &ib_cqe, which @dispatch
 *	would be handed as a wr_id, so the drain would never end; and on
 *	%IB_POLL_DIRECT ib_core's drain polls with ib_process_cq_direct(),
 *	which would call done() through each of the ULP's wr_ids.  Such a
 *	ULP drains as on a CQ of ib_create_cq(), by waiting for its flushed
 *	requests.
 * @defer_usecs: deferred re-arm, NAPI's napi_defer_hard_irqs with
 *	gro_flush_timeout: a run that found work leaves the drained CQ unarmed
 *	and the CQ is polled again from a timer after @defer_usecs, with no
 *	completion event, until @defer_polls runs of the CQ in a row found
 *	nothing (the timer's, or one a resume started); the last of them
 *	arms the CQ.  Fewer completion events under steady load (the
 *	timer's runs replace the events' runs), at the cost of up to
 *	@defer_usecs (and the timer's slack) of latency for a completion
 *	that lands while the CQ is unarmed, and of the timer's empty polls
 *	when the load stops.  In %IB_OCQ_FLOW and %IB_OCQ_PARALLEL a run
 *	that leaves work in the domains parks instead, as without it.  0
 *	(the default) arms at once; at most %IB_OCQ_MAX_DEFER_USECS.  Not
 *	with %IB_OCQ_POSTPONE_ARM nor on %IB_POLL_DIRECT; no DIM with it,
 *	but see %IB_OCQ_DEFER_DIM.  With %IB_OCQ_DEFER_DIM (software DIM,
 *	for providers without modify_cq) @defer_usecs is the ceiling: the
 *	delay follows the DIM profile that rdma_dim() picks from the
 *	completions each run takes, from @defer_usecs / 9 to @defer_usecs;
 *	and the arm is deferred only once a threshold of completions, at
 *	least two, was taken since the last arm or deferral, so that at one
 *	completion per event (low load) nothing is deferred.  The threshold
 *	doubles (up to 16) after a deferral after which no check found as
 *	many again before the CQ was armed, is two again after one after
 *	which a check did, and halves after 16 checks that found too few.
 * @defer_polls: with @defer_usecs: 0 for %IB_OCQ_DEFAULT_DEFER_POLLS, at
 *	most %IB_OCQ_MAX_DEFER_POLLS; must be 0 without it
 * @suspend_usecs: consumer-driven suspension, NAPI's irq_suspend_timeout:
 *	the ULP may poll the CQ itself with ib_ocq_busy_poll(), which never
 *	arms it, found work or not: no completion event starts a run while
 *	the ULP keeps polling.  Once it has not polled for @suspend_usecs, a
 *	timer's run arms the CQ (with @defer_usecs, defers as any run).
 *	0 (the default): ib_ocq_busy_poll() is refused.  At
 *	most %IB_OCQ_MAX_SUSPEND_USECS; not with %IB_OCQ_POSTPONE_ARM or
 *	%IB_OCQ_DEFER_DIM, and only on %IB_POLL_WORKQUEUE and
 *	%IB_POLL_UNBOUND_WORKQUEUE (an %IB_POLL_DIRECT CQ is polled with
 *	ib_ocq_process_cq_direct()).
 *
 * Completions that fail (a flush, ib_drain_qp()'s own) or, without
 * @dispatch, carry no &ib_cqe are never passed to @flow_key or @process: without @flow_key they
 * go to their QP's domain, with one they are dispatched once every
 * completion taken from the CQ before them was dispatched; in
 * %IB_OCQ_PARALLEL they skip @process and are committed in order.  Either way
 * the drain completion of a QP comes after all of that QP's earlier ones.
 */
struct ib_ocq_attr {
	enum ib_ocq_mode mode;
	enum ib_arm_policy policy;
	unsigned int flags;
	unsigned int budget;
	unsigned int nr_domains;
	unsigned int watchdog_ms;
	unsigned int pause_ms;
	u32 (*flow_key)(struct ib_cq *cq, const struct ib_wc *wc);
	void (*process)(struct ib_cq *cq, struct ib_wc *wc);
	void (*dispatch)(struct ib_cq *cq, struct ib_wc *wc);
	unsigned int defer_usecs;
	unsigned int defer_polls;
	unsigned int suspend_usecs;
};

/**
 * struct ib_ocq_tune - an ordered CQ's moderation, changed while it runs
 * @flags: %IB_OCQ_DEFER_DIM, or 0
 * @defer_usecs: as &ib_ocq_attr.defer_usecs; 0: the re-arm is not deferred
 * @defer_polls: as &ib_ocq_attr.defer_polls
 * @suspend_usecs: as &ib_ocq_attr.suspend_usecs; 0: ib_ocq_busy_poll() is
 *	refused
 *
 * See ib_ocq_set_tune(); ib_ocq_get_tune() reads what is in force.
 */
struct ib_ocq_tune {
	unsigned int flags;
	unsigned int defer_usecs;
	unsigned int defer_polls;
	unsigned int suspend_usecs;
};

/**
 * struct ib_ocq_stats - counters of an ordered completion queue
 * @events: completion handler calls
 * @runs: processing runs of the CQ
 * @empty_runs: runs that found the CQ empty
 * @polls: ib_poll_cq() calls
 * @completions: done() calls, counted as a run's batch ends: a read while
 *	a run is under way may lag the done() calls it made
 * @arms: ib_req_notify_cq() calls
 * @repolls: polls repeated because arming could not be confirmed
 * @yields: runs that reached their budget and requeued themselves, or, on
 *	%IB_POLL_SOFTIRQ, domain runs that let a queued CQ run go first
 * @pauses: ib_ocq_pause() calls and postponed arms
 * @rescues: completions found by the watchdog
 * @stalls: times the CQ run waited for room: in the flow domains' shared
 *	queues, or in the reorder ring
 * @domain_runs: runs of flow domains, process workers and the commit step
 * @cq_errors: asynchronous CQ errors (overruns) the provider reported
 * @max_batch: most completions one run took from the CQ
 * @parks: %IB_OCQ_FLOW, %IB_OCQ_PARALLEL: runs that left the drained CQ
 *	unarmed because ordering domains still held work; the domain that
 *	next made progress started the next run
 * @provider_errors: failed polls or arms; the run retried a moment later
 * @lease_resumes: pauses and postponed arms that &ib_ocq_attr.pause_ms ended
 * @inlined: %IB_OCQ_FLOW: completions the CQ run dispatched itself, a
 *	short batch of one flow taken while every domain was idle (no
 *	hand-off to a domain's run)
 * @defers: runs that left the drained CQ unarmed for the deferred re-arm's
 *	timer to poll it again (&ib_ocq_attr.defer_usecs)
 * @contended: %IB_POLL_DIRECT: ib_ocq_process_cq_direct() calls that found
 *	another caller polling and returned 0; otherwise ib_ocq_busy_poll()
 *	calls that found a run of the CQ and returned -EBUSY
 * @busy_polls: ib_ocq_busy_poll() calls that polled the CQ
 * @suspends: of those, the ones that left the CQ to the suspension's timer
 *	(all but those a provider's failure, a pause or, %IB_OCQ_FLOW, a full
 *	pool of the domains ended)
 *
 * An %IB_POLL_DIRECT CQ counts @runs (calls that polled), @empty_runs,
 * @polls, @completions and @contended only.
 */
struct ib_ocq_stats {
	u64 events;
	u64 runs;
	u64 empty_runs;
	u64 polls;
	u64 completions;
	u64 arms;
	u64 repolls;
	u64 yields;
	u64 pauses;
	u64 rescues;
	u64 stalls;
	u64 domain_runs;
	u64 cq_errors;
	u64 max_batch;
	u64 parks;
	u64 provider_errors;
	u64 lease_resumes;
	u64 inlined;
	u64 defers;
	u64 contended;
	u64 busy_polls;
	u64 suspends;
};

struct ib_ocq;

int ib_poll_cq_and_arm(struct ib_cq *cq, int num_entries, struct ib_wc *wc);
int ib_poll_cq_and_arm_solicited(struct ib_cq *cq, int num_entries,
				 struct ib_wc *wc);
int ib_poll_and_notify(struct ib_cq *cq, int num_entries, struct ib_wc *wc,
		       enum ib_arm_policy policy, enum ib_pn_status *status);
enum ib_arm_policy ib_cq_arm_policy(const struct ib_device *dev);

struct ib_ocq *__ib_ocq_alloc(struct ib_device *dev, void *private, int nr_cqe,
			      int comp_vector, const struct ib_ocq_attr *attr,
			      const char *caller);

/**
 * ib_ocq_alloc - allocate a CQ whose completions an ordered CQ dispatches
 * @dev: device to allocate the CQ on
 * @private: ULP context, returned by ib_ocq_private()
 * @nr_cqe: number of CQ entries
 * @comp_vector: completion vector
 * @attr: mode and tuning; see &struct ib_ocq_attr; NULL for the defaults
 *	(%IB_OCQ_STRICT)
 *
 * Context: process context; may sleep.
 * Return: the ordered CQ, or an ERR_PTR(); see __ib_ocq_alloc().
 */
static inline struct ib_ocq *ib_ocq_alloc(struct ib_device *dev, void *private,
					  int nr_cqe, int comp_vector,
					  const struct ib_ocq_attr *attr)
{
	return __ib_ocq_alloc(dev, private, nr_cqe, comp_vector, attr,
			      KBUILD_MODNAME);
}

void ib_ocq_free(struct ib_ocq *ocq);

struct ib_cq *__ib_ocq_alloc_cq(struct ib_device *dev, void *private,
				int nr_cqe, int comp_vector,
				enum ib_poll_context poll_ctx,
				const struct ib_ocq_attr *attr,
				const char *caller);
struct ib_cq *__ib_ocq_alloc_cq_any(struct ib_device *dev, void *private,
				    int nr_cqe, enum ib_poll_context poll_ctx,
				    const struct ib_ocq_attr *attr,
				    const char *caller);

/**
 * ib_ocq_alloc_cq - the drop-in for ib_alloc_cq(), ordered
 * @dev: device to allocate the CQ on
 * @private: the CQ's cq_context
 * @nr_cqe: number of CQ entries
 * @comp_vector: completion vector
 * @poll_ctx: %IB_POLL_SOFTIRQ, %IB_POLL_WORKQUEUE,
 *	%IB_POLL_UNBOUND_WORKQUEUE or %IB_POLL_DIRECT (polled by the ULP with
 *	ib_ocq_process_cq_direct())
 * @attr: mode and tuning; NULL for %IB_OCQ_STRICT
 *
 * Context: process context; may sleep.
 * Return: the CQ, or an ERR_PTR(); see __ib_ocq_alloc_cq().
 */
static inline struct ib_cq *ib_ocq_alloc_cq(struct ib_device *dev,
					    void *private, int nr_cqe,
					    int comp_vector,
					    enum ib_poll_context poll_ctx,
					    const struct ib_ocq_attr *attr)
{
	return __ib_ocq_alloc_cq(dev, private, nr_cqe, comp_vector, poll_ctx,
				 attr, KBUILD_MODNAME);
}

/**
 * ib_ocq_alloc_cq_any - the drop-in for ib_alloc_cq_any(), ordered
 * @dev: device to allocate the CQ on
 * @private: the CQ's cq_context
 * @nr_cqe: number of CQ entries
 * @poll_ctx: as for ib_ocq_alloc_cq()
 * @attr: mode and tuning; NULL for %IB_OCQ_STRICT
 *
 * Context: process context; may sleep.
 * Return: the CQ, or an ERR_PTR(); see __ib_ocq_alloc_cq_any().
 */
static inline struct ib_cq *ib_ocq_alloc_cq_any(struct ib_device *dev,
						void *private, int nr_cqe,
						enum ib_poll_context poll_ctx,
						const struct ib_ocq_attr *attr)
{
	return __ib_ocq_alloc_cq_any(dev, private, nr_cqe, poll_ctx, attr,
				     KBUILD_MODNAME);
}

void ib_ocq_free_cq(struct ib_cq *cq);
int ib_ocq_process_cq_direct(struct ib_cq *cq, int budget);
int ib_ocq_busy_poll(struct ib_cq *cq, int budget);
int ib_ocq_set_tune(struct ib_cq *cq, const struct ib_ocq_tune *t);
void ib_ocq_get_tune(struct ib_cq *cq, struct ib_ocq_tune *t);
struct ib_cq *ib_ocq_cq_pool_get(struct ib_device *dev, unsigned int nr_cqe,
				 int comp_vector_hint,
				 enum ib_poll_context poll_ctx,
				 const struct ib_ocq_attr *attr);
void ib_ocq_cq_pool_put(struct ib_cq *cq, unsigned int nr_cqe);
void ib_ocq_cq_pool_destroy(struct ib_device *dev);
struct ib_ocq *ib_cq_to_ocq(struct ib_cq *cq);
struct ib_cq *ib_ocq_cq(struct ib_ocq *ocq);
void *ib_ocq_private(struct ib_cq *cq);
void ib_ocq_pause(struct ib_ocq *ocq);
void ib_ocq_resume(struct ib_ocq *ocq);
void ib_ocq_get_stats(struct ib_ocq *ocq, struct ib_ocq_stats *stats);

#endif /* _RDMA_IB_OCQ_H */
