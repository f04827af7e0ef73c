// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: remote objects - the owner's side of calls: the receive
 * handlers of INVOKE (delivered, or forwarded to the provider's node),
 * REVOKE_REQ, IMPORT, DROP and LOOKUP, and the ACK that answers them
 * (see "Remote objects" in remote.c).  The caller's side is call.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include "../fos.h"
#include "../name.h"
#include "../request.h"
#include "../fabric.h"
#include "wire.h"
#include "wire_check.h"
#include "pri.h"

struct workqueue_struct *fos_forward_wq;

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
	if (time_before(jiffies, fw->arrived + FOS_REMOTE_TIMEOUT / 2)) {
		if (fw->cookie)
			ret = fos_invoke_k(&cap, fw->imm, fw->imm_len, kcaps,
					   n, &fw->done);
		else	/* no answer wanted: none asked for on the way on */
			ret = fos_invoke_k_post(&cap, fw->imm, fw->imm_len,
						kcaps, n);
	}
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
 * Deliver the INVOKE @iv from @peer (a checked one: fos_wire_check_invoke()),
 * or a COPY's continuation (push.c).  Returns the ACK's errno, or
 * -EINPROGRESS when the invocation goes on to another node and the ACK
 * comes with that node's answer.
 */
int fos_invoke_deliver(struct fos_peer *peer, u64 cookie,
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
		ret = fos_req_deliver(req, imm, imm_len, caps, n, false);
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

/*
 * An INVOKE in the receive completion's softirq, with fabric_rx_softirq
 * ("Receiving in softirq" in fabric/rx.c), verified there.  The common
 * case is delivered here: no capability arguments, a local Request whose
 * export the RCU lookup finds, and memory for the message without
 * waiting (and, looped back without an answer, for the export's put that
 * fos_looped_put_later() leaves to a work item).  Anything else is deferred, having done
 * nothing, to fos_invoke_recv(): a refusal is decided and counted there.
 * What the delivery and its ACK take here is softirq-safe: the Request's
 * contents under fos_tree_lock (BH), the queue's lock (BH), GFP_NOWAIT,
 * puts that leave a last reference to a work item, and the fabric's send,
 * which never waits with FOS_SEND_QUEUE.
 */
int fos_invoke_recv_atomic(struct fos_peer *peer,
			   const struct fos_rx_info *rx, const void *payload,
			   u32 len)
{
	const struct fos_wire_invoke *iv = payload;
	struct fos_looped_put *lp = NULL;
	struct fos_object *obj;
	struct fos_req *req;
	int ret;

	if (iv->ncaps || le32_to_cpu(iv->epoch) != fos_epoch)
		return FOS_RX_DEFER;
	/* Looped back without an answer: as fos_invoke_recv(), later. */
	if (!rx->cookie && fos_peer_node_id(peer) == fos_node_id) {
		lp = fos_looped_put_alloc();
		if (!lp)
			return FOS_RX_DEFER;
	}
	ret = FOS_RX_DEFER;
	obj = fos_export_get_atomic(le64_to_cpu(iv->oid), peer);
	if (!obj)
		goto out_lp;
	if (obj->type != FRACTOS_OBJ_REQUEST || fos_invoke_forwarded(obj))
		goto out_obj;
	req = fos_obj_get_req(obj);
	if (IS_ERR(req))
		goto out_obj;
	ret = fos_req_deliver(req, (const u8 *)(iv + 1),
			      le32_to_cpu(iv->imm_len), NULL, 0, true);
	fos_req_put_atomic(req);
	if (ret == -ENOMEM) {
		ret = FOS_RX_DEFER;	/* with GFP_KERNEL, there */
	} else {
		if (!ret)
			fos_total_add(FOS_TOTAL_SOFTIRQ_INVOKES, 1);
		fos_send_ack(peer, rx->cookie, ret);
		if (lp)
			fos_looped_put_later(lp, le64_to_cpu(iv->oid),
					     le32_to_cpu(iv->epoch));
		lp = NULL;
		ret = 0;
	}
out_obj:
	fos_obj_put_atomic(obj);
out_lp:
	kfree(lp);
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
	if (!rx->cookie)
		fos_export_put_looped(le64_to_cpu(iv->oid),
				      le32_to_cpu(iv->epoch), from);
	if (ret != -EINPROGRESS)
		fos_send_ack(peer, rx->cookie, ret);
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
	if (!rw) {
		fos_peer_res_put(peer, FOS_PEER_WORK);
		return false;
	}
	rw->peer = fos_peer_get(peer);	/* the one charged the slot */
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

/*
 * One record of a DROP from @peer (node @from): false when it was a
 * protocol error (counted; the connection stays up, but nothing more of
 * that message is believed).
 */
static bool fos_drop_one(struct fos_peer *peer, u32 from,
			 const struct fos_wire_drop *d)
{
	u32 node = le32_to_cpu(d->node), epoch = 0;
	struct fos_peer *holder;

	if (le32_to_cpu(d->epoch) != fos_epoch)
		return true;	/* an older incarnation's objects: all gone */
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
		return false;
	}
	return true;
}

/*
 * Descriptions held by a node ended: it, or a forwarder for it, says so,
 * for up to FOS_WIRE_DROP_MAX objects (checked), each on its own; after
 * a record that is a protocol error the rest are not applied.
 */
void fos_drop_recv(struct fos_peer *peer, const struct fos_rx_info *rx,
		   const void *payload, u32 len)
{
	const struct fos_wire_drop *d = payload;
	u32 from = fos_peer_node_id(peer), i;

	for (i = 0; i < len / sizeof(*d); i++)
		if (!fos_drop_one(peer, from, &d[i]))
			break;
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
