// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: remote objects - the events deferred to fos_remote_wq (REVOKE
 * notices, DROP, GRANT_END, RELEASE, and messages queued whole: CONTACT),
 * sent in order, and the node-down queue (see "Node death" in remote.c).
 */
#include <linux/completion.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include "../fos.h"
#include "../fabric.h"
#include "wire.h"
#include "pri.h"

/*
 * Taken with bottom halves off: a GRANT_REPLY handled in the receive
 * completion's softirq queues a RELEASE ("Receiving in softirq" in
 * fabric/rx.c).
 */
static DEFINE_SPINLOCK(fos_events_lock);
/* Under fos_events_lock: events for fos_events_work, in order. */
LIST_HEAD(fos_events);
/*
 * Under fos_events_lock: DOWN events, for fos_downs_work.  Kept apart so
 * that a node's death never waits behind sends (which may wait seconds
 * for a credit), and never lost: see fos_remote_node_down().
 */
static LIST_HEAD(fos_downs);
struct workqueue_struct *fos_remote_wq;
static void fos_events_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(fos_events_dwork, fos_events_fn);
static void fos_downs_fn(struct work_struct *work);
DECLARE_WORK(fos_downs_work, fos_downs_fn);

/**
 * DOC: Lazy DROPs
 *
 * A DROP answers nothing and nobody waits for it: it only lets its owner
 * forget an export.  So a DROP that finds the events worker idle starts
 * it a tick later (FOS_DROP_DELAY), and the DROPs a node queues in that
 * time go to each owner in one message (fos_event_drops(); a storage
 * node ending a read lets go of the client's Memory and continuation one
 * after the other, and the worker would otherwise run between the two).
 * Any other event starts the worker at once, and the DROPs queued before
 * it go first.  From fos_remote_exit() on, DROPs start it at once too.
 */
#define FOS_DROP_DELAY	1	/* jiffies */
static bool fos_events_lazy = true;

static void fos_event_add(struct fos_event *ev)
{
	spin_lock_bh(&fos_events_lock);
	list_add_tail(&ev->link, &fos_events);
	spin_unlock_bh(&fos_events_lock);
	if (ev->kind == FOS_EV_DROP && READ_ONCE(fos_events_lazy))
		queue_delayed_work(fos_remote_wq, &fos_events_dwork,
				   FOS_DROP_DELAY);	/* if not pending */
	else
		mod_delayed_work(fos_remote_wq, &fos_events_dwork, 0);
}

/* Module exit: events start the worker at once; run what is queued. */
void fos_events_flush(void)
{
	WRITE_ONCE(fos_events_lazy, false);
	flush_delayed_work(&fos_events_dwork);
}

/* Queue @ev (allocated with @gfp if NULL; best effort, as the notices). */
static void fos_event_queue_ev(struct fos_event *ev, u8 kind, u8 type,
			       u32 node, u32 epoch, u64 oid, gfp_t gfp)
{
	if (!ev)
		ev = kzalloc(sizeof(*ev), gfp);
	if (!ev)
		return;
	ev->kind = kind;
	ev->type = type;
	ev->node = node;
	ev->epoch = epoch;
	ev->oid = oid;
	fos_event_add(ev);
}

void fos_event_queue(u8 kind, u8 type, u32 node, u32 epoch, u64 oid,
		     gfp_t gfp)
{
	fos_event_queue_ev(NULL, kind, type, node, epoch, oid, gfp);
}

/* Messages queued whole (FOS_EV_SEND) and not sent yet. */
static atomic_t fos_sends_queued = ATOMIC_INIT(0);

/**
 * fos_event_queue_msg - queue a message to send, behind the events before
 * @type: its type
 * @node: its receiver
 * @payload: @len bytes, copied
 * @len: payload length
 * @bounded: fail if FOS_SENDS_QUEUED_MAX are queued already, for what a
 *	user may queue in a loop (a DISARM, which must go, is not bounded:
 *	there is one per bounded ARM)
 * @gfp: for the event
 *
 * Return: false if it was not queued.
 */
bool fos_event_queue_msg(u8 type, u32 node, const void *payload, u32 len,
			 bool bounded, gfp_t gfp)
{
	struct fos_event *ev;

	if (atomic_inc_return(&fos_sends_queued) > FOS_SENDS_QUEUED_MAX &&
	    bounded) {
		atomic_dec(&fos_sends_queued);
		return false;
	}
	ev = kzalloc(struct_size(ev, payload, len), gfp);
	if (!ev) {
		atomic_dec(&fos_sends_queued);
		return false;
	}
	ev->kind = FOS_EV_SEND;
	ev->type = type;
	ev->node = node;
	ev->len = len;
	memcpy(ev->payload, payload, len);
	fos_event_add(ev);
	return true;
}

/*
 * Tell @owner that @count descriptions of its object (@epoch, @oid) held
 * by @holder ended, with @ev if preallocated.  Best effort: a DROP that
 * cannot go leaves the export referenced until its owner revokes it or
 * we go away.
 */
void fos_drop_queue(struct fos_event *ev, u32 owner, u32 epoch,
		    u64 oid, u32 holder, u64 count)
{
	if (!ev)
		ev = kzalloc(sizeof(*ev), GFP_KERNEL);
	if (!ev)
		return;
	ev->holder = holder;
	ev->count = count;
	fos_event_queue_ev(ev, FOS_EV_DROP, 0, owner, epoch, oid, GFP_KERNEL);
}

