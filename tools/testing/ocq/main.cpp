// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// ocq_sim: the model checker of the ordered completion queue engine.
//
// Runs every case (engine mode x provider model, the seeded bugs, the
// pattern-1 bench) through a depth-first search of its schedules with a
// preemption bound, raised one by one from 0 (iterative context bounding:
// the schedules with the fewest preemptions come first), until the bound
// is exhausted or a cap is reached.  Prints one line per case and, last,
// "N passed, N failed".
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "world.h"

using namespace ocq_sim;

namespace {

const char version[] = "ocq_sim 1.0";

// exit codes
enum {
	EXIT_PASS = 0,
	EXIT_FAIL = 1,
	EXIT_USAGE = 2
};

// Engine bugs the checker found that are not fixed yet.  An execution whose
// every failure matches one of them is counted and shown once, with its
// schedule, and the search goes on, so that the rest of the case is still
// checked; --no-known makes them ordinary failures.  Remove an entry once
// the engine is fixed (the summary says when one is no longer seen).
struct KnownBug {
	const char *id;
	const char *mode; // prefix of the mode, "" for any
	const char *provider; // the provider model, "" for any
	const char *failure; // prefix of the failure message
	const char *what;
};

// Engine bugs found by the checker and not fixed yet: a case that meets one
// reports it with its schedule and goes on.  Empty once the engine is clean.
const std::vector<KnownBug> known_bugs = {};

const KnownBug *known_bug(const CaseSpec &spec, const std::string &failure)
{
	for (const KnownBug &k : known_bugs)
		if (spec.mode.rfind(k.mode, 0) == 0 &&
		    (!*k.provider || spec.provider == k.provider) &&
		    failure.rfind(k.failure, 0) == 0)
			return &k;
	return nullptr;
}

struct Options {
	unsigned bound = 3;
	long budget = 4000; // executions per case, all bounds together
	// the deferred re-arm's cases (mode "defer*"), the suspension's
	// ("suspend*") and the retune's ("tune*"): the timer's runs make each
	// execution longer; a budget of their own keeps make sim's time
	long defer_budget = 3000;
	size_t step_cap = 5000; // decisions per execution
	std::string only; // run the cases whose name contains it
	std::string replay;
	bool list = false;
	bool no_known = false; // known engine bugs fail the case
	bool first_fail = false; // stop at the first case that fails
	unsigned jobs = 1; // processes that share the cases out
};

// A known engine bug met by a case: how often, and the first schedule.
struct KnownHit {
	const KnownBug *bug;
	long schedules;
	std::string schedule;
	std::string failure;
};

struct Result {
	std::string failure;
	std::string schedule;
	long schedules = 0;
	size_t terminals = 0;
	double secs = 0;
	bool complete = false; // every schedule within opt.bound was run
	int exhausted = -1; // highest bound whose every schedule was run
	unsigned at_bound = 0; // the bound being explored when it ended
	std::string other; // seeded case: a failure of another property
	std::string other_schedule;
	long handler_calls = 0, empty_handlers = 0, runs = 0, empty_runs = 0;
	long stalls = 0, yields = 0, rescues = 0, parks = 0, stale_reads = 0, hops = 0, reuses = 0;
	long inlined = 0;
	long defers = 0, rearms = 0, deferred_pushes = 0, torn_deferred = 0;
	long paused_deferred = 0, short_arms = 0, min_grew = 0;
	long lease_resumes = 0;
	long suspends = 0, busy_from_timer = 0, suspensions_ended = 0, busy_ebusy = 0;
	long busy_backoffs = 0, busy_spent = 0, min_back = 0, hol_waits = 0;
	long held = 0, quiet_reports = 0;
	long cq_dispatches = 0, domain_dispatches = 0, barrier_dispatches = 0;
	long tune_applies = 0, tune_defers = 0, tune_rearms = 0, tune_refused = 0, tune_took = 0;
	long tune_suspend_ended = 0, tune_single_defers = 0, tune_short_arms = 0;
	std::vector<KnownHit> known;
};

// If the first failure of @o is a known engine bug (the others follow from
// it: a deadlock leaves completions undispatched), count it and return true.
bool known_only(const CaseSpec &spec, const Outcome &o, const std::string &schedule, Result *r)
{
	const KnownBug *k = known_bug(spec, o.failures[0]);

	if (!k)
		return false;
	for (KnownHit &h : r->known)
		if (h.bug == k) {
			h.schedules++;
			return true;
		}
	r->known.push_back({k, 1, schedule, o.failures[0]});
	return true;
}

CaseSpec make_case(const std::string &mode, const std::string &provider,
		   const std::string &name = "")
{
	CaseSpec c;

	c.mode = mode;
	c.provider = provider;
	c.name = name.empty() ? mode + "/" + provider : name;
	return c;
}

CaseSpec bug_case(const char *name, int bug, const char *mode, const char *provider,
		  enum sim_policy policy, const char *property)
{
	CaseSpec c = make_case(mode, provider, std::string("bug/") + name);

