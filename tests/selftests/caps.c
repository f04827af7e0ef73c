// SPDX-License-Identifier: GPL-2.0
/*
 * fractos selftest: capabilities.
 *
 * cids (lowest free first, EBADF for unknown ones), cap_dup, cap_close
 * (drops without revoking), cap_info fields, cap_revoke across spaces and
 * through dup'd and imported copies, and revocation trees (a child's
 * revocation spares its parent, a parent's kills every descendant).
 */
#include <stdint.h>
#include <sys/mman.h>
#include "tap.h"
#include "fos_util.h"

#define PG	4096UL
#define RW	FRACTOS_PERM_ALL
#define RD	FRACTOS_PERM_READ
#define WR	FRACTOS_PERM_WRITE

static unsigned char *buf, *dbuf;
static int s1, s2;
static uint32_t dst1, dst2;	/* a writable scratch memory in s1 and s2 */

static uint32_t mk(int fd, const void *addr, uint64_t len, uint32_t perms)
{
	uint32_t cid;

	if (fos_mem_create(fd, addr, len, perms, &cid))
		tap_bail("memory_create");
	return cid;
}

static uint32_t xdup(int fd, uint32_t cid)
{
	uint32_t n;

	if (fos_dup(fd, cid, &n))
		tap_bail("cap_dup(%u)", cid);
	return n;
}

static uint32_t xrevtree(int fd, uint32_t cid)
{
	uint32_t n;

	if (fos_revtree(fd, cid, &n))
		tap_bail("create_revtree(%u)", cid);
	return n;
}

static uint32_t xdim(int fd, uint32_t cid, uint32_t drop, uint64_t off,
		     uint64_t len)
{
	uint32_t n;

	if (fos_diminish(fd, cid, drop, off, len, &n))
		tap_bail("diminish(%u)", cid);
	return n;
}

/* Move @cid of space @from into space @to through an exported fd. */
static uint32_t transfer(int from, uint32_t cid, int to)
{
	uint32_t n = FRACTOS_CID_INVALID;
	int fd;

	if (fos_export(from, cid, 0, &fd))
		tap_bail("export");
	if (fos_import(to, fd, &n))
		tap_bail("import");
	close(fd);
	return n;
}

/* Does @cid of space @fd work?  0, or the errno of a one-byte read. */
static int use(int fd, uint32_t cid)
{
	if (fos_copy(fd, cid, 0, fd == s1 ? dst1 : dst2, 0, 1, NULL))
		return errno;
	return 0;
}

static uint32_t flags_of(int fd, uint32_t cid)
{
	struct fractos_cap_info ci;

	if (fos_info(fd, cid, &ci))
		return 0xdead;
	return ci.info_flags;
}

