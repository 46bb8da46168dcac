#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 60
# Every -EINVAL of __ib_ocq_alloc()/ib_ocq_alloc() and of the poll helpers, none with a
# warning (the guest panics on one); the limits themselves are accepted.
. /selftests/ocq/fake_lib.sh

fake_run fake_bad_attr
