// SPDX-License-Identifier: GPL-2.0
/*
 * fractos selftest: malformed calls, for every ioctl in the uAPI header.
 *
 * For each operation a valid call is built first (and must give its
 * normal result), then one thing is broken at a time:
 *   - every unknown flag bit                       -> EINVAL
 *   - a non-zero __pad or reserved word            -> EINVAL
 *   - a struct shorter than the operation's        -> EINVAL
 *   - a longer struct with a non-zero tail         -> E2BIG
 *     (a zero tail works like the exact size)
 *   - an unreadable struct pointer                 -> EFAULT
 *   - a read-only struct (result not writable)     -> EFAULT, and the
 *     call had no effect: no cid, fd, revocation, message or monitor
 * plus bad buffer pointers inside the structs (EFAULT), unknown ioctl
 * numbers and wrong direction bits (ENOTTY).
 */
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include "tap.h"
#include "fos_util.h"

#define PG	4096UL
#define RW	FRACTOS_PERM_ALL

/* Persistent cids: 0 and 1 two memories, 2 a Request; temporaries >= 3. */
#define M	0
#define D	1
#define R	2
#define TMP	3

static int sfd, capfd, fdmark;
static unsigned char *buf;
static char curname[64];	/* the name a NAME_* setup published */
static unsigned int nameseq;

static void bail_if(int ret, const char *what)
{
	if (ret)
		tap_bail("%s", what);
}

/* Drop everything a call may have left behind. */
static void reset(void)
{
	struct fractos_request_receive rr;
	uint32_t cids[FRACTOS_REQ_MAX_CAPS];
	char imm[FRACTOS_REQ_MAX_IMM];
	int i;

	for (;;) {
		memset(&rr, 0, sizeof(rr));
		rr.flags = FRACTOS_RECV_NONBLOCK;
		rr.imms = (uintptr_t)imm;
		rr.imm_len = sizeof(imm);
		rr.caps = (uintptr_t)cids;
		rr.ncaps = FRACTOS_REQ_MAX_CAPS;
		if (ioctl(sfd, FRACTOS_IOC_REQUEST_RECEIVE, &rr))
			break;
	}
	for (i = TMP; i < 48; i++)
		fos_close(sfd, i);
	for (i = fdmark; i < fdmark + 16; i++)
		close(i);
#ifdef FRACTOS_IOC_NAME_UNPUBLISH
	if (curname[0]) {
		struct fractos_name n = {
			.name = (uintptr_t)curname,
			.name_len = strlen(curname),
		};

		ioctl(sfd, FRACTOS_IOC_NAME_UNPUBLISH, &n);
		curname[0] = 0;
	}
#endif
}

/* One operation: how to build a valid call, and where its fields are. */
struct op {
	const char *name;
	unsigned long cmd;
	size_t size;
	long flags_off;		/* -1: no flags field */
	uint32_t valid_flags;
	long pad_off;		/* -1: no __pad */
	size_t pad_size;
	long res_off;		/* reserved[2] */
	int ok_errno;		/* result of the valid call: 0 or an errno */
	void (*setup)(void *a);
};

static void su_none(void *a)
{
	(void)a;
}

static void su_create(void *a)
{
	struct fractos_memory_create *p = a;

	p->addr = (uintptr_t)buf;
	p->len = PG;
	p->perms = RW;
}

static void su_diminish(void *a)
{
	struct fractos_memory_diminish *p = a;

	p->cid = M;
	p->offset = 1;
	p->len = 10;
}

static void su_copy(void *a)
{
	struct fractos_memory_copy *p = a;

	p->src = M;
	p->dst = D;
	p->len = 16;
}

/* A fresh revtree child to revoke, so that M itself stays valid. */
static void su_revoke(void *a)
{
	struct fractos_cap_arg *p = a;

	bail_if(fos_revtree(sfd, M, &p->cid), "revtree");
}

static void su_cap_m(void *a)
{
	((struct fractos_cap_arg *)a)->cid = M;
}

static void su_close(void *a)
{
	struct fractos_cap_arg *p = a;

	bail_if(fos_dup(sfd, M, &p->cid), "dup");
}

