// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: Requests and invocation.
 *
 * A Request names a provider's receive queue (struct fos_ep, queue.c) and
 * carries immutable arguments (struct fos_req).  Invoking it copies the
 * arguments, plus any given for this invocation only, into a message on
 * that queue; the provider receives the message with the capability
 * arguments installed as new cids in its space.
 */
#include <linux/bitops.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include "fos.h"
#include "ops.h"
#include "queue.h"
#include "request.h"
#include "provider.h"

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

/* Assemble into @caps (counted in *@ncaps) and @imm, from empty. */
static void fos_args_buf_init(struct fos_args_buf *b, struct fos_cap *caps,
			      u32 *ncaps, u8 *imm)
{
	b->caps = caps;
	b->ncaps = ncaps;
	b->imm = imm;
	b->imm_len = 0;
	b->delegated = 0;
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

/* A Request's release hook (struct fos_contents_ops). */
static void fos_req_free(struct fos_contents *c, struct fos_reaper *r)
{
	struct fos_req *req = fos_req_of(c);
	u32 i;

	for (i = 0; i < req->ncaps; i++)
		fos_reaper_obj_put(r, req->caps[i].obj);
	if (req->ep)
		fos_ep_put(req->ep);
	if (req->charge)
		req->charge->release(req->charge);
	kfree(req);
	fos_live_add(FOS_LIVE_REQUESTS, -1);
}

static const struct fos_contents_ops fos_req_ops = {
	.free = fos_req_free,
};

static struct fos_req *fos_req_alloc(struct fos_ep *ep, u64 tag, u32 ncaps,
				     u32 imm_len)
{
	struct fos_req *req;

	req = kzalloc(sizeof(*req) + ncaps * sizeof(struct fos_cap) + imm_len,
		      GFP_KERNEL_ACCOUNT);
	if (!req)
		return NULL;
	fos_contents_init(&req->c, &fos_req_ops);
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
struct fos_object *fos_req_make(struct fos_space *s,
				struct fos_object *base_obj, u64 tag,
				const struct fos_args_src *src,
				u32 *delegated)
{
	u32 imm_len = src->imm_len, ncaps = src->ncaps;
	struct fos_req *base = NULL, *req = NULL;
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
			if (ret != -EREMOTE) {
				obj = ERR_PTR(ret);
				goto out;
			}
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
	req->charge = src->charge;	/* released with @req from now on */
	fos_args_buf_init(&b, req->caps, &req->ncaps, req->imm);
	if (base)
		fos_args_add_req(&b, base);
	ret = fos_args_add_src(&b, src);
	req->imm_len = b.imm_len;
	if (ret) {
		obj = ERR_PTR(ret);
	} else if (base_obj) {
		obj = fos_obj_create_child(base_obj, s, &req->c);
	} else {
		obj = fos_obj_create(FRACTOS_OBJ_REQUEST, s, &req->c) ?:
		      ERR_PTR(-ENOMEM);
	}
	if (IS_ERR(obj)) {
		fos_args_undelegate(&b);
		fos_req_put(req);
	}
	*delegated = b.delegated;
out:
	/* Not attached to a Request: released here. */
	if (IS_ERR(obj) && src->charge && !req)
		src->charge->release(src->charge);
	if (base)
		fos_req_put(base);
	return obj;
}

/*
 * A Request made by fos_req_make() reached nobody: take its new
 * delegations back, then revoke it.
 *
 * @obj became reachable to other threads' revocation when it was made (a
 * derived Request through its base, a root through its owner's space and
 * provider), so a concurrent revocation may already have taken its
 * contents (@obj->contents is then NULL).  The contents are taken under
 * fos_tree_lock with a reference of our own; if they are gone, their
 * delegations ended with them, as those of any revoked Request do.
 */
static void fos_req_unmake(struct fos_object *obj, u32 delegated)
{
	struct fos_args_buf b = { .delegated = delegated };
	struct fos_req *req;

	spin_lock_bh(&fos_tree_lock);
	req = obj->contents ? fos_req_of(obj->contents) : NULL;
	if (req)
		kref_get(&req->c.ref);
	spin_unlock_bh(&fos_tree_lock);

	if (req) {
		b.caps = req->caps;
		fos_args_undelegate(&b);
		fos_req_put(req);
	}
	fos_obj_revoke(obj);
}

/*
 * The arguments of a call of @req (NULL: a proxy) in a new message: @req's
 * own first when @add_req (the caller adds them: a local provider, or a
 * Request derived here from a proxy), then @src's.  Returns the message
 * with *@ret the result of adding them (on failure the caller undelegates
 * @b and frees it), or NULL with *@ret -E2BIG or -ENOMEM.
 */
static struct fos_msg *fos_args_gather(struct fos_req *req, bool add_req,
				       const struct fos_args_src *src,
				       struct fos_args_buf *b, int *ret)
{
	u32 pre_imm = add_req ? req->imm_len : 0;
	u32 pre_caps = add_req ? req->ncaps : 0;
	struct fos_msg *msg;

	*ret = -E2BIG;
	if (req && (req->imm_len + src->imm_len > FRACTOS_REQ_MAX_IMM ||
		    req->ncaps + src->ncaps > FRACTOS_REQ_MAX_CAPS))
		return NULL;
	*ret = -ENOMEM;
	msg = fos_msg_alloc(pre_caps + src->ncaps, pre_imm + src->imm_len);
	if (!msg)
		return NULL;
	msg->type = FRACTOS_MSG_REQUEST;
	fos_args_buf_init(b, msg->caps, &msg->ncaps, msg->imm);
	if (add_req) {
		msg->tag = req->tag;
		fos_args_add_req(b, req);
	}
	*ret = fos_args_add_src(b, src);
	msg->imm_len = b->imm_len;
	return msg;
}

/*
 * @obj's Request contents with an in-flight reference, NULL for a proxy
 * (its owner adds the Request's own arguments), or an ERR_PTR.
 */
static struct fos_req *fos_req_or_proxy(struct fos_object *obj)
{
	struct fos_req *req = fos_obj_get_req(obj);

	if (IS_ERR(req) && PTR_ERR(req) == -EREMOTE)
		return NULL;
	return req;
}

/*
 * REQUEST_CREATE with FRACTOS_CREATE_AT_OWNER: as fos_invoke() decides
 * where an invocation of @base goes, decide whether the derivation goes
 * to another node (@base is a proxy, or with fabric_loopback a local
 * Request), and if so send it there with @src's arguments.
 *
 * Return: 0 (@out holds the owner's Request, a reference), 1 (@base is
 * this node's: derive it here), or an errno.
 */
static int fos_req_derive_at_owner(const struct fos_cap *base,
				   const struct fos_args_src *src,
				   struct fos_cap *out)
{
	struct fos_args_buf b;
	struct fos_msg *msg;
	struct fos_req *req;
	bool owner_adds;
	int ret;

	might_sleep();
	req = fos_req_or_proxy(base->obj);
	if (IS_ERR(req))
		return PTR_ERR(req);
	/*
	 * Only another node's Request itself: the owner derives from what it
	 * names, so a local child of a proxy (derived here, or a
	 * revocation-tree child) would leave a Request that its revocation
	 * here cannot reach.
	 */
	ret = -EOPNOTSUPP;
	if (req ? !req->ep : !base->obj->proxy)
		goto out_req;
	owner_adds = !!req;
	if (owner_adds && !fos_remote()->invoke_wanted(base->obj)) {
		ret = 1;	/* ours, and not looped back */
		goto out_req;
	}
	msg = fos_args_gather(req, req && !owner_adds, src, &b, &ret);
	if (!msg)
		goto out_req;
	if (!ret)
		ret = fos_remote()->derive(base->obj, msg->imm, msg->imm_len,
					   msg->caps, msg->ncaps, out);
	if (ret)
		fos_args_undelegate(&b);	/* the owner has none of them */
	fos_msg_free(msg);
out_req:
	if (req)
		fos_req_put(req);
	return ret;
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

	if ((a->flags & ~FRACTOS_CREATE_AT_OWNER) || a->__pad ||
	    !fos_mem_is_zero(a->reserved, sizeof(a->reserved)))
		return -EINVAL;
	if ((a->flags & FRACTOS_CREATE_AT_OWNER) &&
	    a->base == FRACTOS_CID_INVALID)
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

	if (a->flags & FRACTOS_CREATE_AT_OWNER) {
		struct fos_cap out = {};
		struct fos_cap_slot slot;

		/* It may wait for another node: io_uring's worker does. */
		ret = -EAGAIN;
		if (c->nowait)
			goto out;
		/*
		 * The cid first: once the owner has derived, the result must
		 * reach the caller, or dropping it would end the delegations
		 * of its arguments (monitors fire) for a call that failed.
		 */
		ret = fos_cap_reserve(s, &slot);
		if (ret)
			goto out;
		ret = fos_req_derive_at_owner(&cap, &src, &out);
		if (!ret) {
			/* the owner's now: nothing to take back here */
			fos_cap_fill(s, &slot, &out);
			a->cid = slot.cid;
			fos_call_new_cid(c, a->cid, &out);
			fos_obj_put(out.obj);
			goto out;
		}
		fos_cap_unreserve(s, &slot);
		if (ret < 0)
			goto out;
		/* 1: this node's Request, derived here as without the flag */
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
		fos_call_new_cid(c, a->cid, &cap);
	fos_obj_put(obj);
out:
	if (base_obj)
		fos_obj_put(base_obj);
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
 * @atomic: called in softirq (an INVOKE delivered there, owner.c):
 *	allocates with GFP_NOWAIT and drops references with
 *	fos_obj_put_atomic()
 *
 * Never waits: runs in the fabric's receive context.
 *
 * Return: 0, -E2BIG, -ENOMEM, -EAGAIN (queue full) or -EKEYREVOKED
 * (the provider is gone).
 */
int fos_req_deliver(struct fos_req *req, const u8 *imm, u32 imm_len,
		    const struct fos_cap *caps, u32 ncaps, bool atomic)
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
	msg = fos_ep_msg_alloc(req->ep, req->ncaps + ncaps,
			       req->imm_len + imm_len,
			       atomic ? GFP_NOWAIT | __GFP_NOWARN : GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	msg->type = FRACTOS_MSG_REQUEST;
	msg->tag = req->tag;
	fos_args_buf_init(&b, msg->caps, &msg->ncaps, msg->imm);
	fos_args_add_req(&b, req);
	memcpy(b.imm + b.imm_len, imm, imm_len);
	b.imm_len += imm_len;
	for (i = 0; i < ncaps; i++) {
		b.caps[msg->ncaps++] = caps[i];
		fos_obj_get(caps[i].obj);
	}
	msg->imm_len = b.imm_len;
	ret = fos_ep_send(req->ep, msg, false, true);
	if (ret && atomic)
		fos_msg_free_atomic(msg);
	else if (ret)
		fos_msg_free(msg);
	return ret;
}

/**
 * struct fos_invoke_later - an invocation sent to another node, answered
 *	later (fos_invoke() with a callback)
 * @rdone: what the remote layer calls with the answer
 * @msg: the invocation's arguments (their references)
 * @delegated: which of @msg's capabilities the call delegated
 * @done: the caller's callback
 */
struct fos_invoke_later {
	struct fos_invoke_done rdone;
	struct fos_msg *msg;
	u32 delegated;
	struct fos_invoke_done *done;
};

static void fos_invoke_later_fn(struct fos_invoke_done *rdone, int result)
{
	struct fos_invoke_later *l = container_of(rdone,
						  struct fos_invoke_later,
						  rdone);
	struct fos_invoke_done *done = l->done;
	struct fos_args_buf b = {
		.caps = l->msg->caps,
		.delegated = l->delegated,
	};

	if (result)
		fos_args_undelegate(&b);	/* nobody got them */
	fos_msg_free(l->msg);
	kfree(l);
	done->fn(done, result);
}

/*
 * Hand an invocation to the remote layer.  @msg only carried the
 * arguments (the owner queues its own message): it is freed here, or once
 * the answer came when that comes later (-EINPROGRESS).
 */
static int fos_invoke_remote(struct fos_object *target, struct fos_msg *msg,
			     struct fos_args_buf *b, u32 flags,
			     struct fos_invoke_done *done)
{
	struct fos_invoke_later *l = NULL;
	int ret;

	if (done) {
		l = kzalloc(sizeof(*l), GFP_KERNEL);
		if (!l) {
			ret = -ENOMEM;
			goto out;
		}
		l->rdone.fn = fos_invoke_later_fn;
		l->msg = msg;
		l->delegated = b->delegated;
		l->done = done;
	}
	ret = fos_remote()->invoke(target, msg->imm, msg->imm_len, msg->caps,
				   msg->ncaps, flags, l ? &l->rdone : NULL);
	if (ret == -EINPROGRESS)
		return ret;		/* @l and @msg are fos_invoke_later_fn's */
	kfree(l);
out:
	if (ret)
		fos_args_undelegate(b);
	fos_msg_free(msg);
	return ret;
}

/**
 * fos_invoke - invoke the Request @cap with the arguments @src
 * @cap: a Request capability (the caller holds its reference)
 * @src: the invocation's own arguments
 * @flags: FRACTOS_INVOKE_WAIT: wait for room in the provider's queue;
 *	FRACTOS_INVOKE_NOACK: another node's provider answers no success
 * @nowait: io_uring's inline issue: never sleep (-EAGAIN instead)
 * @done: NULL, or (kernel callers) where an answer from another node is
 *	delivered, instead of waiting for it
 *
 * Return: 0 (queued), -EAGAIN (the queue is full, or waiting was
 * needed), -EKEYREVOKED, -E2BIG, -ENOMEM, the remote layer's errnos, or
 * an argument's; with @done also -EINPROGRESS (@done->fn gets one of
 * those later).
 */
int fos_invoke(const struct fos_cap *cap, const struct fos_args_src *src,
	       u32 flags, bool nowait, struct fos_invoke_done *done)
{
	struct fos_args_buf b;
	struct fos_msg *msg;
	struct fos_req *req;
	bool remote, owner_adds;
	int ret;

	req = fos_req_or_proxy(cap->obj);
	if (IS_ERR(req))
		return PTR_ERR(req);
	/*
	 * The provider is on another node (a proxy, or contents derived
	 * from one), or the remote layer carries local invocations too: then
	 * this node gets the call back as the owner, which adds the
	 * Request's own arguments.  Otherwise the invoker adds them here.
	 */
	remote = !req || !req->ep;
	owner_adds = !remote && fos_remote()->invoke_wanted(cap->obj);
	remote |= owner_adds;
	if (remote && nowait) {
		ret = -EAGAIN;	/* waits for the owner's answer */
		goto out_req;
	}
	msg = fos_args_gather(req, req && !owner_adds, src, &b, &ret);
	if (!msg)
		goto out_req;
	if (!ret && remote) {
		ret = fos_invoke_remote(cap->obj, msg, &b, flags, done);
		goto out_req;
	}
	if (!ret)
		ret = fos_ep_send(req->ep, msg, flags & FRACTOS_INVOKE_WAIT,
				  nowait);
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

	if ((a->flags & ~(FRACTOS_INVOKE_WAIT | FRACTOS_INVOKE_NOACK)) ||
	    (a->flags & FRACTOS_INVOKE_WAIT &&
	     a->flags & FRACTOS_INVOKE_NOACK) ||
	    !fos_mem_is_zero(a->reserved, sizeof(a->reserved)))
		return -EINVAL;
	if (a->imm_len > FRACTOS_REQ_MAX_IMM || a->ncaps > FRACTOS_REQ_MAX_CAPS)
		return -E2BIG;

	ret = fos_req_cap_get(s, a->cid, &cap);
	if (ret)
		return ret;
	ret = fos_invoke(&cap, &src, a->flags, c->nowait, NULL);
	fos_obj_put(cap.obj);
	return ret;
}
