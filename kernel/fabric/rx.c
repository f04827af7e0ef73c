// SPDX-License-Identifier: GPL-2.0
/*
 * fractos fabric, receiving: the dispatch table, the admission of a
 * passive connection by its AUTH, credits returned and held.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/random.h>
#include "auth.h"
#include "pri.h"
#include "fos_trace.h"

/*
 * The transport's own rows: these, and PING and PONG (ping.c); users
 * register theirs (fos_fabric_register()).
 */
static const struct fos_msg_type fos_own_types[] = {
	{ FOS_WIRE_CREDIT, "credit", fos_wire_check_empty, .atomic = true },
	{ FOS_WIRE_HEARTBEAT, "heartbeat", fos_wire_check_empty,
	  .atomic = true },
	/* Consumed by fos_rx_done() before admission, refused after it. */
	{ FOS_WIRE_AUTH, "auth", fos_wire_check_auth },
};

/*
 * The dispatch table, by message type: the transport's rows and those its
 * users registered.  Filled at module load before the fabric starts (and
 * emptied after it stopped), read by every receive.
 */
static const struct fos_msg_type *fos_msg_types[FOS_WIRE_NR];

static int fos_rx_table_add(const struct fos_msg_type *types, unsigned int n,
			    bool own)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		u8 type = types[i].type;
		bool users = type >= FOS_FABRIC_TYPE_FIRST &&
			     type <= FOS_FABRIC_TYPE_LAST;

		if (!type || type >= FOS_WIRE_NR || users == own ||
		    !types[i].check ||
		    (types[i].recv_atomic && (!types[i].recv ||
					      types[i].held ||
					      types[i].atomic))) {
			fos_fabric_unregister(types, i);
			return -EINVAL;
		}
		if (fos_msg_types[type]) {
			fos_fabric_unregister(types, i);
			return -EBUSY;
		}
		WRITE_ONCE(fos_msg_types[type], &types[i]);
	}
	return 0;
}

/**
 * fos_fabric_register - add message types to the dispatch table
 * @types: the rows (each names its type, FOS_FABRIC_TYPE_FIRST to
 *	FOS_FABRIC_TYPE_LAST); they must stay valid until
 *	fos_fabric_unregister()
 * @n: entries at @types
 *
 * Called at module load, before fos_fabric_init(): a message of a type
 * nobody registered is a protocol error.
 *
 * Return: 0, -EINVAL (a type out of range) or -EBUSY (registered
 * already); nothing is registered on failure.
 */
int fos_fabric_register(const struct fos_msg_type *types, unsigned int n)
{
	return fos_rx_table_add(types, n, false);
}

/* The transport's own rows (its types only), as fos_fabric_register(). */
int fos_rx_register_own(const struct fos_msg_type *types, unsigned int n)
{
	return fos_rx_table_add(types, n, true);
}

/* A type's name, for the tracepoints: its row's, or "?". */
const char *fos_msg_type_name(u8 type)
{
	const struct fos_msg_type *t;

	t = type < FOS_WIRE_NR ? READ_ONCE(fos_msg_types[type]) : NULL;
	return t ? t->name : "?";
}

/* Take rows out of the dispatch table (module unload). */
void fos_fabric_unregister(const struct fos_msg_type *types, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		u8 type = types[i].type;

		if (type < FOS_WIRE_NR && fos_msg_types[type] == &types[i])
			WRITE_ONCE(fos_msg_types[type], NULL);
	}
}

/* The transport's own rows, from fos_fabric_init() and _exit(). */
int fos_rx_init(void)
{
	return fos_rx_register_own(fos_own_types, ARRAY_SIZE(fos_own_types));
}

void fos_rx_exit(void)
{
	fos_fabric_unregister(fos_own_types, ARRAY_SIZE(fos_own_types));
}

/* ---- completions ---- */

void fos_wc_error(struct fos_conn *conn, enum ib_wc_status status,
		  const char *what)
{
	if (status != IB_WC_WR_FLUSH_ERR)
		pr_warn_ratelimited("node %u: %s failed: %s\n",
				    conn->peer->node_id, what,
				    ib_wc_status_msg(status));
	fos_conn_fail(conn);
}

