// SPDX-License-Identifier: GPL-2.0
/*
 * fractos_nvme: the I/O path - a volume Request's invocation becomes bios
 * on the Memory's pages, and their completion invokes the continuation.
 *
 * No user process runs between the invocation and the continuation: the
 * provider's receive callback checks the invocation and submits the bios
 * (a write of another node's Memory first fetches it into the staging
 * buffer, in the command's work item); the last bio's end_io (interrupt
 * context) queues the command's work item, which copies a staged read out
 * to another node's Memory and invokes the continuation; when that node
 * owns the continuation too, the copy carries it and that node invokes it
 * (fos_kmem_copy_then()).  A continuation on another node is not waited
 * for: its node's answer (or death, or the timeout) frees the command,
 * from fractos's workqueue.
 */
#include <linux/bio.h>
#include <linux/slab.h>
#include "blk.h"

/**
 * struct fblk_cmd - one read or write in flight
 * @dev: its device (holds a reference)
 * @vol: its volume (counted in its @inflight)
 * @write: direction
 * @off: bytes from the volume's start
 * @len: bytes
 * @mem: the client's Memory view
 * @done: the success continuation
 * @err: the error continuation, or NULL
 * @stage: a staging buffer when @mem is another node's, else NULL
 * @stage_in: a write whose staging buffer is still to be filled from @mem
 *	(in @work, not in the provider's callback: it is an RDMA transfer)
 * @map: the pages the bios use (@mem's or @stage's)
 * @pending: bios in flight, plus one while submitting
 * @error: the first bio error (negative errno), else 0
 * @work: runs the completion in process context
 * @stage_work: fills the staging buffer of a write, then submits
 */
struct fblk_cmd {
	struct fblk_dev *dev;
	struct fblk_vol *vol;
	bool write;
	u64 off;
	u64 len;
	struct fos_kcap *mem;
	struct fos_kcap *done;
	struct fos_kcap *err;
	struct fos_kcap *stage;
	bool stage_in;
	struct fos_kmem_map map;
	atomic_t pending;
	int error;
	struct work_struct work;
	struct work_struct stage_work;
};

/* Give the staging buffer and its bytes back (no-op without one). */
static void fblk_stage_put(struct fblk_cmd *cmd)
{
	if (!cmd->stage)
		return;
	fos_kcap_revoke(cmd->stage);
	fos_kcap_put(cmd->stage);
	cmd->stage = NULL;
	atomic64_sub(cmd->len, &cmd->dev->staged);
}

static void fblk_cmd_free(struct fblk_cmd *cmd)
{
	fos_kmem_unmap(&cmd->map);
	fblk_stage_put(cmd);
	fos_kcap_put(cmd->mem);
	fos_kcap_put(cmd->done);
	fos_kcap_put(cmd->err);
	kfree(cmd);
}

/* Answer a refused I/O with @result (-errno). */
static void fblk_refuse(struct fblk_dev *dev, struct fos_kcap *done,
			struct fos_kcap *err, s64 result)
{
	struct fractos_blk_done d = { .result = result };

	fblk_stat(dev, FBLK_ERRORS, 1);
	fblk_reply_err(dev, done, err, &d, sizeof(d));
}

/* Give a queue-depth slot back, before the command is answered. */
static void fblk_slot_put(struct fblk_dev *dev, struct fblk_vol *vol)
{
	atomic_dec(&vol->inflight);
	atomic_dec(&dev->inflight);
}

/* The command was answered and freed; DESTROY and DETACH wait for these. */
static void fblk_active_put(struct fblk_dev *dev, struct fblk_vol *vol)
{
	atomic_dec(&vol->active);
	atomic_dec(&dev->active);
	wake_up(&dev->idle_wq);
}

/*
 * The continuation took the answer, or could not (@result): the command
 * is over.
 */
static void fblk_cmd_answered(struct fblk_cmd *cmd, int result)
{
	struct fblk_dev *dev = cmd->dev;
	struct fblk_vol *vol = cmd->vol;

	if (result)
		fblk_stat(dev, FBLK_CONT_FAILED, 1);
	fblk_cmd_free(cmd);

	/* Neither @vol nor the wait queue is touched after the wake-up... */
	fblk_active_put(dev, vol);
	/* ...and @dev lives until this reference is gone. */
	fblk_dev_put(dev);
}

