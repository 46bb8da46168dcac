# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# ocq_upstream_lib.sh - shared by ocq_upstream_free and ocq_upstream_destroy (source it).
#
#   upstream_run CALL ERE   run ocq_upstream_test.ko call=CALL (see
#                           selftests/modules/ocq_upstream_main.c) with panic_on_warn
#                           off; return 0 if it passed, exactly one kernel WARNING came,
#                           matching ERE, and ib_ocq's live and allocs counts are back
#                           where they were.  The test's header declares the WARNING
#                           ("# expect-warn:") for the runner.
#
# The WARN_ON_ONCE()s of ib_core warn once a boot: debugfs clear_warn_once re-arms
# them first, so that this test's first call is the one that warns.
. /selftests/lib/ksft.sh

UP_D=/sys/kernel/debug

upstream_run() {
	local call=$1 want=$2 loaded= rc=$KSFT_PASS mark warns n live0 allocs0 live1 allocs1

	[ -e $UP_D/clear_warn_once ] || ksft_fail "no $UP_D/clear_warn_once"
	if ! grep -q '^ib_ocq ' /proc/modules; then
		insmod /ko/ib_ocq.ko || ksft_fail "insmod ib_ocq.ko"
		loaded=1
	fi
	live0=$(cat $UP_D/ib_ocq/live) || ksft_fail "no $UP_D/ib_ocq/live"
	allocs0=$(cat $UP_D/ib_ocq/allocs) || ksft_fail "no $UP_D/ib_ocq/allocs"
	echo 1 > $UP_D/clear_warn_once || ksft_fail "cannot write $UP_D/clear_warn_once"
	mark=$(ksft_mark)
	ksft_without_panic_on_warn insmod_test ocq_upstream_test.ko call="$call" ||
		rc=$KSFT_FAIL
	warns=$(ksft_kmsg_since "$mark" | grep 'WARNING:')
	n=$(echo "$warns" | grep -c 'WARNING:')
	echo "$warns" | sed '/^$/d; s/^/kernel: /'
	if [ "$n" != 1 ] || ! echo "$warns" | grep -Eq -- "$want"; then
		echo "FAIL: $n kernel WARNING(s) during the calls, expected exactly one matching /$want/"
		rc=$KSFT_FAIL
	fi
	live1=$(cat $UP_D/ib_ocq/live) || ksft_fail "no $UP_D/ib_ocq/live"
	allocs1=$(cat $UP_D/ib_ocq/allocs) || ksft_fail "no $UP_D/ib_ocq/allocs"
	echo "ordered CQs live $live0 -> $live1, allocations $allocs0 -> $allocs1"
	if [ "$live1" != "$live0" ] || [ "$allocs1" != "$allocs0" ]; then
		echo "FAIL: ib_ocq's live or allocs count did not come back"
		rc=$KSFT_FAIL
	fi
	if [ -n "$loaded" ] && ! rmmod ib_ocq; then
		echo "FAIL: rmmod ib_ocq"
		rc=$KSFT_FAIL
	fi
	return $rc
}
