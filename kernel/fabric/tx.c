// SPDX-License-Identifier: GPL-2.0
/*
 * fractos fabric, sending: credits, the backlog, send-queue stalls
 * and the heartbeat.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/slab.h>
#include "pri.h"
#include "fos_trace.h"

/* ---- sending ---- */

/**
 * DOC: Unsignalled sends
 *
 * A completion is a work item on the CQ's workqueue, and a message's send
 * completion says only that its buffer may be used again.  So a message
 * send asks for one (IB_SEND_SIGNALED) only when something needs it: one
 * in fabric_tx_signal (at most half the ring), a send with a @done, a
 * HEARTBEAT, and the send that takes the last free buffer.  An RC send
 * queue completes in order, so the completion of a send reclaims it and
 * every message send posted before it (fos_conn.tx_sent, oldest first);
 * an unsignalled send that fails completes with its error all the same.
 *
 * Fewer than half the ring's sends after the last signalled one wait for a
 * later one to reclaim them (fos_conn.unsignalled), so whenever no buffer
 * is free a signalled send is in flight, whose completion frees some.  An
 * idle connection's heartbeat reclaims them within an interval, and
 * fos_peer_linger() sends one when only they are left.  The stall check
 * counts only the sends a completion will come for.
 */

/* WRs in flight that a completion will come for.  Caller holds conn->lock. */
static bool fos_conn_sq_busy(const struct fos_conn *conn)
{
	return conn->sends != conn->unsignalled || conn->rdma_wrs;
}

/* A WR is about to count as in flight.  Caller holds conn->lock. */
void fos_conn_sq_posted(struct fos_conn *conn)
{
	lockdep_assert_held(&conn->lock);
	if (!fos_conn_sq_busy(conn))
		conn->sq_progress = jiffies;
}

/*
 * The completion of send @b: it and every message send posted before it
 * go back to the free list.  Caller holds conn->lock.
 */
void fos_conn_tx_reclaim(struct fos_conn *conn, struct fos_buf *b)
{
	struct fos_buf *f, *tmp;

	lockdep_assert_held(&conn->lock);
	list_for_each_entry_safe(f, tmp, &conn->tx_sent, free) {
		list_move_tail(&f->free, &conn->tx_free);
		conn->sends--;
		if (f == b)
			break;
	}
	/* Only an unsignalled send that failed reclaims from the tail. */
	conn->unsignalled = min(conn->unsignalled, conn->sends);
}

/*
 * A send-queue WR completed (and no longer counts).  Caller holds
 * conn->lock.  Return: posting had stopped for a stall and may resume.
 */
bool fos_conn_sq_done(struct fos_conn *conn)
{
	bool was_quiet = conn->quiet;

	lockdep_assert_held(&conn->lock);
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

	spin_lock_bh(&conn->lock);
	since = conn->sq_progress;
	stalled = !conn->quiet && fos_conn_sq_busy(conn) &&
		  time_after(now, since + msecs_to_jiffies(FOS_SQ_STALL_MS));
	if (stalled)
		conn->quiet = true;
	spin_unlock_bh(&conn->lock);
	if (!stalled)
		return;
	fos_stat_add(conn->peer, FRACTOS_STAT_TX_STALLS, 1);
	pr_info_ratelimited("node %u: no send completion for %u ms, sends paused until one\n",
			    conn->peer->node_id, jiffies_to_msecs(now - since));
}

/**
 * fos_conn_post_raw - frame one message and post it on @conn
 * @conn: the connection; caller holds its lock
 * @type: message type
 * @cookie: header cookie
 * @payload: @len bytes
 * @len: payload length
 * @done: completion of the send, or NULL
 * @ctrl: a CREDIT or HEARTBEAT, which may spend the last credit
 * @sseq: a user's message: its number in the session (session.c, whose
 *	lock the caller then holds); else 0
 *
 * Return: 0, -ENOTCONN, -EMSGSIZE, -EAGAIN (no credit, no buffer, a
 * stall) or the QP's error.
 */
int fos_conn_post_raw(struct fos_conn *conn, u8 type, u64 cookie,
		      const void *payload, u32 len,
		      struct fos_fabric_done *done, bool ctrl, u32 sseq)
{
	struct fos_session *s = &conn->peer->sess;
	struct fos_wire_hdr *hdr;
	struct fos_buf *b;
	struct ib_sge sge;
	struct ib_send_wr wr = {};
	u32 total = sizeof(*hdr) + len;
	u32 owed = conn->owed;
	bool signal;
	int ret;

