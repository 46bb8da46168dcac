// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ocq_test_fake - the ordered CQ engine against a fake provider.
 *
 * A never-registered ib_device whose poll_cq and req_notify_cq emulate the
 * notification semantics of real providers, good and bad.  Its CQ is made
 * through the public ib_ocq_alloc(), so the plumbing runs too.  Producer
 * kthreads, one per online CPU and each a flow with its own fake QP, push
 * completions carrying sequence numbers; the fake CQ calls the completion
 * handler from process context (the producer), hard irq and softirq (two
 * hrtimers) or an IPI.  Every done() checks that it sees each completion
 * exactly once, in order within its domain, never concurrently with another
 * done() of the domain, and (%IB_OCQ_PARALLEL) after process().
 *
 * A test module in the kselftest_module.h pattern: init runs the scenario
 * named by scenario=, prints KTAP lines and fails the load if a subtest
 * failed.  Each scenario runs in each mode (strict, flow, parallel), as one
 * KTAP subtest (two for fake_lossy and fake_pause_resume, three for
 * fake_dim).
 *
 * Scenarios, by what the provider does:
 *
 * fake_weak: an event only for entries added after arming (IBA-weak, rxe);
 *	REPORT_MISSED returns 1 iff the CQ is not empty, and arms anyway only
 *	every other time (a 1 says "poll again", not "armed"): an engine that
 *	takes a 1 for an arm stalls for good instead of being rescued by the
 *	next completion.
 * fake_strong: arming with entries pending raises an event at once (mlx4,
 *	mlx5); REPORT_MISSED always returns 0.  Run with %IB_ARM_STRONG, which
 *	must never re-poll.
 * fake_cb_and_1: weak, but arming a non-empty CQ with REPORT_MISSED both
 *	raises the event and returns 1 (allowed: a positive return only says
 *	"not armed, poll again").
 * fake_spurious: weak, plus callbacks with nothing new: a periodic timer,
 *	and a stale interrupt after a poll that emptied the CQ.
 * fake_concurrent: weak; every event runs the handler on the producer's CPU
 *	and, at the same moment, on another CPU.
 * fake_lossy: weak, but an early event (%FAKE_LOSS_FIRST), then one in
 *	%FAKE_LOSS, is dropped.  Passes with the watchdog on and reports its
 *	rescues; without it, it must stall (the loss is real), and a late
 *	event must then deliver everything.
 * fake_perpetual: REPORT_MISSED always returns 1 and never arms the CQ (the
 *	harsher choice: an engine that ever took 1 for "armed" would stall): no
 *	event ever comes; the engine must keep polling without livelock.
 * fake_pause_resume: weak; a kthread pauses and resumes the OCQ at random,
 *	and with %IB_OCQ_POSTPONE_ARM resumes are the only arms.
 * fake_teardown_race: weak; cycles of create, stream, drain, then free while
 *	an injector keeps calling the completion handler; destroy_cq stops it.
 *	Every fourth cycle frees halfway through the stream, undrained.  Every
 *	cycle has the watchdog: a drained one must need no rescue after a
 *	stall.
 * fake_small_ring: weak; 2048 credits against engine rings of 256 entries
 *	(cq->cqe; the provider's ring is larger) and a slow done(): the CQ run
 *	stalls in flow and parallel mode, and must still deliver everything.
 * fake_dim: weak, and the device wants DIM (use_cq_dim, modify_cq): the
 *	OCQ's DIM must call modify_cq, and only with its profiles; no other
 *	scenario's CQ may be moderated.  Then the same stream and rounds
 *	through an OCQ with the deferred re-arm, and through one with the
 *	suspension (no busy polls: its runs are an event's): the provider's
 *	DIM stays off there (the deferral is a moderation of its own, and a
 *	busy poll may hold the CQ unit when DIM reads the run's counters),
 *	so no modify_cq may come.
 * fake_provider_error: weak, but poll_cq and req_notify_cq fail with -EIO
 *	one call in %FAKE_EIO_EVERY: the engine must back off and retry by
 *	itself (no watchdog), and count it in provider_errors.
 * fake_resume_race: weak, with a slow req_notify_cq; %IB_OCQ_POSTPONE_ARM,
 *	the longest pause_ms, a resumer kthread per CPU: after the last
 *	resume, everything pushed before and after it must arrive, and no
 *	lease may have ended a postponed arm.
 *
 * Nine scenarios have a run of their own (one subtest per case):
 *
 * fake_flow_hol: %IB_OCQ_FLOW, two flows: while one works through a backlog
 *	of 5 ms done() calls, each completion of the other waits for at most
 *	%IB_OCQ_HOL_DONES + %FAKE_HOL_CQ_SLACK of them in the CQ (the fake CQ
 *	tells when it is polled), whatever the backlog.
 * fake_flow_inline: %IB_OCQ_FLOW: the CQ run dispatches a batch of one
 *	flow of up to %IB_OCQ_HOL_DONES itself while every domain is idle,
 *	and hands the batch on when a domain is busy, when it is longer, or
 *	when it holds two flows.
 * fake_defer: &ib_ocq_attr.defer_usecs, strict and flow: a stream raises
 *	far fewer events than without it, delivered once and in order; the
 *	CQ ends armed once the timer's polls are spent; bad attributes are
 *	refused; frees with a deferral pending are clean.
 * fake_tune: ib_ocq_set_tune() of live OCQs: a stream's events fall once a
 *	retune turns the deferral on, and its runs arm again once one turns
 *	it off; retunes racing a flow stream lose and reorder nothing; busy
 *	polls are refused and allowed as retunes say; software DIM's delay
 *	follows a retune; what an allocation refuses a retune refuses, and
 *	changes nothing.
 * fake_suspend: &ib_ocq_attr.suspend_usecs and ib_ocq_busy_poll(), strict
 *	and flow, workqueue and unbound, events moderated: a busy-polled
 *	stream raises no events after the first and is delivered once, in
 *	order; once the polls stop the timer's run arms the CQ; an empty busy
 *	poll arms a suspended CQ at once and leaves an armed one alone; the
 *	refusals (-EBUSY from done(), -EAGAIN, -EOPNOTSUPP, -EINVAL) and bad
 *	attributes; busy polls racing a 20 us timer and events; frees with
 *	the suspension's timer pending are clean.
 * fake_poll_helpers: no OCQ: ib_poll_cq_and_arm() and ib_poll_and_notify()
 *	on a plain CQ of the fake device, polled by a handler and work item of
 *	the test's own, on every provider model.
 * fake_parallel_slow: %IB_OCQ_PARALLEL, one completion at a time per poll:
 *	while one process() is slow, a completion behind it is processed by
 *	the other worker.
 * fake_bad_attr: every -EINVAL of the allocation and of the helpers, none
 *	with a warning.
 * fake_drain_paused: ib_drain_qp(), through the device's drain_sq and
 *	drain_rq, on the QPs of an OCQ that is paused or whose arm is
 *	postponed: each drain returns within two leases, after its QP's
 *	completions; with a flow_key by request too.
 * ocq_solicited: solicited-only arms.  ib_poll_cq_and_arm_solicited() and
 *	ib_poll_and_notify() with %IB_ARM_SOLICITED as fake_poll_helpers
 *	drives them, on its models (but lossy and perpetual) and
 *	%FAKE_SOL_NARROW, and OCQs with %IB_ARM_SOLICITED in each mode, take
 *	a stream of messages of up to %FAKE_SOL_MSG completions, the last
 *	one solicited; then, the CQ idle and armed, a completion that is not
 *	solicited raises nothing and waits in the CQ until a solicited one
 *	comes, and a solicited one that lands at the arm is delivered (but
 *	on fake_spurious).  Bad policies are refused.
 * ocq_wrid: fake_weak's stream with a wr_id in each completion, not a
 *	&ib_cqe, dispatched through &ib_ocq_attr.dispatch in each mode: the
 *	wr_id names a request of the run (an engine that called done()
 *	instead would fault on it), and done()'s checks hold.
 *
 * poll_ctx= (fake_weak, ocq_wrid; fake_pause_resume with softirq only): the OCQ comes
 * from ib_ocq_alloc_cq() with that poll context (workqueue, unbound, softirq
 * or direct), and done() also checks that it runs where the context
 * promises: a workqueue worker (unbound: one not bound to a CPU), the
 * softirq, or (direct) one of %FAKE_POLLERS kthreads calling
 * ib_ocq_process_cq_direct() side by side.  Direct refuses
 * %IB_OCQ_PARALLEL: that subtest checks the -EINVAL.
 *
 * In every scenario whose done() is fake_deliver()'s, done() also checks
 * that it does not run inside a call of the provider's completion handler
 * nor inside an ib_ocq_resume() of a task (fake_inside_nested()): a host
 * must only schedule the run there, as ib_cq's softirq does, for the caller
 * may hold locks that done() takes (a provider its CQ lock).
 *
 * Every pushed completion may also land late (see fake_cq_push()), so that
 * arming often finds entries pending, as when a completion races with the
 * consumer's last poll on real hardware.
 *
 * Three scenarios run all modes in one subtest sequence:
 *
 * teardown_loop: @cycles short streams, each freed under late callbacks,
 *	rotating through the modes, with and without the watchdog, postponed
 *	arm and random pauses, drained or freed halfway.  Every cycle checks
 *	that the provider's objects (CQs, kthreads) are all gone, and a
 *	drained one with the watchdog and no pauser that it needed no rescue
 *	after a stall.
 * alloc_fail: one ib_ocq_alloc() on the create path named by path=, on the
 *	fake device or on the real one named by device=, for the error paths
 *	under the plumbing's fail_nth: a failure must be -ENOMEM and leave
 *	nothing behind; a success streams (fake device) with random pauses,
 *	then frees.
 * soak: random scenarios, modes, pauses and teardowns for duration_s
 *	seconds, counting lost, reordered and duplicated completions.  Short
 *	cycles (fresh OCQs of 100 to 2100 completions) alternate with bulk
 *	cycles: millions of completions through one OCQ, the producers
 *	refilling the CQ in batches, each completion checked against its
 *	flow's and (strict, parallel) the CQ's sequence, in O(1).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/cpumask.h>
#include <linux/module.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include <rdma/ib_ocq.h>
#include <rdma/ib_verbs.h>

#include "ocq_test_compat.h"
#include "ocq_test_ctx.h"
#include "fake.h"

struct fake_params fake_params = {
	.scenario = "fake_weak",
	.completions = 100000,
	.cqe = 256,
	.cycles = 40,
	.stall_ms = 10000,
	.seed = 1,
	.path = "strict",
	.device = "",
	.duration_s = 30,
};

module_param_named(scenario, fake_params.scenario, charp, 0444);
MODULE_PARM_DESC(scenario, "scenario to run at load time (fake_weak, ...)");

module_param_named(completions, fake_params.completions, uint, 0444);
MODULE_PARM_DESC(completions, "completions per mode, over all its cycles");

module_param_named(cqe, fake_params.cqe, uint, 0444);
MODULE_PARM_DESC(cqe, "CQ entries, shared out as producer credits");

module_param_named(cycles, fake_params.cycles, uint, 0444);
MODULE_PARM_DESC(cycles, "create/free cycles, per mode in fake_teardown_race");

module_param_named(stall_ms, fake_params.stall_ms, uint, 0444);
MODULE_PARM_DESC(stall_ms, "a run without progress for this long has stalled");

module_param_named(seed, fake_params.seed, uint, 0444);
MODULE_PARM_DESC(seed, "seed of the producers' and the CQ's random choices");

module_param_named(path, fake_params.path, charp, 0444);
MODULE_PARM_DESC(path, "alloc_fail: the create path (strict, flow_4, ...)");

module_param_named(device, fake_params.device, charp, 0444);
MODULE_PARM_DESC(device, "alloc_fail: a real device to create on; empty: fake");

module_param_named(duration_s, fake_params.duration_s, uint, 0444);
MODULE_PARM_DESC(duration_s, "soak: how long to run, in seconds");

module_param_named(poll_ctx, fake_params.poll_ctx, charp, 0444);
MODULE_PARM_DESC(poll_ctx,
		 "fake_weak, ocq_wrid: any ctx; fake_pause_resume: softirq");

/* --- per-scenario checks --- */

/* fake_weak: what the stream met, for fake_run_weak() to judge */
static void fake_check_weak(struct fake_run *r, const struct ib_ocq_stats *s)
{
	r->arms_positive = r->fcq->positive;
	r->arms_voided = r->fcq->voided;
}

/* fake_dim: DIM moderated the CQ, with its profiles only. */
static void fake_check_dim(struct fake_run *r, const struct ib_ocq_stats *s)
{
	struct fake_cq *fcq = r->fcq;

	pr_info("# %s: dim: %llu modify_cq calls (%llu bad), profiles %*pbl, last %d\n",
		r->name, fcq->moderations, fcq->bad_moderations,
		FAKE_DIM_PROFILES, &fcq->mod_seen, fcq->mod_ix);
	fake_check(r, fcq->moderations > 0, "DIM called modify_cq");
	fake_check(r, !fcq->bad_moderations, "every modify_cq a DIM profile");
}

/*
 * fake_dim, an OCQ that defers (%FAKE_DIM_OFF_USECS) or suspends: the same
 * traffic, and no modify_cq.  The deferral must have been in force.
 */
static void fake_check_dim_off(struct fake_run *r, const struct ib_ocq_stats *s)
{
	pr_info("# %s: dim: %llu modify_cq calls, %llu defers\n", r->name,
		r->fcq->moderations, s->defers);
	fake_check(r, !r->fcq->moderations,
		   "no modify_cq on an OCQ that defers or suspends");
	if (r->attr.defer_usecs)
		fake_check(r, s->defers > 0, "runs were deferred");
}

/* fake_dim's runs of an OCQ whose provider DIM must stay off */
static const struct fake_scenario fake_dim_off = {
	.name = "fake_dim",
	.sem = FAKE_DIM,
	.check = fake_check_dim_off,
	.drive = fake_dim_drive,
	.run = fake_run_dim,
};

/* the deferral's and the suspension's period in fake_dim's runs of them */
#define FAKE_DIM_OFF_USECS 100

/*
 * One fake_dim run of @mode through an OCQ made with @defer or @suspend
 * (a period each), as a subtest named @what after the mode.
 */
static int fake_run_dim_off(struct fake_dev *fdev, enum ib_ocq_mode mode,
			    unsigned int defer, unsigned int suspend,
			    const char *what, struct fake_ktap *k)
{
	struct fake_run *r;
	int ret;

	r = fake_run_alloc(&fake_dim_off, mode, fake_params.completions,
			   fake_params.cqe, false);
	if (!r) {
		fake_result(k, false, fake_mode_names[mode], "out of memory");
		return -ENOMEM;
	}
	r->attr.defer_usecs = defer;
	r->attr.suspend_usecs = suspend;
	strlcat(r->name, what, sizeof(r->name));
	ret = fake_run_dim(r, fdev, k);
	fake_run_free(r);
	return ret;
}

/*
 * fake_dim in one mode: DIM on a plain OCQ, then kept off an OCQ that
 * defers and one that suspends.
 */
static int fake_run_dim_modes(struct fake_run *r, struct fake_dev *fdev,
			      struct fake_ktap *k)
{
	int ret;

	ret = fake_run_dim(r, fdev, k);
	if (!ret)
		ret = fake_run_dim_off(fdev, r->mode, FAKE_DIM_OFF_USECS, 0,
				       "_defer_no_dim", k);
	if (!ret)
		ret = fake_run_dim_off(fdev, r->mode, 0, FAKE_DIM_OFF_USECS,
				       "_suspend_no_dim", k);
	return ret;
}

static void fake_check_strong(struct fake_run *r, const struct ib_ocq_stats *s)
{
	pr_info("# %s: %llu polls of an armed CQ\n", r->name,
		r->fcq->armed_polls);
	fake_check(r, !s->repolls && !r->fcq->positive,
		   "IB_ARM_STRONG never re-polls");
	/*
	 * No double poll: a poll right after each arm would make as many
	 * polls of an armed CQ as arms.  Some are allowed: in flow and
	 * parallel mode a domain's kick can start a CQ run after the arm,
	 * before any event (a stale stall's one extra run).
	 */
	fake_check(r, r->fcq->armed_polls * 10 <= r->fcq->arms,
		   "IB_ARM_STRONG polls an armed CQ after at most 1 arm in 10");
	fake_check(r, r->fcq->arm_events > 0,
		   "arming a non-empty CQ fired at least once");
}

static void fake_check_cb_and_1(struct fake_run *r,
				const struct ib_ocq_stats *s)
{
	fake_check(r, r->fcq->arm_events > 0,
		   "the provider fired and returned 1 at least once");
}

static void fake_check_spurious(struct fake_run *r,
				const struct ib_ocq_stats *s)
{
	fake_check(r, atomic_long_read(&r->fcq->empty_callbacks) > 0,
		   "callbacks with an empty CQ happened");
}

static void fake_check_concurrent(struct fake_run *r,
				  const struct ib_ocq_stats *s)
{
	fake_check(r, atomic_long_read(&r->fcq->overlaps) > 0,
		   "the handler ran on two CPUs at once");
}

static void fake_check_lossy(struct fake_run *r, const struct ib_ocq_stats *s)
{
	fake_check(r, r->fcq->dropped > 0, "events were dropped");
	r->rescues = s->rescues; /* fake_run_lossy() checks it */
}

static void fake_check_perpetual(struct fake_run *r,
				 const struct ib_ocq_stats *s)
{
	fake_check(r, !s->events, "no event ever came");
	/* every arm said "missed events": the CQ run keeps requeueing itself */
	fake_check(r, s->repolls == s->arms && s->empty_runs > 0,
		   "the engine kept polling");
}

static void fake_check_pause(struct fake_run *r, const struct ib_ocq_stats *s)
{
	fake_check(r, atomic_long_read(&r->pause_calls) > 0, "paused");
	if (r->attr.flags & IB_OCQ_POSTPONE_ARM)
		fake_check(r, s->pauses > atomic_long_read(&r->pause_calls) + 1,
			   "arms were postponed");
}

static void fake_check_small_ring(struct fake_run *r,
				  const struct ib_ocq_stats *s)
{
	/* strict mode has no ring: done() runs in the CQ run */
	if (r->mode != IB_OCQ_STRICT)
		fake_check(r, s->stalls > 0,
			   "the CQ run waited for room in a ring");
}

static void fake_check_provider_error(struct fake_run *r,
				      const struct ib_ocq_stats *s)
{
	u64 errors = ocq_compat_provider_errors(s);

	fake_check(r, r->fcq->errors > 0, "the provider failed calls");
	fake_check(r, errors > 0 && errors <= r->fcq->errors,
		   "provider_errors counts the failures backed off from");
}

/* IB_ARM_AUTO is IB_ARM_REPORT_MISSED on the fake (RDMA_DRIVER_UNKNOWN). */
static const struct fake_scenario fake_scenarios[] = {
	{
		.name = "fake_weak",
		.sem = FAKE_VOID_ARM,
		.check = fake_check_weak,
		.run = fake_run_weak,
	},
	{
		.name = "fake_dim",
		.sem = FAKE_DIM,
		.check = fake_check_dim,
		.drive = fake_dim_drive,
		.run = fake_run_dim_modes,
	},
	{
		.name = "fake_strong",
		.sem = FAKE_STRONG,
		.policy = IB_ARM_STRONG,
		.check = fake_check_strong,
		.run = fake_run_stream,
	},
	{
		.name = "fake_cb_and_1",
		.sem = FAKE_CB_AND_1,
		.check = fake_check_cb_and_1,
		.run = fake_run_stream,
	},
	{
		.name = "fake_spurious",
		.sem = FAKE_SPURIOUS,
		.check = fake_check_spurious,
		.run = fake_run_stream,
	},
	{
		.name = "fake_concurrent",
		.sem = FAKE_CONCURRENT,
		.check = fake_check_concurrent,
		.run = fake_run_stream,
	},
	{
		.name = "fake_lossy",
		.sem = FAKE_LOSSY,
		.check = fake_check_lossy,
		.run = fake_run_lossy,
	},
	{
		.name = "fake_perpetual",
		.sem = FAKE_PERPETUAL,
		.min_stall_ms = FAKE_PERPETUAL_STALL_MS,
		.check = fake_check_perpetual,
		.run = fake_run_stream,
	},
	{
		.name = "fake_pause_resume",
		.check = fake_check_pause,
		.run = fake_run_pause,
	},
	{
		.name = "fake_teardown_race",
		.run = fake_run_teardown,
	},
	{
		.name = "fake_small_ring",
		.ring = FAKE_MAX_CQE,
		.credits = FAKE_SMALL_RING_CREDITS,
		.done_us = FAKE_SMALL_RING_DONE_US,
		.check = fake_check_small_ring,
		.run = fake_run_stream,
	},
	{
		.name = "fake_provider_error",
		.sem = FAKE_EIO,
		.check = fake_check_provider_error,
		.run = fake_run_stream,
	},
	{
		.name = "fake_resume_race",
		.sem = FAKE_SLOW_ARM,
		.run = fake_run_resume_race,
	},
	{
		.name = "fake_flow_hol",
		.sem = FAKE_PROMPT,
		.run_all = fake_run_flow_hol,
	},
	{
		.name = "fake_flow_inline",
		.sem = FAKE_PROMPT,
		.run_all = fake_run_flow_inline,
	},
	{
		.name = "fake_defer",
		.sem = FAKE_PROMPT,
		.run_all = fake_run_defer,
	},
	{
		.name = "fake_tune",
		.sem = FAKE_PROMPT,
		.run_all = fake_run_tune,
	},
	{
		.name = "fake_suspend",
		.sem = FAKE_PROMPT | FAKE_MODERATED,
		.run_all = fake_run_suspend,
	},
	{
		.name = "fake_poll_helpers",
		.run_all = fake_run_poll_helpers,
	},
	{
		.name = "fake_bad_attr",
		.run_all = fake_run_bad_attr,
	},
	{
		.name = "fake_parallel_slow",
		.sem = FAKE_PROMPT | FAKE_TRICKLE,
		.run_all = fake_run_parallel_slow,
	},
	{
		.name = "fake_drain_paused",
		.sem = FAKE_PROMPT,
		.run_all = fake_run_drain_paused,
	},
	{
		.name = "ocq_solicited",
		.run_all = fake_run_solicited,
	},
	{
		.name = "ocq_wrid",
		.run = fake_run_wrid,
	},
	{
		.name = "teardown_loop",
		.run_all = fake_run_teardown_loop,
	},
	{
		.name = "alloc_fail",
		.run_all = fake_run_alloc_fail,
	},
	{
		.name = "soak",
		.run_all = fake_run_soak,
	},
};

/* --- module --- */

/* IB_POLL_DIRECT has no engine to process in parallel: -EINVAL. */
static int fake_direct_refuses(struct fake_dev *fdev, struct fake_ktap *k)
{
	struct ib_ocq_attr attr = {
		.mode = IB_OCQ_PARALLEL,
		.process = fake_process,
	};
	struct ib_cq *cq;

	cq = ib_ocq_alloc_cq(&fdev->ibdev, NULL, fake_params.cqe, 0,
			     IB_POLL_DIRECT, &attr);
	if (!IS_ERR(cq))
		ib_ocq_free_cq(cq);
	pr_info("# parallel: direct: %ld\n", IS_ERR(cq) ? PTR_ERR(cq) : 0L);
	fake_result(k, PTR_ERR_OR_ZERO(cq) == -EINVAL, "parallel",
		    "IB_POLL_DIRECT refuses it");
	return 0;
}

static int fake_run_mode(const struct fake_scenario *sc, struct fake_dev *fdev,
			 enum ib_ocq_mode mode, struct fake_ktap *k)
{
	struct fake_run *r;
	int ret;

	if ((sc->sem & FAKE_CONCURRENT) && num_online_cpus() < 2) {
		fake_skip(k, fake_mode_names[mode], "needs two online CPUs");
		return 0;
	}
	if (fake_poll_ctx == IB_POLL_DIRECT && mode == IB_OCQ_PARALLEL)
		return fake_direct_refuses(fdev, k);
	r = fake_run_alloc(sc, mode, fake_mode_total(sc), fake_params.cqe,
			   false);
	if (!r) {
		fake_result(k, false, fake_mode_names[mode], "out of memory");
		return -ENOMEM;
	}
	ret = sc->run(r, fdev, k);
	fake_run_free(r);
	return ret;
}

/* Run @sc in every mode it applies to; 0 if nothing failed. */
static int fake_run_scenario(const struct fake_scenario *sc)
{
	struct fake_ktap k = {};
	struct fake_dev *fdev;
	enum ib_ocq_mode mode;

	pr_info("KTAP version 1\n");
	pr_info("# scenario=%s completions=%u cqe=%u cycles=%u stall_ms=%u seed=%u cpus=%u\n",
		sc->name, fake_params.completions, fake_params.cqe,
		fake_params.cycles, fake_params.stall_ms, fake_params.seed,
		num_online_cpus());
	if (sc->run_all == fake_run_alloc_fail)
		pr_info("# path=%s device=%s\n", fake_params.path,
			*fake_params.device ? fake_params.device : "fake");
	if (sc->run_all == fake_run_soak)
		pr_info("# duration_s=%u\n", fake_params.duration_s);
	fdev = fake_dev_alloc(&fake_drain_ops);
	if (!fdev)
		return -ENOMEM;
	if (sc->run_all)
		sc->run_all(sc, fdev, &k);
	for (mode = 0; !sc->run_all && mode < FAKE_NR_MODES; mode++) {
		if (fake_run_mode(sc, fdev, mode, &k))
			break;
	}
	if (atomic_read(&fake_objects))
		fake_result(&k, false, "objects",
			    "the provider's objects were not all freed");
	ib_dealloc_device(&fdev->ibdev);
	pr_info("1..%u\n", k.nr);
	pr_info("# totals: pass:%u fail:%u skip:%u\n",
		k.nr - k.failed - k.skipped, k.failed, k.skipped);
	return k.failed ? -EINVAL : 0;
}

static const struct fake_scenario *fake_find_scenario(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fake_scenarios); i++)
		if (!strcmp(fake_params.scenario, fake_scenarios[i].name))
			return &fake_scenarios[i];
	return NULL;
}

static int fake_check_params(void)
{
	if (fake_params.completions < FAKE_MIN_COMPLETIONS ||
	    fake_params.completions > FAKE_MAX_COMPLETIONS)
		return -EINVAL;
	if (fake_params.cqe < FAKE_MIN_CQE || fake_params.cqe > FAKE_MAX_CQE)
		return -EINVAL;
	if (!fake_params.cycles || fake_params.stall_ms < FAKE_MIN_STALL_MS ||
	    fake_params.stall_ms > FAKE_MAX_STALL_MS)
		return -EINVAL;
	if (!fake_params.duration_s ||
	    fake_params.duration_s > FAKE_MAX_DURATION_S)
		return -EINVAL;
	return 0;
}

/*
 * poll_ctx=, for fake_weak and ocq_wrid, and for fake_pause_resume on
 * softirq (a task's resumes); -EINVAL for anything else.
 */
static int fake_parse_poll_ctx(const struct fake_scenario *sc)
{
	int i;

	if (!fake_params.poll_ctx)
		return 0;
	if (strcmp(sc->name, "fake_weak") && strcmp(sc->name, "ocq_wrid") &&
	    (strcmp(sc->name, "fake_pause_resume") ||
	     strcmp(fake_params.poll_ctx, "softirq"))) {
		pr_err("poll_ctx= is for fake_weak and ocq_wrid (fake_pause_resume: softirq)\n");
		return -EINVAL;
	}
	i = ocq_test_poll_ctx(fake_params.poll_ctx);
	if (i < 0) {
		pr_err("unknown poll_ctx '%s'\n", fake_params.poll_ctx);
		return -EINVAL;
	}
	fake_poll_ctx = i;
	pr_info("# poll_ctx=%s\n", fake_params.poll_ctx);
	return 0;
}

static int __init fake_init(void)
{
	const struct fake_scenario *sc;

	if (fake_check_params()) {
		pr_err("completions %u..%u, cqe %u..%u, cycles >= 1, stall_ms %u..%u, duration_s 1..%u\n",
		       FAKE_MIN_COMPLETIONS, FAKE_MAX_COMPLETIONS, FAKE_MIN_CQE,
		       FAKE_MAX_CQE, FAKE_MIN_STALL_MS, FAKE_MAX_STALL_MS,
		       FAKE_MAX_DURATION_S);
		return -EINVAL;
	}
	sc = fake_find_scenario();
	if (!sc) {
		pr_err("unknown scenario '%s'\n", fake_params.scenario);
		return -EINVAL;
	}
	if (fake_parse_poll_ctx(sc))
		return -EINVAL;
	return fake_run_scenario(sc);
}

static void __exit fake_exit(void)
{
	pr_info("# exit\n");
}

module_init(fake_init);
module_exit(fake_exit);
MODULE_DESCRIPTION("ordered CQ engine tests against a fake provider");
MODULE_LICENSE("Dual BSD/GPL");
