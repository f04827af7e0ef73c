// SPDX-License-Identifier: GPL-2.0
/*
 * fractos selftest: mmap() of a Memory capability fd ("Mapping Memory" in
 * the uAPI header).
 *
 * The mapping shows the very pages of the Memory (writes go both ways),
 * with the view's rights and within its whole pages: read-only views map
 * read-only and cannot be mprotect()ed writable; private, exec, unaligned
 * or too long mappings and other capabilities are refused with the
 * documented errnos.  Revoking the object - or the revocation-tree child
 * the fd was made from - unmaps it: the next access is SIGBUS, while a
 * mapping through the root still works.  A mapping outlives its fd, is
 * inherited by fork(), and nothing is left once all is gone.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include "fos_proc.h"

#define PG	4096UL

static sigjmp_buf jb;
static volatile sig_atomic_t got;

static void on_fault(int sig)
{
	got = sig;
	siglongjmp(jb, 1);
}

/* Touch @p (read, or write @v): 0, or the signal it raised. */
static int touch(volatile unsigned char *p, int write, unsigned char v)
{
	struct sigaction sa = { .sa_handler = on_fault }, old_bus, old_segv;
	int r = 0;

	sigaction(SIGBUS, &sa, &old_bus);
	sigaction(SIGSEGV, &sa, &old_segv);
	got = 0;
	if (!sigsetjmp(jb, 1)) {
		if (write)
			*p = v;
		else
			(void)*p;
	} else {
		r = got;
	}
	sigaction(SIGBUS, &old_bus, NULL);
	sigaction(SIGSEGV, &old_segv, NULL);
	return r;
}

static int export(int s, __u32 cid)
{
	struct fractos_cap_export a = { .cid = cid, .flags = FRACTOS_EXPORT_CLOEXEC };

	if (ioctl(s, FRACTOS_IOC_CAP_EXPORT, &a))
		return -1;
	return a.fd;
}

/* mmap() of @len bytes at page @pg of @fd: the address, or NULL (errno). */
static unsigned char *map(int fd, size_t len, int prot, int flags, off_t pg)
{
	void *p = mmap(NULL, len, prot, flags, fd, pg * (off_t)PG);

	return p == MAP_FAILED ? NULL : p;
}

static int map_errno(int fd, size_t len, int prot, int flags, off_t pg)
{
	unsigned char *p = map(fd, len, prot, flags, pg);

	if (p) {
		munmap(p, len);
		return 0;
	}
	return errno;
}

