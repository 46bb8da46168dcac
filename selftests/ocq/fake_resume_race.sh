#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 300
# IB_OCQ_POSTPONE_ARM with pause_ms at its maximum: resumes from a kthread on every CPU race
# the run, the provider slow to arm; after the last one everything pushed before and after
# it is delivered within 500 ms, lease_resumes == 0.
. /selftests/ocq/fake_lib.sh

fake_run fake_resume_race
