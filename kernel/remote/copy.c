// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: remote objects - memory_copy across nodes: the caller and
 * the puller's RDMA READs (see "Remote copies" in remote.c).  COPY,
 * GRANT and LOOKUP served for other nodes are serve.c's, pushed copies
 * push.c's, kept regions kept.c's.
 */
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include "../fos.h"
#include "../memory.h"
#include "../fabric.h"
#include "trace.h"
#include "wire.h"
#include "wire_check.h"
#include "pri.h"

/* ---- memory_copy across nodes (see "Remote copies" in remote.c) ---- */

struct workqueue_struct *fos_copy_wq;

/*
 * A Memory view of ours named on the wire by @peer: the object, checked
 * against the view, with rights @perm and [@off, @off + @len) inside it.
 */
int fos_copy_local_view(struct fos_peer *peer,
			const struct fos_wire_cap *wc, u32 perm,
			u64 off, u64 len, struct fos_cap *out)
{
	struct fos_view v = {
		.off = le64_to_cpu(wc->off), .len = le64_to_cpu(wc->len),
		.perms = le32_to_cpu(wc->perms),
	};
	struct fos_object *obj;
	int ret;

	if (le32_to_cpu(wc->node) != fos_node_id)
		return -EPROTO;
	if (le32_to_cpu(wc->epoch) != fos_epoch)
		return -EKEYREVOKED;
	obj = fos_export_get(le64_to_cpu(wc->oid), peer, &v);
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	if (!obj)
		return -EKEYREVOKED;
	out->obj = obj;
	out->off = le64_to_cpu(wc->off);
	out->len = le64_to_cpu(wc->len);
	out->perms = le32_to_cpu(wc->perms);
	if (obj->type != FRACTOS_OBJ_MEMORY)
		ret = -EPROTO;
	else
		ret = fos_view_check(obj, out);
	if (!ret && !(out->perms & perm))
		ret = -EACCES;
	if (!ret && (off > out->len || len > out->len - off))
		ret = -ERANGE;
	if (ret)
		fos_obj_put(obj);
	return ret;
}

/*
 * Copies of at most this many bytes ask for them inline (GRANT with
 * FOS_GRANT_INLINE): 2 messages instead of 3 and an RDMA READ, and no
 * region registered; or, from our own Memory into another node's, push
 * them (COPY with FOS_COPY_INLINE).  0 turns both off (the benchmarks'
 * A/B).
 */
static unsigned int fos_copy_inline = FOS_WIRE_INLINE_MAX;
module_param_named(copy_inline_max, fos_copy_inline, uint, 0644);
MODULE_PARM_DESC(copy_inline_max,
		 "Remote copies of at most this many bytes (up to 4096) travel inside the GRANT_REPLY or the COPY, without an RDMA READ (default 4096, 0: never)");

u64 fos_copy_inline_max(void)
{
	return min_t(u64, READ_ONCE(fos_copy_inline), FOS_WIRE_INLINE_MAX);
}

/*
 * fos_copy_pull() of a small copy: @len bytes from byte @soff of the
 * source (GRANT's @src) come in the GRANT_REPLY and are written at byte
 * @moff of @mem.
 */
static int fos_copy_pull_inline(struct fos_peer *peer,
				struct fos_wire_grant *g, u64 soff,
				struct fos_mem *mem, u64 moff, u64 len)
{
	struct fos_wire_release rel = {};
	struct fos_rpc_wait w;
	void *buf;
	int ret;

