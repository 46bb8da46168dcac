// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ocq_demo: the open loop (rate > 0).  The clients post messages at a
 * fixed rate whatever the server does: no credits, no replies.  A pacer
 * thread works out from the clock how many messages fell due since the
 * run started and posts those it has not posted yet, round robin over the
 * connections (od_cconn_stream()).  A message that finds its connection's
 * send queue full is dropped and counted, never sent later: the rate
 * offered is the one asked for, and a sender held back shows as drops
 * rather than as a lower rate.  A pacer that gets too little CPU to post
 * what fell due shows as its backlog: the messages due by its last look
 * at the clock and not yet posted, counted when the run stops.  The
 * server takes each message as a receive completion on its CQ, on
 * whatever path the run has, and burns work_ns on it.
 *
 * Why a kthread with usleep_range() and not an hrtimer: posting takes the
 * connection's lock with spin_lock_bh(), which a hard-interrupt timer
 * callback must not; and the pacer counts what fell due by the clock, so
 * a late wake-up (under TCG one can be milliseconds late) posts what it
 * owes in one go instead of lowering the rate, which a timer per message
 * would not.  One wake-up per OD_PACE_US also keeps the pacer's cost per
 * message small next to what is measured.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/math64.h>
#include <linux/sched.h>
#include "ocq_demo.h"

/*
 * The messages due by now: the rate over the time since the start, up to
 * the run's duration, and at most its target.
 */
static u64 od_pace_due(struct od_run *run)
{
	u64 ns = ktime_get_ns() - run->t_start, due;

	if (run->p.duration_ms)
		ns = min_t(u64, ns, (u64)run->p.duration_ms * NSEC_PER_MSEC);
	due = mul_u64_u32_div(ns, run->p.rate, NSEC_PER_SEC);
	return run->p.calls ? min_t(u64, due, run->p.calls) : due;
}

/* Post one message on the next connection; false to end this turn. */
static bool od_pace_one(struct od_run *run)
{
	struct od_cconn *c = &run->cconns[run->pace_conn];
	int ret;

	run->pace_conn = (run->pace_conn + 1) % run->p.conns;
	WRITE_ONCE(run->paced, run->paced + 1);
	ret = od_cconn_stream(c);
	/* a full queue or a connection down: counted as dropped */
	if (!ret || ret == -ENOSPC || ret == -ENOTCONN)
		return true;
	if (od_log_error(run))
		pr_info("conn %d: posting a message failed: %d\n", c->idx, ret);
	od_run_end(run, OD_ABORTED);
	return false;
}

/*
 * One turn: post what fell due since the last one.  The first turn that
 * finds the run stopping reads the clock a last time and posts nothing:
 * what fell due until then and was not posted stays as the backlog.
 */
static void od_pace(struct od_run *run)
{
	bool stopping = READ_ONCE(run->stopping);

	if (run->pace_ended)
		return;
	WRITE_ONCE(run->due, od_pace_due(run));
	if (stopping) {
		/*
		 * Posts nothing more.  Pairs with smp_load_acquire() in
		 * od_stream_outstanding(): who sees this sees every post's
		 * next_xid.
		 */
		smp_store_release(&run->pace_ended, true);
		return;
	}
	while (run->paced < run->due && !READ_ONCE(run->stopping)) {
		if (!od_pace_one(run))
			break;
		cond_resched();
	}
	if (run->p.calls && run->paced >= run->p.calls)
		WRITE_ONCE(run->stopping, true);
}

static int od_pacer(void *data)
{
	struct od_run *run = data;

	while (!kthread_should_stop()) {
		od_pace(run);
		usleep_range(OD_PACE_US, OD_PACE_US + OD_PACE_US / 4);
	}
	return 0;
}

/**
 * od_stream_start - start the open loop's pacer, if the run has a rate
 * @run: the run, connected; its start time set
 *
 * Context: process context, od_mutex held.
 * Return: 0 or -errno.
 */
int od_stream_start(struct od_run *run)
{
	struct task_struct *t;

	if (!run->p.rate)
		return 0;
	t = kthread_run(od_pacer, run, "ocq_demo_pacer");
	if (IS_ERR(t))
		return PTR_ERR(t);
	run->pacer = t;
	return 0;
}

/**
 * od_stream_stop - stop the pacer: no message is posted after this
 * @run: the run
 * @how: how it ended
 *
 * A run done may be torn down before its pacer woke to see it stop (the
 * server had nothing left to take): its backlog is then counted here, up to
 * the end of its duration or its target (od_pace_due() caps the clock).
 *
 * Context: process context, od_mutex held.
 */
void od_stream_stop(struct od_run *run, enum od_state how)
{
	if (!run->pacer)
		return;
	kthread_stop(run->pacer);
	run->pacer = NULL;
	if (!run->pace_ended && how == OD_DONE)
		WRITE_ONCE(run->due, od_pace_due(run));
}

/* Messages the client of connection @i posted and its server has not taken. */
static u32 od_stream_pending(struct od_run *run, int i)
{
	u32 posted = READ_ONCE(run->cconns[i].next_xid);
	u32 taken = od_sconn_taken(&run->sconns[i]);

	/* more taken than posted is a duplicate, counted as such */
	return (s32)(posted - taken) > 0 ? posted - taken : 0;
}

/**
 * od_stream_backlog - open loop: messages due that the pacer has not posted
 * @run: the run
 *
 * Context: any; a racy read while the pacer runs, final once it stopped.
 * Return: the count (0 in the closed loop).
 */
u64 od_stream_backlog(struct od_run *run)
{
	u64 due = READ_ONCE(run->due);
	u64 paced = READ_ONCE(run->paced);

	/* a racy read may see @paced move past the @due it read first */
	return due > paced ? due - paced : 0;
}

/**
 * od_stream_outstanding - open loop: messages posted and not yet taken
 * @run: the run, active
 *
 * Until the pacer has seen the run stopping it may be posting a message
 * whose next_xid is not counted yet: the run is not quiet, whatever the
 * connections say.
 *
 * Context: any; a racy sum while the run goes on.
 * Return: the count, at least 1 while the pacer may still post.
 */
u32 od_stream_outstanding(struct od_run *run)
{
	u32 n = 0;
	int i;

	/* pairs with smp_store_release() in od_pace() */
	if (!smp_load_acquire(&run->pace_ended))
		return 1;

	for (i = 0; i < run->p.conns; i++)
		n += od_stream_pending(run, i);
	return n;
}

/**
 * od_stream_lost - open loop: count the messages the server never took
 * @run: the run, its QPs drained
 * @aborted: the run was aborted: they failed (in flight at the error)
 *	rather than got lost
 *
 * Context: process context, od_mutex held.
 */
void od_stream_lost(struct od_run *run, bool aborted)
{
	struct od_cconn *c;
	u32 n;
	int i;

	if (!run->p.rate || !run->cconns || !run->sconns)
		return;
	for (i = 0; i < run->p.conns; i++) {
		c = &run->cconns[i];
		n = od_stream_pending(run, i);
		spin_lock_bh(&c->lock);
		if (aborted)
			c->cnt.failed += n;
		else
			c->cnt.lost += n;
		spin_unlock_bh(&c->lock);
	}
}
