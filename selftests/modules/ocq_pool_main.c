// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ocq_pool_test - ocq's CQ pool and ib_ocq_alloc_cq_any() on rxe0.
 *
 * A test module in the kselftest_module.h pattern: init runs test= and fails
 * the load if a subtest failed.
 *
 * alloc_any: 4 CQs per vector from ib_ocq_alloc_cq_any() land 4 on each
 *	vector (of as many vectors as there are online CPUs); two freed on
 *	vector 0, the next two land there again.
 * pool: PT_PAIRS loopback RC pairs (16 QPs), each QP with room taken by
 *	ib_ocq_cq_pool_get() on vector pair % 2.  Placement: every QP's CQ is
 *	on its hinted vector (modulo the device's), one pooled CQ per vector
 *	(they all fit).  Every pair streams @msgs sends; each done() checks
 *	its QP's order, exactly once, and the workqueue context.  The
 *	receiver of pair 0 sleeps @slow_ms in every done(): the pairs none of
 *	whose QPs share its flow domain (the pool's default key: the QP
 *	number, hashed over a domain per online CPU) must finish their whole
 *	stream meanwhile, never waiting longer between two of their receives
 *	than PT_HOL_DONES of pair 0's done() calls and PT_HOL_SLACK_MS (the
 *	head-of-line bound of Documentation/design.rst: a parked CQ run is
 *	woken every IB_OCQ_HOL_DONES done() calls of a busy domain); on ib_cq's
 *	pool, which runs a CQ's done() calls one after another, each would
 *	wait for all of pair 0's completions ahead of it.  Then pair 0 stops
 *	sleeping and finishes.  After the QPs are destroyed
 *	and their room put back, a pool_get() on vector 0 gets the same CQ
 *	again (the room came back), and is put back too.  The pooled CQs stay
 *	until the device goes away (the script checks that).
 * attrs: the pool shares a CQ only between gets that ask for the same
 *	&struct ib_ocq_attr.  Two gets with the same attributes share a CQ
 *	(the control: the pool does share); a get that differs from them in
 *	one attribute, each attribute in turn, gets another CQ.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/hash.h>
#include <linux/math.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_ocq.h>

#include "rxe_loop.h"

#define PT_PAIRS 8
#define PT_DEPTH 16 /* sends in flight per pair */
/*
 * Every receive of a stream is posted before it starts: a receiver whose
 * done() is slow never runs out (no RNR retries, which under TCG would
 * starve the other QPs of the device).  msgs is at most PT_MAX_MSGS, so
 * the QPs of a vector fit one pooled CQ.
 */
#define PT_MAX_MSGS 400
#define PT_MSG 64
/* what one QP can have outstanding, and the drain's own */
#define PT_QP_CQE (PT_DEPTH + PT_MAX_MSGS + 2)
/* tries to give pair PT_JUDGED QPs outside the slow receiver's domain */
#define PT_QP_TRIES 32
/* the pair on the slow one's CQ made to share none of its domains */
#define PT_JUDGED 2
#define PT_ANY_PER_VECTOR 4
/* pool: the longest wait of an independent pair, in slow done() calls... */
#define PT_HOL_DONES (IB_OCQ_HOL_DONES + 4)
/* ... and in scheduling (TCG on a busy host) */
#define PT_HOL_SLACK_MS 1000

static char *test = "pool";
module_param(test, charp, 0444);
MODULE_PARM_DESC(test, "alloc_any, attrs or pool");

static unsigned int msgs = 400;
module_param(msgs, uint, 0444);
MODULE_PARM_DESC(msgs, "messages per pair (default and most 400)");

static unsigned int slow_ms = 100;
module_param(slow_ms, uint, 0444);
MODULE_PARM_DESC(slow_ms, "pool: how long pair 0's receive done() sleeps");

static unsigned int wait_s = 300;
module_param(wait_s, uint, 0444);
MODULE_PARM_DESC(wait_s, "seconds a stream may take (default 300)");

