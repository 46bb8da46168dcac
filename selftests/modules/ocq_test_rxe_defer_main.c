// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ocq_test_rxe_defer - the deferred re-arm (&ib_ocq_attr.defer_usecs) and
 * the consumer-driven suspension (&ib_ocq_attr.suspend_usecs) on a real
 * provider: rxe0.
 *
 * A test module in the kselftest_module.h pattern: module init runs the
 * runs below on the device named by device= (rxe0), prints KTAP lines and
 * fails the load when a subtest failed.
 *
 * A run streams SEND_WITH_IMM over loopback RC QP pairs (QP A sends, QP B
 * receives), %RDF_WINDOW SENDs in flight per pair, all completing on one
 * ordered CQ; done() reposts.  done() checks for its queue: the work
 * request is the next one posted (order), it was posted (exactly once), a
 * receive carries the next sequence number in imm_data and payload, and
 * done() never overlaps for one queue (nor at all in %IB_OCQ_STRICT).
 * Once the stream is in, both QPs go to the error state and every receive
 * still posted must come back flushed, in order: nothing is lost.
 *
 * Each mode (strict with one pair, flow with %RDF_FLOW_PAIRS) streams twice
 * in one boot, on an OCQ without and then with the moderation test= names:
 *
 * - defer: the deferred re-arm.  With it, the events per 1000 completions
 *   must be at most 1/%RDF_RATIO of those without, and runs must have been
 *   deferred.
 * - busy: the suspension, and a kthread (the ULP) that calls
 *   ib_ocq_busy_poll() for as long as the stream runs, napping
 *   %RDF_BUSY_NAP_US after a poll that found nothing.  Taking no event while
 *   it polls (NAPI's rule: an empty busy poll keeps the suspension), the
 *   events per 1000 completions must be at most 1/%RDF_BUSY_RATIO of those
 *   without, and the busy polls must have taken most completions.
 *
 * If the flushed completions do not all come, what done() may still use is
 * leaked on purpose and the module pinned: a failed test, never a use after
 * free.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <rdma/ib_ocq.h>
#include <rdma/ib_verbs.h>

#include "rxe_loop.h"

static char *device = "rxe0";
module_param(device, charp, 0444);
MODULE_PARM_DESC(device, "RDMA device to run on");

static char *test = "defer";
module_param(test, charp, 0444);
MODULE_PARM_DESC(test, "defer (the deferred re-arm) or busy (busy polls)");

static unsigned int count = 8000;
module_param(count, uint, 0444);
MODULE_PARM_DESC(count, "SENDs per run, over all its pairs");

/* SENDs in flight per pair, and RECVs posted: twice as many */
#define RDF_WINDOW 16
#define RDF_NRECV (2 * RDF_WINDOW)
#define RDF_MSG_SIZE 64
#define RDF_MAX_PAIRS 2
#define RDF_FLOW_PAIRS 2
/*
 * the deferred re-arm: the timer's period, and its empty polls: 2 ms of
 * idle before the arm, so that a stream slowed by a busy host still runs
 * unarmed
 */
#define RDF_DEFER_USECS 100
#define RDF_DEFER_POLLS 20
/* with it, at most this fraction of the events per completion without */
#define RDF_RATIO 2
/*
 * busy: the suspension, far longer than the poller's nap even when a busy
 * host stretches it; what one busy poll takes at most; with it, at most
 * this fraction of the events per completion without
 */
#define RDF_BUSY_USECS 5000
#define RDF_BUSY_NAP_US 20
#define RDF_BUSY_BUDGET 64
#define RDF_BUSY_RATIO 10
/* a stream may be slow (TCG on a busy host), but fails after this without progress */
#define RDF_STALL_TIMEOUT (20 * HZ)
/* how long the flushed receives and a done() still running may take */
#define RDF_SETTLE_TIMEOUT (20 * HZ)
#define RDF_MAX_REPORTS 10
#define RDF_MIN_COUNT 100

struct rdf_run;

/**
 * struct rdf_wr - a work request, its wr_cqe the one posted
 * @cqe: its wr_cqe
 * @q: its queue
 * @sge: its buffer
 * @send: the SEND, on a send queue
 * @recv: the RECV, on a receive queue
 * @ticket: its position in its queue's posting order
 * @posted: posted and not completed yet
 */
struct rdf_wr {
	struct ib_cqe cqe;
	struct rdf_queue *q;
	struct ib_sge sge;
	union {
		struct ib_send_wr send;
		struct ib_recv_wr recv;
	};
	u32 ticket;
	bool posted;
};

/* The payload of a SEND, beside the sequence number in imm_data. */
struct rdf_msg {
	__le32 pair;
	__le32 seq;
};

/**
 * struct rdf_queue - the work requests of QP A's send or QP B's receive queue
 * @run: its run
 * @pair: its pair's number
 * @qp: its QP
 * @is_send: a send queue
 * @wrs: its work requests
 * @nr_wrs: how many
 * @buf: their buffers
 * @dma: the buffers' DMA address
 * @next_ticket: the ticket of the next post
 * @expect_ticket: the ticket done() expects next
 * @next_seq: send: the next sequence number sent
 * @expect_seq: receive: the next sequence number expected
 * @flushing: a flushed completion came
 * @in_done: done() calls of the queue running now
 * @overlaps: done() calls that overlapped another of the queue
 * @ok: successful completions
 * @flushed: flushed completions
 * @bad: failed checks
 *
 * Written by the queue's done() only, and by the set-up before its first
 * post: the OCQ never runs done() concurrently for one QP.
 */
struct rdf_queue {
	struct rdf_run *run;
	unsigned int pair;
	struct ib_qp *qp;
	bool is_send;
	struct rdf_wr *wrs;
	unsigned int nr_wrs;
	u8 *buf;
	u64 dma;
	u32 next_ticket;
	u32 expect_ticket;
	u32 next_seq;
	u32 expect_seq;
	bool flushing;
	atomic_t in_done;
	atomic_t overlaps;
	u32 ok;
	u32 flushed;
	u32 bad;
};

struct rdf_pair {
	struct ib_qp *qp[2];
	struct rdf_queue sq;
	struct rdf_queue rq;
};

/**
 * struct rdf_run - one stream on a fresh OCQ
 * @name: its name in the KTAP lines
 * @mode: the OCQ's mode
 * @nr_pairs: QP pairs
 * @defer_usecs: &ib_ocq_attr.defer_usecs
 * @busy_usecs: &ib_ocq_attr.suspend_usecs; the stream is busy-polled
 * @poller: the busy-polling kthread, while the stream runs
 * @busy_got: completions the busy polls took (@poller)
 * @busy_bad: busy polls that returned an error but -EBUSY (@poller)
 * @dev: the device
 * @pd: the PD
 * @ocq: the OCQ
 * @loop: where the QPs send to
 * @total: SENDs per pair
 * @pairs: the QP pairs
 * @stop: no more posting
 * @pending: successful completions still to come
 * @streamed: @pending reached 0, or the stream broke
 * @active: done() calls running now
 * @overlaps: done() calls that overlapped in %IB_OCQ_STRICT
 * @reports: failures printed
 * @stats: the OCQ's statistics once the stream was in
 */
struct rdf_run {
	char name[32];
	enum ib_ocq_mode mode;
	unsigned int nr_pairs;
	unsigned int defer_usecs;
	unsigned int busy_usecs;
	struct task_struct *poller;
	u64 busy_got;
	u32 busy_bad;
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_ocq *ocq;
	struct rxe_loop loop;
	u32 total;
	struct rdf_pair pairs[RDF_MAX_PAIRS];
	bool stop;
	atomic_t pending;
	struct completion streamed;
	atomic_t active;
	atomic_t overlaps;
	atomic_t reports;
	struct ib_ocq_stats stats;
};

struct rdf_ktap {
	unsigned int nr;
	unsigned int failed;
	unsigned int skipped;
};

static DEFINE_MUTEX(rdf_lock);
/* the device we run on, or NULL (rdf_lock) */
static struct ib_device *rdf_dev;
/* flushed completions never came: the module stays loaded (rdf_lock) */
static bool rdf_leaked;

static void rdf_result(struct rdf_ktap *k, bool ok, const char *run,
		       const char *what)
{
	k->nr++;
	if (!ok)
		k->failed++;
	pr_info("%s %u %s_%s\n", ok ? "ok" : "not ok", k->nr, run, what);
}

static __printf(2, 3) void rdf_report(struct rdf_run *r, const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	if (atomic_inc_return(&r->reports) > RDF_MAX_REPORTS)
		return;
	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	pr_info("# %s: %pV\n", r->name, &vaf);
	va_end(args);
}

/* ---- the client: which device to run on ---- */

static int rdf_add(struct ib_device *dev)
{
	if (strcmp(dev_name(&dev->dev), device))
		return -EOPNOTSUPP; /* not ours: the core will not call .remove */
	mutex_lock(&rdf_lock);
	rdf_dev = dev;
	mutex_unlock(&rdf_lock);
	return 0;
}

static void rdf_remove(struct ib_device *dev, void *client_data)
{
	mutex_lock(&rdf_lock);
	if (rdf_dev == dev)
		rdf_dev = NULL;
	mutex_unlock(&rdf_lock);
}

static struct ib_client rdf_client = {
	.name = "ocq_test_rxe_defer",
	.add = rdf_add,
	.remove = rdf_remove,
};

/* ---- posting ---- */

static void rdf_prep_send(struct rdf_queue *q, struct rdf_wr *wr)
{
	struct rdf_msg *msg = (void *)(q->buf + (wr - q->wrs) * RDF_MSG_SIZE);
	u32 seq = q->next_seq++;

	msg->pair = cpu_to_le32(q->pair);
	msg->seq = cpu_to_le32(seq);
	ib_dma_sync_single_for_device(q->run->dev, wr->sge.addr, RDF_MSG_SIZE,
				      DMA_TO_DEVICE);
	wr->send.ex.imm_data = cpu_to_be32(seq);
	wr->send.next = NULL;
	wr->ticket = q->next_ticket++;
	wr->posted = true;
}

static void rdf_prep_recv(struct rdf_queue *q, struct rdf_wr *wr)
{
	wr->recv.next = NULL;
	wr->ticket = q->next_ticket++;
	wr->posted = true;
}

static void rdf_repost(struct rdf_queue *q, struct rdf_wr *wr)
{
	int ret;

	if (q->is_send) {
		rdf_prep_send(q, wr);
		ret = ib_post_send(q->qp, &wr->send, NULL);
	} else {
		rdf_prep_recv(q, wr);
		ret = ib_post_recv(q->qp, &wr->recv, NULL);
	}
	if (ret) {
		wr->posted = false;
		/* the ticket stays unused: rdf_settled() waits for nothing */
		q->next_ticket--;
		q->bad++;
		rdf_report(q->run, "pair %u: reposting failed: %d", q->pair,
			   ret);
		complete(&q->run->streamed);
	}
}

/* ---- done() ---- */

static void rdf_send_done(struct ib_cq *cq, struct ib_wc *wc);
static void rdf_recv_done(struct ib_cq *cq, struct ib_wc *wc);

/*
 * Order and exactly once, whatever the status; true if @wc succeeded with
 * @opcode and may be reposted.
 */
static bool rdf_complete(struct rdf_queue *q, struct rdf_wr *wr,
			 const struct ib_wc *wc, enum ib_wc_opcode opcode)
{
	struct rdf_run *r = q->run;

	if (!wr->posted || wr->ticket != q->expect_ticket) {
		q->bad++;
		rdf_report(r,
			   "pair %u %s: ticket %u completed (%s), expected %u",
			   q->pair, q->is_send ? "sq" : "rq", wr->ticket,
			   wr->posted ? "posted" : "NOT posted",
			   q->expect_ticket);
	}
	wr->posted = false;
	/* rdf_settled() reads it */
	WRITE_ONCE(q->expect_ticket, wr->ticket + 1);
	if (wc->qp != q->qp) {
		q->bad++;
		rdf_report(r, "pair %u: completion of another QP", q->pair);
	}
	if (wc->status == IB_WC_WR_FLUSH_ERR) {
		/* only once the test moved the QPs to the error state */
		if (!READ_ONCE(r->stop)) {
			q->bad++;
			rdf_report(r, "pair %u: flushed mid-stream", q->pair);
			complete(&r->streamed);
		}
		q->flushing = true;
		q->flushed++;
		return false;
	}
	if (wc->status != IB_WC_SUCCESS || q->flushing ||
	    wc->opcode != opcode) {
		q->bad++;
		rdf_report(r, "pair %u %s: ticket %u status %s opcode %d%s",
			   q->pair, q->is_send ? "sq" : "rq", wr->ticket,
			   ib_wc_status_msg(wc->status), wc->opcode,
			   q->flushing ? " after a flush" : "");
		complete(&r->streamed);
		return false;
	}
	q->ok++;
	if (atomic_dec_and_test(&r->pending))
		complete(&r->streamed);
	return true;
}

static void rdf_enter(struct rdf_queue *q)
{
	struct rdf_run *r = q->run;

	/* fully ordered: pairs with smp_mb() in rdf_quiesce() */
	if (atomic_inc_return(&q->in_done) != 1)
		atomic_inc(&q->overlaps);
	if (atomic_inc_return(&r->active) != 1 && r->mode == IB_OCQ_STRICT)
		atomic_inc(&r->overlaps);
}

static void rdf_exit(struct rdf_queue *q)
{
	atomic_dec(&q->run->active);
	/* our posts are done before rdf_quiesce() can see us gone */
	smp_mb__before_atomic();
	atomic_dec(&q->in_done);
}

static void rdf_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdf_wr *wr = container_of(wc->wr_cqe, struct rdf_wr, cqe);
	struct rdf_queue *q = wr->q;

	rdf_enter(q);
	if (rdf_complete(q, wr, wc, IB_WC_SEND) && !READ_ONCE(q->run->stop) &&
	    q->next_seq < q->run->total)
		rdf_repost(q, wr);
	rdf_exit(q);
}

