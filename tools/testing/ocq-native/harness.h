/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One ordered CQ on real threads: the fake CQ, the engine (or the raw
 * drain loop it is compared with), the host's work queue and tick
 * threads, the producers, and the ULP whose done() checks the ordering.
 */
#ifndef OCQ_NATIVE_HARNESS_H
#define OCQ_NATIVE_HARNESS_H

#include <pthread.h>
#include <linux/atomic.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_ocq.h>
#include "ocq_engine.h"
#include "fake_cq.h"
#include "host.h"

/* what consumes the CQ */
enum consumer { C_STRICT, C_FLOW, C_PARALLEL, C_RAW };

struct config {
	enum consumer consumer;
	unsigned int workers;		/* work queue threads */
	unsigned int nr_domains;	/* 0: the engine's default (workers) */
	unsigned int producers;
	unsigned int qps;
	unsigned int cqe;
	unsigned int budget;		/* 0: the engine's default */
	enum ib_arm_policy policy;
	bool postpone_arm;
	unsigned int lease_us;		/* 0: no lease (pauses end on resume) */
	unsigned int watchdog_us;	/* 0: no watchdog */
	unsigned int flush_every;	/* every Nth completion fails (flush) */
	bool flow_key;			/* flow: two QPs per flow (a flow_key) */
	unsigned int pause_every;	/* done() pauses the engine every Nth */
	unsigned int defer_us;		/* deferred re-arm's delay; 0: none */
	unsigned int suspend_us;	/* suspension's delay; 0: no busy poll */
	u64 cost_ns;			/* done(), or process() in parallel */
	u64 completions;
};

/* a request: one completion, checked exactly once */
struct req {
	struct ib_cqe cqe;
	u32 qp;
	u32 qseq;
	int processed;	/* process() calls */
	int done;	/* done() calls */
};

struct qp_ctx {
	struct ib_qp qp;
	u32 next;	/* producer's: next qseq */
	u32 expect;	/* done()'s: next qseq expected */
	int in_done;
} ____cacheline_aligned_in_smp;

struct harness;

/*
 * The host's hrtimer of the deferral and the suspension: a thread that
 * fires once @deadline (ns, 0: not pending) passes; a start moves a
 * pending deadline.  Stopping it waits for a callback under way, as
 * hrtimer_cancel() does.  Fields under @lock.
 */
struct htimer {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	u64 deadline;
	bool stop;
	u64 fires;	/* callbacks */
	u64 takes;	/* ... that took the CQ unit's run */
};

struct unit_work {
	struct work w;
	struct harness *h;
	unsigned int unit;
};

struct harness {
	struct fake_cq fcq;
	struct ocq_engine e;
	struct ocq_engine_ops ops;
	struct config cfg;
	struct workqueue wq;
	struct unit_work *uw;
	unsigned int nr_uw;
	struct unit_work raw;
	struct tick lease, watchdog;
	struct htimer timer;
	bool timer_live;
	int engine_live;
	int disabled; /* ocq_engine_disable() was called */
	struct req *reqs;
	struct qp_ctx *qps;
	pthread_t *prod;
	/* done()'s state: relaxed atomics, so that it adds no ordering */
	u32 expect;
	int in_done;
	int in_process;
	int max_process;
	int domains_in_done;
	int max_domains_in_done;
	int torn_down;
	int lease_stopped;
	u64 delivered;
	u64 failures;
	/* the waiter for all completions */
	pthread_mutex_t lock;
	pthread_cond_t all_done;
	bool signalled;
	u64 t_start, t_end;
};

int harness_init(struct harness *h, const struct config *cfg);
void harness_start(struct harness *h);
/* wait until every completion was done(), at most @timeout_ms; 0 if so */
int harness_wait(struct harness *h, unsigned int timeout_ms);
/* the host's teardown: disable, cancel, destroy the CQ and the engine */
void harness_teardown(struct harness *h);
/* after teardown: the checks that need everything quiet; failures added */
void harness_final_checks(struct harness *h, bool complete);
void harness_free(struct harness *h);
void harness_fail(struct harness *h, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
u64 harness_delivered(struct harness *h);

#endif /* OCQ_NATIVE_HARNESS_H */
