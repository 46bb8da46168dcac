// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The host: work queue, tick threads, and the runtime of the shims.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include <stdint.h>
#include <unistd.h>
#include <ocq_native.h>
#include "host.h"

/* --- the shims' runtime --- */

int ocq_native_bug;
int ocq_native_jitter_on;
static long warnings;
static long readers;
static long allocations;

void ocq_native_warn(const char *file, int line, const char *cond)
{
	__atomic_fetch_add(&warnings, 1, __ATOMIC_RELAXED);
	fprintf(stderr, "WARNING: %s:%d: %s\n", file, line, cond);
}

long ocq_native_warnings(void)
{
	return __atomic_load_n(&warnings, __ATOMIC_RELAXED);
}

void ocq_native_rcu_read_lock(void)
{
	__atomic_fetch_add(&readers, 1, __ATOMIC_SEQ_CST);
}

void ocq_native_rcu_read_unlock(void)
{
	__atomic_fetch_sub(&readers, 1, __ATOMIC_RELEASE);
}

void ocq_native_synchronize_rcu(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	while (__atomic_load_n(&readers, __ATOMIC_ACQUIRE))
		sched_yield();
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/*
 * Cache-line aligned, as the slab caches the engine's ____cacheline_aligned
 * units come from in practice; calloc() only promises 16 bytes.
 */
void ocq_native_jitter(void)
{
	static __thread u32 x;

	if (!x)
		x = (u32)(uintptr_t)&x | 1;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	if (!(x & 31))
		sched_yield();
	else if ((x & 127) == 1)
		usleep(20 + x % 200);
}

void *ocq_native_alloc(size_t n, size_t size)
{
	size_t bytes = (n ? n : 1) * (size ? size : 1);
	void *p;

	bytes = (bytes + 63) & ~(size_t)63;
	p = aligned_alloc(64, bytes);
	if (p)
		memset(p, 0, bytes);

	if (p)
		__atomic_fetch_add(&allocations, 1, __ATOMIC_RELAXED);
	return p;
}

void ocq_native_free(const void *p)
{
	if (!p)
		return;
	__atomic_fetch_sub(&allocations, 1, __ATOMIC_RELAXED);
	free((void *)p);
}

long ocq_native_live_allocations(void)
{
	return __atomic_load_n(&allocations, __ATOMIC_RELAXED);
}

/* --- the work queue --- */

static void wq_push(struct workqueue *wq, struct work *w)
{
	w->next = NULL;
	if (wq->tail)
		wq->tail->next = w;
	else
		wq->head = w;
	wq->tail = w;
	pthread_cond_signal(&wq->more);
}

static void wq_unlink(struct workqueue *wq, struct work *w)
{
	struct work **pp, *prev = NULL;

	for (pp = &wq->head; *pp; prev = *pp, pp = &(*pp)->next) {
		if (*pp != w)
			continue;
		*pp = w->next;
		if (wq->tail == w)
			wq->tail = prev;
		return;
	}
}

static void *wq_worker(void *arg)
{
	struct workqueue *wq = arg;
	struct work *w;

	pthread_mutex_lock(&wq->lock);
	for (;;) {
		while (!wq->head && !wq->stop)
			pthread_cond_wait(&wq->more, &wq->lock);
		if (!wq->head)
			break;
		w = wq->head;
		wq->head = w->next;
		if (!wq->head)
			wq->tail = NULL;
		w->pending = false;
		w->running = true;
		w->runs++;
		pthread_mutex_unlock(&wq->lock);
		w->fn(w);
		pthread_mutex_lock(&wq->lock);
		w->running = false;
		if (w->pending)
			wq_push(wq, w);
		pthread_cond_broadcast(&wq->idle);
	}
	pthread_mutex_unlock(&wq->lock);
	return NULL;
}

int wq_init(struct workqueue *wq, unsigned int nr_threads)
{
	unsigned int i;

	pthread_mutex_init(&wq->lock, NULL);
	pthread_cond_init(&wq->more, NULL);
	pthread_cond_init(&wq->idle, NULL);
	wq->head = wq->tail = NULL;
	wq->stop = false;
	wq->nr_threads = nr_threads;
	wq->threads = calloc(nr_threads, sizeof(*wq->threads));
	if (!wq->threads)
		return -1;
	for (i = 0; i < nr_threads; i++)
		if (pthread_create(&wq->threads[i], NULL, wq_worker, wq))
			return -1;
	return 0;
}

int wq_queue(struct workqueue *wq, struct work *w)
{
	int ret = WQ_QUEUED;

	pthread_mutex_lock(&wq->lock);
	if (w->canceling) {
		ret = WQ_CANCELING;
	} else if (w->pending) {
		ret = WQ_WAS_PENDING;
	} else {
		w->pending = true;
		if (!w->running)
			wq_push(wq, w);
	}
	pthread_mutex_unlock(&wq->lock);
	return ret;
}

void wq_cancel_sync(struct workqueue *wq, struct work *w)
{
	pthread_mutex_lock(&wq->lock);
	w->canceling = true;
	if (w->pending && !w->running)
		wq_unlink(wq, w);
	w->pending = false;
	while (w->running)
		pthread_cond_wait(&wq->idle, &wq->lock);
	/* a run that requeued itself meanwhile was refused */
	w->pending = false;
	w->canceling = false;
	pthread_mutex_unlock(&wq->lock);
}

bool wq_busy(struct workqueue *wq, struct work *w)
{
	bool busy;

	pthread_mutex_lock(&wq->lock);
	busy = w->pending || w->running;
	pthread_mutex_unlock(&wq->lock);
	return busy;
}

void wq_destroy(struct workqueue *wq)
{
	unsigned int i;

	pthread_mutex_lock(&wq->lock);
	wq->stop = true;
	pthread_cond_broadcast(&wq->more);
	pthread_mutex_unlock(&wq->lock);
	for (i = 0; i < wq->nr_threads; i++)
		pthread_join(wq->threads[i], NULL);
	free(wq->threads);
	pthread_mutex_destroy(&wq->lock);
	pthread_cond_destroy(&wq->more);
	pthread_cond_destroy(&wq->idle);
}

/* --- tick threads --- */

static void deadline_after(struct timespec *ts, unsigned int us)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_nsec += (long)(us % 1000000) * 1000;
	ts->tv_sec += us / 1000000 + ts->tv_nsec / 1000000000;
	ts->tv_nsec %= 1000000000;
}

