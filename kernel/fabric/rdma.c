// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: one-sided RDMA for remote memory_copy - the protection domain
 * of each connection, the memory regions registered for a peer and the
 * RDMA READs that pull from them.
 */

/**
 * DOC: One-sided RDMA
 *
 * kernel/remote/ copies Memory between nodes with RDMA READs on the peer's
 * connection, straight between pinned pages: the owner of the source
 * registers a memory region over exactly the pages asked for
 * (fos_fabric_reg_mr(): ib_alloc_mr() + ib_map_mr_sg() + an IB_WR_REG_MR,
 * IB_ACCESS_REMOTE_READ only) and the puller reads into its own pages,
 * DMA-mapped for the transfer and addressed through its PD's
 * local_dma_lkey (fos_fabric_rdma_read()).  A region its owner keeps
 * for a peer's copies into it ("Kept regions" in remote/kept.c) is
 * registered IB_ACCESS_REMOTE_WRITE only, and written with RDMA WRITEs
 * (fos_fabric_rdma_write()).  Nothing else is ever registered for remote
 * access.
 *
 * Keys and addresses: every connection has a PD of its own (struct
 * fos_pd), and a region for a peer is allocated on the PD of the
 * connection whose QP that peer's READs arrive on, and registered on that
 * QP.  An rkey is therefore valid on that one QP: another peer, or a
 * later connection of the same peer, cannot use it (the READ fails with
 * a remote access error).  The region is zero-based: its address on the
 * wire is the offset of the first byte in its first page, never a kernel
 * virtual, DMA or physical address.  For a node that is its own peer the
 * READs arrive on the passive end of its connection to itself, so the
 * region is registered there (fos_peer_serving_locked()).
 *
 * Regions across connections: a session outlives its connections (see
 * "Sessions" in session.c), so an answer naming a region may arrive on a
 * later connection than the region's, or the region's connection may end
 * between the answer and the READs.  A READ with such an rkey would fail
 * the new connection.  So fos_fabric_reg_mr() says which connection the
 * region is valid on, by a tag both ends of a connection know (the first
 * eight bytes of the initiator's hello nonce: not secret, and nothing of
 * our memory), the owner passes it on with the rkey, and
 * fos_fabric_rdma_read() posts nothing (-ESTALE) when the peer's
 * connection is another one: the reader asks for a new region instead.
 * A PD per peer rather than per connection would keep the rkey valid,
 * but the QP of a connection is made before the peer proves who it is,
 * and on that PD an impostor could read what was registered for the
 * node it claims to be.
 *
 * These WRs share the connection's send queue with the messages: each
 * connection has FOS_RDMA_SQ slots for them (fos_conn.rdma_wrs); a
 * transfer waits on the peer's wait queue for a slot.  Every WR is
 * signalled and has its own struct ib_cqe, so it completes - possibly
 * flushed - before ib_drain_qp() returns; a transfer waits for all of its
 * WRs whatever happens.  A failed (not flushed) RDMA WR fails the
 * connection, as a failed SEND does.  Regions and transfers hold their
 * PD, and the PD its device (fos_ibdev.nconns): device removal waits for
 * them.
 */
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include "pri.h"

/**
 * struct fos_fabric_mr - a memory region registered for a peer
 * @pd: the PD it is on (a reference)
 * @mr: the fast-registration MR
 * @sgt: the pages, DMA-mapped while registered (the caller's table)
 * @stable: no page's mapping needs syncing: the device reads what the CPU
 *	wrote to the pages at any time, not only before the registration
 * @dir: how @sgt is mapped: DMA_TO_DEVICE for remote reads,
 *	DMA_BIDIRECTIONAL for remote writes
 */
struct fos_fabric_mr {
	struct fos_pd *pd;
	struct ib_mr *mr;
	struct sg_table *sgt;
	bool stable;
	enum dma_data_direction dir;
};

/**
 * struct fos_rdma_op - the WRs of one transfer
 * @pending: WRs posted and not completed, plus one for the poster
 * @status: 0, or the first failure (-ECOMM)
 * @done: completed when @pending drops to zero
 */
