#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 900
# The demo's guarantees hold while other RDMA users share rxe0 and the workqueues.
# For each of ocq-flow, ocq-strict and ocq-parallel: a demo run streams on the path
# while, concurrently,
#   - ocq_test_rxe.ko (the same mode: flow, strict, parallel) streams SEND_WITH_IMM
#     over its own QPs on its own ordered CQ: another ib_ocq user, on ib_ocq's
#     workqueues;
#   - ocq_sq_test.ko test=stream streams SENDs at full SQ depth on CQs from
#     ib_alloc_cq(IB_POLL_WORKQUEUE): an upstream ib_cq user, on ib_comp_wq.
# Both test modules must pass (their KTAP: ordering, exactly-once, data, no post
# failure, no CQ overrun, ...); the demo must still be running when both are done,
# have made progress while they ran, and end clean when stopped: 0 errors, reorders,
# lost, duplicated. ib_ocq's live and allocs return to their baseline after each round.
. /selftests/lib/ksft.sh
. /selftests/lib/rxe.sh
. /selftests/demo/lib.sh

# a phase of ocq_sq_test may take minutes on the debug kernel (see rxe_sq_stream)
SQ_ARGS=
ksft_debug_kernel && SQ_ARGS=phase_timeout_s=480

D=/sys/kernel/debug/ib_ocq
OUT=/tmp/shared_users

cleanup() {
	demo_cmd stop 2>/dev/null
	wait
	demo_unload
}
trap cleanup EXIT

demo_load || ksft_fail "loading the modules failed"
rxe_present || ksft_fail "$RXE_DEV not present"
[ "$(demo_get state)" != running ] || ksft_fail "a run is active already"
allocs0=$(ksft_ocq_count allocs) && live0=$(ksft_ocq_count live) ||
	ksft_fail "no count of ib_ocq's allocations or live ordered CQs (debugfs)"
echo "baseline: allocs $allocs0, live $live0"

# wait_calls MIN SECONDS: until the demo made more than MIN calls
wait_calls() {
	local i=0

	while [ $i -lt $(($2 * 5)) ]; do
		[ "$(demo_get state)" = running ] || return 1
		[ "$(demo_get calls)" -gt "$1" ] && return 0
		sleep 0.2
		i=$((i + 1))
	done
	return 1
}

# bg NAME MOD.ko ARGS...: insmod_test in the background; output in $OUT.NAME,
# its status in $OUT.NAME.rc
bg() {
	local name=$1

	shift
	rm -f "$OUT.$name" "$OUT.$name.rc"
	(insmod_test "$@" > "$OUT.$name" 2>&1; echo $? > "$OUT.$name.rc") &
}

fail=0
for path in ocq-flow ocq-strict ocq-parallel; do
	mode=${path#ocq-}
	echo "== $path, with ocq_test_rxe test=$mode and ocq_sq_test test=stream"
	demo_cmd start path=$path conns=2 duration_ms=3600000 \
		mix=null:1,echo:1,read:1,write:1 chunk_size=4096 ||
		ksft_fail "$path: start refused: $(demo_get error)"
	wait_calls 0 60 || ksft_fail "$path: the demo made no call (state $(demo_get state))"
	c0=$(demo_get calls)
	bg rxe ocq_test_rxe.ko test="$mode"
	bg sq ocq_sq_test.ko test=stream sends=20000 baseline_sends=5000 depth=64 $SQ_ARGS
	wait
	state=$(demo_get state) c1=$(demo_get calls)
	for name in rxe sq; do
		sed 's/^/  /' "$OUT.$name"
		rc=$(cat "$OUT.$name.rc" 2>/dev/null)
		if [ "$rc" != 0 ]; then
			echo "FAIL: $path: the concurrent $name test module: status ${rc:-none}"
			fail=1
		fi
	done
	if [ "$state" != running ]; then
		echo "FAIL: $path: the demo run is $state ($(demo_get error)), not running"
		fail=1
	fi
	if [ "$c1" -le "$c0" ]; then
		echo "FAIL: $path: no demo call completed while the others ran ($c0 -> $c1)"
		fail=1
	fi
	demo_cmd stop || ksft_fail "$path: stop refused: $(demo_get error)"
	[ "$(demo_get state)" = stopped ] || ksft_fail "$path: state $(demo_get state) after stop"
	echo "$path: demo: $(demo_get calls) calls ($((c1 - c0)) while the others ran)," \
		"errors $(demo_get errors), reorders $(demo_get reorders)," \
		"lost $(demo_get lost), duplicated $(demo_get duplicated)"
	if ! demo_check_clean; then
		echo "FAIL: $path: the demo run is not clean"
		fail=1
	fi
	allocs=$(ksft_ocq_count allocs) && live=$(ksft_ocq_count live) ||
		allocs="no count" live="no count"
	if [ "$allocs" != "$allocs0" ] || [ "$live" != "$live0" ]; then
		echo "FAIL: $path: leaked: allocs $allocs0 -> $allocs, live $live0 -> $live"
		fail=1
	fi
	[ $fail = 0 ] || break
done
[ $fail = 0 ] || exit $KSFT_FAIL
exit $KSFT_PASS
