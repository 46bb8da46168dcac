#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 90
# Deleting rxe0 while an ib_client is loaded runs its .remove with the client data
# its .add set; the module then unloads cleanly. rxe0 is re-created for later tests.
. /selftests/lib/ksft.sh
. /selftests/lib/rxe.sh

param() { cat "/sys/module/ocq_smoke/parameters/$1" 2>/dev/null; }

cleanup() {
	grep -q '^ocq_smoke ' /proc/modules && rmmod ocq_smoke
	rxe_create >/dev/null 2>&1
}
trap cleanup EXIT

rxe_present || ksft_fail "rxe0 not present before the test"
mark=$(ksft_mark)
insmod /ko/ocq_smoke.ko test=link_delete || ksft_fail "insmod failed"
ksft_kmsg_since "$mark" ocq_smoke
[ "$(param added)" = 1 ] || ksft_fail ".add count is '$(param added)', want 1"

rxe_delete || ksft_fail "rdma link delete rxe0 failed"
rxe_present && ksft_fail "rxe0 still present after delete"
[ "$(param removed)" = 1 ] || ksft_fail ".remove count is '$(param removed)', want 1"
ksft_kmsg_since "$mark" ocq_smoke | grep -q '^# remove rxe0 ok' ||
	ksft_fail ".remove did not report rxe0"

rmmod ocq_smoke || ksft_fail "rmmod after the device went away failed"
rxe_create || ksft_fail "cannot re-create rxe0"
echo "rxe0 re-created"
