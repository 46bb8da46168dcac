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
 * KTAP subtest (two for fake_lossy and fake_pause_resume).
 *
 * Scenarios, by what the provider does:
 *
 * fake_weak: an event only for entries added after arming (IBA-weak, rxe);
 *	REPORT_MISSED returns 1 iff the CQ is not empty, and arms anyway.
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
 *	scenario's CQ may be moderated.
 * fake_provider_error: weak, but poll_cq and req_notify_cq fail with -EIO
 *	one call in %FAKE_EIO_EVERY: the engine must back off and retry by
 *	itself (no watchdog), and count it in provider_errors.
 * fake_resume_race: weak, with a slow req_notify_cq; %IB_OCQ_POSTPONE_ARM,
 *	the longest pause_ms, a resumer kthread per CPU: after the last
 *	resume, everything pushed before and after it must arrive, and no
 *	lease may have ended a postponed arm.
 *
 * Five scenarios have a run of their own (one subtest per case):
 *
 * fake_flow_hol: %IB_OCQ_FLOW, two flows: while one works through a backlog
 *	of 5 ms done() calls, each completion of the other waits for at most
 *	%IB_OCQ_HOL_DONES + %FAKE_HOL_SLACK of them, whatever the backlog.
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
 *
 * poll_ctx= (fake_weak only): the OCQ comes from ib_ocq_alloc_cq() with that
 * poll context (workqueue, unbound, softirq or direct), and done() also checks
 * that it runs where the context promises: a workqueue worker (unbound: one
 * not bound to a CPU), the softirq, or (direct) one of %FAKE_POLLERS kthreads
 * calling ib_ocq_process_cq_direct() side by side.  Direct refuses
 * %IB_OCQ_PARALLEL: that subtest checks the -EINVAL.
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
#include <linux/bitmap.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/hash.h>
#include <linux/hrtimer.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/wait.h>
#include <rdma/ib_ocq.h>
#include <rdma/ib_verbs.h>

#include "ocq_test_compat.h"
#include "ocq_test_ctx.h"

static char *scenario = "fake_weak";
module_param(scenario, charp, 0444);
MODULE_PARM_DESC(scenario, "scenario to run at load time (fake_weak, ...)");

static unsigned int completions = 100000;
module_param(completions, uint, 0444);
MODULE_PARM_DESC(completions, "completions per mode, over all its cycles");

static unsigned int cqe = 256;
module_param(cqe, uint, 0444);
MODULE_PARM_DESC(cqe, "CQ entries, shared out as producer credits");

static unsigned int cycles = 40;
module_param(cycles, uint, 0444);
MODULE_PARM_DESC(cycles, "create/free cycles, per mode in fake_teardown_race");

static unsigned int stall_ms = 10000;
module_param(stall_ms, uint, 0444);
MODULE_PARM_DESC(stall_ms, "a run without progress for this long has stalled");

static unsigned int seed = 1;
module_param(seed, uint, 0444);
MODULE_PARM_DESC(seed, "seed of the producers' and the CQ's random choices");

static char *path = "strict";
module_param(path, charp, 0444);
MODULE_PARM_DESC(path, "alloc_fail: the create path (strict, flow_4, ...)");

static char *device = "";
module_param(device, charp, 0444);
MODULE_PARM_DESC(device, "alloc_fail: a real device to create on; empty: fake");

static unsigned int duration_s = 30;
module_param(duration_s, uint, 0444);
MODULE_PARM_DESC(duration_s, "soak: how long to run, in seconds");

static char *poll_ctx;
module_param(poll_ctx, charp, 0444);
MODULE_PARM_DESC(poll_ctx, "fake_weak: workqueue, unbound, softirq or direct");

/* poll_ctx=direct: kthreads polling the CQ side by side, and their budget */
#define FAKE_POLLERS 2
#define FAKE_DIRECT_BUDGET 16

/* Bounds of the parameters. */
#define FAKE_MIN_COMPLETIONS 100
#define FAKE_MAX_COMPLETIONS (100 * 1000 * 1000)
#define FAKE_MIN_CQE 16
#define FAKE_MAX_CQE 4096
#define FAKE_MIN_STALL_MS 100
#define FAKE_MAX_STALL_MS (10 * 60 * 1000)
#define FAKE_MAX_DURATION_S (7 * 24 * 3600)

/* Most completions a producer pushes before it looks at its credits again. */
#define FAKE_BURST 8
/* How often the waiting test thread looks at the progress. */
#define FAKE_POLL_MS 5
/* Delay of a deferred (hrtimer) event. */
#define FAKE_EVENT_NS (2 * NSEC_PER_USEC)
/* Period of fake_spurious's callback timer. */
#define FAKE_SPURIOUS_NS (200 * NSEC_PER_USEC)
/* fake_spurious: a stale interrupt after one draining poll in this many. */
#define FAKE_STALE 4
/* One push in this many to an unarmed CQ lands late, see fake_cq_push(). */
#define FAKE_LATE 8
/*
 * fake_lossy: event number FAKE_LOSS_FIRST of a CQ is dropped, then one in
 * FAKE_LOSS: every stream of a few events loses one (flow and parallel
 * mode arm rarely: a stream may raise a few dozen events only).
 */
#define FAKE_LOSS 64
#define FAKE_LOSS_FIRST 8
/* fake_lossy: the safety net's period, and the stall bound without it. */
#define FAKE_WATCHDOG_MS 10
#define FAKE_LOSSY_STALL_MS 500
/* teardown cycles freed halfway: a period whose ticks race the free */
#define FAKE_WATCHDOG_RACE_MS 1
/*
 * The safety net's period where a rescue after a stall is a failure: a
 * short stream on a provider that loses nothing, without the pauser (whose
 * resumes would heal a lost wakeup first), drained and its statistics
 * checked.  A tick starts a run only if no event came since the last tick.
 * Such a stream, with its drain and free, takes tens of milliseconds under
 * TCG (the longest wait for progress seen is about 20 ms), so the watchdog
 * rarely looks at all.  A lost wakeup stops the stream until a tick finds
 * it, one to two periods, well inside the stall bound: a rescue with a gap
 * in the progress of half a period or more fails the stream.  A rescue
 * without such a gap is a tick that fell between an unstall's clear and its
 * kick of a parked CQ run (unarmed, so no events): nothing was lost.
 */
#define FAKE_WATCHDOG_LONG_MS 1000
/* fake_lossy without the watchdog: streams to try until one stalls */
#define FAKE_LOSSY_TRIES 5
/*
 * fake_perpetual: stall bound.  The CQ run polls flat out (no return ever
 * proves the CQ armed) on a high priority worker, and the producer bound to
 * its CPU gets the leftovers: gaps in progress over 10 s were seen under TCG.
 */
#define FAKE_PERPETUAL_STALL_MS (30 * 1000)
/* fake_concurrent: how long one side of an event waits for the other. */
#define FAKE_MEET_NS (50 * NSEC_PER_USEC)
/* fake_pause_resume: range of the pauser's sleeps, in microseconds. */
#define FAKE_PAUSE_MIN_US 50
#define FAKE_PAUSE_SPAN_US 1000
/* fake_pause_resume, postponed arm: done() arms every this many. */
#define FAKE_CONSUMER_ARM 64
/* fake_teardown_race: one cycle in this many frees the OCQ undrained. */
#define FAKE_ABRUPT_CYCLE 4
/* Violations of one kind printed in full; the rest are only counted. */
#define FAKE_MAX_REPORTS 3
/* soak: a cycle's completions, FAKE_MIN_COMPLETIONS plus up to this many */
#define FAKE_SOAK_SPAN 2000
/* soak: seconds between progress lines */
#define FAKE_SOAK_REPORT_S 10
/* soak: percentage of the time spent in bulk cycles */
#define FAKE_SOAK_BULK_PCT 90
/* soak: a bulk cycle's length, in seconds at the rate measured so far */
#define FAKE_SOAK_BULK_MIN_S 2
#define FAKE_SOAK_BULK_SPAN_S 6
/* soak: bounds of a bulk cycle's completions, and the first cycle's */
#define FAKE_SOAK_BULK_MIN (64 * 1024)
#define FAKE_SOAK_BULK_MAX (256 * 1024 * 1024)
#define FAKE_SOAK_BULK_FIRST (256 * 1024)
/* bulk: most completions pushed under one hold of the CQ lock */
#define FAKE_BULK_CHUNK 64

/* Provider semantics of a fake CQ. */
#define FAKE_STRONG BIT(0) /* arming with entries pending fires at once */
#define FAKE_CB_AND_1 BIT(1) /* REPORT_MISSED: fire and return 1 */
#define FAKE_SPURIOUS BIT(2) /* callbacks with nothing new */
#define FAKE_CONCURRENT BIT(3) /* each event on two CPUs at once */
#define FAKE_LOSSY BIT(4) /* drop an event now and then */
#define FAKE_PERPETUAL BIT(5) /* REPORT_MISSED: always 1, never armed */
#define FAKE_EIO BIT(6) /* poll_cq and req_notify_cq fail now and then */
#define FAKE_PROMPT BIT(7) /* completions never land late */
#define FAKE_TRICKLE BIT(8) /* poll_cq returns one completion at a time */
#define FAKE_SLOW_ARM BIT(9) /* req_notify_cq returns a while after arming */
#define FAKE_DIM BIT(10) /* the device wants DIM (use_cq_dim) */

/* fake_dim: the profiles of ocq's DIM, as Documentation/api.rst gives them */
#define FAKE_DIM_PROFILES 9
/*
 * fake_dim: paced rounds of 1, 2, 4 ... 64 completions, each size for two
 * of DIM's samples (DIM_NEVENTS events each) at least.
 */
#define FAKE_DIM_PHASE 128
#define FAKE_DIM_PHASES 7
#define FAKE_DIM_TAIL (FAKE_DIM_PHASE * ((1U << FAKE_DIM_PHASES) - 1))

/* fake_resume_race: how long req_notify_cq takes after the arm took effect */
#define FAKE_SLOW_ARM_US 50

/* fake_provider_error: one poll_cq or req_notify_cq call in this many fails */
#define FAKE_EIO_EVERY 16
/*
 * fake_small_ring: the producers' credits in all, more than the engine's
 * rings (cq->cqe entries, 256 by default) hold, and a slow done()
 */
#define FAKE_SMALL_RING_CREDITS 2048
#define FAKE_SMALL_RING_DONE_US 2
/* fake_resume_race: streams per mode */
#define FAKE_RACE_CYCLES 50

/* How an event reaches the completion handler. */
enum fake_ctx {
	FAKE_CTX_PROCESS, /* the producer calls it */
	FAKE_CTX_HARDIRQ, /* an hrtimer in hard irq */
	FAKE_CTX_SOFTIRQ, /* an hrtimer in softirq */
	FAKE_NR_CTX,
};

/* State of a request. */
enum {
	FAKE_FREE,
	FAKE_QUEUED, /* pushed to the CQ */
	FAKE_PROCESSED, /* %IB_OCQ_PARALLEL: process() ran */
};

/*
 * Locking rules.
 *
 * I: set before the CQ is published, read-only afterwards.
 * L: fake_cq.lock.
 * A: atomic.
 * P: the flow's producer kthread.
 * D: done() of the flow's domain (never concurrent, which done() checks).
 */

/**
 * struct fake_dev - the fake provider's device, never registered
 * @ibdev: the device
 * @sem: semantics of the next CQ created (I)
 * @rnd: seed of the next CQ's random choices (I)
 * @ring: the next CQ's ring holds at least this many entries, whatever
 *	cq->cqe says (fake_small_ring: more outstanding than the engine's
 *	rings, which cq->cqe sizes); 0 for cq->cqe (I)
 */
struct fake_dev {
	struct ib_device ibdev;
	unsigned int sem;
	u32 rnd;
	u32 ring;
};

/**
 * struct fake_cq - a fake provider CQ: a ring under a spinlock
 * @ibcq: the CQ
 * @lock: protects the ring and the notify state
 * @ring: completions (L)
 * @mask: ring size - 1 (I)
 * @head: next slot pushed (L)
 * @visible: slots before it are visible to poll_cq (L)
 * @tail: next slot polled (L)
 * @sem: FAKE_* semantics (I)
 * @armed: a notification was requested (L)
 * @quiesced: no more deferred or remote events (L)
 * @ticking: fake_spurious's timer was started (L)
 * @rnd: random state of the CQ's choices (L)
 * @pushed: completions pushed, the next CQ position (L)
 * @polls: poll_cq calls (L)
 * @armed_polls: of those, on an armed CQ: after an arm, before its event (L)
 * @arms: req_notify_cq calls (L)
 * @positive: req_notify_cq calls that returned 1 (L)
 * @arm_events: events raised by req_notify_cq itself (L)
 * @dropped: events fake_lossy dropped (L)
 * @due: events that were due, fake_lossy (L)
 * @overruns: pushes that found the ring full (L)
 * @errors: poll_cq and req_notify_cq calls that failed, fake_provider_error (L)
 * @hard: deferred event timer, hard irq
 * @soft: deferred event timer, softirq
 * @spurious: fake_spurious's periodic callback timer
 * @csd: fake_concurrent's call on the other CPU
 * @remote_busy: @csd is queued or running (A)
 * @meet: fake_concurrent's rendezvous of the two sides of an event (A)
 * @in_cb: callbacks running now (A)
 * @callbacks: completion handler calls (A)
 * @empty_callbacks: of those, with the CQ empty (A)
 * @overlaps: callbacks that began while another one ran (A)
 * @injector: fake_teardown_race's late callback kthread, stopped by
 *	destroy_cq (I: set before ib_ocq_free)
 * @moderations: modify_cq calls (L)
 * @bad_moderations: of those, with a count and period of no DIM profile (L)
 * @mod_ix: the profile of the last modify_cq call, or -1 (L)
 * @mod_seen: bit N: profile N was asked for (L)
 */
struct fake_cq {
	struct ib_cq ibcq;
	spinlock_t lock; /* the ring and the notify state */
	struct ib_wc *ring;
	u32 mask;
	u32 head;
	u32 visible;
	u32 tail;
	unsigned int sem;
	bool armed;
	bool quiesced;
	bool ticking;
	u32 rnd;
	u64 pushed;
	u64 polls;
	u64 armed_polls;
	u64 arms;
	u64 positive;
	u64 arm_events;
	u64 dropped;
	u64 due;
	u64 overruns;
	u64 errors;
	struct hrtimer hard;
	struct hrtimer soft;
	struct hrtimer spurious;
	call_single_data_t csd;
	atomic_t remote_busy;
	atomic_t meet;
	atomic_t in_cb;
	atomic_long_t callbacks;
	atomic_long_t empty_callbacks;
	atomic_long_t overlaps;
	struct task_struct *injector;
	u64 moderations;
	u64 bad_moderations;
	int mod_ix;
	unsigned long mod_seen;
};

struct fake_run;
struct fake_scenario;

/* Kinds of violation, indexes of fake_run.reports. */
enum {
	FAKE_V_CONCURRENT,
	FAKE_V_AFTER_FREE,
	FAKE_V_TWICE,
	FAKE_V_STATE,
	FAKE_V_ORDER,
	FAKE_V_PROCESS,
	FAKE_V_CONTEXT,
	FAKE_NR_V,
};

/**
 * struct fake_req - one work request of a producer
 * @cqe: its completion's wr_cqe
 * @flow: the producer
 * @seq: sequence number within the flow (P)
 * @pos: position in the CQ, given under the CQ lock (L)
 * @state: FAKE_FREE, FAKE_QUEUED, FAKE_PROCESSED (A)
 */
struct fake_req {
	struct ib_cqe cqe;
	struct fake_flow *flow;
	u32 seq;
	u64 pos;
	atomic_t state;
};

/**
 * struct fake_flow - a producer kthread and its flow
 * @run: the run it belongs to (I)
 * @qp: its fake QP, only qp_num set: the engine's default flow key (I)
 * @reqs: its requests, one per credit (I)
 * @credits: completions it may have outstanding (I)
 * @quota: completions it pushes (I)
 * @rnd: random state (P)
 * @pushed: completions pushed (P; read by the test once @finished)
 * @completed: done() calls; returns credits (A, written by D)
 * @inside: done() calls of the flow running now (A)
 * @finished: @pushed is final (A)
 * @wq: the producer waits here for credits
 * @task: the kthread
 * @cpu: the CPU it is bound to
 */
struct fake_flow {
	struct fake_run *run;
	struct ib_qp qp;
	struct fake_req *reqs;
	u32 credits;
	u32 quota;
	u32 rnd;
	u32 pushed;
	atomic_t completed;
	atomic_t inside;
	bool finished;
	wait_queue_head_t wq;
	struct task_struct *task;
	int cpu;
};

/**
 * struct fake_run - one subtest: a mode of a scenario on a fresh OCQ
 * @name: subtest name
 * @sc: the scenario
 * @mode: ordering domains
 * @attr: how the OCQ is made
 * @ocq: the OCQ
 * @fcq: its fake CQ
 * @flows: the producers
 * @nr_flows: producers in @flows
 * @total: completions to push
 * @cqe: CQ entries asked for, shared out as the producers' credits
 * @credits: the producers' credits in all, if not @cqe (fake_small_ring)
 * @done_us: every done() takes this long (fake_small_ring)
 * @bulk: producers push in batches; no @seen, done() checks sequences only
 * @seen: CQ positions done() saw; NULL in a bulk run
 * @delivered: done() calls (A)
 * @next_pos: next CQ position done() expects, strict and parallel (D)
 * @inside: done() calls running now, strict and parallel (A)
 * @failures: failed checks (A)
 * @reports: printed violations per kind (A)
 * @abort: producers stop early (A)
 * @freed: ib_ocq_free() returned (A)
 * @pause: run a pauser kthread while streaming (fake_pause_resume)
 * @inject: free the OCQ under late callbacks (fake_teardown_race)
 * @abrupt: free it halfway through the stream, undrained
 * @undelivered: completions abrupt frees left undelivered
 * @max_gap: longest time without a done(), in jiffies
 * @quiet: print nothing but failures
 * @pauser: the pause/resume kthread
 * @pause_calls: ib_ocq_pause() calls of the test (A)
 * @alloc_ret: what the last ib_ocq_alloc() returned, 0 or -errno
 * @poll_ctx: the OCQ's poll context (I)
 * @pollers: poll_ctx=direct: the kthreads that poll the CQ
 * @dim_tail: fake_dim: completions flow 0 leaves to fake_dim_drive()
 */
