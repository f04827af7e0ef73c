// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: remote objects - contacts told of node loss ("Contacts" in
 * wire.h and, for users, "Node loss" under "Contacts" in the uAPI
 * header).  A space's node arms its contacts that are our Requests; we
 * invoke them if that node is declared down.
 */
#include <linux/list.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include "../fos.h"
#include "../request.h"
#include "../fabric.h"
#include "wire.h"
#include "pri.h"

/* The armings one node may keep here; more are ignored. */
#define FOS_ARMED_PER_NODE	1024

/**
 * struct fos_armed - a contact of another node's space that is our Request
 * @link: on fos_armed_list
 * @node: the space's node
 * @epoch: its epoch when it armed the contact: only its end fires it
 * @handle: the space's node's name for it
 * @id: the contact's id in its space
 * @req: the Request, with the view the space's capability has (a
 *	reference)
 */
struct fos_armed {
	struct list_head link;
	u32 node;
	u32 epoch;
	u64 handle;
	u32 id;
	struct fos_cap req;
};

/* Every arming; fos_armed_lock guards the list. */
static LIST_HEAD(fos_armed_list);
static DEFINE_SPINLOCK(fos_armed_lock);
/*
 * Handles of our own armings: our epoch in the high half, so that a
 * DISARM of this incarnation never names one of the last.
 */
static atomic_t fos_armed_handles = ATOMIC_INIT(0);

/**
 * struct fos_armed_batch - contacts of a lost node, to be told
 * @work: on fos_rpc_wq: an invocation may wait for a fabric credit
 *	(a Request forwarded to a third node), which fos_downs_work must not
 * @list: the struct fos_armed, taken off fos_armed_list
 * @node: the lost node
 */
struct fos_armed_batch {
	struct work_struct work;
	struct list_head list;
	u32 node;
};

static void fos_armed_free(struct fos_armed *a)
{
	fos_obj_put(a->req.obj);
	kfree(a);
	fos_live_add(FOS_LIVE_ARMED_CONTACTS, -1);
}

/* Free what is on @list (taken off fos_armed_list). */
static void fos_armed_free_list(struct list_head *list)
{
	struct fos_armed *a, *tmp;

	list_for_each_entry_safe(a, tmp, list, link) {
		list_del(&a->link);
		fos_armed_free(a);
	}
}

/**
 * fos_remote_contact_arm - have another node tell a contact of node loss
 * @req: the contact's Request (the space's capability)
 * @id: the contact's id in its space
 * @node: set to the node that keeps the arming
 *
 * Atomic context (under the space's contacts lock): ARM is queued on
 * fos_remote_wq, so that a DISARM queued later follows it.
 *
 * Return: the arming's handle, or 0 if @req is not another node's Request
 * itself (a proxy: a Request derived here from one carries arguments that
 * only this node adds) or the message could not be queued (the contact
 * is not told of node loss, as the uAPI header says it may not be).
 */
u64 fos_remote_contact_arm(const struct fos_cap *req, u32 id, u32 *node)
{
	struct fos_object *obj = req->obj;
	struct fos_wire_contact c = {};
	u64 handle;

	if (!obj->proxy)
		return 0;
	handle = (u64)fos_epoch << 32 |
		 (u32)atomic_inc_return(&fos_armed_handles);
	fos_wire_cap_name(&c.req, obj, req);
	c.handle = cpu_to_le64(handle);
	c.op = cpu_to_le32(FOS_CONTACT_ARM);
	c.id = cpu_to_le32(id);
	*node = obj->proxy->node;
	/* Bounded: a loop of ADD and DEL queues no more than that. */
	if (!fos_event_queue_msg(FOS_WIRE_CONTACT, *node, &c, sizeof(c), true,
				 GFP_ATOMIC | __GFP_ACCOUNT))
		return 0;
	return handle;
}

/**
 * fos_remote_contact_disarm - the arming @handle on @node ends
 * @node: the node fos_remote_contact_arm() said
 * @handle: what it returned
 *
 * Queued behind what was queued before: the space's own note, an INVOKE,
 * was sent already.  Best effort: a DISARM that cannot go leaves the
 * arming until the Request is revoked or this node is lost.
 */
void fos_remote_contact_disarm(u32 node, u64 handle)
{
	struct fos_wire_contact c = {
		.handle = cpu_to_le64(handle),
		.op = cpu_to_le32(FOS_CONTACT_DISARM),
	};

	might_sleep();
	fos_event_queue_msg(FOS_WIRE_CONTACT, node, &c, sizeof(c), false,
			    GFP_KERNEL_ACCOUNT);
}

/* ARM from @peer: keep @c's Request for the note, if it is ours. */
static void fos_armed_add(struct fos_peer *peer,
			  const struct fos_wire_contact *c)
{
	u32 node = fos_peer_node_id(peer), epoch = fos_peer_epoch(peer), n = 0;
	struct fos_view v = {
		.off = le64_to_cpu(c->req.off), .len = le64_to_cpu(c->req.len),
		.perms = le32_to_cpu(c->req.perms),
	};
	struct fos_armed *a, *b;
	struct fos_object *obj;

	/* Another node's object, or an epoch of ours that is gone. */
	if (le32_to_cpu(c->req.node) != fos_node_id ||
	    le32_to_cpu(c->req.epoch) != fos_epoch)
		return;
	/* Quietly: an ARM queued before a session ended may come late. */
	obj = fos_export_get_held(le64_to_cpu(c->req.oid), node, epoch, &v);
	if (!obj)
		return;
	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (!a) {
		fos_obj_put(obj);
		return;
	}
	a->node = node;
	a->epoch = epoch;
	a->handle = le64_to_cpu(c->handle);
	a->id = le32_to_cpu(c->id);
	a->req.obj = obj;
	a->req.off = v.off;
	a->req.len = v.len;
	a->req.perms = v.perms;
	if (obj->type != FRACTOS_OBJ_REQUEST) {
		fos_obj_put(obj);
		kfree(a);
		return;
	}
	fos_live_add(FOS_LIVE_ARMED_CONTACTS, 1);
	spin_lock(&fos_armed_lock);
	list_for_each_entry(b, &fos_armed_list, link)
		if (b->node == node)
			n++;
	/*
	 * A revocation that scanned the list before it had @a would leave
	 * @a: one after it has @a.  Checked under the lock, as the scan.
	 */
	if (n < FOS_ARMED_PER_NODE && !fos_obj_revoked(obj)) {
		list_add_tail(&a->link, &fos_armed_list);
		a = NULL;
	}
	spin_unlock(&fos_armed_lock);
	if (a)
		fos_armed_free(a);
}

