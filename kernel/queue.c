// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: the receive queue (struct fos_ep) and its messages.
 *
 * Invocations (request.c, kernel/remote/) and monitor events (monitor.c)
 * are queued here; a space takes them with REQUEST_RECEIVE, a kernel
 * provider (provider.c) with fos_ep_take().  See "Receive queues, monitors
 * and events" in fos.h for the lifetimes.
 */
#include <linux/jiffies.h>
#include <linux/memcontrol.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include "fos.h"
#include "ops.h"
#include "queue.h"
#include "provider.h"

/*
 * A receive queue; @charge: the messages other nodes queue here are
 * charged to the caller's memory cgroup (a space's opener; a kernel
 * provider's are the kernel's, whoever loaded the module).
 */
struct fos_ep *fos_ep_create(bool charge)
{
	struct fos_ep *ep = kzalloc(sizeof(*ep), GFP_KERNEL_ACCOUNT);

	if (!ep)
		return NULL;
	kref_init(&ep->ref);
	spin_lock_init(&ep->lock);
	init_waitqueue_head(&ep->recv_wq);
	init_waitqueue_head(&ep->send_wq);
	INIT_LIST_HEAD(&ep->msgs);
	INIT_LIST_HEAD(&ep->regs);
	mutex_init(&ep->recv_mutex);
	if (charge)
		ep->memcg = get_mem_cgroup_from_mm(current->mm);
	return ep;
}

static void fos_ep_release(struct kref *ref)
{
	struct fos_ep *ep = container_of(ref, struct fos_ep, ref);

	WARN_ON_ONCE(!list_empty(&ep->msgs));
	WARN_ON_ONCE(!list_empty(&ep->regs));	/* each holds a reference */
	mutex_destroy(&ep->recv_mutex);
	mem_cgroup_put(ep->memcg);
	kfree(ep);
}

void fos_ep_put(struct fos_ep *ep)
{
	kref_put(&ep->ref, fos_ep_release);
}

static void __fos_msg_free(struct fos_msg *msg, bool atomic)
{
	u32 i;

	for (i = 0; i < msg->ncaps; i++) {
		if (atomic)
			fos_obj_put_atomic(msg->caps[i].obj);
		else
			fos_obj_put(msg->caps[i].obj);
	}
	if (msg->ev_ep)
		atomic_dec(&msg->ev_ep->nmonitors);
	kfree(msg);
	fos_live_add(FOS_LIVE_MESSAGES, -1);
}

/* Free @msg and drop its capabilities' references; may sleep. */
void fos_msg_free(struct fos_msg *msg)
{
	__fos_msg_free(msg, false);
}

/* fos_msg_free() in a context that may not sleep (fos_obj_put_atomic()). */
void fos_msg_free_atomic(struct fos_msg *msg)
{
	__fos_msg_free(msg, true);
}

/**
 * fos_ep_close - the space owning @ep is gone
 * @ep: the receive queue; the space's reference is dropped
 *
 * Queued messages are dropped, invokers waiting for room are woken and
 * fail with -EKEYREVOKED, later invocations fail the same way.
 */
void fos_ep_close(struct fos_ep *ep)
{
	struct fos_msg *msg, *tmp;
	LIST_HEAD(msgs);

	spin_lock_bh(&ep->lock);
	ep->closed = true;
	list_splice_init(&ep->msgs, &msgs);
	ep->len = 0;
	spin_unlock_bh(&ep->lock);
	wake_up_all(&ep->send_wq);
	wake_up_all(&ep->recv_wq);

	list_for_each_entry_safe(msg, tmp, &msgs, link)
		fos_msg_free(msg);
	fos_ep_put(ep);
}

/**
 * fos_ep_event_alloc - preallocate a monitor registration's event
 * @ep: the receive queue the event will go to
 * @type: FRACTOS_MSG_MONITOR_*
 * @cookie: the registration's cookie
 *
 * The caller has taken a slot in @ep->nmonitors; the event holds it from
 * now on and gives it back when freed (received, dropped, or the queue
 * closed), so queued events stay bounded by max_caps per space.
 *
 * Return: the event, or NULL (the caller still holds the slot).
 */
struct fos_msg *fos_ep_event_alloc(struct fos_ep *ep, u32 type, u64 cookie)
{
	struct fos_msg *msg = kzalloc(sizeof(*msg), GFP_KERNEL_ACCOUNT);

	if (!msg)
		return NULL;
	/* Counted in FOS_LIVE_MESSAGES once posted. */
	msg->type = type;
	msg->tag = cookie;
	msg->ev_ep = ep;
	return msg;
}

/* Free an event that was never posted; gives its nmonitors slot back. */
void fos_ep_event_free(struct fos_msg *msg)
{
	atomic_dec(&msg->ev_ep->nmonitors);
	kfree(msg);
}

