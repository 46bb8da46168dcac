#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 60
# expect-warn: ib_ocq_(process_cq_direct|direct_run|direct_dispatch)\+0x
# IB_POLL_DIRECT drops a completion without an ib_cqe as ib_process_cq_direct() does,
# and warns once when it was a successful one, as ib_cq does
# (selftests/modules/ocq_api_main.c, test=direct_no_cqe, fake provider): a flushed
# completion without one, a successful one without, one with, a second successful one
# without, each polled with ib_ocq_process_cq_direct(): all four counted, one done(),
# and exactly one WARNING in the kernel log, from ocq's direct dispatch.  The guest
# boots with panic_on_warn=1: the test turns it off for the call.
. /selftests/ocq/fake_lib.sh

D=/sys/kernel/debug
rc=$KSFT_PASS
[ -e $D/clear_warn_once ] || ksft_fail "no $D/clear_warn_once"
loaded=
if ! grep -q '^ib_ocq ' /proc/modules; then
	insmod /ko/ib_ocq.ko || ksft_fail "insmod ib_ocq.ko"
	loaded=1
fi
# a WARN_ON_ONCE() warns once a boot: re-armed, this test's is the one
echo 1 > $D/clear_warn_once || ksft_fail "cannot write $D/clear_warn_once"
mark=$(ksft_mark)
ksft_without_panic_on_warn insmod_test ocq_api_test.ko test=direct_no_cqe || rc=$KSFT_FAIL
warns=$(ksft_kmsg_since "$mark" | grep 'WARNING:')
n=$(echo "$warns" | grep -c 'WARNING:')
echo "$warns" | sed '/^$/d; s/^/kernel: /'
if [ "$n" != 1 ] || ! echo "$warns" | grep -Eq 'ib_ocq_(process_cq_direct|direct_run|direct_dispatch)\+0x'; then
	echo "FAIL: $n kernel WARNING(s), expected exactly one, from ocq's direct dispatch"
	rc=$KSFT_FAIL
fi
live=$(cat $D/ib_ocq/live) || ksft_fail "no $D/ib_ocq/live"
[ "$live" = 0 ] || { echo "FAIL: $live ordered CQs live"; rc=$KSFT_FAIL; }
if [ -n "$loaded" ] && ! rmmod ib_ocq; then
	echo "FAIL: rmmod ib_ocq"
	rc=$KSFT_FAIL
fi
exit $rc