/* DISARM from @node (@epoch): the arming @handle ends. */
static void fos_armed_del(u32 node, u32 epoch, u64 handle)
{
	struct fos_armed *a, *found = NULL;

	spin_lock(&fos_armed_lock);
	list_for_each_entry(a, &fos_armed_list, link) {
		if (a->node == node && a->epoch == epoch &&
		    a->handle == handle) {
			list_del(&a->link);
			found = a;
			break;
		}
	}
	spin_unlock(&fos_armed_lock);
	if (found)
		fos_armed_free(found);
}

void fos_contact_recv(struct fos_peer *peer, const struct fos_rx_info *rx,
		      const void *payload, u32 len)
{
	const struct fos_wire_contact *c = payload;

	if (le32_to_cpu(c->op) == FOS_CONTACT_ARM)
		fos_armed_add(peer, c);
	else
		fos_armed_del(fos_peer_node_id(peer), fos_peer_epoch(peer),
			      le64_to_cpu(c->handle));
}

/* A note's outcome, as the space's own notes are counted. */
static void fos_armed_answered(struct fos_invoke_done *done, int result)
{
	fos_total_add(result ? FOS_TOTAL_CONTACT_NOTES_LOST :
			       FOS_TOTAL_CONTACT_NOTES, 1);
	kfree(done);
}

/* Invoke each contact of a batch once with a NODE_LOST note; free them. */
static void fos_armed_batch_fn(struct work_struct *work)
{
	struct fos_armed_batch *b = container_of(work, struct fos_armed_batch,
						 work);
	struct fos_armed *a;

	list_for_each_entry(a, &b->list, link) {
		struct fractos_contact_note n = {
			.reason = FRACTOS_CONTACT_NODE_LOST,
			.id = a->id,
			.node = b->node,
		};
		struct fos_invoke_done *d = kzalloc(sizeof(*d), GFP_KERNEL);
		int ret = -ENOMEM;

		if (d) {
			d->fn = fos_armed_answered;
			ret = fos_invoke_k(&a->req, &n, sizeof(n), NULL, 0, d);
		}
		if (ret != -EINPROGRESS)	/* else @d is answered later */
			fos_armed_answered(d, ret);
		cond_resched();
	}
	fos_armed_free_list(&b->list);
	kfree(b);
}

/**
 * fos_armed_node_lost - a node (epoch) is down: tell its spaces' contacts
 * @node: the node
 * @epoch: the epoch that ended, 0 for every one (the node was deleted)
 *
 * Takes the contacts armed by that node off the list; each is invoked
 * once, with a note saying FRACTOS_CONTACT_NODE_LOST, from a work item of
 * their own, and its arming dropped.  Process context (fos_downs_work),
 * before the node's imports are dropped.
 */
void fos_armed_node_lost(u32 node, u32 epoch)
{
	struct fos_armed_batch *b;
	struct fos_armed *a, *tmp;
	LIST_HEAD(lost);

	might_sleep();
	if (list_empty_careful(&fos_armed_list))
		return;
	spin_lock(&fos_armed_lock);
	list_for_each_entry_safe(a, tmp, &fos_armed_list, link) {
		if (a->node == node && (!epoch || a->epoch == epoch))
			list_move_tail(&a->link, &lost);
	}
	spin_unlock(&fos_armed_lock);
	if (list_empty(&lost))
		return;
	/* Small, and a node's loss is not lost: as fos_remote_node_down(). */
	b = kzalloc(sizeof(*b), GFP_KERNEL | __GFP_NOFAIL);
	INIT_WORK(&b->work, fos_armed_batch_fn);
	INIT_LIST_HEAD(&b->list);
	list_splice(&lost, &b->list);
	b->node = node;
	queue_work(fos_rpc_wq, &b->work);
}

/* Objects were revoked: drop the armings of those that were Requests. */
void fos_armed_end_revoked(void)
{
	struct fos_armed *a, *tmp;
	LIST_HEAD(gone);

	/* Every object's end comes here: nothing to do, mostly. */
	if (list_empty_careful(&fos_armed_list))
		return;
	spin_lock(&fos_armed_lock);
	list_for_each_entry_safe(a, tmp, &fos_armed_list, link) {
		if (fos_obj_revoked(a->req.obj))
			list_move_tail(&a->link, &gone);
	}
	spin_unlock(&fos_armed_lock);
	fos_armed_free_list(&gone);
}

/*
 * Module unload, after the fabric deleted every peer (which told what was
 * armed): whatever is left goes.
 */
void fos_armed_drop_all(void)
{
	LIST_HEAD(all);

	spin_lock(&fos_armed_lock);
	list_splice_init(&fos_armed_list, &all);
	spin_unlock(&fos_armed_lock);
	fos_armed_free_list(&all);
}
