// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: objects and revocation trees.
 *
 * See "Object and capability lifetimes" in fos.h for the rules this file
 * implements.
 */
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/sched.h>
#include "fos.h"
#include "memory.h"
#include "monitor.h"
#include "name.h"
#include "queue.h"
#include "request.h"

DEFINE_SPINLOCK(fos_tree_lock);

static atomic64_t fos_next_oid = ATOMIC64_INIT(0);
static struct kmem_cache *fos_obj_cache;

int fos_object_init(void)
{
	fos_oid_init();
	fos_obj_cache = KMEM_CACHE(fos_object, SLAB_ACCOUNT);
	return fos_obj_cache ? 0 : -ENOMEM;
}

void fos_object_exit(void)
{
	kmem_cache_destroy(fos_obj_cache);
}

static struct fos_object *fos_obj_alloc(u32 type)
{
	struct fos_object *obj;

	obj = kmem_cache_zalloc(fos_obj_cache, GFP_KERNEL_ACCOUNT);
	if (!obj)
		return NULL;
	kref_init(&obj->ref);
	obj->type = type;
	obj->id = atomic64_inc_return(&fos_next_oid);
	INIT_LIST_HEAD(&obj->children);
	INIT_LIST_HEAD(&obj->sibling);
	INIT_LIST_HEAD(&obj->owner_link);
	INIT_LIST_HEAD(&obj->monitors);
	INIT_LIST_HEAD(&obj->names);
	INIT_LIST_HEAD(&obj->work);
	INIT_LIST_HEAD(&obj->reap);
	fos_live_add(FOS_LIVE_OBJECTS, 1);
	return obj;
}

/* Caller holds fos_tree_lock. */
static void fos_obj_set_owner_locked(struct fos_object *obj,
				     struct fos_space *owner)
{
	lockdep_assert_held(&fos_tree_lock);
	if (!owner)
		return;
	obj->owner = owner;
	list_add_tail(&obj->owner_link, &owner->owned);
}

/*
 * @obj stops counting as a delegation of its parent (it is revoked or
 * freed); the parent's monitor_delegate fires when none is left.  Caller
 * holds fos_tree_lock.
 */
static void fos_obj_undelegate_locked(struct fos_object *obj,
				      struct fos_dead *dead)
{
	struct fos_object *p = obj->parent;

	lockdep_assert_held(&fos_tree_lock);
	if (!obj->delegatee)
		return;
	obj->delegatee = false;
	if (--p->ndelegated) {
		p->deleg_owed = true;
		return;
	}
	p->deleg_owed = false;
	if (p->deleg)
		fos_monitor_take_locked(p->deleg, &dead->fire);
}

/* @obj holds @contents (NULL: none) from now on. */
static void fos_obj_set_contents_locked(struct fos_object *obj,
					struct fos_contents *contents)
{
	lockdep_assert_held(&fos_tree_lock);
	obj->contents = contents;
	if (contents)
		contents->holder = obj;
}

/**
 * fos_obj_create - create a root object owned by @owner
 * @type: enum fractos_obj_type
 * @owner: the creating space; the object is revoked when it goes away
 * @contents: the pinned pages of a Memory, the arguments of a Request, or
 *	NULL (a proxy); the object takes over this reference
 *
 * Return: the object with one reference for the caller, or NULL (the
 * caller still owns @contents then).
 */
struct fos_object *fos_obj_create(u32 type, struct fos_space *owner,
				  struct fos_contents *contents)
{
	struct fos_object *obj = fos_obj_alloc(type);

	if (!obj)
		return NULL;
	spin_lock_bh(&fos_tree_lock);
	fos_obj_set_contents_locked(obj, contents);
	fos_obj_set_owner_locked(obj, owner);
	spin_unlock_bh(&fos_tree_lock);
	return obj;
}

/**
 * fos_req_receiver_locked - the space a Request delivers to
 * @req: a Request object or a revocation-tree descendant of one
 *
 * Return: the space that created the tree's root (its queue receives the
 * invocations), or NULL for another node's Request or a root whose space
 * is gone.  Valid while fos_tree_lock is held: a space empties its owned
 * list under it before it is freed.
 */
struct fos_space *fos_req_receiver_locked(struct fos_object *req)
{
	lockdep_assert_held(&fos_tree_lock);
	while (req->parent)
		req = req->parent;
	return req->proxy ? NULL : req->owner;
}

