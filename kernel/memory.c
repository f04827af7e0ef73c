// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: Memory objects - pinning, views and copies on this node.
 */
#include <linux/capability.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include "fos.h"

/* Pages pinned per pin_user_pages_fast() call. */
#define FOS_PIN_BATCH	512

static void fos_mem_release(struct kref *ref)
{
	struct fos_mem *mem = container_of(ref, struct fos_mem, ref);

	unpin_user_pages_dirty_lock(mem->pages, mem->npages, mem->writable);
	atomic64_sub(mem->npages, &mem->mm->pinned_vm);
	mmdrop(mem->mm);
	fos_live_add(FOS_LIVE_PINNED_PAGES, -(long)mem->npages);
	fos_live_add(FOS_LIVE_MEMORIES, -1);
	kvfree(mem->pages);
	kfree(mem);
}

/* May sleep: the last put unpins the pages. */
void fos_mem_put(struct fos_mem *mem)
{
	kref_put(&mem->ref, fos_mem_release);
}

/*
 * Charge @npages to the caller's pinned_vm against RLIMIT_MEMLOCK, the way
 * RDMA memory registration does.
 */
static int fos_mem_charge(struct mm_struct *mm, unsigned long npages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	s64 pinned = atomic64_add_return(npages, &mm->pinned_vm);

	if (pinned > limit && !capable(CAP_IPC_LOCK)) {
		atomic64_sub(npages, &mm->pinned_vm);
		return -ENOMEM;
	}
	return 0;
}

static struct fos_mem *fos_mem_pin(u64 addr, u64 len, bool writable)
{
	unsigned long start = addr & PAGE_MASK;
	unsigned long first_off = offset_in_page(addr);
	unsigned long npages = DIV_ROUND_UP(first_off + len, PAGE_SIZE);
	unsigned int gup = FOLL_LONGTERM | (writable ? FOLL_WRITE : 0);
	struct mm_struct *mm = current->mm;
	unsigned long pinned = 0;
	struct fos_mem *mem;
	int ret;

	if (!mm)
		return ERR_PTR(-EFAULT);

	mem = kzalloc(sizeof(*mem), GFP_KERNEL_ACCOUNT);
	if (!mem)
		return ERR_PTR(-ENOMEM);
	mem->pages = kvmalloc_array(npages, sizeof(*mem->pages),
				    GFP_KERNEL_ACCOUNT);
	if (!mem->pages) {
		ret = -ENOMEM;
		goto err_free;
	}

	ret = fos_mem_charge(mm, npages);
	if (ret)
		goto err_free;

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

	kref_init(&mem->ref);
	mem->npages = npages;
	mem->first_off = first_off;
	mem->len = len;
	mem->writable = writable;
	mmgrab(mm);
	mem->mm = mm;
	INIT_LIST_HEAD(&mem->dead);
	fos_live_add(FOS_LIVE_PINNED_PAGES, npages);
	fos_live_add(FOS_LIVE_MEMORIES, 1);
	return mem;

err_unpin:
	unpin_user_pages(mem->pages, pinned);
	atomic64_sub(npages, &mm->pinned_vm);
err_free:
	kvfree(mem->pages);
	kfree(mem);
	return ERR_PTR(ret);
}

int fos_op_memory_create(struct fos_space *s, struct fos_call *c)
{
	struct fractos_memory_create *a = &c->args.memory_create;
	struct fos_cap cap = {};
	struct fos_object *obj;
	struct fos_mem *mem;
	u64 end;
	int ret;

	if (a->flags || a->__pad ||
	    !fos_mem_is_zero(a->reserved, sizeof(a->reserved)))
		return -EINVAL;
	if (!a->perms || (a->perms & ~FRACTOS_PERM_ALL))
		return -EINVAL;
	if (!a->len || check_add_overflow(a->addr, a->len, &end))
		return -EINVAL;
	if (fos_max_pin_bytes && a->len > fos_max_pin_bytes)
		return -EINVAL;

	mem = fos_mem_pin(a->addr, a->len, a->perms & FRACTOS_PERM_WRITE);
	if (IS_ERR(mem))
		return PTR_ERR(mem);

	obj = fos_obj_create(FRACTOS_OBJ_MEMORY, s, mem, NULL);
	if (!obj) {
		fos_mem_put(mem);
		return -ENOMEM;
	}

	cap.obj = obj;
	cap.off = 0;
	cap.len = a->len;
	cap.perms = a->perms;
	ret = fos_cap_install(s, &cap, &a->cid);
	if (ret)
		fos_obj_revoke(obj);	/* nobody can reach it: unpin now */
	else
		c->new_cid = a->cid;
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
		c->new_cid = a->new_cid;
out:
	fos_obj_put(cap.obj);
	return ret;
}

/*
 * Copy @len bytes from byte @soff of @src to byte @doff of @dst (offsets
 * from the start of each buffer).  Both memories are held by the caller.
 */
static int fos_mem_copy_pages(struct fos_mem *dst, u64 doff,
			      struct fos_mem *src, u64 soff, u64 len)
{
	u64 done = 0;

	soff += src->first_off;
	doff += dst->first_off;
	while (done < len) {
		unsigned long sp = offset_in_page(soff), dp = offset_in_page(doff);
		size_t n = min_t(u64, len - done,
				 PAGE_SIZE - max(sp, dp));
		void *s, *d;

		d = kmap_local_page(dst->pages[doff >> PAGE_SHIFT]);
		s = kmap_local_page(src->pages[soff >> PAGE_SHIFT]);
		memcpy(d + dp, s + sp, n);
		kunmap_local(s);
		kunmap_local(d);

		done += n;
		soff += n;
		doff += n;
		if (!offset_in_page(doff) && done < len) {
			if (fatal_signal_pending(current))
				return -EINTR;
			cond_resched();
		}
	}
	return 0;
}

static bool fos_overlap(u64 a, u64 b, u64 len)
{
	return a < b + len && b < a + len;
}

int fos_op_memory_copy(struct fos_space *s, struct fos_call *c)
{
	struct fractos_memory_copy *a = &c->args.memory_copy;
	struct fos_mem *smem, *dmem;
	struct fos_cap src, dst;
	u64 len, end;
	int ret;

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

	if (!(src.perms & FRACTOS_PERM_READ) ||
	    !(dst.perms & FRACTOS_PERM_WRITE)) {
		ret = -EACCES;
		goto out_dst;
	}
	if (a->src_offset > src.len) {
		ret = -ERANGE;
		goto out_dst;
	}
	len = a->len ? a->len : src.len - a->src_offset;
	if (!fos_range_ok(src.len, a->src_offset, len) ||
	    !fos_range_ok(dst.len, a->dst_offset, len)) {
		ret = -ERANGE;
		goto out_dst;
	}

	smem = fos_obj_get_mem(src.obj);
	if (IS_ERR(smem)) {
		ret = PTR_ERR(smem);
		goto out_dst;
	}
	dmem = fos_obj_get_mem(dst.obj);
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
	    fos_overlap(src.off + a->src_offset, dst.off + a->dst_offset, len)) {
		ret = -EINVAL;
		goto out_dmem;
	}

	ret = fos_mem_copy_pages(dmem, dst.off + a->dst_offset,
				 smem, src.off + a->src_offset, len);
	if (!ret)
		a->copied = len;
out_dmem:
	fos_mem_put(dmem);
out_smem:
	fos_mem_put(smem);
out_dst:
	fos_obj_put(dst.obj);
out_src:
	fos_obj_put(src.obj);
	return ret;
}
