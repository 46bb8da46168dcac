#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 900
# Freeing many pooled ordered CQs, against ib_core's pool doing the same, on rxe0 in
# one boot (selftests/modules/ocq_cost_main.c): 64 CQs taken from a pool (gets of
# 4096 entries, a CQ each, workqueue context) and given back, then "rdma link delete
# rxe0", which frees the pool with the device (the Nth get with vector hint N, as a
# ULP spreads its queues: ib_core's pool makes a CQ for every vector at once).  Three removals in turn, REPEATS
# times: with nothing pooled (the removal's own cost), with ib_core's pool full
# (ib_cq_pool_get()) and with ocq's (ib_ocq_cq_pool_get()); rxe0 is made again
# after each.  Counted: the grace periods that ended during the removal (the polled
# grace-period sequence, get_state_synchronize_rcu(), around it: normal and
# expedited ones alike, one at most in flight at each end), and its time, also in
# synchronize_rcu() calls of this boot (the median of 16 timed in a row, which
# must each count a grace period: the counter is shown to count).  Medians over
# the repeats.  Check: ocq's removal ends no more grace periods than ib_core's,
# give or take SLACK (what a removal with nothing pooled or with ib_core's pool
# varies by in this boot, the larger, 2 at least: 6.12 saw 10 to 16 for ib_core's
# pool); one grace period per freed CQ, waited for in turn, is 64 more.
# OCQ_FREE_MANY_REPEATS= on the kernel command line sets REPEATS (5).
. /selftests/lib/ksft.sh
. /selftests/lib/rxe.sh

CTL=/sys/kernel/debug/ocq_cost_test/ctl
GP=/sys/kernel/debug/ocq_cost_test/gp
REPEATS=${OCQ_FREE_MANY_REPEATS:-5}
NR=64
SYNCS=16

rxe_present || ksft_fail "no rxe0"
if grep -q '^ib_ocq ' /proc/modules; then
	rmmod ib_ocq || ksft_fail "ib_ocq is loaded and in use"
fi
insmod /ko/ib_ocq.ko || ksft_fail "insmod ib_ocq.ko"
insmod /ko/ocq_cost_test.ko || ksft_fail "insmod ocq_cost_test.ko"

# "GPS MS" between two reads of $GP ("COOKIE NS")
gp_diff() {
	# shellcheck disable=SC2086 # two words each
	set -- $1 $2
	echo "$((($3 - $1) / 4)) $(awk -v d=$(($4 - $2)) 'BEGIN { printf "%.1f", d / 1e6 }')"
}

median() {
	tr ' ' '\n' | sed '/^$/d' | sort -n | sed -n "$(( (REPEATS + 1) / 2 ))p"
}

# the counter, and what one synchronize_rcu() takes here
g0=$(cat $GP)
echo "sync $SYNCS" > $CTL || ksft_fail "sync $SYNCS"
g1=$(cat $GP)
# shellcheck disable=SC2046 # "GPS MS"
set -- $(gp_diff "$g0" "$g1")
sync_gps=$1
sync_ms=$(awk -v ms="$2" -v n=$SYNCS 'BEGIN { printf "%.2f", ms / n }')
echo "$SYNCS synchronize_rcu() in a row: $sync_gps grace periods, $sync_ms ms each"
[ "$sync_gps" -ge $SYNCS ] ||
	ksft_fail "the grace-period count moved by $sync_gps over $SYNCS synchronize_rcu()"

gps_none="" gps_cq="" gps_ocq="" ms_none="" ms_cq="" ms_ocq=""
for r in $(seq "$REPEATS"); do
	for v in none cq_pool pool; do
		rxe_present || rxe_create >/dev/null || ksft_fail "rxe0 not made again"
		if [ $v != none ]; then
			echo "alloc $v 4096 $NR" > $CTL || ksft_fail "alloc $v 4096 $NR"
			echo put > $CTL || ksft_fail "put $v"
		fi
		live=$(cat /sys/kernel/debug/ib_ocq/live)
		g0=$(cat $GP)
		rdma link delete rxe0 || ksft_fail "rdma link delete rxe0 ($v)"
		g1=$(cat $GP)
		# shellcheck disable=SC2046 # "GPS MS"
		set -- $(gp_diff "$g0" "$g1")
		echo "run $r, $v: $live ordered CQs live before; the removal: $1 grace periods, $2 ms"
		case $v in
		none) gps_none="$gps_none $1" ms_none="$ms_none $2" ;;
		cq_pool) gps_cq="$gps_cq $1" ms_cq="$ms_cq $2" ;;
		pool) gps_ocq="$gps_ocq $1" ms_ocq="$ms_ocq $2" ;;
		esac
		[ "$(cat /sys/kernel/debug/ib_ocq/live)" = 0 ] ||
			ksft_fail "ordered CQs left after the removal ($v)"
	done
done
rxe_present || rxe_create >/dev/null || ksft_fail "rxe0 not made again"

g_none=$(echo "$gps_none" | median)
g_cq=$(echo "$gps_cq" | median)
g_ocq=$(echo "$gps_ocq" | median)
m_none=$(echo "$ms_none" | median)
m_cq=$(echo "$ms_cq" | median)
m_ocq=$(echo "$ms_ocq" | median)
# what a removal without ocq varies by in this boot: the larger spread of the
# two baselines' grace periods (other RCU users end theirs during the removal)
spread_of() {
	echo "$1" | tr ' ' '\n' | sed '/^$/d' | sort -n |
		awk 'NR == 1 { lo = $1 } { hi = $1 } END { print hi - lo }'
}
spread=$(spread_of "$gps_none")
s_cq=$(spread_of "$gps_cq")
[ "$s_cq" -le "$spread" ] || spread=$s_cq
slack=$((spread > 2 ? spread : 2))
echo "removal of rxe0, medians of $REPEATS: grace periods / ms / in synchronize_rcu() of $sync_ms ms"
for v in none cq_pool pool; do
	case $v in
	none) g=$g_none m=$m_none name="nothing pooled" ;;
	cq_pool) g=$g_cq m=$m_cq name="ib_core's pool, $NR CQs" ;;
	pool) g=$g_ocq m=$m_ocq name="ocq's pool, $NR CQs" ;;
	esac
	awk -v n="$name" -v g="$g" -v m="$m" -v g0="$g_none" -v m0="$m_none" -v s="$sync_ms" \
		'BEGIN { printf "  %-24s %4d (%+d)  %8.1f ms (%+.1f)  %6.1f syncs (%+.1f)\n",
			n, g, g - g0, m, m - m0, m / s, (m - m0) / s }'
done
if [ "$g_ocq" -le $((g_cq + slack)) ]; then
	echo "ocq's pool: $g_ocq grace periods, ib_core's $g_cq (+ slack $slack): no more"
	rc=$KSFT_PASS
else
	echo "FAIL: freeing $NR pooled ordered CQs took $g_ocq grace periods, ib_core's pool" \
		"$g_cq (slack $slack): $((g_ocq - g_cq)) more"
	rc=$KSFT_FAIL
fi
rmmod ocq_cost_test || { echo "FAIL: rmmod ocq_cost_test"; rc=$KSFT_FAIL; }
rmmod ib_ocq || { echo "FAIL: rmmod ib_ocq"; rc=$KSFT_FAIL; }
exit "$rc"
