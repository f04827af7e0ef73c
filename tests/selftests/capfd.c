// SPDX-License-Identifier: GPL-2.0
/*
 * fractos selftest: capabilities as file descriptors.
 *
 * CAP_EXPORT / CAP_IMPORT: the fd (fdinfo, CLOEXEC), import keeps object,
 * view and rights and does not consume the fd, bad fds, revoked and
 * orphaned capabilities, fork inheritance, EMFILE from the fd table, and
 * the module staying pinned by a capability fd alone.
 */
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "tap.h"
#include "fos_util.h"

#define PG	4096UL
#define RW	FRACTOS_PERM_ALL
#define RD	FRACTOS_PERM_READ

static int sfd;
static unsigned char *buf, *dbuf;
static uint32_t dst;

static int use(uint32_t cid)
{
	return fos_copy(sfd, cid, 0, dst, 0, 1, NULL) ? errno : 0;
}

static uint32_t mk(const void *addr, uint64_t len, uint32_t perms)
{
	uint32_t cid;

	if (fos_mem_create(sfd, addr, len, perms, &cid))
		tap_bail("memory_create");
	return cid;
}

static void test_export_import(void)
{
	struct fractos_cap_info a, b;
	struct fos_counts c0, c1;
	char want[128], link[128], path[64];
	uint32_t m, i1, i2, v, iv;
	int fd, fdc;
	ssize_t n;

	fos_counts_read(&c0);
	m = mk(buf, 2 * PG, RW);
	fos_info(sfd, m, &a);
	tap_errno(fos_export(sfd, m, 0, &fd), 0, "export: succeeds");
	tap_ok(fd > 2 && fd != sfd, "export: returns a new fd (%d)", fd);
	fos_counts_read(&c1);
	tap_ok(c1.capfds - c0.capfds == 1 && c1.caps - c0.caps == 1 &&
	       c1.objects - c0.objects == 1,
	       "export: one capfd more, no new cap or object");
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = 0;
	tap_ok(strstr(link, "[fractos-cap]") != NULL,
	       "export: fd is a [fractos-cap] anon inode (%s)", link);
	snprintf(want, sizeof(want), "%u:%u:%llu", a.oid.node, a.oid.epoch,
		 (unsigned long long)a.oid.id);
	tap_ok(!strcmp(fos_fdinfo(fd, "fractos-oid"), want),
	       "export: fdinfo fractos-oid %s", fos_fdinfo(fd, "fractos-oid"));
	tap_ok(!strcmp(fos_fdinfo(fd, "fractos-view"), "0+8192") &&
	       !strcmp(fos_fdinfo(fd, "fractos-revoked"), "0"),
	       "export: fdinfo view %s, revoked %s", fos_fdinfo(fd, "fractos-view"),
	       fos_fdinfo(fd, "fractos-revoked"));
	tap_eq(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0,
	       "export: no FD_CLOEXEC without FRACTOS_EXPORT_CLOEXEC");
	tap_errno(fos_export(sfd, m, FRACTOS_EXPORT_CLOEXEC, &fdc), 0,
		  "export: with FRACTOS_EXPORT_CLOEXEC");
	tap_ok(fcntl(fdc, F_GETFD) & FD_CLOEXEC, "export: FD_CLOEXEC set");
	close(fdc);
	tap_errno(fos_export(sfd, m, 0x2, NULL), EINVAL,
		  "export: unknown flag 0x2 -> EINVAL");
	tap_errno(fos_export(sfd, m, 0x80000000U, NULL), EINVAL,
		  "export: unknown flag 0x80000000 -> EINVAL");
	tap_eq(use(m), 0, "export: does not consume the cid");

	tap_errno(fos_import(sfd, fd, &i1), 0, "import: succeeds");
	tap_errno(fos_import(sfd, fd, &i2), 0,
		  "import: again from the same fd (not consumed)");
	fos_info(sfd, i1, &b);
	tap_ok(i1 != m && i2 != i1 && b.oid.id == a.oid.id &&
	       b.perms == a.perms && b.offset == a.offset && b.len == a.len &&
	       b.type == FRACTOS_OBJ_MEMORY,
	       "import: new cids, same object, view and rights");
	tap_eq(b.info_flags, FRACTOS_INFO_OWNED,
	       "import: into the creating space it is OWNED");
	tap_eq(use(i2), 0, "import: the imported cap works");

	v = 0;
	if (fos_diminish(sfd, m, FRACTOS_PERM_WRITE, 300, 400, &v))
		tap_bail("diminish");
	if (fos_export(sfd, v, 0, &fdc))
		tap_bail("export");
	tap_ok(!strcmp(fos_fdinfo(fdc, "fractos-view"), "300+400") &&
	       !strcmp(fos_fdinfo(fdc, "fractos-perms"), "0x1"),
	       "export: fdinfo of a view: %s perms %s",
	       fos_fdinfo(fdc, "fractos-view"), fos_fdinfo(fdc, "fractos-perms"));
	tap_errno(fos_import(sfd, fdc, &iv), 0, "import: a diminished view");
	fos_info(sfd, iv, &b);
	tap_ok(b.perms == RD && b.offset == 300 && b.len == 400,
	       "import: keeps the view's rights and range");
	tap_errno(fos_copy(sfd, dst, 0, iv, 0, 1, NULL), EACCES,
		  "import: a READ view stays read-only");
	close(fdc);

	/* Bad fds. */
	{
		int nul = open("/dev/null", O_RDONLY | O_CLOEXEC), p[2];
		int sp = fos_open();

		tap_errno(fos_import(sfd, nul, NULL), EINVAL,
			  "import: /dev/null -> EINVAL");
		tap_errno(fos_import(sfd, sp, NULL), EINVAL,
			  "import: a space fd -> EINVAL");
		if (pipe(p))
			tap_bail("pipe");
		tap_errno(fos_import(sfd, p[0], NULL), EINVAL,
			  "import: a pipe -> EINVAL");
		close(p[0]);
		close(p[1]);
		close(sp);
		tap_errno(fos_import(sfd, -1, NULL), EBADF,
			  "import: fd -1 -> EBADF");
		close(nul);
		tap_errno(fos_import(sfd, nul, NULL), EBADF,
			  "import: a closed fd -> EBADF");
		tap_errno(fos_import(sfd, 1 << 20, NULL), EBADF,
			  "import: fd 1<<20 -> EBADF");
	}

	/* The fd holds the object while no cid does. */
	fos_close(sfd, m);
	fos_close(sfd, i1);
	fos_close(sfd, i2);
	fos_close(sfd, v);
	fos_close(sfd, iv);
	fos_counts_read(&c1);
	tap_ok(c1.objects - c0.objects == 1 &&
	       c1.pinned_pages - c0.pinned_pages == 2 &&
	       c1.caps == c0.caps,
	       "capfd: with every cid closed the fd keeps object and pages");
	tap_errno(fos_import(sfd, fd, &i1), 0, "capfd: import it back");
	tap_eq(use(i1), 0, "capfd: and it works");
	tap_errno(close(fd), 0, "capfd: close the fd");
	tap_eq(use(i1), 0, "capfd: closing the fd revokes nothing");
	fos_close(sfd, i1);
	fos_counts_read(&c1);
	tap_ok(fos_counts_equal(&c0, &c1),
	       "capfd: counters back once the fd and cids are closed");
}

