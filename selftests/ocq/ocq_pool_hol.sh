#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 900
# A slow QP among light ones on one pooled CQ, as a ULP gets it
# (selftests/modules/pool_bench.c in its stream mode): 6 loopback RC pairs on rxe0,
# each QP taking its room with ib_cq_pool_get(..., IB_POLL_WORKQUEUE) on vector 0,
# up to 16 sends in flight per pair under receive credits (never more outstanding
# than the peer has receives posted), 1500 messages a pair, pair 0's receive done()
# busy for 300 us, or longer where rxe itself is slow: first every pair streams with
# none slow (on ib_core's pool), and the slow done() is made at least 4 times that
# time over the stream, so that the slow pair's own work dominates and half its time
# leaves the light pairs room (under TCG rxe takes about a second for what KVM does
# in a tenth).  Run on ib_core's pool (ocq_bench_pool_upstream.ko) and on ocq's,
# the same file after <rdma/ib_ocq_dropin.h> (ocq_bench_pool_ocq.ko), with the QP
# numbers rxe gives and with every light QP made to hash to the slow receiver's flow
# domain; each pair's finishing time is printed.  On ocq's pool the light pairs must
# finish in at most half the slow pair's time, whatever their QP numbers; ib_cq's
# pool runs every done() of the CQ in one work item, so there they finish with the
# slow pair (printed, not judged).  The counters of ocq's pooled CQ (events, runs,
# parks, stalls, inlined, domain_runs) and the receive done() calls that the CQ run
# made itself (a per-CPU worker, not a flow domain) are printed with each run.
. /selftests/lib/ksft.sh

PAIRS=6 MSGS=1500 DEPTH=16 HEAVY_NS=300000
ARGS="pairs=$PAIRS vector=0 msgs=$MSGS depth=$DEPTH credits=1"

. /selftests/lib/rxe.sh
rxe_present || ksft_fail "no rxe0"
# a fresh ib_ocq: its pool starts empty, so every run's QPs share one new CQ
if grep -q '^ib_ocq ' /proc/modules; then
	rmmod ib_ocq || ksft_fail "ib_ocq is loaded and in use: no fresh pool"
fi
insmod /ko/ib_ocq.ko || ksft_fail "insmod ib_ocq.ko"

# hol_run BACKEND PLACE HEAVY_NS: one stream of every pair; prints the pairs' lines
# and sets LINE to the module's BENCH-HOL line (empty if the run failed)
hol_run() {
	local m="ocq_bench_pool_$1" mark out

	mark=$(ksft_mark)
	# shellcheck disable=SC2086 # ARGS is several words
	if ! insmod /ko/$m.ko $ARGS place="$2" heavy_ns="$3"; then
		echo "FAIL: insmod $m.ko place=$2:"
		ksft_kmsg_since "$mark" "$m" | sed 's/^/  /'
		LINE=""
		return 1
	fi
	rmmod "$m"
	out=$(ksft_kmsg_since "$mark" "$m")
	echo "$out" | grep '^pair ' | sed "s/^/$1 $2: /"
	LINE=$(echo "$out" | sed -n 's/^BENCH-HOL //p')
	echo "$1 $2: $LINE"
	[ -n "$LINE" ]
}

# field NAME: a number of LINE
field() {
	echo "$LINE" | sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"
}

# the pairs' own time, none slow
hol_run upstream any 0 || ksft_fail "the streams without a slow pair failed"
own=$(field slow_ms)
[ "$(field light_max_ms)" -gt "$own" ] && own=$(field light_max_ms)
[ $((own * 4 * 1000000 / MSGS)) -gt $HEAVY_NS ] && HEAVY_NS=$((own * 4 * 1000000 / MSGS))
echo "without a slow pair every pair finished in at most $own ms;" \
	"the slow receive done() is busy for $((HEAVY_NS / 1000)) us"

rc=0
for place in any slow any; do
	hol_run upstream "$place" "$HEAVY_NS" || rc=$KSFT_FAIL
	echo "ib_cq's pool ($place): slow pair $(field slow_ms) ms, light pairs at most" \
		"$(field light_max_ms) ms"
	if ! hol_run ocq "$place" "$HEAVY_NS"; then
		rc=$KSFT_FAIL
		continue
	fi
	slow=$(field slow_ms) light=$(field light_max_ms) errors=$(field errors)
	echo "ocq's pool ($place): slow pair $slow ms, light pairs at most $light ms"
	if [ "$errors" != 0 ]; then
		echo "FAIL: $errors completions failed ($place)"
		rc=$KSFT_FAIL
	fi
	# the slow pair's done() calls alone take MSGS * HEAVY_NS
	if [ "$slow" -lt $((MSGS * HEAVY_NS / 1000000)) ]; then
		echo "FAIL: the slow pair took $slow ms, less than its done() calls' own time"
		rc=$KSFT_FAIL
	fi
	if [ $((2 * light)) -gt "$slow" ]; then
		echo "FAIL: QP numbers $place: a light pair took $light ms, more than half" \
			"of the slow pair's $slow ms"
		rc=$KSFT_FAIL
	fi
done
rmmod ib_ocq || { echo "FAIL: rmmod ib_ocq"; rc=$KSFT_FAIL; }
exit "$rc"
