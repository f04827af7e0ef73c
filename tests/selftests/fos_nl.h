/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Minimal "fractos" generic netlink helpers for tests that configure peers
 * (remote.c here, tests/multinode/remote_node.c): NODE_ADD, NODE_DEL and
 * a node's state, stats and epoch.  Link with libnl-genl-3.0.
 */
#ifndef FRACTOS_FOS_NL_H
#define FRACTOS_FOS_NL_H

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>
#include <linux/fractos_netlink.h>

struct fos_nl_node {
	uint32_t id, epoch;
	uint8_t state;
	uint64_t stats[__FRACTOS_STAT_MAX];
};

static struct nl_sock *fos_nl_sk;
static int fos_nl_family;

static int fos_nl_valid_cb(struct nl_msg *msg, void *arg)
{
	struct fos_nl_node *n = arg;
	struct nlattr *tb[FRACTOS_A_MAX + 1], *st[FRACTOS_STAT_MAX + 1];
	int i;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, FRACTOS_A_MAX, NULL))
		return NL_SKIP;
	if (tb[FRACTOS_A_NODE_ID])
		n->id = nla_get_u32(tb[FRACTOS_A_NODE_ID]);
	if (tb[FRACTOS_A_NODE_STATE])
		n->state = nla_get_u8(tb[FRACTOS_A_NODE_STATE]);
	if (tb[FRACTOS_A_NODE_EPOCH])
		n->epoch = nla_get_u32(tb[FRACTOS_A_NODE_EPOCH]);
	if (tb[FRACTOS_A_NODE_STATS] &&
	    !nla_parse_nested(st, FRACTOS_STAT_MAX, tb[FRACTOS_A_NODE_STATS],
			      NULL))
		for (i = 0; i <= FRACTOS_STAT_MAX; i++)
			if (st[i] && nla_len(st[i]) == 8)
				n->stats[i] = nla_get_u64(st[i]);
	return NL_OK;
}

static int fos_nl_err_cb(struct sockaddr_nl *nla, struct nlmsgerr *e,
			 void *arg)
{
	(void)nla;
	*(int *)arg = e->error;
	return NL_STOP;
}

static int fos_nl_done_cb(struct nl_msg *msg, void *arg)
{
	(void)msg;
	*(int *)arg = 0;
	return NL_STOP;
}

/* Send @cmd with a node id (and an IPv4 address if @addr); 0 or -errno. */
static int fos_nl_request(int cmd, uint32_t id, const struct in_addr *addr,
			  struct fos_nl_node *out)
{
	struct fos_nl_node dummy;
	struct nl_msg *msg;
	struct nl_cb *cb;
	int err = 1;

	if (!fos_nl_sk) {
		fos_nl_sk = nl_socket_alloc();
		if (!fos_nl_sk || genl_connect(fos_nl_sk))
			return -EIO;
		fos_nl_family = genl_ctrl_resolve(fos_nl_sk, FRACTOS_GENL_NAME);
		if (fos_nl_family < 0)
			return -ENOENT;
	}
	if (!out)
		out = &dummy;
	memset(out, 0, sizeof(*out));
	msg = nlmsg_alloc();
	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!msg || !cb)
		return -ENOMEM;
	genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, fos_nl_family, 0, 0, cmd,
		    FRACTOS_GENL_VERSION);
	nla_put_u32(msg, FRACTOS_A_NODE_ID, id);
	if (addr)
		nla_put(msg, FRACTOS_A_NODE_ADDR4, sizeof(*addr), addr);
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, fos_nl_valid_cb, out);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, fos_nl_done_cb, &err);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, fos_nl_done_cb, &err);
	nl_cb_err(cb, NL_CB_CUSTOM, fos_nl_err_cb, &err);
	if (nl_send_auto(fos_nl_sk, msg) < 0) {
		err = -EIO;
	} else {
		while (err > 0)
			if (nl_recvmsgs(fos_nl_sk, cb) < 0 && err > 0)
				err = -EIO;
	}
	nlmsg_free(msg);
	nl_cb_put(cb);
	return err;
}

static inline int fos_nl_node_add(uint32_t id, struct in_addr addr)
{
	return fos_nl_request(FRACTOS_CMD_NODE_ADD, id, &addr, NULL);
}

static inline int fos_nl_node_del(uint32_t id)
{
	return fos_nl_request(FRACTOS_CMD_NODE_DEL, id, NULL, NULL);
}

static inline int fos_nl_node_get(uint32_t id, struct fos_nl_node *n)
{
	return fos_nl_request(FRACTOS_CMD_NODE_LIST, id, NULL, n);
}

/* Wait up to @secs for node @id to be UP; 1 if it is. */
static inline int fos_nl_wait_up(uint32_t id, double secs)
{
	struct fos_nl_node n;
	struct timespec ts;
	double end, now;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	end = ts.tv_sec + ts.tv_nsec / 1e9 + secs;
	do {
		if (!fos_nl_node_get(id, &n) && n.state == FRACTOS_NODE_UP)
			return 1;
		usleep(50000);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = ts.tv_sec + ts.tv_nsec / 1e9;
	} while (now < end);
	return 0;
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
