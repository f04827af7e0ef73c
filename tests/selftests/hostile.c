// SPDX-License-Identifier: GPL-2.0
/*
 * fractos selftest: a hostile peer at the fabric's front door.
 *
 * A userspace program speaks the wire protocol (kernel/wire.h, version 7)
 * with librdmacm and libibverbs over rxe to the module in the same guest,
 * which is configured as its own peer at its eth0 address.  The program
 * claims to be that node and tries to get in without the secret, with a
 * wrong one, from another address, by replaying a recorded handshake, with
 * another message in place of AUTH, by saying nothing, and by flooding the
 * admission queue; each must be refused or cut off and counted, with
 * nothing changed about the node (its epoch, its connection), and the
 * legitimate connection unaffected.  One handshake with the run's secret
 * ($FRACTOS_SECRET, from vm/run) must succeed and get a PING served: the
 * program computes the MACs itself (OpenSSL), so the kernel's side is
 * checked against the protocol as written.
 *
 * Channel binding (version 7): the program derives the session keys and
 * tags every message it sends with OpenSSL's own SipHash-2-4 (checked
 * against the kernel's siphash() test vectors first), and checks the seq
 * and tag of every message the node sends.  A message with a tag under
 * another key (a relay that forwarded the handshake), a replayed one, one
 * that skips a seq, one tagged with the other direction's key, and an AUTH
 * with the right MAC but a wrong tag must each end the connection, counted,
 * with nothing changed about the node.  Prints TAP.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <rdma/rdma_cma.h>
#include <infiniband/verbs.h>
#include "tap.h"
#include "fos_nl.h"
#include "fos_util.h"
#include "fos_req.h"

/* The wire format, as kernel/wire.h has it (little-endian hosts only). */
#define W_MAGIC		0x534f5246
#define W_VERSION	7
#define W_INSECURE	0x01
#define W_MSG		256	/* the receive buffers we announce */
#define W_CREDITS	8
enum { W_CREDIT = 1, W_HEARTBEAT, W_PING, W_PONG, W_INVOKE, W_ACK, W_REVOKE,
       W_REVOKE_REQ, W_IMPORT, W_LOOKUP, W_LOOKUP_REPLY, W_COPY, W_GRANT,
       W_GRANT_REPLY, W_RELEASE, W_GRANT_END, W_DROP, W_AUTH };
enum { REJ_UNKNOWN = 3, REJ_AUTH = 7, REJ_ADDRESS, REJ_BUSY };

struct w_hello {
	uint32_t magic;
	uint8_t version, flags;
	uint16_t credits;
	uint32_t node_id, epoch, dst_node_id, msg_size, key_id, alt_key_id;
	uint8_t nonce[16];
};

struct w_accept {
	struct w_hello hello;
	uint8_t mac[32];
};

struct w_reject {
	uint32_t magic;
	uint8_t version, reason;
	uint16_t reserved;
	uint32_t node_id;
};

struct w_hdr {
	uint8_t version, type;
	uint16_t credits;
	uint32_t len;
	uint64_t cookie;
	uint64_t seq;	/* messages its sender sent before it */
	uint64_t tag;	/* SipHash-2-4 of the message with tag 0 */
};

struct w_ping {
	uint64_t t0;
	uint32_t seq, reserved;
};

struct w_cap {
	uint32_t node, epoch;
	uint64_t oid, off, len;
	uint32_t type, perms, flags, reserved;
};

struct w_invoke {
	uint64_t oid;
	uint32_t epoch, flags, imm_len, ncaps;
};

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
};

struct w_grant_reply {
	uint32_t status, rkey;
	uint64_t id, addr, len;
};

struct w_copy {
	struct w_cap src, dst;
	uint64_t src_off, dst_off, len;
	uint32_t flags, reserved;
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
_Static_assert(sizeof(struct w_grant) == 72, "grant");
_Static_assert(sizeof(struct w_grant_reply) == 32, "grant_reply");
_Static_assert(sizeof(struct w_copy) == 128, "copy");

_Static_assert(sizeof(struct w_hello) == 48, "hello");
_Static_assert(sizeof(struct w_accept) == 80, "accept");
_Static_assert(sizeof(struct w_hdr) == 32, "hdr");

/* One connection of the hostile peer. */
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
	void *payload_out;	/* hp_recv(): where the payload goes, or NULL */
	int keepalive;		/* hp_recv() sends heartbeats while it waits */
	unsigned int idle;
	/* Channel binding: session keys (set at the handshake), seqs. */
	uint8_t tx_key[16], rx_key[16];
	uint64_t tx_seq;	/* messages we posted (sealed) so far */
	uint64_t rx_seq;	/* messages of the node's received so far */
};

static uint32_t self_id, self_epoch;
static struct sockaddr_in self_addr;
static uint8_t secret[128];
static size_t secret_len;

static void hmac3(const uint8_t *key, size_t klen, const char *label,
		  const void *a, const void *b, uint8_t *out)
{
	uint8_t msg[64 + 2 * sizeof(struct w_hello)];
	size_t n = strlen(label);
	unsigned int olen = 32;

	memcpy(msg, label, n);
	if (a) {
		memcpy(msg + n, a, sizeof(struct w_hello));
		memcpy(msg + n + sizeof(struct w_hello), b,
		       sizeof(struct w_hello));
		n += 2 * sizeof(struct w_hello);
	}
	HMAC(EVP_sha256(), key, (int)klen, msg, n, out, &olen);
}

static uint32_t key_id_of(const uint8_t *key, size_t klen)
{
	uint8_t d[32];
	uint32_t id;

	hmac3(key, klen, "fractos key id", NULL, NULL, d);
	memcpy(&id, d, 4);
	return id ? id : 1;
}

/*
 * SipHash-2-4 with a 64-bit output, OpenSSL's (EVP_MAC "SIPHASH"; 2 and 4
 * rounds are its defaults), into @out: the 8 bytes as OpenSSL gives them,
 * which must be the kernel's siphash() u64 written as __le64 (checked
 * against the kernel's test vectors by siphash_matches_kernel()).
 */
static int siphash24(const uint8_t key[16], const void *msg, size_t len,
		     uint8_t out[8])
{
	static EVP_MAC *mac;
	size_t size = 8, outl = 0;
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_size_t(OSSL_MAC_PARAM_SIZE, &size),
		OSSL_PARAM_construct_end(),
	};
	EVP_MAC_CTX *ctx;
	int ok;

	if (!mac)
		mac = EVP_MAC_fetch(NULL, "SIPHASH", NULL);
	ctx = mac ? EVP_MAC_CTX_new(mac) : NULL;
	ok = ctx && EVP_MAC_init(ctx, key, 16, params) &&
	     EVP_MAC_update(ctx, msg, len) &&
	     EVP_MAC_final(ctx, out, &outl, 8) && outl == 8;
	EVP_MAC_CTX_free(ctx);
	if (!ok)
		tap_bail("OpenSSL's SIPHASH failed");
	return 0;
}

/*
 * The kernel's siphash() self-test (lib/tests/siphash_kunit.c): key
 * { 0x0706050403020100, 0x0f0e0d0c0b0a0908 }, i.e. the bytes 00..0f, and
 * vector i = siphash(00 01 .. i-1).  OpenSSL must give each u64 as its
 * little-endian bytes.
 */
static int siphash_matches_kernel(void)
{
	static const struct { unsigned int len; uint64_t v; } tv[] = {
		{ 0, 0x726fdb47dd0e0e31ULL }, { 1, 0x74f839c593dc67fdULL },
		{ 7, 0xab0200f58b01d137ULL }, { 8, 0x93f5f5799a932462ULL },
		{ 15, 0xa129ca6149be45e5ULL }, { 23, 0xa80c038ccd5ccec8ULL },
	};
	uint8_t key[16], in[32], out[8], le[8];
	unsigned int i, j;

	for (i = 0; i < sizeof(key); i++)
		key[i] = (uint8_t)i;
	for (i = 0; i < sizeof(in); i++)
		in[i] = (uint8_t)i;
	for (i = 0; i < sizeof(tv) / sizeof(tv[0]); i++) {
		for (j = 0; j < 8; j++)
			le[j] = (uint8_t)(tv[i].v >> (8 * j));
		siphash24(key, in, tv[i].len, out);
		if (memcmp(out, le, 8)) {
			tap_diag("  SipHash of %u bytes: OpenSSL %02x%02x%02x%02x%02x%02x%02x%02x, kernel le64 %016llx",
				 tv[i].len, out[0], out[1], out[2], out[3],
				 out[4], out[5], out[6], out[7],
				 (unsigned long long)tv[i].v);
			return 0;
		}
	}
	return 1;
}

