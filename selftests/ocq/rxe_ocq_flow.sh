#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 300
# Four RC QP pairs sharing one ordered CQ: IB_OCQ_FLOW (each QP's completions in
# order, its done() never overlapping; the CPUs the flows ran on are reported), then
# IB_OCQ_PARALLEL (process() concurrent, done() committing in order, never overlapping).
. /selftests/lib/ksft.sh

# ib_ocq.ko first (insmod resolves no dependencies); unloaded again if we loaded it
loaded=
if ! grep -q '^ib_ocq ' /proc/modules; then
	insmod /ko/ib_ocq.ko || ksft_fail "insmod ib_ocq.ko"
	loaded=1
fi
fail=0 pass=0
insmod_test ocq_test_rxe.ko test=flow
case $? in 0) pass=1 ;; 4) ;; *) fail=1 ;; esac
insmod_test ocq_test_rxe.ko test=parallel
case $? in 0) pass=1 ;; 4) ;; *) fail=1 ;; esac
# for the log: rxe0's non-zero counters since it was created (RNR NAKs, retries, ...)
hw=/sys/class/infiniband/rxe0/ports/1/hw_counters
[ -d $hw ] && echo "rxe0 counters:" $(cd $hw && for f in *; do
	v=$(cat "$f"); [ "$v" = 0 ] || echo "$f=$v"; done)
# every ordered CQ the tests made was freed
live=$(cat /sys/kernel/debug/ib_ocq/live 2>/dev/null)
[ "${live:-0}" = 0 ] || { echo "FAIL: $live ordered CQ(s) still live"; fail=1; }
if [ -n "$loaded" ] && ! rmmod ib_ocq; then
	echo "FAIL: rmmod ib_ocq"
	fail=1
fi
[ $fail = 1 ] && exit $KSFT_FAIL
[ $pass = 1 ] && exit $KSFT_PASS
exit $KSFT_SKIP