static void test_revoked(void)
{
	struct fos_counts c0, c1;
	struct fractos_cap_info ci;
	uint32_t m, i;
	int fd, sp;

	fos_counts_read(&c0);
	m = mk(buf, PG, RW);
	if (fos_export(sfd, m, 0, &fd))
		tap_bail("export");
	tap_errno(fos_revoke(sfd, m), 0, "revoked: revoke after export");
	tap_ok(!strcmp(fos_fdinfo(fd, "fractos-revoked"), "1"),
	       "revoked: fdinfo says revoked");
	tap_errno(fos_import(sfd, fd, &i), 0,
		  "revoked: importing a revoked capability works");
	tap_ok(!fos_info(sfd, i, &ci) && (ci.info_flags & FRACTOS_INFO_REVOKED),
	       "revoked: ...and it is revoked");
	tap_eq(use(i), EKEYREVOKED, "revoked: use -> EKEYREVOKED");
	tap_eq(fos_live("pinned_pages"), c0.pinned_pages,
	       "revoked: the fd does not keep the pages pinned");
	close(fd);
	fos_close(sfd, m);
	fos_close(sfd, i);

	/* An exported fd outlives its creator's space, revoked. */
	sp = fos_open();
	if (sp < 0 || fos_mem_create(sp, buf, PG, RW, &m) ||
	    fos_export(sp, m, 0, &fd))
		tap_bail("setup");
	close(sp);
	tap_eq(fos_live("pinned_pages"), c0.pinned_pages,
	       "orphan: closing the creator's space unpins");
	tap_errno(fos_import(sfd, fd, &i), 0,
		  "orphan: the fd can still be imported");
	tap_eq(use(i), EKEYREVOKED,
	       "orphan: the object died with its creator -> EKEYREVOKED");
	close(fd);
	fos_close(sfd, i);
	fos_counts_read(&c1);
	tap_ok(fos_counts_equal(&c0, &c1), "orphan: nothing left behind");
}

