// SPDX-License-Identifier: GPL-2.0
/*
 * fractos fabric, rdma_cm: connection requests and their admission
 * checks, accepts, the active side's connect work, and kicks.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in.h>
#include <linux/in6.h>
#include <linux/once.h>
#include <linux/siphash.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>
#include <rdma/ib_cm.h>
#include "auth.h"
#include "pri.h"
#include "fos_trace.h"

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
	[FOS_WIRE_REJ_CONNECTED] = FRACTOS_STAT_REFUSED_CONNECTED,
	[FOS_WIRE_REJ_COOKIE] = FRACTOS_STAT_REFUSED_COOKIE,
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
	[FOS_WIRE_REJ_CONNECTED] = "that node is connected with that epoch",
	[FOS_WIRE_REJ_COOKIE] = "no valid admission cookie (one given)",
};

static void fos_refused(struct rdma_cm_id *id, u32 node, int reason,
			u64 cookie)
{
	struct fos_wire_reject rej = {
		.magic = cpu_to_le32(FOS_WIRE_MAGIC),
		.version = FOS_WIRE_VERSION,
		.reason = reason,
		.node_id = cpu_to_le32(fos_node_id),
		.cookie = cpu_to_le64(cookie),
	};

	trace_fos_conn_state(node, 0, 0, FOS_TRACE_CONN_REFUSED, reason);
	fos_stat_add(NULL, FRACTOS_STAT_REFUSED, 1);
	fos_stat_add(NULL, fos_rej_stat[reason], 1);
	/* Asking for a cookie is the normal course under load: counted only. */
	if (reason != FOS_WIRE_REJ_COOKIE)
		pr_warn_ratelimited("refused connection from node %u at %pISpc: %s\n",
				    node, &id->route.addr.dst_addr,
				    fos_rej_name[reason]);
	rdma_reject(id, &rej, sizeof(rej), IB_CM_REJ_CONSUMER_DEFINED);
}

/*
 * The host part of @sa as an IPv6 address (an IPv4 one v4-mapped), so that
 * one comparison covers both families.  Return: false for another family.
 */
static bool fos_addr_host(const struct sockaddr *sa, struct in6_addr *out)
{
	if (sa->sa_family == AF_INET)
		ipv6_addr_set_v4mapped(((const struct sockaddr_in *)sa)->sin_addr.s_addr,
				       out);
	else if (sa->sa_family == AF_INET6)
		*out = ((const struct sockaddr_in6 *)sa)->sin6_addr;
	else
		return false;
	return true;
}

/* @a and @b are the same host (address; ports and scopes are not compared). */
static bool fos_addr_same_host(const struct sockaddr *a,
			       const struct sockaddr *b)
{
	struct in6_addr ha, hb;

	return fos_addr_host(a, &ha) && fos_addr_host(b, &hb) &&
	       ipv6_addr_equal(&ha, &hb);
}

/**
 * DOC: Admission slots
 *
 * A request that passed the checks that need no proof holds an admission
 * slot from its accept until its AUTH verifies or the connection ends
 * (FOS_ADMIT_TIMEOUT at most): FOS_ADMIT_MAX slots in all, at most
 * FOS_ADMIT_PER_HOST of them for one source address, so that a host that
 * floods the node with connections it never proves keeps out no other
 * host (issue 28: 34 from one address kept every node out).  Requests
 * that carry a valid admission cookie (below) count apart, with a limit
 * of their own: a flood that forges a node's address, and so never sees
 * a cookie, cannot keep that node out, since the node, refused with a
 * cookie at its address's limit, comes again with it.  No free slot is
 * REJ_BUSY, and so is a proven host at its limit.  The slots are an array
 * with the address each holds, under fos_admit_lock (a leaf spinlock): a
 * request counts the others of its address there.
 */
