#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# lint.sh - run the project's static checks and fail on any finding.
#
# Usage (from anywhere; `make lint` runs it from the repository root):
#   bash tools/lint/lint.sh [STEP...]
# STEP is one or more of: checkpatch kernel-doc clang-format clang-tidy
# sparse cocci.  Without a STEP, all of them run, in that order.
#
# Steps:
#   checkpatch    scripts/checkpatch.pl --strict --no-tree -f on the kernel C
#                 (drivers/, include/, selftests/modules/), minus the types
#                 listed with a reason in tools/lint/checkpatch.ignore.
#   kernel-doc    scripts/kernel-doc -none -v on the same files; every
#                 warning counts.
#   clang-format  clang-format --dry-run -Werror: kernel C with the kernel's
#                 .clang-format at the top, C++ tools with tools/.clang-format.
#   clang-tidy    clang-tidy with tools/.clang-tidy on the C++ tools' sources.
#   sparse        a W=1 C=2 Kbuild build of our modules against the kernel
#                 that `make lint` exports (KH, ...); every sparse or compiler
#                 warning or error located in our kernel C counts.
#   cocci         scripts/coccinelle/api/ib_ocq_dropin.cocci in report mode
#                 (spatch) over drivers/infiniband/ulp/ and selftests/modules/:
#                 a CQ call of ib_core that it would convert, in a file that
#                 tools/lint/upstream-cq.list does not name, counts; so does a
#                 file listed there in which it finds none.
#
# checkpatch.pl, its data files and kernel-doc come from Debian's
# linux-source-6.1 package, fetched into .cache/lint/ (git-ignored) and
# reused until apt offers a new version.  Missing tools are installed with
# apt-get.
#
# Output: one line per step ("STEP: ok (...)" or "STEP: N findings (...)"
# followed by the findings, indented), then "lint: ok" or "lint: N findings".
# Exit status: 0 when clean, 1 on findings, 2 when the checks could not run.

set -euo pipefail

# shellcheck source=tools/lint/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ALL_STEPS=(checkpatch kernel-doc clang-format clang-tidy sparse cocci)
TOTAL=0
OUT=""	# findings of the current step, one per line; context lines
	# start with a blank and are not counted.

# Print a step's result line and its findings; add them to the total.
finish()
{
	local step=$1 what=$2 n

	n=$(grep -c '^[^[:space:]]' "$OUT" || true)
	if ((n == 0)); then
		printf '%s: ok (%s)\n' "$step" "$what"
	else
		printf '%s: %d finding%s (%s)\n' "$step" "$n" \
			"$( ((n == 1)) || echo s)" "$what"
		sed 's/^/  /' "$OUT"
	fi
	TOTAL=$((TOTAL + n))
	: >"$OUT"
}

# Join continuation lines onto the "path:line: ..." diagnostic before them,
# so that each finding is one line: indented lines, and sparse's
# "path:line:col:    expected/got ..." details.  gcc's source excerpts
# ("  12 | code") are dropped.  Other lines stay as they are.
join_diags()
{
	awk '
		/^ *[0-9]* \| / { next }
		/^[^[:space:]:]+:[0-9]+:[0-9]+:   / && d != "" {
			sub(/^[^[:space:]:]+:[0-9]+:[0-9]+:[[:space:]]+/, "")
			d = d " | " $0
			next
		}
		/^[^[:space:]:]+:[0-9]+(:[0-9]+)?: / {
			if (d != "") print d
			d = $0
			next
		}
		/^[[:space:]]/ && d != "" {
			if (NF) { sub(/^[[:space:]]+/, ""); d = d " | " $0 }
			next
		}
		NF {
			if (d != "") print d
			d = ""
			print
		}
		END { if (d != "") print d }'
}

# "path:..." lines: make absolute paths inside the repository relative.
relpaths() { sed -e "s|^$REPO/||" -e 's|^\./||'; }

count_words()
{
	local n=$1 word=$2
	printf '%d %s%s' "$n" "$word" "$( ((n == 1)) || echo s)"
}