static void rdf_check_recv(struct rdf_queue *q, struct rdf_wr *wr,
			   const struct ib_wc *wc)
{
	struct rdf_msg *msg = (void *)(q->buf + (wr - q->wrs) * RDF_MSG_SIZE);
	u32 imm = be32_to_cpu(wc->ex.imm_data);

	ib_dma_sync_single_for_cpu(q->run->dev, wr->sge.addr, RDF_MSG_SIZE,
				   DMA_FROM_DEVICE);
	if (!(wc->wc_flags & IB_WC_WITH_IMM) || wc->byte_len != RDF_MSG_SIZE ||
	    imm != q->expect_seq || le32_to_cpu(msg->pair) != q->pair ||
	    le32_to_cpu(msg->seq) != imm) {
		q->bad++;
		rdf_report(q->run, "pair %u: seq %u (%u/%u, %u B), expected %u",
			   q->pair, imm, le32_to_cpu(msg->pair),
			   le32_to_cpu(msg->seq), wc->byte_len, q->expect_seq);
	}
	q->expect_seq = imm + 1;
}

static void rdf_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdf_wr *wr = container_of(wc->wr_cqe, struct rdf_wr, cqe);
	struct rdf_queue *q = wr->q;

	rdf_enter(q);
	if (rdf_complete(q, wr, wc, IB_WC_RECV)) {
		rdf_check_recv(q, wr, wc);
		/* SENDs in flight need receives, or they retry on RNR NAKs */
		if (!READ_ONCE(q->run->stop))
			rdf_repost(q, wr);
	}
	rdf_exit(q);
}

