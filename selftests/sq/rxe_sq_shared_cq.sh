#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 180
# Send queue accounting: four QPs send and receive on one small CQ under a shared
# CQ credit (signaled sends and receives take one); the CQ never overruns.
. /selftests/lib/ksft.sh

# ocq_sq_test links against the accounting's exports in ib_ocq.ko
grep -q '^ib_ocq ' /proc/modules || insmod /ko/ib_ocq.ko || ksft_fail "insmod ib_ocq.ko"

insmod_test ocq_sq_test.ko test=shared_cq sends=20000 depth=16 cq_size=100
