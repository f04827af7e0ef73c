/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fractos: the kernel-to-kernel wire format.  Every byte that crosses the
 * fabric is described here, and nowhere else.
 *
 * DOC: Wire format, version 1
 *
 * All multi-byte fields are little-endian (__le*), whatever the host.
 *
 * Connection setup carries a struct fos_wire_hello in the rdma_cm private
 * data of both the connect request and the accept: who the sender is
 * (node id, epoch), whom it means to reach, how many receive buffers it has
 * posted for the connection (the peer's initial send credits) and how large
 * each one is.  A refused request carries a struct fos_wire_reject.
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
 */
#ifndef FRACTOS_WIRE_H
#define FRACTOS_WIRE_H

#include <linux/build_bug.h>
#include <linux/errno.h>
#include <linux/types.h>

#define FOS_WIRE_MAGIC		0x534f5246	/* "FROS" in memory */
#define FOS_WIRE_VERSION	1

/* Receive buffer sizes a peer may announce, header included. */
#define FOS_WIRE_MSG_MIN	256
#define FOS_WIRE_MSG_MAX	4096
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
 * @reserved: zero
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
	__le32 reserved[2];
};

/* Why a connection request was refused (fos_wire_reject.reason). */
enum fos_wire_rej_reason {
	FOS_WIRE_REJ_MALFORMED = 1,	/* hello too short or bad magic */
	FOS_WIRE_REJ_VERSION,		/* hello.version is not ours */
	FOS_WIRE_REJ_UNKNOWN_NODE,	/* hello.node_id is not configured */
	FOS_WIRE_REJ_WRONG_NODE,	/* hello.dst_node_id is not us */
	FOS_WIRE_REJ_NOT_INITIATOR,	/* the other side connects */
	FOS_WIRE_REJ_RESOURCES,		/* no device or no memory */
};

/**
 * struct fos_wire_reject - rdma_cm private data of a refusal
 * @magic: FOS_WIRE_MAGIC
 * @version: FOS_WIRE_VERSION
 * @reason: enum fos_wire_rej_reason
 * @reserved: zero
 * @node_id: the refusing node
 */
struct fos_wire_reject {
	__le32 magic;
	__u8 version;
	__u8 reason;
	__le16 reserved;
	__le32 node_id;
};

/* Message types (fos_wire_hdr.type). */
enum fos_wire_type {
	FOS_WIRE_CREDIT = 1,	/* no payload: returns credits only */
	FOS_WIRE_HEARTBEAT,	/* no payload: "still here", returns credits */
	FOS_WIRE_PING,		/* struct fos_wire_ping */
	FOS_WIRE_PONG,		/* struct fos_wire_ping, cookie echoed */
	FOS_WIRE_NR,
};

/**
 * struct fos_wire_hdr - the header of every message
 * @version: FOS_WIRE_VERSION
 * @type: enum fos_wire_type
 * @credits: receive buffers re-posted by the sender since its last report
 * @len: payload bytes after the header
 * @cookie: sender's token; replies echo the request's
 */
struct fos_wire_hdr {
	__u8 version;
	__u8 type;
	__le16 credits;
	__le32 len;
	__le64 cookie;
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

static_assert(sizeof(struct fos_wire_hello) == 32);
static_assert(sizeof(struct fos_wire_reject) == 12);
static_assert(sizeof(struct fos_wire_hdr) == 16);
static_assert(sizeof(struct fos_wire_ping) == 16);

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
	    msg_size < FOS_WIRE_MSG_MIN || msg_size > 1U << 20 || !h->epoch)
		return FOS_WIRE_REJ_MALFORMED;
	return 0;
}

/**
 * fos_wire_check_reject - validate the private data of a refusal
 * @p: the private data (may be NULL)
 * @len: its length
 *
 * Return: the reason, or 0 if @p is not one of ours.
 */
static inline int fos_wire_check_reject(const void *p, size_t len)
{
	const struct fos_wire_reject *r = p;

	if (!p || len < sizeof(*r) || le32_to_cpu(r->magic) != FOS_WIRE_MAGIC ||
	    r->version != FOS_WIRE_VERSION)
		return 0;
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

/**
 * fos_wire_check - validate a received message's header
 * @buf: the receive buffer
 * @byte_len: bytes received
 *
 * Checks the version, the type and that the payload length matches what
 * arrived.  The caller then runs the type's own payload check.
 *
 * Return: 0 or -EPROTO.
 */
static inline int fos_wire_check(const void *buf, u32 byte_len)
{
	const struct fos_wire_hdr *h = buf;

	if (byte_len < sizeof(*h) || h->version != FOS_WIRE_VERSION ||
	    !h->type || h->type >= FOS_WIRE_NR ||
	    le32_to_cpu(h->len) != byte_len - sizeof(*h))
		return -EPROTO;
	return 0;
}

#endif /* FRACTOS_WIRE_H */
