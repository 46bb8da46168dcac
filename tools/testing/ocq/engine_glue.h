/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The engine as the C++ checker sees it.  The kernel headers are GNU C, not
 * C++ (they name parameters "private"), so engine_glue.c, compiled as C,
 * includes them and offers this plain interface: the engine is opaque here.
 */
#ifndef OCQ_SIM_ENGINE_GLUE_H
#define OCQ_SIM_ENGINE_GLUE_H

#include <rdma/ib_verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ocq_engine;

/* enum ib_ocq_mode and enum ib_arm_policy, checked in engine_glue.c */
enum sim_mode { SIM_STRICT, SIM_FLOW, SIM_PARALLEL };
enum sim_policy {
	SIM_ARM_AUTO,
	SIM_ARM_REPORT_MISSED,
	SIM_ARM_STRONG,
	SIM_ARM_DOUBLE_POLL,
	SIM_ARM_SOLICITED = 0x10,	/* a modifier, OR'ed into one of the above */
};

struct sim_attr {
	enum sim_mode mode;
	enum sim_policy policy;
	int postpone_arm;
	unsigned int budget;
	unsigned int nr_domains;
	void (*process)(struct ib_cq *cq, struct ib_wc *wc);
	u32 (*flow_key)(struct ib_cq *cq, const struct ib_wc *wc);
	/*
	 * &ib_ocq_attr.dispatch: called in place of wc->wr_cqe->done() (a ULP
	 * that posts with a wr_id); NULL: done()
	 */
	void (*dispatch)(struct ib_cq *cq, struct ib_wc *wc);
	/* deferred re-arm: &ib_ocq_attr.defer_polls; 0: the re-arm is not
	 * deferred, else defer_usecs = 1 (the model has no time) */
	unsigned int defer_polls;
	/* with defer_polls: IB_OCQ_DEFER_DIM */
	int defer_dim;
	/* consumer-driven suspension: suspend_usecs = 1 (busy polls allowed) */
	int suspend;
};

/* gate bits of the CQ unit the world looks at, checked in engine_glue.c */
enum { SIM_GATE_RUN = 1, SIM_GATE_TIMER = 64 };

/* struct ib_ocq_stats, field by field */
struct sim_stats {
	u64 events, runs, empty_runs, polls, completions, arms, repolls;
	u64 yields, pauses, rescues, stalls, domain_runs, cq_errors, max_batch, parks;
	u64 inlined, defers;
	u64 contended, busy_polls, suspends;
};

/* The host's queue_work(): cq->cq_context is passed as @host. */
typedef void (*sim_schedule_fn)(void *host, unsigned int unit);
/*
 * The host's timer (hrtimer_start()) of a deferred re-arm (ops->defer) or
 * of a suspension (ops->suspend): @host as above.
 */
typedef void (*sim_defer_fn)(void *host);

/* ocq_engine_init() on a calloc'ed engine; NULL if it fails */
struct ocq_engine *sim_engine_new(struct ib_cq *cq, const struct sim_attr *a,
				  sim_schedule_fn schedule, sim_defer_fn defer,
				  sim_defer_fn suspend);
/* ocq_engine_destroy(), then free the engine */
void sim_engine_free(struct ocq_engine *e);
unsigned int sim_engine_units(const struct ocq_engine *e);
/* the deferral's threshold now (e->defer_min); read by the CQ run's hooks */
unsigned int sim_engine_defer_min(const struct ocq_engine *e);
/* completions since the last confirmed arm or deferral (e->defer_got) */
unsigned int sim_engine_defer_got(const struct ocq_engine *e);
/* IB_OCQ_PARALLEL: the reorder ring's claimed and produced counts */
void sim_engine_claims(const struct ocq_engine *e, long *claimed, long *produced);
/* IB_OCQ_HOL_DONES: the head-of-line bound of the flow and parallel modes */
long sim_hol_dones(void);
/* OCQ_BATCH: completions per ib_poll_cq() of the engine */
long sim_batch(void);
/* IB_POLL_ARM_TRIES: arms an empty CQ may refuse before the engine backs off */
long sim_arm_tries(void);
int sim_engine_gate(const struct ocq_engine *e, unsigned int unit);
int sim_engine_paused(const struct ocq_engine *e);
/* the CQ run parked: a domain's progress kicks it (e->stalled) */
int sim_engine_parked(const struct ocq_engine *e);
void sim_engine_stats(struct ocq_engine *e, struct sim_stats *s);

void sim_engine_event(struct ocq_engine *e);
void sim_engine_run(struct ocq_engine *e, unsigned int unit);
void sim_engine_pause(struct ocq_engine *e);
void sim_engine_resume(struct ocq_engine *e);
void sim_engine_disable(struct ocq_engine *e);
void sim_engine_destroy(struct ocq_engine *e);
void sim_engine_watchdog(struct ocq_engine *e);
/* ocq_engine_lease(): true while still paused */
int sim_engine_lease(struct ocq_engine *e);
/* ocq_engine_timer(): true if the timer took the CQ unit's run */
int sim_engine_timer(struct ocq_engine *e);
/* ocq_engine_busy_poll(): completions taken, -EBUSY, -EAGAIN or -EOPNOTSUPP */
int sim_engine_busy_poll(struct ocq_engine *e, unsigned int budget);
/*
 * A moderation of the CQ unit (struct ocq_tune), or a word of it (struct
 * ocq_engine @tune, @tune_now) decoded
 */
struct sim_tune {
	unsigned int defer_polls;	/* 0: the re-arm is not deferred */
	int dim;			/* IB_OCQ_DEFER_DIM */
	int suspend;			/* busy polls may suspend the CQ's events */
};
/* ocq_engine_tune(): 0, -EINVAL or -EOPNOTSUPP */
int sim_engine_tune(struct ocq_engine *e, unsigned int defer_polls, int dim, int suspend);
/* @t as the engine's word (ocq_tune_word(), static in the engine) */
int sim_tune_word(const struct sim_tune *t);
void sim_tune_decode(int word, struct sim_tune *t);
/*
 * The word the last retune staged (e->tune), or, with @applied, the one the
 * CQ unit's holders last applied (e->tune_now)
 */
int sim_engine_tune_word(const struct ocq_engine *e, int applied);
/* the pauses the lease ended (@lease_resumes) */
unsigned long sim_engine_lease_resumes(const struct ocq_engine *e);
/* the plain memory the engine hands between contexts, for the race check */
void sim_engine_watch(const struct ocq_engine *e,
		      void (*watch)(const void *p, unsigned long n, const char *name));

#ifdef __cplusplus
}
#endif

#endif /* OCQ_SIM_ENGINE_GLUE_H */
