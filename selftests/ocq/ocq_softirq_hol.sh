#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 120
# The head-of-line bound on IB_POLL_SOFTIRQ (selftests/modules/ocq_softirq_main.c,
# test=hol, fake provider): an IB_OCQ_FLOW OCQ of two domains; while flow A's domain
# works through a backlog (32, 96, 200 completions pushed at once), a completion of
# flow B, in the other domain, lands in the CQ during one of A's done() calls, again
# and again at each phase of A's batches: B's done() comes after at most
# 2 * IB_OCQ_HOL_DONES of A's done() calls, counting the one it landed in (what
# ib_ocq.h states for softirq), whatever the backlog.  Counted in done() calls: every
# unit runs on the one CPU that took the event, one after another (checked).
. /selftests/ocq/fake_lib.sh

loaded=
if ! grep -q '^ib_ocq ' /proc/modules; then
	insmod /ko/ib_ocq.ko || ksft_fail "insmod ib_ocq.ko"
	loaded=1
fi
rc=$KSFT_PASS
insmod_test ocq_softirq_test.ko test=hol || rc=$KSFT_FAIL
live=$(cat /sys/kernel/debug/ib_ocq/live) || ksft_fail "no ib_ocq live count"
[ "$live" = 0 ] || { echo "FAIL: $live ordered CQs live"; rc=$KSFT_FAIL; }
if [ -n "$loaded" ] && ! rmmod ib_ocq; then
	echo "FAIL: rmmod ib_ocq"
	rc=$KSFT_FAIL
fi
exit $rc
