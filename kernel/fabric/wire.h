/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fractos: the transport's wire format - the connection's hello, admission,
 * the header of every message, credits, heartbeats and PING.  The messages
 * of the transport's users are theirs (kernel/remote/wire.h); every byte
 * that crosses the fabric is described in one of the two.
 */

/**
 * DOC: Wire format
 *
 * All multi-byte fields are little-endian (__le*), whatever the host.
 *
 * Connection setup carries a struct fos_wire_hello in the rdma_cm private
 * data of both the connect request and the accept: who the sender is
 * (node id, epoch), whom it means to reach, how many receive buffers it has
 * posted for the connection (the peer's initial send credits), how large
 * each one is, which key it uses and a fresh nonce.  A refused request
 * carries a struct fos_wire_reject.
 *
 * Admission (version 6): both ends prove that they hold the same key (the
 * pair key of the two nodes, or the cluster secret: fabric/auth.c), over
 * a transcript that binds both hellos (node ids, epochs, nonces), so that
 * a recorded hello is worth nothing::
 *
 *   initiator                                  responder
 *   REQ   hello_i (key_id, nonce_i)     ---->  key_id known, address of
 *                                              the configured node?
 *         verify mac_r                  <----  REP  hello_r (nonce_r),
 *                                                   mac_r = HMAC(k, "accept"
 *                                                   | hello_i | hello_r)
 *   AUTH  mac_i = HMAC(k, "auth" | hello_i | hello_r)  ---->  verify mac_i
 *
 * HMAC is hmac(sha256) keyed with one key: the initiator names the first
 * two it holds for that node (key_id, alt_key_id); the responder picks the
 * first of them that it holds for the initiator and names it in its own
 * key_id.  A key id is the first four bytes of HMAC(key, "fractos key
 * id"), never 0.  So a key can be rotated one node at a time.  Version 7
 * also refuses a node's second connection of one epoch
 * (FOS_WIRE_REJ_CONNECTED) and, while many wait for admission, a request
 * without the admission cookie its address was given (FOS_WIRE_REJ_COOKIE,
 * hello.cookie; fabric/cm.c).
 * AUTH is the initiator's first message; the responder serves nothing and
 * changes nothing about the peer (epoch, connection, proxies) before it
 * has verified it, and any other first message ends the connection.
 * Nodes that an admin set to insecure mode send key_id 0 with
 * FOS_WIRE_HELLO_INSECURE and all-zero MACs, and admit only each other.
 *
 * Channel binding (version 7): both ends derive two 128-bit session keys,
 * k_i2r and k_r2i, the first 16 bytes of HMAC(k, "fractos v7 key i2r" |
 * hello_i | hello_r) and of its "r2i" twin (zero in insecure mode).  Every
 * message, AUTH included, carries hdr.seq (from 0, per direction) and
 * hdr.tag, SipHash-2-4 under its direction's key of the whole message with
 * the tag zero; checked right after the header's own checks, a wrong one
 * ends the connection (Documentation/security.rst).
 *
 * After that, every message is one RDMA SEND of at most the peer's buffer
 * size: a struct fos_wire_hdr followed by hdr.len payload bytes.  hdr.credits
 * returns send credits: the number of receive buffers the sender has
 * re-posted since it last said so.  hdr.cookie is the sender's token; a
 * reply (PONG) echoes the cookie of its request.
 *
 * Flow control: a sender spends one credit per message and never sends
 * without one; the last credit is kept for a CREDIT or HEARTBEAT that
 * returns at least one credit, so that the peer can always answer and two
 * peers never both run dry.
 *
 * Validation: a receiver checks every message with fos_wire_check() and
 * the per-type check it returns before it looks at the payload.  A message
 * that fails is a protocol error and ends the connection.
 *
 * Compatibility: hello.version must equal FOS_WIRE_VERSION; a peer with a
 * different version is refused (FOS_WIRE_REJ_VERSION).  New message types
 * need a new version.  Reserved fields are sent as zero and ignored.
 * Versions 8 and 9 changed no framing: the remote layer's GRANT grew a
 * flags field (8), and so did its COPY (9), for copies carried inline
 * (remote/wire.h, "Remote copies").
 *
 * Sessions (version 10): the header grew the session fields (sseq, sack,
 * sess, esess; 48 bytes).  The users' messages are numbered per peer
 * across connections, acknowledged cumulatively in every header,
 * retransmitted on the next connection of the same two epochs and
 * delivered once (fabric/session.c, "Sessions").  Version 11: the remote
 * layer's GRANT_REPLY names the connection its region is valid on, so
 * that a reply sent again on a later connection is not read from there
 * ("Regions across connections" in fabric/rdma.c), and its users' range
 * grew by one type (CONTACT), which moved AUTH from 18 to 19.
 */
