// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The deterministic scheduler and the schedule search; see sched.h.
#include "sched.h"

#include "mm.h"

#include <cstdio>
#include <sstream>

namespace ocq_sim {

namespace {
thread_local Scheduler *tls_sched;
thread_local int tls_ctx = -1;
} // namespace

int default_choice(const Decision &d)
{
	if (d.cur_enabled)
		return d.cur;
	for (int i = 0; i < 32; i++)
		if (d.enabled & (1u << i))
			return i;
	return -1;
}

Scheduler::Scheduler(Chooser &chooser, size_t step_cap, bool trace)
    : chooser_(chooser), step_cap_(step_cap), trace_(trace)
{
}

Scheduler::~Scheduler()
{
	finish();
}

Scheduler *Scheduler::current()
{
	return tls_sched;
}

int Scheduler::self() const
{
	return tls_ctx;
}

int Scheduler::add(const std::string &name, std::function<void()> body, Pred start_when, bool idle)
{
	auto c = std::make_unique<Ctx>();

	c->name = name;
	c->body = std::move(body);
	if (start_when) {
		c->pred = std::move(start_when);
		c->state = idle ? State::Idle : State::Blocked;
		c->what = idle ? "idle" : "waiting to start";
	}
	ctxs_.push_back(std::move(c));
	return (int)ctxs_.size() - 1;
}

// The thread of context @id: wait for the first turn, run, hand the turn on.
void Scheduler::body(int id)
{
	Ctx &c = *ctxs_[id];

	{
		std::unique_lock<std::mutex> lk(mu_);
		c.cv.wait(lk, [&] { return running_ == id || aborting_; });
		if (aborting_)
			return;
	}
	tls_sched = this;
	tls_ctx = id;
	c.state = State::Runnable;
	c.pred = nullptr;
	if (trace_) {
		std::lock_guard<std::mutex> lk(mu_);

		flush_trace();
		std::printf("%6zu  %-10s start\n", decisions_.size() - 1, c.name.c_str());
	}
	try {
		c.body();
	} catch (const Abort &) {
		return;
	}
	std::unique_lock<std::mutex> lk(mu_);
	flush_trace();
	c.state = State::Done;
	c.what = "done";
	reschedule(id, lk);
}

bool Scheduler::enabled(const Ctx &c) const
{
	switch (c.state) {
	case State::Runnable:
		return true;
	case State::Idle:
	case State::Blocked:
		return c.pred();
	case State::Spinning:
	case State::Yielding:
		return steps_ > c.spin_mark;
	case State::Done:
		break;
	}
	return false;
}

void Scheduler::end(End why)
{
	end_ = why;
	ended_ = true;
	main_cv_.notify_all();
}

void Scheduler::reschedule(int me, std::unique_lock<std::mutex> &lk)
{
	Decision d;

	/* what the context wrote of the watched slots since its last step */
	if (me >= 0)
		mm_scan();
	steps_++;
	for (size_t i = 0; i < ctxs_.size(); i++)
		if (enabled(*ctxs_[i]))
			d.enabled |= 1u << i;
	if (!d.enabled) /* a yield is fair, not a block */
		for (size_t i = 0; i < ctxs_.size(); i++)
			if (ctxs_[i]->state == State::Yielding)
				d.enabled |= 1u << i;
	d.cur = me;
	d.cur_enabled = me >= 0 && (d.enabled & (1u << me));
	if (!d.enabled) {
		end(End::Terminal);
	} else if (decisions_.size() >= step_cap_) {
		end(End::StepCap);
	} else {
		d.choice = chooser_.choose(decisions_.size(), d);
		if (d.choice < 0 || !(d.enabled & (1u << d.choice))) {
			end(End::Diverged);
		} else {
			decisions_.push_back(d);
			if (d.cur_enabled && d.choice != me)
				preemptions_++;
			if (d.choice != me) {
				running_ = d.choice;
				ctxs_[d.choice]->cv.notify_one();
			}
		}
	}
	if (me < 0 || ctxs_[me]->state == State::Done)
		return;
	ctxs_[me]->cv.wait(lk, [&] { return (running_ == me && !ended_) || aborting_; });
	if (aborting_)
		throw Abort();
}

End Scheduler::run()
{
	for (size_t i = 0; i < ctxs_.size(); i++) {
		ctxs_[i]->started = true;
		ThreadPool::get().start(i, [this, i] { body((int)i); });
	}
	std::unique_lock<std::mutex> lk(mu_);
	reschedule(-1, lk);
	main_cv_.wait(lk, [&] { return ended_; });
	flush_trace();
	return end_;
}

void Scheduler::finish()
{
	{
		std::lock_guard<std::mutex> lk(mu_);
		aborting_ = true;
		for (auto &c : ctxs_)
			c->cv.notify_all();
	}
	for (size_t i = 0; i < ctxs_.size(); i++) {
		if (ctxs_[i]->started)
			ThreadPool::get().wait(i);
		ctxs_[i]->started = false;
	}
}

ThreadPool &ThreadPool::get()
{
	static ThreadPool pool;

	return pool;
}

ThreadPool::~ThreadPool()
{
	for (auto &w : workers_) {
		{
			std::lock_guard<std::mutex> lk(w->mu);
			w->stop = true;
		}
		w->cv.notify_all();
		w->thread.join();
	}
}

void ThreadPool::loop(Worker *w)
{
	std::unique_lock<std::mutex> lk(w->mu);

	for (;;) {
		w->cv.wait(lk, [w] { return w->busy || w->stop; });
		if (w->stop)
			return;
		lk.unlock();
		w->job();
		lk.lock();
		w->job = nullptr;
		w->busy = false;
		w->cv.notify_all();
	}
}

void ThreadPool::start(size_t n, std::function<void()> job)
{
	while (workers_.size() <= n) {
		auto w = std::make_unique<Worker>();

		w->thread = std::thread(&ThreadPool::loop, w.get());
		workers_.push_back(std::move(w));
	}
	Worker &w = *workers_[n];
	{
		std::lock_guard<std::mutex> lk(w.mu);
		w.job = std::move(job);
		w.busy = true;
	}
	w.cv.notify_all();
}

void ThreadPool::wait(size_t n)
{
	Worker &w = *workers_[n];
	std::unique_lock<std::mutex> lk(w.mu);

	w.cv.wait(lk, [&w] { return !w.busy; });
}

void Scheduler::flush_trace()
{
	if (!pending_.empty())
		std::printf("%s\n", pending_.c_str());
	pending_.clear();
}

void Scheduler::point(const char *what)
{
	std::unique_lock<std::mutex> lk(mu_);
	int me = tls_ctx;

	flush_trace();
	ctxs_[me]->what = what;
	reschedule(me, lk);
	trace_resumed(*ctxs_[me], "");
}

void Scheduler::trace_resumed(const Ctx &c, const char *suffix)
{
	char buf[200];

	if (!trace_)
		return;
	std::snprintf(buf, sizeof(buf), "%6zu  %-10s %s%s", decisions_.size() - 1, c.name.c_str(),
		      c.what, suffix);
	pending_ = buf;
}

void Scheduler::wait(const char *what, Pred pred, bool idle)
{
	std::unique_lock<std::mutex> lk(mu_);
	int me = tls_ctx;
	Ctx &c = *ctxs_[me];

	flush_trace();
	if (trace_ && !pred())
		std::printf("%6zu  %-10s %s (blocks)\n", decisions_.size(), c.name.c_str(), what);
	c.what = what;
	c.pred = std::move(pred);
	c.state = idle ? State::Idle : State::Blocked;
	reschedule(me, lk);
	c.state = State::Runnable;
	c.pred = nullptr;
	trace_resumed(c, " (woken)");
}

void Scheduler::spin(const char *what)
{
	std::unique_lock<std::mutex> lk(mu_);
	int me = tls_ctx;
	Ctx &c = *ctxs_[me];

	flush_trace();
	c.what = what;
	c.state = State::Spinning;
	c.spin_mark = steps_ + 1; // reschedule() counts this step
	reschedule(me, lk);
	c.state = State::Runnable;
	trace_resumed(c, "");
}

void Scheduler::yield(const char *what)
{
	std::unique_lock<std::mutex> lk(mu_);
	int me = tls_ctx;
	Ctx &c = *ctxs_[me];

	flush_trace();
	c.what = what;
	c.state = State::Yielding;
	c.spin_mark = steps_ + 1;
	reschedule(me, lk);
	c.state = State::Runnable;
	trace_resumed(c, "");
}

void Scheduler::value(long v)
{
	if (!trace_ || pending_.empty())
		return;
	std::printf("%s = %ld\n", pending_.c_str(), v);
	pending_.clear();
}

int Scheduler::choose_value(int n, const char *what)
{
	std::unique_lock<std::mutex> lk(mu_);
	Decision d;

	if (n <= 1 || ended_)
		return 0;
	d.value = true;
	d.enabled = n >= 32 ? ~0u : (1u << n) - 1;
	d.choice = chooser_.choose(decisions_.size(), d);
	if (d.choice < 0 || !(d.enabled & (1u << d.choice))) {
		/* a replay that does not fit: read the latest, end soon */
		d.choice = 0;
	}
	decisions_.push_back(d);
	if (trace_ && d.choice) {
		flush_trace();
		std::printf("%6zu  %-10s %s reads the store %d older than the latest\n",
			    decisions_.size() - 1, ctxs_[tls_ctx]->name.c_str(), what, d.choice);
	}
	return d.choice;
}

void Scheduler::note(const std::string &text)
{
	if (!trace_)
		return;
	flush_trace();
	std::printf("        %-10s   %s\n", tls_ctx >= 0 ? ctxs_[tls_ctx]->name.c_str() : "-",
		    text.c_str());
}

std::vector<int> Scheduler::stuck() const
{
	std::vector<int> v;

	for (size_t i = 0; i < ctxs_.size(); i++) {
		State s = ctxs_[i]->state;

		if (s == State::Blocked || s == State::Spinning || s == State::Yielding ||
		    s == State::Runnable)
			v.push_back((int)i);
	}
	return v;
}

int Explorer::choose(size_t index, const Decision &d)
{
	unsigned pre;

	if (index < prefix_) {
		// Replaying the stack: the world is deterministic, so the
		// enabled set must be the same as when the node was made.
		if (stack_[index].d.enabled != d.enabled)
			return -1;
		return stack_[index].d.choice;
	}
	unsigned stale = 0;

	pre = stack_.empty() ? 0 : stack_.back().pre;
	if (!stack_.empty()) {
		const Decision &b = stack_.back().d;

		pre += b.cur_enabled && b.choice != b.cur;
		stale = stack_.back().stale + (b.value && b.choice != 0);
	}
	Node n;
	n.d = d;
	n.d.choice = default_choice(d);
	n.tried = 1u << n.d.choice;
	n.pre = pre;
	n.stale = stale;
	stack_.push_back(n);
	prefix_ = stack_.size();
	return n.d.choice;
}

bool Explorer::next()
{
	while (!stack_.empty()) {
		Node &n = stack_.back();
		uint32_t left = n.d.enabled & ~n.tried;

		for (int c = 0; left; c++) {
			if (!(left & (1u << c)))
				continue;
			left &= ~(1u << c);
			n.tried |= 1u << c;
			if (n.pre + (n.d.cur_enabled && c != n.d.cur) > bound_)
				continue;
			if (n.d.value && n.stale + (c != 0) > stale_bound_)
				continue;
			n.d.choice = c;
			prefix_ = stack_.size();
			return true;
		}
		stack_.pop_back();
	}
	return false;
}

int Replayer::choose(size_t index, const Decision &d)
{
	auto it = forced_.find(index);

	return it == forced_.end() ? default_choice(d) : it->second;
}

std::string encode_schedule(const std::vector<Decision> &ds)
{
	std::ostringstream os;
	const char *sep = "";

	for (size_t i = 0; i < ds.size(); i++) {
		if (ds[i].choice == default_choice(ds[i]))
			continue;
		os << sep << i << ':' << ds[i].choice;
		sep = ",";
	}
	return os.str();
}

bool decode_schedule(const std::string &s, std::map<size_t, int> *forced)
{
	std::istringstream is(s);
	std::string item;

	while (std::getline(is, item, ',')) {
		size_t colon = item.find(':');
		unsigned long idx, ctx;
		char *end;

		if (colon == std::string::npos)
			return false;
		idx = std::strtoul(item.c_str(), &end, 10);
		if (end != item.c_str() + colon)
			return false;
		ctx = std::strtoul(item.c_str() + colon + 1, &end, 10);
		if (*end || ctx >= 32)
			return false;
		(*forced)[idx] = (int)ctx;
	}
	return true;
}

} // namespace ocq_sim
