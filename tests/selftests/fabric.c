// SPDX-License-Identifier: GPL-2.0
/*
 * fabric: the kernel-to-kernel RDMA fabric inside one guest, over the
 * "fractos" generic netlink family.  The node is configured as its own
 * peer at its eth0 address (rxe loopback), so it connects to itself:
 * connection setup, PING round trips, heartbeats, NODE_LIST, a link flap
 * (rxe0 removed and re-added: ib_client remove/add and reconnect) and
 * teardown.  Also: permission and attribute errors, and the refusal of a
 * connection from a node that is not configured.
 *
 * Environment: FRACTOS_SELF_ADDR overrides the address (IPv4 dotted quad);
 * FRACTOS_NO_FLAP=1 skips the link flap.
 */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>
#include <linux/fractos_netlink.h>
#include "tap.h"
#include "fos_nl.h"

static struct nl_sock *sk;
static int family;

struct node {
	uint32_t id, epoch, qpn, credits, port;
	uint8_t state;
	struct in_addr addr;
	uint64_t stats[__FRACTOS_STAT_MAX];
};

struct reply {
	int n;			/* messages seen */
	struct node node[8];
	char link[8][64];
	uint8_t link_state[8];
	uint32_t local_id, local_epoch, port, nodes, links;
	uint64_t stats[__FRACTOS_STAT_MAX];
	uint32_t ping_count;
	uint64_t rtt_min, rtt_avg, rtt_max;
};

static void parse_stats(struct nlattr *nest, uint64_t *out)
{
	struct nlattr *tb[FRACTOS_STAT_MAX + 1];
	int i;

	if (!nest || nla_parse_nested(tb, FRACTOS_STAT_MAX, nest, NULL))
		return;
	for (i = 0; i <= FRACTOS_STAT_MAX; i++)
		if (tb[i] && nla_len(tb[i]) == 8)
			out[i] = nla_get_u64(tb[i]);
}

static int valid_cb(struct nl_msg *msg, void *arg)
{
	struct reply *r = arg;
	struct nlattr *tb[FRACTOS_A_MAX + 1];
	struct genlmsghdr *gh = nlmsg_data(nlmsg_hdr(msg));
	int i = r->n < 8 ? r->n : 7;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, FRACTOS_A_MAX, NULL))
		return NL_SKIP;
	r->n++;
	switch (gh->cmd) {
	case FRACTOS_CMD_NODE_LIST: {
		struct node *n = &r->node[i];

		if (tb[FRACTOS_A_NODE_ID])
			n->id = nla_get_u32(tb[FRACTOS_A_NODE_ID]);
		if (tb[FRACTOS_A_NODE_ADDR4])
			memcpy(&n->addr, nla_data(tb[FRACTOS_A_NODE_ADDR4]), 4);
		if (tb[FRACTOS_A_NODE_PORT])
			n->port = nla_get_u16(tb[FRACTOS_A_NODE_PORT]);
		if (tb[FRACTOS_A_NODE_STATE])
			n->state = nla_get_u8(tb[FRACTOS_A_NODE_STATE]);
		if (tb[FRACTOS_A_NODE_EPOCH])
			n->epoch = nla_get_u32(tb[FRACTOS_A_NODE_EPOCH]);
		if (tb[FRACTOS_A_NODE_QPN])
			n->qpn = nla_get_u32(tb[FRACTOS_A_NODE_QPN]);
		if (tb[FRACTOS_A_NODE_CREDITS])
			n->credits = nla_get_u32(tb[FRACTOS_A_NODE_CREDITS]);
		parse_stats(tb[FRACTOS_A_NODE_STATS], n->stats);
		break;
	}
	case FRACTOS_CMD_LINK_LIST:
		if (tb[FRACTOS_A_LINK_NAME])
			snprintf(r->link[i], sizeof(r->link[i]), "%s",
				 nla_get_string(tb[FRACTOS_A_LINK_NAME]));
		if (tb[FRACTOS_A_LINK_STATE])
			r->link_state[i] = nla_get_u8(tb[FRACTOS_A_LINK_STATE]);
		break;
	case FRACTOS_CMD_STATS:
		if (tb[FRACTOS_A_LOCAL_NODE_ID])
			r->local_id = nla_get_u32(tb[FRACTOS_A_LOCAL_NODE_ID]);
		if (tb[FRACTOS_A_LOCAL_EPOCH])
			r->local_epoch = nla_get_u32(tb[FRACTOS_A_LOCAL_EPOCH]);
		if (tb[FRACTOS_A_LISTEN_PORT])
			r->port = nla_get_u16(tb[FRACTOS_A_LISTEN_PORT]);
		if (tb[FRACTOS_A_NODES])
			r->nodes = nla_get_u32(tb[FRACTOS_A_NODES]);
		if (tb[FRACTOS_A_LINKS])
			r->links = nla_get_u32(tb[FRACTOS_A_LINKS]);
		parse_stats(tb[FRACTOS_A_STATS], r->stats);
		break;
	case FRACTOS_CMD_PING:
		if (tb[FRACTOS_A_PING_COUNT])
			r->ping_count = nla_get_u32(tb[FRACTOS_A_PING_COUNT]);
		if (tb[FRACTOS_A_PING_RTT_MIN_NS])
			r->rtt_min = nla_get_u64(tb[FRACTOS_A_PING_RTT_MIN_NS]);
		if (tb[FRACTOS_A_PING_RTT_AVG_NS])
			r->rtt_avg = nla_get_u64(tb[FRACTOS_A_PING_RTT_AVG_NS]);
		if (tb[FRACTOS_A_PING_RTT_MAX_NS])
			r->rtt_max = nla_get_u64(tb[FRACTOS_A_PING_RTT_MAX_NS]);
		break;
	}
	return NL_OK;
}

