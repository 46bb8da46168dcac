#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 150
# The peer hangs up during a run (the module's disconnect_after test hook makes
# the server disconnect connection 0): the run ends "aborted" with everything
# freed, and the next run works.
. /selftests/lib/ksft.sh
. /selftests/demo/lib.sh

HOOK=/sys/module/ocq_demo/parameters/disconnect_after

cleanup() {
	[ -w "$HOOK" ] && echo 0 > "$HOOK"
	demo_cmd stop 2>/dev/null
	demo_unload
}
trap cleanup EXIT

demo_load || ksft_fail "loading the modules failed"
for p in ocq-flow ocq-parallel upstream-wq; do
	echo 300 > "$HOOK" || ksft_fail "cannot set the test hook"
	demo_cmd start conns=3 duration_ms=600000 mix=null:1,echo:1,read:1,write:1 \
		chunk_size=4096 path=$p || ksft_fail "start refused: $(demo_get error)"
	s=$(demo_wait_end 40)
	[ "$s" = aborted ] || ksft_fail "$p: state $s after the disconnect, want aborted"
	echo "# $p: aborted after $(demo_get calls) calls"
	[ "$(demo_ocq_live)" = 0 ] || ksft_fail "$p: ordered CQs left: $(demo_ocq_live)"
	echo 0 > "$HOOK"
	demo_run calls=300 mix=null:1,echo:1 path=$p || ksft_fail "$p: the next run failed"
	demo_check_clean || ksft_fail "$p: the next run is not clean"
done
