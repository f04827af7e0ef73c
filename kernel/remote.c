// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: objects of other nodes - the export table, proxies, remote
 * invocation, revocation across nodes and remote name lookups.
 *
 * DOC: Remote objects
 *
 * An object is named by (node, epoch, oid), oid being its public id
 * (fos_oid_public(): unguessable).  When a capability to a local
 * object is sent to another node (an invocation argument, a name lookup's
 * answer), the object is entered in the *export table* (struct
 * fos_export, keyed by the object's own id) with a reference held, and the receiving node
 * is recorded as an *importer* of it, with a count of the descriptions
 * sent to it ("Holders" in wire.h).  A capability to a third node's object
 * is announced to its owner first (IMPORT, answered), which counts it for
 * the receiver the same way.  Entries go away when the object is revoked
 * (every importer is sent a REVOKE notice, best effort), when the
 * importers gave back every description (DROP: their last capability to
 * the object is gone) or when their nodes are gone.  So an object stays
 * exported exactly while another node may hold it, or a description of it
 * is on its way.  Names used for one operation only (the target of a
 * loopback invocation, the views of a memory_copy) are exported for the
 * call's duration.  Kernels trust each other, as FractOS Controllers do:
 * an oid that is not in the table (never exported, revoked, or given
 * back) names nothing.
 *
 * A capability received from another node becomes a capability to a
 * *proxy* (struct fos_proxy hanging off a struct fos_object of the same
 * type, without owner, contents or parent) that records (node, epoch,
 * oid); the capability keeps the view (off, len, perms) it was sent with.
 * There is at most one live proxy per remote object on a node (the proxy
 * table), so a REVOKE notice finds it; it counts the descriptions it
 * received, and when it is freed unrevoked it gives them back to the owner
 * with DROP (preallocated: freeing never fails to send it).  A revoked
 * proxy sends nothing: the owner revoked the object, was asked to, or its
 * node is gone.  A descriptor that names this node and epoch resolves to
 * the real local object with the view it carries, so an owner that gets
 * its own Memory back uses it at full speed.  One naming a third node
 * makes a proxy to that node's object directly.  A description a message
 * carried but that was not made into a capability (the invocation was
 * refused, the caller of a lookup gave up) is given back at once.
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
 * Remote copies: memory_copy where either view is another node's Memory
 * (a proxy or a local child of one), or any memory_copy with
 * fabric_loopback, is done by the owner of the destination with one-sided
 * RDMA, straight from and into the pinned pages (no bounce buffer):
 *
 * - The caller checks the rights and ranges of its own capabilities as
 *   for a local copy.  If it owns the destination it pulls itself,
 *   otherwise it sends COPY (both views, offsets, length) to the
 *   destination's owner and waits for the ACK (10 s plus 1 s per MiB).
 *   So a third-party copy (caller on node 1, source on node 2,
 *   destination on node 3) is COPY 1 -> 3, then 3 pulls from 2.
 * - The puller checks the destination view against its object (WRITE,
 *   range) and, unless the source is its own (then it copies locally;
 *   with fabric_loopback it grants to itself), sends GRANT for the source
 *   range to its owner.  The owner checks the view (READ, range), takes
 *   a reference on the pinned pages and registers a fast-registration
 *   memory region over exactly the pages of that range, remote-read only,
 *   on the PD of its connection to the puller (fabric.c's "One-sided
 *   RDMA"), and answers with its address, rkey, a grant id and the bytes
 *   granted (one region spans at most the device's fast-registration
 *   page list, 4096 pages: the puller asks again for the rest).
 * - The puller RDMA-READs the granted bytes into its own pages (chunks of
 *   at most 1 MiB, 8 in flight), then sends RELEASE; the owner
 *   deregisters the region - the rkey is dead - and drops its page
 *   reference.  A grant its puller never releases is ended after
 *   FOS_GRANT_TTL (30 s), and all grants of a node are ended when it goes
 *   down.  Nothing but granted ranges is ever registered for remote access.
 * - Revocation: a revoked object is not in the export table, so GRANT,
 *   COPY and a local copy all fail with EKEYREVOKED from then on.  A grant
 *   out at the revocation (of its view's object or of an ancestor) is
 *   ended: the owner sends GRANT_END to the puller, which posts no further
 *   READ for that copy (the copy fails with EKEYREVOKED) and sends RELEASE
 *   once the READs it posted have completed; the owner deregisters the
 *   region then.  CAP_REVOKE on the owner waits for those RELEASEs, at
 *   most FOS_GRANT_END_WAIT (2 s), and deregisters what is left itself
 *   (fos_remote_grants_sync()): when it returns, the keys are dead.  It
 *   does not deregister at once because an RDMA READ that hits a dead
 *   rkey is fatal to the RC connection (and so to every proxy of the
 *   node): READs already posted when the object was revoked complete, as
 *   a local copy racing a revoke does, and only a puller that ignores
 *   GRANT_END loses its connection.  Revocations that do not come from
 *   CAP_REVOKE (a space's exit, REVOKE_REQ from a peer, a node's death)
 *   do not wait: their grants end when released, or FOS_GRANT_END_WAIT
 *   after the revocation at the latest.
 * - The owners check everything again: views against their objects,
 *   rights, ranges; an epoch that is not theirs is EKEYREVOKED.  A node
 *   that goes down during a copy makes it fail with EKEYREVOKED (as for
 *   invoke) or EHOSTUNREACH (the connection failed under the READs).
 *   Overlapping ranges of one remote object give unspecified bytes in the
 *   destination (locally, and with fabric_loopback, EINVAL).
 *
 * Limits of this step: capabilities to a local child of a proxy cannot be
 * sent to another node (EOPNOTSUPP).  Counting errs on the side of
 * keeping objects exported: a DROP lost with its connection (or to
 * ENOMEM), or a description sent in a message the connection lost while
 * the receiver stayed up, keeps the export until the object is revoked or
 * either node goes away.  Every description is resolved in the receive
 * path, before the node-down sweep of its connection can run, so the
 * sweep revokes whatever the owner stops counting then.  One race is
 * left: a connection that comes back up before the owner's sweep of the
 * old one ran (a reconnect faster than fos_remote_wq) has the counts of
 * its first descriptions dropped with the old ones: unless another holder
 * keeps them exported, the receiver's later uses of those objects fail
 * with EKEYREVOKED.
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
 * - fos_grants' xa_lock guards taking a grant out of the table and its
 *   @ending flag; whoever takes it out frees it (after
 *   cancel_delayed_work_sync() of its TTL, unless the TTL work itself took
 *   it).  Only fos_events_lock nests inside it.
 * - fos_pulls' xa_lock guards the copies being pulled (struct fos_pull,
 *   on their pullers' stacks) and their @ended flags.  Nothing nests
 *   inside it.
 */
#include <linux/completion.h>
#include <linux/cred.h>
#include <linux/delay.h>
#include <linux/hashtable.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include "fos.h"
#include "fabric.h"
#include "fabric/fos_trace.h"
#include "wire.h"

static bool fos_fabric_loopback;
module_param_named(fabric_loopback, fos_fabric_loopback, bool, 0644);
MODULE_PARM_DESC(fabric_loopback,
		 "Send invocations of local Requests through the fabric to this node, which must be configured as its own peer (default 0)");

/* How long an invoker waits for the owner's answer. */
#define FOS_REMOTE_TIMEOUT	(10 * HZ)

/**
 * struct fos_view - what a description names of an object
 * @off: start (Memory; 0 for a Request)
 * @len: length (Memory; 0 for a Request)
 * @perms: FRACTOS_PERM_* (Memory; 0 for a Request)
 */
struct fos_view {
	u64 off;
	u64 len;
	u32 perms;
};

/**
 * struct fos_fwd - descriptions a forwarder announced for an importer
 * @node: the forwarder
 * @units: announced (IMPORT) and not given back by it (DROP)
 */
struct fos_fwd {
	u32 node;
	u64 units;
};

/**
 * struct fos_importer - a node that may hold a capability to an export
 * @link: on fos_export.importers
 * @node: its id
 * @epoch: its epoch when it was recorded, 0 if unknown
 * @units: descriptions of the object put on the wire for it and not
 *	dropped yet (see "Holders" in wire.h), never zero
 * @views: the views described to it (none covering another), the only
 *	ones it may name (see "Views" in wire.h)
 * @nviews: entries in @views, at least one
 * @fwds: the forwarders that announced descriptions for it (IMPORT): a
 *	DROP naming it from another node gives back at most those
 * @nfwds: entries in @fwds
 */
struct fos_importer {
	struct list_head link;
	u32 node;
	u32 epoch;
	u64 units;
	struct fos_view *views;
	u32 nviews;
	struct fos_fwd *fwds;
	u32 nfwds;
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
 * @units: descriptions of the object received into this proxy, under
 *	fos_proxy_lock; DROP gives them back
 * @drop: the DROP event, allocated with the proxy so that freeing it
 *	never fails to send one
 */
struct fos_proxy {
	struct hlist_node hnode;
	struct fos_object *obj;
	u32 node;
	u32 epoch;
	u64 oid;
	bool hashed;
	u64 units;
	struct fos_event *drop;
};

static DEFINE_SPINLOCK(fos_proxy_lock);
static DEFINE_HASHTABLE(fos_proxies, 8);

/**
 * struct fos_call_wait - a call waiting for its answer
 * @done: completed by the answer or by the node's death
 * @sent: the message was handed to the fabric (it may have arrived)
 * @answered: the answer arrived (@status is the peer's)
 * @node: the node that must answer
 * @reply: the message type of the answer (ACK, LOOKUP_REPLY, GRANT_REPLY)
 * @status: 0 or a negative errno
 * @cap: LOOKUP_REPLY: the capability, resolved on receipt (a reference
 *	the caller drops)
 * @grant: GRANT_REPLY: the grant
 */
struct fos_call_wait {
	struct completion done;
	bool sent;
	bool answered;
	u32 node;
	u8 reply;
	int status;
	struct fos_cap cap;
	struct fos_wire_grant_reply grant;
};

/* Calls in flight by cookie; xa_lock guards completing them. */
static DEFINE_XARRAY_ALLOC(fos_calls);

enum fos_event_kind {
	FOS_EV_NOTICE,		/* send a REVOKE notice */
	FOS_EV_DOWN,		/* a node (epoch) is gone (on fos_downs) */
	FOS_EV_GRANT_END,	/* send GRANT_END */
	FOS_EV_DROP,		/* send DROP */
	FOS_EV_RELEASE,		/* send RELEASE */
};

/**
 * struct fos_event - work deferred to fos_remote_wq, done in order
 * @link: on fos_events
 * @kind: enum fos_event_kind
 * @type: FOS_EV_NOTICE: the message type
 * @node: the node concerned
 * @epoch: NOTICE, DROP: the object's epoch; DOWN: the dead epoch, 0 for
 *	all; GRANT_END: the grant id
 * @oid: NOTICE, DROP: the object id; GRANT_END: the puller's token;
 *	RELEASE: the grant id
 * @holder: DROP: the holder whose descriptions end
 * @count: DROP: how many
 */
struct fos_event {
	struct list_head link;
	u8 kind;
	u8 type;
	u32 node;
	u32 epoch;
	u64 oid;
	u32 holder;
	u64 count;
};

static DEFINE_SPINLOCK(fos_events_lock);
/* Under fos_events_lock: events for fos_events_work, in order. */
static LIST_HEAD(fos_events);
/*
 * Under fos_events_lock: DOWN events, for fos_downs_work.  Kept apart so
 * that a node's death never waits behind sends (which may wait seconds
 * for a credit), and never lost: see fos_remote_node_down().
 */
static LIST_HEAD(fos_downs);
static struct workqueue_struct *fos_remote_wq;
static void fos_events_fn(struct work_struct *work);
static void fos_grants_drop_node(u32 node);
static void fos_grants_end_revoked(void);
static DECLARE_WORK(fos_events_work, fos_events_fn);
static void fos_downs_fn(struct work_struct *work);
static DECLARE_WORK(fos_downs_work, fos_downs_fn);

bool fos_remote_loopback(void)
{
	return READ_ONCE(fos_fabric_loopback);
}

static void fos_event_add(struct fos_event *ev)
{
	spin_lock(&fos_events_lock);
	list_add_tail(&ev->link, &fos_events);
	spin_unlock(&fos_events_lock);
	queue_work(fos_remote_wq, &fos_events_work);
}

/* Queue @ev (allocated with @gfp if NULL; best effort, as the notices). */
static void fos_event_queue_ev(struct fos_event *ev, u8 kind, u8 type,
			       u32 node, u32 epoch, u64 oid, gfp_t gfp)
{
	if (!ev)
		ev = kzalloc(sizeof(*ev), gfp);
	if (!ev)
		return;
	ev->kind = kind;
	ev->type = type;
	ev->node = node;
	ev->epoch = epoch;
	ev->oid = oid;
	fos_event_add(ev);
}

static void fos_event_queue(u8 kind, u8 type, u32 node, u32 epoch, u64 oid,
			    gfp_t gfp)
{
	fos_event_queue_ev(NULL, kind, type, node, epoch, oid, gfp);
}

/*
 * Tell @owner that @count descriptions of its object (@epoch, @oid) held
 * by @holder ended, with @ev if preallocated.  Best effort: a DROP that
 * cannot go leaves the export referenced until its owner revokes it or
 * we go away.
 */
static void fos_drop_queue(struct fos_event *ev, u32 owner, u32 epoch,
			   u64 oid, u32 holder, u64 count)
{
	if (!ev)
		ev = kzalloc(sizeof(*ev), GFP_KERNEL);
	if (!ev)
		return;
	ev->holder = holder;
	ev->count = count;
	fos_event_queue_ev(ev, FOS_EV_DROP, 0, owner, epoch, oid, GFP_KERNEL);
}

/* ---- the export table ---- */

static void fos_export_free(struct fos_export *e);

/* @v lies inside @o, with no right that @o lacks. */
static bool fos_view_covers(const struct fos_view *o, const struct fos_view *v)
{
	return v->off >= o->off && v->len <= o->len &&
	       v->off - o->off <= o->len - v->len && !(v->perms & ~o->perms);
}

static void fos_importer_free(struct fos_importer *i)
{
	kfree(i->views);
	kfree(i->fwds);
	kfree(i);
}

/*
 * The entry of forwarder @node in @i, made (with no units) if there is
 * none.  Caller holds fos_export_lock.  Return: it, or NULL (no memory).
 */
static struct fos_fwd *fos_importer_fwd(struct fos_importer *i, u32 node)
{
	struct fos_fwd *fwds;
	u32 k;

	lockdep_assert_held(&fos_export_lock);
	for (k = 0; k < i->nfwds; k++)
		if (i->fwds[k].node == node)
			return &i->fwds[k];
	fwds = krealloc_array(i->fwds, i->nfwds + 1, sizeof(*fwds),
			      GFP_KERNEL);
	if (!fwds)
		return NULL;
	i->fwds = fwds;
	fwds[i->nfwds] = (struct fos_fwd){ .node = node };
	return &fwds[i->nfwds++];
}

/*
 * Record @v for @i unless a view recorded covers it.  Caller holds
 * fos_export_lock (a mutex: this may sleep).  Return: 0 or -ENOMEM.
 */
static int fos_importer_add_view(struct fos_importer *i,
				 const struct fos_view *v)
{
	struct fos_view *views;
	u32 k;

	lockdep_assert_held(&fos_export_lock);
	for (k = 0; k < i->nviews; k++)
		if (fos_view_covers(&i->views[k], v))
			return 0;
	views = krealloc_array(i->views, i->nviews + 1, sizeof(*views),
			       GFP_KERNEL);
	if (!views)
		return -ENOMEM;
	views[i->nviews++] = *v;
	i->views = views;
	return 0;
}

/* The record of @node (@epoch, 0: any) among @e's importers, or NULL. */
static struct fos_importer *fos_export_importer(struct fos_export *e,
						u32 node, u32 epoch)
{
	struct fos_importer *i;

	lockdep_assert_held(&fos_export_lock);
	list_for_each_entry(i, &e->importers, link)
		if (i->node == node &&
		    (!epoch || !i->epoch || i->epoch == epoch))
			return i;
	return NULL;
}

/*
 * Whether @node (@epoch) holds @e with a view covering @v (NULL: with
 * any view).  Caller holds fos_export_lock.
 */
static bool fos_export_held(struct fos_export *e, u32 node, u32 epoch,
			    const struct fos_view *v)
{
	struct fos_importer *i = fos_export_importer(e, node, epoch);
	u32 k;

	if (!i)
		return false;
	if (!v)
		return true;
	for (k = 0; k < i->nviews; k++)
		if (fos_view_covers(&i->views[k], v))
			return true;
	return false;
}

/*
 * Count one more description of @e, with view @v, for @node; @fwd: the
 * forwarder that announced it (IMPORT), or NULL when we described it.
 * Caller holds fos_export_lock.  @spare is taken for a new record.
 * Return: 0 or -ENOMEM.
 */
static int fos_export_add_importer(struct fos_export *e, u32 node, u32 epoch,
				   const struct fos_view *v, const u32 *fwd,
				   struct fos_importer **spare)
{
	struct fos_fwd *f = NULL;
	struct fos_importer *i;
	bool found = false;
	int ret;

	lockdep_assert_held(&fos_export_lock);
	list_for_each_entry(i, &e->importers, link) {
		if (i->node == node && i->epoch == epoch) {
			found = true;
			break;
		}
	}
	if (!found) {
		i = *spare;
		*i = (struct fos_importer){ .node = node, .epoch = epoch };
	}
	/* An entry without units is harmless if the view fails. */
	if (fwd) {
		f = fos_importer_fwd(i, *fwd);
		if (!f) {
			ret = -ENOMEM;
			goto err;
		}
	}
	ret = fos_importer_add_view(i, v);
	if (ret)
		goto err;
	i->units++;
	if (f)
		f->units++;
	if (!found) {
		*spare = NULL;
		list_add_tail(&i->link, &e->importers);
	}
	return 0;

err:
	if (!found) {
		kfree(i->views);
		kfree(i->fwds);
	}
	return ret;
}

/*
 * @e has no importer left: take it off its object and out of the table,
 * onto @gone for fos_export_free(), unless a revocation took it first (it
 * frees it then).  Caller holds fos_export_lock.
 */
static void fos_export_unused_locked(struct fos_export *e,
				     struct list_head *gone)
{
	bool mine;

	lockdep_assert_held(&fos_export_lock);
	spin_lock(&fos_tree_lock);
	mine = e->obj->export == e;
	if (mine)
		e->obj->export = NULL;
	spin_unlock(&fos_tree_lock);
	if (!mine)
		return;
	xa_erase(&fos_exports, e->obj->id);
	e->hashed = false;
	list_add_tail(&e->dead, gone);
}

/**
 * fos_export_add - count a description of @obj for node @node
 * @obj: a local object (not a proxy, nor a child of one)
 * @node: the importer (this node for fabric_loopback)
 * @epoch: its epoch
 * @v: the view described
 *
 * Makes @obj reachable by its id until the description is dropped
 * (fos_export_put(), a DROP from @node) or @node is gone.
 *
 * Return: 0, -EKEYREVOKED or -ENOMEM.
 */
static int fos_export_add(struct fos_object *obj, u32 node, u32 epoch,
			  const struct fos_view *v)
{
	struct fos_export *e, *spare_e;
	struct fos_importer *spare_i;
	LIST_HEAD(gone);
	bool revoked;
	int ret = 0;

	might_sleep();

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
	ret = fos_export_add_importer(e, node, epoch, v, NULL, &spare_i);
	if (ret && list_empty(&e->importers))
		fos_export_unused_locked(e, &gone);
out:
	mutex_unlock(&fos_export_lock);
out_free:
	kfree(spare_e);
	kfree(spare_i);
	e = list_first_entry_or_null(&gone, struct fos_export, dead);
	if (e)
		fos_export_free(e);
	return ret;
}

/**
 * fos_export_get - the exported object @oid, as @peer may name it
 * @oid: the object's public id (fos_oid_public(), as on the wire)
 * @peer: the node that names it
 * @v: the view it names, NULL for any (it must hold the object)
 *
 * Return: the object with a reference; NULL if it is not exported (or
 * revoked); ERR_PTR(-EPROTO), counted and logged, if it is exported but
 * not to @peer with a view covering @v (see "Views" in wire.h).
 */
static struct fos_object *fos_export_get(u64 oid, struct fos_peer *peer,
					 const struct fos_view *v)
{
	u32 node = fos_peer_node_id(peer), epoch = fos_peer_epoch(peer);
	struct fos_object *obj = NULL;
	struct fos_export *e;
	bool held = true;

	mutex_lock(&fos_export_lock);
	e = xa_load(&fos_exports, fos_oid_private(oid));
	if (e && !fos_obj_revoked(e->obj)) {
		held = fos_export_held(e, node, epoch, v);
		if (held) {
			obj = e->obj;
			fos_obj_get(obj);
		}
	}
	mutex_unlock(&fos_export_lock);
	if (held)
		return obj;
	fos_peer_stat_inc(peer, FRACTOS_STAT_PROTO_ERRORS);
	trace_fos_proto_error(node, "a view it was not given");
	if (v)
		pr_warn_ratelimited("fractos: node %u names object %llu with a view it was not given ([%llu, +%llu) rights %#x)\n",
				    node, oid, v->off, v->len, v->perms);
	else
		pr_warn_ratelimited("fractos: node %u names object %llu, which it was not given\n",
				    node, oid);
	return ERR_PTR(-EPROTO);
}

/**
 * fos_export_count - IMPORT: count a description of @oid for @node
 * @oid: the object's public id
 * @node: the holder-to-be
 * @epoch: its epoch, 0 if unknown
 * @v: the view it is given
 * @from: the forwarder, which must hold that view itself
 *
 * Return: 0, -EKEYREVOKED (not exported, or revoked), -EPROTO (@from
 * does not hold @v; counted and logged) or -ENOMEM.
 */
static int fos_export_count(u64 oid, u32 node, u32 epoch,
			    const struct fos_view *v, struct fos_peer *from)
{
	u32 fwd = fos_peer_node_id(from);
	struct fos_importer *spare;
	struct fos_export *e;
	int ret = -EKEYREVOKED;
	bool held = true;

	spare = kzalloc(sizeof(*spare), GFP_KERNEL);
	if (!spare)
		return -ENOMEM;
	mutex_lock(&fos_export_lock);
	e = xa_load(&fos_exports, fos_oid_private(oid));
	if (e && !fos_obj_revoked(e->obj)) {
		held = fos_export_held(e, fwd, fos_peer_epoch(from), v);
		ret = held ? fos_export_add_importer(e, node, epoch, v, &fwd,
						     &spare) : -EPROTO;
	}
	mutex_unlock(&fos_export_lock);
	kfree(spare);
	if (!held) {
		fos_peer_stat_inc(from, FRACTOS_STAT_PROTO_ERRORS);
		pr_warn_ratelimited("fractos: node %u forwards object %llu with a view it was not given\n",
				    fos_peer_node_id(from), oid);
	}
	return ret;
}

/**
 * fos_export_put - descriptions of @oid held by @node ended
 * @oid: the object's public id
 * @node: the holder
 * @epoch: its epoch, 0 for any
 * @count: how many
 * @by: the node that says so, when it is not @node: a forwarder, which
 *	may give back only what it announced for @node (IMPORT); NULL for
 *	this node
 *
 * The object leaves the export table when no description is left.
 * Unknown names are ignored (revoked meanwhile, or the holder's node went
 * down); a count larger than what is left is a peer's bug, logged.
 *
 * Return: 0, or -EPROTO when @by gives back more than it announced
 * (nothing changes).
 */
static int fos_export_put(u64 oid, u32 node, u32 epoch, u64 count,
			  const u32 *by)
{
	struct fos_importer *i, *found = NULL;
	struct fos_fwd *f = NULL;
	struct fos_export *e;
	LIST_HEAD(gone);
	int ret = 0;
	u32 k;

	mutex_lock(&fos_export_lock);
	e = xa_load(&fos_exports, fos_oid_private(oid));
	if (!e)
		goto out;
	list_for_each_entry(i, &e->importers, link) {
		if (i->node == node && (!epoch || !i->epoch ||
					i->epoch == epoch)) {
			found = i;
			break;
		}
	}
	if (!found)
		goto out;
	if (by && *by != node) {
		for (k = 0; k < found->nfwds; k++)
			if (found->fwds[k].node == *by)
				f = &found->fwds[k];
		if (!f || count > f->units) {
			ret = -EPROTO;
			goto out;
		}
		f->units -= count;
	}
	if (count > found->units)
		pr_warn_ratelimited("fractos: node %u drops %llu descriptions of object %llu, holds %llu\n",
				    node, count, oid, found->units);
	found->units -= min(count, found->units);
	if (found->units)
		goto out;
	list_del(&found->link);
	fos_importer_free(found);
	if (list_empty(&e->importers))
		fos_export_unused_locked(e, &gone);
out:
	mutex_unlock(&fos_export_lock);
	e = list_first_entry_or_null(&gone, struct fos_export, dead);
	if (e)
		fos_export_free(e);
	return ret;
}

/*
 * Revocation of @obj: take its export entry.  Caller holds fos_tree_lock;
 * fos_remote_exports_release() finishes the job.
 */
void fos_remote_revoke_locked(struct fos_object *obj, struct fos_dead *dead)
{
	lockdep_assert_held(&fos_tree_lock);
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
					fos_epoch, fos_oid_public(e->obj->id),
					GFP_KERNEL);
			fos_importer_free(i);
		}
		fos_export_free(e);
	}
	/*
	 * A grant holds its object, not its export: the holder may have
	 * dropped the export while its copy was running.  So every
	 * revocation ends the grants out on revoked objects.
	 */
	fos_grants_end_revoked();
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

		list_for_each_entry_safe(i, itmp, &e->importers, link) {
			if (i->node != node ||
			    (epoch && i->epoch && i->epoch != epoch))
				continue;
			list_del(&i->link);
			fos_importer_free(i);
		}
		if (list_empty(&e->importers))
			fos_export_unused_locked(e, &gone);
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

	lockdep_assert_held(&fos_proxy_lock);
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

	lockdep_assert_held(&fos_proxy_lock);
	hash_for_each_possible_safe(fos_proxies, p, tmp, hnode,
				    fos_proxy_key(node, epoch, oid)) {
		if (p->node != node || p->epoch != epoch || p->oid != oid)
			continue;
		hash_del(&p->hnode);
		p->hashed = false;
	}
}

/*
 * The object is being freed: nothing here holds the remote object through
 * it any more.  Unless it was revoked (the owner revoked the object, or
 * was told to, or the owner's node went down: either way the owner holds
 * nothing for us), its descriptions go back to the owner with DROP.
 */
void fos_remote_proxy_free(struct fos_proxy *p)
{
	struct fos_event *ev = p->drop;
	u64 units;

	spin_lock(&fos_proxy_lock);
	if (p->hashed)
		hash_del(&p->hnode);
	units = p->units;
	spin_unlock(&fos_proxy_lock);
	if (units && !READ_ONCE(p->obj->revoked))
		fos_drop_queue(ev, p->node, p->epoch, p->oid, fos_node_id,
			       units);
	else
		kfree(ev);
	kfree(p);
	fos_live_add(FOS_LIVE_PROXIES, -1);
}

/**
 * fos_proxy_get - the proxy for a remote object, made if needed
 * @node: the owner
 * @epoch: its epoch
 * @oid: the object id there
 * @type: the object type
 *
 * The description received for it is counted in the proxy (a DROP gives
 * it back when the proxy goes).
 *
 * Return: the proxy with a reference, ERR_PTR(-ENOMEM), or
 * ERR_PTR(-EPROTO) if the name is known with another type.
 */
static struct fos_object *fos_proxy_get(u32 node, u32 epoch, u64 oid,
					u32 type)
{
	struct fos_object *obj, *other;
	struct fos_proxy *p;

	spin_lock(&fos_proxy_lock);
	obj = fos_proxy_find_locked(node, epoch, oid, true);
	spin_unlock(&fos_proxy_lock);
	if (obj)
		goto found;

	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return ERR_PTR(-ENOMEM);
	p->drop = kzalloc(sizeof(*p->drop), GFP_KERNEL);
	obj = p->drop ? fos_obj_create(type, NULL, NULL, NULL) : NULL;
	if (!obj) {
		kfree(p->drop);
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
	if (other) {
		fos_obj_put(obj);	/* lost a race: use the other one */
		obj = other;
	}
found:
	if (obj->type != type) {
		fos_obj_put(obj);
		return ERR_PTR(-EPROTO);
	}
	spin_lock(&fos_proxy_lock);
	obj->proxy->units++;
	spin_unlock(&fos_proxy_lock);
	return obj;
}

#define FOS_REVOKE_BATCH	32

/*
 * Revoke every proxy of @node (@epoch, or any if 0): up to
 * FOS_REVOKE_BATCH per scan of the table (revocation sleeps, so not under
 * fos_proxy_lock), until a scan finds none.
 */
static void fos_proxies_revoke_node(u32 node, u32 epoch)
{
	struct fos_object *batch[FOS_REVOKE_BATCH];
	unsigned int n, i;

	might_sleep();
	do {
		struct fos_proxy *p;
		unsigned int bkt;

		n = 0;
		spin_lock(&fos_proxy_lock);
		hash_for_each(fos_proxies, bkt, p, hnode) {
			if (p->node != node || (epoch && p->epoch != epoch) ||
			    fos_obj_revoked(p->obj) ||
			    !kref_get_unless_zero(&p->obj->ref))
				continue;
			batch[n++] = p->obj;
			if (n == FOS_REVOKE_BATCH)
				break;
		}
		spin_unlock(&fos_proxy_lock);
		for (i = 0; i < n; i++) {
			fos_obj_revoke(batch[i]);
			fos_obj_put(batch[i]);
		}
		cond_resched();
	} while (n);
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
		oid->id = fos_oid_public(obj->id);
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

static int fos_call(struct fos_peer *peer, u8 type, const void *payload,
		    u32 len, struct fos_call_wait *w);

/*
 * Before a capability to a proxy's object goes to @node, which is not
 * the owner: have the owner count it for @node (IMPORT, see "Holders" in
 * wire.h).  Return: 0 (counted), -EKEYREVOKED (send it as revoked: the
 * object is gone, its owner too, or @node cannot reach it), or -ETIMEDOUT,
 * -EINTR, -ENOMEM.
 */
static int fos_cap_import(struct fos_object *obj, u32 node,
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
	struct fos_call_wait w;
	struct fos_peer *peer;
	int ret;

	peer = fos_peer_find(p->node);
	if (!peer)
		return -EKEYREVOKED;
	ret = fos_call(peer, FOS_WIRE_IMPORT, &im, sizeof(im), &w);
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
 * Return: 0, -EOPNOTSUPP (a local child of a proxy), -ENOMEM, or
 * -ETIMEDOUT, -EINTR (IMPORT).
 */
static int fos_cap_describe(const struct fos_cap *cap, u32 node, u32 epoch,
			    struct fos_wire_cap *wc)
{
	struct fos_view v = {
		.off = cap->off, .len = cap->len, .perms = cap->perms,
	};
	struct fos_object *obj = cap->obj;
	struct fractos_oid oid;
	int ret;

	memset(wc, 0, sizeof(*wc));
	if (!obj->proxy) {
		if (fos_obj_root(obj)->proxy)
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

/*
 * A description fos_cap_describe() made for @node (@epoch) was not sent:
 * give it back to whoever counted it.
 */
static void fos_cap_undescribe(const struct fos_wire_cap *wc, u32 node,
			       u32 epoch)
{
	u32 owner = le32_to_cpu(wc->node);

	if (le32_to_cpu(wc->flags) & FOS_WIRE_CAP_REVOKED || owner == node)
		return;
	if (owner == fos_node_id)
		fos_export_put(le64_to_cpu(wc->oid), node, epoch, 1, NULL);
	else
		fos_drop_queue(NULL, owner, le32_to_cpu(wc->epoch),
			       le64_to_cpu(wc->oid), node, 1);
}

/*
 * A description @from sent us was not made into a capability (the
 * message failed): give it back to whoever counted it for us.
 */
static void fos_cap_disown(const struct fos_wire_cap *wc, u32 from)
{
	u32 owner = le32_to_cpu(wc->node);

	if (le32_to_cpu(wc->flags) & FOS_WIRE_CAP_REVOKED)
		return;
	if (owner != fos_node_id)
		fos_drop_queue(NULL, owner, le32_to_cpu(wc->epoch),
			       le64_to_cpu(wc->oid), fos_node_id, 1);
	else if (from == fos_node_id && le32_to_cpu(wc->epoch) == fos_epoch)
		fos_export_put(le64_to_cpu(wc->oid), from, fos_epoch, 1, NULL);
	/* One of ours from another node: it was not counted. */
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
 * The description is accounted for in any case: counted in the proxy it
 * resolves to, or given back (fos_cap_disown()).
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

/* ---- calls: a message and its answer ---- */

/*
 * Send @payload to @peer and wait for the answer (ACK or LOOKUP_REPLY).
 * Return: the answer's status, -EHOSTUNREACH (not connected),
 * -ECONNRESET (the node went down meanwhile), -ETIMEDOUT, or another
 * error of fos_fabric_send().
 */
static int fos_call_timeout(struct fos_peer *peer, u8 type,
			    const void *payload, u32 len,
			    struct fos_call_wait *w, unsigned long timeout)
{
	long left;
	u32 cookie;
	int ret;

	might_sleep();

	init_completion(&w->done);
	w->sent = false;
	w->answered = false;
	w->node = fos_peer_node_id(peer);
	/* Only the answer to this kind of call may complete it. */
	w->reply = type == FOS_WIRE_GRANT ? FOS_WIRE_GRANT_REPLY :
		   type == FOS_WIRE_LOOKUP ? FOS_WIRE_LOOKUP_REPLY :
		   FOS_WIRE_ACK;
	w->status = 0;
	memset(&w->cap, 0, sizeof(w->cap));
	memset(&w->grant, 0, sizeof(w->grant));
	ret = xa_alloc(&fos_calls, &cookie, w, xa_limit_32b, GFP_KERNEL);
	if (ret)
		return ret;
	ret = fos_fabric_send(peer, type, cookie, payload, len, NULL,
			      FOS_SEND_WAIT);
	w->sent = !ret;
	/*
	 * Not sent.  A signal while waiting for a credit is EINTR, never a
	 * restart; ETIMEDOUT (no credit for 5 s), EMSGSIZE and ENOMEM are
	 * the caller's to see; any other failure ended the connection.
	 */
	if (ret == -ERESTARTSYS)
		ret = -EINTR;
	else if (ret && ret != -ETIMEDOUT && ret != -EMSGSIZE &&
		 ret != -ENOMEM)
		ret = -EHOSTUNREACH;
	if (!ret) {
		/* Delivered or not, the answer tells: wait for it. */
		left = wait_for_completion_killable_timeout(&w->done,
							    timeout);
		if (!left)
			ret = -ETIMEDOUT;
		else if (left < 0)
			ret = left;
	}
	/* After this, no answer can reach @w. */
	xa_erase(&fos_calls, cookie);
	if (ret && try_wait_for_completion(&w->done))
		ret = 0;
	if (ret)
		return ret;
	/* A peer's status is an errno; kernel-internal codes are not. */
	return w->status <= -ERESTARTSYS ? -EPROTO : w->status;
}

static int fos_call(struct fos_peer *peer, u8 type, const void *payload,
		    u32 len, struct fos_call_wait *w)
{
	return fos_call_timeout(peer, type, payload, len, w,
				FOS_REMOTE_TIMEOUT);
}

/* Return: whether a caller took the answer. */
static bool fos_call_complete(struct fos_peer *peer, u8 reply, u64 cookie,
			      int status, const struct fos_cap *cap,
			      const struct fos_wire_grant_reply *grant)
{
	struct fos_call_wait *w;
	bool taken = false;

	if (cookie > U32_MAX)
		return false;
	xa_lock(&fos_calls);
	w = xa_load(&fos_calls, cookie);
	if (w && w->node == fos_peer_node_id(peer) && w->reply == reply &&
	    !completion_done(&w->done)) {
		w->status = status;
		w->answered = true;
		if (cap)
			w->cap = *cap;
		if (grant)
			w->grant = *grant;
		complete(&w->done);
		taken = true;
	}
	xa_unlock(&fos_calls);
	return taken;
}

/**
 * fos_remote_node_down - a node, or one epoch of it, is gone
 * @node: its id
 * @epoch: the epoch that died, or 0 for every epoch (node deleted)
 *
 * Called by fabric.c in process context, under no lock.  Calls waiting
 * on the node fail now; its proxies are revoked and its imports and
 * grants dropped from fos_downs_work, which nothing else queues behind.
 * The event cannot be lost: its allocation does not fail.
 */
void fos_remote_node_down(u32 node, u32 epoch)
{
	struct fos_call_wait *w;
	struct fos_event *ev;
	unsigned long idx;

	might_sleep();
	xa_lock(&fos_calls);
	xa_for_each(&fos_calls, idx, w) {
		if (w->node == node && !completion_done(&w->done)) {
			w->status = -ECONNRESET;
			complete(&w->done);
		}
	}
	xa_unlock(&fos_calls);
	/* Small: __GFP_NOFAIL is for exactly this (fault injection too). */
	ev = kzalloc(sizeof(*ev), GFP_KERNEL | __GFP_NOFAIL);
	ev->kind = FOS_EV_DOWN;
	ev->node = node;
	ev->epoch = epoch;
	spin_lock(&fos_events_lock);
	list_add_tail(&ev->link, &fos_downs);
	spin_unlock(&fos_events_lock);
	queue_work(system_unbound_wq, &fos_downs_work);
}

/* The oldest event on @queue (fos_events or fos_downs), or NULL. */
static struct fos_event *fos_event_pop(struct list_head *queue)
{
	struct fos_event *ev;

	spin_lock(&fos_events_lock);
	ev = list_first_entry_or_null(queue, struct fos_event, link);
	if (ev)
		list_del(&ev->link);
	spin_unlock(&fos_events_lock);
	return ev;
}

static void fos_downs_fn(struct work_struct *work)
{
	struct fos_event *ev;

	while ((ev = fos_event_pop(&fos_downs))) {
		fos_proxies_revoke_node(ev->node, ev->epoch);
		fos_exports_drop_node(ev->node, ev->epoch);
		fos_grants_drop_node(ev->node);
		kfree(ev);
		cond_resched();
	}
}

/*
 * Send a deferred event's message.  Best effort: a lost REVOKE is a known
 * race (the next use gets EKEYREVOKED), a lost GRANT_END is covered by the
 * grant's timer, a lost DROP keeps the export until it is revoked.
 */
static void fos_event_send(u32 node, u8 type, const void *payload, u32 len)
{
	struct fos_peer *peer = fos_peer_find(node);

	if (!peer)
		return;
	fos_fabric_send(peer, type, 0, payload, len, NULL, FOS_SEND_WAIT);
	fos_peer_put(peer);
}

static void fos_event_run(const struct fos_event *ev)
{
	union {
		struct fos_wire_obj o;
		struct fos_wire_drop d;
		struct fos_wire_grant_end e;
		struct fos_wire_release r;
	} p = {};

	switch (ev->kind) {
	case FOS_EV_DROP:
		p.d.oid = cpu_to_le64(ev->oid);
		p.d.epoch = cpu_to_le32(ev->epoch);
		p.d.node = cpu_to_le32(ev->holder);
		p.d.count = cpu_to_le64(ev->count);
		fos_event_send(ev->node, FOS_WIRE_DROP, &p.d, sizeof(p.d));
		break;
	case FOS_EV_GRANT_END:
		p.e.pull = cpu_to_le64(ev->oid);
		p.e.id = cpu_to_le64(ev->epoch);
		fos_event_send(ev->node, FOS_WIRE_GRANT_END, &p.e, sizeof(p.e));
		break;
	case FOS_EV_RELEASE:
		p.r.id = cpu_to_le64(ev->oid);
		fos_event_send(ev->node, FOS_WIRE_RELEASE, &p.r, sizeof(p.r));
		break;
	default:
		p.o.oid = cpu_to_le64(ev->oid);
		p.o.epoch = cpu_to_le32(ev->epoch);
		fos_event_send(ev->node, ev->type, &p.o, sizeof(p.o));
	}
}

static void fos_events_fn(struct work_struct *work)
{
	struct fos_event *ev;

	while ((ev = fos_event_pop(&fos_events))) {
		fos_event_run(ev);
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
 * -EMSGSIZE (the arguments do not fit one fabric message: only with a
 * peer that announced smaller buffers than ours), -EOPNOTSUPP
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

	might_sleep();

	/* More than any Request takes: what the owner would answer. */
	if (imm_len > FOS_WIRE_MAX_IMM || ncaps > FOS_WIRE_MAX_CAPS)
		return -E2BIG;
	len = sizeof(*iv) + ncaps * sizeof(*wc) + imm_len;
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
	/* Named for the call only: exported while it lasts. */
	if (!root->proxy) {
		static const struct fos_view none;

		ret = fos_export_add(target, oid.node, pepoch, &none);
		if (ret)
			goto out_free;
	}
	if (imm_len)
		memcpy(wc + ncaps, imm, imm_len);

	for (;;) {
		/*
		 * Every INVOKE that is sent hands its descriptions to the
		 * receiver, which accounts for them even when it refuses
		 * the call: each attempt describes them anew.
		 */
		for (i = 0, ret = 0; i < ncaps; i++) {
			ret = fos_cap_describe(&caps[i], oid.node, pepoch,
					       &wc[i]);
			if (ret)
				break;
		}
		if (ret) {
			/* wc[i] failed: give back those before it. */
			while (i--)
				fos_cap_undescribe(&wc[i], oid.node, pepoch);
			break;
		}
		ret = fos_call(peer, FOS_WIRE_INVOKE, iv, len, &w);
		if (!w.sent)
			for (i = 0; i < ncaps; i++)
				fos_cap_undescribe(&wc[i], oid.node, pepoch);
		if (ret != -EAGAIN || !wait)
			break;
		/* The provider's queue is full: try again shortly. */
		if (msleep_interruptible(1) || signal_pending(current)) {
			ret = -EINTR;
			break;
		}
	}
	if (!root->proxy)
		fos_export_put(oid.id, oid.node, pepoch, 1, NULL);
	if (ret == -ECONNRESET)
		ret = -EKEYREVOKED;	/* the node is gone: so are its objects */
	if (ret == -EKEYREVOKED && root->proxy)
		fos_obj_revoke(root);	/* the owner says so: monitors fire */
out_free:
	kfree(iv);
out_peer:
	trace_fos_remote_invoke(oid.node, oid.id, imm_len, ncaps, ret);
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

	might_sleep();

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
	struct fos_call_wait w;
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
	ret = fos_call(peer, FOS_WIRE_LOOKUP, l, sizeof(*l) + len, &w);
	kfree(l);
	if (ret == -ECONNRESET)
		ret = -EHOSTUNREACH;
	if (!ret)
		*out = w.cap;	/* resolved on receipt */
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
	u32 i = 0, n = 0, from = fos_peer_node_id(peer);
	struct fos_object *obj = NULL;
	struct fos_cap *caps;
	struct fos_req *req;
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
	/*
	 * All or nothing: every capability, then one queued message.  A
	 * description that fails to resolve is accounted for (disowned) by
	 * fos_cap_resolve(), those after it below.
	 */
	for (ret = 0; i < ncaps && !ret; i++) {
		ret = fos_cap_resolve(peer, &wc[i], &caps[n]);
		if (!ret)
			n++;
	}
	if (!ret)
		ret = fos_req_deliver(req, imm, imm_len, caps, n);
	while (n)
		fos_obj_put(caps[--n].obj);
	kfree(caps);
out_req:
	fos_req_put(req);
out_obj:
	fos_obj_put(obj);
out_disown:
	/* Descriptions not made into capabilities go back (see wire.h). */
	for (; i < ncaps; i++)
		fos_cap_disown(&wc[i], from);
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

	fos_call_complete(peer, FOS_WIRE_ACK, le64_to_cpu(hdr->cookie),
			  -(int)le32_to_cpu(a->status), NULL, NULL);
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
		obj = fos_export_get(le64_to_cpu(o->oid), peer, NULL);
	if (IS_ERR(obj)) {
		ret = PTR_ERR(obj);
	} else if (obj) {
		ret = fos_obj_revoke(obj);
		fos_obj_put(obj);
	}
	fos_send_ack(peer, hdr, ret);
}

/* A node is about to send @node a capability to one of ours: count it. */
void fos_import_recv(struct fos_peer *peer, const struct fos_wire_hdr *hdr,
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
	fos_send_ack(peer, hdr, ret);
}

/* Descriptions held by a node ended: it, or a forwarder for it, says so. */
void fos_drop_recv(struct fos_peer *peer, const struct fos_wire_hdr *hdr,
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
		fos_peer_stat_inc(peer, FRACTOS_STAT_PROTO_ERRORS);
		trace_fos_proto_error(from, "a DROP for another holder");
		pr_warn_ratelimited("fractos: node %u drops %llu descriptions of object %llu for node %u, which it did not announce\n",
				    from, le64_to_cpu(d->count),
				    le64_to_cpu(d->oid), node);
	}
}

/* LOOKUP, in process context (an IMPORT may have to be waited for). */
static void fos_lookup_serve(struct fos_peer *peer, u64 cookie,
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
			   const struct fos_wire_hdr *hdr,
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
	if (!fos_call_complete(peer, FOS_WIRE_LOOKUP_REPLY,
			       le64_to_cpu(hdr->cookie), status,
			       status ? NULL : &cap, NULL) && !status)
		fos_obj_put(cap.obj);
}

/* ---- memory_copy across nodes (see "Remote copies" above) ---- */

/* How long a grant may live: its puller releases it long before. */
#define FOS_GRANT_TTL		(3 * FOS_REMOTE_TIMEOUT)
/*
 * How long a grant outlives the revocation of its source at most: its
 * puller's READs in flight (8 of 1 MiB) complete long before, even
 * through a few retransmissions.
 */
#define FOS_GRANT_END_WAIT	(2 * HZ)

static struct workqueue_struct *fos_copy_wq;

/**
 * struct fos_grant - a source range registered for a puller's RDMA READs
 * @id: in fos_grants
 * @node: the puller
 * @ending: GRANT_END is on its way (under fos_grants' xa_lock)
 * @pull: the puller's token
 * @obj: the object of the view granted (a reference), checked for
 *	revocation
 * @mem: the pinned pages (a reference: they stay pinned while registered)
 * @sgt: the pages of the range
 * @mr: the region; its rkey dies with fos_fabric_dereg_mr()
 * @ttl: releases a grant its puller never released (FOS_GRANT_TTL, or
 *	FOS_GRANT_END_WAIT once ending)
 * @peer: the puller (a reference), charged one FOS_PEER_GRANTS
 * @dead: on a local list once taken out of fos_grants
 *
 * Freed by whoever takes it out of fos_grants.
 */
struct fos_grant {
	u32 id;
	u32 node;
	bool ending;
	u64 pull;
	struct fos_object *obj;
	struct list_head dead;
	struct fos_mem *mem;
	struct sg_table sgt;
	struct fos_fabric_mr *mr;
	struct delayed_work ttl;
	struct fos_peer *peer;
};

/* id -> struct fos_grant; xa_lock guards taking an entry out. */
static DEFINE_XARRAY_ALLOC(fos_grants);
/* Woken whenever a grant is freed (fos_remote_grants_sync()). */
static DECLARE_WAIT_QUEUE_HEAD(fos_grants_wq);

static void fos_grant_free(struct fos_grant *g)
{
	fos_fabric_dereg_mr(g->mr);	/* the rkey is dead from here */
	sg_free_table(&g->sgt);
	fos_mem_put(g->mem);
	fos_obj_put(g->obj);
	fos_peer_res_put(g->peer, FOS_PEER_GRANTS);
	fos_peer_put(g->peer);
	kfree(g);
	fos_live_add(FOS_LIVE_GRANTS, -1);
	wake_up_all(&fos_grants_wq);
}

/*
 * Objects were revoked: end the grants out on them (see "Remote copies").
 * The puller is told (GRANT_END) and the grant's timer shortened to
 * FOS_GRANT_END_WAIT.  May sleep.
 */
static void fos_grants_end_revoked(void)
{
	struct fos_grant *g;
	unsigned long idx;

	if (xa_empty(&fos_grants))
		return;
	xa_lock(&fos_grants);
	xa_for_each(&fos_grants, idx, g) {
		/* Racy read: a revocation in progress scans again after. */
		if (g->ending || !READ_ONCE(g->obj->revoked))
			continue;
		g->ending = true;
		mod_delayed_work(fos_copy_wq, &g->ttl, FOS_GRANT_END_WAIT);
		fos_event_queue(FOS_EV_GRANT_END, 0, g->node, g->id, g->pull,
				GFP_ATOMIC);
	}
	xa_unlock(&fos_grants);
}

static void fos_grant_ttl_fn(struct work_struct *work)
{
	struct fos_grant *g = container_of(to_delayed_work(work),
					   struct fos_grant, ttl);

	if (xa_cmpxchg(&fos_grants, g->id, g, NULL, GFP_KERNEL) != g)
		return;
	/*
	 * fos_grants_end_revoked() may have re-armed us while we ran (a
	 * running work is not pending): out of the table, nobody can any
	 * more, so cancel that before @g goes.
	 */
	cancel_delayed_work(&g->ttl);
	fos_grant_free(g);
}

/* A grant is out on a revoked object. */
static bool fos_grants_revoked_out(void)
{
	struct fos_grant *g;
	unsigned long idx;
	bool out = false;

	xa_lock(&fos_grants);
	xa_for_each(&fos_grants, idx, g) {
		if (READ_ONCE(g->obj->revoked)) {
			out = true;
			break;
		}
	}
	xa_unlock(&fos_grants);
	return out;
}

/* Some range of ours is registered for a peer (a racy hint). */
bool fos_remote_grants_out(void)
{
	return !xa_empty(&fos_grants);
}

/**
 * fos_remote_grants_sync - the keys of revoked objects are dead
 *
 * Called by CAP_REVOKE once the object is revoked, so that no peer can
 * read it when the call returns (see "Remote copies"): waits until the
 * pullers of the grants out on revoked objects have released them (they
 * were sent GRANT_END), at most FOS_GRANT_END_WAIT, then deregisters
 * those that are left itself; a puller that still reads from one loses
 * its connection.  Returns at once when no grant is out.  May sleep.
 */
void fos_remote_grants_sync(void)
{
	struct fos_grant *g, *tmp;
	unsigned long idx;
	LIST_HEAD(dead);

	might_sleep();
	if (xa_empty(&fos_grants))
		return;
	wait_event_timeout(fos_grants_wq, !fos_grants_revoked_out(),
			   FOS_GRANT_END_WAIT);
	xa_lock(&fos_grants);
	xa_for_each(&fos_grants, idx, g) {
		if (!READ_ONCE(g->obj->revoked))
			continue;
		__xa_erase(&fos_grants, idx);
		list_add_tail(&g->dead, &dead);
	}
	xa_unlock(&fos_grants);
	list_for_each_entry_safe(g, tmp, &dead, dead) {
		cancel_delayed_work_sync(&g->ttl);
		fos_grant_free(g);
	}
}

/* Take grant @id (of @node) out and free it. */
static void fos_grant_release(u32 id, u32 node)
{
	struct fos_grant *g;

	xa_lock(&fos_grants);
	g = xa_load(&fos_grants, id);
	if (g && g->node == node)
		__xa_erase(&fos_grants, id);
	else
		g = NULL;
	xa_unlock(&fos_grants);
	if (!g)
		return;
	cancel_delayed_work_sync(&g->ttl);
	fos_grant_free(g);
}

/* Release every grant of @node (U32_MAX: of every node). */
static void fos_grants_drop_node(u32 node)
{
	struct fos_grant *g, *tmp;
	unsigned long idx;
	LIST_HEAD(dead);

	xa_lock(&fos_grants);
	xa_for_each(&fos_grants, idx, g) {
		if (node != U32_MAX && g->node != node)
			continue;
		__xa_erase(&fos_grants, idx);
		list_add_tail(&g->dead, &dead);
	}
	xa_unlock(&fos_grants);
	list_for_each_entry_safe(g, tmp, &dead, dead) {
		cancel_delayed_work_sync(&g->ttl);
		fos_grant_free(g);
	}
}

/*
 * A Memory view of ours named on the wire by @peer: the object, checked
 * against the view, with rights @perm and [@off, @off + @len) inside it.
 */
static int fos_copy_local_view(struct fos_peer *peer,
			       const struct fos_wire_cap *wc, u32 perm,
			       u64 off, u64 len, struct fos_cap *out)
{
	struct fos_view v = {
		.off = le64_to_cpu(wc->off), .len = le64_to_cpu(wc->len),
		.perms = le32_to_cpu(wc->perms),
	};
	struct fos_object *obj;
	int ret;

	if (le32_to_cpu(wc->node) != fos_node_id)
		return -EPROTO;
	if (le32_to_cpu(wc->epoch) != fos_epoch)
		return -EKEYREVOKED;
	obj = fos_export_get(le64_to_cpu(wc->oid), peer, &v);
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	if (!obj)
		return -EKEYREVOKED;
	out->obj = obj;
	out->off = le64_to_cpu(wc->off);
	out->len = le64_to_cpu(wc->len);
	out->perms = le32_to_cpu(wc->perms);
	if (obj->type != FRACTOS_OBJ_MEMORY)
		ret = -EPROTO;
	else
		ret = fos_view_check(obj, out);
	if (!ret && !(out->perms & perm))
		ret = -EACCES;
	if (!ret && (off > out->len || len > out->len - off))
		ret = -ERANGE;
	if (ret)
		fos_obj_put(obj);
	return ret;
}

/* The puller's errors as memory_copy reports them. */
static int fos_copy_errno(int ret)
{
	switch (ret) {
	case -ECONNRESET:
		return -EKEYREVOKED;	/* the node is gone: so are its objects */
	case -ENOTCONN:
	case -ECOMM:
		return -EHOSTUNREACH;
	default:
		return ret;
	}
}

/**
 * struct fos_pull - a copy being pulled, for GRANT_END
 * @node: the source's owner
 * @ended: GRANT_END arrived: post no further READ
 *
 * On the puller's stack, in fos_pulls (the token is its index) while the
 * copy runs.
 */
struct fos_pull {
	u32 node;
	bool ended;
};

static DEFINE_XARRAY_ALLOC1(fos_pulls);

/**
 * fos_copy_pull - RDMA-read a source view into a local destination
 * @src: the source view on the wire (names its owner)
 * @soff: first byte, from the start of @src
 * @dst: the local destination view (rights and range checked)
 * @doff: where it goes, from the start of @dst
 * @len: bytes, non-zero
 *
 * Asks the owner for a grant over (a window of) the source range, reads
 * it straight into the destination's pinned pages, releases the grant,
 * and goes on with the next window; stops posting READs when the owner
 * ends the grants of the copy (GRANT_END).  Process context.
 */
static int fos_copy_pull(const struct fos_wire_cap *src, u64 soff,
			 const struct fos_cap *dst, u64 doff, u64 len)
{
	struct fos_wire_release rel = {};
	struct fos_wire_grant g = {};
	struct fos_pull pull = {};
	struct fos_call_wait w;
	struct fos_peer *peer;
	struct fos_mem *mem;
	struct sg_table sgt;
	u64 done = 0;
	u32 token;
	int ret = 0;

	mem = fos_obj_get_mem(dst->obj);
	if (IS_ERR(mem))
		return PTR_ERR(mem);
	if (!mem->writable) {
		ret = -EACCES;
		goto out_mem;
	}
	peer = fos_peer_find(le32_to_cpu(src->node));
	if (!peer) {
		ret = -EHOSTUNREACH;
		goto out_mem;
	}
	pull.node = fos_peer_node_id(peer);
	ret = xa_alloc(&fos_pulls, &token, &pull, xa_limit_32b, GFP_KERNEL);
	if (ret)
		goto out_peer;
	g.src = *src;
	g.pull = cpu_to_le64(token);
	while (done < len) {
		u64 glen, addr;
		s64 n;

		g.off = cpu_to_le64(soff + done);
		g.len = cpu_to_le64(len - done);
		ret = fos_call(peer, FOS_WIRE_GRANT, &g, sizeof(g), &w);
		if (ret)
			break;
		glen = le64_to_cpu(w.grant.len);
		addr = le64_to_cpu(w.grant.addr);
		rel.id = w.grant.id;
		if (!glen || glen > len - done) {
			ret = -EPROTO;
		} else {
			n = fos_mem_sgt(mem, dst->off + doff + done, glen,
					min_t(u64, DIV_ROUND_UP(glen, PAGE_SIZE) + 1,
					      U32_MAX),
					&sgt);
			ret = n < 0 ? n : 0;
		}
		if (!ret) {
			ret = fos_fabric_rdma_read(peer, &sgt, addr,
						   le32_to_cpu(w.grant.rkey),
						   &pull.ended);
			sg_free_table(&sgt);
		}
		/*
		 * Queued, not waited for: a caller being killed must still
		 * release what it was granted.  Best effort: the grant's TTL
		 * ends it otherwise.
		 */
		fos_fabric_send(peer, FOS_WIRE_RELEASE, 0, &rel, sizeof(rel),
				NULL, FOS_SEND_QUEUE);
		if (ret)
			break;
		done += glen;
		cond_resched();
	}
	xa_erase(&fos_pulls, token);
out_peer:
	fos_peer_put(peer);
out_mem:
	fos_mem_put(mem);
	return fos_copy_errno(ret);
}

/*
 * A capability for the copy protocol, named for node @node: a proxy (or a
 * local child of one) by the remote object's name with the capability's
 * view; a local object is exported to @node until fos_copy_undescribe().
 * A name for the copy only, not a capability handed over: the caller's
 * own capability keeps the object alive meanwhile.
 */
static int fos_copy_describe(const struct fos_cap *cap, u32 node, u32 epoch,
			     struct fos_wire_cap *wc)
{
	struct fos_object *root = fos_obj_root(cap->obj);
	struct fos_view v = {
		.off = cap->off, .len = cap->len, .perms = cap->perms,
	};
	struct fractos_oid oid;
	int ret;

	if (!root->proxy) {
		ret = fos_cap_describe(cap, node, epoch, wc);
		if (!ret && wc->flags)
			ret = -EKEYREVOKED;
		return ret;
	}
	memset(wc, 0, sizeof(*wc));
	/*
	 * A third node's Memory for @node to pull from: its owner counts
	 * the view for @node first (see "Views" in wire.h).
	 */
	if (root->proxy->node != node) {
		ret = fos_cap_import(root, node, &v);
		if (ret)
			return ret;
	}
	fos_remote_oid(root, &oid);
	wc->node = cpu_to_le32(oid.node);
	wc->epoch = cpu_to_le32(oid.epoch);
	wc->oid = cpu_to_le64(oid.id);
	wc->off = cpu_to_le64(cap->off);
	wc->len = cpu_to_le64(cap->len);
	wc->type = cpu_to_le32(FRACTOS_OBJ_MEMORY);
	wc->perms = cpu_to_le32(cap->perms);
	return 0;
}

/*
 * The copy is over: a local object named for it is no longer exported to
 * @node, and a third node's no longer counted for it.
 */
static void fos_copy_undescribe(const struct fos_wire_cap *wc, u32 node,
				u32 epoch)
{
	u32 owner = le32_to_cpu(wc->node);

	if (!wc->epoch || wc->flags)
		return;
	if (owner == fos_node_id)
		fos_export_put(le64_to_cpu(wc->oid), node, epoch, 1, NULL);
	else if (owner != node)
		fos_drop_queue(NULL, owner, le32_to_cpu(wc->epoch),
			       le64_to_cpu(wc->oid), node, 1);
}

/**
 * fos_remote_copy_wanted - does memory_copy between these go by fabric?
 * @src: the source Memory object
 * @dst: the destination Memory object
 *
 * Return: true if either is another node's (a proxy or a local child of
 * one), or with fabric_loopback.
 */
bool fos_remote_copy_wanted(struct fos_object *src, struct fos_object *dst)
{
	return fos_obj_root(src)->proxy || fos_obj_root(dst)->proxy ||
	       fos_remote_loopback();
}

/**
 * fos_remote_copy - memory_copy where a view is another node's
 * @src: the source view (READ and the range checked by the caller)
 * @soff: first byte, from the start of @src
 * @dst: the destination view (WRITE and the range checked)
 * @doff: where it goes, from the start of @dst
 * @len: bytes
 *
 * The owner of the destination pulls the bytes with RDMA READs from the
 * owner of the source (fos_copy_pull()): this node if it owns the
 * destination, else it is asked with COPY.  With fabric_loopback, a copy
 * between local views goes the same way through this node's connection
 * to itself.  Process context.
 *
 * Return: 0, the owners' errors (EKEYREVOKED, EACCES, ERANGE, EPROTO),
 * -EHOSTUNREACH, -ETIMEDOUT, -EINVAL (loopback: overlapping ranges of one
 * memory), -EINTR, -ENOMEM.
 */
int fos_remote_copy(const struct fos_cap *src, u64 soff,
		    const struct fos_cap *dst, u64 doff, u64 len)
{
	struct fos_object *droot = fos_obj_root(dst->obj);
	struct fos_object *sroot = fos_obj_root(src->obj);
	struct fos_wire_copy *c;
	struct fos_call_wait w;
	struct fos_peer *peer;
	struct fractos_oid oid;
	u32 pepoch;
	int ret;

	might_sleep();

	if (!sroot->proxy && !droot->proxy) {
		ret = fos_mem_copy_local(src, soff, dst, doff, len, true);
		if (ret)
			return ret;
	}
	if (!len)
		return 0;
	fos_remote_oid(droot->proxy ? droot : dst->obj, &oid);
	if (!droot->proxy)
		fos_remote_oid(sroot->proxy ? sroot : src->obj, &oid);
	peer = fos_peer_find(oid.node);
	if (!peer)
		return -EHOSTUNREACH;
	pepoch = fos_peer_epoch(peer);
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c) {
		ret = -ENOMEM;
		goto out_peer;
	}
	ret = fos_copy_describe(src, oid.node, pepoch, &c->src);
	if (ret)
		goto out_free;
	if (!droot->proxy) {
		/* Ours: pull from the source's owner (maybe ourselves). */
		ret = fos_copy_pull(&c->src, soff, dst, doff, len);
		goto out_names;
	}
	ret = fos_copy_describe(dst, oid.node, pepoch, &c->dst);
	if (ret)
		goto out_names;
	c->src_off = cpu_to_le64(soff);
	c->dst_off = cpu_to_le64(doff);
	c->len = cpu_to_le64(len);
	/* Ten seconds, plus one per MiB. */
	ret = fos_call_timeout(peer, FOS_WIRE_COPY, c, sizeof(*c), &w,
			       FOS_REMOTE_TIMEOUT +
			       min_t(u64, len >> 20, 3600) * HZ);
	ret = fos_copy_errno(ret);
out_names:
	fos_copy_undescribe(&c->src, oid.node, pepoch);
	fos_copy_undescribe(&c->dst, oid.node, pepoch);
out_free:
	kfree(c);
out_peer:
	trace_fos_remote_copy(oid.node, len, ret);
	fos_peer_put(peer);
	return ret;
}

/* COPY on the destination's owner. */
static int fos_copy_serve(struct fos_peer *peer, const struct fos_wire_copy *c)
{
	u64 soff = le64_to_cpu(c->src_off), doff = le64_to_cpu(c->dst_off);
	u64 len = le64_to_cpu(c->len);
	struct fos_cap dst, src;
	int ret;

	ret = fos_copy_local_view(peer, &c->dst, FRACTOS_PERM_WRITE, doff, len,
				  &dst);
	if (ret)
		return ret;
	if (le32_to_cpu(c->src.node) == fos_node_id && !fos_remote_loopback()) {
		ret = fos_copy_local_view(peer, &c->src, FRACTOS_PERM_READ,
					  soff, len, &src);
		if (!ret) {
			ret = fos_mem_copy_local(&src, soff, &dst, doff, len,
						 false);
			fos_obj_put(src.obj);
		}
	} else {
		ret = fos_copy_pull(&c->src, soff, &dst, doff, len);
	}
	fos_obj_put(dst.obj);
	return ret;
}

/* GRANT on the source's owner: register the range, answer where it is. */
static int fos_grant_serve(struct fos_peer *peer, const struct fos_wire_grant *w,
			   struct fos_wire_grant_reply *r)
{
	u64 off = le64_to_cpu(w->off), len = le64_to_cpu(w->len);
	struct fos_grant *g;
	struct fos_cap src;
	u32 max_pages, rkey, id;
	u64 addr, b;
	s64 n;
	int ret;

	ret = fos_copy_local_view(peer, &w->src, FRACTOS_PERM_READ, off, len,
				  &src);
	if (ret)
		return ret;
	if (!fos_peer_res_get(peer, FOS_PEER_GRANTS)) {
		ret = -EAGAIN;
		goto out_obj;
	}
	g = kzalloc(sizeof(*g), GFP_KERNEL);
	if (!g) {
		fos_peer_res_put(peer, FOS_PEER_GRANTS);
		ret = -ENOMEM;
		goto out_obj;
	}
	g->peer = fos_peer_get(peer);
	g->node = fos_peer_node_id(peer);
	g->pull = le64_to_cpu(w->pull);
	INIT_DELAYED_WORK(&g->ttl, fos_grant_ttl_fn);
	g->mem = fos_obj_get_mem(src.obj);
	if (IS_ERR(g->mem)) {
		ret = PTR_ERR(g->mem);
		kfree(g);
		goto out_obj;
	}
	max_pages = fos_fabric_mr_max_pages(peer);
	b = g->mem->first_off + src.off + off;
	n = fos_mem_sgt(g->mem, src.off + off, len, max_pages, &g->sgt);
	if (n < 0) {
		ret = max_pages ? n : -EHOSTUNREACH;
		goto err_mem;
	}
	ret = fos_fabric_reg_mr(peer, &g->sgt,
				DIV_ROUND_UP(offset_in_page(b) + n, PAGE_SIZE),
				&g->mr, &addr, &rkey);
	if (ret)
		goto err_sgt;
	fos_live_add(FOS_LIVE_GRANTS, 1);
	g->obj = src.obj;	/* the reference goes with @g from here */
	/*
	 * Once in fos_grants, a RELEASE, the node going down or a
	 * revocation may end @g: arm its timer and read its id before
	 * anyone can look it up.
	 */
	xa_lock(&fos_grants);
	ret = __xa_alloc(&fos_grants, &id, g, xa_limit_32b, GFP_KERNEL);
	/*
	 * A revocation whose scan of fos_grants (under this lock) came
	 * before the grant was in the table did not see it, and one after
	 * will: end it here if the object is revoked already.  Checked
	 * under the lock: once it is dropped, @g and its object may be
	 * freed by anyone who ends the grant.
	 */
	if (!ret && READ_ONCE(src.obj->revoked)) {
		__xa_erase(&fos_grants, id);
		ret = -EKEYREVOKED;
	}
	if (!ret) {
		g->id = id;
		queue_delayed_work(fos_copy_wq, &g->ttl, FOS_GRANT_TTL);
	}
	xa_unlock(&fos_grants);
	if (ret) {
		fos_grant_free(g);
		return ret;
	}
	r->rkey = cpu_to_le32(rkey);
	r->id = cpu_to_le64(id);
	r->addr = cpu_to_le64(addr);
	r->len = cpu_to_le64(n);
	return 0;

err_sgt:
	sg_free_table(&g->sgt);
err_mem:
	fos_mem_put(g->mem);
	fos_peer_res_put(g->peer, FOS_PEER_GRANTS);
	fos_peer_put(g->peer);
	kfree(g);
out_obj:
	fos_obj_put(src.obj);
	return ret;
}

/**
 * struct fos_copy_work - a COPY, GRANT or LOOKUP served in process context
 * @work: on fos_copy_wq
 * @peer: the sender (a reference)
 * @type: FOS_WIRE_COPY, FOS_WIRE_GRANT or FOS_WIRE_LOOKUP
 * @cookie: the sender's cookie
 * @msg: the payload, copied whole: @msg.copy (COPY), @msg.grant (GRANT), or
 *	@msg.lookup (LOOKUP) and @msg.name, room for the name that follows it
 */
struct fos_copy_work {
	struct work_struct work;
	struct fos_peer *peer;
	u8 type;
	u64 cookie;
	union {
		struct fos_wire_copy copy;
		struct fos_wire_grant grant;
		struct {
			struct fos_wire_lookup lookup;
			char name[FOS_WIRE_NAME_MAX];
		};
	} msg;
};

static void fos_copy_reply(struct fos_peer *peer, u8 type, u64 cookie,
			   int status, struct fos_wire_grant_reply *r)
{
	struct fos_wire_lookup_reply lr = { .status = cpu_to_le32(-status) };
	struct fos_wire_ack ack = { .status = cpu_to_le32(-status) };

	if (type == FOS_WIRE_LOOKUP) {	/* failed before it was served */
		fos_fabric_send(peer, FOS_WIRE_LOOKUP_REPLY, cookie, &lr,
				sizeof(lr), NULL, FOS_SEND_QUEUE);
		return;
	}
	if (type == FOS_WIRE_COPY) {
		fos_fabric_send(peer, FOS_WIRE_ACK, cookie, &ack, sizeof(ack),
				NULL, FOS_SEND_QUEUE);
		return;
	}
	if (status)
		memset(r, 0, sizeof(*r));
	r->status = cpu_to_le32(-status);
	fos_fabric_send(peer, FOS_WIRE_GRANT_REPLY, cookie, r, sizeof(*r),
			NULL, FOS_SEND_QUEUE);
}

static void fos_copy_work_fn(struct work_struct *work)
{
	struct fos_copy_work *cw = container_of(work, struct fos_copy_work,
						work);
	struct fos_wire_grant_reply r = {};
	int ret;

	if (cw->type == FOS_WIRE_LOOKUP) {
		fos_lookup_serve(cw->peer, cw->cookie, &cw->msg.lookup);
		goto out;
	}
	if (cw->type == FOS_WIRE_COPY)
		ret = fos_copy_serve(cw->peer, &cw->msg.copy);
	else
		ret = fos_grant_serve(cw->peer, &cw->msg.grant, &r);
	/* A reply that cannot go leaves the caller to its timeout. */
	fos_copy_reply(cw->peer, cw->type, cw->cookie, ret, &r);
out:
	fos_peer_res_put(cw->peer, FOS_PEER_WORK);
	fos_fabric_credit_done(cw->peer);
	fos_peer_put(cw->peer);
	kfree(cw);
}

/*
 * COPY, GRANT and LOOKUP wait for the fabric: they run on fos_copy_wq.
 * Their receive credit is held until they are served, or refused here
 * (fos_fabric_credit_done(), "Held credits" in fabric.c).
 */
static void fos_copy_queue(struct fos_peer *peer, const struct fos_wire_hdr *hdr,
			   const void *payload, u32 len)
{
	u64 cookie = le64_to_cpu(hdr->cookie);
	struct fos_wire_grant_reply r = {};
	struct fos_copy_work *cw;

	if (!fos_peer_res_get(peer, FOS_PEER_WORK)) {
		fos_copy_reply(peer, hdr->type, cookie, -EAGAIN, &r);
		fos_fabric_credit_done(peer);
		return;
	}
	cw = kzalloc(sizeof(*cw), GFP_KERNEL);
	if (cw)
		cw->peer = fos_peer_find(fos_peer_node_id(peer));
	if (!cw || !cw->peer) {
		kfree(cw);
		fos_peer_res_put(peer, FOS_PEER_WORK);
		fos_copy_reply(peer, hdr->type, cookie, -ENOMEM, &r);
		fos_fabric_credit_done(peer);
		return;
	}
	cw->type = hdr->type;
	cw->cookie = cookie;
	/*
	 * Into the union, not one of its members: a LOOKUP's name runs past
	 * struct fos_wire_copy (FORTIFY_SOURCE warns of a field-spanning
	 * write; found by two fuzzers looking names up on each other).
	 */
	if (WARN_ON_ONCE(len > sizeof(cw->msg))) {
		fos_peer_res_put(cw->peer, FOS_PEER_WORK);
		fos_peer_put(cw->peer);
		kfree(cw);
		fos_copy_reply(peer, hdr->type, cookie, -EPROTO, &r);
		fos_fabric_credit_done(peer);
		return;
	}
	memcpy(&cw->msg, payload, len);	/* validated by the receive path */
	INIT_WORK(&cw->work, fos_copy_work_fn);
	queue_work(fos_copy_wq, &cw->work);
}

void fos_copy_recv(struct fos_peer *peer, const struct fos_wire_hdr *hdr,
		   const void *payload, u32 len)
{
	fos_copy_queue(peer, hdr, payload, len);
}

void fos_grant_recv(struct fos_peer *peer, const struct fos_wire_hdr *hdr,
		    const void *payload, u32 len)
{
	fos_copy_queue(peer, hdr, payload, len);
}

void fos_lookup_recv(struct fos_peer *peer, const struct fos_wire_hdr *hdr,
		     const void *payload, u32 len)
{
	fos_copy_queue(peer, hdr, payload, len);
}

void fos_grant_reply_recv(struct fos_peer *peer,
			  const struct fos_wire_hdr *hdr,
			  const void *payload, u32 len)
{
	const struct fos_wire_grant_reply *r = payload;

	/*
	 * A grant answering a call that is gone (its caller was killed, or
	 * gave up after FOS_REMOTE_TIMEOUT) is released at once: else it
	 * would keep the owner's pages pinned and their rkey alive until its
	 * FOS_GRANT_TTL.
	 */
	if (!fos_call_complete(peer, FOS_WIRE_GRANT_REPLY,
			       le64_to_cpu(hdr->cookie),
			       -(int)le32_to_cpu(r->status), NULL, r) &&
	    !r->status)
		fos_event_queue(FOS_EV_RELEASE, 0, fos_peer_node_id(peer), 0,
				le64_to_cpu(r->id), GFP_ATOMIC);
}

/* GRANT_END on the puller: stop the copy that token @pull names. */
void fos_grant_end_recv(struct fos_peer *peer, const struct fos_wire_hdr *hdr,
			const void *payload, u32 len)
{
	const struct fos_wire_grant_end *e = payload;
	u64 token = le64_to_cpu(e->pull);
	struct fos_pull *p;

	if (token > U32_MAX)
		return;
	xa_lock(&fos_pulls);
	p = xa_load(&fos_pulls, token);
	/* Unknown: the copy is over and released its grants already. */
	if (p && p->node == fos_peer_node_id(peer))
		WRITE_ONCE(p->ended, true);
	xa_unlock(&fos_pulls);
}

void fos_release_recv(struct fos_peer *peer, const struct fos_wire_hdr *hdr,
		      const void *payload, u32 len)
{
	const struct fos_wire_release *r = payload;
	u64 id = le64_to_cpu(r->id);

	if (id <= U32_MAX)
		fos_grant_release(id, fos_peer_node_id(peer));
}

/* ---- setup ---- */

int fos_remote_init(void)
{
	fos_remote_wq = alloc_ordered_workqueue("fractos_remote", 0);
	if (!fos_remote_wq)
		return -ENOMEM;
	fos_copy_wq = alloc_workqueue("fractos_copy", WQ_UNBOUND, 0);
	if (!fos_copy_wq) {
		destroy_workqueue(fos_remote_wq);
		return -ENOMEM;
	}
	return 0;
}

/* After fos_fabric_exit(): no peer is left to send to or hear from. */
void fos_remote_exit(void)
{
	struct fos_event *ev, *tmp;

	/*
	 * Copy works and grants queue events on fos_remote_wq, and events
	 * may end grants: finish the copies (no peer is left to start
	 * more), end every grant (the peers are gone, so they should be
	 * already), and only then run the last events.
	 */
	flush_workqueue(fos_copy_wq);
	flush_work(&fos_downs_work);
	fos_grants_drop_node(U32_MAX);
	destroy_workqueue(fos_remote_wq);	/* runs what is queued */
	list_for_each_entry_safe(ev, tmp, &fos_events, link)
		kfree(ev);
	destroy_workqueue(fos_copy_wq);
	WARN_ON(!xa_empty(&fos_grants));
	WARN_ON(!xa_empty(&fos_exports));
	WARN_ON(!xa_empty(&fos_calls));
}
