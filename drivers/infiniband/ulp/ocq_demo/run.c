// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ocq_demo: the life of a run.  od_run_start() builds both sides and
 * connects; the clients then keep calls in flight from their completion
 * callbacks.  A run ends in one of three ways:
 *
 * - by itself (call target, duration, or no progress for stall_ms): the
 *   monitor stops new calls, waits for the answers, and hands the end to
 *   od_run_end();
 * - by "stop": od_run_stop() quiesces and tears down in the writer's context;
 * - by device removal or a peer's disconnect: the rdma_cm handler calls
 *   od_run_end(), which queues the teardown; rdma_cm waits for our ids to be
 *   destroyed before it lets the device go.
 *
 * All teardown runs under od_mutex, in one order: disconnect, drain the QPs,
 * take the results, destroy QPs and buffers, CQs, PDs, and the rdma_cm ids
 * last.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include "ocq_demo.h"

struct od_run od_run;
/* serialises commands, start, stop and teardown of od_run */
DEFINE_MUTEX(od_mutex);

/* ---- results ---- */

static void od_add_counts(struct od_result *r, const struct od_counts *c)
{
	int i;

	r->calls += c->calls;
	r->bytes += c->bytes;
	r->errors += c->errors;
	r->credit_stalls += c->credit_stalls;
	r->reorders += c->reorders;
	r->lost += c->lost;
	r->failed += c->failed;
	r->duplicated += c->duplicated;
	r->dropped += c->dropped;
	for (i = 0; i < OD_HIST; i++)
		r->hist[i] += c->hist[i];
}

static void od_add_acct(struct od_result *r, struct ib_sq_acct *acct,
			bool ready)
{
	struct ib_sq_acct_stats st;

	if (!ready)
		return;
	ib_sq_acct_get_stats(acct, &st);
	r->sends += st.posts;
	r->signaled += st.signaled;
}

static void od_add_cq(struct od_result *r, struct od_cq *dcq)
{
	struct ib_ocq_stats st;

	r->completions += atomic64_read(&dcq->completions);
	r->cpu_ns += atomic64_read(&dcq->cpu_ns);
	if (dcq->ocq) {
		ib_ocq_get_stats(dcq->ocq, &st);
		r->events += st.events;
		/* a busy poll is a processing run too, in the ULP's thread */
		r->runs += st.runs + st.busy_polls;
		r->empty_runs += st.empty_runs;
		r->arms += st.arms;
		r->repolls += st.repolls;
		return;
	}
	r->events += atomic64_read(&dcq->events);
	r->runs += atomic64_read(&dcq->runs);
	r->empty_runs += atomic64_read(&dcq->empty_runs);
	r->arms += atomic64_read(&dcq->arms);
	r->repolls += atomic64_read(&dcq->repolls);
}

/**
 * od_run_result - sum up a live run's counters
 * @run: the run, active; od_mutex held
 * @r: filled in
 */
void od_run_result(struct od_run *run, struct od_result *r)
{
	int i;

	lockdep_assert_held(&od_mutex);
	memset(r, 0, sizeof(*r));
	for (i = 0; run->cconns && i < run->p.conns; i++) {
		od_add_counts(r, &run->cconns[i].cnt);
		r->issued += READ_ONCE(run->cconns[i].next_xid);
		od_add_acct(r, &run->cconns[i].acct, run->cconns[i].acct_ready);
	}
	for (i = 0; run->sconns && i < run->p.conns; i++) {
		struct od_counts sc = run->sconns[i].cnt;

		/*
		 * The server's calls are the clients' calls: count them once.
		 * In the open loop only the server counts them (messages taken).
		 */
		if (!run->p.rate)
			sc.calls = 0;
		sc.bytes = 0;
		memset(sc.hist, 0, sizeof(sc.hist));
		od_add_counts(r, &sc);
		od_add_acct(r, &run->sconns[i].acct, run->sconns[i].acct_ready);
	}
	od_add_cq(r, &run->cli.cq);
	od_add_cq(r, &run->srv.cq);
	r->backlog = od_stream_backlog(run);
}

/* ---- teardown ---- */

static u32 od_outstanding(struct od_run *run)
{
	u32 n = 0;
	int i;

	if (run->p.rate)
		return od_stream_outstanding(run);
	for (i = 0; i < run->p.conns; i++)
		n += READ_ONCE(run->cconns[i].outstanding);
	return n;
}

