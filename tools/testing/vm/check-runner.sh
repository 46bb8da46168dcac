#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-runner.sh - test the test runner with the tests of selftests/runner/, each of
# which ends in one way on purpose. The runner must report each as the verdict below,
# for the reason below, and end with the right count and a non-zero exit status:
#
#   runner_must_fail      exits 1                        FAIL, "exit code 1"
#   runner_must_hang      stops the guest's processes    FAIL, "hung" (the host's timeout)
#   runner_must_panic     panics the guest               FAIL, the panic line
#   runner_must_splat     exits 0, a WARNING in the log  FAIL, the WARNING line
#   runner_must_splat_b   two nodes: exits 0 on node A,  FAIL, node B's WARNING line
#                         a WARNING in node B's log
#   runner_must_time_out  sleeps past its timeout        FAIL, "timeout after 5s (guest)"
#   runner_skip_declared  skips for its skip-ok reason   skip, the reason
#   runner_skip_undeclared skips for another reason      FAIL, "undeclared skip"
#   runner_then_pass      exits 0, after two dead boots  ok
#   runner_warn_declared  a real WARN it declares        ok
#   runner_warn_missing   declares a WARN, none comes    FAIL, the WARN "came 0 times"
#   runner_warn_other     its WARN and another warning   FAIL, the other warning
#   runner_warn_undeclared a real WARN, undeclared       FAIL, the WARNING line
#
# Usage: tools/testing/vm/check-runner.sh [METAPACKAGE]
set -uo pipefail

TOP=$(cd "$(dirname "$0")/../../.." && pwd)
want="2 passed, 10 failed, 1 skipped"
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# a short host-side margin: the hung test is given up 10 s after its timeout
TESTS=runner_ TEST_MARGIN=10 "$TOP"/tools/testing/vm/check.sh "$@" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
last=$(tail -n 1 "$out")
bad=()
verdict() {	# NAME VERDICT REASON-PATTERN
	local line

	line=$(grep -E "^(ok|FAIL|skip) +$1( |\$)" "$out" | tail -n 1)
	case $line in
	"$2 "*) echo "$line" | grep -Eq -- "$3" && return ;;
	esac
	bad+=("$1: '${line:-no verdict}', want $2 for /$3/")
}
verdict runner_must_fail FAIL 'exit code 1'
verdict runner_must_hang FAIL 'hung'
verdict runner_must_panic FAIL 'kernel: .*Kernel panic'
verdict runner_must_splat FAIL 'kernel: .*WARNING: .* on purpose'
verdict runner_must_splat_b FAIL 'kernel: \[B\] .*WARNING: .* on node B on purpose'
verdict runner_must_time_out FAIL 'timeout after 5s \(guest\)'
verdict runner_skip_declared skip 'a declared skip on purpose'
verdict runner_skip_undeclared FAIL 'undeclared skip.*: an undeclared skip on purpose'
verdict runner_then_pass ok ''
verdict runner_warn_declared ok ''
verdict runner_warn_missing FAIL 'expect-warn /runner_warn_init/ came 0 times'
verdict runner_warn_other FAIL 'kernel: .*WARNING: .*another warning on purpose'
verdict runner_warn_undeclared FAIL 'kernel: .*WARNING: .*runner_warn_init'
[ "$last" = "$want" ] || bad+=("last line '$last', want '$want'")
[ "$rc" -ne 0 ] || bad+=("exit status 0, want non-zero")
if [ ${#bad[@]} -eq 0 ]; then
	echo "check-runner: PASS (each test got its verdict and reason; '$want', exit status $rc)"
	exit 0
fi
printf 'check-runner: FAIL: %s\n' "${bad[@]}"
exit 1
