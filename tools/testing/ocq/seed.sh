#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# seed.sh - write the seeded bugs of seeds.txt into a copy of the engine.
#
# Usage: seed.sh IN OUT    (IN: an ocq_engine.c; OUT: the seeded copy)
#
# Each seed's edits go in behind ocq_seeded_bug(NAME), which the checkers define
# as a run-time switch.  Every edit must change exactly one line of IN; otherwise
# seed.sh names the seed and fails, and OUT is not written.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
in=$1 out=$2
tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp.new" "$tmp.count"' EXIT
cp "$in" "$tmp"

seed='' kind='' find='' nth=0
apply() {
	local count

	[ -n "$kind" ] || return 0
	FIND=$find TO=$1 KIND=$kind NTH=$nth awk -f "$here/edit.awk" "$tmp" \
		>"$tmp.new" 2>"$tmp.count"
	count=$(cat "$tmp.count")
	if [ "$count" != 1 ]; then
		echo "seed.sh: seed $seed: '$find' matched $count lines of $in, want 1" >&2
		exit 1
	fi
	mv "$tmp.new" "$tmp"
	kind='' nth=0
}
while IFS= read -r l; do
	case $l in ''|'#'*) continue ;; esac
	key=${l%% *} val=${l#* }
	case $key in
	seed) seed=$val ;;
	line|text) kind=$key find=$val ;;
	nth) nth=$val ;;
	to) apply "$val" ;;
	*) echo "seed.sh: $here/seeds.txt: bad line: $l" >&2; exit 1 ;;
	esac
done <"$here/seeds.txt"
mv "$tmp" "$out"
