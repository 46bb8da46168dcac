// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Drop-in allocation: ib_alloc_cq(), ib_alloc_cq_any(), ib_free_cq(),
 * ib_cq_pool_get() and ib_cq_pool_put() with the same arguments (and ocq's
 * attributes), taking and returning a plain struct ib_cq whose cq_context
 * is the ULP's, so that a ULP changes its allocation calls and nothing else.
 *
 * The pool shares CQs like ib_cq_pool_get(), but every pooled CQ is an
 * IB_OCQ_FLOW OCQ whose QPs are spread over as many ordering domains as
 * there are CPUs: each QP strictly ordered, QPs of different domains not
 * waiting for each other's done().
 */
#include <linux/err.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_ocq.h>

#include "ocq_priv.h"

/* entries of a pooled CQ, at least: ib_cq_pool_get()'s IB_MAX_SHARED_CQ_SZ */
#define IB_OCQ_POOL_CQE 4096

/**
 * struct ocq_pool - the pooled CQs of one device
 * @dev: the device (P)
 * @cqs: its pooled OCQs, by poll context, on cq->pool_entry (P)
 * @entry: on ib_ocq_pools (P)
 * @dead: the device is going away: take nothing more from the pool, free
 *	each CQ once its last user put its room back (P)
 */
struct ocq_pool {
	struct ib_device *dev;
	struct list_head cqs[IB_POLL_LAST_POOL_TYPE + 1];
	struct list_head entry;
	bool dead;
};

static DEFINE_MUTEX(ib_ocq_pool_lock);
static LIST_HEAD(ib_ocq_pools);

/**
 * __ib_ocq_alloc_cq - allocate an ordered CQ, as ib_alloc_cq() does a CQ
 * @dev: device to allocate the CQ on
 * @private: the CQ's cq_context, as with ib_alloc_cq()
 * @nr_cqe: number of CQ entries
 * @comp_vector: completion vector
 * @poll_ctx: %IB_POLL_SOFTIRQ, %IB_POLL_WORKQUEUE,
 *	%IB_POLL_UNBOUND_WORKQUEUE or %IB_POLL_DIRECT
 * @attr: mode and tuning; NULL for the defaults (%IB_OCQ_STRICT)
 * @caller: module name for resource tracking
 *
 * Completions are dispatched through wc->wr_cqe->done() in @poll_ctx, in
 * the order @attr asks for.  With %IB_POLL_DIRECT the CQ is never armed:
 * the ULP polls it with ib_ocq_process_cq_direct(), which dispatches in the
 * CQ's order, one caller at a time (%IB_OCQ_PARALLEL, a postponed arm and
 * the watchdog are refused there).  Free it with ib_ocq_free_cq();
 * ib_drain_qp() works on its QPs, unless &ib_ocq_attr.dispatch is set (see
 * there).  ib_cq_to_ocq() gives the ordered CQ behind it.
 *
 * Context: process context; may sleep.
 * Return: the CQ, or ERR_PTR(-EINVAL) for bad arguments (an unknown poll
 * context too, as with ib_alloc_cq()), ERR_PTR(-ENOMEM), or the provider's
 * error.
 */
struct ib_cq *__ib_ocq_alloc_cq(struct ib_device *dev, void *private,
				int nr_cqe, int comp_vector,
				enum ib_poll_context poll_ctx,
				const struct ib_ocq_attr *attr,
				const char *caller)
{
	struct ib_ocq *ocq = ib_ocq_create(dev, private, nr_cqe, comp_vector,
					   poll_ctx, attr, caller);

	return IS_ERR(ocq) ? ERR_CAST(ocq) : ocq->cq;
}
EXPORT_SYMBOL(__ib_ocq_alloc_cq);

/* The least used of @dev's first vectors, as many as there are CPUs. */
static int ib_ocq_least_used_vector(struct ib_device *dev)
{
	int nr = min_t(int, max(dev->num_comp_vectors, 1), num_online_cpus());
	int i, best = 0, best_users = INT_MAX;

	for (i = 0; i < nr; i++) {
		int users = ib_ocq_vector_users(dev, i);

		if (users < best_users) {
			best = i;
			best_users = users;
		}
	}
	return best;
}

