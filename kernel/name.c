// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: the per-node name service.
 *
 * A name maps to one capability (a view of an object with rights).  The
 * space that created the object publishes it; any space may look it up if
 * the name is visible to it (same effective uid as the publisher, or
 * FRACTOS_NAME_WORLD); the lookup installs a copy of the capability.
 *
 * Lifetime: a published name holds a reference on its capability's object
 * and sits on two lists: the global hash table (fos_names, under
 * fos_names_lock) and the object's names list (under fos_tree_lock).
 * Revocation moves the object's names onto a struct fos_dead list under
 * fos_tree_lock; fos_name_release() then unhashes and frees them.  An
 * unpublish that finds its name still on the object's list unlinks and
 * frees it itself; one that finds it already taken by a revocation only
 * unhashes it and leaves the freeing to fos_name_release().  So exactly
 * one path frees each name: whoever took it off the object's list.
 *
 * Lock order: fos_names_lock (a mutex) before fos_tree_lock.
 */
#include <linux/cred.h>
#include <linux/hashtable.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/stringhash.h>
#include <linux/uaccess.h>
#include "fos.h"
#include "name.h"
#include "ops.h"

/**
 * struct fos_name - one published name
 * @hnode: link in fos_names, under fos_names_lock
 * @obj_link: link in @cap.obj's names list (under fos_tree_lock), or on a
 *	struct fos_dead list once revocation took it
 * @hashed: on fos_names, under fos_names_lock
 * @on_obj: on @cap.obj's names list, under fos_tree_lock
 * @cap: the published capability (holds a reference on its object)
 * @owner: the publishing space; compared, never dereferenced (the space
 *	cannot go away without revoking @cap.obj, which removes the name)
 * @uid: the publisher's effective uid
 * @flags: FRACTOS_NAME_WORLD or 0
 * @hash: full_name_hash() of @name
 * @len: bytes in @name
 * @name: the name, not NUL-terminated
 */
struct fos_name {
	struct hlist_node hnode;
	struct list_head obj_link;
	bool hashed;
	bool on_obj;
	struct fos_cap cap;
	const struct fos_space *owner;
	kuid_t uid;
	u32 flags;
	u32 hash;
	u32 len;
	char name[];
};

static DEFINE_MUTEX(fos_names_lock);
/* Published names by hash, under fos_names_lock. */
static DEFINE_HASHTABLE(fos_names, 10);
/* Entries in fos_names, under fos_names_lock. */
static unsigned int fos_nnames;

/* Is @name (@len bytes) a valid name: 1..FRACTOS_NAME_MAX in 0x21..0x7e? */
static bool fos_name_valid(const char *name, u32 len)
{
	u32 i;

	if (!len || len > FRACTOS_NAME_MAX)
		return false;
	for (i = 0; i < len; i++)
		if (name[i] < 0x21 || name[i] > 0x7e)
			return false;
	return true;
}

/* Copy in and check a name: 1..FRACTOS_NAME_MAX bytes in 0x21..0x7e. */
static char *fos_name_copy(const struct fractos_name *a)
{
	char *buf;

	if (!a->name_len || a->name_len > FRACTOS_NAME_MAX)
		return ERR_PTR(-EINVAL);
	buf = memdup_user(u64_to_user_ptr(a->name), a->name_len);
	if (IS_ERR(buf))
		return buf;
	if (!fos_name_valid(buf, a->name_len)) {
		kfree(buf);
		return ERR_PTR(-EINVAL);
	}
	return buf;
}

static u32 fos_name_hash(const char *name, u32 len)
{
	return full_name_hash(NULL, name, len);
}

/* Caller holds fos_names_lock. */
static struct fos_name *fos_name_find(const char *name, u32 len, u32 hash)
{
	struct fos_name *n;

	lockdep_assert_held(&fos_names_lock);
	hash_for_each_possible(fos_names, n, hnode, hash)
		if (n->hash == hash && n->len == len &&
		    !memcmp(n->name, name, len))
			return n;
	return NULL;
}

/* Caller holds fos_names_lock. */
static void fos_name_unhash(struct fos_name *n)
{
	lockdep_assert_held(&fos_names_lock);
	if (!n->hashed)
		return;
	hash_del(&n->hnode);
	n->hashed = false;
	fos_nnames--;
	fos_live_add(FOS_LIVE_NAMES, -1);
}

