#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 300
# The fake provider's part of the soak (make soak; the runner runs selftests/soak/
# only when TESTS names it). For SOAK_SECONDS seconds (default 30), ocq_test_fake.ko
# scenario=soak
# streams through fresh ordered CQs with random provider semantics, modes, sizes,
# pauses, postponed arms and teardowns (drained or halfway, under late completion
# handler calls), and prints progress and a summary: cycles, completions, lost,
# reordered and duplicated completions, failed checks. The plumbing's allocations and
# live ordered CQs (debugfs) must be back at their baseline afterwards.
# SOAK_SEED (default 1) seeds the random choices of the producers and the fake CQs.
. /selftests/lib/ksft.sh

D=/sys/kernel/debug/ib_ocq
secs=${SOAK_SECONDS:-30}
soak_seed=${SOAK_SEED:-1}

loaded=
if ! grep -q '^ib_ocq ' /proc/modules; then
	insmod /ko/ib_ocq.ko || ksft_fail "insmod ib_ocq.ko"
	loaded=1
fi
allocs0=$(cat $D/allocs) live0=$(cat $D/live)
fail=0
insmod_test ocq_test_fake.ko scenario=soak duration_s="$secs" seed="$soak_seed" || fail=1
allocs=$(cat $D/allocs) live=$(cat $D/live)
if [ "$allocs" != "$allocs0" ] || [ "$live" != "$live0" ]; then
	echo "FAIL: leaked: allocs $allocs0 -> $allocs, live $live0 -> $live"
	fail=1
fi
if [ -n "$loaded" ] && ! rmmod ib_ocq; then
	echo "FAIL: rmmod ib_ocq"
	fail=1
fi
[ $fail = 0 ] || exit $KSFT_FAIL
exit $KSFT_PASS
