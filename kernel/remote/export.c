// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: remote objects - the export table: the local objects that
 * other nodes may hold, with their importers and the views described to
 * them (see "Remote objects" in remote.c, "Holders" and "Views" in
 * wire.h).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/list.h>
#include <linux/llist.h>
#include <linux/mutex.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include "../fos.h"
#include "../fabric.h"
#include "wire.h"
#include "pri.h"

/* ---- the export table ---- */

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
 * struct fos_views - the views described to an importer, replaced whole
 * @rcu: frees the array a grace period after it was replaced
 * @n: entries at @v, at least one
 * @v: the views
 */
struct fos_views {
	struct rcu_head rcu;
	u32 n;
	struct fos_view v[];
};

/**
 * struct fos_importer - a node that may hold a capability to an export
 * @link: on fos_export.importers (RCU list)
 * @node: its id
 * @epoch: its epoch when it was recorded, 0 if unknown (filled in once,
 *	under fos_export_lock; readers use READ_ONCE())
 * @units: descriptions of the object put on the wire for it and not
 *	dropped yet (see "Holders" in wire.h), never zero; fos_export_lock
 * @views: the views described to it, the only ones it may name (see
 *	"Views" in wire.h); replaced under fos_export_lock, read under RCU
 * @fwds: the forwarders that announced descriptions for it (IMPORT): a
 *	DROP naming it from another node gives back at most those;
 *	fos_export_lock
 * @nfwds: entries in @fwds
 * @dead: on a revocation's private list, once off @link (which a reader
 *	may still follow)
 * @rcu: frees the record a grace period after it left @link
 */
struct fos_importer {
	struct list_head link;
	struct list_head dead;
	u32 node;
	u32 epoch;
	u64 units;
	struct fos_views __rcu *views;
	struct fos_fwd *fwds;
	u32 nfwds;
	struct rcu_head rcu;
};

/**
 * struct fos_export - an entry of the export table
 * @obj: the local object (one reference held, put a grace period after
 *	the entry left the table: a reader may still look at it)
 * @importers: struct fos_importer, changed under fos_export_lock, read
 *	under it or RCU
 * @dead: on a struct fos_dead list once revocation took the entry
 * @hashed: in fos_exports, under fos_export_lock
 * @rcu: a grace period after the entry left the table...
 * @freed: ...it joins fos_exports_freed, whose work puts @obj and frees it
 */
struct fos_export {
	struct fos_object *obj;
	struct list_head importers;
	struct list_head dead;
	bool hashed;
	struct rcu_head rcu;
	struct llist_node freed;
};

/*
 * Locking: fos_export_lock (a mutex) serialises every change of the
 * table, of an entry's importers and of their records.  The lookup of an
 * INVOKE or a COPY (fos_export_find()) reads under RCU first: entries,
 * importer records and view arrays are freed a grace period after they
 * were unlinked, an entry's object reference is put only then, and an
 * importer's views are replaced whole; a lookup that finds nothing there
 * asks again under the mutex, so refusals are decided as before.
 */
static DEFINE_MUTEX(fos_export_lock);
/* oid -> struct fos_export; changed under fos_export_lock. */
DEFINE_XARRAY(fos_exports);

#define fos_export_held_lock() lockdep_is_held(&fos_export_lock)

static void fos_export_free(struct fos_export *e);

/* @v lies inside @o, with no right that @o lacks. */
static bool fos_view_covers(const struct fos_view *o, const struct fos_view *v)
{
	return v->off >= o->off && v->len <= o->len &&
	       v->off - o->off <= o->len - v->len && !(v->perms & ~o->perms);
}

static void fos_importer_free_rcu(struct rcu_head *rcu)
{
	struct fos_importer *i = container_of(rcu, struct fos_importer, rcu);

	kfree(rcu_dereference_protected(i->views, true));
	kfree(i->fwds);
	kfree(i);
}

/* @i left its export's list: freed once no reader can see it. */
static void fos_importer_free(struct fos_importer *i)
{
	call_rcu(&i->rcu, fos_importer_free_rcu);
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
	struct fos_views *old, *views;
	u32 k, n;

	lockdep_assert_held(&fos_export_lock);
	old = rcu_dereference_protected(i->views, fos_export_held_lock());
	n = old ? old->n : 0;
	for (k = 0; k < n; k++)
		if (fos_view_covers(&old->v[k], v))
			return 0;
	/* A new array: a reader may be walking the old one. */
	views = kmalloc(struct_size(views, v, n + 1), GFP_KERNEL);
	if (!views)
		return -ENOMEM;
	if (n)
		memcpy(views->v, old->v, n * sizeof(*v));
	views->v[n] = *v;
	views->n = n + 1;
	rcu_assign_pointer(i->views, views);
	if (old)
		kfree_rcu(old, rcu);
	return 0;
}

