/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shim of <trace/events/ib_ocq.h>: the engine's tracepoints, with the
 * prototypes of the real header, compiled to nothing.
 */
#ifndef _TRACE_IB_OCQ_H
#define _TRACE_IB_OCQ_H

#include <linux/types.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_ocq.h>

static inline void trace_ocq_event(const struct ib_cq *cq)
{
}

static inline void trace_ocq_run(const struct ib_cq *cq, unsigned int unit)
{
}

static inline void trace_ocq_yield(const struct ib_cq *cq, unsigned int unit)
{
}

static inline void trace_ocq_poll(const struct ib_cq *cq, int n, bool armed)
{
}

static inline void trace_ocq_pause(const struct ib_cq *cq, bool postponed)
{
}

static inline void trace_ocq_resume(const struct ib_cq *cq)
{
}

static inline void trace_ocq_defer(const struct ib_cq *cq)
{
}

static inline void trace_ocq_rescue(const struct ib_cq *cq, unsigned int n)
{
}

#endif /* _TRACE_IB_OCQ_H */
