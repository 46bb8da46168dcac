#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 240
# Send queue accounting: stream 10^5 SENDs at full SQ depth with the default policy,
# then 3*10^4 each with the marker and signal-all policies for comparison, in one load:
# no post fails for lack of space, no CQ overrun, every release hook runs once.
# Prints the signaled fraction and the send rate of each policy.
#
# A phase counts as stuck after 120 s; a debug kernel (make check DEBUG_KERNEL=, whose
# release is <version>-debug-<flavour>, with lockdep or KCSAN) streams several times
# slower, so there a phase gets 4 times as long, as the runner's TIMEOUT_SCALE gives
# the test.
. /selftests/lib/ksft.sh

# ocq_sq_test links against the accounting's exports in ib_ocq.ko
grep -q '^ib_ocq ' /proc/modules || insmod /ko/ib_ocq.ko || ksft_fail "insmod ib_ocq.ko"

phase_timeout_s=120
if ksft_debug_kernel; then
	phase_timeout_s=480
	echo "debug kernel $(uname -r): phase timeout ${phase_timeout_s}s"
fi

insmod_test ocq_sq_test.ko test=stream sends=100000 baseline_sends=30000 depth=64 \
	phase_timeout_s=$phase_timeout_s
