#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 240
# skip-ok: the ULPs are built from a Debian image's linux-source
# NVMe over RDMA with the kernel's own nvme-rdma and nvmet-rdma, loopback on rxe0,
# first as Debian ships them (stock), then converted to ocq by the semantic patch
# (ocq), both built from the kernel's linux-source (/ko/ulps/).  For each variant: a
# memory-backed null_blk exported by configfs at 10.11.12.1:4420, connected through
# /dev/nvme-fabrics with nr_poll_queues=1: the connect must be taken and nvme-rdma
# must map a poll queue ("mapped N/N/1 default/read/poll queues", io_poll 1 in the
# namespace's queue); 32 MiB of random data written with O_DIRECT, read back with
# O_DIRECT: the checksums must match; then 32 MiB written and read back through the
# poll queue: io_uring with IORING_SETUP_IOPOLL on an O_DIRECT descriptor of the
# namespace (ulp-io iopoll,verify: 128 KiB at a time, each block its own pattern,
# checked on reading), whose completions nvme-rdma polls from its IB_POLL_DIRECT CQ;
# then disconnect, teardown, rmmod.  The stock run must have no ordered CQ alive; the
# ocq run must have ordered CQs alive while connected whose statistics count the
# completions of the dd I/O (4 per 1 MiB request), and ordered IB_POLL_DIRECT CQs
# that polled (runs) and counted at least one completion per polled operation (each
# command's response is a completion of its queue's CQ) during the polled I/O.
# busybox dd does no polled I/O: only the io_uring passes go through the poll queue.
. /selftests/lib/ksft.sh
. /selftests/ulp/lib.sh
. /selftests/ulp/nvme.sh

ulp_require

MIB=32
RES=/tmp/ulp_nvme.res
: > "$RES"

