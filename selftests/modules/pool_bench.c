// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pool_bench.c - make bench's rxe_pool scenario: QPs that share pooled CQs,
 * one of them slow.  Built twice, as ocq_bench_pool_upstream (ib_core's
 * ib_cq_pool_get()) and as ocq_bench_pool_ocq (the same file after
 * <rdma/ib_ocq_dropin.h>, which turns the pool calls into ocq's); each
 * main file defines PB_BACKEND first.
 *
 * PB_PAIRS loopback RC pairs on rxe0; each QP takes its room with
 * ib_cq_pool_get() on vector hint pair % 2, so the pairs of a vector share
 * its pooled CQ.  Every pair streams sends closed-loop, @depth in flight:
 * a send is posted when a receive completes, each message carrying the time
 * it was posted.  The receive done() of pair 0 (the heavy QP) burns
 * @heavy_ns of CPU; the others (the light QPs) do nothing but record the
 * message's latency, posted to done().  After @warmup_ms, @duration_ms are
 * measured; then the senders stop, the QPs are drained and destroyed and
 * their room is put back.  Init prints one line and fails the load if the
 * measurement could not be made:
 *
 *   BENCH-POOL {"backend":B,"pairs":8,"heavy_ns":H,"depth":D,"ms":T,
 *	"light":{"completions":N,"per_s":R,"p50_us":X,"p99_us":Y,"max_us":Z},
 *	"light_shared":{...}, "light_other":{...},
 *	"heavy":{"completions":N,"per_s":R},"errors":E,"dropped":D}
 *
 * light_shared: the light pairs whose receiver shares the heavy receiver's
 * CQ; light_other: the rest.  Latencies are over the measured window, from
 * at most PB_SAMPLES completions per group (dropped: those not kept).
 */
#include <linux/atomic.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

#include "rxe_loop.h"

#define PB_PAIRS 8
#define PB_MAX_DEPTH 64
/* send WRs per pair: a send's slot is free once its own completion ran */
#define PB_SQ (2 * PB_MAX_DEPTH)
/* receives per pair, all posted: never fewer than @depth waiting (no RNR) */
#define PB_RQ (2 * PB_MAX_DEPTH)
#define PB_MSG 64
/* a QP's room in its pooled CQ: its sends, receives and drain */
#define PB_QP_CQE (PB_SQ + PB_RQ + 2)
/* latencies kept per group */
#define PB_SAMPLES 262144
/* how long the stopped streams may take to drain */
#define PB_DRAIN_S 60

static unsigned int duration_ms = 3000;
module_param(duration_ms, uint, 0444);
MODULE_PARM_DESC(duration_ms, "measured time (100..600000, default 3000)");

static unsigned int warmup_ms = 500;
module_param(warmup_ms, uint, 0444);
MODULE_PARM_DESC(warmup_ms, "time before the measurement (default 500)");

static unsigned int heavy_ns = 2000000;
module_param(heavy_ns, uint, 0444);
MODULE_PARM_DESC(heavy_ns,
		 "ns of CPU each heavy receive done() burns (2000000)");

static unsigned int depth = 16;
module_param(depth, uint, 0444);
MODULE_PARM_DESC(depth, "sends in flight per pair (1..64, default 16)");

/* what a message carries */
struct pb_msg {
	u64 posted_ns;
};

struct pb_pair;

struct pb_wr {
	struct ib_cqe cqe;
	struct pb_pair *p;
	struct ib_sge sge;
	union {
		struct ib_send_wr send;
		struct ib_recv_wr recv;
	};
};

/**
 * struct pb_group - the latencies of some light pairs, or the heavy pair's
 * @completions: receive done() calls in the measured window
 * @kept: latencies stored in @lat (at most PB_SAMPLES; the rest dropped)
 * @lat: latencies in ns, capped at U32_MAX; NULL for the heavy pair's
 */
struct pb_group {
	atomic_t completions;
	atomic_t kept;
	u32 *lat;
};

enum { PB_HEAVY, PB_SHARED, PB_OTHER, PB_GROUPS };

/**
 * struct pb_pair - a loopback pair on pooled CQs
 * @idx: 0 (the heavy one) .. PB_PAIRS-1
 * @group: where its latencies go (PB_HEAVY, PB_SHARED or PB_OTHER)
 * @cq: the CQ of each QP (sender, receiver)
 * @qp: qp[0] sends to qp[1]
 * @swr: the sends, used in turn
 * @rwr: the receives, each reposted by its done()
 * @buf: PB_SQ + PB_RQ messages
 * @dma: where @buf is mapped
 * @lock: serialises @posted, @sent and @received; the send and receive
 *	done() calls run on different CQs
 * @posted: sends posted
 * @sent: send done() calls
 * @received: receive done() calls
 * @errors: completions that failed while the stream ran
 */
struct pb_pair {
	unsigned int idx;
	unsigned int group;
	struct ib_cq *cq[2];
	struct ib_qp *qp[2];
	struct pb_wr swr[PB_SQ];
	struct pb_wr rwr[PB_RQ];
	void *buf;
	u64 dma;
	spinlock_t lock; /* see @lock above */
	u32 posted, sent, received;
	u32 errors;
};

static struct ib_device *pb_dev;
static struct ib_pd *pb_pd;
static struct rxe_loop pb_loop;
static struct pb_pair *pb_pairs;
static struct pb_group pb_groups[PB_GROUPS];
static u64 pb_start_ns, pb_end_ns; /* the measured window */
static bool pb_running; /* senders post more */

static struct pb_msg *pb_msg_of(struct pb_pair *p, struct pb_wr *wr)
{
	return p->buf + (wr->sge.addr - p->dma);
}

static void pb_record(struct pb_pair *p, u64 now, u64 posted)
{
	struct pb_group *g = &pb_groups[p->group];
	int i;

	if (now < pb_start_ns || now >= pb_end_ns)
		return;
	atomic_inc(&g->completions);
	if (!g->lat)
		return; /* the heavy pair: counted only */
	i = atomic_inc_return(&g->kept) - 1;
	if (i < PB_SAMPLES)
		g->lat[i] = min_t(u64, now - posted, U32_MAX);
}

/* Post sends while the window allows.  Context: @p->lock held. */
static void pb_fill(struct pb_pair *p)
{
	struct pb_wr *wr;

	while (READ_ONCE(pb_running) && p->posted - p->sent < PB_SQ &&
	       p->posted - p->received < depth) {
		wr = &p->swr[p->posted % PB_SQ];
		pb_msg_of(p, wr)->posted_ns = ktime_get_ns();
		ib_dma_sync_single_for_device(pb_dev, wr->sge.addr, PB_MSG,
					      DMA_TO_DEVICE);
		if (ib_post_send(p->qp[0], &wr->send, NULL)) {
			p->errors++;
			return;
		}
		p->posted++;
	}
}

static void pb_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct pb_wr *wr = container_of(wc->wr_cqe, struct pb_wr, cqe);
	struct pb_pair *p = wr->p;
	unsigned long flags;

	spin_lock_irqsave(&p->lock, flags);
	p->sent++;
	if (wc->status != IB_WC_SUCCESS && READ_ONCE(pb_running))
		p->errors++;
	pb_fill(p);
	spin_unlock_irqrestore(&p->lock, flags);
}

