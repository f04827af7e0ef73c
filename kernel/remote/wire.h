/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fractos: the remote layer's messages (kernel/remote/) - invocations,
 * their answers, revocation, views, names, copies and grants - and their
 * checks.  They travel as the payload of the transport's messages
 * (kernel/fabric/wire.h), whose type range for users they number.
 */
#ifndef FRACTOS_REMOTE_WIRE_H
#define FRACTOS_REMOTE_WIRE_H

#include <linux/build_bug.h>
#include <linux/err.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <linux/types.h>
#include <linux/fractos.h>
#include "../fabric.h"

/* Message types: the fabric's users' range (fabric.h). */
enum fos_wire_remote_type {
	FOS_WIRE_INVOKE = FOS_FABRIC_TYPE_FIRST, /* struct fos_wire_invoke + caps + imms */
	FOS_WIRE_ACK,		/* struct fos_wire_ack, cookie echoed */
	FOS_WIRE_REVOKE,	/* struct fos_wire_obj: owner -> importer */
	FOS_WIRE_REVOKE_REQ,	/* struct fos_wire_obj: holder -> owner */
	FOS_WIRE_IMPORT,	/* struct fos_wire_import: forwarder -> owner */
	FOS_WIRE_LOOKUP,	/* struct fos_wire_lookup + name */
	FOS_WIRE_LOOKUP_REPLY,	/* struct fos_wire_lookup_reply, cookie echoed */
	/* Remote memory_copy (version 3; see "Remote copies" below). */
	FOS_WIRE_COPY,		/* struct fos_wire_copy: caller -> dst owner */
	FOS_WIRE_GRANT,		/* struct fos_wire_grant: puller -> src owner */
	FOS_WIRE_GRANT_REPLY,	/* struct fos_wire_grant_reply, cookie echoed */
	FOS_WIRE_RELEASE,	/* struct fos_wire_release: puller -> src owner */
	FOS_WIRE_GRANT_END,	/* struct fos_wire_grant_end: src owner -> puller */
	/* Version 5: counted holders (see "Holders" below). */
	FOS_WIRE_DROP,		/* struct fos_wire_drop: holder -> owner */
	/* Version 11: contacts told of node loss ("Contacts" below). */
	FOS_WIRE_CONTACT,	/* struct fos_wire_contact: space's node -> owner */
};

static_assert(FOS_WIRE_CONTACT == FOS_FABRIC_TYPE_LAST);

/**
 * DOC: Remote objects
 *
 * An object is named by (node, epoch, oid), the oid being its public id
 * (a keyed permutation of the owner's sequential ids: object.c), so that
 * names cannot be guessed.  A capability crosses the
 * fabric as a struct fos_wire_cap: that name, the object type and the
 * view (off, len, perms) exactly as the sender's capability has it.  A
 * capability to a proxy is sent as the name of the object it stands for,
 * so forwarding never chains through the forwarder.
 *
 * INVOKE (cookie: the caller's token) names a Request exported by the
 * receiver (oid, epoch = the receiver's epoch) and carries the immediates
 * and capability arguments appended to the Request's own.  The receiver
 * answers ACK with the same cookie and status 0 (queued on the provider)
 * or a positive errno (nothing was delivered).  An INVOKE with cookie 0
 * (version 14) wants no answer: the receiver answers only a failure, with
 * an ACK of cookie 0.  REVOKE_REQ (a holder asks
 * the owner to revoke) is answered with ACK too.  LOOKUP asks the
 * receiver's name service; LOOKUP_REPLY carries the status and, on
 * success, the capability.
 *
 * REVOKE (owner to importer) is a notice: best effort, never answered.
 *
 * Every field is validated by the per-type checks below; the receiver then
 * checks the names against its own tables (kernel/remote/).
 */

/**
 * struct fos_wire_cap - a capability on the wire
 * @node: the owner node of the object
 * @epoch: the owner's epoch, never zero
 * @oid: the object's public id within (node, epoch)
 * @off: Memory: start of the view; Request: zero
 * @len: Memory: length of the view, non-zero; Request: zero
 * @type: FRACTOS_OBJ_MEMORY or FRACTOS_OBJ_REQUEST
 * @perms: Memory: FRACTOS_PERM_* bits; Request: zero
 * @flags: FOS_WIRE_CAP_* bits
 * @reserved: zero
 */
