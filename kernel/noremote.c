// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: the remote layer as the core sees it (struct fos_remote_ops in
 * fos.h) - the vector kernel/remote/ registers, and the one in its place
 * before it starts and after it stops, when every object is local: no
 * proxy, export or grant exists, and what needs another node fails with
 * EHOSTUNREACH.
 */
#include <linux/bug.h>
#include <linux/cache.h>
#include <linux/compiler.h>
#include <linux/errno.h>
#include <linux/list.h>
#include <linux/string.h>
#include "fos.h"

static bool fos_local_invoke_wanted(struct fos_object *target)
{
	return false;
}

static int fos_local_invoke(struct fos_object *target, const u8 *imm,
			    u32 imm_len, const struct fos_cap *caps, u32 ncaps,
			    u32 flags, struct fos_invoke_done *done)
{
	return -EHOSTUNREACH;
}

static int fos_local_revoke(struct fos_object *obj)
{
	return -EHOSTUNREACH;
}

static bool fos_local_grants_out(void)
{
	return false;
}

static void fos_local_grants_sync(void)
{
}

static int fos_local_lookup(u32 node, const char *name, u32 len,
			    struct fos_cap *out)
{
	return -EHOSTUNREACH;
}

static int fos_local_derive(struct fos_object *target, const u8 *imm,
			    u32 imm_len, const struct fos_cap *caps, u32 ncaps,
			    struct fos_cap *out)
{
	return -EHOSTUNREACH;
}

static void fos_local_proxy_oid(const struct fos_proxy *p,
				struct fractos_oid *oid)
{
	WARN_ON_ONCE(1);
	memset(oid, 0, sizeof(*oid));
}

/* No object is exported while no remote layer is registered. */
static void fos_local_revoke_locked(struct fos_object *obj,
				    struct fos_dead *dead)
{
	WARN_ON_ONCE(obj->export);
}

static void fos_local_exports_release(struct list_head *list)
{
	WARN_ON_ONCE(!list_empty(list));
}

static void fos_local_proxy_free(struct fos_proxy *p)
{
	WARN_ON_ONCE(1);
}

static bool fos_local_copy_wanted(struct fos_object *src,
				  struct fos_object *dst)
{
	return false;
}

static int fos_local_copy(const struct fos_cap *src, u64 soff,
			  const struct fos_cap *dst, u64 doff, u64 len)
{
	return -EHOSTUNREACH;
}

static int fos_local_copy_then(const struct fos_cap *src, u64 soff,
			       const struct fos_cap *dst, u64 doff, u64 len,
			       const struct fos_copy_then *then)
{
	return -EOPNOTSUPP;	/* the caller copies, then invokes */
}

static u64 fos_local_contact_arm(const struct fos_cap *req, u32 id,
				 u32 *node)
{
	return 0;
}

static void fos_local_contact_disarm(u32 node, u64 handle)
{
	WARN_ON_ONCE(1);
}

/* Every object is local: before kernel/remote/ starts and after it stops. */
static const struct fos_remote_ops fos_remote_local = {
	.invoke_wanted = fos_local_invoke_wanted,
	.invoke = fos_local_invoke,
	.revoke = fos_local_revoke,
	.grants_out = fos_local_grants_out,
	.grants_sync = fos_local_grants_sync,
	.lookup = fos_local_lookup,
	.derive = fos_local_derive,
	.proxy_oid = fos_local_proxy_oid,
	.revoke_locked = fos_local_revoke_locked,
	.exports_release = fos_local_exports_release,
	.proxy_free = fos_local_proxy_free,
	.copy_wanted = fos_local_copy_wanted,
	.copy = fos_local_copy,
	.copy_then = fos_local_copy_then,
	.contact_arm = fos_local_contact_arm,
	.contact_disarm = fos_local_contact_disarm,
};

const struct fos_remote_ops *fos_remote_cur __read_mostly = &fos_remote_local;

/**
 * fos_remote_set_ops - register the remote layer, or take it back
 * @ops: its vector, or NULL for "every object is local"
 *
 * Called by fos_remote_init() before any space exists and by
 * fos_remote_exit() after the last is gone (module init and exit), so
 * that no call is ever in flight through the vector that is replaced.
 */
void fos_remote_set_ops(const struct fos_remote_ops *ops)
{
	WRITE_ONCE(fos_remote_cur, ops ? ops : &fos_remote_local);
}