struct pt_pair;

struct pt_wr {
	struct ib_cqe cqe;
	struct pt_pair *p;
	struct ib_sge sge;
	union {
		struct ib_send_wr send;
		struct ib_recv_wr recv;
	};
	u32 ticket; /* posting order on its QP */
};

/**
 * struct pt_pair - a loopback pair on pooled CQs
 * @idx: 0..PT_PAIRS-1
 * @vector: the vector hint of its pool_get() calls
 * @cq: the CQ of each QP (sender, receiver)
 * @qp: qp[0] sends to qp[1]
 * @swr: the sends
 * @rwr: the receives, one per message
 * @buf: PT_DEPTH + msgs messages
 * @dma: where @buf is mapped
 * @next_seq: sequence number of the next send
 * @send_ticket: ticket the next send done() expects
 * @send_next: ticket of the next send posted
 * @recv_ticket: ticket the next receive done() expects
 * @recv_next: ticket of the next receive posted
 * @recv_seq: sequence number the next receive must carry (read by the test)
 * @bad: checks that failed
 * @streamed: every message received, or an error
 * @ms: how long its stream took
 * @last: when its last receive done() ran
 * @max_gap_ms: the longest time between two of its receive done() calls
 */
struct pt_pair {
	unsigned int idx;
	int vector;
	struct ib_cq *cq[2];
	struct ib_qp *qp[2];
	struct pt_wr swr[PT_DEPTH];
	struct pt_wr *rwr;
	void *buf;
	u64 dma;
	u32 next_seq;
	u32 send_ticket, send_next;
	u32 recv_ticket, recv_next;
	u32 recv_seq;
	u32 bad;
	struct completion streamed;
	s64 ms;
	ktime_t last;
	s64 max_gap_ms;
};

static struct ib_device *pt_dev;
static struct ib_pd *pt_pd;
static struct rxe_loop pt_loop;
static struct pt_pair *pt_pairs;
static bool pt_slow; /* pair 0's receiver sleeps in done() */
static ktime_t pt_t0;
static unsigned int pt_nr, pt_failed;

static void pt_result(bool ok, const char *name)
{
	pt_failed += !ok;
	pr_info("%sok %u %s\n", ok ? "" : "not ", ++pt_nr, name);
}

static void pt_fail(struct pt_pair *p, const char *what, u32 a, u32 b)
{
	if (!p->bad++)
		pr_info("# pair %u: %s (%u, expected %u)\n", p->idx, what, a,
			b);
	complete_all(&p->streamed);
}

/* The pool's CQs run done() in a workqueue worker. */
static void pt_check_ctx(struct pt_pair *p, struct ib_cq *cq, int qp)
{
	if (cq != p->cq[qp])
		pt_fail(p, "done() on a CQ not its QP's", 0, 0);
	/* pt_no_hol() and pt_finish() both wait for the stream */
	if (!in_task() || !(current->flags & PF_WQ_WORKER))
		pt_fail(p, "done() not in a workqueue worker", 0, 0);
}

static void pt_prep_send(struct pt_pair *p, struct pt_wr *wr)
{
	u32 *msg = p->buf + (wr - p->swr) * PT_MSG;

	*msg = p->next_seq++;
	ib_dma_sync_single_for_device(pt_dev, wr->sge.addr, PT_MSG,
				      DMA_TO_DEVICE);
	wr->ticket = p->send_next++;
	wr->send.next = NULL;
}

static int pt_post_send(struct pt_pair *p, struct pt_wr *wr)
{
	pt_prep_send(p, wr);
	return ib_post_send(p->qp[0], &wr->send, NULL);
}

static int pt_post_recv(struct pt_pair *p, struct pt_wr *wr)
{
	wr->ticket = p->recv_next++;
	return ib_post_recv(p->qp[1], &wr->recv, NULL);
}

