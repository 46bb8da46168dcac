#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# demo.sh - boot a Debian kernel in QEMU and run the ocq_demo ULP in it with ocq-demo.
#
# Usage: [ARGS="ocq-demo run options"] [SMP=2] [MEM=2G] [ACCEL=auto|tcg|kvm]
#        tools/testing/vm/demo.sh [METAPACKAGE]
#
# Sets up the host and builds everything as make check does (host-deps.sh, build.sh,
# initramfs.sh), boots the guest once, and there loads ib_ocq.ko and ocq_demo.ko and runs
#
#   ocq-demo run --conns 2 --mix null:1,echo:1,read:1,write:1 --duration 20 \
#                --path ocq-flow $ARGS
#
# (a later option overrides an earlier one, so ARGS can change any of them). ARGS is
# checked on the host first (ocq-demo run --dry-run). The progress lines and the results
# table of the guest are shown here as they come.
#
# Results: in the guest, ocq-demo writes its JSON file, which is then printed on the
# serial console between the lines "OCQ-DEMO-JSON-BEGIN" and "OCQ-DEMO-JSON-END"
# (each line prefixed with "# " by the guest's /init). This script cuts it out of the
# console log into build/demo/<KVER>/results.json and copies that to
# build/demo/results.json. The whole console is in build/demo/<KVER>/console.log.
#
# Exit status: that of ocq-demo run when it ran (0 done and verified, 1 failed,
# 2 usage error, 3 no control file); 2 when ARGS is refused on the host; 1 for anything
# else (build, boot, module missing or not loading, timeout, kernel warning).
set -uo pipefail

META=${1:-linux-image-amd64}
TOP=$(cd "$(dirname "$0")/../../.." && pwd)
VM=$TOP/tools/testing/vm
SMP=${SMP:-2}
MEM=${MEM:-2G}
ACCEL=${ACCEL:-auto}
ARGS=${ARGS:-}
BOOT_TIMEOUT=${BOOT_TIMEOUT:-180}	# until /init is reached
MAX_BOOTS=${MAX_BOOTS:-3}		# boots that never reach /init are retried
DEFAULTS=(--conns 2 --mix null:1,echo:1,read:1,write:1 --duration 20 --path ocq-flow)
BAD_RE='WARNING:|BUG:|Oops|soft lockup|hard LOCKUP|blocked for more than|refcount_t|list_add corruption|list_del corruption|UBSAN|KASAN|kernel BUG|general protection fault|Kernel panic'

say() { echo "demo: $*"; }
fatal() { say "FAILED: $*"; exit 1; }

"$VM"/host-deps.sh check || fatal "installing the host tools failed"
ENV=$("$VM"/build.sh "$META" | tail -1) && [ -f "$ENV" ] || fatal "build failed"
. "$ENV"
B=$TOP/build/$KVER
OUT=$TOP/build/demo/$KVER
rm -rf "$OUT" && mkdir -p "$OUT"
"$VM"/initramfs.sh "$ENV" "$B/initramfs.cpio.gz" || fatal "initramfs failed"

# ---- the ocq-demo command line, checked on the host ----
read -r -a user_args <<< "$ARGS"
run_args=(run "${DEFAULTS[@]}" "${user_args[@]}")
if ! start=$("$TOP"/build/ocq-demo/ocq-demo "${run_args[@]}" --dry-run); then
	say "ARGS='$ARGS' refused; the options: build/ocq-demo/ocq-demo --help"
	exit 2
fi
# Guest-side timeout: ocq-demo gives up by itself at about twice the duration plus 45 s.
dur_ms=$(sed -n 's/.* duration_ms=\([0-9]*\).*/\1/p' <<< "$start")
if [ "${dur_ms:-0}" -gt 0 ]; then
	tmo=$((dur_ms * 2 / 1000 + 120))
else
	tmo=${DEMO_TIMEOUT:-900}
fi

