#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 300
# The open loop (rate=N): the clients post N zero-length RDMA WRITEs with
# immediate per second whatever the server does, and the server burns
# work_ns on each, on every path the bench compares (ocq-strict with the
# postponed arm among them). Every message posted is taken exactly once and
# in order (calls == issued, nothing lost, reordered or duplicated); what
# fell due and was not posted is counted (dropped: send queue full;
# backlog: the pacer behind at the stop), the messages due never exceed
# rate x duration, and most of them were posted (loose bounds: TCG's
# timing is noisy).
# Also: a call target, a stop during a run, and the keys refused with it.
. /selftests/lib/ksft.sh
. /selftests/demo/lib.sh

RATE=${RATE:-400}
MS=${MS:-2000}
WORK=${WORK:-50000}
PATHS="ocq-strict:postpone=1 ocq-flow ocq-parallel upstream-wq upstream-unbound upstream-softirq"

cleanup() { demo_cmd stop 2>/dev/null; demo_unload; }
trap cleanup EXIT

# check_stream WHAT: every message posted was taken, once, in order
check_stream() {
	local c i d

	demo_check_clean || return 1
	c=$(demo_get calls) i=$(demo_get issued) d=$(demo_get dropped)
	[ "$(demo_get failed)" = 0 ] || { echo "$1: failed=$(demo_get failed)"; return 1; }
	[ "$c" -gt 0 ] || { echo "$1: no message taken"; return 1; }
	[ "$c" = "$i" ] || { echo "$1: $i posted but $c taken"; return 1; }
	echo "# $1: posted=$i taken=$c dropped=$d backlog=$(demo_get backlog)" \
		"elapsed_ms=$(demo_get elapsed_ms)" \
		"completions=$(demo_get completions) events=$(demo_get events)" \
		"runs=$(demo_get runs)"
}

# check_rate WHAT: posted + dropped + backlog (the messages due) at most RATE over MS
# and at least half of it; at least 90 % of them posted; and no more posted than
# RATE allows over the run's elapsed time, plus a tenth of a second's worth (a
# pacer that ignored the clock would post them all at once; a slow guest only
# makes elapsed_ms longer, the bound looser)
check_rate() {
	local i due want el

	i=$(demo_get issued)
	due=$((i + $(demo_get dropped) + $(demo_get backlog)))
	want=$((RATE * MS / 1000))
	el=$(demo_get elapsed_ms)
	[ "$due" -le "$want" ] || { echo "$1: $due due, more than $want"; return 1; }
	[ $((due * 2)) -ge "$want" ] || { echo "$1: $due due, want about $want"; return 1; }
	[ $((i * 10)) -ge $((due * 9)) ] || { echo "$1: $i of $due due posted"; return 1; }
	[ "$i" -le $((RATE * el / 1000 + RATE / 10)) ] ||
		{ echo "$1: $i posted in $el ms, faster than $RATE/s"; return 1; }
}

demo_load || ksft_fail "loading the modules failed"

# the keys of calls make no sense without calls
for bad in "rate=10 credits=4" "rate=10 mix=echo:1" "rate=10 echo_size=8" \
	"rate=10 chunk_size=4096" "rate=1000001"; do
	demo_cmd start $bad 2>/dev/null && ksft_fail "start $bad accepted"
	echo "# start $bad: refused: $(demo_get error)"
done
[ "$(demo_get state)" = idle ] || ksft_fail "a refused start changed the state"
case $(demo_get error) in *"out of range"*) ;; *) ksft_fail "no reason given" ;; esac

fail=""
for pp in $PATHS; do
	p=${pp%%:*} extra=""
	[ "$p" = "$pp" ] || extra=${pp#*:}
	# shellcheck disable=SC2086
	if ! demo_run rate=$RATE duration_ms=$MS work_ns=$WORK path=$p $extra; then
		fail="$fail $p"
		continue
	fi
	[ "$(demo_get rate)" = "$RATE" ] || fail="$fail $p(rate=$(demo_get rate))"
	check_stream "$p $extra" || fail="$fail $p(stream)"
	check_rate "$p $extra" || fail="$fail $p(rate)"
done
[ -z "$fail" ] || ksft_fail "paths failed:$fail"

# a target: exactly that many messages fall due
demo_run rate=1000 calls=1000 path=ocq-strict postpone=1 ||
	ksft_fail "run with a target failed"
check_stream "calls=1000" || ksft_fail "run with a target not clean"
[ $(($(demo_get issued) + $(demo_get dropped) + $(demo_get backlog))) = 1000 ] ||
	ksft_fail "calls=1000: $(demo_get issued) posted + $(demo_get dropped) dropped" \
		"+ $(demo_get backlog) behind"

# a stop waits for what is in flight: nothing lost
demo_cmd start rate=300 duration_ms=60000 work_ns=$WORK path=upstream-wq ||
	ksft_fail "long run refused: $(demo_get error)"
demo_wait_calls 30 || ksft_fail "long run took nothing"
sleep 1
demo_cmd stop || ksft_fail "stop refused"
[ "$(demo_get state)" = stopped ] || ksft_fail "state $(demo_get state) after stop"
check_stream "stopped" || ksft_fail "stopped run not clean"

# the front end: its JSON reports the drops, and it passes the run
ocq-demo run --rate 300 --duration 1 --path ocq-strict --postpone --work-ns $WORK \
	--json /tmp/open_loop.json > /tmp/open_loop.out 2>&1 ||
	{ cat /tmp/open_loop.out; ksft_fail "ocq-demo run --rate failed"; }
grep -q '"dropped": ' /tmp/open_loop.json || ksft_fail "no dropped in the JSON"
grep -q '"backlog": ' /tmp/open_loop.json || ksft_fail "no backlog in the JSON"
grep -q 'open loop at 300 messages/s' /tmp/open_loop.out ||
	ksft_fail "the table does not say open loop"

demo_unload || ksft_fail "rmmod ocq_demo failed"
[ "$(demo_ocq_live)" = 0 ] || ksft_fail "ordered CQs left: $(demo_ocq_live)"
