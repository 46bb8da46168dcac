#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 300
# ib_poll_cq_and_arm() and ib_poll_and_notify() on a plain CQ of rxe0, polled by a
# completion handler and a work item of the test's own (no ordered CQ): everything
# completes once, in order, -EAGAIN is requeued, no IB_PN_REPOLL with nothing.
. /selftests/ocq/rxe_lib.sh

rxe_ocq_tests poll_helpers