/* Every message of the node's that hp_recv() checked, and the bad ones. */
static unsigned int tags_checked, tags_bad;

/*
 * Set @m's (@bytes, a header and what follows) seq to @seq and its tag to
 * SipHash-2-4 under @key of the message with the tag zero.
 */
static void seal(const uint8_t key[16], void *m, uint32_t bytes, uint64_t seq)
{
	struct w_hdr *h = m;
	uint8_t tag[8];

	h->seq = seq;
	h->tag = 0;
	siphash24(key, m, bytes, tag);
	memcpy(&h->tag, tag, 8);
}

/*
 * The session keys of a handshake (hello_i, hello_r, as sent):
 * k_i2r and k_r2i are the first 16 bytes of
 * HMAC(secret, "fractos v7 key i2r" | hello_i | hello_r), and "... r2i".
 */
static void session_keys(const struct w_hello *hi, const struct w_hello *hr,
			 uint8_t i2r[16], uint8_t r2i[16])
{
	uint8_t d[32];

	hmac3(secret, secret_len, "fractos v7 key i2r", hi, hr, d);
	memcpy(i2r, d, 16);
	hmac3(secret, secret_len, "fractos v7 key r2i", hi, hr, d);
	memcpy(r2i, d, 16);
}

static int cm_wait(struct hp *p, enum rdma_cm_event_type want, int ms,
		   struct rdma_cm_event *copy, void *priv, size_t *priv_len)
{
	struct pollfd pfd = { .fd = p->ec->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int ret;

	if (poll(&pfd, 1, ms) != 1)
		return -ETIMEDOUT;
	if (rdma_get_cm_event(p->ec, &ev))
		return -errno;
	if (copy)
		*copy = *ev;
	if (priv && ev->param.conn.private_data) {
		*priv_len = ev->param.conn.private_data_len;
		if (*priv_len > sizeof(struct w_accept))
			*priv_len = sizeof(struct w_accept);
		memcpy(priv, ev->param.conn.private_data, *priv_len);
	}
	ret = ev->event == want ? 0 : -(int)ev->event - 1000;
	rdma_ack_cm_event(ev);
	return ret;
}

static void hp_close(struct hp *p)
{
	if (p->id && p->id->qp) {
		rdma_disconnect(p->id);
		rdma_destroy_qp(p->id);
	}
	if (p->mr)
		ibv_dereg_mr(p->mr);
	if (p->cq)
		ibv_destroy_cq(p->cq);
	if (p->scq)
		ibv_destroy_cq(p->scq);
	if (p->pd)
		ibv_dealloc_pd(p->pd);
	if (p->id)
		rdma_destroy_id(p->id);
	if (p->ec && !p->shared_ec)
		rdma_destroy_event_channel(p->ec);
	memset(p, 0, sizeof(*p));
}

static int post_recv(struct hp *p, unsigned int i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(p->buf + i * W_MSG),
		.length = W_MSG, .lkey = p->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(p->id->qp, &wr, &bad);
}

/* The QP of p->id, its CQs and memory, the receive buffers posted. */
static int hp_setup_qp(struct hp *p)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = W_CREDITS,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	unsigned int i;

	p->pd = ibv_alloc_pd(p->id->verbs);
	p->cq = p->pd ? ibv_create_cq(p->id->verbs, 32, NULL, NULL, 0) : NULL;
	p->scq = p->cq ? ibv_create_cq(p->id->verbs, 16, NULL, NULL, 0) : NULL;
	if (!p->scq)
		return -1;
	qa.send_cq = p->scq;
	qa.recv_cq = p->cq;
	if (rdma_create_qp(p->id, p->pd, &qa))
		return -1;
	p->mr = ibv_reg_mr(p->pd, p->buf, sizeof(p->buf),
			   IBV_ACCESS_LOCAL_WRITE);
	if (!p->mr)
		return -1;
	for (i = 0; i < W_CREDITS; i++)
		if (post_recv(p, i))
			return -1;
	return 0;
}

/* Resolve, make the QP, post the receive buffers.  @src may be NULL. */
static int hp_open(struct hp *p, const struct sockaddr_in *src)
{
	struct sockaddr_in dst = self_addr;

	memset(p, 0, sizeof(*p));
	dst.sin_port = htons(fos_param("fabric_port"));
	p->ec = rdma_create_event_channel();
	if (!p->ec || rdma_create_id(p->ec, &p->id, NULL, RDMA_PS_TCP))
		return -1;
	if (rdma_resolve_addr(p->id, (struct sockaddr *)src,
			      (struct sockaddr *)&dst, 2000) ||
	    cm_wait(p, RDMA_CM_EVENT_ADDR_RESOLVED, 5000, NULL, NULL, NULL) ||
	    rdma_resolve_route(p->id, 2000) ||
	    cm_wait(p, RDMA_CM_EVENT_ROUTE_RESOLVED, 5000, NULL, NULL, NULL))
		return -1;
	return hp_setup_qp(p);
}

static void hello_fill(struct w_hello *h, uint32_t node, uint32_t epoch,
		       uint32_t key_id, uint8_t flags)
{
	memset(h, 0, sizeof(*h));
	h->magic = W_MAGIC;
	h->version = W_VERSION;
	h->flags = flags;
	h->credits = W_CREDITS;
	h->node_id = node;
	h->epoch = epoch;
	h->dst_node_id = self_id;
	h->msg_size = W_MSG;
	h->key_id = key_id;
	for (unsigned int i = 0; i < sizeof(h->nonce); i++)
		h->nonce[i] = (uint8_t)rand();
}

/*
 * Connect with p->mine as the hello.  Return: 0 (accepted: p->acc, and the
 * session keys derived from the run's secret), a positive refusal reason,
 * or -1.
 */
static int hp_connect(struct hp *p)
{
	struct rdma_conn_param cp = {
		.private_data = &p->mine, .private_data_len = sizeof(p->mine),
		.responder_resources = 1, .initiator_depth = 1,
		.retry_count = 7, .rnr_retry_count = 7,
	};
	struct rdma_cm_event ev;
	uint8_t priv[sizeof(struct w_accept)] = {};
	size_t len = 0;
	int ret;

	if (rdma_connect(p->id, &cp))
		return -1;
	ret = cm_wait(p, RDMA_CM_EVENT_ESTABLISHED, 10000, &ev, priv, &len);
	if (!ret) {
		if (len < sizeof(p->acc))
			return -1;
		memcpy(&p->acc, priv, sizeof(p->acc));
		/* We are the initiator: we send under k_i2r. */
		session_keys(&p->mine, &p->acc.hello, p->tx_key, p->rx_key);
		return 0;
	}
	if (ret == -(int)RDMA_CM_EVENT_REJECTED - 1000 &&
	    len >= sizeof(struct w_reject) &&
	    ((struct w_reject *)priv)->magic == W_MAGIC) {
		p->reason = ((struct w_reject *)priv)->reason;
		return p->reason;
	}
	return -1;
}

