// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: the kernel-to-kernel RDMA fabric.
 *
 * DOC: Fabric
 *
 * Nodes are configured over generic netlink (genl.c): a *peer* is a node id
 * and an address.  There is one RC QP per peer, shared by every space of
 * the node.  Between two nodes the one with the smaller node id connects
 * (rdma_cm, port fabric_port) and the other one waits; a node configured
 * as its own peer connects to itself and so has two connections: the one
 * it initiated carries its messages, the passive end only answers them.
 * Requests from nodes that are not configured, or that should be waiting
 * for us, are refused (ratelimited log, FRACTOS_STAT_REFUSED).
 *
 * Both ends say who they are in the rdma_cm private data (struct
 * fos_wire_hello, wire.h): node id, epoch, receive buffers posted.  The
 * epoch changes at every module load, so a peer whose epoch changed has
 * restarted: everything it had exported is dead (FRACTOS_STAT_EPOCH_CHANGES,
 * and later the revocation of every capability that names the old epoch).
 *
 * Admission (wire.h, "Admission"; secrets in fabric/auth.c): a request is
 * refused unless it comes from the address configured for the node it
 * claims to be and names a secret we hold (or both ends are insecure).
 * The passive end then accepts with its MAC but keeps the connection
 * *unadmitted*: off the peer's slots, not sending, and serving nothing but
 * the initiator's AUTH, for at most FOS_ADMIT_TIMEOUT.  Only a verified
 * AUTH admits it (fos_conn_admit()): then, and not before, the peer's
 * epoch, connection and state change.  The active end admits the
 * connection when the accept's MAC verifies, and sends AUTH before any
 * other message.  At most FOS_ADMIT_MAX connections wait for admission.
 * Refusals are counted per reason (FRACTOS_STAT_REFUSED_*) and failed
 * proofs as FRACTOS_STAT_AUTH_FAILURES, all with a ratelimited log line.
 *
 * Flow control is credit based: each connection pre-posts fabric_ring
 * receive buffers of FOS_WIRE_MSG_MAX bytes and announces them as the
 * peer's send credits.  Every message spends one; receivers re-post the
 * buffer and return the credit in the header of their next message, or in
 * a CREDIT message once a quarter of the ring (and at least two) is owed.  The last credit is
 * kept for a CREDIT or HEARTBEAT that returns credits, so that the peer can
 * always answer and the two ends cannot both run dry.
 * A sender without a credit gets -EAGAIN, waits (FOS_SEND_WAIT), or has
 * the message queued on the connection's backlog (FOS_SEND_QUEUE, at most
 * fabric_ring messages), which goes out in order as credits come back:
 * that is how handlers reply without sleeping.
 *
 * Liveness: each connection sends a HEARTBEAT when it has sent nothing for
 * half of fabric_heartbeat_ms; a connection from which nothing has arrived
 * for FOS_HB_MISSES (4) intervals is declared dead.  The check runs once
 * per interval, so a silent peer is detected between 4 and 5 intervals
 * after its last message (4-5 s by default).
 *
 * Send-queue stalls: an RC QP retransmits what the peer has not
 * acknowledged when its ACK timer (FOS_ACK_TIMEOUT) fires, but rxe
 * restarts that timer whenever its send queue runs, that is at every post.
 * Lose a packet and the peer's one NAK, keep posting faster than the
 * timeout, and nothing is ever sent again until the peer's heartbeat
 * gives up on us.  So a connection whose send queue has had WRs in flight
 * and no completion for FOS_SQ_STALL_MS stops posting (messages wait on
 * the backlog or for a credit, RDMA WRs for a slot, control messages are
 * dropped) until the next completion: the timer then fires and the QP
 * retransmits (FRACTOS_STAT_TX_STALLS).  Hardware RC never needs this;
 * a pause there costs nothing but the wait for a completion that was
 * coming anyway.
 *
 * Any error (a failed completion, a cm error or disconnect, the heartbeat,
 * a protocol error, the device going away) tears the connection down in
 * process context (fos_conn_close_work()); the initiating side then
 * reconnects after a backoff that starts at FOS_BACKOFF_MIN_MS and doubles
 * to FOS_BACKOFF_MAX_MS, reset when a connection comes up.  A new RDMA
 * device kicks every peer that is backing off.
 *
 * RDMA devices come from an ib_client; every connection has a PD of its
 * own (fabric/rdma.c); removing the device tears down its connections
 * first.  The module works without any.
 *
 * DOC: Routing of remote objects
 *
 * remote.c: objects are named by (node id, epoch, object id); a
 * capability to another node's object is a local proxy, and operations on
 * it are messages to fos_peer_find(node id) matched to their answers by the
 * header cookie.  The rows for those messages are in fos_msg_types[]; this
 * file only tells remote.c when a peer's connection goes down, its epoch
 * changes or it is deleted (fos_remote_node_down()), which revokes every
 * proxy of that node: failure becomes revocation.
 *
 * Locking, outermost first:
 * - fos_fabric_mutex serialises configuration (add, delete, exit).
 * - fos_conns_lock (spinlock) protects the list of connections, the list
 *   of devices, fos_ibdev.dying and .nconns, and fos_conn.dev.
 * - fos_peer.lock protects the peer's conn/in/out pointers, state, epoch,
 *   backoff and deleted flag.
 * - fos_conn.lock protects the connection's state, credits and free send
 *   buffers.
 * None of them is held across anything that sleeps.  rdma_cm handlers take
 * only the spinlocks; everything that destroys a cm_id runs on
 * fos_fabric_wq.
 */
#include <linux/completion.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <net/net_namespace.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
#include "fos.h"
#include "fabric.h"
#include "wire.h"
#include "fabric/auth.h"
#include "fabric/pri.h"
#include "fabric/fos_trace.h"

static unsigned short fos_fabric_port = FRACTOS_FABRIC_PORT;
module_param_named(fabric_port, fos_fabric_port, ushort, 0444);
MODULE_PARM_DESC(fabric_port,
		 "rdma_cm port the fabric listens on, 0 for none (default 18525)");

/* The port a NODE_ADD without one means: the one we listen on, as peers do. */
u16 fos_fabric_default_port(void)
{
	return fos_fabric_port ?: FRACTOS_FABRIC_PORT;
}

static unsigned int fos_fabric_ring = 64;
module_param_named(fabric_ring, fos_fabric_ring, uint, 0644);
MODULE_PARM_DESC(fabric_ring,
		 "Receive buffers (peer credits) per new connection, 4-1024 (default 64)");

static unsigned int fos_fabric_hb_ms = 1000;
module_param_named(fabric_heartbeat_ms, fos_fabric_hb_ms, uint, 0644);
MODULE_PARM_DESC(fabric_heartbeat_ms,
		 "Heartbeat interval; a peer silent for 4 intervals is dead (default 1000)");

/*
 * Fault injection for the tests, in debugfs only
 * (/sys/kernel/debug/fractos/fault_read_delay_ms): sleep this long (at
 * most 10000 ms) before each RDMA READ of a remote copy.
 */
u32 fos_fault_read_delay_ms;
static struct dentry *fos_debugfs;

/*
 * Per-peer limits on what a peer may make this node hold: requests served
 * in process context (COPY, GRANT, LOOKUP) at a time, and grants (memory
 * regions) out at a time.  Over them the request is answered EAGAIN.
 */
static unsigned int fos_peer_limit[FOS_PEER_NR_RES] = {
	[FOS_PEER_WORK] = 64,
	[FOS_PEER_GRANTS] = 256,
};
module_param_named(fabric_peer_work, fos_peer_limit[FOS_PEER_WORK], uint,
		   0644);
MODULE_PARM_DESC(fabric_peer_work,
		 "Requests of one peer (COPY, GRANT, LOOKUP) served at a time; over it they fail with EAGAIN (default 64)");
module_param_named(fabric_peer_grants, fos_peer_limit[FOS_PEER_GRANTS], uint,
		   0644);
MODULE_PARM_DESC(fabric_peer_grants,
		 "Grants (registered ranges) one peer may hold at a time; over it GRANT fails with EAGAIN (default 256)");

#define FOS_HB_MISSES		4
#define FOS_BACKOFF_MIN_MS	100
#define FOS_BACKOFF_MAX_MS	5000
#define FOS_CM_TIMEOUT_MS	2000
/*
 * The local ACK timeout of our QPs, 4.096 us * 2^17 = 0.54 s: rxe's
 * retransmission timer.  rdma_cm's RoCE default is 2^19 (2.1 s) before
 * Linux 6.4, where two losses in a row of one packet would leave a peer
 * silent for longer than the heartbeat allows (4 intervals).
 */
#define FOS_ACK_TIMEOUT		17
/*
 * Twice that ACK timeout (1074 ms): a send queue without a completion for
 * that long is stalled.
 */
#define FOS_SQ_STALL_MS \
	DIV_ROUND_UP(2 * (4096ULL << FOS_ACK_TIMEOUT), NSEC_PER_MSEC)
#define FOS_CONNECT_TIMEOUT	(30 * HZ)
/* A passive connection gets this long to prove itself (AUTH). */
#define FOS_ADMIT_TIMEOUT	(5 * HZ)
/* Passive connections waiting for admission, over every peer. */
#define FOS_ADMIT_MAX		32
#define FOS_SEND_TIMEOUT	(5 * HZ)

/**
 * struct fos_pending - a message waiting on fos_conn.backlog for a credit
 * @link: on the backlog
 * @type: message type
 * @cookie: header cookie
 * @done: the sender's completion, or NULL
 * @len: bytes at @payload
 * @payload: the payload
 */
struct fos_pending {
	struct list_head link;
	u8 type;
	u64 cookie;
	struct fos_fabric_done *done;
	u32 len;
	u8 payload[];
};

typedef void (*fos_recv_fn)(struct fos_peer *peer,
			    const struct fos_wire_hdr *hdr,
			    const void *payload, u32 len);

/**
 * struct fos_msg_type - what the fabric knows about one message type
 * @name: for logs
 * @check: validates the payload (wire.h)
 * @recv: the handler, NULL for messages the transport consumes itself
 * @held: a request served later, in process context: its receive credit
 *	is held until the handler calls fos_fabric_credit_done() (see
 *	"Held credits")
 */
struct fos_msg_type {
	const char *name;
	int (*check)(const void *payload, u32 len);
	fos_recv_fn recv;
	bool held;
};