struct fake_run {
	char name[32];
	const struct fake_scenario *sc;
	enum ib_ocq_mode mode;
	struct ib_ocq_attr attr;
	struct ib_ocq *ocq;
	struct fake_cq *fcq;
	struct fake_flow *flows;
	unsigned int nr_flows;
	u64 total;
	unsigned int cqe;
	unsigned int credits;
	unsigned int done_us;
	bool bulk;
	unsigned long *seen;
	atomic_long_t delivered;
	u64 next_pos;
	atomic_t inside;
	atomic_t failures;
	atomic_t reports[FAKE_NR_V];
	bool abort;
	bool freed;
	bool pause;
	bool inject;
	bool abrupt;
	bool quiet;
	u32 dim_tail;
	u64 undelivered;
	unsigned long max_gap;
	struct task_struct *pauser;
	atomic_long_t pause_calls;
	int alloc_ret;
	enum ib_poll_context poll_ctx;
	struct task_struct *pollers[FAKE_POLLERS];
};

/* from poll_ctx=, before the scenario runs */
static enum ib_poll_context fake_poll_ctx = IB_POLL_WORKQUEUE;

/* KTAP result counters of the module. */
struct fake_ktap {
	unsigned int nr;
	unsigned int failed;
	unsigned int skipped;
};

#define FAKE_NR_MODES (IB_OCQ_PARALLEL + 1)

static const char *const fake_mode_names[] = {
	[IB_OCQ_STRICT] = "strict",
	[IB_OCQ_FLOW] = "flow",
	[IB_OCQ_PARALLEL] = "parallel",
};

/*
 * What a stream makes and must give back, besides the OCQ: fake CQ rings
 * and kthreads.  Zero between streams; the plumbing counts the rest.
 */
static atomic_t fake_objects = ATOMIC_INIT(0);

/* xorshift32: cheap, reproducible from seed=, never 0 from a non-0 state. */
static u32 fake_rand(u32 *state)
{
	u32 x = *state;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*state = x;
	return x;
}

static u32 fake_seed(unsigned int salt)
{
	return (seed ^ (salt * 0x9e3779b9)) | 1;
}

static struct fake_cq *to_fake_cq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct fake_cq, ibcq);
}

static struct fake_dev *to_fake_dev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct fake_dev, ibdev);
}

/* --- the fake provider: events --- */

