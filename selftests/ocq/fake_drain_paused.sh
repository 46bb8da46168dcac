#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 300
# ib_drain_qp() on both QPs of an ordered CQ that is paused, and of one whose arm is
# postponed and never resumed, strict, flow and parallel, completions of both QPs waiting:
# each drain returns within two leases, after every completion of its QP, in order;
# process() never sees the drain's flush.
. /selftests/ocq/fake_lib.sh

fake_run fake_drain_paused