/* The dispatch table: one row per message type. */
static const struct fos_msg_type fos_msg_types[FOS_WIRE_NR] = {
	[FOS_WIRE_CREDIT] = { "credit", fos_wire_check_empty, NULL },
	[FOS_WIRE_HEARTBEAT] = { "heartbeat", fos_wire_check_empty, NULL },
	[FOS_WIRE_PING] = { "ping", fos_wire_check_ping, fos_ping_recv },
	[FOS_WIRE_PONG] = { "pong", fos_wire_check_ping, fos_pong_recv },
	[FOS_WIRE_INVOKE] = { "invoke", fos_wire_check_invoke, fos_invoke_recv },
	[FOS_WIRE_ACK] = { "ack", fos_wire_check_ack, fos_ack_recv },
	[FOS_WIRE_REVOKE] = { "revoke", fos_wire_check_obj, fos_revoke_recv },
	[FOS_WIRE_REVOKE_REQ] = { "revoke_req", fos_wire_check_obj,
				  fos_revoke_req_recv },
	[FOS_WIRE_IMPORT] = { "import", fos_wire_check_import,
			      fos_import_recv },
	[FOS_WIRE_LOOKUP] = { "lookup", fos_wire_check_lookup, fos_lookup_recv,
			      true },
	[FOS_WIRE_LOOKUP_REPLY] = { "lookup_reply",
				    fos_wire_check_lookup_reply,
				    fos_lookup_reply_recv },
	[FOS_WIRE_COPY] = { "copy", fos_wire_check_copy, fos_copy_recv, true },
	[FOS_WIRE_GRANT] = { "grant", fos_wire_check_grant, fos_grant_recv,
			     true },
	[FOS_WIRE_GRANT_REPLY] = { "grant_reply", fos_wire_check_grant_reply,
				   fos_grant_reply_recv },
	[FOS_WIRE_RELEASE] = { "release", fos_wire_check_release,
			       fos_release_recv },
	[FOS_WIRE_DROP] = { "drop", fos_wire_check_drop, fos_drop_recv },
	[FOS_WIRE_GRANT_END] = { "grant_end", fos_wire_check_grant_end,
				 fos_grant_end_recv },
	/* Consumed by fos_rx_done() before admission, refused after it. */
	[FOS_WIRE_AUTH] = { "auth", fos_wire_check_auth, NULL },
};

static DEFINE_MUTEX(fos_fabric_mutex);
DEFINE_SPINLOCK(fos_conns_lock);
static LIST_HEAD(fos_conns);
static LIST_HEAD(fos_devs);
DECLARE_WAIT_QUEUE_HEAD(fos_dev_wq);
static DEFINE_XARRAY(fos_peers);
static struct workqueue_struct *fos_fabric_wq;
static struct rdma_cm_id *fos_listener;
static u16 fos_listen_port;
static atomic64_t fos_fabric_stats[__FRACTOS_STAT_MAX];
/* Passive connections not admitted yet (see "Admission"). */
static atomic_t fos_admitting;
static struct delayed_work fos_hb_dwork;

static void fos_stat_add(struct fos_peer *peer, unsigned int stat, u64 v)
{
	atomic64_add(v, &fos_fabric_stats[stat]);
	if (peer)
		atomic64_add(v, &peer->stats[stat]);
}

/**
 * fos_peer_res_get - take one unit of a per-peer resource
 * @peer: the peer
 * @res: enum fos_peer_res
 *
 * Return: true, or false (and nothing taken) if @peer holds its limit
 * (fabric_peer_work, fabric_peer_grants) already.
 */
bool fos_peer_res_get(struct fos_peer *peer, unsigned int res)
{
	if (atomic_inc_return(&peer->res[res]) >
	    READ_ONCE(fos_peer_limit[res])) {
		atomic_dec(&peer->res[res]);
		return false;
	}
	return true;
}

void fos_peer_res_put(struct fos_peer *peer, unsigned int res)
{
	atomic_dec(&peer->res[res]);
}

void fos_peer_stat_inc(struct fos_peer *peer, unsigned int stat)
{
	fos_stat_add(peer, stat, 1);
}

static bool fos_peer_initiator(u32 node_id)
{
	return fos_node_id <= node_id;
}

/* ---- peers ---- */

/*
 * The connection whose QP @peer's messages and RDMA READs reach us on:
 * the one connection to another node, the passive end for ourselves.
 */
struct fos_conn *fos_peer_serving_locked(struct fos_peer *peer)
{
	lockdep_assert_held(&peer->lock);
	return peer->node_id == fos_node_id ? peer->in : peer->conn;
}

static void fos_peer_release(struct kref *ref)
{
	struct fos_peer *peer = container_of(ref, struct fos_peer, ref);

	kfree(peer);
	fos_live_add(FOS_LIVE_PEERS, -1);
}

/* Another reference on @peer, which the caller holds. */
struct fos_peer *fos_peer_get(struct fos_peer *peer)
{
	kref_get(&peer->ref);
	return peer;
}

void fos_peer_put(struct fos_peer *peer)
{
	kref_put(&peer->ref, fos_peer_release);
}

u32 fos_peer_node_id(const struct fos_peer *peer)
{
	return peer->node_id;
}

/* The peer's last epoch seen, 0 if it never connected. */
/*
 * Whether the uid @peer states for an asker is believed: configured so
 * (NODE_TRUST_UIDS), or we are @peer.
 */
bool fos_peer_trusts_uids(const struct fos_peer *peer)
{
	return peer->trust_uids || peer->node_id == fos_node_id;
}

u32 fos_peer_epoch(struct fos_peer *peer)
{
	u32 epoch;

	spin_lock(&peer->lock);
	epoch = peer->epoch;
	spin_unlock(&peer->lock);
	return epoch;
}

/**
 * fos_peer_find - look a configured node up
 * @node_id: its id
 *
 * Return: the peer with a reference (fos_peer_put() it), or NULL.
 */
struct fos_peer *fos_peer_find(u32 node_id)
{
	struct fos_peer *peer;

	xa_lock(&fos_peers);
	peer = xa_load(&fos_peers, node_id);
	if (peer)
		kref_get(&peer->ref);
	xa_unlock(&fos_peers);
	return peer;
}

/* Schedule the next attempt.  Caller holds peer->lock. */
static void fos_peer_backoff_locked(struct fos_peer *peer)
{
	lockdep_assert_held(&peer->lock);
	if (peer->deleted || peer->out)
		return;
	peer->state = FRACTOS_NODE_DOWN;
	queue_delayed_work(fos_fabric_wq, &peer->connect_work,
			   msecs_to_jiffies(peer->backoff_ms));
	peer->backoff_ms = min(peer->backoff_ms * 2, FOS_BACKOFF_MAX_MS);
}

/* ---- connections: buffers and QP ---- */

void fos_conn_fail(struct fos_conn *conn)
{
	bool queue = false;

	spin_lock(&conn->lock);
	if (conn->state != FOS_CONN_CLOSING) {
		conn->state = FOS_CONN_CLOSING;
		queue = true;
	}
	spin_unlock(&conn->lock);
	if (queue)
		queue_work(fos_fabric_wq, &conn->close_work);
}

/* As fos_conn_fail(), for an error that nothing else reports. */
static void fos_conn_fail_err(struct fos_conn *conn, const char *what,
			      int err)
{
	if (READ_ONCE(conn->state) != FOS_CONN_CLOSING)
		pr_warn_ratelimited("fractos: node %u: %s failed: %d\n",
				    conn->peer->node_id, what, err);
	fos_conn_fail(conn);
}

static void fos_rx_done(struct ib_cq *cq, struct ib_wc *wc);
static void fos_tx_done(struct ib_cq *cq, struct ib_wc *wc);
static void fos_conn_credit_check(struct fos_conn *conn, u32 owed, bool now);

static int fos_post_recv(struct fos_conn *conn, struct fos_buf *b)
{
	struct ib_sge sge = {
		.addr = b->dma,
		.length = FOS_WIRE_MSG_MAX,
		.lkey = conn->pd->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe = &b->cqe,
		.sg_list = &sge,
		.num_sge = 1,
	};

	return ib_post_recv(conn->id->qp, &wr, NULL);
}

static void fos_bufs_free(struct fos_conn *conn, struct fos_buf *bufs,
			  enum dma_data_direction dir)
{
	u32 i;

	if (!bufs)
		return;
	for (i = 0; i < conn->nbufs; i++) {
		if (!bufs[i].data)
			continue;
		if (bufs[i].dma)
			ib_dma_unmap_single(conn->dev->ibdev, bufs[i].dma,
					    FOS_WIRE_MSG_MAX, dir);
		kfree(bufs[i].data);
	}
	kfree(bufs);
}

static struct fos_buf *fos_bufs_alloc(struct fos_conn *conn,
				      enum dma_data_direction dir,
				      void (*done)(struct ib_cq *, struct ib_wc *))
{
	struct ib_device *ibdev = conn->dev->ibdev;
	struct fos_buf *bufs;
	u32 i;

	bufs = kcalloc(conn->nbufs, sizeof(*bufs), GFP_KERNEL);
	if (!bufs)
		return NULL;
	for (i = 0; i < conn->nbufs; i++) {
		struct fos_buf *b = &bufs[i];
		u64 dma;

		b->conn = conn;
		b->cqe.done = done;
		INIT_LIST_HEAD(&b->free);
		b->data = kzalloc(FOS_WIRE_MSG_MAX, GFP_KERNEL);
		if (!b->data)
			goto err;
		dma = ib_dma_map_single(ibdev, b->data, FOS_WIRE_MSG_MAX, dir);
		if (ib_dma_mapping_error(ibdev, dma))
			goto err;
		b->dma = dma;
	}
	return bufs;

err:
	fos_bufs_free(conn, bufs, dir);
	return NULL;
}

/* A fatal QP event, in process context: the connection ends. */
static void fos_qp_event_work(struct work_struct *work)
{
	struct fos_conn *conn = container_of(work, struct fos_conn,
					     qp_event_work);

	pr_warn_ratelimited("fractos: node %u: QP event %s\n",
			    conn->peer->node_id,
			    ib_event_msg(READ_ONCE(conn->qp_event)));
	fos_conn_fail(conn);
}

/*
 * Drivers may call this from hard IRQ (mlx4 does): it takes no lock of
 * ours.  rdma_notify() is IRQ-safe; anything else is deferred.
 */
static void fos_qp_event(struct ib_event *ev, void *ctx)
{
	struct fos_conn *conn = ctx;

	if (ev->event == IB_EVENT_COMM_EST) {
		rdma_notify(conn->id, IB_EVENT_COMM_EST);
		return;
	}
	WRITE_ONCE(conn->qp_event, ev->event);
	queue_work(system_wq, &conn->qp_event_work);
}

