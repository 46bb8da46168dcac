/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * ocq_demo - an RPC-over-RDMA style ULP that exercises ordered completion
 * queues: a server and its clients in one module, connected with rdma_cm,
 * every completion checked for order, duplication and loss.
 *
 * One file per job; each reaches the others only through what it is
 * handed (a run, a connection, a CQ), never through the module's run:
 *
 *   main.c     module entry points and parameters
 *   run.c      a run's life: set-up, monitor, teardown; the module's run
 *   control.c  the debugfs control file, which starts and stops the run
 *   cm.c       rdma_cm: listen, connect, accept (ids carry their run or
 *              connection, QPs their run)
 *   paths.c    the completion paths under comparison, one CQ per side
 *   recv.c     receive buffers, for both sides
 *   client.c   calls, FRWR chunks, reply checks
 *   server.c   calls taken, RDMA data movement, replies
 *   stream.c   the open loop: the pacer that posts at a fixed rate
 *
 * See Documentation/demo.rst.
 */
#ifndef _OCQ_DEMO_H
#define _OCQ_DEMO_H

#include <linux/completion.h>
#include <linux/list.h>
#include <linux/sched.h>
#include <linux/scatterlist.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
#include <rdma/ib_ocq.h>
#include <rdma/ib_sq_acct.h>

/* limits of the control file */
#define OD_MAX_CONNS 16
#define OD_MAX_CREDITS 128
#define OD_MAX_ECHO 4096
#define OD_MIN_CHUNK 512
#define OD_MAX_CHUNK (1024 * 1024)
#define OD_MAX_WORK_NS 1000000
#define OD_MAX_WEIGHT 100
#define OD_MAX_RATE 1000000
/* latency histogram buckets: bucket i holds [2^i, 2^(i+1)) ns */
#define OD_HIST 40
/* chunk memory of one side, split over its connections */
#define OD_CHUNK_BUDGET (16 * 1024 * 1024)
/* the server's duplicate detector, in calls; > 2 * OD_MAX_CREDITS */
#define OD_SEEN_WINDOW 512
/* wire format */
#define OD_MAGIC 0x4f435144 /* "OCQD" */
#define OD_VERSION 1
/* run monitor period, and the default of how long a run may make no progress */
#define OD_TICK_MS 50
#define OD_STALL_MS 5000
/* waits of the control path */
#define OD_CONNECT_MS 5000
/*
 * An aborted run is torn down only once its port is up: how long to let a
 * link state change settle, and how long to wait for the port at most.
 */
#define OD_SETTLE_MS 500
#define OD_PORT_WAIT_MS 15000
/*
 * The local ACK timeout of the demo's QPs, as rdma_set_ack_timeout() takes
 * it: 4.096 us << 19, about 2 s, where rdma_cm's default for RoCE is about
 * 0.5 s.  When rxe (6.1) retransmits, req_retry() rewinds its requester to
 * the send queue's consumer, and rxe_requester() runs the local operations
 * it passes again: a chunk's REG_MR chained behind a call whose ACK was
 * late then finds its MR valid and fails ("rxe_reg_fast_mr: ... not free",
 * IB_WC_LOC_QP_OP_ERR).  A guest with more vCPUs than host cores can be
 * that late.  rxe takes retry_count 7 as "retry for ever", so a dead link
 * is noticed by the run's own stall check, not by the QP.
 */
#define OD_ACK_TIMEOUT 19
/*
 * The open loop (rate > 0).  The client's send queue, in messages: the
 * pacer drops what finds it full.  The server's receives per connection:
 * at the bench's 2000 messages per second on two connections they hold
 * about a second of messages that the server has yet to take, so a server
 * that falls behind for a while is not answered with RNR NAKs.
 */
#define OD_STREAM_DEPTH 128
#define OD_STREAM_RECV 1024
/* the pacer's period, in us: it posts what fell due since its last turn */
#define OD_PACE_US 1000