static DEFINE_SPINLOCK(fos_admit_lock);
/* Under fos_admit_lock: */
static DECLARE_BITMAP(fos_admit_used, FOS_ADMIT_MAX);
static DECLARE_BITMAP(fos_admit_proven, FOS_ADMIT_MAX);
static struct sockaddr_storage fos_admit_addr[FOS_ADMIT_MAX];

/**
 * DOC: Admission cookies
 *
 * While FOS_ADMIT_COOKIE_AT slots or more are held, or its address holds
 * FOS_ADMIT_PER_HOST unproven ones, a request must also carry a cookie, or
 * it is refused with FOS_WIRE_REJ_COOKIE and one: the initiator comes
 * again after its shortest backoff with it in hello.cookie (and, refused
 * again with the same one, backs off as after any refusal).  A cookie is
 * SipHash, under a key drawn once (at the first request), of the
 * request's source address, the node it claims and the current 32-second
 * period; one of this period or the last is valid.  Nothing is kept for a
 * request refused so: a flood from forged addresses, which never sees the
 * cookies, holds half of the slots at most (and FOS_ADMIT_PER_HOST of the
 * address it forges), and the honest nodes, which do, get the other half
 * (as SYN cookies do for TCP).  Below those marks no cookie is asked for,
 * so that an idle node admits in one round trip.  The responder's own
 * hello carries none: an accept with one is refused.
 */
static siphash_key_t fos_cookie_key;

static u64 fos_admit_cookie(const struct sockaddr_storage *src, u32 node,
			    u64 period)
{
	struct {
		struct in6_addr addr;
		__le32 node;
		__le32 pad;
		__le64 period;
	} in = {
		.node = cpu_to_le32(node),
		.period = cpu_to_le64(period),
	};

	fos_addr_host((const struct sockaddr *)src, &in.addr);
	return siphash(&in, sizeof(in), &fos_cookie_key) ?: 1;
}

/* Whether @cookie is one we gave @src for @node, this period or the last. */
static bool fos_admit_cookie_ok(const struct sockaddr_storage *src, u32 node,
				u64 cookie, u64 now)
{
	return cookie && (cookie == fos_admit_cookie(src, node, now) ||
			  cookie == fos_admit_cookie(src, node, now - 1));
}

/*
 * An admission slot for @conn, a request from @src that claims @node
 * with hello.cookie @cookie_in.  Return: 0, REJ_BUSY, or REJ_COOKIE with
 * *@cookie set to the cookie to come again with.
 */
static int fos_admit_take(struct fos_conn *conn,
			  const struct sockaddr_storage *src, u32 node,
			  u64 cookie_in, u64 *cookie)
{
	u64 now = ktime_get_seconds() / FOS_ADMIT_COOKIE_S;
	unsigned int i, same = 0, slot;
	bool proven;

	get_random_once(&fos_cookie_key, sizeof(fos_cookie_key));
	/* (hashed outside the leaf lock: it is needed only past the marks) */
	proven = fos_admit_cookie_ok(src, node, cookie_in, now);
	spin_lock(&fos_admit_lock);
	/* Proven or not, a request counts with its kind only. */
	for_each_set_bit(i, fos_admit_used, FOS_ADMIT_MAX)
		same += test_bit(i, fos_admit_proven) == proven &&
			fos_addr_same_host((struct sockaddr *)&fos_admit_addr[i],
					   (const struct sockaddr *)src);
	slot = find_first_zero_bit(fos_admit_used, FOS_ADMIT_MAX);
	if (slot >= FOS_ADMIT_MAX || (proven && same >= FOS_ADMIT_PER_HOST)) {
		spin_unlock(&fos_admit_lock);
		return FOS_WIRE_REJ_BUSY;
	}
	if (!proven && (same >= FOS_ADMIT_PER_HOST ||
			bitmap_weight(fos_admit_used, FOS_ADMIT_MAX) >=
			FOS_ADMIT_COOKIE_AT)) {
		spin_unlock(&fos_admit_lock);
		*cookie = fos_admit_cookie(src, node, now);
		return FOS_WIRE_REJ_COOKIE;
	}
	__set_bit(slot, fos_admit_used);
	__assign_bit(slot, fos_admit_proven, proven);
	fos_admit_addr[slot] = *src;
	spin_unlock(&fos_admit_lock);
	conn->admit_slot = slot;
	conn->admitting = true;
	return 0;
}

