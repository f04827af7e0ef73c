// SPDX-License-Identifier: GPL-2.0
/*
 * fractos remote objects: a Memory handed over by another node's
 * MEMORY_GRANT arrives as a copy in this node's memory.
 *
 * The granter's INVOKE names the Memory with FOS_WIRE_CAP_GRANTED: its own
 * object, whole, with every right, that nobody else holds (memgrant.c
 * revoked every other capability first).  Delivering that capability as
 * it is would leave the receiver's bytes on the granter's node, reached by
 * RDMA for as long as the receiver keeps them.  So this node allocates
 * kernel pages of the same size, charged to the user that opened the
 * receiving space (as if it had pinned them: locked_vm, against the
 * RLIMIT_MEMLOCK it had then), pulls the bytes into them with the copy
 * protocol (copy.c: GRANT, RDMA READ, RELEASE; the windows a cut
 * connection interrupts are asked for again), drops its capability to the
 * source, which frees it on the granter's node once the granter's call
 * returns, and delivers the copy in its place, owned by the space that
 * receives the Request.  The ACK goes when that is done, so the granter
 * hears whether the receiver got it; a copy that fails, or that is not
 * done within the INVOKE's grant_ms of its arrival (at most half of what
 * the granter waits), delivers nothing and the granter keeps its Memory
 * ("Memory grant" in the uAPI header).  So does a Request revoked
 * meanwhile, and a granter that restarted meanwhile hears nothing.  An
 * ACK that cannot be sent revokes the copy it would have announced.
 * What stays open: an ACK sent, then lost with a link down for longer
 * than the granter waits (documented in failures.rst).
 *
 * A Request whose provider is on a third node (a derived one, "Forwarding"
 * in remote.c) gets the same: this node makes its copy in the first half
 * of the time, then invokes the Request with that copy handed over in
 * turn, and the rest of the time for the next node's copy; the answer is
 * the ACK, and this node's copy goes either way (the next node has its
 * own, or the granter keeps its Memory).  So the bytes end on the
 * provider's node, at the cost of one more transfer.
 *
 * The work runs on fos_forward_wq, with one of the invoker's work slots
 * (fabric_peer_work), and the copies being made on this node hold at most
 * FOS_HANDOVER_MAX bytes together (-EAGAIN beyond; -EFBIG for one larger
 * than that): another node cannot make this one allocate more at once.
 * Invocations the granter sends after this one may be delivered before
 * it.
 */
#include <linux/sched/user.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include "pri.h"
#include "../memory.h"
#include "../request.h"
#include "wire_check.h"

/* A copy delivered in time is announced before the granter gives up. */
static_assert(FOS_WIRE_GRANT_MS_MAX * 2 * HZ <= FOS_REMOTE_TIMEOUT * 1000);

/* Bytes of copies being made here at once, for every granter together. */
#define FOS_HANDOVER_MAX	((s64)SZ_1G)

static atomic64_t fos_handover_bytes = ATOMIC64_INIT(0);

/**
 * struct fos_handover - an INVOKE whose Memory is being copied here
 * @work: on fos_forward_wq
 * @done: a forwarded one's: the provider's node answered
 * @peer: the granter's node (a reference, and a work slot), for the ACK
 * @cookie: the INVOKE's, for the ACK
 * @arrived: jiffies when the INVOKE arrived
 * @obj: our Request it invokes (a reference)
 * @req: its arguments (a reference)
 * @by: jiffies by which the copy is delivered (the INVOKE's grant_ms)
 * @epoch: the granter's epoch when the INVOKE arrived
 * @forward: @obj's provider is on a third node: @req is NULL, and the copy
 *	is handed over to it in turn
 * @granted: @caps[@granted] is the Memory handed over (an INVOKE hands
 *	over one at most: fos_wire_check_invoke())
 * @copied: @caps[@granted] is our copy now, no longer the source
 * @bytes: what it counts in fos_handover_bytes
 * @imm_len: bytes at @imm
 * @ncaps: entries at @caps
 * @caps: the resolved capability arguments (a reference each)
 * @imm: the immediates
 */
