/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fractos: the receive path's checks of the remote layer's messages
 * (wire.h).  Each handler runs its type's check on the payload before it
 * reads anything of it: sizes, counts and offsets against the message's
 * length, flags against those its version defines.  A failed check is
 * -EPROTO: a protocol error, for which the transport cuts the peer off.
 */
#ifndef FRACTOS_REMOTE_WIRE_CHECK_H
#define FRACTOS_REMOTE_WIRE_CHECK_H

#include "wire.h"

/*
 * A capability: known type, a view that fits the type, a real epoch, and
 * flags among @flags (GRANTED: a whole Memory with every right, not
 * revoked; whether the sender owns it is the receiver's check).
 */
static inline int fos_wire_check_cap_flags(const struct fos_wire_cap *c,
					   u32 flags)
{
	u64 off = le64_to_cpu(c->off), len = le64_to_cpu(c->len);
	u32 perms = le32_to_cpu(c->perms), f = le32_to_cpu(c->flags);

	if (!c->epoch || c->reserved || (f & ~flags))
		return -EPROTO;
	if ((f & FOS_WIRE_CAP_GRANTED) &&
	    (f != FOS_WIRE_CAP_GRANTED || off || perms != FRACTOS_PERM_ALL ||
	     le32_to_cpu(c->type) != FRACTOS_OBJ_MEMORY))
		return -EPROTO;
	switch (le32_to_cpu(c->type)) {
	case FRACTOS_OBJ_MEMORY:
		if (!len || off + len < off || (perms & ~FRACTOS_PERM_ALL))
			return -EPROTO;
		return 0;
	case FRACTOS_OBJ_REQUEST:
		return off || len || perms ? -EPROTO : 0;
	default:
		return -EPROTO;
	}
}

static inline int fos_wire_check_cap(const struct fos_wire_cap *c)
{
	return fos_wire_check_cap_flags(c, FOS_WIRE_CAP_REVOKED);
}

static inline int fos_wire_check_invoke(const void *payload, u32 len)
{
	const struct fos_wire_invoke *iv = payload;
	const struct fos_wire_cap *caps = (const void *)(iv + 1);
	u32 imm_len, ncaps, i, granted = 0;

	if (len < sizeof(*iv))
		return -EPROTO;
	imm_len = le32_to_cpu(iv->imm_len);
	ncaps = le32_to_cpu(iv->ncaps);
	if (!iv->epoch || imm_len > FOS_WIRE_MAX_IMM ||
	    ncaps > FOS_WIRE_MAX_CAPS ||
	    len != sizeof(*iv) + ncaps * sizeof(*caps) + imm_len)
		return -EPROTO;
	for (i = 0; i < ncaps; i++) {
		if (fos_wire_check_cap_flags(&caps[i], FOS_WIRE_CAP_REVOKED |
					     FOS_WIRE_CAP_GRANTED))
			return -EPROTO;
		if (le32_to_cpu(caps[i].flags) & FOS_WIRE_CAP_GRANTED)
			granted++;
	}
	/*
	 * MEMORY_GRANT hands over one Memory per invocation, with the time
	 * its copy has.
	 */
	if (granted > 1 || !granted != !iv->grant_ms ||
	    le32_to_cpu(iv->grant_ms) > FOS_WIRE_GRANT_MS_MAX)
		return -EPROTO;
	return 0;
}

/* DERIVE: an INVOKE's layout, with no Memory handed over. */
static inline int fos_wire_check_derive(const void *payload, u32 len)
{
	const struct fos_wire_invoke *iv = payload;
	int ret = fos_wire_check_invoke(payload, len);

	return ret ?: iv->grant_ms ? -EPROTO : 0;
}

static inline int fos_wire_check_ack(const void *payload, u32 len)
{
	const struct fos_wire_ack *a = payload;

	if (len != sizeof(*a) || a->reserved ||
	    le32_to_cpu(a->status) > MAX_ERRNO)
		return -EPROTO;
	return 0;
}

static inline int fos_wire_check_obj(const void *payload, u32 len)
{
	const struct fos_wire_obj *o = payload;

	if (len != sizeof(*o) || !o->epoch || o->reserved)
		return -EPROTO;
	return 0;
}

static inline int fos_wire_check_import(const void *payload, u32 len)
{
	const struct fos_wire_import *i = payload;

	u64 off = le64_to_cpu(i->off), vlen = le64_to_cpu(i->len);

	return len != sizeof(*i) || !i->epoch || off + vlen < off ||
	       (le32_to_cpu(i->perms) & ~FRACTOS_PERM_ALL) ? -EPROTO : 0;
}

