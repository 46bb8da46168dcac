/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Userspace shim: the part of the verbs API that ib_sq_acct_post_send()
 * uses.  ib_post_send() is a fake provided by the test (sq_acct_glue.c).
 */
#ifndef _SHIM_RDMA_IB_VERBS_H
#define _SHIM_RDMA_IB_VERBS_H

#include <linux/types.h>

enum ib_send_flags {
	IB_SEND_FENCE		= 1,
	IB_SEND_SIGNALED	= 1 << 1,
};

struct ib_send_wr {
	struct ib_send_wr	*next;
	unsigned int		send_flags;
};

struct ib_qp;

int ib_post_send(struct ib_qp *qp, const struct ib_send_wr *send_wr,
		 const struct ib_send_wr **bad_send_wr);

#endif
