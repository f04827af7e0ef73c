// SPDX-License-Identifier: GPL-2.0
/*
 * fosnet: a tiny client of the "fractos" generic netlink family for the
 * multi-node tests.  Output is plain "key=value" words, one line per object,
 * so that shell scripts can pick values out.
 *
 *   fosnet add ID ADDR [PORT]       NODE_ADD (IPv4)
 *   fosnet del ID                   NODE_DEL
 *   fosnet list [ID]                NODE_LIST: one line per node
 *   fosnet get ID KEY               one value of "list ID" (state, epoch, ...)
 *   fosnet stats                    STATS: one line
 *   fosnet stat KEY                 one value of "stats"
 *   fosnet wait ID up|down SECS [EPOCH]
 *                                   until node ID is UP (with EPOCH if
 *                                   given) or not UP; prints elapsed_ms,
 *                                   since_rx_ms (since the node's RX_MSGS
 *                                   last changed, polled every 20 ms) and
 *                                   the node's line; exit 1 on timeout
 *   fosnet ping ID COUNT [PROCS]    COUNT round trips (one PING request of
 *                                   COUNT); with PROCS, that many processes
 *                                   each do COUNT single PINGs and the totals
 *                                   are printed (ok, timeouts, errors)
 *   fosnet barrier TAG [VALUE]      wait for every node of the vm/run
 *                                   network (FRACTOS_NODE, FRACTOS_ADDRS;
 *                                   FOSNET_NODES="1 3" for a subset) over
 *                                   TCP; prints "N1=VALUE N2=VALUE ..."
 *
 * Node states print as down, connecting, waiting, up.  Exit status: 0, 1 on
 * a failure (the error is printed as error=ENAME), 2 on bad usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "../selftests/fos_nl.h"

#define BARRIER_PORT	18600
#define MAX_NODES	16

static const char *const stat_names[__FRACTOS_STAT_MAX] = {
	[FRACTOS_STAT_TX_MSGS] = "tx_msgs",
	[FRACTOS_STAT_TX_BYTES] = "tx_bytes",
	[FRACTOS_STAT_RX_MSGS] = "rx_msgs",
	[FRACTOS_STAT_RX_BYTES] = "rx_bytes",
	[FRACTOS_STAT_PINGS_TX] = "pings_tx",
	[FRACTOS_STAT_PINGS_RX] = "pings_rx",
	[FRACTOS_STAT_PONGS_RX] = "pongs_rx",
	[FRACTOS_STAT_CONNECTS] = "connects",
	[FRACTOS_STAT_DISCONNECTS] = "disconnects",
	[FRACTOS_STAT_CONNECT_ERRORS] = "connect_errors",
	[FRACTOS_STAT_HB_TIMEOUTS] = "hb_timeouts",
	[FRACTOS_STAT_EPOCH_CHANGES] = "epoch_changes",
	[FRACTOS_STAT_NO_CREDITS] = "no_credits",
	[FRACTOS_STAT_PROTO_ERRORS] = "proto_errors",
	[FRACTOS_STAT_REFUSED] = "refused",
	[FRACTOS_STAT_TX_STALLS] = "tx_stalls",
	[FRACTOS_STAT_REFUSED_MALFORMED] = "refused_malformed",
	[FRACTOS_STAT_REFUSED_VERSION] = "refused_version",
	[FRACTOS_STAT_REFUSED_UNKNOWN] = "refused_unknown",
	[FRACTOS_STAT_REFUSED_WRONG_NODE] = "refused_wrong_node",
	[FRACTOS_STAT_REFUSED_INITIATOR] = "refused_initiator",
	[FRACTOS_STAT_REFUSED_RESOURCES] = "refused_resources",
	[FRACTOS_STAT_REFUSED_AUTH] = "refused_auth",
	[FRACTOS_STAT_REFUSED_ADDRESS] = "refused_address",
	[FRACTOS_STAT_REFUSED_BUSY] = "refused_busy",
	[FRACTOS_STAT_AUTH_FAILURES] = "auth_failures",
	[FRACTOS_STAT_RDMA_READ_BYTES] = "rdma_read_bytes",
	[FRACTOS_STAT_REFUSED_CONNECTED] = "refused_connected",
	[FRACTOS_STAT_REFUSED_COOKIE] = "refused_cookie",
	[FRACTOS_STAT_TX_REMOTE_MSGS] = "tx_remote_msgs",
	[FRACTOS_STAT_RX_REMOTE_MSGS] = "rx_remote_msgs",
	[FRACTOS_STAT_RETRANSMITS] = "retransmits",
	[FRACTOS_STAT_DUPLICATES] = "duplicates",
	[FRACTOS_STAT_SESSION_ENDS] = "session_ends",
	[FRACTOS_STAT_LINK_GRACE] = "link_grace",
};

static const char *const state_names[] = {
	[FRACTOS_NODE_DOWN] = "down",
	[FRACTOS_NODE_CONNECTING] = "connecting",
	[FRACTOS_NODE_WAITING] = "waiting",
	[FRACTOS_NODE_UP] = "up",
};

static const char *errname(int err)
{
	switch (err) {
	case ENOENT: return "ENOENT";
	case EEXIST: return "EEXIST";
	case EINVAL: return "EINVAL";
	case ERANGE: return "ERANGE";
	case EPERM: return "EPERM";
	case ENOTCONN: return "ENOTCONN";
	case ETIMEDOUT: return "ETIMEDOUT";
	case EAGAIN: return "EAGAIN";
	case ECONNRESET: return "ECONNRESET";
	case EINTR: return "EINTR";
	case EIO: return "EIO";
	case ENOMEM: return "ENOMEM";
	default: return "E?";
	}
}

static void nl_setup(void)
{
	int ret = fos_nl_setup();

	if (ret) {
		printf("error=%s\n",
		       ret == -ENOENT ? "no-fractos-family" : "netlink");
		exit(1);
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int fail(int err)
{
	printf("error=%s\n", errname(-err));
	return 1;
}

static void print_stats(const uint64_t *s)
{
	int i;

	for (i = FRACTOS_STAT_TX_MSGS; i < __FRACTOS_STAT_MAX; i++)
		if (stat_names[i])	/* a counter newer than this table */
			printf(" %s=%llu", stat_names[i], (unsigned long long)s[i]);
}

