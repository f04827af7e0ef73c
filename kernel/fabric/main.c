// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: the kernel-to-kernel RDMA fabric - its parameters, devices
 * (the ib_client), listener, and setup.
 *
 * The transport's files (kernel/fabric/): main.c (this), peer.c (the peer
 * table and its configuration), conn.c (a connection's buffers, QP, PD,
 * setup and teardown), tx.c (credits, backlog, stalls, heartbeat), rx.c
 * (the dispatch table users register with, admission by AUTH, held
 * credits), cm.c (rdma_cm and connection setup), rdma.c (one-sided RDMA),
 * auth.c (secrets and MACs), session.c (sessions), genl.c (netlink),
 * ping.c (PING and PONG), trace.c and fos_trace.h (tracepoints);
 * pri.h is their private header, ../fabric.h the users' one.  The
 * protocol is in Documentation/protocol.rst, the lifetimes and the lock
 * order in Documentation/locking.rst.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

/**
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
 * other message.  At most FOS_ADMIT_MAX connections wait for admission,
 * FOS_ADMIT_PER_HOST from one address (cm.c, "Admission slots").
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
 */

/**
 * DOC: Routing of remote objects
 *
 * kernel/remote/: objects are named by (node id, epoch, object id); a
 * capability to another node's object is a local proxy, and operations on
 * it are messages to fos_peer_find(node id) matched to their answers by the
 * header cookie.  kernel/remote/ registers the rows of those messages
 * (fos_fabric_register()); the transport delivers them once and in order
 * while the two nodes' session lasts ("Sessions" in session.c), and only
 * tells it when the session ends: the peer's connection went down (and
 * none came back within fabric_grace_ms), its epoch changed or it was
 * deleted (the callback of fos_fabric_set_node_down()), which revokes
 * every proxy of that node: failure becomes revocation.  The transport
 * names none of its users.
 */

/**
 * DOC: Locking
 *
 * Outermost first (the order of all the module's locks:
 * Documentation/locking.rst):
 *
 * - fos_fabric_mutex serialises configuration (add, delete, exit).
 * - fos_conns_lock (spinlock) protects the list of connections, the list
 *   of devices, fos_ibdev.dying and .nconns, and fos_conn.dev.
 * - fos_peer.lock protects the peer's conn/in/out pointers, state, epoch
 *   (read without it: fos_peer_epoch()), backoff and deleted flag.
 * - fos_conn.lock protects the connection's state, credits and free send
 *   buffers.
 * - fos_session.lock protects a peer's session (session.c).
 * - fos_conn.rx_lock protects the connection's FIFO of received messages
 *   deferred to process context (rx.c, "Receiving in softirq").
 *
 * None of them is held across anything that sleeps.  rdma_cm handlers take
 * only the spinlocks; everything that destroys a cm_id runs on
 * fos_fabric_wq.  All but the first two are taken with bottom halves
 * off: the receive softirq (fabric_rx_softirq) takes them all, the
 * peer's to send an INVOKE's ACK.
 */
#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <net/net_namespace.h>
#include "auth.h"
#include "pri.h"

static unsigned short fos_fabric_port = FRACTOS_FABRIC_PORT;
module_param_named(fabric_port, fos_fabric_port, ushort, 0444);
MODULE_PARM_DESC(fabric_port,
		 "rdma_cm port the fabric listens on, 0 for none (default 18525)");

/* The port a NODE_ADD without one means: the one we listen on, as peers do. */
u16 fos_fabric_default_port(void)
{
	return fos_fabric_port ?: FRACTOS_FABRIC_PORT;
}

/*
 * Loopback is the transport's: with it, this node is a peer of its own
 * (configured with NODE_ADD of its own id and address, over rxe's
 * loopback on one machine), and the layers above send it what they would
 * otherwise do locally - invocations of local Requests, copies between
 * local Memory - so that one node exercises every remote path.
 */
static bool fos_fabric_loop;
module_param_named(fabric_loopback, fos_fabric_loop, bool, 0644);
MODULE_PARM_DESC(fabric_loopback,
		 "Send invocations of local Requests through the fabric to this node, which must be configured as its own peer (default 0)");

/**
 * fos_fabric_loopback - does this node reach itself through the fabric?
 *
 * Context: any.
 *
 * Return: the fabric_loopback parameter: local traffic of the layers
 * above goes through this node's connection to itself.
 */
bool fos_fabric_loopback(void)
{
	return READ_ONCE(fos_fabric_loop);
}

unsigned int fos_fabric_ring = 64;
module_param_named(fabric_ring, fos_fabric_ring, uint, 0644);
MODULE_PARM_DESC(fabric_ring,
		 "Receive buffers (peer credits) per new connection, 4-1024 (default 64)");

