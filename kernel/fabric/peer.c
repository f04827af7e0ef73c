// SPDX-License-Identifier: GPL-2.0
/*
 * fractos fabric, the peer table: lookups, references, per-peer
 * limits and counters, and its configuration (node add, delete, info).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/slab.h>
#include <linux/xarray.h>
#include "auth.h"
#include "pri.h"

/* ---- peers ---- */

/* Told when a node's epoch is gone (kernel/remote/), set at module load. */
static void (*fos_node_down_fn)(u32 node, u32 epoch);

/**
 * fos_fabric_set_node_down - who is told that a node's epoch is gone
 * @fn: called with the node and the epoch that ended (0: every epoch,
 *	the node was deleted), in process context; NULL to stop
 *
 * The transport's user revokes what it held of that node: failure becomes
 * revocation.
 */
void fos_fabric_set_node_down(void (*fn)(u32 node, u32 epoch))
{
	WRITE_ONCE(fos_node_down_fn, fn);
}

/* A node's epoch (0: all of them) is gone: tell the user. */
void fos_peer_node_down(u32 node, u32 epoch)
{
	void (*fn)(u32 node, u32 epoch) = READ_ONCE(fos_node_down_fn);

	if (fn)
		fn(node, epoch);
}

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

	fos_sess_free(peer);
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
	/* Written under @lock with WRITE_ONCE(): one word, no lock. */
	return READ_ONCE(peer->epoch);
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
void fos_peer_backoff_locked(struct fos_peer *peer)
{
	lockdep_assert_held(&peer->lock);
	if (peer->deleted || peer->out)
		return;
	peer->state = FRACTOS_NODE_DOWN;
	queue_delayed_work(fos_fabric_wq, &peer->connect_work,
			   msecs_to_jiffies(peer->backoff_ms));
	peer->backoff_ms = min(peer->backoff_ms * 2, FOS_BACKOFF_MAX_MS);
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
	fos_sess_init(peer);
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
	pr_info("node %u at %pISpc added%s\n", node_id, &peer->addr,
		trust_uids ? ", its uids trusted" : "");
	return 0;
}

/**
 * DOC: Lingering
 *
 * A node deleted (NODE_DEL, or the module's exit) while its connection is
 * up does not cut it at once: what this node has already done for the
 * peer leaves first, as a socket's close lets its queued data out.  A
 * receiver may have been woken by an INVOKE whose ACK the handler has not
 * sent yet, and a user who saw the message and deleted the node would
 * otherwise fail the invoker's call.  So the deletion waits, up to
 * FOS_LINGER_MS, until no message handler runs on the connection and
 * nothing is in its backlog or in flight on its send queue (when only
 * unsignalled sends are left, a heartbeat asks for the completion that
 * tells).  A peer that is down, or does not complete our sends, costs at
 * most that bound.
 */
#define FOS_LINGER_MS	1000

static bool fos_conn_drained(struct fos_conn *conn)
{
	bool busy, idle;

	/*
	 * Pairs with fos_rx_handle(): a handler's sends are in @sends.  A
	 * message deferred to process context has yet to run its handler.
	 */
	busy = smp_load_acquire(&conn->rx_busy) || READ_ONCE(conn->rx_ndefer);

	spin_lock_bh(&conn->lock);
	idle = conn->state != FOS_CONN_UP ||
	       (!busy && !conn->sends && !conn->nbacklog);
	/*
	 * Only unsignalled sends left ("Unsignalled sends" in tx.c): a
	 * heartbeat's completion says they are out (no credit: next poll).
	 */
	if (!idle && !busy && !conn->nbacklog &&
	    conn->sends == conn->unsignalled)
		fos_conn_post_raw(conn, FOS_WIRE_HEARTBEAT, 0, NULL, 0, NULL,
				  true, 0);
	spin_unlock_bh(&conn->lock);
	return idle;
}

static bool fos_peer_drained(struct fos_peer *peer)
{
	bool idle;

	spin_lock_bh(&peer->lock);
	idle = (!peer->conn || fos_conn_drained(peer->conn)) &&
	       (!peer->in || fos_conn_drained(peer->in)) &&
	       (!peer->out || fos_conn_drained(peer->out));
	spin_unlock_bh(&peer->lock);
	return idle;
}

/**
 * fos_peer_linger - let what was done for @peer leave before it goes
 * @peer: the peer about to be deleted
 *
 * See "Lingering".  Rare (configuration, exit), so it polls rather than
 * adding a wake-up to every receive.
 */
void fos_peer_linger(struct fos_peer *peer)
{
	unsigned long until = jiffies + msecs_to_jiffies(FOS_LINGER_MS);

	might_sleep();
	while (!fos_peer_drained(peer)) {
		if (time_after(jiffies, until)) {
			pr_info("node %u: deleted with messages still going out\n",
				peer->node_id);
			return;
		}
		usleep_range(2000, 4000);
	}
}

/* Caller holds fos_fabric_mutex and has taken @peer out of fos_peers. */
void fos_peer_delete(struct fos_peer *peer)
{
	struct fos_conn *conn;

	lockdep_assert_held(&fos_fabric_mutex);
	spin_lock(&fos_conns_lock);
	spin_lock_bh(&peer->lock);
	peer->deleted = true;
	spin_unlock_bh(&peer->lock);
	list_for_each_entry(conn, &fos_conns, link)
		if (conn->peer == peer)
			fos_conn_fail(conn);
	spin_unlock(&fos_conns_lock);
	cancel_delayed_work_sync(&peer->connect_work);
	flush_workqueue(fos_fabric_wq);
	/* No close work is left to start it again (peer->deleted). */
	cancel_delayed_work_sync(&peer->sess.grace_work);
	fos_peer_node_down(peer->node_id, 0);
	fos_peer_put(peer);
}

/**
 * fos_fabric_node_del - forget a peer and tear its connections down
 * @node_id: its id
 *
 * The connections linger first (see "Lingering"), up to FOS_LINGER_MS.
 *
 * Return: 0 once the connections are gone, or -ENOENT.
 */
int fos_fabric_node_del(u32 node_id)
{
	struct fos_peer *peer;

	might_sleep();

	peer = fos_peer_find(node_id);
	if (!peer)
		return -ENOENT;
	fos_peer_linger(peer);
	fos_peer_put(peer);

	mutex_lock(&fos_fabric_mutex);
	peer = xa_erase(&fos_peers, node_id);
	if (peer)
		fos_peer_delete(peer);
	mutex_unlock(&fos_fabric_mutex);
	if (!peer)
		return -ENOENT;
	pr_info("node %u deleted\n", node_id);
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
	spin_lock_bh(&peer->lock);
	ni->state = peer->state;
	ni->epoch = peer->epoch;
	conn = peer->conn;
	if (conn) {
		spin_lock_bh(&conn->lock);
		ni->qpn = conn->id->qp->qp_num;
		ni->credits = conn->tx_credits;
		ni->rx_softirq = conn->rx_softirq;
		spin_unlock_bh(&conn->lock);
	}
	spin_unlock_bh(&peer->lock);
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
