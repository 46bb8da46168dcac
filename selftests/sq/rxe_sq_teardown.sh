#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 120
# Send queue accounting: drain a QP in the middle of a stream; every outstanding
# request is released exactly once, by its flush completion or by release_all.
. /selftests/lib/ksft.sh

# ocq_sq_test links against the accounting's exports in ib_ocq.ko
grep -q '^ib_ocq ' /proc/modules || insmod /ko/ib_ocq.ko || ksft_fail "insmod ib_ocq.ko"

insmod_test ocq_sq_test.ko test=teardown depth=64
