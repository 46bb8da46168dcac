// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The harness: one fake CQ consumed by the engine (strict, flow or
 * parallel) or by the raw drain loop, on the host's work queue.
 *
 * The ULP's checks use relaxed atomics only: they never order anything
 * for ThreadSanitizer, so they cannot hide a race of the engine behind a
 * happens-before edge of their own.  A broken serialisation shows up as a
 * property failure (two done() calls of one domain at once, a completion
 * out of order, done twice or never).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include "harness.h"

#define RLX __ATOMIC_RELAXED

#define ld(p) __atomic_load_n((p), RLX)
#define st(p, v) __atomic_store_n((p), (v), RLX)
#define xchg(p, v) __atomic_exchange_n((p), (v), RLX)
#define inc(p) __atomic_fetch_add((p), 1, RLX)
#define dec(p) __atomic_fetch_sub((p), 1, RLX)

static void note_max(int *max, int v)
{
	int m = ld(max);

	while (v > m && !__atomic_compare_exchange_n(max, &m, v, false, RLX,
						     RLX))
		;
}

void harness_fail(struct harness *h, const char *fmt, ...)
{
	va_list ap;

	if (inc(&h->failures) >= 10)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "FAIL: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

u64 harness_delivered(struct harness *h)
{
	return ld(&h->delivered);
}

static struct harness *harness_of(struct ib_cq *cq)
{
	return cq->cq_context;
}

static struct req *req_of(struct ib_wc *wc)
{
	return (struct req *)wc->wr_cqe;
}

static bool wc_unposted(const struct ib_wc *wc)
{
	return wc->status != IB_WC_SUCCESS;
}

/* --- the ULP --- */

/* done() of a domain that must never run concurrently, in order @seq */
static void check_serial(struct harness *h, int *in_done, u32 *expect,
			 u32 seq, const char *what)
{
	u32 want;

	if (xchg(in_done, 1))
		harness_fail(h, "%s: two done() calls at once", what);
	want = ld(expect);
	if (seq != want)
		harness_fail(h, "%s: done() of #%u, expected #%u", what, seq,
			     want);
	st(expect, seq + 1);
}

static void ulp_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct harness *h = harness_of(cq);
	struct req *r = req_of(wc);
	struct qp_ctx *q = &h->qps[r->qp];
	int d;

	if (ld(&h->torn_down))
		harness_fail(h, "done() after teardown");
	if (inc(&r->done))
		harness_fail(h, "qp %u #%u: done() twice", r->qp, r->qseq);
	d = inc(&h->domains_in_done) + 1;
	note_max(&h->max_domains_in_done, d);
	switch (h->cfg.consumer) {
	case C_FLOW:
		check_serial(h, &q->in_done, &q->expect, r->qseq, "flow qp");
		busy_wait_ns(h->cfg.cost_ns);
		st(&q->in_done, 0);
		break;
	case C_PARALLEL:
		if (ld(&r->processed) != !wc_unposted(wc))
			harness_fail(h, "qp %u #%u: done() after %d process()",
				     r->qp, r->qseq, ld(&r->processed));
		check_serial(h, &h->in_done, &h->expect, wc->byte_len,
			     "parallel");
		st(&h->in_done, 0);
		break;
	default:
		check_serial(h, &h->in_done, &h->expect, wc->byte_len,
			     h->cfg.consumer == C_RAW ? "raw" : "strict");
		busy_wait_ns(h->cfg.cost_ns);
		st(&h->in_done, 0);
		break;
	}
	dec(&h->domains_in_done);
	/* ib_ocq_pause() from done(): "any context, including done()" */
	if (h->cfg.pause_every && !(r->qseq % h->cfg.pause_every))
		ocq_engine_pause(&h->e);
	if (inc(&h->delivered) + 1 == h->cfg.completions) {
		h->t_end = now_ns();
		pthread_mutex_lock(&h->lock);
		h->signalled = true;
		pthread_cond_signal(&h->all_done);
		pthread_mutex_unlock(&h->lock);
	}
}

