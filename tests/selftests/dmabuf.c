// SPDX-License-Identifier: GPL-2.0
/*
 * fractos selftest: Memory over a dma-buf (FRACTOS_MEMORY_DMABUF).
 *
 * Every dma-buf exporter this kernel has is tried in turn: vgem (a DRM
 * driver's PRIME export: the shape of a GPU's buffer objects; 6.1,
 * 6.12 and the debug kernel), udmabuf (a memfd's pages: 6.12; 6.1's,
 * in the debug kernel, has no kernel mapping: EOPNOTSUPP) and the system
 * DMA heap (6.12).  For each: the import and its counters, bytes
 * both ways checked through the exporter's own mmap, a range at an
 * offset, the buffer outliving its fd, the bad inputs and their errnos
 * (EBADF, EINVAL, ERANGE, EACCES), revocation, a killed importer, and
 * copies through the node's own RDMA connection (fabric_loopback).
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

#define PG	4096UL
#define SZ	(4 * PG)
#define RW	FRACTOS_PERM_ALL
#define RD	FRACTOS_PERM_READ
#define WR	FRACTOS_PERM_WRITE

static int sfd;

static void tap_skip_n(int n, const char *why)
{
	while (n--)
		tap_skip("%s", why);
}

#define NEXP	FOS_NEXPORTERS
#define NTESTS	24	/* per exporter */

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

