# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# nvme.sh - NVMe over RDMA set-up of the ULP tests (source it after lib.sh): a
# memory-backed null_blk exported by nvmet's configfs at 10.11.12.1:4420, and a
# controller connected to it through /dev/nvme-fabrics.
#
#   nvme_prereqs                null_blk (1 GiB), nvmet, nvme-fabrics, configfs
#   nvme_target_up NQN          export /dev/nullb0 as NQN on port 1
#   nvme_target_down            undo nvme_target_up (0 if there is nothing to undo)
#   nvme_connect OPTIONS        connect with "transport=rdma,...,OPTIONS"; sets
#                               NVME_CTRL (nvme0 ...)
#   nvme_disconnect             delete NVME_CTRL, wait until it is gone (30 s)
#   nvme_find_ns                print the namespace's block device (nvme0n1)

NVME_ADDR=10.11.12.1
NVME_PORT=4420
NVME_CFG=/sys/kernel/config/nvmet
NVME_HOSTID=$(cat /proc/sys/kernel/random/uuid)
NVME_HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:$NVME_HOSTID

# state, for the cleanup after a failure
NVME_NQN='' NVME_CTRL='' NVME_TARGET=0

nvme_prereqs() {
	kmod_load null_blk nr_devices=1 gb=1 memory_backed=1 || return 1
	[ -b /dev/nullb0 ] || { echo "null_blk made no /dev/nullb0"; return 1; }
	kmod_load nvmet || return 1
	kmod_load nvme-fabrics || return 1
	grep -q ' /sys/kernel/config ' /proc/mounts ||
		mount -t configfs configfs /sys/kernel/config || return 1
	[ -d $NVME_CFG ] || { echo "no $NVME_CFG"; return 1; }
}

nvme_target_up() {
	local s=$NVME_CFG/subsystems/$1 p=$NVME_CFG/ports/1

	NVME_NQN=$1
	mkdir "$s" || return 1
	NVME_TARGET=1
	echo 1 > "$s/attr_allow_any_host" || return 1
	mkdir "$s/namespaces/1" || return 1
	echo /dev/nullb0 > "$s/namespaces/1/device_path" || return 1
	echo 1 > "$s/namespaces/1/enable" || return 1
	mkdir "$p" || return 1
	echo rdma > "$p/addr_trtype" &&
	echo ipv4 > "$p/addr_adrfam" &&
	echo $NVME_ADDR > "$p/addr_traddr" &&
	echo $NVME_PORT > "$p/addr_trsvcid" || return 1
	ln -s "$s" "$p/subsystems/$1"
}

nvme_target_down() {
	local s=$NVME_CFG/subsystems/$NVME_NQN

	[ "$NVME_TARGET" = 1 ] || return 0
	rm -f "$NVME_CFG/ports/1/subsystems/$NVME_NQN"
	rmdir "$NVME_CFG/ports/1" 2>/dev/null
	echo 0 > "$s/namespaces/1/enable" 2>/dev/null
	rmdir "$s/namespaces/1" 2>/dev/null
	rmdir "$s" || return 1
	[ ! -e "$NVME_CFG/ports/1" ] || return 1
	NVME_TARGET=0
}

# one write to /dev/nvme-fabrics, "instance=N,cntlid=M" read back on the same descriptor
nvme_connect() {
	local line

	exec 3<> /dev/nvme-fabrics || return 1
	echo "transport=rdma,traddr=$NVME_ADDR,trsvcid=$NVME_PORT,nqn=$NVME_NQN,hostnqn=$NVME_HOSTNQN,hostid=$NVME_HOSTID${1:+,$1}" >&3 ||
		{ exec 3>&-; return 1; }
	read -r line <&3
	exec 3>&-
	echo "connected: $line"
	line=${line#instance=}
	NVME_CTRL=nvme${line%%,*}
	[ -e "/sys/class/nvme/$NVME_CTRL" ]
}

nvme_disconnect() {
	local i

	[ -n "$NVME_CTRL" ] || return 0
	echo 1 > "/sys/class/nvme/$NVME_CTRL/delete_controller" 2>/dev/null
	for i in $(seq 1 300); do
		[ -e "/sys/class/nvme/$NVME_CTRL" ] || { NVME_CTRL=; return 0; }
		sleep 0.1
	done
	echo "$NVME_CTRL still there 30 s after delete_controller"
	return 1
}

# the block device of NVME_NQN's namespace (with multipath the head, not
# nvme0c0n1; not the head of an earlier subsystem that is still going)
nvme_find_ns() {
	local i b

	for i in $(seq 1 200); do
		for b in /sys/block/nvme*n*; do
			[ -e "$b" ] || continue
			case ${b##*/} in *c*) continue ;; esac
			[ "$(cat "$b/device/subsysnqn" 2>/dev/null)" = "$NVME_NQN" ] || continue
			[ -b "/dev/${b##*/}" ] && { echo "${b##*/}"; return 0; }
		done
		sleep 0.1
	done
	return 1
}