/*
 * The record of @node (@epoch, 0: any) among @e's importers, or NULL.
 * Caller holds fos_export_lock or the RCU read lock.
 */
static struct fos_importer *fos_export_importer(struct fos_export *e,
						u32 node, u32 epoch)
{
	struct fos_importer *i;
	u32 ie;

	list_for_each_entry_rcu(i, &e->importers, link,
				fos_export_held_lock()) {
		ie = READ_ONCE(i->epoch);
		if (i->node == node && (!epoch || !ie || ie == epoch))
			return i;
	}
	return NULL;
}

/*
 * Whether @node (@epoch) holds @e with a view covering @v (NULL: with
 * any view).  Caller holds fos_export_lock or the RCU read lock.
 */
static bool fos_export_held(struct fos_export *e, u32 node, u32 epoch,
			    const struct fos_view *v)
{
	const struct fos_views *views;
	struct fos_importer *i;
	u32 k;

	i = fos_export_importer(e, node, epoch);
	if (!i)
		return false;
	if (!v)
		return true;
	views = rcu_dereference_check(i->views, fos_export_held_lock());
	for (k = 0; views && k < views->n; k++)
		if (fos_view_covers(&views->v[k], v))
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
	/*
	 * The record lookups and DROP find (fos_export_importer()): a count
	 * kept apart under an unknown epoch would outlive the holder's DROP.
	 */
	i = fos_export_importer(e, node, epoch);
	found = !!i;
	if (found && !i->epoch)
		WRITE_ONCE(i->epoch, epoch);	/* known now, or still 0 */
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
		list_add_tail_rcu(&i->link, &e->importers);
	}
	return 0;

