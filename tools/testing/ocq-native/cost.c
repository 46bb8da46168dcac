// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ocq_cost: what ordering costs per completion, counted, not timed.
 *
 * One process, one thread, nothing timed and nothing random: a run executes
 * the same instructions every time, so that what callgrind counts of it
 * (cost.sh) and the locked instructions counted here are exact.
 *
 *   ocq_cost PATH N [--batch B] [--flows F] [--cpus C] [--cqe Q]
 *		     [--per-event E] [--dropin]
 *
 * PATH is raw, strict, flow or parallel: N completions go through that
 * consumer; or lookup: N of the drop-in path's finds of its OCQ, alone.
 *
 *  - The provider: a CQ whose poll_cq copies completions from an array
 *    into the caller's array, as a provider copies its CQEs out (no lock:
 *    nothing else runs).  The array holds a fixed pattern of COST_PATTERN
 *    completions, the QPs taken in turn (--flows, 8 by default), repeated:
 *    filling the CQ with N completions costs nothing per completion, so a
 *    run with N = 0 (set-up and teardown alone) can be subtracted.
 *    IBA-weak arming: an arm covers what is added after it,
 *    IB_CQ_REPORT_MISSED_EVENTS returns 1 while the CQ is not empty; a
 *    CQ armed when completions are added raises one event.
 *  - The host: schedule() appends the unit's work item to a FIFO (a
 *    pending item is not queued twice, as queue_work() does not), and the
 *    main loop delivers the provider's event (the completion handler) or
 *    runs the next item, until nothing is left.  No timers: no deferral,
 *    suspension, lease or watchdog.
 *  - The ULP: done() and process() count, and nothing else.
 *  - raw: the classic loop.  The completion handler queues one work item,
 *    which polls batches of --batch (16) calling done() for each until the
 *    CQ is empty, arms with IB_CQ_NEXT_COMP | IB_CQ_REPORT_MISSED_EVENTS
 *    and polls again while that returns > 0.
 *  - strict, flow, parallel: drivers/infiniband/core/ocq_engine.c as it
 *    is, built with its OCQ_BATCH (printed), --cpus (4) domains or
 *    workers, a CQ of --cqe (1024) entries, which sizes its rings.  The
 *    completion handler calls ocq_engine_event(); with --dropin it first
 *    finds the engine from the CQ as ocq.c's ib_ocq_of() does: the CQ's
 *    wc pointer, read with an acquire, is the engine's own wcs[], and the
 *    CQ's comp_handler is compared with ocq's (no table, no lock).
 *
 * The CQ starts empty and armed (the engine's first run, or the raw loop's
 * first pass, drains nothing and arms it); then N completions are added,
 * all at once (one event) or --per-event E at a time, the host running
 * until idle after each event.
 *
 * The count build (-DOCQ_NATIVE_COUNT) counts, in the engine, every
 * locked instruction its shims stand for on x86 (include/ocq_native.h):
 * atomic RMWs and smp_mb().  The host counts the least of those the
 * kernel's workqueue pays per queue_work() and per work item run: the
 * PENDING bit's test_and_set_bit() and the pool lock to queue; the pool
 * lock again and set_work_pool_and_clear_pending()'s smp_mb() to run.
 * The raw loop and the engine pay that alike.  And every marked write
 * (WRITE_ONCE(), smp_store_release(), atomic_set(), RMWs) is given to a
 * tracker of 64-byte lines: a write to a line that another unit (the
 * completion handler's context, the CQ unit, each domain, worker or the
 * commit unit; the raw loop's work item) wrote last counts as a shared
 * line written, as it would move that line between CPUs if every unit ran
 * on its own.  Plain stores (ring slots) are not seen.
 *
 * The last line printed is "cost: key=value ...": the counts of the whole
 * run, for cost.sh to subtract and divide.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ocq_native.h>
#include <linux/atomic.h>
#include <linux/rcupdate.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_ocq.h>
#include "ocq_engine.h"

/* completions in the provider's array (a power of two); flows divide it */
#define COST_PATTERN 4096
#define COST_MAX_FLOWS 64
#define COST_MAX_BATCH 64

/* the unit a write comes from: a unit of the engine, or one of these */
#define COST_UNIT_SETUP (-2)	/* set-up, feeding, teardown: not tracked */
#define COST_UNIT_IRQ (-1)	/* the completion handler's context */

enum cost_path { P_RAW, P_STRICT, P_FLOW, P_PARALLEL, P_LOOKUP };

static const char *const path_names[] = {
	[P_RAW] = "raw",
	[P_STRICT] = "strict",
	[P_FLOW] = "flow",
	[P_PARALLEL] = "parallel",
	[P_LOOKUP] = "lookup",
};

/* --- the counts --- */

struct cost_counts {
	unsigned long rmw;	/* the engine's atomic RMWs */
	unsigned long mb;	/* the engine's smp_mb() */
	unsigned long host_rmw;	/* the host's, modelled on the workqueue */
	unsigned long host_mb;
	unsigned long shared;	/* writes to a line another unit wrote last */
	unsigned long lines;	/* lines written by two units or more */
	unsigned long writes;	/* marked writes seen */
};

static struct cost_counts counts;
static int cost_unit = COST_UNIT_SETUP;

#ifdef OCQ_NATIVE_COUNT
#define COST_HOST_RMW(n) (counts.host_rmw += (n))
#define COST_HOST_MB() (counts.host_mb++)

/* lines written, by line address; open addressing, never full here */
#define LINE_SLOTS (1u << 16)

struct line_slot {
	uintptr_t line;	/* address >> 6, 0: free */
	int owner;	/* the unit that wrote it last */
	bool shared;	/* written by two units */
};

static struct line_slot lines[LINE_SLOTS];

void ocq_native_count_rmw(const volatile void *p)
{
	counts.rmw++;
}

void ocq_native_count_mb(void)
{
	counts.mb++;
}

void ocq_native_count_write(const volatile void *p)
{
	uintptr_t line = ((uintptr_t)p >> 6) | ((uintptr_t)1 << 63);
	u32 i = (u32)((line * 0x9e3779b97f4a7c15ull) >> 48);
	struct line_slot *s;

	if (cost_unit == COST_UNIT_SETUP)
		return;
	counts.writes++;
	for (;; i = (i + 1) & (LINE_SLOTS - 1)) {
		s = &lines[i & (LINE_SLOTS - 1)];
		if (!s->line || s->line == line)
			break;
	}
	if (!s->line) {
		s->line = line;
		s->owner = cost_unit;
		return;
	}
	if (s->owner != cost_unit) {
		counts.shared++;
		if (!s->shared)
			counts.lines++;
		s->shared = true;
		s->owner = cost_unit;
	}
}
#else
#define COST_HOST_RMW(n) ((void)0)
#define COST_HOST_MB() ((void)0)
#endif

/* --- the shims' runtime: one thread --- */

int ocq_native_bug;
int ocq_native_jitter_on;
static long warnings, allocations, rcu_nesting;

void ocq_native_jitter(void)
{
}

void ocq_native_warn(const char *file, int line, const char *cond)
{
	warnings++;
	fprintf(stderr, "WARNING: %s:%d: %s\n", file, line, cond);
}

long ocq_native_warnings(void)
{
	return warnings;
}

/* as the kernel's: a nesting count, no atomic */
void ocq_native_rcu_read_lock(void)
{
	rcu_nesting++;
}

void ocq_native_rcu_read_unlock(void)
{
	rcu_nesting--;
}

void ocq_native_synchronize_rcu(void)
{
	if (rcu_nesting)
		ocq_native_warn(__FILE__, __LINE__, "synchronize_rcu() in a reader");
}

void *ocq_native_alloc(size_t n, size_t size)
{
	size_t bytes = ((n ? n : 1) * (size ? size : 1) + 63) & ~(size_t)63;
	void *p = aligned_alloc(64, bytes);

	if (p) {
		memset(p, 0, bytes);
		allocations++;
	}
	return p;
}

void ocq_native_free(const void *p)
{
	if (!p)
		return;
	allocations--;
	free((void *)p);
}

long ocq_native_live_allocations(void)
{
	return allocations;
}

/* --- the provider --- */

struct cost_cq {
	struct ib_cq cq;
	struct ib_device dev;
	struct ib_wc *pattern;	/* COST_PATTERN completions */
	u64 added, polled;	/* completions put in, taken out */
	bool armed;
	unsigned int events;	/* raised, not yet delivered */
	u64 polls, arms, raised;
};

struct cost_qp {
	struct ib_qp qp;
	struct ib_cqe cqe;
};

struct cost {
	enum cost_path path;
	unsigned int batch, flows, cpus, cqe, per_event;
	bool dropin;
	u64 n;

	struct cost_cq cq;
	struct cost_qp qps[COST_MAX_FLOWS];
	struct ocq_engine e;
	struct ocq_engine_ops ops;
	bool engine;

	/* the host: one work item per unit, and the raw loop's */
	struct cost_work *works;
	unsigned int nr_works;
	struct cost_work *head, *tail;
	unsigned long queued, ran, requeued_pending;

	/* the ULP */
	u64 done, processed;

	/* the drop-in path's model of the CQ's wc pointer */
	struct cost_table *table;
	unsigned long found;
};

static struct cost_cq *cost_cq_of(struct ib_cq *cq)
{
	return (struct cost_cq *)cq;
}

static int cost_poll_cq(struct ib_cq *ibcq, int n, struct ib_wc *wc)
{
	struct cost_cq *cq = cost_cq_of(ibcq);
	int k = 0;

	cq->polls++;
	while (k < n && cq->polled != cq->added) {
		wc[k++] = cq->pattern[cq->polled & (COST_PATTERN - 1)];
		cq->polled++;
	}
	return k;
}

static int cost_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct cost_cq *cq = cost_cq_of(ibcq);

	cq->arms++;
	cq->armed = true;
	return (flags & IB_CQ_REPORT_MISSED_EVENTS) && cq->polled != cq->added;
}

