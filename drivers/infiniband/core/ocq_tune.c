// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Retuning an ordered CQ's moderation while it runs, as NAPI's per-instance
 * settings allow: the call a ULP makes, and the debugfs file an
 * administrator writes.  The checks are those of the CQ's allocation; the
 * engine applies a retune at the next pass of the CQ's run, so that no run
 * sees its settings change under it.
 */
#include <linux/ctype.h>
#include <linux/debugfs.h>
#include <linux/kernel.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_ocq.h>

#include "ocq_engine.h"
#include "ocq_priv.h"

/* the longest write the debugfs file takes: every key, each at its longest */
#define IB_OCQ_TUNE_MAX_WRITE 128

/*
 * Whether @ocq may run with @t: the checks of its allocation, with @t in
 * place of the attributes of the same names.
 */
static int ib_ocq_tune_check(const struct ib_ocq *ocq,
			     const struct ib_ocq_tune *t)
{
	struct ib_ocq_attr a = ocq->attr;

	if (t->flags & ~IB_OCQ_DEFER_DIM)
		return -EINVAL;
	a.flags = (a.flags & ~IB_OCQ_DEFER_DIM) | t->flags;
	a.defer_usecs = t->defer_usecs;
	a.defer_polls = t->defer_polls;
	a.suspend_usecs = t->suspend_usecs;
	if (ocq->poll_ctx == IB_POLL_DIRECT)
		return ib_ocq_direct_attr_ok(&a) ? 0 : -EINVAL;
	if (ocq_engine_check_attr(&a))
		return -EINVAL;
	/* as at allocation: see ib_ocq_create() */
	if (ocq->poll_ctx == IB_POLL_SOFTIRQ && a.suspend_usecs)
		return -EINVAL;
	/* the provider's DIM moderates the CQ: never the deferral too */
	if (ocq->dim_provider && (a.defer_usecs || a.suspend_usecs))
		return -EOPNOTSUPP;
	return 0;
}

/* The engine's form of @t. */
static struct ocq_tune ib_ocq_engine_tune(const struct ib_ocq_tune *t)
{
	struct ocq_tune et = {
		.dim = t->flags & IB_OCQ_DEFER_DIM,
		.suspend = t->suspend_usecs,
	};

	if (t->defer_usecs)
		et.defer_polls = t->defer_polls ?: IB_OCQ_DEFAULT_DEFER_POLLS;
	return et;
}

/*
 * Retune @ocq: checked; then the delays the host's timer reads, DIM (the
 * only step that can fail, before anything changed), and the engine's
 * word, last, whose kick starts a run that sees all of the rest.
 */
static int __ib_ocq_retune(struct ib_ocq *ocq, const struct ib_ocq_tune *t)
{
	struct ocq_tune et = ib_ocq_engine_tune(t);
	int ret;

	lockdep_assert_held(&ocq->tune_lock);
	ret = ib_ocq_tune_check(ocq, t);
	if (ret || ocq->poll_ctx == IB_POLL_DIRECT)
		return ret;
	ret = ocq_engine_tune_check(&ocq->engine, &et);
	if (ret)
		return ret;
	/* the provider's DIM stays as it is (no deferral: checked) */
	if (!ocq->dim_provider) {
		ret = ib_ocq_dim_soft(ocq, et.dim, t->defer_usecs);
		if (ret)
			return ret;
	}
	WRITE_ONCE(ocq->tuned.flags, t->flags);
	WRITE_ONCE(ocq->tuned.defer_usecs, t->defer_usecs);
	WRITE_ONCE(ocq->tuned.defer_polls, t->defer_polls);
	WRITE_ONCE(ocq->tuned.suspend_usecs, t->suspend_usecs);
	/* checked above, with nothing changed yet */
	ret = ocq_engine_tune(&ocq->engine, &et);
	WARN_ON_ONCE(ret);
	return ret;
}

/* @ocq's moderation in force; the caller holds its tune_lock */
void ib_ocq_read_tune(struct ib_ocq *ocq, struct ib_ocq_tune *t)
{
	lockdep_assert_held(&ocq->tune_lock);
	t->flags = READ_ONCE(ocq->tuned.flags);
	t->defer_usecs = READ_ONCE(ocq->tuned.defer_usecs);
	t->defer_polls = READ_ONCE(ocq->tuned.defer_polls);
	t->suspend_usecs = READ_ONCE(ocq->tuned.suspend_usecs);
}