static void fos_obj_revoke_locked(struct fos_object *obj,
				  struct fos_dead *dead);

/**
 * fos_obj_move_owner_locked - a standing root object changes owner
 * @obj: the object, not revoked
 * @to: its new owner, or NULL (none: it lives while a capability does)
 */
void fos_obj_move_owner_locked(struct fos_object *obj, struct fos_space *to)
{
	lockdep_assert_held(&fos_tree_lock);
	if (obj->owner)
		list_del_init(&obj->owner_link);
	obj->owner = NULL;
	fos_obj_set_owner_locked(obj, to);
}

/**
 * fos_obj_give_to_receiver - @obj now belongs to whom @req delivers to
 * @obj: a root object, if it still stands
 * @req: a Request (fos_req_receiver_locked(); another node's: to nobody)
 */
void fos_obj_give_to_receiver(struct fos_object *obj, struct fos_object *req)
{
	spin_lock_bh(&fos_tree_lock);
	if (!obj->revoked)
		fos_obj_move_owner_locked(obj, fos_req_receiver_locked(req));
	spin_unlock_bh(&fos_tree_lock);
}

/**
 * fos_obj_hand_over - a root's contents move to a new object; the root is
 *	revoked
 * @old: a root object @s created
 * @new: a new object (fos_obj_create() without owner or contents), which
 *	@s owns from now on
 * @s: the space that must own @old
 *
 * Every capability to @old and its descendants, and their mappings, are
 * revoked as by CAP_REVOKE; @new holds the contents.  The remote layer's
 * grants of @old may still be waited for (fos_remote()->grants_sync()).
 *
 * Return: 0, -EKEYREVOKED (@old, or @new - a capability to it was handed
 * out first - is revoked), or -EPERM when @s did not create @old or it is
 * no root.
 */
int fos_obj_hand_over(struct fos_object *old, struct fos_object *new,
		      struct fos_space *s)
{
	struct fos_dead dead;
	int ret = 0;

	fos_dead_init(&dead);
	spin_lock_bh(&fos_tree_lock);
	if (old->revoked || new->revoked) {
		ret = -EKEYREVOKED;
	} else if (old->owner != s || old->parent || !old->contents) {
		ret = -EPERM;
	} else {
		fos_obj_set_contents_locked(new, old->contents);
		old->contents = NULL;
		fos_obj_set_owner_locked(new, s);
		fos_obj_revoke_locked(old, &dead);
	}
	spin_unlock_bh(&fos_tree_lock);
	fos_dead_release(&dead);
	return ret;
}

/**
 * fos_obj_create_child - create a revocation-tree child of @parent
 * @parent: the parent object; the child takes a reference on it
 * @owner: the creating space
 * @contents: a derived Request's arguments (taken over on success), or
 *	NULL for a plain revocation-tree child that shares its parent's
 *
 * Return: the child with one reference for the caller, ERR_PTR(-ENOMEM),
 * ERR_PTR(-EKEYREVOKED) when @parent is revoked, or ERR_PTR(-EMLINK) when
 * the child would be deeper than FOS_MAX_DEPTH.
 */
struct fos_object *fos_obj_create_child(struct fos_object *parent,
					struct fos_space *owner,
					struct fos_contents *contents)
{
	struct fos_object *obj;

	if (parent->depth >= FOS_MAX_DEPTH)
		return ERR_PTR(-EMLINK);
	obj = fos_obj_alloc(parent->type);
	if (!obj)
		return ERR_PTR(-ENOMEM);
	obj->depth = parent->depth + 1;

	spin_lock_bh(&fos_tree_lock);
	if (parent->revoked) {
		spin_unlock_bh(&fos_tree_lock);
		/* Never linked anywhere: free it directly. */
		kmem_cache_free(fos_obj_cache, obj);
		fos_live_add(FOS_LIVE_OBJECTS, -1);
		return ERR_PTR(-EKEYREVOKED);
	}
	kref_get(&parent->ref);
	obj->parent = parent;
	fos_obj_set_contents_locked(obj, contents);
	list_add_tail(&obj->sibling, &parent->children);
	fos_obj_set_owner_locked(obj, owner);
	spin_unlock_bh(&fos_tree_lock);
	return obj;
}

void fos_obj_get(struct fos_object *obj)
{
	kref_get(&obj->ref);
}

