// SPDX-License-Identifier: GPL-2.0
/*
 * fractos selftest: Requests - request_create (new and derived), invoke,
 * receive (modes, errors, the cid limit), poll/epoll readiness and the
 * queue bound (max_queue, FRACTOS_INVOKE_WAIT).
 */
#define _GNU_SOURCE
#include "fos_proc.h"

/* ------------------------------------------------------------------ */

static void fill(void *p, size_t n, unsigned int seed)
{
	unsigned char *c = p;
	size_t i;

	for (i = 0; i < n; i++)
		c[i] = (unsigned char)(seed * 31 + i * 7 + (i >> 8));
}

/* request_create: new Requests and their malformed descriptors. */
static void test_create(int fd)
{
	static __u8 big[FRACTOS_REQ_MAX_IMM + 1];
	__u32 caps[FRACTOS_REQ_MAX_CAPS + 1];
	struct fractos_request_create a;
	struct fractos_cap_info info;
	char buf[64];
	__u32 r, m, d, i;
	int before;

	tap_errno(req_new(fd, NONE, 0x1234, "abc", 3, NULL, 0, &r), 0,
		  "create: new Request");
	tap_ok(!cap_info(fd, r, &info) && info.type == FRACTOS_OBJ_REQUEST &&
	       (info.info_flags & FRACTOS_INFO_OWNED) &&
	       !(info.info_flags & (FRACTOS_INFO_REVOKED | FRACTOS_INFO_REVTREE)) &&
	       info.depth == 0,
	       "create: CAP_INFO says Request, owned, depth 0");
	tap_errno(req_new(fd, NONE, 0, NULL, 0, NULL, 0, &i), 0,
		  "create: Request without arguments");
	cap_close(fd, i);

	tap_errno(mem_new(fd, buf, sizeof(buf), FRACTOS_PERM_ALL, &m), 0,
		  "create: a Memory to pass");
	before = space_ncaps(fd);

	memset(&a, 0, sizeof(a));
	a.base = NONE;
	a.flags = 1;
	tap_errno(ioctl(fd, FRACTOS_IOC_REQUEST_CREATE, &a), EINVAL,
		  "create: unknown flag -> EINVAL");
	a.flags = 0x80000000;
	tap_errno(ioctl(fd, FRACTOS_IOC_REQUEST_CREATE, &a), EINVAL,
		  "create: high flag bit -> EINVAL");
	a.flags = 0;
	a.__pad = 1;
	tap_errno(ioctl(fd, FRACTOS_IOC_REQUEST_CREATE, &a), EINVAL,
		  "create: non-zero __pad -> EINVAL");
	a.__pad = 0;
	a.reserved[1] = 1;
	tap_errno(ioctl(fd, FRACTOS_IOC_REQUEST_CREATE, &a), EINVAL,
		  "create: non-zero reserved -> EINVAL");
	a.reserved[1] = 0;

	tap_errno(req_new(fd, NONE, 0, big, FRACTOS_REQ_MAX_IMM + 1, NULL, 0,
			  NULL), E2BIG, "create: imm_len MAX_IMM + 1 -> E2BIG");
	tap_errno(req_new(fd, NONE, 0, big, 0xffffffffu, NULL, 0, NULL), E2BIG,
		  "create: imm_len 4G-1 -> E2BIG");
	for (i = 0; i <= FRACTOS_REQ_MAX_CAPS; i++)
		caps[i] = m;
	tap_errno(req_new(fd, NONE, 0, NULL, 0, caps, FRACTOS_REQ_MAX_CAPS + 1,
			  NULL), E2BIG, "create: ncaps MAX_CAPS + 1 -> E2BIG");
	tap_errno(req_new(fd, NONE, 0, (void *)BADPTR, 16, NULL, 0, NULL),
		  EFAULT, "create: imm_len > 0 with a bad pointer -> EFAULT");
	tap_errno(req_new(fd, NONE, 0, NULL, 1, NULL, 0, NULL), EFAULT,
		  "create: imm_len 1 with NULL -> EFAULT");
	tap_errno(req_new(fd, NONE, 0, (void *)BADPTR, 0, NULL, 0, &i), 0,
		  "create: bad imm pointer with imm_len 0 is not read");
	cap_close(fd, i);
	tap_errno(req_new(fd, NONE, 0, NULL, 0, (void *)BADPTR, 2, NULL),
		  EFAULT, "create: ncaps > 0 with a bad caps pointer -> EFAULT");
	caps[0] = m;
	caps[1] = 999999;
	tap_errno(req_new(fd, NONE, 0, NULL, 0, caps, 2, NULL), EBADF,
		  "create: unknown cid in caps -> EBADF");
	caps[1] = NONE;
	tap_errno(req_new(fd, NONE, 0, NULL, 0, caps, 2, NULL), EBADF,
		  "create: CID_INVALID in caps -> EBADF");
	tap_errno(req_new(fd, 999999, 0, NULL, 0, NULL, 0, NULL), EBADF,
		  "create: unknown base -> EBADF");
	tap_errno(req_new(fd, m, 0, NULL, 0, NULL, 0, NULL), EOPNOTSUPP,
		  "create: Memory as base -> EOPNOTSUPP");
	tap_errno(req_new(fd, r, 5, NULL, 0, NULL, 0, NULL), EINVAL,
		  "create: non-zero tag while deriving -> EINVAL");
	tap_eq(space_ncaps(fd), before, "create: failed creates left no cid");

	/* Exactly at the limits is fine. */
	for (i = 0; i < FRACTOS_REQ_MAX_CAPS; i++)
		caps[i] = m;
	tap_errno(req_new(fd, NONE, 0, big, FRACTOS_REQ_MAX_IMM, caps,
			  FRACTOS_REQ_MAX_CAPS, &d), 0,
		  "create: MAX_IMM bytes and MAX_CAPS caps accepted");
	tap_errno(req_new(fd, d, 0, NULL, 0, NULL, 0, &i), 0,
		  "create: deriving a full Request without arguments works");
	cap_close(fd, i);
	tap_errno(req_new(fd, d, 0, big, 1, NULL, 0, NULL), E2BIG,
		  "create: derived imms past MAX_IMM -> E2BIG");
	tap_errno(req_new(fd, d, 0, NULL, 0, caps, 1, NULL), E2BIG,
		  "create: derived caps past MAX_CAPS -> E2BIG");
	cap_close(fd, d);

	tap_errno(req_new(fd, NONE, 0, big, 4000, caps, 30, &d), 0,
		  "create: base with 4000 bytes, 30 caps");
	tap_errno(req_new(fd, d, 0, big, 96, caps, 2, &i), 0,
		  "create: derive up to exactly the limits");
	tap_errno(req_new(fd, i, 0, big, 1, NULL, 0, NULL), E2BIG,
		  "create: derive of derive past MAX_IMM -> E2BIG");
	cap_close(fd, i);
	tap_errno(req_new(fd, d, 0, big, 97, NULL, 0, NULL), E2BIG,
		  "create: derive 4000 + 97 bytes -> E2BIG");
	tap_errno(req_new(fd, d, 0, NULL, 0, caps, 3, NULL), E2BIG,
		  "create: derive 30 + 3 caps -> E2BIG");
	/* Revoked base. */
	tap_errno(req_new(fd, d, 0, NULL, 0, NULL, 0, &i), 0,
		  "create: derived child");
	tap_errno(cap_revoke(fd, d), 0, "create: revoke the base");
	tap_errno(req_new(fd, d, 0, NULL, 0, NULL, 0, NULL), EKEYREVOKED,
		  "create: deriving a revoked Request -> EKEYREVOKED");
	tap_ok(cap_revoked(fd, i) == 1,
	       "create: revoking the base revoked its derived child");
	tap_errno(invoke(fd, i, 0, NULL, 0, NULL, 0), EKEYREVOKED,
		  "create: invoking the derived child -> EKEYREVOKED");
	cap_close(fd, i);
	cap_close(fd, d);
	tap_errno(cap_revoke(fd, m), 0, "create: revoked Memory");
	tap_errno(req_new(fd, NONE, 0, NULL, 0, &m, 1, &i), 0,
		  "create: a revoked Memory can still be an argument");
	cap_close(fd, i);
	cap_close(fd, m);
	cap_close(fd, r);
}

