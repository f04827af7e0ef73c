// SPDX-License-Identifier: GPL-2.0
/*
 * fractos selftest: RLIMIT_MEMLOCK accounting of memory_create.
 *
 * kernel/memory.c charges the pages a Memory spans (not its bytes) to the
 * creating process's user (user_struct locked_vm, as io_uring does), before
 * pinning, and refuses with ENOMEM when the user's total passes the
 * caller's RLIMIT_MEMLOCK unless the caller has CAP_IPC_LOCK; a failed pin
 * returns the charge, and the last unpin returns it too.  The pin also
 * shows in the creating process's VmPin (mm->pinned_vm), unchecked.  The
 * charge is per user, not per process: a space outlives the process that
 * pinned through it, so forked children count with their parent.  Root has CAP_IPC_LOCK, so the limited
 * checks run in a child that drops to uid/gid 65534 (nobody); the root
 * bypass is checked in another child.  Children print their own TAP lines
 * and hand their counts back through a pipe.
 */
#include <grp.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include "tap.h"
#include "fos_util.h"

#define PG	4096UL
#define RW	FRACTOS_PERM_ALL

/* VmPin of this process in pages, or -1. */
static long vmpin(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb < 0 ? -1 : kb / (long)(PG / 1024);
}

/* Set the soft RLIMIT_MEMLOCK (and the hard one too if @hard). */
static void set_memlock(rlim_t bytes, int hard)
{
	struct rlimit rl;

	getrlimit(RLIMIT_MEMLOCK, &rl);
	rl.rlim_cur = bytes;
	if (hard)
		rl.rlim_max = bytes;
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		tap_bail("setrlimit(RLIMIT_MEMLOCK, %lu)", (unsigned long)bytes);
}

static unsigned char *map(size_t npages)
{
	void *p = mmap(NULL, npages * PG, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		tap_bail("mmap");
	return p;
}

/* Run @fn in a child; its TAP lines count as ours. */
static void in_child(void (*fn)(void))
{
	int p[2], counts[3], st;
	pid_t pid;

	if (pipe(p))
		tap_bail("pipe");
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		tap_bail("fork");
	if (!pid) {
		close(p[0]);
		fn();
		counts[0] = tap_count;
		counts[1] = tap_failed;
		counts[2] = tap_skipped;
		if (write(p[1], counts, sizeof(counts)) != sizeof(counts))
			_exit(2);
		fflush(stdout);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], counts, sizeof(counts)) == sizeof(counts)) {
		tap_count = counts[0];
		tap_failed = counts[1];
		tap_skipped = counts[2];
	} else {
		tap_ok(0, "child died before reporting");
	}
	close(p[0]);
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		tap_diag("child exit status %#x", st);
}

#define LIMIT	4	/* pages */

