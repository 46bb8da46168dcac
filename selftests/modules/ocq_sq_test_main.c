// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ocq_sq_test - send queue accounting (include/rdma/ib_sq_acct.h) on rxe.
 *
 * A test module in the kselftest_module.h pattern: init runs the test named
 * by test=, prints KTAP lines ("ocq_sq_test: " prefix) and fails the load if
 * a subtest failed.  The plan line comes last.
 *
 * Tests (test=):
 *
 * stream     RC QP A streams SENDs to QP B at full SQ depth with selective
 *            signaling, once per policy (default, marker, all) in the same
 *            load: no post fails for lack of space, no CQ overrun, every
 *            release hook runs exactly once; reports the signaled fraction
 *            and the send rate of each policy.
 * shared_cq  four QPs (two connected pairs) send and receive on one small
 *            CQ under a shared ib_cq_credit: never an overrun.
 * teardown   QP A is drained in the middle of a stream; every outstanding
 *            request is released exactly once, by its flush completion or
 *            by ib_sq_acct_release_all().
 *
 * Sequence numbers start at start= (default just below 2^64) so every run
 * crosses the wrap.  CQs come from ib_alloc_cq(IB_POLL_WORKQUEUE); the CQ
 * event handler is set after allocation to count overruns (IB_EVENT_CQ_ERR).
 *
 * Locking: each connection's send lock (sqt_conn.lock) serializes its
 * posts (the accounting's poster side) and its pool of free requests; the
 * done callbacks of one CQ never run concurrently, which serializes the
 * reaper side.  Tests run under sqt_mutex, which .remove also takes.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <rdma/ib_sq_acct.h>
#include <rdma/ib_verbs.h>

#include "rxe_loop.h"

static char *test = "stream";
module_param(test, charp, 0444);
MODULE_PARM_DESC(test, "test to run at load time: stream, shared_cq, teardown");

static char *device = "rxe0";
module_param(device, charp, 0444);
MODULE_PARM_DESC(device, "RDMA device to attach to");

static uint sends = 100000;
module_param(sends, uint, 0444);
MODULE_PARM_DESC(sends, "SENDs per phase (shared_cq: all QPs together)");

static uint baseline_sends = 30000;
module_param(baseline_sends, uint, 0444);
MODULE_PARM_DESC(baseline_sends, "stream: SENDs of the marker and all phases");

static uint depth = 64;
module_param(depth, uint, 0444);
MODULE_PARM_DESC(depth, "accounted SQ depth (the QP gets one WR more)");

static unsigned long long start = ULLONG_MAX - 20000;
module_param(start, ullong, 0444);
MODULE_PARM_DESC(start, "first sequence number");

static uint cq_size = 100;
module_param(cq_size, uint, 0444);
MODULE_PARM_DESC(cq_size, "shared_cq: CQ entries asked for");

static uint phase_timeout_s = 120;
module_param(phase_timeout_s, uint, 0444);
MODULE_PARM_DESC(phase_timeout_s,
		 "seconds a phase may take before it counts as stuck");

/* Receives kept posted per receiving QP in the stream tests. */
#define SQT_STREAM_RECVS 256
/*
 * Receives kept posted per QP on the shared CQ: more than the peer's SQ
 * depth, so a receive is always there (no RNR wait).
 */
#define SQT_SHARED_RECVS 24
/* Connections on the shared CQ: two connected pairs. */
#define SQT_MAX_CONN 4
/* Bytes per SEND. */
#define SQT_MSG_SIZE 64
/* Shared CQ entries kept back for the drain WRs (one send, one receive). */
#define SQT_DRAIN_HEADROOM 2
/* teardown: stream this long before the drain. */
#define SQT_TEARDOWN_MS 300
/* teardown: drains that flushed nothing, tried again up to this many times */
#define SQT_FLUSH_TRIES 3
/* RNR NAK timer encoding: 1 = 0.01 ms, so a short receive gap costs little. */
#define SQT_MIN_RNR_TIMER 1

struct sqt_run;
struct sqt_conn;

/* One SEND and its release context: owned by the accounting while posted. */
struct sqt_req {
	struct ib_cqe cqe;
	struct ib_sge sge;
	struct ib_send_wr wr;
	u64 seq; /* written before the post, read by the done callback */
	struct sqt_conn *conn;
	bool busy; /* posted and not yet released: under conn->lock */
};

/* One RECV, reposted from its own completion. */
struct sqt_rreq {
	struct ib_cqe cqe;
	struct ib_sge sge;
	struct ib_recv_wr wr;
	struct sqt_conn *conn;
};

/*
 * One QP.  @lock is the send lock: it covers the poster side of @acct and
 * the request pool (@free, @nfree, sqt_req.busy), @to_post, @released and
 * @bad_release.  The done callbacks of the send CQ own @nflush.
 */
struct sqt_conn {
	struct sqt_run *run;
	struct ib_qp *qp;
	spinlock_t lock; /* the send lock, see above */
	struct ib_sq_acct acct;
	bool acct_ready;
	struct sqt_req *reqs;
	struct sqt_req **free;
	u32 nfree;
	u32 nreqs;
	u64 to_post;
	bool finished;
	u64 released;
	u64 bad_release;
	u64 nflush;
	struct sqt_rreq *rreqs;
	u32 nrecv;
};

/* One phase: a PD, CQs, connections, and what happened. */
struct sqt_run {
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *scq, *rcq; /* the same CQ on shared_cq */
	struct sqt_conn conn[SQT_MAX_CONN];
	int nconn;
	struct ib_cq_credit credit;
	bool use_credit;
	bool reap_flushed; /* false: leave flushed sends to release_all */
	enum ib_sq_signal_policy policy;
	void *sbuf, *rbuf;
	u64 sdma, rdma;
	struct rxe_loop loop; /* where the QPs send to */
	bool stop;
	atomic_t senders_left;
	struct completion done;
	atomic_t cq_overruns;
	atomic_t async_events;
	atomic_t wc_errors;
	atomic_t post_errors;
	atomic_t reap_errors;
};

/* KTAP result counters of one test. */
struct sqt_ktap {
	unsigned int nr;
	unsigned int failed;
	unsigned int skipped;
};

static const char *const sqt_policy_names[] = {
	[IB_SQ_SIGNAL_DEFAULT] = "default",
	[IB_SQ_SIGNAL_MARKER] = "marker",
	[IB_SQ_SIGNAL_ALL] = "all",
};

static struct ib_client sqt_client;
static DEFINE_MUTEX(sqt_mutex);
/* The attached device, or NULL: under sqt_mutex. */
static struct ib_device *sqt_dev;

static __printf(3, 4) void sqt_result(struct sqt_ktap *k, bool ok,
				      const char *fmt, ...)
{
	va_list ap;
	char name[64];

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	k->nr++;
	if (!ok)
		k->failed++;
	pr_info("%s %u %s\n", ok ? "ok" : "not ok", k->nr, name);
}

static void sqt_skip(struct sqt_ktap *k, const char *name, const char *why)
{
	k->nr++;
	k->skipped++;
	pr_info("ok %u %s # SKIP %s\n", k->nr, name, why);
}

/* ---- events ---- */

static void sqt_cq_event(struct ib_event *ev, void *ctx)
{
	struct sqt_run *run = ctx;

	if (ev->event == IB_EVENT_CQ_ERR)
		atomic_inc(&run->cq_overruns);
	else
		atomic_inc(&run->async_events);
	pr_info("# CQ event: %s\n", ib_event_msg(ev->event));
}

static void sqt_qp_event(struct ib_event *ev, void *ctx)
{
	struct sqt_run *run = ctx;

	atomic_inc(&run->async_events);
	pr_info("# QP event: %s\n", ib_event_msg(ev->event));
}

/* ---- the poster side ---- */

/* Post as many requests as the accounting allows. */
static void sqt_refill(struct sqt_conn *c)
{
	struct sqt_run *run = c->run;
	struct sqt_req *r;
	int ret;

	spin_lock_bh(&c->lock);
	while (c->to_post && c->nfree && !READ_ONCE(run->stop)) {
		r = c->free[c->nfree - 1];
		r->wr.next = NULL;
		/* the last SEND is signaled, so its completion retires everything */
		ret = ib_sq_acct_post_send(&c->acct, c->qp, &r->wr,
					   c->to_post == 1, r, &r->seq);
		if (ret == -ENOSPC)
			break; /* SQ or CQ full: a completion will call us again */
		if (ret) {
			atomic_inc(&run->post_errors);
			pr_info("# ib_post_send: %d\n", ret);
			WRITE_ONCE(run->stop, true);
			break;
		}
		/* the release hook takes c->lock: it cannot see r before this */
		r->busy = true;
		c->nfree--;
		c->to_post--;
	}
	spin_unlock_bh(&c->lock);
}

/* Refill @c, or every connection when they compete for one CQ credit. */
static void sqt_kick(struct sqt_run *run, struct sqt_conn *c)
{
	int i;

	if (!run->use_credit) {
		sqt_refill(c);
		return;
	}
	for (i = 0; i < run->nconn; i++)
		if (run->conn[i].acct_ready)
			sqt_refill(&run->conn[i]);
}

/* Signal the waiter once @c has posted everything and all of it retired. */
static void sqt_check_finished(struct sqt_conn *c)
{
	struct sqt_run *run = c->run;
	bool fin = false;

	spin_lock_bh(&c->lock);
	if (!c->finished && !c->to_post && !ib_sq_acct_outstanding(&c->acct)) {
		c->finished = true;
		fin = true;
	}
	spin_unlock_bh(&c->lock);
	if (fin && atomic_dec_and_test(&run->senders_left))
		complete(&run->done);
}

/* ---- the reaper side ---- */

static void sqt_release(struct ib_sq_acct *sq, u64 seq, void *ctx)
{
	struct sqt_req *r = ctx;
	struct sqt_conn *c = r->conn;

	spin_lock_bh(&c->lock);
	if (!r->busy || r->seq != seq) {
		c->bad_release++;
	} else {
		r->busy = false;
		c->free[c->nfree++] = r;
		c->released++;
	}
	spin_unlock_bh(&c->lock);
}

static void sqt_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sqt_req *r = container_of(wc->wr_cqe, struct sqt_req, cqe);
	struct sqt_conn *c = r->conn;
	struct sqt_run *run = c->run;
	/* r is outstanding until the reap below retires it: read seq first */
	u64 seq = r->seq;

	if (wc->status == IB_WC_WR_FLUSH_ERR) {
		c->nflush++;
		if (!run->reap_flushed)
			return;
	} else if (wc->status != IB_WC_SUCCESS) {
		atomic_inc(&run->wc_errors);
		pr_info("# send completion: %s\n",
			ib_wc_status_msg(wc->status));
	}
	if (ib_sq_acct_reap(&c->acct, seq) < 0)
		atomic_inc(&run->reap_errors);
	sqt_check_finished(c);
	sqt_kick(run, c);
}

