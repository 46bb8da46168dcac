/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Loopback RC QP pairs on rxe without rdma_cm, for the test modules: find
 * port 1's IPv4-mapped RoCEv2 GID, and take a QP from RESET to RTS towards
 * another QP of the same device.
 */
#ifndef _OCQ_RXE_LOOP_H
#define _OCQ_RXE_LOOP_H

#include <linux/if_ether.h>
#include <rdma/ib_verbs.h>

/**
 * struct rxe_loop - where a loopback QP sends to, and how its QPs are set up
 * @dev: the device
 * @gid: port 1's usable GID
 * @gid_index: its index
 * @dmac: the MAC of its netdev (the AH's destination: no rdma_cm resolves it)
 * @access: the QPs' qp_access_flags; rxe_loop_init() sets
 *	IB_ACCESS_LOCAL_WRITE, a test that takes RDMA WRITEs adds to it
 * @min_rnr_timer: the QPs' RNR NAK timer code; rxe_loop_init() sets 12
 *	(0.64 ms), a test that provokes RNR retries may shorten it
 */
struct rxe_loop {
	struct ib_device *dev;
	union ib_gid gid;
	int gid_index;
	u8 dmac[ETH_ALEN];
	int access;
	u8 min_rnr_timer;
};

int rxe_loop_init(struct rxe_loop *l, struct ib_device *dev);
int rxe_loop_connect(const struct rxe_loop *l, struct ib_qp *qp, u32 dest_qpn);

#endif /* _OCQ_RXE_LOOP_H */
