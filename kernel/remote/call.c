// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: remote objects - the caller's side of calls: invoke, revoke and
 * lookup of another node's objects, and the receipt of their answers (see
 * "Remote objects" in remote.c).  The owner's side is owner.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/delay.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include "../fos.h"
#include "../request.h"
#include "../fabric.h"
#include "trace.h"
#include "wire.h"
#include "pri.h"

/* ---- the caller's side ---- */

/**
 * struct fos_invoke_call - one INVOKE of a remote (or looped-back) Request
 * @rpc: the call; fos_rpc_async()'s callback finds us from it
 * @done: an asynchronous invocation's callback (the core's), else NULL
 * @peer: the owner's node (a reference)
 * @root: the proxy, or with fabric_loopback the local target (a reference)
 * @oid: the target, as its owner names it
 * @pepoch: the owner's epoch when the call began
 * @handed: the export of a looped-back target (@root is local) went with
 *	a message that wants no answer: its receiver puts it
 * @ncaps: capability descriptions in @iv
 * @imm_len: immediates in @iv
 * @len: bytes of the message
 * @iv: the message: header, descriptions, immediates
 */
struct fos_invoke_call {
	struct fos_rpc_wait rpc;
	struct fos_invoke_done *done;
	struct fos_peer *peer;
	struct fos_object *root;
	struct fractos_oid oid;
	u32 pepoch;
	bool handed;
	u32 ncaps;
	u32 imm_len;
	u32 len;
	struct fos_wire_invoke iv[];
};

static struct fos_wire_cap *fos_invoke_wc(struct fos_invoke_call *c)
{
	return (struct fos_wire_cap *)(c->iv + 1);
}

/* The call to @target, its message built but for the descriptions. */
static struct fos_invoke_call *fos_invoke_begin(struct fos_object *target,
						const u8 *imm, u32 imm_len,
						u32 ncaps)
{
	struct fos_object *root = fos_obj_root(target);
	u32 len = sizeof(struct fos_wire_invoke) +
		  ncaps * sizeof(struct fos_wire_cap) + imm_len;
	struct fos_invoke_call *c;
	struct fractos_oid oid;
	struct fos_peer *peer;
	int ret;

	/* A local target (fabric_loopback) is exported to ourselves. */
	fos_obj_oid(root->proxy ? root : target, &oid);
	peer = fos_peer_find(oid.node);
	if (!peer) {
		ret = -EHOSTUNREACH;
		goto err;
	}
	c = kzalloc(sizeof(*c) + len, GFP_KERNEL);
	if (!c) {
		ret = -ENOMEM;
		goto err_peer;
	}
	c->peer = peer;
	c->oid = oid;
	c->pepoch = fos_peer_epoch(peer);
	c->ncaps = ncaps;
	c->imm_len = imm_len;
	c->len = len;
	c->iv->oid = cpu_to_le64(oid.id);
	c->iv->epoch = cpu_to_le32(oid.epoch);
	c->iv->imm_len = cpu_to_le32(imm_len);
	c->iv->ncaps = cpu_to_le32(ncaps);
	if (imm_len)
		memcpy(fos_invoke_wc(c) + ncaps, imm, imm_len);
	/* Named for the call only: exported while it lasts. */
	c->root = root->proxy ? root : target;
	if (!root->proxy) {
		static const struct fos_view none;

		ret = fos_export_add(target, oid.node, c->pepoch, &none);
		if (ret)
			goto err_free;
	}
	fos_obj_get(c->root);
	return c;

err_free:
	kfree(c);
err_peer:
	fos_peer_put(peer);
err:
	trace_fos_remote_invoke(oid.node, oid.id, imm_len, ncaps, ret);
	return ERR_PTR(ret);
}

/*
 * Describe @caps into the message.  Every INVOKE that is sent hands its
 * descriptions to the receiver, which accounts for them even when it
 * refuses the call: each attempt describes them anew.
 */
static int fos_invoke_describe(struct fos_invoke_call *c,
			       const struct fos_cap *caps)
{
	struct fos_wire_cap *wc = fos_invoke_wc(c);
	u32 i;
	int ret;

	c->iv->grant_ms = 0;
	for (i = 0; i < c->ncaps; i++) {
		/* MEMORY_GRANT's Memory, handed over (handover.c) */
		bool grant = !caps[i].obj->proxy &&
			     READ_ONCE(caps[i].obj->granting);
		u32 ms = grant ? fos_handover_ms_left(caps[i].obj) : 0;

		ret = grant && !ms ? -ETIMEDOUT :
		      fos_cap_describe(&caps[i], c->oid.node, c->pepoch,
				       &wc[i]);
		if (ret)
			goto err;
		if (grant && !wc[i].flags) {
			wc[i].flags = cpu_to_le32(FOS_WIRE_CAP_GRANTED);
			c->iv->grant_ms = cpu_to_le32(ms);
		}
	}
	return 0;

err:
	/* wc[i] failed: give back those before it. */
	while (i--)
		fos_cap_undescribe(&wc[i], c->oid.node, c->pepoch);
	return ret;
}