static void sqt_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sqt_rreq *rr = container_of(wc->wr_cqe, struct sqt_rreq, cqe);
	struct sqt_conn *c = rr->conn;
	struct sqt_run *run = c->run;

	if (wc->status == IB_WC_SUCCESS) {
		/*
		 * Repost even after stop: sends in flight need receives (rxe
		 * answers RNR otherwise).  The reposted receive keeps the CQ
		 * credit of the one that completed.
		 */
		if (!ib_post_recv(c->qp, &rr->wr, NULL))
			return;
		atomic_inc(&run->post_errors);
	} else if (wc->status != IB_WC_WR_FLUSH_ERR) {
		atomic_inc(&run->wc_errors);
		pr_info("# recv completion: %s\n",
			ib_wc_status_msg(wc->status));
	}
	if (run->use_credit)
		ib_cq_credit_put(&run->credit, 1);
}

/* ---- set-up ---- */

static struct ib_cq *sqt_alloc_cq(struct sqt_run *run, int nr_cqe)
{
	struct ib_cq *cq =
		ib_alloc_cq(run->dev, run, nr_cqe, 0, IB_POLL_WORKQUEUE);

	/* no QP uses it yet: count overruns from here on */
	if (!IS_ERR(cq))
		cq->event_handler = sqt_cq_event;
	return cq;
}

