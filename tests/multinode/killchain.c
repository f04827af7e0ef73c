// SPDX-License-Identifier: GPL-2.0
/*
 * killchain: kill-anywhere on a 3-node chain (remote_2node.sh killchain,
 * vm/run --nodes 3).
 *
 * Each iteration starts a chain: node 3 a stage S3 (it publishes a Request
 * as "kc3.<i>"), node 2 a stage S2 (it looks kc3.<i> up on node 3 and
 * publishes "kc2.<i>"), node 1 a client (it looks kc2.<i> up on node 2,
 * makes a continuation K and invokes S2 with [K] in a loop; S2 forwards
 * the hop to S3 with node 1's K, S3 invokes K on node 1).  Once the three
 * are running (a barrier), the iteration's schedule - the same on every
 * node, from KC_SEED - picks a victim node and a delay of 0..60 ms: that
 * node SIGKILLs its process then, mid-chain; 200 ms later every node
 * SIGKILLs what is left of its own.  Every node checks that its process
 * is gone within 5 s of its SIGKILL (nothing hangs in the module), and,
 * once every node's process is gone (a barrier), that every live counter
 * but the peers and connections is back to zero within 10 s: nothing is
 * left of the dead chain on any node (proxies, exports, grants, names).
 * KC_ITER iterations (200).
 */
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <dirent.h>
#include "../selftests/tap.h"
#include "../selftests/fos_util.h"
#include "../selftests/fos_nl.h"
#include "../selftests/fos_req.h"
#include "node.h"

#define TAG_S2	0x6b02
#define TAG_S3	0x6b03
#define TAG_K	0x6b4b

static unsigned long *rounds;	/* chains completed, shared with the client */

static int barrier(const char *tag, unsigned int i)
{
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "./fosnet barrier kc-%s-%u - 120 >/dev/null", tag, i);
	return system(cmd);
}

static uint64_t mix(uint64_t x)
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Look @name up on @node until it is there (5 s). */
static int lookup_wait(int fd, uint32_t node, const char *name, uint32_t *cid)
{
	int tries;

	for (tries = 0; tries < 100; tries++) {
		if (!lookup(fd, node, name, cid))
			return 0;
		if (errno != ENOENT)
			return -1;
		usleep(50000);
	}
	return -1;
}

/* A stage: S3 answers K, S2 forwards to S3; exits when idle for 2 s. */
static void stage(unsigned int i, int ready)
{
	int sp = fos_open();
	uint32_t req, next = FRACTOS_CID_INVALID;
	char name[32];
	static struct msg m;

	if (sp < 0)
		_exit(10);
	if (me == 2) {
		snprintf(name, sizeof(name), "kc3.%u", i);
		if (lookup_wait(sp, 3, name, &next))
			_exit(11);
	}
	snprintf(name, sizeof(name), "kc%u.%u", me, i);
	if (req_create(sp, FRACTOS_CID_INVALID, me == 2 ? TAG_S2 : TAG_S3,
		       NULL, 0, NULL, 0, &req) || publish(sp, req, name))
		_exit(12);
	if (write(ready, "r", 1) != 1)
		_exit(13);
	fos_req_timeout_ns = 2000000000ULL;
	for (;;) {
		if (receive(sp, &m))
			_exit(errno == ETIMEDOUT ? 0 : 14);
		if (m.ncaps == 1 && m.imm_len == 8) {
			if (me == 2)
				invoke(sp, next, m.imm, 8, m.caps, 1);
			else
				invoke(sp, m.caps[0], m.imm, 8, NULL, 0);
		}
		close_all(sp, &m);
	}
}

/* The client: chains until something fails (its partners die). */
static void client(unsigned int i, int ready)
{
	int sp = fos_open();
	uint32_t s2, k;
	uint64_t seq;
	char name[32];
	static struct msg m;

	if (sp < 0)
		_exit(20);
	snprintf(name, sizeof(name), "kc2.%u", i);
	if (lookup_wait(sp, 2, name, &s2) ||
	    req_create(sp, FRACTOS_CID_INVALID, TAG_K, NULL, 0, NULL, 0, &k))
		_exit(21);
	if (write(ready, "r", 1) != 1)
		_exit(22);
	fos_req_timeout_ns = 2000000000ULL;
	for (seq = 0;; seq++) {
		if (invoke(sp, s2, &seq, 8, &k, 1))
			_exit(0);
		if (receive(sp, &m))
			_exit(0);
		if (m.tag != TAG_K || m.imm_len != 8 || memcmp(m.imm, &seq, 8))
			_exit(23);
		__atomic_add_fetch(rounds, 1, __ATOMIC_RELAXED);
		close_all(sp, &m);
	}
}

