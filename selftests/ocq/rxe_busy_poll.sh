#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 300
# Busy polls on rxe0: RC QP pairs streaming SEND_WITH_IMM on one ordered CQ, strict (one
# pair) and flow (two pairs), each on an OCQ without and then with suspend_usecs and a
# kthread that calls ib_ocq_busy_poll() for as long as the stream runs: every completion
# once, in posting order, the receives' data in sequence, the receives left flushed in
# order (nothing lost); with it, the busy polls took most completions and suspended the
# CQ, and the events per 1000 completions are at most a tenth of those without (an empty
# busy poll keeps the suspension).
. /selftests/lib/ksft.sh

loaded=
if ! grep -q '^ib_ocq ' /proc/modules; then
	insmod /ko/ib_ocq.ko || ksft_fail "insmod ib_ocq.ko"
	loaded=1
fi
[ -e /sys/class/infiniband/rxe0 ] || ksft_fail "no rxe0"
rc=0
insmod_test ocq_test_rxe_defer.ko test=busy || rc=$KSFT_FAIL
live=$(ksft_ocq_count live) || live="no count"
[ "$live" = 0 ] || { echo "FAIL: $live ordered CQ(s) still live"; rc=$KSFT_FAIL; }
if [ -n "$loaded" ] && ! rmmod ib_ocq; then
	echo "FAIL: rmmod ib_ocq"
	rc=$KSFT_FAIL
fi
exit $rc