/*
 * Create the QP of @c with @nsend accounted SENDs and @nrecv RECVs.  The
 * QP gets one WR more each way for ib_drain_qp().
 */
static int sqt_conn_create(struct sqt_run *run, struct sqt_conn *c, u32 nsend,
			   u32 nrecv)
{
	struct ib_qp_init_attr init = {
		.event_handler	= sqt_qp_event,
		.qp_context	= run,
		.send_cq	= run->scq,
		.recv_cq	= run->rcq,
		.qp_type	= IB_QPT_RC,
		.sq_sig_type	= IB_SIGNAL_REQ_WR,
		.cap = {
			.max_send_wr	= nsend + 1,
			.max_recv_wr	= nrecv + 1,
			.max_send_sge	= 1,
			.max_recv_sge	= 1,
		},
	};
	struct ib_sq_acct_attr attr = {
		.depth = nsend,
		.policy = run->policy,
		.release = sqt_release,
		.credit = run->use_credit ? &run->credit : NULL,
		.start = start,
	};
	u32 i;
	int ret;

	c->run = run;
	spin_lock_init(&c->lock);
	/*
	 * Twice as many requests as SQ slots: the accounting, not the pool,
	 * is what stops the poster.
	 */
	c->reqs = kcalloc(2 * nsend, sizeof(*c->reqs), GFP_KERNEL);
	c->free = kcalloc(2 * nsend, sizeof(*c->free), GFP_KERNEL);
	c->rreqs = kcalloc(max(nrecv, 1U), sizeof(*c->rreqs), GFP_KERNEL);
	if (!c->reqs || !c->free || !c->rreqs)
		return -ENOMEM;
	c->nreqs = 2 * nsend;
	c->nrecv = nrecv;
	for (i = 0; i < c->nreqs; i++) {
		struct sqt_req *r = &c->reqs[i];

		r->conn = c;
		r->cqe.done = sqt_send_done;
		r->sge = (struct ib_sge){ .addr = run->sdma,
					  .length = SQT_MSG_SIZE,
					  .lkey = run->pd->local_dma_lkey };
		r->wr.wr_cqe = &r->cqe;
		r->wr.sg_list = &r->sge;
		r->wr.num_sge = 1;
		r->wr.opcode = IB_WR_SEND;
		c->free[c->nfree++] = r;
	}
	for (i = 0; i < nrecv; i++) {
		struct sqt_rreq *rr = &c->rreqs[i];

		rr->conn = c;
		rr->cqe.done = sqt_recv_done;
		rr->sge = (struct ib_sge){ .addr = run->rdma,
					   .length = SQT_MSG_SIZE,
					   .lkey = run->pd->local_dma_lkey };
		rr->wr.wr_cqe = &rr->cqe;
		rr->wr.sg_list = &rr->sge;
		rr->wr.num_sge = 1;
	}
	if (nsend) {
		ret = ib_sq_acct_init(&c->acct, &attr, GFP_KERNEL);
		if (ret)
			return ret;
		c->acct_ready = true;
	}
	c->qp = ib_create_qp(run->pd, &init);
	if (IS_ERR(c->qp)) {
		ret = PTR_ERR(c->qp);
		c->qp = NULL;
		return ret;
	}
	return 0;
}