struct fos_handover {
	struct work_struct work;
	struct fos_invoke_done done;
	struct fos_peer *peer;
	u64 cookie;
	unsigned long arrived;
	struct fos_object *obj;
	struct fos_req *req;
	unsigned long by;
	u32 epoch;
	bool forward;
	bool copied;
	u32 granted;
	u64 bytes;
	u32 imm_len;
	u32 ncaps;
	struct fos_cap *caps;
	u8 imm[];
};

/*
 * The user that the copy for @req's space is charged to (a reference),
 * and in *@limit its limit: the opener of the space that receives @req's
 * invocations.  NULL when @req is forwarded (the copy is ours, and goes
 * when the next node has its own) or that space is gone.
 */
static struct user_struct *fos_handover_user(struct fos_object *req,
					     unsigned long *limit)
{
	struct user_struct *user = NULL;
	struct fos_space *s;

	spin_lock_bh(&fos_tree_lock);
	s = fos_req_receiver_locked(req);
	if (s) {
		user = get_uid(s->user);
		*limit = s->memlock;
	}
	spin_unlock_bh(&fos_tree_lock);
	return user;
}

/*
 * Replace @cap, another node's Memory handed over, with a copy of its
 * bytes in kernel pages of ours (an object nobody owns yet), charged to
 * @user unless NULL, read before @until; the source's proxy is dropped.
 * On error @cap is left as it was.
 */
static int fos_handover_take(struct fos_cap *cap, unsigned long until,
			     struct user_struct *user, unsigned long limit)
{
	struct fos_object *obj;
	struct fos_mem *mem;
	struct fos_cap dst;
	int ret;

	mem = user ? fos_mem_alloc_charged(cap->len, user, limit) :
	      fos_mem_alloc_kernel(cap->len);
	if (IS_ERR(mem))
		return PTR_ERR(mem);
	obj = fos_obj_create(FRACTOS_OBJ_MEMORY, NULL, &mem->c);
	if (!obj) {
		fos_mem_put(mem);
		return -ENOMEM;
	}
	dst = (struct fos_cap){
		.obj = obj, .len = cap->len, .perms = FRACTOS_PERM_ALL,
	};
	ret = fos_remote_copy_until(cap, 0, &dst, 0, cap->len, until);
	if (ret) {
		fos_obj_put(obj);
		return ret;
	}
	fos_obj_put(cap->obj);
	*cap = dst;
	fos_total_add(FOS_TOTAL_GRANT_COPIES, 1);
	return 0;
}

/*
 * The end of @ho with @ret: the ACK, what is not kept revoked, everything
 * put.  A copy delivered here is the receiver's; one this node forwarded
 * goes either way (the next node has its own, or the granter keeps its
 * Memory); one that is not announced goes (the granter will keep its
 * Memory).
 */
static void fos_handover_end(struct fos_handover *ho, int ret)
{
	struct fos_object *copy = ho->caps[ho->granted].obj;
	bool drop = ho->forward;
	u32 i;

	/* Delivered: the receiver's to revoke, as a local grant. */
	if (!ret && !ho->forward)
		fos_obj_give_to_receiver(copy, ho->obj);
	/* A granter that restarted waits for nothing of ours any more. */
	if (fos_peer_epoch(ho->peer) == ho->epoch &&
	    fos_send_ack(ho->peer, ho->cookie, ret) && !ret)
		drop = true;
	if (drop && ho->copied)
		fos_obj_revoke(copy);
	for (i = 0; i < ho->ncaps; i++)
		fos_obj_put(ho->caps[i].obj);
	atomic64_sub(ho->bytes, &fos_handover_bytes);
	kfree(ho->caps);
	if (ho->req)
		fos_req_put(ho->req);
	fos_obj_put(ho->obj);
	fos_peer_res_put(ho->peer, FOS_PEER_WORK);
	fos_peer_put(ho->peer);
	kfree(ho);
}

