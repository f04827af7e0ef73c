/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fractos: receive queues (queue.c) - a space's queue (struct fos_ep), the
 * messages on it (struct fos_msg: invocations and monitor events) and the
 * queue's API.  Their lifetimes are in "Receive queues, monitors and
 * events" (fos.h).
 */
#ifndef FRACTOS_QUEUE_H
#define FRACTOS_QUEUE_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>

struct file;
struct fos_cap;
struct fos_kmsg;

/**
 * struct fos_ep - a space's receive queue (the provider end of Requests)
 * @ref: one for the space, one per Request whose provider it is
 * @lock: protects @msgs, @len and @closed; taken with bottom halves off
 *	(an INVOKE delivered in the receive softirq takes it)
 * @recv_wq: receivers and poll() wait here for a message
 * @send_wq: invokers wait here for room (FRACTOS_INVOKE_WAIT)
 * @msgs: queued struct fos_msg, oldest first
 * @len: number of entries in @msgs, at most fos_max_queue
 * @closed: the space is gone; nothing is queued any more
 * @nmonitors: monitor registrations delivering here, counted until their
 *	event is received or dropped (bounded by max_caps)
 * @recv_mutex: serialises receivers, so that the head message stays queued
 *	while its capabilities are installed (which may sleep)
 * @regs: monitor registrations delivering here that are still armed (on
 *	their object), linked by fos_monitor.ep_link; under fos_tree_lock.
 *	A dying space cancels them (fos_monitors_cancel()): nobody would
 *	receive their events, and they would otherwise stay allocated, and
 *	keep this queue allocated, as long as the objects they watch.
 * @memcg: the memory cgroup of the task that made the queue (the space's
 *	opener), charged for the messages other nodes queue here (a
 *	reference; NULL without memcg, and for a kernel provider's queue)
 */
struct fos_ep {
	struct kref ref;
	spinlock_t lock;		/* see @lock above */
	wait_queue_head_t recv_wq;
	wait_queue_head_t send_wq;
	struct list_head msgs;
	unsigned int len;
	bool closed;
	atomic_t nmonitors;
	struct mutex recv_mutex;	/* see @recv_mutex above */
	struct list_head regs;
	struct mem_cgroup *memcg;
};

/**
 * struct fos_msg - one queued invocation
 * @link: in the receiver's fos_ep.msgs
 * @type: enum fractos_msg_type
 * @imm_len: bytes at @imm
 * @ncaps: entries at @caps, each holding an object reference
 * @tag: the Request's tag
 * @caps: capability arguments
 * @imm: immediate bytes
 * @ev_ep: monitor events only: the queue whose nmonitors slot the event
 *	holds until it is freed (no reference: the monitor that posts it
 *	holds one, and a queued event is freed before its queue)
 */
struct fos_msg {
	struct list_head link;
	u32 type;
	u32 imm_len;
	u32 ncaps;
	u64 tag;
	struct fos_cap *caps;
	u8 *imm;
	struct fos_ep *ev_ep;
};

struct fos_ep *fos_ep_create(bool charge);
void fos_ep_put(struct fos_ep *ep);
void fos_ep_close(struct fos_ep *ep);
struct fos_msg *fos_ep_event_alloc(struct fos_ep *ep, u32 type, u64 cookie);
void fos_ep_event_free(struct fos_msg *msg);
void fos_ep_post_event(struct fos_msg *msg);
__poll_t fos_ep_poll(struct fos_ep *ep, struct file *file,
		     struct poll_table_struct *wait);
struct fos_msg *fos_msg_alloc(u32 ncaps, u32 imm_len);
struct fos_msg *fos_msg_alloc_gfp(u32 ncaps, u32 imm_len, gfp_t gfp);
struct fos_msg *fos_ep_msg_alloc(struct fos_ep *ep, u32 ncaps, u32 imm_len,
				 gfp_t gfp);
void fos_msg_free(struct fos_msg *msg);
void fos_msg_free_atomic(struct fos_msg *msg);
int fos_ep_send(struct fos_ep *ep, struct fos_msg *msg, bool wait,
		bool nowait);
struct fos_msg *fos_ep_take(struct fos_ep *ep);
void fos_msg_kview(struct fos_msg *msg, struct fos_kmsg *km);

#endif /* FRACTOS_QUEUE_H */
