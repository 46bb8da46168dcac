#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 180
# An upstream IB_POLL_SOFTIRQ CQ (ib_alloc_cq() on the fake provider) keeps its share
# of the CPU's irq_poll beside a busy ordered CQ (selftests/modules/ocq_softirq_main.c,
# test=share).  On one CPU a timer raises, in hard irq (on PREEMPT_RT in the timer
# softirq), one upstream completion per tick and, in phase B, 32 for a strict OCQ
# whose budget of 2 makes it yield after each poll (the engine polls batches of up to
# 16): two runs a tick that yield and one that arms.  irq_poll shares the CPU by the
# work polls report: a round runs polls until they reported 256 (or a jiffy passed),
# the end of an interrupt runs at most 10 rounds before it hands every poll left, the
# upstream CQ's too, to ksoftirqd.  So a poll that reports its whole weight when it
# yields ends the round and takes a tenth of what the interrupt's end gives everybody.
# Measured: IRQ_POLL softirq rounds on the CPU (/proc/softirqs), phase A (the upstream
# load alone) against phase B (beside the busy OCQ), per OCQ run: at most 50 per 100
# runs (reporting its work, the OCQ adds a round a tick, 33 per 100 runs; reporting
# its weight at each yield, 100).  Counts only, the median of three alternations; the
# upstream done() calls in ksoftirqd are printed.
. /selftests/ocq/fake_lib.sh

loaded=
if ! grep -q '^ib_ocq ' /proc/modules; then
	insmod /ko/ib_ocq.ko || ksft_fail "insmod ib_ocq.ko"
	loaded=1
fi
rc=$KSFT_PASS
insmod_test ocq_softirq_test.ko test=share || rc=$KSFT_FAIL
live=$(cat /sys/kernel/debug/ib_ocq/live) || ksft_fail "no ib_ocq live count"
[ "$live" = 0 ] || { echo "FAIL: $live ordered CQs live"; rc=$KSFT_FAIL; }
if [ -n "$loaded" ] && ! rmmod ib_ocq; then
	echo "FAIL: rmmod ib_ocq"
	rc=$KSFT_FAIL
fi
exit $rc