/* Post the receives of @c, each with a CQ credit if the CQ is shared. */
static int sqt_post_recvs(struct sqt_run *run, struct sqt_conn *c)
{
	u32 i;
	int ret;

	for (i = 0; i < c->nrecv; i++) {
		if (run->use_credit && !ib_cq_credit_get(&run->credit, 1))
			return -ENOSPC;
		ret = ib_post_recv(c->qp, &c->rreqs[i].wr, NULL);
		if (ret) {
			if (run->use_credit)
				ib_cq_credit_put(&run->credit, 1);
			return ret;
		}
	}
	return 0;
}

static void sqt_conn_destroy(struct sqt_conn *c)
{
	if (c->qp)
		ib_destroy_qp(c->qp);
	if (c->acct_ready)
		ib_sq_acct_destroy(&c->acct);
	kfree(c->rreqs);
	kfree(c->free);
	kfree(c->reqs);
}

static int sqt_map_bufs(struct sqt_run *run)
{
	run->sbuf = kzalloc(SQT_MSG_SIZE, GFP_KERNEL);
	run->rbuf = kzalloc(SQT_MSG_SIZE, GFP_KERNEL);
	if (!run->sbuf || !run->rbuf)
		return -ENOMEM;
	run->sdma = ib_dma_map_single(run->dev, run->sbuf, SQT_MSG_SIZE,
				      DMA_TO_DEVICE);
	if (ib_dma_mapping_error(run->dev, run->sdma))
		goto out_sdma;
	/* every receive lands in the same buffer: the payload is not checked */
	run->rdma = ib_dma_map_single(run->dev, run->rbuf, SQT_MSG_SIZE,
				      DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(run->dev, run->rdma))
		goto out_unmap_sdma;
	return 0;

out_unmap_sdma:
	ib_dma_unmap_single(run->dev, run->sdma, SQT_MSG_SIZE, DMA_TO_DEVICE);
out_sdma:
	run->sdma = 0;
	return -ENOMEM;
}

static void sqt_unmap_bufs(struct sqt_run *run)
{
	if (run->sdma) {
		ib_dma_unmap_single(run->dev, run->rdma, SQT_MSG_SIZE,
				    DMA_FROM_DEVICE);
		ib_dma_unmap_single(run->dev, run->sdma, SQT_MSG_SIZE,
				    DMA_TO_DEVICE);
	}
	kfree(run->rbuf);
	kfree(run->sbuf);
}

/*
 * Build a run: @nconn connections; with @shared, one CQ of @nr_cqe entries
 * for everything and connections paired 0<->1, 2<->3, each sending and
 * receiving; otherwise conn[0] sends to conn[1] over separate CQs.
 */
static int sqt_run_create(struct sqt_run *run, struct ib_device *dev, int nconn,
			  bool shared, int nr_cqe)
{
	int i, ret;

	run->dev = dev;
	run->nconn = nconn;
	init_completion(&run->done);
	ret = rxe_loop_init(&run->loop, dev);
	if (ret) {
		pr_info("# no IPv4-mapped RoCEv2 GID on %s: %d\n",
			dev_name(&dev->dev), ret);
		return ret;
	}
	run->loop.min_rnr_timer = SQT_MIN_RNR_TIMER;
	run->pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(run->pd)) {
		ret = PTR_ERR(run->pd);
		run->pd = NULL;
		return ret;
	}
	ret = sqt_map_bufs(run);
	if (ret)
		return ret;
	run->scq = sqt_alloc_cq(run, nr_cqe);
	if (IS_ERR(run->scq)) {
		ret = PTR_ERR(run->scq);
		run->scq = NULL;
		return ret;
	}
	if (shared) {
		run->rcq = run->scq;
		ret = ib_cq_credit_init(&run->credit,
					run->scq->cqe - SQT_DRAIN_HEADROOM);
		if (ret)
			return ret;
		run->use_credit = true;
	} else {
		run->rcq = sqt_alloc_cq(run, 2 * SQT_STREAM_RECVS + 16);
		if (IS_ERR(run->rcq)) {
			ret = PTR_ERR(run->rcq);
			run->rcq = NULL;
			return ret;
		}
	}
	for (i = 0; i < nconn; i++) {
		u32 nsend = shared || i == 0 ? depth : 0;
		u32 nrecv = shared ? SQT_SHARED_RECVS :
			    i == 1 ? SQT_STREAM_RECVS :
				     0;

		ret = sqt_conn_create(run, &run->conn[i], nsend, nrecv);
		if (ret)
			return ret;
	}
	for (i = 0; i < nconn; i += 2) {
		ret = rxe_loop_connect(&run->loop, run->conn[i].qp,
				       run->conn[i + 1].qp->qp_num);
		if (!ret)
			ret = rxe_loop_connect(&run->loop, run->conn[i + 1].qp,
					       run->conn[i].qp->qp_num);
		if (ret) {
			pr_info("# connecting the QPs failed: %d\n", ret);
			return ret;
		}
	}
	for (i = 0; i < nconn; i++) {
		ret = sqt_post_recvs(run, &run->conn[i]);
		if (ret) {
			pr_info("# posting receives failed: %d\n", ret);
			return ret;
		}
	}
	return 0;
}

