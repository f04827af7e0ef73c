// SPDX-License-Identifier: GPL-2.0
/*
 * fractos selftest: every operation under allocation failure.
 *
 * Kernels with CONFIG_FAULT_INJECTION (the debug kernel; skipped
 * elsewhere) let a thread fail its own n-th fault-injection point
 * (/proc/thread-self/fail-nth): a slab allocation (failslab) or a page
 * allocation (fail_page_alloc), made GFP_KERNEL-eligible below.  For each
 * operation, from a fresh state each time, n = 1, 2, ... until the
 * operation no longer reaches an n-th point:
 *   - the operation returns success or an errno the uAPI header documents
 *     for it (ENOMEM, mostly), and nothing else;
 *   - once its spaces are closed, every live counter is back to its value
 *     before the state was built (nothing leaked, no pin left);
 *   - after a failure, the same operation succeeds when retried without
 *     injection (the failure left the state consistent).
 * The remote operations run the same way with fabric_loopback (this node
 * its own peer over rxe), when the guest has an address for it: the
 * caller's own allocations fail, and the connection must survive them.
 * The summary line counts the injection points exercised.
 *
 * Usage: failnth [-m MAX_N]   (default 400 points per operation)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <liburing.h>
#include <sys/mman.h>
#include "tap.h"
#include "fos_util.h"
#include "fos_nl.h"

#define PG	4096UL
#define RW	FRACTOS_PERM_ALL
#define DBG	"/sys/kernel/debug/"

static int nth_fd = -1;
static unsigned char *buf;
static unsigned int max_n = 400;
static unsigned long points, injected, failed_ops;

/* ---- fault injection ------------------------------------------------ */

static int dbg_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

/*
 * Only this thread's n-th point fails (fail-nth); the global attributes
 * must not fail anything by themselves (probability 0), must not skip
 * sleeping allocations (ignore-gfp-wait N), and must stay quiet (a stack
 * dump per injected failure would read as a splat to vm/run).
 */
static int fi_setup(void)
{
	static const char *const attrs[][2] = {
		{ DBG "failslab/probability", "0" },
		{ DBG "failslab/interval", "1" },
		{ DBG "failslab/times", "-1" },
		{ DBG "failslab/verbose", "0" },
		{ DBG "failslab/ignore-gfp-wait", "N" },
		{ DBG "fail_page_alloc/probability", "0" },
		{ DBG "fail_page_alloc/interval", "1" },
		{ DBG "fail_page_alloc/times", "-1" },
		{ DBG "fail_page_alloc/verbose", "0" },
		{ DBG "fail_page_alloc/ignore-gfp-wait", "N" },
		{ DBG "fail_page_alloc/ignore-gfp-highmem", "N" },
		{ DBG "fail_page_alloc/min-order", "0" },
	};
	unsigned int i;

	for (i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++)
		if (dbg_write(attrs[i][0], attrs[i][1]))
			return -1;
	nth_fd = open("/proc/thread-self/fail-nth", O_RDWR);
	return nth_fd < 0 ? -1 : 0;
}

static void fi_arm(unsigned int n)
{
	char s[16];

	snprintf(s, sizeof(s), "%u", n);
	if (pwrite(nth_fd, s, strlen(s), 0) < 0)
		tap_bail("write fail-nth");
}

/* Disarm; 1 if the armed point was reached (the counter ran out). */
static int fi_disarm(void)
{
	char s[16] = "";
	int left;

	if (pread(nth_fd, s, sizeof(s) - 1, 0) < 0)
		tap_bail("read fail-nth");
	left = atoi(s);
	if (pwrite(nth_fd, "0", 1, 0) < 0)
		tap_bail("write fail-nth");
	return left == 0;
}

/* ---- the state every operation starts from -------------------------- */