# ---- the modules ocq_demo.ko needs must be in the guest ----
for ko in "$B"/ko/ocq_demo.ko "$B"/ko/ib_ocq.ko; do
	[ -f "$ko" ] || continue
	for dep in $(modinfo -F depends "$ko" | tr ',' ' '); do
		[ -f "$B/ko/$dep.ko" ] || [ -f "$B/initramfs/lib/modules/$dep.ko" ] ||
			fatal "$(basename "$ko") needs the kernel module $dep, which the guest" \
				"does not load: add 'module $dep' to selftests/guest.conf"
	done
done

# ---- the guest's part: a one-test list for the guest's /init ----
q() { printf "'%s'" "${1//\'/\'\\\'\'}"; }	# single-quoted for sh
d=$OUT/initrd
mkdir -p "$d"
{
	cat <<'EOS'
# ocq-demo run in the guest, written by tools/testing/vm/demo.sh
fail() { echo "OCQ-DEMO-ERROR $*"; echo "OCQ-DEMO-EXIT 1"; exit 1; }
for m in ib_ocq ocq_demo; do
	[ -f /ko/$m.ko ] || fail "module missing: $m.ko was not built"
	grep -q "^$m " /proc/modules && continue
	insmod /ko/$m.ko || fail "insmod $m.ko failed"
done
c=/sys/kernel/debug/ocq_demo/control
[ -e $c ] || fail "ocq_demo.ko is loaded but $c does not exist"
EOS
	printf 'ocq-demo'
	for a in "${run_args[@]}"; do printf ' %s' "$(q "$a")"; done
	echo ' --json /tmp/ocq-demo.json'
	cat <<'EOS'
rc=$?
if [ -f /tmp/ocq-demo.json ]; then
	echo OCQ-DEMO-JSON-BEGIN; cat /tmp/ocq-demo.json; echo OCQ-DEMO-JSON-END
fi
rmmod ocq_demo || echo "OCQ-DEMO-ERROR rmmod ocq_demo failed"
echo "OCQ-DEMO-EXIT $rc"
exit $rc
EOS
} > "$d/ocq-demo-run.sh"
echo "ocq_demo /ocq-demo-run.sh $tmo" > "$d/tests.list"
echo 1 > "$d/tests.start"

# shellcheck source=tools/testing/vm/boot.sh
. "$VM"/boot.sh
vm_setup
vm_initrd "$B/initramfs.cpio.gz" "$d" "$d/initrd" tests.list tests.start ocq-demo-run.sh

say "$KVER: ocq-demo ${run_args[*]}"
say "boot: $ACCEL, -smp $SMP -m $MEM; console: ${OUT#"$TOP"/}/console.log"

# ---- boot, follow the console ----
# Per line: "# START ocq_demo" opens the run; from there "# "-lines are its output
# (shown, except the JSON), "# kmsg: " lines the kernel log during it (kept).
rc="" err="" in_run=0 in_json=0 init=0 bad="" kmsg=() qpid=""
trap '[ -n "$qpid" ] && kill "$qpid" 2>/dev/null' EXIT
handle() {
	local l=${1%$'\r'}

	case $l in
	"# OCQ-INIT"*) init=1; return ;;
	"# START ocq_demo") in_run=1; return ;;
	esac
	# the kernel log: on the console (loglevel 5: only what is serious), and all of
	# it during the run from "# kmsg: " lines
	if [[ $l == \[* || $l == "# kmsg: "* ]]; then
		[[ $l == "# kmsg: "* ]] && kmsg+=("${l#\# kmsg: }")
		[ $init = 1 ] && [ -z "$bad" ] && [[ $l =~ $BAD_RE ]] && bad=${l#\# kmsg: }
		return
	fi
	[ $in_run = 1 ] || return 0
	case $l in
	"# OCQ-DEMO-JSON-BEGIN") in_json=1 ;;
	"# OCQ-DEMO-JSON-END") in_json=0 ;;
	"# OCQ-DEMO-EXIT "*) rc=${l##* } ;;
	"# OCQ-DEMO-ERROR "*) err=${l#\# OCQ-DEMO-ERROR } ;;
	"not ok "*) in_run=0; [ -n "$rc$err" ] || err="guest: ${l#*# }" ;;
	"# TIME ocq_demo "*|"ok "*) in_run=0 ;;
	"# "*) [ $in_json = 1 ] || echo "${l#\# }" ;;
	"#") [ $in_json = 1 ] || echo ;;
	esac
}

