/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * fake.h - what the files of ocq_test_fake.ko share: its parameters, the
 * run of a scenario in one mode (struct fake_run) and the scenario table's
 * entries.  The provider itself is fake_provider.h.
 *
 * fake_run.c: the ULP side (done(), process(), the producers) and one run;
 * fake_loops.c: teardown_loop, alloc_fail and soak;
 * fake_cases.c: the scenarios with runs of their own, poll_helpers,
 *	flow_hol, resume_race and parallel_slow;
 * fake_drain.c: drain_paused and bad_attr;
 * fake_solicited.c: ocq_solicited (solicited-only arms);
 * ocq_test_fake_main.c: the per-scenario checks, the table and the module.
 */
#ifndef OCQ_FAKE_H
#define OCQ_FAKE_H

#include <linux/types.h>
#include <linux/wait.h>
#include <rdma/ib_ocq.h>
#include <rdma/ib_verbs.h>

#include "fake_provider.h"

/* The locking rules (I, L, A, P, D) are fake_provider.h's. */

/**
 * struct fake_params - the module parameters, named as the fields
 * @scenario: scenario to run at load time
 * @completions: completions per mode, over all its cycles
 * @cqe: CQ entries, shared out as producer credits
 * @cycles: create/free cycles, per mode in fake_teardown_race
 * @stall_ms: a run without progress for this long has stalled
 * @seed: seed of the producers' and the CQ's random choices
 * @path: alloc_fail: the create path
 * @device: alloc_fail: a real device to create on; empty: fake
 * @duration_s: soak: how long to run, in seconds
 * @poll_ctx: fake_weak: workqueue, unbound, softirq or direct; NULL: none
 */
struct fake_params {
	char *scenario;
	unsigned int completions;
	unsigned int cqe;
	unsigned int cycles;
	unsigned int stall_ms;
	unsigned int seed;
	char *path;
	char *device;
	unsigned int duration_s;
	char *poll_ctx;
};

/* ocq_test_fake_main.c */
extern struct fake_params fake_params;

/* poll_ctx=direct: kthreads polling the CQ side by side, and their budget */
#define FAKE_POLLERS 2
#define FAKE_DIRECT_BUDGET 16

/* Bounds of the parameters. */
#define FAKE_MIN_COMPLETIONS 100
#define FAKE_MAX_COMPLETIONS (100 * 1000 * 1000)
#define FAKE_MIN_CQE 16 /* FAKE_MAX_CQE: fake_provider.h */
#define FAKE_MIN_STALL_MS 100
#define FAKE_MAX_STALL_MS (10 * 60 * 1000)
#define FAKE_MAX_DURATION_S (7 * 24 * 3600)

/* Most completions a producer pushes before it looks at its credits again. */
#define FAKE_BURST 8
/* How often the waiting test thread looks at the progress. */
#define FAKE_POLL_MS 5
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
/* fake_weak: streams tried for an arm of a non-empty CQ that returns 1 */
#define FAKE_WEAK_TRIES 10
/*
 * fake_perpetual: stall bound.  The CQ run polls flat out (no return ever
 * proves the CQ armed) on a high priority worker, and the producer bound to
 * its CPU gets the leftovers: gaps in progress over 10 s were seen under TCG.
 */
#define FAKE_PERPETUAL_STALL_MS (30 * 1000)
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
/* &fake_run.solicited: most completions of a message */
#define FAKE_SOL_MSG 4
/*
 * &fake_run.wrid: a completion's wr_id is its request's address XOR this:
 * non-canonical, so that taking it for a &ib_cqe faults
 */
#define FAKE_WRID_KEY 0xa5a5000000000000ULL

/*
 * fake_dim: paced rounds of 1, 2, 4 ... 64 completions, each size for two
 * of DIM's samples (DIM_NEVENTS events each) at least.
 */
#define FAKE_DIM_PHASE 128
#define FAKE_DIM_PHASES 7
#define FAKE_DIM_TAIL (FAKE_DIM_PHASE * ((1U << FAKE_DIM_PHASES) - 1))

