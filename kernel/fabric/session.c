// SPDX-License-Identifier: GPL-2.0
/*
 * fractos fabric, sessions: what two nodes said to each other outlives
 * the connection it was said on, while both keep their epochs.
 */

/**
 * DOC: Sessions
 *
 * A connection that fails while both nodes live (a link down for a few
 * seconds, a QP error) would lose what was in flight on it: an INVOKE whose
 * ACK was lost is unknown to its caller, executed or not.  So the messages
 * of the transport's users (the remote layer's types) belong to a
 * *session* of the two nodes, which spans their connections:
 *
 * - Each such message gets a number, hdr.sseq: how many the sender sent in
 *   the session before it.  While a grace period is set, the sender keeps
 *   a copy (fos_session.unacked) until the peer acknowledges it; without
 *   one, nothing could be sent again and nothing is kept.
 * - Every header (credits and heartbeats too) carries hdr.sack, how many
 *   of the peer's messages the sender has delivered: a cumulative
 *   acknowledgment, which frees the peer's copies.  Credits bound the
 *   copies: a credit comes back only in a header whose sack covers the
 *   message that took it, so at most the peer's ring is unacknowledged
 *   (and a peer that returns credits without acknowledgments gets no more
 *   than that: the sender waits).  No message is sent for acknowledgments
 *   alone.
 * - A receiver delivers message number rx_done and nothing else: a lower
 *   one is a duplicate, dropped (FRACTOS_STAT_DUPLICATES) with its credit
 *   returned; a higher one is a protocol error.
 * - When the connection ends, what was unacknowledged and what waited for
 *   a credit go to fos_session.resend; the next connection sends them
 *   first, in order, with their numbers (FRACTOS_STAT_RETRANSMITS).  So
 *   each message is delivered once, in order, across connections, and a
 *   handler never runs twice for one message.
 *
 * A session is kept over a link that is down for fabric_grace_ms (0, the
 * default: not at all).  Meanwhile the node is not down for the remote
 * layer: proxies stay, calls keep waiting (their own timeouts run), and
 * what its users send is queued on @resend (up to FOS_SESS_QUEUE_MAX
 * messages; then -ENOTCONN).  When the grace period ends without a
 * connection, the session ends and the node is down
 * (fos_fabric_set_node_down()), as it is at once without a grace period.
 *
 * Ends and generations: a session ends when the peer's epoch changes, when
 * the grace period ends or is 0, after a protocol error, and when the node
 * is deleted.  Either side may end it alone.  Each side has a generation
 * of it (hdr.sess: random, new at each end it makes), and every header
 * also carries the generation of the receiver as the sender knows it
 * (hdr.esess).  The first message of a connection syncs the two
 * (fos_sess_sync()): a peer whose generation changed ended the session, so
 * this side ends its own (the node is down for the remote layer; what it
 * kept is dropped, and so is what waits on the connection) before it
 * serves anything, unless it ended its own since and has said and heard
 * nothing after (@fresh): then it takes the new generation as it is, and
 * the remote layer hears of one end only.  An acknowledgment counts only
 * if it names our generation; a numbered message that names another one
 * (a connection that still drains) is dropped.  The
 * active end sends none of its users' messages before the passive end's
 * first message, the passive end none before the AUTH: so each side has
 * synced before the other's first numbered message arrives, and no message
 * of one session is delivered in another.
 *
 * One connection at a time delivers a peer's messages: a passive
 * connection of the peer's epoch is refused while an earlier one still
 * drains (fos_peer.draining; rx.c), and the active end reconnects only
 * after its close work.  So handlers see the messages in order across
 * connections.  A connection of a new epoch is admitted at once; what one
 * of the old epoch still delivers (or acknowledges) is dropped.
 *
 * The session belongs to one epoch of the peer (@epoch): what connections
 * of another one do to it (their close, their messages) is ignored.
 *
 * Lock order: fos_peer.lock, fos_conn.lock, fos_session.lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/random.h>
#include <linux/slab.h>
#include "pri.h"

/* Messages queued while the link is down, with what it left. */
#define FOS_SESS_QUEUE_MAX	FOS_WIRE_CREDITS_MAX

