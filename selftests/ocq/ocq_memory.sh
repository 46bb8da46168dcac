#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 1200
# What an ordered CQ costs in memory next to ib_alloc_cq() for the same nr_cqe, on
# rxe0 in one boot (selftests/modules/ocq_cost_main.c): the kB of Slab plus
# VmallocUsed (/proc/meminfo, the per-CPU counters folded first through
# /proc/sys/vm/stat_refresh) that K CQs of a kind add, divided by K, the median of
# REPEATS such runs; each kind freed before the next.  Kinds: ib_alloc_cq(), and
# ib_ocq_alloc() strict, flow and parallel (the defaults: a flow domain or a worker
# per CPU) at 128, 1024 and 4096 entries; and a CQ of ocq's pool (4096 entries,
# its minimum, as ib_cq_pool_get()'s, whose CQs are ib_alloc_cq()'s).  Checks:
# every ordered kind at most twice ib_alloc_cq()'s cost for the same nr_cqe, the
# pooled one at most twice ib_alloc_cq()'s of 4096 entries.
# OCQ_MEMORY_REPEATS= on the kernel command line (KAPPEND=) sets REPEATS (3).
. /selftests/lib/ksft.sh
. /selftests/lib/rxe.sh

CTL=/sys/kernel/debug/ocq_cost_test/ctl
REPEATS=${OCQ_MEMORY_REPEATS:-3}
# CQs per run, by nr_cqe: thousands of kB per run at least, so that a page more
# or less of the rest of the system moves the figure by well under 1%
count_of() {
	case $1 in
	128) echo 16 ;;
	1024) echo 8 ;;
	*) echo 4 ;;
	esac
}
MAX_RATIO=2

rxe_present || ksft_fail "no rxe0"
# a fresh ib_ocq: no pool of an earlier test
if grep -q '^ib_ocq ' /proc/modules; then
	rmmod ib_ocq || ksft_fail "ib_ocq is loaded and in use"
fi
insmod /ko/ib_ocq.ko || ksft_fail "insmod ib_ocq.ko"
insmod /ko/ocq_cost_test.ko || ksft_fail "insmod ocq_cost_test.ko"
[ -w /proc/sys/vm/stat_refresh ] || ksft_fail "no /proc/sys/vm/stat_refresh"

# kB of Slab + VmallocUsed now, the per-CPU deltas folded into the totals
slab_vmalloc_kb() {
	echo 1 > /proc/sys/vm/stat_refresh
	awk '/^Slab:/ { s = $2 } /^VmallocUsed:/ { v = $2 } END { print s + v }' \
		/proc/meminfo
}

# KIND NR_CQE: kB per CQ, median of REPEATS runs of count_of(NR_CQE) CQs (pool:
# gets of 4096 entries, a pooled CQ each); empty if a run failed
measure() {
	# shellcheck disable=SC3043 # busybox sh has local
	local kind="$1" nr="$2" k b a out=""

	k=$(count_of "$nr")
	for _ in $(seq "$REPEATS"); do
		b=$(slab_vmalloc_kb)
		echo "alloc $kind $nr $k" > $CTL || { echo "# alloc $kind $nr $k failed" >&2; return 1; }
		a=$(slab_vmalloc_kb)
		echo free > $CTL || return 1
		out="$out $(awk -v a="$a" -v b="$b" -v k="$k" 'BEGIN { printf "%.1f", (a - b) / k }')"
	done
	echo "$out" | tr ' ' '\n' | sed '/^$/d' | sort -n |
		sed -n "$(( (REPEATS + 1) / 2 ))p"
}

cpus=$(grep -c '^processor' /proc/cpuinfo)
echo "ocq_memory: $cpus CPUs; kB of Slab + VmallocUsed per CQ, the median of $REPEATS runs"
rc=0
fails=""
printf '%-7s %-4s %-12s %-16s %-16s %-16s\n' nr_cqe K ib_alloc_cq strict flow parallel
for nr in 128 1024 4096; do
	base=$(measure cq "$nr") || ksft_fail "ib_alloc_cq($nr) failed"
	line=$(printf '%-7s %-4s %-12s' "$nr" "$(count_of "$nr")" "$base")
	for kind in strict flow parallel; do
		v=$(measure "$kind" "$nr") || ksft_fail "$kind $nr failed"
		x=$(awk -v v="$v" -v b="$base" 'BEGIN { printf "%.2f", v / b }')
		line="$line $(printf '%-16s' "$v (${x}x)")"
		if ! awk -v x="$x" -v m=$MAX_RATIO 'BEGIN { exit !(x <= m) }'; then
			fails="$fails
FAIL: $kind, nr_cqe $nr, $cpus CPUs: $v kB, ${x}x ib_alloc_cq()'s $base kB (at most ${MAX_RATIO}x)"
		fi
	done
	echo "$line"
	[ "$nr" = 4096 ] && base4096=$base
done
pool=$(measure pool 4096) || ksft_fail "ib_ocq_cq_pool_get() failed"
x=$(awk -v v="$pool" -v b="$base4096" 'BEGIN { printf "%.2f", v / b }')
echo "pooled (ocq's pool, 4096 entries, K $(count_of 4096)): $pool kB, ${x}x ib_alloc_cq(4096)"
if ! awk -v x="$x" -v m=$MAX_RATIO 'BEGIN { exit !(x <= m) }'; then
	fails="$fails
FAIL: pooled, $cpus CPUs: $pool kB, ${x}x ib_alloc_cq(4096)'s $base4096 kB (at most ${MAX_RATIO}x)"
fi
if [ -n "$fails" ]; then
	echo "$fails" | sed '/^$/d'
	rc=$KSFT_FAIL
else
	echo "every kind at most ${MAX_RATIO}x ib_alloc_cq() for the same nr_cqe"
fi
rmmod ocq_cost_test || { echo "FAIL: rmmod ocq_cost_test"; rc=$KSFT_FAIL; }
live=$(cat /sys/kernel/debug/ib_ocq/live)
[ "$live" = 0 ] || { echo "FAIL: $live ordered CQs left"; rc=$KSFT_FAIL; }
rmmod ib_ocq || { echo "FAIL: rmmod ib_ocq"; rc=$KSFT_FAIL; }
exit "$rc"
