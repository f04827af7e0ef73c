// SPDX-License-Identifier: GPL-2.0
/*
 * The wire peer of wirepeer.h: a connection of ours to the node (or the
 * node's to us), its messages sealed and checked, the handshake's crypto
 * (OpenSSL), and what the node says about itself over netlink.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stddef.h>
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
#include "tap.h"
#include "fos_nl.h"
#include "fos_util.h"
#include "wirepeer.h"

uint32_t self_id, self_epoch;
struct sockaddr_in self_addr;
uint8_t secret[128];
size_t secret_len;
unsigned int tags_checked, tags_bad;

int read_secret(void)
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

void hmac3(const uint8_t *key, size_t klen, const char *label,
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

uint32_t key_id_of(const uint8_t *key, size_t klen)
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
int siphash24(const uint8_t key[16], const void *msg, size_t len,
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
int siphash_matches_kernel(void)
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

/*
 * Set @m's (@bytes, a header and what follows) seq to @seq and its tag to
 * SipHash-2-4 under @key of the message with the tag zero.
 */
void seal(const uint8_t key[16], void *m, uint32_t bytes, uint64_t seq)
{
	struct w_hdr *h = m;
	uint8_t tag[8];

	h->seq = seq;
	if (!h->sess)
		h->sess = W_SESS_GEN;
	h->tag = 0;
	siphash24(key, m, bytes, tag);
	memcpy(&h->tag, tag, 8);
}

/*
 * The session keys of a handshake (hello_i, hello_r, as sent) under @key:
 * k_i2r and k_r2i are the first 16 bytes of
 * HMAC(key, "fractos v7 key i2r" | hello_i | hello_r), and "... r2i".
 */
void session_keys(const uint8_t *key, size_t klen, const struct w_hello *hi,
		  const struct w_hello *hr, uint8_t i2r[16], uint8_t r2i[16])
{
	uint8_t d[32];

	hmac3(key, klen, "fractos v7 key i2r", hi, hr, d);
	memcpy(i2r, d, 16);
	hmac3(key, klen, "fractos v7 key r2i", hi, hr, d);
	memcpy(r2i, d, 16);
}

/* The key of @p's handshake (*@len bytes): p->key, or the run's secret. */
static const uint8_t *hp_key(const struct hp *p, size_t *len)
{
	*len = p->key ? p->key_len : secret_len;
	return p->key ? p->key : secret;
}

