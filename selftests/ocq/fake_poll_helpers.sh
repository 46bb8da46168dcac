#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 600
# skip-ok: needs two online CPUs
# ib_poll_cq_and_arm() and ib_poll_and_notify() driven by their own completion handler and
# work item on every fake provider model, 10^5 completions each: nothing lost, in order,
# -EAGAIN requeued, no call arms more than IB_POLL_ARM_TRIES times.
. /selftests/ocq/fake_lib.sh

fake_run fake_poll_helpers