static void test_cids(void)
{
	uint32_t m, c[8];
	int i, ok = 1;

	m = mk(s1, buf, PG, RW);
	tap_eq(m, 1, "cids: first memory after dst gets cid 1");
	for (i = 0; i < 6; i++) {
		if (fos_dup(s1, m, &c[i]) || c[i] != (uint32_t)(2 + i))
			ok = 0;
	}
	tap_ok(ok, "cids: dups get 2, 3, 4, 5, 6, 7 in order");
	fos_close(s1, 3);
	fos_close(s1, 5);
	tap_ok(!fos_dup(s1, m, &c[0]) && c[0] == 3,
	       "cids: after closing 3 and 5, dup gets 3");
	tap_ok(!fos_dup(s1, m, &c[0]) && c[0] == 5, "cids: then 5");
	tap_ok(!fos_dup(s1, m, &c[0]) && c[0] == 8, "cids: then 8");
	fos_close(s1, 1);
	tap_ok(!fos_mem_create(s1, buf, PG, RD, &c[0]) && c[0] == 1,
	       "cids: memory_create also takes the lowest free cid (1)");
	tap_ok(!fos_revtree(s1, 2, &c[1]) && c[1] == 9,
	       "cids: revtree child takes the next (9)");
	fos_close(s1, 4);
	tap_ok(!fos_diminish(s1, 2, 0, 0, 1, &c[2]) && c[2] == 4,
	       "cids: diminish takes the lowest free cid (4)");
	fos_close(s1, 6);
	tap_errno(fos_import(s1, -1, NULL), EBADF,
		  "cids: import of fd -1 fails EBADF");
	tap_eq(fos_ncaps(s1), 9, "cids: space_info counts 9 capabilities");
	for (i = 1; i < 16; i++)
		fos_close(s1, i);
	tap_eq(fos_ncaps(s1), 1, "cids: closed back to dst only");

	/* Unknown cids. */
	tap_errno(fos_close(s1, 7), EBADF, "EBADF: close of a closed cid");
	tap_errno(fos_dup(s1, 7, NULL), EBADF, "EBADF: dup");
	tap_errno(fos_revoke(s1, 7), EBADF, "EBADF: revoke");
	tap_errno(fos_revtree(s1, 7, NULL), EBADF, "EBADF: create_revtree");
	{
		struct fractos_cap_info ci;

		tap_errno(fos_info(s1, 7, &ci), EBADF, "EBADF: cap_info");
	}
	tap_errno(fos_export(s1, 7, 0, NULL), EBADF, "EBADF: export");
	tap_errno(fos_diminish(s1, 7, 0, 0, 1, NULL), EBADF,
		  "EBADF: diminish");
	tap_errno(fos_copy(s1, 7, 0, dst1, 0, 1, NULL), EBADF,
		  "EBADF: copy");
	tap_errno(fos_dup(s1, FRACTOS_CID_INVALID, NULL), EBADF,
		  "EBADF: FRACTOS_CID_INVALID");
	tap_errno(fos_dup(s1, 0x80000000U, NULL), EBADF,
		  "EBADF: cid 0x80000000");
	{
		uint32_t c1 = mk(s1, buf, PG, RW);

		tap_errno(fos_dup(s2, c1, NULL), EBADF,
			  "EBADF: a cid of another space is unknown here");
		fos_close(s1, c1);
	}
}

static void test_dup_close_info(void)
{
	struct fractos_space_info si;
	struct fractos_cap_info a, b;
	struct fos_counts c0, c1;
	uint32_t m, d, i2, m2, v;

	fos_space_info(s1, &si);
	fos_counts_read(&c0);
	m = mk(s1, buf, 2 * PG, RW);
	tap_errno(fos_dup(s1, m, &d), 0, "dup: succeeds");
	fos_counts_read(&c1);
	tap_ok(c1.caps - c0.caps == 2 && c1.objects - c0.objects == 1 &&
	       c1.pinned_pages - c0.pinned_pages == 2,
	       "dup: one more capability, no new object or pin");
	fos_info(s1, m, &a);
	fos_info(s1, d, &b);
	tap_ok(a.oid.id == b.oid.id && a.perms == b.perms &&
	       a.offset == b.offset && a.len == b.len &&
	       a.info_flags == b.info_flags && a.depth == b.depth,
	       "dup: same object, view, rights and flags");

	/* cap_info fields. */
	tap_ok(a.type == FRACTOS_OBJ_MEMORY && a.perms == RW &&
	       a.offset == 0 && a.len == 2 * PG && a.depth == 0,
	       "info: type, perms, offset, len, depth of a new memory");
	tap_eq(a.info_flags, FRACTOS_INFO_OWNED,
	       "info: flags of a new memory: OWNED only");
	tap_ok(a.oid.node == si.node && a.oid.epoch == si.epoch &&
	       a.oid.epoch != 0 && a.oid.id != 0,
	       "info: oid node/epoch match space_info (node %u epoch %#x), id %llu nonzero",
	       a.oid.node, a.oid.epoch, (unsigned long long)a.oid.id);
	tap_eq(a.oid.node, fos_param("node_id"),
	       "info: oid node is the node_id parameter");
	tap_eq(a.oid.epoch, (uint32_t)fos_param("epoch"),
	       "info: oid epoch is the epoch parameter");
	tap_ok(a.cid == m, "info: cid left as given");
	m2 = mk(s1, buf, PG, RW);
	fos_info(s1, m2, &b);
	tap_ok(b.oid.id != a.oid.id && b.oid.epoch == a.oid.epoch,
	       "info: a second memory has a different oid id, same epoch");
	{
		uint64_t d = b.oid.id - a.oid.id;

		/* Made one after the other, and nothing else made between. */
		tap_ok(d != 1 && d != 2 && d != (uint64_t)-1,
		       "info: ids are not sequential (%#llx then %#llx)",
		       (unsigned long long)a.oid.id,
		       (unsigned long long)b.oid.id);
	}
	fos_close(s1, m2);
	i2 = transfer(s1, m, s2);
	fos_info(s2, i2, &b);
	tap_ok(b.oid.id == a.oid.id && b.len == a.len && b.perms == a.perms &&
	       b.info_flags == 0,
	       "info: imported copy: same oid and view, not OWNED (flags %#x)",
	       b.info_flags);
	v = xdim(s1, m, WR, 10, 20);
	fos_info(s1, v, &b);
	tap_ok(b.oid.id == a.oid.id && b.perms == RD && b.offset == 10 &&
	       b.len == 20 && b.info_flags == FRACTOS_INFO_OWNED,
	       "info: diminished view: same oid, perms/offset/len of the view");
	fos_close(s1, v);

	/* cap_close drops without revoking. */
	tap_errno(fos_close(s1, m), 0, "close: the original");
	tap_eq(use(s1, d), 0, "close: the dup still works");
	tap_eq(use(s2, i2), 0, "close: the copy in another space still works");
	tap_eq(flags_of(s1, d) & FRACTOS_INFO_REVOKED, 0,
	       "close: nothing is revoked");
	tap_errno(fos_close(s2, i2), 0, "close: the imported copy");
	tap_eq(use(s1, d), 0, "close: the owner's copy still works");
	fos_counts_read(&c1);
	tap_eq(c1.pinned_pages - c0.pinned_pages, 2,
	       "close: pages stay pinned while a capability is left");
	tap_errno(fos_close(s1, d), 0, "close: the last capability");
	fos_counts_read(&c1);
	tap_ok(fos_counts_equal(&c0, &c1),
	       "close: dropping the last capability frees object and pages");
}

