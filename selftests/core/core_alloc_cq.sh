#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 60
# ib_alloc_cq/ib_free_cq in every poll context on every completion vector of rxe0.
. /selftests/lib/ksft.sh

insmod_test ocq_smoke.ko test=alloc_cq
