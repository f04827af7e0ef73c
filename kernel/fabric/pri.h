/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fractos: the fabric's private header - devices, protection domains,
 * connections and peers, shared by the files of kernel/fabric/.  Users
 * of the transport include fabric.h only.
 */
#ifndef FRACTOS_FABRIC_PRI_H
#define FRACTOS_FABRIC_PRI_H

#include <linux/kref.h>
#include <linux/siphash.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
#include "../core.h"
#include "../fabric.h"
#include "wire.h"

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
/* Passive connections waiting for admission, over every peer (cm.c). */
#define FOS_ADMIT_MAX		32
/*
 * ... and from one host (address), unproven and again proven by a cookie:
 * a flooder keeps out only itself, one that forges the address nobody.
 */
#define FOS_ADMIT_PER_HOST	4
/* From this many held on, a request needs a cookie (cm.c), valid 32-64 s. */
#define FOS_ADMIT_COOKIE_AT	(FOS_ADMIT_MAX / 2)
#define FOS_ADMIT_COOKIE_S	32
#define FOS_SEND_TIMEOUT	(5 * HZ)
#define FOS_RDMA_DEPTH		16
/* Send queue slots per connection for RDMA READs and REG_MRs. */
#define FOS_RDMA_SQ		32
/* SGEs per RDMA READ, bytes per RDMA READ, READs in flight per transfer. */
#define FOS_RDMA_SGE		16
#define FOS_RDMA_CHUNK		SZ_1M
#define FOS_RDMA_INFLIGHT	8

/**
 * struct fos_ibdev - an RDMA device, from the ib_client
 * @ibdev: the device
 * @link: on fos_devs, under fos_conns_lock
 * @nconns: connections and protection domains using it, under
 *	fos_conns_lock
 * @dying: being removed; no new connection may use it (fos_conns_lock)
 */
struct fos_ibdev {
	struct ib_device *ibdev;
	struct list_head link;
	unsigned int nconns;
	bool dying;
};

/**
 * struct fos_buf - one receive or send buffer
 * @cqe: completion hook
 * @conn: owner
 * @data: FOS_WIRE_MSG_MAX bytes
 * @dma: its DMA address
 * @done: send buffers: the sender's completion, or NULL
 * @free: send buffers: on fos_conn.tx_free while unused, on
 *	fos_conn.tx_sent, in the order they were posted, until reclaimed;
 *	receive buffers: on fos_conn.rx_defer while their message waits
 *	for process context
 * @status: receive buffers, deferred: the completion's status
 * @byte_len: receive buffers, deferred: the completion's length
 * @verified: receive buffers, deferred: verified in softirq already
 *	(its sequence, session and credits taken), its handler deferred
 * @deliver: receive buffers, @verified: not a duplicate of the session's
 */
struct fos_buf {
	struct ib_cqe cqe;
	struct fos_conn *conn;
	void *data;
	u64 dma;
	struct fos_fabric_done *done;
	struct list_head free;
	enum ib_wc_status status;
	u32 byte_len;
	bool verified;
	bool deliver;
};

enum fos_conn_state {
	FOS_CONN_CONNECTING,
	FOS_CONN_UP,
	FOS_CONN_CLOSING,
};

