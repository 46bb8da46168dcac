// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ocq_demo: receive buffers, the same for both sides.  Each is a buffer
 * DMA-mapped once, with its work request, reposted from its completion.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include "ocq_demo.h"

/**
 * od_recv_alloc - allocate and map receive buffers
 * @dev: the device
 * @n: number of buffers
 * @len: bytes each
 * @done: their completion callback
 *
 * The caller sets each buffer's connection (&od_recv.cconn or .sconn).
 *
 * Context: process context.
 * Return: the buffers, or NULL (a partial array is freed by od_recv_free()).
 */
struct od_recv *od_recv_alloc(struct ib_device *dev, u32 n, u32 len,
			      void (*done)(struct ib_cq *cq, struct ib_wc *wc))
{
	struct od_recv *r = kcalloc(n, sizeof(*r), GFP_KERNEL);
	u32 i;

	if (!r)
		return NULL;
	for (i = 0; i < n; i++) {
		r[i].cqe.done = done;
		r[i].buf = kzalloc(len, GFP_KERNEL);
		if (!r[i].buf)
			break;
		r[i].dma =
			ib_dma_map_single(dev, r[i].buf, len, DMA_FROM_DEVICE);
		if (ib_dma_mapping_error(dev, r[i].dma)) {
			r[i].dma = 0;
			break;
		}
		r[i].sge.addr = r[i].dma;
		r[i].sge.length = len;
		r[i].wr.wr_cqe = &r[i].cqe;
		r[i].wr.sg_list = &r[i].sge;
		r[i].wr.num_sge = 1;
	}
	return r;
}

/**
 * od_recv_free - unmap and free receive buffers
 * @r: the buffers, or NULL
 * @dev: the device
 * @n: number of buffers
 * @len: bytes each
 *
 * Context: process context.
 */
void od_recv_free(struct od_recv *r, struct ib_device *dev, u32 n, u32 len)
{
	u32 i;

	if (!r)
		return;
	for (i = 0; i < n; i++) {
		if (r[i].dma)
			ib_dma_unmap_single(dev, r[i].dma, len,
					    DMA_FROM_DEVICE);
		kfree(r[i].buf);
	}
	kfree(r);
}

/**
 * od_recv_post - post receive buffers
 * @qp: the QP
 * @r: the buffers
 * @n: how many
 * @lkey: the PD's local DMA lkey
 *
 * Context: any context.
 * Return: 0 or the error of ib_post_recv().
 */
int od_recv_post(struct ib_qp *qp, struct od_recv *r, u32 n, u32 lkey)
{
	u32 i;
	int ret;

	for (i = 0; i < n; i++) {
		r[i].sge.lkey = lkey;
		ret = ib_post_recv(qp, &r[i].wr, NULL);
		if (ret)
			return ret;
	}
	return 0;
}
