// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pool_bench.c - QPs that share pooled CQs, one of them slow: make bench's
 * rxe_pool scenario and its stream mode.  Built twice, as
 * ocq_bench_pool_upstream (ib_core's ib_cq_pool_get()) and as
 * ocq_bench_pool_ocq (the same file after <rdma/ib_ocq_dropin.h>, which
 * turns the pool calls into ocq's); each main file defines PB_BACKEND
 * first, the ocq one PB_OCQ too.
 *
 * @pairs loopback RC pairs on rxe0; each QP takes its room with
 * ib_cq_pool_get(..., IB_POLL_WORKQUEUE) on vector hint @vector (by
 * default pair % 2), so the pairs of a vector share its pooled CQ.  Each
 * message carries the time it was posted.  The receive done() of pair 0
 * (the heavy, or slow, QP) burns @heavy_ns of CPU; the others (the light
 * QPs) do nothing but record the message's latency, posted to done().
 *
 * Two ways to run:
 *
 * - @msgs = 0 (rxe_pool): every pair streams closed-loop, @depth in
 *   flight (a send is posted when a receive completes) for @warmup_ms,
 *   then @duration_ms are measured.  Init prints
 *
 *   BENCH-POOL {"backend":B,"pairs":8,"heavy_ns":H,"depth":D,"ms":T,
 *	"light":{"completions":N,"per_s":R,"p50_us":X,"p99_us":Y,"max_us":Z},
 *	"light_shared":{...}, "light_other":{...},
 *	"heavy":{"completions":N,"per_s":R},"errors":E,"dropped":D}
 *
 *   light_shared: the light pairs whose receiver shares the heavy
 *   receiver's CQ; light_other: the rest.  Latencies are over the measured
 *   window, from at most PB_SAMPLES completions per group (dropped: those
 *   not kept).
 *
 * - @msgs > 0 (the stream mode): every pair streams @msgs messages, started
 *   together, and notes when its last receive done() ran.  With @credits
 *   the receiver keeps @depth receives posted, reposting each in its
 *   done(), and the sender posts only against a posted receive (never more
 *   outstanding than the peer has receives posted: a ULP's receive
 *   credits, granted at once); without, every receive is posted first and
 *   the sender keeps @depth sends in flight, clocked by its own send
 *   completions.  @place picks the QP numbers: "any" as rxe gives them,
 *   "slow" every light QP made again until it hashes to the slow receiver's
 *   flow domain on ocq's pool, "apart" until none does (the pool's default
 *   flow key is the QP number, hashed over a domain per online CPU).  Init
 *   prints one line per pair and
 *
 *   BENCH-HOL {"backend":B,"pairs":P,"msgs":M,"depth":D,"credits":C,
 *	"heavy_ns":H,"place":S,"slow_ms":T,"light_max_ms":L,"light_ms":[...],
 *	"qpn":[[SEND,RECV],...],"domain":[[SEND,RECV],...],
 *	"heavy_in_cq_run":N,"light_in_cq_run":N,"lat_with":{...},
 *	"lat_apart":{...},"slow_wait_ms":W,"slow_wait_max_us":X,
 *	"ocq":{"events":...,"runs":...,...},"errors":E}
 *
 *   *_ms: from the start until a pair's last receive done(); domain: the
 *   flow domain the pool's default key gives each QP; lat_with, lat_apart:
 *   {"completions","p50_us","p99_us","max_us"} of the light pairs'
 *   receives, posted to done(), of those whose receiver hashes to the slow
 *   receiver's domain and of the others; slow_wait_ms, slow_wait_max_us:
 *   the time between one receive done() of the slow pair and the next, in
 *   all and at most (it had nothing to do); heavy_in_cq_run,
 *   light_in_cq_run: receive done() calls of the slow pair, of the light
 *   ones, made by a per-CPU worker, which on ocq's IB_POLL_WORKQUEUE pool
 *   is the CQ run itself (inline dispatch; ib_cq's pool runs every done()
 *   there), not a flow domain (an unbound worker); ocq: the deltas of the
 *   pooled CQ of the slow receiver's counters (ocq's build only).
 *
 * Init fails the load if the measurement could not be made; it judges no
 * figure (make bench does).  Afterwards the streams
 * stop, the QPs are drained and destroyed and their room is put back.
 */
#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/hash.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/math.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <rdma/ib_verbs.h>

