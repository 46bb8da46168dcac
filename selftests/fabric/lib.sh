# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# lib.sh - the ULP set-ups of the two-node tests, split over the nodes: NVMe-oF target
# and NFS server on node B, NVMe-oF host and NFS client on node A, across the wire.
# Sourced by the tests on node A (after ksft.sh and fabric.sh), and by the scripts
# they run on node B (fab_b ". $FL; fb_...").  The ULPs are the kernel's own, stock
# or converted to ocq (/ko/ulps/{stock,ocq}/, selftests/ulp/lib.sh).
#
# Node B (fb_*):
#   fb_nvmet_up VARIANT NQN [DEV]  nvmet and VARIANT's nvmet-rdma; NQN exports DEV
#                               (/dev/vda: node B's disk, which outlives its resets)
#                               on port 1, FABRIC_ADDR_B:4420, as namespace 1 with a
#                               uuid and nguid made of NQN
#   fb_nvmet_port_again NQN     port 1 made again (nvmet-rdma drops a listener whose
#                               device went and never takes it back)
#   fb_nvmet_down NQN           the subsystem and port gone, nvmet-rdma unloaded
#   fb_nfsd_up VARIANT          VARIANT's rpcrdma, knfsd exporting a tmpfs (NFSv4 only)
#                               on rdma port 20049
#   fb_nfsd_down                knfsd stopped, rpcrdma unloaded
#   fb_disk_sums FIRST N        sha256 of N 1 MiB blocks of /dev/vda from block FIRST,
#                               O_DIRECT, one per line
#   fb_netem ARGS...            tc netem ARGS on eth0 (its packets out: to node A)
#   fb_netem_off                its counts ("netem: Sent ... (dropped N, ...)"), then
#                               gone
# Either node:
#   fb_ocq_counts               "live N completions N rescues N cq_errors N" of the
#                               ordered CQs alive (rescues: completions found by the
#                               watchdog; cq_errors: overruns)
#   fb_rx_bytes                 bytes eth0 received
# Node A (fa_*):
#   fa_nvme_prereqs             nvme-fabrics (and nvme-core) loaded, before nvme-rdma
#   fa_nvme_connect NQN [OPTS]  a controller of NQN at node B (NVME_CTRL); its
#                               namespace in FA_NS
#   fa_block_sums FILE FIRST N  sha256 of N 1 MiB blocks of FILE from block FIRST

FL=/selftests/fabric/lib.sh
FB_CFG=/sys/kernel/config/nvmet
FB_DISK=/dev/vda
# shellcheck source=/dev/null
. /selftests/lib/ksft.sh
# shellcheck source=/dev/null
. /selftests/ulp/lib.sh
# shellcheck source=/dev/null
. /fabric/env

fb_nvmet_up() {
	local v=$1 s=$FB_CFG/subsystems/$2 dev=${3:-$FB_DISK}

	kmod_load nvmet || return 1
	grep -q ' /sys/kernel/config ' /proc/mounts ||
		mount -t configfs configfs /sys/kernel/config || return 1
	[ -b "$dev" ] || { echo "node B has no $dev"; return 1; }
	insmod "$ULP_KO/$v/nvmet-rdma.ko" || return 1
	mkdir "$s" &&
	echo 1 > "$s/attr_allow_any_host" &&
	mkdir "$s/namespaces/1" &&
	echo "$dev" > "$s/namespaces/1/device_path" &&
	echo "$(fb_uuid "$2")" > "$s/namespaces/1/device_uuid" &&
	echo "$(fb_uuid "$2")" > "$s/namespaces/1/device_nguid" &&
	echo 1 > "$s/namespaces/1/enable" || return 1
	fb_nvmet_port "$2"
}

# a namespace's identifiers, the same whenever NQN is set up (nvmet's own are random,
# and a host that reconnects to a target set up again after a reset finds them
# changed and gives up the namespace)
fb_uuid() {
	echo "$1" | sha256sum | sed 's/^\(.\{8\}\)\(.\{4\}\)\(.\{4\}\)\(.\{4\}\)\(.\{12\}\).*/\1-\2-\3-\4-\5/'
}