struct st {
	int a, b;		/* provider space, client space */
	uint32_t mem, view, req;	/* in a */
	uint32_t breq, bmem;	/* in b: the imported Request, a Memory */
	int capfd;		/* an exported fd of mem */
	struct io_uring ring;
};

static int req_create(int fd, uint32_t base, uint64_t tag, const void *imm,
		      uint32_t ilen, const uint32_t *caps, uint32_t ncaps,
		      uint32_t *cid)
{
	struct fractos_request_create a = {
		.base = base, .tag = tag, .imms = (uintptr_t)imm,
		.imm_len = ilen, .ncaps = ncaps, .caps = (uintptr_t)caps,
	};
	int ret = ioctl(fd, FRACTOS_IOC_REQUEST_CREATE, &a);

	if (!ret && cid)
		*cid = a.cid;
	return ret;
}

static int invoke(int fd, uint32_t cid, const void *imm, uint32_t ilen,
		  const uint32_t *caps, uint32_t ncaps)
{
	struct fractos_request_invoke a = {
		.cid = cid, .imms = (uintptr_t)imm, .imm_len = ilen,
		.ncaps = ncaps, .caps = (uintptr_t)caps,
	};

	return ioctl(fd, FRACTOS_IOC_REQUEST_INVOKE, &a);
}

static int receive(int fd, uint32_t *caps)
{
	static unsigned char imm[64];
	struct fractos_request_receive a = {
		.flags = FRACTOS_RECV_NONBLOCK, .imms = (uintptr_t)imm,
		.imm_len = sizeof(imm), .ncaps = 4, .caps = (uintptr_t)caps,
	};

	return ioctl(fd, FRACTOS_IOC_REQUEST_RECEIVE, &a);
}

static int name_op(int fd, unsigned long cmd, uint32_t *cid, uint32_t flags)
{
	struct fractos_name a = {
		.cid = *cid, .flags = flags, .name = (uintptr_t)"fnth",
		.name_len = 4,
	};
	int ret = ioctl(fd, cmd, &a);

	if (!ret)
		*cid = a.cid;
	return ret;
}

static int monitor(int fd, unsigned long cmd, uint32_t cid)
{
	struct fractos_monitor a = { .cid = cid, .cookie = 7 };

	return ioctl(fd, cmd, &a);
}

static void st_build(struct st *s)
{
	uint32_t caps[1];

	memset(s, 0, sizeof(*s));
	s->a = fos_open();
	s->b = fos_open();
	if (s->a < 0 || s->b < 0 ||
	    fos_mem_create(s->a, buf, 2 * PG, RW, &s->mem) ||
	    fos_diminish(s->a, s->mem, FRACTOS_PERM_WRITE, 16, 64, &s->view))
		tap_bail("state: spaces and Memory");
	caps[0] = s->view;
	if (req_create(s->a, FRACTOS_CID_INVALID, 5, "abcd", 4, caps, 1, &s->req) ||
	    fos_export(s->a, s->req, 0, &s->capfd) ||
	    fos_import(s->b, s->capfd, &s->breq) ||
	    fos_mem_create(s->b, buf + 2 * PG, PG, RW, &s->bmem))
		tap_bail("state: Request");
	close(s->capfd);
	if (fos_export(s->a, s->mem, 0, &s->capfd))
		tap_bail("state: export");
	/* One message queued on a, with a capability, for receive. */
	if (invoke(s->b, s->breq, "x", 1, &s->bmem, 1))
		tap_bail("state: invoke");
	if (io_uring_queue_init(4, &s->ring, 0))
		tap_bail("io_uring_queue_init");
}

static void st_free(struct st *s)
{
	io_uring_queue_exit(&s->ring);
	close(s->capfd);
	close(s->a);
	close(s->b);
}

/* ---- the operations ------------------------------------------------- */

#define ERRS(...) ((const int[]){ __VA_ARGS__, 0 })

struct op {
	const char *name;
	int (*run)(struct st *s);
	const int *errs;	/* documented errnos besides ENOMEM */
};