#include "rxe_loop.h"

#define PB_MAX_PAIRS 8
#define PB_MAX_DEPTH 64
/* send WRs per pair: a send's slot is free once its own completion ran */
#define PB_SQ (2 * PB_MAX_DEPTH)
/* receives per pair of rxe_pool, all posted: never fewer than @depth waiting */
#define PB_RQ (2 * PB_MAX_DEPTH)
/* the most messages of a stream (@msgs), all of whose receives may be posted */
#define PB_MAX_MSGS 4000
#define PB_MSG 64
/* latencies kept per group */
#define PB_SAMPLES 262144
/* how long the stopped streams may take to drain */
#define PB_DRAIN_S 60
/* @place: tries to give a QP the flow domain asked for */
#define PB_QP_TRIES 32

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

static unsigned int pairs = PB_MAX_PAIRS;
module_param(pairs, uint, 0444);
MODULE_PARM_DESC(pairs, "loopback pairs (2..8, default 8)");

static int vector = -1;
module_param(vector, int, 0444);
MODULE_PARM_DESC(vector,
		 "vector hint of every QP's pool_get (default -1: pair % 2)");

static unsigned int msgs;
module_param(msgs, uint, 0444);
MODULE_PARM_DESC(msgs, "messages per pair, then its time (default 0: timed)");

static bool credits;
module_param(credits, bool, 0444);
MODULE_PARM_DESC(credits,
		 "with msgs: send only against a posted receive, depth of them");

static char *place = "any";
module_param(place, charp, 0444);
MODULE_PARM_DESC(place, "with msgs: light QPs' domains: any, slow, apart");

static unsigned int wait_s = 240;
module_param(wait_s, uint, 0444);
MODULE_PARM_DESC(wait_s, "with msgs: seconds the streams may take (240)");

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
 * @idx: 0 (the heavy one) .. @pairs - 1
 * @group: where its latencies go (PB_HEAVY, PB_SHARED or PB_OTHER)
 * @nr_recv: receives it has (@rwr), each reposted by its done() unless
 *	all of a stream's were posted first
 * @cq: the CQ of each QP (sender, receiver)
 * @qp: qp[0] sends to qp[1]
 * @swr: the sends, used in turn
 * @rwr: the receives
 * @buf: PB_SQ + @nr_recv messages
 * @dma: where @buf is mapped
 * @lock: serialises the counts below; the send and receive done() calls
 *	may run at once (on different CQs, or different flow domains)
 * @posted: sends posted
 * @sent: send done() calls
 * @received: receive done() calls
 * @recv_posted: receives posted
 * @errors: completions that failed while the stream ran
 * @done_ns: when the @msgs-th receive done() ran (0 until then)
 */
struct pb_pair {
	unsigned int idx;
	unsigned int group;
	unsigned int nr_recv;
	struct ib_cq *cq[2];
	struct ib_qp *qp[2];
	struct pb_wr swr[PB_SQ];
	struct pb_wr *rwr;
	void *buf;
	u64 dma;
	spinlock_t lock; /* see @lock above */
	u32 posted, sent, received, recv_posted;
	u32 errors;
	u64 done_ns;
};

static struct ib_device *pb_dev;
static struct ib_pd *pb_pd;
static struct rxe_loop pb_loop;
static struct pb_pair *pb_pairs;
static struct pb_group pb_groups[PB_GROUPS];
static u64 pb_start_ns, pb_end_ns; /* the measured window */
static bool pb_running; /* senders post more */
/* receive done() calls made by a per-CPU worker: the slow pair's, the others' */
static atomic_t pb_heavy_in_run, pb_light_in_run;
/*
 * The slow pair's receive done() calls, never two at once (one QP's, in
 * order): when the last one returned, and the time between one's return
 * and the next one's start, in all and at most (the slow pair waiting)
 */
static u64 pb_slow_end_ns, pb_slow_wait_ns, pb_slow_wait_max_ns;

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

/* Whether @p may post one more send now.  Context: @p->lock held. */
static bool pb_may_post(struct pb_pair *p)
{
	if (!READ_ONCE(pb_running) || p->posted - p->sent >= PB_SQ)
		return false;
	if (msgs && p->posted >= msgs)
		return false;
	/* a credit: a receive the peer posted and no send of ours took */
	if (credits)
		return p->posted < p->recv_posted;
	/* a stream without credits: clocked by its own send completions */
	if (msgs)
		return p->posted - p->sent < depth;
	return p->posted - p->received < depth;
}

