#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# guest-ulp-bench.sh - the guest's part of make ulp-bench (see ulp-bench.sh): the
# kernel's NVMe-oF, NFS/RDMA and RDS modules, stock and converted to ocq
# (/ko/ulps/), under the same workloads, interleaved and repeated in one boot.
#
# Usage (in the guest, as a test of /init): guest-ulp-bench.sh CONF
# CONF is sourced and sets REPEATS, MIB (MiB of each sequential pass), RAND_OPS
# (4 KiB random reads per pass), THREADS (of the random reads), ULP_IO (where
# ulp-io is) and ULPS (which of nvme, nfs and rds run; all three if unset).
#
# Per repeat, per variant (stock, ocq), per ULP: NVMe-oF and NFS set up, then three
# passes with ulp-io (seq_write and seq_read of 1 MiB blocks, rand_read of 4 KiB
# ones, O_DIRECT); RDS two passes with rds-io over rxe0 from 10.11.12.1 to itself,
# THREADS socket pairs, every message checked: msg_small (RAND_OPS messages of 32 B
# to 1 KiB per pair) and msg_large (16 to 48 KiB, about MIB MiB in all); rds-io's
# "ops" are messages, its "iops" messages/s, and its "counters" RDS's own.  Each
# pass is printed as one line:
#   ULPB-REC {"ulp":…,"variant":…,"repeat":…,"pass":…,"busy_ns":…,
#             "io":{ulp-io's JSON},"ocq":{"events":…,"runs":…,"completions":…},
#             "rxe":{"sent_pkts":…,…},"env":{…}}
# busy_ns: all CPUs' non-idle time over the pass (/proc/stat).  ocq: the deltas of
# the live ordered CQs' counters over the pass (zero for stock).  rxe: the deltas of
# every counter of rxe0's hw_counters over the pass (retransmissions, RNR NAKs,
# sequence errors...), stock and converted alike.  env: the guest's steal time and
# all time of all CPUs (/proc/stat ticks) over the pass and its 1-minute load
# average before and after: {"steal":…,"ticks":…,"load0":…,"load1":…}.  RDS polls its
# CQs in its own tasklets, in both variants, and counts its CQ events
# (ib_evt_handler_call), tasklet runs (ib_tasklet_call) and completions
# (ib_rx_cq_event, ib_tx_cq_event) itself: rds-io's counters give them for every
# pass.  After the timed repeats NVMe-oF's and NFS's stock variant runs once more
# with the rdma_core tracepoints on
# ("repeat":0 and "count":{"events":…,"runs":…,"completions":…,"overrun":…}:
# cq_schedule, cq_process, the completions cq_poll returned, and the events the
# trace buffer lost); no timed pass has tracing on.
set -u
CONF=${1:-/ulp-bench.conf}
# shellcheck source=/dev/null
. "$CONF"
ULPS=${ULPS:-nvme nfs rds}
. /selftests/lib/ksft.sh
. /selftests/lib/rxe.sh
. /selftests/ulp/lib.sh
. /selftests/ulp/nvme.sh
. /selftests/ulp/nfs.sh

T=/sys/kernel/tracing
USER_HZ=100
say() { echo "ULPB-PROGRESS $*"; }
die() { echo "ULPB-ERROR $*"; exit 1; }

busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }

# steal jiffies, all jiffies (user .. steal) and the 1-minute load average
env_now() {
	echo "$(awk '/^cpu / { print $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat)" \
		"$(cut -d' ' -f1 /proc/loadavg)"
}

# env_json BEFORE AFTER: a pass's "env" object from two env_now lines
env_json() {
	# shellcheck disable=SC2086 # split into their words
	set -- $1 $2
	printf '{"steal":%s,"ticks":%s,"load0":%s,"load1":%s}' \
		"$(($4 - $1))" "$(($5 - $2))" "$3" "$6"
}

RXE_HW=/sys/class/infiniband/rxe0/ports/1/hw_counters

# "name value" of each of rxe0's hw_counters
rxe_now() {
	[ -d $RXE_HW ] || return 0
	for f in "$RXE_HW"/*; do
		echo "${f##*/} $(cat "$f")"
	done
}

