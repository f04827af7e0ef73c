// SPDX-License-Identifier: GPL-2.0
/*
 * chain_node: one node's part of the 3-node chain test
 * (remote_2node.sh chain_node, on vm/run --nodes 3).
 *
 * Node 3 publishes stage S3 as "s3", node 2 publishes stage S2 as "s2"
 * and holds a proxy of S3.  Node 1, the client, makes a continuation
 * Request K and invokes S2 with [K]; node 2 forwards the hop to S3 with
 * node 1's K (a capability forwarded 1 -> 2 -> 3), and node 3 invokes K,
 * on node 1, directly.  Every hop carries a sequence number, the path
 * so far and 1 KiB of bytes derived from the sequence number; every stage
 * checks them and adds its node to the path.  The phases:
 *
 *  1. 200 chains, 8 in flight: each comes back once, path "123", bytes
 *     intact.
 *  2. 100 more with 5% packet loss on every node's egress (tc netem):
 *     still each exactly once, nothing corrupt, no connection lost.
 *  2b. 100 more across a link flap: node 1 takes node 3's link down, starts
 *     the chains (node 2's hops to S3 stall in RC retransmission), and
 *     brings it back 1.5 s later, within the heartbeat bound: every chain
 *     comes back exactly once and no connection is lost.
 *  3. A lease across nodes: node 1 lends a revocation-tree child L of its
 *     Memory to S2; node 2 copies from it (RDMA READ) and answers, node 1
 *     revokes L, node 2's monitor on L fires and its next copy fails with
 *     EKEYREVOKED; node 1's Memory is unharmed.
 *  4. Node 2 killed mid-chain: node 2 holds a hop (answers "holding"
 *     through K instead of forwarding) and node 1 kills its guest.  An
 *     invocation of S2 in flight then fails with EKEYREVOKED or
 *     EHOSTUNREACH within the heartbeat bound, node 1's monitor on S2
 *     fires, S2 is revoked, the held hop never arrives, and node 3 goes
 *     on serving node 1 directly.
 *
 * At the end node 1 and node 3 close their spaces and must have no
 * exported object and no proxy left.
 */
#include <signal.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "../selftests/tap.h"
#include "../selftests/fos_util.h"
#include "../selftests/fos_nl.h"
#include "../selftests/fos_req.h"
#include "node.h"

#define TAG_S2		0x5202
#define TAG_S3		0x5303
#define TAG_K		0x4b
#define MON_S2		0x6d02
#define MON_L		0x6d4c
#define NCHAIN		200	/* chains of the clean phase */
#define NLOSSY		100	/* chains under loss (slow: RC retransmissions) */
#define NFLAP		100	/* chains across a link flap */
#define FLAP_MS		1500	/* node 3's link down, < the heartbeat bound */
#define WINDOW		8
#define DATA_LEN	1024

enum { CMD_HOP = 1, CMD_LEASE, CMD_HOLD, CMD_STOP, CMD_HOLDING, CMD_LEASED,
	CMD_LEASE_GONE, CMD_REPORT };

/* The immediates of every message of this test. */
struct hop {
	uint32_t cmd;
	uint32_t arg;		/* errno, failure count, ... */
	uint64_t seq;
	char path[8];
	unsigned char data[DATA_LEN];
};

static int fd;

/* receive() that leaves an empty message on failure. */
static int recv_msg(struct msg *m)
{
	int ret = receive(fd, m);

	if (ret) {
		m->type = 0;
		m->imm_len = 0;
		m->ncaps = 0;
	}
	return ret;
}

static int netem(const char *args)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "../../vm/ctl netem %s >/dev/null", args);
	return system(cmd);
}

static void hop_fill(struct hop *h, uint32_t cmd, uint64_t seq)
{
	memset(h, 0, sizeof(*h));
	h->cmd = cmd;
	h->seq = seq;
	fos_fill(h->data, sizeof(h->data), (unsigned int)seq + 7);
}

/* A hop of the test: right size, bytes that match its sequence number. */
static const struct hop *hop_check(const struct msg *m, uint64_t tag)
{
	static unsigned char want[DATA_LEN];
	const struct hop *h = (const void *)m->imm;

	if (m->type != FRACTOS_MSG_REQUEST || m->tag != tag ||
	    m->imm_len != sizeof(*h))
		return NULL;
	if (h->cmd == CMD_HOP) {
		fos_fill(want, sizeof(want), (unsigned int)h->seq + 7);
		if (memcmp(want, h->data, sizeof(want)))
			return NULL;
	}
	return h;
}

