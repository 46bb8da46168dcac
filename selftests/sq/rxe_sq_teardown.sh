#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 120
# Send queue accounting: drain a QP in the middle of a stream; every outstanding
# request is released exactly once, by its flush completion or by release_all.
. /selftests/lib/ksft.sh

insmod_test ocq_sq_test.ko test=teardown depth=64
