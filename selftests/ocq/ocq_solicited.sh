#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 600
# skip-ok: needs two online CPUs
# Solicited-only arms on the fake provider: ib_poll_cq_and_arm_solicited() and
# ib_poll_and_notify() with IB_ARM_SOLICITED on every provider model (a narrow
# REPORT_MISSED too), and ordered CQs with IB_ARM_SOLICITED in each mode, 10^5
# completions each in messages whose last completion is solicited: nothing lost, in
# order, every arm solicited-only, the CQ ends armed.  Then, idle and armed (but on the
# spurious model, whose callbacks poll at any time): a completion not solicited leaves
# the CQ armed, raises no handler call and is not delivered within 20 ms, until a
# solicited one brings both; a solicited completion that lands between the last poll
# and the arm is delivered.  Bad policies are -EINVAL, without a warning.
. /selftests/ocq/fake_lib.sh

fake_run ocq_solicited