/**
 * __ib_ocq_alloc_cq_any - allocate an ordered CQ on the least used vector
 * @dev: device to allocate the CQ on
 * @private: the CQ's cq_context, as with ib_alloc_cq_any()
 * @nr_cqe: number of CQ entries
 * @poll_ctx: as for __ib_ocq_alloc_cq()
 * @attr: mode and tuning; NULL for the defaults (%IB_OCQ_STRICT)
 * @caller: module name for resource tracking
 *
 * Like ib_alloc_cq_any(), which goes round the vectors, but the vector is
 * the one with the fewest ordered CQs of @dev now (the lowest of equals),
 * among as many vectors as there are online CPUs.
 *
 * Context: process context; may sleep.
 * Return: as __ib_ocq_alloc_cq().
 */
struct ib_cq *__ib_ocq_alloc_cq_any(struct ib_device *dev, void *private,
				    int nr_cqe, enum ib_poll_context poll_ctx,
				    const struct ib_ocq_attr *attr,
				    const char *caller)
{
	if (!dev)
		return ERR_PTR(-EINVAL);
	return __ib_ocq_alloc_cq(dev, private, nr_cqe,
				 ib_ocq_least_used_vector(dev), poll_ctx, attr,
				 caller);
}
EXPORT_SYMBOL(__ib_ocq_alloc_cq_any);

/**
 * ib_ocq_free_cq - free a CQ of __ib_ocq_alloc_cq() or __ib_ocq_alloc_cq_any()
 * @cq: the CQ; its QPs destroyed (drained first with ib_drain_qp(), but
 *	with &ib_ocq_attr.dispatch as that says)
 *
 * As ib_free_cq(): no done() runs after it returns.  A CQ ocq did not
 * allocate (or freed already), a pooled one, or one with QPs left warns
 * once and is not freed.
 *
 * Context: process context; may sleep; not from done().
 */
void ib_ocq_free_cq(struct ib_cq *cq)
{
	struct ib_ocq *ocq = cq ? ib_ocq_find(cq) : NULL;

	if (WARN_ON_ONCE(!ocq))
		return;
	ib_ocq_free(ocq);
}
EXPORT_SYMBOL(ib_ocq_free_cq);

/* --- the pool --- */

/*
 * The pool of @dev; with @create, a new one if it has none.  A device that
 * is going away has a dead pool: ERR_PTR(-ENODEV), so that nothing takes
 * a CQ the removal will not free.
 */
static struct ocq_pool *ib_ocq_pool_find(struct ib_device *dev, bool create)
{
	struct ocq_pool *pool;
	unsigned int i;

	lockdep_assert_held(&ib_ocq_pool_lock);
	list_for_each_entry(pool, &ib_ocq_pools, entry)
		if (pool->dev == dev)
			return pool->dead ? ERR_PTR(-ENODEV) : pool;
	if (!create)
		return NULL;
	pool = kzalloc(sizeof(*pool), GFP_KERNEL);
	if (!pool)
		return ERR_PTR(-ENOMEM);
	pool->dev = dev;
	for (i = 0; i < ARRAY_SIZE(pool->cqs); i++)
		INIT_LIST_HEAD(&pool->cqs[i]);
	list_add_tail(&pool->entry, &ib_ocq_pools);
	return pool;
}

/* Pooled CQs are shared only between callers that ask for the same. */
static bool ib_ocq_attr_equal(const struct ib_ocq_attr *a,
			      const struct ib_ocq_attr *b)
{
	if (a->dispatch != b->dispatch)
		return false;
	return a->mode == b->mode && a->policy == b->policy &&
	       a->flags == b->flags && a->budget == b->budget &&
	       a->nr_domains == b->nr_domains &&
	       a->watchdog_ms == b->watchdog_ms && a->pause_ms == b->pause_ms &&
	       a->flow_key == b->flow_key && a->process == b->process &&
	       a->defer_usecs == b->defer_usecs &&
	       a->defer_polls == b->defer_polls &&
	       a->suspend_usecs == b->suspend_usecs;
}

/* The least used CQ of @vector with room for @nr_cqe more, or NULL. */
static struct ib_cq *ib_ocq_pool_pick(struct list_head *cqs, int vector,
				      unsigned int nr_cqe,
				      const struct ib_ocq_attr *attr)
{
	struct ib_cq *cq, *best = NULL;

	list_for_each_entry(cq, cqs, pool_entry) {
		struct ib_ocq *ocq = ib_cq_to_ocq(cq);

		if (cq->comp_vector != vector ||
		    cq->cqe_used + nr_cqe > cq->cqe ||
		    !ib_ocq_attr_equal(&ocq->attr, attr))
			continue;
		if (!best || cq->cqe_used < best->cqe_used)
			best = cq;
	}
	return best;
}

