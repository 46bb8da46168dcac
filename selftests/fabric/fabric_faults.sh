#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 2400
# Faults on the wire under NVMe over RDMA I/O: the kernel's nvme-rdma on node A, its
# nvmet-rdma on node B exporting node B's disk, stock and then converted to ocq.  For
# each fault of FABRIC_FAULTS (all below unless the kernel command line says),
# FABRIC_TRIALS times (1; make fabric-faults runs more), while a writer on node A
# puts BLOCKS MiB of new random data on the namespace, 1 MiB at a time with O_DIRECT:
#
#   loss1      tc netem on node B's eth0: every packet lost for 1 s
#   loss10     the same for 10 s
#   loss1pct   1 % of node B's packets lost while the writer runs
#   reorder    node B's packets delayed 10 ms, a quarter of them sent at once
#              (reordered), while the writer runs
#   link       the wire's link taken down on both nodes for 5 s (QEMU's set_link)
#   rxe        rxe0 of node B removed and added again (nvmet-rdma's listener made
#              again, as nvmet-rdma never takes back a listener whose device went)
#   reboot     node B reset (QEMU's system_reset), and its target set up again on
#              the same disk under the same NQN once it is back
#
# The host has reconnect_delay=1, ctrl_loss_tmo=60.  Outcome of a trial:
# "rode through" (the controller stayed live), "recovered" (it reconnected and
# every write succeeded), "recovered, N failed" (it reconnected, some writes
# failed), "timed out" (the controller was given up: the writes after it failed),
# "hung" (the writer still blocked 150 s after the fault: the stacks of the blocked
# tasks of both nodes go to the log, and the test fails).  After every trial each
# block whose write succeeded must be on node B's disk as written (node B reads its
# disk itself, whatever state node A's controller is in); a failed one may hold
# either version.  A live controller must then write and read back 4 MiB of new
# data.  The converted ULPs must end no worse than stock in each fault, over the
# trials (their worst outcome no worse than stock's); where stock does not recover
# the test says so.  With ocq, no ordered CQ of either node may report an overrun
# (cq_errors) or a completion found only by the watchdog (rescues).  The table at
# the end ("fault-table" lines) has every trial's outcome and times.
. /selftests/lib/ksft.sh
. /selftests/lib/fabric.sh
. /selftests/fabric/lib.sh

fab_require
ulp_require
fab_b ". $FL; ulp_require" > /dev/null || ksft_fail "node B has no ULPs or no rxe0"

# FABRIC_FAULTS: a list, with commas on the kernel command line
FAULTS=$(echo "${FABRIC_FAULTS:-loss1 loss10 loss1pct reorder link rxe reboot}" | tr ',' ' ')
TRIALS=${FABRIC_TRIALS:-1}
BLOCKS=16
OPTS=reconnect_delay=1,ctrl_loss_tmo=60
HANG=150
RES=/tmp/fabric_faults.res
: > "$RES"
WPID='' SPID='' NQN='' GEN=0 V=''

cleanup() {
	[ -n "$WPID" ] && kill "$WPID" 2>/dev/null
	[ -n "$SPID" ] && kill "$SPID" 2>/dev/null
	fab_b "/usr/bin/tc qdisc del dev eth0 root 2>/dev/null; true" > /dev/null
	fab_host link on > /dev/null
	nvme_disconnect
	kmod_loaded nvme_rdma && rmmod nvme_rdma
	fab_b ". $FL; fb_nvmet_down $NQN" > /dev/null
}

fail() {
	echo "FAIL: $*"
	cleanup
	exit 1
}

field() {
	echo "$1" | awk -v f="$2" '{ for (i = 1; i < NF; i++) if ($i == f) print $(i + 1) }'
}

ctrl_state() {
	cat "/sys/class/nvme/$NVME_CTRL/state" 2>/dev/null || echo gone
}

# a controller of a new subsystem (node B's disk under a new NQN): the first, and
# after a trial that lost the old one
connect_fresh() {
	[ -n "$NQN" ] && { nvme_disconnect; fab_b ". $FL; fb_nvmet_down $NQN" > /dev/null; }
	GEN=$((GEN + 1))
	NQN=nqn.2026-01.org.ocq:fabric-faults-$V-$GEN
	fab_b ". $FL; fb_nvmet_up $V $NQN" || fail "$V: node B: the target"
	fa_nvme_connect "$NQN" $OPTS || fail "$V: connect to node B"
	[ -n "$FA_NS" ] || fail "$V: no namespace after connecting $NVME_CTRL"
}

