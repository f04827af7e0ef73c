// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: remote objects - calls: a message to another node and its
 * answer (ACK, LOOKUP_REPLY or GRANT_REPLY), waited for in the caller's
 * context (fos_rpc()) or delivered to a callback (fos_rpc_async()).
 *
 * A call is in fos_rpcs, by its cookie, until it is answered.  Three
 * things can answer it: the peer's reply (fos_rpc_complete(), from the
 * fabric's receive context), the peer's death (fos_rpcs_fail_node()), and
 * the caller's patience (the wait's timeout, or an asynchronous call's
 * timer).  Whichever comes first under fos_rpcs' xa_lock decides the
 * status; the others find the call gone, or already completed.
 *
 * An asynchronous call's answer runs its callback on fos_rpc_wq: the
 * reply and the death queue @work there; the timer is a work item of that
 * queue itself and calls it directly.  @work cancels the timer (waiting
 * for a run that lost the race) before the callback may free the call.
 * A reply that comes while the caller is still in fos_fabric_send() finds
 * the call in FOS_RPC_SENDING: it records the status and leaves the
 * callback to the sender, which queues it once the send returned, so the
 * callback never runs inside fos_rpc_async().
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include "../fos.h"
#include "../fabric.h"
#include "wire.h"
#include "pri.h"

/*
 * Calls in flight by cookie; xa_lock guards answering them.  Answers may
 * come in the receive completion's softirq ("Receiving in softirq" in
 * fabric/rx.c): the lock is taken with bottom halves off everywhere.
 */
DEFINE_XARRAY_FLAGS(fos_rpcs, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_BH);
/*
 * Cookies are handed out cyclically, so that an answer that comes after
 * its caller gave up (ETIMEDOUT: a forwarded invocation's ACK may, see
 * "Forwarding" in remote.c) finds no call rather than a newer one that
 * was given the same cookie.
 */
static u32 fos_rpc_next;

static int fos_rpc_alloc(u32 *cookie, struct fos_rpc_wait *w)
{
	/* Never 0: that cookie names a call that wants no answer. */
	int ret = xa_alloc_cyclic_bh(&fos_rpcs, cookie, w, XA_LIMIT(1, U32_MAX),
				  &fos_rpc_next, GFP_KERNEL);

	return ret < 0 ? ret : 0;	/* 1: it wrapped */
}

/* Where asynchronous calls are answered. */
struct workqueue_struct *fos_rpc_wq;

/* The state of an asynchronous call (fos_rpc_wait.state). */
enum {
	FOS_RPC_SENDING,	/* the caller is in fos_fabric_send() */
	FOS_RPC_EARLY,		/* answered while sending: the caller queues */
	FOS_RPC_WAITING,	/* sent; the timer runs */
};

static void fos_rpc_init(struct fos_rpc_wait *w, struct fos_peer *peer,
			 u8 type)
{
	init_completion(&w->done);
	w->sent = false;
	w->answered = false;
	w->node = fos_peer_node_id(peer);
	/* Only the answer to this kind of call may complete it. */
	w->reply = type == FOS_WIRE_GRANT ? FOS_WIRE_GRANT_REPLY :
		   type == FOS_WIRE_LOOKUP || type == FOS_WIRE_DERIVE ?
		   FOS_WIRE_LOOKUP_REPLY :
		   FOS_WIRE_ACK;
	w->status = 0;
	memset(&w->cap, 0, sizeof(w->cap));
	memset(&w->grant, 0, sizeof(w->grant));
	w->data = NULL;
	w->data_max = 0;
	w->data_len = 0;
}

/*
 * What the caller sees of fos_fabric_send()'s failure.  A signal while
 * waiting for a credit is EINTR, never a restart; ETIMEDOUT (no credit
 * for 5 s), EMSGSIZE and ENOMEM are the caller's to see; any other failure
 * ended the connection.
 */
static int fos_rpc_send_errno(int ret)
{
	if (ret == -ERESTARTSYS)
		return -EINTR;
	if (ret && ret != -ETIMEDOUT && ret != -EMSGSIZE && ret != -ENOMEM)
		return -EHOSTUNREACH;
	return ret;
}

/*
 * A peer's status is an errno; kernel-internal codes are not, and neither
 * is EINPROGRESS, which the callers take for "an answer comes later"
 * (a peer that answered it would leave them waiting for nothing).
 */
static int fos_rpc_status(const struct fos_rpc_wait *w)
{
	return w->status <= -ERESTARTSYS || w->status == -EINPROGRESS ?
	       -EPROTO : w->status;
}

/*
 * How long a call waits for its answer: @timeout, and the grace period
 * of a link that is down meanwhile, since what was sent is then sent
 * again and answered once the link is back ("Link loss" in
 * Documentation/failures.rst).
 */
static unsigned long fos_rpc_deadline(unsigned long timeout)
{
	return timeout + msecs_to_jiffies(fos_fabric_link_grace());
}

/* fos_busy_poll()'s condition for a caller: the answer is in. */
static bool fos_rpc_ready(void *arg)
{
	return completion_done(arg);
}

