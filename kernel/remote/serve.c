// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: remote objects - COPY, GRANT and LOOKUP served for other
 * nodes: in the receive path when they are inline, else in process
 * context on fos_copy_wq, their receive credit held until then (see
 * "Remote copies" in remote.c, "Held credits" in fabric/rx.c).
 */
#include <linux/slab.h>
#include <linux/workqueue.h>
#include "../fos.h"
#include "../memory.h"
#include "../fabric.h"
#include "wire.h"
#include "wire_check.h"
#include "pri.h"

/* COPY on the destination's owner. */
static int fos_copy_serve(struct fos_peer *peer, const struct fos_wire_copy *c)
{
	u64 soff = le64_to_cpu(c->src_off), doff = le64_to_cpu(c->dst_off);
	u64 len = le64_to_cpu(c->len);
	struct fos_cap dst, src;
	int ret;

	ret = fos_copy_local_view(peer, &c->dst, FRACTOS_PERM_WRITE, doff, len,
				  &dst);
	if (ret)
		return ret;
	if (le32_to_cpu(c->src.node) == fos_node_id && !fos_fabric_loopback()) {
		ret = fos_copy_local_view(peer, &c->src, FRACTOS_PERM_READ,
					  soff, len, &src);
		if (!ret) {
			ret = fos_mem_copy_local(&src, soff, &dst, doff, len,
						 false);
			fos_obj_put(src.obj);
		}
	} else {
		ret = fos_copy_pull(&c->src, soff, &dst, doff, len, 0, false);
	}
	fos_obj_put(dst.obj);
	return ret;
}

/**
 * struct fos_copy_work - a COPY, GRANT or LOOKUP served in process context
 * @work: on fos_copy_wq
 * @peer: the sender (a reference)
 * @type: FOS_WIRE_COPY, FOS_WIRE_GRANT or FOS_WIRE_LOOKUP
 * @cookie: the sender's cookie
 * @msg: the payload, copied whole: @msg.copy (COPY), @msg.grant (GRANT), or
 *	@msg.lookup (LOOKUP) and @msg.name, room for the name that follows it
 * @then: a COPY's continuations (FOS_COPY_THEN), a copy of what followed
 *	it, or NULL
 */
struct fos_copy_work {
	struct work_struct work;
	struct fos_peer *peer;
	u8 type;
	u64 cookie;
	struct fos_wire_then *then;
	union {
		struct fos_wire_copy copy;
		struct fos_wire_grant grant;
		struct {
			struct fos_wire_lookup lookup;
			char name[FOS_WIRE_NAME_MAX];
		};
	} msg;
};

static void fos_copy_reply(struct fos_peer *peer, u8 type, u64 cookie,
			   int status, struct fos_wire_grant_reply *r)
{
	struct fos_wire_lookup_reply lr = { .status = cpu_to_le32(-status) };
	struct fos_wire_ack ack = { .status = cpu_to_le32(-status) };

	if (type == FOS_WIRE_LOOKUP) {	/* failed before it was served */
		fos_fabric_send(peer, FOS_WIRE_LOOKUP_REPLY, cookie, &lr,
				sizeof(lr), NULL, FOS_SEND_QUEUE);
		return;
	}
	if (type == FOS_WIRE_COPY) {
		fos_fabric_send(peer, FOS_WIRE_ACK, cookie, &ack, sizeof(ack),
				NULL, FOS_SEND_QUEUE);
		return;
	}
	if (status)
		memset(r, 0, sizeof(*r));
	r->status = cpu_to_le32(-status);
	fos_fabric_send(peer, FOS_WIRE_GRANT_REPLY, cookie, r, sizeof(*r),
			NULL, FOS_SEND_QUEUE);
}

static void fos_copy_work_fn(struct work_struct *work)
{
	struct fos_copy_work *cw = container_of(work, struct fos_copy_work,
						work);
	struct fos_wire_grant_reply r = {};
	int ret;

	if (cw->type == FOS_WIRE_LOOKUP) {
		fos_lookup_serve(cw->peer, cw->cookie, &cw->msg.lookup);
		goto out;
	}
	if (cw->type == FOS_WIRE_COPY)
		ret = fos_copy_serve(cw->peer, &cw->msg.copy);
	else
		ret = fos_grant_serve(cw->peer, &cw->msg.grant, &r);
	/* The continuation first: the ACK only frees the source. */
	if (cw->then)
		fos_copy_then_deliver(cw->peer, 0, cw->then, ret);
	/* A reply that cannot go leaves the caller to its timeout. */
	fos_copy_reply(cw->peer, cw->type, cw->cookie, ret, &r);
out:
	fos_peer_res_put(cw->peer, FOS_PEER_WORK);
	fos_fabric_credit_done(cw->peer);
	fos_peer_put(cw->peer);
	kfree(cw->then);
	kfree(cw);
}

