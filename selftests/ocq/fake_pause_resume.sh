#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 120
# Random ib_ocq_pause()/ib_ocq_resume() while streaming, also with IB_OCQ_POSTPONE_ARM.
. /selftests/ocq/fake_lib.sh

fake_run fake_pause_resume
