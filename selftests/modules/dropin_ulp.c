// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A small ULP written against ib_core's CQ API, as NFS/RDMA or NVMe-oF
 * code is: its CQs come from ib_alloc_cq(), ib_alloc_cq_any() and
 * ib_cq_pool_get(), its done() handlers read cq->cq_context, it drains its
 * QPs with ib_drain_qp() and frees with ib_free_cq() and ib_cq_pool_put().
 *
 * It is built twice, by one-line wrappers: ocq_dropin_upstream.ko as it is,
 * ocq_dropin_ocq.ko with <rdma/ib_ocq_dropin.h> included first, which turns
 * those calls into ocq's.  Nothing below changes between the two: both
 * must pass the same checks.  The wrapper adds du_backend_ok(), which says
 * whose CQ a CQ is, so that a pass proves which code ran.
 *
 * Six loopback RC pairs on rxe0 stream sends with a sequence number:
 * pair 0 on ib_alloc_cq(IB_POLL_WORKQUEUE), pair 4 on
 * ib_alloc_cq(IB_POLL_SOFTIRQ), pair 1 on
 * ib_alloc_cq_any(IB_POLL_UNBOUND_WORKQUEUE), pairs 2 and 3 sharing a pooled
 * CQ of vector 0, pair 5 on ib_alloc_cq(IB_POLL_DIRECT), which a kthread of
 * the ULP polls with ib_process_cq_direct() until the stream ends (as
 * nvme-rdma's poll queues are polled), the drain polling it after that.
 * Every done() checks its QP's order, exactly once, the CQ's cq_context and
 * that it runs in the context its poll context promises.
 */
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/preempt.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "rxe_loop.h"

#define DU_PAIRS 6
#define DU_DIRECT_BUDGET 16 /* completions per ib_process_cq_direct() */
#define DU_DEPTH 16 /* sends in flight per pair */
#define DU_RECVS 32 /* receives posted per pair */
#define DU_MSG 64 /* bytes per message */
/* what one QP can have outstanding, and the drain's own */
#define DU_QP_CQE (DU_DEPTH + DU_RECVS + 2)

static unsigned int msgs = 5000;
module_param(msgs, uint, 0444);
MODULE_PARM_DESC(msgs, "messages per pair (default 5000)");

static unsigned int wait_s = 300;
module_param(wait_s, uint, 0444);
MODULE_PARM_DESC(wait_s, "seconds a pair's stream may take (default 300)");

struct du_pair;

/* A work request of the ULP: its completion comes back through @cqe. */
struct du_wr {
	struct ib_cqe cqe;
	struct du_pair *p;
	struct ib_sge sge;
	union {
		struct ib_send_wr send;
		struct ib_recv_wr recv;
	};
	u32 ticket; /* posting order on its QP */
};

/**
 * struct du_pair - one loopback pair and what its done() handlers saw
 * @idx: 0..DU_PAIRS-1
 * @cq: its CQ
 * @pooled: @cq came from ib_cq_pool_get(), else it is the pair's own
 * @poll_ctx: the poll context it asked for
 * @qp: qp[0] sends to qp[1]
 * @swr: the sends
 * @rwr: the receives
 * @buf: DU_DEPTH + DU_RECVS messages
 * @dma: where @buf is mapped
 * @next_seq: sequence number of the next send
 * @send_ticket: ticket the next send done() expects
 * @send_next: ticket of the next send posted
 * @recv_ticket: ticket the next receive done() expects
 * @recv_next: ticket of the next receive posted
 * @recv_seq: sequence number the next receive must carry
 * @done: completions seen
 * @bad: checks that failed
 * @flushed: flushed completions (the drain's)
 * @streamed: completed when every message was received, or on an error
 * @poller: %IB_POLL_DIRECT: the kthread that polls @cq while it streams
 */
struct du_pair {
	unsigned int idx;
	struct ib_cq *cq;
	bool pooled;
	enum ib_poll_context poll_ctx;
	struct ib_qp *qp[2];
	struct du_wr swr[DU_DEPTH];
	struct du_wr rwr[DU_RECVS];
	void *buf;
	u64 dma;
	u32 next_seq;
	u32 send_ticket, send_next;
	u32 recv_ticket, recv_next;
	u32 recv_seq;
	u32 done;
	u32 bad;
	u32 flushed;
	struct completion streamed;
	struct task_struct *poller;
};

static struct ib_device *du_dev;
static struct ib_pd *du_pd;
static struct rxe_loop du_loop;
static struct du_pair du_pairs[DU_PAIRS];

static void du_fail(struct du_pair *p, const char *what, u32 a, u32 b)
{
	if (!p->bad++)
		pr_info("# pair %u: %s (%u, expected %u)\n", p->idx, what, a,
			b);
	complete(&p->streamed);
}

/* What every done() checks: the CQ it came on, and where it runs. */
static void du_check_cq(struct du_pair *p, struct ib_cq *cq)
{
	/* upstream's pooled CQs have a NULL cq_context; ours are the pair */
	void *want = p->pooled ? NULL : p;

	p->done++;
	if (cq != p->cq || cq->cq_context != want)
		du_fail(p, "done() on a CQ or cq_context not its own", 0, 0);
	if (p->poll_ctx == IB_POLL_SOFTIRQ ? !in_serving_softirq() : !in_task())
		du_fail(p, "done() not in its poll context", 0, 0);
}

/* Number a send; once posted, only its done() touches the pair's counts. */
static void du_prep_send(struct du_pair *p, struct du_wr *wr)
{
	u32 *msg = p->buf + (wr - p->swr) * DU_MSG;

	*msg = p->next_seq++;
	ib_dma_sync_single_for_device(du_dev, wr->sge.addr, DU_MSG,
				      DMA_TO_DEVICE);
	wr->ticket = p->send_next++;
	wr->send.next = NULL;
}

static int du_post_send(struct du_pair *p, struct du_wr *wr)
{
	du_prep_send(p, wr);
	return ib_post_send(p->qp[0], &wr->send, NULL);
}

static int du_post_recv(struct du_pair *p, struct du_wr *wr)
{
	wr->ticket = p->recv_next++;
	return ib_post_recv(p->qp[1], &wr->recv, NULL);
}

static void du_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct du_wr *wr = container_of(wc->wr_cqe, struct du_wr, cqe);
	struct du_pair *p = wr->p;

	du_check_cq(p, cq);
	if (wr->ticket != p->send_ticket++)
		du_fail(p, "send completed out of order", wr->ticket,
			p->send_ticket - 1);
	if (wc->status != IB_WC_SUCCESS) {
		p->flushed++;
		return;
	}
	if (p->next_seq < msgs && du_post_send(p, wr))
		du_fail(p, "repost of a send failed", 0, 0);
}