/* ---- set-up and teardown ---- */

static struct ib_qp *rdf_create_qp(struct rdf_run *r)
{
	struct ib_cq *cq = ib_ocq_cq(r->ocq);
	struct ib_qp_init_attr init = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = {
			.max_send_wr = RDF_WINDOW,
			.max_recv_wr = RDF_NRECV,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};

	return ib_create_qp(r->pd, &init);
}

static int rdf_queue_init(struct rdf_run *r, struct rdf_queue *q,
			  unsigned int pair, struct ib_qp *qp, bool is_send)
{
	unsigned int i;
	size_t len;

	q->run = r;
	q->pair = pair;
	q->qp = qp;
	q->is_send = is_send;
	q->nr_wrs = is_send ? RDF_WINDOW : RDF_NRECV;
	len = (size_t)q->nr_wrs * RDF_MSG_SIZE;
	q->wrs = kcalloc(q->nr_wrs, sizeof(*q->wrs), GFP_KERNEL);
	q->buf = kzalloc(len, GFP_KERNEL);
	if (!q->wrs || !q->buf)
		goto out_free;
	q->dma = ib_dma_map_single(r->dev, q->buf, len, DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(r->dev, q->dma))
		goto out_free;
	for (i = 0; i < q->nr_wrs; i++) {
		struct rdf_wr *wr = &q->wrs[i];

		wr->q = q;
		wr->cqe.done = is_send ? rdf_send_done : rdf_recv_done;
		wr->sge.addr = q->dma + i * RDF_MSG_SIZE;
		wr->sge.length = RDF_MSG_SIZE;
		wr->sge.lkey = r->pd->local_dma_lkey;
		if (is_send) {
			wr->send.wr_cqe = &wr->cqe;
			wr->send.sg_list = &wr->sge;
			wr->send.num_sge = 1;
			wr->send.opcode = IB_WR_SEND_WITH_IMM;
			wr->send.send_flags = IB_SEND_SIGNALED;
		} else {
			wr->recv.wr_cqe = &wr->cqe;
			wr->recv.sg_list = &wr->sge;
			wr->recv.num_sge = 1;
		}
	}
	return 0;

out_free:
	kfree(q->buf);
	kfree(q->wrs);
	q->buf = NULL;
	q->wrs = NULL;
	return -ENOMEM;
}