/* The provider's node answered a forwarded handover (process context). */
static void fos_handover_forwarded(struct fos_invoke_done *d, int result)
{
	fos_handover_end(container_of(d, struct fos_handover, done), result);
}

/*
 * Invoke @ho->obj, whose provider is on a third node, as call.c's forward
 * does, with the copy made here handed over in turn: the next node has
 * until @ho->by to deliver its own.  Return: -EINPROGRESS when
 * fos_handover_forwarded() ends @ho (it may have already), else the error.
 */
static int fos_handover_forward(struct fos_handover *ho)
{
	struct fos_object *copy = ho->caps[ho->granted].obj;
	struct fos_cap target = { .obj = ho->obj };
	struct fos_kcap **kcaps;
	u32 i;
	int ret;

	kcaps = kcalloc(max(ho->ncaps, 1U), sizeof(*kcaps), GFP_KERNEL);
	if (!kcaps)
		return -ENOMEM;
	/* struct fos_kcap is a struct fos_cap and nothing else */
	for (i = 0; i < ho->ncaps; i++)
		kcaps[i] = container_of(&ho->caps[i], struct fos_kcap, cap);
	/* Ours while the flag is up: @ho may end before the call returns. */
	fos_obj_get(copy);
	WRITE_ONCE(copy->grant_by, ho->by);
	WRITE_ONCE(copy->granting, true);
	ho->done.fn = fos_handover_forwarded;
	ret = fos_invoke_k(&target, ho->imm, ho->imm_len, kcaps, ho->ncaps,
			   &ho->done);
	/* (the message holds what it needs of the arguments now) */
	WRITE_ONCE(copy->granting, false);
	fos_obj_put(copy);
	kfree(kcaps);
	return ret;
}

static void fos_handover_work_fn(struct work_struct *work)
{
	struct fos_handover *ho = container_of(work, struct fos_handover, work);
	/* A node that forwards leaves the next one half of the time. */
	unsigned long until = ho->forward ?
			      ho->by - (ho->by - ho->arrived) / 2 : ho->by;
	struct user_struct *user = NULL;
	unsigned long limit = 0;
	int ret;

	if (!ho->forward)
		user = fos_handover_user(ho->obj, &limit);
	ret = fos_handover_take(&ho->caps[ho->granted], until, user, limit);
	ho->copied = !ret;
	if (user)
		free_uid(user);
	/*
	 * The granter waits twice the time at least: deliver before, or
	 * not at all, so that it never keeps what was delivered.
	 */
	if (!ret && time_after(jiffies, until))
		ret = -ETIMEDOUT;
	if (!ret && fos_obj_revoked(ho->obj))
		ret = -EKEYREVOKED;
	/* A granter that restarted waits for nothing of ours any more. */
	if (!ret && fos_peer_epoch(ho->peer) != ho->epoch)
		ret = -ECONNRESET;
	if (!ret && ho->forward) {
		ret = fos_handover_forward(ho);
		if (ret == -EINPROGRESS)
			return;	/* @ho is fos_handover_forwarded()'s */
	} else if (!ret) {
		ret = fos_req_deliver(ho->req, ho->imm, ho->imm_len, ho->caps,
				      ho->ncaps, false);
	}
	fos_handover_end(ho, ret);
}

/**
 * fos_handover_ms_left - what is left of a granted Memory's time
 * @obj: a Memory with @granting set (memgrant.c, or a copy of ours that
 *	fos_handover_forward() hands over in turn)
 *
 * Return: the milliseconds its receiver's node has left to deliver its
 * copy, at most FOS_WIRE_GRANT_MS_MAX, for an INVOKE's grant_ms; 0 if
 * that time is over.
 */
