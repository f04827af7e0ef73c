// SPDX-License-Identifier: GPL-2.0
/*
 * fractos selftest: device memory, a dma-buf with no struct pages behind
 * it (tests/exporter's fractos_testbar over QEMU's ivshmem BAR, the shape
 * of GPU VRAM; vm/run --bar SIZE).
 *
 * The import and its counters; views; copies into and out of it, and
 * between two such buffers, checked through the exporter's own mmap;
 * copies through the node's own RDMA connection (fabric_loopback), staged
 * and counted in the totals' staged_bytes; the buffer outliving its fd;
 * revocation; a dynamic exporter moving the buffer (move_notify: the
 * Memory is revoked, its holders see EKEYREVOKED, the old place is never
 * touched again); an exporter with no kernel mapping (as the NVIDIA
 * driver's nv_dmabuf: EOPNOTSUPP); a killed importer; bad input.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "tap.h"
#include "fos_util.h"
#include "fos_nl.h"
#include "fos_dmabuf.h"
#include "fos_testbar.h"

#define PG	4096UL
#define SZ	(16 * PG)
#define RW	FRACTOS_PERM_ALL
#define RD	FRACTOS_PERM_READ

static int sfd, bfd;

static int import(int dmabuf, uint64_t off, uint64_t len, uint32_t perms,
		  uint32_t *cid)
{
	return fos_mem_import(sfd, dmabuf, off, len, perms, cid);
}

static uint32_t anon_mem(unsigned char **buf, size_t len)
{
	uint32_t cid;

	*buf = fos_anon_mem(sfd, len, &cid);
	if (!*buf)
		tap_bail("memory_create over anonymous memory");
	return cid;
}

static unsigned char *bar_map(int dmabuf, size_t len)
{
	unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
				dmabuf, 0);

	if (m == MAP_FAILED)
		tap_bail("mmap of the BAR's dma-buf");
	return m;
}

/* Import, views, copies both ways and between two, close, kill, revoke. */
static void test_static(void)
{
	long long dm0 = fos_live("dmabufs"), pin0;
	unsigned char *map, *map2, *buf, *want;
	uint32_t cid = ~0U, view = ~0U, c2 = ~0U, cid2 = ~0U, anon, bad;
	struct fractos_cap_info ci;
	int fd, fd2, ok, st;
	uint64_t copied = 0;
	pid_t pid;

	fd = fos_testbar_export(bfd, 0, SZ, 0);
	fd2 = fos_testbar_export(bfd, SZ, SZ, 0);
	if (fd < 0 || fd2 < 0)
		tap_bail("FOS_TESTBAR_EXPORT");
	map = bar_map(fd, SZ);
	map2 = bar_map(fd2, SZ);
	want = malloc(SZ);
	if (!want)
		tap_bail("malloc");
	anon = anon_mem(&buf, SZ);
	pin0 = fos_live("pinned_pages");

	tap_ok(!import(fd, 0, SZ, RW, &cid), "import 64 KiB of a BAR (no struct pages)");
	tap_ok(!fos_info(sfd, cid, &ci) && ci.type == FRACTOS_OBJ_MEMORY &&
	       ci.len == SZ && ci.perms == RW,
	       "a Memory capability of 64 KiB, READ|WRITE");
	tap_ok(fos_live("dmabufs") == dm0 + 1 && fos_live("pinned_pages") == pin0,
	       "counted as a dma-buf; no page is pinned (dmabufs %+lld pinned %+lld)",
	       fos_live("dmabufs") - dm0, fos_live("pinned_pages") - pin0);

	fos_fill(map, SZ, 31);
	tap_ok(!fos_copy(sfd, cid, 0, anon, 0, SZ, &copied) && copied == SZ &&
	       !memcmp(buf, map, SZ),
	       "memory_copy out of device memory gives the BAR's bytes");
	fos_fill(buf, SZ, 32);
	memcpy(want, map, SZ);
	memcpy(want + 1000, buf + 3, 3 * PG + 5);
	tap_ok(!fos_copy(sfd, anon, 3, cid, 1000, 3 * PG + 5, NULL) &&
	       !memcmp(map, want, SZ),
	       "memory_copy into it at an unaligned offset: the BAR holds exactly those bytes");

	tap_ok(!fos_diminish(sfd, cid, FRACTOS_PERM_WRITE, PG + 7, 2 * PG, &view),
	       "diminish to a READ view at byte 4103");
	memset(buf, 0, SZ);
	tap_ok(!fos_copy(sfd, view, 0, anon, 0, 0, &copied) && copied == 2 * PG &&
	       !memcmp(buf, map + PG + 7, 2 * PG),
	       "the view reads its own bytes of the BAR");
	tap_errno(fos_copy(sfd, anon, 0, view, 0, 16, NULL), EACCES,
		  "the READ view cannot be written: EACCES");
	tap_errno(fos_diminish(sfd, cid, 0, SZ - 8, 16, &bad), ERANGE,
		  "a view past its end: ERANGE");
	tap_errno(import(fd, SZ - 8, 16, RW, NULL), ERANGE,
		  "an import past the buffer's end: ERANGE");
	tap_errno(import(-1, 0, SZ, RW, NULL), EBADF, "fd -1: EBADF");
	tap_errno(import(bfd, 0, SZ, RW, NULL), EINVAL,
		  "the exporter's own fd, not a dma-buf: EINVAL");

	/* Device memory to device memory: no two mappings held at once. */
	tap_ok(!import(fd2, 0, SZ, RW, &cid2), "import a second BAR buffer");
	fos_fill(map2, SZ, 33);
	memcpy(want, map2, SZ);
	memcpy(want + PG - 1, map + 5, 2 * PG + 9);
	tap_ok(!fos_copy(sfd, cid, 5, cid2, PG - 1, 2 * PG + 9, NULL) &&
	       !memcmp(map2, want, SZ),
	       "memory_copy between two device memories, unaligned: those bytes and no others");
	tap_errno(fos_copy(sfd, cid, 0, cid, 8, 64, NULL), EINVAL,
		  "an overlapping copy within it: EINVAL");

	/* The Memory keeps the buffer: the fd and the mapping can go. */
	memcpy(want, map, SZ);
	munmap(map, SZ);
	close(fd);
	fos_fill(buf, SZ, 34);
	memcpy(want + 2 * PG, buf, PG);
	ok = !fos_copy(sfd, anon, 0, cid, 2 * PG, PG, NULL);
	memset(buf, 0, SZ);
	ok = ok && !fos_copy(sfd, cid, 0, anon, 0, SZ, NULL) && !memcmp(buf, want, SZ);
	tap_ok(ok, "after close() and munmap() the Memory still reads and writes the BAR");

	pid = fork();
	if (pid == 0) {
		int kfd = fos_testbar_export(bfd, 2 * SZ, SZ, 0);
		uint32_t k;

		sfd = fos_open();
		if (sfd < 0 || kfd < 0 || import(kfd, 0, SZ, RW, &k))
			_exit(1);
		close(kfd);
		raise(SIGKILL);
		_exit(2);
	}
	tap_ok(pid > 0 && waitpid(pid, &st, 0) == pid && WIFSIGNALED(st),
	       "a child imports device memory into its own space and is killed");
	tap_eq(fos_live_settle("dmabufs", dm0 + 2), dm0 + 2,
	       "the killed child's dma-buf is given back");

	tap_ok(!fos_dup(sfd, cid, &c2) && !fos_revoke(sfd, cid), "revoke the import");
	tap_errno(fos_copy(sfd, c2, 0, anon, 0, 16, NULL), EKEYREVOKED,
		  "its other capability: EKEYREVOKED");
	tap_eq(fos_live_settle("dmabufs", dm0 + 1), dm0 + 1,
	       "the dma-buf is given back at revocation");
	fos_close(sfd, cid);
	fos_close(sfd, c2);
	fos_close(sfd, view);
	fos_close(sfd, cid2);
	fos_close(sfd, anon);
	munmap(map2, SZ);
	close(fd2);
	munmap(buf, SZ);
	free(want);
	tap_eq(fos_live_settle("dmabufs", dm0), dm0, "every import given back");
}