static void pt_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct pt_wr *wr = container_of(wc->wr_cqe, struct pt_wr, cqe);
	struct pt_pair *p = wr->p;

	pt_check_ctx(p, cq, 0);
	if (wr->ticket != p->send_ticket++)
		pt_fail(p, "send completed out of order", wr->ticket,
			p->send_ticket - 1);
	if (wc->status != IB_WC_SUCCESS)
		return;
	if (p->next_seq < msgs && pt_post_send(p, wr))
		pt_fail(p, "repost of a send failed", 0, 0);
}

static void pt_note_gap(struct pt_pair *p)
{
	ktime_t now = ktime_get();

	if (p->last)
		p->max_gap_ms =
			max(p->max_gap_ms, ktime_ms_delta(now, p->last));
	p->last = now;
}

static void pt_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct pt_wr *wr = container_of(wc->wr_cqe, struct pt_wr, cqe);
	struct pt_pair *p = wr->p;
	u32 *msg = p->buf + (PT_DEPTH + (wr - p->rwr)) * PT_MSG;

	pt_check_ctx(p, cq, 1);
	if (wr->ticket != p->recv_ticket++)
		pt_fail(p, "receive completed out of order", wr->ticket,
			p->recv_ticket - 1);
	if (wc->status != IB_WC_SUCCESS)
		return;
	if (!p->idx && READ_ONCE(pt_slow))
		msleep(slow_ms);
	pt_note_gap(p);
	ib_dma_sync_single_for_cpu(pt_dev, wr->sge.addr, PT_MSG,
				   DMA_FROM_DEVICE);
	if (*msg != p->recv_seq)
		pt_fail(p, "message out of sequence", *msg, p->recv_seq);
	WRITE_ONCE(p->recv_seq, p->recv_seq + 1);
	if (p->recv_seq == msgs) {
		p->ms = ktime_ms_delta(ktime_get(), pt_t0);
		complete_all(&p->streamed);
	}
}

static void pt_init_wr(struct pt_pair *p, struct pt_wr *wr, unsigned int slot,
		       bool send)
{
	wr->p = p;
	wr->cqe.done = send ? pt_send_done : pt_recv_done;
	wr->sge.addr = p->dma + slot * PT_MSG;
	wr->sge.length = PT_MSG;
	wr->sge.lkey = pt_pd->local_dma_lkey;
	if (send) {
		wr->send.wr_cqe = &wr->cqe;
		wr->send.sg_list = &wr->sge;
		wr->send.num_sge = 1;
		wr->send.opcode = IB_WR_SEND;
		wr->send.send_flags = IB_SEND_SIGNALED;
	} else {
		wr->recv.wr_cqe = &wr->cqe;
		wr->recv.sg_list = &wr->sge;
		wr->recv.num_sge = 1;
	}
}

static unsigned int pt_domain(struct ib_qp *qp);

/*
 * A QP of @p.  Pair PT_JUDGED's QPs are made again until they are outside
 * the domain of pair 0's receiver, so that the head-of-line check always
 * has a pair on the slow one's CQ to judge (the domain of a QP is a hash
 * of its number).
 */
static struct ib_qp *pt_create_qp(struct pt_pair *p,
				  struct ib_qp_init_attr *init)
{
	struct ib_qp *slow = pt_pairs[0].qp[1], *qp;
	unsigned int i;

	for (i = 0; i < PT_QP_TRIES; i++) {
		qp = ib_create_qp(pt_pd, init);
		if (IS_ERR(qp) || p->idx != PT_JUDGED ||
		    num_online_cpus() < 2 || pt_domain(qp) != pt_domain(slow))
			return qp;
		ib_destroy_qp(qp);
	}
	return ERR_PTR(-EAGAIN);
}

