// SPDX-License-Identifier: GPL-2.0
/*
 * fractos fabric, connections: buffers, the QP and its PD,
 * hellos, publication, establishment and teardown.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/slab.h>
#include "auth.h"
#include "pri.h"
#include "fos_trace.h"

/* ---- connections: buffers and QP ---- */

void fos_conn_fail(struct fos_conn *conn)
{
	bool queue = false;

	spin_lock_bh(&conn->lock);
	if (conn->state != FOS_CONN_CLOSING) {
		conn->state = FOS_CONN_CLOSING;
		queue = true;
		/* Until its close work drained it (fos_peer.draining). */
		if (conn->was_up)
			atomic_inc(&conn->peer->draining);
	}
	spin_unlock_bh(&conn->lock);
	if (queue)
		queue_work(fos_fabric_wq, &conn->close_work);
}

/* As fos_conn_fail(), for an error that nothing else reports. */
void fos_conn_fail_err(struct fos_conn *conn, const char *what,
		       int err)
{
	if (READ_ONCE(conn->state) != FOS_CONN_CLOSING)
		pr_warn_ratelimited("node %u: %s failed: %d\n",
				    conn->peer->node_id, what, err);
	fos_conn_fail(conn);
}

int fos_post_recv(struct fos_conn *conn, struct fos_buf *b)
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

	pr_warn_ratelimited("node %u: QP event %s\n",
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

	switch (ev->event) {
	case IB_EVENT_COMM_EST:
		rdma_notify(conn->id, IB_EVENT_COMM_EST);
		return;
	case IB_EVENT_QP_FATAL:
	case IB_EVENT_QP_REQ_ERR:
	case IB_EVENT_QP_ACCESS_ERR:
	case IB_EVENT_PATH_MIG_ERR:
	case IB_EVENT_DEVICE_FATAL:
		WRITE_ONCE(conn->qp_event, ev->event);
		queue_work(system_wq, &conn->qp_event_work);
		return;
	default:
		/*
		 * Informational (PATH_MIG, SQ_DRAINED, LAST_WQE_REACHED...):
		 * the QP still works; a real failure shows in a completion.
		 */
		pr_info_ratelimited("node %u: QP event %s\n",
				    conn->peer->node_id, ib_event_msg(ev->event));
	}
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

/**
 * fos_rx_softirq_for - whether a new connection on @ibdev polls in softirq
 * @ibdev: the RDMA device it is set up on
 *
 * fabric_rx_softirq 1 or 0 says so.  The default, -1, says yes unless
 * @ibdev is soft-RoCE on a kernel where rxe runs its tasks in work items
 * (since Linux 6.4, "RDMA/rxe: Add workqueue support for rxe tasks"):
 * there the completion handler raises the softirq from a work item, and
 * it runs in ksoftirqd, a switch more per message ("The INVOKE in
 * softirq too", Documentation/benchmarks.rst).  A NIC completes in its
 * hard interrupt, 6.1's rxe in its tasklet: the softirq runs at once.
 *
 * Return: true for IB_POLL_SOFTIRQ.
 */
static bool fos_rx_softirq_for(struct ib_device *ibdev)
{
	int v = READ_ONCE(fos_fabric_rx_softirq);

	if (v >= 0)
		return v;
	/* FOS_RXE_IN_WORK_ITEMS: 1 or 0, from kernel/Kbuild */
	return !(FOS_RXE_IN_WORK_ITEMS &&
		 ibdev->ops.driver_id == RDMA_DRIVER_RXE);
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

	spin_lock_bh(&conn->lock);
	closing = conn->state == FOS_CONN_CLOSING;
	spin_unlock_bh(&conn->lock);
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

	/* Completions in softirq: "Receiving in softirq" in rx.c. */
	conn->rx_softirq = fos_rx_softirq_for(ibdev);
	conn->cq = ib_alloc_cq(ibdev, conn, 2 * conn->nbufs + 2 + FOS_RDMA_SQ,
			       0, conn->rx_softirq ? IB_POLL_SOFTIRQ :
			       IB_POLL_WORKQUEUE);
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

int fos_conn_setup(struct fos_conn *conn, struct ib_device *ibdev)
{
	int ret;

	mutex_lock(&conn->setup_mutex);
	ret = __fos_conn_setup(conn, ibdev);
	mutex_unlock(&conn->setup_mutex);
	return ret;
}

void fos_hello_fill(struct fos_wire_hello *h, struct fos_conn *conn,
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
	if (conn->active)
		h->cookie = cpu_to_le64(READ_ONCE(conn->peer->cookie));
	if (conn->auth_mode == FRACTOS_AUTH_INSECURE)
		h->flags = FOS_WIRE_HELLO_INSECURE;
	get_random_bytes(h->nonce, sizeof(h->nonce));
}

/* Record what the peer said in its (validated) hello. */
void fos_conn_take_hello(struct fos_conn *conn,
			 const struct fos_wire_hello *h)
{
	conn->tx_credits = le16_to_cpu(h->credits);
	conn->tx_credits_max = conn->tx_credits;
	conn->tx_max = min_t(u32, le32_to_cpu(h->msg_size), FOS_WIRE_MSG_MAX);
	conn->peer_epoch = le32_to_cpu(h->epoch);
}

/*
 * One connection per identity and epoch (Documentation/security.rst):
 * @peer has a live incoming connection of @epoch, so another one that
 * claims the same is refused, before its proof (cm.c) and after it (rx.c).
 * A claim of another epoch is a restart: once proven it replaces the old
 * connection (fos_peer_set_epoch()).
 */
bool fos_peer_in_epoch_locked(struct fos_peer *peer, u32 epoch)
{
	lockdep_assert_held(&peer->lock);
	return peer->in && peer->in->peer_epoch == epoch &&
	       READ_ONCE(peer->in->state) != FOS_CONN_CLOSING;
}

bool fos_peer_in_epoch(struct fos_peer *peer, u32 epoch)
{
	bool ret;

	spin_lock_bh(&peer->lock);
	ret = fos_peer_in_epoch_locked(peer, epoch);
	spin_unlock_bh(&peer->lock);
	return ret;
}

/*
 * @peer refused our request for want of an admission cookie and gave us
 * @cookie: the next attempt carries it, after the shortest backoff (cm.c,
 * "Admission cookies").  Refused again with the same cookie, the attempts
 * back off as after any refusal: a responder that keeps refusing it sees
 * no tight loop.
 */
void fos_peer_set_cookie(struct fos_peer *peer, u64 cookie)
{
	spin_lock_bh(&peer->lock);
	if (peer->cookie != cookie) {
		WRITE_ONCE(peer->cookie, cookie);
		peer->backoff_ms = FOS_BACKOFF_MIN_MS;
	}
	spin_unlock_bh(&peer->lock);
}

/*
 * The peer spoke with @epoch.  If it had another one, it restarted: the
 * old incarnation is dead, and so is any connection to it.
 */
void fos_peer_set_epoch(struct fos_peer *peer, u32 epoch)
{
	u32 old;

	spin_lock_bh(&peer->lock);
	old = peer->epoch;
	WRITE_ONCE(peer->epoch, epoch);
	/*
	 * Failed under peer->lock: once it is unlocked, the connection's
	 * close work may clear peer->conn and free it.
	 */
	if (old && old != epoch && peer->conn &&
	    peer->conn->peer_epoch != epoch)
		fos_conn_fail(peer->conn);
	spin_unlock_bh(&peer->lock);
	if (!old || old == epoch)
		return;
	fos_sess_restarted(peer, epoch);
	fos_stat_add(peer, FRACTOS_STAT_EPOCH_CHANGES, 1);
	pr_info("node %u restarted (epoch %#x -> %#x)\n",
		peer->node_id, old, epoch);
	fos_peer_node_down(peer->node_id, old);
}

struct fos_conn *fos_conn_alloc(struct fos_peer *peer, bool active)
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
	INIT_LIST_HEAD(&conn->tx_sent);
	INIT_LIST_HEAD(&conn->backlog);
	INIT_LIST_HEAD(&conn->link);
	mutex_init(&conn->setup_mutex);
	spin_lock_init(&conn->rx_lock);
	INIT_LIST_HEAD(&conn->rx_defer);
	INIT_WORK(&conn->rx_work, fos_rx_work);
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
int fos_conn_publish(struct fos_conn *conn)
{
	struct fos_peer *peer = conn->peer;
	int ret = 0;

	INIT_WORK(&conn->close_work, fos_conn_close_work);
	spin_lock(&fos_conns_lock);
	spin_lock_bh(&peer->lock);
	if (peer->deleted) {
		ret = -ENOENT;
	} else if (conn->active) {
		if (peer->out)
			ret = -EBUSY;
		else
			peer->out = conn;
	}
	/* A passive connection takes peer->in when it is admitted. */
	spin_unlock_bh(&peer->lock);
	if (!ret)
		list_add_tail(&conn->link, &fos_conns);
	spin_unlock(&fos_conns_lock);
	return ret;
}

/* Free an unpublished connection that has no cm_id of its own. */
void fos_conn_free_unpublished(struct fos_conn *conn)
{
	fos_auth_put(conn->auth_key);
	fos_peer_put(conn->peer);
	kfree_sensitive(conn);	/* its session keys */
	fos_live_add(FOS_LIVE_CONNS, -1);
}

/* The connection is gone: what still waits for a credit never goes. */
static void fos_conn_drop_backlog(struct fos_conn *conn)
{
	fos_pending_drop(&conn->backlog);
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

	spin_lock_bh(&conn->lock);
	in_flight = conn->sends;
	credits = conn->tx_credits;
	max = conn->tx_credits_max;
	owed = conn->owed;
	nbacklog = conn->nbacklog;
	rdma = conn->rdma_wrs;
	spin_unlock_bh(&conn->lock);
	rx = READ_ONCE(conn->last_rx);
	tx = READ_ONCE(conn->last_tx);
	if (!ib_query_qp(conn->id->qp, &qa,
			 IB_QP_STATE | IB_QP_SQ_PSN | IB_QP_RQ_PSN, &init))
		qp_state = qa.qp_state;
	pr_info_ratelimited("node %u: connection ends: credits %u/%u, owed %u, sends in flight %u, backlog %u, rdma %u, last rx %u ms ago, last tx %u ms ago; qp %u state %d sq_psn %u rq_psn %u\n",
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
	bool was_conn, sess, keep = false, kept = false;

	spin_lock_bh(&peer->lock);
	was_conn = peer->conn == conn;
	/* The connection the peer's session ran on (session.c). */
	sess = was_conn && conn->was_up && conn->primary;
	if (was_conn)
		peer->conn = NULL;
	/* From here on its users' messages wait for the next one. */
	if (sess)
		keep = fos_sess_link_down_begin(conn);
	if (peer->in == conn)
		peer->in = NULL;
	if (peer->out == conn)
		peer->out = NULL;
	spin_unlock_bh(&peer->lock);
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
		/* ... and every message it deferred is handled after this. */
		flush_work(&conn->rx_work);
		rdma_destroy_qp(conn->id);
		/* No QP event after the QP; none deferred either. */
		cancel_work_sync(&conn->qp_event_work);
	}
	if (conn->cq)
		ib_free_cq(conn->cq);
	rdma_destroy_id(conn->id);
	/*
	 * The session takes what the peer's connection had not sent, or
	 * ends; only then may a new connection deliver (fos_peer.draining).
	 */
	if (sess)
		kept = fos_sess_link_down(conn, keep);
	fos_conn_drop_backlog(conn);
	if (conn->was_up && conn->primary && !kept) {
		pr_info("node %u down\n", peer->node_id);
		fos_peer_node_down(peer->node_id, conn->peer_epoch);
	}
	if (conn->was_up)
		atomic_dec(&peer->draining);
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
		fos_admit_release(conn);
		goto out;
	}
	fos_stat_add(peer, conn->was_up ? FRACTOS_STAT_DISCONNECTS :
		     FRACTOS_STAT_CONNECT_ERRORS, 1);

	spin_lock_bh(&peer->lock);
	if (conn->primary && !peer->conn) {
		if (fos_peer_initiator(peer->node_id))
			fos_peer_backoff_locked(peer);
		else
			peer->state = FRACTOS_NODE_WAITING;
	}
	spin_unlock_bh(&peer->lock);
out:
	fos_peer_put(peer);
	kfree_sensitive(conn);	/* its session keys */
	fos_live_add(FOS_LIVE_CONNS, -1);
}

/*
 * @conn is admitted and goes up.  @auth: the initiator's AUTH, which goes
 * out before anything else can (the active end), or NULL.
 */
void fos_conn_established(struct fos_conn *conn,
			  const struct fos_wire_auth *auth)
{
	struct fos_peer *peer = conn->peer;
	bool up = false;

	spin_lock_bh(&peer->lock);
	spin_lock_bh(&conn->lock);
	if (!peer->deleted && conn->state == FOS_CONN_CONNECTING) {
		conn->state = FOS_CONN_UP;
		conn->last_rx = jiffies;
		conn->last_tx = jiffies;
		up = !auth || !fos_conn_post_now(conn, FOS_WIRE_AUTH, 0, auth,
						 sizeof(*auth), NULL, true);
		conn->was_up = up;
	}
	spin_unlock_bh(&conn->lock);
	if (up && conn->primary) {
		/* Failed under peer->lock, which keeps it allocated. */
		if (peer->conn && peer->conn != conn)
			fos_conn_fail(peer->conn);
		peer->conn = conn;
		peer->state = FRACTOS_NODE_UP;
		peer->backoff_ms = FOS_BACKOFF_MIN_MS;
		/* Spent: the next request is a new one, asked anew. */
		WRITE_ONCE(peer->cookie, 0);
	}
	spin_unlock_bh(&peer->lock);

	if (!up) {
		fos_conn_fail(conn);
		return;
	}
	trace_fos_conn_state(peer->node_id, conn->id->qp->qp_num,
			     conn->peer_epoch, FOS_TRACE_CONN_UP, conn->primary);
	fos_stat_add(peer, FRACTOS_STAT_CONNECTS, 1);
	if (conn->primary)
		pr_info("node %u up (epoch %#x, qp %u, %s, %s)\n",
			peer->node_id, conn->peer_epoch, conn->id->qp->qp_num,
			dev_name(&conn->dev->ibdev->dev),
			conn->auth_key ? "authenticated" : "INSECURE");
	wake_up_all(&peer->wq);
}
