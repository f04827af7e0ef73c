// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: remote objects - kept regions, the puller's side of kept
 * grants: ranges of another node's Memory that its owner keeps registered
 * for this node (FOS_GRANT_KEEP), so that a copy repeated from them (or
 * into them, FOS_GRANT_WRITE) is one RDMA READ (or WRITE) and no message.
 */

/**
 * DOC: Kept regions
 *
 * A memory_copy into our Memory from another node's (or, with
 * fabric_loopback, from our own through the fabric) asks the source's
 * owner for a grant, reads it and releases it: two messages for a small
 * copy, four and a READ for a larger one.  With copy_cache_ms set (1000
 * by default), the second copy within that time from one remote object
 * asks the owner to keep its region (GRANT with FOS_GRANT_KEEP, over the
 * caller's whole view, FOS_KEPT_WINDOW at most), and every later copy
 * from inside that region is one RDMA READ, with no message and nothing
 * run on the owner's CPU.  The first copy of an object is never kept:
 * the storage adaptor's staging buffers are copied once and revoked, and
 * keeping them would cost each revocation a GRANT_END and its RELEASE.
 *
 * What a region proves: that this node was granted those bytes by their
 * owner, which checked the view it was named by against the views it
 * described to this node.  It is used only by this node's own copies,
 * after the caller's capability was checked here as for any copy
 * (rights, range, revocation): never for a COPY another node asks us to
 * serve, whose source view only its owner can check.
 *
 * How a region ends: the owner's GRANT_END (the source was revoked, or
 * the region is FOS_GRANT_TTL old) marks it ended; no further READ is
 * posted, and once its READs in flight completed it is RELEASEd.  A copy
 * that finds its region ended, or its connection changed (the region was
 * another connection's), asks again as if there had been none: the owner
 * answers EKEYREVOKED if the source is revoked.  Idle regions (unused for
 * copy_cache_ms) and the least recently used one beyond FOS_KEPT_MAX are
 * RELEASEd; those of a node's epoch that went down are forgotten.
 * Setting copy_cache_ms to 0 RELEASEs them all.
 *
 * The other direction is the same: a copy of our Memory into another
 * node's asks, on the second copy into that object, for a region we write
 * (FOS_GRANT_KEEP | FOS_GRANT_WRITE, over a view that lets us write), and
 * the copies after are RDMA WRITEs, complete when the peer's NIC has the
 * bytes.  Device memory is never granted for writing: such a copy goes as
 * a COPY, as without a region.
 *
 * Locking: fos_kept_lock (a spinlock, never taken in softirq) protects
 * fos_kept_list, fos_kept_seen and every region's @inflight, @used and
 * @dead.  A region's @pull.ended is written under fos_pulls' xa_lock
 * (copy.c) and read racily.  A region is freed only by fos_kept_work,
 * once it is off the list and has no READ in flight.
 */
#include <linux/jiffies.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include "../fos.h"
#include "../memory.h"
#include "../fabric.h"
#include "wire.h"
#include "pri.h"

/* The most regions kept here, for all owners together. */
#define FOS_KEPT_MAX		64
/* The most bytes one kept region spans: a copy of more is never kept. */
#define FOS_KEPT_WINDOW		(4ULL << 20)
/* Objects copied from lately, for the second-copy rule. */
#define FOS_KEPT_SEEN		8

/**
 * struct fos_kept - a region another node keeps registered for us
 * @link: in fos_kept_list, most recently used first
 * @pull: its token's entry in fos_pulls, for GRANT_END
 * @token: that token, sent as the GRANT's @pull
 * @owner: the owner's node id
 * @epoch: the owner's epoch
 * @oid: the object's id on the owner
 * @start: the region is bytes [@start, @start + @len) of the object
 * @len: its length
 * @addr: the address of byte @start in the region (zero-based)
 * @rkey: the region's key
 * @tag: the connection the region is valid on
 * @id: the grant, for RELEASE
 * @write: we write it (FOS_GRANT_WRITE), rather than read it
 * @inflight: copies reading or writing it now
 * @used: jiffies of the last copy that read it
 * @dead: off the list: freed by fos_kept_work once @inflight is zero
 * @release: RELEASE it then (not when its owner's epoch is gone)
 */
