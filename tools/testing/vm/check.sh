#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check.sh - build, boot a Debian kernel in QEMU and run the selftests in it.
#
# Usage: [TESTS="pat ..."] [SMP=2] [ACCEL=auto|tcg|kvm] [W=1] tools/testing/vm/check.sh [METAPACKAGE]
#
# Tests are the executable selftests/<group>/<name>.sh (groups lib/, runner/ and soak/ only
# when TESTS names them). A pattern with * ? [ is a shell glob on the whole name, any
# other pattern a substring. "# timeout: N" in a script's first lines sets its timeout
# (default 120 s); TIMEOUT_SCALE=N multiplies them (default 4 with DEBUG_KERNEL=).
# "# nodes: 2" there, or the group selftests/fabric/, makes a test a two-node one: it
# runs on node A of a two-node boot (fabric-boot.sh), after the single-node tests;
# FABRIC_TESTS="pat ..." limits a run without TESTS= to those two-node tests;
# SKIP_TESTS="pat ..." (the same patterns) leaves out the tests it matches.
#
# A test may skip (exit 4) only for a reason its leading comment block declares:
# "# skip-ok: ERE" lines, matched against its SKIP reason.  Any other skip is failed,
# with its reason: a missing device, module or tool is a broken set-up, not a skip.
# "# expect-warn: ERE" declares one kernel WARNING the test provokes on purpose (it
# turns panic_on_warn off for itself): the WARNING line matching ERE and its trace,
# up to the "---[ end trace" line, do not fail it; the test fails if that WARNING
# did not come exactly once, and on any other bad kernel line as before.
#
# The host watches the serial console: a test that overruns its timeout (hung) or during
# which the guest died (panic) is failed and the remaining tests run in a fresh boot (at
# most MAX_REBOOTS); a boot that never reached /init is retried. Kernel log lines with a
# WARNING, BUG, Oops, lockup, hung task, list/refcount corruption, UBSAN or KASAN report
# fail the test during which they appeared. Logs: build/check/<KVER>/. The last line
# printed is "N passed, N failed, N skipped"; the exit status is non-zero if anything
# failed or no boot worked.
set -uo pipefail