/* The struct-size convention applies to Requests too. */
static void test_sizes(int fd)
{
	struct {
		struct fractos_request_create a;
		__u64 tail;
	} big;
	unsigned long cmd_small = _IOC(_IOC_READ | _IOC_WRITE,
				       FRACTOS_IOC_MAGIC, 0x0b,
				       sizeof(struct fractos_request_create) - 8);
	unsigned long cmd_big = _IOC(_IOC_READ | _IOC_WRITE, FRACTOS_IOC_MAGIC,
				     0x0b, sizeof(big));

	memset(&big, 0, sizeof(big));
	big.a.base = NONE;
	tap_errno(ioctl(fd, cmd_small, &big), EINVAL,
		  "size: short request_create struct -> EINVAL");
	big.tail = 1;
	tap_errno(ioctl(fd, cmd_big, &big), E2BIG,
		  "size: longer struct with non-zero tail -> E2BIG");
	big.tail = 0;
	tap_errno(ioctl(fd, cmd_big, &big), 0,
		  "size: longer struct with zero tail accepted");
	cap_close(fd, big.a.cid);
}

/*
 * Derived Requests inherit every argument and only append: three levels,
 * received in the provider's own space.
 */
static void test_derive(int fd)
{
	char b0[32], b1[32], b2[32];
	struct fractos_cap_info info, ri;
	__u32 m0, m1, m2, m3, r, d1, d2, cs[2];
	static struct msg msg;
	int ok;

	mem_new(fd, b0, sizeof(b0), FRACTOS_PERM_ALL, &m0);
	mem_new(fd, b1, sizeof(b1), FRACTOS_PERM_READ, &m1);
	mem_new(fd, b2, sizeof(b2), FRACTOS_PERM_ALL, &m2);
	mem_diminish(fd, m2, FRACTOS_PERM_WRITE, 4, 8, &m3);

	tap_errno(req_new(fd, NONE, 0xfeed, "base", 4, &m0, 1, &r), 0,
		  "derive: base Request (4 bytes, 1 cap)");
	cs[0] = m1;
	tap_errno(req_new(fd, r, 0, "+one", 4, cs, 1, &d1), 0,
		  "derive: level 1 appends 4 bytes, 1 cap");
	cs[0] = m2;
	cs[1] = m3;
	tap_errno(req_new(fd, d1, 0, "+two", 4, cs, 2, &d2), 0,
		  "derive: level 2 appends 4 bytes, 2 caps");
	tap_ok(!cap_info(fd, d2, &info) && info.type == FRACTOS_OBJ_REQUEST &&
	       (info.info_flags & FRACTOS_INFO_REVTREE) && info.depth == 2,
	       "derive: level 2 is a revocation-tree grandchild");

	tap_errno(invoke(fd, d2, 0, "+inv", 4, &m0, 1), 0,
		  "derive: invoke level 2 with one more argument");
	tap_errno(recv_msg(fd, FRACTOS_RECV_NONBLOCK, 0, &msg), 0,
		  "derive: received");
	tap_ok(msg.type == FRACTOS_MSG_REQUEST && msg.tag == 0xfeed,
	       "derive: type REQUEST, base's tag");
	tap_ok(msg.imm_len == 16 && !memcmp(msg.imm, "base+one+two+inv", 16),
	       "derive: immediates in order base, level 1, level 2, invoke");
	ok = msg.ncaps == 5;
	if (ok) {
		static const __u32 perms[5] = {
			FRACTOS_PERM_ALL, FRACTOS_PERM_READ, FRACTOS_PERM_ALL,
			FRACTOS_PERM_READ, FRACTOS_PERM_ALL,
		};
		__u32 src[5] = { m0, m1, m2, m3, m0 };
		int k;

		for (k = 0; k < 5; k++) {
			cap_info(fd, src[k], &ri);
			if (cap_info(fd, msg.caps[k], &info) ||
			    info.oid.id != ri.oid.id || info.perms != perms[k] ||
			    info.offset != ri.offset || info.len != ri.len)
				ok = 0;
		}
	}
	tap_ok(ok, "derive: caps in order base, level 1, level 2, invoke, views kept");
	for (ok = 0; ok < (int)msg.ncaps; ok++)
		cap_close(fd, msg.caps[ok]);

	/* Deriving never changes the base. */
	tap_errno(invoke(fd, r, 0, NULL, 0, NULL, 0), 0, "derive: invoke base");
	tap_ok(!recv_msg(fd, FRACTOS_RECV_NONBLOCK, 0, &msg) &&
	       msg.imm_len == 4 && !memcmp(msg.imm, "base", 4) &&
	       msg.ncaps == 1, "derive: base still has only its own arguments");
	cap_close(fd, msg.caps[0]);

	tap_errno(cap_revoke(fd, d1), 0, "derive: revoke level 1");
	tap_errno(invoke(fd, d2, 0, NULL, 0, NULL, 0), EKEYREVOKED,
		  "derive: level 2 revoked with level 1");
	tap_errno(invoke(fd, r, 0, NULL, 0, NULL, 0), 0,
		  "derive: base survives revoking a derived child");
	recv_msg(fd, FRACTOS_RECV_NONBLOCK, 0, &msg);
	cap_close(fd, msg.caps[0]);

	cap_close(fd, d2);
	cap_close(fd, d1);
	cap_close(fd, r);
	cap_close(fd, m3);
	cap_close(fd, m2);
	cap_close(fd, m1);
	cap_close(fd, m0);
}