static int pt_create_qps(struct pt_pair *p)
{
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = {
			.max_send_wr = PT_DEPTH + 1,
			.max_recv_wr = PT_MAX_MSGS + 1,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};
	int i, ret;

	for (i = 0; i < 2; i++) {
		p->cq[i] = ib_ocq_cq_pool_get(pt_dev, PT_QP_CQE, p->vector,
					      IB_POLL_WORKQUEUE, NULL);
		if (IS_ERR(p->cq[i]))
			return PTR_ERR(p->cq[i]);
		init.send_cq = p->cq[i];
		init.recv_cq = p->cq[i];
		p->qp[i] = pt_create_qp(p, &init);
		if (IS_ERR(p->qp[i]))
			return PTR_ERR(p->qp[i]);
	}
	ret = rxe_loop_connect(&pt_loop, p->qp[0], p->qp[1]->qp_num);
	if (!ret)
		ret = rxe_loop_connect(&pt_loop, p->qp[1], p->qp[0]->qp_num);
	return ret;
}

/* QPs first, then their room in the pool. */
static void pt_pair_teardown(struct pt_pair *p)
{
	int i;

	for (i = 1; i >= 0; i--) {
		if (!IS_ERR_OR_NULL(p->qp[i]))
			ib_destroy_qp(p->qp[i]);
		p->qp[i] = NULL;
	}
	for (i = 0; i < 2; i++) {
		if (!IS_ERR_OR_NULL(p->cq[i]))
			ib_ocq_cq_pool_put(p->cq[i], PT_QP_CQE);
		p->cq[i] = NULL;
	}
	if (p->buf && !ib_dma_mapping_error(pt_dev, p->dma))
		ib_dma_unmap_single(pt_dev, p->dma, (PT_DEPTH + msgs) * PT_MSG,
				    DMA_BIDIRECTIONAL);
	kfree(p->buf);
	p->buf = NULL;
	kfree(p->rwr);
	p->rwr = NULL;
}

static int pt_pair_setup(struct pt_pair *p, unsigned int idx)
{
	size_t len = (PT_DEPTH + msgs) * PT_MSG;
	unsigned int i;

	p->idx = idx;
	p->vector = idx % 2;
	init_completion(&p->streamed);
	p->rwr = kcalloc(msgs, sizeof(*p->rwr), GFP_KERNEL);
	p->buf = kzalloc(len, GFP_KERNEL);
	if (!p->buf || !p->rwr)
		return -ENOMEM;
	p->dma = ib_dma_map_single(pt_dev, p->buf, len, DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(pt_dev, p->dma))
		return -ENOMEM;
	for (i = 0; i < PT_DEPTH; i++)
		pt_init_wr(p, &p->swr[i], i, true);
	for (i = 0; i < msgs; i++)
		pt_init_wr(p, &p->rwr[i], PT_DEPTH + i, false);
	return pt_create_qps(p);
}

static int pt_pair_start(struct pt_pair *p)
{
	unsigned int i, n = min_t(unsigned int, PT_DEPTH, msgs);
	int ret = 0;

	for (i = 0; i < msgs && !ret; i++)
		ret = pt_post_recv(p, &p->rwr[i]);
	if (ret || !n)
		return ret;
	for (i = 0; i < n; i++) {
		pt_prep_send(p, &p->swr[i]);
		if (i)
			p->swr[i - 1].send.next = &p->swr[i].send;
	}
	return ib_post_send(p->qp[0], &p->swr[0].send, NULL);
}

/* Where the pairs are, while @p is awaited: for a stream that is slow. */
static void pt_progress(struct pt_pair *p)
{
	unsigned int i;

	for (i = 0; i < PT_PAIRS; i++)
		pr_info("# waiting for pair %u: pair %u at %u of %u receives, %u sends done\n",
			p->idx, i, READ_ONCE(pt_pairs[i].recv_seq), msgs,
			READ_ONCE(pt_pairs[i].send_ticket));
}

