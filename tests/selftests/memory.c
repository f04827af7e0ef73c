// SPDX-License-Identifier: GPL-2.0
/*
 * fractos selftest: Memory objects.
 *
 * memory_create (pinning, rights, bad arguments), memory_diminish (views,
 * no escalation, ERANGE), memory_copy (data byte for byte, rights, the
 * size rule, overlap) and a third-party copy between two other processes'
 * memories, with the capabilities passed as fds over SCM_RIGHTS.
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
#define RD	FRACTOS_PERM_READ
#define WR	FRACTOS_PERM_WRITE

static int sfd;

static unsigned char *map(size_t npages)
{
	void *p = mmap(NULL, npages * PG, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		tap_bail("mmap");
	memset(p, 0, npages * PG);
	return p;
}

static int all_zero(const unsigned char *p, size_t n)
{
	while (n--)
		if (*p++)
			return 0;
	return 1;
}

static uint32_t mk(const void *addr, uint64_t len, uint32_t perms)
{
	uint32_t cid;

	if (fos_mem_create(sfd, addr, len, perms, &cid))
		tap_bail("memory_create(%p, %llu, %u)", addr,
			 (unsigned long long)len, perms);
	return cid;
}

static uint32_t dim(uint32_t cid, uint32_t drop, uint64_t off, uint64_t len)
{
	uint32_t n;

	if (fos_diminish(sfd, cid, drop, off, len, &n))
		tap_bail("memory_diminish(%u)", cid);
	return n;
}

static uint32_t make_request(void)
{
	struct fractos_request_create rc = { .base = FRACTOS_CID_INVALID };

	if (ioctl(sfd, FRACTOS_IOC_REQUEST_CREATE, &rc))
		tap_bail("request_create");
	return rc.cid;
}

static void test_create(void)
{
	struct fos_counts b0, now;
	struct fractos_cap_info ci;
	unsigned char *buf = map(4), *ro, *hole;
	long long maxpin = fos_param("max_pin_bytes");
	uint32_t c0, c1, cro, cwo;

	fos_counts_read(&b0);
	tap_errno(fos_mem_create(sfd, buf, 3 * PG, RW, &c0), 0,
		  "create: 3 pages RW");
	tap_eq(c0, 0, "create: first cid of an empty space is 0");
	fos_counts_read(&now);
	tap_eq(now.pinned_pages - b0.pinned_pages, 3,
	       "create: 3 pages pinned");
	tap_eq(now.memories - b0.memories, 1, "create: one memory live");
	tap_eq(fos_info(sfd, c0, &ci), 0, "create: cap_info");
	tap_ok(ci.type == FRACTOS_OBJ_MEMORY && ci.perms == RW &&
	       ci.offset == 0 && ci.len == 3 * PG && ci.depth == 0 &&
	       ci.info_flags == FRACTOS_INFO_OWNED,
	       "create: cap_info type %u perms %u off %llu len %llu depth %u flags %#x",
	       ci.type, ci.perms, (unsigned long long)ci.offset,
	       (unsigned long long)ci.len, ci.depth, ci.info_flags);

	/* Any alignment: 4096 bytes from buf + 100 straddle two pages. */
	tap_errno(fos_mem_create(sfd, buf + 100, PG, RW, &c1), 0,
		  "create: unaligned address");
	fos_counts_read(&now);
	tap_eq(now.pinned_pages - b0.pinned_pages, 5,
	       "create: unaligned 4096 bytes pin 2 pages");
	tap_ok(!fos_info(sfd, c1, &ci) && ci.len == PG && ci.offset == 0,
	       "create: unaligned view is [0, 4096)");

	/* Bad arguments: nothing gets pinned. */
	tap_errno(fos_mem_create(sfd, buf, PG, 0, NULL), EINVAL,
		  "create: perms 0 -> EINVAL");
	tap_errno(fos_mem_create(sfd, buf, PG, 0x4, NULL), EINVAL,
		  "create: unknown perm bit 0x4 -> EINVAL");
	tap_errno(fos_mem_create(sfd, buf, PG, RW | 0x80000000U, NULL),
		  EINVAL, "create: unknown perm bit 0x80000000 -> EINVAL");
	tap_errno(fos_mem_create(sfd, buf, 0, RW, NULL), EINVAL,
		  "create: len 0 -> EINVAL");
	tap_errno(fos_mem_create(sfd, (void *)(uintptr_t)(UINT64_MAX - 100),
				 PG, RW, NULL), EINVAL,
		  "create: addr + len overflows -> EINVAL");
	if (maxpin > 0)
		tap_errno(fos_mem_create(sfd, buf, (uint64_t)maxpin + 1, RD,
					 NULL), EINVAL,
			  "create: len > max_pin_bytes (%lld) -> EINVAL",
			  maxpin);
	else
		tap_skip("max_pin_bytes is %lld", maxpin);

	hole = map(3);
	munmap(hole + PG, PG);
	tap_errno(fos_mem_create(sfd, hole + PG, PG, RW, NULL), EFAULT,
		  "create: unmapped range -> EFAULT");
	tap_errno(fos_mem_create(sfd, hole, 3 * PG, RW, NULL), EFAULT,
		  "create: range with an unmapped page -> EFAULT");
	tap_errno(fos_mem_create(sfd, NULL, PG, RD, NULL), EFAULT,
		  "create: NULL address -> EFAULT");

	/*
	 * With max_pin_bytes 0 ("no limit") a huge len once rounded to a
	 * page count of 0: a cap of ~2^64 bytes over no pages.
	 */
	if (!fos_set_param("max_pin_bytes", 0)) {
		int r, e;

		tap_errno(fos_mem_create(sfd, (void *)(uintptr_t)0x10,
					 UINT64_MAX - 0x100e, RW, NULL), EFAULT,
			  "create: max_pin_bytes 0, len 2^64 - 0x100f -> EFAULT");
		/* EFAULT past 47-bit user space, EINVAL (> 1 TiB) with LA57. */
		r = fos_mem_create(sfd, buf, (1ULL << 47) - 2 * PG, RD, NULL);
		e = errno;

		tap_ok(r == -1 && (e == EFAULT || e == EINVAL),
		       "create: max_pin_bytes 0, 2^47 bytes -> EFAULT or EINVAL (ret %d, %s)",
		       r, strerror(e));
		if (fos_set_param("max_pin_bytes", maxpin))
			tap_bail("restore max_pin_bytes");
	} else {
		tap_skip("cannot set max_pin_bytes (not root?)");
		tap_skip("cannot set max_pin_bytes (not root?)");
	}

	ro = map(2);
	fos_fill(ro, 2 * PG, 9);
	if (mprotect(ro, 2 * PG, PROT_READ))
		tap_bail("mprotect");
	tap_errno(fos_mem_create(sfd, ro, 2 * PG, RW, NULL), EFAULT,
		  "create: WRITE on a read-only mapping -> EFAULT");
	tap_errno(fos_mem_create(sfd, ro, 2 * PG, WR, NULL), EFAULT,
		  "create: write-only on a read-only mapping -> EFAULT");
	fos_counts_read(&now);
	tap_ok(now.pinned_pages - b0.pinned_pages == 5 &&
	       now.memories - b0.memories == 2 &&
	       now.objects - b0.objects == 2 && now.caps - b0.caps == 2,
	       "create: failed creates leak nothing (pinned +%lld, memories +%lld, objects +%lld, caps +%lld)",
	       now.pinned_pages - b0.pinned_pages,
	       now.memories - b0.memories, now.objects - b0.objects,
	       now.caps - b0.caps);
	tap_eq(fos_ncaps(sfd), 2, "create: failed creates take no cid");

	tap_errno(fos_mem_create(sfd, ro, 2 * PG, RD, &cro), 0,
		  "create: READ on a read-only mapping");
	/* The read-only memory is readable: copy it into c0. */
	{
		uint64_t copied = 0;

		tap_errno(fos_copy(sfd, cro, 0, c0, 0, 0, &copied), 0,
			  "create: copy from the read-only memory");
		tap_ok(copied == 2 * PG && !memcmp(buf, ro, 2 * PG),
		       "create: its data arrives (copied %llu)",
		       (unsigned long long)copied);
	}
	tap_errno(fos_copy(sfd, c0, 0, cro, 0, 16, NULL), EACCES,
		  "create: a READ-only memory is no copy destination");

	tap_errno(fos_mem_create(sfd, buf + 3 * PG, PG, WR, &cwo), 0,
		  "create: write-only memory");
	tap_ok(!fos_info(sfd, cwo, &ci) && ci.perms == WR,
	       "create: write-only memory has perms WRITE only");

	/* Closing every capability unpins everything. */
	fos_close(sfd, c0);
	fos_close(sfd, c1);
	fos_close(sfd, cro);
	fos_close(sfd, cwo);
	fos_counts_read(&now);
	tap_ok(fos_counts_equal(&b0, &now),
	       "create: closing the last capabilities unpins everything");
	if (!fos_counts_equal(&b0, &now)) {
		fos_counts_print("before", &b0);
		fos_counts_print("after", &now);
	}
	munmap(buf, 4 * PG);
	munmap(ro, 2 * PG);
	munmap(hole, PG);
	munmap(hole + 2 * PG, PG);
}

