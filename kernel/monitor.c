// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: capability monitors (monitor_receive, monitor_delegate).
 *
 * A registration hangs off the watched object under fos_tree_lock.
 * Revocation and freeing (object.c) move it to a struct fos_dead list; it
 * is fired or dropped here once the lock is released.
 */
#include <linux/slab.h>
#include <linux/spinlock.h>
#include "fos.h"

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
	m->ep = s->ep;
	kref_get(&m->ep->ref);
	m->cookie = cookie;
	m->type = type;
	m->msg = msg;
	return m;
}

static void fos_monitor_free(struct fos_monitor *m)
{
	/* Never freed while an object or a fos_dead list can reach it. */
	WARN_ON_ONCE(!list_empty(&m->link));
	fos_ep_put(m->ep);
	kfree(m);
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

	spin_lock(&fos_tree_lock);
	fire_now = cap.obj->revoked;
	if (!fire_now)
		list_add_tail(&m->link, &cap.obj->monitors);
	spin_unlock(&fos_tree_lock);
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

	spin_lock(&fos_tree_lock);
	if (cap.obj->revoked)
		ret = -EKEYREVOKED;
	else if (cap.obj->owner != s)
		ret = -EPERM;
	else if (cap.obj->deleg)
		ret = -EBUSY;
	else
		cap.obj->deleg = m;
	spin_unlock(&fos_tree_lock);
	if (ret)
		fos_monitor_drop(m);
out:
	fos_obj_put(cap.obj);
	return ret;
}