enum od_path {
	OD_OCQ_STRICT,
	OD_OCQ_FLOW,
	OD_OCQ_PARALLEL,
	OD_UP_WQ,
	OD_UP_UNBOUND,
	OD_UP_SOFTIRQ,
	OD_NAIVE,
	OD_LOCKED,
	OD_NR_PATHS,
};

/* Whether @path runs on an ordered CQ (the ocq-* paths). */
static inline bool od_path_is_ocq(enum od_path path)
{
	return path == OD_OCQ_STRICT || path == OD_OCQ_FLOW ||
	       path == OD_OCQ_PARALLEL;
}

enum od_proc {
	OD_NULL,
	OD_ECHO,
	OD_READ,
	OD_WRITE,
	OD_NR_PROCS,
};

enum od_state {
	OD_IDLE,
	OD_RUNNING,
	OD_DONE,
	OD_STOPPED,
	OD_ABORTED,
};

/**
 * struct od_params - what "start" asks for
 * @conns: connections (client/server QP pairs)
 * @credits: calls the server grants each connection
 * @calls: calls in total, 0 until @duration_ms
 * @duration_ms: run time, 0 until @calls
 * @mix: weight of each &enum od_proc
 * @echo_size: ECHO payload bytes
 * @chunk_size: READ/WRITE chunk bytes
 * @path: completion path
 * @work_ns: CPU burned per completion
 * @postpone: ocq paths: postponed arm with explicit resume
 * @defer_us: ocq paths: deferred re-arm, &ib_ocq_attr.defer_usecs (0: off)
 * @defer_dim: with @defer_us: software DIM picks the delay, %IB_OCQ_DEFER_DIM
 * @busy_poll_us: ocq paths: a thread per side busy-polls the side's CQ with
 *	ib_ocq_busy_poll() while it finds work, &ib_ocq_attr.suspend_usecs
 *	(0: off)
 * @rate: open loop: messages per second the clients post whatever the
 *	server does (0: closed loop, calls under credits)
 */
struct od_params {
	u32 conns;
	u32 credits;
	u64 calls;
	u32 duration_ms;
	u32 mix[OD_NR_PROCS];
	u32 echo_size;
	u32 chunk_size;
	enum od_path path;
	u32 work_ns;
	bool postpone;
	u32 defer_us;
	bool defer_dim;
	u32 busy_poll_us;
	u32 rate;
};

/*
 * The wire.  A call and its reply start with this header; an ECHO payload
 * follows it inline.  Little endian.
 */
struct od_hdr {
	__le32 magic;
	__le32 xid; /* per-connection sequence number of the call */
	u8 proc;
	u8 status; /* reply: 0, or 1 if the server found the call bad */
	__le16 credits; /* call: credits asked; reply: credits granted */
	__le16 slot; /* client's call slot, echoed by the reply */
	__le16 reserved;
	__le32 len; /* inline payload bytes */
	__le32 rkey; /* READ/WRITE: the client's chunk */
	__le32 chunk_len;
	__le64 addr;
};

/* Private data of the connection request and of its accept. */
struct od_cm_req {
	u8 version;
	u8 reserved;
	__le16 conn;
	__le16 credits;
	__le16 reserved2;
	__le32 echo_size;
	__le32 chunk_size;
	__le32 gen;
};

struct od_cm_rep {
	u8 version;
	u8 reserved;
	__le16 credits;
	__le32 max_inline;
};

/**
 * struct od_counts - what one connection's side counted
 * @calls: calls answered (client)
 * @bytes: payload bytes moved (client)
 * @errors: verification failures, over-runs, completion errors
 * @credit_stalls: calls held back for lack of credit (client)
 * @reorders: calls or replies that came after a later one
 * @lost: calls never answered (client, at the end)
 * @failed: calls in flight when the run was aborted (client, at the end)
 * @duplicated: calls or replies seen twice
 * @dropped: open loop: messages due that found the send queue full or the
 *	connection down (client)
 * @hist: call latencies, log2 ns buckets (client)
 *
 * In the open loop @calls counts the messages the server took (server).
 * Written under the connection's lock; read racily for progress.
 */
