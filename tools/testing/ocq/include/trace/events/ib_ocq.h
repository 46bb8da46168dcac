/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shim of <trace/events/ib_ocq.h>: the engine's tracepoints, with the
 * prototypes of the real header.  Each reads the CQ, as the kernel's do
 * (its id): one that runs after the CQ's destroy is a use after free.
 */
#ifndef _TRACE_IB_OCQ_H
#define _TRACE_IB_OCQ_H

#include <linux/types.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_ocq.h>
#include <ocq_sim.h>

static inline void trace_ocq_event(const struct ib_cq *cq)
{
	ocq_sim_cq_read(cq);
}

static inline void trace_ocq_run(const struct ib_cq *cq, unsigned int unit)
{
	ocq_sim_cq_read(cq);
}

static inline void trace_ocq_yield(const struct ib_cq *cq, unsigned int unit)
{
	ocq_sim_cq_read(cq);
}

static inline void trace_ocq_poll(const struct ib_cq *cq, int n, bool armed)
{
	ocq_sim_cq_read(cq);
}

static inline void trace_ocq_pause(const struct ib_cq *cq, bool postponed)
{
	ocq_sim_cq_read(cq);
}

static inline void trace_ocq_resume(const struct ib_cq *cq)
{
	ocq_sim_cq_read(cq);
}

static inline void trace_ocq_defer(const struct ib_cq *cq)
{
	ocq_sim_cq_read(cq);
}

static inline void trace_ocq_rescue(const struct ib_cq *cq, unsigned int n)
{
	ocq_sim_cq_read(cq);
}

#endif /* _TRACE_IB_OCQ_H */
