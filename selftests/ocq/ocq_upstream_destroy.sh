#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 120
# expect-warn: ib_destroy_cq_user\+0x
# ib_core's ib_destroy_cq_user() (what ib_destroy_cq() calls), ib_resize_cq() and
# rdma_set_cq_moderation() on an ordered CQ of each kind (as ocq_upstream_free, on
# the fake provider): ib_destroy_cq_user() twice, -EOPNOTSUPP both times, its
# WARN_ON_ONCE() on a shared CQ the one WARNING in the kernel log; ib_resize_cq() and
# rdma_set_cq_moderation() -EOPNOTSUPP without a warning, the provider's resize_cq
# and modify_cq never called; nothing destroyed.  Then the CQ delivers 128
# completions of two QPs once each and in order, and ocq's free frees it: ib_ocq's
# live and allocs counts come back.  (ib_destroy_cq() itself adds a WARN_ONCE() of
# the calling module's when the destroy fails: a second warning, which is why the
# test calls ib_destroy_cq_user().)
. /selftests/ocq/ocq_upstream_lib.sh

upstream_run destroy 'ib_destroy_cq_user\+0x'
exit $?