static void test_revoke(void)
{
	struct fos_counts c0, c1;
	uint32_t m, d, i2, i2d, d2, v;
	struct fractos_cap_info ci;
	int fd;

	fos_counts_read(&c0);
	m = mk(s1, buf, 2 * PG, RW);
	d = xdup(s1, m);
	v = xdim(s1, m, WR, 0, 10);
	i2 = transfer(s1, m, s2);
	i2d = xdup(s2, i2);
	tap_ok(!use(s1, m) && !use(s1, d) && !use(s1, v) && !use(s2, i2) &&
	       !use(s2, i2d), "revoke: all five copies work before");

	tap_errno(fos_revoke(s1, m), 0, "revoke: by the owner");
	tap_eq(use(s1, m), EKEYREVOKED, "revoke: revoked cap -> EKEYREVOKED");
	tap_eq(use(s1, d), EKEYREVOKED, "revoke: its dup -> EKEYREVOKED");
	tap_eq(use(s1, v), EKEYREVOKED,
	       "revoke: its diminished view -> EKEYREVOKED");
	tap_eq(use(s2, i2), EKEYREVOKED,
	       "revoke: the copy imported in another space -> EKEYREVOKED");
	tap_eq(use(s2, i2d), EKEYREVOKED,
	       "revoke: a dup of the imported copy -> EKEYREVOKED");
	tap_errno(fos_copy(s2, dst2, 0, i2, 0, 1, NULL), EKEYREVOKED,
		  "revoke: as copy destination -> EKEYREVOKED");
	tap_errno(fos_diminish(s2, i2, 0, 0, 1, NULL), EKEYREVOKED,
		  "revoke: diminish -> EKEYREVOKED");
	tap_errno(fos_revtree(s1, d, NULL), EKEYREVOKED,
		  "revoke: create_revtree -> EKEYREVOKED");
	tap_errno(fos_revoke(s2, i2), EKEYREVOKED,
		  "revoke: revoking again -> EKEYREVOKED");
	tap_ok((flags_of(s1, m) & FRACTOS_INFO_REVOKED) &&
	       (flags_of(s2, i2) & FRACTOS_INFO_REVOKED) &&
	       (flags_of(s1, v) & FRACTOS_INFO_REVOKED),
	       "revoke: cap_info reports REVOKED everywhere: %#x %#x",
	       flags_of(s1, m), flags_of(s2, i2));
	fos_info(s1, v, &ci);
	tap_ok(ci.type == FRACTOS_OBJ_MEMORY && ci.offset == 0 &&
	       ci.len == 10 && ci.perms == RD,
	       "revoke: cap_info still describes the view");
	fos_counts_read(&c1);
	tap_ok(c1.pinned_pages == c0.pinned_pages &&
	       c1.memories == c0.memories,
	       "revoke: pages unpinned at once, capabilities still held");
	tap_errno(fos_dup(s1, m, &d2), 0, "revoke: dup of a revoked cap works");
	tap_eq(use(s1, d2), EKEYREVOKED, "revoke: ...and the dup is revoked");
	tap_errno(fos_export(s1, m, 0, &fd), 0,
		  "revoke: export of a revoked cap works");
	tap_ok(!fos_import(s2, fd, &d2) &&
	       (flags_of(s2, d2) & FRACTOS_INFO_REVOKED),
	       "revoke: ...and imports as revoked");
	close(fd);
	tap_errno(fos_close(s1, m), 0, "revoke: close of a revoked cap works");
	for (d2 = 1; d2 < 16; d2++) {
		fos_close(s1, d2);
		fos_close(s2, d2);
	}
	fos_counts_read(&c1);
	tap_ok(fos_counts_equal(&c0, &c1),
	       "revoke: counters back after the caps are closed");

	/* Any holder may revoke: an importer revokes the owner's object. */
	m = mk(s1, buf, PG, RW);
	i2 = transfer(s1, m, s2);
	tap_errno(fos_revoke(s2, i2), 0, "revoke: by a holder in another space");
	tap_eq(use(s1, m), EKEYREVOKED,
	       "revoke: the owner's capability is revoked too");
	fos_close(s1, m);
	fos_close(s2, i2);
}