/* completions arrive: one event if the CQ was armed */
static void cost_cq_add(struct cost_cq *cq, u64 n)
{
	cq->added += n;
	if (n && cq->armed) {
		cq->armed = false;
		cq->events++;
		cq->raised++;
	}
}

/* --- the ULP --- */

static struct cost *cost_of_cq(struct ib_cq *cq)
{
	return cq->cq_context;
}

static void cost_done(struct ib_cq *cq, struct ib_wc *wc)
{
	cost_of_cq(cq)->done++;
}

static void cost_process(struct ib_cq *cq, struct ib_wc *wc)
{
	cost_of_cq(cq)->processed++;
}

/* --- the host: a FIFO of work items --- */

struct cost_work {
	struct cost_work *next;
	bool pending;
	int unit;	/* the engine's unit, or 0 for the raw loop */
};

/* queue_work(): test_and_set_bit(PENDING), then the pool lock to insert */
static void host_queue(struct cost *c, struct cost_work *w)
{
	COST_HOST_RMW(1);
	if (w->pending) {
		c->requeued_pending++;
		return;
	}
	COST_HOST_RMW(1);
	w->pending = true;
	w->next = NULL;
	if (c->tail)
		c->tail->next = w;
	else
		c->head = w;
	c->tail = w;
	c->queued++;
}

