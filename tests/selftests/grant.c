// SPDX-License-Identifier: GPL-2.0
/*
 * fractos selftest: MEMORY_GRANT ("Memory grant" in the uAPI header).
 *
 * A granter space G hands its Memory to provider P's Request: P receives
 * the one capability to a new object over the same pages, owns it, maps
 * it and sees G's bytes; every other capability to the old object (G's
 * own, P's earlier one) is revoked, G's capability fd mapping is gone
 * (SIGBUS) and so is G's own mapping of the buffer (SIGSEGV).  Without a
 * Request the capability lands in G; with a Request that cannot be
 * invoked it lands in G too, and the call says why.  Pages another live
 * process pinned cannot be granted (EBUSY) until it is gone.  Bad input
 * gets the documented errnos; nothing is left.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include "fos_proc.h"

#define PG	4096UL
#define TAG	0x96a47

static sigjmp_buf jb;
static volatile sig_atomic_t got;

static void on_fault(int sig)
{
	got = sig;
	siglongjmp(jb, 1);
}

/* Read *@p: 0, or the signal it raised. */
static int touch(volatile unsigned char *p)
{
	struct sigaction sa = { .sa_handler = on_fault }, old_bus, old_segv;
	int r = 0;

	sigaction(SIGBUS, &sa, &old_bus);
	sigaction(SIGSEGV, &sa, &old_segv);
	got = 0;
	if (!sigsetjmp(jb, 1))
		(void)*p;
	else
		r = got;
	sigaction(SIGBUS, &old_bus, NULL);
	sigaction(SIGSEGV, &old_segv, NULL);
	return r;
}

static long total(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/class/misc/fractos/totals/%s", name);
	return read_long(path);
}

static int grant(int s, __u32 cid, __u32 req, __u32 *new_cid)
{
	struct fractos_memory_grant a = { .cid = cid, .req = req };
	int r = ioctl(s, FRACTOS_IOC_MEMORY_GRANT, &a);

	if (new_cid)
		*new_cid = a.new_cid;
	return r;
}

/* A shared mapping of @len bytes of capability @cid of space @s. */
static unsigned char *map_cap(int s, __u32 cid, size_t len)
{
	struct fractos_cap_export a = { .cid = cid, .flags = FRACTOS_EXPORT_CLOEXEC };
	void *p;

	if (ioctl(s, FRACTOS_IOC_CAP_EXPORT, &a))
		return NULL;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, a.fd, 0);
	close(a.fd);
	return p == MAP_FAILED ? NULL : p;
}

/* @n fresh pages with a pattern from @seed. */
static unsigned char *pages(size_t n, int seed)
{
	unsigned char *b = mmap(NULL, n * PG, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t i;

	if (b == MAP_FAILED)
		tap_bail("mmap");
	for (i = 0; i < n * PG; i++)
		b[i] = (unsigned char)(i * 3 + seed);
	return b;
}

static int pattern_is(const unsigned char *p, size_t len, int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != (unsigned char)(i * 3 + seed))
			return 0;
	return 1;
}

static void test_bad_input(void)
{
	struct fractos_memory_grant a;
	unsigned char *b = pages(2, 1);
	__u32 mem, ro, view, child, req, other, pm, id;
	int g = dev_open(), p = dev_open();

	if (mem_new(g, b, PG, FRACTOS_PERM_ALL, &mem) ||
	    mem_new(g, b + PG, PG, FRACTOS_PERM_READ, &ro) ||
	    mem_diminish(g, mem, 0, 0, PG / 2, &view) ||
	    cap_op(g, FRACTOS_IOC_CAP_CREATE_REVTREE, mem, &child) ||
	    req_new(g, NONE, TAG, NULL, 0, NULL, 0, &req) ||
	    mem_new(p, b, PG, FRACTOS_PERM_ALL, &pm) ||
	    cap_move(p, pm, g, &other))
		tap_bail("setup");
	memset(&a, 0, sizeof(a));
	a.cid = mem;
	a.req = NONE;
	a.flags = 1;
	tap_errno(ioctl(g, FRACTOS_IOC_MEMORY_GRANT, &a), EINVAL, "flags -> EINVAL");
	a.flags = 0;
	a.reserved[1] = 1;
	tap_errno(ioctl(g, FRACTOS_IOC_MEMORY_GRANT, &a), EINVAL, "reserved -> EINVAL");
	tap_errno(grant(g, 9999, NONE, NULL), EBADF, "unknown cid -> EBADF");
	tap_errno(grant(g, mem, 9999, NULL), EBADF, "unknown req -> EBADF");
	tap_errno(grant(g, req, NONE, NULL), EOPNOTSUPP, "a Request -> EOPNOTSUPP");
	tap_errno(grant(g, mem, mem, NULL), EOPNOTSUPP,
		  "a Memory as req -> EOPNOTSUPP");
	tap_errno(grant(g, view, NONE, NULL), EACCES, "half the buffer -> EACCES");
	tap_errno(grant(g, ro, NONE, NULL), EACCES, "read-only -> EACCES");
	tap_errno(grant(g, child, NONE, NULL), EPERM,
		  "a revocation-tree child -> EPERM");
	tap_errno(grant(g, other, NONE, NULL), EPERM,
		  "another space's Memory -> EPERM");
	if (mem_new(g, b + 100, PG, FRACTOS_PERM_ALL, &id))
		tap_bail("mem_new");
	tap_errno(grant(g, id, NONE, NULL), EINVAL,
		  "a buffer that does not start on a page -> EINVAL");
	tap_errno(cap_revoke(g, mem), 0, "revoke");
	tap_errno(grant(g, mem, NONE, NULL), EKEYREVOKED, "revoked -> EKEYREVOKED");
	tap_ok(touch(b) == 0 && pattern_is(b, 2 * PG, 1),
	       "failed grants unmap nothing");
	close(g);
	close(p);
	munmap(b, 2 * PG);
}