	lockdep_assert_held(&conn->lock);
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
	hdr->seq = cpu_to_le64(conn->tx_seq);
	/* Session fields: written by the receive path, read unlocked here. */
	hdr->sseq = cpu_to_le32(sseq);
	hdr->sack = cpu_to_le32(READ_ONCE(s->rx_done));
	hdr->sess = cpu_to_le32(READ_ONCE(s->gen));
	hdr->esess = cpu_to_le32(READ_ONCE(s->peer_gen));
	hdr->tag = 0;
	if (len)
		memcpy(hdr + 1, payload, len);
	/* Channel binding (wire.h): posts are in @tx_seq order, under @lock. */
	hdr->tag = cpu_to_le64(siphash(hdr, total, &conn->tx_key));
	ib_dma_sync_single_for_device(conn->dev->ibdev, b->dma, total,
				      DMA_TO_DEVICE);

	sge.addr = b->dma;
	sge.length = total;
	sge.lkey = conn->pd->pd->local_dma_lkey;
	wr.wr_cqe = &b->cqe;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	/* "Unsignalled sends" above */
	signal = done || type == FOS_WIRE_HEARTBEAT ||
		 conn->unsignalled + 1 >= min(READ_ONCE(fos_fabric_tx_signal),
					      conn->nbufs / 2) ||
		 list_is_singular(&conn->tx_free);
	wr.send_flags = signal ? IB_SEND_SIGNALED : 0;
	b->done = done;
	ret = ib_post_send(conn->id->qp, &wr, NULL);
	if (ret) {
		b->done = NULL;
		return ret;
	}
	list_move_tail(&b->free, &conn->tx_sent);
	conn->tx_seq++;
	fos_conn_sq_posted(conn);
	conn->sends++;
	conn->unsignalled = signal ? 0 : conn->unsignalled + 1;
	conn->tx_credits--;
	conn->owed -= owed;
	conn->last_tx = jiffies;
	fos_stat_add(conn->peer, FRACTOS_STAT_TX_MSGS, 1);
	fos_stat_add(conn->peer, FRACTOS_STAT_TX_BYTES, total);
	if (fos_wire_type_remote(type))
		fos_stat_add(conn->peer, FRACTOS_STAT_TX_REMOTE_MSGS, 1);
	/* (the name is looked up only while the event is on) */
	if (trace_fos_msg_tx_enabled())
		trace_fos_msg_tx(conn->peer->node_id, conn->id->qp->qp_num,
				 fos_msg_type_name(type), len, cookie);
	return 0;
}

/*
 * Post one message on @conn now.  Caller holds conn->lock.  @ctrl messages
 * (CREDIT, HEARTBEAT) may spend the last credit.  A user's message is
 * numbered, and kept by the session until the peer acknowledges it while
 * a grace period is set.
 */
int fos_conn_post_now(struct fos_conn *conn, u8 type, u64 cookie,
		      const void *payload, u32 len,
		      struct fos_fabric_done *done, bool ctrl)
{
	struct fos_pending *p;
	int ret;

	lockdep_assert_held(&conn->lock);
	if (!fos_wire_type_remote(type))
		return fos_conn_post_raw(conn, type, cookie, payload, len, done,
					 ctrl, 0);
	if (!conn->synced)
		return -EAGAIN;
	/* Nothing is sent again without a grace period: no copy. */
	if (!READ_ONCE(fos_fabric_grace_ms))
		return fos_sess_post_now(conn, type, cookie, payload, len);
	p = fos_pending_new(type, cookie, payload, len, done);
	if (!p)
		return -ENOMEM;
	ret = fos_sess_post(conn, p);
	if (ret)
		kfree(p);
	return ret;
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

	lockdep_assert_held(&conn->lock);
	if (conn->nbacklog >= conn->nbufs)
		return -EAGAIN;
	p = fos_pending_new(type, cookie, payload, len, done);
	if (!p)
		return -ENOMEM;
	list_add_tail(&p->link, &conn->backlog);
	conn->nbacklog++;
	return 0;
}

/* Post the backlog's first message.  Caller holds conn->lock. */
static int fos_conn_post_pending(struct fos_conn *conn, struct fos_pending *p)
{
	int ret;

	list_del(&p->link);
	if (fos_wire_type_remote(p->type)) {
		ret = fos_sess_post(conn, p);	/* the session's on success */
	} else {
		ret = fos_conn_post_raw(conn, p->type, p->cookie, p->payload,
					p->len, p->done, false, 0);
		if (!ret)
			kfree(p);
	}
	if (ret)
		list_add(&p->link, &conn->backlog);
	return ret;
}

