#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 120
# ib_ocq_alloc_cq_any() on rxe0, on a fresh ib_ocq: four CQs per vector (of as many
# vectors as there are online CPUs) land four on each; two freed on vector 0, the
# next two land there again.
. /selftests/lib/ksft.sh

[ -e /sys/class/infiniband/rxe0 ] || ksft_fail "no rxe0"
# a fresh ib_ocq: no ordered CQ of an earlier test counts on a vector
if grep -q '^ib_ocq ' /proc/modules; then
	rmmod ib_ocq || ksft_fail "ib_ocq is loaded and in use"
fi
insmod /ko/ib_ocq.ko || ksft_fail "insmod ib_ocq.ko"
rc=0
insmod_test ocq_pool_test.ko test=alloc_any || rc=$KSFT_FAIL
live=$(cat /sys/kernel/debug/ib_ocq/live)
[ "$live" = 0 ] || { echo "FAIL: $live ordered CQs left"; rc=$KSFT_FAIL; }
rmmod ib_ocq || { echo "FAIL: rmmod ib_ocq"; rc=$KSFT_FAIL; }
exit $rc