/* Memory is the user's pages, pinned: later writes are seen by copies. */
static void test_visibility(void)
{
	unsigned char *s = map(3), *d = map(3);
	uint32_t cs, cd;
	uint64_t copied = 0;

	fos_fill(s, 3 * PG, 1);
	cs = mk(s, 3 * PG, RW);
	cd = mk(d, 3 * PG, RW);
	tap_errno(fos_copy(sfd, cs, 0, cd, 0, 0, &copied), 0,
		  "visible: copy-all");
	tap_eq(copied, 3 * PG, "visible: copied is the whole view");
	tap_ok(!memcmp(s, d, 3 * PG),
	       "visible: destination buffer equals source byte for byte");

	/* Write after pinning, through the process's own mapping. */
	fos_fill(s, 3 * PG, 2);
	tap_errno(fos_copy(sfd, cs, 0, cd, 0, 0, NULL), 0,
		  "visible: copy again after the source changed");
	tap_ok(!memcmp(s, d, 3 * PG),
	       "visible: the new data is copied (pages are shared, not a snapshot)");
	fos_close(sfd, cs);
	fos_close(sfd, cd);
	munmap(s, 3 * PG);
	munmap(d, 3 * PG);
}

static void test_diminish(void)
{
	unsigned char *a = map(3), *s = map(3);
	struct fractos_cap_info ci, ca;
	struct fos_counts b0, now;
	uint32_t ca_, cs, v, v2, vr, vr2, vnone, req, n;

	fos_fill(s, 3 * PG, 3);
	ca_ = mk(a, 3 * PG, RW);
	cs = mk(s, 3 * PG, RW);
	fos_info(sfd, ca_, &ca);
	fos_counts_read(&b0);

	tap_errno(fos_diminish(sfd, ca_, WR, 100, 500, &v), 0,
		  "diminish: drop WRITE, [100, 600)");
	tap_ok(!fos_info(sfd, v, &ci) && ci.perms == RD && ci.offset == 100 &&
	       ci.len == 500 && ci.type == FRACTOS_OBJ_MEMORY,
	       "diminish: view perms %u offset %llu len %llu", ci.perms,
	       (unsigned long long)ci.offset, (unsigned long long)ci.len);
	tap_ok(ci.oid.id == ca.oid.id && ci.oid.node == ca.oid.node &&
	       ci.oid.epoch == ca.oid.epoch && ci.depth == 0 &&
	       !(ci.info_flags & FRACTOS_INFO_REVTREE),
	       "diminish: same object (oid), not a revtree child");
	tap_errno(fos_diminish(sfd, v, 0, 5, 10, &v2), 0,
		  "diminish: nested view [5, 15) of it");
	tap_ok(!fos_info(sfd, v2, &ci) && ci.offset == 105 && ci.len == 10 &&
	       ci.perms == RD,
	       "diminish: nested offsets add up (offset %llu len %llu)",
	       (unsigned long long)ci.offset, (unsigned long long)ci.len);

	/* No escalation. */
	tap_errno(fos_diminish(sfd, v, 0, 0, 500, &vr), 0,
		  "diminish: drop nothing from a READ view");
	tap_ok(!fos_info(sfd, vr, &ci) && ci.perms == RD,
	       "diminish: rights stay READ (no escalation, perms %u)",
	       ci.perms);
	tap_errno(fos_copy(sfd, cs, 0, vr, 0, 16, NULL), EACCES,
		  "diminish: the re-diminished READ view is no destination");
	tap_ok(all_zero(a, 3 * PG), "diminish: refused copy wrote nothing");
	tap_errno(fos_dup(sfd, vr, &vr2), 0, "diminish: dup of a READ view");
	tap_ok(!fos_info(sfd, vr2, &ci) && ci.perms == RD && ci.offset == 100,
	       "diminish: dup keeps view and rights");
	tap_errno(fos_diminish(sfd, ca_, RW, 0, 10, &vnone), 0,
		  "diminish: dropping every right is allowed");
	tap_errno(fos_copy(sfd, vnone, 0, cs, 0, 1, NULL), EACCES,
		  "diminish: a no-rights view cannot be read");
	tap_errno(fos_copy(sfd, cs, 0, vnone, 0, 1, NULL), EACCES,
		  "diminish: a no-rights view cannot be written");

	/* Bad arguments. */
	tap_errno(fos_diminish(sfd, ca_, 0x4, 0, 1, NULL), EINVAL,
		  "diminish: unknown drop_perms bit -> EINVAL");
	tap_errno(fos_diminish(sfd, ca_, 0, 0, 0, NULL), EINVAL,
		  "diminish: len 0 -> EINVAL");
	tap_errno(fos_diminish(sfd, ca_, 0, UINT64_MAX, 2, NULL), EINVAL,
		  "diminish: offset + len overflows -> EINVAL");
	tap_errno(fos_diminish(sfd, ca_, 0, 3 * PG, 1, NULL), ERANGE,
		  "diminish: offset == view len -> ERANGE");
	tap_errno(fos_diminish(sfd, ca_, 0, 0, 3 * PG + 1, NULL), ERANGE,
		  "diminish: len past the view -> ERANGE");
	tap_errno(fos_diminish(sfd, ca_, 0, 3 * PG - 1, 2, NULL), ERANGE,
		  "diminish: last byte + 1 -> ERANGE");
	tap_errno(fos_diminish(sfd, ca_, 0, 1ULL << 62, 1, NULL), ERANGE,
		  "diminish: huge offset -> ERANGE");
	tap_errno(fos_diminish(sfd, v, 0, 0, 501, NULL), ERANGE,
		  "diminish: past a diminished view (not the buffer) -> ERANGE");
	tap_errno(fos_diminish(sfd, v, 0, 500, 1, NULL), ERANGE,
		  "diminish: at the end of a diminished view -> ERANGE");
	tap_errno(fos_diminish(sfd, v, 0, 499, 1, &n), 0,
		  "diminish: last byte of a diminished view");
	tap_ok(!fos_info(sfd, n, &ci) && ci.offset == 599 && ci.len == 1,
	       "diminish: last byte view is [599, 600)");
	tap_errno(fos_diminish(sfd, ca_, 0, 0, 3 * PG, &n), 0,
		  "diminish: the whole view");
	tap_errno(fos_diminish(sfd, 999, 0, 0, 1, NULL), EBADF,
		  "diminish: unknown cid -> EBADF");
	req = make_request();
	tap_errno(fos_diminish(sfd, req, 0, 0, 1, NULL), EOPNOTSUPP,
		  "diminish: a Request -> EOPNOTSUPP");
	fos_close(sfd, req);

	fos_counts_read(&now);
	tap_ok(now.pinned_pages == b0.pinned_pages &&
	       now.memories == b0.memories && now.objects == b0.objects,
	       "diminish: views pin nothing and create no object");

	/*
	 * View offsets: bytes copied into a view land at the view's offset
	 * in the buffer, bytes copied from a view come from its offset.
	 */
	v = dim(ca_, 0, 1000, 100);
	tap_errno(fos_copy(sfd, cs, 0, v, 10, 50, NULL), 0,
		  "view: copy 50 bytes into view [1000, 1100) at 10");
	tap_ok(!memcmp(a + 1010, s, 50) && all_zero(a, 1010) &&
	       all_zero(a + 1060, 3 * PG - 1060),
	       "view: bytes land at [1010, 1060), nothing else written");
	memset(a, 0, 3 * PG);
	v2 = dim(cs, WR, 2000, 300);
	tap_errno(fos_copy(sfd, v2, 7, ca_, 3000, 40, NULL), 0,
		  "view: copy from view [2000, 2300) at 7");
	tap_ok(!memcmp(a + 3000, s + 2007, 40) && all_zero(a, 3000) &&
	       all_zero(a + 3040, 3 * PG - 3040),
	       "view: source bytes come from [2007, 2047)");
	memset(a, 0, 3 * PG);
	v = dim(ca_, 0, PG - 6, 20);
	tap_errno(fos_copy(sfd, v2, 0, v, 0, 0, NULL), ERANGE,
		  "view: copy-all of 300 bytes into a 20-byte view -> ERANGE");
	tap_ok(all_zero(a, 3 * PG), "view: refused copy wrote nothing");
	tap_errno(fos_copy(sfd, v2, 0, v, 0, 20, NULL), 0,
		  "view: copy into a view straddling a page boundary");
	tap_ok(!memcmp(a + PG - 6, s + 2000, 20) && all_zero(a, PG - 6) &&
	       all_zero(a + PG + 14, 2 * PG - 14),
	       "view: straddling bytes land right");

	fos_close(sfd, ca_);
	fos_close(sfd, cs);
	munmap(a, 3 * PG);
	munmap(s, 3 * PG);
}