static int op_open(struct st *s)
{
	int fd = fos_open();

	(void)s;
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int op_mem_create(struct st *s)
{
	return fos_mem_create(s->a, buf + 4 * PG, 3 * PG, RW, NULL);
}

static int op_diminish(struct st *s)
{
	return fos_diminish(s->a, s->mem, 0, 8, 100, NULL);
}

static int op_copy(struct st *s)
{
	return fos_copy(s->a, s->mem, 0, s->mem, PG, 512, NULL);
}

static int op_revtree(struct st *s)
{
	return fos_revtree(s->a, s->mem, NULL);
}

static int op_dup(struct st *s)
{
	return fos_dup(s->b, s->breq, NULL);
}

static int op_revoke(struct st *s)
{
	return fos_revoke(s->a, s->mem);
}

static int op_export(struct st *s)
{
	int fd, ret = fos_export(s->a, s->req, 0, &fd);

	if (!ret)
		close(fd);
	return ret;
}

static int op_import(struct st *s)
{
	return fos_import(s->b, s->capfd, NULL);
}

static int op_req_create(struct st *s)
{
	uint32_t caps[2] = { s->mem, s->view };

	return req_create(s->a, FRACTOS_CID_INVALID, 9, "0123456789", 10, caps, 2,
			  NULL);
}

static int op_req_derive(struct st *s)
{
	return req_create(s->b, s->breq, 0, "ef", 2, &s->bmem, 1, NULL);
}

static int op_invoke(struct st *s)
{
	uint32_t caps[2] = { s->bmem, s->bmem };

	return invoke(s->b, s->breq, "yz", 2, caps, 2);
}

static int op_receive(struct st *s)
{
	uint32_t caps[4];

	return receive(s->a, caps);
}

static int op_mon_recv(struct st *s)
{
	return monitor(s->b, FRACTOS_IOC_MONITOR_RECEIVE, s->breq);
}

static int op_mon_deleg(struct st *s)
{
	return monitor(s->a, FRACTOS_IOC_MONITOR_DELEGATE, s->mem);
}

static int op_publish(struct st *s)
{
	uint32_t cid = s->req;

	return name_op(s->a, FRACTOS_IOC_NAME_PUBLISH, &cid, 0);
}

static int op_lookup(struct st *s)
{
	uint32_t cid = s->req;

	if (name_op(s->a, FRACTOS_IOC_NAME_PUBLISH, &cid, 0))
		tap_bail("publish for lookup");
	/* The injection is armed by the caller after this returns: see run_op. */
	return 0;
}

static int op_lookup2(struct st *s)
{
	uint32_t cid = 0;

	return name_op(s->b, FRACTOS_IOC_NAME_LOOKUP, &cid, 0);
}

/* The invoke through io_uring: the CQE's res is the result. */
static int op_uring_invoke(struct st *s)
{
	struct fractos_request_invoke a = {
		.cid = s->breq, .imms = (uintptr_t)"u", .imm_len = 1,
		.ncaps = 1, .caps = (uintptr_t)&s->bmem,
	};
	struct fractos_uring_cmd uc = { .arg = (uintptr_t)&a };
	struct io_uring_sqe *sqe = io_uring_get_sqe(&s->ring);
	struct io_uring_cqe *cqe;
	int res;

	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, s->a, NULL, 0, 0);
	sqe->fd = s->b;
	sqe->cmd_op = FRACTOS_IOC_REQUEST_INVOKE;
	memcpy(sqe->cmd, &uc, sizeof(uc));
	if (io_uring_submit(&s->ring) != 1) {
		errno = ENOMEM;		/* the submission's own allocation */
		return -1;
	}
	if (io_uring_wait_cqe(&s->ring, &cqe))
		tap_bail("io_uring_wait_cqe");
	res = cqe->res;
	io_uring_cqe_seen(&s->ring, cqe);
	if (res < 0) {
		errno = -res;
		return -1;
	}
	return 0;
}

