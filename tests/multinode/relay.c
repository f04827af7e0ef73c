// SPDX-License-Identifier: GPL-2.0
/*
 * relay: a man in the middle of one fabric connection, for relay.sh.
 *
 *   relay LISTEN_PORT DST_ADDR DST_PORT INJECT_AFTER_S
 *
 * Waits for one rdma_cm connection request on LISTEN_PORT (node A, which
 * was told that node B is at this host), opens a connection to
 * DST_ADDR:DST_PORT (node B, which was told that node A is at this host)
 * with A's hello as its private data, and answers A with B's accept: the
 * handshake passes through unchanged, and neither end holds a secret the
 * relay lacks.  Then it forwards every message both ways, SEND for SEND,
 * with receive buffers as many and as large as each end announced.
 *
 * On SIGUSR1, or INJECT_AFTER_S seconds after both connections are up,
 * it sends B a message of its own: a PING with the next sequence number B expects from
 * A (it counted them) and a tag it cannot compute (wire version 7), or,
 * to a node of version 6, a plain PING.  It keeps forwarding, and prints
 * what happened as "key=value" lines: relayed_a2b, relayed_b2a, injected,
 * b_cut (B ended the connection within 20 s of the injection).
 * Exit status: 0 when it could relay and inject, 1 otherwise.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>
#include <infiniband/verbs.h>

/* The wire format's structs (hello, accept, header, PING) and fos_now() */
#include "../selftests/wirepeer.h"
#include "../selftests/fos_util.h"

#define MAX_BUFS	255	/* receive buffers a side may announce here */
#define TX_SLOTS	256	/* sends in flight: credits, and the injected */
#define MAX_MSG		8192

/* One side of the relay: its id, QP and buffers. */
struct side {
	const char *name;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *bufs;
	unsigned int nbufs, size;
	uint8_t *tx;		/* TX_SLOTS send buffers */
	struct ibv_mr *tx_mr;
	unsigned long relayed;
	int gone;
};

static struct rdma_event_channel *ec;
static volatile sig_atomic_t inject_now;

static void on_usr1(int sig)
{
	(void)sig;
	inject_now = 1;
}

