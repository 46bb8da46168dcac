#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 30
# Exits 0 with a kernel warning in the log: make check-runner checks that the warning
# fails the test. A real WARN would also panic the guest (panic_on_warn=1); this one is
# only the line that a WARN prints, written to the kernel log.
echo "this test leaves a warning in the kernel log on purpose"
echo "<4>WARNING: CPU: 0 PID: $$ at runner_must_splat.sh: a warning on purpose" > /dev/kmsg
sleep 2
