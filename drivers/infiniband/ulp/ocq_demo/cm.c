// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ocq_demo: connection management.  The server listens with rdma_cm on the
 * rxe netdev's address; each client connects to it on the same device
 * (loopback).  The request's private data carries the connection number,
 * the run number, the credits asked and the buffer sizes; the accept's
 * carries the credits granted.
 *
 * The event handlers never sleep on the run's mutex and never destroy an
 * id: whatever ends the run (device removal, a peer's disconnect) is handed
 * to od_run_end(), whose work item tears down from process context.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/inet.h>
#include <linux/in.h>
#include <net/net_namespace.h>
#include "ocq_demo.h"

static int od_server_addr(struct sockaddr_in *sin)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(od_port);
	if (!in4_pton(od_addr, -1, (u8 *)&sin->sin_addr.s_addr, '\0', NULL))
		return -EINVAL;
	return 0;
}

/* A QP that became unusable ends the run (@ctx); rdma_cm reports nothing. */
static void od_qp_event(struct ib_event *ev, void *ctx)
{
	struct od_run *run = ctx;

	pr_info("QP event: %s\n", ib_event_msg(ev->event));
	switch (ev->event) {
	case IB_EVENT_QP_FATAL:
	case IB_EVENT_QP_REQ_ERR:
	case IB_EVENT_QP_ACCESS_ERR:
		od_run_end(run, OD_ABORTED);
		break;
	default:
		break;
	}
}

static int od_create_qp(struct rdma_cm_id *id, struct od_run *run,
			struct od_side *side, const struct ib_qp_cap *cap)
{
	struct ib_qp_init_attr attr = {
		.event_handler = od_qp_event,
		.qp_context = run,
		.send_cq = side->cq.cq,
		.recv_cq = side->cq.cq,
		.cap = *cap,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};

	return rdma_create_qp(id, side->pd, &attr);
}

/* ---- server ---- */

static int od_srv_check_req(struct od_run *run, const struct od_cm_req *req,
			    u8 len)
{
	const struct od_params *p = &run->p;

	if (len < sizeof(*req) || req->version != OD_VERSION ||
	    le32_to_cpu(req->gen) != run->gen ||
	    le16_to_cpu(req->conn) >= p->conns ||
	    le32_to_cpu(req->echo_size) != p->echo_size ||
	    le32_to_cpu(req->chunk_size) != p->chunk_size ||
	    le16_to_cpu(req->credits) < p->credits)
		return -EINVAL;
	return 0;
}

static int od_srv_accept(struct rdma_cm_id *id, struct od_sconn *s,
			 const struct rdma_conn_param *req)
{
	struct od_cm_rep rep = {
		.version = OD_VERSION,
		.credits = cpu_to_le16(s->granted),
		.max_inline = cpu_to_le32(s->run->p.echo_size),
	};
	struct rdma_conn_param param = {
		.private_data = &rep,
		.private_data_len = sizeof(rep),
		.responder_resources = req->initiator_depth,
		.initiator_depth = req->responder_resources,
		.retry_count = 7,
		.rnr_retry_count = 7,
	};
	struct ib_qp_cap cap;
	int ret;

	ret = rdma_set_ack_timeout(id, OD_ACK_TIMEOUT);
	if (ret)
		return ret;
	od_sconn_qp_caps(s, &cap);
	ret = od_create_qp(id, s->run, &s->run->srv, &cap);
	if (ret)
		return ret;
	s->qp = id->qp;
	ret = od_recv_post(s->qp, s->recvs, s->nrecv,
			   s->run->srv.pd->local_dma_lkey);
	if (!ret)
		ret = rdma_accept(id, &param);
	if (ret) {
		rdma_destroy_qp(id);
		s->qp = NULL;
	}
	return ret;
}