static void fblk_count_done(struct fblk_cmd *cmd)
{
	fblk_stat(cmd->dev, cmd->write ? FBLK_WRITES : FBLK_READS, 1);
	fblk_stat(cmd->dev, cmd->write ? FBLK_WRITE_BYTES : FBLK_READ_BYTES,
		  cmd->len);
}

/*
 * A staged read is over: copy the bytes to the client's Memory and answer
 * with them.  Into another node's Memory, small, and answered to that
 * node's continuations, it is one fabric message, which that node acts on
 * (fos_kmem_copy_then()): the read is counted done once the bytes are
 * sent.
 */
static void fblk_cmd_copy_out(struct fblk_cmd *cmd)
{
	struct fractos_blk_done ok = { .result = cmd->len }, err = {};
	struct fos_kthen then = {
		.done = cmd->done,
		.done_imm = &ok,
		.done_len = sizeof(ok),
		.err = cmd->err,
		.err_imm = &err,
		.err_len = sizeof(err),
		.errno_off = offsetof(struct fractos_blk_done, result),
	};
	int copied, ret;

	/* The answer may wake a client that submits at once: a slot is free. */
	fblk_slot_put(cmd->dev, cmd->vol);
	ret = fos_kmem_copy_then(cmd->stage, 0, cmd->mem, 0, cmd->len, &then,
				 &copied);
	if (copied)
		fblk_stat(cmd->dev, FBLK_ERRORS, 1);
	else
		fblk_count_done(cmd);
	fblk_stage_put(cmd);
	fblk_cmd_answered(cmd, ret);
}

/*
 * The bios are done: answer.  A continuation on another node is posted
 * (fos_kinvoke_post(): FRACTOS_INVOKE_NOACK): no worker is held for a
 * round trip, no ACK comes back, and the command ends here; a refusal of
 * that node's is counted in fractos's totals/noack_refused.
 */
static void fblk_cmd_work(struct work_struct *work)
{
	struct fblk_cmd *cmd = container_of(work, struct fblk_cmd, work);
	struct fblk_dev *dev = cmd->dev;
	struct fblk_vol *vol = cmd->vol;
	struct fractos_blk_done d = { .result = cmd->error };
	struct fos_kcap *to = cmd->done;
	int ret;

	/* The pages are the device's no more: unpin before answering. */
	fos_kmem_unmap(&cmd->map);
	if (!d.result && READ_ONCE(vol->dead))
		d.result = -EKEYREVOKED;
	if (!d.result && cmd->stage && !cmd->write) {
		fblk_cmd_copy_out(cmd);
		return;
	}
	if (!d.result) {
		d.result = cmd->len;
		fblk_count_done(cmd);
	} else {
		fblk_stat(dev, FBLK_ERRORS, 1);
		to = cmd->err ?: cmd->done;
	}
	/* Whoever the answer wakes finds the slot and the staging bytes free. */
	fblk_stage_put(cmd);
	fblk_slot_put(dev, vol);
	ret = fos_kinvoke_post(to, &d, sizeof(d), NULL, 0);
	fblk_cmd_answered(cmd, ret);
}

static void fblk_submit(struct fblk_cmd *cmd);

/* A staged write: fetch the bytes from the other node, then submit. */
static void fblk_cmd_stage_work(struct work_struct *work)
{
	struct fblk_cmd *cmd = container_of(work, struct fblk_cmd,
					    stage_work);
	int ret;

	ret = fos_kmem_copy(cmd->mem, 0, cmd->stage, 0, cmd->len);
	if (ret) {
		cmd->error = ret;
		fblk_cmd_work(&cmd->work);	/* answers and frees */
		return;
	}
	fblk_submit(cmd);
}

static void fblk_cmd_put_pending(struct fblk_cmd *cmd)
{
	if (atomic_dec_and_test(&cmd->pending))
		queue_work(fblk_wq, &cmd->work);
}

static void fblk_end_io(struct bio *bio)
{
	struct fblk_cmd *cmd = bio->bi_private;

	/* The device failed the command: EIO, whatever the reason. */
	if (bio->bi_status)
		cmpxchg(&cmd->error, 0, -EIO);
	bio_put(bio);
	fblk_cmd_put_pending(cmd);
}

