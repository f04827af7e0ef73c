// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: Memory objects - pinning, views and copies on this node.
 */
#include <linux/capability.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/scatterlist.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include "fos.h"
#include "memory.h"
#include "ops.h"

/* Pages pinned per pin_user_pages_fast() call. */
#define FOS_PIN_BATCH	512

/* Return what fos_mem_charge() took. */
static void fos_mem_uncharge(struct user_struct *user, struct mm_struct *mm,
			     unsigned long npages)
{
	atomic_long_sub(npages, &user->locked_vm);
	atomic64_sub(npages, &mm->pinned_vm);
}

/* Memory's release hook (struct fos_contents_ops). */
static void fos_mem_free(struct fos_contents *c, struct fos_reaper *r)
{
	struct fos_mem *mem = fos_mem_of(c);
	unsigned long i;

	if (mem->dmabuf) {
		fos_mem_release_dmabuf(mem);
	} else {
		if (mem->user) {
			unpin_user_pages_dirty_lock(mem->pages, mem->npages,
						    mem->writable);
			fos_mem_uncharge(mem->user, mem->mm, mem->npages);
			free_uid(mem->user);
			mmdrop(mem->mm);
		} else {
			for (i = 0; i < mem->npages; i++)
				__free_page(mem->pages[i]);
			if (mem->kuser) {
				atomic_long_sub(mem->npages,
						&mem->kuser->locked_vm);
				free_uid(mem->kuser);
			}
		}
		fos_live_add(FOS_LIVE_PINNED_PAGES, -(long)mem->npages);
	}
	fos_live_add(FOS_LIVE_MEMORIES, -1);
	kvfree(mem->pages);
	kfree(mem);
}

static const struct fos_contents_ops fos_mem_ops = {
	.free = fos_mem_free,
};

/**
 * fos_mem_init - the fields every kind of Memory sets once its pages are in
 * @mem: zeroed, with @mem->pages filled in
 * @npages: entries in @mem->pages
 * @first_off: offset of the first byte in pages[0]
 * @len: bytes
 * @writable: the pages may be written
 *
 * Counts the Memory; the caller counts its pages (pinned_pages, dmabufs).
 */
void fos_mem_init(struct fos_mem *mem, unsigned long npages,
		  unsigned long first_off, u64 len, bool writable)
{
	fos_contents_init(&mem->c, &fos_mem_ops);
	mem->npages = npages;
	mem->first_off = first_off;
	mem->len = len;
	mem->writable = writable;
	fos_live_add(FOS_LIVE_MEMORIES, 1);
}

/* May sleep: the last put unpins the pages. */
void fos_mem_put(struct fos_mem *mem)
{
	fos_contents_put(&mem->c);
}

/**
 * fos_memlock_limit - the pages the caller's user may have pinned
 *
 * Return: the caller's RLIMIT_MEMLOCK in pages, or ULONG_MAX with
 * CAP_IPC_LOCK.
 */
unsigned long fos_memlock_limit(void)
{
	if (capable(CAP_IPC_LOCK))
		return ULONG_MAX;
	return rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
}

/* Charge @npages to @user's locked_vm, at most @limit in all, or -ENOMEM. */
static int fos_user_charge(struct user_struct *user, unsigned long npages,
			   unsigned long limit)
{
	if (atomic_long_add_return(npages, &user->locked_vm) > limit) {
		atomic_long_sub(npages, &user->locked_vm);
		return -ENOMEM;
	}
	return 0;
}

/*
 * Charge @npages to the user's locked_vm against RLIMIT_MEMLOCK, as
 * io_uring does for its registered buffers: a space outlives the process
 * (and mm) that created it, so a per-mm charge could be multiplied by
 * forking.  The pin also shows in the mm's pinned_vm (VmPin), unchecked.
 */
static int fos_mem_charge(struct user_struct *user, struct mm_struct *mm,
			  unsigned long npages)
{
	int ret = fos_user_charge(user, npages, fos_memlock_limit());

	if (!ret)
		atomic64_add(npages, &mm->pinned_vm);
	return ret;
}

