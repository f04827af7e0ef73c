// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: capability spaces and the capability operations.
 */
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/sched/user.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include "fos.h"
#include "memory.h"
#include "monitor.h"
#include "ops.h"
#include "queue.h"

static struct kmem_cache *fos_cap_cache;

int fos_space_init(void)
{
	fos_cap_cache = KMEM_CACHE(fos_cap, SLAB_ACCOUNT);
	return fos_cap_cache ? 0 : -ENOMEM;
}

void fos_space_exit(void)
{
	kmem_cache_destroy(fos_cap_cache);
}

/**
 * fos_cap_get - copy the capability at @cid and take a reference on its
 *	object
 * @s: the space
 * @cid: the capability id
 * @out: filled in; the caller drops @out->obj with fos_obj_put()
 *
 * Return: 0 or -EBADF.
 */
int fos_cap_get(struct fos_space *s, u32 cid, struct fos_cap *out)
{
	struct fos_cap *c;
	int ret = -EBADF;

	xa_lock(&s->caps);
	c = xa_load(&s->caps, cid);
	if (c) {
		*out = *c;
		fos_obj_get(out->obj);
		ret = 0;
	}
	xa_unlock(&s->caps);
	return ret;
}

/**
 * fos_cap_install - add a copy of @tmpl to @s at the lowest free cid
 * @s: the space
 * @tmpl: the capability; a new reference on @tmpl->obj is taken
 * @cid: out, the new cid
 *
 * Return: 0, -ENOMEM, or -EMFILE when the space holds max_caps capabilities.
 */
int fos_cap_install(struct fos_space *s, const struct fos_cap *tmpl, u32 *cid)
{
	unsigned int max = READ_ONCE(fos_max_caps);
	struct fos_cap *c;
	int ret;

	if (!max)
		return -EMFILE;
	c = kmem_cache_alloc(fos_cap_cache, GFP_KERNEL_ACCOUNT);
	if (!c)
		return -ENOMEM;
	*c = *tmpl;
	fos_obj_get(c->obj);

	ret = xa_alloc(&s->caps, cid, c, XA_LIMIT(0, max - 1),
		       GFP_KERNEL_ACCOUNT);
	if (ret) {
		fos_obj_put(c->obj);
		kmem_cache_free(fos_cap_cache, c);
		return ret == -EBUSY ? -EMFILE : ret;
	}
	atomic_inc(&s->ncaps);
	fos_live_add(FOS_LIVE_CAPS, 1);
	return 0;
}

/**
 * fos_cap_reserve - keep a cid for a capability that may be installed later
 * @s: the space
 * @slot: out, the cid and the memory of its capability
 *
 * The cid is taken but holds nothing (EBADF to any use) until
 * fos_cap_fill(), which cannot fail; fos_cap_unreserve() gives it back.
 *
 * Return: 0, -ENOMEM, or -EMFILE when the space holds max_caps capabilities.
 */
int fos_cap_reserve(struct fos_space *s, struct fos_cap_slot *slot)
{
	unsigned int max = READ_ONCE(fos_max_caps);
	int ret;

	if (!max)
		return -EMFILE;
	slot->c = kmem_cache_alloc(fos_cap_cache, GFP_KERNEL_ACCOUNT);
	if (!slot->c)
		return -ENOMEM;
	ret = xa_alloc(&s->caps, &slot->cid, NULL, XA_LIMIT(0, max - 1),
		       GFP_KERNEL_ACCOUNT);
	if (ret) {
		kmem_cache_free(fos_cap_cache, slot->c);
		return ret == -EBUSY ? -EMFILE : ret;
	}
	return 0;
}

/*
 * Install a copy of @tmpl (a new reference) at the reserved cid.  Nothing
 * else can have taken it: xa_alloc() skips a reserved entry, and
 * fos_cap_close() does not erase one.
 */
void fos_cap_fill(struct fos_space *s, struct fos_cap_slot *slot,
		  const struct fos_cap *tmpl)
{
	void *old;

	*slot->c = *tmpl;
	fos_obj_get(slot->c->obj);
	/*
	 * A reserved entry is allocated already: this cannot fail.  What it
	 * replaced reads as NULL, or as the zero entry where the kernel's
	 * xa_store() does not convert it.
	 */
	old = xa_store(&s->caps, slot->cid, slot->c, GFP_KERNEL);
	WARN_ON_ONCE(old && !xa_is_zero(old));
	atomic_inc(&s->ncaps);
	fos_live_add(FOS_LIVE_CAPS, 1);
}

/* Give a reserved cid back unused. */
void fos_cap_unreserve(struct fos_space *s, struct fos_cap_slot *slot)
{
	xa_release(&s->caps, slot->cid);
	kmem_cache_free(fos_cap_cache, slot->c);
}