static void rdf_queue_exit(struct rdf_run *r, struct rdf_queue *q)
{
	if (!q->buf)
		return;
	ib_dma_unmap_single(r->dev, q->dma, (size_t)q->nr_wrs * RDF_MSG_SIZE,
			    DMA_BIDIRECTIONAL);
	kfree(q->buf);
	kfree(q->wrs);
}

/* Undo rdf_setup(), also a partial one; never after a leak. */
static void rdf_teardown(struct rdf_run *r)
{
	unsigned int i;
	int j;

	for (i = 0; i < r->nr_pairs; i++) {
		for (j = 1; j >= 0; j--) {
			if (!IS_ERR_OR_NULL(r->pairs[i].qp[j]))
				ib_destroy_qp(r->pairs[i].qp[j]);
		}
	}
	/* after the QPs: no done() runs once this returns */
	if (!IS_ERR_OR_NULL(r->ocq))
		ib_ocq_free(r->ocq);
	for (i = 0; i < r->nr_pairs; i++) {
		rdf_queue_exit(r, &r->pairs[i].rq);
		rdf_queue_exit(r, &r->pairs[i].sq);
	}
	if (!IS_ERR_OR_NULL(r->pd))
		ib_dealloc_pd(r->pd);
}

static int rdf_pair_create(struct rdf_run *r, struct rdf_pair *p,
			   unsigned int idx)
{
	int i, ret;

	for (i = 0; i < 2; i++) {
		p->qp[i] = rdf_create_qp(r);
		if (IS_ERR(p->qp[i]))
			return PTR_ERR(p->qp[i]);
	}
	ret = rxe_loop_connect(&r->loop, p->qp[0], p->qp[1]->qp_num);
	if (!ret)
		ret = rxe_loop_connect(&r->loop, p->qp[1], p->qp[0]->qp_num);
	if (!ret)
		ret = rdf_queue_init(r, &p->sq, idx, p->qp[0], true);
	if (!ret)
		ret = rdf_queue_init(r, &p->rq, idx, p->qp[1], false);
	return ret;
}

