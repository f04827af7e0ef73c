// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: capability monitors (monitor_receive, monitor_delegate).
 *
 * A registration hangs off the watched object under fos_tree_lock, and is
 * listed on the receive queue it delivers to while it does (armed).
 * Revocation and freeing (object.c) take it off to a struct fos_dead list;
 * it is fired or dropped here once the lock is released.  A space that goes
 * away cancels the registrations it still has armed on other objects.
 */
#include <linux/lockdep.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include "fos.h"
#include "monitor.h"
#include "ops.h"
#include "queue.h"

static struct fos_monitor *fos_monitor_alloc(struct fos_space *s, u32 type,
					     u64 cookie)
{
	struct fos_monitor *m;
	struct fos_msg *msg;

	if (atomic_inc_return(&s->ep->nmonitors) > READ_ONCE(fos_max_caps)) {
		atomic_dec(&s->ep->nmonitors);
		return ERR_PTR(-ENOSPC);
	}
	/* From here on the event holds the slot. */
	msg = fos_ep_event_alloc(s->ep, type, cookie);
	if (!msg) {
		atomic_dec(&s->ep->nmonitors);
		return ERR_PTR(-ENOMEM);
	}
	m = kzalloc(sizeof(*m), GFP_KERNEL_ACCOUNT);
	if (!m) {
		fos_ep_event_free(msg);
		return ERR_PTR(-ENOMEM);
	}
	INIT_LIST_HEAD(&m->link);
	INIT_LIST_HEAD(&m->ep_link);
	m->ep = s->ep;
	kref_get(&m->ep->ref);
	m->cookie = cookie;
	m->type = type;
	m->msg = msg;
	fos_live_add(FOS_LIVE_MONITORS, 1);
	return m;
}

static void fos_monitor_free(struct fos_monitor *m)
{
	/* Never freed while an object, a queue or a fos_dead list has it. */
	WARN_ON_ONCE(!list_empty(&m->link) || !list_empty(&m->ep_link) ||
		     m->obj);
	fos_ep_put(m->ep);
	kfree(m);
	fos_live_add(FOS_LIVE_MONITORS, -1);
}

/* Put @m on @obj and on its queue's list of armed registrations. */
static void fos_monitor_arm_locked(struct fos_object *obj,
				   struct fos_monitor *m)
{
	lockdep_assert_held(&fos_tree_lock);
	m->obj = obj;
	list_add_tail(&m->ep_link, &m->ep->regs);
	if (m->type == FRACTOS_MSG_MONITOR_DELEGATE)
		obj->deleg = m;
	else
		list_add_tail(&m->link, &obj->monitors);
}

/**
 * fos_monitor_take_locked - disarm a registration
 * @m: an armed registration: its object's deleg, or on its monitors list
 * @to: a struct fos_dead list, or a local one, that @m moves to
 *
 * Caller holds fos_tree_lock.
 */
void fos_monitor_take_locked(struct fos_monitor *m, struct list_head *to)
{
	struct fos_object *obj = m->obj;

	lockdep_assert_held(&fos_tree_lock);
	if (obj->deleg == m)
		obj->deleg = NULL;
	m->obj = NULL;
	list_del_init(&m->ep_link);
	list_move_tail(&m->link, to);
}

/* Disarm @obj's monitor_receive registrations.  Holds fos_tree_lock. */
void fos_monitors_take_receive_locked(struct fos_object *obj,
				      struct list_head *to)
{
	struct fos_monitor *m, *tmp;

	lockdep_assert_held(&fos_tree_lock);
	list_for_each_entry_safe(m, tmp, &obj->monitors, link)
		fos_monitor_take_locked(m, to);
}

/* Disarm every registration of @obj.  Caller holds fos_tree_lock. */
void fos_monitors_take_locked(struct fos_object *obj, struct list_head *to)
{
	lockdep_assert_held(&fos_tree_lock);
	fos_monitors_take_receive_locked(obj, to);
	if (obj->deleg)
		fos_monitor_take_locked(obj->deleg, to);
}

