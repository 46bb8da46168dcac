#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 900
# skip-ok: the ULPs are built from a Debian image's linux-source
# RDS (net/rds: rds.ko and rds_rdma.ko, built from the kernel's linux-source by make
# ulps) over rxe0 on one node, as Debian ships it (stock) and converted to ocq's
# helpers (ocq: scripts/coccinelle/api/ib_poll_cq_and_arm.cocci turns the tasklets'
# poll, arm, poll again into loops on ib_poll_cq_and_arm() for the send CQ and
# ib_poll_cq_and_arm_solicited() for the receive CQ), in turn (ULP_RDS_VARIANTS,
# lib.sh).
#
# The traffic is rds-io's (tools/testing/ulps/rds-io.c): socket pairs, each sending
# messages of 32 bytes to 16 KiB (up to four 4 KiB RDS fragments) with a sequence
# number and a checksum; every receiver checks each payload, the order and that
# nothing was lost or came twice, and rds-io fails on the first error.
#
# Which transport RDS takes, read in net/rds of linux-source 6.1 and 6.12 (the same
# code in both), and checked below:
# - bind() chooses the socket's transport: bind.c rds_bind() calls transport.c
#   rds_trans_get_preferred(), which gives an address of 127/8 (or ::1) to the
#   loopback transport and any other to the first registered transport, in the order
#   of RDS_TRANS_IB (0) then RDS_TRANS_TCP (2), whose laddr_check() takes it.  The IB
#   transport's, ib.c rds_ib_laddr_check() and rds_ib_laddr_check_cm(), takes an
#   address that rdma_bind_addr() binds to a device of node type RDMA_NODE_IB_CA
#   (rxe is one; siw, iWARP, is not): any address of the netdev rxe0 runs on.  The
#   transport's module must be loaded: rds_trans_get_preferred() loads none
#   (only SO_RDS_TRANSPORT's rds_trans_get() calls request_module()).  With no
#   transport for the address, bind() fails with EADDRNOTAVAIL.
# - a connection is made with the socket's transport (send.c rds_sendmsg() ->
#   rds_conn_create_outgoing(..., rs->rs_transport, ...)), and connection.c
#   __rds_conn_create() marks it c_loopback when the destination is local; it moves
#   it to the loopback transport only if the transport sets t_prefer_loopback,
#   which TCP does (tcp.c rds_tcp_transport) and IB does not (ib.c
#   rds_ib_transport).  So a local destination stays on IB, through rxe0: one QP
#   per direction and connection, the IB loopback case only skipping congestion
#   map updates (ib_send.c rds_ib_xmit()).  With source and destination the same
#   address, __rds_conn_create() gives the accepting side its own connection
#   (c_passive) for the second QP.
# Hence one node is enough: with rds_rdma loaded, sockets bound to an address of
# dummy0 (rxe0's netdev) use IB, with one address (10.11.12.1 to itself) as with
# two (10.11.12.1 to 10.11.12.2, both on dummy0); 127.0.0.1 uses the loopback
# transport; an address of a netdev without an RDMA device (dummy1) has none.  The
# test checks each: rds-io --transport names the connection's transport
# (RDS_INFO_CONNECTIONS) that must carry the traffic, and the IB transport's
# receive completions are counted twice.  RDS counts them in ib_rx_cq_event (ib_recv.c
# rds_ib_recv_cqe_handler(), one per completion: each fragment of a message, each
# ACK-only message, which it also counts in ib_ack_received) and rxe0 in rdma_recvs
# (rxe_resp.c do_complete(), each successful receive completion of any QP of rxe0,
# the CM's MADs included).  In an IB run RDS's completions less its ACKs must be
# exactly the fragments the messages took (rds-io's "frags": one per 4 KiB of
# payload, at least one a message, as ib_send.c rds_ib_xmit() cuts them; IB
# loopback sends no congestion map), rxe0 must count at least RDS's completions,
# and RDS none in the loopback run.  Not ib_rx_total_incs: it counts the
# incoming-message structures allocated from the slab when the connection's cache
# of them is empty (ib_recv.c rds_ib_refill_one_inc()); they are recycled, so it
# stops counting once the cache is warm (6.1: +2141 over a first run of 2000
# messages, +0 over a later one).
#
# Between two local addresses a congested receiver stalls its sender for good, in
# stock RDS as in the converted one (4 pairs of 500 messages from A1, 10.11.12.1,
# to A2, 10.11.12.2: after 13 to 43 of them, nothing more, in either).  The
# receiver on A2 clears its port's bit in A2's congestion map and queues the map's
# update on A2's connections (recv.c rds_recv_rcvbuf_delta(), cong.c
# rds_cong_queue_updates()); on an IB loopback connection the update is not sent
# but taken as one received, and ib_send.c rds_ib_xmit() wakes the waiters of that
# connection's c_fcong, A1's map, while the sender waits on its own connection's
# c_fcong, A2's (cong.c rds_cong_wait(), which nothing else wakes).  With one
# address both are the same map.  So the runs between two addresses give the
# receivers a receive buffer larger than a run can queue (rds-io --rcvbuf); the
# one-address runs keep the default and go through congestion (RDS's
# cong_send_blocked counts it).
#
# That the converted module runs on ocq: its rds_rdma.ko is a holder of ib_ocq
# (/sys/module/ib_ocq/holders/rds_rdma, ib_ocq's refcnt one higher while it is
# loaded) and, in every IB run, kprobes on ib_poll_cq_and_arm() and
# ib_poll_cq_and_arm_solicited() count calls: each at least one, together at least
# one per tasklet run that RDS counted (ib_tasklet_call: every run polls its CQ
# through its helper).  For stock: no holder, no refcnt change, no call.  Neither
# variant has an ordered CQ (RDS keeps its CQs, ib_create_cq()).
#
# Then rdma link delete rxe0 while 4 pairs send, and rxe0 created again: rds_rdma
# drops the connections (ib.c rds_ib_remove_one()) and reconnects over the new
# device.  RDS retransmits what the peer did not acknowledge and drops duplicates
# by sequence number, so the traffic may go on across the removal: what rds-io
# saw is recorded, the device removal must complete, and a new run must then pass
# over the new rxe0 with the checks above.  The converted variant must end no
# worse than stock (rds-io passing across the removal is better than rds-io
# failing).  No splat, no hung task (the runner checks the kernel log).
. /selftests/lib/ksft.sh
. /selftests/lib/rxe.sh
. /selftests/ulp/lib.sh

