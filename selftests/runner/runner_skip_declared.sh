#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 30
# skip-ok: a declared skip on purpose
# Skips for the reason its header declares: make check-runner checks that the runner
# reports it as skipped.
. /selftests/lib/ksft.sh

ksft_skip "a declared skip on purpose"