static void du_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct du_wr *wr = container_of(wc->wr_cqe, struct du_wr, cqe);
	struct du_pair *p = wr->p;
	u32 *msg = p->buf + (DU_DEPTH + (wr - p->rwr)) * DU_MSG;

	du_check_cq(p, cq);
	if (wr->ticket != p->recv_ticket++)
		du_fail(p, "receive completed out of order", wr->ticket,
			p->recv_ticket - 1);
	if (wc->status != IB_WC_SUCCESS) {
		p->flushed++;
		return;
	}
	ib_dma_sync_single_for_cpu(du_dev, wr->sge.addr, DU_MSG,
				   DMA_FROM_DEVICE);
	if (*msg != p->recv_seq)
		du_fail(p, "message out of sequence", *msg, p->recv_seq);
	if (++p->recv_seq == msgs)
		complete(&p->streamed);
	else if (du_post_recv(p, wr))
		du_fail(p, "repost of a receive failed", 0, 0);
}

static void du_init_wr(struct du_pair *p, struct du_wr *wr, unsigned int slot,
		       bool send)
{
	wr->p = p;
	wr->cqe.done = send ? du_send_done : du_recv_done;
	wr->sge.addr = p->dma + slot * DU_MSG;
	wr->sge.length = DU_MSG;
	wr->sge.lkey = du_pd->local_dma_lkey;
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

/* The CQ each pair's allocation call gives, as a ULP would make it. */
static int du_alloc_cq(struct du_pair *p)
{
	switch (p->idx) {
	case 0:
		p->poll_ctx = IB_POLL_WORKQUEUE;
		p->cq = ib_alloc_cq(du_dev, p, 2 * DU_QP_CQE, 0, p->poll_ctx);
		break;
	case 4:
		p->poll_ctx = IB_POLL_SOFTIRQ;
		p->cq = ib_alloc_cq(du_dev, p, 2 * DU_QP_CQE, 0, p->poll_ctx);
		break;
	case 5:
		p->poll_ctx = IB_POLL_DIRECT;
		p->cq = ib_alloc_cq(du_dev, p, 2 * DU_QP_CQE, 0, p->poll_ctx);
		break;
	case 1:
		p->poll_ctx = IB_POLL_UNBOUND_WORKQUEUE;
		p->cq = ib_alloc_cq_any(du_dev, p, 2 * DU_QP_CQE, p->poll_ctx);
		break;
	default:
		p->poll_ctx = IB_POLL_WORKQUEUE;
		p->pooled = true;
		p->cq = ib_cq_pool_get(du_dev, 2 * DU_QP_CQE, 0, p->poll_ctx);
		break;
	}
	if (IS_ERR(p->cq)) {
		pr_info("# pair %u: CQ allocation failed: %ld\n", p->idx,
			PTR_ERR(p->cq));
		return PTR_ERR(p->cq);
	}
	return 0;
}

static void du_free_cq(struct du_pair *p)
{
	if (IS_ERR_OR_NULL(p->cq))
		return;
	if (p->pooled)
		ib_cq_pool_put(p->cq, 2 * DU_QP_CQE);
	else
		ib_free_cq(p->cq);
	p->cq = NULL;
}

static int du_create_qps(struct du_pair *p)
{
	struct ib_qp_init_attr init = {
		.send_cq = p->cq,
		.recv_cq = p->cq,
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = {
			.max_send_wr = DU_DEPTH + 1,
			.max_recv_wr = DU_RECVS + 1,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};
	int i, ret;

	for (i = 0; i < 2; i++) {
		p->qp[i] = ib_create_qp(du_pd, &init);
		if (IS_ERR(p->qp[i]))
			return PTR_ERR(p->qp[i]);
	}
	ret = rxe_loop_connect(&du_loop, p->qp[0], p->qp[1]->qp_num);
	if (!ret)
		ret = rxe_loop_connect(&du_loop, p->qp[1], p->qp[0]->qp_num);
	return ret;
}

static void du_destroy_qps(struct du_pair *p)
{
	int i;

	for (i = 1; i >= 0; i--)
		if (!IS_ERR_OR_NULL(p->qp[i]))
			ib_destroy_qp(p->qp[i]);
}

/* IB_POLL_DIRECT: the ULP's own polling, until the stream is over. */
static int du_poll_fn(void *arg)
{
	struct du_pair *p = arg;

	while (!kthread_should_stop()) {
		if (ib_process_cq_direct(p->cq, DU_DIRECT_BUDGET) > 0)
			cond_resched();
		else
			usleep_range(20, 100);
	}
	return 0;
}

static int du_poller_start(struct du_pair *p)
{
	if (p->poll_ctx != IB_POLL_DIRECT)
		return 0;
	p->poller = kthread_run(du_poll_fn, p, "du_poll%u", p->idx);
	if (IS_ERR(p->poller)) {
		int ret = PTR_ERR(p->poller);

		p->poller = NULL;
		return ret;
	}
	return 0;
}

/* ib_drain_qp() polls a direct CQ itself: nobody else may meanwhile. */
static void du_poller_stop(struct du_pair *p)
{
	if (p->poller)
		kthread_stop(p->poller);
	p->poller = NULL;
}

static int du_pair_setup(struct du_pair *p, unsigned int idx)
{
	size_t len = (DU_DEPTH + DU_RECVS) * DU_MSG;
	unsigned int i;
	int ret;

	p->idx = idx;
	init_completion(&p->streamed);
	p->buf = kzalloc(len, GFP_KERNEL);
	if (!p->buf)
		return -ENOMEM;
	p->dma = ib_dma_map_single(du_dev, p->buf, len, DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(du_dev, p->dma))
		return -ENOMEM;
	for (i = 0; i < DU_DEPTH; i++)
		du_init_wr(p, &p->swr[i], i, true);
	for (i = 0; i < DU_RECVS; i++)
		du_init_wr(p, &p->rwr[i], DU_DEPTH + i, false);
	ret = du_alloc_cq(p);
	if (!ret)
		ret = du_create_qps(p);
	return ret;
}

static void du_pair_teardown(struct du_pair *p)
{
	du_poller_stop(p);
	du_destroy_qps(p);
	du_free_cq(p);
	if (p->buf && !ib_dma_mapping_error(du_dev, p->dma))
		ib_dma_unmap_single(du_dev, p->dma,
				    (DU_DEPTH + DU_RECVS) * DU_MSG,
				    DMA_BIDIRECTIONAL);
	kfree(p->buf);
}

/*
 * Post the receives, then the first sends as one chain: every send is
 * numbered before any can complete, so the done() that reposts never
 * races with this.
 */
static int du_pair_start(struct du_pair *p)
{
	unsigned int i, n = min_t(unsigned int, DU_DEPTH, msgs);
	int ret = du_poller_start(p);

	for (i = 0; i < DU_RECVS && !ret; i++)
		ret = du_post_recv(p, &p->rwr[i]);
	if (ret || !n)
		return ret;
	for (i = 0; i < n; i++) {
		du_prep_send(p, &p->swr[i]);
		if (i)
			p->swr[i - 1].send.next = &p->swr[i].send;
	}
	return ib_post_send(p->qp[0], &p->swr[0].send, NULL);
}

/* Wait for the stream, drain, and judge: one KTAP line per pair. */
static bool du_pair_finish(struct du_pair *p, unsigned int n)
{
	bool ok = wait_for_completion_timeout(&p->streamed, wait_s * HZ);

	if (!ok)
		pr_info("# pair %u: %u of %u messages in %u s\n", p->idx,
			p->recv_seq, msgs, wait_s);
	du_poller_stop(p);
	ib_drain_qp(p->qp[0]);
	ib_drain_qp(p->qp[1]);
	/* everything posted came back, in order, exactly once */
	ok = ok && !p->bad && p->recv_seq == msgs &&
	     p->send_ticket == p->send_next && p->recv_ticket == p->recv_next;
	ok = ok && p->cq->poll_ctx == p->poll_ctx && du_backend_ok(p->cq);
	pr_info("# pair %u (%s): %u completions, %u flushed, %u bad\n", p->idx,
		p->pooled ? "pooled" : "own CQ", p->done, p->flushed, p->bad);
	pr_info("%sok %u pair%u_%s\n", ok ? "" : "not ", n, p->idx,
		DROPIN_BACKEND);
	return ok;
}

static int du_find_device(void)
{
	du_dev = ib_device_get_by_name("rxe0", RDMA_DRIVER_RXE);
	if (!du_dev) {
		pr_info("# no rxe0\n");
		return -ENODEV;
	}
	return rxe_loop_init(&du_loop, du_dev);
}

static int __init du_init(void)
{
	unsigned int i;
	bool ok = true;
	int ret;

	pr_info("KTAP version 1\n1..%u\n", DU_PAIRS);
	ret = du_find_device();
	if (ret)
		goto out_put;
	du_pd = ib_alloc_pd(du_dev, 0);
	if (IS_ERR(du_pd)) {
		ret = PTR_ERR(du_pd);
		goto out_put;
	}
	for (i = 0; i < DU_PAIRS && !ret; i++)
		ret = du_pair_setup(&du_pairs[i], i);
	for (i = 0; i < DU_PAIRS && !ret; i++)
		ret = du_pair_start(&du_pairs[i]);
	if (ret)
		pr_info("# set-up failed: %d\n", ret);
	for (i = 0; i < DU_PAIRS; i++)
		if (!ret)
			ok &= du_pair_finish(&du_pairs[i], i + 1);
	for (i = 0; i < DU_PAIRS; i++)
		du_pair_teardown(&du_pairs[i]);
	ib_dealloc_pd(du_pd);
out_put:
	if (du_dev)
		ib_device_put(du_dev);
	if (!ret && !ok)
		ret = -EINVAL;
	pr_info("# totals: %s\n", ret ? "fail" : "pass");
	return ret;
}

static void __exit du_exit(void)
{
}

module_init(du_init);
module_exit(du_exit);
MODULE_LICENSE("Dual BSD/GPL");
MODULE_DESCRIPTION("A ULP on ib_core's CQ API, built as is and on ocq");
