/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The host of the native harness: a small work queue of real threads with
 * the kernel's work item semantics, the periodic tick threads (lease,
 * watchdog) and the runtime behind the shim headers.
 */
#ifndef OCQ_NATIVE_HOST_H
#define OCQ_NATIVE_HOST_H

#include <pthread.h>
#include <stdbool.h>
#include <linux/types.h>

struct work;
typedef void (*work_fn)(struct work *w);

/*
 * A work item, as in the kernel: queueing a pending item does nothing and
 * returns false; an item queued while it runs runs again after, on some
 * worker, never concurrently with itself.  Fields under the queue's lock.
 */
struct work {
	work_fn fn;
	struct work *next;
	bool pending;
	bool running;
	bool canceling;
	u64 runs;
};

struct workqueue {
	pthread_mutex_t lock;
	pthread_cond_t more;	/* workers wait for items */
	pthread_cond_t idle;	/* cancel waits for a run to end */
	struct work *head, *tail;
	pthread_t *threads;
	unsigned int nr_threads;
	bool stop;
};

int wq_init(struct workqueue *wq, unsigned int nr_threads);
/* queue_work(): WQ_QUEUED, or why not */
enum { WQ_QUEUED, WQ_WAS_PENDING, WQ_CANCELING };
int wq_queue(struct workqueue *wq, struct work *w);
/* As cancel_work_sync(): not pending and not running when it returns. */
void wq_cancel_sync(struct workqueue *wq, struct work *w);
/* Whether @w is pending or running. */
bool wq_busy(struct workqueue *wq, struct work *w);
/* Stop the workers (nothing may be queued any more) and join them. */
void wq_destroy(struct workqueue *wq);

/*
 * A tick thread: calls @fn every @period_us while started; @fn returns
 * false when no further tick is needed, and the thread then sleeps until
 * tick_request().  With @always, it ticks until tick_stop().
 */
struct tick {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	bool (*fn)(void *arg);
	void *arg;
	unsigned int period_us;
	bool always;
	bool requested;
	bool stop;
	u64 ticks;
};

int tick_start(struct tick *t, bool (*fn)(void *), void *arg,
	       unsigned int period_us, bool always);
/* ask for ticks (a no-op while ticking) */
void tick_request(struct tick *t);
void tick_stop(struct tick *t);

/* monotonic clock */
u64 now_ns(void);
/* spin for @ns */
void busy_wait_ns(u64 ns);

#endif /* OCQ_NATIVE_HOST_H */