/* Submit the command's bios; their completions finish it. */
static void fblk_submit(struct fblk_cmd *cmd)
{
	struct fblk_dev *dev = cmd->dev;
	/* done means durable: a write is not answered from a volatile cache. */
	blk_opf_t opf = cmd->write ? REQ_OP_WRITE | REQ_FUA : REQ_OP_READ;
	sector_t sector = (cmd->vol->start + cmd->off) >> SECTOR_SHIFT;
	unsigned int poff = cmd->map.poff;
	u64 left = cmd->len;
	struct bio *bio = NULL;
	unsigned long i = 0;

	atomic_set(&cmd->pending, 1);
	while (left) {
		unsigned int n = min_t(u64, left, PAGE_SIZE - poff);

		if (!bio) {
			bio = bio_alloc(dev->bdev,
					min_t(unsigned long,
					      cmd->map.npages - i,
					      BIO_MAX_VECS),
					opf, GFP_NOIO);
			bio->bi_iter.bi_sector = sector;
			bio->bi_private = cmd;
			bio->bi_end_io = fblk_end_io;
		}
		if (bio_add_page(bio, cmd->map.pages[i], n, poff) != n) {
			/* Full: send it, go on with a new one. */
			sector += bio->bi_iter.bi_size >> SECTOR_SHIFT;
			atomic_inc(&cmd->pending);
			submit_bio(bio);
			bio = NULL;
			continue;
		}
		left -= n;
		poff = 0;
		i++;
	}
	atomic_inc(&cmd->pending);
	submit_bio(bio);
	fblk_cmd_put_pending(cmd);
}

/* Check an I/O invocation; 0 or the errno for its error continuation. */
static int fblk_io_check(struct fblk_dev *dev, struct fblk_vol *vol,
			 bool write, const struct fractos_blk_io *a,
			 const struct fos_kcap_info *mi)
{
	if (READ_ONCE(dev->dead) || !vol || READ_ONCE(vol->dead))
		return -EKEYREVOKED;
	if (mi->type != FRACTOS_OBJ_MEMORY)
		return -EINVAL;
	if (!a->len || a->len > FRACTOS_BLK_MAX_IO ||
	    !IS_ALIGNED(a->offset | a->len, dev->lbs))
		return -EINVAL;
	if (a->offset > vol->size || a->len > vol->size - a->offset)
		return -ERANGE;
	if (a->len > mi->len)
		return -ERANGE;
	/* A read writes the Memory; a write reads it. */
	if (!(mi->perms & (write ? FRACTOS_PERM_READ : FRACTOS_PERM_WRITE)))
		return -EPERM;
	return 0;
}

/* Take a slot of the volume's and the device's queue depth. */
static bool fblk_slot_get(struct fblk_dev *dev, struct fblk_vol *vol)
{
	if (atomic_inc_return(&vol->inflight) > READ_ONCE(fblk_qd_volume))
		goto busy_vol;
	if (atomic_inc_return(&dev->inflight) > READ_ONCE(fblk_qd_device))
		goto busy_dev;
	atomic_inc(&vol->active);
	atomic_inc(&dev->active);
	return true;
busy_dev:
	atomic_dec(&dev->inflight);
busy_vol:
	atomic_dec(&vol->inflight);
	return false;
}

/*
 * Map the Memory for the bios, or stage it when it is another node's or
 * device memory (no struct pages: a dma-buf over a BAR).
 */
static int fblk_cmd_map(struct fblk_cmd *cmd)
{
	struct fblk_dev *dev = cmd->dev;
	u32 need = cmd->write ? FRACTOS_PERM_READ : FRACTOS_PERM_WRITE;
	int ret;

	ret = fos_kmem_map_view(cmd->mem, 0, cmd->len, need, &cmd->map);
	if (ret != -EREMOTE && ret != -EXDEV)
		goto check;
	if (atomic64_add_return(cmd->len, &dev->staged) > FBLK_STAGE_MAX) {
		atomic64_sub(cmd->len, &dev->staged);
		fblk_stat(dev, FBLK_BUSY, 1);
		return -EAGAIN;
	}
	cmd->stage = fos_kmem_create(dev->prov, cmd->len);
	if (IS_ERR(cmd->stage)) {
		atomic64_sub(cmd->len, &dev->staged);
		ret = PTR_ERR(cmd->stage);
		cmd->stage = NULL;
		return ret;
	}
	fblk_stat(dev, FBLK_STAGED, 1);
	cmd->stage_in = cmd->write;
	ret = fos_kmem_map_view(cmd->stage, 0, cmd->len, FRACTOS_PERM_ALL,
				&cmd->map);
check:
	if (ret)
		return ret == -EACCES ? -EPERM : ret;
	/* Direct I/O: the first byte must be block aligned in its page. */
	if (!IS_ALIGNED(cmd->map.poff, dev->lbs))
		return -EINVAL;
	return 0;
}