/* Call the completion handler, counting what it finds. */
static void fake_callback(struct fake_cq *fcq)
{
	if (atomic_inc_return(&fcq->in_cb) > 1)
		atomic_long_inc(&fcq->overlaps);
	atomic_long_inc(&fcq->callbacks);
	/* racy on purpose: a sample of the CQ as the handler finds it */
	if (READ_ONCE(fcq->head) == READ_ONCE(fcq->tail))
		atomic_long_inc(&fcq->empty_callbacks);
	fcq->ibcq.comp_handler(&fcq->ibcq, fcq->ibcq.cq_context);
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
static void fake_direct(struct fake_cq *fcq)
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
 * Raise an event from a timer.  Under the CQ lock, so that a run the timer's
 * callback starts polls after the push that raised it; a timer already
 * queued has not called the handler yet and covers this event too.
 */
static void fake_defer(struct fake_cq *fcq, struct hrtimer *t,
		       enum hrtimer_mode mode)
{
	lockdep_assert_held(&fcq->lock);
	if (fcq->quiesced || hrtimer_is_queued(t))
		return;
	hrtimer_start(t, ns_to_ktime(FAKE_EVENT_NS), mode);
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
	if (direct && (fcq->sem & FAKE_CONCURRENT))
		return true;
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
static void fake_cq_quiesce(struct fake_cq *fcq)
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
	while (n < num_entries && fcq->tail != fcq->visible)
		wc[n++] = fcq->ring[fcq->tail++ & fcq->mask];
	/* fake_spurious: an interrupt for entries this poll already took */
	if ((fcq->sem & FAKE_SPURIOUS) && n && fcq->tail == fcq->head &&
	    !(fake_rand(&fcq->rnd) % FAKE_STALE))
		fake_defer(fcq, &fcq->soft, HRTIMER_MODE_REL_SOFT);
	spin_unlock_irqrestore(&fcq->lock, flags);
	return n;
}

/* Arm; the return value of req_notify_cq.  Under the CQ lock. */
static int fake_arm(struct fake_cq *fcq, enum ib_cq_notify_flags flags)
{
	bool missed = flags & IB_CQ_REPORT_MISSED_EVENTS;
	bool pending;

	/* the doorbell is ordered after every CQE the HCA wrote: they land */
	fcq->visible = fcq->head;
	pending = fcq->head != fcq->tail;
	/* fake_perpetual: "missed events", always, and the CQ stays unarmed */
	if ((fcq->sem & FAKE_PERPETUAL) && missed)
		return 1;
	/* strong: the doorbell compares against the consumer index */
	if ((fcq->sem & FAKE_STRONG) && pending) {
		fcq->armed = false;
		fcq->arm_events++;
		fake_event(fcq, false);
		return 0;
	}
	fcq->armed = true;
	if (!missed || !pending)
		return 0;
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
static bool fake_cq_add(struct fake_cq *fcq, struct fake_req *req,
			const struct ib_wc *wc)
{
	lockdep_assert_held(&fcq->lock);
	if (fcq->head - fcq->tail > fcq->mask) {
		fcq->overruns++;
		return false;
	}
	req->pos = fcq->pushed++;
	fcq->ring[fcq->head & fcq->mask] = *wc;
	WRITE_ONCE(fcq->head, fcq->head + 1);
	return true;
}

/*
 * The completions added land and raise an event if the CQ was armed.  Now
 * and then, on an unarmed CQ, they land late: poll_cq does not see them
 * yet, but req_notify_cq does (it lands everything), so arming finds
 * entries pending as on real hardware when a completion races with the
 * consumer's last poll.  Under the CQ lock; return true if the caller must
 * deliver the event with fake_direct() once it dropped the lock.
 */
static bool fake_cq_land(struct fake_cq *fcq)
{
	lockdep_assert_held(&fcq->lock);
	if (fcq->armed || (fcq->sem & FAKE_PROMPT) ||
	    fake_rand(&fcq->rnd) % FAKE_LATE)
		fcq->visible = fcq->head;
	if (!fcq->armed)
		return false;
	fcq->armed = false;
	return fake_event(fcq, true);
}

/* Add one completion and let it land.  Return false on overrun. */
static bool fake_cq_push(struct fake_cq *fcq, struct fake_req *req,
			 const struct ib_wc *wc)
{
	unsigned long flags;
	bool direct;

	spin_lock_irqsave(&fcq->lock, flags);
	if (!fake_cq_add(fcq, req, wc)) {
		spin_unlock_irqrestore(&fcq->lock, flags);
		return false;
	}
	direct = fake_cq_land(fcq);
	spin_unlock_irqrestore(&fcq->lock, flags);
	if (direct)
		fake_direct(fcq);
	return true;
}

/* fake_drain_paused: the QPs of that scenario, drained */
static void fake_drain_sq(struct ib_qp *qp);
static void fake_drain_rq(struct ib_qp *qp);

static const struct ib_device_ops fake_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.create_cq = fake_create_cq,
	.destroy_cq = fake_destroy_cq,
	.poll_cq = fake_poll_cq,
	.req_notify_cq = fake_req_notify_cq,
	.modify_cq = fake_modify_cq,
	.drain_sq = fake_drain_sq,
	.drain_rq = fake_drain_rq,
	INIT_RDMA_OBJ_SIZE(ib_cq, fake_cq, ibcq),
};

static struct fake_dev *fake_dev_alloc(void)
{
	struct fake_dev *fdev;

	fdev = ib_alloc_device(fake_dev, ibdev);
	if (!fdev)
		return NULL;
	ib_set_device_ops(&fdev->ibdev, &fake_dev_ops);
	fdev->ibdev.num_comp_vectors = 1;
	return fdev;
}

/* --- the ULP side: done(), process() and the producers --- */

static void fake_violation(struct fake_run *r, unsigned int kind,
			   const char *what, const struct fake_req *req)
{
	atomic_inc(&r->failures);
	if (atomic_inc_return(&r->reports[kind]) > FAKE_MAX_REPORTS)
		return;
	pr_info("# %s: %s: flow %u seq %u pos %llu\n", r->name, what,
		req->flow->qp.qp_num, req->seq, req->pos);
}

/* Order within the domain: CQ order, or flow order in %IB_OCQ_FLOW. */
static void fake_check_order(struct fake_run *r, struct fake_req *req)
{
	struct fake_flow *f = req->flow;

	if (req->seq != (u32)atomic_read(&f->completed))
		fake_violation(r, FAKE_V_ORDER, "out of flow order", req);
	if (r->mode == IB_OCQ_FLOW)
		return;
	if (req->pos != r->next_pos)
		fake_violation(r, FAKE_V_ORDER, "out of CQ order", req);
	r->next_pos = req->pos + 1;
}

/*
 * A completion delivered again: its CQ position was seen (a short run's
 * bitmap), or (a bulk run) its request was already given back.  A copy
 * that comes after the request was reused fails fake_check_order().
 */
static bool fake_seen_twice(struct fake_run *r, struct fake_req *req, int state)
{
	if (req->pos >= r->total)
		return true;
	if (r->seen)
		return test_and_set_bit(req->pos, r->seen);
	return state == FAKE_FREE;
}

/*
 * Bulk: free credits for a batch, half the flow's credits (or what is left
 * of its quota).  Read by done() as well, to wake the producer only then.
 */
static bool fake_bulk_room(struct fake_flow *f)
{
	u32 pushed = READ_ONCE(f->pushed);
	u32 room = f->credits - (pushed - (u32)atomic_read(&f->completed));

	return room >= min(max(f->credits / 2, 1U), f->quota - pushed);
}

static bool fake_is_poller(struct fake_run *r)
{
	unsigned int i;

	for (i = 0; i < FAKE_POLLERS; i++)
		if (READ_ONCE(r->pollers[i]) == current)
			return true;
	return false;
}

/* poll_ctx=: done() runs where the poll context promises. */
static bool fake_in_promised_ctx(struct fake_run *r)
{
	return ocq_test_in_ctx(r->poll_ctx, fake_is_poller(r));
}

/* What done() checks and does, for an OCQ's done() or a helper's consumer. */
static void fake_deliver(struct fake_run *r, struct fake_req *req)
{
	struct fake_flow *f = req->flow;
	atomic_t *inside = r->mode == IB_OCQ_FLOW ? &f->inside : &r->inside;
	int want = r->mode == IB_OCQ_PARALLEL ? FAKE_PROCESSED : FAKE_QUEUED;
	int state;

	if (atomic_inc_return(inside) != 1)
		fake_violation(r, FAKE_V_CONCURRENT, "done() concurrent", req);
	if (poll_ctx && r->ocq && !fake_in_promised_ctx(r))
		fake_violation(r, FAKE_V_CONTEXT, "done() in the wrong context",
			       req);
	if (READ_ONCE(r->freed))
		fake_violation(r, FAKE_V_AFTER_FREE, "done() after free", req);
	state = atomic_xchg(&req->state, FAKE_FREE);
	if (fake_seen_twice(r, req, state))
		fake_violation(r, FAKE_V_TWICE, "seen twice", req);
	else if (state != want)
		fake_violation(r, FAKE_V_STATE, "not processed or not queued",
			       req);
	fake_check_order(r, req);
	if (r->done_us)
		udelay(r->done_us);
	atomic_dec(inside);

	/* fake_pause_resume, postponed arm: the consumer arms when it likes */
	if ((r->attr.flags & IB_OCQ_POSTPONE_ARM) &&
	    !(atomic_long_read(&r->delivered) % FAKE_CONSUMER_ARM))
		ib_ocq_resume(r->ocq);
	atomic_long_inc(&r->delivered);
	/* the request is reused after this: pairs with fake_has_credit() */
	atomic_inc_return_release(&f->completed);
	/* bulk: the producer waits for fake_bulk_room(), which @pushed fixes */
	if ((!r->bulk || fake_bulk_room(f)) && wq_has_sleeper(&f->wq))
		wake_up(&f->wq);
}

static void fake_done(struct ib_cq *cq, struct ib_wc *wc)
{
	fake_deliver(ib_ocq_private(cq),
		     container_of(wc->wr_cqe, struct fake_req, cqe));
}

/* %IB_OCQ_PARALLEL: runs before done(), on any CPU, in any order. */
static void fake_process(struct ib_cq *cq, struct ib_wc *wc)
{
	struct fake_req *req = container_of(wc->wr_cqe, struct fake_req, cqe);
	struct fake_run *r = ib_ocq_private(cq);

	if (atomic_cmpxchg(&req->state, FAKE_QUEUED, FAKE_PROCESSED) !=
	    FAKE_QUEUED)
		fake_violation(r, FAKE_V_PROCESS, "process() twice", req);
	/* finish out of order now and then: the commit step must reorder */
	if (!(req->pos % 7))
		udelay(2);
}

static bool fake_has_credit(struct fake_flow *f)
{
	/* pairs with atomic_inc_return_release() in fake_done() */
	return f->pushed - (u32)atomic_read_acquire(&f->completed) < f->credits;
}

static bool fake_may_push(struct fake_flow *f)
{
	return fake_has_credit(f) || READ_ONCE(f->run->abort);
}

static bool fake_bulk_may_push(struct fake_flow *f)
{
	return fake_bulk_room(f) || READ_ONCE(f->run->abort);
}

static void fake_push(struct fake_flow *f)
{
	struct fake_req *req = &f->reqs[f->pushed % f->credits];
	struct fake_run *r = f->run;
	struct ib_wc wc = {
		.wr_cqe = &req->cqe,
		.status = IB_WC_SUCCESS,
		.opcode = IB_WC_SEND,
		.qp = &f->qp,
	};

	req->seq = f->pushed;
	atomic_set(&req->state, FAKE_QUEUED);
	if (!fake_cq_push(r->fcq, req, &wc))
		atomic_inc(&r->failures);
	f->pushed++;
}

/*
 * Bulk: push @n completions, up to %FAKE_BULK_CHUNK under one hold of the CQ
 * lock, as an HCA writing a burst of CQEs; they land chunk by chunk.
 */
static void fake_push_batch(struct fake_flow *f, u32 n)
{
	struct fake_run *r = f->run;
	struct fake_cq *fcq = r->fcq;
	unsigned long flags;
	unsigned int chunk;
	bool direct;

	while (n) {
		chunk = min_t(u32, n, FAKE_BULK_CHUNK);
		n -= chunk;
		spin_lock_irqsave(&fcq->lock, flags);
		while (chunk--) {
			struct fake_req *req = &f->reqs[f->pushed % f->credits];
			struct ib_wc wc = {
				.wr_cqe = &req->cqe,
				.status = IB_WC_SUCCESS,
				.opcode = IB_WC_SEND,
				.qp = &f->qp,
			};

			req->seq = f->pushed;
			atomic_set(&req->state, FAKE_QUEUED);
			if (!fake_cq_add(fcq, req, &wc))
				atomic_inc(&r->failures);
			/* read by fake_bulk_room() in done() */
			WRITE_ONCE(f->pushed, f->pushed + 1);
		}
		direct = fake_cq_land(fcq);
		spin_unlock_irqrestore(&fcq->lock, flags);
		if (direct)
			fake_direct(fcq);
	}
}

/*
 * Bulk: the free credits, or now and then a random part of them, once at
 * least half the credits are free.
 */
static void fake_produce_bulk(struct fake_flow *f)
{
	u32 room, n;

	if (!fake_bulk_room(f)) {
		wait_event_timeout(f->wq, fake_bulk_may_push(f), HZ / 10);
		return;
	}
	room = f->credits -
	       (f->pushed - (u32)atomic_read_acquire(&f->completed));
	n = min(room, f->quota - f->pushed);
	if (!(fake_rand(&f->rnd) % 4))
		n = 1 + fake_rand(&f->rnd) % n;
	fake_push_batch(f, n);
	cond_resched();
}

/* Wait, not holding the CPU, for kthread_stop(). */
static void fake_wait_stop(void)
{
	set_current_state(TASK_INTERRUPTIBLE);
	while (!kthread_should_stop()) {
		schedule();
		set_current_state(TASK_INTERRUPTIBLE);
	}
	__set_current_state(TASK_RUNNING);
}

/*
 * A producer: pushes its quota in random bursts, never more than its
 * credits outstanding, as a ULP that sized its CQ would.
 */
static int fake_producer(void *arg)
{
	struct fake_flow *f = arg;
	struct fake_run *r = f->run;
	unsigned int burst;

	while (f->pushed < f->quota && !READ_ONCE(r->abort)) {
		if (r->bulk) {
			fake_produce_bulk(f);
			continue;
		}
		if (!fake_has_credit(f)) {
			wait_event_timeout(f->wq, fake_may_push(f), HZ / 10);
			continue;
		}
		burst = 1 + fake_rand(&f->rnd) % FAKE_BURST;
		while (burst-- && f->pushed < f->quota && fake_has_credit(f))
			fake_push(f);
		cond_resched();
	}
	/* pairs with smp_load_acquire() in fake_finished() */
	smp_store_release(&f->finished, true);
	fake_wait_stop();
	return 0;
}

/* fake_pause_resume: pause and resume at random, arm now and then. */
static int fake_pauser(void *arg)
{
	struct fake_run *r = arg;
	bool postpone = r->attr.flags & IB_OCQ_POSTPONE_ARM;
	u32 rnd = fake_seed(r->mode + 100);
	unsigned int us;

	while (!kthread_should_stop()) {
		us = FAKE_PAUSE_MIN_US + fake_rand(&rnd) % FAKE_PAUSE_SPAN_US;
		usleep_range(us, us + FAKE_PAUSE_MIN_US);
		if (!postpone || !(fake_rand(&rnd) % 4)) {
			ib_ocq_pause(r->ocq);
			atomic_long_inc(&r->pause_calls);
			usleep_range(FAKE_PAUSE_MIN_US, 2 * FAKE_PAUSE_MIN_US);
		}
		ib_ocq_resume(r->ocq);
	}
	return 0;
}

/* fake_teardown_race: late callbacks until destroy_cq stops it. */
static int fake_injector(void *arg)
{
	struct fake_cq *fcq = arg;

	while (!kthread_should_stop()) {
		fake_callback(fcq);
		cond_resched();
	}
	return 0;
}

/* --- one run: create, stream, wait, check --- */

static bool fake_finished(struct fake_run *r)
{
	unsigned int i;

	for (i = 0; i < r->nr_flows; i++) {
		/* pairs with smp_store_release() in fake_producer() */
		if (!smp_load_acquire(&r->flows[i].finished))
			return false;
	}
	return true;
}

/* Completions pushed; final once fake_finished(). */
static u64 fake_pushed(struct fake_run *r)
{
	unsigned int i;
	u64 n = 0;

	for (i = 0; i < r->nr_flows; i++)
		n += READ_ONCE(r->flows[i].pushed);
	return n;
}

/*
 * Wait until the producers are done and every completion they pushed was
 * delivered.  Return false if progress stopped for @bound_ms first.
 */
static bool fake_wait_delivered(struct fake_run *r, unsigned int bound_ms)
{
	unsigned long bound = msecs_to_jiffies(bound_ms);
	unsigned long last_change = jiffies;
	long last = -1, now;

	for (;;) {
		now = atomic_long_read(&r->delivered);
		/* the last gap too: a rescue may have ended it */
		if (now != last) {
			r->max_gap = max(r->max_gap, jiffies - last_change);
			last = now;
			last_change = jiffies;
		}
		if (fake_finished(r) && now == fake_pushed(r))
			return true;
		if (time_after(jiffies, last_change + bound))
			return false;
		msleep(FAKE_POLL_MS);
	}
}

/* Wait until the CQ is empty and armed: the next completion raises an event. */
static bool fake_wait_armed(struct fake_cq *fcq, unsigned int bound_ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(bound_ms);
	unsigned long flags;
	bool armed;

	for (;;) {
		spin_lock_irqsave(&fcq->lock, flags);
		armed = fcq->armed && fcq->head == fcq->tail;
		spin_unlock_irqrestore(&fcq->lock, flags);
		if (armed || time_after(jiffies, end))
			return armed;
		msleep(FAKE_POLL_MS);
	}
}

/* Wait until the engine stopped calling the provider (it is paused). */
static void fake_wait_quiet(struct fake_cq *fcq)
{
	unsigned long flags;
	u64 prev = ~0ULL, now;
	int i;

	for (i = 0; i < stall_ms / FAKE_POLL_MS; i++) {
		spin_lock_irqsave(&fcq->lock, flags);
		now = fcq->polls + fcq->arms;
		spin_unlock_irqrestore(&fcq->lock, flags);
		if (now == prev)
			return;
		prev = now;
		msleep(4 * FAKE_POLL_MS);
	}
}

static int fake_flows_alloc(struct fake_run *r)
{
	unsigned int i, j;
	u32 credits;

	r->nr_flows = num_online_cpus();
	r->flows = kcalloc(r->nr_flows, sizeof(*r->flows), GFP_KERNEL);
	if (!r->flows)
		return -ENOMEM;
	credits = roundup_pow_of_two(r->credits ?: r->cqe) / r->nr_flows;
	credits = max_t(u32, credits, 1);
	for (i = 0; i < r->nr_flows; i++) {
		struct fake_flow *f = &r->flows[i];

		f->run = r;
		f->qp.qp_num = 0x100 + i;
		f->credits = credits;
		f->quota = r->total / r->nr_flows;
		if (i < r->total % r->nr_flows)
			f->quota++;
		f->rnd = fake_seed(i + 1);
		init_waitqueue_head(&f->wq);
		f->reqs = kcalloc(credits, sizeof(*f->reqs), GFP_KERNEL);
		if (!f->reqs)
			return -ENOMEM;
		for (j = 0; j < credits; j++) {
			f->reqs[j].cqe.done = fake_done;
			f->reqs[j].flow = f;
		}
	}
	return 0;
}

static void fake_flows_free(struct fake_run *r)
{
	unsigned int i;

	for (i = 0; r->flows && i < r->nr_flows; i++)
		kfree(r->flows[i].reqs);
	kfree(r->flows);
	r->flows = NULL;
}

/* Reset what a stream checks, for a fresh OCQ. */
static void fake_run_reset(struct fake_run *r)
{
	unsigned int i;

	if (r->seen)
		bitmap_zero(r->seen, r->total);
	atomic_long_set(&r->delivered, 0);
	r->next_pos = 0;
	r->max_gap = 0;
	WRITE_ONCE(r->abort, false);
	WRITE_ONCE(r->freed, false);
	atomic_long_set(&r->pause_calls, 0);
	for (i = 0; i < r->nr_flows; i++) {
		struct fake_flow *f = &r->flows[i];

		f->pushed = 0;
		f->finished = false;
		atomic_set(&f->completed, 0);
	}
}

static int fake_ocq_create(struct fake_run *r, struct fake_dev *fdev)
{
	struct ib_cq *cq;

	r->poll_ctx = fake_poll_ctx;
	/*
	 * A direct CQ is never armed, and late completions land on an arm:
	 * there, they land at once, as a real CQE does once written.
	 */
	if (r->poll_ctx == IB_POLL_DIRECT)
		fdev->sem |= FAKE_PROMPT;
	/* read when the CQ is made, as ib_alloc_cq() does */
	fdev->ibdev.use_cq_dim = !!(fdev->sem & FAKE_DIM);
	if (poll_ctx) {
		cq = ib_ocq_alloc_cq(&fdev->ibdev, r, r->cqe, 0, r->poll_ctx,
				     &r->attr);
		r->ocq = IS_ERR(cq) ? ERR_CAST(cq) : ib_cq_to_ocq(cq);
	} else {
		r->ocq = ib_ocq_alloc(&fdev->ibdev, r, r->cqe, 0, &r->attr);
	}
	r->alloc_ret = PTR_ERR_OR_ZERO(r->ocq);
	if (IS_ERR(r->ocq)) {
		pr_info("# %s: ib_ocq_alloc: %ld\n", r->name, PTR_ERR(r->ocq));
		return PTR_ERR(r->ocq);
	}
	r->fcq = to_fake_cq(ib_ocq_cq(r->ocq));
	return 0;
}

static void fake_ocq_free(struct fake_run *r)
{
	ib_ocq_free(r->ocq);
	WRITE_ONCE(r->freed, true);
	r->ocq = NULL;
	r->fcq = NULL;
}

static int fake_producers_start(struct fake_run *r)
{
	unsigned int i = 0;
	int cpu;

	for_each_online_cpu(cpu) {
		struct fake_flow *f;

		if (i == r->nr_flows)
			break;
		f = &r->flows[i];
		f->cpu = cpu;
		f->task = kthread_create_on_cpu(fake_producer, f, cpu,
						"ocq_fake/%u");
		if (IS_ERR(f->task)) {
			int ret = PTR_ERR(f->task);

			f->task = NULL;
			return ret;
		}
		atomic_inc(&fake_objects);
		wake_up_process(f->task);
		i++;
	}
	/* CPUs went offline since: the missing producers push nothing */
	for (; i < r->nr_flows; i++) {
		/* pairs with smp_load_acquire() in fake_finished() */
		smp_store_release(&r->flows[i].finished, true);
	}
	return 0;
}

static void fake_producers_stop(struct fake_run *r)
{
	unsigned int i;

	WRITE_ONCE(r->abort, true);
	for (i = 0; i < r->nr_flows; i++) {
		if (!r->flows[i].task)
			continue;
		wake_up(&r->flows[i].wq);
		kthread_stop(r->flows[i].task);
		atomic_dec(&fake_objects);
		r->flows[i].task = NULL;
	}
}

static bool fake_check(struct fake_run *r, bool ok, const char *what)
{
	if (!ok) {
		atomic_inc(&r->failures);
		pr_info("# %s: check failed: %s\n", r->name, what);
	}
	return ok;
}

static void fake_print_stats(struct fake_run *r, const struct ib_ocq_stats *s)
{
	struct fake_cq *fcq = r->fcq;

	pr_info("# %s: stats completions=%llu events=%llu runs=%llu empty_runs=%llu polls=%llu arms=%llu repolls=%llu\n",
		r->name, s->completions, s->events, s->runs, s->empty_runs,
		s->polls, s->arms, s->repolls);
	pr_info("# %s: stats yields=%llu pauses=%llu rescues=%llu stalls=%llu domain_runs=%llu cq_errors=%llu max_batch=%llu\n",
		r->name, s->yields, s->pauses, s->rescues, s->stalls,
		s->domain_runs, s->cq_errors, s->max_batch);
	pr_info("# %s: stats parks=%llu provider_errors=%llu lease_resumes=%llu\n",
		r->name, s->parks, ocq_compat_provider_errors(s),
		ocq_compat_lease_resumes(s));
	pr_info("# %s: provider pushed=%llu callbacks=%ld empty_callbacks=%ld overlaps=%ld\n",
		r->name, fcq->pushed, atomic_long_read(&fcq->callbacks),
		atomic_long_read(&fcq->empty_callbacks),
		atomic_long_read(&fcq->overlaps));
	pr_info("# %s: provider polls=%llu arms=%llu positive=%llu arm_events=%llu dropped=%llu overruns=%llu errors=%llu\n",
		r->name, fcq->polls, fcq->arms, fcq->positive, fcq->arm_events,
		fcq->dropped, fcq->overruns, fcq->errors);
}

/*
 * An engine count against the provider's: the engine counts a call once it
 * returned, so its count may trail by @slack calls.
 */
static bool fake_trails(u64 engine, u64 provider, u64 slack)
{
	return engine <= provider && provider - engine <= slack;
}

/* A rescue after a stall is a lost wakeup: see %FAKE_WATCHDOG_LONG_MS. */
static bool fake_rescue_fails(const struct fake_run *r,
			      const struct ib_ocq_stats *s)
{
	unsigned long gap = msecs_to_jiffies(FAKE_WATCHDOG_LONG_MS / 2);

	return !(r->fcq->sem & FAKE_LOSSY) &&
	       r->attr.watchdog_ms >= FAKE_WATCHDOG_LONG_MS && s->rescues &&
	       r->max_gap >= gap;
}

/* The statistics against what was pushed and what the provider saw. */
static void fake_check_stats(struct fake_run *r, const struct ib_ocq_stats *s)
{
	struct fake_cq *fcq = r->fcq;
	long callbacks = atomic_long_read(&fcq->callbacks);

	fake_check(r, s->completions == fcq->pushed, "completions == pushed");
	fake_check(r, s->events == callbacks, "events == callbacks made");
	fake_check(r, s->runs >= 1 && s->empty_runs <= s->runs,
		   "runs >= 1, empty_runs <= runs");
	fake_check(r, s->arms >= 1, "arms >= 1");
	fake_check(r, fake_trails(s->polls, fcq->polls, 2),
		   "polls == poll_cq calls");
	fake_check(r, fake_trails(s->arms, fcq->arms, 1),
		   "arms == req_notify_cq calls");
	/* IB_ARM_AUTO is IB_ARM_REPORT_MISSED on RDMA_DRIVER_UNKNOWN */
	if (r->attr.policy != IB_ARM_STRONG)
		fake_check(r, fake_trails(s->repolls, fcq->positive, 1),
			   "repolls == positive req_notify_cq returns");
	if (!r->attr.watchdog_ms)
		fake_check(r, !s->rescues, "no rescues without a watchdog");
	else if (!fake_check(r, !fake_rescue_fails(r, s),
			     "no rescue after a stall on a lossless provider"))
		pr_info("# %s: %llu rescued after %u ms without progress\n",
			r->name, s->rescues, jiffies_to_msecs(r->max_gap));
	fake_check(r, !s->cq_errors && !fcq->overruns, "no CQ overrun");
	fake_check(r, (r->mode == IB_OCQ_STRICT) == !s->domain_runs,
		   "domain runs iff flow or parallel mode");
	fake_check(r, s->pauses >= atomic_long_read(&r->pause_calls) + 1,
		   "pauses >= ib_ocq_pause() calls");
	fake_check(r, (fcq->sem & FAKE_DIM) || !fcq->moderations,
		   "modify_cq only with use_cq_dim");
}

/**
 * struct fake_scenario - a scenario: provider semantics and how it runs
 * @name: the test name
 * @sem: FAKE_* semantics of the CQ
 * @policy: arm policy of the OCQ
 * @min_stall_ms: its stall bound is at least this
 * @ring: the provider's CQ ring holds at least this many entries
 * @credits: the producers' credits in all; 0 for the CQ entries
 * @done_us: every done() takes this long
 * @check: its own checks of a run that delivered everything, or NULL
 * @drive: more traffic after everything was delivered, before @check
 * @run: runs it in one mode, reporting KTAP subtests
 * @run_all: instead of @run: runs it once for all modes
 */
struct fake_scenario {
	const char *name;
	unsigned int sem;
	enum ib_arm_policy policy;
	unsigned int min_stall_ms;
	unsigned int ring;
	unsigned int credits;
	unsigned int done_us;
	void (*check)(struct fake_run *r, const struct ib_ocq_stats *s);
	void (*drive)(struct fake_run *r);
	int (*run)(struct fake_run *r, struct fake_dev *fdev,
		   struct fake_ktap *k);
	int (*run_all)(const struct fake_scenario *sc, struct fake_dev *fdev,
		       struct fake_ktap *k);
};

/*
 * The safety net's period for a stream that has one:
 * %FAKE_WATCHDOG_LONG_MS where fake_check_stats() holds a rescue against
 * the engine, else @fast.  Not on the lossy provider (its rescues are the
 * point), nor on a stream with the pauser (its resumes heal a lost wakeup
 * first), one freed halfway (no statistics are checked: its ticks race the
 * stream and the free) or a bulk one (it runs for seconds: ticks race it).
 */
static unsigned int fake_watchdog_ms(const struct fake_run *r,
				     unsigned int fast)
{
	if ((r->sc->sem & FAKE_LOSSY) || r->pause || r->abrupt || r->bulk)
		return fast;
	return FAKE_WATCHDOG_LONG_MS;
}

/* fake_teardown_race: free the OCQ while the injector calls the handler. */
static int fake_free_injected(struct fake_run *r)
{
	struct fake_cq *fcq = r->fcq;
	long before = atomic_long_read(&fcq->callbacks);
	unsigned long end = jiffies + msecs_to_jiffies(stall_ms);

	fcq->injector = kthread_run(fake_injector, fcq, "ocq_injector");
	if (IS_ERR(fcq->injector)) {
		int ret = PTR_ERR(fcq->injector);

		fcq->injector = NULL;
		return ret;
	}
	atomic_inc(&fake_objects);
	while (atomic_long_read(&fcq->callbacks) == before &&
	       time_before(jiffies, end))
		usleep_range(100, 200);
	/*
	 * The CQ unit runs again, right before the free: late callbacks
	 * schedule real runs, and an abrupt cycle's backlog is being
	 * dispatched.  destroy_cq stops the injector.
	 */
	ib_ocq_resume(r->ocq);
	return 0;
}

static int fake_poller(void *arg)
{
	struct fake_run *r = arg;
	struct ib_cq *cq = ib_ocq_cq(r->ocq);

	while (!kthread_should_stop()) {
		if (ib_ocq_process_cq_direct(cq, FAKE_DIRECT_BUDGET) > 0)
			cond_resched();
		else
			usleep_range(20, 100);
	}
	return 0;
}

static void fake_pollers_stop(struct fake_run *r)
{
	unsigned int i;

	for (i = 0; i < FAKE_POLLERS; i++) {
		if (!r->pollers[i])
			continue;
		kthread_stop(r->pollers[i]);
		atomic_dec(&fake_objects);
		WRITE_ONCE(r->pollers[i], NULL);
	}
}

/* poll_ctx=direct: the ULP's side of the CQ, two pollers at once. */
static int fake_pollers_start(struct fake_run *r)
{
	struct task_struct *t;
	unsigned int i;

	if (r->poll_ctx != IB_POLL_DIRECT)
		return 0;
	for (i = 0; i < FAKE_POLLERS; i++) {
		t = kthread_create(fake_poller, r, "ocq_poller%u", i);
		if (IS_ERR(t)) {
			fake_pollers_stop(r);
			return PTR_ERR(t);
		}
		atomic_inc(&fake_objects);
		/* done() checks its thread against this: set it first */
		WRITE_ONCE(r->pollers[i], t);
		wake_up_process(t);
	}
	return 0;
}

static int fake_pauser_start(struct fake_run *r)
{
	r->pauser = kthread_run(fake_pauser, r, "ocq_pauser");
	if (IS_ERR(r->pauser)) {
		int ret = PTR_ERR(r->pauser);

		r->pauser = NULL;
		return ret;
	}
	atomic_inc(&fake_objects);
	return 0;
}

/* Stop the pauser if it runs; return true if it did. */
static bool fake_pauser_stop(struct fake_run *r)
{
	if (!r->pauser)
		return false;
	kthread_stop(r->pauser);
	atomic_dec(&fake_objects);
	r->pauser = NULL;
	return true;
}

/* Where a stalled stream stands, for the log. */
static void fake_print_stall(struct fake_run *r)
{
	struct fake_cq *fcq = r->fcq;
	unsigned long flags;
	unsigned int i;

	for (i = 0; i < r->nr_flows; i++) {
		struct fake_flow *f = &r->flows[i];

		pr_info("# %s: stall: flow %u on cpu %d: pushed %u of %u, completed %d, %s\n",
			r->name, f->qp.qp_num, f->cpu, READ_ONCE(f->pushed),
			f->quota, atomic_read(&f->completed),
			READ_ONCE(f->finished) ? "finished" : "pushing");
	}
	spin_lock_irqsave(&fcq->lock, flags);
	pr_info("# %s: stall: CQ holds %u (%u visible), %sarmed\n", r->name,
		fcq->head - fcq->tail, fcq->visible - fcq->tail,
		fcq->armed ? "" : "not ");
	spin_unlock_irqrestore(&fcq->lock, flags);
}

/* Stream, wait, check the statistics; the OCQ stays for the caller. */
/*
 * poll_ctx=direct: no engine, no arm, no event; the pollers' calls count
 * every completion, and the CQ was never armed.
 */
static void fake_direct_stats(struct fake_run *r, bool ok)
{
	struct ib_ocq_stats s;

	fake_pollers_stop(r);
	ib_ocq_get_stats(r->ocq, &s);
	pr_info("# %s: direct: runs %llu empty_runs %llu polls %llu completions %llu contended %llu\n",
		r->name, s.runs, s.empty_runs, s.polls, s.completions,
		s.contended);
	if (!ok)
		return;
	fake_check(r, s.completions == r->fcq->pushed, "completions == pushed");
	fake_check(r, s.polls == r->fcq->polls, "polls == poll_cq calls");
	fake_check(r, !r->fcq->arms && !s.events, "never armed, no event");
}

/* modify_cq calls so far */
static u64 fake_moderations(struct fake_cq *fcq)
{
	unsigned long flags;
	u64 n;

	spin_lock_irqsave(&fcq->lock, flags);
	n = fcq->moderations;
	spin_unlock_irqrestore(&fcq->lock, flags);
	return n;
}

/* Wait up to @ms for everything pushed to be delivered. */
static bool fake_wait_all(struct fake_run *r, unsigned int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);

	while (atomic_long_read(&r->delivered) != fake_pushed(r)) {
		if (time_after(jiffies, end))
			return false;
		usleep_range(100, 200);
	}
	return true;
}

