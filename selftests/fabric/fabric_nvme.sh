#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 300
# NVMe over RDMA across the wire: the kernel's nvmet-rdma on node B exports node B's
# disk (/dev/vda), the kernel's nvme-rdma on node A connects to it at
# 10.11.13.2:4420 over rxe0 on each node's eth0; first both stock, then both
# converted to ocq (make ulps).  For each: 32 MiB of random data written from node A
# with O_DIRECT and read back there: equal checksums; node B reads its disk directly
# and finds every 1 MiB block as node A wrote it, and its eth0 received at least the
# 32 MiB; then disconnect, teardown, rmmod on both.  The stock run has no ordered CQ
# on either node; the converted one has ordered CQs alive on both while connected,
# each node's counting completions during the I/O, and none of them reports an
# overrun (cq_errors) or a completion found only by the watchdog (rescues).
. /selftests/lib/ksft.sh
. /selftests/lib/fabric.sh
. /selftests/fabric/lib.sh

fab_require
ulp_require
fab_b '. /selftests/fabric/lib.sh; ulp_require' > /dev/null || ksft_fail "node B has no ULPs or no rxe0"

MIB=32
RES=/tmp/fabric_nvme.res
: > "$RES"

cleanup() {
	nvme_disconnect
	kmod_loaded nvme_rdma && rmmod nvme_rdma
	fab_b ". $FL; fb_nvmet_down $NQN" > /dev/null
}

fail() {
	echo "FAIL: $*"
	cleanup
	exit 1
}

# counts NODE-OUTPUT FIELD
field() {
	echo "$1" | awk -v f="$2" '{ for (i = 1; i < NF; i++) if ($i == f) print $(i + 1) }'
}

run_variant() {	# stock|ocq
	local v=$1 a0 b0 a1 b1 rx0 rx1 tw tr sum_w sum_r bad

	echo "=== $v"
	NQN=nqn.2026-01.org.ocq:fabric-nvme-$v
	fab_b ". $FL; ulp_ocq_fresh && fb_nvmet_up $v $NQN" || fail "$v: node B: the target"
	ulp_ocq_fresh || fail "$v: node A: a fresh ib_ocq"
	fa_nvme_prereqs || fail "$v: nvme-fabrics"
	insmod "$ULP_KO/$v/nvme-rdma.ko" || fail "$v: insmod nvme-rdma.ko"
	fa_nvme_connect "$NQN" || fail "$v: connect to node B"
	echo "$v: $NVME_CTRL $(cat /sys/class/nvme/$NVME_CTRL/address), /dev/$FA_NS"

	dd if=/dev/urandom of=/tmp/pat bs=1M count=$MIB 2>/dev/null
	sum_w=$(sha256sum < /tmp/pat | cut -d' ' -f1)
	a0=$(fb_ocq_counts) b0=$(fab_b ". $FL; fb_ocq_counts") rx0=$(fab_b ". $FL; fb_rx_bytes")
	tw=$(ulp_timed_dd if=/tmp/pat of="/dev/$FA_NS" bs=1M count=$MIB oflag=direct) ||
		fail "$v: O_DIRECT write to /dev/$FA_NS"
	tr=$(ulp_timed_dd if="/dev/$FA_NS" of=/tmp/back bs=1M count=$MIB iflag=direct) ||
		fail "$v: O_DIRECT read of /dev/$FA_NS"
	sum_r=$(sha256sum < /tmp/back | cut -d' ' -f1)
	rm -f /tmp/back
	a1=$(fb_ocq_counts) b1=$(fab_b ". $FL; fb_ocq_counts") rx1=$(fab_b ". $FL; fb_rx_bytes")
	echo "$v: wrote $MIB MiB in ${tw}s ($(ulp_rate $MIB "$tw") MiB/s), read in ${tr}s ($(ulp_rate $MIB "$tr") MiB/s)"
	[ "$sum_w" = "$sum_r" ] || fail "$v: node A read back other data than it wrote"
	[ $((rx1 - rx0)) -ge $((MIB * 1048576)) ] ||
		fail "$v: node B's eth0 received $((rx1 - rx0)) bytes during a $MIB MiB write"
	fa_block_sums /tmp/pat 0 $MIB > /tmp/sums.a
	fab_b ". $FL; fb_disk_sums 0 $MIB" > /tmp/sums.b || fail "$v: node B reading its disk"
	bad=$(paste /tmp/sums.a /tmp/sums.b | awk '$1 != $2 { n++ } END { print n + 0 }')
	[ "$bad" = 0 ] || fail "$v: $bad of $MIB blocks on node B's disk differ from what node A wrote"
	echo "$v: node B's disk holds the $MIB blocks as written; its eth0 received $((rx1 - rx0)) bytes"
	echo "$v: node A ordered CQs: $a1"
	echo "$v: node B ordered CQs: $b1"
	if [ $v = ocq ]; then
		for n in A B; do
			if [ $n = A ]; then c0=$a0 c1=$a1; else c0=$b0 c1=$b1; fi
			[ "$(field "$c1" live)" -gt 0 ] || fail "ocq: node $n has no ordered CQ while connected"
			[ $(($(field "$c1" completions) - $(field "$c0" completions))) -ge $((2 * MIB)) ] ||
				fail "ocq: node $n's ordered CQs counted fewer than $((2 * MIB)) completions for $((2 * MIB)) requests"
			[ "$(field "$c1" rescues)" = 0 ] && [ "$(field "$c1" cq_errors)" = 0 ] ||
				fail "ocq: node $n: rescues or overruns: $c1"
		done
	else
		[ "$(field "$a1" live)" = 0 ] && [ "$(field "$b1" live)" = 0 ] ||
			fail "stock: ordered CQs alive (A: $a1; B: $b1): ib_ocq was used"
	fi
	nvme_disconnect || fail "$v: disconnect"
	rmmod nvme_rdma || fail "$v: rmmod nvme_rdma"
	fab_b ". $FL; fb_nvmet_down $NQN" || fail "$v: node B: the target's teardown"
	printf '%-8s %-10s %-10s %s\n' $v "$(ulp_rate $MIB "$tw")" "$(ulp_rate $MIB "$tr")" \
		"$(field "$a1" completions)/$(field "$b1" completions)" >> "$RES"
}

run_variant stock
run_variant ocq
rmmod ib_ocq || ksft_fail "node A: rmmod ib_ocq"
fab_b 'rmmod ib_ocq' || ksft_fail "node B: rmmod ib_ocq"
printf '%-8s %-10s %-10s %s\n' variant "write MiB/s" "read MiB/s" "completions A/B"
cat "$RES"
exit 0