/**
 * ib_ocq_cq_pool_get - take room for @nr_cqe completions on a shared CQ
 * @dev: the device
 * @nr_cqe: completions the caller's QP can have outstanding
 * @comp_vector_hint: the vector wanted (modulo the device's), or < 0 for
 *	the least used one
 * @poll_ctx: %IB_POLL_SOFTIRQ, %IB_POLL_WORKQUEUE or
 *	%IB_POLL_UNBOUND_WORKQUEUE (as upstream, a pool has no direct CQs)
 * @attr: mode and tuning of the shared CQs; NULL for the defaults:
 *	%IB_OCQ_FLOW (QPs spread over a domain per CPU by QP number) on the
 *	workqueue contexts, %IB_OCQ_STRICT on %IB_POLL_SOFTIRQ, where every
 *	unit runs on the CPU that took the event and domains would overlap
 *	nothing
 *
 * As ib_cq_pool_get(), with the same arguments plus @attr: the least used
 * CQ of the vector that has room, or a new one of at least
 * %IB_OCQ_POOL_CQE entries.  With the default attributes each QP sharing a
 * CQ is strictly ordered; on the workqueue contexts a QP waits for another
 * QP's done() beyond %IB_OCQ_HOL_DONES calls only when both hash to the
 * same domain, on %IB_POLL_SOFTIRQ it waits as on ib_cq's pool.  The
 * cq_context of a pooled CQ is NULL, as upstream's.  Give the room back
 * with ib_ocq_cq_pool_put() once the QP is destroyed; the pool's CQs are
 * freed when the device goes away.
 *
 * Context: process context; may sleep.
 * Return: the CQ, or an ERR_PTR() as __ib_ocq_alloc_cq() (-EINVAL for a
 * poll context a pool does not have, as ib_cq_pool_get()), or
 * ERR_PTR(-ENODEV) once the device is going away.
 */
struct ib_cq *ib_ocq_cq_pool_get(struct ib_device *dev, unsigned int nr_cqe,
				 int comp_vector_hint,
				 enum ib_poll_context poll_ctx,
				 const struct ib_ocq_attr *attr)
{
	static const struct ib_ocq_attr flow = { .mode = IB_OCQ_FLOW };
	static const struct ib_ocq_attr strict = { .mode = IB_OCQ_STRICT };
	struct ocq_pool *pool;
	struct ib_ocq *ocq;
	struct ib_cq *cq;
	int vector, cqe;

	if (!dev || !nr_cqe || nr_cqe > INT_MAX)
		return ERR_PTR(-EINVAL);
	if ((unsigned int)poll_ctx > IB_POLL_LAST_POOL_TYPE)
		return ERR_PTR(-EINVAL);
	/*
	 * irq_poll runs every unit on the CPU that took the event, one after
	 * another: flow domains would overlap nothing there and cost a hop
	 */
	if (!attr)
		attr = poll_ctx == IB_POLL_SOFTIRQ ? &strict : &flow;
	vector = comp_vector_hint < 0 ?
			 ib_ocq_least_used_vector(dev) :
			 comp_vector_hint % max(dev->num_comp_vectors, 1);

	mutex_lock(&ib_ocq_pool_lock);
	pool = ib_ocq_pool_find(dev, true);
	if (IS_ERR(pool)) {
		cq = ERR_CAST(pool);
		goto out_unlock;
	}
	cq = ib_ocq_pool_pick(&pool->cqs[poll_ctx], vector, nr_cqe, attr);
	if (!cq) {
		cqe = max_t(int, nr_cqe,
			    min(dev->attrs.max_cqe, IB_OCQ_POOL_CQE));
		ocq = ib_ocq_create(dev, NULL, cqe, vector, poll_ctx, attr,
				    KBUILD_MODNAME);
		if (IS_ERR(ocq)) {
			cq = ERR_CAST(ocq);
			goto out_unlock;
		}
		ocq->pooled = true;
		cq = ocq->cq;
		list_add_tail(&cq->pool_entry, &pool->cqs[poll_ctx]);
	}
	cq->cqe_used += nr_cqe;
out_unlock:
	mutex_unlock(&ib_ocq_pool_lock);
	return cq;
}
EXPORT_SYMBOL(ib_ocq_cq_pool_get);

/*
 * Free the CQs of @pool that nobody uses; once it is dead and empty, the
 * pool too.
 */
