// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ocq_demo: the server side.  Each call is checked (sequence, duplicate,
 * credit over-run, payload) and answered exactly once, in the order the
 * calls arrived.  READ: RDMA WRITE of the pattern into the client's chunk,
 * then the reply, a SEND_WITH_INV of the chunk.  WRITE: RDMA READ of the
 * chunk into a staging buffer, then the reply, fenced so that it leaves
 * only once the data is in; the data is checked when the send accounting
 * releases the chain.  The RDMA work requests are never signaled.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include "ocq_demo.h"

static void od_srv_recv_done(struct ib_cq *cq, struct ib_wc *wc);
static void od_srv_msg_done(struct ib_cq *cq, struct ib_wc *wc);
static void od_srv_send_done(struct ib_cq *cq, struct ib_wc *wc);
static void od_srv_rdma_done(struct ib_cq *cq, struct ib_wc *wc);
static void od_srv_release(struct ib_sq_acct *sq, u64 seq, void *ctx);

static u32 od_srv_depth(const struct od_params *p)
{
	/* RDMA + SEND per call */
	return 2 * p->credits + 8;
}

static u32 od_srv_len(const struct od_params *p)
{
	return sizeof(struct od_hdr) + p->echo_size;
}

static bool od_srv_chunk(const struct od_sslot *sl)
{
	return !sl->bad &&
	       (sl->call.proc == OD_READ || sl->call.proc == OD_WRITE);
}

/* ---- set-up and teardown ---- */

static int od_srv_alloc_slots(struct od_sconn *s, struct ib_device *dev)
{
	u32 len = od_srv_len(&s->run->p), i;

	s->slots = kcalloc(s->nslots, sizeof(*s->slots), GFP_KERNEL);
	s->free = kcalloc(s->nslots, sizeof(*s->free), GFP_KERNEL);
	if (!s->slots || !s->free)
		return -ENOMEM;
	for (i = 0; i < s->nslots; i++) {
		struct od_sslot *sl = &s->slots[i];

		sl->conn = s;
		sl->idx = i;
		sl->rdma.cqe.done = od_srv_rdma_done;
		sl->send.cqe.done = od_srv_send_done;
		sl->buf = kzalloc(len, GFP_KERNEL);
		if (!sl->buf)
			return -ENOMEM;
		sl->dma = ib_dma_map_single(dev, sl->buf, len, DMA_TO_DEVICE);
		if (ib_dma_mapping_error(dev, sl->dma)) {
			sl->dma = 0;
			return -EIO;
		}
		s->free[s->nfree++] = i;
	}
	return 0;
}

static int od_srv_alloc_stages(struct od_sconn *s, struct ib_device *dev)
{
	u32 len = s->run->p.chunk_size, i;

	s->stages = kcalloc(s->nstages, sizeof(*s->stages), GFP_KERNEL);
	s->free_stages = kcalloc(s->nstages, sizeof(u16), GFP_KERNEL);
	if (!s->stages || !s->free_stages)
		return -ENOMEM;
	for (i = 0; i < s->nstages; i++) {
		struct od_stage *st = &s->stages[i];

		st->idx = i;
		st->buf = kzalloc(len, GFP_KERNEL);
		if (!st->buf)
			return -ENOMEM;
		st->dma =
			ib_dma_map_single(dev, st->buf, len, DMA_BIDIRECTIONAL);
		if (ib_dma_mapping_error(dev, st->dma)) {
			st->dma = 0;
			return -EIO;
		}
		s->free_stages[s->nfree_stages++] = i;
	}
	return 0;
}

/**
 * od_sconn_setup - allocate a server connection's buffers and accounting
 * @s: the connection, with @run and @idx set
 *
 * Context: process context.
 * Return: 0 or -errno; od_sconn_teardown() frees a partial set-up.
 */
