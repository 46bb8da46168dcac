// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fake_loops - the ocq_test_fake scenarios that run all modes in one
 * subtest sequence: teardown_loop, alloc_fail and soak.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/cpumask.h>
#include <linux/jiffies.h>
#include <linux/math64.h>
#include <linux/string.h>
#include <rdma/ib_ocq.h>
#include <rdma/ib_verbs.h>

#include "ocq_test_compat.h"
#include "fake.h"

/* --- scenarios over all modes: teardown_loop, alloc_fail, soak --- */

/* Completions of a run in one mode, over all its cycles. */
u64 fake_mode_total(const struct fake_scenario *sc)
{
	if (sc->run == fake_run_teardown)
		return max_t(u64, fake_params.completions / fake_params.cycles,
			     FAKE_MIN_COMPLETIONS);
	if (sc->run == fake_run_resume_race)
		return max_t(u64, fake_params.completions / FAKE_RACE_CYCLES,
			     FAKE_MIN_COMPLETIONS);
	return fake_params.completions;
}

/*
 * teardown_loop: the configuration of cycle @i.  The mode turns fastest;
 * then, bit by bit, the watchdog, the postponed arm (with the pauser: with
 * done() it is what arms), a free halfway through the stream, and random
 * pauses.  Every cycle is freed under late callbacks.  A drained cycle with
 * the watchdog and no pauser must need no rescue after a stall; the others
 * tick fast.
 */
static struct fake_run *fake_loop_config(struct fake_run **runs, unsigned int i)
{
	struct fake_run *r = runs[i % FAKE_NR_MODES];
	unsigned int j = i / FAKE_NR_MODES;

	r->attr.flags = j & 2 ? IB_OCQ_POSTPONE_ARM : 0;
	r->abrupt = j & 4;
	r->pause = j & (2 | 8);
	r->inject = true;
	r->quiet = true;
	r->attr.watchdog_ms =
		j & 1 ? fake_watchdog_ms(r, FAKE_WATCHDOG_RACE_MS) : 0;
	return r;
}

static int fake_loop_cycle(struct fake_run **runs, struct fake_dev *fdev,
			   unsigned int i)
{
	struct fake_run *r = fake_loop_config(runs, i);
	bool stalled;
	int ret;

	ret = fake_stream_once(r, fdev, false, &stalled);
	fake_check(r, !atomic_read(&fake_objects),
		   "the provider's objects were all freed");
	if (ret || atomic_read(&r->failures))
		pr_info("# cycle %u failed (%d): %s, watchdog_ms %u, flags %#x, %s, %s\n",
			i, ret, r->name, r->attr.watchdog_ms, r->attr.flags,
			r->pause ? "random pauses" : "no pauses",
			r->abrupt ? "freed halfway" : "drained");
	return ret;
}

static bool fake_loop_failed(struct fake_run **runs)
{
	unsigned int mode;

	for (mode = 0; mode < FAKE_NR_MODES; mode++)
		if (atomic_read(&runs[mode]->failures))
			return true;
	return false;
}

/* teardown_loop: @cycles create, stream, free cycles over all modes. */
static int fake_loop(struct fake_run **runs, struct fake_dev *fdev)
{
	u64 delivered = 0, undelivered = 0;
	unsigned int i, mode;
	int ret = 0;

	for (i = 0; i < fake_params.cycles && !ret && !fake_loop_failed(runs);
	     i++) {
		struct fake_run *r = runs[i % FAKE_NR_MODES];

		ret = fake_loop_cycle(runs, fdev, i);
		delivered += atomic_long_read(&r->delivered);
	}
	for (mode = 0; mode < FAKE_NR_MODES; mode++)
		undelivered += runs[mode]->undelivered;
	pr_info("# teardown_loop: %u cycles of %llu completions: %llu delivered, %llu left by frees halfway\n",
		i, runs[0]->total, delivered, undelivered);
	return ret;
}

