// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fake_run - one run of ocq_test_fake: the ULP side (done(), process(), the
 * producers), then a scenario in one mode on a fresh OCQ: create, stream,
 * wait, check, free.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/bitmap.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/log2.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <rdma/ib_ocq.h>
#include <rdma/ib_verbs.h>

#include "ocq_test_compat.h"
#include "ocq_test_ctx.h"
#include "fake.h"

/* from poll_ctx=, before the scenario runs */
enum ib_poll_context fake_poll_ctx = IB_POLL_WORKQUEUE;

const char *const fake_mode_names[FAKE_NR_MODES] = {
	[IB_OCQ_STRICT] = "strict",
	[IB_OCQ_FLOW] = "flow",
	[IB_OCQ_PARALLEL] = "parallel",
};

u32 fake_seed(unsigned int salt)
{
	return (fake_params.seed ^ (salt * 0x9e3779b9)) | 1;
}

/* --- the ULP side: done(), process() and the producers --- */

static void fake_violation(struct fake_run *r, unsigned int kind,
			   const char *what, const struct fake_req *req)
{
	atomic_inc(&r->failures);
	if (atomic_inc_return(&r->reports[kind]) > FAKE_MAX_REPORTS)
		return;
	pr_info("# %s: %s: flow %u seq %u pos %llu\n", r->name, what,
		req->flow->qp.qp_num, req->seq, req->pos);
}

/* Order within the domain: CQ order, or flow order in %IB_OCQ_FLOW. */
static void fake_check_order(struct fake_run *r, struct fake_req *req)
{
	struct fake_flow *f = req->flow;

	if (req->seq != (u32)atomic_read(&f->completed))
		fake_violation(r, FAKE_V_ORDER, "out of flow order", req);
	if (r->mode == IB_OCQ_FLOW)
		return;
	if (req->pos != r->next_pos)
		fake_violation(r, FAKE_V_ORDER, "out of CQ order", req);
	r->next_pos = req->pos + 1;
}

/*
 * A completion delivered again: its CQ position was seen (a short run's
 * bitmap), or (a bulk run) its request was already given back.  A copy
 * that comes after the request was reused fails fake_check_order().
 */
static bool fake_seen_twice(struct fake_run *r, struct fake_req *req, int state)
{
	if (req->pos >= r->total)
		return true;
	if (r->seen)
		return test_and_set_bit(req->pos, r->seen);
	return state == FAKE_FREE;
}

/*
 * Bulk: free credits for a batch, half the flow's credits (or what is left
 * of its quota).  Read by done() as well, to wake the producer only then.
 */
static bool fake_bulk_room(struct fake_flow *f)
{
	u32 pushed = READ_ONCE(f->pushed);
	u32 room = f->credits - (pushed - (u32)atomic_read(&f->completed));

	return room >= min(max(f->credits / 2, 1U), f->quota - pushed);
}

static bool fake_is_poller(struct fake_run *r)
{
	unsigned int i;

	for (i = 0; i < FAKE_POLLERS; i++)
		if (READ_ONCE(r->pollers[i]) == current)
			return true;
	return false;
}

/* poll_ctx=: done() runs where the poll context promises. */
static bool fake_in_promised_ctx(struct fake_run *r)
{
	return ocq_test_in_ctx(r->poll_ctx, fake_is_poller(r));
}

/*
 * ib_ocq_resume(); from a task, done() must not run inside the call (a host
 * that ran its softirq at a local_bh_enable() of the call would run it
 * there): fake_inside_nested() watches it.
 */
static void fake_resume(struct fake_run *r)
{
	int slot = in_task() ? fake_inside_enter() : -1;

	ib_ocq_resume(r->ocq);
	fake_inside_exit(slot);
}

/* What done() checks and does, for an OCQ's done() or a helper's consumer. */
void fake_deliver(struct fake_run *r, struct fake_req *req)
{
	struct fake_flow *f = req->flow;
	atomic_t *inside = r->mode == IB_OCQ_FLOW ? &f->inside : &r->inside;
	int want = r->mode == IB_OCQ_PARALLEL ? FAKE_PROCESSED : FAKE_QUEUED;
	int state;

	if (atomic_inc_return(inside) != 1)
		fake_violation(r, FAKE_V_CONCURRENT, "done() concurrent", req);
	if (fake_params.poll_ctx && r->ocq && !fake_in_promised_ctx(r))
		fake_violation(r, FAKE_V_CONTEXT, "done() in the wrong context",
			       req);
	if (r->ocq && fake_inside_nested()) {
		/* the first one's stack says which call it was nested in */
		if (!atomic_read(&r->reports[FAKE_V_CONTEXT]))
			pr_info("# %s: preempt_count %#x; the stack of the nested done():\n",
				r->name, preempt_count());
		if (!atomic_read(&r->reports[FAKE_V_CONTEXT]))
			dump_stack();
		fake_violation(r, FAKE_V_CONTEXT,
			       "done() inside a handler or a task's resume",
			       req);
	}
	if (READ_ONCE(r->freed))
		fake_violation(r, FAKE_V_AFTER_FREE, "done() after free", req);
	state = atomic_xchg(&req->state, FAKE_FREE);
	if (fake_seen_twice(r, req, state))
		fake_violation(r, FAKE_V_TWICE, "seen twice", req);
	else if (state != want)
		fake_violation(r, FAKE_V_STATE, "not processed or not queued",
			       req);
	fake_check_order(r, req);
	if (r->done_us)
		udelay(r->done_us);
	atomic_dec(inside);

	/* fake_pause_resume, postponed arm: the consumer arms when it likes */
	if ((r->attr.flags & IB_OCQ_POSTPONE_ARM) &&
	    !(atomic_long_read(&r->delivered) % FAKE_CONSUMER_ARM))
		fake_resume(r);
	atomic_long_inc(&r->delivered);
	/* the request is reused after this: pairs with fake_has_credit() */
	atomic_inc_return_release(&f->completed);
	/* bulk: the producer waits for fake_bulk_room(), which @pushed fixes */
	if ((!r->bulk || fake_bulk_room(f)) && wq_has_sleeper(&f->wq))
		wake_up(&f->wq);
}

static void fake_done(struct ib_cq *cq, struct ib_wc *wc)
{
	fake_deliver(ib_ocq_private(cq),
		     container_of(wc->wr_cqe, struct fake_req, cqe));
}