/*
 * fake_small_ring: the producers' credits in all, more than the engine's
 * rings (cq->cqe entries, 256 by default) hold, and a slow done()
 */
#define FAKE_SMALL_RING_CREDITS 2048
#define FAKE_SMALL_RING_DONE_US 2
/* fake_resume_race: streams per mode */
#define FAKE_RACE_CYCLES 50

/* State of a request. */
enum {
	FAKE_FREE,
	FAKE_QUEUED, /* pushed to the CQ */
	FAKE_PROCESSED, /* %IB_OCQ_PARALLEL: process() ran */
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
 * @msg_left: &fake_run.solicited: completions left in the message being
 *	pushed, the last of them solicited (P)
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
	u32 msg_left;
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
 * @solicited: the producers push messages of 1 to %FAKE_SOL_MSG
 *	completions, the last one solicited (%FAKE_WC_SOLICITED); so is the
 *	last a producer pushes before it waits for credits, and its last (I)
 * @wrid: completions carry a wr_id (fake_wrid()), not a &ib_cqe, and the
 *	OCQ dispatches them through &ib_ocq_attr.dispatch (ocq_wrid) (I)
 * @priv: the scenario's own state, for @sc's hooks (I)
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
 * @rescues: fake_lossy: what the last stream's watchdog rescued
 * @arms_positive: fake_weak: the last stream's arms of a non-empty CQ that
 *	returned 1
 * @arms_voided: fake_weak: of those, the ones that left the CQ unarmed
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
	bool solicited;
	bool wrid;
	void *priv;
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
	u64 rescues;
	u64 arms_positive;
	u64 arms_voided;
	struct task_struct *pauser;
	atomic_long_t pause_calls;
	int alloc_ret;
	enum ib_poll_context poll_ctx;
	struct task_struct *pollers[FAKE_POLLERS];
};

/* from poll_ctx=, before the scenario runs */
extern enum ib_poll_context fake_poll_ctx;

/* KTAP result counters of the module. */
struct fake_ktap {
	unsigned int nr;
	unsigned int failed;
	unsigned int skipped;
};

#define FAKE_NR_MODES (IB_OCQ_PARALLEL + 1)

extern const char *const fake_mode_names[FAKE_NR_MODES];

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
 * @drive: more traffic after everything was delivered and the CQ was
 *	found armed, before @check; on the CQ of an OCQ, or of the poll
 *	helpers' consumer (fake_helper_stream())
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

/* fake_run.c */
u32 fake_seed(unsigned int salt);
void fake_deliver(struct fake_run *r, struct fake_req *req);
void fake_process(struct ib_cq *cq, struct ib_wc *wc);
void fake_dispatch(struct ib_cq *cq, struct ib_wc *wc);
int fake_run_wrid(struct fake_run *r, struct fake_dev *fdev,
		  struct fake_ktap *k);
void fake_push_req(struct fake_cq *fcq, struct ib_qp *qp, struct fake_req *req,
		   enum ib_wc_opcode opcode, atomic_t *failures);
void fake_push_batch(struct fake_flow *f, u32 n);
void fake_add_next(struct fake_flow *f, int wc_flags);
bool fake_finished(struct fake_run *r);
u64 fake_pushed(struct fake_run *r);
void fake_stats_settled(struct ib_ocq *ocq, struct ib_ocq_stats *s, u64 expect);
bool fake_wait_delivered(struct fake_run *r, unsigned int bound_ms);
bool fake_wait_armed(struct fake_cq *fcq, unsigned int bound_ms);
void fake_wait_quiet(struct fake_cq *fcq);
void fake_run_reset(struct fake_run *r);
int fake_ocq_create(struct fake_run *r, struct fake_dev *fdev);
void fake_ocq_free(struct fake_run *r);
unsigned int fake_watchdog_ms(const struct fake_run *r, unsigned int fast);
int fake_producers_start(struct fake_run *r);
void fake_producers_stop(struct fake_run *r);
bool fake_check(struct fake_run *r, bool ok, const char *what);
void fake_print_stats(struct fake_run *r, const struct ib_ocq_stats *s);
void fake_print_stall(struct fake_run *r);
bool fake_wait_all(struct fake_run *r, unsigned int ms);
void fake_dim_drive(struct fake_run *r);
int fake_stream_once(struct fake_run *r, struct fake_dev *fdev,
		     bool expect_stall, bool *stalled);
