/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Trace points of the ordered completion queue engine.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM ib_ocq

#if !defined(_TRACE_IB_OCQ_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_IB_OCQ_H

#include <linux/tracepoint.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_ocq.h>

/*
 * The event definitions keep the layout of the kernel's other trace headers,
 * which clang-format would fold into unreadable lines.
 */
/* clang-format off */
DECLARE_EVENT_CLASS(ocq_cq_class,
		    TP_PROTO(const struct ib_cq *cq),
		    TP_ARGS(cq),
		    TP_STRUCT__entry(__field(u32, cq_id)),
		    TP_fast_assign(__entry->cq_id = cq->res.id;),
		    TP_printk("cq.id=%u", __entry->cq_id));

/* the completion handler kicked the CQ unit */
DEFINE_EVENT(ocq_cq_class, ocq_event,
	     TP_PROTO(const struct ib_cq *cq),
	     TP_ARGS(cq));

/* ib_ocq_resume(), or the first arm */
DEFINE_EVENT(ocq_cq_class, ocq_resume,
	     TP_PROTO(const struct ib_cq *cq),
	     TP_ARGS(cq));

/* a CQ run ended unarmed: the deferred re-arm's timer starts the next one */
DEFINE_EVENT(ocq_cq_class, ocq_defer,
	     TP_PROTO(const struct ib_cq *cq),
	     TP_ARGS(cq));

DECLARE_EVENT_CLASS(ocq_unit_class,
		    TP_PROTO(const struct ib_cq *cq, unsigned int unit),
		    TP_ARGS(cq, unit),
		    TP_STRUCT__entry(__field(u32, cq_id)
				     __field(unsigned int, unit)),
		    TP_fast_assign(__entry->cq_id = cq->res.id;
				   __entry->unit = unit;),
		    TP_printk("cq.id=%u unit=%u", __entry->cq_id,
			      __entry->unit));

/* a run of a unit starts (unit 0 is the CQ run) */
DEFINE_EVENT(ocq_unit_class, ocq_run,
	     TP_PROTO(const struct ib_cq *cq, unsigned int unit),
	     TP_ARGS(cq, unit));

/* a run spent its budget and requeued itself */
DEFINE_EVENT(ocq_unit_class, ocq_yield,
	     TP_PROTO(const struct ib_cq *cq, unsigned int unit),
	     TP_ARGS(cq, unit));

/* one poll of the CQ run: completions taken (or -errno), and whether it armed */
TRACE_EVENT(ocq_poll,
	    TP_PROTO(const struct ib_cq *cq, int n, bool armed),
	    TP_ARGS(cq, n, armed),
	    TP_STRUCT__entry(__field(u32, cq_id)
			     __field(int, n)
			     __field(bool, armed)),
	    TP_fast_assign(__entry->cq_id = cq->res.id;
			   __entry->n = n;
			   __entry->armed = armed;),
	    TP_printk("cq.id=%u n=%d armed=%d", __entry->cq_id, __entry->n,
		      __entry->armed));

/* paused by ib_ocq_pause(), or by a postponed arm */
TRACE_EVENT(ocq_pause,
	    TP_PROTO(const struct ib_cq *cq, bool postponed),
	    TP_ARGS(cq, postponed),
	    TP_STRUCT__entry(__field(u32, cq_id)
			     __field(bool, postponed)),
	    TP_fast_assign(__entry->cq_id = cq->res.id;
			   __entry->postponed = postponed;),
	    TP_printk("cq.id=%u postponed=%d", __entry->cq_id,
		      __entry->postponed));

/* completions found by a run the watchdog started */
TRACE_EVENT(ocq_rescue,
	    TP_PROTO(const struct ib_cq *cq, unsigned int n),
	    TP_ARGS(cq, n),
	    TP_STRUCT__entry(__field(u32, cq_id)
			     __field(unsigned int, n)),
	    TP_fast_assign(__entry->cq_id = cq->res.id;
			   __entry->n = n;),
	    TP_printk("cq.id=%u rescued=%u", __entry->cq_id, __entry->n));
/* clang-format on */

#endif /* _TRACE_IB_OCQ_H */

#include <trace/define_trace.h>