static void ulp_process(struct ib_cq *cq, struct ib_wc *wc)
{
	struct harness *h = harness_of(cq);
	struct req *r = req_of(wc);
	int n;

	if (wc_unposted(wc))
		harness_fail(h, "process() of a failed completion");
	if (inc(&r->processed))
		harness_fail(h, "qp %u #%u: process() twice", r->qp, r->qseq);
	if (ld(&r->done))
		harness_fail(h, "qp %u #%u: process() after done()", r->qp,
			     r->qseq);
	n = inc(&h->in_process) + 1;
	note_max(&h->max_process, n);
	busy_wait_ns(h->cfg.cost_ns);
	dec(&h->in_process);
}

/* two QPs per flow: a flow holds several QPs, each QP in one flow */
static u32 ulp_flow_key(struct ib_cq *cq, const struct ib_wc *wc)
{
	struct harness *h = harness_of(cq);

	if (wc_unposted(wc))
		harness_fail(h, "flow_key() of a failed completion");
	return wc->qp->qp_num / 2;
}

/* --- the raw drain loop: poll until empty, done(), arm, look again --- */

static void raw_run(struct harness *h)
{
	struct ib_wc wcs[OCQ_BATCH];
	struct ib_cq *cq = &h->fcq.cq;
	int i, n;

	do {
		do {
			n = ib_poll_cq(cq, OCQ_BATCH, wcs);
			for (i = 0; i < n; i++)
				wcs[i].wr_cqe->done(cq, &wcs[i]);
		} while (n > 0);
	} while (ib_req_notify_cq(cq, IB_CQ_NEXT_COMP |
					      IB_CQ_REPORT_MISSED_EVENTS) > 0);
}

/* --- the host --- */

static struct harness *harness_of_engine(struct ocq_engine *e)
{
	return (struct harness *)((char *)e - offsetof(struct harness, e));
}

static void host_schedule(struct ocq_engine *e, unsigned int unit)
{
	struct harness *h = harness_of_engine(e);
	int ret;

	if (unit >= h->nr_uw) {
		harness_fail(h, "schedule of unit %u of %u", unit, h->nr_uw);
		return;
	}
	ret = wq_queue(&h->wq, &h->uw[unit].w);
	/* the engine schedules a unit once per run: never a pending one */
	if (ret == WQ_WAS_PENDING)
		harness_fail(h, "unit %u scheduled while pending", unit);
}

static void host_lease(struct ocq_engine *e)
{
	struct harness *h = harness_of_engine(e);

	/* never after ocq_engine_disable() returned and the runs were cancelled */
	if (ld(&h->lease_stopped)) {
		harness_fail(h, "lease asked for after teardown");
		return;
	}
	tick_request(&h->lease);
}

static bool lease_tick(void *arg)
{
	struct harness *h = arg;

	return ocq_engine_lease(&h->e);
}

static bool watchdog_tick(void *arg)
{
	struct harness *h = arg;

	ocq_engine_watchdog(&h->e);
	return true;
}

static void host_work(struct work *w)
{
	struct unit_work *uw = (struct unit_work *)w;
	struct harness *h = uw->h;

	if (h->cfg.consumer == C_RAW) {
		raw_run(h);
		return;
	}
	/* in the kernel: a use after free of the ib_ocq */
	if (!ld(&h->engine_live)) {
		harness_fail(h, "run of unit %u after ocq_engine_destroy()",
			     uw->unit);
		return;
	}
	/* a run exists exactly while its unit's OCQ_RUN is set */
	if (!(atomic_read(&h->e.units[uw->unit].gate) & OCQ_RUN))
		harness_fail(h, "run of unit %u without OCQ_RUN", uw->unit);
	/*
	 * A run that begins after the disable may begin after the CQ is
	 * destroyed (in the kernel): it must not poll.
	 */
	if (ld(&h->disabled)) {
		u64 polls = READ_ONCE(h->e.polls);

		ocq_engine_run(&h->e, uw->unit);
		if (READ_ONCE(h->e.polls) != polls)
			harness_fail(h, "a run of unit %u that began after the disable polled",
				     uw->unit);
		return;
	}
	ocq_engine_run(&h->e, uw->unit);
}