	buf = kmalloc(len, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	g->flags = cpu_to_le32(FOS_GRANT_INLINE);
	g->off = cpu_to_le64(soff);
	g->len = cpu_to_le64(len);
	ret = fos_rpc_data(peer, FOS_WIRE_GRANT, g, sizeof(*g), &w, buf, len);
	if (!ret && w.data_len != len) {
		/* A region where bytes were asked for: give it back. */
		if (!w.data_len) {
			rel.id = w.grant.id;
			fos_fabric_send(peer, FOS_WIRE_RELEASE, 0, &rel,
					sizeof(rel), NULL, FOS_SEND_QUEUE);
		}
		ret = -EPROTO;
	}
	if (!ret)
		ret = fos_mem_write_buf(mem, moff, buf, len);
	kfree(buf);
	return ret;
}

/* The puller's errors as memory_copy reports them. */
int fos_copy_errno(int ret)
{
	switch (ret) {
	case -ECONNRESET:
		return -EKEYREVOKED;	/* the node is gone: so are its objects */
	case -ENOTCONN:
	case -ECOMM:
	case -ESTALE:
		return -EHOSTUNREACH;
	default:
		return ret;
	}
}

static DEFINE_XARRAY_ALLOC1(fos_pulls);
/*
 * Tokens are handed out cyclically, as rpc.c's cookies: a GRANT_END sent
 * for a copy that has just ended must not find the next one under its
 * token.
 */
static u32 fos_pull_next;

/* Give @p a token for GRANT_END: 0 or -ENOMEM, -EBUSY. */
int fos_pull_track(struct fos_pull *p, u32 *token)
{
	int ret = xa_alloc_cyclic(&fos_pulls, token, p, XA_LIMIT(1, U32_MAX),
				  &fos_pull_next, GFP_KERNEL);

	return ret < 0 ? ret : 0;	/* 1: the tokens wrapped */
}

/* GRANT_END for @token finds nothing from here (xa_lock orders it). */
void fos_pull_forget(u32 token)
{
	xa_erase(&fos_pulls, token);
}

/*
 * How often one window of a copy is asked for again when the connection
 * its region was on ended (with a grace period: "Regions across
 * connections" in fabric/rdma.c).  Each try waits for a connection.
 */
#define FOS_PULL_RETRIES	4

/*
 * A window's errors that a connection's end explains: its region is
 * another connection's (ESTALE), the connection went away before or
 * under the READs (ENOTCONN, ECOMM), or the owner had none to register
 * the region on, or the GRANT could not go (EHOSTUNREACH).
 */
bool fos_copy_cut(int ret)
{
	return ret == -ESTALE || ret == -ENOTCONN || ret == -ECOMM ||
	       ret == -EHOSTUNREACH;
}

/*
 * Read @len bytes of a peer's region (@addr, @rkey, valid on connection
 * @tag) into @mem at byte @moff, or with @write write them there from
 * @mem; device memory through staging pages.  Posts no further READ or
 * WRITE once *@ended.  The transfer half of a window: what a grant
 * answered, or any other region the peer registered for us.
 */
int fos_copy_region(struct fos_peer *peer, struct fos_mem *mem, u64 moff,
		    u64 len, u64 addr, u32 rkey, u64 tag, const bool *ended,
		    bool write)
{
	struct fos_mem *pages = mem, *stage = NULL;
	struct sg_table sgt;
	u64 at = moff;
	s64 n;
	int ret;

	if (fos_mem_devmem(mem)) {
		stage = fos_mem_alloc_kernel(len);
		if (IS_ERR(stage))
			return PTR_ERR(stage);
		pages = stage;
		at = 0;
		ret = write ? fos_mem_copy_bytes(stage, 0, mem, moff, len) : 0;
		if (ret)
			goto out;
	}
	n = fos_mem_sgt(pages, at, len,
			min_t(u64, DIV_ROUND_UP(len, PAGE_SIZE) + 1, U32_MAX),
			&sgt);
	ret = n < 0 ? n : 0;
	if (!ret) {
		ret = write ? fos_fabric_rdma_write(peer, &sgt, addr, rkey, tag,
						    ended) :
			      fos_fabric_rdma_read(peer, &sgt, addr, rkey, tag,
						   ended);
		sg_free_table(&sgt);
	}
	if (!ret && stage && !write)
		ret = fos_mem_copy_bytes(mem, moff, stage, 0, len);
	if (!ret && stage)
		fos_total_add(FOS_TOTAL_STAGED_BYTES, len);
out:
	if (stage)
		fos_mem_put(stage);
	return ret;
}

/*
 * One try of a window of fos_copy_pull(): a grant of at most @want bytes
 * from byte @soff of GRANT's source, read into @mem at byte @moff (device
 * memory: through staging pages), then released.  On success *@got
 * becomes what was read.
 */
static int fos_copy_pull_once(struct fos_peer *peer,
			      struct fos_wire_grant *g, u64 soff, u64 want,
			      struct fos_mem *mem, u64 moff, u64 *got,
			      const bool *ended)
{
	struct fos_wire_release rel = {};
	struct fos_rpc_wait w;
	u64 glen;
	int ret;

	g->off = cpu_to_le64(soff);
	g->len = cpu_to_le64(want);
	ret = fos_rpc(peer, FOS_WIRE_GRANT, g, sizeof(*g), &w);
	if (ret)
		return ret;
	glen = le64_to_cpu(w.grant.len);
	rel.id = w.grant.id;
	/* A kept region is one asked for (FOS_GRANT_KEEP). */
	if (!glen || glen > want ||
	    ((le32_to_cpu(w.grant.flags) & FOS_GRANT_KEPT) &&
	     !(le32_to_cpu(g->flags) & FOS_GRANT_KEEP)))
		ret = -EPROTO;
	else
		ret = fos_copy_region(peer, mem, moff, glen,
				      le64_to_cpu(w.grant.addr),
				      le32_to_cpu(w.grant.rkey),
				      le64_to_cpu(w.grant.conn), ended, false);
	/*
	 * Queued, not waited for: a caller being killed must still release
	 * what it was granted.  Best effort: the grant's TTL ends it
	 * otherwise.
	 */
	fos_fabric_send(peer, FOS_WIRE_RELEASE, 0, &rel, sizeof(rel), NULL,
			FOS_SEND_QUEUE);
	if (!ret)
		*got = glen;
	return ret;
}

/*
 * One window of fos_copy_pull(): at most *@len bytes from byte @soff of
 * GRANT's source into @mem at byte @moff; *@len becomes what was read.
 * Asks again, with a grace period, when the region's connection ended
 * before or during the READs: the READs are idempotent, the bytes land
 * where they would have.  Up to FOS_PULL_RETRIES times, so a link that
 * keeps failing still ends the copy.
 */
static int fos_copy_pull_window(struct fos_peer *peer,
				struct fos_wire_grant *g, u64 soff,
				struct fos_mem *mem, u64 moff, u64 *len,
				const bool *ended)
{
	unsigned int tries;
	u64 want = *len;
	int ret;

	for (tries = 0;; tries++) {
		ret = fos_copy_pull_once(peer, g, soff, want, mem, moff, len,
					 ended);
		if (!ret || !fos_copy_cut(ret) || !fos_fabric_link_grace() ||
		    tries == FOS_PULL_RETRIES || READ_ONCE(*ended) ||
		    fatal_signal_pending(current))
			return ret;
		fos_total_add(FOS_TOTAL_PULL_RETRIES, 1);
	}
}

/**
 * fos_copy_pull - RDMA-read a source view into a local destination
 * @src: the source view on the wire (names its owner)
 * @soff: first byte, from the start of @src
 * @dst: the local destination view (rights and range checked)
 * @doff: where it goes, from the start of @dst
 * @len: bytes, non-zero
 * @until: jiffies after which no further window is asked for
 *	(-ETIMEDOUT), or 0 for no such bound
 * @own: the copy is this node's own (not a COPY it serves for another):
 *	it may read a kept region ("Kept regions" in kept.c)
 *
 * Asks the owner for a grant over (a window of) the source range, reads
 * it straight into the destination's pinned pages (device memory: into
 * staging pages, FOS_STAGE_MAX at a time, then through its mapping),
 * releases the grant, and goes on with the next window; stops posting READs when the owner
 * ends the grants of the copy (GRANT_END).  Process context.
 *
 * Return: 0 once all @len bytes are in, else a negative errno:
 * EKEYREVOKED (the destination is revoked, or the owner's node is gone),
 * EACCES (the destination's pages are not writable), EHOSTUNREACH (the
 * owner is not a peer, or its connection failed), EPROTO (a grant of no
 * bytes or of more than asked), or the error of a grant call, of mapping
 * the pages or of a READ (fos_copy_errno()).
 */
int fos_copy_pull(const struct fos_wire_cap *src, u64 soff,
		  const struct fos_cap *dst, u64 doff, u64 len,
		  unsigned long until, bool own)
{
	struct fos_wire_grant g = {};
	struct fos_pull pull = {};
	struct fos_peer *peer;
	struct fos_mem *mem;
	u64 done = 0;
	u32 token;
	int ret = 0;

	mem = fos_obj_get_mem(dst->obj);
	if (IS_ERR(mem))
		return PTR_ERR(mem);
	if (!mem->writable) {
		ret = -EACCES;
		goto out_mem;
	}
	peer = fos_peer_find(le32_to_cpu(src->node));
	if (!peer) {
		ret = -EHOSTUNREACH;
		goto out_mem;
	}
	if (own) {
		ret = fos_kept_copy(peer, src, soff, mem, dst->off + doff, len,
				    false);
		if (ret != -ENOENT)
			goto out_peer;
		ret = 0;
	}
	g.src = *src;
	/* Nothing is granted: no token for GRANT_END. */
	if (len <= fos_copy_inline_max()) {
		ret = fos_copy_pull_inline(peer, &g, soff, mem, dst->off + doff,
					   len);
		if (!ret)
			fos_total_add(FOS_TOTAL_INLINE_COPIES, 1);
		goto out_peer;
	}
	pull.node = fos_peer_node_id(peer);
	ret = fos_pull_track(&pull, &token);
	if (ret)
		goto out_peer;
	g.pull = cpu_to_le64(token);
	while (done < len) {
		u64 glen;

		if (until && time_after(jiffies, until)) {
			ret = -ETIMEDOUT;
			break;
		}
		/* Device memory: each window is read into pages, then copied. */
		glen = len - done;
		if (fos_mem_devmem(mem))
			glen = min(glen, fos_stage_window());
		ret = fos_copy_pull_window(peer, &g, soff + done, mem,
					   dst->off + doff + done, &glen,
					   &pull.ended);
		if (ret)
			break;
		done += glen;
		cond_resched();
	}
	fos_pull_forget(token);
out_peer:
	fos_peer_put(peer);
out_mem:
	fos_mem_put(mem);
	return fos_copy_errno(ret);
}

/*
 * A capability for the copy protocol, named for node @node: a proxy (or a
 * local child of one) by the remote object's name with the capability's
 * view; a local object is exported to @node until fos_copy_undescribe().
 * A name for the copy only, not a capability handed over: the caller's
 * own capability keeps the object alive meanwhile.
 */
int fos_copy_describe(const struct fos_cap *cap, u32 node, u32 epoch,
		      struct fos_wire_cap *wc)
{
	struct fos_object *root = fos_obj_root(cap->obj);
	struct fos_view v = {
		.off = cap->off, .len = cap->len, .perms = cap->perms,
	};
	int ret;