/* [memory, done] or [memory, done, error] (fractos_blk.h). */
static const struct fos_kmsg_layout fblk_io_layout = {
	.min_caps = 2,
	.max_caps = 3,
	.done = 1,
	.err = 2,
	.types = { FRACTOS_OBJ_MEMORY, FRACTOS_OBJ_REQUEST, FRACTOS_OBJ_REQUEST },
	.ans_len = sizeof(struct fractos_blk_done),
	.ans_errno = sizeof_field(struct fractos_blk_done, result),
};

/**
 * fblk_io - serve one invocation of a volume's read or write Request
 * @dev: the device
 * @m: the message (see "Volume Requests" in fractos_blk.h)
 *
 * Runs in the provider's receive callback.
 */
void fblk_io(struct fblk_dev *dev, const struct fos_kmsg *m)
{
	bool write = m->tag & 1;
	struct fos_kcap_info mi;
	struct fos_kconts c;
	struct fblk_vol *vol;
	struct fblk_cmd *cmd;
	struct fractos_blk_io a;
	struct fos_kcap *err;
	int ret;

	ret = fblk_conts(dev, m, &fblk_io_layout, &c);
	if (ret) {
		if (ret == -EINVAL)	/* answered: a failed I/O */
			fblk_stat(dev, FBLK_ERRORS, 1);
		return;
	}
	err = c.err == c.done ? NULL : c.err;
	if (m->imm_len != sizeof(a)) {
		ret = -EINVAL;
		goto fail;
	}
	memcpy(&a, m->imm, sizeof(a));
	vol = xa_load(&dev->vols, m->tag >> 1);
	fos_kcap_get_info(m->caps[0], &mi);
	ret = fblk_io_check(dev, vol, write, &a, &mi);
	if (ret)
		goto fail;
	if (!fblk_slot_get(dev, vol)) {
		fblk_stat(dev, FBLK_BUSY, 1);
		ret = -EAGAIN;
		goto fail;
	}

	cmd = kzalloc(sizeof(*cmd), GFP_KERNEL);
	if (!cmd) {
		ret = -ENOMEM;
		goto fail_slot;
	}
	INIT_WORK(&cmd->work, fblk_cmd_work);
	cmd->dev = dev;
	cmd->vol = vol;
	cmd->write = write;
	cmd->off = a.offset;
	cmd->len = a.len;
	cmd->mem = fos_kcap_dup(m->caps[0]);
	cmd->done = fos_kcap_dup(m->caps[1]);
	cmd->err = err ? fos_kcap_dup(err) : NULL;
	if (IS_ERR(cmd->mem) || IS_ERR(cmd->done) || IS_ERR(cmd->err)) {
		ret = -ENOMEM;
		goto fail_cmd;
	}
	ret = fblk_cmd_map(cmd);
	if (ret)
		goto fail_cmd;
	kref_get(&dev->ref);
	if (cmd->stage_in) {
		INIT_WORK(&cmd->stage_work, fblk_cmd_stage_work);
		queue_work(fblk_wq, &cmd->stage_work);
	} else {
		fblk_submit(cmd);
	}
	return;

fail_cmd:
	if (IS_ERR(cmd->mem))
		cmd->mem = NULL;
	if (IS_ERR(cmd->done))
		cmd->done = NULL;
	if (IS_ERR(cmd->err))
		cmd->err = NULL;
	fblk_cmd_free(cmd);
fail_slot:
	fblk_slot_put(dev, vol);
	fblk_active_put(dev, vol);
fail:
	fblk_refuse(dev, c.done, err, ret);
}
