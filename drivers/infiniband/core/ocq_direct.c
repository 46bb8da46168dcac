// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * IB_POLL_DIRECT: the ULP polls the CQ from its own context (nvme-rdma's
 * poll queues do, from blk-mq's polling), as with ib_process_cq_direct().
 * The CQ is never armed and no engine runs: order comes from one caller
 * at a time dispatching in the CQ's order, which also keeps the order of
 * every QP and every flow.
 */
#include <linux/bitops.h>
#include <linux/kernel.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_ocq.h>

#include "ocq_priv.h"

/*
 * One completion: to &ib_ocq_attr.dispatch if the ULP gave one, else to
 * its done().  As ib_cq does, one without an ib_cqe is dropped, and a
 * successful one without it is a ULP bug that warns.
 */
static void ib_ocq_direct_dispatch(struct ib_ocq *ocq, struct ib_wc *wc)
{
	if (ocq->attr.dispatch)
		ocq->attr.dispatch(ocq->cq, wc);
	else if (likely(wc->wr_cqe))
		wc->wr_cqe->done(ocq->cq, wc);
	else
		WARN_ON_ONCE(wc->status == IB_WC_SUCCESS);
}

/* Poll and dispatch up to @left completions; the caller owns the CQ. */
static unsigned int ib_ocq_direct_run(struct ib_ocq *ocq, struct ocq_direct *d,
				      unsigned int left)
{
	struct ib_cq *cq = ocq->cq;
	unsigned int done = 0;
	int i, n;

	while (left) {
		n = ib_poll_cq(cq,
			       min_t(unsigned int, left, ARRAY_SIZE(d->wcs)),
			       d->wcs);
		WRITE_ONCE(d->polls, d->polls + 1);
		if (n <= 0)
			break;
		for (i = 0; i < n; i++)
			ib_ocq_direct_dispatch(ocq, &d->wcs[i]);
		done += n;
		left -= n;
		WRITE_ONCE(d->completions, d->completions + n);
		if (n < ARRAY_SIZE(d->wcs))
			break;
	}
	return done;
}

/**
 * ib_ocq_process_cq_direct - process the completions of an %IB_POLL_DIRECT CQ
 * @cq: a CQ of ib_ocq_alloc_cq() with %IB_POLL_DIRECT
 * @budget: most completions to process; negative for no limit
 *
 * As ib_process_cq_direct(): polls @cq and calls wc->wr_cqe->done() of each
 * completion (or &ib_ocq_attr.dispatch) in the caller's context, in the
 * CQ's order.  Unlike it,
 * concurrent callers do not dispatch side by side: one owns the CQ for the
 * call, and a caller that finds it owned returns 0 at once.  What it looked
 * for is then the owner's to dispatch or stays in the CQ for the next call:
 * nothing is lost, nothing overtakes.  A done() that calls this on its own
 * CQ gets 0 too.
 *
 * The exception is ib_drain_qp() on a QP of a direct CQ: ib_core polls the
 * CQ with its own ib_process_cq_direct(), which knows nothing of the
 * owner, so while a drain runs, completions polled by it and by a caller of
 * this may be dispatched side by side.  A ULP that needs order there stops
 * its polling before it drains.
 *
 * A CQ that ocq did not allocate (a file of the ULP that was not
 * converted) is polled by ib_process_cq_direct() itself.
 *
 * Context: any context; does not sleep itself, done() runs in the
 * caller's context; not concurrently with ib_ocq_free_cq() of @cq.
 * Return: the completions dispatched; 0 if another caller owns the CQ, or
 * if @cq is an ordered CQ of another poll context (which warns once, as
 * ib_process_cq_direct() does).
 */
int ib_ocq_process_cq_direct(struct ib_cq *cq, int budget)
{
	struct ib_ocq *ocq = ib_cq_to_ocq(cq);
	struct ocq_direct *d;
	unsigned int done;

	if (!ocq)
		return ib_process_cq_direct(cq, budget);
	if (WARN_ON_ONCE(ocq->poll_ctx != IB_POLL_DIRECT) || !budget)
		return 0;
	d = &ocq->direct;
	/*
	 * A plain look first: a caller spinning on an owned CQ (blk-mq's
	 * polling) reads the line instead of bouncing it.  The acquire pairs
	 * with clear_bit_unlock() below: the last owner's stores.
	 */
	if (test_bit(0, &d->busy) || test_and_set_bit_lock(0, &d->busy)) {
		atomic64_inc(&d->contended);
		return 0;
	}
	done = ib_ocq_direct_run(ocq, d, budget < 0 ? UINT_MAX : budget);
	WRITE_ONCE(d->runs, d->runs + 1);
	if (!done)
		WRITE_ONCE(d->empty_runs, d->empty_runs + 1);
	clear_bit_unlock(0, &d->busy); /* pairs with test_and_set_bit_lock() */
	return min_t(unsigned int, done, INT_MAX);
}
EXPORT_SYMBOL(ib_ocq_process_cq_direct);

/* The counters of a direct OCQ, in ib_ocq_get_stats()'s terms. */
void ib_ocq_direct_stats(struct ib_ocq *ocq, struct ib_ocq_stats *s)
{
	struct ocq_direct *d = &ocq->direct;

	memset(s, 0, sizeof(*s));
	s->runs = READ_ONCE(d->runs);
	s->empty_runs = READ_ONCE(d->empty_runs);
	s->polls = READ_ONCE(d->polls);
	s->completions = READ_ONCE(d->completions);
	s->cq_errors = atomic64_read(&d->cq_errors);
	s->contended = atomic64_read(&d->contended);
}
