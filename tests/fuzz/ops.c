// SPDX-License-Identifier: GPL-2.0
/*
 * fosfuzz ops: the grammar.  One op seed picks an operation from the table
 * below and every field of its struct: cids that are valid, stale, foreign
 * (another space's) or forged; offsets and lengths at and past the edges of
 * views; flags and reserved fields with unknown bits; struct sizes shorter
 * and longer than the header's; bad pointers; the ioctl or the io_uring
 * front door.  Meta ops open, close and dup spaces, pass fds over
 * SCM_RIGHTS to a peer process, fork children that share the spaces and
 * kill them (or the peer) with SIGKILL at random points.
 *
 * Every result is checked against the errno table of uapi/linux/fractos.h:
 * an errno the header does not document for the op, or a call that
 * succeeds when it must fail (unknown flag bits, non-zero reserved bytes, a
 * struct shorter than the op's, a non-zero unknown tail), is a violation:
 * the process prints it and exits with FZ_EXIT_VIOLATION.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/fractos.h>
#include "fuzz.h"
#include "fz_int.h"

/* ---- errno sets ---------------------------------------------------- */

struct eset {
	uint64_t w[4];		/* errno < 256 */
};

static void eset_add(struct eset *s, const int *e)
{
	for (; *e; e++)
		s->w[*e / 64] |= 1ULL << (*e % 64);
}

static int eset_has(const struct eset *s, int e)
{
	return e > 0 && e < 256 && (s->w[e / 64] >> (e % 64)) & 1;
}

#define E(...) ((const int[]){ __VA_ARGS__, 0 })

/* Every operation (DOC: Errno table). */
static const int *const E_COMMON = E(EFAULT, EINVAL, E2BIG, ENOTTY, ENOMEM);
/* Operations taking a cid. */
static const int *const E_CID = E(EBADF, EKEYREVOKED, EOPNOTSUPP);
/* Calls to other nodes (fabric_loopback makes local objects take them). */
static const int *const E_REMOTE = E(EHOSTUNREACH, EINTR, ETIMEDOUT, ENOMEM,
				     EKEYREVOKED, EPROTO, EAGAIN);


struct fz_op {
	const char *name;
	unsigned long cmd;	/* 0: not an ioctl */
	unsigned int weight;
	const int *allow;	/* beyond E_COMMON */
	int takes_cid;		/* add E_CID */
	int remote;		/* add E_REMOTE with fabric_loopback */
	struct eset set;	/* built by fz_ops_init() */
};

static struct fz_op ops[OP_NR] = {
	[OP_SPACE_INFO] = { "space_info", FRACTOS_IOC_SPACE_INFO, 2, E(0), 0, 0 },
	/* EBADF: FRACTOS_MEMORY_DMABUF's fd 0, if closed. */
	[OP_MEM_CREATE] = { "memory_create", FRACTOS_IOC_MEMORY_CREATE, 10,
			    E(EMFILE, EINTR, EOPNOTSUPP, EBADF), 0, 0 },
	[OP_DIMINISH] = { "memory_diminish", FRACTOS_IOC_MEMORY_DIMINISH, 7,
			  E(EMFILE, ERANGE), 1, 0 },
	[OP_COPY] = { "memory_copy", FRACTOS_IOC_MEMORY_COPY, 7,
		      E(EACCES, ERANGE, EINTR), 1, 1 },
	[OP_REVOKE] = { "cap_revoke", FRACTOS_IOC_CAP_REVOKE, 4, E(0), 1, 1 },
	[OP_REVTREE] = { "cap_create_revtree", FRACTOS_IOC_CAP_CREATE_REVTREE, 5,
			 E(EMFILE, EMLINK), 1, 0 },
	[OP_CLOSE] = { "cap_close", FRACTOS_IOC_CAP_CLOSE, 5, E(EBADF), 0, 0 },
	[OP_DUP] = { "cap_dup", FRACTOS_IOC_CAP_DUP, 4, E(EBADF, EMFILE), 0, 0 },
	[OP_INFO] = { "cap_info", FRACTOS_IOC_CAP_INFO, 3, E(EBADF), 0, 0 },
	[OP_EXPORT] = { "cap_export", FRACTOS_IOC_CAP_EXPORT, 5,
			E(EMLINK, EMFILE, ENFILE), 1, 0 },
	[OP_IMPORT] = { "cap_import", FRACTOS_IOC_CAP_IMPORT, 5,
			E(EBADF, EMFILE), 0, 0 },
	[OP_REQ_CREATE] = { "request_create", FRACTOS_IOC_REQUEST_CREATE, 9,
			    E(EMFILE, EMLINK), 1, 0 },
	[OP_INVOKE] = { "request_invoke", FRACTOS_IOC_REQUEST_INVOKE, 10,
			E(EMLINK, EAGAIN, EINTR), 1, 1 },
	[OP_RECEIVE] = { "request_receive", FRACTOS_IOC_REQUEST_RECEIVE, 8,
			 E(EAGAIN, ETIMEDOUT, EINTR, EMSGSIZE, EMFILE), 0, 0 },
	[OP_MON_RECV] = { "monitor_receive", FRACTOS_IOC_MONITOR_RECEIVE, 4,
			  E(ENOSPC), 1, 0 },
	[OP_MON_DELEG] = { "monitor_delegate", FRACTOS_IOC_MONITOR_DELEGATE, 3,
			   E(ENOSPC, EPERM, EBUSY), 1, 0 },
	[OP_NAME_PUB] = { "name_publish", FRACTOS_IOC_NAME_PUBLISH, 3,
			  E(EPERM, EMLINK, EEXIST, ENOSPC), 1, 0 },
	[OP_NAME_LOOKUP] = { "name_lookup", FRACTOS_IOC_NAME_LOOKUP, 3,
			     E(ENOENT, EMFILE), 0, 0 },
	[OP_NAME_UNPUB] = { "name_unpublish", FRACTOS_IOC_NAME_UNPUBLISH, 2,
			    E(ENOENT, EPERM), 0, 0 },
	[OP_SPACE_CONTACT] = { "space_contact", FRACTOS_IOC_SPACE_CONTACT, 3,
			       E(ENOSPC, ENOENT, EPERM, EBUSY), 1, 0 },
	[OP_MEM_GRANT] = { "memory_grant", FRACTOS_IOC_MEMORY_GRANT, 2,
			   E(EPERM, EACCES, EBUSY, EAGAIN, EMFILE), 1, 1 },
	[OP_RAW] = { "raw_ioctl", 0, 2, E(0), 0, 0 },
	[OP_SPACE_OPEN] = { "space_open", 0, 2, E(0), 0, 0 },
	[OP_SPACE_CLOSE] = { "space_close", 0, 1, E(0), 0, 0 },
	[OP_SPACE_DUP] = { "space_dup", 0, 1, E(0), 0, 0 },
	[OP_CAPFD_CLOSE] = { "capfd_close", 0, 2, E(0), 0, 0 },
	[OP_SEND] = { "send_fd", 0, 3, E(0), 0, 0 },
	[OP_FORK] = { "fork", 0, 1, E(0), 0, 0 },
	[OP_KILL] = { "kill", 0, 1, E(0), 0, 0 },
	[OP_REMAP] = { "remap", 0, 1, E(0), 0, 0 },
	[OP_POLL] = { "poll", 0, 1, E(0), 0, 0 },
};

