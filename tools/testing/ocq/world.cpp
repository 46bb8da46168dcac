// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The host, the ULP and the properties; see world.h.
#include "world.h"

#include "mm.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <unordered_map>

namespace ocq_sim {

namespace {

// reuse-*: what the HCA adds before it waits for done() to sleep
const int OCQ_SIM_FIRST_BURST = 16;
// suspension: the ULP's busy polls, and the budget of each
const int OCQ_SIM_BUSY_POLLS = 3;
const unsigned int OCQ_SIM_BUSY_BUDGET = 16;
// suspend-burst: the budget of a busy poll, so that one that takes a full
// batch spends it
const unsigned int OCQ_SIM_BURST_BUDGET = 1;
// tune, tune-flow: the deferral's empty runs while a retune has it on
const unsigned int OCQ_SIM_TUNE_POLLS = 2;
// a channel of the memory model (mm_release()): a retune returned, before
// a ULP's busy poll, which knows of it (its own call, or under the host's
// lock of retunes)
const int OCQ_SIM_CH_TUNE = 1100;
// defer-dim-paid: where each group of completions begins (producer())
const int OCQ_SIM_PAID_GROUPS[] = {0, 2, 6};
// CaseSpec::wrid: the successful completion posted with wr_id 0
const int OCQ_SIM_WRID_ZERO = 1;

// The shims' state: the world being executed (for WARN_ON) and the
// allocation count.  One execution runs at a time.
World *g_world;
long g_allocs;
std::unordered_map<const void *, unsigned long> g_sizes;
int g_rcu_readers;

std::string fmt(const char *f, long a = 0, long b = 0, long c = 0)
{
	char buf[256];

	std::snprintf(buf, sizeof(buf), f, a, b, c);
	return buf;
}

World *world_of(struct ib_cq *cq)
{
	return static_cast<World *>(cq->cq_context);
}

void comp_handler(struct ib_cq *cq, void *ctx)
{
	static_cast<World *>(ctx)->handler();
	(void)cq;
}

void sim_schedule(void *host, unsigned int unit)
{
	static_cast<World *>(host)->schedule(unit);
}

void sim_defer(void *host)
{
	static_cast<World *>(host)->defer();
}

void sim_suspend(void *host)
{
	static_cast<World *>(host)->suspend();
}

void sim_done(struct ib_cq *cq, struct ib_wc *wc)
{
	world_of(cq)->done(wc);
}

void sim_process(struct ib_cq *cq, struct ib_wc *wc)
{
	world_of(cq)->process(wc);
}

// CaseSpec::wrid: &ib_ocq_attr.dispatch
void sim_dispatch(struct ib_cq *cq, struct ib_wc *wc)
{
	world_of(cq)->dispatch(wc);
}

// CaseSpec::wrid: done() of a trap, a wr_id taken for an ib_cqe
void sim_trap_done(struct ib_cq *cq, struct ib_wc *wc)
{
	world_of(cq)->trap(wc);
}

int sim_poll_cq(struct ib_cq *cq, int n, struct ib_wc *wc)
{
	int got = World::provider_of(cq)->poll(n, wc);

	world_of(cq)->polled(wc, got);
	return got;
}

int sim_req_notify_cq(struct ib_cq *cq, enum ib_cq_notify_flags flags)
{
	world_of(cq)->arm_flags(flags);
	int ret = World::provider_of(cq)->notify(flags);

	world_of(cq)->notified(ret);
	return ret;
}

// The modes.  Two or three completions per execution give the search its
// depth; the stall modes push one more than a domain ring holds
// (OCQ_RING_MIN + 2) so that the CQ run must wait for room (stall-flows:
// for two QPs alternating, so that a slot one domain frees is filled for the
// other's QP; return-flows: a full batch of QP 2, then QP 1's, one more
// than the pool holds, so that the CQ run looks for room while QP 2's
// domain gives its slots back; parallel-publish: two completions, the
// second once a worker is in process() of the first, which returns once
// the CQ run produced the second).  The defer
// modes run the deferred re-arm with defer_polls 2: the HCA adds all but
// the last completion at any time, the last once the CQ run has tried to
// arm after its deferral (deferral_over()).  defer-dim adds
// IB_OCQ_DEFER_DIM: the engine's rule for a run with one completion (the
// delay DIM picks is time, which the model does not have).  The suspend
// modes give the ULP a context that busy polls up to OCQ_SIM_BUSY_POLLS times
// while the HCA adds its completions (suspend-defer with the deferred
// re-arm as well, its last completion at any time).  suspend-burst: the
// HCA adds a full batch and more once the CQ was first armed, and the busy
// poller waits for a full batch, with a budget it then spends.
// defer-dim-lone: seventeen lone completions, each once the CQ is armed
// again, more than OCQ_DEFER_DIM_DECAY; defer-dim-paid: a pair, then a
// group of four, then four more while that group's deferral may still be
// pending (IB_OCQ_DEFER_DIM's threshold doubles, then comes back).
// parallel-hol, defer-parallel-hol: flow-hol's backlog in parallel mode,
// whose commit step is the busy domain.  The tune modes retune a running
// CQ (ocq_engine_tune()) from a context of the host's, the "tuner": tune
// and tune-flow turn the deferred re-arm on (defer_polls 2) and off again,
// tune-suspend the suspension off and on again under suspend's busy polls,
// tune-dim IB_OCQ_DEFER_DIM off and on again with the deferral on
// throughout; the HCA adds its completions at any time (tune-dim's last as
// defer's does).
const ModeInfo modes[] = {
	/* name            engine        n  2fl budget pp ulp td p1 wait defer dim busy tune */
	{"strict", SIM_STRICT, 3, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	{"flow", SIM_FLOW, 3, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	{"parallel", SIM_PARALLEL, 3, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	{"pause", SIM_STRICT, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0},
	{"postpone", SIM_STRICT, 2, 0, 0, 1, 2, 0, 0, 0, 0, 0, 0, 0},
	{"teardown", SIM_STRICT, 2, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0},
	{"pause-in-done", SIM_STRICT, 2, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0},
	{"teardown-flow", SIM_FLOW, 2, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0},
	{"teardown-parallel", SIM_PARALLEL, 2, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0},
	{"postpone-in-done", SIM_STRICT, 3, 0, 0, 1, 4, 0, 0, 0, 0, 0, 0, 0},
	{"stall-flow", SIM_FLOW, 66, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	{"stall-parallel", SIM_PARALLEL, 66, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	{"stall-flows", SIM_FLOW, 66, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	{"return-flows", SIM_FLOW, 65, 1, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0},
	{"parallel-publish", SIM_PARALLEL, 2, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0},
	{"bench-pattern1", SIM_STRICT, 3, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0},
	{"bench-engine", SIM_STRICT, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	{"parallel-wait", SIM_PARALLEL, 2, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0},
	{"flow-hol", SIM_FLOW, 7, 1, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0},
	{"flow-park", SIM_FLOW, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	{"parallel-claim", SIM_PARALLEL, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	{"reuse-flow", SIM_FLOW, 70, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0},
	{"reuse-parallel", SIM_PARALLEL, 70, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0},
	{"flow-barrier", SIM_FLOW, 3, 1, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0},
	{"defer", SIM_STRICT, 3, 0, 2, 0, 0, 0, 0, 0, 2, 0, 0, 0},
	{"defer-flow", SIM_FLOW, 3, 1, 2, 0, 0, 0, 0, 0, 2, 0, 0, 0},
	{"defer-parallel", SIM_PARALLEL, 3, 0, 2, 0, 0, 0, 0, 0, 2, 0, 0, 0},
	{"defer-pause", SIM_STRICT, 2, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0},
	{"defer-teardown", SIM_STRICT, 2, 0, 0, 0, 0, 1, 0, 0, 2, 0, 0, 0},
	{"defer-teardown-flow", SIM_FLOW, 2, 1, 0, 0, 0, 1, 0, 0, 2, 0, 0, 0},
	{"defer-flow-hol", SIM_FLOW, 7, 1, 0, 0, 0, 0, 0, 2, 2, 0, 0, 0},
	{"defer-dim", SIM_STRICT, 3, 0, 2, 0, 0, 0, 0, 0, 2, 1, 0, 0},
	{"defer-dim-flow", SIM_FLOW, 3, 1, 2, 0, 0, 0, 0, 0, 2, 1, 0, 0},
	{"defer-dim-parallel", SIM_PARALLEL, 3, 0, 2, 0, 0, 0, 0, 0, 2, 1, 0, 0},
	{"lease", SIM_STRICT, 2, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0},
	{"lease-postpone", SIM_STRICT, 2, 0, 0, 1, 6, 0, 0, 0, 0, 0, 0, 0},
	{"lease-race", SIM_STRICT, 2, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0},
	{"suspend", SIM_STRICT, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, OCQ_SIM_BUSY_POLLS, 0},
	{"suspend-flow", SIM_FLOW, 3, 1, 0, 0, 0, 0, 0, 0, 0, 0, OCQ_SIM_BUSY_POLLS, 0},
	{"suspend-defer", SIM_STRICT, 3, 0, 0, 0, 0, 0, 0, 0, 2, 0, OCQ_SIM_BUSY_POLLS, 0},
	{"suspend-burst", SIM_STRICT, 18, 0, 0, 0, 0, 0, 0, 7, 0, 0, OCQ_SIM_BUSY_POLLS, 0},
	{"defer-dim-lone", SIM_STRICT, 17, 0, 0, 0, 0, 0, 0, 5, 2, 1, 0, 0},
	{"defer-dim-paid", SIM_STRICT, 10, 0, 0, 0, 0, 0, 0, 6, 2, 1, 0, 0},
	{"parallel-hol", SIM_PARALLEL, 7, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0},
	{"defer-parallel-hol", SIM_PARALLEL, 7, 0, 0, 0, 0, 0, 0, 2, 2, 0, 0, 0},
	{"tune", SIM_STRICT, 3, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 1},
	{"tune-flow", SIM_FLOW, 3, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 1},
	{"tune-suspend", SIM_STRICT, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, OCQ_SIM_BUSY_POLLS, 2},
	{"tune-dim", SIM_STRICT, 3, 0, 2, 0, 0, 0, 0, 0, 2, 1, 0, 3},
};

} // namespace

const char *const matrix_modes[] = {
	"strict", "flow", "parallel", "pause", "postpone", "teardown", "defer", nullptr,
};

const ModeInfo *mode_info(const std::string &name)
{
	for (const ModeInfo &m : modes)
		if (name == m.name)
			return &m;
	return nullptr;
}

Provider *World::provider_of(struct ib_cq *cq)
{
	return reinterpret_cast<Device *>(cq->device)->prov;
}

long live_allocations()
{
	return g_allocs;
}

World::World(const CaseSpec &spec, Chooser &chooser, size_t step_cap, bool trace)
    : spec_(spec), mi_(*mode_info(spec.mode)), sched_(chooser, step_cap, trace),
      prov_(make_provider(spec.provider))
{
	dev_.prov = prov_.get();
	dev_.dev.ops.driver_id = prov_->driver();
	dev_.dev.ops.poll_cq = sim_poll_cq;
	dev_.dev.ops.req_notify_cq = sim_req_notify_cq;
	cq_.device = &dev_.dev;
	cq_.comp_handler = comp_handler;
	cq_.cq_context = this;
	cq_.cqe = 4;
	qps_[0].qp_num = 1; // hash_32() sends QP 1 and QP 2 to
	qps_[1].qp_num = 2; // different domains of two
	pushes_ = spec_.pushes ? spec_.pushes : mi_.pushes;
	done_count_.assign(pushes_, 0);
	processed_.assign(pushes_, 0);
	keyed_.assign(pushes_, 0);
	comps_.resize(pushes_);
	for (int i = 0; i < pushes_; i++) {
		comps_[i].cqe.done = sim_done;
		comps_[i].seq = i;
		/* flow-barrier: the last is a flush, dispatched by the CQ run */
		comps_[i].status =
			mi_.wait_next == 4 && i == pushes_ - 1 ? IB_WC_WR_FLUSH_ERR : IB_WC_SUCCESS;
		comps_[i].trap.done = sim_trap_done;
		comps_[i].wr_id = i == OCQ_SIM_WRID_ZERO && comps_[i].status == IB_WC_SUCCESS ?
					  0 :
					  (u64)(uintptr_t)&comps_[i].trap;
		comps_[i].flow = mi_.two_flows ? i % 2 : 0;
		/*
		 * A backlog on QP 1, then one on QP 2; suspend-flow: QP 1,
		 * then QP 2, so that a busy poll's batch is often of one flow,
		 * which it dispatches itself and then suspends (a batch of two
		 * goes to the domains, and the busy poll suspends all the same)
		 */
		if (mi_.two_flows && (mi_.wait_next == 2 || mi_.busy))
			comps_[i].flow = i == pushes_ - 1;
		/*
		 * return-flows: a full batch of QP 2, then QP 1 only, whose
		 * domain is the first that an idle look reads
		 */
		if (mi_.wait_next == 8)
			comps_[i].flow = i < sim_batch();
	}
	deferrer_ = mi_.defer || mi_.tune == 1;
	dimmer_ = mi_.defer_dim || mi_.tune == 3;
	perpetual_ = spec_.provider == "perpetual-positive";
	if (perpetual_)
		run_cap_ = 4;
	watchdog_ctx_ = spec_.provider == "lossy" && !spec_.no_watchdog;
	handoff_ = spec_.cq_hops || mi_.busy;
	g_allocs = 0;
	mm_reset(spec_.stale_bound > 0 || spec_.races, spec_.races);
	g_rcu_readers = 0;
	ocq_sim_bug = spec_.bug;
	if (mi_.pattern1)
		prov_->notify(IB_CQ_NEXT_COMP); /* seed 004: initialization */
	else if (!setup_engine())
		return; /* run() reports it */
	add_contexts();
}

World::~World()
{
	sched_.finish();
	g_world = nullptr;
}

// flow-barrier: the ULP's flows are its QPs, named by a flow_key
static u32 sim_flow_key(struct ib_cq *cq, const struct ib_wc *wc)
{
	world_of(cq)->keyed(wc);
	return wc->qp ? wc->qp->qp_num : 0;
}

static void watch_slot(const void *p, unsigned long n, const char *name)
{
	mm_watch(p, n, name);
}

/*
 * The engine for the case's attributes, started; false if
 * ocq_engine_init() refused them: every attribute a case passes is one the
 * engine documents, so that is a failure of the case ("setup").
 */
bool World::setup_engine()
{
	struct sim_attr attr = {};

	attr.policy = spec_.policy;
	attr.mode = mi_.engine;
	if (mi_.engine != SIM_STRICT)
		attr.nr_domains = 2;
	if (mi_.engine == SIM_PARALLEL)
		attr.process = sim_process;
	/* a small budget makes the runs yield */
	attr.budget = spec_.budget >= 0 ? (unsigned int)spec_.budget : mi_.budget;
	attr.postpone_arm = mi_.postpone;
	if (mi_.wait_next == 4)
		attr.flow_key = sim_flow_key;
	if (spec_.wrid)
		attr.dispatch = sim_dispatch;
	attr.defer_polls = mi_.defer;
	attr.defer_dim = mi_.defer_dim;
	attr.suspend = mi_.busy > 0;
	engine_ = sim_engine_new(&cq_, &attr, sim_schedule, deferrer_ ? sim_defer : nullptr,
				 mi_.busy ? sim_suspend : nullptr);
	if (!engine_) {
		fail("setup: ocq_engine_init() refused the case's attributes (mode, policy, "
		     "flags)");
		return false;
	}
	/* the word init staged and applied, as a retune's */
	tune_words_.assign(1, sim_engine_tune_word(engine_, 0));
	tune_now_ = sim_engine_tune_word(engine_, 1);
	sim_engine_watch(engine_, watch_slot);
	units_.resize(sim_engine_units(engine_));
	/* the host starts the engine; its first run is queued */
	sim_engine_resume(engine_);
	return true;
}

void World::add_contexts()
{
	bool two_cpus = spec_.provider == "concurrent" || spec_.mode.rfind("bench-", 0) == 0;
	auto event = [this] { return prov_->event_ready(); };

	sched_.add("producer", [this] { producer(); });
	sched_.add(
		"cb-cpu0", [this] { callback_cpu(); }, event);
	if (two_cpus)
		sched_.add(
			"cb-cpu1", [this] { callback_cpu(); }, event);
	if (spec_.provider == "spurious") {
		spurious_left_++;
		sched_.add("spurious", [this] { spurious(2); });
	}
	if (mi_.wait_next == 3) {
		spurious_left_++;
		sched_.add("late-cb", [this] { late_kick(); });
	}
	if (mi_.teardown) {
		spurious_left_++;
		sched_.add("late-cb", [this] { spurious(1); });
	}
	for (unsigned int u = 0; u < units_.size(); u++) {
		Unit *unit = &units_[u];

		unit->worker = sched_.add(
			"work" + std::to_string(u), [this, u] { worker(u); },
			[this, unit] { return work_ready(*unit); });
		if (u == 0 && spec_.cq_hops)
			unit->worker2 = sched_.add(
				"work0-cpu1", [this] { worker(0); },
				[this, unit] { return work_ready(*unit); });
	}
	if (mi_.ulp == 3)
		sched_.add(
			"ulp", [this] { pauser(); }, [this] { return paused_in_done_; }, false);
	else if (mi_.ulp == 1 || mi_.ulp == 2 || mi_.ulp >= 5)
		sched_.add("ulp", [this] { pauser(); });
	else if (mi_.ulp == 4)
		sched_.add(
			"ulp", [this] { pauser(); }, [this] { return quiet(); }, false);
	if (watchdog_ctx_)
		sched_.add("watchdog", [this] { watchdog(); });
	if (mi_.ulp >= 5)
		sched_.add("lease", [this] { lease(); });
	if (mi_.busy)
		busy_ctx_ = sched_.add("ulp", [this] { busy_poller(); });
	/* before the timer: a retune lands first while a deferral is pending */
	if (mi_.tune)
		sched_.add("tuner", [this] { tuner(); });
	if (deferrer_ || mi_.busy)
		sched_.add(
			"timer", [this] { timer(); }, [this] { return timer_ready(); });
	if (mi_.teardown)
		sched_.add(
			"teardown", [this] { teardown(); },
			[this] {
				return (int)dispatched_.size() >= pushes_ &&
				       (!watchdog_ctx_ || watchdog_done_);
			},
			false);
}

void World::step(const char *what)
{
	if (Scheduler::current()) {
		races();
		sched_.point(what);
	}
}

void World::fail(const std::string &why)
{
	failures_.push_back(why);
	sched_.note("FAIL: " + why);
}

/*
 * IB_OCQ_PARALLEL: a worker claims only published slots, so claimed never
 * passes produced.  The engine skips process() for a slot without a
 * wr_cqe, so a claim of an unproduced slot would not show at process();
 * it is checked at every scheduling point instead.
 */
void World::invariants()
{
	long claimed, produced;

	races();
	if (mi_.tune && engine_ && !freed_ && sim_engine_tune_word(engine_, 1) != tune_now_)
		tune_applied();
	if (mi_.engine != SIM_PARALLEL || !engine_ || freed_ || claims_failed_)
		return;
	sim_engine_claims(engine_, &claimed, &produced);
	if ((int32_t)(uint32_t)(claimed - produced) > 0) {
		claims_failed_ = true;
		fail(fmt("claimed unproduced slot: claimed %ld passed produced %ld", claimed,
			 produced));
	}
}

// A data race the weak model found on a slot (mm.cpp): one failure each.
void World::races()
{
	std::string r = mm_race();

	if (!r.empty())
		fail(r);
}

void World::cq_read()
{
	if (prov_->destroyed())
		fail("use after free: the engine read the CQ after ib_destroy_cq()");
}

void World::warn(const std::string &what)
{
	fail("WARN_ON: in the engine: " + what);
}

// --- the contexts ---

void World::producer()
{
	for (int i = 0; i < pushes_; i++) {
		struct ib_wc wc = {};

		if (spec_.wrid)
			wc.wr_id = comps_[i].wr_id;
		else
			wc.wr_cqe = &comps_[i].cqe;
		wc.status = comps_[i].status;
		wc.opcode = IB_WC_RECV;
		wc.qp = &qps_[comps_[i].flow];
		/*
		 * Deferred re-arm: the last completion lands once the CQ run
		 * tried to arm after its deferral, so that an arm that never
		 * comes strands it.  An idle wait: if the arm never comes,
		 * check_terminal() says so.  Not with busy polls, which hold
		 * the CQ unit between the runs (suspend-defer).
		 */
		if (mi_.defer && !mi_.busy && !mi_.wait_next && i == pushes_ - 1)
			sched_.wait(
				"hca: wait until the deferral is over",
				[this] { return deferral_over(); }, true);
		arrival(i);
		if (deferrer_ && timer_pending_)
			deferred_pushes_++;
		/*
		 * lease-postpone: the last completion lands after the ULP's
		 * resume, so that the CQ run can pause again before tick 2
		 */
		if (mi_.ulp == 6 && i == pushes_ - 1)
			sched_.wait(
				"hca: wait for the ULP's resume", [this] { return lease_resumed_; },
				false);
		prov_->push(wc, solicited(i));
		/* slot reuse: the rest once done() sleeps (below) */
		if (mi_.wait_next == 3 && i == OCQ_SIM_FIRST_BURST - 1)
			sched_.wait(
				"hca: wait until done() sleeps",
				[this] { return reuse_phase_ > 0; }, false);
	}
	producer_done_ = true;
}

/*
 * CaseSpec::solicited: the completions a mix, so that some that are not
 * solicited come before one that is, and wait for it under a
 * solicited-only arm; the last is solicited, so that the CQ is drained in
 * the end.  Otherwise none is (an IB_CQ_NEXT_COMP arm does not look).
 */
bool World::solicited(int seq) const
{
	return spec_.solicited && (seq == pushes_ - 1 || seq % 3 == 2);
}

/*
 * Completion @i of a mode that spaces them: defer-dim-lone's each once the
 * last was dispatched and the CQ armed again; defer-dim-paid's groups
 * likewise, but the last group once the one before was dispatched (its
 * deferral may be pending); suspend-burst's once the CQ was first armed.
 * Idle waits: if the CQ is never armed again, check_terminal() says so.
 * parallel-hol's backlog behind the first completion, once the CQ took it
 * (so that the run that takes the backlog finds the commit step busy and
 * parks), and its last once the CQ run parked (or all before it were
 * dispatched).
 */
void World::arrival(int i)
{
	bool group = false;

	for (int g : OCQ_SIM_PAID_GROUPS)
		group |= g == i;
	if (mi_.wait_next == 5 || (mi_.wait_next == 6 && group && i < 6) ||
	    (mi_.wait_next == 7 && !i))
		sched_.wait(
			"hca: wait until the CQ is armed again",
			[this, i] { return armed_again(mi_.wait_next == 7 ? 0 : i); }, true);
	else if (mi_.wait_next == 6 && group)
		sched_.wait(
			"hca: wait until the group before was dispatched",
			[this, i] { return (int)dispatched_.size() == i; }, true);
	/* parallel-publish: seq 1 once a worker is in process(seq 0) */
	if (mi_.wait_next == 9 && i == 1)
		sched_.wait(
			"hca: wait until process(seq 0) runs", [this] { return processed_[0] > 0; },
			false);
	if (mi_.wait_next != 2 || mi_.engine != SIM_PARALLEL)
		return;
	if (i == 1)
		sched_.wait(
			"hca: wait until the CQ gave up its first completion",
			[this] { return taken_ > 0; }, false);
	else if (i == pushes_ - 1)
		sched_.wait(
			"hca: wait until the CQ run parked behind the backlog",
			[this] {
				return sim_engine_parked(engine_) ||
				       (int)dispatched_.size() >= pushes_ - 1;
			},
			false);
}

// Every completion before @i was dispatched, and the CQ is armed, no timer
// pending.
bool World::armed_again(int i) const
{
	return (int)dispatched_.size() == i && prov_->armed() && !timer_pending_;
}

// A CPU taking the CQ's interrupts: delivers queued events one by one.
// Started once an event is pending.
void World::callback_cpu()
{
	for (;;) {
		prov_->take_event();
		cq_.comp_handler(&cq_, cq_.cq_context);
		prov_->callback_done();
		sched_.wait(
			"wait for event", [this] { return prov_->event_ready(); }, true);
	}
}

/*
 * reuse-*: done() sleeps (IB_POLL_WORKQUEUE allows it) twice.  The reader's
 * last fence is in the kick after IB_OCQ_HOL_DONES done() calls; the next
 * done() reads its slot and sleeps while the HCA adds the rest and the CQ
 * run fills the ring up to that slot, and waits.  Once that done()
 * returned and the slot is released, the next one sleeps while a late
 * callback kicks the CQ run: it finds room and overwrites the slot with
 * only the release, and its own acquire, to order the read before.
 */
void World::reuse_sleep(long seq)
{
	auto idle = [this] {
		return !prov_->pending() && !prov_->in_flight() && !units_[0].running &&
		       !units_[0].queued;
	};

	if (seq == sim_hol_dones()) {
		reuse_phase_ = 1;
		sched_.wait(
			"done() sleeps while the CQ run fills the ring",
			[this, idle] { return producer_done_ && idle(); }, false);
	} else if (seq == sim_hol_dones() + 1) {
		reuse_phase_ = 2;
		sched_.wait(
			"done() sleeps while a late callback kicks the CQ run",
			[this, idle] { return late_kicked_ && idle(); }, false);
	}
}

// reuse-*: a callback with no event behind it, once done() sleeps again.
void World::late_kick()
{
	sched_.wait(
		"late-cb: wait until done() sleeps again", [this] { return reuse_phase_ == 2; },
		false);
	if (prov_->start_spurious()) {
		cq_.comp_handler(&cq_, cq_.cq_context);
		prov_->callback_done();
	}
	late_kicked_ = true;
	spurious_left_--;
}

// Callbacks with no event behind them (or a late one during teardown).
void World::spurious(int n)
{
	for (int i = 0; i < n; i++) {
		if (!prov_->start_spurious())
			break;
		cq_.comp_handler(&cq_, cq_.cq_context);
		prov_->callback_done();
	}
	spurious_left_--;
}

void World::handler()
{
	handler_calls_++;
	if (freed_) {
		fail("use after free: the completion handler ran after the engine was freed");
		return;
	}
	if (mi_.pattern1) {
		pattern1();
		return;
	}
	engine_events_++;
	sim_engine_event(engine_);
}

/*
 * A perpetual-positive provider makes every run requeue itself: once the
 * ULP has seen every completion, stop following the requeues (the run
 * stays queued, which the terminal check accepts as a pending wakeup).
 */
bool World::work_ready(const Unit &u) const
{
	return u.queued && !u.cancelling &&
	       (u.runs < run_cap_ || (int)dispatched_.size() < pushes_);
}

// The host's worker for one unit; started once the unit is queued.
void World::worker(unsigned int unit)
{
	Unit &u = units_[unit];

	for (;;) {
		u.queued = false;
		u.running++;
		u.runs++;
		mm_acquire(unit); /* the run sees what was before queue_work() */
		if (unit == 0 && handoff_)
			check_handoff();
		if (unit == 0) {
			run_floor_ = tune_done_;
			run_timer_ = timer_queued_;
		}
		if (unit == 0 && deferrer_)
			begin_cq_run();
		if (freed_)
			fail(fmt("use after free: work of unit %ld ran after the engine was freed",
				 unit));
		else
			sim_engine_run(engine_, unit);
		if (unit == 0 && deferrer_)
			end_cq_run();
		mm_release(MM_CH_DONE + unit); /* for cancel_work_sync() */
		u.running--;
		/*
		 * Perpetual-positive: every run requeues itself, so without
		 * fairness the search would follow one worker forever.  The
		 * requeued run goes behind whatever else can run (the
		 * kernel's workqueue does the same).  Other providers keep
		 * every interleaving, including a requeued run that runs
		 * again at once.
		 */
		if (u.queued && perpetual_)
			sched_.yield("requeued run yields");
		sched_.wait(
			"worker idle", [this, &u] { return work_ready(u); }, true);
	}
}

// queue_work() of a unit: the engine's schedule(), or with @timer the
// deferred re-arm's timer, which queues the CQ unit's next run for the run
// that deferred.
void World::schedule(unsigned int unit, bool timer)
{
	step("queue_work");
	Unit &u = units_.at(unit);

	if (freed_ || u.cancelled) {
		fail(fmt(timer ? "use after free: the deferred re-arm's timer queued unit %ld "
				 "after teardown cancelled it: the run would touch freed memory" :
				 "use after free: schedule() of unit %ld after teardown "
				 "cancelled it: the run would touch freed memory",
			 unit));
		return;
	}
	if (u.cancelling)
		return;
	if (u.queued) {
		fail(fmt(
			timer ? "schedule twice: the deferred re-arm's timer queued unit %ld "
				"while a run of it is queued (the run that deferred keeps "
				"OCQ_RUN: nothing else may queue it)" :
				"schedule twice: schedule() of unit %ld while a run of it is queued "
				"(more than once per run)",
			unit));
		return;
	}
	if (unit == 0)
		timer_queued_ = timer;
	/* from the unit's own run: it spent its budget and requeues itself */
	if (u.running && (sched_.self() == u.worker || sched_.self() == u.worker2))
		u.requeues++;
	if (unit == 0 && !timer && in_busy_poll())
		busy_handoff();
	/*
	 * queue_work() takes the pool's lock: it is ordered after a cancel of
	 * the item that took the lock before (cancel() releases), and the run
	 * it queues sees what came before it
	 */
	mm_acquire(unit);
	mm_release(unit);
	u.queued = true;
}

// pause/resume by the ULP; with IB_OCQ_POSTPONE_ARM, "arm now" twice;
// or resume after done() paused.
void World::pauser()
{
	switch (mi_.ulp) {
	case 1:
		paused_deferred_ = timer_pending_;
		sim_engine_pause(engine_);
		sim_engine_resume(engine_);
		break;
	case 2:
		/* "arm now" at any time, and once more as the ULP's last act */
		sim_engine_resume(engine_);
		sched_.wait(
			"ulp: wait until all is quiet", [this] { return quiet(); }, false);
		check_quiet_armed();
		mm_acquire(MM_CH_ULP);
		last_resume_events_ = handler_calls_;
		sim_engine_resume(engine_);
		break;
	case 3: /* started once done() paused */
		resumed_ = true;
		/* fall through */
	case 4: /* started once all is quiet: the last "arm now" */
		check_quiet_armed();
		mm_acquire(MM_CH_ULP);
		last_resume_events_ = handler_calls_;
		sim_engine_resume(engine_);
		break;
	case 5:
	case 6:
	case 7:
		lease_ulp(mi_.ulp != 6);
		break;
	}
}

/*
 * The ULP under the lease: it pauses (@pauses; else, with
 * IB_OCQ_POSTPONE_ARM, the CQ run pauses itself), resumes after the lease's
 * first tick, pauses again (@pauses), and resumes once more, its last act,
 * after the lease's last tick.
 */
void World::lease_ulp(bool pauses)
{
	if (pauses)
		sim_engine_pause(engine_);
	sched_.wait(
		"ulp: wait for the lease's first tick", [this] { return lease_ticks_ >= 1; },
		false);
	sim_engine_resume(engine_);
	mm_release(MM_CH_LEASE);
	lease_resumed_ = true;
	if (pauses)
		sim_engine_pause(engine_);
	lease_paused_again_ = pauses;
	/* lease-postpone: the completions may wait for the last resume */
	sched_.wait(
		"ulp: wait for the lease's last tick",
		[this, pauses] { return lease_done_ && (pauses || quiet()); }, false);
	mm_acquire(MM_CH_ULP);
	last_resume_events_ = handler_calls_;
	sim_engine_resume(engine_);
}

/*
 * IB_OCQ_POSTPONE_ARM, all quiet before the ULP's last "arm now", which
 * would arm the CQ whatever the engine left: an engine that is not paused
 * and runs nothing said the CQ is armed (a resumed pass armed it, or a
 * callback's pass found it armed still, e->armed), so it must be.  Else a
 * completion would wait for the ULP's next "arm now" with the engine
 * running.
 */
void World::check_quiet_armed()
{
	if (!sim_engine_paused(engine_) && !(sim_engine_gate(engine_, 0) & SIM_GATE_RUN) &&
	    !prov_->armed())
		fail("lost wakeup: the CQ was left unarmed, not paused, before the ULP's last "
		     "\"arm now\"");
}

/*
 * Nothing more will happen but the engine's own runs: every completion was
 * dispatched, the HCA, the spurious callbacks and the watchdog are done and
 * no event is pending or being delivered.  The ULP's last resume ("arm
 * now") waits for it, so that a terminal state must be armed and running.
 */
bool World::quiet() const
{
	/*
	 * With IB_OCQ_POSTPONE_ARM what is left in the CQ waits for that very
	 * "arm now": the ULP does not wait for it to be dispatched.
	 */
	return ((int)dispatched_.size() >= pushes_ || mi_.postpone) && producer_done_ &&
	       !spurious_left_ && (!watchdog_ctx_ || watchdog_done_) && !prov_->pending() &&
	       !prov_->in_flight();
}

// The host's safety-net timer: a few ticks once the HCA is done, each
// after the CQ run it may have started ended.
void World::watchdog()
{
	step("watchdog tick");
	sim_engine_watchdog(engine_);
	sched_.wait(
		"wait for producer", [this] { return producer_done_; }, false);
	for (int i = 0; i < 3; i++) {
		step("watchdog tick");
		sim_engine_watchdog(engine_);
		sched_.wait(
			"wait for CQ run",
			[this] { return !units_[0].queued && !units_[0].running; }, false);
	}
	watchdog_done_ = true;
}

/*
 * The pause lease's delayed work (ops->lease): three ticks, never two at
 * once.  The ULP resumes after the first tick and may pause again (or, with
 * IB_OCQ_POSTPONE_ARM, the CQ run pauses); the second tick comes after that
 * resume (MM_CH_LEASE, a timing assumption: the ticks are pause_ms apart,
 * not ordered by the kernel's memory model), so every pause it can see was
 * set after the first tick ended.  Ending one would end a pause younger
 * than a tick: the pause generation in the gate word, which the cmpxchg
 * that sets OCQ_PAUSED bumps and the tick's resume checks, forbids it.
 * The third tick may end a pause the second saw (coverage).  Time is not
 * modelled: a tick is a point the scheduler picks; the second waits for a
 * pause to look at (or for the end: nothing more will pause).  In
 * lease-race it does not wait: it may land while the ULP resumes and
 * pauses again, and may then end the first pause, not the second.
 */
void World::lease()
{
	lease_tick(1);
	if (mi_.ulp != 7) { /* lease-race: the second tick at any time */
		sched_.wait(
			"lease: wait for the ULP's resume, and a pause",
			[this] {
				return lease_resumed_ && (sim_engine_paused(engine_) || quiet());
			},
			false);
		mm_acquire(MM_CH_LEASE);
	}
	lease_tick(2);
	lease_tick(3);
	lease_done_ = true;
}

void World::lease_tick(int tick)
{
	unsigned long before = sim_engine_lease_resumes(engine_);

	step("lease tick");
	sim_engine_lease(engine_);
	if (sim_engine_lease_resumes(engine_) != before) {
		/*
		 * lease-race: the second tick may end the first pause, but not
		 * the one the ULP set, after tick 1, before this tick's resume
		 * (which is then no longer in force)
		 */
		if (tick == 2 &&
		    (mi_.ulp != 7 || (lease_paused_again_ && !sim_engine_paused(engine_))))
			fail("lease: tick 2 ended a pause set after tick 1 ended: a "
			     "pause must last a whole tick");
		else
			lease_resumes_++;
	}
	lease_ticks_ = tick;
}

/*
 * The host's timer of a deferred re-arm or a suspension (an hrtimer:
 * ops->defer() or ops->suspend() starts it, a start while it is pending
 * only moves it).  Its callback, as ib_ocq_defer_fire(), asks the engine
 * whether it takes the CQ unit's run (ocq_engine_timer(): it clears
 * OCQ_TIMER) and queues the CQ unit as schedule() does only then; a busy
 * poll may have taken the run first, and the fire is stale.  It fires at
 * any point the scheduler picks: time is not modelled.  Started, and
 * woken, by timer_ready().
 */
void World::timer()
{
	for (;;) {
		timer_pending_ = false;
		timer_running_ = true;
		mm_acquire(MM_CH_TIMER); /* hrtimer_start() before the callback */
		if (freed_) {
			fail("use after free: the timer fired after the engine was freed: its "
			     "callback would touch freed memory");
		} else if (sim_engine_timer(engine_)) {
			idle_fires_++;
			timer_takes_++;
			if (hold_suspend_)
				suspensions_ended_++;
			sched_.note("hrtimer fires: it takes the CQ unit: queue its next run");
			schedule(0, true);
		} else {
			sched_.note("hrtimer fires: stale (OCQ_TIMER clear): queue nothing");
		}
		timer_running_ = false;
		mm_release(MM_CH_TIMER_DONE); /* for hrtimer_cancel() */
		sched_.wait(
			"hrtimer idle", [this] { return timer_ready(); }, true);
	}
}

/*
 * The timer fires while it is pending, but no more than fire_limit() times
 * in a row that take the CQ unit with nothing found, no arm tried and no
 * run started by anything else: the engine arms once defer_polls deferred
 * runs in a row found nothing, so a fire past that is a CQ that is never
 * armed (timer_stuck(); the world stops following it there, and
 * check_terminal() fails).  A stale fire (OCQ_TIMER clear: a busy poll
 * took the run) queues nothing: it is always followed.
 */
bool World::timer_ready() const
{
	return timer_pending_ && (idle_fires_ < fire_limit() || timer_stale());
}

bool World::timer_stuck() const
{
	return timer_pending_ && idle_fires_ >= fire_limit() && !timer_stale();
}

// A fire now would find OCQ_TIMER clear, and queue nothing.
bool World::timer_stale() const
{
	return !engine_ || freed_ || !(sim_engine_gate(engine_, 0) & SIM_GATE_TIMER);
}

/*
 * The fires in a row that find nothing before the CQ must be armed:
 * defer_polls (a suspension, like a deferral, starts e->defer_got afresh,
 * so the timer's first run after one spends the first of them); a
 * suspension alone: one, whose run arms.
 */
long World::fire_limit() const
{
	if (mi_.tune == 1)
		return (long)OCQ_SIM_TUNE_POLLS;
	if (!mi_.defer)
		return 1;
	return (long)mi_.defer;
}

// The HCA's last completion waits for it: the CQ run tried to arm after
// its last deferral, and no timer is pending (or the timer is stuck).
bool World::deferral_over() const
{
	return timer_stuck() || (armed_since_defer_ && !timer_pending_);
}

/*
 * IB_OCQ_DEFER_DIM: the engine's threshold, read where the CQ run decided
 * with it (ops->defer(), ib_req_notify_cq()).  It is 2, 4, 8 or 16
 * (OCQ_DEFER_DIM_MIN to OCQ_BATCH), and moves by doubling, halving or back
 * to 2; the coverage check wants it doubled.  In strict mode the move an
 * arm makes after a deferral of a batch is known (dim_armed()): back to 2
 * if a later check found the threshold's count again (the deferral paid),
 * else doubled; defer-dim-paid shows the first (a move down to 2 is its
 * coverage), defer-dim-lone that lone completions never take it below 2.
 * The halving after OCQ_DEFER_DIM_DECAY short checks is not predicted here
 * (its shape is checked; fake_defer's dim_decay shows it in the guest).
 */
void World::dim_threshold(long min)
{
	if (dim_expect_ >= 0 && min != dim_expect_)
		fail(fmt(dim_expect_paid_ ?
				 "defer: the IB_OCQ_DEFER_DIM threshold is %ld after an arm "
				 "that ended a deferral that paid (a later check found the "
				 "threshold's count again): it comes back to %ld" :
				 "defer: the IB_OCQ_DEFER_DIM threshold is %ld after an arm "
				 "that ended a deferral that did not pay: it doubles, to %ld",
			 min, dim_expect_));
	else if (dim_expect_ >= 0 && dim_expect_paid_ && last_min_ > 2)
		min_back_ = true;
	dim_expect_ = -1;
	if (min < 2 || min > 16 || (min & (min - 1)))
		fail(fmt("defer: the IB_OCQ_DEFER_DIM threshold is %ld, not 2, 4, 8 or 16", min));
	else if (min != last_min_ && min != 2 && min != 2 * last_min_ && 2 * min != last_min_)
		fail(fmt("defer: the IB_OCQ_DEFER_DIM threshold went from %ld to %ld: it "
			 "doubles, halves or comes back to 2",
			 last_min_, min));
	if (min > last_min_)
		min_grew_ = true;
	last_min_ = min;
}

/*
 * IB_OCQ_DEFER_DIM, ops->defer() of a run whose check counted @got
 * completions, the threshold @min: a deferral of a batch (@got >= @min)
 * starts a chain the next arm judges, and one more in the chain means the
 * first paid.  Strict mode only: in flow and parallel mode a check may
 * park the run instead, unseen here.
 */
void World::dim_deferred(long got, long min)
{
	if (mi_.engine != SIM_STRICT || got < min)
		return;
	if (dim_chain_)
		dim_paid_ = true;
	dim_chain_ = true;
}

/*
 * IB_OCQ_DEFER_DIM, an arm a CQ run confirmed, the threshold @min: the
 * engine adapts it there (ocq_defer_adapt()).  After a chain, the next
 * read must find it back at 2 if the chain paid, else doubled, up to a
 * batch (dim_threshold()).
 */
void World::dim_armed(long min)
{
	dim_expect_ = -1;
	if (dim_chain_ && mi_.engine == SIM_STRICT) {
		dim_expect_ = dim_paid_ ? 2 : std::min(2 * min, sim_batch());
		dim_expect_paid_ = dim_paid_;
	}
	dim_chain_ = false;
	dim_paid_ = false;
}

/*
 * The completions the deferral check counts: with IB_OCQ_DEFER_DIM those
 * taken since the last confirmed arm or deferral, the engine's own count
 * (read where the run decided with it), else the run's before its last poll.
 */
long World::defer_got()
{
	if (!dim_now())
		return run_found_ + last_got_;
	return (long)sim_engine_defer_got(engine_);
}

long World::defer_min()
{
	if (!dim_now())
		return 1;
	long min = (long)sim_engine_defer_min(engine_);

	dim_threshold(min);
	return min;
}

// ops->defer(): hrtimer_start() by the CQ run that deferred its re-arm.
void World::defer()
{
	step("hrtimer_start");
	defer_calls_++;
	if (freed_ || timer_cancelled_) {
		fail("use after free: defer() after teardown cancelled the timer: its "
		     "callback would touch freed memory");
		return;
	}
	/* the defer contract (notified()): a run that found work restarts it */
	if (run_found_ + last_got_)
		idle_runs_ = 0;
	/* a retune turned the deferral off, and the run applied it */
	if (!defer_polls_now())
		fail("defer: a CQ run deferred its re-arm with the deferral retuned off "
		     "(defer_polls 0 applied)");
	/*
	 * IB_OCQ_DEFER_DIM: fewer than the threshold, but some: it arms.  The
	 * count is the one the run decided with, after its last poll (the
	 * engine's own starts again at the deferral, before this hook).
	 */
	long got = dim_now() ? dim_count_ : defer_got();
	long min = defer_min();

	if (got && got < min)
		fail(fmt("defer: a CQ run deferred its re-arm after %ld completion(s) "
			 "since the last arm or deferral: with IB_OCQ_DEFER_DIM it must arm",
			 got));
	if (dim_now())
		dim_deferred(got, min);
	if (tune_applies_)
		tune_defers_++;
	/* tune-dim: a single completion deferred, the threshold's 1 without DIM */
	if (mi_.tune == 3 && !dim_now() && got == 1)
		tune_single_defers_++;
	mm_release(MM_CH_TIMER);
	if (timer_pending_)
		sched_.note("hrtimer_start: pending already, moved");
	timer_pending_ = true;
	hold_suspend_ = false;
	defer_since_arm_ = true;
	armed_since_defer_ = false;
}

/*
 * ops->suspend(): hrtimer_start() by a busy poll, found work or not (an
 * empty one keeps the suspension), the CQ unit's run held for the timer.
 */
void World::suspend()
{
	step("hrtimer_start");
	suspend_calls_++;
	if (!in_busy_poll())
		fail("suspend: ops->suspend() called outside a busy poll");
	bp_suspended_ = true;
	mm_release(MM_CH_TIMER);
	if (timer_pending_)
		sched_.note("hrtimer_start: pending already, moved");
	timer_pending_ = true;
	hold_suspend_ = true;
	idle_fires_ = 0;
}

/*
 * The ULP's busy polls (suspension): ib_ocq_busy_poll() one after another
 * while the HCA adds its completions, until it made ModeInfo::busy calls or
 * the CQ gave up every completion (to a busy poll or a run), then no more;
 * each may take the CQ unit when it is free or held for the timer, and
 * returns -EBUSY while a run holds it.  suspend-burst: the first once a
 * full batch is in the CQ (or the HCA is done), with a budget it spends.
 * tune-suspend: a call refused (-EOPNOTSUPP: the suspension retuned off)
 * does not count, and the next waits until a retune returned; then one
 * more call once the retune that turns the suspension off returned, and
 * one once the one that turns it on again returned.
 */
void World::busy_poller()
{
	if (mi_.wait_next == 7)
		sched_.wait(
			"ulp: wait for a full batch in the CQ",
			[this] { return (long)prov_->depth() >= sim_batch() || producer_done_; },
			false);
	for (int i = 0; i < mi_.busy && taken_ < pushes_; i++) {
		int floor = tune_done_;

		if (busy_call() != -EOPNOTSUPP || mi_.tune != 2)
			continue;
		if (tuner_done_)
			break;
		i--;
		sched_.wait(
			"ulp: wait for a retune",
			[this, floor] { return tune_done_ > floor || tuner_done_; }, false);
	}
	busy_over_ = true;
	if (mi_.tune != 2)
		return;
	sched_.wait(
		"ulp: wait for the retune that turns the suspension off",
		[this] { return tune_done_ >= 1; }, false);
	busy_call();
	sched_.wait(
		"ulp: wait for the retune that turns it on again", [this] { return tuner_done_; },
		false);
	busy_call();
}

// One ib_ocq_busy_poll() of the ULP's, checked; what it returned.
int World::busy_call()
{
	long takes = timer_takes_;
	bool held = sim_engine_gate(engine_, 0) & SIM_GATE_TIMER;
	int floor = tune_done_;
	int ret;

	/* the ULP knows of the retunes that returned: ordered after them */
	if (mi_.tune)
		mm_acquire(OCQ_SIM_CH_TUNE);
	sched_.note("ulp: ib_ocq_busy_poll()");
	busy_inside_ = true;
	bp_found_ = 0;
	bp_last_got_ = 0;
	bp_polls_ = 0;
	bp_suspended_ = false;
	bp_failed_ = false;
	bp_handed_ = false;
	bp_floor_ = floor;
	ret = sim_engine_busy_poll(engine_, busy_budget());
	busy_inside_ = false;
	/* only the timer clears OCQ_TIMER but a busy poll */
	if (ret >= 0 && held && timer_takes_ == takes)
		busy_from_timer_++;
	busy_check(ret);
	if (mi_.tune == 2)
		tune_busy(ret, floor);
	/* tune-suspend: after the retune that turned the suspension on again */
	if (mi_.tune == 2 && floor >= 2 && ret > 0)
		tune_took_++;
	bp_after_off_ |= floor >= 1;
	return ret;
}

// The budget of each busy poll.
unsigned int World::busy_budget() const
{
	return mi_.wait_next == 7 ? OCQ_SIM_BURST_BUDGET : OCQ_SIM_BUSY_BUDGET;
}

/*
 * What a busy poll returned (@ret) and left: the completions its polls
 * took, less than its budget and a batch more (it stops polling once it
 * took its budget, in whole batches); and, found work or not, the CQ
 * suspended (ops->suspend(): an empty busy poll keeps the suspension, and
 * never arms: notified()), or the run parked (a domain's progress kicks
 * it), or its hold handed to a delayed run after a verb failed
 * (busy_handoff()): that run goes on.  Checked as the busy poll returns:
 * the unit was released (or held for the timer, or queued) by its last
 * step.
 */
void World::busy_check(int ret)
{
	long took = bp_found_ + bp_last_got_;
	bool parked = sim_engine_parked(engine_) || bp_handed_;
	long budget = (long)busy_budget();

	if (ret == -EBUSY) {
		busy_ebusy_++;
		if (bp_polls_)
			fail("busy poll: returned -EBUSY after it polled the CQ");
		return;
	}
	/* tune-suspend: refused with the suspension off (tune_busy()) */
	if (ret == -EOPNOTSUPP && mi_.tune == 2) {
		tune_refused_++;
		if (bp_polls_)
			fail("busy poll: returned -EOPNOTSUPP after it polled the CQ");
		return;
	}
	if (ret < 0) {
		fail(fmt("busy poll: returned %ld, the engine neither paused nor torn down", ret));
		return;
	}
	busy_took_++;
	busy_backoffs_ += bp_handed_;
	/* it stopped as it took its budget: after a full batch, suspended */
	if (bp_suspended_ && bp_last_got_ == sim_batch())
		busy_spent_++;
	if (ret != took)
		fail(fmt("busy poll: returned %ld, its polls took %ld completion(s)", ret, took));
	else if (ret >= budget + sim_batch())
		fail(fmt("busy poll: took %ld completion(s) with a budget of %ld: it stops once it "
			 "took its budget",
			 ret, budget));
	else if (!bp_suspended_ && !parked)
		fail(fmt("busy poll: took %ld completion(s) and ended neither suspended nor "
			 "parked (found work or not, a busy poll keeps the suspension)",
			 ret));
}

/*
 * After every atomic operation of the engine: if the CQ unit is free, or
 * held for the timer, nobody's hold goes on (note_hold()).  OCQ_TIMER is
 * set only with OCQ_RUN held for the timer: without it, a kick and the
 * timer could each take a run.
 */
void World::observe_gate()
{
	int gate;

	if (!mi_.busy || !engine_ || freed_)
		return;
	gate = sim_engine_gate(engine_, 0);
	if (!(gate & SIM_GATE_RUN) || (gate & SIM_GATE_TIMER))
		holder_ = -1;
	if ((gate & SIM_GATE_TIMER) && !(gate & SIM_GATE_RUN) && !overlap_failed_) {
		overlap_failed_ = true;
		fail("overlapping holds: OCQ_TIMER set with OCQ_RUN clear: a kick and the "
		     "timer may each take a run");
	}
}

bool World::in_busy_poll() const
{
	return busy_inside_ && sched_.self() == busy_ctx_;
}

/*
 * A busy poll queued a run of the CQ unit: its back-off (ocq_yield()) from
 * a provider that failed a poll (it never arms).  Its hold goes on in that
 * run, as the engine documents (ib_ocq_busy_poll()): the run is the next
 * holder, and the engine counts the back-off as a yield.
 */
void World::busy_handoff()
{
	bp_handed_ = true;
	holder_ = -1;
	units_[0].requeues++;
	if (!bp_failed_)
		fail("busy poll: handed the CQ unit to a run, though no verb failed");
}

/*
 * A poll or an arm of the CQ by a hold of the CQ unit (a run, or a busy
 * poll): no other hold may have polled or armed since the unit was last
 * free or held for the timer (observe_gate() clears holder_ there), and
 * no run of the unit may be queued during a busy poll's.
 */
void World::note_hold()
{
	int me = sched_.self();

	if (!mi_.busy || overlap_failed_ || me < 0)
		return;
	/* a queued run of the CQ unit holds OCQ_RUN already */
	if (in_busy_poll() && units_[0].queued) {
		overlap_failed_ = true;
		fail("overlapping holds: a busy poll uses the CQ while a run of the CQ unit is "
		     "queued");
		return;
	}
	if (holder_ < 0) {
		holder_ = me;
		return;
	}
	if (holder_ != me) {
		overlap_failed_ = true;
		fail("overlapping holds: " + sched_.name(me) + " uses the CQ while " +
		     sched_.name(holder_) + "'s hold of the CQ unit goes on");
	}
}

// A CQ run begins (deferred re-arm): its own counts start at 0.
void World::begin_cq_run()
{
	if (!timer_queued_)
		idle_fires_ = 0;
	timer_queued_ = false;
	run_found_ = 0;
	last_got_ = 0;
	run_armed_ = false;
	seg_polls_ = 0;
	seg_found_ = false;
}

// A CQ run ended: one that polled since its last arm and found nothing
// there, nor in the poll just before that arm, counts as an empty run
// (notified()).
void World::end_cq_run()
{
	if (seg_polls_ && !seg_found_)
		idle_runs_++;
}

/*
 * The arm the policy asks for: IB_CQ_SOLICITED under IB_ARM_SOLICITED,
 * else IB_CQ_NEXT_COMP, whatever the base policy and whoever arms (a run,
 * a busy poll).  A NEXT_COMP arm under a solicited policy loses nothing
 * (the provider raises for more than was asked), so no other property
 * sees it: it is checked here, at the call.  Whether REPORT_MISSED is
 * asked is left to the end checks (a lost wakeup where it was needed).
 */
void World::arm_flags(int flags)
{
	bool sol = spec_.policy & SIM_ARM_SOLICITED;
	int want = sol ? IB_CQ_SOLICITED : IB_CQ_NEXT_COMP;

	if ((flags & IB_CQ_SOLICITED_MASK) == want || arm_flags_failed_)
		return;
	arm_flags_failed_ = true;
	fail(fmt(sol ? "arm flags: ib_req_notify_cq() with flags %#lx under a solicited-only "
		       "policy (IB_ARM_SOLICITED): it must ask for IB_CQ_SOLICITED" :
		       "arm flags: ib_req_notify_cq() with flags %#lx under a policy without "
		       "IB_ARM_SOLICITED: it must ask for IB_CQ_NEXT_COMP",
		 flags));
}

/*
 * ib_req_notify_cq() returned @ret.  With the deferred re-arm the engine
 * arms only in a CQ run that found nothing before its last poll (the one
 * ib_poll_and_notify() makes just before the arm), and once defer_polls
 * runs in a row found nothing, this one the last: the contract of
 * &ib_ocq_attr.defer_usecs.  The engine counts a run whose deferral check
 * found nothing, and starts again at a check that found work and at the
 * arm.  The world counts every run that polled since its last arm and
 * found nothing there (idle_runs_, end_cq_run(): a run that parked or was
 * paused after its poll too), and starts again only where the engine
 * surely did: at a deferral of a run that found work, and at an arm that
 * succeeded (after a failed one the engine arms at once again).  So
 * its count is never below the engine's, and the check is no stricter
 * than the contract.
 */
void World::notified(int ret)
{
	note_hold();
	/* a busy poll never arms, found work or not: the timer's run does */
	if (in_busy_poll())
		fail(fmt("busy poll: armed the CQ after it took %ld completion(s): an empty "
			 "busy poll keeps the suspension",
			 bp_found_));
	if (mi_.busy && ret == 0)
		idle_fires_ = 0;
	if (!deferrer_ || !in_cq_run())
		return;
	/*
	 * The rules of the moderation the run applied (a retune's, in the tune
	 * modes): with the deferral retuned off, any arm
	 */
	long polls = defer_polls_now();
	long found = dim_now() ? defer_got() : run_found_;
	long min = polls ? defer_min() : 0;

	if (polls && found >= min)
		fail(fmt("defer: a CQ run armed the CQ after it took %ld completion(s): its "
			 "re-arm must be deferred",
			 found));
	else if (polls && found) {
		short_arms_++; /* IB_OCQ_DEFER_DIM: too few to defer */
		if (mi_.tune == 3 && tune_applies_ >= 2)
			tune_short_arms_++;
	} else if (polls && !run_armed_ && idle_runs_ + 1 < polls)
		fail(fmt("defer: the CQ was armed after %ld run(s) in a row that found "
			 "nothing, and this one: defer_polls is %ld",
			 idle_runs_, polls));
	run_armed_ = true;
	/* the engine counts again once an arm is confirmed, not at a failed one */
	if (ret == 0)
		idle_runs_ = 0;
	if (polls && dim_now() && ret == 0)
		dim_armed(min);
	/*
	 * What the poll just before the arm took is the run's: the engine's
	 * next deferral check in this run finds it (and starts again).
	 */
	seg_polls_ = 0;
	seg_found_ = last_got_ > 0;
	idle_fires_ = 0;
	armed_since_defer_ = true;
	if (ret == 0 && defer_since_arm_) {
		rearms_++;
		tune_rearms_ += !polls;
		defer_since_arm_ = false;
	}
}

// --- the host's retunes ---

/*
 * The host's retunes (ModeInfo::tune): ocq_engine_tune(), as ib_ocq_set_tune()
 * calls it (never two at once), twice: to a moderation, then back.  The
 * first at any time (tune-suspend: once a busy poll suspended, or the busy
 * polls are over); the second once a CQ run deferred its re-arm after a
 * holder of the CQ unit applied the first, or all is quiet (tune,
 * tune-flow, tune-dim), or once a busy poll began after the first returned
 * (tune-suspend); each from then on at any time.
 */
void World::tuner()
{
	switch (mi_.tune) {
	case 1:
	case 3:
		tune_to(mi_.tune == 1 ? OCQ_SIM_TUNE_POLLS : mi_.defer, false, false);
		sched_.wait(
			"tuner: wait until a CQ run deferred its re-arm",
			[this] { return tune_defers_ || tuner_quiet(); }, false);
		if (mi_.tune == 1)
			tune_to(0, false, false);
		else
			tune_to(mi_.defer, true, false);
		break;
	case 2:
		sched_.wait(
			"tuner: wait until a busy poll suspended",
			[this] { return suspend_calls_ || busy_over_; }, false);
		tune_to(0, false, false);
		sched_.wait(
			"tuner: wait until a busy poll came after it",
			[this] { return bp_after_off_; }, false);
		tune_to(0, false, true);
		break;
	}
	tuner_done_ = true;
}

// One retune: ocq_engine_tune() of a moderation the host has the ops for.
void World::tune_to(unsigned int defer_polls, bool dim, bool suspend)
{
	struct sim_tune t = {defer_polls, dim, suspend};
	int word = sim_tune_word(&t);
	int ret;

	tune_words_.push_back(word);
	tune_started_++;
	sched_.note("tuner: ocq_engine_tune(" + tune_name(word) + ")");
	ret = sim_engine_tune(engine_, defer_polls, dim, suspend);
	if (ret)
		fail(fmt("tune: ocq_engine_tune() returned %ld for a moderation the host has the "
			 "ops for",
			 ret));
	mm_release(OCQ_SIM_CH_TUNE);
	tune_done_++;
}

// Every completion dispatched, nothing pending, queued or running.
bool World::tuner_quiet() const
{
	for (const Unit &u : units_)
		if (u.queued || u.running)
			return false;
	return (int)dispatched_.size() >= pushes_ && producer_done_ && !prov_->pending() &&
	       !prov_->in_flight() && !timer_pending_;
}

std::string World::tune_name(int word) const
{
	struct sim_tune t;
	std::string n;

	sim_tune_decode(word, &t);
	n = t.defer_polls ? "defer_polls " + std::to_string(t.defer_polls) : "no deferral";
	if (t.dim)
		n += " with IB_OCQ_DEFER_DIM";
	return n + (t.suspend ? ", suspension" : ", no suspension");
}

// The deferral's empty runs the CQ unit's holders apply now (a retune's).
long World::defer_polls_now() const
{
	struct sim_tune t;

	if (!mi_.tune)
		return (long)mi_.defer;
	sim_tune_decode(sim_engine_tune_word(engine_, 1), &t);
	return (long)t.defer_polls;
}

// IB_OCQ_DEFER_DIM as the CQ unit's holders apply it now (a retune's).
bool World::dim_now() const
{
	struct sim_tune t;

	if (!mi_.tune)
		return mi_.defer_dim;
	sim_tune_decode(sim_engine_tune_word(engine_, 1), &t);
	return t.dim;
}

/*
 * A holder of the CQ unit applied a retune: e->tune_now changed, seen at
 * the next scheduling point, the first after the pass began, so that the
 * running context is the holder.  If the retune changed the deferral or
 * IB_OCQ_DEFER_DIM, the engine starts the deferral's state afresh there
 * (ocq_tune_apply()), and so does the world's: the empty runs and the
 * timer's fires in a row, the IB_OCQ_DEFER_DIM threshold's chain and its
 * expected move.
 */
void World::tune_applied()
{
	int word = sim_engine_tune_word(engine_, 1);
	struct sim_tune t, was;

	sim_tune_decode(word, &t);
	sim_tune_decode(tune_now_, &was);
	tune_now_ = word;
	tune_applies_++;
	sched_.note("applied the retune to " + tune_name(word));
	if (!in_cq_run() && !in_busy_poll() && !tune_failed_) {
		tune_failed_ = true;
		fail("tune: " + sched_.name(sched_.self()) +
		     " applied a retune outside a hold of the CQ unit");
	}
	tune_floor_check();
	if (t.defer_polls != was.defer_polls || t.dim != was.dim) {
		idle_runs_ = 0;
		idle_fires_ = 0;
		dim_chain_ = false;
		dim_paid_ = false;
		dim_expect_ = -1;
		last_min_ = 2;
	}
	/* tune-suspend: the timer's run that ends a suspension, retuned off */
	if (in_cq_run() && run_timer_ && hold_suspend_ && !t.suspend)
		tune_suspend_ended_++;
}

/*
 * A hold of the CQ unit (a run, a busy poll) that began after a retune
 * returned polls with that retune's moderation, or a later one's: its
 * first pass begins after the retune's kick, and applies the word it reads
 * (e->tune_now: the word the holders applied last).  Checked at every
 * poll of a hold, and where a hold applies a retune.
 */
void World::tune_floor_check()
{
	int floor, now;

	if (!mi_.tune || tune_failed_ || (!in_cq_run() && !in_busy_poll()))
		return;
	floor = in_busy_poll() ? bp_floor_ : run_floor_;
	now = sim_engine_tune_word(engine_, 1);
	if (tune_staged_since(floor, now))
		return;
	tune_failed_ = true;
	fail("tune: " + std::string(in_busy_poll() ? "a busy poll" : "a CQ run") +
	     " that began after the retune to " + tune_name(tune_words_[floor]) +
	     " returned polls the CQ with " + tune_name(now) + ", the moderation of before it");
}

// @word is that of retune @floor (0: the engine's first) or of a later one.
bool World::tune_staged_since(int floor, int word) const
{
	for (size_t j = (size_t)floor; j < tune_words_.size(); j++)
		if (tune_words_[j] == word)
			return true;
	return false;
}

/*
 * tune-suspend: from a retune's staging on, busy polls are refused
 * (-EOPNOTSUPP) or allowed as it says: a busy poll that began after
 * retune @floor returned (0: none) goes by its suspension, or by a later
 * retune's (which may be under way).  Checked as it returns @ret.
 */
void World::tune_busy(int ret, int floor)
{
	bool may_refuse = false, may_allow = false;
	struct sim_tune t;
	std::string since =
		floor ? "after the retune to " + tune_name(tune_words_[floor]) + " returned" :
			"before any retune returned";

	for (size_t j = (size_t)floor; j < tune_words_.size(); j++) {
		sim_tune_decode(tune_words_[j], &t);
		may_refuse |= !t.suspend;
		may_allow |= t.suspend;
	}
	if (ret == -EOPNOTSUPP && !may_refuse)
		fail("tune: a busy poll was refused (-EOPNOTSUPP) " + since);
	else if (ret != -EOPNOTSUPP && !may_allow)
		fail(fmt("tune: a busy poll returned %ld ", ret) + since +
		     ": it must be refused (-EOPNOTSUPP)");
}

// The host's teardown once the ULP has seen all its completions.
void World::teardown()
{
	torn_ = true; /* started once the ULP saw every completion */
	torn_deferred_ = timer_pending_;
	mm_acquire(MM_CH_ULP); /* the ULP's own locking */
	sim_engine_disable(engine_);
	/*
	 * As ib_ocq_destroy(): every unit, the CQ unit first, then the
	 * deferred re-arm's timer (the run that deferred started it before
	 * the CQ unit's cancel returned).  Only where the engine has a timer:
	 * without a deferred re-arm hrtimer_cancel() has nothing to do.  A
	 * domain that took the CQ unit's gate before the disable, the timer,
	 * or a handler whose kick read the gate before the disable may queue
	 * a run meanwhile: it begins after the disable and touches nothing
	 * but its gate.  The provider's destroy waits for the handlers under
	 * way; then every unit is cancelled once more, before the free.
	 */
	if (mi_.defer && spec_.timer_cancel == 3)
		timer_cancel();
	for (unsigned int u = 0; u < units_.size(); u++)
		cancel(u, false);
	if (mi_.defer && spec_.timer_cancel == 0)
		timer_cancel();
	prov_->destroy();
	for (unsigned int u = 0; !spec_.no_final_cancel && u < units_.size(); u++)
		cancel(u, true);
	if (mi_.defer && spec_.timer_cancel == 1)
		timer_cancel();
	sim_engine_stats(engine_, &stats_);
	stats_taken_ = true;
	sim_engine_destroy(engine_);
	step("kfree(engine)");
	sim_engine_free(engine_);
	freed_ = true;
}

// cancel_work_sync(); with @final, a later schedule() is a bug
void World::cancel(unsigned int unit, bool final)
{
	Unit &u = units_[unit];

	step("cancel_work_sync");
	u.cancelling = true;
	u.queued = false;
	sched_.wait(
		"cancel_work_sync: wait", [&u] { return !u.running; }, false);
	mm_acquire(MM_CH_DONE + unit);
	/* the pool's lock: a later queue_work() sees what came before */
	mm_release(unit);
	u.cancelling = false;
	u.cancelled = final;
}

// hrtimer_cancel(): waits for a running callback, removes a pending timer;
// a later hrtimer_start() is a bug (defer()).
void World::timer_cancel()
{
	step("hrtimer_cancel");
	sched_.wait(
		"hrtimer_cancel: wait for the callback", [this] { return !timer_running_; }, false);
	mm_acquire(MM_CH_TIMER_DONE);
	timer_pending_ = false;
	timer_cancelled_ = true;
}

// --- the ULP ---

// The completion a work completion stands for, or NULL if it is none the
// HCA added (a slot never filled: its wr_cqe is NULL or stale).  With
// CaseSpec::wrid, by wr_id: a slot never filled (wr_id 0) then reads as
// the completion posted with wr_id 0.
const World::Completion *World::completion_of(const struct ib_wc *wc) const
{
	for (const Completion &c : comps_)
		if (spec_.wrid ? wc->wr_id == c.wr_id : wc->wr_cqe == &c.cqe)
			return &c;
	return nullptr;
}

// Whether the calling context is inside a run of the CQ unit.
bool World::in_cq_run() const
{
	const Unit &u = units_[0];

	return u.running && (sched_.self() == u.worker || sched_.self() == u.worker2);
}

/*
 * The completion's contents as the poller wrote them into its batch: a
 * relaxed store per completion by the context that polled it, which every
 * later reader (a flow domain, a worker, the commit unit) must see through
 * the engine's own publication (weak memory; see mm.cpp).
 */
void World::polled(const struct ib_wc *wc, int got)
{
	inline_hol_ = 0;
	note_hold();
	tune_floor_check();
	if (in_busy_poll()) {
		/* a busy poll begins: what the last holder left (check_handoff()) */
		if (handoff_ && !bp_polls_)
			check_handoff();
		bp_found_ += bp_last_got_;
		bp_last_got_ = got > 0 ? got : 0;
		bp_polls_++;
		bp_failed_ |= got < 0;
	}
	if (got > 0)
		taken_ += got;
	if (mi_.busy && got > 0)
		idle_fires_ = 0;
	/* the count a deferral check after this poll uses (dim_deferred()) */
	if (dimmer_ && in_cq_run())
		dim_count_ = (long)sim_engine_defer_got(engine_) + (got > 0 ? got : 0);
	if (deferrer_ && in_cq_run()) {
		run_found_ += last_got_;
		last_got_ = got > 0 ? got : 0;
		seg_polls_++;
		if (got > 0) {
			seg_found_ = true;
			idle_fires_ = 0;
		}
	}
	for (int i = 0; i < got; i++)
		if (const Completion *c = completion_of(&wc[i]))
			ocq_mm_store(&payload_[c->seq], sizeof(int), 1, OCQ_MM_RELAXED);
	/*
	 * What the run stores of its poll (wc_pos, wc_cnt: plain, the run's
	 * own), seen by the model: a relaxed store after the poll.
	 */
	if (handoff_) {
		ocq_mm_store(&poll_mark_, sizeof(int), ++polls_seen_, OCQ_MM_RELAXED);
		last_poller_ = sched_.self();
	}
}

/*
 * A CQ run begins: it must see what the previous run stored after its last
 * poll, whichever context ran that one.  The host gives no order between
 * them here (as when a run of the unit is taken by another CPU); only the
 * gate does: the fully ordered cmpxchg that dropped OCQ_RUN, read by the
 * kick that scheduled this run.  Likewise a busy poll, at its first poll
 * (the CQ's lock of that poll orders nothing: the mark is stored after
 * the last holder's last verb): the gate's cmpxchg that took the unit
 * reads the release of OCQ_RUN, or the fully ordered fetch_or that held
 * it for the timer.
 */
void World::check_handoff()
{
	long seen = (long)ocq_mm_load(&poll_mark_, sizeof(int), OCQ_MM_RELAXED,
				      "host: the run's own state");

	if (last_poller_ >= 0 && last_poller_ != sched_.self())
		hops_++;

	if (seen != polls_seen_ && in_busy_poll())
		fail(fmt("stale run state: a busy poll sees the state of poll %ld, the "
			 "last hold of the CQ unit left that of poll %ld",
			 seen, (long)polls_seen_));
	else if (seen != polls_seen_)
		fail(fmt("stale run state: a CQ run sees the state of poll %ld, the "
			 "previous run left that of poll %ld",
			 seen, (long)polls_seen_));
}

/*
 * The promise a ULP builds on: the done() calls of one flow happen one
 * after another, so its per-flow state needs no lock.  Each done() reads
 * that state (a relaxed load: weak memory may return an older store) and
 * must find what the done() before it wrote, whichever context ran it (a
 * domain, or the CQ run for a flush behind a flow_key's barrier).
 */
void World::check_flow_state(const Completion *c)
{
	int d = c->flow;
	long seen = (long)ocq_mm_load(&flow_state_[d], sizeof(int), OCQ_MM_RELAXED,
				      "ulp: its flow's state");

	if (seen != flow_last_[d])
		fail(fmt("unordered done(): done() of seq %ld does not see what done() of "
			 "seq %ld, before it in its flow, wrote",
			 c->seq, flow_last_[d] - 1));
	flow_last_[d] = c->seq + 1;
	ocq_mm_store(&flow_state_[d], sizeof(int), c->seq + 1, OCQ_MM_RELAXED);
}

// Whether the running context sees what the poller wrote of @c.
bool World::sees_payload(const Completion *c)
{
	return ocq_mm_load(&payload_[c->seq], sizeof(int), OCQ_MM_RELAXED,
			   "ulp: read the completion") == 1;
}

void World::done(struct ib_wc *wc)
{
	const Completion *c = completion_of(wc);
	int d;

	step("done()");
	mm_plain_read(wc, "done()");
	races();
	if (!c) {
		fail("claimed unproduced slot: done() of a slot the CQ run never "
		     "filled");
		return;
	}
	d = c->flow;
	if (in_done_[d]++)
		fail(fmt("concurrent done(): done() of seq %ld while another done() of its "
			 "domain runs",
			 c->seq));
	if (torn_)
		fail(fmt("done() after teardown: done() of seq %ld after teardown began", c->seq));
	if (++done_count_[c->seq] > 1)
		fail(fmt("dispatched twice: seq %ld", c->seq));
	if (c->seq <= last_[d])
		fail(fmt("out of order: seq %ld after seq %ld", c->seq, last_[d]));
	if (paused_in_done_ && !resumed_)
		fail(fmt("done() while paused: done() of seq %ld after done() paused "
			 "the engine, before the resume",
			 c->seq));
	if (!sees_payload(c))
		fail(fmt("stale completion: done() of seq %ld reads its completion "
			 "before the CQ run's copy of it is visible",
			 c->seq));
	if (mi_.engine == SIM_PARALLEL && processed_[c->seq] != 1)
		fail(fmt("done() before process(): done() of seq %ld before its process()",
			 c->seq));
	else if (mi_.engine == SIM_PARALLEL &&
		 ocq_mm_load(&result_[c->seq], sizeof(int), OCQ_MM_RELAXED,
			     "ulp: read what process() wrote") != 1)
		fail(fmt("done() before process(): done() of seq %ld does not see "
			 "what its process() wrote",
			 c->seq));
	check_flow_state(c);
	if (mi_.wait_next == 3)
		reuse_sleep(c->seq);
	last_[d] = c->seq;
	dispatched_.push_back(c->seq);
	mm_release(MM_CH_ULP);
	/* pause and resume: "any context, including done()" */
	if (mi_.ulp == 3 && c->seq == 0) {
		sim_engine_pause(engine_);
		paused_in_done_ = true;
	}
	if (mi_.ulp == 4 && c->seq == 0)
		sim_engine_resume(engine_); /* "arm now" from done() */
	/*
	 * Head-of-line: while a completion waits in the CQ with nothing to
	 * fetch it (unarmed, no event pending, no CQ run queued or running),
	 * a busy domain (a flow's, or parallel mode's commit step) makes at
	 * most IB_OCQ_HOL_DONES done() calls.
	 */
	if (mi_.wait_next == 2) {
		const Unit &cqu = units_[0];

		if (prov_->depth() && !prov_->armed() && !prov_->pending() && !prov_->in_flight() &&
		    !cqu.queued && !cqu.running)
			hol_++;
		else
			hol_ = 0;
		hol_waits_ += hol_ > 0;
		if (hol_ > sim_hol_dones())
			fail(fmt(mi_.engine == SIM_PARALLEL ?
					 "head-of-line: %ld done() calls of the commit step "
					 "while a completion waits in the unarmed CQ" :
					 "head-of-line: %ld done() calls of one flow while a "
					 "completion of another waits in the unarmed CQ",
				 hol_));
		/*
		 * The CQ run's own done() calls (flow mode's inline
		 * dispatch): since its last poll, at most IB_OCQ_HOL_DONES
		 * while a completion waits in the CQ.
		 */
		if (in_cq_run() && prov_->depth() && ++inline_hol_ > sim_hol_dones())
			fail(fmt("head-of-line: %ld done() calls by the CQ run since its "
				 "last poll while a completion waits in the CQ",
				 inline_hol_));
	}
	sched_.note(fmt("ulp: done(seq %ld)", c->seq));
	step("done() returns");
	in_done_[d]--;
}

/*
 * CaseSpec::wrid: &ib_ocq_attr.dispatch, the ULP's handler for every
 * completion.  It finds the completion by its wr_id, which must be one the
 * ULP posted (a slot never filled reads as wr_id 0, completion_of()), with
 * the HCA's status (a flush too), and is then what done() is: the same
 * checks, in the same context.
 */
void World::dispatch(struct ib_wc *wc)
{
	const Completion *c = completion_of(wc);

	if (in_cq_run())
		cq_dispatches_++;
	else
		domain_dispatches_++;
	if (!c) {
		fail(fmt("dispatch: wr_id %#lx is none the ULP posted", (long)wc->wr_id));
		return;
	}
	if (wc->status != c->status)
		fail(fmt("dispatch: seq %ld with status %ld, the HCA returned %ld", c->seq,
			 (long)wc->status, (long)c->status));
	done(wc);
}

/*
 * CaseSpec::wrid: done() of a trap: the engine took a wr_id for an ib_cqe
 * and called through it.  A kernel would jump to whatever the ULP's wr_id
 * points at.
 */
void World::trap(const struct ib_wc *wc)
{
	for (const Completion &c : comps_)
		if (wc->wr_cqe == &c.trap)
			fail(fmt("dispatch: done() called for a completion posted with a wr_id "
				 "(seq %ld)",
				 c.seq));
}

/*
 * flow-barrier: flow_key() is called for successful completions only
 * (with &ib_ocq_attr.dispatch, whatever their wr_id), and for each of them
 * (check_terminal()).
 */
void World::keyed(const struct ib_wc *wc)
{
	const Completion *c = completion_of(wc);

	if (!c)
		return;
	keyed_[c->seq]++;
	if (wc->status != IB_WC_SUCCESS)
		fail(fmt("flow_key: called for seq %ld, an unsuccessful completion", c->seq));
}

void World::process(struct ib_wc *wc)
{
	const Completion *c = completion_of(wc);

	step("process()");
	mm_plain_read(wc, "process()");
	races();
	if (!c) {
		fail("claimed unproduced slot: process() of a reorder slot the CQ "
		     "run never filled");
		return;
	}
	if (done_count_[c->seq])
		fail(fmt("claimed unproduced slot: process() of seq %ld, completed "
			 "already: a reused slot the CQ run did not fill again",
			 c->seq));
	else if (++processed_[c->seq] > 1)
		fail(fmt("processed twice: seq %ld", c->seq));
	if (!sees_payload(c))
		fail(fmt("stale completion: process() of seq %ld reads its "
			 "completion before the CQ run's copy of it is visible",
			 c->seq));
	ocq_mm_store(&result_[c->seq], sizeof(int), 1, OCQ_MM_RELAXED);
	/*
	 * process() of seq 0 needs seq 1 processed first (a ULP whose request
	 * waits for a later reply): the engine must run seq 1 on another
	 * worker.
	 */
	if (mi_.wait_next == 1 && c->seq == 0 && pushes_ > 1)
		sched_.wait(
			"process(seq 0) waits for process(seq 1)",
			[this] { return processed_[1] > 0; }, false);
	/*
	 * parallel-publish: process() of seq 0 returns once the CQ run made
	 * seq 1 claimable, so that its worker, still in its pass, may claim
	 * seq 1 before any kick for it
	 */
	if (mi_.wait_next == 9 && c->seq == 0)
		sched_.wait(
			"process(seq 0) waits until seq 1 is produced",
			[this] {
				long claimed, produced;

				sim_engine_claims(engine_, &claimed, &produced);
				return produced > 1;
			},
			false);
	step("process() returns");
}

// Seed 004, pattern 1, with the cure it names: a spinlock around the loop.
void World::pattern1()
{
	struct ib_wc wc;
	bool any = false;

	sched_.wait(
		"spin_lock", [this] { return !locked_; }, false);
	locked_ = true;
	prov_->notify(IB_CQ_NEXT_COMP);
	while (prov_->poll(1, &wc) > 0) {
		polled(&wc, 1);
		any = true;
		done(&wc);
	}
	if (!any)
		empty_handlers_++;
	step("spin_unlock");
	locked_ = false;
}

// --- the terminal state ---

Outcome World::run()
{
	Outcome o;
	struct sim_stats s = {};
	End end;

	if (!mi_.pattern1 && !engine_) {
		o.failures = failures_;
		return o;
	}
	g_world = this;
	end = sched_.run();
	check_terminal(end);
	if (engine_ && !freed_) {
		sim_engine_stats(engine_, &s);
		if (stats_taken_)
			s = stats_;
	} else {
		s = stats_;
	}
	if (engine_ && end == End::Terminal && failures_.empty())
		check_stats(s);
	o.state = state_hash(s);
	sched_.finish();
	if (engine_ && !freed_) {
		sim_engine_destroy(engine_);
		sim_engine_free(engine_);
	}
	if (live_allocations())
		fail(fmt("leak: %ld allocations leaked", live_allocations()));
	o.failures = failures_;
	o.handler_calls = handler_calls_;
	o.empty_handlers = empty_handlers_;
	o.runs = (long)s.runs;
	o.empty_runs = (long)s.empty_runs;
	o.stalls = (long)s.stalls;
	o.parks = (long)s.parks;
	o.inlined = (long)s.inlined;
	for (const Unit &u : units_)
		o.yields += u.requeues;
	o.rescues = (long)s.rescues;
	o.stale_reads = mm_stale_reads();
	o.hops = hops_;
	o.reuses = mm_reuses();
	o.defers = (long)s.defers;
	o.rearms = rearms_;
	o.deferred_pushes = deferred_pushes_;
	o.torn_deferred = torn_deferred_;
	o.paused_deferred = paused_deferred_;
	o.short_arms = short_arms_;
	o.min_grew = min_grew_;
	o.lease_resumes = lease_resumes_;
	o.suspends = suspend_calls_;
	o.busy_from_timer = busy_from_timer_;
	o.suspensions_ended = suspensions_ended_;
	o.busy_ebusy = busy_ebusy_;
	o.busy_backoffs = busy_backoffs_;
	o.busy_spent = busy_spent_;
	o.min_back = min_back_;
	o.hol_waits = hol_waits_;
	o.held = prov_->held();
	o.quiet_reports = prov_->quiet_reports();
	o.cq_dispatches = cq_dispatches_;
	o.domain_dispatches = domain_dispatches_;
	if (mi_.engine == SIM_FLOW)
		o.barrier_dispatches = std::max(cq_dispatches_ - (long)s.inlined, 0L);
	o.tune_applies = tune_applies_;
	o.tune_defers = tune_defers_;
	o.tune_rearms = tune_rearms_;
	o.tune_refused = tune_refused_;
	o.tune_took = tune_took_;
	o.tune_suspend_ended = tune_suspend_ended_;
	o.tune_single_defers = tune_single_defers_;
	o.tune_short_arms = tune_short_arms_;
	return o;
}

void World::check_terminal(End end)
{
	bool pending = false;

	if (end == End::StepCap) {
		fail("livelock: no end within the step cap");
		return;
	}
	if (end == End::Diverged) {
		fail("diverged: the schedule does not fit this case (replay diverged)");
		return;
	}
	for (int c : sched_.stuck())
		fail("deadlock: " + sched_.name(c) + " blocked in " + sched_.stuck_what(c));
	/*
	 * Deferred re-arm: the timer runs until defer_polls runs in a row
	 * found nothing, and the last of them arms.  A timer that would fire
	 * once more is a CQ never armed; an arm that never came keeps the
	 * HCA's last completion out.
	 */
	if (timer_pending_)
		fail(fmt("lost wakeup: the CQ is never armed: the deferred re-arm's timer "
			 "fired %ld times in a row with nothing found and is started again "
			 "(defer_polls %ld)",
			 idle_fires_, (long)(mi_.tune == 1 ? OCQ_SIM_TUNE_POLLS : mi_.defer)));
	else if (mi_.defer && !producer_done_ && !mi_.wait_next)
		fail(fmt("lost wakeup: no arm was tried after the last deferral of the "
			 "re-arm (%ld timer starts), and nothing is left to run: the HCA "
			 "still waits to add seq %ld",
			 defer_calls_, (long)pushes_ - 1));
	else if (!producer_done_ && mi_.wait_next >= 5 && mi_.wait_next <= 7)
		fail(fmt("lost wakeup: the CQ was not armed again with every completion "
			 "dispatched, and nothing is left to run: the HCA still waits to add "
			 "seq %ld",
			 (long)dispatched_.size()));
	for (int i = 0; i < pushes_; i++)
		if (done_count_[i] != 1)
			fail(fmt("lost wakeup: seq %ld dispatched %ld times", i, done_count_[i]));
	for (int i = 0; mi_.wait_next == 4 && i < pushes_; i++)
		if (comps_[i].status == IB_WC_SUCCESS && !keyed_[i])
			fail(fmt(comps_[i].wr_id || !spec_.wrid ?
					 "flow_key: never called for seq %ld, a successful "
					 "completion" :
					 "flow_key: never called for seq %ld, a successful "
					 "completion posted with wr_id 0",
				 i));
	if (freed_)
		return; // torn down once every completion was seen; done() checks after
	/* the last arm's move of the IB_OCQ_DEFER_DIM threshold, read nowhere else */
	if (dim_expect_ >= 0 && dim_now())
		dim_threshold((long)sim_engine_defer_min(engine_));
	/*
	 * The retunes: the last one staged was applied, as its kick makes
	 * sure (a run of an idle CQ takes it on).
	 */
	if (mi_.tune && engine_ && sim_engine_tune_word(engine_, 0) != tune_now_)
		fail("tune: the last retune (" + tune_name(sim_engine_tune_word(engine_, 0)) +
		     ") was never applied: the CQ unit's holders still run with " +
		     tune_name(tune_now_) + ", and nothing will start another");
	/*
	 * Only the perpetual-positive model leaves a run queued: the world
	 * stops following its requeues once every completion was dispatched
	 * and the unit ran run_cap_ times (work_ready()).  That run would poll
	 * again, so the CQ need not be armed, but it must be empty.
	 */
	for (const Unit &u : units_)
		pending |= u.queued;
	if (pending && !perpetual_)
		fail("lost wakeup: a run is queued that no worker will take");
	/*
	 * A unit's OCQ_RUN with no run of it queued (or running: none runs at
	 * the end) and, for the CQ unit, not held for the timer: every later
	 * kick of it would be lost (a busy poll that kept the CQ unit).
	 */
	for (unsigned int u = 0; engine_ && u < units_.size(); u++) {
		int gate = sim_engine_gate(engine_, u);

		if ((gate & SIM_GATE_RUN) && !(gate & SIM_GATE_TIMER) && !units_[u].queued)
			fail(fmt("lost wakeup: unit %ld holds OCQ_RUN with no run of it queued: "
				 "every later kick of it is lost",
				 u));
	}
	/*
	 * The ULP's last act is a resume wherever it pauses or postpones, so
	 * a paused engine at the end lost that resume: nothing will poll or
	 * arm again.
	 */
	if (engine_ && sim_engine_paused(engine_))
		fail(fmt(last_resume_events_ >= 0 && handler_calls_ > last_resume_events_ ?
				 "lost wakeup: ended paused by a callback after the ULP's "
				 "last resume (%ld completion(s) in the CQ, %ld dispatched)" :
				 "lost wakeup: ended paused after the ULP's last resume "
				 "(%ld completion(s) in the CQ, %ld dispatched)",
			 (long)prov_->depth(), (long)dispatched_.size()));
	else if (prov_->depth())
		fail(fmt("lost wakeup: %ld completion(s) left in the CQ and "
			 "nothing will look at them",
			 (long)prov_->depth()));
	else if (!prov_->armed() && !pending)
		fail("lost wakeup: the CQ was left unarmed");
}

void World::check_stats(const struct sim_stats &s)
{
	long dispatched = (long)dispatched_.size();

	if ((long)s.completions != dispatched)
		fail(fmt("stats: completions %ld != done() calls %ld", (long)s.completions,
			 dispatched));
	if ((long)s.events != engine_events_)
		fail(fmt("stats: events %ld != handler calls %ld", (long)s.events, engine_events_));
	if ((long)s.polls != prov_->polls())
		fail(fmt("stats: polls %ld != ib_poll_cq() calls %ld", (long)s.polls,
			 prov_->polls()));
	if ((long)s.arms != prov_->notifies())
		fail(fmt("stats: arms %ld != ib_req_notify_cq() calls %ld", (long)s.arms,
			 prov_->notifies()));
	if (dispatched && !s.runs)
		fail("stats: completions dispatched without a run");
	if (s.empty_runs > s.runs)
		fail("stats: more empty runs than runs");
	long requeues = 0, domain_requeues = 0;

	for (size_t i = 0; i < units_.size(); i++) {
		requeues += units_[i].requeues;
		if (i)
			domain_requeues += units_[i].requeues;
	}
	/*
	 * Every run that requeued itself counts a yield.  A requeue while the
	 * host's cancel of the unit waits for the run is counted by the engine
	 * and refused by the workqueue: at most one per cancel (the CQ unit is
	 * cancelled twice).
	 */
	if ((long)s.yields < requeues ||
	    (long)s.yields > requeues + (torn_ ? (long)units_.size() + 1 : 0))
		fail(fmt("stats: yields %ld != runs that requeued themselves "
			 "%ld (the CQ run's: %ld)",
			 (long)s.yields, requeues, requeues - domain_requeues));
	if ((long)s.max_batch > pushes_)
		fail("stats: max_batch above the completions pushed");
	if (s.rescues > s.completions || (s.rescues && !watchdog_ctx_))
		fail(fmt("stats: %ld rescues", (long)s.rescues));
	if ((long)s.defers != defer_calls_)
		fail(fmt("stats: defers %ld != ops->defer() calls %ld", (long)s.defers,
			 defer_calls_));
	/*
	 * CaseSpec::wrid, flow mode: the CQ run dispatches inline (counted) or,
	 * with a flow_key, an unsuccessful completion behind the barrier
	 */
	if (spec_.wrid && mi_.engine == SIM_FLOW &&
	    ((long)s.inlined > cq_dispatches_ ||
	     (mi_.wait_next != 4 && (long)s.inlined != cq_dispatches_)))
		fail(fmt("stats: inlined %ld, but the CQ run called dispatch() %ld times",
			 (long)s.inlined, cq_dispatches_));
	if ((long)s.busy_polls != busy_took_ || (long)s.suspends != suspend_calls_ ||
	    (long)s.contended != busy_ebusy_)
		fail(fmt("stats: busy_polls, suspends, contended %ld, %ld, %ld: not what the "
			 "busy polls did",
			 (long)s.busy_polls, (long)s.suspends, (long)s.contended));
}

uint64_t World::state_hash(const struct sim_stats &s) const
{
	std::string k;

	for (int seq : dispatched_)
		k += std::to_string(seq) + ",";
	k += "|" + std::to_string(prov_->depth()) + "," + std::to_string(prov_->armed()) + "," +
	     std::to_string(prov_->pending()) + "," + std::to_string(freed_) + "," +
	     std::to_string(timer_pending_);
	if (engine_ && !freed_)
		for (unsigned int i = 0; i < units_.size(); i++)
			k += "|" + std::to_string(sim_engine_gate(engine_, i));
	if (mi_.tune)
		k += "|" + std::to_string(tune_now_);
	for (u64 v : {s.events, s.runs, s.empty_runs, s.polls, s.arms, s.repolls, s.yields,
		      s.pauses, s.rescues, s.domain_runs, s.defers})
		k += ";" + std::to_string(v);
	return std::hash<std::string>()(k);
}

} // namespace ocq_sim

// --- the hooks of the shim headers ---

using ocq_sim::Scheduler;

#define SMP_CACHE_LINE 64 /* SMP_CACHE_BYTES of the shims */

int ocq_sim_bug;

void ocq_sim_point(const char *what)
{
	if (Scheduler *s = Scheduler::current()) {
		if (ocq_sim::g_world)
			ocq_sim::g_world->invariants();
		s->point(what);
	}
}

void ocq_sim_spin(const char *what)
{
	Scheduler *s = Scheduler::current();

	if (!s)
		return;
	/* a spinning CPU sees the latest stores in the end: look again */
	if (ocq_sim::mm_catch_up())
		s->point(what);
	else
		s->spin(what);
}

void ocq_sim_value(long value)
{
	if (ocq_sim::g_world)
		ocq_sim::g_world->observe_gate();
	if (Scheduler *s = Scheduler::current())
		s->value(value);
}

void ocq_sim_warn(const char *file, int line, const char *cond)
{
	const char *base = std::strrchr(file, '/');
	std::string what =
		std::string(base ? base + 1 : file) + ":" + std::to_string(line) + ": " + cond;

	if (ocq_sim::g_world)
		ocq_sim::g_world->warn(what);
}

void ocq_sim_cq_read(const void *)
{
	if (ocq_sim::g_world)
		ocq_sim::g_world->cq_read();
}

void ocq_sim_rcu_read_lock(void)
{
	ocq_sim_point("rcu_read_lock");
	ocq_sim::g_rcu_readers++;
}

void ocq_sim_rcu_read_unlock(void)
{
	ocq_sim_point("rcu_read_unlock");
	ocq_sim::mm_release(ocq_sim::MM_CH_RCU); /* ordered before the grace period's end */
	ocq_sim::g_rcu_readers--;
}

void ocq_sim_synchronize_rcu(void)
{
	if (Scheduler *s = Scheduler::current())
		s->wait(
			"synchronize_rcu", [] { return !ocq_sim::g_rcu_readers; }, false);
	ocq_sim::mm_acquire(ocq_sim::MM_CH_RCU);
	ocq_mm_fence(OCQ_MM_FULL);
}

// Like the slab allocator for these sizes: aligned to the cache line, as
// ____cacheline_aligned_in_smp members require.
void *ocq_sim_alloc(unsigned long size)
{
	size_t n = (size + SMP_CACHE_LINE - 1) / SMP_CACHE_LINE * SMP_CACHE_LINE;
	void *p = std::aligned_alloc(SMP_CACHE_LINE, n ? n : SMP_CACHE_LINE);

	if (p) {
		std::memset(p, 0, n ? n : SMP_CACHE_LINE);
		ocq_sim::g_allocs++;
		ocq_sim::g_sizes[p] = n ? n : SMP_CACHE_LINE;
		ocq_sim::mm_forget(p, n ? n : SMP_CACHE_LINE);
	}
	return p;
}

void ocq_sim_free(const void *p)
{
	if (!p)
		return;
	ocq_sim::g_allocs--;
	ocq_sim::mm_forget(p, ocq_sim::g_sizes[p]);
	ocq_sim::g_sizes.erase(p);
	std::free(const_cast<void *>(p));
}
