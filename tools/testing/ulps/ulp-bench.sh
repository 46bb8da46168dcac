#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ulp-bench.sh - make ulp-bench: the kernel's NVMe-oF, NFS/RDMA and RDS modules, stock
# against converted to ocq, under the same workloads in one boot.
#
# Usage: [REPEATS=10] [QUICK=1] [SMP=2] [MEM=2G] [ACCEL=auto|tcg|kvm] [MIB=32]
#        [RAND_OPS=2000] [THREADS=4] [ULPS="nvme nfs rds"]
#        tools/testing/ulps/ulp-bench.sh [METAPACKAGE]
#
# Builds the kernel's modules and ours (tools/testing/vm/build.sh), the ULPs stock
# and converted (build.sh here, which also builds rds-io), ulp-io (ulp-io.c, static)
# and an initramfs with them, boots the guest once and runs guest-ulp-bench.sh
# there: per repeat, the stock variant then the converted one, and in each, of the
# ULPS (default all three), NVMe-oF then NFS each a sequential write and read of
# MIB MiB in 1 MiB blocks and RAND_OPS random 4 KiB reads by THREADS threads,
# O_DIRECT, then RDS two passes of rds-io messages over THREADS socket pairs
# (msg_small, msg_large).  The records are cut out of the console log
# (build/ulp-bench/<KVER>/records.jsonl) and ulp_aggregate.py turns them into
# medians, min/max and, per ULP and pass, the paired ratio of the converted variant
# to stock (the median of the per-repeat ratios) with its 95 % bootstrap interval;
# every pass also records rxe0's hw_counters (retransmissions, RNR NAKs, sequence
# errors), and the boot the host's load average and steal time before and after
# (build/ulp-bench/<KVER>/host.json):
#
#   build/ulp-bench/<KVER>/results.json, table.txt, table.rst, plot.svg
#
# QUICK=1: one repeat of small passes, intervals n/a; for CI, which only checks that
# the bench works (never a figure).
#
# NODES=2: the two-node shape (tools/testing/vm/fabric-boot.sh): the NVMe-oF target
# (a memory-backed null_blk) and the NFS server on node B, the host and the client
# on node A, across the wire, one vCPU each (fabric-ulp-bench.sh); the same passes
# and records, in build/ulp-bench/<KVER>-2nodes/.  RDS has no two-node shape: ULPS
# is nvme and nfs then, and rds in it is an error.
#
# Exit status: 0 when every pass produced a record and the kernel stayed quiet; 1 for
# anything else (build, boot, timeout, kernel warning, missing records).
set -uo pipefail

META=${1:-linux-image-amd64}
TOP=$(cd "$(dirname "$0")/../../.." && pwd)
VM=$TOP/tools/testing/vm
HERE=$TOP/tools/testing/ulps
SMP=${SMP:-2}
MEM=${MEM:-2G}
ACCEL=${ACCEL:-auto}
QUICK=${QUICK:-0}
NODES=${NODES:-1}
ULPS=${ULPS:-}
[ "$QUICK" = 0 ] && QUICK=""
BOOT_TIMEOUT=${BOOT_TIMEOUT:-180}
BAD_RE='WARNING:|BUG:|Oops|soft lockup|hard LOCKUP|blocked for more than|refcount_t|list_add corruption|list_del corruption|UBSAN|KASAN|kernel BUG|general protection fault|Kernel panic'
if [ -n "$QUICK" ]; then
	REPEATS=1 MIB=4 RAND_OPS=200 THREADS=${THREADS:-4}
else
	REPEATS=${REPEATS:-10} MIB=${MIB:-32} RAND_OPS=${RAND_OPS:-2000} THREADS=${THREADS:-4}
fi

say() { echo "ulp-bench: $*"; }
fatal() { say "FAILED: $*"; exit 1; }

if [ -z "$ULPS" ]; then
	ULPS="nvme nfs rds"
	[ "$NODES" = 2 ] && ULPS="nvme nfs"
fi
read -ra ulps <<< "$ULPS"
[ ${#ulps[@]} -gt 0 ] || fatal "ULPS='$ULPS': no ULP"
for u in "${ulps[@]}"; do
	case $u in
	nvme | nfs) ;;
	rds) [ "$NODES" = 2 ] && fatal "ULPS: rds runs on one node only (NODES=2)" ;;
	*) fatal "ULPS: '$u' is none of nvme, nfs, rds" ;;
	esac
done

"$VM"/host-deps.sh check || fatal "installing the host tools failed"
command -v python3 >/dev/null || fatal "no python3 (make bench installs it)"
ENV=$("$VM"/build.sh "$META" | tail -1)
[ -f "$ENV" ] || fatal "build failed"
# shellcheck source=/dev/null
. "$ENV"
OUT=$TOP/build/ulp-bench/$KVER
[ "$NODES" = 2 ] && OUT=$OUT-2nodes SMP=1
rm -rf "$OUT" && mkdir -p "$OUT/initrd"
"$HERE"/build.sh "$META" > "$OUT/ulps.log" 2>&1 ||
	fatal "make ulps failed: $(grep '^ulps: error' "$OUT/ulps.log" | tail -1) (log: ${OUT#"$TOP"/}/ulps.log)"
say "ULPs built: build/$KVER/ulps/{stock,ocq}/"
gcc -static -O2 -Wall -Wextra -Werror -pthread -o "$OUT/initrd/ulp-io" "$HERE/ulp-io.c" ||
	fatal "building ulp-io"
