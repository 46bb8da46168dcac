#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 300
# The demo's part of the soak (make soak; the runner runs selftests/soak/ only when
# TESTS names it). For SOAK_SECONDS seconds (default 30) in all, the demo ULP runs
# every procedure over rdma_cm on rxe0, a third of the time on each ordered CQ path
# (ocq-strict, ocq-flow, ocq-parallel), the last with postponed arm and explicit
# resume. ocq-demo fails a run that is not done or that saw a reorder, a lost or a
# duplicated call; the totals are printed at the end.
. /selftests/lib/ksft.sh

secs=${SOAK_SECONDS:-30}
part=$((secs / 3))
[ "$part" -ge 5 ] || part=5
D=/sys/kernel/debug/ib_ocq

for m in ib_ocq ocq_demo; do
	grep -q "^$m " /proc/modules || insmod /ko/$m.ko || ksft_fail "insmod $m.ko"
done
allocs0=$(ksft_ocq_count allocs) || ksft_fail "no count of ib_ocq's allocations (debugfs)"
fail=0 total=0 lost=0 reord=0 dup=0
for path in ocq-strict ocq-flow ocq-parallel; do
	extra=
	[ $path = ocq-parallel ] && extra=--postpone
	ocq-demo run --path $path --conns 2 --credits 16 \
		--mix null:1,echo:1,read:1,write:1 --duration $part $extra \
		--json /tmp/soak-$path.json >/tmp/soak-$path.out 2>&1 || fail=1
	tail -n 20 /tmp/soak-$path.out
	c=$(sed -n 's/.*"completions": *\([0-9]*\).*/\1/p' /tmp/soak-$path.json | head -1)
	l=$(sed -n 's/.*"lost": *\([0-9]*\).*/\1/p' /tmp/soak-$path.json | head -1)
	r=$(sed -n 's/.*"reorders": *\([0-9]*\).*/\1/p' /tmp/soak-$path.json | head -1)
	u=$(sed -n 's/.*"duplicated": *\([0-9]*\).*/\1/p' /tmp/soak-$path.json | head -1)
	# a count missing from the JSON is a failure, not a 0
	if [ -z "$c" ] || [ -z "$l" ] || [ -z "$r" ] || [ -z "$u" ]; then
		echo "FAIL: $path: /tmp/soak-$path.json lacks a count"
		fail=1
		continue
	fi
	total=$((total + c)) lost=$((lost + l)) reord=$((reord + r)) dup=$((dup + u))
done
rmmod ocq_demo || fail=1
[ "$(ksft_ocq_count allocs)" = "$allocs0" ] || { echo "FAIL: ib_ocq allocations leaked"; fail=1; }
echo "SOAK demo: completions=$total lost=$lost reordered=$reord duplicated=$dup"
[ $fail = 0 ] && [ $((lost + reord + dup)) = 0 ] || exit $KSFT_FAIL
exit $KSFT_PASS
