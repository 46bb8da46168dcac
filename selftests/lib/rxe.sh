# SPDX-License-Identifier: GPL-2.0
#
# rxe.sh - the RDMA set-up of the test guest: an rxe device on a dummy netdev.
# Sourced by setup.sh at boot and by tests that need to re-create the device:
#
#   . /selftests/lib/rxe.sh
#   rxe_recreate            # delete rxe0 if present, create it again, wait for it
#
# Names and address are fixed: netdev dummy0 (10.11.12.1/24), RDMA device rxe0; on a
# node of a two-node run (/fabric/env) the netdev and address are the wire's.

RXE_DEV=rxe0
RXE_NETDEV=dummy0
RXE_ADDR=10.11.12.1/24
# a node of a two-node run: rxe0 on the wire's netdev, with this node's address
# shellcheck source=/dev/null
[ -f /fabric/env ] && . /fabric/env

# rxe asks the crypto API for "crc32" when a link is added; nothing auto-loads modules
# in the guest, so load a provider ourselves (idempotent).
rxe_prereqs() {
	local m

	for m in crc32_generic udp_tunnel ip6_udp_tunnel ib_core ib_uverbs rdma_rxe dummy; do
		grep -q "^$m " /proc/modules && continue
		[ -f "/lib/modules/$m.ko" ] && insmod "/lib/modules/$m.ko"
	done
	return 0
}

rxe_netdev_up() {
	if ! ip link show "$RXE_NETDEV" >/dev/null 2>&1; then
		case $RXE_NETDEV in
		dummy*) ip link add "$RXE_NETDEV" type dummy || return 1 ;;
		*) echo "rxe: no $RXE_NETDEV" >&2; return 1 ;;
		esac
	fi
	ip addr show dev "$RXE_NETDEV" | grep -q "inet ${RXE_ADDR%/*}/" ||
		ip addr add "$RXE_ADDR" dev "$RXE_NETDEV" || return 1
	ip link set "$RXE_NETDEV" up
}

rxe_present() {
	[ -e "/sys/class/infiniband/$RXE_DEV" ]
}

# Wait until port 1 of rxe0 is ACTIVE (a few seconds at most).
rxe_wait_active() {
	local i

	for i in $(seq 1 50); do
		grep -q ACTIVE "/sys/class/infiniband/$RXE_DEV/ports/1/state" 2>/dev/null &&
			return 0
		sleep 0.1
	done
	echo "rxe: $RXE_DEV port 1 not ACTIVE" >&2
	return 1
}

rxe_create() {
	rxe_prereqs
	rxe_netdev_up || { echo "rxe: cannot set up $RXE_NETDEV" >&2; return 1; }
	if ! rxe_present; then
		rdma link add "$RXE_DEV" type rxe netdev "$RXE_NETDEV" ||
			{ echo "rxe: rdma link add $RXE_DEV failed" >&2; return 1; }
	fi
	rxe_wait_active
}

rxe_delete() {
	rxe_present || return 0
	rdma link delete "$RXE_DEV"
}

rxe_recreate() {
	rxe_delete && rxe_create
}
