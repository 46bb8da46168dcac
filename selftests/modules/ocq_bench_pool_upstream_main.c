// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* pool_bench.c on ib_core's CQ pool, ib_cq_pool_get(). */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <rdma/ib_verbs.h>

#define PB_BACKEND "ib_cq"

#include "pool_bench.c"
MODULE_DESCRIPTION("rxe_pool bench on ib_core's CQ pool");
