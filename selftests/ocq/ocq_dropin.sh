#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 600
# The drop-in: one test ULP written against ib_core's CQ API (ib_alloc_cq,
# ib_alloc_cq_any, ib_cq_pool_get/put, ib_free_cq, ib_process_cq_direct,
# ib_drain_qp; done() reads cq->cq_context; done() in the promised context), six
# loopback pairs on rxe0: workqueue, unbound, softirq and direct CQs of their own,
# two QPs on one pooled CQ.  Built as it is, it must pass its checks on ib_core's
# CQs; built with <rdma/ib_ocq_dropin.h> included first (one line), the same checks
# on ocq's, whose statistics must show it did the work.  The pooled CQ stays until
# ib_ocq is unloaded, which must then free it.
. /selftests/lib/ksft.sh

[ -e /sys/class/infiniband/rxe0 ] || ksft_fail "no rxe0"
insmod_test ocq_dropin_upstream.ko || ksft_fail "the ULP failed on ib_core's CQs"
# a fresh ib_ocq (earlier tests may have left it loaded): its pool starts empty,
# and unloading it at the end frees the pooled CQ this test leaves
if grep -q '^ib_ocq ' /proc/modules; then
	rmmod ib_ocq || ksft_fail "ib_ocq is loaded and in use: no fresh pool"
fi
insmod /ko/ib_ocq.ko || ksft_fail "insmod ib_ocq.ko"
rc=0
insmod_test ocq_dropin_ocq.ko || rc=$KSFT_FAIL
live=$(cat /sys/kernel/debug/ib_ocq/live)
echo "ordered CQs left: $live (the pool's)"
[ "$live" = 1 ] || { echo "FAIL: expected the one pooled CQ, found $live"; rc=$KSFT_FAIL; }
# a person finds it by the name rdma res show cq gives it (cq->poll_ctx itself is
# checked in the module: Debian 12's rdma tool labels the values by the enum order
# of Linux 4.x, so its "poll-ctx" is printed here, not judged)
info=$(cat /sys/kernel/debug/ib_ocq/ocq*-rxe0-cq*/info 2>/dev/null)
echo "$info" | sed 's/^/info: /'
for want in "device rxe0" "owner ib_ocq" "poll_ctx workqueue" "mode flow" "pooled 1"; do
	echo "$info" | grep -qx "$want" || { echo "FAIL: info lacks '$want'"; rc=$KSFT_FAIL; }
done
id=$(echo "$info" | sed -n 's/^cq_id //p')
res=$(rdma res show cq dev rxe0 2>&1 | grep -w "cqn $id")
echo "rdma res: $res"
echo "$res" | grep -q 'comm \[ib_ocq\]' ||
	{ echo "FAIL: rdma res show cq does not list CQ $id as ib_ocq's"; rc=$KSFT_FAIL; }
rmmod ib_ocq || { echo "FAIL: rmmod ib_ocq"; rc=$KSFT_FAIL; }
exit $rc
