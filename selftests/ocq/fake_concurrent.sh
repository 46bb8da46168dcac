#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 120
# skip-ok: needs two online CPUs
# Every event runs the completion handler on two CPUs at once.
. /selftests/ocq/fake_lib.sh

fake_run fake_concurrent
