#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 300
# The deferred re-arm (ib_ocq_attr.defer_usecs), strict and flow: a stream faster than the
# timer raises far fewer events than without it, every completion once and in order, runs
# deferred; idle, the timer stops within defer_polls + 1 runs and the CQ ends armed, so a
# completion after idle comes through one event; bad attributes are refused with -EINVAL;
# OCQs freed right after a burst, with the arm deferred, go cleanly.  Software DIM
# (IB_OCQ_DEFER_DIM): single completions are never deferred and come through an event each,
# bursts are deferred with far fewer events than completions.
. /selftests/ocq/fake_lib.sh

fake_run fake_defer