static void su_info(void *a)
{
	((struct fractos_cap_info *)a)->cid = M;
}

static void su_export(void *a)
{
	((struct fractos_cap_export *)a)->cid = M;
}

static void su_import(void *a)
{
	((struct fractos_cap_import *)a)->fd = capfd;
}

static void su_req_create(void *a)
{
	struct fractos_request_create *p = a;

	p->base = FRACTOS_CID_INVALID;
	p->tag = 7;
}

static void su_invoke(void *a)
{
	((struct fractos_request_invoke *)a)->cid = R;
}

static void su_receive(void *a)
{
	((struct fractos_request_receive *)a)->flags = FRACTOS_RECV_NONBLOCK;
}

static void su_mon_receive(void *a)
{
	struct fractos_monitor *p = a;

	bail_if(fos_mem_create(sfd, buf, PG, RW, &p->cid), "create");
	p->cookie = 42;
}

#ifdef FRACTOS_IOC_NAME_PUBLISH
static const char basename_[] = "fractos-badinput-base";

/* PUBLISH: publish M under a fresh name. */
static void su_name_publish(void *a)
{
	struct fractos_name *p = a;

	snprintf(curname, sizeof(curname), "fractos-badinput-%d-%u",
		 (int)getpid(), nameseq++);
	p->cid = M;
	p->name = (uintptr_t)curname;
	p->name_len = strlen(curname);
}

/* LOOKUP: the name published at start. */
static void su_name_lookup(void *a)
{
	struct fractos_name *p = a;

	p->name = (uintptr_t)basename_;
	p->name_len = strlen(basename_);
}

/* UNPUBLISH: a freshly published name. */
static void su_name_unpublish(void *a)
{
	struct fractos_name *p = a;

	su_name_publish(a);
	bail_if(ioctl(sfd, FRACTOS_IOC_NAME_PUBLISH, p), "name_publish");
	p->cid = 0;
}
#endif

/* SPACE_CONTACT: add R as a contact, the earlier ones removed first. */
static void su_contact(void *a)
{
	struct fractos_space_contact *p = a;
	struct fractos_space_contact del = { .op = FRACTOS_CONTACT_DEL };

	for (del.id = 1; del.id <= FRACTOS_MAX_CONTACTS; del.id++)
		ioctl(sfd, FRACTOS_IOC_SPACE_CONTACT, &del);
	p->op = FRACTOS_CONTACT_ADD;
	p->cid = R;
}

/*
 * MEMORY_GRANT: a new Memory over a page of its own each time (a grant
 * unmaps the page; a failed call leaves it, and its Memory, to the end).
 */