/*
 * @conn's admission slot goes back: it is admitted, or it ends.  Called
 * from its receive handler or its close work, never both at once (the
 * close work drains the QP first).
 */
void fos_admit_release(struct fos_conn *conn)
{
	if (!conn->admitting)
		return;
	spin_lock(&fos_admit_lock);
	__clear_bit(conn->admit_slot, fos_admit_used);
	spin_unlock(&fos_admit_lock);
	WRITE_ONCE(conn->admitting, false);
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
			       struct fos_conn *conn, u64 *cookie)
{
	bool insecure = h->flags & FOS_WIRE_HELLO_INSECURE;

	if (!fos_addr_same_host((struct sockaddr *)&id->route.addr.dst_addr,
				(struct sockaddr *)&peer->addr))
		return FOS_WIRE_REJ_ADDRESS;
	if (fos_peer_in_epoch(peer, le32_to_cpu(h->epoch)))
		return FOS_WIRE_REJ_CONNECTED;
	conn->auth_mode = fos_auth_find(peer->node_id, le32_to_cpu(h->key_id),
					&conn->auth_key);
	if (conn->auth_mode == FRACTOS_AUTH_SECRET && !conn->auth_key &&
	    h->alt_key_id)
		conn->auth_mode = fos_auth_find(peer->node_id,
						le32_to_cpu(h->alt_key_id),
						&conn->auth_key);
	if (conn->auth_mode == FRACTOS_AUTH_INSECURE ? !insecure :
	    conn->auth_mode != FRACTOS_AUTH_SECRET || !conn->auth_key)
		return FOS_WIRE_REJ_AUTH;
	return fos_admit_take(conn, &id->route.addr.dst_addr, peer->node_id,
			      le64_to_cpu(h->cookie), cookie);
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
	u64 cookie = 0;
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
	reason = fos_admission_check(id, peer, h, conn, &cookie);
	fos_peer_put(peer);
	if (reason) {
		fos_conn_free_unpublished(conn);
		goto refuse;
	}
	conn->id = id;
	fos_conn_take_hello(conn, h);
	conn->hello_init = *h;
	if (fos_conn_publish(conn)) {
		fos_admit_release(conn);
		fos_conn_free_unpublished(conn);
		reason = FOS_WIRE_REJ_UNKNOWN_NODE;
		goto refuse;
	}
	/* From here on, fos_conn_close_work() destroys @id. */
	id->context = conn;
	if (rdma_set_ack_timeout(id, FOS_ACK_TIMEOUT) ||
	    fos_conn_setup(conn, id->device)) {
		fos_refused(id, node, FOS_WIRE_REJ_RESOURCES, 0);
		fos_conn_fail(conn);
		return 0;
	}
	fos_hello_fill(&acc.hello, conn, node);
	conn->hello_resp = acc.hello;
	t.init = &conn->hello_init;
	t.resp = &conn->hello_resp;
	fos_auth_mac(conn->auth_key, FOS_AUTH_ACCEPT, &t, acc.mac);
	/* Before the accept: the initiator's AUTH may follow it at once. */
	fos_auth_session(conn->auth_key, &t, &conn->rx_key, &conn->tx_key);
	fos_conn_param(&param, conn, &acc, sizeof(acc));
	param.responder_resources = min_t(u8, param.responder_resources,
					  ev->param.conn.initiator_depth);
	param.initiator_depth = min_t(u8, param.initiator_depth,
				      ev->param.conn.responder_resources);
	if (rdma_accept(id, &param))
		fos_conn_fail(conn);
	return 0;

refuse:
	fos_refused(id, node, reason, cookie);
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