static int rdf_setup(struct rdf_run *r)
{
	struct ib_ocq_attr attr = {
		.mode = r->mode,
		.defer_usecs = r->defer_usecs,
		.defer_polls = r->defer_usecs ? RDF_DEFER_POLLS : 0,
		.suspend_usecs = r->busy_usecs,
	};
	/* everything outstanding at once, twice over */
	int nr_cqe = 2 * r->nr_pairs * (RDF_WINDOW + RDF_NRECV);
	unsigned int i;
	int ret;

	ret = rxe_loop_init(&r->loop, r->dev);
	if (ret) {
		pr_info("# %s: no IPv4-mapped RoCEv2 GID: %d\n", r->name, ret);
		return ret;
	}
	r->pd = ib_alloc_pd(r->dev, 0);
	if (IS_ERR(r->pd))
		return PTR_ERR(r->pd);
	r->ocq = ib_ocq_alloc(r->dev, r, nr_cqe, 0, &attr);
	if (IS_ERR(r->ocq)) {
		pr_info("# %s: ib_ocq_alloc: %ld\n", r->name, PTR_ERR(r->ocq));
		return PTR_ERR(r->ocq);
	}
	for (i = 0; i < r->nr_pairs; i++) {
		ret = rdf_pair_create(r, &r->pairs[i], i);
		if (ret) {
			pr_info("# %s: pair %u: %d\n", r->name, i, ret);
			return ret;
		}
	}
	return 0;
}

/* ---- the stream ---- */

