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
#include "provider.h"

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

void fos_msg_free(struct fos_msg *msg)
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

/**
 * struct fos_args_src - arguments given by a caller: a user's or the kernel's
 * @s: user: the space whose cids @ucids names; NULL for kernel callers
 * @uimm: user: immediates
 * @ucids: user: cids
 * @kimm: kernel: immediates
 * @kcaps: kernel: capabilities (the caller keeps its references)
 * @imm_len: bytes of immediates
 * @ncaps: capabilities
 */
struct fos_args_src {
	struct fos_space *s;
	u64 uimm;
	u64 ucids;
	const void *kimm;
	struct fos_kcap *const *kcaps;
	u32 imm_len;
	u32 ncaps;
};

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

/* Append the kernel capabilities @caps to @b, as fos_args_add_cids(). */
static int fos_args_add_kcaps(struct fos_args_buf *b,
			      struct fos_kcap *const *caps, u32 n)
{
	u32 i;
	int ret;

	for (i = 0; i < n; i++) {
		struct fos_cap *cap = &b->caps[*b->ncaps];

		*cap = caps[i]->cap;
		fos_obj_get(cap->obj);
		(*b->ncaps)++;
		ret = fos_obj_delegate(cap);
		if (ret < 0)
			return ret;
		if (ret)
			b->delegated |= BIT(*b->ncaps - 1);
	}
	return 0;
}

/* Append the caller's arguments @src to @b. */
static int fos_args_add_src(struct fos_args_buf *b,
			    const struct fos_args_src *src)
{
	int ret;

	if (!src->s) {
		if (src->imm_len)
			memcpy(b->imm + b->imm_len, src->kimm, src->imm_len);
		b->imm_len += src->imm_len;
		return fos_args_add_kcaps(b, src->kcaps, src->ncaps);
	}
	ret = fos_args_add_imm(b, src->uimm, src->imm_len);
	if (!ret)
		ret = fos_args_add_cids(src->s, b, src->ucids, src->ncaps);
	return ret;
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

/**
 * fos_req_make - create a Request owned by @s
 * @s: the owner (a user's space or a kernel provider's)
 * @base_obj: a Request to derive from (its child in the revocation tree),
 *	or NULL for a new root whose provider is @s
 * @tag: the provider's tag (0 when deriving)
 * @src: the arguments, appended to @base_obj's own
 * @delegated: out, the arguments that are new delegations (bits)
 *
 * Return: the object, with a reference for the caller, or an ERR_PTR:
 * -E2BIG, -ENOMEM, -EMLINK, -EKEYREVOKED, -EOPNOTSUPP, or an argument's
 * -EBADF or -EFAULT.
 */
static struct fos_object *fos_req_make(struct fos_space *s,
				       struct fos_object *base_obj, u64 tag,
				       const struct fos_args_src *src,
				       u32 *delegated)
{
	u32 imm_len = src->imm_len, ncaps = src->ncaps;
	struct fos_req *base = NULL, *req;
	struct fos_object *obj;
	struct fos_args_buf b;
	bool remote = false;
	int ret;

	if (base_obj) {
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
				return ERR_PTR(ret);
			remote = true;
		} else {
			imm_len += base->imm_len;
			ncaps += base->ncaps;
		}
		if (imm_len > FRACTOS_REQ_MAX_IMM ||
		    ncaps > FRACTOS_REQ_MAX_CAPS) {
			obj = ERR_PTR(-E2BIG);
			goto out;
		}
	}

	req = fos_req_alloc(base ? base->ep : remote ? NULL : s->ep,
			    base ? base->tag : tag, ncaps, imm_len);
	if (!req) {
		obj = ERR_PTR(-ENOMEM);
		goto out;
	}
	b.caps = req->caps;
	b.ncaps = &req->ncaps;
	b.imm = req->imm;
	b.imm_len = 0;
	b.delegated = 0;
	if (base)
		fos_args_add_req(&b, base);
	ret = fos_args_add_src(&b, src);
	req->imm_len = b.imm_len;
	if (ret) {
		obj = ERR_PTR(ret);
	} else if (base_obj) {
		obj = fos_obj_create_child(base_obj, s, req);
	} else {
		obj = fos_obj_create(FRACTOS_OBJ_REQUEST, s, NULL, req) ?:
		      ERR_PTR(-ENOMEM);
	}
	if (IS_ERR(obj)) {
		fos_args_undelegate(&b);
		fos_req_put(req);
	}
	*delegated = b.delegated;
out:
	if (base)
		fos_req_put(base);
	return obj;
}