/*
 * A COPY, GRANT or LOOKUP refused before it was served, with @status: a
 * COPY's continuation is told so all the same (it is invoked exactly
 * once), then the sender.
 */
static void fos_copy_refuse(struct fos_peer *peer,
			    const struct fos_rx_info *rx, const void *payload,
			    int status)
{
	struct fos_wire_grant_reply r = {};

	if (rx->type == FOS_WIRE_COPY && fos_wire_copy_then(payload))
		fos_copy_then_deliver(peer, 0, (const void *)
				      ((const struct fos_wire_copy *)payload + 1),
				      status);
	fos_copy_reply(peer, rx->type, rx->cookie, status, &r);
	fos_fabric_credit_done(peer);
}

/*
 * COPY, GRANT and LOOKUP wait for the fabric (but the inline COPY and
 * GRANT, served in the receive path): they run on fos_copy_wq.
 * Their receive credit is held until they are served, or refused here
 * (fos_fabric_credit_done(), "Held credits" in fabric/rx.c).
 */
static void fos_copy_queue(struct fos_peer *peer, const struct fos_rx_info *rx,
			   const void *payload, u32 len)
{
	struct fos_copy_work *cw;
	int ret = -EAGAIN;

	if (!fos_peer_res_get(peer, FOS_PEER_WORK))
		goto refuse;
	ret = -ENOMEM;
	cw = kzalloc(sizeof(*cw), GFP_KERNEL);
	if (!cw)
		goto refuse_slot;
	/* A COPY's continuations (checked by the receive path) go apart. */
	if (rx->type == FOS_WIRE_COPY && fos_wire_copy_then(payload)) {
		cw->then = kmemdup((const struct fos_wire_copy *)payload + 1,
				   len - sizeof(struct fos_wire_copy),
				   GFP_KERNEL);
		len = sizeof(struct fos_wire_copy);
		if (!cw->then)
			goto refuse_free;
	}
	/*
	 * Into the union, not one of its members: a LOOKUP's name runs past
	 * struct fos_wire_copy (FORTIFY_SOURCE warns of a field-spanning
	 * write; found by two fuzzers looking names up on each other).
	 */
	ret = -EPROTO;
	if (WARN_ON_ONCE(len > sizeof(cw->msg)))
		goto refuse_free;
	cw->peer = fos_peer_get(peer);	/* the one charged the slot */
	cw->type = rx->type;
	cw->cookie = rx->cookie;
	memcpy(&cw->msg, payload, len);	/* validated by the receive path */
	INIT_WORK(&cw->work, fos_copy_work_fn);
	queue_work(fos_copy_wq, &cw->work);
	return;

refuse_free:
	kfree(cw->then);
	kfree(cw);
refuse_slot:
	fos_peer_res_put(peer, FOS_PEER_WORK);
refuse:
	fos_copy_refuse(peer, rx, payload, ret);
}

void fos_copy_recv(struct fos_peer *peer, const struct fos_rx_info *rx,
		   const void *payload, u32 len)
{
	if (!fos_wire_copy_inline(payload)) {
		fos_copy_queue(peer, rx, payload, len);
		return;
	}
	fos_copy_recv_inline(peer, rx->cookie, payload);
	fos_fabric_credit_done(peer);
}

/*
 * A GRANT of a region waits for its registration: it runs on fos_copy_wq.
 * An inline one reads a few pages and queues its reply (fos_grant_inline()
 * never waits for a credit): served here, in the receive path, without a
 * work item's hop.
 */
void fos_grant_recv(struct fos_peer *peer, const struct fos_rx_info *rx,
		    const void *payload, u32 len)
{
	const struct fos_wire_grant *g = payload;
	struct fos_wire_grant_reply r = {};
	int ret;

	if (!(le32_to_cpu(g->flags) & FOS_GRANT_INLINE)) {
		fos_copy_queue(peer, rx, payload, len);
		return;
	}
	ret = fos_grant_inline(peer, rx->cookie, g);
	if (ret)
		fos_copy_reply(peer, FOS_WIRE_GRANT, rx->cookie, ret, &r);
	fos_fabric_credit_done(peer);
}

void fos_lookup_recv(struct fos_peer *peer, const struct fos_rx_info *rx,
		     const void *payload, u32 len)
{
	fos_copy_queue(peer, rx, payload, len);
}