void fake_result(struct fake_ktap *k, bool ok, const char *name,
		 const char *note);
void fake_skip(struct fake_ktap *k, const char *name, const char *why);
int fake_run_stream(struct fake_run *r, struct fake_dev *fdev,
		    struct fake_ktap *k);
int fake_run_dim(struct fake_run *r, struct fake_dev *fdev,
		 struct fake_ktap *k);
int fake_run_weak(struct fake_run *r, struct fake_dev *fdev,
		  struct fake_ktap *k);
int fake_run_lossy(struct fake_run *r, struct fake_dev *fdev,
		   struct fake_ktap *k);
int fake_run_pause(struct fake_run *r, struct fake_dev *fdev,
		   struct fake_ktap *k);
int fake_run_teardown(struct fake_run *r, struct fake_dev *fdev,
		      struct fake_ktap *k);
void fake_run_free(struct fake_run *r);
struct fake_run *fake_run_alloc(const struct fake_scenario *sc,
				enum ib_ocq_mode mode, u64 total,
				unsigned int ncqe, bool bulk);

/* fake_loops.c */
u64 fake_mode_total(const struct fake_scenario *sc);
int fake_run_teardown_loop(const struct fake_scenario *sc,
			   struct fake_dev *fdev, struct fake_ktap *k);
int fake_run_alloc_fail(const struct fake_scenario *sc, struct fake_dev *fdev,
			struct fake_ktap *k);
int fake_run_soak(const struct fake_scenario *sc, struct fake_dev *fdev,
		  struct fake_ktap *k);

/* fake_cases.c */

/**
 * struct fake_helper_model - a provider model the poll helpers run on
 * @name: subtest name prefix
 * @sem: FAKE_* semantics
 * @policy: ib_poll_and_notify()'s policy; with %IB_ARM_SOLICITED in it, the
 *	other helper is ib_poll_cq_and_arm_solicited()
 * @pn_only: only ib_poll_and_notify() (a policy ib_poll_cq_and_arm lacks)
 */
struct fake_helper_model {
	const char *name;
	unsigned int sem;
	enum ib_arm_policy policy;
	bool pn_only;
};

int fake_helper_stream(struct fake_run *r, struct fake_dev *fdev,
		       const struct fake_helper_model *m, bool pn);
int fake_run_poll_helpers(const struct fake_scenario *sc, struct fake_dev *fdev,
			  struct fake_ktap *k);
int fake_run_flow_hol(const struct fake_scenario *sc, struct fake_dev *fdev,
		      struct fake_ktap *k);
int fake_run_resume_race(struct fake_run *r, struct fake_dev *fdev,
			 struct fake_ktap *k);
int fake_run_parallel_slow(const struct fake_scenario *sc,
			   struct fake_dev *fdev, struct fake_ktap *k);

/* fake_inline.c */
int fake_run_flow_inline(const struct fake_scenario *sc, struct fake_dev *fdev,
			 struct fake_ktap *k);

/* fake_defer.c */
int fake_run_defer(const struct fake_scenario *sc, struct fake_dev *fdev,
		   struct fake_ktap *k);
int fake_run_tune(const struct fake_scenario *sc, struct fake_dev *fdev,
		  struct fake_ktap *k);

/* fake_suspend.c */
int fake_run_suspend(const struct fake_scenario *sc, struct fake_dev *fdev,
		     struct fake_ktap *k);

/* fake_solicited.c */
int fake_run_solicited(const struct fake_scenario *sc, struct fake_dev *fdev,
		       struct fake_ktap *k);

/* fake_drain.c */
extern const struct ib_device_ops fake_drain_ops;
int fake_run_drain_paused(const struct fake_scenario *sc, struct fake_dev *fdev,
			  struct fake_ktap *k);
int fake_run_bad_attr(const struct fake_scenario *sc, struct fake_dev *fdev,
		      struct fake_ktap *k);

#endif /* OCQ_FAKE_H */