# rxe_json BEFORE AFTER: {"name":delta,...} from two rxe_now outputs
rxe_json() {
	printf '%s\n--\n%s\n' "$1" "$2" | awk '
	BEGIN { printf "{" }
	$0 == "--" { after = 1; next }
	NF != 2 { next }
	!after { b[$1] = $2; next }
	{ printf "%s\"%s\":%d", sep, $1, $2 - b[$1]; sep = "," }
	END { printf "}" }'
}

# events runs completions of the live ordered CQs
ocq_counts() {
	echo "$(ulp_ocq_sum events) $(ulp_ocq_sum runs) $(ulp_ocq_sum completions)"
}

trace_on() {
	echo 16384 > $T/buffer_size_kb
	echo > $T/trace
	for e in cq_schedule cq_process cq_poll; do
		echo 1 > $T/events/rdma_core/$e/enable
	done
	echo 1 > $T/tracing_on
}

trace_counts() {
	echo 0 > $T/tracing_on
	for e in cq_schedule cq_process cq_poll; do
		echo 0 > $T/events/rdma_core/$e/enable
	done
	overrun=$(cat $T/per_cpu/cpu*/stats 2>/dev/null |
		awk '/^overrun:/ { s += $2 } END { print s + 0 }')
	awk -v overrun="$overrun" '/ cq_schedule: / { ev++ } / cq_process: / { runs++ }
	/ cq_poll: / { n = $NF; if (n > 0) c += n }
	END { printf "{\"events\":%d,\"runs\":%d,\"completions\":%d,\"overrun\":%d}",
		ev, runs, c, overrun }' $T/trace
	echo 1408 > $T/buffer_size_kb
}

# pass ULP VARIANT REPEAT NAME COUNT(0|1) ULP-IO-ARGS...
pass() {
	local ulp=$1 v=$2 rep=$3 name=$4 count=$5 b0 b1 c0 c1 io ev ru co e0 e1 r0 r1

	shift 5
	[ "$count" = 1 ] && trace_on
	r0=$(rxe_now) e0=$(env_now) c0=$(ocq_counts) b0=$(busy)
	io=$("$ULP_IO" "$@") || say "$ulp $v $name: ${ULP_IO##*/} failed: $io"
	b1=$(busy) c1=$(ocq_counts) e1=$(env_now) r1=$(rxe_now)
	[ -n "$io" ] || io='{"ops":0,"errors":1}'
	set -- $c0 $c1
	ev=$(($4 - $1)) ru=$(($5 - $2)) co=$(($6 - $3))
	if [ "$count" = 1 ]; then
		printf 'ULPB-REC {"ulp":"%s","variant":"%s","repeat":0,"pass":"%s","io":%s,"count":%s}\n' \
			"$ulp" "$v" "$name" "$io" "$(trace_counts)"
		return
	fi
	printf 'ULPB-REC {"ulp":"%s","variant":"%s","repeat":%s,"pass":"%s","busy_ns":%s,"io":%s,"ocq":{"events":%s,"runs":%s,"completions":%s},"rxe":%s,"env":%s}\n' \
		"$ulp" "$v" "$rep" "$name" "$(( (b1 - b0) * (1000000000 / USER_HZ) ))" "$io" \
		"$ev" "$ru" "$co" "$(rxe_json "$r0" "$r1")" "$(env_json "$e0" "$e1")"
	say "$ulp $v #$rep $name: $io"
}

# passes ULP VARIANT REPEAT COUNT TARGET: the three passes on TARGET (a block
# device or a file of MIB MiB)
passes() {
	local span=$((MIB * 1048576))

	pass "$1" "$2" "$3" seq_write "$4" write "$5" 1048576 $MIB 1 seq $span
	pass "$1" "$2" "$3" seq_read "$4" read "$5" 1048576 $MIB 1 seq $span
	pass "$1" "$2" "$3" rand_read "$4" read "$5" 4096 "$RAND_OPS" "$THREADS" rand $span
}