	/* The responder names one key and asks for no cookie. */
	if (acc->hello.alt_key_id || acc->hello.cookie ||
	    acc->hello.flags != conn->hello_init.flags)
		return false;
	if (key_id && key_id == conn->auth_alt_id &&
	    key_id != fos_auth_key_id(conn->auth_key)) {
		fos_auth_put(conn->auth_key);
		fos_auth_find(conn->peer->node_id, key_id, &conn->auth_key);
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
		pr_warn_ratelimited("node %u at %pISpc: authentication failed: wrong mac in the accept\n",
				    peer->node_id, &peer->addr);
		fos_conn_fail(conn);
		return;
	}
	conn->admitted = true;
	fos_auth_mac(conn->auth_key, FOS_AUTH_INITIATOR, &t, auth.mac);
	fos_auth_session(conn->auth_key, &t, &conn->tx_key, &conn->rx_key);
	fos_conn_take_hello(conn, &acc->hello);
	fos_peer_set_epoch(peer, conn->peer_epoch);
	fos_conn_established(conn, &auth);
}

int fos_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct fos_conn *conn = id->context;
	u64 cookie;
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
					       ev->param.conn.private_data_len,
					       &cookie);
		if (reason == FOS_WIRE_REJ_COOKIE && cookie)
			/* Again at once, with it ("Admission cookies"). */
			fos_peer_set_cookie(conn->peer, cookie);
		else
			pr_warn_ratelimited("node %u refused the connection (%s, reason %d)\n",
					    conn->peer->node_id,
					    rdma_reject_msg(id, ev->status),
					    reason);
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
			pr_info_ratelimited("node %u: %s (status %d)\n",
					    conn->peer->node_id,
					    rdma_event_msg(ev->event),
					    ev->status);
		fos_conn_fail(conn);
		break;
	}
	return 0;
}

/* An initiator's connection attempt. */
void fos_peer_connect_work(struct work_struct *work)
{
	struct fos_peer *peer = container_of(to_delayed_work(work),
					     struct fos_peer, connect_work);
	struct fos_auth_key *key;
	struct rdma_cm_id *id;
	struct fos_conn *conn;
	u32 alt_id;
	int mode;

	spin_lock_bh(&peer->lock);
	if (peer->deleted || peer->out) {
		spin_unlock_bh(&peer->lock);
		return;
	}
	peer->state = FRACTOS_NODE_CONNECTING;
	spin_unlock_bh(&peer->lock);

	mode = fos_auth_current(peer->node_id, &key, &alt_id);
	if (mode == FRACTOS_AUTH_NONE) {
		/* Setting a secret kicks every peer (fos_fabric_kick()). */
		pr_info_ratelimited("node %u: not connecting without a key for it (fractctl secret row, or secret set)\n",
				    peer->node_id);
		spin_lock_bh(&peer->lock);
		peer->state = FRACTOS_NODE_DOWN;
		spin_unlock_bh(&peer->lock);
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
	spin_lock_bh(&peer->lock);
	fos_peer_backoff_locked(peer);
	spin_unlock_bh(&peer->lock);
}

/*
 * Try every peer that is backing off now (a device appeared, a secret was
 * set).
 */
void fos_fabric_kick(void)
{
	struct fos_peer *peer;
	unsigned long idx;

	xa_lock(&fos_peers);
	xa_for_each(&fos_peers, idx, peer) {
		spin_lock_bh(&peer->lock);
		if (!peer->deleted && !peer->out &&
		    fos_peer_initiator(peer->node_id)) {
			peer->backoff_ms = FOS_BACKOFF_MIN_MS;
			mod_delayed_work(fos_fabric_wq, &peer->connect_work, 0);
		}
		spin_unlock_bh(&peer->lock);
	}
	xa_unlock(&fos_peers);
}