/* Close every cid below @upto (ignoring EBADF). */
static void close_all(uint32_t upto)
{
	uint32_t i;

	for (i = 0; i < upto; i++)
		fos_close(sfd, i);
}

static void test_copy(void)
{
	unsigned char *s = map(5), *d = map(5), *w = map(1), *un = map(2);
	uint32_t cs, cd, cro, cwo, vwo, cw, v300, vd100, v1, v2, req, cun;
	struct fos_counts b0, now;
	uint64_t copied;
	const uint64_t big = 3 * PG + 123;

	fos_counts_read(&b0);
	fos_fill(s, 5 * PG, 4);
	cs = mk(s, 5 * PG, RW);
	cd = mk(d, 5 * PG, RW);

	/* Byte for byte, unaligned and across pages. */
	copied = 0;
	tap_errno(fos_copy(sfd, cs, 7, cd, PG - 3, big, &copied), 0,
		  "copy: %llu bytes, src offset 7, dst offset 4093",
		  (unsigned long long)big);
	tap_eq(copied, big, "copy: copied == len");
	tap_ok(!memcmp(d + PG - 3, s + 7, big) && all_zero(d, PG - 3) &&
	       all_zero(d + PG - 3 + big, 5 * PG - (PG - 3 + big)),
	       "copy: data verified byte for byte, nothing around it written");
	memset(d, 0, 5 * PG);

	/* Rights. */
	cro = dim(cd, WR, 0, 5 * PG);
	tap_errno(fos_copy(sfd, cs, 0, cro, 0, 100, NULL), EACCES,
		  "copy: into a read-only view -> EACCES");
	tap_ok(all_zero(d, 5 * PG), "copy: refused copy wrote nothing");
	cwo = dim(cs, RD, 0, 5 * PG);
	tap_errno(fos_copy(sfd, cwo, 0, cd, 0, 100, NULL), EACCES,
		  "copy: from a write-only view -> EACCES");
	cw = mk(w, PG, WR);
	tap_errno(fos_copy(sfd, cw, 0, cd, 0, 100, NULL), EACCES,
		  "copy: from a write-only memory -> EACCES");
	tap_ok(all_zero(d, 5 * PG), "copy: refused copies wrote nothing");
	tap_errno(fos_copy(sfd, cs, 100, cw, 0, PG, NULL), 0,
		  "copy: into a write-only memory");
	tap_ok(!memcmp(w, s + 100, PG), "copy: write-only memory got the data");
	vwo = dim(cd, RD, 50, 100);
	tap_errno(fos_copy(sfd, cs, 0, vwo, 0, 100, NULL), 0,
		  "copy: into a write-only view");
	tap_ok(!memcmp(d + 50, s, 100) && all_zero(d, 50) &&
	       all_zero(d + 150, 5 * PG - 150),
	       "copy: write-only view got the data at its offset");
	memset(d, 0, 5 * PG);

	/* The size rule: len 0 is the rest of the source view. */
	v300 = dim(cs, 0, 1000, 300);
	copied = 0;
	tap_errno(fos_copy(sfd, v300, 100, cd, 0, 0, &copied), 0,
		  "size: len 0 from src_offset 100 of a 300-byte view");
	tap_eq(copied, 200, "size: copied is the rest of the view (200)");
	tap_ok(!memcmp(d, s + 1100, 200) && all_zero(d + 200, 5 * PG - 200),
	       "size: exactly those 200 bytes arrive");
	memset(d, 0, 5 * PG);
	vd100 = dim(cd, 0, 0, 100);
	tap_errno(fos_copy(sfd, v300, 0, vd100, 0, 0, NULL), ERANGE,
		  "size: rest of source larger than destination -> ERANGE (no truncation)");
	tap_errno(fos_copy(sfd, v300, 0, vd100, 1, 100, NULL), ERANGE,
		  "size: dst range past its view -> ERANGE");
	tap_errno(fos_copy(sfd, v300, 0, vd100, 101, 0, NULL), ERANGE,
		  "size: dst_offset past its view -> ERANGE");
	tap_errno(fos_copy(sfd, v300, 201, cd, 0, 100, NULL), ERANGE,
		  "size: src range past its view -> ERANGE");
	tap_errno(fos_copy(sfd, v300, 301, cd, 0, 0, NULL), ERANGE,
		  "size: src_offset past its view -> ERANGE");
	tap_ok(all_zero(d, 5 * PG), "size: refused copies wrote nothing");
	copied = 1;
	tap_errno(fos_copy(sfd, v300, 300, cd, 0, 0, &copied), 0,
		  "size: len 0 at the end of the source view");
	tap_eq(copied, 0, "size: ... copies nothing");
	tap_errno(fos_copy(sfd, v300, 200, vd100, 0, 0, &copied), 0,
		  "size: rest (100) fits the 100-byte destination exactly");
	tap_ok(copied == 100 && !memcmp(d, s + 1200, 100) &&
	       all_zero(d + 100, 5 * PG - 100), "size: exact fit data");
	tap_errno(fos_copy(sfd, cs, UINT64_MAX, cd, 0, 2, NULL), EINVAL,
		  "size: src_offset + len overflows -> EINVAL");
	tap_errno(fos_copy(sfd, cs, 0, cd, UINT64_MAX - 1, 16, NULL), EINVAL,
		  "size: dst_offset + len overflows -> EINVAL");
	memset(d, 0, 5 * PG);

	/* Overlap within one memory. */
	memcpy(d, s, 5 * PG);
	tap_errno(fos_copy(sfd, cd, 0, cd, 50, 100, NULL), EINVAL,
		  "overlap: same memory, overlapping ranges -> EINVAL");
	v1 = dim(cd, 0, 1000, 200);
	v2 = dim(cd, 0, 1100, 200);
	tap_errno(fos_copy(sfd, v1, 0, v2, 0, 200, NULL), EINVAL,
		  "overlap: two views of one memory overlapping -> EINVAL");
	tap_errno(fos_copy(sfd, v1, 150, v2, 40, 50, NULL), EINVAL,
		  "overlap: partially overlapping by view offsets -> EINVAL");
	tap_ok(!memcmp(d, s, 5 * PG), "overlap: refused copies wrote nothing");
	tap_errno(fos_copy(sfd, v1, 1, v2, 0, 100, NULL), EINVAL,
		  "overlap: ranges sharing one byte -> EINVAL");
	tap_ok(!memcmp(d, s, 5 * PG), "overlap: refused copies wrote nothing");
	tap_errno(fos_copy(sfd, v1, 0, v2, 0, 100, NULL), 0,
		  "overlap: adjacent ranges [1000, 1100) -> [1100, 1200) are fine");
	tap_ok(!memcmp(d + 1100, s + 1000, 100) && !memcmp(d, s, 1100) &&
	       !memcmp(d + 1200, s + 1200, 5 * PG - 1200),
	       "overlap: adjacent copy data right");
	memset(d, 0, 5 * PG);

	/* Unaligned memory: offsets are from the buffer's first byte. */
	cun = mk(un + 100, PG, RW);
	tap_errno(fos_copy(sfd, cs, 0, cun, 0, PG, NULL), 0,
		  "unaligned: copy into memory at page offset 100");
	tap_ok(all_zero(un, 100) && !memcmp(un + 100, s, PG) &&
	       all_zero(un + 100 + PG, PG - 100),
	       "unaligned: data lands at the buffer, not the page");

	/* Wrong or unknown capabilities. */
	tap_errno(fos_copy(sfd, 999, 0, cd, 0, 1, NULL), EBADF,
		  "copy: unknown src cid -> EBADF");
	tap_errno(fos_copy(sfd, cs, 0, 999, 0, 1, NULL), EBADF,
		  "copy: unknown dst cid -> EBADF");
	req = make_request();
	tap_errno(fos_copy(sfd, req, 0, cd, 0, 1, NULL), EOPNOTSUPP,
		  "copy: Request as source -> EOPNOTSUPP");
	tap_errno(fos_copy(sfd, cs, 0, req, 0, 1, NULL), EOPNOTSUPP,
		  "copy: Request as destination -> EOPNOTSUPP");
	tap_errno(fos_revoke(sfd, cw), 0, "copy: revoke the write-only memory");
	tap_errno(fos_copy(sfd, cs, 0, cw, 0, 1, NULL), EKEYREVOKED,
		  "copy: into a revoked memory -> EKEYREVOKED");
	tap_errno(fos_revoke(sfd, v300), 0,
		  "copy: revoke the source through a diminished view");
	tap_errno(fos_copy(sfd, cs, 0, cd, 0, 1, NULL), EKEYREVOKED,
		  "copy: revoking a view revoked the whole object");

	close_all(64);
	fos_counts_read(&now);
	tap_ok(fos_counts_equal(&b0, &now), "copy: counters back to baseline");
	munmap(s, 5 * PG);
	munmap(d, 5 * PG);
	munmap(w, PG);
	munmap(un, 2 * PG);
}