/* request_invoke: malformed invocations queue nothing. */
static void test_invoke_errors(int fd)
{
	static __u8 big[FRACTOS_REQ_MAX_IMM + 1];
	__u32 caps[FRACTOS_REQ_MAX_CAPS + 1];
	struct fractos_request_invoke a;
	__u32 r, full, m, i;
	long msgs = live("messages");
	struct msg *msg = malloc(sizeof(*msg));
	char buf[16];
	int before;

	mem_new(fd, buf, sizeof(buf), FRACTOS_PERM_ALL, &m);
	req_new(fd, NONE, 7, NULL, 0, NULL, 0, &r);
	for (i = 0; i <= FRACTOS_REQ_MAX_CAPS; i++)
		caps[i] = m;
	req_new(fd, NONE, 8, big, 4000, caps, 30, &full);
	before = space_ncaps(fd);

	memset(&a, 0, sizeof(a));
	a.cid = r;
	a.flags = 4;
	tap_errno(ioctl(fd, FRACTOS_IOC_REQUEST_INVOKE, &a), EINVAL,
		  "invoke: unknown flag -> EINVAL");
	a.flags = FRACTOS_INVOKE_WAIT | FRACTOS_INVOKE_NOACK;
	tap_errno(ioctl(fd, FRACTOS_IOC_REQUEST_INVOKE, &a), EINVAL,
		  "invoke: WAIT with NOACK -> EINVAL");
	a.flags = 0;
	a.reserved[0] = 1;
	tap_errno(ioctl(fd, FRACTOS_IOC_REQUEST_INVOKE, &a), EINVAL,
		  "invoke: non-zero reserved -> EINVAL");
	tap_errno(invoke(fd, 12345, 0, NULL, 0, NULL, 0), EBADF,
		  "invoke: unknown cid -> EBADF");
	tap_errno(invoke(fd, NONE, 0, NULL, 0, NULL, 0), EBADF,
		  "invoke: CID_INVALID -> EBADF");
	tap_errno(invoke(fd, m, 0, NULL, 0, NULL, 0), EOPNOTSUPP,
		  "invoke: a Memory cap -> EOPNOTSUPP");
	tap_errno(invoke(fd, r, 0, big, FRACTOS_REQ_MAX_IMM + 1, NULL, 0),
		  E2BIG, "invoke: MAX_IMM + 1 bytes -> E2BIG");
	tap_errno(invoke(fd, r, 0, NULL, 0, caps, FRACTOS_REQ_MAX_CAPS + 1),
		  E2BIG, "invoke: MAX_CAPS + 1 caps -> E2BIG");
	tap_errno(invoke(fd, full, 0, big, 97, NULL, 0), E2BIG,
		  "invoke: Request's 4000 + 97 bytes -> E2BIG");
	tap_errno(invoke(fd, full, 0, NULL, 0, caps, 3), E2BIG,
		  "invoke: Request's 30 + 3 caps -> E2BIG");
	tap_errno(invoke(fd, r, 0, (void *)BADPTR, 8, NULL, 0), EFAULT,
		  "invoke: bad imm pointer -> EFAULT");
	tap_errno(invoke(fd, r, 0, NULL, 0, (void *)BADPTR, 1), EFAULT,
		  "invoke: bad caps pointer -> EFAULT");
	caps[0] = m;
	caps[1] = 4242;
	tap_errno(invoke(fd, r, 0, NULL, 0, caps, 2), EBADF,
		  "invoke: unknown cid among the caps -> EBADF");
	tap_eq(live("messages"), msgs, "invoke: failed invokes queued nothing");
	tap_errno(recv_msg(fd, FRACTOS_RECV_NONBLOCK, 0, msg), EAGAIN,
		  "invoke: receive queue still empty");
	tap_eq(space_ncaps(fd), before, "invoke: no cid leaked");

	/* At the limits exactly. */
	for (i = 0; i < FRACTOS_REQ_MAX_CAPS; i++)
		caps[i] = m;
	tap_errno(invoke(fd, full, 0, big, 96, caps, 2), 0,
		  "invoke: Request's arguments + extras up to the limits");
	tap_ok(!recv_msg(fd, FRACTOS_RECV_NONBLOCK, 0, msg) &&
	       msg->imm_len == FRACTOS_REQ_MAX_IMM &&
	       msg->ncaps == FRACTOS_REQ_MAX_CAPS && msg->tag == 8,
	       "invoke: full message received (4096 bytes, 32 caps)");
	for (i = 0; i < msg->ncaps; i++)
		cap_close(fd, msg->caps[i]);
	tap_errno(invoke(fd, r, 0, big, FRACTOS_REQ_MAX_IMM, caps,
			 FRACTOS_REQ_MAX_CAPS), 0,
		  "invoke: MAX_IMM, MAX_CAPS extras on an empty Request");
	tap_ok(!recv_msg(fd, FRACTOS_RECV_NONBLOCK, 0, msg) &&
	       msg->imm_len == FRACTOS_REQ_MAX_IMM &&
	       msg->ncaps == FRACTOS_REQ_MAX_CAPS, "invoke: received it");
	for (i = 0; i < msg->ncaps; i++)
		cap_close(fd, msg->caps[i]);

	tap_errno(cap_revoke(fd, r), 0, "invoke: revoke the Request");
	tap_errno(invoke(fd, r, 0, NULL, 0, NULL, 0), EKEYREVOKED,
		  "invoke: revoked Request -> EKEYREVOKED");
	tap_errno(cap_revoke(fd, r), EKEYREVOKED,
		  "invoke: revoking it again -> EKEYREVOKED");
	cap_close(fd, r);
	cap_close(fd, full);
	cap_close(fd, m);
	free(msg);
}

