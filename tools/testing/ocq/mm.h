// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The weak memory model of the checker; see mm.cpp.
#ifndef OCQ_SIM_MM_H
#define OCQ_SIM_MM_H

namespace ocq_sim {

// Start an execution: forget every location; @on: model weak memory (else
// every shimmed access is a plain sequentially consistent one).
void mm_reset(bool on);
// Loads that returned a store older than the latest, this execution.
long mm_stale_reads();
// Memory [p, p + n) is new or freed: forget its locations.
void mm_forget(const void *p, unsigned long n);
// Host synchronisation through channel @ch (a work item's queueing, the
// end of its run, the CQ's lock, the ULP's own locking): release the
// running context's view into it, acquire it into the view, or both.
enum { MM_CH_CQ_LOCK = 1000, MM_CH_ULP = 1001, MM_CH_CALLBACKS = 1002, MM_CH_RCU = 1003, MM_CH_DONE = 2000 };
void mm_release(int ch);
// cpu_relax(): the running context's view catches up with every latest
// store; true if it was behind (the spin loop may see something new).
bool mm_catch_up();
void mm_acquire(int ch);

} // namespace ocq_sim

#endif // OCQ_SIM_MM_H