/* Drain every QP (senders first, receives stay posted until then). */
static void sqt_run_drain(struct sqt_run *run)
{
	int i;

	for (i = 0; i < run->nconn; i++) {
		spin_lock_bh(&run->conn[i].lock);
		WRITE_ONCE(run->stop, true);
		spin_unlock_bh(&run->conn[i].lock);
	}
	for (i = 0; i < run->nconn; i++)
		if (run->conn[i].qp && run->conn[i].acct_ready)
			ib_drain_qp(run->conn[i].qp);
	for (i = 0; i < run->nconn; i++)
		if (run->conn[i].qp && !run->conn[i].acct_ready)
			ib_drain_qp(run->conn[i].qp);
}

/* Undo sqt_run_create(), however far it got.  The QPs must be drained. */
static void sqt_run_destroy(struct sqt_run *run)
{
	int i;

	for (i = 0; i < run->nconn; i++)
		sqt_conn_destroy(&run->conn[i]);
	/* no completion handler runs after ib_free_cq() */
	if (run->rcq && run->rcq != run->scq)
		ib_free_cq(run->rcq);
	if (run->scq)
		ib_free_cq(run->scq);
	sqt_unmap_bufs(run);
	if (run->pd)
		ib_dealloc_pd(run->pd);
}

/* Start every sender with @per_conn SENDs to post. */
static void sqt_run_start(struct sqt_run *run, u64 per_conn)
{
	int i, n = 0;

	for (i = 0; i < run->nconn; i++)
		if (run->conn[i].acct_ready)
			n++;
	atomic_set(&run->senders_left, n);
	for (i = 0; i < run->nconn; i++) {
		struct sqt_conn *c = &run->conn[i];

		if (!c->acct_ready)
			continue;
		spin_lock_bh(&c->lock);
		c->to_post = per_conn;
		spin_unlock_bh(&c->lock);
	}
	for (i = 0; i < run->nconn; i++)
		if (run->conn[i].acct_ready)
			sqt_refill(&run->conn[i]);
}

/*
 * Wait for the senders to finish, waking up every second so that a long
 * phase is not mistaken for a hung task.
 */
static bool sqt_run_wait(struct sqt_run *run)
{
	unsigned long end = jiffies + (unsigned long)phase_timeout_s * HZ;

	while (!wait_for_completion_timeout(&run->done, HZ))
		if (time_after(jiffies, end))
			return false;
	return true;
}

/* Sum of the accounting statistics of all senders. */
static void sqt_run_stats(struct sqt_run *run, struct ib_sq_acct_stats *sum)
{
	struct ib_sq_acct_stats st;
	int i;

	memset(sum, 0, sizeof(*sum));
	for (i = 0; i < run->nconn; i++) {
		if (!run->conn[i].acct_ready)
			continue;
		ib_sq_acct_get_stats(&run->conn[i].acct, &st);
		sum->posts += st.posts;
		sum->signaled += st.signaled;
		sum->blocked += st.blocked;
		sum->blocked_cq += st.blocked_cq;
		sum->reaped += st.reaped;
		sum->released += st.released;
		sum->max_depth = max(sum->max_depth, st.max_depth);
	}
}

/*
 * Every request was released exactly once: as many releases as posts, no
 * release of a request that was not posted, and none still posted.
 */
static bool sqt_run_released_once(struct sqt_run *run)
{
	struct ib_sq_acct_stats st;
	bool ok = true;
	u32 i;
	int j;

	for (j = 0; j < run->nconn; j++) {
		struct sqt_conn *c = &run->conn[j];

		if (!c->acct_ready)
			continue;
		ib_sq_acct_get_stats(&c->acct, &st);
		for (i = 0; i < c->nreqs; i++)
			ok &= !c->reqs[i].busy;
		ok &= !c->bad_release && c->released == st.posts &&
		      c->nfree == c->nreqs;
		if (!ok)
			pr_info("# conn %d: posts %llu released %llu bad %llu free %u/%u\n",
				j, st.posts, c->released, c->bad_release,
				c->nfree, c->nreqs);
	}
	return ok;
}