struct fos_kept {
	struct list_head link;
	struct fos_pull pull;
	u32 token;
	u32 owner;
	u32 epoch;
	u64 oid;
	u64 start;
	u64 len;
	u64 addr;
	u32 rkey;
	u64 tag;
	u64 id;
	bool write;
	unsigned int inflight;
	unsigned long used;
	bool dead;
	bool release;
};

/*
 * An object copied from lately (the second-copy rule), or whose owner
 * would not keep a region of it (@refused: not asked again for
 * copy_cache_ms).
 */
struct fos_kept_seen {
	u32 owner;
	u32 epoch;
	u64 oid;
	unsigned long when;
	bool write;
	bool refused;
};

static DEFINE_SPINLOCK(fos_kept_lock);
static LIST_HEAD(fos_kept_list);
/* Regions off the list, waiting for their READs and their free. */
static LIST_HEAD(fos_kept_dead);
static unsigned int fos_kept_count;
static struct fos_kept_seen fos_kept_seen[FOS_KEPT_SEEN];
static unsigned int fos_kept_seen_next;

static void fos_kept_work_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(fos_kept_work, fos_kept_work_fn);

/* Run fos_kept_work now: a region ended, or died. */
void fos_kept_kick(void)
{
	mod_delayed_work(system_wq, &fos_kept_work, 0);
}

static unsigned int fos_kept_ms = 1000;

static int fos_kept_ms_set(const char *val, const struct kernel_param *kp)
{
	int ret = param_set_uint(val, kp);
	bool any;

	spin_lock(&fos_kept_lock);
	any = fos_kept_count;
	spin_unlock(&fos_kept_lock);
	/*
	 * Off: RELEASE what is kept (the work sees fos_kept_ms == 0).  At
	 * load nothing is, and nothing may be queued before the module is.
	 */
	if (!ret && !READ_ONCE(fos_kept_ms) && any)
		fos_kept_kick();
	return ret;
}

static const struct kernel_param_ops fos_kept_ms_ops = {
	.set = fos_kept_ms_set,
	.get = param_get_uint,
};
module_param_cb(copy_cache_ms, &fos_kept_ms_ops, &fos_kept_ms, 0644);
MODULE_PARM_DESC(copy_cache_ms,
		 "Keep the regions of remote Memory copied from (or into) twice within this many ms, and read (or write) them again with no message while they are used that often (\"Kept regions\"; default 1000; 0: never, and setting 0 releases them)");

/* Is copy_cache_ms set (a racy hint)? */
bool fos_kept_on(void)
{
	return READ_ONCE(fos_kept_ms);
}

/* Take @k off the list, to be freed by fos_kept_work. */
static void fos_kept_kill_locked(struct fos_kept *k, bool release)
{
	lockdep_assert_held(&fos_kept_lock);
	if (k->dead)
		return;
	k->dead = true;
	k->release = release;
	list_move_tail(&k->link, &fos_kept_dead);
	fos_kept_count--;
}

static void fos_kept_free(struct fos_kept *k)
{
	fos_pull_forget(k->token);
	if (k->release)
		fos_event_queue(FOS_EV_RELEASE, 0, k->owner, 0, k->id,
				GFP_KERNEL);
	kfree(k);
	fos_live_add(FOS_LIVE_KEPT, -1);
}

/*
 * Kill the regions that ended, those idle for copy_cache_ms (all if it is
 * 0), and free those that are dead with no READ in flight.
 */
static void fos_kept_work_fn(struct work_struct *work)
{
	unsigned long idle = msecs_to_jiffies(READ_ONCE(fos_kept_ms));
	struct fos_kept *k, *tmp;
	LIST_HEAD(gone);
	bool more;

	spin_lock(&fos_kept_lock);
	list_for_each_entry_safe(k, tmp, &fos_kept_list, link)
		if (READ_ONCE(k->pull.ended) || !idle ||
		    time_after_eq(jiffies, k->used + idle))
			fos_kept_kill_locked(k, true);
	list_for_each_entry_safe(k, tmp, &fos_kept_dead, link)
		if (!k->inflight)
			list_move_tail(&k->link, &gone);
	more = !list_empty(&fos_kept_list);
	spin_unlock(&fos_kept_lock);
	list_for_each_entry_safe(k, tmp, &gone, link)
		fos_kept_free(k);
	if (more)
		mod_delayed_work(system_wq, &fos_kept_work, max(idle / 2, 1UL));
}