static void fos_name_free(struct fos_name *n)
{
	fos_obj_put(n->cap.obj);
	kfree(n);
}

/**
 * fos_name_release - free names that revocation took from their objects
 * @list: struct fos_name entries linked by obj_link
 *
 * May sleep.
 */
void fos_name_release(struct list_head *list)
{
	struct fos_name *n, *tmp;

	might_sleep();
	if (list_empty(list))
		return;
	mutex_lock(&fos_names_lock);
	list_for_each_entry(n, list, obj_link)
		fos_name_unhash(n);
	mutex_unlock(&fos_names_lock);
	list_for_each_entry_safe(n, tmp, list, obj_link) {
		list_del(&n->obj_link);
		fos_name_free(n);
	}
}

static int fos_name_args_bad(const struct fractos_name *a, u32 flags_ok)
{
	if (a->flags & ~flags_ok)
		return -EINVAL;
	if (!(a->flags & FRACTOS_NAME_NODE) && a->node)
		return -EINVAL;
	if (!fos_mem_is_zero(a->reserved, sizeof(a->reserved)))
		return -EINVAL;
	return 0;
}

/**
 * fos_name_add - publish a capability of an object @owner created
 * @owner: the publishing space (a user's or a kernel provider's)
 * @cap: the capability; the name service takes its own reference
 * @name: the name (not NUL-terminated)
 * @len: bytes at @name
 * @uid: who may look it up (besides everyone with FRACTOS_NAME_WORLD)
 * @flags: FRACTOS_NAME_WORLD or 0
 *
 * Return: 0, -EINVAL (a bad name), -EKEYREVOKED, -EPERM (not @owner's
 * object), -EEXIST, -ENOSPC (max_names), -ENOMEM, -EMLINK.
 */
int fos_name_add(const struct fos_space *owner, const struct fos_cap *cap,
		 const char *name, u32 len, kuid_t uid, u32 flags)
{
	struct fos_name *n;
	int ret, delegated;

	if (!fos_name_valid(name, len))
		return -EINVAL;
	n = kzalloc(struct_size(n, name, len), GFP_KERNEL_ACCOUNT);
	if (!n)
		return -ENOMEM;
	memcpy(n->name, name, len);
	n->len = len;
	n->hash = fos_name_hash(name, n->len);
	n->flags = flags;
	n->uid = uid;
	n->owner = owner;
	INIT_LIST_HEAD(&n->obj_link);
	n->cap = *cap;
	fos_obj_get(n->cap.obj);

	if (fos_obj_revoked(n->cap.obj)) {
		ret = -EKEYREVOKED;
		goto out_put;
	}
	if (!fos_obj_owned_by(n->cap.obj, owner)) {
		ret = -EPERM;
		goto out_put;
	}
	/* The name service holds a copy: that is a delegation. */
	delegated = fos_obj_delegate(&n->cap);
	if (delegated < 0) {
		ret = delegated;
		goto out_put;
	}

	ret = 0;
	mutex_lock(&fos_names_lock);
	if (fos_name_find(n->name, n->len, n->hash)) {
		ret = -EEXIST;
	} else if (fos_nnames >= READ_ONCE(fos_max_names)) {
		ret = -ENOSPC;
	} else {
		spin_lock_bh(&fos_tree_lock);
		if (n->cap.obj->revoked) {
			ret = -EKEYREVOKED;
		} else {
			list_add_tail(&n->obj_link, &n->cap.obj->names);
			n->on_obj = true;
		}
		spin_unlock_bh(&fos_tree_lock);
	}
	if (!ret) {
		hash_add(fos_names, &n->hnode, n->hash);
		n->hashed = true;
		fos_nnames++;
		fos_live_add(FOS_LIVE_NAMES, 1);
	}
	mutex_unlock(&fos_names_lock);
	if (!ret)
		return 0;

	if (delegated)
		fos_obj_undelegate(&n->cap);
out_put:
	fos_obj_put(n->cap.obj);
	kfree(n);
	return ret;
}

