// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: Requests, invocation and the receive queue.
 *
 * A Request names a provider's receive queue (struct fos_ep) and carries
 * immutable arguments (struct fos_req).  Invoking it copies the arguments,
 * plus any given for this invocation only, into a message on that queue;
 * the provider receives the message with the capability arguments installed
 * as new cids in its space.
 */
#include <linux/bitops.h>
#include <linux/jiffies.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include "fos.h"

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

/*
 * Arguments being assembled: the common part of fos_req and fos_msg.
 * @delegated has bit i set when caps[i] is a new delegation, to be taken
 * back if the operation fails.
 */
struct fos_args_buf {
	struct fos_cap *caps;
	u32 *ncaps;
	u8 *imm;
	u32 imm_len;
	u32 delegated;
};

struct fos_ep *fos_ep_create(void)
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
	return ep;
}

static void fos_ep_release(struct kref *ref)
{
	struct fos_ep *ep = container_of(ref, struct fos_ep, ref);

	WARN_ON_ONCE(!list_empty(&ep->msgs));
	WARN_ON_ONCE(!list_empty(&ep->regs));	/* each holds a reference */
	mutex_destroy(&ep->recv_mutex);
	kfree(ep);
}

void fos_ep_put(struct fos_ep *ep)
{
	kref_put(&ep->ref, fos_ep_release);
}

static void fos_msg_free(struct fos_msg *msg)
{
	u32 i;

	for (i = 0; i < msg->ncaps; i++)
		fos_obj_put(msg->caps[i].obj);
	if (msg->ev_ep)
		atomic_dec(&msg->ev_ep->nmonitors);
	kfree(msg);
	fos_live_add(FOS_LIVE_MESSAGES, -1);
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

	spin_lock(&ep->lock);
	ep->closed = true;
	list_splice_init(&ep->msgs, &msgs);
	ep->len = 0;
	spin_unlock(&ep->lock);
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
	spin_lock(&ep->lock);
	if (ep->closed) {
		spin_unlock(&ep->lock);
		fos_msg_free(msg);
		return;
	}
	list_add_tail(&msg->link, &ep->msgs);
	WRITE_ONCE(ep->len, ep->len + 1);
	spin_unlock(&ep->lock);
	wake_up(&ep->recv_wq);
}

__poll_t fos_ep_poll(struct fos_ep *ep, struct file *file,
		     struct poll_table_struct *wait)
{
	poll_wait(file, &ep->recv_wq, wait);
	return READ_ONCE(ep->len) ? EPOLLIN | EPOLLRDNORM : 0;
}

/*
 * Append @n capabilities named by the user array @ucids of space @s to @b.
 * Each appended capability holds an object reference; *b->ncaps counts
 * them, so the caller's cleanup drops exactly what was taken.
 */
static int fos_args_add_cids(struct fos_space *s, struct fos_args_buf *b,
			     u64 ucids, u32 n)
{
	u32 cids[FRACTOS_REQ_MAX_CAPS];
	u32 i;
	int ret;

	if (!n)
		return 0;
	if (copy_from_user(cids, u64_to_user_ptr(ucids), n * sizeof(u32)))
		return -EFAULT;
	for (i = 0; i < n; i++) {
		struct fos_cap *cap = &b->caps[*b->ncaps];

		ret = fos_cap_get(s, cids[i], cap);
		if (ret)
			return ret;
		(*b->ncaps)++;
		ret = fos_obj_delegate(cap);
		if (ret < 0)
			return ret;
		if (ret)
			b->delegated |= BIT(*b->ncaps - 1);
	}
	return 0;
}

/* The operation failed: the delegations it made reached nobody. */
static void fos_args_undelegate(struct fos_args_buf *b)
{
	unsigned long bits = b->delegated;
	unsigned int i;

	for_each_set_bit(i, &bits, FRACTOS_REQ_MAX_CAPS)
		fos_obj_undelegate(&b->caps[i]);
	b->delegated = 0;
}

/* Append the arguments of @req (taking object references) to @b. */
static void fos_args_add_req(struct fos_args_buf *b, const struct fos_req *req)
{
	u32 i;

	memcpy(b->imm + b->imm_len, req->imm, req->imm_len);
	b->imm_len += req->imm_len;
	for (i = 0; i < req->ncaps; i++) {
		b->caps[*b->ncaps] = req->caps[i];
		fos_obj_get(req->caps[i].obj);
		(*b->ncaps)++;
	}
}