step_checkpatch()
{
	local files=() ignore run rc=0

	mapfile -t files < <(kernel_files)
	if ((${#files[@]} == 0)); then
		finish checkpatch "no kernel C sources"
		return
	fi
	ignore=$(sed -e 's/#.*//' "$LINT_DIR/checkpatch.ignore" |
		awk 'NF { print $1 }' | paste -sd, -)
	# checkpatch --strict writes a CamelCase cache file into its working
	# directory and seeds it from <root>/include; give it an empty root
	# and a scratch directory so neither touches the repository.
	run="$CACHE/checkpatch-run"
	mkdir -p "$run/root/include"
	(cd "$run" && perl "$KSRC_DIR/scripts/checkpatch.pl" \
		--strict --no-tree --root="$run/root" --terse --show-types \
		--quiet --no-summary --color=never \
		${ignore:+--ignore "$ignore"} \
		-f "${files[@]/#/$REPO/}") >"$OUT.raw" 2>&1 || rc=$?
	relpaths <"$OUT.raw" | grep -v '^[[:space:]]*$' >"$OUT" || true
	if ((rc != 0)) && ! [[ -s "$OUT" ]]; then
		echo "checkpatch.pl failed (exit $rc)" >>"$OUT"
	fi
	finish checkpatch "$(count_words ${#files[@]} file)"
}

# 6.1's kernel-doc has no -Wall/-Wreturn (they came in later kernels);
# there -v is what turns on the same extra checks: a missing "Return:"
# section, a missing short description, "contents before sections".  -v
# also prints "info: Scanning doc for ..." and a count, which are dropped.
step_kernel_doc()
{
	local files=() f rc

	mapfile -t files < <(kernel_files)
	if ((${#files[@]} == 0)); then
		finish kernel-doc "no kernel C sources"
		return
	fi
	# One run per file: kernel-doc's parser state would otherwise carry
	# an unfinished comment over into the next file.
	for f in "${files[@]}"; do
		rc=0
		(cd "$REPO" && env -u KBUILD_VERBOSE -u KCFLAGS -u KDOC_WERROR \
			perl "$KSRC_DIR/scripts/kernel-doc" -none -v "$f") \
			>"$OUT.raw" 2>&1 || rc=$?
		grep -vE ': info: |^[0-9]+ (warnings|errors)$' "$OUT.raw" |
			join_diags | relpaths >>"$OUT" || true
		if ((rc != 0)) && ! grep -q "^$f:" "$OUT"; then
			echo "$f: kernel-doc failed (exit $rc)" >>"$OUT"
		fi
	done
	finish kernel-doc "$(count_words ${#files[@]} file)"
}

# clang-format --dry-run -Werror over FILES (relative to the repository),
# with the nearest .clang-format of each file.  One finding per file, with
# the first lines that need reformatting.
clang_format_check()
{
	local rc=0

	(cd "$REPO" && clang-format --dry-run -Werror --style=file "$@") \
		>"$OUT.raw" 2>&1 || rc=$?
	grep -E '^[^[:space:]]+:[0-9]+:[0-9]+: (error|warning):' "$OUT.raw" |
		relpaths | awk -F: '
		function flush() {
			if (f != "")
				printf "%s: not clang-formatted (line %s%s; %s)\n", f,
					lines, (k > 8 ? ",..." : ""),
					"tools/lint/format.sh fixes it"
		}
		$1 != f { flush(); f = $1; k = 0; lines = ""; last = "" }
		$2 != last {
			k++
			if (k <= 8)
				lines = lines (k > 1 ? "," : "") $2
			last = $2
		}
		END { flush() }' >>"$OUT" || true
	if ((rc != 0)) && ! grep -q ':[0-9]*:[0-9]*: ' "$OUT.raw"; then
		echo "clang-format failed (exit $rc):" >>"$OUT"
		sed 's/^/ /' "$OUT.raw" >>"$OUT"
	fi
}

step_clang_format()
{
	local kfiles=() tfiles=()

	mapfile -t kfiles < <(kernel_files)
	mapfile -t tfiles < <(tools_cxx_files)
	if ((${#kfiles[@]})); then
		if [[ -f "$REPO/.clang-format" ]]; then
			clang_format_check "${kfiles[@]}"
		else
			echo ".clang-format: missing (the kernel's style file)" >>"$OUT"
		fi
	fi
	if ((${#tfiles[@]})); then
		if [[ -f "$REPO/tools/.clang-format" ]]; then
			clang_format_check "${tfiles[@]}"
		else
			echo "tools/.clang-format: missing" >>"$OUT"
		fi
	fi
	finish clang-format "$(count_words ${#kfiles[@]} 'kernel C file'), $(count_words ${#tfiles[@]} 'C++ file')"
}

# Compile flags for a C++ file that has no entry in a compilation database:
# C++17, its own directory (for "quoted" includes only, so that a tool's own
# sched.h cannot hide the system's <sched.h>), tools/ and include/uapi/ (when
# present).
#
# A directory may say more in a compile_flags.txt (clang's own convention),
# one flag a line, -I paths relative to that directory.
fallback_cxx_flags()
{
	local f=$1 dir=$REPO/${1%/*} flag

	if [[ -f "$dir/compile_flags.txt" ]]; then
		while read -r flag; do
			case $flag in
			-I/*) printf '%s\n' "$flag" ;;
			-I*) printf '%s\n' "-I$dir/${flag#-I}" ;;
			?*) printf '%s\n' "$flag" ;;
			esac
		done < "$dir/compile_flags.txt"
		printf '%s\n' "-iquote$dir"
		return 0
	fi
	printf '%s\n' -std=c++17 "-iquote$REPO/${f%/*}" "-I$REPO/tools"
	[[ -d "$REPO/include/uapi" ]] && printf '%s\n' "-I$REPO/include/uapi"
	return 0
}

# clang-tidy on one C++ source file $1, with compile database $2 (or
# none: empty); its findings in the C++ files of the tools (the rest of the
# arguments) go to stdout, one per line.
tidy_one()
{
	local f=$1 db=$2 raw rc=0 flags=()

	shift 2
	raw=$(mktemp)
	if [[ -n "$db" ]] && grep -qF "\"$REPO/$f\"" "$db"; then
		(cd "$REPO" && clang-tidy --quiet -p "${db%/*}" "$f") >"$raw" 2>&1 || rc=$?
	else
		mapfile -t flags < <(fallback_cxx_flags "$f")
		(cd "$REPO" && clang-tidy --quiet "$f" -- "${flags[@]}") >"$raw" 2>&1 || rc=$?
	fi
	grep -E '^[^[:space:]]+:[0-9]+:[0-9]+: (warning|error):' "$raw" | relpaths |
		grep -F -f <(printf '%s:\n' "$@") >"$raw.file" || true
	if ((rc != 0)) && ! [[ -s "$raw.file" ]]; then
		echo "$f: clang-tidy failed (exit $rc)" >>"$raw.file"
		grep -E ': (error|fatal error):' "$raw" | sed 's/^/ /' >>"$raw.file" || true
	fi
	cat "$raw.file"
	rm -f "$raw" "$raw.file"
	echo done >"$TIDY_DONE"
}

# clang-tidy on the C++ tools' source files, as many at once as there are
# CPUs.  Headers are checked through the sources that include them; only
# findings located in C++ files of the tools (tools_cxx_files) count, so a C
# header that a C++ test includes is not held to C++ advice.  A file listed
# in build/compile_commands.json (or $LINT_BUILD_DIR/compile_commands.json)
# is checked with its real compile command; any other file with
# fallback_cxx_flags.  The findings are reported in the files' order.
step_clang_tidy()
{
	local cxx=() files=() db i tmp max
	local build="$REPO/${LINT_BUILD_DIR:-build}"

	mapfile -t cxx < <(tools_cxx_files)
	mapfile -t files < <(printf '%s\n' "${cxx[@]}" | grep -E '\.(cpp|cc|cxx)$' || true)
	if ((${#files[@]} == 0)); then
		finish clang-tidy "no C++ sources"
		return
	fi
	# the libraries the tools include (CLI11, nlohmann-json, GoogleTest)
	[[ -x "$REPO/tools/testing/vm/host-deps.sh" ]] && "$REPO/tools/testing/vm/host-deps.sh" tools
	db="$build/compile_commands.json"
	[[ -f "$db" ]] || db=""
	tmp=$(mktemp -d)
	max=$(nproc 2>/dev/null || echo 1)
	for i in "${!files[@]}"; do
		while (($(jobs -rp | wc -l) >= max)); do
			wait -n || true
		done
		TIDY_DONE="$tmp/$i.done" tidy_one "${files[$i]}" "$db" "${cxx[@]}" >"$tmp/$i" &
	done
	wait
	for i in "${!files[@]}"; do
		cat "$tmp/$i" >>"$OUT"
		# a job that died (set -e) wrote no mark: its file counts as a finding
		[[ -e "$tmp/$i.done" ]] || echo "${files[$i]}: the clang-tidy job failed" >>"$OUT"
	done
	rm -rf "$tmp"
	finish clang-tidy "$(count_words ${#files[@]} 'C++ source')${db:+, compile_commands.json}"
}

# Is this path, as the sparse build printed it, one of our kernel C files?
# The build compiles a copy of our sources in $1, so our files show up as
# "$1/drivers/...".  Kernel headers show up with absolute paths elsewhere
# or relative to the kernel build directory ("./include/linux/..."); a
# warning located in a kernel header is the kernel's, not ours, and is not
# counted (the line of our code that triggers it is reported by sparse as
# well when it is our fault).
ours()
{
	local copy=$1 p=$2 d

	case "$p" in
	"$copy"/*) p=${p#"$copy"/} ;;
	/*) return 1 ;;
	esac
	p=${p#./}
	for d in "${KERNEL_DIRS[@]}"; do
		[[ "$p" == "$d"/* && -f "$REPO/$p" ]] && printf '%s\n' "$p" &&
			return 0
	done
	return 1
}

# The kernel to check against: `make lint` exports KH (the prepared headers
# build directory), KCOMMON_MAKEFILE and KMAKE_EXTRA.  Run alone, lint.sh
# gets them the same way the top-level Makefile does, from
# tools/testing/vm/kernel.sh (Debian's default kernel, or $KERNEL).
kernel_env()
{
	local vm="$REPO/tools/testing/vm" env

	[[ -x "$vm/host-deps.sh" ]] && "$vm/host-deps.sh" build
	[[ -n "${KH:-}" ]] && return 0
	[[ -x "$vm/kernel.sh" ]] || return 1
	env=$("$vm/kernel.sh" "${KERNEL:-linux-image-amd64}" | tail -1) ||
		return 1
	# shellcheck source=/dev/null
	source "$env"
	[[ -n "${KH:-}" ]]
}

# Our Kbuild sources (git-ignored build products left out), copied to $1.
copy_sources()
{
	local dest=$1

	rm -rf "$dest"
	mkdir -p "$dest"
	{
		[[ -f "$REPO/Kbuild" ]] && echo Kbuild
		list_tree "${KERNEL_DIRS[@]}"
	} | tar -C "$REPO" -cf - -T - | tar -C "$dest" -xf -
}

# Build our modules with C=2, so that sparse checks every file, and W=1
# like the normal build.  It builds a copy of the sources (in
# .cache/lint/sparse/) so that it never shares objects with a normal build.
# Every sparse or compiler warning or error located in our kernel C counts.
step_sparse()
{
	local files=() log="$CACHE/sparse.log" copy rc=0 path rest p

	mapfile -t files < <(kernel_files | grep '\.c$' || true)
	if ((${#files[@]} == 0)); then
		finish sparse "no kernel C sources"
		return
	fi
	if ! kernel_env; then
		echo "no kernel build tree (set KH, or run through 'make lint')" >>"$OUT"
		finish sparse "not run"
		return
	fi
	copy="$CACHE/sparse/${KVER:-kdir}"
	copy_sources "$copy"
	# shellcheck disable=SC2086 # KMAKE_EXTRA holds several words
	(unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
	 make ${KCOMMON_MAKEFILE:+-f "$KCOMMON_MAKEFILE"} -C "$KH" M="$copy" \
		C=2 W="${W:-1}" -j"$(nproc)" ${KMAKE_EXTRA:-} modules) \
		>"$log" 2>&1 || rc=$?
	while IFS=$'\t' read -r path rest; do
		p=$(ours "$copy" "$path") && printf '%s:%s\n' "$p" "$rest" >>"$OUT"
	done < <(grep -vE '^  [A-Z0-9_]+( \[M\])? ' "$log" | join_diags |
		sed -nE 's/^([^[:space:]:]+):([0-9]+:([0-9]+:)? (warning|error): .*)$/\1\t\2/p')
	if ((rc != 0)); then
		echo "the C=2 build failed (exit $rc); end of .cache/lint/sparse.log:" >>"$OUT"
		tail -n 15 "$log" | sed 's/^/ /' >>"$OUT"
	elif ! grep -qE '^  CHECK ' "$log"; then
		echo "the C=2 build ran no sparse check (see .cache/lint/sparse.log)" >>"$OUT"
	fi
	finish sparse "$(count_words ${#files[@]} 'kernel C source')${KVER:+, $KVER}"
}

# Our ULP code, through the semantic patch that converts a ULP to ocq: every
# CQ call of ib_core it reports must be in a file that upstream-cq.list names
# (those use ib_core's API on purpose), and every file listed must have one.
COCCI_DIRS=(drivers/infiniband/ulp selftests/modules)
step_cocci()
{
	local cocci=scripts/coccinelle/api/ib_ocq_dropin.cocci
	local list="$LINT_DIR/upstream-cq.list" dirs=() d rc=0 f n

	for d in "${COCCI_DIRS[@]}"; do
		[[ -d "$REPO/$d" ]] && dirs+=("$d")
	done
	if [[ ! -f "$REPO/$cocci" ]]; then
		echo "$cocci: missing" >>"$OUT"
		finish cocci "not run"
		return
	fi
	if ((${#dirs[@]} == 0)); then
		finish cocci "no ULP code"
		return
	fi
	# --no-includes --include-headers: the Options line of the .cocci.
	# One run per directory: spatch takes one --dir.
	: >"$OUT.raw"
	for d in "${dirs[@]}"; do
		(cd "$REPO" && spatch -D report --very-quiet --no-includes \
			--include-headers --sp-file "$cocci" --dir "$d") \
			>>"$OUT.raw" 2>&1 || rc=$?
	done
	if ((rc != 0)); then
		echo "spatch failed (exit $rc):" >>"$OUT"
		sed 's/^/ /' "$OUT.raw" >>"$OUT"
		finish cocci "not run"
		return
	fi
	sed -e 's/#.*//' "$list" | awk 'NF { print $1 }' | sort -u >"$OUT.file"
	grep -E '^[^[:space:]:]+:[0-9]+:' "$OUT.raw" | relpaths | sort -t: -k1,1 -k2,2n |
		while IFS= read -r f; do
			grep -qxF "${f%%:*}" "$OUT.file" || printf '%s\n' "$f"
		done >>"$OUT"
	while IFS= read -r f; do
		grep -q "^$f:" "$OUT.raw" ||
			echo "$f: listed in tools/lint/upstream-cq.list, but has no CQ call of ib_core" >>"$OUT"
	done <"$OUT.file"
	n=$(grep -cE '^[^[:space:]:]+:[0-9]+:' "$OUT.raw" || true)
	finish cocci "$(count_words "$n" 'CQ call') of ib_core, in files that use them on purpose"
}

main()
{
	local steps=("$@") s need=()

	((${#steps[@]})) || steps=("${ALL_STEPS[@]}")
	for s in "${steps[@]}"; do
		case "$s" in
		checkpatch | kernel-doc) need+=(perl) ;;
		clang-format) need+=(clang-format) ;;
		clang-tidy) need+=(clang-tidy) ;;
		sparse) need+=(sparse make) ;;
		cocci) need+=(spatch) ;;
		*) die "unknown step '$s' (steps: ${ALL_STEPS[*]})" ;;
		esac
	done
	ensure_tools "${need[@]}"
	case " ${steps[*]} " in
	*" checkpatch "* | *" kernel-doc "*) ensure_kernel_scripts ;;
	esac

	OUT=$(mktemp)
	trap 'rm -f "$OUT" "$OUT.raw" "$OUT.file"' EXIT
	for s in "${steps[@]}"; do
		"step_${s//-/_}"
	done

	if ((TOTAL == 0)); then
		echo "lint: ok"
	else
		echo "lint: $(count_words "$TOTAL" finding)"
		exit 1
	fi
}

main "$@"