struct fos_wire_cap {
	__le32 node;
	__le32 epoch;
	__le64 oid;
	__le64 off;
	__le64 len;
	__le32 type;
	__le32 perms;
	__le32 flags;
	__le32 reserved;
};

/* fos_wire_cap.flags: the sender's capability was already revoked. */
#define FOS_WIRE_CAP_REVOKED	0x1U
/*
 * fos_wire_cap.flags, in INVOKE only, on one capability at most: the
 * sender hands this Memory over (MEMORY_GRANT): its own object, the whole
 * of it with every right, which nobody else holds.  The receiver's node
 * copies it into memory of its own, delivers that instead and drops this
 * capability, which frees the source ("Memory grant" in the uAPI header;
 * kernel/remote/handover.c).
 */
#define FOS_WIRE_CAP_GRANTED	0x2U

/*
 * The most an INVOKE's grant_ms may say: half of what the granter waits
 * for the answer (FOS_REMOTE_TIMEOUT), so that a copy delivered in time is
 * announced in time.
 */
#define FOS_WIRE_GRANT_MS_MAX	5000U

/**
 * struct fos_wire_invoke - payload of INVOKE
 * @oid: the Request, an object of the receiver
 * @epoch: the receiver's epoch as the sender knows it, never zero
 * @grant_ms: with a capability flagged FOS_WIRE_CAP_GRANTED, the
 *	milliseconds after this message's arrival within which the
 *	receiver's node delivers its copy or nothing, 1 to
 *	FOS_WIRE_GRANT_MS_MAX (a node that forwards the invocation passes
 *	on what is left of it); zero without one
 * @imm_len: immediate bytes after the capabilities, at most 4096
 * @ncaps: struct fos_wire_cap entries after this header, at most 32
 *
 * Followed by @ncaps struct fos_wire_cap, then @imm_len bytes.
 */
struct fos_wire_invoke {
	__le64 oid;
	__le32 epoch;
	__le32 grant_ms;
	__le32 imm_len;
	__le32 ncaps;
};

/**
 * struct fos_wire_ack - payload of ACK
 * @status: 0 or a positive errno, at most 4095
 * @reserved: zero
 */
struct fos_wire_ack {
	__le32 status;
	__le32 reserved;
};

/**
 * struct fos_wire_obj - payload of REVOKE and REVOKE_REQ
 * @oid: the object id
 * @epoch: its owner's epoch, never zero
 * @reserved: zero
 *
 * The owner node is the sender (REVOKE) or the receiver (REVOKE_REQ).
 */
struct fos_wire_obj {
	__le64 oid;
	__le32 epoch;
	__le32 reserved;
};

/**
 * DOC: Holders
 *
 * An owner counts, per object and per node, the capabilities to the object
 * that were put on the wire for that node (in INVOKE and LOOKUP_REPLY):
 * its own descriptions, counted before they are sent, and those of third
 * nodes, which a forwarder announces with IMPORT (cookie: its token;
 * answered with ACK: 0 when counted, EKEYREVOKED when the object is gone,
 * EHOSTUNREACH when the holder is not a peer of the owner) and sends only
 * once counted.  A node counts the descriptions it received per object;
 * when it no longer holds the object it sends DROP with that count, and
 * the owner subtracts it: a description still on its way keeps the count
 * above zero.  A forwarder that announced a description it then could not
 * send sends DROP for the holder it named.  Nothing answers DROP.  The
 * owner records, per holder, how many descriptions each forwarder
 * announced: a DROP naming another node than its sender gives back at
 * most what the sender announced for that node; more is EPROTO (counted,
 * logged, nothing changes).
 */

/**
 * DOC: Views
 *
 * With each count the owner records the view (offset, length, rights)
 * that was described to that node (version 6): its own descriptions' and
 * those an IMPORT names, which the forwarder must itself hold.  Every
 * capability of ours that a node names on the wire - in INVOKE (target and
 * arguments), LOOKUP_REPLY, REVOKE_REQ, IMPORT, COPY and GRANT - must lie
 * inside one view recorded for that node (a Request's view is empty: the
 * node must hold it).  Otherwise the request is refused with EPROTO,
 * counted (proto_errors) and logged, and nothing changes.  A third-party
 * copy (caller C, source on S, destination on D) therefore makes C send
 * IMPORT for D to S first, and DROP for D when the copy is over.
 */

