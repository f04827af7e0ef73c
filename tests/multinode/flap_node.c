// SPDX-License-Identifier: GPL-2.0
/*
 * flap_node: a stream of numbered invocations both ways between two nodes,
 * and a stream of copies, while their link flaps (flap.sh, vm/run --nodes
 * 2).  The session of the two nodes outlives each connection
 * (fabric_grace_ms): every number must be served exactly once, every
 * invocation must succeed, and every copy must bring the source's bytes.
 *
 *   flap_node call DONE_FILE   node 1: publishes K as "flap.k", looks up
 *                              "flap.r" on node 2 and invokes it with 0,
 *                              1, 2, ... until DONE_FILE exists (the
 *                              flapping is over), then with FLAP_END and
 *                              the count; meanwhile counts what comes
 *                              through K, and copies node 2's "flap.m"
 *                              into a Memory of its own again and again,
 *                              each time checking the bytes
 *   flap_node serve            node 2: publishes M (FLAP_MLEN bytes of a
 *                              known pattern) as "flap.m" and R as
 *                              "flap.r", looks up "flap.k" on node 1, and
 *                              answers each number by invoking K with it;
 *                              at FLAP_END it checks that each number came
 *                              once and passes FLAP_END on
 *   flap_node hold SECS        node 2: publishes R as "flap.r" and holds
 *                              it for SECS seconds
 *   flap_node expire           node 1: looks "flap.r" up, invokes it once,
 *                              then waits until the capability is revoked
 *                              (the grace period ended with the link down):
 *                              the invocation then fails with EKEYREVOKED
 *   flap_node record FILE      node 2: publishes R2 as "flap.r2" and
 *                              appends each number it is invoked with to
 *                              FILE, a line each, until it is killed
 *   flap_node stream N         node 1: looks "flap.r2" up and invokes it
 *                              from N threads, thread t with t, t + N,
 *                              t + 2N, ..., until an invocation fails: the
 *                              node restarts meanwhile, so each thread's
 *                              last call must fail with EKEYREVOKED, once;
 *                              prints "result=OK:SUM:F1,F2,..." (the count
 *                              and sum of the numbers whose call succeeded,
 *                              the numbers whose call failed) for the
 *                              script to check against node 2's FILE
 *
 * With three nodes (flap3.sh), node 2 forwards node 1's stream to node 3:
 *
 *   flap_node serve3           node 3: publishes M3 (FLAP_MLEN bytes) as
 *                              "flap.m3" and R3 as "flap.r3" and counts
 *                              the numbers it is invoked with; at FLAP_END
 *                              it checks that each came once
 *   flap_node derive SECS      node 2: publishes M as serve does, looks
 *                              "flap.r3" up on node 3, derives D from it
 *                              (nothing added: its invocations are
 *                              forwarded to node 3 as they are) and
 *                              publishes D as "flap.d", then holds them
 *                              for SECS seconds
 *   flap_node via DONE_FILE    node 1: looks "flap.d" up on node 2 and
 *                              invokes it with 0, 1, 2, ... until DONE_FILE
 *                              exists, then with FLAP_END and the count;
 *                              meanwhile, again and again, clears node 3's
 *                              M3 with zeroes of its own, copies node 2's
 *                              M into it (a third-party copy: node 3 pulls
 *                              from node 2) and copies M3 back to check
 *                              the bytes
 *
 * Each mode prints "# flap: key=value ..." and exits 0 when it holds.
 */
#include <pthread.h>
#include <fcntl.h>
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
/* Larger than copy_inline_max: the copies go by GRANT and RDMA READ. */
#define FLAP_MLEN	(256u << 10)
#define FLAP_SEED	5

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

struct copier {
	const char *done_file;
	uint32_t src, m3;
	unsigned long copies, errors, wrong, slowest;
};

/*
 * Node 3's M3 over with zeroes from @dst (ours, zeroes), node 2's M into
 * it, then M3 back into @dst.  Return: 0, or -1 (said why).
 */
static int copy3(struct copier *c, uint32_t dst)
{
	static const char *const what[] = { "zeroes", "node 2's M", "back" };
	uint32_t from[3] = { dst, c->src, c->m3 }, to[3] = { c->m3, c->m3, dst };
	int i;

	for (i = 0; i < 3; i++)
		if (fos_copy(fd, from[i], 0, to[i], 0, FLAP_MLEN, NULL)) {
			printf("# flap: copy %lu (%s): %s\n", c->copies,
			       what[i], strerror(errno));
			return -1;
		}
	return 0;
}

/*
 * Copy node 2's M into a Memory of ours until @done_file exists, each
 * time over zeroes, and check the bytes (through node 3's M3 with @c->m3).
 */
