#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench.sh - make bench: boot a Debian kernel in QEMU and measure every CQ path.
#
# Usage: [REPEATS=10] [QUICK=1] [SMP=2] [MEM=2G] [ACCEL=auto|tcg|kvm]
#        [SCENARIOS="..."] [PATHS="..."] [DURATION=3] [SLOW_WORK_NS=] [HEAVY_WORK_NS=]
#        [POOL_HEAVY_NS=] [DEFER_US=] [BUSY_US=] [OPEN_RATE=]
#        [FAKE_N=] [FAKE_BUDGET=]
#        tools/testing/bench/bench.sh [METAPACKAGE]
#
# Builds as make check does (host-deps.sh, build.sh, initramfs.sh), then boots the
# guest once at -smp SMP for all scenarios, and once more at -smp 4 for
# rxe_heavy_flows (not with QUICK=1). In the guest, guest-bench.sh runs the
# scenarios for every path, interleaved (repeat 1: every scenario, every path; then
# repeat 2; ...) and prints one record per run on the serial console. Every path
# is measured against its baseline, the upstream ib_cq in the same poll context
# (aggregate.py's pairing table; a baseline PATHS lacks is added before the run).
# Here the records are cut out of the console log
# (build/bench/<KVER>/records-smpN.jsonl) and aggregate.py turns them into medians,
# min/max and, per scenario and path, the paired ratio to the baseline (the median
# of the per-repeat ratios of completions/s) with its 95 % bootstrap interval:
#
#   build/bench/<KVER>/results.json, table.txt, table.rst, plot.svg (the first three
#   copied to build/bench/)
#
# The host's load average and steal time before and after each boot (and its load
# every 30 s) go to build/bench/<KVER>/host-smpN.json and into results.json.
#
# QUICK=1: one repeat, 1 s runs, a small fake_floor, intervals n/a; for CI, which
# only checks that the bench works (never a timing).
#
# Exit status: 0 when every run produced a record and the kernel stayed quiet; 1 for
# anything else (build, boot, timeout, kernel warning, missing records).
set -uo pipefail

META=${1:-linux-image-amd64}
TOP=$(cd "$(dirname "$0")/../../.." && pwd)
VM=$TOP/tools/testing/vm
BENCH=$TOP/tools/testing/bench
SMP=${SMP:-2}
MEM=${MEM:-2G}
ACCEL=${ACCEL:-auto}
QUICK=${QUICK:-0}
[ "$QUICK" = 0 ] && QUICK=""
BOOT_TIMEOUT=${BOOT_TIMEOUT:-180}
BAD_RE='WARNING:|BUG:|Oops|soft lockup|hard LOCKUP|blocked for more than|refcount_t|list_add corruption|list_del corruption|UBSAN|KASAN|kernel BUG|general protection fault|Kernel panic'

PATHS=${PATHS:-ocq-strict ocq-defer ocq-dim ocq-busy ocq-flow ocq-parallel upstream-wq upstream-unbound upstream-softirq naive locked}
# ocq-defer: ocq-strict with the deferred re-arm, polled again after DEFER_US;
# ocq-dim: the same with software DIM picking the delay, DEFER_US at most;
# ocq-busy: ocq-strict busy-polled by a thread per side, re-armed BUSY_US after
# its last poll (consumer-driven suspension)
DEFER_US=${DEFER_US:-100}
BUSY_US=${BUSY_US:-100}
SCENARIOS=${SCENARIOS:-fake_floor rxe_steady rxe_latency rxe_bulk rxe_slow_consumer rxe_open_slow rxe_heavy_flows rxe_pool}
# CPU burned per completion (rxe_slow_consumer, rxe_open_slow, rxe_heavy_flows): under
# TCG rxe itself costs some 250 us of CPU per completion, so the work must be of that
# order to matter
SLOW_WORK_NS=${SLOW_WORK_NS:-100000}
# rxe_open_slow: messages per second offered, whatever the server does
OPEN_RATE=${OPEN_RATE:-2000}
HEAVY_WORK_NS=${HEAVY_WORK_NS:-200000}
# rxe_pool's heavy receive done(): well above rxe's own cost, so that what a light
# QP waits for behind it is the heavy one's done(), not rxe
POOL_HEAVY_NS=${POOL_HEAVY_NS:-2000000}
FAKE_BUDGET=${FAKE_BUDGET:-0}
if [ -n "$QUICK" ]; then
	REPEATS=1 DURATION=1 COUNT_DURATION=1 FAKE_N=20000
