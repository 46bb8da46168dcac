#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 30
# skip-ok: a declared skip on purpose
# Skips for a reason its header does not declare (as a test that finds no device
# would): make check-runner checks that the runner fails it, with the reason.
. /selftests/lib/ksft.sh

ksft_skip "an undeclared skip on purpose"