/*
 * The struct is checked writable before anything happens: a struct in
 * read-only memory gives EFAULT and the invocation did nothing.
 */
static void test_readonly_struct(int fd)
{
	struct fractos_request_invoke *a;
	long msgs = live("messages");
	__u32 r;

	req_new(fd, NONE, 0x0f, NULL, 0, NULL, 0, &r);
	a = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(a, 0, sizeof(*a));
	a->cid = r;
	a->imms = (uintptr_t)"ro";
	a->imm_len = 2;
	mprotect(a, 4096, PROT_READ);
	tap_errno(ioctl(fd, FRACTOS_IOC_REQUEST_INVOKE, a), EFAULT,
		  "readonly: invoke struct in read-only memory -> EFAULT");
	tap_eq(live("messages"), msgs, "readonly: ... and nothing was queued");
	tap_errno(recv_msg(fd, FRACTOS_RECV_NONBLOCK, 0,
			   &(struct msg){ 0 }), EAGAIN,
		  "readonly: queue empty");
	munmap(a, 4096);
	cap_close(fd, r);
}

/* Provider space closed: its Requests are revoked for every holder. */
static void test_provider_closed(int fd)
{
	int p = dev_open();
	__u32 rp, rc, d;
	struct msg *msg = malloc(sizeof(*msg));

	req_new(p, NONE, 1, "x", 1, NULL, 0, &rp);
	tap_errno(cap_move(p, rp, fd, &rc), 0,
		  "closed: Request moved to another space by export/import");
	tap_errno(req_new(fd, rc, 0, "y", 1, NULL, 0, &d), 0,
		  "closed: holder derives from it");
	tap_errno(invoke(fd, d, 0, NULL, 0, NULL, 0), 0,
		  "closed: invoke reaches the provider");
	tap_ok(!recv_msg(p, FRACTOS_RECV_NONBLOCK, 0, msg) &&
	       msg->imm_len == 2 && !memcmp(msg->imm, "xy", 2),
	       "closed: provider got base + derived immediates");
	tap_errno(invoke(fd, rc, 0, NULL, 0, NULL, 0), 0,
		  "closed: one more invocation left pending");
	close(p);
	tap_errno(invoke(fd, rc, 0, NULL, 0, NULL, 0), EKEYREVOKED,
		  "closed: invoke after the provider closed -> EKEYREVOKED");
	tap_errno(invoke(fd, d, 0, NULL, 0, NULL, 0), EKEYREVOKED,
		  "closed: derived Request also -> EKEYREVOKED");
	tap_ok(cap_revoked(fd, rc) == 1, "closed: CAP_INFO reports REVOKED");
	tap_errno(req_new(fd, rc, 0, NULL, 0, NULL, 0, NULL), EKEYREVOKED,
		  "closed: deriving it -> EKEYREVOKED");
	cap_close(fd, d);
	cap_close(fd, rc);
	free(msg);
}

