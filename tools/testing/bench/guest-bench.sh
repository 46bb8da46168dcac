#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# guest-bench.sh - the guest's part of make bench (see bench.sh): runs the scenarios
# for every CQ path, interleaved and repeated, and prints one record per run.
#
# Usage (in the guest, as a test of /init): guest-bench.sh CONF
# CONF is sourced and sets:
#   SCENARIOS  names, run in this order within each repeat (fake_floor, rxe_*)
#   PATHS      the demo's CQ paths, run in this order within each scenario; also
#              ocq-defer: ocq-strict with the deferred re-arm (--defer-usecs DEFER_US);
#              ocq-dim: the same with software DIM picking the delay up to DEFER_US
#              (--defer-dim); ocq-busy: ocq-strict busy-polled by a thread per side
#              (--busy-poll-usecs BUSY_US)
#   DEFER_US   ocq-defer's defer_usecs, ocq-dim's ceiling
#   BUSY_US    ocq-busy's suspend_usecs
#   REPEATS    repeats of the whole list
#   DURATION   seconds per demo run
#   COUNT_DURATION  seconds per counting run of an upstream path (see below)
#   FAKE_N     completions per fake_floor measurement
#   FAKE_BUDGET  the engine's budget in fake_floor (0: its default)
#   SLOW_WORK_NS, HEAVY_WORK_NS  CPU burned per completion (rxe_slow_consumer and
#              rxe_open_slow, rxe_heavy_flows)
#   OPEN_RATE  rxe_open_slow's messages per second (the open loop, --rate)
#   POOL_HEAVY_NS  CPU burned by each receive done() of rxe_pool's heavy QP
#
# Records, one line each on stdout (the console prefixes "# "):
#   BENCH-REC {"scenario":…,"path":…,"repeat":…,"busy_ns":…,"env":{…},
#              "demo":{ocq-demo's JSON}}
#   BENCH-REC {"scenario":"fake_floor","path":…,"repeat":…,"env":{…},
#              "ns_per_completion":…,…}
#   BENCH-REC {"scenario":"rxe_pool","path":"upstream-pool"|"ocq-pool","repeat":…,
#              "env":{…},"pool":{the BENCH-POOL line of ocq_bench_pool_*.ko}}
#   BENCH-REC {"scenario":…,"path":"upstream-…","count":{…}}   (counting runs)
# and BENCH-PROGRESS lines. busy_ns: all CPUs' non-idle time from /proc/stat over the
# run (USER_HZ ticks), rxe's own work included.  env: what else the guest saw over the
# run: {"steal":…,"ticks":…,"load0":…,"load1":…}, the steal time and all time of all
# CPUs (/proc/stat, USER_HZ ticks) and the 1-minute load average before and after.
#
# The upstream ib_cq has no counters: after the timed repeats, each upstream path runs
# once more per scenario with the kernel's rdma_core tracepoints enabled (cq_schedule:
# completion events; cq_process: processing runs; a run whose first cq_poll returned
# nothing: empty). Timed runs never have tracing on.
set -u

CONF=${1:-/bench.conf}
# shellcheck source=/dev/null
. "$CONF"
CTL=/sys/kernel/debug/ocq_demo/control
T=/sys/kernel/tracing
USER_HZ=100

say() { echo "BENCH-PROGRESS $*"; }
fail() { echo "BENCH-ERROR $*"; exit 1; }

for m in ib_ocq ocq_demo; do
	grep -q "^$m " /proc/modules && continue
	insmod /ko/$m.ko || fail "insmod $m.ko failed"
done
[ -e $CTL ] || fail "ocq_demo.ko is loaded but $CTL does not exist"

# busy jiffies of all CPUs: user, nice, system, irq, softirq (not idle, iowait, steal)
busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }

# steal jiffies, all jiffies (user .. steal) and the 1-minute load average, for env_json
env_now() {
	echo "$(awk '/^cpu / { print $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat)" \
		"$(cut -d' ' -f1 /proc/loadavg)"
}

# env_json BEFORE AFTER: a run's "env" object from two env_now lines
env_json() {
	# shellcheck disable=SC2086 # split into their words
	set -- $1 $2
	printf '{"steal":%s,"ticks":%s,"load0":%s,"load1":%s}' \
		"$(($4 - $1))" "$(($5 - $2))" "$3" "$6"
}

