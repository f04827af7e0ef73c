// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: Memory over a dma-buf (FRACTOS_MEMORY_DMABUF).
 *
 * A buffer another driver exports as a dma-buf (a GPU driver's buffer
 * object, udmabuf, a DMA heap, a device's BAR) becomes a Memory object
 * like any other.  The import maps the buffer for the CPU with
 * dma_buf_vmap(), which keeps it in place until dma_buf_vunmap() (a
 * dynamic exporter pins it, or tells us it moved: below).
 *
 * Memory with struct pages behind that mapping: the import takes those
 * pages, and every user of a Memory's pages works unchanged: CPU copies,
 * one-sided RDMA and grants to other nodes, kernel providers' bios.
 *
 * Device memory: a mapping with no struct pages behind it (an I/O memory
 * mapping of a BAR, as for GPU VRAM).  Its bytes are reached through the
 * mapping only (fos_devmem_read(), fos_devmem_write()): local copies go
 * straight through it; a remote copy or a grant stages them through pages
 * (counted in the totals' staged_bytes); fos_kmem_map_view() says -EXDEV
 * so that a provider stages them too.  Moving the bytes between the NIC
 * and the device with no CPU copy needs a DMA attachment of the NIC itself
 * (ib_umem_dmabuf_get(), GPUDirect RDMA), which soft-RoCE cannot have:
 * not done.
 *
 * A dynamic exporter (one that may move its buffers) is attached to with
 * dma_buf_dynamic_attach(); its move_notify marks the Memory moved, waits
 * for the accesses through the old mapping in flight, and revokes the
 * Memory's object on fos_dmabuf_wq: holders see -EKEYREVOKED and monitors
 * fire, as for CAP_REVOKE.  The attachment is never mapped, so nothing
 * pins the buffer.
 *
 * What is not imported, with EOPNOTSUPP: an exporter without a kernel
 * mapping (it needs that DMA attachment of the device that moves the
 * bytes).
 *
 * Accounting: the buffer's memory belongs to its exporter and is charged
 * where the exporter charges it (a memfd, a GEM object, a device), so
 * nothing is charged to RLIMIT_MEMLOCK here and the pages are not counted
 * in pinned_pages; the "dmabufs" live counter counts the imports.
 */
#include <linux/device.h>
#include <linux/dma-buf.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include "fos.h"
#include "memory.h"

MODULE_IMPORT_NS(DMA_BUF);

/* From 6.2 dma_buf_vmap() wants the reservation lock held (Kbuild). */
static int fos_dmabuf_vmap(struct dma_buf *dmabuf, struct iosys_map *map)
{
#ifdef FOS_HAVE_DMA_BUF_VMAP_UNLOCKED
	return dma_buf_vmap_unlocked(dmabuf, map);
#else
	return dma_buf_vmap(dmabuf, map);
#endif
}

static void fos_dmabuf_vunmap(struct dma_buf *dmabuf, struct iosys_map *map)
{
#ifdef FOS_HAVE_DMA_BUF_VMAP_UNLOCKED
	dma_buf_vunmap_unlocked(dmabuf, map);
#else
	dma_buf_vunmap(dmabuf, map);
#endif
}

/* The page behind one page-aligned address of a kernel mapping, or NULL. */
static struct page *fos_dmabuf_page(void *va)
{
	unsigned long pfn;

	/* An ioremap()ed or memremap()ed BAR: no struct pages. */
	if (is_vmalloc_addr(va)) {
		pfn = vmalloc_to_pfn(va);
		return pfn_valid(pfn) ? pfn_to_page(pfn) : NULL;
	}
	if (virt_addr_valid(va))
		return virt_to_page(va);
	return NULL;
}

/* Revocations of moved buffers: they may free a Memory, so never inline. */
static struct workqueue_struct *fos_dmabuf_wq;

/*
 * Begin an access through device memory's mapping: -EKEYREVOKED once the
 * exporter has moved the buffer.  fos_devmem_end() after.
 */
static int fos_devmem_begin(struct fos_mem *mem)
{
	might_sleep();
	down_read(&mem->dev_lock);
	if (mem->moved) {
		up_read(&mem->dev_lock);
		return -EKEYREVOKED;
	}
	return 0;
}

static void fos_devmem_end(struct fos_mem *mem)
{
	up_read(&mem->dev_lock);
}

/**
 * fos_devmem_read - copy bytes out of device memory
 * @mem: device memory (fos_mem_devmem()), held by the caller
 * @off: first byte, from the start of the buffer
 * @buf: where they go
 * @len: bytes, inside the buffer (checked by the caller)
 *
 * Return: 0, or -EKEYREVOKED (the exporter moved the buffer).
 */
int fos_devmem_read(struct fos_mem *mem, u64 off, void *buf, size_t len)
{
	int ret = fos_devmem_begin(mem);

	if (ret)
		return ret;
	iosys_map_memcpy_from(buf, &mem->map, mem->map_off + off, len);
	fos_devmem_end(mem);
	return 0;
}

/**
 * fos_devmem_write - copy bytes into device memory
 * @mem: writable device memory, held by the caller
 * @off: first byte, from the start of the buffer
 * @buf: the bytes
 * @len: how many, inside the buffer (checked by the caller)
 *
 * Return: 0, or -EKEYREVOKED (the exporter moved the buffer).
 */
int fos_devmem_write(struct fos_mem *mem, u64 off, const void *buf,
		     size_t len)
{
	int ret = fos_devmem_begin(mem);

	if (ret)
		return ret;
	iosys_map_memcpy_to(&mem->map, mem->map_off + off, buf, len);
	fos_devmem_end(mem);
	return 0;
}

/**
 * fos_devmem_moved - whether device memory's exporter moved it
 * @mem: any Memory, held by the caller
 *
 * Return: true once a dynamic exporter has moved @mem's buffer (it is
 * revoked, or about to be); false for every other Memory.
 */
bool fos_devmem_moved(struct fos_mem *mem)
{
	bool moved;

	if (!fos_mem_devmem(mem))
		return false;
	down_read(&mem->dev_lock);
	moved = mem->moved;
	up_read(&mem->dev_lock);
	return moved;
}

/* After a move: revoke the object holding @mem, then let @mem go. */
static void fos_dmabuf_moved_work(struct work_struct *work)
{
	struct fos_mem *mem = container_of(work, struct fos_mem, moved_work);

	fos_contents_revoke_holder(&mem->c);
	fos_mem_put(mem);
}

/*
 * The exporter moves the buffer (its reservation lock is held): wait for
 * the accesses through the old mapping, refuse new ones, and revoke the
 * Memory, outside this lock: its release takes it.
 */
static void fos_dmabuf_move_notify(struct dma_buf_attachment *attach)
{
	struct fos_mem *mem = attach->importer_priv;
	bool first;

	down_write(&mem->dev_lock);
#ifdef FOS_HAVE_DMA_BUF_VMAP_UNLOCKED
	/*
	 * The core shares one mapping among a buffer's importers: give
	 * ours back now (the reservation lock is held, as 6.2+ wants), or
	 * an import after the move could be handed the stale address.  No
	 * mapping yet (the exporter moves the buffer inside our vmap, as
	 * amdgpu does): the one we get is the new place, nothing moved.
	 * Before 6.2 dma_buf_vunmap() takes dmabuf->lock, which is taken
	 * before the reservation lock elsewhere: the mapping then goes at
	 * release (Documentation/design.rst, "Device memory, second step").
	 */
	if (iosys_map_is_null(&mem->map)) {
		up_write(&mem->dev_lock);
		return;
	}
	dma_buf_vunmap(mem->dmabuf, &mem->map);
	iosys_map_clear(&mem->map);
#endif
	first = !mem->moved;
	mem->moved = true;
	up_write(&mem->dev_lock);
	if (!first)
		return;
	fos_total_add(FOS_TOTAL_DEVMEM_MOVES, 1);
	/*
	 * A Memory on its way out (last reference gone) has no holder; one
	 * not yet held by an object is refused by MEMORY_CREATE.
	 */
	if (kref_get_unless_zero(&mem->c.ref))
		queue_work(fos_dmabuf_wq, &mem->moved_work);
}

/*
 * allow_peer2peer: what is asked of the exporter is its buffer's kernel
 * mapping, which may be I/O memory; no struct pages are needed.
 */
static const struct dma_buf_attach_ops fos_dmabuf_importer = {
	.allow_peer2peer = true,
	.move_notify = fos_dmabuf_move_notify,
};

static void fos_dmabuf_detach(struct fos_mem *mem)
{
	struct device *dev;

	if (!mem->attach)
		return;
	dev = mem->attach->dev;
	dma_buf_detach(mem->dmabuf, mem->attach);
	put_device(dev);
	mem->attach = NULL;
}

int fos_dmabuf_init(void)
{
	fos_dmabuf_wq = alloc_workqueue("fractos_dmabuf", WQ_UNBOUND, 0);
	return fos_dmabuf_wq ? 0 : -ENOMEM;
}

/* Every Memory is gone but those a queued revocation holds: drain it. */
void fos_dmabuf_exit(void)
{
	destroy_workqueue(fos_dmabuf_wq);
}

/**
 * fos_mem_import_dmabuf - a Memory over part of a dma-buf
 * @fd: the dma-buf's file descriptor in the calling process
 * @off: first byte of the range, from the start of the dma-buf
 * @len: bytes, non-zero (checked by the caller)
 * @writable: FRACTOS_PERM_WRITE is asked for
 *
 * The Memory holds a reference on the dma-buf, so the caller may close
 * @fd; the exporter's buffer lives until the Memory is released.
 *
 * Return: the memory, or ERR_PTR(-EBADF) (@fd is not open), -EINVAL (it
 * is not a dma-buf), -EACCES (@writable but the dma-buf's file is not
 * open for writing), -ERANGE (the range passes the dma-buf's end),
 * -EOPNOTSUPP (no kernel mapping), -EAGAIN (a dynamic exporter moved the
 * device memory while it was being imported), -ENOMEM, or a dynamic
 * exporter's refusal to attach its device memory.
 */
struct fos_mem *fos_mem_import_dmabuf(int fd, u64 off, u64 len, bool writable)
{
	struct dma_buf *dmabuf;
	struct fos_mem *mem;
	unsigned long i, npages;
	u64 end, npages64;
	int ret, attach_err = 0;
	void *base;

	dmabuf = dma_buf_get(fd);
	if (IS_ERR(dmabuf))
		return ERR_CAST(dmabuf);
	ret = -EACCES;
	if (writable && !(dmabuf->file->f_mode & FMODE_WRITE))
		goto err_put;
	ret = -ERANGE;
	if (check_add_overflow(off, len, &end) || end > dmabuf->size)
		goto err_put;
	npages64 = (PAGE_ALIGN(end) - (off & PAGE_MASK)) >> PAGE_SHIFT;
	ret = -EINVAL;
	if (npages64 > FOS_MAX_PIN_PAGES)
		goto err_put;
	npages = npages64;

	ret = -ENOMEM;
	mem = kzalloc(sizeof(*mem), GFP_KERNEL_ACCOUNT);
	if (!mem)
		goto err_put;
	init_rwsem(&mem->dev_lock);
	INIT_WORK(&mem->moved_work, fos_dmabuf_moved_work);
	mem->dmabuf = dmabuf;
	/* Before the mapping: a move from now on reaches us. */
	if (dma_buf_is_dynamic(dmabuf)) {
		struct device *dev = get_device(fos_device());

		mem->attach = dma_buf_dynamic_attach(dmabuf, dev,
						     &fos_dmabuf_importer, mem);
		if (IS_ERR(mem->attach)) {
			/* Needed for device memory only: known after vmap. */
			attach_err = PTR_ERR(mem->attach);
			mem->attach = NULL;
			put_device(dev);
		}
	}

	ret = fos_dmabuf_vmap(dmabuf, &mem->map);
	if (ret) {
		/* dma_buf_vmap() says EINVAL for "this exporter has none". */
		if (ret == -EINVAL)
			ret = -EOPNOTSUPP;
		goto err_detach;
	}
	ret = -EOPNOTSUPP;
	if (iosys_map_is_null(&mem->map))
		goto err_vunmap;
	if (!mem->map.is_iomem) {
		mem->pages = kvmalloc_array(npages, sizeof(*mem->pages),
					    GFP_KERNEL_ACCOUNT);
		ret = -ENOMEM;
		if (!mem->pages)
			goto err_vunmap;
		base = mem->map.vaddr + (off & PAGE_MASK);
		for (i = 0; i < npages; i++) {
			mem->pages[i] = fos_dmabuf_page(base + i * PAGE_SIZE);
			if (!mem->pages[i])
				break;
		}
		/* A mapping with no struct pages: device memory after all. */
		if (i < npages) {
			kvfree(mem->pages);
			mem->pages = NULL;
		}
	}

	if (fos_mem_devmem(mem)) {
		/* A dynamic exporter's, and no way to hear it move: refused. */
		ret = attach_err;
		if (attach_err)
			goto err_vunmap;
		ret = -EAGAIN;
		if (fos_devmem_moved(mem))
			goto err_vunmap;
		mem->map_off = off;
		fos_mem_init(mem, 0, 0, len, writable);
	} else {
		/*
		 * Pages: the mapping holds them in place (the exporter pins
		 * what it maps), and nothing of ours could stop an RDMA
		 * transfer in flight on a move: no attachment.  A move before
		 * the detach took our mapping (6.2+): the pages may be stale.
		 */
		fos_dmabuf_detach(mem);
		ret = -EAGAIN;
		if (iosys_map_is_null(&mem->map)) {
			kvfree(mem->pages);
			goto err_free;
		}
		fos_mem_init(mem, npages, offset_in_page(off), len, writable);
	}
	fos_live_add(FOS_LIVE_DMABUFS, 1);
	return mem;

err_vunmap:
	/* No move_notify after the detach: @map is ours to read. */
	fos_dmabuf_detach(mem);
	if (!iosys_map_is_null(&mem->map))
		fos_dmabuf_vunmap(dmabuf, &mem->map);
	goto err_free;
err_detach:
	fos_dmabuf_detach(mem);
err_free:
	kfree(mem);
err_put:
	dma_buf_put(dmabuf);
	return ERR_PTR(ret);
}

/* The last reference on a dma-buf Memory is gone: give the buffer back. */
void fos_mem_release_dmabuf(struct fos_mem *mem)
{
	/* No move_notify after the detach: @map is ours to read. */
	fos_dmabuf_detach(mem);
	/* Given back already by a move (6.2+). */
	if (!iosys_map_is_null(&mem->map))
		fos_dmabuf_vunmap(mem->dmabuf, &mem->map);
	dma_buf_put(mem->dmabuf);
	fos_live_add(FOS_LIVE_DMABUFS, -1);
}
