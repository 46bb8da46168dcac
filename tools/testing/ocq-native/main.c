// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ocq_native: the engine (drivers/infiniband/core/ocq_engine.c, as it is)
 * on real threads.
 *
 *   ocq_native check [--only SUBSTR] [--scale F] [--bug NAME] [--jitter]
 *		     [--jitter-teardowns]
 *	every scenario (modes, pause/resume from another thread, postponed
 *	arm with racing resumes, teardown while producing); the last line is
 *	"N passed, N failed"; non-zero exit on any failure.  --bug switches
 *	a seeded bug of the engine on (sanitizer builds only); --jitter
 *	yields and sleeps now and then after the gates' RMWs (sanitizer
 *	builds), --jitter-teardowns runs the teardown scenarios once more so.
 *   ocq_native bench [--n N] [--slow-n N] [--repeats R] [--json FILE]
 *		     [--cost US] [--verbose]
 *	ns per completion of strict, flow, parallel and the raw drain loop,
 *	then the scaling of every path over 1..nproc workers with a done()
 *	cost of 0, 1 and 10 us (--cost: only that one).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <ocq_native.h>
#include "harness.h"

static const char *const consumer_names[] = {
	[C_STRICT] = "strict",
	[C_FLOW] = "flow",
	[C_PARALLEL] = "parallel",
	[C_RAW] = "raw",
};

/* --- the scenarios of "check" --- */

/* a thread that pokes the engine while the scenario runs */
enum poker { P_NONE, P_PAUSER, P_RESUMER, P_PAUSE_ONLY, P_BUSY_POLLER };

struct scenario {
	const char *name;
	struct config cfg;
	enum poker poker;
	unsigned int pokers;
	/* > 0: tear down this long after the start, while producing */
	unsigned int teardown_us;
	unsigned int iterations;
};

struct poke_arg {
	struct harness *h;
	enum poker kind;
	unsigned int seed;
	int stop;
	u64 pokes;
};

static void *poke_thread(void *arg)
{
	struct poke_arg *pa = arg;
	unsigned int seed = pa->seed;

	while (!__atomic_load_n(&pa->stop, __ATOMIC_RELAXED)) {
		if (pa->kind == P_PAUSER) {
			ocq_engine_pause(&pa->h->e);
			usleep(rand_r(&seed) % 300);
			ocq_engine_resume(&pa->h->e);
		} else if (pa->kind == P_PAUSE_ONLY) {
			/* only the lease ends these pauses */
			ocq_engine_pause(&pa->h->e);
		} else if (pa->kind == P_BUSY_POLLER) {
			/*
			 * The ULP's busy poll: polls in a row while it finds
			 * work, and now and then a gap past the suspension's
			 * delay, so that the timer's run takes over too
			 */
			while (ocq_engine_busy_poll(&pa->h->e, 32) > 0 &&
			       rand_r(&seed) % 16)
				;
			pa->pokes++;
			usleep(rand_r(&seed) % (2 * pa->h->cfg.suspend_us + 1));
			continue;
		} else {
			ocq_engine_resume(&pa->h->e);
		}
		pa->pokes++;
		usleep(rand_r(&seed) % 500);
	}
	return NULL;
}

#define BASE(c, w, d, n)						\
	.consumer = (c), .workers = (w), .nr_domains = (d),		\
	.producers = 2, .qps = 8, .completions = (n)