/*
 * Wait for @p's stream, a second at a time: a test that waits long in one
 * go looks like a hung task.
 */
static bool pt_wait_stream(struct pt_pair *p)
{
	unsigned int s;

	for (s = 0; s < wait_s; s++) {
		if (wait_for_completion_timeout(&p->streamed, HZ))
			return true;
		if (s % 10 == 9)
			pt_progress(p);
	}
	return false;
}

/* The domain the pool's default flow key gives @qp: see ib_ocq_cq_pool_get(). */
static unsigned int pt_domain(struct ib_qp *qp)
{
	return reciprocal_scale(hash_32(qp->qp_num, 32), num_online_cpus());
}

/* A pair none of whose QPs shares a CQ and domain with pair 0's receiver. */
static bool pt_independent(const struct pt_pair *p)
{
	const struct pt_pair *slow = &pt_pairs[0];
	unsigned int i;

	for (i = 0; i < 2; i++)
		if (p->cq[i] == slow->cq[1] &&
		    pt_domain(p->qp[i]) == pt_domain(slow->qp[1]))
			return false;
	return true;
}

static int pt_vectors(void)
{
	return min_t(int, max(pt_dev->num_comp_vectors, 1), num_online_cpus());
}

/* Every QP's CQ on its hinted vector; one pooled CQ per vector used. */
static bool pt_placement_ok(void)
{
	struct ib_cq *per_vector[2] = {};
	unsigned int i, j;
	bool ok = true;

	for (i = 0; i < PT_PAIRS; i++) {
		struct pt_pair *p = &pt_pairs[i];
		int want = p->vector % max(pt_dev->num_comp_vectors, 1);

		for (j = 0; j < 2; j++) {
			struct ib_cq *cq = p->cq[j];

			if (cq->comp_vector != want || !ib_cq_to_ocq(cq)) {
				pr_info("# pair %u qp %u: CQ on vector %u, wanted %d\n",
					i, j, cq->comp_vector, want);
				ok = false;
			}
			if (!per_vector[want])
				per_vector[want] = cq;
			else if (per_vector[want] != cq)
				ok = false;
		}
	}
	pr_info("# placement: vector 0 CQ %u, vector 1 CQ %d\n",
		per_vector[0] ? per_vector[0]->res.id : 0,
		per_vector[1] ? (int)per_vector[1]->res.id : -1);
	return ok;
}

/* The independent pairs stream on, within the bound, while pair 0 crawls. */
static bool pt_no_hol(void)
{
	s64 bound = PT_HOL_DONES * slow_ms + PT_HOL_SLACK_MS;
	unsigned int i, independent = 0;
	bool ok = true;

	for (i = 1; i < PT_PAIRS; i++) {
		struct pt_pair *p = &pt_pairs[i];

		if (!pt_independent(p)) {
			pr_info("# pair %u shares pair 0's domain: not judged\n",
				i);
			continue;
		}
		independent++;
		if (!pt_wait_stream(p))
			ok = false;
		pr_info("# pair %u: %u receives in %lld ms, longest wait %lld ms (bound %lld)\n",
			i, READ_ONCE(p->recv_seq), p->ms, p->max_gap_ms, bound);
		ok &= p->recv_seq == msgs && p->max_gap_ms <= bound;
	}
	pr_info("# %u independent pairs done; pair 0 (slow) had %u of %u receives\n",
		independent, READ_ONCE(pt_pairs[0].recv_seq), msgs);
	/* pair PT_JUDGED shares pair 0's CQ, not its domain */
	return ok && pt_independent(&pt_pairs[PT_JUDGED]);
}