/*
 * An exporter with attachments only, no kernel mapping and no mmap (the
 * NVIDIA driver's nv_dmabuf is so): refused, and nothing held.
 */
static void test_nomap(void)
{
	long long dm0 = fos_live("dmabufs");
	int fd = fos_testbar_export(bfd, 0, SZ, FOS_TESTBAR_NOMAP);

	if (fd < 0)
		tap_bail("export a buffer with no kernel mapping");
	tap_errno(import(fd, 0, SZ, RW, NULL), EOPNOTSUPP,
		  "an exporter with no kernel mapping (as nv_dmabuf): EOPNOTSUPP");
	tap_ok(fos_live("dmabufs") == dm0, "and nothing of it held");
	close(fd);
}

/* A dynamic exporter moves the buffer under the Memory. */
static void test_move(void)
{
	long long moves0 = fos_total("devmem_moves"), dm0 = fos_live("dmabufs");
	unsigned char *buf, *map;
	uint32_t cid = ~0U, c2 = ~0U, anon;
	struct fractos_cap_info ci;
	int fd;

	fd = fos_testbar_export(bfd, 0, SZ, FOS_TESTBAR_DYNAMIC);
	if (fd < 0)
		tap_bail("FOS_TESTBAR_EXPORT dynamic");
	anon = anon_mem(&buf, SZ);
	tap_ok(!import(fd, 0, SZ, RW, &cid) && !fos_dup(sfd, cid, &c2),
	       "import a dynamic exporter's buffer; a second capability");
	map = bar_map(fd, SZ);
	fos_fill(map, SZ, 41);
	munmap(map, SZ);
	tap_ok(!fos_copy(sfd, cid, 0, anon, 0, SZ, NULL) &&
	       !fos_copy(sfd, anon, 0, cid, 0, SZ, NULL),
	       "copies out of it and into it before the move");
	tap_errno(fos_testbar_move(bfd, fd, 3 * SZ), 0,
		  "the exporter moves the buffer (move_notify; no pin refused it)");
	tap_eq(fos_total("devmem_moves"), moves0 + 1, "totals: devmem_moves +1");
	fos_fill(buf, SZ, 42);
	tap_errno(fos_copy(sfd, anon, 0, c2, 0, SZ, NULL), EKEYREVOKED,
		  "a copy into the moved Memory: EKEYREVOKED");
	tap_errno(fos_copy(sfd, cid, 0, anon, 0, SZ, NULL), EKEYREVOKED,
		  "a copy out of it: EKEYREVOKED");
	map = bar_map(fd, SZ);
	fos_fill(buf, SZ, 41);
	tap_ok(!memcmp(map, buf, SZ),
	       "the exporter's bytes moved intact: the revoked Memory wrote nothing");
	munmap(map, SZ);
	tap_eq(fos_live_settle("dmabufs", dm0), dm0,
	       "the moved buffer's import is given back at once");
	tap_ok(!fos_info(sfd, cid, &ci) && (ci.info_flags & FRACTOS_INFO_REVOKED),
	       "CAP_INFO: the object is revoked");
	tap_errno(fos_testbar_move(bfd, fd, 3 * SZ + PG), EINVAL,
		  "the test exporter refuses a move onto the buffer's own range");
	tap_errno(fos_testbar_move(bfd, fd, 0), 0,
		  "a second move finds no importer");
	tap_eq(fos_total("devmem_moves"), moves0 + 1, "and counts nothing");
	fos_close(sfd, cid);
	fos_close(sfd, c2);
	fos_close(sfd, anon);
	munmap(buf, SZ);
	close(fd);
}