/* Node 1: the next answer through K; its @arg if it is a @cmd, else -1. */
static int answer(uint32_t cmd)
{
	const struct hop *r;
	struct msg m;
	int arg = -1;

	if (!recv_msg(&m)) {
		r = hop_check(&m, TAG_K);
		if (r && r->cmd == cmd)
			arg = r->arg;
	}
	close_all(fd, &m);
	return arg;
}

static void path_add(struct hop *h)
{
	size_t n = strnlen(h->path, sizeof(h->path) - 1);

	if (n < sizeof(h->path) - 1)
		h->path[n] = '0' + me;
}

/*
 * Phases 1 -> 2 -> 3: every node enters once its part of the previous
 * phase is done (node 1 once all chains came back).
 */
static void lossy_phase(void)
{
	node_barrier("chain", "lossy", 120);
	tap_eq(netem("loss 5%"), 0, "node %u: netem loss 5%%", me);
	node_barrier("chain", "lossy2", 120);
}

static void clean_phase(void)
{
	tap_eq(netem("off"), 0, "node %u: netem off", me);
	node_barrier("chain", "clean", 120);
}

/* After close(): no space, capability, export or proxy left. */
static void nothing_left(void)
{
	struct fos_counts want = {}, now;
	int ok = fos_counts_wait(&want, &now, 30000);

	if (!ok)
		fos_counts_print("left", &now);
	tap_ok(ok && !fos_live("exports") && !fos_live("proxies") &&
	       !fos_live("messages") && !fos_live("requests") &&
	       !fos_live("grants"),
	       "node %u: nothing left (exports %lld, proxies %lld, grants %lld)",
	       me, fos_live("exports"), fos_live("proxies"), fos_live("grants"));
}

/* The fabric counters of the connection to @peer that must not move. */
static uint64_t disconnects(uint32_t peer)
{
	struct fos_nl_node n;

	if (fos_nl_node_get(peer, &n))
		return ~0ULL;
	return n.stats[FRACTOS_STAT_DISCONNECTS] +
	       n.stats[FRACTOS_STAT_PROTO_ERRORS];
}

/* Why a connection went: the counters of @peer's, as diagnostics. */
static void link_diag(uint32_t peer)
{
	struct fos_nl_node n;

	if (fos_nl_node_get(peer, &n)) {
		tap_diag("node %u: no NODE_GET: %s", peer, strerror(errno));
		return;
	}
	tap_diag("node %u: disconnects %llu, heartbeat timeouts %llu, protocol errors %llu, tx stalls %llu, epoch changes %llu",
		 peer,
		 (unsigned long long)n.stats[FRACTOS_STAT_DISCONNECTS],
		 (unsigned long long)n.stats[FRACTOS_STAT_HB_TIMEOUTS],
		 (unsigned long long)n.stats[FRACTOS_STAT_PROTO_ERRORS],
		 (unsigned long long)n.stats[FRACTOS_STAT_TX_STALLS],
		 (unsigned long long)n.stats[FRACTOS_STAT_EPOCH_CHANGES]);
}

/* No connection lost since @d2 and @d3 were read; else say how. */
static void links_kept(uint64_t d2, uint64_t d3, const char *what)
{
	bool ok = disconnects(2) == d2 && disconnects(3) == d3;

	tap_ok(ok, "node 1: no connection lost %s", what);
	if (!ok) {
		link_diag(2);
		link_diag(3);
	}
}

/*
 * Node 1: @n chains, @WINDOW in flight.  Each must come back exactly
 * once, through node 2 then node 3, with its bytes intact.
 */
static void chains(uint32_t s2, uint32_t k, unsigned int n, const char *what)
{
	static unsigned char seen[NCHAIN];
	unsigned int sent = 0, back = 0, dup = 0, bad = 0, lost = 0;
	int inv_err = 0;
	struct hop h;
	struct msg m;
	double t0 = fos_now();

	memset(seen, 0, sizeof(seen));
	fos_req_timeout_ns = 30000000000ULL;
	while (back + lost < n) {
		if (sent < n && sent - back - lost < WINDOW) {
			hop_fill(&h, CMD_HOP, sent);
			path_add(&h);
			if (invoke(fd, s2, &h, sizeof(h), &k, 1)) {
				tap_diag("%s: invoke %u: %s", what, sent,
					 strerror(errno));
				inv_err++;
				lost++;	/* delivery unknown: not waited for */
			}
			sent++;
			continue;
		}
		if (recv_msg(&m)) {
			tap_diag("%s: receive after %u back: %s", what, back,
				 strerror(errno));
			break;
		}
		const struct hop *r = hop_check(&m, TAG_K);

		close_all(fd, &m);
		if (!r || r->cmd != CMD_HOP || r->seq >= n ||
		    strcmp(r->path, "123")) {
			bad++;
			back++;
			continue;
		}
		if (seen[r->seq]++)
			dup++;
		back++;
	}
	tap_ok(!inv_err && back == n && !bad && !dup,
	       "node 1: %s: %u chains 1 -> 2 -> 3 -> 1 back exactly once, intact (%u back, %u bad, %u duplicate, %d invoke errors, %.2f s)",
	       what, n, back, bad, dup, inv_err, fos_now() - t0);
}