ulp_require
command -v rds-io >/dev/null || ksft_fail "no rds-io in the guest (make ulps builds it)"

A1=10.11.12.1		# rxe0's netdev's address
A2=10.11.12.2		# a second one on the same netdev
NORDMA=10.11.13.1	# on dummy1, which has no RDMA device
PAIRS=4
MSGS=500		# per pair, in each checked run
RCVBUF=67108864		# the receivers' between two addresses: never congested
RES=/tmp/ulp_rds.res
: > "$RES"
RPID=''
STOCK_RANK=''		# the stock removal's outcome: 0 rode through, 1 rds-io failed

cleanup() {
	[ -n "$RPID" ] && kill "$RPID" 2>/dev/null && wait "$RPID"
	rxe_present || rxe_create >/dev/null 2>&1
	rds_unload
	rds_probes_off
	ip addr del "$A2/24" dev "$RXE_NETDEV" 2>/dev/null
	ip link del dummy1 2>/dev/null
}

fail() {
	echo "FAIL: $*"
	cleanup
	exit 1
}

now() {
	cut -d' ' -f1 /proc/uptime
}

# run VARIANT NAME RDS-IO-ARGS...: rds-io --json, which must pass; OUT its line
run() {
	local v=$1 name=$2

	shift 2
	OUT=$(rds-io --json "$@" 2> /tmp/rds.err) ||
		fail "$v: $name: rds-io $*: $(cat /tmp/rds.err); what it saw: $OUT;" \
			"rxe0: $(rxe_hw_counters)"
	echo "$v: $name: $(rds_field "$OUT" ops) messages ($(rds_field "$OUT" frags)" \
		"fragments), $(rds_field "$OUT" iops) msg/s, $(rds_field "$OUT" mb_s) MB/s," \
		"p50 $(rds_field "$OUT" p50_us) us, p99 $(rds_field "$OUT" p99_us) us; bound" \
		"$(echo "$OUT" | sed -n 's/.*"bound":"\([^"]*\)".*/\1/p'), connection" \
		"$(echo "$OUT" | sed -n 's/.*"conn":"\([^"]*\)".*/\1/p')"
}