/*
 * Stop new calls and wait for the answers to those in flight, as long as
 * answers keep coming: a stop gives up on them only after stall_ms without
 * one, as the monitor does.
 */
static void od_quiesce(struct od_run *run)
{
	unsigned int stall_ms = max(READ_ONCE(od_stall_ms), 100U);
	u64 done = atomic64_read(&run->completed), now;
	unsigned long last = jiffies;

	WRITE_ONCE(run->stopping, true);
	while (od_outstanding(run) &&
	       time_before(jiffies, last + msecs_to_jiffies(stall_ms))) {
		msleep(OD_TICK_MS / 5);
		now = atomic64_read(&run->completed);
		if (now != done) {
			done = now;
			last = jiffies;
		}
	}
}

/**
 * od_port_up - whether the run's port is up, or need not be waited for
 * @run: the run
 *
 * Context: any context but hard IRQ; the run active (od_mutex held, or
 * from its monitor or its completions).
 * Return: true if the port is ACTIVE, or the device is going away.
 */
bool od_port_up(struct od_run *run)
{
	enum ib_port_state st;

	if (READ_ONCE(run->removing) || !run->dev)
		return true;
	if (ib_get_cached_port_state(run->dev, run->port, &st))
		return true;
	return st == IB_PORT_ACTIVE;
}

/*
 * Wait until the port is up again, OD_PORT_WAIT_MS at most.  Tearing down
 * a connection sends CM MADs (DREQ, REJ), and rxe's GSI QP does not survive
 * a send while its netdev is down: the MAD is never completed (then
 * rdma_destroy_id() waits for ever) or the QP is left in the error state,
 * and no connection can be made on the device again.  A completion error
 * can come before the port is marked down: let the link state settle.
 */
static void od_wait_port(struct od_run *run)
{
	unsigned long end = jiffies + msecs_to_jiffies(OD_PORT_WAIT_MS);

	if (READ_ONCE(run->removing))
		return;
	msleep(OD_SETTLE_MS);
	if (od_port_up(run))
		return;
	pr_info("run %u: port %u is down, waiting for it\n", run->gen,
		run->port);
	while (!od_port_up(run) && time_before(jiffies, end))
		msleep(OD_TICK_MS);
	if (!od_port_up(run)) {
		pr_info("run %u: port %u still down, tearing down\n", run->gen,
			run->port);
		return;
	}
	/* the routes come back with the link */
	msleep(OD_SETTLE_MS);
}

/* Whether any connection has an rdma_cm id to disconnect or destroy. */
static bool od_has_conns(struct od_run *run)
{
	int i;

	for (i = 0; run->cconns && i < run->p.conns; i++)
		if (run->cconns[i].id)
			return true;
	for (i = 0; run->sconns && i < run->p.conns; i++)
		if (run->sconns[i].id)
			return true;
	return false;
}

static void od_drain(struct ib_qp *qp)
{
	if (qp)
		ib_drain_qp(qp);
}

static void od_destroy_qp(struct rdma_cm_id *id, struct ib_qp **qp)
{
	if (!*qp || !id)
		return;
	rdma_destroy_qp(id);
	*qp = NULL;
}

static void od_destroy_id(struct rdma_cm_id **id)
{
	if (!IS_ERR_OR_NULL(*id))
		rdma_destroy_id(*id);
	WRITE_ONCE(*id, NULL); /* see od_sconn_of() */
}

/* Disconnect and drain every QP: no completion comes after this. */
static void od_teardown_qps(struct od_run *run)
{
	int i;

	for (i = 0; run->cconns && i < run->p.conns; i++)
		if (run->cconns[i].qp && run->cconns[i].id)
			rdma_disconnect(run->cconns[i].id);
	for (i = 0; run->sconns && i < run->p.conns; i++)
		if (run->sconns[i].qp && run->sconns[i].id)
			rdma_disconnect(run->sconns[i].id);
	for (i = 0; run->cconns && i < run->p.conns; i++)
		od_drain(run->cconns[i].qp);
	for (i = 0; run->sconns && i < run->p.conns; i++)
		od_drain(run->sconns[i].qp);
}

