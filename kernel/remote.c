// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: objects of other nodes - the export table, proxies, remote
 * invocation, revocation across nodes and remote name lookups.
 *
 * DOC: Remote objects
 *
 * An object is named by (node, epoch, oid).  When a capability to a local
 * object is sent to another node (an invocation argument, the target of a
 * loopback invocation, a name lookup's answer), the object is entered in
 * the *export table* (struct fos_export, keyed by oid) with a reference
 * held, and the receiving node is recorded as an *importer* of it.  Any
 * message from a node that names an exported object registers that node
 * as an importer too (the owner then tells it about revocation).  Entries
 * go away when the object is revoked (every importer is sent a REVOKE
 * notice, best effort) or when the last importer's node is gone.  Kernels
 * trust each other, as FractOS Controllers do: an oid that is not in the
 * table (never exported, or revoked) names nothing.
 *
 * A capability received from another node becomes a capability to a
 * *proxy* (struct fos_proxy hanging off a struct fos_object of the same
 * type, without owner, contents or parent) that records (node, epoch,
 * oid); the capability keeps the view (off, len, perms) it was sent with.
 * There is at most one live proxy per remote object on a node (the proxy
 * table), so a REVOKE notice finds it.  A descriptor that names this node
 * and epoch resolves to the real local object with the view it carries,
 * so an owner that gets its own Memory back uses it at full speed.  One
 * naming a third node makes a proxy to that node's object directly, and an
 * IMPORT notice tells that owner about the new holder.
 *
 * Invoking a Request capability whose object is a proxy (or a local
 * revocation-tree child of one, or a Request derived from one) sends
 * INVOKE to the owner and waits (process context) for its ACK: the owner
 * validates everything, resolves every capability, and queues on the
 * provider exactly what a local invocation would queue, or nothing and an
 * errno.  EAGAIN (full queue) is retried by the invoker when
 * FRACTOS_INVOKE_WAIT is set.  An owner answering EKEYREVOKED makes the
 * invoker revoke its proxy.
 *
 * Revocation: revoking a proxy (cap_revoke) asks the owner to revoke the
 * object (REVOKE_REQ, as any local holder may), then revokes the proxy
 * and its local subtree whatever the owner said.  Revoking a local
 * revocation-tree child of a proxy stays local.
 *
 * Node death: when a peer's connection goes down, its epoch changes or it
 * is deleted (fabric.c calls fos_remote_node_down()), calls waiting on it
 * fail, every proxy of its objects (of that epoch) is revoked - monitors
 * fire as for a local revocation - and it stops being an importer of our
 * objects.  A node that comes back with the same epoch does not get them
 * back.
 *
 * Limits of this step: capabilities to a local child of a proxy cannot be
 * sent to another node (EOPNOTSUPP); memory_copy on a remote Memory gives
 * EOPNOTSUPP; an importer does not tell the owner when it drops its last
 * capability, so an exported object stays referenced until it is revoked
 * or the importer is gone (and a delegation sent to another node counts
 * until then for monitor_delegate).
 *
 * Locking:
 * - fos_export_lock (a mutex) protects the export table's contents and
 *   every entry's importers list and @hashed flag; it is taken before
 *   fos_tree_lock, which protects fos_object.export.  An entry is freed by
 *   whoever took it off its object: a revocation (through struct fos_dead)
 *   or the loss of its last importer.
 * - fos_proxy_lock (a spinlock) protects the proxy table and the proxies'
 *   @hashed flags.  Nothing nests inside it.
 * - fos_events_lock protects the deferred events list.
 */
#include <linux/completion.h>
#include <linux/cred.h>
#include <linux/delay.h>
#include <linux/hashtable.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include "fos.h"
#include "fabric.h"
#include "wire.h"

static bool fos_fabric_loopback;
module_param_named(fabric_loopback, fos_fabric_loopback, bool, 0644);
MODULE_PARM_DESC(fabric_loopback,
		 "Send invocations of local Requests through the fabric to this node, which must be configured as its own peer (default 0)");

/* How long an invoker waits for the owner's answer. */
#define FOS_REMOTE_TIMEOUT	(10 * HZ)

/**
 * struct fos_importer - a node that may hold a capability to an export
 * @link: on fos_export.importers
 * @node: its id
 * @epoch: its epoch when it was recorded, 0 if unknown
 */
struct fos_importer {
	struct list_head link;
	u32 node;
	u32 epoch;
};

/**
 * struct fos_export - an entry of the export table
 * @obj: the local object (one reference held)
 * @importers: struct fos_importer, under fos_export_lock
 * @dead: on a struct fos_dead list once revocation took the entry
 * @hashed: in fos_exports, under fos_export_lock
 */
struct fos_export {
	struct fos_object *obj;
	struct list_head importers;
	struct list_head dead;
	bool hashed;
};

static DEFINE_MUTEX(fos_export_lock);
/* oid -> struct fos_export; changed under fos_export_lock. */
static DEFINE_XARRAY(fos_exports);

/**
 * struct fos_proxy - what a proxy object stands for
 * @hnode: in fos_proxies, under fos_proxy_lock
 * @obj: the proxy object; no reference (freeing it unhashes us first)
 * @node: the owner node
 * @epoch: the owner's epoch
 * @oid: the object id on the owner
 * @hashed: in fos_proxies, under fos_proxy_lock
 */
struct fos_proxy {
	struct hlist_node hnode;
	struct fos_object *obj;
	u32 node;
	u32 epoch;
	u64 oid;
	bool hashed;
};

static DEFINE_SPINLOCK(fos_proxy_lock);
static DEFINE_HASHTABLE(fos_proxies, 8);

/**
 * struct fos_call_wait - a call waiting for its answer
 * @done: completed by the answer or by the node's death
 * @node: the node that must answer
 * @status: 0 or a negative errno
 * @cap: LOOKUP_REPLY: the capability
 */
struct fos_call_wait {
	struct completion done;
	u32 node;
	int status;
	struct fos_wire_cap cap;
};

/* Calls in flight by cookie; xa_lock guards completing them. */
static DEFINE_XARRAY_ALLOC(fos_calls);

enum fos_event_kind {
	FOS_EV_NOTICE,		/* send a REVOKE or IMPORT notice */
	FOS_EV_DOWN,		/* a node (epoch) is gone */
};

/**
 * struct fos_event - work deferred to fos_remote_wq, done in order
 * @link: on fos_events
 * @kind: enum fos_event_kind
 * @type: FOS_EV_NOTICE: the message type
 * @node: the node concerned
 * @epoch: NOTICE: the object's epoch; DOWN: the dead epoch, 0 for all
 * @oid: NOTICE: the object id
 */
struct fos_event {
	struct list_head link;
	u8 kind;
	u8 type;
	u32 node;
	u32 epoch;
	u64 oid;
};

static DEFINE_SPINLOCK(fos_events_lock);
static LIST_HEAD(fos_events);
static struct workqueue_struct *fos_remote_wq;
static void fos_events_fn(struct work_struct *work);
static DECLARE_WORK(fos_events_work, fos_events_fn);

bool fos_remote_loopback(void)
{
	return READ_ONCE(fos_fabric_loopback);
}

static void fos_event_queue(u8 kind, u8 type, u32 node, u32 epoch, u64 oid,
			    gfp_t gfp)
{
	struct fos_event *ev = kzalloc(sizeof(*ev), gfp);

	if (!ev)
		return;	/* best effort, as the notices themselves */
	ev->kind = kind;
	ev->type = type;
	ev->node = node;
	ev->epoch = epoch;
	ev->oid = oid;
	spin_lock(&fos_events_lock);
	list_add_tail(&ev->link, &fos_events);
	spin_unlock(&fos_events_lock);
	queue_work(fos_remote_wq, &fos_events_work);
}

/* ---- the export table ---- */

/* Record @node as an importer of @e.  Caller holds fos_export_lock. */
static void fos_export_add_importer(struct fos_export *e, u32 node, u32 epoch,
				    struct fos_importer **spare)
{
	struct fos_importer *i;

	list_for_each_entry(i, &e->importers, link)
		if (i->node == node && i->epoch == epoch)
			return;
	i = *spare;
	*spare = NULL;
	i->node = node;
	i->epoch = epoch;
	list_add_tail(&i->link, &e->importers);
}

/**
 * fos_export_add - make @obj reachable from node @node
 * @obj: a local object (not a proxy, nor a child of one)
 * @node: the importer
 * @epoch: its epoch
 *
 * Return: 0, -EKEYREVOKED or -ENOMEM.
 */
static int fos_export_add(struct fos_object *obj, u32 node, u32 epoch)
{
	struct fos_export *e, *spare_e;
	struct fos_importer *spare_i;
	bool revoked;
	int ret = 0;

	spare_e = kzalloc(sizeof(*spare_e), GFP_KERNEL);
	spare_i = kzalloc(sizeof(*spare_i), GFP_KERNEL);
	if (!spare_e || !spare_i) {
		ret = -ENOMEM;
		goto out_free;
	}
	mutex_lock(&fos_export_lock);
	spin_lock(&fos_tree_lock);
	revoked = obj->revoked;
	e = obj->export;
	spin_unlock(&fos_tree_lock);
	if (revoked) {
		ret = -EKEYREVOKED;
		goto out;
	}
	if (!e) {
		e = spare_e;
		e->obj = obj;
		INIT_LIST_HEAD(&e->importers);
		INIT_LIST_HEAD(&e->dead);
		ret = xa_insert(&fos_exports, obj->id, e, GFP_KERNEL);
		if (ret)
			goto out;
		spin_lock(&fos_tree_lock);
		revoked = obj->revoked;
		if (!revoked) {
			obj->export = e;
			fos_obj_get(obj);
		}
		spin_unlock(&fos_tree_lock);
		if (revoked) {
			xa_erase(&fos_exports, obj->id);
			ret = -EKEYREVOKED;
			goto out;
		}
		e->hashed = true;
		spare_e = NULL;
		fos_live_add(FOS_LIVE_EXPORTS, 1);
	}
	/* (Even if revocation just took @e: it then tells @node.) */
	fos_export_add_importer(e, node, epoch, &spare_i);
out:
	mutex_unlock(&fos_export_lock);
out_free:
	kfree(spare_e);
	kfree(spare_i);
	return ret;
}

/**
 * fos_export_get - the exported object @oid, registering @node as importer
 * @oid: the object id
 * @node: the node that named it
 * @epoch: that node's epoch
 *
 * Return: the object with a reference, or NULL if it is not exported (or
 * revoked, or out of memory).
 */
static struct fos_object *fos_export_get(u64 oid, u32 node, u32 epoch)
{
	struct fos_object *obj = NULL;
	struct fos_importer *spare;
	struct fos_export *e;

	spare = kzalloc(sizeof(*spare), GFP_KERNEL);
	if (!spare)
		return NULL;
	mutex_lock(&fos_export_lock);
	e = xa_load(&fos_exports, oid);
	if (e && !fos_obj_revoked(e->obj)) {
		obj = e->obj;
		fos_obj_get(obj);
		fos_export_add_importer(e, node, epoch, &spare);
	}
	mutex_unlock(&fos_export_lock);
	kfree(spare);
	return obj;
}

/*
 * Revocation of @obj: take its export entry.  Caller holds fos_tree_lock;
 * fos_remote_exports_release() finishes the job.
 */
void fos_remote_revoke_locked(struct fos_object *obj, struct fos_dead *dead)
{
	if (!obj->export)
		return;
	list_add_tail(&obj->export->dead, &dead->exports);
	obj->export = NULL;
}

static void fos_export_free(struct fos_export *e)
{
	fos_obj_put(e->obj);
	kfree(e);
	fos_live_add(FOS_LIVE_EXPORTS, -1);
}

/**
 * fos_remote_exports_release - revoked objects leave the export table
 * @list: struct fos_export entries linked by dead
 *
 * Every importer is sent a REVOKE notice.  May sleep.
 */
void fos_remote_exports_release(struct list_head *list)
{
	struct fos_export *e, *tmp;

	list_for_each_entry_safe(e, tmp, list, dead) {
		struct fos_importer *i, *itmp;
		LIST_HEAD(importers);

		list_del(&e->dead);
		mutex_lock(&fos_export_lock);
		if (e->hashed) {
			xa_erase(&fos_exports, e->obj->id);
			e->hashed = false;
		}
		list_splice_init(&e->importers, &importers);
		mutex_unlock(&fos_export_lock);
		list_for_each_entry_safe(i, itmp, &importers, link) {
			fos_event_queue(FOS_EV_NOTICE, FOS_WIRE_REVOKE, i->node,
					fos_epoch, e->obj->id, GFP_KERNEL);
			kfree(i);
		}
		fos_export_free(e);
	}
}

/* Node @node (@epoch, or any if 0) is gone: it imports nothing any more. */
static void fos_exports_drop_node(u32 node, u32 epoch)
{
	struct fos_export *e, *tmp;
	unsigned long idx;
	LIST_HEAD(gone);

	mutex_lock(&fos_export_lock);
	xa_for_each(&fos_exports, idx, e) {
		struct fos_importer *i, *itmp;
		bool mine;

		list_for_each_entry_safe(i, itmp, &e->importers, link) {
			if (i->node != node ||
			    (epoch && i->epoch && i->epoch != epoch))
				continue;
			list_del(&i->link);
			kfree(i);
		}
		if (!list_empty(&e->importers))
			continue;
		spin_lock(&fos_tree_lock);
		mine = e->obj->export == e;
		if (mine)
			e->obj->export = NULL;
		spin_unlock(&fos_tree_lock);
		if (!mine)
			continue;	/* a revocation took it: it frees it */
		xa_erase(&fos_exports, idx);
		e->hashed = false;
		list_add_tail(&e->dead, &gone);
	}
	mutex_unlock(&fos_export_lock);
	list_for_each_entry_safe(e, tmp, &gone, dead) {
		list_del(&e->dead);
		fos_export_free(e);
	}
}

/* ---- proxies ---- */

static u64 fos_proxy_key(u32 node, u32 epoch, u64 oid)
{
	return oid ^ ((u64)node << 32) ^ epoch;
}

/*
 * The proxy for (@node, @epoch, @oid) with a reference, or NULL.  With
 * @live, revoked proxies do not count.  Caller holds fos_proxy_lock.
 */
static struct fos_object *fos_proxy_find_locked(u32 node, u32 epoch, u64 oid,
						bool live)
{
	struct fos_proxy *p;

	hash_for_each_possible(fos_proxies, p, hnode,
			       fos_proxy_key(node, epoch, oid)) {
		if (p->node != node || p->epoch != epoch || p->oid != oid)
			continue;
		if (live && fos_obj_revoked(p->obj))
			continue;
		if (kref_get_unless_zero(&p->obj->ref))
			return p->obj;
	}
	return NULL;
}

/* Unhash every proxy for the key (revoked or dying ones).  Locked. */
static void fos_proxy_unhash_locked(u32 node, u32 epoch, u64 oid)
{
	struct hlist_node *tmp;
	struct fos_proxy *p;

	hash_for_each_possible_safe(fos_proxies, p, tmp, hnode,
				    fos_proxy_key(node, epoch, oid)) {
		if (p->node != node || p->epoch != epoch || p->oid != oid)
			continue;
		hash_del(&p->hnode);
		p->hashed = false;
	}
}

/* The object is being freed. */
void fos_remote_proxy_free(struct fos_proxy *p)
{
	spin_lock(&fos_proxy_lock);
	if (p->hashed)
		hash_del(&p->hnode);
	spin_unlock(&fos_proxy_lock);
	kfree(p);
	fos_live_add(FOS_LIVE_PROXIES, -1);
}

/**
 * fos_proxy_get - the proxy for a remote object, made if needed
 * @node: the owner
 * @epoch: its epoch
 * @oid: the object id there
 * @type: the object type
 * @created: set if a new proxy was made
 *
 * Return: the proxy with a reference, ERR_PTR(-ENOMEM), or
 * ERR_PTR(-EPROTO) if the name is known with another type.
 */
static struct fos_object *fos_proxy_get(u32 node, u32 epoch, u64 oid,
					u32 type, bool *created)
{
	struct fos_object *obj, *other;
	struct fos_proxy *p;

	*created = false;
	spin_lock(&fos_proxy_lock);
	obj = fos_proxy_find_locked(node, epoch, oid, true);
	spin_unlock(&fos_proxy_lock);
	if (obj)
		goto found;

	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return ERR_PTR(-ENOMEM);
	obj = fos_obj_create(type, NULL, NULL, NULL);
	if (!obj) {
		kfree(p);
		return ERR_PTR(-ENOMEM);
	}
	p->obj = obj;
	p->node = node;
	p->epoch = epoch;
	p->oid = oid;
	obj->proxy = p;
	fos_live_add(FOS_LIVE_PROXIES, 1);

	spin_lock(&fos_proxy_lock);
	other = fos_proxy_find_locked(node, epoch, oid, true);
	if (!other) {
		fos_proxy_unhash_locked(node, epoch, oid);
		hash_add(fos_proxies, &p->hnode,
			 fos_proxy_key(node, epoch, oid));
		p->hashed = true;
	}
	spin_unlock(&fos_proxy_lock);
	if (!other) {
		*created = true;
		return obj;
	}
	fos_obj_put(obj);	/* lost a race: use the other one */
	obj = other;
found:
	if (obj->type != type) {
		fos_obj_put(obj);
		return ERR_PTR(-EPROTO);
	}
	return obj;
}

/* Revoke every proxy of @node (@epoch, or any if 0). */
static void fos_proxies_revoke_node(u32 node, u32 epoch)
{
	for (;;) {
		struct fos_object *obj = NULL;
		struct fos_proxy *p;
		unsigned int bkt;

		spin_lock(&fos_proxy_lock);
		hash_for_each(fos_proxies, bkt, p, hnode) {
			if (p->node != node || (epoch && p->epoch != epoch) ||
			    fos_obj_revoked(p->obj) ||
			    !kref_get_unless_zero(&p->obj->ref))
				continue;
			obj = p->obj;
			goto unlock;
		}
unlock:
		spin_unlock(&fos_proxy_lock);
		if (!obj)
			return;
		fos_obj_revoke(obj);
		fos_obj_put(obj);
		cond_resched();
	}
}

/* A placeholder for a capability that arrived already revoked. */
static struct fos_object *fos_revoked_object(u32 type)
{
	struct fos_object *obj = fos_obj_create(type, NULL, NULL, NULL);

	if (!obj)
		return ERR_PTR(-ENOMEM);
	fos_obj_revoke(obj);
	return obj;
}

/**
 * fos_remote_oid - the cluster-wide name of an object
 * @obj: a local object or a proxy
 * @oid: filled in
 */
void fos_remote_oid(struct fos_object *obj, struct fractos_oid *oid)
{
	struct fos_proxy *p = obj->proxy;

	if (p) {
		oid->node = p->node;
		oid->epoch = p->epoch;
		oid->id = p->oid;
	} else {
		oid->node = fos_node_id;
		oid->epoch = fos_epoch;
		oid->id = obj->id;
	}
}

/* The root of @obj's revocation tree (parents are immutable). */
static struct fos_object *fos_obj_root(struct fos_object *obj)
{
	while (obj->parent)
		obj = obj->parent;
	return obj;
}

/* ---- capabilities on the wire ---- */

/**
 * fos_cap_describe - put a capability on the wire for node @node
 * @cap: the capability
 * @node: the receiver, which becomes an importer of a local object
 * @epoch: its epoch
 * @wc: filled in
 *
 * Return: 0, -EOPNOTSUPP (a local child of a proxy) or -ENOMEM.
 */
static int fos_cap_describe(const struct fos_cap *cap, u32 node, u32 epoch,
			    struct fos_wire_cap *wc)
{
	struct fos_object *obj = cap->obj;
	struct fractos_oid oid;
	int ret;

	memset(wc, 0, sizeof(*wc));
	if (!obj->proxy) {
		if (fos_obj_root(obj)->proxy)
			return -EOPNOTSUPP;
		ret = fos_export_add(obj, node, epoch);
		if (ret == -EKEYREVOKED)
			wc->flags = cpu_to_le32(FOS_WIRE_CAP_REVOKED);
		else if (ret)
			return ret;
	} else if (fos_obj_revoked(obj)) {
		wc->flags = cpu_to_le32(FOS_WIRE_CAP_REVOKED);
	}
	fos_remote_oid(obj, &oid);
	wc->node = cpu_to_le32(oid.node);
	wc->epoch = cpu_to_le32(oid.epoch);
	wc->oid = cpu_to_le64(oid.id);
	wc->off = cpu_to_le64(cap->off);
	wc->len = cpu_to_le64(cap->len);
	wc->type = cpu_to_le32(obj->type);
	wc->perms = cpu_to_le32(cap->perms);
	return 0;
}

/* A local Memory object must hold the view it is named with. */
static int fos_view_check(struct fos_object *obj, const struct fos_cap *cap)
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
 * Return: 0, -ENOMEM, or -EPROTO (it contradicts what we know).
 */
static int fos_cap_resolve(struct fos_peer *peer, const struct fos_wire_cap *wc,
			   struct fos_cap *out)
{
	u32 node = le32_to_cpu(wc->node), epoch = le32_to_cpu(wc->epoch);
	u32 type = le32_to_cpu(wc->type), from = fos_peer_node_id(peer);
	u64 oid = le64_to_cpu(wc->oid);
	struct fos_object *obj;
	bool created;
	int ret;

	out->off = le64_to_cpu(wc->off);
	out->len = le64_to_cpu(wc->len);
	out->perms = le32_to_cpu(wc->perms);
	if (le32_to_cpu(wc->flags) & FOS_WIRE_CAP_REVOKED) {
		obj = fos_revoked_object(type);
	} else if (node == fos_node_id) {
		/* Ours: the real object, or nothing if it is gone. */
		obj = NULL;
		if (epoch == fos_epoch)
			obj = fos_export_get(oid, from, fos_peer_epoch(peer));
		if (obj && obj->type != type) {
			fos_obj_put(obj);
			return -EPROTO;
		}
		if (!obj)
			obj = fos_revoked_object(type);
	} else {
		obj = fos_proxy_get(node, epoch, oid, type, &created);
		/* A third node's object: tell its owner who holds it now. */
		if (!IS_ERR(obj) && created && node != from)
			fos_event_queue(FOS_EV_NOTICE, FOS_WIRE_IMPORT, node,
					epoch, oid, GFP_KERNEL);
	}
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	out->obj = obj;
	ret = node == fos_node_id ? fos_view_check(obj, out) : 0;
	if (ret)
		fos_obj_put(obj);
	return ret;
}

/* ---- calls: a message and its answer ---- */

/*
 * Send @payload to @peer and wait for the answer (ACK or LOOKUP_REPLY).
 * Return: the answer's status, -EHOSTUNREACH (not connected),
 * -ECONNRESET (the node went down meanwhile), -ETIMEDOUT, or another
 * error of fos_fabric_send().
 */
static int fos_call(struct fos_peer *peer, u8 type, const void *payload,
		    u32 len, struct fos_call_wait *w)
{
	long left;
	u32 cookie;
	int ret;

	init_completion(&w->done);
	w->node = fos_peer_node_id(peer);
	w->status = 0;
	memset(&w->cap, 0, sizeof(w->cap));
	ret = xa_alloc(&fos_calls, &cookie, w, xa_limit_32b, GFP_KERNEL);
	if (ret)
		return ret;
	ret = fos_fabric_send(peer, type, cookie, payload, len, NULL,
			      FOS_SEND_WAIT);
	if (ret == -ENOTCONN)
		ret = -EHOSTUNREACH;
	if (!ret) {
		/* Delivered or not, the answer tells: wait for it. */
		left = wait_for_completion_killable_timeout(&w->done,
							    FOS_REMOTE_TIMEOUT);
		if (!left)
			ret = -ETIMEDOUT;
		else if (left < 0)
			ret = left;
	}
	/* After this, no answer can reach @w. */
	xa_erase(&fos_calls, cookie);
	if (ret && try_wait_for_completion(&w->done))
		ret = 0;
	return ret ? ret : w->status;
}

static void fos_call_complete(struct fos_peer *peer, u64 cookie, int status,
			      const struct fos_wire_cap *cap)
{
	struct fos_call_wait *w;

	if (cookie > U32_MAX)
		return;
	xa_lock(&fos_calls);
	w = xa_load(&fos_calls, cookie);
	if (w && w->node == fos_peer_node_id(peer) &&
	    !completion_done(&w->done)) {
		w->status = status;
		if (cap)
			w->cap = *cap;
		complete(&w->done);
	}
	xa_unlock(&fos_calls);
}

/**
 * fos_remote_node_down - a node, or one epoch of it, is gone
 * @node: its id
 * @epoch: the epoch that died, or 0 for every epoch (node deleted)
 *
 * Called by fabric.c from any context that may allocate atomically.
 * Calls waiting on the node fail now; its proxies are revoked and its
 * imports dropped from a work item.
 */
void fos_remote_node_down(u32 node, u32 epoch)
{
	struct fos_call_wait *w;
	unsigned long idx;

	xa_lock(&fos_calls);
	xa_for_each(&fos_calls, idx, w) {
		if (w->node == node && !completion_done(&w->done)) {
			w->status = -ECONNRESET;
			complete(&w->done);
		}
	}
	xa_unlock(&fos_calls);
	fos_event_queue(FOS_EV_DOWN, 0, node, epoch, 0, GFP_ATOMIC);
}

static void fos_events_fn(struct work_struct *work)
{
	for (;;) {
		struct fos_wire_obj o = {};
		struct fos_event *ev;
		struct fos_peer *peer;

		spin_lock(&fos_events_lock);
		ev = list_first_entry_or_null(&fos_events, struct fos_event,
					      link);
		if (ev)
			list_del(&ev->link);
		spin_unlock(&fos_events_lock);
		if (!ev)
			return;
		if (ev->kind == FOS_EV_DOWN) {
			fos_proxies_revoke_node(ev->node, ev->epoch);
			fos_exports_drop_node(ev->node, ev->epoch);
		} else {
			peer = fos_peer_find(ev->node);
			if (peer) {
				o.oid = cpu_to_le64(ev->oid);
				o.epoch = cpu_to_le32(ev->epoch);
				/* Best effort: a lost notice is a known race. */
				fos_fabric_send(peer, ev->type, 0, &o, sizeof(o),
						NULL, FOS_SEND_WAIT);
				fos_peer_put(peer);
			}
		}
		kfree(ev);
		cond_resched();
	}
}

/* ---- the caller's side ---- */

/**
 * fos_remote_invoke - invoke a Request whose provider is reached by fabric
 * @target: the Request object (a proxy, a local child of one, contents
 *	derived from one, or with fabric_loopback a local Request)
 * @imm: immediates to append (for a derived Request: its own first)
 * @imm_len: bytes at @imm
 * @caps: capability arguments to append
 * @ncaps: entries at @caps
 * @wait: FRACTOS_INVOKE_WAIT: retry while the provider's queue is full
 *
 * Process context; returns once the owner has answered.
 *
 * Return: 0 (queued on the provider), the owner's errno (EKEYREVOKED,
 * EAGAIN, E2BIG, ...), -EHOSTUNREACH (the node is not configured or not
 * connected), -EKEYREVOKED (it went down meanwhile), -ETIMEDOUT,
 * -EMSGSIZE (the arguments do not fit one fabric message), -EOPNOTSUPP
 * (an argument is a local child of a proxy), -EINTR.
 */
int fos_remote_invoke(struct fos_object *target, const u8 *imm, u32 imm_len,
		      const struct fos_cap *caps, u32 ncaps, bool wait)
{
	struct fos_object *root = fos_obj_root(target);
	struct fos_wire_invoke *iv;
	struct fos_wire_cap *wc;
	struct fos_call_wait w;
	struct fos_peer *peer;
	struct fractos_oid oid;
	u32 len, pepoch, i;
	int ret;

	len = sizeof(*iv) + ncaps * sizeof(*wc) + imm_len;
	if (len > FOS_WIRE_MSG_MAX - sizeof(struct fos_wire_hdr))
		return -EMSGSIZE;
	/* A local target (fabric_loopback) is exported to ourselves. */
	fos_remote_oid(root->proxy ? root : target, &oid);
	peer = fos_peer_find(oid.node);
	if (!peer)
		return -EHOSTUNREACH;
	pepoch = fos_peer_epoch(peer);
	iv = kzalloc(len, GFP_KERNEL);
	if (!iv) {
		ret = -ENOMEM;
		goto out_peer;
	}
	wc = (struct fos_wire_cap *)(iv + 1);
	iv->oid = cpu_to_le64(oid.id);
	iv->epoch = cpu_to_le32(oid.epoch);
	iv->imm_len = cpu_to_le32(imm_len);
	iv->ncaps = cpu_to_le32(ncaps);
	if (!root->proxy) {
		ret = fos_export_add(target, oid.node, pepoch);
		if (ret)
			goto out_free;
	}
	for (i = 0; i < ncaps; i++) {
		ret = fos_cap_describe(&caps[i], oid.node, pepoch, &wc[i]);
		if (ret)
			goto out_free;
	}
	if (imm_len)
		memcpy(wc + ncaps, imm, imm_len);

	for (;;) {
		ret = fos_call(peer, FOS_WIRE_INVOKE, iv, len, &w);
		if (ret != -EAGAIN || !wait)
			break;
		/* The provider's queue is full: try again shortly. */
		if (msleep_interruptible(1) || signal_pending(current)) {
			ret = -EINTR;
			break;
		}
	}
	if (ret == -ECONNRESET)
		ret = -EKEYREVOKED;	/* the node is gone: so are its objects */
	if (ret == -EKEYREVOKED && root->proxy)
		fos_obj_revoke(root);	/* the owner says so: monitors fire */
out_free:
	kfree(iv);
out_peer:
	fos_peer_put(peer);
	return ret;
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
	struct fos_call_wait w;
	struct fos_peer *peer;
	int ret, lret;

	if (fos_obj_revoked(obj))
		return -EKEYREVOKED;
	o.oid = cpu_to_le64(p->oid);
	o.epoch = cpu_to_le32(p->epoch);
	peer = fos_peer_find(p->node);
	if (peer) {
		ret = fos_call(peer, FOS_WIRE_REVOKE_REQ, &o, sizeof(o), &w);
		fos_peer_put(peer);
	} else {
		ret = -EHOSTUNREACH;
	}
	lret = fos_obj_revoke(obj);
	if (ret == -ECONNRESET)
		ret = lret;	/* the owner died: its objects are gone */
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
	struct fos_call_wait w;
	struct fos_peer *peer;
	int ret;

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
	ret = fos_call(peer, FOS_WIRE_LOOKUP, l, sizeof(*l) + len, &w);
	kfree(l);
	if (ret == -ECONNRESET)
		ret = -EHOSTUNREACH;
	if (!ret && !w.cap.epoch)
		ret = -EPROTO;	/* answered with an ACK */
	if (!ret)
		ret = fos_cap_resolve(peer, &w.cap, out);
out:
	fos_peer_put(peer);
	return ret;
}

/* ---- the owner's side: receive handlers (fabric.c's table) ---- */

static void fos_send_ack(struct fos_peer *peer, const struct fos_wire_hdr *hdr,
			 int status)
{
	struct fos_wire_ack ack = { .status = cpu_to_le32(-status) };

	fos_fabric_send(peer, FOS_WIRE_ACK, le64_to_cpu(hdr->cookie), &ack,
			sizeof(ack), NULL, FOS_SEND_QUEUE);
}

static int fos_invoke_deliver(struct fos_peer *peer,
			      const struct fos_wire_invoke *iv)
{
	const struct fos_wire_cap *wc = (const void *)(iv + 1);
	u32 ncaps = le32_to_cpu(iv->ncaps), imm_len = le32_to_cpu(iv->imm_len);
	const u8 *imm = (const u8 *)(wc + ncaps);
	struct fos_object *obj;
	struct fos_cap *caps;
	struct fos_req *req;
	u32 i, n = 0;
	int ret;

	if (le32_to_cpu(iv->epoch) != fos_epoch)
		return -EKEYREVOKED;
	obj = fos_export_get(le64_to_cpu(iv->oid), fos_peer_node_id(peer),
			     fos_peer_epoch(peer));
	if (!obj)
		return -EKEYREVOKED;
	if (obj->type != FRACTOS_OBJ_REQUEST) {
		ret = -EOPNOTSUPP;
		goto out_obj;
	}
	req = fos_obj_get_req(obj);
	if (IS_ERR(req)) {
		ret = PTR_ERR(req);
		goto out_obj;
	}
	caps = kcalloc(max(ncaps, 1U), sizeof(*caps), GFP_KERNEL);
	if (!caps) {
		ret = -ENOMEM;
		goto out_req;
	}
	/* All or nothing: every capability, then one queued message. */
	for (i = 0, ret = 0; i < ncaps && !ret; i++) {
		ret = fos_cap_resolve(peer, &wc[i], &caps[n]);
		if (!ret)
			n++;
	}
	if (!ret)
		ret = fos_req_deliver(req, imm, imm_len, caps, n);
	for (i = 0; i < n; i++)
		fos_obj_put(caps[i].obj);
	kfree(caps);
out_req:
	fos_req_put(req);
out_obj:
	fos_obj_put(obj);
	return ret;
}

void fos_invoke_recv(struct fos_peer *peer, const struct fos_wire_hdr *hdr,
		     const void *payload, u32 len)
{
	fos_send_ack(peer, hdr, fos_invoke_deliver(peer, payload));
}

void fos_ack_recv(struct fos_peer *peer, const struct fos_wire_hdr *hdr,
		  const void *payload, u32 len)
{
	const struct fos_wire_ack *a = payload;

	fos_call_complete(peer, le64_to_cpu(hdr->cookie),
			  -(int)le32_to_cpu(a->status), NULL);
}

/* The owner revoked one of its objects: so is our proxy. */
void fos_revoke_recv(struct fos_peer *peer, const struct fos_wire_hdr *hdr,
		     const void *payload, u32 len)
{
	const struct fos_wire_obj *o = payload;
	struct fos_object *obj;

	spin_lock(&fos_proxy_lock);
	obj = fos_proxy_find_locked(fos_peer_node_id(peer),
				    le32_to_cpu(o->epoch), le64_to_cpu(o->oid),
				    false);
	spin_unlock(&fos_proxy_lock);
	if (obj) {
		fos_obj_revoke(obj);
		fos_obj_put(obj);
	}
}

/* A holder asks us to revoke one of our objects. */
void fos_revoke_req_recv(struct fos_peer *peer, const struct fos_wire_hdr *hdr,
			 const void *payload, u32 len)
{
	const struct fos_wire_obj *o = payload;
	struct fos_object *obj = NULL;
	int ret = -EKEYREVOKED;

	if (le32_to_cpu(o->epoch) == fos_epoch)
		obj = fos_export_get(le64_to_cpu(o->oid),
				     fos_peer_node_id(peer),
				     fos_peer_epoch(peer));
	if (obj) {
		ret = fos_obj_revoke(obj);
		fos_obj_put(obj);
	}
	fos_send_ack(peer, hdr, ret);
}

/* A node got one of our objects from a third one. */
void fos_import_recv(struct fos_peer *peer, const struct fos_wire_hdr *hdr,
		     const void *payload, u32 len)
{
	const struct fos_wire_obj *o = payload;
	struct fos_object *obj = NULL;

	if (le32_to_cpu(o->epoch) == fos_epoch)
		obj = fos_export_get(le64_to_cpu(o->oid),
				     fos_peer_node_id(peer),
				     fos_peer_epoch(peer));
	if (obj) {
		fos_obj_put(obj);
		return;
	}
	/* Gone already (or never ours): its proxy there is revoked. */
	fos_fabric_send(peer, FOS_WIRE_REVOKE, 0, o, sizeof(*o), NULL,
			FOS_SEND_QUEUE);
}

void fos_lookup_recv(struct fos_peer *peer, const struct fos_wire_hdr *hdr,
		     const void *payload, u32 len)
{
	const struct fos_wire_lookup *l = payload;
	struct fos_wire_lookup_reply r = {};
	struct fos_cap cap;
	kuid_t uid;
	int ret = -ENOENT;

	uid = make_kuid(&init_user_ns, le32_to_cpu(l->uid));
	if (uid_valid(uid))
		ret = fos_name_get((const char *)(l + 1),
				   le32_to_cpu(l->name_len), uid, &cap);
	if (!ret) {
		ret = fos_cap_describe(&cap, fos_peer_node_id(peer),
				       fos_peer_epoch(peer), &r.cap);
		fos_obj_put(cap.obj);
		if (ret)
			memset(&r.cap, 0, sizeof(r.cap));
	}
	r.status = cpu_to_le32(-ret);
	fos_fabric_send(peer, FOS_WIRE_LOOKUP_REPLY, le64_to_cpu(hdr->cookie),
			&r, sizeof(r), NULL, FOS_SEND_QUEUE);
}

void fos_lookup_reply_recv(struct fos_peer *peer,
			   const struct fos_wire_hdr *hdr,
			   const void *payload, u32 len)
{
	const struct fos_wire_lookup_reply *r = payload;

	fos_call_complete(peer, le64_to_cpu(hdr->cookie),
			  -(int)le32_to_cpu(r->status), &r->cap);
}

/* ---- setup ---- */

int fos_remote_init(void)
{
	fos_remote_wq = alloc_ordered_workqueue("fractos_remote", 0);
	return fos_remote_wq ? 0 : -ENOMEM;
}

/* After fos_fabric_exit(): no peer is left to send to or hear from. */
void fos_remote_exit(void)
{
	struct fos_event *ev, *tmp;

	destroy_workqueue(fos_remote_wq);	/* runs what is queued */
	list_for_each_entry_safe(ev, tmp, &fos_events, link)
		kfree(ev);
	WARN_ON(!xa_empty(&fos_exports));
	WARN_ON(!xa_empty(&fos_calls));
}
