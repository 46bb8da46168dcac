#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 300
# Busy polls on rxe0: RC QP pairs streaming SEND_WITH_IMM on one ordered CQ, strict (one
# pair) and flow (two pairs), each on an OCQ without and then with suspend_usecs and a
# kthread that calls ib_ocq_busy_poll() for as long as the stream runs: every completion
# once, in posting order, the receives' data in sequence, the receives left flushed in
# order (nothing lost); with it, the busy polls took most completions and suspended the
# CQ, and the events per 1000 completions are at most a tenth of those without (an empty
# busy poll keeps the suspension).
. /selftests/ocq/rxe_lib.sh

rxe_module_test ocq_test_rxe_defer.ko test=busy
