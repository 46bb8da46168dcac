#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 60
# SEND/RECV between two RC QPs on rxe0: both complete and the payload arrives intact.
. /selftests/lib/ksft.sh

insmod_test ocq_smoke.ko test=send_recv