/**
 * fos_remote_node_down - a node, or one epoch of it, is gone
 * @node: its id
 * @epoch: the epoch that died, or 0 for every epoch (node deleted)
 *
 * Called by the fabric in process context, under no lock.  Calls waiting
 * on the node fail now; its proxies are revoked and its imports and
 * grants dropped from fos_downs_work, which nothing else queues behind.
 * The event cannot be lost: its allocation does not fail.
 */
void fos_remote_node_down(u32 node, u32 epoch)
{
	struct fos_event *ev;

	might_sleep();
	fos_rpcs_fail_node(node);
	/* Small: __GFP_NOFAIL is for exactly this (fault injection too). */
	ev = kzalloc(sizeof(*ev), GFP_KERNEL | __GFP_NOFAIL);
	ev->kind = FOS_EV_DOWN;
	ev->node = node;
	ev->epoch = epoch;
	spin_lock_bh(&fos_events_lock);
	list_add_tail(&ev->link, &fos_downs);
	spin_unlock_bh(&fos_events_lock);
	queue_work(system_unbound_wq, &fos_downs_work);
}

/* The oldest event on @queue (fos_events or fos_downs), or NULL. */
static struct fos_event *fos_event_pop(struct list_head *queue)
{
	struct fos_event *ev;

	spin_lock_bh(&fos_events_lock);
	ev = list_first_entry_or_null(queue, struct fos_event, link);
	if (ev)
		list_del(&ev->link);
	spin_unlock_bh(&fos_events_lock);
	return ev;
}

static void fos_downs_fn(struct work_struct *work)
{
	struct fos_event *ev;

	while ((ev = fos_event_pop(&fos_downs))) {
		/* While the contacts' exports to the node still stand. */
		fos_armed_node_lost(ev->node, ev->epoch);
		fos_proxies_revoke_node(ev->node, ev->epoch);
		/* Looped puts of before it went down, before its exports go. */
		if (ev->node == fos_node_id)
			fos_looped_puts_flush();
		fos_exports_drop_node(ev->node, ev->epoch);
		fos_grants_drop_node(ev->node, ev->epoch);
		fos_kept_drop_node(ev->node, ev->epoch);
		kfree(ev);
		cond_resched();
	}
}

/*
 * Send a deferred event's message.  Best effort: a lost REVOKE is a known
 * race (the next use gets EKEYREVOKED), a lost GRANT_END is covered by the
 * grant's timer, a lost DROP keeps the export until it is revoked.
 */
static void fos_event_send(u32 node, u8 type, const void *payload, u32 len)
{
	struct fos_peer *peer = fos_peer_find(node);

	if (!peer)
		return;
	fos_fabric_send(peer, type, 0, payload, len, NULL, FOS_SEND_WAIT);
	fos_peer_put(peer);
}

static void fos_drop_fill(struct fos_wire_drop *d, const struct fos_event *ev)
{
	d->oid = cpu_to_le64(ev->oid);
	d->epoch = cpu_to_le32(ev->epoch);
	d->node = cpu_to_le32(ev->holder);
	d->count = cpu_to_le64(ev->count);
}

/*
 * DROP @ev, with the DROPs for the same owner queued right behind it: up
 * to FOS_WIRE_DROP_MAX records in one message (wire version 16).  Only
 * DROPs are passed over (they are to other owners, which are told apart),
 * so that nothing else to @ev's owner goes out before what was queued
 * before it.
 */
static void fos_event_drops(const struct fos_event *ev)
{
	struct fos_wire_drop d[FOS_WIRE_DROP_MAX];
	struct fos_event *next, *tmp;
	unsigned int n = 1;

	fos_drop_fill(&d[0], ev);
	spin_lock_bh(&fos_events_lock);
	list_for_each_entry_safe(next, tmp, &fos_events, link) {
		if (next->kind != FOS_EV_DROP || n == ARRAY_SIZE(d))
			break;
		if (next->node != ev->node)
			continue;
		list_del(&next->link);
		fos_drop_fill(&d[n++], next);
		kfree(next);
	}
	spin_unlock_bh(&fos_events_lock);
	fos_event_send(ev->node, FOS_WIRE_DROP, d, n * sizeof(d[0]));
}

static void fos_event_run(const struct fos_event *ev)
{
	union {
		struct fos_wire_obj o;
		struct fos_wire_grant_end e;
		struct fos_wire_release r;
	} p = {};

	switch (ev->kind) {
	case FOS_EV_DROP:
		fos_event_drops(ev);
		break;
	case FOS_EV_GRANT_END:
		p.e.pull = cpu_to_le64(ev->oid);
		p.e.id = cpu_to_le64(ev->epoch);
		fos_event_send(ev->node, FOS_WIRE_GRANT_END, &p.e, sizeof(p.e));
		fos_grant_end_sent(ev->epoch, ev->node);
		break;
	case FOS_EV_RELEASE:
		p.r.id = cpu_to_le64(ev->oid);
		fos_event_send(ev->node, FOS_WIRE_RELEASE, &p.r, sizeof(p.r));
		break;
	case FOS_EV_SEND:
		fos_event_send(ev->node, ev->type, ev->payload, ev->len);
		atomic_dec(&fos_sends_queued);
		break;
	default:
		p.o.oid = cpu_to_le64(ev->oid);
		p.o.epoch = cpu_to_le32(ev->epoch);
		fos_event_send(ev->node, ev->type, &p.o, sizeof(p.o));
	}
}

static void fos_events_fn(struct work_struct *work)
{
	struct fos_event *ev;

	while ((ev = fos_event_pop(&fos_events))) {
		fos_event_run(ev);
		kfree(ev);
		cond_resched();
	}
}
