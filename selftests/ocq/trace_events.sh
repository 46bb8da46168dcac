#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 180
# The ib_ocq trace events agree with the statistics: with every event of
# events/ib_ocq/ enabled through tracefs, an IB_OCQ_STRICT stream over rxe0
# (ocq_test_rxe.ko test=strict) whose OCQ yields (budget 4), defers its re-arm
# (defer_usecs 100), is paused and resumed from done() (every 64th receive) and
# loses one completion event in 2 on purpose (the deferral leaves few events, as few
# as one in 4000 completions: before its drain the module waits until the OCQ's runs
# stop, its CQ armed, so that the drain's completion raises one more), healed by the
# watchdog (10 ms), must log as many ocq_event as the OCQ counted events, as many
# ocq_run of unit 0 as runs, as many ocq_yield as yields, ocq_pause as pauses and
# ocq_defer as defers, ocq_poll entries whose n add up to the completions and whose
# number lies between runs and polls (+1: the last run may still be polling when the
# module reads the counters), and ocq_rescue entries adding up to the rescues; and
# each of those counts must be non-zero, so that an event that is no longer traced,
# or no longer counted, fails the comparison.
. /selftests/lib/ksft.sh

T=/sys/kernel/tracing
[ -d $T/events ] || mount -t tracefs tracefs $T 2>/dev/null
# the guest mounts tracefs and Debian's kernels trace: a missing one is a failure
[ -d $T/events ] || ksft_fail "no tracefs at $T"

loaded=
cleanup() {
	[ -e $T/events/ib_ocq/enable ] && echo 0 > $T/events/ib_ocq/enable
	echo 0 > $T/tracing_on 2>/dev/null
	echo > $T/trace 2>/dev/null
	echo 1408 > $T/buffer_size_kb 2>/dev/null
	[ -n "$loaded" ] && rmmod ib_ocq 2>/dev/null
}
trap cleanup EXIT

# ib_ocq.ko first (insmod resolves no dependencies); unloaded again if we loaded it
if ! grep -q '^ib_ocq ' /proc/modules; then
	insmod /ko/ib_ocq.ko || ksft_fail "insmod ib_ocq.ko"
	loaded=1
fi
[ -d $T/events/ib_ocq ] || ksft_fail "no events/ib_ocq/ in tracefs"
for e in ocq_event ocq_resume ocq_defer ocq_run ocq_yield ocq_poll ocq_pause ocq_rescue; do
	[ -d $T/events/ib_ocq/$e ] || ksft_fail "event ib_ocq:$e missing"
done
# only the test's OCQ may log: no other ordered CQ lives (one would be an earlier
# test's leak)
live=$(ksft_ocq_count live) || ksft_fail "no count of live ordered CQs"
[ "$live" = 0 ] || ksft_fail "$live ordered CQ(s) already live: the trace would mix them"

echo 0 > $T/tracing_on
echo 8192 > $T/buffer_size_kb || ksft_fail "cannot size the trace buffer"
echo > $T/trace
echo 1 > $T/events/ib_ocq/enable || ksft_fail "cannot enable events/ib_ocq/"
echo 1 > $T/tracing_on

# the module's stats subtest also requires yields, defers, rescues, lost events
# and pauses to have happened
out=$(insmod_test ocq_test_rxe.ko test=strict count=2000 budget=4 defer_usecs=100 \
	watchdog_ms=10 lose_every=2 pause_every=64)
rc=$?
echo 0 > $T/tracing_on
echo "$out"
[ $rc = 0 ] || ksft_fail "ocq_test_rxe.ko test=strict failed (rxe0 is always there: a skip is a failure too)"

# "strict: stats events N runs N ... " and "strict: stats yields N ..." -> name=value
stats=$(echo "$out" | sed -n 's/^# strict: stats //p' |
	awk '{ for (i = 1; i < NF; i += 2) print $i "=" $(i + 1) }')