/*
 * Delivery to another process: the provider is a child with its own
 * space; the Request travels by SCM_RIGHTS.  The child reports what it
 * received, the parent checks.
 */
struct report {
	int rc, err;
	__u32 type;
	__u64 tag;
	__u32 imm_len, ncaps;
	char imm[64];
	struct fractos_cap_info info[4];
	char data[4][16];
	int ncaps_space;
};

static void provider_child(int sock)
{
	static struct msg msg;
	struct report rep;
	__u32 r, k, i;
	char scratch[16];
	int s = dev_open();

	memset(&rep, 0, sizeof(rep));
	if (req_new(s, NONE, 0xc0ffee, "hdr:", 4, NULL, 0, &r) ||
	    send_cap(sock, s, r))
		_exit(2);
	rep.rc = recv_ms(s, &msg, 20000);
	rep.err = rep.rc ? errno : 0;
	rep.type = msg.type;
	rep.tag = msg.tag;
	rep.imm_len = msg.imm_len;
	rep.ncaps = msg.ncaps;
	memcpy(rep.imm, msg.imm, msg.imm_len < 64 ? msg.imm_len : 64);
	mem_new(s, scratch, sizeof(scratch), FRACTOS_PERM_ALL, &k);
	for (i = 0; i < msg.ncaps && i < 4; i++) {
		cap_info(s, msg.caps[i], &rep.info[i]);
		if (rep.info[i].type == FRACTOS_OBJ_MEMORY &&
		    (rep.info[i].perms & FRACTOS_PERM_READ)) {
			memset(scratch, 0, sizeof(scratch));
			if (!mem_copy(s, msg.caps[i], 0, k, 0,
				      rep.info[i].len < 16 ? rep.info[i].len : 16))
				memcpy(rep.data[i], scratch, 16);
		}
	}
	rep.ncaps_space = space_ncaps(s);
	xwrite(sock, &rep, sizeof(rep));
	/* Stay alive until the parent has looked. */
	xread(sock, &k, 1);
	_exit(0);
}

static void test_other_process(int fd)
{
	char buf[256];
	struct fractos_cap_info mi, ri;
	struct report rep;
	__u32 r, m, dim, self, caps[2];
	int sv[2], ok;
	pid_t pid;

	fill(buf, sizeof(buf), 3);
	socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);
	pid = fork();
	if (!pid) {
		close(sv[0]);
		provider_child(sv[1]);
	}
	close(sv[1]);
	tap_errno(recv_cap(sv[0], fd, &r), 0,
		  "process: imported the child's Request (SCM_RIGHTS)");
	mem_new(fd, buf, sizeof(buf), FRACTOS_PERM_ALL, &m);
	tap_errno(mem_diminish(fd, m, FRACTOS_PERM_WRITE, 100, 10, &dim), 0,
		  "process: diminished view [100, 110) read-only");
	req_new(fd, NONE, 0x5e1f, NULL, 0, NULL, 0, &self);
	caps[0] = dim;
	caps[1] = self;
	tap_errno(invoke(fd, r, 0, "payload", 7, caps, 2), 0,
		  "process: invoke with appended imms and caps");
	memset(&rep, 0, sizeof(rep));
	tap_errno(xread(sv[0], &rep, sizeof(rep)), 0, "process: got report");
	tap_ok(rep.rc == 0, "process: provider received (err %d)", rep.err);
	tap_ok(rep.type == FRACTOS_MSG_REQUEST && rep.tag == 0xc0ffee,
	       "process: type REQUEST and the provider's tag");
	tap_ok(rep.imm_len == 11 && !memcmp(rep.imm, "hdr:payload", 11),
	       "process: Request's imms then the invocation's");
	tap_eq(rep.ncaps, 2, "process: two capabilities delivered");
	cap_info(fd, m, &mi);
	tap_ok(rep.info[0].type == FRACTOS_OBJ_MEMORY &&
	       rep.info[0].offset == 100 && rep.info[0].len == 10 &&
	       rep.info[0].perms == FRACTOS_PERM_READ &&
	       rep.info[0].oid.id == mi.oid.id &&
	       !(rep.info[0].info_flags & FRACTOS_INFO_OWNED),
	       "process: diminished view stays diminished (offset 100, len 10, READ)");
	tap_ok(!memcmp(rep.data[0], buf + 100, 10),
	       "process: provider reads exactly the view's bytes");
	cap_info(fd, self, &ri);
	tap_ok(rep.info[1].type == FRACTOS_OBJ_REQUEST &&
	       rep.info[1].oid.id == ri.oid.id,
	       "process: Request cap arrives as the same object");
	tap_eq(rep.ncaps_space, 4,
	       "process: provider space holds its Request, 2 new cids, scratch");
	ok = 1;
	xwrite(sv[0], &ok, 1);
	tap_eq(reap(pid), 0, "process: provider exited cleanly");
	tap_errno(invoke(fd, r, 0, NULL, 0, NULL, 0), EKEYREVOKED,
		  "process: provider gone -> EKEYREVOKED");
	close(sv[0]);
	cap_close(fd, r);
	cap_close(fd, self);
	cap_close(fd, dim);
	cap_close(fd, m);
}