cleanup() {
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

# the ordered IB_POLL_DIRECT CQs' FIELD (runs, completions), summed
direct_sum() {
	local d

	for d in "$OCQ_DBG"/ocq*; do
		grep -qx 'poll_ctx direct' "$d/info" 2>/dev/null &&
			sed -n "s/^$1 //p" "$d/stats"
	done | awk '{ n += $1 } END { printf "%d\n", n }'
}

run_variant() {	# stock|ocq
	local v=$1 ns size live0 live comp0 comp tw tr wr rd sum_w sum_r mark mapped poll
	local r0 c0 r1 c1 pw pr ops=256 bs=131072

	echo "=== $v"
	insmod "$ULP_KO/$v/nvmet-rdma.ko" || fail "$v: insmod nvmet-rdma.ko"
	insmod "$ULP_KO/$v/nvme-rdma.ko" || fail "$v: insmod nvme-rdma.ko"
	live0=$(ulp_ocq_live) || fail "$v: no count of live ordered CQs"
	nvme_target_up "nqn.2026-01.org.ocq:ulp-nvme-$v" || fail "$v: configfs target set-up"
	mark=$(ksft_mark)
	nvme_connect nr_poll_queues=1 ||
		fail "$v: the connect with nr_poll_queues=1 through /dev/nvme-fabrics was refused"
	ns=$(nvme_find_ns) || fail "$v: no namespace block device after connecting $NVME_CTRL"
	size=$(( $(cat "/sys/block/$ns/size") / 2048 ))
	echo "$v: $NVME_CTRL, /dev/$ns ($size MiB), $(cat "/sys/class/nvme/$NVME_CTRL/transport") $(cat "/sys/class/nvme/$NVME_CTRL/address")"
	[ "$size" -ge $MIB ] || fail "$v: /dev/$ns is smaller than $MIB MiB"
	# the poll queue, from the kernel's side: nvme-rdma's map and the block layer's
	mapped=$(ksft_kmsg_since "$mark" | grep "$NVME_CTRL: mapped .* default/read/poll queues" | tail -1)
	echo "$v: ${mapped:-no queue map logged}; /dev/$ns io_poll $(cat "/sys/block/$ns/queue/io_poll")"
	poll=$(echo "$mapped" | sed -n 's|.*mapped [0-9]*/[0-9]*/\([0-9]*\) default/read/poll.*|\1|p')
	[ "${poll:-0}" -ge 1 ] || fail "$v: nvme-rdma mapped no poll queue"
	[ "$(cat "/sys/block/$ns/queue/io_poll")" = 1 ] ||
		fail "$v: /dev/$ns does not take polled I/O (queue/io_poll)"
	live=$(ulp_ocq_live) || fail "$v: no count of live ordered CQs"
	echo "$v: ordered CQs alive while connected: $live (before: $live0)"

	# a pattern distinct per block and per variant (null_blk keeps the last one's)
	dd if=/dev/urandom of=/tmp/pat bs=1M count=$MIB 2>/dev/null
	[ "$(wc -c < /tmp/pat)" -eq $((MIB * 1048576)) ] || fail "$v: short pattern file"
	sum_w=$(sha256sum < /tmp/pat | cut -d' ' -f1)
	comp0=$(ulp_ocq_sum completions)
	tw=$(ulp_timed_dd if=/tmp/pat of="/dev/$ns" bs=1M count=$MIB oflag=direct) ||
		fail "$v: O_DIRECT write to /dev/$ns"
	tr=$(ulp_timed_dd if="/dev/$ns" of=/tmp/back bs=1M count=$MIB iflag=direct) ||
		fail "$v: O_DIRECT read of /dev/$ns"
	sum_r=$(sha256sum < /tmp/back | cut -d' ' -f1)
	rm -f /tmp/back /tmp/pat
	wr="$(ulp_rate $MIB "$tw") MiB/s" rd="$(ulp_rate $MIB "$tr") MiB/s"
	echo "$v: wrote $MIB MiB in ${tw}s ($wr), read in ${tr}s ($rd)"
	echo "$v: sha256 written $sum_w, read $sum_r"
	[ "$sum_w" = "$sum_r" ] || fail "$v: the data read back differs from the data written"
	comp=$(ulp_ocq_sum completions)
	echo "$v: completions of ordered CQs: $comp, $((comp - comp0)) during the I/O"

	# polled I/O: io_uring, IORING_SETUP_IOPOLL, through the poll queue
	r0=$(direct_sum runs) c0=$(direct_sum completions)
	pw=$(ulp-io write "/dev/$ns" $bs $ops 1 seq $((MIB * 1048576)) iopoll,verify) ||
		fail "$v: polled write of /dev/$ns: ${pw:-ulp-io failed}"
	pr=$(ulp-io read "/dev/$ns" $bs $ops 1 seq $((MIB * 1048576)) iopoll,verify) ||
		fail "$v: polled read of /dev/$ns read back wrong or failed: ${pr:-ulp-io failed}"
	r1=$(direct_sum runs) c1=$(direct_sum completions)
	echo "$v: polled write $pw"
	echo "$v: polled read  $pr"
	echo "$v: ordered IB_POLL_DIRECT CQs during the polled I/O: $((r1 - r0)) runs, $((c1 - c0)) completions"
	ulp_ocq_table | sed "s/^/$v: /"
	if [ $v = ocq ]; then
		[ "$live" -gt "$live0" ] ||
			fail "ocq: the converted nvme-rdma/nvmet-rdma made no ordered CQ ($live alive)"
		# each 1 MiB request is at least one command: a completion on the host's
		# and one on the target's CQs, for the writes and for the reads
		[ $((comp - comp0)) -ge $((4 * MIB)) ] ||
			fail "ocq: the ordered CQs counted $((comp - comp0)) completions during the I/O of $((2 * MIB)) requests"
		[ "$(ulp_ocq_table | grep -c 'poll_ctx direct')" -ge 1 ] ||
			fail "ocq: no ordered IB_POLL_DIRECT CQ for the poll queue"
		[ $((r1 - r0)) -gt 0 ] && [ $((c1 - c0)) -ge $((2 * ops)) ] ||
			fail "ocq: the polled I/O ($((2 * ops)) operations) did not go through the ordered IB_POLL_DIRECT CQs: $((r1 - r0)) runs, $((c1 - c0)) completions"
	else
		[ "$live" -eq 0 ] && [ "$comp" -eq 0 ] ||
			fail "stock: $live ordered CQs alive, $comp completions: ib_ocq was used"
	fi

	nvme_disconnect || fail "$v: disconnect"
	nvme_target_down || fail "$v: configfs teardown"
	rmmod nvme_rdma || fail "$v: rmmod nvme_rdma"
	rmmod nvmet_rdma || fail "$v: rmmod nvmet_rdma"
	printf '%-8s %-12s %-12s %-5s %-12s %s\n' "$v" "$wr" "$rd" "$live" "$comp" \
		"$(echo "$pw" | sed -n 's/.*"mb_s":\([0-9.]*\).*/\1/p')/$(echo "$pr" | sed -n 's/.*"mb_s":\([0-9.]*\).*/\1/p') MB/s, $((c1 - c0)) direct" >> "$RES"
}

nvme_prereqs || ksft_fail "the NVMe-oF set-up (null_blk, nvmet, nvme-fabrics, configfs)"
# a fresh ib_ocq: no ordered CQ of an earlier test counts for the stock run, and the
# pooled ones of the ocq run are freed when it is unloaded at the end
ulp_ocq_fresh || ksft_fail "a fresh ib_ocq"

run_variant stock
run_variant ocq
left=$(ulp_ocq_live) || ksft_fail "no count of live ordered CQs"
echo "ordered CQs left after rmmod of both ULPs: $left (ib_ocq's CQ pool)"
rmmod ib_ocq || ksft_fail "rmmod ib_ocq after the ocq run"

printf '%-8s %-12s %-12s %-5s %-12s %s\n' variant write read live completions "polled write/read, direct CQs' completions"
cat "$RES"
rmmod nvmet null_blk nvme_fabrics 2>/dev/null
exit 0
