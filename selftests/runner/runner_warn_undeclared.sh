#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 30
# Provokes one kernel WARN on purpose, as runner_warn_declared does, but declares
# none: make check-runner checks that the runner fails it on the WARNING line.
. /selftests/lib/ksft.sh

ksft_without_panic_on_warn insmod /ko/runner_warn.ko warn=1 ||
	ksft_fail "insmod runner_warn.ko warn=1"
rmmod runner_warn || ksft_fail "rmmod runner_warn"