static void *copy_thread(void *arg)
{
	struct copier *c = arg;
	unsigned char *want = malloc(FLAP_MLEN), *buf;
	struct stat st;
	uint32_t dst;

	buf = fos_anon_mem(fd, FLAP_MLEN, &dst);
	if (!want || !buf) {
		printf("# flap: copy destination: %s\n", strerror(errno));
		c->errors++;
		free(want);
		return NULL;
	}
	fos_fill(want, FLAP_MLEN, FLAP_SEED);
	while (stat(c->done_file, &st)) {
		uint64_t t0 = now_ms();

		memset(buf, 0, FLAP_MLEN);
		if (c->m3 && copy3(c, dst)) {
			c->errors++;
		} else if (!c->m3 &&
			   fos_copy(fd, c->src, 0, dst, 0, FLAP_MLEN, NULL)) {
			printf("# flap: copy %lu: %s\n", c->copies,
			       strerror(errno));
			c->errors++;
		} else if (memcmp(buf, want, FLAP_MLEN)) {
			printf("# flap: copy %lu: wrong bytes\n", c->copies);
			c->wrong++;
		}
		if (now_ms() - t0 > c->slowest)
			c->slowest = now_ms() - t0;
		c->copies++;
	}
	fos_close(fd, dst);
	munmap(buf, FLAP_MLEN);
	free(want);
	return NULL;
}

/*
 * Invoke @r with 0, 1, 2, ... until @done_file exists; then, the copier
 * @ct (@c) done, with FLAP_END and the count.  Says what it saw.
 * Return: the count; *@errors: the calls that failed.
 */
static uint32_t stream_numbers(uint32_t r, const char *done_file,
			       pthread_t ct, struct copier *c,
			       unsigned long *errors)
{
	unsigned long slowest = 0;
	struct num x = { 0 };
	struct stat st;

	while (stat(done_file, &st) && x.n < FLAP_MAX - 1) {
		uint64_t t0 = now_ms(), t;

		if (invoke(fd, r, &x, sizeof(x), NULL, 0)) {
			printf("# flap: invoke %u: %s\n", x.n, strerror(errno));
			(*errors)++;
		}
		t = now_ms() - t0;
		if (t > slowest)
			slowest = t;
		x.n++;
		usleep(20000);
	}
	pthread_join(ct, NULL);
	x.count = x.n;
	x.n = FLAP_END;
	if (invoke(fd, r, &x, sizeof(x), NULL, 0)) {
		printf("# flap: invoke of the end: %s\n", strerror(errno));
		(*errors)++;
	}
	printf("# flap: invoked=%u errors=%lu slowest_ms=%lu\n", x.count,
	       *errors, slowest);
	printf("# flap: copies=%lu errors=%lu wrong=%lu slowest_ms=%lu\n",
	       c->copies, c->errors, c->wrong, c->slowest);
	return x.count;
}

static int call(const char *done_file)
{
	struct copier c = { .done_file = done_file };
	unsigned long errors = 0;
	pthread_t th, ct;
	uint32_t r, n;
	int ok;

	if (meet(TAG_K, "flap.k", 2, "flap.r", &r))
		return 1;
	if (node_lookup_wait(fd, 2, "flap.m", &c.src))
		return printf("# flap: lookup flap.m: %s\n",
			      strerror(errno)), 1;
	pthread_create(&th, NULL, k_thread, NULL);
	pthread_create(&ct, NULL, copy_thread, &c);
	/* Node 2 exits at FLAP_END: its M goes with it. */
	n = stream_numbers(r, done_file, ct, &c, &errors);
	pthread_join(th, NULL);
	ok = !errors && k_end == n && once(seen_k, k_end, "node1-got") &&
	     c.copies && !c.errors && !c.wrong;
	return !ok;
}

static int serve3(void)
{
	static uint8_t seen[FLAP_MAX];
	uint32_t m3;

	if (!fos_anon_mem(fd, FLAP_MLEN, &m3) || publish(fd, m3, "flap.m3"))
		return printf("# flap: flap.m3: %s\n", strerror(errno)), 1;
	if (meet(TAG_R, "flap.r3", 0, NULL, NULL))
		return 1;
	return !once(seen, serve(seen, 0, 120), "node3-got");
}

static int derive(int secs)
{
	unsigned char *buf;
	uint32_t r3, d, m;

	buf = fos_anon_mem(fd, FLAP_MLEN, &m);
	if (buf)
		fos_fill(buf, FLAP_MLEN, FLAP_SEED);
	if (!buf || publish(fd, m, "flap.m"))
		return printf("# flap: flap.m: %s\n", strerror(errno)), 1;
	if (node_lookup_wait(fd, 3, "flap.r3", &r3))
		return printf("# flap: lookup flap.r3: %s\n", strerror(errno)), 1;
	if (req_create(fd, r3, 0, NULL, 0, NULL, 0, &d) ||
	    publish(fd, d, "flap.d"))
		return printf("# flap: flap.d: %s\n", strerror(errno)), 1;
	printf("# flap: ready\n");
	fflush(stdout);
	sleep(secs);
	return 0;
}