static void od_teardown_conns(struct od_run *run)
{
	int i;

	for (i = 0; run->cconns && i < run->p.conns; i++) {
		od_destroy_qp(run->cconns[i].id, &run->cconns[i].qp);
		od_cconn_teardown(&run->cconns[i]);
	}
	for (i = 0; run->sconns && i < run->p.conns; i++) {
		od_destroy_qp(run->sconns[i].id, &run->sconns[i].qp);
		od_sconn_teardown(&run->sconns[i]);
	}
}

static void od_teardown_side(struct od_side *side)
{
	od_cq_destroy(&side->cq);
	if (!IS_ERR_OR_NULL(side->pd))
		ib_dealloc_pd(side->pd);
	side->pd = NULL;
}

static void od_teardown_ids(struct od_run *run)
{
	int i;

	for (i = 0; run->cconns && i < run->p.conns; i++)
		od_destroy_id(&run->cconns[i].id);
	for (i = 0; run->sconns && i < run->p.conns; i++)
		od_destroy_id(&run->sconns[i].id);
	od_destroy_id(&run->listen_id); /* if od_teardown() did not */
}

/* Free everything of the run and record how it ended.  od_mutex held. */
static void od_teardown(struct od_run *run, enum od_state how)
{
	int i;

	lockdep_assert_held(&od_mutex);
	WRITE_ONCE(run->stopping, true);
	atomic_cmpxchg(&run->ending, 0, how);
	/* no message is posted after this */
	od_stream_stop(run, how);
	/*
	 * The listener first: rdma_destroy_id() waits for a connect request
	 * being handled, and no other comes to find a side half torn down.
	 */
	od_destroy_id(&run->listen_id);
	if (how == OD_ABORTED && od_has_conns(run))
		od_wait_port(run);
	/* the monitor keeps resuming postponed CQs until the drains are done */
	od_teardown_qps(run);
	cancel_delayed_work_sync(&run->monitor);
	/* an aborted run's unanswered calls failed, they are not "lost" */
	for (i = 0; run->cconns && i < run->p.conns; i++)
		od_cconn_lost(&run->cconns[i], how == OD_ABORTED);
	od_stream_lost(run, how == OD_ABORTED);
	od_run_result(run, &run->res);
	od_teardown_conns(run);
	od_teardown_side(&run->cli);
	od_teardown_side(&run->srv);
	od_teardown_ids(run);
	kfree(run->cconns);
	kfree(run->sconns);
	run->cconns = NULL;
	run->sconns = NULL;
	run->dev = NULL;
	run->t_end = ktime_get_ns();
	run->active = false;
	WRITE_ONCE(run->state, how);
	pr_info("run %u %s: %llu calls, %llu errors, %llu reorders, %llu lost, %llu failed, %llu duplicated\n",
		run->gen, od_state_names[how], run->res.calls, run->res.errors,
		run->res.reorders, run->res.lost, run->res.failed,
		run->res.duplicated);
}

static void od_end_work(struct work_struct *work)
{
	struct od_run *run = container_of(work, struct od_run, end_work);
	int how;

	mutex_lock(&od_mutex);
	how = atomic_read(&run->ending);
	/* a stop or a new start may have come first */
	if (run->active && how)
		od_teardown(run, how);
	mutex_unlock(&od_mutex);
}

/**
 * od_run_end - end the run from any context
 * @run: the run
 * @how: %OD_DONE or %OD_ABORTED
 *
 * The first caller wins; the teardown runs from a work item.
 *
 * Context: any context but hard IRQ.
 */
void od_run_end(struct od_run *run, enum od_state how)
{
	WRITE_ONCE(run->stopping, true);
	if (!atomic_cmpxchg(&run->ending, 0, how))
		queue_work(od_wq, &run->end_work);
}

/**
 * od_run_removed - the device goes away: end the run without waiting
 * @run: the run
 *
 * Context: any context but hard IRQ.
 */
void od_run_removed(struct od_run *run)
{
	WRITE_ONCE(run->removing, true);
	od_run_end(run, OD_ABORTED);
}

/* ---- the monitor ---- */

static bool od_run_finished(struct od_run *run, u64 done)
{
	u64 elapsed = (ktime_get_ns() - run->t_start) / NSEC_PER_MSEC;

	if (run->p.calls && done >= run->p.calls)
		return true;
	return run->p.duration_ms && elapsed >= run->p.duration_ms;
}