/*
 * The kept region of the object (@owner, @epoch, @oid), read or with
 * @write written, that holds bytes [@at, @at + @len) of it, not ended, or
 * NULL.
 */
static struct fos_kept *fos_kept_find_locked(u32 owner, u32 epoch, u64 oid,
					     bool write, u64 at, u64 len)
{
	struct fos_kept *k;

	lockdep_assert_held(&fos_kept_lock);
	list_for_each_entry(k, &fos_kept_list, link)
		if (k->owner == owner && k->epoch == epoch && k->oid == oid &&
		    k->write == write && at >= k->start && len <= k->len &&
		    at - k->start <= k->len - len &&
		    !READ_ONCE(k->pull.ended))
			return k;
	return NULL;
}

/* Remember the object (@refused: its owner would not keep a region). */
static void fos_kept_note_locked(u32 owner, u32 epoch, u64 oid, bool write,
				 bool refused)
{
	struct fos_kept_seen *s;

	lockdep_assert_held(&fos_kept_lock);
	s = &fos_kept_seen[fos_kept_seen_next++ % FOS_KEPT_SEEN];
	*s = (struct fos_kept_seen){ owner, epoch, oid, jiffies | 1, write,
				     refused };
}

/*
 * Ask to keep a region of the object now?  Yes on the second copy from
 * it within copy_cache_ms, unless its owner refused lately; the first
 * is remembered.
 */
static bool fos_kept_seen_locked(u32 owner, u32 epoch, u64 oid, bool write,
				 unsigned long idle)
{
	struct fos_kept_seen *s;
	unsigned int i;

	lockdep_assert_held(&fos_kept_lock);
	for (i = 0; i < FOS_KEPT_SEEN; i++) {
		s = &fos_kept_seen[i];
		if (s->owner == owner && s->epoch == epoch && s->oid == oid &&
		    s->write == write && s->when &&
		    time_before(jiffies, s->when + idle)) {
			if (s->refused)
				return false;
			s->when = 0;
			return true;
		}
	}
	fos_kept_note_locked(owner, epoch, oid, write, false);
	return false;
}

/*
 * A transfer that a region's end explains (GRANT_END: EKEYREVOKED) or a
 * connection's (fos_copy_cut()): the copy asks again, as without one.
 * One cut with its connection counts as a pull's window asked for again
 * does (totals/pull_retries, "Link loss" in remote.c).
 */
static bool fos_kept_retry(int ret)
{
	if (fos_copy_cut(ret)) {
		fos_total_add(FOS_TOTAL_PULL_RETRIES, 1);
		return true;
	}
	return ret == -EKEYREVOKED;
}

/*
 * Read bytes [@at, @at + @len) of the object through @k into @mem at
 * byte @moff, or write them there from @mem.  Returns the transfer's
 * error.
 */
static int fos_kept_xfer(struct fos_peer *peer, struct fos_kept *k, u64 at,
			 struct fos_mem *mem, u64 moff, u64 len)
{
	bool kick;
	int ret;

	ret = fos_copy_region(peer, mem, moff, len, k->addr + (at - k->start),
			      k->rkey, k->tag, &k->pull.ended, k->write);
	spin_lock(&fos_kept_lock);
	k->inflight--;
	/* Another connection's region, or the connection failed under it. */
	if (fos_copy_cut(ret))
		fos_kept_kill_locked(k, true);
	kick = !k->inflight && (k->dead || READ_ONCE(k->pull.ended));
	spin_unlock(&fos_kept_lock);
	if (kick)
		fos_kept_kick();
	return ret;
}

/*
 * Ask @src's owner to keep a region of the view around bytes [@soff,
 * @soff + @len) of it (with @write, one we write): the whole view, or
 * FOS_KEPT_WINDOW of it.  Returns the region (with one copy in flight:
 * fos_kept_xfer()), or NULL if it is not kept.  A grant the owner would
 * not keep still serves this copy: the bytes are moved between it and
 * @mem at byte @moff, then it is released, and *@done says so (*@ret:
 * the transfer's error).
 */