static int err_cb(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	(void)nla;
	*(int *)arg = e->error;
	return NL_STOP;
}

static int done_cb(struct nl_msg *msg, void *arg)
{
	(void)msg;
	*(int *)arg = 0;
	return NL_STOP;
}

/* Attributes of a request: up to 8 (type, len, data). */
struct attr {
	int type;
	int len;
	const void *data;
};

static struct nl_sock *nl_open(void)
{
	struct nl_sock *s = nl_socket_alloc();

	if (!s || genl_connect(s))
		return NULL;
	return s;
}

/*
 * Send @cmd with @attrs on @s; collect replies in @r.  Returns 0 or
 * -errno as the kernel said it.
 */
static int request(struct nl_sock *s, int cmd, int dump,
		   const struct attr *attrs, struct reply *r)
{
	struct reply dummy;
	struct nl_msg *msg;
	struct nl_cb *cb;
	int err = 1, i;

	if (!r)
		r = &dummy;
	memset(r, 0, sizeof(*r));
	msg = nlmsg_alloc();
	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!msg || !cb)
		tap_bail("out of memory");
	genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0,
		    dump ? NLM_F_DUMP : 0, cmd, FRACTOS_GENL_VERSION);
	for (i = 0; attrs && attrs[i].type; i++)
		nla_put(msg, attrs[i].type, attrs[i].len, attrs[i].data);
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, valid_cb, r);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, done_cb, &err);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, done_cb, &err);
	nl_cb_err(cb, NL_CB_CUSTOM, err_cb, &err);
	if (nl_send_auto(s, msg) < 0) {
		err = -EIO;
	} else {
		while (err > 0)
			if (nl_recvmsgs(s, cb) < 0 && err > 0)
				err = -EIO;
	}
	nlmsg_free(msg);
	nl_cb_put(cb);
	return err;
}

#define A(t, v) { (t), sizeof(v), &(v) }

static int node_add(uint32_t id, struct in_addr addr)
{
	struct attr a[] = { A(FRACTOS_A_NODE_ID, id),
			    A(FRACTOS_A_NODE_ADDR4, addr), { 0 } };

	return request(sk, FRACTOS_CMD_NODE_ADD, 0, a, NULL);
}

static int node_del(uint32_t id)
{
	struct attr a[] = { A(FRACTOS_A_NODE_ID, id), { 0 } };

	return request(sk, FRACTOS_CMD_NODE_DEL, 0, a, NULL);
}

static int node_get(uint32_t id, struct node *n)
{
	struct attr a[] = { A(FRACTOS_A_NODE_ID, id), { 0 } };
	static struct reply r;
	int ret = request(sk, FRACTOS_CMD_NODE_LIST, 0, a, &r);

	if (!ret)
		*n = r.node[0];
	return ret;
}