/* A client asks to connect: bind it to its server connection, accept. */
static int od_srv_connect(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	const struct od_cm_req *req = ev->param.conn.private_data;
	struct od_run *run = id->context; /* the listener's, inherited */
	struct od_sconn *s;
	int ret;

	if (!req || od_srv_check_req(run, req, ev->param.conn.private_data_len))
		return -EINVAL;
	s = &run->sconns[le16_to_cpu(req->conn)];
	if (test_and_set_bit(OD_CONN_TAKEN, &s->flags))
		return -EBUSY; /* taken already */
	ret = od_srv_accept(id, s, &ev->param.conn);
	if (ret) {
		pr_info("conn %d: accept failed: %d\n", s->idx, ret);
		clear_bit(OD_CONN_TAKEN, &s->flags); /* the client may retry */
		return ret; /* rdma_cm destroys the id */
	}
	WRITE_ONCE(s->id, id); /* see od_sconn_of() */
	return 0;
}

/*
 * The server connection of @id, a child of the listener: NULL for the
 * listener itself.  A child's handler runs only once its connect request
 * handler recorded it (rdma_cm serializes an id's events); teardown
 * destroys the listener first, so no child appears after it, then each
 * child before it forgets it: the entry of @id is stable here.
 */
static struct od_sconn *od_sconn_of(struct od_run *run, struct rdma_cm_id *id)
{
	int i;

	for (i = 0; run->sconns && i < run->p.conns; i++)
		if (READ_ONCE(run->sconns[i].id) == id)
			return &run->sconns[i];
	return NULL;
}

/**
 * od_cm_server_handler - rdma_cm events of the listener and its children
 * @id: the id; its context is the run (the children inherit the listener's)
 * @ev: the event
 *
 * Context: rdma_cm's handler context (process context, handler mutex held).
 * Return: non-zero only for a refused connect request, whose id rdma_cm
 * then destroys.
 */
int od_cm_server_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct od_run *run = id->context;
	struct od_sconn *s;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return od_srv_connect(id, ev);
	s = od_sconn_of(run, id);
	if (!s) { /* the listener */
		if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL)
			od_run_removed(run);
		return 0;
	}
	switch (ev->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		set_bit(OD_CONN_UP, &s->flags);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		set_bit(OD_CONN_DOWN, &s->flags);
		if (!READ_ONCE(run->stopping))
			od_run_end(run, OD_ABORTED);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		set_bit(OD_CONN_DOWN, &s->flags);
		od_run_removed(run);
		break;
	default:
		break;
	}
	return 0;
}

/**
 * od_listen - bind the listener to the server address and listen
 * @run: the run; its device is taken from the bound listener
 *
 * Context: process context.
 * Return: 0 or -errno.
 */