static int fos_args_add_imm(struct fos_args_buf *b, u64 uimm, u32 len)
{
	if (len && copy_from_user(b->imm + b->imm_len, u64_to_user_ptr(uimm),
				  len))
		return -EFAULT;
	b->imm_len += len;
	return 0;
}

/* Look up a Request capability; on success the caller puts cap->obj. */
static int fos_req_cap_get(struct fos_space *s, u32 cid, struct fos_cap *cap)
{
	int ret = fos_cap_get(s, cid, cap);

	if (ret)
		return ret;
	if (cap->obj->type != FRACTOS_OBJ_REQUEST) {
		fos_obj_put(cap->obj);
		return -EOPNOTSUPP;
	}
	return 0;
}

static struct fos_req *fos_req_alloc(struct fos_ep *ep, u64 tag, u32 ncaps,
				     u32 imm_len)
{
	struct fos_req *req;

	req = kzalloc(sizeof(*req) + ncaps * sizeof(struct fos_cap) + imm_len,
		      GFP_KERNEL_ACCOUNT);
	if (!req)
		return NULL;
	kref_init(&req->ref);
	INIT_LIST_HEAD(&req->dead);
	req->caps = (struct fos_cap *)(req + 1);
	req->imm = (u8 *)(req->caps + ncaps);
	req->ep = ep;
	if (ep)
		kref_get(&ep->ref);
	req->tag = tag;
	fos_live_add(FOS_LIVE_REQUESTS, 1);
	return req;
}

int fos_op_request_create(struct fos_space *s, struct fos_call *c)
{
	struct fractos_request_create *a = &c->args.request_create;
	struct fos_object *base_obj = NULL, *obj;
	struct fos_req *base = NULL, *req;
	struct fos_args_buf b;
	struct fos_cap cap = {};
	u32 imm_len = a->imm_len, ncaps = a->ncaps;
	bool remote = false;
	int ret;

	if (a->flags || a->__pad ||
	    !fos_mem_is_zero(a->reserved, sizeof(a->reserved)))
		return -EINVAL;
	if (imm_len > FRACTOS_REQ_MAX_IMM || ncaps > FRACTOS_REQ_MAX_CAPS)
		return -E2BIG;

	if (a->base != FRACTOS_CID_INVALID) {
		if (a->tag)
			return -EINVAL;
		ret = fos_req_cap_get(s, a->base, &cap);
		if (ret)
			return ret;
		base_obj = cap.obj;
		base = fos_obj_get_req(base_obj);
		if (IS_ERR(base)) {
			ret = PTR_ERR(base);
			base = NULL;
			/*
			 * Deriving from a proxy: the new contents hold only
			 * the arguments added on this node (NULL ep); the
			 * owner prepends its Request's own when invoked.
			 */
			if (ret != -EREMOTE)
				goto out;
			remote = true;
		} else {
			imm_len += base->imm_len;
			ncaps += base->ncaps;
		}
		if (imm_len > FRACTOS_REQ_MAX_IMM ||
		    ncaps > FRACTOS_REQ_MAX_CAPS) {
			ret = -E2BIG;
			goto out;
		}
	}

	req = fos_req_alloc(base ? base->ep : remote ? NULL : s->ep,
			    base ? base->tag : a->tag, ncaps, imm_len);
	if (!req) {
		ret = -ENOMEM;
		goto out;
	}
	b.caps = req->caps;
	b.ncaps = &req->ncaps;
	b.imm = req->imm;
	b.imm_len = 0;
	b.delegated = 0;
	if (base)
		fos_args_add_req(&b, base);
	ret = fos_args_add_imm(&b, a->imms, a->imm_len);
	if (!ret)
		ret = fos_args_add_cids(s, &b, a->caps, a->ncaps);
	req->imm_len = b.imm_len;
	if (ret) {
		fos_args_undelegate(&b);
		fos_req_put(req);
		goto out;
	}

	if (base_obj)
		obj = fos_obj_create_child(base_obj, s, req);
	else
		obj = fos_obj_create(FRACTOS_OBJ_REQUEST, s, NULL, req) ?:
		      ERR_PTR(-ENOMEM);
	if (IS_ERR(obj)) {
		fos_args_undelegate(&b);
		fos_req_put(req);
		ret = PTR_ERR(obj);
		goto out;
	}

	cap.obj = obj;
	ret = fos_cap_install(s, &cap, &a->cid);
	if (ret) {
		fos_args_undelegate(&b);
		fos_obj_revoke(obj);
	} else {
		c->new_cid = a->cid;
	}
	fos_obj_put(obj);
out:
	if (base)
		fos_req_put(base);
	if (base_obj)
		fos_obj_put(base_obj);
	return ret;
}