/* Fork a child that pins @npages of @buf in space @s and exits; its errno. */
static int child_pin(int s, unsigned char *buf, size_t npages)
{
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		tap_bail("fork");
	if (!pid)
		_exit(fos_mem_create(s, buf, npages * PG, RW, NULL) ? errno : 0);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/*
 * The charge is the user's: children forked with an inherited space,
 * pinning and exiting, cannot multiply the limit (their pins outlive them
 * in the space).  Runs with nothing pinned and RLIMIT_MEMLOCK >= 4 pages.
 */
static void fork_children(unsigned char *buf)
{
	struct fos_counts c0, c1;
	int s = fos_open();

	if (s < 0)
		tap_bail("open");
	fos_counts_read(&c0);
	set_memlock(LIMIT * PG, 0);
	tap_errno(fos_mem_create(s, buf, 2 * PG, RW, NULL), 0,
		  "fork: the parent pins 2 pages");
	tap_eq(child_pin(s, buf + 2 * PG, 2), 0,
	       "fork: a child pins 2 more through the inherited space, exits");
	fos_counts_read(&c1);
	tap_eq(c1.pinned_pages - c0.pinned_pages, 4,
	       "fork: the child's pin outlives it in the space");
	tap_eq(child_pin(s, buf + 4 * PG, 1), ENOMEM,
	       "fork: a second child's page -> ENOMEM (per user, not per process)");
	tap_errno(fos_mem_create(s, buf + 4 * PG, 1, RW, NULL), ENOMEM,
		  "fork: so is the parent's");
	close(s);
	fos_counts_read(&c1);
	tap_ok(vmpin() == 0 && c1.pinned_pages == c0.pinned_pages,
	       "fork: closing the space returns every charge");
	s = fos_open();
	tap_eq(child_pin(s, buf, LIMIT), 0,
	       "fork: a child can pin the whole limit again");
	close(s);
}

static void limited(void)
{
	struct fos_counts c0, c1;
	unsigned char *buf = map(8), *big, *hole;
	uint32_t m = FRACTOS_CID_INVALID, m2;
	int s, s2;

	set_memlock(LIMIT * PG, geteuid() == 0);
	if (geteuid() == 0 &&
	    (setgroups(0, NULL) || setgid(65534) || setuid(65534)))
		tap_bail("drop to nobody");
	memset(buf, 1, 8 * PG);
	tap_ok(geteuid() != 0 && vmpin() == 0,
	       "limited: running as uid %d, VmPin %ld, RLIMIT_MEMLOCK %d pages",
	       (int)geteuid(), vmpin(), LIMIT);
	s = fos_open();
	if (s < 0)
		tap_bail("open " FRACTOS_DEVICE " as nobody");
	fos_counts_read(&c0);

	tap_errno(fos_mem_create(s, buf, LIMIT * PG, RW, &m), 0,
		  "limited: %d pages, exactly the limit", LIMIT);
	tap_eq(vmpin(), LIMIT, "limited: VmPin is %d pages", LIMIT);
	tap_errno(fos_mem_create(s, buf + LIMIT * PG, 1, RW, NULL), ENOMEM,
		  "limited: one more byte (a page) -> ENOMEM");
	tap_errno(fos_mem_create(s, buf, LIMIT * PG, RW, NULL), ENOMEM,
		  "limited: the same pages again are charged again -> ENOMEM");
	fos_counts_read(&c1);
	tap_ok(vmpin() == LIMIT &&
	       c1.pinned_pages - c0.pinned_pages == LIMIT &&
	       c1.memories - c0.memories == 1 &&
	       c1.objects - c0.objects == 1 && c1.caps - c0.caps == 1,
	       "limited: the refusals pinned and charged nothing");

	tap_errno(fos_revoke(s, m), 0, "limited: revoke the memory");
	tap_eq(vmpin(), 0, "limited: revocation returns the charge");
	tap_eq(fos_live("pinned_pages"), c0.pinned_pages,
	       "limited: ...and unpins");
	fos_close(s, m);

	tap_errno(fos_mem_create(s, buf + 1, LIMIT * PG, RW, NULL), ENOMEM,
		  "limited: %d pages' worth of bytes at an odd address span %d pages -> ENOMEM",
		  LIMIT, LIMIT + 1);
	tap_errno(fos_mem_create(s, buf + 1, LIMIT * PG - 1, RW, &m), 0,
		  "limited: ...one byte less spans %d pages", LIMIT);
	tap_eq(vmpin(), LIMIT, "limited: VmPin counts pages, not bytes");
	fos_close(s, m);
	tap_eq(vmpin(), 0, "limited: closing the last cap returns the charge");

	/* One limit per user, not per space. */
	s2 = fos_open();
	tap_errno(fos_mem_create(s, buf, 3 * PG, RW, &m), 0,
		  "limited: 3 pages in space 1");
	tap_errno(fos_mem_create(s2, buf + 3 * PG, 2 * PG, RW, NULL), ENOMEM,
		  "limited: 2 more in space 2 -> ENOMEM (one charge per user)");
	tap_errno(fos_mem_create(s2, buf + 3 * PG, PG, RW, &m2), 0,
		  "limited: 1 more in space 2 fits");
	close(s2);
	tap_eq(vmpin(), 3, "limited: closing space 2 returns its charge");

	/* Lowering the limit does not take pins away, but blocks new ones. */
	set_memlock(2 * PG, 0);
	tap_errno(fos_mem_create(s, buf + 4 * PG, PG, RW, NULL), ENOMEM,
		  "limited: limit lowered below the pinned amount -> ENOMEM");
	tap_eq(fos_copy(s, m, 0, m, PG, 10, NULL), 0,
	       "limited: the existing memory still works");
	fos_close(s, m);
	tap_errno(fos_mem_create(s, buf, 2 * PG, RW, &m), 0,
		  "limited: 2 pages fit the lowered limit");
	fos_close(s, m);

	/* A failed pin returns its charge. */
	hole = map(3);
	munmap(hole + PG, PG);
	tap_errno(fos_mem_create(s, hole, 2 * PG, RW, NULL), EFAULT,
		  "limited: range with a hole -> EFAULT");
	tap_eq(vmpin(), 0, "limited: the failed pin returned its charge");
	tap_errno(fos_mem_create(s, buf, 2 * PG, RW, &m), 0,
		  "limited: the full limit is still available");
	fos_close(s, m);

	fork_children(buf);

	/* A huge request fails before touching (or faulting) anything. */
	set_memlock(LIMIT * PG, 0);
	big = map(256 * 1024);	/* 1 GiB, never touched */
	tap_errno(fos_mem_create(s, big, 256 * 1024 * PG, RW, NULL), ENOMEM,
		  "limited: 1 GiB -> ENOMEM");
	set_memlock(0, 0);
	tap_errno(fos_mem_create(s, buf, 1, FRACTOS_PERM_READ, NULL), ENOMEM,
		  "limited: RLIMIT_MEMLOCK 0 -> ENOMEM for one byte");
	close(s);
	fos_counts_read(&c1);
	tap_ok(vmpin() == 0 && c1.pinned_pages == c0.pinned_pages &&
	       c1.memories == c0.memories && c1.objects == c0.objects,
	       "limited: nothing leaked (VmPin %ld, pinned_pages %lld -> %lld)",
	       vmpin(), c0.pinned_pages, c1.pinned_pages);
}

/* Root (CAP_IPC_LOCK) passes the limit; the pin is still accounted. */
static void privileged(void)
{
	unsigned char *buf = map(8);
	uint32_t m;
	int s;

	memset(buf, 2, 8 * PG);
	set_memlock(PG, 1);
	s = fos_open();
	if (s < 0)
		tap_bail("open");
	tap_errno(fos_mem_create(s, buf, 8 * PG, RW, &m), 0,
		  "root: CAP_IPC_LOCK passes RLIMIT_MEMLOCK (8 pages, limit 1)");
	tap_eq(vmpin(), 8, "root: the pin is still charged to VmPin");
	close(s);
	tap_eq(vmpin(), 0, "root: released with the space");
}

int main(void)
{
	struct fos_counts b0, now;

	tap_plan(33 + (geteuid() == 0 ? 3 : 1) + 1);
	fos_counts_read(&b0);
	if (vmpin() < 0)
		tap_bail("no VmPin in /proc/self/status");

	in_child(limited);
	if (geteuid() == 0)
		in_child(privileged);
	else
		tap_skip("root bypass: not root");

	tap_ok(fos_counts_wait(&b0, &now, 2000),
	       "memlock: every counter back to its value at start");
	if (!fos_counts_equal(&b0, &now)) {
		fos_counts_print("start", &b0);
		fos_counts_print("end", &now);
	}
	return tap_finish();
}