/* Push @n completions on flow 0 and wait until they are delivered. */
static bool fake_dim_round(struct fake_run *r, u32 n)
{
	fake_push_batch(&r->flows[0], n);
	return fake_wait_all(r, stall_ms);
}

/*
 * fake_dim, after the stream: whether a free-running stream moves DIM off
 * its first profile is up to timing.  Paced rounds whose size doubles every
 * %FAKE_DIM_PHASE rounds raise the completions per ms and per event from
 * one DIM sample to the next, which DIM answers with a step to the right:
 * a modify_cq call, if the samples reach it.
 */
static void fake_dim_drive(struct fake_run *r)
{
	struct fake_flow *f = &r->flows[0];
	u32 left = r->dim_tail;
	unsigned int i;
	u32 n;

	for (i = 0; i < FAKE_DIM_PHASES * FAKE_DIM_PHASE && left; i++) {
		if (fake_moderations(r->fcq))
			break;
		n = min3(1U << (i / FAKE_DIM_PHASE), f->credits, left);
		left -= n;
		if (!fake_check(r, fake_dim_round(r, n),
				"a paced DIM round delivered"))
			return;
		usleep_range(200, 300);
	}
	pr_info("# %s: dim: %u paced rounds after the stream\n", r->name, i);
}

static void fake_stream_body(struct fake_run *r, bool expect_stall,
			     bool *stalled)
{
	unsigned int bound = max(stall_ms, r->sc->min_stall_ms);
	unsigned long start = jiffies;
	struct ib_ocq_stats s;
	bool ok;

	ok = fake_wait_delivered(r, expect_stall ? FAKE_LOSSY_STALL_MS : bound);
	*stalled = !ok;
	if (!ok)
		fake_print_stall(r);
	if (fake_pauser_stop(r))
		ib_ocq_resume(r->ocq);
	fake_producers_stop(r);
	if (!ok && expect_stall) {
		pr_info("# %s: stalled after %u ms with %ld of %llu delivered; a late event\n",
			r->name, jiffies_to_msecs(jiffies - start),
			atomic_long_read(&r->delivered), fake_pushed(r));
		fake_callback(r->fcq);
		ok = fake_wait_delivered(r, bound);
	}
	fake_check(r, ok, "everything delivered within the stall bound");
	if (!r->quiet)
		pr_info("# %s: %ld completions in %u ms, longest wait for progress %u ms\n",
			r->name, atomic_long_read(&r->delivered),
			jiffies_to_msecs(jiffies - start),
			jiffies_to_msecs(r->max_gap));
	if (r->poll_ctx == IB_POLL_DIRECT) {
		fake_direct_stats(r, ok);
		return;
	}
	if (r->attr.flags & IB_OCQ_POSTPONE_ARM)
		ib_ocq_resume(r->ocq); /* the explicit "arm now" */
	if (ok && !(r->fcq->sem & FAKE_PERPETUAL))
		fake_check(r, fake_wait_armed(r->fcq, stall_ms),
			   "ends empty and armed");
	if (ok && r->sc->drive)
		r->sc->drive(r);
	/* stop what raises events, then the engine, and compare counts */
	fake_cq_quiesce(r->fcq);
	ib_ocq_pause(r->ocq);
	fake_wait_quiet(r->fcq);
	ib_ocq_get_stats(r->ocq, &s);
	if (!r->quiet || !ok)
		fake_print_stats(r, &s);
	if (!ok)
		return;
	fake_check_stats(r, &s);
	if (r->sc->check)
		r->sc->check(r, &s);
}

/*
 * fake_teardown_race, abrupt cycle: halfway, pause the OCQ and let the
 * producers fill their credits, so that the resume before the free starts a
 * run with a backlog and the OCQ is freed while it dispatches, as by a ULP
 * that tears down without draining.  What is left is not delivered, but
 * nothing may be delivered once ib_ocq_free() returned.
 */
static void fake_stream_cut(struct fake_run *r)
{
	unsigned long end = jiffies + msecs_to_jiffies(stall_ms);

	while (atomic_long_read(&r->delivered) < r->total / 2 &&
	       time_before(jiffies, end))
		usleep_range(100, 200);
	fake_pauser_stop(r);
	ib_ocq_pause(r->ocq);
	msleep(FAKE_POLL_MS);
	fake_producers_stop(r);
}

/* fake_teardown_race: nothing comes after ib_ocq_free() returned. */
static void fake_check_after_free(struct fake_run *r)
{
	long n = atomic_long_read(&r->delivered);

	msleep(4 * FAKE_POLL_MS);
	fake_check(r, atomic_long_read(&r->delivered) == n,
		   "no done() after ib_ocq_free()");
	if (r->abrupt)
		r->undelivered += fake_pushed(r) - n;
	else
		fake_check(r, n == fake_pushed(r),
			   "everything delivered before ib_ocq_free()");
}

/*
 * Stream the run's completions through a fresh OCQ, check everything, free
 * it.  Return 0 when it ran (failures are counted in @r), or -errno.  With
 * @expect_stall (fake_lossy without its watchdog) a stall is the expected
 * outcome: a late event recovers it, and @stalled reports it.
 */
static int fake_stream_once(struct fake_run *r, struct fake_dev *fdev,
			    bool expect_stall, bool *stalled)
{
	int ret;

	*stalled = false;
	fake_run_reset(r);
	fdev->sem = r->sc->sem;
	fdev->rnd = fake_seed(1000 + r->mode);
	fdev->ring = r->sc->ring;
	ret = fake_ocq_create(r, fdev);
	if (ret)
		return ret;
	ret = fake_pollers_start(r);
	if (ret)
		goto out_free_ocq;
	ret = fake_producers_start(r);
	if (ret)
		goto out_free_ocq;
	if (r->pause) {
		ret = fake_pauser_start(r);
		if (ret)
			goto out_free_ocq;
	}
	if (r->abrupt)
		fake_stream_cut(r);
	else
		fake_stream_body(r, expect_stall, stalled);
	if (r->inject)
		ret = fake_free_injected(r);

out_free_ocq:
	fake_pauser_stop(r);
	fake_producers_stop(r);
	fake_pollers_stop(r);
	fake_ocq_free(r);
	if (!ret && r->inject)
		fake_check_after_free(r);
	return ret;
}

static void fake_result(struct fake_ktap *k, bool ok, const char *name,
			const char *note)
{
	k->nr++;
	if (!ok)
		k->failed++;
	pr_info("%s %u %s%s%s\n", ok ? "ok" : "not ok", k->nr, name,
		note ? " # " : "", note ?: "");
}

static void fake_skip(struct fake_ktap *k, const char *name, const char *why)
{
	k->nr++;
	k->skipped++;
	pr_info("ok %u %s # SKIP %s\n", k->nr, name, why);
}

/* Most scenarios: stream once in the mode, one subtest. */
static int fake_run_stream(struct fake_run *r, struct fake_dev *fdev,
			   struct fake_ktap *k)
{
	bool stalled;
	int ret;

	ret = fake_stream_once(r, fdev, false, &stalled);
	fake_result(k, !ret && !atomic_read(&r->failures), r->name, NULL);
	return ret;
}

/*
 * fake_dim: flow 0's producer leaves out what fake_dim_drive() may push, so
 * that every CQ position stays below the run's total.
 */
static int fake_run_dim(struct fake_run *r, struct fake_dev *fdev,
			struct fake_ktap *k)
{
	struct fake_flow *f = &r->flows[0];

	r->dim_tail = min_t(u32, FAKE_DIM_TAIL, f->quota / 2);
	f->quota -= r->dim_tail;
	return fake_run_stream(r, fdev, k);
}

/*
 * fake_lossy: with the watchdog, everything arrives and the watchdog tells
 * its rescues; without it, the same provider must stall the stream.
 */
static int fake_run_lossy(struct fake_run *r, struct fake_dev *fdev,
			  struct fake_ktap *k)
{
	unsigned int i;
	bool stalled;
	int ret;

	r->attr.watchdog_ms = FAKE_WATCHDOG_MS;
	ret = fake_stream_once(r, fdev, false, &stalled);
	fake_result(k, !ret && !atomic_read(&r->failures), r->name, NULL);
	if (ret)
		return ret;

	/*
	 * A lost event stalls the stream only if it was the one the engine
	 * armed for: in the flow and parallel modes, which arm rarely, a
	 * stream may get through; try again before calling it a failure.
	 */
	r->attr.watchdog_ms = 0;
	strlcat(r->name, "_no_watchdog", sizeof(r->name));
	for (i = 0; i < FAKE_LOSSY_TRIES; i++) {
		ret = fake_stream_once(r, fdev, true, &stalled);
		if (ret || stalled)
			break;
		pr_info("# %s: no stall without the safety net (try %u)\n",
			r->name, i + 1);
	}
	fake_result(k, !ret && stalled && !atomic_read(&r->failures), r->name,
		    "stalls without the safety net as expected");
	return ret;
}

/* fake_pause_resume: random pauses, then postponed arms with resumes. */
static int fake_run_pause(struct fake_run *r, struct fake_dev *fdev,
			  struct fake_ktap *k)
{
	bool stalled;
	int ret;

	r->pause = true;
	ret = fake_stream_once(r, fdev, false, &stalled);
	fake_result(k, !ret && !atomic_read(&r->failures), r->name, NULL);
	if (ret)
		return ret;

	r->attr.flags = IB_OCQ_POSTPONE_ARM;
	strlcat(r->name, "_postpone", sizeof(r->name));
	ret = fake_stream_once(r, fdev, false, &stalled);
	fake_result(k, !ret && !atomic_read(&r->failures), r->name, NULL);
	return ret;
}

/*
 * fake_teardown_race: many short streams, each drained (as after
 * ib_drain_qp()) and freed under late callbacks; one cycle in
 * %FAKE_ABRUPT_CYCLE freed halfway, undrained.  The watchdog in every
 * cycle: a drained one must need no rescue after a stall
 * (%FAKE_WATCHDOG_LONG_MS; its cancel drops an idle timer), so that a
 * wakeup the engine loses fails it; one freed halfway ticks fast, so that
 * its ticks race the free.  (teardown_loop has drained cycles without.)
 */
static int fake_run_teardown(struct fake_run *r, struct fake_dev *fdev,
			     struct fake_ktap *k)
{
	unsigned int i;
	bool stalled;
	int ret = 0;

	r->inject = true;
	for (i = 0; i < cycles && !ret && !atomic_read(&r->failures); i++) {
		r->quiet = i > 0;
		r->abrupt = i % FAKE_ABRUPT_CYCLE == FAKE_ABRUPT_CYCLE - 1;
		r->attr.watchdog_ms =
			fake_watchdog_ms(r, FAKE_WATCHDOG_RACE_MS);
		ret = fake_stream_once(r, fdev, false, &stalled);
	}
	pr_info("# %s: %u cycles of %llu completions, %u freed undrained leaving %llu\n",
		r->name, i, r->total, i / FAKE_ABRUPT_CYCLE, r->undelivered);
	fake_result(k, !ret && !atomic_read(&r->failures), r->name, NULL);
	return ret;
}

/* --- scenarios over all modes: teardown_loop, alloc_fail, soak --- */

static void fake_run_free(struct fake_run *r)
{
	fake_flows_free(r);
	bitmap_free(r->seen);
	kfree(r);
}

/*
 * A run of @total completions through CQs of @ncqe entries; @bulk: see
 * struct fake_run.
 */
static struct fake_run *fake_run_alloc(const struct fake_scenario *sc,
				       enum ib_ocq_mode mode, u64 total,
				       unsigned int ncqe, bool bulk)
{
	struct fake_run *r;

	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return NULL;
	strscpy(r->name, fake_mode_names[mode], sizeof(r->name));
	r->sc = sc;
	r->mode = mode;
	r->attr.mode = mode;
	r->attr.policy = sc->policy;
	if (mode == IB_OCQ_PARALLEL)
		r->attr.process = fake_process;
	r->total = total;
	r->cqe = ncqe;
	r->credits = sc->credits;
	r->done_us = sc->done_us;
	r->bulk = bulk;
	if (!bulk) {
		r->seen = bitmap_zalloc(r->total, GFP_KERNEL);
		if (!r->seen) {
			fake_run_free(r);
			return NULL;
		}
	}
	if (fake_flows_alloc(r)) {
		fake_run_free(r);
		return NULL;
	}
	return r;
}

static int fake_run_resume_race(struct fake_run *r, struct fake_dev *fdev,
				struct fake_ktap *k);

/* Completions of a run in one mode, over all its cycles. */
static u64 fake_mode_total(const struct fake_scenario *sc)
{
	if (sc->run == fake_run_teardown)
		return max_t(u64, completions / cycles, FAKE_MIN_COMPLETIONS);
	if (sc->run == fake_run_resume_race)
		return max_t(u64, completions / FAKE_RACE_CYCLES,
			     FAKE_MIN_COMPLETIONS);
	return completions;
}

/*
 * teardown_loop: the configuration of cycle @i.  The mode turns fastest;
 * then, bit by bit, the watchdog, the postponed arm (with the pauser: with
 * done() it is what arms), a free halfway through the stream, and random
 * pauses.  Every cycle is freed under late callbacks.  A drained cycle with
 * the watchdog and no pauser must need no rescue after a stall; the others
 * tick fast.
 */
static struct fake_run *fake_loop_config(struct fake_run **runs, unsigned int i)
{
	struct fake_run *r = runs[i % FAKE_NR_MODES];
	unsigned int j = i / FAKE_NR_MODES;

	r->attr.flags = j & 2 ? IB_OCQ_POSTPONE_ARM : 0;
	r->abrupt = j & 4;
	r->pause = j & (2 | 8);
	r->inject = true;
	r->quiet = true;
	r->attr.watchdog_ms =
		j & 1 ? fake_watchdog_ms(r, FAKE_WATCHDOG_RACE_MS) : 0;
	return r;
}

static int fake_loop_cycle(struct fake_run **runs, struct fake_dev *fdev,
			   unsigned int i)
{
	struct fake_run *r = fake_loop_config(runs, i);
	bool stalled;
	int ret;

	ret = fake_stream_once(r, fdev, false, &stalled);
	fake_check(r, !atomic_read(&fake_objects),
		   "the provider's objects were all freed");
	if (ret || atomic_read(&r->failures))
		pr_info("# cycle %u failed (%d): %s, watchdog_ms %u, flags %#x, %s, %s\n",
			i, ret, r->name, r->attr.watchdog_ms, r->attr.flags,
			r->pause ? "random pauses" : "no pauses",
			r->abrupt ? "freed halfway" : "drained");
	return ret;
}

static bool fake_loop_failed(struct fake_run **runs)
{
	unsigned int mode;

	for (mode = 0; mode < FAKE_NR_MODES; mode++)
		if (atomic_read(&runs[mode]->failures))
			return true;
	return false;
}

/* teardown_loop: @cycles create, stream, free cycles over all modes. */
static int fake_loop(struct fake_run **runs, struct fake_dev *fdev)
{
	u64 delivered = 0, undelivered = 0;
	unsigned int i, mode;
	int ret = 0;

	for (i = 0; i < cycles && !ret && !fake_loop_failed(runs); i++) {
		struct fake_run *r = runs[i % FAKE_NR_MODES];

		ret = fake_loop_cycle(runs, fdev, i);
		delivered += atomic_long_read(&r->delivered);
	}
	for (mode = 0; mode < FAKE_NR_MODES; mode++)
		undelivered += runs[mode]->undelivered;
	pr_info("# teardown_loop: %u cycles of %llu completions: %llu delivered, %llu left by frees halfway\n",
		i, runs[0]->total, delivered, undelivered);
	return ret;
}

static int fake_run_teardown_loop(const struct fake_scenario *sc,
				  struct fake_dev *fdev, struct fake_ktap *k)
{
	u64 total = max_t(u64, completions / cycles, FAKE_MIN_COMPLETIONS);
	struct fake_run *runs[FAKE_NR_MODES] = {};
	unsigned int mode;
	int ret = 0;

	for (mode = 0; mode < FAKE_NR_MODES && !ret; mode++) {
		runs[mode] = fake_run_alloc(sc, mode, total, cqe, false);
		if (!runs[mode])
			ret = -ENOMEM;
	}
	if (!ret)
		ret = fake_loop(runs, fdev);
	for (mode = 0; mode < FAKE_NR_MODES; mode++) {
		bool ok = runs[mode] && !atomic_read(&runs[mode]->failures);

		fake_result(k, ok && !ret, fake_mode_names[mode], NULL);
		if (runs[mode])
			fake_run_free(runs[mode]);
	}
	return ret;
}

/**
 * struct fake_path - a create path of ib_ocq_alloc(), for alloc_fail
 * @name: its path= name
 * @mode: ordering domains
 * @nr_domains: flow domains or process workers; 0 for the online CPUs
 * @watchdog_ms: the safety net's period; 0 for none
 * @flags: %IB_OCQ_POSTPONE_ARM or 0
 */
struct fake_path {
	const char *name;
	enum ib_ocq_mode mode;
	unsigned int nr_domains;
	unsigned int watchdog_ms;
	unsigned int flags;
};

static const struct fake_path fake_paths[] = {
	{ .name = "strict", .mode = IB_OCQ_STRICT },
	{
		.name = "strict_watchdog",
		.mode = IB_OCQ_STRICT,
		.watchdog_ms = FAKE_WATCHDOG_MS,
	},
	{
		.name = "strict_postpone",
		.mode = IB_OCQ_STRICT,
		.flags = IB_OCQ_POSTPONE_ARM,
	},
	{ .name = "flow", .mode = IB_OCQ_FLOW },
	{ .name = "flow_1", .mode = IB_OCQ_FLOW, .nr_domains = 1 },
	{ .name = "flow_4", .mode = IB_OCQ_FLOW, .nr_domains = 4 },
	{
		.name = "flow_4_watchdog_postpone",
		.mode = IB_OCQ_FLOW,
		.nr_domains = 4,
		.watchdog_ms = FAKE_WATCHDOG_MS,
		.flags = IB_OCQ_POSTPONE_ARM,
	},
	{ .name = "parallel", .mode = IB_OCQ_PARALLEL },
	{ .name = "parallel_4", .mode = IB_OCQ_PARALLEL, .nr_domains = 4 },
	{
		.name = "parallel_watchdog_postpone",
		.mode = IB_OCQ_PARALLEL,
		.watchdog_ms = FAKE_WATCHDOG_MS,
		.flags = IB_OCQ_POSTPONE_ARM,
	},
};