unsigned int fos_fabric_tx_signal = 8;
module_param_named(fabric_tx_signal, fos_fabric_tx_signal, uint, 0644);
MODULE_PARM_DESC(fabric_tx_signal,
		 "Ask for a completion of one message send in this many (at most half of fabric_ring); 0 or 1: of every one (default 8; measured in Documentation/benchmarks.rst)");

bool fos_fabric_tx_bh = true;
module_param_named(fabric_tx_bh, fos_fabric_tx_bh, bool, 0644);
MODULE_PARM_DESC(fabric_tx_bh,
		 "Post messages with bottom halves disabled, so that a software RDMA driver's send tasklet runs at once on the sender's CPU (default 1; measured in Documentation/benchmarks.rst)");

int fos_fabric_rx_softirq = -1;

/* -1, 0 or 1; Y and N as the bool it was before 2026-11-30. */
static int fos_rx_softirq_set(const char *val, const struct kernel_param *kp)
{
	bool b;
	int v;

	if (kstrtoint(val, 0, &v)) {
		if (kstrtobool(val, &b))
			return -EINVAL;
		v = b;
	}
	if (v < -1 || v > 1)
		return -EINVAL;
	WRITE_ONCE(*(int *)kp->arg, v);
	return 0;
}

static const struct kernel_param_ops fos_rx_softirq_ops = {
	.set = fos_rx_softirq_set,
	.get = param_get_int,
};
module_param_cb(fabric_rx_softirq, &fos_rx_softirq_ops,
		&fos_fabric_rx_softirq, 0644);
__MODULE_PARM_TYPE(fabric_rx_softirq, "int");
MODULE_PARM_DESC(fabric_rx_softirq,
		 "Poll new connections' completions in softirq: answers (ACK, GRANT_REPLY), credits and the common INVOKE are handled there, other messages in process context, in order; 1: on, 0: off, -1 (default): on, but off for soft-RoCE where it completes in work items (Linux 6.4 on), where it costs (Documentation/benchmarks.rst)");

unsigned int fos_fabric_hb_ms = 1000;
module_param_named(fabric_heartbeat_ms, fos_fabric_hb_ms, uint, 0644);
MODULE_PARM_DESC(fabric_heartbeat_ms,
		 "Heartbeat interval; a peer silent for 4 intervals is dead (default 1000)");

unsigned int fos_fabric_grace_ms;
module_param_named(fabric_grace_ms, fos_fabric_grace_ms, uint, 0644);
MODULE_PARM_DESC(fabric_grace_ms,
		 "How long a peer's session outlives its connection: what was in flight is sent again on the next one, and the node is down for capabilities only then; 0 (default): at once");

/**
 * fos_fabric_link_grace - how long sessions outlive their connections
 *
 * Return: fabric_grace_ms; while it is set, a message in flight when a
 * connection ends goes again on the next one, so a user may try again
 * what a lost connection cut (a remote copy's READs), and should wait
 * that much longer for an answer.
 */
unsigned int fos_fabric_link_grace(void)
{
	return READ_ONCE(fos_fabric_grace_ms);
}

/*
 * Fault injection for the tests, in debugfs only
 * (/sys/kernel/debug/fractos/fault_read_delay_ms): sleep this long (at
 * most 10000 ms) before each RDMA READ of a remote copy.
 */
u32 fos_fault_read_delay_ms;
static struct dentry *fos_debugfs;

/*
 * Per-peer limits on what a peer may make this node hold: requests served
 * in process context (COPY, GRANT, LOOKUP, REVOKE_REQ, a forwarded INVOKE)
 * at a time, grants (memory regions) out at a time, and grants kept for
 * the peer's later copies, and Requests derived here for the peer
 * (DERIVE) alive at a time.  Over the first two the request is answered
 * EAGAIN; over the third a grant is not kept; over the fourth DERIVE is
 * answered ENOSPC.
 */
static unsigned int fos_peer_limit[FOS_PEER_NR_RES] = {
	[FOS_PEER_WORK] = 64,
	[FOS_PEER_GRANTS] = 256,
	[FOS_PEER_KEPT] = 64,
	[FOS_PEER_DERIVED] = 4096,
};
module_param_named(fabric_peer_work, fos_peer_limit[FOS_PEER_WORK], uint,
		   0644);
MODULE_PARM_DESC(fabric_peer_work,
		 "Requests of one peer (COPY, GRANT, LOOKUP, REVOKE_REQ, forwarded INVOKE) served at a time; over it they fail with EAGAIN (default 64)");
module_param_named(fabric_peer_grants, fos_peer_limit[FOS_PEER_GRANTS], uint,
		   0644);
MODULE_PARM_DESC(fabric_peer_grants,
		 "Grants (registered ranges) one peer may hold at a time; over it GRANT fails with EAGAIN (default 256)");
module_param_named(fabric_peer_kept_grants, fos_peer_limit[FOS_PEER_KEPT],
		   uint, 0644);