/* Every live counter but peers and conns is zero within @ms; else names. */
static int live_zero(int ms, char *left, size_t len)
{
	for (;;) {
		DIR *d = opendir(FOS_LIVE_DIR);
		struct dirent *e;
		size_t l;

		left[0] = 0;
		while (d && (e = readdir(d))) {
			char n[32];
			long long v;

			if (e->d_name[0] == '.' || !strcmp(e->d_name, "peers") ||
			    !strcmp(e->d_name, "conns"))
				continue;
			snprintf(n, sizeof(n), "%.31s", e->d_name);
			v = fos_live(n);
			l = strlen(left);
			if (v)
				snprintf(left + l, len - l, " %s=%lld", n, v);
		}
		if (d)
			closedir(d);
		if (!left[0])
			return 1;
		if (ms <= 0)
			return 0;
		usleep(20000);
		ms -= 20;
	}
}

int main(void)
{
	unsigned int iters = getenv("KC_ITER") ? atoi(getenv("KC_ITER")) : 200;
	uint64_t seed = getenv("KC_SEED") ? strtoull(getenv("KC_SEED"), NULL, 0) : 1;
	unsigned int i, hangs = 0, leaks = 0, nostart = 0, victim_here = 0;
	char left[512], first[600] = "";

	node_args();
	if (nodes != 3)
		tap_bail("killchain needs 3 nodes");
	rounds = mmap(NULL, sizeof(*rounds), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (rounds == MAP_FAILED)
		tap_bail("mmap");
	tap_plan(2 * (nodes - 1) + (me == 1 ? 5 : 4));
	peers_up();
	tap_diag("node %u: %u iterations, schedule seed %llu (KC_SEED)", me, iters,
		 (unsigned long long)seed);
	for (i = 0; i < iters; i++) {
		uint64_t h = mix(seed * 1000003 + i);
		unsigned int victim = 1 + h % 3, delay = (h >> 8) % 60000;
		int pfd[2], st;
		char c;
		pid_t pid;

		if (pipe(pfd))
			tap_bail("pipe");
		fflush(NULL);
		pid = fork();
		if (!pid) {
			close(pfd[0]);
			if (me == 1)
				client(i, pfd[1]);
			stage(i, pfd[1]);
		}
		close(pfd[1]);
		/* Running (or failed to start: its partner may be slow). */
		if (read(pfd[0], &c, 1) != 1)
			nostart++;
		close(pfd[0]);
		barrier("up", i);
		usleep(delay);
		if (victim == me) {
			kill(pid, SIGKILL);
			victim_here++;
		} else {
			usleep(200000);
			kill(pid, SIGKILL);
		}
		st = fos_reap_within(pid, 5000);
		if (st == -1) {
			char path[64], buf[2048] = "";

			hangs++;
			snprintf(path, sizeof(path), "/proc/%d/stack", pid);
			fos_read_text(path, buf, sizeof(buf));
			tap_diag("iteration %u: pid %d still there 5 s after SIGKILL:\n%s",
				 i, pid, buf);
			waitpid(pid, NULL, 0);
		}
		barrier("dead", i);
		if (!live_zero(10000, left, sizeof(left))) {
			if (!leaks++)
				snprintf(first, sizeof(first), "iteration %u:%s", i, left);
			live_zero(30000, left, sizeof(left));
		}
	}
	tap_ok(!hangs, "node %u: %u iterations: every process gone within 5 s of its SIGKILL",
	       me, iters);
	tap_ok(!leaks, "node %u: every counter back to zero after every iteration%s%s",
	       me, leaks ? ", first leak: " : "", first);
	tap_ok(nostart < iters / 4, "node %u: the chain started in %u of %u iterations",
	       me, iters - nostart, iters);
	tap_ok(victim_here > 0, "node %u was the victim %u times", me, victim_here);
	if (me == 1)
		tap_ok(*rounds > 0, "node 1: %lu chains came back around the three nodes",
		       *rounds);
	barrier("end", 0);
	return tap_finish();
}
