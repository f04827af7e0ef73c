// SPDX-License-Identifier: GPL-2.0
/*
 * fractos_nvme: attached devices, their label, volumes and the management
 * Request.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/crc32.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include "blk.h"

/* Attached devices, under fblk_devs_lock (a mutex; attach and detach sleep). */
DEFINE_MUTEX(fblk_devs_lock);
LIST_HEAD(fblk_devs);
static u32 fblk_next_dev_id = 1;

static const struct fos_provider_ops fblk_prov_ops;

/* ---- the block device ---- */

static int fblk_bdev_open(struct fblk_dev *dev, const char *path)
{
#ifdef FBLK_HAVE_BDEV_FILE
	struct file *f;

	f = bdev_file_open_by_path(path, BLK_OPEN_READ | BLK_OPEN_WRITE, dev,
				   NULL);
	if (IS_ERR(f))
		return PTR_ERR(f);
	dev->bdev_file = f;
	dev->bdev = file_bdev(f);
#else
	struct block_device *bdev;

	bdev = blkdev_get_by_path(path, FMODE_READ | FMODE_WRITE | FMODE_EXCL,
				  dev);
	if (IS_ERR(bdev))
		return PTR_ERR(bdev);
	dev->bdev = bdev;
#endif
	return 0;
}

static void fblk_bdev_close(struct fblk_dev *dev)
{
#ifdef FBLK_HAVE_BDEV_FILE
	fput(dev->bdev_file);
#else
	blkdev_put(dev->bdev, FMODE_READ | FMODE_WRITE | FMODE_EXCL);
#endif
	dev->bdev = NULL;
}

/* ---- the label ---- */

static u32 fblk_label_crc(struct fblk_label *l)
{
	__le32 saved = l->crc;
	u32 crc;

	l->crc = 0;
	crc = crc32_le(~0U, (const u8 *)l, FBLK_LABEL_BYTES);
	l->crc = saved;
	return crc;
}

/* Read or write the label synchronously (writes: flushed and FUA). */
static int fblk_label_io(struct fblk_dev *dev, bool write)
{
	blk_opf_t opf = write ? REQ_OP_WRITE | REQ_SYNC | REQ_PREFLUSH |
				REQ_FUA : REQ_OP_READ;
	struct bio *bio;
	int ret;

	might_sleep();
	bio = bio_alloc(dev->bdev, 1, opf, GFP_KERNEL);
	bio->bi_iter.bi_sector = 0;
	if (bio_add_page(bio, dev->label_pages, FBLK_LABEL_BYTES, 0) !=
	    FBLK_LABEL_BYTES) {
		bio_put(bio);
		return -EIO;
	}
	ret = submit_bio_wait(bio);
	bio_put(bio);
	return ret;
}

/* Write the label after a change; dev->lock held. */
static int fblk_label_write(struct fblk_dev *dev)
{
	lockdep_assert_held(&dev->lock);
	dev->label->crc = cpu_to_le32(fblk_label_crc(dev->label));
	return fblk_label_io(dev, true);
}

static int fblk_label_check(struct fblk_dev *dev)
{
	struct fblk_label *l = dev->label;
	u32 i, n = le32_to_cpu(l->nvols);
	u64 end = FBLK_DATA_START;

	if (memcmp(l->magic, FBLK_MAGIC, sizeof(l->magic)))
		return -EMEDIUMTYPE;
	if (le32_to_cpu(l->version) != FBLK_LABEL_VERSION)
		return -EMEDIUMTYPE;
	if (le32_to_cpu(l->crc) != fblk_label_crc(l))
		return -EUCLEAN;
	if (n > FRACTOS_BLK_MAX_VOLUMES ||
	    le64_to_cpu(l->next_id) > FBLK_ID_LIMIT)
		return -EUCLEAN;
	/* Sorted, disjoint, aligned, inside the device, ids unique enough. */
	for (i = 0; i < n; i++) {
		u64 id = le64_to_cpu(l->vols[i].id);
		u64 start = le64_to_cpu(l->vols[i].start);
		u64 size = le64_to_cpu(l->vols[i].size);

		if (!id || id >= le64_to_cpu(l->next_id) || start < end ||
		    id >= FBLK_ID_LIMIT ||
		    !size || size > dev->size || start > dev->size - size ||
		    !IS_ALIGNED(start, dev->lbs) || !IS_ALIGNED(size, dev->lbs))
			return -EUCLEAN;
		end = start + size;
	}
	return 0;
}