int fake_run_teardown_loop(const struct fake_scenario *sc,
			   struct fake_dev *fdev, struct fake_ktap *k)
{
	u64 total = max_t(u64, fake_params.completions / fake_params.cycles,
			  FAKE_MIN_COMPLETIONS);
	struct fake_run *runs[FAKE_NR_MODES] = {};
	unsigned int mode;
	int ret = 0;

	for (mode = 0; mode < FAKE_NR_MODES && !ret; mode++) {
		runs[mode] =
			fake_run_alloc(sc, mode, total, fake_params.cqe, false);
		if (!runs[mode])
			ret = -ENOMEM;
	}
	if (!ret)
		ret = fake_loop(runs, fdev);
	for (mode = 0; mode < FAKE_NR_MODES; mode++) {
		bool ok = runs[mode] && !atomic_read(&runs[mode]->failures);

		fake_result(k, ok && !ret, fake_mode_names[mode], NULL);
		if (runs[mode])
			fake_run_free(runs[mode]);
	}
	return ret;
}

/**
 * struct fake_path - a create path of ib_ocq_alloc(), for alloc_fail
 * @name: its path= name
 * @mode: ordering domains
 * @nr_domains: flow domains or process workers; 0 for the online CPUs
 * @watchdog_ms: the safety net's period; 0 for none
 * @flags: %IB_OCQ_POSTPONE_ARM or 0
 */
struct fake_path {
	const char *name;
	enum ib_ocq_mode mode;
	unsigned int nr_domains;
	unsigned int watchdog_ms;
	unsigned int flags;
};

static const struct fake_path fake_paths[] = {
	{ .name = "strict", .mode = IB_OCQ_STRICT },
	{
		.name = "strict_watchdog",
		.mode = IB_OCQ_STRICT,
		.watchdog_ms = FAKE_WATCHDOG_MS,
	},
	{
		.name = "strict_postpone",
		.mode = IB_OCQ_STRICT,
		.flags = IB_OCQ_POSTPONE_ARM,
	},
	{ .name = "flow", .mode = IB_OCQ_FLOW },
	{ .name = "flow_1", .mode = IB_OCQ_FLOW, .nr_domains = 1 },
	{ .name = "flow_4", .mode = IB_OCQ_FLOW, .nr_domains = 4 },
	{
		.name = "flow_4_watchdog_postpone",
		.mode = IB_OCQ_FLOW,
		.nr_domains = 4,
		.watchdog_ms = FAKE_WATCHDOG_MS,
		.flags = IB_OCQ_POSTPONE_ARM,
	},
	{ .name = "parallel", .mode = IB_OCQ_PARALLEL },
	{ .name = "parallel_4", .mode = IB_OCQ_PARALLEL, .nr_domains = 4 },
	{
		.name = "parallel_watchdog_postpone",
		.mode = IB_OCQ_PARALLEL,
		.watchdog_ms = FAKE_WATCHDOG_MS,
		.flags = IB_OCQ_POSTPONE_ARM,
	},
};

static const struct fake_path *fake_find_path(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fake_paths); i++)
		if (!strcmp(fake_params.path, fake_paths[i].name))
			return &fake_paths[i];
	return NULL;
}

static void fake_path_attr(const struct fake_path *p, struct ib_ocq_attr *attr)
{
	attr->mode = p->mode;
	attr->nr_domains = p->nr_domains;
	attr->watchdog_ms = p->watchdog_ms;
	attr->flags = p->flags;
	attr->process = p->mode == IB_OCQ_PARALLEL ? fake_process : NULL;
}

