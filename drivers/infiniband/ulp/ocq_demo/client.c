// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ocq_demo: the client side.  A connection keeps as many calls in flight
 * as the server granted credits; each reply grants credits again.  READ and
 * WRITE calls carry a chunk registered with FRWR (IB_WR_REG_MR chained
 * before the call's SEND); the server invalidates it remotely with its
 * reply (SEND_WITH_INV), and a reply that did not is followed by a
 * LOCAL_INV.  Every reply is checked: sequence, slot, payload pattern.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/log2.h>
#include <linux/slab.h>
#include "ocq_demo.h"

static void od_cli_recv_done(struct ib_cq *cq, struct ib_wc *wc);
static void od_cli_send_done(struct ib_cq *cq, struct ib_wc *wc);
static void od_cli_reg_done(struct ib_cq *cq, struct ib_wc *wc);
static void od_cli_inv_done(struct ib_cq *cq, struct ib_wc *wc);
static void od_cli_msg_done(struct ib_cq *cq, struct ib_wc *wc);
static void od_cli_release(struct ib_sq_acct *sq, u64 seq, void *ctx);

/* calls the client wants in flight (and asks the server for) */
static u32 od_cli_asked(const struct od_params *p)
{
	return min_t(u32, 2 * p->credits, OD_MAX_CREDITS);
}

static u32 od_cli_depth(const struct od_params *p)
{
	if (p->rate)
		return OD_STREAM_DEPTH;
	/* REG_MR + SEND per call, and room for LOCAL_INVs */
	return 2 * od_cli_asked(p) + 8;
}

static bool od_needs_chunk(u8 proc)
{
	return proc == OD_READ || proc == OD_WRITE;
}

static u32 od_hdr_len(const struct od_params *p)
{
	return sizeof(struct od_hdr) + p->echo_size;
}

/* ---- set-up and teardown ---- */

static int od_cli_alloc_slots(struct od_cconn *c, struct ib_device *dev)
{
	u32 len = od_hdr_len(&c->run->p), i;

	c->slots = kcalloc(c->nslots, sizeof(*c->slots), GFP_KERNEL);
	c->free = kcalloc(c->nslots, sizeof(*c->free), GFP_KERNEL);
	if (!c->slots || !c->free)
		return -ENOMEM;
	for (i = 0; i < c->nslots; i++) {
		struct od_cslot *s = &c->slots[i];

		s->conn = c;
		s->idx = i;
		s->reg.cqe.done = od_cli_reg_done;
		s->send.cqe.done = od_cli_send_done;
		s->buf = kzalloc(len, GFP_KERNEL);
		if (!s->buf)
			return -ENOMEM;
		s->dma = ib_dma_map_single(dev, s->buf, len, DMA_TO_DEVICE);
		if (ib_dma_mapping_error(dev, s->dma)) {
			s->dma = 0;
			return -EIO;
		}
		c->free[c->nfree++] = i;
	}
	return 0;
}

static int od_cli_alloc_chunks(struct od_cconn *c, struct ib_pd *pd)
{
	const struct od_params *p = &c->run->p;
	u32 pages = DIV_ROUND_UP(p->chunk_size, PAGE_SIZE) + 1, i;

	c->chunks = kcalloc(c->nchunks, sizeof(*c->chunks), GFP_KERNEL);
	c->free_chunks = kcalloc(c->nchunks, sizeof(u16), GFP_KERNEL);
	if (!c->chunks || !c->free_chunks)
		return -ENOMEM;
	for (i = 0; i < c->nchunks; i++) {
		struct od_chunk *ch = &c->chunks[i];

		ch->conn = c;
		ch->inv.cqe.done = od_cli_inv_done;
		ch->buf = kzalloc(p->chunk_size, GFP_KERNEL);
		if (!ch->buf)
			return -ENOMEM;
		ch->mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, pages);
		if (IS_ERR(ch->mr)) {
			int ret = PTR_ERR(ch->mr);

			ch->mr = NULL;
			return ret;
		}
		c->free_chunks[c->nfree_chunks++] = i;
	}
	return 0;
}

