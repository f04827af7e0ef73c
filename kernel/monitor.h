/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fractos: capability monitors (monitor.c) - a monitor_receive or
 * monitor_delegate registration (struct fos_monitor), and how revocation,
 * freeing and a dying space take it off its object, then fire, drop or
 * cancel it.  Its lifetime is in "Receive queues, monitors and events"
 * (fos.h).
 */
#ifndef FRACTOS_MONITOR_H
#define FRACTOS_MONITOR_H

#include <linux/list.h>
#include <linux/types.h>

struct fos_ep;
struct fos_msg;
struct fos_object;

/**
 * struct fos_monitor - a monitor_receive or monitor_delegate registration
 * @link: on the object's monitors list, then on a struct fos_dead list;
 *	unlinked before the registration is fired or dropped (see "Receive
 *	queues, monitors and events" in fos.h)
 * @ep_link: on @ep's regs while armed; under fos_tree_lock
 * @obj: the watched object while armed (on its monitors list, or its deleg),
 *	NULL once taken off it; under fos_tree_lock
 * @ep: the receive queue the event goes to (holds a reference until the
 *	registration is freed, after its event is posted)
 * @cookie: delivered as the event's tag
 * @type: FRACTOS_MSG_MONITOR_RECEIVE or FRACTOS_MSG_MONITOR_DELEGATE
 * @msg: the event, preallocated so that firing cannot fail; it holds the
 *	registration's slot in @ep->nmonitors
 */
struct fos_monitor {
	struct list_head link;
	struct list_head ep_link;
	struct fos_object *obj;
	struct fos_ep *ep;
	u64 cookie;
	u32 type;
	struct fos_msg *msg;
};

void fos_monitor_fire(struct fos_monitor *m);
void fos_monitor_drop(struct fos_monitor *m);
void fos_monitor_take_locked(struct fos_monitor *m, struct list_head *to);
void fos_monitors_take_receive_locked(struct fos_object *obj,
				      struct list_head *to);
void fos_monitors_take_locked(struct fos_object *obj, struct list_head *to);
void fos_monitors_cancel(struct fos_ep *ep);

#endif /* FRACTOS_MONITOR_H */