ULPS_STATUS=ok "$VM"/initramfs.sh "$ENV" "$OUT/initramfs.cpio.gz" || fatal "initramfs failed"

# shellcheck source=tools/testing/vm/boot.sh
. "$VM"/boot.sh
# shellcheck source=tools/testing/bench/hostenv.sh
. "$TOP"/tools/testing/bench/hostenv.sh
vm_setup
qpid=""
trap '[ -n "$qpid" ] && kill "$qpid" 2>/dev/null' EXIT
if [ "$NODES" = 2 ]; then
	# shellcheck source=tools/testing/vm/fabric-boot.sh
	. "$VM"/fabric-boot.sh
	# node B's kernel problems, as fabric_poll hands them on
	parse_line() { [ -n "$bad" ] || { bad=${1#\# kmsg: }; say "kernel: $bad"; }; }
	trap '[ -n "$qpid" ] && kill "$qpid" 2>/dev/null; [ -n "${FABRIC_RUN:-}" ] && fabric_stop' EXIT
fi

d=$OUT/initrd log=$OUT/console.log
# per repeat and variant, three passes of NVMe-oF and NFS each, two of RDS; a pass
# takes well under a minute under TCG, set-ups and teardowns about 20 s each (RDS's
# 10 s); NVMe-oF and NFS run once more traced
passes=0 tmo=120
for u in "${ulps[@]}"; do
	case $u in
	rds) passes=$((passes + REPEATS * 2 * 2)) tmo=$((tmo + REPEATS * 2 * (2 * 60 + 10))) ;;
	*) passes=$((passes + REPEATS * 2 * 3)) tmo=$((tmo + (REPEATS + 1) * 2 * (3 * 60 + 20))) ;;
	esac
done
cp "$HERE/guest-ulp-bench.sh" "$d/"
extra=()
if [ "$NODES" = 2 ]; then
	cp "$HERE/fabric-ulp-bench.sh" "$d/"
	extra=(fabric-ulp-bench.sh)
	echo "ULPB_FABRIC=/fabric-ulp-bench.sh" >> "$d/ulp-bench.conf.extra"
fi
cat > "$d/ulp-bench.conf" <<-CONF
REPEATS=$REPEATS
MIB=$MIB
RAND_OPS=$RAND_OPS
THREADS=$THREADS
ULP_IO=/ulp-io
ULPS="$ULPS"
CONF
[ -f "$d/ulp-bench.conf.extra" ] && cat "$d/ulp-bench.conf.extra" >> "$d/ulp-bench.conf"
echo "ulpbench /guest-ulp-bench.sh $tmo" > "$d/tests.list"
echo 1 > "$d/tests.start"
shape=
[ "$NODES" = 2 ] && shape=", two nodes"
say "$KVER -smp $SMP ($ACCEL)$shape, $ULPS: $REPEATS repeat(s) of $passes passes; at most" \
	"$((tmo / 60 + 1)) min; console: ${log#"$TOP"/}"
hostenv_begin "$OUT/host.json"
b0=$(date +%s) seen=0 bad=""
if [ "$NODES" = 2 ]; then
	fabric_start "$OUT/initramfs.cpio.gz" "$d" "$log" "$OUT/qemu.err" \
		guest-ulp-bench.sh ulp-bench.conf ulp-io "${extra[@]}"
else
	vm_initrd "$OUT/initramfs.cpio.gz" "$d" "$d.img" tests.list tests.start \
		guest-ulp-bench.sh ulp-bench.conf ulp-io
	SMP=$SMP vm_start "$d.img" "$log" "$OUT/qemu.err"
fi
while kill -0 "$qpid" 2>/dev/null; do
	sleep 2
	hostenv_sample
	[ "$NODES" = 2 ] && ! fabric_poll && { kill "$qpid"; fatal "node B's QEMU exited"; }
	n=$(wc -l < "$log" 2>/dev/null || echo 0)
	if [ "$n" -gt "$seen" ]; then
		while IFS= read -r k; do
			k=${k%$'\r'}
			case $k in
			"# ULPB-PROGRESS "*) echo "  ${k#\# ULPB-PROGRESS }" ;;
			"# ULPB-ERROR "*) say "guest: ${k#\# ULPB-ERROR }" ;;
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
tr -d '\r' < "$log" | grep -a '^# ULPB-REC ' | sed 's/^# ULPB-REC //' > "$OUT/records.jsonl"
[ -z "$bad" ] || fatal "kernel problem: $bad"
grep -a -q '^# ULPB-DONE' "$log" || fatal "the guest did not finish; console: ${log#"$TOP"/}"
n=$(grep -c -v '"count":' "$OUT/records.jsonl")
say "$n timed records of $passes"
[ "$n" = "$passes" ] || fatal "passes without a record (the progress lines above say why)"

command -v gnuplot >/dev/null || say "no gnuplot (make bench installs gnuplot-nox): no plot"
python3 "$HERE"/ulp_aggregate.py --kernel "$KVER" --smp "$SMP" --repeats "$REPEATS" \
	--host "$OUT/host.json" --out "$OUT" "$OUT/records.jsonl" || fatal "aggregation failed"
say "results: ${OUT#"$TOP"/}/results.json, table.txt, table.rst"