int od_sconn_setup(struct od_sconn *s)
{
	struct od_run *run = s->run;
	const struct od_params *p = &run->p;
	struct ib_sq_acct_attr attr = {
		.depth = od_srv_depth(p),
		.policy = IB_SQ_SIGNAL_DEFAULT,
		.release = od_srv_release,
	};
	u32 i;
	int ret;

	s->granted = p->credits;
	/* every reply not yet retired, and every call in the backlog */
	s->nslots = od_srv_depth(p) + p->credits + 2;
	/* the open loop has no credits: see OD_STREAM_RECV */
	s->nrecv = p->rate ? OD_STREAM_RECV : p->credits + 2;
	if (p->mix[OD_READ] || p->mix[OD_WRITE])
		s->nstages = clamp_t(u32,
				     OD_CHUNK_BUDGET / p->conns / p->chunk_size,
				     1, p->credits);
	ret = od_srv_alloc_slots(s, run->dev);
	if (!ret && s->nstages)
		ret = od_srv_alloc_stages(s, run->dev);
	if (ret)
		return ret;
	s->recvs = od_recv_alloc(run->dev, s->nrecv, od_srv_len(p),
				 p->rate ? od_srv_msg_done : od_srv_recv_done);
	if (!s->recvs || !s->recvs[s->nrecv - 1].dma)
		return -ENOMEM;
	for (i = 0; i < s->nrecv; i++)
		s->recvs[i].sconn = s;
	ret = ib_sq_acct_init(&s->acct, &attr, GFP_KERNEL);
	if (ret)
		return ret;
	s->acct_ready = true;
	return 0;
}

/**
 * od_sconn_qp_caps - the QP capabilities a server connection needs
 * @s: the connection, set up
 * @cap: filled in
 */
void od_sconn_qp_caps(struct od_sconn *s, struct ib_qp_cap *cap)
{
	cap->max_send_wr = od_qp_send_wr(od_srv_depth(&s->run->p));
	cap->max_recv_wr = od_qp_recv_wr(s->nrecv);
	cap->max_send_sge = 1;
	cap->max_recv_sge = 1;
}

/**
 * od_sconn_teardown - free what od_sconn_setup() allocated
 * @s: the connection; its QP is destroyed
 *
 * Context: process context.
 */
void od_sconn_teardown(struct od_sconn *s)
{
	struct ib_device *dev = s->run->dev;
	u32 len = od_srv_len(&s->run->p), i;

	if (s->acct_ready) {
		set_bit(OD_CONN_DOWN, &s->flags);
		/* the release callback runs under the lock, as when reaping */
		spin_lock_bh(&s->lock);
		ib_sq_acct_release_all(&s->acct);
		spin_unlock_bh(&s->lock);
		ib_sq_acct_destroy(&s->acct);
		s->acct_ready = false;
	}
	for (i = 0; s->stages && i < s->nstages; i++) {
		if (s->stages[i].dma)
			ib_dma_unmap_single(dev, s->stages[i].dma,
					    s->run->p.chunk_size,
					    DMA_BIDIRECTIONAL);
		kfree(s->stages[i].buf);
	}
	for (i = 0; s->slots && i < s->nslots; i++) {
		if (s->slots[i].dma)
			ib_dma_unmap_single(dev, s->slots[i].dma, len,
					    DMA_TO_DEVICE);
		kfree(s->slots[i].buf);
	}
	od_recv_free(s->recvs, dev, s->nrecv, len);
	kfree(s->stages);
	kfree(s->free_stages);
	kfree(s->slots);
	kfree(s->free);
	s->recvs = NULL;
	s->stages = NULL;
	s->slots = NULL;
}

/* ---- replies ---- */

/* Post the reply of @sl, with its RDMA work request; the lock is held. */
static int od_srv_post(struct od_sconn *s, struct od_sslot *sl)
{
	struct od_run *run = s->run;
	u32 len = run->p.chunk_size, lkey = run->srv.pd->local_dma_lkey;
	struct ib_send_wr *first = &sl->wr;
	struct od_stage *st = sl->stage;
	int ret;

	lockdep_assert_held(&s->lock);
	if (st) {
		sl->rsge = (struct ib_sge){ .addr = st->dma,
					    .length = len,
					    .lkey = lkey };
		sl->rdma_wr = (struct ib_rdma_wr){
			.wr.wr_cqe = &sl->rdma.cqe,
			.wr.next = &sl->wr,
			.wr.sg_list = &sl->rsge,
			.wr.num_sge = 1,
			.remote_addr = le64_to_cpu(sl->call.addr),
			.rkey = le32_to_cpu(sl->call.rkey),
		};
		if (sl->call.proc == OD_READ) {
			od_fill(st->buf, len,
				od_seed(s->idx, le32_to_cpu(sl->call.xid),
					OD_SALT_READ));
			ib_dma_sync_single_for_device(run->dev, st->dma, len,
						      DMA_BIDIRECTIONAL);
			sl->rdma_wr.wr.opcode = IB_WR_RDMA_WRITE;
		} else {
			sl->rdma_wr.wr.opcode = IB_WR_RDMA_READ;
			/* the reply waits for the data */
			sl->wr.send_flags |= IB_SEND_FENCE;
		}
		first = &sl->rdma_wr.wr;
	}
	ib_dma_sync_single_for_device(run->dev, sl->dma, sl->sge.length,
				      DMA_TO_DEVICE);
	/* staging buffers come back with the release: see od_cli_low() */
	ret = ib_sq_acct_post_send(&s->acct, s->qp, first,
				   st && s->nfree_stages <= s->nstages / 4, sl,
				   &sl->send.seq);
	sl->rdma.seq = sl->send.seq - 1;
	return ret;
}