/*
 * A Request made by fos_req_make() reached nobody: take its new
 * delegations back (before revoking it).  Nobody else can reach @obj yet,
 * so its contents are still there.
 */
static void fos_req_unmake(struct fos_object *obj, u32 delegated)
{
	struct fos_args_buf b = {
		.caps = obj->req->caps,
		.delegated = delegated,
	};

	fos_args_undelegate(&b);
	fos_obj_revoke(obj);
}

int fos_op_request_create(struct fos_space *s, struct fos_call *c)
{
	struct fractos_request_create *a = &c->args.request_create;
	struct fos_args_src src = {
		.s = s,
		.uimm = a->imms,
		.ucids = a->caps,
		.imm_len = a->imm_len,
		.ncaps = a->ncaps,
	};
	struct fos_object *base_obj = NULL, *obj;
	struct fos_cap cap = {};
	u32 delegated;
	int ret;

	if (a->flags || a->__pad ||
	    !fos_mem_is_zero(a->reserved, sizeof(a->reserved)))
		return -EINVAL;
	if (a->imm_len > FRACTOS_REQ_MAX_IMM || a->ncaps > FRACTOS_REQ_MAX_CAPS)
		return -E2BIG;
	if (a->base != FRACTOS_CID_INVALID) {
		if (a->tag)
			return -EINVAL;
		ret = fos_req_cap_get(s, a->base, &cap);
		if (ret)
			return ret;
		base_obj = cap.obj;
	}

	obj = fos_req_make(s, base_obj, a->tag, &src, &delegated);
	if (IS_ERR(obj)) {
		ret = PTR_ERR(obj);
		goto out;
	}
	cap.obj = obj;
	ret = fos_cap_install(s, &cap, &a->cid);
	if (ret)
		fos_req_unmake(obj, delegated);
	else
		c->new_cid = a->cid;
	fos_obj_put(obj);
out:
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

/**
 * fos_invoke - invoke the Request @cap with the arguments @src
 * @cap: a Request capability (the caller holds its reference)
 * @src: the invocation's own arguments
 * @wait: FRACTOS_INVOKE_WAIT: wait for room in the provider's queue
 * @nowait: io_uring's inline issue: never sleep (-EAGAIN instead)
 *
 * Return: 0 (queued), -EAGAIN (the queue is full, or waiting was
 * needed), -EKEYREVOKED, -E2BIG, -ENOMEM, fos_remote_invoke()'s errnos, or
 * an argument's.
 */
static int fos_invoke(const struct fos_cap *cap,
		      const struct fos_args_src *src, bool wait, bool nowait)
{
	struct fos_args_buf b;
	struct fos_msg *msg;
	struct fos_req *req;
	u32 pre_imm = 0, pre_caps = 0;
	bool remote, loop = false;
	int ret;

	req = fos_obj_get_req(cap->obj);
	if (IS_ERR(req)) {
		ret = PTR_ERR(req);
		if (ret != -EREMOTE)
			return ret;
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
	if (remote && nowait) {
		ret = -EAGAIN;	/* waits for the owner's answer */
		goto out_req;
	}
	if (req && (req->imm_len + src->imm_len > FRACTOS_REQ_MAX_IMM ||
		    req->ncaps + src->ncaps > FRACTOS_REQ_MAX_CAPS)) {
		ret = -E2BIG;
		goto out_req;
	}
	if (req && !loop) {
		pre_imm = req->imm_len;
		pre_caps = req->ncaps;
	}

	msg = fos_msg_alloc(pre_caps + src->ncaps, pre_imm + src->imm_len);
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
	ret = fos_args_add_src(&b, src);
	msg->imm_len = b.imm_len;
	if (!ret && remote) {
		/* @msg only carried the arguments: the owner queues its own. */
		ret = fos_remote_invoke(cap->obj, msg->imm, msg->imm_len,
					msg->caps, msg->ncaps, wait);
		if (ret)
			fos_args_undelegate(&b);
		fos_msg_free(msg);
		goto out_req;
	}
	if (!ret)
		ret = fos_ep_send(req->ep, msg, wait, nowait);
	if (ret) {
		fos_args_undelegate(&b);
		fos_msg_free(msg);
	}
out_req:
	if (req)
		fos_req_put(req);
	return ret;
}

int fos_op_request_invoke(struct fos_space *s, struct fos_call *c)
{
	struct fractos_request_invoke *a = &c->args.request_invoke;
	struct fos_args_src src = {
		.s = s,
		.uimm = a->imms,
		.ucids = a->caps,
		.imm_len = a->imm_len,
		.ncaps = a->ncaps,
	};
	struct fos_cap cap;
	int ret;

	if ((a->flags & ~FRACTOS_INVOKE_WAIT) ||
	    !fos_mem_is_zero(a->reserved, sizeof(a->reserved)))
		return -EINVAL;
	if (a->imm_len > FRACTOS_REQ_MAX_IMM || a->ncaps > FRACTOS_REQ_MAX_CAPS)
		return -E2BIG;

	ret = fos_req_cap_get(s, a->cid, &cap);
	if (ret)
		return ret;
	ret = fos_invoke(&cap, &src, a->flags & FRACTOS_INVOKE_WAIT, c->nowait);
	fos_obj_put(cap.obj);
	return ret;
}

/* ---- kernel providers (provider.c) ---- */

/**
 * fos_req_make_k - fos_kreq_create() and fos_kreq_derive()
 * @s: the provider's space
 * @base: the Request to derive from, or NULL
 * @tag: the tag of a new root
 * @imm: immediates
 * @imm_len: bytes at @imm
 * @caps: capability arguments
 * @ncaps: entries at @caps
 *
 * Return: the object with a reference, or an ERR_PTR.
 */
struct fos_object *fos_req_make_k(struct fos_space *s,
				  const struct fos_cap *base, u64 tag,
				  const void *imm, u32 imm_len,
				  struct fos_kcap *const *caps, u32 ncaps)
{
	struct fos_args_src src = {
		.kimm = imm,
		.kcaps = caps,
		.imm_len = imm_len,
		.ncaps = ncaps,
	};
	u32 delegated;

	if (imm_len > FRACTOS_REQ_MAX_IMM || ncaps > FRACTOS_REQ_MAX_CAPS)
		return ERR_PTR(-E2BIG);
	if (base && base->obj->type != FRACTOS_OBJ_REQUEST)
		return ERR_PTR(-EOPNOTSUPP);
	return fos_req_make(s, base ? base->obj : NULL, tag, &src,
			    &delegated);
}

/**
 * fos_invoke_k - invoke a Request from kernel code (fos_kinvoke())
 * @cap: the Request capability
 * @imm: immediates
 * @imm_len: bytes at @imm
 * @caps: capability arguments
 * @ncaps: entries at @caps
 *
 * Never waits for room: a full queue is -EAGAIN.  Waits for the owner's
 * answer when the provider is on another node.
 *
 * Return: as fos_invoke().
 */
int fos_invoke_k(const struct fos_cap *cap, const void *imm, u32 imm_len,
		 struct fos_kcap *const *caps, u32 ncaps)
{
	struct fos_args_src src = {
		.kimm = imm,
		.kcaps = caps,
		.imm_len = imm_len,
		.ncaps = ncaps,
	};

	might_sleep();
	if (imm_len > FRACTOS_REQ_MAX_IMM || ncaps > FRACTOS_REQ_MAX_CAPS)
		return -E2BIG;
	if (cap->obj->type != FRACTOS_OBJ_REQUEST)
		return -EOPNOTSUPP;
	return fos_invoke(cap, &src, false, false);
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

	spin_lock(&ep->lock);
	msg = list_first_entry_or_null(&ep->msgs, struct fos_msg, link);
	if (msg) {
		list_del(&msg->link);
		WRITE_ONCE(ep->len, ep->len - 1);
	}
	spin_unlock(&ep->lock);
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