# the writer: block i of /tmp/pat to block i, O_DIRECT, "i ok|fail SECONDS" per
# block; the device opened once (see ulp_faults.sh)
write_blocks() {
	local i=0

	exec 5<> "/dev/$FA_NS" || { echo "0 fail $(fab_now)" >> /tmp/w.log; return; }
	while [ $i -lt $BLOCKS ]; do
		if dd if=/tmp/pat of=/proc/self/fd/5 bs=1M count=1 skip=$i seek=$i oflag=direct \
			2>/dev/null; then
			echo "$i ok $(fab_now)" >> /tmp/w.log
		else
			echo "$i fail $(fab_now)" >> /tmp/w.log
		fi
		i=$((i + 1))
	done
	exec 5>&-
}

# the controller's states while the trial runs, one line per change
watch_states() {
	local s last=''

	while :; do
		s=$(ctrl_state)
		[ "$s" != "$last" ] && echo "$(fab_now) $s" >> /tmp/states.log
		last=$s
		usleep 200000
	done
}

# inject FAULT: returns when the fault is over (those that last the writer's time
# are taken away by lift)
inject() {
	case $1 in
	loss1) fab_b ". $FL; fb_netem loss 100% && sleep 1; fb_netem_off" ;;
	loss10) fab_b ". $FL; fb_netem loss 100% && sleep 10; fb_netem_off" ;;
	loss1pct) fab_b ". $FL; fb_netem loss 1%" ;;
	reorder) fab_b ". $FL; fb_netem delay 10ms reorder 25% 50%" ;;
	link) fab_host link off && sleep 5; fab_host link on ;;
	rxe) fab_b ". /selftests/lib/rxe.sh; . $FL; rxe_delete && sleep 1 && rxe_create &&
		fb_nvmet_port_again $NQN" ;;
	reboot)
		local boots

		boots=$(fab_b_boots)
		fab_host reset b || return 1
		fab_wait_b "$boots" 240 || { echo "node B not back 240 s after its reset"; return 1; }
		fab_b ". $FL; ulp_ocq_fresh && fb_nvmet_up $V $NQN" ;;
	esac
}

lift() {
	case $1 in
	loss1pct|reorder) fab_b ". $FL; fb_netem_off" ;;
	esac
}

# rank of an outcome, higher is better: riding through and recovering both end with
# every write done and the controller live, and which one a trial takes depends on
# whether the keep-alive ran out inside the fault
rank() {
	case $1 in
	"rode through"*) echo 3 ;;
	"recovered, "*) echo 2 ;;
	recovered*) echo 3 ;;
	"timed out"*) echo 1 ;;
	*) echo 0 ;;
	esac
}