fb_nvmet_port() {
	local p=$FB_CFG/ports/1

	mkdir "$p" &&
	echo rdma > "$p/addr_trtype" &&
	echo ipv4 > "$p/addr_adrfam" &&
	echo "$FABRIC_ADDR_B" > "$p/addr_traddr" &&
	echo 4420 > "$p/addr_trsvcid" &&
	ln -s "$FB_CFG/subsystems/$1" "$p/subsystems/$1"
}

fb_nvmet_port_again() {
	rm -f "$FB_CFG/ports/1/subsystems/$1"
	rmdir "$FB_CFG/ports/1" 2>/dev/null
	fb_nvmet_port "$1"
}

fb_nvmet_down() {
	local s=$FB_CFG/subsystems/$1

	rm -f "$FB_CFG/ports/1/subsystems/$1"
	rmdir "$FB_CFG/ports/1" 2>/dev/null
	if [ -d "$s" ]; then
		echo 0 > "$s/namespaces/1/enable"
		rmdir "$s/namespaces/1" && rmdir "$s" || return 1
	fi
	! kmod_loaded nvmet_rdma || rmmod nvmet_rdma
}

fb_nfsd_up() {
	. /selftests/ulp/nfs.sh
	kmod_load nfsd || return 1
	mkdir -p $NFS_EXP /var/lib/nfs/v4recovery
	grep -q " $NFS_EXP " /proc/mounts || mount -t tmpfs -o size=96m tmpfs $NFS_EXP
	insmod "$ULP_KO/$1/rpcrdma.ko" || return 1
	# nfs_start_server's rpc.mountd must outlive this request's script
	nfs_start_server
}

fb_nfsd_down() {
	. /selftests/ulp/nfs.sh
	[ -e $NFSD/threads ] && echo 0 > $NFSD/threads
	exportfs -ua 2>/dev/null
	killall rpc.mountd 2>/dev/null
	grep -q " $NFSD " /proc/mounts && umount $NFSD
	rm -rf "${NFS_EXP:?}"/*
	nfs_rmmod_rpcrdma
}

fb_disk_sums() {
	fa_block_sums $FB_DISK "$1" "$2"
}

fa_block_sums() {
	local i=$2 end=$(($2 + $3)) fl=

	case $1 in /dev/*) fl=iflag=direct ;; esac
	while [ $i -lt $end ]; do
		dd if="$1" bs=1M count=1 skip=$i $fl 2>/dev/null | sha256sum | cut -d' ' -f1
		i=$((i + 1))
	done
}

fb_ocq_counts() {
	echo "live $(ulp_ocq_live) completions $(ulp_ocq_sum completions)" \
		"rescues $(ulp_ocq_sum rescues) cq_errors $(ulp_ocq_sum cq_errors)"
}

# iproute2's tc by its path: busybox's sh runs its own tc applet first, which has no
# netem
fb_netem() {
	kmod_load sch_netem > /dev/null || return 1
	/usr/bin/tc qdisc add dev eth0 root netem "$@"
}

fb_netem_off() {
	/usr/bin/tc -s qdisc show dev eth0 | sed -n 's/^ *\(Sent .*\)/netem: \1/p'
	/usr/bin/tc qdisc del dev eth0 root
}

fb_rx_bytes() {
	cat /sys/class/net/eth0/statistics/rx_bytes
}

fa_nvme_prereqs() {
	. /selftests/ulp/nvme.sh
	kmod_load nvme-fabrics
}

# the namespace may take long to come under TCG with two guests: up to 60 s
fa_nvme_connect() {
	local i

	NVME_ADDR=$FABRIC_ADDR_B NVME_NQN=$1
	nvme_connect "${2:-}" || return 1
	for i in 1 2 3; do
		FA_NS=$(nvme_find_ns) && return 0
	done
	echo "no namespace of $1 60 s after the connect: $NVME_CTRL $(cat /sys/class/nvme/$NVME_CTRL/state)," \
		"/sys/block: $(ls /sys/block | tr '\n' ' '); subsystems: $(for d in /sys/class/nvme-subsystem/*; do
			echo "$(basename $d) $(cat $d/subsysnqn) $(ls $d | grep nvme | tr '\n' ' ');"; done)"
	return 1
}