static void test_exporter(const struct fos_exporter *e)
{
	long long dm0 = fos_live("dmabufs"), pin0 = fos_live("pinned_pages");
	long long mem0 = fos_live("memories");
	struct fractos_cap_info ci;
	struct fos_counts b0, now;
	unsigned char *map, *buf, *want;
	uint32_t cid = ~0U, part = ~0U, ro = ~0U, anon, c2 = ~0U;
	int fd, rofd, devnull, ok;
	uint64_t copied = 0;
	pid_t pid;
	int st;

	fos_counts_read(&b0);
	fd = e->alloc(SZ, 1);
	if (fd < 0) {
		char why[64];

		snprintf(why, sizeof(why), "%s: no such exporter in this kernel", e->name);
		tap_skip_n(NTESTS, why);
		return;
	}
	map = mmap(NULL, SZ, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		tap_bail("%s: mmap of the dma-buf", e->name);
	want = malloc(SZ);
	if (!want)
		tap_bail("malloc");
	anon = anon_mem(&buf, SZ);

	/* The import and what it counts. */
	if (import(fd, 0, SZ, RW, &cid) && errno == EOPNOTSUPP) {
		/* 6.1's udmabuf has no vmap: the documented refusal. */
		tap_ok(fos_live("dmabufs") == dm0,
		       "%s: this exporter gives no kernel mapping: EOPNOTSUPP, nothing held",
		       e->name);
		tap_skip_n(NTESTS - 2, "no kernel mapping from this exporter");
		fos_close(sfd, anon);
		munmap(buf, SZ);
		munmap(map, SZ);
		close(fd);
		free(want);
		tap_ok(fos_counts_wait(&b0, &now, 2000), "%s: counters back to where they started",
		       e->name);
		return;
	}
	tap_ok(cid != ~0U, "%s: import the whole buffer", e->name);
	tap_ok(!fos_info(sfd, cid, &ci) && ci.type == FRACTOS_OBJ_MEMORY &&
	       ci.len == SZ && ci.perms == RW,
	       "%s: a Memory capability of %lu bytes, READ|WRITE", e->name, SZ);
	tap_ok(fos_live("dmabufs") == dm0 + 1 && fos_live("memories") == mem0 + 2 &&
	       fos_live("pinned_pages") == pin0 + (long long)(SZ / PG),
	       "%s: counted as a dma-buf and a Memory, its pages not as pinned "
	       "(dmabufs %+lld memories %+lld pinned %+lld)", e->name,
	       fos_live("dmabufs") - dm0, fos_live("memories") - mem0,
	       fos_live("pinned_pages") - pin0);

	/* Bytes out of the buffer and into it, checked by the exporter. */
	fos_fill(map, SZ, 11);
	tap_ok(!fos_copy(sfd, cid, 0, anon, 0, SZ, &copied) && copied == SZ &&
	       !memcmp(buf, map, SZ),
	       "%s: memory_copy out of it gives the exporter's bytes", e->name);
	fos_fill(buf, SZ, 12);
	memcpy(want, map, SZ);
	memcpy(want + 1000, buf + 3, 5000);
	tap_ok(!fos_copy(sfd, anon, 3, cid, 1000, 5000, NULL) &&
	       !memcmp(map, want, SZ),
	       "%s: memory_copy into it at an offset: the exporter's mmap sees exactly those bytes",
	       e->name);

	/* A range at an unaligned offset. */
	tap_ok(!import(fd, PG + 7, 2 * PG, RD, &part), "%s: import [4103, 12295)", e->name);
	memset(buf, 0, SZ);
	tap_ok(!fos_copy(sfd, part, 0, anon, 0, 0, &copied) && copied == 2 * PG &&
	       !memcmp(buf, map + PG + 7, 2 * PG),
	       "%s: its view starts at byte 4103 of the buffer", e->name);
	tap_errno(fos_copy(sfd, anon, 0, part, 0, 16, NULL), EACCES,
		  "%s: a READ-only import cannot be written", e->name);

	/* Bad inputs. */
	tap_errno(import(-1, 0, SZ, RW, NULL), EBADF, "%s: fd -1 -> EBADF", e->name);
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	tap_errno(import(devnull, 0, SZ, RW, NULL), EINVAL,
		  "%s: a file that is not a dma-buf -> EINVAL", e->name);
	close(devnull);
	tap_errno(import(fd, SZ - 10, 11, RW, NULL), ERANGE,
		  "%s: one byte past the end -> ERANGE", e->name);
	tap_errno(import(fd, SZ, 1, RW, NULL), ERANGE,
		  "%s: starting at the end -> ERANGE", e->name);
	tap_errno(import(fd, 0, 0, RW, NULL), EINVAL, "%s: len 0 -> EINVAL", e->name);
	tap_errno(import(fd, UINT64_MAX - 1, 4, RW, NULL), EINVAL,
		  "%s: offset + len overflows -> EINVAL", e->name);
	if (e->can_readonly) {
		rofd = e->alloc(SZ, 0);
		tap_errno(import(rofd, 0, SZ, RW, NULL), EACCES,
			  "%s: WRITE on a dma-buf not open for writing -> EACCES", e->name);
		tap_ok(!import(rofd, 0, SZ, RD, &ro) && !fos_close(sfd, ro),
		       "%s: READ on it is allowed", e->name);
		close(rofd);
	} else {
		tap_skip_n(2, "udmabuf: its exports are always open for writing");
	}
	tap_eq(fos_live_settle("dmabufs", dm0 + 2), dm0 + 2, "%s: failed imports hold nothing",
	       e->name);

	/* The Memory keeps the buffer: the fd and the mapping can go. */
	memcpy(want, map, SZ);
	munmap(map, SZ);
	close(fd);
	fos_fill(buf, SZ, 13);
	memcpy(want + 2 * PG, buf, PG);
	ok = !fos_copy(sfd, anon, 0, cid, 2 * PG, PG, NULL);
	memset(buf, 0, SZ);
	ok = ok && !fos_copy(sfd, cid, 0, anon, 0, SZ, NULL) && !memcmp(buf, want, SZ);
	tap_ok(ok, "%s: after close() and munmap() the Memory still reads and writes the buffer",
	       e->name);

	/* Another process's import in its own space, killed holding it. */
	pid = fork();
	if (pid == 0) {
		int kfd = e->alloc(SZ, 1);
		uint32_t k;

		sfd = fos_open();
		if (sfd < 0 || kfd < 0 || import(kfd, 0, SZ, RW, &k))
			_exit(1);
		close(kfd);
		raise(SIGKILL);
		_exit(2);
	}
	tap_ok(pid > 0 && waitpid(pid, &st, 0) == pid && WIFSIGNALED(st),
	       "%s: a child imports one into its own space and is killed", e->name);
	tap_eq(fos_live_settle("dmabufs", dm0 + 2), dm0 + 2,
	       "%s: the killed child's dma-buf is given back", e->name);

	/* Revocation. */
	tap_ok(!fos_dup(sfd, cid, &c2) && !fos_revoke(sfd, cid),
	       "%s: revoke the import", e->name);
	tap_errno(fos_copy(sfd, c2, 0, anon, 0, 16, NULL), EKEYREVOKED,
		  "%s: its other capability gives EKEYREVOKED", e->name);
	tap_ok(fos_live_settle("dmabufs", dm0 + 1) == dm0 + 1 && fos_live("memories") == mem0 + 2,
	       "%s: the dma-buf is given back at revocation", e->name);
	fos_close(sfd, cid);
	fos_close(sfd, c2);
	fos_close(sfd, part);
	fos_close(sfd, anon);
	munmap(buf, SZ);
	free(want);
	tap_ok(fos_counts_wait(&b0, &now, 2000) && fos_live("dmabufs") == dm0,
	       "%s: counters back to where they started", e->name);
}

/* Copies through the node's own RDMA connection: the fabric's path. */
static void test_loopback(void)
{
	unsigned char *buf, *map;
	uint32_t cid = ~0U, anon, self;
	struct in_addr addr;
	const char *name = NULL;
	int fd;

	fd = fos_dmabuf_import_any(sfd, SZ, RW, &cid, &name);
	if (fd < 0) {
		tap_skip_n(3, "loopback: no dma-buf exporter with a kernel mapping here");
		return;
	}
	if (!fos_nl_self_addr(&addr) || access(FOS_PARAM_DIR "fabric_loopback", F_OK)) {
		fos_close(sfd, cid);
		close(fd);
		tap_skip_n(3, "loopback: no address for fabric_loopback");
		return;
	}
	self = fos_param("node_id");
	if (fos_nl_node_add(self, addr) || !fos_nl_wait_up(self, 30) ||
	    fos_set_param("fabric_loopback", 1))
		tap_bail("fabric_loopback setup");
	map = mmap(NULL, SZ, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		tap_bail("mmap of the dma-buf");
	anon = anon_mem(&buf, SZ);
	fos_fill(map, SZ, 21);
	tap_ok(!fos_copy(sfd, cid, 0, anon, 0, SZ, NULL) && !memcmp(buf, map, SZ),
	       "loopback (%s): RDMA out of a dma-buf Memory", name);
	fos_fill(buf, SZ, 22);
	tap_ok(!fos_copy(sfd, anon, 0, cid, 0, SZ, NULL) && !memcmp(buf, map, SZ),
	       "loopback (%s): RDMA into it, seen by the exporter's mmap",
	       name);
	tap_ok(!fos_revoke(sfd, cid) && !fos_revoke(sfd, anon) &&
	       !fos_close(sfd, cid) && !fos_close(sfd, anon),
	       "loopback: revoke and close both");
	fos_set_param("fabric_loopback", 0);
	fos_nl_node_del(self);
	munmap(map, SZ);
	munmap(buf, SZ);
	close(fd);
}

int main(void)
{
	struct fos_counts b0, now;
	long long dm0;
	unsigned int i;

	if (access("/sys/class/misc/fractos", F_OK)) {
		printf("1..0 # SKIP fractos.ko is not loaded\n");
		return 0;
	}
	sfd = fos_open();
	if (sfd < 0)
		tap_bail("open " FRACTOS_DEVICE);
	fos_vgem_fd = fos_vgem_open();
	fos_counts_read(&b0);
	dm0 = fos_live("dmabufs");
	tap_plan(NEXP * NTESTS + 4);
	for (i = 0; i < NEXP; i++) {
		if (!strcmp(fos_exporters[i].name, "vgem") && fos_vgem_fd < 0) {
			tap_skip_n(NTESTS, "vgem: no vgem driver in this kernel");
			continue;
		}
		test_exporter(&fos_exporters[i]);
	}
	test_loopback();
	tap_ok(fos_counts_wait(&b0, &now, 2000) && fos_live("dmabufs") == dm0,
	       "every counter back where it started, dmabufs included");
	return tap_finish();
}