static void test_revtree(void)
{
	struct fractos_cap_info ci, cr;
	struct fos_counts c0, c1;
	uint32_t r, a, b, g, ga, bx, ax, v, va;

	fos_counts_read(&c0);
	r = mk(s1, buf, 2 * PG, RW);
	v = xdim(s1, r, WR, 100, 200);
	tap_errno(fos_revtree(s1, r, &a), 0, "revtree: child a of root");
	tap_errno(fos_revtree(s1, r, &b), 0, "revtree: child b of root");
	tap_errno(fos_revtree(s1, a, &g), 0, "revtree: grandchild g of a");
	tap_errno(fos_revtree(s1, g, &ga), 0, "revtree: great-grandchild");
	tap_errno(fos_revtree(s1, v, &va), 0,
		  "revtree: child of a diminished view");
	fos_counts_read(&c1);
	tap_ok(c1.objects - c0.objects == 6 &&
	       c1.pinned_pages - c0.pinned_pages == 2 &&
	       c1.memories - c0.memories == 1,
	       "revtree: children are objects but share the pinned pages");
	fos_info(s1, r, &cr);
	fos_info(s1, a, &ci);
	tap_ok(ci.oid.id != cr.oid.id && ci.depth == 1 &&
	       ci.info_flags == (FRACTOS_INFO_REVTREE | FRACTOS_INFO_OWNED) &&
	       ci.perms == RW && ci.len == 2 * PG && ci.offset == 0,
	       "revtree: child: new oid, depth 1, REVTREE|OWNED, same view");
	fos_info(s1, ga, &ci);
	tap_ok(ci.depth == 3 && (ci.info_flags & FRACTOS_INFO_REVTREE),
	       "revtree: great-grandchild depth 3");
	fos_info(s1, va, &ci);
	tap_ok(ci.perms == RD && ci.offset == 100 && ci.len == 200 &&
	       ci.depth == 1, "revtree: child of a view keeps the view");

	/* Delegate a and b to s2. */
	ax = transfer(s1, a, s2);
	bx = transfer(s1, b, s2);
	fos_info(s2, ax, &ci);
	tap_ok(ci.info_flags == FRACTOS_INFO_REVTREE && ci.depth == 1,
	       "revtree: imported child is REVTREE, not OWNED");

	/* Revoking a child leaves parent and sibling valid. */
	tap_errno(fos_revoke(s2, ax), 0, "revtree: s2 revokes child a");
	tap_eq(use(s1, a), EKEYREVOKED, "revtree: a is revoked in s1");
	tap_eq(use(s2, ax), EKEYREVOKED, "revtree: a is revoked in s2");
	tap_eq(use(s1, g), EKEYREVOKED, "revtree: a's child g is revoked");
	tap_eq(use(s1, ga), EKEYREVOKED, "revtree: g's child is revoked");
	tap_eq(use(s1, r), 0, "revtree: the parent still works");
	tap_eq(use(s1, v), 0, "revtree: the parent's view still works");
	tap_eq(use(s1, b), 0, "revtree: sibling b still works in s1");
	tap_eq(use(s2, bx), 0, "revtree: sibling b still works in s2");
	tap_eq(use(s1, va), 0, "revtree: the view's child still works");
	tap_errno(fos_revtree(s1, a, NULL), EKEYREVOKED,
		  "revtree: no child of a revoked object");
	tap_ok(flags_of(s1, r) == FRACTOS_INFO_OWNED,
	       "revtree: the parent is not flagged revoked");

	/* A deep chain under b, then revoke the root. */
	{
		uint32_t cur = b, nx = FRACTOS_CID_INVALID, chain[8];
		int i, ok = 1;

		for (i = 0; i < 8; i++) {
			if (fos_revtree(s1, cur, &nx))
				ok = 0;
			chain[i] = cur = nx;
		}
		if (fos_info(s1, cur, &ci))
			ok = 0;
		tap_ok(ok && ci.depth == 9,
		       "revtree: chain of 8 more under b, depth %u", ci.depth);
		tap_errno(fos_revoke(s1, r), 0, "revtree: revoke the root");
		ok = 1;
		for (i = 0; i < 8; i++)
			if (use(s1, chain[i]) != EKEYREVOKED)
				ok = 0;
		tap_ok(ok, "revtree: the whole chain under b is revoked");
	}
	tap_eq(use(s1, b), EKEYREVOKED, "revtree: child b is revoked");
	tap_eq(use(s2, bx), EKEYREVOKED, "revtree: b in s2 is revoked");
	tap_eq(use(s1, va), EKEYREVOKED, "revtree: the view's child is revoked");
	tap_eq(use(s1, v), EKEYREVOKED, "revtree: the root's view is revoked");
	tap_ok((flags_of(s1, b) & (FRACTOS_INFO_REVOKED | FRACTOS_INFO_REVTREE))
	       == (FRACTOS_INFO_REVOKED | FRACTOS_INFO_REVTREE),
	       "revtree: a revoked child reports REVOKED|REVTREE, %#x",
	       flags_of(s1, b));
	fos_counts_read(&c1);
	tap_ok(c1.pinned_pages == c0.pinned_pages,
	       "revtree: revoking the root unpinned the pages");
	for (r = 1; r < 32; r++) {
		fos_close(s1, r);
		fos_close(s2, r);
	}
	fos_counts_read(&c1);
	tap_ok(fos_counts_equal(&c0, &c1),
	       "revtree: every object freed once the caps are closed");

	/* Closing a parent's capabilities does not revoke its children. */
	r = mk(s1, buf, PG, RW);
	a = xrevtree(s1, r);
	g = xrevtree(s1, a);
	fos_close(s1, a);
	fos_close(s1, r);
	tap_eq(use(s1, g), 0,
	       "revtree: a grandchild outlives its ancestors' capabilities");
	tap_errno(fos_revoke(s1, g), 0, "revtree: revoke the grandchild");
	tap_eq(fos_live("pinned_pages"), c0.pinned_pages + 1,
	       "revtree: ...the root (no caps left, not revoked) keeps its pin");
	fos_close(s1, g);
	fos_counts_read(&c1);
	tap_ok(fos_counts_equal(&c0, &c1),
	       "revtree: the unreferenced chain is freed and unpinned");
}