/**
 * struct fos_wire_import - payload of IMPORT
 * @oid: an object of the receiver
 * @epoch: the receiver's epoch, never zero
 * @node: the node that is about to receive a capability to it, not the
 *	receiver
 * @off: the view it receives (Memory; zero for a Request)
 * @len: its length (Memory; zero for a Request)
 * @perms: its rights (Memory; zero for a Request)
 * @reserved: zero
 *
 * The sender must hold that view itself (see "Views" above).
 */
struct fos_wire_import {
	__le64 oid;
	__le32 epoch;
	__le32 node;
	__le64 off;
	__le64 len;
	__le32 perms;
	__le32 reserved;
};

/**
 * struct fos_wire_drop - payload of DROP
 * @oid: an object of the receiver
 * @epoch: the receiver's epoch, never zero
 * @node: the holder whose descriptions end: the sender, or the node an
 *	IMPORT of the sender named
 * @count: descriptions that end, non-zero
 */
struct fos_wire_drop {
	__le64 oid;
	__le32 epoch;
	__le32 node;
	__le64 count;
};

/**
 * DOC: Contacts
 *
 * A space's contact that is another node's Request is armed on that node
 * (CONTACT with FOS_CONTACT_ARM, a notice, never answered): should the
 * space's node be declared down there, the Request's node invokes the
 * contact itself with a struct fractos_contact_note saying
 * FRACTOS_CONTACT_NODE_LOST.  FOS_CONTACT_DISARM ends it, sent after the
 * space's own note if there is one, so both arrive in order.  The
 * sender names each arming with a handle of its own; the receiver keeps
 * at most FOS_ARMED_PER_NODE per node and ignores more.
 */

/* fos_wire_contact.op */
#define FOS_CONTACT_ARM		1
#define FOS_CONTACT_DISARM	2

/**
 * struct fos_wire_contact - payload of CONTACT
 * @req: ARM: the contact's Request, an object of the receiver, with the
 *	view the space's capability has; DISARM: zero
 * @handle: the sender's name for the arming, non-zero
 * @op: FOS_CONTACT_ARM or FOS_CONTACT_DISARM
 * @id: ARM: the contact's id in its space, 1..FRACTOS_MAX_CONTACTS (the
 *	note's id); DISARM: zero
 */
struct fos_wire_contact {
	struct fos_wire_cap req;
	__le64 handle;
	__le32 op;
	__le32 id;
};

/**
 * struct fos_wire_lookup - payload of LOOKUP
 * @uid: the asker's effective uid (in the initial user namespace)
 * @name_len: bytes of name after this header, 1..255, each in 0x21..0x7e
 */
struct fos_wire_lookup {
	__le32 uid;
	__le32 name_len;
};

/**
 * struct fos_wire_lookup_reply - payload of LOOKUP_REPLY
 * @status: 0 or a positive errno, at most 4095
 * @reserved: zero
 * @cap: on success the capability, else zero
 */
struct fos_wire_lookup_reply {
	__le32 status;
	__le32 reserved;
	struct fos_wire_cap cap;
};

