/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A peer that speaks the fabric's wire protocol itself (kernel/fabric/wire.h,
 * version 15), for the tests that play a hostile or a foreign node:
 * librdmacm and libibverbs over rxe to the module in the same guest,
 * the handshake's MACs (HMAC-SHA256) and the channel binding's session keys
 * and tags (SipHash-2-4) computed with OpenSSL, so that the kernel's side is
 * checked against the protocol as written.  Link wirepeer.o with
 * libnl-genl-3.0, -lrdmacm -libverbs -lcrypto (see the Makefile).
 *
 * The program sets the globals first: self_id, self_epoch, self_addr (the
 * node's eth0 address, AF_INET) and the run's secret (read_secret()).
 * A connection (struct hp) claims to be any node; its handshake's key is
 * p->key (p->key_len bytes), or the run's secret where that is NULL.
 */
#ifndef FRACTOS_WIREPEER_H
#define FRACTOS_WIREPEER_H

#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <rdma/rdma_cma.h>
#include <infiniband/verbs.h>

/*
 * The wire format, as kernel/fabric/wire.h and kernel/remote/wire.h have
 * it (little-endian hosts only).
 */
#define W_MAGIC		0x534f5246
#define W_VERSION	18
/* Our session generation (wire.h hdr.sess), the same for every connection. */
#define W_SESS_GEN	0x5e55107u
#define W_INSECURE	0x01
#define W_MSG		256	/* the receive buffers we announce */
#define W_CREDITS	8
enum { W_CREDIT = 1, W_HEARTBEAT, W_PING, W_PONG, W_INVOKE, W_ACK, W_REVOKE,
       W_REVOKE_REQ, W_IMPORT, W_LOOKUP, W_LOOKUP_REPLY, W_COPY, W_GRANT,
       W_GRANT_REPLY, W_RELEASE, W_GRANT_END, W_DROP, W_CONTACT, W_DERIVE,
       W_AUTH };
enum { REJ_UNKNOWN = 3, REJ_AUTH = 7, REJ_ADDRESS, REJ_BUSY, REJ_CONNECTED,
       REJ_COOKIE };

struct w_hello {
	uint32_t magic;
	uint8_t version, flags;
	uint16_t credits;
	uint32_t node_id, epoch, dst_node_id, msg_size, key_id, alt_key_id;
	uint8_t nonce[16];
	uint64_t cookie;	/* the admission cookie of a REJ_COOKIE */
};

struct w_accept {
	struct w_hello hello;
	uint8_t mac[32];
};

struct w_reject {
	uint32_t magic;
	uint8_t version, reason;
	uint16_t reserved;
	uint32_t node_id, reserved2;
	uint64_t cookie;
};

struct w_hdr {
	uint8_t version, type;
	uint16_t credits;
	uint32_t len;
	uint64_t cookie;
	uint64_t seq;	/* messages its sender sent before it */
	/* Version 10: the session (kernel/fabric/session.c). */
	uint32_t sseq;	/* a numbered message's number, else 0 */
	uint32_t sack;	/* numbered messages of the receiver's delivered */
	uint32_t sess;	/* the sender's generation */
	uint32_t esess;	/* the receiver's, as the sender knows it */
	uint64_t tag;	/* SipHash-2-4 of the message with tag 0 */
};

/* The remote layer's messages: numbered in the session. */
static inline int w_numbered(uint8_t type)
{
	return type >= W_INVOKE && type <= W_DERIVE;
}

struct w_ping {
	uint64_t t0;
	uint32_t seq, reserved;
};

struct w_cap {
	uint32_t node, epoch;
	uint64_t oid, off, len;
	uint32_t type, perms, flags, reserved;
};

#define W_CAP_GRANTED	0x2	/* in INVOKE: a Memory handed over */

/* grant_ms (version 13): the time a GRANTED Memory's copy has, 1-5000 */
struct w_invoke {
	uint64_t oid;
	uint32_t epoch, grant_ms, imm_len, ncaps;
};
#define W_GRANT_MS_MAX	5000

struct w_status {
	uint32_t status, reserved;
};

struct w_obj {
	uint64_t oid;
	uint32_t epoch, reserved;
};

struct w_lookup_reply {
	uint32_t status, reserved;
	struct w_cap cap;
};

struct w_grant {
	struct w_cap src;
	uint64_t off, len, pull;
	uint32_t flags, reserved;
};
#define W_GRANT_INLINE	0x1
#define W_GRANT_KEEP	0x2	/* version 17: keep the region after the copy */
#define W_GRANT_WRITE	0x4	/* version 17: a region we write */

struct w_grant_reply {
	uint32_t status, rkey;
	uint64_t id, addr, len, conn;
	uint32_t flags, reserved;	/* version 17 */
};
#define W_GRANT_KEPT	0x1

/* CONTACT (version 11): arm or disarm a contact for node loss. */
struct w_contact {
	struct w_cap req;
	uint64_t handle;
	uint32_t op, id;
};

struct w_copy {
	struct w_cap src, dst;
	uint64_t src_off, dst_off, len;
	uint32_t flags, reserved;
};
#define W_COPY_INLINE	0x1
#define W_COPY_THEN	0x2	/* version 15: continuations after the COPY */

/* After a COPY with W_COPY_THEN: then the two invocations, then the bytes. */
struct w_then {
	uint32_t done_len, err_len, errno_off, reserved;
};

struct w_release {
	uint64_t id, reserved;
};

struct w_drop {
	uint64_t oid;
	uint32_t epoch, node;
	uint64_t count;
};

struct w_import {
	uint64_t oid;
	uint32_t epoch, node;
	uint64_t off, len;
	uint32_t perms, reserved;
};

_Static_assert(sizeof(struct w_cap) == 48, "cap");
_Static_assert(sizeof(struct w_grant) == 80, "grant");
_Static_assert(sizeof(struct w_grant_reply) == 48, "grant_reply");
_Static_assert(sizeof(struct w_copy) == 128, "copy");
_Static_assert(sizeof(struct w_then) == 16, "then");
_Static_assert(sizeof(struct w_contact) == 64, "contact");

_Static_assert(sizeof(struct w_hello) == 56, "hello");
_Static_assert(sizeof(struct w_accept) == 88, "accept");
_Static_assert(sizeof(struct w_reject) == 24, "reject");
_Static_assert(sizeof(struct w_hdr) == 48, "hdr");

/* One connection of the peer. */
struct hp {
	struct rdma_event_channel *ec;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;	/* receives */
	struct ibv_cq *scq;	/* sends */
	struct ibv_mr *mr;
	int shared_ec;		/* events come on a listener's channel */
	unsigned int owed;	/* receive buffers re-posted, not reported */
	uint8_t buf[(W_CREDITS + 1) * W_MSG];
	struct w_hello mine;
	struct w_hello theirs;	/* accepting: the node's hello */
	struct w_accept acc;
	int reason;		/* the refusal's reason, if refused */
	uint64_t cookie;	/* the refusal's cookie (REJ_COOKIE), or 0 */
	void *payload_out;	/* hp_recv(): where the payload goes, or NULL */
	int keepalive;		/* hp_recv() sends heartbeats while it waits */
	unsigned int idle;
	/* The handshake's key (NULL: the run's secret), not copied. */
	const uint8_t *key;
	size_t key_len;
	/* Channel binding: session keys (set at the handshake), seqs. */
	uint8_t tx_key[16], rx_key[16];
	uint64_t tx_seq;	/* messages we posted (sealed) so far */
	uint64_t rx_seq;	/* messages of the node's received so far */
	/* The session: the node's generation, numbered messages each way. */
	uint32_t peer_gen, tx_sseq, rx_done;
};

/* The node under test: its id, epoch and eth0 address (set by the program). */
extern uint32_t self_id, self_epoch;
extern struct sockaddr_in self_addr;
/* The run's secret ($FRACTOS_SECRET), as read_secret() read it. */
extern uint8_t secret[128];
extern size_t secret_len;
/* Every message of the node's that hp_recv() checked, and the bad ones. */
extern unsigned int tags_checked, tags_bad;

/* Read the run's secret from $FRACTOS_SECRET: 0, or -1 (none, too short). */
int read_secret(void);

/* HMAC-SHA256 under @key of @label, then hellos @a and @b unless @a is NULL. */
void hmac3(const uint8_t *key, size_t klen, const char *label,
	   const void *a, const void *b, uint8_t *out);
/* The key id a hello announces for @key: never 0. */
uint32_t key_id_of(const uint8_t *key, size_t klen);
/* SipHash-2-4 of @msg under @key (OpenSSL's): the kernel's le64 bytes. */
int siphash24(const uint8_t key[16], const void *msg, size_t len,
	      uint8_t out[8]);
/* 1 if siphash24() gives the kernel's siphash() test vectors, else 0. */
int siphash_matches_kernel(void);
/*
 * Set the seq of message @m (@bytes) to @seq and tag it under @key; a
 * header without a session generation gets W_SESS_GEN first.
 */
void seal(const uint8_t key[16], void *m, uint32_t bytes, uint64_t seq);
/* The session keys under @key of a handshake (hello_i, hello_r, as sent). */
void session_keys(const uint8_t *key, size_t klen, const struct w_hello *hi,
		  const struct w_hello *hr, uint8_t i2r[16], uint8_t r2i[16]);

/* Fill hello @h from node @node (@epoch) to self_id, with a fresh nonce. */
void hello_fill(struct w_hello *h, uint32_t node, uint32_t epoch,
		uint32_t key_id, uint8_t flags);
/* Wait up to @ms for cm event @want on @p's channel: 0, -errno, -1000-event. */
int cm_wait(struct hp *p, enum rdma_cm_event_type want, int ms,
	    struct rdma_cm_event *copy, void *priv, size_t *priv_len);
/* Post receive buffer @i of @p again. */
int post_recv(struct hp *p, unsigned int i);
/* The QP of p->id, its CQs and memory, the receive buffers posted. */
int hp_setup_qp(struct hp *p);
/* Resolve the node's fabric port from @src (may be NULL), make the QP. */
int hp_open(struct hp *p, const struct sockaddr_in *src);
/* Connect with p->mine: 0 (accepted), a refusal's reason, or -1. */
int hp_connect(struct hp *p);
/* Accept the node's next connection on @lec as @node (@epoch), under @key. */
int hp_accept(struct hp *p, struct rdma_event_channel *lec, uint32_t node,
	      uint32_t epoch, const uint8_t *key, size_t key_len);
/* hp_accept(), then the node's AUTH must come and verify: 0, or -1. */
int hp_admit(struct hp *p, struct rdma_event_channel *lec, uint32_t node,
	     uint32_t epoch, const uint8_t *key, size_t key_len);
/* Send @bytes of @msg exactly as they are (seq and tag too) as one SEND. */
int hp_post_raw(struct hp *p, const void *msg, uint32_t bytes);
/* Send @bytes of @msg as our next message: the next seq, a valid tag. */
int hp_post(struct hp *p, const void *msg, uint32_t bytes);
/* Send a message of @type with @cookie and @len bytes of @payload. */
int hp_send(struct hp *p, uint8_t type, uint64_t cookie,
	    const void *payload, uint32_t len);
/* Check the seq and tag of the node's message @m (@bytes); count it. */
void hp_check_bound(struct hp *p, const uint8_t *m, uint32_t bytes);
/* Wait up to @ms for a message of @type: 0, -ETIMEDOUT or -EIO. */
int hp_recv(struct hp *p, uint8_t type, int ms, uint64_t *cookie);
/* RDMA READ @len bytes at (@addr, @rkey) into @dst: its status, or -1. */
int hp_read(struct hp *p, void *dst, uint32_t len, uint64_t addr,
	    uint32_t rkey);
/* RDMA WRITE @len bytes of @src at (@addr, @rkey): its status, or -1. */
int hp_write(struct hp *p, const void *src, uint32_t len, uint64_t addr,
	     uint32_t rkey);
/* 1 if the node ends the connection within @ms, else 0. */
int hp_cut_off(struct hp *p, int ms);
/* Disconnect and free all of @p, and zero it. */
void hp_close(struct hp *p);

/* Fabric statistic @which (FRACTOS_STAT_*), or ~0. */
uint64_t fab_stat(int which);
/* Statistic @which of node @id, or ~0. */
uint64_t node_stat(uint32_t id, int which);

/* The node's own record of itself: epoch, connection, epoch changes. */
struct self_view {
	uint32_t epoch, qpn;
	uint64_t epoch_changes;
	uint8_t state;
};

/* Read the node's record of itself (node self_id) into @v. */
void self_view(struct self_view *v);
/* 1 if the node's record of itself is still @a, and it is up. */
int self_same(const struct self_view *a);

#endif /* FRACTOS_WIREPEER_H */