/*
 * 2b: node 3's link goes down before the chains start and comes back
 * FLAP_MS later; the chains in flight wait in RC retransmission.
 */
static void flap_phase(uint32_t s2, uint32_t k)
{
	uint64_t disc2 = disconnects(2), disc3 = disconnects(3);
	int p[2], status = -1;
	char c = 0;
	pid_t pid;

	if (pipe(p))
		tap_bail("pipe");
	pid = fork();
	if (pid < 0)
		tap_bail("fork");
	if (!pid) {
		int rc = system("../../vm/ctl link 3 down >/dev/null");

		c = rc ? 'x' : 'd';
		if (write(p[1], &c, 1) != 1 || rc)
			_exit(1);
		usleep(FLAP_MS * 1000);
		_exit(system("../../vm/ctl link 3 up >/dev/null") ? 1 : 0);
	}
	close(p[1]);
	if (read(p[0], &c, 1) != 1)
		c = 'x';
	close(p[0]);
	chains(s2, k, NFLAP, "link flap");
	waitpid(pid, &status, 0);
	tap_ok(c == 'd' && WIFEXITED(status) && !WEXITSTATUS(status),
	       "node 1: node 3's link was down for %u ms while the chains ran",
	       FLAP_MS);
	links_kept(disc2, disc3, "across the flap");
}