/**
 * DOC: Remote copies
 *
 * COPY (cookie: the caller's token) asks the owner of the destination
 * Memory (@dst names an object of the receiver) to copy @len bytes from
 * byte @src_off of the view @src to byte @dst_off of the view @dst.  It is
 * answered with ACK.  The receiver pulls the bytes with RDMA READs: it
 * sends GRANT to the source's owner, which registers a memory region over
 * exactly the pinned pages of the range asked for, remote-read only, and
 * answers GRANT_REPLY with the region's address, rkey, a grant id and the
 * number of bytes granted (which may be fewer than asked: the puller asks
 * again for the rest).  Once its READs completed, the puller sends
 * RELEASE with the grant id and the owner deregisters the region.
 *
 * Small copies (version 8): a GRANT with FOS_GRANT_INLINE asks for the
 * bytes themselves, at most FOS_WIRE_INLINE_MAX of them.  The owner reads
 * them and answers with GRANT_REPLY followed by exactly @len bytes, with
 * no rkey, no id and no address: nothing is registered, read by RDMA or
 * released.  Only the puller that asked may get such a reply; it must
 * take messages of FOS_WIRE_INLINE_MAX bytes past the reply.
 *
 * Pushed copies (version 9): a caller that owns the source of a copy of
 * at most FOS_WIRE_INLINE_MAX bytes sends COPY with FOS_COPY_INLINE,
 * @src and @src_off zero, followed by exactly @len bytes.  The receiver
 * checks @dst as for any COPY, writes the bytes there, and answers ACK:
 * 2 messages instead of 4 (COPY, GRANT, GRANT_REPLY, ACK), no work item
 * on the receiver (it is served in the receive path), and no name of the
 * source on the wire.
 *
 * Copies that continue (version 15): a COPY flagged FOS_COPY_THEN carries,
 * after struct fos_wire_copy (and before a pushed COPY's bytes), a struct
 * fos_wire_then and two invocations of Requests of the receiver's, each a
 * struct fos_wire_invoke without capabilities followed by its immediates,
 * padded to a multiple of 8 bytes (@done_len and @err_len bytes).  Once
 * the bytes are in, the receiver delivers the first as an INVOKE with
 * cookie 0 from the sender; if they could not be copied (or the COPY was
 * refused before it was served: no work slot), the second, with the
 * copy's errno (negative, an s64 in the receiver's byte order:
 * immediates are its applications' bytes) at byte @errno_off of its
 * immediates, unless that is FOS_THEN_NO_ERRNO.  A refused invocation is
 * answered as an INVOKE without an answer: an ACK with cookie 0.  A
 * pushed COPY (FOS_COPY_INLINE) that continues gets no other answer (its
 * sender sends it with cookie 0): one message where a pushed copy and
 * its continuation took three (COPY, ACK, INVOKE), the storage adaptor's
 * small reads for another node's Memory.  A pulled one is answered ACK
 * once the continuation went, as any COPY (its source must live until
 * then): one message less, and the continuation a hop sooner.  The
 * sender names only Requests it holds of the receiver's, which the
 * receiver checks against its exports as for any INVOKE.
 *
 * When the source is revoked while a grant is out, the owner sends
 * GRANT_END with the puller's token (GRANT's @pull) and the grant id: the
 * puller posts no further READ under that token, and sends RELEASE once
 * the READs it posted have completed.  The owner deregisters the region
 * at RELEASE, or FOS_GRANT_END_WAIT after the revocation at the latest.
 */

/**
 * struct fos_wire_copy - payload of COPY
 * @src: the source view (any node's Memory)
 * @dst: the destination view, an object of the receiver
 * @src_off: first byte to copy, from the start of @src
 * @dst_off: where it goes, from the start of @dst
 * @len: bytes to copy, non-zero
 * @flags: FOS_COPY_INLINE (then @src and @src_off are zero and @len bytes
 *	follow), FOS_COPY_THEN (a struct fos_wire_then and its invocations
 *	follow, before the bytes of an inline one), both, or zero
 * @reserved: zero
 */
struct fos_wire_copy {
	struct fos_wire_cap src;
	struct fos_wire_cap dst;
	__le64 src_off;
	__le64 dst_off;
	__le64 len;
	__le32 flags;
	__le32 reserved;
};

/**
 * struct fos_wire_grant - payload of GRANT
 * @src: the source view, an object of the receiver
 * @off: first byte, from the start of @src
 * @len: bytes wanted, non-zero
 * @pull: the puller's token for this copy, echoed by GRANT_END
 * @flags: FOS_GRANT_INLINE or zero
 * @reserved: zero
 */
struct fos_wire_grant {
	struct fos_wire_cap src;
	__le64 off;
	__le64 len;
	__le64 pull;
	__le32 flags;
	__le32 reserved;
};

/* COPY: the bytes follow, pushed by the source's owner ("Remote copies"). */
#define FOS_COPY_INLINE		0x1
/* COPY: and a continuation, invoked once the bytes are in ("Remote copies"). */
#define FOS_COPY_THEN		0x2
/* struct fos_wire_then: the copy's errno goes nowhere. */
#define FOS_THEN_NO_ERRNO	0xffffffffu
/* GRANT: answer with the bytes, not a region ("Remote copies"). */
#define FOS_GRANT_INLINE	0x1
/* The most bytes an inline GRANT_REPLY carries. */
#define FOS_WIRE_INLINE_MAX	4096

/**
 * struct fos_wire_grant_reply - payload of GRANT_REPLY
 * @status: 0 or a positive errno, at most 4095; if non-zero every other
 *	field is zero
 * @rkey: the region's remote key (remote read only); zero inline
 * @id: the grant, to be named by RELEASE; zero inline
 * @addr: the address of the first byte asked for, in the region; zero
 *	inline
 * @len: bytes granted from there, non-zero, at most what was asked; an
 *	inline reply is followed by exactly these bytes
 * @conn: version 11: the connection whose QP the region is valid on (its
 *	tag: "One-sided RDMA" in fabric/rdma.c); the puller reads only on
 *	that one and asks again on another; zero inline
 */
