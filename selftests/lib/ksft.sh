# SPDX-License-Identifier: GPL-2.0
#
# ksft.sh - helpers for the guest test scripts (source it: . /selftests/lib/ksft.sh).
#
# A test script exits 0 (pass), 1 (fail) or 4 (skip), as kselftests do. Its output is
# shown as TAP diagnostics; the last "SKIP: reason" line is the skip reason.
#
#   ksft_skip "reason"          print SKIP: reason, exit 4
#   ksft_fail "reason"          print FAIL: reason, exit 1
#   ksft_mark                   write a unique marker to the kernel log, print it
#   ksft_kmsg_since MARK [MOD]  kernel log lines after MARK (only MOD's, prefix removed)
#   ksft_without_panic_on_warn CMD...
#                               run CMD with /proc/sys/kernel/panic_on_warn 0 (restored
#                               after), for a test that provokes the one WARN its
#                               "# expect-warn: ERE" header declares; returns CMD's
#                               status.  The test must check itself that the WARN came
#                               (the runner fails it if it did not, or came twice).
#   ksft_debug_kernel           true on the debug kernel (make check DEBUG_KERNEL=),
#                               which is several times slower: scale fixed time limits
#   insmod_test MOD.ko [args]   run a test module, see below
#   kmod_load NAME [params]     load a kernel module of a "kmod" line of guest.conf with
#                               its dependencies (params are NAME's); 0 if NAME is loaded
#   kmod_loaded NAME            true if module NAME (- or _) is in /proc/modules
#
# Test modules follow tools/testing/selftests/kselftest_module.h: module init runs the
# tests, prints KTAP lines with pr_info() (pr_fmt "MOD: ") and fails the load (returns
# an error) if a test failed. A test skipped for a missing prerequisite is reported as
# "ok N name # SKIP reason" with the load succeeding. insmod_test loads the module
# (from /ko/ unless a path is given), prints its KTAP lines, rmmods it and returns
# 0 if all passed, 1 if the load or rmmod failed or a result is "not ok",
# 4 if a result was a SKIP (one is enough: a subtest that did not run is not a pass),
# with a "SKIP: MOD: N of M subtests skipped: REASONS" line.  A test skips only for a
# reason its header declares ("# skip-ok: ERE", matched against the SKIP reason by
# tools/testing/vm/check.sh); any other skip fails.

KSFT_PASS=0
KSFT_FAIL=1
KSFT_SKIP=4

ksft_skip() {
	echo "SKIP: $*"
	exit $KSFT_SKIP
}

ksft_fail() {
	echo "FAIL: $*"
	exit $KSFT_FAIL
}

ksft_mark() {
	local m="ksft-mark-$$-$(cut -d' ' -f1 /proc/uptime)"

	echo "$m" > /dev/kmsg
	echo "$m"
}

ksft_kmsg_since() {
	local mark=$1 mod=$2

	dmesg | sed -n "/$mark/,\$p" | sed 's/^\[[^]]*\] //' |
		if [ -n "$mod" ]; then sed -n "s/^$mod: //p"; else sed 1d; fi
}

ksft_without_panic_on_warn() {
	local f=/proc/sys/kernel/panic_on_warn old rc=0

	old=$(cat $f) || return 1
	echo 0 > $f || return 1
	"$@" || rc=$?
	echo "$old" > $f || { echo "ksft_without_panic_on_warn: cannot restore $f to $old"; rc=1; }
	return $rc
}

# The debug kernel's release is <version>-debug-<flavour>; lockdep, KCSAN and kmemleak
# are its marks on any other build.
ksft_debug_kernel() {
	case $(uname -r) in *-debug-*) return 0 ;; esac
	[ -e /proc/lockdep ] || [ -e /sys/kernel/debug/kcsan ] || [ -e /sys/kernel/debug/kmemleak ]
}

insmod_test() {
	local ko=$1 mod mark ktap rc=0 nres nskip

	shift
	case $ko in
	*/*) ;;
	*) ko=/ko/$ko ;;
	esac
	[ -f "$ko" ] || { echo "insmod_test: $ko not found"; return $KSFT_FAIL; }
	mod=$(basename "$ko" .ko)
	mark=$(ksft_mark)
	insmod "$ko" "$@" || rc=$?
	ktap=$(ksft_kmsg_since "$mark" "$mod")
	echo "$ktap"
	if [ $rc -ne 0 ]; then
		echo "insmod_test: loading $mod $* failed ($rc)"
		return $KSFT_FAIL
	fi
	if ! rmmod "$mod"; then
		echo "insmod_test: rmmod $mod failed"
		return $KSFT_FAIL
	fi
	if echo "$ktap" | grep -q '^not ok '; then
		echo "insmod_test: $mod: $(echo "$ktap" | grep -c '^not ok ') not ok"
		return $KSFT_FAIL
	fi
	nres=$(echo "$ktap" | grep -c '^ok ')
	nskip=$(echo "$ktap" | grep -c '^ok .* # SKIP')
	if [ "$nres" -eq 0 ]; then
		echo "insmod_test: $mod printed no KTAP result" \
			"(its mark $mark: $(dmesg | grep -c "$mark") line(s) of dmesg)"
		return $KSFT_FAIL
	fi
	if [ "$nskip" -gt 0 ]; then
		echo "SKIP: $mod: $nskip of $nres subtests skipped:" \
			"$(echo "$ktap" | sed -n 's/^ok .* # SKIP *//p' | sort -u | tr '\n' ';' |
				sed 's/;$//; s/;/; /g')"
		return $KSFT_SKIP
	fi
	return $KSFT_PASS
}

kmod_loaded() {
	grep -q "^$(echo "$1" | tr - _) " /proc/modules
}

# A dependency that fails to load is reported and passed over (under TCG's default CPU
# crct10dif-pclmul, a soft dependency, fails with ENODEV); NAME itself must load.
kmod_load() {
	local name=$1 deps=/lib/modules/deps/$1 f m

	shift
	[ -f "$deps" ] || { echo "kmod_load: $name is no kmod line of guest.conf"; return 1; }
	for f in $(cat "$deps"); do
		m=${f%.ko}
		kmod_loaded "$m" && continue
		if [ "$(echo "$m" | tr - _)" = "$(echo "$name" | tr - _)" ]; then
			insmod "/lib/modules/$f" "$@" || { echo "kmod_load: insmod $f failed"; return 1; }
		else
			insmod "/lib/modules/$f" 2>/dev/null || echo "kmod_load: $name: dependency $f did not load"
		fi
	done
	kmod_loaded "$name"
}
