// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: puts from softirq (an INVOKE delivered there, fabric/rx.c).
 *
 * A reference that is not the last one is dropped at once; the last one
 * is handed, still held, to a work item that drops it in process context,
 * where freeing may sleep.  fos_object.reap and fos_contents.dead are free
 * while a reference is held (the reaper, object.c, links them only at
 * zero, and revocation links contents only while their holder's
 * reference is counted), so they carry the object or the contents on the
 * way.  fos_put_later_lock: a leaf, taken with BH off.
 */
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include "fos.h"

static DEFINE_SPINLOCK(fos_put_later_lock);
static LIST_HEAD(fos_put_later_objs);
static LIST_HEAD(fos_put_later_contents);

static void fos_put_later_fn(struct work_struct *work)
{
	for (;;) {
		struct fos_contents *c;
		struct fos_object *obj;

		spin_lock_bh(&fos_put_later_lock);
		c = list_first_entry_or_null(&fos_put_later_contents,
					     struct fos_contents, dead);
		if (c)
			list_del_init(&c->dead);
		obj = list_first_entry_or_null(&fos_put_later_objs,
					       struct fos_object, reap);
		if (obj)
			list_del(&obj->reap);
		spin_unlock_bh(&fos_put_later_lock);
		if (!c && !obj)
			return;
		if (c)
			fos_contents_put(c);
		if (obj)
			fos_obj_put(obj);
		cond_resched();
	}
}

static DECLARE_WORK(fos_put_later_work, fos_put_later_fn);

/* Drop @ref unless it is the last; that one goes on @list by @link. */
static void fos_put_later(struct kref *ref, struct list_head *link,
			  struct list_head *list)
{
	if (refcount_dec_not_one(&ref->refcount))
		return;
	spin_lock_bh(&fos_put_later_lock);
	list_add_tail(link, list);
	spin_unlock_bh(&fos_put_later_lock);
	schedule_work(&fos_put_later_work);
}

/**
 * fos_obj_put_atomic - fos_obj_put() for contexts that may not sleep
 * @obj: the object; its last reference is dropped later, by a work item
 */
void fos_obj_put_atomic(struct fos_object *obj)
{
	fos_put_later(&obj->ref, &obj->reap, &fos_put_later_objs);
}

/**
 * fos_contents_put_atomic - fos_contents_put() for contexts that may not
 *	sleep
 * @c: the contents; the last reference is dropped later, by a work item
 */
void fos_contents_put_atomic(struct fos_contents *c)
{
	fos_put_later(&c->ref, &c->dead, &fos_put_later_contents);
}

/**
 * fos_obj_put_flush - drop the last references put from softirq
 *
 * At module exit, once nothing can put from softirq any more (the fabric
 * is down), before the remote layer frees what those objects reference.
 */
void fos_obj_put_flush(void)
{
	flush_work(&fos_put_later_work);
}