/* Remote lookups (FRACTOS_NAME_NODE) add these to E_REMOTE. */
static const int *const E_LOOKUP_NODE = E(EOPNOTSUPP, EPROTO);
/* Remote invocations. */
static const int *const E_INVOKE_REMOTE = E(EMSGSIZE, EOPNOTSUPP);
/* An fd that is not a space: not open, or not ours. */
static const int *const E_NOT_SPACE = E(EBADF, ENOTTY);
/* A cancelled or interrupted io_uring command. */
static const int *const E_URING = E(ECANCELED, EINTR);

static unsigned int weight_total;

void fz_ops_init(void)
{
	unsigned int i;

	weight_total = 0;
	for (i = 0; i < OP_NR; i++) {
		memset(&ops[i].set, 0, sizeof(ops[i].set));
		eset_add(&ops[i].set, E_COMMON);
		eset_add(&ops[i].set, ops[i].allow);
		if (ops[i].takes_cid)
			eset_add(&ops[i].set, E_CID);
		if (ops[i].remote && (fz_opts.loopback || fz_opts.peer))
			eset_add(&ops[i].set, E_REMOTE);
		weight_total += ops[i].weight;
	}
	/*
	 * With fabric_loopback a received capability is a proxy that may be
	 * revoked; a remote invocation's errors.
	 */
	if (fz_opts.loopback || fz_opts.peer)
		eset_add(&ops[OP_INVOKE].set, E_INVOKE_REMOTE);
}

static unsigned int pick_op(uint64_t seed)
{
	struct rng r = { seed };
	uint64_t w = below(&r, weight_total);
	unsigned int i;

	for (i = 0; i < OP_NR; i++) {
		if (w < ops[i].weight)
			return i;
		w -= ops[i].weight;
	}
	return OP_SPACE_INFO;
}

const char *fz_op_index_name(unsigned int i)
{
	return i < OP_NR ? ops[i].name : "?";
}

unsigned int fz_op_count(void)
{
	return OP_NR;
}

const char *fz_op_name(uint64_t seed)
{
	return ops[pick_op(seed)].name;
}

/* ---- per-process buffers ------------------------------------------- */

unsigned char *fz_buf_rw;
static unsigned char *buf_ro, *buf_none, *buf_big;
static unsigned char imm_buf[FRACTOS_REQ_MAX_IMM + 64];
static uint32_t cap_buf[FRACTOS_REQ_MAX_CAPS + 8];
static int devnull = -1;
#define BIG_LEN	(12UL << 20)

static void *xmap(size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS |
		       MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED) {
		perror("fosfuzz: mmap");
		_exit(FZ_EXIT_SETUP);
	}
	return p;
}

static void buffers_init(void)
{
	if (fz_buf_rw)
		return;
	fz_buf_rw = xmap(FZ_BUF, PROT_READ | PROT_WRITE);
	memset(fz_buf_rw, 0x5a, FZ_BUF);
	buf_ro = xmap(16384, PROT_READ | PROT_WRITE);
	memset(buf_ro, 0xa5, 16384);
	mprotect(buf_ro, 16384, PROT_READ);
	buf_none = xmap(8192, PROT_NONE);
	buf_big = xmap(BIG_LEN, PROT_READ | PROT_WRITE);
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
}

/* ---- the state ------------------------------------------------------ */

void fz_cids_add(struct fz_cids *c, uint32_t cid)
{
	c->v[c->next] = cid;
	c->next = (c->next + 1) % FZ_NCID;
	if (c->n < FZ_NCID)
		c->n++;
}

static void cids_clear(struct fz_cids *c)
{
	memset(c, 0, sizeof(*c));
}

void fz_sp_reset(struct fz_state *st, int i)
{
	cids_clear(&st->any[i]);
	cids_clear(&st->mem[i]);
	cids_clear(&st->req[i]);
}

static void on_alarm(int sig)
{
	(void)sig;
}

void fz_state_init(struct fz_state *st, const char *who)
{
	struct sigaction sa = { .sa_handler = on_alarm };	/* no SA_RESTART */
	int i;

	memset(st, 0, sizeof(*st));
	st->who = who;
	buffers_init();
	sigaction(SIGALRM, &sa, NULL);
	for (i = 0; i < FZ_NSP; i++) {
		st->sp[i] = open(FRACTOS_DEVICE, O_RDWR | O_CLOEXEC);
		if (st->sp[i] < 0) {
			perror("fosfuzz: open " FRACTOS_DEVICE);
			_exit(FZ_EXIT_SETUP);
		}
	}
	for (i = 0; i < FZ_NCAPFD; i++)
		st->capfd[i] = -1;
	st->sock = -1;
	st->ring_ok = !io_uring_queue_init(16, &st->ring, 0);
}

