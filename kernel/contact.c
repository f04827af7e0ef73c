// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: a space's contacts ("Contacts" in the uAPI header): Requests
 * invoked once, with a note, when the space goes away without having
 * removed them, and the Memory each may steal when the space's process
 * is killed.
 *
 * A contact is a capability the space handed to the kernel: a copy of its
 * Request capability, with a reference of its own on the object, and up
 * to FRACTOS_MAX_STEAL copies of Memory capabilities the space marked for
 * it.  The contacts live in an xarray of the space; its lock also guards
 * each contact's marks.  SPACE_CONTACT adds and removes contacts and
 * marks, and the space's release fires what is left, when no operation
 * can run on the space any more.
 */
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/xarray.h>
#include "fos.h"
#include "name.h"
#include "ops.h"
#include "provider.h"
#include "request.h"

/**
 * struct fos_contact - one contact of a space
 * @req: the contact's Request (one reference held)
 * @node: with @handle, the node that keeps it armed for node loss
 * @handle: the arming (fos_remote_ops.contact_arm()), 0 if none; set
 *	under the space's contacts lock as the contact goes in, then
 *	immutable
 * @nsteal: entries used in @steal, under the space's contacts lock
 * @steal: Memory marked for this contact (one reference each), under the
 *	space's contacts lock; taken by the space's release only
 */
struct fos_contact {
	struct fos_kcap req;
	u32 node;
	u64 handle;
	u32 nsteal;
	struct fos_kcap steal[FRACTOS_MAX_STEAL];
};

void fos_contacts_init(struct fos_space *s)
{
	xa_init_flags(&s->contacts, XA_FLAGS_ALLOC1);
}

static void fos_contact_free(struct fos_contact *ct)
{
	u32 i;

	might_sleep();
	/* After the space's own note, if any: the same queue, in order. */
	if (ct->handle)
		fos_remote()->contact_disarm(ct->node, ct->handle);
	for (i = 0; i < ct->nsteal; i++)
		fos_obj_put(ct->steal[i].cap.obj);
	fos_obj_put(ct->req.cap.obj);
	kfree(ct);
	fos_live_add(FOS_LIVE_CONTACTS, -1);
}

/*
 * Put @ct in the space's contacts, at a new id, and arm it for node loss
 * under the xarray's lock: another thread of the space may DEL the id as
 * soon as the lock is dropped, and its disarm must follow the arm.
 */
static int fos_contact_insert(struct fos_space *s, struct fos_contact *ct,
			      u32 *id)
{
	int ret;

	xa_lock(&s->contacts);
	/* May drop the lock to allocate, never once @ct is stored. */
	ret = __xa_alloc(&s->contacts, id, ct,
			 XA_LIMIT(1, FRACTOS_MAX_CONTACTS), GFP_KERNEL_ACCOUNT);
	if (!ret)
		ct->handle = fos_remote()->contact_arm(&ct->req.cap, *id,
						       &ct->node);
	xa_unlock(&s->contacts);
	return ret;
}

static int fos_contact_add(struct fos_space *s, struct fos_call *c)
{
	struct fractos_space_contact *a = &c->args.space_contact;
	struct fos_contact *ct;
	u32 id;
	int ret;

	if (a->id)
		return -EINVAL;
	ct = kzalloc(sizeof(*ct), GFP_KERNEL_ACCOUNT);
	if (!ct)
		return -ENOMEM;
	ret = fos_cap_get(s, a->cid, &ct->req.cap);
	if (ret) {
		kfree(ct);
		return ret;
	}
	if (ct->req.cap.obj->type != FRACTOS_OBJ_REQUEST)
		ret = -EOPNOTSUPP;
	else if (fos_obj_revoked(ct->req.cap.obj))
		ret = -EKEYREVOKED;
	else
		ret = fos_contact_insert(s, ct, &id);
	if (ret) {
		fos_obj_put(ct->req.cap.obj);
		kfree(ct);
		/* xa_alloc(): -EBUSY when every id is taken */
		return ret == -EBUSY ? -ENOSPC : ret;
	}
	fos_live_add(FOS_LIVE_CONTACTS, 1);
	a->id = id;
	c->new_contact = id;
	c->new_contact_ptr = ct;
	return 0;
}

/*
 * The id of a contact just added could not be written back: remove it,
 * unless another thread of the space removed it already (and maybe added
 * another at that id meanwhile).
 */
void fos_contact_undo(struct fos_space *s, u32 id, const void *ptr)
{
	struct fos_contact *ct;

	ct = xa_cmpxchg(&s->contacts, id, (void *)ptr, NULL, GFP_KERNEL);
	if (ct == ptr)
		fos_contact_free(ct);
}

static int fos_contact_del(struct fos_space *s,
			   const struct fractos_space_contact *a)
{
	struct fos_contact *ct;

	if (a->cid)
		return -EINVAL;
	ct = xa_erase(&s->contacts, a->id);
	if (!ct)
		return -ENOENT;
	fos_contact_free(ct);
	return 0;
}

