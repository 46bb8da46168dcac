/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shim of <rdma/ib_verbs.h>: the few types and verbs the engine uses, with
 * the kernel's names and values.  ib_poll_cq() and ib_req_notify_cq() call
 * the device ops as the kernel's inlines do; the fake CQ of the native
 * harness (fake_cq.c) implements the ops.
 */
#ifndef _RDMA_IB_VERBS_H
#define _RDMA_IB_VERBS_H

#include <linux/bitops.h>	/* the kernel's header pulls it in too */
#include <linux/types.h>

struct ib_cq;
struct ib_wc;

enum rdma_driver_id {
	RDMA_DRIVER_UNKNOWN,
	RDMA_DRIVER_MLX5,
	RDMA_DRIVER_MLX4,
	RDMA_DRIVER_RXE = 15,
	RDMA_DRIVER_SIW = 16,
};

enum ib_cq_notify_flags {
	IB_CQ_SOLICITED = 1 << 0,
	IB_CQ_NEXT_COMP = 1 << 1,
	IB_CQ_SOLICITED_MASK = IB_CQ_SOLICITED | IB_CQ_NEXT_COMP,
	IB_CQ_REPORT_MISSED_EVENTS = 1 << 2,
};

enum ib_wc_status {
	IB_WC_SUCCESS,
	IB_WC_LOC_LEN_ERR,
	IB_WC_WR_FLUSH_ERR = 5,
};

enum ib_wc_opcode {
	IB_WC_SEND,
	IB_WC_RDMA_WRITE,
	IB_WC_RDMA_READ,
	IB_WC_RECV = 1 << 7,
};

/* the kernel's values; include/rdma/ib_ocq.h's drop-in allocators take one */
enum ib_poll_context {
	IB_POLL_SOFTIRQ,
	IB_POLL_WORKQUEUE,
	IB_POLL_UNBOUND_WORKQUEUE,
	IB_POLL_LAST_POOL_TYPE = IB_POLL_UNBOUND_WORKQUEUE,
	IB_POLL_DIRECT,
};

struct ib_cqe {
	void (*done)(struct ib_cq *cq, struct ib_wc *wc);
};

struct ib_qp {
	u32 qp_num;
};

/*
 * The kernel's layout, field for field (6.1 and 6.12 alike): what the engine
 * copies into a ring and the provider into the poll array is the real size,
 * 72 bytes on x86-64, which make cost's counts depend on.
 */
struct ib_wc {
	union {
		u64 wr_id;
		struct ib_cqe *wr_cqe;
	};
	enum ib_wc_status status;
	enum ib_wc_opcode opcode;
	u32 vendor_err;
	u32 byte_len;
	struct ib_qp *qp;
	union {
		u32 imm_data;	/* __be32 in the kernel */
		u32 invalidate_rkey;
	} ex;
	u32 src_qp;
	u32 slid;
	int wc_flags;
	u16 pkey_index;
	u8 sl;
	u8 dlid_path_bits;
	u32 port_num;
	u8 smac[6];	/* ETH_ALEN */
	u16 vlan_id;
	u8 network_hdr_type;
};

#if defined(__x86_64__)
_Static_assert(sizeof(struct ib_wc) == 72,
	       "struct ib_wc must have the kernel's size (72 bytes on x86-64)");
#endif

struct ib_device_ops {
	enum rdma_driver_id driver_id;
	int (*poll_cq)(struct ib_cq *cq, int num_entries, struct ib_wc *wc);
	int (*req_notify_cq)(struct ib_cq *cq, enum ib_cq_notify_flags flags);
};

struct ib_device {
	struct ib_device_ops ops;
};

typedef void (*ib_comp_handler)(struct ib_cq *cq, void *cq_context);

struct ib_cq {
	struct ib_device *device;
	ib_comp_handler comp_handler;
	void *cq_context;
	int cqe;
};

static inline int ib_poll_cq(struct ib_cq *cq, int num_entries,
			     struct ib_wc *wc)
{
	return cq->device->ops.poll_cq(cq, num_entries, wc);
}

static inline int ib_req_notify_cq(struct ib_cq *cq,
				   enum ib_cq_notify_flags flags)
{
	return cq->device->ops.req_notify_cq(cq, flags);
}

#endif /* _RDMA_IB_VERBS_H */
