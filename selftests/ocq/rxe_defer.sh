#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 300
# The deferred re-arm on rxe0: RC QP pairs streaming SEND_WITH_IMM on one ordered CQ,
# strict (one pair) and flow (two pairs), each on an OCQ without and then with
# defer_usecs: every completion once, in posting order, the receives' data in sequence,
# the receives left flushed in order (nothing lost); with it, runs were deferred and
# the events per 1000 completions are at most half of those without.
. /selftests/lib/ksft.sh

loaded=
if ! grep -q '^ib_ocq ' /proc/modules; then
	insmod /ko/ib_ocq.ko || ksft_fail "insmod ib_ocq.ko"
	loaded=1
fi
[ -e /sys/class/infiniband/rxe0 ] || ksft_fail "no rxe0"
rc=0
insmod_test ocq_test_rxe_defer.ko || rc=$KSFT_FAIL
live=$(ksft_ocq_count live) || live="no count"
[ "$live" = 0 ] || { echo "FAIL: $live ordered CQ(s) still live"; rc=$KSFT_FAIL; }
if [ -n "$loaded" ] && ! rmmod ib_ocq; then
	echo "FAIL: rmmod ib_ocq"
	rc=$KSFT_FAIL
fi
exit $rc
