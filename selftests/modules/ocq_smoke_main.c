// SPDX-License-Identifier: GPL-2.0
/*
 * ocq_smoke - foundation smoke tests: does the test machinery see a working rxe0?
 *
 * A test module in the kselftest_module.h pattern: module init runs the test selected
 * with test=<name>, prints KTAP lines to the kernel log ("ocq_smoke: " prefix, which
 * selftests/lib/ksft.sh strips) and fails the load when a subtest failed. A subtest
 * whose prerequisite is missing prints "ok N name # SKIP reason"; when every subtest
 * was skipped the load still succeeds and the helper reports a skip. The plan line
 * ("1..N") comes last, as TAP allows.
 *
 * Tests (test=): load_unload, sees_rxe0, link_delete, alloc_cq, send_recv, rdma_write.
 *
 * The module is an ib_client. It attaches to the device named by device= (rxe0) only,
 * and the tests run under smoke_lock, which .remove also takes: the device cannot go
 * away under a running test. The read-only parameters added/removed count the client
 * callbacks for that device, so a script can check them in /sys/module/.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "rxe_loop.h"

static char *test = "load_unload";
module_param(test, charp, 0444);
MODULE_PARM_DESC(test, "test to run at load time");

static char *device = "rxe0";
module_param(device, charp, 0444);
MODULE_PARM_DESC(device, "RDMA device to attach to");

static unsigned int added;
module_param(added, uint, 0444);
MODULE_PARM_DESC(added, "times .add attached to the device (read-only)");

static unsigned int removed;
module_param(removed, uint, 0444);
MODULE_PARM_DESC(removed,
		 "times .remove detached from it consistently (read-only)");

/* Size of each data buffer, and how much of it a transfer carries. */
#define SMOKE_BUF_SIZE 256
#define SMOKE_XFER_LEN 200
/* Fill byte of the receive buffer, so we can tell what was written. */
#define SMOKE_CANARY 0xa5
/* How long to wait for one completion. */
#define SMOKE_TIMEOUT (5 * HZ)

/* Per-device client data: what .add attached, checked again by .remove. */
struct smoke_ctx {
	struct ib_device *ibdev;
};

/* KTAP result counters of one test run. */
struct smoke_ktap {
	unsigned int nr;
	unsigned int failed;
	unsigned int skipped;
};

/* One outstanding work request and the completion it got. */
struct smoke_op {
	struct ib_cqe cqe;
	struct completion done;
	struct ib_wc wc;
};

/* Two connected RC QPs on one device, their CQ, buffers and operations. */
struct smoke_pair {
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp[2];
	u8 *buf[2];
	u64 dma[2];
	struct rxe_loop loop; /* where the QPs send to */
	struct smoke_op send_op;
	struct smoke_op recv_op;
};

static struct ib_client smoke_client;
static DEFINE_MUTEX(smoke_lock);
/* The attached device's context, or NULL: protected by smoke_lock. */
static struct smoke_ctx *smoke_ctx;

static void smoke_result(struct smoke_ktap *k, bool ok, const char *name)
{
	k->nr++;
	if (!ok)
		k->failed++;
	pr_info("%s %u %s\n", ok ? "ok" : "not ok", k->nr, name);
}

static void smoke_skip(struct smoke_ktap *k, const char *name, const char *why)
{
	k->nr++;
	k->skipped++;
	pr_info("ok %u %s # SKIP %s\n", k->nr, name, why);
}

static int smoke_add(struct ib_device *ibdev)
{
	struct smoke_ctx *ctx;

	if (strcmp(dev_name(&ibdev->dev), device))
		return -EOPNOTSUPP; /* not ours: the core will not call .remove */

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	ctx->ibdev = ibdev;
	ib_set_client_data(ibdev, &smoke_client, ctx);

	mutex_lock(&smoke_lock);
	smoke_ctx = ctx;
	added++;
	mutex_unlock(&smoke_lock);
	pr_info("# add %s\n", dev_name(&ibdev->dev));
	return 0;
}

