#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# run-check.sh NAME BINARY ARGS...: run a sanitizer build of the harness,
# its log in build/NAME.log.  Fails on a non-zero exit and on any sanitizer
# report in the log, even one that did not change the exit status; the last
# line is always "N passed, N failed" (a run the sanitizer ended counts the
# scenario it was in as failed).
name=$1
shift
log=build/$name.log
mkdir -p build
"$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
pass=$(grep -c '^ok ' "$log")
fail=$(grep -c '^not ok ' "$log")
reports=$(grep -cE '^(WARNING: ThreadSanitizer|==[0-9]+==ERROR: |SUMMARY: (ThreadSanitizer|AddressSanitizer|UndefinedBehaviorSanitizer|LeakSanitizer))|runtime error:' "$log")
if ! grep -qE '^[0-9]+ passed, [0-9]+ failed$' "$log"; then
	# ended before its summary: the scenario under way failed
	fail=$((fail + 1))
	echo "$name: the run ended early (exit $rc); see $log"
elif [ "$rc" -eq 0 ] && [ "$reports" -gt 0 ]; then
	fail=$((fail + 1))
	echo "$name: sanitizer reports in $log"
fi
[ "$reports" -gt 0 ] && echo "$name: $reports sanitizer report line(s) in $log"
echo "$name: log in $log"
echo "$pass passed, $fail failed"
[ "$rc" -eq 0 ] && [ "$fail" -eq 0 ]
