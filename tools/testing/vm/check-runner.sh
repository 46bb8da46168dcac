#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-runner.sh - test the test runner: a test that fails on purpose
# (selftests/runner/runner_must_fail.sh) must be reported as exactly one failure,
# with a non-zero exit status.
#
# Usage: tools/testing/vm/check-runner.sh [METAPACKAGE]
set -uo pipefail

TOP=$(cd "$(dirname "$0")/../../.." && pwd)
want="0 passed, 1 failed, 0 skipped"
out=$(mktemp)
trap 'rm -f "$out"' EXIT

TESTS=runner_must_fail "$TOP"/tools/testing/vm/check.sh "$@" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
last=$(tail -n 1 "$out")
# The failure must be the test's own, not a set-up error that also ends the same way.
if [ "$last" = "$want" ] && [ "$rc" -ne 0 ] && grep -q '^FAIL  runner_must_fail' "$out"; then
	echo "check-runner: PASS (a failing test is reported as '$want', exit status $rc)"
	exit 0
fi
echo "check-runner: FAIL (last line '$last', want '$want' from runner_must_fail; exit status $rc, want non-zero)"
exit 1