static void *tick_thread(void *arg)
{
	struct tick *t = arg;
	struct timespec ts;

	pthread_mutex_lock(&t->lock);
	for (;;) {
		while (!t->requested && !t->always && !t->stop)
			pthread_cond_wait(&t->cond, &t->lock);
		if (t->stop)
			break;
		t->requested = false;
		/* a tick starts one period after it is asked for */
		deadline_after(&ts, t->period_us);
		while (!t->stop &&
		       pthread_cond_timedwait(&t->cond, &t->lock, &ts) != ETIMEDOUT)
			;
		if (t->stop)
			break;
		pthread_mutex_unlock(&t->lock);
		/* never concurrently with itself: one thread */
		while (t->fn(t->arg)) {
			__atomic_fetch_add(&t->ticks, 1, __ATOMIC_RELAXED);
			pthread_mutex_lock(&t->lock);
			deadline_after(&ts, t->period_us);
			while (!t->stop &&
			       pthread_cond_timedwait(&t->cond, &t->lock, &ts) !=
				       ETIMEDOUT)
				;
			if (t->stop) {
				pthread_mutex_unlock(&t->lock);
				return NULL;
			}
			pthread_mutex_unlock(&t->lock);
		}
		__atomic_fetch_add(&t->ticks, 1, __ATOMIC_RELAXED);
		pthread_mutex_lock(&t->lock);
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

int tick_start(struct tick *t, bool (*fn)(void *), void *arg,
	       unsigned int period_us, bool always)
{
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->cond, NULL);
	t->fn = fn;
	t->arg = arg;
	t->period_us = period_us;
	t->always = always;
	t->requested = false;
	t->stop = false;
	t->ticks = 0;
	return pthread_create(&t->thread, NULL, tick_thread, t) ? -1 : 0;
}

void tick_request(struct tick *t)
{
	pthread_mutex_lock(&t->lock);
	t->requested = true;
	pthread_cond_signal(&t->cond);
	pthread_mutex_unlock(&t->lock);
}

void tick_stop(struct tick *t)
{
	pthread_mutex_lock(&t->lock);
	t->stop = true;
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->lock);
	pthread_join(t->thread, NULL);
	pthread_mutex_destroy(&t->lock);
	pthread_cond_destroy(&t->cond);
}

/* --- time --- */

u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

void busy_wait_ns(u64 ns)
{
	u64 end;

	if (!ns)
		return;
	end = now_ns() + ns;
	while (now_ns() < end)
		;
}
