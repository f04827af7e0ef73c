// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: remote objects - calls: a message and its answer; the caller's
 * side of invoke, revoke and lookup, and the owner's receive handlers
 * (see "Remote objects" in remote.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/cred.h>
#include <linux/delay.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/xarray.h>
#include "../fos.h"
#include "../name.h"
#include "../provider.h"
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

struct workqueue_struct *fos_forward_wq;

/* ---- the owner's side: receive handlers (registered by remote.c) ---- */

/*
 * Returns fos_fabric_send()'s: whether the ACK is on its way.  A call that
 * wants no answer (cookie 0) is answered only when it failed.
 */
int fos_send_ack(struct fos_peer *peer, u64 cookie, int status)
{
	struct fos_wire_ack ack = { .status = cpu_to_le32(-status) };

	if (!cookie && !status)
		return 0;

	return fos_fabric_send(peer, FOS_WIRE_ACK, cookie, &ack, sizeof(ack),
			       NULL, FOS_SEND_QUEUE);
}

/**
 * struct fos_forward - an INVOKE passed on to the provider's node
 * @done: fos_invoke_k()'s callback
 * @work: on fos_forward_wq
 * @peer: the invoker's node (a reference), for the ACK
 * @cookie: the INVOKE's, for the ACK
 * @arrived: jiffies when the INVOKE arrived
 * @obj: our Request it invoked (a reference; the work's)
 * @imm_len: bytes at @imm
 * @ncaps: entries at @caps and @kcaps
 * @caps: the resolved capability arguments, fos_invoke_deliver()'s array
 *	handed over (a reference each; the work's)
 * @kcaps: pointers to them, as fos_invoke_k() takes them
 * @imm: the immediates
 *
 * The callback owns the structure; the work reads what it needs into
 * locals first, since the callback may run (and free it) as soon as
 * fos_invoke_k() has sent the call.
 */
struct fos_forward {
	struct fos_invoke_done done;
	struct work_struct work;
	struct fos_peer *peer;
	u64 cookie;
	unsigned long arrived;
	struct fos_object *obj;
	u32 imm_len;
	u32 ncaps;
	struct fos_cap *caps;
	struct fos_kcap **kcaps;
	u8 imm[];
};

/* The provider's node answered (or the call failed): so do we. */
static void fos_forward_done(struct fos_invoke_done *d, int result)
{
	struct fos_forward *fw = container_of(d, struct fos_forward, done);

	fos_send_ack(fw->peer, fw->cookie, result);
	fos_peer_res_put(fw->peer, FOS_PEER_WORK);
	fos_peer_put(fw->peer);
	kfree(fw);
}

static void fos_forward_work_fn(struct work_struct *work)
{
	struct fos_forward *fw = container_of(work, struct fos_forward, work);
	struct fos_cap cap = { .obj = fw->obj };
	struct fos_cap *caps = fw->caps;
	struct fos_kcap **kcaps = fw->kcaps;
	u32 i, n = fw->ncaps;
	int ret = -ETIMEDOUT;

	/*
	 * As a process of ours invoking it would: its own arguments first,
	 * to the owner at its root.  Late, the invoker gives up soon
	 * ("Forwarding" in remote.c).
	 */
	if (time_before(jiffies, fw->arrived + FOS_REMOTE_TIMEOUT / 2))
		ret = fos_invoke_k(&cap, fw->imm, fw->imm_len, kcaps, n,
				   &fw->done);
	/* (the message holds what it needs of the arguments now) */
	for (i = 0; i < n; i++)
		fos_obj_put(caps[i].obj);
	kfree(caps);
	kfree(kcaps);
	fos_obj_put(cap.obj);
	if (ret != -EINPROGRESS)
		fos_forward_done(&fw->done, ret);
}

/*
 * Queue the invocation of @obj, whose provider is on a third node, for
 * fos_forward_work_fn().  When it returns -EINPROGRESS it has taken @obj's
 * reference and the array @caps with the references in it; without a
 * work slot of the invoker's (fabric_peer_work) it is -EAGAIN, as for a
 * full queue.
 */
static int fos_forward_queue(struct fos_peer *peer, u64 cookie,
			     struct fos_object *obj, const u8 *imm,
			     u32 imm_len, struct fos_cap *caps, u32 ncaps)
{
	struct fos_forward *fw;
	u32 i;

	if (!fos_peer_res_get(peer, FOS_PEER_WORK))
		return -EAGAIN;
	fw = kzalloc(struct_size(fw, imm, imm_len), GFP_KERNEL);
	if (fw)
		fw->kcaps = kcalloc(max(ncaps, 1U), sizeof(*fw->kcaps),
				    GFP_KERNEL);
	if (!fw || !fw->kcaps) {
		kfree(fw);
		fos_peer_res_put(peer, FOS_PEER_WORK);
		return -ENOMEM;
	}
	fw->peer = fos_peer_get(peer);
	fw->done.fn = fos_forward_done;
	fw->cookie = cookie;
	fw->arrived = jiffies;
	fw->obj = obj;
	fw->imm_len = imm_len;
	fw->ncaps = ncaps;
	fw->caps = caps;
	memcpy(fw->imm, imm, imm_len);
	/* struct fos_kcap is a struct fos_cap and nothing else */
	for (i = 0; i < ncaps; i++)
		fw->kcaps[i] = container_of(&caps[i], struct fos_kcap, cap);
	INIT_WORK(&fw->work, fos_forward_work_fn);
	queue_work(fos_forward_wq, &fw->work);
	return -EINPROGRESS;
}

/* Is @obj's provider on a third node (see "Forwarding" in remote.c)? */
static bool fos_invoke_forwarded(struct fos_object *obj)
{
	return fos_obj_root(obj)->proxy;
}

/*
 * Returns the ACK's errno, or -EINPROGRESS when the invocation goes on to
 * another node and the ACK comes with that node's answer.
 */
static int fos_invoke_deliver(struct fos_peer *peer, u64 cookie,
			      const struct fos_wire_invoke *iv)
{
	const struct fos_wire_cap *wc = (const void *)(iv + 1);
	u32 ncaps = le32_to_cpu(iv->ncaps), imm_len = le32_to_cpu(iv->imm_len);
	const u8 *imm = (const u8 *)(wc + ncaps);
	u32 i = 0, n = 0, from = fos_peer_node_id(peer);
	int granted = -1;
	struct fos_object *obj = NULL;
	struct fos_req *req = NULL;
	struct fos_cap *caps;
	bool forward;
	int ret;

	if (le32_to_cpu(iv->epoch) == fos_epoch)
		obj = fos_export_get(le64_to_cpu(iv->oid), peer, NULL);
	if (IS_ERR_OR_NULL(obj)) {
		ret = obj ? PTR_ERR(obj) : -EKEYREVOKED;
		goto out_disown;
	}
	if (obj->type != FRACTOS_OBJ_REQUEST) {
		ret = -EOPNOTSUPP;
		goto out_obj;
	}
	forward = fos_invoke_forwarded(obj);
	if (!forward) {
		req = fos_obj_get_req(obj);
		if (IS_ERR(req)) {
			ret = PTR_ERR(req);
			goto out_obj;
		}
	}
	caps = kcalloc(max(ncaps, 1U), sizeof(*caps), GFP_KERNEL);
	if (!caps) {
		ret = -ENOMEM;
		goto out_req;
	}
	/*
	 * All or nothing: every capability, then one queued message.  A
	 * description that fails to resolve is accounted for (disowned) by
	 * fos_cap_resolve(), those after it below.
	 */
	for (ret = 0; i < ncaps && !ret; i++) {
		ret = fos_handover_granted(peer, &wc[i]);
		if (ret < 0)
			break;	/* @wc[i] is disowned below */
		if (ret)
			granted = n;	/* the one Memory handed over */
		ret = fos_cap_resolve(peer, &wc[i], &caps[n]);
		if (!ret)
			n++;
	}
	if (!ret && granted >= 0) {
		ret = fos_handover_queue(peer, cookie, obj, req, imm, imm_len,
					 caps, n, granted,
					 le32_to_cpu(iv->grant_ms));
		if (ret == -EINPROGRESS) {
			obj = NULL;	/* the work's now, and the caps */
			req = NULL;
			caps = NULL;
			n = 0;
		}
	} else if (!ret && forward) {
		ret = fos_forward_queue(peer, cookie, obj, imm, imm_len, caps, n);
		if (ret == -EINPROGRESS) {
			obj = NULL;	/* the work's now, and the caps */
			caps = NULL;
			n = 0;
		}
	} else if (!ret) {
		ret = fos_req_deliver(req, imm, imm_len, caps, n);
	}
	while (n)
		fos_obj_put(caps[--n].obj);
	kfree(caps);
out_req:
	if (req)
		fos_req_put(req);
out_obj:
	if (obj)
		fos_obj_put(obj);
out_disown:
	/* Descriptions not made into capabilities go back (see wire.h). */
	for (; i < ncaps; i++)
		fos_cap_disown(&wc[i], from);
	return ret;
}

void fos_invoke_recv(struct fos_peer *peer, const struct fos_rx_info *rx,
		     const void *payload, u32 len)
{
	const struct fos_wire_invoke *iv = payload;
	u32 from = fos_peer_node_id(peer);
	int ret = fos_invoke_deliver(peer, rx->cookie, iv);

	/*
	 * Looped back without an answer: the invoker handed us its export
	 * of the target (fos_invoke_post()), as for an argument's.
	 */
	if (!rx->cookie && from == fos_node_id &&
	    le32_to_cpu(iv->epoch) == fos_epoch)
		fos_export_put(le64_to_cpu(iv->oid), from, fos_epoch, 1, NULL);
	if (ret != -EINPROGRESS)
		fos_send_ack(peer, rx->cookie, ret);
}

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

/**
 * struct fos_revoke_work - a REVOKE_REQ's wait for the object's keys
 * @work: on fos_copy_wq
 * @peer: the holder's node (a reference)
 * @obj: the object it asked us to revoke (a reference)
 * @cookie: its cookie, for the ACK
 */
struct fos_revoke_work {
	struct work_struct work;
	struct fos_peer *peer;
	struct fos_object *obj;
	u64 cookie;
};

/* A REVOKE_REQ's answer; its receive credit was held until now. */
static void fos_revoke_ack(struct fos_peer *peer, u64 cookie, int status)
{
	fos_send_ack(peer, cookie, status);
	fos_fabric_credit_done(peer);
}

static void fos_revoke_work_fn(struct work_struct *work)
{
	struct fos_revoke_work *rw = container_of(work, struct fos_revoke_work,
						  work);
	int ret = fos_obj_revoke(rw->obj);

	fos_obj_put(rw->obj);
	if (!ret)
		fos_remote_grants_sync();
	fos_revoke_ack(rw->peer, rw->cookie, ret);
	fos_peer_res_put(rw->peer, FOS_PEER_WORK);
	fos_peer_put(rw->peer);
	kfree(rw);
}

/*
 * Hand @obj's revocation to fos_copy_wq, taking a work slot of @peer's.
 * Return: queued (the work owns the reference on @obj), or false with
 * nothing taken.
 */
static bool fos_revoke_queue(struct fos_peer *peer, struct fos_object *obj,
			     u64 cookie)
{
	struct fos_revoke_work *rw;

	if (!fos_peer_res_get(peer, FOS_PEER_WORK))
		return false;
	rw = kmalloc(sizeof(*rw), GFP_KERNEL);
	if (rw)
		rw->peer = fos_peer_find(fos_peer_node_id(peer));
	if (!rw || !rw->peer) {
		kfree(rw);
		fos_peer_res_put(peer, FOS_PEER_WORK);
		return false;
	}
	rw->obj = obj;
	rw->cookie = cookie;
	INIT_WORK(&rw->work, fos_revoke_work_fn);
	queue_work(fos_copy_wq, &rw->work);
	return true;
}

/*
 * A holder asks us to revoke one of our objects.  Whether it holds it is
 * decided here, in the receive path, in order with its DROPs.  As for a
 * local CAP_REVOKE on the owner, the answer goes only once no node can
 * read the object's pages any more, so that the holder's CAP_REVOKE of its
 * proxy returns with the keys dead too: that wait (at most
 * FOS_GRANT_END_WAIT) runs on fos_copy_wq, since the pullers' RELEASEs come
 * through this receive path, and the credit is held until the ACK.  A
 * revocation is never refused for load: without a work slot
 * (fabric_peer_work) or memory it is done here and answered at once, the
 * keys then dying within FOS_GRANT_END_WAIT.
 */
void fos_revoke_req_recv(struct fos_peer *peer, const struct fos_rx_info *rx,
			 const void *payload, u32 len)
{
	const struct fos_wire_obj *o = payload;
	u64 cookie = rx->cookie;
	struct fos_object *obj = NULL;

	if (le32_to_cpu(o->epoch) == fos_epoch)
		obj = fos_export_get(le64_to_cpu(o->oid), peer, NULL);
	if (IS_ERR_OR_NULL(obj)) {
		fos_revoke_ack(peer, cookie, obj ? PTR_ERR(obj) : -EKEYREVOKED);
		return;
	}
	if (fos_revoke_queue(peer, obj, cookie))
		return;
	fos_revoke_ack(peer, cookie, fos_obj_revoke(obj));
	fos_obj_put(obj);
}

/* A node is about to send @node a capability to one of ours: count it. */
void fos_import_recv(struct fos_peer *peer, const struct fos_rx_info *rx,
		     const void *payload, u32 len)
{
	const struct fos_wire_import *im = payload;
	u32 node = le32_to_cpu(im->node);
	struct fos_peer *holder;
	int ret = -EKEYREVOKED;

	if (node == fos_node_id) {
		ret = -EPROTO;	/* the owner needs no IMPORT */
	} else if (le32_to_cpu(im->epoch) == fos_epoch) {
		/* Only a peer can ever use it, or DROP it. */
		holder = fos_peer_find(node);
		if (holder) {
			struct fos_view v = {
				.off = le64_to_cpu(im->off),
				.len = le64_to_cpu(im->len),
				.perms = le32_to_cpu(im->perms),
			};

			ret = fos_export_count(le64_to_cpu(im->oid), node,
					       fos_peer_epoch(holder), &v,
					       peer);
			fos_peer_put(holder);
		} else {
			ret = -EHOSTUNREACH;
		}
	}
	fos_send_ack(peer, rx->cookie, ret);
}

/* Descriptions held by a node ended: it, or a forwarder for it, says so. */
void fos_drop_recv(struct fos_peer *peer, const struct fos_rx_info *rx,
		   const void *payload, u32 len)
{
	const struct fos_wire_drop *d = payload;
	u32 node = le32_to_cpu(d->node), epoch = 0;
	u32 from = fos_peer_node_id(peer);
	struct fos_peer *holder;

	if (le32_to_cpu(d->epoch) != fos_epoch)
		return;	/* an older incarnation's objects: all gone */
	holder = fos_peer_find(node);
	if (holder) {
		epoch = fos_peer_epoch(holder);
		fos_peer_put(holder);
	}
	if (fos_export_put(le64_to_cpu(d->oid), node, epoch,
			   le64_to_cpu(d->count), &from)) {
		fos_peer_proto_error(peer, "a DROP for another holder");
		pr_warn_ratelimited("node %u drops %llu descriptions of object %llu for node %u, which it did not announce\n",
				    from, le64_to_cpu(d->count),
				    le64_to_cpu(d->oid), node);
	}
}

/* LOOKUP, in process context (an IMPORT may have to be waited for). */
void fos_lookup_serve(struct fos_peer *peer, u64 cookie,
		      const struct fos_wire_lookup *l)
{
	u32 node = fos_peer_node_id(peer), epoch = fos_peer_epoch(peer);
	struct fos_wire_lookup_reply r = {};
	struct fos_cap cap;
	kuid_t uid;
	int ret = -ENOENT;

	/*
	 * The asker's uid is the peer's word: unless the admin said that the
	 * peer's uids are ours, only world-visible names are found
	 * (fos_name_get() matches no name's owner with INVALID_UID).
	 */
	uid = INVALID_UID;
	if (fos_peer_trusts_uids(peer))
		uid = make_kuid(&init_user_ns, le32_to_cpu(l->uid));
	ret = fos_name_get((const char *)(l + 1), le32_to_cpu(l->name_len),
			   uid, &cap);
	if (!ret) {
		ret = fos_cap_describe(&cap, node, epoch, &r.cap);
		fos_obj_put(cap.obj);
		if (ret)
			memset(&r.cap, 0, sizeof(r.cap));
	}
	r.status = cpu_to_le32(-ret);
	if (fos_fabric_send(peer, FOS_WIRE_LOOKUP_REPLY, cookie, &r, sizeof(r),
			    NULL, FOS_SEND_QUEUE) && !ret)
		fos_cap_undescribe(&r.cap, node, epoch);
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