/* Tick: end the run at its target, its duration, or when it stalls. */
static void od_monitor(struct work_struct *work)
{
	struct od_run *run =
		container_of(to_delayed_work(work), struct od_run, monitor);
	u64 done = atomic64_read(&run->completed);
	/* the parameter is writable at any time; 100 ms at least */
	unsigned int stall_ms = max(READ_ONCE(od_stall_ms), 100U);

	if (run->p.postpone) {
		od_cq_resume(&run->cli.cq);
		od_cq_resume(&run->srv.cq);
	}
	if (atomic_read(&run->ending))
		goto again;
	/* rxe may keep the QPs of a downed link quiet: end the run now */
	if (!od_port_up(run)) {
		pr_info("run %u: port %u is down, ending it\n", run->gen,
			run->port);
		od_run_end(run, OD_ABORTED);
		goto again;
	}
	if (od_run_finished(run, done))
		WRITE_ONCE(run->stopping, true);
	if (od_disconnect_after && done >= od_disconnect_after &&
	    !run->peer_disconnected) {
		/* the server end hangs up: its client sees DISCONNECTED */
		run->peer_disconnected = true;
		pr_info("run %u: server disconnects connection 0\n", run->gen);
		rdma_disconnect(run->sconns[0].id);
	}
	if (done != run->progress) {
		run->progress = done;
		run->progress_t = jiffies;
	}
	if (READ_ONCE(run->stopping) && !od_outstanding(run)) {
		od_run_end(run, OD_DONE);
	} else if (time_after(jiffies,
			      run->progress_t + msecs_to_jiffies(stall_ms))) {
		pr_info("run %u: no progress for %u ms, ending it\n", run->gen,
			stall_ms);
		od_run_end(run, OD_DONE);
	}
again:
	queue_delayed_work(od_wq, &run->monitor, msecs_to_jiffies(OD_TICK_MS));
}

/* ---- start ---- */

static int od_run_alloc(struct od_run *run)
{
	int i;

	run->cconns = kcalloc(run->p.conns, sizeof(*run->cconns), GFP_KERNEL);
	run->sconns = kcalloc(run->p.conns, sizeof(*run->sconns), GFP_KERNEL);
	if (!run->cconns || !run->sconns) {
		/* teardown walks the arrays: none, rather than one unset */
		kfree(run->cconns);
		kfree(run->sconns);
		run->cconns = NULL;
		run->sconns = NULL;
		return -ENOMEM;
	}
	for (i = 0; i < run->p.conns; i++) {
		run->cconns[i].run = run;
		run->cconns[i].idx = i;
		spin_lock_init(&run->cconns[i].lock);
		init_completion(&run->cconns[i].cm_done);
		run->sconns[i].run = run;
		run->sconns[i].idx = i;
		spin_lock_init(&run->sconns[i].lock);
		INIT_LIST_HEAD(&run->sconns[i].backlog);
	}
	return 0;
}

static int od_alloc_pd(struct od_run *run, struct od_side *side)
{
	side->pd = ib_alloc_pd(run->dev, 0);
	if (IS_ERR(side->pd)) {
		int ret = PTR_ERR(side->pd);

		side->pd = NULL;
		return ret;
	}
	return 0;
}

/*
 * Queue sizes the device cannot hold are refused here, with the reason,
 * rather than by the connection's accept later, which shows only as a
 * rejected connection.
 */
static int od_check_qp_caps(struct od_run *run, const struct ib_qp_cap *cap)
{
	u32 max = run->dev->attrs.max_qp_wr;

	if (cap->max_send_wr <= max && cap->max_recv_wr <= max)
		return 0;
	pr_info("run %u: a QP of %u sends and %u receives: the device takes %u\n",
		run->gen, cap->max_send_wr, cap->max_recv_wr, max);
	return -EINVAL;
}

static int od_check_cqe(struct od_run *run, int ccqe, int scqe)
{
	int max = run->dev->attrs.max_cqe;

	if (ccqe <= max && scqe <= max)
		return 0;
	pr_info("run %u: CQs of %d and %d entries: the device takes %d\n",
		run->gen, ccqe, scqe, max);
	return -EINVAL;
}