/* Open loop: a send context for each message the send queue can hold. */
static int od_cli_alloc_msgs(struct od_cconn *c)
{
	u32 i;

	c->nmsgs = od_cli_depth(&c->run->p);
	c->msgs = kcalloc(c->nmsgs, sizeof(*c->msgs), GFP_KERNEL);
	if (!c->msgs)
		return -ENOMEM;
	for (i = 0; i < c->nmsgs; i++) {
		c->msgs[i].conn = c;
		c->msgs[i].send.cqe.done = od_cli_msg_done;
	}
	return 0;
}

/**
 * od_cconn_setup - allocate a client connection's buffers and accounting
 * @c: the connection, with @run and @idx set
 *
 * Context: process context.
 * Return: 0 or -errno; od_cconn_teardown() frees a partial set-up.
 */
int od_cconn_setup(struct od_cconn *c)
{
	struct od_run *run = c->run;
	const struct od_params *p = &run->p;
	struct ib_sq_acct_attr attr = {
		.depth = od_cli_depth(p),
		.policy = IB_SQ_SIGNAL_DEFAULT,
		.release = od_cli_release,
	};
	u32 i;
	int ret;

	c->nslots = od_cli_asked(p);
	/* the open loop's server answers nothing: one receive, never used */
	c->nrecv = p->rate ? 1 : c->nslots + 2;
	if (p->mix[OD_READ] || p->mix[OD_WRITE])
		c->nchunks = clamp_t(u32,
				     OD_CHUNK_BUDGET / p->conns / p->chunk_size,
				     1, c->nslots);
	ret = od_cli_alloc_slots(c, run->dev);
	if (!ret && c->nchunks)
		ret = od_cli_alloc_chunks(c, run->cli.pd);
	if (!ret && p->rate)
		ret = od_cli_alloc_msgs(c);
	if (ret)
		return ret;
	c->recvs = od_recv_alloc(run->dev, c->nrecv, od_hdr_len(p),
				 od_cli_recv_done);
	if (!c->recvs || !c->recvs[c->nrecv - 1].dma)
		return -ENOMEM;
	for (i = 0; i < c->nrecv; i++)
		c->recvs[i].cconn = c;
	ret = ib_sq_acct_init(&c->acct, &attr, GFP_KERNEL);
	if (ret)
		return ret;
	c->acct_ready = true;
	return 0;
}

/**
 * od_cconn_qp_caps - the QP capabilities a client connection needs
 * @c: the connection, set up
 * @cap: filled in
 */
void od_cconn_qp_caps(struct od_cconn *c, struct ib_qp_cap *cap)
{
	cap->max_send_wr = od_qp_send_wr(od_cli_depth(&c->run->p));
	cap->max_recv_wr = od_qp_recv_wr(c->nrecv);
	cap->max_send_sge = 1;
	cap->max_recv_sge = 1;
}

/**
 * od_cconn_lost - count the calls never answered
 * @c: the connection, its QP drained
 * @aborted: the run was aborted: they failed (in flight at the error)
 *	rather than got lost
 */
void od_cconn_lost(struct od_cconn *c, bool aborted)
{
	u64 *n = aborted ? &c->cnt.failed : &c->cnt.lost;
	u32 i;

	spin_lock_bh(&c->lock);
	for (i = 0; c->slots && i < c->nslots; i++)
		if (c->slots[i].refs && c->slots[i].waiting)
			(*n)++;
	spin_unlock_bh(&c->lock);
}

static void od_chunk_unmap(struct od_cconn *c, struct od_chunk *ch)
{
	if (!ch->mapped)
		return;
	ib_dma_unmap_sg(c->run->dev, &ch->sg, 1, DMA_BIDIRECTIONAL);
	ch->mapped = false;
}

/**
 * od_cconn_teardown - free what od_cconn_setup() allocated
 * @c: the connection; its QP is destroyed
 *
 * Context: process context.
 */
