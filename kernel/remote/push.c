// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: remote objects - pushed copies: a small copy from this node's
 * Memory into another node's goes with the COPY (FOS_COPY_INLINE), and
 * may carry the continuations that node invokes once the bytes are in
 * (FOS_COPY_THEN); the receiver serves both in its receive path ("Pushed
 * copies" in wire.h).  The pulled copies are copy.c's.
 */
#include <linux/slab.h>
#include "../fos.h"
#include "../memory.h"
#include "../fabric.h"
#include "trace.h"
#include "wire.h"
#include "wire_check.h"
#include "pri.h"

/* A pushed COPY's bytes (@c's flags set): @len of @src from @soff. */
static int fos_copy_push_bytes(const struct fos_cap *src, u64 soff,
			       struct fos_wire_copy *c, u64 len)
{
	struct fos_mem *mem = fos_obj_get_mem(src->obj);
	int ret;

	if (IS_ERR(mem))
		return PTR_ERR(mem);
	ret = fos_mem_read_buf(mem, src->off + soff,
			       (void *)fos_wire_copy_bytes(c), len);
	fos_mem_put(mem);
	return ret;
}

/*
 * A small copy from our own Memory into another node's: @c (room for
 * @len bytes after it) carries the bytes to @peer, the destination's
 * owner, which writes them and answers ACK ("Pushed copies" in wire.h).
 * The source is named to nobody: only the destination's view goes.
 */
int fos_copy_push(struct fos_peer *peer, u32 pepoch,
		  const struct fos_cap *src, u64 soff,
		  const struct fos_cap *dst, u64 doff, u64 len,
		  struct fos_wire_copy *c)
{
	u32 node = fos_peer_node_id(peer);
	struct fos_rpc_wait w;
	int ret;

	ret = fos_copy_push_bytes(src, soff, c, len);
	if (ret)
		return ret;
	ret = fos_copy_describe(dst, node, pepoch, &c->dst);
	if (ret)
		return ret;
	c->dst_off = cpu_to_le64(doff);
	c->len = cpu_to_le64(len);
	ret = fos_rpc(peer, FOS_WIRE_COPY, c, sizeof(*c) + len, &w);
	ret = fos_copy_errno(ret);
	if (!ret)
		fos_total_add(FOS_TOTAL_INLINE_COPIES, 1);
	fos_copy_undescribe(&c->dst, node, pepoch);
	return ret;
}

/*
 * Can @cap be one of a COPY's continuations for node @node: a Request
 * proxy of its, not revoked, and not a local child of one (whose
 * arguments only this node knows)?  *@iv becomes the invocation's name.
 */
static bool fos_then_target(const struct fos_cap *cap, u32 node,
			    struct fos_wire_invoke *iv)
{
	struct fos_object *obj = cap->obj;
	struct fractos_oid oid;

	if (obj->type != FRACTOS_OBJ_REQUEST || fos_obj_root(obj) != obj ||
	    !obj->proxy || obj->proxy->node != node || fos_obj_revoked(obj))
		return false;
	fos_obj_oid(obj, &oid);
	iv->oid = cpu_to_le64(oid.id);
	iv->epoch = cpu_to_le32(oid.epoch);
	return true;
}

/* An invocation of a COPY's continuations: its slot's bytes. */
static u32 fos_then_slot(u32 imm_len)
{
	return ALIGN(sizeof(struct fos_wire_invoke) + imm_len, 8);
}

static void *fos_then_fill(void *at, const void *imm, u32 imm_len)
{
	struct fos_wire_invoke *iv = at;

	iv->imm_len = cpu_to_le32(imm_len);
	memcpy(iv + 1, imm, imm_len);
	return (u8 *)at + fos_then_slot(imm_len);
}

/*
 * A larger copy that continues: @c (its continuations filled in, @size
 * bytes) names @src for @peer to pull, and waits for the ACK, which comes
 * after the continuation (the source must live until the pull is over).
 * Returns 0 once the COPY went, whatever its answer: the continuation is
 * the receiver's then.
 */
static int fos_copy_then_pull(struct fos_peer *peer, u32 pepoch,
			      const struct fos_cap *src, u64 soff,
			      struct fos_wire_copy *c, size_t size)
{
	u32 node = fos_peer_node_id(peer);
	u64 len = le64_to_cpu(c->len);
	struct fos_rpc_wait w = {};
	int ret;

	ret = fos_copy_describe(src, node, pepoch, &c->src);
	if (ret)
		return ret;
	c->src_off = cpu_to_le64(soff);
	/* Ten seconds, plus one per MiB, as for any COPY. */
	ret = fos_rpc_timeout(peer, FOS_WIRE_COPY, c, size, &w,
			      FOS_REMOTE_TIMEOUT +
			      min_t(u64, len >> 20, 3600) * HZ);
	fos_copy_undescribe(&c->src, node, pepoch);
	return w.sent ? 0 : ret;
}

/*
 * A larger copy that continues, into a region the destination's node
 * keeps for our writes ("Kept regions" in kept.c): the bytes of @src go by
 * RDMA WRITE into @c's destination, then @c's first continuation as an
 * INVOKE without an answer, once the WRITEs completed (the peer's NIC has
 * the bytes): one message where the COPY and its pull took five.  Returns
 * 0 once the INVOKE went, -ENOENT for no region (or a transfer that did
 * not complete: the COPY then does it all again), or the INVOKE's error
 * (the bytes are written, nothing was invoked).
 */
static int fos_copy_then_write(struct fos_peer *peer,
			       const struct fos_cap *src, u64 soff,
			       const struct fos_wire_copy *c)
{
	const struct fos_wire_then *t = (const void *)(c + 1);
	const struct fos_wire_invoke *done = (const void *)(t + 1);
	struct fos_mem *mem;
	int ret;

	mem = fos_obj_get_mem(src->obj);
	if (IS_ERR(mem))
		return -ENOENT;
	ret = fos_kept_copy(peer, &c->dst, le64_to_cpu(c->dst_off), mem,
			    src->off + soff, le64_to_cpu(c->len), true);
	fos_mem_put(mem);
	if (ret)
		return -ENOENT;
	ret = fos_rpc_post(peer, FOS_WIRE_INVOKE, done,
			   sizeof(*done) + le32_to_cpu(done->imm_len));
	if (!ret)
		fos_total_add(FOS_TOTAL_NOACK_INVOKES, 1);
	return ret;
}

/**
 * fos_remote_copy_then - a copy that carries its continuations
 * @src: the source view (ours; READ and the range checked by the caller)
 * @soff: first byte, from the start of @src
 * @dst: the destination view (another node's; WRITE and the range checked)
 * @doff: where it goes, from the start of @dst
 * @len: bytes, non-zero
 * @then: the continuations, Requests of the destination's owner
 *
 * One COPY with FOS_COPY_THEN: the destination's owner copies the bytes,
 * then invokes @then->done, or @then->err with the errno ("Copies that
 * continue" in wire.h).  At most copy_inline_max bytes go in the COPY
 * (FOS_COPY_INLINE, cookie 0), and nothing waits; a larger copy is
 * pulled from @src, and its ACK is waited for (the source must live
 * until then), but the continuation is the receiver's all the same; with
 * a region the receiver keeps for our writes (copy_cache_ms), the bytes
 * go by RDMA WRITE and the continuation as an INVOKE of its own.  A
 * refusal of the invocation is counted as a NOACK invocation's
 * (totals/noack_refused).  Process context.
 *
 * Return: 0 (sent: the destination's node invokes one of them), or
 * -EOPNOTSUPP (not such a copy: the caller copies and invokes itself), or
 * an error from before anything was sent (then nothing was invoked).
 */
int fos_remote_copy_then(const struct fos_cap *src, u64 soff,
			 const struct fos_cap *dst, u64 doff, u64 len,
			 const struct fos_copy_then *then)
{
	struct fos_object *droot = fos_obj_root(dst->obj);
	struct fos_wire_invoke done = {}, err = {};
	struct fos_wire_copy *c;
	struct fos_wire_then *t;
	struct fos_peer *peer;
	u32 node, pepoch;
	size_t size;
	bool push;
	void *at;
	int ret;

	might_sleep();
	if (!droot->proxy || fos_obj_root(src->obj)->proxy || !len)
		return -EOPNOTSUPP;
	push = len <= fos_copy_inline_max();
	node = droot->proxy->node;
	if (!fos_then_target(then->done, node, &done) ||
	    !fos_then_target(then->err, node, &err) ||
	    then->done_len > FOS_WIRE_MAX_IMM ||
	    then->err_len > FOS_WIRE_MAX_IMM)
		return -EOPNOTSUPP;
	if ((u64)then->errno_off + sizeof(s64) > then->err_len)
		return -EINVAL;
	size = sizeof(*c) + sizeof(*t) + fos_then_slot(then->done_len) +
	       fos_then_slot(then->err_len) + (push ? len : 0);
	if (size > FOS_FABRIC_PAYLOAD_MAX)
		return -EOPNOTSUPP;
	peer = fos_peer_find(node);
	if (!peer)
		return -EHOSTUNREACH;
	pepoch = fos_peer_epoch(peer);
	c = kzalloc(size, GFP_KERNEL);
	if (!c) {
		ret = -ENOMEM;
		goto out_peer;
	}
	t = (void *)(c + 1);
	t->done_len = cpu_to_le32(fos_then_slot(then->done_len));
	t->err_len = cpu_to_le32(fos_then_slot(then->err_len));
	t->errno_off = cpu_to_le32(then->errno_off);
	at = t + 1;
	*(struct fos_wire_invoke *)at = done;
	at = fos_then_fill(at, then->done_imm, then->done_len);
	*(struct fos_wire_invoke *)at = err;
	fos_then_fill(at, then->err_imm, then->err_len);
	c->flags = cpu_to_le32(FOS_COPY_THEN | (push ? FOS_COPY_INLINE : 0));
	c->dst_off = cpu_to_le64(doff);
	c->len = cpu_to_le64(len);

	ret = push ? fos_copy_push_bytes(src, soff, c, len) : 0;
	if (!ret)
		ret = fos_copy_describe(dst, node, pepoch, &c->dst);
	if (!ret) {
		ret = push || !fos_kept_on() ? -ENOENT :
		      fos_copy_then_write(peer, src, soff, c);
		if (ret == -ENOENT)
			ret = push ? fos_rpc_post(peer, FOS_WIRE_COPY, c, size) :
			      fos_copy_then_pull(peer, pepoch, src, soff, c,
						 size);
		fos_copy_undescribe(&c->dst, node, pepoch);
	}
	if (!ret) {
		if (push)
			fos_total_add(FOS_TOTAL_INLINE_COPIES, 1);
		fos_total_add(FOS_TOTAL_COPY_THEN, 1);
	}
	kfree(c);
out_peer:
	trace_fos_remote_copy(node, len, ret);
	fos_peer_put(peer);
	return ret;
}

/*
 * A pushed COPY: the bytes are in the message.  Served here, in the
 * receive path (a few pages copied, no wait for the fabric): the view
 * checked as for any COPY, then written.
 */
static int fos_copy_serve_inline(struct fos_peer *peer,
				 const struct fos_wire_copy *c)
{
	u64 doff = le64_to_cpu(c->dst_off), len = le64_to_cpu(c->len);
	struct fos_mem *mem;
	struct fos_cap dst;
	int ret;

	ret = fos_copy_local_view(peer, &c->dst, FRACTOS_PERM_WRITE, doff, len,
				  &dst);
	if (ret)
		return ret;
	mem = fos_obj_get_mem(dst.obj);
	if (IS_ERR(mem)) {
		ret = PTR_ERR(mem);
	} else {
		ret = mem->writable ?
		      fos_mem_write_buf(mem, dst.off + doff,
					fos_wire_copy_bytes(c), len) :
		      -EACCES;
		fos_mem_put(mem);
	}
	fos_obj_put(dst.obj);
	return ret;
}

/*
 * A COPY's continuations (FOS_COPY_THEN, @t and the invocations after
 * it), the bytes written (@status 0) or not: deliver the one that says
 * so, from @peer as an INVOKE with no answer (see "Copies that continue"
 * in wire.h); answer only a refusal, with @cookie (a pushed COPY's, or 0).
 */
void fos_copy_then_deliver(struct fos_peer *peer, u64 cookie,
			   const struct fos_wire_then *t, int status)
{
	const struct fos_wire_invoke *iv = (const void *)(t + 1);
	u32 off = le32_to_cpu(t->errno_off), slot = le32_to_cpu(t->err_len);
	struct fos_wire_invoke *err = NULL;
	s64 e = status;
	int ret;

	if (status) {
		iv = (const void *)((const u8 *)iv + le32_to_cpu(t->done_len));
		if (off != FOS_THEN_NO_ERRNO) {
			/* Checked: the errno fits the immediates. */
			err = kmemdup(iv, slot, GFP_KERNEL);
			if (!err) {
				ret = -ENOMEM;
				goto out;
			}
			memcpy((u8 *)(err + 1) + off, &e, sizeof(e));
			iv = err;
		}
	}
	ret = fos_invoke_deliver(peer, 0, iv);
	kfree(err);
out:
	if (ret == -EINPROGRESS)
		ret = 0;	/* forwarded, without an answer */
	fos_send_ack(peer, cookie, ret);
}

/*
 * A pushed COPY from @peer (the receive path): write its bytes, then
 * answer, or deliver the continuation it carries.
 */
void fos_copy_recv_inline(struct fos_peer *peer, u64 cookie,
			  const struct fos_wire_copy *c)
{
	int ret = fos_copy_serve_inline(peer, c);

	if (fos_wire_copy_then(c)) {
		fos_copy_then_deliver(peer, cookie, (const void *)(c + 1), ret);
		return;
	}
	fos_send_ack(peer, cookie, ret);
}
