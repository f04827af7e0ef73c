// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: remote objects - capabilities on the wire: a capability
 * described for another node (counted by the object's owner), a
 * description resolved into a capability, and descriptions given back
 * (see "Holders" and "Views" in wire.h).
 */
#include <linux/err.h>
#include <linux/llist.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include "../fos.h"
#include "../memory.h"
#include "../fabric.h"
#include "wire.h"
#include "pri.h"

/* ---- capabilities on the wire ---- */

/* A placeholder for a capability that arrived already revoked. */
static struct fos_object *fos_revoked_object(u32 type)
{
	struct fos_object *obj = fos_obj_create(type, NULL, NULL);

	if (!obj)
		return ERR_PTR(-ENOMEM);
	fos_obj_revoke(obj);
	return obj;
}

/*
 * Before a capability to a proxy's object goes to @node, which is not
 * the owner: have the owner count it for @node (IMPORT, see "Holders" in
 * wire.h).  Return: 0 (counted), -EKEYREVOKED (send it as revoked: the
 * object is gone, its owner too, or @node cannot reach it), or -ETIMEDOUT,
 * -EINTR, -ENOMEM.
 */
int fos_cap_import(struct fos_object *obj, u32 node,
		   const struct fos_view *v)
{
	struct fos_proxy *p = obj->proxy;
	struct fos_wire_import im = {
		.oid = cpu_to_le64(p->oid),
		.epoch = cpu_to_le32(p->epoch),
		.node = cpu_to_le32(node),
		.off = cpu_to_le64(v->off),
		.len = cpu_to_le64(v->len),
		.perms = cpu_to_le32(v->perms),
	};
	struct fos_rpc_wait w;
	struct fos_peer *peer;
	int ret;

	peer = fos_peer_find(p->node);
	if (!peer)
		return -EKEYREVOKED;
	ret = fos_rpc(peer, FOS_WIRE_IMPORT, &im, sizeof(im), &w);
	fos_peer_put(peer);
	switch (ret) {
	case 0:
		return 0;
	case -EKEYREVOKED:
		fos_obj_revoke(obj);	/* the owner says so: monitors fire */
		return ret;
	case -EHOSTUNREACH:	/* not connected, or @node unknown there */
	case -ECONNRESET:	/* the owner went down meanwhile */
		return -EKEYREVOKED;
	default:
		/* Maybe counted: give it back (ordered after the IMPORT). */
		if (w.sent && !w.answered)
			fos_drop_queue(NULL, p->node, p->epoch, p->oid, node,
				       1);
		return ret;
	}
}

/*
 * The name of @obj (its owner's node, epoch and public id), its type and
 * @cap's view, into @wc; its flags are left as they are.
 */
void fos_wire_cap_name(struct fos_wire_cap *wc, struct fos_object *obj,
		       const struct fos_cap *cap)
{
	struct fractos_oid oid;

	fos_obj_oid(obj, &oid);
	wc->node = cpu_to_le32(oid.node);
	wc->epoch = cpu_to_le32(oid.epoch);
	wc->oid = cpu_to_le64(oid.id);
	wc->off = cpu_to_le64(cap->off);
	wc->len = cpu_to_le64(cap->len);
	wc->type = cpu_to_le32(obj->type);
	wc->perms = cpu_to_le32(cap->perms);
}

/**
 * fos_cap_describe - put a capability on the wire for node @node
 * @cap: the capability
 * @node: the receiver
 * @epoch: its epoch
 * @wc: filled in
 *
 * The description is counted by the object's owner for @node (see
 * "Holders" in wire.h): a local object is exported to @node, another
 * node's is announced to its owner with IMPORT unless @node is the owner.
 * The receiver gives it back (a DROP, or fos_cap_consume()); if the
 * message is not sent, fos_cap_undescribe() does.
 *
 * Return: 0, -EOPNOTSUPP (a local child of a proxy that is not a Request:
 * a Memory view of another node's), -ENOMEM, or -ETIMEDOUT, -EINTR
 * (IMPORT).
 */
int fos_cap_describe(const struct fos_cap *cap, u32 node, u32 epoch,
		     struct fos_wire_cap *wc)
{
	struct fos_view v = {
		.off = cap->off, .len = cap->len, .perms = cap->perms,
	};
	struct fos_object *obj = cap->obj;
	int ret;

	memset(wc, 0, sizeof(*wc));
	if (!obj->proxy) {
		/* a Request of a third node's: invoking it is forwarded */
		if (fos_obj_root(obj)->proxy && obj->type != FRACTOS_OBJ_REQUEST)
			return -EOPNOTSUPP;
		ret = fos_export_add(obj, node, epoch, &v);
		if (ret == -EKEYREVOKED)
			wc->flags = cpu_to_le32(FOS_WIRE_CAP_REVOKED);
		else if (ret)
			return ret;
	} else if (fos_obj_revoked(obj)) {
		wc->flags = cpu_to_le32(FOS_WIRE_CAP_REVOKED);
	} else if (obj->proxy->node != node) {
		ret = fos_cap_import(obj, node, &v);
		if (ret == -EKEYREVOKED)
			wc->flags = cpu_to_le32(FOS_WIRE_CAP_REVOKED);
		else if (ret)
			return ret;
	}
	fos_wire_cap_name(wc, obj, cap);
	return 0;
}

/*
 * A description fos_cap_describe() made for @node (@epoch) was not sent:
 * give it back to whoever counted it.
 */
void fos_cap_undescribe(const struct fos_wire_cap *wc, u32 node,
			u32 epoch)
{
	u32 owner = le32_to_cpu(wc->node);

	if (le32_to_cpu(wc->flags) & FOS_WIRE_CAP_REVOKED)
		return;
	/* Ours: counted for @node, this node itself too (fabric_loopback). */
	if (owner == fos_node_id)
		fos_export_put(le64_to_cpu(wc->oid), node, epoch, 1, NULL);
	else if (owner != node)
		fos_drop_queue(NULL, owner, le32_to_cpu(wc->epoch),
			       le64_to_cpu(wc->oid), node, 1);
}

/*
 * Our object @oid of @epoch, which a message from @from named: if this
 * node sent it to itself (fabric_loopback), its sender counted an export
 * for the receiver, which is the sender: put it.  One of ours from another
 * node was not counted.
 */
void fos_export_put_looped(u64 oid, u32 epoch, u32 from)
{
	if (from == fos_node_id && epoch == fos_epoch)
		fos_export_put(oid, from, fos_epoch, 1, NULL);
}

/**
 * struct fos_looped_put - fos_export_put_looped() left to a work item
 * @node: on fos_looped_puts
 * @oid: the object
 * @epoch: the epoch it was named with
 */
struct fos_looped_put {
	struct llist_node node;
	u64 oid;
	u32 epoch;
};

static LLIST_HEAD(fos_looped_puts);

static void fos_looped_put_work(struct work_struct *work)
{
	struct llist_node *list = llist_del_all(&fos_looped_puts);
	struct fos_looped_put *lp, *tmp;

	llist_for_each_entry_safe(lp, tmp, list, node) {
		fos_export_put_looped(lp->oid, lp->epoch, fos_node_id);
		kfree(lp);
		cond_resched();
	}
}

static DECLARE_DELAYED_WORK(fos_looped_put_w, fos_looped_put_work);

/*
 * For an INVOKE looped back without an answer that the receive softirq
 * delivers (fos_invoke_recv_atomic()): fos_export_put_looped() takes the
 * export mutex, so its put is left to one work item on fos_copy_wq for
 * all those of a tick (one work item per call cost more than the softirq
 * saved).  Allocated before the delivery (NULL: defer it all); the export
 * keeps the target's count until the work puts it, a tick longer than
 * the process-context handler would.  Module exit runs what is left with
 * fos_looped_puts_flush(), after the fabric is down.
 */
struct fos_looped_put *fos_looped_put_alloc(void)
{
	return kmalloc(sizeof(struct fos_looped_put),
		       GFP_NOWAIT | __GFP_NOWARN);
}

void fos_looped_put_later(struct fos_looped_put *lp, u64 oid, u32 epoch)
{
	lp->oid = oid;
	lp->epoch = epoch;
	if (llist_add(&lp->node, &fos_looped_puts))
		queue_delayed_work(fos_copy_wq, &fos_looped_put_w, 1);
}

void fos_looped_puts_flush(void)
{
	flush_delayed_work(&fos_looped_put_w);
}

/*
 * A description @from sent us was not made into a capability (the
 * message failed): give it back to whoever counted it for us.
 */
void fos_cap_disown(const struct fos_wire_cap *wc, u32 from)
{
	u32 owner = le32_to_cpu(wc->node);

	if (le32_to_cpu(wc->flags) & FOS_WIRE_CAP_REVOKED)
		return;
	if (owner != fos_node_id)
		fos_drop_queue(NULL, owner, le32_to_cpu(wc->epoch),
			       le64_to_cpu(wc->oid), fos_node_id, 1);
	else
		fos_export_put_looped(le64_to_cpu(wc->oid),
				      le32_to_cpu(wc->epoch), from);
}

/* A local Memory object must hold the view it is named with. */
int fos_view_check(struct fos_object *obj, const struct fos_cap *cap)
{
	struct fos_mem *mem;
	int ret = 0;

	if (obj->type != FRACTOS_OBJ_MEMORY)
		return 0;
	mem = fos_obj_get_mem(obj);
	if (IS_ERR(mem))
		return 0;	/* revoked meanwhile: the capability is too */
	if (cap->off > mem->len || cap->len > mem->len - cap->off ||
	    ((cap->perms & FRACTOS_PERM_WRITE) && !mem->writable))
		ret = -EPROTO;
	fos_mem_put(mem);
	return ret;
}

/**
 * fos_cap_resolve - make a capability of a validated struct fos_wire_cap
 * @peer: the node it came from
 * @wc: the capability
 * @out: filled in; the caller drops @out->obj
 *
 * The description is accounted for in any case: counted in the proxy it
 * resolves to, or given back (fos_cap_disown()).
 *
 * Return: 0, -ENOMEM, or -EPROTO (it contradicts what we know).
 */
int fos_cap_resolve(struct fos_peer *peer, const struct fos_wire_cap *wc,
		    struct fos_cap *out)
{
	u32 node = le32_to_cpu(wc->node), epoch = le32_to_cpu(wc->epoch);
	u32 type = le32_to_cpu(wc->type), from = fos_peer_node_id(peer);
	u64 oid = le64_to_cpu(wc->oid);
	struct fos_object *obj;
	struct fos_view v;
	int ret = 0;

	out->off = le64_to_cpu(wc->off);
	out->len = le64_to_cpu(wc->len);
	out->perms = le32_to_cpu(wc->perms);
	v.off = out->off;
	v.len = out->len;
	v.perms = out->perms;
	if (le32_to_cpu(wc->flags) & FOS_WIRE_CAP_REVOKED) {
		obj = fos_revoked_object(type);
	} else if (node == fos_node_id) {
		/* Ours: the real object, or nothing if it is gone. */
		obj = NULL;
		if (epoch == fos_epoch)
			obj = fos_export_get(oid, peer, &v);
		/* Counted only when we sent it to ourselves: done with it. */
		fos_cap_disown(wc, from);
		if (IS_ERR(obj))
			return PTR_ERR(obj);
		if (obj && obj->type != type) {
			fos_obj_put(obj);
			return -EPROTO;
		}
		if (!obj)
			obj = fos_revoked_object(type);
	} else {
		obj = fos_proxy_get(node, epoch, oid, type);
		if (IS_ERR(obj))
			fos_cap_disown(wc, from);
	}
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	out->obj = obj;
	if (node == fos_node_id)
		ret = fos_view_check(obj, out);
	if (ret)
		fos_obj_put(obj);
	return ret;
}