static bool pt_finish(void)
{
	unsigned int i;
	bool ok = true;

	for (i = 0; i < PT_PAIRS; i++) {
		struct pt_pair *p = &pt_pairs[i];

		if (!pt_wait_stream(p))
			pr_info("# pair %u: %u of %u in %u s\n", i, p->recv_seq,
				msgs, wait_s);
		ib_drain_qp(p->qp[0]);
		ib_drain_qp(p->qp[1]);
		pr_info("# pair %u: %lld ms, %u bad, vector %d\n", i, p->ms,
			p->bad, p->vector);
		ok &= !p->bad && p->recv_seq == msgs &&
		      p->send_ticket == p->send_next &&
		      p->recv_ticket == p->recv_next;
	}
	return ok;
}

/* The room put back: a pool_get() on vector 0 gets the same CQ again. */
static bool pt_room_returned(struct ib_cq *vector0)
{
	struct ib_cq *cq =
		ib_ocq_cq_pool_get(pt_dev, 4096, 0, IB_POLL_WORKQUEUE, NULL);
	bool ok = !IS_ERR(cq) && cq == vector0;

	if (!IS_ERR(cq))
		ib_ocq_cq_pool_put(cq, 4096);
	return ok;
}

static int pt_run_pool(void)
{
	struct ib_cq *vector0;
	unsigned int i;
	int ret = 0;
	bool ok;

	pt_pairs = kcalloc(PT_PAIRS, sizeof(*pt_pairs), GFP_KERNEL);
	if (!pt_pairs)
		return -ENOMEM;
	for (i = 0; i < PT_PAIRS && !ret; i++)
		ret = pt_pair_setup(&pt_pairs[i], i);
	pt_result(!ret, "setup");
	if (ret)
		goto out;
	pt_result(pt_placement_ok(), "placement");
	vector0 = pt_pairs[0].cq[0];
	WRITE_ONCE(pt_slow, true);
	pt_t0 = ktime_get();
	for (i = 0; i < PT_PAIRS && !ret; i++)
		ret = pt_pair_start(&pt_pairs[i]);
	pt_result(!ret, "start");
	if (!ret && num_online_cpus() < 2)
		pr_info("ok %u slow_qp_no_hol # SKIP needs two online CPUs\n",
			++pt_nr);
	else if (!ret)
		pt_result(pt_no_hol(), "slow_qp_no_hol");
	WRITE_ONCE(pt_slow, false);
	ok = !ret && pt_finish();
	pt_result(ok, "order_exactly_once");
	for (i = 0; i < PT_PAIRS; i++)
		pt_pair_teardown(&pt_pairs[i]);
	pt_result(pt_room_returned(vector0), "get_put_balance");
out:
	for (i = 0; i < PT_PAIRS; i++)
		pt_pair_teardown(&pt_pairs[i]);
	kfree(pt_pairs);
	return ret;
}

/* 4 per vector, evenly; freed ones are refilled first. */
static int pt_run_alloc_any(void)
{
	int nvec = pt_vectors(), n = PT_ANY_PER_VECTOR * nvec, i, v;
	struct ib_cq **cqs;
	int count[64] = {};
	bool ok = nvec <= ARRAY_SIZE(count);

	cqs = kcalloc(n, sizeof(*cqs), GFP_KERNEL);
	if (!cqs)
		return -ENOMEM;
	for (i = 0; i < n && ok; i++) {
		cqs[i] = ib_ocq_alloc_cq_any(pt_dev, NULL, 64,
					     IB_POLL_WORKQUEUE, NULL);
		ok = !IS_ERR(cqs[i]);
		if (ok)
			count[cqs[i]->comp_vector]++;
	}
	for (v = 0; v < nvec && ok; v++) {
		pr_info("# vector %d: %d CQs\n", v, count[v]);
		ok = count[v] == PT_ANY_PER_VECTOR;
	}
	pt_result(ok, "spread");
	/* free two of vector 0: the next two go there */
	for (i = 0, v = 0; i < n && v < 2 && ok; i++) {
		if (cqs[i]->comp_vector)
			continue;
		ib_ocq_free_cq(cqs[i]);
		cqs[i] = NULL;
		v++;
	}
	for (i = 0; i < n && ok; i++) {
		if (cqs[i])
			continue;
		cqs[i] = ib_ocq_alloc_cq_any(pt_dev, NULL, 64,
					     IB_POLL_WORKQUEUE, NULL);
		ok = !IS_ERR(cqs[i]) && cqs[i]->comp_vector == 0;
	}
	pt_result(ok, "refill");
	for (i = 0; i < n; i++)
		if (!IS_ERR_OR_NULL(cqs[i]))
			ib_ocq_free_cq(cqs[i]);
	kfree(cqs);
	return 0;
}

