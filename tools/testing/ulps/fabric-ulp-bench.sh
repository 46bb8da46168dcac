# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# shellcheck shell=sh
#
# fabric-ulp-bench.sh - make ulp-bench NODES=2: sourced by guest-ulp-bench.sh on node A
# of a two-node boot (tools/testing/vm/fabric-boot.sh), it moves the NVMe-oF target
# and the NFS server to node B, across the wire, and leaves the passes as they are:
#
#   nvme_variant    node B's nvmet-rdma exports a memory-backed null_blk (1 GiB) at
#                   10.11.13.2:4420; node A's nvme-rdma connects to it
#   nfs_variant     node B's knfsd exports a tmpfs on rdma; node A mounts it
#   busy            the busy time of both nodes' CPUs (one each)
#   ocq_counts      the counters of both nodes' ordered CQs, summed
#
# The stock run traced with the rdma_core tracepoints is left out: it would see node
# A's CQs only.
# shellcheck source=/dev/null
. /selftests/lib/fabric.sh
# shellcheck source=/dev/null
. /selftests/fabric/lib.sh

NQN2=nqn.2026-01.org.ocq:ulp-bench-2
NFS_ADDR=$FABRIC_ADDR_B
T=/nonexistent

fab_require
fab_b ". $FL; ulp_ocq_fresh && kmod_load null_blk nr_devices=1 gb=1 memory_backed=1" > /dev/null ||
	die "node B: ib_ocq and null_blk"
say "two nodes: target and server on node B ($FABRIC_ADDR_B), host and client on node A; no traced run"

busy() {
	echo $(($(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat) +
		$(fab_b "awk '/^cpu / { print \$2 + \$3 + \$4 + \$7 + \$8 }' /proc/stat")))
}

ocq_counts() {
	local b

	b=$(fab_b ". $FL; echo \$(ulp_ocq_sum events) \$(ulp_ocq_sum runs) \$(ulp_ocq_sum completions)")
	set -- $b
	echo "$(($(ulp_ocq_sum events) + ${1:-0})) $(($(ulp_ocq_sum runs) + ${2:-0}))" \
		"$(($(ulp_ocq_sum completions) + ${3:-0}))"
}

nvme_variant() {	# VARIANT REPEAT COUNT
	fab_b ". $FL; fb_nvmet_up $1 $NQN2 /dev/nullb0" > /dev/null || die "nvme $1: node B's target"
	fa_nvme_prereqs || die "nvme $1: nvme-fabrics"
	insmod "$ULP_KO/$1/nvme-rdma.ko" || die "nvme $1: insmod nvme-rdma.ko"
	fa_nvme_connect $NQN2 || die "nvme $1: connect to node B"
	passes nvme "$1" "$2" "$3" "/dev/$FA_NS"
	nvme_disconnect || die "nvme $1: disconnect"
	rmmod nvme_rdma || die "nvme $1: rmmod"
	fab_b ". $FL; fb_nvmet_down $NQN2" > /dev/null || die "nvme $1: node B's teardown"
}

nfs_variant() {	# VARIANT REPEAT COUNT
	fab_b ". $FL; fb_nfsd_up $1" > /dev/null || die "nfs $1: node B's knfsd"
	insmod "$ULP_KO/$1/rpcrdma.ko" || die "nfs $1: insmod rpcrdma.ko"
	nfs_mount || die "nfs $1: mount over rdma from node B"
	dd if=/dev/zero of=$NFS_MNT/f bs=1M count="$MIB" 2>/dev/null || die "nfs $1: creating the file"
	passes nfs "$1" "$2" "$3" $NFS_MNT/f
	rm -f $NFS_MNT/f
	umount $NFS_MNT || die "nfs $1: umount"
	nfs_rmmod_rpcrdma || die "nfs $1: rmmod rpcrdma"
	fab_b ". $FL; fb_nfsd_down" > /dev/null || die "nfs $1: node B's teardown"
}