static void su_grant(void *a)
{
	struct fractos_memory_grant *p = a;
	void *pg = mmap(NULL, PG, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (pg == MAP_FAILED)
		tap_bail("mmap");
	bail_if(fos_mem_create(sfd, pg, PG, RW, &p->cid), "memory_create");
	p->req = FRACTOS_CID_INVALID;
}

#define OFF(t, f)	((long)offsetof(struct t, f))
#define PAD(t)		OFF(t, __pad), sizeof(((struct t *)0)->__pad)
#define NOPAD		-1, 0

static const struct op ops[] = {
	{ "SPACE_INFO", FRACTOS_IOC_SPACE_INFO,
	  sizeof(struct fractos_space_info), OFF(fractos_space_info, flags), 0,
	  PAD(fractos_space_info), OFF(fractos_space_info, reserved), 0,
	  su_none },
	{ "MEMORY_CREATE", FRACTOS_IOC_MEMORY_CREATE,
	  sizeof(struct fractos_memory_create),
	  OFF(fractos_memory_create, flags), FRACTOS_MEMORY_DMABUF,
	  /* dmabuf_fd must be 0 without FRACTOS_MEMORY_DMABUF */
	  OFF(fractos_memory_create, dmabuf_fd),
	  sizeof(((struct fractos_memory_create *)0)->dmabuf_fd),
	  OFF(fractos_memory_create, reserved), 0, su_create },
	{ "MEMORY_DIMINISH", FRACTOS_IOC_MEMORY_DIMINISH,
	  sizeof(struct fractos_memory_diminish),
	  OFF(fractos_memory_diminish, flags), 0, NOPAD,
	  OFF(fractos_memory_diminish, reserved), 0, su_diminish },
	{ "MEMORY_COPY", FRACTOS_IOC_MEMORY_COPY,
	  sizeof(struct fractos_memory_copy),
	  OFF(fractos_memory_copy, flags), 0, PAD(fractos_memory_copy),
	  OFF(fractos_memory_copy, reserved), 0, su_copy },
	{ "CAP_REVOKE", FRACTOS_IOC_CAP_REVOKE, sizeof(struct fractos_cap_arg),
	  OFF(fractos_cap_arg, flags), 0, PAD(fractos_cap_arg),
	  OFF(fractos_cap_arg, reserved), 0, su_revoke },
	{ "CAP_CREATE_REVTREE", FRACTOS_IOC_CAP_CREATE_REVTREE,
	  sizeof(struct fractos_cap_arg), OFF(fractos_cap_arg, flags), 0,
	  PAD(fractos_cap_arg), OFF(fractos_cap_arg, reserved), 0, su_cap_m },
	{ "CAP_CLOSE", FRACTOS_IOC_CAP_CLOSE, sizeof(struct fractos_cap_arg),
	  OFF(fractos_cap_arg, flags), 0, PAD(fractos_cap_arg),
	  OFF(fractos_cap_arg, reserved), 0, su_close },
	{ "CAP_DUP", FRACTOS_IOC_CAP_DUP, sizeof(struct fractos_cap_arg),
	  OFF(fractos_cap_arg, flags), 0, PAD(fractos_cap_arg),
	  OFF(fractos_cap_arg, reserved), 0, su_cap_m },
	{ "CAP_INFO", FRACTOS_IOC_CAP_INFO, sizeof(struct fractos_cap_info),
	  OFF(fractos_cap_info, flags), 0, NOPAD,
	  OFF(fractos_cap_info, reserved), 0, su_info },
	{ "CAP_EXPORT", FRACTOS_IOC_CAP_EXPORT,
	  sizeof(struct fractos_cap_export), OFF(fractos_cap_export, flags),
	  FRACTOS_EXPORT_CLOEXEC, PAD(fractos_cap_export),
	  OFF(fractos_cap_export, reserved), 0, su_export },
	{ "CAP_IMPORT", FRACTOS_IOC_CAP_IMPORT,
	  sizeof(struct fractos_cap_import), OFF(fractos_cap_import, flags), 0,
	  PAD(fractos_cap_import), OFF(fractos_cap_import, reserved), 0,
	  su_import },
	{ "REQUEST_CREATE", FRACTOS_IOC_REQUEST_CREATE,
	  sizeof(struct fractos_request_create),
	  OFF(fractos_request_create, flags), 0, PAD(fractos_request_create),
	  OFF(fractos_request_create, reserved), 0, su_req_create },
	{ "REQUEST_INVOKE", FRACTOS_IOC_REQUEST_INVOKE,
	  sizeof(struct fractos_request_invoke),
	  OFF(fractos_request_invoke, flags),
	  FRACTOS_INVOKE_WAIT | FRACTOS_INVOKE_NOACK, NOPAD,
	  OFF(fractos_request_invoke, reserved), 0, su_invoke },
	{ "REQUEST_RECEIVE", FRACTOS_IOC_REQUEST_RECEIVE,
	  sizeof(struct fractos_request_receive),
	  OFF(fractos_request_receive, flags),
	  FRACTOS_RECV_NONBLOCK | FRACTOS_RECV_TIMEOUT, NOPAD,
	  OFF(fractos_request_receive, reserved), EAGAIN, su_receive },
	{ "MONITOR_RECEIVE", FRACTOS_IOC_MONITOR_RECEIVE,
	  sizeof(struct fractos_monitor), OFF(fractos_monitor, flags), 0,
	  NOPAD, OFF(fractos_monitor, reserved), 0, su_mon_receive },
	{ "MONITOR_DELEGATE", FRACTOS_IOC_MONITOR_DELEGATE,
	  sizeof(struct fractos_monitor), OFF(fractos_monitor, flags), 0,
	  NOPAD, OFF(fractos_monitor, reserved), 0, su_mon_receive },
#ifdef FRACTOS_IOC_NAME_PUBLISH
	{ "NAME_PUBLISH", FRACTOS_IOC_NAME_PUBLISH, sizeof(struct fractos_name),
	  OFF(fractos_name, flags), FRACTOS_NAME_WORLD, NOPAD,
	  OFF(fractos_name, reserved), 0, su_name_publish },
	{ "NAME_LOOKUP", FRACTOS_IOC_NAME_LOOKUP, sizeof(struct fractos_name),
	  OFF(fractos_name, flags), FRACTOS_NAME_NODE, NOPAD,
	  OFF(fractos_name, reserved), 0, su_name_lookup },
	{ "NAME_UNPUBLISH", FRACTOS_IOC_NAME_UNPUBLISH,
	  sizeof(struct fractos_name), OFF(fractos_name, flags), 0, NOPAD,
	  OFF(fractos_name, reserved), 0, su_name_unpublish },
#endif
	{ "SPACE_CONTACT", FRACTOS_IOC_SPACE_CONTACT,
	  sizeof(struct fractos_space_contact),
	  OFF(fractos_space_contact, flags), 0, NOPAD,
	  OFF(fractos_space_contact, reserved), 0, su_contact },
	{ "MEMORY_GRANT", FRACTOS_IOC_MEMORY_GRANT,
	  sizeof(struct fractos_memory_grant),
	  OFF(fractos_memory_grant, flags), 0, NOPAD,
	  OFF(fractos_memory_grant, reserved), 0, su_grant },
};

#define NOPS	(sizeof(ops) / sizeof(ops[0]))

/* A command number for @op with another struct size. */
static unsigned long cmd_size(const struct op *op, size_t size)
{
	return _IOC(_IOC_DIR(op->cmd), _IOC_TYPE(op->cmd), _IOC_NR(op->cmd),
		    size);
}

static unsigned char arg[2 * PG] __attribute__((aligned(64)));

/* Run @cmd on @p; return 0 or errno. */
static int run(unsigned long cmd, void *p)
{
	return ioctl(sfd, cmd, p) ? errno : 0;
}

static void build(const struct op *op, void *p, size_t total)
{
	memset(p, 0, total);
	op->setup(p);
}

static void test_op(const struct op *op)
{
	unsigned char *a = arg;
	char bad[256];
	int e, i, nbad;
	size_t sizes[4];

	/* The valid call, exact size. */
	build(op, a, op->size);
	e = run(op->cmd, a);
	tap_eq(e, op->ok_errno, "%s: the valid call gives %s", op->name,
	       op->ok_errno ? strerror(op->ok_errno) : "success");
	reset();

	/* Every unknown flag bit. */
	if (op->flags_off >= 0) {
		nbad = 0;
		bad[0] = 0;
		for (i = 0; i < 32; i++) {
			uint32_t bit = 1U << i, *fl;

			if (op->valid_flags & bit)
				continue;
			build(op, a, op->size);
			fl = (uint32_t *)(a + op->flags_off);
			*fl |= bit;
			e = run(op->cmd, a);
			reset();
			if (e != EINVAL) {
				nbad++;
				snprintf(bad + strlen(bad),
					 sizeof(bad) - strlen(bad),
					 " bit%d:%d", i, e);
			}
		}
		tap_ok(!nbad, "%s: every unknown flag bit -> EINVAL%s",
		       op->name, bad);
	}

	/* __pad and reserved. */
	if (op->pad_off >= 0) {
		build(op, a, op->size);
		a[op->pad_off + op->pad_size - 1] = 1;
		e = run(op->cmd, a);
		reset();
		tap_eq(e, EINVAL, "%s: non-zero __pad -> EINVAL", op->name);
	}
	nbad = 0;
	for (i = 0; i < 16; i++) {
		build(op, a, op->size);
		a[op->res_off + i] = 0x80;
		e = run(op->cmd, a);
		reset();
		if (e != EINVAL)
			nbad++;
	}
	tap_ok(!nbad, "%s: a non-zero byte anywhere in reserved -> EINVAL",
	       op->name);

	/* Sizes. */
	sizes[0] = 0;
	sizes[1] = 1;
	sizes[2] = op->size - 8;
	sizes[3] = op->size - 1;
	nbad = 0;
	for (i = 0; i < 4; i++) {
		build(op, a, op->size);
		e = run(cmd_size(op, sizes[i]), a);
		reset();
		if (e != EINVAL)
			nbad++;
	}
	tap_ok(!nbad, "%s: struct sizes 0, 1, %zu, %zu -> EINVAL", op->name,
	       op->size - 8, op->size - 1);
	build(op, a, op->size + 64);
	a[op->size + 63] = 1;
	e = run(cmd_size(op, op->size + 64), a);
	reset();
	tap_eq(e, E2BIG, "%s: longer struct, non-zero tail -> E2BIG", op->name);
	build(op, a, op->size + 8);
	a[op->size] = 0xff;
	e = run(cmd_size(op, op->size + 8), a);
	reset();
	tap_eq(e, E2BIG, "%s: first tail byte non-zero -> E2BIG", op->name);
	build(op, a, PG);
	e = run(cmd_size(op, PG), a);
	reset();
	tap_eq(e, op->ok_errno, "%s: a 4096-byte struct with a zero tail works",
	       op->name);
}

static unsigned char *guard;	/* PG readable+writable, then PG PROT_NONE */
static unsigned char *ro;	/* one read-only page */

static void test_pointers(const struct op *op)
{
	void *ptrs[] = {
		NULL, (void *)1, (void *)(uintptr_t)0xffffffff81000000ULL,
		(void *)(uintptr_t)0xffff888000000000ULL, guard + PG,
		guard + PG - 8,
	};
	int i, e, nbad = 0;

	for (i = 0; i < (int)(sizeof(ptrs) / sizeof(ptrs[0])); i++) {
		if (ptrs[i] == guard + PG - 8)
			memset(guard + PG - 8, 0, 8);
		e = run(op->cmd, ptrs[i]);
		reset();
		if (e != EFAULT) {
			nbad++;
			tap_diag("  %s: pointer %p gave errno %d", op->name,
				 ptrs[i], e);
		}
	}
	tap_ok(!nbad, "%s: NULL, 1, kernel, PROT_NONE and straddling pointers -> EFAULT",
	       op->name);
}

/* Operations whose struct has no output field. */
static int no_output(const struct op *op)
{
#ifdef FRACTOS_IOC_NAME_PUBLISH
	return op->cmd == FRACTOS_IOC_NAME_PUBLISH ||
	       op->cmd == FRACTOS_IOC_NAME_UNPUBLISH;
#else
	(void)op;
	return 0;
#endif
}

/*
 * A read-only struct: the operation's result cannot be written back.  The
 * call must fail with EFAULT and leave no trace, or (for an operation with
 * nothing to report) succeed; it must never fail yet take effect.
 */
static void test_readonly(const struct op *op)
{
	struct fractos_cap_info ci;
	long ncaps0, msgs0, fd_next;
	int e, effect = 0, tmpfd;
	uint32_t cid;

	if (mprotect(ro, PG, PROT_READ | PROT_WRITE))
		tap_bail("mprotect");
	build(op, ro, op->size);
	if (op->setup == su_receive) {
		/* Have a message queued, so that the receive gets that far. */
		struct fractos_request_invoke inv = { .cid = R };

		bail_if(ioctl(sfd, FRACTOS_IOC_REQUEST_INVOKE, &inv), "invoke");
	}
	cid = *(uint32_t *)ro;	/* the cid field, for the cap operations */
	ncaps0 = fos_ncaps(sfd);
	msgs0 = fos_live("messages");
	tmpfd = dup(0);
	close(tmpfd);
	if (mprotect(ro, PG, PROT_READ))
		tap_bail("mprotect");

	e = run(op->cmd, ro);

	fd_next = dup(0);
	close(fd_next);
	switch (_IOC_NR(op->cmd)) {
	case _IOC_NR(FRACTOS_IOC_CAP_REVOKE):
		effect = fos_info(sfd, cid, &ci) ||
			 (ci.info_flags & FRACTOS_INFO_REVOKED);
		break;
	case _IOC_NR(FRACTOS_IOC_CAP_CLOSE):
		effect = fos_info(sfd, cid, &ci) != 0;
		break;
	case _IOC_NR(FRACTOS_IOC_REQUEST_INVOKE):
		effect = fos_live("messages") != msgs0;
		break;
	case _IOC_NR(FRACTOS_IOC_REQUEST_RECEIVE):
		effect = fos_live("messages") != msgs0;
		break;
	case _IOC_NR(FRACTOS_IOC_MONITOR_RECEIVE): {
		struct fractos_request_receive rr = {
			.flags = FRACTOS_RECV_NONBLOCK,
		};

		/* Registered iff revoking the object fires it. */
		fos_revoke(sfd, cid);
		effect = !ioctl(sfd, FRACTOS_IOC_REQUEST_RECEIVE, &rr);
		break;
	}
	case _IOC_NR(FRACTOS_IOC_MONITOR_DELEGATE): {
		struct fractos_monitor mon = { .cid = cid };

		/* Registered iff a second registration is EBUSY. */
		effect = ioctl(sfd, FRACTOS_IOC_MONITOR_DELEGATE, &mon) &&
			 errno == EBUSY;
		break;
	}
#ifdef FRACTOS_IOC_NAME_PUBLISH
	case _IOC_NR(FRACTOS_IOC_NAME_PUBLISH):
	case _IOC_NR(FRACTOS_IOC_NAME_UNPUBLISH): {
		struct fractos_name n = {
			.name = (uintptr_t)curname,
			.name_len = strlen(curname),
		};
		int found = !ioctl(sfd, FRACTOS_IOC_NAME_LOOKUP, &n);

		/* Published: the name exists now; unpublished: it is gone. */
		effect = _IOC_NR(op->cmd) == _IOC_NR(FRACTOS_IOC_NAME_PUBLISH) ?
			 found : !found;
		break;
	}
#endif
	case _IOC_NR(FRACTOS_IOC_MEMORY_COPY):
		/* A copy cannot be undone: EFAULT after copying is fine. */
		effect = 0;
		break;
	default:
		/* New cids or fds are the only possible traces. */
		effect = fos_ncaps(sfd) != ncaps0 || fd_next != tmpfd;
		break;
	}
	reset();
	if (e == 0)
		tap_ok(e == 0 && op->ok_errno == 0 &&
		       (_IOC_NR(op->cmd) == _IOC_NR(FRACTOS_IOC_CAP_REVOKE) ||
			_IOC_NR(op->cmd) == _IOC_NR(FRACTOS_IOC_CAP_CLOSE) ||
			_IOC_NR(op->cmd) == _IOC_NR(FRACTOS_IOC_REQUEST_INVOKE) ||
			_IOC_NR(op->cmd) == _IOC_NR(FRACTOS_IOC_MONITOR_RECEIVE) ||
			_IOC_NR(op->cmd) == _IOC_NR(FRACTOS_IOC_MONITOR_DELEGATE) ||
			no_output(op)) &&
		       effect,
		       "%s: read-only struct: succeeded (nothing to report)",
		       op->name);
	else
		tap_ok(e == EFAULT && !effect,
		       "%s: read-only struct -> EFAULT without effect (errno %d, effect %d)",
		       op->name, e, effect);
}

/* Bad buffer pointers inside the structs. */
static void test_buffers(void)
{
	struct fractos_request_create rc;
	struct fractos_request_invoke inv;
	struct fractos_request_receive rr;
	long ncaps0 = fos_ncaps(sfd), msgs0 = fos_live("messages");
	uint32_t caps[1] = { M };
	char imm[8] = "abcdefg";
	uint32_t got[4];
	char gimm[16];

	tap_errno(fos_mem_create(sfd, guard + PG, PG, RW, NULL), EFAULT,
		  "buffers: memory_create over PROT_NONE -> EFAULT");
	tap_errno(fos_mem_create(sfd, (void *)(uintptr_t)0xffff888000000000ULL,
				 PG, FRACTOS_PERM_READ, NULL), EFAULT,
		  "buffers: memory_create of a kernel address -> EFAULT");

	memset(&rc, 0, sizeof(rc));
	rc.base = FRACTOS_CID_INVALID;
	rc.imms = (uintptr_t)(guard + PG - 4);
	rc.imm_len = 8;
	tap_errno(ioctl(sfd, FRACTOS_IOC_REQUEST_CREATE, &rc), EFAULT,
		  "buffers: request_create imms straddling PROT_NONE -> EFAULT");
	rc.imms = 0;
	rc.imm_len = 0;
	rc.caps = 8;
	rc.ncaps = 1;
	tap_errno(ioctl(sfd, FRACTOS_IOC_REQUEST_CREATE, &rc), EFAULT,
		  "buffers: request_create caps at address 8 -> EFAULT");

	memset(&inv, 0, sizeof(inv));
	inv.cid = R;
	inv.imms = (uintptr_t)(guard + PG);
	inv.imm_len = 1;
	tap_errno(ioctl(sfd, FRACTOS_IOC_REQUEST_INVOKE, &inv), EFAULT,
		  "buffers: invoke imms PROT_NONE -> EFAULT");
	inv.imms = 0;
	inv.imm_len = 0;
	inv.caps = (uintptr_t)(guard + PG - 2);
	inv.ncaps = 1;
	tap_errno(ioctl(sfd, FRACTOS_IOC_REQUEST_INVOKE, &inv), EFAULT,
		  "buffers: invoke caps straddling PROT_NONE -> EFAULT");
	tap_ok(fos_ncaps(sfd) == ncaps0 && fos_live("messages") == msgs0,
	       "buffers: the failed calls left no cid or message");

	/* A message with 8 bytes and one capability... */
	inv.imms = (uintptr_t)imm;
	inv.imm_len = 8;
	inv.caps = (uintptr_t)caps;
	inv.ncaps = 1;
	bail_if(ioctl(sfd, FRACTOS_IOC_REQUEST_INVOKE, &inv), "invoke");
	memset(&rr, 0, sizeof(rr));
	rr.flags = FRACTOS_RECV_NONBLOCK;
	rr.imms = (uintptr_t)(guard + PG);
	rr.imm_len = 16;
	rr.caps = (uintptr_t)got;
	rr.ncaps = 4;
	tap_errno(ioctl(sfd, FRACTOS_IOC_REQUEST_RECEIVE, &rr), EFAULT,
		  "buffers: receive into a PROT_NONE imms buffer -> EFAULT");
	rr.imms = (uintptr_t)gimm;
	rr.caps = (uintptr_t)ro;	/* read-only */
	tap_errno(ioctl(sfd, FRACTOS_IOC_REQUEST_RECEIVE, &rr), EFAULT,
		  "buffers: receive into a read-only caps buffer -> EFAULT");
	tap_ok(fos_ncaps(sfd) == ncaps0 && fos_live("messages") == msgs0 + 1,
	       "buffers: the message is kept, its capability not installed");
	rr.caps = (uintptr_t)got;
	tap_errno(ioctl(sfd, FRACTOS_IOC_REQUEST_RECEIVE, &rr), 0,
		  "buffers: then a good receive gets it");
	tap_ok(rr.imm_len == 8 && !memcmp(gimm, imm, 8) && rr.ncaps == 1,
	       "buffers: intact (imm_len %u, ncaps %u)", rr.imm_len, rr.ncaps);
	reset();
}

static void test_numbers(void)
{
	unsigned char a[256] = { 0 };
	int i, nbad;
	size_t k;

	{
		unsigned int last = 0;

		for (k = 0; k < NOPS; k++)
			if (_IOC_NR(ops[k].cmd) > last)
				last = _IOC_NR(ops[k].cmd);
		tap_errno(ioctl(sfd, _IOC(_IOC_READ | _IOC_WRITE,
					  FRACTOS_IOC_MAGIC, last + 1,
					  sizeof(struct fractos_cap_arg)), a),
			  ENOTTY, "numbers: nr %#x (one past the last) -> ENOTTY",
			  last + 1);
	}
	tap_errno(ioctl(sfd, _IOWR(FRACTOS_IOC_MAGIC, 0xff,
				   struct fractos_cap_arg), a), ENOTTY,
		  "numbers: nr 0xff -> ENOTTY");
	tap_errno(ioctl(sfd, _IOWR(FRACTOS_IOC_MAGIC + 1, 0x00,
				   struct fractos_space_info), a), ENOTTY,
		  "numbers: wrong magic -> ENOTTY");
	tap_errno(ioctl(sfd, _IOWR('f', 0x01,
				   struct fractos_memory_create), a), ENOTTY,
		  "numbers: another driver's magic -> ENOTTY");
	tap_errno(ioctl(sfd, 0, a), ENOTTY, "numbers: cmd 0 -> ENOTTY");
	nbad = 0;
	for (k = 0; k < NOPS; k++) {
		unsigned int nr = _IOC_NR(ops[k].cmd);
		size_t sz = ops[k].size;
		unsigned long bad[3] = {
			_IOC(_IOC_READ, FRACTOS_IOC_MAGIC, nr, sz),
			_IOC(_IOC_WRITE, FRACTOS_IOC_MAGIC, nr, sz),
			_IOC(_IOC_NONE, FRACTOS_IOC_MAGIC, nr, 0),
		};

		for (i = 0; i < 3; i++) {
			memset(a, 0, sizeof(a));
			if (ioctl(sfd, bad[i], a) != -1 || errno != ENOTTY)
				nbad++;
		}
	}
	tap_ok(!nbad, "numbers: _IOR, _IOW and _IO of every operation -> ENOTTY");
	tap_errno(ioctl(capfd, FRACTOS_IOC_SPACE_INFO, a), ENOTTY,
		  "numbers: ioctl on a capability fd -> ENOTTY");
}

int main(void)
{
	struct fos_counts b0, now;
	size_t k;
	int n;

	/* per op: valid, flags, pad?, reserved, sizes, E2BIG x2, 4096, ptrs, ro */
	n = 0;
	for (k = 0; k < NOPS; k++)
		n += 8 + (ops[k].flags_off >= 0) + (ops[k].pad_off >= 0);
	tap_plan(n + 12 + 7 + 1);
	fos_counts_read(&b0);

	buf = mmap(NULL, PG, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	guard = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ro = mmap(NULL, PG, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED || guard == MAP_FAILED || ro == MAP_FAILED ||
	    mprotect(guard + PG, PG, PROT_NONE))
		tap_bail("mmap");
	memset(buf, 0x5a, PG);

	sfd = fos_open();
	if (sfd < 0)
		tap_bail("open " FRACTOS_DEVICE);
	{
		uint32_t m, d;
		struct fractos_request_create rc = {
			.base = FRACTOS_CID_INVALID,
		};

		bail_if(fos_mem_create(sfd, buf, PG / 2, RW, &m) || m != M,
			"create M");
		bail_if(fos_mem_create(sfd, buf + PG / 2, PG / 2, RW, &d) ||
			d != D, "create D");
		bail_if(ioctl(sfd, FRACTOS_IOC_REQUEST_CREATE, &rc) ||
			rc.cid != R, "request R");
		bail_if(fos_export(sfd, M, 0, &capfd), "export");
#ifdef FRACTOS_IOC_NAME_PUBLISH
		{
			struct fractos_name n = {
				.cid = M, .name = (uintptr_t)basename_,
				.name_len = strlen(basename_),
			};

			bail_if(ioctl(sfd, FRACTOS_IOC_NAME_PUBLISH, &n),
				"name_publish");
		}
#endif
	}
	fdmark = dup(0);
	close(fdmark);

	for (k = 0; k < NOPS; k++) {
		test_op(&ops[k]);
		test_pointers(&ops[k]);
		test_readonly(&ops[k]);
	}
	test_buffers();
	test_numbers();

	close(capfd);
	close(sfd);
	tap_ok(fos_counts_wait(&b0, &now, 2000),
	       "badinput: every counter back to its value at start");
	if (!fos_counts_equal(&b0, &now)) {
		fos_counts_print("start", &b0);
		fos_counts_print("end", &now);
	}
	return tap_finish();
}