/* "12.34" from a fraction a/b scaled by @scale, for printing without floats. */
static void sqt_fmt_ratio(char *buf, size_t len, u64 a, u64 b, u64 scale)
{
	u64 x = b ? div64_u64(a * scale * 100, b) : 0;
	u32 rem;

	x = div_u64_rem(x, 100, &rem);
	snprintf(buf, len, "%llu.%02u", x, rem);
}

/* ---- test: stream ---- */

/* One stream phase under @policy; returns the send rate (sends/s), 0 on failure. */
static u64 sqt_stream_phase(struct ib_device *dev, struct sqt_ktap *k,
			    enum ib_sq_signal_policy policy, u32 nsends,
			    u64 *signaled)
{
	const char *pn = sqt_policy_names[policy];
	struct ib_sq_acct_stats st;
	struct sqt_run *run;
	ktime_t t0;
	u64 ns, rate = 0;
	bool done;
	char frac[24], per[24];
	int events, ret;

	run = kzalloc(sizeof(*run), GFP_KERNEL);
	if (!run) {
		sqt_result(k, false, "%s_setup", pn);
		return 0;
	}
	run->policy = policy;
	run->reap_flushed = true;
	ret = sqt_run_create(run, dev, 2, false, 2 * depth + 16);
	sqt_result(k, !ret, "%s_setup", pn);
	if (ret)
		goto out;

	t0 = ktime_get();
	sqt_run_start(run, nsends);
	done = sqt_run_wait(run);
	ns = ktime_to_ns(ktime_sub(ktime_get(), t0));
	sqt_run_stats(run, &st);
	sqt_result(k, done && st.posts == nsends && st.reaped == nsends,
		   "%s_all_sends_completed", pn);
	/* moving the QPs to the error state may raise events of its own */
	events = atomic_read(&run->async_events);
	sqt_run_drain(run);
	sqt_result(k, !ib_sq_acct_release_all(&run->conn[0].acct),
		   "%s_nothing_left_at_drain", pn);
	sqt_result(k,
		   !atomic_read(&run->post_errors) &&
			   !atomic_read(&run->wc_errors) &&
			   !atomic_read(&run->reap_errors),
		   "%s_no_post_failure", pn);
	sqt_result(k, !atomic_read(&run->cq_overruns) && !events,
		   "%s_no_cq_overrun", pn);
	sqt_result(k, sqt_run_released_once(run), "%s_released_once", pn);
	sqt_result(k, st.max_depth == depth, "%s_full_depth", pn);
	/*
	 * A signal at least every depth / 2 requests and, when nearly full,
	 * at most every depth / 4: 2 to 4 per depth (plus the last one).
	 */
	if (policy != IB_SQ_SIGNAL_ALL)
		sqt_result(k,
			   st.signaled * 100 * depth >= 190ULL * st.posts &&
				   st.signaled * 100 * depth <=
					   410ULL * st.posts,
			   "%s_signaled_2_to_4_per_depth", pn);
	else
		sqt_result(k, st.signaled == st.posts, "%s_signaled_every_send",
			   pn);
	if (ns)
		rate = div64_u64((u64)nsends * NSEC_PER_SEC, ns);
	sqt_fmt_ratio(frac, sizeof(frac), st.signaled, st.posts, 100);
	sqt_fmt_ratio(per, sizeof(per), st.signaled, st.posts, depth);
	pr_info("# %s: %llu sends in %llu ms = %llu sends/s; signaled %llu = %s %% = %s per depth %u; blocked %llu; max depth %u; seq %llu..%llu\n",
		pn, st.posts, div_u64(ns, NSEC_PER_MSEC), rate, st.signaled,
		frac, per, depth, st.blocked, st.max_depth, start,
		start + nsends - 1);
	*signaled = st.signaled;
out:
	sqt_run_destroy(run);
	kfree(run);
	return rate;
}

static void sqt_test_stream(struct ib_device *dev, struct sqt_ktap *k)
{
	static const enum ib_sq_signal_policy order[] = {
		IB_SQ_SIGNAL_DEFAULT,
		IB_SQ_SIGNAL_MARKER,
		IB_SQ_SIGNAL_ALL,
	};
	u64 rate[ARRAY_SIZE(order)], sig[ARRAY_SIZE(order)] = {};
	char ratio[24];
	int i;

	/* the default policy streams sends=, the others the shorter baseline_sends= */
	for (i = 0; i < ARRAY_SIZE(order); i++)
		rate[i] = sqt_stream_phase(dev, k, order[i],
					   i ? baseline_sends : sends, &sig[i]);
	sqt_fmt_ratio(ratio, sizeof(ratio), rate[0], rate[2], 1);
	pr_info("# summary: depth %u: default %llu sends/s (%u sends, %llu signaled), marker %llu sends/s (%u, %llu), all %llu sends/s (%u, %llu); default/all rate = %s\n",
		depth, rate[0], sends, sig[0], rate[1], baseline_sends, sig[1],
		rate[2], baseline_sends, sig[2], ratio);
}

