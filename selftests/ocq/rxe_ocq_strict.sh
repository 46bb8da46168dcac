#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 180
# One RC QP pair on rxe0, sends and receives on one IB_OCQ_STRICT ordered CQ:
# 2*10^4 SEND_WITH_IMM, 32 in flight; every receive carries the next sequence
# number, every completion comes once, in posting order, and done() never overlaps.
. /selftests/ocq/rxe_lib.sh

rxe_ocq_tests strict
