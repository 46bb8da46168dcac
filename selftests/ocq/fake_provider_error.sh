#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 180
# The provider's poll_cq and req_notify_cq fail with -EIO now and then: nothing lost, in
# order, provider_errors > 0, and the CQ run retried by itself (no watchdog).
. /selftests/ocq/fake_lib.sh

fake_run fake_provider_error