static struct fos_kept *fos_kept_grant(struct fos_peer *peer,
				       const struct fos_wire_cap *src,
				       u64 soff, u64 len, struct fos_mem *mem,
				       u64 moff, bool write, bool *done,
				       int *ret_out)
{
	u64 vlen = le64_to_cpu(src->len), want = min(vlen, FOS_KEPT_WINDOW);
	struct fos_wire_grant g = { .src = *src };
	struct fos_wire_release rel = {};
	struct fos_kept *k, *lru = NULL;
	struct fos_rpc_wait w;
	u64 goff, glen;
	bool covers;
	int ret;

	if (len > want)
		return NULL;
	goff = min(soff, vlen - want);
	k = kzalloc(sizeof(*k), GFP_KERNEL);
	if (!k)
		return NULL;
	k->pull.node = fos_peer_node_id(peer);
	k->pull.kept = true;
	if (fos_pull_track(&k->pull, &k->token)) {
		kfree(k);
		return NULL;
	}
	g.off = cpu_to_le64(goff);
	g.len = cpu_to_le64(want);
	g.pull = cpu_to_le64(k->token);
	g.flags = cpu_to_le32(FOS_GRANT_KEEP | (write ? FOS_GRANT_WRITE : 0));
	ret = fos_rpc(peer, FOS_WIRE_GRANT, &g, sizeof(g), &w);
	if (ret)
		goto refused;
	glen = le64_to_cpu(w.grant.len);
	covers = glen <= want && soff + len <= goff + glen;
	/* Kept, and over the bytes wanted now: else a plain grant. */
	if (!(le32_to_cpu(w.grant.flags) & FOS_GRANT_KEPT) || !covers) {
		if (covers) {
			u64 at = le64_to_cpu(w.grant.addr) + (soff - goff);

			ret = fos_copy_region(peer, mem, moff, len, at,
					      le32_to_cpu(w.grant.rkey),
					      le64_to_cpu(w.grant.conn),
					      &k->pull.ended, write);
			*done = !fos_kept_retry(ret);
			*ret_out = ret;
		}
		rel.id = w.grant.id;
		fos_fabric_send(peer, FOS_WIRE_RELEASE, 0, &rel, sizeof(rel),
				NULL, FOS_SEND_QUEUE);
		goto refused;
	}
	k->owner = le32_to_cpu(src->node);
	k->epoch = le32_to_cpu(src->epoch);
	k->oid = le64_to_cpu(src->oid);
	k->start = le64_to_cpu(src->off) + goff;
	k->len = glen;
	k->addr = le64_to_cpu(w.grant.addr);
	k->rkey = le32_to_cpu(w.grant.rkey);
	k->tag = le64_to_cpu(w.grant.conn);
	k->id = le64_to_cpu(w.grant.id);
	k->write = write;
	k->inflight = 1;
	k->used = jiffies;
	fos_live_add(FOS_LIVE_KEPT, 1);
	spin_lock(&fos_kept_lock);
	if (fos_kept_count == FOS_KEPT_MAX) {
		/* The least recently used goes; one in use stays dead. */
		lru = list_last_entry(&fos_kept_list, struct fos_kept, link);
		fos_kept_kill_locked(lru, true);
	}
	list_add(&k->link, &fos_kept_list);
	fos_kept_count++;
	spin_unlock(&fos_kept_lock);
	fos_kept_kick();	/* the first region arms the idle scan */
	return k;

refused:
	/* Not asked again for copy_cache_ms. */
	spin_lock(&fos_kept_lock);
	fos_kept_note_locked(le32_to_cpu(src->node), le32_to_cpu(src->epoch),
			     le64_to_cpu(src->oid), write, true);
	spin_unlock(&fos_kept_lock);
	fos_pull_forget(k->token);
	kfree(k);
	return NULL;
}

