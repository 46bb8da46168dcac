// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Compiles include/rdma/ib_sq_acct.h, unmodified, as C against the shim
 * headers in include/ and exports it, with drivers/infiniband/core/sq_acct.c
 * (its own translation unit, linked beside this one), to the C++ test
 * driver.  Both are kernel C (GNU C11); building them with gcc rather than
 * g++ tests the very code the kernel compiles.
 */
#include <linux/slab.h>
#include <linux/string.h>
#include <rdma/ib_sq_acct.h>

#include "sq_acct_glue.h"

#define container_of(p, type, member) ((type *)((char *)(p) - offsetof(type, member)))

int sqt_warnings;
int sqt_fail_alloc;
int sqt_post_fail_at = -1;
int sqt_post_err = -ENOMEM;
bool sqt_post_leave_bad_unset;
unsigned int sqt_post_flags[64];
unsigned int sqt_post_nwr;

struct sqt_credit {
	struct ib_cq_credit cc;
};

struct sqt {
	struct ib_sq_acct sq;
	struct ib_sq_ticket t;
	sqt_release_cb cb;
	void *opaque;
	struct ib_send_wr wrs[64];
};

int ib_post_send(struct ib_qp *qp, const struct ib_send_wr *wr, const struct ib_send_wr **bad)
{
	int i = 0;

	(void)qp;
	sqt_post_nwr = 0;
	for (; wr; wr = wr->next, i++) {
		if (i == sqt_post_fail_at) {
			if (!sqt_post_leave_bad_unset)
				*bad = wr;
			return sqt_post_err;
		}
		sqt_post_flags[sqt_post_nwr++] = wr->send_flags;
	}
	return 0;
}

struct sqt_credit *sqt_credit_new(uint32_t credits, int *err)
{
	struct sqt_credit *c = calloc(1, sizeof(*c));

	*err = c ? ib_cq_credit_init(&c->cc, credits) : -ENOMEM;
	if (*err) {
		free(c);
		return NULL;
	}
	return c;
}

void sqt_credit_free(struct sqt_credit *c)
{
	free(c);
}

bool sqt_credit_get(struct sqt_credit *c, uint32_t n)
{
	return ib_cq_credit_get(&c->cc, n);
}

void sqt_credit_put(struct sqt_credit *c, uint32_t n)
{
	ib_cq_credit_put(&c->cc, n);
}

uint32_t sqt_credit_avail(struct sqt_credit *c)
{
	return ib_cq_credit_avail(&c->cc);
}

uint32_t sqt_credit_blocked(struct sqt_credit *c)
{
	return atomic_read(&c->cc.blocked);
}

static void sqt_release(struct ib_sq_acct *sq, u64 seq, void *ctx)
{
	struct sqt *t = container_of(sq, struct sqt, sq);

	t->cb(t->opaque, seq, ctx);
}

struct sqt *sqt_new(uint32_t depth, int policy, uint64_t start, struct sqt_credit *cc,
		    sqt_release_cb cb, void *opaque, int *err)
{
	struct ib_sq_acct_attr attr = {
		.depth = depth,
		.policy = (enum ib_sq_signal_policy)policy,
		.release = cb ? sqt_release : NULL,
		.credit = cc ? &cc->cc : NULL,
		.start = start,
	};
	struct sqt *t;

	/* aligned_alloc: struct ib_sq_acct has a cacheline-aligned member */
	t = aligned_alloc(64, (sizeof(*t) + 63) & ~(size_t)63);
	if (!t) {
		*err = -ENOMEM;
		return NULL;
	}
	memset(t, 0, sizeof(*t));
	t->cb = cb;
	t->opaque = opaque;
	*err = ib_sq_acct_init(&t->sq, &attr, GFP_KERNEL);
	if (*err) {
		free(t);
		return NULL;
	}
	return t;
}

void sqt_free(struct sqt *t)
{
	ib_sq_acct_destroy(&t->sq);
	free(t);
}

int sqt_reserve(struct sqt *t, uint32_t n, bool need, void *ctx, uint64_t *first, bool *signal)
{
	int ret = ib_sq_acct_reserve(&t->sq, n, need, ctx, &t->t);

	if (!ret) {
		*first = t->t.first;
		*signal = t->t.signal;
	}
	return ret;
}

void sqt_cancel(struct sqt *t, uint32_t posted)
{
	ib_sq_acct_cancel(&t->sq, &t->t, posted);
}

int sqt_post_send(struct sqt *t, uint32_t n, bool need, void *ctx, uint64_t *seq)
{
	uint32_t i;

	if (!n || n > 64)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		/* stale flags that the helper must clear */
		t->wrs[i].send_flags = IB_SEND_SIGNALED | IB_SEND_FENCE;
		t->wrs[i].next = i + 1 < n ? &t->wrs[i + 1] : NULL;
	}
	return ib_sq_acct_post_send(&t->sq, NULL, t->wrs, need, ctx, seq);
}

int sqt_reap(struct sqt *t, uint64_t seq)
{
	return ib_sq_acct_reap(&t->sq, seq);
}

uint32_t sqt_release_all(struct sqt *t)
{
	return ib_sq_acct_release_all(&t->sq);
}

uint64_t sqt_head(struct sqt *t)
{
	return READ_ONCE(t->sq.head);
}

uint64_t sqt_tail(struct sqt *t)
{
	return smp_load_acquire(&t->sq.tail);
}

uint64_t sqt_signaled(struct sqt *t)
{
	return t->sq.signaled;
}

uint32_t sqt_outstanding(struct sqt *t)
{
	return ib_sq_acct_outstanding(&t->sq);
}

uint32_t sqt_space(struct sqt *t)
{
	return ib_sq_acct_space(&t->sq);
}

uint32_t sqt_ring_size(struct sqt *t)
{
	return t->sq.mask + 1;
}

void sqt_get_stats(struct sqt *t, struct sqt_stats *st)
{
	struct ib_sq_acct_stats s;

	ib_sq_acct_get_stats(&t->sq, &s);
	st->posts = s.posts;
	st->signaled = s.signaled;
	st->blocked = s.blocked;
	st->blocked_cq = s.blocked_cq;
	st->reaped = s.reaped;
	st->released = s.released;
	st->max_depth = s.max_depth;
}

bool sqt_seq_before(uint64_t a, uint64_t b)
{
	return ib_seq_before(a, b);
}

bool sqt_seq_after(uint64_t a, uint64_t b)
{
	return ib_seq_after(a, b);
}