void od_cconn_teardown(struct od_cconn *c)
{
	struct ib_device *dev = c->run->dev;
	u32 len = od_hdr_len(&c->run->p), i;

	if (c->acct_ready) {
		/* the release callback runs under the lock, as when reaping */
		spin_lock_bh(&c->lock);
		ib_sq_acct_release_all(&c->acct);
		spin_unlock_bh(&c->lock);
		ib_sq_acct_destroy(&c->acct);
		c->acct_ready = false;
	}
	for (i = 0; c->chunks && i < c->nchunks; i++) {
		od_chunk_unmap(c, &c->chunks[i]);
		if (c->chunks[i].mr)
			ib_dereg_mr(c->chunks[i].mr);
		kfree(c->chunks[i].buf);
	}
	for (i = 0; c->slots && i < c->nslots; i++) {
		if (c->slots[i].dma)
			ib_dma_unmap_single(dev, c->slots[i].dma, len,
					    DMA_TO_DEVICE);
		kfree(c->slots[i].buf);
	}
	od_recv_free(c->recvs, dev, c->nrecv, len);
	kfree(c->chunks);
	kfree(c->free_chunks);
	kfree(c->slots);
	kfree(c->free);
	kfree(c->msgs);
	c->recvs = NULL;
	c->chunks = NULL;
	c->slots = NULL;
	c->msgs = NULL;
}

/* ---- issuing calls ---- */

/* The procedure at the mix cursor: weighted round robin. */
static u8 od_cli_proc(struct od_cconn *c)
{
	const u32 *mix = c->run->p.mix;
	u32 total = 0, pos, i;

	for (i = 0; i < OD_NR_PROCS; i++)
		total += mix[i];
	pos = c->cursor % total;
	for (i = 0; i < OD_NR_PROCS; i++) {
		if (pos < mix[i])
			return i;
		pos -= mix[i];
	}
	return OD_NULL;
}

/* Take one call against the run's target. */
static bool od_take_call(struct od_run *run)
{
	if (!run->p.calls)
		return true;
	if (atomic64_inc_return(&run->issued) <= run->p.calls)
		return true;
	atomic64_dec(&run->issued);
	WRITE_ONCE(run->stopping, true);
	return false;
}

/* Map and register @ch for the call in @s; chain the REG_MR before the SEND. */
static int od_cli_register(struct od_cconn *c, struct od_cslot *s,
			   struct od_chunk *ch)
{
	struct od_run *run = c->run;
	u32 len = run->p.chunk_size;
	struct od_hdr *h = s->buf;
	int n, access;

	if (s->proc == OD_WRITE)
		od_fill(ch->buf, len, od_seed(c->idx, s->xid, OD_SALT_WRITE));
	sg_init_one(&ch->sg, ch->buf, len);
	if (ib_dma_map_sg(run->dev, &ch->sg, 1, DMA_BIDIRECTIONAL) != 1)
		return -EIO;
	ch->mapped = true;
	n = ib_map_mr_sg(ch->mr, &ch->sg, 1, NULL, PAGE_SIZE);
	if (n != 1) {
		od_chunk_unmap(c, ch);
		return n < 0 ? n : -EIO;
	}
	ib_update_fast_reg_key(ch->mr, (u8)ib_inc_rkey(ch->mr->rkey));
	/* the server writes a READ's chunk and reads a WRITE's */
	access = s->proc == OD_READ ?
			 IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE :
			 IB_ACCESS_REMOTE_READ;
	s->reg_wr = (struct ib_reg_wr){
		.wr.opcode = IB_WR_REG_MR,
		.wr.wr_cqe = &s->reg.cqe,
		.wr.next = &s->wr,
		.mr = ch->mr,
		.key = ch->mr->rkey,
		.access = access,
	};
	ch->valid = true;
	h->rkey = cpu_to_le32(ch->mr->rkey);
	h->addr = cpu_to_le64(ch->mr->iova);
	h->chunk_len = cpu_to_le32(len);
	s->chunk = ch;
	return 0;
}

