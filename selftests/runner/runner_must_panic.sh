#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 30
# Panics the guest on purpose (as a WARN does, with panic_on_warn=1): make check-runner
# checks that the test is failed with the panic named, and that the tests after it run
# in a fresh boot.
echo "this test panics the guest on purpose"
echo c > /proc/sysrq-trigger
sleep 30
echo "the guest did not panic"
exit 1
