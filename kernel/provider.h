/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fractos: the in-kernel provider API.
 *
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
 * @pages: the pages; @pages[0] holds the view's first byte at @poff
 * @npages: entries of @pages that the range touches
 * @poff: offset of the range's first byte in @pages[0]
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

struct fos_kcap *fos_kcap_dup(const struct fos_kcap *c);
struct fos_kcap *fos_kcap_diminish(const struct fos_kcap *c, u64 off,
				   u64 len, u32 drop_perms);
struct fos_kcap *fos_kcap_revtree(struct fos_provider *p,
				  const struct fos_kcap *c);
void fos_kcap_put(struct fos_kcap *c);
int fos_kcap_revoke(struct fos_kcap *c);
void fos_kcap_info(const struct fos_kcap *c, struct fos_kcap_info *info);

int fos_kmem_map(const struct fos_kcap *c, u64 off, u64 len, u32 perms,
		 struct fos_kmem_map *map);
void fos_kmem_unmap(struct fos_kmem_map *map);
int fos_kmem_copy(const struct fos_kcap *src, u64 soff,
		  const struct fos_kcap *dst, u64 doff, u64 len);

int fos_kname_publish(struct fos_provider *p, const struct fos_kcap *c,
		      const char *name, kuid_t uid, bool world);
int fos_kname_unpublish(struct fos_provider *p, const char *name);

#endif /* FRACTOS_PROVIDER_H */