/* The message was not sent: its descriptions are ours to give back. */
static void fos_invoke_undescribe(struct fos_invoke_call *c)
{
	struct fos_wire_cap *wc = fos_invoke_wc(c);
	u32 i;

	for (i = 0; i < c->ncaps; i++)
		fos_cap_undescribe(&wc[i], c->oid.node, c->pepoch);
}

/* The call is over with @ret: act on it, free @c; return the result. */
static int fos_invoke_end(struct fos_invoke_call *c, int ret)
{
	struct fos_object *root = c->root;

	if (!root->proxy && !c->handed)
		fos_export_put(c->oid.id, c->oid.node, c->pepoch, 1, NULL);
	if (ret == -ECONNRESET)
		ret = -EKEYREVOKED;	/* the node is gone: so are its objects */
	if (ret == -EKEYREVOKED && root->proxy)
		fos_obj_revoke(root);	/* the owner says so: monitors fire */
	trace_fos_remote_invoke(c->oid.node, c->oid.id, c->imm_len, c->ncaps,
				ret);
	fos_peer_put(c->peer);
	kfree(c);
	fos_obj_put(root);
	return ret;
}

/* An asynchronous INVOKE was answered: end it, tell the core. */
static void fos_invoke_answered(struct fos_rpc_wait *w)
{
	struct fos_invoke_call *c = container_of(w, struct fos_invoke_call,
						 rpc);
	struct fos_invoke_done *done = c->done;

	done->fn(done, fos_invoke_end(c, w->status));
}

static int fos_invoke_async(struct fos_invoke_call *c,
			    const struct fos_cap *caps,
			    struct fos_invoke_done *done)
{
	int ret;

	c->done = done;
	c->rpc.fn = fos_invoke_answered;
	ret = fos_invoke_describe(c, caps);
	if (!ret) {
		ret = fos_rpc_async(c->peer, FOS_WIRE_INVOKE, c->iv, c->len,
				    &c->rpc);
		if (ret == -EINPROGRESS)
			return ret;	/* @c is fos_invoke_answered()'s */
		fos_invoke_undescribe(c);
	}
	return fos_invoke_end(c, ret);
}

/*
 * Send @c's INVOKE, described, without waiting for an answer
 * (FRACTOS_INVOKE_NOACK; "Invocations without an answer" in remote.c).
 * Sent, its descriptions are the receiver's, and so is a looped-back
 * target's export: the receiver puts it (fos_invoke_recv()).
 */
static int fos_invoke_post(struct fos_invoke_call *c)
{
	int ret = fos_rpc_post(c->peer, FOS_WIRE_INVOKE, c->iv, c->len);

	if (ret) {
		fos_invoke_undescribe(c);
		return ret;
	}
	c->handed = !c->root->proxy;
	fos_total_add(FOS_TOTAL_NOACK_INVOKES, 1);
	return 0;
}

/**
 * fos_remote_invoke - invoke a Request whose provider is reached by fabric
 * @target: the Request object (a proxy, a local child of one, contents
 *	derived from one, or with fabric_loopback a local Request)
 * @imm: immediates to append (for a derived Request: its own first)
 * @imm_len: bytes at @imm
 * @caps: capability arguments to append
 * @ncaps: entries at @caps
 * @flags: FRACTOS_INVOKE_WAIT: retry while the provider's queue is full;
 *	FRACTOS_INVOKE_NOACK: return once sent (see fos_invoke_post())
 * @done: NULL: return once the owner has answered; else return once the
 *	message is sent (-EINPROGRESS), and @done->fn gets the answer
 *
 * Process context.  With @done it sleeps only for a send credit (5 s at
 * most), and @flags is ignored.
 *
 * Return: 0 (queued on the provider), the owner's errno (EKEYREVOKED,
 * EAGAIN, E2BIG, ...), -EHOSTUNREACH (the node is not configured or not
 * connected), -EKEYREVOKED (it went down meanwhile), -ETIMEDOUT,
 * -EMSGSIZE (the arguments do not fit one fabric message: only with a
 * peer that announced smaller buffers than ours), -EOPNOTSUPP
 * (an argument is a Memory view that is a local child of a proxy),
 * -EINTR; or -EINPROGRESS
 * (@done->fn will run, with one of the others).
 */
