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
#include "tap.h"
#include "fos_nl.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
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
		struct fos_nl_attr a[] = {
			FOS_NL_A(FRACTOS_A_NODE_ID, id),
			FOS_NL_A(FRACTOS_A_NODE_ADDR4, addr), { 0 } };
		struct fos_nl s;
		int bad = 0;

		if (setgid(65534) || setuid(65534))
			_exit(100);
		if (fos_nl_open(&s))
			_exit(101);
		if (fos_nl_request(&s, FRACTOS_CMD_NODE_ADD, 0, a, NULL) != -EPERM)
			bad |= 1;
		if (fos_nl_request(&s, FRACTOS_CMD_NODE_DEL, 0, a, NULL) != -EPERM)
			bad |= 2;
		if (fos_nl_request(&s, FRACTOS_CMD_PING, 0, a, NULL) != -EPERM)
			bad |= 4;
		/* Reading is allowed. */
		if (fos_nl_request(&s, FRACTOS_CMD_STATS, 0, NULL, NULL))
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
	struct fos_nl_reply r;
	struct fos_nl_node n;
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
	ret = fos_nl_setup();
	if (ret == -EIO)
		tap_bail("generic netlink socket");
	if (!tap_ok(!ret, "generic netlink family \"fractos\" exists"))
		tap_bail("no fractos family");
	id = read_ulong("/sys/module/fractos/parameters/node_id");
	epoch = read_ulong("/sys/module/fractos/parameters/epoch");
	other = id + 1;

	/* Introspection */
	ret = fos_nl_request(NULL, FRACTOS_CMD_STATS, 0, NULL, &r);
	tap_eq(ret, 0, "STATS");
	tap_ok(r.local_id == id && r.local_epoch == epoch,
	       "STATS reports node %u epoch %#x", r.local_id, r.local_epoch);
	tap_eq(r.port, FRACTOS_FABRIC_PORT, "listening on the default port");
	ret = fos_nl_request(NULL, FRACTOS_CMD_LINK_LIST, 1, NULL, &r);
	tap_ok(!ret && r.n >= 1, "LINK_LIST shows %d RDMA device(s) (%s)",
	       r.n, r.n ? r.link[0] : "none");
	tap_eq(r.n ? r.link_state[0] : 0, 4, "port 1 is ACTIVE");
	ret = fos_nl_request(NULL, FRACTOS_CMD_NODE_LIST, 1, NULL, &r);
	tap_ok(!ret && r.n == 0, "NODE_LIST is empty to begin with");

	/* Permissions */
	ret = unprivileged(id, addr);
	tap_eq(ret, 0, "unprivileged: NODE_ADD, NODE_DEL, PING fail EPERM, STATS works");

	/* Attribute errors (err 0: EINVAL or ERANGE) */
	{
		struct fos_nl_attr nid = FOS_NL_A(FRACTOS_A_NODE_ID, id);
		struct fos_nl_attr a4 = FOS_NL_A(FRACTOS_A_NODE_ADDR4, addr);
		const struct {
			int cmd, err;
			struct fos_nl_attr a[4];
			const char *what;
		} t[] = {
			{ FRACTOS_CMD_NODE_ADD, -EINVAL, { nid },
			  "NODE_ADD without an address: EINVAL" },
			{ FRACTOS_CMD_NODE_ADD, -EINVAL,
			  { nid, a4, FOS_NL_A(FRACTOS_A_NODE_ADDR6, six) },
			  "NODE_ADD with ADDR4 and ADDR6: EINVAL" },
			{ FRACTOS_CMD_NODE_ADD, 0,
			  { nid, FOS_NL_A(FRACTOS_A_NODE_ADDR4, five) },
			  "NODE_ADD with a 5-byte ADDR4: EINVAL or ERANGE" },
			{ FRACTOS_CMD_NODE_ADD, -EINVAL,
			  { nid, a4, FOS_NL_A(FRACTOS_A_NODE_QPN, id) },
			  "NODE_ADD with an output-only attribute: EINVAL" },
			{ FRACTOS_CMD_NODE_ADD, -ERANGE,
			  { nid, a4, FOS_NL_A(FRACTOS_A_NODE_PORT, port0) },
			  "NODE_ADD with port 0: ERANGE" },
			{ FRACTOS_CMD_NODE_ADD, -EINVAL, { a4 },
			  "NODE_ADD without a node id: EINVAL" },
			{ FRACTOS_CMD_NODE_ADD, -EINVAL,
			  { nid, a4, { __FRACTOS_A_MAX + 3, 4, &id } },
			  "NODE_ADD with an unknown attribute: EINVAL" },
			{ FRACTOS_CMD_PING, -ERANGE,
			  { nid, FOS_NL_A(FRACTOS_A_PING_COUNT, zero) },
			  "PING with count 0: ERANGE" },
			{ FRACTOS_CMD_PING, -ERANGE,
			  { nid, FOS_NL_A(FRACTOS_A_PING_COUNT, big) },
			  "PING with count 100000: ERANGE" },
		};
		unsigned int i;

		for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
			ret = fos_nl_request(NULL, t[i].cmd, 0, t[i].a, NULL);
			if (t[i].err)
				tap_eq(ret, t[i].err, "%s", t[i].what);
			else
				tap_ok(ret == -EINVAL || ret == -ERANGE,
				       "%s (%d)", t[i].what, ret);
		}
	}
	tap_eq(fos_nl_node_del(id), -ENOENT,
	       "NODE_DEL of an unknown node: ENOENT");
	tap_eq(fos_nl_ping(id, 1, NULL), -ENOENT,
	       "PING of an unknown node: ENOENT");
	tap_eq(fos_nl_node_get(id, &n), -ENOENT,
	       "NODE_LIST of an unknown node: ENOENT");

	/*
	 * A connection from a node that is not configured: configure node
	 * id+1 at our own address.  We connect (smaller id) and say we are
	 * node id, which our listener does not know.
	 */
	fos_nl_request(NULL, FRACTOS_CMD_STATS, 0, NULL, &r);
	{
		uint64_t refused0 = r.stats[FRACTOS_STAT_REFUSED];
		double end = now() + 20;

		tap_eq(fos_nl_node_add(other, addr), 0,
		       "NODE_ADD node %u (misconfigured)", other);
		do {
			usleep(100000);
			fos_nl_request(NULL, FRACTOS_CMD_STATS, 0, NULL, &r);
		} while (r.stats[FRACTOS_STAT_REFUSED] == refused0 && now() < end);
		tap_ok(r.stats[FRACTOS_STAT_REFUSED] > refused0,
		       "our listener refuses the unconfigured node (%llu refusals)",
		       (unsigned long long)r.stats[FRACTOS_STAT_REFUSED]);
		/*
		 * The refusal is counted by our listener before the
		 * rejection reaches the connecting side: wait for that too.
		 */
		do {
			ret = fos_nl_node_get(other, &n);
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
		tap_eq(fos_nl_node_del(other), 0, "NODE_DEL node %u", other);
	}

	/* Ourselves, over rxe loopback */
	tap_eq(fos_nl_node_add(id, addr), 0, "NODE_ADD node %u at %s (this node)",
	       id, inet_ntoa(addr));
	tap_eq(fos_nl_node_add(id, addr), -EEXIST, "NODE_ADD again: EEXIST");
	ok = fos_nl_wait_state(id, 1, 30, &n);
	tap_ok(ok, "node %u is UP", id);
	if (!ok)
		tap_diag("state %u, connect errors %llu", n.state,
			 (unsigned long long)n.stats[FRACTOS_STAT_CONNECT_ERRORS]);
	ret = fos_nl_request(NULL, FRACTOS_CMD_NODE_LIST, 1, NULL, &r);
	n = r.node[0];
	tap_ok(!ret && r.n == 1 && n.id == id &&
	       n.addr.s_addr == addr.s_addr && n.port == FRACTOS_FABRIC_PORT,
	       "NODE_LIST dump: one node, id %u, %s port %u", n.id,
	       inet_ntoa(n.addr), n.port);
	tap_eq(n.epoch, epoch, "its epoch is ours");
	tap_ok(n.qpn != 0 && n.credits > 0, "qp %u, %u credits", n.qpn, n.credits);
	tap_ok(n.stats[FRACTOS_STAT_CONNECTS] >= 1, "%llu connection(s) established",
	       (unsigned long long)n.stats[FRACTOS_STAT_CONNECTS]);

	ret = fos_nl_ping(id, 200, &r);
	tap_eq(ret, 0, "PING x200");
	tap_eq(r.ping_count, 200, "200 replies");
	tap_ok(r.rtt_min > 0 && r.rtt_min <= r.rtt_avg && r.rtt_avg <= r.rtt_max,
	       "rtt min/avg/max %.1f/%.1f/%.1f us", r.rtt_min / 1e3,
	       r.rtt_avg / 1e3, r.rtt_max / 1e3);
	fos_nl_node_get(id, &n);
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
		fos_nl_node_get(id, &n);
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
		ok = fos_nl_wait_state(id, 0, 10, &n);
		fos_nl_request(NULL, FRACTOS_CMD_LINK_LIST, 1, NULL, &r);
		tap_ok(ok && r.n == 0 &&
		       read_ulong("/sys/class/misc/fractos/live/conns") == 0,
		       "device gone: node down (state %u), no links, no connections",
		       n.state);
		ret = system("rdma link add rxe0 type rxe netdev eth0");
		tap_eq(ret, 0, "rdma link add rxe0 type rxe netdev eth0");
		ok = fos_nl_wait_state(id, 1, 30, &n);
		tap_ok(ok && n.stats[FRACTOS_STAT_DISCONNECTS] > disc0,
		       "device back: node UP again (%llu disconnects)",
		       (unsigned long long)n.stats[FRACTOS_STAT_DISCONNECTS]);
		ret = fos_nl_ping(id, 20, &r);
		tap_ok(!ret && r.ping_count == 20, "PING x20 after the flap");
	}

	/* Teardown */
	tap_eq(fos_nl_node_del(id), 0, "NODE_DEL node %u", id);
	ret = fos_nl_request(NULL, FRACTOS_CMD_NODE_LIST, 1, NULL, &r);
	tap_ok(!ret && r.n == 0, "NODE_LIST is empty again");
	tap_eq(fos_nl_node_del(id), -ENOENT, "NODE_DEL again: ENOENT");
	tap_eq(fos_nl_ping(id, 1, NULL), -ENOENT, "PING after NODE_DEL: ENOENT");
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
		fos_nl_node_add(id, addr);
		ok = fos_nl_wait_state(id, 1, 30, &n);
		/*
		 * The initiator's AUTH spent one credit as the node went UP;
		 * the peer gives it back at once, but it may still be on its
		 * way (completions in softirq make that likelier).
		 */
		for (i = 0; ok && n.credits != 4 && i < 50; i++) {
			usleep(100 * 1000);
			fos_nl_node_get(id, &n);
		}
		tap_ok(ok && n.credits == 4, "node %u UP with %u credits", id,
		       n.credits);
		for (i = 0; i < 8; i++) {
			pid_t pid = fork();

			if (pid < 0)
				tap_bail("fork");
			if (!pid) {
				struct fos_nl_reply rr;

				/* a socket of its own */
				_exit(fos_nl_setup() || fos_nl_ping(id, 50, &rr) ||
				      rr.ping_count != 50);
			}
		}
		for (i = 0; i < 8; i++)
			if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
				bad++;
		tap_eq(bad, 0, "8 pingers x 50 round trips over 4 credits");
		fos_nl_node_get(id, &n);
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
		tap_eq(fos_nl_node_del(id), 0, "NODE_DEL node %u", id);
		f = fopen("/sys/module/fractos/parameters/fabric_ring", "w");
		if (f) {
			fprintf(f, "64\n");
			fclose(f);
		}
		tap_eq(read_ulong("/sys/class/misc/fractos/live/conns"), 0,
		       "no live connections");
	}

	fos_nl_close(&fos_nl_default);
	return tap_finish();
}
