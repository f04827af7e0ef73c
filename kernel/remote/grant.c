// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: remote objects - grants: source ranges registered for a
 * puller's RDMA READs, their lifetimes and their ends (see "Remote
 * copies" in remote.c).
 */
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include "../fos.h"
#include "../memory.h"
#include "../fabric.h"
#include "wire.h"
#include "wire_check.h"
#include "pri.h"

/* ---- grants (see "Remote copies" in remote.c) ---- */

/* How long a grant may live: its puller releases it long before. */
#define FOS_GRANT_TTL		(3 * FOS_REMOTE_TIMEOUT)
/*
 * How long a grant outlives the revocation of its source at most: its
 * puller's READs in flight (8 of 1 MiB) complete long before, even
 * through a few retransmissions.
 */
#define FOS_GRANT_END_WAIT	(2 * HZ)

/**
 * struct fos_grant - a source range registered for a puller's RDMA READs
 * @id: in fos_grants
 * @node: the puller
 * @epoch: the puller's epoch when it was granted: the grant dies with that
 *	epoch, not with the next one (fos_grants_drop_node())
 * @ending: GRANT_END is on its way (under fos_grants' xa_lock)
 * @kept: kept for the puller's later copies (FOS_GRANT_KEEP): its TTL
 *	ends it with GRANT_END rather than at once
 * @res: what it is charged to on @peer: FOS_PEER_KEPT or FOS_PEER_GRANTS
 * @pull: the puller's token
 * @obj: the object of the view granted (a reference), checked for
 *	revocation
 * @mem: the pinned pages (a reference: they stay pinned while registered)
 * @sgt: the pages of the range
 * @mr: the region; its rkey dies with fos_fabric_dereg_mr()
 * @ttl: releases a grant its puller never released (FOS_GRANT_TTL, or
 *	FOS_GRANT_END_WAIT once GRANT_END is sent: fos_grant_end_sent())
 * @peer: the puller (a reference), charged one FOS_PEER_GRANTS
 * @dead: on a local list once taken out of fos_grants
 *
 * Freed by whoever takes it out of fos_grants.
 */
struct fos_grant {
	u32 id;
	u32 node;
	u32 epoch;
	bool ending;
	bool kept;
	u8 res;
	u64 pull;
	struct fos_object *obj;
	struct list_head dead;
	struct fos_mem *mem;
	struct sg_table sgt;
	struct fos_fabric_mr *mr;
	struct delayed_work ttl;
	struct fos_peer *peer;
};

/* id -> struct fos_grant; xa_lock guards taking an entry out. */
DEFINE_XARRAY_ALLOC(fos_grants);
/*
 * Ids are handed out cyclically: a grant ended here (revocation, TTL)
 * may still get its puller's RELEASE, which must not end the next grant
 * under the same id.
 */
static u32 fos_grant_next;
/* Woken whenever a grant is freed (fos_remote_grants_sync()). */
static DECLARE_WAIT_QUEUE_HEAD(fos_grants_wq);
/*
 * Grants taken out of fos_grants and not freed yet: their keys work until
 * fos_grant_free() deregisters them, so fos_remote_grants_sync() waits for
 * these too.  Raised under fos_grants' xa_lock with the erase (so that a
 * scan of the table under it sees one or the other), lowered once the key
 * is dead.
 */
static atomic_t fos_grants_freeing = ATOMIC_INIT(0);

/* Take grant @id out of the table: its taker frees it (fos_grant_free()). */
static void fos_grant_out_locked(unsigned long id)
{
	lockdep_assert_held(&fos_grants.xa_lock);
	__xa_erase(&fos_grants, id);
	atomic_inc(&fos_grants_freeing);
}

static void fos_grant_free(struct fos_grant *g)
{
	fos_fabric_dereg_mr(g->mr);	/* the rkey is dead from here */
	sg_free_table(&g->sgt);
	fos_mem_put(g->mem);
	fos_obj_put(g->obj);
	fos_peer_res_put(g->peer, g->res);
	fos_peer_put(g->peer);
	kfree(g);
	fos_live_add(FOS_LIVE_GRANTS, -1);
	atomic_dec(&fos_grants_freeing);
	wake_up_all(&fos_grants_wq);
}