/* Send @bytes of @msg exactly as they are (seq and tag too) as one SEND. */
static int hp_post_raw(struct hp *p, const void *msg, uint32_t bytes)
{
	/* (the send buffer is the last W_MSG bytes of p->buf) */
	uint8_t *b = p->buf + W_CREDITS * W_MSG;
	struct ibv_sge sge = { .addr = (uintptr_t)b, .length = bytes };
	struct ibv_send_wr wr = { .wr_id = 999, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	int i;

	if (bytes > W_MSG || !p->mr)	/* (no connection: h_admit() failed) */
		return -1;
	sge.lkey = p->mr->lkey;
	memcpy(b, msg, bytes);
	if (ibv_post_send(p->id->qp, &wr, &bad))
		return -1;
	/* One send buffer: wait until it is free again. */
	for (i = 0; i < 5000; i++) {
		int n = ibv_poll_cq(p->scq, 1, &wc);

		if (n == 1)
			return wc.status == IBV_WC_SUCCESS ? 0 : -1;
		usleep(1000);
	}
	return -1;
}

/*
 * Send @bytes of @msg (a header and what follows) as one SEND, as our next
 * message: with the next seq and a valid tag (whatever else it says).  A
 * message shorter than the header goes out as it is, and counts for
 * nothing.
 */
static int hp_post(struct hp *p, const void *msg, uint32_t bytes)
{
	uint8_t m[W_MSG];

	if (bytes < sizeof(struct w_hdr))
		return hp_post_raw(p, msg, bytes);
	if (bytes > sizeof(m))
		return -1;
	memcpy(m, msg, bytes);
	seal(p->tx_key, m, bytes, p->tx_seq);
	if (hp_post_raw(p, m, bytes))
		return -1;
	p->tx_seq++;
	return 0;
}

static int hp_send(struct hp *p, uint8_t type, uint64_t cookie,
		   const void *payload, uint32_t len)
{
	uint8_t m[W_MSG];
	struct w_hdr h = { .version = W_VERSION, .type = type, .len = len,
			   .cookie = cookie, .credits = (uint16_t)p->owed };

	if (len > sizeof(m) - sizeof(h))
		return -1;
	memcpy(m, &h, sizeof(h));
	if (len)
		memcpy(m + sizeof(h), payload, len);
	if (hp_post(p, m, sizeof(h) + len))
		return -1;
	p->owed = 0;
	return 0;
}

/*
 * A message of the node's (@bytes at @m) must be its next one (seq) with
 * the right tag; counted in tags_checked, tags_bad.
 */
static void hp_check_bound(struct hp *p, const uint8_t *m, uint32_t bytes)
{
	uint8_t c[W_MSG], tag[8];
	struct w_hdr h;
	int ok = bytes >= sizeof(h) && bytes <= sizeof(c);

	tags_checked++;
	if (ok) {
		memcpy(&h, m, sizeof(h));
		memcpy(c, m, bytes);
		memset(c + offsetof(struct w_hdr, tag), 0, sizeof(h.tag));
		siphash24(p->rx_key, c, bytes, tag);
		ok = h.seq == p->rx_seq && !memcmp(tag, &h.tag, 8);
		if (!ok && tags_bad < 5)
			tap_diag("  node's message type %u, %u bytes: seq %llu (want %llu), tag %016llx (want %02x%02x%02x%02x%02x%02x%02x%02x as bytes)",
				 h.type, bytes, (unsigned long long)h.seq,
				 (unsigned long long)p->rx_seq,
				 (unsigned long long)h.tag, tag[0], tag[1],
				 tag[2], tag[3], tag[4], tag[5], tag[6], tag[7]);
	} else if (tags_bad < 5) {
		tap_diag("  node's message of %u bytes", bytes);
	}
	p->rx_seq++;
	if (!ok)
		tags_bad++;
}

/*
 * Wait up to @ms for a message of @type (others are consumed); fills
 * @cookie.  The seq and tag of each are checked (hp_check_bound()).
 * Return: 0, -ETIMEDOUT, or -EIO (a failed completion: the connection is
 * gone).
 */
static int hp_recv(struct hp *p, uint8_t type, int ms, uint64_t *cookie)
{
	struct timespec t0, t;
	struct ibv_wc wc;

	if (!p->cq)	/* (no connection: h_admit() failed) */
		return -EIO;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int n = ibv_poll_cq(p->cq, 1, &wc);

		if (n == 1) {
			struct w_hdr *h;

			if (wc.status != IBV_WC_SUCCESS)
				return -EIO;
			if (wc.wr_id == 999)
				continue;
			h = (struct w_hdr *)(p->buf + wc.wr_id * W_MSG);
			hp_check_bound(p, (uint8_t *)h, wc.byte_len);
			if (h->type == type) {
				if (cookie)
					*cookie = h->cookie;
				if (p->payload_out)
					memcpy(p->payload_out, h + 1,
					       h->len < W_MSG - sizeof(*h) ?
					       h->len : W_MSG - sizeof(*h));
				post_recv(p, wc.wr_id);
				p->owed++;
				return 0;
			}
			post_recv(p, wc.wr_id);
			/* Keep the node's credits and heartbeat going. */
			if (++p->owed >= 4)
				hp_send(p, W_CREDIT, 0, NULL, 0);
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 +
		    (t.tv_nsec - t0.tv_nsec) / 1000000 > ms)
			return -ETIMEDOUT;
		if (p->keepalive && !(++p->idle % 300))
			hp_send(p, W_HEARTBEAT, 0, NULL, 0);
		usleep(1000);
	}
}

/*
 * The module ends the connection within @ms: a DISCONNECTED event, or a
 * completion in error (the QP flushed).  Other events are skipped (and
 * said).
 */
static int hp_cut_off(struct hp *p, int ms)
{
	struct ibv_wc wc;
	int waited, ret;

	for (waited = 0; waited < ms; waited += 100) {
		ret = cm_wait(p, RDMA_CM_EVENT_DISCONNECTED, 100, NULL, NULL,
			      NULL);
		if (!ret)
			return 1;
		if (ret != -ETIMEDOUT)
			tap_diag("  cm event %d while waiting to be cut off",
				 -ret - 1000);
		if (ibv_poll_cq(p->cq, 1, &wc) == 1 &&
		    wc.status != IBV_WC_SUCCESS)
			return 1;
	}
	return 0;
}

static uint64_t fab_stat(int which)
{
	struct fos_nl_reply *r = calloc(1, sizeof(*r));
	uint64_t v = ~0ULL;

	if (r && !fos_nl_request(NULL, FRACTOS_CMD_STATS, 0, NULL, r))
		v = r->stats[which];
	free(r);
	return v;
}

/* The node's own record of itself: epoch, connection, epoch changes. */
struct self_view {
	uint32_t epoch, qpn;
	uint64_t epoch_changes;
	uint8_t state;
};

static void self_view(struct self_view *v)
{
	struct fos_nl_node n = {};

	fos_nl_node_get(self_id, &n);
	v->epoch = n.epoch;
	v->qpn = n.qpn;
	v->state = n.state;
	v->epoch_changes = n.stats[FRACTOS_STAT_EPOCH_CHANGES];
}

static int self_same(const struct self_view *a)
{
	struct self_view b;

	self_view(&b);
	return a->epoch == b.epoch && a->qpn == b.qpn &&
	       a->epoch_changes == b.epoch_changes &&
	       b.state == FRACTOS_NODE_UP;
}

/* A handshake refused for @reason, counted in @stat. */
static void refused(const char *what, const struct sockaddr_in *src,
		    uint32_t node, uint32_t key_id, uint8_t flags, int reason,
		    int which)
{
	uint64_t s0 = fab_stat(which);
	struct hp p;
	int ret = -1;

	if (!hp_open(&p, src)) {
		hello_fill(&p.mine, node, self_epoch + 1, key_id, flags);
		ret = hp_connect(&p);
	}
	tap_eq(ret, reason, "%s: refused (reason %d)", what, ret);
	tap_eq(fab_stat(which) - s0, 1, "%s: counted", what);
	hp_close(&p);
}

/* ---- views: the node as our client (we are node H_NODE, it connects) */

#define H_NODE	77
#define H_PORT	18677
#define H_EPOCH	0x7777

/* What the application side of the test does, in its own thread. */
struct app {
	int fd;
	uint32_t mem, dim, mem2, dim2[2], proxy;
	struct fractos_cap_info dim_info, mem2_info;
	int lookup_ret, invoke_ret, invoke2_ret;
	/*
	 * 1: invoked; 3: main asks for a second invoke (with the two @dim2);
	 * 4: invoked again; 2: main is done
	 */
	volatile int stage;
	void *buf;
};

static void *app_fn(void *arg)
{
	struct app *a = arg;
	struct fractos_name n = {
		.flags = FRACTOS_NAME_NODE, .name = (uintptr_t)"svc",
		.name_len = 3, .node = H_NODE,
	};

	a->lookup_ret = ioctl(a->fd, FRACTOS_IOC_NAME_LOOKUP, &n) ? -errno : 0;
	a->proxy = n.cid;
	a->invoke_ret = a->lookup_ret ? a->lookup_ret :
			invoke(a->fd, a->proxy, NULL, 0, &a->dim, 1) ? -errno : 0;
	a->stage = 1;
	while (a->stage != 2 && a->stage != 3)
		usleep(10 * 1000);
	if (a->stage == 3) {
		a->invoke2_ret = invoke(a->fd, a->proxy, NULL, 0, a->dim2, 2) ?
				 -errno : 0;
		a->stage = 4;
		while (a->stage != 2)
			usleep(10 * 1000);
	}
	return NULL;
}

