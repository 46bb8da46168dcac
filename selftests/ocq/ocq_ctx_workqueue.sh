#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 400
# Ordered CQs from ib_ocq_alloc_cq(), poll context
# IB_POLL_WORKQUEUE: done() in a workqueue worker.
# Fake provider (fake_weak): 10^5 completions per mode, strict, flow and parallel,
# pushed by a producer per CPU. rxe0, loopback RC pairs: strict (one pair, 5*10^4
# SENDs: 10^5 completions), flow and parallel (four pairs, 2*10^4 SENDs). Every
# completion once, in order per domain, no overlapping done() where the mode forbids
# it, done() always in the promised context, the OCQ's count equal to what done() saw.
. /selftests/ocq/rxe_lib.sh
. /selftests/ocq/fake_lib.sh

[ -e /sys/class/infiniband/rxe0 ] || ksft_fail "no rxe0"
loaded=
if ! grep -q '^ib_ocq ' /proc/modules; then
	insmod /ko/ib_ocq.ko || ksft_fail "insmod ib_ocq.ko"
	loaded=1
fi
fail=0
fake_run fake_weak poll_ctx=workqueue completions=100000 || fail=1
insmod_test ocq_test_rxe.ko test=strict poll_ctx=workqueue count=50000 || fail=1
(RXE_OCQ_ARGS="poll_ctx=workqueue" rxe_ocq_tests flow parallel) || fail=1
[ -n "$loaded" ] && { rmmod ib_ocq || fail=1; }
[ $fail = 0 ] || exit $KSFT_FAIL
exit $KSFT_PASS
