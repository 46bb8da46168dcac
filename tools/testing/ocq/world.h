// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// One execution of the model: a provider, the engine (the real
// drivers/infiniband/core/ocq_engine.c), the host around it (its workqueue,
// pause/resume, watchdog and teardown) and the ULP's done(), each host or
// provider activity a context of the scheduler.  The world checks the
// properties on every done() call and at the terminal state.
#ifndef OCQ_SIM_WORLD_H
#define OCQ_SIM_WORLD_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "provider.h"
#include "sched.h"

#include <ocq_sim.h>
#include "engine_glue.h"

namespace ocq_sim {

// What a case runs.
struct CaseSpec {
	std::string name;	// "mode/provider", "bug/<name>", ...
	std::string mode;	// a row of the mode table in world.cpp
	std::string provider;	// a name of provider_names[]
	int bug = OCQ_SIM_BUG_none;
	enum sim_policy policy = SIM_ARM_AUTO;
	bool expect_failure = false; // a seeded bug or a negative control
	std::string expect;	     // the property it must break ("lost wakeup")
	unsigned stale_bound = 0;    // weak memory: stale reads per execution
	bool races = false;	     // the memory model's race check and a
				     // schedule point at every fence, with
				     // loads of the latest store (stale_bound 0)
	int budget = -1;	     // the engine's budget; -1: the mode's
	long schedules = 0;	     // the case's own schedule budget; 0: --budget
	bool no_watchdog = false;    // lossy provider without its safety net
	bool no_final_cancel = false;  // teardown cancels no unit after the CQ's destroy
	int timer_cancel = 0;	     // deferred re-arm: 0 hrtimer_cancel() as
				     // ib_ocq_destroy(), 1 after the CQ unit's
				     // last cancel, 2 never, 3 before the
				     // units' first cancels
	bool cq_hops = false;	     // two contexts take the CQ unit's runs, in
				     // no host order: only the gate hands over
	bool solicited = false;	     // the HCA's completions a mix: seq i is
				     // solicited iff it is the last or i % 3
				     // == 2 (for IB_ARM_SOLICITED)
	int pushes = 0;		     // completions the HCA adds; 0: the mode's
	bool wrid = false;	     // the ULP posts with a wr_id, not an
				     // ib_cqe: &ib_ocq_attr.dispatch (see
				     // World::Completion)
};

// How a mode sets up the world.
struct ModeInfo {
	const char *name;
	enum sim_mode engine;	// the engine's ordering domains
	int pushes;		// completions the HCA adds
	bool two_flows;		// alternate QP 1 and QP 2 (two domains)
	unsigned int budget;	// 0: the engine's default
	bool postpone;		// IB_OCQ_POSTPONE_ARM
	int ulp;		// 0: none, 1: pause+resume, 2: resume twice,
				// 3: done() pauses, the ULP resumes,
				// 4: done() of the first completion resumes,
				// 5: pause, resume, pause under the lease,
				// 6: "arm now" under the lease (postpone),
				// 7: 5 with the second tick at any time
	bool teardown;
	bool pattern1;		// no engine: seed 004's loop, serialized
	int wait_next;		// 1: process() of seq 0 waits for seq 1's;
				// 2: a backlog on one flow (head-of-line);
				// 3: done() sleeps while its ring slot is
				// reused (reuse_sleep());
				// 4: a flow_key, and a flush last (the
				// flow barrier);
				// 5: lone completions, each once the last
				// was dispatched and the CQ armed again;
				// 6: groups of 2, 4 and 4 completions for
				// IB_OCQ_DEFER_DIM's threshold (producer());
				// 7: a burst, once the CQ was first armed,
				// which the busy poller waits for
				// (busy_poller()); its budget is 1;
				// 8: a full batch of QP 2, then QP 1's
				// (return-flows);
				// 9: seq 1 once process(seq 0) runs, which
				// returns once seq 1 is produced
				// (parallel-publish)
	unsigned int defer;	// deferred re-arm: defer_polls (0: off); the
				// HCA adds its last completion only once the
				// CQ run armed after deferring (or the timer
				// is stuck)
	bool defer_dim;		// IB_OCQ_DEFER_DIM: a run that took a single
				// completion arms at once
	int busy;		// suspension (suspend_usecs): the ULP's busy
				// polls, made one after another (0: off)
	int tune; // retunes (ocq_engine_tune()) by the host's
		// "tuner" context: 0 none; 1 the deferral on
		// (defer_polls 2), then off again; 2 the
		// suspension off, then on again (busy polls
		// refused meanwhile); 3 IB_OCQ_DEFER_DIM off,
		// then on again (the deferral on throughout)
};

const ModeInfo *mode_info(const std::string &name);
// modes every provider runs in, in output order
extern const char *const matrix_modes[];

// What one execution found.
struct Outcome {
	std::vector<std::string> failures; // empty if every property held
	uint64_t state = 0;	// hash of the terminal state
	long handler_calls = 0;
	long empty_handlers = 0; // pattern 1: handler calls that polled nothing
	long runs = 0;		// engine: CQ runs
	long empty_runs = 0;	// engine: CQ runs that dispatched nothing
	long stalls = 0;	// engine: waits for room in a domain
	long parks = 0;		// engine: runs that ended unarmed, domains busy
	long inlined = 0;	// engine: completions the CQ run dispatched itself
	long yields = 0;	// host: runs that requeued themselves
	long rescues = 0;	// engine: completions the watchdog found
	long stale_reads = 0;	// weak memory: loads that returned an old store
	long hops = 0;		// cq_hops: CQ runs on another context than the
				// last poll's
	long reuses = 0;	// weak memory: slot writes after a read of it
	long defers = 0;	// deferred re-arm: runs that deferred (engine)
	long rearms = 0;	// deferred re-arm: successful arms after a defer
	long deferred_pushes = 0; // completions added while the re-arm was
				  // deferred (the timer pending)
	bool torn_deferred = false; // teardown began with the timer pending
	bool paused_deferred = false; // the ULP paused with the timer pending
	long short_arms = 0;	// IB_OCQ_DEFER_DIM: arms by runs that took
				// too few completions to defer
	bool min_grew = false;	// ... the threshold doubled
	long lease_resumes = 0;	// pauses the lease's third tick ended
	long suspends = 0;	// suspension: busy polls that suspended
	long busy_from_timer = 0; // ... busy polls that took the CQ unit from
				  // the timer
	long suspensions_ended = 0; // ... timer fires that took the CQ unit
				    // from a suspension
	long busy_ebusy = 0;	// ... busy polls that returned -EBUSY
	long busy_backoffs = 0;	// ... busy polls that handed the CQ unit to a
				// delayed run after a verb failed
	long busy_spent = 0;	// ... busy polls that spent their budget
	bool min_back = false;	// IB_OCQ_DEFER_DIM: the threshold came back to
				// 2 after a deferral that paid
	long hol_waits = 0;	// wait_next 2: done() calls while a completion
				// waited in the CQ with nothing to fetch it
	long held = 0;		// provider: entries added to the armed CQ that
				// did not raise it (solicited-only arm)
	long quiet_reports = 0;	// provider: REPORT_MISSED arms that returned 0
				// with entries in the CQ
	long cq_dispatches = 0;	// CaseSpec::wrid: dispatch() calls by the CQ
				// run
	long domain_dispatches = 0; // ... by a flow domain or the commit unit
	long barrier_dispatches = 0; // ... by the CQ run behind a flow_key's
				     // barrier (flow mode: those the CQ run
				     // made but not inline)
	long tune_applies = 0; // retunes: holds of the CQ unit that applied one
	long tune_defers = 0; // ... CQ runs that deferred after one was applied
	long tune_rearms = 0; // ... CQ runs that armed, ending a deferral, with
		// the deferral retuned off
	long tune_refused = 0; // ... busy polls refused (-EOPNOTSUPP)
	long tune_took = 0; // ... busy polls that took completions after the
		// suspension was retuned on again
	long tune_suspend_ended = 0; // ... timer's runs that ended a suspension
		// with the suspension retuned off
	long tune_single_defers = 0; // ... deferrals of one completion with
		// IB_OCQ_DEFER_DIM retuned off
	long tune_short_arms = 0; // ... arms after one completion with
		// IB_OCQ_DEFER_DIM retuned on again
};

class World {
public:
	World(const CaseSpec &spec, Chooser &chooser, size_t step_cap,
	      bool trace);
	~World();
	World(const World &) = delete;
	World &operator=(const World &) = delete;