struct fos_rdma_op {
	atomic_t pending;
	int status;
	struct completion done;
};

/**
 * struct fos_rdma_wr - one RDMA WR, freed by its completion
 * @cqe: completion hook
 * @conn: the connection it was posted on
 * @op: its transfer
 * @rdma: READ: the work request
 * @reg: REG_MR: the work request
 * @sge: READ: local segments
 */
struct fos_rdma_wr {
	struct ib_cqe cqe;
	struct fos_conn *conn;
	struct fos_rdma_op *op;
	union {
		struct ib_rdma_wr rdma;
		struct ib_reg_wr reg;
	};
	struct ib_sge sge[FOS_RDMA_SGE];
};

/**
 * fos_pd_alloc - a protection domain for a new connection on @dev
 * @dev: the device, counted once more until the PD is freed
 *
 * Return: the PD with one reference, or an ERR_PTR().
 */
struct fos_pd *fos_pd_alloc(struct fos_ibdev *dev)
{
	struct fos_pd *p;

	might_sleep();
	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return ERR_PTR(-ENOMEM);
	p->pd = ib_alloc_pd(dev->ibdev, 0);
	if (IS_ERR(p->pd)) {
		int ret = PTR_ERR(p->pd);

		kfree(p);
		return ERR_PTR(ret);
	}
	kref_init(&p->ref);
	p->dev = dev;
	spin_lock(&fos_conns_lock);
	dev->nconns++;
	spin_unlock(&fos_conns_lock);
	return p;
}

static void fos_pd_release(struct kref *ref)
{
	struct fos_pd *p = container_of(ref, struct fos_pd, ref);

	ib_dealloc_pd(p->pd);
	fos_dev_put(p->dev);
	kfree(p);
}

/* Process context: the last reference deallocates the PD. */
void fos_pd_put(struct fos_pd *pd)
{
	might_sleep();
	kref_put(&pd->ref, fos_pd_release);
}

/* @serving: that connection; else the one we send (and read) on. */
static struct fos_conn *fos_peer_rdma_conn_locked(struct fos_peer *peer,
						  bool serving)
{
	lockdep_assert_held(&peer->lock);
	return serving ? fos_peer_serving_locked(peer) : peer->conn;
}

/*
 * The connection's tag: the first eight bytes of the initiator's nonce,
 * which both of its ends know ("Regions across connections" above).
 */
static u64 fos_conn_tag(const struct fos_conn *conn)
{
	__le64 t;

	memcpy(&t, conn->hello_init.nonce, sizeof(t));
	return le64_to_cpu(t);
}

/*
 * The PD of @peer's connection (see above), a reference, and that
 * connection's tag in *@tag unless @tag is NULL; NULL if not up.
 */
static struct fos_pd *fos_peer_pd_get(struct fos_peer *peer, bool serving,
				      u64 *tag)
{
	struct fos_pd *pd = NULL;
	struct fos_conn *conn;

	spin_lock(&fos_conns_lock);
	spin_lock_bh(&peer->lock);
	conn = fos_peer_rdma_conn_locked(peer, serving);
	/* An admitted connection's dev and pd are set and stay. */
	if (conn && conn->pd && !conn->dev->dying) {
		spin_lock_bh(&conn->lock);
		if (conn->state == FOS_CONN_UP) {
			pd = conn->pd;
			kref_get(&pd->ref);
			if (tag)
				*tag = fos_conn_tag(conn);
		}
		spin_unlock_bh(&conn->lock);
	}
	spin_unlock_bh(&peer->lock);
	spin_unlock(&fos_conns_lock);
	return pd;
}

