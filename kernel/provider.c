// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: kernel providers - Requests served by kernel code (provider.h).
 *
 * A provider is a struct fos_space without a file.  Its receive queue is
 * the same struct fos_ep as a user's, so invocations, remote deliveries
 * and monitor events reach it unchanged; instead of a receiver sleeping on
 * the queue's recv_wq, a custom wait entry on it queues the provider's
 * work item, which hands each message to the provider's callback.
 *
 * Lifetime: the adaptor that created a provider destroys it before its
 * module goes away (its ops live there).  fos_provider_destroy() stops the
 * work (no callback runs after it returns), then revokes what the provider
 * owns and closes its queue exactly as closing a space does.  The handles
 * (struct fos_kcap) an adaptor holds are its own to put, before or after.
 */
#include <linux/export.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include "fos.h"
#include "memory.h"
#include "monitor.h"
#include "name.h"
#include "queue.h"
#include "request.h"
#include "provider.h"

/* Messages handled per run of a provider's work item before yielding. */
#define FOS_PROV_BATCH	64

/**
 * struct fos_provider - a kernel provider
 * @space: its objects (owned list) and its receive queue; no cids
 * @ops: the adaptor's callbacks
 * @priv: the adaptor's pointer
 * @wait: on @space.ep->recv_wq until destroyed: queues @work
 * @work: hands queued messages to @ops->receive, one at a time
 * @km: the message being handed (only @work touches it)
 */
struct fos_provider {
	struct fos_space space;
	const struct fos_provider_ops *ops;
	void *priv;
	struct wait_queue_entry wait;
	struct work_struct work;
	struct fos_kmsg km;
};

/* Unbound, and able to make progress under memory pressure (storage). */
static struct workqueue_struct *fos_prov_wq;

