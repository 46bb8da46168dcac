#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 180
# Flow rings and the reorder ring smaller than the completions outstanding, done() slow:
# the CQ run stalls (stats stalls > 0) and still delivers exactly once, in order.
. /selftests/ocq/fake_lib.sh

fake_run fake_small_ring
