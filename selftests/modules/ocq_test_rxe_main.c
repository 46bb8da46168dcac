// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ocq_test_rxe - the ordered completion queue on a real provider.
 *
 * A test module in the kselftest_module.h pattern: module init runs the test
 * selected with test=<name> on the device named by device= (rxe0), prints
 * KTAP lines to the kernel log and fails the load when a subtest failed.
 *
 * Every scenario streams SEND_WITH_IMM over loopback RC QP pairs (QP A sends,
 * QP B receives) whose send and receive queues all complete on ONE ordered
 * CQ.  A SEND carries its pair's sequence number in the immediate data and
 * in the payload; every work request also carries a ticket, its position in
 * its queue's posting order.  Each QP has exactly one queue we post to (A its
 * send queue, B its receive queue), so a queue is a flow of the OCQ.  done()
 * checks, for its queue:
 *  - order: the ticket is the next one posted, whatever the status (flushed
 *    work requests too); no success after a flush;
 *  - exactly once: a work request completes only while posted;
 *  - data: a receive carries the next sequence number, in imm_data and in
 *    the payload, and the byte count sent;
 *  - serialisation: done() never overlaps for one queue (every mode), nor at
 *    all in IB_OCQ_STRICT and IB_OCQ_PARALLEL; in IB_OCQ_PARALLEL the
 *    process() step ran before the commit, once.
 * After the QPs are drained, everything posted must have completed, and the
 * OCQ's completion count must equal what done() saw plus the drain markers.
 *
 * Tests (test=):
 *  strict:   one pair, IB_OCQ_STRICT, streamed to the end
 *  flow:     four pairs sharing one IB_OCQ_FLOW OCQ, streamed to the end
 *  parallel: four pairs, IB_OCQ_PARALLEL with a process() step
 *  drain:    ib_drain_qp() on every QP mid-stream, in each mode
 *  flush:    every QP moved to IB_QPS_ERR mid-stream, in each mode: flushed
 *            completions come in posting order; then drained
 *  drain_paused: ib_drain_qp() on every QP of an OCQ paused mid-stream, and
 *            of one whose arm is postponed (IB_OCQ_POSTPONE_ARM, resumed by
 *            done() until the stream stops), in each mode: every drain
 *            returns within the lease (pause_ms), after every earlier
 *            completion of its QP was dispatched, in order
 *  poll_helpers: no OCQ: one pair on a plain CQ that a completion handler
 *            and a work item of the test's own poll with
 *            ib_poll_cq_and_arm(), then with ib_poll_and_notify(): the same
 *            checks, -EAGAIN requeued, no IB_PN_REPOLL with nothing
 *
 * The OCQ's tuning (strict, flow, parallel, drain, flush), so that its
 * statistics and trace events count what they cover (trace_events.sh):
 *  budget=N:      &ib_ocq_attr.budget, a run yields after N completions
 *  defer_usecs=N: the deferred re-arm, &ib_ocq_attr.defer_usecs
 *  watchdog_ms=N: &ib_ocq_attr.watchdog_ms
 *  lose_every=N:  one completion event in N is lost on purpose, as by a
 *                 provider that loses events: the test's own handler, put in
 *                 front of the OCQ's in the CQ's comp_handler, drops it.  With
 *                 the watchdog the stream goes on: its runs find what the
 *                 lost events announced (rescues).
 *  pause_every=N: every Nth successful receive, its done() pauses the OCQ
 *                 and resumes it (ib_ocq_pause(), ib_ocq_resume())
 * The stats subtest then also requires each of these to have acted: yields,
 * defers, rescues and pauses counted, events lost.
 *
 * poll_ctx= (strict, flow, parallel, drain, flush): the OCQ comes from
 * ib_ocq_alloc_cq() with that poll context, workqueue (the default),
 * unbound, softirq or direct, and every done() also checks that it runs in
 * the context promised: a workqueue worker (unbound: one not bound to a
 * CPU), the softirq, or (direct) one of RT_POLLERS kthreads of the test
 * that call ib_ocq_process_cq_direct() side by side, or the drain's
 * thread, which polls with ib_core's ib_process_cq_direct().  Direct
 * refuses IB_OCQ_PARALLEL: that scenario checks the -EINVAL.
 *
 * ib_drain_qp() blocks for good if a completion is never dispatched, so it
 * runs in a kthread the test waits for with a timeout.  If it times out, the
 * test fails, and what the stuck drain uses is leaked on purpose, the module
 * pinned and its load left in place: a failed test, never a hung guest or a
 * use after free.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include <rdma/ib_ocq.h>
#include <rdma/ib_verbs.h>

#include "ocq_test_compat.h"
#include "ocq_test_ctx.h"
#include "rxe_loop.h"

static char *test = "strict";
module_param(test, charp, 0444);
MODULE_PARM_DESC(test, "test to run at load time");

static char *device = "rxe0";
module_param(device, charp, 0444);
MODULE_PARM_DESC(device, "RDMA device to run on");

static unsigned int count;
module_param(count, uint, 0444);
MODULE_PARM_DESC(count, "SENDs per scenario, over all its pairs; 0: default");

static char *poll_ctx;
module_param(poll_ctx, charp, 0444);
MODULE_PARM_DESC(poll_ctx, "the OCQ's: workqueue, unbound, softirq or direct");

static unsigned int budget;
module_param(budget, uint, 0444);
MODULE_PARM_DESC(budget, "the OCQ's budget per run; 0: the default");

static unsigned int defer_usecs;
module_param(defer_usecs, uint, 0444);
MODULE_PARM_DESC(defer_usecs, "the OCQ's deferred re-arm; 0: off");

static unsigned int watchdog_ms;
module_param(watchdog_ms, uint, 0444);
MODULE_PARM_DESC(watchdog_ms, "the OCQ's watchdog period; 0: off");

static unsigned int lose_every;
module_param(lose_every, uint, 0444);
MODULE_PARM_DESC(lose_every,
		 "lose one completion event in N on purpose; 0: none");

/*
 * lose_every: before the drain, the OCQ's runs must have stopped for this
 * long (looked at every RT_IDLE_STEP_MS), for a second at most
 */
#define RT_IDLE_MS 30
#define RT_IDLE_STEP_MS 10

static unsigned int pause_every;
module_param(pause_every, uint, 0444);
MODULE_PARM_DESC(pause_every,
		 "pause and resume the OCQ every Nth receive; 0: never");

/* poll_ctx=direct: the test's kthreads that poll the CQ side by side */
#define RT_POLLERS 2
/* poll_ctx=direct: completions one ib_ocq_process_cq_direct() call takes */
#define RT_DIRECT_BUDGET 16

/* SENDs kept in flight per pair */
#define RT_WINDOW 32
/* RECVs kept posted per pair: twice the window, so a lagging receiver rarely RNRs */
#define RT_NRECV (2 * RT_WINDOW)
/* bytes per SEND */
#define RT_MSG_SIZE 64
#define RT_MAX_PAIRS 4
/* SENDs per scenario: streams to the end, and mid-stream drain or flush */
#define RT_COUNT_STREAM 20000
#define RT_COUNT_MIDWAY 4000
/*
 * A stream may be slow (TCG on a busy host), but not stall: it fails after
 * this long without a successful completion.  A drain or the wait for the
 * flushed completions fails after as long.
 */
#define RT_STALL_TIMEOUT (20 * HZ)
#define RT_DRAIN_TIMEOUT (20 * HZ)
#define RT_SETTLE_TIMEOUT (20 * HZ)
/* how long a done() that may still post may take to return */
#define RT_QUIESCE_TIMEOUT (5 * HZ)
/* failure details printed per scenario at most */
#define RT_MAX_REPORTS 10
/*
 * drain_paused: the lease.  A pause or postponed arm nobody ends lasts
 * between this and twice this; every drain of a pair may wait for one.
 */
#define RT_PAUSE_MS 200
/* drain_paused: the drains of a scenario must return within this */
#define RT_LEASE_DRAIN_MS (4 * RT_MAX_PAIRS * 2 * RT_PAUSE_MS + 5000)
/* poll_helpers: completions per helper call, calls per work item run */
#define RT_POLL_BATCH 16
#define RT_POLL_CALLS 64

/* KTAP result counters of one test run. */
struct rt_ktap {
	unsigned int nr;
	unsigned int failed;
	unsigned int skipped;
};

struct rt_ctx;
struct rt_queue;

/* One work request; its cqe is the wr_cqe we post with. */
struct rt_wr {
	struct ib_cqe cqe;
	struct rt_queue *q;
	struct ib_sge sge;
	union {
		struct ib_send_wr send;
		struct ib_recv_wr recv;
	};
	u32 ticket; /* position in its queue's posting order */
	bool posted; /* posted and not completed yet */
	bool processed; /* IB_OCQ_PARALLEL: process() ran for it */
};

