/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Send queue accounting for kernel RDMA ULPs: wrapping 64-bit head/tail/
 * signaled counters, selective signaling, release of unsignaled requests
 * and a completion queue credit shared by the QPs of one CQ.
 *
 * The per-post fast path (reserve, post, the CQ credit's get and put) is
 * inline here; set-up, teardown, reaping, cancel and statistics are in
 * drivers/infiniband/core/sq_acct.c, exported by ib_ocq.ko.
 *
 * See Documentation/sq-accounting.rst.
 */
#ifndef _RDMA_IB_SQ_ACCT_H
#define _RDMA_IB_SQ_ACCT_H

#include <linux/types.h>
#include <linux/compiler.h>
#include <linux/atomic.h>
#include <linux/bug.h>
#include <linux/cache.h>
#include <linux/errno.h>
#include <linux/minmax.h>
#include <asm/barrier.h>
#include <rdma/ib_verbs.h>

/*
 * Sequence numbers are u64 and wrap.  Two of them are compared through
 * their signed difference, so a counter crossing 2^64 changes nothing as
 * long as the compared values are less than 2^63 apart (they are at most
 * one queue depth apart).
 */

/**
 * ib_seq_before - wrap-safe "a comes before b"
 * @a: sequence number
 * @b: sequence number
 *
 * Context: Any context.
 * Return: true if @a precedes @b.
 */
static inline bool ib_seq_before(u64 a, u64 b)
{
	return (s64)(a - b) < 0;
}

/**
 * ib_seq_after - wrap-safe "a comes after b"
 * @a: sequence number
 * @b: sequence number
 *
 * Context: Any context.
 * Return: true if @a follows @b.
 */
static inline bool ib_seq_after(u64 a, u64 b)
{
	return (s64)(a - b) > 0;
}

/* ------------------------------------------------------------------ */
/* The fourth flow-control loop: CQ space shared by several QPs       */
/* ------------------------------------------------------------------ */

/**
 * struct ib_cq_credit - completion queue entries a poster may still cause
 * @avail: credits not taken (A)
 * @size: credits in total (I)
 * @blocked: ib_cq_credit_get() calls refused for lack of credit (A)
 *
 * One per CQ that several queues share.  A poster takes one credit for
 * every work request that will produce a completion in working order
 * (a signaled send, every receive) before posting it, and the consumer of
 * that completion returns the credit.  With @size no larger than the CQ
 * the CQ cannot overrun.  Flush completions of unsignaled sends are not
 * covered: see Documentation/sq-accounting.rst.
 *
 * Legend: (A) atomic, any context; (I) set by ib_cq_credit_init().
 */
struct ib_cq_credit {
	atomic_t avail;
	u32 size;
	atomic_t blocked;
};

int ib_cq_credit_init(struct ib_cq_credit *cc, u32 credits);

/**
 * ib_cq_credit_get - take credits for completions about to be caused
 * @cc: the credit
 * @n: number of credits
 *
 * Either all @n credits are taken or none: a refused call leaves no
 * transient deficit that could make a concurrent caller fail.
 *
 * Context: Any context.
 * Return: true if the credits were taken, false if the CQ has no room.
 */
static inline bool ib_cq_credit_get(struct ib_cq_credit *cc, u32 n)
{
	int old = atomic_read(&cc->avail);

	do {
		if (unlikely(old < (int)n)) {
			atomic_inc(&cc->blocked);
			return false;
		}
		/*
		 * A successful cmpxchg is fully ordered: the post that
		 * follows cannot be seen before the credit is taken.  Pairs
		 * with atomic_add_return() in ib_cq_credit_put().
		 */
	} while (!atomic_try_cmpxchg(&cc->avail, &old, old - (int)n));
	return true;
}

/**
 * ib_cq_credit_put - return credits of consumed completions
 * @cc: the credit
 * @n: number of credits
 *
 * Call once the completions were polled from the CQ, typically from the
 * ib_cqe done callback (ib_poll_cq() has freed the entries by then).
 *
 * Context: Any context.
 */
static inline void ib_cq_credit_put(struct ib_cq_credit *cc, u32 n)
{
	/*
	 * atomic_add_return() is fully ordered: the poll that freed the CQ
	 * entries is done before the credit can be seen.  Pairs with the
	 * cmpxchg in ib_cq_credit_get().
	 */
	WARN_ON_ONCE(atomic_add_return(n, &cc->avail) > (int)cc->size);
}

/**
 * ib_cq_credit_avail - credits not taken
 * @cc: the credit
 *
 * Context: Any context.
 * Return: a snapshot of the free credits.
 */
static inline u32 ib_cq_credit_avail(const struct ib_cq_credit *cc)
{
	return atomic_read(&cc->avail);
}

/* ------------------------------------------------------------------ */
/* Send queue accounting                                              */
/* ------------------------------------------------------------------ */

/* Nearly full: at most 1/IB_SQ_NEAR_FULL_DIV of the SQ free after a post. */
#define IB_SQ_NEAR_FULL_DIV 8
/* A signal less than 1/IB_SQ_RECENT_DIV of the SQ ago is recent. */
#define IB_SQ_RECENT_DIV 4

/**
 * enum ib_sq_signal_policy - when a send is posted with IB_SEND_SIGNALED
 * @IB_SQ_SIGNAL_DEFAULT: at every half-queue marker, and when the queue is
 *	nearly full unless a recent signal is still unreaped (the default)
 * @IB_SQ_SIGNAL_MARKER: at every half-queue marker only
 * @IB_SQ_SIGNAL_ALL: every send (the reference to measure against)
 *
 * Under every policy a caller may also demand a signal for one request.
 * Each policy signals at least once in every half queue, so the SQ never
 * fills with unsignaled requests only and there is always a completion
 * coming that frees space.
 */
enum ib_sq_signal_policy {
	IB_SQ_SIGNAL_DEFAULT,
	IB_SQ_SIGNAL_MARKER,
	IB_SQ_SIGNAL_ALL,
};

/**
 * struct ib_sq_acct_stats - counters of one send queue
 * @posts: work requests accounted (P)
 * @signaled: work requests posted with IB_SEND_SIGNALED (P)
 * @blocked: reservations refused for lack of SQ space (P)
 * @blocked_cq: reservations refused for lack of CQ credit (P)
 * @max_depth: largest number of outstanding requests after a post (P)
 * @reaped: work requests retired by completions (R)
 * @released: release hooks called, by completions or at teardown (R)
 *
 * A snapshot taken with ib_sq_acct_get_stats() from another context may
 * mix old and new values (and may tear on 32-bit machines); it is meant
 * for reporting.
 */
struct ib_sq_acct_stats {
	u64 posts;
	u64 signaled;
	u64 blocked;
	u64 blocked_cq;
	u64 reaped;
	u64 released;
	u32 max_depth;
};

/**
 * struct ib_sq_slot - what the accounting remembers of one request
 * @ctx: the ULP's release context, or NULL
 * @signaled: the request was posted with IB_SEND_SIGNALED and holds a CQ
 *	credit if the queue uses one
 */
struct ib_sq_slot {
	void *ctx;
	bool signaled;
};

struct ib_sq_acct;

/**
 * typedef ib_sq_release_fn - release hook of one request
 * @sq: the send queue accounting
 * @seq: the request's sequence number
 * @ctx: the non-NULL context the request was posted with
 *
 * Called exactly once per posted request that carried a context: from
 * ib_sq_acct_reap() when a completion retires it, or from
 * ib_sq_acct_release_all() at teardown.  It runs in the caller's context
 * and must not call back into @sq.
 */
typedef void (*ib_sq_release_fn)(struct ib_sq_acct *sq, u64 seq, void *ctx);

/**
 * struct ib_sq_acct - accounting of one send queue
 * @head: sequence number of the next request to post (P, W)
 * @signaled: sequence number of the last signaled request (P)
 * @limit: the SQ depth: at most @limit requests are outstanding (I)
 * @mask: ring index mask, ring size is a power of two >= @limit (I)
 * @policy: the signaling policy (I)
 * @credit: shared CQ credit, or NULL when the CQ is not shared (I)
 * @release: the release hook, or NULL (I)
 * @ring: release contexts, indexed by sequence number & @mask (see below)
 * @tail: sequence number of the oldest request not yet retired (R, W)
 * @stats: counters, each tagged with its writer
 *
 * The requests outstanding are [@tail, @head).  ``(head - tail) < limit``
 * is the condition for posting one more; a reservation of n requests
 * needs ``(head - tail) + n <= limit``.  The ring size is a power of two
 * so that ``seq & mask`` stays continuous when seq wraps at 2^64 (2^64 is
 * a multiple of the ring size; it is no multiple of an arbitrary depth).
 *
 * Locking legend:
 *
 * (I) set by ib_sq_acct_init(), read-only afterwards.
 *
 * (P) poster side: ib_sq_acct_reserve(), ib_sq_acct_cancel() and
 *     ib_sq_acct_post_send() are serialized by the caller, normally by the
 *     lock the ULP holds around ib_post_send() on this QP.
 *
 * (R) reaper side: ib_sq_acct_reap() calls are serialized by the caller,
 *     normally by running them from the done callbacks of the QP's send
 *     CQ (ib_cq never runs one CQ's callbacks concurrently).  The reaper
 *     may run concurrently with the poster.
 *
 * (W) written by one side with smp_store_release(), read by the other
 *     with smp_load_acquire().
 *
 * @ring slots in [@tail, @head) belong to the reaper, the others to the
 * poster; a slot changes hands through the release/acquire of @head and
 * @tail.  ib_sq_acct_release_all() and ib_sq_acct_destroy() need both
 * sides quiescent.
 */
struct ib_sq_acct {
	u64 head;
	u64 signaled;
	u32 limit;
	u32 mask;
	enum ib_sq_signal_policy policy;
	struct ib_cq_credit *credit;
	ib_sq_release_fn release;
	struct ib_sq_slot *ring;

	/* reaper side, on its own cache line */
	u64 tail ____cacheline_aligned_in_smp;

	struct ib_sq_acct_stats stats;
};

/**
 * struct ib_sq_acct_attr - parameters of ib_sq_acct_init()
 * @depth: SQ depth to account for, at least 2.  Create the QP with one
 *	more send WR for ib_drain_sq(), which posts outside this accounting.
 * @policy: signaling policy
 * @release: hook called for every request posted with a context, or NULL
 * @credit: the credit of the send CQ if that CQ is shared, or NULL
 * @start: first sequence number (0 normally; any value is valid)
 */
struct ib_sq_acct_attr {
	u32 depth;
	enum ib_sq_signal_policy policy;
	ib_sq_release_fn release;
	struct ib_cq_credit *credit;
	u64 start;
};

/**
 * struct ib_sq_ticket - one reservation, from reserve to post or cancel
 * @first: sequence number of the first request of the reservation
 * @n: number of requests
 * @signal: the last request must be posted with IB_SEND_SIGNALED
 * @prev_signaled: @sq->signaled before the reservation, for cancel
 */
struct ib_sq_ticket {
	u64 first;
	u32 n;
	bool signal;
	u64 prev_signaled;
};

/**
 * ib_sq_ticket_last - sequence number of the last request of a ticket
 * @t: the ticket
 *
 * Context: Any context.
 * Return: the sequence number that the signaled completion reports.
 */
static inline u64 ib_sq_ticket_last(const struct ib_sq_ticket *t)
{
	return t->first + t->n - 1;
}

int ib_sq_acct_init(struct ib_sq_acct *sq, const struct ib_sq_acct_attr *attr,
		    gfp_t gfp);
void ib_sq_acct_destroy(struct ib_sq_acct *sq);
int ib_sq_acct_reap(struct ib_sq_acct *sq, u64 seq);
u32 ib_sq_acct_release_all(struct ib_sq_acct *sq);
void ib_sq_acct_get_stats(const struct ib_sq_acct *sq,
			  struct ib_sq_acct_stats *st);

/**
 * ib_sq_acct_outstanding - requests posted and not yet retired
 * @sq: the accounting
 *
 * Context: Poster side (P).
 * Return: head - tail.
 */
static inline u32 ib_sq_acct_outstanding(const struct ib_sq_acct *sq)
{
	/* Pairs with smp_store_release() of tail in ib_sq_acct_reap(). */
	return (u32)(sq->head - smp_load_acquire(&sq->tail));
}

/**
 * ib_sq_acct_space - requests that can be reserved now
 * @sq: the accounting
 *
 * Context: Poster side (P).
 * Return: limit - (head - tail).
 */
static inline u32 ib_sq_acct_space(const struct ib_sq_acct *sq)
{
	return sq->limit - ib_sq_acct_outstanding(sq);
}

/**
 * ib_sq_acct_want_signal - apply the signaling policy to a reservation
 * @sq: the accounting
 * @tail: the tail the poster sees
 * @n: number of requests about to be posted
 * @need_signal: the caller needs the last of them signaled
 *
 * The rules, for the last request ``last = head + n - 1``:
 *
 * 1. the caller asks for it, or the policy is IB_SQ_SIGNAL_ALL;
 * 2. half-queue marker: ``last - signaled >= limit / 2``;
 * 3. (IB_SQ_SIGNAL_DEFAULT) nearly full, i.e. at most
 *    limit / IB_SQ_NEAR_FULL_DIV free after the post, unless a recent
 *    signal (less than limit / IB_SQ_RECENT_DIV requests ago) is still
 *    unreaped.
 *
 * Context: Poster side (P).
 * Return: true if the last request must be posted signaled.
 */
static inline bool ib_sq_acct_want_signal(const struct ib_sq_acct *sq, u64 tail,
					  u32 n, bool need_signal)
{
	u64 last = sq->head + n - 1;
	u64 depth = sq->head + n - tail;
	bool unreaped, recent;

	if (need_signal || sq->policy == IB_SQ_SIGNAL_ALL)
		return true;
	if (last - sq->signaled >= sq->limit / 2)
		return true;
	if (sq->policy != IB_SQ_SIGNAL_DEFAULT)
		return false;
	if (depth < sq->limit - sq->limit / IB_SQ_NEAR_FULL_DIV)
		return false;
	unreaped = !ib_seq_before(sq->signaled, tail);
	recent = last - sq->signaled < sq->limit / IB_SQ_RECENT_DIV;
	return !(unreaped && recent);
}

/**
 * ib_sq_acct_reserve - account for requests about to be posted
 * @sq: the accounting
 * @n: number of work requests (a chain posted with one ib_post_send())
 * @need_signal: the caller needs the last request signaled
 * @ctx: release context of the request, stored with its last work request,
 *	or NULL
 * @t: filled in with the reservation
 *
 * On success the requests count as posted (head has moved), so a
 * completion racing with the post finds them.  The caller then posts,
 * setting IB_SEND_SIGNALED on the last work request if @t->signal and
 * on no other, and calls ib_sq_acct_cancel() if ib_post_send() fails.
 * When the queue uses a CQ credit, a signaled reservation takes one.
 *
 * Context: Poster side (P).
 * Return: 0; -ENOSPC if the SQ or the shared CQ has no room (nothing was
 * changed, retry after a completion); -EINVAL if @n is 0 or exceeds the
 * depth.
 */
static inline int ib_sq_acct_reserve(struct ib_sq_acct *sq, u32 n,
				     bool need_signal, void *ctx,
				     struct ib_sq_ticket *t)
{
	/*
	 * Acquire: the reaper is done with the slots below tail before we
	 * reuse them.  Pairs with smp_store_release() in ib_sq_acct_reap().
	 */
	u64 tail = smp_load_acquire(&sq->tail);
	u64 head = sq->head;
	u32 depth = (u32)(head - tail);
	u32 i;

	if (WARN_ON_ONCE(!n || n > sq->limit))
		return -EINVAL;
	if (depth > sq->limit - n) {
		sq->stats.blocked++;
		return -ENOSPC;
	}
	t->first = head;
	t->n = n;
	t->signal = ib_sq_acct_want_signal(sq, tail, n, need_signal);
	t->prev_signaled = sq->signaled;
	if (t->signal && sq->credit && !ib_cq_credit_get(sq->credit, 1)) {
		sq->stats.blocked_cq++;
		return -ENOSPC;
	}
	for (i = 0; i < n - 1; i++)
		sq->ring[(head + i) & sq->mask] = (struct ib_sq_slot){};
	sq->ring[(head + n - 1) & sq->mask] =
		(struct ib_sq_slot){ .ctx = ctx, .signaled = t->signal };
	if (t->signal) {
		sq->signaled = head + n - 1;
		sq->stats.signaled++;
	}
	sq->stats.posts += n;
	if (depth + n > sq->stats.max_depth)
		sq->stats.max_depth = depth + n;
	/*
	 * Release: the slots are written before the reaper can see them as
	 * outstanding.  Pairs with smp_load_acquire() in ib_sq_acct_reap().
	 */
	smp_store_release(&sq->head, head + n);
	return 0;
}

void ib_sq_acct_cancel(struct ib_sq_acct *sq, const struct ib_sq_ticket *t,
		       u32 posted);

/**
 * ib_sq_acct_post_send - reserve, post a chain, and account for it
 * @sq: the accounting
 * @qp: the QP whose send queue @sq accounts
 * @wr: chain of work requests
 * @need_signal: the caller needs the last work request signaled
 * @ctx: release context for the chain, or NULL
 * @seqp: where to store the sequence number of the last work request;
 *	written before the post so the completion can read it
 *
 * IB_SEND_SIGNALED is set on the last work request if the policy says
 * so and cleared on all others.  The first work request of the chain has
 * sequence number ``*seqp - (chain length - 1)``.
 *
 * Context: Poster side (P); any context ib_post_send() allows.
 * Return: 0; -ENOSPC if the SQ or shared CQ has no room (nothing posted,
 * retry after a completion); otherwise the error of ib_post_send(), with
 * the unposted part undone as by ib_sq_acct_cancel().  On any error the
 * caller keeps @ctx.
 */
static inline int ib_sq_acct_post_send(struct ib_sq_acct *sq, struct ib_qp *qp,
				       struct ib_send_wr *wr, bool need_signal,
				       void *ctx, u64 *seqp)
{
	const struct ib_send_wr *bad = NULL;
	struct ib_send_wr *w, *last = wr;
	struct ib_sq_ticket t;
	u32 n = 1, posted = 0;
	int ret;

	for (w = wr; w->next; w = w->next) {
		w->send_flags &= ~IB_SEND_SIGNALED;
		n++;
	}
	last = w;
	ret = ib_sq_acct_reserve(sq, n, need_signal, ctx, &t);
	if (ret)
		return ret;
	if (t.signal)
		last->send_flags |= IB_SEND_SIGNALED;
	else
		last->send_flags &= ~IB_SEND_SIGNALED;
	*seqp = ib_sq_ticket_last(&t);
	ret = ib_post_send(qp, wr, &bad);
	if (likely(!ret))
		return 0;
	/* a driver that leaves bad unset posted nothing */
	for (w = wr; bad && w && w != bad; w = w->next)
		posted++;
	ib_sq_acct_cancel(sq, &t, min(posted, n - 1));
	return ret;
}

#endif /* _RDMA_IB_SQ_ACCT_H */