/* ---- test: shared_cq ---- */

static void sqt_shared_phase(struct ib_device *dev, struct sqt_ktap *k,
			     enum ib_sq_signal_policy policy)
{
	const char *pn = sqt_policy_names[policy];
	struct ib_sq_acct_stats st;
	struct sqt_run *run;
	u32 held, size;
	bool done;
	int events, ret;

	run = kzalloc(sizeof(*run), GFP_KERNEL);
	if (!run) {
		sqt_result(k, false, "%s_setup", pn);
		return;
	}
	run->policy = policy;
	run->reap_flushed = true;
	ret = sqt_run_create(run, dev, SQT_MAX_CONN, true, cq_size);
	sqt_result(k, !ret, "%s_setup", pn);
	if (ret)
		goto out;
	size = run->credit.size;
	pr_info("# %s: %d QPs on one CQ of %d entries: %u credits, %u held by receives, SQ depth %u each\n",
		pn, run->nconn, run->scq->cqe, size,
		run->nconn * SQT_SHARED_RECVS, depth);

	sqt_run_start(run, sends / SQT_MAX_CONN);
	done = sqt_run_wait(run);
	sqt_run_stats(run, &st);
	sqt_result(k,
		   done && st.posts == sends / SQT_MAX_CONN * SQT_MAX_CONN &&
			   st.reaped == st.posts,
		   "%s_all_sends_completed", pn);
	/* only the receives hold credits now */
	held = size - ib_cq_credit_avail(&run->credit);
	sqt_result(k, held == run->nconn * SQT_SHARED_RECVS,
		   "%s_credits_held_by_receives_only", pn);
	events = atomic_read(&run->async_events);
	sqt_run_drain(run);
	sqt_result(k, ib_cq_credit_avail(&run->credit) == size,
		   "%s_credits_all_returned", pn);
	sqt_result(k, !atomic_read(&run->cq_overruns), "%s_no_cq_overrun", pn);
	sqt_result(k,
		   !atomic_read(&run->post_errors) &&
			   !atomic_read(&run->wc_errors) &&
			   !atomic_read(&run->reap_errors) && !events,
		   "%s_no_post_failure", pn);
	sqt_result(k, sqt_run_released_once(run), "%s_released_once", pn);
	pr_info("# %s: %llu sends, signaled %llu, refused for CQ credit %llu, for SQ space %llu, credit refusals %d\n",
		pn, st.posts, st.signaled, st.blocked_cq, st.blocked,
		atomic_read(&run->credit.blocked));
out:
	sqt_run_destroy(run);
	kfree(run);
}

static void sqt_test_shared_cq(struct ib_device *dev, struct sqt_ktap *k)
{
	/* every send signaled: the CQ credit is what limits the posters */
	sqt_shared_phase(dev, k, IB_SQ_SIGNAL_ALL);
	sqt_shared_phase(dev, k, IB_SQ_SIGNAL_DEFAULT);
}

/* ---- test: teardown ---- */

/**
 * struct sqt_teardown_res - what one drain in the middle of a stream showed
 * @setup: the connection came up
 * @mid_stream: the drain found requests outstanding, after more than @depth
 * @flushed: flush completions
 * @left: requests ib_sq_acct_release_all() released
 * @released_once: every request was released exactly once
 * @no_errors: no post, completion, reap or CQ error
 */
struct sqt_teardown_res {
	bool setup;
	bool mid_stream;
	u64 flushed;
	u32 left;
	bool released_once;
	bool no_errors;
};

/* Stream for a while, then drain mid-stream, once. */
static void sqt_teardown_once(struct ib_device *dev, bool reap_flushed,
			      struct sqt_teardown_res *res)
{
	const char *pn = reap_flushed ? "flush" : "release_all";
	struct ib_sq_acct_stats st;
	struct sqt_conn *c;
	struct sqt_run *run;
	u32 outstanding;

	memset(res, 0, sizeof(*res));
	run = kzalloc(sizeof(*run), GFP_KERNEL);
	if (!run)
		return;
	run->policy = IB_SQ_SIGNAL_DEFAULT;
	run->reap_flushed = reap_flushed;
	res->setup = !sqt_run_create(run, dev, 2, false, 2 * depth + 16);
	if (!res->setup)
		goto out;
	c = &run->conn[0];
	sqt_run_start(run, U64_MAX);
	msleep(SQT_TEARDOWN_MS);