static u32 fos_sess_new_gen(void)
{
	u32 gen;

	do
		gen = get_random_u32();
	while (!gen);
	return gen;
}

struct fos_pending *fos_pending_new(u8 type, u64 cookie, const void *payload,
				    u32 len, struct fos_fabric_done *done)
{
	struct fos_pending *p;

	p = kmalloc(struct_size(p, payload, len), GFP_ATOMIC);
	if (!p)
		return NULL;
	p->type = type;
	p->numbered = false;
	p->sseq = 0;
	p->cookie = cookie;
	p->done = done;
	p->len = len;
	if (len)
		memcpy(p->payload, payload, len);
	return p;
}

/*
 * Free what will never go out (the connection or the session ended),
 * telling each sender; @list is left for the caller to reinitialise.
 */
void fos_pending_drop(struct list_head *list)
{
	struct fos_pending *p, *tmp;

	list_for_each_entry_safe(p, tmp, list, link) {
		if (p->done)
			p->done->fn(p->done, -ECONNRESET);
		kfree(p);
	}
}

/* Forget the session.  Caller holds its lock; what it kept goes to @drop. */
static void fos_sess_clear_locked(struct fos_session *s,
				  struct list_head *drop)
{
	lockdep_assert_held(&s->lock);
	list_splice_tail_init(&s->unacked, drop);
	list_splice_tail_init(&s->resend, drop);
	s->nunacked = 0;
	s->nresend = 0;
	s->tx_next = 0;
	s->tx_acked = 0;
	s->kept_from = 0;
	s->rx_done = 0;
	s->down = false;
	s->reset_req = false;
	s->fresh = true;
}

/*
 * The grace period ended.  A connection established since (peer->conn,
 * under peer->lock) syncs the session instead: the session's generation
 * never changes while a connection is up.
 */
static void fos_sess_grace_work(struct work_struct *work)
{
	struct fos_session *s = container_of(to_delayed_work(work),
					     struct fos_session, grace_work);
	struct fos_peer *peer = container_of(s, struct fos_peer, sess);
	LIST_HEAD(drop);
	bool expired;
	u32 epoch;

	spin_lock_bh(&peer->lock);
	spin_lock_bh(&s->lock);
	expired = s->down && !peer->conn;
	epoch = s->epoch;
	if (expired) {
		fos_sess_clear_locked(s, &drop);
		s->gen = fos_sess_new_gen();
	}
	spin_unlock_bh(&s->lock);
	spin_unlock_bh(&peer->lock);
	if (!expired)
		return;
	fos_pending_drop(&drop);
	fos_stat_add(peer, FRACTOS_STAT_SESSION_ENDS, 1);
	pr_info("node %u down: no connection within the grace period\n",
		peer->node_id);
	fos_peer_node_down(peer->node_id, epoch);
}

void fos_sess_init(struct fos_peer *peer)
{
	struct fos_session *s = &peer->sess;

	spin_lock_init(&s->lock);
	INIT_LIST_HEAD(&s->unacked);
	INIT_LIST_HEAD(&s->resend);
	INIT_DELAYED_WORK(&s->grace_work, fos_sess_grace_work);
	s->gen = fos_sess_new_gen();
	s->fresh = true;
}

/* The peer is freed: no connection, no grace work (fos_peer_delete()). */
void fos_sess_free(struct fos_peer *peer)
{
	struct fos_session *s = &peer->sess;
	LIST_HEAD(drop);

	spin_lock_bh(&s->lock);
	fos_sess_clear_locked(s, &drop);
	spin_unlock_bh(&s->lock);
	fos_pending_drop(&drop);
}

/*
 * The peer restarted (@epoch, another one): nothing of the old session goes
 * to the new incarnation, which knows nothing of ours.
 */
