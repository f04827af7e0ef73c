/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fractos: the remote layer's messages (kernel/remote/) - invocations,
 * their answers, revocation, views, names, copies and grants.  They
 * travel as the payload of the transport's messages
 * (kernel/fabric/wire.h), whose type range for users they number; the
 * receive path's checks of them are in wire_check.h.
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
	/* Version 18: derivation at the owner (FRACTOS_CREATE_AT_OWNER). */
	FOS_WIRE_DERIVE,	/* struct fos_wire_invoke + caps + imms */
};

static_assert(FOS_WIRE_DERIVE == FOS_FABRIC_TYPE_LAST);

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
 * success, the capability.  DERIVE (version 18) is laid out as an INVOKE
 * without a Memory handed over: the receiver derives a Request from its
 * Request @oid with those arguments appended, and answers LOOKUP_REPLY
 * with the capability to it, exported to the sender.
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
 * above zero.  A forwarder that announced a description it then could
 * not send sends DROP for the holder it named.  Nothing answers DROP.
 * The owner records, per holder, how many descriptions each forwarder
 * announced: a DROP naming another node than its sender gives back at
 * most what the sender announced for that node; more is EPROTO (counted,
 * logged, nothing changes).  One DROP carries the records of up to
 * FOS_WIRE_DROP_MAX objects (version 16), each applied on its own: a
 * node that lets go of several objects at once (a storage service ending
 * a command: the client's Memory and continuation) tells their owner in
 * one message.
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
 * struct fos_wire_drop - one record of DROP, whose payload is 1 to
 *	FOS_WIRE_DROP_MAX of them
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

/*
 * Records in one DROP (version 16), at most: 192 bytes, which any peer's
 * receive buffer takes (256 with the header, fabric/wire.h).
 */
#define FOS_WIRE_DROP_MAX	8

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
 * at RELEASE, or FOS_GRANT_END_WAIT after GRANT_END was sent at the
 * latest.
 *
 * Kept grants (version 17): a GRANT with FOS_GRANT_KEEP asks the owner to
 * keep the region after the copy, so that the puller's later copies from
 * the same view read it again with no message at all.  The owner may
 * refuse (a grant the peer may not keep more of, device memory, whose
 * region is a staged snapshot, or pages whose DMA mapping needs syncing):
 * GRANT_REPLY says FOS_GRANT_KEPT only when it keeps it, and a grant not
 * kept is released after the copy as any other.  A kept grant has no
 * other semantics than a plain one: it covers the range granted, it is
 * ended by GRANT_END (revocation, or FOS_GRANT_TTL after it was granted:
 * a kept region is asked for again every 30 s at most, so that a view
 * its puller no longer holds, or a connection that ended, does not keep
 * it registered), and it dies at RELEASE, FOS_GRANT_END_WAIT after the
 * GRANT_END, or when the puller's epoch goes down.  The puller may
 * RELEASE it at any time, and must once it is sent GRANT_END and its
 * READs in flight completed; a READ after that may hit a dead key, which
 * ends the connection.
 *
 * Written regions (version 17): a GRANT with FOS_GRANT_WRITE names a view
 * the sender may write (FRACTOS_PERM_WRITE, writable pages, else EACCES),
 * and the region is registered for remote writes only: the sender copies
 * its own Memory into it with RDMA WRITEs, and a copy is complete when
 * they are.  Everything else is as for a read grant, KEEP included.
 * Device memory is never granted for writing (EOPNOTSUPP): the sender
 * sends COPY instead.
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
 * @src: the source view, an object of the receiver (with FOS_GRANT_WRITE,
 *	the destination view)
 * @off: first byte, from the start of @src
 * @len: bytes wanted, non-zero
 * @pull: the puller's token for this copy, echoed by GRANT_END
 * @flags: FOS_GRANT_INLINE, FOS_GRANT_KEEP and FOS_GRANT_WRITE (version
 *	17; not with INLINE), or zero
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
/* GRANT: keep the region after the copy, if the owner will ("Remote copies"). */
#define FOS_GRANT_KEEP		0x2
/* GRANT: a region the puller writes, not reads ("Remote copies"). */
#define FOS_GRANT_WRITE		0x4
/* GRANT_REPLY: the region is kept until RELEASE or GRANT_END. */
#define FOS_GRANT_KEPT		0x1
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
 * @flags: version 17: FOS_GRANT_KEPT (only if GRANT asked for
 *	FOS_GRANT_KEEP) or zero; zero with a @status and inline
 * @reserved: zero
 */
struct fos_wire_grant_reply {
	__le32 status;
	__le32 rkey;
	__le64 id;
	__le64 addr;
	__le64 len;
	__le64 conn;
	__le32 flags;
	__le32 reserved;
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
static_assert(FOS_WIRE_DROP_MAX * sizeof(struct fos_wire_drop) <= 256 - 48);
static_assert(sizeof(struct fos_wire_lookup) == 8);
static_assert(sizeof(struct fos_wire_lookup_reply) == 56);
static_assert(sizeof(struct fos_wire_copy) == 128);
static_assert(sizeof(struct fos_wire_then) == 16);
static_assert(sizeof(struct fos_wire_grant) == 80);
static_assert(sizeof(struct fos_wire_grant_reply) == 48);
static_assert(sizeof(struct fos_wire_grant_end) == 16);
static_assert(sizeof(struct fos_wire_release) == 16);
static_assert(sizeof(struct fos_wire_contact) == 64);
/* The largest invocation fits one message. */
static_assert(sizeof(struct fos_wire_invoke) +
	      FOS_WIRE_MAX_CAPS * sizeof(struct fos_wire_cap) +
	      FOS_WIRE_MAX_IMM <= FOS_FABRIC_PAYLOAD_MAX);

#endif /* FRACTOS_REMOTE_WIRE_H */