MODULE_PARM_DESC(fabric_peer_kept_grants,
		 "Grants one peer may have kept for its later copies at a time, apart from fabric_peer_grants; over it a GRANT asking to keep its region gets a plain one (default 64)");
module_param_named(fabric_peer_derived, fos_peer_limit[FOS_PEER_DERIVED],
		   uint, 0644);
MODULE_PARM_DESC(fabric_peer_derived,
		 "Requests this node derived for one peer (FRACTOS_CREATE_AT_OWNER) alive at a time; over it its derivations fail with ENOSPC (default 4096)");

/* Serialises configuration: node add and delete, device removal, exit. */
DEFINE_MUTEX(fos_fabric_mutex);
/* Protects fos_conns, fos_devs and the devices' nconns and dying. */
DEFINE_SPINLOCK(fos_conns_lock);
/* Every published connection (fos_conn.link). */
LIST_HEAD(fos_conns);
/* The RDMA devices of the ib_client (fos_ibdev.link). */
LIST_HEAD(fos_devs);
/* Device removal waits here for its connections and PDs to go. */
DECLARE_WAIT_QUEUE_HEAD(fos_dev_wq);
/* node id -> struct fos_peer; the xa_lock protects lookups' references. */
DEFINE_XARRAY(fos_peers);
/* Connection work that sleeps: connect, close, QP events. */
struct workqueue_struct *fos_fabric_wq;
/* Received messages deferred to process context (fos_rx_work()). */
struct workqueue_struct *fos_rx_wq;
static struct rdma_cm_id *fos_listener;
u16 fos_listen_port;
atomic64_t fos_fabric_stats[__FRACTOS_STAT_MAX];
struct delayed_work fos_hb_dwork;

void fos_stat_add(struct fos_peer *peer, unsigned int stat, u64 v)
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
 * (fabric_peer_work, fabric_peer_grants, fabric_peer_kept_grants,
 * fabric_peer_derived) already.
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

bool fos_peer_initiator(u32 node_id)
{
	return fos_node_id <= node_id;
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
	pr_info("rdma device %s added\n", dev_name(&ibdev->dev));
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
	pr_info("rdma device %s removed\n", dev_name(&ibdev->dev));
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
		pr_err("cannot listen on rdma_cm port %u: %d\n",
		       fos_fabric_port, ret);
	return ret;
}

/* Everything fos_fabric_init() started but the netlink family. */
static void fos_fabric_stop(void)
{
	struct fos_peer *peer;
	unsigned long idx;

	debugfs_remove_recursive(fos_debugfs);
	if (fos_listener)
		rdma_destroy_id(fos_listener);
	mutex_lock(&fos_fabric_mutex);
	xa_for_each(&fos_peers, idx, peer) {
		fos_peer_linger(peer);
		xa_erase(&fos_peers, idx);
		fos_peer_delete(peer);
	}
	mutex_unlock(&fos_fabric_mutex);
	cancel_delayed_work_sync(&fos_hb_dwork);
	flush_workqueue(fos_fabric_wq);
	ib_unregister_client(&fos_ib_client);
	destroy_workqueue(fos_fabric_wq);
	/* Each connection's close work flushed its own. */
	destroy_workqueue(fos_rx_wq);
	xa_destroy(&fos_peers);
	fos_ping_exit();
	fos_rx_exit();
	fos_auth_exit();
}

int fos_fabric_init(void)
{
	int ret;

	ret = fos_rx_init();
	if (ret)
		return ret;
	ret = fos_ping_init();
	if (ret)
		goto err_rx;
	fos_fabric_wq = alloc_workqueue("fractos_fabric", 0, 0);
	if (!fos_fabric_wq) {
		ret = -ENOMEM;
		goto err_ping;
	}
	/* As the completion's own work item would (ib_comp_wq). */
	fos_rx_wq = alloc_workqueue("fractos_rx", WQ_HIGHPRI, 0);
	if (!fos_rx_wq) {
		ret = -ENOMEM;
		goto err_wq;
	}
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
	debugfs_create_u32("fault_rx_defer_pct", 0600, fos_debugfs,
			   &fos_fault_rx_defer_pct);
	/* Last: from here on, the admin can configure peers. */
	ret = fos_genl_init();
	if (ret)
		fos_fabric_stop();
	return ret;

err_client:
	ib_unregister_client(&fos_ib_client);
err_wq:
	if (fos_rx_wq)
		destroy_workqueue(fos_rx_wq);
	destroy_workqueue(fos_fabric_wq);
err_ping:
	fos_ping_exit();
err_rx:
	fos_rx_exit();
	return ret;
}

void fos_fabric_exit(void)
{
	/* First: no admin request runs from here on. */
	fos_genl_exit();
	fos_fabric_stop();
}
