// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: MEMORY_GRANT - a Memory's buffer handed over without a copy
 * ("Memory grant" in the uAPI header).
 *
 * The buffer moves to a new object (fos_obj_hand_over()), which revokes
 * the old one and with it every capability and mapping; the caller's own
 * mapping of the pages goes first; the one capability to the new object
 * is an argument of an invocation of the receiver's Request, or lands in
 * the caller's space.
 */
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include "fos.h"
#include "memory.h"
#include "ops.h"
#include "request.h"

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
 * The caller's mapping of @mem's pages goes: every page of the buffer's
 * range that still maps the very page pinned is unmapped (a range the
 * process has remapped since keeps what it has now).  Kernel pages and
 * dma-bufs have no such mapping; pages a process that is gone pinned
 * (stolen Memory) neither; a live other process's cannot be taken away.
 */
static int fos_grant_unmap(struct fos_mem *mem)
{
	struct page *batch[FOS_GRANT_BATCH];
	unsigned long i = 0, run = 0, start = 0;
	int got, j, ret;

	if (mem->dmabuf || !mem->user)
		return 0;
	if (mem->first_off || mem->len != (u64)mem->npages << PAGE_SHIFT)
		return -EINVAL;
	if (mem->mm != current->mm) {
		if (!mmget_not_zero(mem->mm))
			return 0;
		mmput(mem->mm);
		return -EBUSY;
	}
	while (i < mem->npages) {
		got = get_user_pages_fast(mem->uaddr + i * PAGE_SIZE,
					  min_t(unsigned long, mem->npages - i,
						FOS_GRANT_BATCH), 0, batch);
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

/* The checks on the granted capability; its buffer in *@memp. */
static int fos_grant_check(struct fos_space *s, const struct fos_cap *cap,
			   struct fos_mem **memp)
{
	struct fos_mem *mem;

	if (cap->obj->type != FRACTOS_OBJ_MEMORY)
		return -EOPNOTSUPP;
	if (fos_obj_revoked(cap->obj))
		return -EKEYREVOKED;
	if (cap->obj->proxy || cap->obj->parent ||
	    !fos_obj_owned_by(cap->obj, s))
		return -EPERM;
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
	kcap.cap.obj = obj;
	kcap.cap.len = mem->len;
	kcap.cap.perms = FRACTOS_PERM_ALL;
	/*
	 * The caller holds the new object before anything is taken from it,
	 * so that nothing is lost if its space is full (EMFILE); until the
	 * hand-over the object is empty (EOPNOTSUPP to any use).
	 */
	ret = fos_cap_install(s, &kcap.cap, &a->new_cid);
	if (ret)
		goto out_obj;
	ret = fos_grant_unmap(mem);
	if (!ret)
		ret = fos_obj_hand_over(cap.obj, obj, s, req.obj);
	if (ret) {
		fos_cap_close_if(s, a->new_cid, &kcap.cap);
		a->new_cid = FRACTOS_CID_INVALID;
		goto out_obj;
	}
	/* No other node reads the old object's keys any more. */
	fos_remote()->grants_sync();
	fos_total_add(FOS_TOTAL_MEMORY_GRANTS, 1);

	if (!req.obj) {
		fos_call_new_cid(c, a->new_cid, &kcap.cap);
		goto out_obj;
	}
	ret = fos_invoke_k(&req, NULL, 0, kcaps, 1, NULL);
	if (!ret) {
		fos_cap_close_if(s, a->new_cid, &kcap.cap);
		a->new_cid = FRACTOS_CID_INVALID;
	} else {
		/* Not delivered: it stays with the caller, who hears why. */
		fos_obj_set_owner(obj, s);
		c->out_on_error = true;
	}
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
