/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one-line switch of a ULP from ib_core's CQ API to ordered CQs:
 * include this header after <rdma/ib_verbs.h> (it includes it first) and
 * every ib_alloc_cq(), ib_alloc_cq_any(), ib_free_cq(), ib_cq_pool_get(),
 * ib_cq_pool_put() and ib_process_cq_direct() below it becomes ocq's
 * drop-in equivalent, with the default attributes: %IB_OCQ_STRICT for a CQ
 * of its own, %IB_OCQ_FLOW for a pooled one on a workqueue (its QPs spread
 * over a domain per CPU), %IB_OCQ_STRICT for a pooled one on
 * %IB_POLL_SOFTIRQ.  Every file of the ULP that allocates or frees CQs must
 * include it: ib_core's ib_free_cq() or ib_destroy_cq() on an ordered CQ
 * warns once and frees nothing (ocq holds a use of its CQs and marks them
 * shared), and the CQ goes on working until ocq frees it; ib_resize_cq()
 * and rdma_set_cq_moderation() refuse it.  Nothing else of the ULP
 * changes: its done() handlers read cq->cq_context as before,
 * ib_drain_qp() works.
 *
 * Every poll context is provided: with %IB_POLL_DIRECT the ULP's own
 * ib_process_cq_direct() calls poll the CQ, one caller at a time.
 * A ULP that wants other attributes calls ib_ocq_alloc_cq() and
 * ib_ocq_cq_pool_get() itself (Documentation/api.rst).
 */
#ifndef _RDMA_IB_OCQ_DROPIN_H
#define _RDMA_IB_OCQ_DROPIN_H

#include <rdma/ib_verbs.h>
#include <rdma/ib_ocq.h>

#define ib_alloc_cq(dev, private, nr_cqe, comp_vector, poll_ctx) \
	ib_ocq_alloc_cq(dev, private, nr_cqe, comp_vector, poll_ctx, NULL)
#define ib_alloc_cq_any(dev, private, nr_cqe, poll_ctx) \
	ib_ocq_alloc_cq_any(dev, private, nr_cqe, poll_ctx, NULL)
#define ib_free_cq(cq) ib_ocq_free_cq(cq)
#define ib_cq_pool_get(dev, nr_cqe, comp_vector_hint, poll_ctx) \
	ib_ocq_cq_pool_get(dev, nr_cqe, comp_vector_hint, poll_ctx, NULL)
#define ib_cq_pool_put(cq, nr_cqe) ib_ocq_cq_pool_put(cq, nr_cqe)
#define ib_process_cq_direct(cq, budget) ib_ocq_process_cq_direct(cq, budget)

#endif /* _RDMA_IB_OCQ_DROPIN_H */
