#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 240
# The rxe netdev (dummy0) goes down and up under load, on every ordered CQ path
# and one upstream path.  rxe fails the QPs of a downed link (6.1) or leaves
# them silent (6.12); either way the run must end "aborted" (not hang, not
# stall into "done"), with no ordered CQ left, the flush completions taken in
# order (no reorder, no duplicate, every error a completion or posting error,
# the first of a run logged: log_errors=1), and every call accounted for: answered, or
# failed because it was in flight at the error.  The next run, once the link
# is up, must work and be clean: the demo may not tear its connections down
# (CM MADs) while the link is down.
# Last, a flap too short to be seen: the run ends either way, accounted.
. /selftests/lib/ksft.sh
. /selftests/lib/rxe.sh
. /selftests/demo/lib.sh

MIX=mix=null:1,echo:1,read:1,write:1
# 6.12's rxe retransmits once the link is back.  A flap once ended in its
# WARN_ON_ONCE(wqe->status == IB_WC_SUCCESS) of rxe_completer(), which
# panic_on_warn turns into a failed run: the error returns of check_ack()
# that set no status are nearly all about RDMA READ responses.  WRITE calls
# are the server's RDMA READs, so 6.12 flaps without them.
case $(uname -r) in
6.1.*) ;;
*) MIX=mix=null:1,echo:1,read:1 ;;
esac
CONNS=2
CREDITS=16
# errors logged per run: a flap has one or two, so that 1 shows the limit
LOG_ERRORS=1
LOG_PARAM=/sys/module/ocq_demo/parameters/log_errors

cleanup() {
	ip link set "$RXE_NETDEV" up 2>/dev/null
	demo_cmd stop 2>/dev/null
	demo_unload
}
trap cleanup EXIT

# check_end PATH MARK: the ended run is accounted for; its errors are the
# completion and posting errors the demo logged since MARK
check_end() {
	local p=$1 mark=$2 e n f max

	demo_check_accounting || ksft_fail "$p: calls not accounted for"
	[ "$(demo_ocq_live)" = 0 ] || ksft_fail "$p: ordered CQs left: $(demo_ocq_live)"
	e=$(demo_get errors)
	n=$(ksft_kmsg_since "$mark" |
		grep -c '^ocq_demo: conn [0-9]*: \(client completion\|server completion\|posting\|reposting\)')
	# the demo logs the first $LOG_ERRORS errors of a run (od_log_error())
	[ "$n" = "$((e < LOG_ERRORS ? e : LOG_ERRORS))" ] ||
		ksft_fail "$p: errors=$e, but $n completion/posting errors logged"
	[ "$e" -le "$n" ] || echo "# $p: $e errors, $n logged: the limit held"
	f=$(demo_get failed) max=$((CONNS * 2 * CREDITS))
	[ "$f" -le $max ] || ksft_fail "$p: failed=$f, more than can be in flight ($max)"
}

next_run() {
	local p=$1

	rxe_wait_active || ksft_fail "$p: rxe0 not ACTIVE after the link came up"
	demo_run calls=300 $MIX chunk_size=4096 path=$p ||
		ksft_fail "$p: the run after the flap failed"
	demo_check_clean || ksft_fail "$p: the run after the flap is not clean"
	[ "$(demo_get issued)" = 300 ] || ksft_fail "$p: issued=$(demo_get issued), want 300"
}

demo_load || ksft_fail "loading the modules failed"
echo $LOG_ERRORS > $LOG_PARAM || ksft_fail "cannot set $LOG_PARAM"
for p in ocq-flow ocq-strict ocq-parallel upstream-wq; do
	mark=$(ksft_mark)
	demo_cmd start conns=$CONNS credits=$CREDITS duration_ms=600000 $MIX \
		chunk_size=8192 path=$p || ksft_fail "$p: start refused: $(demo_get error)"
	demo_wait_calls 10 || ksft_fail "$p: no calls before the flap ($(demo_get state))"
	ip link set "$RXE_NETDEV" down || ksft_fail "cannot set $RXE_NETDEV down"
	sleep 2
	ip link set "$RXE_NETDEV" up || ksft_fail "cannot set $RXE_NETDEV up"
	s=$(demo_wait_end 40)
	[ "$s" = aborted ] || ksft_fail "$p: state $s after the flap, want aborted"
	check_end "$p" "$mark"
	echo "# $p: aborted: $(demo_get calls) calls answered, $(demo_get failed) failed" \
		"in flight, $(demo_get errors) completion errors"
	next_run "$p"
done

# a flap of a few milliseconds: rxe may or may not notice it
mark=$(ksft_mark)
demo_cmd start conns=$CONNS credits=$CREDITS duration_ms=8000 $MIX chunk_size=8192 \
	path=ocq-flow || ksft_fail "short: start refused: $(demo_get error)"
demo_wait_calls 10 || ksft_fail "short: no calls before the flap"
ip link set "$RXE_NETDEV" down && ip link set "$RXE_NETDEV" up ||
	ksft_fail "cannot flap $RXE_NETDEV"
s=$(demo_wait_end 60)
case $s in
aborted|done) ;;
*) ksft_fail "short: state $s after the flap, want aborted or done" ;;
esac
check_end short "$mark"
echo "# short flap: $s: $(demo_get calls) calls answered, $(demo_get failed) failed," \
	"$(demo_get lost) lost"
next_run ocq-flow