static const char *state_name(uint8_t s)
{
	return s < 4 ? state_names[s] : "unknown";
}

static void print_node(const struct fos_nl_node *n)
{
	printf("id=%u addr=%s port=%u state=%s epoch=%u qpn=%u credits=%u",
	       n->id, inet_ntoa(n->addr), n->port, state_name(n->state),
	       n->epoch, n->qpn, n->credits);
	print_stats(n->stats);
	printf("\n");
}

/* The value of @key in a node's line, or -1 if unknown. */
static int node_value(const struct fos_nl_node *n, const char *key)
{
	int i;

	if (!strcmp(key, "state"))
		printf("%s\n", state_name(n->state));
	else if (!strcmp(key, "epoch"))
		printf("%u\n", n->epoch);
	else if (!strcmp(key, "qpn"))
		printf("%u\n", n->qpn);
	else if (!strcmp(key, "credits"))
		printf("%u\n", n->credits);
	else if (!strcmp(key, "addr"))
		printf("%s\n", inet_ntoa(n->addr));
	else if (!strcmp(key, "port"))
		printf("%u\n", n->port);
	else {
		for (i = FRACTOS_STAT_TX_MSGS; i < __FRACTOS_STAT_MAX; i++)
			if (stat_names[i] && !strcmp(key, stat_names[i])) {
				printf("%llu\n", (unsigned long long)n->stats[i]);
				return 0;
			}
		return -1;
	}
	return 0;
}

static int cmd_stats(const char *key)
{
	static struct fos_nl_reply r;
	int ret = fos_nl_request(NULL, FRACTOS_CMD_STATS, 0, NULL, &r), i;

	if (ret)
		return fail(ret);
	if (!key) {
		printf("node_id=%u epoch=%u port=%u nodes=%u links=%u",
		       r.local_id, r.local_epoch, r.port, r.nodes, r.links);
		print_stats(r.stats);
		printf("\n");
		return 0;
	}
	if (!strcmp(key, "epoch")) {
		printf("%u\n", r.local_epoch);
		return 0;
	}
	if (!strcmp(key, "node_id")) {
		printf("%u\n", r.local_id);
		return 0;
	}
	if (!strcmp(key, "nodes")) {
		printf("%u\n", r.nodes);
		return 0;
	}
	for (i = FRACTOS_STAT_TX_MSGS; i < __FRACTOS_STAT_MAX; i++)
		if (stat_names[i] && !strcmp(key, stat_names[i])) {
			printf("%llu\n", (unsigned long long)r.stats[i]);
			return 0;
		}
	return 2;
}