struct od_counts {
	u64 calls;
	u64 bytes;
	u64 errors;
	u64 credit_stalls;
	u64 reorders;
	u64 lost;
	u64 failed;
	u64 duplicated;
	u64 dropped;
	u64 hist[OD_HIST];
};

/**
 * struct od_cq - one side's CQ, whatever path drives it
 * @run: owner
 * @path: how completions are polled and dispatched (I)
 * @cq: the CQ (I)
 * @process: the side's process() step, for ocq-parallel (I)
 * @ocq: the ordered CQ of the ocq-* paths (I)
 * @lock: the locked path's loop lock
 * @pcpu: naive/locked: one work item per CPU that takes events (I)
 * @dead: naive/locked: schedule no more loops
 * @resume_queued: postponed arm: @resume_work is queued (A)
 * @resume_work: resumes the ordered CQ once the consumer caught up
 * @events: naive/locked: completion handler calls (A)
 * @runs: naive/locked: loop runs (A)
 * @empty_runs: naive/locked: runs that found nothing (A)
 * @arms: naive/locked: ib_req_notify_cq() calls (A)
 * @repolls: locked: loops repeated for a missed event (A)
 * @completions: done() calls, every path (A)
 * @cpu_ns: time spent in done() and process(), every path (A)
 * @poller: busy_poll_us: the thread that busy-polls the ordered CQ (I)
 * @poll_wait: @poller sleeps here while the CQ is armed
 * @poll_kick: a done() of a run, not of @poller, since @poller last
 *	looked: there is work again (READ_ONCE/WRITE_ONCE; a lost race
 *	costs one timeout of @poller's sleep, never a completion)
 */
struct od_cq {
	struct od_run *run;
	enum od_path path;
	void (*process)(struct ib_wc *wc);
	struct ib_cq *cq;
	struct ib_ocq *ocq;
	spinlock_t lock; /* the locked path's loop */
	struct od_cq_work __percpu *pcpu;
	bool dead;
	atomic_t resume_queued;
	struct work_struct resume_work;
	atomic64_t events;
	atomic64_t runs;
	atomic64_t empty_runs;
	atomic64_t arms;
	atomic64_t repolls;
	atomic64_t completions;
	atomic64_t cpu_ns;
	struct task_struct *poller;
	wait_queue_head_t poll_wait;
	bool poll_kick;
};

struct od_cq_work {
	struct work_struct work;
	struct od_cq *dcq;
};

/* A send work request's completion context: its sequence number. */
struct od_wcqe {
	struct ib_cqe cqe;
	u64 seq;
};

/* An open-loop message's send completion context. */
struct od_smsg {
	struct od_wcqe send;
	struct od_cconn *conn;
};

/* One receive buffer, DMA-mapped once, reposted from its completion. */
struct od_recv {
	struct ib_cqe cqe;
	union { /* its connection: the side's own */
		struct od_cconn *cconn;
		struct od_sconn *sconn;
	};
	struct ib_sge sge;
	struct ib_recv_wr wr;
	void *buf;
	u64 dma;
	int verdict; /* ocq-parallel: the result of process() */
};

/* A client chunk: a buffer the server reads or writes, FRWR-registered. */
struct od_chunk {
	void *buf;
	struct scatterlist sg;
	struct ib_mr *mr;
	bool mapped;
	bool valid; /* registered and not yet invalidated */
	struct od_wcqe inv;
	struct ib_send_wr inv_wr;
	struct od_cconn *conn;
};

/*
 * A client call.  It is busy from issue until both the reply arrived and
 * the send accounting released its work requests (@refs counts the two).
 */
