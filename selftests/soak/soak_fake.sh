#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 300
# The fake provider's part of the soak (make soak; the runner runs selftests/soak/
# only when TESTS names it). For SOAK_SECONDS seconds (default 30), ocq_test_fake.ko
# scenario=soak streams through ordered CQs with random provider semantics, modes,
# pauses, postponed arms and teardowns (drained or halfway, under late completion
# handler calls): short cycles through fresh CQs of random size, and bulk cycles of
# millions of completions through one CQ (90% of the time), every completion checked
# in its ordering domain. It prints progress and a summary: cycles, completions,
# lost, reordered and duplicated completions, failed checks; this script repeats
# the totals on a "SOAK fake:" line. The plumbing's allocations and live ordered CQs
# (debugfs) must be back at their baseline afterwards.
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
allocs0=$(ksft_ocq_count allocs) && live0=$(ksft_ocq_count live) ||
	ksft_fail "no count of ib_ocq's allocations or live ordered CQs (debugfs)"
fail=0
insmod_test ocq_test_fake.ko scenario=soak duration_s="$secs" seed="$soak_seed" \
	>/tmp/soak-fake.out 2>&1 || fail=1
cat /tmp/soak-fake.out
allocs=$(ksft_ocq_count allocs) && live=$(ksft_ocq_count live) ||
	allocs="no count" live="no count"
if [ "$allocs" != "$allocs0" ] || [ "$live" != "$live0" ]; then
	echo "FAIL: leaked: allocs $allocs0 -> $allocs, live $live0 -> $live"
	fail=1
fi
if [ -n "$loaded" ] && ! rmmod ib_ocq; then
	echo "FAIL: rmmod ib_ocq"
	fail=1
fi
# "# soak: summary: S s, N cycles (...), C completions (...), lost L, reordered R, ..."
sum=$(grep '^# soak: summary: ' /tmp/soak-fake.out | tail -1)
[ -n "$sum" ] || { echo "FAIL: no soak summary"; fail=1; }
field() { echo "$sum" | sed -n "s/.*$1.*/\\1/p"; }
c=$(field ' \([0-9]*\) completions') l=$(field 'lost \([0-9]*\)')
r=$(field 'reordered \([0-9]*\)') u=$(field 'duplicated \([0-9]*\)')
echo "SOAK fake: completions=${c:-?} lost=${l:-?} reordered=${r:-?} duplicated=${u:-?}"
# a count missing from the summary is a failure, not a 0
[ -n "$c" ] && [ -n "$l" ] && [ -n "$r" ] && [ -n "$u" ] ||
	{ echo "FAIL: the summary lacks a count"; fail=1; }
[ $fail = 0 ] && [ $((l + r + u)) = 0 ] || exit $KSFT_FAIL
exit $KSFT_PASS
