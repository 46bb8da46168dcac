#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 600
# skip-ok: the ULPs are built from a Debian image's linux-source
# Device removal under NVMe over RDMA I/O, with the kernel's nvme-rdma and
# nvmet-rdma as Debian ships them (stock) and converted to ocq (ocq), loopback on
# rxe0 (the set-up of ulp_nvme_rdma.sh).  For each variant, while a writer puts
# 16 MiB of random data on the namespace, 1 MiB at a time with O_DIRECT, rdma link
# delete rxe0: the controller must go (nvme-rdma deletes the controllers of a
# removed device): some writes must have succeeded before it and some failed after
# it; rxe0 and the target are created again and a new controller must connect
# within 60 s.  Every block whose write succeeded must then read back as written (a
# failed one may hold either version) and 8 MiB of new data written and read back
# must match.  The stock run is the reference: the converted one must pass the
# same checks, and the I/O under the removal must have run on its ordered CQs: their
# completions, sampled before the writer starts and again just before the removal,
# with blocks written in between, grew by at least 4 per block written (a 1 MiB
# write is at least one command: a completion on each side's send and receive), and
# they count completions again after the reconnect; the stock run has no ordered
# CQ at any of those points.  No splat, no hung task (the runner checks the kernel
# log).
#
# A link flap (ip link set dummy0 down, up) is not part of it: under I/O its
# outcome on rxe is a race, with the stock modules as with the converted ones.  rxe
# fails a packet it sends while dummy0 is down (no route to it) and the QP with it,
# the GSI QP that carries the CM's MADs included, and that one does not recover.
# On 6.1 ib_mad moves QP1 back to RTS but rxe leaves its receive side in error:
# rxe0 takes no MAD any more, and every reconnect's REQ fails after its 15 retries
# (about 100 s).  On 6.12 rxe reports the failed send as flushed, after which
# ib_mad does not move QP1 back: it stays in the error state and flushes every MAD,
# a flushed send is no error to ib_cm, and the connect never ends (nvme-rdma waits
# for it without a timeout; rdma link delete would wait behind it).  The controller
# comes back when no MAD leaves while the link is down and not when one does, and
# that is decided by which post fails first: nvmet-rdma disconnects (DREQ) at once
# when one of its own fails, nvme-rdma's error recovery sends its DREQs at once or
# only after its keep-alive times out.  Under a writer like this test's, flaps of a
# few milliseconds (ip -batch) left rxe0's CM dead in 2 of 32 (6.1: 1 of 7 stock,
# 1 of 15 converted; 6.12: 0 of 10); in the others the I/O stalled for up to 2.5 s,
# or the controller was reset, at once or after the 30 s I/O timeout when rxe lost
# a packet without an error, and was live again within 35 s of the flap.  Flaps of
# 2 s left it dead in 3 of 6 (6.1: 1 of 3, 6.12: 2 of 3).  NFS over RDMA fares no
# better: rpcrdma disconnects and reconnects while the link is down, and a 2 s flap
# left a hard mount's writes hanging.  rel_netdev_flap flaps the link under ocq's
# own users, which send no MAD while it is down.
. /selftests/lib/ksft.sh
. /selftests/lib/rxe.sh
. /selftests/ulp/lib.sh
. /selftests/ulp/nvme.sh

ulp_require

BLOCKS=16	# MiB the writer writes under a fault
MIB=8		# MiB written and read back after a fault
OPTS=reconnect_delay=1,ctrl_loss_tmo=60
RES=/tmp/ulp_faults.res
: > "$RES"
WPID='' NS='' OUTCOME='' WAITED=0 REMOVALS=0 SNAP0='' SNAP1='' OKBEFORE=0 DURING=0

cleanup() {
	[ -n "$WPID" ] && kill "$WPID" 2>/dev/null
	rxe_present || rxe_create >/dev/null 2>&1
	nvme_disconnect
	nvme_target_down
	kmod_loaded nvme_rdma && rmmod nvme_rdma
	kmod_loaded nvmet_rdma && rmmod nvmet_rdma
}

fail() {
	echo "FAIL: $*"
	cleanup
	exit 1
}

now() {
	cut -d. -f1 /proc/uptime
}