/* With fabric_loopback: the same calls through the node's own connection. */
static int op_remote_invoke(struct st *s)
{
	return op_invoke(s);
}

static int op_remote_copy(struct st *s)
{
	return fos_copy(s->b, s->bmem, 0, s->bmem, 1024, 512, NULL);
}

static uint32_t self_node;

static int op_remote_lookup(struct st *s)
{
	struct fractos_name a = {
		.flags = FRACTOS_NAME_NODE, .name = (uintptr_t)"fnth",
		.name_len = 4, .node = self_node,
	};

	return ioctl(s->b, FRACTOS_IOC_NAME_LOOKUP, &a);
}

#define E_REMOTE EHOSTUNREACH, ETIMEDOUT, EINTR, EPROTO

static const struct op remote_ops[] = {
	{ "remote request_invoke", op_remote_invoke, ERRS(E_REMOTE, EKEYREVOKED) },
	{ "remote memory_copy", op_remote_copy, ERRS(E_REMOTE) },
	{ "remote name_lookup", op_remote_lookup, ERRS(E_REMOTE) },
};

static const struct op ops[] = {
	{ "open", op_open, ERRS(ENFILE, EMFILE) },
	{ "memory_create", op_mem_create, ERRS(EFAULT) },
	{ "memory_diminish", op_diminish, ERRS(0) },
	{ "memory_copy", op_copy, ERRS(0) },
	{ "cap_create_revtree", op_revtree, ERRS(0) },
	{ "cap_dup", op_dup, ERRS(0) },
	{ "cap_revoke", op_revoke, ERRS(0) },
	{ "cap_export", op_export, ERRS(EMFILE, ENFILE) },
	{ "cap_import", op_import, ERRS(0) },
	{ "request_create", op_req_create, ERRS(0) },
	{ "request_create (derive)", op_req_derive, ERRS(0) },
	{ "request_invoke", op_invoke, ERRS(0) },
	{ "request_receive", op_receive, ERRS(0) },
	{ "monitor_receive", op_mon_recv, ERRS(0) },
	{ "monitor_delegate", op_mon_deleg, ERRS(0) },
	{ "name_publish", op_publish, ERRS(0) },
	{ "name_lookup", op_lookup2, ERRS(0) },
	{ "io_uring request_invoke", op_uring_invoke, ERRS(EAGAIN) },
};

/* Every live counter, to compare before and after. */
#define NLIVE 24
struct live {
	int n;
	char name[NLIVE][32];	/* counter names are short */
	long long v[NLIVE];
};

static void live_read(struct live *l)
{
	DIR *d = opendir(FOS_LIVE_DIR);
	struct dirent *e;

	l->n = 0;
	while (d && (e = readdir(d)) && l->n < NLIVE) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(l->name[l->n], sizeof(l->name[0]), "%.31s", e->d_name);
		l->v[l->n] = fos_live(l->name[l->n]);
		l->n++;
	}
	if (d)
		closedir(d);
}

/* 1 when every counter is back to @want within 2 s. */
static int live_back(const struct live *want, char *why, size_t len)
{
	struct live now;
	int i, tries;

	for (tries = 0; tries < 200; tries++) {
		live_read(&now);
		for (i = 0; i < want->n; i++)
			if (fos_live(want->name[i]) != want->v[i])
				break;
		if (i == want->n)
			return 1;
		usleep(10000);
	}
	snprintf(why, len, "live/%s %lld, was %lld", want->name[i],
		 fos_live(want->name[i]), want->v[i]);
	return 0;
}

static int documented(const struct op *o, int e)
{
	const int *p;

	if (e == ENOMEM)
		return 1;
	for (p = o->errs; *p; p++)
		if (*p == e)
			return 1;
	return 0;
}