static struct fos_mem *fos_mem_pin(u64 addr, u64 len, bool writable)
{
	unsigned long start = addr & PAGE_MASK;
	unsigned long first_off = offset_in_page(addr);
	unsigned int gup = FOLL_LONGTERM | (writable ? FOLL_WRITE : 0);
	struct mm_struct *mm = current->mm;
	struct user_struct *user;
	unsigned long pinned = 0;
	unsigned long npages;
	struct fos_mem *mem;
	u64 npages64;
	int ret;

	if (!mm)
		return ERR_PTR(-EFAULT);
	/* The caller checked access_ok(), so addr + len is far from wrapping. */
	npages64 = (PAGE_ALIGN(addr + len) - (u64)start) >> PAGE_SHIFT;
	if (!npages64 || npages64 > FOS_MAX_PIN_PAGES)
		return ERR_PTR(-EINVAL);
	npages = npages64;

	mem = kzalloc(sizeof(*mem), GFP_KERNEL_ACCOUNT);
	if (!mem)
		return ERR_PTR(-ENOMEM);
	user = get_uid(current_user());
	ret = fos_mem_charge(user, mm, npages);
	if (ret)
		goto err_free;
	mem->pages = kvmalloc_array(npages, sizeof(*mem->pages),
				    GFP_KERNEL_ACCOUNT);
	if (!mem->pages) {
		ret = -ENOMEM;
		goto err_uncharge;
	}

	while (pinned < npages) {
		int n = min_t(unsigned long, npages - pinned, FOS_PIN_BATCH);

		ret = pin_user_pages_fast(start + pinned * PAGE_SIZE, n, gup,
					  mem->pages + pinned);
		if (ret <= 0) {
			if (!ret)
				ret = -EFAULT;
			goto err_unpin;
		}
		pinned += ret;
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto err_unpin;
		}
	}

	fos_mem_init(mem, npages, first_off, len, writable);
	mem->user = user;
	mmgrab(mm);
	mem->mm = mm;
	mem->uaddr = start;
	fos_live_add(FOS_LIVE_PINNED_PAGES, npages);
	return mem;

err_unpin:
	unpin_user_pages(mem->pages, pinned);
	kvfree(mem->pages);
err_uncharge:
	fos_mem_uncharge(user, mm, npages);
err_free:
	free_uid(user);
	kfree(mem);
	return ERR_PTR(ret);
}

/**
 * fos_mem_alloc_kernel - a buffer of kernel pages for a kernel provider
 * @len: bytes, non-zero, at most max_pin_bytes (if set)
 *
 * The pages are zeroed, writable, and counted as pinned pages; they are
 * not charged to any user (the provider's module answers for them).  A
 * request the machine cannot meet fails (-ENOMEM) rather than calling the
 * OOM killer: another node may ask for them (kernel/remote/handover.c).
 *
 * Return: the buffer, or ERR_PTR(-EINVAL or -ENOMEM).
 */
struct fos_mem *fos_mem_alloc_kernel(u64 len)
{
	unsigned long npages, i;
	struct fos_mem *mem;

	if (!len || (fos_max_pin_bytes && len > fos_max_pin_bytes) ||
	    len > FOS_MAX_PIN_PAGES << PAGE_SHIFT)
		return ERR_PTR(-EINVAL);
	npages = PAGE_ALIGN(len) >> PAGE_SHIFT;
	mem = kzalloc(sizeof(*mem), GFP_KERNEL);
	if (!mem)
		return ERR_PTR(-ENOMEM);
	mem->pages = kvmalloc_array(npages, sizeof(*mem->pages), GFP_KERNEL);
	if (!mem->pages)
		goto err_mem;
	for (i = 0; i < npages; i++) {
		mem->pages[i] = alloc_page(GFP_KERNEL | __GFP_ZERO |
					   __GFP_RETRY_MAYFAIL | __GFP_NOWARN);
		if (!mem->pages[i])
			goto err_pages;
	}
	fos_mem_init(mem, npages, 0, len, true);
	fos_live_add(FOS_LIVE_PINNED_PAGES, npages);
	return mem;

err_pages:
	while (i--)
		__free_page(mem->pages[i]);
	kvfree(mem->pages);
err_mem:
	kfree(mem);
	return ERR_PTR(-ENOMEM);
}

