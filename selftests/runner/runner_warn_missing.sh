#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 30
# expect-warn: runner_warn_init
# Declares a WARN that does not come (runner_warn.ko warn=0) and exits 0: make
# check-runner checks that the runner fails it for the missing WARNING.
. /selftests/lib/ksft.sh

ksft_without_panic_on_warn insmod /ko/runner_warn.ko warn=0 ||
	ksft_fail "insmod runner_warn.ko warn=0"
rmmod runner_warn || ksft_fail "rmmod runner_warn"
