#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# guest-mutants.sh - show that guest tests catch what they cover: for each mutant of
# guest-mutants.txt, copy the tree, apply the edit, and run `make check` with the
# mutant's tests in the copy.
#
# A mutant is killed only by a verdict of one of its named tests on the mutant's
# behaviour: the test failed by itself (its exit code, a "not ok" of its module), or
# the kernel logged a splat while it ran.  With "expect TEXT", the test's own FAIL
# or "not ok" lines must also hold TEXT (a test of several subtests: the subtest
# that covers the edit must be the one that failed).  It is an ERROR, not a kill, when
# the build or every boot failed, or a named test was not run or gave no verdict
# (hung, timed out, the guest died without a kernel report); a failure of a test the
# mutant does not name counts for nothing.
#
# Usage: tools/testing/vm/guest-mutants.sh [-n] [NAME...]    (default: every mutant)
#        KERNEL= and SMP= pass through to make check.
#        -n: only check that each mutant's edit still finds its line, and run the
#        verdict's self-test on made-up logs (no copy, no build, no guest; a second
#        or two, in make host-tests and so in CI).
# Exit status: 0 if every mutant run was killed (-n: every edit applies and the
# self-test passes), 1 if one survived or ended in an ERROR, 2 for a stale mutant,
# a bad list or a failed self-test.  About 3 minutes per mutant under TCG; the runs
# are not part of CI (make check's own tests are).
set -euo pipefail

TOP=$(cd "$(dirname "$0")/../../.." && pwd)
LIST=$TOP/tools/testing/vm/guest-mutants.txt
WORK=$TOP/build/guest-mutants

log() { echo "guest-mutants: $*"; }
die() { echo "guest-mutants: error: $*" >&2; exit 2; }

declare -A TESTS FILE LINE TO EXPECT
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
	'expect '*) EXPECT[$name]=${l#expect } ;;
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

# Whether test NAME is one of PATTERNS, selected as make check's TESTS= selects: a
# pattern with * ? [ is a glob on the whole name, any other a substring.
named() {	# NAME PATTERNS
	local p

	for p in $2; do
		case $p in
		*[\*\?\[]*) case $1 in $p) return 0 ;; esac ;;
		*) case $1 in *"$p"*) return 0 ;; esac ;;
		esac
	done
	return 1
}