static struct cost *cost_of_engine(struct ocq_engine *e)
{
	return (struct cost *)((char *)e - offsetof(struct cost, e));
}

static void host_schedule(struct ocq_engine *e, unsigned int unit)
{
	struct cost *c = cost_of_engine(e);

	host_queue(c, &c->works[unit]);
}

static void raw_run(struct cost *c)
{
	struct ib_wc wcs[COST_MAX_BATCH];
	struct ib_cq *cq = &c->cq.cq;
	int i, n;

	do {
		do {
			n = ib_poll_cq(cq, c->batch, wcs);
			for (i = 0; i < n; i++)
				wcs[i].wr_cqe->done(cq, &wcs[i]);
		} while (n > 0);
	} while (ib_req_notify_cq(cq, IB_CQ_NEXT_COMP |
					      IB_CQ_REPORT_MISSED_EVENTS) > 0);
}

/* --- the drop-in path: ocq.c's ib_ocq_of() --- */

/*
 * What the drop-in's completion handler reads to find its OCQ: the CQ's
 * wc pointer, which ocq.c points at the engine's own wcs[] (published with
 * a release), and the CQ's comp_handler, compared with ocq's.  No table.
 */
struct cost_table {
	struct ib_wc *wc;	/* the CQ's cq->wc */
};

static void comp_handler(struct ib_cq *cq, void *ctx);

static __attribute__((noinline)) struct ocq_engine *
cost_lookup(struct cost_table *t, const struct ib_cq *cq)
{
	struct ib_wc *wcs = __atomic_load_n(&t->wc, __ATOMIC_ACQUIRE);

	if (!wcs)
		return NULL;
	if (cq->comp_handler == comp_handler)
		return (struct ocq_engine *)((char *)wcs -
					      offsetof(struct ocq_engine, wcs));
	return NULL;
}

static struct cost_table *cost_table_make(struct cost *c)
{
	struct cost_table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	__atomic_store_n(&t->wc, c->e.wcs, __ATOMIC_RELEASE);
	return t;
}

static void cost_table_free(struct cost_table *t)
{
	free(t);
}

/* --- the completion handler and the main loop --- */

