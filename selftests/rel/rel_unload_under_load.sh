#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 240
# rmmod of the library and of the demo while a run streams, several cycles on
# every ordered CQ path and one upstream path.  While ocq_demo uses it, ib_ocq
# must refuse to unload, and the refused attempt must leave the run unharmed:
# still running, answering calls, then stopped with clean counters.  rmmod
# of ocq_demo during a run stops the run first and frees everything (the
# live ordered CQs and ib_ocq's allocations back at their baseline); then
# ib_ocq unloads, loads again, and the next run works and is clean.
. /selftests/lib/ksft.sh
. /selftests/demo/lib.sh

MIX=mix=null:1,echo:1,read:1,write:1
CYCLES=3

cleanup() { demo_cmd stop 2>/dev/null; demo_unload; }
trap cleanup EXIT

demo_unload
grep -q '^ib_ocq ' /proc/modules && { rmmod ib_ocq || ksft_fail "ib_ocq is in use already"; }
for p in ocq-strict ocq-flow ocq-parallel upstream-wq; do
	c=1
	while [ $c -le $CYCLES ]; do
		demo_load || ksft_fail "$p/$c: loading the modules failed"
		live0=$(demo_ocq_live) && allocs0=$(demo_ocq_allocs) ||
			ksft_fail "no count of live ordered CQs or ib_ocq's allocations (debugfs)"

		# the library refuses to go while the demo is loaded, idle...
		rmmod ib_ocq 2>/dev/null && ksft_fail "$p/$c: ib_ocq unloaded under ocq_demo"
		# ...and while a run streams, which goes on unharmed
		demo_cmd start conns=3 duration_ms=600000 $MIX chunk_size=8192 path=$p ||
			ksft_fail "$p/$c: start refused: $(demo_get error)"
		demo_wait_calls 10 || ksft_fail "$p/$c: no calls ($(demo_get state))"
		rmmod ib_ocq 2>/dev/null && ksft_fail "$p/$c: ib_ocq unloaded during a run"
		grep -q '^ib_ocq ' /proc/modules || ksft_fail "$p/$c: ib_ocq is gone"
		n=$(demo_get calls)
		sleep 0.5
		[ "$(demo_get state)" = running ] ||
			ksft_fail "$p/$c: $(demo_get state) after the refused rmmod"
		[ "$(demo_get calls)" -gt "$n" ] ||
			ksft_fail "$p/$c: no progress after the refused rmmod"
		demo_cmd stop || ksft_fail "$p/$c: stop refused: $(demo_get error)"
		s=$(demo_get state)
		[ "$s" = stopped ] || ksft_fail "$p/$c: state $s after stop, want stopped"
		demo_check_clean || ksft_fail "$p/$c: the run is not clean"
		demo_check_accounting || ksft_fail "$p/$c: calls not accounted for"

		# the demo's rmmod stops its run and frees everything
		demo_cmd start conns=3 duration_ms=600000 $MIX chunk_size=8192 path=$p ||
			ksft_fail "$p/$c: start refused: $(demo_get error)"
		demo_wait_calls 10 || ksft_fail "$p/$c: no calls ($(demo_get state))"
		case $p in
		ocq-*) [ "$(demo_ocq_live)" -gt "$live0" ] ||
			ksft_fail "$p/$c: no live ordered CQ during the run" ;;
		esac
		rmmod ocq_demo || ksft_fail "$p/$c: rmmod ocq_demo during the run failed"
		[ "$(demo_ocq_live)" = "$live0" ] ||
			ksft_fail "$p/$c: live ordered CQs $live0 -> $(demo_ocq_live)"
		[ "$(demo_ocq_allocs)" = "$allocs0" ] ||
			ksft_fail "$p/$c: ib_ocq allocations $allocs0 -> $(demo_ocq_allocs)"
		rmmod ib_ocq || ksft_fail "$p/$c: rmmod ib_ocq after the demo failed"
		echo "# $p/$c: refused while in use, $n calls; demo and library unloaded"
		c=$((c + 1))
	done
done

# reloaded, a new run works and is clean
demo_load || ksft_fail "reloading failed"
demo_run calls=500 $MIX chunk_size=4096 path=ocq-flow || ksft_fail "the run after the reloads failed"
demo_check_clean || ksft_fail "the run after the reloads is not clean"
[ "$(demo_get issued)" = 500 ] || ksft_fail "issued=$(demo_get issued), want 500"
demo_unload || ksft_fail "rmmod ocq_demo"
rmmod ib_ocq || ksft_fail "rmmod ib_ocq"
