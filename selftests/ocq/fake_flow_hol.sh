#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 120
# skip-ok: needs two online CPUs
# Flow mode: while flow A works through a backlog of 5 ms done() calls, each completion of flow
# B waits for at most IB_OCQ_HOL_DONES (+8) A done() calls, with A's backlog 32 and 64.
. /selftests/ocq/fake_lib.sh

fake_run fake_flow_hol