# the ocq-demo options of a path: its --path, ocq-defer's and ocq-dim's deferred
# re-arm, ocq-busy's busy polling
path_args() {
	case $1 in
	ocq-defer) echo "--path ocq-strict --defer-usecs $DEFER_US" ;;
	ocq-dim) echo "--path ocq-strict --defer-usecs $DEFER_US --defer-dim" ;;
	ocq-busy) echo "--path ocq-strict --busy-poll-usecs $BUSY_US" ;;
	*) echo "--path $1" ;;
	esac
}

# the ocq-demo options of a scenario and path (scenario definitions live here)
scenario_args() {
	pp=""
	# a postponed arm never arms by itself: ocq-defer, ocq-dim and ocq-busy keep
	# their own
	case $2 in ocq-defer|ocq-dim|ocq-busy) ;; ocq-*) pp=--postpone ;; esac
	case $1 in
	rxe_steady)        echo "--conns 2 --credits 16 --mix echo:1 --echo-size 64" ;;
	# one call in flight: each completion waits for its event (or the timer)
	rxe_latency)       echo "--conns 1 --credits 1 --mix echo:1 --echo-size 64" ;;
	rxe_bulk)          echo "--conns 2 --credits 16 --mix read:1,write:1 --chunk-size 65536" ;;
	rxe_slow_consumer) echo "--conns 2 --credits 64 --mix echo:1 --echo-size 64 --work-ns $SLOW_WORK_NS $pp" ;;
	# the open loop: messages come at OPEN_RATE whatever the server does
	rxe_open_slow)     echo "--conns 2 --rate $OPEN_RATE --work-ns $SLOW_WORK_NS $pp" ;;
	rxe_heavy_flows)   echo "--conns 4 --credits 16 --mix echo:1 --echo-size 64 --work-ns $HEAVY_WORK_NS" ;;
	*) return 1 ;;
	esac
}

trace_setup() {
	[ -d $T/events/rdma_core/cq_schedule ] || return 1
	echo 0 > $T/tracing_on
	echo > $T/set_event
	echo 16384 > $T/buffer_size_kb
	for e in cq_schedule cq_reschedule cq_process cq_poll; do
		echo 1 > $T/events/rdma_core/$e/enable
	done
}

trace_off() {
	for e in cq_schedule cq_reschedule cq_process cq_poll; do
		echo 0 > $T/events/rdma_core/$e/enable
	done
	echo 1408 > $T/buffer_size_kb
}

# counts of the trace as a JSON object
trace_counts() {
	overrun=$(cat $T/per_cpu/cpu*/stats 2>/dev/null | awk '/^overrun:/ { s += $2 } END { print s + 0 }')
	awk -v overrun="$overrun" '
	/ cq_schedule: / { ev++ }
	/ cq_reschedule: / { rs++ }
	/ cq_process: / {
		runs++; if (/from reschedule/) rr++
		id = $0; sub(/.*cq\.id=/, "", id); sub(/ .*/, "", id); first[id] = 1
	}
	/ cq_poll: / {
		polls++
		id = $0; sub(/.*cq\.id=/, "", id); sub(/ .*/, "", id)
		if (first[id]) { first[id] = 0; if (/returned 0$/) empty++ }
	}
	END {
		printf "{\"events\":%d,\"runs\":%d,\"runs_rescheduled\":%d,\"reschedules\":%d,\"empty_runs\":%d,\"polls\":%d,\"overrun\":%d}",
			ev, runs, rr, rs, empty, polls, overrun
	}' $T/trace
}

# demo_run SCENARIO PATH REPEAT DURATION COUNT(0|1)
demo_run() {
	args=$(scenario_args "$1" "$2") || { say "unknown scenario $1"; return; }
	args="$args $(path_args "$2")"
	rm -f /tmp/run.json
	if [ "$5" = 1 ]; then
		echo > $T/trace
		echo 1 > $T/tracing_on
	fi
	e0=$(env_now) b0=$(busy)
	# shellcheck disable=SC2086
	ocq-demo run $args --duration "$4" --interval 60000 \
		--json /tmp/run.json > /tmp/run.out 2>&1
	rc=$?
	b1=$(busy) e1=$(env_now)
	[ "$5" = 1 ] && echo 0 > $T/tracing_on
	if [ ! -s /tmp/run.json ]; then
		say "$1 $2: no result (ocq-demo exit $rc): $(tail -n 3 /tmp/run.out | tr '\n' ' ')"
		return
	fi
	if [ "$5" = 1 ]; then
		printf 'BENCH-REC {"scenario":"%s","path":"%s","repeat":%s,"count":%s,"demo":%s}\n' \
			"$1" "$2" "$3" "$(trace_counts)" "$(tr -d '\n' < /tmp/run.json)"
		say "$1 $2: counted with tracepoints (exit $rc)"
		return
	fi
	printf 'BENCH-REC {"scenario":"%s","path":"%s","repeat":%s,"rc":%s,"busy_ns":%s,"env":%s,"demo":%s}\n' \
		"$1" "$2" "$3" "$rc" "$(( (b1 - b0) * (1000000000 / USER_HZ) ))" \
		"$(env_json "$e0" "$e1")" "$(tr -d '\n' < /tmp/run.json)"
	say "$1 $2 #$3: $(awk '/^  calls / { print $2, $3, $4 }' /tmp/run.out) (exit $rc)"
}

