#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 120
# Create, stream, drain, free under late completion handler calls, many times; no leak.
. /selftests/ocq/fake_lib.sh

fake_run fake_teardown_race