void fos_proto_error(struct fos_conn *conn, const char *why)
{
	/* What the peer said cannot be trusted to go on: the session ends. */
	if (conn->admitted)
		fos_sess_conn_error(conn);
	fos_peer_proto_error(conn->peer, why);
	pr_warn_ratelimited("node %u: protocol error: %s\n",
			    conn->peer->node_id, why);
	fos_conn_fail(conn);
}

/**
 * fos_peer_proto_error - a user of the transport found a message wrong
 * @peer: the peer that sent it
 * @why: for the tracepoint
 *
 * Counts it (FRACTOS_STAT_PROTO_ERRORS) and traces it; the connection
 * stays up (the user answers, or ignores, the message).
 */
void fos_peer_proto_error(struct fos_peer *peer, const char *why)
{
	trace_fos_proto_error(peer->node_id, why);
	fos_stat_add(peer, FRACTOS_STAT_PROTO_ERRORS, 1);
}

void fos_auth_failed(struct fos_conn *conn, const char *why)
{
	trace_fos_conn_state(conn->peer->node_id, 0, conn->peer_epoch,
			     FOS_TRACE_CONN_AUTH_FAIL, 0);
	fos_stat_add(NULL, FRACTOS_STAT_AUTH_FAILURES, 1);
	pr_warn_ratelimited("connection from %pISc as node %u: authentication failed: %s\n",
			    &conn->id->route.addr.dst_addr,
			    conn->peer->node_id, why);
	fos_conn_fail(conn);
}

/*
 * The first message on a passive connection: the initiator's AUTH.  If it
 * verifies, the connection is admitted: it takes the peer's incoming slot
 * (ending the connection it replaces: one of an epoch that is gone, or
 * one that is closing), the peer's epoch is updated, and the connection
 * goes up.  Anything else ends it, and so does a live incoming connection
 * of the same epoch: one connection per identity and epoch.
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
	fos_admit_release(conn);

	spin_lock_bh(&peer->lock);
	if (READ_ONCE(conn->state) == FOS_CONN_CLOSING) {
		/*
		 * Its close work may have taken it off peer->in already and
		 * be draining it (this completion runs in that drain): it
		 * must not become peer->in, which would outlive it.
		 */
		spin_unlock_bh(&peer->lock);
		return false;
	}
	if (fos_peer_in_epoch_locked(peer, conn->peer_epoch)) {
		/* Proven, but a second one: the first stays (security.rst). */
		spin_unlock_bh(&peer->lock);
		fos_stat_add(NULL, FRACTOS_STAT_REFUSED_CONNECTED, 1);
		pr_warn_ratelimited("connection from %pISc as node %u: refused: that node is connected with epoch %#x\n",
				    &conn->id->route.addr.dst_addr,
				    peer->node_id, conn->peer_epoch);
		fos_conn_fail(conn);
		return false;
	}
	if (peer->in && peer->in != conn) {
		/*
		 * Failed while peer->lock still keeps it: its close work
		 * frees it once it no longer finds it in peer->in.
		 */
		again = READ_ONCE(peer->in->state) != FOS_CONN_CLOSING;
		fos_conn_fail(peer->in);
	}
	if (atomic_read(&peer->draining) && peer->epoch == conn->peer_epoch) {
		/*
		 * One connection of an epoch delivers at a time ("Sessions"
		 * in session.c): the peer comes again once the old one
		 * drained.  (A new epoch replaces the old one at once; what
		 * the old one still delivers is dropped.)
		 */
		spin_unlock_bh(&peer->lock);
		fos_stat_add(NULL, FRACTOS_STAT_REFUSED_CONNECTED, 1);
		pr_info("node %u connects again; refused until its old connection drained\n",
			peer->node_id);
		fos_conn_fail(conn);
		return false;
	}
	conn->admitted = true;
	peer->in = conn;
	spin_unlock_bh(&peer->lock);
	if (again)
		pr_info("node %u connects again; its old connection ends\n",
			peer->node_id);
	fos_peer_set_epoch(peer, conn->peer_epoch);
	fos_conn_established(conn, NULL);
	return true;
}

/*
 * Channel binding (wire.h): the message is the peer's next one and its tag
 * is right.  The receive handler runs one completion at a time, in the
 * order the QP delivered them, so @rx_seq needs no lock.
 */
