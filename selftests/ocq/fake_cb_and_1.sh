#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 60
# Arming a non-empty CQ with REPORT_MISSED both fires the callback and returns 1.
. /selftests/ocq/fake_lib.sh

fake_run fake_cb_and_1