/**
 * fos_mem_alloc_charged - kernel pages charged to a user
 * @len: as for fos_mem_alloc_kernel()
 * @user: the user charged (locked_vm); the buffer takes a reference
 * @limit: the most pages @user may have charged with these (a space's
 *	memlock: its opener's RLIMIT_MEMLOCK, or ULONG_MAX)
 *
 * As fos_mem_alloc_kernel(), the pages charged first and given back with
 * them.  So another node's grants (remote/handover.c) cannot pin more of
 * this node's memory for a user than that user may pin itself.
 *
 * Return: the buffer, or ERR_PTR(-ENOMEM: past @limit, or no memory;
 * -EINVAL).
 */
struct fos_mem *fos_mem_alloc_charged(u64 len, struct user_struct *user,
				      unsigned long limit)
{
	unsigned long npages = PAGE_ALIGN(len) >> PAGE_SHIFT;
	struct fos_mem *mem;
	int ret = fos_user_charge(user, npages, limit);

	if (ret)
		return ERR_PTR(ret);
	mem = fos_mem_alloc_kernel(len);
	if (IS_ERR(mem)) {
		atomic_long_sub(npages, &user->locked_vm);
		return mem;
	}
	mem->kuser = get_uid(user);
	return mem;
}

int fos_op_memory_create(struct fos_space *s, struct fos_call *c)
{
	struct fractos_memory_create *a = &c->args.memory_create;
	struct fos_cap cap = {};
	struct fos_object *obj;
	struct fos_mem *mem;
	u64 end;
	int ret;

	if ((a->flags & ~FRACTOS_MEMORY_DMABUF) ||
	    !fos_mem_is_zero(a->reserved, sizeof(a->reserved)))
		return -EINVAL;
	if (!(a->flags & FRACTOS_MEMORY_DMABUF) && a->dmabuf_fd)
		return -EINVAL;
	if (!a->perms || (a->perms & ~FRACTOS_PERM_ALL))
		return -EINVAL;
	if (!a->len || check_add_overflow(a->addr, a->len, &end))
		return -EINVAL;
	if (fos_max_pin_bytes && a->len > fos_max_pin_bytes)
		return -EINVAL;

	if (a->flags & FRACTOS_MEMORY_DMABUF) {
		mem = fos_mem_import_dmabuf(a->dmabuf_fd, a->addr, a->len,
					    a->perms & FRACTOS_PERM_WRITE);
	} else {
		if (!access_ok(u64_to_user_ptr(a->addr), a->len))
			return -EFAULT;
		mem = fos_mem_pin(a->addr, a->len,
				  a->perms & FRACTOS_PERM_WRITE);
	}
	if (IS_ERR(mem))
		return PTR_ERR(mem);

	obj = fos_obj_create(FRACTOS_OBJ_MEMORY, s, &mem->c);
	if (!obj) {
		fos_mem_put(mem);
		return -ENOMEM;
	}
	/*
	 * Device memory moved by its exporter before the object held it:
	 * nobody could revoke the object for the move (a move from now on
	 * finds it through its holder).
	 */
	if (fos_devmem_moved(mem)) {
		fos_obj_revoke(obj);
		fos_obj_put(obj);
		return -EAGAIN;
	}

	cap.obj = obj;
	cap.off = 0;
	cap.len = a->len;
	cap.perms = a->perms;
	ret = fos_cap_install(s, &cap, &a->cid);
	if (ret)
		fos_obj_revoke(obj);	/* nobody can reach it: unpin now */
	else
		fos_call_new_cid(c, a->cid, &cap);
	fos_obj_put(obj);
	return ret;
}