/**
 * struct fos_conn - one RC connection to a peer
 * @link: on fos_conns, under fos_conns_lock
 * @peer: the peer (holds a reference)
 * @id: the rdma_cm id, destroyed by fos_conn_close_work() only
 * @dev: the device, NULL until address resolution (fos_conns_lock)
 * @pd: its own protection domain (a reference), set with the QP: its
 *	QP, its buffers and every region registered for its peer
 * @setup_mutex: held by fos_conn_setup() (from an rdma_cm handler) while
 *	it makes @rx, @tx, @cq and the QP, and by fos_peer_connect_work()
 *	from publishing @id until it has started address resolution;
 *	fos_conn_close_work() takes it once before it looks at them, so it
 *	never sees half of a setup nor frees what a setup still uses
 * @cq: send and receive completions (IB_POLL_WORKQUEUE, or
 *	IB_POLL_SOFTIRQ with @rx_softirq)
 * @rx_softirq: completions run in softirq, and received messages whose
 *	handlers may not are deferred to @rx_work ("Receiving in softirq" in
 *	rx.c); fos_rx_softirq_for() when the connection was set up
 * @rx_lock: protects @rx_defer and @rx_ndefer; taken in the receive
 *	softirq, so with bottom halves off elsewhere
 * @rx_defer: receive buffers whose messages wait for @rx_work, in QP
 *	order
 * @rx_ndefer: messages deferred and not handled yet: those on @rx_defer
 *	and the one @rx_work is handling (read without the lock by
 *	fos_conn_drained())
 * @rx_work: handles @rx_defer's messages in process context (fos_rx_wq)
 * @qp_created: rdma_create_qp() succeeded
 * @active: we initiated it
 * @primary: messages to the peer go out on it once it is up (false only
 *	for the passive end of a connection to ourselves)
 * @lock: taken with bottom halves off (the receive softirq takes it);
 *	protects @state, @tx_credits, @owed, @held, @tx_free, @tx_sent,
 *	@sends, @unsignalled, @backlog, @rdma_wrs, @sq_progress, @quiet and
 *	@tx_seq
 * @state: enum fos_conn_state; CLOSING means fos_conn_close_work() is queued
 * @was_up: reached FOS_CONN_UP once
 * @tx_credits: messages we may send
 * @tx_credits_max: what the peer announced
 * @tx_max: largest message the peer takes, header included
 * @owed: buffers re-posted but not yet reported to the peer
 * @held: buffers re-posted whose credit waits for the request they
 *	carried to be served (fos_fabric_credit_done()), at most @nbufs / 2
 * @nbufs: entries in @rx and in @tx
 * @rx: receive buffers
 * @tx: send buffers
 * @tx_free: unused send buffers
 * @tx_sent: send buffers posted and not reclaimed, oldest first
 * @sends: entries on @tx_sent
 * @unsignalled: the newest entries of @tx_sent that asked for none: no
 *	completion will reclaim them until a later send asks for one
 * @backlog: struct fos_pending queued by FOS_SEND_QUEUE, oldest first
 * @nbacklog: entries on @backlog
 * @rdma_wrs: RDMA READs and REG_MRs posted and not completed, at most
 *	FOS_RDMA_SQ (under @lock)
 * @sq_progress: jiffies of the last send-queue completion, or of the post
 *	that found the send queue empty
 * @quiet: the send queue stalled; nothing is posted until a completion
 * @last_rx: jiffies of the last message received
 * @last_tx: jiffies of the last message sent
 * @born: jiffies at creation
 * @peer_epoch: the peer's epoch on this connection
 * @auth_mode: enum fractos_auth_mode when the handshake started
 * @auth_key: the secret of the handshake (a reference), NULL when insecure
 * @auth_alt_id: active end: the previous secret it offers too, or 0
 * @admitted: the peer proved itself (see "Admission"); set once, before
 *	the connection sends or serves anything
 * @admitting: holds admission slot @admit_slot (passive, not admitted
 *	yet; cm.c, "Admission slots")
 * @admit_slot: see @admitting
 * @hello_init: the initiator's hello, as sent (the handshake's transcript)
 * @hello_resp: the responder's hello, as sent
 * @tx_key: session key of what we send ("Channel binding" in wire.h), set
 *	before the first message is sent or received, then immutable
 * @rx_key: session key of what the peer sends, likewise
 * @tx_seq: messages posted so far (under @lock: the order of the posts)
 * @rx_seq: messages received and verified so far (only the receive
 *	path uses it: the completion handler, which runs one at a time per
 *	CQ, or @rx_work while @rx_defer is not empty)
 * @synced: the peer's session fields were taken from its first message
 *	here (fos_sess_sync()); before, none of the users' messages goes
 *	out (under @lock)
 * @rx_busy: a message's handler is running: written by the receive
 *	completion handler only (released when it is done, so that what the
 *	handler sent is in @sends), read by fos_peer_linger()
 * @qp_event: the last fatal QP event, for fos_qp_event_work()
 * @qp_event_work: fails the connection after a fatal QP event
 * @close_work: the teardown
 */
