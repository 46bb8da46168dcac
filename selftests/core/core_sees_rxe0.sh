#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 60
# An ib_client's .add sees rxe0, a RoCE device with port 1 ACTIVE.
. /selftests/lib/ksft.sh

[ -e /sys/class/infiniband/rxe0 ] || ksft_fail "rxe0 not set up (see the setup lines)"
insmod_test ocq_smoke.ko test=sees_rxe0
