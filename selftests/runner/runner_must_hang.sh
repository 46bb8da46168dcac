#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 5
# Hangs the guest on purpose: every other process, the guest's own timeout watchdog
# among them, is stopped, so the test never ends. make check-runner checks that the
# host fails it as hung and runs the tests after it in a fresh boot.
echo "this test hangs the guest on purpose"
kill -STOP -1
sleep 100000
