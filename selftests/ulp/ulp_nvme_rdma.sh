#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 180
# NVMe over RDMA with the kernel's own nvme-rdma and nvmet-rdma, loopback on rxe0,
# first as Debian ships them (stock), then converted to ocq by the semantic patch
# (ocq), both built from the kernel's linux-source (/ko/ulps/).  For each variant: a
# memory-backed null_blk exported by configfs at 10.11.12.1:4420, connected through
# /dev/nvme-fabrics (nr_poll_queues=1, so nvme-rdma also makes IB_POLL_DIRECT poll
# queues, if the kernel takes it), 32 MiB of random data written with O_DIRECT, read
# back with O_DIRECT: the checksums must match; then disconnect, teardown, rmmod.
# The stock run must have no ordered CQ alive; the ocq run must have ordered CQs alive
# while connected whose statistics count completions.
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

run_variant() {	# stock|ocq
	local v=$1 polled ns size live0 live comp0 comp tw tr wr rd sum_w sum_r direct poll_note

	echo "=== $v"
	insmod "$ULP_KO/$v/nvmet-rdma.ko" || fail "$v: insmod nvmet-rdma.ko"
	insmod "$ULP_KO/$v/nvme-rdma.ko" || fail "$v: insmod nvme-rdma.ko"
	live0=$(ulp_ocq_live)
	nvme_target_up "nqn.2026-01.org.ocq:ulp-nvme-$v" || fail "$v: configfs target set-up"
	polled=1
	if ! nvme_connect nr_poll_queues=1; then
		echo "$v: the connect with nr_poll_queues=1 was refused; without poll queues"
		polled=0
		nvme_connect || fail "$v: connect through /dev/nvme-fabrics"
	fi
	ns=$(nvme_find_ns) || fail "$v: no namespace block device after connecting $NVME_CTRL"
	size=$(( $(cat "/sys/block/$ns/size") / 2048 ))
	echo "$v: $NVME_CTRL, /dev/$ns ($size MiB), $(cat "/sys/class/nvme/$NVME_CTRL/transport") $(cat "/sys/class/nvme/$NVME_CTRL/address")"
	[ "$size" -ge $MIB ] || fail "$v: /dev/$ns is smaller than $MIB MiB"
	live=$(ulp_ocq_live)
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
	ulp_ocq_table | sed "s/^/$v: /"
	direct=$(for d in "$OCQ_DBG"/ocq*; do
			grep -qx 'poll_ctx direct' "$d/info" 2>/dev/null &&
				sed -n 's/^completions //p' "$d/stats"
		 done | awk '{ n += $1; c++ } END { printf "%d CQs, %d completions\n", c, n }')
	if [ $polled = 0 ]; then
		poll_note="no poll queues (nr_poll_queues refused)"
	elif [ $v = ocq ]; then
		poll_note="poll queues: ordered IB_POLL_DIRECT CQs: $direct"
	else
		poll_note="poll queues requested (nr_poll_queues=1 accepted)"
	fi
	echo "$v: $poll_note"
	if [ $v = ocq ]; then
		[ "$live" -gt "$live0" ] ||
			fail "ocq: the converted nvme-rdma/nvmet-rdma made no ordered CQ ($live alive)"
		# each 1 MiB request is at least one command: a completion on the host's
		# and one on the target's CQs, for the writes and for the reads
		[ $((comp - comp0)) -ge $((4 * MIB)) ] ||
			fail "ocq: the ordered CQs counted $((comp - comp0)) completions during the I/O of $((2 * MIB)) requests"
	else
		[ "$live" -eq 0 ] && [ "$comp" -eq 0 ] ||
			fail "stock: $live ordered CQs alive, $comp completions: ib_ocq was used"
	fi

	nvme_disconnect || fail "$v: disconnect"
	nvme_target_down || fail "$v: configfs teardown"
	rmmod nvme_rdma || fail "$v: rmmod nvme_rdma"
	rmmod nvmet_rdma || fail "$v: rmmod nvmet_rdma"
	printf '%-8s %-12s %-12s %-5s %-12s %s\n' "$v" "$wr" "$rd" "$live" "$comp" "$poll_note" >> "$RES"
}

nvme_prereqs || ksft_fail "the NVMe-oF set-up (null_blk, nvmet, nvme-fabrics, configfs)"
# a fresh ib_ocq: no ordered CQ of an earlier test counts for the stock run, and the
# pooled ones of the ocq run are freed when it is unloaded at the end
ulp_ocq_fresh || ksft_fail "a fresh ib_ocq"

run_variant stock
run_variant ocq
left=$(ulp_ocq_live)
echo "ordered CQs left after rmmod of both ULPs: $left (ib_ocq's CQ pool)"
rmmod ib_ocq || ksft_fail "rmmod ib_ocq after the ocq run"

printf '%-8s %-12s %-12s %-5s %-12s %s\n' variant write read live completions "poll queues"
cat "$RES"
rmmod nvmet null_blk nvme_fabrics 2>/dev/null
exit 0