static void *timer_thread(void *arg)
{
	struct harness *h = arg;
	struct htimer *t = &h->timer;
	struct timespec ts;

	pthread_mutex_lock(&t->lock);
	while (!t->stop) {
		u64 now = now_ns();

		if (!t->deadline) {
			pthread_cond_wait(&t->cond, &t->lock);
			continue;
		}
		if (now < t->deadline) {
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += (long)(t->deadline - now);
			ts.tv_sec += ts.tv_nsec / 1000000000;
			ts.tv_nsec %= 1000000000;
			pthread_cond_timedwait(&t->cond, &t->lock, &ts);
			continue;
		}
		t->deadline = 0;
		t->fires++;
		pthread_mutex_unlock(&t->lock);
		/* ib_ocq_defer_fire(): queue the run only if the timer took it */
		if (ocq_engine_timer(&h->e)) {
			host_schedule(&h->e, OCQ_UNIT_CQ);
			pthread_mutex_lock(&t->lock);
			t->takes++;
		} else {
			pthread_mutex_lock(&t->lock);
		}
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

static void timer_start(struct harness *h, unsigned int us)
{
	struct htimer *t = &h->timer;

	pthread_mutex_lock(&t->lock);
	if (t->stop)
		harness_fail(h, "timer started after teardown cancelled it");
	t->deadline = now_ns() + us * 1000ull;
	pthread_cond_signal(&t->cond);
	pthread_mutex_unlock(&t->lock);
}

/* hrtimer_cancel(): no callback under way or to come when it returns */
static void timer_cancel(struct harness *h)
{
	struct htimer *t = &h->timer;

	if (!h->timer_live)
		return;
	pthread_mutex_lock(&t->lock);
	t->stop = true;
	pthread_cond_signal(&t->cond);
	pthread_mutex_unlock(&t->lock);
	pthread_join(t->thread, NULL);
	h->timer_live = false;
}

static void host_defer(struct ocq_engine *e)
{
	struct harness *h = harness_of_engine(e);

	timer_start(h, h->cfg.defer_us);
}

static void host_suspend(struct ocq_engine *e)
{
	struct harness *h = harness_of_engine(e);

	timer_start(h, h->cfg.suspend_us);
}

static void comp_handler(struct ib_cq *cq, void *ctx)
{
	struct harness *h = ctx;

	(void)cq;
	if (h->cfg.consumer == C_RAW)
		wq_queue(&h->wq, &h->raw.w);
	else
		ocq_engine_event(&h->e);
}

/* --- producers --- */

struct prod_arg {
	struct harness *h;
	unsigned int idx;
};

static void *producer(void *arg)
{
	struct prod_arg *pa = arg;
	struct harness *h = pa->h;
	unsigned int P = h->cfg.producers, i = pa->idx;
	u64 n, per = h->cfg.completions / P;
	u64 first = i * per, last = i == P - 1 ? h->cfg.completions : first + per;
	unsigned int nq = 0, k = 0;
	unsigned int myq[64];
	unsigned int qi;

	for (qi = i; qi < h->cfg.qps && nq < 64; qi += P)
		myq[nq++] = qi;
	free(pa);
	if (!nq)
		return NULL;
	for (n = first; n < last; n++) {
		struct req *r = &h->reqs[n];
		struct qp_ctx *q = &h->qps[myq[k]];
		struct ib_wc wc = {};

		r->cqe.done = ulp_done;
		r->qp = myq[k];
		r->qseq = q->next++;
		wc.wr_cqe = &r->cqe;
		wc.opcode = IB_WC_RECV;
		wc.qp = &q->qp;
		if (h->cfg.flush_every && !(n % h->cfg.flush_every))
			wc.status = IB_WC_WR_FLUSH_ERR;
		if (fake_cq_push(&h->fcq, &wc))
			break;
		if (++k == nq)
			k = 0;
	}
	return NULL;
}

/* --- set up, run, tear down --- */

int harness_init(struct harness *h, const struct config *cfg)
{
	struct ib_ocq_attr attr = {};
	unsigned int i;
	int ret;

	memset(h, 0, sizeof(*h));
	h->cfg = *cfg;
	if (!h->cfg.producers)
		h->cfg.producers = 1;
	if (h->cfg.producers > h->cfg.qps)
		h->cfg.producers = h->cfg.qps;
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->all_done, NULL);
	h->reqs = calloc(cfg->completions, sizeof(*h->reqs));
	h->qps = calloc(cfg->qps, sizeof(*h->qps));
	h->prod = calloc(h->cfg.producers, sizeof(*h->prod));
	if (!h->reqs || !h->qps || !h->prod)
		return -ENOMEM;
	for (i = 0; i < cfg->qps; i++)
		h->qps[i].qp.qp_num = 0x100 + i;
	if (fake_cq_init(&h->fcq, cfg->cqe, comp_handler, h))
		return -ENOMEM;
	if (wq_init(&h->wq, cfg->workers))
		return -ENOMEM;
	if (cfg->consumer == C_RAW) {
		h->raw.w.fn = host_work;
		h->raw.h = h;
		return 0;
	}

	h->ops.schedule = host_schedule;
	if (cfg->lease_us)
		h->ops.lease = host_lease;
	if (cfg->defer_us)
		h->ops.defer = host_defer;
	if (cfg->suspend_us)
		h->ops.suspend = host_suspend;
	attr.mode = cfg->consumer == C_FLOW ? IB_OCQ_FLOW :
		    cfg->consumer == C_PARALLEL ? IB_OCQ_PARALLEL :
		    IB_OCQ_STRICT;
	attr.policy = cfg->policy;
	attr.flags = cfg->postpone_arm ? IB_OCQ_POSTPONE_ARM : 0;
	attr.budget = cfg->budget;
	attr.nr_domains = cfg->nr_domains;
	if (cfg->consumer == C_PARALLEL)
		attr.process = ulp_process;
	if (cfg->consumer == C_FLOW && cfg->flow_key)
		attr.flow_key = ulp_flow_key;
	attr.defer_usecs = cfg->defer_us;
	attr.suspend_usecs = cfg->suspend_us;
	ret = ocq_engine_init(&h->e, &h->fcq.cq, &attr, cfg->workers, &h->ops);
	if (ret)
		return ret;
	st(&h->engine_live, 1);
	h->nr_uw = h->e.nr_units;
	h->uw = calloc(h->nr_uw, sizeof(*h->uw));
	if (!h->uw)
		return -ENOMEM;
	for (i = 0; i < h->nr_uw; i++) {
		h->uw[i].w.fn = host_work;
		h->uw[i].h = h;
		h->uw[i].unit = i;
	}
	if (cfg->lease_us && tick_start(&h->lease, lease_tick, h,
					cfg->lease_us, false))
		return -ENOMEM;
	if (cfg->watchdog_us && tick_start(&h->watchdog, watchdog_tick, h,
					   cfg->watchdog_us, true))
		return -ENOMEM;
	if (cfg->defer_us || cfg->suspend_us) {
		pthread_mutex_init(&h->timer.lock, NULL);
		pthread_cond_init(&h->timer.cond, NULL);
		if (pthread_create(&h->timer.thread, NULL, timer_thread, h))
			return -ENOMEM;
		h->timer_live = true;
	}
	return 0;
}

void harness_start(struct harness *h)
{
	unsigned int i;

	h->t_start = now_ns();
	if (h->cfg.consumer == C_RAW) {
		/* the first drain arms the CQ */
		wq_queue(&h->wq, &h->raw.w);
	} else {
		/* the engine starts paused: its first run drains, then arms */
		ocq_engine_resume(&h->e);
	}
	for (i = 0; i < h->cfg.producers; i++) {
		struct prod_arg *pa = malloc(sizeof(*pa));

		pa->h = h;
		pa->idx = i;
		pthread_create(&h->prod[i], NULL, producer, pa);
	}
}

int harness_wait(struct harness *h, unsigned int timeout_ms)
{
	struct timespec ts;
	int ret = 0;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&h->lock);
	while (!h->signalled && ret != ETIMEDOUT)
		ret = pthread_cond_timedwait(&h->all_done, &h->lock, &ts);
	ret = h->signalled ? 0 : -1;
	pthread_mutex_unlock(&h->lock);
	return ret;
}