/**
 * fos_ep_post_event - queue a monitor event, ignoring the queue bound
 * @msg: from fos_ep_event_alloc(); taken over
 *
 * Events are bounded by the registrations (at most max_caps per space,
 * counting fired events until they are received), so they may pass
 * max_queue; they are lost only if the space is gone.  Cannot fail.
 */
void fos_ep_post_event(struct fos_msg *msg)
{
	struct fos_ep *ep = msg->ev_ep;

	fos_live_add(FOS_LIVE_MESSAGES, 1);
	spin_lock_bh(&ep->lock);
	if (ep->closed) {
		spin_unlock_bh(&ep->lock);
		fos_msg_free(msg);
		return;
	}
	list_add_tail(&msg->link, &ep->msgs);
	WRITE_ONCE(ep->len, ep->len + 1);
	spin_unlock_bh(&ep->lock);
	wake_up(&ep->recv_wq);
}

__poll_t fos_ep_poll(struct fos_ep *ep, struct file *file,
		     struct poll_table_struct *wait)
{
	poll_wait(file, &ep->recv_wq, wait);
	return READ_ONCE(ep->len) ? EPOLLIN | EPOLLRDNORM : 0;
}

/*
 * A message for @ncaps capabilities and @imm_len bytes, allocated with
 * @gfp: GFP_KERNEL_ACCOUNT, or GFP_NOWAIT in softirq.
 */
struct fos_msg *fos_msg_alloc_gfp(u32 ncaps, u32 imm_len, gfp_t gfp)
{
	struct fos_msg *msg;

	msg = kzalloc(sizeof(*msg) + ncaps * sizeof(struct fos_cap) + imm_len,
		      gfp);
	if (!msg)
		return NULL;
	msg->caps = (struct fos_cap *)(msg + 1);
	msg->imm = (u8 *)(msg->caps + ncaps);
	fos_live_add(FOS_LIVE_MESSAGES, 1);
	return msg;
}

/*
 * A message for @ep made on behalf of another node (fos_req_deliver()), in
 * a work item or in softirq: charged to @ep's memory cgroup, as a local
 * invoker's message is to the invoker's, not to no one.
 */
struct fos_msg *fos_ep_msg_alloc(struct fos_ep *ep, u32 ncaps, u32 imm_len,
				 gfp_t gfp)
{
	struct mem_cgroup *old = set_active_memcg(ep->memcg);
	struct fos_msg *msg;

	msg = fos_msg_alloc_gfp(ncaps, imm_len, gfp | __GFP_ACCOUNT);
	set_active_memcg(old);
	return msg;
}

struct fos_msg *fos_msg_alloc(u32 ncaps, u32 imm_len)
{
	return fos_msg_alloc_gfp(ncaps, imm_len, GFP_KERNEL_ACCOUNT);
}

/* Queue @msg on @ep; on failure the caller still owns @msg. */
int fos_ep_send(struct fos_ep *ep, struct fos_msg *msg, bool wait,
		bool nowait)
{
	unsigned int max = max(READ_ONCE(fos_max_queue), 1U);
	int ret;

	for (;;) {
		spin_lock_bh(&ep->lock);
		if (ep->closed) {
			ret = -EKEYREVOKED;
			break;
		}
		if (ep->len < max) {
			list_add_tail(&msg->link, &ep->msgs);
			WRITE_ONCE(ep->len, ep->len + 1);
			spin_unlock_bh(&ep->lock);
			wake_up(&ep->recv_wq);
			return 0;
		}
		ret = -EAGAIN;
		if (!wait || nowait)
			break;
		spin_unlock_bh(&ep->lock);
		/*
		 * EINTR when a handler ran, even with SA_RESTART (as
		 * documented); restarted transparently otherwise (stop and
		 * continue, task work).
		 */
		if (wait_event_interruptible(ep->send_wq,
					     READ_ONCE(ep->len) < max ||
					     READ_ONCE(ep->closed)))
			return -ERESTARTNOHAND;
	}
	spin_unlock_bh(&ep->lock);
	return ret;
}

/**
 * fos_ep_take - take the oldest message off a kernel provider's queue
 * @ep: the queue
 *
 * Return: the message (the caller frees it with fos_msg_free()), or NULL.
 */
struct fos_msg *fos_ep_take(struct fos_ep *ep)
{
	struct fos_msg *msg;

	spin_lock_bh(&ep->lock);
	msg = list_first_entry_or_null(&ep->msgs, struct fos_msg, link);
	if (msg) {
		list_del(&msg->link);
		WRITE_ONCE(ep->len, ep->len - 1);
	}
	spin_unlock_bh(&ep->lock);
	if (msg)
		wake_up(&ep->send_wq);
	return msg;
}