	c.bug = bug;
	c.policy = policy;
	c.expect_failure = true;
	c.expect = property;
	return c;
}

// A failure message begins with the property it breaks, then ": ".
bool breaks(const std::string &failure, const std::string &property)
{
	return failure.rfind(property + ":", 0) == 0;
}

std::vector<CaseSpec> all_cases()
{
	std::vector<CaseSpec> v;
	CaseSpec c;

	// every mode x every provider model
	for (int m = 0; matrix_modes[m]; m++)
		for (int p = 0; provider_names[p]; p++)
			v.push_back(make_case(matrix_modes[m], provider_names[p]));
	// the rarer paths, with the providers that matter for them
	for (const char *p : {"iba-weak", "strong", "concurrent"})
		v.push_back(make_case("pause-in-done", p));
	for (const char *p : {"iba-weak", "concurrent"})
		v.push_back(make_case("teardown-flow", p));
	v.push_back(make_case("teardown-parallel", "iba-weak"));
	for (const char *p : {"iba-weak", "strong"})
		v.push_back(make_case("postpone-in-done", p));
	v.push_back(make_case("stall-flow", "iba-weak"));
	v.push_back(make_case("stall-parallel", "iba-weak"));
	c = make_case("strict", "iba-weak", "policy/double-poll");
	c.policy = SIM_ARM_DOUBLE_POLL;
	v.push_back(c);
	c = make_case("strict", "strong", "policy/report-missed-on-strong");
	c.policy = SIM_ARM_REPORT_MISSED;
	v.push_back(c);
	// the claim of a reorder slot with stale reads, two completions
	c = make_case("parallel-claim", "iba-weak", "weak/parallel-claim");
	c.stale_bound = 1;
	c.schedules = 30000; /* a stale claim needs three preemptions */
	v.push_back(c);
	// the park handshake with stale reads, small enough to exhaust
	c = make_case("flow-park", "iba-weak", "weak/flow-park");
	c.stale_bound = 1;
	v.push_back(c);
	// the CQ unit's runs on two contexts: the gate alone hands a run's
	// state to the next
	c = make_case("strict", "iba-weak", "weak/cq-handoff");
	c.stale_bound = 1;
	c.cq_hops = true;
	c.budget = 0;
	v.push_back(c);
	// a ring slot reused while its reader's done() sleeps: the reuse must
	// happen after the read (the race check of mm.cpp)
	for (const char *m : {"reuse-flow", "reuse-parallel"}) {
		c = make_case(m, "iba-weak", std::string("weak/") + m);
		c.stale_bound = 1;
		c.budget = 0;
		c.schedules = 1000; /* 66 completions: slow executions */
		v.push_back(c);
	}
	// a flush behind a flow_key: the CQ run dispatches it once every
	// domain is idle, and its done() must see theirs
	c = make_case("flow-barrier", "iba-weak", "weak/flow-barrier");
	c.stale_bound = 1;
	c.budget = 0;
	v.push_back(c);
	// weak memory: stale reads as the LKMM allows them (mm.cpp)
	for (const char *m : {"strict", "flow", "parallel", "postpone", "teardown", "stall-flow",
			      "stall-flows", "stall-parallel", "parallel-wait"}) {
		c = make_case(m, "iba-weak", std::string("weak/") + m);
		c.stale_bound = 1;
		c.budget = 0; /* the engine's: no yields, a smaller search */
		/* 66 completions: slow executions */
		if (!std::strcmp(m, "stall-parallel"))
			c.schedules = 1200;
		if (!std::strcmp(m, "stall-flow") || !std::strcmp(m, "stall-flows"))
			c.schedules = 3000;
		/*
		 * a claim that reads @produced older than @claimed: bound 2,
		 * 26562 schedules in when it was found
		 */
		if (!std::strcmp(m, "parallel-wait"))
			c.schedules = 40000;
		v.push_back(c);
	}
	// the race check with every fence a point of the schedule and no stale
	// read, so that the search reaches its preemptions within the budget.
	// return-flows: slots a domain gives back while the CQ run, with no
	// room left and no wait, takes them: the CQ run's write of a slot must
	// happen after done()'s read, which only the give-back's release
	// orders when the domain's next fence comes after the CQ run's
	c = make_case("return-flows", "iba-weak", "races/return-flows");
	c.races = true;
	c.budget = 0;
	c.schedules = 6000; /* the race without the release: 3192 in */
	v.push_back(c);
	// parallel-publish: a worker still in its pass claims a slot between
	// the CQ run's store of produced and its kick: its process() must see
	// the CQ run's copy, which only that store's release orders
	c = make_case("parallel-publish", "iba-weak", "races/parallel-publish");
	c.races = true;
	v.push_back(c);
	// the second lease tick while the ULP resumes and pauses again: it may
	// end the first pause, never the second
	v.push_back(make_case("lease-race", "iba-weak"));
	// the pause lease: a pause set after a tick must survive the next
	// tick, with sequentially consistent memory and with stale reads
	for (const char *m : {"lease", "lease-postpone"}) {
		v.push_back(make_case(m, "iba-weak"));
		c = make_case(m, "iba-weak", std::string("weak/") + m);
		c.stale_bound = 1;
		/*
		 * a stale epoch after the CQ run's second pause needs bound 1:
		 * about 51000 schedules in
		 */
		if (!std::strcmp(m, "lease-postpone"))
			c.schedules = 60000;
		v.push_back(c);
	}
	// a provider whose verbs fail now and then
	for (const char *m : {"strict", "flow", "parallel", "postpone", "defer", "defer-flow"})
		v.push_back(make_case(m, "eio"));
	// the deferred re-arm beside the matrix ("defer" is in it): flow mode
	// (strong and cb-return-1 ran the same numbers as iba-weak there, at
	// this budget), parallel mode, a pause and a teardown while a deferral
	// is pending
	for (const char *p : {"iba-weak", "spurious", "concurrent", "lossy", "perpetual-positive"})
		v.push_back(make_case("defer-flow", p));
	v.push_back(make_case("defer-parallel", "iba-weak"));
	for (const char *p : {"iba-weak", "strong", "concurrent"})
		v.push_back(make_case("defer-pause", p));
	for (const char *p : {"iba-weak", "concurrent"})
		v.push_back(make_case("defer-teardown", p));
	v.push_back(make_case("defer-teardown-flow", "iba-weak"));
	// flow-hol's backlog with the deferral: the run that hands a batch to
	// a busy domain parks, so the other flow waits for that domain only
	v.push_back(make_case("defer-flow-hol", "iba-weak"));
	// IB_OCQ_DEFER_DIM: a run with a single completion arms at once
	for (const char *p : {"iba-weak", "strong", "concurrent"})
		v.push_back(make_case("defer-dim", p));
	v.push_back(make_case("defer-dim-flow", "iba-weak"));
	v.push_back(make_case("defer-dim-parallel", "iba-weak"));
	// IB_OCQ_DEFER_DIM: lone completions, more than OCQ_DEFER_DIM_DECAY,
	// never take the threshold below 2; a deferral that paid brings a grown
	// threshold back to 2
	c = make_case("defer-dim-lone", "iba-weak");
	c.schedules = 500; /* one completion at a time: few schedules */
	v.push_back(c);
	v.push_back(make_case("defer-dim-paid", "iba-weak"));
	// suspension: the ULP busy polls (ib_ocq_busy_poll()) while the HCA
	// adds completions, and the timer ends the last suspension; with two
	// flows, and with the deferred re-arm; and with one stale read, the
	// hand-over of the CQ unit to a busy poll (see weak/cq-handoff)
	for (const char *p : {"iba-weak", "strong", "concurrent"})
		v.push_back(make_case("suspend", p));
	/*
	 * a busy poll suspends with the domains busy, so the schedules in
	 * which a later one takes the unit from the timer come late: after
	 * about 10000 with the flow pool
	 */
	c = make_case("suspend-flow", "iba-weak");
	c.schedules = 20000;
	v.push_back(c);
	v.push_back(make_case("suspend-defer", "iba-weak"));
	// a provider whose verbs fail under busy polls: the busy poll hands
	// its hold to a delayed run, as a run backs off
	for (const char *m : {"suspend", "suspend-defer"})
		v.push_back(make_case(m, "eio"));
	// a busy poll that takes a full batch spends its budget, and suspends
	c = make_case("suspend-burst", "iba-weak");
	c.schedules = 1000; /* 18 completions: long executions */
	v.push_back(c);
	// the double poll's arm, made by the timer's runs between busy polls
	c = make_case("suspend", "iba-weak", "policy/double-poll-suspend");
	c.policy = SIM_ARM_DOUBLE_POLL;
	v.push_back(c);
	for (const char *m : {"suspend", "suspend-defer"}) {
		c = make_case(m, "iba-weak", std::string("weak/") + m);
		c.stale_bound = 1;
		v.push_back(c);
	}
	// a running CQ retuned (ocq_engine_tune()): the deferral on and off
	// again, with sequentially consistent memory and with one stale read,
	// and in flow mode; the suspension off and on again under busy polls;
	// IB_OCQ_DEFER_DIM off and on again
	v.push_back(make_case("tune", "iba-weak"));
	c = make_case("tune", "iba-weak", "weak/tune");
	c.stale_bound = 1;
	v.push_back(c);
	v.push_back(make_case("tune-flow", "iba-weak"));
	v.push_back(make_case("tune-suspend", "iba-weak"));
	c = make_case("tune-suspend", "iba-weak", "weak/tune-suspend");
	c.stale_bound = 1;
	/* a busy poll that takes completions after the second retune: late */
	c.schedules = 10000;
	v.push_back(c);
	v.push_back(make_case("tune-dim", "iba-weak"));
	// a process() that waits for a later completion's
	v.push_back(make_case("parallel-wait", "iba-weak"));
	// a backlog on one flow, then a completion of another; its coverage
	// (a completion waiting in the unarmed CQ behind the backlog) needs
	// about 4500 schedules: its own budget, whatever --budget says
	c = make_case("flow-hol", "iba-weak");
	c.schedules = 6500;
	v.push_back(c);
	// the same backlog in parallel mode, behind the commit step; and with
	// the deferred re-arm
	c = make_case("parallel-hol", "iba-weak");
	c.schedules = 3000; /* the backlog is behind the first schedules */
	v.push_back(c);
	c = make_case("defer-parallel-hol", "iba-weak");
	c.schedules = 1500; /* the timer's runs: long executions */
	v.push_back(c);
	// the double poll's arm with a postponed arm, which trusts it
	c = make_case("postpone", "iba-weak", "policy/double-poll-postpone");
	c.policy = SIM_ARM_DOUBLE_POLL;
	c.schedules = 3000;
	v.push_back(c);
	// IB_ARM_SOLICITED: the engine arms solicited-only, and the HCA's
	// completions are a mix, the last solicited: those before it wait in
	// the CQ for it.  The provider's policy, on each shape of
	// REPORT_MISSED; with the double poll; in flow and parallel mode; and
	// with one stale read
	for (const char *p : {"iba-weak", "strong", "cb-return-1", "concurrent", "sol-narrow"}) {
		c = make_case("strict", p, std::string("solicited/") + p);
		c.policy = SIM_ARM_SOLICITED;
		c.solicited = true;
		c.pushes = 5;
		v.push_back(c);
	}
	c = make_case("strict", "iba-weak", "solicited-double-poll/iba-weak");
	c.policy = (enum sim_policy)(SIM_ARM_DOUBLE_POLL | SIM_ARM_SOLICITED);
	c.solicited = true;
	c.pushes = 5;
	v.push_back(c);
	for (const char *m : {"flow", "parallel"}) {
		c = make_case(m, "iba-weak", std::string("solicited-") + m + "/iba-weak");
		c.policy = SIM_ARM_SOLICITED;
		c.solicited = true;
		c.pushes = 5;
		v.push_back(c);
	}
	c = make_case("strict", "iba-weak", "weak/solicited");
	c.policy = SIM_ARM_SOLICITED;
	c.solicited = true;
	c.pushes = 5;
	c.stale_bound = 1;
	c.budget = 0;
	v.push_back(c);
	// &ib_ocq_attr.dispatch: the ULP posts with a wr_id, which the engine
	// must hand to dispatch() untouched, never take for an ib_cqe; one
	// successful completion carries wr_id 0 (a NULL wr_cqe), and
	// flow-barrier's flush its wr_id
	for (const char *m : {"strict", "flow", "parallel", "flow-barrier"}) {
		c = make_case(m, "iba-weak", std::string("wrid/") + m);
		c.wrid = true;
		v.push_back(c);
	}
	// the seeded bugs: each must be caught
	v.push_back(bug_case("poll_then_arm", OCQ_SIM_BUG_poll_then_arm, "strict", "iba-weak",
			     SIM_ARM_REPORT_MISSED, "lost wakeup"));
	v.push_back(bug_case("positive_is_armed", OCQ_SIM_BUG_positive_is_armed, "strict",
			     "iba-weak", SIM_ARM_AUTO, "lost wakeup"));
	v.push_back(bug_case("unserialized", OCQ_SIM_BUG_unserialized, "strict", "concurrent",
			     SIM_ARM_AUTO, "concurrent done()"));
	v.push_back(bug_case("teardown_no_disable", OCQ_SIM_BUG_teardown_no_disable, "teardown",
			     "iba-weak", SIM_ARM_AUTO, "use after free"));
	// negative controls: wrong setups the checker must reject
	c = make_case("strict", "lossy", "control/lossy-without-watchdog");
	c.no_watchdog = true;
	c.expect_failure = true;
	c.expect = "lost wakeup";
	v.push_back(c);
	// teardown without the cancels after the CQ's destroy: a run that a
	// handler queued before it runs on freed memory
	c = make_case("teardown-flow", "iba-weak", "control/teardown-no-final-cancel");
	c.no_final_cancel = true;
	c.expect_failure = true;
	c.expect = "use after free";
	v.push_back(c);
	// the deferred re-arm's timer cancelled before the CQ unit's first
	// cancel, after the final cancels, or not at all
	c = make_case("defer-teardown", "iba-weak", "control/defer-timer-cancelled-first");
	c.timer_cancel = 3;
	c.expect_failure = true;
	c.expect = "use after free";
	v.push_back(c);
	c = make_case("defer-teardown", "iba-weak", "control/defer-timer-cancelled-last");
	c.timer_cancel = 1;
	c.expect_failure = true;
	c.expect = "use after free";
	v.push_back(c);
	c = make_case("defer-teardown", "iba-weak", "control/defer-timer-not-cancelled");
	c.timer_cancel = 2;
	c.expect_failure = true;
	c.expect = "use after free";
	v.push_back(c);
	c = make_case("strict", "iba-weak", "control/strong-policy-on-iba-weak");
	c.policy = SIM_ARM_STRONG;
	c.expect_failure = true;
	c.expect = "lost wakeup";
	v.push_back(c);
	// the cost of seed 004's cure, and the engine on the same load
	v.push_back(make_case("bench-pattern1", "iba-weak", "bench/pattern1-serialized"));
	v.push_back(make_case("bench-engine", "iba-weak", "bench/engine-strict"));
	return v;
}

double since(std::chrono::steady_clock::time_point t0)
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

Result explore(const CaseSpec &spec, const Options &opt)
{
	auto t0 = std::chrono::steady_clock::now();
	std::set<uint64_t> states;
	Result r;
	bool caught = false;
	long budget = spec.schedules ? spec.schedules : opt.budget;

	if ((spec.mode.rfind("defer", 0) == 0 || mode_info(spec.mode)->busy ||
	     mode_info(spec.mode)->tune) &&
	    !spec.schedules)
		budget = opt.defer_budget;

	for (unsigned b = 0; b <= opt.bound && !caught && r.failure.empty(); b++) {
		Explorer ex(b, spec.stale_bound);
		bool spent = false;

		r.at_bound = b;
		do {
			if (r.schedules >= budget) {
				spent = true;
				break;
			}
			World w(spec, ex, opt.step_cap, false);
			Outcome o = w.run();

			r.schedules++;
			states.insert(o.state);
			r.handler_calls += o.handler_calls;
			r.empty_handlers += o.empty_handlers;
			r.runs += o.runs;
			r.empty_runs += o.empty_runs;
			r.stalls += o.stalls;
			r.parks += o.parks;
			r.inlined += o.inlined;
			r.defers += o.defers;
			r.rearms += o.rearms;
			r.deferred_pushes += o.deferred_pushes;
			r.torn_deferred += o.torn_deferred;
			r.paused_deferred += o.paused_deferred;
			r.short_arms += o.short_arms;
			r.min_grew += o.min_grew;
			r.lease_resumes += o.lease_resumes;
			r.suspends += o.suspends;
			r.busy_from_timer += o.busy_from_timer;
			r.suspensions_ended += o.suspensions_ended;
			r.busy_ebusy += o.busy_ebusy;
			r.busy_backoffs += o.busy_backoffs;
			r.busy_spent += o.busy_spent;
			r.min_back += o.min_back;
			r.hol_waits += o.hol_waits;
			r.held += o.held;
			r.quiet_reports += o.quiet_reports;
			r.cq_dispatches += o.cq_dispatches;
			r.domain_dispatches += o.domain_dispatches;
			r.barrier_dispatches += o.barrier_dispatches;
			r.tune_applies += o.tune_applies;
			r.tune_defers += o.tune_defers;
			r.tune_rearms += o.tune_rearms;
			r.tune_refused += o.tune_refused;
			r.tune_took += o.tune_took;
			r.tune_suspend_ended += o.tune_suspend_ended;
			r.tune_single_defers += o.tune_single_defers;
			r.tune_short_arms += o.tune_short_arms;
			r.hops += o.hops;
			r.reuses += o.reuses;
			r.yields += o.yields;
			r.rescues += o.rescues;
			r.stale_reads += o.stale_reads;
			if (o.failures.empty())
				continue;
			std::string sched = spec.name + "@" + encode_schedule(w.decisions());

			if (spec.expect_failure) {
				// caught only for the property the bug breaks
				for (const std::string &f : o.failures)
					if (breaks(f, spec.expect)) {
						r.failure = f;
						r.schedule = sched;
						caught = true;
						break;
					}
				if (!caught && r.other.empty()) {
					r.other = o.failures[0];
					r.other_schedule = sched;
				}
				if (caught)
					break;
				continue;
			}
			if (opt.no_known || !known_only(spec, o, sched, &r)) {
				r.failure = o.failures[0];
				r.schedule = sched;
				break;
			}
		} while (ex.next());
		if (spent)
			break;
		if (r.failure.empty())
			r.exhausted = (int)b;
	}
	r.complete = r.exhausted == (int)opt.bound;
	r.terminals = states.size();
	r.secs = since(t0);
	// coverage: the path a case exists for must have been taken (within
	// the default bound; a smaller one may not reach it)
	if (r.failure.empty() && !spec.expect_failure && opt.bound >= 2) {
		if (spec.mode.rfind("stall-", 0) == 0 && !r.stalls)
			r.failure = "coverage: no run ever waited for room";
		if (spec.mode == "strict" && spec.budget < 0 && !r.yields)
			r.failure = "coverage: no run ever spent its budget";
		if ((spec.mode == "flow" || spec.mode == "parallel") && spec.budget < 0 &&
		    spec.provider != "eio" && !r.parks)
			r.failure = "coverage: no run ever parked";
		if ((spec.mode == "flow" || spec.mode == "flow-hol") && spec.provider != "lossy" &&
		    !r.inlined)
			r.failure = "coverage: the CQ run never dispatched a batch itself";
		if (spec.provider == "lossy" && !r.rescues)
			r.failure = "coverage: the watchdog never rescued";
		if (spec.mode.rfind("lease", 0) == 0 && !r.lease_resumes)
			r.failure = "coverage: the lease never ended a pause";
		if (spec.cq_hops && !r.hops)
			r.failure = "coverage: no CQ run changed context";
		if (spec.mode.rfind("reuse-", 0) == 0 && !r.reuses)
			r.failure = "coverage: no ring slot was reused after its read";
		/*
		 * The deferred re-arm: a run deferred, a completion landed while
		 * the timer was pending, an arm succeeded after a deferral
		 * (perpetual-positive never confirms an arm), and the teardown
		 * or the pause came while the timer was pending.
		 */
		if (spec.mode == "defer-dim-lone") {
			if (!r.short_arms)
				r.failure = "coverage: no CQ run armed after a single "
					    "completion (IB_OCQ_DEFER_DIM)";
		} else if (spec.mode.rfind("defer", 0) == 0) {
			if (!r.defers)
				r.failure = "coverage: no CQ run deferred its re-arm";
			else if (!r.deferred_pushes)
				r.failure = "coverage: no completion landed while the re-arm "
					    "was deferred";
			else if (!r.rearms && spec.provider != "perpetual-positive")
				r.failure = "coverage: the CQ was never armed after a deferral";
			else if (mode_info(spec.mode)->teardown && !r.torn_deferred)
				r.failure = "coverage: no teardown began while a deferral was "
					    "pending";
			else if (mode_info(spec.mode)->ulp == 1 && !r.paused_deferred)
				r.failure = "coverage: the ULP never paused while a deferral was "
					    "pending";
			else if (mode_info(spec.mode)->defer_dim && !r.short_arms)
				r.failure = "coverage: no CQ run armed after a single "
					    "completion (IB_OCQ_DEFER_DIM)";
			else if (mode_info(spec.mode)->defer_dim && !r.min_grew)
				r.failure = "coverage: the IB_OCQ_DEFER_DIM threshold never "
					    "grew after a deferral that did not pay";
			else if (spec.mode == "defer-dim-paid" && !r.min_back)
				r.failure = "coverage: the IB_OCQ_DEFER_DIM threshold never "
					    "came back to 2 after a deferral that paid";
		}
		/*
		 * IB_ARM_SOLICITED: a completion that is not solicited waited in
		 * the armed CQ; on sol-narrow, REPORT_MISSED kept quiet about one
		 */
		if (r.failure.empty() && spec.solicited && !r.held)
			r.failure = "coverage: no completion waited in the CQ behind a "
				    "solicited-only arm";
		else if (r.failure.empty() && spec.solicited && spec.provider == "sol-narrow" &&
			 !r.quiet_reports)
			r.failure = "coverage: REPORT_MISSED never returned 0 with a completion "
				    "in the CQ";
		/*
		 * &ib_ocq_attr.dispatch: every loop that calls it ran; flow mode's
		 * CQ run inline is the coverage check above
		 */
		if (r.failure.empty() && spec.wrid && mode_info(spec.mode)->engine != SIM_STRICT &&
		    !r.domain_dispatches)
			r.failure = "coverage: no flow domain or commit step called dispatch()";
		else if (r.failure.empty() && spec.wrid && mode_info(spec.mode)->wait_next == 4 &&
			 !r.barrier_dispatches)
			r.failure = "coverage: the CQ run never called dispatch() behind the "
				    "flow_key's barrier";
		if (r.failure.empty() && spec.mode.find("-hol") != std::string::npos &&
		    !r.hol_waits)
			r.failure = "coverage: no completion waited in the unarmed CQ behind "
				    "the backlog";
		/*
		 * Suspension: a busy poll suspended, one took the CQ unit from
		 * the timer, the timer took it from a suspension, one found a
		 * run holding it; with the deferred re-arm, a run deferred.
		 */
		if (mode_info(spec.mode)->busy) {
			if (!r.suspends)
				r.failure = "coverage: no busy poll suspended the CQ's events";
			else if (!r.busy_from_timer)
				r.failure =
					"coverage: no busy poll took the CQ unit from the timer";
			else if (!r.suspensions_ended)
				r.failure = "coverage: the timer never took the CQ unit from a "
					    "suspension";
			else if (!r.busy_ebusy)
				r.failure = "coverage: no busy poll found a run holding the CQ "
					    "unit (-EBUSY)";
			else if (mode_info(spec.mode)->defer && !r.defers)
				r.failure = "coverage: no CQ run deferred its re-arm";
			else if (spec.provider == "eio" && !r.busy_backoffs)
				r.failure = "coverage: no busy poll handed the CQ unit to a "
					    "delayed run after a verb failed";
			else if (mode_info(spec.mode)->wait_next == 7 && !r.busy_spent)
				r.failure = "coverage: no busy poll spent its budget";
		}
		/*
		 * The retunes: a hold applied one; the deferral retuned on
		 * deferred, with a completion landing meanwhile, and retuned
		 * off ended a deferral with an arm; the suspension retuned off
		 * refused a busy poll and ended a suspension's timer with an
		 * arm, and on again let one take completions; IB_OCQ_DEFER_DIM
		 * retuned off deferred a single completion, and on again armed
		 * after one.
		 */
		int tune = mode_info(spec.mode)->tune;

		if (r.failure.empty() && tune && !r.tune_applies)
			r.failure = "coverage: no hold of the CQ unit applied a retune";
		else if (r.failure.empty() && (tune == 1 || tune == 3) && !r.tune_defers)
			r.failure = "coverage: no CQ run deferred its re-arm after a retune was "
				    "applied";
		else if (r.failure.empty() && tune == 1 && !r.deferred_pushes)
			r.failure = "coverage: no completion landed while the re-arm was deferred";
		else if (r.failure.empty() && tune == 1 && !r.tune_rearms)
			r.failure = "coverage: no CQ run armed the CQ, ending a deferral, with the "
				    "deferral retuned off";
		else if (r.failure.empty() && tune == 2 && !r.tune_refused)
			r.failure = "coverage: no busy poll was refused with the suspension "
				    "retuned off";
		else if (r.failure.empty() && tune == 2 && !r.tune_suspend_ended)
			r.failure = "coverage: no timer's run ended a suspension with the "
				    "suspension retuned off";
		else if (r.failure.empty() && tune == 2 && !r.tune_took)
			r.failure = "coverage: no busy poll took completions after the "
				    "suspension was retuned on again";
		else if (r.failure.empty() && tune == 3 && !r.tune_single_defers)
			r.failure = "coverage: no CQ run deferred a single completion with "
				    "IB_OCQ_DEFER_DIM retuned off";
		else if (r.failure.empty() && tune == 3 && !r.tune_short_arms)
			r.failure = "coverage: no CQ run armed after a single completion with "
				    "IB_OCQ_DEFER_DIM retuned on again";
	}
	return r;
}

std::string percent(long part, long whole)
{
	char buf[64];

	std::snprintf(buf, sizeof(buf), "%ld/%ld (%.1f%%)", part, whole,
		      whole ? 100.0 * part / whole : 0.0);
	return buf;
}

// What was explored, honestly: every schedule within a bound, or a budget.
std::string explored(const Result &r, const Options &opt)
{
	char buf[160];

	if (r.complete)
		std::snprintf(buf, sizeof(buf), "exhaustive at bound %u: %ld schedules", opt.bound,
			      r.schedules);
	else if (r.exhausted >= 0)
		std::snprintf(buf, sizeof(buf),
			      "budget: %ld schedules of bound %u, not exhaustive "
			      "(exhaustive at bound %d)",
			      r.schedules, r.at_bound, r.exhausted);
	else
		std::snprintf(buf, sizeof(buf), "budget: %ld schedules of bound %u, not exhaustive",
			      r.schedules, r.at_bound);
	return buf;
}

// One line per case; returns true if the case passed.
bool report(const CaseSpec &spec, const Result &r, const Options &opt)
{
	if (spec.expect_failure) {
		if (!r.failure.empty()) {
			std::printf("%-32s caught [%s] after %ld schedules, time=%.1fs "
				    "schedule=%s\n    %s\n",
				    spec.name.c_str(), spec.expect.c_str(), r.schedules, r.secs,
				    r.schedule.c_str(), r.failure.c_str());
			return true;
		}
		std::printf("%-32s MISSED [%s]  %s, time=%.1fs\n", spec.name.c_str(),
			    spec.expect.c_str(), explored(r, opt).c_str(), r.secs);
		if (!r.other.empty())
			std::printf("    only another property broke: %s\n    schedule=%s\n",
				    r.other.c_str(), r.other_schedule.c_str());
		return false;
	}
	if (!r.failure.empty()) {
		std::printf("%-32s FAIL  schedules=%ld time=%.1fs%s%s\n    %s\n", spec.name.c_str(),
			    r.schedules, r.secs,
			    r.schedule.empty() ? "" : " schedule=", r.schedule.c_str(),
			    r.failure.c_str());
		return false;
	}
	std::printf("%-32s ok  %s, terminal=%zu time=%.1fs", spec.name.c_str(),
		    explored(r, opt).c_str(), r.terminals, r.secs);
	if (spec.stale_bound)
		std::printf("  stale-reads=%ld", r.stale_reads);
	if (spec.mode == "bench-pattern1")
		std::printf("  handler-found-cq-empty=%s",
			    percent(r.empty_handlers, r.handler_calls).c_str());
	else if (spec.mode == "bench-engine")
		std::printf("  empty-runs=%s", percent(r.empty_runs, r.runs).c_str());
	else if (spec.mode.rfind("stall-", 0) == 0)
		std::printf("  stalls=%ld", r.stalls);
	else if (spec.mode == "flow")
		std::printf("  parks=%ld inlined=%ld", r.parks, r.inlined);
	else if (spec.mode == "parallel")
		std::printf("  parks=%ld", r.parks);
	else if (spec.provider == "lossy")
		std::printf("  rescues=%ld", r.rescues);
	if (spec.mode.rfind("defer", 0) == 0)
		std::printf("  defers=%ld rearms=%ld deferred-pushes=%ld", r.defers, r.rearms,
			    r.deferred_pushes);
	if (spec.mode.rfind("defer", 0) == 0 && mode_info(spec.mode)->teardown)
		std::printf(" torn-deferred=%ld", r.torn_deferred);
	if (spec.mode.rfind("defer", 0) == 0 && mode_info(spec.mode)->ulp == 1)
		std::printf(" paused-deferred=%ld", r.paused_deferred);
	if (spec.mode.rfind("defer", 0) == 0 && mode_info(spec.mode)->defer_dim)
		std::printf(" short-arms=%ld grew=%ld", r.short_arms, r.min_grew);
	if (mode_info(spec.mode)->busy)
		std::printf("  suspends=%ld from-timer=%ld ended=%ld ebusy=%ld", r.suspends,
			    r.busy_from_timer, r.suspensions_ended, r.busy_ebusy);
	if (mode_info(spec.mode)->busy && mode_info(spec.mode)->defer)
		std::printf(" defers=%ld", r.defers);
	if (mode_info(spec.mode)->busy && spec.provider == "eio")
		std::printf(" backoffs=%ld", r.busy_backoffs);
	if (mode_info(spec.mode)->busy && mode_info(spec.mode)->wait_next == 7)
		std::printf(" spent=%ld", r.busy_spent);
	if (spec.mode == "defer-dim-paid")
		std::printf(" back=%ld", r.min_back);
	if (spec.mode.find("-hol") != std::string::npos)
		std::printf("  hol-waits=%ld", r.hol_waits);
	if (spec.solicited)
		std::printf("  held=%ld quiet-reports=%ld", r.held, r.quiet_reports);
	if (spec.wrid)
		std::printf("  dispatch: cq-run=%ld domains=%ld barrier=%ld", r.cq_dispatches,
			    r.domain_dispatches, r.barrier_dispatches);
	if (mode_info(spec.mode)->tune)
		std::printf("  applies=%ld", r.tune_applies);
	if (mode_info(spec.mode)->tune == 1)
		std::printf(" defers=%ld deferred-pushes=%ld rearms-off=%ld", r.tune_defers,
			    r.deferred_pushes, r.tune_rearms);
	else if (mode_info(spec.mode)->tune == 2)
		std::printf(" refused=%ld ended-off=%ld took-on=%ld", r.tune_refused,
			    r.tune_suspend_ended, r.tune_took);
	else if (mode_info(spec.mode)->tune == 3)
		std::printf(" defers=%ld single-defers=%ld short-arms-on=%ld", r.tune_defers,
			    r.tune_single_defers, r.tune_short_arms);
	std::printf("\n");
	for (const KnownHit &h : r.known)
		std::printf("    known engine bug %s: %ld schedule(s), first "
			    "schedule=%s\n      %s\n",
			    h.bug->id, h.schedules, h.schedule.c_str(), h.failure.c_str());
	return true;
}

int replay(const std::string &arg, const Options &opt)
{
	size_t at = arg.find('@');
	std::map<size_t, int> forced;

	if (at == std::string::npos || !decode_schedule(arg.substr(at + 1), &forced)) {
		std::fprintf(stderr, "ocq_sim: bad schedule string '%s'\n", arg.c_str());
		return EXIT_USAGE;
	}
	for (const CaseSpec &spec : all_cases()) {
		if (spec.name != arg.substr(0, at))
			continue;
		Replayer rp(forced);
		std::printf("replay %s\n  decision  context    step = value\n", spec.name.c_str());
		World w(spec, rp, opt.step_cap, true);
		Outcome o = w.run();

		std::printf("%zu decisions\n", w.decisions().size());
		if (o.failures.empty()) {
			std::printf("all properties hold\n");
			return EXIT_PASS;
		}
		for (const std::string &f : o.failures) {
			const KnownBug *k = known_bug(spec, f);

			std::printf("FAIL: %s\n", f.c_str());
			if (k)
				std::printf("  known engine bug %s: %s\n", k->id, k->what);
		}
		return EXIT_FAIL;
	}
	std::fprintf(stderr, "ocq_sim: no case '%s'\n", arg.substr(0, at).c_str());
	return EXIT_USAGE;
}

void usage(FILE *f)
{
	std::fprintf(f, "usage: ocq_sim [options]\n"
			"  --bound N          preemption bound (default 3)\n"
			"  --budget N         executions per case, over all bounds\n"
			"                     (default 4000); a case that spends it\n"
			"                     says so: not exhaustive\n"
			"  --defer-budget N   executions per deferred re-arm,\n"
			"                     suspension or retune case (default\n"
			"                     3000), instead of --budget\n"
			"  --step-cap N       decisions per execution (default 5000)\n"
			"  --case TEXT        only the cases whose name contains TEXT\n"
			"  --list             list the cases\n"
			"  --no-known         known engine bugs fail their cases\n"
			"  --first-fail       stop at the first case that fails\n"
			"  --jobs N           share the cases out among N processes;\n"
			"                     the output stays in the cases' order\n"
			"  --replay STRING    re-run one schedule (as printed after\n"
			"                     schedule=) with a trace of every step\n"
			"  --help, --version\n"
			"exit status: 0 all cases passed, 1 a case failed (or the\n"
			"replayed schedule breaks a property), 2 usage error\n");
}

// A non-negative number, or false.
bool number(const char *s, double *v)
{
	char *end;

	*v = std::strtod(s, &end);
	return *s && !*end && *v >= 0;
}

bool parse(int argc, char **argv, Options *opt, int *exit_now)
{
	double v;

	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		bool has = i + 1 < argc;

		if (a == "--help") {
			usage(stdout);
			*exit_now = EXIT_PASS;
			return false;
		} else if (a == "--version") {
			std::printf("%s\n", version);
			*exit_now = EXIT_PASS;
			return false;
		} else if (a == "--list") {
			opt->list = true;
		} else if (a == "--no-known") {
			opt->no_known = true;
		} else if (a == "--bound" && has && number(argv[++i], &v)) {
			opt->bound = (unsigned)v;
		} else if (a == "--budget" && has && number(argv[++i], &v)) {
			opt->budget = (long)v;
		} else if (a == "--defer-budget" && has && number(argv[++i], &v)) {
			opt->defer_budget = (long)v;
		} else if (a == "--first-fail") {
			opt->first_fail = true;
		} else if (a == "--jobs" && has && number(argv[++i], &v) && v >= 1) {
			opt->jobs = (unsigned)v;
		} else if (a == "--step-cap" && has && number(argv[++i], &v)) {
			opt->step_cap = (size_t)v;
		} else if (a == "--case" && has) {
			opt->only = argv[++i];
		} else if (a == "--replay" && has) {
			opt->replay = argv[++i];
		} else {
			usage(stderr);
			*exit_now = EXIT_USAGE;
			return false;
		}
	}
	return true;
}