/*
 * &fake_run.wrid: the wr_id of @req's completion.  Not an address: an
 * engine that took it for a &ib_cqe and called its done() would fault on a
 * non-canonical address (an oops: the test fails).
 */
static u64 fake_wrid(const struct fake_req *req)
{
	return (u64)(uintptr_t)req ^ FAKE_WRID_KEY;
}

/* The request of a completion of @r: by wr_id or by its &ib_cqe. */
static struct fake_req *fake_req_of(struct fake_run *r, struct ib_wc *wc)
{
	if (r->wrid)
		return (struct fake_req *)(uintptr_t)(wc->wr_id ^
						      FAKE_WRID_KEY);
	return container_of(wc->wr_cqe, struct fake_req, cqe);
}

/* A completion's wr_id, or its &ib_cqe, names @req. */
static void fake_wc_set(const struct fake_run *r, struct ib_wc *wc,
			struct fake_req *req)
{
	if (r->wrid)
		wc->wr_id = fake_wrid(req);
	else
		wc->wr_cqe = &req->cqe;
}

/**
 * fake_dispatch() - &ib_ocq_attr.dispatch of an ocq_wrid run
 * @cq: the OCQ's CQ
 * @wc: a completion, its wr_id as fake_push() posted it
 *
 * The request its wr_id names must be one of this run's, queued (or
 * processed): a wr_id the engine changed, or a completion dispatched
 * twice, is a violation; then done()'s checks as for any completion.
 *
 * Context: the OCQ's dispatch context.
 */
void fake_dispatch(struct ib_cq *cq, struct ib_wc *wc)
{
	struct fake_run *r = ib_ocq_private(cq);
	struct fake_req *req = fake_req_of(r, wc);
	unsigned int i;

	for (i = 0; i < r->nr_flows; i++)
		if (req >= r->flows[i].reqs &&
		    req < r->flows[i].reqs + r->flows[i].credits)
			break;
	if (i == r->nr_flows) {
		atomic_inc(&r->failures);
		pr_info("# %s: dispatch(): wr_id %#llx names no request of the run\n",
			r->name, wc->wr_id);
		return;
	}
	fake_deliver(r, req);
}

/* %IB_OCQ_PARALLEL: runs before done(), on any CPU, in any order. */
void fake_process(struct ib_cq *cq, struct ib_wc *wc)
{
	struct fake_run *r = ib_ocq_private(cq);
	struct fake_req *req = fake_req_of(r, wc);

	if (atomic_cmpxchg(&req->state, FAKE_QUEUED, FAKE_PROCESSED) !=
	    FAKE_QUEUED)
		fake_violation(r, FAKE_V_PROCESS, "process() twice", req);
	/* finish out of order now and then: the commit step must reorder */
	if (!(req->pos % 7))
		udelay(2);
}

static bool fake_has_credit(struct fake_flow *f)
{
	/* pairs with atomic_inc_return_release() in fake_done() */
	return f->pushed - (u32)atomic_read_acquire(&f->completed) < f->credits;
}

static bool fake_may_push(struct fake_flow *f)
{
	return fake_has_credit(f) || READ_ONCE(f->run->abort);
}

static bool fake_bulk_may_push(struct fake_flow *f)
{
	return fake_bulk_room(f) || READ_ONCE(f->run->abort);
}

/**
 * fake_push_req() - push one successful completion of @req on @qp
 * @fcq: the fake CQ
 * @qp: the QP the completion names, hence its flow
 * @req: the request; its CQ position goes to @req->pos
 * @opcode: the completion's opcode
 * @failures: incremented on a CQ overrun
 *
 * Context: process context.
 */
void fake_push_req(struct fake_cq *fcq, struct ib_qp *qp, struct fake_req *req,
		   enum ib_wc_opcode opcode, atomic_t *failures)
{
	struct ib_wc wc = {
		.wr_cqe = &req->cqe,
		.status = IB_WC_SUCCESS,
		.opcode = opcode,
		.qp = qp,
	};

	if (!fake_cq_push(fcq, &wc, &req->pos))
		atomic_inc(failures);
}

/*
 * &fake_run.solicited: whether the completion @f pushes next is solicited:
 * the last of its message, or of its quota, or the last before it waits for
 * credits (done() only adds credits: one it sees now stays), so that it
 * never waits with its last completion not solicited in the CQ.
 */
static bool fake_msg_end(struct fake_flow *f)
{
	u32 done = atomic_read(&f->completed);

	if (!f->msg_left)
		f->msg_left = 1 + fake_rand(&f->rnd) % FAKE_SOL_MSG;
	if (--f->msg_left && f->pushed + 1 < f->quota &&
	    f->pushed + 1 - done < f->credits)
		return false;
	f->msg_left = 0;
	return true;
}

static void fake_push(struct fake_flow *f)
{
	struct fake_req *req = &f->reqs[f->pushed % f->credits];
	struct fake_run *r = f->run;
	struct ib_wc wc = {
		.status = IB_WC_SUCCESS,
		.opcode = IB_WC_SEND,
		.qp = &f->qp,
	};

	fake_wc_set(r, &wc, req);
	if (r->solicited && fake_msg_end(f))
		wc.wc_flags = FAKE_WC_SOLICITED;
	req->seq = f->pushed;
	atomic_set(&req->state, FAKE_QUEUED);
	if (!fake_cq_push(r->fcq, &wc, &req->pos))
		atomic_inc(&r->failures);
	f->pushed++;
}

/**
 * fake_add_next() - add the next completion of @f to its run's CQ
 * @f: the flow
 * @wc_flags: the completion's wc_flags (%FAKE_WC_SOLICITED)
 *
 * As the producer pushes it, a send of @f's next request; it lands with the
 * caller's fake_cq_land().  A full CQ counts a failure of the run.
 *
 * Context: under the CQ lock, from @f's producer or, once it finished, the
 * test.
 */
void fake_add_next(struct fake_flow *f, int wc_flags)
{
	struct fake_req *req = &f->reqs[f->pushed % f->credits];
	struct fake_run *r = f->run;
	struct ib_wc wc = {
		.status = IB_WC_SUCCESS,
		.opcode = IB_WC_SEND,
		.wc_flags = wc_flags,
		.qp = &f->qp,
	};

	fake_wc_set(r, &wc, req);
	req->seq = f->pushed;
	atomic_set(&req->state, FAKE_QUEUED);
	if (!fake_cq_add(r->fcq, &wc, &req->pos))
		atomic_inc(&r->failures);
	/* read by fake_bulk_room() in done() */
	WRITE_ONCE(f->pushed, f->pushed + 1);
}