	Outcome run();
	const std::vector<Decision> &decisions() const
	{
		return sched_.decisions();
	}

	// --- entry points of the C callbacks ---
	static Provider *provider_of(struct ib_cq *cq);
	void handler();
	void schedule(unsigned int unit, bool timer = false);
	void defer();
	void suspend();
	// ib_req_notify_cq(@flags), before the provider acts on it
	void arm_flags(int flags);
	void notified(int ret);
	void done(struct ib_wc *wc);
	// CaseSpec::wrid: &ib_ocq_attr.dispatch, and done() of a trap
	void dispatch(struct ib_wc *wc);
	void trap(const struct ib_wc *wc);
	void process(struct ib_wc *wc);
	// flow-barrier: the ULP's flow_key()
	void keyed(const struct ib_wc *wc);
	void polled(const struct ib_wc *wc, int got);
	void warn(const std::string &what);
	// a tracepoint read the CQ: a use after free once it is destroyed
	void cq_read();
	// At every scheduling point: the invariants of the engine's state.
	void invariants();
	// After every atomic operation: whether a hold of the CQ unit ended.
	void observe_gate();

private:
	// The host's work item of one engine unit (kernel workqueue rules:
	// never reentrant, queue_work() of a queued item does nothing,
	// cancel_work_sync() removes a queued item and waits for a running
	// one, and queueing fails while it does).
	struct Unit {
		int worker = -1;	// the context that runs it
		int worker2 = -1;	// CaseSpec::cq_hops: the other one
		int requeues = 0;	// schedule() from its own running run
		bool queued = false;
		int running = 0;	// contexts inside a run of it
		bool cancelling = false;
		bool cancelled = false;
		int runs = 0;
	};
	// A completion as the ULP posted it: done() finds it by wr_cqe.  With
	// CaseSpec::wrid the ULP posted it with a wr_id instead, which
	// dispatch() maps back: the address of @trap, whose done() fails (an
	// engine that takes the wr_id for an ib_cqe calls it), or 0 for one
	// successful completion (an engine that takes it for a NULL wr_cqe
	// drops it with a WARN, or skips process()).
	struct Completion {
		struct ib_cqe cqe;	// first: wr_cqe points here
		int seq;
		int flow;
		enum ib_wc_status status; // what the HCA returns
		struct ib_cqe trap;	// CaseSpec::wrid: done() fails
		u64 wr_id;		// CaseSpec::wrid: 0 or &trap
	};