static void fblk_label_format(struct fblk_dev *dev)
{
	struct fblk_label *l = dev->label;

	memset(l, 0, FBLK_LABEL_BYTES);
	memcpy(l->magic, FBLK_MAGIC, sizeof(l->magic));
	l->version = cpu_to_le32(FBLK_LABEL_VERSION);
	l->dev_size = cpu_to_le64(dev->size);
	l->next_id = cpu_to_le64(1);
}

/* ---- volumes ---- */

static struct fblk_vol *fblk_vol_new(struct fblk_dev *dev, u64 id, u64 start,
				     u64 size)
{
	struct fblk_vol *v = kzalloc(sizeof(*v), GFP_KERNEL);
	int ret;

	if (!v)
		return ERR_PTR(-ENOMEM);
	v->dev = dev;
	v->id = id;
	v->start = start;
	v->size = size;
	atomic_set(&v->inflight, 0);
	atomic_set(&v->active, 0);
	v->rd = fos_kreq_create(dev->prov, fblk_tag(id, false), NULL, 0, NULL,
				0);
	if (IS_ERR(v->rd)) {
		ret = PTR_ERR(v->rd);
		goto err_free;
	}
	v->wr = fos_kreq_create(dev->prov, fblk_tag(id, true), NULL, 0, NULL,
				0);
	if (IS_ERR(v->wr)) {
		ret = PTR_ERR(v->wr);
		goto err_rd;
	}
	ret = xa_insert(&dev->vols, id, v, GFP_KERNEL);
	if (ret)
		goto err_wr;
	return v;

err_wr:
	fos_kcap_revoke(v->wr);
	fos_kcap_put(v->wr);
err_rd:
	fos_kcap_revoke(v->rd);
	fos_kcap_put(v->rd);
err_free:
	kfree(v);
	return ERR_PTR(ret);
}

/*
 * Revoke every Request of @v and wait until nothing of it is in flight.
 * Then it may be freed.  Not under dev->lock: completions do not take it,
 * but waiting under it would stall LIST.
 */
static void fblk_vol_kill(struct fblk_dev *dev, struct fblk_vol *v)
{
	mutex_lock(&dev->lock);
	v->dead = true;
	mutex_unlock(&dev->lock);
	fos_kcap_revoke(v->rd);
	fos_kcap_revoke(v->wr);
	wait_event(dev->idle_wq, !atomic_read(&v->active));
}

static void fblk_vol_free(struct fblk_vol *v)
{
	fos_kcap_put(v->rd);
	fos_kcap_put(v->wr);
	kfree(v);
}

/*
 * Find room for @size bytes: the first gap, in start order, between
 * FBLK_DATA_START and the device's end.  dev->lock held.  Returns the
 * label index to insert at and the start, or -ENOSPC.
 */
static int fblk_alloc(struct fblk_dev *dev, u64 size, u32 *at, u64 *start)
{
	struct fblk_label *l = dev->label;
	u32 i, n = le32_to_cpu(l->nvols);
	u64 pos = FBLK_DATA_START, align = max_t(u64, FBLK_ALIGN, dev->lbs);

	lockdep_assert_held(&dev->lock);
	if (n >= FRACTOS_BLK_MAX_VOLUMES)
		return -ENOSPC;
	for (i = 0; i <= n; i++) {
		u64 next = i < n ? le64_to_cpu(l->vols[i].start) : dev->size;

		pos = round_up(pos, align);
		if (pos <= next && size <= next - pos) {
			*at = i;
			*start = pos;
			return 0;
		}
		if (i < n)
			pos = le64_to_cpu(l->vols[i].start) +
			      le64_to_cpu(l->vols[i].size);
	}
	return -ENOSPC;
}

/**
 * fblk_free_bytes - bytes of the data area in no volume
 * @dev: the device; dev->lock held
 *
 * Return: the bytes.
 */
u64 fblk_free_bytes(struct fblk_dev *dev)
{
	struct fblk_label *l = dev->label;
	u32 i, n = le32_to_cpu(l->nvols);
	u64 used = 0;

	lockdep_assert_held(&dev->lock);
	for (i = 0; i < n; i++)
		used += le64_to_cpu(l->vols[i].size);
	return dev->size > FBLK_DATA_START + used ?
	       dev->size - FBLK_DATA_START - used : 0;
}

/* ---- the management Request ---- */