/*
 * Bulk: push @n completions, up to %FAKE_BULK_CHUNK under one hold of the CQ
 * lock, as an HCA writing a burst of CQEs; they land chunk by chunk.
 */
void fake_push_batch(struct fake_flow *f, u32 n)
{
	struct fake_run *r = f->run;
	struct fake_cq *fcq = r->fcq;
	unsigned long flags;
	unsigned int chunk;
	bool direct;

	while (n) {
		chunk = min_t(u32, n, FAKE_BULK_CHUNK);
		n -= chunk;
		spin_lock_irqsave(&fcq->lock, flags);
		while (chunk--)
			fake_add_next(f, 0);
		direct = fake_cq_land(fcq);
		spin_unlock_irqrestore(&fcq->lock, flags);
		if (direct)
			fake_direct(fcq);
	}
}

/*
 * Bulk: the free credits, or now and then a random part of them, once at
 * least half the credits are free.
 */
static void fake_produce_bulk(struct fake_flow *f)
{
	u32 room, n;

	if (!fake_bulk_room(f)) {
		wait_event_timeout(f->wq, fake_bulk_may_push(f), HZ / 10);
		return;
	}
	room = f->credits -
	       (f->pushed - (u32)atomic_read_acquire(&f->completed));
	n = min(room, f->quota - f->pushed);
	if (!(fake_rand(&f->rnd) % 4))
		n = 1 + fake_rand(&f->rnd) % n;
	fake_push_batch(f, n);
	cond_resched();
}

/* Wait, not holding the CPU, for kthread_stop(). */
static void fake_wait_stop(void)
{
	set_current_state(TASK_INTERRUPTIBLE);
	while (!kthread_should_stop()) {
		schedule();
		set_current_state(TASK_INTERRUPTIBLE);
	}
	__set_current_state(TASK_RUNNING);
}

/*
 * A producer: pushes its quota in random bursts, never more than its
 * credits outstanding, as a ULP that sized its CQ would.
 */
static int fake_producer(void *arg)
{
	struct fake_flow *f = arg;
	struct fake_run *r = f->run;
	unsigned int burst;

	while (f->pushed < f->quota && !READ_ONCE(r->abort)) {
		if (r->bulk) {
			fake_produce_bulk(f);
			continue;
		}
		if (!fake_has_credit(f)) {
			wait_event_timeout(f->wq, fake_may_push(f), HZ / 10);
			continue;
		}
		burst = 1 + fake_rand(&f->rnd) % FAKE_BURST;
		while (burst-- && f->pushed < f->quota && fake_has_credit(f))
			fake_push(f);
		cond_resched();
	}
	/* pairs with smp_load_acquire() in fake_finished() */
	smp_store_release(&f->finished, true);
	fake_wait_stop();
	return 0;
}

/* fake_pause_resume: pause and resume at random, arm now and then. */
static int fake_pauser(void *arg)
{
	struct fake_run *r = arg;
	bool postpone = r->attr.flags & IB_OCQ_POSTPONE_ARM;
	u32 rnd = fake_seed(r->mode + 100);
	unsigned int us;

	while (!kthread_should_stop()) {
		us = FAKE_PAUSE_MIN_US + fake_rand(&rnd) % FAKE_PAUSE_SPAN_US;
		usleep_range(us, us + FAKE_PAUSE_MIN_US);
		if (!postpone || !(fake_rand(&rnd) % 4)) {
			ib_ocq_pause(r->ocq);
			atomic_long_inc(&r->pause_calls);
			usleep_range(FAKE_PAUSE_MIN_US, 2 * FAKE_PAUSE_MIN_US);
		}
		fake_resume(r);
	}
	return 0;
}

/* fake_teardown_race: late callbacks until destroy_cq stops it. */
static int fake_injector(void *arg)
{
	struct fake_cq *fcq = arg;

	while (!kthread_should_stop()) {
		fake_callback(fcq);
		cond_resched();
	}
	return 0;
}

/* --- one run: create, stream, wait, check --- */

bool fake_finished(struct fake_run *r)
{
	unsigned int i;

	for (i = 0; i < r->nr_flows; i++) {
		/* pairs with smp_store_release() in fake_producer() */
		if (!smp_load_acquire(&r->flows[i].finished))
			return false;
	}
	return true;
}

/* Completions pushed; final once fake_finished(). */
u64 fake_pushed(struct fake_run *r)
{
	unsigned int i;
	u64 n = 0;

	for (i = 0; i < r->nr_flows; i++)
		n += READ_ONCE(r->flows[i].pushed);
	return n;
}

/**
 * fake_stats_settled() - read an OCQ's counters once they count @expect
 * @ocq: the ordered CQ
 * @s: where the counters go
 * @expect: the completions pushed, every one of them seen by done()
 *
 * A run counts what it dispatched after its last done() returned
 * (ib_ocq_get_stats()), so a read just after that done() may lag it by the
 * run's batch.  Read again until @s counts @expect completions, for a
 * second at most; a count still short after that is the caller's failure.
 *
 * Context: process context, may sleep.
 */
void fake_stats_settled(struct ib_ocq *ocq, struct ib_ocq_stats *s, u64 expect)
{
	unsigned long end = jiffies + HZ;

	for (;;) {
		ib_ocq_get_stats(ocq, s);
		if (s->completions >= expect || time_after(jiffies, end))
			return;
		usleep_range(1000, 2000);
	}
}

/*
 * Wait until the producers are done and every completion they pushed was
 * delivered.  Return false if progress stopped for @bound_ms first.
 */
bool fake_wait_delivered(struct fake_run *r, unsigned int bound_ms)
{
	unsigned long bound = msecs_to_jiffies(bound_ms);
	unsigned long last_change = jiffies;
	long last = -1, now;

	for (;;) {
		now = atomic_long_read(&r->delivered);
		/* the last gap too: a rescue may have ended it */
		if (now != last) {
			r->max_gap = max(r->max_gap, jiffies - last_change);
			last = now;
			last_change = jiffies;
		}
		if (fake_finished(r) && now == fake_pushed(r))
			return true;
		if (time_after(jiffies, last_change + bound))
			return false;
		msleep(FAKE_POLL_MS);
	}
}

