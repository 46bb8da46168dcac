#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 180
# Send queue accounting: four QPs send and receive on one small CQ under a shared
# CQ credit (signaled sends and receives take one); the CQ never overruns.
. /selftests/lib/ksft.sh

insmod_test ocq_sq_test.ko test=shared_cq sends=20000 depth=16 cq_size=100