/*
 * Objects were revoked: end the grants out on them (see "Remote copies").
 * The puller is told (GRANT_END) and the grant's timer shortened to
 * FOS_GRANT_END_WAIT here, and again once the message is sent
 * (fos_grant_end_sent()).  May sleep.
 */
void fos_grants_end_revoked(void)
{
	struct fos_grant *g;
	unsigned long idx;

	if (xa_empty(&fos_grants))
		return;
	xa_lock(&fos_grants);
	xa_for_each(&fos_grants, idx, g) {
		/* Racy read: a revocation in progress scans again after. */
		if (g->ending || !READ_ONCE(g->obj->revoked))
			continue;
		g->ending = true;
		mod_delayed_work(fos_copy_wq, &g->ttl, FOS_GRANT_END_WAIT);
		fos_event_queue(FOS_EV_GRANT_END, 0, g->node, g->id, g->pull,
				GFP_ATOMIC);
	}
	xa_unlock(&fos_grants);
}

/**
 * fos_grant_end_sent - GRANT_END for grant @id went to @node
 * @id: the grant
 * @node: its puller
 *
 * The grant's key dies FOS_GRANT_END_WAIT from now, not from when the
 * message was queued: a send may wait up to FOS_REMOTE_TIMEOUT for a
 * credit, and a key that died before its puller heard of the end would
 * fail the puller's next READ, and with it the pair's connection.  A
 * CAP_REVOKE does not wait for this: fos_remote_grants_sync() ends the
 * grants of revoked objects itself after FOS_GRANT_END_WAIT.
 */
void fos_grant_end_sent(u32 id, u32 node)
{
	struct fos_grant *g;

	xa_lock(&fos_grants);
	g = xa_load(&fos_grants, id);
	if (g && g->node == node && g->ending)
		mod_delayed_work(fos_copy_wq, &g->ttl, FOS_GRANT_END_WAIT);
	xa_unlock(&fos_grants);
}

static void fos_grant_ttl_fn(struct work_struct *work)
{
	struct fos_grant *g = container_of(to_delayed_work(work),
					   struct fos_grant, ttl);
	bool mine;

	xa_lock(&fos_grants);
	mine = xa_load(&fos_grants, g->id) == g;
	if (mine && g->kept && !g->ending) {
		/*
		 * A kept grant is read without asking: end it as a revoked
		 * one, so that its puller stops before the key dies.
		 */
		g->ending = true;
		mod_delayed_work(fos_copy_wq, &g->ttl, FOS_GRANT_END_WAIT);
		fos_event_queue(FOS_EV_GRANT_END, 0, g->node, g->id, g->pull,
				GFP_ATOMIC);
		mine = false;
	} else if (mine) {
		fos_grant_out_locked(g->id);
	}
	xa_unlock(&fos_grants);
	if (!mine)
		return;
	/*
	 * fos_grants_end_revoked() or fos_grant_end_sent() may have re-armed
	 * us while we ran (a running work is not pending): out of the table,
	 * nobody can any more, so cancel that before @g goes.
	 */
	cancel_delayed_work(&g->ttl);
	fos_grant_free(g);
}

/*
 * Take out and free the grants of @node (U32_MAX: of any node) granted
 * to its epoch @epoch (0: to any), only those on revoked objects if
 * @revoked.  May sleep.
 */
static void fos_grants_take(u32 node, u32 epoch, bool revoked)
{
	struct fos_grant *g, *tmp;
	unsigned long idx;
	LIST_HEAD(dead);

	might_sleep();
	xa_lock(&fos_grants);
	xa_for_each(&fos_grants, idx, g) {
		if ((node != U32_MAX && g->node != node) ||
		    (epoch && g->epoch != epoch) ||
		    (revoked && !READ_ONCE(g->obj->revoked)))
			continue;
		fos_grant_out_locked(idx);
		list_add_tail(&g->dead, &dead);
	}
	xa_unlock(&fos_grants);
	list_for_each_entry_safe(g, tmp, &dead, dead) {
		cancel_delayed_work_sync(&g->ttl);
		fos_grant_free(g);
	}
}