/* Fill in the call of slot @s: header, inline payload. */
static void od_cli_build(struct od_cconn *c, struct od_cslot *s, u8 proc)
{
	const struct od_params *p = &c->run->p;
	struct od_hdr *h = s->buf;
	u32 len = sizeof(*h);

	memset(h, 0, sizeof(*h));
	s->proc = proc;
	s->xid = c->next_xid;
	s->chunk = NULL;
	h->magic = cpu_to_le32(OD_MAGIC);
	h->xid = cpu_to_le32(s->xid);
	h->proc = proc;
	h->credits = cpu_to_le16(c->nslots);
	h->slot = cpu_to_le16(s->idx);
	if (proc == OD_ECHO) {
		od_fill(h + 1, p->echo_size,
			od_seed(c->idx, s->xid, OD_SALT_ECHO));
		len += p->echo_size;
	}
	h->len = cpu_to_le32(len - sizeof(*h));
	s->sge = (struct ib_sge){ .addr = s->dma,
				  .length = len,
				  .lkey = c->run->cli.pd->local_dma_lkey };
	s->wr = (struct ib_send_wr){ .wr_cqe = &s->send.cqe,
				     .opcode = IB_WR_SEND,
				     .sg_list = &s->sge,
				     .num_sge = 1 };
}

/*
 * A slot comes back only once a signaled completion retires its send: ask
 * for a signal while few slots are left, or the pool could run dry with
 * every send unsignaled and nothing coming to retire them.
 */
static bool od_cli_low(const struct od_cconn *c)
{
	return c->nfree <= max_t(u32, 1, c->nslots / 4);
}

/* Issue one call on slot @s; the lock is held. */
static int od_cli_issue(struct od_cconn *c, struct od_cslot *s, u8 proc)
{
	struct od_run *run = c->run;
	struct ib_send_wr *first = &s->wr;
	struct od_chunk *ch = NULL;
	int ret;

	lockdep_assert_held(&c->lock);
	od_cli_build(c, s, proc);
	if (od_needs_chunk(proc)) {
		ch = &c->chunks[c->free_chunks[c->nfree_chunks - 1]];
		ret = od_cli_register(c, s, ch);
		if (ret)
			return ret;
		first = &s->reg_wr.wr;
	}
	ib_dma_sync_single_for_device(run->dev, s->dma, s->sge.length,
				      DMA_TO_DEVICE);
	s->refs = 2;
	s->waiting = true;
	s->t0 = ktime_get_ns();
	ret = ib_sq_acct_post_send(&c->acct, c->qp, first, od_cli_low(c), s,
				   &s->send.seq);
	if (ret) {
		s->refs = 0;
		s->waiting = false;
		if (ch) {
			ch->valid = false;
			od_chunk_unmap(c, ch);
		}
		return ret;
	}
	s->reg.seq = s->send.seq - 1;
	if (ch)
		c->nfree_chunks--;
	return 0;
}

/* Whether one more call may go now; counts credit stalls.  Lock held. */
static bool od_cli_can_issue(struct od_cconn *c, u8 proc)
{
	lockdep_assert_held(&c->lock);
	if (READ_ONCE(c->run->stopping) || !test_bit(OD_CONN_UP, &c->flags))
		return false;
	if (c->outstanding >= c->granted) {
		c->cnt.credit_stalls++;
		return false;
	}
	if (!c->nfree || (od_needs_chunk(proc) && !c->nfree_chunks))
		return false;
	return ib_sq_acct_space(&c->acct) >= 2;
}

/**
 * od_cconn_kick - issue as many calls as credits, slots and chunks allow
 * @c: the connection
 *
 * In the open loop it does nothing: the pacer posts, not the completions.
 *
 * Context: any context but hard IRQ; takes the connection's lock.
 */
void od_cconn_kick(struct od_cconn *c)
{
	struct od_run *run = c->run;
	struct od_cslot *s;
	int ret;
	u8 proc;

	if (run->p.rate)
		return;
	spin_lock_bh(&c->lock);
	for (;;) {
		proc = od_cli_proc(c);
		if (!od_cli_can_issue(c, proc) || !od_take_call(run))
			break;
		s = &c->slots[c->free[c->nfree - 1]];
		ret = od_cli_issue(c, s, proc);
		if (ret) {
			if (run->p.calls)
				atomic64_dec(&run->issued);
			c->cnt.errors++;
			if (od_log_error(run))
				pr_info("conn %d: posting a call failed: %d\n",
					c->idx, ret);
			od_run_end(run, OD_ABORTED);
			break;
		}
		c->nfree--;
		c->cursor++;
		c->next_xid++;
		c->outstanding++;
	}
	spin_unlock_bh(&c->lock);
}

