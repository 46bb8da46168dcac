#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 300
# Ordered CQs that dispatch by wr_id (ib_ocq_attr.dispatch), for ULPs that post with a
# wr_id, not an ib_cqe: fake_weak's stream in each mode, on a workqueue, in the softirq
# and polled directly (ib_ocq_process_cq_direct()), each completion's wr_id an encoded
# request (not an address: an engine that took it for an ib_cqe and called done() would
# fault), handed to dispatch() untouched; nothing lost, in order per mode, process()
# before dispatch() in parallel mode.
. /selftests/ocq/fake_lib.sh

rc=0
for ctx in workqueue softirq direct; do
	echo "# poll_ctx=$ctx"
	fake_run ocq_wrid poll_ctx=$ctx || rc=$?
done
exit $rc