#ifndef FRACTOS_FABRIC_WIRE_H
#define FRACTOS_FABRIC_WIRE_H

#include <linux/build_bug.h>
#include <linux/err.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <linux/types.h>
#include <linux/fractos.h>
#include "../fabric.h"

#define FOS_WIRE_MAGIC		0x534f5246	/* "FROS" in memory */
/*
 * 2: remote objects, 3: remote copy, 4: grants end at revocation,
 * 5: counted IMPORT and DROP (exports end when nobody holds them),
 * 6: authenticated admission (hello nonce and key id, AUTH), views per
 *    importer (IMPORT carries the view)
 * 7: channel binding (hdr.seq and hdr.tag under session keys)
 * 8: small copies pulled inline (GRANT_REPLY carries the bytes)
 * 9: small copies pushed inline (COPY carries the bytes)
 * 10: sessions (hdr.sseq, sack, sess, esess): the remote layer's messages
 *     are numbered per peer and retransmitted after a reconnection
 * 11: GRANT_REPLY names its region's connection (copies across one);
 *     CONTACT (18) arms a contact for node loss, AUTH moves to 19
 * 12: a Memory handed over by MEMORY_GRANT is flagged in INVOKE
 *     (FOS_WIRE_CAP_GRANTED): the receiver's node copies it
 * 13: INVOKE.flags becomes grant_ms, the time a handed-over Memory's copy
 *     has (a node that forwards the invocation copies it, and passes on
 *     the rest of that time)
 * 14: an INVOKE with cookie 0 wants no answer (FRACTOS_INVOKE_NOACK): the
 *     receiver sends an ACK, with cookie 0, only when it refused it
 * 15: a pushed COPY may carry its continuations (FOS_COPY_THEN): the
 *     receiver invokes one once the bytes are in, or could not be
 * 16: a DROP carries up to FOS_WIRE_DROP_MAX records: the DROPs queued
 *     together for one owner go in one message
 * 17: a GRANT may ask the owner to keep its region (FOS_GRANT_KEEP), and
 *     GRANT_REPLY grew a flags field that says whether it does (48 bytes)
 */
#define FOS_WIRE_VERSION	18

/*
 * Receive buffer sizes a peer may announce, header included.  Ours are
 * FOS_WIRE_MSG_MAX: the largest invocation fits one (static_assert below).
 */
#define FOS_WIRE_MSG_MIN	256
#define FOS_WIRE_MSG_MAX	8192
/* Receive buffers (credits) a peer may announce. */
#define FOS_WIRE_CREDITS_MIN	4
#define FOS_WIRE_CREDITS_MAX	1024

/**
 * struct fos_wire_hello - rdma_cm private data of a request or an accept
 * @magic: FOS_WIRE_MAGIC
 * @version: FOS_WIRE_VERSION
 * @flags: zero
 * @credits: receive buffers the sender has posted on this connection
 * @node_id: the sender's node id
 * @epoch: the sender's epoch (never zero; changes at every module load)
 * @dst_node_id: the node id the sender means to reach
 * @msg_size: size of each receive buffer, header included
 * @key_id: the key the sender uses (the pair key it shares with the
 *	other node, or the cluster secret: auth.c), 0 in insecure mode
 * @alt_key_id: initiator: the next key it holds for that node, which the
 *	responder may pick instead, or 0; responder: 0
 * @nonce: random, fresh for every connection attempt
 * @cookie: initiator: the admission cookie of the responder's last
 *	FOS_WIRE_REJ_COOKIE refusal, or 0 (cm.c, "Admission cookies");
 *	responder: 0
 *
 * 56 bytes: all that rdma_cm leaves us of a connect request's private data.
 */
struct fos_wire_hello {
	__le32 magic;
	__u8 version;
	__u8 flags;
	__le16 credits;
	__le32 node_id;
	__le32 epoch;
	__le32 dst_node_id;
	__le32 msg_size;
	__le32 key_id;
	__le32 alt_key_id;
	__u8 nonce[16];
	__le64 cookie;
};

/* fos_wire_hello.flags */
#define FOS_WIRE_HELLO_INSECURE	0x01	/* the sender runs without a secret */

#define FOS_WIRE_MAC_LEN	32	/* hmac(sha256) */

/**
 * struct fos_wire_accept - rdma_cm private data of an accept
 * @hello: the responder's hello
 * @mac: HMAC(secret, "fractos v7 accept" | initiator's hello | @hello)
 */