static const struct fake_path *fake_find_path(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fake_paths); i++)
		if (!strcmp(path, fake_paths[i].name))
			return &fake_paths[i];
	return NULL;
}

static void fake_path_attr(const struct fake_path *p, struct ib_ocq_attr *attr)
{
	attr->mode = p->mode;
	attr->nr_domains = p->nr_domains;
	attr->watchdog_ms = p->watchdog_ms;
	attr->flags = p->flags;
	attr->process = p->mode == IB_OCQ_PARALLEL ? fake_process : NULL;
}

/* alloc_fail: a failed ib_ocq_alloc() must say -ENOMEM and leave nothing. */
static void fake_alloc_failed(struct fake_ktap *k, const struct fake_path *p,
			      int ret)
{
	bool clean = !atomic_read(&fake_objects);

	/* on the console too: freeing the fake device will warn */
	if (!clean)
		pr_err("# %s: the provider's CQ outlived the failure\n",
		       p->name);
	if (ret != -ENOMEM)
		pr_info("# %s: failed with %d, not -ENOMEM\n", p->name, ret);
	fake_result(k, ret == -ENOMEM && clean, p->name,
		    "fails with -ENOMEM, leaving nothing");
}

/*
 * alloc_fail on the fake device: when the OCQ is made, a short stream with
 * random pauses goes through it before the free.
 */
static int fake_alloc_fake(const struct fake_scenario *sc,
			   struct fake_dev *fdev, const struct fake_path *p,
			   struct fake_ktap *k)
{
	struct fake_run *r;
	bool stalled;
	int ret, alloc_ret;

	r = fake_run_alloc(sc, p->mode, completions, cqe, false);
	if (!r)
		return -ENOMEM;
	strscpy(r->name, p->name, sizeof(r->name));
	fake_path_attr(p, &r->attr);
	r->pause = true;
	ret = fake_stream_once(r, fdev, false, &stalled);
	alloc_ret = r->alloc_ret;
	pr_info("# alloc_fail: path=%s device=fake result=%d\n", p->name,
		alloc_ret);
	if (alloc_ret)
		fake_alloc_failed(k, p, alloc_ret);
	else
		fake_result(k, !ret && !atomic_read(&r->failures), p->name,
			    NULL);
	fake_run_free(r);
	return alloc_ret ? 0 : ret;
}

/* alloc_fail on a real device: create, pause, resume, free; no traffic. */
static int fake_alloc_real(const struct fake_path *p, struct fake_ktap *k)
{
	struct ib_ocq_attr attr = {};
	struct ib_device *dev;
	struct ib_ocq *ocq;
	int ret;

	dev = ib_device_get_by_name(device, RDMA_DRIVER_UNKNOWN);
	if (!dev) {
		fake_skip(k, p->name, "device not present");
		return 0;
	}
	fake_path_attr(p, &attr);
	ocq = ib_ocq_alloc(dev, NULL, cqe, 0, &attr);
	ret = PTR_ERR_OR_ZERO(ocq);
	pr_info("# alloc_fail: path=%s device=%s result=%d\n", p->name, device,
		ret);
	if (ret) {
		fake_alloc_failed(k, p, ret);
	} else {
		ib_ocq_pause(ocq);
		ib_ocq_resume(ocq);
		ib_ocq_free(ocq);
		fake_result(k, true, p->name, NULL);
	}
	ib_device_put(dev);
	return 0;
}

/* alloc_fail: one ib_ocq_alloc() on the path named by path=. */
static int fake_run_alloc_fail(const struct fake_scenario *sc,
			       struct fake_dev *fdev, struct fake_ktap *k)
{
	const struct fake_path *p = fake_find_path();

	if (!p) {
		fake_result(k, false, path, "unknown path");
		return -EINVAL;
	}
	if (*device)
		return fake_alloc_real(p, k);
	return fake_alloc_fake(sc, fdev, p, k);
}

/* soak: the provider semantics it mixes (fake_lossy with its watchdog). */
static const struct fake_scenario fake_soak_mix[] = {
	{ .name = "weak" },
	{ .name = "strong", .sem = FAKE_STRONG, .policy = IB_ARM_STRONG },
	{ .name = "cb_and_1", .sem = FAKE_CB_AND_1 },
	{ .name = "spurious", .sem = FAKE_SPURIOUS },
	{ .name = "concurrent", .sem = FAKE_CONCURRENT },
	{ .name = "lossy", .sem = FAKE_LOSSY },
};

/**
 * struct fake_soak - what the soak counts
 * @cycles: streams run
 * @bulk_cycles: of those, bulk ones
 * @completions: done() calls
 * @bulk_completions: of those, in bulk cycles
 * @lost: completions pushed and not delivered by streams that drain
 * @reordered: done() calls out of order
 * @duplicated: completions delivered twice
 * @undrained: streams freed halfway (their leftovers are not lost)
 * @failures: failed checks of any kind, the above included
 * @bulk_ms: time in bulk cycles
 * @short_ms: time in short cycles
 */
struct fake_soak {
	unsigned int cycles;
	unsigned int bulk_cycles;
	u64 completions;
	u64 bulk_completions;
	u64 lost;
	u64 reordered;
	u64 duplicated;
	u64 undrained;
	u64 failures;
	u64 bulk_ms;
	u64 short_ms;
};

/* soak: random pauses, postponed arm, watchdog and teardown of a cycle. */
static void fake_soak_chaos(struct fake_run *r, u32 *rnd)
{
	bool watchdog = (r->sc->sem & FAKE_LOSSY) || !(fake_rand(rnd) % 4);

	r->pause = fake_rand(rnd) % 2;
	if (r->pause && fake_rand(rnd) % 2)
		r->attr.flags = IB_OCQ_POSTPONE_ARM;
	r->inject = !(fake_rand(rnd) % 4);
	r->abrupt = r->inject && fake_rand(rnd) % 2;
	r->quiet = true;
	if (watchdog)
		r->attr.watchdog_ms = fake_watchdog_ms(r, FAKE_WATCHDOG_MS);
}

/*
 * soak: a run with random semantics and mode; a short one of random size,
 * or a bulk one of @bulk completions through a CQ of 512 to 4096 entries.
 */
static struct fake_run *fake_soak_config(u32 *rnd, u64 bulk)
{
	const struct fake_scenario *sc;
	enum ib_ocq_mode mode = fake_rand(rnd) % FAKE_NR_MODES;
	u64 total = FAKE_MIN_COMPLETIONS + fake_rand(rnd) % FAKE_SOAK_SPAN;
	unsigned int ncqe = cqe;
	struct fake_run *r;

	do {
		sc = &fake_soak_mix[fake_rand(rnd) % ARRAY_SIZE(fake_soak_mix)];
	} while ((sc->sem & FAKE_CONCURRENT) && num_online_cpus() < 2);
	if (bulk) {
		total = bulk;
		ncqe = 512 << (fake_rand(rnd) % 4);
	}
	r = fake_run_alloc(sc, mode, total, ncqe, bulk);
	if (!r)
		return NULL;
	snprintf(r->name, sizeof(r->name), "%s%s_%s", bulk ? "bulk_" : "",
		 sc->name, fake_mode_names[mode]);
	fake_soak_chaos(r, rnd);
	return r;
}

static void fake_soak_account(struct fake_soak *s, struct fake_run *r,
			      unsigned long start)
{
	u64 delivered = atomic_long_read(&r->delivered);
	u64 pushed = fake_pushed(r);
	u64 ms = jiffies_to_msecs(jiffies - start);

	s->cycles++;
	s->completions += delivered;
	if (r->bulk) {
		s->bulk_cycles++;
		s->bulk_completions += delivered;
		s->bulk_ms += ms;
	} else {
		s->short_ms += ms;
	}
	if (r->abrupt)
		s->undrained++;
	else if (pushed > delivered)
		s->lost += pushed - delivered;
	s->reordered += atomic_read(&r->reports[FAKE_V_ORDER]);
	s->duplicated += atomic_read(&r->reports[FAKE_V_TWICE]);
	s->failures += atomic_read(&r->failures);
}

static int fake_soak_cycle(struct fake_soak *s, struct fake_dev *fdev, u32 *rnd,
			   u64 bulk)
{
	unsigned long start = jiffies;
	struct fake_run *r;
	bool stalled;
	int ret;

	r = fake_soak_config(rnd, bulk);
	if (!r)
		return -ENOMEM;
	ret = fake_stream_once(r, fdev, false, &stalled);
	fake_soak_account(s, r, start);
	if (ret || atomic_read(&r->failures))
		pr_info("# soak: cycle %u failed (%d): %s, %llu completions, cqe %u, watchdog_ms %u, flags %#x, %s, %s\n",
			s->cycles, ret, r->name, r->total, r->cqe,
			r->attr.watchdog_ms, r->attr.flags,
			r->pause ? "random pauses" : "no pauses",
			r->abrupt ? "freed halfway" : "drained");
	fake_run_free(r);
	if (!ret && atomic_read(&fake_objects)) {
		pr_info("# soak: the provider's objects were not all freed\n");
		s->failures++;
		ret = -EBUSY;
	}
	return ret;
}

/*
 * soak: the completions of the next cycle; 0 for a short one.  Bulk cycles
 * take %FAKE_SOAK_BULK_PCT of the time: each of them a random few seconds
 * long at the rate bulk cycles ran so far, and not much longer than the
 * time left.
 */
static u64 fake_soak_next(const struct fake_soak *s, u32 *rnd,
			  unsigned long end)
{
	u64 ms = s->bulk_ms + s->short_ms;
	u64 left = jiffies_to_msecs(max_t(long, end - jiffies, 0));
	u64 n = FAKE_SOAK_BULK_FIRST;

	if (s->bulk_ms * 100 >= FAKE_SOAK_BULK_PCT * ms)
		return 0;
	if (s->bulk_ms) {
		/* completions per millisecond so far, times the length */
		n = div64_u64(s->bulk_completions, s->bulk_ms);
		left *= n;
		n *= (FAKE_SOAK_BULK_MIN_S +
		      fake_rand(rnd) % (FAKE_SOAK_BULK_SPAN_S + 1)) *
		     MSEC_PER_SEC;
		n = min(n, left);
	}
	return clamp_t(u64, n, FAKE_SOAK_BULK_MIN, FAKE_SOAK_BULK_MAX);
}

static void fake_soak_print(const struct fake_soak *s, const char *what,
			    unsigned long start)
{
	pr_info("# soak: %s: %u s, %u cycles (%u bulk, %llu freed halfway), %llu completions (%llu in bulk cycles), lost %llu, reordered %llu, duplicated %llu, failed checks %llu\n",
		what, jiffies_to_msecs(jiffies - start) / 1000, s->cycles,
		s->bulk_cycles, s->undrained, s->completions,
		s->bulk_completions, s->lost, s->reordered, s->duplicated,
		s->failures);
}

/*
 * soak: random cycles for duration_s seconds, short and bulk, a progress
 * line now and then.
 */
static int fake_run_soak(const struct fake_scenario *sc, struct fake_dev *fdev,
			 struct fake_ktap *k)
{
	unsigned long start = jiffies;
	unsigned long end = start + msecs_to_jiffies(duration_s * MSEC_PER_SEC);
	unsigned long next = start + FAKE_SOAK_REPORT_S * HZ;
	struct fake_soak s = {};
	u32 rnd = fake_seed(7);
	int ret = 0;

	while (!ret && time_before(jiffies, end)) {
		ret = fake_soak_cycle(&s, fdev, &rnd,
				      fake_soak_next(&s, &rnd, end));
		if (time_after_eq(jiffies, next)) {
			fake_soak_print(&s, "progress", start);
			next = jiffies + FAKE_SOAK_REPORT_S * HZ;
		}
	}
	fake_soak_print(&s, "summary", start);
	pr_info("# soak: time in bulk cycles %llu s, in short cycles %llu s\n",
		s.bulk_ms / MSEC_PER_SEC, s.short_ms / MSEC_PER_SEC);
	fake_result(k, !ret && !s.failures, "soak", NULL);
	return ret;
}

/* --- fake_poll_helpers: the poll helpers on a plain CQ, no OCQ --- */

/* Room for completions in one helper call. */
#define FAKE_HELPER_BATCH 16
/* Helper calls one run of the consumer's work item makes before requeueing. */
#define FAKE_HELPER_CALLS 64

/**
 * struct fake_helper - a ULP polling its own CQ with a poll helper: the
 *	completion handler queues a work item, which calls the helper until it
 *	says the CQ is armed, and requeues itself on -EAGAIN
 * @r: the run: producers and the checks of every completion
 * @cq: a CQ of the fake device, from ib_create_cq()
 * @pn: ib_poll_and_notify() with @policy; else ib_poll_cq_and_arm()
 * @policy: ib_poll_and_notify()'s arm policy
 * @work: the consumer
 * @tick: fake_lossy: the consumer's own safety net, queues @work now and then
 * @stop: the handler and the work item queue nothing more
 * @wcs: the completions of a call
 * @calls: helper calls
 * @eagain: of those, -EAGAIN returns (the consumer requeued itself later)
 * @errors: other errors
 * @armed: returns that said the CQ is armed
 * @max_arms: most req_notify_cq calls in one helper call
 * @zero_repolls: %IB_PN_REPOLL returns with no completion
 * @bad_status: statuses that do not match the completions returned
 */
struct fake_helper {
	struct fake_run *r;
	struct ib_cq *cq;
	bool pn;
	enum ib_arm_policy policy;
	struct delayed_work work;
	struct delayed_work tick;
	bool stop;
	struct ib_wc wcs[FAKE_HELPER_BATCH];
	u64 calls;
	u64 eagain;
	u64 errors;
	u64 armed;
	u64 max_arms;
	u64 zero_repolls;
	u64 bad_status;
};

/**
 * struct fake_helper_model - a provider model fake_poll_helpers runs on
 * @name: subtest name prefix
 * @sem: FAKE_* semantics
 * @policy: ib_poll_and_notify()'s policy
 * @pn_only: only ib_poll_and_notify() (a policy ib_poll_cq_and_arm lacks)
 */
struct fake_helper_model {
	const char *name;
	unsigned int sem;
	enum ib_arm_policy policy;
	bool pn_only;
};

static const struct fake_helper_model fake_helper_models[] = {
	{ "weak", 0, IB_ARM_REPORT_MISSED },
	{ "weak_double_poll", 0, IB_ARM_DOUBLE_POLL, true },
	{ "strong", FAKE_STRONG, IB_ARM_STRONG },
	{ "cb_and_1", FAKE_CB_AND_1, IB_ARM_REPORT_MISSED },
	{ "spurious", FAKE_SPURIOUS, IB_ARM_REPORT_MISSED },
	{ "concurrent", FAKE_CONCURRENT, IB_ARM_REPORT_MISSED },
	{ "lossy", FAKE_LOSSY, IB_ARM_REPORT_MISSED },
	{ "perpetual", FAKE_PERPETUAL, IB_ARM_REPORT_MISSED },
};

static u64 fake_cq_arms(struct fake_cq *fcq)
{
	unsigned long flags;
	u64 n;

	spin_lock_irqsave(&fcq->lock, flags);
	n = fcq->arms;
	spin_unlock_irqrestore(&fcq->lock, flags);
	return n;
}

static void fake_helper_requeue(struct fake_helper *h, unsigned long delay)
{
	if (!READ_ONCE(h->stop))
		queue_delayed_work(system_highpri_wq, &h->work, delay);
}

static void fake_helper_event(struct ib_cq *cq, void *ctx)
{
	fake_helper_requeue(ctx, 0);
}

/* One helper call, its completions delivered; its return value. */
static int fake_helper_call(struct fake_helper *h, enum ib_pn_status *st)
{
	struct fake_cq *fcq = h->r->fcq;
	u64 arms = fake_cq_arms(fcq);
	int n, i;

	if (h->pn)
		n = ib_poll_and_notify(h->cq, FAKE_HELPER_BATCH, h->wcs,
				       h->policy, st);
	else
		n = ib_poll_cq_and_arm(h->cq, FAKE_HELPER_BATCH, h->wcs);
	h->calls++;
	h->max_arms = max(h->max_arms, fake_cq_arms(fcq) - arms);
	for (i = 0; i < n; i++)
		fake_deliver(h->r, container_of(h->wcs[i].wr_cqe,
						struct fake_req, cqe));
	return n;
}

/*
 * ib_poll_and_notify(): what @st asks for next; true if the CQ is armed.
 * Counts the statuses the API rules out.
 */
static bool fake_helper_status(struct fake_helper *h, int n,
			       enum ib_pn_status st)
{
	switch (st) {
	case IB_PN_MORE:
		h->bad_status += !n;
		return false;
	case IB_PN_REPOLL:
		h->zero_repolls += !n;
		return false;
	case IB_PN_ARMED:
		h->bad_status += !n;
		return true;
	case IB_PN_EMPTY_ARMED:
		h->bad_status += !!n;
		return true;
	default:
		h->bad_status++;
		return false;
	}
}

static void fake_helper_work(struct work_struct *work)
{
	struct fake_helper *h =
		container_of(to_delayed_work(work), struct fake_helper, work);
	enum ib_pn_status st;
	unsigned int i;
	int n;

	for (i = 0; i < FAKE_HELPER_CALLS; i++) {
		st = IB_PN_MORE;
		n = fake_helper_call(h, &st);
		if (n < 0) {
			/* not armed: come back later, as the API asks */
			if (n == -EAGAIN)
				h->eagain++;
			else
				h->errors++;
			fake_helper_requeue(h, 1);
			return;
		}
		if (h->pn ? fake_helper_status(h, n, st) : !n) {
			h->armed++;
			return;
		}
	}
	fake_helper_requeue(h, 0);
}

static void fake_helper_tick(struct work_struct *work)
{
	struct fake_helper *h =
		container_of(to_delayed_work(work), struct fake_helper, tick);

	if (READ_ONCE(h->stop))
		return;
	fake_helper_requeue(h, 0);
	queue_delayed_work(system_highpri_wq, &h->tick,
			   msecs_to_jiffies(FAKE_WATCHDOG_MS));
}