/* The mark of @obj in @ct, or -1.  Under the space's contacts lock. */
static int fos_contact_find_mark(const struct fos_contact *ct,
				 const struct fos_object *obj)
{
	u32 i;

	for (i = 0; i < ct->nsteal; i++)
		if (ct->steal[i].cap.obj == obj)
			return i;
	return -1;
}

/*
 * STEAL: mark a Memory object the space created as the contact's to take
 * if the space's process is killed.  Only a root (no revocation-tree
 * parent) can be marked, so that no other object of the dying space
 * takes it down with it; one contact at most has it.
 */
static int fos_contact_steal(struct fos_space *s,
			     const struct fractos_space_contact *a)
{
	struct fos_contact *ct, *other;
	struct fos_cap cap;
	unsigned long id;
	int ret;

	ret = fos_cap_get(s, a->cid, &cap);
	if (ret)
		return ret;
	ret = fos_obj_own_memory_root(cap.obj, s);
	if (ret)
		goto out;

	xa_lock(&s->contacts);
	ct = xa_load(&s->contacts, a->id);
	if (!ct) {
		ret = -ENOENT;
		goto unlock;
	}
	xa_for_each(&s->contacts, id, other) {
		if (fos_contact_find_mark(other, cap.obj) >= 0) {
			ret = -EBUSY;
			goto unlock;
		}
	}
	if (ct->nsteal == FRACTOS_MAX_STEAL) {
		ret = -ENOSPC;
		goto unlock;
	}
	/* The mark keeps the reference fos_cap_get() took. */
	ct->steal[ct->nsteal++].cap = cap;
	cap.obj = NULL;
unlock:
	xa_unlock(&s->contacts);
out:
	if (cap.obj)
		fos_obj_put(cap.obj);
	return ret;
}

/* UNSTEAL: take a mark back; the Memory dies with the space again. */
static int fos_contact_unsteal(struct fos_space *s,
			       const struct fractos_space_contact *a)
{
	struct fos_object *marked = NULL;
	struct fos_contact *ct;
	struct fos_cap cap;
	int ret, i;

	ret = fos_cap_get(s, a->cid, &cap);
	if (ret)
		return ret;
	xa_lock(&s->contacts);
	ct = xa_load(&s->contacts, a->id);
	i = ct ? fos_contact_find_mark(ct, cap.obj) : -1;
	if (i >= 0) {
		marked = ct->steal[i].cap.obj;
		ct->steal[i] = ct->steal[--ct->nsteal];
	}
	xa_unlock(&s->contacts);
	fos_obj_put(cap.obj);
	if (!marked)
		return -ENOENT;
	fos_obj_put(marked);
	return 0;
}

int fos_op_space_contact(struct fos_space *s, struct fos_call *c)
{
	struct fractos_space_contact *a = &c->args.space_contact;

	if (a->flags || !fos_mem_is_zero(a->reserved, sizeof(a->reserved)))
		return -EINVAL;
	switch (a->op) {
	case FRACTOS_CONTACT_ADD:
		return fos_contact_add(s, c);
	case FRACTOS_CONTACT_DEL:
		return fos_contact_del(s, a);
	case FRACTOS_CONTACT_STEAL:
		return fos_contact_steal(s, a);
	case FRACTOS_CONTACT_UNSTEAL:
		return fos_contact_unsteal(s, a);
	default:
		return -EINVAL;
	}
}

/* How the space went: by the hand of the task releasing its last fd. */
static void fos_contact_reason(struct fractos_contact_note *n)
{
	/*
	 * An exiting task drops its files after do_exit() set exit_code:
	 * the signal that ended it in the low 7 bits (0x80 is the core
	 * dump), or exit()'s status shifted left by 8.  Any other context
	 * (close(), exec(), the delayed fput of a kernel thread) is a close.
	 */
	if ((current->flags & PF_EXITING) && (current->exit_code & 0x7f)) {
		n->reason = FRACTOS_CONTACT_KILLED;
		n->signal = current->exit_code & 0x7f;
	} else {
		n->reason = FRACTOS_CONTACT_CLOSED;
	}
}

/**
 * struct fos_contact_done - a note on its way, and what it carries
 * @core: the answer's callback (fos_contact_answered())
 * @n: entries in @stolen
 * @stolen: the Memory objects the note hands over (one reference each)
 */
struct fos_contact_done {
	struct fos_invoke_done core;
	u32 n;
	struct fos_object *stolen[FRACTOS_MAX_STEAL];
};

/*
 * A note's outcome, now or (from another node, on a workqueue) later:
 * counted; what it carried is revoked if it was not delivered, as it would
 * have been with the space.
 */