static void fos_rdma_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct fos_rdma_wr *w = container_of(wc->wr_cqe, struct fos_rdma_wr,
					     cqe);
	struct fos_conn *conn = w->conn;
	struct fos_rdma_op *op = w->op;
	bool last, resume;

	kfree(w);
	spin_lock_bh(&conn->lock);
	conn->rdma_wrs--;
	resume = fos_conn_sq_done(conn);
	spin_unlock_bh(&conn->lock);
	if (wc->status != IB_WC_SUCCESS) {
		cmpxchg(&op->status, 0, -ECOMM);
		fos_wc_error(conn, wc->status, "rdma");
	} else if (resume) {
		fos_conn_flush(conn);
	}
	/*
	 * The owner's bias keeps @pending above zero while it posts and
	 * waits on the peer's queue; zero means it waits on @op->done, so
	 * @op stays until complete() - the last access to it.
	 */
	last = atomic_dec_and_test(&op->pending);
	wake_up_all(&conn->peer->wq);
	if (last)
		complete(&op->done);
}

/* A free RDMA slot on the connection, and no stall. */
static bool fos_conn_rdma_room(const struct fos_conn *conn)
{
	return conn->rdma_wrs < FOS_RDMA_SQ && !conn->quiet;
}

/*
 * A wait condition on peer->wq: the connection of @pd has an RDMA slot,
 * or waiting has become pointless (it is gone or not up).
 */
static bool fos_rdma_can_go(struct fos_peer *peer, struct fos_pd *pd,
			    bool serving)
{
	struct fos_conn *conn;
	bool ok = true;

	spin_lock_bh(&peer->lock);
	conn = fos_peer_rdma_conn_locked(peer, serving);
	if (conn && conn->pd == pd) {
		spin_lock_bh(&conn->lock);
		ok = conn->state != FOS_CONN_UP || fos_conn_rdma_room(conn);
		spin_unlock_bh(&conn->lock);
	}
	spin_unlock_bh(&peer->lock);
	return ok;
}

/*
 * Post @w (its WR filled in) on @peer's connection (@serving: see
 * fos_peer_rdma_conn_locked()), which must still be the one of @pd and
 * up, waiting for a slot.  On success @w belongs to its completion.
 */
static int fos_rdma_post(struct fos_peer *peer, struct fos_pd *pd,
			 bool serving, struct fos_rdma_op *op,
			 struct fos_rdma_wr *w, const struct ib_send_wr *wr)
{
	struct fos_conn *conn;
	int ret;

	w->op = op;
	w->cqe.done = fos_rdma_done;
	for (;;) {
		spin_lock_bh(&peer->lock);
		conn = fos_peer_rdma_conn_locked(peer, serving);
		if (!conn || conn->pd != pd) {
			ret = -ENOTCONN;
		} else {
			spin_lock_bh(&conn->lock);
			if (conn->state != FOS_CONN_UP) {
				ret = -ENOTCONN;
			} else if (!fos_conn_rdma_room(conn)) {
				ret = -EAGAIN;
			} else {
				w->conn = conn;
				atomic_inc(&op->pending);
				ret = ib_post_send(conn->id->qp, wr, NULL);
				if (ret) {
					atomic_dec(&op->pending);
				} else {
					fos_conn_sq_posted(conn);
					conn->rdma_wrs++;
				}
			}
			spin_unlock_bh(&conn->lock);
		}
		spin_unlock_bh(&peer->lock);
		if (ret != -EAGAIN)
			return ret;
		wait_event_timeout(peer->wq,
				   fos_rdma_can_go(peer, pd, serving), HZ);
	}
}

static void fos_rdma_op_init(struct fos_rdma_op *op)
{
	atomic_set(&op->pending, 1);
	op->status = 0;
	init_completion(&op->done);
}

/* Wait for every WR of @op; its status. */
static int fos_rdma_op_wait(struct fos_rdma_op *op)
{
	if (!atomic_dec_and_test(&op->pending))
		wait_for_completion(&op->done);
	return READ_ONCE(op->status);
}

/*
 * Whether the device sees the CPU's later writes to @nents mapped
 * entries without a sync: always through software DMA (rxe, siw), else
 * unless the mapping bounces or the platform is not coherent.
 */
static bool fos_sgt_stable(struct ib_device *ibdev, struct scatterlist *sgl,
			   int nents)
{
	struct scatterlist *sg;
	int i;

	if (ib_uses_virt_dma(ibdev))
		return true;
	for_each_sg(sgl, sg, nents, i)
		if (dma_need_sync(ibdev->dma_device, sg_dma_address(sg)))
			return false;
	return true;
}