static void fake_helper_check(struct fake_helper *h,
			      const struct fake_helper_model *m)
{
	struct fake_run *r = h->r;

	pr_info("# %s: %ld completions, %llu calls, %llu -EAGAIN, %llu errors, %llu armed, at most %llu arms in a call; provider polls=%llu arms=%llu positive=%llu callbacks=%ld\n",
		r->name, atomic_long_read(&r->delivered), h->calls, h->eagain,
		h->errors, h->armed, h->max_arms, r->fcq->polls, r->fcq->arms,
		r->fcq->positive, atomic_long_read(&r->fcq->callbacks));
	fake_check(r, h->max_arms <= IB_POLL_ARM_TRIES,
		   "no call arms more than IB_POLL_ARM_TRIES times");
	fake_check(r, !h->zero_repolls, "never IB_PN_REPOLL with nothing");
	fake_check(r, !h->bad_status,
		   "every status matches the completions returned");
	fake_check(r, !h->errors, "no error but -EAGAIN");
	if (m->sem & FAKE_PERPETUAL)
		fake_check(r, h->eagain > 0,
			   "-EAGAIN on a CQ that never arms, and requeued");
	else
		fake_check(r, h->armed > 0, "the CQ was armed");
	fake_check(r, !r->fcq->overruns, "no CQ overrun");
}

/* Stream @r through a CQ polled with one helper on model @m. */
static int fake_helper_stream(struct fake_run *r, struct fake_dev *fdev,
			      const struct fake_helper_model *m, bool pn)
{
	struct ib_cq_init_attr cq_attr = { .cqe = r->cqe };
	unsigned int bound = stall_ms;
	struct fake_helper *h;
	bool ok = false;
	int ret;

	h = kzalloc(sizeof(*h), GFP_KERNEL);
	if (!h)
		return -ENOMEM;
	h->r = r;
	h->pn = pn;
	h->policy = m->policy;
	INIT_DELAYED_WORK(&h->work, fake_helper_work);
	INIT_DELAYED_WORK(&h->tick, fake_helper_tick);
	fake_run_reset(r);
	fdev->sem = m->sem;
	fdev->rnd = fake_seed(2000 + pn);
	fdev->ring = 0;
	h->cq = ib_create_cq(&fdev->ibdev, fake_helper_event, NULL, h,
			     &cq_attr);
	if (IS_ERR(h->cq)) {
		ret = PTR_ERR(h->cq);
		kfree(h);
		return ret;
	}
	r->fcq = to_fake_cq(h->cq);
	/* the first call finds the CQ empty and arms it */
	fake_helper_requeue(h, 0);
	if (m->sem & FAKE_LOSSY)
		queue_delayed_work(system_highpri_wq, &h->tick,
				   msecs_to_jiffies(FAKE_WATCHDOG_MS));
	if (m->sem & FAKE_PERPETUAL)
		bound = max_t(unsigned int, bound, FAKE_PERPETUAL_STALL_MS);
	ret = fake_producers_start(r);
	if (!ret) {
		ok = fake_wait_delivered(r, bound);
		if (!ok)
			fake_print_stall(r);
	}
	fake_producers_stop(r);
	if (!ret) {
		fake_check(r, ok,
			   "everything delivered within the stall bound");
		if (ok && !(m->sem & FAKE_PERPETUAL))
			fake_check(r, fake_wait_armed(r->fcq, stall_ms),
				   "ends empty and armed");
	}
	fake_cq_quiesce(r->fcq);
	WRITE_ONCE(h->stop, true);
	cancel_delayed_work_sync(&h->tick);
	cancel_delayed_work_sync(&h->work);
	if (!ret)
		fake_helper_check(h, m);
	ib_destroy_cq(h->cq);
	r->fcq = NULL;
	kfree(h);
	return ret;
}

/*
 * fake_poll_helpers: ib_poll_cq_and_arm() and ib_poll_and_notify() driven
 * by a completion handler and a work item of their own on every provider
 * model, checked as done() checks an OCQ's completions (CQ order).
 */
static int fake_run_poll_helpers(const struct fake_scenario *sc,
				 struct fake_dev *fdev, struct fake_ktap *k)
{
	unsigned int i, pn;
	int ret = 0;

	for (i = 0; i < ARRAY_SIZE(fake_helper_models) && !ret; i++) {
		const struct fake_helper_model *m = &fake_helper_models[i];

		for (pn = m->pn_only; pn < 2 && !ret; pn++) {
			struct fake_run *r;

			r = fake_run_alloc(sc, IB_OCQ_STRICT, completions, cqe,
					   false);
			if (!r)
				return -ENOMEM;
			snprintf(r->name, sizeof(r->name), "%s_%s", m->name,
				 pn ? "poll_and_notify" : "poll_cq_and_arm");
			if ((m->sem & FAKE_CONCURRENT) &&
			    num_online_cpus() < 2) {
				fake_skip(k, r->name, "needs two online CPUs");
				fake_run_free(r);
				continue;
			}
			ret = fake_helper_stream(r, fdev, m, pn);
			fake_result(k, !ret && !atomic_read(&r->failures),
				    r->name, NULL);
			fake_run_free(r);
		}
	}
	return ret;
}

/* --- fake_flow_hol: head-of-line blocking between flows --- */

/* A's done() takes this long, in milliseconds */
#define FAKE_HOL_A_MS 5
/* A's backlog in the first half; doubled in the second (within cqe=256) */
#define FAKE_HOL_BACKLOG 96
/* backlogs of A per half */
#define FAKE_HOL_ROUNDS 3
/*
 * A done() calls B may wait for beyond IB_OCQ_HOL_DONES: the kick of A's
 * domain queues the CQ run, which polls B and queues B's domain, while A
 * goes on with 5 ms calls, and under TCG on a loaded host a work item can
 * wait many of them for a CPU (up to 7 on an idle host, 39 with two other
 * guests running: mdelay() counts host time while a vCPU is descheduled).
 * Still half the smaller backlog, whose whole pass an engine that kicks
 * only at its end makes B wait for.
 */
#define FAKE_HOL_SLACK 44
#define FAKE_HOL_BOUND (IB_OCQ_HOL_DONES + FAKE_HOL_SLACK)

/**
 * struct fake_hol - two flows: A with slow done() calls and a backlog, B
 *	with one cheap completion at a time
 * @ocq: the OCQ, %IB_OCQ_FLOW with two domains
 * @fcq: its fake CQ
 * @a: A's flow (its QP; requests in @areqs)
 * @b: B's flow, its one request in @breq
 * @areqs: A's requests, 2 * %FAKE_HOL_BACKLOG
 * @breq: B's request
 * @a_dones: A's done() calls
 * @a_next: A's next sequence number expected (A's domain)
 * @a_pushed: A's completions pushed
 * @a_inside: an A done() is running
 * @b_dones: B's done() calls
 * @b_saw: @a_dones when B's last done() ran
 * @overlapped: a B done() ran while an A done() did
 * @failures: failed checks in done()
 * @wq: the test waits here
 */
struct fake_hol {
	struct ib_ocq *ocq;
	struct fake_cq *fcq;
	struct fake_flow a;
	struct fake_flow b;
	struct fake_req areqs[2 * FAKE_HOL_BACKLOG];
	struct fake_req breq;
	atomic_t a_dones;
	u32 a_next;
	u32 a_pushed;
	atomic_t a_inside;
	atomic_t b_dones;
	int b_saw;
	bool overlapped;
	atomic_t failures;
	wait_queue_head_t wq;
};

static void fake_hol_a_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct fake_req *req = container_of(wc->wr_cqe, struct fake_req, cqe);
	struct fake_hol *h = ib_ocq_private(cq);

	if (req->seq != h->a_next++ || wc->status != IB_WC_SUCCESS) {
		atomic_inc(&h->failures);
		pr_info("# flow A: seq %u out of order or failed\n", req->seq);
	}
	atomic_inc(&h->a_inside);
	mdelay(FAKE_HOL_A_MS);
	atomic_dec(&h->a_inside);
	atomic_inc(&h->a_dones);
	wake_up(&h->wq);
}

static void fake_hol_b_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct fake_hol *h = ib_ocq_private(cq);

	h->b_saw = atomic_read(&h->a_dones);
	if (atomic_read(&h->a_inside))
		h->overlapped = true;
	/* pairs with atomic_read_acquire() in fake_hol_round() */
	atomic_inc_return_release(&h->b_dones);
	wake_up(&h->wq);
}

static void fake_hol_push(struct fake_hol *h, struct fake_flow *f,
			  struct fake_req *req)
{
	struct ib_wc wc = {
		.wr_cqe = &req->cqe,
		.status = IB_WC_SUCCESS,
		.opcode = IB_WC_RECV,
		.qp = &f->qp,
	};

	if (!fake_cq_push(h->fcq, req, &wc))
		atomic_inc(&h->failures);
}

/*
 * One backlog of @n A completions, then B completions one at a time while
 * enough of the backlog is left: the A done() calls each B waited for.
 */
static int fake_hol_round(struct fake_hol *h, u32 n, int *max_wait,
			  unsigned int *samples)
{
	unsigned long bound = msecs_to_jiffies(stall_ms);
	int base = atomic_read(&h->a_dones), at, b;
	u32 i;

	for (i = 0; i < n; i++) {
		h->areqs[i].seq = h->a_pushed++;
		fake_hol_push(h, &h->a, &h->areqs[i]);
	}
	/* A's domain is busy with the backlog */
	if (!wait_event_timeout(h->wq, atomic_read(&h->a_dones) > base, bound))
		return -ETIMEDOUT;
	for (;;) {
		at = atomic_read(&h->a_dones);
		if (base + (int)n - at <= FAKE_HOL_BOUND)
			break; /* too little backlog left to tell */
		b = atomic_read(&h->b_dones);
		fake_hol_push(h, &h->b, &h->breq);
		if (!wait_event_timeout(h->wq,
					atomic_read_acquire(&h->b_dones) != b,
					bound))
			return -ETIMEDOUT;
		*max_wait = max(*max_wait, h->b_saw - at);
		(*samples)++;
	}
	if (!wait_event_timeout(h->wq, atomic_read(&h->a_dones) == base + n,
				bound))
		return -ETIMEDOUT;
	return 0;
}

static void fake_hol_init(struct fake_hol *h)
{
	unsigned int i;

	init_waitqueue_head(&h->wq);
	/* the engine's default flow key is the QP number, hashed into a domain */
	h->a.qp.qp_num = 0x100;
	h->b.qp.qp_num = 0x101;
	while (hash_32(h->b.qp.qp_num, 32) % 2 ==
	       hash_32(h->a.qp.qp_num, 32) % 2)
		h->b.qp.qp_num++;
	for (i = 0; i < ARRAY_SIZE(h->areqs); i++) {
		h->areqs[i].cqe.done = fake_hol_a_done;
		h->areqs[i].flow = &h->a;
	}
	h->breq.cqe.done = fake_hol_b_done;
	h->breq.flow = &h->b;
}

/*
 * fake_flow_hol: while A's domain works through a backlog of 5 ms done()
 * calls, each B completion waits for at most IB_OCQ_HOL_DONES of them (plus
 * FAKE_HOL_SLACK), counted in A done() calls rather than time, with
 * FAKE_HOL_BACKLOG and with twice that: the wait does not grow with the
 * backlog.
 */
static int fake_run_flow_hol(const struct fake_scenario *sc,
			     struct fake_dev *fdev, struct fake_ktap *k)
{
	struct ib_ocq_attr attr = {
		.mode = IB_OCQ_FLOW,
		.nr_domains = 2,
	};
	int max_wait[2] = {}, ret = 0;
	unsigned int samples[2] = {}, half, i;
	struct fake_hol *h;
	bool ok;

	if (num_online_cpus() < 2) {
		fake_skip(k, "flow", "needs two online CPUs");
		return 0;
	}
	h = kzalloc(sizeof(*h), GFP_KERNEL);
	if (!h)
		return -ENOMEM;
	fake_hol_init(h);
	fdev->sem = sc->sem;
	fdev->rnd = fake_seed(4000);
	fdev->ring = 0;
	h->ocq = ib_ocq_alloc(&fdev->ibdev, h, cqe, 0, &attr);
	if (IS_ERR(h->ocq)) {
		ret = PTR_ERR(h->ocq);
		kfree(h);
		return ret;
	}
	h->fcq = to_fake_cq(ib_ocq_cq(h->ocq));
	for (half = 0; half < 2 && !ret; half++)
		for (i = 0; i < FAKE_HOL_ROUNDS && !ret; i++)
			ret = fake_hol_round(h, FAKE_HOL_BACKLOG << half,
					     &max_wait[half], &samples[half]);
	for (half = 0; half < 2; half++)
		pr_info("# flow: A backlog %u: %u B completions waited for at most %d A done() calls (bound %u)\n",
			FAKE_HOL_BACKLOG << half, samples[half], max_wait[half],
			FAKE_HOL_BOUND);
	if (ret)
		pr_info("# flow: no progress for %u ms: A done %d of %u, B done %d\n",
			stall_ms, atomic_read(&h->a_dones), h->a_pushed,
			atomic_read(&h->b_dones));
	if (!h->overlapped)
		pr_info("# flow: no B done() ran during an A done(): one domain?\n");
	ib_ocq_free(h->ocq);
	ok = !ret && !atomic_read(&h->failures) && h->overlapped &&
	     samples[0] && samples[1] && max_wait[0] <= FAKE_HOL_BOUND &&
	     max_wait[1] <= FAKE_HOL_BOUND;
	fake_result(k, ok, "flow", NULL);
	kfree(h);
	return ret;
}

/* --- fake_resume_race: resumes racing the run under postponed arm --- */

/* the lease: long enough never to end a postponed arm in the test */
#define FAKE_RACE_PAUSE_MS IB_OCQ_MAX_PAUSE_MS
/* after the last resume, everything must be delivered within this */
#define FAKE_RACE_QUIET_MS 500
/* completions pushed after the last resume, which must arrive without one */
#define FAKE_RACE_TAIL 4
/* the resumers' sleeps, in microseconds */
#define FAKE_RACE_MIN_US 10
#define FAKE_RACE_SPAN_US 200
/* the resumers' last resumes: how many, and at most how far apart in us */
#define FAKE_RACE_BURST 100
#define FAKE_RACE_BURST_US 10
/* most resumer kthreads */
#define FAKE_RACE_RESUMERS 8

/*
 * fake_resume_race: resume at random until stopped, then a burst of
 * resumes a few microseconds apart: each starts a pass, which arms, so the
 * last one lands at a random point of a pass, often while it arms.
 */
static int fake_resumer(void *arg)
{
	struct fake_run *r = arg;
	u32 rnd = fake_seed(300 + raw_smp_processor_id());
	unsigned int us, i;

	while (!kthread_should_stop()) {
		us = FAKE_RACE_MIN_US + fake_rand(&rnd) % FAKE_RACE_SPAN_US;
		usleep_range(us, us + FAKE_RACE_MIN_US);
		ib_ocq_resume(r->ocq);
	}
	for (i = 0; i < FAKE_RACE_BURST; i++) {
		udelay(1 + fake_rand(&rnd) % FAKE_RACE_BURST_US);
		ib_ocq_resume(r->ocq);
	}
	return 0;
}

static int fake_resumers_start(struct fake_run *r, struct task_struct **t,
			       unsigned int *nt)
{
	int cpu;

	*nt = 0;
	for_each_online_cpu(cpu) {
		if (*nt == FAKE_RACE_RESUMERS)
			break;
		t[*nt] = kthread_create_on_cpu(fake_resumer, r, cpu,
					       "ocq_resumer/%u");
		if (IS_ERR(t[*nt]))
			return PTR_ERR(t[*nt]);
		atomic_inc(&fake_objects);
		wake_up_process(t[(*nt)++]);
	}
	return 0;
}

static void fake_resumers_stop(struct task_struct **t, unsigned int *nt)
{
	while (*nt) {
		kthread_stop(t[--*nt]);
		atomic_dec(&fake_objects);
	}
}

/* Wait, spinning politely, until the producers pushed everything. */
static bool fake_wait_pushed(struct fake_run *r)
{
	unsigned long last_change = jiffies;
	long last = -1, now;

	while (!fake_finished(r)) {
		now = atomic_long_read(&r->delivered);
		if (now != last) {
			last = now;
			last_change = jiffies;
		} else if (time_after(jiffies,
				      last_change +
					      msecs_to_jiffies(stall_ms))) {
			return false;
		}
		usleep_range(5, 10);
	}
	return true;
}

/*
 * Push the last FAKE_RACE_TAIL completions of flow 0 (its producer left
 * them out) from the test thread, in one burst: the run the burst's event
 * starts sees them all, and postpones the arm only after them.
 */
static void fake_race_tail(struct fake_run *r)
{
	fake_push_batch(&r->flows[0], FAKE_RACE_TAIL);
}

/*
 * One stream: resumers on every CPU race the run while the producers push,
 * and stop (each with a last resume) as soon as everything is pushed; then
 * everything must be delivered without another resume, and so must a few
 * completions pushed after the last resume, whose arm they rely on.
 */