/**
 * ib_ocq_set_tune - retune an ordered CQ's moderation while it runs
 * @cq: a CQ of ocq's
 * @t: the moderation from now on, every field of it
 *
 * An ordered CQ's per-instance settings, as NAPI's: the deferred re-arm's
 * delay and empty runs, its adaptive threshold and delay
 * (%IB_OCQ_DEFER_DIM), and the busy polls' suspension, changed while the
 * CQ runs.  Each field means what &ib_ocq_attr's of the same name means,
 * and @t is checked as ib_ocq_alloc_cq() checks them, against what the CQ
 * was made with (its poll context, mode and flags do not change): a CQ
 * made with %IB_OCQ_POSTPONE_ARM or on %IB_POLL_DIRECT takes no deferral
 * or suspension, one on %IB_POLL_SOFTIRQ no suspension.
 *
 * The CQ's run takes @t on as its next pass begins (a run is started to
 * that end), so no run sees its settings change under it, and nothing is
 * lost or dispatched out of order by a retune (what checks that: see
 * Documentation/design.rst, "Retuning").  A deferral or a suspension
 * under way ends after the delay it began with, and its timer's run then
 * decides with @t.  From the call on, ib_ocq_busy_poll() is refused or
 * allowed as @t says.  A retune of the deferral or of
 * %IB_OCQ_DEFER_DIM starts the deferral's threshold afresh; DIM's delay
 * goes on from the profile DIM was at.
 *
 * A CQ of the pool is shared by ULPs that asked for the attributes it was
 * made with: none of them retunes it (the administrator may, through
 * debugfs).  A CQ that its provider moderates (DIM on a device with
 * modify_cq and use_cq_dim, for a CQ made without a deferral or a
 * suspension) takes neither; and one made with either never gets the
 * provider's DIM, even once ib_ocq_set_tune() takes them away.
 *
 * Context: process context.  Never concurrently with or after
 * ib_ocq_free_cq() of @cq; retunes of one CQ are serialised.
 * Return: 0; -EINVAL if @cq is not ocq's or @t is not valid for it,
 * -EBUSY if @cq is a CQ of the pool, -EOPNOTSUPP if its provider moderates
 * it, -ENOMEM if software DIM's state could not be allocated.  On an error
 * nothing changed.
 */
int ib_ocq_set_tune(struct ib_cq *cq, const struct ib_ocq_tune *t)
{
	struct ib_ocq *ocq;

	int ret;

	might_sleep();
	ocq = cq ? ib_cq_to_ocq(cq) : NULL;
	if (!ocq || !t)
		return -EINVAL;
	if (ocq->pooled)
		return -EBUSY;
	mutex_lock(&ocq->tune_lock);
	ret = __ib_ocq_retune(ocq, t);
	mutex_unlock(&ocq->tune_lock);
	return ret;
}
EXPORT_SYMBOL(ib_ocq_set_tune);

/**
 * ib_ocq_get_tune - read an ordered CQ's moderation
 * @cq: a CQ of ocq's
 * @t: filled in: what the CQ was made with, or the last ib_ocq_set_tune()
 *
 * For a ULP that changes one setting: read, change, ib_ocq_set_tune() (two
 * such ULP threads must agree between themselves, as for any setting).
 *
 * Context: process context.
 */
void ib_ocq_get_tune(struct ib_cq *cq, struct ib_ocq_tune *t)
{
	struct ib_ocq *ocq = cq ? ib_cq_to_ocq(cq) : NULL;

	if (WARN_ON_ONCE(!ocq || !t))
		return;
	mutex_lock(&ocq->tune_lock);
	ib_ocq_read_tune(ocq, t);
	mutex_unlock(&ocq->tune_lock);
}
EXPORT_SYMBOL(ib_ocq_get_tune);