/**
 * od_cconn_stream - open loop: post the connection's next message
 * @c: the connection
 *
 * A message is an RDMA WRITE with immediate of no data: the immediate
 * carries its sequence number, and it takes one of the server's receives,
 * as a SEND would, with nothing to fill in or register.  A write of zero
 * bytes needs no address or rkey (IBA C9-88), so the server exposes no
 * memory.  Nothing ever answers it; the sender is paced, not throttled.
 *
 * Context: process context (the pacer); takes the connection's lock.
 * Return: 0; -ENOSPC if the send queue is full or -ENOTCONN if the
 * connection is down, the message not sent and counted as dropped;
 * otherwise the error of ib_post_send(), counted as an error.
 */
int od_cconn_stream(struct od_cconn *c)
{
	struct ib_rdma_wr wr = {};
	struct od_smsg *m;
	int ret;

	spin_lock_bh(&c->lock);
	m = &c->msgs[c->next_xid % c->nmsgs];
	wr.wr.wr_cqe = &m->send.cqe;
	wr.wr.opcode = IB_WR_RDMA_WRITE_WITH_IMM;
	wr.wr.ex.imm_data = cpu_to_be32(c->next_xid);
	if (!test_bit(OD_CONN_UP, &c->flags) ||
	    test_bit(OD_CONN_DOWN, &c->flags) ||
	    test_bit(OD_CONN_FAILED, &c->flags))
		ret = -ENOTCONN;
	else
		ret = ib_sq_acct_post_send(&c->acct, c->qp, &wr.wr, false, NULL,
					   &m->send.seq);
	if (!ret)
		c->next_xid++;
	else if (ret == -ENOSPC || ret == -ENOTCONN)
		c->cnt.dropped++;
	else
		c->cnt.errors++;
	spin_unlock_bh(&c->lock);
	return ret;
}

/* ---- completions ---- */

/* Drop one reference of a call slot; the lock is held. */
static void od_cslot_put(struct od_cconn *c, struct od_cslot *s)
{
	lockdep_assert_held(&c->lock);
	if (!s->refs || --s->refs)
		return;
	c->free[c->nfree++] = s->idx;
}

/* The send accounting retired the call's work requests. */
static void od_cli_release(struct ib_sq_acct *sq, u64 seq, void *ctx)
{
	struct od_cslot *s = ctx;

	od_cslot_put(s->conn, s);
}

/*
 * A completion with an error: count it; a real error ends the run.  A flush
 * while the run goes on means that the QP went to the error state under us
 * (the link went away): end the run too, without counting an error.
 */
static void od_cli_wc_error(struct od_cconn *c, struct ib_wc *wc)
{
	if (wc->status == IB_WC_WR_FLUSH_ERR) {
		if (!READ_ONCE(c->run->stopping))
			od_run_end(c->run, OD_ABORTED);
		return;
	}
	spin_lock_bh(&c->lock);
	c->cnt.errors++;
	spin_unlock_bh(&c->lock);
	if (od_log_error(c->run))
		pr_info("conn %d: client completion: %s\n", c->idx,
			ib_wc_status_msg(wc->status));
	od_run_end(c->run, OD_ABORTED);
}

/*
 * A send-side completion: retire up to it.  @w->seq is read under the lock:
 * the poster fills in the sequence numbers of a chain's first work requests
 * after ib_post_send(), still holding the lock, and only a flush can
 * complete them that early.
 */
static void od_cli_reaped(struct ib_cq *cq, struct ib_wc *wc,
			  struct od_cconn *c, struct od_wcqe *w)
{
	u64 t0 = od_begin();

