#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 300
# Retuning an ordered CQ's moderation while it runs.  ib_ocq_set_tune() on the fake
# provider (ocq_test_fake.ko scenario=fake_tune): the deferral turned on and off under
# a stream (events fall by 4x while on; no deferral once off; the CQ ends armed),
# retunes racing a flow stream (everything once, in order), busy polls refused and
# allowed as retunes say, software DIM's delay following a retune, and what an
# allocation refuses refused with nothing changed.  Then the administrator's side, the
# tune file of each ordered CQ in ib_ocq's debugfs, on ocq_demo's CQs over rxe during a
# run: root only (0600); it reads what ib_ocq_get_tune() gives and info agrees; a
# write of some keys changes those and keeps the others; the CQ's runs defer once a
# write turns the deferral on; malformed or invalid writes (unknown or repeated key,
# no value, out of range, DIM with a suspension, a NUL, too long) fail with EINVAL and
# change nothing; a write that needs DIM's state fails with ENOMEM under ib_ocq's
# fail_nth and changes nothing; 200 writes racing the run leave it clean (no reorder,
# loss or duplicate).
. /selftests/lib/ksft.sh
. /selftests/ocq/fake_lib.sh
. /selftests/demo/lib.sh

D=/sys/kernel/debug/ib_ocq
RACE_WRITES=200

cleanup() {
	[ -w $D/fail_nth ] && echo 0 > $D/fail_nth
	demo_cmd stop 2>/dev/null
	demo_unload
}
trap cleanup EXIT

fake_run fake_tune || ksft_fail "fake_tune failed"

demo_load || ksft_fail "loading the modules failed"

# the tune files of ocq_demo's live ordered CQs, one a line
demo_tune_files() {
	local d

	for d in $D/ocq*; do
		grep -qx 'owner ocq_demo' "$d/info" 2>/dev/null && echo "$d/tune"
	done
}

# tune_write FILE STRING: one write(2) of STRING (printf format); prints nothing if it
# succeeded, else the error (dd's message after its last ": ", or its exit status)
tune_write() {
	local rc

	# shellcheck disable=SC2059
	printf "$2" 2>/dev/null | dd of="$1" bs=4096 2>/tmp/tune.err >/dev/null
	rc=$?
	[ $rc = 0 ] && return 0
	sed -n 's/.*: //p' /tmp/tune.err | tail -n 1 | grep . || echo "dd exit $rc"
}

# refused FILE STRING WHY: the write fails with EINVAL and the file reads the same
refused() {
	local before after err

	before=$(cat "$1")
	err=$(tune_write "$1" "$2")
	after=$(cat "$1")
	[ "$err" = "Invalid argument" ] || ksft_fail "$3: '$2' gave '${err:-success}', not EINVAL"
	[ "$after" = "$before" ] || ksft_fail "$3: refused, but '$before' became '$after'"
}

defers() {
	awk '$1 == "defers" { print $2 }' "${1%/tune}/stats"
}

# a long run, stopped by the test once done with it
demo_cmd start duration_ms=3600000 conns=2 mix=null:1,echo:1 path=ocq-strict ||
	ksft_fail "start refused: $(demo_get error)"
demo_wait_calls 30 || ksft_fail "the run answered no call"
files=$(demo_tune_files)
[ -n "$files" ] || ksft_fail "no tune file of ocq_demo's ordered CQs"
set -- $files
T=$1
echo "# tune files: $*"

mode=$(stat -c %a "$T")
[ "$mode" = 600 ] || ksft_fail "$T is mode $mode, not 600"
v=$(cat "$T")
[ "$v" = "defer_usecs=0 defer_polls=0 dim=0 suspend_usecs=0" ] ||
	ksft_fail "a CQ made without moderation reads '$v'"

# a write of two keys; the others keep theirs; info agrees; the runs defer
d0=$(defers "$T")
err=$(tune_write "$T" "defer_usecs=200 defer_polls=4\n")
[ -z "$err" ] || ksft_fail "a valid write failed: $err"
v=$(cat "$T")
[ "$v" = "defer_usecs=200 defer_polls=4 dim=0 suspend_usecs=0" ] || ksft_fail "after the write it reads '$v'"
info=$(cat "${T%/tune}/info")
echo "$info" | grep -qx 'defer_usecs 200' && echo "$info" | grep -qx 'defer_polls 4' ||
	ksft_fail "info does not show the retune: $(echo "$info" | tr '\n' ' ')"
