#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fabric-faults.sh - make fabric-faults: TRIALS trials of each of the wire's faults
# (selftests/fabric/fabric_faults.sh), stock and converted, and their table.
#
# Usage: [TRIALS=5] [FAULTS=loss1,link,...] tools/testing/vm/fabric-faults.sh [METAPACKAGE]
#
# Runs make check's runner with TESTS=fabric_faults and FABRIC_TRIALS, FABRIC_FAULTS on
# the guests' command line (the test's timeout scaled by TRIALS), then counts the
# outcomes of its "fault-table" lines: per fault and variant, how many trials rode
# through, recovered, timed out or hung, and the median and the range of the time
# from the fault's end to the first write that succeeded after it.  Prints the table
# (also into build/check/<KVER>/fault-table.txt); the exit
# status is the runner's.
set -uo pipefail

TOP=$(cd "$(dirname "$0")/../../.." && pwd)
TRIALS=${TRIALS:-5}
FAULTS=${FAULTS:-}
out=$(mktemp)
trap 'rm -f "$out"' EXIT

TESTS=fabric_faults TIMEOUT_SCALE=$TRIALS \
	KAPPEND="${KAPPEND:+$KAPPEND }FABRIC_TRIALS=$TRIALS${FAULTS:+ FABRIC_FAULTS=$FAULTS}" \
	"$TOP"/tools/testing/vm/check.sh "$@" | tee "$out"
rc=${PIPESTATUS[0]}
logs=$(sed -n 's|^check: logs: \(.*\)/$|\1|p' "$out" | head -1)
log=$TOP/${logs:-/nonexistent}/tests/fabric_faults.log
[ -f "$log" ] || { echo "fabric-faults: no $log"; exit 1; }
sed -n 's/^# fault-table: //p' "$log" | grep -v '^fault ' | awk -v trials="$TRIALS" '
function median(s,   a, n, i, j, t) {
	n = split(s, a, " ")
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	if (!n) return "-"
	return n % 2 ? a[(n + 1) / 2] : sprintf("%.1f", (a[n / 2] + a[n / 2 + 1]) / 2)
}
{
	f = $1; v = $2
	line = $0; sub(/^[^ ]+ +[^ ]+ +[0-9]+ /, "", line)
	split(line, part, "|")
	o = part[1]; sub(/, [0-9]+ failed$/, ", some failed", o)
	if (!(f in seen)) { seen[f] = 1; order[++nf] = f }
	key = f SUBSEP v
	cnt[key SUBSEP o]++; outs[key] = outs[key] (index(outs[key], "[" o "]") ? "" : "[" o "]")
	if (part[2] != "-") { t[key] = t[key] " " part[2]; if (!(key in lo) || part[2] + 0 < lo[key]) lo[key] = part[2] + 0; if (part[2] + 0 > hi[key]) hi[key] = part[2] + 0 }
}
END {
	printf "%-9s %-48s %-48s\n", "fault", "stock", "converted (ocq)"
	for (i = 1; i <= nf; i++) {
		f = order[i]
		for (k = 1; k <= 2; k++) {
			v = k == 1 ? "stock" : "ocq"; key = f SUBSEP v; s = ""
			n = split(outs[key], os, "]")
			for (j = 1; j < n; j++) { o = substr(os[j], 2); s = s (s ? ", " : "") o " " cnt[key SUBSEP o] "/" trials }
			if (t[key] != "") s = s "; first write " median(t[key]) " s (" lo[key] "-" hi[key] ")"
			col[k] = s
		}
		printf "%-9s %-48s %-48s\n", f, col[1], col[2]
	}
}' | tee "$TOP/$logs/fault-table.txt"
exit "$rc"