static bool fos_rx_bound(struct fos_conn *conn, struct fos_wire_hdr *hdr,
			 u32 byte_len)
{
	__le64 tag = hdr->tag;
	u64 want;

	if (le64_to_cpu(hdr->seq) != conn->rx_seq)
		return false;
	hdr->tag = 0;
	want = siphash(hdr, byte_len, &conn->rx_key);
	hdr->tag = tag;
	/* One 64-bit compare: no early exit that depends on the bytes. */
	if (want != le64_to_cpu(tag))
		return false;
	conn->rx_seq++;
	return true;
}

/*
 * Verify one received message, in QP order: its header, sequence and tag,
 * type and payload, admission and session; take its credits.  Returns its
 * row, or NULL if it went no further (the connection fails, or waits for
 * its session); *@deliver: not a duplicate of the session's.  In the
 * completion's context, or in fos_rx_work()'s ("Receiving in softirq").
 */
static const struct fos_msg_type *fos_rx_verify(struct fos_conn *conn,
						struct fos_buf *b,
						enum ib_wc_status status,
						u32 byte_len, bool *deliver)
{
	struct fos_peer *peer = conn->peer;
	const struct fos_msg_type *t;
	struct fos_wire_hdr *hdr = b->data;
	bool bad_credits;
	u32 credits, len;
	int ret;

	if (status != IB_WC_SUCCESS) {
		fos_wc_error(conn, status, "receive");
		return NULL;
	}
	if (fos_wire_check(hdr, byte_len)) {
		fos_proto_error(conn, "bad header");
		return NULL;
	}
	if (!fos_rx_bound(conn, hdr, byte_len)) {
		if (conn->admitted)
			fos_proto_error(conn, "bad sequence number or tag");
		else
			fos_auth_failed(conn, "bad sequence number or tag");
		return NULL;
	}
	t = READ_ONCE(fos_msg_types[hdr->type]);
	if (!t) {
		fos_proto_error(conn, "unknown type");
		return NULL;
	}
	len = le32_to_cpu(hdr->len);
	if (t->check(hdr + 1, len)) {
		fos_proto_error(conn, t->name);
		return NULL;
	}
	if (unlikely(!conn->admitted || hdr->type == FOS_WIRE_AUTH) &&
	    !fos_conn_admit(conn, hdr))
		return NULL;
	/* The session: synced by the first message, acknowledged by each. */
	if (unlikely(!conn->synced)) {
		ret = fos_sess_sync(conn, hdr);
		if (ret == -EPROTO)
			fos_proto_error(conn, "bad session acknowledgment");
		if (ret)
			return NULL;
	}
	if (unlikely(!fos_sess_acked(conn, hdr))) {
		fos_proto_error(conn, "bad session acknowledgment");
		return NULL;
	}
	*deliver = true;
	if (fos_wire_type_remote(hdr->type)) {
		ret = fos_sess_deliver(conn, hdr);
		if (unlikely(ret < 0)) {
			fos_proto_error(conn, "bad session number");
			return NULL;
		}
		*deliver = ret;
	}

	credits = le16_to_cpu(hdr->credits);
	spin_lock_bh(&conn->lock);
	bad_credits = conn->tx_credits + credits > conn->tx_credits_max;
	if (!bad_credits)
		conn->tx_credits += credits;
	spin_unlock_bh(&conn->lock);
	if (bad_credits) {
		fos_proto_error(conn, "too many credits");
		return NULL;
	}
	if (credits) {
		fos_conn_flush(conn);
		wake_up_all(&peer->wq);
	}
	WRITE_ONCE(conn->last_rx, jiffies);
	fos_stat_add(peer, FRACTOS_STAT_RX_MSGS, 1);
	fos_stat_add(peer, FRACTOS_STAT_RX_BYTES, byte_len);
	if (fos_wire_type_remote(hdr->type))
		fos_stat_add(peer, FRACTOS_STAT_RX_REMOTE_MSGS, 1);
	trace_fos_msg_rx(peer->node_id, conn->id->qp->qp_num, t->name, len,
			 le64_to_cpu(hdr->cookie));
	return t;
}

/*
 * Run @t's handler on @b's message: @recv, or with @atomic @recv_atomic
 * (whose answer is returned; 0 for @recv).
 */