int main(void)
{
	unsigned char *buf, *m, *m2, *ro;
	__u32 mem, view, rview, odd, child, req;
	int s = dev_open(), fd, vfd, rfd, ofd, cfd, qfd, st, i, ok;
	long memmaps0 = live("memmaps");
	pid_t pid;

	tap_plan(28);
	buf = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		tap_bail("mmap");
	for (i = 0; i < (int)(4 * PG); i++)
		buf[i] = (unsigned char)(i * 13);
	if (mem_new(s, buf, 4 * PG, FRACTOS_PERM_ALL, &mem) ||
	    mem_diminish(s, mem, 0, PG, 2 * PG, &view) ||
	    mem_diminish(s, mem, FRACTOS_PERM_WRITE, 0, PG + 100, &rview) ||
	    mem_diminish(s, mem, 0, 100, PG, &odd) ||
	    req_new(s, NONE, 1, NULL, 0, NULL, 0, &req))
		tap_bail("setup");
	fd = export(s, mem);
	vfd = export(s, view);
	rfd = export(s, rview);
	ofd = export(s, odd);
	qfd = export(s, req);
	if (fd < 0 || vfd < 0 || rfd < 0 || ofd < 0 || qfd < 0)
		tap_bail("export");
	tap_ok(live("memmaps") == memmaps0 + 1,
	       "one inode for the object, whatever the view (memmaps %ld)",
	       live("memmaps") - memmaps0);

	m = map(fd, 4 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, 0);
	tap_ok(m && !memcmp(m, buf, 4 * PG), "a shared mapping shows the Memory's bytes");
	if (!m)
		tap_bail("map");
	m[5] = 0xa5;
	buf[3 * PG + 7] = 0x5a;
	tap_ok(buf[5] == 0xa5 && m[3 * PG + 7] == 0x5a,
	       "the same pages: writes go both ways");
	m2 = map(vfd, 2 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, 0);
	tap_ok(m2 && !memcmp(m2, buf + PG, 2 * PG),
	       "a view [1, 3) pages maps from its own start");
	tap_ok(m2 && map_errno(vfd, PG, PROT_READ, MAP_SHARED, 1) == 0 &&
	       map_errno(vfd, PG, PROT_READ, MAP_SHARED, 2) == ENXIO &&
	       map_errno(vfd, 3 * PG, PROT_READ, MAP_SHARED, 0) == ENXIO,
	       "offsets within the view map; past its last page: ENXIO");

	ro = map(rfd, PG, PROT_READ, MAP_SHARED, 0);
	tap_ok(ro && ro[5] == 0xa5, "a read-only view maps read-only");
	tap_errno(ro ? mprotect(ro, PG, PROT_READ | PROT_WRITE) : -1, EACCES,
		  "...and cannot be made writable (mprotect: EACCES)");
	tap_ok(ro && touch(ro, 1, 1) == SIGSEGV, "writing to it: SIGSEGV");
	tap_ok(map_errno(rfd, PG, PROT_READ | PROT_WRITE, MAP_SHARED, 0) == EACCES,
	       "a writable shared mapping of a read-only view: EACCES");
	tap_ok(map_errno(rfd, 2 * PG, PROT_READ, MAP_SHARED, 0) == ENXIO,
	       "a view of one page and 100 bytes maps one page only: ENXIO");
	tap_ok(map_errno(fd, PG, PROT_READ, MAP_PRIVATE, 0) == EINVAL,
	       "a private mapping: EINVAL");
	tap_ok(map_errno(fd, PG, PROT_READ | PROT_EXEC, MAP_SHARED, 0) == EACCES,
	       "PROT_EXEC: EACCES");
	tap_ok(map_errno(ofd, PG, PROT_READ, MAP_SHARED, 0) == EINVAL,
	       "a view that does not start on a page: EINVAL");
	tap_ok(map_errno(qfd, PG, PROT_READ, MAP_SHARED, 0) == ENODEV,
	       "a Request's fd: ENODEV");
	tap_ok(map_errno(fd, PG, PROT_READ, MAP_SHARED, 4) == ENXIO,
	       "past the end: ENXIO");

	/* The mapping outlives its fd and is inherited. */
	close(fd);
	tap_ok(m[5] == 0xa5, "the fd closed, the mapping still works");
	pid = fork();
	if (!pid)
		_exit(m[3 * PG + 7] == 0x5a ? 0 : 1);
	waitpid(pid, &st, 0);
	tap_ok(WIFEXITED(st) && !WEXITSTATUS(st), "a forked child reads through it");

	/* A revocation-tree child's fd: revoking it unmaps its mappings only. */
	if (cap_op(s, FRACTOS_IOC_CAP_CREATE_REVTREE, mem, &child))
		tap_bail("revtree");
	cfd = export(s, child);
	m2 = cfd >= 0 ? map(cfd, PG, PROT_READ | PROT_WRITE, MAP_SHARED, 0) : NULL;
	tap_ok(m2 && m2[5] == 0xa5, "a revocation-tree child maps too");
	tap_errno(cap_revoke(s, child), 0, "revoke the child");
	tap_ok(m2 && touch(m2, 0, 0) == SIGBUS,
	       "its mapping is gone: SIGBUS on the next access");
	tap_ok(touch(m, 0, 0) == 0 && m[5] == 0xa5,
	       "the root's mapping still works");
	tap_ok(map_errno(cfd, PG, PROT_READ, MAP_SHARED, 0) == EKEYREVOKED,
	       "mmap of the revoked child's fd: EKEYREVOKED");

	/* Revoking the object unmaps everything; the buffer is the owner's. */
	tap_errno(cap_revoke(s, mem), 0, "revoke the Memory");
	ok = touch(m, 0, 0) == SIGBUS && touch(m + 3 * PG, 1, 1) == SIGBUS &&
	     touch(ro, 0, 0) == SIGBUS;
	tap_ok(ok, "every mapping of it: SIGBUS, reads and writes");
	tap_ok(buf[5] == 0xa5 && buf[3 * PG + 7] == 0x5a,
	       "the owner's own pages are untouched");
	munmap(m, 4 * PG);
	munmap(ro, PG);
	if (m2)
		munmap(m2, PG);
	close(vfd);
	close(rfd);
	close(ofd);
	close(cfd);
	close(qfd);
	tap_ok(live("memmaps") == memmaps0,
	       "revoked: its inodes are gone (memmaps %ld)",
	       live("memmaps") - memmaps0);

	/* A mapping that is still there when everything else goes. */
	if (mem_new(s, buf, PG, FRACTOS_PERM_ALL, &mem))
		tap_bail("mem_new");
	fd = export(s, mem);
	m = fd >= 0 ? map(fd, PG, PROT_READ, MAP_SHARED, 0) : NULL;
	close(fd);
	close(s);
	tap_ok(m && touch(m, 0, 0) == SIGBUS,
	       "the space closed: its Memory revoked, its mapping gone");
	munmap(m, PG);
	tap_ok(live("memmaps") == memmaps0 && live("memories") == 0,
	       "nothing left (memmaps %ld, memories %ld)",
	       live("memmaps") - memmaps0, live("memories"));
	return tap_finish();
}
