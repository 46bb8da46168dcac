#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 120
# skip-ok: needs two online CPUs
# Parallel mode, two workers: while one completion's process() runs for up to 1 s, a cheap
# completion handed on behind it is processed by the other worker meanwhile.
. /selftests/ocq/fake_lib.sh

fake_run fake_parallel_slow