static void smoke_remove(struct ib_device *ibdev, void *client_data)
{
	struct smoke_ctx *ctx = client_data;
	bool consistent;

	mutex_lock(&smoke_lock);
	consistent = ctx && ctx == smoke_ctx && ctx->ibdev == ibdev;
	if (consistent)
		removed++;
	smoke_ctx = NULL;
	mutex_unlock(&smoke_lock);

	if (consistent)
		pr_info("# remove %s ok\n", dev_name(&ibdev->dev));
	else
		pr_err("# remove %s: client data %p does not match\n",
		       dev_name(&ibdev->dev), client_data);
	kfree(ctx);
}

static struct ib_client smoke_client = {
	.name = "ocq_smoke",
	.add = smoke_add,
	.remove = smoke_remove,
};

/* ---- test: load_unload, sees_rxe0, link_delete ---- */

static void smoke_test_load_unload(struct ib_device *dev, struct smoke_ktap *k)
{
	smoke_result(k, true, "load");
}

static void smoke_test_sees_rxe0(struct ib_device *dev, struct smoke_ktap *k)
{
	struct ib_port_attr attr;

	smoke_result(k, dev && added == 1, "client_add_called");
	if (!dev)
		return;
	smoke_result(k, rdma_protocol_roce(dev, 1), "port1_is_roce");
	smoke_result(k,
		     !ib_query_port(dev, 1, &attr) &&
			     attr.state == IB_PORT_ACTIVE,
		     "port1_active");
}

/* The script deletes the link while we are loaded and checks .remove ran. */
static void smoke_test_link_delete(struct ib_device *dev, struct smoke_ktap *k)
{
	smoke_result(k, dev && added == 1 && removed == 0,
		     "attached_before_delete");
}

/* ---- test: alloc_cq ---- */

static const char *const smoke_poll_names[] = {
	[IB_POLL_DIRECT] = "direct",
	[IB_POLL_SOFTIRQ] = "softirq",
	[IB_POLL_WORKQUEUE] = "workqueue",
	[IB_POLL_UNBOUND_WORKQUEUE] = "unbound_workqueue",
};

/* Allocate and free one CQ; true if it came back as asked. */
static bool smoke_alloc_one_cq(struct ib_device *dev, enum ib_poll_context pc,
			       int vec)
{
	struct ib_cq *cq;
	bool ok;

	cq = ib_alloc_cq(dev, NULL, 64, vec, pc);
	if (IS_ERR(cq)) {
		pr_info("# ib_alloc_cq(%s, vec %d): %ld\n",
			smoke_poll_names[pc], vec, PTR_ERR(cq));
		return false;
	}
	ok = cq->cqe >= 64 && cq->poll_ctx == pc;
	/* An empty CQ yields nothing when polled directly. */
	if (pc == IB_POLL_DIRECT)
		ok = ok && ib_process_cq_direct(cq, 16) == 0;
	ib_free_cq(cq);
	return ok;
}

static void smoke_test_alloc_cq(struct ib_device *dev, struct smoke_ktap *k)
{
	/* Not a range: IB_POLL_DIRECT comes after the pool types in the enum. */
	static const enum ib_poll_context contexts[] = {
		IB_POLL_DIRECT,
		IB_POLL_SOFTIRQ,
		IB_POLL_WORKQUEUE,
		IB_POLL_UNBOUND_WORKQUEUE,
	};
	enum ib_poll_context pc;
	char name[48];
	int i, vec;

	if (!dev) {
		smoke_skip(k, "alloc_cq", "device not present");
		return;
	}
	for (i = 0; i < ARRAY_SIZE(contexts); i++) {
		pc = contexts[i];
		for (vec = 0; vec < dev->num_comp_vectors; vec++) {
			snprintf(name, sizeof(name), "alloc_cq_%s_vec%d",
				 smoke_poll_names[pc], vec);
			smoke_result(k, smoke_alloc_one_cq(dev, pc, vec), name);
		}
	}
}

/* ---- two connected RC QPs ---- */

static void smoke_op_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct smoke_op *op = container_of(wc->wr_cqe, struct smoke_op, cqe);

	op->wc = *wc;
	complete(&op->done);
}