/* PROCS processes, each COUNT single pings; totals through a pipe. */
static int cmd_pingers(uint32_t id, unsigned int count, unsigned int procs)
{
	unsigned long ok = 0, tmo = 0, err = 0;
	int p[2], st, bad = 0;
	unsigned int i;

	if (pipe(p))
		return fail(-errno);
	fflush(stdout);
	for (i = 0; i < procs; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return fail(-errno);
		if (!pid) {
			static struct fos_nl_reply r;
			unsigned long c[3] = { 0, 0, 0 };
			unsigned int j;
			int ret;

			close(p[0]);
			nl_setup();	/* a socket of its own */
			for (j = 0; j < count; j++) {
				ret = fos_nl_ping(id, 1, &r);
				if (!ret)
					c[0]++;
				else if (ret == -ETIMEDOUT)
					c[1]++;
				else
					c[2]++;
			}
			_exit(write(p[1], c, sizeof(c)) != sizeof(c));
		}
	}
	close(p[1]);
	for (;;) {
		unsigned long c[3];
		ssize_t n = read(p[0], c, sizeof(c));

		if (n != sizeof(c))
			break;
		ok += c[0];
		tmo += c[1];
		err += c[2];
	}
	close(p[0]);
	for (i = 0; i < procs; i++)
		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			bad++;
	printf("procs=%u sent=%lu ok=%lu timeouts=%lu errors=%lu failed_procs=%d\n",
	       procs, (unsigned long)procs * count, ok, tmo, err, bad);
	return ok == (unsigned long)procs * count && !bad ? 0 : 1;
}

/* ---- barrier over TCP: node list, coordinator is the first ---- */

static int nodes_of(int *ids, char addrs[][32])
{
	const char *all = getenv("FRACTOS_ADDRS"), *sub = getenv("FOSNET_NODES");
	char buf[512], *tok, *save;
	char list[MAX_NODES][32];
	int n = 0, k = 0;

	if (!all)
		return -1;
	snprintf(buf, sizeof(buf), "%s", all);
	for (tok = strtok_r(buf, " ", &save); tok && n < MAX_NODES;
	     tok = strtok_r(NULL, " ", &save))
		snprintf(list[n++], 32, "%s", tok);
	if (!sub) {
		for (k = 0; k < n; k++) {
			ids[k] = k + 1;
			snprintf(addrs[k], 32, "%s", list[k]);
		}
		return n;
	}
	snprintf(buf, sizeof(buf), "%s", sub);
	for (tok = strtok_r(buf, " ", &save); tok && k < MAX_NODES;
	     tok = strtok_r(NULL, " ", &save)) {
		int id = atoi(tok);

		if (id < 1 || id > n)
			return -1;
		ids[k] = id;
		snprintf(addrs[k], 32, "%s", list[id - 1]);
		k++;
	}
	return k;
}

static int read_line(int fd, char *buf, size_t size, double deadline)
{
	size_t len = 0;

	while (len + 1 < size) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int left = (int)((deadline - now()) * 1000);
		ssize_t r;

		if (left <= 0 || poll(&pfd, 1, left) <= 0)
			return -1;
		r = read(fd, buf + len, 1);
		if (r <= 0)
			break;
		if (buf[len] == '\n')
			break;
		len++;
	}
	buf[len] = 0;
	return len ? 0 : -1;
}