	if (!root->proxy) {
		ret = fos_cap_describe(cap, node, epoch, wc);
		if (!ret && wc->flags)
			ret = -EKEYREVOKED;
		return ret;
	}
	memset(wc, 0, sizeof(*wc));
	/*
	 * A third node's Memory for @node to pull from: its owner counts
	 * the view for @node first (see "Views" in wire.h).
	 */
	if (root->proxy->node != node) {
		ret = fos_cap_import(root, node, &v);
		if (ret)
			return ret;
	}
	fos_wire_cap_name(wc, root, cap);	/* a Memory, as @cap->obj */
	return 0;
}

/*
 * The copy is over: a local object named for it is no longer exported to
 * @node, and a third node's no longer counted for it.
 */
void fos_copy_undescribe(const struct fos_wire_cap *wc, u32 node,
			 u32 epoch)
{
	u32 owner = le32_to_cpu(wc->node);

	if (!wc->epoch || wc->flags)
		return;
	if (owner == fos_node_id)
		fos_export_put(le64_to_cpu(wc->oid), node, epoch, 1, NULL);
	else if (owner != node)
		fos_drop_queue(NULL, owner, le32_to_cpu(wc->epoch),
			       le64_to_cpu(wc->oid), node, 1);
}

/**
 * fos_remote_copy_wanted - does memory_copy between these go by fabric?
 * @src: the source Memory object
 * @dst: the destination Memory object
 *
 * Return: true if either is another node's (a proxy or a local child of
 * one), or with fabric_loopback.
 */
bool fos_remote_copy_wanted(struct fos_object *src, struct fos_object *dst)
{
	return fos_obj_root(src)->proxy || fos_obj_root(dst)->proxy ||
	       fos_fabric_loopback();
}

/**
 * fos_remote_copy_until - memory_copy where a view is another node's
 * @src: the source view (READ and the range checked by the caller)
 * @soff: first byte, from the start of @src
 * @dst: the destination view (WRITE and the range checked)
 * @doff: where it goes, from the start of @dst
 * @len: bytes
 * @until: when this node pulls, jiffies after which it asks for no further
 *	window (-ETIMEDOUT); 0 for no such bound (fos_remote_copy())
 *
 * The owner of the destination pulls the bytes with RDMA READs from the
 * owner of the source (fos_copy_pull()): this node if it owns the
 * destination, else it is asked with COPY.  A copy of at most
 * copy_inline_max bytes from this node's Memory to another node's is
 * pushed instead: the bytes go with the COPY (fos_copy_push()).  With
 * fabric_loopback, a copy between local views goes the same way through
 * this node's connection to itself.  Process context.
 *
 * Return: 0, the owners' errors (EKEYREVOKED, EACCES, ERANGE, EPROTO),
 * -EHOSTUNREACH, -ETIMEDOUT, -EINVAL (loopback: overlapping ranges of one
 * memory), -EINTR, -ENOMEM.
 */
int fos_remote_copy_until(const struct fos_cap *src, u64 soff,
			  const struct fos_cap *dst, u64 doff, u64 len,
			  unsigned long until)
{
	struct fos_object *droot = fos_obj_root(dst->obj);
	struct fos_object *sroot = fos_obj_root(src->obj);
	struct fos_wire_copy *c;
	struct fos_rpc_wait w;
	struct fos_peer *peer;
	struct fractos_oid oid;
	u32 pepoch;
	bool push;
	int ret;

	might_sleep();

	if (!sroot->proxy && !droot->proxy) {
		ret = fos_mem_copy_local(src, soff, dst, doff, len, true);
		if (ret)
			return ret;
	}
	if (!len)
		return 0;
	fos_obj_oid(droot->proxy ? droot : dst->obj, &oid);
	if (!droot->proxy)
		fos_obj_oid(sroot->proxy ? sroot : src->obj, &oid);
	peer = fos_peer_find(oid.node);
	if (!peer)
		return -EHOSTUNREACH;
	pepoch = fos_peer_epoch(peer);
	if (droot->proxy && !sroot->proxy) {
		ret = fos_kept_copy_to(peer, oid.node, pepoch, src, soff, dst,
				       doff, len);
		if (ret != -ENOENT)
			goto out_peer;
	}
	/* Ours into another node's, small: pushed with the COPY. */
	push = droot->proxy && !sroot->proxy && len <= fos_copy_inline_max();
	c = kzalloc(sizeof(*c) + (push ? len : 0), GFP_KERNEL);
	if (!c) {
		ret = -ENOMEM;
		goto out_peer;
	}
	if (push) {
		c->flags = cpu_to_le32(FOS_COPY_INLINE);
		ret = fos_copy_push(peer, pepoch, src, soff, dst, doff, len, c);
		goto out_free;
	}
	ret = fos_copy_describe(src, oid.node, pepoch, &c->src);
	if (ret)
		goto out_free;
	if (!droot->proxy) {
		/* Ours: pull from the source's owner (maybe ourselves). */
		ret = fos_copy_pull(&c->src, soff, dst, doff, len, until,
				    true);
		goto out_names;
	}
	ret = fos_copy_describe(dst, oid.node, pepoch, &c->dst);
	if (ret)
		goto out_names;
	c->src_off = cpu_to_le64(soff);
	c->dst_off = cpu_to_le64(doff);
	c->len = cpu_to_le64(len);
	/* Ten seconds, plus one per MiB. */
	ret = fos_rpc_timeout(peer, FOS_WIRE_COPY, c, sizeof(*c), &w,
			      FOS_REMOTE_TIMEOUT +
			      min_t(u64, len >> 20, 3600) * HZ);
	ret = fos_copy_errno(ret);
out_names:
	fos_copy_undescribe(&c->src, oid.node, pepoch);
	fos_copy_undescribe(&c->dst, oid.node, pepoch);
out_free:
	kfree(c);
out_peer:
	trace_fos_remote_copy(oid.node, len, ret);
	fos_peer_put(peer);
	return ret;
}

/* fos_remote_copy_until() with no bound but the calls' own timeouts. */
int fos_remote_copy(const struct fos_cap *src, u64 soff,
		    const struct fos_cap *dst, u64 doff, u64 len)
{
	return fos_remote_copy_until(src, soff, dst, doff, len, 0);
}

/* GRANT_END on the puller: stop the copy that token @pull names. */
void fos_grant_end_recv(struct fos_peer *peer, const struct fos_rx_info *rx,
			const void *payload, u32 len)
{
	const struct fos_wire_grant_end *e = payload;
	u64 token = le64_to_cpu(e->pull);
	struct fos_pull *p;
	bool kept = false;

	if (token > U32_MAX)
		return;
	xa_lock(&fos_pulls);
	p = xa_load(&fos_pulls, token);
	/* Unknown: the copy is over and released its grants already. */
	if (p && p->node == fos_peer_node_id(peer)) {
		WRITE_ONCE(p->ended, true);
		kept = p->kept;
	}
	xa_unlock(&fos_pulls);
	/* A kept region: released once its READs in flight completed. */
	if (kept)
		fos_kept_kick();
}