	const Completion *completion_of(const struct ib_wc *wc) const;
	bool quiet() const;
	void check_quiet_armed();
	bool in_cq_run() const;
	bool sees_payload(const Completion *c);
	void check_claims();
	void check_handoff();
	void races();
	void check_flow_state(const Completion *c);
	void reuse_sleep(long seq);
	void late_kick();
	bool setup_engine();
	void add_contexts();
	void producer();
	bool solicited(int seq) const;
	void callback_cpu();
	void spurious(int n);
	void worker(unsigned int unit);
	bool work_ready(const Unit &u) const;
	void pauser();
	void watchdog();
	void lease_ulp(bool pauses);
	void lease();
	void lease_tick(int tick);
	void timer();
	bool timer_ready() const;
	bool timer_stuck() const;
	bool timer_stale() const;
	long fire_limit() const;
	void busy_poller();
	int busy_call();
	void busy_check(int ret);
	unsigned int busy_budget() const;
	bool in_busy_poll() const;
	void busy_handoff();
	void note_hold();
	bool deferral_over() const;
	void arrival(int i);
	bool armed_again(int i) const;
	// completions a CQ run takes before it must defer its re-arm: the
	// contract of &ib_ocq_attr.defer_usecs (1) and IB_OCQ_DEFER_DIM (the
	// engine's adapted threshold, checked by dim_threshold())
	long defer_min();
	long defer_got();
	void dim_threshold(long min);
	void dim_deferred(long got, long min);
	void dim_armed(long min);
	void begin_cq_run();
	void end_cq_run();
	void tuner();
	void tune_to(unsigned int defer_polls, bool dim, bool suspend);
	bool tuner_quiet() const;
	std::string tune_name(int word) const;
	long defer_polls_now() const;
	bool dim_now() const;
	void tune_applied();
	void tune_floor_check();
	bool tune_staged_since(int floor, int word) const;
	void tune_busy(int ret, int floor);
	void teardown();
	void cancel(unsigned int unit, bool final);
	void timer_cancel();
	void pattern1();
	void step(const char *what);
	void fail(const std::string &why);
	void check_terminal(End end);
	void check_stats(const struct sim_stats &s);
	uint64_t state_hash(const struct sim_stats &s) const;