void harness_teardown(struct harness *h)
{
	struct ib_ocq_stats s;
	unsigned int i;

	if (h->cfg.consumer == C_RAW) {
		fake_cq_kill(&h->fcq);
		for (i = 0; i < h->cfg.producers; i++)
			pthread_join(h->prod[i], NULL);
		wq_cancel_sync(&h->wq, &h->raw.w);
		fake_cq_destroy(&h->fcq);
		wq_cancel_sync(&h->wq, &h->raw.w);
		return;
	}
	/* as ib_ocq_free(): the watchdog, disable, the units, the lease */
	if (h->cfg.watchdog_us)
		tick_stop(&h->watchdog);
	ocq_engine_disable(&h->e);
	st(&h->disabled, 1);
	for (i = 0; i < h->nr_uw; i++)
		wq_cancel_sync(&h->wq, &h->uw[i].w);
	/* as ib_ocq_destroy(): the timer, which may queue the CQ unit again */
	timer_cancel(h);
	wq_cancel_sync(&h->wq, &h->uw[OCQ_UNIT_CQ].w);
	st(&h->lease_stopped, 1);
	if (h->cfg.lease_us)
		tick_stop(&h->lease);
	st(&h->torn_down, 1);
	/* the producers (still producing) stop; the handler may still run */
	fake_cq_kill(&h->fcq);
	for (i = 0; i < h->cfg.producers; i++)
		pthread_join(h->prod[i], NULL);
	fake_cq_destroy(&h->fcq);
	/*
	 * as ib_ocq_destroy(): no handler runs after the CQ's destroy; what
	 * one queued before (its kick read the gate before the disable) is
	 * cancelled, and nothing may queue a run afterwards
	 */
	for (i = 0; i < h->nr_uw; i++)
		wq_cancel_sync(&h->wq, &h->uw[i].w);
	for (i = 0; i < h->nr_uw; i++)
		if (wq_busy(&h->wq, &h->uw[i].w))
			harness_fail(h, "unit %u queued after teardown", i);
	ocq_engine_stats(&h->e, &s);
	if (s.completions != ld(&h->delivered))
		harness_fail(h, "the engine counted %llu done() calls, the ULP %llu",
			     (unsigned long long)s.completions,
			     (unsigned long long)ld(&h->delivered));
	st(&h->engine_live, 0);
	ocq_engine_destroy(&h->e);
}

void harness_final_checks(struct harness *h, bool complete)
{
	u64 i, n = h->cfg.completions, missing = 0, dups = 0;

	for (i = 0; i < n; i++) {
		int d = ld(&h->reqs[i].done);

		if (d > 1)
			dups++;
		else if (!d)
			missing++;
	}
	if (dups)
		harness_fail(h, "%llu completions done() more than once",
			     (unsigned long long)dups);
	if (complete && missing)
		harness_fail(h, "%llu of %llu completions never done()",
			     (unsigned long long)missing,
			     (unsigned long long)n);
}

void harness_free(struct harness *h)
{
	wq_destroy(&h->wq);
	free(h->uw);
	free(h->reqs);
	free(h->qps);
	free(h->prod);
	pthread_mutex_destroy(&h->lock);
	pthread_cond_destroy(&h->all_done);
}