/**
 * fblk_answer - invoke a continuation with @imm, without waiting for it
 * @dev: the device (counts a continuation that fails)
 * @to: the continuation
 * @imm: the answer's immediates
 * @len: bytes at @imm
 *
 * A continuation on another node is posted (fos_kinvoke_post(): no ACK):
 * the receive callback goes on with the next message meanwhile, and that
 * node's refusal is counted in fractos's totals/noack_refused, not here.
 */
void fblk_answer(struct fblk_dev *dev, struct fos_kcap *to, const void *imm,
		 u32 len)
{
	if (fos_kinvoke_post(to, imm, len, NULL, 0))
		fblk_stat(dev, FBLK_CONT_FAILED, 1);
}

/**
 * fblk_reply_err - answer a failed operation
 * @dev: the device (counts a continuation that fails)
 * @ok: the reply continuation
 * @err: the error continuation, or NULL: @ok gets the error
 * @imm: the answer's immediates (with the negative errno in them)
 * @len: bytes at @imm
 */
void fblk_reply_err(struct fblk_dev *dev, struct fos_kcap *ok,
		    struct fos_kcap *err, const void *imm, u32 len)
{
	fblk_answer(dev, err ?: ok, imm, len);
}

/* Hand the client new children of @v's roots. */
static int fblk_open_reply(struct fblk_dev *dev, struct fblk_vol *v,
			   struct fos_kcap *ok)
{
	struct fractos_blk_reply r = {
		.block_size = dev->lbs,
		.volume = v->id,
		.size = v->size,
	};
	struct fos_kcap *caps[2];
	int ret;

	caps[0] = fos_kcap_revtree(dev->prov, v->rd);
	if (IS_ERR(caps[0]))
		return PTR_ERR(caps[0]);
	caps[1] = fos_kcap_revtree(dev->prov, v->wr);
	if (IS_ERR(caps[1])) {
		ret = PTR_ERR(caps[1]);
		goto out_rd;
	}
	ret = fos_kinvoke(ok, &r, sizeof(r), caps, 2);
	if (ret) {
		/* Nobody got them. */
		fblk_stat(dev, FBLK_CONT_FAILED, 1);
		fos_kcap_revoke(caps[1]);
		fos_kcap_revoke(caps[0]);
		ret = 0;	/* nobody to tell either */
	}
	fos_kcap_put(caps[1]);
out_rd:
	fos_kcap_put(caps[0]);
	return ret;
}

static int fblk_create(struct fblk_dev *dev, u64 size, struct fos_kcap *ok)
{
	struct fblk_label *l = dev->label;
	struct fblk_vol *v;
	u64 id, start;
	u32 at, n;
	int ret;

	if (!size || !IS_ALIGNED(size, dev->lbs))
		return -EINVAL;
	mutex_lock(&dev->lock);
	ret = dev->dead ? -EKEYREVOKED : fblk_alloc(dev, size, &at, &start);
	if (ret)
		goto out_unlock;
	id = le64_to_cpu(l->next_id);
	if (id >= FBLK_ID_LIMIT) {
		ret = -ENOSPC;
		goto out_unlock;
	}
	v = fblk_vol_new(dev, id, start, size);
	if (IS_ERR(v)) {
		ret = PTR_ERR(v);
		goto out_unlock;
	}
	n = le32_to_cpu(l->nvols);
	memmove(&l->vols[at + 1], &l->vols[at], (n - at) * sizeof(l->vols[0]));
	l->vols[at].id = cpu_to_le64(id);
	l->vols[at].start = cpu_to_le64(start);
	l->vols[at].size = cpu_to_le64(size);
	l->nvols = cpu_to_le32(n + 1);
	l->next_id = cpu_to_le64(id + 1);
	ret = fblk_label_write(dev);
	if (ret) {
		/* Not on the device: forget it (the id stays used). */
		memmove(&l->vols[at], &l->vols[at + 1],
			(n - at) * sizeof(l->vols[0]));
		memset(&l->vols[n], 0, sizeof(l->vols[0]));
		l->nvols = cpu_to_le32(n);
		xa_erase(&dev->vols, id);
		mutex_unlock(&dev->lock);
		fos_kcap_revoke(v->rd);
		fos_kcap_revoke(v->wr);
		fblk_vol_free(v);
		return ret;
	}
	mutex_unlock(&dev->lock);
	return fblk_open_reply(dev, v, ok);

out_unlock:
	mutex_unlock(&dev->lock);
	return ret;
}

