# SPDX-License-Identifier: GPL-2.0
#
# fabric.sh - helpers of the two-node tests (source it after ksft.sh).  A two-node test
# ("# nodes: 2", or any test of selftests/fabric/) runs on node A of a two-node boot
# (tools/testing/vm/fabric-boot.sh); node B (FABRIC_ADDR_B) is at the other end of the
# wire and does what the test asks through the control channel, which the wire's
# faults never touch.  rxe0 is on each node's wire netdev (eth0).
#
#   fab_require                 fail the test unless this is node A of a two-node boot
#                               and node B answers
#   fab_b CMD [TIMEOUT]         run the shell script CMD on node B (60 s unless
#                               TIMEOUT): print its output, return its status (124:
#                               timed out, or no answer)
#   fab_host CMD                the host: "link off|on" (the wire's link on both nodes,
#                               from QEMU's monitor), "reset b" (node B power-cycled)
#   fab_b_boots                 the boots of node B so far (1 until a reset)
#   fab_wait_b BOOTS SECONDS    wait until node B booted more than BOOTS times and
#                               answers
#   fab_now                     seconds since boot, two decimals

[ -f /fabric/guest.sh ] && . /fabric/guest.sh

fab_require() {
	[ -f /fabric/guest.sh ] ||
		ksft_fail "not a node of a two-node boot (a two-node test needs '# nodes: 2' or selftests/fabric/)"
	[ "$FABRIC_NODE" = a ] || ksft_fail "a two-node test runs on node A, this is node $FABRIC_NODE"
	fab_b true 20 >/dev/null || ksft_fail "node B does not answer on the control channel"
}

fab_b() {
	fabric_req R "${2:-60}" "$1"
}

fab_host() {
	fabric_req H 30 "$@"
}

fab_b_boots() {
	fabric_b_boots
}

fab_wait_b() {
	local t=0

	while [ "$(fabric_b_boots)" -le "$1" ]; do
		[ $t -ge $(($2 * 5)) ] && return 1
		usleep 200000
		t=$((t + 1))
	done
	fab_b true 20 >/dev/null
}

fab_now() {
	cut -d' ' -f1 /proc/uptime
}