	spin_lock_bh(&c->lock);
	WRITE_ONCE(run->stop, true);
	outstanding = ib_sq_acct_outstanding(&c->acct);
	spin_unlock_bh(&c->lock);
	sqt_run_drain(run);
	/* the drain has delivered every completion: both sides are quiescent */
	res->left = ib_sq_acct_release_all(&c->acct);
	ib_sq_acct_get_stats(&c->acct, &st);
	res->flushed = c->nflush;
	pr_info("# %s: %llu posted, %u outstanding at the drain, %llu flushed, %u released by release_all\n",
		pn, st.posts, outstanding, c->nflush, res->left);
	res->mid_stream = outstanding > 0 && st.posts > depth;
	res->released_once = sqt_run_released_once(run);
	res->no_errors = !atomic_read(&run->post_errors) &&
			 !atomic_read(&run->wc_errors) &&
			 !atomic_read(&run->reap_errors) &&
			 !atomic_read(&run->cq_overruns);
out:
	sqt_run_destroy(run);
	kfree(run);
}

/*
 * Stream for a while, then drain mid-stream.  With @reap_flushed the
 * flush completions retire the outstanding requests; without, the ULP
 * ignores them and ib_sq_acct_release_all() must release everything.
 *
 * Sends in flight when the posting stopped may still complete before the
 * QP enters the error state; what follows the last reaped completion is
 * flushed.  Reaping flushes leaves nothing behind; ignoring them leaves
 * those requests to release_all.  A drain that came after every send had
 * completed flushes nothing and tests neither path (the unsignaled sends
 * after the last signaled one are then release_all's either way): it is
 * tried again, SQT_FLUSH_TRIES times at most.
 */
static void sqt_teardown_phase(struct ib_device *dev, struct sqt_ktap *k,
			       bool reap_flushed)
{
	const char *pn = reap_flushed ? "flush" : "release_all";
	struct sqt_teardown_res res;
	unsigned int i;

	for (i = 0; i < SQT_FLUSH_TRIES; i++) {
		sqt_teardown_once(dev, reap_flushed, &res);
		if (!res.setup || res.flushed)
			break;
		pr_info("# %s: every send completed before the drain, none was flushed (try %u)\n",
			pn, i + 1);
	}
	sqt_result(k, res.setup, "%s_setup", pn);
	if (!res.setup)
		return;
	sqt_result(k, res.mid_stream, "%s_stopped_mid_stream", pn);
	sqt_result(k, res.flushed && (reap_flushed ? !res.left : res.left > 0),
		   "%s_release_path", pn);
	sqt_result(k, res.released_once, "%s_released_once", pn);
	sqt_result(k, res.no_errors, "%s_no_errors", pn);
}

static void sqt_test_teardown(struct ib_device *dev, struct sqt_ktap *k)
{
	sqt_teardown_phase(dev, k, true);
	sqt_teardown_phase(dev, k, false);
}

/* ---- module ---- */

static int sqt_add(struct ib_device *ibdev)
{
	if (strcmp(dev_name(&ibdev->dev), device))
		return -EOPNOTSUPP; /* not ours: the core will not call .remove */
	mutex_lock(&sqt_mutex);
	sqt_dev = ibdev;
	mutex_unlock(&sqt_mutex);
	return 0;
}

static void sqt_remove(struct ib_device *ibdev, void *client_data)
{
	mutex_lock(&sqt_mutex);
	if (sqt_dev == ibdev)
		sqt_dev = NULL;
	mutex_unlock(&sqt_mutex);
}

static struct ib_client sqt_client = {
	.name = "ocq_sq_test",
	.add = sqt_add,
	.remove = sqt_remove,
};

static const struct {
	const char *name;
	void (*run)(struct ib_device *dev, struct sqt_ktap *k);
} sqt_tests[] = {
	{ "stream", sqt_test_stream },
	{ "shared_cq", sqt_test_shared_cq },
	{ "teardown", sqt_test_teardown },
};

static int sqt_run_test(void)
{
	struct sqt_ktap k = {};
	int i;

	for (i = 0; i < ARRAY_SIZE(sqt_tests); i++)
		if (!strcmp(test, sqt_tests[i].name))
			break;
	if (i == ARRAY_SIZE(sqt_tests)) {
		pr_err("unknown test=%s\n", test);
		return -EINVAL;
	}
	if (depth < 4 || depth > 4096 || sends < 16 || baseline_sends < 16 ||
	    cq_size < 8 || !phase_timeout_s || phase_timeout_s > 86400) {
		pr_err("bad parameters\n");
		return -EINVAL;
	}
	mutex_lock(&sqt_mutex);
	if (sqt_dev)
		sqt_tests[i].run(sqt_dev, &k);
	else
		sqt_skip(&k, test, "device not present");
	mutex_unlock(&sqt_mutex);
	pr_info("1..%u\n", k.nr);
	return k.failed ? -EIO : 0;
}

static int __init sqt_init(void)
{
	int ret;

	ret = ib_register_client(&sqt_client);
	if (ret)
		return ret;
	ret = sqt_run_test();
	if (ret)
		ib_unregister_client(&sqt_client);
	return ret;
}

static void __exit sqt_exit(void)
{
	ib_unregister_client(&sqt_client);
}

module_init(sqt_init);
module_exit(sqt_exit);
MODULE_LICENSE("Dual BSD/GPL");
MODULE_DESCRIPTION("send queue accounting tests on rxe");