/* Send the replies in the backlog, in order, while there is room; locked. */
static void od_srv_push(struct od_sconn *s)
{
	struct od_sslot *sl;
	int ret;

	lockdep_assert_held(&s->lock);
	while ((sl = list_first_entry_or_null(&s->backlog, struct od_sslot,
					      entry))) {
		if (od_srv_chunk(sl) && !sl->stage) {
			if (!s->nfree_stages)
				break;
			sl->stage =
				&s->stages[s->free_stages[--s->nfree_stages]];
		}
		if (ib_sq_acct_space(&s->acct) < 2)
			break;
		ret = od_srv_post(s, sl);
		list_del(&sl->entry);
		s->outstanding--;
		if (ret) {
			s->cnt.errors++;
			od_srv_release(&s->acct, 0, sl);
			if (od_log_error(s->run))
				pr_info("conn %d: posting a reply failed: %d\n",
					s->idx, ret);
			od_run_end(s->run, OD_ABORTED);
			break;
		}
	}
}

/* The send accounting retired a reply: check WRITE data, free the slot. */
static void od_srv_release(struct ib_sq_acct *sq, u64 seq, void *ctx)
{
	struct od_sslot *sl = ctx;
	struct od_sconn *s = sl->conn;
	struct od_stage *st = sl->stage;
	u32 len = s->run->p.chunk_size;

	lockdep_assert_held(&s->lock);
	if (st) {
		if (sl->call.proc == OD_WRITE &&
		    !test_bit(OD_CONN_DOWN, &s->flags)) {
			ib_dma_sync_single_for_cpu(s->run->dev, st->dma, len,
						   DMA_BIDIRECTIONAL);
			if (!od_check(st->buf, len,
				      od_seed(s->idx, le32_to_cpu(sl->call.xid),
					      OD_SALT_WRITE)))
				s->cnt.errors++;
		}
		s->free_stages[s->nfree_stages++] = st->idx;
		sl->stage = NULL;
	}
	s->free[s->nfree++] = sl->idx;
}

/* Build the reply of the call in @r into @sl. */
static void od_srv_prepare(struct od_sconn *s, struct od_sslot *sl,
			   struct od_recv *r, int verdict)
{
	const struct od_params *p = &s->run->p;
	struct od_hdr *h = sl->buf;
	u32 len = sizeof(*h);

	memcpy(&sl->call, r->buf, sizeof(sl->call));
	sl->bad = verdict != 0;
	sl->stage = NULL;
	memset(h, 0, sizeof(*h));
	h->magic = cpu_to_le32(OD_MAGIC);
	h->xid = sl->call.xid;
	h->proc = sl->call.proc;
	h->status = sl->bad;
	h->credits = cpu_to_le16(s->granted);
	h->slot = sl->call.slot;
	if (!sl->bad && sl->call.proc == OD_ECHO) {
		memcpy(h + 1, (struct od_hdr *)r->buf + 1, p->echo_size);
		len += p->echo_size;
	}
	h->len = cpu_to_le32(len - sizeof(*h));
	sl->sge = (struct ib_sge){ .addr = sl->dma,
				   .length = len,
				   .lkey = s->run->srv.pd->local_dma_lkey };
	sl->wr = (struct ib_send_wr){ .wr_cqe = &sl->send.cqe,
				      .opcode = IB_WR_SEND,
				      .sg_list = &sl->sge,
				      .num_sge = 1 };
	if (od_srv_chunk(sl)) {
		sl->wr.opcode = IB_WR_SEND_WITH_INV;
		sl->wr.ex.invalidate_rkey = le32_to_cpu(sl->call.rkey);
	}
}

