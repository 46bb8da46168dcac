#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 400
# Allocation failures on every create path of ib_ocq_alloc(): for N = 1, 2, ... the
# plumbing's fail_nth (debugfs) fails the Nth allocation, the provider's CQ creation
# included, until a create succeeds. Each failure must be -ENOMEM and leave the
# plumbing's allocations and live ordered CQs at their baseline, and the provider's
# CQ destroyed (the fake provider's count; rxe0's CQs in the restrack summary); the first success on the fake device streams completions
# with random pauses through the OCQ (on rxe0: pause, resume), and the free follows,
# all with the injection still armed for the next allocation, which must not come.
. /selftests/lib/ksft.sh
. /selftests/lib/rxe.sh

D=/sys/kernel/debug/ib_ocq
MAX_N=100
FAKE_PATHS="strict strict_watchdog strict_postpone flow flow_1 flow_4 flow_4_watchdog_postpone
	parallel parallel_4 parallel_watchdog_postpone"
RXE_PATHS="strict strict_watchdog strict_postpone flow_4 flow_4_watchdog_postpone parallel
	parallel_watchdog_postpone"

loaded=
if ! grep -q '^ib_ocq ' /proc/modules; then
	insmod /ko/ib_ocq.ko || ksft_fail "insmod ib_ocq.ko"
	loaded=1
fi
[ -w $D/fail_nth ] || ksft_fail "no $D/fail_nth"
trap 'echo 0 > $D/fail_nth' EXIT
allocs_start=$(ksft_ocq_count allocs) && live_start=$(ksft_ocq_count live) ||
	ksft_fail "no count of ib_ocq's allocations or live ordered CQs (debugfs)"
echo "baseline: allocs $allocs_start, live $live_start"

# cqs DEVICE: the device's CQs in the restrack summary (0 for the fake device)
cqs() {
	[ "$1" = fake ] && { echo 0; return; }
	rdma resource show | sed -n "s/^[0-9]*: $1: .* cq \([0-9]*\) .*/\1/p"
}

# try_path DEVICE PATH: fail N = 1, 2, ... until the create succeeds; 0 if all is well
try_path() {
	local dev=$1 path=$2 n=1 out rc res left arg=
	local allocs0 live0 cq0 allocs live cq

	[ "$dev" = fake ] || arg="device=$dev"
	while [ $n -le $MAX_N ]; do
		allocs0=$(ksft_ocq_count allocs) && live0=$(ksft_ocq_count live) ||
			{ echo "FAIL: no count of ib_ocq's allocations or live ordered CQs"; return 1; }
		cq0=$(cqs "$dev")
		echo $n > $D/fail_nth
		out=$(insmod_test ocq_test_fake.ko scenario=alloc_fail path="$path" \
			completions=200 $arg)
		rc=$?
		left=$(cat $D/fail_nth)
		echo 0 > $D/fail_nth
		allocs=$(ksft_ocq_count allocs) && live=$(ksft_ocq_count live) ||
			{ echo "FAIL: no count of ib_ocq's allocations or live ordered CQs"; return 1; }
		cq=$(cqs "$dev")
		res=$(echo "$out" | sed -n 's/^# alloc_fail: .* result=\(-*[0-9]*\)$/\1/p')
		if [ $rc != 0 ] || [ -z "$res" ]; then
			echo "$out"
			echo "FAIL: $dev $path: N=$n: the test module failed"
			return 1
		fi
		if [ "$allocs" != "$allocs0" ] || [ "$live" != "$live0" ] ||
		   [ "$cq" != "$cq0" ]; then
			echo "$out"
			echo "FAIL: $dev $path: N=$n (result $res) leaked:" \
				"allocs $allocs0 -> $allocs, live $live0 -> $live, CQs $cq0 -> $cq"
			return 1
		fi
		case $res in
		-12)
			if [ "$left" != 0 ]; then
				echo "FAIL: $dev $path: N=$n: -ENOMEM without the injected failure"
				return 1
			fi
			;;
		0)
			if [ "$left" != 1 ]; then
				echo "FAIL: $dev $path: N=$n: allocated after the create" \
					"(fail_nth $n -> $left)"
				return 1
			fi
			echo "$dev $path: $((n - 1)) allocation points:" \
				"N=1..$((n - 1)) fail cleanly with -ENOMEM, N=$n works"
			return 0
			;;
		*)
			echo "$out"
			echo "FAIL: $dev $path: N=$n: ib_ocq_alloc() returned $res, not -ENOMEM"
			return 1
			;;
		esac
		n=$((n + 1))
	done
	echo "FAIL: $dev $path: still failing at N=$MAX_N"
	return 1
}

fail=0
for p in $FAKE_PATHS; do
	try_path fake "$p" || fail=1
done
rxe_present || rxe_create >/dev/null 2>&1
if rxe_present; then
	[ -n "$(cqs "$RXE_DEV")" ] || { echo "FAIL: no CQ count of $RXE_DEV"; fail=1; }
	for p in $RXE_PATHS; do
		try_path "$RXE_DEV" "$p" || fail=1
	done
else
	echo "FAIL: $RXE_DEV not present"
	fail=1
fi
allocs=$(ksft_ocq_count allocs) && live=$(ksft_ocq_count live) ||
	ksft_fail "no count of ib_ocq's allocations or live ordered CQs (debugfs)"
if [ "$allocs" != "$allocs_start" ] || [ "$live" != "$live_start" ]; then
	echo "FAIL: leaked: allocs $allocs_start -> $allocs, live $live_start -> $live"
	fail=1
fi
if [ -n "$loaded" ] && ! rmmod ib_ocq; then
	echo "FAIL: rmmod ib_ocq"
	fail=1
fi
[ $fail = 0 ] || exit $KSFT_FAIL
exit $KSFT_PASS