static void comp_handler(struct ib_cq *cq, void *ctx)
{
	struct cost *c = ctx;

	if (c->path == P_RAW) {
		host_queue(c, &c->works[0]);
		return;
	}
	if (c->dropin) {
		struct ocq_engine *e = cost_lookup(c->table, cq);

		if (e) {
			c->found++;
			ocq_engine_event(e);
		}
		return;
	}
	ocq_engine_event(&c->e);
}

/* deliver events and run work items until there is nothing left to do */
static void host_run(struct cost *c)
{
	struct cost_work *w;

	for (;;) {
		if (c->cq.events) {
			c->cq.events--;
			cost_unit = COST_UNIT_IRQ;
			c->cq.cq.comp_handler(&c->cq.cq, c->cq.cq.cq_context);
			continue;
		}
		w = c->head;
		if (!w)
			break;
		c->head = w->next;
		if (!c->head)
			c->tail = NULL;
		/* the worker: the pool lock, then clear PENDING and smp_mb() */
		COST_HOST_RMW(1);
		COST_HOST_MB();
		w->pending = false;
		c->ran++;
		cost_unit = w->unit;
		if (c->path == P_RAW)
			raw_run(c);
		else
			ocq_engine_run(&c->e, w->unit);
	}
	cost_unit = COST_UNIT_SETUP;
}

static int cost_setup(struct cost *c)
{
	struct ib_ocq_attr attr = {};
	unsigned int i;
	int ret;

	c->cq.pattern = calloc(COST_PATTERN, sizeof(*c->cq.pattern));
	if (!c->cq.pattern)
		return -ENOMEM;
	for (i = 0; i < c->flows; i++) {
		c->qps[i].qp.qp_num = 0x100 + i;
		c->qps[i].cqe.done = cost_done;
	}
	for (i = 0; i < COST_PATTERN; i++) {
		struct ib_wc *wc = &c->cq.pattern[i];
		struct cost_qp *qp = &c->qps[i % c->flows];

		wc->wr_cqe = &qp->cqe;
		wc->status = IB_WC_SUCCESS;
		wc->opcode = IB_WC_RECV;
		wc->byte_len = 64;
		wc->qp = &qp->qp;
	}
	c->cq.dev.ops.driver_id = RDMA_DRIVER_UNKNOWN;
	c->cq.dev.ops.poll_cq = cost_poll_cq;
	c->cq.dev.ops.req_notify_cq = cost_req_notify_cq;
	c->cq.cq.device = &c->cq.dev;
	c->cq.cq.comp_handler = comp_handler;
	c->cq.cq.cq_context = c;
	c->cq.cq.cqe = c->cqe;

	if (c->path == P_RAW) {
		c->nr_works = 1;
	} else {
		c->ops.schedule = host_schedule;
		attr.mode = c->path == P_FLOW	  ? IB_OCQ_FLOW :
			    c->path == P_PARALLEL ? IB_OCQ_PARALLEL :
						    IB_OCQ_STRICT;
		if (c->path == P_PARALLEL)
			attr.process = cost_process;
		ret = ocq_engine_init(&c->e, &c->cq.cq, &attr, c->cpus,
				      &c->ops);
		if (ret)
			return ret;
		c->engine = true;
		c->nr_works = c->e.nr_units;
	}
	c->works = calloc(c->nr_works, sizeof(*c->works));
	if (!c->works)
		return -ENOMEM;
	for (i = 0; i < c->nr_works; i++)
		c->works[i].unit = i;
	if (c->dropin || c->path == P_LOOKUP) {
		c->table = cost_table_make(c);
		if (!c->table)
			return -ENOMEM;
	}
	return 0;
}

static int cost_run(struct cost *c)
{
	u64 left = c->n;

	/* the CQ empty and armed: the engine starts paused, resume arms it */
	if (c->path == P_RAW)
		host_queue(c, &c->works[0]);
	else
		ocq_engine_resume(&c->e);
	host_run(c);
	if (!c->cq.armed) {
		fprintf(stderr, "cost: the CQ is not armed after the first run\n");
		return 1;
	}
	while (left) {
		u64 k = c->per_event && c->per_event < left ? c->per_event : left;

		cost_cq_add(&c->cq, k);
		left -= k;
		host_run(c);
		if (c->cq.polled != c->cq.added || !c->cq.armed) {
			fprintf(stderr, "cost: idle with %llu completions in the CQ, %s\n",
				(unsigned long long)(c->cq.added - c->cq.polled),
				c->cq.armed ? "armed" : "not armed");
			return 1;
		}
	}
	return 0;
}

static void cost_teardown(struct cost *c)
{
	if (c->engine) {
		ocq_engine_disable(&c->e);
		ocq_engine_destroy(&c->e);
	}
	free(c->works);
	free(c->cq.pattern);
	cost_table_free(c->table);
}

