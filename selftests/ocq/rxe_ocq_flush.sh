#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 180
# Every QP moved to IB_QPS_ERR mid-stream, with the strict, flow and parallel ordered
# CQs: the flushed completions (IB_WC_WR_FLUSH_ERR) come in posting order after the
# successful ones, each once; then the QPs drain and everything is freed.
. /selftests/ocq/rxe_lib.sh

rxe_ocq_tests flush