/* alloc_fail: a failed ib_ocq_alloc() must say -ENOMEM and leave nothing. */
static void fake_alloc_failed(struct fake_ktap *k, const struct fake_path *p,
			      int ret)
{
	bool clean = !atomic_read(&fake_objects);

	/* on the console too: freeing the fake device will warn */
	if (!clean)
		pr_err("# %s: the provider's CQ outlived the failure\n",
		       p->name);
	if (ret != -ENOMEM)
		pr_info("# %s: failed with %d, not -ENOMEM\n", p->name, ret);
	fake_result(k, ret == -ENOMEM && clean, p->name,
		    "fails with -ENOMEM, leaving nothing");
}

/*
 * alloc_fail on the fake device: when the OCQ is made, a short stream with
 * random pauses goes through it before the free.
 */
static int fake_alloc_fake(const struct fake_scenario *sc,
			   struct fake_dev *fdev, const struct fake_path *p,
			   struct fake_ktap *k)
{
	struct fake_run *r;
	bool stalled;
	int ret, alloc_ret;

	r = fake_run_alloc(sc, p->mode, fake_params.completions,
			   fake_params.cqe, false);
	if (!r)
		return -ENOMEM;
	strscpy(r->name, p->name, sizeof(r->name));
	fake_path_attr(p, &r->attr);
	r->pause = true;
	ret = fake_stream_once(r, fdev, false, &stalled);
	alloc_ret = r->alloc_ret;
	pr_info("# alloc_fail: path=%s device=fake result=%d\n", p->name,
		alloc_ret);
	if (alloc_ret)
		fake_alloc_failed(k, p, alloc_ret);
	else
		fake_result(k, !ret && !atomic_read(&r->failures), p->name,
			    NULL);
	fake_run_free(r);
	return alloc_ret ? 0 : ret;
}

/* alloc_fail on a real device: create, pause, resume, free; no traffic. */
static int fake_alloc_real(const struct fake_path *p, struct fake_ktap *k)
{
	struct ib_ocq_attr attr = {};
	struct ib_device *dev;
	struct ib_ocq *ocq;
	int ret;

	dev = ib_device_get_by_name(fake_params.device, RDMA_DRIVER_UNKNOWN);
	if (!dev) {
		fake_skip(k, p->name, "device not present");
		return 0;
	}
	fake_path_attr(p, &attr);
	ocq = ib_ocq_alloc(dev, NULL, fake_params.cqe, 0, &attr);
	ret = PTR_ERR_OR_ZERO(ocq);
	pr_info("# alloc_fail: path=%s device=%s result=%d\n", p->name,
		fake_params.device, ret);
	if (ret) {
		fake_alloc_failed(k, p, ret);
	} else {
		ib_ocq_pause(ocq);
		ib_ocq_resume(ocq);
		ib_ocq_free(ocq);
		fake_result(k, true, p->name, NULL);
	}
	ib_device_put(dev);
	return 0;
}

/* alloc_fail: one ib_ocq_alloc() on the path named by path=. */
int fake_run_alloc_fail(const struct fake_scenario *sc, struct fake_dev *fdev,
			struct fake_ktap *k)
{
	const struct fake_path *p = fake_find_path();

	if (!p) {
		fake_result(k, false, fake_params.path, "unknown path");
		return -EINVAL;
	}
	if (*fake_params.device)
		return fake_alloc_real(p, k);
	return fake_alloc_fake(sc, fdev, p, k);
}

/* soak: the provider semantics it mixes (fake_lossy with its watchdog). */
static const struct fake_scenario fake_soak_mix[] = {
	{ .name = "weak" },
	{ .name = "strong", .sem = FAKE_STRONG, .policy = IB_ARM_STRONG },
	{ .name = "cb_and_1", .sem = FAKE_CB_AND_1 },
	{ .name = "spurious", .sem = FAKE_SPURIOUS },
	{ .name = "concurrent", .sem = FAKE_CONCURRENT },
	{ .name = "lossy", .sem = FAKE_LOSSY },
};