/* Post every receive of @q, then the first window of SENDs of @s. */
static int rdf_pair_start(struct rdf_queue *s, struct rdf_queue *q)
{
	unsigned int i, n = min_t(u32, RDF_WINDOW, s->run->total);
	int ret;

	/* built whole before posting: done() takes over at the first post */
	for (i = 0; i < q->nr_wrs; i++) {
		rdf_prep_recv(q, &q->wrs[i]);
		if (i)
			q->wrs[i - 1].recv.next = &q->wrs[i].recv;
	}
	ret = ib_post_recv(q->qp, &q->wrs[0].recv, NULL);
	if (ret)
		return ret;
	for (i = 0; i < n; i++) {
		rdf_prep_send(s, &s->wrs[i]);
		if (i)
			s->wrs[i - 1].send.next = &s->wrs[i].send;
	}
	return ib_post_send(s->qp, &s->wrs[0].send, NULL);
}

/*
 * The ULP's busy polls, for as long as the stream runs: again at once
 * after a poll that took completions, after a nap otherwise (-EBUSY: an
 * event's run holds the CQ and dispatches).
 */
static int rdf_poller(void *arg)
{
	struct rdf_run *r = arg;
	int n;

	while (!kthread_should_stop()) {
		n = ib_ocq_busy_poll(ib_ocq_cq(r->ocq), RDF_BUSY_BUDGET);
		if (n > 0) {
			r->busy_got += n;
			cond_resched();
			continue;
		}
		if (n < 0 && n != -EBUSY && !r->busy_bad++)
			pr_info("# %s: ib_ocq_busy_poll: %d\n", r->name, n);
		usleep_range(RDF_BUSY_NAP_US, 2 * RDF_BUSY_NAP_US);
	}
	return 0;
}

static int rdf_poller_start(struct rdf_run *r)
{
	struct task_struct *t;

	if (!r->busy_usecs)
		return 0;
	t = kthread_run(rdf_poller, r, "ocq_rdf_poll");
	if (IS_ERR(t))
		return PTR_ERR(t);
	r->poller = t;
	return 0;
}

/* Before the flush and the free: ib_ocq_busy_poll() must not race them. */
static void rdf_poller_stop(struct rdf_run *r)
{
	if (!r->poller)
		return;
	kthread_stop(r->poller);
	r->poller = NULL;
}

/* Wait for the stream while it makes progress; false after a stall. */
static bool rdf_wait_stream(struct rdf_run *r)
{
	int last = atomic_read(&r->pending), now;

	while (!wait_for_completion_timeout(&r->streamed, RDF_STALL_TIMEOUT)) {
		now = atomic_read(&r->pending);
		if (now == last) {
			pr_info("# %s: no completion for %d s, %d still to come\n",
				r->name, RDF_STALL_TIMEOUT / HZ, now);
			return false;
		}
		last = now;
	}
	return !atomic_read(&r->pending);
}

static bool rdf_settled(struct rdf_queue *q)
{
	return READ_ONCE(q->expect_ticket) == READ_ONCE(q->next_ticket) &&
	       !atomic_read_acquire(&q->in_done);
}

/*
 * Stop posting, move every QP to the error state and wait until every
 * work request posted has completed and no done() runs.
 */
static bool rdf_flush(struct rdf_run *r)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	unsigned long end = jiffies + RDF_SETTLE_TIMEOUT;
	unsigned int i, j;
	int ret;

	WRITE_ONCE(r->stop, true);
	smp_mb(); /* pairs with atomic_inc_return() in rdf_enter() */
	/* no done() that may still post runs when the QPs go to error */
	for (i = 0; i < r->nr_pairs; i++) {
		/* pairs with smp_mb__before_atomic() in rdf_exit() */
		while (atomic_read_acquire(&r->pairs[i].sq.in_done) ||
		       atomic_read_acquire(&r->pairs[i].rq.in_done)) {
			if (time_after(jiffies, end))
				return false;
			usleep_range(20, 50);
		}
	}
	for (j = 0; j < 2; j++) {
		for (i = 0; i < r->nr_pairs; i++) {
			ret = ib_modify_qp(r->pairs[i].qp[j], &attr,
					   IB_QP_STATE);
			if (ret)
				pr_info("# %s: to the error state: %d\n",
					r->name, ret);
		}
	}
	for (i = 0; i < r->nr_pairs; i++) {
		while (!rdf_settled(&r->pairs[i].sq) ||
		       !rdf_settled(&r->pairs[i].rq)) {
			if (time_after(jiffies, end))
				return false;
			msleep(20);
		}
	}
	return true;
}