// What a set of cases came to: the counts, and the known bugs they met.
struct Tally {
	int passed = 0;
	int failed = 0;
	std::map<std::string, int> known_seen;
};

// Explore one case, print its report, count it; false if it failed.
bool run_case(const CaseSpec &spec, const Options &opt, Tally *t)
{
	Result r = explore(spec, opt);

	for (const KnownHit &h : r.known)
		t->known_seen[h.bug->id]++;
	if (report(spec, r, opt)) {
		t->passed++;
		return true;
	}
	t->failed++;
	return false;
}

/*
 * --jobs: child k explores cases k, k + jobs, ... with its stdout in a file
 * of its own, each case's report after a line "@@case INDEX", its tally
 * after "@@tally"; the parent prints the reports in the cases' order.
 */
const char *const kCaseMark = "@@case ";
const char *const kTallyMark = "@@tally ";
const char *const kKnownMark = "@@known ";

void run_shard(const std::vector<CaseSpec> &cases, unsigned k, const Options &opt)
{
	Tally t;

	for (size_t i = k; i < cases.size(); i += opt.jobs) {
		std::printf("%s%zu\n", kCaseMark, i);
		run_case(cases[i], opt, &t);
	}
	std::printf("%s%d %d\n", kTallyMark, t.passed, t.failed);
	for (const auto &kv : t.known_seen)
		std::printf("%s%d %s\n", kKnownMark, kv.second, kv.first.c_str());
	std::fflush(stdout);
}

