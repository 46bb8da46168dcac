#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 200
# "rdma link delete" of the device during a run: rdma_cm's DEVICE_REMOVAL ends
# the run "aborted" with everything freed; the module unloads, and once the
# device is back a new run works.
. /selftests/lib/ksft.sh
. /selftests/lib/rxe.sh
. /selftests/demo/lib.sh

cleanup() {
	demo_cmd stop 2>/dev/null
	demo_unload
	rxe_create >/dev/null 2>&1
}
trap cleanup EXIT

# Start a run on path $1 and see it running 2 s later.  rxe (6.1) now and then
# fails a REG_MR of a chunk whose remote invalidation it had reported ("mr->lkey
# ... not free" in the kernel log, a "local QP operation error" completion), and
# the run aborts on its own before the delete this test is about: that run is
# logged and a second one started; a second abort fails the test.
start_running() {
	local try

	for try in 1 2; do
		demo_cmd start conns=4 duration_ms=600000 \
			mix=null:1,echo:1,read:1,write:1 chunk_size=16384 path="$1" ||
			ksft_fail "start refused: $(demo_get error)"
		sleep 2
		[ "$(demo_get state)" = running ] && return 0
		echo "# $1: run $try ended before the delete: $(demo_get state)," \
			"$(demo_get errors) errors"
		demo_cmd stop 2>/dev/null
	done
	return 1
}

for p in ocq-flow upstream-wq ocq-parallel; do
	rxe_present || rxe_create || ksft_fail "no rxe0"
	demo_load || ksft_fail "loading the modules failed"
	start_running $p || ksft_fail "$p: not running before the delete"
	[ "$(demo_get calls)" -gt 0 ] || ksft_fail "$p: no calls before the delete"
	rxe_delete || ksft_fail "$p: rdma link delete failed"
	s=$(demo_wait_end 30)
	[ "$s" = aborted ] || ksft_fail "$p: state $s after the delete, want aborted"
	echo "# $p: aborted after $(demo_get calls) calls"
	[ "$(demo_ocq_live)" = 0 ] || ksft_fail "$p: ordered CQs left: $(demo_ocq_live)"
	demo_unload || ksft_fail "$p: rmmod after the delete failed"
	rxe_create || ksft_fail "cannot re-create rxe0"
done

demo_load || ksft_fail "reloading failed"
demo_run calls=500 mix=null:1,echo:1,read:1,write:1 chunk_size=4096 ||
	ksft_fail "a run on the re-created device failed"
demo_check_clean || ksft_fail "the run on the re-created device is not clean"