static int fblk_destroy(struct fblk_dev *dev, u64 id, struct fos_kcap *ok)
{
	/* dev->mgmt_lock held (see fblk_mgmt()); taken below: dev->lock. */
	struct fractos_blk_reply r = { .block_size = dev->lbs, .volume = id };
	struct fblk_label *l = dev->label;
	struct fblk_vol *v = xa_load(&dev->vols, id);
	u32 i, n;
	int ret;

	if (!v)
		return -ENOENT;
	fblk_vol_kill(dev, v);

	mutex_lock(&dev->lock);
	n = le32_to_cpu(l->nvols);
	for (i = 0; i < n; i++)
		if (le64_to_cpu(l->vols[i].id) == id)
			break;
	if (!WARN_ON_ONCE(i == n)) {
		memmove(&l->vols[i], &l->vols[i + 1],
			(n - i - 1) * sizeof(l->vols[0]));
		memset(&l->vols[n - 1], 0, sizeof(l->vols[0]));
		l->nvols = cpu_to_le32(n - 1);
	}
	xa_erase(&dev->vols, id);
	ret = fblk_label_write(dev);
	mutex_unlock(&dev->lock);
	fblk_vol_free(v);
	if (ret)
		return ret;
	fblk_answer(dev, ok, &r, sizeof(r));
	return 0;
}

/**
 * fblk_conts - the continuations of a message, by the protocol's @l
 * @dev: the device (counts what is dropped or refused)
 * @m: the message
 * @l: fblk_mgmt_layout or the I/O's
 * @c: filled in (see fos_kmsg_conts())
 *
 * Return: 0 when @m is well formed and is the caller's to serve, -EINVAL
 * when it was answered here, -ENOMSG when it names no continuation (it is
 * dropped, and counted).
 */
int fblk_conts(struct fblk_dev *dev, const struct fos_kmsg *m,
	       const struct fos_kmsg_layout *l, struct fos_kconts *c)
{
	int ret = fos_kmsg_conts(m, l, c);

	if (ret == -ENOMSG)
		fblk_stat(dev, FBLK_DROPPED, 1);
	else if (ret && c->answer)
		fblk_stat(dev, FBLK_CONT_FAILED, 1);
	return ret;
}

/* [reply] or [reply, error] (fractos_blk.h). */
static const struct fos_kmsg_layout fblk_mgmt_layout = {
	.min_caps = 1,
	.max_caps = 2,
	.done = 0,
	.err = 1,
	.types = { FRACTOS_OBJ_REQUEST, FRACTOS_OBJ_REQUEST },
	.ans_len = sizeof(struct fractos_blk_reply),
	.ans_errno = sizeof_field(struct fractos_blk_reply, status),
};

/**
 * fblk_mgmt - serve one invocation of the management Request
 * @dev: the device
 * @m: the message (see "The management Request" in fractos_blk.h)
 *
 * Runs in the provider's receive callback.
 */
void fblk_mgmt(struct fblk_dev *dev, const struct fos_kmsg *m)
{
	struct fractos_blk_reply r = { .block_size = dev->lbs };
	struct fos_kcap *ok, *err;
	struct fractos_blk_mgmt a;
	struct fos_kconts c;
	struct fblk_vol *v;
	int ret = -EINVAL;

	if (fblk_conts(dev, m, &fblk_mgmt_layout, &c))
		return;
	ok = c.done;
	err = c.err;
	if (m->imm_len != sizeof(a))
		goto fail;
	memcpy(&a, m->imm, sizeof(a));
	if (a.flags)
		goto fail;
	r.volume = a.volume;
	if (a.op != FRACTOS_BLK_CREATE && a.volume >= FBLK_ID_LIMIT) {
		ret = -ENOENT;
		goto fail;
	}

	mutex_lock(&dev->mgmt_lock);
	if (READ_ONCE(dev->dead)) {
		ret = -EKEYREVOKED;
	} else {
		switch (a.op) {
		case FRACTOS_BLK_CREATE:
			ret = fblk_create(dev, a.size, ok);
			break;
		case FRACTOS_BLK_OPEN:
			v = xa_load(&dev->vols, a.volume);
			ret = v ? fblk_open_reply(dev, v, ok) : -ENOENT;
			break;
		case FRACTOS_BLK_DESTROY:
			ret = fblk_destroy(dev, a.volume, ok);
			break;
		default:
			ret = -EINVAL;
		}
	}
	mutex_unlock(&dev->mgmt_lock);
	if (!ret)
		return;
fail:
	r.status = ret;
	fblk_reply_err(dev, ok, err, &r, sizeof(r));
}

