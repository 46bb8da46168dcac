// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* pool_bench.c on ocq's CQ pool, switched by the include below. */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <rdma/ib_ocq_dropin.h>

#define PB_BACKEND "ocq"
#define PB_OCQ

#include "pool_bench.c"
MODULE_DESCRIPTION("rxe_pool bench on ocq's CQ pool");