static void smoke_op_init(struct smoke_op *op)
{
	memset(op, 0, sizeof(*op));
	op->cqe.done = smoke_op_done;
	init_completion(&op->done);
}

/* Wait for @op; true if it completed successfully with @opcode. */
static bool smoke_op_wait(struct smoke_op *op, enum ib_wc_opcode opcode)
{
	if (!wait_for_completion_timeout(&op->done, SMOKE_TIMEOUT)) {
		pr_info("# no completion within %d s\n", SMOKE_TIMEOUT / HZ);
		return false;
	}
	if (op->wc.status != IB_WC_SUCCESS || op->wc.opcode != opcode) {
		pr_info("# completion status %s opcode %d (want %d)\n",
			ib_wc_status_msg(op->wc.status), op->wc.opcode, opcode);
		return false;
	}
	return true;
}

static struct ib_qp *smoke_create_qp(struct smoke_pair *p)
{
	struct ib_qp_init_attr init = {
		.send_cq     = p->cq,
		.recv_cq     = p->cq,
		.qp_type     = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = {
			.max_send_wr  = 8,
			.max_recv_wr  = 8,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};

	return ib_create_qp(p->pd, &init);
}

static int smoke_map_bufs(struct smoke_pair *p)
{
	int i;

	for (i = 0; i < 2; i++) {
		p->buf[i] = kmalloc(SMOKE_BUF_SIZE, GFP_KERNEL);
		if (!p->buf[i])
			return -ENOMEM;
		memset(p->buf[i], SMOKE_CANARY, SMOKE_BUF_SIZE);
		p->dma[i] = ib_dma_map_single(p->dev, p->buf[i], SMOKE_BUF_SIZE,
					      DMA_BIDIRECTIONAL);
		if (ib_dma_mapping_error(p->dev, p->dma[i])) {
			kfree(p->buf[i]);
			p->buf[i] = NULL;
			return -ENOMEM;
		}
	}
	return 0;
}

static void smoke_unmap_bufs(struct smoke_pair *p)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (!p->buf[i])
			continue;
		ib_dma_unmap_single(p->dev, p->dma[i], SMOKE_BUF_SIZE,
				    DMA_BIDIRECTIONAL);
		kfree(p->buf[i]);
	}
}

/* Create and connect qp[0] <-> qp[1]; on error everything is undone. */
static int smoke_pair_create(struct smoke_pair *p, struct ib_device *dev)
{
	int i, ret;

	p->dev = dev;
	ret = rxe_loop_init(&p->loop, dev);
	if (ret) {
		pr_info("# no IPv4-mapped RoCEv2 GID on %s: %d\n",
			dev_name(&dev->dev), ret);
		return ret;
	}
	/* the RDMA WRITE test writes into the peer's buffer */
	p->loop.access |= IB_ACCESS_REMOTE_WRITE;
	p->pd = ib_alloc_pd(dev, IB_PD_UNSAFE_GLOBAL_RKEY);
	if (IS_ERR(p->pd))
		return PTR_ERR(p->pd);
	/* One CQ for both QPs and directions; it is freed in out_unmap_bufs. */
	p->cq = ib_alloc_cq(dev, NULL, 32, 0, IB_POLL_WORKQUEUE);
	if (IS_ERR(p->cq)) {
		ret = PTR_ERR(p->cq);
		goto out_dealloc_pd;
	}
	ret = smoke_map_bufs(p);
	if (ret)
		goto out_unmap_bufs; /* the first buffer may be mapped */
	for (i = 0; i < 2; i++) {
		p->qp[i] = smoke_create_qp(p);
		if (IS_ERR(p->qp[i])) {
			ret = PTR_ERR(p->qp[i]);
			goto out_destroy_qps;
		}
	}
	ret = rxe_loop_connect(&p->loop, p->qp[0], p->qp[1]->qp_num);
	if (!ret)
		ret = rxe_loop_connect(&p->loop, p->qp[1], p->qp[0]->qp_num);
	if (ret) {
		pr_info("# connecting the QPs failed: %d\n", ret);
		goto out_destroy_qps;
	}
	return 0;

out_destroy_qps:
	while (--i >= 0)
		ib_destroy_qp(p->qp[i]);
out_unmap_bufs:
	smoke_unmap_bufs(p);
	ib_free_cq(p->cq);
out_dealloc_pd:
	ib_dealloc_pd(p->pd);
	return ret;
}