# ib_run VARIANT NAME SRC DST [RDS-IO-ARGS...]: PAIRS x MSGS over IB, counted by RDS,
# by rxe0 and by the probes on ocq's helpers
ib_run() {
	local v=$1 name=$2 src=$3 dst=$4 r0 r1 rx ack fr h0 h1 arm sol tl

	shift 4
	r0=$(rxe_hw_counter rdma_recvs) h0=$(rds_probe_hits)
	run "$v" "$name" -s "$src" -d "$dst" -n $PAIRS -m $MSGS --transport ib "$@"
	h1=$(rds_probe_hits) r1=$(rxe_hw_counter rdma_recvs)
	rx=$(rds_field "$OUT" ib_rx_cq_event) fr=$(rds_field "$OUT" frags)
	ack=$(rds_field "$OUT" ib_ack_received) tl=$(rds_field "$OUT" ib_tasklet_call)
	# shellcheck disable=SC2086 # two numbers each
	set -- $h0 $h1
	arm=$(($3 - $1)) sol=$(($4 - $2))
	echo "$v: $name: RDS ib_rx_cq_event +$rx, ib_tx_cq_event" \
		"+$(rds_field "$OUT" ib_tx_cq_event), ib_ack_received +$ack," \
		"ib_evt_handler_call +$(rds_field "$OUT" ib_evt_handler_call)," \
		"ib_tasklet_call +$tl, cong_send_blocked" \
		"+$(rds_field "$OUT" cong_send_blocked), ib_rx_total_incs" \
		"+$(rds_field "$OUT" ib_rx_total_incs); rxe0 rdma_recvs +$((r1 - r0));" \
		"calls of ib_poll_cq_and_arm() $arm, ib_poll_cq_and_arm_solicited() $sol"
	[ $((rx - ack)) -eq "$fr" ] && [ "$fr" -ge $((PAIRS * MSGS)) ] ||
		fail "$v: $name: RDS's IB transport counted $rx receive completions, $ack of" \
			"them ACKs, for $fr fragments of $((PAIRS * MSGS)) messages"
	[ $((r1 - r0)) -ge "$rx" ] ||
		fail "$v: $name: rxe0 counted $((r1 - r0)) receive completions, RDS $rx"
	if [ "$v" = ocq ]; then
		[ "$arm" -gt 0 ] && [ "$sol" -gt 0 ] && [ $((arm + sol)) -ge "$tl" ] ||
			fail "ocq: $name: $arm + $sol calls of ocq's helpers for $tl tasklet runs"
	else
		[ "$arm" -eq 0 ] && [ "$sol" -eq 0 ] ||
			fail "stock: $name: ocq's helpers were called ($arm, $sol)"
	fi
	printf '%-8s %-22s %s msg/s\n' "$v" "$name" "$(rds_field "$OUT" iops)" >> "$RES"
}

# transports VARIANT: the transport each kind of address takes
transports() {
	local v=$1 out

	if out=$(rds-io -s $NORDMA -n 1 -m 1 2>&1); then
		fail "$v: $NORDMA (dummy1, no RDMA device) was taken by a transport: $out"
	fi
	case $out in
	*"bind $NORDMA"*"Cannot assign requested address"*)
		echo "$v: $NORDMA (no RDMA device): bind fails with EADDRNOTAVAIL" ;;
	*) fail "$v: $NORDMA: not the bind error expected: $out" ;;
	esac
	run "$v" "127.0.0.1" -s 127.0.0.1 -n 2 -m 200 --transport loop
	[ "$(rds_field "$OUT" ib_rx_cq_event)" -eq 0 ] ||
		fail "$v: 127.0.0.1: the IB transport counted receive completions in the loopback run"
	ib_run "$v" "one address $A1" $A1 $A1
	ib_run "$v" "two addresses" $A1 $A2 --rcvbuf $RCVBUF
}

