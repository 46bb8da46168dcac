#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 150
# Unloading the module during a run stops the run first and frees everything;
# the module loads and runs again afterwards.
. /selftests/lib/ksft.sh
. /selftests/demo/lib.sh

cleanup() { demo_cmd stop 2>/dev/null; demo_unload; }
trap cleanup EXIT

for p in ocq-flow ocq-strict upstream-softirq naive; do
	demo_load || ksft_fail "loading the modules failed"
	demo_cmd start conns=3 duration_ms=600000 mix=null:1,echo:1,read:1,write:1 \
		chunk_size=8192 path=$p || ksft_fail "start refused: $(demo_get error)"
	sleep 2
	[ "$(demo_get state)" = running ] || ksft_fail "$p: not running"
	[ "$(demo_get calls)" -gt 0 ] || ksft_fail "$p: no calls"
	rmmod ocq_demo || ksft_fail "$p: rmmod during the run failed"
	[ "$(demo_ocq_live)" = 0 ] || ksft_fail "$p: ordered CQs left: $(demo_ocq_live)"
	echo "# $p: unloaded during the run"
done
demo_load || ksft_fail "reloading failed"
demo_run calls=500 mix=null:1,echo:1,read:1,write:1 chunk_size=4096 ||
	ksft_fail "a run after the reload failed"
demo_check_clean || ksft_fail "the run after the reload is not clean"
