#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 240
# NFS over RDMA with the kernel's own rpcrdma (client xprtrdma and server svcrdma),
# loopback on rxe0, first as Debian ships it (stock), then converted to ocq by the
# semantic patch (ocq), both built from the kernel's linux-source (/ko/ulps/).  For
# each: knfsd exports a tmpfs on rdma port 20049 (NFSv4 only), the client mounts it
# with NFSv4.1 over rdma, files of several sizes are written, the export is
# remounted and they are read back: the checksums must match; then umount, nfsd
# stopped, rmmod rpcrdma.  The stock run must have no ordered CQ alive; the ocq run
# must have ordered CQs alive while mounted whose statistics count completions.
. /selftests/lib/ksft.sh
. /selftests/ulp/lib.sh
. /selftests/ulp/nfs.sh

ulp_require

MNT=$NFS_MNT
RES=/tmp/ulp_nfs.res
# bytes: a page, an odd size over 1 MiB, 8 MiB
SIZES="4096 1234567 8388608"
: > "$RES"

cleanup() {
	grep -q " $MNT " /proc/mounts && umount -f $MNT
	nfs_stop_server
}

fail() {
	echo "FAIL: $*"
	cleanup
	exit 1
}

run_variant() {	# stock|ocq
	local v=$1 live0 live comp0 comp t0 t1 tw tr s n total mb wr rd

	echo "=== $v"
	insmod "$ULP_KO/$v/rpcrdma.ko" || fail "$v: insmod rpcrdma.ko"
	live0=$(ulp_ocq_live)
	nfs_start_server || fail "$v: starting knfsd on rdma $NFS_PORT"
	nfs_mount || fail "$v: mount over rdma"
	grep " $MNT " /proc/mounts | sed "s/^/$v: /"

	# the first OPEN waits out the grace period: not part of the timing
	touch $MNT/.grace || fail "$v: creating a file over NFS"
	rm -f $MNT/.grace
	comp0=$(ulp_ocq_sum completions)
	total=0
	t0=$(cut -d' ' -f1 /proc/uptime)
	for s in $SIZES; do
		dd if=/dev/urandom of=/tmp/f.$s bs=$s count=1 iflag=fullblock 2>/dev/null
		[ "$(wc -c < /tmp/f.$s)" -eq $s ] || fail "$v: short pattern of $s bytes"
		cp /tmp/f.$s $MNT/f.$s || fail "$v: writing a $s-byte file over NFS"
		total=$((total + s))
	done
	sync
	t1=$(cut -d' ' -f1 /proc/uptime)
	tw=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	umount $MNT || fail "$v: umount"
	nfs_mount || fail "$v: the second mount over rdma"
	live=$(ulp_ocq_live)
	t0=$(cut -d' ' -f1 /proc/uptime)
	for s in $SIZES; do
		[ "$(sha256sum < $MNT/f.$s)" = "$(sha256sum < /tmp/f.$s)" ] ||
			fail "$v: the $s-byte file read back differs from the one written"
	done
	t1=$(cut -d' ' -f1 /proc/uptime)
	tr=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	n=$(ls $MNT | wc -l)
	[ "$n" -eq 3 ] || fail "$v: $n files on the export, 3 written"
	mb=$(awk -v t=$total 'BEGIN { printf "%.1f", t / 1048576 }')
	wr="$(ulp_rate "$mb" "$tw") MiB/s" rd="$(ulp_rate "$mb" "$tr") MiB/s"
	echo "$v: $SIZES bytes written in ${tw}s ($wr), remounted, read back and equal in ${tr}s ($rd)"
	comp=$(ulp_ocq_sum completions)
	echo "$v: ordered CQs alive while mounted: $live (before: $live0); completions $comp, $((comp - comp0)) during the file I/O"
	ulp_ocq_table | sed "s/^/$v: /"
	if [ $v = ocq ]; then
		[ "$live" -gt "$live0" ] ||
			fail "ocq: the converted rpcrdma made no ordered CQ ($live alive)"
		# at least a send and a receive completion per MiB on each side
		[ $((comp - comp0)) -ge 40 ] ||
			fail "ocq: the ordered CQs counted only $((comp - comp0)) completions"
	else
		[ "$live" -eq 0 ] && [ "$comp" -eq 0 ] ||
			fail "stock: $live ordered CQs alive, $comp completions: ib_ocq was used"
	fi
	rm -f $MNT/f.* /tmp/f.*
	umount $MNT || fail "$v: the last umount"
	nfs_stop_server
	nfs_rmmod_rpcrdma || fail "$v: rmmod rpcrdma"
	printf '%-8s %-12s %-12s %-5s %s\n' "$v" "$wr" "$rd" "$live" "$comp" >> "$RES"
}

nfs_prereqs || ksft_fail "the NFS set-up (nfsd, nfsv4, a tmpfs to export)"
ulp_ocq_fresh || ksft_fail "a fresh ib_ocq"

run_variant stock
run_variant ocq
rmmod ib_ocq || ksft_fail "rmmod ib_ocq after the ocq run"
umount $NFS_EXP

printf '%-8s %-12s %-12s %-5s %s\n' variant write read live completions
cat "$RES"
exit 0