/* 1 to FOS_WIRE_DROP_MAX records, each with an epoch and a count. */
static inline int fos_wire_check_drop(const void *payload, u32 len)
{
	const struct fos_wire_drop *d = payload;
	u32 i, n = len / sizeof(*d);

	if (!n || n > FOS_WIRE_DROP_MAX || len % sizeof(*d))
		return -EPROTO;
	for (i = 0; i < n; i++)
		if (!d[i].epoch || !d[i].count)
			return -EPROTO;
	return 0;
}

static inline int fos_wire_check_contact(const void *payload, u32 len)
{
	const struct fos_wire_contact *c = payload;
	u32 id;

	if (len != sizeof(*c) || !c->handle)
		return -EPROTO;
	id = le32_to_cpu(c->id);
	switch (le32_to_cpu(c->op)) {
	case FOS_CONTACT_ARM:
		return !id || id > FRACTOS_MAX_CONTACTS ||
		       le32_to_cpu(c->req.type) != FRACTOS_OBJ_REQUEST ||
		       fos_wire_check_cap(&c->req) ? -EPROTO : 0;
	case FOS_CONTACT_DISARM:
		return id || memchr_inv(&c->req, 0, sizeof(c->req)) ?
		       -EPROTO : 0;
	default:
		return -EPROTO;
	}
}

static inline int fos_wire_check_lookup(const void *payload, u32 len)
{
	const struct fos_wire_lookup *l = payload;
	const u8 *name = (const u8 *)(l + 1);
	u32 n, i;

	if (len < sizeof(*l))
		return -EPROTO;
	n = le32_to_cpu(l->name_len);
	if (!n || n > FOS_WIRE_NAME_MAX || len != sizeof(*l) + n)
		return -EPROTO;
	for (i = 0; i < n; i++)
		if (name[i] < 0x21 || name[i] > 0x7e)
			return -EPROTO;
	return 0;
}

static inline int fos_wire_check_lookup_reply(const void *payload, u32 len)
{
	const struct fos_wire_lookup_reply *r = payload;
	u32 status;

	if (len != sizeof(*r) || r->reserved)
		return -EPROTO;
	status = le32_to_cpu(r->status);
	if (status > MAX_ERRNO)
		return -EPROTO;
	if (status)
		return memchr_inv(&r->cap, 0, sizeof(r->cap)) ? -EPROTO : 0;
	return fos_wire_check_cap(&r->cap);
}

/* A Memory capability, not revoked, and a non-empty range that fits u64. */
static inline int fos_wire_check_mem_range(const struct fos_wire_cap *c,
					   __le64 off, __le64 len)
{
	u64 o = le64_to_cpu(off), l = le64_to_cpu(len);

	if (fos_wire_check_cap(c) ||
	    le32_to_cpu(c->type) != FRACTOS_OBJ_MEMORY || c->flags ||
	    !l || o + l < o)
		return -EPROTO;
	return 0;
}

/* An inline COPY: the bytes follow (checked as a COPY first). */
static inline bool fos_wire_copy_inline(const void *payload)
{
	const struct fos_wire_copy *c = payload;

	return le32_to_cpu(c->flags) & FOS_COPY_INLINE;
}

/* A COPY that continues: a struct fos_wire_then follows it. */
static inline bool fos_wire_copy_then(const void *payload)
{
	const struct fos_wire_copy *c = payload;

	return le32_to_cpu(c->flags) & FOS_COPY_THEN;
}

/* An inline COPY's bytes, after its continuations if it has them. */
static inline const void *fos_wire_copy_bytes(const struct fos_wire_copy *c)
{
	const struct fos_wire_then *t = (const void *)(c + 1);

	if (!fos_wire_copy_then(c))
		return t;
	return (const u8 *)(t + 1) + le32_to_cpu(t->done_len) +
	       le32_to_cpu(t->err_len);
}

/*
 * One invocation of a COPY's continuations, in a slot of @slot bytes at
 * most @room: no capability, no Memory handed over, exactly its
 * immediates padded to a multiple of 8.
 */
static inline int fos_wire_check_then_invoke(const void *p, u32 slot,
					     u32 room)
{
	const struct fos_wire_invoke *iv = p;
	u32 n;

	if (slot > room || slot < sizeof(*iv) || slot % 8 || iv->ncaps ||
	    iv->grant_ms || le32_to_cpu(iv->imm_len) > FOS_WIRE_MAX_IMM)
		return -EPROTO;
	n = sizeof(*iv) + le32_to_cpu(iv->imm_len);
	if (ALIGN(n, 8) != slot)
		return -EPROTO;
	return fos_wire_check_invoke(p, n);
}

/*
 * A COPY's continuations (FOS_COPY_THEN), in the @room bytes after it;
 * *@used becomes their bytes.
 */