/* Wait until the CQ is empty and armed: the next completion raises an event. */
bool fake_wait_armed(struct fake_cq *fcq, unsigned int bound_ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(bound_ms);
	unsigned long flags;
	bool armed;

	for (;;) {
		spin_lock_irqsave(&fcq->lock, flags);
		armed = fcq->armed && fcq->head == fcq->tail;
		spin_unlock_irqrestore(&fcq->lock, flags);
		if (armed || time_after(jiffies, end))
			return armed;
		msleep(FAKE_POLL_MS);
	}
}

/* Wait until the engine stopped calling the provider (it is paused). */
void fake_wait_quiet(struct fake_cq *fcq)
{
	unsigned long flags;
	u64 prev = ~0ULL, now;
	int i;

	for (i = 0; i < fake_params.stall_ms / FAKE_POLL_MS; i++) {
		spin_lock_irqsave(&fcq->lock, flags);
		now = fcq->polls + fcq->arms;
		spin_unlock_irqrestore(&fcq->lock, flags);
		if (now == prev)
			return;
		prev = now;
		msleep(4 * FAKE_POLL_MS);
	}
}

static int fake_flows_alloc(struct fake_run *r)
{
	unsigned int i, j;
	u32 credits;

	r->nr_flows = num_online_cpus();
	r->flows = kcalloc(r->nr_flows, sizeof(*r->flows), GFP_KERNEL);
	if (!r->flows)
		return -ENOMEM;
	credits = roundup_pow_of_two(r->credits ?: r->cqe) / r->nr_flows;
	credits = max_t(u32, credits, 1);
	for (i = 0; i < r->nr_flows; i++) {
		struct fake_flow *f = &r->flows[i];

		f->run = r;
		f->qp.qp_num = 0x100 + i;
		f->credits = credits;
		f->quota = r->total / r->nr_flows;
		if (i < r->total % r->nr_flows)
			f->quota++;
		f->rnd = fake_seed(i + 1);
		init_waitqueue_head(&f->wq);
		f->reqs = kcalloc(credits, sizeof(*f->reqs), GFP_KERNEL);
		if (!f->reqs)
			return -ENOMEM;
		for (j = 0; j < credits; j++) {
			f->reqs[j].cqe.done = fake_done;
			f->reqs[j].flow = f;
		}
	}
	return 0;
}

static void fake_flows_free(struct fake_run *r)
{
	unsigned int i;

	for (i = 0; r->flows && i < r->nr_flows; i++)
		kfree(r->flows[i].reqs);
	kfree(r->flows);
	r->flows = NULL;
}

/* Reset what a stream checks, for a fresh OCQ. */
void fake_run_reset(struct fake_run *r)
{
	unsigned int i;

	if (r->seen)
		bitmap_zero(r->seen, r->total);
	atomic_long_set(&r->delivered, 0);
	r->next_pos = 0;
	r->max_gap = 0;
	WRITE_ONCE(r->abort, false);
	WRITE_ONCE(r->freed, false);
	atomic_long_set(&r->pause_calls, 0);
	for (i = 0; i < r->nr_flows; i++) {
		struct fake_flow *f = &r->flows[i];

		f->pushed = 0;
		f->msg_left = 0;
		f->finished = false;
		atomic_set(&f->completed, 0);
	}
}

int fake_ocq_create(struct fake_run *r, struct fake_dev *fdev)
{
	struct ib_cq *cq;

	r->poll_ctx = fake_poll_ctx;
	/*
	 * A direct CQ is never armed, and late completions land on an arm:
	 * there, they land at once, as a real CQE does once written.
	 */
	if (r->poll_ctx == IB_POLL_DIRECT)
		fdev->sem |= FAKE_PROMPT;
	/* read when the CQ is made, as ib_alloc_cq() does */
	fdev->ibdev.use_cq_dim = !!(fdev->sem & FAKE_DIM);
	if (fake_params.poll_ctx) {
		cq = ib_ocq_alloc_cq(&fdev->ibdev, r, r->cqe, 0, r->poll_ctx,
				     &r->attr);
		r->ocq = IS_ERR(cq) ? ERR_CAST(cq) : ib_cq_to_ocq(cq);
	} else {
		r->ocq = ib_ocq_alloc(&fdev->ibdev, r, r->cqe, 0, &r->attr);
	}
	r->alloc_ret = PTR_ERR_OR_ZERO(r->ocq);
	if (IS_ERR(r->ocq)) {
		pr_info("# %s: ib_ocq_alloc: %ld\n", r->name, PTR_ERR(r->ocq));
		return PTR_ERR(r->ocq);
	}
	r->fcq = to_fake_cq(ib_ocq_cq(r->ocq));
	return 0;
}

void fake_ocq_free(struct fake_run *r)
{
	ib_ocq_free(r->ocq);
	WRITE_ONCE(r->freed, true);
	r->ocq = NULL;
	r->fcq = NULL;
}

int fake_producers_start(struct fake_run *r)
{
	unsigned int i = 0;
	int cpu;

	for_each_online_cpu(cpu) {
		struct fake_flow *f;

		if (i == r->nr_flows)
			break;
		f = &r->flows[i];
		f->cpu = cpu;
		f->task = kthread_create_on_cpu(fake_producer, f, cpu,
						"ocq_fake/%u");
		if (IS_ERR(f->task)) {
			int ret = PTR_ERR(f->task);

			f->task = NULL;
			return ret;
		}
		atomic_inc(&fake_objects);
		wake_up_process(f->task);
		i++;
	}
	/* CPUs went offline since: the missing producers push nothing */
	for (; i < r->nr_flows; i++) {
		/* pairs with smp_load_acquire() in fake_finished() */
		smp_store_release(&r->flows[i].finished, true);
	}
	return 0;
}

void fake_producers_stop(struct fake_run *r)
{
	unsigned int i;

	WRITE_ONCE(r->abort, true);
	for (i = 0; i < r->nr_flows; i++) {
		if (!r->flows[i].task)
			continue;
		wake_up(&r->flows[i].wq);
		kthread_stop(r->flows[i].task);
		atomic_dec(&fake_objects);
		r->flows[i].task = NULL;
	}
}

bool fake_check(struct fake_run *r, bool ok, const char *what)
{
	if (!ok) {
		atomic_inc(&r->failures);
		pr_info("# %s: check failed: %s\n", r->name, what);
	}
	return ok;
}