void fos_sess_restarted(struct fos_peer *peer, u32 epoch)
{
	struct fos_session *s = &peer->sess;
	LIST_HEAD(drop);

	spin_lock_bh(&s->lock);
	fos_sess_clear_locked(s, &drop);
	s->peer_gen = 0;
	s->epoch = epoch;
	spin_unlock_bh(&s->lock);
	fos_pending_drop(&drop);
	fos_stat_add(peer, FRACTOS_STAT_SESSION_ENDS, 1);
}

/*
 * Take an acknowledgment: free the kept copies it covers, on @s->unacked
 * and at the head of @s->resend.  Caller holds the lock and checked that
 * it names our generation.  Return: false if it acknowledges what was
 * never sent.
 */
static bool fos_sess_ack_locked(struct fos_session *s, u32 sack,
				struct list_head *done)
{
	struct fos_pending *p, *tmp;

	lockdep_assert_held(&s->lock);
	/*
	 * An older one is no news: a node that is its own peer hears its
	 * acknowledgments on both ends of its connection, in any order.
	 */
	if ((s32)(sack - s->tx_acked) <= 0)
		return true;
	if ((s32)(s->tx_next - sack) < 0)
		return false;
	list_for_each_entry_safe(p, tmp, &s->unacked, link) {
		if ((s32)(sack - p->sseq) <= 0)
			break;
		list_move_tail(&p->link, done);
		s->nunacked--;
	}
	list_for_each_entry_safe(p, tmp, &s->resend, link) {
		if (!p->numbered || (s32)(sack - p->sseq) <= 0)
			break;
		list_move_tail(&p->link, done);
		s->nresend--;
	}
	s->tx_acked = sack;
	return true;
}

/**
 * fos_sess_sync - the peer's first message on a connection
 * @conn: the connection (its AUTH on a passive one)
 * @hdr: the message's verified header
 *
 * Takes the peer's generation: if it changed, the peer ended the session
 * and so does this node (the node is down for the remote layer), unless
 * ours is fresh (see "Sessions").  Then the first acknowledgment, and the
 * connection may send its users' messages: a primary connection first
 * sends what the last one left.
 *
 * Return: 0; -EPROTO (a wrong acknowledgment: a protocol error); or
 * -ECONNABORTED (the connection is not, or no longer, the peer's: serve
 * nothing).
 */
int fos_sess_sync(struct fos_conn *conn, const struct fos_wire_hdr *hdr)
{
	struct fos_peer *peer = conn->peer;
	struct fos_session *s = &peer->sess;
	u32 gen = le32_to_cpu(hdr->sess), old = 0;
	struct fos_pending *p, *tmp;
	bool ended = false, bad = false;
	LIST_HEAD(drop);
	int ret = 0;

	spin_lock_bh(&peer->lock);
	spin_lock_bh(&conn->lock);
	if (conn->state != FOS_CONN_UP ||
	    (conn->primary && peer->conn != conn)) {
		ret = -ECONNABORTED;
		goto out;
	}
	spin_lock_bh(&s->lock);
	old = s->peer_gen;
	if (old && old != gen && !s->fresh) {
		ended = true;
		fos_sess_clear_locked(s, &drop);
		/* What waits here was meant for the session that ended. */
		list_for_each_entry_safe(p, tmp, &conn->backlog, link) {
			if (fos_wire_type_remote(p->type)) {
				list_move_tail(&p->link, &drop);
				conn->nbacklog--;
			}
		}
	}
	s->peer_gen = gen;
	s->epoch = conn->peer_epoch;
	/* What the peer has: not to be sent again. */
	if (le32_to_cpu(hdr->esess) == s->gen)
		bad = !fos_sess_ack_locked(s, le32_to_cpu(hdr->sack), &drop);
	if (!bad && conn->primary) {
		s->down = false;
		/* Before what waits here already: it was sent later. */
		list_splice_init(&s->resend, &conn->backlog);
		conn->nbacklog += s->nresend;
		s->nresend = 0;
	}
	conn->synced = !bad;
	spin_unlock_bh(&s->lock);
out:
	spin_unlock_bh(&conn->lock);
	spin_unlock_bh(&peer->lock);
	fos_pending_drop(&drop);
	if (ret)
		return ret;
	if (bad)
		return -EPROTO;
	if (conn->primary)
		cancel_delayed_work(&s->grace_work);
	if (ended) {
		fos_stat_add(peer, FRACTOS_STAT_SESSION_ENDS, 1);
		pr_info("node %u ended our session (generation %#x -> %#x)\n",
			peer->node_id, old, gen);
		fos_peer_node_down(peer->node_id, conn->peer_epoch);
	}
	if (conn->primary) {
		fos_conn_flush(conn);
		wake_up_all(&peer->wq);
	}
	return 0;
}