/*
 * A grant is out on a revoked object, or some grant taken out of the
 * table is not freed yet (its key may be one of those).
 */
static bool fos_grants_revoked_out(void)
{
	struct fos_grant *g;
	unsigned long idx;
	bool out;

	xa_lock(&fos_grants);
	out = atomic_read(&fos_grants_freeing);
	xa_for_each(&fos_grants, idx, g) {
		if (READ_ONCE(g->obj->revoked)) {
			out = true;
			break;
		}
	}
	xa_unlock(&fos_grants);
	return out;
}

/* Some range of ours is registered for a peer (a racy hint). */
bool fos_remote_grants_out(void)
{
	return !xa_empty(&fos_grants) || atomic_read(&fos_grants_freeing);
}

/**
 * fos_remote_grants_sync - the keys of revoked objects are dead
 *
 * Called by CAP_REVOKE once the object is revoked, so that no peer can
 * read it when the call returns (see "Remote copies"): waits until the
 * pullers of the grants out on revoked objects have released them (they
 * were sent GRANT_END), at most FOS_GRANT_END_WAIT, then deregisters
 * those that are left itself; a puller that still reads from one loses
 * its connection.  Returns at once when no grant is out.  May sleep.
 */
void fos_remote_grants_sync(void)
{
	might_sleep();
	if (!fos_grants_revoked_out())
		return;
	wait_event_timeout(fos_grants_wq, !fos_grants_revoked_out(),
			   FOS_GRANT_END_WAIT);
	fos_grants_take(U32_MAX, 0, true);
	/*
	 * A grant its TTL or a RELEASE took out meanwhile may still be
	 * being freed elsewhere: its key dies in fos_grant_free(), which
	 * does not wait for anything.
	 */
	wait_event(fos_grants_wq, !atomic_read(&fos_grants_freeing));
}

/* Take grant @id (of @node) out and free it. */
static void fos_grant_release(u32 id, u32 node)
{
	struct fos_grant *g;

	xa_lock(&fos_grants);
	g = xa_load(&fos_grants, id);
	if (g && g->node == node)
		fos_grant_out_locked(id);
	else
		g = NULL;
	xa_unlock(&fos_grants);
	if (!g)
		return;
	cancel_delayed_work_sync(&g->ttl);
	fos_grant_free(g);
}

/*
 * Release every grant of @node (U32_MAX: of every node) granted to its
 * epoch @epoch (0: to any).  A node that restarted may have grants of its
 * new epoch by the time its old one is reported down: those stay.
 */
void fos_grants_drop_node(u32 node, u32 epoch)
{
	fos_grants_take(node, epoch, false);
}

/*
 * Charge a new grant to @peer: a kept one (@keep) to FOS_PEER_KEPT if it
 * may keep one more, else to FOS_PEER_GRANTS, not kept.
 */
static int fos_grant_charge(struct fos_peer *peer, struct fos_grant *g,
			    bool keep)
{
	if (keep && fos_peer_res_get(peer, FOS_PEER_KEPT)) {
		g->kept = true;
		g->res = FOS_PEER_KEPT;
		return 0;
	}
	if (!fos_peer_res_get(peer, FOS_PEER_GRANTS))
		return -EAGAIN;
	g->res = FOS_PEER_GRANTS;
	return 0;
}

/*
 * GRANT on the source's owner: register the range, answer where it is.
 * With FOS_GRANT_KEEP the region is kept for the puller's later copies
 * if the peer may keep one more and its bytes cannot go stale: not for
 * device memory (the region is a staged snapshot), nor for pages whose
 * DMA mapping needs syncing (fos_fabric_mr_stable()); such a grant stays
 * charged to FOS_PEER_KEPT until it is released.
 */