# write_blocks PATTERN LOG: block i of PATTERN to block i of /dev/$NS, O_DIRECT, for
# every block in turn; "i ok" or "i fail" per block in LOG.  The device is opened
# once and written through /proc/self/fd/5: dd opening /dev/$NS after the device
# went would create a plain file of that name.
write_blocks() {
	local i=0

	exec 5<> "/dev/$NS" || { echo "0 fail" >> "$2"; return; }
	while [ $i -lt $BLOCKS ]; do
		if dd if="$1" of=/proc/self/fd/5 bs=1M count=1 skip=$i seek=$i oflag=direct \
			2>/dev/null; then
			echo "$i ok" >> "$2"
		else
			echo "$i fail" >> "$2"
		fi
		i=$((i + 1))
	done
	exec 5>&-
}

# start_writer LOG: new random data in /tmp/pat, written by write_blocks in the
# background; returns once a block is done
start_writer() {
	local i

	dd if=/dev/urandom of=/tmp/pat bs=1M count=$BLOCKS 2>/dev/null
	: > "$1"
	write_blocks /tmp/pat "$1" &
	WPID=$!
	for i in $(seq 1 300); do
		[ -s "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# check_blocks LOG: the blocks LOG says were written read back as in /tmp/pat;
# prints "N ok, M failed"
check_blocks() {
	local i st ok=0 failed=0 a b

	while read -r i st; do
		[ "$st" = ok ] || { failed=$((failed + 1)); continue; }
		a=$(dd if=/tmp/pat bs=1M count=1 skip="$i" 2>/dev/null | sha256sum)
		b=$(dd if="/dev/$NS" bs=1M count=1 skip="$i" iflag=direct 2>/dev/null | sha256sum)
		[ "$a" = "$b" ] || { echo "block $i was written but reads back otherwise"; return 1; }
		ok=$((ok + 1))
	done < "$1"
	echo "$ok ok, $failed failed"
}

# verify_io: MIB MiB of new data written to /dev/$NS and read back, O_DIRECT
verify_io() {
	local w r

	dd if=/dev/urandom of=/tmp/vpat bs=1M count=$MIB 2>/dev/null
	dd if=/tmp/vpat of="/dev/$NS" bs=1M count=$MIB oflag=direct 2>/dev/null || return 1
	w=$(sha256sum < /tmp/vpat)
	r=$(dd if="/dev/$NS" bs=1M count=$MIB iflag=direct 2>/dev/null | sha256sum)
	rm -f /tmp/vpat
	[ "$w" = "$r" ]
}

# connect_retry SECONDS: nvme_connect until it succeeds (the target's port may still
# be coming back); WAITED: the seconds that took
connect_retry() {
	local t0

	t0=$(now)
	while ! nvme_connect $OPTS >/dev/null 2>&1; do
		[ $(($(now) - t0)) -lt "$1" ] || return 1
		sleep 1
	done
	WAITED=$(($(now) - t0))
}

# remove_device VARIANT WHAT: rdma link delete rxe0, the controller gone, rxe0
# created again and a new controller connected (NS its namespace)
remove_device() {
	local v=$1 i

	# the ordered CQs' counts during the I/O, just before the removal: the blocks
	# done first, so that each block counted had its completions before the sample
	OKBEFORE=$(grep -c ' ok$' /tmp/rm.log)
	SNAP1=$(ulp_ocq_snap)
	rxe_delete || fail "$v: $2: rdma link delete $RXE_DEV"
	[ -n "$WPID" ] && wait "$WPID"
	WPID=
	for i in $(seq 1 300); do
		[ -e "/sys/class/nvme/$NVME_CTRL" ] || break
		sleep 0.1
	done
	[ -e "/sys/class/nvme/$NVME_CTRL" ] &&
		fail "$v: $2: $NVME_CTRL still there 30 s after the device went"
	NVME_CTRL=
	rxe_create || fail "$v: $2: cannot create $RXE_DEV again"
	# nvmet-rdma drops a listener whose device went and never re-enables it: the
	# target is set up again, as an administrator would, under a new NQN (the
	# host may still hold the old subsystem's namespace head)
	REMOVALS=$((REMOVALS + 1))
	nvme_target_down || fail "$v: $2: configfs teardown after the removal"
	nvme_target_up "nqn.2026-01.org.ocq:ulp-faults-$v-$REMOVALS" ||
		fail "$v: $2: configfs target set-up after the removal"
	connect_retry 60 || fail "$v: $2: no new controller within 60 s of $RXE_DEV's return"
	NS=$(nvme_find_ns) ||
		fail "$v: $2: no namespace after the reconnect (/sys/block: $(ls /sys/block | tr '\n' ' '); /dev: $(ls -l /dev/nvme* 2>&1 | tr '\n' ' '))"
}

# fault_remove VARIANT: rxe0 deleted under the writer, then created again; OUTCOME
# says how it went
fault_remove() {
	local v=$1 blocks

	SNAP0=$(ulp_ocq_snap)
	start_writer /tmp/rm.log || fail "$v: remove: the writer wrote nothing in 30 s"
	remove_device "$v" remove
	DURING=$(ulp_ocq_delta "$SNAP0" "$SNAP1")
	echo "$v: remove: ordered CQs before the removal: $(echo "$SNAP1" | grep -c .);" \
		"their completions grew by $DURING while $OKBEFORE block(s) were written"
	blocks=$(check_blocks /tmp/rm.log) || fail "$v: remove: $blocks"
	# the removal must have come while the writes went on: some done, some failed
	case $blocks in
	"0 ok"*|*" 0 failed") fail "$v: remove: writes $blocks: the removal missed the I/O" ;;
	esac
	verify_io || fail "$v: remove: new data read back wrong after the reconnect"
	echo "$v: remove: writes $blocks; $NVME_CTRL connected $WAITED s after $RXE_DEV's return; new I/O ok"
	OUTCOME="writes $blocks, reconnected in $WAITED s"
}

run_variant() {	# stock|ocq
	local v=$1 comp

	echo "=== $v"
	insmod "$ULP_KO/$v/nvmet-rdma.ko" || fail "$v: insmod nvmet-rdma.ko"
	insmod "$ULP_KO/$v/nvme-rdma.ko" || fail "$v: insmod nvme-rdma.ko"
	nvme_target_up "nqn.2026-01.org.ocq:ulp-faults-$v" || fail "$v: configfs target set-up"
	nvme_connect $OPTS || fail "$v: connect"
	NS=$(nvme_find_ns) || fail "$v: no namespace block device after connecting $NVME_CTRL"
	fault_remove "$v"
	comp=$(ulp_ocq_sum completions)
	echo "$v: completions of live ordered CQs after the reconnect: $comp"
	if [ "$v" = ocq ]; then
		ulp_ocq_table | sed "s/^/$v: /"
		[ "$OKBEFORE" -ge 1 ] && [ "$DURING" -ge $((4 * OKBEFORE)) ] ||
			fail "ocq: the I/O under the removal did not run on ordered CQs: their completions grew by $DURING while $OKBEFORE block(s) were written"
		[ "$comp" -gt 0 ] ||
			fail "ocq: the converted ULPs' ordered CQs counted no completion after the removal"
	else
		[ -z "$SNAP0$SNAP1" ] && [ "$comp" -eq 0 ] ||
			fail "stock: ordered CQs ($(echo $SNAP0 $SNAP1)), $comp completions after: ib_ocq was used"
	fi
	nvme_disconnect || fail "$v: disconnect"
	nvme_target_down || fail "$v: configfs teardown"
	rmmod nvme_rdma || fail "$v: rmmod nvme_rdma"
	rmmod nvmet_rdma || fail "$v: rmmod nvmet_rdma"
	printf '%-8s %s\n' "$v" "$OUTCOME" >> "$RES"
}

rxe_present || rxe_create || ksft_fail "no $RXE_DEV"
nvme_prereqs || ksft_fail "the NVMe-oF set-up (null_blk, nvmet, nvme-fabrics, configfs)"
ulp_ocq_fresh || ksft_fail "a fresh ib_ocq"

run_variant stock
run_variant ocq
rmmod ib_ocq || ksft_fail "rmmod ib_ocq after the ocq run"

printf '%-8s %s\n' variant "device removal"
cat "$RES"
rmmod nvmet null_blk nvme_fabrics 2>/dev/null
exit 0
