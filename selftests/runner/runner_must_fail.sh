#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 30
# Fails on purpose: make check-runner checks that a failure is reported as one.
echo "this test fails on purpose"
exit 1
