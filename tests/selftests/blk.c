// SPDX-License-Identifier: GPL-2.0
/*
 * The block adaptor (fractos_nvme.ko) on QEMU's NVMe device (vm/run
 * --nvme): attach and detach, volumes that survive a detach and a module
 * reload, reads and writes checked byte for byte at the alignment edges,
 * every bad input with its errno through the error continuation, every
 * malformed capability list answered once (or dropped and counted when it
 * names no continuation), fixed and random, a derived Request fixed to one
 * range, revocation and detach while I/O is in
 * flight, queue-depth overflow, a client killed mid-I/O, and a read whose
 * continuation runs in a third process with no user process in between;
 * writes whose Memory is revoked, or whose device is detached, mid-write:
 * a buffer reused the moment its answer arrives never reaches the disk;
 * a read into and a write from a dma-buf Memory.
 * Every live counter back where it was, and the module unloads.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <linux/fractos.h>
#include "tap.h"
#include "fos_util.h"
#include "fos_req.h"
#include "fos_nl.h"
#include "fos_blk.h"
#include "fos_dmabuf.h"
#include "fos_testbar.h"

/* # timeout: 600 */

#define TAG_OK	1
#define TAG_ERR	2
#define BUF	(1 << 20)

static int fd;			/* the client's space, also the continuations' */
static uint32_t ok_cid, err_cid;
static uint32_t lbs;

/* A Memory of @len bytes at a fresh mapping; its address in *@p. */
static uint32_t mem_new(size_t len, uint32_t perms, unsigned char **p)
{
	uint32_t cid;

	*p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (*p == MAP_FAILED || fos_mem_create(fd, *p, len, perms, &cid))
		tap_bail("memory");
	return cid;
}

/* Invoke the management Request: 0 or the reply's status. */
static int mgmt_call(uint32_t mgmt, uint32_t op, uint64_t size, uint64_t vol,
		     struct fractos_blk_reply *r, uint32_t *rd, uint32_t *wr)
{
	struct fractos_blk_mgmt a = { .op = op, .size = size, .volume = vol };
	uint32_t caps[2] = { ok_cid, err_cid };
	struct msg m;

	if (invoke(fd, mgmt, &a, sizeof(a), caps, 2))
		return -errno;
	if (receive(fd, &m))
		return -1000 - errno;
	if (m.imm_len != sizeof(*r))
		return -2000;
	memcpy(r, m.imm, sizeof(*r));
	if (r->status) {
		close_all(fd, &m);
		return m.tag == TAG_ERR ? r->status : -3000;
	}
	if (op == FRACTOS_BLK_DESTROY)
		return m.ncaps == 0 ? 0 : -4000;
	if (m.ncaps != 2 || m.tag != TAG_OK)
		return -5000;
	*rd = m.caps[0];
	*wr = m.caps[1];
	return 0;
}

/* Send one I/O; nothing received. */
static int io_send(uint32_t req, uint64_t off, uint64_t len, uint32_t mem)
{
	struct fractos_blk_io a = { .offset = off, .len = len };
	uint32_t caps[3] = { mem, ok_cid, err_cid };

	return invoke(fd, req, &a, sizeof(a), caps, 3);
}

/* Receive one I/O answer: bytes, or -errno (from the error continuation). */
static int64_t io_recv(void)
{
	struct fractos_blk_done d;
	struct msg m;

	if (receive(fd, &m))
		return -100000 - errno;
	if (m.imm_len != sizeof(d) || m.ncaps)
		return -200000;
	memcpy(&d, m.imm, sizeof(d));
	/* Errors may come through done when no (valid) error was given. */
	if (m.tag == TAG_ERR && d.result >= 0)
		return -300000;
	return d.result;
}

static int64_t io(uint32_t req, uint64_t off, uint64_t len, uint32_t mem)
{
	if (io_send(req, off, len, mem))
		return -400000 - errno;
	return io_recv();
}

/* Invoke @req with raw immediates and capabilities; the answer. */
static int64_t io_raw(uint32_t req, const void *imm, uint32_t imm_len,
		      const uint32_t *caps, uint32_t ncaps)
{
	if (invoke(fd, req, imm, imm_len, caps, ncaps))
		return -400000 - errno;
	return io_recv();
}

static int nothing_queued(int sfd)
{
	struct fractos_request_receive a = { .flags = FRACTOS_RECV_NONBLOCK };

	return ioctl(sfd, FRACTOS_IOC_REQUEST_RECEIVE, &a) == -1 &&
	       errno == EAGAIN;
}

/*
 * Invoke @req with @caps and take its one answer: *@tag, and *@res the
 * signed errno or byte count it starts with (struct fractos_blk_done, or
 * struct fractos_blk_reply's status).  0, or negative: no answer (the
 * receive timed out), an answer of neither shape, or a second answer.
 */
static int answer_once(uint32_t req, const void *imm, uint32_t imm_len,
		       const uint32_t *caps, uint32_t ncaps, uint64_t *tag,
		       int64_t *res)
{
	struct fractos_blk_reply r;
	struct fractos_blk_done d;
	struct msg m;

	if (invoke(fd, req, imm, imm_len, caps, ncaps))
		return -1000 - errno;
	if (receive(fd, &m))
		return -2000 - errno;
	*tag = m.tag;
	if (m.imm_len == sizeof(d)) {
		memcpy(&d, m.imm, sizeof(d));
		*res = d.result;
	} else if (m.imm_len == sizeof(r)) {
		memcpy(&r, m.imm, sizeof(r));
		*res = r.status;
	} else {
		return -3000;
	}
	close_all(fd, &m);
	usleep(20000);
	return nothing_queued(fd) ? 0 : -4000;
}

/* answer_once(), expecting @want on the continuation tagged @want_tag. */
static void expect_answer(uint32_t req, const void *imm, uint32_t imm_len,
			  const uint32_t *caps, uint32_t ncaps,
			  uint64_t want_tag, int64_t want, const char *what)
{
	uint64_t tag = 0;
	int64_t res = 0;
	int ret = answer_once(req, imm, imm_len, caps, ncaps, &tag, &res);

	if (!tap_ok(!ret && tag == want_tag && res == want,
		    "%s: one answer, %lld on %s", what, (long long)want,
		    want_tag == TAG_ERR ? "error" : "done"))
		tap_diag("  ret %d, tag %llu, result %lld", ret,
			 (unsigned long long)tag, (long long)res);
}