struct fos_wire_accept {
	struct fos_wire_hello hello;
	__u8 mac[FOS_WIRE_MAC_LEN];
};

/**
 * struct fos_wire_auth - the initiator's first message (FOS_WIRE_AUTH)
 * @mac: HMAC(secret, "fractos v7 auth" | its hello | responder's hello)
 */
struct fos_wire_auth {
	__u8 mac[FOS_WIRE_MAC_LEN];
};

/* Why a connection request was refused (fos_wire_reject.reason). */
enum fos_wire_rej_reason {
	FOS_WIRE_REJ_MALFORMED = 1,	/* hello too short or bad magic */
	FOS_WIRE_REJ_VERSION,		/* hello.version is not ours */
	FOS_WIRE_REJ_UNKNOWN_NODE,	/* hello.node_id is not configured */
	FOS_WIRE_REJ_WRONG_NODE,	/* hello.dst_node_id is not us */
	FOS_WIRE_REJ_NOT_INITIATOR,	/* the other side connects */
	FOS_WIRE_REJ_RESOURCES,		/* no device or no memory */
	/* Version 6: admission. */
	FOS_WIRE_REJ_AUTH,		/* key_id unknown, or insecure mismatch */
	FOS_WIRE_REJ_ADDRESS,		/* not from the node's configured address */
	FOS_WIRE_REJ_BUSY,		/* too many connections being admitted */
	/* Version 7: one connection per identity and epoch. */
	FOS_WIRE_REJ_CONNECTED,		/* that node is up with that epoch */
	FOS_WIRE_REJ_COOKIE,		/* come again with the cookie given */
	FOS_WIRE_REJ_NR,
};

/**
 * struct fos_wire_reject - rdma_cm private data of a refusal
 * @magic: FOS_WIRE_MAGIC
 * @version: FOS_WIRE_VERSION
 * @reason: enum fos_wire_rej_reason
 * @reserved: zero
 * @node_id: the refusing node
 * @reserved2: zero
 * @cookie: FOS_WIRE_REJ_COOKIE: what the next hello must carry; else 0
 */
struct fos_wire_reject {
	__le32 magic;
	__u8 version;
	__u8 reason;
	__le16 reserved;
	__le32 node_id;
	__le32 reserved2;
	__le64 cookie;
};

/*
 * Message types (fos_wire_hdr.type).  The transport's own are here; the
 * range FOS_FABRIC_TYPE_FIRST..FOS_FABRIC_TYPE_LAST (fabric.h) is its
 * users': kernel/remote/wire.h numbers INVOKE (5) to DERIVE (19).
 */
enum fos_wire_type {
	FOS_WIRE_CREDIT = 1,	/* no payload: returns credits only */
	FOS_WIRE_HEARTBEAT,	/* no payload: "still here", returns credits */
	FOS_WIRE_PING,		/* struct fos_wire_ping */
	FOS_WIRE_PONG,		/* struct fos_wire_ping, cookie echoed */
	/* Version 6: admission (see "Admission" above); 20 since 18. */
	FOS_WIRE_AUTH = 20,	/* struct fos_wire_auth */
	FOS_WIRE_NR,
};

/*
 * The users' range lies between PONG and AUTH, whose numbers are the wire
 * format's: it cannot grow without a new version that moves AUTH.
 */
static_assert(FOS_WIRE_PONG + 1 == FOS_FABRIC_TYPE_FIRST);
static_assert(FOS_FABRIC_TYPE_LAST + 1 == FOS_WIRE_AUTH);

/* A message of the transport's users (counted as TX/RX_REMOTE_MSGS). */
static inline bool fos_wire_type_remote(u8 type)
{
	return type >= FOS_FABRIC_TYPE_FIRST && type <= FOS_FABRIC_TYPE_LAST;
}

/**
 * struct fos_wire_hdr - the header of every message
 * @version: FOS_WIRE_VERSION
 * @type: enum fos_wire_type
 * @credits: receive buffers re-posted by the sender since its last report
 * @len: payload bytes after the header
 * @cookie: sender's token; replies echo the request's
 * @seq: messages the sender sent on this connection before this one
 * @sseq: a message of the transport's users: the number of such messages
 *	the sender sent in this session before this one; else zero
 *	(fabric/session.c, "Sessions")
 * @sack: the users' messages of the receiver that the sender has
 *	delivered in this session (a cumulative acknowledgment)
 * @sess: the sender's session generation, never zero
 * @esess: the receiver's session generation as the sender knows it, or 0
 * @tag: SipHash-2-4 of the message with @tag zero, keyed with the
 *	sender's session key ("Channel binding" above)
 */
