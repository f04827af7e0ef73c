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
#include <linux/types.h>
#include "fos.h"

struct dma_buf;
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
 *	a reference held with get_uid()
 * @mm: the mm the pin shows in (pinned_vm, not limited), grabbed with
 *	mmgrab()
 * @writable: pages were pinned with FOLL_WRITE (dma-buf: its file is
 *	open for writing and WRITE was asked)
 * @dmabuf: the dma-buf the pages are taken from (dmabuf.c), or NULL; its
 *	pages are neither pinned by us nor charged (@user is NULL)
 * @map: @dmabuf's kernel mapping, held as long as @pages are used
 */
struct fos_mem {
	struct fos_contents c;
	struct page **pages;
	unsigned long npages;
	unsigned long first_off;
	u64 len;
	struct user_struct *user;
	struct mm_struct *mm;
	bool writable;
	struct dma_buf *dmabuf;
	struct iosys_map map;
};

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
struct fos_mem *fos_mem_alloc_kernel(u64 len);
s64 fos_mem_copy(const struct fos_cap *src, u64 soff,
		 const struct fos_cap *dst, u64 doff, u64 len, bool nowait);
int fos_mem_copy_local(const struct fos_cap *src, u64 soff,
		       const struct fos_cap *dst, u64 doff, u64 len, bool dry);
s64 fos_mem_sgt(struct fos_mem *mem, u64 off, u64 len, u32 max_pages,
		struct sg_table *sgt);

/* dmabuf.c */
struct fos_mem *fos_mem_import_dmabuf(int fd, u64 off, u64 len, bool writable);
void fos_mem_release_dmabuf(struct fos_mem *mem);

#endif /* FRACTOS_MEMORY_H */
