// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: remote objects - proxies: the local stand-ins of other nodes'
 * objects, at most one live per remote object (the proxy table), and the
 * REVOKE notices that revoke them (see "Remote objects" in remote.c).
 */
#include <linux/hashtable.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include "../fos.h"
#include "../fabric.h"
#include "wire.h"
#include "pri.h"

/* ---- proxies ---- */

static DEFINE_SPINLOCK(fos_proxy_lock);
/* (node, epoch, oid) -> struct fos_proxy, under fos_proxy_lock. */
static DEFINE_HASHTABLE(fos_proxies, 8);
/* node -> its struct fos_proxy (fos_proxy.nnode), under fos_proxy_lock. */
static DEFINE_HASHTABLE(fos_proxy_nodes, 6);

/* Take @p out of both tables.  Caller holds fos_proxy_lock. */
static void fos_proxy_unhash_one_locked(struct fos_proxy *p)
{
	lockdep_assert_held(&fos_proxy_lock);
	hash_del(&p->hnode);
	hash_del(&p->nnode);
	p->hashed = false;
}

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
		fos_proxy_unhash_one_locked(p);
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
		fos_proxy_unhash_one_locked(p);
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
struct fos_object *fos_proxy_get(u32 node, u32 epoch, u64 oid,
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
	obj = p->drop ? fos_obj_create(type, NULL, NULL) : NULL;
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
		hash_add(fos_proxy_nodes, &p->nnode, node);
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
 * FOS_REVOKE_BATCH per scan of the node's chain of fos_proxy_nodes
 * (revocation sleeps, so not under fos_proxy_lock), until a scan finds
 * none.
 */
void fos_proxies_revoke_node(u32 node, u32 epoch)
{
	struct fos_object *batch[FOS_REVOKE_BATCH];
	unsigned int n, i;

	might_sleep();
	do {
		struct fos_proxy *p;

		n = 0;
		spin_lock(&fos_proxy_lock);
		hash_for_each_possible(fos_proxy_nodes, p, nnode, node) {
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

/**
 * fos_remote_proxy_oid - the cluster-wide name of the object a proxy stands
 *	for
 * @p: the proxy
 * @oid: filled in
 */
void fos_remote_proxy_oid(const struct fos_proxy *p, struct fractos_oid *oid)
{
	oid->node = p->node;
	oid->epoch = p->epoch;
	oid->id = p->oid;
}

/* The root of @obj's revocation tree (parents are immutable). */
struct fos_object *fos_obj_root(struct fos_object *obj)
{
	while (obj->parent)
		obj = obj->parent;
	return obj;
}

/* The owner revoked one of its objects: so is our proxy. */
void fos_revoke_recv(struct fos_peer *peer, const struct fos_rx_info *rx,
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