/* G grants to P's Request: the full story. */
static void test_to_request(void)
{
	static struct msg m;
	struct fractos_cap_info ci;
	long grants0 = total("memory_grants");
	unsigned char *b = pages(3, 7), *gm, *pmap;
	__u32 mem, dup, r, rg, x, nc;
	int g = dev_open(), p = dev_open();

	if (mem_new(g, b, 3 * PG, FRACTOS_PERM_ALL, &mem) ||
	    cap_op(g, FRACTOS_IOC_CAP_DUP, mem, &dup) ||
	    cap_move(g, mem, p, &x) ||
	    req_new(p, NONE, TAG, NULL, 0, NULL, 0, &r) ||
	    cap_move(p, r, g, &rg))
		tap_bail("setup");
	gm = map_cap(g, dup, 3 * PG);
	tap_ok(gm && pattern_is(gm, 3 * PG, 7), "G maps its Memory through an fd");
	tap_errno(grant(g, mem, rg, &nc), 0, "GRANT to P's Request");
	tap_ok(nc == NONE, "new_cid: none, the capability went to P (%u)", nc);
	tap_ok(!recv_ms(p, &m, 2000) && m.type == FRACTOS_MSG_REQUEST &&
	       m.tag == TAG && m.ncaps == 1 && !m.imm_len,
	       "P receives one invocation with one capability");
	tap_ok(!cap_info(p, m.caps[0], &ci) && ci.type == FRACTOS_OBJ_MEMORY &&
	       ci.len == 3 * PG && ci.perms == FRACTOS_PERM_ALL && !ci.offset &&
	       (ci.info_flags & FRACTOS_INFO_OWNED),
	       "the whole buffer, every right, owned by P");
	tap_ok(cap_revoked(g, mem) == 1 && cap_revoked(g, dup) == 1 &&
	       cap_revoked(p, x) == 1,
	       "every capability to the old object is revoked (G's two, P's earlier one)");
	tap_ok(gm && touch(gm) == SIGBUS, "G's fd mapping is gone (SIGBUS)");
	tap_ok(touch(b) == SIGSEGV && touch(b + 2 * PG) == SIGSEGV,
	       "G's own mapping of the buffer is gone (SIGSEGV)");
	pmap = map_cap(p, m.caps[0], 3 * PG);
	tap_ok(pmap && pattern_is(pmap, 3 * PG, 7),
	       "P maps the new capability: G's bytes, not a copy of them");
	tap_ok(total("memory_grants") == grants0 + 1,
	       "totals/memory_grants +1 (%ld -> %ld)", grants0,
	       total("memory_grants"));
	close(g);
	tap_ok(pmap && touch(pmap) == 0,
	       "G's space closed: P's Memory stays (P owns it)");
	close(p);
	tap_ok(pmap && touch(pmap) == SIGBUS, "P's closed: gone with it");
	if (gm)
		munmap(gm, 3 * PG);
	if (pmap)
		munmap(pmap, 3 * PG);
}

/* Without a Request, and with one that cannot be invoked. */
static void test_to_self(void)
{
	struct fractos_cap_info ci;
	unsigned char *b = pages(2, 9), *c = pages(1, 11), *mp;
	__u32 mem, m2, r, rg, nc;
	int g = dev_open(), p = dev_open();

	if (mem_new(g, b, 2 * PG, FRACTOS_PERM_ALL, &mem) ||
	    mem_new(g, c, PG, FRACTOS_PERM_ALL, &m2) ||
	    req_new(p, NONE, TAG, NULL, 0, NULL, 0, &r) ||
	    cap_move(p, r, g, &rg))
		tap_bail("setup");
	tap_errno(grant(g, mem, NONE, &nc), 0, "GRANT without a Request");
	tap_ok(nc != NONE && !cap_info(g, nc, &ci) &&
	       (ci.info_flags & FRACTOS_INFO_OWNED) && ci.len == 2 * PG &&
	       cap_revoked(g, mem) == 1,
	       "new_cid %u: the new object, owned here; the old one revoked", nc);
	/* (before a new mapping may take the range it left) */
	tap_ok(touch(b) == SIGSEGV, "the caller's own mapping is gone");
	mp = map_cap(g, nc, 2 * PG);
	tap_ok(mp && pattern_is(mp, 2 * PG, 9), "the new capability maps the bytes");
	if (mp)
		munmap(mp, 2 * PG);

	tap_errno(cap_revoke(p, r), 0, "P revokes its Request");
	tap_errno(grant(g, m2, rg, &nc), EKEYREVOKED,
		  "GRANT to a revoked Request -> EKEYREVOKED");
	tap_ok(nc != NONE && !cap_info(g, nc, &ci) &&
	       (ci.info_flags & FRACTOS_INFO_OWNED) && ci.len == PG,
	       "...and nothing is lost: new_cid %u holds it, owned here", nc);
	mp = map_cap(g, nc, PG);
	tap_ok(mp && pattern_is(mp, PG, 11), "its bytes are intact");
	if (mp)
		munmap(mp, PG);
	close(g);
	close(p);
}

