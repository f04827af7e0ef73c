// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: MEMORY_GRANT - a Memory's buffer handed over without a copy
 * ("Memory grant" in the uAPI header).
 *
 * The caller's mapping of the pages goes first; then the buffer moves to a
 * new object (fos_obj_hand_over()), which revokes the old one and with it
 * every capability and mapping; the one capability to the new object is
 * an argument of an invocation of the receiver's Request, or lands in the
 * caller's space at a cid reserved beforehand, so that a full space loses
 * nothing and no other thread of the caller ever sees a capability that
 * went to the receiver.
 */
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include "fos.h"
#include "memory.h"
#include "ops.h"
#include "request.h"

/*
 * How long another node has to deliver its copy of what is granted to its
 * Request (the remote layer caps it at FOS_WIRE_GRANT_MS_MAX).
 */
#define FOS_GRANT_WITHIN	(5 * HZ)

/* Pages looked up per get_user_pages_fast() call. */
#define FOS_GRANT_BATCH	64

/* Unmap @n pages at page @first of @mem in the caller's address space. */
static int fos_grant_unmap_run(struct fos_mem *mem, unsigned long first,
			       unsigned long n)
{
	if (!n)
		return 0;
	return vm_munmap(mem->uaddr + first * PAGE_SIZE, n * PAGE_SIZE);
}

/*
 * Unmap the runs of the buffer's range in the caller's address space that
 * still map the very pages pinned, whatever their protection (FOLL_FORCE
 * finds them under PROT_NONE too); a range remapped since keeps what it
 * has now.
 */
static int fos_grant_unmap_mine(struct fos_mem *mem)
{
	struct page *batch[FOS_GRANT_BATCH];
	unsigned long i = 0, run = 0, start = 0;
	int got, j, ret;

	while (i < mem->npages) {
		got = get_user_pages_fast(mem->uaddr + i * PAGE_SIZE,
					  min_t(unsigned long, mem->npages - i,
						FOS_GRANT_BATCH), FOLL_FORCE,
					  batch);
		if (got <= 0) {
			/* Not mapped (any more): nothing to take there. */
			ret = fos_grant_unmap_run(mem, start, run);
			if (ret)
				return ret;
			run = 0;
			i++;
			continue;
		}
		for (j = 0; j < got; j++, i++) {
			if (batch[j] == mem->pages[i]) {
				if (!run)
					start = i;
				run++;
			} else {
				ret = fos_grant_unmap_run(mem, start, run);
				run = 0;
				if (ret) {
					release_pages(batch + j, got - j);
					return ret;
				}
			}
			put_page(batch[j]);
		}
	}
	return fos_grant_unmap_run(mem, start, run);
}

/*
 * Nobody but the new object's holders may reach the pages afterwards: they
 * must be anonymous (a file's pages stay reachable through the file), the
 * caller's mapping of them goes, and then none may be mapped anywhere (a
 * range moved with mremap(), another live process's pin).  Kernel pages
 * and dma-bufs have no user mapping.
 */
static int fos_grant_unmap(struct fos_mem *mem)
{
	unsigned long i;
	int ret;

	if (mem->dmabuf || !mem->user)
		return 0;
	if (mem->first_off || mem->len != (u64)mem->npages << PAGE_SHIFT)
		return -EINVAL;
	for (i = 0; i < mem->npages; i++)
		if (!PageAnon(mem->pages[i]))
			return -EBUSY;
	if (mem->mm == current->mm) {
		ret = fos_grant_unmap_mine(mem);
		if (ret)
			return ret;
	} else if (mmget_not_zero(mem->mm)) {
		mmput(mem->mm);
		return -EBUSY;
	}
	for (i = 0; i < mem->npages; i++)
		if (page_mapped(mem->pages[i]))
			return -EBUSY;
	return 0;
}

/* The checks on the granted capability; its buffer in *@memp. */
static int fos_grant_check(struct fos_space *s, const struct fos_cap *cap,
			   struct fos_mem **memp)
{
	struct fos_mem *mem;
	int ret;

	ret = fos_obj_own_memory_root(cap->obj, s);
	if (ret)
		return ret;
	mem = fos_obj_get_mem(cap->obj);
	if (IS_ERR(mem))
		return PTR_ERR(mem);
	if (cap->off || cap->len != mem->len ||
	    cap->perms != FRACTOS_PERM_ALL) {
		fos_mem_put(mem);
		return -EACCES;
	}
	*memp = mem;
	return 0;
}

int fos_op_memory_grant(struct fos_space *s, struct fos_call *c)
{
	struct fractos_memory_grant *a = &c->args.memory_grant;
	struct fos_cap cap, req = {};
	struct fos_kcap kcap = {};
	struct fos_kcap *kcaps[1] = { &kcap };
	struct fos_cap_slot slot;
	struct fos_object *obj;
	struct fos_mem *mem;
	int ret;

	if (a->flags || !fos_mem_is_zero(a->reserved, sizeof(a->reserved)))
		return -EINVAL;
	/* It revokes, and may wait for another node: a worker does it. */
	if (c->nowait)
		return -EAGAIN;
	a->new_cid = FRACTOS_CID_INVALID;
	ret = fos_cap_get(s, a->cid, &cap);
	if (ret)
		return ret;
	if (a->req != FRACTOS_CID_INVALID) {
		ret = fos_cap_get(s, a->req, &req);
		if (ret)
			goto out_cap;
		if (req.obj->type != FRACTOS_OBJ_REQUEST) {
			ret = -EOPNOTSUPP;
			goto out_req;
		}
	}
	ret = fos_grant_check(s, &cap, &mem);
	if (ret)
		goto out_req;
	obj = fos_obj_create(FRACTOS_OBJ_MEMORY, NULL, NULL);
	if (!obj) {
		ret = -ENOMEM;
		goto out_mem;
	}
	ret = fos_cap_reserve(s, &slot);
	if (ret)
		goto out_obj;
	ret = fos_grant_unmap(mem);
	if (!ret)
		ret = fos_obj_hand_over(cap.obj, obj, s);
	if (ret) {
		fos_cap_unreserve(s, &slot);
		goto out_obj;
	}
	/* No other node reads the old object's keys any more. */
	fos_remote()->grants_sync();
	fos_total_add(FOS_TOTAL_MEMORY_GRANTS, 1);

	kcap.cap.obj = obj;
	kcap.cap.len = mem->len;
	kcap.cap.perms = FRACTOS_PERM_ALL;
	if (req.obj) {
		/*
		 * Another node's receiver gets a copy in its node's memory
		 * (kernel/remote/handover.c): the INVOKE says so.
		 */
		WRITE_ONCE(obj->grant_by, jiffies + FOS_GRANT_WITHIN);
		WRITE_ONCE(obj->granting, true);
		ret = fos_invoke_k(&req, NULL, 0, kcaps, 1, NULL);
		WRITE_ONCE(obj->granting, false);
		if (!ret) {
			/* Delivered: the receiver's to revoke now. */
			fos_obj_give_to_receiver(obj, req.obj);
			fos_cap_unreserve(s, &slot);
			goto out_obj;
		}
		/* Not delivered: it stays with the caller, who hears why. */
		c->out_on_error = true;
	}
	fos_cap_fill(s, &slot, &kcap.cap);
	a->new_cid = slot.cid;
	if (!req.obj)
		fos_call_new_cid(c, a->new_cid, &kcap.cap);
out_obj:
	fos_obj_put(obj);
out_mem:
	fos_mem_put(mem);
out_req:
	if (req.obj)
		fos_obj_put(req.obj);
out_cap:
	fos_obj_put(cap.obj);
	return ret;
}
