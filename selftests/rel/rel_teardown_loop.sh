#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 400
# 1000 cycles of create, stream, free on the fake provider under late completion
# handler calls (ocq_test_fake.ko scenario=teardown_loop), in chunks of 100: strict,
# flow and parallel, with and without the watchdog, postponed arm and random pauses,
# drained or freed halfway. Every done() comes once and in order, none after
# ib_ocq_free(); the fake provider's objects are gone after every cycle, and the
# plumbing's allocations and live ordered CQs (debugfs) are back at their baseline
# after every chunk.
. /selftests/lib/ksft.sh

D=/sys/kernel/debug/ib_ocq
CHUNKS=10
CYCLES=100
PER_CYCLE=256

loaded=
if ! grep -q '^ib_ocq ' /proc/modules; then
	insmod /ko/ib_ocq.ko || ksft_fail "insmod ib_ocq.ko"
	loaded=1
fi
allocs0=$(ksft_ocq_count allocs) && live0=$(ksft_ocq_count live) ||
	ksft_fail "no count of ib_ocq's allocations or live ordered CQs (debugfs)"
echo "baseline: allocs $allocs0, live $live0"

fail=0
chunk=1
while [ $chunk -le $CHUNKS ]; do
	t0=$(cut -d. -f1 /proc/uptime)
	out=$(insmod_test ocq_test_fake.ko scenario=teardown_loop cycles=$CYCLES \
		completions=$((CYCLES * PER_CYCLE)) seed=$chunk) || fail=1
	t1=$(cut -d. -f1 /proc/uptime)
	allocs=$(ksft_ocq_count allocs) && live=$(ksft_ocq_count live) ||
		allocs="no count" live="no count"
	echo "chunk $chunk: $(echo "$out" | sed -n 's/^# teardown_loop: //p'), $((t1 - t0)) s," \
		"allocs $allocs, live $live"
	if [ $fail = 1 ]; then
		echo "$out"
		echo "FAIL: chunk $chunk"
		break
	fi
	if [ "$allocs" != "$allocs0" ] || [ "$live" != "$live0" ]; then
		echo "FAIL: chunk $chunk leaked: allocs $allocs0 -> $allocs, live $live0 -> $live"
		fail=1
		break
	fi
	chunk=$((chunk + 1))
done
if [ -n "$loaded" ] && ! rmmod ib_ocq; then
	echo "FAIL: rmmod ib_ocq"
	fail=1
fi
[ $fail = 0 ] || exit $KSFT_FAIL
echo "$((CHUNKS * CYCLES)) cycles, no leak"
exit $KSFT_PASS