/*
 * Every program starts from the same small population, so that its ops
 * reach past "no such cid": in each space a Memory, a read-only view of
 * it and a Request carrying that view, and each space holds the next
 * space's Request (as its client).
 */
void fz_state_populate(struct fz_state *st)
{
	uint32_t rq[FZ_NSP];
	int i;

	for (i = 0; i < FZ_NSP; i++) {
		struct fractos_memory_create mc = {
			.addr = (uintptr_t)fz_buf_rw + i * 8192, .len = 8192,
			.perms = FRACTOS_PERM_ALL,
		};
		struct fractos_memory_diminish md = {
			.drop_perms = FRACTOS_PERM_WRITE, .offset = 64, .len = 1024,
		};
		struct fractos_request_create rc = {
			.base = FRACTOS_CID_INVALID, .tag = 100 + i,
			.imms = (uintptr_t)"fz", .imm_len = 2, .ncaps = 1,
			.caps = (uintptr_t)&md.new_cid,
		};

		rq[i] = FRACTOS_CID_INVALID;
		if (ioctl(st->sp[i], FRACTOS_IOC_MEMORY_CREATE, &mc))
			continue;
		fz_cids_add(&st->any[i], mc.cid);
		fz_cids_add(&st->mem[i], mc.cid);
		md.cid = mc.cid;
		if (ioctl(st->sp[i], FRACTOS_IOC_MEMORY_DIMINISH, &md))
			continue;
		fz_cids_add(&st->any[i], md.new_cid);
		fz_cids_add(&st->mem[i], md.new_cid);
		if (ioctl(st->sp[i], FRACTOS_IOC_REQUEST_CREATE, &rc))
			continue;
		fz_cids_add(&st->any[i], rc.cid);
		fz_cids_add(&st->req[i], rc.cid);
		rq[i] = rc.cid;
	}
	for (i = 0; i < FZ_NSP; i++) {
		int j = (i + 1) % FZ_NSP;
		struct fractos_cap_export ex = { .cid = rq[j] };
		struct fractos_cap_import im = { 0 };

		if (rq[j] == FRACTOS_CID_INVALID ||
		    ioctl(st->sp[j], FRACTOS_IOC_CAP_EXPORT, &ex))
			continue;
		im.fd = ex.fd;
		if (!ioctl(st->sp[i], FRACTOS_IOC_CAP_IMPORT, &im)) {
			fz_cids_add(&st->any[i], im.cid);
			fz_cids_add(&st->req[i], im.cid);
		}
		close(ex.fd);
	}
}

/* ---- violations ----------------------------------------------------- */

struct fz_state *fz_cur_st;
char fz_cur_desc[512];

void fz_violation(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fosfuzz: VIOLATION [%s %d] %s: ", fz_cur_st ? fz_cur_st->who : "?",
		getpid(), fz_cur_desc);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	_exit(FZ_EXIT_VIOLATION);
}

/* ---- picking arguments --------------------------------------------- */

static int pick_sp_idx(struct fz_state *st, struct rng *r)
{
	int i = below(r, FZ_NSP), k;

	for (k = 0; k < FZ_NSP; k++, i = (i + 1) % FZ_NSP)
		if (st->sp[i] >= 0)
			return i;
	return -1;
}

static uint32_t from(struct rng *r, const struct fz_cids *c)
{
	return c->n ? c->v[below(r, c->n)] : (uint32_t)below(r, 8);
}

enum { K_ANY, K_MEM, K_REQ };

static uint32_t pick_cid(struct fz_state *st, struct rng *r, int s, int kind)
{
	unsigned int p = below(r, 100);
	int o = (s + 1 + below(r, FZ_NSP - 1)) % FZ_NSP;

	if (p < 65) {
		if (kind == K_MEM && st->mem[s].n)
			return from(r, &st->mem[s]);
		if (kind == K_REQ && st->req[s].n)
			return from(r, &st->req[s]);
		return from(r, &st->any[s]);
	}
	if (p < 78)
		return from(r, &st->any[s]);
	if (p < 86)	/* foreign: a cid of another space */
		return from(r, below(r, 2) ? &st->any[o] : &st->mem[o]);
	if (p < 91)
		return below(r, 40);
	if (p < 94)
		return FRACTOS_CID_INVALID;
	if (p < 97)
		return (uint32_t)rn(r);
	return (1U << 20) - below(r, 2);
}

/* An offset or a length around the edges of a view of @view bytes. */
static uint64_t pick_len(struct rng *r, uint64_t view)
{
	switch (below(r, 12)) {
	case 0: return 0;
	case 1: return 1;
	case 2: return view ? view - 1 : 0;
	case 3: return view;
	case 4: return view + 1;
	case 5: return 4096;
	case 6: return UINT64_MAX;
	case 7: return UINT64_MAX - below(r, 4096);
	case 8: return 1ULL << (32 + below(r, 30));
	case 9: return below(r, 64);
	default: return view ? 1 + below(r, view) : below(r, 8192);
	}
}

/* The view length of @cid in space @fd (CAP_INFO), or a guess. */
static uint64_t view_of(int fd, uint32_t cid)
{
	struct fractos_cap_info i = { .cid = cid };

	if (ioctl(fd, FRACTOS_IOC_CAP_INFO, &i) || !i.len)
		return 4096;
	return i.len;
}

static uint64_t pick_addr(struct rng *r, uint64_t *room)
{
	switch (below(r, 40)) {
	case 0: *room = 16384; return (uintptr_t)buf_ro + below(r, 4096);
	case 1: *room = 8192; return (uintptr_t)buf_none;
	case 2: *room = 4096; return 0;
	case 3: *room = 4096; return 0xffff888000000000ULL;
	case 4: *room = 4096; return (1ULL << 47) - 4096;
	case 5: *room = 4096; return 0x8000000000000000ULL;
	case 6: *room = BIG_LEN; return (uintptr_t)buf_big;
	default: {
		uint64_t off = below(r, 2) ? below(r, FZ_BUF) : below(r, 16) * 4096;

		*room = FZ_BUF - off;
		return (uintptr_t)fz_buf_rw + off;
	}
	}
}

