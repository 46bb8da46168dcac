#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 120
# The two-node boot itself: node B answers on the control channel and runs what it is
# asked (its output and exit status come back), the wire carries node A's packets to
# node B and back (ping, and B's eth0 counts what A sent), rxe0 is ACTIVE on the wire
# on both nodes, and the host's "link off" stops the wire until "link on" (QEMU's
# set_link on both nodes: carrier lost on both), which the control channel survives.
. /selftests/lib/ksft.sh
. /selftests/lib/fabric.sh

fab_require
out=$(fab_b 'echo "node $FABRIC_NODE $(uname -r)"; exit 3')
rc=$?
[ $rc -eq 3 ] || ksft_fail "node B's exit status came back as $rc, not 3"
[ "$out" = "node b $(uname -r)" ] || ksft_fail "node B said '$out'"
echo "node B: $out"

grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state || ksft_fail "rxe0 not ACTIVE on node A"
fab_b 'grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state' ||
	ksft_fail "rxe0 not ACTIVE on node B"
[ "$(cat /sys/class/infiniband/rxe0/ports/1/gid_attrs/ndevs/0 2>/dev/null)" = eth0 ] ||
	ksft_fail "rxe0 of node A is not on the wire (eth0)"

rx0=$(fab_b 'cat /sys/class/net/eth0/statistics/rx_packets') || ksft_fail "node B's counters"
ping -c 5 -W 5 "$FABRIC_ADDR_B" > /tmp/ping.out || { cat /tmp/ping.out; ksft_fail "no ping across the wire"; }
tail -n 2 /tmp/ping.out
rx1=$(fab_b 'cat /sys/class/net/eth0/statistics/rx_packets')
[ $((rx1 - rx0)) -ge 5 ] || ksft_fail "node B's eth0 received $((rx1 - rx0)) packets during 5 pings"

fab_host link off || ksft_fail "the host's link off"
usleep 500000
grep -qx 0 /sys/class/net/eth0/carrier || ksft_fail "node A's eth0 has carrier with the link off"
ping -c 2 -W 1 "$FABRIC_ADDR_B" > /dev/null 2>&1 && ksft_fail "a ping went through with the link off"
fab_b 'cat /sys/class/net/eth0/carrier' | grep -qx 0 ||
	ksft_fail "node B's eth0 has carrier with the link off (or B is unreachable)"
fab_host link on || ksft_fail "the host's link on"
ok=0
for i in 1 2 3 4 5 6 7 8 9 10; do
	ping -c 1 -W 1 "$FABRIC_ADDR_B" > /dev/null 2>&1 && { ok=1; break; }
done
[ $ok = 1 ] || ksft_fail "no ping 10 s after link on"
echo "link off: no packet through, no carrier on either node; link on: ping again"
exit 0