int fos_op_name_publish(struct fos_space *s, struct fos_call *c)
{
	struct fractos_name *a = &c->args.name;
	struct fos_cap cap;
	char *name;
	int ret;

	ret = fos_name_args_bad(a, FRACTOS_NAME_WORLD);
	if (ret)
		return ret;
	name = fos_name_copy(a);
	if (IS_ERR(name))
		return PTR_ERR(name);
	ret = fos_cap_get(s, a->cid, &cap);
	if (!ret) {
		ret = fos_name_add(s, &cap, name, a->name_len, current_euid(),
				   a->flags);
		fos_obj_put(cap.obj);
	}
	kfree(name);
	return ret;
}

/**
 * fos_name_get - look a name up for a given uid
 * @name: the name (checked by the caller)
 * @len: its length
 * @uid: the asker's effective uid; INVALID_UID: world-visible names only
 * @out: the published capability, with a reference the caller drops
 *
 * Return: 0 or -ENOENT (no such name, not visible to @uid, or revoked).
 */
int fos_name_get(const char *name, u32 len, kuid_t uid, struct fos_cap *out)
{
	struct fos_name *n;
	int ret = -ENOENT;

	mutex_lock(&fos_names_lock);
	n = fos_name_find(name, len, fos_name_hash(name, len));
	if (n && ((n->flags & FRACTOS_NAME_WORLD) ||
		  (uid_valid(uid) && uid_eq(n->uid, uid))) &&
	    !fos_obj_revoked(n->cap.obj)) {
		*out = n->cap;
		fos_obj_get(out->obj);
		ret = 0;
	}
	mutex_unlock(&fos_names_lock);
	return ret;
}

int fos_op_name_lookup(struct fos_space *s, struct fos_call *c)
{
	struct fractos_name *a = &c->args.name;
	struct fos_cap cap = {};
	char *name;
	int ret;

	ret = fos_name_args_bad(a, FRACTOS_NAME_NODE);
	if (ret)
		return ret;
	name = fos_name_copy(a);
	if (IS_ERR(name))
		return PTR_ERR(name);
	/*
	 * Another node's name service answers over the fabric; not inline
	 * in io_uring (-EAGAIN: a worker asks).
	 */
	if ((a->flags & FRACTOS_NAME_NODE) && a->node != fos_node_id)
		ret = c->nowait ? -EAGAIN :
		      fos_remote()->lookup(a->node, name, a->name_len, &cap);
	else
		ret = fos_name_get(name, a->name_len, current_euid(), &cap);
	kfree(name);
	if (ret)
		return ret;

	ret = fos_cap_install(s, &cap, &a->cid);
	if (!ret)
		fos_call_new_cid(c, a->cid, &cap);
	fos_obj_put(cap.obj);
	return ret;
}

/**
 * fos_name_remove - unpublish a name @owner published
 * @owner: the space that published it
 * @name: the name
 * @len: bytes at @name
 *
 * Return: 0, -ENOENT or -EPERM (another space's name).
 */
int fos_name_remove(const struct fos_space *owner, const char *name, u32 len)
{
	struct fos_name *n;
	bool free_it = false;
	int ret = 0;

	mutex_lock(&fos_names_lock);
	n = fos_name_find(name, len, fos_name_hash(name, len));
	if (!n) {
		ret = -ENOENT;
	} else if (n->owner != owner) {
		ret = -EPERM;
	} else {
		fos_name_unhash(n);
		spin_lock_bh(&fos_tree_lock);
		if (n->on_obj) {
			list_del_init(&n->obj_link);
			n->on_obj = false;
			free_it = true;
		}
		spin_unlock_bh(&fos_tree_lock);
	}
	mutex_unlock(&fos_names_lock);
	if (free_it)
		fos_name_free(n);
	return ret;
}

int fos_op_name_unpublish(struct fos_space *s, struct fos_call *c)
{
	struct fractos_name *a = &c->args.name;
	char *name;
	int ret;

	ret = fos_name_args_bad(a, 0);
	if (ret)
		return ret;
	name = fos_name_copy(a);
	if (IS_ERR(name))
		return PTR_ERR(name);
	ret = fos_name_remove(s, name, a->name_len);
	kfree(name);
	return ret;
}

/*
 * Revocation of @obj: move its names to @dead.  Caller holds fos_tree_lock.
 */
void fos_name_revoke_locked(struct fos_object *obj, struct fos_dead *dead)
{
	struct fos_name *n;

	lockdep_assert_held(&fos_tree_lock);
	list_for_each_entry(n, &obj->names, obj_link)
		n->on_obj = false;
	list_splice_tail_init(&obj->names, &dead->names);
}
