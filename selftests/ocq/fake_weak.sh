#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 60
# An IBA-weak provider: events only for entries added after arming; REPORT_MISSED returns 1 iff the CQ is not empty.
. /selftests/ocq/fake_lib.sh

fake_run fake_weak
