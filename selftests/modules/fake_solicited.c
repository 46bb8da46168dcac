// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fake_solicited - ocq_solicited: CQs armed solicited-only on the fake
 * provider.  The poll helpers (ib_poll_cq_and_arm_solicited(),
 * ib_poll_and_notify() with %IB_ARM_SOLICITED) on every provider model and
 * ordered CQs with %IB_ARM_SOLICITED in each mode take a stream of messages
 * whose last completion is solicited, as RDS sends them; once the CQ is
 * idle, a completion that is not solicited must wait in the armed CQ, a
 * solicited one that lands at the arm must not, and bad policies are
 * refused.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <rdma/ib_ocq.h>
#include <rdma/ib_verbs.h>

#include "fake.h"

/* How long a completion that is not solicited must wait in an armed CQ. */
#define FAKE_SOL_HOLD_MS 20
/* Completions flow 0 leaves to fake_sol_drive(): two checks of two each. */
#define FAKE_SOL_TAIL 4

/**
 * struct fake_sol - fake_sol_drive()'s checks of one stream, reported as
 *	subtests of their own; the test thread's only
 * @want: run them (not on fake_spurious, whose callbacks poll at any time)
 * @ran: they ran (the stream delivered everything first)
 * @only_failed: failed checks that the arm holds for a completion that is
 *	not solicited
 * @late_failed: failed checks that a solicited completion landing at the
 *	arm is delivered
 */
struct fake_sol {
	bool want;
	bool ran;
	unsigned int only_failed;
	unsigned int late_failed;
};

static bool fake_sol_check(struct fake_run *r, unsigned int *failed, bool ok,
			   const char *what)
{
	if (!ok) {
		(*failed)++;
		pr_info("# %s: check failed: %s\n", r->name, what);
	}
	return ok;
}

/* Whether the fake CQ is armed, pending completions or not. */
static bool fake_sol_armed(struct fake_cq *fcq)
{
	unsigned long flags;
	bool armed;

	spin_lock_irqsave(&fcq->lock, flags);
	armed = fcq->armed;
	spin_unlock_irqrestore(&fcq->lock, flags);
	return armed;
}

/*
 * Flow 0's next completion, flagged @wc_flags, lands (raising the event it
 * owes); with @late, a solicited one is added behind it that lands only
 * with the next arm: written after the consumer's last poll, before its
 * arm.  Both under one hold of the CQ lock, so the consumer's first poll
 * comes after both, and sees only the first.
 */
static void fake_sol_push(struct fake_run *r, int wc_flags, bool late)
{
	struct fake_cq *fcq = r->fcq;
	unsigned long flags;
	bool direct;

	spin_lock_irqsave(&fcq->lock, flags);
	fake_add_next(&r->flows[0], wc_flags);
	direct = fake_cq_land(fcq);
	if (late)
		fake_add_next(&r->flows[0], FAKE_WC_SOLICITED);
	spin_unlock_irqrestore(&fcq->lock, flags);
	if (direct)
		fake_direct(fcq);
}

/*
 * Once the stream ended armed, on an idle CQ: a completion that is not
 * solicited leaves the CQ armed, raises no handler call and is not
 * delivered within %FAKE_SOL_HOLD_MS (an arm of the next completion raises
 * the event as it lands); a solicited one after it brings both, in order.
 */
static void fake_sol_only(struct fake_run *r, struct fake_sol *sol)
{
	unsigned int *failed = &sol->only_failed;
	unsigned int bound = fake_params.stall_ms;
	struct fake_cq *fcq = r->fcq;
	long delivered, callbacks;
	int failures;
	bool armed;

	fake_wait_quiet(fcq);
	if (!fake_sol_check(r, failed, fake_wait_armed(fcq, bound),
			    "idle and armed before the checks"))
		return;
	failures = atomic_read(&r->failures);
	delivered = atomic_long_read(&r->delivered);
	callbacks = atomic_long_read(&fcq->callbacks);
	fake_sol_push(r, 0, false);
	armed = fake_sol_armed(fcq);
	msleep(FAKE_SOL_HOLD_MS);
	fake_sol_check(r, failed, armed && fake_sol_armed(fcq),
		       "a completion not solicited leaves the CQ armed");
	fake_sol_check(r, failed,
		       atomic_long_read(&fcq->callbacks) == callbacks,
		       "a completion not solicited raises no handler call");
	fake_sol_check(r, failed, atomic_long_read(&r->delivered) == delivered,
		       "a completion not solicited waits in the armed CQ");
	fake_sol_push(r, FAKE_WC_SOLICITED, false);
	fake_sol_check(r, failed, fake_wait_all(r, bound),
		       "it and a solicited one after it delivered");
	fake_sol_check(r, failed, atomic_read(&r->failures) == failures,
		       "both once, in order");
	fake_sol_check(r, failed, fake_wait_armed(fcq, bound),
		       "ends empty and armed");
}