int fos_grant_serve(struct fos_peer *peer, const struct fos_wire_grant *w,
		    struct fos_wire_grant_reply *r)
{
	u64 off = le64_to_cpu(w->off), len = le64_to_cpu(w->len);
	bool keep = le32_to_cpu(w->flags) & FOS_GRANT_KEEP;
	bool write = le32_to_cpu(w->flags) & FOS_GRANT_WRITE;
	struct fos_grant *g;
	struct fos_cap src;
	u32 max_pages, rkey, id;
	u64 addr, b, moff, tag;
	s64 n;
	int ret;

	ret = fos_copy_local_view(peer, &w->src,
				  write ? FRACTOS_PERM_WRITE : FRACTOS_PERM_READ,
				  off, len, &src);
	if (ret)
		return ret;
	g = kzalloc(sizeof(*g), GFP_KERNEL);
	if (!g) {
		ret = -ENOMEM;
		goto out_obj;
	}
	/* Revoked since the view was checked: nothing taken yet but @g. */
	g->mem = fos_obj_get_mem(src.obj);
	if (IS_ERR(g->mem)) {
		ret = PTR_ERR(g->mem);
		kfree(g);
		goto out_obj;
	}
	/* Written: the pages themselves (a staged copy would be lost). */
	if (write && (fos_mem_devmem(g->mem) || !g->mem->writable))
		ret = fos_mem_devmem(g->mem) ? -EOPNOTSUPP : -EACCES;
	else
		ret = fos_grant_charge(peer, g, keep && !fos_mem_devmem(g->mem));
	if (ret) {
		fos_mem_put(g->mem);
		kfree(g);
		goto out_obj;
	}
	g->peer = fos_peer_get(peer);
	g->node = fos_peer_node_id(peer);
	g->epoch = fos_peer_epoch(peer);
	g->pull = le64_to_cpu(w->pull);
	INIT_DELAYED_WORK(&g->ttl, fos_grant_ttl_fn);
	max_pages = fos_fabric_mr_max_pages(peer);
	moff = src.off + off;
	if (fos_mem_devmem(g->mem) && max_pages) {
		/* No pages to register: the puller reads a staged copy. */
		struct fos_mem *stage;

		len = min3(len, (u64)max_pages << PAGE_SHIFT,
			   fos_stage_window());
		stage = fos_mem_stage(g->mem, moff, len);
		if (IS_ERR(stage)) {
			ret = PTR_ERR(stage);
			goto err_mem;
		}
		fos_mem_put(g->mem);
		g->mem = stage;
		moff = 0;
	}
	b = g->mem->first_off + moff;
	n = fos_mem_sgt(g->mem, moff, len, max_pages, &g->sgt);
	if (n < 0) {
		ret = max_pages ? n : -EHOSTUNREACH;
		goto err_mem;
	}
	ret = fos_fabric_reg_mr(peer, &g->sgt,
				DIV_ROUND_UP(offset_in_page(b) + n, PAGE_SIZE),
				&g->mr, &addr, &rkey, &tag, write);
	if (ret)
		goto err_sgt;
	if (!fos_fabric_mr_stable(g->mr))
		g->kept = false;
	keep = g->kept;		/* @g may be gone once it is in the table */
	fos_live_add(FOS_LIVE_GRANTS, 1);
	g->obj = src.obj;	/* the reference goes with @g from here */
	/*
	 * Once in fos_grants, a RELEASE, the node going down or a
	 * revocation may end @g: arm its timer and read its id before
	 * anyone can look it up.
	 */
	xa_lock(&fos_grants);
	ret = __xa_alloc_cyclic(&fos_grants, &id, g, xa_limit_32b,
				&fos_grant_next, GFP_KERNEL);
	if (ret > 0)
		ret = 0;	/* the ids wrapped */
	/*
	 * A revocation whose scan of fos_grants (under this lock) came
	 * before the grant was in the table did not see it, and one after
	 * will: end it here if the object is revoked already.  Checked
	 * under the lock: once it is dropped, @g and its object may be
	 * freed by anyone who ends the grant.
	 */
	if (ret) {
		atomic_inc(&fos_grants_freeing);	/* never listed */
	} else if (READ_ONCE(src.obj->revoked)) {
		fos_grant_out_locked(id);
		ret = -EKEYREVOKED;
	} else {
		g->id = id;
		queue_delayed_work(fos_copy_wq, &g->ttl, FOS_GRANT_TTL);
	}
	xa_unlock(&fos_grants);
	if (ret) {
		fos_grant_free(g);
		return ret;
	}
	r->rkey = cpu_to_le32(rkey);
	r->id = cpu_to_le64(id);
	r->addr = cpu_to_le64(addr);
	r->len = cpu_to_le64(n);
	r->conn = cpu_to_le64(tag);
	r->flags = cpu_to_le32(keep ? FOS_GRANT_KEPT : 0);
	return 0;

err_sgt:
	sg_free_table(&g->sgt);
err_mem:
	fos_mem_put(g->mem);
	fos_peer_res_put(g->peer, g->res);
	fos_peer_put(g->peer);
	kfree(g);
out_obj:
	fos_obj_put(src.obj);
	return ret;
}

