// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The weak memory model of the checker; see mm.cpp.
#ifndef OCQ_SIM_MM_H
#define OCQ_SIM_MM_H

#include <string>

namespace ocq_sim {

// Start an execution: forget every location; @on: model weak memory (else
// every shimmed access is a plain sequentially consistent one);
// @fence_points: every fence is a point of the schedule as well.
void mm_reset(bool on, bool fence_points = false);
// Loads that returned a store older than the latest, this execution.
long mm_stale_reads();
// Memory [p, p + n) is new or freed: forget its locations.
void mm_forget(const void *p, unsigned long n);
// Host synchronisation through channel @ch (a work item's queueing, the
// end of its run, the CQ's lock, the ULP's own locking): release the
// running context's view into it, acquire it into the view, or both.
enum {
	MM_CH_CQ_LOCK = 1000,
	MM_CH_ULP = 1001,
	MM_CH_CALLBACKS = 1002,
	MM_CH_RCU = 1003,
	MM_CH_TIMER = 1004,	 /* hrtimer_start() before its callback */
	MM_CH_TIMER_DONE = 1005, /* the callback's end before hrtimer_cancel() */
	MM_CH_LEASE = 1006,	 /* the ULP's resume before the lease's next
				  * tick: time (pause_ms), not the host's
				  * synchronisation */
	MM_CH_DONE = 2000
};
void mm_release(int ch);
// cpu_relax(): the running context's view catches up with every latest
// store; true if it was behind (the spin loop may see something new).
bool mm_catch_up();
void mm_acquire(int ch);

// Plain shared memory the engine accesses with no shim: the ring slots and
// the poll batch.  mm_watch() registers [p, p + n) as one slot; its plain
// writes are found at the writer's next scheduling point (mm_scan()), its
// reads are reported by the reader (mm_plain_read()).  Every access must
// happen after the slot's last write and every write after the slot's
// last read (no data race); the first access that does not is kept as a
// message for mm_race().
void mm_watch(const void *p, unsigned long n, const char *name);
void mm_scan();
void mm_plain_read(const void *p, const char *who);
// Writes of a watched slot after a read of it, this execution.
long mm_reuses();
// The first data race of this execution, taken (empty if none).
std::string mm_race();

} // namespace ocq_sim

#endif // OCQ_SIM_MM_H