/* A user pointer for an in buffer: mostly good, sometimes not. */
static uint64_t pick_ptr(struct rng *r, void *good)
{
	switch (below(r, 25)) {
	case 0: return 0;
	case 1: return 0xffff888000000000ULL;
	case 2: return (uintptr_t)buf_none;
	default: return (uintptr_t)good;
	}
}

static uint32_t pick_flags(struct rng *r, uint32_t valid)
{
	unsigned int p = below(r, 100);

	if (p < 94)
		return valid ? (uint32_t)below(r, valid + 1) & valid : 0;
	if (p < 97)
		return valid | (1U << below(r, 32));
	return (uint32_t)rn(r);
}

static const char *const names[] = {
	"fz", "fz-a", "fz-b", "fz.c", "", " ", "bad name", "\x7f", "\x21",
};

static void pick_name(struct rng *r, struct fractos_name *n)
{
	static char longname[FRACTOS_NAME_MAX + 2];
	unsigned int p = below(r, 20);

	if (p < 15) {
		/* Mostly the four valid names, so that lookups find some. */
		const char *s = names[below(r, 3) ? below(r, 4) :
				      below(r, sizeof(names) / sizeof(names[0]))];

		n->name = (uintptr_t)s;
		n->name_len = strlen(s);
	} else if (p < 18) {
		memset(longname, 'x', sizeof(longname));
		n->name = (uintptr_t)longname;
		n->name_len = FRACTOS_NAME_MAX + below(r, 2);
	} else {
		n->name = pick_ptr(r, NULL);
		n->name_len = below(r, 300);
	}
}

/* ---- the call: ioctl or io_uring, with size and struct mangling ----- */

enum { M_NONE, M_SHORT, M_LONG0, M_LONGX, M_DIR, M_BADPTR, M_RESERVED };

static unsigned char scratch[1024] __attribute__((aligned(16)));

struct call {
	int fd;
	int sp;			/* fd is a space */
	unsigned long cmd;
	void *arg;
	size_t size;
	int mangle;
	int blocking;		/* may wait: arm a timer */
	int must_fail;		/* bad flags: success is a violation */
};

static int uring_call(struct fz_state *st, unsigned long cmd, int fd,
		      uint64_t argp, int blocking)
{
	struct fractos_uring_cmd uc = { .arg = argp };
	struct __kernel_timespec ts = { .tv_sec = blocking ? 0 : 20,
					.tv_nsec = blocking ? 30000000 : 0 };
	struct io_uring_sqe *sqe = io_uring_get_sqe(&st->ring);
	struct io_uring_cqe *cqe;
	int res, ret;

	if (!sqe)
		return -ENOMEM;
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
	sqe->cmd_op = cmd;
	memcpy(sqe->cmd, &uc, sizeof(uc));
	sqe->user_data = 1;
	io_uring_submit(&st->ring);
	do
		ret = io_uring_wait_cqe_timeout(&st->ring, &cqe, &ts);
	while (ret == -EINTR);
	if (ret == -ETIME) {
		sqe = io_uring_get_sqe(&st->ring);
		io_uring_prep_cancel64(sqe, 1, 0);
		sqe->user_data = 2;
		io_uring_submit(&st->ring);
		ts.tv_sec = 30;
		ts.tv_nsec = 0;
		res = -EAGAIN;
		for (;;) {
			ret = io_uring_wait_cqe_timeout(&st->ring, &cqe, &ts);
			if (ret == -EINTR)
				continue;
			if (ret)
				fz_violation("io_uring command not completed 30 s after its cancel (%d)",
					  ret);
			if (cqe->user_data == 1) {
				res = cqe->res;
				io_uring_cqe_seen(&st->ring, cqe);
				break;
			}
			/*
			 * The cancel found nothing: a blocking receive the
			 * kernel parked (6.7 on; the uAPI header's
			 * "io_uring").  Closing the ring cancels it.
			 */
			if (cqe->user_data == 2 && cqe->res == -ENOENT) {
				io_uring_cqe_seen(&st->ring, cqe);
				io_uring_queue_exit(&st->ring);
				st->ring_ok = !io_uring_queue_init(16, &st->ring, 0);
				return -ECANCELED;
			}
			io_uring_cqe_seen(&st->ring, cqe);
		}
		/* The cancel's own CQE, if it is still to come. */
		ts.tv_sec = 0;
		ts.tv_nsec = 1000000;
		while (!io_uring_wait_cqe_timeout(&st->ring, &cqe, &ts))
			io_uring_cqe_seen(&st->ring, cqe);
		return res;
	}
	if (ret)
		fz_violation("io_uring wait failed (%d)", ret);
	res = cqe->res;
	io_uring_cqe_seen(&st->ring, cqe);
	return res;
}