void fake_print_stats(struct fake_run *r, const struct ib_ocq_stats *s)
{
	struct fake_cq *fcq = r->fcq;

	pr_info("# %s: stats completions=%llu events=%llu runs=%llu empty_runs=%llu polls=%llu arms=%llu repolls=%llu\n",
		r->name, s->completions, s->events, s->runs, s->empty_runs,
		s->polls, s->arms, s->repolls);
	pr_info("# %s: stats yields=%llu pauses=%llu rescues=%llu stalls=%llu domain_runs=%llu cq_errors=%llu max_batch=%llu\n",
		r->name, s->yields, s->pauses, s->rescues, s->stalls,
		s->domain_runs, s->cq_errors, s->max_batch);
	pr_info("# %s: stats parks=%llu provider_errors=%llu lease_resumes=%llu inlined=%llu\n",
		r->name, s->parks, ocq_compat_provider_errors(s),
		ocq_compat_lease_resumes(s), s->inlined);
	pr_info("# %s: provider pushed=%llu callbacks=%ld empty_callbacks=%ld overlaps=%ld\n",
		r->name, fcq->pushed, atomic_long_read(&fcq->callbacks),
		atomic_long_read(&fcq->empty_callbacks),
		atomic_long_read(&fcq->overlaps));
	pr_info("# %s: provider polls=%llu arms=%llu positive=%llu arm_events=%llu dropped=%llu overruns=%llu errors=%llu\n",
		r->name, fcq->polls, fcq->arms, fcq->positive, fcq->arm_events,
		fcq->dropped, fcq->overruns, fcq->errors);
}

/*
 * An engine count against the provider's: the engine counts a call once it
 * returned, so its count may trail by @slack calls.
 */
static bool fake_trails(u64 engine, u64 provider, u64 slack)
{
	return engine <= provider && provider - engine <= slack;
}

/* A rescue after a stall is a lost wakeup: see %FAKE_WATCHDOG_LONG_MS. */
static bool fake_rescue_fails(const struct fake_run *r,
			      const struct ib_ocq_stats *s)
{
	unsigned long gap = msecs_to_jiffies(FAKE_WATCHDOG_LONG_MS / 2);

	return !(r->fcq->sem & FAKE_LOSSY) &&
	       r->attr.watchdog_ms >= FAKE_WATCHDOG_LONG_MS && s->rescues &&
	       r->max_gap >= gap;
}

/* The statistics against what was pushed and what the provider saw. */
static void fake_check_stats(struct fake_run *r, const struct ib_ocq_stats *s)
{
	struct fake_cq *fcq = r->fcq;
	long callbacks = atomic_long_read(&fcq->callbacks);

	fake_check(r, s->completions == fcq->pushed, "completions == pushed");
	fake_check(r, s->events == callbacks, "events == callbacks made");
	fake_check(r, s->runs >= 1 && s->empty_runs <= s->runs,
		   "runs >= 1, empty_runs <= runs");
	fake_check(r, s->arms >= 1, "arms >= 1");
	fake_check(r, fake_trails(s->polls, fcq->polls, 2),
		   "polls == poll_cq calls");
	fake_check(r, fake_trails(s->arms, fcq->arms, 1),
		   "arms == req_notify_cq calls");
	/* IB_ARM_AUTO is IB_ARM_REPORT_MISSED on RDMA_DRIVER_UNKNOWN */
	if (r->attr.policy != IB_ARM_STRONG)
		fake_check(r, fake_trails(s->repolls, fcq->positive, 1),
			   "repolls == positive req_notify_cq returns");
	if (!r->attr.watchdog_ms)
		fake_check(r, !s->rescues, "no rescues without a watchdog");
	else if (!fake_check(r, !fake_rescue_fails(r, s),
			     "no rescue after a stall on a lossless provider"))
		pr_info("# %s: %llu rescued after %u ms without progress\n",
			r->name, s->rescues, jiffies_to_msecs(r->max_gap));
	fake_check(r, !s->cq_errors && !fcq->overruns, "no CQ overrun");
	fake_check(r,
		   (r->mode == IB_OCQ_STRICT) ==
			   !(s->domain_runs || s->inlined),
		   "domain runs or inlined iff flow or parallel mode");
	fake_check(r, r->mode == IB_OCQ_FLOW || !s->inlined,
		   "inlined only in flow mode");
	fake_check(r, s->inlined <= s->completions, "inlined <= completions");
	fake_check(r, s->pauses >= atomic_long_read(&r->pause_calls) + 1,
		   "pauses >= ib_ocq_pause() calls");
	fake_check(r, (fcq->sem & FAKE_DIM) || !fcq->moderations,
		   "modify_cq only with use_cq_dim");
}

/*
 * The safety net's period for a stream that has one:
 * %FAKE_WATCHDOG_LONG_MS where fake_check_stats() holds a rescue against
 * the engine, else @fast.  Not on the lossy provider (its rescues are the
 * point), nor on a stream with the pauser (its resumes heal a lost wakeup
 * first), one freed halfway (no statistics are checked: its ticks race the
 * stream and the free) or a bulk one (it runs for seconds: ticks race it).
 */
unsigned int fake_watchdog_ms(const struct fake_run *r, unsigned int fast)
{
	if ((r->sc->sem & FAKE_LOSSY) || r->pause || r->abrupt || r->bulk)
		return fast;
	return FAKE_WATCHDOG_LONG_MS;
}

/* fake_teardown_race: free the OCQ while the injector calls the handler. */
static int fake_free_injected(struct fake_run *r)
{
	struct fake_cq *fcq = r->fcq;
	long before = atomic_long_read(&fcq->callbacks);
	unsigned long end = jiffies + msecs_to_jiffies(fake_params.stall_ms);

	fcq->injector = kthread_run(fake_injector, fcq, "ocq_injector");
	if (IS_ERR(fcq->injector)) {
		int ret = PTR_ERR(fcq->injector);

		fcq->injector = NULL;
		return ret;
	}
	atomic_inc(&fake_objects);
	while (atomic_long_read(&fcq->callbacks) == before &&
	       time_before(jiffies, end))
		usleep_range(100, 200);
	/*
	 * The CQ unit runs again, right before the free: late callbacks
	 * schedule real runs, and an abrupt cycle's backlog is being
	 * dispatched.  destroy_cq stops the injector.
	 */
	fake_resume(r);
	return 0;
}

static int fake_poller(void *arg)
{
	struct fake_run *r = arg;
	struct ib_cq *cq = ib_ocq_cq(r->ocq);

	while (!kthread_should_stop()) {
		if (ib_ocq_process_cq_direct(cq, FAKE_DIRECT_BUDGET) > 0)
			cond_resched();
		else
			usleep_range(20, 100);
	}
	return 0;
}

