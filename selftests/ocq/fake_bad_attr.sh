#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 60
# Every -EINVAL of __ib_ocq_alloc()/ib_ocq_alloc() and of the poll helpers, and of an
# unknown poll context from ib_ocq_alloc_cq(), ib_ocq_alloc_cq_any() and
# ib_ocq_cq_pool_get() (as ib_alloc_cq() and ib_cq_pool_get() have it), none with a
# warning (the guest panics on one); the limits themselves are accepted.
. /selftests/ocq/fake_lib.sh

fake_run fake_bad_attr