/*
 * Freeing an object drops references on its parent and on its contents,
 * whose type may drop references on more objects (a Request's
 * capability arguments).  All of that runs through a local worklist
 * (struct fos_reaper) instead of recursion, so no chain of objects can
 * overflow the stack.
 */
struct fos_reaper {
	struct list_head objs;
	struct list_head contents;
};

static void fos_reaper_init(struct fos_reaper *r)
{
	INIT_LIST_HEAD(&r->objs);
	INIT_LIST_HEAD(&r->contents);
}

/**
 * fos_reaper_obj_put - drop a reference on an object, from a type's
 *	&fos_contents_ops.free
 * @r: the reaper that runs the free
 * @obj: the object; freed by @r after the current free, if this was the
 *	last reference
 */
void fos_reaper_obj_put(struct fos_reaper *r, struct fos_object *obj)
{
	/* At zero nobody but fos_tree_lock holders can reach @obj. */
	if (refcount_dec_and_test(&obj->ref.refcount))
		list_add_tail(&obj->reap, &r->objs);
}

static void fos_reaper_contents_put(struct fos_reaper *r,
				    struct fos_contents *c)
{
	if (refcount_dec_and_test(&c->ref.refcount))
		list_add_tail(&c->dead, &r->contents);
}

static void fos_reaper_free_obj(struct fos_reaper *r, struct fos_object *obj)
{
	struct fos_contents *contents;
	struct fos_dead dead;

	fos_dead_init(&dead);
	spin_lock_bh(&fos_tree_lock);
	list_del(&obj->sibling);
	if (obj->owner)
		list_del(&obj->owner_link);
	contents = obj->contents;
	if (contents)
		contents->holder = NULL;
	/* An export holds a reference: none can be left. */
	WARN_ON_ONCE(obj->export);
	/* Nor can a mapping (its fd holds one): the inode goes. */
	fos_memmap_take_locked(obj, &dead);
	fos_obj_undelegate_locked(obj, &dead);
	/* Nobody holds it any more: its monitors have nobody to tell. */
	fos_monitors_take_locked(obj, &dead.drop);
	spin_unlock_bh(&fos_tree_lock);
	WARN_ON_ONCE(!list_empty(&obj->children));
	/* Names hold a reference: none can be left. */
	WARN_ON_ONCE(!list_empty(&obj->names));
	fos_dead_release(&dead);

	if (contents)
		fos_reaper_contents_put(r, contents);
	if (obj->parent)
		fos_reaper_obj_put(r, obj->parent);
	if (obj->proxy)
		fos_remote()->proxy_free(obj->proxy);
	kmem_cache_free(fos_obj_cache, obj);
	fos_live_add(FOS_LIVE_OBJECTS, -1);
}

static void fos_reaper_run(struct fos_reaper *r)
{
	for (;;) {
		struct fos_contents *c;
		struct fos_object *obj;

		c = list_first_entry_or_null(&r->contents,
					     struct fos_contents, dead);
		if (c) {
			list_del(&c->dead);
			c->ops->free(c, r);
			continue;
		}
		obj = list_first_entry_or_null(&r->objs, struct fos_object,
					       reap);
		if (!obj)
			break;
		list_del(&obj->reap);
		fos_reaper_free_obj(r, obj);
		cond_resched();
	}
}

/* Drop a reference on an object; may sleep (it may unpin pages). */
void fos_obj_put(struct fos_object *obj)
{
	struct fos_reaper r;

	might_sleep();
	fos_reaper_init(&r);
	fos_reaper_obj_put(&r, obj);
	fos_reaper_run(&r);
}

/**
 * fos_contents_init - a type's new contents, with one reference
 * @c: embedded in the type's structure
 * @ops: the type's release hook
 */
void fos_contents_init(struct fos_contents *c,
		       const struct fos_contents_ops *ops)
{
	kref_init(&c->ref);
	c->ops = ops;
	INIT_LIST_HEAD(&c->dead);
}

/* Drop a reference on contents (fos_mem_put(), fos_req_put()); may sleep. */
void fos_contents_put(struct fos_contents *c)
{
	struct fos_reaper r;

	might_sleep();
	fos_reaper_init(&r);
	fos_reaper_contents_put(&r, c);
	fos_reaper_run(&r);
}

/*
 * Revoke @obj and its whole subtree.  Caller holds fos_tree_lock and has
 * checked that @obj is not revoked.  The resources taken from the objects
 * are queued on @dead, to be released after the lock is dropped.
 *
 * Every object reachable through children lists is still allocated: freeing
 * an object needs fos_tree_lock to unlink it first.
 */
