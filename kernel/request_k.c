// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: the Requests kernel code makes and invokes - kernel providers
 * (provider.c) and the Requests derived here for another node
 * (remote/derive.c).  The Requests themselves are request.c's.
 */
#include "fos.h"
#include "request.h"

/**
 * fos_req_make_k - fos_kreq_create() and fos_kreq_derive()
 * @s: the provider's space
 * @base: the Request to derive from, or NULL
 * @tag: the tag of a new root
 * @imm: immediates
 * @imm_len: bytes at @imm
 * @caps: capability arguments
 * @ncaps: entries at @caps
 *
 * Return: the object with a reference, or an ERR_PTR.
 */
struct fos_object *fos_req_make_k(struct fos_space *s,
				  const struct fos_cap *base, u64 tag,
				  const void *imm, u32 imm_len,
				  struct fos_kcap *const *caps, u32 ncaps)
{
	struct fos_args_src src = {
		.kimm = imm,
		.kcaps = caps,
		.imm_len = imm_len,
		.ncaps = ncaps,
	};
	u32 delegated;

	if (imm_len > FRACTOS_REQ_MAX_IMM || ncaps > FRACTOS_REQ_MAX_CAPS)
		return ERR_PTR(-E2BIG);
	if (base && base->obj->type != FRACTOS_OBJ_REQUEST)
		return ERR_PTR(-EOPNOTSUPP);
	return fos_req_make(s, base ? base->obj : NULL, tag, &src,
			    &delegated);
}

/**
 * fos_req_derive_for - derive a Request for another node (DERIVE)
 * @base: the Request to derive from
 * @imm: immediates to append
 * @imm_len: bytes at @imm
 * @caps: capability arguments to append
 * @ncaps: entries at @caps
 * @charge: released when the new Request's contents are freed, or at
 *	once if none is made
 *
 * The new Request belongs to no space: it lives while referenced (the
 * remote layer's export of it) and is revoked with @base.
 *
 * Return: the object with a reference, or an ERR_PTR.
 */
struct fos_object *fos_req_derive_for(const struct fos_cap *base,
				      const void *imm, u32 imm_len,
				      struct fos_kcap *const *caps, u32 ncaps,
				      struct fos_req_charge *charge)
{
	struct fos_args_src src = {
		.kimm = imm,
		.kcaps = caps,
		.imm_len = imm_len,
		.ncaps = ncaps,
		.charge = charge,
	};
	u32 delegated;

	might_sleep();
	if (imm_len > FRACTOS_REQ_MAX_IMM || ncaps > FRACTOS_REQ_MAX_CAPS ||
	    base->obj->type != FRACTOS_OBJ_REQUEST) {
		charge->release(charge);
		return ERR_PTR(base->obj->type != FRACTOS_OBJ_REQUEST ?
			       -EOPNOTSUPP : -E2BIG);
	}
	return fos_req_make(NULL, base->obj, 0, &src, &delegated);
}

static int __fos_invoke_k(const struct fos_cap *cap, const void *imm,
			  u32 imm_len, struct fos_kcap *const *caps, u32 ncaps,
			  u32 flags, struct fos_invoke_done *done)
{
	struct fos_args_src src = {
		.kimm = imm,
		.kcaps = caps,
		.imm_len = imm_len,
		.ncaps = ncaps,
	};

	might_sleep();
	if (imm_len > FRACTOS_REQ_MAX_IMM || ncaps > FRACTOS_REQ_MAX_CAPS)
		return -E2BIG;
	if (cap->obj->type != FRACTOS_OBJ_REQUEST)
		return -EOPNOTSUPP;
	return fos_invoke(cap, &src, flags, false, done);
}

/**
 * fos_invoke_k - invoke a Request from kernel code (fos_kinvoke())
 * @cap: the Request capability
 * @imm: immediates
 * @imm_len: bytes at @imm
 * @caps: capability arguments
 * @ncaps: entries at @caps
 * @done: NULL: wait for the owner's answer when the provider is on
 *	another node; else @done->fn gets it
 *
 * Never waits for room: a full queue is -EAGAIN.
 *
 * Return: as fos_invoke().
 */
int fos_invoke_k(const struct fos_cap *cap, const void *imm, u32 imm_len,
		 struct fos_kcap *const *caps, u32 ncaps,
		 struct fos_invoke_done *done)
{
	return __fos_invoke_k(cap, imm, imm_len, caps, ncaps, 0, done);
}

/*
 * fos_invoke_k() with FRACTOS_INVOKE_NOACK (fos_kinvoke_post()): another
 * node's provider is sent the invocation and not waited for.
 */
int fos_invoke_k_post(const struct fos_cap *cap, const void *imm,
		      u32 imm_len, struct fos_kcap *const *caps, u32 ncaps)
{
	return __fos_invoke_k(cap, imm, imm_len, caps, ncaps,
			      FRACTOS_INVOKE_NOACK, NULL);
}