static void fake_pollers_stop(struct fake_run *r)
{
	unsigned int i;

	for (i = 0; i < FAKE_POLLERS; i++) {
		if (!r->pollers[i])
			continue;
		kthread_stop(r->pollers[i]);
		atomic_dec(&fake_objects);
		WRITE_ONCE(r->pollers[i], NULL);
	}
}

/* poll_ctx=direct: the ULP's side of the CQ, two pollers at once. */
static int fake_pollers_start(struct fake_run *r)
{
	struct task_struct *t;
	unsigned int i;

	if (r->poll_ctx != IB_POLL_DIRECT)
		return 0;
	for (i = 0; i < FAKE_POLLERS; i++) {
		t = kthread_create(fake_poller, r, "ocq_poller%u", i);
		if (IS_ERR(t)) {
			fake_pollers_stop(r);
			return PTR_ERR(t);
		}
		atomic_inc(&fake_objects);
		/* done() checks its thread against this: set it first */
		WRITE_ONCE(r->pollers[i], t);
		wake_up_process(t);
	}
	return 0;
}

static int fake_pauser_start(struct fake_run *r)
{
	r->pauser = kthread_run(fake_pauser, r, "ocq_pauser");
	if (IS_ERR(r->pauser)) {
		int ret = PTR_ERR(r->pauser);

		r->pauser = NULL;
		return ret;
	}
	atomic_inc(&fake_objects);
	return 0;
}

/* Stop the pauser if it runs; return true if it did. */
static bool fake_pauser_stop(struct fake_run *r)
{
	if (!r->pauser)
		return false;
	kthread_stop(r->pauser);
	atomic_dec(&fake_objects);
	r->pauser = NULL;
	return true;
}

/* Where a stalled stream stands, for the log. */
void fake_print_stall(struct fake_run *r)
{
	struct fake_cq *fcq = r->fcq;
	unsigned long flags;
	unsigned int i;

	for (i = 0; i < r->nr_flows; i++) {
		struct fake_flow *f = &r->flows[i];

		pr_info("# %s: stall: flow %u on cpu %d: pushed %u of %u, completed %d, %s\n",
			r->name, f->qp.qp_num, f->cpu, READ_ONCE(f->pushed),
			f->quota, atomic_read(&f->completed),
			READ_ONCE(f->finished) ? "finished" : "pushing");
	}
	spin_lock_irqsave(&fcq->lock, flags);
	pr_info("# %s: stall: CQ holds %u (%u visible), %sarmed\n", r->name,
		fcq->head - fcq->tail, fcq->visible - fcq->tail,
		fcq->armed ? "" : "not ");
	spin_unlock_irqrestore(&fcq->lock, flags);
}

/* Stream, wait, check the statistics; the OCQ stays for the caller. */
/*
 * poll_ctx=direct: no engine, no arm, no event; the pollers' calls count
 * every completion, and the CQ was never armed.
 */
static void fake_direct_stats(struct fake_run *r, bool ok)
{
	struct ib_ocq_stats s;

	fake_pollers_stop(r);
	fake_stats_settled(r->ocq, &s, r->fcq->pushed);
	pr_info("# %s: direct: runs %llu empty_runs %llu polls %llu completions %llu contended %llu\n",
		r->name, s.runs, s.empty_runs, s.polls, s.completions,
		s.contended);
	if (!ok)
		return;
	fake_check(r, s.completions == r->fcq->pushed, "completions == pushed");
	fake_check(r, s.polls == r->fcq->polls, "polls == poll_cq calls");
	fake_check(r, !r->fcq->arms && !s.events, "never armed, no event");
}

/* modify_cq calls so far */
static u64 fake_moderations(struct fake_cq *fcq)
{
	unsigned long flags;
	u64 n;

	spin_lock_irqsave(&fcq->lock, flags);
	n = fcq->moderations;
	spin_unlock_irqrestore(&fcq->lock, flags);
	return n;
}

/* Wait up to @ms for everything pushed to be delivered. */
bool fake_wait_all(struct fake_run *r, unsigned int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);

	while (atomic_long_read(&r->delivered) != fake_pushed(r)) {
		if (time_after(jiffies, end))
			return false;
		usleep_range(100, 200);
	}
	return true;
}

/* Push @n completions on flow 0 and wait until they are delivered. */
static bool fake_dim_round(struct fake_run *r, u32 n)
{
	fake_push_batch(&r->flows[0], n);
	return fake_wait_all(r, fake_params.stall_ms);
}

/*
 * fake_dim, after the stream: whether a free-running stream moves DIM off
 * its first profile is up to timing.  Paced rounds whose size doubles every
 * %FAKE_DIM_PHASE rounds raise the completions per ms and per event from
 * one DIM sample to the next, which DIM answers with a step to the right:
 * a modify_cq call, if the samples reach it.
 */
void fake_dim_drive(struct fake_run *r)
{
	struct fake_flow *f = &r->flows[0];
	u32 left = r->dim_tail;
	unsigned int i;
	u32 n;

	for (i = 0; i < FAKE_DIM_PHASES * FAKE_DIM_PHASE && left; i++) {
		if (fake_moderations(r->fcq))
			break;
		n = min3(1U << (i / FAKE_DIM_PHASE), f->credits, left);
		left -= n;
		if (!fake_check(r, fake_dim_round(r, n),
				"a paced DIM round delivered"))
			return;
		usleep_range(200, 300);
	}
	pr_info("# %s: dim: %u paced rounds after the stream\n", r->name, i);
}

