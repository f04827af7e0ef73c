/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small client of the "fractos" generic netlink family for the tests
 * (fabric.c and remote.c here; fosnet.c, remote_node.c and chain_node.c in
 * tests/multinode): any command with any attributes, as a request or a
 * dump, its replies parsed into struct fos_nl_reply and the kernel's
 * answer returned as 0 or -errno.  Link with libnl-genl-3.0.
 *
 * The helpers (fos_nl_node_add() ...) and fos_nl_request(NULL, ...) use one
 * socket of the process, opened on first use; fos_nl_setup() opens it
 * (again): in a child after fork(), or to tell why it cannot be opened.
 * fos_nl_request() also takes a socket of the caller's own (fos_nl_open()),
 * e.g. one opened after setuid().
 */
#ifndef FRACTOS_FOS_NL_H
#define FRACTOS_FOS_NL_H

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>
#include <linux/fractos_netlink.h>

/* A generic netlink socket and the id of the "fractos" family on it. */
struct fos_nl {
	struct nl_sock *sk;
	int family;
};

/* One node of a NODE_LIST reply. */
struct fos_nl_node {
	uint32_t id, epoch, qpn, credits, port;
	uint32_t key_id, prev_key_id;	/* its pair keys, 0: none */
	uint8_t state;
	struct in_addr addr;
	uint64_t stats[__FRACTOS_STAT_MAX];
};

#define FOS_NL_MAX_NODES	64
#define FOS_NL_MAX_LINKS	8

/*
 * The replies to one request: @n counts them, node[] (NODE_LIST) and
 * link[] (LINK_LIST) keep the first ones.
 */
struct fos_nl_reply {
	int n;
	struct fos_nl_node node[FOS_NL_MAX_NODES];
	char link[FOS_NL_MAX_LINKS][64];
	uint8_t link_state[FOS_NL_MAX_LINKS];
	/* STATS */
	uint32_t local_id, local_epoch, port, nodes, links, auth_pairs;
	uint64_t stats[__FRACTOS_STAT_MAX];
	/* PING */
	uint32_t ping_count;
	uint64_t rtt_min, rtt_avg, rtt_max;
};

/* An attribute of a request; a list of them ends with { 0 }. */
struct fos_nl_attr {
	int type;
	int len;
	const void *data;
};

#define FOS_NL_A(t, v) { (t), sizeof(v), &(v) }

/* The socket of the helpers. */
static struct fos_nl fos_nl_default;

static inline void fos_nl_close(struct fos_nl *nl)
{
	if (nl->sk)
		nl_socket_free(nl->sk);
	nl->sk = NULL;
}

/* Open @nl: 0, -EIO without a socket, -ENOENT without the family. */
static inline int fos_nl_open(struct fos_nl *nl)
{
	nl->sk = nl_socket_alloc();
	if (!nl->sk || genl_connect(nl->sk)) {
		fos_nl_close(nl);
		return -EIO;
	}
	nl->family = genl_ctrl_resolve(nl->sk, FRACTOS_GENL_NAME);
	if (nl->family < 0) {
		fos_nl_close(nl);
		return -ENOENT;
	}
	return 0;
}

/* (Re)open the socket of the helpers, as fos_nl_open(). */
static inline int fos_nl_setup(void)
{
	fos_nl_close(&fos_nl_default);
	return fos_nl_open(&fos_nl_default);
}

/* @v = the value of attribute @a (of type @t: u8 ... u64) if there is one. */
#define fos_nl_get(v, a, t) do { if (a) (v) = nla_get_##t(a); } while (0)

static inline void fos_nl_parse_stats(struct nlattr *nest, uint64_t *out)
{
	struct nlattr *tb[FRACTOS_STAT_MAX + 1];
	int i;

	if (!nest || nla_parse_nested(tb, FRACTOS_STAT_MAX, nest, NULL))
		return;
	for (i = 0; i <= FRACTOS_STAT_MAX; i++)
		if (tb[i] && nla_len(tb[i]) == 8)
			out[i] = nla_get_u64(tb[i]);
}

