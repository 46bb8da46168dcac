#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 300
# Consumer-driven suspension (ib_ocq_attr.suspend_usecs, ib_ocq_busy_poll()), strict and
# flow, workqueue and unbound, on a fake CQ whose events are moderated (1 ms): a kthread
# busy-polls while a stream of 2000 completions comes, and the stream raises no event after
# the first (at most one per 50 completions), the busy polls take most completions,
# suspend the CQ, are counted (busy_polls, contended, suspends), and everything is
# delivered once and in order; once the polls stop, the timer's run arms the CQ and a new
# completion comes through one event and a run.  An empty busy poll keeps the suspension
# (NAPI's rule): on an idle armed CQ it returns 0, arms nothing and suspends, and the
# timer's run arms the CQ after; after a suspension, empty busy polls within a tenth of it
# keep the CQ unarmed with no run between them, and once they stop the timer's run arms it.  ib_ocq_busy_poll() from done() is -EBUSY (contended), on a
# paused OCQ -EAGAIN, without suspend_usecs or on IB_POLL_DIRECT -EOPNOTSUPP, with a budget
# of 0 or less, no CQ or a CQ ocq did not make -EINVAL.  suspend_usecs above its limit,
# with a postponed arm or IB_OCQ_DEFER_DIM, on IB_POLL_SOFTIRQ or IB_POLL_DIRECT is refused
# with -EINVAL, nothing left behind.  Busy polls at random against a 20 us timer and the
# events: once, in order, no done() overlap.  32 OCQs freed right after a busy poll took a
# burst, with the suspension's timer pending: no done() after the free, nothing left.
. /selftests/ocq/fake_lib.sh

fake_run fake_suspend