/* STATS DROPPED of device @dev, once it reached @want (2 s at most). */
static uint64_t dropped_wait(uint32_t dev, uint64_t want)
{
	struct fos_blk_dev d;
	int i;

	for (i = 0; i < 200; i++) {
		if (fos_blk_get(dev, &d))
			return (uint64_t)-1;
		if (d.stats[FRACTOS_BLK_STAT_DROPPED] >= want)
			break;
		usleep(10000);
	}
	return d.stats[FRACTOS_BLK_STAT_DROPPED];
}

/*
 * The answer fractos_blk.h ("Answers") promises for a capability list of
 * Memory (0), done (1, a Request tagged TAG_OK) and error (2, TAG_ERR)
 * where the continuations are at @done and @err, @min to @max of them:
 * -1 when none (dropped), else whether it is well formed (*@wf) and the
 * tag of the continuation the answer goes to.
 */
static int64_t rule_tag(const int *kind, int n, int done, int err, int min,
			int max, int *wf)
{
	int i;

	/* Well formed: the count, Requests at done and error, else Memory. */
	*wf = n >= min && n <= max;
	for (i = 0; i < n; i++)
		if (!!kind[i] != (i == done || i == err))
			*wf = 0;
	if (*wf)
		return kind[done] == 1 ? TAG_OK : TAG_ERR;
	if (err < n && kind[err])
		return kind[err] == 1 ? TAG_OK : TAG_ERR;
	if (done < n && kind[done])
		return kind[done] == 1 ? TAG_OK : TAG_ERR;
	for (i = n - 1; i >= 0; i--)
		if (kind[i])
			return kind[i] == 1 ? TAG_OK : TAG_ERR;
	return -1;
}

static void pattern(unsigned char *p, size_t len, unsigned int seed)
{
	fos_fill(p, len, seed);
}

/*
 * Issue 27, part 2: a write whose Memory is revoked, or whose device is
 * detached, while the device reads its pages.  NW writes of 1 MiB, each
 * from its own buffer (pattern 40 + i) onto a region that held pattern
 * 20 + i, each with its own done Request (tag 100 + i); the moment a
 * write's answer arrives its buffer is overwritten with 0x5a.  Then every
 * region must hold the written pattern where the write succeeded, and
 * nowhere a 0x5a block: the device never reads a buffer after its answer.
 */
#define NW	8

struct reuse {
	uint32_t mem[NW], done[NW];
	unsigned char *p[NW];
	int64_t res[NW];
};

static void reuse_setup(struct reuse *u, uint32_t wr, uint32_t src,
			unsigned char *sp)
{
	int i;

	for (i = 0; i < NW; i++) {
		pattern(sp, BUF, 20 + i);
		if (io(wr, (uint64_t)i * BUF, BUF, src) != BUF)
			tap_bail("reuse: the old contents");
		u->mem[i] = mem_new(BUF, FRACTOS_PERM_ALL, &u->p[i]);
		pattern(u->p[i], BUF, 40 + i);
		if (req_create(fd, FRACTOS_CID_INVALID, 100 + i, NULL, 0, NULL, 0,
			       &u->done[i]))
			tap_bail("reuse: continuations");
		u->res[i] = 1;
	}
}

static int reuse_send(struct reuse *u, uint32_t wr)
{
	struct fractos_blk_io a = { .len = BUF };
	int i;

	for (i = 0; i < NW; i++) {
		a.offset = (uint64_t)i * BUF;
		if (invoke(fd, wr, &a, sizeof(a),
			   (uint32_t[]){ u->mem[i], u->done[i] }, 2))
			return -1;
	}
	return 0;
}

/* Each answer, and the buffer overwritten the moment it arrives. */
static int reuse_answers(struct reuse *u)
{
	struct fractos_blk_done d;
	struct msg m;
	int i, n = 0;

	for (i = 0; i < NW; i++) {
		if (receive(fd, &m) || m.tag < 100 || m.tag >= 100 + NW ||
		    m.imm_len != sizeof(d))
			break;
		memset(u->p[m.tag - 100], 0x5a, BUF);
		memcpy(&d, m.imm, sizeof(d));
		u->res[m.tag - 100] = d.result;
		n++;
	}
	return n;
}

/*
 * Read the regions back: *@written regions that hold their write, *@old
 * blocks still the old contents (failed writes); -1 if a block holds
 * anything else (0x5a: a reused buffer reached the disk).
 */
static int reuse_check(struct reuse *u, uint32_t rd, uint32_t dst,
		       unsigned char *dp, int *written, int *old)
{
	unsigned char *want = malloc(BUF), *was = malloc(BUF);
	int i, ok = 0;
	uint64_t b;

	*written = *old = 0;
	for (i = 0; want && was && i < NW; i++) {
		if (io(rd, (uint64_t)i * BUF, BUF, dst) != BUF)
			goto out;
		pattern(want, BUF, 40 + i);
		pattern(was, BUF, 20 + i);
		if (u->res[i] == BUF) {
			if (memcmp(dp, want, BUF))
				goto out;
			(*written)++;
			continue;
		}
		for (b = 0; b < BUF; b += lbs) {
			if (!memcmp(dp + b, was + b, lbs))
				(*old)++;
			else if (memcmp(dp + b, want + b, lbs))
				goto out;
		}
	}
	ok = 1;
out:
	if (!ok)
		for (i = 0; i < NW; i++)
			tap_diag("  write %d: %lld", i, (long long)u->res[i]);
	free(want);
	free(was);
	return ok ? 0 : -1;
}

static void reuse_free(struct reuse *u)
{
	int i;

	for (i = 0; i < NW; i++) {
		fos_close(fd, u->mem[i]);
		fos_close(fd, u->done[i]);
		munmap(u->p[i], BUF);
	}
}

/* Write @len bytes of pattern @seed at @off and read them back. */
static int roundtrip(uint32_t rd, uint32_t wr, uint32_t src, unsigned char *sp,
		     uint32_t dst, unsigned char *dp, uint64_t off,
		     uint64_t len, unsigned int seed)
{
	pattern(sp, len, seed);
	memset(dp, 0, len);
	if (io(wr, off, len, src) != (int64_t)len)
		return 0;
	if (io(rd, off, len, dst) != (int64_t)len)
		return 0;
	return !memcmp(sp, dp, len);
}

static uint32_t self_id;
static int self_added;

static uint64_t tx_msgs(uint32_t id)
{
	struct fos_nl_node n;

	return fos_nl_node_get(id, &n) ? 0 : n.stats[FRACTOS_STAT_TX_MSGS];
}