/* The payload of a SEND, beside the sequence number in imm_data. */
struct rt_msg {
	__le32 pair;
	__le32 seq;
};

/*
 * The work requests of one queue: the send queue of a pair's QP A or the
 * receive queue of its QP B.  The posting and completion fields are used by
 * the queue's done() only, and by the set-up before its first post: the OCQ
 * never runs done() concurrently for one QP, so they need no lock (the
 * overlap check verifies exactly that).
 */
struct rt_queue {
	struct rt_ctx *ctx;
	unsigned int pair;
	struct ib_qp *qp;
	bool is_send;
	struct rt_wr *wrs;
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
	unsigned long cpus; /* bit (cpu % BITS_PER_LONG) per CPU done() ran on */
	u32 ok;
	u32 flushed;
	u32 errors;
	u32 bad_order;
	u32 bad_data;
	u32 unprocessed;
};

/* QP A sends to QP B. */
struct rt_pair {
	struct ib_qp *qp[2];
	struct rt_queue sq;
	struct rt_queue rq;
};

/* What the stream does halfway. */
enum rt_action {
	RT_TO_END, /* nothing: stream every SEND */
	RT_DRAIN, /* ib_drain_qp() every QP */
	RT_FLUSH, /* move every QP to IB_QPS_ERR, then drain */
	RT_DRAIN_PAUSED, /* ib_ocq_pause(), then ib_drain_qp() every QP */
	RT_DRAIN_POSTPONED, /* stop resuming a postponed arm, then drain */
};

/* Who polls the CQ. */
enum rt_poller_kind {
	RT_OCQ, /* the OCQ */
	RT_POLL_CQ_AND_ARM, /* our work item, with ib_poll_cq_and_arm() */
	RT_POLL_AND_NOTIFY, /* our work item, with ib_poll_and_notify() */
};

struct rt_scenario {
	const char *name;
	enum ib_ocq_mode mode;
	unsigned int nr_pairs;
	enum rt_action action;
	enum rt_poller_kind poller;
};

/**
 * struct rt_poller - poll_helpers: the consumer of a plain CQ
 * @cq: the CQ, from ib_create_cq()
 * @work: calls the helper until the CQ is armed; requeued on -EAGAIN
 * @stop: queue nothing more
 * @wcs: the completions of a call
 * @calls: helper calls
 * @eagain: -EAGAIN returns, each requeued a jiffy later
 * @errors: other errors
 * @armed: returns that said the CQ is armed
 * @zero_repolls: IB_PN_REPOLL returns with nothing
 * @bad_status: statuses that do not match the completions returned
 */
struct rt_poller {
	struct ib_cq *cq;
	struct delayed_work work;
	bool stop;
	struct ib_wc wcs[RT_POLL_BATCH];
	u64 calls;
	u64 eagain;
	u64 errors;
	u64 armed;
	u64 zero_repolls;
	u64 bad_status;
};

/*
 * One scenario.  stop is written by the test thread and read by done();
 * the counters are atomic; the rest is set up before the stream starts.
 */
struct rt_ctx {
	const struct rt_scenario *sc;
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_ocq *ocq;
	struct rxe_loop loop; /* where the pairs' QPs send to */
	u32 total; /* SENDs per pair */
	u32 midway; /* successful SENDs that make "halfway" */
	struct rt_pair pairs[RT_MAX_PAIRS];
	bool stop; /* no more posting */
	atomic_t pending; /* successful completions still to come */
	atomic_t sent; /* successful SENDs */
	struct completion streamed;
	struct completion halfway;
	atomic_t active; /* done() calls running */
	atomic_t max_active;
	atomic_t overlaps; /* done() concurrent where the mode forbids it */
	atomic_t processing; /* process() calls running */
	atomic_t max_processing;
	atomic_t nr_processed;
	atomic_t reprocessed;
	atomic_t processed_unposted; /* process() saw a flush or a drain */
	atomic_t reports;
	cpumask_t done_cpus;
	cpumask_t process_cpus;
	ktime_t t0;
	struct rt_poller poll;
	u32 drain_unsettled; /* drain_paused: drains returned too early */
	s64 drain_ms; /* drain_paused: how long the drains took */
	enum ib_poll_context poll_ctx; /* the OCQ's; set before it exists */
	struct task_struct *pollers[RT_POLLERS]; /* direct: polling kthreads */
	struct task_struct *drainer; /* the drain's kthread, once made */
	atomic_t bad_ctx; /* done() calls outside the promised context */
	atomic_t drain_dispatched; /* direct: done() calls of the drain's polls */
	/* lose_every: the OCQ's completion handler, behind ours */
	void (*ocq_handler)(struct ib_cq *cq, void *cq_context);
	atomic_t handler_calls; /* lose_every: calls of ours */
	atomic_t events_lost; /* lose_every: events not passed on */
	atomic_t pauses_made; /* pause_every: pauses done() made */
};

static struct ib_client rt_client;
static DEFINE_MUTEX(rt_lock);
/* from poll_ctx=, before any test runs */
static enum ib_poll_context rt_poll_ctx = IB_POLL_WORKQUEUE;
/* the device we run on, or NULL: protected by rt_lock */
static struct ib_device *rt_dev;
/* a drain never returned: the module stays loaded (protected by rt_lock) */
static bool rt_leaked;

static const char *const rt_mode_names[] = {
	[IB_OCQ_STRICT] = "strict",
	[IB_OCQ_FLOW] = "flow",
	[IB_OCQ_PARALLEL] = "parallel",
};

/* ---- KTAP ---- */

static void rt_result(struct rt_ktap *k, bool ok, const char *sc,
		      const char *name)
{
	k->nr++;
	if (!ok)
		k->failed++;
	pr_info("%s %u %s_%s\n", ok ? "ok" : "not ok", k->nr, sc, name);
}

static void rt_skip(struct rt_ktap *k, const char *name, const char *why)
{
	k->nr++;
	k->skipped++;
	pr_info("ok %u %s # SKIP %s\n", k->nr, name, why);
}

/* Print a failure detail, up to RT_MAX_REPORTS per scenario. */
static __printf(2, 3) void rt_report(struct rt_ctx *ctx, const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	if (atomic_inc_return(&ctx->reports) > RT_MAX_REPORTS)
		return;
	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	pr_info("# %s: %pV\n", ctx->sc->name, &vaf);
	va_end(args);
}

/* ---- the client: which device to run on ---- */

static int rt_add(struct ib_device *dev)
{
	if (strcmp(dev_name(&dev->dev), device))
		return -EOPNOTSUPP; /* not ours: the core will not call .remove */
	mutex_lock(&rt_lock);
	rt_dev = dev;
	mutex_unlock(&rt_lock);
	return 0;
}

static void rt_remove(struct ib_device *dev, void *client_data)
{
	mutex_lock(&rt_lock);
	if (rt_dev == dev)
		rt_dev = NULL;
	mutex_unlock(&rt_lock);
}

static struct ib_client rt_client = {
	.name = "ocq_test_rxe",
	.add = rt_add,
	.remove = rt_remove,
};

/* ---- done(): the checks ---- */

static void rt_send_done(struct ib_cq *cq, struct ib_wc *wc);
static void rt_recv_done(struct ib_cq *cq, struct ib_wc *wc);

static bool rt_owns(const struct ib_wc *wc)
{
	return wc->wr_cqe && (wc->wr_cqe->done == rt_send_done ||
			      wc->wr_cqe->done == rt_recv_done);
}

static void rt_note_max(atomic_t *max, int n)
{
	int old = atomic_read(max);

	while (n > old && !atomic_try_cmpxchg(max, &old, n))
		;
}

static bool rt_is_poller(struct rt_ctx *ctx)
{
	unsigned int i;

	for (i = 0; i < RT_POLLERS; i++)
		if (ctx->pollers[i] == current)
			return true;
	return false;
}

/* Where done() must run for the OCQ's poll context. */
static bool rt_in_promised_ctx(struct rt_ctx *ctx)
{
	bool drainer = current == READ_ONCE(ctx->drainer);

	/* direct: the drain's polls dispatch too, uncounted by the OCQ */
	if (ctx->poll_ctx == IB_POLL_DIRECT && drainer)
		atomic_inc(&ctx->drain_dispatched);
	return ocq_test_in_ctx(ctx->poll_ctx, drainer || rt_is_poller(ctx));
}