/* ---- completions ---- */

/* Verify one call; 0 if good.  May run concurrently with others. */
static int od_srv_verify(struct od_sconn *s, struct od_recv *r,
			 struct ib_wc *wc)
{
	const struct od_params *p = &s->run->p;
	struct od_hdr *h = r->buf;

	ib_dma_sync_single_for_cpu(s->run->dev, r->dma, od_srv_len(p),
				   DMA_FROM_DEVICE);
	if (wc->byte_len < sizeof(*h) || le32_to_cpu(h->magic) != OD_MAGIC ||
	    h->proc >= OD_NR_PROCS)
		return -EBADMSG;
	switch (h->proc) {
	case OD_ECHO:
		if (wc->byte_len != sizeof(*h) + p->echo_size ||
		    !od_check(h + 1, p->echo_size,
			      od_seed(s->idx, le32_to_cpu(h->xid),
				      OD_SALT_ECHO)))
			return -EBADMSG;
		break;
	case OD_READ:
	case OD_WRITE:
		if (le32_to_cpu(h->chunk_len) != p->chunk_size || !s->nstages)
			return -EBADMSG;
		break;
	}
	return 0;
}

/**
 * od_server_process - ocq-parallel: verify a call before its done()
 * @wc: a completion of the server's CQ; only receives are verified here
 *
 * Context: the ordered CQ's process() context: any CPU, unordered.
 */
void od_server_process(struct ib_wc *wc)
{
	struct od_recv *r;

	if (wc->wr_cqe->done != od_srv_recv_done || wc->status != IB_WC_SUCCESS)
		return;
	r = container_of(wc->wr_cqe, struct od_recv, cqe);
	r->verdict = od_srv_verify(r->sconn, r, wc);
}

/*
 * Check a sequence number's place in its connection's; the lock is held.
 * Return: false if the number was seen already (a duplicate).
 */
static bool od_srv_sequence(struct od_sconn *s, u32 xid)
{
	bool dup;

	lockdep_assert_held(&s->lock);
	dup = __test_and_set_bit(xid % OD_SEEN_WINDOW, s->seen);
	if (dup)
		s->cnt.duplicated++;
	/* forget the call a half window back: its slot will be reused */
	__clear_bit((xid + OD_SEEN_WINDOW / 2) % OD_SEEN_WINDOW, s->seen);
	if ((s32)(xid - s->max_xid) < 0)
		s->cnt.reorders++;
	else
		s->max_xid = xid + 1;
	return !dup;
}

/* Check a call's place in its connection's sequence; the lock is held. */
static void od_srv_account(struct od_sconn *s, const struct od_hdr *h)
{
	lockdep_assert_held(&s->lock);
	od_srv_sequence(s, le32_to_cpu(h->xid));
	if (++s->outstanding > s->granted)
		s->cnt.errors++; /* the client over-ran its credits */
}

/* As od_cli_wc_error(). */
static void od_srv_wc_error(struct od_sconn *s, struct ib_wc *wc)
{
	if (wc->status == IB_WC_WR_FLUSH_ERR) {
		if (!READ_ONCE(s->run->stopping))
			od_run_end(s->run, OD_ABORTED);
		return;
	}
	spin_lock_bh(&s->lock);
	s->cnt.errors++;
	spin_unlock_bh(&s->lock);
	if (od_log_error(s->run))
		pr_info("conn %d: server completion: %s\n", s->idx,
			ib_wc_status_msg(wc->status));
	od_run_end(s->run, OD_ABORTED);
}

/* Repost receive @r of @s; 0 or the error of ib_post_recv(), logged. */
static int od_srv_repost(struct od_sconn *s, struct od_recv *r)
{
	struct od_run *run = s->run;
	int ret;

	ib_dma_sync_single_for_device(run->dev, r->dma, od_srv_len(&run->p),
				      DMA_FROM_DEVICE);
	ret = ib_post_recv(s->qp, &r->wr, NULL);
	if (ret && od_log_error(run))
		pr_info("conn %d: reposting a receive failed: %d\n", s->idx,
			ret);
	return ret;
}