struct fos_conn {
	struct list_head link;
	struct fos_peer *peer;
	struct rdma_cm_id *id;
	struct fos_ibdev *dev;
	struct fos_pd *pd;
	struct mutex setup_mutex;	/* see @setup_mutex above */
	struct ib_cq *cq;
	bool rx_softirq;
	spinlock_t rx_lock;	/* see @rx_lock above */
	struct list_head rx_defer;
	u32 rx_ndefer;
	struct work_struct rx_work;
	bool qp_created;
	bool active;
	bool primary;
	spinlock_t lock;	/* see @lock above */
	enum fos_conn_state state;
	bool was_up;
	u32 tx_credits;
	u32 tx_credits_max;
	u32 tx_max;
	u32 owed;
	u32 held;
	u32 nbufs;
	struct fos_buf *rx;
	struct fos_buf *tx;
	struct list_head tx_free;
	struct list_head tx_sent;
	u32 sends;
	u32 unsignalled;
	struct list_head backlog;
	u32 nbacklog;
	u32 rdma_wrs;
	unsigned long sq_progress;
	bool quiet;
	unsigned long last_rx;
	unsigned long last_tx;
	unsigned long born;
	u32 peer_epoch;
	u8 auth_mode;
	struct fos_auth_key *auth_key;
	u32 auth_alt_id;
	bool admitted;
	bool admitting;
	u8 admit_slot;
	struct fos_wire_hello hello_init;
	struct fos_wire_hello hello_resp;
	siphash_key_t tx_key;
	siphash_key_t rx_key;
	u64 tx_seq;
	u64 rx_seq;
	bool synced;
	bool rx_busy;
	enum ib_event_type qp_event;
	struct work_struct qp_event_work;
	struct work_struct close_work;
};

/**
 * struct fos_session - what a peer and this node said to each other while
 *	both kept their epochs ("Sessions" in session.c)
 * @lock: protects the fields below; taken inside fos_conn.lock, with
 *	bottom halves off (the receive softirq takes it)
 * @gen: our generation of it, never zero, new at each end we make
 * @peer_gen: the peer's generation, 0 until it spoke (or it restarted)
 * @epoch: the peer's epoch the session is with
 * @tx_next: the number of our next new message (fos_wire_hdr.sseq)
 * @tx_acked: our messages the peer said it delivered
 * @kept_from: the first of our messages sent since without a grace
 *	period whose copy is kept: a session is kept over a link down only
 *	if every unacknowledged message has its copy
 * @rx_done: the peer's messages we delivered
 * @unacked: struct fos_pending sent and not acknowledged, oldest first
 * @nunacked: entries on @unacked
 * @resend: struct fos_pending for the next connection, oldest first:
 *	what was unacknowledged or waiting for a credit when the last one
 *	ended, then what was sent since
 * @nresend: entries on @resend
 * @down: the link is down and the session kept; the grace period runs
 * @reset_req: end the session with the connection (a protocol error)
 * @fresh: nothing said or heard since the session's last end
 * @grace_work: declares the node down when the grace period ends
 */
struct fos_session {
	spinlock_t lock;	/* see @lock above */
	u32 gen;
	u32 peer_gen;
	u32 epoch;
	u32 tx_next;
	u32 tx_acked;
	u32 kept_from;
	u32 rx_done;
	struct list_head unacked;
	u32 nunacked;
	struct list_head resend;
	u32 nresend;
	bool down;
	bool reset_req;
	bool fresh;
	struct delayed_work grace_work;
};