static void rt_done_enter(struct rt_queue *q)
{
	struct rt_ctx *ctx = q->ctx;
	int cpu = raw_smp_processor_id();
	int n;

	if (!rt_in_promised_ctx(ctx) &&
	    atomic_inc_return(&ctx->bad_ctx) <= RT_MAX_REPORTS)
		pr_info("# %s: done() in the wrong context: %s, in_task %d, softirq %d\n",
			ctx->sc->name, current->comm, !!in_task(),
			!!in_serving_softirq());

	/* fully ordered: pairs with smp_mb() in rt_quiesce() */
	if (atomic_inc_return(&q->in_done) != 1)
		atomic_inc(&q->overlaps);
	n = atomic_inc_return(&ctx->active);
	if (n != 1 && ctx->sc->mode != IB_OCQ_FLOW)
		atomic_inc(&ctx->overlaps);
	rt_note_max(&ctx->max_active, n);
	cpumask_set_cpu(cpu, &ctx->done_cpus);
	q->cpus |= BIT(cpu % BITS_PER_LONG);
}

static void rt_done_exit(struct rt_queue *q)
{
	/* drain_postponed: the consumer arms while it streams */
	if (q->ctx->sc->action == RT_DRAIN_POSTPONED &&
	    !READ_ONCE(q->ctx->stop))
		ib_ocq_resume(q->ctx->ocq);
	atomic_dec(&q->ctx->active);
	/* our posts are done before rt_quiesce() can see us gone */
	smp_mb__before_atomic();
	atomic_dec(&q->in_done);
}

/* Something unexpected ended the stream: stop waiting for it. */
static void rt_abort_stream(struct rt_ctx *ctx)
{
	if (!READ_ONCE(ctx->stop))
		complete(&ctx->streamed);
}

static void rt_count_success(struct rt_ctx *ctx)
{
	if (atomic_dec_and_test(&ctx->pending))
		complete(&ctx->streamed);
}

/*
 * The checks every completion gets: order, exactly once, process() first
 * for a successful one and never for a flush or an error.
 */
static void rt_check_ticket(struct rt_queue *q, struct rt_wr *wr,
			    const struct ib_wc *wc)
{
	struct rt_ctx *ctx = q->ctx;
	bool want = wc->status == IB_WC_SUCCESS;

	if (ctx->sc->mode == IB_OCQ_PARALLEL &&
	    READ_ONCE(wr->processed) != want) {
		q->unprocessed++;
		rt_report(ctx,
			  "pair %u %s: ticket %u (%s) committed %s process()",
			  q->pair, q->is_send ? "sq" : "rq", wr->ticket,
			  ib_wc_status_msg(wc->status),
			  wr->processed ? "after" : "without");
	}
	wr->processed = false;
	if (!wr->posted || wr->ticket != q->expect_ticket) {
		q->bad_order++;
		rt_report(ctx,
			  "pair %u %s: ticket %u completed (%s), expected %u",
			  q->pair, q->is_send ? "sq" : "rq", wr->ticket,
			  wr->posted ? "posted" : "NOT posted",
			  q->expect_ticket);
	}
	wr->posted = false;
	/* rt_settle() watches it */
	WRITE_ONCE(q->expect_ticket, wr->ticket + 1);
	if (wc->qp != q->qp) {
		q->bad_data++;
		rt_report(ctx, "pair %u: completion reports another QP",
			  q->pair);
	}
}

/* Account @wc; true if it succeeded (with @opcode) and may be reposted. */
static bool rt_complete(struct rt_queue *q, struct rt_wr *wr,
			const struct ib_wc *wc, enum ib_wc_opcode opcode)
{
	struct rt_ctx *ctx = q->ctx;

	rt_check_ticket(q, wr, wc);
	if (wc->status == IB_WC_WR_FLUSH_ERR) {
		q->flushing = true;
		q->flushed++;
		rt_abort_stream(ctx);
		return false;
	}
	if (wc->status != IB_WC_SUCCESS) {
		q->errors++;
		rt_report(ctx, "pair %u %s: ticket %u status %s (%d)", q->pair,
			  q->is_send ? "sq" : "rq", wr->ticket,
			  ib_wc_status_msg(wc->status), wc->status);
		rt_abort_stream(ctx);
		return false;
	}
	if (q->flushing) {
		q->bad_order++;
		rt_report(ctx, "pair %u: ticket %u succeeded after a flush",
			  q->pair, wr->ticket);
	}
	if (wc->opcode != opcode) {
		q->bad_data++;
		rt_report(ctx, "pair %u: opcode %d, expected %d", q->pair,
			  wc->opcode, opcode);
	}
	q->ok++;
	return true;
}

/* ---- posting ---- */

static void rt_prep_send(struct rt_queue *q, struct rt_wr *wr)
{
	struct rt_msg *msg = (void *)(q->buf + (wr - q->wrs) * RT_MSG_SIZE);
	u32 seq = q->next_seq++;

	msg->pair = cpu_to_le32(q->pair);
	msg->seq = cpu_to_le32(seq);
	ib_dma_sync_single_for_device(q->ctx->dev, wr->sge.addr, RT_MSG_SIZE,
				      DMA_TO_DEVICE);
	wr->send.ex.imm_data = cpu_to_be32(seq);
	wr->send.next = NULL;
	wr->ticket = q->next_ticket++;
	wr->posted = true;
}

static void rt_prep_recv(struct rt_queue *q, struct rt_wr *wr)
{
	wr->recv.next = NULL;
	wr->ticket = q->next_ticket++;
	wr->posted = true;
}

/* Repost @wr from done(); a failure ends the stream. */
static void rt_repost(struct rt_queue *q, struct rt_wr *wr)
{
	int ret;

	if (q->is_send) {
		rt_prep_send(q, wr);
		ret = ib_post_send(q->qp, &wr->send, NULL);
	} else {
		rt_prep_recv(q, wr);
		ret = ib_post_recv(q->qp, &wr->recv, NULL);
	}
	if (ret) {
		wr->posted = false;
		q->errors++;
		rt_report(q->ctx, "pair %u: reposting failed: %d", q->pair,
			  ret);
		rt_abort_stream(q->ctx);
	}
}

/* ---- done() ---- */

static void rt_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rt_wr *wr = container_of(wc->wr_cqe, struct rt_wr, cqe);
	struct rt_queue *q = wr->q;
	struct rt_ctx *ctx = q->ctx;

	rt_done_enter(q);
	if (rt_complete(q, wr, wc, IB_WC_SEND)) {
		if (atomic_inc_return(&ctx->sent) == ctx->midway)
			complete(&ctx->halfway);
		rt_count_success(ctx);
		if (!READ_ONCE(ctx->stop) && q->next_seq < ctx->total)
			rt_repost(q, wr);
	}
	rt_done_exit(q);
}

/* A successful receive: the next sequence number, in imm_data and payload. */
static void rt_check_recv(struct rt_queue *q, struct rt_wr *wr,
			  const struct ib_wc *wc)
{
	struct rt_msg *msg = (void *)(q->buf + (wr - q->wrs) * RT_MSG_SIZE);
	u32 imm = be32_to_cpu(wc->ex.imm_data);

	ib_dma_sync_single_for_cpu(q->ctx->dev, wr->sge.addr, RT_MSG_SIZE,
				   DMA_FROM_DEVICE);
	if (!(wc->wc_flags & IB_WC_WITH_IMM) || wc->byte_len != RT_MSG_SIZE) {
		q->bad_data++;
		rt_report(q->ctx,
			  "pair %u: receive without imm_data or %u bytes",
			  q->pair, wc->byte_len);
		return;
	}
	if (imm != q->expect_seq) {
		q->bad_order++;
		rt_report(q->ctx, "pair %u: received seq %u, expected %u",
			  q->pair, imm, q->expect_seq);
	}
	q->expect_seq = imm + 1;
	if (le32_to_cpu(msg->pair) != q->pair || le32_to_cpu(msg->seq) != imm) {
		q->bad_data++;
		rt_report(q->ctx,
			  "pair %u: payload says pair %u seq %u, imm %u",
			  q->pair, le32_to_cpu(msg->pair),
			  le32_to_cpu(msg->seq), imm);
	}
}

/* pause_every: a pause, and its end, from done() */
static void rt_pause_resume(struct rt_ctx *ctx)
{
	ib_ocq_pause(ctx->ocq);
	atomic_inc(&ctx->pauses_made);
	ib_ocq_resume(ctx->ocq);
}