static void fos_obj_revoke_locked(struct fos_object *obj,
				  struct fos_dead *dead)
{
	LIST_HEAD(queue);

	lockdep_assert_held(&fos_tree_lock);
	obj->revoked = true;
	list_add_tail(&obj->work, &queue);
	while (!list_empty(&queue)) {
		struct fos_object *cur, *child;

		cur = list_first_entry(&queue, struct fos_object, work);
		list_del_init(&cur->work);

		if (cur->owner) {
			list_del_init(&cur->owner_link);
			cur->owner = NULL;
		}
		if (cur->contents) {
			list_add_tail(&cur->contents->dead, &dead->contents);
			cur->contents->holder = NULL;
			cur->contents = NULL;
		}
		fos_remote()->revoke_locked(cur, dead);
		fos_memmap_take_locked(cur, dead);
		fos_monitors_take_receive_locked(cur, &dead->fire);
		fos_name_revoke_locked(cur, dead);
		fos_obj_undelegate_locked(cur, dead);
		/* With delegations left, the last one to go fires it. */
		if (cur->deleg && !cur->ndelegated)
			fos_monitor_take_locked(cur->deleg, &dead->fire);
		list_for_each_entry(child, &cur->children, sibling) {
			if (child->revoked)
				continue;
			child->revoked = true;
			list_add_tail(&child->work, &queue);
		}
	}
}

void fos_dead_init(struct fos_dead *dead)
{
	INIT_LIST_HEAD(&dead->contents);
	INIT_LIST_HEAD(&dead->fire);
	INIT_LIST_HEAD(&dead->drop);
	INIT_LIST_HEAD(&dead->names);
	INIT_LIST_HEAD(&dead->exports);
	INIT_LIST_HEAD(&dead->maps);
}

/**
 * fos_dead_release - release what was taken under fos_tree_lock
 * @dead: filled by revocation or freeing; emptied
 *
 * Every entry is unlinked from @dead before it is released, so @dead is
 * empty on return and may be filled again (fos_space_revoke_owned()
 * releases in batches).  May sleep.
 */
void fos_dead_release(struct fos_dead *dead)
{
	struct fos_contents *c, *ctmp;
	struct fos_monitor *m, *mt;
	struct fos_reaper r;

	might_sleep();
	fos_reaper_init(&r);
	list_for_each_entry_safe(m, mt, &dead->fire, link) {
		list_del_init(&m->link);
		fos_monitor_fire(m);
	}
	list_for_each_entry_safe(m, mt, &dead->drop, link) {
		list_del_init(&m->link);
		fos_monitor_drop(m);
	}
	fos_name_release(&dead->names);
	fos_remote()->exports_release(&dead->exports);
	/* Unmapped before the pages behind the mappings can go. */
	fos_memmap_release(&dead->maps);

	list_for_each_entry_safe(c, ctmp, &dead->contents, dead) {
		list_del(&c->dead);
		fos_reaper_contents_put(&r, c);
	}
	fos_reaper_run(&r);
	WARN_ON_ONCE(!list_empty(&dead->fire) || !list_empty(&dead->drop) ||
		     !list_empty(&dead->names) ||
		     !list_empty(&dead->exports) ||
		     !list_empty(&dead->maps) ||
		     !list_empty(&dead->contents));
}

/**
 * fos_obj_revoke - revoke an object and its revocation subtree
 * @obj: the object (the caller holds a reference)
 *
 * Return: 0, or -EKEYREVOKED if it was already revoked.
 */
int fos_obj_revoke(struct fos_object *obj)
{
	struct fos_dead dead;

	fos_dead_init(&dead);
	spin_lock_bh(&fos_tree_lock);
	if (obj->revoked) {
		spin_unlock_bh(&fos_tree_lock);
		return -EKEYREVOKED;
	}
	fos_obj_revoke_locked(obj, &dead);
	spin_unlock_bh(&fos_tree_lock);

	fos_dead_release(&dead);
	return 0;
}

/**
 * fos_contents_revoke_holder - revoke the object that holds @c
 * @c: contents the caller holds a reference on
 *
 * For a resource that goes away under its object (a dma-buf whose
 * exporter moves it): the object, its revocation subtree and the
 * capabilities to them are revoked as by CAP_REVOKE.
 *
 * Return: 0, or -EKEYREVOKED if no object holds @c any more.
 */