/* Take a device for @conn.  Fails if it is unknown or going away. */
static int fos_conn_attach_dev(struct fos_conn *conn, struct ib_device *ibdev)
{
	struct fos_ibdev *d;
	int ret = -ENODEV;

	spin_lock(&fos_conns_lock);
	list_for_each_entry(d, &fos_devs, link) {
		if (d->ibdev != ibdev || d->dying)
			continue;
		conn->dev = d;
		d->nconns++;
		ret = 0;
		break;
	}
	spin_unlock(&fos_conns_lock);
	return ret;
}

void fos_dev_put(struct fos_ibdev *d)
{
	spin_lock(&fos_conns_lock);
	if (!--d->nconns)
		wake_up_all(&fos_dev_wq);
	spin_unlock(&fos_conns_lock);
}

/*
 * Create the CQ, the QP and the buffers and post every receive buffer,
 * unless the connection is already closing.  On failure, what was made is
 * released by fos_conn_close_work().
 */
static int __fos_conn_setup(struct fos_conn *conn, struct ib_device *ibdev)
{
	struct ib_qp_init_attr qa = {};
	bool closing;
	u32 i;
	int ret;

	spin_lock(&conn->lock);
	closing = conn->state == FOS_CONN_CLOSING;
	spin_unlock(&conn->lock);
	if (closing)
		return -ECONNABORTED;
	ret = fos_conn_attach_dev(conn, ibdev);
	if (ret)
		return ret;
	conn->pd = fos_pd_alloc(conn->dev);
	if (IS_ERR(conn->pd)) {
		ret = PTR_ERR(conn->pd);
		conn->pd = NULL;
		return ret;
	}
	conn->rx = fos_bufs_alloc(conn, DMA_FROM_DEVICE, fos_rx_done);
	conn->tx = fos_bufs_alloc(conn, DMA_TO_DEVICE, fos_tx_done);
	if (!conn->rx || !conn->tx)
		return -ENOMEM;
	for (i = 0; i < conn->nbufs; i++)
		list_add_tail(&conn->tx[i].free, &conn->tx_free);

	conn->cq = ib_alloc_cq(ibdev, conn, 2 * conn->nbufs + 2 + FOS_RDMA_SQ,
			       0, IB_POLL_WORKQUEUE);
	if (IS_ERR(conn->cq)) {
		ret = PTR_ERR(conn->cq);
		conn->cq = NULL;
		return ret;
	}
	qa.event_handler = fos_qp_event;
	qa.qp_context = conn;
	qa.send_cq = conn->cq;
	qa.recv_cq = conn->cq;
	/* One more of each for ib_drain_qp(); RDMA READs and REG_MRs. */
	qa.cap.max_send_wr = conn->nbufs + 1 + FOS_RDMA_SQ;
	qa.cap.max_recv_wr = conn->nbufs + 1;
	qa.cap.max_send_sge = clamp_t(u32, ibdev->attrs.max_send_sge, 1,
				      FOS_RDMA_SGE);
	qa.cap.max_recv_sge = 1;
	qa.sq_sig_type = IB_SIGNAL_REQ_WR;
	qa.qp_type = IB_QPT_RC;
	ret = rdma_create_qp(conn->id, conn->pd->pd, &qa);
	if (ret)
		return ret;
	conn->qp_created = true;

	for (i = 0; i < conn->nbufs; i++) {
		ret = fos_post_recv(conn, &conn->rx[i]);
		if (ret)
			return ret;
	}
	return 0;
}

static int fos_conn_setup(struct fos_conn *conn, struct ib_device *ibdev)
{
	int ret;

	mutex_lock(&conn->setup_mutex);
	ret = __fos_conn_setup(conn, ibdev);
	mutex_unlock(&conn->setup_mutex);
	return ret;
}

static void fos_hello_fill(struct fos_wire_hello *h, struct fos_conn *conn,
			   u32 dst)
{
	memset(h, 0, sizeof(*h));
	h->magic = cpu_to_le32(FOS_WIRE_MAGIC);
	h->version = FOS_WIRE_VERSION;
	h->credits = cpu_to_le16(conn->nbufs);
	h->node_id = cpu_to_le32(fos_node_id);
	h->epoch = cpu_to_le32(fos_epoch);
	h->dst_node_id = cpu_to_le32(dst);
	h->msg_size = cpu_to_le32(FOS_WIRE_MSG_MAX);
	h->key_id = cpu_to_le32(fos_auth_key_id(conn->auth_key));
	h->alt_key_id = cpu_to_le32(conn->auth_alt_id);
	if (conn->auth_mode == FRACTOS_AUTH_INSECURE)
		h->flags = FOS_WIRE_HELLO_INSECURE;
	get_random_bytes(h->nonce, sizeof(h->nonce));
}

/* Record what the peer said in its (validated) hello. */
static void fos_conn_take_hello(struct fos_conn *conn,
				const struct fos_wire_hello *h)
{
	conn->tx_credits = le16_to_cpu(h->credits);
	conn->tx_credits_max = conn->tx_credits;
	conn->tx_max = min_t(u32, le32_to_cpu(h->msg_size), FOS_WIRE_MSG_MAX);
	conn->peer_epoch = le32_to_cpu(h->epoch);
}

/*
 * The peer spoke with @epoch.  If it had another one, it restarted: the
 * old incarnation is dead, and so is any connection to it.
 */
static void fos_peer_set_epoch(struct fos_peer *peer, u32 epoch)
{
	u32 old;

	spin_lock(&peer->lock);
	old = peer->epoch;
	peer->epoch = epoch;
	/*
	 * Failed under peer->lock: once it is unlocked, the connection's
	 * close work may clear peer->conn and free it.
	 */
	if (old && old != epoch && peer->conn &&
	    peer->conn->peer_epoch != epoch)
		fos_conn_fail(peer->conn);
	spin_unlock(&peer->lock);
	if (!old || old == epoch)
		return;
	fos_stat_add(peer, FRACTOS_STAT_EPOCH_CHANGES, 1);
	pr_info("fractos: node %u restarted (epoch %#x -> %#x)\n",
		peer->node_id, old, epoch);
	fos_remote_node_down(peer->node_id, old);
}

static struct fos_conn *fos_conn_alloc(struct fos_peer *peer, bool active)
{
	struct fos_conn *conn;

	conn = kzalloc(sizeof(*conn), GFP_KERNEL);
	if (!conn)
		return NULL;
	kref_get(&peer->ref);
	conn->peer = peer;
	conn->active = active;
	conn->primary = active || peer->node_id != fos_node_id;
	spin_lock_init(&conn->lock);
	conn->state = FOS_CONN_CONNECTING;
	conn->nbufs = clamp(READ_ONCE(fos_fabric_ring), FOS_WIRE_CREDITS_MIN,
			    FOS_WIRE_CREDITS_MAX);
	INIT_LIST_HEAD(&conn->tx_free);
	INIT_LIST_HEAD(&conn->backlog);
	INIT_LIST_HEAD(&conn->link);
	mutex_init(&conn->setup_mutex);
	INIT_WORK(&conn->qp_event_work, fos_qp_event_work);
	conn->born = jiffies;
	fos_live_add(FOS_LIVE_CONNS, 1);
	return conn;
}

static void fos_conn_close_work(struct work_struct *work);

/*
 * Make @conn known (fos_conns, and the peer's in/out slot), unless the
 * peer is gone.  From here on it is destroyed by fos_conn_close_work() only.
 */
static int fos_conn_publish(struct fos_conn *conn)
{
	struct fos_peer *peer = conn->peer;
	int ret = 0;

	INIT_WORK(&conn->close_work, fos_conn_close_work);
	spin_lock(&fos_conns_lock);
	spin_lock(&peer->lock);
	if (peer->deleted) {
		ret = -ENOENT;
	} else if (conn->active) {
		if (peer->out)
			ret = -EBUSY;
		else
			peer->out = conn;
	}
	/* A passive connection takes peer->in when it is admitted. */
	spin_unlock(&peer->lock);
	if (!ret)
		list_add_tail(&conn->link, &fos_conns);
	spin_unlock(&fos_conns_lock);
	return ret;
}

/* Free an unpublished connection that has no cm_id of its own. */
static void fos_conn_free_unpublished(struct fos_conn *conn)
{
	fos_auth_put(conn->auth_key);
	fos_peer_put(conn->peer);
	kfree(conn);
	fos_live_add(FOS_LIVE_CONNS, -1);
}

/* The connection is gone: what still waits for a credit never goes. */
static void fos_conn_drop_backlog(struct fos_conn *conn)
{
	struct fos_pending *p, *tmp;

	list_for_each_entry_safe(p, tmp, &conn->backlog, link) {
		if (p->done)
			p->done->fn(p->done, -ECONNRESET);
		kfree(p);
	}
	INIT_LIST_HEAD(&conn->backlog);
	conn->nbacklog = 0;
}

/*
 * What a connection that was up looked like when it ended: its flow
 * control and the PSNs of its QP, to tell a stalled peer from a stalled
 * link.  Called from fos_conn_close_work() before the QP goes.
 */
static void fos_conn_report(struct fos_conn *conn)
{
	u32 credits, max, owed, nbacklog, rdma, in_flight;
	unsigned long now = jiffies, rx, tx;
	struct ib_qp_init_attr init;
	struct ib_qp_attr qa = {};
	int qp_state = -1;

	spin_lock(&conn->lock);
	in_flight = conn->sends;
	credits = conn->tx_credits;
	max = conn->tx_credits_max;
	owed = conn->owed;
	nbacklog = conn->nbacklog;
	rdma = conn->rdma_wrs;
	spin_unlock(&conn->lock);
	rx = READ_ONCE(conn->last_rx);
	tx = READ_ONCE(conn->last_tx);
	if (!ib_query_qp(conn->id->qp, &qa,
			 IB_QP_STATE | IB_QP_SQ_PSN | IB_QP_RQ_PSN, &init))
		qp_state = qa.qp_state;
	pr_info_ratelimited("fractos: node %u: connection ends: credits %u/%u, owed %u, sends in flight %u, backlog %u, rdma %u, last rx %u ms ago, last tx %u ms ago; qp %u state %d sq_psn %u rq_psn %u\n",
			    conn->peer->node_id, credits, max, owed, in_flight,
			    nbacklog, rdma, jiffies_to_msecs(now - rx),
			    jiffies_to_msecs(now - tx), conn->id->qp->qp_num,
			    qp_state, qa.sq_psn, qa.rq_psn);
}

