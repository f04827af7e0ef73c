/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fractos: the in-kernel provider API.
 */

/**
 * DOC: Kernel providers
 *
 * Kernel code (an adaptor module: adaptors/<device>/) serves Requests the
 * way a user process does, without a file: it creates a *provider*, makes
 * Requests whose invocations reach it, and invokes the Requests
 * (continuations) it is handed.  This header is the only way an adaptor
 * touches the core; everything else in kernel/ is private to fractos.ko.
 *
 * For invokers nothing changes: a kernel provider's Requests are delegated,
 * derived, revoked, monitored, published and invoked from other nodes like
 * any other, because a provider is a capability space without a file (its
 * objects are owned by it, its receive queue is bounded by max_queue, and
 * fos_provider_destroy() revokes what it owns as closing a space does).
 *
 * Receiving: each message queued on the provider (an invocation of one of
 * its Requests, or a monitor event) is handed to &fos_provider_ops.receive
 * in process context, from a work item of an unbound workqueue, one
 * message at a time per provider, in queue order.  The callback may sleep,
 * but it delays the provider's next messages: long work belongs in the
 * adaptor's own contexts (a bio completion, a work item of its own).
 *
 * Capabilities held by kernel code are &struct fos_kcap handles.  Each
 * holds one reference on its object, like a cid in a space; it never
 * crosses to user space or to the wire as a pointer.  A message's
 * capabilities are lent to the callback for its duration only:
 * fos_kcap_dup() keeps one.
 *
 * Answering: a message whose capabilities name a continuation gets exactly
 * one answer, whatever else is wrong with it; only a message that names
 * none is dropped.  fos_kmsg_conts() is that rule, in one place for every
 * adaptor: given where the adaptor's protocol puts its continuations
 * (&struct fos_kmsg_layout), it finds them in a well-formed message, and
 * answers a malformed capability list (a count or a type the protocol
 * does not have) with EINVAL on the error continuation, else the done
 * one, else the last Request in the list.  Capabilities are positional,
 * counted from the first: a derived Request's own come before the
 * invoker's, so a Request derived with the first arguments fixed is
 * invoked with the rest only; a client that passes them again shifts the
 * continuations, which is a malformed list, answered.
 *
 * Context: every function here may sleep unless its comment says otherwise,
 * and none may be called with a spinlock held or in interrupt context (a
 * bio's end_io must defer to a work item).
 */
#ifndef FRACTOS_PROVIDER_H
#define FRACTOS_PROVIDER_H

#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/fractos.h>

struct fos_provider;
struct fos_kcap;
struct page;

/**
 * struct fos_kmsg - one received message, lent to the receive callback
 * @type: FRACTOS_MSG_REQUEST, or FRACTOS_MSG_MONITOR_* for an event
 * @tag: the Request's tag (events: the registration's cookie)
 * @imm: immediate arguments: the Request's own, then the invoker's
 * @imm_len: bytes at @imm
 * @ncaps: entries of @caps
 * @caps: capability arguments, the Request's own then the invoker's; valid
 *	until the callback returns (fos_kcap_dup() to keep one)
 */
struct fos_kmsg {
	u32 type;
	u64 tag;
	const u8 *imm;
	u32 imm_len;
	u32 ncaps;
	struct fos_kcap *caps[FRACTOS_REQ_MAX_CAPS];
};

/**
 * struct fos_provider_ops - what a kernel provider implements
 * @receive: one message; process context, may sleep (see "Kernel
 *	providers")
 */
struct fos_provider_ops {
	void (*receive)(struct fos_provider *p, const struct fos_kmsg *m);
};

/**
 * struct fos_kcap_info - what a capability is
 * @type: FRACTOS_OBJ_MEMORY or FRACTOS_OBJ_REQUEST
 * @perms: FRACTOS_PERM_* rights
 * @off: Memory: start of the view in its buffer
 * @len: Memory: length of the view
 * @remote: the object lives on another node
 * @revoked: the object is revoked (a hint: it may be revoked right after)
 */
struct fos_kcap_info {
	u32 type;
	u32 perms;
	u64 off;
	u64 len;
	bool remote;
	bool revoked;
};

/**
 * struct fos_kmem_map - the pages under a view of local Memory
 * @pages: the pages; the first of them holds the view's first byte at @poff
 * @npages: entries of @pages that the range touches
 * @poff: offset of the range's first byte in the first of @pages
 * @len: bytes in the range
 * @mem: private: the pinned buffer, held until fos_kmem_unmap()
 *
 * The pages stay pinned, and their buffer allocated, until
 * fos_kmem_unmap(), even if the Memory is revoked meanwhile: a device may
 * finish its DMA into them, and only then is the revocation complete for
 * them.
 */
struct fos_kmem_map {
	struct page **pages;
	unsigned long npages;
	unsigned int poff;
	u64 len;
	void *mem;
};

/* Capability positions a struct fos_kmsg_layout describes at most. */
#define FOS_KMSG_LAYOUT_MAX	8
/* Bytes of a protocol's error answer at most. */
#define FOS_KMSG_ANSWER_MAX	64

