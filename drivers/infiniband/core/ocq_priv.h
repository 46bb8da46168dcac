/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the files of ib_ocq share: the ordered CQ object around the engine,
 * and the calls between ocq.c (its life and plumbing) and ocq_cq.c (the
 * drop-in allocation calls and the CQ pool).
 */
#ifndef _OCQ_PRIV_H
#define _OCQ_PRIV_H

#include <linux/dim.h>
#include <linux/hrtimer.h>
#include <linux/list.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_ocq.h>

#include "ocq_engine.h"

struct ocq_work;

/* completions one ib_poll_cq() of a direct OCQ takes: ib_cq's direct batch */
#define IB_OCQ_DIRECT_BATCH 8

/**
 * struct ocq_direct - an %IB_POLL_DIRECT OCQ's state
 * @busy: bit 0: a caller of ib_ocq_process_cq_direct() owns the CQ; the
 *	others return at once (taken with acquire, dropped with release:
 *	the next owner sees the last one's stores, counters included)
 * @wcs: what one poll took (B)
 * @runs: calls that owned the CQ (B)
 * @empty_runs: of those, the ones that found nothing (B)
 * @polls: ib_poll_cq() calls (B)
 * @completions: completions dispatched (B)
 * @cq_errors: asynchronous CQ errors the provider reported (atomic)
 * @contended: calls that found the CQ owned and returned 0 (atomic; on a
 *	line of its own, away from what the owner writes)
 *
 * B: written by the owner of @busy only, read locklessly by the stats.
 */
struct ocq_direct {
	unsigned long busy;
	struct ib_wc wcs[IB_OCQ_DIRECT_BATCH];
	u64 runs;
	u64 empty_runs;
	u64 polls;
	u64 completions;
	atomic64_t cq_errors;
	atomic64_t contended ____cacheline_aligned_in_smp;
};

/*
 * Locking rules.
 *
 * I: set before the OCQ is published, read-only afterwards.
 * L: ib_ocq_lock.
 * P: ib_ocq_pool_lock.
 * T: written under @tune_lock with WRITE_ONCE(), read locklessly with
 *    READ_ONCE() (any value written is one the runs can act on).
 */

/**
 * struct ib_ocq - an ordered completion queue
 * @engine: the state machine
 * @cq: the CQ; its cq_context is the ULP's, as with ib_alloc_cq() (I)
 * @poll_ctx: where the runs execute: %IB_POLL_SOFTIRQ (irq_poll, every
 *	unit), %IB_POLL_WORKQUEUE (the CQ run on the CPU that took the event)
 *	or %IB_POLL_UNBOUND_WORKQUEUE (I)
 * @works: one work item per engine unit (I)
 * @watchdog: safety net timer, if &ib_ocq_attr.watchdog_ms (I)
 * @watchdog_ms: its period (I)
 * @lease: ends a pause the ULP does not end, see ocq_engine_lease() (I)
 * @pause_ms: its period (I)
 * @defer: the deferred re-arm's timer: started by the CQ run that defers,
 *	queues the next one; cancelled by teardown
 * @attr: the attributes it was made with, for the pool's matching (I)
 * @id: name in debugfs (I)
 * @debugfs: its debugfs directory (I)
 * @entry: on ib_ocq_list (L); while it is, @cq's wc points at the OCQ's
 *	poll batch, by which the handlers find it (ib_ocq_of())
 * @pooled: a CQ of the pool, shared: freed only with the pool (I)
 * @direct: %IB_POLL_DIRECT: the CQ is never armed and the engine not used;
 *	ib_ocq_process_cq_direct() polls it
 * @tune_lock: serialises retunes (ib_ocq_set_tune()) and software DIM's
 *	updates of @defer_usecs
 * @tuned: the moderation in force, &ib_ocq_attr's at first (T)
 * @defer_usecs: the deferred re-arm's delay: @tuned's defer_usecs, or with
 *	%IB_OCQ_DEFER_DIM the one DIM's profile gives (T; read by the CQ run's
 *	ib_ocq_defer(): a stale value times one deferral)
 * @dim: interrupt moderation, on a device with modify_cq and use_cq_dim as
 *	ib_alloc_cq() does it, or software DIM of the deferred re-arm's delay
 *	(%IB_OCQ_DEFER_DIM); NULL otherwise.  Set at creation or by the first
 *	retune that turns software DIM on (T, published with
 *	smp_store_release()); fed by the CQ runs while @dim_on
 * @dim_provider: @dim is the provider's moderation, not software DIM (I)
 * @dim_on: the CQ runs feed @dim (T)
 * @dim_taken: completions the CQ runs took since DIM's last sample (C: the
 *	CQ unit's work item or softirq poll, which never runs twice at once)
 * @rcu: %IB_POLL_SOFTIRQ: frees the OCQ after a grace period
 */
struct ib_ocq {
	struct ocq_engine engine;
	struct ib_cq *cq;
	enum ib_poll_context poll_ctx;
	struct ocq_work *works;
	struct delayed_work watchdog;
	unsigned int watchdog_ms;
	struct delayed_work lease;
	unsigned int pause_ms;
	struct hrtimer defer;
	struct mutex tune_lock; /* serialises retunes, see @tune_lock */
	struct ib_ocq_tune tuned;
	unsigned int defer_usecs;
	struct ib_ocq_attr attr;
	unsigned int id;
	struct dentry *debugfs;
	struct list_head entry;
	bool pooled;
	struct ocq_direct direct;
	struct dim *dim;
	bool dim_provider;
	bool dim_on;
	u64 dim_taken;
	struct rcu_head rcu;
};

struct ib_ocq *ib_ocq_create(struct ib_device *dev, void *private, int nr_cqe,
			     int comp_vector, enum ib_poll_context poll_ctx,
			     const struct ib_ocq_attr *attr,
			     const char *caller);
int ib_ocq_release(struct ib_ocq *ocq);
void ib_ocq_destroy(struct ib_ocq *ocq);
int ib_ocq_vector_users(struct ib_device *dev, int comp_vector);
struct ib_ocq *ib_ocq_find(struct ib_cq *cq);
void ib_ocq_direct_stats(struct ib_ocq *ocq, struct ib_ocq_stats *s);
int ib_ocq_dim_soft(struct ib_ocq *ocq, bool on, unsigned int ceiling);
bool ib_ocq_direct_attr_ok(const struct ib_ocq_attr *attr);
void ib_ocq_tune_debugfs(struct ib_ocq *ocq);
void ib_ocq_read_tune(struct ib_ocq *ocq, struct ib_ocq_tune *t);

int ib_ocq_pool_init(void);
void ib_ocq_pool_exit(void);

#endif /* _OCQ_PRIV_H */