	if (!od_in_process(c->run))
		od_burn(c->run);
	if (wc->status != IB_WC_SUCCESS)
		od_cli_wc_error(c, wc);
	spin_lock_bh(&c->lock);
	if (ib_sq_acct_reap(&c->acct, w->seq) < 0)
		c->cnt.errors++;
	spin_unlock_bh(&c->lock);
	if (wc->status == IB_WC_SUCCESS)
		od_cconn_kick(c);
	od_end(&c->run->cli.cq, t0);
}

static void od_cli_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct od_wcqe *w = container_of(wc->wr_cqe, struct od_wcqe, cqe);
	struct od_cslot *s = container_of(w, struct od_cslot, send);

	od_cli_reaped(cq, wc, s->conn, w);
}

static void od_cli_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct od_wcqe *w = container_of(wc->wr_cqe, struct od_wcqe, cqe);
	struct od_cslot *s = container_of(w, struct od_cslot, reg);

	od_cli_reaped(cq, wc, s->conn, w);
}

static void od_cli_msg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct od_wcqe *w = container_of(wc->wr_cqe, struct od_wcqe, cqe);
	struct od_smsg *m = container_of(w, struct od_smsg, send);

	od_cli_reaped(cq, wc, m->conn, w);
}

static void od_cli_inv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct od_wcqe *w = container_of(wc->wr_cqe, struct od_wcqe, cqe);
	struct od_chunk *ch = container_of(w, struct od_chunk, inv);

	od_cli_reaped(cq, wc, ch->conn, w);
}

/* Check a chunk the server wrote (READ) or read (WRITE); 0 if good. */
static int od_cli_check_chunk(struct od_cconn *c, struct od_cslot *s)
{
	struct od_chunk *ch = s->chunk;
	u32 len = c->run->p.chunk_size;

	if (!ch)
		return -EINVAL;
	od_chunk_unmap(c, ch);
	if (s->proc == OD_READ &&
	    !od_check(ch->buf, len, od_seed(c->idx, s->xid, OD_SALT_READ)))
		return -EBADMSG;
	return 0;
}

/* Verify one reply; 0 if good.  May run concurrently with others. */
static int od_cli_verify(struct od_cconn *c, struct od_recv *r,
			 struct ib_wc *wc)
{
	const struct od_params *p = &c->run->p;
	struct od_hdr *h = r->buf;
	struct od_cslot *s;
	u32 xid, idx;

	ib_dma_sync_single_for_cpu(c->run->dev, r->dma, od_hdr_len(p),
				   DMA_FROM_DEVICE);
	if (wc->byte_len < sizeof(*h) || le32_to_cpu(h->magic) != OD_MAGIC)
		return -EBADMSG;
	xid = le32_to_cpu(h->xid);
	idx = le16_to_cpu(h->slot);
	if (idx >= c->nslots || h->status)
		return -EBADMSG;
	s = &c->slots[idx];
	/* a duplicate or stray reply is counted, not verified, in done() */
	if (!READ_ONCE(s->waiting) || s->xid != xid || s->proc != h->proc)
		return 0;
	if (h->proc == OD_ECHO) {
		if (wc->byte_len != sizeof(*h) + p->echo_size)
			return -EBADMSG;
		if (!od_check(h + 1, p->echo_size,
			      od_seed(c->idx, xid, OD_SALT_ECHO)))
			return -EBADMSG;
	}
	if (od_needs_chunk(h->proc))
		return od_cli_check_chunk(c, s);
	return 0;
}

/**
 * od_client_process - ocq-parallel: verify a reply before its done()
 * @wc: a completion of the client's CQ; only receives are verified here
 *
 * Context: the ordered CQ's process() context: any CPU, unordered.
 */
void od_client_process(struct ib_wc *wc)
{
	struct od_recv *r;

	if (wc->wr_cqe->done != od_cli_recv_done || wc->status != IB_WC_SUCCESS)
		return;
	r = container_of(wc->wr_cqe, struct od_recv, cqe);
	r->verdict = od_cli_verify(r->cconn, r, wc);
}

static u64 od_cli_bytes(const struct od_params *p, u8 proc)
{
	if (proc == OD_ECHO)
		return 2 * p->echo_size;
	return od_needs_chunk(proc) ? p->chunk_size : 0;
}