/* Look up a Memory capability; on success the caller puts cap->obj. */
static int fos_mem_cap_get(struct fos_space *s, u32 cid, struct fos_cap *cap)
{
	int ret = fos_cap_get(s, cid, cap);

	if (ret)
		return ret;
	if (cap->obj->type != FRACTOS_OBJ_MEMORY) {
		fos_obj_put(cap->obj);
		return -EOPNOTSUPP;
	}
	if (fos_obj_revoked(cap->obj)) {
		fos_obj_put(cap->obj);
		return -EKEYREVOKED;
	}
	return 0;
}

/* Is [off, off + len) inside a view of @view_len bytes? */
static bool fos_range_ok(u64 view_len, u64 off, u64 len)
{
	return off <= view_len && len <= view_len - off;
}

int fos_op_memory_diminish(struct fos_space *s, struct fos_call *c)
{
	struct fractos_memory_diminish *a = &c->args.memory_diminish;
	struct fos_cap cap;
	u64 end;
	int ret;

	if (a->flags ||
	    !fos_mem_is_zero(a->reserved, sizeof(a->reserved)))
		return -EINVAL;
	if (a->drop_perms & ~FRACTOS_PERM_ALL)
		return -EINVAL;
	if (!a->len || check_add_overflow(a->offset, a->len, &end))
		return -EINVAL;

	ret = fos_mem_cap_get(s, a->cid, &cap);
	if (ret)
		return ret;

	if (!fos_range_ok(cap.len, a->offset, a->len)) {
		ret = -ERANGE;
		goto out;
	}
	cap.off += a->offset;
	cap.len = a->len;
	cap.perms &= ~a->drop_perms;
	ret = fos_cap_install(s, &cap, &a->new_cid);
	if (!ret)
		fos_call_new_cid(c, a->new_cid, &cap);
out:
	fos_obj_put(cap.obj);
	return ret;
}

/*
 * Copy @n bytes (inside one page of each side) from byte @soff of @src to
 * byte @doff of @dst, offsets as fos_mem_copy_bytes()' plus first_off.
 * Device memory is read or written through its mapping; between two
 * device memories the bytes go through @bounce (a page), so that no two
 * dev_locks are ever held at once.
 */
static int fos_mem_copy_chunk(struct fos_mem *dst, u64 doff,
			      struct fos_mem *src, u64 soff, size_t n,
			      void *bounce)
{
	void *s = NULL, *d = NULL;
	int ret = 0;

	if (!fos_mem_devmem(dst))
		d = kmap_local_page(dst->pages[doff >> PAGE_SHIFT]) +
		    offset_in_page(doff);
	if (!fos_mem_devmem(src))
		s = kmap_local_page(src->pages[soff >> PAGE_SHIFT]) +
		    offset_in_page(soff);
	if (s && d) {
		memcpy(d, s, n);
	} else if (d) {
		ret = fos_devmem_read(src, soff, d, n);
	} else if (s) {
		ret = fos_devmem_write(dst, doff, s, n);
	} else {
		ret = fos_devmem_read(src, soff, bounce, n);
		if (!ret)
			ret = fos_devmem_write(dst, doff, bounce, n);
	}
	if (s)
		kunmap_local(s);
	if (d)
		kunmap_local(d);
	return ret;
}

/**
 * fos_mem_copy_bytes - copy between two memories of this node
 * @dst: the destination, writable (held by the caller)
 * @doff: where the bytes go, from the start of @dst's buffer
 * @src: the source (held by the caller)
 * @soff: first byte, from the start of @src's buffer
 * @len: bytes, inside both buffers (checked by the caller)
 *
 * Either may be device memory.  Process context.
 *
 * Return: 0, -EKEYREVOKED (device memory's exporter moved it), -EINTR
 * (a fatal signal), -ENOMEM.
 */