/**
 * fos_sess_acked - take the acknowledgment of a header
 * @conn: the connection it came on (synced)
 * @hdr: the header
 *
 * Return: false if it acknowledges what was never sent, or names another
 * generation of the peer's than its first message did (a protocol error).
 */
bool fos_sess_acked(struct fos_conn *conn, const struct fos_wire_hdr *hdr)
{
	struct fos_session *s = &conn->peer->sess;
	struct fos_pending *p, *tmp;
	LIST_HEAD(done);
	bool ok = true;

	spin_lock_bh(&s->lock);
	/* A connection of the peer's last incarnation, still draining. */
	if (unlikely(conn->peer_epoch != s->epoch)) {
		spin_unlock_bh(&s->lock);
		return true;
	}
	/* Generations change only while there is no connection. */
	if (unlikely(le32_to_cpu(hdr->sess) != s->peer_gen)) {
		spin_unlock_bh(&s->lock);
		return false;
	}
	/* Another generation of ours: the peer ends its session (sync). */
	if (le32_to_cpu(hdr->esess) == s->gen)
		ok = fos_sess_ack_locked(s, le32_to_cpu(hdr->sack), &done);
	spin_unlock_bh(&s->lock);
	if (list_empty(&done))
		return ok;
	list_for_each_entry_safe(p, tmp, &done, link)
		kfree(p);
	/* Senders may wait for room (fos_conn_sendable()). */
	wake_up_all(&conn->peer->wq);
	return ok;
}

/**
 * fos_sess_deliver - may a user's message be served?
 * @conn: the connection it came on (synced)
 * @hdr: its header
 *
 * Return: 1 (the next one: serve it), 0 (a duplicate, or a message of the
 * peer's last incarnation or of an older generation of ours: drop it), or
 * -EPROTO (a gap).
 */
int fos_sess_deliver(struct fos_conn *conn, const struct fos_wire_hdr *hdr)
{
	struct fos_session *s = &conn->peer->sess;
	u32 sseq = le32_to_cpu(hdr->sseq);
	s32 d;

	spin_lock_bh(&s->lock);
	if (unlikely(conn->peer_epoch != s->epoch ||
		     le32_to_cpu(hdr->esess) != s->gen)) {
		spin_unlock_bh(&s->lock);
		return 0;
	}
	d = sseq - s->rx_done;
	if (!d) {
		s->rx_done++;
		s->fresh = false;
	}
	spin_unlock_bh(&s->lock);
	if (!d)
		return 1;
	if (d > 0)
		return -EPROTO;
	fos_stat_add(conn->peer, FRACTOS_STAT_DUPLICATES, 1);
	return 0;
}

/*
 * Room for another kept copy: a peer acknowledges what it got at least as
 * fast as it returns credits (read unlocked by wait conditions too).
 */
bool fos_sess_room(const struct fos_conn *conn)
{
	return READ_ONCE(conn->peer->sess.nunacked) < conn->tx_credits_max;
}

/**
 * fos_sess_post - post a user's message on @conn, numbered
 * @conn: the connection; caller holds its lock
 * @p: the message, on no list; a retransmission keeps its number
 *
 * Return: 0 (@p is the session's: kept on @unacked, or freed when there is
 * no grace period to send it again in), or as fos_conn_post_raw()
 * (-EAGAIN also before the connection synced, and while the peer holds
 * its ring's worth of our messages unacknowledged).
 */