# fault_remove VARIANT RATE: rxe0 deleted under traffic (about 20 s of it at RATE
# messages/s), then created again
fault_remove() {
	local v=$1 m r0 t0 t1 rc=0 outcome rank

	m=$(awk -v r="$2" -v p=$PAIRS 'BEGIN { m = int(r * 20 / p); print m < 500 ? 500 : m }')
	r0=$(rxe_hw_counter rdma_recvs)
	rds-io --json -s $A1 -d $A2 -n $PAIRS -m "$m" -t 120 --transport ib --rcvbuf $RCVBUF \
		> /tmp/rds_fault.out 2> /tmp/rds_fault.err &
	RPID=$!
	for _ in $(seq 1 300); do
		[ $(($(rxe_hw_counter rdma_recvs) - r0)) -ge 200 ] && break
		sleep 0.1
	done
	kill -0 $RPID 2>/dev/null ||
		fail "$v: remove: rds-io ended before the removal: $(cat /tmp/rds_fault.err)"
	[ $(($(rxe_hw_counter rdma_recvs) - r0)) -ge 200 ] ||
		fail "$v: remove: no traffic on rxe0 within 30 s"
	t0=$(now)
	rxe_delete || fail "$v: remove: rdma link delete $RXE_DEV"
	t1=$(now)
	sleep 2
	rxe_create || fail "$v: remove: cannot create $RXE_DEV again"
	wait $RPID || rc=$?
	RPID=
	if [ $rc -eq 0 ]; then
		rank=0
		outcome="rode through: $(rds_field "$(cat /tmp/rds_fault.out)" ops) messages"
		outcome="$outcome in order, none lost or twice"
	else
		rank=1
		outcome="rds-io exit $rc: $(head -1 /tmp/rds_fault.err)"
	fi
	echo "$v: remove: $PAIRS pairs x $m messages; rdma link delete took" \
		"$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s; $outcome"
	echo "$v: remove: counters: $(sed -n 's/.*"counters":\(.*\)}$/\1/p' /tmp/rds_fault.out)"
	printf '%-8s %-22s %s\n' "$v" "device removal" "$outcome" >> "$RES"
	if [ "$v" = stock ]; then
		STOCK_RANK=$rank
	elif [ -n "$STOCK_RANK" ] && [ "$rank" -gt "$STOCK_RANK" ]; then
		fail "$v: remove: worse than stock, which rode through: $outcome"
	fi
	ib_run "$v" "after the removal" $A1 $A2 --rcvbuf $RCVBUF
}

run_variant() {	# stock|ocq
	local v=$1 ref0 ref1 live

	echo "=== $v"
	ref0=$(cat /sys/module/ib_ocq/refcnt)
	rds_load "$v" || fail "$v: loading RDS"
	ref1=$(cat /sys/module/ib_ocq/refcnt)
	if [ "$v" = ocq ]; then
		[ -e /sys/module/ib_ocq/holders/rds_rdma ] && [ "$ref1" -gt "$ref0" ] ||
			fail "ocq: rds_rdma is no holder of ib_ocq (ib_ocq's refcnt $ref0, then $ref1)"
		echo "ocq: rds_rdma holds ib_ocq: its refcnt $ref0, with rds_rdma loaded $ref1"
	else
		[ ! -e /sys/module/ib_ocq/holders/rds_rdma ] && [ "$ref1" -eq "$ref0" ] ||
			fail "stock: rds_rdma holds ib_ocq (its refcnt $ref0, then $ref1)"
	fi
	transports "$v"
	live=$(ulp_ocq_live)
	[ "$live" -eq 0 ] || fail "$v: $live ordered CQs alive: RDS makes none"
	fault_remove "$v" "$(rds_field "$OUT" iops)"
	rds_unload || fail "$v: unloading RDS"
	[ "$(cat /sys/module/ib_ocq/refcnt)" -eq "$ref0" ] ||
		fail "$v: ib_ocq's refcnt $(cat /sys/module/ib_ocq/refcnt) after rmmod, $ref0 before"
}

rxe_present || rxe_create || ksft_fail "no $RXE_DEV"
ip addr add "$A2/24" dev "$RXE_NETDEV" || ksft_fail "ip addr add $A2 to $RXE_NETDEV"
{ ip link add dummy1 type dummy && ip addr add "$NORDMA/24" dev dummy1 &&
	ip link set dummy1 up; } || fail "dummy1 with $NORDMA"
ulp_ocq_fresh || fail "a fresh ib_ocq"
rds_probes_on || fail "kprobes on ocq's helpers"
echo "variants: $ULP_RDS_VARIANTS (lib.sh ULP_RDS_VARIANTS)"
for v in $ULP_RDS_VARIANTS; do
	run_variant "$v"
done
rds_probes_off || fail "removing the kprobes"
rmmod ib_ocq || fail "rmmod ib_ocq"
cleanup
printf '%-8s %-22s %s\n' variant run result
cat "$RES"
exit 0
