# SPDX-License-Identifier: GPL-2.0
#
# fake_lib.sh - shared by the fake provider tests (source it: . /selftests/ocq/fake_lib.sh).
#
#   fake_run SCENARIO [ARG=VALUE...]   run ocq_test_fake.ko scenario=SCENARIO [ARGS],
#                                      see selftests/modules/ocq_test_fake_main.c
#
# Loads ib_ocq.ko first unless it is loaded (and unloads it after), and fails when
# an ordered CQ outlives the module (the registry count in debugfs).
. /selftests/lib/ksft.sh

FAKE_LIVE=/sys/kernel/debug/ib_ocq/live

fake_run() {
	local sc="$1" loaded=0 live0 live1 rc=0

	shift
	if ! grep -q '^ib_ocq ' /proc/modules; then
		insmod /ko/ib_ocq.ko || ksft_fail "loading ib_ocq.ko failed"
		loaded=1
	fi
	live0=$(cat "$FAKE_LIVE") || ksft_fail "no $FAKE_LIVE"
	insmod_test ocq_test_fake.ko scenario="$sc" "$@" || rc=$?
	live1=$(cat "$FAKE_LIVE")
	if [ "$live1" != "$live0" ]; then
		echo "FAIL: $live0 ordered CQs live before, $live1 after"
		rc=$KSFT_FAIL
	fi
	if [ $loaded = 1 ] && ! rmmod ib_ocq; then
		echo "FAIL: rmmod ib_ocq failed"
		rc=$KSFT_FAIL
	fi
	return "$rc"
}
