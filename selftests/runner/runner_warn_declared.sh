#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 30
# expect-warn: runner_warn_init
# Provokes one kernel WARN on purpose (runner_warn.ko warn=1, panic_on_warn off for
# the load) and declares it: make check-runner checks that the runner passes it.  The
# test checks itself that the WARN came, once.
. /selftests/lib/ksft.sh

mark=$(ksft_mark)
ksft_without_panic_on_warn insmod /ko/runner_warn.ko warn=1 ||
	ksft_fail "insmod runner_warn.ko warn=1"
rmmod runner_warn || ksft_fail "rmmod runner_warn"
n=$(ksft_kmsg_since "$mark" | grep -c 'WARNING:.*runner_warn_init')
[ "$n" = 1 ] || ksft_fail "expected one WARNING of runner_warn_init, saw $n"
echo "the declared WARN came once"
