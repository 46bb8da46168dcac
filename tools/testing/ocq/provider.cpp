// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The provider models; see provider.h.
#include "provider.h"

#include <cerrno>

#include "mm.h"
#include "sched.h"

namespace ocq_sim {

namespace {

// A verb takes the CQ's lock: an acquire and a release.
void step(const char *what)
{
	if (Scheduler *s = Scheduler::current()) {
		s->point(what);
		mm_acquire(MM_CH_CQ_LOCK);
		mm_release(MM_CH_CQ_LOCK);
	}
}

void trace_value(long v)
{
	if (Scheduler *s = Scheduler::current())
		s->value(v);
}

} // namespace

void Provider::push(const struct ib_wc &wc)
{
	step("hca: add completion");
	cq_.push_back(wc);
	trace_value((long)cq_.size());
	added();
}

int Provider::poll(int n, struct ib_wc *wc)
{
	int got = 0;

	step("ib_poll_cq");
	polls_++;
	if (int err = fail_verb(true, polls_)) {
		trace_value(err);
		return err;
	}
	while (got < n && !cq_.empty()) {
		wc[got++] = cq_.front();
		cq_.pop_front();
	}
	trace_value(got);
	return got;
}

int Provider::notify(int flags)
{
	int ret;

	step((flags & IB_CQ_REPORT_MISSED_EVENTS) ? "ib_req_notify_cq(NEXT_COMP|REPORT_MISSED)" :
						    "ib_req_notify_cq(NEXT_COMP)");
	notifies_++;
	if (int err = fail_verb(false, notifies_)) {
		trace_value(err);
		return err;
	}
	ret = arm(flags);
	trace_value(ret);
	return ret;
}

// The end of a callback: ib_destroy_cq() waits for it, so it is ordered
// before what follows the destroy.
void Provider::callback_done()
{
	in_flight_--;
	mm_release(MM_CH_CALLBACKS);
}

void Provider::destroy()
{
	Scheduler *s = Scheduler::current();

	if (s)
		s->wait(
			"ib_destroy_cq", [this] { return in_flight_ == 0; }, false);
	mm_acquire(MM_CH_CALLBACKS);
	destroyed_ = true;
	armed_ = false;
}

bool Provider::start_spurious()
{
	step("spurious callback");
	if (destroyed_)
		return false;
	in_flight_++;
	return true;
}

void Provider::added()
{
	if (armed_) {
		armed_ = false;
		raise();
	}
}

void Provider::raise()
{
	raised_++;
	pending_++;
	if (Scheduler *s = Scheduler::current())
		s->note("hca: raise completion event");
}

namespace {

// rxe / siw: an event only for an entry added after arming; REPORT_MISSED
// returns 1 iff the CQ is not empty, and the CQ stays armed even then.
class IbaWeak : public Provider {
public:
	const char *name() const override { return "iba-weak"; }

protected:
	int arm(int flags) override
	{
		armed_ = true;
		if (flags & IB_CQ_REPORT_MISSED_EVENTS)
			return cq_.empty() ? 0 : 1;
		return 0;
	}
};

// mlx4 / mlx5: arming with unpolled entries raises an event at once;
// REPORT_MISSED always returns 0.
class Strong : public Provider {
public:
	const char *name() const override { return "strong"; }
	enum rdma_driver_id driver() const override { return RDMA_DRIVER_MLX5; }

protected:
	int arm(int flags) override
	{
		(void)flags;
		if (cq_.empty()) {
			armed_ = true;
		} else {
			armed_ = false;
			raise();
		}
		return 0;
	}
};

// Allowed by the contract (seed 001): the provider raises the handler AND
// returns 1 when REPORT_MISSED finds entries.
class CallbackReturn1 : public Provider {
public:
	const char *name() const override { return "cb-return-1"; }

protected:
	int arm(int flags) override
	{
		if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && !cq_.empty()) {
			armed_ = false;
			raise();
			return 1;
		}
		armed_ = true;
		return 0;
	}
};

// IBA-weak; the world adds callbacks that find the CQ empty.
class Spurious : public IbaWeak {
public:
	const char *name() const override { return "spurious"; }
};

// IBA-weak; the world delivers events on two CPUs at once.
class Concurrent : public IbaWeak {
public:
	const char *name() const override { return "concurrent"; }
	enum rdma_driver_id driver() const override { return RDMA_DRIVER_SIW; }
};

// IBA-weak that loses the first event it raises; only the watchdog saves
// the completion it was for.
class Lossy : public IbaWeak {
public:
	const char *name() const override { return "lossy"; }
	enum rdma_driver_id driver() const override { return RDMA_DRIVER_UNKNOWN; }

protected:
	void raise() override
	{
		if (raised_ + dropped_ == 0) {
			dropped_++;
			if (Scheduler *s = Scheduler::current())
				s->note("hca: event lost");
			return;
		}
		Provider::raise();
	}
};

// REPORT_MISSED always returns 1, empty or not; arming still works.
class PerpetualPositive : public IbaWeak {
public:
	const char *name() const override { return "perpetual-positive"; }

protected:
	int arm(int flags) override
	{
		armed_ = true;
		return (flags & IB_CQ_REPORT_MISSED_EVENTS) ? 1 : 0;
	}
};

// iba-weak whose verbs fail now and then: the 2nd and 5th ib_poll_cq() and
// the 1st ib_req_notify_cq() return -EIO and do nothing.
class Erroring : public IbaWeak {
public:
	const char *name() const override { return "eio"; }

protected:
	int fail_verb(bool poll, long nth) override
	{
		if (poll ? (nth == 2 || nth == 5) : nth == 1)
			return -EIO;
		return 0;
	}
};

} // namespace

const char *const provider_names[] = {
	"iba-weak",   "strong", "cb-return-1",	      "spurious",
	"concurrent", "lossy",	"perpetual-positive", nullptr,
};

std::unique_ptr<Provider> make_provider(const std::string &name)
{
	if (name == "iba-weak")
		return std::make_unique<IbaWeak>();
	if (name == "strong")
		return std::make_unique<Strong>();
	if (name == "cb-return-1")
		return std::make_unique<CallbackReturn1>();
	if (name == "spurious")
		return std::make_unique<Spurious>();
	if (name == "concurrent")
		return std::make_unique<Concurrent>();
	if (name == "eio")
		return std::make_unique<Erroring>();
	if (name == "lossy")
		return std::make_unique<Lossy>();
	if (name == "perpetual-positive")
		return std::make_unique<PerpetualPositive>();
	return nullptr;
}

} // namespace ocq_sim