int fos_remote_invoke(struct fos_object *target, const u8 *imm, u32 imm_len,
		      const struct fos_cap *caps, u32 ncaps, u32 flags,
		      struct fos_invoke_done *done)
{
	bool wait = flags & FRACTOS_INVOKE_WAIT;
	struct fos_invoke_call *c;
	int ret;

	might_sleep();

	/* More than any Request takes: what the owner would answer. */
	if (imm_len > FOS_WIRE_MAX_IMM || ncaps > FOS_WIRE_MAX_CAPS)
		return -E2BIG;
	c = fos_invoke_begin(target, imm, imm_len, ncaps);
	if (IS_ERR(c))
		return PTR_ERR(c);
	if (done)
		return fos_invoke_async(c, caps, done);

	for (;;) {
		ret = fos_invoke_describe(c, caps);
		if (ret)
			break;
		/* A Memory handed over waits: the answer says who keeps it. */
		if ((flags & FRACTOS_INVOKE_NOACK) && !c->iv->grant_ms) {
			ret = fos_invoke_post(c);
			break;
		}
		ret = fos_rpc_timeout(c->peer, FOS_WIRE_INVOKE, c->iv, c->len,
				      &c->rpc, c->iv->grant_ms ?
				      FOS_GRANT_TIMEOUT : FOS_REMOTE_TIMEOUT);
		if (!c->rpc.sent)
			fos_invoke_undescribe(c);
		if (ret != -EAGAIN || !wait)
			break;
		/* The provider's queue is full: try again shortly. */
		if (msleep_interruptible(1) || signal_pending(current)) {
			ret = -EINTR;
			break;
		}
	}
	return fos_invoke_end(c, ret);
}

/**
 * fos_remote_derive - have a Request's owner derive one from it
 * @target: the Request object, as for fos_remote_invoke()
 * @imm: immediates to append (for a Request derived here: its own first)
 * @imm_len: bytes at @imm
 * @caps: capability arguments to append
 * @ncaps: entries at @caps
 * @out: the owner's new Request (a proxy, or with fabric_loopback the
 *	local object), resolved on receipt; the caller drops @out->obj
 *
 * FRACTOS_CREATE_AT_OWNER: one DERIVE, answered by LOOKUP_REPLY.  A Memory
 * being handed over (MEMORY_GRANT) is no argument of a derivation.
 * Process context.
 *
 * Return: 0, the owner's errno (EKEYREVOKED, E2BIG, EMLINK, ENOSPC, ...),
 * or one of fos_remote_invoke()'s without @done; -EOPNOTSUPP for a Memory
 * being handed over; -EPROTO for an answer that is not one of the owner's
 * Requests.
 */
int fos_remote_derive(struct fos_object *target, const u8 *imm, u32 imm_len,
		      const struct fos_cap *caps, u32 ncaps,
		      struct fos_cap *out)
{
	struct fos_invoke_call *c;
	u32 i;
	int ret;

	might_sleep();

	if (imm_len > FOS_WIRE_MAX_IMM || ncaps > FOS_WIRE_MAX_CAPS)
		return -E2BIG;
	for (i = 0; i < ncaps; i++)
		if (!caps[i].obj->proxy && READ_ONCE(caps[i].obj->granting))
			return -EOPNOTSUPP;
	c = fos_invoke_begin(target, imm, imm_len, ncaps);
	if (IS_ERR(c))
		return PTR_ERR(c);
	ret = fos_invoke_describe(c, caps);
	if (ret)
		goto end;
	if (c->iv->grant_ms) {		/* handed over since we looked */
		fos_invoke_undescribe(c);
		ret = -EOPNOTSUPP;
		goto end;
	}
	ret = fos_rpc_timeout(c->peer, FOS_WIRE_DERIVE, c->iv, c->len,
			      &c->rpc, FOS_REMOTE_TIMEOUT);
	if (!c->rpc.sent)
		fos_invoke_undescribe(c);
	/* The owner answers with a Request of its own, or is wrong. */
	if (!ret && (c->rpc.cap.obj->type != FRACTOS_OBJ_REQUEST ||
		     (c->rpc.cap.obj->proxy &&
		      c->rpc.cap.obj->proxy->node != c->oid.node))) {
		fos_obj_put(c->rpc.cap.obj);
		ret = -EPROTO;
	} else if (!ret) {
		*out = c->rpc.cap;
	}
end:
	return fos_invoke_end(c, ret);
}