/* attrs: two process() steps that differ, for the pool to tell apart */
static atomic_t pt_processed[2];

static void pt_process_a(struct ib_cq *cq, struct ib_wc *wc)
{
	atomic_inc(&pt_processed[0]);
}

static void pt_process_b(struct ib_cq *cq, struct ib_wc *wc)
{
	atomic_inc(&pt_processed[1]);
}

static u32 pt_flow_key(struct ib_cq *cq, const struct ib_wc *wc)
{
	return wc->qp ? wc->qp->qp_num : 0;
}

/* attrs: the period of the deferral and of the suspension asked for */
#define PT_ATTR_USECS 100
/* attrs: the room each get takes */
#define PT_ATTR_CQE 1

/**
 * struct pt_attr_case - attributes the pool must keep apart
 * @name: the attribute that differs
 * @same: what two gets ask for: they share a CQ
 * @other: @same but for that attribute: a CQ of its own
 */
struct pt_attr_case {
	const char *name;
	struct ib_ocq_attr same;
	struct ib_ocq_attr other;
};

/* One case per field of struct ib_ocq_attr. */
static const struct pt_attr_case pt_attr_cases[] = {
	{ .name = "mode",
	  .same.mode = IB_OCQ_FLOW,
	  .other.mode = IB_OCQ_STRICT },
	{ .name = "policy",
	  .same.mode = IB_OCQ_FLOW,
	  .other = { .mode = IB_OCQ_FLOW, .policy = IB_ARM_DOUBLE_POLL } },
	{ .name = "flags",
	  .same.mode = IB_OCQ_FLOW,
	  .other = { .mode = IB_OCQ_FLOW, .flags = IB_OCQ_POSTPONE_ARM } },
	{ .name = "budget",
	  .same.mode = IB_OCQ_FLOW,
	  .other = { .mode = IB_OCQ_FLOW, .budget = 64 } },
	{ .name = "nr_domains",
	  .same.mode = IB_OCQ_FLOW,
	  .other = { .mode = IB_OCQ_FLOW, .nr_domains = 1 } },
	{ .name = "watchdog_ms",
	  .same.mode = IB_OCQ_FLOW,
	  .other = { .mode = IB_OCQ_FLOW, .watchdog_ms = 1000 } },
	{ .name = "pause_ms",
	  .same.mode = IB_OCQ_FLOW,
	  .other = { .mode = IB_OCQ_FLOW, .pause_ms = 100 } },
	{ .name = "flow_key",
	  .same.mode = IB_OCQ_FLOW,
	  .other = { .mode = IB_OCQ_FLOW, .flow_key = pt_flow_key } },
	{ .name = "process",
	  .same = { .mode = IB_OCQ_PARALLEL, .process = pt_process_a },
	  .other = { .mode = IB_OCQ_PARALLEL, .process = pt_process_b } },
	{ .name = "defer_usecs",
	  .same.mode = IB_OCQ_FLOW,
	  .other = { .mode = IB_OCQ_FLOW, .defer_usecs = PT_ATTR_USECS } },
	{ .name = "defer_polls",
	  .same = { .mode = IB_OCQ_FLOW, .defer_usecs = PT_ATTR_USECS },
	  .other = { .mode = IB_OCQ_FLOW,
		     .defer_usecs = PT_ATTR_USECS,
		     .defer_polls = 3 } },
	{ .name = "suspend_usecs",
	  .same.mode = IB_OCQ_FLOW,
	  .other = { .mode = IB_OCQ_FLOW, .suspend_usecs = PT_ATTR_USECS } },
};