/*
 * A solicited completion that lands after the consumer's last poll and
 * before its arm: the arm must report it (rxe, siw; fake_sol_narrow too),
 * raise its event (strong) or be followed by a poll that finds it (the
 * double poll).  Nothing else comes to rescue it.
 */
static void fake_sol_late(struct fake_run *r, struct fake_sol *sol)
{
	unsigned int *failed = &sol->late_failed;
	unsigned int bound = fake_params.stall_ms;
	struct fake_cq *fcq = r->fcq;
	int failures;

	fake_wait_quiet(fcq);
	if (!fake_sol_check(r, failed, fake_wait_armed(fcq, bound),
			    "idle and armed before the checks"))
		return;
	failures = atomic_read(&r->failures);
	fake_sol_push(r, FAKE_WC_SOLICITED, true);
	if (!fake_sol_check(r, failed, fake_wait_all(r, bound),
			    "a solicited one landed at the arm delivered"))
		fake_print_stall(r);
	fake_sol_check(r, failed, atomic_read(&r->failures) == failures,
		       "both once, in order");
	fake_sol_check(r, failed, fake_wait_armed(fcq, bound),
		       "ends empty and armed");
}

/*
 * &fake_scenario.drive, once the stream was delivered and the CQ found
 * armed: the stream's own checks of the provider's counts, then the
 * checks of struct fake_sol.
 */
static void fake_sol_drive(struct fake_run *r)
{
	struct fake_sol *sol = r->priv;
	struct fake_cq *fcq = r->fcq;
	unsigned long flags;
	u64 arms, sol_arms, held;

	spin_lock_irqsave(&fcq->lock, flags);
	arms = fcq->arms;
	sol_arms = fcq->sol_arms;
	held = fcq->sol_held;
	spin_unlock_irqrestore(&fcq->lock, flags);
	pr_info("# %s: %llu arms, %llu solicited-only; %llu landings held\n",
		r->name, arms, sol_arms, held);
	fake_check(r, arms && sol_arms == arms, "every arm solicited-only");
	fake_check(r, held > 0, "unsolicited landings left the CQ armed");
	if (!sol->want)
		return;
	sol->ran = true;
	fake_sol_only(r, sol);
	fake_sol_late(r, sol);
}

/* The stream's subtest, and fake_sol_drive()'s. */
static void fake_sol_report(struct fake_ktap *k, struct fake_run *r,
			    const struct fake_sol *sol, int ret)
{
	const char *note = sol->ran ? NULL : "not run: the stream failed";
	char name[64];

	fake_result(k, !ret && !atomic_read(&r->failures), r->name, NULL);
	if (!sol->want)
		return;
	snprintf(name, sizeof(name), "%s_solicited_only", r->name);
	fake_result(k, !ret && sol->ran && !sol->only_failed, name, note);
	snprintf(name, sizeof(name), "%s_late_solicited", r->name);
	fake_result(k, !ret && sol->ran && !sol->late_failed, name, note);
}

/*
 * A run of @sc in @mode, its producers' messages ending solicited, flow 0
 * leaving %FAKE_SOL_TAIL completions to fake_sol_drive(); NULL, a failed
 * subtest, if out of memory or too few completions for it.
 */
static struct fake_run *fake_sol_run(const struct fake_scenario *sc,
				     enum ib_ocq_mode mode,
				     struct fake_sol *sol, bool want,
				     struct fake_ktap *k)
{
	struct fake_run *r;

	r = fake_run_alloc(sc, mode, fake_params.completions, fake_params.cqe,
			   false);
	if (!r) {
		fake_result(k, false, fake_mode_names[mode], "out of memory");
		return NULL;
	}
	if (r->flows[0].quota < FAKE_SOL_TAIL) {
		fake_result(k, false, r->name,
			    "too few completions per CPU for the checks");
		fake_run_free(r);
		return NULL;
	}
	r->flows[0].quota -= FAKE_SOL_TAIL;
	r->solicited = true;
	memset(sol, 0, sizeof(*sol));
	sol->want = want;
	r->priv = sol;
	return r;
}

/* the helpers' runs: the scenario only brings fake_sol_drive() */
static const struct fake_scenario fake_sol_helper_sc = {
	.name = "ocq_solicited",
	.drive = fake_sol_drive,
};