static int cmd_barrier(const char *tag, const char *value, double secs)
{
	static char addrs[MAX_NODES][32], vals[MAX_NODES][128];
	int ids[MAX_NODES], fds[MAX_NODES], n, me, i, got = 0, ret = 1;
	double deadline = now() + secs;
	char line[512], out[4096];
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(BARRIER_PORT) };
	const char *env = getenv("FRACTOS_NODE");

	n = nodes_of(ids, addrs);
	if (n < 1 || !env) {
		printf("error=no-FRACTOS_ADDRS/FRACTOS_NODE\n");
		return 2;
	}
	me = atoi(env);
	if (strchr(value, ' ') || strchr(tag, ' ')) {
		printf("error=space-in-value\n");
		return 2;
	}
	if (n == 1 || me != ids[0]) {
		int fd = -1;

		if (n == 1) {
			printf("N%d=%s\n", me, value);
			return 0;
		}
		/* A participant: connect to the coordinator until it listens. */
		inet_pton(AF_INET, addrs[0], &sa.sin_addr);
		while (now() < deadline) {
			fd = socket(AF_INET, SOCK_STREAM, 0);
			if (fd < 0)
				return fail(-errno);
			if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
				break;
			close(fd);
			fd = -1;
			usleep(100000);
		}
		if (fd < 0) {
			printf("error=barrier-%s-timeout\n", tag);
			return 1;
		}
		snprintf(line, sizeof(line), "%s %d %s\n", tag, me, value);
		if (write(fd, line, strlen(line)) != (ssize_t)strlen(line) ||
		    read_line(fd, out, sizeof(out), deadline) ||
		    !strncmp(out, "error", 5)) {
			printf("error=barrier-%s-failed\n", tag);
			close(fd);
			return 1;
		}
		close(fd);
		printf("%s\n", out);
		return 0;
	}

	/* The coordinator. */
	{
		int one = 1, l = socket(AF_INET, SOCK_STREAM, 0);

		if (l < 0)
			return fail(-errno);
		setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		sa.sin_addr.s_addr = htonl(INADDR_ANY);
		if (bind(l, (struct sockaddr *)&sa, sizeof(sa)) ||
		    listen(l, 16)) {
			close(l);
			return fail(-errno);
		}
		for (i = 0; i < n; i++)
			fds[i] = -1;
		snprintf(vals[0], sizeof(vals[0]), "%s", value);
		fds[0] = -1;
		while (got < n - 1) {
			struct pollfd pfd = { .fd = l, .events = POLLIN };
			int left = (int)((deadline - now()) * 1000), fd, id, k;
			char t[128], v[128];

			if (left <= 0 || poll(&pfd, 1, left) <= 0)
				break;
			fd = accept(l, NULL, NULL);
			if (fd < 0)
				continue;
			if (read_line(fd, line, sizeof(line), deadline) ||
			    sscanf(line, "%127s %d %127s", t, &id, v) != 3 ||
			    strcmp(t, tag)) {
				const char *e = "error mismatch\n";

				if (write(fd, e, strlen(e)) < 0)
					e = NULL;
				close(fd);
				printf("# barrier %s: unexpected \"%s\"\n", tag, line);
				continue;
			}
			for (k = 1; k < n; k++)
				if (ids[k] == id)
					break;
			if (k == n || fds[k] >= 0) {
				close(fd);
				continue;
			}
			fds[k] = fd;
			snprintf(vals[k], sizeof(vals[k]), "%s", v);
			got++;
		}
		close(l);
		out[0] = 0;
		for (i = 0; i < n; i++) {
			size_t len = strlen(out);

			snprintf(out + len, sizeof(out) - len, "%sN%d=%s",
				 i ? " " : "", ids[i], vals[i]);
		}
		if (got == n - 1)
			ret = 0;
		for (i = 1; i < n; i++) {
			if (fds[i] < 0)
				continue;
			if (ret)
				dprintf(fds[i], "error timeout\n");
			else
				dprintf(fds[i], "%s\n", out);
			close(fds[i]);
		}
		if (ret)
			printf("error=barrier-%s-timeout\n", tag);
		else
			printf("%s\n", out);
	}
	return ret;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: fosnet add ID ADDR [PORT] | del ID | list [ID] | get ID KEY |\n"
		"       stats | stat KEY | wait ID up|down SECS [EPOCH] |\n"
		"       ping ID COUNT [PROCS] | barrier TAG [VALUE] [SECS]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static struct fos_nl_reply r;
	const char *cmd;
	struct fos_nl_node n;
	uint32_t id = 0;
	int ret, i;

	if (argc < 2)
		usage();
	cmd = argv[1];
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(cmd, "barrier")) {
		if (argc < 3)
			usage();
		return cmd_barrier(argv[2], argc > 3 ? argv[3] : "-",
				   argc > 4 ? atof(argv[4]) : 90);
	}
	nl_setup();
	if (argc > 2)
		id = strtoul(argv[2], NULL, 0);

	if (!strcmp(cmd, "add") && (argc == 4 || argc == 5)) {
		struct in_addr addr;
		uint16_t port = argc == 5 ? atoi(argv[4]) : FRACTOS_FABRIC_PORT;
		struct fos_nl_attr a[] = {
			FOS_NL_A(FRACTOS_A_NODE_ID, id),
			FOS_NL_A(FRACTOS_A_NODE_ADDR4, addr),
			FOS_NL_A(FRACTOS_A_NODE_PORT, port), { 0 } };

		if (inet_pton(AF_INET, argv[3], &addr) != 1)
			usage();
		ret = fos_nl_request(NULL, FRACTOS_CMD_NODE_ADD, 0, a, &r);
		return ret ? fail(ret) : 0;
	}
	if (!strcmp(cmd, "del") && argc == 3) {
		ret = fos_nl_node_del(id);
		return ret ? fail(ret) : 0;
	}
	if (!strcmp(cmd, "list") && argc <= 3) {
		if (argc == 3) {
			ret = fos_nl_node_get(id, &n);
			if (ret)
				return fail(ret);
			print_node(&n);
			return 0;
		}
		ret = fos_nl_request(NULL, FRACTOS_CMD_NODE_LIST, 1, NULL, &r);
		if (ret)
			return fail(ret);
		for (i = 0; i < r.n && i < FOS_NL_MAX_NODES; i++)
			print_node(&r.node[i]);
		return 0;
	}
	if (!strcmp(cmd, "get") && argc == 4) {
		ret = fos_nl_node_get(id, &n);
		if (ret)
			return fail(ret);
		return node_value(&n, argv[3]) ? 2 : 0;
	}
	if (!strcmp(cmd, "stats") && argc == 2)
		return cmd_stats(NULL);
	if (!strcmp(cmd, "stat") && argc == 3)
		return cmd_stats(argv[2]);
	if (!strcmp(cmd, "wait") && (argc == 5 || argc == 6)) {
		int up = !strcmp(argv[3], "up");
		uint32_t epoch = argc == 6 ? strtoul(argv[5], NULL, 0) : 0;
		double t0 = now(), end = t0 + atof(argv[4]), t_rx = t0;
		uint64_t rx = 0;

		if (!up && strcmp(argv[3], "down"))
			usage();
		for (;;) {
			ret = fos_nl_node_get(id, &n);
			if (ret)
				return fail(ret);
			/* when the last message arrived, to 20 ms */
			if (n.stats[FRACTOS_STAT_RX_MSGS] != rx) {
				rx = n.stats[FRACTOS_STAT_RX_MSGS];
				t_rx = now();
			}
			if (up ? n.state == FRACTOS_NODE_UP &&
				 (!epoch || n.epoch == epoch) :
				 n.state != FRACTOS_NODE_UP)
				break;
			if (now() >= end) {
				printf("timeout=1 elapsed_ms=%.0f ",
				       (now() - t0) * 1e3);
				print_node(&n);
				return 1;
			}
			usleep(20000);
		}
		printf("elapsed_ms=%.0f since_rx_ms=%.0f ", (now() - t0) * 1e3,
		       (now() - t_rx) * 1e3);
		print_node(&n);
		return 0;
	}
	if (!strcmp(cmd, "ping") && (argc == 4 || argc == 5)) {
		unsigned int count = strtoul(argv[3], NULL, 0);

		if (argc == 5)
			return cmd_pingers(id, count, strtoul(argv[4], NULL, 0));
		ret = fos_nl_ping(id, count, &r);
		if (ret)
			return fail(ret);
		printf("count=%u min_ns=%llu avg_ns=%llu max_ns=%llu\n",
		       r.ping_count, (unsigned long long)r.rtt_min,
		       (unsigned long long)r.rtt_avg,
		       (unsigned long long)r.rtt_max);
		return r.ping_count == count ? 0 : 1;
	}
	usage();
	return 2;
}
