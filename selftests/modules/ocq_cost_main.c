// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ocq_cost_test - what ordered CQs cost in memory and in grace periods, next
 * to ib_core's CQs, on rxe0; driven by selftests/ocq/ocq_memory.sh and
 * ocq_free_many.sh, which measure around its commands.
 *
 * debugfs ocq_cost_test/ctl takes one command per write:
 *
 *   alloc KIND NR_CQE COUNT  allocate COUNT CQs of KIND with NR_CQE entries
 *			      in workqueue context and keep them (one batch at
 *			      a time): cq (ib_alloc_cq()), strict, flow,
 *			      parallel (ib_ocq_alloc() in that mode, the
 *			      defaults otherwise: a flow domain or a worker
 *			      per CPU), all on vector 0; pool
 *			      (ib_ocq_cq_pool_get() with the default
 *			      attributes), cq_pool (ib_cq_pool_get()), the
 *			      Nth get with vector hint N.  A pooled CQ has at
 *			      least 4096 entries in both pools: with NR_CQE
 *			      4096 every get takes a CQ of its own, and
 *			      ib_core's pool, which makes one for every vector
 *			      at once, makes COUNT of them when COUNT is a
 *			      multiple of its vectors.
 *   free		      free the batch: pool gives the room back and
 *			      frees ocq's pool (ib_ocq_cq_pool_destroy(), the
 *			      batch being its only users); cq_pool gives the
 *			      room back only (ib_core frees its pool with the
 *			      device).  Then rcu_barrier(), so that what the
 *			      frees left to RCU callbacks is gone too.
 *   put		      pooled kinds: give the room back, leaving the CQs
 *			      in their pool for the device's removal to free
 *   sync COUNT		      COUNT synchronize_rcu() calls in a row
 *
 * A write fails with the error of the command.  ocq_cost_test/gp reads as
 * "COOKIE NS": get_state_synchronize_rcu() (as a long) and ktime_get_ns(), for the
 * scripts to difference around a command or a device removal.  The cookie
 * is the polled grace-period sequence (its low two bits the state), which
 * every grace period moves on by 4, normal or expedited alike (since 6.0:
 * both kernels here): a quarter of the difference is the grace periods that
 * ended in between, give or take the one under way at each end.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_ocq.h>

/* the most CQs of one batch */
#define OC_MAX 128
/* the longest command */
#define OC_CMD_LEN 64

static char *device = "rxe0";
module_param(device, charp, 0444);
MODULE_PARM_DESC(device, "the RDMA device (default rxe0)");

enum oc_kind { OC_CQ, OC_STRICT, OC_FLOW, OC_PARALLEL, OC_POOL, OC_CQ_POOL };

static const char *const oc_kinds[] = {
	[OC_CQ] = "cq",	    [OC_STRICT] = "strict",
	[OC_FLOW] = "flow", [OC_PARALLEL] = "parallel",
	[OC_POOL] = "pool", [OC_CQ_POOL] = "cq_pool",
};

/**
 * struct oc_batch - the CQs one alloc command made
 * @kind: what they are
 * @nr_cqe: their entries (what was asked)
 * @count: how many
 * @dev: the device they are on (a reference held while they live)
 * @cq: the CQs (every kind)
 * @ocq: the ordered CQs of strict, flow and parallel
 */
struct oc_batch {
	enum oc_kind kind;
	unsigned int nr_cqe;
	unsigned int count;
	struct ib_device *dev;
	struct ib_cq *cq[OC_MAX];
	struct ib_ocq *ocq[OC_MAX];
};

static DEFINE_MUTEX(oc_lock);
static struct oc_batch oc_batch;
static struct dentry *oc_dir;

/* parallel mode's process(): nothing is ever posted on these CQs */
static void oc_process(struct ib_cq *cq, struct ib_wc *wc)
{
}

static int oc_alloc_one(struct oc_batch *b, unsigned int i)
{
	struct ib_ocq_attr attr = {};

	switch (b->kind) {
	case OC_CQ:
		b->cq[i] = ib_alloc_cq(b->dev, NULL, b->nr_cqe, 0,
				       IB_POLL_WORKQUEUE);
		break;
	/*
	 * The vectors in turn, as a ULP spreads its queues: ib_core's pool
	 * makes a CQ for every vector at once, and takes the others' later
	 */
	case OC_POOL:
		b->cq[i] = ib_ocq_cq_pool_get(b->dev, b->nr_cqe, i,
					      IB_POLL_WORKQUEUE, NULL);
		break;
	case OC_CQ_POOL:
		b->cq[i] =
			ib_cq_pool_get(b->dev, b->nr_cqe, i, IB_POLL_WORKQUEUE);
		break;
	default:
		attr.mode = b->kind == OC_FLOW	   ? IB_OCQ_FLOW :
			    b->kind == OC_PARALLEL ? IB_OCQ_PARALLEL :
						     IB_OCQ_STRICT;
		if (b->kind == OC_PARALLEL)
			attr.process = oc_process;
		b->ocq[i] = ib_ocq_alloc(b->dev, NULL, b->nr_cqe, 0, &attr);
		if (IS_ERR(b->ocq[i])) {
			b->cq[i] = ERR_CAST(b->ocq[i]);
			b->ocq[i] = NULL;
		} else {
			b->cq[i] = ib_ocq_cq(b->ocq[i]);
		}
		break;
	}
	if (IS_ERR(b->cq[i])) {
		int ret = PTR_ERR(b->cq[i]);

		b->cq[i] = NULL;
		return ret;
	}
	return 0;
}