/*
 * The OCQ's statistics once the stream is done.  A run counts the
 * completions of a batch after the batch's done() calls returned, so the
 * last done() may be seen before its count: read again, for up to a
 * second, until every completion of the stream is counted.
 */
static void rdf_read_stats(struct rdf_run *r)
{
	u64 want = 2ULL * r->total * r->nr_pairs;
	unsigned long end = jiffies + HZ;

	for (;;) {
		ib_ocq_get_stats(r->ocq, &r->stats);
		if (r->stats.completions >= want || time_after(jiffies, end))
			return;
		msleep(20);
	}
}

/* What a run's KTAP lines say; false if nothing may be freed. */
static bool rdf_verdicts(struct rdf_run *r, struct rdf_ktap *k, bool streamed,
			 bool settled)
{
	const struct ib_ocq_stats *s = &r->stats;
	u32 bad = 0, overlaps = atomic_read(&r->overlaps);
	bool counts = true;
	unsigned int i;

	for (i = 0; i < r->nr_pairs; i++) {
		struct rdf_pair *p = &r->pairs[i];

		bad += p->sq.bad + p->rq.bad;
		overlaps += atomic_read(&p->sq.overlaps) +
			    atomic_read(&p->rq.overlaps);
		pr_info("# %s: pair %u: sq ok %u flushed %u, rq ok %u flushed %u\n",
			r->name, i, p->sq.ok, p->sq.flushed, p->rq.ok,
			p->rq.flushed);
		/* everything sent arrived; every other receive was flushed */
		counts &= p->sq.ok == r->total && p->rq.ok == r->total &&
			  !p->sq.flushed &&
			  p->rq.ok + p->rq.flushed == p->rq.next_ticket;
	}
	pr_info("# %s: stats completions %llu events %llu runs %llu empty_runs %llu polls %llu arms %llu defers %llu domain_runs %llu\n",
		r->name, s->completions, s->events, s->runs, s->empty_runs,
		s->polls, s->arms, s->defers, s->domain_runs);
	rdf_result(k, streamed, r->name, "stream");
	rdf_result(k, !bad, r->name, "order_and_data");
	rdf_result(k, !overlaps, r->name, "no_overlap");
	rdf_result(k, settled && counts, r->name, "nothing_lost");
	/* the stream's completions, counted before the flush */
	rdf_result(k, s->completions == 2ULL * r->total * r->nr_pairs, r->name,
		   "counted");
	if (r->defer_usecs)
		rdf_result(k, s->defers > 0, r->name, "deferred");
	else if (!r->busy_usecs)
		rdf_result(k, !s->defers, r->name, "never_deferred");
	if (r->busy_usecs) {
		pr_info("# %s: busy polls %llu took %llu completions, suspends %llu, contended %llu\n",
			r->name, s->busy_polls, r->busy_got, s->suspends,
			s->contended);
		rdf_result(k,
			   !r->busy_bad && s->suspends > 0 &&
				   2 * r->busy_got > s->completions,
			   r->name, "busy_polls_took_most");
	}
	return settled;
}

/* One stream on a fresh OCQ; false if it leaked. */
static bool rdf_run_one(struct rdf_run *r, struct rdf_ktap *k)
{
	bool streamed = false, settled = false;
	unsigned int i;
	int ret;

	pr_info("# %s: mode %d, %u pair(s), %u SENDs each, defer_usecs %u defer_polls %u suspend_usecs %u\n",
		r->name, r->mode, r->nr_pairs, r->total, r->defer_usecs,
		r->defer_usecs ? RDF_DEFER_POLLS : 0, r->busy_usecs);
	atomic_set(&r->pending, 2 * r->total * r->nr_pairs);
	init_completion(&r->streamed);
	ret = rdf_setup(r);
	rdf_result(k, !ret, r->name, "setup");
	if (ret) {
		rdf_teardown(r);
		return true;
	}
	ret = rdf_poller_start(r);
	for (i = 0; i < r->nr_pairs && !ret; i++)
		ret = rdf_pair_start(&r->pairs[i].sq, &r->pairs[i].rq);
	if (ret)
		pr_info("# %s: posting failed: %d\n", r->name, ret);
	else
		streamed = rdf_wait_stream(r);
	rdf_poller_stop(r);
	rdf_read_stats(r);
	settled = rdf_flush(r);
	if (!rdf_verdicts(r, k, streamed, settled)) {
		pr_info("# %s: flushed completions missing after %d s: leaking the QPs, the OCQ and this module\n",
			r->name, RDF_SETTLE_TIMEOUT / HZ);
		__module_get(THIS_MODULE);
		rdf_leaked = true;
		return false;
	}
	rdf_teardown(r);
	return true;
}

