// SPDX-License-Identifier: GPL-2.0
/*
 * flap_node: a stream of numbered invocations both ways between two nodes
 * while their link flaps (flap.sh, vm/run --nodes 2).  The session of the
 * two nodes outlives each connection (fabric_grace_ms): every number must
 * be served exactly once and every invocation must succeed.
 *
 *   flap_node call DONE_FILE   node 1: publishes K as "flap.k", looks up
 *                              "flap.r" on node 2 and invokes it with 0,
 *                              1, 2, ... until DONE_FILE exists (the
 *                              flapping is over), then with FLAP_END and
 *                              the count; meanwhile counts what comes
 *                              through K
 *   flap_node serve            node 2: publishes R as "flap.r", looks up
 *                              "flap.k" on node 1, and answers each number
 *                              by invoking K with it; at FLAP_END it checks
 *                              that each number came once and passes
 *                              FLAP_END on
 *   flap_node hold SECS        node 2: publishes R as "flap.r" and holds
 *                              it for SECS seconds
 *   flap_node expire           node 1: looks "flap.r" up, invokes it once,
 *                              then waits until the capability is revoked
 *                              (the grace period ended with the link down):
 *                              the invocation then fails with EKEYREVOKED
 *
 * Each mode prints "# flap: key=value ..." and exits 0 when it holds.
 */
#include <pthread.h>
#include <sys/stat.h>
#include "../selftests/tap.h"
#include "../selftests/fos_util.h"
#include "../selftests/fos_nl.h"
#include "../selftests/fos_req.h"
#include "node.h"

#define TAG_R		0xf1a9
#define TAG_K		0xf1ab
#define FLAP_END	0xffffffffu
#define FLAP_MAX	(1u << 16)

struct num {
	uint32_t n;
	uint32_t count;
};

static int fd;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ull + ts.tv_nsec / 1000000;
}

/*
 * Receive numbers on @fd until FLAP_END (or @secs of silence): @seen[n]
 * counts each.  @echo: invoke it with each number as it comes (and with
 * FLAP_END at the end).  Return: the count FLAP_END carried, or -1.
 */
static long serve(uint8_t *seen, uint32_t echo, int secs)
{
	struct msg m;
	struct num x;
	long end = -1;

	fos_req_timeout_ns = secs * 1000000000ull;
	for (;;) {
		if (receive(fd, &m)) {
			printf("# flap: receive: %s\n", strerror(errno));
			return -1;
		}
		if (m.imm_len != sizeof(x)) {
			printf("# flap: a message of %u bytes\n", m.imm_len);
			close_all(fd, &m);
			continue;
		}
		memcpy(&x, m.imm, sizeof(x));
		close_all(fd, &m);
		if (echo && invoke(fd, echo, &x, sizeof(x), NULL, 0))
			printf("# flap: echo of %u: %s\n", x.n, strerror(errno));
		if (x.n == FLAP_END) {
			end = x.count;
			break;
		}
		if (x.n < FLAP_MAX && seen[x.n] < 255)
			seen[x.n]++;
	}
	return end;
}

/* Each of 0..@n-1 seen once?  Says what was not. */
static int once(const uint8_t *seen, long n, const char *who)
{
	long i, missing = 0, twice = 0;

	if (n < 0 || n > FLAP_MAX)
		return 0;
	for (i = 0; i < FLAP_MAX; i++) {
		if (i < n && !seen[i])
			missing++;
		else if (seen[i] > (i < n ? 1 : 0))
			twice++;
	}
	printf("# flap: %s numbers=%ld missing=%ld duplicated=%ld\n", who, n,
	       missing, twice);
	return !missing && !twice;
}

/*
 * Publish a new Request (@tag) as @mine; then, unless @theirs is NULL,
 * look @theirs up on @node into @cid.  Return: 0, or 1 (said why).
 */