static void fos_cap_free(struct fos_cap *c)
{
	fos_obj_put(c->obj);
	kmem_cache_free(fos_cap_cache, c);
	fos_live_add(FOS_LIVE_CAPS, -1);
}

/**
 * fos_cap_close - drop the capability at @cid without revoking its object
 * @s: the space
 * @cid: the capability id
 *
 * A cid reserved for an operation still under way (fos_cap_reserve())
 * holds nothing yet: EBADF, and the reservation stays, so that no other
 * install takes the cid before fos_cap_fill().
 *
 * Return: 0 or -EBADF.
 */
int fos_cap_close(struct fos_space *s, u32 cid)
{
	struct fos_cap *c;

	xa_lock(&s->caps);
	c = xa_load(&s->caps, cid);	/* NULL for a reserved entry */
	if (c)
		__xa_erase(&s->caps, cid);
	xa_unlock(&s->caps);
	if (!c)
		return -EBADF;
	atomic_dec(&s->ncaps);
	fos_cap_free(c);
	return 0;
}

/**
 * fos_cap_close_if - undo an install: close @cid if it still holds @want
 * @s: the space
 * @cid: the cid an operation installed @want at
 * @want: the capability it installed (compared: object, view, rights)
 *
 * The cid was visible to the space's other threads from the moment it was
 * installed: one may have closed it, and a later install reused it.  The
 * operation that fails afterwards must not close that other capability.
 *
 * Return: 0, or -EBADF if @cid holds something else (or nothing) now.
 */
int fos_cap_close_if(struct fos_space *s, u32 cid, const struct fos_cap *want)
{
	struct fos_cap *c;

	xa_lock(&s->caps);
	c = xa_load(&s->caps, cid);
	if (c && c->obj == want->obj && c->off == want->off &&
	    c->len == want->len && c->perms == want->perms)
		__xa_erase(&s->caps, cid);
	else
		c = NULL;
	xa_unlock(&s->caps);
	if (!c)
		return -EBADF;
	atomic_dec(&s->ncaps);
	fos_cap_free(c);
	return 0;
}

static int fos_space_open(struct inode *inode, struct file *file)
{
	struct fos_space *s;

	s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
	if (!s)
		return -ENOMEM;
	s->ep = fos_ep_create(true);
	if (!s->ep) {
		kfree(s);
		return -ENOMEM;
	}
	xa_init_flags(&s->caps, XA_FLAGS_ALLOC);
	INIT_LIST_HEAD(&s->owned);
	fos_contacts_init(s);
	s->user = get_current_user();
	s->memlock = fos_memlock_limit();
	file->private_data = s;
	fos_live_add(FOS_LIVE_SPACES, 1);
	return nonseekable_open(inode, file);
}

static int fos_space_release(struct inode *inode, struct file *file)
{
	struct fos_space *s = file->private_data;
	struct fos_cap *c;
	unsigned long cid;

	/*
	 * First the contacts, while our objects still stand: their notes are
	 * queued before the events of the monitors on those objects.
	 */
	fos_contacts_fire(s);
	/*
	 * Then take every resource away from the objects we created (our
	 * Requests included, so nobody can queue more), drop what is queued...
	 */
	fos_space_revoke_owned(s);
	fos_monitors_cancel(s->ep);
	fos_ep_close(s->ep);

	/* ...then drop our capabilities. Nobody else can reach @s now. */
	xa_for_each(&s->caps, cid, c) {
		fos_cap_free(c);
		cond_resched();
	}
	xa_destroy(&s->caps);
	free_uid(s->user);
	kfree(s);
	fos_live_add(FOS_LIVE_SPACES, -1);
	return 0;
}

static __poll_t fos_space_poll(struct file *file,
			       struct poll_table_struct *wait)
{
	struct fos_space *s = file->private_data;

	return fos_ep_poll(s->ep, file, wait);
}

static void fos_space_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct fos_space *s = file->private_data;

	seq_printf(m, "fractos-node:\t%u\n", fos_node_id);
	seq_printf(m, "fractos-epoch:\t%u\n", fos_epoch);
	seq_printf(m, "fractos-caps:\t%d\n", atomic_read(&s->ncaps));
	fos_contacts_show(s, m);
}

const struct file_operations fos_space_fops = {
	.owner		= THIS_MODULE,
	.open		= fos_space_open,
	.release	= fos_space_release,
	.poll		= fos_space_poll,
	.unlocked_ioctl	= fos_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.uring_cmd	= fos_uring_cmd,
	.show_fdinfo	= fos_space_show_fdinfo,
};

/* Operations on the space itself and on single capabilities. */