/**
 * fos_kept_copy - a copy between our Memory and a kept region
 * @peer: the remote view's owner
 * @rv: the remote view on the wire (names its owner's object): the
 *	source, or with @write the destination
 * @roff: first byte, from the start of @rv
 * @mem: our Memory's pages (the destination, writable and checked; with
 *	@write the source)
 * @moff: the first byte in @mem
 * @len: bytes, non-zero
 * @write: ours into the remote view (RDMA WRITE), not the other way
 *
 * For the caller's own copies only (see "Kept regions"): reads or writes
 * a kept region of the remote view's object, or asks its owner to keep
 * one on the second copy within copy_cache_ms.  Process context.
 *
 * Return: 0 once the bytes are in; -ENOENT if no region was used, the
 * caller goes on as without one (also when the region ended or was
 * another connection's under the transfer: it asks again); another
 * error of the transfer.
 */
int fos_kept_copy(struct fos_peer *peer, const struct fos_wire_cap *rv,
		  u64 roff, struct fos_mem *mem, u64 moff, u64 len, bool write)
{
	unsigned long idle = msecs_to_jiffies(READ_ONCE(fos_kept_ms));
	u32 owner = le32_to_cpu(rv->node), epoch = le32_to_cpu(rv->epoch);
	u64 oid = le64_to_cpu(rv->oid), at = le64_to_cpu(rv->off) + roff;
	bool seen, done = false;
	struct fos_kept *k;
	int ret;

	might_sleep();
	if (!idle)
		return -ENOENT;
	spin_lock(&fos_kept_lock);
	k = fos_kept_find_locked(owner, epoch, oid, write, at, len);
	if (k) {
		k->inflight++;
		k->used = jiffies;
		list_move(&k->link, &fos_kept_list);
		seen = true;
	} else {
		seen = fos_kept_seen_locked(owner, epoch, oid, write, idle);
	}
	spin_unlock(&fos_kept_lock);
	if (!k && seen)
		k = fos_kept_grant(peer, rv, roff, len, mem, moff, write, &done,
				   &ret);
	if (done)
		return ret;
	if (!k)
		return -ENOENT;
	ret = fos_kept_xfer(peer, k, at, mem, moff, len);
	if (!ret)
		fos_total_add(FOS_TOTAL_KEPT_COPIES, 1);
	else if (fos_kept_retry(ret))
		ret = -ENOENT;
	return ret;
}

/*
 * Ours into another node's (@peer, the destination's owner, @node): a
 * region it keeps for our writes ("Kept regions" in kept.c), or -ENOENT
 * to go on as without one.
 */
int fos_kept_copy_to(struct fos_peer *peer, u32 node, u32 pepoch,
		     const struct fos_cap *src, u64 soff,
		     const struct fos_cap *dst, u64 doff, u64 len)
{
	struct fos_wire_cap wd;
	struct fos_mem *mem;
	int ret;

	if (!fos_kept_on() || fos_copy_describe(dst, node, pepoch, &wd))
		return -ENOENT;
	mem = fos_obj_get_mem(src->obj);
	if (IS_ERR(mem)) {
		ret = -ENOENT;	/* the path without a region reports it */
	} else {
		ret = fos_kept_copy(peer, &wd, doff, mem, src->off + soff, len,
				    true);
		fos_mem_put(mem);
	}
	fos_copy_undescribe(&wd, node, pepoch);
	return ret;
}

/*
 * The regions of @node's epoch @epoch (0: of every epoch; @node U32_MAX:
 * of every node) are gone with it: forgotten, not released.
 */
void fos_kept_drop_node(u32 node, u32 epoch)
{
	struct fos_kept *k, *tmp;
	bool any = false;

	spin_lock(&fos_kept_lock);
	list_for_each_entry_safe(k, tmp, &fos_kept_list, link) {
		if ((node != U32_MAX && k->owner != node) ||
		    (epoch && k->epoch != epoch))
			continue;
		WRITE_ONCE(k->pull.ended, true);
		fos_kept_kill_locked(k, false);
		any = true;
	}
	spin_unlock(&fos_kept_lock);
	if (any)
		fos_kept_kick();
}

/* Module exit, after the peers are gone: free every region. */
void fos_kept_exit(void)
{
	fos_kept_drop_node(U32_MAX, 0);
	flush_delayed_work(&fos_kept_work);
	cancel_delayed_work_sync(&fos_kept_work);
	WARN_ON(!list_empty(&fos_kept_dead) || !list_empty(&fos_kept_list));
}