static int fake_race_cycle(struct fake_run *r, struct fake_dev *fdev,
			   unsigned int cycle, u64 *pauses)
{
	struct task_struct *t[FAKE_RACE_RESUMERS];
	unsigned int nt = 0;
	struct ib_ocq_stats s;
	bool ok;
	int ret;

	fake_run_reset(r);
	fdev->sem = r->sc->sem;
	fdev->rnd = fake_seed(3000 + 8 * cycle + r->mode);
	fdev->ring = 0;
	ret = fake_ocq_create(r, fdev);
	if (ret)
		return ret;
	ret = fake_resumers_start(r, t, &nt);
	if (!ret)
		ret = fake_producers_start(r);
	if (ret)
		goto out;
	ok = fake_wait_pushed(r);
	fake_resumers_stop(t, &nt);
	if (!fake_check(r, ok, "the producers pushed everything"))
		goto out;
	if (!fake_wait_all(r, FAKE_RACE_QUIET_MS)) {
		pr_info("# %s: cycle %u: %llu of %llu delivered %u ms after the last resume: paused with work pending\n",
			r->name, cycle, (u64)atomic_long_read(&r->delivered),
			fake_pushed(r), FAKE_RACE_QUIET_MS);
		fake_print_stall(r);
		atomic_inc(&r->failures);
		/* the explicit "arm now" for the teardown */
		ib_ocq_resume(r->ocq);
		fake_wait_all(r, stall_ms);
		goto out;
	}
	/*
	 * The last resume said "arm at the next drain": completions pushed
	 * now raise an event and arrive without another resume.  A resume the
	 * run swallowed leaves it postponed, and these in the CQ.
	 */
	fake_race_tail(r);
	if (!fake_wait_all(r, FAKE_RACE_QUIET_MS)) {
		pr_info("# %s: cycle %u: %llu of %llu delivered %u ms after %u pushed after the last resume: its arm was lost\n",
			r->name, cycle, (u64)atomic_long_read(&r->delivered),
			fake_pushed(r), FAKE_RACE_QUIET_MS, FAKE_RACE_TAIL);
		fake_print_stall(r);
		atomic_inc(&r->failures);
		ib_ocq_resume(r->ocq);
		fake_wait_all(r, stall_ms);
		goto out;
	}
	ib_ocq_resume(r->ocq);
	fake_check(r, fake_wait_armed(r->fcq, stall_ms),
		   "ends empty and armed");
	fake_cq_quiesce(r->fcq);
	ib_ocq_pause(r->ocq);
	fake_wait_quiet(r->fcq);
	ib_ocq_get_stats(r->ocq, &s);
	*pauses += s.pauses;
	if (!fake_check(r, !ocq_compat_lease_resumes(&s),
			"no postponed arm ended by the lease"))
		fake_print_stats(r, &s);
	fake_check(r, s.completions == r->fcq->pushed, "completions == pushed");
out:
	fake_resumers_stop(t, &nt);
	fake_producers_stop(r);
	fake_ocq_free(r);
	return ret;
}

static int fake_run_resume_race(struct fake_run *r, struct fake_dev *fdev,
				struct fake_ktap *k)
{
	unsigned int i;
	u64 pauses = 0;
	int ret = 0;

	r->attr.flags = IB_OCQ_POSTPONE_ARM;
	ocq_compat_set_pause_ms(&r->attr, FAKE_RACE_PAUSE_MS);
	/* fake_race_tail() pushes these: the CQ positions stay below total */
	r->flows[0].quota -= FAKE_RACE_TAIL;
	for (i = 0; i < FAKE_RACE_CYCLES && !ret && !atomic_read(&r->failures);
	     i++)
		ret = fake_race_cycle(r, fdev, i, &pauses);
	pr_info("# %s: %u cycles of %llu completions, %llu postponed arms and pauses\n",
		r->name, i, r->total, pauses);
	fake_check(r, pauses > i, "arms were postponed");
	fake_result(k, !ret && !atomic_read(&r->failures), r->name, NULL);
	return ret;
}

/* --- fake_parallel_slow: a slow process() does not hold up the others --- */

/* completions behind the slow one, per round */
#define FAKE_PSLOW_OTHERS 8
/* the slow process() lasts this long, or until all the others ran */
#define FAKE_PSLOW_MS 1000
#define FAKE_PSLOW_ROUNDS 3

/**
 * struct fake_pslow - %IB_OCQ_PARALLEL with two workers: the first
 *	completion of a round takes long in process(), the others are cheap
 * @ocq: the OCQ
 * @fcq: its fake CQ, %FAKE_TRICKLE: one completion per poll, so that the
 *	CQ run hands them on one at a time
 * @f: the flow (its QP)
 * @reqs: a round's requests, the slow one first
 * @others: process() calls of the others in this round
 * @during: of those, how many ran while the slow one did
 * @next_seq: the sequence number done() expects
 * @seq: the next sequence number pushed
 * @dones: done() calls
 * @failures: failed checks in done()
 * @wq: the test waits here
 */
struct fake_pslow {
	struct ib_ocq *ocq;
	struct fake_cq *fcq;
	struct fake_flow f;
	struct fake_req reqs[FAKE_PSLOW_OTHERS + 1];
	atomic_t others;
	int during;
	u32 next_seq;
	u32 seq;
	atomic_t dones;
	atomic_t failures;
	wait_queue_head_t wq;
};

static void fake_pslow_process(struct ib_cq *cq, struct ib_wc *wc)
{
	struct fake_req *req = container_of(wc->wr_cqe, struct fake_req, cqe);
	struct fake_pslow *h = ib_ocq_private(cq);
	unsigned long end = jiffies + msecs_to_jiffies(FAKE_PSLOW_MS);

	if (req != &h->reqs[0]) {
		atomic_inc(&h->others);
		return;
	}
	while (atomic_read(&h->others) < FAKE_PSLOW_OTHERS &&
	       time_before(jiffies, end))
		usleep_range(10, 20);
	h->during = atomic_read(&h->others);
}

static void fake_pslow_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct fake_req *req = container_of(wc->wr_cqe, struct fake_req, cqe);
	struct fake_pslow *h = ib_ocq_private(cq);

	if (req->seq != h->next_seq++ || wc->status != IB_WC_SUCCESS) {
		atomic_inc(&h->failures);
		pr_info("# parallel: seq %u out of order or failed\n",
			req->seq);
	}
	atomic_inc(&h->dones);
	wake_up(&h->wq);
}

/* Push a round's completions at once, as a burst of CQEs. */
static void fake_pslow_push(struct fake_pslow *h)
{
	struct fake_cq *fcq = h->fcq;
	unsigned long flags;
	unsigned int i;
	bool direct;

	spin_lock_irqsave(&fcq->lock, flags);
	for (i = 0; i < ARRAY_SIZE(h->reqs); i++) {
		struct ib_wc wc = {
			.wr_cqe = &h->reqs[i].cqe,
			.status = IB_WC_SUCCESS,
			.opcode = IB_WC_RECV,
			.qp = &h->f.qp,
		};

		h->reqs[i].seq = h->seq++;
		if (!fake_cq_add(fcq, &h->reqs[i], &wc))
			atomic_inc(&h->failures);
	}
	direct = fake_cq_land(fcq);
	spin_unlock_irqrestore(&fcq->lock, flags);
	if (direct)
		fake_direct(fcq);
}

static int fake_pslow_round(struct fake_pslow *h, unsigned int round)
{
	unsigned long bound = msecs_to_jiffies(stall_ms + FAKE_PSLOW_MS);
	int base = atomic_read(&h->dones);

	if (!fake_wait_armed(h->fcq, stall_ms))
		return -ETIMEDOUT;
	atomic_set(&h->others, 0);
	h->during = -1;
	fake_pslow_push(h);
	if (!wait_event_timeout(h->wq,
				atomic_read(&h->dones) ==
					base + (int)ARRAY_SIZE(h->reqs),
				bound))
		return -ETIMEDOUT;
	pr_info("# parallel: round %u: %d of %u completions behind the slow process() were processed while it ran\n",
		round, h->during, FAKE_PSLOW_OTHERS);
	return h->during >= 1 ? 0 : -EAGAIN;
}

/*
 * fake_parallel_slow: in each round, a completion whose process() takes up
 * to FAKE_PSLOW_MS and FAKE_PSLOW_OTHERS cheap ones behind it, handed to
 * the workers one at a time: at least one of those must be processed by
 * the other worker while the slow one runs.  The CQ run does not poll
 * further while the commit step waits for the slow completion, so that
 * one may be all.
 */
static int fake_run_parallel_slow(const struct fake_scenario *sc,
				  struct fake_dev *fdev, struct fake_ktap *k)
{
	struct ib_ocq_attr attr = {
		.mode = IB_OCQ_PARALLEL,
		.nr_domains = 2,
		.process = fake_pslow_process,
	};
	struct fake_pslow *h;
	unsigned int i, failed = 0;
	int ret = 0, r;

	if (num_online_cpus() < 2) {
		fake_skip(k, "parallel", "needs two online CPUs");
		return 0;
	}
	h = kzalloc(sizeof(*h), GFP_KERNEL);
	if (!h)
		return -ENOMEM;
	init_waitqueue_head(&h->wq);
	h->f.qp.qp_num = 0x100;
	for (i = 0; i < ARRAY_SIZE(h->reqs); i++) {
		h->reqs[i].cqe.done = fake_pslow_done;
		h->reqs[i].flow = &h->f;
	}
	fdev->sem = sc->sem;
	fdev->rnd = fake_seed(5000);
	fdev->ring = 0;
	h->ocq = ib_ocq_alloc(&fdev->ibdev, h, cqe, 0, &attr);
	if (IS_ERR(h->ocq)) {
		ret = PTR_ERR(h->ocq);
		kfree(h);
		return ret;
	}
	h->fcq = to_fake_cq(ib_ocq_cq(h->ocq));
	for (i = 0; i < FAKE_PSLOW_ROUNDS && !ret; i++) {
		r = fake_pslow_round(h, i);
		if (r == -EAGAIN)
			failed++;
		else
			ret = r;
	}
	if (ret)
		pr_info("# parallel: no progress: %d done() calls of %u\n",
			atomic_read(&h->dones), h->seq);
	ib_ocq_free(h->ocq);
	fake_result(k, !ret && !failed && !atomic_read(&h->failures),
		    "parallel", NULL);
	kfree(h);
	return ret;
}

/* --- fake_drain_paused: ib_drain_qp() on a paused or postponed OCQ --- */

#define FAKE_DRAIN_QPS 2
/* completions of each QP, half delivered before the pause, half behind it */
#define FAKE_DRAIN_REQS 32
/*
 * The lease: a pause or postponed arm nobody ends lasts this to twice this.
 * Long enough that it is still on when the first drain begins.
 */
#define FAKE_DRAIN_PAUSE_MS 500
/*
 * Every ib_drain_qp() of a case returns within this: each of its two
 * drains (send, then receive) may wait for a whole lease of up to twice
 * pause_ms, and TCG is slow.
 */
#define FAKE_DRAIN_BOUND_MS (2 * 2 * FAKE_DRAIN_PAUSE_MS + 2000)
/* a drain that waited this long is reported as hung, and given up */
#define FAKE_DRAIN_GIVE_UP_MS 10000
/*
 * Keyed cases: how long the first done() behind a drain waits for the
 * drain's completion, which must not come meanwhile (it would overtake).
 */
#define FAKE_DRAIN_OVERTAKE_MS 300

struct fake_drain;

/**
 * struct fake_dqp - a fake QP that ib_drain_qp() can drain
 * @h: the case it belongs to
 * @f: its flow: @f.qp is the QP, with the device and both CQs set
 * @reqs: its completions, in sequence
 * @marker: the drain's own work request: a flush behind everything else
 * @drained: the marker's done() ran
 * @next_seq: the sequence number done() expects (D)
 * @dones: done() calls of @reqs (A)
 * @markers: markers pushed, one per drain (test)
 * @marked: the marker's done() calls (A)
 * @given_up: a drain timed out; the marker may still come (D, then test)
 */
struct fake_dqp {
	struct fake_drain *h;
	struct fake_flow f;
	struct fake_req reqs[FAKE_DRAIN_REQS];
	struct fake_req marker;
	struct completion drained;
	u32 next_seq;
	atomic_t dones;
	unsigned int markers;
	atomic_t marked;
	bool given_up;
};

/**
 * struct fake_drain - one case of fake_drain_paused
 * @ocq: the OCQ
 * @fcq: its fake CQ
 * @qps: the QPs sharing it
 * @keyed: a flow_key sends the first half of each QP's completions to one
 *	domain and the second half to another, by request (wr_cqe)
 * @keys: those two flow keys, in different domains
 * @failures: failed checks in done() and process()
 */
struct fake_drain {
	struct ib_ocq *ocq;
	struct fake_cq *fcq;
	struct fake_dqp qps[FAKE_DRAIN_QPS];
	bool keyed;
	u32 keys[2];
	atomic_t failures;
};

/* A failed check of @d's: @what. */
static void fake_drain_fail(struct fake_dqp *d, const char *what)
{
	atomic_inc(&d->h->failures);
	pr_info("# drain: qp %#x: %s\n", d->f.qp.qp_num, what);
}

/* The same, with the number it is about: a seq, a count, ms. */
static void fake_drain_fail_at(struct fake_dqp *d, const char *what, u32 n)
{
	atomic_inc(&d->h->failures);
	pr_info("# drain: qp %#x: %s (%u)\n", d->f.qp.qp_num, what, n);
}

static void fake_drain_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct fake_req *req = container_of(wc->wr_cqe, struct fake_req, cqe);
	struct fake_dqp *d = container_of(req->flow, struct fake_dqp, f);

	if (req->seq != d->next_seq || wc->status != IB_WC_SUCCESS)
		fake_drain_fail_at(d, "out of order or failed: seq", req->seq);
	d->next_seq = req->seq + 1;
	/*
	 * Keyed: the first completion behind the drain holds its domain a
	 * while, so that a flush sent to the other, idle domain would be
	 * dispatched meanwhile and overtake it.
	 */
	if (d->h->keyed && req->seq == FAKE_DRAIN_REQS / 2) {
		unsigned long end =
			jiffies + msecs_to_jiffies(FAKE_DRAIN_OVERTAKE_MS);

		while (!atomic_read(&d->marked) && time_before(jiffies, end))
			usleep_range(100, 200);
	}
	atomic_inc(&d->dones);
}

/*
 * The keyed cases' flow_key, by request, found through wr_cqe as a ULP
 * keys by its own request.  Asked of a drain's flush, it would send the
 * flush (its marker's sequence number is 0) to the first half's domain,
 * idle while the second half waits in the other.
 */
static u32 fake_drain_key(struct ib_cq *cq, const struct ib_wc *wc)
{
	struct fake_req *req = container_of(wc->wr_cqe, struct fake_req, cqe);
	struct fake_dqp *d = container_of(req->flow, struct fake_dqp, f);
	struct fake_drain *h = ib_ocq_private(cq);

	if (req == &d->marker)
		fake_drain_fail(d, "flow_key() of the drain's completion");
	return h->keys[req->seq >= FAKE_DRAIN_REQS / 2];
}

/* The drain's completion: every earlier one of its QP must have come. */
static void fake_drain_marker_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct fake_req *req = container_of(wc->wr_cqe, struct fake_req, cqe);
	struct fake_dqp *d = container_of(req->flow, struct fake_dqp, f);
	u32 n = atomic_read(&d->dones);

	/* the QP's completions are all pushed before its first drain */
	if (n != FAKE_DRAIN_REQS)
		fake_drain_fail_at(d, "drain before its completions: dones", n);
	atomic_inc(&d->marked);
	complete(&d->drained);
}

/* A drain's flush is no request of the ULP: process() must not see it. */
static void fake_drain_process(struct ib_cq *cq, struct ib_wc *wc)
{
	struct fake_req *req = container_of(wc->wr_cqe, struct fake_req, cqe);
	struct fake_dqp *d = container_of(req->flow, struct fake_dqp, f);

	if (req == &d->marker)
		fake_drain_fail(d, "process() of the drain's completion");
}

/*
 * The device's drain_sq and drain_rq, which ib_drain_qp() calls instead of
 * its own: what __ib_drain_sq() does, on a QP whose work is all in the CQ
 * already.  The QP's flush completion goes in behind it, and the drain
 * waits for that completion's done(); as ib_core's, it waits without
 * bound for a CQ that is processed, but gives up on one that hangs.
 */
static void fake_drain_wq(struct ib_qp *qp)
{
	unsigned long give_up = msecs_to_jiffies(FAKE_DRAIN_GIVE_UP_MS);
	struct fake_dqp *d = qp->qp_context;
	struct ib_wc wc = {
		.wr_cqe = &d->marker.cqe,
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_SEND,
		.qp = qp,
	};

	/* only fake_drain_init() makes QPs that can be drained */
	if (WARN_ON_ONCE(!d) || d->given_up)
		return;
	reinit_completion(&d->drained);
	if (!fake_cq_push(d->h->fcq, &d->marker, &wc)) {
		fake_drain_fail(d, "CQ overrun on the drain's completion");
		return;
	}
	d->markers++;
	if (!wait_for_completion_timeout(&d->drained, give_up)) {
		d->given_up = true;
		fake_drain_fail_at(d, "the drain did not return within ms",
				   FAKE_DRAIN_GIVE_UP_MS);
	}
}

static void fake_drain_sq(struct ib_qp *qp)
{
	fake_drain_wq(qp);
}

static void fake_drain_rq(struct ib_qp *qp)
{
	fake_drain_wq(qp);
}

/* Push @n completions of each QP from @from on, one burst of CQEs. */
static void fake_drain_push(struct fake_drain *h, u32 from, u32 n)
{
	struct fake_cq *fcq = h->fcq;
	unsigned long flags;
	bool direct;
	u32 i, q;

	spin_lock_irqsave(&fcq->lock, flags);
	for (i = from; i < from + n; i++) {
		for (q = 0; q < FAKE_DRAIN_QPS; q++) {
			struct fake_dqp *d = &h->qps[q];
			struct ib_wc wc = {
				.wr_cqe = &d->reqs[i].cqe,
				.status = IB_WC_SUCCESS,
				.opcode = IB_WC_RECV,
				.qp = &d->f.qp,
			};

			if (!fake_cq_add(fcq, &d->reqs[i], &wc))
				fake_drain_fail_at(d, "CQ overrun: seq", i);
		}
	}
	direct = fake_cq_land(fcq);
	spin_unlock_irqrestore(&fcq->lock, flags);
	if (direct)
		fake_direct(fcq);
}

/* Wait until every QP saw its first @n completions. */
static bool fake_drain_wait(struct fake_drain *h, u32 n)
{
	unsigned long end = jiffies + msecs_to_jiffies(stall_ms);
	u32 q;

	for (q = 0; q < FAKE_DRAIN_QPS; q++) {
		while (atomic_read(&h->qps[q].dones) < n) {
			if (time_after(jiffies, end))
				return false;
			msleep(FAKE_POLL_MS);
		}
	}
	return true;
}

static void fake_drain_init(struct fake_drain *h, struct fake_dev *fdev)
{
	struct ib_cq *cq = ib_ocq_cq(h->ocq);
	u32 q, i;

	h->fcq = to_fake_cq(cq);
	for (q = 0; q < FAKE_DRAIN_QPS; q++) {
		struct fake_dqp *d = &h->qps[q];

		d->h = h;
		d->f.qp.qp_num = 0x100 + q;
		d->f.qp.device = &fdev->ibdev;
		d->f.qp.send_cq = cq;
		d->f.qp.recv_cq = cq;
		d->f.qp.qp_context = d;
		init_completion(&d->drained);
		for (i = 0; i < FAKE_DRAIN_REQS; i++) {
			d->reqs[i].cqe.done = fake_drain_done;
			d->reqs[i].flow = &d->f;
			d->reqs[i].seq = i;
		}
		d->marker.cqe.done = fake_drain_marker_done;
		d->marker.flow = &d->f;
	}
}

