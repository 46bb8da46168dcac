#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 120
# expect-warn: ib_free_cq\+0x
# ib_core's own ib_free_cq() on an ordered CQ of each kind, as a ULP file the
# conversion missed calls it (selftests/modules/ocq_upstream_main.c, which does not
# include <rdma/ib_ocq_dropin.h>): a CQ of its own in strict (workqueue), flow
# (unbound) and parallel (softirq) mode, a pooled one and an IB_POLL_DIRECT one, on
# the fake provider.  Two calls each: ib_free_cq() refuses the CQ, whose one use ocq
# holds, with its WARN_ON_ONCE() - exactly one WARNING in the kernel log, at
# ib_free_cq, for the first call - and frees nothing; the CQ then delivers 128
# completions of two QPs once each and in order, and ib_ocq_free_cq() (the pool's put
# and destroy) frees it: ib_ocq's live and allocs counts come back.  The guest boots
# with panic_on_warn=1: the test turns it off for the calls.  An ib_free_cq() that
# destroys the CQ under ocq fails the test, which then leaves that ordered CQ alone.
. /selftests/ocq/ocq_upstream_lib.sh

upstream_run free 'ib_free_cq\+0x'
exit $?