static void smoke_pair_destroy(struct smoke_pair *p)
{
	ib_destroy_qp(p->qp[1]);
	ib_destroy_qp(p->qp[0]);
	/* No completion handler runs after ib_free_cq(): the ops may go. */
	ib_free_cq(p->cq);
	smoke_unmap_bufs(p);
	ib_dealloc_pd(p->pd);
}

/* Fill the source buffer with a pattern that differs from the canary. */
static void smoke_fill_pattern(struct smoke_pair *p)
{
	int i;

	for (i = 0; i < SMOKE_XFER_LEN; i++)
		p->buf[0][i] =
			(u8)(i * 7 + 3) == SMOKE_CANARY ? 0 : (u8)(i * 7 + 3);
	ib_dma_sync_single_for_device(p->dev, p->dma[0], SMOKE_BUF_SIZE,
				      DMA_TO_DEVICE);
}

/* True if the destination holds the pattern and nothing was written past it. */
static bool smoke_payload_ok(struct smoke_pair *p)
{
	int i;

	ib_dma_sync_single_for_cpu(p->dev, p->dma[1], SMOKE_BUF_SIZE,
				   DMA_FROM_DEVICE);
	if (memcmp(p->buf[1], p->buf[0], SMOKE_XFER_LEN)) {
		pr_info("# payload differs from what was sent\n");
		return false;
	}
	for (i = SMOKE_XFER_LEN; i < SMOKE_BUF_SIZE; i++) {
		if (p->buf[1][i] != SMOKE_CANARY) {
			pr_info("# byte %d past the payload was overwritten\n",
				i);
			return false;
		}
	}
	return true;
}

/* ---- test: send_recv ---- */

static int smoke_post_send_recv(struct smoke_pair *p)
{
	struct ib_sge rsge = {
		.addr = p->dma[1],
		.length = SMOKE_BUF_SIZE,
		.lkey = p->pd->local_dma_lkey,
	};
	struct ib_sge ssge = {
		.addr = p->dma[0],
		.length = SMOKE_XFER_LEN,
		.lkey = p->pd->local_dma_lkey,
	};
	struct ib_recv_wr rwr = {
		.wr_cqe = &p->recv_op.cqe,
		.sg_list = &rsge,
		.num_sge = 1,
	};
	struct ib_send_wr swr = {
		.wr_cqe = &p->send_op.cqe,
		.sg_list = &ssge,
		.num_sge = 1,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
	int ret;

	ret = ib_post_recv(p->qp[1], &rwr, NULL);
	if (!ret)
		ret = ib_post_send(p->qp[0], &swr, NULL);
	if (ret)
		pr_info("# posting failed: %d\n", ret);
	return ret;
}

static void smoke_run_send_recv(struct smoke_pair *p, struct smoke_ktap *k)
{
	bool sent, received;

	smoke_op_init(&p->send_op);
	smoke_op_init(&p->recv_op);
	smoke_fill_pattern(p);
	smoke_result(k, !smoke_post_send_recv(p), "post");
	sent = smoke_op_wait(&p->send_op, IB_WC_SEND);
	smoke_result(k, sent, "send_completion");
	received = smoke_op_wait(&p->recv_op, IB_WC_RECV) &&
		   p->recv_op.wc.byte_len == SMOKE_XFER_LEN &&
		   p->recv_op.wc.qp == p->qp[1];
	smoke_result(k, received, "recv_completion");
	smoke_result(k, received && smoke_payload_ok(p), "payload");
}

/* ---- test: rdma_write ---- */

static void smoke_run_rdma_write(struct smoke_pair *p, struct smoke_ktap *k)
{
	struct ib_sge sge = {
		.addr = p->dma[0],
		.length = SMOKE_XFER_LEN,
		.lkey = p->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_cqe = &p->send_op.cqe, .sg_list = &sge, .num_sge = 1,
			.opcode = IB_WR_RDMA_WRITE, .send_flags = IB_SEND_SIGNALED,
		},
		.remote_addr = p->dma[1],
		.rkey = p->pd->unsafe_global_rkey,
	};
	bool written;

	smoke_op_init(&p->send_op);
	smoke_fill_pattern(p);
	smoke_result(k, !ib_post_send(p->qp[0], &wr.wr, NULL), "post");
	written = smoke_op_wait(&p->send_op, IB_WC_RDMA_WRITE);
	smoke_result(k, written, "write_completion");
	smoke_result(k, written && smoke_payload_ok(p), "payload");
}