/* Third-party copy: C (us) copies A's memory into B's. */

static int send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char b = 'F';
	struct iovec iov = { .iov_base = &b, .iov_len = 1 };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &mh, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char b;
	struct iovec iov = { .iov_base = &b, .iov_len = 1 };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &mh, 0) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&mh);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

#define TP_LEN	(2 * PG + 77)

/*
 * A child: create a memory over its own buffer (pattern @seed, or zeroes
 * when @seed is 0), export it to the parent and wait for "done"; exit 0 if
 * its buffer then holds @expect_seed's pattern (0: unchanged).
 */
static void tp_child(int sock, unsigned int seed, unsigned int expect_seed)
{
	unsigned char *buf = map(3), *want = map(3);
	uint32_t cid;
	int fd, capfd;
	char c;

	fd = fos_open();
	if (fd < 0)
		_exit(10);
	if (seed)
		fos_fill(buf, TP_LEN, seed);
	if (fos_mem_create(fd, buf, TP_LEN, seed ? RD : RW, &cid))
		_exit(11);
	if (fos_export(fd, cid, FRACTOS_EXPORT_CLOEXEC, &capfd))
		_exit(12);
	if (send_fd(sock, capfd))
		_exit(13);
	close(capfd);
	if (read(sock, &c, 1) != 1)
		_exit(14);
	if (expect_seed)
		fos_fill(want, TP_LEN, expect_seed);
	else if (seed)
		fos_fill(want, TP_LEN, seed);
	_exit(memcmp(buf, want, TP_LEN) ? 1 : 0);
}

