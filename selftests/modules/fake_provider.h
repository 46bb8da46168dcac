/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * fake_provider.h - a fake RDMA provider for the test modules.
 *
 * A never-registered ib_device whose poll_cq and req_notify_cq emulate the
 * notification semantics of real providers, good and bad, chosen per CQ by
 * FAKE_* semantics flags (struct fake_dev.sem when the CQ is created).  A
 * CQ is a ring under a spinlock: fake_cq_push() (or fake_cq_add() then
 * fake_cq_land() for a burst) adds completions as an HCA would and raises
 * the event an armed CQ owes, from the caller, a hard irq or a softirq
 * timer.  With %FAKE_COUNTED a CQ holds a count of ready completions
 * instead, made by poll_cq from a template (fake_cq_fill()).
 *
 * Solicited arms: a producer marks a completion solicited with
 * %FAKE_WC_SOLICITED in its wc_flags; an unsuccessful one counts as
 * solicited too (IBA).  An arm with %IB_CQ_SOLICITED raises its event only
 * when a solicited completion lands after it (every completion landed by
 * the same fake_cq_land() is looked at): the others land and leave the CQ
 * armed.  %FAKE_STRONG raises it at once for a solicited completion
 * pending at the arm; weak (the default) reports any pending completion
 * with %IB_CQ_REPORT_MISSED_EVENTS, solicited or not; %FAKE_SOL_NARROW only
 * a solicited one.  %FAKE_COUNTED counts every completion as solicited.
 *
 * Linked into ocq_test_fake.ko and ocq_bench_fake.ko (selftests/modules/Kbuild).
 */
#ifndef OCQ_FAKE_PROVIDER_H
#define OCQ_FAKE_PROVIDER_H

#include <linux/atomic.h>
#include <linux/hrtimer.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

/* Largest CQ the provider makes. */
#define FAKE_MAX_CQE 4096

/* Delay of a deferred (hrtimer) event. */
#define FAKE_EVENT_NS (2 * NSEC_PER_USEC)
/* %FAKE_MODERATED: delay of every event, as an interrupt moderation's */
#define FAKE_MODERATED_NS (1000 * NSEC_PER_USEC)
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
/* fake_concurrent: how long one side of an event waits for the other. */
#define FAKE_MEET_NS (50 * NSEC_PER_USEC)
/* fake_resume_race: how long req_notify_cq takes after the arm took effect */
#define FAKE_SLOW_ARM_US 50

/* fake_provider_error: one poll_cq or req_notify_cq call in this many fails */
#define FAKE_EIO_EVERY 16

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
#define FAKE_INLINE BIT(11) /* events only from the caller, never a timer */
#define FAKE_COUNTED BIT(12) /* a count of ready completions, no ring */
#define FAKE_VOID_ARM BIT(13) /* REPORT_MISSED: a 1 may leave the CQ unarmed */
#define FAKE_MODERATED BIT(14) /* events from the softirq timer, moderated */
/* REPORT_MISSED under a solicited arm: 1 only for a solicited entry pending */
#define FAKE_SOL_NARROW BIT(15)

/*
 * wc_flags: the completion is solicited (the peer's IB_SEND_SOLICITED).
 * The fake's own, far above every IB_WC_* flag; poll_cq returns it as is.
 */
#define FAKE_WC_SOLICITED BIT(24)

/* fake_dim: the profiles of ocq's DIM, as Documentation/api.rst gives them */
#define FAKE_DIM_PROFILES 9

/* How an event reaches the completion handler. */
enum fake_ctx {
	FAKE_CTX_PROCESS, /* the producer calls it */
	FAKE_CTX_HARDIRQ, /* an hrtimer in hard irq */
	FAKE_CTX_SOFTIRQ, /* an hrtimer in softirq */
	FAKE_NR_CTX,
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
 * @sol_arm: the last arm was solicited-only (%IB_CQ_SOLICITED) (L)
 * @quiesced: no more deferred or remote events (L)
 * @ticking: fake_spurious's timer was started (L)
 * @rnd: random state of the CQ's choices (L)
 * @pushed: completions pushed, the next CQ position (L)
 * @polls: poll_cq calls (L)
 * @armed_polls: of those, on an armed CQ: after an arm, before its event (L)
 * @arms: req_notify_cq calls (L)
 * @sol_arms: of those, solicited-only (L)
 * @sol_held: lands on a CQ armed solicited-only that raised no event: no
 *	completion among them was solicited (L)
 * @positive: req_notify_cq calls that returned 1 (L)
 * @voided: of those, %FAKE_VOID_ARM: arms that raise no event (L)
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
 * @ready: %FAKE_COUNTED: completions ready, in place of the ring (L)
 * @tmpl: %FAKE_COUNTED: what poll_cq makes each of them from, byte_len set
 *	to its CQ position (L)
 * @watch_cqe: a completion the test watches for (L)
 * @watch: called, under @lock, when poll_cq takes a completion whose wr_cqe
 *	is @watch_cqe: the moment it left the CQ (L)
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
	bool sol_arm;
	bool quiesced;
	bool ticking;
	u32 rnd;
	u64 pushed;
	u64 polls;
	u64 armed_polls;
	u64 arms;
	u64 sol_arms;
	u64 sol_held;
	u64 positive;
	u64 voided;
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
	u64 ready;
	struct ib_wc tmpl;
	const struct ib_cqe *watch_cqe;
	void (*watch)(struct fake_cq *fcq);
};

/*
 * What a stream makes and must give back, besides the OCQ: fake CQ rings
 * and kthreads.  Zero between streams; the plumbing counts the rest.  The
 * provider counts its rings and the injector; a user counts its kthreads.
 */
extern atomic_t fake_objects;

/* xorshift32: cheap, reproducible from seed=, never 0 from a non-0 state. */
static inline u32 fake_rand(u32 *state)
{
	u32 x = *state;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*state = x;
	return x;
}

static inline struct fake_cq *to_fake_cq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct fake_cq, ibcq);
}

static inline struct fake_dev *to_fake_dev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct fake_dev, ibdev);
}

/*
 * Calls that a done() must never run inside: the provider's completion
 * handler calls, and a task's ib_ocq_resume() (a host that ran its softirq
 * at a local_bh_enable() of its own ran done() there, under whatever lock
 * the caller holds).  Each call in progress holds one of these slots.
 */
#define FAKE_INSIDE_SLOTS 64

struct fake_dev *fake_dev_alloc(const struct ib_device_ops *ops);
int fake_inside_enter(void);
void fake_inside_exit(int slot);
bool fake_inside_nested(void);
void fake_callback(struct fake_cq *fcq);
void fake_direct(struct fake_cq *fcq);
void fake_cq_quiesce(struct fake_cq *fcq);
bool fake_cq_add(struct fake_cq *fcq, const struct ib_wc *wc, u64 *pos);
bool fake_cq_land(struct fake_cq *fcq);
bool fake_cq_push(struct fake_cq *fcq, const struct ib_wc *wc, u64 *pos);
bool fake_cq_fill(struct fake_cq *fcq, u64 n, const struct ib_wc *tmpl);

#endif /* OCQ_FAKE_PROVIDER_H */