static int fos_rx_call(struct fos_conn *conn, struct fos_buf *b,
		       const struct fos_msg_type *t, bool atomic)
{
	struct fos_wire_hdr *hdr = b->data;
	struct fos_rx_info rx = {
		.type = hdr->type, .cookie = le64_to_cpu(hdr->cookie),
	};
	u32 len = le32_to_cpu(hdr->len);
	int ret = 0;

	WRITE_ONCE(conn->rx_busy, true);
	if (atomic)
		ret = t->recv_atomic(conn->peer, &rx, hdr + 1, len);
	else
		t->recv(conn->peer, &rx, hdr + 1, len);
	/* What it sent is in @sends: fos_peer_linger() */
	smp_store_release(&conn->rx_busy, false);
	return ret;
}

/*
 * A verified message's handler (@t's @recv, unless @deliver is false: a
 * duplicate, or handled in softirq already), then its buffer posted again
 * and its credit owed.
 */
static void fos_rx_dispatch(struct fos_conn *conn, struct fos_buf *b,
			    const struct fos_msg_type *t, bool deliver)
{
	struct fos_wire_hdr *hdr = b->data;
	bool auth = hdr->type == FOS_WIRE_AUTH, held = false;
	u32 owed;
	int ret;

	/*
	 * A held credit is counted before the handler runs: the request may
	 * be refused, or served, before this returns ("Held credits").
	 */
	if (t->held && deliver) {
		spin_lock_bh(&conn->lock);
		held = conn->held < conn->nbufs / 2;
		if (held)
			conn->held++;
		spin_unlock_bh(&conn->lock);
	}
	/* A duplicate's credit goes back; the handler saw it once already. */
	if (t->recv && deliver)
		fos_rx_call(conn, b, t, false);

	if (READ_ONCE(conn->state) == FOS_CONN_CLOSING)
		return;
	/* A credit is returned only for a buffer that is posted again. */
	ret = fos_post_recv(conn, b);
	if (ret) {
		fos_conn_fail_err(conn, "receive post", ret);
		return;
	}
	spin_lock_bh(&conn->lock);
	owed = held ? conn->owed : ++conn->owed;
	spin_unlock_bh(&conn->lock);
	fos_conn_credit_check(conn, owed, auth);
}

/* One received message, verified and handled in process context. */
static void fos_rx_handle(struct fos_conn *conn, struct fos_buf *b,
			  enum ib_wc_status status, u32 byte_len)
{
	const struct fos_msg_type *t;
	bool deliver;

	t = fos_rx_verify(conn, b, status, byte_len, &deliver);
	if (t)
		fos_rx_dispatch(conn, b, t, deliver);
}

/**
 * DOC: Receiving in softirq
 *
 * With fabric_rx_softirq (on by default but over rxe from Linux 6.4:
 * fos_rx_softirq_for()), a connection's CQ is polled in softirq
 * (IB_POLL_SOFTIRQ) instead of a work item.  Send and RDMA
 * completions run there, and so does a received message whose handler
 * may (struct fos_msg_type.atomic: CREDIT, HEARTBEAT, ACK, GRANT_REPLY):
 * an answer wakes its caller straight from the completion.  Every other
 * message, and every message of a connection not admitted or not synced
 * yet, joins the connection's FIFO (@rx_defer), which fos_rx_work()
 * drains in process context on fos_rx_wq (high priority, as the CQ's own
 * work item would be).
 *
 * A row with a @recv_atomic (INVOKE) is verified in softirq too, and its
 * handler tried there first; one that defers (FOS_RX_DEFER, having done
 * nothing) joins the FIFO marked @verified, and fos_rx_work() runs only
 * its @recv, its sequence, session and credits taken once.
 *
 * Order is the QP's: a message is handled in softirq only when no
 * deferred message is left, the one fos_rx_work() is handling included
 * (@rx_ndefer), so at most one of the two contexts handles a
 * connection's messages at any time.
 * A deferred message keeps its buffer unposted (and its credit) until
 * handled: the ring bounds the FIFO.  The close work drains the QP and
 * then flushes fos_rx_work() before it frees the buffers.  The type is
 * read before the message is verified, only to choose the context;
 * verification runs in whichever is chosen.  The locks both contexts take
 * (fos_conn.lock, the session's, fos_rpcs' and the remote layer's event
 * list) are taken with bottom halves off everywhere, whatever the
 * parameter says.
 *
 * An answer's work item ran on the kworker that had just sent the
 * request, with no switch, so the hop removed for answers cost little
 * (Documentation/benchmarks.rst, "Completions in softirq").  The hop that
 * costs is the INVOKE's: its @recv_atomic (fos_invoke_recv_atomic())
 * delivers the common case here and answers it, and defers the rest.
 * debugfs fault_rx_defer_pct defers a share of those at random, for the
 * tests of order.
 */