int fos_provider_init(void)
{
	fos_prov_wq = alloc_workqueue("fractos_prov",
				      WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	return fos_prov_wq ? 0 : -ENOMEM;
}

void fos_provider_exit(void)
{
	destroy_workqueue(fos_prov_wq);
}

static void fos_prov_work(struct work_struct *work)
{
	struct fos_provider *p = container_of(work, struct fos_provider, work);
	struct fos_msg *msg;
	int n;

	for (n = 0; n < FOS_PROV_BATCH; n++) {
		msg = fos_ep_take(p->space.ep);
		if (!msg)
			return;
		fos_msg_kview(msg, &p->km);
		p->ops->receive(p, &p->km);
		fos_msg_free(msg);
		cond_resched();
	}
	/* More may be queued: let other work run first. */
	queue_work(fos_prov_wq, work);
}

/*
 * Called by every wake_up() of the queue's recv_wq, under the wait queue's
 * lock: a message or an event was queued.
 */
static int fos_prov_wake(struct wait_queue_entry *wq, unsigned int mode,
			 int flags, void *key)
{
	struct fos_provider *p = container_of(wq, struct fos_provider, wait);

	queue_work(fos_prov_wq, &p->work);
	return 0;
}

/**
 * fos_provider_create - create a kernel provider
 * @ops: its callbacks (must outlive it)
 * @priv: returned by fos_provider_priv()
 *
 * Return: the provider, or ERR_PTR(-ENOMEM).
 */
struct fos_provider *fos_provider_create(const struct fos_provider_ops *ops,
					 void *priv)
{
	struct fos_provider *p;

	might_sleep();
	if (WARN_ON_ONCE(!ops || !ops->receive))
		return ERR_PTR(-EINVAL);
	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return ERR_PTR(-ENOMEM);
	p->space.ep = fos_ep_create(false);	/* the kernel's */
	if (!p->space.ep) {
		kfree(p);
		return ERR_PTR(-ENOMEM);
	}
	xa_init_flags(&p->space.caps, XA_FLAGS_ALLOC);
	INIT_LIST_HEAD(&p->space.owned);
	p->ops = ops;
	p->priv = priv;
	INIT_WORK(&p->work, fos_prov_work);
	init_waitqueue_func_entry(&p->wait, fos_prov_wake);
	add_wait_queue(&p->space.ep->recv_wq, &p->wait);
	fos_live_add(FOS_LIVE_SPACES, 1);
	return p;
}
EXPORT_SYMBOL_GPL(fos_provider_create);

/**
 * fos_provider_priv - the adaptor's pointer given to fos_provider_create()
 * @p: the provider
 *
 * Context: any.
 *
 * Return: @priv.
 */
void *fos_provider_priv(const struct fos_provider *p)
{
	return p->priv;
}
EXPORT_SYMBOL_GPL(fos_provider_priv);

/**
 * fos_provider_destroy - revoke everything a provider owns and free it
 * @p: the provider
 *
 * No receive callback runs once this returns; it must not be called from
 * one.  Messages still queued
 * are dropped (their invokers learn nothing, as when a user provider
 * closes its space); the provider's Requests and Memory are revoked,
 * with their monitors fired and their names removed.  Handles the adaptor
 * still holds stay valid as handles of revoked objects until it puts them.
 */
void fos_provider_destroy(struct fos_provider *p)
{
	struct fos_ep *ep;

	might_sleep();
	if (!p)
		return;
	ep = p->space.ep;
	remove_wait_queue(&ep->recv_wq, &p->wait);
	cancel_work_sync(&p->work);

	fos_space_revoke_owned(&p->space);
	fos_monitors_cancel(ep);
	fos_ep_close(ep);
	WARN_ON_ONCE(!xa_empty(&p->space.caps));
	xa_destroy(&p->space.caps);
	kfree(p);
	fos_live_add(FOS_LIVE_SPACES, -1);
}
EXPORT_SYMBOL_GPL(fos_provider_destroy);

/**
 * fos_provider_drain - wait until the callback ran for every queued message
 * @p: the provider
 *
 * For an adaptor shutting down: once it has revoked its Requests, draining
 * lets it answer what was queued before fos_provider_destroy() would drop
 * it.  (An invocation that looked a Request up just before its revocation
 * may still be queued after; fos_provider_destroy() drops those.)  On
 * return no callback is running.  Must not be called from the callback.
 */
void fos_provider_drain(struct fos_provider *p)
{
	might_sleep();
	do {
		queue_work(fos_prov_wq, &p->work);
		flush_work(&p->work);
	} while (READ_ONCE(p->space.ep->len));
}
EXPORT_SYMBOL_GPL(fos_provider_drain);

static struct fos_kcap *fos_kcap_alloc(void)
{
	struct fos_kcap *kc = kzalloc(sizeof(*kc), GFP_KERNEL);

	if (kc)
		fos_live_add(FOS_LIVE_CAPS, 1);
	return kc;
}

static void fos_kcap_free(struct fos_kcap *kc)
{
	kfree(kc);
	fos_live_add(FOS_LIVE_CAPS, -1);
}

/*
 * @kc (from fos_kcap_alloc(), allocated before the object so that nothing
 * can fail once it exists) takes @obj, a new object with the caller's
 * reference, with @view's view and rights; if @obj is an ERR_PTR, @kc is
 * freed and the error returned.
 */
static struct fos_kcap *fos_kcap_fill(struct fos_kcap *kc,
				      struct fos_object *obj,
				      const struct fos_cap *view)
{
	if (IS_ERR(obj)) {
		fos_kcap_free(kc);
		return ERR_CAST(obj);
	}
	if (view)
		kc->cap = *view;
	kc->cap.obj = obj;
	return kc;
}

/**
 * fos_kreq_create - create a Request whose invocations reach @p
 * @p: the provider
 * @tag: handed back in &fos_kmsg.tag with each invocation
 * @imm: immediate arguments every invocation starts with
 * @imm_len: bytes at @imm, at most FRACTOS_REQ_MAX_IMM
 * @caps: capability arguments every invocation starts with (delegated:
 *	the caller keeps its handles)
 * @ncaps: entries at @caps, at most FRACTOS_REQ_MAX_CAPS
 *
 * Return: a handle of the new Request (owned by @p), or ERR_PTR: -E2BIG,
 * -ENOMEM, -EMLINK.
 */
struct fos_kcap *fos_kreq_create(struct fos_provider *p, u64 tag,
				 const void *imm, u32 imm_len,
				 struct fos_kcap *const *caps, u32 ncaps)
{
	struct fos_object *obj;
	struct fos_kcap *kc;

	might_sleep();
	kc = fos_kcap_alloc();
	if (!kc)
		return ERR_PTR(-ENOMEM);
	obj = fos_req_make_k(&p->space, NULL, tag, imm, imm_len, caps, ncaps);
	return fos_kcap_fill(kc, obj, NULL);
}
EXPORT_SYMBOL_GPL(fos_kreq_create);

/**
 * fos_kreq_derive - derive a Request with more arguments
 * @p: the provider that will own the derived Request
 * @base: the Request (any node's)
 * @imm: immediates appended to @base's
 * @imm_len: bytes at @imm
 * @caps: capabilities appended to @base's
 * @ncaps: entries at @caps
 *
 * The new Request is a child of @base in the revocation tree: revoking
 * @base revokes it.
 *
 * Return: its handle, or ERR_PTR: -EOPNOTSUPP (@base is not a Request),
 * -EKEYREVOKED, -E2BIG, -ENOMEM, -EMLINK.
 */
struct fos_kcap *fos_kreq_derive(struct fos_provider *p,
				 const struct fos_kcap *base,
				 const void *imm, u32 imm_len,
				 struct fos_kcap *const *caps, u32 ncaps)
{
	struct fos_object *obj;
	struct fos_kcap *kc;

	might_sleep();
	kc = fos_kcap_alloc();
	if (!kc)
		return ERR_PTR(-ENOMEM);
	obj = fos_req_make_k(&p->space, &base->cap, 0, imm, imm_len, caps,
			     ncaps);
	return fos_kcap_fill(kc, obj, &base->cap);
}
EXPORT_SYMBOL_GPL(fos_kreq_derive);

/**
 * fos_kmem_create - a Memory object of kernel pages, owned by @p
 * @p: the provider
 * @len: bytes (non-zero, at most max_pin_bytes when that is set)
 *
 * Zeroed, readable and writable; counted in live/pinned_pages.  Used as
 * a staging buffer where a device cannot reach another node's Memory.
 *
 * Return: its handle, or ERR_PTR(-EINVAL or -ENOMEM).
 */
struct fos_kcap *fos_kmem_create(struct fos_provider *p, u64 len)
{
	struct fos_object *obj;
	struct fos_kcap *kc;
	struct fos_mem *mem;

	might_sleep();
	kc = fos_kcap_alloc();
	if (!kc)
		return ERR_PTR(-ENOMEM);
	mem = fos_mem_alloc_kernel(len);
	if (IS_ERR(mem)) {
		fos_kcap_free(kc);
		return ERR_CAST(mem);
	}
	obj = fos_obj_create(FRACTOS_OBJ_MEMORY, &p->space, &mem->c);
	if (!obj) {
		fos_mem_put(mem);
		fos_kcap_free(kc);
		return ERR_PTR(-ENOMEM);
	}
	kc->cap.obj = obj;
	kc->cap.len = len;
	kc->cap.perms = FRACTOS_PERM_ALL;
	return kc;
}
EXPORT_SYMBOL_GPL(fos_kmem_create);

/**
 * fos_kinvoke - invoke a Request (a continuation) from kernel code
 * @req: the Request
 * @imm: immediates appended to the Request's own
 * @imm_len: bytes at @imm
 * @caps: capabilities appended (delegated; the caller keeps its handles)
 * @ncaps: entries at @caps
 *
 * Never waits for room in the provider's queue.  When the provider is on
 * another node it waits for that node's answer (a round trip).
 *
 * Return: 0 (queued on the provider), -EAGAIN (its queue is full),
 * -EKEYREVOKED, -EOPNOTSUPP (not a Request), -E2BIG, -ENOMEM, or the
 * fabric's -EHOSTUNREACH, -ETIMEDOUT, -EMSGSIZE.
 */
int fos_kinvoke(const struct fos_kcap *req, const void *imm, u32 imm_len,
		struct fos_kcap *const *caps, u32 ncaps)
{
	return fos_invoke_k(&req->cap, imm, imm_len, caps, ncaps, NULL);
}
EXPORT_SYMBOL_GPL(fos_kinvoke);

/**
 * fos_kinvoke_post - invoke a Request, not waiting for another node at all
 * @req: the Request
 * @imm: immediates appended to the Request's own
 * @imm_len: bytes at @imm
 * @caps: capabilities appended (delegated; the caller keeps its handles)
 * @ncaps: entries at @caps
 *
 * fos_kinvoke() with FRACTOS_INVOKE_NOACK: when the provider is on
 * another node, return once the invocation is sent (waiting for a send
 * credit at most, 5 s); that node answers only a refusal, which is
 * counted (totals/noack_refused), not returned.  For answers whose
 * failure the caller could not act on anyway (a continuation's), from a
 * completion path too: no worker waits for another node.
 *
 * Return: 0 (queued on a local provider, or sent), or what fos_kinvoke()
 * returns but the other node's answers.
 */
int fos_kinvoke_post(const struct fos_kcap *req, const void *imm,
		     u32 imm_len, struct fos_kcap *const *caps, u32 ncaps)
{
	return fos_invoke_k_post(&req->cap, imm, imm_len, caps, ncaps);
}
EXPORT_SYMBOL_GPL(fos_kinvoke_post);

static bool fos_kcap_is_req(const struct fos_kcap *c)
{
	return c->cap.obj->type == FRACTOS_OBJ_REQUEST;
}

static bool fos_kmsg_layout_valid(const struct fos_kmsg_layout *l)
{
	return l->min_caps <= l->max_caps &&
	       l->max_caps <= FOS_KMSG_LAYOUT_MAX &&
	       l->done < l->min_caps && l->err < l->max_caps &&
	       (l->ans_errno == sizeof(s32) || l->ans_errno == sizeof(s64)) &&
	       l->ans_len >= l->ans_errno && l->ans_len <= FOS_KMSG_ANSWER_MAX;
}

/* Does @m have the count and the types @l says? */
static bool fos_kmsg_well_formed(const struct fos_kmsg *m,
				 const struct fos_kmsg_layout *l)
{
	u32 i, want;

	if (m->ncaps < l->min_caps || m->ncaps > l->max_caps)
		return false;
	for (i = 0; i < m->ncaps; i++) {
		want = i == l->done || i == l->err ? FRACTOS_OBJ_REQUEST :
						     l->types[i];
		if (want != FRACTOS_OBJ_NONE && m->caps[i]->cap.obj->type != want)
			return false;
	}
	return true;
}

/*
 * The continuation a malformed @m is answered on: the Request at the error
 * position, else at the done position, else the last Request; NULL if
 * there is none.
 */
static struct fos_kcap *fos_kmsg_answer_to(const struct fos_kmsg *m,
					   const struct fos_kmsg_layout *l)
{
	u32 i;

	if (l->err < m->ncaps && fos_kcap_is_req(m->caps[l->err]))
		return m->caps[l->err];
	if (l->done < m->ncaps && fos_kcap_is_req(m->caps[l->done]))
		return m->caps[l->done];
	for (i = m->ncaps; i-- > 0;)
		if (fos_kcap_is_req(m->caps[i]))
			return m->caps[i];
	return NULL;
}

/**
 * fos_kmsg_conts - find a message's continuations, answer it if malformed
 * @m: the message, in the receive callback
 * @l: where the adaptor's protocol puts its continuations
 * @c: filled in
 *
 * The one rule of every adaptor (see "Kernel providers"): a message whose
 * capabilities name a continuation is answered, exactly once, whatever
 * else is wrong with it.  A well-formed capability list (as @l says) gives
 * the adaptor its continuations, for it to answer once it has served or
 * refused the message.  A malformed one (too few or too many
 * capabilities, a type where @l wants another) is answered here with
 * EINVAL, as @l's error answer, on the Request at @l->err, else the one at
 * @l->done, else the last Request in the list.  A message with no Request
 * at all names nobody to answer: the adaptor drops it (and should count
 * it).  Only the capabilities are checked: the immediates are the
 * adaptor's.
 *
 * Return: 0 (well formed: @c->done and @c->err set), -EINVAL (malformed,
 * answered on @c->err, with fos_kinvoke()'s result in @c->answer), or
 * -ENOMSG (no continuation: nothing was answered).
 */
int fos_kmsg_conts(const struct fos_kmsg *m, const struct fos_kmsg_layout *l,
		   struct fos_kconts *c)
{
	u8 ans[FOS_KMSG_ANSWER_MAX] = { 0 };
	s64 e64 = -EINVAL;
	s32 e32 = -EINVAL;

	might_sleep();
	memset(c, 0, sizeof(*c));
	if (WARN_ON_ONCE(!fos_kmsg_layout_valid(l)) ||
	    WARN_ON_ONCE(m->ncaps > FRACTOS_REQ_MAX_CAPS))
		return -ENOMSG;
	if (fos_kmsg_well_formed(m, l)) {
		c->done = m->caps[l->done];
		c->err = l->err < m->ncaps ? m->caps[l->err] : c->done;
		return 0;
	}
	c->err = fos_kmsg_answer_to(m, l);
	if (!c->err)
		return -ENOMSG;
	if (l->ans_errno == sizeof(e64))
		memcpy(ans, &e64, sizeof(e64));
	else
		memcpy(ans, &e32, sizeof(e32));
	c->answer = fos_kinvoke(c->err, ans, l->ans_len, NULL, 0);
	return -EINVAL;
}
EXPORT_SYMBOL_GPL(fos_kmsg_conts);

/**
 * fos_kcap_dup - another handle of the same capability
 * @c: the capability (a message's may be lent)
 *
 * Return: the new handle, or ERR_PTR(-ENOMEM).
 */
struct fos_kcap *fos_kcap_dup(const struct fos_kcap *c)
{
	struct fos_kcap *kc = fos_kcap_alloc();

	if (!kc)
		return ERR_PTR(-ENOMEM);
	kc->cap = c->cap;
	fos_obj_get(kc->cap.obj);
	return kc;
}
EXPORT_SYMBOL_GPL(fos_kcap_dup);

/**
 * fos_kcap_diminish - a narrower view of a Memory capability
 * @c: the Memory capability
 * @off: start of the new view within @c's
 * @len: its length, non-zero
 * @drop_perms: FRACTOS_PERM_* rights the new view lacks
 *
 * Return: the new handle, or ERR_PTR: -EOPNOTSUPP, -EINVAL, -ERANGE,
 * -ENOMEM.
 */
struct fos_kcap *fos_kcap_diminish(const struct fos_kcap *c, u64 off,
				   u64 len, u32 drop_perms)
{
	struct fos_kcap *kc;

	if (c->cap.obj->type != FRACTOS_OBJ_MEMORY)
		return ERR_PTR(-EOPNOTSUPP);
	if (!len || (drop_perms & ~FRACTOS_PERM_ALL))
		return ERR_PTR(-EINVAL);
	if (off > c->cap.len || len > c->cap.len - off)
		return ERR_PTR(-ERANGE);
	kc = fos_kcap_dup(c);
	if (IS_ERR(kc))
		return kc;
	kc->cap.off += off;
	kc->cap.len = len;
	kc->cap.perms &= ~drop_perms;
	return kc;
}
EXPORT_SYMBOL_GPL(fos_kcap_diminish);

/**
 * fos_kcap_revtree - a new, individually revocable object for @c
 * @p: the provider that owns it (destroying @p revokes it)
 * @c: the capability; the new one has its view and rights
 *
 * Return: the new handle, or ERR_PTR: -EKEYREVOKED, -EMLINK, -ENOMEM.
 */
struct fos_kcap *fos_kcap_revtree(struct fos_provider *p,
				  const struct fos_kcap *c)
{
	struct fos_object *child;
	struct fos_kcap *kc;

	might_sleep();
	kc = fos_kcap_alloc();
	if (!kc)
		return ERR_PTR(-ENOMEM);
	child = fos_obj_create_child(c->cap.obj, &p->space, NULL);
	return fos_kcap_fill(kc, child, &c->cap);
}
EXPORT_SYMBOL_GPL(fos_kcap_revtree);

/**
 * fos_kcap_put - drop a handle (does not revoke)
 * @c: the handle, or NULL
 */
void fos_kcap_put(struct fos_kcap *c)
{
	if (!c)
		return;
	fos_obj_put(c->cap.obj);
	fos_kcap_free(c);
}
EXPORT_SYMBOL_GPL(fos_kcap_put);

/**
 * fos_kcap_revoke - revoke the object of @c and its revocation subtree
 * @c: the capability (kept: put it separately)
 *
 * As CAP_REVOKE: another node's object is revoked by its owner, which is
 * waited for; keys a peer holds to this node's Memory are dead on return.
 *
 * Return: 0, -EKEYREVOKED (already), or the fabric's errnos.
 */
int fos_kcap_revoke(struct fos_kcap *c)
{
	int ret;

	might_sleep();
	if (c->cap.obj->proxy)
		return fos_remote()->revoke(c->cap.obj);
	ret = fos_obj_revoke(c->cap.obj);
	if (!ret)
		fos_remote()->grants_sync();
	return ret;
}
EXPORT_SYMBOL_GPL(fos_kcap_revoke);

/**
 * fos_kcap_get_info - what a capability is
 * @c: the capability
 * @info: filled in
 *
 * Context: any.
 */
void fos_kcap_get_info(const struct fos_kcap *c, struct fos_kcap_info *info)
{
	info->type = c->cap.obj->type;
	info->perms = c->cap.perms;
	info->off = c->cap.off;
	info->len = c->cap.len;
	info->remote = fos_obj_remote(c->cap.obj);
	info->revoked = fos_obj_revoked(c->cap.obj);
}
EXPORT_SYMBOL_GPL(fos_kcap_get_info);

/**
 * fos_kname_publish - publish a capability of an object @p owns
 * @p: the provider
 * @c: the capability
 * @name: a NUL-terminated name (1 to FRACTOS_NAME_MAX bytes, 0x21-0x7e)
 * @uid: who may look it up
 * @world: everyone may look it up
 *
 * Return: as NAME_PUBLISH: -EINVAL, -EPERM, -EEXIST, -ENOSPC, -EKEYREVOKED,
 * -ENOMEM.
 */
int fos_kname_publish(struct fos_provider *p, const struct fos_kcap *c,
		      const char *name, kuid_t uid, bool world)
{
	might_sleep();
	return fos_name_add(&p->space, &c->cap, name,
			    strnlen(name, FRACTOS_NAME_MAX + 1), uid,
			    world ? FRACTOS_NAME_WORLD : 0);
}
EXPORT_SYMBOL_GPL(fos_kname_publish);

/**
 * fos_kname_unpublish - remove a name @p published
 * @p: the provider
 * @name: the name, NUL-terminated
 *
 * Return: 0, -ENOENT, -EPERM (another space's name).
 */
int fos_kname_unpublish(struct fos_provider *p, const char *name)
{
	size_t len = strnlen(name, FRACTOS_NAME_MAX + 1);

	might_sleep();
	if (!len || len > FRACTOS_NAME_MAX)
		return -ENOENT;
	return fos_name_remove(&p->space, name, len);
}
EXPORT_SYMBOL_GPL(fos_kname_unpublish);