/*
 * Give back or free the batch's first @n CQs; @keep_pooled: leave pooled
 * CQs in their pool.
 */
static void oc_release(struct oc_batch *b, unsigned int n, bool keep_pooled)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		switch (b->kind) {
		case OC_CQ:
			ib_free_cq(b->cq[i]);
			break;
		case OC_POOL:
			ib_ocq_cq_pool_put(b->cq[i], b->nr_cqe);
			break;
		case OC_CQ_POOL:
			ib_cq_pool_put(b->cq[i], b->nr_cqe);
			break;
		default:
			ib_ocq_free(b->ocq[i]);
			break;
		}
		b->cq[i] = NULL;
		b->ocq[i] = NULL;
	}
	if (b->kind == OC_POOL && !keep_pooled)
		ib_ocq_cq_pool_destroy(b->dev);
	/* what the frees handed to RCU callbacks is freed before the next */
	rcu_barrier();
	ib_device_put(b->dev);
	b->dev = NULL;
	b->count = 0;
}

static int oc_alloc(const char *kind, unsigned int nr_cqe, unsigned int count)
{
	struct oc_batch *b = &oc_batch;
	unsigned int i;
	int ret;

	if (b->dev)
		return -EBUSY;
	ret = match_string(oc_kinds, ARRAY_SIZE(oc_kinds), kind);
	if (ret < 0 || !nr_cqe || !count || count > OC_MAX)
		return -EINVAL;
	b->kind = ret;
	b->nr_cqe = nr_cqe;
	b->dev = ib_device_get_by_name(device, RDMA_DRIVER_UNKNOWN);
	if (!b->dev)
		return -ENODEV;
	for (i = 0; i < count; i++) {
		ret = oc_alloc_one(b, i);
		if (ret) {
			pr_info("# alloc %s %u: #%u failed: %d\n", kind, nr_cqe,
				i, ret);
			oc_release(b, i, false);
			return ret;
		}
	}
	b->count = count;
	return 0;
}

static int oc_free(bool keep_pooled)
{
	struct oc_batch *b = &oc_batch;

	if (!b->dev)
		return -ENOENT;
	if (keep_pooled && b->kind != OC_POOL && b->kind != OC_CQ_POOL)
		return -EINVAL;
	oc_release(b, b->count, keep_pooled);
	return 0;
}

static int oc_sync(unsigned int count)
{
	unsigned int i;

	if (!count || count > 1000)
		return -EINVAL;
	for (i = 0; i < count; i++)
		synchronize_rcu();
	return 0;
}

static int oc_command(char *cmd)
{
	char kind[16];
	unsigned int a, b;

	if (sscanf(cmd, "alloc %15s %u %u", kind, &a, &b) == 3)
		return oc_alloc(kind, a, b);
	if (sscanf(cmd, "sync %u", &a) == 1)
		return oc_sync(a);
	if (!strcmp(cmd, "free"))
		return oc_free(false);
	if (!strcmp(cmd, "put"))
		return oc_free(true);
	return -EINVAL;
}

static ssize_t oc_ctl_write(struct file *file, const char __user *ubuf,
			    size_t len, loff_t *ppos)
{
	char cmd[OC_CMD_LEN];
	int ret;

	if (!len || len >= sizeof(cmd))
		return -EINVAL;
	if (copy_from_user(cmd, ubuf, len))
		return -EFAULT;
	cmd[len] = '\0';
	mutex_lock(&oc_lock);
	ret = oc_command(strim(cmd));
	mutex_unlock(&oc_lock);
	return ret ?: len;
}

static const struct file_operations oc_ctl_fops = {
	.owner = THIS_MODULE,
	.write = oc_ctl_write,
	.llseek = noop_llseek,
};

static ssize_t oc_gp_read(struct file *file, char __user *ubuf, size_t len,
			  loff_t *ppos)
{
	char buf[80];
	int n;

	/* signed: differences in the scripts' 64-bit shell arithmetic */
	n = scnprintf(buf, sizeof(buf), "%ld %lld\n",
		      (long)get_state_synchronize_rcu(), ktime_get_ns());
	return simple_read_from_buffer(ubuf, len, ppos, buf, n);
}

static const struct file_operations oc_gp_fops = {
	.owner = THIS_MODULE,
	.read = oc_gp_read,
	.llseek = default_llseek,
};

static int __init oc_init(void)
{
	oc_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("ctl", 0200, oc_dir, NULL, &oc_ctl_fops);
	debugfs_create_file("gp", 0400, oc_dir, NULL, &oc_gp_fops);
	return 0;
}

static void __exit oc_exit(void)
{
	debugfs_remove_recursive(oc_dir);
	mutex_lock(&oc_lock);
	if (oc_batch.dev)
		oc_release(&oc_batch, oc_batch.count, false);
	mutex_unlock(&oc_lock);
}

module_init(oc_init);
module_exit(oc_exit);
MODULE_LICENSE("Dual BSD/GPL");
MODULE_DESCRIPTION("ocq's memory and grace periods against ib_core's CQs");