else
	REPEATS=${REPEATS:-10} DURATION=${DURATION:-3} COUNT_DURATION=${COUNT_DURATION:-2}
	FAKE_N=${FAKE_N:-200000}
fi

say() { echo "bench: $*"; }
fatal() { say "FAILED: $*"; exit 1; }

"$VM"/host-deps.sh check || fatal "installing the host tools failed"
if ! command -v python3 >/dev/null; then
	say "installing python3 (the aggregation)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		python3 >/dev/null 2>&1 || fatal "python3 could not be installed"
fi
# every path's baseline runs in the same repeats: fixed now, not picked afterwards
missing=$(python3 "$BENCH"/aggregate.py --baselines "$PATHS") ||
	fatal "PATHS has a path without a baseline in aggregate.py's pairing table"
if [ -n "$missing" ]; then
	say "adding the baseline(s) of PATHS: $missing"
	PATHS="$PATHS $missing"
fi
# shellcheck source=tools/testing/bench/hostenv.sh
. "$BENCH"/hostenv.sh
ENV=$("$VM"/build.sh "$META" | tail -1)
[ -f "$ENV" ] || fatal "build failed"
# shellcheck source=/dev/null
. "$ENV"
B=$TOP/build/$KVER
OUT=$TOP/build/bench/$KVER
rm -rf "$OUT" && mkdir -p "$OUT"
"$VM"/initramfs.sh "$ENV" "$B/initramfs.cpio.gz" || fatal "initramfs failed"

# shellcheck source=tools/testing/vm/boot.sh
. "$VM"/boot.sh
vm_setup
qpid=""
trap '[ -n "$qpid" ] && kill "$qpid" 2>/dev/null' EXIT