static void rt_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rt_wr *wr = container_of(wc->wr_cqe, struct rt_wr, cqe);
	struct rt_queue *q = wr->q;
	struct rt_ctx *ctx = q->ctx;

	rt_done_enter(q);
	if (rt_complete(q, wr, wc, IB_WC_RECV)) {
		rt_check_recv(q, wr, wc);
		rt_count_success(ctx);
		if (pause_every && !(q->ok % pause_every))
			rt_pause_resume(ctx);
		/*
		 * Repost until the teardown: SENDs in flight need receives,
		 * or they retry on RNR NAKs for good.
		 */
		if (!READ_ONCE(ctx->stop))
			rt_repost(q, wr);
	}
	rt_done_exit(q);
}

/* IB_OCQ_PARALLEL: the unordered step, on any CPU, before done(). */
static void rt_process(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rt_ctx *ctx = ib_ocq_private(cq);
	struct rt_wr *wr;

	rt_note_max(&ctx->max_processing, atomic_inc_return(&ctx->processing));
	cpumask_set_cpu(raw_smp_processor_id(), &ctx->process_cpus);
	atomic_inc(&ctx->nr_processed);
	/* flushes and ib_drain_qp()'s markers never come here */
	if (wc->status != IB_WC_SUCCESS || !rt_owns(wc))
		atomic_inc(&ctx->processed_unposted);
	if (rt_owns(wc)) {
		wr = container_of(wc->wr_cqe, struct rt_wr, cqe);
		if (READ_ONCE(wr->processed))
			atomic_inc(&ctx->reprocessed);
		WRITE_ONCE(wr->processed, true);
	}
	atomic_dec(&ctx->processing);
}

/* ---- set-up ---- */

/* Both QPs of a pair have room for the window, the receives and a drain. */
static struct ib_qp *rt_create_qp(struct rt_ctx *ctx)
{
	struct ib_cq *cq = ctx->poll.cq ?: ib_ocq_cq(ctx->ocq);
	struct ib_qp_init_attr init = {
		.send_cq     = cq,
		.recv_cq     = cq,
		.qp_type     = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = {
			.max_send_wr  = RT_WINDOW + 1,
			.max_recv_wr  = RT_NRECV + 1,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};