/**
 * struct fos_kmsg_layout - where a protocol puts its continuations
 * @min_caps: capabilities of a well-formed message, at least (> @done)
 * @max_caps: and at most (at most FOS_KMSG_LAYOUT_MAX, > @err)
 * @done: index in &fos_kmsg.caps of the success continuation
 * @err: index of the error continuation, or @done for a protocol with one
 *	continuation; a well-formed message shorter than @err + 1 has none
 *	(errors go to done)
 * @types: what each index holds in a well-formed message: FRACTOS_OBJ_*,
 *	or FRACTOS_OBJ_NONE for anything (@done and @err hold Requests
 *	whatever it says)
 * @ans_len: bytes of the protocol's error answer (at most
 *	FOS_KMSG_ANSWER_MAX)
 * @ans_errno: bytes of the negative errno at its start (4 or 8, a
 *	signed integer in host order); the rest of the answer is zero
 */
struct fos_kmsg_layout {
	u8 min_caps;
	u8 max_caps;
	u8 done;
	u8 err;
	u32 types[FOS_KMSG_LAYOUT_MAX];
	u16 ans_len;
	u8 ans_errno;
};

/**
 * struct fos_kconts - a message's continuations, found by fos_kmsg_conts()
 * @done: the success continuation; NULL unless the message is well formed
 * @err: where errors go (the error continuation, else @done); NULL when
 *	the message names no continuation
 * @answer: for a malformed message, what invoking @err with EINVAL
 *	returned (fos_kinvoke(): 0 or a negative errno)
 *
 * @done and @err are the message's: lent until the receive callback
 * returns (fos_kcap_dup() to keep one).
 */
struct fos_kconts {
	struct fos_kcap *done;
	struct fos_kcap *err;
	int answer;
};

struct fos_provider *fos_provider_create(const struct fos_provider_ops *ops,
					 void *priv);
void *fos_provider_priv(const struct fos_provider *p);
void fos_provider_drain(struct fos_provider *p);
void fos_provider_destroy(struct fos_provider *p);

struct fos_kcap *fos_kreq_create(struct fos_provider *p, u64 tag,
				 const void *imm, u32 imm_len,
				 struct fos_kcap *const *caps, u32 ncaps);
struct fos_kcap *fos_kreq_derive(struct fos_provider *p,
				 const struct fos_kcap *base,
				 const void *imm, u32 imm_len,
				 struct fos_kcap *const *caps, u32 ncaps);
struct fos_kcap *fos_kmem_create(struct fos_provider *p, u64 len);
int fos_kinvoke(const struct fos_kcap *req, const void *imm, u32 imm_len,
		struct fos_kcap *const *caps, u32 ncaps);
int fos_kinvoke_post(const struct fos_kcap *req, const void *imm,
		     u32 imm_len, struct fos_kcap *const *caps, u32 ncaps);

int fos_kmsg_conts(const struct fos_kmsg *m, const struct fos_kmsg_layout *l,
		   struct fos_kconts *c);

struct fos_kcap *fos_kcap_dup(const struct fos_kcap *c);
struct fos_kcap *fos_kcap_diminish(const struct fos_kcap *c, u64 off,
				   u64 len, u32 drop_perms);
struct fos_kcap *fos_kcap_revtree(struct fos_provider *p,
				  const struct fos_kcap *c);
void fos_kcap_put(struct fos_kcap *c);
int fos_kcap_revoke(struct fos_kcap *c);
void fos_kcap_get_info(const struct fos_kcap *c, struct fos_kcap_info *info);

int fos_kmem_map_view(const struct fos_kcap *c, u64 off, u64 len, u32 perms,
		      struct fos_kmem_map *map);
void fos_kmem_unmap(struct fos_kmem_map *map);
int fos_kmem_copy(const struct fos_kcap *src, u64 soff,
		  const struct fos_kcap *dst, u64 doff, u64 len);

/**
 * struct fos_kthen - what fos_kmem_copy_then() invokes after the copy
 * @done: the Request invoked once the bytes are in
 * @done_imm: its immediates
 * @done_len: bytes at @done_imm
 * @err: the Request invoked when they could not be copied, or NULL: @done
 * @err_imm: its immediates; the copy's errno (negative) is written over
 *	the s64 at byte @errno_off of a copy of them
 * @err_len: bytes at @err_imm, at least @errno_off + 8
 * @errno_off: see @err_imm
 */
struct fos_kthen {
	const struct fos_kcap *done;
	const void *done_imm;
	u32 done_len;
	const struct fos_kcap *err;
	const void *err_imm;
	u32 err_len;
	u32 errno_off;
};

int fos_kmem_copy_then(const struct fos_kcap *src, u64 soff,
		       const struct fos_kcap *dst, u64 doff, u64 len,
		       const struct fos_kthen *then, int *copy_ret);

int fos_kname_publish(struct fos_provider *p, const struct fos_kcap *c,
		      const char *name, kuid_t uid, bool world);
int fos_kname_unpublish(struct fos_provider *p, const char *name);

#endif /* FRACTOS_PROVIDER_H */