static const struct scenario scenarios[] = {
	{ "strict", { BASE(C_STRICT, 2, 0, 200000), .flush_every = 97 } },
	{ "flow", { BASE(C_FLOW, 3, 4, 200000), .flush_every = 97 } },
	{ "parallel", { BASE(C_PARALLEL, 3, 3, 200000), .flush_every = 97 } },
	{ "raw", { BASE(C_RAW, 2, 0, 100000) } },
	/* a flow_key: failed completions wait for the domains (a barrier) */
	{ "flow-key", { BASE(C_FLOW, 3, 3, 100000), .flush_every = 13,
			.flow_key = true } },
	/* small budgets: runs yield and requeue themselves */
	{ "strict-budget", { BASE(C_STRICT, 2, 0, 100000), .budget = 5 } },
	{ "flow-budget", { BASE(C_FLOW, 3, 3, 100000), .budget = 3 } },
	{ "parallel-budget", { BASE(C_PARALLEL, 3, 2, 100000), .budget = 3 } },
	/* a CQ larger than a domain ring: the CQ run stalls for room */
	{ "flow-stall", { BASE(C_FLOW, 2, 2, 100000), .cqe = 4096,
			  .cost_ns = 200 } },
	{ "parallel-stall", { BASE(C_PARALLEL, 2, 2, 100000), .cqe = 4096,
			      .cost_ns = 200 } },
	{ "flow-double-poll", { BASE(C_FLOW, 2, 2, 100000),
				.policy = IB_ARM_DOUBLE_POLL } },
	{ "strict-watchdog", { BASE(C_STRICT, 2, 0, 100000),
			       .watchdog_us = 200 } },
	{ "flow-watchdog", { BASE(C_FLOW, 2, 2, 100000), .watchdog_us = 200 } },
	/* pause/resume from another thread; the lease ends forgotten pauses */
	{ "strict-pause", { BASE(C_STRICT, 2, 0, 100000), .lease_us = 2000 },
	  P_PAUSER, 1 },
	{ "flow-pause", { BASE(C_FLOW, 3, 3, 100000), .lease_us = 2000 },
	  P_PAUSER, 2 },
	{ "parallel-pause", { BASE(C_PARALLEL, 3, 2, 100000),
			      .lease_us = 2000 }, P_PAUSER, 2 },
	/* done() pauses, two threads resume */
	{ "strict-pause-in-done", { BASE(C_STRICT, 2, 0, 100000),
				    .pause_every = 500, .lease_us = 2000 },
	  P_RESUMER, 2 },
	{ "flow-pause-in-done", { BASE(C_FLOW, 3, 3, 100000),
				  .pause_every = 500, .lease_us = 2000 },
	  P_RESUMER, 2 },
	/* IB_OCQ_POSTPONE_ARM, resumes racing from two threads */
	{ "strict-postpone", { BASE(C_STRICT, 2, 0, 100000),
			       .postpone_arm = true, .lease_us = 2000 },
	  P_RESUMER, 2 },
	{ "flow-postpone", { BASE(C_FLOW, 3, 3, 100000), .postpone_arm = true,
			     .lease_us = 2000 }, P_RESUMER, 2 },
	{ "parallel-postpone", { BASE(C_PARALLEL, 3, 2, 100000),
				 .postpone_arm = true, .lease_us = 2000 },
	  P_RESUMER, 2 },
	/* without resumers the lease alone must end every postponed arm */
	{ "strict-postpone-lease", { BASE(C_STRICT, 2, 0, 5000),
				     .postpone_arm = true, .lease_us = 1000 } },
	/* teardown while the producers produce */
	{ "strict-teardown", { BASE(C_STRICT, 2, 0, 50000), .lease_us = 1000,
			       .watchdog_us = 300 }, P_PAUSER, 1, 3000, 12 },
	{ "flow-teardown", { BASE(C_FLOW, 3, 3, 50000), .cost_ns = 100 },
	  P_NONE, 0, 3000, 12 },
	{ "flow-key-teardown", { BASE(C_FLOW, 3, 3, 50000), .cost_ns = 100,
				 .flush_every = 13, .flow_key = true },
	  P_NONE, 0, 3000, 12 },
	{ "parallel-teardown", { BASE(C_PARALLEL, 3, 2, 50000),
				 .cost_ns = 100 }, P_NONE, 0, 3000, 12 },
	/* pauses only the lease ends, a fast lease tick, teardown: the tick's
	 * resume races with ocq_engine_disable() and the cancels */
	{ "lease-teardown", { BASE(C_STRICT, 2, 0, 50000), .lease_us = 50 },
	  P_PAUSE_ONLY, 1, 2000, 120 },
	{ "postpone-teardown", { BASE(C_FLOW, 2, 2, 50000),
				 .postpone_arm = true, .lease_us = 1000 },
	  P_RESUMER, 2, 2000, 12 },
	/* the deferred re-arm: the timer's runs, the arm after idle polls */
	{ "strict-defer", { BASE(C_STRICT, 2, 0, 100000), .defer_us = 20 } },
	{ "flow-defer", { BASE(C_FLOW, 3, 3, 100000), .defer_us = 20 } },
	/* busy polls against events, the timer and each other */
	{ "strict-suspend", { BASE(C_STRICT, 2, 0, 100000),
			      .suspend_us = 20 }, P_BUSY_POLLER, 2 },
	{ "flow-suspend", { BASE(C_FLOW, 3, 3, 100000), .suspend_us = 20 },
	  P_BUSY_POLLER, 1 },
	{ "parallel-suspend", { BASE(C_PARALLEL, 3, 2, 100000),
				.suspend_us = 20 }, P_BUSY_POLLER, 1 },
	{ "strict-suspend-defer", { BASE(C_STRICT, 2, 0, 100000),
				    .defer_us = 20, .suspend_us = 20,
				    .lease_us = 1000 }, P_BUSY_POLLER, 2 },
	{ "suspend-teardown", { BASE(C_STRICT, 2, 0, 50000), .defer_us = 20,
				.suspend_us = 20 }, P_BUSY_POLLER, 1, 2000, 24 },
};