static int client(void)
{
	uint32_t k, s2, s3, mem = FRACTOS_CID_INVALID, l = FRACTOS_CID_INVALID;
	uint64_t disc2, disc3, copied;
	struct hop h;
	struct msg m;
	char *buf;
	double t0;
	int ret, hb, arg;

	tap_plan(33);
	peers_up();
	fd = fos_open();
	buf = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fd < 0 || buf == MAP_FAILED)
		tap_bail("open/mmap");
	fos_fill(buf, 8192, 11);
	tap_eq(req_create(fd, FRACTOS_CID_INVALID, TAG_K, NULL, 0, NULL, 0, &k),
	       0, "node 1: continuation K");
	tap_eq(node_lookup_wait(fd, 2, "s2", &s2), 0, "node 1: look up \"s2\" on node 2");
	tap_eq(node_lookup_wait(fd, 3, "s3", &s3), 0, "node 1: look up \"s3\" on node 3");

	/* 1 and 2: chains, clean then lossy. */
	chains(s2, k, NCHAIN, "clean");
	disc2 = disconnects(2);
	disc3 = disconnects(3);
	lossy_phase();
	chains(s2, k, NLOSSY, "5% loss");
	clean_phase();
	links_kept(disc2, disc3, "and no protocol error under loss");
	flap_phase(s2, k);

	/* 3: a lease of [4096, 8192) of node 1's Memory to node 2. */
	ret = fos_mem_create(fd, buf, 8192, FRACTOS_PERM_ALL, &mem);
	if (!ret)
		ret = fos_revtree(fd, mem, &l);
	tap_eq(ret, 0, "node 1: Memory M and its lease child L");
	hop_fill(&h, CMD_LEASE, 0);
	tap_eq(invoke(fd, s2, &h, sizeof(h), (uint32_t[]){ l, k }, 2), 0,
	       "node 1: lend L to S2");
	arg = answer(CMD_LEASED);
	tap_ok(arg == 0,
	       "node 1: node 2 copied from the lease (its errno %d)", arg);
	tap_eq(fos_revoke(fd, l), 0, "node 1: the lease ends: revoke L");
	arg = answer(CMD_LEASE_GONE);
	tap_ok(arg == EKEYREVOKED,
	       "node 1: node 2's monitor on L fired and its copy failed with EKEYREVOKED (errno %d)", arg);
	ret = fos_copy(fd, mem, 0, mem, 4096, 100, &copied);
	tap_ok(!ret && copied == 100 && !memcmp(buf, buf + 4096, 100),
	       "node 1: M itself is unharmed");
	fos_close(fd, l);
	fos_close(fd, mem);

	/* 4: node 2 holds a hop; node 1 kills it. */
	hop_fill(&h, CMD_HOLD, 1000);
	path_add(&h);
	tap_eq(invoke(fd, s2, &h, sizeof(h), &k, 1), 0,
	       "node 1: a hop that node 2 holds");
	arg = answer(CMD_HOLDING);
	tap_ok(arg == 0,
	       "node 1: node 2 holds it and reports %d failure(s)", arg);
	tap_eq(monitor(fd, s2, MON_S2), 0, "node 1: monitor_receive on S2");
	hb = (int)fos_param("fabric_heartbeat_ms");
	tap_eq(system("../../vm/ctl kill 2 >/dev/null"), 0, "node 1: vm/ctl kill 2");
	t0 = fos_now();
	hop_fill(&h, CMD_HOP, 1001);
	path_add(&h);
	ret = invoke(fd, s2, &h, sizeof(h), &k, 1);
	ret = ret ? errno : 0;
	tap_ok((ret == EKEYREVOKED || ret == EHOSTUNREACH) &&
	       fos_now() - t0 < 5 * hb / 1000.0 + 2,
	       "node 1: an invocation of S2 in flight fails with %s after %.2f s (bound %.1f s)",
	       strerror(ret), fos_now() - t0, 5 * hb / 1000.0 + 2);
	fos_req_timeout_ns = (uint64_t)(5 * hb + 2000) * 1000000ULL;
	ret = recv_msg(&m);
	tap_ok(!ret && m.type == FRACTOS_MSG_MONITOR_RECEIVE && m.tag == MON_S2,
	       "node 1: S2's monitor fires %.2f s after the kill", fos_now() - t0);
	tap_ok(revoked(fd, s2), "node 1: S2's proxy is revoked");
	tap_errno(invoke(fd, s2, &h, sizeof(h), &k, 1), EKEYREVOKED,
		  "node 1: invoke S2 again: EKEYREVOKED");
	fos_req_timeout_ns = 2000000000ULL;
	tap_errno(recv_msg(&m), ETIMEDOUT,
		  "node 1: the held hop never arrives");

	/* Node 3 still serves node 1; it reports and closes. */
	hop_fill(&h, CMD_STOP, 0);
	tap_eq(invoke(fd, s3, &h, sizeof(h), &k, 1), 0,
	       "node 1: stop node 3 through S3 directly");
	fos_req_timeout_ns = 30000000000ULL;
	arg = answer(CMD_REPORT);
	tap_ok(arg == 0,
	       "node 1: node 3 reports %d failure(s)", arg);
	close(fd);
	munmap(buf, 8192);
	nothing_left();
	return tap_finish();
}