/* Accept the node's connection on @lec as node H_NODE. */
static int hp_accept(struct hp *p, struct rdma_event_channel *lec)
{
	struct pollfd pfd = { .fd = lec->fd, .events = POLLIN };
	struct rdma_conn_param cp = {
		.private_data = &p->acc, .private_data_len = sizeof(p->acc),
		.responder_resources = 1, .initiator_depth = 1,
		.retry_count = 7, .rnr_retry_count = 7,
	};
	struct rdma_cm_event *ev;

	memset(p, 0, sizeof(*p));
	p->ec = lec;
	p->shared_ec = 1;
	/* Skip what is left of earlier connections (their DISCONNECTED). */
	for (;;) {
		if (poll(&pfd, 1, 30000) != 1 || rdma_get_cm_event(lec, &ev))
			return -1;
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
			break;
		rdma_ack_cm_event(ev);
	}
	if (ev->param.conn.private_data_len < sizeof(p->theirs)) {
		rdma_ack_cm_event(ev);
		return -1;
	}
	p->id = ev->id;
	memcpy(&p->theirs, ev->param.conn.private_data, sizeof(p->theirs));
	rdma_ack_cm_event(ev);
	if (hp_setup_qp(p))
		return -1;
	hello_fill(&p->acc.hello, H_NODE, H_EPOCH, key_id_of(secret, secret_len),
		   0);
	hmac3(secret, secret_len, "fractos v7 accept", &p->theirs,
	      &p->acc.hello, p->acc.mac);
	/* We are the responder: we send under k_r2i. */
	session_keys(&p->theirs, &p->acc.hello, p->rx_key, p->tx_key);
	if (rdma_accept(p->id, &cp))
		return -1;
	return cm_wait(p, RDMA_CM_EVENT_ESTABLISHED, 10000, NULL, NULL, NULL);
}

static uint64_t node_stat(uint32_t id, int which)
{
	struct fos_nl_node n = {};

	return fos_nl_node_get(id, &n) ? ~0ULL : n.stats[which];
}

/* Accept the node's next connection as H_NODE and check its AUTH. */
static int h_admit(struct hp *h, struct rdma_event_channel *lec)
{
	uint8_t msg[W_MSG], mac[32];
	int ret;

	if (hp_accept(h, lec))
		return -1;
	h->keepalive = 1;
	h->payload_out = msg;
	ret = hp_recv(h, W_AUTH, 10000, NULL);
	h->payload_out = NULL;
	hmac3(secret, secret_len, "fractos v7 auth", &h->theirs, &h->acc.hello,
	      mac);
	return ret || memcmp(mac, msg, 32) ? -1 : 0;
}

/*
 * On an admitted connection, send @bytes of @msg, which the node must
 * refuse: it cuts the connection off and counts one protocol error; it
 * connects again, and we admit it (*@h, for the next case).
 */
static void malformed(struct hp *h, struct rdma_event_channel *lec,
		      const char *what, const void *msg, uint32_t bytes)
{
	uint64_t pe0 = node_stat(H_NODE, FRACTOS_STAT_PROTO_ERRORS);
	int sent = !hp_post(h, msg, bytes), cut = sent && hp_cut_off(h, 10000);

	tap_ok(cut && node_stat(H_NODE, FRACTOS_STAT_PROTO_ERRORS) == pe0 + 1,
	       "%s: cut off, one protocol error (sent %d, cut %d, errors +%lld)",
	       what, sent, cut,
	       (long long)(node_stat(H_NODE, FRACTOS_STAT_PROTO_ERRORS) - pe0));
	hp_close(h);
	if (h_admit(h, lec))
		tap_diag("the node did not connect again after: %s", what);
}

/* Ways to break channel binding on an admitted connection (unbound()). */
enum unbound_kind {
	UB_RANDOM_KEY,	/* the next seq, tagged under a random key */
	UB_REPLAY,	/* the PING before it again: its seq and tag */
	UB_SKIP,	/* seq + 1, tagged right for it */
	UB_REFLECT,	/* the next seq, tagged under the node's own key */
};

/*
 * On an admitted connection, send a PING and have it answered (we are
 * admitted and in step), then a PING that breaks channel binding as @kind
 * says: the node must cut the connection off, count one protocol error,
 * not serve it, and leave its own connection (@sv) alone.  It connects
 * again, and we admit it (*@h, for the next case).
 */
static void unbound(struct hp *h, struct rdma_event_channel *lec,
		    const struct self_view *sv, const char *what,
		    enum unbound_kind kind)
{
	uint64_t pe0 = node_stat(H_NODE, FRACTOS_STAT_PROTO_ERRORS), pings;
	uint8_t m[W_MSG] = {}, key[16];
	struct w_hdr *mh = (struct w_hdr *)m;
	struct w_ping ping = { .t0 = 1, .seq = 11 };
	uint32_t n = sizeof(*mh) + sizeof(ping);
	uint64_t cookie = 0;
	int served, sent, cut, same;
	unsigned int i;

	*mh = (struct w_hdr){ .version = W_VERSION, .type = W_PING,
			      .len = sizeof(ping), .cookie = 0x5b };
	memcpy(m + sizeof(*mh), &ping, sizeof(ping));
	/* Sealed here (not by hp_post()), to be replayed as it was. */
	seal(h->tx_key, m, n, h->tx_seq);
	h->payload_out = NULL;
	served = !hp_post_raw(h, m, n);
	if (served)
		h->tx_seq++;
	served = served && !hp_recv(h, W_PONG, 10000, &cookie) &&
		 cookie == 0x5b;
	pings = node_stat(H_NODE, FRACTOS_STAT_PINGS_RX);
	if (kind != UB_REPLAY)
		mh->cookie = 0x5c;	/* (a replay is m as it was sent) */
	switch (kind) {
	case UB_RANDOM_KEY:
		for (i = 0; i < sizeof(key); i++)
			key[i] = (uint8_t)rand();
		seal(key, m, n, h->tx_seq);
		break;
	case UB_REPLAY:
		break;
	case UB_SKIP:
		seal(h->tx_key, m, n, h->tx_seq + 1);
		break;
	case UB_REFLECT:
		seal(h->rx_key, m, n, h->tx_seq);
		break;
	}
	sent = !hp_post_raw(h, m, n);
	cut = sent && hp_cut_off(h, 10000);
	same = self_same(sv);
	tap_ok(served && cut &&
	       node_stat(H_NODE, FRACTOS_STAT_PROTO_ERRORS) == pe0 + 1 &&
	       node_stat(H_NODE, FRACTOS_STAT_PINGS_RX) == pings && same,
	       "%s: cut off, one protocol error, not served, the node's own connection unchanged (in step %d, cut %d, errors +%lld, pings +%lld, same %d)",
	       what, served, cut,
	       (long long)(node_stat(H_NODE, FRACTOS_STAT_PROTO_ERRORS) - pe0),
	       (long long)(node_stat(H_NODE, FRACTOS_STAT_PINGS_RX) - pings),
	       same);
	hp_close(h);
	if (h_admit(h, lec))
		tap_diag("the node did not connect again after: %s", what);
}

/* Send GRANT for @src [@off, +@len); the reply's status (or -1). */
static int grant(struct hp *p, const struct w_cap *src, uint64_t off,
		 uint64_t len, struct w_grant_reply *r)
{
	struct w_grant g = { .src = *src, .off = off, .len = len, .pull = 9 };
	uint64_t cookie = 0;

	memset(r, 0, sizeof(*r));
	p->payload_out = r;
	if (hp_send(p, W_GRANT, 0x6a, &g, sizeof(g)) ||
	    hp_recv(p, W_GRANT_REPLY, 10000, &cookie) || cookie != 0x6a)
		return -1;
	return (int)r->status;
}

/*
 * RDMA READ @len bytes at (@addr, @rkey) of the node's into @dst, on
 * @p's QP.  Return: the completion's status, or -1.
 */