/*
 * The answers worth a busy poll (busypoll.c): an INVOKE's ACK, a LOOKUP's
 * or a DERIVE's reply and an inline copy's bytes come as soon as the
 * owner's handler ran.  A GRANT of a region registers memory first, and the RDMA READ that
 * follows dwarfs the wait; a REVOKE_REQ waits for keys to die; a
 * third-party COPY for the whole copy.
 */
static bool fos_rpc_spins(u8 type, const void *data)
{
	return type == FOS_WIRE_INVOKE || type == FOS_WIRE_LOOKUP ||
	       type == FOS_WIRE_DERIVE || data;
}

/*
 * Send @payload to @peer and wait for the answer (ACK or LOOKUP_REPLY).
 * Return: the answer's status, -EHOSTUNREACH (not connected),
 * -ECONNRESET (the node went down meanwhile), -ETIMEDOUT, or another
 * error of fos_fabric_send().
 */
static int __fos_rpc(struct fos_peer *peer, u8 type, const void *payload,
		     u32 len, struct fos_rpc_wait *w, unsigned long timeout,
		     void *data, u32 data_max)
{
	long left;
	u32 cookie;
	int ret;

	might_sleep();

	fos_rpc_init(w, peer, type);
	w->fn = NULL;
	w->data = data;
	w->data_max = data_max;
	ret = fos_rpc_alloc(&cookie, w);
	if (ret)
		return ret;
	ret = fos_fabric_send(peer, type, cookie, payload, len, NULL,
			      FOS_SEND_WAIT);
	w->sent = !ret;
	ret = fos_rpc_send_errno(ret);
	if (!ret) {
		/* Delivered or not, the answer tells: wait for it. */
		if (fos_rpc_spins(type, data))
			fos_busy_poll(fos_rpc_ready, &w->done);
		timeout = fos_rpc_deadline(timeout);
		left = wait_for_completion_killable_timeout(&w->done,
							    timeout);
		if (!left)
			ret = -ETIMEDOUT;
		else if (left < 0)
			ret = left;
	}
	/* After this, no answer can reach @w. */
	xa_erase_bh(&fos_rpcs, cookie);
	if (ret && try_wait_for_completion(&w->done))
		ret = 0;
	if (ret)
		return ret;
	return fos_rpc_status(w);
}

/**
 * fos_rpc_post - send a call whose answer nobody waits for
 * @peer: the receiver
 * @type: the message type
 * @payload: the message
 * @len: bytes at @payload
 *
 * Its cookie is 0, which fos_rpc_alloc() never hands out: the receiver
 * answers only a failure, which fos_ack_recv() counts.  Sleeps for a
 * send credit (5 s at most).
 *
 * Return: 0 (sent), or fos_rpc_send_errno()'s (nothing was sent).
 */
int fos_rpc_post(struct fos_peer *peer, u8 type, const void *payload,
		 u32 len)
{
	might_sleep();
	return fos_rpc_send_errno(fos_fabric_send(peer, type, 0, payload, len,
						  NULL, FOS_SEND_WAIT));
}

int fos_rpc_timeout(struct fos_peer *peer, u8 type,
		    const void *payload, u32 len,
		    struct fos_rpc_wait *w, unsigned long timeout)
{
	return __fos_rpc(peer, type, payload, len, w, timeout, NULL, 0);
}

/*
 * As fos_rpc(), for a GRANT that asks for the bytes: an inline answer puts
 * up to @data_max of them at @data (@w->data_len says how many).
 */
int fos_rpc_data(struct fos_peer *peer, u8 type, const void *payload,
		 u32 len, struct fos_rpc_wait *w, void *data, u32 data_max)
{
	return __fos_rpc(peer, type, payload, len, w, FOS_REMOTE_TIMEOUT,
			 data, data_max);
}

int fos_rpc(struct fos_peer *peer, u8 type, const void *payload,
	    u32 len, struct fos_rpc_wait *w)
{
	return fos_rpc_timeout(peer, type, payload, len, w,
				FOS_REMOTE_TIMEOUT);
}

/* An asynchronous call was answered (not by its timer): run its callback. */
static void fos_rpc_async_work(struct work_struct *work)
{
	struct fos_rpc_wait *w = container_of(work, struct fos_rpc_wait,
					      work);

	/* A timer run that lost the race must be over before @w is freed. */
	cancel_delayed_work_sync(&w->timer);
	w->status = fos_rpc_status(w);
	w->fn(w);
}

static void fos_rpc_async_timeout(struct work_struct *work)
{
	struct fos_rpc_wait *w = container_of(to_delayed_work(work),
					      struct fos_rpc_wait, timer);
	bool mine;

	xa_lock_bh(&fos_rpcs);
	mine = xa_load(&fos_rpcs, w->cookie) == w;
	if (mine)
		__xa_erase(&fos_rpcs, w->cookie);
	xa_unlock_bh(&fos_rpcs);
	if (!mine)
		return;		/* answered: @work runs the callback */
	w->status = -ETIMEDOUT;
	w->fn(w);
}

