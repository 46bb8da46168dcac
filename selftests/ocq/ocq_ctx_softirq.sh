#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 500
# Ordered CQs from ib_ocq_alloc_cq(), poll context
# IB_POLL_SOFTIRQ: done() in the softirq (irq_poll).
# Fake provider (fake_weak): 10^5 completions per mode, strict, flow and parallel,
# pushed by a producer per CPU. rxe0, loopback RC pairs: strict (one pair, 5*10^4
# SENDs: 10^5 completions), flow and parallel (four pairs, 2*10^4 SENDs). Every
# completion once, in order per domain, no overlapping done() where the mode forbids
# it, done() always in the promised context, the OCQ's count equal to what done() saw.
# On the fake provider done() also never runs inside a call of the completion handler
# (the producers call it from their tasks a third of the time) nor inside a task's
# ib_ocq_resume(): fake_pause_resume on softirq first, whose pauser kthread pauses
# and resumes the OCQ while it streams (and, with IB_OCQ_POSTPONE_ARM, resumes are
# the only arms). A host that runs the softirq at a local_bh_enable() of its own, in
# the caller, fails both.
. /selftests/ocq/rxe_lib.sh
. /selftests/ocq/fake_lib.sh

rc=$KSFT_PASS
fake_run fake_pause_resume poll_ctx=softirq || rc=$KSFT_FAIL
(ocq_ctx_tests softirq) || rc=$KSFT_FAIL
exit $rc
