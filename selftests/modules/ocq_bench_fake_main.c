// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ocq_bench_fake - the cost of the ordered CQ engine per completion, against
 * the raw ib_poll_cq() drain loop (the floor).
 *
 * The fake provider of fake_provider.c, its CQ a count of ready completions
 * handed out as fast as poll_cq can copy them (%FAKE_COUNTED: no ring, no
 * producer), weak (like rxe), every completion landing at once
 * (%FAKE_PROMPT), the one event raised by this thread (%FAKE_INLINE): no
 * interrupt.  Each round measures, with ktime, the time to deliver
 * completions= completions to a trivial done() (an atomic increment):
 *
 * floor: a plain CQ drained by this thread, ib_poll_cq() in batches of
 *	%BENCH_BATCH, each entry's wr_cqe->done() called in line;
 * strict, flow, parallel: an ordered CQ in that mode (flow: four flows;
 *	parallel: an empty process(); budget= sets ib_ocq_attr.budget); the
 *	completions are made ready, one completion event is raised, and the
 *	thread waits until the last done().
 *
 * Init runs rounds= rounds of the four, in that order (interleaved), prints
 * one line per measurement and unloads nothing: rmmod it after reading.
 *
 *   ocq_bench_fake: round=R mode=M completions=N ns=T ns_per_completion=X.YYY
 *	events=E runs=U polls=P arms=A
 *
 * (E, U, P, A: the engine's counters; 0 for the floor.)  The load fails if a
 * measurement could not be made.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <rdma/ib_ocq.h>
#include <rdma/ib_verbs.h>

#include "fake_provider.h"

/* Entries per ib_poll_cq() of the floor, as a small ULP loop would use */
#define BENCH_BATCH 16
/* CQ size asked for: nothing is stored in the ring, any size would do */
#define BENCH_CQE FAKE_MAX_CQE
/* The fake CQ's semantics: weak, prompt, the event from the filler */
#define BENCH_SEM (FAKE_COUNTED | FAKE_PROMPT | FAKE_INLINE)
/* Flows of the flow mode */
#define BENCH_FLOWS 4
/* Longest wait for one engine round */
#define BENCH_TIMEOUT_MS 120000

static unsigned int completions = 200000;
module_param(completions, uint, 0444);
MODULE_PARM_DESC(completions, "completions per measurement (1000..100000000)");

static unsigned int rounds = 1;
module_param(rounds, uint, 0444);
MODULE_PARM_DESC(rounds, "rounds of floor, strict, flow, parallel (1..100)");

static unsigned int budget;
module_param(budget, uint, 0444);
MODULE_PARM_DESC(budget, "engine budget (ib_ocq_attr.budget), 0: default");

/* The measurement in progress: done() counts towards target. */
struct bench_run {
	struct ib_cqe cqe;
	atomic_t done;
	unsigned int target;
	struct completion all_done;
};

static struct bench_run bench_run;

static void bench_done(struct ib_cq *cq, struct ib_wc *wc)
{
	if (atomic_inc_return(&bench_run.done) == bench_run.target)
		complete(&bench_run.all_done);
}

static void bench_process(struct ib_cq *cq, struct ib_wc *wc)
{
}

static u32 bench_flow_key(struct ib_cq *cq, const struct ib_wc *wc)
{
	return wc->byte_len % BENCH_FLOWS;
}

static void bench_reset(unsigned int n)
{
	atomic_set(&bench_run.done, 0);
	bench_run.target = n;
	reinit_completion(&bench_run.all_done);
}

/* Make n completions ready; return whether an event is due (the CQ was armed). */
static bool bench_fill(struct ib_cq *ibcq, unsigned int n)
{
	const struct ib_wc tmpl = {
		.wr_cqe = &bench_run.cqe,
		.status = IB_WC_SUCCESS,
		.opcode = IB_WC_RECV,
	};

	return fake_cq_fill(to_fake_cq(ibcq), n, &tmpl);
}

static void bench_print(unsigned int round, const char *mode, unsigned int n,
			u64 ns, const struct ib_ocq_stats *s)
{
	u64 milli = div_u64(ns * 1000, n);

	pr_info("round=%u mode=%s completions=%u ns=%llu ns_per_completion=%llu.%03llu events=%llu runs=%llu polls=%llu arms=%llu\n",
		round, mode, n, ns, div_u64(milli, 1000), milli % 1000,
		s ? (u64)s->events : 0, s ? (u64)s->runs : 0,
		s ? (u64)s->polls : 0, s ? (u64)s->arms : 0);
}

/* The floor: ib_poll_cq() in batches, done() in line. */
static int bench_floor(struct ib_device *dev, unsigned int round)
{
	struct ib_cq_init_attr attr = { .cqe = BENCH_CQE };
	struct ib_wc wc[BENCH_BATCH];
	struct ib_cq *cq;
	ktime_t t0;
	u64 ns;
	int n, i;

	cq = ib_create_cq(dev, NULL, NULL, NULL, &attr);
	if (IS_ERR(cq))
		return PTR_ERR(cq);
	bench_reset(completions);
	t0 = ktime_get();
	bench_fill(cq, completions);
	while ((n = ib_poll_cq(cq, BENCH_BATCH, wc)) > 0)
		for (i = 0; i < n; i++)
			wc[i].wr_cqe->done(cq, &wc[i]);
	ns = ktime_to_ns(ktime_sub(ktime_get(), t0));
	ib_destroy_cq(cq);
	if (atomic_read(&bench_run.done) != completions)
		return -EIO;
	bench_print(round, "floor", completions, ns, NULL);
	return 0;
}

static int bench_engine(struct ib_device *dev, unsigned int round,
			enum ib_ocq_mode mode, const char *name)
{
	struct ib_ocq_attr attr = { .mode = mode, .budget = budget };
	struct ib_ocq_stats stats;
	struct ib_ocq *ocq;
	struct ib_cq *cq;
	ktime_t t0;
	u64 ns;
	int ret = 0;

	if (mode == IB_OCQ_FLOW) {
		attr.flow_key = bench_flow_key;
		attr.nr_domains = BENCH_FLOWS;
	}
	if (mode == IB_OCQ_PARALLEL)
		attr.process = bench_process;
	ocq = ib_ocq_alloc(dev, &bench_run, BENCH_CQE, 0, &attr);
	if (IS_ERR(ocq))
		return PTR_ERR(ocq);
	cq = ib_ocq_cq(ocq);
	bench_reset(completions);
	t0 = ktime_get();
	/*
	 * Either the ordered CQ's first run is still pending and will find
	 * the completions, or it has armed the CQ: then this is the one event.
	 */
	if (bench_fill(cq, completions))
		fake_direct(to_fake_cq(cq));
	if (!wait_for_completion_timeout(&bench_run.all_done,
					 msecs_to_jiffies(BENCH_TIMEOUT_MS)))
		ret = -ETIMEDOUT;
	ns = ktime_to_ns(ktime_sub(ktime_get(), t0));
	ib_ocq_get_stats(ocq, &stats);
	ib_ocq_free(ocq);
	if (ret)
		return ret;
	bench_print(round, name, completions, ns, &stats);
	return 0;
}

static int bench_round(struct ib_device *dev, unsigned int round)
{
	int ret;

	ret = bench_floor(dev, round);
	if (!ret)
		ret = bench_engine(dev, round, IB_OCQ_STRICT, "strict");
	if (!ret)
		ret = bench_engine(dev, round, IB_OCQ_FLOW, "flow");
	if (!ret)
		ret = bench_engine(dev, round, IB_OCQ_PARALLEL, "parallel");
	return ret;
}

static int __init bench_init(void)
{
	struct fake_dev *fdev;
	unsigned int r;
	int ret = 0;

	if (completions < 1000 || completions > 100000000 || !rounds ||
	    rounds > 100)
		return -EINVAL;
	bench_run.cqe.done = bench_done;
	init_completion(&bench_run.all_done);
	fdev = fake_dev_alloc(NULL);
	if (!fdev)
		return -ENOMEM;
	fdev->sem = BENCH_SEM;
	for (r = 1; r <= rounds && !ret; r++)
		ret = bench_round(&fdev->ibdev, r);
	ib_dealloc_device(&fdev->ibdev);
	if (ret)
		pr_err("measurement failed: %d\n", ret);
	return ret;
}

static void __exit bench_exit(void)
{
}

module_init(bench_init);
module_exit(bench_exit);
MODULE_DESCRIPTION("ordered CQ engine cost against the poll loop floor");
MODULE_LICENSE("Dual BSD/GPL");