/* One "key=value" of a write to the tune file, into @t; @seen: keys given. */
static int ib_ocq_tune_key(char *tok, struct ib_ocq_tune *t, unsigned int *seen)
{
	static const char *const keys[] = { "defer_usecs", "defer_polls", "dim",
					    "suspend_usecs" };
	char *val = strchr(tok, '=');
	unsigned int v;
	int i;

	if (!val)
		return -EINVAL;
	*val++ = '\0';
	i = match_string(keys, ARRAY_SIZE(keys), tok);
	if (i < 0 || (*seen & BIT(i)) || kstrtouint(val, 10, &v))
		return -EINVAL;
	*seen |= BIT(i);
	switch (i) {
	case 0:
		t->defer_usecs = v;
		break;
	case 1:
		t->defer_polls = v;
		break;
	case 2:
		if (v > 1)
			return -EINVAL;
		t->flags = v ? IB_OCQ_DEFER_DIM : 0;
		break;
	default:
		t->suspend_usecs = v;
		break;
	}
	return 0;
}

/*
 * A write: "key=value" pairs, separated by blanks, of the keys the file
 * reads back; the others keep their values, except that defer_usecs=0
 * alone also ends defer_polls and dim (they need a deferral).
 */
static int ib_ocq_tune_parse(char *buf, struct ib_ocq_tune *t)
{
	unsigned int seen = 0;
	char *tok;
	int ret;

	while ((tok = strsep(&buf, " \t\n"))) {
		if (!*tok)
			continue;
		ret = ib_ocq_tune_key(tok, t, &seen);
		if (ret)
			return ret;
	}
	if (!seen)
		return -EINVAL;
	if ((seen & BIT(0)) && !t->defer_usecs) {
		if (!(seen & BIT(1)))
			t->defer_polls = 0;
		if (!(seen & BIT(2)))
			t->flags = 0;
	}
	return 0;
}

static ssize_t ib_ocq_tune_write(struct file *file, const char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	struct ib_ocq *ocq = file_inode(file)->i_private;
	struct ib_ocq_tune t;
	char *buf;
	int ret;

	if (!count || count > IB_OCQ_TUNE_MAX_WRITE)
		return -EINVAL;
	buf = memdup_user_nul(ubuf, count);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	/* a NUL inside would hide what follows it */
	ret = -EINVAL;
	if (strlen(buf) != count)
		goto out;
	/* the keys not written keep their values: read and retune at once */
	mutex_lock(&ocq->tune_lock);
	ib_ocq_read_tune(ocq, &t);
	ret = ib_ocq_tune_parse(buf, &t);
	if (!ret)
		ret = __ib_ocq_retune(ocq, &t);
	mutex_unlock(&ocq->tune_lock);
out:
	kfree(buf);
	return ret ?: count;
}

static int ib_ocq_tune_show(struct seq_file *m, void *unused)
{
	struct ib_ocq *ocq = m->private;
	struct ib_ocq_tune t;

	mutex_lock(&ocq->tune_lock);
	ib_ocq_read_tune(ocq, &t);
	mutex_unlock(&ocq->tune_lock);
	seq_printf(m, "defer_usecs=%u defer_polls=%u dim=%d suspend_usecs=%u\n",
		   t.defer_usecs, t.defer_polls, !!(t.flags & IB_OCQ_DEFER_DIM),
		   t.suspend_usecs);
	return 0;
}

static int ib_ocq_tune_open(struct inode *inode, struct file *file)
{
	return single_open(file, ib_ocq_tune_show, inode->i_private);
}

static const struct file_operations ib_ocq_tune_fops = {
	.owner = THIS_MODULE,
	.open = ib_ocq_tune_open,
	.read = seq_read,
	.write = ib_ocq_tune_write,
	.llseek = seq_lseek,
	.release = single_release,
};

/**
 * ib_ocq_tune_debugfs - the OCQ's tune file, for the administrator
 * @ocq: the ordered CQ, being published
 *
 * Reads "defer_usecs=N defer_polls=N dim=0|1 suspend_usecs=N", the
 * moderation in force; a write of some of those pairs retunes the CQ
 * (ib_ocq_set_tune()), or fails with its error and changes nothing.  Root
 * only; the OCQ's teardown removes it first and waits for its writers.
 *
 * Context: process context.
 */
void ib_ocq_tune_debugfs(struct ib_ocq *ocq)
{
	debugfs_create_file("tune", 0600, ocq->debugfs, ocq, &ib_ocq_tune_fops);
}
