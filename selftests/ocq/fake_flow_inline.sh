#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 120
# Flow mode: the CQ run calls done() itself for a batch of one flow of up to IB_OCQ_HOL_DONES
# while every domain is idle (no hop), and hands the batch on to the domains when one is busy,
# when it is longer, or when it holds two flows; A's done() calls stay in order and never overlap.
. /selftests/ocq/fake_lib.sh

fake_run fake_flow_inline