u32 fos_handover_ms_left(const struct fos_object *obj)
{
	unsigned long by = READ_ONCE(obj->grant_by), now = jiffies;

	if (!time_before(now, by))
		return 0;
	return min(jiffies_to_msecs(by - now), FOS_WIRE_GRANT_MS_MAX);
}

/**
 * fos_handover_granted - is @wc a Memory its sender hands over?
 * @peer: the sender's node
 * @wc: a capability of its INVOKE (fos_wire_check_invoke() passed)
 *
 * Passed on to a third node, such a capability is an ordinary one.
 *
 * Return: 1 if it is flagged FOS_WIRE_CAP_GRANTED, 0 if not, -EPROTO if
 * the flag names an object that is not the sender's own.
 */
int fos_handover_granted(struct fos_peer *peer, const struct fos_wire_cap *wc)
{
	if (!(le32_to_cpu(wc->flags) & FOS_WIRE_CAP_GRANTED))
		return 0;
	if (le32_to_cpu(wc->node) != fos_peer_node_id(peer) ||
	    le32_to_cpu(wc->epoch) != fos_peer_epoch(peer))
		return -EPROTO;
	return 1;
}

/**
 * fos_handover_queue - deliver an INVOKE once its handed-over Memory is
 *	copied here
 * @peer: the invoker's node
 * @cookie: the INVOKE's
 * @obj: our Request it invokes
 * @req: @obj's arguments, or NULL when its provider is on a third node
 * @imm: the immediates
 * @imm_len: bytes at @imm
 * @caps: the resolved capability arguments (an array of @ncaps)
 * @ncaps: entries at @caps
 * @granted: @caps[@granted] was described with FOS_WIRE_CAP_GRANTED (one
 *	at most: fos_wire_check_invoke())
 * @grant_ms: the INVOKE's: the time the copy has, from now
 *
 * Return: -EINPROGRESS when the work has taken the caller's references on
 * @obj and @req and the array @caps with the references in it (the ACK
 * goes when it is done); else nothing was taken: -EAGAIN without a work
 * slot of the invoker's or room under FOS_HANDOVER_MAX, -EFBIG for more
 * than FOS_HANDOVER_MAX, -ENOMEM.
 */
int fos_handover_queue(struct fos_peer *peer, u64 cookie,
		       struct fos_object *obj, struct fos_req *req,
		       const u8 *imm, u32 imm_len, struct fos_cap *caps,
		       u32 ncaps, u32 granted, u32 grant_ms)
{
	u64 bytes = caps[granted].len;
	struct fos_handover *ho;

	if (bytes > FOS_HANDOVER_MAX)
		return -EFBIG;
	if (atomic64_add_return(bytes, &fos_handover_bytes) >
	    FOS_HANDOVER_MAX) {
		atomic64_sub(bytes, &fos_handover_bytes);
		return -EAGAIN;
	}
	if (!fos_peer_res_get(peer, FOS_PEER_WORK)) {
		atomic64_sub(bytes, &fos_handover_bytes);
		return -EAGAIN;
	}
	ho = kzalloc(struct_size(ho, imm, imm_len), GFP_KERNEL);
	if (!ho) {
		fos_peer_res_put(peer, FOS_PEER_WORK);
		atomic64_sub(bytes, &fos_handover_bytes);
		return -ENOMEM;
	}
	ho->bytes = bytes;
	ho->peer = fos_peer_get(peer);
	ho->cookie = cookie;
	ho->arrived = jiffies;
	ho->by = ho->arrived + msecs_to_jiffies(grant_ms);
	ho->epoch = fos_peer_epoch(peer);
	ho->obj = obj;
	ho->req = req;
	ho->forward = !req;
	ho->granted = granted;
	ho->imm_len = imm_len;
	ho->ncaps = ncaps;
	ho->caps = caps;
	memcpy(ho->imm, imm, imm_len);
	INIT_WORK(&ho->work, fos_handover_work_fn);
	queue_work(fos_forward_wq, &ho->work);
	return -EINPROGRESS;
}