int fos_contents_revoke_holder(struct fos_contents *c)
{
	struct fos_object *obj;
	int ret;

	might_sleep();
	spin_lock_bh(&fos_tree_lock);
	obj = c->holder;
	/* Its last reference may be gone: the reaper clears @holder. */
	if (obj && !kref_get_unless_zero(&obj->ref))
		obj = NULL;
	spin_unlock_bh(&fos_tree_lock);
	if (!obj)
		return -EKEYREVOKED;
	ret = fos_obj_revoke(obj);
	fos_obj_put(obj);
	return ret;
}

/**
 * fos_space_revoke_owned - revoke every object @s created
 * @s: a space being released
 *
 * The lock is dropped between objects when a reschedule is due; the loop
 * restarts from the list head, which revocation always shortens.
 */
void fos_space_revoke_owned(struct fos_space *s)
{
	struct fos_dead dead;

	fos_dead_init(&dead);
	spin_lock_bh(&fos_tree_lock);
	while (!list_empty(&s->owned)) {
		struct fos_object *obj;

		obj = list_first_entry(&s->owned, struct fos_object,
				       owner_link);
		if (WARN_ON_ONCE(obj->revoked)) {
			/* Revoked objects are never on an owned list. */
			list_del_init(&obj->owner_link);
			obj->owner = NULL;
			continue;
		}
		fos_obj_revoke_locked(obj, &dead);
		if (need_resched()) {
			spin_unlock_bh(&fos_tree_lock);
			fos_dead_release(&dead);
			cond_resched();
			spin_lock_bh(&fos_tree_lock);
		}
	}
	spin_unlock_bh(&fos_tree_lock);
	fos_dead_release(&dead);
}

bool fos_obj_revoked(struct fos_object *obj)
{
	return READ_ONCE(obj->revoked);
}

/* Is @obj another node's (a proxy, or a local child of one)? */
bool fos_obj_remote(struct fos_object *obj)
{
	while (obj->parent)	/* immutable */
		obj = obj->parent;
	return obj->proxy;
}

/**
 * fos_obj_own_memory_root - @obj is a Memory root @s created, standing
 * @obj: the object
 * @s: the space
 *
 * What STEAL and MEMORY_GRANT ask of the Memory they hand on.
 *
 * Return: 0, -EOPNOTSUPP (no Memory), -EKEYREVOKED, or -EPERM (a
 * revocation-tree child, another node's, another space's).
 */
int fos_obj_own_memory_root(struct fos_object *obj, const struct fos_space *s)
{
	if (obj->type != FRACTOS_OBJ_MEMORY)
		return -EOPNOTSUPP;
	if (fos_obj_revoked(obj))
		return -EKEYREVOKED;
	if (obj->proxy || obj->parent || !fos_obj_owned_by(obj, s))
		return -EPERM;
	return 0;
}

bool fos_obj_owned_by(struct fos_object *obj, const struct fos_space *s)
{
	bool ret;

	spin_lock_bh(&fos_tree_lock);
	ret = obj->owner == s;
	spin_unlock_bh(&fos_tree_lock);
	return ret;
}

/**
 * fos_obj_get_mem - take an in-flight reference on the pages behind @obj
 * @obj: a Memory object or revocation-tree descendant of one
 *
 * Return: the memory with a reference the caller drops with fos_mem_put(),
 * or ERR_PTR(-EKEYREVOKED).
 */
struct fos_mem *fos_obj_get_mem(struct fos_object *obj)
{
	struct fos_contents *c;

	if (obj->type != FRACTOS_OBJ_MEMORY)
		return ERR_PTR(-EOPNOTSUPP);
	spin_lock_bh(&fos_tree_lock);
	if (obj->revoked) {
		spin_unlock_bh(&fos_tree_lock);
		return ERR_PTR(-EKEYREVOKED);
	}
	/*
	 * Not revoked, so no ancestor is: a local root still has its pages.
	 * A proxy root has none (remote memory_copy is not there yet).
	 */
	while (obj->parent)
		obj = obj->parent;
	c = obj->contents;
	if (!c) {
		spin_unlock_bh(&fos_tree_lock);
		return ERR_PTR(-EOPNOTSUPP);
	}
	kref_get(&c->ref);
	spin_unlock_bh(&fos_tree_lock);
	return fos_mem_of(c);
}