static bool fos_cap_arg_bad(const struct fractos_cap_arg *a)
{
	return a->flags || a->__pad ||
	       !fos_mem_is_zero(a->reserved, sizeof(a->reserved));
}

int fos_op_space_info(struct fos_space *s, struct fos_call *c)
{
	struct fractos_space_info *a = &c->args.space_info;

	if (a->flags || a->__pad ||
	    !fos_mem_is_zero(a->reserved, sizeof(a->reserved)))
		return -EINVAL;
	a->abi_version = FRACTOS_ABI_VERSION;
	a->node = fos_node_id;
	a->epoch = fos_epoch;
	a->max_caps = READ_ONCE(fos_max_caps);
	a->ncaps = atomic_read(&s->ncaps);
	return 0;
}

int fos_op_cap_revoke(struct fos_space *s, struct fos_call *c)
{
	struct fractos_cap_arg *a = &c->args.cap;
	struct fos_cap cap;
	int ret;

	if (fos_cap_arg_bad(a))
		return -EINVAL;
	ret = fos_cap_get(s, a->cid, &cap);
	if (ret)
		return ret;
	/*
	 * A proxy: the owner revokes the object it stands for, which waits
	 * for it (io_uring inline issue: -EAGAIN, a worker does it).
	 */
	if (cap.obj->proxy) {
		ret = c->nowait ? -EAGAIN : fos_remote()->revoke(cap.obj);
	} else if (c->nowait && fos_remote()->grants_out()) {
		/* Its keys may have to be waited for: a worker does it. */
		ret = -EAGAIN;
	} else {
		ret = fos_obj_revoke(cap.obj);
		/* No peer can read it any more when we return. */
		if (!ret)
			fos_remote()->grants_sync();
	}
	fos_obj_put(cap.obj);
	return ret;
}

int fos_op_cap_create_revtree(struct fos_space *s, struct fos_call *c)
{
	struct fractos_cap_arg *a = &c->args.cap;
	struct fos_object *child;
	struct fos_cap cap;
	int ret;

	if (fos_cap_arg_bad(a))
		return -EINVAL;
	ret = fos_cap_get(s, a->cid, &cap);
	if (ret)
		return ret;
	child = fos_obj_create_child(cap.obj, s, NULL);
	fos_obj_put(cap.obj);
	if (IS_ERR(child))
		return PTR_ERR(child);

	/* Same view and rights, new individually revocable object. */
	cap.obj = child;
	ret = fos_cap_install(s, &cap, &a->new_cid);
	if (ret)
		fos_obj_revoke(child);
	else
		fos_call_new_cid(c, a->new_cid, &cap);
	fos_obj_put(child);
	return ret;
}

int fos_op_cap_close(struct fos_space *s, struct fos_call *c)
{
	struct fractos_cap_arg *a = &c->args.cap;

	if (fos_cap_arg_bad(a))
		return -EINVAL;
	return fos_cap_close(s, a->cid);
}

int fos_op_cap_dup(struct fos_space *s, struct fos_call *c)
{
	struct fractos_cap_arg *a = &c->args.cap;
	struct fos_cap cap;
	int ret;

	if (fos_cap_arg_bad(a))
		return -EINVAL;
	ret = fos_cap_get(s, a->cid, &cap);
	if (ret)
		return ret;
	ret = fos_cap_install(s, &cap, &a->new_cid);
	if (!ret)
		fos_call_new_cid(c, a->new_cid, &cap);
	fos_obj_put(cap.obj);
	return ret;
}

int fos_op_cap_info(struct fos_space *s, struct fos_call *c)
{
	struct fractos_cap_info *a = &c->args.cap_info;
	struct fos_cap cap;
	int ret;

	if (a->flags || !fos_mem_is_zero(a->reserved, sizeof(a->reserved)))
		return -EINVAL;
	ret = fos_cap_get(s, a->cid, &cap);
	if (ret)
		return ret;

	a->type = cap.obj->type;
	a->perms = cap.perms;
	a->offset = cap.off;
	a->len = cap.len;
	fos_obj_oid(cap.obj, &a->oid);
	a->depth = cap.obj->depth;
	a->info_flags = 0;
	if (cap.obj->proxy)
		a->info_flags |= FRACTOS_INFO_REMOTE;
	if (fos_obj_revoked(cap.obj))
		a->info_flags |= FRACTOS_INFO_REVOKED;
	if (cap.obj->parent)
		a->info_flags |= FRACTOS_INFO_REVTREE;
	if (fos_obj_owned_by(cap.obj, s))
		a->info_flags |= FRACTOS_INFO_OWNED;
	fos_obj_put(cap.obj);
	return 0;
}