/* May @b's message, completed with @status, be handled in softirq? */
static bool fos_rx_atomic(struct fos_conn *conn, struct fos_buf *b,
			  enum ib_wc_status status, u32 byte_len)
{
	const struct fos_wire_hdr *hdr = b->data;
	const struct fos_msg_type *t;

	if (status != IB_WC_SUCCESS)
		return true;	/* the connection fails; nothing sleeps */
	if (!READ_ONCE(conn->admitted) || !READ_ONCE(conn->synced) ||
	    byte_len < sizeof(*hdr) || hdr->type >= FOS_WIRE_NR)
		return false;
	t = READ_ONCE(fos_msg_types[hdr->type]);
	return t && (t->atomic || t->recv_atomic) &&
	       hdr->type != FOS_WIRE_AUTH;
}

/* Defer @b's message to fos_rx_work(), as it is or @verified already. */
static void fos_rx_defer(struct fos_conn *conn, struct fos_buf *b,
			 enum ib_wc_status status, u32 byte_len)
{
	bool queue;

	b->status = status;
	b->byte_len = byte_len;
	spin_lock(&conn->rx_lock);
	list_add_tail(&b->free, &conn->rx_defer);
	queue = !conn->rx_ndefer++;
	spin_unlock(&conn->rx_lock);
	if (queue)
		queue_work(fos_rx_wq, &conn->rx_work);
}

/*
 * Fault injection for the tests, in debugfs only
 * (/sys/kernel/debug/fractos/fault_rx_defer_pct): the share, in percent,
 * of messages a @recv_atomic would be tried on that are deferred instead,
 * as it may defer any of them.
 */
u32 fos_fault_rx_defer_pct;

static bool fos_rx_fault_defer(void)
{
	u32 pct = READ_ONCE(fos_fault_rx_defer_pct);

	return pct && get_random_u32() % 100 < pct;
}

/* One received message in softirq: an atomic row's, or a @recv_atomic's. */
static void fos_rx_handle_soft(struct fos_conn *conn, struct fos_buf *b,
			       enum ib_wc_status status, u32 byte_len)
{
	const struct fos_msg_type *t;
	bool deliver;

	t = fos_rx_verify(conn, b, status, byte_len, &deliver);
	if (!t)
		return;
	if (t->atomic || !deliver) {
		fos_rx_dispatch(conn, b, t, deliver);
		return;
	}
	if (fos_rx_fault_defer() ||
	    fos_rx_call(conn, b, t, true) == FOS_RX_DEFER) {
		b->verified = true;
		b->deliver = deliver;
		fos_rx_defer(conn, b, status, byte_len);
		return;
	}
	fos_rx_dispatch(conn, b, t, false);	/* handled: the rest */
}

void fos_rx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct fos_buf *b = container_of(wc->wr_cqe, struct fos_buf, cqe);
	struct fos_conn *conn = b->conn;
	bool now;

	if (wc->status == IB_WC_SUCCESS)
		ib_dma_sync_single_for_cpu(conn->dev->ibdev, b->dma,
					   FOS_WIRE_MSG_MAX, DMA_FROM_DEVICE);
	if (!conn->rx_softirq) {
		fos_rx_handle(conn, b, wc->status, wc->byte_len);
		return;
	}
	/*
	 * Nothing else changes @rx_ndefer from 0 while this runs: only this
	 * context defers, and fos_rx_work() has nothing to hand back.
	 */
	spin_lock(&conn->rx_lock);
	now = !conn->rx_ndefer &&
	      fos_rx_atomic(conn, b, wc->status, wc->byte_len);
	spin_unlock(&conn->rx_lock);
	if (now)
		fos_rx_handle_soft(conn, b, wc->status, wc->byte_len);
	else
		fos_rx_defer(conn, b, wc->status, wc->byte_len);
}