# trial FAULT K: one trial; a line of $RES
trial() {
	local f=$1 k=$2 t0 t1 t2 ok failed states outcome resume c a b bad wait

	[ "$(ctrl_state)" = live ] || connect_fresh
	dd if=/dev/urandom of=/tmp/pat bs=1M count=$BLOCKS 2>/dev/null
	: > /tmp/w.log
	: > /tmp/states.log
	watch_states &
	SPID=$!
	write_blocks &
	WPID=$!
	# the fault comes once the writes are going
	for wait in $(seq 1 300); do
		[ -s /tmp/w.log ] && break
		usleep 100000
	done
	t0=$(fab_now)
	inject "$f" > /tmp/inject.log 2>&1 || { cat /tmp/inject.log; fail "$V: $f: injecting the fault"; }
	t1=$(fab_now)
	wait=0
	while [ -e /proc/$WPID ] && [ $wait -lt $((HANG * 5)) ]; do
		usleep 200000
		wait=$((wait + 1))
	done
	if [ -e /proc/$WPID ]; then
		echo "$V: $f: the writer is blocked ${HANG}s after the fault; blocked tasks:"
		fabric_hang
		lift "$f" > /dev/null 2>&1
		printf '%-9s %-6s %2d %s\n' "$f" "$V" "$k" "hung" >> "$RES"
		cat /tmp/states.log
		# no cleanup: it would block behind the writer
		echo "FAIL: $V: $f: hung"
		exit 1
	fi
	wait $WPID
	WPID=''
	lift "$f" >> /tmp/inject.log 2>&1
	t2=$(fab_now)
	sleep 1
	kill $SPID 2>/dev/null
	wait $SPID 2>/dev/null
	SPID=''
	sed 's/^/  inject: /' /tmp/inject.log
	states=$(awk '{ printf "%s%s@%.1f", sep, $2, $1 - t; sep = " " }' t="$t0" /tmp/states.log)
	ok=$(grep -c ' ok ' /tmp/w.log)
	failed=$(grep -c ' fail ' /tmp/w.log)
	# the first write that ended after the fault was over
	resume=$(awk -v t="$t1" '$2 == "ok" && $3 > t { printf "%.1f", $3 - t; exit }' /tmp/w.log)
	if [ "$(ctrl_state)" = live ]; then
		if [ "$(awk '$2 != "live"' /tmp/states.log | wc -l)" = 0 ]; then
			outcome="rode through"
		elif [ "$failed" = 0 ]; then
			outcome=recovered
		else
			outcome="recovered, $failed failed"
		fi
	else
		outcome="timed out"
	fi
	# every acknowledged block is on node B's disk as written
	fa_block_sums /tmp/pat 0 $BLOCKS > /tmp/sums.a
	fab_b ". $FL; fb_disk_sums 0 $BLOCKS" 120 > /tmp/sums.b || fail "$V: $f: node B reading its disk"
	bad=$(awk '{ print $2 }' /tmp/w.log | paste - /tmp/sums.a /tmp/sums.b |
		awk '$1 == "ok" && $2 != $3 { n++ } END { print n + 0 }')
	[ "$bad" = 0 ] || fail "$V: $f: $bad acknowledged blocks are not on node B's disk as written"
	if [ "$(ctrl_state)" = live ]; then
		dd if=/dev/urandom of=/tmp/vpat bs=1M count=4 2>/dev/null
		dd if=/tmp/vpat of="/dev/$FA_NS" bs=1M count=4 seek=$BLOCKS oflag=direct 2>/dev/null &&
			a=$(sha256sum < /tmp/vpat) &&
			b=$(dd if="/dev/$FA_NS" bs=1M count=4 skip=$BLOCKS iflag=direct 2>/dev/null | sha256sum) &&
			[ "$a" = "$b" ] || fail "$V: $f: new I/O after the fault read back wrong"
	fi
	if [ "$V" = ocq ]; then
		for c in "$(fb_ocq_counts)" "$(fab_b ". $FL; fb_ocq_counts")"; do
			[ "$(field "$c" rescues)" = 0 ] && [ "$(field "$c" cq_errors)" = 0 ] ||
				fail "$V: $f: ordered CQs with rescues or overruns: $c"
		done
	fi
	echo "$V: $f #$k: $outcome; writes $ok ok, $failed failed; injecting it took $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')s, writer done $(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.1f", b - a }')s after it; first write after it ${resume:-none}s; states: $states"
	printf '%-9s %-6s %2d %s|%s|%s\n' "$f" "$V" "$k" "$outcome" "${resume:--}" "$states" >> "$RES"
}

run_variant() {	# stock|ocq
	local f k

	V=$1
	echo "=== $V"
	fab_b ". $FL; ulp_ocq_fresh" || fail "$V: node B: a fresh ib_ocq"
	ulp_ocq_fresh || fail "$V: node A: a fresh ib_ocq"
	fa_nvme_prereqs || fail "$V: nvme-fabrics"
	insmod "$ULP_KO/$V/nvme-rdma.ko" || fail "$V: insmod nvme-rdma.ko"
	NQN=''
	connect_fresh
	for f in $FAULTS; do
		k=1
		while [ $k -le "$TRIALS" ]; do
			trial "$f" $k
			k=$((k + 1))
		done
	done
	nvme_disconnect || fail "$V: disconnect"
	rmmod nvme_rdma || fail "$V: rmmod nvme_rdma"
	fab_b ". $FL; fb_nvmet_down $NQN; rmmod ib_ocq" || fail "$V: node B: the teardown"
	rmmod ib_ocq || fail "$V: node A: rmmod ib_ocq"
}

echo "faults: $FAULTS; $TRIALS trial(s) each"
run_variant stock
run_variant ocq

# the converted ULPs' worst outcome of each fault is no worse than stock's
worse=''
for f in $FAULTS; do
	for v in stock ocq; do
		eval "worst_$v=9"
		while read -r ff vv _ out; do
			[ "$ff" = "$f" ] && [ "$vv" = "$v" ] || continue
			r=$(rank "${out%%|*}")
			eval "[ $r -lt \$worst_$v ] && worst_$v=$r"
		done < "$RES"
	done
	# shellcheck disable=SC2154
	[ "$worst_stock" -le 1 ] && echo "$f: stock does not recover from it in every trial"
	# shellcheck disable=SC2154
	[ "$worst_ocq" -ge "$worst_stock" ] || worse="$worse $f"
done
echo "fault-table: fault variant trial outcome|first write after the fault (s)|controller states (s from the fault)"
sed 's/^/fault-table: /' "$RES"
[ -z "$worse" ] || ksft_fail "the converted ULPs ended worse than stock in:$worse"
exit 0
