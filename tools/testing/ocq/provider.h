// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Provider models: what a CQ does when it is polled, armed and fed with
// completions, and when it raises the completion handler.  Each verb is
// one step of the model (a scheduling point, then the verb, atomically).
//
// A raised event is queued (pending); the callback contexts of the world
// deliver queued events to the handler.  How many callback contexts exist
// (one, or two CPUs at once) and the extra spurious callbacks are part of
// the world's setup, not of the provider's semantics.
#ifndef OCQ_SIM_PROVIDER_H
#define OCQ_SIM_PROVIDER_H

#include <deque>
#include <memory>
#include <string>

#include <rdma/ib_verbs.h>

namespace ocq_sim {

class Provider {
public:
	virtual ~Provider() = default;
	virtual const char *name() const = 0;
	virtual enum rdma_driver_id driver() const { return RDMA_DRIVER_RXE; }

	// The HCA adds a completion (producer context).
	void push(const struct ib_wc &wc);
	// ib_poll_cq() and ib_req_notify_cq().
	int poll(int n, struct ib_wc *wc);
	int notify(int flags);
	// ib_destroy_cq(): wait for callbacks in flight, then raise no more.
	void destroy();

	// A callback context takes one queued event, if the CQ still exists.
	bool event_ready() const { return pending_ > 0 && !destroyed_; }
	void take_event() { pending_--; in_flight_++; }
	// A spurious callback, not caused by an event; false once destroyed.
	bool start_spurious();
	void callback_done();

	size_t depth() const { return cq_.size(); }
	bool armed() const { return armed_; }
	bool destroyed() const { return destroyed_; }
	int pending() const { return pending_; }
	int in_flight() const { return in_flight_; }
	long polls() const { return polls_; }
	long notifies() const { return notifies_; }
	long raised() const { return raised_; }
	long dropped() const { return dropped_; }

protected:
	// The notify semantics: arm as @flags asks; the verb's return value.
	virtual int arm(int flags) = 0;
	// A failing verb: the -errno that the @nth call of ib_poll_cq() (@poll)
	// or ib_req_notify_cq() returns, or 0.
	virtual int fail_verb(bool poll, long nth) { (void)poll; (void)nth; return 0; }
	// An entry was added: raise an event if armed.
	virtual void added();
	// Raise the completion handler once (lossy models may drop it).
	virtual void raise();

	std::deque<struct ib_wc> cq_;
	bool armed_ = false;
	int pending_ = 0;
	int in_flight_ = 0;
	bool destroyed_ = false;
	long polls_ = 0;
	long notifies_ = 0;
	long raised_ = 0;
	long dropped_ = 0;
};

// Names accepted by make_provider(), in the order of the case table.
extern const char *const provider_names[];
std::unique_ptr<Provider> make_provider(const std::string &name);

} // namespace ocq_sim

#endif // OCQ_SIM_PROVIDER_H