static int via(const char *done_file)
{
	struct copier c = { .done_file = done_file };
	unsigned long errors = 0;
	pthread_t ct;
	uint32_t d, n;

	if (node_lookup_wait(fd, 2, "flap.d", &d) ||
	    node_lookup_wait(fd, 2, "flap.m", &c.src) ||
	    node_lookup_wait(fd, 3, "flap.m3", &c.m3))
		return printf("# flap: lookup: %s\n", strerror(errno)), 1;
	pthread_create(&ct, NULL, copy_thread, &c);
	printf("# flap: ready\n");
	fflush(stdout);
	n = stream_numbers(d, done_file, ct, &c, &errors);
	return errors || !n || !c.copies || c.errors || c.wrong;
}

static int serve_r(void)
{
	static uint8_t seen[FLAP_MAX];
	unsigned char *buf;
	uint32_t k, m;
	long n;

	buf = fos_anon_mem(fd, FLAP_MLEN, &m);
	if (buf)
		fos_fill(buf, FLAP_MLEN, FLAP_SEED);
	if (!buf || publish(fd, m, "flap.m"))
		return printf("# flap: flap.m: %s\n", strerror(errno)), 1;
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

static int record(const char *file)
{
	struct msg m;
	struct num x;
	char line[16];
	int out, n;

	out = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	if (out < 0 || meet(TAG_R, "flap.r2", 0, NULL, NULL))
		return 1;
	fos_req_timeout_ns = 600 * 1000000000ull;
	while (!receive(fd, &m)) {
		if (m.imm_len == sizeof(x)) {
			memcpy(&x, m.imm, sizeof(x));
			n = snprintf(line, sizeof(line), "%u\n", x.n);
			if (write(out, line, n) != n)
				return 1;
		}
		close_all(fd, &m);
	}
	return 1;
}

#define STREAM_MAX	16

struct streamer {
	uint32_t r, first, step;
	unsigned long ok;
	unsigned long long sum;
	uint32_t failed;
	int err;
	uint64_t pending_ms;
};

static int stream_ready, stream_done;

/* Invoke R2 with first, first + step, ... until a call fails. */
static void *stream_thread(void *arg)
{
	struct streamer *t = arg;
	struct num x = { .n = t->first };

	for (;;) {
		uint64_t t0 = now_ms();

		if (invoke(fd, t->r, &x, sizeof(x), NULL, 0)) {
			t->err = errno;
			t->failed = x.n;
			t->pending_ms = now_ms() - t0;
			__atomic_add_fetch(&stream_done, 1, __ATOMIC_RELEASE);
			return NULL;
		}
		t->ok++;
		t->sum += x.n;
		__atomic_store_n(&stream_ready, 1, __ATOMIC_RELEASE);
		x.n += t->step;
		usleep(20000);
	}
}

static int stream(int n)
{
	struct streamer t[STREAM_MAX] = {};
	pthread_t th[STREAM_MAX];
	unsigned long long sum = 0;
	unsigned long ok = 0;
	int i, good = 1;
	uint32_t r2;

	if (n < 1 || n > STREAM_MAX)
		return 2;
	if (node_lookup_wait(fd, 2, "flap.r2", &r2))
		return printf("# flap: lookup flap.r2: %s\n", strerror(errno)), 1;
	for (i = 0; i < n; i++) {
		t[i] = (struct streamer){ .r = r2, .first = i, .step = n };
		pthread_create(&th[i], NULL, stream_thread, &t[i]);
	}
	/* Threads that all failed at once never make it ready. */
	while (!__atomic_load_n(&stream_ready, __ATOMIC_ACQUIRE) &&
	       __atomic_load_n(&stream_done, __ATOMIC_ACQUIRE) < n)
		usleep(10000);
	/* Tell the script: the node may restart now. */
	printf("# flap: ready\n");
	fflush(stdout);
	for (i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		printf("# flap: thread %d: %lu served, %u failed after %llu ms: %s\n",
		       i, t[i].ok, t[i].failed,
		       (unsigned long long)t[i].pending_ms, strerror(t[i].err));
		good &= t[i].err == EKEYREVOKED;
		ok += t[i].ok;
		sum += t[i].sum;
	}
	printf("result=%lu:%llu:", ok, sum);
	for (i = 0; i < n; i++)
		printf("%s%u", i ? "," : "", t[i].failed);
	printf("\n");
	return !good;
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
	if (!strcmp(argv[1], "record") && argc > 2)
		return record(argv[2]);
	if (!strcmp(argv[1], "stream") && argc > 2)
		return stream(atoi(argv[2]));
	if (!strcmp(argv[1], "serve3"))
		return serve3();
	if (!strcmp(argv[1], "derive") && argc > 2)
		return derive(atoi(argv[2]));
	if (!strcmp(argv[1], "via") && argc > 2)
		return via(argv[2]);
	return 2;
}