static int run_once(const struct scenario *sc, double scale, unsigned int it)
{
	struct harness *h = calloc(1, sizeof(*h));
	struct poke_arg pa[4] = {};
	pthread_t pt[4];
	struct config cfg = sc->cfg;
	long warn0 = ocq_native_warnings(), alloc0 = ocq_native_live_allocations();
	unsigned int i;
	int ret, complete = !sc->teardown_us;
	u64 fails;

	cfg.completions = (u64)(cfg.completions * scale);
	/* 256 entries; IB_ARM_AUTO: the engine's choice, IB_ARM_REPORT_MISSED */
	if (!cfg.cqe)
		cfg.cqe = 256;
	if (cfg.completions < 1000)
		cfg.completions = 1000;
	ret = harness_init(h, &cfg);
	if (ret) {
		fprintf(stderr, "FAIL: %s: set up: %d\n", sc->name, ret);
		return 1;
	}
	harness_start(h);
	for (i = 0; i < sc->pokers; i++) {
		pa[i].h = h;
		pa[i].kind = sc->poker;
		pa[i].seed = 1 + i + 77 * it;
		pthread_create(&pt[i], NULL, poke_thread, &pa[i]);
	}
	if (sc->teardown_us) {
		usleep(sc->teardown_us / 2 +
		       (it * 7919u) % (sc->teardown_us + 1));
	} else {
		u64 deadline = now_ns() + 60000000000ull;
		struct ib_ocq_stats s;

		/* the counters are read while the runs go on, as debugfs does */
		while (harness_wait(h, 5) && now_ns() < deadline)
			if (cfg.consumer != C_RAW)
				ocq_engine_stats(&h->e, &s);
		if (harness_delivered(h) != cfg.completions)
			harness_fail(h, "%s: %llu of %llu completions after 60 s",
				     sc->name,
				     (unsigned long long)harness_delivered(h),
				     (unsigned long long)cfg.completions);
	}
	for (i = 0; i < sc->pokers; i++) {
		__atomic_store_n(&pa[i].stop, 1, __ATOMIC_RELAXED);
		pthread_join(pt[i], NULL);
	}
	/* the busy pollers reached what they are there for */
	if (sc->poker == P_BUSY_POLLER && complete) {
		struct ib_ocq_stats s;

		ocq_engine_stats(&h->e, &s);
		if (!s.busy_polls || !s.suspends)
			harness_fail(h, "%s: %llu busy polls, %llu suspensions",
				     sc->name, (unsigned long long)s.busy_polls,
				     (unsigned long long)s.suspends);
	}
	harness_teardown(h);
	harness_final_checks(h, complete);
	if (ocq_native_warnings() != warn0)
		harness_fail(h, "%s: WARN_ON fired", sc->name);
	if (ocq_native_live_allocations() != alloc0)
		harness_fail(h, "%s: the engine leaked %ld allocations",
			     sc->name, ocq_native_live_allocations() - alloc0);
	printf("  %s#%u: %llu done, max %d done() at once, %d process() at once",
	       sc->name, it, (unsigned long long)harness_delivered(h),
	       h->max_domains_in_done, h->max_process);
	if (cfg.defer_us || cfg.suspend_us)
		printf(", timer: %llu fires, %llu took the run",
		       (unsigned long long)h->timer.fires,
		       (unsigned long long)h->timer.takes);
	putchar('\n');
	/* the workers are joined: a run queued too late has failed by now */
	harness_free(h);
	fails = h->failures;
	free(h);
	return fails ? 1 : 0;
}