static u64 rdf_per_k(const struct ib_ocq_stats *s)
{
	return div64_u64(s->events * 1000, max(s->completions, 1ULL));
}

/* @mode without, then with test='s moderation: compare the events. */
static void rdf_mode(struct ib_device *dev, struct rdf_ktap *k,
		     enum ib_ocq_mode mode, const char *mname,
		     unsigned int nr_pairs, bool busy)
{
	const char *with = busy ? "busy" : "defer";
	struct rdf_run *r[2];
	unsigned int i;
	bool fewer;

	for (i = 0; i < 2; i++) {
		r[i] = kzalloc(sizeof(*r[i]), GFP_KERNEL);
		if (!r[i]) {
			rdf_result(k, false, mname, "alloc");
			goto out;
		}
		snprintf(r[i]->name, sizeof(r[i]->name), "%s_%s%s", mname,
			 i ? "" : "no_", with);
		r[i]->mode = mode;
		r[i]->nr_pairs = nr_pairs;
		r[i]->defer_usecs = i && !busy ? RDF_DEFER_USECS : 0;
		r[i]->busy_usecs = i && busy ? RDF_BUSY_USECS : 0;
		r[i]->dev = dev;
		r[i]->total = max(count / nr_pairs, 1U);
	}
	for (i = 0; i < 2; i++) {
		if (!rdf_run_one(r[i], k)) {
			r[i] = NULL; /* leaked */
			goto out;
		}
	}
	pr_info("# %s: events per 1000 completions: %llu without, %llu with %s (%llu and %llu runs)\n",
		mname, rdf_per_k(&r[0]->stats), rdf_per_k(&r[1]->stats), with,
		r[0]->stats.runs, r[1]->stats.runs);
	/* events per completion, cross-multiplied */
	fewer = r[1]->stats.events * r[0]->stats.completions *
			(busy ? RDF_BUSY_RATIO : RDF_RATIO) <
		r[0]->stats.events * r[1]->stats.completions;
	rdf_result(k, fewer, mname,
		   busy ? "fewer_events_busy_polled" :
			  "fewer_events_with_defer");
out:
	kfree(r[0]);
	kfree(r[1]);
}

static int __init rdf_init(void)
{
	struct rdf_ktap k = {};
	int ret;
	bool busy = !strcmp(test, "busy");

	if (count < RDF_MIN_COUNT || (!busy && strcmp(test, "defer")))
		return -EINVAL;
	ret = ib_register_client(&rdf_client);
	if (ret)
		return ret;
	pr_info("KTAP version 1\n");
	pr_info("# device=%s test=%s count=%u cpus=%u\n", device, test, count,
		num_online_cpus());
	mutex_lock(&rdf_lock);
	if (!rdf_dev) {
		k.nr++;
		k.skipped++;
		pr_info("ok 1 defer # SKIP device %s not present\n", device);
	} else {
		rdf_mode(rdf_dev, &k, IB_OCQ_STRICT, "strict", 1, busy);
		if (!rdf_leaked)
			rdf_mode(rdf_dev, &k, IB_OCQ_FLOW, "flow",
				 RDF_FLOW_PAIRS, busy);
	}
	mutex_unlock(&rdf_lock);
	pr_info("1..%u\n", k.nr);
	pr_info("# totals: pass:%u fail:%u skip:%u\n",
		k.nr - k.failed - k.skipped, k.failed, k.skipped);
	/* a leak keeps the module loaded: the failed rmmod tells */
	if (rdf_leaked || !k.failed)
		return 0;
	ib_unregister_client(&rdf_client);
	return -EINVAL;
}

static void __exit rdf_exit_module(void)
{
	ib_unregister_client(&rdf_client);
	pr_info("# exit\n");
}

module_init(rdf_init);
module_exit(rdf_exit_module);
MODULE_DESCRIPTION("ordered CQs on rxe: the deferred re-arm and busy polls");
MODULE_LICENSE("Dual BSD/GPL");
