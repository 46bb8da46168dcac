#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 400
# Ordered CQs from ib_ocq_alloc_cq(), poll context
# IB_POLL_UNBOUND_WORKQUEUE: done() in a worker of an unbound workqueue.
# Fake provider (fake_weak): 10^5 completions per mode, strict, flow and parallel,
# pushed by a producer per CPU. rxe0, loopback RC pairs: strict (one pair, 5*10^4
# SENDs: 10^5 completions), flow and parallel (four pairs, 2*10^4 SENDs). Every
# completion once, in order per domain, no overlapping done() where the mode forbids
# it, done() always in the promised context, the OCQ's count equal to what done() saw.
. /selftests/ocq/rxe_lib.sh

ocq_ctx_tests unbound