static void fblk_receive(struct fos_provider *p, const struct fos_kmsg *m)
{
	struct fblk_dev *dev = fos_provider_priv(p);

	if (m->type != FRACTOS_MSG_REQUEST)
		return;
	if (m->tag == FBLK_TAG_MGMT)
		fblk_mgmt(dev, m);
	else
		fblk_io(dev, m);
}

static const struct fos_provider_ops fblk_prov_ops = {
	.receive = fblk_receive,
};

/* ---- attach and detach ---- */

static void fblk_dev_release(struct kref *ref)
{
	struct fblk_dev *dev = container_of(ref, struct fblk_dev, ref);

	__free_pages(dev->label_pages, get_order(FBLK_LABEL_BYTES));
	xa_destroy(&dev->vols);
	mutex_destroy(&dev->lock);
	mutex_destroy(&dev->mgmt_lock);
	kfree(dev);
}

void fblk_dev_put(struct fblk_dev *dev)
{
	kref_put(&dev->ref, fblk_dev_release);
}

/* Load the volumes of the label; dev->lock held. */
static int fblk_load_vols(struct fblk_dev *dev)
{
	struct fblk_label *l = dev->label;
	u32 i, n = le32_to_cpu(l->nvols);
	struct fblk_vol *v;

	for (i = 0; i < n; i++) {
		v = fblk_vol_new(dev, le64_to_cpu(l->vols[i].id),
				 le64_to_cpu(l->vols[i].start),
				 le64_to_cpu(l->vols[i].size));
		if (IS_ERR(v))	/* -EBUSY: an id twice */
			return PTR_ERR(v) == -EBUSY ? -EUCLEAN : PTR_ERR(v);
	}
	return 0;
}

/*
 * Revoke every Request of every volume.  dev->mgmt_lock held: no volume
 * comes or goes meanwhile, and none after (dev->dead).
 */
static void fblk_revoke_vols(struct fblk_dev *dev)
{
	struct fblk_vol *v;
	unsigned long id;

	lockdep_assert_held(&dev->mgmt_lock);
	mutex_lock(&dev->lock);
	xa_for_each(&dev->vols, id, v)
		v->dead = true;
	mutex_unlock(&dev->lock);
	xa_for_each(&dev->vols, id, v) {
		fos_kcap_revoke(v->rd);
		fos_kcap_revoke(v->wr);
	}
}

/* Free every volume: nothing is in flight any more. */
static void fblk_free_vols(struct fblk_dev *dev)
{
	struct fblk_vol *v;
	unsigned long id;

	xa_for_each(&dev->vols, id, v) {
		xa_erase(&dev->vols, id);
		fblk_vol_free(v);
	}
}

/*
 * Undo what attach built: provider, Requests, device.  The order matters:
 * no management operation runs while the volumes are revoked (mgmt_lock);
 * what was queued before the revocations is answered (EKEYREVOKED: the
 * device is dead); the commands in flight finish; then the provider stops
 * (no callback after it, an invocation that raced the revocation is
 * dropped), and only then are the volumes freed.
 */
static void fblk_teardown(struct fblk_dev *dev)
{
	mutex_lock(&dev->mgmt_lock);
	mutex_lock(&dev->lock);
	dev->dead = true;
	mutex_unlock(&dev->lock);
	if (dev->mgmt) {
		fos_kname_unpublish(dev->prov, dev->name);
		fos_kcap_revoke(dev->mgmt);
	}
	fblk_revoke_vols(dev);
	mutex_unlock(&dev->mgmt_lock);

	fos_provider_drain(dev->prov);
	wait_event(dev->idle_wq, !atomic_read(&dev->active));
	fos_provider_destroy(dev->prov);
	fblk_free_vols(dev);
	fos_kcap_put(dev->mgmt);
	fblk_bdev_close(dev);
}

/**
 * fblk_attach - attach a block device (netlink ATTACH)
 * @path: its path
 * @name: the name to publish its management Request under
 * @uid: who may look it up
 * @format: write an empty label first
 * @id: out, the device's id
 *
 * Return: 0 or the errnos of ATTACH in fractos_blk.h.
 */