/*
 * The provider models of fake_poll_helpers but fake_lossy and
 * fake_perpetual (no arm to look at), and fake_sol_narrow, each with
 * ib_poll_cq_and_arm_solicited() (but the double poll) and
 * ib_poll_and_notify() with %IB_ARM_SOLICITED in its policy.
 */
static const struct fake_helper_model fake_sol_models[] = {
	{ "weak", 0, IB_ARM_REPORT_MISSED | IB_ARM_SOLICITED },
	{ "weak_double_poll", 0, IB_ARM_DOUBLE_POLL | IB_ARM_SOLICITED, true },
	{ "strong", FAKE_STRONG, IB_ARM_STRONG | IB_ARM_SOLICITED },
	{ "cb_and_1", FAKE_CB_AND_1, IB_ARM_REPORT_MISSED | IB_ARM_SOLICITED },
	{ "void_arm", FAKE_VOID_ARM, IB_ARM_REPORT_MISSED | IB_ARM_SOLICITED },
	{ "concurrent", FAKE_CONCURRENT,
	  IB_ARM_REPORT_MISSED | IB_ARM_SOLICITED },
	{ "spurious", FAKE_SPURIOUS, IB_ARM_REPORT_MISSED | IB_ARM_SOLICITED },
	{ "narrow", FAKE_SOL_NARROW, IB_ARM_REPORT_MISSED | IB_ARM_SOLICITED },
};

static int fake_sol_helpers(struct fake_dev *fdev, struct fake_ktap *k)
{
	unsigned int i, pn;
	struct fake_sol sol;
	int ret = 0;

	for (i = 0; i < ARRAY_SIZE(fake_sol_models) && !ret; i++) {
		const struct fake_helper_model *m = &fake_sol_models[i];

		for (pn = m->pn_only; pn < 2 && !ret; pn++) {
			struct fake_run *r;

			r = fake_sol_run(&fake_sol_helper_sc, IB_OCQ_STRICT,
					 &sol, !(m->sem & FAKE_SPURIOUS), k);
			if (!r)
				return -ENOMEM;
			snprintf(r->name, sizeof(r->name), "%s_%s", m->name,
				 pn ? "pn" : "arm_sol");
			if ((m->sem & FAKE_CONCURRENT) &&
			    num_online_cpus() < 2) {
				fake_skip(k, r->name, "needs two online CPUs");
				fake_run_free(r);
				continue;
			}
			ret = fake_helper_stream(r, fdev, m, pn);
			fake_sol_report(k, r, &sol, ret);
			fake_run_free(r);
		}
	}
	return ret;
}

/* the ordered CQs' runs: the weak provider, armed solicited-only */
static const struct fake_scenario fake_sol_ocq_sc = {
	.name = "ocq_solicited",
	.policy = IB_ARM_SOLICITED,
	.drive = fake_sol_drive,
};

static int fake_sol_ocqs(struct fake_dev *fdev, struct fake_ktap *k)
{
	enum ib_ocq_mode mode;
	struct fake_sol sol;
	struct fake_run *r;
	bool stalled;
	int ret = 0;

	for (mode = 0; mode < FAKE_NR_MODES && !ret; mode++) {
		r = fake_sol_run(&fake_sol_ocq_sc, mode, &sol, true, k);
		if (!r)
			return -ENOMEM;
		ret = fake_stream_once(r, fdev, false, &stalled);
		fake_sol_report(k, r, &sol, ret);
		fake_run_free(r);
	}
	return ret;
}

static void fake_sol_comp(struct ib_cq *cq, void *ctx)
{
}

static void fake_sol_expect(struct fake_ktap *k, const char *name, int ret,
			    int want)
{
	if (ret != want)
		pr_info("# %s: returned %d, expected %d\n", name, ret, want);
	fake_result(k, ret == want, name, NULL);
}

/* An ordered CQ with @policy: what ib_ocq_alloc() returned, freed. */
static int fake_sol_alloc(struct fake_dev *fdev, unsigned int policy)
{
	struct ib_ocq_attr attr = { .policy = policy };
	struct ib_ocq *ocq;

	ocq = ib_ocq_alloc(&fdev->ibdev, NULL, fake_params.cqe, 0, &attr);
	if (IS_ERR(ocq))
		return PTR_ERR(ocq);
	ib_ocq_free(ocq);
	return 0;
}

/*
 * An empty CQ: the helper called by @pn (with @policy) or
 * ib_poll_cq_and_arm_solicited() returns 0, armed solicited-only.
 */