static int ping(uint32_t id, uint32_t count, struct reply *r)
{
	struct attr a[] = { A(FRACTOS_A_NODE_ID, id),
			    A(FRACTOS_A_PING_COUNT, count), { 0 } };

	return request(sk, FRACTOS_CMD_PING, 0, a, r);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Wait up to @secs for node @id to be (@up) or not be (!@up) UP. */
static int wait_state(uint32_t id, int up, double secs, struct node *n)
{
	double end = now() + secs;

	do {
		if (!node_get(id, n) && (n->state == FRACTOS_NODE_UP) == up)
			return 1;
		usleep(50000);
	} while (now() < end);
	return 0;
}

static unsigned long read_ulong(const char *path)
{
	unsigned long v = ~0UL;
	FILE *f = fopen(path, "r");

	if (f) {
		if (fscanf(f, "%lu", &v) != 1)
			v = ~0UL;
		fclose(f);
	}
	return v;
}

/* In a child without privileges: the admin commands must fail EPERM. */
static int unprivileged(uint32_t id, struct in_addr addr)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		tap_bail("fork");
	if (!pid) {
		struct attr a[] = { A(FRACTOS_A_NODE_ID, id),
				    A(FRACTOS_A_NODE_ADDR4, addr), { 0 } };
		struct nl_sock *s;
		int bad = 0;

		if (setgid(65534) || setuid(65534))
			_exit(100);
		s = nl_open();
		if (!s)
			_exit(101);
		if (request(s, FRACTOS_CMD_NODE_ADD, 0, a, NULL) != -EPERM)
			bad |= 1;
		if (request(s, FRACTOS_CMD_NODE_DEL, 0, a, NULL) != -EPERM)
			bad |= 2;
		if (request(s, FRACTOS_CMD_PING, 0, a, NULL) != -EPERM)
			bad |= 4;
		/* Reading is allowed. */
		if (request(s, FRACTOS_CMD_STATS, 0, NULL, NULL))
			bad |= 8;
		_exit(bad);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

int main(void)
{
	struct in_addr addr;
	struct reply r;
	struct node n;
	uint32_t id, epoch, other, zero = 0, big = 100000;
	uint16_t port0 = 0;
	uint8_t five[5] = { 10, 0, 2, 15, 0 };
	uint8_t six[16] = { 0 };
	unsigned long live;
	int ret, ok;

	if (access("/sys/class/misc/fractos", F_OK)) {
		printf("1..0 # SKIP fractos.ko is not loaded\n");
		return 0;
	}
	if (!fos_nl_self_addr(&addr)) {
		printf("1..0 # SKIP no IPv4 address on eth0\n");
		return 0;
	}
	tap_plan(54);
	sk = nl_open();
	if (!sk)
		tap_bail("generic netlink socket");
	family = genl_ctrl_resolve(sk, FRACTOS_GENL_NAME);
	if (!tap_ok(family > 0, "generic netlink family \"fractos\" exists"))
		tap_bail("no fractos family");
	id = read_ulong("/sys/module/fractos/parameters/node_id");
	epoch = read_ulong("/sys/module/fractos/parameters/epoch");
	other = id + 1;

	/* Introspection */
	ret = request(sk, FRACTOS_CMD_STATS, 0, NULL, &r);
	tap_eq(ret, 0, "STATS");
	tap_ok(r.local_id == id && r.local_epoch == epoch,
	       "STATS reports node %u epoch %#x", r.local_id, r.local_epoch);
	tap_eq(r.port, FRACTOS_FABRIC_PORT, "listening on the default port");
	ret = request(sk, FRACTOS_CMD_LINK_LIST, 1, NULL, &r);
	tap_ok(!ret && r.n >= 1, "LINK_LIST shows %d RDMA device(s) (%s)",
	       r.n, r.n ? r.link[0] : "none");
	tap_eq(r.n ? r.link_state[0] : 0, 4, "port 1 is ACTIVE");
	ret = request(sk, FRACTOS_CMD_NODE_LIST, 1, NULL, &r);
	tap_ok(!ret && r.n == 0, "NODE_LIST is empty to begin with");

	/* Permissions */
	ret = unprivileged(id, addr);
	tap_eq(ret, 0, "unprivileged: NODE_ADD, NODE_DEL, PING fail EPERM, STATS works");

	/* Attribute errors */
	{
		struct attr noaddr[] = { A(FRACTOS_A_NODE_ID, id), { 0 } };
		struct attr both[] = { A(FRACTOS_A_NODE_ID, id),
				       A(FRACTOS_A_NODE_ADDR4, addr),
				       A(FRACTOS_A_NODE_ADDR6, six), { 0 } };
		struct attr badlen[] = { A(FRACTOS_A_NODE_ID, id),
					 A(FRACTOS_A_NODE_ADDR4, five), { 0 } };
		struct attr outonly[] = { A(FRACTOS_A_NODE_ID, id),
					  A(FRACTOS_A_NODE_ADDR4, addr),
					  A(FRACTOS_A_NODE_QPN, id), { 0 } };
		struct attr port[] = { A(FRACTOS_A_NODE_ID, id),
				       A(FRACTOS_A_NODE_ADDR4, addr),
				       A(FRACTOS_A_NODE_PORT, port0), { 0 } };
		struct attr noid[] = { A(FRACTOS_A_NODE_ADDR4, addr), { 0 } };
		struct attr unknown[] = { A(FRACTOS_A_NODE_ID, id),
					  A(FRACTOS_A_NODE_ADDR4, addr),
					  { __FRACTOS_A_MAX + 3, 4, &id }, { 0 } };
		struct attr ping0[] = { A(FRACTOS_A_NODE_ID, id),
					A(FRACTOS_A_PING_COUNT, zero), { 0 } };
		struct attr pingbig[] = { A(FRACTOS_A_NODE_ID, id),
					  A(FRACTOS_A_PING_COUNT, big), { 0 } };

		tap_eq(request(sk, FRACTOS_CMD_NODE_ADD, 0, noaddr, NULL), -EINVAL,
		       "NODE_ADD without an address: EINVAL");
		tap_eq(request(sk, FRACTOS_CMD_NODE_ADD, 0, both, NULL), -EINVAL,
		       "NODE_ADD with ADDR4 and ADDR6: EINVAL");
		ret = request(sk, FRACTOS_CMD_NODE_ADD, 0, badlen, NULL);
		tap_ok(ret == -EINVAL || ret == -ERANGE,
		       "NODE_ADD with a 5-byte ADDR4: EINVAL or ERANGE (%d)", ret);
		tap_eq(request(sk, FRACTOS_CMD_NODE_ADD, 0, outonly, NULL), -EINVAL,
		       "NODE_ADD with an output-only attribute: EINVAL");
		tap_eq(request(sk, FRACTOS_CMD_NODE_ADD, 0, port, NULL), -ERANGE,
		       "NODE_ADD with port 0: ERANGE");
		tap_eq(request(sk, FRACTOS_CMD_NODE_ADD, 0, noid, NULL), -EINVAL,
		       "NODE_ADD without a node id: EINVAL");
		tap_eq(request(sk, FRACTOS_CMD_NODE_ADD, 0, unknown, NULL), -EINVAL,
		       "NODE_ADD with an unknown attribute: EINVAL");
		tap_eq(request(sk, FRACTOS_CMD_PING, 0, ping0, NULL), -ERANGE,
		       "PING with count 0: ERANGE");
		tap_eq(request(sk, FRACTOS_CMD_PING, 0, pingbig, NULL), -ERANGE,
		       "PING with count 100000: ERANGE");
	}
	tap_eq(node_del(id), -ENOENT, "NODE_DEL of an unknown node: ENOENT");
	tap_eq(ping(id, 1, NULL), -ENOENT, "PING of an unknown node: ENOENT");
	tap_eq(node_get(id, &n), -ENOENT, "NODE_LIST of an unknown node: ENOENT");

	/*
	 * A connection from a node that is not configured: configure node
	 * id+1 at our own address.  We connect (smaller id) and say we are
	 * node id, which our listener does not know.
	 */
	request(sk, FRACTOS_CMD_STATS, 0, NULL, &r);
	{
		uint64_t refused0 = r.stats[FRACTOS_STAT_REFUSED];
		double end = now() + 20;

		tap_eq(node_add(other, addr), 0, "NODE_ADD node %u (misconfigured)", other);
		do {
			usleep(100000);
			request(sk, FRACTOS_CMD_STATS, 0, NULL, &r);
		} while (r.stats[FRACTOS_STAT_REFUSED] == refused0 && now() < end);
		tap_ok(r.stats[FRACTOS_STAT_REFUSED] > refused0,
		       "our listener refuses the unconfigured node (%llu refusals)",
		       (unsigned long long)r.stats[FRACTOS_STAT_REFUSED]);
		/*
		 * The refusal is counted by our listener before the
		 * rejection reaches the connecting side: wait for that too.
		 */
		do {
			ret = node_get(other, &n);
			if (ret || n.state == FRACTOS_NODE_UP ||
			    n.stats[FRACTOS_STAT_CONNECT_ERRORS] >= 1)
				break;
			usleep(100000);
		} while (now() < end);
		tap_ok(!ret && n.state != FRACTOS_NODE_UP &&
		       n.stats[FRACTOS_STAT_CONNECT_ERRORS] >= 1,
		       "node %u never comes up (state %u, %llu failed attempts)",
		       other, n.state,
		       (unsigned long long)n.stats[FRACTOS_STAT_CONNECT_ERRORS]);
		tap_eq(node_del(other), 0, "NODE_DEL node %u", other);
	}

	/* Ourselves, over rxe loopback */
	tap_eq(node_add(id, addr), 0, "NODE_ADD node %u at %s (this node)", id,
	       inet_ntoa(addr));
	tap_eq(node_add(id, addr), -EEXIST, "NODE_ADD again: EEXIST");
	ok = wait_state(id, 1, 30, &n);
	tap_ok(ok, "node %u is UP", id);
	if (!ok)
		tap_diag("state %u, connect errors %llu", n.state,
			 (unsigned long long)n.stats[FRACTOS_STAT_CONNECT_ERRORS]);
	ret = request(sk, FRACTOS_CMD_NODE_LIST, 1, NULL, &r);
	n = r.node[0];
	tap_ok(!ret && r.n == 1 && n.id == id &&
	       n.addr.s_addr == addr.s_addr && n.port == FRACTOS_FABRIC_PORT,
	       "NODE_LIST dump: one node, id %u, %s port %u", n.id,
	       inet_ntoa(n.addr), n.port);
	tap_eq(n.epoch, epoch, "its epoch is ours");
	tap_ok(n.qpn != 0 && n.credits > 0, "qp %u, %u credits", n.qpn, n.credits);
	tap_ok(n.stats[FRACTOS_STAT_CONNECTS] >= 1, "%llu connection(s) established",
	       (unsigned long long)n.stats[FRACTOS_STAT_CONNECTS]);

	ret = ping(id, 200, &r);
	tap_eq(ret, 0, "PING x200");
	tap_eq(r.ping_count, 200, "200 replies");
	tap_ok(r.rtt_min > 0 && r.rtt_min <= r.rtt_avg && r.rtt_avg <= r.rtt_max,
	       "rtt min/avg/max %.1f/%.1f/%.1f us", r.rtt_min / 1e3,
	       r.rtt_avg / 1e3, r.rtt_max / 1e3);
	node_get(id, &n);
	tap_ok(n.stats[FRACTOS_STAT_PINGS_TX] >= 200 &&
	       n.stats[FRACTOS_STAT_PINGS_RX] >= 200 &&
	       n.stats[FRACTOS_STAT_PONGS_RX] >= 200,
	       "counters: %llu pings sent, %llu answered, %llu pongs",
	       (unsigned long long)n.stats[FRACTOS_STAT_PINGS_TX],
	       (unsigned long long)n.stats[FRACTOS_STAT_PINGS_RX],
	       (unsigned long long)n.stats[FRACTOS_STAT_PONGS_RX]);
	/*
	 * Running short of credits (or of free send buffers, which counts
	 * the same) is flow control doing its job when the host is loaded;
	 * the replies then wait on the backlog.  Report it, do not fail.
	 */
	tap_ok(n.stats[FRACTOS_STAT_PROTO_ERRORS] == 0, "no protocol errors");
	tap_diag("sends that waited for a credit: %llu",
		 (unsigned long long)n.stats[FRACTOS_STAT_NO_CREDITS]);

	/* Heartbeats keep an idle connection up. */
	{
		uint64_t rx0 = n.stats[FRACTOS_STAT_RX_MSGS];

		sleep(3);
		node_get(id, &n);
		tap_ok(n.state == FRACTOS_NODE_UP &&
		       n.stats[FRACTOS_STAT_RX_MSGS] > rx0 &&
		       n.stats[FRACTOS_STAT_HB_TIMEOUTS] == 0,
		       "idle 3 s: still UP, %llu messages (heartbeats) received",
		       (unsigned long long)(n.stats[FRACTOS_STAT_RX_MSGS] - rx0));
	}

	/* Link flap: remove rxe0 and add it back. */
	if (getenv("FRACTOS_NO_FLAP") || access("/sys/class/infiniband/rxe0", F_OK) ||
	    system("command -v rdma >/dev/null")) {
		tap_skip("link flap: no rxe0 or no rdma tool");
		tap_skip("link flap");
		tap_skip("link flap");
		tap_skip("link flap");
		tap_skip("link flap");
	} else {
		uint64_t disc0 = n.stats[FRACTOS_STAT_DISCONNECTS];

		ret = system("rdma link del rxe0");
		tap_eq(ret, 0, "rdma link del rxe0");
		ok = wait_state(id, 0, 10, &n);
		request(sk, FRACTOS_CMD_LINK_LIST, 1, NULL, &r);
		tap_ok(ok && r.n == 0 &&
		       read_ulong("/sys/class/misc/fractos/live/conns") == 0,
		       "device gone: node down (state %u), no links, no connections",
		       n.state);
		ret = system("rdma link add rxe0 type rxe netdev eth0");
		tap_eq(ret, 0, "rdma link add rxe0 type rxe netdev eth0");
		ok = wait_state(id, 1, 30, &n);
		tap_ok(ok && n.stats[FRACTOS_STAT_DISCONNECTS] > disc0,
		       "device back: node UP again (%llu disconnects)",
		       (unsigned long long)n.stats[FRACTOS_STAT_DISCONNECTS]);
		ret = ping(id, 20, &r);
		tap_ok(!ret && r.ping_count == 20, "PING x20 after the flap");
	}

	/* Teardown */
	tap_eq(node_del(id), 0, "NODE_DEL node %u", id);
	ret = request(sk, FRACTOS_CMD_NODE_LIST, 1, NULL, &r);
	tap_ok(!ret && r.n == 0, "NODE_LIST is empty again");
	tap_eq(node_del(id), -ENOENT, "NODE_DEL again: ENOENT");
	tap_eq(ping(id, 1, NULL), -ENOENT, "PING after NODE_DEL: ENOENT");
	live = read_ulong("/sys/class/misc/fractos/live/peers");
	tap_eq(live, 0, "no live peers");
	live = read_ulong("/sys/class/misc/fractos/live/conns");
	tap_eq(live, 0, "no live connections");

	/*
	 * Flow control under pressure: 4 receive buffers per connection and
	 * 8 concurrent pingers.  Senders wait for credits, PONGs wait on the
	 * backlog; every round trip must still complete.
	 */
	{
		FILE *f = fopen("/sys/module/fractos/parameters/fabric_ring", "w");
		int i, st, bad = 0;

		ok = f && fprintf(f, "4\n") > 0;
		if (f && fclose(f))
			ok = 0;
		tap_ok(ok, "fabric_ring set to 4");
		node_add(id, addr);
		ok = wait_state(id, 1, 30, &n);
		tap_ok(ok && n.credits == 4, "node %u UP with %u credits", id,
		       n.credits);
		for (i = 0; i < 8; i++) {
			pid_t pid = fork();

			if (pid < 0)
				tap_bail("fork");
			if (!pid) {
				struct reply rr;

				sk = nl_open();
				_exit(!sk || ping(id, 50, &rr) || rr.ping_count != 50);
			}
		}
		for (i = 0; i < 8; i++)
			if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
				bad++;
		tap_eq(bad, 0, "8 pingers x 50 round trips over 4 credits");
		node_get(id, &n);
		tap_diag("tx %llu rx %llu msgs, %u credits now",
			 (unsigned long long)n.stats[FRACTOS_STAT_TX_MSGS],
			 (unsigned long long)n.stats[FRACTOS_STAT_RX_MSGS],
			 n.credits);
		tap_ok(n.state == FRACTOS_NODE_UP &&
		       n.stats[FRACTOS_STAT_PROTO_ERRORS] == 0 &&
		       n.stats[FRACTOS_STAT_PONGS_RX] >= 400,
		       "still UP, no protocol errors, %llu pongs, %llu sends found no credit",
		       (unsigned long long)n.stats[FRACTOS_STAT_PONGS_RX],
		       (unsigned long long)n.stats[FRACTOS_STAT_NO_CREDITS]);
		tap_eq(node_del(id), 0, "NODE_DEL node %u", id);
		f = fopen("/sys/module/fractos/parameters/fabric_ring", "w");
		if (f) {
			fprintf(f, "64\n");
			fclose(f);
		}
		tap_eq(read_ulong("/sys/class/misc/fractos/live/conns"), 0,
		       "no live connections");
	}

	nl_socket_free(sk);
	return tap_finish();
}