int fblk_attach(const char *path, const char *name, kuid_t uid, bool format,
		u32 *id)
{
	struct fblk_dev *dev;
	int ret;

	BUILD_BUG_ON(sizeof(struct fblk_label) > FBLK_LABEL_BYTES);
	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev)
		return -ENOMEM;
	kref_init(&dev->ref);
	INIT_LIST_HEAD(&dev->link);
	mutex_init(&dev->mgmt_lock);
	mutex_init(&dev->lock);
	xa_init(&dev->vols);
	init_waitqueue_head(&dev->idle_wq);
	strscpy(dev->name, name, sizeof(dev->name));
	strscpy(dev->path, path, sizeof(dev->path));
	dev->uid = uid;
	dev->label_pages = alloc_pages(GFP_KERNEL | __GFP_ZERO,
				       get_order(FBLK_LABEL_BYTES));
	if (!dev->label_pages) {
		ret = -ENOMEM;
		goto err_free;
	}
	dev->label = page_address(dev->label_pages);

	ret = fblk_bdev_open(dev, path);
	if (ret)
		goto err_free;
	dev->lbs = bdev_logical_block_size(dev->bdev);
	dev->size = round_down(bdev_nr_bytes(dev->bdev), dev->lbs);
	if (dev->size < 2 * FBLK_DATA_START) {
		ret = -ENOSPC;
		goto err_bdev;
	}

	mutex_lock(&dev->lock);
	if (format) {
		fblk_label_format(dev);
		ret = fblk_label_write(dev);
	} else {
		ret = fblk_label_io(dev, false);
		if (!ret)
			ret = fblk_label_check(dev);
	}
	mutex_unlock(&dev->lock);
	if (ret)
		goto err_bdev;

	dev->prov = fos_provider_create(&fblk_prov_ops, dev);
	if (IS_ERR(dev->prov)) {
		ret = PTR_ERR(dev->prov);
		dev->prov = NULL;
		goto err_bdev;
	}
	mutex_lock(&dev->lock);
	ret = fblk_load_vols(dev);
	mutex_unlock(&dev->lock);
	if (ret)
		goto err_prov;
	dev->mgmt = fos_kreq_create(dev->prov, FBLK_TAG_MGMT, NULL, 0, NULL, 0);
	if (IS_ERR(dev->mgmt)) {
		ret = PTR_ERR(dev->mgmt);
		dev->mgmt = NULL;
		goto err_prov;
	}

	mutex_lock(&fblk_devs_lock);
	ret = fos_kname_publish(dev->prov, dev->mgmt, dev->name, uid, false);
	if (!ret) {
		dev->id = fblk_next_dev_id++;
		list_add_tail(&dev->link, &fblk_devs);
		*id = dev->id;
	}
	mutex_unlock(&fblk_devs_lock);
	if (ret)
		goto err_prov;
	pr_info("attached %s as %s (device %u, %llu bytes, %u volumes)\n",
		path, dev->name, dev->id, dev->size,
		le32_to_cpu(dev->label->nvols));
	return 0;

err_prov:
	fblk_teardown(dev);
	fblk_dev_put(dev);
	return ret;
err_bdev:
	fblk_bdev_close(dev);
err_free:
	fblk_dev_put(dev);
	return ret;
}

/**
 * fblk_detach - detach a device by id (non-zero) or name
 * @id: its id, or 0
 * @name: its name when @id is 0
 *
 * Return: 0 or -ENOENT.
 */
int fblk_detach(u32 id, const char *name)
{
	struct fblk_dev *dev, *found = NULL;

	mutex_lock(&fblk_devs_lock);
	list_for_each_entry(dev, &fblk_devs, link) {
		if (id ? dev->id == id : !strcmp(dev->name, name)) {
			found = dev;
			list_del_init(&dev->link);
			break;
		}
	}
	mutex_unlock(&fblk_devs_lock);
	if (!found)
		return -ENOENT;
	fblk_teardown(found);
	pr_info("detached %s (%s)\n", found->path, found->name);
	fblk_dev_put(found);
	return 0;
}

/* Module exit: detach everything. */
void fblk_detach_all(void)
{
	struct fblk_dev *dev;

	for (;;) {
		mutex_lock(&fblk_devs_lock);
		dev = list_first_entry_or_null(&fblk_devs, struct fblk_dev,
					       link);
		if (dev)
			list_del_init(&dev->link);
		mutex_unlock(&fblk_devs_lock);
		if (!dev)
			return;
		fblk_teardown(dev);
		fblk_dev_put(dev);
	}
}