static inline int fos_wire_check_then(const struct fos_wire_copy *c, u32 room,
				      u32 *used)
{
	const struct fos_wire_then *t = (const void *)(c + 1);
	const struct fos_wire_invoke *err;
	u32 dlen, elen, off;

	if (room < sizeof(*t) || t->reserved)
		return -EPROTO;
	room -= sizeof(*t);
	dlen = le32_to_cpu(t->done_len);
	elen = le32_to_cpu(t->err_len);
	if (fos_wire_check_then_invoke(t + 1, dlen, room))
		return -EPROTO;
	err = (const void *)((const u8 *)(t + 1) + dlen);
	if (fos_wire_check_then_invoke(err, elen, room - dlen))
		return -EPROTO;
	off = le32_to_cpu(t->errno_off);
	if (off != FOS_THEN_NO_ERRNO &&
	    (u64)off + sizeof(s64) > le32_to_cpu(err->imm_len))
		return -EPROTO;
	*used = sizeof(*t) + dlen + elen;
	return 0;
}

static inline int fos_wire_check_copy(const void *payload, u32 len)
{
	const struct fos_wire_copy *c = payload;
	u32 flags, then = 0;
	u64 n;

	if (len < sizeof(*c) || c->reserved)
		return -EPROTO;
	flags = le32_to_cpu(c->flags);
	if ((flags & ~(FOS_COPY_INLINE | FOS_COPY_THEN)) ||
	    fos_wire_check_mem_range(&c->dst, c->dst_off, c->len))
		return -EPROTO;
	if (fos_wire_copy_then(c) &&
	    fos_wire_check_then(c, len - sizeof(*c), &then))
		return -EPROTO;
	n = le64_to_cpu(c->len);
	if (!fos_wire_copy_inline(c))
		return len == sizeof(*c) + then &&
		       !fos_wire_check_mem_range(&c->src, c->src_off, c->len) ?
		       0 : -EPROTO;
	/* Pushed: no source named, exactly @len bytes after the COPY. */
	if (n > FOS_WIRE_INLINE_MAX || len - sizeof(*c) - then != n ||
	    c->src_off || memchr_inv(&c->src, 0, sizeof(c->src)))
		return -EPROTO;
	return 0;
}

static inline int fos_wire_check_grant(const void *payload, u32 len)
{
	const struct fos_wire_grant *g = payload;

	u32 flags = le32_to_cpu(g->flags);

	if (len != sizeof(*g) || g->reserved ||
	    (flags & ~(FOS_GRANT_INLINE | FOS_GRANT_KEEP | FOS_GRANT_WRITE)) ||
	    fos_wire_check_mem_range(&g->src, g->off, g->len))
		return -EPROTO;
	/* Inline: at most FOS_WIRE_INLINE_MAX bytes, nothing to keep or write. */
	if ((flags & FOS_GRANT_INLINE) &&
	    (le64_to_cpu(g->len) > FOS_WIRE_INLINE_MAX ||
	     (flags & (FOS_GRANT_KEEP | FOS_GRANT_WRITE))))
		return -EPROTO;
	return 0;
}

/* An inline GRANT_REPLY: the bytes follow (checked as a reply first). */
static inline bool fos_wire_grant_inline(const void *payload, u32 len)
{
	return len > sizeof(struct fos_wire_grant_reply);
}

static inline int fos_wire_check_grant_reply(const void *payload, u32 len)
{
	const struct fos_wire_grant_reply *r = payload;
	u64 addr, n;

	if (len < sizeof(*r))
		return -EPROTO;
	if (le32_to_cpu(r->status) > MAX_ERRNO || r->reserved ||
	    (le32_to_cpu(r->flags) & ~FOS_GRANT_KEPT))
		return -EPROTO;
	if (r->status)
		return len != sizeof(*r) || r->rkey || r->id || r->addr ||
		       r->len || r->conn || r->flags ? -EPROTO : 0;
	addr = le64_to_cpu(r->addr);
	n = le64_to_cpu(r->len);
	if (len > sizeof(*r))	/* inline: the bytes and nothing else */
		return r->rkey || r->id || r->addr || r->conn || r->flags ||
		       !n || n > FOS_WIRE_INLINE_MAX ||
		       n != len - sizeof(*r) ? -EPROTO : 0;
	return !n || addr + n < addr ? -EPROTO : 0;
}

static inline int fos_wire_check_release(const void *payload, u32 len)
{
	const struct fos_wire_release *r = payload;

	return len != sizeof(*r) || r->reserved ? -EPROTO : 0;
}

static inline int fos_wire_check_grant_end(const void *payload, u32 len)
{
	const struct fos_wire_grant_end *e = payload;

	return len != sizeof(*e) || le64_to_cpu(e->id) > U32_MAX ? -EPROTO : 0;
}

#endif /* FRACTOS_REMOTE_WIRE_CHECK_H */