static int meet(uint64_t tag, const char *mine, uint32_t node,
		const char *theirs, uint32_t *cid)
{
	uint32_t req;

	if (req_create(fd, FRACTOS_CID_INVALID, tag, NULL, 0, NULL, 0, &req) ||
	    publish(fd, req, mine))
		return printf("# flap: %s: %s\n", mine, strerror(errno)), 1;
	if (theirs && node_lookup_wait(fd, node, theirs, cid))
		return printf("# flap: lookup %s: %s\n", theirs,
			      strerror(errno)), 1;
	return 0;
}

static uint8_t seen_k[FLAP_MAX];
static long k_end = -1;

static void *k_thread(void *arg)
{
	(void)arg;
	k_end = serve(seen_k, 0, 120);
	return NULL;
}

static int call(const char *done_file)
{
	struct num x = { 0 };
	unsigned long errors = 0, slowest = 0;
	pthread_t th;
	struct stat st;
	uint32_t r;
	int ok;

	if (meet(TAG_K, "flap.k", 2, "flap.r", &r))
		return 1;
	pthread_create(&th, NULL, k_thread, NULL);
	while (stat(done_file, &st) && x.n < FLAP_MAX - 1) {
		uint64_t t0 = now_ms(), t;

		if (invoke(fd, r, &x, sizeof(x), NULL, 0)) {
			printf("# flap: invoke %u: %s\n", x.n, strerror(errno));
			errors++;
		}
		t = now_ms() - t0;
		if (t > slowest)
			slowest = t;
		x.n++;
		usleep(20000);
	}
	x.count = x.n;
	x.n = FLAP_END;
	if (invoke(fd, r, &x, sizeof(x), NULL, 0)) {
		printf("# flap: invoke of the end: %s\n", strerror(errno));
		errors++;
	}
	pthread_join(th, NULL);
	printf("# flap: invoked=%u errors=%lu slowest_ms=%lu\n", x.count,
	       errors, slowest);
	ok = !errors && k_end == x.count && once(seen_k, k_end, "node1-got");
	return !ok;
}

static int serve_r(void)
{
	static uint8_t seen[FLAP_MAX];
	uint32_t k;
	long n;

	if (meet(TAG_R, "flap.r", 1, "flap.k", &k))
		return 1;
	n = serve(seen, k, 120);
	return !once(seen, n, "node2-got");
}

static int hold(int secs)
{
	if (meet(TAG_R, "flap.r", 0, NULL, NULL))
		return 1;
	sleep(secs);
	return 0;
}

static int expire(void)
{
	struct num x = { .n = 7 };
	uint64_t t0;
	uint32_t r;
	int ret;

	if (node_lookup_wait(fd, 2, "flap.r", &r))
		return printf("# flap: lookup flap.r: %s\n", strerror(errno)), 1;
	if (invoke(fd, r, &x, sizeof(x), NULL, 0))
		return printf("# flap: first invoke: %s\n", strerror(errno)), 1;
	/* Tell the script: the link may go now. */
	printf("# flap: ready\n");
	fflush(stdout);
	t0 = now_ms();
	while (!revoked(fd, r) && now_ms() - t0 < 60000)
		usleep(100000);
	ret = invoke(fd, r, &x, sizeof(x), NULL, 0);
	printf("# flap: revoked_after_ms=%llu invoke=%d errno=%s\n",
	       (unsigned long long)(now_ms() - t0), ret,
	       ret ? strerror(errno) : "none");
	return !(revoked(fd, r) && ret && errno == EKEYREVOKED);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	fd = fos_open();
	if (fd < 0)
		return printf("# flap: open: %s\n", strerror(errno)), 1;
	if (!strcmp(argv[1], "call") && argc > 2)
		return call(argv[2]);
	if (!strcmp(argv[1], "serve"))
		return serve_r();
	if (!strcmp(argv[1], "hold") && argc > 2)
		return hold(atoi(argv[2]));
	if (!strcmp(argv[1], "expire"))
		return expire();
	return 2;
}
