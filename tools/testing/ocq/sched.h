// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The deterministic scheduler of the model checker.
//
// Every modelled context (the provider's producer, a completion callback,
// the host's work item of one unit, pause/resume, teardown, the watchdog)
// is a real thread, but exactly one runs at a time: the others wait on
// their own condition variable until the scheduler hands them the turn.
// The running context gives the turn away only at a scheduling point, i.e.
// when it is about to execute a shimmed primitive (an atomic operation, a
// provider verb, done()).  At each point the scheduler computes the set of
// contexts that could run and asks a Chooser which one runs next; that
// choice is a Decision, and the list of decisions of an execution is its
// schedule.  Replaying the same decisions replays the same execution, since
// nothing else in the model is nondeterministic.
//
// Switching away from a context that could have continued is a preemption;
// switching because the running context blocked, finished or spins is not.
// The Explorer bounds preemptions, as CHESS does.
#ifndef OCQ_SIM_SCHED_H
#define OCQ_SIM_SCHED_H

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ocq_sim {

// Thrown inside a context to unwind it once its execution is over.
struct Abort {};

// One choice made by the scheduler.
struct Decision {
	uint32_t enabled = 0;	// contexts that could run
	int cur = -1;		// context at the point; -1 at the start
	bool cur_enabled = false; // leaving it would be a preemption
	int choice = -1;	// context that runs next
	// A value decision (weak memory): which store a load reads, 0 the
	// latest, i the i-th older one; enabled holds the candidates.  It
	// switches no context and costs no preemption; any choice but 0
	// costs one stale read.
	bool value = false;
};

// The choice the scheduler makes when nobody forces another one: keep the
// current context if it can run, else the lowest enabled one.
int default_choice(const Decision &d);

// Decides each choice of an execution.
class Chooser {
public:
	virtual ~Chooser() = default;
	// @index: decision number; @d: everything but d.choice
	virtual int choose(size_t index, const Decision &d) = 0;
};

// How an execution ended.
enum class End {
	Terminal,	// no context can run
	StepCap,	// too many steps: a livelock, or a model without an end
	Diverged,	// a forced choice was not enabled (bad replay string)
};

class Scheduler {
public:
	using Pred = std::function<bool()>;

	Scheduler(Chooser &chooser, size_t step_cap, bool trace);
	~Scheduler();
	Scheduler(const Scheduler &) = delete;
	Scheduler &operator=(const Scheduler &) = delete;

	// Add a context before run(); returns its number.  With @start_when
	// the context begins waiting (idle or not, as for wait()): it is
	// first run once the predicate holds, saving the search a step.
	int add(const std::string &name, std::function<void()> body,
		Pred start_when = nullptr, bool idle = true);
	// Run the contexts until no context can run.  On return every context
	// is parked or finished, so the caller may inspect the world.
	End run();
	// Unwind the parked contexts and join every thread.
	void finish();

	// --- called by the running context ---
	// A scheduling point before primitive @what.
	void point(const char *what);
	// Block until @pred holds.  @idle: waiting here at the end of an
	// execution is normal (a worker with no work), not a deadlock.
	void wait(const char *what, Pred pred, bool idle);
	// A voluntary yield: runnable again once another context made a step.
	void spin(const char *what);
	// A fair yield (a work item that requeued itself): runnable again
	// once another context made a step, or when no other can run.
	void yield(const char *what);
	// The value the last primitive produced (for the trace).
	void value(long v);
	// A value decision among @n candidate stores (n <= 32) for @what;
	// returns the one chosen, 0 (the latest) by default.
	int choose_value(int n, const char *what);
	// Trace a line of the harness (a provider decision, a failure).
	void note(const std::string &text);

	// Context running on this thread, or -1 outside the model.
	static Scheduler *current();
	int self() const;
	const std::string &name(int ctx) const { return ctxs_[ctx]->name; }
	size_t contexts() const { return ctxs_.size(); }
	// Contexts blocked in a non-idle wait at the end: a deadlock.
	std::vector<int> stuck() const;
	std::string stuck_what(int ctx) const { return ctxs_[ctx]->what; }
	const std::vector<Decision> &decisions() const { return decisions_; }
	unsigned preemptions() const { return preemptions_; }

private:
	enum class State { Runnable, Idle, Blocked, Spinning, Yielding, Done };
	struct Ctx {
		std::string name;
		std::function<void()> body;
		bool started = false;
		std::condition_variable cv;
		State state = State::Runnable;
		Pred pred;
		uint64_t spin_mark = 0;
		const char *what = "start";
	};

	void body(int id);
	bool enabled(const Ctx &c) const;
	// Choose who runs next and hand it the turn; returns when @me has
	// the turn again (or at once, if @me finished).
	void reschedule(int me, std::unique_lock<std::mutex> &lk);
	void end(End why);
	void flush_trace();
	void trace_resumed(const Ctx &c, const char *suffix);

	Chooser &chooser_;
	size_t step_cap_;
	bool trace_;
	std::vector<std::unique_ptr<Ctx>> ctxs_;
	std::vector<Decision> decisions_;
	std::mutex mu_;
	std::condition_variable main_cv_;
	int running_ = -1;
	bool ended_ = false;
	bool aborting_ = false;
	End end_ = End::Terminal;
	uint64_t steps_ = 0;
	unsigned preemptions_ = 0;
	std::string pending_;	// trace line waiting for its value
};

// The threads of the contexts, kept from one execution to the next:
// creating a thread per context per execution would cost more than the
// execution itself.
class ThreadPool {
public:
	static ThreadPool &get();
	~ThreadPool();
	// Run @job on thread @n (which must be idle).
	void start(size_t n, std::function<void()> job);
	// Wait until thread @n finished its job.
	void wait(size_t n);

private:
	struct Worker {
		std::thread thread;
		std::mutex mu;
		std::condition_variable cv;
		std::function<void()> job;
		bool busy = false;
		bool stop = false;
	};
	static void loop(Worker *w);
	std::vector<std::unique_ptr<Worker>> workers_;
};

// Depth-first search over schedules with a preemption bound.  The stack
// holds one node per decision of the current execution with the choices
// already explored there; next() backtracks to the deepest node with an
// unexplored choice within the bound.
class Explorer : public Chooser {
public:
	explicit Explorer(unsigned bound, unsigned stale_bound = 0)
	    : bound_(bound), stale_bound_(stale_bound)
	{
	}
	int choose(size_t index, const Decision &d) override;
	// After an execution: pick the next schedule; false when exhausted.
	bool next();

private:
	struct Node {
		Decision d;
		uint32_t tried = 0;
		unsigned pre = 0;	// preemptions before this decision
		unsigned stale = 0;	// stale reads before this decision
	};
	unsigned bound_;
	unsigned stale_bound_;
	std::vector<Node> stack_;
	size_t prefix_ = 0;	// decisions forced by the stack
};

// Replays a schedule given as its deviations from default_choice().
class Replayer : public Chooser {
public:
	explicit Replayer(std::map<size_t, int> forced) : forced_(std::move(forced)) {}
	int choose(size_t index, const Decision &d) override;

private:
	std::map<size_t, int> forced_;
};

// "index:ctx,index:ctx": the decisions that differ from default_choice().
std::string encode_schedule(const std::vector<Decision> &ds);
bool decode_schedule(const std::string &s, std::map<size_t, int> *forced);

} // namespace ocq_sim

#endif // OCQ_SIM_SCHED_H
