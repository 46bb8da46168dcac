#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Mutation testing of the model checker: apply each mutant of mutants.txt
# (a small, plausible change: a barrier dropped, a re-check removed, an
# off-by-one) to a copy of the engine, build the checker against the copy
# and run it; the mutant is killed when a case fails.  A mutant that
# declares "expect PROPERTY" (a seeded bug) is killed only by a failure of
# that property.  A mutant whose pattern is not in the engine is "stale":
# an error, never skipped.
#
#   mutants.sh [-n] [-q] [-j N] [-k NAME] [SPEC]
#	-n	only check that every spec applies (no build, no run)
#	-q	the quick subset (the mutants marked "quick")
#	-j N	mutants built and run at once (default 2)
#	-k NAME	only the mutants whose name contains NAME
#
# Prints one line per mutant, then "N killed, N survived, N equivalent" (and
# the stale specs and build errors).  A mutant that mutants.txt marks
# "equivalent" (argued in Documentation/model-checker.rst to change nothing
# that any property can see) is run too: it must survive, and is counted
# apart.  The exit status is non-zero if a spec is stale or broken, a
# mutant survived, or an equivalent one was killed (its argument is wrong).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
engine=${ENGINE:-$top/drivers/infiniband/core}
spec=$here/mutants.txt
quick=0 jobs=2 only= dry=0
budget=${BUDGET:-3000}
while getopts "nqj:k:" o; do
	case $o in
	n) dry=1 ;;
	q) quick=1 ;;
	j) jobs=$OPTARG ;;
	k) only=$OPTARG ;;
	*) echo "usage: mutants.sh [-n] [-q] [-j N] [-k NAME] [SPEC]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] && spec=$1

work=$(mktemp -d "${TMPDIR:-/tmp}/ocq-mutants.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT

# --- parse the spec: one directory per mutant with its edit list ---
# mutant NAME / quick / cases A B ... / expect PROPERTY /
# line TEXT / text TEXT / nth N / to TEXT
names=()
cur=
nedit=0
flush_edit() { :; }
while IFS= read -r l || [ -n "$l" ]; do
	case $l in
	''|'#'*) continue ;;
	esac
	key=${l%% *}
	val=${l#"$key"}
	val=${val# }
	case $key in
	mutant)
		cur=$val
		names+=("$cur")
		mkdir -p "$work/$cur/edits"
		: >"$work/$cur/cases"
		nedit=0 ;;
	quick) touch "$work/$cur/quick" ;;
	equivalent) touch "$work/$cur/equivalent" ;;
	cases) printf '%s\n' $val >"$work/$cur/cases" ;;
	expect) printf '%s' "$val" >"$work/$cur/expect" ;;
	line|text)
		nedit=$((nedit + 1))
		d=$work/$cur/edits/$nedit
		mkdir -p "$d"
		printf '%s' "$key" >"$d/kind"
		printf '%s' "$val" >"$d/find"
		echo 0 >"$d/nth" ;;
	nth) echo "$val" >"$work/$cur/edits/$nedit/nth" ;;
	to) printf '%s' "$val" >"$work/$cur/edits/$nedit/to" ;;
	*) echo "mutants.sh: $spec: bad line: $l" >&2; exit 2 ;;
	esac
done <"$spec"

# apply one edit to $1 in place; prints the number of lines changed
apply_edit() {
	local file=$1 d=$2
	FIND=$(cat "$d/find") TO=$(cat "$d/to" 2>/dev/null) KIND=$(cat "$d/kind") \
	NTH=$(cat "$d/nth") awk -f "$here/edit.awk" "$file" >"$file.new" 2>"$file.count" &&
		mv "$file.new" "$file"
	cat "$file.count"
	rm -f "$file.count"
}

# --- the checker's objects, once, for the unmutated engine ---
base=$work/base
mkdir -p "$base"
if [ "$dry" = 0 ] && ! make -s -C "$here" O="$base" ENGINE="$engine" "$base/ocq_sim" >"$work/base.log" 2>&1; then
	cat "$work/base.log"
	echo "mutants.sh: the checker does not build" >&2
	exit 2
fi