static void pb_burn(u64 ns)
{
	u64 end = ktime_get_ns() + ns;

	while (ktime_get_ns() < end)
		cpu_relax();
}

static void pb_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct pb_wr *wr = container_of(wc->wr_cqe, struct pb_wr, cqe);
	struct pb_pair *p = wr->p;
	unsigned long flags;
	u64 posted;

	if (wc->status != IB_WC_SUCCESS) {
		spin_lock_irqsave(&p->lock, flags);
		if (READ_ONCE(pb_running))
			p->errors++;
		spin_unlock_irqrestore(&p->lock, flags);
		return; /* a flush: the QP is being drained */
	}
	ib_dma_sync_single_for_cpu(pb_dev, wr->sge.addr, PB_MSG,
				   DMA_FROM_DEVICE);
	posted = pb_msg_of(p, wr)->posted_ns;
	if (!p->idx)
		pb_burn(heavy_ns);
	pb_record(p, ktime_get_ns(), posted);
	spin_lock_irqsave(&p->lock, flags);
	if (ib_post_recv(p->qp[1], &wr->recv, NULL))
		p->errors++;
	p->received++;
	pb_fill(p);
	spin_unlock_irqrestore(&p->lock, flags);
}

static void pb_init_wr(struct pb_pair *p, struct pb_wr *wr, unsigned int slot,
		       bool send)
{
	wr->p = p;
	wr->cqe.done = send ? pb_send_done : pb_recv_done;
	wr->sge.addr = p->dma + slot * PB_MSG;
	wr->sge.length = PB_MSG;
	wr->sge.lkey = pb_pd->local_dma_lkey;
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

static int pb_create_qps(struct pb_pair *p)
{
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = {
			.max_send_wr = PB_SQ + 1,
			.max_recv_wr = PB_RQ + 1,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};
	int i, ret;

	for (i = 0; i < 2; i++) {
		p->cq[i] = ib_cq_pool_get(pb_dev, PB_QP_CQE, p->idx % 2,
					  IB_POLL_WORKQUEUE);
		if (IS_ERR(p->cq[i])) {
			ret = PTR_ERR(p->cq[i]);
			p->cq[i] = NULL;
			return ret;
		}
		init.send_cq = p->cq[i];
		init.recv_cq = p->cq[i];
		p->qp[i] = ib_create_qp(pb_pd, &init);
		if (IS_ERR(p->qp[i])) {
			ret = PTR_ERR(p->qp[i]);
			p->qp[i] = NULL;
			return ret;
		}
	}
	ret = rxe_loop_connect(&pb_loop, p->qp[0], p->qp[1]->qp_num);
	return ret ?: rxe_loop_connect(&pb_loop, p->qp[1], p->qp[0]->qp_num);
}

static int pb_pair_setup(struct pb_pair *p, unsigned int idx)
{
	size_t len = (PB_SQ + PB_RQ) * PB_MSG;
	unsigned int i;

	p->idx = idx;
	spin_lock_init(&p->lock);
	p->buf = kzalloc(len, GFP_KERNEL);
	if (!p->buf)
		return -ENOMEM;
	p->dma = ib_dma_map_single(pb_dev, p->buf, len, DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(pb_dev, p->dma)) {
		kfree(p->buf);
		p->buf = NULL;
		return -ENOMEM;
	}
	for (i = 0; i < PB_SQ; i++)
		pb_init_wr(p, &p->swr[i], i, true);
	for (i = 0; i < PB_RQ; i++)
		pb_init_wr(p, &p->rwr[i], PB_SQ + i, false);
	return pb_create_qps(p);
}

/* Drain and destroy the QPs, then put their room back. */
static void pb_pair_teardown(struct pb_pair *p)
{
	int i;

	for (i = 1; i >= 0; i--) {
		if (!p->qp[i])
			continue;
		ib_drain_qp(p->qp[i]);
		ib_destroy_qp(p->qp[i]);
		p->qp[i] = NULL;
	}
	for (i = 0; i < 2; i++) {
		if (p->cq[i])
			ib_cq_pool_put(p->cq[i], PB_QP_CQE);
		p->cq[i] = NULL;
	}
	if (p->buf)
		ib_dma_unmap_single(pb_dev, p->dma, (PB_SQ + PB_RQ) * PB_MSG,
				    DMA_BIDIRECTIONAL);
	kfree(p->buf);
	p->buf = NULL;
}

static int pb_pair_start(struct pb_pair *p)
{
	unsigned long flags;
	unsigned int i;
	int ret = 0;

	for (i = 0; i < PB_RQ && !ret; i++)
		ret = ib_post_recv(p->qp[1], &p->rwr[i].recv, NULL);
	if (ret)
		return ret;
	spin_lock_irqsave(&p->lock, flags);
	pb_fill(p);
	spin_unlock_irqrestore(&p->lock, flags);
	return 0;
}

/* Wait until every posted send's receive and completion ran. */
static bool pb_quiesce(void)
{
	unsigned int i, s;
	bool idle = false;

	for (s = 0; s < PB_DRAIN_S * 10 && !idle; s++) {
		idle = true;
		for (i = 0; i < PB_PAIRS; i++) {
			struct pb_pair *p = &pb_pairs[i];

			spin_lock_irq(&p->lock);
			idle &= p->received == p->posted &&
				p->sent == p->posted;
			spin_unlock_irq(&p->lock);
		}
		if (!idle)
			msleep(100);
	}
	return idle;
}

static int pb_cmp_u32(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

/* The pm-th per mille of @n sorted latencies, in µs (1000: the largest). */
static u32 pb_pct_us(const u32 *lat, unsigned int n, unsigned int pm)
{
	if (!n)
		return 0;
	return lat[min_t(u64, (u64)n * pm / 1000, n - 1)] / (u32)NSEC_PER_USEC;
}

/* the BENCH-POOL line, built in pieces */
struct pb_line {
	char buf[768];
	size_t len;
};

static __printf(2, 3) void pb_put(struct pb_line *l, const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	l->len +=
		vscnprintf(l->buf + l->len, sizeof(l->buf) - l->len, fmt, args);
	va_end(args);
}

static u64 pb_per_s(unsigned int completions)
{
	return div_u64((u64)completions * MSEC_PER_SEC, duration_ms);
}

/* Sort @n latencies in @lat and add "name":{...} to @l. */
static void pb_put_group(struct pb_line *l, const char *name, u32 *lat,
			 unsigned int n, unsigned int completions)
{
	sort(lat, n, sizeof(*lat), pb_cmp_u32, NULL);
	pb_put(l, "\"%s\":{\"completions\":%u,\"per_s\":%llu,", name,
	       completions, pb_per_s(completions));
	pb_put(l, "\"p50_us\":%u,\"p99_us\":%u,\"max_us\":%u},",
	       pb_pct_us(lat, n, 500), pb_pct_us(lat, n, 990),
	       pb_pct_us(lat, n, 1000));
}

static unsigned int pb_kept(unsigned int g)
{
	return min_t(unsigned int, atomic_read(&pb_groups[g].kept), PB_SAMPLES);
}

static unsigned int pb_completions(unsigned int g)
{
	return atomic_read(&pb_groups[g].completions);
}

/* The light pairs' latencies together, then theirs per group. */
static int pb_report(unsigned int errors)
{
	unsigned int ns = pb_kept(PB_SHARED), no = pb_kept(PB_OTHER), g;
	unsigned int dropped = 0;
	struct pb_line *l;
	u32 *all;

	for (g = PB_SHARED; g <= PB_OTHER; g++)
		dropped += atomic_read(&pb_groups[g].kept) - pb_kept(g);
	l = kzalloc(sizeof(*l), GFP_KERNEL);
	all = kvmalloc_array(max(ns + no, 1U), sizeof(*all), GFP_KERNEL);
	if (!l || !all) {
		kfree(l);
		kvfree(all);
		return -ENOMEM;
	}
	memcpy(all, pb_groups[PB_SHARED].lat, ns * sizeof(*all));
	memcpy(all + ns, pb_groups[PB_OTHER].lat, no * sizeof(*all));
	pb_put(l, "{\"backend\":\"%s\",\"pairs\":%u,\"heavy_ns\":%u,",
	       PB_BACKEND, PB_PAIRS, heavy_ns);
	pb_put(l, "\"depth\":%u,\"ms\":%u,", depth, duration_ms);
	pb_put_group(l, "light", all, ns + no,
		     pb_completions(PB_SHARED) + pb_completions(PB_OTHER));
	pb_put_group(l, "light_shared", pb_groups[PB_SHARED].lat, ns,
		     pb_completions(PB_SHARED));
	pb_put_group(l, "light_other", pb_groups[PB_OTHER].lat, no,
		     pb_completions(PB_OTHER));
	pb_put(l, "\"heavy\":{\"completions\":%u,\"per_s\":%llu},",
	       pb_completions(PB_HEAVY), pb_per_s(pb_completions(PB_HEAVY)));
	pb_put(l, "\"errors\":%u,\"dropped\":%u}", errors, dropped);
	pr_info("BENCH-POOL %s\n", l->buf);
	kvfree(all);
	kfree(l);
	return 0;
}

static int pb_measure(void)
{
	unsigned int i, errors = 0;
	int ret;

	for (i = 0; i < PB_PAIRS; i++) {
		struct pb_pair *p = &pb_pairs[i];

		p->group = !i				 ? PB_HEAVY :
			   p->cq[1] == pb_pairs[0].cq[1] ? PB_SHARED :
							   PB_OTHER;
	}
	pb_start_ns = ktime_get_ns() + (u64)warmup_ms * NSEC_PER_MSEC;
	pb_end_ns = pb_start_ns + (u64)duration_ms * NSEC_PER_MSEC;
	WRITE_ONCE(pb_running, true);
	for (i = 0; i < PB_PAIRS; i++) {
		ret = pb_pair_start(&pb_pairs[i]);
		if (ret) {
			pr_err("posting pair %u's first work failed: %d\n", i,
			       ret);
			break;
		}
	}
	if (!ret)
		msleep(warmup_ms + duration_ms);
	WRITE_ONCE(pb_running, false);
	if (!pb_quiesce()) {
		pr_err("the streams did not drain within %u s\n", PB_DRAIN_S);
		return -ETIMEDOUT;
	}
	for (i = 0; i < PB_PAIRS; i++)
		errors += pb_pairs[i].errors;
	return ret ?: pb_report(errors);
}

static int pb_run(void)
{
	unsigned int i, g;
	int ret = 0;

	pb_pairs = kvcalloc(PB_PAIRS, sizeof(*pb_pairs), GFP_KERNEL);
	if (!pb_pairs)
		return -ENOMEM;
	for (g = 0; g < PB_GROUPS; g++) {
		atomic_set(&pb_groups[g].completions, 0);
		atomic_set(&pb_groups[g].kept, 0);
		pb_groups[g].lat = NULL;
		if (g == PB_HEAVY)
			continue; /* counted only */
		pb_groups[g].lat =
			kvmalloc_array(PB_SAMPLES, sizeof(u32), GFP_KERNEL);
		if (!pb_groups[g].lat)
			ret = -ENOMEM;
	}
	for (i = 0; i < PB_PAIRS && !ret; i++)
		ret = pb_pair_setup(&pb_pairs[i], i);
	if (ret)
		pr_err("setting up the pairs failed: %d\n", ret);
	else
		ret = pb_measure();
	for (i = 0; i < PB_PAIRS; i++)
		pb_pair_teardown(&pb_pairs[i]);
	for (g = 0; g < PB_GROUPS; g++)
		kvfree(pb_groups[g].lat);
	kvfree(pb_pairs);
	return ret;
}

static int __init pb_init(void)
{
	int ret;

	if (duration_ms < 100 || duration_ms > 600000 || warmup_ms > 60000 ||
	    heavy_ns > 100000000 || !depth || depth > PB_MAX_DEPTH) {
		pr_err("a parameter is out of range (see modinfo)\n");
		return -EINVAL;
	}
	pb_dev = ib_device_get_by_name("rxe0", RDMA_DRIVER_RXE);
	if (!pb_dev) {
		pr_err("no rxe0\n");
		return -ENODEV;
	}
	ret = rxe_loop_init(&pb_loop, pb_dev);
	if (ret)
		goto out_put;
	pb_pd = ib_alloc_pd(pb_dev, 0);
	if (IS_ERR(pb_pd)) {
		ret = PTR_ERR(pb_pd);
		goto out_put;
	}
	ret = pb_run();
	ib_dealloc_pd(pb_pd);
out_put:
	ib_device_put(pb_dev);
	return ret;
}

static void __exit pb_exit(void)
{
}

module_init(pb_init);
module_exit(pb_exit);
MODULE_LICENSE("Dual BSD/GPL");
