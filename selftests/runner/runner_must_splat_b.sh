#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 60
# nodes: 2
# A two-node test that exits 0 with a kernel warning in node B's log: make
# check-runner checks that the warning on the other node fails the test on node A,
# and that node B answered on the control channel (a WARNING written by node A would
# carry no "[B]").
. /selftests/lib/ksft.sh
. /selftests/lib/fabric.sh

fab_require
echo "this test leaves a warning in node B's kernel log on purpose"
fab_b 'echo "<4>WARNING: CPU: 0 PID: $$ at runner_must_splat_b.sh: a warning on node B on purpose" > /dev/kmsg' ||
	ksft_fail "node B did not write the warning"
sleep 2