/* Send what the backlog holds, as far as credits allow. */
void fos_conn_flush(struct fos_conn *conn)
{
	int ret = 0;

	spin_lock_bh(&conn->lock);
	while (conn->nbacklog) {
		ret = fos_conn_post_pending(conn,
					    list_first_entry(&conn->backlog,
							     struct fos_pending,
							     link));
		if (ret)
			break;
		conn->nbacklog--;
	}
	spin_unlock_bh(&conn->lock);
	if (ret && ret != -EAGAIN && ret != -ENOTCONN)
		fos_conn_fail_err(conn, "send", ret);
}

/* A CREDIT or HEARTBEAT on @conn; dropped if it cannot go now. */
void fos_conn_send_ctrl(struct fos_conn *conn, u8 type)
{
	int ret;

	spin_lock_bh(&conn->lock);
	if (type == FOS_WIRE_CREDIT && !conn->owed)
		ret = 0;
	else
		ret = fos_conn_post(conn, type, 0, NULL, 0, NULL, true);
	spin_unlock_bh(&conn->lock);
	if (ret && ret != -EAGAIN && ret != -ENOTCONN)
		fos_conn_fail_err(conn, "send", ret);
}

/*
 * @conn, the peer's connection, fails and its close work has not taken it
 * from the peer yet: with a grace period, a user's message waits on its
 * backlog, which the session takes over when the link goes down
 * (fos_sess_link_down()), as if it had come a moment later.  Caller holds
 * peer->lock (so the close work has not begun) and conn->lock.
 */
static bool fos_conn_closing_keeps(const struct fos_conn *conn, u8 type)
{
	lockdep_assert_held(&conn->lock);
	return conn->state == FOS_CONN_CLOSING && conn->was_up &&
	       conn->primary && fos_wire_type_remote(type) &&
	       READ_ONCE(fos_fabric_grace_ms);
}

static int fos_peer_try_send(struct fos_peer *peer, u8 type, u64 cookie,
			     const void *payload, u32 len,
			     struct fos_fabric_done *done, unsigned int flags)
{
	struct fos_conn *conn;
	bool queued = false;
	int ret;

	spin_lock_bh(&peer->lock);
	conn = peer->conn;
	if (!conn) {
		/* The link may be down with the session kept (session.c). */
		ret = fos_sess_queue(peer, type, cookie, payload, len);
	} else {
		spin_lock_bh(&conn->lock);
		ret = fos_conn_post(conn, type, cookie, payload, len, done,
				    false);
		if (ret == -EAGAIN && (flags & FOS_SEND_QUEUE)) {
			fos_stat_add(peer, FRACTOS_STAT_NO_CREDITS, 1);
			ret = fos_conn_queue(conn, type, cookie, payload, len,
					     done);
			queued = true;
		} else if (ret == -ENOTCONN &&
			   fos_conn_closing_keeps(conn, type)) {
			ret = fos_conn_queue(conn, type, cookie, payload, len,
					     done) ? -ENOTCONN : 0;
			queued = true;
		}
		spin_unlock_bh(&conn->lock);
		if (ret && ret != -EAGAIN && ret != -ENOTCONN &&
		    ret != -EMSGSIZE)
			fos_conn_fail_err(conn, "send", ret);
	}
	spin_unlock_bh(&peer->lock);
	if (ret == -EAGAIN && !queued)
		fos_stat_add(peer, FRACTOS_STAT_NO_CREDITS, 1);
	return ret;
}

/**
 * DOC: Sending with BH off
 *
 * A software RDMA driver may leave a post's work to a softirq: rxe on 6.1
 * schedules a tasklet for a kernel QP's send queue, and one raised in
 * process context waits for ksoftirqd, a wake-up and a context switch
 * per message.  With fabric_tx_bh, fos_send() posts with bottom halves
 * disabled, so that the tasklet runs as it enables them again, on the
 * sender's CPU, after the peer's and connection's locks are dropped.
 * Since the connection's lock is taken with bottom halves off (rx.c,
 * "Receiving in softirq"), every post, an RDMA READ's too, has that
 * effect at the latest when that lock is released: fabric_tx_bh=0 only
 * moves the tasklet under the peer's lock, and no longer measures the
 * hop it removed (the A/B of benchmarks.rst, "Sends without a hop", was
 * measured before).  A driver that rings a doorbell (a NIC, rxe on 6.12
 * whose tasks are work items) loses nothing.  Callers have interrupts
 * on.
 */

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

	spin_lock_bh(&peer->lock);
	conn = peer->conn;
	if (conn) {
		spin_lock_bh(&conn->lock);
		ok = conn->state != FOS_CONN_UP || room(conn);
		spin_unlock_bh(&conn->lock);
	}
	spin_unlock_bh(&peer->lock);
	return ok;
}

