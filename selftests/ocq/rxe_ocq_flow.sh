#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 300
# Four RC QP pairs sharing one ordered CQ: IB_OCQ_FLOW (each QP's completions in
# order, its done() never overlapping; the CPUs the flows ran on are reported), then
# IB_OCQ_PARALLEL (process() concurrent, done() committing in order, never overlapping).
. /selftests/ocq/rxe_lib.sh

rxe_ocq_tests flow parallel