// Read a shard's file into the reports by case and the tally; false if torn.
bool read_shard(std::FILE *f, std::vector<std::string> *reports, Tally *t)
{
	char line[4096];
	std::string *cur = nullptr;
	bool tallied = false;
	int p, fl, n;
	size_t idx;

	std::rewind(f);
	while (std::fgets(line, sizeof(line), f)) {
		char name[256];

		if (std::sscanf(line, "@@case %zu", &idx) == 1 && idx < reports->size()) {
			cur = &(*reports)[idx];
		} else if (std::sscanf(line, "@@tally %d %d", &p, &fl) == 2) {
			t->passed += p;
			t->failed += fl;
			tallied = true;
			cur = nullptr;
		} else if (std::sscanf(line, "@@known %d %255s", &n, name) == 2) {
			t->known_seen[name] += n;
		} else if (cur) {
			*cur += line;
		}
	}
	return tallied;
}

// Explore @cases in opt.jobs processes; the reports in order, then the tally.
bool run_jobs(const std::vector<CaseSpec> &cases, const Options &opt, Tally *t)
{
	std::vector<std::FILE *> files;
	std::vector<pid_t> pids;
	std::vector<std::string> reports(cases.size());
	bool ok = true;

	std::fflush(stdout);
	for (unsigned k = 0; k < opt.jobs; k++) {
		std::FILE *f = std::tmpfile();
		pid_t pid = f ? fork() : -1;

		if (pid == 0) {
			if (dup2(fileno(f), STDOUT_FILENO) < 0)
				_exit(EXIT_USAGE);
			run_shard(cases, k, opt);
			_exit(EXIT_PASS);
		}
		if (pid < 0) {
			std::perror("ocq_sim: --jobs");
			ok = false;
			break;
		}
		files.push_back(f);
		pids.push_back(pid);
	}
	for (size_t k = 0; k < pids.size(); k++) {
		int status = 0;

		waitpid(pids[k], &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != EXIT_PASS ||
		    !read_shard(files[k], &reports, t)) {
			std::printf("ocq_sim: job %zu of %u did not finish (status %d)\n", k,
				    opt.jobs, status);
			ok = false;
		}
		std::fclose(files[k]);
	}
	for (const std::string &r : reports)
		std::fputs(r.c_str(), stdout);
	return ok;
}

} // namespace