static int bug_id(const char *name)
{
	static const char *const bugs[] = {
		"none", "poll_then_arm", "positive_is_armed", "unserialized",
		"teardown_no_disable",
	};
	unsigned int i;

	for (i = 0; i < sizeof(bugs) / sizeof(bugs[0]); i++)
		if (!strcmp(name, bugs[i]))
			return i;
	fprintf(stderr, "unknown bug %s\n", name);
	exit(2);
}

static int cmd_check(int argc, char **argv)
{
	const char *only = NULL;
	double scale = 1.0;
	unsigned int s, it, pass, passes = 1, passed = 0, failed = 0;
	int i;

	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--only") && i + 1 < argc)
			only = argv[++i];
		else if (!strcmp(argv[i], "--scale") && i + 1 < argc)
			scale = atof(argv[++i]);
		else if (!strcmp(argv[i], "--bug") && i + 1 < argc)
			ocq_native_bug = bug_id(argv[++i]);
		else if (!strcmp(argv[i], "--jitter"))
			ocq_native_jitter_on = 1;
		else if (!strcmp(argv[i], "--jitter-teardowns"))
			passes = 2;
	}
	/* pass 1: as asked; pass 2: the teardown scenarios again, jittered */
	for (pass = 0; pass < passes; pass++) {
		if (pass)
			ocq_native_jitter_on = 1;
		for (s = 0; s < sizeof(scenarios) / sizeof(scenarios[0]); s++) {
			const struct scenario *sc = &scenarios[s];
			unsigned int iters = sc->iterations ? sc->iterations : 1;
			int bad = 0;
			u64 t0 = now_ns();

			if (only && !strstr(sc->name, only))
				continue;
			if (pass && !sc->teardown_us)
				continue;
			for (it = 0; it < iters; it++)
				bad |= run_once(sc, scale, it);
			printf("%s %s%s (%.1f s)\n", bad ? "not ok" : "ok",
			       sc->name, ocq_native_jitter_on ? "+jitter" : "",
			       (now_ns() - t0) / 1e9);
			fflush(stdout);
			if (bad)
				failed++;
			else
				passed++;
		}
	}
	printf("%u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}

/* --- bench --- */

static bool verbose;

/* CPU time of the whole process: every thread's, the spinning included */
static u64 cpu_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull;
}