/**
 * struct fos_peer - a configured node
 * @ref: one for fos_peers, one per connection, one per user
 * @node_id: its node id, immutable
 * @addr: its address and port, immutable
 * @trust_uids: the uids it states are ours (NODE_TRUST_UIDS), immutable
 * @lock: protects the fields below it; taken with bottom halves off
 *	("Locking" in main.c)
 * @conn: the connection messages go out on, when up
 * @out: the connection we initiated (any state)
 * @in: the latest connection it initiated (any state)
 * @state: enum fractos_node_state
 * @epoch: last epoch seen, 0 for none
 * @backoff_ms: delay before the next connection attempt
 * @cookie: the admission cookie its last refusal gave us, or 0
 * @deleted: removed from fos_peers; no new connection, no reconnect
 * @connect_work: the next connection attempt (initiators only)
 * @wq: senders waiting for a credit
 * @stats: FRACTOS_STAT_* counters
 * @res: what it holds here, by enum fos_peer_res (fos_peer_res_get())
 * @draining: connections that were up and are closing, not yet drained:
 *	while there is one, a new connection is refused (session.c)
 * @sess: the session with it
 */
struct fos_peer {
	struct kref ref;
	u32 node_id;
	struct sockaddr_storage addr;
	bool trust_uids;
	spinlock_t lock;	/* see @lock above */
	struct fos_conn *conn;
	struct fos_conn *out;
	struct fos_conn *in;
	u8 state;
	u32 epoch;
	unsigned int backoff_ms;
	u64 cookie;
	bool deleted;
	struct delayed_work connect_work;
	wait_queue_head_t wq;
	atomic64_t stats[__FRACTOS_STAT_MAX];
	atomic_t res[FOS_PEER_NR_RES];
	atomic_t draining;
	struct fos_session sess;
};

/**
 * struct fos_pending - a message waiting on fos_conn.backlog for a credit,
 *	or one of the users' kept by the session until acknowledged
 * @link: on the backlog, or the session's @unacked or @resend
 * @type: message type
 * @numbered: @sseq is set: the message went out once already
 * @sseq: its number in the session (fos_wire_hdr.sseq)
 * @cookie: header cookie
 * @done: the sender's completion, or NULL
 * @len: bytes at @payload
 * @payload: the payload
 */
struct fos_pending {
	struct list_head link;
	u8 type;
	bool numbered;
	u32 sseq;
	u64 cookie;
	struct fos_fabric_done *done;
	u32 len;
	u8 payload[];
};

/**
 * struct fos_pd - the protection domain of one connection
 * @ref: one for the connection, one per region registered on it and one
 *	per transfer running on it (rdma.c)
 * @pd: the PD of the connection's QP, of its buffers' lkey and of every
 *	region registered for its peer: an rkey is valid on that QP alone
 * @dev: its device, counted in fos_ibdev.nconns until @pd is freed
 *
 * A region may outlive its connection (a grant is ended after the
 * connection's teardown), so the PD lives until its last user: the last
 * fos_pd_put() frees it, in process context.
 */
struct fos_pd {
	struct kref ref;
	struct ib_pd *pd;
	struct fos_ibdev *dev;
};

/* Shared between the files of the fabric (see main.c's DOC). */
/* main.c */
extern struct mutex fos_fabric_mutex;
extern struct list_head fos_conns;
extern struct list_head fos_devs;
extern struct xarray fos_peers;
extern unsigned int fos_fabric_ring;
extern unsigned int fos_fabric_tx_signal;
extern bool fos_fabric_tx_bh;
extern int fos_fabric_rx_softirq;
extern unsigned int fos_fabric_hb_ms;
extern unsigned int fos_fabric_grace_ms;
extern struct workqueue_struct *fos_fabric_wq;
extern struct workqueue_struct *fos_rx_wq;
extern u16 fos_listen_port;
extern atomic64_t fos_fabric_stats[__FRACTOS_STAT_MAX];
void fos_admit_release(struct fos_conn *conn);
extern struct delayed_work fos_hb_dwork;
void fos_stat_add(struct fos_peer *peer, unsigned int stat, u64 v);
bool fos_peer_initiator(u32 node_id);