static void fos_conn_close_work(struct work_struct *work)
{
	struct fos_conn *conn = container_of(work, struct fos_conn, close_work);
	struct fos_peer *peer = conn->peer;
	struct fos_ibdev *dev;
	bool was_conn;

	spin_lock(&peer->lock);
	was_conn = peer->conn == conn;
	if (was_conn)
		peer->conn = NULL;
	if (peer->in == conn)
		peer->in = NULL;
	if (peer->out == conn)
		peer->out = NULL;
	spin_unlock(&peer->lock);
	wake_up_all(&peer->wq);

	/* A setup in an rdma_cm handler finishes first; none starts after. */
	mutex_lock(&conn->setup_mutex);
	mutex_unlock(&conn->setup_mutex);
	if (conn->qp_created) {
		trace_fos_conn_state(peer->node_id, conn->id->qp->qp_num,
				     conn->peer_epoch, FOS_TRACE_CONN_DOWN,
				     conn->was_up);
		if (conn->was_up)
			fos_conn_report(conn);
		rdma_disconnect(conn->id);
		/* Every outstanding completion runs before this returns. */
		ib_drain_qp(conn->id->qp);
		rdma_destroy_qp(conn->id);
		/* No QP event after the QP; none deferred either. */
		cancel_work_sync(&conn->qp_event_work);
	}
	if (conn->cq)
		ib_free_cq(conn->cq);
	rdma_destroy_id(conn->id);
	fos_conn_drop_backlog(conn);
	if (conn->dev) {
		fos_bufs_free(conn, conn->rx, DMA_FROM_DEVICE);
		fos_bufs_free(conn, conn->tx, DMA_TO_DEVICE);
	}
	/* Regions registered for the peer may keep it a while longer. */
	if (conn->pd)
		fos_pd_put(conn->pd);

	spin_lock(&fos_conns_lock);
	list_del(&conn->link);
	dev = conn->dev;
	if (dev && !--dev->nconns)
		wake_up_all(&fos_dev_wq);
	spin_unlock(&fos_conns_lock);
	fos_auth_put(conn->auth_key);

	/* Whoever failed to prove being @peer changes nothing about it. */
	if (!conn->active && !conn->admitted) {
		if (conn->admitting)
			atomic_dec(&fos_admitting);
		goto out;
	}
	fos_stat_add(peer, conn->was_up ? FRACTOS_STAT_DISCONNECTS :
		     FRACTOS_STAT_CONNECT_ERRORS, 1);
	if (conn->was_up && conn->primary) {
		pr_info("fractos: node %u down\n", peer->node_id);
		fos_remote_node_down(peer->node_id, conn->peer_epoch);
	}

	spin_lock(&peer->lock);
	if (conn->primary && !peer->conn) {
		if (fos_peer_initiator(peer->node_id))
			fos_peer_backoff_locked(peer);
		else
			peer->state = FRACTOS_NODE_WAITING;
	}
	spin_unlock(&peer->lock);
out:
	fos_peer_put(peer);
	kfree(conn);
	fos_live_add(FOS_LIVE_CONNS, -1);
}

static int fos_conn_post_now(struct fos_conn *conn, u8 type, u64 cookie,
			     const void *payload, u32 len,
			     struct fos_fabric_done *done, bool ctrl);

/*
 * @conn is admitted and goes up.  @auth: the initiator's AUTH, which goes
 * out before anything else can (the active end), or NULL.
 */
static void fos_conn_established(struct fos_conn *conn,
				 const struct fos_wire_auth *auth)
{
	struct fos_peer *peer = conn->peer;
	bool up = false;

	spin_lock(&peer->lock);
	spin_lock(&conn->lock);
	if (!peer->deleted && conn->state == FOS_CONN_CONNECTING) {
		conn->state = FOS_CONN_UP;
		conn->last_rx = jiffies;
		conn->last_tx = jiffies;
		up = !auth || !fos_conn_post_now(conn, FOS_WIRE_AUTH, 0, auth,
						 sizeof(*auth), NULL, true);
		conn->was_up = up;
	}
	spin_unlock(&conn->lock);
	if (up && conn->primary) {
		/* Failed under peer->lock, which keeps it allocated. */
		if (peer->conn && peer->conn != conn)
			fos_conn_fail(peer->conn);
		peer->conn = conn;
		peer->state = FRACTOS_NODE_UP;
		peer->backoff_ms = FOS_BACKOFF_MIN_MS;
	}
	spin_unlock(&peer->lock);

	if (!up) {
		fos_conn_fail(conn);
		return;
	}
	trace_fos_conn_state(peer->node_id, conn->id->qp->qp_num,
			     conn->peer_epoch, FOS_TRACE_CONN_UP, conn->primary);
	fos_stat_add(peer, FRACTOS_STAT_CONNECTS, 1);
	if (conn->primary)
		pr_info("fractos: node %u up (epoch %#x, qp %u, %s, %s)\n",
			peer->node_id, conn->peer_epoch, conn->id->qp->qp_num,
			dev_name(&conn->dev->ibdev->dev),
			conn->auth_key ? "authenticated" : "INSECURE");
	wake_up_all(&peer->wq);
}

/* ---- sending ---- */

/* A WR is about to count as in flight.  Caller holds conn->lock. */
void fos_conn_sq_posted(struct fos_conn *conn)
{
	if (!conn->sends && !conn->rdma_wrs)
		conn->sq_progress = jiffies;
}

/*
 * A send-queue WR completed (and no longer counts).  Caller holds
 * conn->lock.  Return: posting had stopped for a stall and may resume.
 */
bool fos_conn_sq_done(struct fos_conn *conn)
{
	bool was_quiet = conn->quiet;

	conn->sq_progress = jiffies;
	conn->quiet = false;
	return was_quiet;
}

/*
 * From the heartbeat: stop posting on a send queue that has WRs in flight
 * and has completed none for FOS_SQ_STALL_MS (see "Send-queue stalls").
 */
static void fos_conn_check_stall(struct fos_conn *conn, unsigned long now)
{
	unsigned long since;
	bool stalled;

	spin_lock(&conn->lock);
	since = conn->sq_progress;
	stalled = !conn->quiet && (conn->sends || conn->rdma_wrs) &&
		  time_after(now, since + msecs_to_jiffies(FOS_SQ_STALL_MS));
	if (stalled)
		conn->quiet = true;
	spin_unlock(&conn->lock);
	if (!stalled)
		return;
	fos_stat_add(conn->peer, FRACTOS_STAT_TX_STALLS, 1);
	pr_info_ratelimited("fractos: node %u: no send completion for %u ms, sends paused until one\n",
			    conn->peer->node_id, jiffies_to_msecs(now - since));
}

/*
 * Post one message on @conn now.  Caller holds conn->lock.  @ctrl messages
 * (CREDIT, HEARTBEAT) may spend the last credit.
 */
static int fos_conn_post_now(struct fos_conn *conn, u8 type, u64 cookie,
			     const void *payload, u32 len,
			     struct fos_fabric_done *done, bool ctrl)
{
	struct fos_wire_hdr *hdr;
	struct fos_buf *b;
	struct ib_sge sge;
	struct ib_send_wr wr = {};
	u32 total = sizeof(*hdr) + len;
	u32 owed = conn->owed;
	int ret;

	if (conn->state != FOS_CONN_UP)
		return -ENOTCONN;
	if (total > conn->tx_max)
		return -EMSGSIZE;
	/*
	 * The last credit is for a message that returns credits: then the
	 * peer can always answer, and the two ends never both run dry.
	 */
	if (conn->tx_credits < (ctrl && owed ? 1 : 2) ||
	    list_empty(&conn->tx_free) || conn->quiet)
		return -EAGAIN;
	b = list_first_entry(&conn->tx_free, struct fos_buf, free);

	hdr = b->data;
	hdr->version = FOS_WIRE_VERSION;
	hdr->type = type;
	hdr->credits = cpu_to_le16(owed);
	hdr->len = cpu_to_le32(len);
	hdr->cookie = cpu_to_le64(cookie);
	if (len)
		memcpy(hdr + 1, payload, len);
	ib_dma_sync_single_for_device(conn->dev->ibdev, b->dma, total,
				      DMA_TO_DEVICE);

	sge.addr = b->dma;
	sge.length = total;
	sge.lkey = conn->pd->pd->local_dma_lkey;
	wr.wr_cqe = &b->cqe;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	b->done = done;
	ret = ib_post_send(conn->id->qp, &wr, NULL);
	if (ret) {
		b->done = NULL;
		return ret;
	}
	list_del_init(&b->free);
	fos_conn_sq_posted(conn);
	conn->sends++;
	conn->tx_credits--;
	conn->owed -= owed;
	conn->last_tx = jiffies;
	fos_stat_add(conn->peer, FRACTOS_STAT_TX_MSGS, 1);
	fos_stat_add(conn->peer, FRACTOS_STAT_TX_BYTES, total);
	return 0;
}

/* As fos_conn_post_now(), but messages do not overtake the backlog. */
static int fos_conn_post(struct fos_conn *conn, u8 type, u64 cookie,
			 const void *payload, u32 len,
			 struct fos_fabric_done *done, bool ctrl)
{
	if (!ctrl && conn->nbacklog && conn->state == FOS_CONN_UP)
		return -EAGAIN;
	return fos_conn_post_now(conn, type, cookie, payload, len, done, ctrl);
}

/* Queue a message that found no credit.  Caller holds conn->lock. */
static int fos_conn_queue(struct fos_conn *conn, u8 type, u64 cookie,
			  const void *payload, u32 len,
			  struct fos_fabric_done *done)
{
	struct fos_pending *p;

	if (conn->nbacklog >= conn->nbufs)
		return -EAGAIN;
	p = kmalloc(struct_size(p, payload, len), GFP_ATOMIC);
	if (!p)
		return -ENOMEM;
	p->type = type;
	p->cookie = cookie;
	p->done = done;
	p->len = len;
	if (len)
		memcpy(p->payload, payload, len);
	list_add_tail(&p->link, &conn->backlog);
	conn->nbacklog++;
	return 0;
}

/* Send what the backlog holds, as far as credits allow. */
void fos_conn_flush(struct fos_conn *conn)
{
	struct fos_pending *p;
	int ret = 0;

	spin_lock(&conn->lock);
	while (conn->nbacklog) {
		p = list_first_entry(&conn->backlog, struct fos_pending, link);
		ret = fos_conn_post_now(conn, p->type, p->cookie, p->payload,
					p->len, p->done, false);
		if (ret)
			break;
		list_del(&p->link);
		conn->nbacklog--;
		kfree(p);
	}
	spin_unlock(&conn->lock);
	if (ret && ret != -EAGAIN && ret != -ENOTCONN)
		fos_conn_fail_err(conn, "send", ret);
}

/* A CREDIT or HEARTBEAT on @conn; dropped if it cannot go now. */
static void fos_conn_send_ctrl(struct fos_conn *conn, u8 type)
{
	int ret;

	spin_lock(&conn->lock);
	if (type == FOS_WIRE_CREDIT && !conn->owed)
		ret = 0;
	else
		ret = fos_conn_post(conn, type, 0, NULL, 0, NULL, true);
	spin_unlock(&conn->lock);
	if (ret && ret != -EAGAIN && ret != -ENOTCONN)
		fos_conn_fail_err(conn, "send", ret);
}