/* Runs the call; 0 or -errno.  On success the out fields are in c->arg. */
static int do_call(struct fz_state *st, struct rng *r, struct call *c,
		   const struct eset *allowed)
{
	unsigned long cmd = c->cmd;
	uint64_t argp = (uintptr_t)scratch;
	size_t sz = c->size, csz = c->size;
	int use_uring = st->ring_ok && c->sp && chance(r, 20);
	int ret, e;
	/*
	 * Again every 20 ms until disarmed: a signal that came before the
	 * call reached its wait (a slow guest) must not leave it waiting.
	 */
	struct itimerval it = { .it_value = { 0, 20000 },
				.it_interval = { 0, 20000 } };
	struct itimerval off = { 0 };

	memset(scratch, 0, sizeof(scratch));
	memcpy(scratch, c->arg, sz);
	switch (c->mangle) {
	case M_SHORT:
		csz = below(r, sz);
		break;
	case M_LONG0:
		csz = sz + 8 * (1 + below(r, 8));
		break;
	case M_LONGX:
		csz = sz + 8 * (1 + below(r, 8));
		scratch[sz + below(r, csz - sz)] = 1 + below(r, 255);
		break;
	case M_DIR:
		cmd = _IOC(below(r, 3), _IOC_TYPE(cmd), _IOC_NR(cmd), sz);
		if (cmd == c->cmd)
			cmd = _IOC(_IOC_NONE, _IOC_TYPE(cmd), _IOC_NR(cmd), sz);
		break;
	case M_BADPTR:
		argp = below(r, 2) ? 0 : (uintptr_t)buf_none;
		break;
	case M_RESERVED:
		/* Every struct ends in "__u64 reserved[2]". */
		scratch[sz - 16 + below(r, 16)] = 1 + below(r, 255);
		break;
	}
	if (csz != sz)
		cmd = _IOC(_IOC_DIR(cmd), _IOC_TYPE(cmd), _IOC_NR(cmd), csz);

	snprintf(fz_cur_desc + strlen(fz_cur_desc), sizeof(fz_cur_desc) - strlen(fz_cur_desc),
		 " via %s, size %zu/%zu, mangle %d", use_uring ? "io_uring" : "ioctl",
		 csz, sz, c->mangle);
	/* io_uring waits itself (uring_call cancels what takes too long). */
	if (c->blocking && !use_uring)
		setitimer(ITIMER_REAL, &it, NULL);
	if (use_uring) {
		FZ_COUNT(uring);
		ret = uring_call(st, cmd, c->fd, argp, c->blocking);
		e = ret < 0 ? -ret : 0;
	} else {
		ret = ioctl(c->fd, cmd, (void *)(uintptr_t)argp);
		e = ret < 0 ? errno : 0;
	}
	if (c->blocking && !use_uring)
		setitimer(ITIMER_REAL, &off, NULL);
	FZ_COUNT(ops);
	if (!e) {
		if (c->mangle == M_SHORT || c->mangle == M_LONGX ||
		    c->mangle == M_DIR || c->mangle == M_BADPTR ||
		    c->mangle == M_RESERVED || c->must_fail)
			fz_violation("succeeded, must fail");
		memcpy(c->arg, scratch, sz);
		return 0;
	}
	FZ_COUNT(errs);
	if (eset_has(allowed, e))
		return -e;
	if (!c->sp) {
		struct eset ns = { 0 };

		eset_add(&ns, E_NOT_SPACE);
		if (eset_has(&ns, e))
			return -e;
	}
	if (use_uring) {
		struct eset us = { 0 };

		eset_add(&us, E_URING);
		if (eset_has(&us, e))
			return -e;
	}
	fz_violation("errno %d (%s) is not documented for this op", e, strerror(e));
	return -e;
}

/* Mostly well-formed; sometimes mangled. */
static int pick_mangle(struct rng *r)
{
	if (chance(r, 94))
		return below(r, 4) ? M_NONE : M_LONG0;
	return 1 + below(r, M_RESERVED);
}

/* ---- the ops -------------------------------------------------------- */

static void note(const char *fmt, ...)
{
	va_list ap;
	size_t l = strlen(fz_cur_desc);

	va_start(ap, fmt);
	vsnprintf(fz_cur_desc + l, sizeof(fz_cur_desc) - l, fmt, ap);
	va_end(ap);
}

/* The fd an ioctl goes to: a space, or (rarely) something else. */
static int pick_fd(struct fz_state *st, struct rng *r, int s, int *is_sp)
{
	*is_sp = 1;
	if (chance(r, 97))
		return st->sp[s];
	*is_sp = 0;
	switch (below(r, 3)) {
	case 0: return devnull;
	case 1: return st->capfd[below(r, FZ_NCAPFD)];
	default: return 1000 + below(r, 10);
	}
}

void fz_capfd_keep(struct fz_state *st, struct rng *r, int fd)
{
	int i = below(r, FZ_NCAPFD);

	if (st->capfd[i] >= 0)
		close(st->capfd[i]);
	st->capfd[i] = fd;
}

