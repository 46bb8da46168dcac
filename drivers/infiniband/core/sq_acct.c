// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Send queue accounting, the part that is not on the per-post fast path:
 * set-up and teardown of the ring (the allocation and the free), reaping
 * on completion, undoing a failed post, the CQ credit's set-up and the
 * statistics snapshot.  The fast path (reserve, ib_sq_acct_post_send(),
 * the CQ credit's get and put) stays inline in <rdma/ib_sq_acct.h>.
 *
 * See Documentation/sq-accounting.rst.
 */
#include <linux/export.h>
#include <linux/limits.h>
#include <linux/log2.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <rdma/ib_sq_acct.h>

/**
 * ib_cq_credit_init - set up a shared CQ credit
 * @cc: the credit
 * @credits: completions the CQ can hold for the sharing queues, i.e. the
 *	CQ size less any headroom kept for drain and flush completions
 *
 * Context: Any context; before any queue uses @cc.
 * Return: 0, or -EINVAL if @credits is 0 or does not fit an int.
 */
int ib_cq_credit_init(struct ib_cq_credit *cc, u32 credits)
{
	if (!credits || credits > INT_MAX)
		return -EINVAL;
	atomic_set(&cc->avail, credits);
	atomic_set(&cc->blocked, 0);
	cc->size = credits;
	return 0;
}
EXPORT_SYMBOL(ib_cq_credit_init);

/**
 * ib_sq_acct_init - set up the accounting of one send queue
 * @sq: the accounting
 * @attr: parameters
 * @gfp: allocation flags for the ring
 *
 * Context: Process context if @gfp may sleep.
 * Return: 0, -EINVAL for bad parameters, or -ENOMEM.
 */
int ib_sq_acct_init(struct ib_sq_acct *sq, const struct ib_sq_acct_attr *attr,
		    gfp_t gfp)
{
	u32 size;

	if (attr->depth < 2 || attr->depth > (1U << 30) ||
	    attr->policy > IB_SQ_SIGNAL_ALL)
		return -EINVAL;
	size = roundup_pow_of_two(attr->depth);
	memset(sq, 0, sizeof(*sq));
	sq->ring = kcalloc(size, sizeof(*sq->ring), gfp);
	if (!sq->ring)
		return -ENOMEM;
	sq->limit = attr->depth;
	sq->mask = size - 1;
	sq->policy = attr->policy;
	sq->release = attr->release;
	sq->credit = attr->credit;
	sq->head = attr->start;
	sq->tail = attr->start;
	/* "the last signal" is before start and counts as reaped */
	sq->signaled = attr->start - 1;
	return 0;
}
EXPORT_SYMBOL(ib_sq_acct_init);

/**
 * ib_sq_acct_cancel - undo the part of a reservation that was not posted
 * @sq: the accounting
 * @t: the reservation
 * @posted: work requests of it that ib_post_send() did post (0 to n - 1)
 *
 * The signal (and its CQ credit) belonged to the last work request, which
 * was not posted: both are given back, and the context is returned to the
 * caller, who keeps ownership.  Posted requests of a partly posted chain
 * stay outstanding without a context; a later completion, a flush or
 * ib_sq_acct_release_all() retires them.
 *
 * Context: Poster side (P), with no reservation made after @t.
 */
void ib_sq_acct_cancel(struct ib_sq_acct *sq, const struct ib_sq_ticket *t,
		       u32 posted)
{
	if (WARN_ON_ONCE(posted >= t->n || sq->head != t->first + t->n))
		return;
	sq->ring[ib_sq_ticket_last(t) & sq->mask] = (struct ib_sq_slot){};
	if (t->signal) {
		sq->signaled = t->prev_signaled;
		sq->stats.signaled--;
		if (sq->credit)
			ib_cq_credit_put(sq->credit, 1);
	}
	sq->stats.posts -= t->n - posted;
	/*
	 * The slots given back were never posted: no completion can name
	 * them, so the reaper does not look at them.
	 */
	WRITE_ONCE(sq->head, t->first + posted);
}
EXPORT_SYMBOL(ib_sq_acct_cancel);

/* Retire one slot: call its hook, give back its credit. */
static void ib_sq_acct_retire(struct ib_sq_acct *sq, u64 seq)
{
	struct ib_sq_slot *s = &sq->ring[seq & sq->mask];
	struct ib_sq_slot old = *s;

	*s = (struct ib_sq_slot){};
	if (old.signaled && sq->credit)
		ib_cq_credit_put(sq->credit, 1);
	if (old.ctx) {
		sq->stats.released++;
		if (sq->release)
			sq->release(sq, seq, old.ctx);
	}
}

/**
 * ib_sq_acct_reap - retire requests up to a completed one
 * @sq: the accounting
 * @seq: sequence number of the request whose completion arrived
 *
 * Completions of one send queue arrive in posting order, so the
 * completion of @seq means that every earlier request, signaled or not,
 * has completed too.  Each of [tail, @seq] is retired in order: its
 * release hook is called and its CQ credit returned.  Call this for every
 * send completion, successful or flushed; flushed unsignaled requests
 * complete too and are retired the same way.  A @seq already retired is
 * ignored.
 *
 * Context: Reaper side (R), usually the ib_cqe done callback.
 * Return: the number of requests retired (0 if @seq was already retired),
 * or -EINVAL if @seq was never posted.
 */
int ib_sq_acct_reap(struct ib_sq_acct *sq, u64 seq)
{
	/*
	 * Acquire: the poster's slot writes are visible.  Pairs with
	 * smp_store_release() in ib_sq_acct_reserve().
	 */
	u64 head = smp_load_acquire(&sq->head);
	u64 tail = sq->tail;
	u64 s;

	if (ib_seq_before(seq, tail))
		return 0;
	if (WARN_ON_ONCE(!ib_seq_before(seq, head)))
		return -EINVAL;
	for (s = tail; s != seq + 1; s++)
		ib_sq_acct_retire(sq, s);
	sq->stats.reaped += seq + 1 - tail;
	/*
	 * Release: our reads of the retired slots are done before the
	 * poster may reuse them.  Pairs with smp_load_acquire() in
	 * ib_sq_acct_reserve() and ib_sq_acct_outstanding().
	 */
	smp_store_release(&sq->tail, seq + 1);
	return (int)(seq + 1 - tail);
}
EXPORT_SYMBOL(ib_sq_acct_reap);

/**
 * ib_sq_acct_release_all - retire everything still outstanding
 * @sq: the accounting
 *
 * For teardown, after ib_drain_sq() (or ib_drain_qp()) has returned and
 * the send CQ has delivered every completion: calls the release hook of
 * each request still outstanding, in order, and returns their CQ credits.
 *
 * Context: Both sides quiescent; no concurrent post or reap.
 * Return: the number of requests retired.
 */
u32 ib_sq_acct_release_all(struct ib_sq_acct *sq)
{
	u64 head = READ_ONCE(sq->head);
	u64 tail = sq->tail;
	u64 s;

	for (s = tail; s != head; s++)
		ib_sq_acct_retire(sq, s);
	WRITE_ONCE(sq->tail, head);
	return (u32)(head - tail);
}
EXPORT_SYMBOL(ib_sq_acct_release_all);

/**
 * ib_sq_acct_destroy - free the accounting
 * @sq: the accounting, with nothing outstanding
 *
 * Context: Process context; both sides quiescent.
 */
void ib_sq_acct_destroy(struct ib_sq_acct *sq)
{
	WARN_ON_ONCE(sq->head != sq->tail);
	kfree(sq->ring);
	sq->ring = NULL;
}
EXPORT_SYMBOL(ib_sq_acct_destroy);

/**
 * ib_sq_acct_get_stats - snapshot of the counters
 * @sq: the accounting
 * @st: filled in
 *
 * Context: Any context; see struct ib_sq_acct_stats for consistency.
 */
void ib_sq_acct_get_stats(const struct ib_sq_acct *sq,
			  struct ib_sq_acct_stats *st)
{
	st->posts = READ_ONCE(sq->stats.posts);
	st->signaled = READ_ONCE(sq->stats.signaled);
	st->blocked = READ_ONCE(sq->stats.blocked);
	st->blocked_cq = READ_ONCE(sq->stats.blocked_cq);
	st->reaped = READ_ONCE(sq->stats.reaped);
	st->released = READ_ONCE(sq->stats.released);
	st->max_depth = READ_ONCE(sq->stats.max_depth);
}
EXPORT_SYMBOL(ib_sq_acct_get_stats);