int cm_wait(struct hp *p, enum rdma_cm_event_type want, int ms,
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

void hp_close(struct hp *p)
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

int post_recv(struct hp *p, unsigned int i)
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
int hp_setup_qp(struct hp *p)
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
int hp_open(struct hp *p, const struct sockaddr_in *src)
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

void hello_fill(struct w_hello *h, uint32_t node, uint32_t epoch,
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
 * Connect with p->mine as the hello (set it, and p->key if the handshake is
 * not under the run's secret, after hp_open()).  Return: 0 (accepted:
 * p->acc, and the session keys derived from p->key), a positive refusal
 * reason, or -1.
 */
int hp_connect(struct hp *p)
{
	struct rdma_conn_param cp = {
		.private_data = &p->mine, .private_data_len = sizeof(p->mine),
		.responder_resources = 1, .initiator_depth = 1,
		.retry_count = 7, .rnr_retry_count = 7,
	};
	struct rdma_cm_event ev;
	uint8_t priv[sizeof(struct w_accept)] = {};
	const uint8_t *key;
	size_t len = 0, klen;
	int ret;

	if (rdma_connect(p->id, &cp))
		return -1;
	ret = cm_wait(p, RDMA_CM_EVENT_ESTABLISHED, 10000, &ev, priv, &len);
	if (!ret) {
		if (len < sizeof(p->acc))
			return -1;
		memcpy(&p->acc, priv, sizeof(p->acc));
		/* We are the initiator: we send under k_i2r. */
		key = hp_key(p, &klen);
		session_keys(key, klen, &p->mine, &p->acc.hello, p->tx_key,
			     p->rx_key);
		return 0;
	}
	if (ret == -(int)RDMA_CM_EVENT_REJECTED - 1000 &&
	    len >= sizeof(struct w_reject) &&
	    ((struct w_reject *)priv)->magic == W_MAGIC) {
		p->reason = ((struct w_reject *)priv)->reason;
		p->cookie = ((struct w_reject *)priv)->cookie;
		return p->reason;
	}
	return -1;
}

/* Send @bytes of @msg exactly as they are (seq and tag too) as one SEND. */
int hp_post_raw(struct hp *p, const void *msg, uint32_t bytes)
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

	if (bytes > W_MSG || !p->mr)	/* (no connection: hp_admit() failed) */
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
int hp_post(struct hp *p, const void *msg, uint32_t bytes)
{
	uint8_t m[W_MSG];
	struct w_hdr *h;

	if (bytes < sizeof(struct w_hdr))
		return hp_post_raw(p, msg, bytes);
	if (bytes > sizeof(m))
		return -1;
	memcpy(m, msg, bytes);
	h = (struct w_hdr *)m;
	/* Session fields, unless the caller wrote its own. */
	if (!h->sess) {
		/* The active end's numbered messages wait for the node's first. */
		if (w_numbered(h->type) && !p->peer_gen)
			hp_recv(p, W_CREDIT, 3000, NULL);
		h->esess = p->peer_gen;
		h->sack = p->rx_done;
		if (w_numbered(h->type))
			h->sseq = p->tx_sseq++;
	}
	seal(p->tx_key, m, bytes, p->tx_seq);
	if (hp_post_raw(p, m, bytes))
		return -1;
	p->tx_seq++;
	return 0;
}

int hp_send(struct hp *p, uint8_t type, uint64_t cookie,
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
void hp_check_bound(struct hp *p, const uint8_t *m, uint32_t bytes)
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
		if (ok) {
			p->peer_gen = h.sess;
			if (w_numbered(h.type))
				p->rx_done++;
		}
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
int hp_recv(struct hp *p, uint8_t type, int ms, uint64_t *cookie)
{
	struct timespec t0, t;
	struct ibv_wc wc;

	if (!p->cq)	/* (no connection: hp_admit() failed) */
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
int hp_cut_off(struct hp *p, int ms)
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

/*
 * RDMA READ @len bytes at (@addr, @rkey) of the node's into @dst, on
 * @p's QP.  Return: the completion's status, or -1.
 */
/* One RDMA READ or WRITE of @buf: the completion's status, or -1. */
static int hp_rdma(struct hp *p, void *buf, uint32_t len, uint64_t addr,
		   uint32_t rkey, enum ibv_wr_opcode op)
{
	struct ibv_mr *mr = ibv_reg_mr(p->pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = len };
	struct ibv_send_wr wr = { .wr_id = 777, .sg_list = &sge, .num_sge = 1,
				  .opcode = op,
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

int hp_read(struct hp *p, void *dst, uint32_t len, uint64_t addr,
	    uint32_t rkey)
{
	return hp_rdma(p, dst, len, addr, rkey, IBV_WR_RDMA_READ);
}

int hp_write(struct hp *p, const void *src, uint32_t len, uint64_t addr,
	     uint32_t rkey)
{
	return hp_rdma(p, (void *)src, len, addr, rkey, IBV_WR_RDMA_WRITE);
}

uint64_t fab_stat(int which)
{
	struct fos_nl_reply *r = calloc(1, sizeof(*r));
	uint64_t v = ~0ULL;

	if (r && !fos_nl_request(NULL, FRACTOS_CMD_STATS, 0, NULL, r))
		v = r->stats[which];
	free(r);
	return v;
}

uint64_t node_stat(uint32_t id, int which)
{
	struct fos_nl_node n = {};

	return fos_nl_node_get(id, &n) ? ~0ULL : n.stats[which];
}

void self_view(struct self_view *v)
{
	struct fos_nl_node n = {};

	fos_nl_node_get(self_id, &n);
	v->epoch = n.epoch;
	v->qpn = n.qpn;
	v->state = n.state;
	v->epoch_changes = n.stats[FRACTOS_STAT_EPOCH_CHANGES];
}

int self_same(const struct self_view *a)
{
	struct self_view b;

	self_view(&b);
	return a->epoch == b.epoch && a->qpn == b.qpn &&
	       a->epoch_changes == b.epoch_changes &&
	       b.state == FRACTOS_NODE_UP;
}

/*
 * Accept the node's next connection on @lec as node @node (@epoch), the
 * handshake under @key (@key_len bytes; NULL: the run's secret), kept as
 * p->key (not copied).  Earlier connections' events on @lec are skipped.
 */
int hp_accept(struct hp *p, struct rdma_event_channel *lec, uint32_t node,
	      uint32_t epoch, const uint8_t *key, size_t key_len)
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
	p->key = key;
	p->key_len = key_len;
	key = hp_key(p, &key_len);
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
	hello_fill(&p->acc.hello, node, epoch, key_id_of(key, key_len), 0);
	hmac3(key, key_len, "fractos v7 accept", &p->theirs, &p->acc.hello,
	      p->acc.mac);
	/* We are the responder: we send under k_r2i. */
	session_keys(key, key_len, &p->theirs, &p->acc.hello, p->rx_key,
		     p->tx_key);
	if (rdma_accept(p->id, &cp))
		return -1;
	return cm_wait(p, RDMA_CM_EVENT_ESTABLISHED, 10000, NULL, NULL, NULL);
}

/*
 * hp_accept(), then the node's AUTH must come within 10 s with the MAC
 * under @key; *@p sends heartbeats while it waits (p->keepalive) from then
 * on.  Return: 0, or -1.
 */
int hp_admit(struct hp *p, struct rdma_event_channel *lec, uint32_t node,
	     uint32_t epoch, const uint8_t *key, size_t key_len)
{
	uint8_t msg[W_MSG], mac[32];
	int ret;

	if (hp_accept(p, lec, node, epoch, key, key_len))
		return -1;
	p->keepalive = 1;
	p->payload_out = msg;
	ret = hp_recv(p, W_AUTH, 10000, NULL);
	p->payload_out = NULL;
	key = hp_key(p, &key_len);
	hmac3(key, key_len, "fractos v7 auth", &p->theirs, &p->acc.hello, mac);
	if (ret || memcmp(mac, msg, 32))
		return -1;
	/* As the module does: the AUTH's credit at once (the node's sync). */
	return hp_send(p, W_CREDIT, 0, NULL, 0) ? -1 : 0;
}
