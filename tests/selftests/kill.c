// SPDX-License-Identifier: GPL-2.0
/*
 * fractos selftest: kill -9 of processes holding pinned memory and
 * capabilities.
 *
 * A killed process's space is released like any other: its objects are
 * revoked (capabilities to them imported elsewhere fail EKEYREVOKED), its
 * capabilities dropped (objects of others it held stay valid) and its
 * pages unpinned.  The live counters must return to where they were, also
 * when the kill lands in the middle of a long copy, a pin or a blocking
 * receive.
 */
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include "tap.h"
#include "fos_util.h"

#define PG	4096UL
#define RW	FRACTOS_PERM_ALL
#define NPAGES	64
#define NDUPS	1000

static struct fos_counts b0;	/* at start */

static int send_fds(int sock, const int *fds, int n)
{
	char cbuf[CMSG_SPACE(4 * sizeof(int))] = { 0 };
	char b = 'F';
	struct iovec iov = { .iov_base = &b, .iov_len = 1 };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = CMSG_SPACE(n * sizeof(int)),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(n * sizeof(int));
	memcpy(CMSG_DATA(cm), fds, n * sizeof(int));
	return sendmsg(sock, &mh, 0) == 1 ? 0 : -1;
}

static int recv_fds(int sock, int *fds, int n)
{
	char cbuf[CMSG_SPACE(4 * sizeof(int))] = { 0 };
	char b;
	struct iovec iov = { .iov_base = &b, .iov_len = 1 };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;

	if (recvmsg(sock, &mh, 0) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&mh);
	if (!cm || cm->cmsg_type != SCM_RIGHTS ||
	    cm->cmsg_len != CMSG_LEN(n * sizeof(int)))
		return -1;
	memcpy(fds, CMSG_DATA(cm), n * sizeof(int));
	return 0;
}