/* Post sends while the window allows.  Context: @p->lock held. */
static void pb_fill(struct pb_pair *p)
{
	struct pb_wr *wr;

	while (pb_may_post(p)) {
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

/* The slow pair's receive: note how long it waited since the last, burn. */
static void pb_slow_done(void)
{
	u64 now = ktime_get_ns();

	if (pb_slow_end_ns) {
		pb_slow_wait_ns += now - pb_slow_end_ns;
		pb_slow_wait_max_ns =
			max(pb_slow_wait_max_ns, now - pb_slow_end_ns);
	}
	pb_burn(heavy_ns);
	pb_slow_end_ns = ktime_get_ns();
}

/*
 * Who called done(): a per-CPU worker is the CQ run on either pool with
 * IB_POLL_WORKQUEUE (ib_cq's runs every done() there, ocq's only what it
 * dispatches inline); ocq's flow domains run on unbound workers.
 */
static void pb_note_caller(struct pb_pair *p)
{
	if (is_percpu_thread())
		atomic_inc(p->idx ? &pb_light_in_run : &pb_heavy_in_run);
}

/* The receive is posted again, unless a stream posted all of its own. */
static bool pb_reposts(void)
{
	return !msgs || credits;
}

static void pb_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct pb_wr *wr = container_of(wc->wr_cqe, struct pb_wr, cqe);
	struct pb_pair *p = wr->p;
	unsigned long flags;
	u64 posted, now;

	if (wc->status != IB_WC_SUCCESS) {
		spin_lock_irqsave(&p->lock, flags);
		if (READ_ONCE(pb_running))
			p->errors++;
		spin_unlock_irqrestore(&p->lock, flags);
		return; /* a flush: the QP is being drained */
	}
	pb_note_caller(p);
	ib_dma_sync_single_for_cpu(pb_dev, wr->sge.addr, PB_MSG,
				   DMA_FROM_DEVICE);
	posted = pb_msg_of(p, wr)->posted_ns;
	if (!p->idx)
		pb_slow_done();
	now = ktime_get_ns();
	pb_record(p, now, posted);
	spin_lock_irqsave(&p->lock, flags);
	if (pb_reposts() && READ_ONCE(pb_running)) {
		if (ib_post_recv(p->qp[1], &wr->recv, NULL))
			p->errors++;
		else
			p->recv_posted++;
	}
	if (++p->received == msgs)
		WRITE_ONCE(p->done_ns, now);
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

/* A QP's room in its pooled CQ: its sends, receives and drain. */
static unsigned int pb_qp_cqe(struct pb_pair *p)
{
	return PB_SQ + p->nr_recv + 2;
}

/*
 * The flow domain the pool's default flow key gives @qp on ocq's pool: its
 * number, hashed over a domain per online CPU (ib_ocq_cq_pool_get()).
 */
static unsigned int pb_domain(struct ib_qp *qp)
{
	return reciprocal_scale(hash_32(qp->qp_num, 32), num_online_cpus());
}

/* Whether @qp, a QP of light pair @p, is placed as @place asks. */
static bool pb_placed(struct pb_pair *p, struct ib_qp *qp)
{
	unsigned int slow;

	if (!msgs || !p->idx || !strcmp(place, "any") || num_online_cpus() < 2)
		return true;
	slow = pb_domain(pb_pairs[0].qp[1]);
	return !strcmp(place, "slow") ? pb_domain(qp) == slow :
					pb_domain(qp) != slow;
}

/* A QP of @p, made again until it is placed as @place asks. */
static struct ib_qp *pb_create_qp(struct pb_pair *p,
				  struct ib_qp_init_attr *init)
{
	struct ib_qp *qp;
	unsigned int i;

	for (i = 0; i < PB_QP_TRIES; i++) {
		qp = ib_create_qp(pb_pd, init);
		if (IS_ERR(qp) || pb_placed(p, qp))
			return qp;
		ib_destroy_qp(qp);
	}
	return ERR_PTR(-EAGAIN);
}

static int pb_create_qps(struct pb_pair *p)
{
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = {
			.max_send_wr = PB_SQ + 1,
			.max_recv_wr = p->nr_recv + 1,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};
	int i, ret, hint = vector < 0 ? p->idx % 2 : vector;

	for (i = 0; i < 2; i++) {
		p->cq[i] = ib_cq_pool_get(pb_dev, pb_qp_cqe(p), hint,
					  IB_POLL_WORKQUEUE);
		if (IS_ERR(p->cq[i])) {
			ret = PTR_ERR(p->cq[i]);
			p->cq[i] = NULL;
			return ret;
		}
		init.send_cq = p->cq[i];
		init.recv_cq = p->cq[i];
		p->qp[i] = pb_create_qp(p, &init);
		if (IS_ERR(p->qp[i])) {
			ret = PTR_ERR(p->qp[i]);
			p->qp[i] = NULL;
			return ret;
		}
	}
	ret = rxe_loop_connect(&pb_loop, p->qp[0], p->qp[1]->qp_num);
	return ret ?: rxe_loop_connect(&pb_loop, p->qp[1], p->qp[0]->qp_num);
}

static size_t pb_buf_len(struct pb_pair *p)
{
	return (PB_SQ + p->nr_recv) * PB_MSG;
}

static int pb_pair_setup(struct pb_pair *p, unsigned int idx)
{
	unsigned int i;

	p->idx = idx;
	p->nr_recv = !msgs ? PB_RQ : credits ? depth : msgs;
	spin_lock_init(&p->lock);
	p->rwr = kcalloc(p->nr_recv, sizeof(*p->rwr), GFP_KERNEL);
	p->buf = kzalloc(pb_buf_len(p), GFP_KERNEL);
	if (!p->buf || !p->rwr)
		return -ENOMEM;
	p->dma = ib_dma_map_single(pb_dev, p->buf, pb_buf_len(p),
				   DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(pb_dev, p->dma)) {
		kfree(p->buf);
		p->buf = NULL;
		return -ENOMEM;
	}
	for (i = 0; i < PB_SQ; i++)
		pb_init_wr(p, &p->swr[i], i, true);
	for (i = 0; i < p->nr_recv; i++)
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
			ib_cq_pool_put(p->cq[i], pb_qp_cqe(p));
		p->cq[i] = NULL;
	}
	if (p->buf)
		ib_dma_unmap_single(pb_dev, p->dma, pb_buf_len(p),
				    DMA_BIDIRECTIONAL);
	kfree(p->buf);
	p->buf = NULL;
	kfree(p->rwr);
	p->rwr = NULL;
}

static int pb_pair_start(struct pb_pair *p)
{
	unsigned long flags;
	unsigned int i;
	int ret = 0;

	for (i = 0; i < p->nr_recv && !ret; i++)
		ret = ib_post_recv(p->qp[1], &p->rwr[i].recv, NULL);
	if (ret)
		return ret;
	spin_lock_irqsave(&p->lock, flags);
	p->recv_posted = p->nr_recv;
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
		for (i = 0; i < pairs; i++) {
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
	char buf[1024];
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
	       PB_BACKEND, pairs, heavy_ns);
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

/* Start every pair's stream; @start_ns begins the measured window. */
static int pb_start(u64 start_ns, u64 end_ns)
{
	unsigned int i;
	int ret;

	pb_start_ns = start_ns;
	pb_end_ns = end_ns;
	WRITE_ONCE(pb_running, true);
	for (i = 0; i < pairs; i++) {
		ret = pb_pair_start(&pb_pairs[i]);
		if (ret) {
			pr_err("posting pair %u's first work failed: %d\n", i,
			       ret);
			return ret;
		}
	}
	return 0;
}

/* Stop the senders and wait for what they posted; the errors seen. */
static int pb_stop(unsigned int *errors)
{
	unsigned int i;

	WRITE_ONCE(pb_running, false);
	if (!pb_quiesce()) {
		pr_err("the streams did not drain within %u s\n", PB_DRAIN_S);
		return -ETIMEDOUT;
	}
	for (i = 0, *errors = 0; i < pairs; i++)
		*errors += pb_pairs[i].errors;
	return 0;
}

/* rxe_pool: the streams run for the warm-up and the measured window. */
static int pb_measure_timed(void)
{
	unsigned int i, errors;
	u64 t0;
	int ret, stop;

	for (i = 0; i < pairs; i++) {
		struct pb_pair *p = &pb_pairs[i];

		p->group = !i				 ? PB_HEAVY :
			   p->cq[1] == pb_pairs[0].cq[1] ? PB_SHARED :
							   PB_OTHER;
	}
	t0 = ktime_get_ns() + (u64)warmup_ms * NSEC_PER_MSEC;
	ret = pb_start(t0, t0 + (u64)duration_ms * NSEC_PER_MSEC);
	if (!ret)
		msleep(warmup_ms + duration_ms);
	stop = pb_stop(&errors);
	return ret ?: stop ?: pb_report(errors);
}

#ifdef PB_OCQ
/* The counters of the slow receiver's pooled CQ (every QP's, on one vector). */
static void pb_ocq_stats(struct ib_ocq_stats *s)
{
	ib_ocq_get_stats(ib_cq_to_ocq(pb_pairs[0].cq[1]), s);
}

static void pb_put_ocq(struct pb_line *l, const struct ib_ocq_stats *a,
		       const struct ib_ocq_stats *b)
{
	pb_put(l, "\"ocq\":{\"events\":%llu,\"runs\":%llu,\"empty_runs\":%llu,",
	       b->events - a->events, b->runs - a->runs,
	       b->empty_runs - a->empty_runs);
	pb_put(l, "\"arms\":%llu,\"parks\":%llu,\"stalls\":%llu,",
	       b->arms - a->arms, b->parks - a->parks, b->stalls - a->stalls);
	pb_put(l, "\"inlined\":%llu,\"domain_runs\":%llu,\"yields\":%llu,",
	       b->inlined - a->inlined, b->domain_runs - a->domain_runs,
	       b->yields - a->yields);
	pb_put(l, "\"completions\":%llu,\"max_batch\":%llu},",
	       b->completions - a->completions, b->max_batch);
}
#endif

static u64 pb_ms(u64 ns)
{
	return ns ? div_u64(ns - pb_start_ns, NSEC_PER_MSEC) : 0;
}

/* "name":{...}: the latencies of a group of light pairs over the stream */
static void pb_put_lat(struct pb_line *l, const char *name, unsigned int g)
{
	unsigned int n = pb_kept(g);
	u32 *lat = pb_groups[g].lat;

	sort(lat, n, sizeof(*lat), pb_cmp_u32, NULL);
	pb_put(l, "\"%s\":{\"completions\":%u,\"p50_us\":%u,\"p99_us\":%u,",
	       name, pb_completions(g), pb_pct_us(lat, n, 500),
	       pb_pct_us(lat, n, 990));
	pb_put(l, "\"max_us\":%u},", pb_pct_us(lat, n, 1000));
}

/* One line per pair, then the BENCH-HOL line. */
static int pb_report_hol(unsigned int errors, const void *before,
			 const void *after)
{
	struct pb_line *l = kzalloc(sizeof(*l), GFP_KERNEL);
	u64 light_max = 0, ms;
	unsigned int i;

	if (!l)
		return -ENOMEM;
	for (i = 0; i < pairs; i++) {
		struct pb_pair *p = &pb_pairs[i];

		ms = pb_ms(p->done_ns);
		if (i)
			light_max = max(light_max, ms);
		pr_info("pair %u (%s): %u of %u received, last at %llu ms; qpn %u/%u, domain %u/%u\n",
			i, i ? "light" : "slow", p->received, msgs, ms,
			p->qp[0]->qp_num, p->qp[1]->qp_num, pb_domain(p->qp[0]),
			pb_domain(p->qp[1]));
	}
	pb_put(l, "{\"backend\":\"%s\",\"pairs\":%u,\"msgs\":%u,\"depth\":%u,",
	       PB_BACKEND, pairs, msgs, depth);
	pb_put(l, "\"credits\":%d,\"heavy_ns\":%u,\"place\":\"%s\",", credits,
	       heavy_ns, place);
	pb_put(l, "\"slow_ms\":%llu,\"light_max_ms\":%llu,\"light_ms\":[",
	       pb_ms(pb_pairs[0].done_ns), light_max);
	for (i = 1; i < pairs; i++)
		pb_put(l, "%s%llu", i > 1 ? "," : "",
		       pb_ms(pb_pairs[i].done_ns));
	pb_put(l, "],\"qpn\":[");
	for (i = 0; i < pairs; i++)
		pb_put(l, "%s[%u,%u]", i ? "," : "", pb_pairs[i].qp[0]->qp_num,
		       pb_pairs[i].qp[1]->qp_num);
	pb_put(l, "],\"domain\":[");
	for (i = 0; i < pairs; i++)
		pb_put(l, "%s[%u,%u]", i ? "," : "",
		       pb_domain(pb_pairs[i].qp[0]),
		       pb_domain(pb_pairs[i].qp[1]));
	pb_put(l, "],\"heavy_in_cq_run\":%d,\"light_in_cq_run\":%d,",
	       atomic_read(&pb_heavy_in_run), atomic_read(&pb_light_in_run));
	pb_put_lat(l, "lat_with", PB_SHARED);
	pb_put_lat(l, "lat_apart", PB_OTHER);
	pb_put(l, "\"slow_wait_ms\":%llu,\"slow_wait_max_us\":%llu,",
	       div_u64(pb_slow_wait_ns, NSEC_PER_MSEC),
	       div_u64(pb_slow_wait_max_ns, NSEC_PER_USEC));
#ifdef PB_OCQ
	pb_put_ocq(l, before, after);
#endif
	pb_put(l, "\"errors\":%u}", errors);
	pr_info("BENCH-HOL %s\n", l->buf);
	kfree(l);
	return 0;
}

static bool pb_streamed(void)
{
	unsigned int i;

	for (i = 0; i < pairs; i++)
		if (!READ_ONCE(pb_pairs[i].done_ns))
			return false;
	return true;
}

/* The stream mode: every pair streams @msgs messages; when did each finish? */
static int pb_measure_stream(void)
{
	unsigned int t, errors = 0;
	int ret, stop;
#ifdef PB_OCQ
	struct ib_ocq_stats before, after;

	pb_ocq_stats(&before);
#else
	int before = 0, after = 0;
#endif
	atomic_set(&pb_heavy_in_run, 0);
	atomic_set(&pb_light_in_run, 0);
	pb_slow_end_ns = 0;
	pb_slow_wait_ns = 0;
	pb_slow_wait_max_ns = 0;
	for (t = 0; t < pairs; t++) {
		struct pb_pair *p = &pb_pairs[t];

		p->group = !t ? PB_HEAVY :
			   pb_domain(p->qp[1]) == pb_domain(pb_pairs[0].qp[1]) ?
				PB_SHARED :
				PB_OTHER;
	}
	ret = pb_start(ktime_get_ns(), U64_MAX);
	/* a tenth of a second at a time: a long wait looks like a hung task */
	for (t = 0; !ret && !pb_streamed() && t < wait_s * 10; t++)
		msleep(100);
#ifdef PB_OCQ
	pb_ocq_stats(&after);
#endif
	if (!ret && !pb_streamed()) {
		pr_err("the streams did not end within %u s\n", wait_s);
		ret = -ETIMEDOUT;
	}
	stop = pb_stop(&errors);
	if (!stop)
		pb_report_hol(errors, &before, &after);
	return ret ?: stop;
}

static int pb_run(void)
{
	unsigned int i, g;
	int ret = 0;

	pb_pairs = kvcalloc(pairs, sizeof(*pb_pairs), GFP_KERNEL);
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
	for (i = 0; i < pairs && !ret; i++)
		ret = pb_pair_setup(&pb_pairs[i], i);
	if (ret)
		pr_err("setting up the pairs failed: %d\n", ret);
	else
		ret = msgs ? pb_measure_stream() : pb_measure_timed();
	for (i = 0; i < pairs; i++)
		pb_pair_teardown(&pb_pairs[i]);
	for (g = 0; g < PB_GROUPS; g++)
		kvfree(pb_groups[g].lat);
	kvfree(pb_pairs);
	return ret;
}

static bool pb_params_ok(void)
{
	if (duration_ms < 100 || duration_ms > 600000 || warmup_ms > 60000 ||
	    heavy_ns > 100000000 || !depth || depth > PB_MAX_DEPTH ||
	    pairs < 2 || pairs > PB_MAX_PAIRS || msgs > PB_MAX_MSGS ||
	    !wait_s || wait_s > 3600)
		return false;
	return !strcmp(place, "any") || !strcmp(place, "slow") ||
	       !strcmp(place, "apart");
}

static int __init pb_init(void)
{
	int ret;

	if (!pb_params_ok()) {
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