/**
 * fos_fabric_reg_mr - register pages for RDMA READs by a peer
 * @peer: the peer that will read: the region is on the PD of the
 *	connection its READs arrive on, and valid on that QP only
 * @sgt: the pages; must stay valid until fos_fabric_dereg_mr()
 * @npages: pages @sgt spans (at most fos_fabric_mr_max_pages())
 * @out: the region
 * @addr: the address of the first byte of @sgt in the region: its offset
 *	in its page (zero-based, no kernel address)
 * @rkey: the region's remote key
 * @tag: the tag of the connection whose QP the region is valid on, for
 *	fos_fabric_rdma_read() on the reader's side
 * @write: the peer writes the region (RDMA WRITE), rather than reads it
 *
 * Process context; waits for the registration to complete.  The region
 * allows remote reads only, or with @write remote writes only, of exactly
 * the bytes of @sgt.
 *
 * Return: 0, -ENOTCONN (the peer is not up), -ENOMEM, -ECOMM, or
 * another error of the device.
 */
int fos_fabric_reg_mr(struct fos_peer *peer, struct sg_table *sgt,
		      u32 npages, struct fos_fabric_mr **out, u64 *addr,
		      u32 *rkey, u64 *tag, bool write)
{
	struct ib_device *ibdev;
	struct fos_fabric_mr *m;
	struct fos_rdma_op op;
	struct fos_rdma_wr *w;
	int nents, ret;

	might_sleep();

	m = kzalloc(sizeof(*m), GFP_KERNEL);
	w = kzalloc(sizeof(*w), GFP_KERNEL);
	if (!m || !w) {
		ret = -ENOMEM;
		goto err_free;
	}
	m->pd = fos_peer_pd_get(peer, true, tag);
	if (!m->pd) {
		ret = -ENOTCONN;
		goto err_free;
	}
	ibdev = m->pd->dev->ibdev;
	m->sgt = sgt;
	m->dir = write ? DMA_BIDIRECTIONAL : DMA_TO_DEVICE;
	nents = ib_dma_map_sg(ibdev, sgt->sgl, sgt->orig_nents, m->dir);
	if (!nents) {
		ret = -ENOMEM;
		goto err_pd;
	}
	m->stable = fos_sgt_stable(ibdev, sgt->sgl, nents);
	m->mr = ib_alloc_mr(m->pd->pd, IB_MR_TYPE_MEM_REG, npages);
	if (IS_ERR(m->mr)) {
		ret = PTR_ERR(m->mr);
		goto err_unmap;
	}
	ret = ib_map_mr_sg(m->mr, sgt->sgl, nents, NULL, PAGE_SIZE);
	if (ret != nents) {
		ret = ret < 0 ? ret : -EINVAL;
		goto err_mr;
	}
	/*
	 * Zero-based: the region's first page starts at address 0 (the
	 * REG_MR takes the iova from the MR), so what goes on the wire says
	 * nothing about our memory.
	 */
	m->mr->iova &= ~PAGE_MASK;
	ib_update_fast_reg_key(m->mr, ib_inc_rkey(m->mr->rkey));
	w->reg.wr.opcode = IB_WR_REG_MR;
	w->reg.wr.send_flags = IB_SEND_SIGNALED;
	w->reg.wr.wr_cqe = &w->cqe;
	w->reg.mr = m->mr;
	w->reg.key = m->mr->rkey;
	w->reg.access = write ?
			IB_ACCESS_REMOTE_WRITE | IB_ACCESS_LOCAL_WRITE :
			IB_ACCESS_REMOTE_READ;
	fos_rdma_op_init(&op);
	ret = fos_rdma_post(peer, m->pd, true, &op, w, &w->reg.wr);
	if (!ret)
		w = NULL;	/* its completion frees it */
	ret = fos_rdma_op_wait(&op) ?: ret;
	if (ret)
		goto err_mr;
	*addr = m->mr->iova;
	*rkey = m->mr->rkey;
	*out = m;
	return 0;

err_mr:
	ib_dereg_mr(m->mr);
err_unmap:
	ib_dma_unmap_sg(ibdev, sgt->sgl, sgt->orig_nents, m->dir);
err_pd:
	fos_pd_put(m->pd);
err_free:
	kfree(w);
	kfree(m);
	return ret;
}

