#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 300
# DIM on a device with modify_cq and use_cq_dim (the fake provider), as
# ib_alloc_cq() does it: 10^5 completions per mode, strict, flow and parallel,
# delivered once and in order; the OCQ's DIM calls modify_cq, always with one of its
# profiles (Documentation/api.rst); then the same traffic, per mode, through an OCQ
# with the deferred re-arm and through one with the suspension, which keep the
# provider's DIM off: no modify_cq for them. The other fake scenarios check that a CQ
# of a device without use_cq_dim is never moderated.
. /selftests/ocq/fake_lib.sh

fake_run fake_dim
