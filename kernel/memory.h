/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fractos: the pinned pages behind a Memory root (struct fos_mem) and what
 * memory.c and dmabuf.c offer the rest of the module: pinning, dma-buf
 * imports, copies and scatterlists of a Memory's pages.
 */
#ifndef FRACTOS_MEMORY_H
#define FRACTOS_MEMORY_H

#include <linux/iosys-map.h>
#include <linux/kref.h>
#include <linux/limits.h>
#include <linux/list.h>
#include <linux/rwsem.h>
#include <linux/sizes.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include "fos.h"

struct dma_buf;
struct dma_buf_attachment;
struct device;
struct fos_cap;
struct mm_struct;
struct page;
struct sg_table;
struct user_struct;

/**
 * struct fos_mem - the pinned pages behind a Memory root object
 * @c: its contents' header: the reference count (one for the root object
 *	until revoked, one per operation in flight), the release hook
 * @pages: the pinned pages
 * @npages: number of entries in @pages
 * @first_off: offset of the buffer's first byte in pages[0]
 * @len: length of the buffer in bytes
 * @user: the user charged for the pin (locked_vm, against RLIMIT_MEMLOCK),
 *	a reference held with get_uid(); NULL for kernel pages and dma-bufs
 * @kuser: kernel pages only: the user charged for them (locked_vm), a
 *	reference held, or NULL (fos_mem_alloc_charged())
 * @mm: the mm the pin shows in (pinned_vm, not limited), grabbed with
 *	mmgrab()
 * @uaddr: where pages[0] was mapped in @mm when pinned (MEMORY_GRANT
 *	unmaps the pages there that still are ours)
 * @writable: pages were pinned with FOLL_WRITE (dma-buf: its file is
 *	open for writing and WRITE was asked)
 * @dmabuf: the dma-buf the pages are taken from (dmabuf.c), or NULL; its
 *	pages are neither pinned by us nor charged (@user is NULL)
 * @map: @dmabuf's kernel mapping, held as long as @pages are used
 *
 * Device memory (a dma-buf with no struct pages behind its kernel mapping,
 * a BAR: fos_mem_devmem()) has no @pages; its bytes are reached through
 * @map only, by the CPU, and staged through pages for RDMA and block I/O:
 *
 * @map_off: where the buffer's first byte is in @map (device memory)
 * @attach: the dynamic attachment that hears the exporter move the buffer
 *	(device memory of a dynamic exporter), or NULL
 * @dev_lock: read-held around every access through @map of device
 *	memory; write-held by move_notify (under the dma-buf's reservation
 *	lock, so never take that lock while holding this one)
 * @moved: the exporter moved the buffer: @map is stale; under @dev_lock
 * @moved_work: revokes the Memory's object after a move (fos_dmabuf_wq)
 */
struct fos_mem {
	struct fos_contents c;
	struct page **pages;
	unsigned long npages;
	unsigned long first_off;
	u64 len;
	struct user_struct *user;
	struct user_struct *kuser;
	struct mm_struct *mm;
	unsigned long uaddr;
	bool writable;
	struct dma_buf *dmabuf;
	struct iosys_map map;
	u64 map_off;
	struct dma_buf_attachment *attach;
	struct rw_semaphore dev_lock;
	bool moved;
	struct work_struct moved_work;
};

/* Memory with no struct pages (a BAR): reached through its mapping only. */
static inline bool fos_mem_devmem(const struct fos_mem *mem)
{
	return !mem->pages;
}

/* The most bytes of device memory one remote copy step stages. */
#define FOS_STAGE_MAX	((u64)SZ_1M)

/* FOS_STAGE_MAX, or less where max_pin_bytes limits kernel buffers. */
static inline u64 fos_stage_window(void)
{
	u64 most = READ_ONCE(fos_max_pin_bytes);

	return most ? min(most, FOS_STAGE_MAX) : FOS_STAGE_MAX;
}

static inline struct fos_mem *fos_mem_of(struct fos_contents *c)
{
	return container_of(c, struct fos_mem, c);
}

/* The most pages one Memory spans: its page array fits kvmalloc(). */
#define FOS_MAX_PIN_PAGES	((u64)INT_MAX / sizeof(struct page *))

/* memory.c */
void fos_mem_put(struct fos_mem *mem);
void fos_mem_init(struct fos_mem *mem, unsigned long npages,
		  unsigned long first_off, u64 len, bool writable);
unsigned long fos_memlock_limit(void);
struct fos_mem *fos_mem_alloc_kernel(u64 len);
struct fos_mem *fos_mem_alloc_charged(u64 len, struct user_struct *user,
				      unsigned long limit);
int fos_mem_copy_then(const struct fos_cap *src, u64 soff,
		      const struct fos_cap *dst, u64 doff, u64 len,
		      const struct fos_copy_then *then);
s64 fos_mem_copy(const struct fos_cap *src, u64 soff,
		 const struct fos_cap *dst, u64 doff, u64 len, bool nowait);
int fos_mem_copy_local(const struct fos_cap *src, u64 soff,
		       const struct fos_cap *dst, u64 doff, u64 len, bool dry);
s64 fos_mem_sgt(struct fos_mem *mem, u64 off, u64 len, u32 max_pages,
		struct sg_table *sgt);
int fos_mem_read_buf(struct fos_mem *mem, u64 off, void *buf, size_t len);
int fos_mem_write_buf(struct fos_mem *mem, u64 off, const void *buf,
		      size_t len);
int fos_mem_copy_bytes(struct fos_mem *dst, u64 doff, struct fos_mem *src,
		       u64 soff, u64 len);
struct fos_mem *fos_mem_stage(struct fos_mem *mem, u64 off, u64 len);

/* dmabuf.c */
struct fos_mem *fos_mem_import_dmabuf(int fd, u64 off, u64 len, bool writable);
void fos_mem_release_dmabuf(struct fos_mem *mem);
int fos_devmem_read(struct fos_mem *mem, u64 off, void *buf, size_t len);
int fos_devmem_write(struct fos_mem *mem, u64 off, const void *buf,
		     size_t len);
bool fos_devmem_moved(struct fos_mem *mem);
int fos_dmabuf_init(void);
void fos_dmabuf_exit(void);

/* main.c: the device dma-buf imports attach as. */
struct device *fos_device(void);

#endif /* FRACTOS_MEMORY_H */
