/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The hooks between the shim headers (C, compiled into the engine) and the
 * model checker (C++).  Every shimmed primitive calls ocq_sim_point() before
 * it acts: that is where the scheduler may switch to another context.  Called
 * from a thread that is not a modelled context, the hooks do nothing.
 */
#ifndef _OCQ_SIM_H
#define _OCQ_SIM_H

#ifdef __cplusplus
extern "C" {
#endif

/* the seeded bugs of seeds.txt (ocq_seeded_bug()) */
enum ocq_sim_bug_id {
	OCQ_SIM_BUG_none,
	OCQ_SIM_BUG_poll_then_arm,
	OCQ_SIM_BUG_positive_is_armed,
	OCQ_SIM_BUG_unserialized,
	OCQ_SIM_BUG_teardown_no_disable,
};

extern int ocq_sim_bug;

/* a scheduling point before primitive @what acts */
void ocq_sim_point(const char *what);
/* a voluntary yield (cpu_relax): wait until another context made a step */
void ocq_sim_spin(const char *what);
/* record the value the primitive just produced, for --replay traces */
void ocq_sim_value(long value);
/* WARN_ON() fired in the engine */
void ocq_sim_warn(const char *file, int line, const char *cond);
/* a tracepoint reads the CQ (cq->res.id in the kernel's) */
void ocq_sim_cq_read(const void *cq);
/* rcu_read_lock(), rcu_read_unlock(), synchronize_rcu() */
void ocq_sim_rcu_read_lock(void);
void ocq_sim_rcu_read_unlock(void);
void ocq_sim_synchronize_rcu(void);
void *ocq_sim_alloc(unsigned long size);

/*
 * The weak memory model (tools/testing/ocq/mm.cpp): every shimmed access of
 * shared memory goes through it.  @size is 1, 2, 4 or 8; values are the raw
 * bits, zero-extended.
 */
enum { OCQ_MM_RELAXED, OCQ_MM_ACQUIRE, OCQ_MM_RELEASE, OCQ_MM_FULL };
enum { OCQ_MM_ADD, OCQ_MM_AND, OCQ_MM_OR, OCQ_MM_XCHG };
unsigned long ocq_mm_load(const volatile void *p, int size, int order, const char *what);
void ocq_mm_store(volatile void *p, int size, unsigned long v, int order);
/* returns the old value */
unsigned long ocq_mm_rmw(volatile void *p, int size, int op, long arg, int order);
/* @order on success; a failure is relaxed and stores the value in *@old */
int ocq_mm_cmpxchg(volatile void *p, int size, unsigned long *old, unsigned long val,
		   int order);
void ocq_mm_fence(int order);
void ocq_sim_free(const void *p);

#ifdef __cplusplus
}
#endif

#endif /* _OCQ_SIM_H */
