#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 400
# ocq's CQ pool on rxe0 (selftests/modules/ocq_pool_main.c): 16 QPs (8 loopback
# pairs) on pooled CQs of 2 vectors: each QP's CQ on its vector, one CQ per vector;
# every QP's completions once and in order, done() in a workqueue worker; while one
# QP's done() sleeps 100 ms each, the pairs outside its flow domain finish their
# stream, never waiting longer than the head-of-line bound (IB_OCQ_HOL_DONES + 4 of
# its done() calls, + 1 s); the room put back is whole again.  The pool shares a CQ
# only between gets of the same attributes: two gets that ask for the same share one,
# and a get that differs in one field of struct ib_ocq_attr, each field in turn, gets
# another (test=attrs, first).  The pool's CQs outlive their users, and go with the
# device: "rdma link delete rxe0" frees them; rxe0 is then created again.
. /selftests/lib/ksft.sh
. /selftests/lib/rxe.sh

LIVE=/sys/kernel/debug/ib_ocq/live

rxe_present || ksft_fail "no rxe0"
if grep -q '^ib_ocq ' /proc/modules; then
	rmmod ib_ocq || ksft_fail "ib_ocq is loaded and in use: no fresh pool"
fi
insmod /ko/ib_ocq.ko || ksft_fail "insmod ib_ocq.ko"
rc=0
insmod_test ocq_pool_test.ko test=attrs || rc=$KSFT_FAIL
insmod_test ocq_pool_test.ko test=pool || rc=$KSFT_FAIL
live=$(cat $LIVE)
echo "ordered CQs after the test: $live (the pool's)"
[ "$live" -ge 1 ] || { echo "FAIL: the pool kept no CQ"; rc=$KSFT_FAIL; }
rxe_delete || { echo "FAIL: rdma link delete rxe0"; rc=$KSFT_FAIL; }
live=$(cat $LIVE)
echo "ordered CQs after rdma link delete: $live"
[ "$live" = 0 ] || { echo "FAIL: the device went, $live pooled CQs stayed"; rc=$KSFT_FAIL; }
rxe_create || { echo "FAIL: rxe0 not created again"; rc=$KSFT_FAIL; }
rmmod ib_ocq || { echo "FAIL: rmmod ib_ocq"; rc=$KSFT_FAIL; }
exit $rc
