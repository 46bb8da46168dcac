/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The hooks between the shim headers (compiled into the engine) and the
 * native harness: warnings, RCU, allocations.  Unlike the model checker's
 * shims nothing here serialises: the engine runs on real threads.
 */
#ifndef _OCQ_NATIVE_H
#define _OCQ_NATIVE_H

#include <stddef.h>

/*
 * The seeded bugs (../ocq/seeds.txt, ocq_seeded_bug()), switchable at run time
 * in the sanitizer builds: "make tsan-selftest" proves that a known
 * unserialised run is reported.  The bench build compiles the file as is.
 */
enum ocq_native_bug_id {
	OCQ_NATIVE_BUG_none,
	OCQ_NATIVE_BUG_poll_then_arm,
	OCQ_NATIVE_BUG_positive_is_armed,
	OCQ_NATIVE_BUG_unserialized,
	OCQ_NATIVE_BUG_teardown_no_disable,
};

extern int ocq_native_bug;

/*
 * Jitter (sanitizer builds, check --jitter): after a fully ordered RMW
 * (the gates' kicks, releases, pauses and resumes), now and then yield
 * the CPU or sleep a little, so that the windows between a gate's cmpxchg
 * and what its winner does next (schedule, kick) are hit far more often
 * than the scheduler alone would.
 */
extern int ocq_native_jitter_on;
void ocq_native_jitter(void);
#ifdef OCQ_NATIVE_JITTER
#define ocq_native_maybe_jitter()					\
	do {								\
		if (__builtin_expect(ocq_native_jitter_on, 0))		\
			ocq_native_jitter();				\
	} while (0)
#else
#define ocq_native_maybe_jitter()	do { } while (0)
#endif

/*
 * The count build of make cost (-DOCQ_NATIVE_COUNT, cost.c): each locked
 * instruction the shims stand for on x86 is counted, an atomic
 * read-modify-write (cmpxchg, the fetch_ and void RMWs, inc, or, andnot ...;
 * a failed cmpxchg too: LOCK CMPXCHG is locked either way) and smp_mb()
 * separately; and each marked write (WRITE_ONCE(), smp_store_release(),
 * atomic_set(), the RMWs) is shown to cost.c's tracker of the cache lines
 * two units write.  Every other build compiles them to nothing, so that the
 * instructions callgrind counts are the engine's own.
 */
#ifdef OCQ_NATIVE_COUNT
void ocq_native_count_rmw(const volatile void *p);
void ocq_native_count_mb(void);
void ocq_native_count_write(const volatile void *p);
#else
#define ocq_native_count_rmw(p)		((void)0)
#define ocq_native_count_mb()		((void)0)
#define ocq_native_count_write(p)	((void)0)
#endif

/* WARN_ON() fired: counted, printed; the run fails */
void ocq_native_warn(const char *file, int line, const char *cond);
/* warnings so far */
long ocq_native_warnings(void);
/* rcu_read_lock(), rcu_read_unlock(), synchronize_rcu() */
void ocq_native_rcu_read_lock(void);
void ocq_native_rcu_read_unlock(void);
void ocq_native_synchronize_rcu(void);
/* counted zeroed allocations, for the leak check of every scenario */
void *ocq_native_alloc(size_t n, size_t size);
void ocq_native_free(const void *p);
long ocq_native_live_allocations(void);

#endif /* _OCQ_NATIVE_H */
