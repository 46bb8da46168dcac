/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * C interface between the C++ test driver and sq_acct_glue.c, the C
 * translation unit that compiles include/rdma/ib_sq_acct.h as it is.
 */
#ifndef _SQ_ACCT_GLUE_H
#define _SQ_ACCT_GLUE_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct sqt;
struct sqt_credit;

typedef void (*sqt_release_cb)(void *opaque, uint64_t seq, void *ctx);

struct sqt_stats {
	uint64_t posts, signaled, blocked, blocked_cq, reaped, released;
	uint32_t max_depth;
};

/* Shim state: WARN_ON_ONCE() hits, allocation failure countdown. */
extern int sqt_warnings;
extern int sqt_fail_alloc;

/* Fake ib_post_send(): fail at WR index sqt_post_fail_at (-1: never) with sqt_post_err. */
extern int sqt_post_fail_at;
extern int sqt_post_err;
extern bool sqt_post_leave_bad_unset;
extern unsigned int sqt_post_flags[64];	/* send_flags of the WRs of the last call */
extern unsigned int sqt_post_nwr;

enum { SQT_SIGNALED_FLAG = 1 << 1 };

struct sqt_credit *sqt_credit_new(uint32_t credits, int *err);
void sqt_credit_free(struct sqt_credit *cc);
bool sqt_credit_get(struct sqt_credit *cc, uint32_t n);
void sqt_credit_put(struct sqt_credit *cc, uint32_t n);
uint32_t sqt_credit_avail(struct sqt_credit *cc);
uint32_t sqt_credit_blocked(struct sqt_credit *cc);

struct sqt *sqt_new(uint32_t depth, int policy, uint64_t start, struct sqt_credit *cc,
		    sqt_release_cb cb, void *opaque, int *err);
void sqt_free(struct sqt *t);
int sqt_reserve(struct sqt *t, uint32_t n, bool need, void *ctx, uint64_t *first,
		bool *signal);
void sqt_cancel(struct sqt *t, uint32_t posted);
int sqt_post_send(struct sqt *t, uint32_t n, bool need, void *ctx, uint64_t *seq);
int sqt_reap(struct sqt *t, uint64_t seq);
uint32_t sqt_release_all(struct sqt *t);
uint64_t sqt_head(struct sqt *t);
uint64_t sqt_tail(struct sqt *t);
uint64_t sqt_signaled(struct sqt *t);
uint32_t sqt_outstanding(struct sqt *t);
uint32_t sqt_space(struct sqt *t);
uint32_t sqt_ring_size(struct sqt *t);
void sqt_get_stats(struct sqt *t, struct sqt_stats *st);
bool sqt_seq_before(uint64_t a, uint64_t b);
bool sqt_seq_after(uint64_t a, uint64_t b);

#ifdef __cplusplus
}
#endif

#endif