static void fos_contact_answered(struct fos_invoke_done *done, int result)
{
	struct fos_contact_done *d = container_of(done, struct fos_contact_done,
						  core);
	u32 i;

	might_sleep();
	fos_total_add(result ? FOS_TOTAL_CONTACT_NOTES_LOST :
			       FOS_TOTAL_CONTACT_NOTES, 1);
	if (!result)
		fos_total_add(FOS_TOTAL_STOLEN_MEMORIES, d->n);
	for (i = 0; i < d->n; i++) {
		if (result)
			fos_obj_revoke(d->stolen[i]);
		fos_obj_put(d->stolen[i]);
	}
	kfree(d);
}

/*
 * Hand the marks of @ct that still stand over: each Memory leaves @s's
 * owned list for the space that receives the contact's Request (it is
 * that space's to revoke now, and dies with it), or for no space when the
 * Request is another node's (it lives while a capability to it does).  The
 * names @s published on them go (their owner is gone).  Fills @kcaps with
 * what is handed over, and @d with a reference to each; returns how many.
 */
static u32 fos_contact_steal_take(struct fos_space *s, struct fos_contact *ct,
				  struct fos_kcap **kcaps,
				  struct fos_contact_done *d)
{
	struct fos_space *to;
	struct fos_dead dead;
	u32 i, n = 0;

	fos_dead_init(&dead);
	spin_lock_bh(&fos_tree_lock);
	to = fos_req_receiver_locked(ct->req.cap.obj);
	for (i = 0; i < ct->nsteal; i++) {
		struct fos_object *obj = ct->steal[i].cap.obj;

		if (obj->revoked || obj->owner != s)
			continue;
		fos_obj_move_owner_locked(obj, to);
		fos_name_revoke_locked(obj, &dead);
		fos_obj_get(obj);
		d->stolen[n] = obj;
		kcaps[n++] = &ct->steal[i];
	}
	spin_unlock_bh(&fos_tree_lock);
	fos_dead_release(&dead);
	d->n = n;
	return n;
}

static void fos_contact_notify(struct fos_space *s, struct fos_contact *ct,
			       struct fractos_contact_note *n)
{
	struct fos_kcap *kcaps[FRACTOS_MAX_STEAL];
	struct fos_contact_done *d;
	int ret;

	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d) {
		fos_total_add(FOS_TOTAL_CONTACT_NOTES_LOST, 1);
		return;
	}
	d->core.fn = fos_contact_answered;
	n->stolen = 0;
	if (n->reason == FRACTOS_CONTACT_KILLED)
		n->stolen = fos_contact_steal_take(s, ct, kcaps, d);
	ret = fos_invoke_k(&ct->req.cap, n, sizeof(*n), kcaps, n->stolen,
			   &d->core);
	if (ret != -EINPROGRESS)	/* else @d is fos_contact_answered()'s */
		fos_contact_answered(&d->core, ret);
}

/**
 * fos_contacts_fire - the space is going away: tell its contacts
 * @s: the space, in its release (no operation can run on it any more),
 *	before its owned objects are revoked
 *
 * Invokes every contact left once, with the note and, if the space's
 * process was killed, the Memory marked for it; then drops them.
 */
void fos_contacts_fire(struct fos_space *s)
{
	struct fractos_contact_note n = { .node = fos_node_id };
	struct fos_contact *ct;
	unsigned long id;

	might_sleep();
	if (xa_empty(&s->contacts))
		return;
	fos_contact_reason(&n);
	xa_for_each(&s->contacts, id, ct) {
		n.id = id;
		fos_contact_notify(s, ct, &n);
		xa_erase(&s->contacts, id);
		fos_contact_free(ct);
	}
	xa_destroy(&s->contacts);
}

/*
 * For fdinfo: the contacts a space has now and their marks, counted, then
 * one line each (at most FRACTOS_MAX_CONTACTS): its id, its Request's
 * cluster-wide name (as CAP_INFO gives it), whether another node keeps it
 * armed for node loss, the Memory marked for it, and whether the Request
 * was revoked since (a revoked contact is told nothing).  One pass under
 * the lock, so the lines agree with the counts.
 */
void fos_contacts_show(struct fos_space *s, struct seq_file *m)
{
	unsigned int contacts = 0, marks = 0;
	struct fractos_oid oid;
	struct fos_contact *ct;
	unsigned long id;

	xa_lock(&s->contacts);
	xa_for_each(&s->contacts, id, ct) {
		contacts++;
		marks += ct->nsteal;
	}
	seq_printf(m, "fractos-contacts:\t%u\n", contacts);
	seq_printf(m, "fractos-stealable:\t%u\n", marks);
	xa_for_each(&s->contacts, id, ct) {
		fos_obj_oid(ct->req.cap.obj, &oid);
		seq_printf(m, "fractos-contact:\t%lu %u:%u:%llu armed %d stealable %u revoked %d\n",
			   id, oid.node, oid.epoch, oid.id, ct->handle != 0,
			   ct->nsteal, fos_obj_revoked(ct->req.cap.obj));
	}
	xa_unlock(&s->contacts);
}