struct fos_wire_grant_reply {
	__le32 status;
	__le32 rkey;
	__le64 id;
	__le64 addr;
	__le64 len;
	__le64 conn;
};

/**
 * struct fos_wire_then - the continuations of a COPY with FOS_COPY_THEN
 * @done_len: bytes of the first invocation (delivered once the bytes are
 *	in), a multiple of 8
 * @err_len: bytes of the second (delivered when they could not be
 *	written), a multiple of 8
 * @errno_off: where the copy's errno goes in the second's immediates (8
 *	bytes), or FOS_THEN_NO_ERRNO
 * @reserved: zero
 *
 * Followed by the two invocations, then the COPY's bytes.
 */
struct fos_wire_then {
	__le32 done_len;
	__le32 err_len;
	__le32 errno_off;
	__le32 reserved;
};

/**
 * struct fos_wire_release - payload of RELEASE
 * @id: a grant id from GRANT_REPLY
 * @reserved: zero
 */
struct fos_wire_release {
	__le64 id;
	__le64 reserved;
};

/**
 * struct fos_wire_grant_end - payload of GRANT_END
 * @pull: the puller's token from GRANT
 * @id: the grant id from GRANT_REPLY
 */
struct fos_wire_grant_end {
	__le64 pull;
	__le64 id;
};

#define FOS_WIRE_NAME_MAX	255
/* An invocation carries what a Request takes. */
#define FOS_WIRE_MAX_IMM	FRACTOS_REQ_MAX_IMM
#define FOS_WIRE_MAX_CAPS	FRACTOS_REQ_MAX_CAPS

static_assert(sizeof(struct fos_wire_cap) == 48);
static_assert(sizeof(struct fos_wire_invoke) == 24);
static_assert(sizeof(struct fos_wire_ack) == 8);
static_assert(sizeof(struct fos_wire_obj) == 16);
static_assert(sizeof(struct fos_wire_import) == 40);
static_assert(sizeof(struct fos_wire_drop) == 24);
static_assert(sizeof(struct fos_wire_lookup) == 8);
static_assert(sizeof(struct fos_wire_lookup_reply) == 56);
static_assert(sizeof(struct fos_wire_copy) == 128);
static_assert(sizeof(struct fos_wire_then) == 16);
static_assert(sizeof(struct fos_wire_grant) == 80);
static_assert(sizeof(struct fos_wire_grant_reply) == 40);
static_assert(sizeof(struct fos_wire_grant_end) == 16);
static_assert(sizeof(struct fos_wire_release) == 16);
static_assert(sizeof(struct fos_wire_contact) == 64);
/* The largest invocation fits one message. */
static_assert(sizeof(struct fos_wire_invoke) +
	      FOS_WIRE_MAX_CAPS * sizeof(struct fos_wire_cap) +
	      FOS_WIRE_MAX_IMM <= FOS_FABRIC_PAYLOAD_MAX);

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

static inline int fos_wire_check_drop(const void *payload, u32 len)
{
	const struct fos_wire_drop *d = payload;

	return len != sizeof(*d) || !d->epoch || !d->count ? -EPROTO : 0;
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

	if (len != sizeof(*g) || g->reserved ||
	    (le32_to_cpu(g->flags) & ~FOS_GRANT_INLINE) ||
	    fos_wire_check_mem_range(&g->src, g->off, g->len))
		return -EPROTO;
	if ((le32_to_cpu(g->flags) & FOS_GRANT_INLINE) &&
	    le64_to_cpu(g->len) > FOS_WIRE_INLINE_MAX)
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
	if (le32_to_cpu(r->status) > MAX_ERRNO)
		return -EPROTO;
	if (r->status)
		return len != sizeof(*r) || r->rkey || r->id || r->addr ||
		       r->len || r->conn ? -EPROTO : 0;
	addr = le64_to_cpu(r->addr);
	n = le64_to_cpu(r->len);
	if (len > sizeof(*r))	/* inline: the bytes and nothing else */
		return r->rkey || r->id || r->addr || r->conn || !n ||
		       n > FOS_WIRE_INLINE_MAX ||
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

#endif /* FRACTOS_REMOTE_WIRE_H */
