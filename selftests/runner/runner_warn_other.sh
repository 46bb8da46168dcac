#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 30
# expect-warn: runner_warn_init
# Provokes the WARN it declares, and leaves another warning line in the kernel log:
# make check-runner checks that the runner fails it on the other line.
. /selftests/lib/ksft.sh

ksft_without_panic_on_warn insmod /ko/runner_warn.ko warn=1 ||
	ksft_fail "insmod runner_warn.ko warn=1"
rmmod runner_warn || ksft_fail "rmmod runner_warn"
echo "<4>WARNING: CPU: 0 PID: $$ at runner_warn_other.sh: another warning on purpose" > /dev/kmsg
sleep 2
