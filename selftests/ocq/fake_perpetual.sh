#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 240
# REPORT_MISSED always returns 1 and never arms: no livelock, no lost completion.
. /selftests/ocq/fake_lib.sh

fake_run fake_perpetual
