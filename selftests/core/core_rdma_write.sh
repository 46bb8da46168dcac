#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 60
# RDMA WRITE between two RC QPs on rxe0: it completes and writes exactly the payload.
. /selftests/lib/ksft.sh

insmod_test ocq_smoke.ko test=rdma_write