# The whole script is one compound command, parsed before it runs: editing this file
# during a run cannot derail the run.
{
META=${1:-linux-image-amd64}
TOP=$(cd "$(dirname "$0")/../../.." && pwd)
VM=$TOP/tools/testing/vm
SMP=${SMP:-2}
MEM=${MEM:-2G}
ACCEL=${ACCEL:-auto}
TESTS=${TESTS:-}
MAX_REBOOTS=${MAX_REBOOTS:-3}
BOOT_TIMEOUT=${BOOT_TIMEOUT:-180}	# until /init is reached
TEST_MARGIN=${TEST_MARGIN:-60}		# host-side slack over a test's own timeout
DEFAULT_TIMEOUT=120
# A debug kernel (DEBUG_KERNEL=, see debug-kernel.sh) runs several times slower:
# every test's timeout and the boot timeout are multiplied by TIMEOUT_SCALE.
if [ -n "${DEBUG_KERNEL:-}" ] && [ "$DEBUG_KERNEL" != 0 ]; then
	TIMEOUT_SCALE=${TIMEOUT_SCALE:-4}
fi
TIMEOUT_SCALE=${TIMEOUT_SCALE:-1}
BOOT_TIMEOUT=$((BOOT_TIMEOUT * TIMEOUT_SCALE))
# "INFO:" (lockdep, hung task, RCU stall) and kmemleak's reports: the debug kernel's.
BAD_RE='WARNING:|BUG:|Oops|soft lockup|hard LOCKUP|blocked for more than|refcount_t|list_add corruption|list_del corruption|UBSAN|KASAN|kernel BUG|general protection fault|Kernel panic|INFO: |unreferenced object|suspected memory leak'

t_start=$(date +%s)
say() { echo "check: $*"; }
fatal() { say "error: $*"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }

"$VM"/host-deps.sh check || fatal "installing the host tools failed"
# One run per tree at a time: runs share build/ (and would share the kernel's copy).
mkdir -p "$TOP/build"
exec 8> "$TOP/build/.check.lock"
if ! flock -n 8; then
	say "another make check runs in this tree; waiting for it"
	flock 8
fi
ENV=$("$VM"/build.sh "$META" | tail -1) && [ -f "$ENV" ] || fatal "build failed"
. "$ENV"
B=$TOP/build/$KVER
LOGDIR=$B/../check/$KVER
rm -rf "$LOGDIR" && mkdir -p "$LOGDIR/tests"
LOGDIR=$(cd "$LOGDIR" && pwd)

# ---- test selection ----
names=() paths=() tmos=() nodes=() left_out=()
declare -A SKIP_OK EXPECT_WARN	# per test: its "# skip-ok:" EREs (one a line), "# expect-warn:"
selected() {	# NAME GROUP
	local p

	if [ -z "$TESTS" ]; then
		[ "$2" != lib ] && [ "$2" != runner ] && [ "$2" != soak ]
		return
	fi
	for p in $TESTS; do
		case $p in
		*[\*\?\[]*) case $1 in $p) return 0 ;; esac ;;
		*) case $1 in *"$p"*) return 0 ;; esac ;;
		esac
	done
	return 1
}
for f in $(cd "$TOP" && ls selftests/*/*.sh 2>/dev/null | LC_ALL=C sort); do
	[ -x "$TOP/$f" ] || continue
	g=$(basename "$(dirname "$f")")
	n=$(basename "$f" .sh)
	[ "$g" = lib ] && continue
	selected "$n" "$g" || continue
	t=$(sed -n '1,10s/^# *timeout: *\([0-9]\+\).*/\1/p' "$TOP/$f" | head -1)
	nd=$(sed -n '1,10s/^# *nodes: *\([0-9]\+\).*/\1/p' "$TOP/$f" | head -1)
	[ "$g" = fabric ] && nd=${nd:-2}
	# FABRIC_TESTS="pattern ...": of the two-node tests, a run without TESTS= takes
	# only those (CI's time)
	if [ "${nd:-1}" = 2 ] && [ -z "$TESTS" ] && [ -n "${FABRIC_TESTS:-}" ] &&
	   ! TESTS=$FABRIC_TESTS selected "$n" "$g"; then
		continue
	fi
	if [ -n "${SKIP_TESTS:-}" ] && TESTS=$SKIP_TESTS selected "$n" "$g"; then
		left_out+=("$n")
		continue
	fi
	names+=("$n") paths+=("/$f") tmos+=($((${t:-$DEFAULT_TIMEOUT} * TIMEOUT_SCALE)))
	# the leading comment block: the lines up to the first that is no comment
	hdr=$(sed -n '/^#/!q; p' "$TOP/$f")
	SKIP_OK[$n]=$(sed -n 's/^# *skip-ok: *//p' <<< "$hdr")
	EXPECT_WARN[$n]=$(sed -n 's/^# *expect-warn: *//p' <<< "$hdr" | head -1)
	nodes+=("${nd:-1}")
done
[ ${#names[@]} -gt 0 ] ||
	fatal "no test matches TESTS='$TESTS'${SKIP_TESTS:+ less SKIP_TESTS='$SKIP_TESTS'}"
[ ${#left_out[@]} -eq 0 ] || say "left out (SKIP_TESTS): ${left_out[*]}"
say "$KVER: ${#names[@]} test(s): ${names[*]}"

# ---- how long the guest part takes, by the times of the last runs ----
# build/check/times-<KVER>: "NAME SECONDS" of every test that got a time, kept over runs.
TIMES=$TOP/build/check/times-$KVER
declare -A LAST
if [ -f "$TIMES" ]; then
	while read -r n t; do LAST[$n]=$t; done < "$TIMES"
fi
est=0 unknown=0
for n in "${names[@]}"; do
	if [ -n "${LAST[$n]:-}" ]; then
		est=$(awk -v a="$est" -v b="${LAST[$n]}" 'BEGIN { print a + b }')
	else
		unknown=$((unknown + 1))
	fi
done
if [ "$unknown" -lt "${#names[@]}" ]; then
	msg="by the last runs' times, the tests take $(awk -v s="$est" 'BEGIN {
		if (s < 120) printf "%.0f s", s; else printf "%.0f min", s / 60 }') in the guest"
	msg+=", boots not counted"
	[ "$unknown" -gt 0 ] && msg+="; $unknown of them have no time yet"
	say "$msg"
else
	say "no earlier run of these tests here: no estimate"
fi

# ---- the kernel's own ULPs, for the selftests/ulp/ tests ----
# Built (tools/testing/ulps/build.sh, about a minute per kernel) only when such a test
# is selected; the initramfs carries them at /ko/ulps/ and says in /ko/ulps/status
# whether they are there.  A failed build does not stop the run: the ULP tests fail.
ULPS_STATUS=
for p in "${paths[@]}"; do
	case $p in /selftests/ulp/*|/selftests/fabric/*) ULPS_STATUS=build ;; esac
done
if [ "$ULPS_STATUS" = build ]; then
	if [ -n "${DEBUG_KERNEL:-}" ] && [ "$DEBUG_KERNEL" != 0 ]; then
		ULPS_STATUS="skip: the ULPs are built from a Debian image's linux-source, not for DEBUG_KERNEL="
	elif "$TOP"/tools/testing/ulps/build.sh "$META" > "$LOGDIR/ulps.log" 2>&1; then
		ULPS_STATUS=ok
		say "ULPs built: build/$KVER/ulps/{stock,ocq}/ (log: ${LOGDIR#$TOP/}/ulps.log)"
	else
		ULPS_STATUS="fail: make ulps failed: $(grep '^ulps: error' "$LOGDIR/ulps.log" | tail -1)"
		say "the ULP build failed (log: ${LOGDIR#$TOP/}/ulps.log); the ULP tests will fail"
	fi
fi
export ULPS_STATUS
"$VM"/initramfs.sh "$ENV" "$B/initramfs.cpio.gz" || fatal "initramfs failed"

# ---- kernel command line and accelerator ----
# shellcheck source=tools/testing/vm/boot.sh
. "$VM"/boot.sh
# shellcheck source=tools/testing/vm/fabric-boot.sh
. "$VM"/fabric-boot.sh
vm_setup
say "boot: $ACCEL, -smp $SMP -m $MEM, append: $APPEND"
say "logs: ${LOGDIR#$TOP/}/"

# ---- results ----
declare -A RES REASON TIME
npass=0 nfail=0 nskip=0
finish_test() {		# NAME RESULT(ok|fail|skip) REASON TIME
	local line

	RES[$1]=$2 REASON[$1]=$3 TIME[$1]=$4
	case $2 in
	ok)   npass=$((npass + 1)); line="ok    $1" ;;
	skip) nskip=$((nskip + 1)); line="skip  $1" ;;
	*)    nfail=$((nfail + 1)); line="FAIL  $1" ;;
	esac
	[ -n "$4" ] && line+=" (${4}s)"
	[ -n "$3" ] && line+=" - $3"
	echo "$line"
}

# A skip whose reason matches one of the test's "# skip-ok:" EREs.
skip_declared() {	# NAME REASON
	local re

	while IFS= read -r re; do
		[ -n "$re" ] && grep -Eq -- "$re" <<< "$2" && return 0
	done <<< "${SKIP_OK[$1]:-}"
	return 1
}

# ---- console parser (one boot) ----
# Per line: START opens a test's segment, which runs until the next START or OCQ-DONE;
# the TAP line gives the verdict; kernel lines in the segment may overturn it.
# A kernel line comes twice: on the console as it is logged ("[" lines) and in the
# copy of the kernel log the guest prints after the test ("# kmsg: " lines).  The
# declared WARNING is counted in the copy only; in each stream its trace, up to
# "---[ end trace", is passed over (p_wtrace: "con", "kmsg", or both).
p_init=0 p_done=0 p_cur="" p_start=0 p_tap="" p_reason="" p_time="" p_bad="" p_boot_bad=""
p_warns=0 p_wtrace=""
close_segment() {
	local r=$p_tap reason=$p_reason want

	[ -n "$p_cur" ] || return 0
	want=${EXPECT_WARN[$p_cur]:-}
	if [ -n "$p_bad" ]; then
		r=fail reason="kernel: $p_bad"
	elif [ -n "$want" ] && [ "$p_warns" != 1 ]; then
		reason="the WARNING declared by expect-warn /$want/ came $p_warns times, not once${reason:+; $reason}"
		r=fail
	fi
	if [ "$r" = skip ] && ! skip_declared "$p_cur" "$reason"; then
		r=fail reason="undeclared skip (no skip-ok line matches): $reason"
	fi
	finish_test "$p_cur" "$r" "$reason" "$p_time"
	p_cur="" p_tap="" p_reason="" p_time="" p_bad="" p_warns=0 p_wtrace=""
}

# A kernel line of the current test's segment (STREAM con or kmsg, LINE without the
# "# kmsg: " prefix): count the declared WARNING, pass over its trace, keep the
# first other bad line.
kernel_line() {	# STREAM LINE
	local want=""

	# before a test's first line (a boot's own kernel lines) there is none
	[ -n "$p_cur" ] && want=${EXPECT_WARN[$p_cur]:-}

	if [[ " $p_wtrace " == *" $1 "* ]]; then
		[[ $2 == *"---[ end trace"* ]] && p_wtrace=${p_wtrace//$1/}
		return
	fi
	if [ -n "$want" ] && [[ $2 == *WARNING:* ]] && grep -Eq -- "$want" <<< "$2"; then
		[ "$1" = kmsg ] && p_warns=$((p_warns + 1))
		p_wtrace+=" $1"
		return
	fi
	if [ -z "$p_bad" ] && [[ $2 =~ $BAD_RE ]]; then
		p_bad=$2
	fi
}
parse_line() {
	local l=${1%$'\r'} kernel=0

	case $l in
	"# OCQ-INIT"*) p_init=1; return ;;
	"# OCQ-DONE"*) close_segment; p_done=1; return ;;
	"# START "*)
		close_segment
		p_cur=${l#\# START } p_start=$(date +%s) p_tap=fail p_reason="no result"
		say "[$((npass + nfail + nskip + 1))/${#names[@]}] $p_cur${LAST[$p_cur]:+ (${LAST[$p_cur]}s last time)}"
		return ;;
	esac
	case $l in
	"# kmsg: "*|\[*) kernel=1 ;;
	esac
	if [ -z "$p_cur" ]; then
		if [ $kernel = 1 ] && [ $p_init = 1 ] && [ -z "$p_boot_bad" ] &&
		   [[ $l =~ $BAD_RE ]]; then
			p_boot_bad=$l
		fi
		return
	fi
	echo "$l" >> "$LOGDIR/tests/$p_cur.log"
	case $l in
	"# TIME $p_cur "*) p_time=${l##* } ;;
	"ok "*" $p_cur # SKIP"*) p_tap=skip p_reason=${l#*# SKIP } ;;
	"ok "*" $p_cur") p_tap=ok p_reason="" ;;
	"not ok "*" $p_cur"*) p_tap=fail p_reason=${l#*"$p_cur"}; p_reason=${p_reason# # } ;;
	# A console line may carry a kernel message glued to the TAP line.
	"# "*) ;;
	*"not ok "[0-9]*" $p_cur"*) p_tap=fail p_reason="${l##*"$p_cur"}" ;;
	*"ok "[0-9]*" $p_cur # SKIP"*) p_tap=skip p_reason=${l##*# SKIP } ;;
	*"ok "[0-9]*" $p_cur"|*"ok "[0-9]*" $p_cur"\[*) p_tap=ok p_reason="" ;;
	esac
	case $l in
	"# kmsg: "*) kernel_line kmsg "${l#\# kmsg: }" ;;
	\[*) kernel_line con "$l" ;;
	esac
}

# Parse what the console log gained since byte $off. While QEMU runs, the last line
# may be incomplete: it is left for the next call.
read_console() {	# ALIVE
	local size chunk rest line

	[ -f "$log" ] || return 0
	size=$(stat -c %s "$log")
	[ "$size" -gt "$off" ] || return 0
	chunk=$(tail -c +$((off + 1)) "$log" | head -c $((size - off)) | tr -d '\0'; echo x)
	chunk=${chunk%x}
	rest=
	if [ "$1" = 1 ]; then
		rest=${chunk##*$'\n'}
		chunk=${chunk%"$rest"}
	fi
	off=$((size - $(LC_ALL=C; echo ${#rest})))
	[ -n "$chunk" ] || return 0
	while IFS= read -r line; do
		parse_line "$line"
	done <<< "${chunk%$'\n'}"
}

# ---- boot loop ----
todo=("${!names[@]}")		# indexes of tests not yet run
boot=0 reboots=0 noinit=0 ever_init=0
run_timeout=600
for t in "${tmos[@]}"; do run_timeout=$((run_timeout + t + TEST_MARGIN)); done
[ -n "${RUN_TIMEOUT:-}" ] && run_timeout=$RUN_TIMEOUT

while [ ${#todo[@]} -gt 0 ]; do
	boot=$((boot + 1))
	log=$LOGDIR/console-$boot.log
	d=$LOGDIR/initrd-$boot
	mkdir -p "$d"
	# a boot runs the tests of one kind: single-node ones, or two-node ones
	nodes_now=${nodes[${todo[0]}]}
	for i in "${todo[@]}"; do
		[ "${nodes[$i]}" = "$nodes_now" ] && echo "${names[$i]} ${paths[$i]} ${tmos[$i]}"
	done > "$d/tests.list"
	echo $((${#names[@]} - ${#todo[@]} + 1)) > "$d/tests.start"
	if [ "$nodes_now" = 1 ]; then
		# A second archive appended to the first: the kernel unpacks both.
		vm_initrd "$B/initramfs.cpio.gz" "$d" "$d/initrd" tests.list tests.start
		vm_start "$d/initrd" "$log" "$LOGDIR/qemu-$boot.err"
	else
		fabric_start "$B/initramfs.cpio.gz" "$d" "$log" "$LOGDIR/qemu-$boot.err"
		say "boot $boot: two nodes; node B's console: ${FABRIC_BLOG#$TOP/}"
	fi
	p_init=0 p_done=0 p_cur="" p_bad="" p_boot_bad="" p_warns=0 p_wtrace=""
	off=0 why="" b0=$(date +%s)
	while :; do
		alive=1
		kill -0 $qpid 2>/dev/null || alive=0
		read_console $alive
		if [ "$nodes_now" != 1 ] && ! fabric_poll && [ $alive = 1 ]; then
			why="node B's QEMU exited"
		fi
		[ $alive = 1 ] || break
		now=$(date +%s)
		if [ $p_init = 0 ] && [ $((now - b0)) -gt "$BOOT_TIMEOUT" ]; then
			why="boot timeout"
		elif [ -n "$p_cur" ]; then
			for i in "${!names[@]}"; do [ "${names[$i]}" = "$p_cur" ] && cur_tmo=${tmos[$i]}; done
			[ $((now - p_start)) -gt $((cur_tmo + TEST_MARGIN)) ] && why="hung"
		fi
		[ $((now - t_start)) -gt "$run_timeout" ] && why="run timeout (${run_timeout}s)"
		if [ -n "$why" ]; then
			[ "$nodes_now" != 1 ] && [ "$why" = hung ] && fabric_dump_blocked
			kill $qpid 2>/dev/null
			wait $qpid 2>/dev/null
			read_console 0
			break
		fi
		sleep 0.5
	done
	wait $qpid 2>/dev/null
	[ "$nodes_now" = 1 ] || fabric_stop

	if [ -n "$p_boot_bad" ]; then
		finish_test "boot-$boot" fail "kernel: $p_boot_bad" ""
	fi
	if [ $p_init = 0 ]; then
		noinit=$((noinit + 1))
		reason=${why:-"guest died"}
		grep -aq 'Oops: int3' "$log" && reason+=", Oops: int3 (known TCG early-boot flake)"
		say "boot $boot never reached /init ($reason); console: ${log#$TOP/}"
	else
		ever_init=1
		if [ -n "$p_cur" ]; then
			# the guest stopped inside a test
			[ -n "$why" ] || why="guest died (panic?)"
			p_tap=fail p_reason=$why
			[ -z "$p_bad" ] && grep -aq 'Kernel panic' "$log" && p_reason+=", kernel panic"
			cp "$log" "$LOGDIR/tests/$p_cur.console.log"
			close_segment
		elif [ $p_done = 0 ]; then
			say "boot $boot: guest stopped between tests (${why:-died}); console: ${log#$TOP/}"
		fi
	fi
	# drop the tests that got a verdict
	rest=()
	for i in "${todo[@]}"; do [ -n "${RES[${names[$i]}]:-}" ] || rest+=("$i"); done
	todo=("${rest[@]}")
	[ ${#todo[@]} -gt 0 ] || break
	[ -n "$why" ] && [[ $why == run\ timeout* ]] && break
	# every test of the boot's kind ran: the other kind's are next
	[ $p_done = 1 ] && continue
	if [ $reboots -ge "$MAX_REBOOTS" ]; then
		say "giving up after $boot boots"
		break
	fi
	reboots=$((reboots + 1))
	if [ $p_init = 0 ]; then
		say "retrying the boot ($reboots/$MAX_REBOOTS)"
	else
		say "continuing with ${#todo[@]} test(s) in a fresh boot ($reboots/$MAX_REBOOTS)"
	fi
done
for i in "${todo[@]}"; do finish_test "${names[$i]}" fail "not run" ""; done

# ---- summary ----
{
	echo "TAP version 13"
	echo "1..$((npass + nfail + nskip))"
	k=0
	for n in "${!RES[@]}"; do :; done
	for i in "${!names[@]}"; do
		n=${names[$i]}
		k=$((k + 1))
		case ${RES[$n]:-fail} in
		ok)   echo "ok $k $n" ;;
		skip) echo "ok $k $n # SKIP ${REASON[$n]}" ;;
		*)    echo "not ok $k $n # ${REASON[$n]:-failed}" ;;
		esac
	done
} > "$LOGDIR/results.tap"
for n in "${!TIME[@]}"; do [ -n "${TIME[$n]}" ] && LAST[$n]=${TIME[$n]}; done
for n in "${!LAST[@]}"; do echo "$n ${LAST[$n]}"; done | LC_ALL=C sort > "$TIMES"
say "$KVER ($ACCEL) done in $(($(date +%s) - t_start))s; logs: ${LOGDIR#$TOP/}/ (console-*.log, tests/<name>.log, results.tap)"
[ $ever_init = 1 ] || say "no boot reached /init"
echo "$npass passed, $nfail failed, $nskip skipped"
[ $nfail -eq 0 ] && [ $ever_init = 1 ]
exit
}