static _Noreturn void die(const char *what)
{
	fprintf(stderr, "relay: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* The next cm event on @ec (for any id), waiting up to @ms. */
static struct rdma_cm_event *next_event(int ms)
{
	struct pollfd p = { .fd = ec->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&p, 1, ms) != 1 || rdma_get_cm_event(ec, &ev))
		return NULL;
	return ev;
}

/*
 * The next event must be ESTABLISHED with at least @len bytes of private
 * data, copied to @priv; else the relay ends, saying @what failed.
 */
static void established(void *priv, size_t len, const char *what)
{
	struct rdma_cm_event *ev = next_event(10000);

	if (!ev || ev->event != RDMA_CM_EVENT_ESTABLISHED ||
	    ev->param.conn.private_data_len < len)
		die(what);
	if (len)
		memcpy(priv, ev->param.conn.private_data, len);
	rdma_ack_cm_event(ev);
}

static int side_post_recv(struct side *s, unsigned int i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(s->bufs + (size_t)i * s->size),
		.length = s->size, .lkey = s->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(s->id->qp, &wr, &bad);
}

/* QP, CQ and @nbufs receive buffers of @size bytes, all posted. */
static void side_setup(struct side *s, unsigned int nbufs, unsigned int size)
{
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = TX_SLOTS, .max_recv_wr = nbufs,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	unsigned int i;

	s->nbufs = nbufs;
	s->size = size;
	s->pd = ibv_alloc_pd(s->id->verbs);
	s->cq = s->pd ? ibv_create_cq(s->id->verbs, nbufs + TX_SLOTS, NULL,
				      NULL, 0) : NULL;
	if (!s->cq)
		die("pd/cq");
	qa.send_cq = qa.recv_cq = s->cq;
	if (rdma_create_qp(s->id, s->pd, &qa))
		die("qp");
	s->bufs = calloc(nbufs, size);
	s->tx = calloc(TX_SLOTS, MAX_MSG);
	if (!s->bufs || !s->tx)
		die("buffers");
	s->mr = ibv_reg_mr(s->pd, s->bufs, (size_t)nbufs * size,
			   IBV_ACCESS_LOCAL_WRITE);
	s->tx_mr = ibv_reg_mr(s->pd, s->tx, (size_t)TX_SLOTS * MAX_MSG, 0);
	if (!s->mr || !s->tx_mr)
		die("mr");
	for (i = 0; i < nbufs; i++)
		if (side_post_recv(s, i))
			die("post_recv");
}

/*
 * Send @len bytes of @msg on @s, copied into send slot @slot: a forwarded
 * message takes slot (its number % (TX_SLOTS - 1)), which is free again
 * long before (no end has more than MAX_BUFS messages in flight); the
 * injected one takes the last.
 */
static int side_send(struct side *s, unsigned int slot, const void *msg,
		     uint32_t len)
{
	uint8_t *b = s->tx + (size_t)slot * MAX_MSG;
	struct ibv_sge sge = { .addr = (uintptr_t)b, .length = len,
			       .lkey = s->tx_mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1u << 31, .sg_list = &sge,
				  .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;

	if (len > MAX_MSG)
		return -1;
	memcpy(b, msg, len);
	return ibv_post_send(s->id->qp, &wr, &bad);
}

/* Forward what @from received to @to; 0, or -1 once a side is gone. */
static int pump(struct side *from, struct side *to)
{
	struct ibv_wc wc[16];
	int n, i;

	n = ibv_poll_cq(from->cq, 16, wc);
	if (n < 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS) {
			from->gone = 1;
			return -1;
		}
		if (wc[i].opcode != IBV_WC_RECV)
			continue;
		if (side_send(to, from->relayed % (TX_SLOTS - 1),
			      from->bufs + (size_t)wc[i].wr_id * from->size,
			      wc[i].byte_len))
			return -1;
		from->relayed++;
		if (side_post_recv(from, (unsigned int)wc[i].wr_id))
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in lsa = { .sin_family = AF_INET }, dst = lsa;
	struct side a = { .name = "a" }, b = { .name = "b" };
	struct w_hello hello;
	struct w_accept accept_b;
	struct rdma_conn_param cp = {};
	struct rdma_cm_event *ev;
	struct rdma_cm_id *lid;
	double up_at, inject_after, cut_by = 0;
	uint16_t credits_a, credits_b;
	uint32_t size_a, size_b;
	int injected = 0, tried = 0, b_cut = 0;

	if (argc != 5 || inet_pton(AF_INET, argv[2], &dst.sin_addr) != 1) {
		fprintf(stderr, "usage: relay LISTEN_PORT DST_ADDR DST_PORT INJECT_AFTER_S\n");
		return 2;
	}
	lsa.sin_port = htons(atoi(argv[1]));
	dst.sin_port = htons(atoi(argv[3]));
	inject_after = atof(argv[4]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGUSR1, on_usr1);

	ec = rdma_create_event_channel();
	if (!ec || rdma_create_id(ec, &lid, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(lid, (struct sockaddr *)&lsa) || rdma_listen(lid, 4))
		die("listen");

	/* A's request: its hello */
	while ((ev = next_event(300000)) &&
	       ev->event != RDMA_CM_EVENT_CONNECT_REQUEST)
		rdma_ack_cm_event(ev);
	if (!ev || ev->param.conn.private_data_len < sizeof(hello))
		die("no connection request");
	a.id = ev->id;
	memcpy(&hello, ev->param.conn.private_data, sizeof(hello));
	cp.responder_resources = ev->param.conn.responder_resources;
	cp.initiator_depth = ev->param.conn.initiator_depth;
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	rdma_ack_cm_event(ev);
	credits_a = hello.credits;
	size_a = hello.msg_size;
	if (!credits_a || credits_a > MAX_BUFS || size_a > MAX_MSG)
		die("hello");

	/* To B as A, with A's hello; B's messages are A's to receive */
	if (rdma_create_id(ec, &b.id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(b.id, NULL, (struct sockaddr *)&dst, 2000))
		die("resolve");
	while ((ev = next_event(5000)) && ev->id == b.id &&
	       ev->event == RDMA_CM_EVENT_ADDR_RESOLVED) {
		rdma_ack_cm_event(ev);
		if (rdma_resolve_route(b.id, 2000))
			die("route");
	}
	if (!ev || ev->event != RDMA_CM_EVENT_ROUTE_RESOLVED)
		die("route resolution");
	rdma_ack_cm_event(ev);
	side_setup(&b, credits_a, size_a);
	cp.private_data = &hello;
	cp.private_data_len = sizeof(hello);
	if (rdma_connect(b.id, &cp))
		die("connect to B");
	established(&accept_b, sizeof(accept_b), "B's accept");
	credits_b = accept_b.hello.credits;
	size_b = accept_b.hello.msg_size;
	if (!credits_b || credits_b > MAX_BUFS || size_b > MAX_MSG)
		die("B's hello");

	/* A gets B's accept; A's messages are B's to receive */
	side_setup(&a, credits_b, size_b);
	cp.private_data = &accept_b;
	cp.private_data_len = sizeof(accept_b);
	if (rdma_accept(a.id, &cp))
		die("accept A");
	established(NULL, 0, "A's establishment");
	printf("up=1 version=%u credits_a=%u credits_b=%u\n", hello.version,
	       credits_a, credits_b);
	up_at = fos_now();

	while (!a.gone && !b.gone) {
		if (pump(&a, &b) || pump(&b, &a))
			break;
		while ((ev = next_event(0))) {
			if (ev->event == RDMA_CM_EVENT_DISCONNECTED)
				(ev->id == b.id ? &b : &a)->gone = 1;
			rdma_ack_cm_event(ev);
		}
		if (!tried && (inject_now || fos_now() - up_at >= inject_after)) {
			/* A PING as A's next message to B, with a made-up tag */
			struct {
				struct w_hdr h;
				struct w_ping p;
			} m = {
				.h.version = hello.version,
				.h.type = W_PING,
				.h.len = sizeof(m.p),
				.h.seq = a.relayed,
				/* (version 10: a session, or the header is bad) */
				.h.sess = W_SESS_GEN,
				.h.tag = ((uint64_t)rand() << 32) | rand(),
			};

			if (hello.version >= 7) {
				injected = !side_send(&b, TX_SLOTS - 1, &m, sizeof(m));
			} else {
				/* version 6: a 16-byte header, no seq or tag */
				uint8_t v6[16 + sizeof(m.p)];

				memcpy(v6, &m.h, 16);
				memcpy(v6 + 16, &m.p, sizeof(m.p));
				injected = !side_send(&b, TX_SLOTS - 1, v6, sizeof(v6));
			}
			printf("injected=%d seq=%llu\n", injected,
			       (unsigned long long)m.h.seq);
			tried = 1;
			cut_by = fos_now() + 20;
		}
		if (tried && fos_now() > cut_by)
			break;
		usleep(1000);
	}
	b_cut = injected && b.gone && fos_now() <= cut_by;
	printf("relayed_a2b=%lu relayed_b2a=%lu injected=%d b_cut=%d\n",
	       a.relayed, b.relayed, injected, b_cut);
	rdma_disconnect(a.id);
	rdma_disconnect(b.id);
	return injected ? 0 : 1;
}
