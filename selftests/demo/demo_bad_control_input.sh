#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 150
# Malformed or out-of-range commands are refused with EINVAL, leave a reason
# in "error=", change nothing; the module works afterwards.
. /selftests/lib/ksft.sh
. /selftests/demo/lib.sh

cleanup() { demo_cmd stop 2>/dev/null; demo_unload; }
trap cleanup EXIT

demo_load || ksft_fail "loading the modules failed"
mode=$(stat -c %a "$CTL")
[ "$mode" = 600 ] || ksft_fail "control file mode is $mode, want 600"

refused() {	# CMD: must be refused, state and run count unchanged
	local before after

	before=$(grep -v -e '^error=' "$CTL")
	if echo "$1" > "$CTL" 2>/dev/null; then
		ksft_fail "accepted: '$1'"
	fi
	after=$(grep -v -e '^error=' "$CTL")
	[ "$before" = "$after" ] || ksft_fail "'$1' changed the state"
	[ -n "$(demo_get error)" ] || ksft_fail "no error= after '$1'"
	echo "# refused '$1': $(demo_get error)"
}

while read -r cmd; do
	refused "$cmd"
done <<'LIST'

bogus
stop
stop now
start conns=0
start conns=17
start conns=-1
start conns=99999999999999999999
start conns=2x
start conns=
start conns
start =3
start foo=1
start conns=2 conns=3
start credits=0
start credits=129
start calls=abc
start calls=4294967296
start calls=0 duration_ms=0
start duration_ms=-5
start mix=
start mix=null:0
start mix=null:0,echo:0
start mix=foo:1
start mix=null
start mix=null:101
start mix=null:1,null:1
start mix=null:1,
start path=nope
start path=OCQ-FLOW
start echo_size=0
start echo_size=4097
start chunk_size=511
start chunk_size=1048577
start work_ns=1000001
start postpone=2
start postpone=yes
start defer_us=10001
start defer_us=100 postpone=1
start defer_us=100 path=naive
start defer_dim=1
start defer_dim=2 defer_us=100
start defer_dim=1 defer_us=100 postpone=1
start busy_poll_us=100001
start busy_poll_us=50 path=upstream-wq
start busy_poll_us=50 postpone=1
start busy_poll_us=50 defer_us=100 defer_dim=1
LIST

# a write longer than a page
printf 'start %5000s' x > /tmp/big
dd if=/tmp/big of="$CTL" bs=8192 count=1 2>/dev/null && ksft_fail "a long write was accepted"
echo "# long write: $(demo_get error)"

# start while running, then stop; stop when idle
demo_cmd start duration_ms=30000 mix=null:1 || ksft_fail "a valid start was refused: $(demo_get error)"
[ "$(demo_get state)" = running ] || ksft_fail "not running after start"
echo "start calls=10" > "$CTL" 2>/dev/null && ksft_fail "start accepted while running"
echo "# refused start while running: $(demo_get error)"
[ "$(demo_get state)" = running ] || ksft_fail "second start disturbed the run"
demo_cmd stop || ksft_fail "stop refused: $(demo_get error)"
[ "$(demo_get state)" = stopped ] || ksft_fail "state $(demo_get state) after stop"
demo_check_clean || ksft_fail "stopped run not clean"
refused "stop"

# still works
demo_run calls=500 mix=null:1,echo:1,read:1,write:1 chunk_size=4096 ||
	ksft_fail "a run after the bad input failed"
demo_check_clean || ksft_fail "the run after the bad input is not clean"
[ -z "$(demo_get error)" ] || ksft_fail "error= not cleared by a good command"