/* Copies through the node's own RDMA connection: staged through pages. */
static void test_loopback(void)
{
	long long st0 = fos_total("staged_bytes"), ms;
	unsigned char *buf, *map;
	uint32_t cid = ~0U, anon, self;
	struct in_addr addr;
	int fd;

	if (!fos_nl_self_addr(&addr) || access(FOS_PARAM_DIR "fabric_loopback", F_OK)) {
		tap_skip("loopback: no address for fabric_loopback");
		tap_skip("loopback: no address for fabric_loopback");
		tap_skip("loopback: no address for fabric_loopback");
		tap_skip("loopback: no address for fabric_loopback");
		return;
	}
	self = fos_param("node_id");
	if (fos_nl_node_add(self, addr) || !fos_nl_wait_up(self, 30) ||
	    fos_set_param("fabric_loopback", 1))
		tap_bail("fabric_loopback setup");
	/* 2.5 MiB: more than one staging window (1 MiB) each way. */
	fd = fos_testbar_export(bfd, 0, 640 * PG, 0);
	if (fd < 0 || import(fd, 0, 640 * PG, RW, &cid))
		tap_bail("device memory for the loopback");
	map = bar_map(fd, 640 * PG);
	anon = anon_mem(&buf, 640 * PG);
	fos_fill(map, 640 * PG, 51);
	tap_ok(!fos_copy(sfd, cid, 0, anon, 0, 0, NULL) &&
	       !memcmp(buf, map, 640 * PG),
	       "loopback: 2.5 MiB out of device memory over RDMA, equal");
	fos_fill(buf, 640 * PG, 52);
	tap_ok(!fos_copy(sfd, anon, 0, cid, 0, 0, NULL) &&
	       !memcmp(buf, map, 640 * PG),
	       "loopback: 2.5 MiB into it over RDMA, seen by the exporter's mmap");
	tap_eq(fos_total("staged_bytes") - st0, 2 * 640 * (long long)PG,
	       "totals: staged_bytes counts both ways once");
	ms = fos_param("copy_cache_ms");
	{
		long long in0 = fos_total("inline_copies");

		/*
		 * Small ones inline, through the mapping, across a page;
		 * with no kept regions, which would ask a grant first.
		 */
		fos_set_param("copy_cache_ms", 0);
		fos_fill(map, 640 * PG, 53);
		fos_fill(buf, 640 * PG, 54);
		tap_ok(!fos_copy(sfd, cid, PG - 50, anon, 7, 100, NULL) &&
		       !memcmp(buf + 7, map + PG - 50, 100) &&
		       !fos_copy(sfd, anon, 2 * PG - 9, cid, 3 * PG - 150, 300, NULL) &&
		       !memcmp(map + 3 * PG - 150, buf + 2 * PG - 9, 300) &&
		       fos_total("inline_copies") == in0 + 2 &&
		       fos_total("staged_bytes") - st0 == 2 * 640 * (long long)PG,
		       "loopback: 100 bytes out of and 300 into device memory, inline, nothing staged");
	}
	{
		long long kc0 = fos_total("kept_copies");
		int i, ok = !fos_set_param("copy_cache_ms", 1000);

		/*
		 * Kept regions: device memory is never kept (its region is a
		 * staged snapshot); the plain grant its owner answers with
		 * serves the copy that asked, and it is not asked again.
		 */
		fos_fill(map, 640 * PG, 55);
		for (i = 0; ok && i < 5; i++)
			ok = !fos_copy(sfd, cid, i * 100, anon, 0, 100, NULL) &&
			     !memcmp(buf, map + i * 100, 100);
		tap_ok(ok && !fos_live_settle("kept_regions", 0) &&
		       fos_total("kept_copies") == kc0,
		       "copy_cache_ms=1000: five copies out of device memory, equal, none through a kept region");
		if (ms >= 0)
			fos_set_param("copy_cache_ms", ms);
	}
	fos_close(sfd, cid);
	fos_close(sfd, anon);
	fos_set_param("fabric_loopback", 0);
	fos_nl_node_del(self);
	munmap(map, 640 * PG);
	munmap(buf, 640 * PG);
	close(fd);
}

int main(void)
{
	struct fos_counts b0, now;
	const char *why = NULL;

	if (access("/sys/class/misc/fractos", F_OK)) {
		printf("1..0 # SKIP fractos.ko is not loaded\n");
		return 0;
	}
	bfd = fos_testbar_open(&why);
	if (bfd < 0) {
		printf("1..0 # SKIP %s\n", why);
		return 0;
	}
	if (fos_testbar_size(bfd) < 4 << 20)
		tap_bail("the BAR is smaller than 4 MiB");
	sfd = fos_open();
	if (sfd < 0)
		tap_bail("open " FRACTOS_DEVICE);
	fos_counts_read(&b0);
	tap_plan_late();
	test_static();
	test_nomap();
	test_move();
	test_loopback();
	tap_ok(fos_counts_wait(&b0, &now, 2000), "every counter back where it started");
	return tap_finish();
}
