// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: kernel providers' Memory operations (provider.h) - the pages
 * under a view of this node's Memory, and copies between views on any
 * nodes, with or without the continuations that follow them.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include "fos.h"
#include "memory.h"
#include "provider.h"

/**
 * fos_kmem_map_view - the pages under a range of a view of this node's Memory
 * @c: the Memory capability
 * @off: first byte, from the start of the view
 * @len: bytes, non-zero
 * @perms: the rights the caller needs: FRACTOS_PERM_READ to read the
 *	pages (a device write), FRACTOS_PERM_WRITE to write them (a read
 *	from the device)
 * @map: filled in; fos_kmem_unmap() it
 *
 * Return: 0, -EOPNOTSUPP (not Memory), -EINVAL (@len 0 or bad @perms),
 * -EACCES (@c lacks @perms), -ERANGE (outside the view), -EREMOTE
 * (another node's Memory) or -EXDEV (device memory, which has no struct
 * pages: a dma-buf over a BAR): use a staging buffer and fos_kmem_copy();
 * -EKEYREVOKED.
 */
int fos_kmem_map_view(const struct fos_kcap *c, u64 off, u64 len, u32 perms,
		      struct fos_kmem_map *map)
{
	const struct fos_cap *cap = &c->cap;
	struct fos_mem *mem;
	u64 b;

	if (cap->obj->type != FRACTOS_OBJ_MEMORY)
		return -EOPNOTSUPP;
	if (!len || !perms || (perms & ~FRACTOS_PERM_ALL))
		return -EINVAL;
	if ((cap->perms & perms) != perms)
		return -EACCES;
	if (off > cap->len || len > cap->len - off)
		return -ERANGE;
	if (fos_obj_remote(cap->obj))
		return -EREMOTE;
	mem = fos_obj_get_mem(cap->obj);
	if (IS_ERR(mem))
		return PTR_ERR(mem);
	if (fos_mem_devmem(mem)) {
		fos_mem_put(mem);
		return -EXDEV;
	}
	/* The writability check at pin time backs the WRITE right. */
	if (WARN_ON_ONCE((perms & FRACTOS_PERM_WRITE) && !mem->writable)) {
		fos_mem_put(mem);
		return -EACCES;
	}
	b = mem->first_off + cap->off + off;
	map->pages = mem->pages + (b >> PAGE_SHIFT);
	map->poff = offset_in_page(b);
	map->npages = DIV_ROUND_UP(map->poff + len, PAGE_SIZE);
	map->len = len;
	map->mem = mem;
	return 0;
}
EXPORT_SYMBOL_GPL(fos_kmem_map_view);

/**
 * fos_kmem_unmap - done with the pages of fos_kmem_map_view()
 * @map: the map; its pages may be unpinned now (if revoked meanwhile)
 */
void fos_kmem_unmap(struct fos_kmem_map *map)
{
	if (map->mem)
		fos_mem_put(map->mem);
	map->mem = NULL;
	map->pages = NULL;
}
EXPORT_SYMBOL_GPL(fos_kmem_unmap);

/**
 * fos_kmem_copy - copy between two Memory views, on any nodes
 * @src: the source view (READ)
 * @soff: first byte, from the start of @src
 * @dst: the destination view (WRITE)
 * @doff: where it goes, from the start of @dst
 * @len: bytes, non-zero
 *
 * As MEMORY_COPY: between two nodes, one RDMA transfer.
 *
 * Return: 0, -EINVAL, -EOPNOTSUPP, -EKEYREVOKED, -EACCES, -ERANGE, or the
 * fabric's errnos.
 */
int fos_kmem_copy(const struct fos_kcap *src, u64 soff,
		  const struct fos_kcap *dst, u64 doff, u64 len)
{
	s64 ret;

	might_sleep();
	if (!len)
		return -EINVAL;
	ret = fos_mem_copy(&src->cap, soff, &dst->cap, doff, len, false);
	return ret < 0 ? ret : 0;
}
EXPORT_SYMBOL_GPL(fos_kmem_copy);

/**
 * fos_kmem_copy_then - copy between two Memory views, then continue
 * @src: the source view (READ)
 * @soff: first byte, from the start of @src
 * @dst: the destination view (WRITE)
 * @doff: where it goes, from the start of @dst
 * @len: bytes, non-zero
 * @then: the continuations
 * @copy_ret: the copy's result when this node knows it: 0 or its errno;
 *	0 also when the destination's node copied and invoked
 *
 * fos_kmem_copy(), then fos_kinvoke_post() of @then->done with its
 * immediates, or of @then->err (@then->done without it) with the
 * copy's errno in its immediates.  Exactly one of them is invoked, or
 * the call fails.  A copy of at most copy_inline_max bytes from this
 * node's Memory into another node's, whose continuations are plain
 * capabilities to that node's Requests, is one fabric message: the COPY
 * carries the invocations, and that node writes the bytes and invokes
 * one ("Pushed copies that continue" in remote/wire.h); its refusal is
 * counted in totals/noack_refused.  A storage service's answer to a read
 * for another node takes one message instead of three.
 *
 * Return: 0 (invoked, or handed to the destination's node), -EINVAL (no
 * @then->done, no bytes, immediates too long, or @then->errno_off past
 * @then->err_len - 8), -ENOMEM, or fos_kinvoke_post()'s.
 */
int fos_kmem_copy_then(const struct fos_kcap *src, u64 soff,
		       const struct fos_kcap *dst, u64 doff, u64 len,
		       const struct fos_kthen *then, int *copy_ret)
{
	const struct fos_kcap *err = then->err ?: then->done;
	struct fos_copy_then t = {
		.done = &then->done->cap,
		.done_imm = then->done_imm,
		.done_len = then->done_len,
		.err = &err->cap,
		.err_imm = then->err_imm,
		.err_len = then->err_len,
		.errno_off = then->errno_off,
	};
	s64 e;
	void *imm;
	int ret;

	might_sleep();
	*copy_ret = 0;
	if (!then->done || !len || then->done_len > FRACTOS_REQ_MAX_IMM ||
	    then->err_len > FRACTOS_REQ_MAX_IMM ||
	    (u64)then->errno_off + sizeof(e) > then->err_len)
		return -EINVAL;
	ret = fos_mem_copy_then(&src->cap, soff, &dst->cap, doff, len, &t);
	if (ret > 0)
		return 0;
	*copy_ret = ret;
	if (!ret)
		return fos_kinvoke_post(then->done, then->done_imm,
					then->done_len, NULL, 0);
	imm = kmemdup(then->err_imm, then->err_len, GFP_KERNEL);
	if (!imm)
		return -ENOMEM;
	e = ret;
	memcpy((u8 *)imm + then->errno_off, &e, sizeof(e));
	ret = fos_kinvoke_post(err, imm, then->err_len, NULL, 0);
	kfree(imm);
	return ret;
}
EXPORT_SYMBOL_GPL(fos_kmem_copy_then);