static int fos_peer_try_send(struct fos_peer *peer, u8 type, u64 cookie,
			     const void *payload, u32 len,
			     struct fos_fabric_done *done, unsigned int flags)
{
	struct fos_conn *conn;
	bool queued = false;
	int ret;

	spin_lock(&peer->lock);
	conn = peer->conn;
	if (!conn) {
		ret = -ENOTCONN;
	} else {
		spin_lock(&conn->lock);
		ret = fos_conn_post(conn, type, cookie, payload, len, done,
				    false);
		if (ret == -EAGAIN && (flags & FOS_SEND_QUEUE)) {
			fos_stat_add(peer, FRACTOS_STAT_NO_CREDITS, 1);
			ret = fos_conn_queue(conn, type, cookie, payload, len,
					     done);
			queued = true;
		}
		spin_unlock(&conn->lock);
		if (ret && ret != -EAGAIN && ret != -ENOTCONN &&
		    ret != -EMSGSIZE)
			fos_conn_fail_err(conn, "send", ret);
	}
	spin_unlock(&peer->lock);
	if (ret == -EAGAIN && !queued)
		fos_stat_add(peer, FRACTOS_STAT_NO_CREDITS, 1);
	return ret;
}

/*
 * A wait condition of a sender on peer->wq: @room holds for @peer's
 * connection (called under its lock), or waiting has become pointless
 * (no connection, or not up).
 */
static bool fos_peer_can_go(struct fos_peer *peer,
			    bool (*room)(const struct fos_conn *conn))
{
	struct fos_conn *conn;
	bool ok = true;

	spin_lock(&peer->lock);
	conn = peer->conn;
	if (conn) {
		spin_lock(&conn->lock);
		ok = conn->state != FOS_CONN_UP || room(conn);
		spin_unlock(&conn->lock);
	}
	spin_unlock(&peer->lock);
	return ok;
}

/*
 * A message could go out now (a credit to spare, a buffer, no backlog, no
 * stall).
 */
static bool fos_conn_sendable(const struct fos_conn *conn)
{
	return conn->tx_credits >= 2 && !list_empty(&conn->tx_free) &&
	       !conn->nbacklog && !conn->quiet;
}

/**
 * fos_fabric_send - send one message to a peer
 * @peer: the peer
 * @type: enum fos_wire_type
 * @cookie: goes into the header as is
 * @payload: @len bytes, copied before the function returns
 * @len: payload length; header included, at most the peer's buffer size
 * @done: called when the send completes, or NULL
 * @flags: FOS_SEND_WAIT to sleep for a credit (process context only), or
 *	FOS_SEND_QUEUE to queue the message behind the others that wait for
 *	one (any context; the backlog holds up to fabric_ring messages)
 *
 * Messages to one peer arrive in the order they were sent, or not at all
 * (the connection fails; the peer's handlers see no gap in between).
 *
 * Return: 0 (sent or queued; @done will be called), -ENOTCONN (the peer is
 * not up), -EAGAIN (no credit, the backlog is full, or the send queue
 * stalled), -ETIMEDOUT,
 * -ERESTARTSYS, -EMSGSIZE, -ENOMEM, or another error from the QP.
 */
int fos_fabric_send(struct fos_peer *peer, u8 type, u64 cookie,
		    const void *payload, u32 len, struct fos_fabric_done *done,
		    unsigned int flags)
{
	long left = FOS_SEND_TIMEOUT;
	int ret;

	if (flags & FOS_SEND_WAIT)
		might_sleep();
	if (WARN_ON_ONCE(!type || type >= FOS_WIRE_NR))
		return -EINVAL;
	if (len > FOS_WIRE_MSG_MAX)
		return -EMSGSIZE;
	for (;;) {
		ret = fos_peer_try_send(peer, type, cookie, payload, len, done,
					flags);
		if (ret != -EAGAIN || !(flags & FOS_SEND_WAIT))
			return ret;
		left = wait_event_interruptible_timeout(peer->wq,
							fos_peer_can_go(peer, fos_conn_sendable),
							left);
		if (left < 0)
			return left;
		if (!left)
			return -ETIMEDOUT;
	}
}

/* ---- completions ---- */

void fos_wc_error(struct fos_conn *conn, struct ib_wc *wc, const char *what)
{
	if (wc->status != IB_WC_WR_FLUSH_ERR)
		pr_warn_ratelimited("fractos: node %u: %s failed: %s\n",
				    conn->peer->node_id, what,
				    ib_wc_status_msg(wc->status));
	fos_conn_fail(conn);
}

static void fos_proto_error(struct fos_conn *conn, const char *why)
{
	trace_fos_proto_error(conn->peer->node_id, why);
	fos_stat_add(conn->peer, FRACTOS_STAT_PROTO_ERRORS, 1);
	pr_warn_ratelimited("fractos: node %u: protocol error: %s\n",
			    conn->peer->node_id, why);
	fos_conn_fail(conn);
}

static void fos_auth_failed(struct fos_conn *conn, const char *why)
{
	trace_fos_conn_state(conn->peer->node_id, 0, conn->peer_epoch,
			     FOS_TRACE_CONN_AUTH_FAIL, 0);
	fos_stat_add(NULL, FRACTOS_STAT_AUTH_FAILURES, 1);
	pr_warn_ratelimited("fractos: connection from %pISc as node %u: authentication failed: %s\n",
			    &conn->id->route.addr.dst_addr,
			    conn->peer->node_id, why);
	fos_conn_fail(conn);
}

/*
 * The first message on a passive connection: the initiator's AUTH.  If it
 * verifies, the connection is admitted: it takes the peer's incoming slot
 * (ending the connection it replaces), the peer's epoch is updated, and
 * the connection goes up.  Anything else ends it.
 *
 * Return: @hdr may be served (it is the AUTH that admitted @conn).
 */
static bool fos_conn_admit(struct fos_conn *conn,
			   const struct fos_wire_hdr *hdr)
{
	const struct fos_wire_auth *auth = (const void *)(hdr + 1);
	struct fos_auth_transcript t = {
		.init = &conn->hello_init, .resp = &conn->hello_resp,
	};
	struct fos_peer *peer = conn->peer;
	bool again = false;

	if (conn->admitted) {
		fos_proto_error(conn, "a second auth");
		return false;
	}
	if (hdr->type != FOS_WIRE_AUTH) {
		fos_auth_failed(conn, "no auth first");
		return false;
	}
	if (!fos_auth_verify(conn->auth_key, FOS_AUTH_INITIATOR, &t, auth->mac)) {
		fos_auth_failed(conn, "wrong mac");
		return false;
	}
	conn->admitted = true;
	if (conn->admitting) {
		conn->admitting = false;
		atomic_dec(&fos_admitting);
	}

	spin_lock(&peer->lock);
	if (peer->in && peer->in != conn) {
		/*
		 * Failed while peer->lock still keeps it: its close work
		 * frees it once it no longer finds it in peer->in.
		 */
		again = READ_ONCE(peer->in->state) != FOS_CONN_CLOSING;
		fos_conn_fail(peer->in);
	}
	peer->in = conn;
	spin_unlock(&peer->lock);
	if (again)
		pr_info("fractos: node %u connects again; its old connection ends\n",
			peer->node_id);
	fos_peer_set_epoch(peer, conn->peer_epoch);
	fos_conn_established(conn, NULL);
	return true;
}

static void fos_rx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct fos_buf *b = container_of(wc->wr_cqe, struct fos_buf, cqe);
	struct fos_conn *conn = b->conn;
	struct fos_peer *peer = conn->peer;
	const struct fos_msg_type *t;
	struct fos_wire_hdr *hdr = b->data;
	u32 credits, len, owed;
	bool bad_credits, auth;
	int ret;

	if (wc->status != IB_WC_SUCCESS) {
		fos_wc_error(conn, wc, "receive");
		return;
	}
	ib_dma_sync_single_for_cpu(conn->dev->ibdev, b->dma, FOS_WIRE_MSG_MAX,
				   DMA_FROM_DEVICE);
	if (fos_wire_check(hdr, wc->byte_len)) {
		fos_proto_error(conn, "bad header");
		return;
	}
	t = &fos_msg_types[hdr->type];
	len = le32_to_cpu(hdr->len);
	if (t->check(hdr + 1, len)) {
		fos_proto_error(conn, t->name);
		return;
	}
	auth = hdr->type == FOS_WIRE_AUTH;
	if (unlikely(!conn->admitted || auth) && !fos_conn_admit(conn, hdr))
		return;

	credits = le16_to_cpu(hdr->credits);
	spin_lock(&conn->lock);
	bad_credits = conn->tx_credits + credits > conn->tx_credits_max;
	if (!bad_credits)
		conn->tx_credits += credits;
	spin_unlock(&conn->lock);
	if (bad_credits) {
		fos_proto_error(conn, "too many credits");
		return;
	}
	if (credits) {
		fos_conn_flush(conn);
		wake_up_all(&peer->wq);
	}
	WRITE_ONCE(conn->last_rx, jiffies);
	fos_stat_add(peer, FRACTOS_STAT_RX_MSGS, 1);
	fos_stat_add(peer, FRACTOS_STAT_RX_BYTES, wc->byte_len);

	if (t->recv)
		t->recv(peer, hdr, hdr + 1, len);

	if (READ_ONCE(conn->state) == FOS_CONN_CLOSING)
		return;
	/* A credit is returned only for a buffer that is posted again. */
	ret = fos_post_recv(conn, b);
	if (ret) {
		fos_conn_fail_err(conn, "receive post", ret);
		return;
	}
	spin_lock(&conn->lock);
	if (t->held && conn->held < conn->nbufs / 2) {
		conn->held++;
		owed = 0;
	} else {
		owed = ++conn->owed;
	}
	spin_unlock(&conn->lock);
	fos_conn_credit_check(conn, owed, auth);
}

/*
 * @owed credits are owed to the peer: send them in a CREDIT once there
 * are enough.  At least two: a CREDIT consumes a buffer too, and
 * answering each one with another would never stop.  @now: the AUTH's
 * credit goes back at once (an admitted connection starts with all its
 * credits).
 */
static void fos_conn_credit_check(struct fos_conn *conn, u32 owed, bool now)
{
	if (owed >= max(conn->nbufs / 4, 2U) || (now && owed))
		fos_conn_send_ctrl(conn, FOS_WIRE_CREDIT);
}

