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
//
// A completion is solicited or not (the IBA's solicited event bit, which
// struct ib_wc does not carry: the provider keeps it beside each entry);
// an unsuccessful one counts as solicited.  An arm is IB_CQ_NEXT_COMP,
// which any new entry raises, or IB_CQ_SOLICITED, which only a solicited
// one does; the others wait in the CQ.
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

	// The HCA adds a completion (producer context); @solicited: its work
	// request asked for a solicited event.
	void push(const struct ib_wc &wc, bool solicited = false);
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
	// entries added to an armed CQ that did not raise: a solicited-only
	// arm and an entry that is not solicited
	long held() const { return held_; }
	// arms with IB_CQ_REPORT_MISSED_EVENTS that returned 0 with entries
	// left in the CQ
	long quiet_reports() const { return quiet_reports_; }

protected:
	// The notify semantics: arm as @flags asks; the verb's return value.
	virtual int arm(int flags) = 0;
	// Armed for what @flags asks: the next entry, or the next solicited
	// one (IB_CQ_SOLICITED, as the providers read IB_CQ_SOLICITED_MASK).
	void arm_for(int flags);
	// Whether an entry of solicitedness @sol raises the arm there is.
	bool raises(bool sol) const { return !arm_solicited_ || sol; }
	// Whether an unpolled entry would raise an arm of @flags.
	bool holds_match(int flags) const;
	// Whether an unpolled entry is solicited (or unsuccessful).
	bool holds_solicited() const;
	// A failing verb: the -errno that the @nth call of ib_poll_cq() (@poll)
	// or ib_req_notify_cq() returns, or 0.
	virtual int fail_verb(bool poll, long nth) { (void)poll; (void)nth; return 0; }
	// An entry was added: raise an event if armed.
	virtual void added();
	// Raise the completion handler once (lossy models may drop it).
	virtual void raise();

	std::deque<struct ib_wc> cq_;
	std::deque<bool> solicited_;	// beside each entry of cq_
	bool armed_ = false;
	bool arm_solicited_ = false;	// the arm is IB_CQ_SOLICITED
	int pending_ = 0;
	int in_flight_ = 0;
	bool destroyed_ = false;
	long polls_ = 0;
	long notifies_ = 0;
	long raised_ = 0;
	long dropped_ = 0;
	long held_ = 0;
	long quiet_reports_ = 0;
};

// The models every mode runs with (the matrix), in the order of the case
// table; make_provider() also knows "eio" and "sol-narrow".
extern const char *const provider_names[];
std::unique_ptr<Provider> make_provider(const std::string &name);

} // namespace ocq_sim

#endif // OCQ_SIM_PROVIDER_H