int od_listen(struct od_run *run)
{
	struct sockaddr_in sin;
	struct rdma_cm_id *id;
	int ret;

	ret = od_server_addr(&sin);
	if (ret)
		return ret;
	id = rdma_create_id(&init_net, od_cm_server_handler, run, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	run->listen_id = id;
	ret = rdma_bind_addr(id, (struct sockaddr *)&sin);
	if (ret)
		return ret;
	if (!id->device)
		return -ENODEV;
	run->dev = id->device;
	run->port = id->port_num ? id->port_num : 1;
	/* a connection made now would be torn down with the link down */
	if (!od_port_up(run))
		return -ENETDOWN;
	return 0;
}

/**
 * od_listen_start - accept connections
 * @run: the run, its server side set up
 *
 * Return: 0 or -errno.
 */
int od_listen_start(struct od_run *run)
{
	return rdma_listen(run->listen_id, OD_MAX_CONNS);
}

/* ---- client ---- */

static int od_cli_connect(struct rdma_cm_id *id, struct od_cconn *c)
{
	struct od_run *run = c->run;
	struct od_cm_req req = {
		.version = OD_VERSION,
		.conn = cpu_to_le16(c->idx),
		.credits = cpu_to_le16(c->nslots),
		.echo_size = cpu_to_le32(run->p.echo_size),
		.chunk_size = cpu_to_le32(run->p.chunk_size),
		.gen = cpu_to_le32(run->gen),
	};
	u8 rd = min_t(int, 16, run->dev->attrs.max_qp_rd_atom);
	struct rdma_conn_param param = {
		.private_data = &req,
		.private_data_len = sizeof(req),
		.responder_resources = rd,
		.initiator_depth = rd,
		.retry_count = 7,
		.rnr_retry_count = 7,
	};
	struct ib_qp_cap cap;
	int ret;

	if (id->device != run->dev)
		return -EXDEV; /* loopback: the server's device */
	ret = rdma_set_ack_timeout(id, OD_ACK_TIMEOUT);
	if (ret)
		return ret;
	od_cconn_qp_caps(c, &cap);
	ret = od_create_qp(id, run, &run->cli, &cap);
	if (ret)
		return ret;
	c->qp = id->qp;
	ret = od_recv_post(c->qp, c->recvs, c->nrecv,
			   run->cli.pd->local_dma_lkey);
	if (!ret)
		ret = rdma_connect_locked(id, &param);
	return ret;
}

static void od_cli_established(struct od_cconn *c, struct rdma_cm_event *ev)
{
	const struct od_cm_rep *rep = ev->param.conn.private_data;

	if (!rep || ev->param.conn.private_data_len < sizeof(*rep) ||
	    rep->version != OD_VERSION || !le16_to_cpu(rep->credits)) {
		set_bit(OD_CONN_FAILED, &c->flags);
		return;
	}
	spin_lock_bh(&c->lock);
	c->granted = min_t(u32, le16_to_cpu(rep->credits), c->nslots);
	spin_unlock_bh(&c->lock);
	set_bit(OD_CONN_UP, &c->flags);
}

static void od_cli_down(struct od_cconn *c, bool fail)
{
	set_bit(fail ? OD_CONN_FAILED : OD_CONN_DOWN, &c->flags);
	complete(&c->cm_done);
}

static int od_cm_client_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct od_cconn *c = id->context;
	int ret = 0;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		ret = rdma_resolve_route(id, OD_CONNECT_MS / 2);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		ret = od_cli_connect(id, c);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		od_cli_established(c, ev);
		complete(&c->cm_done);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		od_cli_down(c, false);
		if (!READ_ONCE(c->run->stopping))
			od_run_end(c->run, OD_ABORTED);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		od_cli_down(c, false);
		od_run_removed(c->run);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
		pr_info("conn %d: %s (%d)\n", c->idx, rdma_event_msg(ev->event),
			ev->status);
		od_cli_down(c, true);
		break;
	default:
		break;
	}
	if (ret) {
		pr_info("conn %d: connecting failed: %d\n", c->idx, ret);
		od_cli_down(c, true);
	}
	return 0; /* the id is ours to destroy, always */
}

/**
 * od_connect_all - connect every client, wait until all are up
 * @run: the run, listening
 *
 * Context: process context; sleeps up to OD_CONNECT_MS.
 * Return: 0, or -errno if a connection failed or timed out.
 */
int od_connect_all(struct od_run *run)
{
	unsigned long end = jiffies + msecs_to_jiffies(OD_CONNECT_MS);
	struct sockaddr_in dst;
	struct od_cconn *c;
	int i, ret;

	ret = od_server_addr(&dst);
	if (ret)
		return ret;
	for (i = 0; i < run->p.conns; i++) {
		c = &run->cconns[i];
		c->id = rdma_create_id(&init_net, od_cm_client_handler, c,
				       RDMA_PS_TCP, IB_QPT_RC);
		if (IS_ERR(c->id)) {
			ret = PTR_ERR(c->id);
			c->id = NULL;
			return ret;
		}
		ret = rdma_resolve_addr(c->id, NULL, (struct sockaddr *)&dst,
					OD_CONNECT_MS / 2);
		if (ret)
			return ret;
	}
	for (i = 0; i < run->p.conns; i++) {
		c = &run->cconns[i];
		if (!wait_for_completion_timeout(&c->cm_done,
						 max_t(long, end - jiffies, 1)))
			return -ETIMEDOUT;
		if (!test_bit(OD_CONN_UP, &c->flags) ||
		    test_bit(OD_CONN_FAILED, &c->flags))
			return -ECONNREFUSED;
	}
	return 0;
}