static unsigned char *map(size_t npages)
{
	void *p = mmap(NULL, npages * PG, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		tap_bail("mmap");
	memset(p, 0x11, npages * PG);
	return p;
}

static void kill_wait(pid_t pid)
{
	int st;

	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
}

/* Wait until the child writes one byte to @fd (it is ready). */
static int wait_ready(int fd)
{
	char c;

	return read(fd, &c, 1) == 1 ? 0 : -1;
}

/*
 * The child: pins NPAGES pages, makes NDUPS dups, a revtree child and a
 * view, imports our memory (@pfd, inherited), sends its root and its child
 * to us and waits to be killed.
 */
static void holder(int sock, int pfd)
{
	unsigned char *buf = map(NPAGES);
	uint32_t m, c, v, d, ours;
	int s, fds[2], i;

	s = fos_open();
	if (s < 0 || fos_mem_create(s, buf, NPAGES * PG, RW, &m))
		_exit(1);
	for (i = 0; i < NDUPS; i++)
		if (fos_dup(s, m, &d))
			_exit(2);
	if (fos_revtree(s, m, &c) || fos_diminish(s, m, 0, 8, 8, &v) ||
	    fos_import(s, pfd, &ours))
		_exit(3);
	/* Use our memory once, so that the child really holds it. */
	if (fos_copy(s, m, 0, ours, 0, 16, NULL))
		_exit(4);
	if (fos_export(s, m, 0, &fds[0]) || fos_export(s, c, 0, &fds[1]))
		_exit(5);
	if (send_fds(sock, fds, 2))
		_exit(6);
	for (;;)
		pause();
}

static void test_holder(int sfd)
{
	unsigned char *mine = map(2);
	struct fos_counts full, now;
	struct fractos_cap_info ci;
	uint32_t own, cr = FRACTOS_CID_INVALID, cc = FRACTOS_CID_INVALID;
	uint32_t dst;
	int sv[2], pfd, fds[2] = { -1, -1 }, ok;
	pid_t pid;

	if (fos_mem_create(sfd, mine, PG, RW, &own) ||
	    fos_mem_create(sfd, mine + PG, PG, RW, &dst) ||
	    fos_export(sfd, own, 0, &pfd))
		tap_bail("setup");
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		tap_bail("socketpair");
	pid = fork();
	if (!pid) {
		close(sv[0]);
		holder(sv[1], pfd);
	}
	close(sv[1]);
	close(pfd);
	ok = !recv_fds(sv[0], fds, 2);
	tap_ok(ok, "holder: child ready, sent its root and revtree child");
	if (!ok)
		tap_bail("child failed");
	tap_ok(!fos_import(sfd, fds[0], &cr) && !fos_import(sfd, fds[1], &cc),
	       "holder: imported both");
	close(fds[0]);
	close(fds[1]);
	fos_counts_read(&full);
	tap_ok(full.pinned_pages >= 2 + NPAGES && full.caps >= NDUPS + 6,
	       "holder: child holds %lld pinned pages, %lld caps in all",
	       full.pinned_pages, full.caps);
	tap_eq(fos_copy(sfd, cr, 100, dst, 0, 50, NULL), 0,
	       "holder: the child's memory is usable from here");
	tap_eq(mine[PG + 10], 0x11, "holder: with the child's data");

	kill_wait(pid);
	/* What must be left: our two memories and the two imported caps. */
	for (ok = 0; ok < 300; ok++) {
		fos_counts_read(&now);
		if (now.pinned_pages == b0.pinned_pages + 2 &&
		    now.spaces == b0.spaces + 1)
			break;
		usleep(10000);
	}
	tap_eq(now.spaces - b0.spaces, 1, "kill: only our space is left");
	tap_eq(now.pinned_pages - b0.pinned_pages, 2,
	       "kill: the child's %d pages are unpinned", NPAGES);
	tap_eq(now.memories - b0.memories, 2, "kill: its memory is gone");
	tap_eq(now.caps - b0.caps, 4,
	       "kill: its %d+ caps are dropped (ours: 4)", NDUPS);
	tap_eq(now.objects - b0.objects, 4,
	       "kill: objects: our 2, its root and child (revoked, held by us)");
	tap_eq(now.capfds - b0.capfds, 0, "kill: no capability fd left");

	tap_errno(fos_copy(sfd, cr, 0, dst, 0, 1, NULL), EKEYREVOKED,
		  "kill: its memory, imported here -> EKEYREVOKED");
	tap_errno(fos_copy(sfd, cc, 0, dst, 0, 1, NULL), EKEYREVOKED,
		  "kill: its revtree child, imported here -> EKEYREVOKED");
	tap_ok(!fos_info(sfd, cr, &ci) &&
	       (ci.info_flags & FRACTOS_INFO_REVOKED) && !fos_info(sfd, cc, &ci) &&
	       (ci.info_flags & FRACTOS_INFO_REVOKED),
	       "kill: both report REVOKED");
	tap_errno(fos_copy(sfd, dst, 0, own, 0, 16, NULL), 0,
		  "kill: our memory, which it held, still works");
	tap_ok(!fos_info(sfd, own, &ci) &&
	       ci.info_flags == FRACTOS_INFO_OWNED,
	       "kill: ...and is not revoked");
	fos_close(sfd, cr);
	fos_close(sfd, cc);
	fos_close(sfd, own);
	fos_close(sfd, dst);
	close(sv[0]);
	munmap(mine, 2 * PG);
}

/* Children that get killed in the middle of something. */

#define BIG	(1024 * PG)	/* 4 MiB */

static void copier(int ready)
{
	unsigned char *a = map(BIG / PG), *b = map(BIG / PG);
	uint32_t ca, cb;
	int s = fos_open();

	if (s < 0 || fos_mem_create(s, a, BIG, RW, &ca) ||
	    fos_mem_create(s, b, BIG, RW, &cb))
		_exit(1);
	if (fos_copy(s, ca, 0, cb, 0, 0, NULL))
		_exit(2);
	if (write(ready, "r", 1) != 1)
		_exit(3);
	for (;;)
		if (fos_copy(s, ca, 0, cb, 0, 0, NULL))
			_exit(4);
}

static void pinner(int ready)
{
	unsigned char *a = map(4 * BIG / PG);
	uint32_t c;
	int s = fos_open();

	if (s < 0 || write(ready, "r", 1) != 1)
		_exit(1);
	for (;;) {
		if (fos_mem_create(s, a, 4 * BIG, RW, &c))
			_exit(2);
		fos_close(s, c);
	}
}

static void receiver(int ready)
{
	struct fractos_request_receive rr = { 0 };
	unsigned char *a = map(4);
	uint32_t c;
	int s = fos_open();

	if (s < 0 || fos_mem_create(s, a, 4 * PG, RW, &c) ||
	    write(ready, "r", 1) != 1)
		_exit(1);
	ioctl(s, FRACTOS_IOC_REQUEST_RECEIVE, &rr);	/* blocks */
	_exit(2);
}

static void test_busy(const char *what, void (*fn)(int), int delay_ms,
		      int rounds)
{
	struct fos_counts base, now;
	int r, ok = 1, p[2], st;
	pid_t pid;

	fos_counts_read(&base);
	for (r = 0; r < rounds; r++) {
		if (pipe(p))
			tap_bail("pipe");
		pid = fork();
		if (!pid) {
			close(p[0]);
			fn(p[1]);
		}
		close(p[1]);
		if (wait_ready(p[0])) {
			waitpid(pid, &st, 0);
			tap_diag("%s: child failed early, status %#x", what,
				 st);
			ok = 0;
			close(p[0]);
			continue;
		}
		close(p[0]);
		usleep(delay_ms * 1000 + r * 7000);
		kill_wait(pid);
		if (!fos_counts_wait(&base, &now, 3000)) {
			fos_counts_print("before", &base);
			fos_counts_print("after", &now);
			ok = 0;
		}
	}
	tap_ok(ok, "kill: %d x killed while %s: counters back", rounds, what);
}

static void test_many(void)
{
	struct fos_counts base, now;
	pid_t pids[8];
	int i, p[2];

	fos_counts_read(&base);
	if (pipe(p))
		tap_bail("pipe");
	for (i = 0; i < 8; i++) {
		pids[i] = fork();
		if (!pids[i]) {
			close(p[0]);
			receiver(p[1]);
		}
	}
	close(p[1]);
	for (i = 0; i < 8; i++)
		wait_ready(p[0]);
	close(p[0]);
	fos_counts_read(&now);
	tap_eq(now.memories - base.memories, 8, "kill: 8 children, a memory each");
	for (i = 0; i < 8; i++)
		kill(pids[i], SIGKILL);
	for (i = 0; i < 8; i++)
		waitpid(pids[i], NULL, 0);
	tap_ok(fos_counts_wait(&base, &now, 3000),
	       "kill: all 8 killed at once: counters back");
}

int main(void)
{
	struct fos_counts now;
	int sfd;

	signal(SIGPIPE, SIG_IGN);
	tap_plan(23);
	fos_counts_read(&b0);
	if (b0.spaces != 0 || b0.pinned_pages != 0)
		tap_diag("note: not alone (spaces %lld, pinned %lld)",
			 b0.spaces, b0.pinned_pages);
	sfd = fos_open();
	if (sfd < 0)
		tap_bail("open " FRACTOS_DEVICE);

	test_holder(sfd);
	close(sfd);
	tap_ok(fos_counts_wait(&b0, &now, 2000), "kill: holder test left nothing");

	test_busy("copying 4 MiB in a loop", copier, 20, 4);
	test_busy("pinning 16 MiB in a loop", pinner, 20, 4);
	test_busy("blocked in request_receive", receiver, 10, 2);
	test_many();

	tap_ok(fos_counts_wait(&b0, &now, 2000),
	       "kill: every counter back to its value at start");
	if (!fos_counts_equal(&b0, &now)) {
		fos_counts_print("start", &b0);
		fos_counts_print("end", &now);
	}
	return tap_finish();
}