/* A child inherits an exported fd, imports it and writes into our buffer. */
static void test_fork(void)
{
	unsigned char *mine = mmap(NULL, PG, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char want[100];
	uint32_t m;
	int fd, st;
	pid_t pid;

	memset(mine, 0, PG);
	m = mk(mine, PG, RW);
	if (fos_export(sfd, m, 0, &fd))
		tap_bail("export");
	pid = fork();
	if (!pid) {
		unsigned char src[100];
		uint32_t c, s;
		int cs = fos_open();

		fos_fill(src, sizeof(src), 77);
		if (cs < 0 || fos_import(cs, fd, &c) ||
		    fos_mem_create(cs, src, sizeof(src), RD, &s))
			_exit(2);
		if (fos_copy(cs, s, 0, c, 500, 0, NULL))
			_exit(3);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	       "fork: child imported the inherited fd and copied (status %#x)",
	       st);
	fos_fill(want, sizeof(want), 77);
	tap_ok(!memcmp(mine + 500, want, 100), "fork: data arrived at offset 500");
	tap_eq(use(m), 0, "fork: the child's exit did not revoke our memory");
	close(fd);
	fos_close(sfd, m);
	munmap(mine, PG);
}

static void test_emfile(void)
{
	struct fos_counts c0, c1;
	struct rlimit old, rl;
	uint32_t m;
	int next;

	m = mk(buf, PG, RW);
	fos_counts_read(&c0);
	next = dup(0);
	close(next);
	getrlimit(RLIMIT_NOFILE, &old);
	rl = old;
	rl.rlim_cur = next;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		tap_bail("setrlimit");
	tap_errno(fos_export(sfd, m, 0, NULL), EMFILE,
		  "export: fd table full (RLIMIT_NOFILE %d) -> EMFILE", next);
	setrlimit(RLIMIT_NOFILE, &old);
	fos_counts_read(&c1);
	tap_ok(fos_counts_equal(&c0, &c1),
	       "export: EMFILE leaks no capfd or object");
	fos_close(sfd, m);
}

/* A capability fd alone keeps the module loaded. */
static void test_module_pinned(void)
{
	uint32_t m;
	int fd, sp, ret, e;

	sp = fos_open();
	if (sp < 0 || fos_mem_create(sp, buf, PG, RW, &m) ||
	    fos_export(sp, m, 0, &fd))
		tap_bail("setup");
	close(sp);
	close(sfd);
	if (geteuid()) {
		tap_skip("delete_module needs root");
	} else if (fos_live("spaces") != 0) {
		tap_skip("another space is open");
	} else {
		ret = syscall(SYS_delete_module, "fractos", O_NONBLOCK);
		e = errno;
		tap_ok(ret == -1 && (e == EAGAIN || e == EBUSY) &&
		       access(FRACTOS_DEVICE, F_OK) == 0,
		       "module: rmmod refused while only a capability fd is open (ret %d errno %d)",
		       ret, e);
	}
	close(fd);
	sfd = fos_open();
	if (sfd < 0)
		tap_bail("reopen");
}

int main(void)
{
	struct fos_counts b0, now;

	tap_plan(50);
	fos_counts_read(&b0);
	buf = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	dbuf = mmap(NULL, PG, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED || dbuf == MAP_FAILED)
		tap_bail("mmap");
	memset(buf, 5, 2 * PG);
	sfd = fos_open();
	if (sfd < 0)
		tap_bail("open " FRACTOS_DEVICE);
	dst = mk(dbuf, PG, RW);

	test_export_import();
	test_revoked();
	test_fork();
	test_emfile();
	fos_close(sfd, dst);
	test_module_pinned();

	close(sfd);
	tap_ok(fos_counts_wait(&b0, &now, 2000),
	       "capfd: every counter back to its value at start");
	if (!fos_counts_equal(&b0, &now)) {
		fos_counts_print("start", &b0);
		fos_counts_print("end", &now);
	}
	return tap_finish();
}