	CaseSpec spec_;
	const ModeInfo &mi_;
	Scheduler sched_;
	std::unique_ptr<Provider> prov_;
	// the device, with the provider behind its verbs (dev first)
	struct Device {
		struct ib_device dev;
		Provider *prov;
	} dev_ = {};
	struct ib_cq cq_ = {};
	struct ib_qp qps_[2] = {};
	struct ocq_engine *engine_ = nullptr;
	std::vector<Completion> comps_;
	std::vector<Unit> units_;
	int pushes_ = 0;
	bool perpetual_ = false;	// runs requeue forever: cap and fairness
	int run_cap_ = 64;		// runs per unit, once all is dispatched
	bool watchdog_ctx_ = false;

	// properties
	std::vector<int> dispatched_;	// seq, in done() order
	std::vector<int> done_count_;
	std::vector<int> processed_;
	std::vector<int> keyed_;	// per seq: flow_key() calls
	long cq_dispatches_ = 0;	// see Outcome::cq_dispatches
	long domain_dispatches_ = 0;	// see Outcome::domain_dispatches
	int in_done_[3] = {};		// per domain: done() calls running
	int last_[3] = {-1, -1, -1};	// per domain: last seq dispatched
	long handler_calls_ = 0;
	long engine_events_ = 0;
	bool producer_done_ = false;
	int flow_state_[3] = {};		// the ULP's per-flow state (weak memory)
	long flow_last_[3] = {};	// what it holds last
	int reuse_phase_ = 0;		// reuse-*: which sleep of done()
	bool late_kicked_ = false;	// reuse-*: the late callback ran
	bool watchdog_done_ = false;
	int spurious_left_ = 0;		// spurious callback contexts running
	bool paused_in_done_ = false;
	bool resumed_ = false;		// the ULP resumed after done() paused
	long hol_ = 0;			// done() calls while the CQ holds one
	long inline_hol_ = 0;		// flow-hol: CQ run's done() calls since its poll
	bool claims_failed_ = false;
	int payload_[80] = {};		// per seq: the poller's copy (weak memory)
	int polls_seen_ = 0;		// cq_hops: polls of the CQ runs so far
	int poll_mark_ = 0;		// cq_hops: the same, as the runs see it
	int last_poller_ = -1;		// cq_hops: the context of the last poll
	long hops_ = 0;			// cq_hops: see Outcome::hops
	int result_[80] = {};		// per seq: what process() wrote
	long last_resume_events_ = -1;	// handler calls at the ULP's last resume
	// the pause lease's ticks (ulp 5 and 6), a context of its own
	int lease_ticks_ = 0;		// ticks ended
	bool lease_resumed_ = false;	// the ULP's resume that follows tick 1
	bool lease_done_ = false;	// the last tick ended
	bool lease_paused_again_ = false; // the ULP's second pause returned
	long lease_resumes_ = 0;	// see Outcome::lease_resumes
	// the deferred re-arm's hrtimer (ops->defer), a context of its own
	bool timer_pending_ = false;	// started, not fired nor cancelled
	bool timer_running_ = false;	// its callback runs (queues the CQ unit)
	bool timer_cancelled_ = false;	// hrtimer_cancel() of the teardown
	bool timer_queued_ = false;	// unit 0's queued run is the timer's
	long idle_fires_ = 0;		// fires since a poll found work, an arm
					// or a run the timer did not start
	long defer_calls_ = 0;		// ops->defer() calls
	long rearms_ = 0;		// see Outcome::rearms
	long deferred_pushes_ = 0;	// see Outcome::deferred_pushes
	bool defer_since_arm_ = false;	// a defer since the last good arm
	bool armed_since_defer_ = false; // an arm tried since the last defer
	long idle_runs_ = 0;		// CQ runs in a row that found nothing
					// since their last arm (notified())
	long run_found_ = 0;		// this CQ run: completions its polls
					// took, but the last poll's
	long last_got_ = 0;		// this CQ run: the last poll's
	bool run_armed_ = false;	// this CQ run: it armed already
	long seg_polls_ = 0;		// this CQ run: polls since its last arm
	bool seg_found_ = false;	// ... and whether one took a completion
	bool torn_deferred_ = false;	// see Outcome::torn_deferred
	bool paused_deferred_ = false;	// see Outcome::paused_deferred
	long short_arms_ = 0;		// see Outcome::short_arms
	long last_min_ = 2;		// the threshold last seen (defer-dim)
	bool min_grew_ = false;		// see Outcome::min_grew
	// IB_OCQ_DEFER_DIM, strict mode: the threshold's next move, from what
	// the world saw (dim_deferred(), dim_armed())
	long dim_count_ = 0;		// the count a check after the CQ run's
					// last poll uses: the engine's, and the
					// poll's
	bool dim_chain_ = false;	// a deferral with the threshold's count
					// since the last arm
	bool dim_paid_ = false;		// ... and a later one again
	long dim_expect_ = -1;		// the threshold the arm left, or -1
	bool dim_expect_paid_ = false;	// ... after a deferral that paid
	bool min_back_ = false;		// see Outcome::min_back
	long hol_waits_ = 0;		// see Outcome::hol_waits
	bool torn_ = false;		// teardown began (ocq_engine_disable)
	// the ULP's busy polls (suspension), a context of its own
	int busy_ctx_ = -1;		// its context
	bool busy_inside_ = false;	// it is in ocq_engine_busy_poll()
	long bp_found_ = 0;		// this busy poll: completions its polls
					// took, but the last poll's
	long bp_last_got_ = 0;		// this busy poll: the last poll's
	long bp_polls_ = 0;		// this busy poll: its polls
	bool bp_suspended_ = false;	// this busy poll: ops->suspend()
	bool bp_failed_ = false;	// this busy poll: a verb returned -errno
	bool bp_handed_ = false;	// ... it queued a run of the CQ unit
					// (ocq_yield(): a back-off)
	long busy_backoffs_ = 0;	// see Outcome::busy_backoffs
	long busy_spent_ = 0;		// see Outcome::busy_spent
	long taken_ = 0;		// completions the CQ's polls returned
	long busy_took_ = 0;		// busy polls that took the CQ unit
	long busy_ebusy_ = 0;		// see Outcome::busy_ebusy
	long busy_from_timer_ = 0;	// see Outcome::busy_from_timer
	long suspend_calls_ = 0;	// ops->suspend() calls
	long timer_takes_ = 0;		// fires that took the CQ unit
	bool hold_suspend_ = false;	// the timer's last start: a suspension
	long suspensions_ended_ = 0;	// see Outcome::suspensions_ended
	int holder_ = -1;		// the context whose hold of the CQ unit
					// polled or armed last; -1: none since
					// the unit was free or the timer's
	bool overlap_failed_ = false;
	bool arm_flags_failed_ = false;
	bool handoff_ = false;		// mark each poll and check it at the
					// next holder's start (check_handoff())
	// the host's retunes (ModeInfo::tune), a context of its own
	bool deferrer_ = false; // the deferred re-arm may be on: the host
		// has ops->defer, the world its checks
	bool dimmer_ = false; // ... and IB_OCQ_DEFER_DIM
	std::vector<int> tune_words_; // the engine's first word, then each
		// retune's
	int tune_started_ = 0; // retunes called
	int tune_done_ = 0; // retunes returned
	bool tuner_done_ = false; // the last returned
	int tune_now_ = 0; // the word the holders applied last
	int run_floor_ = 0; // the CQ run under way: retunes that had
		// returned as it began
	int bp_floor_ = 0; // the busy poll under way: the same
	bool run_timer_ = false; // the CQ run under way is the timer's
	bool busy_over_ = false; // the busy poller's loop is over
	bool bp_after_off_ = false; // a busy poll began after the first retune
		// returned, and returned
	bool tune_failed_ = false;
	long tune_applies_ = 0; // see Outcome::tune_applies
	long tune_defers_ = 0; // see Outcome::tune_defers
	long tune_rearms_ = 0; // see Outcome::tune_rearms
	long tune_refused_ = 0; // see Outcome::tune_refused
	long tune_took_ = 0; // see Outcome::tune_took
	long tune_suspend_ended_ = 0; // see Outcome::tune_suspend_ended
	long tune_single_defers_ = 0; // see Outcome::tune_single_defers
	long tune_short_arms_ = 0; // see Outcome::tune_short_arms
	bool freed_ = false;
	bool stats_taken_ = false;
	struct sim_stats stats_ = {};
	std::vector<std::string> failures_;

	// seed 004's pattern 1 under a spinlock
	bool locked_ = false;
	long empty_handlers_ = 0;
};

// Allocations of the shims that are not freed yet.
long live_allocations();

} // namespace ocq_sim

#endif // OCQ_SIM_WORLD_H
