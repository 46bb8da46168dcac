#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 300
# ib_drain_qp() on every QP of an ordered CQ paused mid-stream, and of one whose arm is
# postponed, strict, flow and parallel, pause_ms 200: every drain returns within the
# lease, after every earlier completion of its QP was dispatched, in order.
. /selftests/ocq/rxe_lib.sh

rxe_ocq_tests drain_paused
