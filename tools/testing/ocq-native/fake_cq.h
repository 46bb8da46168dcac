/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A CQ provider in userspace: a lock-protected ring of struct ib_wc that
 * producer threads fill, with IBA-weak notification semantics, and an
 * "interrupt" thread that calls the CQ's completion handler.
 */
#ifndef OCQ_NATIVE_FAKE_CQ_H
#define OCQ_NATIVE_FAKE_CQ_H

#include <pthread.h>
#include <stdbool.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

struct fake_cq {
	struct ib_cq cq;		/* what the engine sees */
	struct ib_device dev;
	pthread_mutex_t lock;
	pthread_cond_t room;		/* producers wait for room */
	pthread_cond_t irq_cond;	/* the interrupt thread waits */
	struct ib_wc *ring;
	u32 cap;			/* a power of two */
	u64 head, tail;			/* pushed, polled */
	u32 seq;			/* next CQ-order stamp (wc.byte_len) */
	bool armed;
	bool dead;			/* destroyed: pushes fail */
	int waiting;			/* producers waiting for room */
	long irq_pending;		/* events raised, not yet delivered */
	pthread_t irq;
	/* counters, under @lock */
	u64 polls, arms, missed, events;
};

/*
 * cqe entries (rounded up to a power of two); @handler is called from the
 * interrupt thread with @ctx, once per event the CQ raised
 */
int fake_cq_init(struct fake_cq *f, u32 cqe, ib_comp_handler handler,
		 void *ctx);
/*
 * Add a completion, waiting while the CQ is full; stamps wc.byte_len with
 * the CQ order.  Raises an event if the CQ is armed (and disarms it).
 * Return 0, or -1 once the CQ is dead.
 */
int fake_cq_push(struct fake_cq *f, const struct ib_wc *wc);
/* Refuse pushes from now on and wake the producers that wait. */
void fake_cq_kill(struct fake_cq *f);
/* Stop the interrupt thread (after fake_cq_kill); no handler runs after. */
void fake_cq_destroy(struct fake_cq *f);
u64 fake_cq_count(struct fake_cq *f);

#endif /* OCQ_NATIVE_FAKE_CQ_H */