/*
 * Revocation trees are at most 64 deep: a chain grown one child at a time
 * (closing the previous one) stops there with EMLINK, and so does a
 * delegation that would hand out a child below the limit.
 */
static void test_depth(void)
{
	struct fractos_request_create rc = { .base = FRACTOS_CID_INVALID };
	struct fractos_request_invoke ri = { .ncaps = 1 };
	struct fractos_monitor mon = { .cookie = 64 };
	struct fractos_request_receive rr = {
		.flags = FRACTOS_RECV_NONBLOCK,
	};
	struct fos_counts c0, c1;
	struct fractos_cap_info ci;
	uint32_t r, cur, next;
	int i, ret = 0, err = 0, capfd;

	fos_counts_read(&c0);
	r = mk(s1, buf, PG, RW);
	cur = r;
	for (i = 1; i <= 200; i++) {
		ret = fos_revtree(s1, cur, &next);
		err = errno;
		if (ret)
			break;
		if (cur != r)
			fos_close(s1, cur);
		cur = next;
	}
	tap_ok(ret == -1 && err == EMLINK && i == 65,
	       "depth: the chain stops at child 65 with EMLINK (ret %d, %s, at %d)",
	       ret, strerror(err), i);
	tap_ok(!fos_info(s1, cur, &ci) && ci.depth == 64,
	       "depth: the deepest child has depth %u", ci.depth);
	tap_eq(fos_ncaps(s1), 3, "depth: only the root and the last child held");

	/* Delegating the deepest object would make a child at 65. */
	mon.cid = cur;
	tap_errno(ioctl(s1, FRACTOS_IOC_MONITOR_DELEGATE, &mon), 0,
		  "depth: monitor_delegate on the deepest child");
	tap_errno(fos_export(s1, cur, 0, &capfd), EMLINK,
		  "depth: exporting it -> EMLINK");
	tap_errno(ioctl(s1, FRACTOS_IOC_REQUEST_CREATE, &rc), 0,
		  "depth: a Request to ourselves");
	ri.cid = rc.cid;
	ri.caps = (uintptr_t)&cur;
	tap_errno(ioctl(s1, FRACTOS_IOC_REQUEST_INVOKE, &ri), EMLINK,
		  "depth: invoking with it as an argument -> EMLINK");
	tap_errno(ioctl(s1, FRACTOS_IOC_REQUEST_RECEIVE, &rr), EAGAIN,
		  "depth: nothing was delivered");
	fos_close(s1, rc.cid);
	fos_close(s1, cur);
	fos_close(s1, r);
	fos_counts_read(&c1);
	tap_ok(fos_counts_equal(&c0, &c1), "depth: the whole chain is freed");
	if (!fos_counts_equal(&c0, &c1)) {
		fos_counts_print("before", &c0);
		fos_counts_print("after", &c1);
	}
	tap_errno(ioctl(s1, FRACTOS_IOC_REQUEST_RECEIVE, &rr), EAGAIN,
		  "depth: no monitor event (dropped with the object)");
}

int main(void)
{
	struct fos_counts b0, now;

	tap_plan(113);
	fos_counts_read(&b0);
	buf = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	dbuf = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED || dbuf == MAP_FAILED)
		tap_bail("mmap");
	memset(buf, 1, 2 * PG);
	s1 = fos_open();
	s2 = fos_open();
	if (s1 < 0 || s2 < 0)
		tap_bail("open " FRACTOS_DEVICE);
	dst1 = mk(s1, dbuf, PG, RW);
	dst2 = mk(s2, dbuf + PG, PG, RW);
	if (dst1 != 0 || dst2 != 0)
		tap_bail("first cids are not 0");

	test_cids();
	test_dup_close_info();
	test_revoke();
	test_revtree();
	test_depth();

	close(s1);
	close(s2);
	tap_ok(fos_counts_wait(&b0, &now, 2000),
	       "caps: every counter back to its value at start");
	if (!fos_counts_equal(&b0, &now)) {
		fos_counts_print("start", &b0);
		fos_counts_print("end", &now);
	}
	return tap_finish();
}