/* peer.c */
void fos_peer_backoff_locked(struct fos_peer *peer);
void fos_peer_linger(struct fos_peer *peer);
void fos_peer_delete(struct fos_peer *peer);

/* session.c */
void fos_sess_init(struct fos_peer *peer);
void fos_sess_free(struct fos_peer *peer);
void fos_sess_restarted(struct fos_peer *peer, u32 epoch);
int fos_sess_sync(struct fos_conn *conn, const struct fos_wire_hdr *hdr);
bool fos_sess_acked(struct fos_conn *conn, const struct fos_wire_hdr *hdr);
int fos_sess_deliver(struct fos_conn *conn, const struct fos_wire_hdr *hdr);
bool fos_sess_room(const struct fos_conn *conn);
int fos_sess_post(struct fos_conn *conn, struct fos_pending *p);
int fos_sess_post_now(struct fos_conn *conn, u8 type, u64 cookie,
		      const void *payload, u32 len);
void fos_sess_conn_error(struct fos_conn *conn);
int fos_sess_queue(struct fos_peer *peer, u8 type, u64 cookie,
		   const void *payload, u32 len);
bool fos_sess_link_down_begin(struct fos_conn *conn);
bool fos_sess_link_down(struct fos_conn *conn, bool keep);
struct fos_pending *fos_pending_new(u8 type, u64 cookie, const void *payload,
				    u32 len, struct fos_fabric_done *done);
void fos_pending_drop(struct list_head *list);

/* conn.c */
void fos_conn_fail_err(struct fos_conn *conn, const char *what, int err);
int fos_post_recv(struct fos_conn *conn, struct fos_buf *b);
int fos_conn_setup(struct fos_conn *conn, struct ib_device *ibdev);
void fos_hello_fill(struct fos_wire_hello *h, struct fos_conn *conn, u32 dst);
void fos_conn_take_hello(struct fos_conn *conn, const struct fos_wire_hello *h);
void fos_peer_set_epoch(struct fos_peer *peer, u32 epoch);
void fos_peer_set_cookie(struct fos_peer *peer, u64 cookie);
bool fos_peer_in_epoch_locked(struct fos_peer *peer, u32 epoch);
bool fos_peer_in_epoch(struct fos_peer *peer, u32 epoch);
struct fos_conn *fos_conn_alloc(struct fos_peer *peer, bool active);
int fos_conn_publish(struct fos_conn *conn);
void fos_conn_free_unpublished(struct fos_conn *conn);
void fos_conn_established(struct fos_conn *conn,
			  const struct fos_wire_auth *auth);

/* tx.c */
int fos_conn_post_raw(struct fos_conn *conn, u8 type, u64 cookie,
		      const void *payload, u32 len,
		      struct fos_fabric_done *done, bool ctrl, u32 sseq);
int fos_conn_post_now(struct fos_conn *conn, u8 type, u64 cookie,
		      const void *payload, u32 len,
		      struct fos_fabric_done *done, bool ctrl);
void fos_conn_send_ctrl(struct fos_conn *conn, u8 type);
int fos_send(struct fos_peer *peer, u8 type, u64 cookie,
	     const void *payload, u32 len, struct fos_fabric_done *done,
	     unsigned int flags);
unsigned long fos_hb_interval(void);
void fos_hb_work(struct work_struct *work);

/* rx.c */
void fos_proto_error(struct fos_conn *conn, const char *why);
void fos_auth_failed(struct fos_conn *conn, const char *why);
void fos_rx_done(struct ib_cq *cq, struct ib_wc *wc);
void fos_rx_work(struct work_struct *work);
void fos_conn_credit_check(struct fos_conn *conn, u32 owed, bool now);
void fos_tx_done(struct ib_cq *cq, struct ib_wc *wc);