nvme_variant() {	# VARIANT REPEAT COUNT
	local ns

	insmod "$ULP_KO/$1/nvmet-rdma.ko" || die "nvme $1: insmod nvmet-rdma.ko"
	insmod "$ULP_KO/$1/nvme-rdma.ko" || die "nvme $1: insmod nvme-rdma.ko"
	nvme_target_up "nqn.2026-01.org.ocq:ulp-bench" || die "nvme $1: target set-up"
	nvme_connect || die "nvme $1: connect"
	ns=$(nvme_find_ns) || die "nvme $1: no namespace"
	passes nvme "$1" "$2" "$3" "/dev/$ns"
	nvme_disconnect || die "nvme $1: disconnect"
	nvme_target_down || die "nvme $1: target teardown"
	rmmod nvme_rdma && rmmod nvmet_rdma || die "nvme $1: rmmod"
}

nfs_variant() {	# VARIANT REPEAT COUNT
	insmod "$ULP_KO/$1/rpcrdma.ko" || die "nfs $1: insmod rpcrdma.ko"
	nfs_start_server > /dev/null || die "nfs $1: knfsd on rdma"
	nfs_mount || die "nfs $1: mount over rdma"
	# the first OPEN waits out the grace period: not part of a pass
	dd if=/dev/zero of=$NFS_MNT/f bs=1M count=$MIB 2>/dev/null || die "nfs $1: creating the file"
	passes nfs "$1" "$2" "$3" $NFS_MNT/f
	rm -f $NFS_MNT/f
	umount $NFS_MNT || die "nfs $1: umount"
	nfs_stop_server
	nfs_rmmod_rpcrdma || die "nfs $1: rmmod rpcrdma"
}

# rds_variant VARIANT REPEAT COUNT: the RDS passes (rds-io for ulp-io; never traced)
rds_variant() {
	local ULP_IO=rds-io
	local large=$((MIB * 32 / THREADS))

	rds_load "$1" || die "rds $1: loading RDS"
	pass rds "$1" "$2" msg_small 0 --json -n "$THREADS" -m "$RAND_OPS" --min-size 32 \
		--max-size 1024 --transport ib
	pass rds "$1" "$2" msg_large 0 --json -n "$THREADS" -m $((large > 0 ? large : 1)) \
		--min-size 16384 --max-size 49152 --transport ib
	rds_unload || die "rds $1: unloading RDS"
}

has_ulp() {
	case " $ULPS " in *" $1 "*) return 0 ;; esac
	return 1
}

# make ulp-bench NODES=2: the target and the server on the other node
# shellcheck source=tools/testing/ulps/fabric-ulp-bench.sh
[ -n "${ULPB_FABRIC:-}" ] && . "$ULPB_FABRIC"
[ "$(cat $ULP_KO/status 2>/dev/null)" = ok ] || die "the ULPs: $(cat $ULP_KO/status 2>/dev/null)"
rxe_present || rxe_create || die "no rxe0"
if has_ulp nvme; then nvme_prereqs || die "the NVMe-oF set-up"; fi
if has_ulp nfs; then nfs_prereqs || die "the NFS set-up"; fi
ulp_ocq_fresh || die "a fresh ib_ocq"
say "start: $(uname -r) nproc=$(nproc) ulps='$ULPS' repeats=$REPEATS mib=$MIB" \
	"rand_ops=$RAND_OPS threads=$THREADS"
rep=1
while [ $rep -le "$REPEATS" ]; do
	for v in stock ocq; do
		for u in $ULPS; do
			"${u}_variant" $v $rep 0
		done
	done
	rep=$((rep + 1))
done
if ! has_ulp nvme && ! has_ulp nfs; then
	: # RDS's counters are in its records
elif [ -d $T/events/rdma_core/cq_schedule ]; then
	if has_ulp nvme; then nvme_variant stock 0 1; fi
	if has_ulp nfs; then nfs_variant stock 0 1; fi
else
	say "no rdma_core tracepoints: stock events and runs unavailable"
fi
echo "ULPB-DONE"