/* Lend @msg's contents to a kernel provider's receive callback. */
void fos_msg_kview(struct fos_msg *msg, struct fos_kmsg *km)
{
	u32 i;

	km->type = msg->type;
	km->tag = msg->tag;
	km->imm = msg->imm;
	km->imm_len = msg->imm_len;
	km->ncaps = msg->ncaps;
	for (i = 0; i < msg->ncaps; i++)
		km->caps[i] = container_of(&msg->caps[i], struct fos_kcap, cap);
}

/* What a receiver waits for, spinning or asleep: a message is queued. */
static bool fos_ep_ready(void *arg)
{
	struct fos_ep *ep = arg;

	return READ_ONCE(ep->len);
}

/*
 * Wait for a message and return the oldest one, still queued, with
 * ep->recv_mutex held.
 */
static struct fos_msg *fos_ep_peek(struct fos_ep *ep, u32 flags,
				   u64 timeout_ns, bool nowait)
{
	long left = MAX_SCHEDULE_TIMEOUT;
	struct fos_msg *msg;

	if (flags & FRACTOS_RECV_TIMEOUT)
		left = min_t(u64, nsecs_to_jiffies64(timeout_ns),
			     MAX_SCHEDULE_TIMEOUT - 1);
	for (;;) {
		if (nowait) {
			if (!mutex_trylock(&ep->recv_mutex))
				return ERR_PTR(-EAGAIN);
		} else if (mutex_lock_interruptible(&ep->recv_mutex)) {
			return ERR_PTR(-ERESTARTNOHAND);
		}
		spin_lock_bh(&ep->lock);
		msg = list_first_entry_or_null(&ep->msgs, struct fos_msg, link);
		spin_unlock_bh(&ep->lock);
		if (msg)
			return msg;
		mutex_unlock(&ep->recv_mutex);

		if ((flags & FRACTOS_RECV_NONBLOCK) || nowait)
			return ERR_PTR(-EAGAIN);
		if (!left)
			return ERR_PTR(-ETIMEDOUT);
		if (fos_busy_poll(fos_ep_ready, ep))
			continue;
		left = wait_event_interruptible_timeout(ep->recv_wq,
							fos_ep_ready(ep), left);
		/*
		 * Not -ERESTARTSYS: a handler with SA_RESTART must see EINTR
		 * (a restart would begin the timeout again from its full
		 * length).  Without a handler the call restarts unseen.
		 */
		if (left < 0)
			return ERR_PTR(-ERESTARTNOHAND);
		if (!left && !READ_ONCE(ep->len))
			return ERR_PTR(-ETIMEDOUT);
	}
}

int fos_op_request_receive(struct fos_space *s, struct fos_call *c)
{
	struct fractos_request_receive *a = &c->args.request_receive;
	u32 cids[FRACTOS_REQ_MAX_CAPS];
	struct fos_ep *ep = s->ep;
	struct fos_msg *msg;
	u32 i, n = 0;
	int ret;

	if ((a->flags & ~(FRACTOS_RECV_NONBLOCK | FRACTOS_RECV_TIMEOUT)) ||
	    !fos_mem_is_zero(a->reserved, sizeof(a->reserved)))
		return -EINVAL;

	msg = fos_ep_peek(ep, a->flags, a->timeout_ns, c->nowait);
	if (IS_ERR(msg))
		return PTR_ERR(msg);

	if (msg->imm_len > a->imm_len || msg->ncaps > a->ncaps) {
		a->imm_len = msg->imm_len;
		a->ncaps = msg->ncaps;
		c->out_on_error = true;
		ret = -EMSGSIZE;
		goto out_unlock;
	}
	if (msg->imm_len &&
	    copy_to_user(u64_to_user_ptr(a->imms), msg->imm, msg->imm_len)) {
		ret = -EFAULT;
		goto out_unlock;
	}
	for (n = 0; n < msg->ncaps; n++) {
		ret = fos_cap_install(s, &msg->caps[n], &cids[n]);
		if (ret)
			goto out_close;
	}
	if (n && copy_to_user(u64_to_user_ptr(a->caps), cids,
			      n * sizeof(u32))) {
		ret = -EFAULT;
		goto out_close;
	}

	/* Delivered: take it off the queue. */
	spin_lock_bh(&ep->lock);
	list_del(&msg->link);
	WRITE_ONCE(ep->len, ep->len - 1);
	spin_unlock_bh(&ep->lock);
	mutex_unlock(&ep->recv_mutex);
	wake_up(&ep->send_wq);

	a->type = msg->type;
	a->tag = msg->tag;
	a->imm_len = msg->imm_len;
	a->ncaps = msg->ncaps;
	fos_msg_free(msg);
	return 0;

out_close:
	for (i = 0; i < n; i++)
		fos_cap_close_if(s, cids[i], &msg->caps[i]);
	if (ret == -EMFILE) {
		a->imm_len = msg->imm_len;
		a->ncaps = msg->ncaps;
		c->out_on_error = true;
	}
out_unlock:
	mutex_unlock(&ep->recv_mutex);
	return ret;
}