/**
 * fos_fabric_credit_done - a request with a held credit was served
 * @peer: the peer that sent it
 *
 * DOC: Held credits
 *
 * COPY, GRANT and LOOKUP are served in process context, after their
 * receive buffer was posted again.  Their credit is not returned then but
 * held, at most half of the ring per connection, until the handler says
 * the request was served: a peer cannot have more requests waiting here
 * than credits it gave up, and the other half of the ring stays free for
 * the answers the work itself may need (a COPY served here waits for the
 * peer's GRANT_REPLY).  Each such request calls this once, whatever the
 * outcome; a call that finds no held credit on the peer's connection (it
 * is new, or the request's credit was not held) changes nothing.
 */
void fos_fabric_credit_done(struct fos_peer *peer)
{
	struct fos_conn *conn;
	u32 owed = 0;

	spin_lock(&peer->lock);
	conn = fos_peer_serving_locked(peer);
	if (conn) {
		spin_lock(&conn->lock);
		if (conn->held && conn->state == FOS_CONN_UP) {
			conn->held--;
			owed = ++conn->owed;
		}
		spin_unlock(&conn->lock);
		fos_conn_credit_check(conn, owed, false);
	}
	spin_unlock(&peer->lock);
}

static void fos_tx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct fos_buf *b = container_of(wc->wr_cqe, struct fos_buf, cqe);
	struct fos_conn *conn = b->conn;
	struct fos_fabric_done *done = b->done;

	b->done = NULL;
	spin_lock(&conn->lock);
	list_add_tail(&b->free, &conn->tx_free);
	conn->sends--;
	fos_conn_sq_done(conn);
	spin_unlock(&conn->lock);
	if (done)
		done->fn(done, wc->status == IB_WC_SUCCESS ? 0 : -ECOMM);
	if (wc->status != IB_WC_SUCCESS)
		fos_wc_error(conn, wc, "send");
	else
		fos_conn_flush(conn);
	wake_up_all(&conn->peer->wq);
}

/* ---- rdma_cm ---- */

static void fos_conn_param(struct rdma_conn_param *p, struct fos_conn *conn,
			   const void *priv, u8 len)
{
	const struct ib_device_attr *a = &conn->dev->ibdev->attrs;

	memset(p, 0, sizeof(*p));
	p->private_data = priv;
	p->private_data_len = len;
	/* Room for RDMA READs, which remote memory_copy will use. */
	p->responder_resources = min_t(u32, FOS_RDMA_DEPTH, a->max_qp_rd_atom);
	p->initiator_depth = min_t(u32, FOS_RDMA_DEPTH, a->max_qp_init_rd_atom);
	p->retry_count = 7;
	p->rnr_retry_count = 7;
}

/* FRACTOS_STAT_REFUSED_* by enum fos_wire_rej_reason. */
static const u8 fos_rej_stat[FOS_WIRE_REJ_NR] = {
	[FOS_WIRE_REJ_MALFORMED] = FRACTOS_STAT_REFUSED_MALFORMED,
	[FOS_WIRE_REJ_VERSION] = FRACTOS_STAT_REFUSED_VERSION,
	[FOS_WIRE_REJ_UNKNOWN_NODE] = FRACTOS_STAT_REFUSED_UNKNOWN,
	[FOS_WIRE_REJ_WRONG_NODE] = FRACTOS_STAT_REFUSED_WRONG_NODE,
	[FOS_WIRE_REJ_NOT_INITIATOR] = FRACTOS_STAT_REFUSED_INITIATOR,
	[FOS_WIRE_REJ_RESOURCES] = FRACTOS_STAT_REFUSED_RESOURCES,
	[FOS_WIRE_REJ_AUTH] = FRACTOS_STAT_REFUSED_AUTH,
	[FOS_WIRE_REJ_ADDRESS] = FRACTOS_STAT_REFUSED_ADDRESS,
	[FOS_WIRE_REJ_BUSY] = FRACTOS_STAT_REFUSED_BUSY,
};

static const char *const fos_rej_name[FOS_WIRE_REJ_NR] = {
	[FOS_WIRE_REJ_MALFORMED] = "malformed hello",
	[FOS_WIRE_REJ_VERSION] = "another wire version",
	[FOS_WIRE_REJ_UNKNOWN_NODE] = "unknown node",
	[FOS_WIRE_REJ_WRONG_NODE] = "meant for another node",
	[FOS_WIRE_REJ_NOT_INITIATOR] = "we connect to that node",
	[FOS_WIRE_REJ_RESOURCES] = "no resources",
	[FOS_WIRE_REJ_AUTH] = "no shared secret",
	[FOS_WIRE_REJ_ADDRESS] = "not the node's address",
	[FOS_WIRE_REJ_BUSY] = "too many admissions",
};

static void fos_refused(struct rdma_cm_id *id, u32 node, int reason)
{
	struct fos_wire_reject rej = {
		.magic = cpu_to_le32(FOS_WIRE_MAGIC),
		.version = FOS_WIRE_VERSION,
		.reason = reason,
		.node_id = cpu_to_le32(fos_node_id),
	};

	trace_fos_conn_state(node, 0, 0, FOS_TRACE_CONN_REFUSED, reason);
	fos_stat_add(NULL, FRACTOS_STAT_REFUSED, 1);
	fos_stat_add(NULL, fos_rej_stat[reason], 1);
	pr_warn_ratelimited("fractos: refused connection from node %u at %pISpc: %s\n",
			    node, &id->route.addr.dst_addr,
			    fos_rej_name[reason]);
	rdma_reject(id, &rej, sizeof(rej), IB_CM_REJ_CONSUMER_DEFINED);
}

/* @a and @b are the same host (address; ports and scopes are not compared). */
static bool fos_addr_same_host(const struct sockaddr *a,
			       const struct sockaddr *b)
{
	const struct sockaddr_in6 *a6 = (const void *)a, *b6 = (const void *)b;
	const struct sockaddr_in *a4 = (const void *)a, *b4 = (const void *)b;

	if (a->sa_family == AF_INET6 && b->sa_family == AF_INET &&
	    ipv6_addr_v4mapped(&a6->sin6_addr))
		return a6->sin6_addr.s6_addr32[3] == b4->sin_addr.s_addr;
	if (a->sa_family == AF_INET && b->sa_family == AF_INET6)
		return fos_addr_same_host(b, a);
	if (a->sa_family != b->sa_family)
		return false;
	if (a->sa_family == AF_INET)
		return a4->sin_addr.s_addr == b4->sin_addr.s_addr;
	return a->sa_family == AF_INET6 &&
	       ipv6_addr_equal(&a6->sin6_addr, &b6->sin6_addr);
}

/*
 * Whether a request that claims to be @peer may try to prove it: the
 * configured address, and a secret we hold (or insecure on both ends).
 * On success @conn's handshake holds the secret.
 *
 * Return: 0 or a positive enum fos_wire_rej_reason.
 */
static int fos_admission_check(struct rdma_cm_id *id, struct fos_peer *peer,
			       const struct fos_wire_hello *h,
			       struct fos_conn *conn)
{
	bool insecure = h->flags & FOS_WIRE_HELLO_INSECURE;

	if (!fos_addr_same_host((struct sockaddr *)&id->route.addr.dst_addr,
				(struct sockaddr *)&peer->addr))
		return FOS_WIRE_REJ_ADDRESS;
	conn->auth_mode = fos_auth_find(le32_to_cpu(h->key_id),
					&conn->auth_key);
	if (conn->auth_mode == FRACTOS_AUTH_SECRET && !conn->auth_key &&
	    h->alt_key_id)
		conn->auth_mode = fos_auth_find(le32_to_cpu(h->alt_key_id),
						&conn->auth_key);
	if (conn->auth_mode == FRACTOS_AUTH_INSECURE ? !insecure :
	    conn->auth_mode != FRACTOS_AUTH_SECRET || !conn->auth_key)
		return FOS_WIRE_REJ_AUTH;
	if (atomic_inc_return(&fos_admitting) > FOS_ADMIT_MAX) {
		atomic_dec(&fos_admitting);
		return FOS_WIRE_REJ_BUSY;
	}
	conn->admitting = true;
	return 0;
}

/*
 * A peer connects.  Returning non-zero makes rdma_cm destroy @id, which we
 * do only while no fos_conn owns it.  Nothing about the peer changes here:
 * the connection waits for the initiator's AUTH (fos_conn_admit()).
 */
static int fos_cm_connect_request(struct rdma_cm_id *id,
				  struct rdma_cm_event *ev)
{
	const struct fos_wire_hello *h = ev->param.conn.private_data;
	struct fos_auth_transcript t;
	struct rdma_conn_param param;
	struct fos_wire_accept acc;
	struct fos_conn *conn;
	struct fos_peer *peer;
	u32 node = 0;
	int reason;

	reason = fos_wire_check_hello(h, ev->param.conn.private_data_len);
	if (reason)
		goto refuse;
	node = le32_to_cpu(h->node_id);
	peer = fos_peer_find(node);
	if (!peer) {
		reason = FOS_WIRE_REJ_UNKNOWN_NODE;
		goto refuse;
	}
	if (le32_to_cpu(h->dst_node_id) != fos_node_id)
		reason = FOS_WIRE_REJ_WRONG_NODE;
	else if (fos_peer_initiator(node) && node != fos_node_id)
		reason = FOS_WIRE_REJ_NOT_INITIATOR;
	if (reason) {
		fos_peer_put(peer);
		goto refuse;
	}
	conn = fos_conn_alloc(peer, false);
	if (!conn) {
		fos_peer_put(peer);
		reason = FOS_WIRE_REJ_RESOURCES;
		goto refuse;
	}
	reason = fos_admission_check(id, peer, h, conn);
	fos_peer_put(peer);
	if (reason) {
		fos_conn_free_unpublished(conn);
		goto refuse;
	}
	conn->id = id;
	fos_conn_take_hello(conn, h);
	conn->hello_init = *h;
	if (fos_conn_publish(conn)) {
		if (conn->admitting)
			atomic_dec(&fos_admitting);
		fos_conn_free_unpublished(conn);
		reason = FOS_WIRE_REJ_UNKNOWN_NODE;
		goto refuse;
	}
	/* From here on, fos_conn_close_work() destroys @id. */
	id->context = conn;
	if (rdma_set_ack_timeout(id, FOS_ACK_TIMEOUT) ||
	    fos_conn_setup(conn, id->device)) {
		fos_refused(id, node, FOS_WIRE_REJ_RESOURCES);
		fos_conn_fail(conn);
		return 0;
	}
	fos_hello_fill(&acc.hello, conn, node);
	conn->hello_resp = acc.hello;
	t.init = &conn->hello_init;
	t.resp = &conn->hello_resp;
	fos_auth_mac(conn->auth_key, FOS_AUTH_ACCEPT, &t, acc.mac);
	fos_conn_param(&param, conn, &acc, sizeof(acc));
	param.responder_resources = min_t(u8, param.responder_resources,
					  ev->param.conn.initiator_depth);
	param.initiator_depth = min_t(u8, param.initiator_depth,
				      ev->param.conn.responder_resources);
	if (rdma_accept(id, &param))
		fos_conn_fail(conn);
	return 0;

refuse:
	fos_refused(id, node, reason);
	return -ECONNREFUSED;
}