int fos_mem_copy_bytes(struct fos_mem *dst, u64 doff, struct fos_mem *src,
		       u64 soff, u64 len)
{
	void *bounce = NULL;
	u64 done = 0;
	int ret = 0;

	might_sleep();
	if (fos_mem_devmem(dst) && fos_mem_devmem(src)) {
		bounce = (void *)__get_free_page(GFP_KERNEL);
		if (!bounce)
			return -ENOMEM;
	}
	soff += src->first_off;
	doff += dst->first_off;
	while (done < len) {
		unsigned long sp = offset_in_page(soff), dp = offset_in_page(doff);
		size_t n = min_t(u64, len - done,
				 PAGE_SIZE - max(sp, dp));

		ret = fos_mem_copy_chunk(dst, doff, src, soff, n, bounce);
		if (ret)
			break;
		done += n;
		soff += n;
		doff += n;
		if (!offset_in_page(doff) && done < len) {
			if (fatal_signal_pending(current)) {
				ret = -EINTR;
				break;
			}
			cond_resched();
		}
	}
	free_page((unsigned long)bounce);
	return ret;
}

/* One page's worth of fos_mem_read_buf() or fos_mem_write_buf(). */
static void fos_mem_page_bytes(struct fos_mem *mem, u64 off, void *buf,
			       size_t n, bool write)
{
	void *p = kmap_local_page(mem->pages[off >> PAGE_SHIFT]);

	if (write)
		memcpy(p + offset_in_page(off), buf, n);
	else
		memcpy(buf, p + offset_in_page(off), n);
	kunmap_local(p);
}

static int fos_mem_buf(struct fos_mem *mem, u64 off, void *buf, size_t len,
		       bool write)
{
	off += mem->first_off;
	if (fos_mem_devmem(mem))
		return write ? fos_devmem_write(mem, off, buf, len) :
			       fos_devmem_read(mem, off, buf, len);
	while (len) {
		size_t n = min_t(u64, len, PAGE_SIZE - offset_in_page(off));

		fos_mem_page_bytes(mem, off, buf, n, write);
		buf += n;
		off += n;
		len -= n;
	}
	return 0;
}

/**
 * fos_mem_read_buf - copy bytes of a memory of this node into a buffer
 * @mem: the memory (held by the caller)
 * @off: first byte, from the start of @mem's buffer
 * @buf: where they go
 * @len: bytes, inside the buffer (checked by the caller); a few pages at
 *	most, as it does not reschedule
 *
 * Return: 0, or -EKEYREVOKED (device memory's exporter moved it).
 */
int fos_mem_read_buf(struct fos_mem *mem, u64 off, void *buf, size_t len)
{
	return fos_mem_buf(mem, off, buf, len, false);
}

/**
 * fos_mem_write_buf - copy a buffer into a memory of this node
 * @mem: the memory, writable (held by the caller)
 * @off: where the bytes go, from the start of @mem's buffer
 * @buf: the bytes
 * @len: how many, as for fos_mem_read_buf()
 *
 * Return: 0, or -EKEYREVOKED (device memory's exporter moved it).
 */
int fos_mem_write_buf(struct fos_mem *mem, u64 off, const void *buf,
		      size_t len)
{
	return fos_mem_buf(mem, off, (void *)buf, len, true);
}

/**
 * fos_mem_stage - pages holding a copy of a range of device memory
 * @mem: device memory (held by the caller)
 * @off: first byte, from the start of @mem's buffer
 * @len: bytes, non-zero, inside the buffer
 *
 * For an RDMA transfer out of memory without struct pages: counted in the
 * totals' staged_bytes.
 *
 * Return: kernel memory (fos_mem_alloc_kernel(); fos_mem_put() it) with
 * the bytes at offset 0, or an ERR_PTR as fos_mem_alloc_kernel() and
 * fos_mem_copy_bytes().
 */
struct fos_mem *fos_mem_stage(struct fos_mem *mem, u64 off, u64 len)
{
	struct fos_mem *stage = fos_mem_alloc_kernel(len);
	int ret;

	if (IS_ERR(stage))
		return stage;
	ret = fos_mem_copy_bytes(stage, 0, mem, off, len);
	if (ret) {
		fos_mem_put(stage);
		return ERR_PTR(ret);
	}
	fos_total_add(FOS_TOTAL_STAGED_BYTES, len);
	return stage;
}