	return ib_create_qp(ctx->pd, &init);
}

static void rt_init_wr(struct rt_queue *q, struct rt_wr *wr, unsigned int i)
{
	wr->q = q;
	wr->cqe.done = q->is_send ? rt_send_done : rt_recv_done;
	wr->sge.addr = q->dma + i * RT_MSG_SIZE;
	wr->sge.length = RT_MSG_SIZE;
	wr->sge.lkey = q->ctx->pd->local_dma_lkey;
	if (q->is_send) {
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

static int rt_queue_init(struct rt_ctx *ctx, struct rt_queue *q,
			 unsigned int pair, struct ib_qp *qp, bool is_send)
{
	size_t len;
	unsigned int i;

	q->ctx = ctx;
	q->pair = pair;
	q->qp = qp;
	q->is_send = is_send;
	q->nr_wrs = is_send ? RT_WINDOW : RT_NRECV;
	len = (size_t)q->nr_wrs * RT_MSG_SIZE;
	atomic_set(&q->in_done, 0);
	atomic_set(&q->overlaps, 0);
	q->wrs = kcalloc(q->nr_wrs, sizeof(*q->wrs), GFP_KERNEL);
	q->buf = kzalloc(len, GFP_KERNEL);
	if (!q->wrs || !q->buf)
		goto out_free;
	q->dma = ib_dma_map_single(ctx->dev, q->buf, len, DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(ctx->dev, q->dma))
		goto out_free;
	for (i = 0; i < q->nr_wrs; i++)
		rt_init_wr(q, &q->wrs[i], i);
	return 0;

out_free:
	kfree(q->buf);
	kfree(q->wrs);
	q->buf = NULL;
	q->wrs = NULL;
	return -ENOMEM;
}

static void rt_queue_exit(struct rt_ctx *ctx, struct rt_queue *q)
{
	if (!q->buf)
		return;
	ib_dma_unmap_single(ctx->dev, q->dma, (size_t)q->nr_wrs * RT_MSG_SIZE,
			    DMA_BIDIRECTIONAL);
	kfree(q->buf);
	kfree(q->wrs);
}

static void rt_pair_destroy_qps(struct rt_pair *p)
{
	int i;

	for (i = 1; i >= 0; i--) {
		if (!IS_ERR_OR_NULL(p->qp[i]))
			ib_destroy_qp(p->qp[i]);
		p->qp[i] = NULL;
	}
}

/* Two connected RC QPs and their queues; on error the caller destroys. */
static int rt_pair_create(struct rt_ctx *ctx, struct rt_pair *p,
			  unsigned int idx)
{
	int i, ret;

	for (i = 0; i < 2; i++) {
		p->qp[i] = rt_create_qp(ctx);
		if (IS_ERR(p->qp[i]))
			return PTR_ERR(p->qp[i]);
	}
	ret = rxe_loop_connect(&ctx->loop, p->qp[0], p->qp[1]->qp_num);
	if (!ret)
		ret = rxe_loop_connect(&ctx->loop, p->qp[1], p->qp[0]->qp_num);
	if (ret)
		return ret;
	ret = rt_queue_init(ctx, &p->sq, idx, p->qp[0], true);
	if (!ret)
		ret = rt_queue_init(ctx, &p->rq, idx, p->qp[1], false);
	return ret;
}

/* everything that can be outstanding at once, twice over */
static int rt_nr_cqe(struct rt_ctx *ctx)
{
	return 2 * ctx->sc->nr_pairs * (RT_WINDOW + RT_NRECV + 4);
}

static bool rt_lease_action(const struct rt_scenario *sc)
{
	return sc->action == RT_DRAIN_PAUSED ||
	       sc->action == RT_DRAIN_POSTPONED;
}

/*
 * lose_every: the CQ's completion handler, in front of the OCQ's: it drops
 * one call in lose_every, an event lost as a lossy provider loses it.
 */
static void rt_lossy_handler(struct ib_cq *cq, void *cq_context)
{
	struct rt_ctx *ctx = cq_context;

	if (!(atomic_inc_return(&ctx->handler_calls) % lose_every)) {
		atomic_inc(&ctx->events_lost);
		return;
	}
	ctx->ocq_handler(cq, cq_context);
}

static struct ib_ocq *rt_ocq_alloc(struct rt_ctx *ctx)
{
	struct ib_ocq_attr attr = {
		.mode = ctx->sc->mode,
		.process = ctx->sc->mode == IB_OCQ_PARALLEL ? rt_process : NULL,
		.budget = budget,
		.defer_usecs = defer_usecs,
		.watchdog_ms = watchdog_ms,
	};
	struct ib_ocq *ocq;
	struct ib_cq *cq;

	if (ctx->sc->action == RT_DRAIN_POSTPONED)
		attr.flags = IB_OCQ_POSTPONE_ARM;
	if (rt_lease_action(ctx->sc))
		ocq_compat_set_pause_ms(&attr, RT_PAUSE_MS);
	if (!poll_ctx) {
		ocq = ib_ocq_alloc(ctx->dev, ctx, rt_nr_cqe(ctx), 0, &attr);
	} else {
		cq = ib_ocq_alloc_cq(ctx->dev, ctx, rt_nr_cqe(ctx), 0,
				     ctx->poll_ctx, &attr);
		ocq = IS_ERR(cq) ? ERR_CAST(cq) : ib_cq_to_ocq(cq);
	}
	/* before the first QP: no completion, no event can come yet */
	if (!IS_ERR(ocq) && lose_every) {
		cq = ib_ocq_cq(ocq);
		ctx->ocq_handler = cq->comp_handler;
		WRITE_ONCE(cq->comp_handler, rt_lossy_handler);
	}
	return ocq;
}

/* ---- poll_ctx=direct: the ULP's own pollers ---- */

static int rt_poller_fn(void *arg)
{
	struct rt_ctx *ctx = arg;
	struct ib_cq *cq = ib_ocq_cq(ctx->ocq);

	while (!kthread_should_stop()) {
		if (ib_ocq_process_cq_direct(cq, RT_DIRECT_BUDGET) > 0)
			cond_resched();
		else
			usleep_range(20, 100);
	}
	return 0;
}

static int rt_pollers_start(struct rt_ctx *ctx)
{
	struct task_struct *t;
	unsigned int i;

	if (ctx->poll_ctx != IB_POLL_DIRECT)
		return 0;
	for (i = 0; i < RT_POLLERS; i++) {
		t = kthread_create(rt_poller_fn, ctx, "ocq_test_poll%u", i);
		if (IS_ERR(t))
			return PTR_ERR(t);
		/* done() checks its thread against this: set it first */
		ctx->pollers[i] = t;
		wake_up_process(t);
	}
	return 0;
}

/* Before a drain, which polls a direct CQ itself, and at teardown. */
static void rt_pollers_stop(struct rt_ctx *ctx)
{
	unsigned int i;

	for (i = 0; i < RT_POLLERS; i++) {
		if (ctx->pollers[i])
			kthread_stop(ctx->pollers[i]);
		ctx->pollers[i] = NULL;
	}
}

/* ---- poll_helpers: a plain CQ and a consumer of our own ---- */

static void rt_poll_requeue(struct rt_ctx *ctx, unsigned long delay)
{
	if (!READ_ONCE(ctx->poll.stop))
		queue_delayed_work(system_highpri_wq, &ctx->poll.work, delay);
}

static void rt_poll_event(struct ib_cq *cq, void *cq_context)
{
	rt_poll_requeue(cq_context, 0);
}

/* ib_poll_and_notify(): true if @st says armed; counts impossible ones. */
static bool rt_poll_status(struct rt_poller *p, int n, enum ib_pn_status st)
{
	switch (st) {
	case IB_PN_MORE:
		p->bad_status += !n;
		return false;
	case IB_PN_REPOLL:
		p->zero_repolls += !n;
		return false;
	case IB_PN_ARMED:
		p->bad_status += !n;
		return true;
	case IB_PN_EMPTY_ARMED:
		p->bad_status += !!n;
		return true;
	default:
		p->bad_status++;
		return false;
	}
}

static void rt_poll_work(struct work_struct *work)
{
	struct rt_ctx *ctx =
		container_of(to_delayed_work(work), struct rt_ctx, poll.work);
	bool pn = ctx->sc->poller == RT_POLL_AND_NOTIFY;
	struct rt_poller *p = &ctx->poll;
	enum ib_pn_status st;
	unsigned int c;
	int i, n;

	for (c = 0; c < RT_POLL_CALLS; c++) {
		st = IB_PN_MORE;
		if (pn)
			n = ib_poll_and_notify(p->cq, RT_POLL_BATCH, p->wcs,
					       IB_ARM_AUTO, &st);
		else
			n = ib_poll_cq_and_arm(p->cq, RT_POLL_BATCH, p->wcs);
		p->calls++;
		if (n < 0) {
			/* not armed: come back later, as the API asks */
			if (n == -EAGAIN)
				p->eagain++;
			else
				p->errors++;
			rt_poll_requeue(ctx, 1);
			return;
		}
		for (i = 0; i < n; i++) {
			if (p->wcs[i].wr_cqe)
				p->wcs[i].wr_cqe->done(p->cq, &p->wcs[i]);
			else
				p->errors++;
		}
		if (pn ? rt_poll_status(p, n, st) : !n) {
			p->armed++;
			return;
		}
	}
	rt_poll_requeue(ctx, 0);
}

static int rt_poll_create(struct rt_ctx *ctx)
{
	struct ib_cq_init_attr attr = { .cqe = rt_nr_cqe(ctx) };

	INIT_DELAYED_WORK(&ctx->poll.work, rt_poll_work);
	ctx->poll.cq = ib_create_cq(ctx->dev, rt_poll_event, NULL, ctx, &attr);
	if (IS_ERR(ctx->poll.cq)) {
		int ret = PTR_ERR(ctx->poll.cq);

		pr_info("# ib_create_cq: %d\n", ret);
		ctx->poll.cq = NULL;
		return ret;
	}
	/* the first call finds the CQ empty and arms it */
	rt_poll_requeue(ctx, 0);
	return 0;
}

/* After the QPs are gone: nothing completes on the CQ any more. */
static void rt_poll_destroy(struct rt_ctx *ctx)
{
	if (!ctx->poll.cq)
		return;
	WRITE_ONCE(ctx->poll.stop, true);
	cancel_delayed_work_sync(&ctx->poll.work);
	ib_destroy_cq(ctx->poll.cq);
	ctx->poll.cq = NULL;
}

static bool rt_poll_ok(struct rt_ctx *ctx)
{
	struct rt_poller *p = &ctx->poll;

	pr_info("# %s: %llu helper calls, %llu -EAGAIN (requeued), %llu errors, %llu armed, %llu IB_PN_REPOLL with nothing, %llu bad statuses\n",
		ctx->sc->name, p->calls, p->eagain, p->errors, p->armed,
		p->zero_repolls, p->bad_status);
	return !p->errors && !p->zero_repolls && !p->bad_status && p->armed;
}

/* Undo rt_ctx_create() (also a partial one); never after a leaked drain. */
static void rt_ctx_destroy(struct rt_ctx *ctx)
{
	unsigned int i;

	rt_pollers_stop(ctx);
	for (i = 0; i < ctx->sc->nr_pairs; i++)
		rt_pair_destroy_qps(&ctx->pairs[i]);
	/* after the QPs: no done() runs once this returns */
	if (!IS_ERR_OR_NULL(ctx->ocq))
		ib_ocq_free(ctx->ocq);
	rt_poll_destroy(ctx);
	/* the work requests and buffers done() uses go last */
	for (i = 0; i < ctx->sc->nr_pairs; i++) {
		rt_queue_exit(ctx, &ctx->pairs[i].rq);
		rt_queue_exit(ctx, &ctx->pairs[i].sq);
	}
	if (!IS_ERR_OR_NULL(ctx->pd))
		ib_dealloc_pd(ctx->pd);
	kfree(ctx);
}

static int rt_ctx_setup(struct rt_ctx *ctx)
{
	unsigned int i;
	int ret;

	ret = rxe_loop_init(&ctx->loop, ctx->dev);
	if (ret) {
		pr_info("# no IPv4-mapped RoCEv2 GID: %d\n", ret);
		return ret;
	}
	ctx->pd = ib_alloc_pd(ctx->dev, 0);
	if (IS_ERR(ctx->pd))
		return PTR_ERR(ctx->pd);
	if (ctx->sc->poller != RT_OCQ) {
		ret = rt_poll_create(ctx);
		if (ret)
			return ret;
	} else {
		ctx->ocq = rt_ocq_alloc(ctx);
	}
	if (IS_ERR(ctx->ocq)) {
		pr_info("# ib_ocq_alloc: %ld\n", PTR_ERR(ctx->ocq));
		return PTR_ERR(ctx->ocq);
	}
	for (i = 0; i < ctx->sc->nr_pairs; i++) {
		ret = rt_pair_create(ctx, &ctx->pairs[i], i);
		if (ret) {
			pr_info("# pair %u: %d\n", i, ret);
			return ret;
		}
	}
	return 0;
}

static struct rt_ctx *rt_ctx_create(struct ib_device *dev,
				    const struct rt_scenario *sc, u32 sends)
{
	struct rt_ctx *ctx;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return ERR_PTR(-ENOMEM);
	ctx->sc = sc;
	ctx->dev = dev;
	ctx->poll_ctx = rt_poll_ctx;
	ctx->total = max(sends / sc->nr_pairs, 2U);
	ctx->midway = ctx->total * sc->nr_pairs / 2;
	atomic_set(&ctx->pending, 2 * ctx->total * sc->nr_pairs);
	init_completion(&ctx->streamed);
	init_completion(&ctx->halfway);
	if (rt_ctx_setup(ctx)) {
		rt_ctx_destroy(ctx);
		return ERR_PTR(-EIO);
	}
	return ctx;
}

/* ---- the stream ---- */

/* Post every receive of @q, then the first window of SENDs of @s. */
static int rt_pair_start(struct rt_queue *s, struct rt_queue *q)
{
	unsigned int i, n = min_t(u32, RT_WINDOW, s->ctx->total);
	int ret;

	/* built whole before posting: done() takes over at the first post */
	for (i = 0; i < q->nr_wrs; i++) {
		rt_prep_recv(q, &q->wrs[i]);
		if (i)
			q->wrs[i - 1].recv.next = &q->wrs[i].recv;
	}
	ret = ib_post_recv(q->qp, &q->wrs[0].recv, NULL);
	if (ret)
		return ret;
	for (i = 0; i < n; i++) {
		rt_prep_send(s, &s->wrs[i]);
		if (i)
			s->wrs[i - 1].send.next = &s->wrs[i].send;
	}
	return ib_post_send(s->qp, &s->wrs[0].send, NULL);
}

static int rt_start(struct rt_ctx *ctx)
{
	unsigned int i;
	int ret;

	ctx->t0 = ktime_get();
	for (i = 0; i < ctx->sc->nr_pairs; i++) {
		ret = rt_pair_start(&ctx->pairs[i].sq, &ctx->pairs[i].rq);
		if (ret) {
			pr_info("# pair %u: posting failed: %d\n", i, ret);
			WRITE_ONCE(ctx->stop, true);
			return ret;
		}
	}
	return 0;
}

/* Stop posting, and wait until no done() that may still post is running. */
static int rt_quiesce(struct rt_ctx *ctx)
{
	unsigned long end = jiffies + RT_QUIESCE_TIMEOUT;
	unsigned int i, j;

	WRITE_ONCE(ctx->stop, true);
	smp_mb(); /* pairs with atomic_inc_return() in rt_done_enter() */
	for (i = 0; i < ctx->sc->nr_pairs; i++) {
		for (j = 0; j < 2; j++) {
			struct rt_pair *p = &ctx->pairs[i];
			atomic_t *in_done = j ? &p->rq.in_done : &p->sq.in_done;

			/* pairs with smp_mb__before_atomic() in rt_done_exit() */
			while (atomic_read_acquire(in_done)) {
				if (time_after(jiffies, end))
					return -ETIMEDOUT;
				usleep_range(20, 50);
			}
		}
	}
	return 0;
}

/* Move both QPs of every pair to IB_QPS_ERR, senders first. */
static int rt_to_error(struct rt_ctx *ctx)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	unsigned int i, j;
	int ret;

	for (j = 0; j < 2; j++) {
		for (i = 0; i < ctx->sc->nr_pairs; i++) {
			ret = ib_modify_qp(ctx->pairs[i].qp[j], &attr,
					   IB_QP_STATE);
			if (ret)
				return ret;
		}
	}
	return 0;
}

static bool rt_queue_settled(struct rt_queue *q)
{
	return READ_ONCE(q->expect_ticket) == READ_ONCE(q->next_ticket);
}

/* After rt_quiesce(): wait until everything posted has completed. */
static bool rt_settle(struct rt_ctx *ctx)
{
	unsigned long end = jiffies + RT_SETTLE_TIMEOUT;
	unsigned int i;

	for (i = 0; i < ctx->sc->nr_pairs; i++) {
		while (!rt_queue_settled(&ctx->pairs[i].sq) ||
		       !rt_queue_settled(&ctx->pairs[i].rq)) {
			if (time_after(jiffies, end))
				return false;
			msleep(20);
		}
	}
	return true;
}

/*
 * Wait for @done while the stream makes progress; false if it stalled for
 * RT_STALL_TIMEOUT: a lost notification, or an engine that stopped.
 */
static bool rt_wait_stream(struct rt_ctx *ctx, struct completion *done)
{
	int last = atomic_read(&ctx->pending), now;

	while (!wait_for_completion_timeout(done, RT_STALL_TIMEOUT)) {
		now = atomic_read(&ctx->pending);
		if (now == last) {
			pr_info("# %s: no completion for %d s, %d still to come\n",
				ctx->sc->name, RT_STALL_TIMEOUT / HZ, now);
			return false;
		}
		last = now;
	}
	return true;
}

/* ---- the guarded drain ---- */

struct rt_drainer {
	struct rt_ctx *ctx;
	struct completion done;
};

/* Drain every sender, then every receiver; see rt_drain(). */
static int rt_drain_fn(void *arg)
{
	struct rt_drainer *d = arg;
	unsigned int i, j;

	for (j = 0; j < 2; j++) {
		for (i = 0; i < d->ctx->sc->nr_pairs; i++) {
			struct rt_pair *p = &d->ctx->pairs[i];

			ib_drain_qp(p->qp[j]);
			/* its drain CQE came after all its completions */
			if (!rt_queue_settled(j ? &p->rq : &p->sq))
				d->ctx->drain_unsettled++;
		}
	}
	kthread_complete_and_exit(&d->done, 0);
}

/*
 * ib_drain_qp() every QP, senders first: a sender drained while its
 * receiver still has receives posted flushes what it has in flight, where
 * the other order would leave it retrying.  If the drain does not return,
 * leak it (see the top of the file).
 */
static int rt_drain(struct rt_ctx *ctx)
{
	ktime_t t0 = ktime_get();
	struct task_struct *t;
	struct rt_drainer *d;

	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return -ENOMEM;
	d->ctx = ctx;
	init_completion(&d->done);
	/* ib_drain_qp() polls a direct CQ itself: nobody else may meanwhile */
	rt_pollers_stop(ctx);
	t = kthread_create(rt_drain_fn, d, "ocq_test_drain");
	if (IS_ERR(t)) {
		kfree(d);
		return PTR_ERR(t);
	}
	WRITE_ONCE(ctx->drainer, t);
	wake_up_process(t);
	if (!wait_for_completion_timeout(&d->done, RT_DRAIN_TIMEOUT)) {
		pr_info("# %s: ib_drain_qp() did not return in %d s: leaking the QPs, the OCQ and this module\n",
			ctx->sc->name, RT_DRAIN_TIMEOUT / HZ);
		__module_get(THIS_MODULE);
		rt_leaked = true;
		return -ETIMEDOUT;
	}
	ctx->drain_ms = ktime_ms_delta(ktime_get(), t0);
	kfree(d);
	return 0;
}

/* ---- verdicts ---- */

struct rt_sum {
	u64 ok;
	u64 flushed;
	u64 errors;
	u32 bad_order;
	u32 bad_data;
	u32 unprocessed;
	u32 overlaps;
	u32 unsettled;
};

static void rt_sum_queue(struct rt_sum *s, struct rt_queue *q)
{
	unsigned int i;

	s->ok += q->ok;
	s->flushed += q->flushed;
	s->errors += q->errors;
	s->bad_order += q->bad_order;
	s->bad_data += q->bad_data;
	s->unprocessed += q->unprocessed;
	s->overlaps += atomic_read(&q->overlaps);
	for (i = 0; i < q->nr_wrs; i++)
		s->unsettled += q->wrs[i].posted;
	if (q->expect_ticket != q->next_ticket)
		s->unsettled++;
}

static void rt_print_pair(struct rt_ctx *ctx, unsigned int i)
{
	struct rt_pair *p = &ctx->pairs[i];

	pr_info("# %s: pair %u qp %u->%u: sq ok %u flushed %u cpus %lx, rq ok %u flushed %u cpus %lx\n",
		ctx->sc->name, i, p->qp[0]->qp_num, p->qp[1]->qp_num, p->sq.ok,
		p->sq.flushed, p->sq.cpus, p->rq.ok, p->rq.flushed, p->rq.cpus);
}

/* Counts that hold for every pair, whatever the action. */
static bool rt_pair_counts_ok(struct rt_ctx *ctx, struct rt_pair *p)
{
	switch (ctx->sc->action) {
	case RT_TO_END:
		return p->sq.ok == ctx->total && p->rq.ok == ctx->total &&
		       !p->sq.flushed && p->rq.flushed == RT_NRECV;
	default:
		/* a SEND is acknowledged only after its receive completed */
		return p->rq.ok >= p->sq.ok && p->rq.ok <= p->sq.next_ticket &&
		       p->sq.ok + p->sq.flushed == p->sq.next_ticket;
	}
}

static void rt_print_stats(struct rt_ctx *ctx, const struct ib_ocq_stats *s)
{
	pr_info("# %s: stats events %llu runs %llu empty_runs %llu polls %llu completions %llu arms %llu repolls %llu\n",
		ctx->sc->name, s->events, s->runs, s->empty_runs, s->polls,
		s->completions, s->arms, s->repolls);
	pr_info("# %s: stats yields %llu pauses %llu rescues %llu stalls %llu domain_runs %llu cq_errors %llu max_batch %llu\n",
		ctx->sc->name, s->yields, s->pauses, s->rescues, s->stalls,
		s->domain_runs, s->cq_errors, s->max_batch);
	pr_info("# %s: stats defers %llu parks %llu lease_resumes %llu\n",
		ctx->sc->name, s->defers, s->parks,
		ocq_compat_lease_resumes(s));
}

/*
 * The tuning parameters acted: each counted what it causes, and the pauses
 * counted are at least those done() made (a postponed arm counts too).
 */
static bool rt_tuning_ok(struct rt_ctx *ctx, const struct ib_ocq_stats *s)
{
	bool ok = true;

	if (budget && !s->yields)
		ok = false;
	if (defer_usecs && !s->defers)
		ok = false;
	if (lose_every && (!atomic_read(&ctx->events_lost) || !s->rescues))
		ok = false;
	if (pause_every && (!atomic_read(&ctx->pauses_made) ||
			    s->pauses < atomic_read(&ctx->pauses_made)))
		ok = false;
	if (lose_every || pause_every)
		pr_info("# %s: %d events lost on purpose, %d pauses made by done()\n",
			ctx->sc->name, atomic_read(&ctx->events_lost),
			atomic_read(&ctx->pauses_made));
	if (!ok)
		pr_info("# %s: a tuning parameter did not act: budget %u yields %llu, defer_usecs %u defers %llu, lose_every %u rescues %llu, pause_every %u pauses %llu\n",
			ctx->sc->name, budget, s->yields, defer_usecs,
			s->defers, lose_every, s->rescues, pause_every,
			s->pauses);
	return ok;
}

/*
 * The OCQ's counters once its runs are done: @completions is counted as a
 * run's batch ends, so the last drain's done() may return before the run
 * that called it counts it.  Wait for @expect, a second at most.
 */
static void rt_get_stats_settled(struct rt_ctx *ctx, struct ib_ocq_stats *s,
				 u64 expect)
{
	unsigned long end = jiffies + HZ;

	for (;;) {
		ib_ocq_get_stats(ctx->ocq, s);
		if (s->completions >= expect || time_after(jiffies, end))
			return;
		usleep_range(1000, 2000);
	}
}

/* The OCQ's own count: done() calls we saw, plus 4 drain markers per pair. */
static bool rt_stats_ok(struct rt_ctx *ctx, const struct rt_sum *sum)
{
	struct ib_ocq_stats s;
	u64 expect =
		sum->ok + sum->flushed + sum->errors + 4 * ctx->sc->nr_pairs;
	bool ok;

	if (ctx->poll.cq)
		return rt_poll_ok(ctx);
	/*
	 * direct: the drain's polls, with ib_core's ib_process_cq_direct(),
	 * dispatch the drain markers and what came before them uncounted
	 */
	if (ctx->poll_ctx == IB_POLL_DIRECT)
		expect -= atomic_read(&ctx->drain_dispatched) +
			  4 * ctx->sc->nr_pairs;
	rt_get_stats_settled(ctx, &s, expect);
	rt_print_stats(ctx, &s);
	if (ctx->poll_ctx == IB_POLL_DIRECT)
		pr_info("# %s: direct: %d done() calls of the drain's polls, %llu contended calls\n",
			ctx->sc->name, atomic_read(&ctx->drain_dispatched),
			s.contended);
	ok = s.completions == expect && !s.cq_errors && rt_tuning_ok(ctx, &s);
	/* drain_paused: the drains waited for the lease, nothing else */
	if (rt_lease_action(ctx->sc)) {
		pr_info("# %s: stats lease_resumes %llu provider_errors %llu\n",
			ctx->sc->name, ocq_compat_lease_resumes(&s),
			ocq_compat_provider_errors(&s));
		ok = ok && ocq_compat_lease_resumes(&s) > 0;
	}
	/* process() runs for the successful completions only */
	if (ctx->sc->mode == IB_OCQ_PARALLEL)
		ok = ok && atomic_read(&ctx->nr_processed) == sum->ok;
	if (!ok)
		pr_info("# %s: OCQ completions %llu, expected %llu; processed %d; cq_errors %llu\n",
			ctx->sc->name, s.completions, expect,
			atomic_read(&ctx->nr_processed), s.cq_errors);
	return ok;
}

/* How the domains and workers spread: diagnostics, never a verdict. */
static void rt_print_spread(struct rt_ctx *ctx)
{
	pr_info("# %s: done() ran on CPUs %*pbl (of %u online), at most %d at once\n",
		ctx->sc->name, cpumask_pr_args(&ctx->done_cpus),
		num_online_cpus(), atomic_read(&ctx->max_active));
	if (ctx->sc->mode == IB_OCQ_FLOW && num_online_cpus() > 1 &&
	    cpumask_weight(&ctx->done_cpus) < 2)
		pr_info("# %s: diagnostic: the flows all ran on one CPU\n",
			ctx->sc->name);
	if (ctx->sc->mode == IB_OCQ_PARALLEL)
		pr_info("# %s: process() ran on CPUs %*pbl, at most %d at once\n",
			ctx->sc->name, cpumask_pr_args(&ctx->process_cpus),
			atomic_read(&ctx->max_processing));
}

static void rt_verdicts(struct rt_ctx *ctx, struct rt_ktap *k)
{
	const char *name = ctx->sc->name;
	struct rt_sum sum = {};
	bool counts = true;
	unsigned int i;
	s64 ms = ktime_ms_delta(ktime_get(), ctx->t0);

	for (i = 0; i < ctx->sc->nr_pairs; i++) {
		rt_sum_queue(&sum, &ctx->pairs[i].sq);
		rt_sum_queue(&sum, &ctx->pairs[i].rq);
		counts &= rt_pair_counts_ok(ctx, &ctx->pairs[i]);
		rt_print_pair(ctx, i);
	}
	pr_info("# %s: %llu ok, %llu flushed, %llu errors in %lld ms (%lld/s)\n",
		name, sum.ok, sum.flushed, sum.errors, ms,
		div64_s64((sum.ok + sum.flushed) * MSEC_PER_SEC, max(ms, 1LL)));
	rt_print_spread(ctx);
	rt_result(k, !sum.bad_order, name, "order");
	rt_result(k, !sum.unsettled, name, "exactly_once");
	rt_result(k, !sum.bad_data && !sum.errors, name, "data");
	rt_result(k, !sum.overlaps && !atomic_read(&ctx->overlaps), name,
		  "no_overlap");
	if (poll_ctx)
		rt_result(k, !atomic_read(&ctx->bad_ctx), name, "context");
	if (ctx->sc->mode == IB_OCQ_PARALLEL)
		rt_result(k,
			  !sum.unprocessed && !atomic_read(&ctx->reprocessed) &&
				  !atomic_read(&ctx->processed_unposted),
			  name, "process_before_commit");
	if (ctx->sc->action == RT_FLUSH)
		counts &= sum.flushed > 0;
	rt_result(k, counts, name, "counts");
	if (rt_lease_action(ctx->sc)) {
		pr_info("# %s: the drains took %lld ms (bound %u), %u returned before their QP's completions\n",
			name, ctx->drain_ms, RT_LEASE_DRAIN_MS,
			ctx->drain_unsettled);
		rt_result(k,
			  ctx->drain_ms <= RT_LEASE_DRAIN_MS &&
				  !ctx->drain_unsettled,
			  name, "drain_after_completions");
	}
	rt_result(k, rt_stats_ok(ctx, &sum), name, "stats");
}

/*
 * lose_every: wait until the OCQ's runs and polls have not moved for
 * RT_IDLE_MS, for a second at most.  An OCQ whose runs stopped, neither
 * paused nor postponing its arm, has armed its CQ (a deferral ends in an
 * arm once its timer's polls find nothing), so the drain's first
 * completion raises an event.
 */
static void rt_wait_idle(struct rt_ctx *ctx)
{
	unsigned long end = jiffies + HZ;
	struct ib_ocq_stats s;
	u64 runs = 0, polls = 0;
	unsigned int quiet = 0;

	if (!ctx->ocq)
		return;
	while (quiet < RT_IDLE_MS / RT_IDLE_STEP_MS &&
	       time_before(jiffies, end)) {
		msleep(RT_IDLE_STEP_MS);
		ib_ocq_get_stats(ctx->ocq, &s);
		quiet = s.runs == runs && s.polls == polls ? quiet + 1 : 0;
		runs = s.runs;
		polls = s.polls;
	}
}

/* ---- scenarios ---- */

/* Stream, act, drain; false if the drain leaked. */
static bool rt_stream(struct rt_ctx *ctx, struct rt_ktap *k)
{
	const char *name = ctx->sc->name;
	bool ok;

	ok = !rt_pollers_start(ctx) && !rt_start(ctx);
	rt_result(k, ok, name, "start");
	/* drain_postponed: the first arm; done() makes the others */
	if (ctx->sc->action == RT_DRAIN_POSTPONED)
		ib_ocq_resume(ctx->ocq);
	if (!ok) {
		/* nothing to wait for: drain what was posted */
	} else if (ctx->sc->action == RT_TO_END) {
		ok = rt_wait_stream(ctx, &ctx->streamed) &&
		     !atomic_read(&ctx->pending);
		rt_result(k, ok, name, "stream");
	} else {
		ok = rt_wait_stream(ctx, &ctx->halfway);
		rt_result(k, ok, name, "halfway");
	}
	/* drain_paused: nobody resumes; drain_postponed: done() stops arming */
	if (ctx->sc->action == RT_DRAIN_PAUSED)
		ib_ocq_pause(ctx->ocq);
	if (ctx->sc->action == RT_FLUSH)
		rt_result(k, !rt_to_error(ctx), name, "to_error");
	rt_result(k, !rt_quiesce(ctx), name, "quiesce");
	if (ctx->sc->action == RT_FLUSH)
		rt_result(k, rt_settle(ctx), name, "flushed");
	/*
	 * lose_every: let a deferral's timer polls run out, so that the CQ is
	 * armed when the drain's first completion comes and raises an event.
	 * The stream raised one at least (its first completion's), and under
	 * a deferral perhaps no more: with lose_every=2 the second is lost,
	 * and found by the watchdog, however few the stream raised.
	 */
	if (lose_every)
		rt_wait_idle(ctx);
	ok = !rt_drain(ctx);
	rt_result(k, ok, name, "drain");
	return !rt_leaked;
}

/* IB_POLL_DIRECT has no engine to process in parallel: -EINVAL. */
static void rt_direct_refuses(struct ib_device *dev, struct rt_ktap *k,
			      const struct rt_scenario *sc)
{
	struct ib_ocq_attr attr = { .mode = sc->mode, .process = rt_process };
	struct ib_cq *cq;

	cq = ib_ocq_alloc_cq(dev, NULL, 64, 0, IB_POLL_DIRECT, &attr);
	if (!IS_ERR(cq))
		ib_ocq_free_cq(cq);
	pr_info("# %s: direct with %s: %ld\n", sc->name,
		rt_mode_names[sc->mode], IS_ERR(cq) ? PTR_ERR(cq) : 0L);
	rt_result(k, PTR_ERR_OR_ZERO(cq) == -EINVAL, sc->name,
		  "direct_refused");
}

static void rt_run_scenario(struct ib_device *dev, struct rt_ktap *k,
			    const struct rt_scenario *sc, u32 sends)
{
	struct rt_ctx *ctx;

	pr_info("# %s: mode %s, %u pair(s), %u SENDs, poll_ctx %s\n", sc->name,
		rt_mode_names[sc->mode], sc->nr_pairs, sends,
		poll_ctx ?: "(ib_ocq_alloc)");
	if (rt_poll_ctx == IB_POLL_DIRECT && sc->mode == IB_OCQ_PARALLEL) {
		rt_direct_refuses(dev, k, sc);
		return;
	}
	ctx = rt_ctx_create(dev, sc, sends);
	rt_result(k, !IS_ERR(ctx), sc->name, "setup");
	if (IS_ERR(ctx))
		return;
	if (!rt_stream(ctx, k))
		return; /* leaked: see rt_drain() */
	rt_verdicts(ctx, k);
	rt_ctx_destroy(ctx);
}

static const struct rt_scenario rt_strict[] = {
	{ "strict", IB_OCQ_STRICT, 1, RT_TO_END },
};

static const struct rt_scenario rt_flow[] = {
	{ "flow", IB_OCQ_FLOW, 4, RT_TO_END },
};

static const struct rt_scenario rt_parallel[] = {
	{ "parallel", IB_OCQ_PARALLEL, 4, RT_TO_END },
};

static const struct rt_scenario rt_drain_all[] = {
	{ "drain_strict", IB_OCQ_STRICT, 1, RT_DRAIN },
	{ "drain_flow", IB_OCQ_FLOW, 4, RT_DRAIN },
	{ "drain_parallel", IB_OCQ_PARALLEL, 4, RT_DRAIN },
};

static const struct rt_scenario rt_flush_all[] = {
	{ "flush_strict", IB_OCQ_STRICT, 1, RT_FLUSH },
	{ "flush_flow", IB_OCQ_FLOW, 4, RT_FLUSH },
	{ "flush_parallel", IB_OCQ_PARALLEL, 4, RT_FLUSH },
};

static const struct rt_scenario rt_drain_paused_all[] = {
	{ "drain_paused_strict", IB_OCQ_STRICT, 1, RT_DRAIN_PAUSED },
	{ "drain_paused_flow", IB_OCQ_FLOW, 4, RT_DRAIN_PAUSED },
	{ "drain_paused_parallel", IB_OCQ_PARALLEL, 4, RT_DRAIN_PAUSED },
	{ "drain_postponed_strict", IB_OCQ_STRICT, 1, RT_DRAIN_POSTPONED },
	{ "drain_postponed_flow", IB_OCQ_FLOW, 4, RT_DRAIN_POSTPONED },
	{ "drain_postponed_parallel", IB_OCQ_PARALLEL, 4, RT_DRAIN_POSTPONED },
};

/* one consumer: CQ order, like IB_OCQ_STRICT */
static const struct rt_scenario rt_poll_helpers_all[] = {
	{ "poll_cq_and_arm", IB_OCQ_STRICT, 1, RT_TO_END, RT_POLL_CQ_AND_ARM },
	{ "poll_and_notify", IB_OCQ_STRICT, 1, RT_TO_END, RT_POLL_AND_NOTIFY },
};

static const struct {
	const char *name;
	const struct rt_scenario *scenarios;
	unsigned int nr;
	u32 sends;
} rt_tests[] = {
	{ "strict", rt_strict, ARRAY_SIZE(rt_strict), RT_COUNT_STREAM },
	{ "flow", rt_flow, ARRAY_SIZE(rt_flow), RT_COUNT_STREAM },
	{ "parallel", rt_parallel, ARRAY_SIZE(rt_parallel), RT_COUNT_STREAM },
	{ "drain", rt_drain_all, ARRAY_SIZE(rt_drain_all), RT_COUNT_MIDWAY },
	{ "flush", rt_flush_all, ARRAY_SIZE(rt_flush_all), RT_COUNT_MIDWAY },
	{ "drain_paused", rt_drain_paused_all, ARRAY_SIZE(rt_drain_paused_all),
	  RT_COUNT_MIDWAY },
	{ "poll_helpers", rt_poll_helpers_all, ARRAY_SIZE(rt_poll_helpers_all),
	  RT_COUNT_STREAM },
};

/* ---- module ---- */

/* Run the selected test; 0 if nothing failed. */
static int rt_run(int idx)
{
	struct rt_ktap k = {};
	unsigned int i;

	pr_info("KTAP version 1\n");
	pr_info("# test=%s device=%s cpus=%u\n", rt_tests[idx].name, device,
		num_online_cpus());
	mutex_lock(&rt_lock);
	for (i = 0; i < rt_tests[idx].nr && !rt_leaked; i++) {
		if (!rt_dev) {
			rt_skip(&k, rt_tests[idx].scenarios[i].name,
				"device not present");
			continue;
		}
		rt_run_scenario(rt_dev, &k, &rt_tests[idx].scenarios[i],
				count ?: rt_tests[idx].sends);
	}
	mutex_unlock(&rt_lock);
	pr_info("1..%u\n", k.nr);
	pr_info("# totals: pass:%u fail:%u skip:%u\n",
		k.nr - k.failed - k.skipped, k.failed, k.skipped);
	/* a leaked drain keeps the module loaded: the failed rmmod tells */
	if (rt_leaked)
		return 0;
	return k.failed ? -EINVAL : 0;
}

static int rt_find_test(void)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(rt_tests); i++)
		if (!strcmp(test, rt_tests[i].name))
			return i;
	return -1;
}