static pid_t tp_spawn(int *sock, unsigned int seed, unsigned int expect)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		tap_bail("socketpair");
	pid = fork();
	if (pid < 0)
		tap_bail("fork");
	if (!pid) {
		close(sv[0]);
		tp_child(sv[1], seed, expect);
	}
	close(sv[1]);
	*sock = sv[0];
	return pid;
}

static int wait_exit(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void test_third_party(void)
{
	struct fractos_cap_info ia, ib;
	int sa, sb, fa, fb, ra, rb;
	uint32_t ca = FRACTOS_CID_INVALID, cb = FRACTOS_CID_INVALID;
	uint64_t copied = 0;
	pid_t pa, pb;

	pa = tp_spawn(&sa, 21, 0);	/* A: source, read-only, unchanged */
	pb = tp_spawn(&sb, 0, 21);	/* B: destination, must get A's data */
	fa = recv_fd(sa);
	fb = recv_fd(sb);
	tap_ok(fa >= 0 && fb >= 0, "3rd party: got A's and B's capability fds");
	tap_errno(fos_import(sfd, fa, &ca), 0, "3rd party: import A's memory");
	tap_errno(fos_import(sfd, fb, &cb), 0, "3rd party: import B's memory");
	close(fa);
	close(fb);
	fos_info(sfd, ca, &ia);
	fos_info(sfd, cb, &ib);
	tap_ok(ia.type == FRACTOS_OBJ_MEMORY && ia.len == TP_LEN &&
	       ia.perms == RD && !(ia.info_flags & FRACTOS_INFO_OWNED) &&
	       ib.perms == RW && !(ib.info_flags & FRACTOS_INFO_OWNED) &&
	       ia.oid.id != ib.oid.id,
	       "3rd party: imported views as exported, not owned by us");
	tap_errno(fos_copy(sfd, cb, 0, ca, 0, 0, NULL), EACCES,
		  "3rd party: A's read-only memory is no destination");
	tap_errno(fos_copy(sfd, ca, 0, cb, 0, 0, &copied), 0,
		  "3rd party: copy A's memory into B's");
	tap_eq(copied, TP_LEN, "3rd party: copied the whole view");
	if (write(sa, "d", 1) != 1 || write(sb, "d", 1) != 1)
		tap_bail("write");
	ra = wait_exit(pa);
	rb = wait_exit(pb);
	tap_eq(rb, 0, "3rd party: B's buffer holds A's data byte for byte");
	tap_eq(ra, 0, "3rd party: A's buffer is unchanged");
	close(sa);
	close(sb);
	/* A and B are gone: their objects are revoked. */
	tap_errno(fos_copy(sfd, ca, 0, cb, 0, 0, NULL), EKEYREVOKED,
		  "3rd party: after the owners exit the copy fails EKEYREVOKED");
	tap_ok(!fos_info(sfd, ca, &ia) && !fos_info(sfd, cb, &ib) &&
	       (ia.info_flags & ib.info_flags & FRACTOS_INFO_REVOKED),
	       "3rd party: both imported caps report REVOKED");
	fos_close(sfd, ca);
	fos_close(sfd, cb);
}

int main(void)
{
	struct fos_counts b0, now;

	signal(SIGPIPE, SIG_IGN);
	tap_plan(131);
	fos_counts_read(&b0);
	sfd = fos_open();
	if (sfd < 0)
		tap_bail("open " FRACTOS_DEVICE);

	test_create();
	test_visibility();
	test_diminish();
	close_all(64);
	test_copy();
	test_third_party();

	close(sfd);
	tap_ok(fos_counts_wait(&b0, &now, 2000),
	       "memory: every counter back to its value at start");
	if (!fos_counts_equal(&b0, &now)) {
		fos_counts_print("start", &b0);
		fos_counts_print("end", &now);
	}
	return tap_finish();
}