/**
 * struct fake_soak - what the soak counts
 * @cycles: streams run
 * @bulk_cycles: of those, bulk ones
 * @completions: done() calls
 * @bulk_completions: of those, in bulk cycles
 * @lost: completions pushed and not delivered by streams that drain
 * @reordered: done() calls out of order
 * @duplicated: completions delivered twice
 * @undrained: streams freed halfway (their leftovers are not lost)
 * @failures: failed checks of any kind, the above included
 * @bulk_ms: time in bulk cycles
 * @short_ms: time in short cycles
 */
struct fake_soak {
	unsigned int cycles;
	unsigned int bulk_cycles;
	u64 completions;
	u64 bulk_completions;
	u64 lost;
	u64 reordered;
	u64 duplicated;
	u64 undrained;
	u64 failures;
	u64 bulk_ms;
	u64 short_ms;
};

/* soak: random pauses, postponed arm, watchdog and teardown of a cycle. */
static void fake_soak_chaos(struct fake_run *r, u32 *rnd)
{
	bool watchdog = (r->sc->sem & FAKE_LOSSY) || !(fake_rand(rnd) % 4);

	r->pause = fake_rand(rnd) % 2;
	if (r->pause && fake_rand(rnd) % 2)
		r->attr.flags = IB_OCQ_POSTPONE_ARM;
	r->inject = !(fake_rand(rnd) % 4);
	r->abrupt = r->inject && fake_rand(rnd) % 2;
	r->quiet = true;
	if (watchdog)
		r->attr.watchdog_ms = fake_watchdog_ms(r, FAKE_WATCHDOG_MS);
}

/*
 * soak: a run with random semantics and mode; a short one of random size,
 * or a bulk one of @bulk completions through a CQ of 512 to 4096 entries.
 */
static struct fake_run *fake_soak_config(u32 *rnd, u64 bulk)
{
	const struct fake_scenario *sc;
	enum ib_ocq_mode mode = fake_rand(rnd) % FAKE_NR_MODES;
	u64 total = FAKE_MIN_COMPLETIONS + fake_rand(rnd) % FAKE_SOAK_SPAN;
	unsigned int ncqe = fake_params.cqe;
	struct fake_run *r;

	do {
		sc = &fake_soak_mix[fake_rand(rnd) % ARRAY_SIZE(fake_soak_mix)];
	} while ((sc->sem & FAKE_CONCURRENT) && num_online_cpus() < 2);
	if (bulk) {
		total = bulk;
		ncqe = 512 << (fake_rand(rnd) % 4);
	}
	r = fake_run_alloc(sc, mode, total, ncqe, bulk);
	if (!r)
		return NULL;
	snprintf(r->name, sizeof(r->name), "%s%s_%s", bulk ? "bulk_" : "",
		 sc->name, fake_mode_names[mode]);
	fake_soak_chaos(r, rnd);
	return r;
}

static void fake_soak_account(struct fake_soak *s, struct fake_run *r,
			      unsigned long start)
{
	u64 delivered = atomic_long_read(&r->delivered);
	u64 pushed = fake_pushed(r);
	u64 ms = jiffies_to_msecs(jiffies - start);

	s->cycles++;
	s->completions += delivered;
	if (r->bulk) {
		s->bulk_cycles++;
		s->bulk_completions += delivered;
		s->bulk_ms += ms;
	} else {
		s->short_ms += ms;
	}
	if (r->abrupt)
		s->undrained++;
	else if (pushed > delivered)
		s->lost += pushed - delivered;
	s->reordered += atomic_read(&r->reports[FAKE_V_ORDER]);
	s->duplicated += atomic_read(&r->reports[FAKE_V_TWICE]);
	s->failures += atomic_read(&r->failures);
}