/*
 * poll_ctx= and the OCQ's tuning, for the tests whose OCQ streams; -EINVAL
 * for anything else.
 */
static int rt_parse_params(int idx)
{
	int i;

	if (!poll_ctx && !budget && !defer_usecs && !watchdog_ms &&
	    !lose_every && !pause_every)
		return 0;
	if (rt_tests[idx].scenarios[0].poller != RT_OCQ ||
	    rt_lease_action(&rt_tests[idx].scenarios[0])) {
		pr_err("poll_ctx= and the OCQ's tuning are for strict, flow, parallel, drain, flush\n");
		return -EINVAL;
	}
	if (!poll_ctx)
		return 0;
	i = ocq_test_poll_ctx(poll_ctx);
	if (i < 0) {
		pr_err("unknown poll_ctx '%s'\n", poll_ctx);
		return -EINVAL;
	}
	rt_poll_ctx = i;
	return 0;
}

static int __init rt_init(void)
{
	int idx, ret;

	idx = rt_find_test();
	if (idx < 0) {
		pr_err("unknown test '%s'\n", test);
		return -EINVAL;
	}
	ret = rt_parse_params(idx);
	if (ret)
		return ret;
	ret = ib_register_client(&rt_client);
	if (ret)
		return ret;
	ret = rt_run(idx);
	if (ret)
		goto out_unregister_client;
	return 0;

out_unregister_client:
	ib_unregister_client(&rt_client);
	return ret;
}

static void __exit rt_exit(void)
{
	ib_unregister_client(&rt_client);
	pr_info("# exit\n");
}

module_init(rt_init);
module_exit(rt_exit);
MODULE_DESCRIPTION("ordered completion queues on rxe: order, drain and flush");
MODULE_LICENSE("Dual BSD/GPL");
