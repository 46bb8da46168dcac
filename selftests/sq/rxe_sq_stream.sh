#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 240
# Send queue accounting: stream 10^5 SENDs at full SQ depth with the default policy,
# then 3*10^4 each with the marker and signal-all policies for comparison, in one load:
# no post fails for lack of space, no CQ overrun, every release hook runs once.
# Prints the signaled fraction and the send rate of each policy.
. /selftests/lib/ksft.sh

insmod_test ocq_sq_test.ko test=stream sends=100000 baseline_sends=30000 depth=64