log=$OUT/console.log
boot=0 why=""
while :; do
	boot=$((boot + 1))
	rm -f "$log"
	vm_start "$d/initrd" "$log" "$OUT/qemu.err"
	init=0 in_run=0 seen=0 why="" kmsg=() b0=$(date +%s)
	while :; do
		alive=1
		kill -0 $qpid 2>/dev/null || alive=0
		if [ -f "$log" ]; then
			# whole lines only; the last one may still be being written
			mapfile -t lines < <(tail -n +$((seen + 1)) "$log")
			n=${#lines[@]}
			[ $alive = 1 ] && [ "$n" -gt 0 ] && [ -n "$(tail -c 1 "$log")" ] && n=$((n - 1))
			for ((k = 0; k < n; k++)); do handle "${lines[$k]}"; done
			seen=$((seen + n))
		fi
		[ $alive = 1 ] || break
		now=$(date +%s)
		if [ $init = 0 ] && [ $((now - b0)) -gt "$BOOT_TIMEOUT" ]; then
			why="boot timeout (${BOOT_TIMEOUT}s)"
		elif [ $((now - b0)) -gt $((BOOT_TIMEOUT + tmo + 60)) ]; then
			why="timeout ($((BOOT_TIMEOUT + tmo + 60))s)"
		fi
		if [ -n "$why" ]; then
			kill $qpid 2>/dev/null
			break
		fi
		sleep 0.5
	done
	wait $qpid 2>/dev/null
	[ $init = 1 ] && break
	say "boot $boot never reached /init (${why:-guest died}); console: ${log#"$TOP"/}"
	[ "$boot" -lt "$MAX_BOOTS" ] || fatal "no boot reached /init"
done

# ---- the JSON, cut out of the console ----
sed -n '/^# OCQ-DEMO-JSON-BEGIN/,/^# OCQ-DEMO-JSON-END/p' "$log" | tr -d '\r' |
	sed -e '1d' -e '$d' | sed -n 's/^# \{0,1\}//p' > "$OUT/results.json"
if [ -s "$OUT/results.json" ]; then
	cp "$OUT/results.json" "$TOP/build/demo/results.json"
	say "results: ${OUT#"$TOP"/}/results.json (copied to build/demo/results.json)"
else
	rm -f "$OUT/results.json"
fi

show_kmsg() {
	[ ${#kmsg[@]} -gt 0 ] || return 0
	say "kernel log (last lines):"
	printf '  %s\n' "${kmsg[@]}" | tail -n 40
}
if [ -n "$bad" ]; then
	show_kmsg
	fatal "kernel problem: $bad"
fi
if [ -z "$rc" ]; then
	show_kmsg
	if [ -n "$why" ]; then
		fatal "$why; console: ${log#"$TOP"/}"
	fi
	fatal "the guest stopped before the demo ended (${err:-no exit status}); console: ${log#"$TOP"/}"
fi
if [ -n "$err" ]; then
	case $err in
	"module missing"*) fatal "$err for $KVER (drivers/infiniband/ulp/ocq_demo/ must build)" ;;
	esac
	show_kmsg
	fatal "$err"
fi
if [ "$rc" != 0 ]; then
	show_kmsg
	say "FAILED: ocq-demo run exited with status $rc"
	exit "$rc"
fi
say "PASS ($KVER)"
