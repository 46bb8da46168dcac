#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 360
# NFSv4.1 over RDMA across the wire: knfsd with the kernel's rpcrdma (svcrdma) on node
# B exports a tmpfs on rdma port 20049, node A mounts it with the kernel's rpcrdma
# (xprtrdma) at 10.11.13.2, over rxe0 on each node's eth0; first both stock, then
# both converted to ocq (make ulps).  For each: files of 4 KiB, 1.2 MB and 8 MiB
# written from node A, the export remounted, read back: equal checksums; node B finds
# the same checksums in its export, and its eth0 received at least the bytes written;
# then umount, knfsd stopped, rmmod on both.  The stock run has no ordered CQ on
# either node; the converted one has ordered CQs alive on both while mounted, each
# node's counting completions during the file I/O, none with an overrun (cq_errors)
# or a completion found only by the watchdog (rescues).
. /selftests/lib/ksft.sh
. /selftests/lib/fabric.sh
. /selftests/fabric/lib.sh
. /selftests/ulp/nfs.sh

fab_require
ulp_require
fab_b '. /selftests/fabric/lib.sh; ulp_require' > /dev/null || ksft_fail "node B has no ULPs or no rxe0"

NFS_ADDR=$FABRIC_ADDR_B
SIZES="4096 1234567 8388608"
RES=/tmp/fabric_nfs.res
: > "$RES"

cleanup() {
	grep -q " $NFS_MNT " /proc/mounts && umount -f $NFS_MNT
	kmod_loaded rpcrdma && nfs_rmmod_rpcrdma
	fab_b ". $FL; fb_nfsd_down" > /dev/null
}

fail() {
	echo "FAIL: $*"
	cleanup
	exit 1
}

field() {
	echo "$1" | awk -v f="$2" '{ for (i = 1; i < NF; i++) if ($i == f) print $(i + 1) }'
}

run_variant() {	# stock|ocq
	local v=$1 a0 b0 a1 b1 rx0 rx1 s total t0 t1 tw tr

	echo "=== $v"
	fab_b ". $FL; ulp_ocq_fresh && fb_nfsd_up $v" || fail "$v: node B: knfsd on rdma"
	ulp_ocq_fresh || fail "$v: node A: a fresh ib_ocq"
	kmod_load nfsv4 || fail "$v: nfsv4"
	insmod "$ULP_KO/$v/rpcrdma.ko" || fail "$v: insmod rpcrdma.ko"
	mkdir -p $NFS_MNT
	nfs_mount || fail "$v: mount over rdma from node B"
	grep " $NFS_MNT " /proc/mounts | sed "s/^/$v: /"
	# the first OPEN waits out the grace period: not part of the timing
	touch $NFS_MNT/.grace || fail "$v: creating a file over NFS"
	rm -f $NFS_MNT/.grace

	a0=$(fb_ocq_counts) b0=$(fab_b ". $FL; fb_ocq_counts") rx0=$(fab_b ". $FL; fb_rx_bytes")
	total=0
	t0=$(fab_now)
	for s in $SIZES; do
		dd if=/dev/urandom of=/tmp/f.$s bs=$s count=1 iflag=fullblock 2>/dev/null
		cp /tmp/f.$s $NFS_MNT/f.$s || fail "$v: writing a $s-byte file over NFS"
		total=$((total + s))
	done
	sync
	t1=$(fab_now)
	tw=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	umount $NFS_MNT || fail "$v: umount"
	nfs_mount || fail "$v: the second mount"
	t0=$(fab_now)
	for s in $SIZES; do
		[ "$(sha256sum < $NFS_MNT/f.$s)" = "$(sha256sum < /tmp/f.$s)" ] ||
			fail "$v: the $s-byte file read back differs from the one written"
	done
	t1=$(fab_now)
	tr=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	a1=$(fb_ocq_counts) b1=$(fab_b ". $FL; fb_ocq_counts") rx1=$(fab_b ". $FL; fb_rx_bytes")
	for s in $SIZES; do
		[ "$(fab_b "sha256sum < $NFS_EXP/f.$s")" = "$(sha256sum < /tmp/f.$s)" ] ||
			fail "$v: node B's export holds another $s-byte file than node A wrote"
	done
	[ $((rx1 - rx0)) -ge $total ] ||
		fail "$v: node B's eth0 received $((rx1 - rx0)) bytes while node A wrote $total"
	echo "$v: $SIZES bytes written in ${tw}s, remounted, read back equal in ${tr}s; node B's export holds them; its eth0 received $((rx1 - rx0)) bytes"
	echo "$v: node A ordered CQs: $a1"
	echo "$v: node B ordered CQs: $b1"
	if [ $v = ocq ]; then
		for n in A B; do
			if [ $n = A ]; then c0=$a0 c1=$a1; else c0=$b0 c1=$b1; fi
			[ "$(field "$c1" live)" -gt 0 ] || fail "ocq: node $n has no ordered CQ while mounted"
			[ $(($(field "$c1" completions) - $(field "$c0" completions))) -ge 20 ] ||
				fail "ocq: node $n's ordered CQs counted fewer than 20 completions for the file I/O"
			[ "$(field "$c1" rescues)" = 0 ] && [ "$(field "$c1" cq_errors)" = 0 ] ||
				fail "ocq: node $n: rescues or overruns: $c1"
		done
	else
		[ "$(field "$a1" live)" = 0 ] && [ "$(field "$b1" live)" = 0 ] ||
			fail "stock: ordered CQs alive (A: $a1; B: $b1): ib_ocq was used"
	fi
	rm -f $NFS_MNT/f.* /tmp/f.*
	umount $NFS_MNT || fail "$v: the last umount"
	nfs_rmmod_rpcrdma || fail "$v: node A: rmmod rpcrdma"
	fab_b ". $FL; fb_nfsd_down" || fail "$v: node B: knfsd's teardown"
	printf '%-8s %-8s %-8s %s\n' $v "$tw" "$tr" \
		"$(field "$a1" completions)/$(field "$b1" completions)" >> "$RES"
}

run_variant stock
run_variant ocq
rmmod ib_ocq || ksft_fail "node A: rmmod ib_ocq"
fab_b 'rmmod ib_ocq' || ksft_fail "node B: rmmod ib_ocq"
printf '%-8s %-8s %-8s %s\n' variant "write s" "read s" "completions A/B"
cat "$RES"
exit 0