/**
 * fos_fabric_mr_stable - a region may be kept and read again later
 * @m: from fos_fabric_reg_mr()
 *
 * Return: true if the peer's READs see what the CPU writes to the pages
 * after the registration (no page's DMA mapping needs a sync), so that a
 * region kept for later copies does not go stale.
 */
bool fos_fabric_mr_stable(const struct fos_fabric_mr *m)
{
	return m->stable;
}

/**
 * fos_fabric_dereg_mr - end a region: its rkey is dead when this returns
 * @m: from fos_fabric_reg_mr()
 *
 * Process context.  The caller may release the pages afterwards.
 */
void fos_fabric_dereg_mr(struct fos_fabric_mr *m)
{
	might_sleep();
	ib_dereg_mr(m->mr);
	ib_dma_unmap_sg(m->pd->dev->ibdev, m->sgt->sgl, m->sgt->orig_nents,
			m->dir);
	fos_pd_put(m->pd);
	kfree(m);
}

/**
 * fos_fabric_mr_max_pages - the most pages one region may span
 * @peer: the peer it would be registered for
 *
 * Return: a page count, 0 if the peer is not up.
 */
u32 fos_fabric_mr_max_pages(struct fos_peer *peer)
{
	struct fos_pd *pd = fos_peer_pd_get(peer, true, NULL);
	u32 n;

	if (!pd)
		return 0;
	n = min_t(u32, pd->dev->ibdev->attrs.max_fast_reg_page_list_len, 4096);
	fos_pd_put(pd);
	return n;
}

/* fos_fabric_rdma_read(), or with @write fos_fabric_rdma_write(). */
static int fos_rdma_xfer(struct fos_peer *peer, struct sg_table *sgt,
			 u64 addr, u32 rkey, u64 tag, const bool *stop,
			 bool write)
{
	enum dma_data_direction dir = write ? DMA_TO_DEVICE : DMA_FROM_DEVICE;
	struct scatterlist *sg;
	struct fos_rdma_op op;
	struct ib_device *ibdev;
	struct fos_pd *pd;
	u32 max_sge, off = 0;
	int nents, ret = 0;
	u64 posted = 0, now;

	might_sleep();

	pd = fos_peer_pd_get(peer, false, &now);
	if (!pd)
		return -ENOTCONN;
	/*
	 * A region of another connection: its rkey would fail the READ,
	 * and the connection with it.  fos_rdma_post() checks that the
	 * connection is still the one of @pd.
	 */
	if (now != tag) {
		fos_pd_put(pd);
		return -ESTALE;
	}
	ibdev = pd->dev->ibdev;
	nents = ib_dma_map_sg(ibdev, sgt->sgl, sgt->orig_nents, dir);
	if (!nents) {
		fos_pd_put(pd);
		return -ENOMEM;
	}
	max_sge = clamp_t(u32, write ? ibdev->attrs.max_send_sge :
				       min(ibdev->attrs.max_sge_rd,
					   ibdev->attrs.max_send_sge),
			  1, FOS_RDMA_SGE);
	fos_rdma_op_init(&op);
	sg = sgt->sgl;
	while (nents) {
		struct fos_rdma_wr *w;
		u32 n = 0, bytes = 0, delay = READ_ONCE(fos_fault_read_delay_ms);

		if (delay)
			msleep(min(delay, 10000U));
		if (READ_ONCE(*stop)) {
			ret = -EKEYREVOKED;
			break;
		}
		w = kzalloc(sizeof(*w), GFP_KERNEL);
		if (!w) {
			ret = -ENOMEM;
			break;
		}
		while (nents && n < max_sge && bytes < FOS_RDMA_CHUNK) {
			u32 take = min(sg_dma_len(sg) - off,
				       FOS_RDMA_CHUNK - bytes);

			w->sge[n].addr = sg_dma_address(sg) + off;
			w->sge[n].length = take;
			w->sge[n].lkey = pd->pd->local_dma_lkey;
			n++;
			bytes += take;
			off += take;
			if (off == sg_dma_len(sg)) {
				off = 0;
				if (--nents)
					sg = sg_next(sg);
			}
		}
		w->rdma.wr.opcode = write ? IB_WR_RDMA_WRITE : IB_WR_RDMA_READ;
		w->rdma.wr.send_flags = IB_SEND_SIGNALED;
		w->rdma.wr.wr_cqe = &w->cqe;
		w->rdma.wr.sg_list = w->sge;
		w->rdma.wr.num_sge = n;
		w->rdma.remote_addr = addr;
		w->rdma.rkey = rkey;
		addr += bytes;
		ret = fos_rdma_post(peer, pd, false, &op, w, &w->rdma.wr);
		if (ret) {
			kfree(w);
			break;
		}
		posted += bytes;
		/* Pipelined: at most FOS_RDMA_INFLIGHT READs of ours. */
		wait_event(peer->wq,
			   atomic_read(&op.pending) <= FOS_RDMA_INFLIGHT ||
			   READ_ONCE(op.status));
		if (READ_ONCE(op.status))
			break;
	}
	ret = fos_rdma_op_wait(&op) ?: ret;
	if (!ret)
		fos_stat_add(peer, write ? FRACTOS_STAT_RDMA_WRITE_BYTES :
					   FRACTOS_STAT_RDMA_READ_BYTES, posted);
	ib_dma_unmap_sg(ibdev, sgt->sgl, sgt->orig_nents, dir);
	fos_pd_put(pd);
	return ret;
}