/* Buffers of every connection, then the CQs sized for all of them. */
static int od_run_build(struct od_run *run)
{
	struct ib_qp_cap cap;
	int i, ret, ccqe = 16, scqe = 16;

	ret = od_alloc_pd(run, &run->cli);
	if (!ret)
		ret = od_alloc_pd(run, &run->srv);
	for (i = 0; !ret && i < run->p.conns; i++) {
		ret = od_cconn_setup(&run->cconns[i]);
		if (!ret)
			ret = od_sconn_setup(&run->sconns[i]);
		if (ret)
			break;
		od_cconn_qp_caps(&run->cconns[i], &cap);
		ccqe += cap.max_send_wr + cap.max_recv_wr;
		ret = od_check_qp_caps(run, &cap);
		od_sconn_qp_caps(&run->sconns[i], &cap);
		scqe += cap.max_send_wr + cap.max_recv_wr;
		if (!ret)
			ret = od_check_qp_caps(run, &cap);
	}
	if (!ret)
		ret = od_check_cqe(run, ccqe, scqe);
	if (!ret)
		ret = od_cq_create(run, &run->cli.cq, ccqe, od_client_process);
	if (!ret)
		ret = od_cq_create(run, &run->srv.cq, scqe, od_server_process);
	return ret;
}

static void od_run_reset(struct od_run *run, const struct od_params *p)
{
	run->p = *p;
	run->gen++;
	run->runs++;
	atomic_set(&run->ending, 0);
	run->stopping = false;
	atomic64_set(&run->issued, 0);
	atomic_set(&run->errors_logged, 0);
	atomic64_set(&run->completed, 0);
	memset(&run->cli, 0, sizeof(run->cli));
	memset(&run->srv, 0, sizeof(run->srv));
	memset(&run->res, 0, sizeof(run->res));
	run->progress = 0;
	run->progress_t = jiffies;
	run->peer_disconnected = false;
	run->pacer = NULL;
	run->due = 0;
	run->paced = 0;
	run->pace_conn = 0;
	run->pace_ended = false;
	run->removing = false;
	run->port = 1;
	run->t_start = ktime_get_ns();
	run->t_end = 0;
	run->active = true;
	WRITE_ONCE(run->state, OD_RUNNING);
}

/**
 * od_run_start - start a run
 * @p: its parameters, checked
 *
 * Context: process context, od_mutex held, no run active.
 * Return: 0, or -errno with the run torn down and marked aborted.
 */
int od_run_start(const struct od_params *p)
{
	struct od_run *run = &od_run;
	int i, ret;

	lockdep_assert_held(&od_mutex);
	od_run_reset(run, p);
	ret = od_listen(run);
	if (!ret)
		ret = od_run_alloc(run);
	if (!ret)
		ret = od_run_build(run);
	if (!ret)
		ret = od_listen_start(run);
	if (!ret)
		ret = od_connect_all(run);
	if (!ret) {
		/* the open loop's messages fall due from here */
		run->t_start = ktime_get_ns();
		ret = od_stream_start(run);
	}
	if (ret) {
		od_teardown(run, OD_ABORTED);
		return ret;
	}
	run->progress_t = jiffies;
	queue_delayed_work(od_wq, &run->monitor, msecs_to_jiffies(OD_TICK_MS));
	for (i = 0; i < run->p.conns; i++)
		od_cconn_kick(&run->cconns[i]);
	return 0;
}

/**
 * od_run_stop - stop the active run: quiesce, tear down
 *
 * Context: process context, od_mutex held.
 * Return: 0, or -EINVAL if no run is active.
 */
int od_run_stop(void)
{
	struct od_run *run = &od_run;
	int how;

	lockdep_assert_held(&od_mutex);
	if (!run->active)
		return -EINVAL;
	atomic_cmpxchg(&run->ending, 0, OD_STOPPED);
	how = atomic_read(&run->ending);
	if (how != OD_ABORTED)
		od_quiesce(run);
	od_teardown(run, how);
	return 0;
}

/**
 * od_run_init - set up the run's work items
 */
void od_run_init(void)
{
	INIT_DELAYED_WORK(&od_run.monitor, od_monitor);
	INIT_WORK(&od_run.end_work, od_end_work);
}

/**
 * od_run_exit - stop a run still active (module unload)
 */
void od_run_exit(void)
{
	mutex_lock(&od_mutex);
	if (od_run.active)
		od_run_stop();
	mutex_unlock(&od_mutex);
	cancel_work_sync(&od_run.end_work);
}