static void od_srv_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct od_recv *r = container_of(wc->wr_cqe, struct od_recv, cqe);
	struct od_sconn *s = r->sconn;
	struct od_run *run = s->run;
	struct od_sslot *sl = NULL;
	u64 t0 = od_begin();
	int verdict, ret;

	if (wc->status != IB_WC_SUCCESS) {
		od_srv_wc_error(s, wc);
		goto out;
	}
	if (od_in_process(run)) {
		verdict = r->verdict;
	} else {
		verdict = od_srv_verify(s, r, wc);
		od_burn(run);
	}
	spin_lock_bh(&s->lock);
	if (s->nfree) {
		sl = &s->slots[s->free[--s->nfree]];
		od_srv_account(s, r->buf);
	} else {
		s->cnt.errors++;
	}
	spin_unlock_bh(&s->lock);
	if (sl)
		od_srv_prepare(s, sl, r, verdict);
	ret = od_srv_repost(s, r);
	spin_lock_bh(&s->lock);
	if (ret)
		s->cnt.errors++;
	if (sl)
		list_add_tail(&sl->entry, &s->backlog);
	od_srv_push(s);
	spin_unlock_bh(&s->lock);
out:
	od_end(&s->run->srv.cq, t0);
}

/*
 * Open loop: a message (an RDMA WRITE with immediate of no data, see
 * od_cconn_stream()) arrived.  Its receive is reposted first, before the
 * work, so that the server's receive queue stays as full as it can while
 * the server is busy and the sender meets no RNR NAK.  Nothing is answered.
 */
static void od_srv_msg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct od_recv *r = container_of(wc->wr_cqe, struct od_recv, cqe);
	struct od_sconn *s = r->sconn;
	struct od_run *run = s->run;
	u64 t0 = od_begin();
	bool bad;
	int ret;

	if (wc->status == IB_WC_WR_FLUSH_ERR) {
		od_srv_wc_error(s, wc);
		od_end_flushed(&run->srv.cq);
		return;
	}
	if (wc->status != IB_WC_SUCCESS) {
		od_srv_wc_error(s, wc);
		goto out;
	}
	bad = wc->opcode != IB_WC_RECV_RDMA_WITH_IMM ||
	      !(wc->wc_flags & IB_WC_WITH_IMM) || wc->byte_len;
	ret = od_srv_repost(s, r);
	if (!od_in_process(run))
		od_burn(run);
	spin_lock_bh(&s->lock);
	if (ret || bad)
		s->cnt.errors++;
	/* a duplicate is not taken: it must not hide a message lost */
	if (od_srv_sequence(s, be32_to_cpu(wc->ex.imm_data)))
		s->cnt.calls++;
	spin_unlock_bh(&s->lock);
	atomic64_inc(&run->completed);
out:
	od_end(&run->srv.cq, t0);
}

/**
 * od_sconn_taken - open loop: the messages the server took so far
 * @s: the connection
 *
 * Context: any; a racy read while the run goes on.
 * Return: the count.
 */
u64 od_sconn_taken(struct od_sconn *s)
{
	return READ_ONCE(s->cnt.calls);
}

/* A send-side completion: retire up to it (see od_cli_reaped()). */
static void od_srv_reaped(struct ib_cq *cq, struct ib_wc *wc,
			  struct od_sconn *s, struct od_wcqe *w)
{
	u64 t0 = od_begin();

	if (!od_in_process(s->run))
		od_burn(s->run);
	if (wc->status != IB_WC_SUCCESS) {
		set_bit(OD_CONN_DOWN, &s->flags);
		od_srv_wc_error(s, wc);
	}
	spin_lock_bh(&s->lock);
	if (ib_sq_acct_reap(&s->acct, w->seq) < 0)
		s->cnt.errors++;
	if (wc->status == IB_WC_SUCCESS)
		od_srv_push(s);
	spin_unlock_bh(&s->lock);
	od_end(&s->run->srv.cq, t0);
}

static void od_srv_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct od_wcqe *w = container_of(wc->wr_cqe, struct od_wcqe, cqe);
	struct od_sslot *sl = container_of(w, struct od_sslot, send);

	od_srv_reaped(cq, wc, sl->conn, w);
}

static void od_srv_rdma_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct od_wcqe *w = container_of(wc->wr_cqe, struct od_wcqe, cqe);
	struct od_sslot *sl = container_of(w, struct od_sslot, rdma);

	od_srv_reaped(cq, wc, sl->conn, w);
}