int main(int argc, char **argv)
{
	Options opt;
	int exit_now = EXIT_PASS;
	std::vector<CaseSpec> cases;
	Tally t;
	bool ok = true;

	std::setvbuf(stdout, nullptr, _IOLBF, 0);
	if (!parse(argc, argv, &opt, &exit_now))
		return exit_now;
	if (!opt.replay.empty())
		return replay(opt.replay, opt);
	for (const CaseSpec &spec : all_cases()) {
		if (!opt.only.empty() && spec.name.find(opt.only) == std::string::npos)
			continue;
		if (opt.list)
			std::printf("%s\n", spec.name.c_str());
		else
			cases.push_back(spec);
	}
	if (opt.list)
		return EXIT_PASS;
	if (opt.jobs > 1 && !opt.first_fail) {
		ok = run_jobs(cases, opt, &t);
	} else {
		for (const CaseSpec &spec : cases)
			if (!run_case(spec, opt, &t) && opt.first_fail)
				break;
	}
	int passed = t.passed, failed = t.failed + !ok;
	std::map<std::string, int> &known_seen = t.known_seen;

	for (const KnownBug &k : known_bugs)
		if (known_seen.count(k.id))
			std::printf("known engine bug %s, in %d case(s): %s\n", k.id,
				    known_seen[k.id], k.what);
	if (opt.only.empty() && opt.bound >= 3 && !opt.no_known)
		for (const KnownBug &k : known_bugs)
			if (!known_seen.count(k.id))
				std::printf("known engine bug %s no longer seen: "
					    "remove it from known_bugs[]\n",
					    k.id);
	std::printf("%d passed, %d failed\n", passed, failed);
	return failed ? EXIT_FAIL : EXIT_PASS;
}