/**
 * fos_obj_get_req - take an in-flight reference on a Request's contents
 * @obj: a Request object or revocation-tree descendant of one
 *
 * Return: the nearest contents up the tree (a derived Request has its own,
 * a plain revocation-tree child uses its parent's) with a reference the
 * caller drops with fos_req_put(), ERR_PTR(-EKEYREVOKED), or
 * ERR_PTR(-EREMOTE) when the nearest contents is a proxy's (which has
 * none: the Request lives on another node) or @obj is no Request.
 * Contents derived from a proxy have a NULL ep.
 */
struct fos_req *fos_obj_get_req(struct fos_object *obj)
{
	struct fos_contents *c;

	if (obj->type != FRACTOS_OBJ_REQUEST)
		return ERR_PTR(-EREMOTE);
	spin_lock_bh(&fos_tree_lock);
	if (obj->revoked) {
		spin_unlock_bh(&fos_tree_lock);
		return ERR_PTR(-EKEYREVOKED);
	}
	while (!obj->contents && obj->parent)
		obj = obj->parent;
	c = obj->contents;
	if (!c) {
		spin_unlock_bh(&fos_tree_lock);
		return ERR_PTR(-EREMOTE);
	}
	kref_get(&c->ref);
	spin_unlock_bh(&fos_tree_lock);
	return fos_req_of(c);
}

/**
 * fos_obj_delegate - account for a capability leaving its space
 * @cap: the capability being delegated (a message or Request argument, or
 *	an exported fd); on return it may reference a new object
 *
 * When @cap's object is watched by monitor_delegate, the delegated copy
 * references a new revocation-tree child that counts as one delegation
 * until it is revoked or freed (every copy of it dropped).  If the
 * operation then fails, it hands the delegation back with
 * fos_obj_undelegate().
 *
 * Return: 1 if @cap now references a new delegation child, 0 if it is
 * unchanged, -ENOMEM, or -EMLINK when the child would be deeper than
 * FOS_MAX_DEPTH.
 */
int fos_obj_delegate(struct fos_cap *cap)
{
	struct fos_object *obj = cap->obj, *child;

	if (!READ_ONCE(obj->deleg))
		return 0;
	if (obj->depth >= FOS_MAX_DEPTH)
		return -EMLINK;
	child = fos_obj_alloc(obj->type);
	if (!child)
		return -ENOMEM;
	child->depth = obj->depth + 1;

	spin_lock_bh(&fos_tree_lock);
	if (!obj->deleg || obj->revoked) {
		spin_unlock_bh(&fos_tree_lock);
		kmem_cache_free(fos_obj_cache, child);
		fos_live_add(FOS_LIVE_OBJECTS, -1);
		return 0;
	}
	kref_get(&obj->ref);
	child->parent = obj;
	list_add_tail(&child->sibling, &obj->children);
	child->delegatee = true;
	obj->ndelegated++;
	spin_unlock_bh(&fos_tree_lock);

	cap->obj = child;	/* takes over the caller's reference... */
	fos_obj_put(obj);	/* ...which the child now holds itself */
	return 1;
}

/**
 * fos_obj_undelegate - take back a delegation that reached nobody
 * @cap: a capability fos_obj_delegate() returned 1 for, not yet visible
 *	to anyone else
 *
 * The operation that delegated @cap failed.  Its child stops counting as
 * a delegation.  Nothing was handed out, so nothing came back: the
 * parent's monitor_delegate stays armed, unless delegations that were
 * handed out ended while this one was pending (@deleg_owed) and it was the
 * last one left, when it fires as the last of those would have.  (If the
 * parent was revoked meanwhile, the child was revoked with it and already
 * stopped counting.)  The caller still drops its reference on the child.
 */
void fos_obj_undelegate(struct fos_cap *cap)
{
	struct fos_object *obj = cap->obj, *p = obj->parent;
	struct fos_dead dead;

	fos_dead_init(&dead);
	spin_lock_bh(&fos_tree_lock);
	if (obj->delegatee) {
		obj->delegatee = false;
		if (!--p->ndelegated && p->deleg_owed) {
			p->deleg_owed = false;
			if (p->deleg)
				fos_monitor_take_locked(p->deleg, &dead.fire);
		}
	}
	spin_unlock_bh(&fos_tree_lock);
	fos_dead_release(&dead);
}