/**
 * fos_monitors_cancel - drop the registrations still armed for @ep
 * @ep: the receive queue of a space being released, not yet closed
 *
 * Their events would go nowhere; left armed, they would stay allocated
 * (with @ep) as long as the objects of other spaces they watch.  Works in
 * batches, dropping fos_tree_lock in between.  May sleep.
 */
void fos_monitors_cancel(struct fos_ep *ep)
{
	struct fos_monitor *m, *tmp;
	unsigned int n;
	LIST_HEAD(drop);

	might_sleep();
	do {
		spin_lock_bh(&fos_tree_lock);
		for (n = 0; n < 256; n++) {
			m = list_first_entry_or_null(&ep->regs,
						     struct fos_monitor,
						     ep_link);
			if (!m)
				break;
			fos_monitor_take_locked(m, &drop);
		}
		spin_unlock_bh(&fos_tree_lock);
		list_for_each_entry_safe(m, tmp, &drop, link) {
			list_del_init(&m->link);
			fos_monitor_drop(m);
		}
		cond_resched();
	} while (n);
}

/* Free a registration without telling anyone. */
void fos_monitor_drop(struct fos_monitor *m)
{
	fos_ep_event_free(m->msg);
	fos_monitor_free(m);
}

/*
 * Deliver the event and free the registration.  The event keeps the
 * registration's slot in nmonitors until it is received.
 */
void fos_monitor_fire(struct fos_monitor *m)
{
	fos_ep_post_event(m->msg);
	fos_monitor_free(m);
}

static int fos_monitor_args(struct fos_space *s, struct fos_call *c,
			    struct fos_cap *cap)
{
	struct fractos_monitor *a = &c->args.monitor;

	if (a->flags || !fos_mem_is_zero(a->reserved, sizeof(a->reserved)))
		return -EINVAL;
	return fos_cap_get(s, a->cid, cap);
}

int fos_op_monitor_receive(struct fos_space *s, struct fos_call *c)
{
	struct fos_monitor *m;
	struct fos_cap cap;
	bool fire_now;
	int ret;

	ret = fos_monitor_args(s, c, &cap);
	if (ret)
		return ret;
	m = fos_monitor_alloc(s, FRACTOS_MSG_MONITOR_RECEIVE,
			      c->args.monitor.cookie);
	if (IS_ERR(m)) {
		ret = PTR_ERR(m);
		goto out;
	}

	spin_lock_bh(&fos_tree_lock);
	fire_now = cap.obj->revoked;
	if (!fire_now)
		fos_monitor_arm_locked(cap.obj, m);
	spin_unlock_bh(&fos_tree_lock);
	if (fire_now)
		fos_monitor_fire(m);
out:
	fos_obj_put(cap.obj);
	return ret;
}

int fos_op_monitor_delegate(struct fos_space *s, struct fos_call *c)
{
	struct fos_monitor *m;
	struct fos_cap cap;
	int ret;

	ret = fos_monitor_args(s, c, &cap);
	if (ret)
		return ret;
	m = fos_monitor_alloc(s, FRACTOS_MSG_MONITOR_DELEGATE,
			      c->args.monitor.cookie);
	if (IS_ERR(m)) {
		ret = PTR_ERR(m);
		goto out;
	}

	spin_lock_bh(&fos_tree_lock);
	if (cap.obj->revoked)
		ret = -EKEYREVOKED;
	else if (cap.obj->owner != s)
		ret = -EPERM;
	else if (cap.obj->deleg)
		ret = -EBUSY;
	else
		fos_monitor_arm_locked(cap.obj, m);
	spin_unlock_bh(&fos_tree_lock);
	if (ret)
		fos_monitor_drop(m);
out:
	fos_obj_put(cap.obj);
	return ret;
}
