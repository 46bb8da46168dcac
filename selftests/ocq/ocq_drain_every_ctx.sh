#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 600
# ib_drain_qp() mid-stream, and every QP flushed (moved to IB_QPS_ERR) then drained,
# on ordered CQs of every poll context (workqueue, unbound, softirq, direct) and
# every mode direct allows (strict, flow, parallel; direct: strict and flow): each
# drain returns after all of its QP's completions, everything posted completes
# exactly once (success or flush) in posting order, done() in the promised context.
. /selftests/ocq/rxe_lib.sh

[ -e /sys/class/infiniband/rxe0 ] || ksft_fail "no rxe0"
loaded=
if ! grep -q '^ib_ocq ' /proc/modules; then
	insmod /ko/ib_ocq.ko || ksft_fail "insmod ib_ocq.ko"
	loaded=1
fi
fail=0
for c in workqueue unbound softirq direct; do
	echo "== poll_ctx=$c"
	(RXE_OCQ_ARGS="poll_ctx=$c" rxe_ocq_tests drain flush) || fail=1
done
[ -n "$loaded" ] && { rmmod ib_ocq || fail=1; }
[ $fail = 0 ] || exit $KSFT_FAIL
exit $KSFT_PASS