struct od_cslot {
	struct od_cconn *conn;
	u16 idx;
	u8 refs;
	bool waiting; /* no reply yet */
	u8 proc;
	u32 xid;
	u64 t0;
	struct od_chunk *chunk;
	struct od_wcqe reg;
	struct od_wcqe send;
	struct ib_sge sge;
	struct ib_send_wr wr;
	struct ib_reg_wr reg_wr;
	void *buf;
	u64 dma;
};

/* Connection state bit numbers, both sides */
#define OD_CONN_UP 0
#define OD_CONN_FAILED 1
#define OD_CONN_DOWN 2
#define OD_CONN_TAKEN 3 /* server: a client connected to it */

/*
 * Locking rules of a connection.
 *
 * I: set up before the connection is used, read-only afterwards.
 * L: the connection's @lock (spin_lock_bh), which also serialises both
 *    sides of its send accounting.
 * A: atomic.
 */

/**
 * struct od_cconn - the client side of one connection
 * @run: owner (I)
 * @idx: connection number (I)
 * @id: its rdma_cm id (I)
 * @qp: its QP (I)
 * @lock: see the legend
 * @flags: OD_CONN_* (A)
 * @cm_done: connection established or failed
 * @acct: send accounting (L)
 * @acct_ready: @acct is initialised (I)
 * @slots: call slots (I)
 * @free: indexes of free slots (L)
 * @chunks: chunk pool (I)
 * @free_chunks: indexes of free chunks (L)
 * @recvs: receive buffers (I)
 * @msgs: open loop: send contexts, by sequence number modulo @nmsgs (L)
 * @nslots: call slots, also the credits asked for (I)
 * @nchunks: chunks (I)
 * @nrecv: receive buffers (I)
 * @nmsgs: open loop: entries of @msgs, the send queue's depth (I)
 * @nfree: free slots (L)
 * @nfree_chunks: free chunks (L)
 * @granted: credits the server granted (L)
 * @outstanding: calls sent and not answered (L)
 * @next_xid: sequence number of the next call or message (L)
 * @max_xid: highest reply sequence number seen, +1 (L)
 * @cursor: position in the procedure mix (L)
 * @cnt: counters (L)
 */
struct od_cconn {
	struct od_run *run;
	int idx;
	struct rdma_cm_id *id;
	struct ib_qp *qp;
	spinlock_t lock; /* see the legend above */
	unsigned long flags;
	struct completion cm_done;
	struct ib_sq_acct acct;
	bool acct_ready;
	struct od_cslot *slots;
	u16 *free;
	struct od_chunk *chunks;
	u16 *free_chunks;
	struct od_recv *recvs;
	struct od_smsg *msgs;
	u32 nslots, nchunks, nrecv, nmsgs, nfree, nfree_chunks;
	u32 granted;
	u32 outstanding;
	u32 next_xid;
	u32 max_xid;
	u32 cursor;
	struct od_counts cnt;
};

/* A server staging buffer: the source of READ data, the sink of WRITE. */
struct od_stage {
	void *buf;
	u64 dma;
	u16 idx;
};

/*
 * A server reply.  Busy from the call's arrival until the send accounting
 * releases the reply's work requests.
 */
struct od_sslot {
	struct od_sconn *conn;
	u16 idx;
	struct list_head entry;
	struct od_hdr call;
	struct od_stage *stage;
	bool bad;
	struct od_wcqe rdma;
	struct od_wcqe send;
	struct ib_sge sge;
	struct ib_sge rsge;
	struct ib_rdma_wr rdma_wr;
	struct ib_send_wr wr;
	void *buf;
	u64 dma;
};

