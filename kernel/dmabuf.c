// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: Memory over a dma-buf (FRACTOS_MEMORY_DMABUF).
 *
 * A buffer another driver exports as a dma-buf (a GPU driver's buffer
 * object, udmabuf, a DMA heap) becomes a Memory object like any other.
 * The import maps the buffer for the CPU with dma_buf_vmap(), which keeps
 * it in place until dma_buf_vunmap() (a dynamic exporter pins it), and
 * takes the struct pages behind that mapping.  Every user of a Memory's
 * pages then works unchanged: CPU copies, one-sided RDMA and grants to
 * other nodes, and kernel providers' bios.
 *
 * What is not imported, with EOPNOTSUPP: an exporter without a kernel
 * mapping, and memory without struct pages (a device BAR: an I/O memory
 * mapping, as for GPU VRAM).  Those need a DMA attachment of the NIC and
 * of the NVMe device to the buffer (peer-to-peer DMA), which this path
 * does not do.
 *
 * Accounting: the buffer's memory belongs to its exporter and is charged
 * where the exporter charges it (a memfd, a GEM object), so nothing is
 * charged to RLIMIT_MEMLOCK here and the pages are not counted in
 * pinned_pages; the "dmabufs" live counter counts the imports.
 */
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
	if (is_vmalloc_addr(va))
		return vmalloc_to_page(va);
	if (virt_addr_valid(va))
		return virt_to_page(va);
	return NULL;
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
 * -EOPNOTSUPP (no kernel mapping, or no struct pages behind it), -ENOMEM.
 */
struct fos_mem *fos_mem_import_dmabuf(int fd, u64 off, u64 len, bool writable)
{
	struct dma_buf *dmabuf;
	struct fos_mem *mem;
	unsigned long i, npages;
	u64 end, npages64;
	void *base;
	int ret;

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
	mem->pages = kvmalloc_array(npages, sizeof(*mem->pages),
				    GFP_KERNEL_ACCOUNT);
	if (!mem->pages)
		goto err_free;

	ret = fos_dmabuf_vmap(dmabuf, &mem->map);
	if (ret) {
		/* dma_buf_vmap() says EINVAL for "this exporter has none". */
		if (ret == -EINVAL)
			ret = -EOPNOTSUPP;
		goto err_free;
	}
	ret = -EOPNOTSUPP;
	if (mem->map.is_iomem || !mem->map.vaddr)
		goto err_vunmap;
	base = mem->map.vaddr + (off & PAGE_MASK);
	for (i = 0; i < npages; i++) {
		mem->pages[i] = fos_dmabuf_page(base + i * PAGE_SIZE);
		if (!mem->pages[i])
			goto err_vunmap;
	}

	fos_mem_init(mem, npages, offset_in_page(off), len, writable);
	mem->dmabuf = dmabuf;
	fos_live_add(FOS_LIVE_DMABUFS, 1);
	return mem;

err_vunmap:
	fos_dmabuf_vunmap(dmabuf, &mem->map);
err_free:
	kvfree(mem->pages);
	kfree(mem);
err_put:
	dma_buf_put(dmabuf);
	return ERR_PTR(ret);
}

/* The last reference on a dma-buf Memory is gone: give the buffer back. */
void fos_mem_release_dmabuf(struct fos_mem *mem)
{
	fos_dmabuf_vunmap(mem->dmabuf, &mem->map);
	dma_buf_put(mem->dmabuf);
	fos_live_add(FOS_LIVE_DMABUFS, -1);
}