/* Exported fd inherited across fork, imported by the child. */
static void test_fork_inherit(int fd)
{
	__u32 r;
	int efd, st;
	pid_t pid;
	struct msg *msg = malloc(sizeof(*msg));

	req_new(fd, NONE, 0xf0f0, NULL, 0, NULL, 0, &r);
	efd = cap_export(fd, r);
	tap_ok(efd >= 0, "fork: exported Request fd");
	pid = fork();
	if (!pid) {
		int s = dev_open();
		__u32 c;

		if (cap_import(s, efd, &c))
			_exit(2);
		_exit(invoke(s, c, 0, "child", 5, NULL, 0) ? 3 : 0);
	}
	st = reap(pid);
	tap_eq(st, 0, "fork: child imported the inherited fd and invoked");
	tap_ok(!recv_msg(fd, FRACTOS_RECV_NONBLOCK, 0, msg) &&
	       msg->tag == 0xf0f0 && msg->imm_len == 5 &&
	       !memcmp(msg->imm, "child", 5),
	       "fork: message from the (now dead) child received");
	close(efd);
	cap_close(fd, r);
	free(msg);
}

/* Receive's own errors: sizes, faults, cid limit.  Messages are kept. */
static void test_receive_errors(int fd)
{
	struct fractos_request_receive a;
	char buf[32], imm[64];
	__u32 caps[4], r, m, dm;
	struct msg *msg = malloc(sizeof(*msg));
	long oldmax, caps_live;
	int rcv = dev_open(), n0;

	mem_new(fd, buf, sizeof(buf), FRACTOS_PERM_ALL, &m);
	mem_diminish(fd, m, FRACTOS_PERM_WRITE, 8, 8, &dm);
	req_new(rcv, NONE, 77, "0123456789", 10, NULL, 0, &r);
	cap_move(rcv, r, fd, &r);
	caps[0] = m;
	caps[1] = dm;
	tap_errno(invoke(fd, r, 0, "ab", 2, caps, 2), 0,
		  "recv: a 12-byte, 2-cap message queued");
	n0 = space_ncaps(rcv);

	memset(&a, 0, sizeof(a));
	a.flags = 4;
	tap_errno(ioctl(rcv, FRACTOS_IOC_REQUEST_RECEIVE, &a), EINVAL,
		  "recv: unknown flag -> EINVAL");
	a.flags = FRACTOS_RECV_NONBLOCK;
	a.reserved[1] = 1;
	tap_errno(ioctl(rcv, FRACTOS_IOC_REQUEST_RECEIVE, &a), EINVAL,
		  "recv: non-zero reserved -> EINVAL");
	memset(&a, 0, sizeof(a));
	a.flags = FRACTOS_RECV_NONBLOCK;
	a.imms = (uintptr_t)imm;
	a.imm_len = 11;
	a.caps = (uintptr_t)caps;
	a.ncaps = 4;
	tap_errno(ioctl(rcv, FRACTOS_IOC_REQUEST_RECEIVE, &a), EMSGSIZE,
		  "recv: imm buffer one byte short -> EMSGSIZE");
	tap_ok(a.imm_len == 12 && a.ncaps == 2,
	       "recv: EMSGSIZE reports the sizes needed (12, 2)");
	a.imm_len = 12;
	a.ncaps = 1;
	tap_errno(ioctl(rcv, FRACTOS_IOC_REQUEST_RECEIVE, &a), EMSGSIZE,
		  "recv: caps buffer too small -> EMSGSIZE");
	tap_ok(a.imm_len == 12 && a.ncaps == 2, "recv: sizes reported again");
	a.imm_len = 12;
	a.ncaps = 2;
	a.imms = BADPTR;
	tap_errno(ioctl(rcv, FRACTOS_IOC_REQUEST_RECEIVE, &a), EFAULT,
		  "recv: unwritable imm buffer -> EFAULT");
	tap_eq(space_ncaps(rcv), n0, "recv: EFAULT installed no cid");
	a.imms = (uintptr_t)imm;
	a.caps = BADPTR;
	caps_live = live("caps");
	tap_errno(ioctl(rcv, FRACTOS_IOC_REQUEST_RECEIVE, &a), EFAULT,
		  "recv: unwritable caps buffer -> EFAULT");
	tap_eq(space_ncaps(rcv), n0,
	       "recv: caps installed for the failed receive were closed");
	tap_eq(live("caps"), caps_live, "recv: no capability leaked");

	/* The receiver at its cid limit: all or nothing, message kept. */
	oldmax = param_get("max_caps");
	tap_ok(oldmax > 0, "recv: max_caps is %ld", oldmax);
	tap_errno(param_set("max_caps", n0 + 1), 0,
		  "recv: max_caps lowered to %d (room for one cid)", n0 + 1);
	a.caps = (uintptr_t)caps;
	a.imm_len = 12;
	a.ncaps = 4;
	tap_errno(ioctl(rcv, FRACTOS_IOC_REQUEST_RECEIVE, &a), EMFILE,
		  "recv: two caps, room for one -> EMFILE");
	tap_ok(a.imm_len == 12 && a.ncaps == 2,
	       "recv: EMFILE reports the message's sizes");
	tap_eq(space_ncaps(rcv), n0, "recv: EMFILE installed no cid");
	tap_eq(live("caps"), caps_live, "recv: EMFILE leaked nothing");
	tap_errno(param_set("max_caps", oldmax), 0, "recv: max_caps restored");

	tap_errno(recv_msg(rcv, FRACTOS_RECV_NONBLOCK, 0, msg), 0,
		  "recv: the kept message is received now");
	tap_ok(msg->tag == 77 && msg->imm_len == 12 &&
	       !memcmp(msg->imm, "0123456789ab", 12) && msg->ncaps == 2,
	       "recv: intact after every failed attempt");
	tap_errno(recv_msg(rcv, FRACTOS_RECV_NONBLOCK, 0, msg), EAGAIN,
		  "recv: and only once");
	close(rcv);
	cap_close(fd, r);
	cap_close(fd, dm);
	cap_close(fd, m);
	free(msg);
}

