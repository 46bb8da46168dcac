#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 240
# skip-ok: the ULPs are built from a Debian image's linux-source
# NFS over RDMA with the kernel's own rpcrdma (client xprtrdma and server svcrdma),
# loopback on rxe0, first as Debian ships it (stock), then converted to ocq by the
# semantic patch (ocq), both built from the kernel's linux-source (/ko/ulps/).  For
# each: knfsd exports a tmpfs on rdma port 20049 (NFSv4 only), the client mounts it
# with NFSv4.1 over rdma, files of several sizes are written, the export is
# remounted and they are read back: the checksums must match; then umount, nfsd
# stopped, rmmod rpcrdma.  The stock run must have no ordered CQ alive; in the ocq run
# each mount's I/O must have run on ordered CQs: the writes on the first mount's CQs
# (the client's and the server's, alive while it is mounted), the reads on the
# second's, each counted per CQ (a CQ's debugfs name is unique: the second mount's
# are new ones) from just before to just after its I/O: at least 2 completions per
# MiB moved (an NFS READ or WRITE moves at most 1 MiB, and each is a receive
# completion on the server's CQ and one on the client's).
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

# cqs SNAP: the CQs of an ulp_ocq_snap, "name (owner, poll_ctx)" on one line
cqs() {
	echo "$1" | awk 'NF >= 4 { printf "%s (%s, %s) ", $1, $3, $4 }'
}

run_variant() {	# stock|ocq
	local v=$1 live0 live1 live2 w0 w1 r0 r1 dw dr t0 t1 tw tr s n total mb wr rd min

	echo "=== $v"
	insmod "$ULP_KO/$v/rpcrdma.ko" || fail "$v: insmod rpcrdma.ko"
	live0=$(ulp_ocq_live) || fail "$v: no count of live ordered CQs"
	nfs_start_server || fail "$v: starting knfsd on rdma $NFS_PORT"
	nfs_mount || fail "$v: mount over rdma"
	grep " $MNT " /proc/mounts | sed "s/^/$v: /"

	# the first OPEN waits out the grace period: not part of the timing
	touch $MNT/.grace || fail "$v: creating a file over NFS"
	rm -f $MNT/.grace
	live1=$(ulp_ocq_live) || fail "$v: no count of live ordered CQs"
	w0=$(ulp_ocq_snap)
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
	w1=$(ulp_ocq_snap)
	tw=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	umount $MNT || fail "$v: umount"
	nfs_mount || fail "$v: the second mount over rdma"
	live2=$(ulp_ocq_live) || fail "$v: no count of live ordered CQs"
	r0=$(ulp_ocq_snap)
	t0=$(cut -d' ' -f1 /proc/uptime)
	for s in $SIZES; do
		[ "$(sha256sum < $MNT/f.$s)" = "$(sha256sum < /tmp/f.$s)" ] ||
			fail "$v: the $s-byte file read back differs from the one written"
	done
	t1=$(cut -d' ' -f1 /proc/uptime)
	r1=$(ulp_ocq_snap)
	tr=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	n=$(ls $MNT | wc -l)
	[ "$n" -eq 3 ] || fail "$v: $n files on the export, 3 written"
	mb=$(awk -v t=$total 'BEGIN { printf "%.1f", t / 1048576 }')
	wr="$(ulp_rate "$mb" "$tw") MiB/s" rd="$(ulp_rate "$mb" "$tr") MiB/s"
	echo "$v: $SIZES bytes written in ${tw}s ($wr), remounted, read back and equal in ${tr}s ($rd)"
	dw=$(ulp_ocq_delta "$w0" "$w1") dr=$(ulp_ocq_delta "$r0" "$r1")
	echo "$v: ordered CQs alive: $live0 before the mount, $live1 on the first, $live2 on the second"
	echo "$v: first mount, writes: $dw completions on $(cqs "$w1")"
	echo "$v: second mount, reads: $dr completions on $(cqs "$r1")"
	ulp_ocq_table | sed "s/^/$v: /"
	if [ $v = ocq ]; then
		[ "$live1" -gt "$live0" ] && [ "$live2" -gt "$live0" ] ||
			fail "ocq: the converted rpcrdma made no ordered CQ for a mount ($live0, $live1, $live2 alive)"
		# a receive on each side per READ or WRITE, of at most 1 MiB each
		min=$((2 * ((total + 1048575) / 1048576)))
		[ "$dw" -ge $min ] ||
			fail "ocq: the first mount's ordered CQs counted $dw completions during the writes, fewer than $min"
		[ "$dr" -ge $min ] ||
			fail "ocq: the second mount's ordered CQs counted $dr completions during the reads, fewer than $min"
	else
		[ "$live1" -eq 0 ] && [ "$live2" -eq 0 ] && [ -z "$w1$r1" ] ||
			fail "stock: ordered CQs alive ($live1, $live2): ib_ocq was used"
	fi
	rm -f $MNT/f.* /tmp/f.*
	umount $MNT || fail "$v: the last umount"
	nfs_stop_server
	nfs_rmmod_rpcrdma || fail "$v: rmmod rpcrdma"
	printf '%-8s %-12s %-12s %-8s %s\n' "$v" "$wr" "$rd" "$live1/$live2" "$dw/$dr" >> "$RES"
}

nfs_prereqs || ksft_fail "the NFS set-up (nfsd, nfsv4, a tmpfs to export)"
ulp_ocq_fresh || ksft_fail "a fresh ib_ocq"

run_variant stock
run_variant ocq
rmmod ib_ocq || ksft_fail "rmmod ib_ocq after the ocq run"
umount $NFS_EXP

printf '%-8s %-12s %-12s %-8s %s\n' variant write read live "completions (writes/reads)"
cat "$RES"
exit 0
