# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# nfs.sh - NFS over RDMA set-up of the ULP tests (source it after lib.sh): knfsd
# exporting a tmpfs on rdma port 20049 (NFSv4 only) and an NFSv4.1 mount of it over
# rdma, loopback on rxe0.
#
#   nfs_prereqs                 nfsd, nfsv4, the tmpfs export at NFS_EXP, NFS_MNT
#   nfs_start_server            knfsd on rdma NFS_PORT, rpc.mountd (export upcalls)
#   nfs_stop_server             threads to 0, exports and rpc.mountd gone (0 always)
#   nfs_mount                   mount NFS_MNT over rdma; fails unless proto=rdma
#   nfs_rmmod_rpcrdma           rmmod rpcrdma, retried while its last transport goes

NFS_ADDR=10.11.12.1
NFS_PORT=20049
NFSD=/proc/fs/nfsd
NFS_MNT=/tmp/ulp_nfs_mnt
NFS_EXP=/tmp/ulp_nfs_export
NFS_MOUNTD=''

nfs_prereqs() {
	kmod_load nfsd || return 1
	kmod_load nfsv4 || return 1
	mkdir -p $NFS_MNT $NFS_EXP /var/lib/nfs/v4recovery
	grep -q " $NFS_EXP " /proc/mounts || mount -t tmpfs -o size=64m tmpfs $NFS_EXP
}

nfs_start_server() {
	mount -t nfsd nfsd $NFSD || return 1
	echo "$NFS_EXP *(rw,no_root_squash,no_subtree_check,fsid=0,insecure)" > /etc/exports
	exportfs -ra || return 1
	rpc.mountd -F -N 2 -N 3 --no-udp > /tmp/mountd.log 2>&1 &
	NFS_MOUNTD=$!
	# NFSv4 only; the shortest grace period and lease, or the first OPEN waits 90 s
	echo "-3" > $NFSD/versions || return 1
	echo 10 > $NFSD/nfsv4gracetime
	echo 10 > $NFSD/nfsv4leasetime
	echo "rdma $NFS_PORT" > $NFSD/portlist || return 1
	echo 4 > $NFSD/threads || return 1
	echo "nfsd: versions $(cat $NFSD/versions), listening on $(cat $NFSD/portlist | tr '\n' ' ')"
}

# threads to 0 first: an RDMA listener left without threads keeps the device busy
nfs_stop_server() {
	[ -e $NFSD/threads ] && echo 0 > $NFSD/threads
	exportfs -ua 2>/dev/null
	[ -n "$NFS_MOUNTD" ] && kill "$NFS_MOUNTD" 2>/dev/null && wait "$NFS_MOUNTD" 2>/dev/null
	NFS_MOUNTD=''
	grep -q " $NFSD " /proc/mounts && umount $NFSD
	return 0
}

nfs_mount() {
	mount.nfs $NFS_ADDR:/ $NFS_MNT -o vers=4.1,rdma,port=$NFS_PORT || return 1
	grep " $NFS_MNT " /proc/mounts | grep -q 'proto=rdma' ||
		{ grep " $NFS_MNT " /proc/mounts; echo "not mounted over rdma"; return 1; }
}

nfs_rmmod_rpcrdma() {
	local i

	for i in $(seq 1 100); do
		rmmod rpcrdma 2>/dev/null && return 0
		sleep 0.2
	done
	rmmod rpcrdma
}