/* Leave the module as the other tests expect it. */
static void loopback_off(void)
{
	fos_set_param("fabric_loopback", 0);
	if (self_added)
		fos_nl_node_del(self_id);
	self_added = 0;
}

/* This node as its own peer, and fabric_loopback on: 1, or 0 (skip). */
static int loopback_on(void)
{
	struct in_addr addr;

	if (!fos_nl_self_addr(&addr) || access(FOS_PARAM_DIR "fabric_loopback", F_OK))
		return 0;
	self_id = fos_param("node_id");
	atexit(loopback_off);
	self_added = !fos_nl_node_add(self_id, addr);
	tap_ok(self_added && fos_nl_wait_up(self_id, 30) &&
	       !fos_set_param("fabric_loopback", 1),
	       "loopback: this node is its own peer (up), fabric_loopback=1");
	return 1;
}

int main(void)
{
	struct fractos_blk_reply r;
	struct fos_counts before, now;
	struct fos_blk_dev d;
	unsigned char *sp, *dp, *rop;
	uint32_t src, dst, ro, mgmt, rd, wr, rd2, wr2, base, dev, vsize;
	const char *nvme, *why;
	uint64_t vol, vol2;
	int i, ok, busy, revoked;

	tap_plan_late();
	nvme = fos_blk_setup(&why);
	if (!nvme)
		tap_bail("%s", why);
	fos_counts_read(&before);

	fd = fos_open();
	if (req_create(fd, FRACTOS_CID_INVALID, TAG_OK, NULL, 0, NULL, 0, &ok_cid) ||
	    req_create(fd, FRACTOS_CID_INVALID, TAG_ERR, NULL, 0, NULL, 0, &err_cid))
		tap_bail("continuations");

	/* Attach. */
	tap_eq(fos_blk_attach(nvme, "blk0", 0, 0, &dev), -EMEDIUMTYPE,
	       "attach a blank device without format: EMEDIUMTYPE");
	tap_eq(fos_blk_attach("/dev/nonexistent", "blk0", 0, 1, &dev), -ENOENT,
	       "attach a path that does not exist: ENOENT");
	tap_eq(fos_blk_attach(nvme, "blk0", 0, 1, &dev), 0, "attach with format");
	tap_eq(fos_blk_attach(nvme, "blk1", 0, 1, NULL), -EBUSY,
	       "attach it twice: EBUSY (opened exclusively)");
	tap_ok(system("mkfs.ext4 -q -F /dev/nvme0n1 2>/dev/null") != 0,
	       "mkfs on the attached device fails (exclusive)");
	tap_eq(fos_blk_get(dev, &d), 0, "LIST shows it");
	lbs = d.lbs;
	tap_ok(d.nvols == 0 && d.size >= (64 << 20) && (lbs == 512 || lbs == 4096) &&
	       !strcmp(d.name, "blk0") && !strcmp(d.path, nvme),
	       "LIST: no volumes, its size (%llu), block size %u, name, path",
	       (unsigned long long)d.size, lbs);
	{
		pid_t pid = fork();

		if (!pid) {
			if (setuid(65534))
				_exit(2);
			_exit(fos_blk_attach(nvme, "blk9", 0, 1, NULL) == -EPERM ? 0 : 1);
		}
		int st = fos_reap_within(pid, 10000);

		tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		       "attach as an unprivileged user: EPERM");
	}

	/* The management Request, by name. */
	{
		struct fractos_name a = { .name = (uintptr_t)"blk0", .name_len = 4 };

		tap_errno(ioctl(fd, FRACTOS_IOC_NAME_LOOKUP, &a), 0,
			  "the management Request is published for uid 0");
		mgmt = a.cid;
	}
	tap_eq(mgmt_call(mgmt, FRACTOS_BLK_CREATE, 0, 0, &r, &rd, &wr), -EINVAL,
	       "CREATE of 0 bytes: EINVAL");
	tap_eq(mgmt_call(mgmt, FRACTOS_BLK_CREATE, lbs + 1, 0, &r, &rd, &wr), -EINVAL,
	       "CREATE of an unaligned size: EINVAL");
	tap_eq(mgmt_call(mgmt, FRACTOS_BLK_CREATE, 1ULL << 50, 0, &r, &rd, &wr), -ENOSPC,
	       "CREATE larger than the device: ENOSPC");
	tap_eq(mgmt_call(mgmt, 77, 0, 0, &r, &rd, &wr), -EINVAL, "unknown op: EINVAL");
	tap_eq(mgmt_call(mgmt, FRACTOS_BLK_OPEN, 0, 12345, &r, &rd, &wr), -ENOENT,
	       "OPEN of no such volume: ENOENT");
	vsize = 8 << 20;
	tap_eq(mgmt_call(mgmt, FRACTOS_BLK_CREATE, vsize, 0, &r, &rd, &wr), 0,
	       "CREATE 8 MiB: read and write Requests");
	vol = r.volume;
	tap_ok(r.size == vsize && r.block_size == lbs && vol, "reply: id %llu, size, block size",
	       (unsigned long long)vol);

	/* Data, byte for byte, at the edges. */
	src = mem_new(BUF, FRACTOS_PERM_ALL, &sp);
	dst = mem_new(BUF, FRACTOS_PERM_ALL, &dp);
	ro = mem_new(BUF, FRACTOS_PERM_READ, &rop);
	tap_ok(roundtrip(rd, wr, src, sp, dst, dp, 0, 4096, 1), "4 KiB at 0: read back equal");
	tap_ok(roundtrip(rd, wr, src, sp, dst, dp, lbs, lbs, 2), "one block at block 1");
	tap_ok(roundtrip(rd, wr, src, sp, dst, dp, vsize - lbs, lbs, 3),
	       "the last block of the volume");
	tap_ok(roundtrip(rd, wr, src, sp, dst, dp, 3 * lbs, BUF, 4),
	       "1 MiB at an odd block (several bios)");
	tap_ok(roundtrip(rd, wr, src, sp, dst, dp, vsize - BUF, BUF, 5),
	       "1 MiB ending at the volume's end");
	pattern(sp, 4096, 6);
	tap_eq(io(wr, 8192, 4096, src), 4096, "write 4 KiB at 8 KiB");
	memset(dp, 0, BUF);
	tap_eq(io(rd, 4096, 3 * 4096, dst), 3 * 4096, "read 12 KiB around it");
	tap_ok(!memcmp(dp + 4096, sp, 4096), "the written block is in the middle");
	{
		uint32_t mid;

		tap_errno(fos_diminish(fd, dst, 0, lbs, 2 * lbs, &mid), 0,
			  "a view at a block-aligned offset of the buffer");
		memset(dp, 0, BUF);
		tap_eq(io(rd, 8192, lbs, mid), lbs, "read into it");
		tap_ok(!memcmp(dp + lbs, sp, lbs) && dp[0] == 0 && dp[2 * lbs] == 0,
		       "the bytes land at the view's offset, nothing outside it");
		fos_close(fd, mid);
	}

	/*
	 * Storage into a dma-buf and back (the shape of the paper's storage
	 * -> GPU hop): the bios land in the exporter's pages.
	 */
	{
		const char *exp = NULL;
		uint32_t dcid = FRACTOS_CID_INVALID;
		int dfd = fos_dmabuf_import_any(fd, BUF, FRACTOS_PERM_ALL, &dcid, &exp);
		unsigned char *dm = MAP_FAILED;

		if (dfd >= 0)
			dm = mmap(NULL, BUF, PROT_READ | PROT_WRITE, MAP_SHARED, dfd, 0);
		if (dm == MAP_FAILED) {
			tap_skip("no dma-buf exporter with a kernel mapping here (vgem, udmabuf, DMA heap)");
			tap_skip("no dma-buf exporter with a kernel mapping here");
		} else {
			/* At 4 MiB: the blocks the later checks read stay as they are. */
			pattern(dm, BUF, 8);
			memset(dp, 0, BUF);
			tap_ok(io(wr, 4 << 20, BUF, dcid) == BUF &&
			       io(rd, 4 << 20, BUF, dst) == BUF && !memcmp(dp, dm, BUF),
			       "1 MiB written from a %s dma-buf Memory reads back equal", exp);
			memset(dm, 0, BUF);
			tap_ok(io(rd, 4 << 20, BUF, dcid) == BUF && !memcmp(dm, dp, BUF),
			       "1 MiB read into it: the exporter's mmap has the bytes");
		}
		if (dfd >= 0)
			fos_close(fd, dcid);
		if (dm != MAP_FAILED)
			munmap(dm, BUF);
		if (dfd >= 0)
			close(dfd);
	}

	/*
	 * Into device memory (a BAR: no struct pages, as GPU VRAM): no bio
	 * can point at it, so the adaptor stages the bytes and says so.
	 */
	{
		const char *why = "no device memory";
		int bfd = fos_testbar_open(&why), bufd = -1;
		uint32_t bcid = FRACTOS_CID_INVALID;
		unsigned char *bm = MAP_FAILED;
		uint64_t staged0 = 0;

		if (bfd >= 0)
			bufd = fos_testbar_export(bfd, 0, BUF, 0);
		if (bufd >= 0 && !fos_mem_import(fd, bufd, 0, BUF, FRACTOS_PERM_ALL, &bcid))
			bm = mmap(NULL, BUF, PROT_READ | PROT_WRITE, MAP_SHARED, bufd, 0);
		if (bm == MAP_FAILED || fos_blk_get(dev, &d)) {
			tap_skip("%s", why);
			tap_skip("%s", why);
		} else {
			staged0 = d.stats[FRACTOS_BLK_STAT_STAGED];
			pattern(dp, BUF, 9);
			memset(bm, 0, BUF);
			tap_ok(io(wr, 4 << 20, BUF, dst) == BUF &&
			       io(rd, 4 << 20, BUF, bcid) == BUF && !memcmp(bm, dp, BUF),
			       "1 MiB read into device memory: the BAR has the bytes");
			pattern(bm, BUF, 10);
			memset(dp, 0, BUF);
			tap_ok(io(wr, 4 << 20, BUF, bcid) == BUF &&
			       io(rd, 4 << 20, BUF, dst) == BUF && !memcmp(dp, bm, BUF) &&
			       !fos_blk_get(dev, &d) &&
			       d.stats[FRACTOS_BLK_STAT_STAGED] == staged0 + 2,
			       "1 MiB written from it reads back equal; both I/Os staged");
		}
		if (bcid != FRACTOS_CID_INVALID)
			fos_close(fd, bcid);
		if (bm != MAP_FAILED)
			munmap(bm, BUF);
		if (bufd >= 0)
			close(bufd);
		if (bfd >= 0)
			close(bfd);
	}

	/* Bad input, each through the error continuation. */
	tap_eq(io(rd, 1, lbs, dst), -EINVAL, "unaligned offset: EINVAL");
	tap_eq(io(rd, 0, lbs + 1, dst), -EINVAL, "unaligned length: EINVAL");
	tap_eq(io(rd, 0, 0, dst), -EINVAL, "length 0: EINVAL");
	tap_eq(io(rd, 0, FRACTOS_BLK_MAX_IO + lbs, dst), -EINVAL, "over the largest I/O: EINVAL");
	tap_eq(io(rd, vsize - lbs, 2 * lbs, dst), -ERANGE, "past the volume's end: ERANGE");
	tap_eq(io(rd, vsize, lbs, dst), -ERANGE, "at the volume's end: ERANGE");
	tap_eq(io(rd, (uint64_t)-lbs, 2 * lbs, dst), -ERANGE, "offset + len wraps: ERANGE");
	{
		uint32_t small, odd;

		fos_diminish(fd, dst, 0, 0, lbs, &small);
		tap_eq(io(rd, 0, 2 * lbs, small), -ERANGE, "longer than the view: ERANGE");
		fos_diminish(fd, dst, 0, 8, 4 * lbs, &odd);
		tap_eq(io(rd, 0, lbs, odd), -EINVAL, "a view not block aligned in memory: EINVAL");
		fos_close(fd, small);
		fos_close(fd, odd);
	}
	tap_eq(io(rd, 0, lbs, ro), -EPERM, "a read into a read-only view: EPERM");
	{
		uint32_t wo;

		fos_diminish(fd, src, FRACTOS_PERM_READ, 0, BUF, &wo);
		tap_eq(io(wr, 0, lbs, wo), -EPERM, "a write from a view without READ: EPERM");
		fos_close(fd, wo);
	}
	tap_eq(io(wr, 0, lbs, ro), lbs, "a write from a read-only view works");
	{
		struct fractos_blk_io a = { 0, lbs };
		char big[sizeof(a) + 8] = { 0 };
		uint32_t caps[3] = { dst, ok_cid, err_cid };
		uint32_t caps_bad[3] = { ok_cid, ok_cid, err_cid };
		uint32_t caps_bad_err[3] = { dst, ok_cid, dst };

		memcpy(big, &a, sizeof(a));
		tap_eq(io_raw(rd, &a, 8, caps, 3), -EINVAL, "short immediates: EINVAL");
		tap_eq(io_raw(rd, big, sizeof(big), caps, 3), -EINVAL, "long immediates: EINVAL");
		tap_eq(io_raw(rd, &a, sizeof(a), caps_bad, 3), -EINVAL,
		       "a Request where the Memory goes: EINVAL");
		tap_eq(io_raw(rd, &a, sizeof(a), caps_bad_err, 3), -EINVAL,
		       "a Memory where the error continuation goes: EINVAL (to done)");
		tap_eq(io_raw(rd, &a, sizeof(a), caps, 2), lbs,
		       "no error continuation: done answers");
		caps[2] = ok_cid;
		tap_eq(io_raw(rd, &a, sizeof(a), caps, 2), lbs, "with two caps only");
	}
	tap_eq(fos_blk_get(dev, &d), 0, "LIST");
	tap_ok(d.stats[FRACTOS_BLK_STAT_ERRORS] >= 14 && d.stats[FRACTOS_BLK_STAT_READS] >= 8 &&
	       d.stats[FRACTOS_BLK_STAT_WRITES] >= 7 && d.inflight == 0,
	       "counters: %llu reads, %llu writes, %llu errors, nothing in flight",
	       (unsigned long long)d.stats[FRACTOS_BLK_STAT_READS],
	       (unsigned long long)d.stats[FRACTOS_BLK_STAT_WRITES],
	       (unsigned long long)d.stats[FRACTOS_BLK_STAT_ERRORS]);

	/* A derived Request fixed to one range (the paper's req_SSDrd_base). */
	{
		struct fractos_blk_io a = { .offset = 8192, .len = lbs };
		uint32_t caps[2] = { ok_cid, err_cid };
		uint64_t more = 0;

		tap_errno(req_create(fd, rd, 0, &a, sizeof(a), NULL, 0, &base), 0,
			  "derive a read fixed to one block at 8 KiB");
		memset(dp, 0, lbs);
		tap_eq(invoke(fd, base, NULL, 0, (uint32_t[]){ dst, ok_cid }, 2), 0,
		       "invoke it with only the memory and done");
		tap_eq(io_recv(), lbs, "it reads its block");
		tap_ok(!memcmp(dp, sp, lbs), "the block written before");
		(void)caps;
		tap_eq(io_raw(base, &more, sizeof(more), (uint32_t[]){ dst, ok_cid, err_cid }, 3),
		       -EINVAL, "more immediates through it: EINVAL");
	}

	/*
	 * Malformed capability lists (issue 27): every invocation that names a
	 * continuation is answered exactly once, with EINVAL, on the Request
	 * at the error position, else at done's, else the last one; only one
	 * with no Request at all is dropped, and counted.
	 */
	{
		struct fractos_blk_io a = { 0, lbs };
		struct fractos_blk_mgmt ma = { .op = FRACTOS_BLK_OPEN, .volume = vol };
		uint64_t drop0, drop;
		uint32_t fixed, fixed2;
		unsigned int seed = time(NULL);
		int answers = 0, predicted = 0, wrong = 0, drops = 0;

		tap_eq(fos_blk_get(dev, &d), 0, "LIST");
		drop0 = d.stats[FRACTOS_BLK_STAT_DROPPED];
		expect_answer(rd, &a, sizeof(a), (uint32_t[]){ dst, ok_cid, err_cid, dst }, 4,
			      TAG_ERR, -EINVAL, "I/O with [mem, done, err, mem]");
		expect_answer(rd, &a, sizeof(a),
			      (uint32_t[]){ dst, ok_cid, err_cid, dst, dst, ok_cid }, 6,
			      TAG_ERR, -EINVAL, "I/O with six capabilities");
		expect_answer(rd, &a, sizeof(a), (uint32_t[]){ dst, dst, err_cid }, 3,
			      TAG_ERR, -EINVAL, "I/O with a Memory at done, a valid error");
		expect_answer(rd, &a, sizeof(a), (uint32_t[]){ dst, ok_cid, dst }, 3,
			      TAG_OK, -EINVAL, "I/O with a Memory at error, a valid done");
		expect_answer(rd, &a, sizeof(a), (uint32_t[]){ ok_cid }, 1,
			      TAG_OK, -EINVAL, "I/O with [done] only (no memory)");
		expect_answer(rd, &a, sizeof(a), (uint32_t[]){ dst, dst, dst, err_cid }, 4,
			      TAG_ERR, -EINVAL, "I/O with its only Request last, at index 3");
		expect_answer(rd, &a, sizeof(a), (uint32_t[]){ ok_cid, ok_cid, err_cid }, 3,
			      TAG_ERR, -EINVAL, "I/O with a Request where the memory goes");

		tap_errno(req_create(fd, rd, 0, NULL, 0, &dst, 1, &fixed), 0,
			  "derive a read with the Memory fixed");
		memset(dp, 0, lbs);
		expect_answer(fixed, &a, sizeof(a), (uint32_t[]){ ok_cid, err_cid }, 2,
			      TAG_OK, lbs, "it, invoked with [done, err]: reads");
		expect_answer(fixed, &a, sizeof(a), (uint32_t[]){ ok_cid }, 1,
			      TAG_OK, lbs, "it, invoked with [done]: reads");
		expect_answer(fixed, &a, sizeof(a), (uint32_t[]){ dst, ok_cid, err_cid }, 3,
			      TAG_OK, -EINVAL,
			      "it, invoked with [mem, done, err] (so [mem, mem, done, err])");
		tap_errno(req_create(fd, fixed, 0, NULL, 0, (uint32_t[]){ ok_cid }, 1, &fixed2),
			  0, "derive from it with done fixed too");
		expect_answer(fixed2, &a, sizeof(a), (uint32_t[]){ err_cid }, 1,
			      TAG_OK, lbs, "that, invoked with [err]: reads");
		expect_answer(fixed2, &a, sizeof(a), NULL, 0,
			      TAG_OK, lbs, "that, invoked with nothing: reads");
		expect_answer(fixed2, &a, sizeof(a), (uint32_t[]){ dst, err_cid }, 2,
			      TAG_OK, -EINVAL, "that, invoked with [mem, err]: EINVAL");
		fos_close(fd, fixed2);
		fos_close(fd, fixed);

		expect_answer(mgmt, &ma, sizeof(ma), (uint32_t[]){ ok_cid, err_cid, dst }, 3,
			      TAG_ERR, -EINVAL, "management with [reply, err, extra]");
		expect_answer(mgmt, &ma, sizeof(ma), (uint32_t[]){ ok_cid, err_cid, ok_cid }, 3,
			      TAG_ERR, -EINVAL, "management with [reply, err, reply]");
		expect_answer(mgmt, &ma, sizeof(ma), (uint32_t[]){ dst, err_cid }, 2,
			      TAG_ERR, -EINVAL, "management with [mem, err]: err only");
		expect_answer(mgmt, &ma, sizeof(ma), (uint32_t[]){ ok_cid, dst }, 2,
			      TAG_OK, -EINVAL, "management with a Memory at error, a valid reply");
		expect_answer(mgmt, &ma, sizeof(ma), (uint32_t[]){ ok_cid, err_cid }, 2,
			      TAG_OK, 0, "management with [reply, err]: OPEN works");

		tap_errno(invoke(fd, rd, &a, sizeof(a), (uint32_t[]){ dst }, 1), 0,
			  "I/O with [mem] only: no continuation");
		tap_errno(invoke(fd, rd, &a, sizeof(a), (uint32_t[]){ dst, dst, dst }, 3), 0,
			  "I/O with three Memory");
		tap_errno(invoke(fd, rd, &a, sizeof(a), NULL, 0), 0, "I/O with nothing");
		tap_errno(invoke(fd, mgmt, &ma, sizeof(ma), (uint32_t[]){ dst }, 1), 0,
			  "management with [mem]");
		tap_errno(invoke(fd, mgmt, &ma, sizeof(ma), NULL, 0), 0,
			  "management with nothing");
		drop = dropped_wait(dev, drop0 + 5);
		tap_ok(drop == drop0 + 5 && nothing_queued(fd),
		       "those five are dropped and counted (DROPPED +%lld), no answer",
		       (long long)(drop - drop0));

		/* Random traffic, as in the issue: each list checked by the rule. */
		tap_diag("random capability lists: seed %u", seed);
		srand(seed);
		for (i = 0; i < 300; i++) {
			int mg = i % 4 == 3, n = rand() % 6, kind[5], wf, k;
			uint32_t caps[5], pool[3] = { dst, ok_cid, err_cid };
			int64_t want, res;
			uint64_t tag;

			for (k = 0; k < n; k++) {
				kind[k] = rand() % 3;
				caps[k] = pool[kind[k]];
			}
			want = mg ? rule_tag(kind, n, 0, 1, 1, 2, &wf) :
				    rule_tag(kind, n, 1, 2, 2, 3, &wf);
			if (want < 0) {
				drops++;
				if (invoke(fd, mg ? mgmt : rd, mg ? (void *)&ma : (void *)&a,
					   mg ? sizeof(ma) : sizeof(a), caps, n))
					wrong++;
				continue;
			}
			predicted++;
			if (answer_once(mg ? mgmt : rd, mg ? (void *)&ma : (void *)&a,
					mg ? sizeof(ma) : sizeof(a), caps, n, &tag, &res))
				continue;
			answers++;
			if ((uint64_t)want != tag ||
			    res != (wf ? (mg ? 0 : (int64_t)lbs) : -EINVAL)) {
				if (!wrong++)
					tap_diag("  list %d of %d (%s): tag %llu result %lld",
						 i, n, mg ? "mgmt" : "I/O",
						 (unsigned long long)tag, (long long)res);
			}
		}
		tap_ok(answers == predicted && !wrong,
		       "300 random lists: %d answered once each of %d named a continuation, %d wrong",
		       answers, predicted, wrong);
		drop = dropped_wait(dev, drop0 + 5 + drops);
		tap_ok(drop == drop0 + 5 + drops && nothing_queued(fd),
		       "the %d with no Request dropped and counted", drops);
	}

	/* Revocation: one child alone, then OPEN gives new ones. */
	tap_errno(fos_revoke(fd, rd), 0, "revoke the read Request");
	tap_errno(io_send(rd, 0, lbs, dst), EKEYREVOKED, "invoke it: EKEYREVOKED");
	tap_errno(io_send(base, 0, lbs, dst), EKEYREVOKED, "the derived one too");
	tap_eq(io(wr, 0, lbs, src), lbs, "the write Request still works");
	tap_eq(mgmt_call(mgmt, FRACTOS_BLK_OPEN, 0, vol, &r, &rd2, &wr2), 0,
	       "OPEN the volume: new Requests");
	tap_ok(roundtrip(rd2, wr2, src, sp, dst, dp, 0, 4096, 7), "they work");
	fos_close(fd, rd);
	fos_close(fd, base);

	/* Queue depth: 200 writes of 1 MiB at once, at most 2 in flight. */
	tap_errno(fos_write_ull("/sys/module/fractos_nvme/parameters/queue_depth_volume", 0),
		  ERANGE, "queue_depth_volume=0: ERANGE");
	tap_errno(fos_write_ull("/sys/module/fractos_nvme/parameters/queue_depth_volume",
				FRACTOS_BLK_QD_VOLUME + 1), ERANGE, "over the most: ERANGE");
	tap_eq(fos_write_ull("/sys/module/fractos_nvme/parameters/queue_depth_volume", 2), 0,
	       "queue_depth_volume=2");
	pattern(sp, BUF, 8);
	for (i = 0; i < 200; i++)
		if (io_send(wr2, 0, BUF, src))
			break;
	tap_eq(i, 200, "200 writes of 1 MiB invoked");
	ok = busy = 0;
	for (i = 0; i < 200; i++) {
		int64_t res = io_recv();

		ok += res == BUF;
		busy += res == -EAGAIN;
	}
	tap_ok(ok + busy == 200 && busy > 0 && ok >= 2,
	       "each answered: %d written, %d refused with EAGAIN", ok, busy);
	/* A command leaves the queue before its answer: depth 1, no EAGAIN. */
	tap_eq(fos_write_ull("/sys/module/fractos_nvme/parameters/queue_depth_volume", 1), 0,
	       "queue_depth_volume=1");
	ok = 0;
	for (i = 0; i < 100; i++) {
		if (io_send(wr2, 0, lbs, src))
			break;
		ok += io_recv() == (int64_t)lbs;
	}
	tap_ok(i == 100 && ok == 100,
	       "100 writes, each sent from the last one's answer: %d written", ok);
	fos_write_ull("/sys/module/fractos_nvme/parameters/queue_depth_volume",
		      FRACTOS_BLK_QD_VOLUME);
	tap_eq(fos_blk_get(dev, &d), 0, "LIST");
	tap_ok(d.inflight == 0 && d.stats[FRACTOS_BLK_STAT_BUSY] == (uint64_t)busy,
	       "nothing in flight; BUSY counts them");

	/* A client killed with reads in flight into its Memory. */
	{
		pid_t pid = fork();

		if (!pid) {
			/* A space of its own, continuations included. */
			uint32_t m, req;
			unsigned char *p;
			int capfd;

			if (fos_export(fd, rd2, 0, &capfd))
				_exit(1);
			fd = fos_open();
			if (fos_import(fd, capfd, &req) ||
			    req_create(fd, FRACTOS_CID_INVALID, TAG_OK, NULL, 0, NULL, 0,
				       &ok_cid) ||
			    req_create(fd, FRACTOS_CID_INVALID, TAG_ERR, NULL, 0, NULL, 0,
				       &err_cid))
				_exit(1);
			m = mem_new(BUF, FRACTOS_PERM_ALL, &p);
			for (i = 0; i < 32; i++)
				io_send(req, 0, BUF, m);
			kill(getpid(), SIGKILL);
		}
		int st = fos_reap_within(pid, 10000);

		tap_ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
		       "the client dies with 32 reads of 1 MiB into its memory");
		for (i = 0; i < 100; i++) {
			if (!fos_blk_get(dev, &d) && d.inflight == 0)
				break;
			usleep(100000);
		}
		tap_eq(d.inflight, 0, "its reads finish");
		tap_ok(fos_live("pinned_pages") < 3 * (BUF / 4096) + 64,
		       "its pages are unpinned (%lld pinned: ours)", fos_live("pinned_pages"));
	}

	/* A chain with no user process between the device and the third party. */
	{
		int third = fos_open(), client = fos_open();
		uint32_t cont, cont_in_client, dst_in_client, rd_in_client, caps[2];
		int capfd;
		struct msg m;
		struct fractos_blk_io a = { .offset = 0, .len = 4096 };

		req_create(third, FRACTOS_CID_INVALID, 42, "third", 5, NULL, 0, &cont);
		fos_export(third, cont, 0, &capfd);
		fos_import(client, capfd, &cont_in_client);
		close(capfd);
		fos_export(fd, dst, 0, &capfd);
		fos_import(client, capfd, &dst_in_client);
		close(capfd);
		fos_export(fd, rd2, 0, &capfd);
		fos_import(client, capfd, &rd_in_client);
		close(capfd);
		caps[0] = dst_in_client;
		caps[1] = cont_in_client;
		pattern(sp, 4096, 9);
		io(wr2, 0, 4096, src);
		memset(dp, 0, 4096);
		tap_errno(invoke(client, rd_in_client, &a, sizeof(a), caps, 2), 0,
			  "the client invokes a read whose continuation is the third's");
		tap_errno(receive(third, &m), 0, "the third process receives it");
		tap_ok(m.tag == 42 && m.imm_len == 5 + sizeof(struct fractos_blk_done) &&
		       !memcmp(m.imm, "third", 5) &&
		       ((struct fractos_blk_done *)(m.imm + 5))->result == 4096,
		       "with its own immediates, then the byte count");
		tap_ok(!memcmp(dp, sp, 4096), "the data is in the client's memory");
		tap_ok(nothing_queued(client) && nothing_queued(fd),
		       "no message reached the client or the owner: zero user hops");
		close(third);
		close(client);
	}

	/* Destroy with I/O in flight. */
	tap_eq(mgmt_call(mgmt, FRACTOS_BLK_CREATE, vsize, 0, &r, &rd, &wr), 0,
	       "CREATE a second volume");
	vol2 = r.volume;
	tap_ok(vol2 != vol, "a new id");
	for (i = 0; i < 32; i++)
		io_send(wr, 0, BUF, src);
	{
		struct fractos_blk_mgmt a = { .op = FRACTOS_BLK_DESTROY, .volume = vol2 };
		uint32_t caps[2] = { ok_cid, err_cid };
		int replies = 0;
		struct msg m;

		tap_errno(invoke(fd, mgmt, &a, sizeof(a), caps, 2), 0,
			  "DESTROY it with 32 writes in flight");
		ok = revoked = 0;
		for (i = 0; i < 33; i++) {
			struct fractos_blk_done dd;

			if (receive(fd, &m))
				break;
			if (m.imm_len == sizeof(struct fractos_blk_reply)) {
				replies++;
				continue;
			}
			memcpy(&dd, m.imm, sizeof(dd));
			ok += dd.result == BUF;
			revoked += dd.result == -EKEYREVOKED;
		}
		tap_ok(replies == 1 && ok + revoked == 32,
		       "every write answered (%d written, %d EKEYREVOKED), then the reply",
		       ok, revoked);
	}
	tap_errno(io_send(wr, 0, lbs, src), EKEYREVOKED, "its Requests are revoked");
	fos_close(fd, rd);
	fos_close(fd, wr);
	tap_eq(mgmt_call(mgmt, FRACTOS_BLK_OPEN, 0, vol2, &r, &rd, &wr), -ENOENT,
	       "OPEN it: ENOENT");

	/* The volume survives a detach, a module reload and an attach. */
	pattern(sp, 4096, 10);
	tap_eq(io(wr2, 4 * 4096, 4096, src), 4096, "write a block to the first volume");
	tap_eq(fos_blk_detach(dev), 0, "detach");
	tap_errno(io_send(rd2, 0, lbs, dst), EKEYREVOKED, "its volume Requests are revoked");
	tap_errno(invoke(fd, mgmt, NULL, 0, NULL, 0), EKEYREVOKED, "and the management Request");
	{
		struct fractos_name a = { .name = (uintptr_t)"blk0", .name_len = 4 };

		tap_errno(ioctl(fd, FRACTOS_IOC_NAME_LOOKUP, &a), ENOENT, "its name is gone");
	}
	fos_close(fd, mgmt);
	fos_close(fd, rd2);
	fos_close(fd, wr2);
	tap_eq(fos_blk_detach(dev), -ENOENT, "detach again: ENOENT");
	tap_eq(fos_blk_unload(), 0, "rmmod fractos_nvme");
	tap_eq(fos_blk_load(), 0, "insmod it again");
	tap_eq(fos_blk_attach(nvme, "blk0", 0, 0, &dev), 0, "attach without format");
	tap_eq(fos_blk_get(dev, &d), 0, "LIST");
	tap_ok(d.nvols == 1 && d.nv == 1 && d.vol[0].id == vol && d.vol[0].size == vsize,
	       "the first volume is there, the destroyed one not");
	{
		struct fractos_name a = { .name = (uintptr_t)"blk0", .name_len = 4 };

		ioctl(fd, FRACTOS_IOC_NAME_LOOKUP, &a);
		mgmt = a.cid;
	}
	tap_eq(mgmt_call(mgmt, FRACTOS_BLK_OPEN, 0, vol, &r, &rd, &wr), 0, "OPEN it");
	memset(dp, 0, 4096);
	tap_eq(io(rd, 4 * 4096, 4096, dst), 4096, "read the block");
	tap_ok(!memcmp(dp, sp, 4096), "the data survived");

	/* Many volumes: LIST spreads them over several messages. */
	for (i = 0; i < 300; i++) {
		uint32_t r1, w1;

		if (mgmt_call(mgmt, FRACTOS_BLK_CREATE, 4096, 0, &r, &r1, &w1))
			break;
		fos_close(fd, r1);
		fos_close(fd, w1);
	}
	tap_eq(i, 300, "300 more volumes of 4 KiB");
	tap_eq(fos_blk_get(dev, &d), 0, "LIST");
	tap_ok(d.nvols == 301 && d.nvtotal == 301,
	       "LIST: %u volumes, %d listed (in several messages)", d.nvols, d.nvtotal);
	{
		char cmd[64];

		snprintf(cmd, sizeof(cmd), "../../tools/fractctl -j blk list | grep -o '\"start\"' | wc -l");
		FILE *f = popen(cmd, "r");
		int n = -1;

		if (f) {
			if (fscanf(f, "%d", &n) != 1)
				n = -1;
			pclose(f);
		}
		tap_eq(n, 301, "fractctl -j blk list shows every volume");
	}

	/* A write's Memory revoked, then its device detached, mid-write. */
	{
		struct reuse u;
		int n, written, old, st, i2, ret;
		pid_t pid;

		reuse_setup(&u, wr, src, sp);
		tap_errno(reuse_send(&u, wr), 0, "8 writes of 1 MiB, each from its own Memory");
		for (i = 0; i < NW; i++)
			fos_revoke(fd, u.mem[i]);
		n = reuse_answers(&u);
		tap_eq(n, NW, "their Memory revoked at once: each answered");
		ret = reuse_check(&u, rd, dst, dp, &written, &old);
		tap_ok(!ret, "each buffer, overwritten the moment its answer came, never reached the disk (%d written, %d blocks untouched)",
		       written, old);
		reuse_free(&u);

		reuse_setup(&u, wr, src, sp);
		tap_errno(reuse_send(&u, wr), 0, "8 more writes");
		pid = fork();
		if (!pid)
			_exit(fos_blk_detach(dev) ? 1 : 0);
		n = reuse_answers(&u);
		st = fos_reap_within(pid, 60000);
		tap_ok(n == NW && WIFEXITED(st) && !WEXITSTATUS(st),
		       "detach meanwhile: each answered (%d), the detach done", n);
		for (i = i2 = 0; i < NW; i++)
			i2 += u.res[i] == BUF || u.res[i] == -EKEYREVOKED;
		tap_eq(i2, NW, "written or EKEYREVOKED");
		fos_close(fd, mgmt);
		fos_close(fd, rd);
		fos_close(fd, wr);
		tap_eq(fos_blk_attach(nvme, "blk0", 0, 0, &dev), 0, "attach it again");
		{
			struct fractos_name a = { .name = (uintptr_t)"blk0", .name_len = 4 };

			ioctl(fd, FRACTOS_IOC_NAME_LOOKUP, &a);
			mgmt = a.cid;
		}
		tap_eq(mgmt_call(mgmt, FRACTOS_BLK_OPEN, 0, vol, &r, &rd, &wr), 0, "OPEN the volume");
		ret = reuse_check(&u, rd, dst, dp, &written, &old);
		tap_ok(!ret, "no overwritten buffer reached the disk (%d written, %d blocks untouched)",
		       written, old);
		reuse_free(&u);
	}

	/*
	 * Answers through the fabric: with fabric_loopback this node's
	 * continuations are invoked as another node's are, so a completion
	 * posts the answer and returns (fos_kinvoke_post(): no ACK comes
	 * back).  The detach below then waits for I/O still in flight.
	 */
	if (loopback_on()) {
		uint64_t tx0 = tx_msgs(self_id), failed;

		fos_blk_get(dev, &d);
		failed = d.stats[FRACTOS_BLK_STAT_CONT_FAILED];
		pattern(sp, BUF, 11);
		tap_eq(io(wr, 0, BUF, src), BUF, "loopback: a write answered through the fabric");
		memset(dp, 0, BUF);
		tap_eq(io(rd, 0, BUF, dst), BUF, "loopback: a read answered through the fabric");
		tap_ok(!memcmp(sp, dp, BUF), "loopback: the bytes came back");
		tap_ok(tx_msgs(self_id) >= tx0 + 6 && tx_msgs(self_id) <= tx0 + 8,
		       "loopback: 2 invocations, their ACKs and 2 answers without crossed the fabric (%llu messages, 6 to 8)",
		       (unsigned long long)(tx_msgs(self_id) - tx0));
		fos_blk_get(dev, &d);
		tap_eq(d.stats[FRACTOS_BLK_STAT_CONT_FAILED], failed,
		       "loopback: no continuation failed");
	} else {
		tap_skip("loopback: no address or no fabric_loopback");
	}

	/* Detach with I/O in flight. */
	for (i = 0; i < 32; i++)
		io_send(rd, 0, BUF, dst);
	tap_eq(fos_blk_detach(dev), 0, "detach with 32 reads in flight");
	ok = revoked = 0;
	for (i = 0; i < 32; i++) {
		int64_t res = io_recv();

		ok += res == BUF;
		revoked += res == -EKEYREVOKED;
	}
	tap_ok(ok + revoked == 32, "every read answered (%d read, %d EKEYREVOKED)", ok,
	       revoked);
	loopback_off();
	close(fd);
	munmap(sp, BUF);
	munmap(dp, BUF);
	munmap(rop, BUF);

	tap_eq(fos_blk_unload(), 0, "rmmod fractos_nvme");
	if (!tap_ok(fos_counts_wait(&before, &now, 10000), "every live counter back")) {
		fos_counts_print("before", &before);
		fos_counts_print("now", &now);
	}
	return tap_finish();
}
