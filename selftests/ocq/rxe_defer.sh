#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 300
# The deferred re-arm on rxe0: RC QP pairs streaming SEND_WITH_IMM on one ordered CQ,
# strict (one pair) and flow (two pairs), each on an OCQ without and then with
# defer_usecs: every completion once, in posting order, the receives' data in sequence,
# the receives left flushed in order (nothing lost); with it, runs were deferred and
# the events per 1000 completions are at most half of those without.
. /selftests/ocq/rxe_lib.sh

rxe_module_test ocq_test_rxe_defer.ko
