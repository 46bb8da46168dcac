#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 90
# Events are sometimes dropped: passes with the watchdog (rescues reported), stalls without it.
. /selftests/ocq/fake_lib.sh

fake_run fake_lossy
