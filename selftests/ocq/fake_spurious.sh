#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 60
# Callbacks with an empty CQ: a periodic timer and stale interrupts after a draining poll.
. /selftests/ocq/fake_lib.sh

fake_run fake_spurious
