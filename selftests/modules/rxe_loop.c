// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Loopback RC QP pairs on rxe without rdma_cm; see rxe_loop.h.  Linked into
 * each test module that needs them.
 */
#include <linux/etherdevice.h>
#include <linux/netdevice.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "rxe_loop.h"

/* An IPv4-mapped RoCEv2 GID: what a loopback pair on rxe addresses. */
static bool rxe_loop_gid_usable(const struct ib_gid_attr *attr)
{
	const struct in6_addr *addr = (const struct in6_addr *)attr->gid.raw;

	return attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP &&
	       ipv6_addr_v4mapped(addr);
}

/* Take the GID of @attr, and the MAC of its netdev for the AH. */
static int rxe_loop_use_gid(struct rxe_loop *l, const struct ib_gid_attr *attr)
{
	struct net_device *ndev;
	int ret;

	l->gid = attr->gid;
	l->gid_index = attr->index;
	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(attr);
	ret = IS_ERR(ndev) ? PTR_ERR(ndev) : 0;
	if (!ret)
		ether_addr_copy(l->dmac, ndev->dev_addr);
	rcu_read_unlock();
	return ret;
}

/**
 * rxe_loop_init - find the GID a loopback pair on @dev addresses
 * @l: filled in; the QP set-up defaults too (&struct rxe_loop)
 * @dev: the device
 *
 * Context: process context.
 * Return: 0, -ENOENT if port 1 has no IPv4-mapped RoCEv2 GID, or the
 * error of ib_query_port().
 */
int rxe_loop_init(struct rxe_loop *l, struct ib_device *dev)
{
	const struct ib_gid_attr *attr;
	struct ib_port_attr pattr;
	int i, ret;

	l->dev = dev;
	l->access = IB_ACCESS_LOCAL_WRITE;
	l->min_rnr_timer = 12;
	ret = ib_query_port(dev, 1, &pattr);
	if (ret)
		return ret;
	for (i = 0; i < pattr.gid_tbl_len; i++) {
		attr = rdma_get_gid_attr(dev, 1, i);
		if (IS_ERR(attr))
			continue;
		ret = rxe_loop_gid_usable(attr) ? rxe_loop_use_gid(l, attr) :
						  -ENOENT;
		rdma_put_gid_attr(attr);
		if (!ret)
			return 0;
	}
	return -ENOENT;
}

static int rxe_loop_to_init(const struct rxe_loop *l, struct ib_qp *qp)
{
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = l->access,
	};

	return ib_modify_qp(qp, &a,
			    IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
				    IB_QP_ACCESS_FLAGS);
}

static int rxe_loop_to_rtr(const struct rxe_loop *l, struct ib_qp *qp,
			   u32 dest_qpn)
{
	union ib_gid gid = l->gid; /* rdma_ah_set_grh() of 6.1 takes no const */
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_RTR,
		.path_mtu = IB_MTU_1024,
		.dest_qp_num = dest_qpn,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = l->min_rnr_timer,
	};

	a.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&a.ah_attr, 1);
	rdma_ah_set_grh(&a.ah_attr, &gid, 0, l->gid_index, 64, 0);
	/* not going through rdma_cm: the destination MAC is ours to fill */
	ether_addr_copy(a.ah_attr.roce.dmac, l->dmac);
	return ib_modify_qp(qp, &a,
			    IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
				    IB_QP_DEST_QPN | IB_QP_RQ_PSN |
				    IB_QP_MAX_DEST_RD_ATOMIC |
				    IB_QP_MIN_RNR_TIMER);
}

/*
 * The ACK timeout is 4.096 us * 2^17, about 0.5 s: with 2^14 (67 ms), rxe
 * under TCG on a busy host retransmitted whole windows that had only been
 * acknowledged late, which made the streams slower, not more thorough.
 */
static int rxe_loop_to_rts(struct ib_qp *qp)
{
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_RTS,
		.timeout = 17,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.max_rd_atomic = 1,
	};

	return ib_modify_qp(qp, &a,
			    IB_QP_STATE | IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
				    IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
				    IB_QP_MAX_QP_RD_ATOMIC);
}

/**
 * rxe_loop_connect - take @qp from RESET to RTS, towards @dest_qpn
 * @l: from rxe_loop_init()
 * @qp: an RC QP of @l's device
 * @dest_qpn: the peer QP, on the same device
 *
 * Context: process context.
 * Return: 0 or the error of ib_modify_qp().
 */
int rxe_loop_connect(const struct rxe_loop *l, struct ib_qp *qp, u32 dest_qpn)
{
	int ret;

	ret = rxe_loop_to_init(l, qp);
	if (!ret)
		ret = rxe_loop_to_rtr(l, qp, dest_qpn);
	if (!ret)
		ret = rxe_loop_to_rts(qp);
	return ret;
}