static void fake_sol_empty(struct fake_ktap *k, struct ib_cq *cq, bool pn,
			   unsigned int policy, const char *name)
{
	struct fake_cq *fcq = to_fake_cq(cq);
	enum ib_pn_status st = IB_PN_MORE;
	unsigned long flags;
	struct ib_wc wc[2];
	bool sol;
	u64 arms;
	int n;

	spin_lock_irqsave(&fcq->lock, flags);
	arms = fcq->sol_arms;
	spin_unlock_irqrestore(&fcq->lock, flags);
	if (pn)
		n = ib_poll_and_notify(cq, ARRAY_SIZE(wc), wc, policy, &st);
	else
		n = ib_poll_cq_and_arm_solicited(cq, ARRAY_SIZE(wc), wc);
	spin_lock_irqsave(&fcq->lock, flags);
	sol = fcq->armed && fcq->sol_arm && fcq->sol_arms > arms;
	spin_unlock_irqrestore(&fcq->lock, flags);
	if (!n && pn && st != IB_PN_EMPTY_ARMED)
		n = -EPROTO;
	if (!n && !sol) {
		pr_info("# %s: the CQ is not armed solicited-only\n", name);
		n = -EPROTO;
	}
	fake_sol_expect(k, name, n, 0);
}

/*
 * Bad input: a base policy past the last with %IB_ARM_SOLICITED, and a bit
 * that is no modifier, refused by ib_poll_and_notify() and by
 * ib_ocq_alloc() with -EINVAL (the guest panics on a warning); the bad
 * arguments of ib_poll_cq_and_arm_solicited(); and the good policies
 * accepted, the helpers arming solicited-only.
 */
static int fake_sol_bad(struct fake_dev *fdev, struct fake_ktap *k)
{
	static const struct {
		const char *name;
		unsigned int policy;
	} bad[] = {
		{ "double_poll_plus_1",
		  IB_ARM_SOLICITED | (IB_ARM_DOUBLE_POLL + 1) },
		{ "0x20", 0x20 },
	};
	struct ib_cq_init_attr cq_attr = { .cqe = fake_params.cqe };
	enum ib_pn_status st = IB_PN_MORE;
	struct ib_wc wc[2];
	struct ib_cq *cq;
	char name[64];
	unsigned int i;

	fdev->sem = 0;
	fdev->ring = 0;
	cq = ib_create_cq(&fdev->ibdev, fake_sol_comp, NULL, NULL, &cq_attr);
	if (IS_ERR(cq))
		return PTR_ERR(cq);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		snprintf(name, sizeof(name), "poll_and_notify_bad_policy_%s",
			 bad[i].name);
		fake_sol_expect(k, name,
				ib_poll_and_notify(cq, ARRAY_SIZE(wc), wc,
						   bad[i].policy, &st),
				-EINVAL);
		snprintf(name, sizeof(name), "ocq_bad_policy_%s", bad[i].name);
		fake_sol_expect(k, name, fake_sol_alloc(fdev, bad[i].policy),
				-EINVAL);
	}
	fake_sol_expect(k, "poll_cq_and_arm_solicited_no_entries",
			ib_poll_cq_and_arm_solicited(cq, 0, wc), -EINVAL);
	fake_sol_expect(k, "poll_cq_and_arm_solicited_no_wc",
			ib_poll_cq_and_arm_solicited(cq, 1, NULL), -EINVAL);
	fake_sol_empty(k, cq, false, 0, "poll_cq_and_arm_solicited_empty");
	fake_sol_empty(k, cq, true, IB_ARM_SOLICITED,
		       "poll_and_notify_solicited_empty");
	fake_sol_empty(k, cq, true, IB_ARM_DOUBLE_POLL | IB_ARM_SOLICITED,
		       "poll_and_notify_double_poll_solicited_empty");
	ib_destroy_cq(cq);
	fake_sol_expect(k, "ocq_solicited",
			fake_sol_alloc(fdev, IB_ARM_SOLICITED), 0);
	fake_sol_expect(k, "ocq_strong_solicited",
			fake_sol_alloc(fdev, IB_ARM_STRONG | IB_ARM_SOLICITED),
			0);
	return 0;
}

/*
 * ocq_solicited: the helpers on every provider model, ordered CQs in each
 * mode, then bad input.
 */
int fake_run_solicited(const struct fake_scenario *sc, struct fake_dev *fdev,
		       struct fake_ktap *k)
{
	int ret;

	ret = fake_sol_helpers(fdev, k);
	if (!ret)
		ret = fake_sol_ocqs(fdev, k);
	if (!ret)
		ret = fake_sol_bad(fdev, k);
	return ret;
}
