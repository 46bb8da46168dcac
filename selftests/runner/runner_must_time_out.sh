#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 5
# Overruns its timeout on purpose: make check-runner checks that the guest kills it and
# fails it with the timeout named.
echo "this test overruns its timeout on purpose"
sleep 100000
