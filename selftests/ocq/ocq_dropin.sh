#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 600
# The drop-in: one test ULP written against ib_core's CQ API (ib_alloc_cq,
# ib_alloc_cq_any, ib_cq_pool_get/put, ib_free_cq, ib_drain_qp; done() reads
# cq->cq_context), four loopback pairs on rxe0.  Built as it is, it must pass its
# checks on ib_core's CQs; built with <rdma/ib_ocq_dropin.h> included first (one
# line), the same checks on ocq's, whose statistics must show it did the work.
# The pooled CQ stays until ib_ocq is unloaded, which must then free it.
. /selftests/lib/ksft.sh

[ -e /sys/class/infiniband/rxe0 ] || ksft_fail "no rxe0"
insmod_test ocq_dropin_upstream.ko || ksft_fail "the ULP failed on ib_core's CQs"
insmod /ko/ib_ocq.ko || ksft_fail "insmod ib_ocq.ko"
rc=0
insmod_test ocq_dropin_ocq.ko || rc=$KSFT_FAIL
live=$(cat /sys/kernel/debug/ib_ocq/live)
echo "ordered CQs left: $live (the pool's)"
[ "$live" = 1 ] || { echo "FAIL: expected the one pooled CQ, found $live"; rc=$KSFT_FAIL; }
rmmod ib_ocq || { echo "FAIL: rmmod ib_ocq"; rc=$KSFT_FAIL; }
exit $rc