static struct ib_cq *pt_attr_get(const struct ib_ocq_attr *attr)
{
	return ib_ocq_cq_pool_get(pt_dev, PT_ATTR_CQE, 0, IB_POLL_WORKQUEUE,
				  attr);
}

static void pt_attr_put(struct ib_cq *cq)
{
	if (!IS_ERR(cq))
		ib_ocq_cq_pool_put(cq, PT_ATTR_CQE);
}

/*
 * One case, on vector 0: two gets of @c->same share a CQ, and a get of
 * @c->other does not get that CQ.  The room is put back.
 */
static bool pt_attr_apart(const struct pt_attr_case *c)
{
	struct ib_cq *a = pt_attr_get(&c->same);
	struct ib_cq *b = pt_attr_get(&c->same);
	struct ib_cq *o = pt_attr_get(&c->other);
	bool ok = !IS_ERR(a) && !IS_ERR(b) && !IS_ERR(o);

	if (!ok)
		pr_info("# %s: pool_get: %d, %d, %d\n", c->name,
			PTR_ERR_OR_ZERO(a), PTR_ERR_OR_ZERO(b),
			PTR_ERR_OR_ZERO(o));
	else if (a != b)
		pr_info("# %s: two gets of the same attributes: CQs %u and %u\n",
			c->name, a->res.id, b->res.id);
	else if (o == a)
		pr_info("# %s: a get that differs in it got their CQ %u\n",
			c->name, a->res.id);
	ok = ok && a == b && o != a;
	pt_attr_put(o);
	pt_attr_put(b);
	pt_attr_put(a);
	return ok;
}

/* attrs: each case a subtest. */
static int pt_run_attrs(void)
{
	char name[32];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(pt_attr_cases); i++) {
		snprintf(name, sizeof(name), "apart_%s", pt_attr_cases[i].name);
		pt_result(pt_attr_apart(&pt_attr_cases[i]), name);
	}
	return 0;
}

static int __init pt_init(void)
{
	int ret;

	pr_info("KTAP version 1\n");
	pt_dev = ib_device_get_by_name("rxe0", RDMA_DRIVER_RXE);
	if (!pt_dev) {
		pr_info("# no rxe0\n");
		return -ENODEV;
	}
	pr_info("# test=%s cpus=%u vectors=%d\n", test, num_online_cpus(),
		pt_dev->num_comp_vectors);
	ret = rxe_loop_init(&pt_loop, pt_dev);
	if (ret)
		goto out_put;
	pt_pd = ib_alloc_pd(pt_dev, 0);
	if (IS_ERR(pt_pd)) {
		ret = PTR_ERR(pt_pd);
		goto out_put;
	}
	if (!msgs || msgs > PT_MAX_MSGS)
		ret = -EINVAL;
	else if (!strcmp(test, "alloc_any"))
		ret = pt_run_alloc_any();
	else if (!strcmp(test, "pool"))
		ret = pt_run_pool();
	else if (!strcmp(test, "attrs"))
		ret = pt_run_attrs();
	else
		ret = -EINVAL;
	ib_dealloc_pd(pt_pd);
out_put:
	ib_device_put(pt_dev);
	pr_info("1..%u\n", pt_nr);
	pr_info("# totals: %s\n", ret || pt_failed ? "fail" : "pass");
	return ret ?: (pt_failed ? -EINVAL : 0);
}

static void __exit pt_exit(void)
{
}

module_init(pt_init);
module_exit(pt_exit);
MODULE_LICENSE("Dual BSD/GPL");
MODULE_DESCRIPTION("ocq's CQ pool and ib_ocq_alloc_cq_any() on rxe");