/* Run @fn on a fresh connected QP pair of @dev. */
static void
smoke_with_pair(struct ib_device *dev, struct smoke_ktap *k, const char *name,
		void (*fn)(struct smoke_pair *p, struct smoke_ktap *k))
{
	struct smoke_pair *p;

	if (!dev) {
		smoke_skip(k, name, "device not present");
		return;
	}
	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p) {
		smoke_result(k, false, "alloc");
		return;
	}
	if (smoke_pair_create(p, dev)) {
		smoke_result(k, false, "qp_pair_setup");
	} else {
		smoke_result(k, true, "qp_pair_setup");
		fn(p, k);
		smoke_pair_destroy(p);
	}
	kfree(p);
}

static void smoke_test_send_recv(struct ib_device *dev, struct smoke_ktap *k)
{
	smoke_with_pair(dev, k, "send_recv", smoke_run_send_recv);
}

static void smoke_test_rdma_write(struct ib_device *dev, struct smoke_ktap *k)
{
	smoke_with_pair(dev, k, "rdma_write", smoke_run_rdma_write);
}

/* ---- module ---- */

static const struct {
	const char *name;
	void (*run)(struct ib_device *dev, struct smoke_ktap *k);
} smoke_tests[] = {
	{ "load_unload", smoke_test_load_unload },
	{ "sees_rxe0", smoke_test_sees_rxe0 },
	{ "link_delete", smoke_test_link_delete },
	{ "alloc_cq", smoke_test_alloc_cq },
	{ "send_recv", smoke_test_send_recv },
	{ "rdma_write", smoke_test_rdma_write },
};

/* Run the selected test; 0 if nothing failed. */
static int smoke_run(int idx)
{
	struct smoke_ktap k = {};

	pr_info("KTAP version 1\n");
	pr_info("# test=%s device=%s\n", smoke_tests[idx].name, device);
	mutex_lock(&smoke_lock);
	smoke_tests[idx].run(smoke_ctx ? smoke_ctx->ibdev : NULL, &k);
	mutex_unlock(&smoke_lock);
	pr_info("1..%u\n", k.nr);
	pr_info("# totals: pass:%u fail:%u skip:%u\n",
		k.nr - k.failed - k.skipped, k.failed, k.skipped);
	return k.failed ? -EINVAL : 0;
}

static int smoke_find_test(void)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(smoke_tests); i++)
		if (!strcmp(test, smoke_tests[i].name))
			return i;
	return -1;
}

static int __init smoke_init(void)
{
	int idx, ret;

	idx = smoke_find_test();
	if (idx < 0) {
		pr_err("unknown test '%s'\n", test);
		return -EINVAL;
	}
	ret = ib_register_client(&smoke_client);
	if (ret)
		return ret;
	ret = smoke_run(idx);
	if (ret)
		goto out_unregister_client;
	return 0;

out_unregister_client:
	ib_unregister_client(&smoke_client);
	return ret;
}

static void __exit smoke_exit(void)
{
	ib_unregister_client(&smoke_client);
	pr_info("# exit\n");
}

module_init(smoke_init);
module_exit(smoke_exit);
MODULE_DESCRIPTION("ocq foundation smoke tests on an RDMA device");
MODULE_LICENSE("GPL");
