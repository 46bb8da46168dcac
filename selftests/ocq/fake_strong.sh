#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 60
# A strong provider: arming with entries pending fires at once; REPORT_MISSED always 0 (IB_ARM_STRONG never re-polls).
. /selftests/ocq/fake_lib.sh

fake_run fake_strong