struct delayed {
	int fd;
	__u32 cid;
	int ms;
	int rc, err;
};

static void *delayed_invoke(void *p)
{
	struct delayed *d = p;

	usleep(d->ms * 1000);
	d->rc = invoke(d->fd, d->cid, 0, "late", 4, NULL, 0);
	d->err = errno;
	return NULL;
}

static void on_sig(int sig)
{
	(void)sig;
}

struct blocked {
	int fd;
	__u32 cid;
	int op;		/* 0: receive (3 s timeout), 1: invoke WAIT */
	volatile int done;
	int rc, err;
};

static void *blocked_op(void *p)
{
	struct blocked *b = p;
	static struct msg msg;

	if (b->op == 0)
		b->rc = recv_ms(b->fd, &msg, 3000);
	else
		b->rc = invoke(b->fd, b->cid, FRACTOS_INVOKE_WAIT, "w", 1,
			       NULL, 0);
	b->err = errno;
	__atomic_store_n(&b->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/*
 * Signal @th until its operation returns: a signal that arrives before
 * the thread blocks only runs the handler, the next one interrupts.
 */
static void interrupt(pthread_t th, struct blocked *b)
{
	int i;

	usleep(100000);
	for (i = 0; i < 100 && !__atomic_load_n(&b->done, __ATOMIC_SEQ_CST);
	     i++) {
		pthread_kill(th, SIGUSR1);
		usleep(50000);
	}
	pthread_join(th, NULL);
}

/* Receive modes: non-blocking, timeout, blocking; poll and epoll. */
static void test_receive_modes(int fd)
{
	struct msg *msg = malloc(sizeof(*msg));
	struct sigaction sa = { .sa_handler = on_sig };
	struct epoll_event ev = { .events = EPOLLIN }, out;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct delayed d = { .fd = fd, .ms = 200 };
	struct blocked b = { .fd = fd };
	pthread_t th;
	double t0, dt;
	__u32 r;
	int ep;

	req_new(fd, NONE, 99, NULL, 0, NULL, 0, &r);
	d.cid = r;
	tap_errno(recv_msg(fd, FRACTOS_RECV_NONBLOCK, 0, msg), EAGAIN,
		  "modes: non-blocking on an empty queue -> EAGAIN");
	tap_errno(recv_msg(fd, FRACTOS_RECV_NONBLOCK | FRACTOS_RECV_TIMEOUT,
			   1000000000ULL, msg), EAGAIN,
		  "modes: NONBLOCK wins over TIMEOUT -> EAGAIN");
	t0 = now_ms();
	tap_errno(recv_msg(fd, FRACTOS_RECV_TIMEOUT, 0, msg), ETIMEDOUT,
		  "modes: timeout 0 -> ETIMEDOUT");
	tap_ok(now_ms() - t0 < 1000, "modes: ... at once");
	t0 = now_ms();
	tap_errno(recv_ms(fd, msg, 300), ETIMEDOUT,
		  "modes: 300 ms timeout -> ETIMEDOUT");
	dt = now_ms() - t0;
	tap_ok(dt >= 250 && dt < 5000, "modes: waited %.0f ms (300 asked)", dt);

	pthread_create(&th, NULL, delayed_invoke, &d);
	t0 = now_ms();
	tap_errno(recv_ms(fd, msg, 10000), 0,
		  "modes: timed receive woken by an invoke");
	dt = now_ms() - t0;
	pthread_join(th, NULL);
	tap_ok(dt < 9000 && msg->tag == 99 && msg->imm_len == 4,
	       "modes: got it after %.0f ms, before the timeout", dt);

	pthread_create(&th, NULL, delayed_invoke, &d);
	tap_errno(recv_msg(fd, 0, 0, msg), 0,
		  "modes: blocking receive woken by an invoke");
	pthread_join(th, NULL);

	/* poll/epoll readiness */
	tap_eq(poll(&pfd, 1, 0), 0, "poll: not readable with an empty queue");
	ep = epoll_create1(EPOLL_CLOEXEC);
	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	tap_eq(epoll_wait(ep, &out, 1, 0), 0, "epoll: no event while empty");
	invoke(fd, r, 0, NULL, 0, NULL, 0);
	tap_ok(poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN),
	       "poll: POLLIN with a message queued");
	tap_ok(epoll_wait(ep, &out, 1, 0) == 1 && (out.events & EPOLLIN),
	       "epoll: EPOLLIN with a message queued");
	recv_msg(fd, FRACTOS_RECV_NONBLOCK, 0, msg);
	tap_eq(poll(&pfd, 1, 0), 0, "poll: not readable once received");
	tap_eq(epoll_wait(ep, &out, 1, 0), 0, "epoll: no event once received");
	pthread_create(&th, NULL, delayed_invoke, &d);
	tap_ok(poll(&pfd, 1, 10000) == 1 && (pfd.revents & POLLIN),
	       "poll: a sleeping poll() is woken by an invoke");
	tap_ok(epoll_wait(ep, &out, 1, 10000) == 1, "epoll: and epoll too");
	pthread_join(th, NULL);
	recv_msg(fd, FRACTOS_RECV_NONBLOCK, 0, msg);
	close(ep);

	/* A signal interrupts a blocking receive (no SA_RESTART). */
	sigaction(SIGUSR1, &sa, NULL);
	pthread_create(&th, NULL, blocked_op, &b);
	interrupt(th, &b);
	tap_ok(b.rc == -1 && b.err == EINTR,
	       "modes: signal interrupts a waiting receive -> EINTR (got %d/%s)",
	       b.rc, strerror(b.err));

	/*
	 * With SA_RESTART too: the uAPI promises EINTR, and a restarted
	 * timed receive would start its timeout over again.
	 */
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	b.done = 0;
	t0 = now_ms();
	pthread_create(&th, NULL, blocked_op, &b);
	interrupt(th, &b);
	dt = now_ms() - t0;
	tap_ok(b.rc == -1 && b.err == EINTR && dt < 2500,
	       "modes: SA_RESTART signal interrupts a timed receive -> EINTR (got %d/%s after %.0f ms)",
	       b.rc, strerror(b.err), dt);
	sa.sa_flags = 0;
	sigaction(SIGUSR1, &sa, NULL);
	cap_close(fd, r);
	free(msg);
}

/* The queue bound (max_queue) and FRACTOS_INVOKE_WAIT. */
static void test_backpressure(int fd)
{
	struct msg *msg = malloc(sizeof(*msg));
	struct blocked b = { .fd = fd };
	long oldq = param_get("max_queue");
	__u32 r, rc;
	pthread_t th;
	int i, ok, p;
	char c;

	tap_errno(param_set("max_queue", 4), 0, "queue: max_queue set to 4");
	p = dev_open();
	req_new(p, NONE, 5, NULL, 0, NULL, 0, &r);
	cap_move(p, r, fd, &rc);
	ok = 1;
	for (i = 0; i < 4; i++) {
		c = '0' + i;
		ok &= !invoke(fd, rc, 0, &c, 1, NULL, 0);
	}
	tap_ok(ok, "queue: 4 invokes fill the queue");
	tap_errno(invoke(fd, rc, 0, "x", 1, NULL, 0), EAGAIN,
		  "queue: invoke into a full queue -> EAGAIN");
	tap_errno(invoke(fd, rc, 0, "x", 1, NULL, 0), EAGAIN,
		  "queue: still EAGAIN");

	b.cid = rc;
	b.op = 1;
	pthread_create(&th, NULL, blocked_op, &b);
	usleep(300000);
	tap_ok(!__atomic_load_n(&b.done, __ATOMIC_SEQ_CST),
	       "queue: INVOKE_WAIT blocks while the queue is full");
	tap_ok(!recv_msg(p, FRACTOS_RECV_NONBLOCK, 0, msg) &&
	       msg->imm_len == 1 && msg->imm[0] == '0',
	       "queue: receiver drains the oldest message");
	pthread_join(th, NULL);
	tap_ok(b.rc == 0, "queue: the waiting invoke completed (%s)",
	       b.rc ? strerror(b.err) : "ok");
	ok = 1;
	for (i = 1; i < 4; i++)
		ok &= !recv_msg(p, FRACTOS_RECV_NONBLOCK, 0, msg) &&
		      msg->imm[0] == '0' + i;
	ok &= !recv_msg(p, FRACTOS_RECV_NONBLOCK, 0, msg) &&
	      msg->imm[0] == 'w';
	tap_ok(ok, "queue: FIFO order, the waiter's message last");
	tap_errno(recv_msg(p, FRACTOS_RECV_NONBLOCK, 0, msg), EAGAIN,
		  "queue: empty again");

	/* A signal interrupts the wait. */
	for (i = 0; i < 4; i++)
		invoke(fd, rc, 0, "f", 1, NULL, 0);
	b.done = 0;
	pthread_create(&th, NULL, blocked_op, &b);
	interrupt(th, &b);
	tap_ok(b.rc == -1 && b.err == EINTR,
	       "queue: signal interrupts INVOKE_WAIT -> EINTR (got %d/%s)",
	       b.rc, strerror(b.err));

	/* The provider going away wakes the waiter. */
	b.done = 0;
	pthread_create(&th, NULL, blocked_op, &b);
	usleep(300000);
	tap_ok(!__atomic_load_n(&b.done, __ATOMIC_SEQ_CST),
	       "queue: another waiter blocked");
	close(p);
	pthread_join(th, NULL);
	tap_ok(b.rc == -1 && b.err == EKEYREVOKED,
	       "queue: provider closed -> waiter fails EKEYREVOKED (got %d/%s)",
	       b.rc, strerror(b.err));
	tap_errno(param_set("max_queue", oldq), 0, "queue: max_queue restored");
	cap_close(fd, rc);
	free(msg);
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_sig };
	struct snap base;
	int fd;

	need_module();
	tap_start();
	sigaction(SIGUSR1, &sa, NULL);
	snap_take(&base);
	fd = dev_open();

	test_create(fd);
	test_sizes(fd);
	test_derive(fd);
	test_invoke_errors(fd);
	test_readonly_struct(fd);
	test_provider_closed(fd);
	test_other_process(fd);
	test_fork_inherit(fd);
	test_receive_errors(fd);
	test_receive_modes(fd);
	test_backpressure(fd);

	tap_eq(space_ncaps(fd), 0, "every test closed its cids");
	close(fd);
	snap_check(&base, "request");
	return tap_end();
}
