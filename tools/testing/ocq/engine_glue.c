// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The C side of engine_glue.h: plain wrappers of the engine's API.  The
 * engine itself is drivers/infiniband/core/ocq_engine.c, compiled as it is.
 */
#include <stdio.h>

#include <linux/bitops.h>
#include <ocq_sim.h>
#include <rdma/ib_ocq.h>
#include "ocq_engine.h"
#include "engine_glue.h"

_Static_assert((int)SIM_STRICT == IB_OCQ_STRICT &&
	       (int)SIM_FLOW == IB_OCQ_FLOW &&
	       (int)SIM_PARALLEL == IB_OCQ_PARALLEL, "enum ib_ocq_mode");
_Static_assert((int)SIM_ARM_AUTO == IB_ARM_AUTO &&
	       (int)SIM_ARM_REPORT_MISSED == IB_ARM_REPORT_MISSED &&
	       (int)SIM_ARM_STRONG == IB_ARM_STRONG &&
	       (int)SIM_ARM_DOUBLE_POLL == IB_ARM_DOUBLE_POLL &&
	       (int)SIM_ARM_SOLICITED == IB_ARM_SOLICITED,
	       "enum ib_arm_policy");
_Static_assert(SIM_GATE_RUN == OCQ_RUN && SIM_GATE_TIMER == OCQ_TIMER,
	       "gate bits");

/* the engine and the host's hook, in one allocation */
struct sim_engine {
	struct ocq_engine e;
	struct ocq_engine_ops ops;
	sim_schedule_fn schedule;
	sim_defer_fn defer;
	sim_defer_fn suspend;
};

static void sim_schedule(struct ocq_engine *e, unsigned int unit)
{
	struct sim_engine *se = (struct sim_engine *)e;

	se->schedule(e->cq->cq_context, unit);
}

static void sim_defer(struct ocq_engine *e)
{
	struct sim_engine *se = (struct sim_engine *)e;

	se->defer(e->cq->cq_context);
}

static void sim_suspend(struct ocq_engine *e)
{
	struct sim_engine *se = (struct sim_engine *)e;

	se->suspend(e->cq->cq_context);
}

struct ocq_engine *sim_engine_new(struct ib_cq *cq, const struct sim_attr *a,
				  sim_schedule_fn schedule, sim_defer_fn defer,
				  sim_defer_fn suspend)
{
	struct sim_engine *se = ocq_sim_alloc(sizeof(*se));
	struct ib_ocq_attr attr = {
		.mode = (enum ib_ocq_mode)a->mode,
		.policy = (enum ib_arm_policy)a->policy,
		.flags = (a->postpone_arm ? IB_OCQ_POSTPONE_ARM : 0) |
			 (a->defer_dim ? IB_OCQ_DEFER_DIM : 0),
		.budget = a->budget,
		.nr_domains = a->nr_domains,
		.process = a->process,
		.flow_key = a->flow_key,
		.dispatch = a->dispatch,
		.defer_usecs = a->defer_polls ? 1 : 0,
		.defer_polls = a->defer_polls,
		.suspend_usecs = a->suspend ? 1 : 0,
	};

	if (!se)
		return NULL;
	se->ops.schedule = sim_schedule;
	se->schedule = schedule;
	se->ops.defer = defer ? sim_defer : NULL;
	se->defer = defer;
	se->ops.suspend = suspend ? sim_suspend : NULL;
	se->suspend = suspend;
	if (ocq_engine_init(&se->e, cq, &attr, 2, &se->ops)) {
		ocq_sim_free(se);
		return NULL;
	}
	return &se->e;
}

void sim_engine_free(struct ocq_engine *e)
{
	ocq_sim_free(e);
}

void sim_engine_claims(const struct ocq_engine *e, long *claimed, long *produced)
{
	*claimed = (u32)e->claimed.counter;
	*produced = e->produced;
}

long sim_hol_dones(void)
{
#ifdef IB_OCQ_HOL_DONES
	return IB_OCQ_HOL_DONES;
#else
	return 4; /* an engine without the bound: hold it to the same */
#endif
}

long sim_batch(void)
{
	return OCQ_BATCH;
}

long sim_arm_tries(void)
{
	return IB_POLL_ARM_TRIES;
}

unsigned int sim_engine_defer_min(const struct ocq_engine *e)
{
	return e->defer_min;
}

unsigned int sim_engine_defer_got(const struct ocq_engine *e)
{
	return e->defer_got;
}

unsigned int sim_engine_units(const struct ocq_engine *e)
{
	return e->nr_units;
}

int sim_engine_gate(const struct ocq_engine *e, unsigned int unit)
{
	return e->units[unit].gate.counter;
}

int sim_engine_paused(const struct ocq_engine *e)
{
	return !!(sim_engine_gate(e, OCQ_UNIT_CQ) & OCQ_PAUSED);
}

int sim_engine_parked(const struct ocq_engine *e)
{
	return e->stalled.counter == OCQ_STALL_ANY;
}