/* cm.c */
int fos_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev);
void fos_peer_connect_work(struct work_struct *work);
void fos_fabric_kick(void);

/* main.c, conn.c, tx.c, rx.c */
extern spinlock_t fos_conns_lock;
extern wait_queue_head_t fos_dev_wq;
extern u32 fos_fault_read_delay_ms;
extern u32 fos_fault_rx_defer_pct;

void fos_conn_fail(struct fos_conn *conn);
void fos_conn_sq_posted(struct fos_conn *conn);
bool fos_conn_sq_done(struct fos_conn *conn);

void fos_conn_tx_reclaim(struct fos_conn *conn, struct fos_buf *b);
void fos_conn_flush(struct fos_conn *conn);
void fos_wc_error(struct fos_conn *conn, enum ib_wc_status status,
		  const char *what);
void fos_dev_put(struct fos_ibdev *d);
struct fos_conn *fos_peer_serving_locked(struct fos_peer *peer);

/* peer.c */
void fos_peer_node_down(u32 node, u32 epoch);

/* rx.c */
int fos_rx_init(void);
void fos_rx_exit(void);
int fos_rx_register_own(const struct fos_msg_type *types, unsigned int n);
const char *fos_msg_type_name(u8 type);

/* rdma.c */
struct fos_pd *fos_pd_alloc(struct fos_ibdev *dev);
void fos_pd_put(struct fos_pd *pd);

/* PING (ping.c) */
int fos_ping(struct fos_peer *peer, u64 *rtt_ns);
int fos_ping_init(void);
void fos_ping_exit(void);

/* Configuration and introspection, for the netlink family (genl.c). */
int fos_fabric_node_add(u32 node_id, const struct sockaddr_storage *addr,
			bool trust_uids);
u16 fos_fabric_default_port(void);
int fos_fabric_node_del(u32 node_id);

/**
 * struct fos_node_info - a snapshot of one peer for NODE_LIST
 * @node_id: the peer's node id
 * @addr: its configured address and port
 * @state: enum fractos_node_state
 * @epoch: last epoch seen, 0 if never connected
 * @qpn: number of the QP messages go out on, 0 if not up
 * @credits: send credits now
 * @trust_uids: configured with NODE_TRUST_UIDS
 * @rx_softirq: its connection's completions run in softirq
 * @stats: FRACTOS_STAT_* counters
 */
struct fos_node_info {
	u32 node_id;
	struct sockaddr_storage addr;
	u8 state;
	u32 epoch;
	u32 qpn;
	u32 credits;
	bool trust_uids;
	bool rx_softirq;
	u64 stats[__FRACTOS_STAT_MAX];
};

int fos_fabric_node_info(u32 *node_id, struct fos_node_info *ni);

/**
 * struct fos_link_info - a snapshot of one RDMA device for LINK_LIST
 * @name: device name
 * @index: device index
 * @ports: number of ports
 * @state: enum ib_port_state of port 1
 * @conns: connections on it
 */
struct fos_link_info {
	char name[64];
	u32 index;
	u32 ports;
	u8 state;
	u32 conns;
};

int fos_fabric_link_info(unsigned long pos, struct fos_link_info *li);

/**
 * struct fos_fabric_info - fabric-wide state for STATS
 * @port: the listening port, 0 if none
 * @nodes: configured peers
 * @links: RDMA devices
 * @stats: FRACTOS_STAT_* counters summed over all peers, alive or gone
 */
struct fos_fabric_info {
	u16 port;
	u32 nodes;
	u32 links;
	u64 stats[__FRACTOS_STAT_MAX];
};

void fos_fabric_info(struct fos_fabric_info *fi);

int fos_genl_init(void);
void fos_genl_exit(void);

#endif /* FRACTOS_FABRIC_PRI_H */