/**
 * struct od_sconn - the server side of one connection
 * @run: owner (I)
 * @idx: connection number (I)
 * @id: its rdma_cm id, once accepted
 * @qp: its QP, once accepted
 * @lock: see the legend of &struct od_cconn
 * @flags: OD_CONN_* (A)
 * @acct: send accounting (L)
 * @acct_ready: @acct is initialised (I)
 * @slots: reply slots (I)
 * @free: indexes of free reply slots (L)
 * @stages: staging buffers (I)
 * @free_stages: indexes of free staging buffers (L)
 * @recvs: receive buffers (I)
 * @nslots: reply slots (I)
 * @nstages: staging buffers (I)
 * @nrecv: receive buffers (I)
 * @nfree: free reply slots (L)
 * @nfree_stages: free staging buffers (L)
 * @backlog: replies waiting for send queue room or a staging buffer, in
 *	call order (L)
 * @granted: credits granted to the client (I)
 * @outstanding: calls received and not yet answered (L)
 * @max_xid: highest call sequence number seen, +1 (L)
 * @seen: the duplicate detector, a window of sequence numbers (L)
 * @cnt: counters (L)
 */
struct od_sconn {
	struct od_run *run;
	int idx;
	struct rdma_cm_id *id;
	struct ib_qp *qp;
	spinlock_t lock; /* see the legend above */
	unsigned long flags;
	struct ib_sq_acct acct;
	bool acct_ready;
	struct od_sslot *slots;
	u16 *free;
	struct od_stage *stages;
	u16 *free_stages;
	struct od_recv *recvs;
	u32 nslots, nstages, nrecv, nfree, nfree_stages;
	struct list_head backlog;
	u32 granted;
	u32 outstanding;
	u32 max_xid;
	DECLARE_BITMAP(seen, OD_SEEN_WINDOW);
	struct od_counts cnt;
};

/**
 * struct od_side - the client or the server half of a run
 * @pd: protection domain of all its connections
 * @cq: the CQ all its connections share, send and receive
 */
struct od_side {
	struct ib_pd *pd;
	struct od_cq cq;
};

/**
 * struct od_result - what the control file reports; see Documentation/demo.rst
 * @calls: calls answered
 * @issued: calls posted
 * @bytes: payload bytes moved
 * @errors: verification failures, over-runs, completion errors
 * @credit_stalls: calls held back for lack of credit
 * @reorders: calls and replies that came after a later one
 * @lost: calls never answered
 * @failed: calls in flight when the run was aborted
 * @duplicated: calls and replies seen twice
 * @dropped: open loop: messages due that the clients could not post
 * @backlog: open loop: messages due that the pacer had not posted yet (once
 *	the run ended: when it stopped taking messages)
 * @completions: done() calls
 * @events: completion handler calls
 * @runs: CQ processing runs
 * @empty_runs: runs that found nothing
 * @repolls: polls repeated after an unconfirmed arm
 * @arms: ib_req_notify_cq() calls
 * @signaled: signaled send work requests
 * @sends: send work requests
 * @cpu_ns: time in done() and process()
 * @hist: call latencies, log2 ns buckets
 */
struct od_result {
	u64 calls, issued, bytes, errors, credit_stalls, reorders, lost, failed;
	u64 duplicated, dropped, backlog;
	u64 completions, events, runs, empty_runs, repolls, arms;
	u64 signaled, sends, cpu_ns;
	u64 hist[OD_HIST];
};

/*
 * Locking rules of the run.
 *
 * M: od_mutex (the control file, start, stop, teardown).
 * A: atomic, or WRITE_ONCE/READ_ONCE.
 * I: set by od_run_start() before any connection exists.
 */

