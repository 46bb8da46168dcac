#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 60
# The smoke module loads and unloads cleanly.
. /selftests/lib/ksft.sh

mark=$(ksft_mark)
insmod_test ocq_smoke.ko test=load_unload || exit
grep -q '^ocq_smoke ' /proc/modules && ksft_fail "ocq_smoke still listed after rmmod"
ksft_kmsg_since "$mark" ocq_smoke | grep -q '^# exit' || ksft_fail "module exit did not run"
exit 0
