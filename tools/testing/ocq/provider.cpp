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

void Provider::push(const struct ib_wc &wc, bool solicited)
{
	step(solicited ? "hca: add completion (solicited)" : "hca: add completion");
	cq_.push_back(wc);
	/* the IBA: an unsuccessful completion raises a solicited arm too */
	solicited_.push_back(solicited || wc.status != IB_WC_SUCCESS);
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
		solicited_.pop_front();
	}
	trace_value(got);
	return got;
}

int Provider::notify(int flags)
{
	bool sol = (flags & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED;
	int ret;

	if (flags & IB_CQ_REPORT_MISSED_EVENTS)
		step(sol ? "ib_req_notify_cq(SOLICITED|REPORT_MISSED)" :
			   "ib_req_notify_cq(NEXT_COMP|REPORT_MISSED)");
	else
		step(sol ? "ib_req_notify_cq(SOLICITED)" : "ib_req_notify_cq(NEXT_COMP)");
	notifies_++;
	if (int err = fail_verb(false, notifies_)) {
		trace_value(err);
		return err;
	}
	ret = arm(flags);
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && !ret && !cq_.empty())
		quiet_reports_++;
	trace_value(ret);
	return ret;
}

void Provider::arm_for(int flags)
{
	armed_ = true;
	arm_solicited_ = (flags & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED;
}

bool Provider::holds_match(int flags) const
{
	return (flags & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED ? holds_solicited() : !cq_.empty();
}

bool Provider::holds_solicited() const
{
	for (bool sol : solicited_)
		if (sol)
			return true;
	return false;
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

// An armed CQ raises for a new entry that matches the arm; one that does
// not (not solicited, under a solicited-only arm) leaves it armed.
void Provider::added()
{
	if (!armed_)
		return;
	if (!raises(solicited_.back())) {
		held_++;
		if (Scheduler *s = Scheduler::current())
			s->note("hca: not solicited: the solicited-only arm stays");
		return;
	}
	armed_ = false;
	raise();
}

void Provider::raise()
{
	raised_++;
	pending_++;
	if (Scheduler *s = Scheduler::current())
		s->note("hca: raise completion event");
}

namespace {

// rxe / siw: an event only for an entry added after arming that matches
// the arm; REPORT_MISSED returns 1 iff the CQ is not empty, solicited
// entries or not (rxe's queue_empty(), siw's cq_put - cq_get), and the CQ
// stays armed even then.
class IbaWeak : public Provider {
public:
	const char *name() const override { return "iba-weak"; }

protected:
	int arm(int flags) override
	{
		arm_for(flags);
		if (flags & IB_CQ_REPORT_MISSED_EVENTS)
			return cq_.empty() ? 0 : 1;
		return 0;
	}
};

// mlx4 / mlx5: arming with an unpolled entry that matches the arm (any, or
// for a solicited-only arm a solicited or unsuccessful one) raises an event
// at once; REPORT_MISSED always returns 0.
class Strong : public Provider {
public:
	const char *name() const override { return "strong"; }
	enum rdma_driver_id driver() const override { return RDMA_DRIVER_MLX5; }

protected:
	int arm(int flags) override
	{
		if (holds_match(flags)) {
			armed_ = false;
			raise();
		} else {
			arm_for(flags);
		}
		return 0;
	}
};

// Allowed by the contract (seed 001): the provider raises the handler AND
// returns 1 when REPORT_MISSED finds entries (any, whatever the arm).
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
		arm_for(flags);
		return 0;
	}
};

// IBA-weak that reads "missed events" narrowly under a solicited-only arm:
// REPORT_MISSED returns 1 only while a solicited (or unsuccessful) entry is
// unpolled, as a missed event would have been raised for it; the entries
// that are not solicited wait, as they would have for the event.  Run in
// the solicited cases only.
class SolicitedNarrow : public IbaWeak {
public:
	const char *name() const override { return "sol-narrow"; }

protected:
	int arm(int flags) override
	{
		arm_for(flags);
		if (flags & IB_CQ_REPORT_MISSED_EVENTS)
			return holds_match(flags) ? 1 : 0;
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
		arm_for(flags);
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
	if (name == "sol-narrow")
		return std::make_unique<SolicitedNarrow>();
	return nullptr;
}

} // namespace ocq_sim