static inline void fos_nl_parse_node(struct nlattr **tb, struct fos_nl_node *n)
{
	fos_nl_get(n->id, tb[FRACTOS_A_NODE_ID], u32);
	if (tb[FRACTOS_A_NODE_ADDR4])
		memcpy(&n->addr, nla_data(tb[FRACTOS_A_NODE_ADDR4]), 4);
	fos_nl_get(n->port, tb[FRACTOS_A_NODE_PORT], u16);
	fos_nl_get(n->state, tb[FRACTOS_A_NODE_STATE], u8);
	fos_nl_get(n->epoch, tb[FRACTOS_A_NODE_EPOCH], u32);
	fos_nl_get(n->qpn, tb[FRACTOS_A_NODE_QPN], u32);
	fos_nl_get(n->credits, tb[FRACTOS_A_NODE_CREDITS], u32);
	fos_nl_get(n->key_id, tb[FRACTOS_A_NODE_KEY_ID], u32);
	fos_nl_get(n->prev_key_id, tb[FRACTOS_A_NODE_PREV_KEY_ID], u32);
	fos_nl_parse_stats(tb[FRACTOS_A_NODE_STATS], n->stats);
}

static inline int fos_nl_valid_cb(struct nl_msg *msg, void *arg)
{
	struct fos_nl_reply *r = arg;
	struct nlattr *tb[FRACTOS_A_MAX + 1];
	struct genlmsghdr *gh = nlmsg_data(nlmsg_hdr(msg));
	int i = r->n;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, FRACTOS_A_MAX, NULL))
		return NL_SKIP;
	r->n++;
	switch (gh->cmd) {
	case FRACTOS_CMD_NODE_LIST:
		if (i < FOS_NL_MAX_NODES)
			fos_nl_parse_node(tb, &r->node[i]);
		break;
	case FRACTOS_CMD_LINK_LIST:
		if (i >= FOS_NL_MAX_LINKS)
			break;
		if (tb[FRACTOS_A_LINK_NAME])
			snprintf(r->link[i], sizeof(r->link[i]), "%s",
				 nla_get_string(tb[FRACTOS_A_LINK_NAME]));
		fos_nl_get(r->link_state[i], tb[FRACTOS_A_LINK_STATE], u8);
		break;
	case FRACTOS_CMD_STATS:
		fos_nl_parse_stats(tb[FRACTOS_A_STATS], r->stats);
		fos_nl_get(r->local_id, tb[FRACTOS_A_LOCAL_NODE_ID], u32);
		fos_nl_get(r->local_epoch, tb[FRACTOS_A_LOCAL_EPOCH], u32);
		fos_nl_get(r->port, tb[FRACTOS_A_LISTEN_PORT], u16);
		fos_nl_get(r->nodes, tb[FRACTOS_A_NODES], u32);
		fos_nl_get(r->links, tb[FRACTOS_A_LINKS], u32);
		fos_nl_get(r->auth_pairs, tb[FRACTOS_A_AUTH_PAIRS], u32);
		break;
	case FRACTOS_CMD_PING:
		fos_nl_get(r->ping_count, tb[FRACTOS_A_PING_COUNT], u32);
		fos_nl_get(r->rtt_min, tb[FRACTOS_A_PING_RTT_MIN_NS], u64);
		fos_nl_get(r->rtt_avg, tb[FRACTOS_A_PING_RTT_AVG_NS], u64);
		fos_nl_get(r->rtt_max, tb[FRACTOS_A_PING_RTT_MAX_NS], u64);
		break;
	}
	return NL_OK;
}

static inline int fos_nl_err_cb(struct sockaddr_nl *nla, struct nlmsgerr *e,
				void *arg)
{
	(void)nla;
	*(int *)arg = e->error;
	return NL_STOP;
}

static inline int fos_nl_done_cb(struct nl_msg *msg, void *arg)
{
	(void)msg;
	*(int *)arg = 0;
	return NL_STOP;
}

/*
 * Send @cmd (a dump if @dump) of the family @family (version @version)
 * with @attrs on @sk; every reply message goes to @valid with @arg.
 * Returns 0 or -errno as the kernel said it (-EIO or -ENOMEM if it could
 * not be sent).  Shared with fos_blk.h (the "fractos_blk" family).
 */
static inline int fos_nl_send(struct nl_sock *sk, int family, int version,
			      int cmd, int dump,
			      const struct fos_nl_attr *attrs,
			      nl_recvmsg_msg_cb_t valid, void *arg)
{
	struct nl_msg *msg;
	struct nl_cb *cb;
	int err, i;

	msg = nlmsg_alloc();
	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!msg || !cb) {
		err = -ENOMEM;
		goto out;
	}
	genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0,
		    dump ? NLM_F_DUMP : 0, cmd, version);
	for (i = 0; attrs && attrs[i].type; i++)
		nla_put(msg, attrs[i].type, attrs[i].len, attrs[i].data);
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, valid, arg);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, fos_nl_done_cb, &err);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, fos_nl_done_cb, &err);
	nl_cb_err(cb, NL_CB_CUSTOM, fos_nl_err_cb, &err);
	err = 1;
	if (nl_send_auto(sk, msg) < 0) {
		err = -EIO;
	} else {
		while (err > 0)
			if (nl_recvmsgs(sk, cb) < 0 && err > 0)
				err = -EIO;
	}