static struct fos_msg *fos_msg_alloc(u32 ncaps, u32 imm_len)
{
	struct fos_msg *msg;

	msg = kzalloc(sizeof(*msg) + ncaps * sizeof(struct fos_cap) + imm_len,
		      GFP_KERNEL_ACCOUNT);
	if (!msg)
		return NULL;
	msg->caps = (struct fos_cap *)(msg + 1);
	msg->imm = (u8 *)(msg->caps + ncaps);
	fos_live_add(FOS_LIVE_MESSAGES, 1);
	return msg;
}

/* Queue @msg on @ep; on failure the caller still owns @msg. */
static int fos_ep_send(struct fos_ep *ep, struct fos_msg *msg, bool wait,
		       bool nowait)
{
	unsigned int max = max(READ_ONCE(fos_max_queue), 1U);
	int ret;

	for (;;) {
		spin_lock(&ep->lock);
		if (ep->closed) {
			ret = -EKEYREVOKED;
			break;
		}
		if (ep->len < max) {
			list_add_tail(&msg->link, &ep->msgs);
			WRITE_ONCE(ep->len, ep->len + 1);
			spin_unlock(&ep->lock);
			wake_up(&ep->recv_wq);
			return 0;
		}
		ret = -EAGAIN;
		if (!wait || nowait)
			break;
		spin_unlock(&ep->lock);
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
	spin_unlock(&ep->lock);
	return ret;
}

/**
 * fos_req_deliver - queue an invocation that arrived from another node
 * @req: the Request's contents (a local provider's)
 * @imm: immediates appended to the Request's own
 * @imm_len: bytes at @imm
 * @caps: capability arguments appended to the Request's own; each gets a
 *	new object reference, the caller keeps its own
 * @ncaps: entries at @caps
 *
 * Never waits: runs in the fabric's receive context.
 *
 * Return: 0, -E2BIG, -ENOMEM, -EAGAIN (queue full) or -EKEYREVOKED
 * (the provider is gone).
 */
int fos_req_deliver(struct fos_req *req, const u8 *imm, u32 imm_len,
		    const struct fos_cap *caps, u32 ncaps)
{
	struct fos_args_buf b;
	struct fos_msg *msg;
	u32 i;
	int ret;

	if (!req->ep)
		return -EOPNOTSUPP;
	if (req->imm_len + imm_len > FRACTOS_REQ_MAX_IMM ||
	    req->ncaps + ncaps > FRACTOS_REQ_MAX_CAPS)
		return -E2BIG;
	msg = fos_msg_alloc(req->ncaps + ncaps, req->imm_len + imm_len);
	if (!msg)
		return -ENOMEM;
	msg->type = FRACTOS_MSG_REQUEST;
	msg->tag = req->tag;
	b.caps = msg->caps;
	b.ncaps = &msg->ncaps;
	b.imm = msg->imm;
	b.imm_len = 0;
	b.delegated = 0;
	fos_args_add_req(&b, req);
	memcpy(b.imm + b.imm_len, imm, imm_len);
	b.imm_len += imm_len;
	for (i = 0; i < ncaps; i++) {
		b.caps[msg->ncaps++] = caps[i];
		fos_obj_get(caps[i].obj);
	}
	msg->imm_len = b.imm_len;
	ret = fos_ep_send(req->ep, msg, false, true);
	if (ret)
		fos_msg_free(msg);
	return ret;
}

int fos_op_request_invoke(struct fos_space *s, struct fos_call *c)
{
	struct fractos_request_invoke *a = &c->args.request_invoke;
	struct fos_args_buf b;
	struct fos_msg *msg;
	struct fos_req *req;
	struct fos_cap cap;
	u32 pre_imm = 0, pre_caps = 0;
	bool remote, loop = false;
	int ret;

	if ((a->flags & ~FRACTOS_INVOKE_WAIT) ||
	    !fos_mem_is_zero(a->reserved, sizeof(a->reserved)))
		return -EINVAL;
	if (a->imm_len > FRACTOS_REQ_MAX_IMM || a->ncaps > FRACTOS_REQ_MAX_CAPS)
		return -E2BIG;

	ret = fos_req_cap_get(s, a->cid, &cap);
	if (ret)
		return ret;
	req = fos_obj_get_req(cap.obj);
	if (IS_ERR(req)) {
		ret = PTR_ERR(req);
		if (ret != -EREMOTE)
			goto out_cap;
		req = NULL;	/* a proxy: the owner adds the arguments */
	}
	/*
	 * The provider is on another node (a proxy, or contents derived
	 * from one), or fabric_loopback sends local invocations through the
	 * fabric to this node, whose provider then adds the arguments.
	 */
	remote = !req || !req->ep;
	if (!remote && fos_remote_loopback()) {
		remote = true;
		loop = true;
	}
	if (remote && c->nowait) {
		ret = -EAGAIN;	/* waits for the owner's answer */
		goto out_req;
	}
	if (req && (req->imm_len + a->imm_len > FRACTOS_REQ_MAX_IMM ||
		    req->ncaps + a->ncaps > FRACTOS_REQ_MAX_CAPS)) {
		ret = -E2BIG;
		goto out_req;
	}
	if (req && !loop) {
		pre_imm = req->imm_len;
		pre_caps = req->ncaps;
	}

	msg = fos_msg_alloc(pre_caps + a->ncaps, pre_imm + a->imm_len);
	if (!msg) {
		ret = -ENOMEM;
		goto out_req;
	}
	msg->type = FRACTOS_MSG_REQUEST;
	b.caps = msg->caps;
	b.ncaps = &msg->ncaps;
	b.imm = msg->imm;
	b.imm_len = 0;
	b.delegated = 0;
	if (req && !loop) {
		msg->tag = req->tag;
		fos_args_add_req(&b, req);
	}
	ret = fos_args_add_imm(&b, a->imms, a->imm_len);
	if (!ret)
		ret = fos_args_add_cids(s, &b, a->caps, a->ncaps);
	msg->imm_len = b.imm_len;
	if (!ret && remote) {
		/* @msg only carried the arguments: the owner queues its own. */
		ret = fos_remote_invoke(cap.obj, msg->imm, msg->imm_len,
					msg->caps, msg->ncaps,
					a->flags & FRACTOS_INVOKE_WAIT);
		if (ret)
			fos_args_undelegate(&b);
		fos_msg_free(msg);
		goto out_req;
	}
	if (!ret)
		ret = fos_ep_send(req->ep, msg,
				  a->flags & FRACTOS_INVOKE_WAIT, c->nowait);
	if (ret) {
		fos_args_undelegate(&b);
		fos_msg_free(msg);
	}
out_req:
	if (req)
		fos_req_put(req);
out_cap:
	fos_obj_put(cap.obj);
	return ret;
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
		spin_lock(&ep->lock);
		msg = list_first_entry_or_null(&ep->msgs, struct fos_msg, link);
		spin_unlock(&ep->lock);
		if (msg)
			return msg;
		mutex_unlock(&ep->recv_mutex);

		if ((flags & FRACTOS_RECV_NONBLOCK) || nowait)
			return ERR_PTR(-EAGAIN);
		if (!left)
			return ERR_PTR(-ETIMEDOUT);
		left = wait_event_interruptible_timeout(ep->recv_wq,
							READ_ONCE(ep->len),
							left);
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
	spin_lock(&ep->lock);
	list_del(&msg->link);
	WRITE_ONCE(ep->len, ep->len - 1);
	spin_unlock(&ep->lock);
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
		fos_cap_close(s, cids[i]);
	if (ret == -EMFILE) {
		a->imm_len = msg->imm_len;
		a->ncaps = msg->ncaps;
		c->out_on_error = true;
	}
out_unlock:
	mutex_unlock(&ep->recv_mutex);
	return ret;
}