struct fos_wire_hdr {
	__u8 version;
	__u8 type;
	__le16 credits;
	__le32 len;
	__le64 cookie;
	__le64 seq;
	__le32 sseq;
	__le32 sack;
	__le32 sess;
	__le32 esess;
	__le64 tag;
};

/**
 * struct fos_wire_ping - payload of PING and PONG
 * @t0: the pinger's clock when it sent the PING, opaque to the ponger
 * @seq: the pinger's sequence number
 * @reserved: zero
 */
struct fos_wire_ping {
	__le64 t0;
	__le32 seq;
	__le32 reserved;
};

static_assert(sizeof(struct fos_wire_hello) == 56);
static_assert(sizeof(struct fos_wire_accept) == 88);
static_assert(sizeof(struct fos_wire_auth) == 32);
static_assert(sizeof(struct fos_wire_reject) == 24);
static_assert(sizeof(struct fos_wire_hdr) == 48);
static_assert(sizeof(struct fos_wire_ping) == 16);
static_assert(FOS_FABRIC_PAYLOAD_MAX ==
	      FOS_WIRE_MSG_MAX - sizeof(struct fos_wire_hdr));

/**
 * fos_wire_check_hello - validate connection private data
 * @p: the private data
 * @len: its length (rdma_cm may pad it)
 *
 * Return: 0, or a positive enum fos_wire_rej_reason.
 */
static inline int fos_wire_check_hello(const void *p, size_t len)
{
	const struct fos_wire_hello *h = p;
	u32 credits, msg_size;

	if (!p || len < sizeof(*h) || le32_to_cpu(h->magic) != FOS_WIRE_MAGIC)
		return FOS_WIRE_REJ_MALFORMED;
	if (h->version != FOS_WIRE_VERSION)
		return FOS_WIRE_REJ_VERSION;
	credits = le16_to_cpu(h->credits);
	msg_size = le32_to_cpu(h->msg_size);
	if (credits < FOS_WIRE_CREDITS_MIN || credits > FOS_WIRE_CREDITS_MAX ||
	    msg_size < FOS_WIRE_MSG_MIN || msg_size > 1U << 20 || !h->epoch ||
	    (h->flags & ~FOS_WIRE_HELLO_INSECURE) ||
	    !(h->flags & FOS_WIRE_HELLO_INSECURE) != !!h->key_id ||
	    (!h->key_id && h->alt_key_id))
		return FOS_WIRE_REJ_MALFORMED;
	return 0;
}

/**
 * fos_wire_check_reject - validate the private data of a refusal
 * @p: the private data (may be NULL)
 * @len: its length
 * @cookie: set to the refusal's cookie (0 unless FOS_WIRE_REJ_COOKIE)
 *
 * Return: the reason, or 0 if @p is not one of ours.
 */
static inline int fos_wire_check_reject(const void *p, size_t len,
					u64 *cookie)
{
	const struct fos_wire_reject *r = p;

	*cookie = 0;
	if (!p || len < sizeof(*r) || le32_to_cpu(r->magic) != FOS_WIRE_MAGIC ||
	    r->version != FOS_WIRE_VERSION)
		return 0;
	if (r->reason == FOS_WIRE_REJ_COOKIE)
		*cookie = le64_to_cpu(r->cookie);
	return r->reason;
}

/* Per-type payload checks: 0 or -EPROTO. */
static inline int fos_wire_check_empty(const void *payload, u32 len)
{
	return len ? -EPROTO : 0;
}

static inline int fos_wire_check_ping(const void *payload, u32 len)
{
	return len == sizeof(struct fos_wire_ping) ? 0 : -EPROTO;
}

static inline int fos_wire_check_auth(const void *payload, u32 len)
{
	return len == sizeof(struct fos_wire_auth) ? 0 : -EPROTO;
}

/**
 * fos_wire_check - validate a received message's header
 * @buf: the receive buffer
 * @byte_len: bytes received
 *
 * Checks the version, the type, that the payload length matches what
 * arrived, and the session fields that need no state.  The caller then
 * runs the type's own payload check.
 *
 * Return: 0 or -EPROTO.
 */
static inline int fos_wire_check(const void *buf, u32 byte_len)
{
	const struct fos_wire_hdr *h = buf;

	if (byte_len < sizeof(*h) || h->version != FOS_WIRE_VERSION ||
	    !h->type || h->type >= FOS_WIRE_NR ||
	    le32_to_cpu(h->len) != byte_len - sizeof(*h) || !h->sess ||
	    (!fos_wire_type_remote(h->type) && h->sseq))
		return -EPROTO;
	return 0;
}

#endif /* FRACTOS_FABRIC_WIRE_H */