/*
 * Answer @w with @status; the caller holds fos_rpcs' xa_lock and found @w
 * unanswered (fos_rpc_open()).
 */
static void fos_rpc_answer_locked(struct fos_rpc_wait *w, int status)
{
	lockdep_assert_held(&fos_rpcs.xa_lock);
	w->status = status;
	if (!w->fn) {
		complete(&w->done);
		return;
	}
	__xa_erase(&fos_rpcs, w->cookie);
	if (w->state == FOS_RPC_SENDING)
		w->state = FOS_RPC_EARLY;
	else
		queue_work(fos_rpc_wq, &w->work);
}

/* Is @w, found in fos_rpcs, still to be answered?  Under its xa_lock. */
static bool fos_rpc_open(struct fos_rpc_wait *w)
{
	/* An asynchronous call leaves the table when it is answered. */
	return w->fn || !completion_done(&w->done);
}

/**
 * fos_rpc_async - send @payload to @peer; @w->fn gets the answer
 * @peer: the node that answers
 * @type: the message type (its answer's type follows from it)
 * @payload: the message
 * @len: bytes at @payload
 * @w: the call, with @w->fn set; the caller's until @w->fn runs
 *
 * Process context: it may wait for a send credit (5 s at most), never for
 * the answer.  @w->fn then runs once, in process context on fos_rpc_wq,
 * with @w->status the answer's status, -ECONNRESET (the node went down)
 * or -ETIMEDOUT (no answer for FOS_REMOTE_TIMEOUT plus the grace period:
 * fos_rpc_deadline()); it may free @w.
 *
 * Return: -EINPROGRESS (sent: @w->fn will run), or why nothing was sent
 * (as fos_rpc(); @w->fn will not run).
 */
int fos_rpc_async(struct fos_peer *peer, u8 type, const void *payload,
		  u32 len, struct fos_rpc_wait *w)
{
	bool early;
	int ret;

	might_sleep();
	if (WARN_ON_ONCE(!w->fn))
		return -EINVAL;

	fos_rpc_init(w, peer, type);
	INIT_WORK(&w->work, fos_rpc_async_work);
	INIT_DELAYED_WORK(&w->timer, fos_rpc_async_timeout);
	w->state = FOS_RPC_SENDING;
	ret = fos_rpc_alloc(&w->cookie, w);
	if (ret)
		return ret;
	ret = fos_fabric_send(peer, type, w->cookie, payload, len, NULL,
			      FOS_SEND_WAIT);
	ret = fos_rpc_send_errno(ret);

	xa_lock_bh(&fos_rpcs);
	if (ret) {
		/* Not sent: whatever answered it meanwhile is moot. */
		if (w->state == FOS_RPC_SENDING)
			__xa_erase(&fos_rpcs, w->cookie);
		xa_unlock_bh(&fos_rpcs);
		return ret;
	}
	w->sent = true;
	early = w->state == FOS_RPC_EARLY;
	/*
	 * Before the work is queued: fos_rpc_async_work() takes no lock, and
	 * its callback may free @w at once.
	 */
	w->state = FOS_RPC_WAITING;
	if (early)
		queue_work(fos_rpc_wq, &w->work);
	else
		queue_delayed_work(fos_rpc_wq, &w->timer,
				   fos_rpc_deadline(FOS_REMOTE_TIMEOUT));
	/* From here on @w may be answered and freed. */
	xa_unlock_bh(&fos_rpcs);
	return -EINPROGRESS;
}

/* Return: whether a caller took the answer. */
bool fos_rpc_complete(struct fos_peer *peer, u8 reply, u64 cookie,
		      int status, const struct fos_cap *cap,
		      const struct fos_wire_grant_reply *grant,
		      const void *data, u32 data_len)
{
	struct fos_rpc_wait *w;
	bool taken = false;

	if (cookie > U32_MAX)
		return false;
	xa_lock_bh(&fos_rpcs);
	w = xa_load(&fos_rpcs, cookie);
	if (w && w->node == fos_peer_node_id(peer) && w->reply == reply &&
	    fos_rpc_open(w)) {
		w->answered = true;
		if (cap)
			w->cap = *cap;
		if (grant)
			w->grant = *grant;
		/* Bytes only for the call that asked, as many as it asked. */
		if (data_len && (!w->data || data_len > w->data_max)) {
			status = -EPROTO;
		} else if (data_len) {
			memcpy(w->data, data, data_len);
			w->data_len = data_len;
		}
		fos_rpc_answer_locked(w, status);
		taken = true;
	}
	xa_unlock_bh(&fos_rpcs);
	return taken;
}

/* @node is gone: every call waiting on it fails with ECONNRESET now. */
void fos_rpcs_fail_node(u32 node)
{
	struct fos_rpc_wait *w;
	unsigned long idx;

	xa_lock_bh(&fos_rpcs);
	xa_for_each(&fos_rpcs, idx, w)
		if (w->node == node && fos_rpc_open(w))
			fos_rpc_answer_locked(w, -ECONNRESET);
	xa_unlock_bh(&fos_rpcs);
}