/* The deferred messages of a connection, in order (see above). */
void fos_rx_work(struct work_struct *work)
{
	struct fos_conn *conn = container_of(work, struct fos_conn, rx_work);
	struct fos_buf *b;

	for (;;) {
		/*
		 * Off the list before it is handled: the handler posts the
		 * buffer again, and its next message may complete (and be
		 * deferred) before the handler returns.  It still counts in
		 * @rx_ndefer until then, so nothing overtakes it.
		 */
		spin_lock_bh(&conn->rx_lock);
		b = list_first_entry_or_null(&conn->rx_defer, struct fos_buf,
					     free);
		if (b)
			list_del(&b->free);
		spin_unlock_bh(&conn->rx_lock);
		if (!b)
			return;
		if (b->verified) {
			const struct fos_wire_hdr *hdr = b->data;

			/* Cleared before the buffer is posted again. */
			b->verified = false;
			fos_rx_dispatch(conn, b,
					READ_ONCE(fos_msg_types[hdr->type]),
					b->deliver);
		} else {
			fos_rx_handle(conn, b, b->status, b->byte_len);
		}
		spin_lock_bh(&conn->rx_lock);
		conn->rx_ndefer--;
		spin_unlock_bh(&conn->rx_lock);
		cond_resched();
	}
}

/*
 * @owed credits are owed to the peer: send them in a CREDIT once there
 * are enough.  At least two: a CREDIT consumes a buffer too, and
 * answering each one with another would never stop.  @now: the AUTH's
 * credit goes back at once (an admitted connection starts with all its
 * credits).
 */
void fos_conn_credit_check(struct fos_conn *conn, u32 owed, bool now)
{
	if (owed >= max(conn->nbufs / 4, 2U) || (now && owed))
		fos_conn_send_ctrl(conn, FOS_WIRE_CREDIT);
}

/**
 * DOC: Held credits
 *
 * COPY, GRANT and LOOKUP are served in process context, after their
 * receive buffer was posted again, and a REVOKE_REQ waits there for the
 * object's keys to die.  Their credit is not returned then but
 * held, at most half of the ring per connection, until the handler says
 * the request was served: a peer cannot have more requests waiting here
 * than credits it gave up, and the other half of the ring stays free for
 * the answers the work itself may need (a COPY served here waits for the
 * peer's GRANT_REPLY).  The credit is counted as held before the handler
 * runs, so that a request refused at once, or served before the receive
 * path is done, gives it back correctly.
 */

/**
 * fos_fabric_credit_done - a request with a held credit was served
 * @peer: the peer that sent it
 *
 * Each such request (see "Held credits" above) calls this once, whatever
 * the outcome; a call that finds no held credit on the peer's connection
 * (it is new, or the request's credit was not held: the cap was reached)
 * changes nothing, or returns another held credit early.
 */
void fos_fabric_credit_done(struct fos_peer *peer)
{
	struct fos_conn *conn;
	u32 owed = 0;

	spin_lock_bh(&peer->lock);
	conn = fos_peer_serving_locked(peer);
	if (conn) {
		spin_lock_bh(&conn->lock);
		if (conn->held && conn->state == FOS_CONN_UP) {
			conn->held--;
			owed = ++conn->owed;
		}
		spin_unlock_bh(&conn->lock);
		fos_conn_credit_check(conn, owed, false);
	}
	spin_unlock_bh(&peer->lock);
}

void fos_tx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct fos_buf *b = container_of(wc->wr_cqe, struct fos_buf, cqe);
	struct fos_conn *conn = b->conn;
	struct fos_fabric_done *done = b->done;
	u32 owed;

	b->done = NULL;
	spin_lock_bh(&conn->lock);
	fos_conn_tx_reclaim(conn, b);
	fos_conn_sq_done(conn);
	owed = conn->owed;
	spin_unlock_bh(&conn->lock);
	if (done)
		done->fn(done, wc->status == IB_WC_SUCCESS ? 0 : -ECOMM);
	if (wc->status != IB_WC_SUCCESS) {
		fos_wc_error(conn, wc->status, "send");
	} else {
		fos_conn_flush(conn);
		/*
		 * A CREDIT that found no free send buffer was dropped: it
		 * goes now, not with the next message received (there may
		 * be none until the peer gets it).
		 */
		fos_conn_credit_check(conn, owed, false);
	}
	wake_up_all(&conn->peer->wq);
}