/*
 * GRANT with FOS_GRANT_INLINE ("Remote copies" in wire.h) on the source's
 * owner: the bytes go in the GRANT_REPLY, sent here; nothing is
 * registered.  A revocation that ends while they are read fails it.
 * Returns 0 once the reply is sent, or the errno for the caller's reply.
 */
int fos_grant_inline(struct fos_peer *peer, u64 cookie,
		     const struct fos_wire_grant *w)
{
	u64 off = le64_to_cpu(w->off), len = le64_to_cpu(w->len);
	struct fos_wire_grant_reply *r;
	struct fos_mem *mem;
	struct fos_cap src;
	int ret;

	ret = fos_copy_local_view(peer, &w->src, FRACTOS_PERM_READ, off, len,
				  &src);
	if (ret)
		return ret;
	/* At most FOS_WIRE_INLINE_MAX: fos_wire_check_grant(). */
	r = kzalloc(sizeof(*r) + len, GFP_KERNEL);
	mem = fos_obj_get_mem(src.obj);
	if (!r)
		ret = -ENOMEM;
	else
		ret = PTR_ERR_OR_ZERO(mem);
	if (!ret)
		ret = fos_mem_read_buf(mem, src.off + off, r + 1, len);
	if (!ret && READ_ONCE(src.obj->revoked))
		ret = -EKEYREVOKED;
	if (!IS_ERR(mem))
		fos_mem_put(mem);
	fos_obj_put(src.obj);
	if (!ret) {
		r->len = cpu_to_le64(len);
		/* A reply that cannot go leaves the caller to its timeout. */
		fos_fabric_send(peer, FOS_WIRE_GRANT_REPLY, cookie, r,
				sizeof(*r) + len, NULL, FOS_SEND_QUEUE);
	}
	kfree(r);
	return ret;
}

void fos_grant_reply_recv(struct fos_peer *peer,
			  const struct fos_rx_info *rx,
			  const void *payload, u32 len)
{
	const struct fos_wire_grant_reply *r = payload;
	bool inl = fos_wire_grant_inline(payload, len);

	/*
	 * A grant answering a call that is gone (its caller was killed, or
	 * gave up after FOS_REMOTE_TIMEOUT) is released at once: else it
	 * would keep the owner's pages pinned and their rkey alive until its
	 * FOS_GRANT_TTL.  Bytes inline hold nothing.
	 */
	if (!fos_rpc_complete(peer, FOS_WIRE_GRANT_REPLY,
			      rx->cookie,
			      -(int)le32_to_cpu(r->status), NULL, r,
			      inl ? r + 1 : NULL,
			      inl ? len - (u32)sizeof(*r) : 0) &&
	    !r->status && !inl)
		fos_event_queue(FOS_EV_RELEASE, 0, fos_peer_node_id(peer), 0,
				le64_to_cpu(r->id), GFP_ATOMIC);
}

void fos_release_recv(struct fos_peer *peer, const struct fos_rx_info *rx,
		      const void *payload, u32 len)
{
	const struct fos_wire_release *r = payload;
	u64 id = le64_to_cpu(r->id);

	if (id <= U32_MAX)
		fos_grant_release(id, fos_peer_node_id(peer));
}