/**
 * fos_remote_revoke - cap_revoke on a proxy
 * @obj: the proxy
 *
 * Asks the owner to revoke the object, then revokes the proxy (and its
 * local subtree) in any case.
 *
 * Return: 0, -EKEYREVOKED (already revoked), or the owner's failure
 * (-EHOSTUNREACH, -ETIMEDOUT, ...), the proxy being revoked all the same.
 */
int fos_remote_revoke(struct fos_object *obj)
{
	struct fos_proxy *p = obj->proxy;
	struct fos_wire_obj o = {};
	struct fos_rpc_wait w;
	struct fos_peer *peer;
	int ret, lret;

	might_sleep();

	if (fos_obj_revoked(obj))
		return -EKEYREVOKED;
	o.oid = cpu_to_le64(p->oid);
	o.epoch = cpu_to_le32(p->epoch);
	peer = fos_peer_find(p->node);
	if (peer) {
		ret = fos_rpc(peer, FOS_WIRE_REVOKE_REQ, &o, sizeof(o), &w);
		fos_peer_put(peer);
	} else {
		ret = -EHOSTUNREACH;
	}
	lret = fos_obj_revoke(obj);
	if (ret == -ECONNRESET)
		ret = lret;	/* the owner died: its objects are gone */
	trace_fos_remote_revoke(p->node, p->oid, ret);
	return ret;
}

/**
 * fos_remote_lookup - NAME_LOOKUP on another node
 * @node: the node whose name service to ask
 * @name: the name, already checked
 * @len: its length
 * @out: the capability; the caller drops @out->obj
 *
 * Return: 0, -ENOENT, -EHOSTUNREACH, -ETIMEDOUT, -ENOMEM, -EINTR.
 */
int fos_remote_lookup(u32 node, const char *name, u32 len,
		      struct fos_cap *out)
{
	struct fos_wire_lookup *l;
	struct fos_rpc_wait w;
	struct fos_peer *peer;
	int ret;

	might_sleep();

	peer = fos_peer_find(node);
	if (!peer)
		return -EHOSTUNREACH;
	l = kzalloc(sizeof(*l) + len, GFP_KERNEL);
	if (!l) {
		ret = -ENOMEM;
		goto out;
	}
	l->uid = cpu_to_le32(from_kuid_munged(&init_user_ns, current_euid()));
	l->name_len = cpu_to_le32(len);
	memcpy(l + 1, name, len);
	ret = fos_rpc(peer, FOS_WIRE_LOOKUP, l, sizeof(*l) + len, &w);
	kfree(l);
	if (ret == -ECONNRESET)
		ret = -EHOSTUNREACH;
	if (!ret)
		*out = w.cap;	/* resolved on receipt */
out:
	fos_peer_put(peer);
	return ret;
}

/* ---- the answers to our calls (receive handlers, see remote.c) ---- */

void fos_ack_recv(struct fos_peer *peer, const struct fos_rx_info *rx,
		  const void *payload, u32 len)
{
	const struct fos_wire_ack *a = payload;
	int status = -(int)le32_to_cpu(a->status);

	if (!rx->cookie) {
		/* An invocation that wanted no answer was refused. */
		if (status)
			fos_total_add(FOS_TOTAL_NOACK_REFUSED, 1);
		trace_fos_remote_refused(fos_peer_node_id(peer), status);
		return;
	}
	fos_rpc_complete(peer, FOS_WIRE_ACK, rx->cookie, status, NULL, NULL,
			 NULL, 0);
}

void fos_lookup_reply_recv(struct fos_peer *peer,
			   const struct fos_rx_info *rx,
			   const void *payload, u32 len)
{
	const struct fos_wire_lookup_reply *r = payload;
	int status = -(int)le32_to_cpu(r->status);
	struct fos_cap cap = {};

	/*
	 * Resolved here, in the receive path, not by the caller: a proxy
	 * made of it exists before this connection's node-down sweep can
	 * run, which then revokes it like any other.
	 */
	if (!status)
		status = fos_cap_resolve(peer, &r->cap, &cap);
	/* Nobody waits for it any more: its proxy goes (a DROP). */
	if (!fos_rpc_complete(peer, FOS_WIRE_LOOKUP_REPLY,
			      rx->cookie, status,
			      status ? NULL : &cap, NULL, NULL, 0) && !status)
		fos_obj_put(cap.obj);
}