/* N finds of our engine from its CQ, as the drop-in's handler does */
static int cost_lookups(struct cost *c)
{
	struct ocq_engine *volatile sink;
	u64 i;

	for (i = 0; i < c->n; i++) {
		sink = cost_lookup(c->table, &c->cq.cq);
		if (sink)
			c->found++;
	}
	return c->found == c->n ? 0 : 1;
}

static unsigned long arg_num(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 0);

	if (*end) {
		fprintf(stderr, "cost: not a number: %s\n", s);
		exit(2);
	}
	return v;
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s raw|strict|flow|parallel|lookup N [--batch B] [--flows F]\n"
		"       [--cpus C] [--cqe Q] [--per-event E] [--dropin]\n",
		prog);
	exit(2);
}

int main(int argc, char **argv)
{
	static struct cost c;
	unsigned int i;
	int bad;

	if (argc < 3)
		usage(argv[0]);
	for (i = 0; i < sizeof(path_names) / sizeof(path_names[0]); i++)
		if (!strcmp(argv[1], path_names[i]))
			break;
	if (i == sizeof(path_names) / sizeof(path_names[0]))
		usage(argv[0]);
	c.path = i;
	c.n = arg_num(argv[2]);
	c.batch = 16;
	c.flows = 8;
	c.cpus = 4;
	c.cqe = 1024;
	for (i = 3; i < (unsigned int)argc; i++) {
		const char *o = argv[i];

		if (!strcmp(o, "--dropin")) {
			c.dropin = true;
			continue;
		}
		if (i + 1 == (unsigned int)argc)
			usage(argv[0]);
		if (!strcmp(o, "--batch"))
			c.batch = arg_num(argv[++i]);
		else if (!strcmp(o, "--flows"))
			c.flows = arg_num(argv[++i]);
		else if (!strcmp(o, "--cpus"))
			c.cpus = arg_num(argv[++i]);
		else if (!strcmp(o, "--cqe"))
			c.cqe = arg_num(argv[++i]);
		else if (!strcmp(o, "--per-event"))
			c.per_event = arg_num(argv[++i]);
		else
			usage(argv[0]);
	}
	if (!c.batch || c.batch > COST_MAX_BATCH || !c.flows ||
	    c.flows > COST_MAX_FLOWS || !c.cpus ||
	    (c.dropin && c.path == P_RAW)) {
		fprintf(stderr, "cost: bad arguments\n");
		return 2;
	}
	if (cost_setup(&c)) {
		fprintf(stderr, "cost: set-up failed\n");
		return 1;
	}
	bad = c.path == P_LOOKUP ? cost_lookups(&c) : cost_run(&c);
	if (c.path != P_LOOKUP &&
	    (c.done != c.n || (c.path == P_PARALLEL && c.processed != c.n))) {
		fprintf(stderr, "cost: %llu done(), %llu process() for %llu\n",
			(unsigned long long)c.done,
			(unsigned long long)c.processed,
			(unsigned long long)c.n);
		bad = 1;
	}
	if (c.requeued_pending) {
		fprintf(stderr, "cost: %lu schedules of a pending unit\n",
			c.requeued_pending);
		bad = 1;
	}
	cost_teardown(&c);
	if (warnings || allocations) {
		fprintf(stderr, "cost: %ld warnings, %ld allocations left\n",
			warnings, allocations);
		bad = 1;
	}
	printf("cost: path=%s n=%llu batch=%u ocq_batch=%u flows=%u cpus=%u "
	       "cqe=%u per_event=%u dropin=%d counted=%d done=%llu "
	       "processed=%llu found=%lu events=%llu polls=%llu arms=%llu "
	       "queued=%lu ran=%lu rmw=%lu mb=%lu host_rmw=%lu host_mb=%lu "
	       "shared=%lu lines=%lu writes=%lu\n",
	       path_names[c.path], (unsigned long long)c.n, c.batch, OCQ_BATCH,
	       c.flows, c.cpus, c.cqe, c.per_event, c.dropin,
#ifdef OCQ_NATIVE_COUNT
	       1,
#else
	       0,
#endif
	       (unsigned long long)c.done, (unsigned long long)c.processed,
	       c.found, (unsigned long long)c.cq.raised,
	       (unsigned long long)c.cq.polls, (unsigned long long)c.cq.arms,
	       c.queued, c.ran, counts.rmw, counts.mb, counts.host_rmw,
	       counts.host_mb, counts.shared, counts.lines, counts.writes);
	return bad;
}
