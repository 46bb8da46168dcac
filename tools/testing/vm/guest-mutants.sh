#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# guest-mutants.sh - show that guest tests catch what they cover: for each mutant of
# guest-mutants.txt, copy the tree, apply the edit, and run `make check` with the
# mutant's tests in the copy; the mutant is killed if one of them fails (a build or
# boot error kills nothing).
#
# Usage: tools/testing/vm/guest-mutants.sh [-n] [NAME...]    (default: every mutant)
#        KERNEL= and SMP= pass through to make check.
#        -n: only check that each mutant's edit still finds its line (no copy, no
#        build, no guest; a second or two, in make host-tests and so in CI).
# Exit status: 0 if every mutant run was killed (-n: every edit applies), 1
# otherwise, 2 for a stale mutant or a bad list.  About 3 minutes per mutant under
# TCG; the runs are not part of CI (make check's own tests are).
set -euo pipefail

TOP=$(cd "$(dirname "$0")/../../.." && pwd)
LIST=$TOP/tools/testing/vm/guest-mutants.txt
WORK=$TOP/build/guest-mutants

log() { echo "guest-mutants: $*"; }
die() { echo "guest-mutants: error: $*" >&2; exit 2; }

declare -A TESTS FILE LINE TO
order=()
name=
while IFS= read -r l; do
	case $l in
	'#'* | '') continue ;;
	'mutant '*) name=${l#mutant }; order+=("$name") ;;
	'tests '*) TESTS[$name]=${l#tests } ;;
	'file '*) FILE[$name]=${l#file } ;;
	'line '*) LINE[$name]=${l#line } ;;
	to) TO[$name]= ;;
	'to '*) TO[$name]=${l#to } ;;
	*) die "$LIST: cannot read '$l'" ;;
	esac
done < "$LIST"
check_only=
if [ "${1:-}" = -n ]; then
	check_only=1
	shift
fi
[ $# -gt 0 ] && order=("$@")

# Replace the line whose trimmed text is $3 in file $1 by $4 (indent kept); fail if
# no line matches.
apply() {
	python3 - "$@" <<'PY'
import sys
path, want, to = sys.argv[1], sys.argv[2], sys.argv[3]
lines = open(path).read().split('\n')
hits = [i for i, l in enumerate(lines) if l.strip() == want]
if not hits:
    sys.exit("no line '%s' in %s" % (want, path))
for i in hits:
    indent = lines[i][:len(lines[i]) - len(lines[i].lstrip())]
    lines[i] = indent + to if to else ''
open(path, 'w').write('\n'.join(lines))
PY
}

if [ -n "$check_only" ]; then
	stale=0
	for m in "${order[@]}"; do
		[ -n "${FILE[$m]:-}" ] || die "unknown mutant '$m'"
		t=$(mktemp)
		cp "$TOP/${FILE[$m]}" "$t"
		if apply "$t" "${LINE[$m]}" "${TO[$m]}" 2>/dev/null; then
			log "$m: applies"
		else
			log "$m: STALE: no line '${LINE[$m]}' in ${FILE[$m]}"
			stale=$((stale + 1))
		fi
		rm -f "$t"
	done
	log "${#order[@]} mutant(s), $stale stale"
	[ "$stale" = 0 ] || exit 2
	exit 0
fi

survived=0
for m in "${order[@]}"; do
	[ -n "${FILE[$m]:-}" ] || die "unknown mutant '$m'"
	d=$WORK/$m
	rm -rf "$d"
	mkdir -p "$d"
	git -C "$TOP" ls-files -z | (cd "$TOP" && xargs -0 cp --parents -t "$d")
	# the kernels are shared, the builds are the copy's own
	[ -d "$TOP/.cache" ] && ln -s "$TOP/.cache" "$d/.cache"
	apply "$d/${FILE[$m]}" "${LINE[$m]}" "${TO[$m]}" || die "mutant $m is stale"
	log "$m: make check TESTS=\"${TESTS[$m]}\""
	make -C "$d" --no-print-directory check SIM=0 TESTS="${TESTS[$m]}" \
		> "$d/check.log" 2>&1 || true
	# killed by a failure of one of its tests, not by a build or boot error
	failed=$(sed -n 's/^FAIL  \([^ ]*\).*/\1/p' "$d/check.log" | tr '\n' ' ')
	if [ -n "$failed" ]; then
		log "$m: killed by $failed"
	elif grep -q '^check: error:' "$d/check.log"; then
		log "$m: ERROR: $(grep -m1 '^check: error:' "$d/check.log") ($d/check.log)"
		survived=$((survived + 1))
	else
		log "$m: SURVIVED (no test of it failed; $d/check.log)"
		survived=$((survived + 1))
	fi
done
log "${#order[@]} mutant(s), $survived survived"
[ $survived = 0 ]
