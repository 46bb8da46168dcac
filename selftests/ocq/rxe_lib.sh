# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# rxe_lib.sh - shared by the rxe_ocq_* tests (source it: . /selftests/ocq/rxe_lib.sh).
#
#   rxe_ocq_tests TEST...   run ocq_test_rxe.ko test=TEST for each TEST, see
#                           selftests/modules/ocq_test_rxe_main.c, then exit: 0 if all
#                           passed, 1 if one failed or skipped a subtest (the guest
#                           always has rxe0: a missing one is a failure)
#                           RXE_OCQ_ARGS: more module parameters, e.g.
#                           "poll_ctx=direct count=50000"
#   ocq_ctx_tests CTX       the ocq_ctx_* tests of poll context CTX, then exit
#   rxe_module_test KO ARG... run the test module KO with ARGs once, then exit: 0 if
#                           it passed and left no ordered CQ live
#
# Loads ib_ocq.ko first unless it is loaded (and unloads it after), logs rxe0's
# non-zero counters (RNR NAKs, retries, ...) and fails when an ordered CQ the tests
# made is still live.
. /selftests/lib/ksft.sh

rxe_ocq_counters() {
	local hw=/sys/class/infiniband/rxe0/ports/1/hw_counters

	[ -d $hw ] || return 0
	echo "rxe0 counters:" $(cd $hw && for f in *; do
		v=$(cat "$f"); [ "$v" = 0 ] || echo "$f=$v"; done)
}

rxe_ocq_tests() {
	local loaded= fail=0 t live

	if ! grep -q '^ib_ocq ' /proc/modules; then
		insmod /ko/ib_ocq.ko || ksft_fail "insmod ib_ocq.ko"
		loaded=1
	fi
	for t in "$@"; do
		# shellcheck disable=SC2086 # word splitting intended
		insmod_test ocq_test_rxe.ko test="$t" $RXE_OCQ_ARGS
		case $? in
		0) ;;
		4) echo "FAIL: test=$t skipped a subtest: is rxe0 missing?"; fail=1 ;;
		*) fail=1 ;;
		esac
	done
	rxe_ocq_counters
	if ! live=$(ksft_ocq_count live); then
		echo "FAIL: no count of live ordered CQs"
		fail=1
	elif [ "$live" != 0 ]; then
		echo "FAIL: $live ordered CQ(s) still live"
		fail=1
	fi
	if [ -n "$loaded" ] && ! rmmod ib_ocq; then
		echo "FAIL: rmmod ib_ocq"
		fail=1
	fi
	[ $fail = 1 ] && exit $KSFT_FAIL
	exit $KSFT_PASS
}

# ocq_ctx_tests CTX: the ocq_ctx_* tests, poll context CTX (workqueue, unbound,
# softirq, direct): fake_weak with 10^5 completions per mode, then rxe0's strict with
# 5*10^4 SENDs, flow and parallel; exits 0 if all passed.
ocq_ctx_tests() {
	local ctx=$1 loaded= fail=0

	. /selftests/ocq/fake_lib.sh
	[ -e /sys/class/infiniband/rxe0 ] || ksft_fail "no rxe0"
	if ! grep -q '^ib_ocq ' /proc/modules; then
		insmod /ko/ib_ocq.ko || ksft_fail "insmod ib_ocq.ko"
		loaded=1
	fi
	fake_run fake_weak poll_ctx="$ctx" completions=100000 || fail=1
	insmod_test ocq_test_rxe.ko test=strict poll_ctx="$ctx" count=50000 || fail=1
	(RXE_OCQ_ARGS="poll_ctx=$ctx" rxe_ocq_tests flow parallel) || fail=1
	[ -n "$loaded" ] && { rmmod ib_ocq || fail=1; }
	[ $fail = 0 ] || exit $KSFT_FAIL
	exit $KSFT_PASS
}

rxe_module_test() {
	local ko=$1 loaded= rc=$KSFT_PASS live

	shift
	if ! grep -q '^ib_ocq ' /proc/modules; then
		insmod /ko/ib_ocq.ko || ksft_fail "insmod ib_ocq.ko"
		loaded=1
	fi
	[ -e /sys/class/infiniband/rxe0 ] || ksft_fail "no rxe0"
	insmod_test "$ko" "$@" || rc=$KSFT_FAIL
	rxe_ocq_counters
	live=$(ksft_ocq_count live) || live="no count"
	[ "$live" = 0 ] || { echo "FAIL: $live ordered CQ(s) still live"; rc=$KSFT_FAIL; }
	if [ -n "$loaded" ] && ! rmmod ib_ocq; then
		echo "FAIL: rmmod ib_ocq"
		rc=$KSFT_FAIL
	fi
	exit $rc
}
