// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* dropin_ulp.c switched to ordered CQs by the one line below. */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <rdma/ib_ocq_dropin.h>

#define DROPIN_BACKEND "ocq"

/* an ordered CQ, and its own count says it dispatched the completions */
static inline bool du_backend_ok(struct ib_cq *cq)
{
	struct ib_ocq *ocq = ib_cq_to_ocq(cq);
	struct ib_ocq_stats s;

	if (!ocq)
		return false;
	ib_ocq_get_stats(ocq, &s);
	return s.completions > 0;
}

#include "dropin_ulp.c"