/**
 * struct od_run - the one run of the module
 * @p: parameters (I)
 * @state: &enum od_state (M, read with READ_ONCE)
 * @active: resources exist (M)
 * @gen: run number, also sent in the private data (I)
 * @ending: the state the run ends with, 0 while it goes on (A)
 * @stopping: clients issue no more calls (A)
 * @issued: calls taken against the target (A)
 * @completed: calls answered (A)
 * @errors_logged: errors logged by od_log_error(), at most @od_log_errors (A)
 * @t_start: ktime of the start (I)
 * @t_end: ktime of the end (M)
 * @dev: the device (I)
 * @port: the device's port (I)
 * @removing: rdma_cm reported the device's removal (A)
 * @listen_id: the server's listener (I)
 * @cli: the client side (I)
 * @srv: the server side (I)
 * @cconns: client connections (I)
 * @sconns: server connections (I)
 * @monitor: ends the run at its target, its duration, or a stall
 * @end_work: tears the run down when it ends by itself
 * @progress: calls answered at the last tick that saw progress (monitor)
 * @progress_t: jiffies of that tick (monitor)
 * @peer_disconnected: the disconnect_after test hook fired (monitor)
 * @pacer: open loop: the thread that posts the messages (M)
 * @due: open loop: messages due at the pacer's last look at the clock,
 *	capped at @p.calls (pacer; read racily while it runs)
 * @paced: open loop: messages posted or dropped so far (pacer)
 * @pace_conn: open loop: the connection of the next message (pacer)
 * @pace_ended: open loop: the pacer saw the run stopping and posts no more
 *	(pacer writes with release; od_stream_outstanding() acquires)
 * @res: final result, once the run ended (M)
 * @error: reason of the last refused command (M)
 * @runs: runs started (M)
 */
struct od_run {
	struct od_params p;
	enum od_state state;
	bool active;
	u32 gen;
	atomic_t ending;
	bool stopping;
	atomic64_t issued;
	atomic64_t completed;
	atomic_t errors_logged;
	u64 t_start;
	u64 t_end;
	struct ib_device *dev;
	u32 port;
	bool removing;
	struct rdma_cm_id *listen_id;
	struct od_side cli;
	struct od_side srv;
	struct od_cconn *cconns;
	struct od_sconn *sconns;
	struct delayed_work monitor;
	struct work_struct end_work;
	u64 progress;
	unsigned long progress_t;
	bool peer_disconnected;
	struct task_struct *pacer;
	u64 due;
	u64 paced;
	u32 pace_conn;
	bool pace_ended;
	struct od_result res;
	char error[128];
	u64 runs;
};

/* Errors of a run that are logged by default; the counters count all. */
#define OD_LOG_ERRORS 10

extern unsigned int od_log_errors;

/**
 * od_log_error() - whether an error of @run gets its log line
 * @run: the run
 *
 * Every error a completion handler, or a post from one, meets is counted; its
 * line is logged only for the first @od_log_errors of the run (module
 * parameter log_errors), so that a QP full of failed work requests cannot
 * flood the log.  The run's end line gives the count.
 *
 * Context: any.
 * Return: true while the run has logged fewer than @od_log_errors errors.
 */
static inline bool od_log_error(struct od_run *run)
{
	int limit = min_t(unsigned int, READ_ONCE(od_log_errors), INT_MAX);
	int n = atomic_read(&run->errors_logged);

	do {
		if (n >= limit)
			return false;
	} while (!atomic_try_cmpxchg(&run->errors_logged, &n, n + 1));
	return true;
}

extern struct od_run od_run;
extern struct mutex od_mutex;
extern struct workqueue_struct *od_wq;
extern char *od_addr;
extern int od_port;
extern unsigned long od_disconnect_after;
extern unsigned int od_stall_ms;
extern const char *const od_path_names[OD_NR_PATHS];
extern const char *const od_state_names[];

/* control.c */
int od_control_init(void);
void od_control_exit(void);

/* run.c */
int od_run_start(const struct od_params *p);
int od_run_stop(void);
void od_run_end(struct od_run *run, enum od_state how);
void od_run_removed(struct od_run *run);
bool od_port_up(struct od_run *run);
void od_run_result(struct od_run *run, struct od_result *r);
void od_run_init(void);
void od_run_exit(void);

/* cm.c */
int od_listen(struct od_run *run);
int od_listen_start(struct od_run *run);
int od_connect_all(struct od_run *run);
int od_cm_server_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev);

/* paths.c */
int od_cq_create(struct od_run *run, struct od_cq *dcq, int nr_cqe,
		 void (*process)(struct ib_wc *wc));