static bool fos_overlap(u64 a, u64 b, u64 len)
{
	return a < b + len && b < a + len;
}

/**
 * fos_mem_copy_local - copy between two views of local Memory
 * @src: the source view (READ checked by the caller)
 * @soff: first byte, from the start of @src
 * @dst: the destination view (WRITE checked by the caller)
 * @doff: where it goes, from the start of @dst
 * @len: bytes, inside both views (checked by the caller)
 * @dry: only check that the copy could be done (kernel/remote/'s loopback)
 *
 * Return: 0, -EKEYREVOKED, -EOPNOTSUPP (a view is not local Memory),
 * -EINVAL (overlap within one memory), -EACCES, -EINTR, -ENOMEM.
 */
int fos_mem_copy_local(const struct fos_cap *src, u64 soff,
		       const struct fos_cap *dst, u64 doff, u64 len, bool dry)
{
	struct fos_mem *smem, *dmem;
	int ret;

	smem = fos_obj_get_mem(src->obj);
	if (IS_ERR(smem))
		return PTR_ERR(smem);
	dmem = fos_obj_get_mem(dst->obj);
	if (IS_ERR(dmem)) {
		ret = PTR_ERR(dmem);
		goto out_smem;
	}
	/* The writability check at pin time backs the WRITE right. */
	if (WARN_ON_ONCE(!dmem->writable)) {
		ret = -EACCES;
		goto out_dmem;
	}
	if (smem == dmem && len &&
	    fos_overlap(src->off + soff, dst->off + doff, len)) {
		ret = -EINVAL;
		goto out_dmem;
	}
	ret = dry ? 0 : fos_mem_copy_bytes(dmem, dst->off + doff, smem,
					   src->off + soff, len);
out_dmem:
	fos_mem_put(dmem);
out_smem:
	fos_mem_put(smem);
	return ret;
}

/**
 * fos_mem_sgt - a scatter table over pinned pages, for RDMA
 * @mem: the memory (held by the caller for as long as @sgt is used)
 * @off: first byte, from the start of the buffer
 * @len: bytes, non-zero, inside the buffer
 * @max_pages: the most pages the table may span
 * @sgt: filled in; sg_free_table() it
 *
 * The table may end before @len bytes if they span more than @max_pages
 * pages.
 *
 * Return: the bytes covered, or a negative errno: -EXDEV for device
 * memory, which has no pages (stage it: fos_mem_stage()).
 */
s64 fos_mem_sgt(struct fos_mem *mem, u64 off, u64 len, u32 max_pages,
		struct sg_table *sgt)
{
	u64 b = mem->first_off + off;
	unsigned long first = b >> PAGE_SHIFT, poff = offset_in_page(b);
	u64 most = (u64)max_pages * PAGE_SIZE - poff;
	unsigned long npages;
	int ret;

	if (!max_pages)
		return -EINVAL;
	if (fos_mem_devmem(mem))
		return -EXDEV;
	len = min(len, most);
	npages = DIV_ROUND_UP(poff + len, PAGE_SIZE);
	if (WARN_ON_ONCE(first + npages > mem->npages))
		return -EINVAL;
	ret = sg_alloc_table_from_pages(sgt, mem->pages + first, npages, poff,
					len, GFP_KERNEL);
	return ret ? ret : len;
}

/* memory_copy's checks of the views; a *@len of 0 becomes the rest of @src. */
static int fos_mem_copy_check(const struct fos_cap *src, u64 soff,
			      const struct fos_cap *dst, u64 doff, u64 *len)
{
	if (src->obj->type != FRACTOS_OBJ_MEMORY ||
	    dst->obj->type != FRACTOS_OBJ_MEMORY)
		return -EOPNOTSUPP;
	if (fos_obj_revoked(src->obj) || fos_obj_revoked(dst->obj))
		return -EKEYREVOKED;
	if (!(src->perms & FRACTOS_PERM_READ) ||
	    !(dst->perms & FRACTOS_PERM_WRITE))
		return -EACCES;
	if (soff > src->len)
		return -ERANGE;
	*len = *len ? *len : src->len - soff;
	if (!fos_range_ok(src->len, soff, *len) ||
	    !fos_range_ok(dst->len, doff, *len))
		return -ERANGE;
	return 0;
}