i=0
while [ "$(defers "$T")" = "$d0" ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
d1=$(defers "$T")
echo "# defers $d0 before the retune, $d1 after"
[ "$d1" -gt "$d0" ] || ksft_fail "no run deferred after the retune turned the deferral on"

err=$(tune_write "$T" "dim=1")
[ -z "$err" ] || ksft_fail "dim=1 failed: $err"
[ "$(cat "$T")" = "defer_usecs=200 defer_polls=4 dim=1 suspend_usecs=0" ] ||
	ksft_fail "after dim=1 it reads '$(cat "$T")'"
grep -qx 'dim defer' "${T%/tune}/info" || ksft_fail "info does not show DIM of the deferral"

refused "$T" "dim=2" "dim out of range"
refused "$T" "bogus=1" "unknown key"
refused "$T" "defer_usecs" "no value"
refused "$T" "defer_usecs=" "empty value"
refused "$T" "defer_usecs=12x" "not a number"
refused "$T" "defer_usecs=-1" "negative"
refused "$T" "defer_usecs=10001" "defer_usecs over its maximum"
refused "$T" "defer_polls=101" "defer_polls over its maximum"
refused "$T" "suspend_usecs=100001" "suspend_usecs over its maximum"
refused "$T" "suspend_usecs=100" "a suspension with DIM"
refused "$T" "defer_usecs=1 defer_usecs=2" "a repeated key"
refused "$T" " \n" "no key"
refused "$T" "defer_usecs=1\\000dim=0" "a NUL"
refused "$T" "defer_usecs=1$(printf '%140s' '')" "longer than 128 bytes"

# defer_usecs=0 alone ends the deferral with its polls and DIM
err=$(tune_write "$T" "defer_usecs=0")
[ -z "$err" ] || ksft_fail "defer_usecs=0 failed: $err"
[ "$(cat "$T")" = "defer_usecs=0 defer_polls=0 dim=0 suspend_usecs=0" ] ||
	ksft_fail "after defer_usecs=0 it reads '$(cat "$T")'"

# DIM's state allocated by a retune: the allocation fails, nothing changes
if [ $# -gt 1 ]; then
	U=$2
	before=$(cat "$U")
	echo 1 > $D/fail_nth
	err=$(tune_write "$U" "defer_usecs=100 dim=1")
	left=$(cat $D/fail_nth)
	echo 0 > $D/fail_nth
	[ "$err" = "Cannot allocate memory" ] ||
		ksft_fail "with the allocation failed, dim=1 gave '${err:-success}'"
	[ "$left" = 0 ] || ksft_fail "fail_nth is $left: the write allocated nothing"
	[ "$(cat "$U")" = "$before" ] || ksft_fail "a failed allocation changed '$before' to '$(cat "$U")'"
else
	ksft_fail "the run has one ordered CQ: no CQ left for the allocation failure"
fi

# writes racing the run, every CQ of it, then the run must be clean
i=0
while [ $i -lt $RACE_WRITES ]; do
	for f in $files; do
		case $((i % 4)) in
		0) s="defer_usecs=50 defer_polls=2" ;;
		1) s="defer_usecs=100 dim=1" ;;
		2) s="defer_usecs=0 suspend_usecs=500" ;;
		*) s="defer_usecs=0 suspend_usecs=0" ;;
		esac
		err=$(tune_write "$f" "$s")
		[ -z "$err" ] || ksft_fail "racing write $i '$s' to $f failed: $err"
	done
	i=$((i + 1))
done
[ "$(demo_get state)" = running ] || ksft_fail "the run ended before the racing writes did"
echo "# $RACE_WRITES racing writes to each of $# CQs"
demo_cmd stop || ksft_fail "stop refused"
s=$(demo_wait_end 60)
[ "$s" = stopped ] || ksft_fail "the run ended as $s"
demo_check_accounting || ksft_fail "the run is not clean"
echo "# the run: $(demo_get calls) calls, clean"
exit $KSFT_PASS