/* The chunk of an answered call: free it, invalidating it if needed. */
static void od_cli_put_chunk(struct od_cconn *c, struct od_cslot *s,
			     struct ib_wc *wc)
{
	struct od_chunk *ch = s->chunk;
	int ret;

	s->chunk = NULL;
	od_chunk_unmap(c, ch);
	if ((wc->wc_flags & IB_WC_WITH_INVALIDATE) &&
	    wc->ex.invalidate_rkey == ch->mr->rkey) {
		ch->valid = false;
	} else {
		/* the server did not invalidate it: do it ourselves */
		ch->inv_wr = (struct ib_send_wr){
			.wr_cqe = &ch->inv.cqe,
			.opcode = IB_WR_LOCAL_INV,
			.ex.invalidate_rkey = ch->mr->rkey,
		};
		ret = ib_sq_acct_post_send(&c->acct, c->qp, &ch->inv_wr, false,
					   NULL, &ch->inv.seq);
		if (ret) {
			c->cnt.errors++;
			if (od_log_error(c->run))
				pr_info("conn %d: posting a LOCAL_INV failed: %d\n",
					c->idx, ret);
		}
		ch->valid = false;
	}
	c->free_chunks[c->nfree_chunks++] = ch - c->chunks;
}

/* Account one reply; the lock is held. */
static void od_cli_reply(struct od_cconn *c, const struct od_hdr *h,
			 int verdict, struct ib_wc *wc)
{
	u32 xid = le32_to_cpu(h->xid), idx = le16_to_cpu(h->slot);
	struct od_cslot *s = idx < c->nslots ? &c->slots[idx] : NULL;
	u64 lat;

	lockdep_assert_held(&c->lock);
	if (!s || !s->waiting || s->xid != xid || s->proc != h->proc) {
		c->cnt.duplicated++;
		return;
	}
	s->waiting = false;
	if ((s32)(xid - c->max_xid) < 0)
		c->cnt.reorders++;
	else
		c->max_xid = xid + 1;
	if (verdict)
		c->cnt.errors++;
	lat = ktime_get_ns() - s->t0;
	c->cnt.hist[min_t(u32, lat ? ilog2(lat) : 0, OD_HIST - 1)]++;
	c->cnt.calls++;
	c->cnt.bytes += od_cli_bytes(&c->run->p, s->proc);
	c->granted = clamp_t(u32, le16_to_cpu(h->credits), 1, c->nslots);
	c->outstanding--;
	atomic64_inc(&c->run->completed);
	if (s->chunk)
		od_cli_put_chunk(c, s, wc);
	od_cslot_put(c, s);
}

static void od_cli_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct od_recv *r = container_of(wc->wr_cqe, struct od_recv, cqe);
	struct od_cconn *c = r->cconn;
	struct od_run *run = c->run;
	u64 t0 = od_begin();
	struct od_hdr h;
	int verdict, ret;

	if (wc->status != IB_WC_SUCCESS) {
		od_cli_wc_error(c, wc);
		goto out;
	}
	if (od_in_process(run)) {
		verdict = r->verdict;
	} else {
		verdict = od_cli_verify(c, r, wc);
		od_burn(run);
	}
	memcpy(&h, r->buf, sizeof(h));
	/* repost before the credit returns: the next call needs a receive */
	ib_dma_sync_single_for_device(run->dev, r->dma, od_hdr_len(&run->p),
				      DMA_FROM_DEVICE);
	ret = ib_post_recv(c->qp, &r->wr, NULL);
	if (ret && od_log_error(run))
		pr_info("conn %d: reposting a receive failed: %d\n", c->idx,
			ret);
	spin_lock_bh(&c->lock);
	if (ret)
		c->cnt.errors++;
	if (wc->byte_len < sizeof(h) || le32_to_cpu(h.magic) != OD_MAGIC)
		c->cnt.errors++;
	else
		od_cli_reply(c, &h, verdict, wc);
	spin_unlock_bh(&c->lock);
	od_cconn_kick(c);
out:
	od_end(&c->run->cli.cq, t0);
}