/*
 * Stream half of each QP's completions; then pause (or, postponed, stop
 * arming) and push the other half, which now waits in the CQ; then drain
 * every QP.  Each drain must return within FAKE_DRAIN_BOUND_MS, after every
 * completion of its QP.  Return the longest drain in ms, or -errno.
 */
static int fake_drain_case(struct fake_drain *h, bool postpone)
{
	const u32 half = FAKE_DRAIN_REQS / 2;
	int longest = 0;
	u32 q;

	if (postpone)
		ib_ocq_resume(h->ocq); /* the first arm; nobody arms again */
	if (!fake_wait_armed(h->fcq, stall_ms)) {
		pr_info("# drain: the new CQ was not armed\n");
		return -ETIMEDOUT;
	}
	fake_drain_push(h, 0, half);
	if (!fake_drain_wait(h, half)) {
		pr_info("# drain: the first half was not delivered\n");
		return -ETIMEDOUT;
	}
	if (!postpone)
		ib_ocq_pause(h->ocq);
	fake_wait_quiet(h->fcq);
	fake_drain_push(h, half, FAKE_DRAIN_REQS - half);
	for (q = 0; q < FAKE_DRAIN_QPS; q++) {
		struct fake_dqp *d = &h->qps[q];
		ktime_t t0 = ktime_get();
		int ms;

		/* else the lease ended the wait first, and this tests nothing */
		if (!q && atomic_read(&d->dones) != half)
			fake_drain_fail_at(d, "went on before draining: dones",
					   atomic_read(&d->dones));
		ib_drain_qp(&d->f.qp);
		ms = ktime_ms_delta(ktime_get(), t0);
		longest = max(longest, ms);
		if (d->given_up)
			continue;
		if (ms > FAKE_DRAIN_BOUND_MS)
			fake_drain_fail_at(d, "drain over its bound: ms", ms);
		if (atomic_read(&d->marked) != d->markers)
			fake_drain_fail_at(d, "flush done() twice: calls",
					   atomic_read(&d->marked));
	}
	return longest;
}

/* the cases: every mode, then flow mode keyed by request; paused, postponed */
static const char *const fake_drain_names[] = {
	"strict_paused",      "flow_paused",	      "parallel_paused",
	"flow_keyed_paused",  "strict_postponed",     "flow_postponed",
	"parallel_postponed", "flow_keyed_postponed",
};

#define FAKE_DRAIN_CASES (FAKE_NR_MODES + 1)

/* Case @i of fake_drain_paused: a fresh OCQ, drained; false if it failed. */
static bool fake_drain_one(struct fake_dev *fdev, unsigned int i)
{
	bool keyed = i % FAKE_DRAIN_CASES == FAKE_NR_MODES;
	enum ib_ocq_mode mode = keyed ? IB_OCQ_FLOW : i % FAKE_DRAIN_CASES;
	bool postpone = i >= FAKE_DRAIN_CASES;
	struct ib_ocq_attr attr = {
		.mode = mode,
		.nr_domains = mode == IB_OCQ_STRICT ? 0 : 4,
		.flags = postpone ? IB_OCQ_POSTPONE_ARM : 0,
		.pause_ms = FAKE_DRAIN_PAUSE_MS,
		.flow_key = keyed ? fake_drain_key : NULL,
		.process = mode == IB_OCQ_PARALLEL ? fake_drain_process : NULL,
	};
	struct ib_ocq_stats s;
	struct fake_drain *h;
	bool ok;
	int ms;

	h = kzalloc(sizeof(*h), GFP_KERNEL);
	if (!h)
		return false;
	h->keyed = keyed;
	/* keyed: two keys in different domains, as the engine spreads them */
	h->keys[0] = 1;
	h->keys[1] = 2;
	while (keyed && hash_32(h->keys[1], 32) % attr.nr_domains ==
				hash_32(h->keys[0], 32) % attr.nr_domains)
		h->keys[1]++;
	h->ocq = ib_ocq_alloc(&fdev->ibdev, h, cqe, 0, &attr);
	if (IS_ERR(h->ocq)) {
		pr_info("# drain: %s: ib_ocq_alloc: %ld\n", fake_drain_names[i],
			PTR_ERR(h->ocq));
		kfree(h);
		return false;
	}
	fake_drain_init(h, fdev);
	ms = fake_drain_case(h, postpone);
	if (!postpone)
		ib_ocq_resume(h->ocq);
	ib_ocq_get_stats(h->ocq, &s);
	/* what a given-up drain left behind ends with the OCQ */
	ib_ocq_free(h->ocq);
	if (ms >= 0)
		pr_info("# drain: %s: longest ib_drain_qp() %d ms (bound %d), lease_resumes %llu\n",
			fake_drain_names[i], ms, FAKE_DRAIN_BOUND_MS,
			s.lease_resumes);
	else
		pr_info("# drain: %s: no drain: %d\n", fake_drain_names[i], ms);
	ok = ms >= 0 && !atomic_read(&h->failures) && s.lease_resumes > 0;
	kfree(h);
	return ok;
}

/*
 * fake_drain_paused: ib_drain_qp() on every QP of an OCQ that is paused,
 * and of one whose arm is postponed and nobody arms, in every mode and in
 * flow mode keyed by request, with completions of both QPs waiting in the
 * CQ: each drain returns within two leases, after every completion of its
 * QP, in order, and neither process() nor flow_key() sees the drain's
 * flush.  The lease must have ended the wait.
 */
static int fake_run_drain_paused(const struct fake_scenario *sc,
				 struct fake_dev *fdev, struct fake_ktap *k)
{
	unsigned int i;

	fdev->sem = sc->sem;
	fdev->rnd = fake_seed(6000);
	fdev->ring = 0;
	for (i = 0; i < ARRAY_SIZE(fake_drain_names); i++)
		fake_result(k, fake_drain_one(fdev, i), fake_drain_names[i],
			    NULL);
	return 0;
}

/* --- fake_bad_attr: every -EINVAL, none with a warning --- */

static u32 fake_flow_key(struct ib_cq *cq, const struct ib_wc *wc)
{
	return wc->qp->qp_num;
}

static void fake_bad_comp(struct ib_cq *cq, void *ctx)
{
}

/**
 * struct fake_attr_case - an ib_ocq_attr, good or bad
 * @name: subtest name
 * @mode: &ib_ocq_attr.mode
 * @policy: &ib_ocq_attr.policy
 * @flags: &ib_ocq_attr.flags
 * @nr_domains: &ib_ocq_attr.nr_domains
 * @budget: &ib_ocq_attr.budget
 * @pause_ms: &ib_ocq_attr.pause_ms
 * @process: set &ib_ocq_attr.process
 * @flow_key: set &ib_ocq_attr.flow_key
 * @ok: ib_ocq_alloc() succeeds
 */
struct fake_attr_case {
	const char *name;
	unsigned int mode;
	unsigned int policy;
	unsigned int flags;
	unsigned int nr_domains;
	unsigned int budget;
	unsigned int pause_ms;
	bool process;
	bool flow_key;
	bool ok;
};

static const struct fake_attr_case fake_attr_cases[] = {
	{ .name = "bad_mode", .mode = IB_OCQ_PARALLEL + 1 },
	{ .name = "bad_policy", .policy = IB_ARM_DOUBLE_POLL + 1 },
	{ .name = "bad_flags", .flags = IB_OCQ_POSTPONE_ARM << 1 },
	{ .name = "parallel_without_process", .mode = IB_OCQ_PARALLEL },
	{ .name = "process_without_parallel", .process = true },
	{ .name = "flow_key_without_flow", .flow_key = true },
	{ .name = "too_many_domains", .mode = IB_OCQ_FLOW, .nr_domains = 65 },
	{ .name = "budget_too_big", .budget = IB_OCQ_MAX_BUDGET + 1 },
	{ .name = "pause_ms_too_big", .pause_ms = IB_OCQ_MAX_PAUSE_MS + 1 },
	{ .name = "most_domains",
	  .mode = IB_OCQ_FLOW,
	  .nr_domains = 64,
	  .ok = true },
	{ .name = "biggest_budget", .budget = IB_OCQ_MAX_BUDGET, .ok = true },
	{ .name = "longest_pause_ms",
	  .pause_ms = IB_OCQ_MAX_PAUSE_MS,
	  .flags = IB_OCQ_POSTPONE_ARM,
	  .ok = true },
	{ .name = "flow_key",
	  .mode = IB_OCQ_FLOW,
	  .flow_key = true,
	  .ok = true },
	{ .name = "parallel",
	  .mode = IB_OCQ_PARALLEL,
	  .process = true,
	  .policy = IB_ARM_DOUBLE_POLL,
	  .ok = true },
};

static void fake_attr_make(const struct fake_attr_case *c,
			   struct ib_ocq_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->mode = c->mode;
	attr->policy = c->policy;
	attr->flags = c->flags;
	attr->nr_domains = c->nr_domains;
	attr->budget = c->budget;
	ocq_compat_set_pause_ms(attr, c->pause_ms);
	attr->process = c->process ? fake_process : NULL;
	attr->flow_key = c->flow_key ? fake_flow_key : NULL;
}

/* An allocation's result against what was expected; frees a success. */
static void fake_bad_result(struct fake_ktap *k, const char *name,
			    struct ib_ocq *ocq, bool want_ok)
{
	int ret = PTR_ERR_OR_ZERO(ocq);

	if (!ret)
		ib_ocq_free(ocq);
	if (want_ok ? ret : ret != -EINVAL)
		pr_info("# %s: ib_ocq_alloc() returned %d, expected %s\n", name,
			ret, want_ok ? "success" : "-EINVAL");
	fake_result(k, want_ok ? !ret : ret == -EINVAL, name, NULL);
}

/*
 * A case of fake_attr_cases on a direct CQ: refused as on any other, and
 * so are parallel mode, a postponed arm and the watchdog.
 */
static void fake_bad_direct(struct fake_ktap *k, struct ib_device *dev,
			    const struct fake_attr_case *c)
{
	struct ib_ocq_attr attr;
	struct ib_cq *cq;
	char name[64];
	bool ok;

	fake_attr_make(c, &attr);
	ok = c->ok && attr.mode != IB_OCQ_PARALLEL && !attr.flags &&
	     !attr.watchdog_ms;
	snprintf(name, sizeof(name), "direct_%s", c->name);
	cq = ib_ocq_alloc_cq(dev, NULL, cqe, 0, IB_POLL_DIRECT, &attr);
	fake_bad_result(k, name, IS_ERR(cq) ? ERR_CAST(cq) : ib_cq_to_ocq(cq),
			ok);
}

static void fake_bad_allocs(struct fake_dev *fdev, struct fake_ktap *k)
{
	struct ib_ocq_attr attr = {};
	struct ib_device *dev = &fdev->ibdev;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fake_attr_cases); i++) {
		const struct fake_attr_case *c = &fake_attr_cases[i];

		fake_attr_make(c, &attr);
		fake_bad_result(k, c->name,
				ib_ocq_alloc(dev, NULL, cqe, 0, &attr), c->ok);
	}
	/* the same through IB_POLL_DIRECT, which runs no engine */
	for (i = 0; i < ARRAY_SIZE(fake_attr_cases); i++)
		fake_bad_direct(k, dev, &fake_attr_cases[i]);
	memset(&attr, 0, sizeof(attr));
	fake_bad_result(k, "no_device",
			__ib_ocq_alloc(NULL, NULL, cqe, 0, &attr,
				       KBUILD_MODNAME),
			false);
	fake_bad_result(k, "no_attr", ib_ocq_alloc(dev, NULL, cqe, 0, NULL),
			false);
	fake_bad_result(k, "no_cqe", ib_ocq_alloc(dev, NULL, 0, 0, &attr),
			false);
	fake_bad_result(k, "negative_cqe",
			ib_ocq_alloc(dev, NULL, -1, 0, &attr), false);
	fake_bad_result(k, "negative_comp_vector",
			ib_ocq_alloc(dev, NULL, cqe, -1, &attr), false);
	fake_bad_result(k, "comp_vector_too_big",
			ib_ocq_alloc(dev, NULL, cqe,
				     max(dev->num_comp_vectors, 1), &attr),
			false);
}

static void fake_bad_expect(struct fake_ktap *k, const char *name, int ret,
			    int want)
{
	if (ret != want)
		pr_info("# %s: returned %d, expected %d\n", name, ret, want);
	fake_result(k, ret == want, name, NULL);
}

/* The helpers' -EINVAL cases, then one good call of each on the empty CQ. */
static int fake_bad_helpers(struct fake_dev *fdev, struct fake_ktap *k)
{
	struct ib_cq_init_attr cq_attr = { .cqe = cqe };
	enum ib_pn_status st = IB_PN_MORE;
	struct ib_wc wc[2];
	struct ib_cq *cq;
	int n;

	fdev->sem = 0;
	fdev->ring = 0;
	cq = ib_create_cq(&fdev->ibdev, fake_bad_comp, NULL, NULL, &cq_attr);
	if (IS_ERR(cq))
		return PTR_ERR(cq);
	fake_bad_expect(k, "poll_cq_and_arm_no_entries",
			ib_poll_cq_and_arm(cq, 0, wc), -EINVAL);
	fake_bad_expect(k, "poll_cq_and_arm_negative_entries",
			ib_poll_cq_and_arm(cq, -1, wc), -EINVAL);
	fake_bad_expect(k, "poll_cq_and_arm_no_wc",
			ib_poll_cq_and_arm(cq, 1, NULL), -EINVAL);
	fake_bad_expect(k, "poll_and_notify_no_entries",
			ib_poll_and_notify(cq, 0, wc, IB_ARM_REPORT_MISSED,
					   &st),
			-EINVAL);
	fake_bad_expect(k, "poll_and_notify_no_wc",
			ib_poll_and_notify(cq, 1, NULL, IB_ARM_REPORT_MISSED,
					   &st),
			-EINVAL);
	fake_bad_expect(k, "poll_and_notify_no_status",
			ib_poll_and_notify(cq, 1, wc, IB_ARM_REPORT_MISSED,
					   NULL),
			-EINVAL);
	fake_bad_expect(k, "poll_and_notify_bad_policy",
			ib_poll_and_notify(cq, 1, wc, IB_ARM_DOUBLE_POLL + 1,
					   &st),
			-EINVAL);
	fake_bad_expect(k, "poll_cq_and_arm_empty",
			ib_poll_cq_and_arm(cq, 2, wc), 0);
	n = ib_poll_and_notify(cq, 2, wc, IB_ARM_REPORT_MISSED, &st);
	if (!n && st != IB_PN_EMPTY_ARMED)
		pr_info("# poll_and_notify_empty: status %d, expected IB_PN_EMPTY_ARMED\n",
			st);
	fake_bad_expect(k, "poll_and_notify_empty",
			n || st != IB_PN_EMPTY_ARMED ? -EPROTO : 0, 0);
	ib_destroy_cq(cq);
	return 0;
}

/*
 * fake_bad_attr: every bad argument of the allocation and the helpers is
 * -EINVAL, without a warning (the guest panics on one), and the limits
 * themselves are accepted.
 */
static int fake_run_bad_attr(const struct fake_scenario *sc,
			     struct fake_dev *fdev, struct fake_ktap *k)
{
	fake_bad_allocs(fdev, k);
	return fake_bad_helpers(fdev, k);
}

/* --- per-scenario checks --- */

static void fake_check_weak(struct fake_run *r, const struct ib_ocq_stats *s)
{
	fake_check(r, r->fcq->positive > 0,
		   "arming a non-empty CQ returned 1 at least once");
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

static void fake_check_strong(struct fake_run *r, const struct ib_ocq_stats *s)
{
	pr_info("# %s: %llu polls of an armed CQ\n", r->name,
		r->fcq->armed_polls);
	fake_check(r, !s->repolls && !r->fcq->positive,
		   "IB_ARM_STRONG never re-polls");
	/* nothing but an event starts a run here: no pauses, no watchdog */
	fake_check(r, !r->fcq->armed_polls,
		   "IB_ARM_STRONG never polls a CQ it armed");
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
	if (r->attr.watchdog_ms)
		fake_check(r, s->rescues > 0, "the watchdog rescued");
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
		.check = fake_check_weak,
		.run = fake_run_stream,
	},
	{
		.name = "fake_dim",
		.sem = FAKE_DIM,
		.check = fake_check_dim,
		.drive = fake_dim_drive,
		.run = fake_run_dim,
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

	cq = ib_ocq_alloc_cq(&fdev->ibdev, NULL, cqe, 0, IB_POLL_DIRECT, &attr);
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
	r = fake_run_alloc(sc, mode, fake_mode_total(sc), cqe, false);
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
		sc->name, completions, cqe, cycles, stall_ms, seed,
		num_online_cpus());
	if (sc->run_all == fake_run_alloc_fail)
		pr_info("# path=%s device=%s\n", path,
			*device ? device : "fake");
	if (sc->run_all == fake_run_soak)
		pr_info("# duration_s=%u\n", duration_s);
	fdev = fake_dev_alloc();
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
		if (!strcmp(scenario, fake_scenarios[i].name))
			return &fake_scenarios[i];
	return NULL;
}

static int fake_check_params(void)
{
	if (completions < FAKE_MIN_COMPLETIONS ||
	    completions > FAKE_MAX_COMPLETIONS)
		return -EINVAL;
	if (cqe < FAKE_MIN_CQE || cqe > FAKE_MAX_CQE)
		return -EINVAL;
	if (!cycles || stall_ms < FAKE_MIN_STALL_MS ||
	    stall_ms > FAKE_MAX_STALL_MS)
		return -EINVAL;
	if (!duration_s || duration_s > FAKE_MAX_DURATION_S)
		return -EINVAL;
	return 0;
}

/* poll_ctx=, for fake_weak only; -EINVAL for anything else. */
static int fake_parse_poll_ctx(const struct fake_scenario *sc)
{
	int i;

	if (!poll_ctx)
		return 0;
	if (strcmp(sc->name, "fake_weak")) {
		pr_err("poll_ctx= is for fake_weak\n");
		return -EINVAL;
	}
	i = ocq_test_poll_ctx(poll_ctx);
	if (i < 0) {
		pr_err("unknown poll_ctx '%s'\n", poll_ctx);
		return -EINVAL;
	}
	fake_poll_ctx = i;
	pr_info("# poll_ctx=%s\n", poll_ctx);
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
		pr_err("unknown scenario '%s'\n", scenario);
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
