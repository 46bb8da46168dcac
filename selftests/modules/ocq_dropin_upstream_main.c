// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* dropin_ulp.c on ib_core's own CQs: ib_alloc_cq() fills cq->wc, ocq never. */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <rdma/ib_verbs.h>

#define DROPIN_BACKEND "ib_cq"

static inline bool du_backend_ok(struct ib_cq *cq)
{
	return cq->wc;
}

#include "dropin_ulp.c"