stat() { echo "$stats" | sed -n "s/^$1=//p"; }
[ -n "$(stat events)" ] && [ -n "$(stat yields)" ] && [ -n "$(stat defers)" ] ||
	ksft_fail "the module printed no statistics"

# no overrun line at all would say nothing: "none" fails as well
lost=$(cat $T/per_cpu/cpu*/stats | awk '/^overrun:/ { n++; s += $2 } END { print n ? s : "none" }')
[ "$lost" = 0 ] || ksft_fail "the trace buffer overran ($lost events lost)"

# count each event, the runs of unit 0, the polled and rescued completions
counts=$(sed -n 's/^.* \(ocq_[a-z]*\): \(.*\)$/\1 \2/p' $T/trace | awk '
	{ n[$1]++ }
	$1 == "ocq_run" && $3 == "unit=0" { run0++ }
	$1 == "ocq_poll" { split($3, a, "="); if (a[2] > 0) polled += a[2] }
	$1 == "ocq_rescue" { split($3, a, "="); rescued += a[2] }
	{ split($2, c, "="); cq[c[2]] = 1 }
	END {
		for (e in n) print e "=" n[e]
		print "run0=" run0 + 0; print "polled=" polled + 0
		print "rescued=" rescued + 0
		k = 0; for (c in cq) k++; print "cqs=" k
	}')
count() { v=$(echo "$counts" | sed -n "s/^$1=//p"); echo "${v:-0}"; }
echo "trace: $(echo $counts)"
echo "stats: $(echo $stats)"

fail=0
check() {	# check WHAT OK
	if [ "$2" = 1 ]; then
		echo "ok: $1"
	else
		echo "FAIL: $1"
		fail=1
	fi
}
eq() { [ "$1" = "$2" ] && echo 1 || echo 0; }
# equal, and something to compare: a count of 0 on both sides proves nothing
eqnz() { [ "$1" = "$2" ] && [ "$1" -gt 0 ] && echo 1 || echo 0; }

check "one CQ logged (cqs=$(count cqs))" "$(eq "$(count cqs)" 1)"
check "ocq_event $(count ocq_event) = events $(stat events) > 0" \
	"$(eqnz "$(count ocq_event)" "$(stat events)")"
check "ocq_run unit=0 $(count run0) = runs $(stat runs) > 0" \
	"$(eqnz "$(count run0)" "$(stat runs)")"
check "ocq_yield $(count ocq_yield) = yields $(stat yields) > 0" \
	"$(eqnz "$(count ocq_yield)" "$(stat yields)")"
check "ocq_pause $(count ocq_pause) = pauses $(stat pauses) > 0" \
	"$(eqnz "$(count ocq_pause)" "$(stat pauses)")"
check "ocq_defer $(count ocq_defer) = defers $(stat defers) > 0" \
	"$(eqnz "$(count ocq_defer)" "$(stat defers)")"
check "ocq_poll n total $(count polled) = completions $(stat completions) > 0" \
	"$(eqnz "$(count polled)" "$(stat completions)")"
check "ocq_rescue total $(count rescued) = rescues $(stat rescues) > 0" \
	"$(eqnz "$(count rescued)" "$(stat rescues)")"
p=$(count ocq_poll)
check "runs $(stat runs) <= ocq_poll $p <= polls $(stat polls) + 1" \
	"$([ "$p" -ge "$(stat runs)" ] && [ "$p" -le $(($(stat polls) + 1)) ] && echo 1 || echo 0)"
check "ocq_resume logged ($(count ocq_resume))" \
	"$([ "$(count ocq_resume)" -ge 1 ] && echo 1 || echo 0)"
check "ocq_run logged only for unit 0 (strict mode): $(count ocq_run) = $(count run0)" \
	"$(eq "$(count ocq_run)" "$(count run0)")"

if [ -n "$loaded" ]; then
	loaded=
	rmmod ib_ocq || { echo "FAIL: rmmod ib_ocq"; fail=1; }
fi
[ $fail = 0 ] || exit $KSFT_FAIL
exit $KSFT_PASS