/*
 * A message could go out now (a credit to spare, a buffer, no backlog, no
 * stall, the session synced, room for its copy).
 */
static bool fos_conn_sendable(const struct fos_conn *conn)
{
	return conn->tx_credits >= 2 && !list_empty(&conn->tx_free) &&
	       !conn->nbacklog && !conn->quiet && conn->synced &&
	       fos_sess_room(conn);
}

/**
 * fos_send - send one message of any type to a peer (the transport's own
 *	PING and PONG; users go through fos_fabric_send())
 * @peer: the peer
 * @type: a message type: the transport's (fabric/wire.h) or a user's
 * @cookie: goes into the header as is
 * @payload: @len bytes, copied before the function returns
 * @len: payload length, at most FOS_FABRIC_PAYLOAD_MAX and, with the
 *	header, the peer's buffer size
 * @done: called when the send completes, or NULL
 * @flags: FOS_SEND_WAIT to sleep for a credit (process context only), or
 *	FOS_SEND_QUEUE to queue the message behind the others that wait for
 *	one (process or softirq context, interrupts on; the backlog holds up
 *	to fabric_ring messages)
 *
 * Messages to one peer arrive in the order they were sent, or not at all
 * (the connection fails; the peer's handlers see no gap in between).  A
 * user's messages are the session's (session.c): delivered once, in
 * order, across connections of the same two epochs; while the link is
 * down with the session kept they are queued.
 *
 * Return: 0 (sent or queued; @done will be called), -ENOTCONN (the peer is
 * not up, and no session waits for it), -EAGAIN (no credit, the backlog
 * is full, or the send queue stalled), -ETIMEDOUT,
 * -ERESTARTSYS, -EMSGSIZE, -ENOMEM, or another error from the QP.
 */
int fos_send(struct fos_peer *peer, u8 type, u64 cookie,
	     const void *payload, u32 len, struct fos_fabric_done *done,
	     unsigned int flags)
{
	long left = FOS_SEND_TIMEOUT;
	int ret;

	lockdep_assert_irqs_enabled();
	if (flags & FOS_SEND_WAIT)
		might_sleep();
	if (WARN_ON_ONCE(!type || type >= FOS_WIRE_NR))
		return -EINVAL;
	if (len > FOS_FABRIC_PAYLOAD_MAX)
		return -EMSGSIZE;
	for (;;) {
		/* "Sending with BH off" above */
		bool bh = READ_ONCE(fos_fabric_tx_bh);

		if (bh)
			local_bh_disable();
		ret = fos_peer_try_send(peer, type, cookie, payload, len, done,
					flags);
		if (bh)
			local_bh_enable();
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

/**
 * fos_fabric_send - send one message of a user's type to a peer
 * @peer: the peer
 * @type: FOS_FABRIC_TYPE_FIRST..FOS_FABRIC_TYPE_LAST
 * @cookie: goes into the header as is
 * @payload: @len bytes, copied before the function returns
 * @len: payload length
 * @done: must be NULL: the session may send it again (session.c)
 * @flags: FOS_SEND_WAIT or FOS_SEND_QUEUE (fos_send())
 *
 * The transport's own messages (credits, heartbeats, AUTH, PING) are not
 * its users' to send.
 *
 * Return: -EINVAL for another type or a @done, else as fos_send().
 */
int fos_fabric_send(struct fos_peer *peer, u8 type, u64 cookie,
		    const void *payload, u32 len, struct fos_fabric_done *done,
		    unsigned int flags)
{
	if (WARN_ON_ONCE(type < FOS_FABRIC_TYPE_FIRST ||
			 type > FOS_FABRIC_TYPE_LAST || done))
		return -EINVAL;
	return fos_send(peer, type, cookie, payload, len, done, flags);
}

/* ---- heartbeat ---- */

unsigned long fos_hb_interval(void)
{
	return msecs_to_jiffies(clamp(READ_ONCE(fos_fabric_hb_ms), 100U,
				      60000U));
}

void fos_hb_work(struct work_struct *work)
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
			pr_warn("node %u: no heartbeat for %u ms\n",
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