/* Pages another live process pinned: EBUSY, until it is gone. */
static void test_other_process(void)
{
	unsigned char *mp;
	__u32 mem = NONE, nc;
	int g = dev_open(), up[2], down[2], st;
	pid_t pid;
	char x;

	if (pipe(up) || pipe(down))
		tap_bail("pipe");
	pid = fork();
	if (!pid) {
		unsigned char *b = pages(1, 13);

		if (mem_new(g, b, PG, FRACTOS_PERM_ALL, &mem) ||
		    write(up[1], &mem, sizeof(mem)) != sizeof(mem) ||
		    read(down[0], &x, 1) != 1)	/* until the parent says */
			_exit(1);
		_exit(0);
	}
	if (xread(up[0], &mem, sizeof(mem)))
		tap_bail("child");
	tap_errno(grant(g, mem, NONE, &nc), EBUSY,
		  "pages a live other process pinned -> EBUSY");
	if (write(down[1], "x", 1) != 1)
		tap_bail("pipe");
	waitpid(pid, &st, 0);
	tap_errno(grant(g, mem, NONE, &nc), 0, "once it is gone: granted");
	mp = nc != NONE ? map_cap(g, nc, PG) : NULL;
	tap_ok(mp && pattern_is(mp, PG, 13), "with the bytes it wrote");
	if (mp)
		munmap(mp, PG);
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
	close(g);
}

/* What cannot hide pages from a grant, and pages it cannot take. */
static void test_tricks(void)
{
	unsigned char *b = pages(1, 15), *r = pages(2, 17), *moved, *sh;
	__u32 mem, rm, sm, nc;
	int g = dev_open(), mfd;

	/* PROT_NONE does not hide the caller's mapping. */
	if (mem_new(g, b, PG, FRACTOS_PERM_ALL, &mem) ||
	    mprotect(b, PG, PROT_NONE))
		tap_bail("setup");
	tap_errno(grant(g, mem, NONE, &nc), 0, "GRANT of a PROT_NONE buffer");
	tap_ok(mprotect(b, PG, PROT_READ) == -1 && errno == ENOMEM,
	       "its mapping is gone all the same (mprotect: ENOMEM)");

	/* Pages moved elsewhere by mremap() are still mapped: EBUSY. */
	if (mem_new(g, r, 2 * PG, FRACTOS_PERM_ALL, &rm))
		tap_bail("setup");
	moved = mmap(NULL, 2 * PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (moved != MAP_FAILED)
		moved = mremap(r, 2 * PG, 2 * PG, MREMAP_MAYMOVE | MREMAP_FIXED,
			       moved);
	if (moved == MAP_FAILED)
		tap_bail("mremap");
	tap_errno(grant(g, rm, NONE, &nc), EBUSY,
		  "pages mremap()ed away are mapped there: EBUSY");
	tap_ok(cap_revoked(g, rm) == 0 && pattern_is(moved, 2 * PG, 17),
	       "...the Memory and the moved mapping intact");
	munmap(moved, 2 * PG);
	tap_errno(grant(g, rm, NONE, &nc), 0, "unmapped there too: granted");

	/* A file's pages stay reachable through the file: EBUSY. */
	mfd = memfd_create("fos-grant", MFD_CLOEXEC);
	if (mfd < 0 || ftruncate(mfd, PG))
		tap_bail("memfd");
	sh = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	if (sh == MAP_FAILED || mem_new(g, sh, PG, FRACTOS_PERM_ALL, &sm))
		tap_bail("memfd Memory");
	tap_errno(grant(g, sm, NONE, &nc), EBUSY, "a memfd's pages: EBUSY");
	tap_ok(touch(sh) == 0, "...and its mapping stays");
	munmap(sh, PG);
	close(mfd);
	close(g);
}

int main(void)
{
	struct snap base;

	tap_plan(14 + 12 + 8 + 3 + 7 + 1);
	snap_take(&base);
	test_bad_input();
	test_to_request();
	test_to_self();
	test_other_process();
	test_tricks();
	snap_check(&base, "grant");
	return tap_finish();
}
