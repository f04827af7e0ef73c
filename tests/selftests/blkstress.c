// SPDX-License-Identifier: GPL-2.0
/*
 * fractos selftest: blkstress - stamped blocks through the block adaptor
 * while devices are detached and attached, volumes destroyed and created,
 * and clients killed.
 *
 * Every 512-byte sector written says which volume, block, sector and
 * generation it holds, and the rest of it is a pattern of those four, so
 * a misdirected, torn, stale or foreign sector is told apart from a right
 * one.  NW writer processes own disjoint chunks of blocks (so each block's
 * history is known exactly) and write runs of 1 to 4 blocks of 4 KiB; a
 * reader reads runs of 1 to 8; the parent, meanwhile, detaches and
 * re-attaches the device, SIGKILLs writers and the reader (and starts new
 * ones), and destroys a volume and creates another in its place.  A
 * writer sometimes revokes its Memory while the write is in flight.
 *
 * What may be found in a sector of volume V, block B:
 *  - a stamp of V, B and that sector, whose generation is between the
 *    last acknowledged write's and the last attempted one (an answered
 *    failure may or may not have landed), or one of a writer killed with
 *    the write in flight (an orphan, which may land at any time);
 *  - if no write to B of V was ever acknowledged: anything but a stamp of
 *    V or of another live volume (old bytes of a destroyed volume, zeros);
 * and never:
 *  - a poison stamp: a writer overwrites its buffer with one the moment a
 *    write's answer arrives, so a device that still read the buffer after
 *    the answer is caught ("the source buffer reused the moment the answer
 *    arrives must never reach the disk");
 *  - a stamp of V naming another block or sector (a misdirected write), of
 *    another live volume, or a torn sector (its bytes not all of one
 *    write) - except where a write to that block was in flight during the
 *    read: QEMU's NVMe serves a read and a write of the same sector at the
 *    same time from one file, and the read may see part of each (counted,
 *    not a violation).
 * A last pass with every client stopped reads every block of every volume,
 * and there every sector must be whole.
 *
 * Usage: blkstress [-t SECONDS] [-s SEED] [-x]   (default 20 s)
 * -x proves the checker: writers scribble poison over their buffer right
 * after invoking, while the write is in flight, and the run must then
 * report violations (it fails unless it does).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/fractos.h>
#include "tap.h"
#include "fos_util.h"
#include "fos_req.h"
#include "fos_nl.h"
#include "fos_blk.h"

/* # timeout: 900 */

#define NW		3	/* writers */
#define NV		3	/* volume slots */
#define NB		128	/* blocks per volume */
#define BS		4096	/* a block */
#define SECT		512	/* a stamp every SECT bytes */
#define CHUNK		4	/* blocks per chunk; chunk c is writer c % NW's */
#define MAXRUN		8	/* blocks per read */
#define NORPH		4	/* orphans remembered per block */
#define NAME		"stress0"

#define MAGIC_DATA	0x5453534b4c42534fULL	/* "OSBLKSST" */
#define MAGIC_POISON	0x4e4f53494f50534fULL	/* "OSPOISON" */

#define TAG_DONE	1
#define TAG_ERR		2

struct stamp {
	uint64_t magic;
	uint64_t vol;
	uint64_t block;
	uint64_t gen;
	uint32_t sector;
	uint32_t writer;
};

/*
 * One block's history in its current volume.  Written by its owner (and,
 * for orphans, by the parent once the owner is dead); @vol is set last
 * when a block starts a new volume, with lo, hi and orphans cleared first.
 */
struct bstate {
	uint64_t vol;
	uint64_t lo;		/* last acknowledged generation, 0: none */
	uint64_t hi;		/* last attempted generation */
	uint64_t orph[NORPH];	/* writes whose writer died in flight */
	uint32_t norph;
};

struct shared {
	int stop;
	uint64_t slot_vol[NV];	/* 0 while a slot is being replaced */
	uint64_t wgen[NW];
	/* what writer w has in flight, for the parent when it kills w */
	uint64_t if_vol[NW], if_gen[NW];
	uint32_t if_slot[NW], if_block[NW], if_n[NW];
	struct bstate b[NV][NB];
	/* counters */
	long writes, wfail, wrevoked, wtimeout, memrevokes, reads, rfail,
	     sectors, unwritten, skipped, reopens, torn_raced;
	long violations;
	char first_violation[256];
};