static void fake_stream_body(struct fake_run *r, bool expect_stall,
			     bool *stalled)
{
	unsigned int bound = max(fake_params.stall_ms, r->sc->min_stall_ms);
	unsigned long start = jiffies;
	struct ib_ocq_stats s;
	bool ok;

	ok = fake_wait_delivered(r, expect_stall ? FAKE_LOSSY_STALL_MS : bound);
	*stalled = !ok;
	if (!ok)
		fake_print_stall(r);
	if (fake_pauser_stop(r))
		fake_resume(r);
	fake_producers_stop(r);
	if (!ok && expect_stall) {
		pr_info("# %s: stalled after %u ms with %ld of %llu delivered; a late event\n",
			r->name, jiffies_to_msecs(jiffies - start),
			atomic_long_read(&r->delivered), fake_pushed(r));
		fake_callback(r->fcq);
		ok = fake_wait_delivered(r, bound);
	}
	fake_check(r, ok, "everything delivered within the stall bound");
	if (!r->quiet)
		pr_info("# %s: %ld completions in %u ms, longest wait for progress %u ms\n",
			r->name, atomic_long_read(&r->delivered),
			jiffies_to_msecs(jiffies - start),
			jiffies_to_msecs(r->max_gap));
	if (r->poll_ctx == IB_POLL_DIRECT) {
		fake_direct_stats(r, ok);
		return;
	}
	if (r->attr.flags & IB_OCQ_POSTPONE_ARM)
		fake_resume(r); /* the explicit "arm now" */
	if (ok && !(r->fcq->sem & FAKE_PERPETUAL))
		fake_check(r, fake_wait_armed(r->fcq, fake_params.stall_ms),
			   "ends empty and armed");
	if (ok && r->sc->drive)
		r->sc->drive(r);
	/* stop what raises events, then the engine, and compare counts */
	fake_cq_quiesce(r->fcq);
	ib_ocq_pause(r->ocq);
	fake_wait_quiet(r->fcq);
	fake_stats_settled(r->ocq, &s, r->fcq->pushed);
	if (!r->quiet || !ok)
		fake_print_stats(r, &s);
	if (!ok)
		return;
	fake_check_stats(r, &s);
	if (r->sc->check)
		r->sc->check(r, &s);
}

/*
 * fake_teardown_race, abrupt cycle: halfway, pause the OCQ and let the
 * producers fill their credits, so that the resume before the free starts a
 * run with a backlog and the OCQ is freed while it dispatches, as by a ULP
 * that tears down without draining.  What is left is not delivered, but
 * nothing may be delivered once ib_ocq_free() returned.
 */
static void fake_stream_cut(struct fake_run *r)
{
	unsigned long end = jiffies + msecs_to_jiffies(fake_params.stall_ms);

	while (atomic_long_read(&r->delivered) < r->total / 2 &&
	       time_before(jiffies, end))
		usleep_range(100, 200);
	fake_pauser_stop(r);
	ib_ocq_pause(r->ocq);
	msleep(FAKE_POLL_MS);
	fake_producers_stop(r);
}

/* fake_teardown_race: nothing comes after ib_ocq_free() returned. */
static void fake_check_after_free(struct fake_run *r)
{
	long n = atomic_long_read(&r->delivered);

	msleep(4 * FAKE_POLL_MS);
	fake_check(r, atomic_long_read(&r->delivered) == n,
		   "no done() after ib_ocq_free()");
	if (r->abrupt)
		r->undelivered += fake_pushed(r) - n;
	else
		fake_check(r, n == fake_pushed(r),
			   "everything delivered before ib_ocq_free()");
}

/*
 * Stream the run's completions through a fresh OCQ, check everything, free
 * it.  Return 0 when it ran (failures are counted in @r), or -errno.  With
 * @expect_stall (fake_lossy without its watchdog) a stall is the expected
 * outcome: a late event recovers it, and @stalled reports it.
 */
int fake_stream_once(struct fake_run *r, struct fake_dev *fdev,
		     bool expect_stall, bool *stalled)
{
	int ret;

	*stalled = false;
	fake_run_reset(r);
	fdev->sem = r->sc->sem;
	fdev->rnd = fake_seed(1000 + r->mode);
	fdev->ring = r->sc->ring;
	ret = fake_ocq_create(r, fdev);
	if (ret)
		return ret;
	ret = fake_pollers_start(r);
	if (ret)
		goto out_free_ocq;
	ret = fake_producers_start(r);
	if (ret)
		goto out_free_ocq;
	if (r->pause) {
		ret = fake_pauser_start(r);
		if (ret)
			goto out_free_ocq;
	}
	if (r->abrupt)
		fake_stream_cut(r);
	else
		fake_stream_body(r, expect_stall, stalled);
	if (r->inject)
		ret = fake_free_injected(r);

out_free_ocq:
	fake_pauser_stop(r);
	fake_producers_stop(r);
	fake_pollers_stop(r);
	fake_ocq_free(r);
	if (!ret && r->inject)
		fake_check_after_free(r);
	return ret;
}

void fake_result(struct fake_ktap *k, bool ok, const char *name,
		 const char *note)
{
	k->nr++;
	if (!ok)
		k->failed++;
	pr_info("%s %u %s%s%s\n", ok ? "ok" : "not ok", k->nr, name,
		note ? " # " : "", note ?: "");
}

void fake_skip(struct fake_ktap *k, const char *name, const char *why)
{
	k->nr++;
	k->skipped++;
	pr_info("ok %u %s # SKIP %s\n", k->nr, name, why);
}

/* Most scenarios: stream once in the mode, one subtest. */
int fake_run_stream(struct fake_run *r, struct fake_dev *fdev,
		    struct fake_ktap *k)
{
	bool stalled;
	int ret;

	ret = fake_stream_once(r, fdev, false, &stalled);
	fake_result(k, !ret && !atomic_read(&r->failures), r->name, NULL);
	return ret;
}

/*
 * ocq_wrid: fake_run_stream()'s stream with a wr_id in each completion in
 * place of a &ib_cqe (fake_wrid()), dispatched through
 * &ib_ocq_attr.dispatch (fake_dispatch()) with done()'s checks: order per
 * mode, nothing lost or twice, process() first in parallel mode.
 */
int fake_run_wrid(struct fake_run *r, struct fake_dev *fdev,
		  struct fake_ktap *k)
{
	r->wrid = true;
	r->attr.dispatch = fake_dispatch;
	return fake_run_stream(r, fdev, k);
}

/*
 * fake_dim: flow 0's producer leaves out what fake_dim_drive() may push, so
 * that every CQ position stays below the run's total.
 */
int fake_run_dim(struct fake_run *r, struct fake_dev *fdev, struct fake_ktap *k)
{
	struct fake_flow *f = &r->flows[0];

	r->dim_tail = min_t(u32, FAKE_DIM_TAIL, f->quota / 2);
	f->quota -= r->dim_tail;
	return fake_run_stream(r, fdev, k);
}

/*
 * fake_weak: the stream must meet an arm of a non-empty CQ that returns 1,
 * and one of those that leaves the CQ unarmed (fake_arm()).  Whether it
 * does is a race of the producers with the CQ run's arms, and in the flow
 * and parallel modes the CQ run arms seldom: try again before calling it
 * a failure.  Every try must deliver everything once and in order.  An
 * %IB_POLL_DIRECT CQ is never armed: one stream, its delivery only.
 */