/* Run @o with its n-th point failing, n = 1, 2, ...; one TAP line. */
static void run_op(const struct op *o)
{
	unsigned int n, reached = 0, fails = 0, bad_errno = 0, leaks = 0,
		     no_retry = 0;
	char why[256] = "", first[256] = "";
	struct live before;
	struct st s;

	for (n = 1; n <= max_n; n++) {
		int ret, e, hit;

		live_read(&before);
		st_build(&s);
		if (o->run == op_lookup2 || o->run == op_remote_lookup)
			op_lookup(&s);
		fi_arm(n);
		ret = o->run(&s);
		e = errno;
		hit = fi_disarm();
		if (ret) {
			fails++;
			if (!documented(o, e)) {
				bad_errno++;
				if (!first[0])
					snprintf(first, sizeof(first),
						 "point %u: errno %d (%s)", n, e,
						 strerror(e));
			}
			/* The state is consistent: the same call works now. */
			if (o->run != op_revoke &&
			    o->run(&s) && !no_retry++ && !first[0])
				snprintf(first, sizeof(first),
					 "point %u: retry failed: %s", n,
					 strerror(errno));
		}
		st_free(&s);
		if (!live_back(&before, why, sizeof(why))) {
			leaks++;
			if (!first[0])
				snprintf(first, sizeof(first), "point %u: leak: %s", n, why);
			live_read(&before);	/* report each leak once */
		}
		if (!hit)
			break;
		reached++;
	}
	points += reached;
	injected += fails;
	if (bad_errno || leaks || no_retry)
		failed_ops++;
	tap_ok(!bad_errno && !leaks && !no_retry && n <= max_n,
	       "%s: %u injection points, %u failed the call, all with documented errnos, state consistent, nothing leaked%s%s",
	       o->name, reached, fails, first[0] ? "; first problem: " : "", first);
}

int main(int argc, char **argv)
{
	unsigned int i, nops, nremote;
	struct in_addr addr;
	int c;

	while ((c = getopt(argc, argv, "m:")) != -1) {
		if (c == 'm')
			max_n = strtoul(optarg, NULL, 0);
		else
			return 2;
	}
	if (access("/sys/class/misc/fractos", F_OK)) {
		printf("1..0 # SKIP fractos.ko is not loaded\n");
		return 0;
	}
	if (access("/proc/thread-self/fail-nth", F_OK)) {
		printf("1..0 # SKIP no fault injection in this kernel (CONFIG_FAULT_INJECTION: the debug kernel)\n");
		return 0;
	}
	if (geteuid() || fi_setup()) {
		printf("1..0 # SKIP cannot configure failslab/fail_page_alloc (root and debugfs)\n");
		return 0;
	}
	buf = mmap(NULL, 8 * PG, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		tap_bail("mmap");
	memset(buf, 0x3c, 8 * PG);
	nops = sizeof(ops) / sizeof(ops[0]);
	nremote = sizeof(remote_ops) / sizeof(remote_ops[0]);
	tap_plan(nops + nremote);
	for (i = 0; i < nops; i++)
		run_op(&ops[i]);
	if (!fos_nl_self_addr(&addr) || access(FOS_PARAM_DIR "fabric_loopback", F_OK)) {
		for (i = 0; i < nremote; i++)
			tap_skip("%s: no address for fabric_loopback", remote_ops[i].name);
	} else {
		self_node = fos_param("node_id");
		if (fos_nl_node_add(self_node, addr) || !fos_nl_wait_up(self_node, 30) ||
		    fos_set_param("fabric_loopback", 1))
			tap_bail("fabric_loopback setup");
		for (i = 0; i < nremote; i++)
			run_op(&remote_ops[i]);
		fos_set_param("fabric_loopback", 0);
		fos_nl_node_del(self_node);
		nops += nremote;
	}
	printf("# failnth: %u operations, %lu injection points exercised, %lu calls failed by injection, %lu operations with a problem\n",
	       nops, points, injected, failed_ops);
	return tap_finish();
}