fake_run() {
	[ -f /ko/ocq_bench_fake.ko ] || { say "ocq_bench_fake.ko missing"; return; }
	e0=$(env_now)
	if ! insmod /ko/ocq_bench_fake.ko completions="$FAKE_N" rounds=1 \
		budget="${FAKE_BUDGET:-0}"; then
		say "fake_floor: insmod ocq_bench_fake.ko failed"
		return
	fi
	env=$(env_json "$e0" "$(env_now)")
	dmesg | grep 'ocq_bench_fake: round=' | tail -n 4 | sed 's/.*ocq_bench_fake: //' |
	while read -r line; do
		# shellcheck disable=SC2086 # split into its key=value words
		set -- $line
		mode=${2#mode=}
		case $mode in floor) p=floor ;; *) p=ocq-$mode ;; esac
		printf 'BENCH-REC {"scenario":"fake_floor","path":"%s","repeat":%s,"env":%s' \
			"$p" "$rep" "$env"
		for kv in "$@"; do
			case $kv in round=*|mode=*) continue ;; esac
			printf ',"%s":%s' "${kv%%=*}" "${kv#*=}"
		done
		echo '}'
		say "fake_floor $p #$rep: ${5#ns_per_completion=} ns per completion"
	done
	rmmod ocq_bench_fake
}

# rxe_pool: the same pool_bench.c on ib_core's pool, then on ocq's (see its header)
pool_run() {
	for b in upstream ocq; do
		m=ocq_bench_pool_$b
		[ -f /ko/$m.ko ] || { say "$m.ko missing"; continue; }
		e0=$(env_now)
		if ! insmod /ko/$m.ko duration_ms=$((DURATION * 1000)) \
			heavy_ns="$POOL_HEAVY_NS"; then
			say "rxe_pool: insmod $m.ko failed: $(dmesg | grep "$m: " | tail -n 2 | tr '\n' ' ')"
			continue
		fi
		# the line of this load: a load that succeeds has printed one
		env=$(env_json "$e0" "$(env_now)")
		line=$(dmesg | sed -n "s/.*$m: BENCH-POOL //p" | tail -n 1)
		rmmod $m
		[ -n "$line" ] || { say "rxe_pool $b: no BENCH-POOL line"; continue; }
		printf 'BENCH-REC {"scenario":"rxe_pool","path":"%s-pool","repeat":%s,"rc":0,"env":%s,"pool":%s}\n' \
			"$b" "$rep" "$env" "$line"
		say "rxe_pool $b-pool #$rep: $(echo "$line" | sed 's/.*"light":{\([^}]*\)}.*/\1/')"
	done
}

say "start: $(uname -r) nproc=$(nproc) scenarios=[$SCENARIOS] paths=[$PATHS] repeats=$REPEATS duration=${DURATION}s"
rep=1
while [ $rep -le "$REPEATS" ]; do
	for s in $SCENARIOS; do
		case $s in
		fake_floor) fake_run; continue ;;
		rxe_pool) pool_run; continue ;;
		esac
		for p in $PATHS; do
			demo_run "$s" "$p" "$rep" "$DURATION" 0
		done
	done
	rep=$((rep + 1))
done

if trace_setup; then
	for s in $SCENARIOS; do
		case $s in fake_floor|rxe_pool) continue ;; esac
		for p in $PATHS; do
			case $p in upstream-*) demo_run "$s" "$p" 0 "$COUNT_DURATION" 1 ;; esac
		done
	done
	trace_off
else
	say "no rdma_core tracepoints: upstream events and runs unavailable"
fi
rmmod ocq_demo || say "rmmod ocq_demo failed"
echo "BENCH-DONE"
