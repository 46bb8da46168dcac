# SPDX-License-Identifier: GPL-2.0
#
# lib.sh - helpers of the demo tests (source it after ksft.sh). Not a test itself.
#
#   demo_load               load ib_ocq and ocq_demo (rdma_cm is loaded at boot)
#   demo_unload             unload ocq_demo
#   demo_get KEY            the value of KEY in the control file
#   demo_cmd CMD...         write one command; returns the write's status
#   demo_wait_end SECONDS   wait until the run is no longer running; prints the state
#   demo_run ARGS...        start a run with ARGS and wait for its end (120 s at most);
#                           with calls= and no duration_ms=, duration_ms=0 is added
#   demo_check_clean        the run's verification counters are all 0
#   demo_rate               calls per second of the last run
#   demo_run_ocq ARGS...    demo_run, sampling the ordered CQs the run makes (ib_ocq's
#                           debugfs stats and info, which go with the run's end) every
#                           0.1 s; each CQ's last sample is in $DEMO_OCQ/<cq>.{stats,info}
#   demo_ocq_sum KEY        KEY of the last samples' stats, summed over the run's CQs
#   demo_ocq_seen KEY       every value of KEY in the samples' info, one a line

CTL=/sys/kernel/debug/ocq_demo/control

demo_load() {
	# the guest loads it at boot (selftests/guest.conf): missing is a failure
	grep -q '^rdma_cm ' /proc/modules || ksft_fail "rdma_cm is not loaded"
	grep -q '^ib_ocq ' /proc/modules || insmod /ko/ib_ocq.ko || return 1
	grep -q '^ocq_demo ' /proc/modules || insmod /ko/ocq_demo.ko $(demo_module_args) ||
		return 1
	[ -e "$CTL" ] || { echo "no $CTL"; return 1; }
}

# ocq_demo's parameters: on the debug kernel a run of large transfers can go 5 s
# (the default stall_ms) without a call answered, and would be ended as stalled
demo_module_args() {
	ksft_debug_kernel && echo stall_ms=60000
}

demo_unload() {
	grep -q '^ocq_demo ' /proc/modules || return 0
	rmmod ocq_demo
}

demo_get() {
	sed -n "s/^$1=//p" "$CTL"
}

demo_cmd() {
	echo "$*" > "$CTL"
}

demo_wait_end() {
	local i=0 max=$(($1 * 5)) s

	while [ $i -lt $max ]; do
		s=$(demo_get state)
		[ "$s" != running ] && { echo "$s"; return 0; }
		sleep 0.2
		i=$((i + 1))
	done
	echo timeout
	return 1
}

demo_run() {
	local s d=""

	# a run given a call count ends at that count, however slow the guest
	case " $* " in
	*" calls="*" duration_ms="*|*" duration_ms="*) ;;
	*" calls="*) d=duration_ms=0 ;;
	esac
	demo_cmd start "$@" $d || { echo "start $* refused: $(demo_get error)"; return 1; }
	s=$(demo_wait_end 120)
	[ "$s" = done ] || { echo "start $*: state $s"; return 1; }
}

demo_check_clean() {
	local k v

	for k in errors reorders lost duplicated; do
		v=$(demo_get $k)
		[ "$v" = 0 ] || { echo "$k=$v"; return 1; }
	done
}

demo_rate() {
	local c ms

	c=$(demo_get calls)
	ms=$(demo_get elapsed_ms)
	[ "$ms" -gt 0 ] || ms=1
	echo $((c * 1000 / ms))
}

# the number of live ordered CQs; prints nothing and fails if ib_ocq's debugfs has
# no count (a baseline read must then fail the test: see ksft_ocq_count)
demo_ocq_live() {
	ksft_ocq_count live
}

# demo_wait_calls SECONDS: wait until the running run has answered a call
demo_wait_calls() {
	local i=0 max=$(($1 * 10))

	while [ $i -lt $max ]; do
		[ "$(demo_get state)" = running ] || return 1
		[ "$(demo_get calls)" -gt 0 ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# the allocations ib_ocq holds for ordered CQs; as demo_ocq_live
demo_ocq_allocs() {
	ksft_ocq_count allocs
}

# demo_check_accounting: every call of the ended run is accounted for once:
# answered, or lost (done, stopped) or failed (aborted), and none was
# reordered or duplicated
demo_check_accounting() {
	local s c i l f

	s=$(demo_get state) c=$(demo_get calls) i=$(demo_get issued)
	l=$(demo_get lost) f=$(demo_get failed)
	[ "$(demo_get reorders)" = 0 ] || { echo "reorders=$(demo_get reorders)"; return 1; }
	[ "$(demo_get duplicated)" = 0 ] ||
		{ echo "duplicated=$(demo_get duplicated)"; return 1; }
	case $s in
	aborted) [ "$l" = 0 ] || { echo "lost=$l on an abort"; return 1; } ;;
	done|stopped) [ "$f" = 0 ] || { echo "failed=$f without an abort"; return 1; } ;;
	*) echo "state $s"; return 1 ;;
	esac
	[ $((c + l + f)) = "$i" ] ||
		{ echo "issued=$i but calls=$c + lost=$l + failed=$f"; return 1; }
}

DEMO_OCQ=/tmp/demo_ocq

# One sample of every live ordered CQ of ocq_demo's: its stats and info, kept when
# both reads succeed (a CQ freed meanwhile keeps its last sample); the info's
# defer_usecs_now values are all kept (DIM moves it).
demo_ocq_sample() {
	local d c

	for d in /sys/kernel/debug/ib_ocq/ocq*; do
		[ -d "$d" ] || continue
		c=${d##*/}
		cat "$d/info" > "$DEMO_OCQ/$c.info.new" 2>/dev/null || continue
		grep -qx 'owner ocq_demo' "$DEMO_OCQ/$c.info.new" || continue
		cat "$d/stats" > "$DEMO_OCQ/$c.stats.new" 2>/dev/null || continue
		mv "$DEMO_OCQ/$c.info.new" "$DEMO_OCQ/$c.info"
		mv "$DEMO_OCQ/$c.stats.new" "$DEMO_OCQ/$c.stats"
		cat "$DEMO_OCQ/$c.info" >> "$DEMO_OCQ/$c.infos"
	done
}

demo_run_ocq() {
	local s d="" i=0

	rm -rf "$DEMO_OCQ"
	mkdir -p "$DEMO_OCQ"
	case " $* " in
	*" calls="*" duration_ms="*|*" duration_ms="*) ;;
	*" calls="*) d=duration_ms=0 ;;
	esac
	demo_cmd start "$@" $d || { echo "start $* refused: $(demo_get error)"; return 1; }
	while [ $i -lt 1200 ]; do
		s=$(demo_get state)
		[ "$s" = running ] || break
		demo_ocq_sample
		sleep 0.1
		i=$((i + 1))
	done
	[ "$s" = done ] || { echo "start $*: state $s"; return 1; }
	ls "$DEMO_OCQ"/*.stats >/dev/null 2>&1 || { echo "start $*: no ordered CQ sampled"; return 1; }
}

demo_ocq_sum() {
	cat "$DEMO_OCQ"/*.stats 2>/dev/null | awk -v k="$1" '$1 == k { n += $2 } END { print n + 0 }'
}

demo_ocq_seen() {
	cat "$DEMO_OCQ"/*.infos 2>/dev/null | sed -n "s/^$1 //p" | sort -u
}