/**
 * fos_mem_copy_then - fos_mem_copy(), and a continuation with it if it can
 * @src: the source view
 * @soff: first byte, from the start of @src
 * @dst: the destination view
 * @doff: where it goes, from the start of @dst
 * @len: bytes, non-zero
 * @then: the continuations (fos_kmem_copy_then())
 *
 * A small copy from this node's Memory into another node's, whose
 * continuations are that node's Requests, goes as one COPY that carries
 * them (fos_remote_copy_then()): the destination's node invokes one.
 * Otherwise it is copied here, and the caller invokes.
 *
 * Return: 1 (sent with its continuations), 0 (copied: the caller invokes
 * @then->done), or fos_mem_copy()'s errno (the caller invokes @then->err).
 */
int fos_mem_copy_then(const struct fos_cap *src, u64 soff,
		      const struct fos_cap *dst, u64 doff, u64 len,
		      const struct fos_copy_then *then)
{
	s64 ret;

	ret = fos_mem_copy_check(src, soff, dst, doff, &len);
	if (ret)
		return ret;
	/* Any failure here sent nothing: copy and invoke as usual. */
	if (fos_remote()->copy_wanted(src->obj, dst->obj) &&
	    !fos_remote()->copy_then(src, soff, dst, doff, len, then))
		return 1;
	ret = fos_mem_copy(src, soff, dst, doff, len, false);
	return ret < 0 ? ret : 0;
}

/**
 * fos_mem_copy - memory_copy between two views, on this node or not
 * @src: the source view
 * @soff: first byte, from the start of @src
 * @dst: the destination view
 * @doff: where it goes, from the start of @dst
 * @len: bytes; 0 means the rest of @src from @soff
 * @nowait: io_uring's inline issue: -EAGAIN where the fabric is needed
 *
 * Return: the bytes copied, or -EACCES, -ERANGE, or as
 * fos_mem_copy_local() and the remote layer's copy.
 */
s64 fos_mem_copy(const struct fos_cap *src, u64 soff,
		 const struct fos_cap *dst, u64 doff, u64 len, bool nowait)
{
	int ret;

	ret = fos_mem_copy_check(src, soff, dst, doff, &len);
	if (ret)
		return ret;

	/*
	 * Another node's Memory, or fabric_loopback: one-sided RDMA, which
	 * waits for other nodes - never inline in io_uring (-EAGAIN: io-wq
	 * issues it again from a worker that may block).
	 */
	if (fos_remote()->copy_wanted(src->obj, dst->obj))
		ret = nowait ? -EAGAIN :
		      fos_remote()->copy(src, soff, dst, doff, len);
	else
		ret = fos_mem_copy_local(src, soff, dst, doff, len, false);
	return ret ? ret : len;
}

int fos_op_memory_copy(struct fos_space *s, struct fos_call *c)
{
	struct fractos_memory_copy *a = &c->args.memory_copy;
	struct fos_cap src, dst;
	s64 ret;
	u64 end;

	if (a->flags || a->__pad ||
	    !fos_mem_is_zero(a->reserved, sizeof(a->reserved)))
		return -EINVAL;
	if (check_add_overflow(a->src_offset, a->len, &end) ||
	    check_add_overflow(a->dst_offset, a->len, &end))
		return -EINVAL;

	ret = fos_mem_cap_get(s, a->src, &src);
	if (ret)
		return ret;
	ret = fos_mem_cap_get(s, a->dst, &dst);
	if (ret)
		goto out_src;
	ret = fos_mem_copy(&src, a->src_offset, &dst, a->dst_offset, a->len,
			   c->nowait);
	if (ret >= 0) {
		a->copied = ret;
		ret = 0;
	}
	fos_obj_put(dst.obj);
out_src:
	fos_obj_put(src.obj);
	return ret;
}