static void fos_cm_route_resolved(struct fos_conn *conn)
{
	struct rdma_conn_param param;

	if (fos_conn_setup(conn, conn->id->device)) {
		fos_conn_fail(conn);
		return;
	}
	fos_hello_fill(&conn->hello_init, conn, conn->peer->node_id);
	fos_conn_param(&param, conn, &conn->hello_init,
		       sizeof(conn->hello_init));
	if (rdma_connect_locked(conn->id, &param))
		fos_conn_fail(conn);
}

/*
 * The accept proves the responder holds the secret it names in its hello,
 * one of the two that @conn offered.  Switches @conn to that secret.
 */
static bool fos_accept_verify(struct fos_conn *conn,
			      const struct fos_wire_accept *acc)
{
	struct fos_auth_transcript t = {
		.init = &conn->hello_init, .resp = &conn->hello_resp,
	};
	u32 key_id = le32_to_cpu(acc->hello.key_id);

	if (acc->hello.alt_key_id ||
	    acc->hello.flags != conn->hello_init.flags)
		return false;
	if (key_id && key_id == conn->auth_alt_id &&
	    key_id != fos_auth_key_id(conn->auth_key)) {
		fos_auth_put(conn->auth_key);
		fos_auth_find(key_id, &conn->auth_key);
	}
	return key_id == fos_auth_key_id(conn->auth_key) &&
	       fos_auth_verify(conn->auth_key, FOS_AUTH_ACCEPT, &t, acc->mac);
}

/*
 * The active side learns who answered from the accept's private data and
 * checks its proof; then it proves itself with AUTH, its first message.
 */
static void fos_cm_active_established(struct fos_conn *conn,
				      struct rdma_cm_event *ev)
{
	const struct fos_wire_accept *acc = ev->param.conn.private_data;
	struct fos_auth_transcript t = {
		.init = &conn->hello_init, .resp = &conn->hello_resp,
	};
	struct fos_peer *peer = conn->peer;
	struct fos_wire_auth auth;

	if (ev->param.conn.private_data_len < sizeof(*acc) ||
	    fos_wire_check_hello(&acc->hello, sizeof(acc->hello)) ||
	    le32_to_cpu(acc->hello.node_id) != peer->node_id ||
	    le32_to_cpu(acc->hello.dst_node_id) != fos_node_id) {
		fos_proto_error(conn, "bad accept");
		return;
	}
	conn->hello_resp = acc->hello;
	if (!fos_accept_verify(conn, acc)) {
		trace_fos_conn_state(peer->node_id, 0, 0,
				     FOS_TRACE_CONN_AUTH_FAIL, 1);
		fos_stat_add(peer, FRACTOS_STAT_AUTH_FAILURES, 1);
		pr_warn_ratelimited("fractos: node %u at %pISpc: authentication failed: wrong mac in the accept\n",
				    peer->node_id, &peer->addr);
		fos_conn_fail(conn);
		return;
	}
	conn->admitted = true;
	fos_auth_mac(conn->auth_key, FOS_AUTH_INITIATOR, &t, auth.mac);
	fos_conn_take_hello(conn, &acc->hello);
	fos_peer_set_epoch(peer, conn->peer_epoch);
	fos_conn_established(conn, &auth);
}

static int fos_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct fos_conn *conn = id->context;
	int reason;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return fos_cm_connect_request(id, ev);
	if (!conn)
		return 0;	/* the listener */

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (rdma_resolve_route(id, FOS_CM_TIMEOUT_MS))
			fos_conn_fail(conn);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		fos_cm_route_resolved(conn);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		/* A passive connection goes up when AUTH admits it. */
		if (conn->active)
			fos_cm_active_established(conn, ev);
		break;
	case RDMA_CM_EVENT_REJECTED:
		reason = fos_wire_check_reject(ev->param.conn.private_data,
					       ev->param.conn.private_data_len);
		pr_warn_ratelimited("fractos: node %u refused the connection (%s, reason %d)\n",
				    conn->peer->node_id,
				    rdma_reject_msg(id, ev->status), reason);
		fos_conn_fail(conn);
		break;
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
	case RDMA_CM_EVENT_MULTICAST_JOIN:
	case RDMA_CM_EVENT_MULTICAST_ERROR:
		break;
	default:
		/*
		 * Errors, DISCONNECTED, ADDR_CHANGE, TIMEWAIT_EXIT and
		 * DEVICE_REMOVAL (which the ib_client handles first).
		 * Said only when it is what ends the connection.
		 */
		if (READ_ONCE(conn->state) != FOS_CONN_CLOSING)
			pr_info_ratelimited("fractos: node %u: %s (status %d)\n",
					    conn->peer->node_id,
					    rdma_event_msg(ev->event),
					    ev->status);
		fos_conn_fail(conn);
		break;
	}
	return 0;
}

/* An initiator's connection attempt. */
static void fos_peer_connect_work(struct work_struct *work)
{
	struct fos_peer *peer = container_of(to_delayed_work(work),
					     struct fos_peer, connect_work);
	struct fos_auth_key *key;
	struct rdma_cm_id *id;
	struct fos_conn *conn;
	u32 alt_id;
	int mode;

	spin_lock(&peer->lock);
	if (peer->deleted || peer->out) {
		spin_unlock(&peer->lock);
		return;
	}
	peer->state = FRACTOS_NODE_CONNECTING;
	spin_unlock(&peer->lock);

	mode = fos_auth_current(&key, &alt_id);
	if (mode == FRACTOS_AUTH_NONE) {
		/* Setting a secret kicks every peer (fos_fabric_kick()). */
		pr_info_ratelimited("fractos: node %u: not connecting without a cluster secret (fractctl secret set)\n",
				    peer->node_id);
		spin_lock(&peer->lock);
		peer->state = FRACTOS_NODE_DOWN;
		spin_unlock(&peer->lock);
		return;
	}
	conn = fos_conn_alloc(peer, true);
	if (!conn) {
		fos_auth_put(key);
		goto retry;
	}
	conn->auth_mode = mode;
	conn->auth_key = key;
	conn->auth_alt_id = alt_id;
	id = rdma_create_id(&init_net, fos_cm_handler, conn, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id)) {
		fos_conn_free_unpublished(conn);
		goto retry;
	}
	conn->id = id;
	/*
	 * Once published, a node deletion or unload may fail @conn and its
	 * close work destroy @id and free it: that work takes setup_mutex
	 * first, so it waits until we are done with them.
	 */
	mutex_lock(&conn->setup_mutex);
	if (fos_conn_publish(conn)) {
		mutex_unlock(&conn->setup_mutex);
		rdma_destroy_id(id);
		fos_conn_free_unpublished(conn);
		return;
	}
	if (rdma_set_ack_timeout(id, FOS_ACK_TIMEOUT) ||
	    rdma_resolve_addr(id, NULL, (struct sockaddr *)&peer->addr,
			      FOS_CM_TIMEOUT_MS))
		fos_conn_fail(conn);
	mutex_unlock(&conn->setup_mutex);
	return;

retry:
	fos_stat_add(peer, FRACTOS_STAT_CONNECT_ERRORS, 1);
	spin_lock(&peer->lock);
	fos_peer_backoff_locked(peer);
	spin_unlock(&peer->lock);
}

/*
 * Try every peer that is backing off now (a device appeared, a secret was
 * set).
 */
static void fos_fabric_kick(void)
{
	struct fos_peer *peer;
	unsigned long idx;

	xa_lock(&fos_peers);
	xa_for_each(&fos_peers, idx, peer) {
		spin_lock(&peer->lock);
		if (!peer->deleted && !peer->out &&
		    fos_peer_initiator(peer->node_id)) {
			peer->backoff_ms = FOS_BACKOFF_MIN_MS;
			mod_delayed_work(fos_fabric_wq, &peer->connect_work, 0);
		}
		spin_unlock(&peer->lock);
	}
	xa_unlock(&fos_peers);
}

/* The admission mode or the secret changed (genl.c): try every peer now. */
void fos_fabric_auth_changed(void)
{
	fos_fabric_kick();
}

/* ---- heartbeat ---- */

static unsigned long fos_hb_interval(void)
{
	return msecs_to_jiffies(clamp(READ_ONCE(fos_fabric_hb_ms), 100U,
				      60000U));
}

static void fos_hb_work(struct work_struct *work)
{
	unsigned long iv = fos_hb_interval(), now = jiffies;
	struct fos_conn *conn;

	spin_lock(&fos_conns_lock);
	list_for_each_entry(conn, &fos_conns, link) {
		enum fos_conn_state state = READ_ONCE(conn->state);

		if (state == FOS_CONN_CONNECTING && READ_ONCE(conn->admitting) &&
		    time_after(now, conn->born + FOS_ADMIT_TIMEOUT)) {
			fos_auth_failed(conn, "no auth in time");
			continue;
		}
		if (state == FOS_CONN_CONNECTING &&
		    time_after(now, conn->born + FOS_CONNECT_TIMEOUT)) {
			fos_conn_fail(conn);
			continue;
		}
		if (state != FOS_CONN_UP)
			continue;
		if (time_after(now, READ_ONCE(conn->last_rx) +
			       FOS_HB_MISSES * iv)) {
			fos_stat_add(conn->peer, FRACTOS_STAT_HB_TIMEOUTS, 1);
			pr_warn("fractos: node %u: no heartbeat for %u ms\n",
				conn->peer->node_id,
				jiffies_to_msecs(now - conn->last_rx));
			fos_conn_fail(conn);
			continue;
		}
		fos_conn_check_stall(conn, now);
		if (time_after(now, READ_ONCE(conn->last_tx) + iv / 2))
			fos_conn_send_ctrl(conn, FOS_WIRE_HEARTBEAT);
	}
	spin_unlock(&fos_conns_lock);
	queue_delayed_work(fos_fabric_wq, &fos_hb_dwork, iv);
}

/* ---- configuration ---- */

/**
 * fos_fabric_node_add - configure a peer
 * @node_id: its id
 * @addr: AF_INET or AF_INET6 address with the port set
 * @trust_uids: believe the uids it states for name lookups
 *
 * Return: 0, -EEXIST or -ENOMEM.
 */
