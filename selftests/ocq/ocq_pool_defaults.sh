#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 120
# The pool's default mode per poll context (selftests/modules/ocq_api_main.c,
# test=pool_defaults, on rxe0): ib_ocq_cq_pool_get() with NULL attr gives an
# IB_OCQ_STRICT CQ on IB_POLL_SOFTIRQ, where irq_poll runs every unit on one CPU and
# flow domains would overlap nothing, and an IB_OCQ_FLOW one on IB_POLL_WORKQUEUE and
# IB_POLL_UNBOUND_WORKQUEUE; an explicit IB_OCQ_FLOW on softirq stays flow.  Read in
# each CQ's debugfs info ("mode", "poll_ctx", "pooled 1") while the module holds them.
# The four stay in the pool once the module put its room back (ib_ocq is loaded fresh:
# they are its only ordered CQs), and go with ib_ocq.
. /selftests/lib/ksft.sh
. /selftests/lib/rxe.sh

D=/sys/kernel/debug/ib_ocq
MOD=ocq_api_test

rxe_present || ksft_fail "no rxe0"
if grep -q '^ib_ocq ' /proc/modules; then
	rmmod ib_ocq || ksft_fail "ib_ocq is loaded and in use: no fresh pool"
fi
insmod /ko/ib_ocq.ko || ksft_fail "insmod ib_ocq.ko"
rc=$KSFT_PASS
mark=$(ksft_mark)
if ! insmod /ko/$MOD.ko test=pool_defaults; then
	ksft_kmsg_since "$mark" $MOD
	rmmod ib_ocq
	ksft_fail "insmod $MOD test=pool_defaults"
fi
ktap=$(ksft_kmsg_since "$mark" $MOD)
echo "$ktap"
# kind, poll_ctx as info names it, the mode expected
for want in "softirq softirq strict" "workqueue workqueue flow" \
	"unbound unbound_workqueue flow" "softirq_flow softirq flow"; do
	set -- $want
	id=$(echo "$ktap" | sed -n "s/^# pooled $1 cq_id //p")
	info=$(cat $D/ocq*-rxe0-cq"$id"/info 2>/dev/null)
	echo "$info" | sed "s/^/$1: /" | grep -E ": (poll_ctx|mode|pooled) "
	for line in "poll_ctx $2" "mode $3" "pooled 1"; do
		if [ -z "$id" ] || ! echo "$info" | grep -qx "$line"; then
			echo "FAIL: the pooled CQ '$1' (cq_id ${id:-?}) lacks '$line'"
			rc=$KSFT_FAIL
		fi
	done
done
rmmod $MOD || { echo "FAIL: rmmod $MOD"; rc=$KSFT_FAIL; }
live=$(cat $D/live) || ksft_fail "no $D/live"
echo "ordered CQs of the pool: $live"
[ "$live" = 4 ] || { echo "FAIL: $live ordered CQs in the pool, expected the 4 made"; rc=$KSFT_FAIL; }
rmmod ib_ocq || { echo "FAIL: rmmod ib_ocq"; rc=$KSFT_FAIL; }
exit $rc