# run mutant $1: prints its result line into $work/$1/result
run_mutant() {
	local m=$1 d=$work/$1 c count out f expect= stop
	local src=$d/engine
	mkdir -p "$src" "$d/obj"
	cp -p "$engine/ocq_engine.c" "$engine/ocq_engine.h" "$src/"
	for e in "$d"/edits/*; do
		[ -d "$e" ] || continue
		count=$(apply_edit "$src/ocq_engine.c" "$e")
		if [ "$count" = 0 ]; then
			echo "$m: STALE: not found in ocq_engine.c: $(cat "$e/find")" >"$d/result"
			return
		fi
	done
	if cmp -s "$engine/ocq_engine.c" "$src/ocq_engine.c"; then
		echo "$m: STALE: the edits change nothing" >"$d/result"
		return
	fi
	if [ "$dry" = 1 ]; then
		echo "$m: applies" >"$d/result"
		return
	fi
	cp "$base"/*.o "$d/obj/"
	touch "$src/ocq_engine.c"
	if ! make -s -C "$here" O="$d/obj" ENGINE="$src" "$d/obj/ocq_sim" >"$d/build.log" 2>&1; then
		echo "$m: BUILD ERROR: $(grep -m1 error "$d/build.log")" >"$d/result"
		return
	fi
	[ -f "$d/expect" ] && expect=$(cat "$d/expect")
	# any failure kills a mutant without "expect": the first one ends its run
	stop=--first-fail
	[ -n "$expect" ] && stop=
	# the cases named first, then every case
	for c in $(cat "$d/cases") ''; do
		out=$("$d/obj/ocq_sim" --budget "$budget" $stop ${c:+--case "$c"} 2>&1)
		while IFS= read -r f; do
			# a failing case: "NAME  FAIL ..." then "    property: ..."
			if [ -z "$expect" ] || [ "${f#    "$expect":}" != "$f" ]; then
				echo "$m: killed by $f" >"$d/result"
				return
			fi
		done < <(printf '%s\n' "$out" | awk '
			/^[^ ].* FAIL / { name = $1; want = 1; next }
			want && /^    / { print "    " substr($0, 5) "\t" name; want = 0 }' |
			 sed 's/^\(    [^\t]*\)\t\(.*\)$/\1 [\2]/')
	done
	echo "$m: SURVIVED" >"$d/result"
}

sel=()
for m in "${names[@]}"; do
	[ "$quick" = 1 ] && [ ! -f "$work/$m/quick" ] && continue
	[ -n "$only" ] && [ "${m#*"$only"}" = "$m" ] && continue
	sel+=("$m")
done
running=0
for m in "${sel[@]}"; do
	run_mutant "$m" &
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
done
wait

killed=0 survived=0 bad=0 equivalent=0 wrong=0
for m in "${sel[@]}"; do
	r=$(cat "$work/$m/result" 2>/dev/null || echo "$m: no result")
	case $r in
	*": killed by "*)
		by=$(echo "${r#*: killed by }" | sed 's/^ *//')
		if [ -f "$work/$m/equivalent" ]; then
			wrong=$((wrong + 1))
			printf '%-28s ERROR    marked equivalent, but killed: %s\n' "$m" "$by"
		else
			killed=$((killed + 1))
			printf '%-28s killed   %s\n' "$m" "$by"
		fi ;;
	*": applies")
		printf '%-28s applies\n' "$m" ;;
	*": SURVIVED")
		if [ -f "$work/$m/equivalent" ]; then
			equivalent=$((equivalent + 1))
			printf '%-28s equivalent (argued in Documentation/model-checker.rst)\n' "$m"
		else
			survived=$((survived + 1))
			printf '%-28s SURVIVED\n' "$m"
		fi ;;
	*)
		bad=$((bad + 1))
		printf '%-28s ERROR    %s\n' "$m" "${r#*: }" ;;
	esac
done
[ "$bad" -gt 0 ] && echo "$bad mutant spec(s) stale or broken: fix mutants.txt"
[ "$wrong" -gt 0 ] && echo "$wrong mutant(s) marked equivalent were killed: the argument in Documentation/model-checker.rst is wrong"
echo "$killed killed, $survived survived, $equivalent equivalent"
[ "$survived" = 0 ] && [ "$bad" = 0 ] && [ "$wrong" = 0 ]