err:
	if (!found) {	/* never published: no reader saw it */
		kfree(rcu_dereference_protected(i->views, true));
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
	spin_lock_bh(&fos_tree_lock);
	mine = e->obj->export == e;
	if (mine)
		e->obj->export = NULL;
	spin_unlock_bh(&fos_tree_lock);
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
int fos_export_add(struct fos_object *obj, u32 node, u32 epoch,
		   const struct fos_view *v)
{
	struct fos_export *e, *spare_e;
	struct fos_importer *spare_i;
	LIST_HEAD(gone);
	bool revoked, seen = false;
	int ret = 0;

	might_sleep();

	spare_e = kzalloc(sizeof(*spare_e), GFP_KERNEL);
	spare_i = kzalloc(sizeof(*spare_i), GFP_KERNEL);
	if (!spare_e || !spare_i) {
		ret = -ENOMEM;
		goto out_free;
	}
	mutex_lock(&fos_export_lock);
	spin_lock_bh(&fos_tree_lock);
	revoked = obj->revoked;
	e = obj->export;
	spin_unlock_bh(&fos_tree_lock);
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
		spin_lock_bh(&fos_tree_lock);
		revoked = obj->revoked;
		if (!revoked) {
			obj->export = e;
			fos_obj_get(obj);
		}
		spin_unlock_bh(&fos_tree_lock);
		if (revoked) {
			xa_erase(&fos_exports, obj->id);
			/* A lookup may have seen it: freed a grace period on. */
			seen = true;
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
	if (seen)
		synchronize_rcu();	/* not under the mutex */
out_free:
	kfree(spare_e);
	kfree(spare_i);
	e = list_first_entry_or_null(&gone, struct fos_export, dead);
	if (e)
		fos_export_free(e);
	return ret;
}

/* The common case of fos_export_find(), under RCU: NULL for the rest. */
static struct fos_object *fos_export_find_rcu(u64 oid, u32 node, u32 epoch,
					      const struct fos_view *v)
{
	struct fos_object *obj = NULL;
	struct fos_export *e;

	rcu_read_lock();
	e = xa_load(&fos_exports, fos_oid_private(oid));
	if (e && !fos_obj_revoked(e->obj) &&
	    fos_export_held(e, node, epoch, v) &&
	    kref_get_unless_zero(&e->obj->ref))
		obj = e->obj;
	rcu_read_unlock();
	return obj;
}

/*
 * The exported object @oid if node @node (@epoch) holds view @v of it (a
 * reference), else NULL; *@held: false if it is exported, but not so.
 */
static struct fos_object *fos_export_find(u64 oid, u32 node, u32 epoch,
					  const struct fos_view *v,
					  bool *held)
{
	struct fos_object *obj;
	struct fos_export *e;

	*held = true;
	/* The common case, under RCU; anything else as it always was. */
	obj = fos_export_find_rcu(oid, node, epoch, v);
	if (obj)
		return obj;

	mutex_lock(&fos_export_lock);
	e = xa_load(&fos_exports, fos_oid_private(oid));
	if (e && !fos_obj_revoked(e->obj)) {
		*held = fos_export_held(e, node, epoch, v);
		if (*held) {
			obj = e->obj;
			fos_obj_get(obj);
		}
	}
	mutex_unlock(&fos_export_lock);
	return obj;
}

/**
 * fos_export_get_held - as fos_export_get(), for a notice that may be late
 * @oid: the object's public id
 * @node: the node that names it
 * @epoch: that node's epoch
 * @v: the view it names
 *
 * A notice sent before the node's imports were dropped (its session ended
 * meanwhile) may name a view it no longer holds: not a protocol error.
 *
 * Return: the object with a reference, or NULL.
 */
struct fos_object *fos_export_get_held(u64 oid, u32 node, u32 epoch,
				       const struct fos_view *v)
{
	bool held;

	return fos_export_find(oid, node, epoch, v, &held);
}

/**
 * fos_export_get_atomic - fos_export_get()'s common case, in softirq
 * @oid: the object's public id (as on the wire)
 * @peer: the node that names it, holding the whole object
 *
 * Return: the object with a reference (put it with fos_obj_put_atomic()),
 * or NULL for everything else, which fos_export_get() decides in process
 * context (a refusal is counted there, not here).
 */
struct fos_object *fos_export_get_atomic(u64 oid, struct fos_peer *peer)
{
	return fos_export_find_rcu(oid, fos_peer_node_id(peer),
				   fos_peer_epoch(peer), NULL);
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
struct fos_object *fos_export_get(u64 oid, struct fos_peer *peer,
				  const struct fos_view *v)
{
	u32 node = fos_peer_node_id(peer);
	struct fos_object *obj;
	bool held;

	obj = fos_export_find(oid, node, fos_peer_epoch(peer), v, &held);
	if (held)
		return obj;
	fos_peer_proto_error(peer, "a view it was not given");
	if (v)
		pr_warn_ratelimited("node %u names object %llu with a view it was not given ([%llu, +%llu) rights %#x)\n",
				    node, oid, v->off, v->len, v->perms);
	else
		pr_warn_ratelimited("node %u names object %llu, which it was not given\n",
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
int fos_export_count(u64 oid, u32 node, u32 epoch,
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
		fos_peer_proto_error(from, "a forward of a view it was not given");
		pr_warn_ratelimited("node %u forwards object %llu with a view it was not given\n",
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
int fos_export_put(u64 oid, u32 node, u32 epoch, u64 count,
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
		pr_warn_ratelimited("node %u drops %llu descriptions of object %llu, holds %llu\n",
				    node, count, oid, found->units);
	found->units -= min(count, found->units);
	if (found->units)
		goto out;
	list_del_rcu(&found->link);
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

/* Entries past their grace period, for one work item to free them all. */
static LLIST_HEAD(fos_exports_freed);

static void fos_export_free_work(struct work_struct *work)
{
	struct llist_node *list = llist_del_all(&fos_exports_freed);
	struct fos_export *e, *tmp;

	llist_for_each_entry_safe(e, tmp, list, freed) {
		fos_obj_put(e->obj);
		kfree(e);
		cond_resched();
	}
}

static DECLARE_WORK(fos_export_free_w, fos_export_free_work);

static void fos_export_free_rcu(struct rcu_head *rcu)
{
	struct fos_export *e = container_of(rcu, struct fos_export, rcu);

	/* The object's put may sleep: in the work, queued once a batch. */
	if (llist_add(&e->freed, &fos_exports_freed))
		queue_work(fos_copy_wq, &fos_export_free_w);
}

/*
 * @e left the table: counted gone now, its object put and its memory
 * freed once no lookup under RCU can see it, by one work item on
 * fos_copy_wq for all those of a grace period (every export of a call's
 * arguments ends, so one each would be a work item per argument); module
 * exit drains them with rcu_barrier() and fos_copy_wq.
 */
static void fos_export_free(struct fos_export *e)
{
	fos_live_add(FOS_LIVE_EXPORTS, -1);
	call_rcu(&e->rcu, fos_export_free_rcu);
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

	might_sleep();
	list_for_each_entry_safe(e, tmp, list, dead) {
		struct fos_importer *i, *itmp;
		LIST_HEAD(importers);

		list_del(&e->dead);
		mutex_lock(&fos_export_lock);
		if (e->hashed) {
			xa_erase(&fos_exports, e->obj->id);
			e->hashed = false;
		}
		/* One by one: a lookup under RCU may be walking the list. */
		list_for_each_entry_safe(i, itmp, &e->importers, link) {
			list_del_rcu(&i->link);
			list_add_tail(&i->dead, &importers);
		}
		mutex_unlock(&fos_export_lock);
		list_for_each_entry_safe(i, itmp, &importers, dead) {
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
	fos_armed_end_revoked();
}

/* Node @node (@epoch, or any if 0) is gone: it imports nothing any more. */
void fos_exports_drop_node(u32 node, u32 epoch)
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
			list_del_rcu(&i->link);
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