int fos_sess_post(struct fos_conn *conn, struct fos_pending *p)
{
	struct fos_session *s = &conn->peer->sess;
	bool again = p->numbered;
	bool keep = again || READ_ONCE(fos_fabric_grace_ms);
	u32 sseq;
	int ret;

	lockdep_assert_held(&conn->lock);
	if (!conn->synced || (keep && !fos_sess_room(conn)))
		return -EAGAIN;
	spin_lock_bh(&s->lock);
	sseq = again ? p->sseq : s->tx_next;
	ret = fos_conn_post_raw(conn, p->type, p->cookie, p->payload, p->len,
				NULL, false, sseq);
	if (!ret) {
		if (!again) {
			p->numbered = true;
			p->sseq = sseq;
			s->tx_next++;
			s->fresh = false;
			/* Nothing before this copy can be sent again. */
			if (!keep)
				s->kept_from = s->tx_next;
		}
		if (keep) {
			list_add_tail(&p->link, &s->unacked);
			s->nunacked++;
		}
	}
	spin_unlock_bh(&s->lock);
	if (ret)
		return ret;
	if (again)
		fos_stat_add(conn->peer, FRACTOS_STAT_RETRANSMITS, 1);
	if (!keep)
		kfree(p);
	return 0;
}

/**
 * fos_sess_post_now - post a user's message on @conn, numbered, no copy
 * @conn: the connection, synced; caller holds its lock
 * @type: the message's type
 * @cookie: its cookie
 * @payload: @len bytes
 * @len: payload length
 *
 * Without a grace period nothing is ever sent again, so the fast path
 * keeps nothing and allocates nothing.
 *
 * Return: as fos_conn_post_raw().
 */
int fos_sess_post_now(struct fos_conn *conn, u8 type, u64 cookie,
		      const void *payload, u32 len)
{
	struct fos_session *s = &conn->peer->sess;
	int ret;

	lockdep_assert_held(&conn->lock);
	spin_lock_bh(&s->lock);
	ret = fos_conn_post_raw(conn, type, cookie, payload, len, NULL, false,
				s->tx_next);
	if (!ret) {
		s->tx_next++;
		s->fresh = false;
		s->kept_from = s->tx_next;
	}
	spin_unlock_bh(&s->lock);
	return ret;
}

/**
 * fos_sess_queue - a user's message while the link is down
 * @peer: the peer (caller holds its lock; it has no connection)
 * @type: the message's type
 * @cookie: its cookie
 * @payload: @len bytes, copied
 * @len: payload length
 *
 * Return: 0 (queued for the next connection), -ENOTCONN (not a user's
 * message, the session is not kept, or too much waits already) or -ENOMEM.
 */
int fos_sess_queue(struct fos_peer *peer, u8 type, u64 cookie,
		   const void *payload, u32 len)
{
	struct fos_session *s = &peer->sess;
	struct fos_pending *p;
	int ret = -ENOTCONN;

	lockdep_assert_held(&peer->lock);
	if (!fos_wire_type_remote(type) || !READ_ONCE(s->down))
		return -ENOTCONN;
	p = fos_pending_new(type, cookie, payload, len, NULL);
	if (!p)
		return -ENOMEM;
	spin_lock_bh(&s->lock);
	if (s->down && s->nresend < FOS_SESS_QUEUE_MAX) {
		list_add_tail(&p->link, &s->resend);
		s->nresend++;
		s->fresh = false;
		ret = 0;
	}
	spin_unlock_bh(&s->lock);
	if (ret)
		kfree(p);
	return ret;
}

/**
 * fos_sess_conn_error - a protocol error on @conn
 * @conn: the connection, admitted
 *
 * What the peer said cannot be trusted to go on: the session ends with
 * the connection, if it is the session's (not one that drains).
 */