static int hp_read(struct hp *p, void *dst, uint32_t len, uint64_t addr,
		   uint32_t rkey)
{
	struct ibv_mr *mr = ibv_reg_mr(p->pd, dst, len, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_sge sge = { .addr = (uintptr_t)dst, .length = len };
	struct ibv_send_wr wr = { .wr_id = 777, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_READ,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	int i, ret = -1;

	if (!mr)
		return -1;
	sge.lkey = mr->lkey;
	wr.wr.rdma.remote_addr = addr;
	wr.wr.rdma.rkey = rkey;
	if (!ibv_post_send(p->id->qp, &wr, &bad)) {
		for (i = 0; i < 5000; i++) {
			if (ibv_poll_cq(p->scq, 1, &wc) == 1 && wc.wr_id == 777) {
				ret = wc.status;
				break;
			}
			usleep(1000);
		}
	}
	ibv_dereg_mr(mr);
	return ret;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/*
 * Send REVOKE_REQ for @c's object and wait for its ACK: the ACK's status
 * (or -1); *@dt: the seconds it took.
 */
static int revoke_req(struct hp *p, const struct w_cap *c, double *dt)
{
	struct w_obj o = { .oid = c->oid, .epoch = c->epoch };
	struct w_status ack = { .status = 999 };
	void *out = p->payload_out;
	double t0 = now_s();
	int ok;

	p->payload_out = &ack;
	ok = !hp_send(p, W_REVOKE_REQ, 0x7a, &o, sizeof(o)) &&
	     !hp_recv(p, W_ACK, 10000, NULL);
	*dt = now_s() - t0;
	p->payload_out = out;
	return ok ? (int)ack.status : -1;
}

/* 1 if capability @cid of @fd is revoked, 0 if not, else -errno. */
static int cap_revoked(int fd, uint32_t cid)
{
	struct fractos_cap_info info;

	return fos_info(fd, cid, &info) ? -errno :
	       !!(info.info_flags & FRACTOS_INFO_REVOKED);
}

static void views(void)
{
	uint8_t msg[W_MSG], mac[32];
	struct rdma_event_channel *lec;
	struct rdma_cm_id *lid = NULL;
	struct sockaddr_in la = self_addr;
	struct w_lookup_reply lr = {};
	struct w_grant_reply gr;
	struct w_status ack = {};
	struct w_cap given, c;
	struct app a = {};
	pthread_t th;
	uint64_t cookie = 0, pe0;
	struct hp h;
	int ok, st;
	uint16_t port = H_PORT;
	uint32_t hid = H_NODE;
	struct fos_nl_attr na[] = { FOS_NL_A(FRACTOS_A_NODE_ID, hid),
				    FOS_NL_A(FRACTOS_A_NODE_ADDR4, self_addr.sin_addr),
				    FOS_NL_A(FRACTOS_A_NODE_PORT, port), { 0 } };

	la.sin_port = htons(H_PORT);
	lec = rdma_create_event_channel();
	ok = lec && !rdma_create_id(lec, &lid, NULL, RDMA_PS_TCP) &&
	     !rdma_bind_addr(lid, (struct sockaddr *)&la) && !rdma_listen(lid, 4);
	ok = ok && !fos_nl_request(NULL, FRACTOS_CMD_NODE_ADD, 0, na, NULL);
	ok = ok && !hp_accept(&h, lec);
	tap_ok(ok && h.theirs.node_id == self_id && h.theirs.dst_node_id == H_NODE,
	       "views: the node connects to us as node %u (a listener of ours)", H_NODE);
	h.keepalive = 1;
	h.payload_out = msg;
	ok = ok && !hp_recv(&h, W_AUTH, 10000, NULL);
	hmac3(secret, secret_len, "fractos v7 auth", &h.theirs, &h.acc.hello, mac);
	tap_ok(ok && !memcmp(mac, msg, 32), "views: its AUTH verifies: it holds the secret");

	/* The application looks our "svc" up and invokes it with a view. */
	a.buf = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	a.fd = fos_open();
	for (st = 0; a.buf != MAP_FAILED && st < 8192; st++)
		((uint8_t *)a.buf)[st] = (uint8_t)(st * 7 + 3);
	ok = a.fd >= 0 && a.buf != MAP_FAILED &&
	     !fos_mem_create(a.fd, a.buf, 4096, FRACTOS_PERM_ALL, &a.mem) &&
	     !fos_diminish(a.fd, a.mem, FRACTOS_PERM_WRITE, 100, 200, &a.dim) &&
	     !fos_mem_create(a.fd, (char *)a.buf + 4096, 4096, FRACTOS_PERM_ALL,
			     &a.mem2) &&
	     !fos_info(a.fd, a.dim, &a.dim_info) &&
	     !fos_info(a.fd, a.mem2, &a.mem2_info) &&
	     !pthread_create(&th, NULL, app_fn, &a);
	if (!ok)
		tap_bail("views: setup");
	ok = !hp_recv(&h, W_LOOKUP, 10000, &cookie);
	lr.cap.node = H_NODE;
	lr.cap.epoch = H_EPOCH;
	lr.cap.oid = 5;
	lr.cap.type = FRACTOS_OBJ_REQUEST;
	ok = ok && !hp_send(&h, W_LOOKUP_REPLY, cookie, &lr, sizeof(lr));
	ok = ok && !hp_recv(&h, W_INVOKE, 10000, &cookie);
	memcpy(&given, msg + sizeof(struct w_invoke), sizeof(given));
	ok = ok && !hp_send(&h, W_ACK, cookie, &ack, sizeof(ack));
	while (ok && !a.stage)
		usleep(10 * 1000);
	tap_ok(ok && !a.lookup_ret && !a.invoke_ret && given.node == self_id &&
	       given.off == 100 && given.len == 200 &&
	       given.perms == FRACTOS_PERM_READ,
	       "views: it invokes our Request with the view [100, +200), read-only (lookup %d, invoke %d)",
	       a.lookup_ret, a.invoke_ret);

	/* Now take more than we were given. */
	pe0 = node_stat(H_NODE, FRACTOS_STAT_PROTO_ERRORS);
	c = given;
	c.off = 0;
	c.len = 4096;
	st = grant(&h, &c, 0, 4096, &gr);
	tap_eq(st, EPROTO, "GRANT of the whole Memory: EPROTO");
	c = given;
	c.perms |= FRACTOS_PERM_WRITE;
	st = grant(&h, &c, 0, 200, &gr);
	tap_eq(st, EPROTO, "GRANT of the view with WRITE added: EPROTO");
	c = given;
	c.off = 250;
	c.len = 100;
	st = grant(&h, &c, 0, 100, &gr);
	tap_eq(st, EPROTO, "GRANT of a range overlapping its end: EPROTO");
	{
		/* We may read the view: a copy into it is not ours to ask. */
		struct w_copy cp = { .src = given, .dst = given, .len = 8 };

		cp.dst.perms |= FRACTOS_PERM_WRITE;
		h.payload_out = &ack;
		ack.status = 999;
		ok = !hp_send(&h, W_COPY, 0x6b, &cp, sizeof(cp)) &&
		     !hp_recv(&h, W_ACK, 10000, &cookie);
		tap_ok(ok && ack.status == EPROTO,
		       "COPY into the view with WRITE added: EPROTO (status %u)",
		       ack.status);
		h.payload_out = msg;
	}
	tap_eq(node_stat(H_NODE, FRACTOS_STAT_PROTO_ERRORS) - pe0, 4,
	       "each counted as a protocol error of node %u", H_NODE);
	tap_eq(fos_live("grants"), 0, "nothing was registered for them");
	st = grant(&h, &given, 0, 200, &gr);
	tap_ok(st == 0 && gr.len == 200 && gr.rkey,
	       "GRANT of exactly the view: granted, 200 bytes (status %d)", st);
	tap_eq(gr.addr, 100,
	       "the region is zero-based: its address is the view's offset in its page, no kernel address");
	{
		struct w_release rel = { .id = gr.id };

		hp_send(&h, W_RELEASE, 0, &rel, sizeof(rel));
	}
	c = given;
	c.off = 20 + 100;
	c.len = 50;
	st = grant(&h, &c, 0, 50, &gr);
	tap_ok(st == 0 && gr.len == 50, "GRANT of a part of the view: granted (status %d)", st);
	{
		struct w_release rel = { .id = gr.id };

		hp_send(&h, W_RELEASE, 0, &rel, sizeof(rel));
	}
	/* Per-peer limits: grants held, requests in progress. */
	{
		struct w_grant_reply g1, g2, g3;
		struct w_release rel = {};
		int s1, s2, s3;

		fos_set_param("fabric_peer_grants", 2);
		s1 = grant(&h, &given, 0, 10, &g1);
		s2 = grant(&h, &given, 10, 10, &g2);
		s3 = grant(&h, &given, 20, 10, &g3);
		tap_ok(s1 == 0 && s2 == 0 && s3 == EAGAIN,
		       "fabric_peer_grants=2: two grants held, a third EAGAIN (%d %d %d)",
		       s1, s2, s3);
		rel.id = g1.id;
		hp_send(&h, W_RELEASE, 0, &rel, sizeof(rel));
		s3 = grant(&h, &given, 20, 10, &g3);
		tap_eq(s3, 0, "after a RELEASE a grant is granted again");
		rel.id = g2.id;
		hp_send(&h, W_RELEASE, 0, &rel, sizeof(rel));
		rel.id = g3.id;
		hp_send(&h, W_RELEASE, 0, &rel, sizeof(rel));
		fos_set_param("fabric_peer_grants", 256);
		fos_set_param("fabric_peer_work", 0);
		s1 = grant(&h, &given, 0, 10, &g1);
		fos_set_param("fabric_peer_work", 64);
		tap_eq(s1, EAGAIN, "fabric_peer_work=0: a GRANT is refused EAGAIN");
	}
	/* We forward our view to node H_NODE + 1: we may give back that. */
	{
		struct w_import im = { .oid = given.oid, .epoch = given.epoch,
				       .node = H_NODE + 1, .off = given.off,
				       .len = given.len, .perms = given.perms };
		struct w_drop d = { .oid = given.oid, .epoch = given.epoch,
				    .node = H_NODE + 1, .count = 2 };
		struct in_addr far = { htonl(ntohl(self_addr.sin_addr.s_addr) + 81) };
		long long e0 = fos_live("exports");
		int imp, i;

		h.payload_out = &ack;
		ok = !fos_nl_node_add(H_NODE + 1, far) &&
		     !hp_send(&h, W_IMPORT, 0x78, &im, sizeof(im)) &&
		     !hp_recv(&h, W_ACK, 10000, &cookie);
		imp = ok ? (int)ack.status : -1;
		tap_ok(imp == 0, "IMPORT of our view for node %u: counted (status %d)",
		       H_NODE + 1, imp);
		pe0 = node_stat(H_NODE, FRACTOS_STAT_PROTO_ERRORS);
		hp_send(&h, W_DROP, 0, &d, sizeof(d));
		for (i = 0; i < 100 && node_stat(H_NODE, FRACTOS_STAT_PROTO_ERRORS) == pe0; i++)
			usleep(20 * 1000);
		tap_eq(node_stat(H_NODE, FRACTOS_STAT_PROTO_ERRORS) - pe0, 1,
		       "a DROP of 2 descriptions for node %u, which we announced 1 of: a protocol error",
		       H_NODE + 1);
		d.count = 1;
		hp_send(&h, W_DROP, 0, &d, sizeof(d));
		/* An answered IMPORT after it: the DROP was served. */
		ok = !hp_send(&h, W_IMPORT, 0x79, &im, sizeof(im)) &&
		     !hp_recv(&h, W_ACK, 10000, &cookie) && !ack.status;
		tap_ok(ok && node_stat(H_NODE, FRACTOS_STAT_PROTO_ERRORS) - pe0 == 1 &&
		       fos_live("exports") == e0,
		       "a DROP of the one we announced is taken (no protocol error, still exported)");
		hp_send(&h, W_DROP, 0, &d, sizeof(d));
		fos_nl_node_del(H_NODE + 1);
	}
	c = given;
	c.oid = a.mem2_info.oid.id;
	c.off = 0;
	c.len = 4096;
	st = grant(&h, &c, 0, 4096, &gr);
	tap_eq(st, EKEYREVOKED, "GRANT of a Memory never sent to us: refused (EKEYREVOKED)");
	{
		struct w_obj o = { .oid = a.mem2_info.oid.id, .epoch = self_epoch };

		h.payload_out = &ack;
		ok = !hp_send(&h, W_REVOKE_REQ, 0x77, &o, sizeof(o)) &&
		     !hp_recv(&h, W_ACK, 10000, &cookie);
		tap_ok(ok && ack.status == EKEYREVOKED && !fos_info(a.fd, a.mem2, &a.mem2_info),
		       "REVOKE_REQ of it: refused, and it is not revoked (status %u)", ack.status);
	}
	/*
	 * A holder's REVOKE_REQ (its proxy's CAP_REVOKE) is answered once the
	 * keys are dead too: we hold a grant and ignore its GRANT_END.  (Its
	 * grant is gone, so its key is deregistered: an RDMA READ with a
	 * dead key is tried below, last, as it ends our connection.)
	 */
	{
		/* A view names its object: the second is of a third Memory. */
		void *b3 = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		uint32_t mem3;

		ok = b3 != MAP_FAILED &&
		     !fos_diminish(a.fd, a.mem2, FRACTOS_PERM_WRITE, 0, 512,
				   &a.dim2[0]) &&
		     !fos_mem_create(a.fd, b3, 4096, FRACTOS_PERM_ALL, &mem3) &&
		     !fos_diminish(a.fd, mem3, FRACTOS_PERM_WRITE, 1024, 512,
				   &a.dim2[1]);
	}
	a.stage = 3;
	h.payload_out = msg;
	ok = ok && !hp_recv(&h, W_INVOKE, 10000, &cookie);
	memcpy(&c, msg + sizeof(struct w_invoke), sizeof(c));
	{
		struct w_cap c3;
		double dt;
		int rv;

		memcpy(&c3, msg + sizeof(struct w_invoke) + sizeof(c), sizeof(c3));
		ack.status = 0;
		ok = ok && !hp_send(&h, W_ACK, cookie, &ack, sizeof(ack));
		for (st = 0; ok && a.stage != 4 && st < 1000; st++)
			usleep(10 * 1000);
		tap_ok(ok && a.stage == 4 && !a.invoke2_ret && c.len == 512 &&
		       c3.len == 512,
		       "two more views, [0, +512) of a second Memory and [1024, +512) of a third (ok %d, stage %d, invoke %d)",
		       ok, a.stage, a.invoke2_ret);
		/* A revocation is not refused for load: it is done at once. */
		fos_set_param("fabric_peer_work", 0);
		st = revoke_req(&h, &c3, &dt);
		fos_set_param("fabric_peer_work", 64);
		rv = cap_revoked(a.fd, a.dim2[1]);
		tap_ok(st == 0 && rv == 1 && dt < 1.5,
		       "fabric_peer_work=0: our REVOKE_REQ is still served, at once (%.2f s, status %d, revoked %d)",
		       dt, st, rv);
	}
	st = grant(&h, &c, 0, 512, &gr);
	{
		uint8_t got[512];
		double dt;
		int rs = st ? -1 : hp_read(&h, got, 512, gr.addr, gr.rkey);

		tap_ok(!st && !rs && !memcmp(got, (uint8_t *)a.buf + 4096, 512),
		       "its grant reads with RDMA (grant %d, read %d)", st, rs);
		st = revoke_req(&h, &c, &dt);
		rs = cap_revoked(a.fd, a.dim2[0]);
		tap_ok(st == 0 && dt >= 1.5 && dt < 10 &&
		       fos_live("grants") == 0 && rs == 1,
		       "our REVOKE_REQ is answered after %.1f s, with the object revoked and our grant ended (status %d, revoked %d, grants %lld)",
		       dt, st, rs, fos_live("grants"));
	}

	/* A grant we keep, read with RDMA, then its object revoked. */
	st = grant(&h, &given, 0, 200, &gr);
	{
		uint8_t got[200];
		int rs = st ? -1 : hp_read(&h, got, 200, gr.addr, gr.rkey);

		tap_ok(!st && !rs && !memcmp(got, (uint8_t *)a.buf + 100, 200),
		       "an RDMA READ with the grant's key on our QP reads exactly the view's bytes (grant %d, read %d)",
		       st, rs);
	}
	{
		struct w_drop d = { .oid = given.oid, .epoch = given.epoch,
				    .node = H_NODE, .count = 1 };

		hp_send(&h, W_DROP, 0, &d, sizeof(d));
	}
	for (st = 0; st < 200 && fos_live("exports"); st++)
		usleep(20 * 1000);
	tap_ok(!fos_live("exports") && fos_live("grants") == 1,
	       "our DROP ends the export; the grant we keep holds the object, not the export");
	{
		double t0 = now_s(), dt;
		uint8_t got[200];
		int rv, rs;

		/* We ignore its GRANT_END: CAP_REVOKE ends the grant itself. */
		rv = fos_revoke(a.fd, a.mem);
		dt = now_s() - t0;
		tap_ok(rv == 0 && fos_live("grants") == 0 && dt >= 1.5 && dt < 10,
		       "CAP_REVOKE returns with the grant ended, after waiting %.1f s for a puller that ignores GRANT_END (ret %d)",
		       dt, rv);
		rs = hp_read(&h, got, 200, gr.addr, gr.rkey);
		tap_ok(rs > 0,
		       "an RDMA READ with the revoked object's old key fails (completion status %d)",
		       rs);
	}

	/*
	 * That READ ended our connection.  Malformed messages: each ends the
	 * connection and is counted; the node connects again each time.
	 */
	hp_close(&h);
	tap_ok(!h_admit(&h, lec),
	       "after the failed READ the node connects again and proves itself");
	{
		uint8_t m[W_MSG] = {};
		struct w_hdr *mh = (struct w_hdr *)m;
		struct w_ping ping = { .seq = 5 };

		*mh = (struct w_hdr){ .version = W_VERSION, .type = W_AUTH + 1,
				      .len = 8 };
		malformed(&h, lec, "a message type the protocol does not have",
			  m, sizeof(*mh) + 8);
		*mh = (struct w_hdr){ .version = W_VERSION + 1, .type = W_CREDIT };
		malformed(&h, lec, "another wire version", m, sizeof(*mh));
		*mh = (struct w_hdr){ .version = W_VERSION, .type = W_DROP,
				      .len = 64 };
		malformed(&h, lec, "a header announcing 64 bytes, 8 sent",
			  m, sizeof(*mh) + 8);
		*mh = (struct w_hdr){ .version = W_VERSION, .type = W_GRANT,
				      .len = 40 };
		malformed(&h, lec, "a GRANT of 40 of its 72 bytes",
			  m, sizeof(*mh) + 40);
		*mh = (struct w_hdr){ .version = W_VERSION, .type = W_CREDIT,
				      .credits = 60000 };
		malformed(&h, lec, "60000 credits, more than the node ever gave",
			  m, sizeof(*mh));
		malformed(&h, lec, "a message of 4 bytes", m, 4);
		h.payload_out = NULL;
		ok = h.id && !hp_send(&h, W_PING, 0x55, &ping, sizeof(ping)) &&
		     !hp_recv(&h, W_PONG, 10000, &cookie) && cookie == 0x55;
		tap_ok(ok, "after them the node's new connection serves us: our PING is answered");
	}
	/* Channel binding (version 7), on the admitted connection. */
	{
		struct w_ping ping = { .seq = 8 };
		struct self_view sv;

		static const struct {
			const char *what;
			enum unbound_kind how;
		} ub[] = {
			{ "a PING tagged under a random key (a relay that forwarded the handshake, without the session key)",
			  UB_RANDOM_KEY },
			{ "our last PING replayed (its seq and tag again)",
			  UB_REPLAY },
			{ "a PING that skips a seq (tagged right for it)",
			  UB_SKIP },
			{ "a PING tagged under the node's own direction key (a reflection)",
			  UB_REFLECT },
		};
		unsigned int u;

		self_view(&sv);
		for (u = 0; u < sizeof(ub) / sizeof(ub[0]); u++)
			unbound(&h, lec, &sv, ub[u].what, ub[u].how);
		h.payload_out = NULL;
		ok = h.id && !hp_send(&h, W_PING, 0x57, &ping, sizeof(ping)) &&
		     !hp_recv(&h, W_PONG, 10000, &cookie) && cookie == 0x57;
		tap_ok(ok, "after them the node's new connection serves us: our PING is answered");
	}
	a.stage = 2;
	pthread_join(th, NULL);
	close(a.fd);
	hp_close(&h);
	fos_nl_node_del(H_NODE);
	if (lid)
		rdma_destroy_id(lid);
	if (lec)
		rdma_destroy_event_channel(lec);
}

/*
 * Accepted with the right key id; an AUTH with the right MAC that breaks
 * channel binding (@skip: seq 1 instead of 0, tagged right; else tagged
 * under a random key) must be refused as an authentication failure, with
 * nothing changed about the node (@v0).
 */
static void bad_auth_binding(const char *what, int skip,
			     const struct self_view *v0)
{
	uint64_t s0 = fab_stat(FRACTOS_STAT_AUTH_FAILURES), n;
	uint8_t m[sizeof(struct w_hdr) + 32] = {};
	struct w_hdr *mh = (struct w_hdr *)m;
	int ok, cut, same;
	unsigned int i;
	struct hp p;

	ok = !hp_open(&p, NULL);
	hello_fill(&p.mine, self_id, self_epoch + 9, key_id_of(secret, secret_len), 0);
	ok = ok && !hp_connect(&p);
	*mh = (struct w_hdr){ .version = W_VERSION, .type = W_AUTH, .len = 32 };
	hmac3(secret, secret_len, "fractos v7 auth", &p.mine, &p.acc.hello,
	      m + sizeof(*mh));
	if (skip) {
		seal(p.tx_key, m, sizeof(m), 1);
	} else {
		uint8_t key[16];

		for (i = 0; i < sizeof(key); i++)
			key[i] = (uint8_t)rand();
		seal(key, m, sizeof(m), 0);
	}
	ok = ok && !hp_post_raw(&p, m, sizeof(m));
	cut = ok && hp_recv(&p, W_CREDIT, 1000, NULL) != 0 &&
	      hp_cut_off(&p, 20000);
	n = fab_stat(FRACTOS_STAT_AUTH_FAILURES) - s0;
	same = self_same(v0);
	tap_ok(cut && n == 1 && same,
	       "%s: no credit, cut off, counted as an authentication failure, nothing about the node changed (cut %d, auth failures +%llu, same %d)",
	       what, cut, (unsigned long long)n, same);
	hp_close(&p);
}

static int read_secret(void)
{
	const char *path = getenv("FRACTOS_SECRET");
	FILE *f = path ? fopen(path, "re") : NULL;

	if (!f)
		return -1;
	secret_len = fread(secret, 1, sizeof(secret), f);
	fclose(f);
	if (secret_len && secret[secret_len - 1] == '\n')
		secret_len--;
	return secret_len >= 16 ? 0 : -1;
}

int main(void)
{
	struct w_hello t[2];
	uint8_t mac[32], recorded_auth[32], recorded_accept[32];
	struct w_hello recorded;
	uint32_t key;
	struct self_view v0;
	struct sockaddr_in other;
	struct hp p, flood[40];
	uint64_t s0;
	int i, busy = 0, ok;

	printf("TAP version 13\n");
	if (getuid() || fos_param("node_id") < 0) {
		printf("1..0 # SKIP needs root and the module loaded\n");
		return 0;
	}
	if (read_secret() || !fos_nl_self_addr(&self_addr.sin_addr)) {
		printf("1..0 # SKIP needs FRACTOS_SECRET (vm/run) and eth0\n");
		return 0;
	}
	tap_plan(78);
	srand(getpid());
	tap_ok(siphash_matches_kernel(),
	       "OpenSSL's SipHash-2-4 gives the kernel's siphash() test vectors as little-endian u64");
	self_addr.sin_family = AF_INET;
	self_id = fos_param("node_id");
	self_epoch = fos_param("epoch");
	key = key_id_of(secret, secret_len);

	tap_eq(fos_nl_node_add(self_id, self_addr.sin_addr), 0,
	       "NODE_ADD node %u (this node) at its eth0 address", self_id);
	tap_ok(fos_nl_wait_up(self_id, 30), "the node admits itself");
	self_view(&v0);

	/* ---- refused before any proof */
	refused("a key id nobody holds", NULL, self_id, key ^ 0x5a5a5a5a, 0,
		REJ_AUTH, FRACTOS_STAT_REFUSED_AUTH);
	refused("an insecure hello to a node with a secret", NULL, self_id, 0,
		W_INSECURE, REJ_AUTH, FRACTOS_STAT_REFUSED_AUTH);
	refused("a node that is not configured", NULL, self_id + 1000, key, 0,
		REJ_UNKNOWN, FRACTOS_STAT_REFUSED_UNKNOWN);
	other = self_addr;
	other.sin_addr.s_addr = htonl(ntohl(self_addr.sin_addr.s_addr) + 80);
	{
		char cmd[96];

		snprintf(cmd, sizeof(cmd), "ip addr add %s/24 dev eth0",
			 inet_ntoa(other.sin_addr));
		ok = !system(cmd);
		usleep(500 * 1000);	/* rxe learns the GID */
		refused("the right secret's id from another address", &other,
			self_id, key, 0, REJ_ADDRESS,
			FRACTOS_STAT_REFUSED_ADDRESS);
		snprintf(cmd, sizeof(cmd), "ip addr del %s/24 dev eth0",
			 inet_ntoa(other.sin_addr));
		if (ok && system(cmd))
			tap_diag("could not remove %s", inet_ntoa(other.sin_addr));
	}

	/* ---- accepted, then a wrong proof: cut off, nothing changes */
	s0 = fab_stat(FRACTOS_STAT_AUTH_FAILURES);
	ok = !hp_open(&p, NULL);
	hello_fill(&p.mine, self_id, self_epoch + 7, key, 0);
	ok = ok && !hp_connect(&p);
	tap_ok(ok, "a hello with the right key id and another epoch is accepted");
	t[0] = p.mine;
	t[1] = p.acc.hello;
	hmac3((const uint8_t *)"not the secret, not at all", 26,
	      "fractos v7 accept", &t[0], &t[1], mac);
	tap_ok(ok && memcmp(mac, p.acc.mac, 32) != 0,
	       "without the secret the accept's proof cannot be checked");
	hmac3((const uint8_t *)"not the secret, not at all", 26,
	      "fractos v7 auth", &t[0], &t[1], mac);
	/*
	 * (hp_send() tags it under the real session key, which this sender
	 * could not know: so it is the MAC that is refused, not the tag.)
	 */
	ok = ok && !hp_send(&p, W_AUTH, 0, mac, 32);
	tap_ok(ok && hp_cut_off(&p, 20000), "an AUTH with a wrong MAC: cut off");
	tap_eq(fab_stat(FRACTOS_STAT_AUTH_FAILURES) - s0, 1, "counted as an authentication failure");
	tap_ok(self_same(&v0), "the node's epoch, connection and state did not change");
	hp_close(&p);

	/* ---- the right MAC, but not bound to the handshake (version 7) */
	bad_auth_binding("an AUTH with the right MAC tagged under a random key (a relay without the session key)",
			 0, &v0);
	bad_auth_binding("an AUTH with the right MAC and seq 1 (tagged right for it)",
			 1, &v0);

	/* ---- another message in place of AUTH */
	s0 = fab_stat(FRACTOS_STAT_AUTH_FAILURES);
	ok = !hp_open(&p, NULL);
	hello_fill(&p.mine, self_id, self_epoch, key, 0);
	ok = ok && !hp_connect(&p);
	{
		struct w_ping ping = { .t0 = 1, .seq = 1 };

		ok = ok && !hp_send(&p, W_PING, 42, &ping, sizeof(ping));
	}
	tap_ok(ok && hp_recv(&p, W_PONG, 1000, NULL) != 0 && hp_cut_off(&p, 20000),
	       "a PING instead of AUTH: no PONG, cut off");
	tap_eq(fab_stat(FRACTOS_STAT_AUTH_FAILURES) - s0, 1, "counted");
	hp_close(&p);

	/* ---- silence */
	s0 = fab_stat(FRACTOS_STAT_AUTH_FAILURES);
	ok = !hp_open(&p, NULL);
	hello_fill(&p.mine, self_id, self_epoch, key, 0);
	ok = ok && !hp_connect(&p);
	tap_ok(ok && hp_cut_off(&p, 15000), "no AUTH at all: cut off (after 5 s)");
	tap_eq(fab_stat(FRACTOS_STAT_AUTH_FAILURES) - s0, 1, "counted");
	hp_close(&p);

	/* ---- the secret: admitted, and it carries a PING */
	ok = !hp_open(&p, NULL);
	hello_fill(&p.mine, self_id, self_epoch, key, 0);
	ok = ok && !hp_connect(&p);
	t[0] = p.mine;
	t[1] = p.acc.hello;
	hmac3(secret, secret_len, "fractos v7 accept", &t[0], &t[1], mac);
	tap_ok(ok && p.acc.hello.key_id == key && !memcmp(mac, p.acc.mac, 32),
	       "with the secret: the accept's MAC is HMAC-SHA256 as specified");
	hmac3(secret, secret_len, "fractos v7 auth", &t[0], &t[1], mac);
	recorded = p.mine;
	memcpy(recorded_auth, mac, 32);
	memcpy(recorded_accept, p.acc.mac, 32);
	ok = ok && !hp_send(&p, W_AUTH, 0, mac, 32);
	tap_ok(ok && !hp_recv(&p, W_CREDIT, 10000, NULL),
	       "a valid AUTH is answered with its credit");
	/*
	 * Served: the node counts the PING (its PONG goes to node
	 * self_id's own connection, as every message to that node does).
	 */
	s0 = fab_stat(FRACTOS_STAT_PINGS_RX);
	{
		struct w_ping ping = { .t0 = 1, .seq = 7 };

		ok = ok && !hp_send(&p, W_PING, 0x1234, &ping, sizeof(ping));
	}
	for (i = 0; i < 500 && fab_stat(FRACTOS_STAT_PINGS_RX) == s0; i++)
		usleep(20 * 1000);
	tap_ok(ok && fab_stat(FRACTOS_STAT_PINGS_RX) == s0 + 1,
	       "admitted: its PING is served");
	hp_close(&p);
	/* Its incoming slot was ours: the node reconnects to itself. */
	sleep(2);
	tap_ok(fos_nl_wait_up(self_id, 30), "the node's own connection comes back");
	self_view(&v0);

	/* ---- replay of that handshake */
	s0 = fab_stat(FRACTOS_STAT_AUTH_FAILURES);
	ok = !hp_open(&p, NULL);
	p.mine = recorded;
	ok = ok && !hp_connect(&p);
	tap_ok(ok && memcmp(p.acc.mac, recorded_accept, 32) != 0,
	       "a replayed hello is answered with a fresh nonce");
	/* (Its MAC recorded; tagged right for this connection: see above.) */
	ok = ok && !hp_send(&p, W_AUTH, 0, recorded_auth, 32);
	tap_ok(ok && hp_cut_off(&p, 20000), "the replayed AUTH: cut off");
	tap_eq(fab_stat(FRACTOS_STAT_AUTH_FAILURES) - s0, 1, "counted");
	tap_ok(self_same(&v0), "the node's connection did not change");
	hp_close(&p);

	/* ---- a flood of connections that never prove anything */
	s0 = fab_stat(FRACTOS_STAT_REFUSED_BUSY);
	for (i = 0; i < 40; i++) {
		if (hp_open(&flood[i], NULL)) {
			flood[i].reason = -1;
			continue;
		}
		hello_fill(&flood[i].mine, self_id, self_epoch, key, 0);
		if (hp_connect(&flood[i]) == REJ_BUSY)
			busy++;
	}
	tap_ok(busy >= 8, "40 connections waiting for admission: %d refused busy", busy);
	tap_ok(fab_stat(FRACTOS_STAT_REFUSED_BUSY) - s0 == (uint64_t)busy, "counted");
	for (i = 0; i < 40; i++)
		hp_close(&flood[i]);
	tap_ok(self_same(&v0), "the node's connection did not change");
	sleep(6);	/* the admission timeout ends the rest */
	ok = !hp_open(&p, NULL);
	hello_fill(&p.mine, self_id, self_epoch, key, 0);
	ok = ok && !hp_connect(&p);
	tap_ok(ok, "after the flood a new handshake is accepted again");
	hp_close(&p);

	views();

	tap_ok(tags_checked > 0 && !tags_bad,
	       "every message of the node carried the right seq and tag (%u checked, %u wrong)",
	       tags_checked, tags_bad);
	tap_eq(fos_nl_ping(self_id, 5, NULL), 0, "the node still pings itself");
	tap_eq(fos_nl_node_del(self_id), 0, "NODE_DEL");
	return tap_finish();
}
