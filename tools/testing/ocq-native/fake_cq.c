// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The fake CQ.  IBA-weak semantics, as the verbs contract allows:
 *  - ib_req_notify_cq() arms for the next completion added; entries
 *    already in the CQ raise no event;
 *  - with IB_CQ_REPORT_MISSED_EVENTS it returns 1 iff the CQ is not empty
 *    (and stays armed, as mlx5 does: the next push raises an event the
 *    consumer may not need);
 *  - one event per arm: a push to an armed CQ disarms it and raises one.
 * The event is delivered by a separate thread, as an interrupt would be:
 * the completion handler never runs inside a provider call.
 */
#include <stdlib.h>
#include <string.h>
#include <linux/log2.h>
#include "fake_cq.h"

static struct fake_cq *fake_of(struct ib_cq *cq)
{
	return (struct fake_cq *)cq;
}

static int fake_poll_cq(struct ib_cq *cq, int n, struct ib_wc *wc)
{
	struct fake_cq *f = fake_of(cq);
	int k = 0;

	pthread_mutex_lock(&f->lock);
	f->polls++;
	while (k < n && f->tail != f->head) {
		wc[k++] = f->ring[f->tail & (f->cap - 1)];
		f->tail++;
	}
	if (k && f->waiting)
		pthread_cond_broadcast(&f->room);
	pthread_mutex_unlock(&f->lock);
	return k;
}

static int fake_req_notify_cq(struct ib_cq *cq, enum ib_cq_notify_flags flags)
{
	struct fake_cq *f = fake_of(cq);
	int ret = 0;

	pthread_mutex_lock(&f->lock);
	f->arms++;
	f->armed = true;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && f->head != f->tail) {
		f->missed++;
		ret = 1;
	}
	pthread_mutex_unlock(&f->lock);
	return ret;
}

static void *fake_irq_thread(void *arg)
{
	struct fake_cq *f = arg;

	pthread_mutex_lock(&f->lock);
	for (;;) {
		while (!f->irq_pending && !f->dead)
			pthread_cond_wait(&f->irq_cond, &f->lock);
		if (!f->irq_pending)
			break;	/* dead and nothing left to deliver */
		f->irq_pending--;
		pthread_mutex_unlock(&f->lock);
		f->cq.comp_handler(&f->cq, f->cq.cq_context);
		pthread_mutex_lock(&f->lock);
	}
	pthread_mutex_unlock(&f->lock);
	return NULL;
}

int fake_cq_init(struct fake_cq *f, u32 cqe, ib_comp_handler handler,
		 void *ctx)
{
	memset(f, 0, sizeof(*f));
	f->cap = roundup_pow_of_two(cqe);
	f->ring = calloc(f->cap, sizeof(*f->ring));
	if (!f->ring)
		return -1;
	f->dev.ops.driver_id = RDMA_DRIVER_UNKNOWN;
	f->dev.ops.poll_cq = fake_poll_cq;
	f->dev.ops.req_notify_cq = fake_req_notify_cq;
	f->cq.device = &f->dev;
	f->cq.comp_handler = handler;
	f->cq.cq_context = ctx;
	f->cq.cqe = f->cap;
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->room, NULL);
	pthread_cond_init(&f->irq_cond, NULL);
	if (pthread_create(&f->irq, NULL, fake_irq_thread, f)) {
		free(f->ring);
		return -1;
	}
	return 0;
}

int fake_cq_push(struct fake_cq *f, const struct ib_wc *wc)
{
	pthread_mutex_lock(&f->lock);
	while (f->head - f->tail == f->cap && !f->dead) {
		f->waiting++;
		pthread_cond_wait(&f->room, &f->lock);
		f->waiting--;
	}
	if (f->dead) {
		pthread_mutex_unlock(&f->lock);
		return -1;
	}
	f->ring[f->head & (f->cap - 1)] = *wc;
	f->ring[f->head & (f->cap - 1)].byte_len = f->seq++;
	f->head++;
	if (f->armed) {
		f->armed = false;
		f->events++;
		f->irq_pending++;
		pthread_cond_signal(&f->irq_cond);
	}
	pthread_mutex_unlock(&f->lock);
	return 0;
}

void fake_cq_kill(struct fake_cq *f)
{
	pthread_mutex_lock(&f->lock);
	f->dead = true;
	pthread_cond_broadcast(&f->room);
	pthread_cond_broadcast(&f->irq_cond);
	pthread_mutex_unlock(&f->lock);
}

void fake_cq_destroy(struct fake_cq *f)
{
	fake_cq_kill(f);
	pthread_join(f->irq, NULL);
	pthread_mutex_destroy(&f->lock);
	pthread_cond_destroy(&f->room);
	pthread_cond_destroy(&f->irq_cond);
	free(f->ring);
	f->ring = NULL;
}

u64 fake_cq_count(struct fake_cq *f)
{
	u64 n;

	pthread_mutex_lock(&f->lock);
	n = f->head - f->tail;
	pthread_mutex_unlock(&f->lock);
	return n;
}