# boot_bench SMP "SCENARIOS": one boot; records into $OUT/records-smpN.jsonl
boot_bench() {
	local smp=$1 scen=$2 d=$OUT/initrd-smp$1 log=$OUT/console-smp$1.log
	local nrxe nfake npool runs tmo b0 seen=0 bad="" done=0 n k s

	nrxe=0 nfake=0 npool=0
	for s in $scen; do
		case $s in
		fake_floor) nfake=1 ;;
		rxe_pool) npool=1 ;;
		*) nrxe=$((nrxe + 1)) ;;
		esac
	done
	runs=$((REPEATS * nrxe * $(wc -w <<< "$PATHS")))
	# a run takes its duration plus about 6 s of set-up and teardown under TCG;
	# rxe_pool's two also a 0.5 s warm-up and its 16 QPs' set-up and drain
	tmo=$((runs * (DURATION + 8) + nrxe * 3 * (COUNT_DURATION + 8) +
		REPEATS * nfake * (FAKE_N / 2000 + 30) +
		REPEATS * npool * 2 * (DURATION + 20) + 120))
	mkdir -p "$d"
	cp "$BENCH/guest-bench.sh" "$d/guest-bench.sh"
	cat > "$d/bench.conf" <<-EOF
	SCENARIOS="$scen"
	PATHS="$PATHS"
	REPEATS=$REPEATS
	DURATION=$DURATION
	COUNT_DURATION=$COUNT_DURATION
	FAKE_N=$FAKE_N
	SLOW_WORK_NS=$SLOW_WORK_NS
	OPEN_RATE=$OPEN_RATE
	HEAVY_WORK_NS=$HEAVY_WORK_NS
	POOL_HEAVY_NS=$POOL_HEAVY_NS
	DEFER_US=$DEFER_US
	BUSY_US=$BUSY_US
	FAKE_BUDGET=$FAKE_BUDGET
	EOF
	echo "bench /guest-bench.sh $tmo" > "$d/tests.list"
	echo 1 > "$d/tests.start"
	vm_initrd "$B/initramfs.cpio.gz" "$d" "$d/initrd" tests.list tests.start \
		guest-bench.sh bench.conf
	say "$KVER -smp $smp ($ACCEL): $scen; $REPEATS repeat(s), ${DURATION}s runs;" \
		"at most $((tmo / 60 + 1)) min; console: ${log#"$TOP"/}"
	hostenv_begin "$OUT/host-smp$smp.json"
	SMP=$smp vm_start "$d/initrd" "$log" "$OUT/qemu-smp$smp.err"
	b0=$(date +%s)
	while kill -0 "$qpid" 2>/dev/null; do
		sleep 2
		hostenv_sample
		# whole lines only (wc -l counts newlines), and only new ones
		n=$(wc -l < "$log" 2>/dev/null || echo 0)
		if [ "$n" -gt "$seen" ]; then
			while IFS= read -r k; do
				k=${k%$'\r'}
				case $k in
				"# BENCH-PROGRESS "*) echo "  ${k#\# BENCH-PROGRESS }" ;;
				"# BENCH-ERROR "*) say "guest: ${k#\# BENCH-ERROR }" ;;
				esac
				[ -z "$bad" ] && [[ $k =~ $BAD_RE ]] && bad=$k && say "kernel: $k"
			done < <(sed -n "$((seen + 1)),${n}p" "$log")
			seen=$n
		fi
		if ! grep -q '^# OCQ-INIT' "$log" && [ $(($(date +%s) - b0)) -gt "$BOOT_TIMEOUT" ]; then
			kill "$qpid"; fatal "boot timeout; console: ${log#"$TOP"/}"
		fi
		if [ $(($(date +%s) - b0)) -gt $((BOOT_TIMEOUT + tmo + 60)) ]; then
			kill "$qpid"; fatal "timeout; console: ${log#"$TOP"/}"
		fi
	done
	wait "$qpid" 2>/dev/null
	qpid=""
	hostenv_end
	tr -d '\r' < "$log" | grep -a '^# BENCH-REC ' | sed 's/^# BENCH-REC //' \
		> "$OUT/records-smp$smp.jsonl"
	grep -a -q '^# BENCH-DONE' "$log" && done=1
	[ -z "$bad" ] || fatal "kernel problem: $bad"
	[ "$done" = 1 ] || fatal "the guest did not finish; console: ${log#"$TOP"/}"
	n=$(grep -c -v '"count":' "$OUT/records-smp$smp.jsonl")
	k=$((REPEATS * (nrxe * $(wc -w <<< "$PATHS") + nfake * 4 + npool * 2)))
	say "$n timed records of $k (-smp $smp)"
	[ "$n" = "$k" ] || fatal "runs without a result (BENCH-PROGRESS lines above say why)"
}

boot_bench "$SMP" "$SCENARIOS"
recs=("$OUT/records-smp$SMP.jsonl")
hosts=(--host "$OUT/host-smp$SMP.json")
if [ -z "$QUICK" ] && [ "$SMP" != 4 ] && [[ " $SCENARIOS " == *" rxe_heavy_flows "* ]]; then
	boot_bench 4 rxe_heavy_flows
	recs+=("$OUT/records-smp4.jsonl")
	hosts+=(--host "$OUT/host-smp4.json")
fi

command -v gnuplot >/dev/null || {
	say "installing gnuplot-nox"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		gnuplot-nox >/dev/null 2>&1 || say "gnuplot-nox could not be installed: no plot"
}
python3 "$BENCH"/aggregate.py --kernel "$KVER" --smp "$SMP" --repeats "$REPEATS" \
	--paths "$PATHS" --out "$OUT" "${hosts[@]}" "${recs[@]}" || fatal "aggregation failed"
cp "$OUT"/results.json "$OUT"/table.txt "$TOP/build/bench/"
[ -f "$OUT/plot.svg" ] && cp "$OUT/plot.svg" "$TOP/build/bench/"
say "results: build/bench/results.json (and ${OUT#"$TOP"/}/)"
