/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fractos: Requests (request.c) - the immutable contents of a Request
 * object (struct fos_req), delivering an invocation to its provider's
 * queue, and the Requests kernel code makes and invokes (provider.c).
 * Contents are dropped with fos_req_put(): the object reaper (object.c)
 * frees contents and objects together, through fos_req_ops.
 */
#ifndef FRACTOS_REQUEST_H
#define FRACTOS_REQUEST_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/types.h>
#include "fos.h"

struct fos_cap;
struct fos_ep;
struct fos_invoke_done;
struct fos_kcap;
struct fos_object;
struct fos_space;

/**
 * struct fos_req_charge - a count a Request is charged to while it lives
 * @release: called once, when the Request's contents are freed (process
 *	context, or the reaper's work item)
 *
 * Embedded by its user (the remote layer's per-peer bound on Requests
 * derived for other nodes), which the core does not know.
 */
struct fos_req_charge {
	void (*release)(struct fos_req_charge *charge);
};

/**
 * struct fos_req - the immutable contents of a Request
 * @c: its contents' header: the reference count (one for the object
 *	until revoked, one per invocation in flight), the release hook
 * @ep: the provider's receive queue (holds a reference)
 * @tag: the provider's opaque tag
 * @imm_len: bytes at @imm
 * @ncaps: entries at @caps
 * @caps: capability arguments, each holding an object reference
 * @imm: immediate bytes (stored after @caps)
 * @charge: what a Request derived for another node counts against
 *	(fos_req_derive_for()), released with the contents; else NULL
 */
struct fos_req {
	struct fos_contents c;
	struct fos_ep *ep;
	u64 tag;
	u32 imm_len;
	u32 ncaps;
	struct fos_cap *caps;
	u8 *imm;
	struct fos_req_charge *charge;
};

static inline struct fos_req *fos_req_of(struct fos_contents *c)
{
	return container_of(c, struct fos_req, c);
}

/* May sleep: the last put drops the arguments' objects. */
static inline void fos_req_put(struct fos_req *req)
{
	fos_contents_put(&req->c);
}

/* In softirq: the last put is left to a work item. */
static inline void fos_req_put_atomic(struct fos_req *req)
{
	fos_contents_put_atomic(&req->c);
}

/**
 * struct fos_args_src - arguments given by a caller: a user's or the kernel's
 * @s: user: the space whose cids @ucids names; NULL for kernel callers
 * @uimm: user: immediates
 * @ucids: user: cids
 * @kimm: kernel: immediates
 * @kcaps: kernel: capabilities (the caller keeps its references)
 * @imm_len: bytes of immediates
 * @ncaps: capabilities
 * @charge: kernel: the new Request's charge (fos_req_derive_for()), or NULL
 */
struct fos_args_src {
	struct fos_space *s;
	u64 uimm;
	u64 ucids;
	const void *kimm;
	struct fos_kcap *const *kcaps;
	u32 imm_len;
	u32 ncaps;
	struct fos_req_charge *charge;
};

/* request.c, for request_k.c */
struct fos_object *fos_req_make(struct fos_space *s,
				struct fos_object *base_obj, u64 tag,
				const struct fos_args_src *src,
				u32 *delegated);
int fos_invoke(const struct fos_cap *cap, const struct fos_args_src *src,
	       u32 flags, bool nowait, struct fos_invoke_done *done);

int fos_req_deliver(struct fos_req *req, const u8 *imm, u32 imm_len,
		    const struct fos_cap *caps, u32 ncaps, bool atomic);
struct fos_object *fos_req_make_k(struct fos_space *s,
				  const struct fos_cap *base, u64 tag,
				  const void *imm, u32 imm_len,
				  struct fos_kcap *const *caps, u32 ncaps);
struct fos_object *fos_req_derive_for(const struct fos_cap *base,
				      const void *imm, u32 imm_len,
				      struct fos_kcap *const *caps, u32 ncaps,
				      struct fos_req_charge *charge);
int fos_invoke_k(const struct fos_cap *cap, const void *imm, u32 imm_len,
		 struct fos_kcap *const *caps, u32 ncaps,
		 struct fos_invoke_done *done);
int fos_invoke_k_post(const struct fos_cap *cap, const void *imm,
		      u32 imm_len, struct fos_kcap *const *caps, u32 ncaps);

#endif /* FRACTOS_REQUEST_H */