static int ioctl_op(struct fz_state *st, struct rng *r, unsigned int op, int s)
{
	union {
		struct fractos_space_info si;
		struct fractos_memory_create mc;
		struct fractos_memory_diminish md;
		struct fractos_memory_copy cp;
		struct fractos_cap_arg ca;
		struct fractos_cap_info ci;
		struct fractos_cap_export ex;
		struct fractos_cap_import im;
		struct fractos_request_create rc;
		struct fractos_request_invoke iv;
		struct fractos_request_receive rv;
		struct fractos_monitor mo;
		struct fractos_name nm;
		struct fractos_space_contact sc;
		struct fractos_memory_grant mg;
	} a;
	struct call c = { .cmd = ops[op].cmd, .arg = &a,
			  .size = _IOC_SIZE(ops[op].cmd) };
	struct eset allowed = ops[op].set;
	uint64_t room, view;
	int ret, i, n;

	memset(&a, 0, sizeof(a));
	c.fd = pick_fd(st, r, s, &c.sp);
	c.mangle = pick_mangle(r);
	switch (op) {
	case OP_SPACE_INFO:
		a.si.flags = pick_flags(r, 0);
		c.must_fail = !!a.si.flags;
		break;
	case OP_MEM_CREATE:
		a.mc.addr = pick_addr(r, &room);
		a.mc.len = chance(r, 50) ? 1 + below(r, room < 16384 ? room : 16384) :
			   pick_len(r, room);
		a.mc.perms = chance(r, 85) ? 1 + below(r, 3) : pick_flags(r, 0);
		a.mc.flags = pick_flags(r, 0);
		/* FRACTOS_MEMORY_DMABUF with fd 0, which is no dma-buf. */
		c.must_fail = a.mc.flags || !a.mc.perms ||
			      (a.mc.perms & ~FRACTOS_PERM_ALL);
		note(" addr %#llx len %#llx perms %#x", (unsigned long long)a.mc.addr,
		     (unsigned long long)a.mc.len, a.mc.perms);
		break;
	case OP_DIMINISH:
		a.md.cid = pick_cid(st, r, s, K_MEM);
		view = chance(r, 50) ? view_of(st->sp[s], a.md.cid) : 4096;
		a.md.drop_perms = chance(r, 90) ? below(r, 4) : pick_flags(r, 3);
		if (chance(r, 50)) {	/* inside the view */
			a.md.offset = below(r, view);
			a.md.len = 1 + below(r, view - a.md.offset);
		} else {
			a.md.offset = below(r, 3) ? below(r, view) : pick_len(r, view);
			a.md.len = pick_len(r, view - (a.md.offset < view ? a.md.offset : 0));
		}
		a.md.flags = pick_flags(r, 0);
		c.must_fail = a.md.flags || (a.md.drop_perms & ~FRACTOS_PERM_ALL);
		note(" cid %u drop %#x off %#llx len %#llx", a.md.cid, a.md.drop_perms,
		     (unsigned long long)a.md.offset, (unsigned long long)a.md.len);
		break;
	case OP_COPY:
		a.cp.src = pick_cid(st, r, s, K_MEM);
		a.cp.dst = pick_cid(st, r, s, K_MEM);
		view = chance(r, 50) ? view_of(st->sp[s], a.cp.src) : 4096;
		if (chance(r, 60)) {	/* small ranges near the start */
			a.cp.src_offset = below(r, 2) ? 0 : below(r, 64);
			a.cp.dst_offset = below(r, 2) ? 0 : below(r, 64);
			a.cp.len = below(r, 5) ? 1 + below(r, 64) : 0;
		} else {
			a.cp.src_offset = below(r, 2) ? 0 : pick_len(r, view);
			a.cp.dst_offset = below(r, 2) ? 0 : pick_len(r, view);
			a.cp.len = below(r, 4) ? pick_len(r, view) : 0;
		}
		a.cp.flags = pick_flags(r, 0);
		c.must_fail = !!a.cp.flags;
		c.blocking = fz_opts.loopback || fz_opts.peer;
		note(" %u+%#llx -> %u+%#llx len %#llx", a.cp.src,
		     (unsigned long long)a.cp.src_offset, a.cp.dst,
		     (unsigned long long)a.cp.dst_offset, (unsigned long long)a.cp.len);
		break;
	case OP_REVOKE:
	case OP_REVTREE:
	case OP_CLOSE:
	case OP_DUP:
		a.ca.cid = pick_cid(st, r, s, below(r, 2) ? K_REQ : K_MEM);
		a.ca.flags = pick_flags(r, 0);
		c.must_fail = !!a.ca.flags;
		c.blocking = op == OP_REVOKE && (fz_opts.loopback || fz_opts.peer);
		note(" cid %u", a.ca.cid);
		break;
	case OP_INFO:
		a.ci.cid = pick_cid(st, r, s, K_ANY);
		a.ci.flags = pick_flags(r, 0);
		c.must_fail = !!a.ci.flags;
		note(" cid %u", a.ci.cid);
		break;
	case OP_EXPORT:
		a.ex.cid = pick_cid(st, r, s, K_ANY);
		a.ex.flags = pick_flags(r, FRACTOS_EXPORT_CLOEXEC);
		c.must_fail = !!(a.ex.flags & ~FRACTOS_EXPORT_CLOEXEC);
		note(" cid %u", a.ex.cid);
		break;
	case OP_IMPORT:
		switch (below(r, 8)) {
		case 0: a.im.fd = st->sp[s]; break;
		case 1: a.im.fd = devnull; break;
		case 2: a.im.fd = -1 - (int)below(r, 3); break;
		case 3: a.im.fd = 1000 + below(r, 8); break;
		default:
			/* A held capability fd if there is one. */
			a.im.fd = -1;
			for (i = below(r, FZ_NCAPFD), n = 0; n < FZ_NCAPFD && a.im.fd < 0;
			     n++, i = (i + 1) % FZ_NCAPFD)
				a.im.fd = st->capfd[i];
			break;
		}
		a.im.flags = pick_flags(r, 0);
		c.must_fail = !!a.im.flags;
		note(" fd %d", a.im.fd);
		break;
	case OP_REQ_CREATE:
		a.rc.base = chance(r, 60) ? FRACTOS_CID_INVALID :
			    pick_cid(st, r, s, K_REQ);
		a.rc.tag = chance(r, 80) ? 0 : rn(r);
		if (a.rc.base == FRACTOS_CID_INVALID && chance(r, 70))
			a.rc.tag = 1 + below(r, 1000);
		/* fall through */
	case OP_INVOKE: {
		uint32_t *ncaps = op == OP_INVOKE ? &a.iv.ncaps : &a.rc.ncaps;
		uint32_t *ilen = op == OP_INVOKE ? &a.iv.imm_len : &a.rc.imm_len;
		__u64 *imms = op == OP_INVOKE ? &a.iv.imms : &a.rc.imms;
		__u64 *caps = op == OP_INVOKE ? &a.iv.caps : &a.rc.caps;
		static const uint32_t ilens[] = { 0, 0, 1, 8, 64, 4095, 4096, 4097 };

		if (op == OP_INVOKE) {
			a.iv.cid = pick_cid(st, r, s, K_REQ);
			const uint32_t both = FRACTOS_INVOKE_WAIT |
					      FRACTOS_INVOKE_NOACK;

			a.iv.flags = chance(r, 90) ? 0 : pick_flags(r, both);
			/* unknown bits, or WAIT with NOACK */
			c.must_fail = (a.iv.flags & ~both) ||
				      (a.iv.flags & both) == both;
			c.blocking = (a.iv.flags & FRACTOS_INVOKE_WAIT) ||
				     fz_opts.loopback || fz_opts.peer;
		} else {
			a.rc.flags = chance(r, 85) ? 0 :
				     pick_flags(r, FRACTOS_CREATE_AT_OWNER);
			/* unknown bits, or AT_OWNER without a base */
			c.must_fail = (a.rc.flags & ~FRACTOS_CREATE_AT_OWNER) ||
				      ((a.rc.flags & FRACTOS_CREATE_AT_OWNER) &&
				       a.rc.base == FRACTOS_CID_INVALID);
			/* a derivation at another node's owner: a call */
			if ((a.rc.flags & FRACTOS_CREATE_AT_OWNER) &&
			    (fz_opts.loopback || fz_opts.peer)) {
				eset_add(&allowed, E_REMOTE);
				eset_add(&allowed, E(ENOSPC));
				c.blocking = 1;
			}
		}
		*ilen = chance(r, 90) ? ilens[below(r, 8)] : (uint32_t)rn(r);
		*imms = *ilen > sizeof(imm_buf) ? (uintptr_t)imm_buf : pick_ptr(r, imm_buf);
		if (chance(r, 60))
			*ilen = below(r, 4) ? below(r, 32) : 0;
		n = below(r, 8) ? (int)below(r, 3) :
		    (below(r, 2) ? 31 + (int)below(r, 3) : (int)below(r, 40));
		*ncaps = chance(r, 98) ? (uint32_t)n : (uint32_t)rn(r);
		for (i = 0; i < n && i < (int)(sizeof(cap_buf) / 4); i++)
			cap_buf[i] = pick_cid(st, r, s, below(r, 2) ? K_MEM : K_REQ);
		*caps = *ncaps > sizeof(cap_buf) / 4 ? (uintptr_t)cap_buf :
			pick_ptr(r, cap_buf);
		note(" cid %u imm %u ncaps %u", op == OP_INVOKE ? a.iv.cid : a.rc.base,
		     *ilen, *ncaps);
		break;
	}
	case OP_RECEIVE: {
		static const uint32_t ilens[] = { 0, 8, 16, 4096 };
		unsigned int p = below(r, 100);

		if (p < 70) {
			a.rv.flags = FRACTOS_RECV_NONBLOCK;
		} else if (p < 85) {
			a.rv.flags = FRACTOS_RECV_TIMEOUT;
			a.rv.timeout_ns = below(r, 2000000);
			c.blocking = 1;
		} else if (p < 90) {
			c.blocking = 1;	/* waits: the timer interrupts it */
		} else {
			a.rv.flags = pick_flags(r, 3);
			a.rv.timeout_ns = below(r, 1000000);
			c.must_fail = !!(a.rv.flags & ~3U);
			c.blocking = 1;
		}
		a.rv.imm_len = ilens[below(r, 4)];
		a.rv.imms = pick_ptr(r, imm_buf);
		a.rv.ncaps = below(r, 3) ? FRACTOS_REQ_MAX_CAPS : below(r, 3);
		a.rv.caps = pick_ptr(r, cap_buf);
		note(" flags %#x imm %u ncaps %u", a.rv.flags, a.rv.imm_len, a.rv.ncaps);
		break;
	}
	case OP_MON_RECV:
	case OP_MON_DELEG:
		a.mo.cid = pick_cid(st, r, s, K_ANY);
		a.mo.cookie = rn(r);
		a.mo.flags = pick_flags(r, 0);
		c.must_fail = !!a.mo.flags;
		note(" cid %u", a.mo.cid);
		break;
	case OP_NAME_PUB:
	case OP_NAME_LOOKUP:
	case OP_NAME_UNPUB:
		a.nm.cid = pick_cid(st, r, s, K_ANY);
		pick_name(r, &a.nm);
		if (op == OP_NAME_PUB) {
			a.nm.flags = pick_flags(r, FRACTOS_NAME_WORLD);
			c.must_fail = !!(a.nm.flags & ~FRACTOS_NAME_WORLD);
		} else if (op == OP_NAME_LOOKUP) {
			a.nm.flags = pick_flags(r, fz_opts.loopback || fz_opts.peer ?
						 FRACTOS_NAME_NODE : 0);
			c.must_fail = !!(a.nm.flags & ~FRACTOS_NAME_NODE);
			if (a.nm.flags & FRACTOS_NAME_NODE) {
				a.nm.node = chance(r, 80) ?
					    (fz_opts.peer ? fz_opts.peer : fz_opts.node) :
					    (uint32_t)rn(r);
				eset_add(&allowed, E_REMOTE);
				eset_add(&allowed, E_LOOKUP_NODE);
				c.blocking = 1;
			} else if (chance(r, 10)) {
				a.nm.node = rn(r);
				c.must_fail = 1;
			}
		} else {
			a.nm.flags = pick_flags(r, 0);
			c.must_fail = !!a.nm.flags;
		}
		note(" name_len %u flags %#x", a.nm.name_len, a.nm.flags);
		break;
	case OP_SPACE_CONTACT:
		/* mostly ADD, DEL, STEAL and UNSTEAL, now and then any op */
		a.sc.op = chance(r, 90) ? 1 + below(r, 4) : (uint32_t)rn(r);
		if (a.sc.op == FRACTOS_CONTACT_ADD)
			a.sc.cid = pick_cid(st, r, s, below(r, 4) ? K_REQ : K_MEM);
		else if (a.sc.op == FRACTOS_CONTACT_STEAL ||
			 a.sc.op == FRACTOS_CONTACT_UNSTEAL)
			a.sc.cid = pick_cid(st, r, s, below(r, 4) ? K_MEM : K_REQ);
		if (a.sc.op >= FRACTOS_CONTACT_DEL &&
		    a.sc.op <= FRACTOS_CONTACT_UNSTEAL)
			a.sc.id = chance(r, 90) ?
				  below(r, FRACTOS_MAX_CONTACTS + 2) :
				  (uint32_t)rn(r);
		a.sc.flags = pick_flags(r, 0);
		c.must_fail = a.sc.flags || !a.sc.op ||
			      a.sc.op > FRACTOS_CONTACT_UNSTEAL;
		note(" op %u cid %u id %u", a.sc.op, a.sc.cid, a.sc.id);
		break;
	case OP_MEM_GRANT:
		a.mg.cid = pick_cid(st, r, s, below(r, 4) ? K_MEM : K_REQ);
		a.mg.req = below(r, 2) ? FRACTOS_CID_INVALID :
			   pick_cid(st, r, s, below(r, 4) ? K_REQ : K_MEM);
		a.mg.flags = pick_flags(r, 0);
		c.must_fail = !!a.mg.flags;
		c.blocking = fz_opts.loopback || fz_opts.peer;
		note(" cid %u req %u", a.mg.cid, a.mg.req);
		break;
	}
	ret = do_call(st, r, &c, &allowed);
	if (ret || c.mangle == M_DIR || c.mangle == M_BADPTR)
		return ret;
	/* Remember what the call returned. */
	switch (op) {
	case OP_MEM_CREATE:
		fz_cids_add(&st->any[s], a.mc.cid);
		fz_cids_add(&st->mem[s], a.mc.cid);
		break;
	case OP_DIMINISH:
		fz_cids_add(&st->any[s], a.md.new_cid);
		fz_cids_add(&st->mem[s], a.md.new_cid);
		break;
	case OP_REVTREE:
	case OP_DUP:
		fz_cids_add(&st->any[s], a.ca.new_cid);
		break;
	case OP_EXPORT:
		fz_capfd_keep(st, r, a.ex.fd);
		break;
	case OP_IMPORT:
		fz_cids_add(&st->any[s], a.im.cid);
		break;
	case OP_REQ_CREATE:
		fz_cids_add(&st->any[s], a.rc.cid);
		fz_cids_add(&st->req[s], a.rc.cid);
		break;
	case OP_RECEIVE:
		for (i = 0; i < (int)a.rv.ncaps && i < FRACTOS_REQ_MAX_CAPS; i++)
			fz_cids_add(&st->any[s], cap_buf[i]);
		break;
	case OP_NAME_LOOKUP:
		fz_cids_add(&st->any[s], a.nm.cid);
		break;
	case OP_MEM_GRANT:
		if (a.mg.new_cid != FRACTOS_CID_INVALID) {
			fz_cids_add(&st->any[s], a.mg.new_cid);
			fz_cids_add(&st->mem[s], a.mg.new_cid);
		}
		/*
		 * The grant took our mapping of those pages away: map the
		 * buffer anew, as OP_REMAP does (the Memory keeps the old).
		 */
		if (mmap(fz_buf_rw, FZ_BUF, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
		    MAP_FAILED)
			fz_violation("remap after a grant failed");
		break;
	}
	return 0;
}

/* A random ioctl number of the fractos magic: size, direction, nr. */
int fz_raw_op(struct fz_state *st, struct rng *r, int s)
{
	unsigned int nr = below(r, 0x20);
	size_t size = 8 * below(r, 16);
	struct eset allowed = ops[OP_RAW].set;
	unsigned char arg[128];
	struct call c = { .arg = arg };
	unsigned int i;

	for (i = 0; i < sizeof(arg); i++)
		arg[i] = below(r, 4) ? 0 : (unsigned char)rn(r);
	c.cmd = _IOC(below(r, 4), chance(r, 90) ? FRACTOS_IOC_MAGIC : rn(r) & 0xff,
		     nr, size);
	c.size = size < 16 ? 16 : size;
	c.fd = pick_fd(st, r, s, &c.sp);
	/* What the number would decode to, if it names an op. */
	for (i = 0; i < OP_NR_IOCTL; i++)
		if (ops[i].cmd && _IOC_NR(ops[i].cmd) == nr) {
			allowed = ops[i].set;
			eset_add(&allowed, E_REMOTE);
			eset_add(&allowed, E_LOOKUP_NODE);
			eset_add(&allowed, E_INVOKE_REMOTE);
			eset_add(&allowed, E_CID);
			eset_add(&allowed, ops[OP_RECEIVE].allow);
		}
	note(" cmd %#lx", c.cmd);
	/* Random bytes can make a blocking RECEIVE or INVOKE: a timer ends them. */
	c.blocking = 1;
	return do_call(st, r, &c, &allowed);
}

int fz_run_op(struct fz_state *st, uint64_t seed)
{
	struct rng r = { seed };
	unsigned int op = pick_op(seed);
	int s, ret;

	rn(&r);		/* the draw pick_op used */
	fz_cur_st = st;
	s = pick_sp_idx(st, &r);
	snprintf(fz_cur_desc, sizeof(fz_cur_desc), "op %s (seed %#llx) space %d",
		 ops[op].name, (unsigned long long)seed, s);
	if (s < 0) {
		/* Every space closed: reopen one. */
		op = OP_SPACE_OPEN;
		s = 0;
	}
	if (op < OP_NR_IOCTL)
		ret = ioctl_op(st, &r, op, s);
	else
		ret = fz_meta_op(st, &r, op, s);
	if (fz_opts.verbose)
		fprintf(stderr, "%s %d: %s -> %d\n", st->who, getpid(), fz_cur_desc, ret);
	if (fz_stats) {
		__atomic_add_fetch(&fz_stats->op_calls[op], 1, __ATOMIC_RELAXED);
		if (!ret)
			__atomic_add_fetch(&fz_stats->op_ok[op], 1, __ATOMIC_RELAXED);
	}
	return ret;
}

void fz_state_fini(struct fz_state *st)
{
	int i;

	fz_cur_st = st;
	snprintf(fz_cur_desc, sizeof(fz_cur_desc), "end of program");
	fz_procs_fini(st);
	for (i = 0; i < FZ_NCAPFD; i++)
		if (st->capfd[i] >= 0)
			close(st->capfd[i]);
	for (i = 0; i < FZ_NSP; i++)
		if (st->sp[i] >= 0)
			close(st->sp[i]);
	if (st->ring_ok)
		io_uring_queue_exit(&st->ring);
}