void sim_engine_stats(struct ocq_engine *e, struct sim_stats *s)
{
	struct ib_ocq_stats st;

	ocq_engine_stats(e, &st);
	s->events = st.events;
	s->runs = st.runs;
	s->empty_runs = st.empty_runs;
	s->polls = st.polls;
	s->completions = st.completions;
	s->arms = st.arms;
	s->repolls = st.repolls;
	s->yields = st.yields;
	s->pauses = st.pauses;
	s->rescues = st.rescues;
	s->stalls = st.stalls;
	s->domain_runs = st.domain_runs;
	s->cq_errors = st.cq_errors;
	s->max_batch = st.max_batch;
	s->parks = st.parks;
	s->inlined = st.inlined;
	s->defers = st.defers;
	s->contended = st.contended;
	s->busy_polls = st.busy_polls;
	s->suspends = st.suspends;
}

void sim_engine_event(struct ocq_engine *e)
{
	ocq_engine_event(e);
}

void sim_engine_run(struct ocq_engine *e, unsigned int unit)
{
	ocq_engine_run(e, unit);
}

void sim_engine_pause(struct ocq_engine *e)
{
	ocq_engine_pause(e);
}

void sim_engine_resume(struct ocq_engine *e)
{
	ocq_engine_resume(e);
}

void sim_engine_disable(struct ocq_engine *e)
{
	ocq_engine_disable(e);
}

void sim_engine_destroy(struct ocq_engine *e)
{
	ocq_engine_destroy(e);
}

void sim_engine_watchdog(struct ocq_engine *e)
{
	ocq_engine_watchdog(e);
}

int sim_engine_lease(struct ocq_engine *e)
{
	return ocq_engine_lease(e);
}

int sim_engine_timer(struct ocq_engine *e)
{
	return ocq_engine_timer(e);
}

int sim_engine_busy_poll(struct ocq_engine *e, unsigned int budget)
{
	return ocq_engine_busy_poll(e, budget);
}

int sim_engine_tune(struct ocq_engine *e, unsigned int defer_polls, int dim, int suspend)
{
	struct ocq_tune t = {
		.defer_polls = defer_polls,
		.dim = dim,
		.suspend = suspend,
	};

	return ocq_engine_tune(e, &t);
}

int sim_tune_word(const struct sim_tune *t)
{
	return t->defer_polls | (t->dim ? OCQ_TUNE_DIM : 0) |
	       (t->suspend ? OCQ_TUNE_SUSPEND : 0);
}

void sim_tune_decode(int word, struct sim_tune *t)
{
	t->defer_polls = word & OCQ_TUNE_POLLS;
	t->dim = !!(word & OCQ_TUNE_DIM);
	t->suspend = !!(word & OCQ_TUNE_SUSPEND);
}

int sim_engine_tune_word(const struct ocq_engine *e, int applied)
{
	return applied ? e->tune_now : e->tune.counter;
}

unsigned long sim_engine_lease_resumes(const struct ocq_engine *e)
{
	return e->lease_resumes;
}

/*
 * Each slot of the flow pool and of the reorder ring (its completion, not
 * the shimmed @processed), and the poll batch, which the next CQ run
 * refills once this one's done() calls have read it; and the busy poll's
 * count, which every hold of the CQ unit writes (a busy poll before its
 * first pass begins, so that only the gate's take orders it after the
 * last holder's writes); and the moderation a holder of the CQ unit applies
 * from a retune (ocq_tune_apply()), with the deferral's state it starts
 * afresh: only the holders write them, each hold ordered after the last
 * by the gate, so that a write from elsewhere (a retune applied by its
 * caller) is a race with a holder's.
 */
void sim_engine_watch(const struct ocq_engine *e,
		      void (*watch)(const void *p, unsigned long n, const char *name))
{
	unsigned int j;
	char name[64];

	watch(e->wcs, OCQ_BATCH * sizeof(*e->wcs), "the poll batch");
	watch(&e->armed, sizeof(e->armed), "the CQ's armed mark");
	watch(&e->defer_got, sizeof(e->defer_got), "the deferral's count (defer_got)");
	watch(&e->tune_now, sizeof(e->tune_now), "the moderation applied (tune_now)");
	watch(&e->defer_polls, sizeof(e->defer_polls), "the deferral's defer_polls");
	watch(&e->flags, sizeof(e->flags), "the engine's flags");
	watch(&e->defer_min, sizeof(e->defer_min), "the deferral's threshold (defer_min)");
	watch(&e->defer_idle, sizeof(e->defer_idle), "the deferral's empty runs (defer_idle)");
	watch(&e->defer_short, sizeof(e->defer_short), "the deferral's short checks");
	watch(&e->defer_chain, sizeof(e->defer_chain), "the deferral's chain");
	watch(&e->defer_paid, sizeof(e->defer_paid), "the deferral's paid mark");
	for (j = 0; e->fslots && j < e->ring_mask + 1 + e->nr_domains; j++) {
		snprintf(name, sizeof(name), "slot %u of the flow pool", j);
		watch(&e->fslots[j].wc, sizeof(struct ib_wc), name);
	}
	for (j = 0; e->slots && j <= e->ring_mask; j++) {
		snprintf(name, sizeof(name), "reorder slot %u", j);
		watch(&e->slots[j].wc, sizeof(struct ib_wc), name);
	}
}