static int fake_soak_cycle(struct fake_soak *s, struct fake_dev *fdev, u32 *rnd,
			   u64 bulk)
{
	unsigned long start = jiffies;
	struct fake_run *r;
	bool stalled;
	int ret;

	r = fake_soak_config(rnd, bulk);
	if (!r)
		return -ENOMEM;
	ret = fake_stream_once(r, fdev, false, &stalled);
	fake_soak_account(s, r, start);
	if (ret || atomic_read(&r->failures))
		pr_info("# soak: cycle %u failed (%d): %s, %llu completions, cqe %u, watchdog_ms %u, flags %#x, %s, %s\n",
			s->cycles, ret, r->name, r->total, r->cqe,
			r->attr.watchdog_ms, r->attr.flags,
			r->pause ? "random pauses" : "no pauses",
			r->abrupt ? "freed halfway" : "drained");
	fake_run_free(r);
	if (!ret && atomic_read(&fake_objects)) {
		pr_info("# soak: the provider's objects were not all freed\n");
		s->failures++;
		ret = -EBUSY;
	}
	return ret;
}

/*
 * soak: the completions of the next cycle; 0 for a short one.  Bulk cycles
 * take %FAKE_SOAK_BULK_PCT of the time: each of them a random few seconds
 * long at the rate bulk cycles ran so far, and not much longer than the
 * time left.
 */
static u64 fake_soak_next(const struct fake_soak *s, u32 *rnd,
			  unsigned long end)
{
	u64 ms = s->bulk_ms + s->short_ms;
	u64 left = jiffies_to_msecs(max_t(long, end - jiffies, 0));
	u64 n = FAKE_SOAK_BULK_FIRST;

	if (s->bulk_ms * 100 >= FAKE_SOAK_BULK_PCT * ms)
		return 0;
	if (s->bulk_ms) {
		/* completions per millisecond so far, times the length */
		n = div64_u64(s->bulk_completions, s->bulk_ms);
		left *= n;
		n *= (FAKE_SOAK_BULK_MIN_S +
		      fake_rand(rnd) % (FAKE_SOAK_BULK_SPAN_S + 1)) *
		     MSEC_PER_SEC;
		n = min(n, left);
	}
	return clamp_t(u64, n, FAKE_SOAK_BULK_MIN, FAKE_SOAK_BULK_MAX);
}

static void fake_soak_print(const struct fake_soak *s, const char *what,
			    unsigned long start)
{
	pr_info("# soak: %s: %u s, %u cycles (%u bulk, %llu freed halfway), %llu completions (%llu in bulk cycles), lost %llu, reordered %llu, duplicated %llu, failed checks %llu\n",
		what, jiffies_to_msecs(jiffies - start) / 1000, s->cycles,
		s->bulk_cycles, s->undrained, s->completions,
		s->bulk_completions, s->lost, s->reordered, s->duplicated,
		s->failures);
}

/*
 * soak: random cycles for duration_s seconds, short and bulk, a progress
 * line now and then.
 */
int fake_run_soak(const struct fake_scenario *sc, struct fake_dev *fdev,
		  struct fake_ktap *k)
{
	unsigned long start = jiffies;
	unsigned long end =
		start + msecs_to_jiffies(fake_params.duration_s * MSEC_PER_SEC);
	unsigned long next = start + FAKE_SOAK_REPORT_S * HZ;
	struct fake_soak s = {};
	u32 rnd = fake_seed(7);
	int ret = 0;

	while (!ret && time_before(jiffies, end)) {
		ret = fake_soak_cycle(&s, fdev, &rnd,
				      fake_soak_next(&s, &rnd, end));
		if (time_after_eq(jiffies, next)) {
			fake_soak_print(&s, "progress", start);
			next = jiffies + FAKE_SOAK_REPORT_S * HZ;
		}
	}
	fake_soak_print(&s, "summary", start);
	pr_info("# soak: time in bulk cycles %llu s, in short cycles %llu s\n",
		s.bulk_ms / MSEC_PER_SEC, s.short_ms / MSEC_PER_SEC);
	fake_result(k, !ret && !s.failures, "soak", NULL);
	return ret;
}