void od_cq_destroy(struct od_cq *dcq);
void od_cq_consumed(struct od_cq *dcq);
void od_cq_resume(struct od_cq *dcq);
u64 od_begin(void);
void od_end(struct od_cq *dcq, u64 t0);
void od_end_flushed(struct od_cq *dcq);
void od_burn(struct od_run *run);
bool od_in_process(struct od_run *run);
int od_paths_init(void);
void od_paths_exit(void);

/* client.c */
int od_cconn_setup(struct od_cconn *c);
void od_cconn_teardown(struct od_cconn *c);
void od_cconn_kick(struct od_cconn *c);
void od_cconn_qp_caps(struct od_cconn *c, struct ib_qp_cap *cap);
void od_cconn_lost(struct od_cconn *c, bool aborted);
int od_cconn_stream(struct od_cconn *c);
void od_client_process(struct ib_wc *wc);

/* recv.c */
struct od_recv *od_recv_alloc(struct ib_device *dev, u32 n, u32 len,
			      void (*done)(struct ib_cq *cq, struct ib_wc *wc));
void od_recv_free(struct od_recv *r, struct ib_device *dev, u32 n, u32 len);
int od_recv_post(struct ib_qp *qp, struct od_recv *r, u32 n, u32 lkey);

/* server.c */
int od_sconn_setup(struct od_sconn *s);
void od_sconn_teardown(struct od_sconn *s);
void od_sconn_qp_caps(struct od_sconn *s, struct ib_qp_cap *cap);
void od_server_process(struct ib_wc *wc);
u64 od_sconn_taken(struct od_sconn *s);

/* stream.c */
int od_stream_start(struct od_run *run);
void od_stream_stop(struct od_run *run, enum od_state how);
u64 od_stream_backlog(struct od_run *run);
u32 od_stream_outstanding(struct od_run *run);
void od_stream_lost(struct od_run *run, bool aborted);

/* data patterns, both sides */
static inline u32 od_seed(u32 conn, u32 xid, u32 salt)
{
	return (conn * 0x9e3779b1u) ^ (xid * 0x85ebca77u) ^ salt;
}

/*
 * The pattern of a buffer: 64-bit words of a sequence seeded by @seed, the
 * tail (ECHO sizes need not be multiples of 8) bytes of the next word.
 * Buffers are 8-byte aligned.
 */
static inline u64 od_word(u32 seed, u32 i)
{
	return ((u64)seed << 32 | i) * 0x9e3779b97f4a7c15ull;
}

static inline void od_fill(void *buf, u32 len, u32 seed)
{
	u64 *p = buf;
	u8 *t = buf;
	u32 i;

	for (i = 0; i < len / 8; i++)
		p[i] = od_word(seed, i);
	for (i = len & ~7u; i < len; i++)
		t[i] = od_word(seed, len / 8) >> (8 * (i & 7));
}

static inline bool od_check(const void *buf, u32 len, u32 seed)
{
	const u64 *p = buf;
	const u8 *t = buf;
	u32 i;

	for (i = 0; i < len / 8; i++)
		if (p[i] != od_word(seed, i))
			return false;
	for (i = len & ~7u; i < len; i++)
		if (t[i] != (u8)(od_word(seed, len / 8) >> (8 * (i & 7))))
			return false;
	return true;
}

/* salts of the pattern kinds */
#define OD_SALT_ECHO 0x11111111u
#define OD_SALT_READ 0x22222222u
#define OD_SALT_WRITE 0x33333333u

/* the QP's depth of a send queue accounting of @depth, plus the drain */
static inline u32 od_qp_send_wr(u32 depth)
{
	return depth + 1;
}

/*
 * The QP's receive queue for @nrecv posted receives, plus the drain:
 * ib_drain_rq() posts one more receive, which a full queue refuses
 * (-ENOMEM, and a WARN), e.g. on rxe when @nrecv + 1 is a power of two.
 */
static inline u32 od_qp_recv_wr(u32 nrecv)
{
	return nrecv + 1;
}

#endif /* _OCQ_DEMO_H */