out:
	nlmsg_free(msg);
	nl_cb_put(cb);
	return err;
}

/*
 * Send @cmd (a dump if @dump) with @attrs on @nl, or on the socket of the
 * helpers if @nl is NULL; the replies go into @r if not NULL.  Returns 0
 * or -errno as the kernel said it (-EIO, -ENOENT or -ENOMEM if it could
 * not be sent).
 */
static inline int fos_nl_request(struct fos_nl *nl, int cmd, int dump,
				 const struct fos_nl_attr *attrs,
				 struct fos_nl_reply *r)
{
	struct fos_nl_reply dummy;
	int err;

	if (!nl) {
		nl = &fos_nl_default;
		if (!nl->sk && (err = fos_nl_setup()))
			return err;
	}
	if (!r)
		r = &dummy;
	memset(r, 0, sizeof(*r));
	return fos_nl_send(nl->sk, nl->family, FRACTOS_GENL_VERSION, cmd, dump,
			   attrs, fos_nl_valid_cb, r);
}

static inline int fos_nl_node_add(uint32_t id, struct in_addr addr)
{
	struct fos_nl_attr a[] = { FOS_NL_A(FRACTOS_A_NODE_ID, id),
				   FOS_NL_A(FRACTOS_A_NODE_ADDR4, addr), { 0 } };

	return fos_nl_request(NULL, FRACTOS_CMD_NODE_ADD, 0, a, NULL);
}

static inline int fos_nl_node_del(uint32_t id)
{
	struct fos_nl_attr a[] = { FOS_NL_A(FRACTOS_A_NODE_ID, id), { 0 } };

	return fos_nl_request(NULL, FRACTOS_CMD_NODE_DEL, 0, a, NULL);
}

/* Node @id into @n (left alone on an error); 0 or -errno. */
static inline int fos_nl_node_get(uint32_t id, struct fos_nl_node *n)
{
	struct fos_nl_attr a[] = { FOS_NL_A(FRACTOS_A_NODE_ID, id), { 0 } };
	struct fos_nl_reply r;
	int ret = fos_nl_request(NULL, FRACTOS_CMD_NODE_LIST, 0, a, &r);

	if (!ret && r.n < 1)
		ret = -ENOENT;
	if (!ret)
		*n = r.node[0];
	return ret;
}

/* @count round trips to node @id (one PING request); 0 or -errno. */
static inline int fos_nl_ping(uint32_t id, uint32_t count,
			      struct fos_nl_reply *r)
{
	struct fos_nl_attr a[] = { FOS_NL_A(FRACTOS_A_NODE_ID, id),
				   FOS_NL_A(FRACTOS_A_PING_COUNT, count),
				   { 0 } };

	return fos_nl_request(NULL, FRACTOS_CMD_PING, 0, a, r);
}

/*
 * Wait up to @secs for node @id to be (@up) or not be (!@up) UP, polling
 * every 50 ms; 1 if it is.  @n: the node as last seen.
 */
static inline int fos_nl_wait_state(uint32_t id, int up, double secs,
				    struct fos_nl_node *n)
{
	struct timespec ts;
	double end, now;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	end = ts.tv_sec + ts.tv_nsec / 1e9 + secs;
	do {
		if (!fos_nl_node_get(id, n) &&
		    (n->state == FRACTOS_NODE_UP) == up)
			return 1;
		usleep(50000);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = ts.tv_sec + ts.tv_nsec / 1e9;
	} while (now < end);
	return 0;
}

/* Wait up to @secs for node @id to be UP; 1 if it is. */
static inline int fos_nl_wait_up(uint32_t id, double secs)
{
	struct fos_nl_node n;

	return fos_nl_wait_state(id, 1, secs, &n);
}

/* The IPv4 address of eth0 (or FRACTOS_SELF_ADDR); 1 if found. */
static inline int fos_nl_self_addr(struct in_addr *out)
{
	const char *env = getenv("FRACTOS_SELF_ADDR");
	struct ifaddrs *ifa, *i;
	int found = 0;

	if (env)
		return inet_pton(AF_INET, env, out) == 1;
	if (getifaddrs(&ifa))
		return 0;
	for (i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET ||
		    strcmp(i->ifa_name, "eth0"))
			continue;
		*out = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
		found = 1;
		break;
	}
	freeifaddrs(ifa);
	return found;
}

#endif /* FRACTOS_FOS_NL_H */
