#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 240
# "rdma link delete rxe0" under load, repeated: three cycles on each of
# ocq-flow, ocq-strict, ocq-parallel and upstream-wq.  Every cycle must end
# the run "aborted" (rdma_cm's DEVICE_REMOVAL), with no live ordered CQ left,
# ib_ocq's allocations back at their baseline, no reorder or duplicate and
# every call accounted for (answered, or failed in flight); the device must
# be gone.  Then rxe0 is created again and a new run works and is clean.
. /selftests/lib/ksft.sh
. /selftests/lib/rxe.sh
. /selftests/demo/lib.sh

MIX=mix=null:1,echo:1,read:1,write:1
CYCLES=3

cleanup() {
	demo_cmd stop 2>/dev/null
	demo_unload
	rxe_create >/dev/null 2>&1
}
trap cleanup EXIT

rxe_present || rxe_create || ksft_fail "no rxe0"
demo_load || ksft_fail "loading the modules failed"
live0=$(demo_ocq_live) && allocs0=$(demo_ocq_allocs) ||
	ksft_fail "no count of live ordered CQs or ib_ocq's allocations (debugfs)"
for p in ocq-flow ocq-strict ocq-parallel upstream-wq; do
	c=1
	while [ $c -le $CYCLES ]; do
		demo_cmd start conns=3 duration_ms=600000 $MIX chunk_size=8192 path=$p ||
			ksft_fail "$p/$c: start refused: $(demo_get error)"
		demo_wait_calls 10 || ksft_fail "$p/$c: no calls before the delete"
		rxe_delete || ksft_fail "$p/$c: rdma link delete failed"
		rxe_present && ksft_fail "$p/$c: rxe0 still present after the delete"
		s=$(demo_wait_end 30)
		[ "$s" = aborted ] || ksft_fail "$p/$c: state $s after the delete, want aborted"
		demo_check_accounting || ksft_fail "$p/$c: calls not accounted for"
		[ "$(demo_ocq_live)" = "$live0" ] ||
			ksft_fail "$p/$c: live ordered CQs $live0 -> $(demo_ocq_live)"
		[ "$(demo_ocq_allocs)" = "$allocs0" ] ||
			ksft_fail "$p/$c: ib_ocq allocations $allocs0 -> $(demo_ocq_allocs)"
		echo "# $p/$c: aborted after $(demo_get calls) calls, $(demo_get failed) failed"
		rxe_create || ksft_fail "$p/$c: cannot re-create rxe0"
		c=$((c + 1))
	done
done

demo_run calls=500 $MIX chunk_size=4096 path=ocq-flow ||
	ksft_fail "a run on the re-created device failed"
demo_check_clean || ksft_fail "the run on the re-created device is not clean"
[ "$(demo_get issued)" = 500 ] || ksft_fail "issued=$(demo_get issued), want 500"
demo_unload || ksft_fail "rmmod ocq_demo after the removals failed"