/* Node 2: stage 2, forwards every hop to S3 with the continuation. */
static int stage2(void)
{
	uint32_t s2, s3, copy_buf = FRACTOS_CID_INVALID, fails;
	unsigned int served = 0;
	uint64_t copied;
	struct hop h;
	struct msg m;
	char *buf;
	int ret;

	tap_plan(10);
	peers_up();
	fd = fos_open();
	buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fd < 0 || buf == MAP_FAILED)
		tap_bail("open/mmap");
	tap_eq(node_lookup_wait(fd, 3, "s3", &s3), 0, "node 2: look up \"s3\" on node 3");
	tap_ok(!req_create(fd, FRACTOS_CID_INVALID, TAG_S2, NULL, 0, NULL, 0, &s2) &&
	       !publish(fd, s2, "s2") &&
	       !fos_mem_create(fd, buf, 4096, FRACTOS_PERM_ALL, &copy_buf),
	       "node 2: S2 published as \"s2\"");
	fos_req_timeout_ns = 600000000000ULL;
	for (;;) {
		const struct hop *r;

		if (recv_msg(&m)) {
			tap_ok(0, "node 2: receive: %s", strerror(errno));
			break;
		}
		r = hop_check(&m, TAG_S2);
		if (!r || !m.ncaps) {
			tap_ok(0, "node 2: a bad hop (type %u, %u bytes, %u caps)",
				 m.type, m.imm_len, m.ncaps);
			close_all(fd, &m);
			continue;
		}
		h = *r;
		if (h.cmd == CMD_HOP) {
			path_add(&h);
			ret = invoke(fd, s3, &h, sizeof(h), &m.caps[m.ncaps - 1], 1);
			if (ret) {
				tap_ok(0, "node 2: forward hop %llu to S3: %s",
				       (unsigned long long)h.seq, strerror(errno));
				link_diag(3);
			}
			close_all(fd, &m);
			if (++served == NCHAIN)
				lossy_phase();
			else if (served == NCHAIN + NLOSSY)
				clean_phase();
			continue;
		}
		if (h.cmd == CMD_LEASE && m.ncaps == 2) {
			uint32_t l = m.caps[0], k = m.caps[1];
			struct msg ev;

			memset(buf, 0, 4096);
			ret = fos_copy(fd, l, 4096, copy_buf, 0, 4096, &copied);
			h.cmd = CMD_LEASED;
			h.arg = ret ? errno : copied != 4096 ? EIO : 0;
			if (!h.arg) {
				unsigned char want[8192];

				fos_fill(want, sizeof(want), 11);
				if (memcmp(buf, want + 4096, 4096))
					h.arg = EBADMSG;
			}
			tap_eq(h.arg, 0, "node 2: copy 4 KiB from node 1's lease");
			if (monitor(fd, l, MON_L))
				h.arg = errno;
			invoke(fd, k, &h, sizeof(h), NULL, 0);
			fos_req_timeout_ns = 30000000000ULL;
			ret = recv_msg(&ev);
			tap_ok(!ret && ev.type == FRACTOS_MSG_MONITOR_RECEIVE &&
			       ev.tag == MON_L,
			       "node 2: node 1 ended the lease: the monitor fires");
			h.cmd = CMD_LEASE_GONE;
			h.arg = fos_copy(fd, l, 0, copy_buf, 0, 64, NULL) ? errno : 0;
			invoke(fd, k, &h, sizeof(h), NULL, 0);
			close_all(fd, &m);
			fos_req_timeout_ns = 600000000000ULL;
			continue;
		}
		if (h.cmd == CMD_HOLD) {
			/* Tell node 1 that a hop is held here, then wait. */
			fails = tap_failed;
			h.cmd = CMD_HOLDING;
			h.arg = fails;
			invoke(fd, m.caps[m.ncaps - 1], &h, sizeof(h), NULL, 0);
			sleep(300);
			tap_ok(0, "node 2: not killed");
			break;
		}
		tap_ok(0, "node 2: unexpected command %u", h.cmd);
		close_all(fd, &m);
	}
	return tap_finish();
}

/* Node 3: stage 3, answers every hop through its continuation. */
static int stage3(void)
{
	unsigned int served = 0;
	uint32_t s3;
	struct hop h;
	struct msg m;

	tap_plan(10);
	peers_up();
	fd = fos_open();
	if (fd < 0)
		tap_bail("open");
	tap_ok(!req_create(fd, FRACTOS_CID_INVALID, TAG_S3, NULL, 0, NULL, 0, &s3) &&
	       !publish(fd, s3, "s3"), "node 3: S3 published as \"s3\"");
	fos_req_timeout_ns = 600000000000ULL;
	for (;;) {
		const struct hop *r;

		if (recv_msg(&m)) {
			tap_ok(0, "node 3: receive: %s", strerror(errno));
			break;
		}
		r = hop_check(&m, TAG_S3);
		if (!r || m.ncaps != 1) {
			tap_ok(0, "node 3: a bad hop (type %u, %u bytes, %u caps)",
				 m.type, m.imm_len, m.ncaps);
			close_all(fd, &m);
			continue;
		}
		h = *r;
		if (h.cmd == CMD_STOP) {
			tap_eq(served, NCHAIN + NLOSSY + NFLAP,
			       "node 3: served %u hops", NCHAIN + NLOSSY + NFLAP);
			h.cmd = CMD_REPORT;
			h.arg = tap_failed;
			tap_eq(invoke(fd, m.caps[0], &h, sizeof(h), NULL, 0), 0,
			       "node 3: report to node 1");
			close_all(fd, &m);
			break;
		}
		path_add(&h);
		if (invoke(fd, m.caps[0], &h, sizeof(h), NULL, 0))
			tap_ok(0, "node 3: answer hop %llu: %s",
				 (unsigned long long)h.seq, strerror(errno));
		close_all(fd, &m);
		if (++served == NCHAIN)
			lossy_phase();
		else if (served == NCHAIN + NLOSSY)
			clean_phase();
	}
	close(fd);
	nothing_left();
	return tap_finish();
}

int main(void)
{
	node_args();
	if (nodes != 3)
		tap_bail("chain_node needs vm/run --nodes 3");
	signal(SIGPIPE, SIG_IGN);
	if (me == 1)
		return client();
	if (me == 2)
		return stage2();
	return stage3();
}