int fake_run_weak(struct fake_run *r, struct fake_dev *fdev,
		  struct fake_ktap *k)
{
	unsigned int i;
	bool stalled;
	int ret;

	if (fake_poll_ctx == IB_POLL_DIRECT)
		return fake_run_stream(r, fdev, k);
	for (i = 0; i < FAKE_WEAK_TRIES; i++) {
		r->arms_positive = 0;
		r->arms_voided = 0;
		ret = fake_stream_once(r, fdev, false, &stalled);
		if (ret || atomic_read(&r->failures) ||
		    (r->arms_positive && r->arms_voided))
			break;
		pr_info("# %s: %llu arms of a non-empty CQ returned 1, %llu left it unarmed (try %u)\n",
			r->name, r->arms_positive, r->arms_voided, i + 1);
	}
	fake_check(r, ret || r->arms_positive,
		   "arming a non-empty CQ returned 1 at least once");
	fake_check(r, ret || r->arms_voided,
		   "a 1 from arming left the CQ unarmed at least once");
	fake_result(k, !ret && !atomic_read(&r->failures), r->name, NULL);
	return ret;
}

/*
 * fake_lossy: with the watchdog, everything arrives and the watchdog tells
 * its rescues; without it, the same provider must stall the stream.
 */
int fake_run_lossy(struct fake_run *r, struct fake_dev *fdev,
		   struct fake_ktap *k)
{
	unsigned int i;
	bool stalled;
	int ret;

	/*
	 * A lost event needs the watchdog only if no later event or arm
	 * finds its completions first: a stream may get through without a
	 * rescue; try again before calling it a failure.
	 */
	r->attr.watchdog_ms = FAKE_WATCHDOG_MS;
	for (i = 0; i < FAKE_LOSSY_TRIES; i++) {
		r->rescues = 0;
		ret = fake_stream_once(r, fdev, false, &stalled);
		if (ret || r->rescues || atomic_read(&r->failures))
			break;
		pr_info("# %s: no rescue by the watchdog (try %u)\n", r->name,
			i + 1);
	}
	fake_check(r, ret || r->rescues, "the watchdog rescued");
	fake_result(k, !ret && !atomic_read(&r->failures), r->name, NULL);
	if (ret)
		return ret;

	/*
	 * A lost event stalls the stream only if it was the one the engine
	 * armed for: in the flow and parallel modes, which arm rarely, a
	 * stream may get through; try again before calling it a failure.
	 */
	r->attr.watchdog_ms = 0;
	strlcat(r->name, "_no_watchdog", sizeof(r->name));
	for (i = 0; i < FAKE_LOSSY_TRIES; i++) {
		ret = fake_stream_once(r, fdev, true, &stalled);
		if (ret || stalled)
			break;
		pr_info("# %s: no stall without the safety net (try %u)\n",
			r->name, i + 1);
	}
	fake_result(k, !ret && stalled && !atomic_read(&r->failures), r->name,
		    "stalls without the safety net as expected");
	return ret;
}

/* fake_pause_resume: random pauses, then postponed arms with resumes. */
int fake_run_pause(struct fake_run *r, struct fake_dev *fdev,
		   struct fake_ktap *k)
{
	bool stalled;
	int ret;

	r->pause = true;
	ret = fake_stream_once(r, fdev, false, &stalled);
	fake_result(k, !ret && !atomic_read(&r->failures), r->name, NULL);
	if (ret)
		return ret;

	r->attr.flags = IB_OCQ_POSTPONE_ARM;
	strlcat(r->name, "_postpone", sizeof(r->name));
	ret = fake_stream_once(r, fdev, false, &stalled);
	fake_result(k, !ret && !atomic_read(&r->failures), r->name, NULL);
	return ret;
}

/*
 * fake_teardown_race: many short streams, each drained (as after
 * ib_drain_qp()) and freed under late callbacks; one cycle in
 * %FAKE_ABRUPT_CYCLE freed halfway, undrained.  The watchdog in every
 * cycle: a drained one must need no rescue after a stall
 * (%FAKE_WATCHDOG_LONG_MS; its cancel drops an idle timer), so that a
 * wakeup the engine loses fails it; one freed halfway ticks fast, so that
 * its ticks race the free.  (teardown_loop has drained cycles without.)
 */
int fake_run_teardown(struct fake_run *r, struct fake_dev *fdev,
		      struct fake_ktap *k)
{
	unsigned int i;
	bool stalled;
	int ret = 0;

	r->inject = true;
	for (i = 0;
	     i < fake_params.cycles && !ret && !atomic_read(&r->failures);
	     i++) {
		r->quiet = i > 0;
		r->abrupt = i % FAKE_ABRUPT_CYCLE == FAKE_ABRUPT_CYCLE - 1;
		r->attr.watchdog_ms =
			fake_watchdog_ms(r, FAKE_WATCHDOG_RACE_MS);
		ret = fake_stream_once(r, fdev, false, &stalled);
	}
	pr_info("# %s: %u cycles of %llu completions, %u freed undrained leaving %llu\n",
		r->name, i, r->total, i / FAKE_ABRUPT_CYCLE, r->undelivered);
	fake_result(k, !ret && !atomic_read(&r->failures), r->name, NULL);
	return ret;
}

void fake_run_free(struct fake_run *r)
{
	fake_flows_free(r);
	bitmap_free(r->seen);
	kfree(r);
}

/*
 * A run of @total completions through CQs of @ncqe entries; @bulk: see
 * struct fake_run.
 */
struct fake_run *fake_run_alloc(const struct fake_scenario *sc,
				enum ib_ocq_mode mode, u64 total,
				unsigned int ncqe, bool bulk)
{
	struct fake_run *r;

	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return NULL;
	strscpy(r->name, fake_mode_names[mode], sizeof(r->name));
	r->sc = sc;
	r->mode = mode;
	r->attr.mode = mode;
	r->attr.policy = sc->policy;
	if (mode == IB_OCQ_PARALLEL)
		r->attr.process = fake_process;
	r->total = total;
	r->cqe = ncqe;
	r->credits = sc->credits;
	r->done_us = sc->done_us;
	r->bulk = bulk;
	if (!bulk) {
		r->seen = bitmap_zalloc(r->total, GFP_KERNEL);
		if (!r->seen) {
			fake_run_free(r);
			return NULL;
		}
	}
	if (fake_flows_alloc(r)) {
		fake_run_free(r);
		return NULL;
	}
	return r;
}