static void ib_ocq_pool_shrink(struct ocq_pool *pool)
{
	bool empty = true;
	struct ib_cq *cq, *next;
	unsigned int i;

	lockdep_assert_held(&ib_ocq_pool_lock);
	for (i = 0; i < ARRAY_SIZE(pool->cqs); i++) {
		list_for_each_entry_safe(cq, next, &pool->cqs[i], pool_entry) {
			struct ib_ocq *ocq = ib_cq_to_ocq(cq);

			if (cq->cqe_used || ib_ocq_release(ocq)) {
				empty = false;
				continue;
			}
			list_del(&cq->pool_entry);
			ib_ocq_destroy(ocq);
		}
	}
	if (pool->dead && empty) {
		list_del(&pool->entry);
		kfree(pool);
	}
}

static struct ocq_pool *ib_ocq_pool_of(struct ib_cq *cq)
{
	struct ocq_pool *pool;
	struct ib_cq *pos;
	unsigned int i;

	lockdep_assert_held(&ib_ocq_pool_lock);
	list_for_each_entry(pool, &ib_ocq_pools, entry)
		for (i = 0; i < ARRAY_SIZE(pool->cqs); i++)
			list_for_each_entry(pos, &pool->cqs[i], pool_entry)
				if (pos == cq)
					return pool;
	return NULL;
}

/**
 * ib_ocq_cq_pool_put - give back room taken with ib_ocq_cq_pool_get()
 * @cq: the pooled CQ
 * @nr_cqe: what was taken
 *
 * The CQ stays in the pool for later users, unless its device is going
 * away: then the last put frees it.  Putting back more than was taken, or
 * a CQ that is not pooled, warns once and does nothing.
 *
 * Context: process context; may sleep.
 */
void ib_ocq_cq_pool_put(struct ib_cq *cq, unsigned int nr_cqe)
{
	struct ocq_pool *pool;

	mutex_lock(&ib_ocq_pool_lock);
	pool = cq ? ib_ocq_pool_of(cq) : NULL;
	if (!WARN_ON_ONCE(!pool || cq->cqe_used < nr_cqe)) {
		cq->cqe_used -= nr_cqe;
		if (pool->dead)
			ib_ocq_pool_shrink(pool);
	}
	mutex_unlock(&ib_ocq_pool_lock);
}
EXPORT_SYMBOL(ib_ocq_cq_pool_put);

/**
 * ib_ocq_cq_pool_destroy - free a device's pooled CQs
 * @dev: the device
 *
 * Called by ocq when @dev is being unregistered, and by a driver or test
 * that made a device ib_core never registered before it frees it.  The
 * CQs nobody uses are freed at once; each of the others when its last
 * user puts its room back (a ULP whose own device removal runs after
 * ocq's).  Nothing is taken from the pool afterwards.
 *
 * Context: process context; may sleep.
 */
void ib_ocq_cq_pool_destroy(struct ib_device *dev)
{
	struct ocq_pool *pool;

	mutex_lock(&ib_ocq_pool_lock);
	pool = ib_ocq_pool_find(dev, false);
	if (!IS_ERR_OR_NULL(pool)) {
		pool->dead = true;
		ib_ocq_pool_shrink(pool);
	}
	mutex_unlock(&ib_ocq_pool_lock);
}
EXPORT_SYMBOL(ib_ocq_cq_pool_destroy);

static int ib_ocq_add_one(struct ib_device *dev)
{
	return 0;
}

static void ib_ocq_remove_one(struct ib_device *dev, void *client_data)
{
	ib_ocq_cq_pool_destroy(dev);
}

static struct ib_client ib_ocq_client = {
	.name = "ib_ocq",
	.add = ib_ocq_add_one,
	.remove = ib_ocq_remove_one,
};

int ib_ocq_pool_init(void)
{
	return ib_register_client(&ib_ocq_client);
}

void ib_ocq_pool_exit(void)
{
	struct ocq_pool *pool, *next;

	ib_unregister_client(&ib_ocq_client);
	/*
	 * Pools of devices ib_core never registered.  Nobody uses them: the
	 * modules that did depend on this one and are gone.
	 */
	mutex_lock(&ib_ocq_pool_lock);
	list_for_each_entry_safe(pool, next, &ib_ocq_pools, entry) {
		pool->dead = true;
		ib_ocq_pool_shrink(pool);
	}
	mutex_unlock(&ib_ocq_pool_lock);
}
