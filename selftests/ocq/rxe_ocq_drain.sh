#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 180
# ib_drain_qp() on every QP mid-stream, with the strict, flow and parallel ordered
# CQs: the drain returns, and everything posted completes exactly once (success or
# flush), in posting order.
. /selftests/ocq/rxe_lib.sh

rxe_ocq_tests drain