/**
 * fos_fabric_rdma_read - read a peer's region into local pages
 * @peer: the peer
 * @sgt: the destination pages (not DMA-mapped; mapped for the transfer)
 * @addr: the address of the first byte to read in the peer's region
 * @rkey: the region's remote key
 * @tag: the tag of the connection the region is valid on, from the
 *	peer's fos_fabric_reg_mr()
 * @stop: if it becomes true, no further READ is posted
 *
 * Reads sg_table length bytes with RDMA READs of at most FOS_RDMA_CHUNK
 * bytes each, FOS_RDMA_INFLIGHT in flight.  Process context; returns once
 * every READ posted has completed.
 *
 * Return: 0, -ENOTCONN (the peer is not up or went down), -ESTALE (the
 * peer's connection is no longer the one of @tag: nothing was posted),
 * -ECOMM (a READ failed; the connection is torn down), -EKEYREVOKED
 * (stopped by @stop before the last READ was posted), -ENOMEM.
 */
int fos_fabric_rdma_read(struct fos_peer *peer, struct sg_table *sgt,
			 u64 addr, u32 rkey, u64 tag, const bool *stop)
{
	return fos_rdma_xfer(peer, sgt, addr, rkey, tag, stop, false);
}

/**
 * fos_fabric_rdma_write - write local pages into a peer's region
 * @peer: the peer
 * @sgt: the source pages (not DMA-mapped; mapped for the transfer)
 * @addr: the address of the first byte to write in the peer's region
 * @rkey: the region's remote key (registered for remote writes)
 * @tag: the tag of the connection the region is valid on
 * @stop: if it becomes true, no further WRITE is posted
 *
 * As fos_fabric_rdma_read(), the other way: returns once every WRITE
 * posted has completed, that is once the peer's NIC has the bytes in its
 * region (an RC WRITE completes when the responder acknowledged it).
 *
 * Return: as fos_fabric_rdma_read().
 */
int fos_fabric_rdma_write(struct fos_peer *peer, struct sg_table *sgt,
			  u64 addr, u32 rkey, u64 tag, const bool *stop)
{
	return fos_rdma_xfer(peer, sgt, addr, rkey, tag, stop, true);
}