static struct shared *sh;
static const char *nvme;
static uint32_t dev_id;
static double run_s = 20;
static int selfcheck;
static unsigned int seed0;

static uint64_t ld(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void st(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static void count(long *c)
{
	__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

static void violation(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static void violation(const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (__atomic_fetch_add(&sh->violations, 1, __ATOMIC_RELAXED) < 10)
		printf("# violation: %s\n", buf);
	if (!sh->first_violation[0])
		snprintf(sh->first_violation, sizeof(sh->first_violation),
			 "%s", buf);
	fflush(stdout);
}

static int stopping(void)
{
	return __atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE);
}

/* ---- sectors ---- */

static void fill_sector(unsigned char *p, uint64_t magic, uint64_t vol,
			uint64_t block, uint64_t gen, uint32_t sector,
			uint32_t writer)
{
	struct stamp s = {
		.magic = magic, .vol = vol, .block = block, .gen = gen,
		.sector = sector, .writer = writer,
	};
	uint64_t x = vol * 0x9e3779b97f4a7c15ULL ^ block << 20 ^ gen << 3 ^
		     sector;
	size_t i;

	memcpy(p, &s, sizeof(s));
	for (i = sizeof(s); i < SECT; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(p + i, &x, 8);
	}
}

static void fill_block(unsigned char *p, uint64_t magic, uint64_t vol,
		       uint64_t block, uint64_t gen, uint32_t writer)
{
	uint32_t s;

	for (s = 0; s < BS / SECT; s++)
		fill_sector(p + s * SECT, magic, vol, block, gen, s, writer);
}

static int sector_intact(const unsigned char *p)
{
	static __thread unsigned char want[SECT];
	struct stamp s;

	memcpy(&s, p, sizeof(s));
	fill_sector(want, s.magic, s.vol, s.block, s.gen, s.sector, s.writer);
	return !memcmp(want, p, SECT);
}

static int live_vol(uint64_t vol)
{
	int i;

	for (i = 0; i < NV; i++)
		if (ld(&sh->slot_vol[i]) == vol)
			return 1;
	return 0;
}

static int is_orphan(const struct bstate *b, uint64_t gen)
{
	uint32_t i;

	for (i = 0; i < NORPH; i++)
		if (ld(&b->orph[i]) == gen)
			return 1;
	return 0;
}

/*
 * Check one block read from volume @vol (slot @slot) against its history
 * before (@vol_b, @lo_b) and after the read.
 */
static void check_block(const unsigned char *p, int slot, uint64_t vol,
			uint64_t block, uint64_t vol_b, uint64_t lo_b,
			int quiet, const char *who)
{
	struct bstate *b = &sh->b[slot][block];
	uint64_t hi_a = ld(&b->hi);
	int raced = !quiet && (hi_a != lo_b || b->norph);
	uint32_t s;

	if (ld(&b->vol) != vol_b) {	/* started a new volume meanwhile */
		count(&sh->skipped);
		return;
	}
	for (s = 0; s < BS / SECT; s++) {
		const unsigned char *q = p + s * SECT;
		struct stamp t;

		memcpy(&t, q, sizeof(t));
		count(&sh->sectors);
		if (t.magic == MAGIC_POISON) {
			violation("%s: vol %llu block %llu sector %u: a writer's buffer after its answer (gen %llu)",
				  who, (unsigned long long)vol,
				  (unsigned long long)block, s,
				  (unsigned long long)t.gen);
			continue;
		}
		if (t.magic == MAGIC_DATA && !sector_intact(q) && raced) {
			count(&sh->torn_raced);
			continue;
		}
		if (t.magic == MAGIC_DATA && !sector_intact(q)) {
			violation("%s: vol %llu block %llu sector %u: torn (stamp says vol %llu block %llu gen %llu)",
				  who, (unsigned long long)vol,
				  (unsigned long long)block, s,
				  (unsigned long long)t.vol,
				  (unsigned long long)t.block,
				  (unsigned long long)t.gen);
			continue;
		}
		if (t.magic == MAGIC_DATA && t.vol == vol) {
			if (t.block != block || t.sector != s) {
				violation("%s: vol %llu block %llu sector %u holds block %llu sector %u (gen %llu): misdirected",
					  who, (unsigned long long)vol,
					  (unsigned long long)block, s,
					  (unsigned long long)t.block, t.sector,
					  (unsigned long long)t.gen);
			} else if (vol_b != vol ||
				   ((t.gen < lo_b || t.gen > hi_a) &&
				    !is_orphan(b, t.gen))) {
				violation("%s: vol %llu block %llu sector %u: gen %llu, allowed %llu..%llu%s",
					  who, (unsigned long long)vol,
					  (unsigned long long)block, s,
					  (unsigned long long)t.gen,
					  (unsigned long long)lo_b,
					  (unsigned long long)hi_a,
					  vol_b != vol ? " (never written)" : "");
			}
			continue;
		}
		/* Not ours: fine only where nothing was acknowledged. */
		if (vol_b == vol && lo_b) {
			violation("%s: vol %llu block %llu sector %u: acknowledged gen %llu lost (%s%llu)",
				  who, (unsigned long long)vol,
				  (unsigned long long)block, s,
				  (unsigned long long)lo_b,
				  t.magic == MAGIC_DATA ? "stamp of vol " : "no stamp ",
				  (unsigned long long)(t.magic == MAGIC_DATA ?
						       t.vol : 0));
		} else if (t.magic == MAGIC_DATA && live_vol(t.vol)) {
			violation("%s: vol %llu block %llu sector %u holds live vol %llu block %llu: foreign",
				  who, (unsigned long long)vol,
				  (unsigned long long)block, s,
				  (unsigned long long)t.vol,
				  (unsigned long long)t.block);
		} else {
			count(&sh->unwritten);
		}
	}
}

/* ---- a client: its space, continuations, and the volumes' Requests ---- */

struct client {
	int fd;
	uint32_t done, err;	/* root continuations (TAG_DONE, TAG_ERR) */
	uint32_t mem;
	unsigned char *buf;
	size_t buflen;
	uint32_t mgmt;
	int have_mgmt;
	uint64_t vol[NV];	/* the volume rd/wr are for, 0: none */
	uint32_t rd[NV], wr[NV];
	uint64_t seq;
	unsigned int rnd;
};

static void client_init(struct client *c, size_t buflen)
{
	c->fd = fos_open();
	if (c->fd < 0)
		_exit(20);
	c->buflen = buflen;
	c->buf = mmap(NULL, buflen, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (c->buf == MAP_FAILED ||
	    req_create(c->fd, FRACTOS_CID_INVALID, TAG_DONE, NULL, 0, NULL, 0,
		       &c->done) ||
	    req_create(c->fd, FRACTOS_CID_INVALID, TAG_ERR, NULL, 0, NULL, 0,
		       &c->err) ||
	    fos_mem_create(c->fd, c->buf, buflen, FRACTOS_PERM_ALL, &c->mem))
		_exit(21);
}

static int client_lookup(struct client *c)
{
	struct fractos_name a = { .name = (uintptr_t)NAME,
				  .name_len = strlen(NAME) };

	if (c->have_mgmt)
		fos_close(c->fd, c->mgmt);
	c->have_mgmt = 0;
	if (ioctl(c->fd, FRACTOS_IOC_NAME_LOOKUP, &a))
		return -1;
	c->mgmt = a.cid;
	c->have_mgmt = 1;
	return 0;
}

/* Wait for the answer to call @seq: its message into *@m, 0; or -1. */
static int client_wait(struct client *c, uint64_t seq, struct msg *m,
		       int ms)
{
	double end = fos_now() + ms / 1000.0;
	uint64_t got;

	while (fos_now() < end) {
		fos_req_timeout_ns = 200000000ULL;
		if (receive(c->fd, m)) {
			if (errno != ETIMEDOUT && errno != EAGAIN &&
			    errno != EINTR)
				return -1;
			if (stopping() && ms < 60000)
				return -1;
			continue;
		}
		if (m->imm_len >= 8) {
			memcpy(&got, m->imm, 8);
			if (got == seq)
				return 0;	/* its caps are the caller's */
		}
		close_all(c->fd, m);	/* a late answer of an old call */
	}
	return -1;
}

/*
 * Invoke @req with immediates @imm and capabilities [mem, done', err']
 * (@mem may be NONE: then [done', err']), the continuations derived with
 * this call's sequence number; the answer's immediates after it into
 * @out.  0, -errno of the invocation, or 1 when no answer came in @ms.
 */
static int client_call(struct client *c, uint32_t req, const void *imm,
		       uint32_t imm_len, int with_mem, void *out,
		       uint32_t out_len, struct msg *m, int ms,
		       void (*mid)(struct client *))
{
	uint64_t seq = ++c->seq;
	uint32_t caps[3], d, e, n = 0;
	int ret;

	if (req_create(c->fd, c->done, 0, &seq, 8, NULL, 0, &d))
		return -errno;
	if (req_create(c->fd, c->err, 0, &seq, 8, NULL, 0, &e)) {
		ret = -errno;
		fos_close(c->fd, d);
		return ret;
	}
	if (with_mem)
		caps[n++] = c->mem;
	caps[n++] = d;
	caps[n++] = e;
	ret = invoke(c->fd, req, imm, imm_len, caps, n) ? -errno : 0;
	if (!ret && mid)
		mid(c);
	fos_close(c->fd, d);
	fos_close(c->fd, e);
	if (ret)
		return ret;
	if (client_wait(c, seq, m, ms))
		return 1;
	if (m->imm_len != 8 + out_len)
		return -EPROTO;
	memcpy(out, m->imm + 8, out_len);
	return 0;
}

static void client_drop_slot(struct client *c, int s)
{
	if (!c->vol[s])
		return;
	fos_close(c->fd, c->rd[s]);
	fos_close(c->fd, c->wr[s]);
	c->vol[s] = 0;
}

/* OPEN slot @s's current volume: 0, or -1 (try later). */
static int client_open(struct client *c, int s)
{
	struct fractos_blk_mgmt a = { .op = FRACTOS_BLK_OPEN };
	struct fractos_blk_reply r;
	uint64_t vol = ld(&sh->slot_vol[s]);
	struct msg m;
	int ret;

	client_drop_slot(c, s);
	if (!vol)
		return -1;
	if (!c->have_mgmt && client_lookup(c))
		return -1;
	count(&sh->reopens);
	a.volume = vol;
	ret = client_call(c, c->mgmt, &a, sizeof(a), 0, &r, sizeof(r), &m,
			  10000, NULL);
	if (!ret && m.tag == TAG_DONE && !r.status && m.ncaps != 2)
		close_all(c->fd, &m);
	if (ret || r.status || m.tag != TAG_DONE || m.ncaps != 2) {
		if (ret == -EKEYREVOKED || r.status == -EKEYREVOKED)
			client_lookup(c);	/* detached: look again */
		return -1;
	}
	c->rd[s] = m.caps[0];
	c->wr[s] = m.caps[1];
	c->vol[s] = vol;
	return 0;
}

/* ---- writers ---- */

static void revoke_mem(struct client *c)
{
	fos_revoke(c->fd, c->mem);
}

/* -x: what a client may not do, to show that the checker sees it. */
static void scribble(struct client *c)
{
	uint32_t i;

	for (i = 0; i < CHUNK; i++)
		fill_block(c->buf + i * BS, MAGIC_POISON, 0, i, 0, 0);
}

static void writer(int w)
{
	struct client c = { .rnd = seed0 * 7919 + w * 104729 + getpid() };
	struct fractos_blk_io io;
	struct fractos_blk_done d;
	struct msg m;
	uint32_t chunks = NB / CHUNK, n, i, start, ch;
	int s, ret, revoke;
	uint64_t gen, vol;

	client_init(&c, CHUNK * BS);
	while (!stopping()) {
		s = rand_r(&c.rnd) % NV;
		vol = ld(&sh->slot_vol[s]);
		if (!vol) {
			usleep(20000);
			continue;
		}
		if (c.vol[s] != vol && client_open(&c, s)) {
			usleep(50000);
			continue;
		}
		do
			ch = rand_r(&c.rnd) % chunks;
		while (ch % NW != (uint32_t)w);
		start = ch * CHUNK + rand_r(&c.rnd) % CHUNK;
		n = 1 + rand_r(&c.rnd) % (CHUNK - start % CHUNK);
		gen = __atomic_add_fetch(&sh->wgen[w], 1, __ATOMIC_RELAXED) *
		      NW + w;

		/* what is in flight, for the parent if it kills us */
		st(&sh->if_gen[w], 0);
		sh->if_vol[w] = vol;
		sh->if_slot[w] = s;
		sh->if_block[w] = start;
		sh->if_n[w] = n;
		st(&sh->if_gen[w], gen);
		for (i = 0; i < n; i++) {
			struct bstate *b = &sh->b[s][start + i];

			if (ld(&b->vol) != vol) {
				st(&b->vol, 0);
				memset(b->orph, 0, sizeof(b->orph));
				b->norph = 0;
				st(&b->lo, 0);
				st(&b->hi, 0);
				st(&b->vol, vol);
			}
			st(&b->hi, gen);
			fill_block(c.buf + i * BS, MAGIC_DATA, vol, start + i,
				   gen, w);
		}
		io.offset = (uint64_t)start * BS;
		io.len = (uint64_t)n * BS;
		revoke = !(rand_r(&c.rnd) % 8);
		ret = client_call(&c, c.wr[s], &io, sizeof(io), 1, &d,
				  sizeof(d), &m, 20000,
				  selfcheck ? scribble :
				  revoke ? revoke_mem : NULL);
		if (ret == 1) {
			/* no answer: it may land at any time */
			count(&sh->wtimeout);
			for (i = 0; i < n; i++) {
				struct bstate *b = &sh->b[s][start + i];

				st(&b->orph[b->norph++ % NORPH], gen);
			}
		} else if (!ret && d.result == (int64_t)io.len) {
			count(&sh->writes);
			for (i = 0; i < n; i++)
				st(&sh->b[s][start + i].lo, gen);
		} else {
			count(&sh->wfail);
			if (ret == -EKEYREVOKED || d.result == -EKEYREVOKED) {
				count(&sh->wrevoked);
				client_drop_slot(&c, s);
			}
		}
		st(&sh->if_gen[w], 0);
		/* The answer is here: the buffer is ours again. */
		for (i = 0; i < CHUNK; i++)
			fill_block(c.buf + i * BS, MAGIC_POISON, vol,
				   start + i, gen, w);
		if (revoke) {
			count(&sh->memrevokes);
			fos_close(c.fd, c.mem);
			if (fos_mem_create(c.fd, c.buf, c.buflen,
					   FRACTOS_PERM_ALL, &c.mem))
				_exit(22);
		}
	}
	_exit(0);
}

/* ---- the reader ---- */

/* Read and check @n blocks of slot @s from @start; 0, or -1 (reopen). */
static int read_check(struct client *c, int s, uint32_t start, uint32_t n,
		      int quiet, const char *who)
{
	uint64_t vol = c->vol[s], vol_b[MAXRUN], lo_b[MAXRUN];
	struct fractos_blk_io io = {
		.offset = (uint64_t)start * BS, .len = (uint64_t)n * BS,
	};
	struct fractos_blk_done d;
	struct msg m;
	uint32_t i;
	int ret;

	for (i = 0; i < n; i++) {
		struct bstate *b = &sh->b[s][start + i];

		vol_b[i] = ld(&b->vol);
		lo_b[i] = ld(&b->lo);
	}
	memset(c->buf, 0xa5, io.len);
	ret = client_call(c, c->rd[s], &io, sizeof(io), 1, &d, sizeof(d), &m,
			  20000, NULL);
	if (ret || d.result != (int64_t)io.len) {
		count(&sh->rfail);
		return (ret == -EKEYREVOKED || d.result == -EKEYREVOKED) ?
		       -1 : 0;
	}
	count(&sh->reads);
	for (i = 0; i < n; i++)
		check_block(c->buf + i * BS, s, vol, start + i, vol_b[i],
			    lo_b[i], quiet, who);
	return 0;
}

static void reader(void)
{
	struct client c = { .rnd = seed0 * 31 + getpid() };
	uint32_t start, n;
	int s;

	client_init(&c, MAXRUN * BS);
	while (!stopping()) {
		s = rand_r(&c.rnd) % NV;
		if (!ld(&sh->slot_vol[s])) {
			usleep(20000);
			continue;
		}
		if (c.vol[s] != ld(&sh->slot_vol[s]) && client_open(&c, s)) {
			usleep(50000);
			continue;
		}
		start = rand_r(&c.rnd) % NB;
		n = 1 + rand_r(&c.rnd) % MAXRUN;
		if (start + n > NB)
			n = NB - start;
		if (read_check(&c, s, start, n, 0, "reader"))
			client_drop_slot(&c, s);
	}
	_exit(0);
}

/* ---- the parent: set-up, chaos, the last pass ---- */

static pid_t spawn(void (*fn)(int), int arg)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (!pid)
		fn(arg);
	return pid;
}

static void reader_fn(int unused)
{
	(void)unused;
	reader();
}

/* A writer was killed: what it had in flight may land at any time. */
static void orphan_inflight(int w)
{
	uint64_t gen = ld(&sh->if_gen[w]);
	uint32_t i;

	if (!gen)
		return;
	for (i = 0; i < sh->if_n[w]; i++) {
		struct bstate *b = &sh->b[sh->if_slot[w]][sh->if_block[w] + i];

		if (ld(&b->vol) == sh->if_vol[w])
			st(&b->orph[b->norph++ % NORPH], gen);
	}
	st(&sh->if_gen[w], 0);
}

static int mgmt_op(struct client *c, uint32_t op, uint64_t size,
		   uint64_t vol, uint64_t *out_vol)
{
	struct fractos_blk_mgmt a = { .op = op, .size = size, .volume = vol };
	struct fractos_blk_reply r;
	struct msg m;
	int ret;

	ret = client_call(c, c->mgmt, &a, sizeof(a), 0, &r, sizeof(r), &m,
			  30000, NULL);
	if (ret)
		return ret < 0 ? ret : -ETIMEDOUT;
	if (r.status)
		return r.status;
	if (out_vol)
		*out_vol = r.volume;
	return 0;
}

int main(int argc, char **argv)
{
	long detaches = 0, kills = 0, rkills = 0, replaced = 0, op_fail = 0;
	struct fos_counts before, now;
	pid_t wpid[NW], rpid;
	struct client pc = { 0 };
	const char *why = "";
	double end;
	unsigned int rnd;
	int i, opt, s, ok;

	seed0 = time(NULL);
	while ((opt = getopt(argc, argv, "t:s:x")) != -1) {
		if (opt == 'x')
			selfcheck = 1;
		else if (opt == 't')
			run_s = atof(optarg);
		else if (opt == 's')
			seed0 = strtoul(optarg, NULL, 0);
		else
			return 2;
	}
	rnd = seed0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	tap_plan_late();
	printf("# blkstress: seed %u, %.0f s\n", seed0, run_s);
	nvme = fos_blk_setup(&why);
	if (!nvme) {
		printf("1..0 # SKIP %s\n", why);
		return 0;
	}
	fos_counts_read(&before);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		tap_bail("mmap");
	memset(sh, 0, sizeof(*sh));

	tap_eq(fos_blk_attach(nvme, NAME, 0, 1, &dev_id), 0,
	       "attach %s (formatted)", nvme);
	client_init(&pc, BS * MAXRUN);
	tap_eq(client_lookup(&pc), 0, "the management Request by name");
	ok = 1;
	for (s = 0; s < NV; s++)
		ok &= !mgmt_op(&pc, FRACTOS_BLK_CREATE, NB * BS, 0,
			       &sh->slot_vol[s]);
	tap_ok(ok, "%d volumes of %d blocks", NV, NB);

	for (i = 0; i < NW; i++)
		wpid[i] = spawn(writer, i);
	rpid = spawn(reader_fn, 0);

	end = fos_now() + run_s;
	while (fos_now() < end) {
		int what = rand_r(&rnd) % 8, w;

		usleep(150000 + rand_r(&rnd) % 500000);
		if (what < 2) {
			/* detach with I/O in flight, attach again */
			if (fos_blk_detach(dev_id) ||
			    fos_blk_attach(nvme, NAME, 0, 0, &dev_id)) {
				op_fail++;
				break;
			}
			detaches++;
			client_lookup(&pc);
		} else if (what < 5) {
			w = rand_r(&rnd) % NW;
			kill(wpid[w], SIGKILL);
			waitpid(wpid[w], NULL, 0);
			orphan_inflight(w);
			wpid[w] = spawn(writer, w);
			kills++;
		} else if (what < 6) {
			kill(rpid, SIGKILL);
			waitpid(rpid, NULL, 0);
			rpid = spawn(reader_fn, 0);
			rkills++;
		} else {
			/* DESTROY a volume under its clients, CREATE another */
			uint64_t old, nv = 0;

			s = rand_r(&rnd) % NV;
			old = ld(&sh->slot_vol[s]);
			st(&sh->slot_vol[s], 0);
			if (mgmt_op(&pc, FRACTOS_BLK_DESTROY, 0, old, NULL) ||
			    mgmt_op(&pc, FRACTOS_BLK_CREATE, NB * BS, 0, &nv)) {
				op_fail++;
				break;
			}
			st(&sh->slot_vol[s], nv);
			replaced++;
		}
	}
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
	ok = 1;
	for (i = 0; i < NW; i++)
		ok &= fos_reap_within(wpid[i], 60000) == 0;
	ok &= fos_reap_within(rpid, 60000) == 0;
	tap_ok(ok, "every client stopped by itself");
	tap_eq(op_fail, 0, "every detach, attach, DESTROY and CREATE succeeded");
	printf("# %.0f s: %ld detach+attach, %ld writers and %ld readers killed, %ld volumes replaced\n",
	       run_s, detaches, kills, rkills, replaced);
	printf("# writes: %ld acknowledged, %ld failed (%ld EKEYREVOKED), %ld unanswered, %ld with the Memory revoked in flight; %ld reads (%ld failed); %ld reopens\n",
	       sh->writes, sh->wfail, sh->wrevoked, sh->wtimeout,
	       sh->memrevokes, sh->reads, sh->rfail, sh->reopens);
	tap_ok(sh->writes > 50 && sh->reads > 20 && detaches + replaced > 0,
	       "the clients did real work across the chaos");

	/* The last pass: every block of every volume, nobody writing. */
	for (s = 0; s < NV; s++) {
		uint32_t b;

		if (client_open(&pc, s)) {
			violation("last pass: cannot OPEN slot %d", s);
			continue;
		}
		for (b = 0; b < NB; b += MAXRUN)
			if (read_check(&pc, s, b, MAXRUN, 1, "last pass"))
				violation("last pass: read of slot %d block %u failed",
					  s, b);
	}
	printf("# %ld sectors checked (%ld never written, %ld torn by a write in flight), %ld blocks skipped (new volume meanwhile)\n",
	       sh->sectors, sh->unwritten, sh->torn_raced, sh->skipped);
	if (selfcheck)
		tap_ok(sh->violations > 0, "-x: the checker saw %ld sectors written from a buffer after it changed",
		       sh->violations);
	else
		tap_eq(sh->violations, 0, "no poisoned, misdirected, torn, stale, lost or foreign sector%s%s",
		       sh->violations ? ": " : "", sh->first_violation);

	close(pc.fd);
	tap_eq(fos_blk_detach(dev_id), 0, "detach");
	tap_ok(fos_counts_wait(&before, &now, 5000), "every live counter back");
	tap_eq(fos_blk_unload(), 0, "fractos_nvme unloads");
	return tap_finish();
}