# The verdict on one mutant run, from the make check output CHECKLOG (the per-test
# logs are in build/check/*/tests/ beside it): prints "KILLED detail", "ERROR
# detail" or "SURVIVED detail".
judge() {	# CHECKLOG TESTS [EXPECT]
	local clog=$1 tests=$2 expect=${3:-} line n reason tlog own kills="" errs="" other=""

	if grep -q '^check: error:' "$clog"; then
		echo "ERROR $(grep -m1 '^check: error:' "$clog")"
		return
	fi
	if grep -q '^check: no boot reached /init' "$clog"; then
		echo "ERROR no boot reached /init"
		return
	fi
	while IFS= read -r line; do
		n=$(sed -E 's/^FAIL  ([^ ]+).*/\1/' <<< "$line")
		reason=$(sed -nE 's/^FAIL  [^ ]+( \([0-9.]+s\))? - //p' <<< "$line")
		if ! named "$n" "$tests"; then
			other+=" $n"
			continue
		fi
		case $reason in
		"not run" | hung* | "guest died"* | "timeout after "*" (guest)"* | "run timeout"*)
			errs+=" $n ($reason)"
			continue ;;
		esac
		if [ -n "$expect" ]; then
			# the test's own lines (not the kernel's) that say FAIL or not ok
			own=""
			for tlog in "$(dirname "$clog")"/build/check/*/tests/"$n".log; do
				[ -f "$tlog" ] || continue
				own+=$(grep -vE '^(# kmsg: |\[)' "$tlog" | grep -E 'FAIL|not ok' || true)
			done
			if ! grep -qF -- "$expect" <<< "$own"; then
				other+=" $n(not for '$expect': $reason)"
				continue
			fi
		fi
		kills+=" $n ($reason)"
	done < <(grep -E '^FAIL  ' "$clog" || true)
	# a named test with no verdict line at all was not run either
	for n in $tests; do
		case $n in *[\*\?\[]*) continue ;; esac
		grep -qE "^(ok|FAIL|skip) +[^ ]*$n" "$clog" || errs+=" $n (no verdict)"
	done
	if [ -n "$kills" ]; then
		echo "KILLED by$kills"
	elif [ -n "$errs" ]; then
		echo "ERROR no verdict of$errs${other:+; other failures:$other}"
	else
		echo "SURVIVED${other:+ (other failures, which do not count:$other)}"
	fi
}

# judge() on made-up logs: each case a make check output, a test log, and the
# verdict it must get.
selftest() {
	local t bad=0 k=0 got

	t=$(mktemp -d)
	# shellcheck disable=SC2064 # expand now
	trap "rm -rf '$t'" RETURN
	mkdir -p "$t/build/check/6.1.0-test/tests"
	one() {	# WANT TESTS EXPECT CHECKLOG-TEXT [TESTLOG-TEXT]
		printf '%b\n' "$4" > "$t/check.log"
		rm -f "$t"/build/check/*/tests/*.log
		[ -n "${5:-}" ] && printf '%b\n' "$5" > "$t/build/check/6.1.0-test/tests/$2.log"
		got=$(judge "$t/check.log" "$2" "$3")
		k=$((k + 1))
		if [ "${got%% *}" != "$1" ]; then
			echo "guest-mutants: self-test case $k: got '$got', want $1"
			bad=$((bad + 1))
		fi
	}
	one ERROR fake_defer "" 'check: error: build failed\n0 passed, 1 failed, 0 skipped'
	one ERROR fake_defer "" 'check: boot 1 never reached /init\ncheck: no boot reached /init\nFAIL  fake_defer - not run\n0 passed, 1 failed, 0 skipped'
	one ERROR fake_defer "" 'FAIL  fake_defer - not run\n0 passed, 1 failed, 0 skipped'
	one ERROR fake_defer "" 'FAIL  fake_defer (180s) - hung\n0 passed, 1 failed, 0 skipped'
	one ERROR fake_defer "" 'FAIL  fake_defer (120.00s) - timeout after 120s (guest)\n0 passed, 1 failed, 0 skipped'
	one ERROR fake_defer "" 'ok    fake_weak (3s)\n1 passed, 0 failed, 0 skipped'
	one SURVIVED fake_defer "" 'FAIL  fake_weak (3s) - exit code 1\nok    fake_defer (9s)\n1 passed, 1 failed, 0 skipped'
	one KILLED fake_defer "" 'FAIL  fake_defer (9s) - exit code 1\n0 passed, 1 failed, 0 skipped'
	one KILLED fake_defer "" 'FAIL  fake_defer (9s) - kernel: [ 1.0] BUG: KASAN: use-after-free\n0 passed, 1 failed, 0 skipped'
	one KILLED fake_bad_attr bad_flags 'FAIL  fake_bad_attr (9s) - exit code 1' \
		'# not ok 3 bad_flags\n# insmod_test: ocq_test_fake: 1 not ok'
	one SURVIVED fake_bad_attr bad_flags 'FAIL  fake_bad_attr (9s) - exit code 1' \
		'# not ok 4 bad_mode\n# insmod_test: ocq_test_fake: 1 not ok'
	one SURVIVED fake_bad_attr bad_flags 'FAIL  fake_bad_attr (9s) - kernel: [ 1.0] WARNING: at x' \
		'# ok 3 bad_flags\n# kmsg: [ 1.0] FAIL bad_flags'
	if [ $bad -gt 0 ]; then
		log "verdict self-test: $bad of $k cases wrong"
		return 1
	fi
	log "verdict self-test: $k cases ok"
}

if [ -n "$check_only" ]; then
	stale=0
	selftest || exit 2
	for m in "${order[@]}"; do
		[ -n "${FILE[$m]:-}" ] || die "unknown mutant '$m'"
		[ -n "${TESTS[$m]:-}" ] || die "mutant '$m' names no test"
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

killed=0 survived=0 errors=0
for m in "${order[@]}"; do
	[ -n "${FILE[$m]:-}" ] || die "unknown mutant '$m'"
	d=$WORK/$m
	rm -rf "$d"
	mkdir -p "$d"
	git -C "$TOP" ls-files -z | (cd "$TOP" && xargs -0 cp --parents -t "$d")
	# the kernels are shared, the builds are the copy's own
	[ -d "$TOP/.cache" ] && ln -s "$TOP/.cache" "$d/.cache"
	apply "$d/${FILE[$m]}" "${LINE[$m]}" "${TO[$m]}" || die "mutant $m is stale"
	log "$m: make check TESTS=\"${TESTS[$m]}\"${EXPECT[$m]:+ (expect '${EXPECT[$m]}')}"
	make -C "$d" --no-print-directory check SIM=0 TESTS="${TESTS[$m]}" \
		> "$d/check.log" 2>&1 || true
	v=$(judge "$d/check.log" "${TESTS[$m]}" "${EXPECT[$m]:-}")
	case $v in
	KILLED*) killed=$((killed + 1)); log "$m: ${v/KILLED/killed}" ;;
	ERROR*) errors=$((errors + 1)); log "$m: $v ($d/check.log)" ;;
	*) survived=$((survived + 1)); log "$m: $v ($d/check.log)" ;;
	esac
done
log "${#order[@]} mutant(s): $killed killed, $survived survived, $errors error(s)"
[ $survived = 0 ] && [ $errors = 0 ]
