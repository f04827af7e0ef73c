// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: a space's contacts ("Contacts" in the uAPI header): Requests
 * invoked once, with a note, when the space goes away without having
 * removed them.
 *
 * A contact is a capability the space handed to the kernel: a struct
 * fos_cap copied from its Request capability, with a reference of its own
 * on the object.  The contacts live in an xarray of the space (its own
 * lock): SPACE_CONTACT
 * adds and removes them, and the space's release fires what is left,
 * when no operation can run on the space any more.
 */
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/xarray.h>
#include "fos.h"
#include "ops.h"
#include "provider.h"
#include "request.h"

void fos_contacts_init(struct fos_space *s)
{
	xa_init_flags(&s->contacts, XA_FLAGS_ALLOC1);
}

static void fos_contact_free(struct fos_cap *ct)
{
	fos_obj_put(ct->obj);
	kfree(ct);
	fos_live_add(FOS_LIVE_CONTACTS, -1);
}

static int fos_contact_add(struct fos_space *s, struct fos_call *c)
{
	struct fractos_space_contact *a = &c->args.space_contact;
	struct fos_cap *ct;
	u32 id;
	int ret;

	if (a->id)
		return -EINVAL;
	ct = kzalloc(sizeof(*ct), GFP_KERNEL_ACCOUNT);
	if (!ct)
		return -ENOMEM;
	ret = fos_cap_get(s, a->cid, ct);
	if (ret) {
		kfree(ct);
		return ret;
	}
	if (ct->obj->type != FRACTOS_OBJ_REQUEST)
		ret = -EOPNOTSUPP;
	else if (fos_obj_revoked(ct->obj))
		ret = -EKEYREVOKED;
	else
		ret = xa_alloc(&s->contacts, &id, ct,
			       XA_LIMIT(1, FRACTOS_MAX_CONTACTS),
			       GFP_KERNEL_ACCOUNT);
	if (ret) {
		fos_obj_put(ct->obj);
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
	struct fos_cap *ct;

	ct = xa_cmpxchg(&s->contacts, id, (void *)ptr, NULL, GFP_KERNEL);
	if (ct == ptr)
		fos_contact_free(ct);
}

static int fos_contact_del(struct fos_space *s,
			   const struct fractos_space_contact *a)
{
	struct fos_cap *ct;

	if (a->cid)
		return -EINVAL;
	ct = xa_erase(&s->contacts, a->id);
	if (!ct)
		return -ENOENT;
	fos_contact_free(ct);
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

/* A note's outcome, now or (from another node) later: counted, then freed. */
static void fos_contact_answered(struct fos_invoke_done *done, int result)
{
	fos_total_add(result ? FOS_TOTAL_CONTACT_NOTES_LOST :
			       FOS_TOTAL_CONTACT_NOTES, 1);
	kfree(done);
}

static void fos_contact_notify(struct fos_cap *ct,
			       const struct fractos_contact_note *n)
{
	struct fos_invoke_done *done;
	int ret;

	done = kzalloc(sizeof(*done), GFP_KERNEL);
	if (!done) {
		fos_total_add(FOS_TOTAL_CONTACT_NOTES_LOST, 1);
		return;
	}
	done->fn = fos_contact_answered;
	ret = fos_invoke_k(ct, n, sizeof(*n), NULL, 0, done);
	if (ret != -EINPROGRESS)	/* else @done is fos_contact_answered()'s */
		fos_contact_answered(done, ret);
}

/**
 * fos_contacts_fire - the space is going away: tell its contacts
 * @s: the space, in its release (no operation can run on it any more)
 *
 * Invokes every contact left once, with the note, and drops them.
 */
void fos_contacts_fire(struct fos_space *s)
{
	struct fractos_contact_note n = { .node = fos_node_id };
	struct fos_cap *ct;
	unsigned long id;

	might_sleep();
	if (xa_empty(&s->contacts))
		return;
	fos_contact_reason(&n);
	xa_for_each(&s->contacts, id, ct) {
		n.id = id;
		fos_contact_notify(ct, &n);
		xa_erase(&s->contacts, id);
		fos_contact_free(ct);
	}
	xa_destroy(&s->contacts);
}

/* For fdinfo: the contacts a space has now. */
unsigned int fos_contacts_count(struct fos_space *s)
{
	struct fos_cap *ct;
	unsigned long id;
	unsigned int n = 0;

	xa_lock(&s->contacts);
	xa_for_each(&s->contacts, id, ct)
		n++;
	xa_unlock(&s->contacts);
	return n;
}