void fos_sess_conn_error(struct fos_conn *conn)
{
	struct fos_session *s = &conn->peer->sess;

	spin_lock_bh(&s->lock);
	if (READ_ONCE(conn->state) == FOS_CONN_UP &&
	    conn->peer_epoch == s->epoch)
		s->reset_req = true;
	spin_unlock_bh(&s->lock);
}

/**
 * fos_sess_link_down_begin - the peer's connection starts closing
 * @conn: the connection, up once, primary, and peer->conn until now
 *
 * Caller holds peer->lock.  With a grace period, and unless the session
 * must end (a protocol error, the node deleted), the session is kept:
 * from here on its users' messages queue on @resend.
 *
 * Return: the session is kept (pass it to fos_sess_link_down()).
 */
bool fos_sess_link_down_begin(struct fos_conn *conn)
{
	struct fos_peer *peer = conn->peer;
	struct fos_session *s = &peer->sess;
	bool keep;

	lockdep_assert_held(&peer->lock);
	spin_lock_bh(&s->lock);
	if (conn->peer_epoch != s->epoch) {
		spin_unlock_bh(&s->lock);
		return false;
	}
	keep = READ_ONCE(fos_fabric_grace_ms) && !s->reset_req &&
	       !peer->deleted;
	s->down = keep;
	spin_unlock_bh(&s->lock);
	return keep;
}

/**
 * fos_sess_link_down - the peer's connection is drained
 * @conn: the connection, primary and up once; nothing posts on it any more
 * @keep: what fos_sess_link_down_begin() said, or false
 *
 * What @conn had not sent yet goes to the session after what it sent
 * unacknowledged, and before what was queued since (a connection that
 * never synced sent nothing: its backlog goes last); the grace period
 * starts.  Else the session ends, and so does what @conn had not sent.
 * A connection of the peer's last incarnation changes nothing.
 *
 * Return: the session was kept; else the caller says the node is down.
 */
bool fos_sess_link_down(struct fos_conn *conn, bool keep)
{
	struct fos_peer *peer = conn->peer;
	struct fos_session *s = &peer->sess;
	unsigned int grace = READ_ONCE(fos_fabric_grace_ms);
	struct fos_pending *p, *tmp;
	bool ours, ended = false;
	LIST_HEAD(mine);
	LIST_HEAD(drop);
	u32 n = 0;

	spin_lock_bh(&conn->lock);
	list_for_each_entry_safe(p, tmp, &conn->backlog, link) {
		if (fos_wire_type_remote(p->type)) {
			list_move_tail(&p->link, &mine);
			n++;
		} else {
			list_move_tail(&p->link, &drop);
		}
	}
	conn->nbacklog = 0;
	spin_unlock_bh(&conn->lock);

	spin_lock_bh(&s->lock);
	ours = conn->peer_epoch == s->epoch;
	/* Every message not acknowledged must have its copy. */
	keep = ours && keep && grace && s->down && !s->reset_req &&
	       (s32)(s->tx_acked - s->kept_from) >= 0;
	if (keep) {
		if (conn->synced) {
			list_splice(&mine, &s->resend);
			list_splice_init(&s->unacked, &s->resend);
		} else {
			list_splice_tail(&mine, &s->resend);
		}
		s->nresend += n + s->nunacked;
		s->nunacked = 0;
		queue_delayed_work(fos_fabric_wq, &s->grace_work,
				   msecs_to_jiffies(grace));
	} else {
		list_splice_tail(&mine, &drop);
		if (ours) {
			/* We end it: a new generation, which the peer sees. */
			ended = true;
			fos_sess_clear_locked(s, &drop);
			s->gen = fos_sess_new_gen();
		}
	}
	spin_unlock_bh(&s->lock);
	fos_pending_drop(&drop);
	if (keep && conn->synced) {
		fos_stat_add(peer, FRACTOS_STAT_LINK_GRACE, 1);
		pr_info("node %u: link down, session kept for %u ms\n",
			peer->node_id, grace);
	}
	if (ended)
		fos_stat_add(peer, FRACTOS_STAT_SESSION_ENDS, 1);
	return keep;
}