int fos_fabric_node_add(u32 node_id, const struct sockaddr_storage *addr,
			bool trust_uids)
{
	struct fos_peer *peer;
	int ret;

	might_sleep();

	peer = kzalloc(sizeof(*peer), GFP_KERNEL);
	if (!peer)
		return -ENOMEM;
	kref_init(&peer->ref);
	peer->node_id = node_id;
	peer->addr = *addr;
	peer->trust_uids = trust_uids;
	spin_lock_init(&peer->lock);
	peer->backoff_ms = FOS_BACKOFF_MIN_MS;
	INIT_DELAYED_WORK(&peer->connect_work, fos_peer_connect_work);
	init_waitqueue_head(&peer->wq);
	peer->state = fos_peer_initiator(node_id) ? FRACTOS_NODE_CONNECTING :
		      FRACTOS_NODE_WAITING;
	fos_live_add(FOS_LIVE_PEERS, 1);

	mutex_lock(&fos_fabric_mutex);
	ret = xa_insert(&fos_peers, node_id, peer, GFP_KERNEL);
	if (!ret && fos_peer_initiator(node_id))
		queue_delayed_work(fos_fabric_wq, &peer->connect_work, 0);
	mutex_unlock(&fos_fabric_mutex);
	if (ret) {
		fos_peer_put(peer);
		return ret == -EBUSY ? -EEXIST : ret;
	}
	pr_info("fractos: node %u at %pISpc added%s\n", node_id, &peer->addr,
		trust_uids ? ", its uids trusted" : "");
	return 0;
}

/* Caller holds fos_fabric_mutex and has taken @peer out of fos_peers. */
static void fos_peer_delete(struct fos_peer *peer)
{
	struct fos_conn *conn;

	spin_lock(&fos_conns_lock);
	spin_lock(&peer->lock);
	peer->deleted = true;
	spin_unlock(&peer->lock);
	list_for_each_entry(conn, &fos_conns, link)
		if (conn->peer == peer)
			fos_conn_fail(conn);
	spin_unlock(&fos_conns_lock);
	cancel_delayed_work_sync(&peer->connect_work);
	flush_workqueue(fos_fabric_wq);
	fos_remote_node_down(peer->node_id, 0);
	fos_peer_put(peer);
}

/**
 * fos_fabric_node_del - forget a peer and tear its connections down
 * @node_id: its id
 *
 * Return: 0 once the connections are gone, or -ENOENT.
 */
int fos_fabric_node_del(u32 node_id)
{
	struct fos_peer *peer;

	might_sleep();

	mutex_lock(&fos_fabric_mutex);
	peer = xa_erase(&fos_peers, node_id);
	if (peer)
		fos_peer_delete(peer);
	mutex_unlock(&fos_fabric_mutex);
	if (!peer)
		return -ENOENT;
	pr_info("fractos: node %u deleted\n", node_id);
	return 0;
}

/**
 * fos_fabric_node_info - snapshot the first peer with an id >= *@node_id
 * @node_id: in: where to start; out: the id found
 * @ni: filled in
 *
 * Return: 0, or -ENOENT if there is none.
 */
int fos_fabric_node_info(u32 *node_id, struct fos_node_info *ni)
{
	unsigned long idx = *node_id;
	struct fos_peer *peer;
	struct fos_conn *conn;
	int i;

	xa_lock(&fos_peers);
	peer = xa_find(&fos_peers, &idx, U32_MAX, XA_PRESENT);
	if (peer)
		kref_get(&peer->ref);
	xa_unlock(&fos_peers);
	if (!peer)
		return -ENOENT;

	memset(ni, 0, sizeof(*ni));
	*node_id = peer->node_id;
	ni->node_id = peer->node_id;
	ni->addr = peer->addr;
	ni->trust_uids = peer->trust_uids;
	spin_lock(&peer->lock);
	ni->state = peer->state;
	ni->epoch = peer->epoch;
	conn = peer->conn;
	if (conn) {
		spin_lock(&conn->lock);
		ni->qpn = conn->id->qp->qp_num;
		ni->credits = conn->tx_credits;
		spin_unlock(&conn->lock);
	}
	spin_unlock(&peer->lock);
	for (i = 0; i < __FRACTOS_STAT_MAX; i++)
		ni->stats[i] = atomic64_read(&peer->stats[i]);
	fos_peer_put(peer);
	return 0;
}

/**
 * fos_fabric_link_info - snapshot the RDMA device at position @pos
 * @pos: 0 for the first
 * @li: filled in
 *
 * Return: 0, or -ENOENT past the last one.
 */
int fos_fabric_link_info(unsigned long pos, struct fos_link_info *li)
{
	struct ib_device *ibdev = NULL;
	struct ib_port_attr pa;
	struct fos_ibdev *d;

	memset(li, 0, sizeof(*li));
	/* fos_ib_remove() takes the mutex too: the device stays. */
	mutex_lock(&fos_fabric_mutex);
	spin_lock(&fos_conns_lock);
	list_for_each_entry(d, &fos_devs, link) {
		if (pos--)
			continue;
		ibdev = d->ibdev;
		strscpy(li->name, dev_name(&ibdev->dev), sizeof(li->name));
		li->index = ibdev->index;
		li->ports = rdma_end_port(ibdev);
		li->conns = d->nconns;
		break;
	}
	spin_unlock(&fos_conns_lock);
	if (ibdev && !ib_query_port(ibdev, rdma_start_port(ibdev), &pa))
		li->state = pa.state;
	mutex_unlock(&fos_fabric_mutex);
	return ibdev ? 0 : -ENOENT;
}

/**
 * fos_fabric_info - fabric-wide counters
 * @fi: filled in
 */
void fos_fabric_info(struct fos_fabric_info *fi)
{
	struct fos_peer *peer;
	struct fos_ibdev *d;
	unsigned long idx;
	int i;

	memset(fi, 0, sizeof(*fi));
	fi->port = fos_listen_port;
	xa_lock(&fos_peers);
	xa_for_each(&fos_peers, idx, peer)
		fi->nodes++;
	xa_unlock(&fos_peers);
	spin_lock(&fos_conns_lock);
	list_for_each_entry(d, &fos_devs, link)
		fi->links++;
	spin_unlock(&fos_conns_lock);
	for (i = 0; i < __FRACTOS_STAT_MAX; i++)
		fi->stats[i] = atomic64_read(&fos_fabric_stats[i]);
}

/* ---- devices ---- */

static struct ib_client fos_ib_client;

static int fos_ib_add(struct ib_device *ibdev)
{
	struct fos_ibdev *d;

	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return -ENOMEM;
	d->ibdev = ibdev;
	spin_lock(&fos_conns_lock);
	list_add_tail(&d->link, &fos_devs);
	spin_unlock(&fos_conns_lock);
	ib_set_client_data(ibdev, &fos_ib_client, d);
	pr_info("fractos: rdma device %s added\n", dev_name(&ibdev->dev));
	fos_fabric_kick();
	return 0;
}

static void fos_ib_remove(struct ib_device *ibdev, void *data)
{
	struct fos_ibdev *d = data;
	struct fos_conn *conn;

	mutex_lock(&fos_fabric_mutex);
	spin_lock(&fos_conns_lock);
	d->dying = true;
	list_for_each_entry(conn, &fos_conns, link)
		if (conn->dev == d)
			fos_conn_fail(conn);
	spin_unlock(&fos_conns_lock);
	wait_event(fos_dev_wq, !READ_ONCE(d->nconns));

	spin_lock(&fos_conns_lock);
	list_del(&d->link);
	spin_unlock(&fos_conns_lock);
	mutex_unlock(&fos_fabric_mutex);
	pr_info("fractos: rdma device %s removed\n", dev_name(&ibdev->dev));
	kfree(d);
}

static struct ib_client fos_ib_client = {
	.name	= "fractos",
	.add	= fos_ib_add,
	.remove	= fos_ib_remove,
};

/* ---- listener ---- */

static int fos_listen_on(int family)
{
	struct sockaddr_storage ss = {};
	struct rdma_cm_id *id;
	int ret;

	id = rdma_create_id(&init_net, fos_cm_handler, NULL, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	if (family == AF_INET6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(fos_fabric_port);
		ret = rdma_set_afonly(id, 0);
	} else {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(fos_fabric_port);
		ret = 0;
	}
	if (!ret)
		ret = rdma_bind_addr(id, (struct sockaddr *)&ss);
	if (!ret)
		ret = rdma_listen(id, 128);
	if (ret) {
		rdma_destroy_id(id);
		return ret;
	}
	fos_listener = id;
	fos_listen_port = fos_fabric_port;
	return 0;
}

static int fos_listen(void)
{
	int ret;

	if (!fos_fabric_port)
		return 0;
	/* Both families on one id; IPv4 only if IPv6 is not available. */
	ret = fos_listen_on(AF_INET6);
	if (ret && ret != -EADDRINUSE)
		ret = fos_listen_on(AF_INET);
	if (ret)
		pr_err("fractos: cannot listen on rdma_cm port %u: %d\n",
		       fos_fabric_port, ret);
	return ret;
}

int fos_fabric_init(void)
{
	int ret;

	fos_fabric_wq = alloc_workqueue("fractos_fabric", 0, 0);
	if (!fos_fabric_wq)
		return -ENOMEM;
	ret = ib_register_client(&fos_ib_client);
	if (ret)
		goto err_wq;
	ret = fos_listen();
	if (ret)
		goto err_client;
	INIT_DELAYED_WORK(&fos_hb_dwork, fos_hb_work);
	queue_delayed_work(fos_fabric_wq, &fos_hb_dwork, fos_hb_interval());
	/* Best effort: debugfs may be off; nothing depends on it. */
	fos_debugfs = debugfs_create_dir("fractos", NULL);
	debugfs_create_u32("fault_read_delay_ms", 0600, fos_debugfs,
			   &fos_fault_read_delay_ms);
	return 0;

err_client:
	ib_unregister_client(&fos_ib_client);
err_wq:
	destroy_workqueue(fos_fabric_wq);
	return ret;
}

void fos_fabric_exit(void)
{
	struct fos_peer *peer;
	unsigned long idx;

	debugfs_remove_recursive(fos_debugfs);
	if (fos_listener)
		rdma_destroy_id(fos_listener);
	mutex_lock(&fos_fabric_mutex);
	xa_for_each(&fos_peers, idx, peer) {
		xa_erase(&fos_peers, idx);
		fos_peer_delete(peer);
	}
	mutex_unlock(&fos_fabric_mutex);
	cancel_delayed_work_sync(&fos_hb_dwork);
	flush_workqueue(fos_fabric_wq);
	ib_unregister_client(&fos_ib_client);
	destroy_workqueue(fos_fabric_wq);
	xa_destroy(&fos_peers);
	fos_auth_exit();
}