static double run_bench(enum consumer c, unsigned int workers, u64 cost_ns,
			u64 n, double *cpu)
{
	u64 cpu0;
	struct harness *h = calloc(1, sizeof(*h));
	struct config cfg = {
		.consumer = c,
		.workers = workers,
		.producers = 1,
		.qps = 8,
		.cqe = 1024,
		.policy = IB_ARM_REPORT_MISSED,
		.cost_ns = cost_ns,
		.completions = n,
	};
	double ns = -1;

	if (harness_init(h, &cfg)) {
		fprintf(stderr, "bench: set up failed\n");
		exit(2);
	}
	cpu0 = cpu_ns();
	harness_start(h);
	if (harness_wait(h, 600000))
		harness_fail(h, "bench %s: stuck", consumer_names[c]);
	else
		ns = (double)(h->t_end - h->t_start) / n;
	*cpu = (double)(cpu_ns() - cpu0) / n;
	if (verbose && c == C_RAW)
		fprintf(stderr, "  raw w=%u cost=%lluns: %.1f ns, cpu %.1f ns; "
			"runs %llu polls %llu arms %llu missed %llu; cq events "
			"%llu\n", workers, (unsigned long long)cost_ns, ns, *cpu,
			(unsigned long long)h->raw.w.runs,
			(unsigned long long)h->fcq.polls,
			(unsigned long long)h->fcq.arms,
			(unsigned long long)h->fcq.missed,
			(unsigned long long)h->fcq.events);
	if (verbose && c != C_RAW) {
		struct ib_ocq_stats s;

		ocq_engine_stats(&h->e, &s);
		fprintf(stderr, "  %s w=%u cost=%lluns: %.1f ns, cpu %.1f ns; "
			"events %llu runs %llu domain_runs %llu polls %llu "
			"arms %llu parks %llu stalls %llu; cq events %llu "
			"missed %llu; max done() at once %d\n",
			consumer_names[c], workers,
			(unsigned long long)cost_ns, ns, *cpu,
			(unsigned long long)s.events,
			(unsigned long long)s.runs,
			(unsigned long long)s.domain_runs,
			(unsigned long long)s.polls,
			(unsigned long long)s.arms,
			(unsigned long long)s.parks,
			(unsigned long long)s.stalls,
			(unsigned long long)h->fcq.events,
			(unsigned long long)h->fcq.missed, h->max_domains_in_done);
	}
	harness_teardown(h);
	harness_final_checks(h, true);
	if (h->failures) {
		fprintf(stderr, "bench: %s failed its checks\n",
			consumer_names[c]);
		exit(1);
	}
	harness_free(h);
	free(h);
	return ns;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct result {
	enum consumer c;
	unsigned int workers;
	unsigned int cost_us;
	u64 n;
	double med, min, max;
	double cpu;	/* median CPU time per completion, all threads */
	double paired;	/* median of this / the reference of the same repeat */
	double v[16], cpus[16];
};

static double median(const double *x, unsigned int n)
{
	double v[16];

	memcpy(v, x, n * sizeof(*v));
	qsort(v, n, sizeof(v[0]), cmp_double);
	return v[n / 2];
}

static void summarise(struct result *r, unsigned int repeats)
{
	double v[16];

	memcpy(v, r->v, repeats * sizeof(*v));
	qsort(v, repeats, sizeof(v[0]), cmp_double);
	r->med = v[repeats / 2];
	r->min = v[0];
	r->max = v[repeats - 1];
	r->cpu = median(r->cpus, repeats);
}

/* median over the repeats of a[i] / b[i]: both measured in one repeat */
static double paired(const struct result *a, const struct result *b,
		     unsigned int repeats)
{
	double q[16];
	unsigned int i;

	for (i = 0; i < repeats; i++)
		q[i] = a->v[i] / b->v[i];
	return median(q, repeats);
}

static const char *cost_name(unsigned int us)
{
	return us == 0 ? "0us" : us == 1 ? "1us" : "10us";
}

/*
 * Every configuration is measured once per repeat, all of them in turn,
 * then again: a slow phase of a shared machine hits every path alike
 * rather than all the repeats of one.
 */
static int cmd_bench(int argc, char **argv)
{
	static const unsigned int costs[] = { 0, 1, 10 };
	static const enum consumer order[] = { C_RAW, C_STRICT, C_FLOW,
					       C_PARALLEL };
	u64 n = 1000000, slow_n = 100000;
	unsigned int repeats = 5, ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned int ci, w, k, r, nres = 0, main_at = ~0u;
	int only_cost = -1;
	const char *json = NULL;
	static struct result res[4 * 3 * 64];
	double ratio2 = 0;
	FILE *f;
	int i;

	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--n") && i + 1 < argc)
			n = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--slow-n") && i + 1 < argc)
			slow_n = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--repeats") && i + 1 < argc)
			repeats = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--json") && i + 1 < argc)
			json = argv[++i];
		else if (!strcmp(argv[i], "--verbose"))
			verbose = true;
		else if (!strcmp(argv[i], "--cost") && i + 1 < argc)
			only_cost = atoi(argv[++i]);
	}
	if (repeats < 1 || repeats > 16)
		repeats = 5;
	if (ncpu < 1 || ncpu > 64)
		ncpu = 2;

	/* cost-major, then workers, then the four paths (raw first) */
	for (ci = 0; ci < 3; ci++)
		for (w = 1; w <= ncpu && (only_cost < 0 ||
					  only_cost == (int)costs[ci]); w++)
			for (k = 0; k < 4; k++) {
				if (!costs[ci] && w == ncpu && !k)
					main_at = nres;
				res[nres].c = order[k];
				res[nres].workers = w;
				res[nres].cost_us = costs[ci];
				res[nres++].n = costs[ci] ? slow_n : n;
			}
	printf("ocq native bench: %u CPUs, %u configurations, %u repeats "
	       "interleaved\n", ncpu, nres, repeats);
	for (r = 0; r < repeats; r++) {
		u64 t0 = now_ns();

		for (k = 0; k < nres; k++)
			res[k].v[r] = run_bench(res[k].c, res[k].workers,
						res[k].cost_us * 1000ull,
						res[k].n, &res[k].cpus[r]);
		printf("  repeat %u: %.1f s\n", r + 1, (now_ns() - t0) / 1e9);
	}
	for (k = 0; k < nres; k++) {
		summarise(&res[k], repeats);
		/* raw of the same cost and workers; strict for flow/strict */
		res[k].paired = paired(&res[k], &res[k - k % 4], repeats);
	}

	if (main_at == ~0u)
		goto scaling;
	printf("\n%llu completions, done() cost 0, %u workers; median of %u\n",
	       (unsigned long long)n, ncpu, repeats);
	printf("%-10s %10s %10s %10s %8s %8s %10s\n", "path", "ns/compl",
	       "min", "max", "vs raw", "paired", "cpu ns");
	for (k = main_at; k < main_at + 4; k++)
		printf("%-10s %10.1f %10.1f %10.1f %8.2f %8.2f %10.1f\n",
		       consumer_names[res[k].c], res[k].med, res[k].min,
		       res[k].max, res[k].med / res[main_at].med, res[k].paired,
		       res[k].cpu);

scaling:
	printf("\nscaling: ns per completion (median of %u) by done() cost and "
	       "workers; %llu completions at 0 us, %llu at 1 and 10 us;\n"
	       "flow/strict: of the medians, and paired (median of the "
	       "ratios of one repeat); cpu%%: CPU time / wall time\n", repeats,
	       (unsigned long long)n, (unsigned long long)slow_n);
	printf("%-5s %-7s", "cost", "workers");
	for (k = 0; k < 4; k++)
		printf(" %9s", consumer_names[order[k]]);
	printf(" %11s %7s %7s\n", "flow/strict", "paired", "cpu%flow");
	for (k = 0; k < nres; k += 4) {
		struct result *st = &res[k + 1], *fl = &res[k + 2];
		double pf = paired(fl, st, repeats);

		printf("%-5s %-7u", cost_name(res[k].cost_us), res[k].workers);
		for (i = 0; i < 4; i++)
			printf(" %9.1f", res[k + i].med);
		printf(" %11.2f %7.2f %7.0f\n", fl->med / st->med, pf,
		       100 * fl->cpu / fl->med);
		if (res[k].cost_us == 10 && res[k].workers == 2)
			ratio2 = pf;
	}
	if (ratio2 > 0)
		printf("\nflow/strict at 2 workers, 10 us done(): %.2f (paired)\n",
		       ratio2);

	f = json ? fopen(json, "w") : stdout;
	if (!f) {
		perror(json);
		return 1;
	}
	fprintf(f, "{\"cpus\": %u, \"repeats\": %u, \"completions\": %llu, "
		   "\"slow_completions\": %llu,\n \"main\": [",
		ncpu, repeats, (unsigned long long)n,
		(unsigned long long)slow_n);
	for (k = main_at; main_at != ~0u && k < main_at + 4; k++)
		fprintf(f, "%s\n  {\"path\": \"%s\", \"workers\": %u, "
			   "\"ns_per_completion\": %.1f, \"min\": %.1f, "
			   "\"max\": %.1f, \"vs_raw\": %.3f, "
			   "\"vs_raw_paired\": %.3f, "
			   "\"cpu_ns_per_completion\": %.1f}",
			k > main_at ? "," : "", consumer_names[res[k].c],
			res[k].workers, res[k].med, res[k].min, res[k].max,
			res[k].med / res[main_at].med, res[k].paired,
			res[k].cpu);
	fprintf(f, "],\n \"scaling\": [");
	for (k = 0; k < nres; k++)
		fprintf(f, "%s\n  {\"path\": \"%s\", \"workers\": %u, "
			   "\"cost_us\": %u, \"completions\": %llu, "
			   "\"ns_per_completion\": %.1f, \"min\": %.1f, "
			   "\"max\": %.1f, \"vs_raw_paired\": %.3f, "
			   "\"cpu_ns_per_completion\": %.1f}",
			k ? "," : "", consumer_names[res[k].c], res[k].workers,
			res[k].cost_us, (unsigned long long)res[k].n,
			res[k].med, res[k].min, res[k].max, res[k].paired,
			res[k].cpu);
	fprintf(f, "],\n \"flow_over_strict_2_workers_10us_paired\": %.3f}\n",
		ratio2);
	if (json) {
		fclose(f);
		printf("results: %s\n", json);
	}
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2 && !strcmp(argv[1], "check"))
		return cmd_check(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "bench"))
		return cmd_bench(argc - 2, argv + 2);
	fprintf(stderr, "usage: %s check [--only SUBSTR] [--scale F] [--bug NAME] "
			"[--jitter] [--jitter-teardowns]\n"
			"       %s bench [--n N] [--slow-n N] [--repeats R] "
			"[--json FILE] [--cost US] [--verbose]\n", argv[0], argv[0]);
	return 2;
}
