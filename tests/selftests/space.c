// SPDX-License-Identifier: GPL-2.0
/*
 * fractos selftest: capability spaces, their lifetime and their limits.
 *
 * space_info, fdinfo, sharing a space through dup()/fork(), the release of
 * a space revoking what it created (and only that), many spaces, the
 * max_caps limit (a million capabilities in one space, then a timed close)
 * and the writable max_caps / max_pin_bytes parameters.
 *
 * The million: the space is filled with cap_dup up to max_caps (default
 * 1 << 20).  If the first FILL_PROBE dups show that filling a million would
 * take longer than FILL_BUDGET_S (slow emulation), max_caps is lowered to
 * FALLBACK_CAPS for this test and a diagnostic says so; FOS_BIG_CAPS=N in
 * the environment forces N.  The parameter is restored at exit.
 */
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include "tap.h"
#include "fos_util.h"

#define PG	4096UL
#define RW	FRACTOS_PERM_ALL

#define FILL_PROBE	16384
#define FILL_BUDGET_S	150.0
#define FALLBACK_CAPS	(1U << 17)
#define CLOSE_BOUND_S	30.0

static unsigned char *buf;
static long long orig_max_caps = -1, orig_max_pin = -1;

static void restore_params(void)
{
	if (orig_max_caps >= 0 && fos_param("max_caps") != orig_max_caps)
		fos_set_param("max_caps", orig_max_caps);
	if (orig_max_pin >= 0 && fos_param("max_pin_bytes") != orig_max_pin)
		fos_set_param("max_pin_bytes", orig_max_pin);
}

static uint32_t mk(int fd, uint64_t len)
{
	uint32_t cid;

	if (fos_mem_create(fd, buf, len, RW, &cid))
		tap_bail("memory_create");
	return cid;
}

static int xopen(void)
{
	int fd = fos_open();

	if (fd < 0)
		tap_bail("open " FRACTOS_DEVICE);
	return fd;
}

static uint32_t transfer(int from, uint32_t cid, int to)
{
	uint32_t n = FRACTOS_CID_INVALID;
	int fd;

	if (fos_export(from, cid, 0, &fd) || fos_import(to, fd, &n))
		tap_bail("transfer");
	close(fd);
	return n;
}

static void test_info(void)
{
	struct fractos_space_info si;
	struct fos_counts c0, c1;
	char want[32];
	uint32_t m, d;
	int fd;

	fos_counts_read(&c0);
	fd = xopen();
	tap_eq(fos_live("spaces") - c0.spaces, 1, "open: one more live space");
	tap_errno(fos_space_info(fd, &si), 0, "space_info: succeeds");
	tap_eq(si.abi_version, FRACTOS_ABI_VERSION, "space_info: abi_version");
	tap_eq(si.node, fos_param("node_id"), "space_info: node is node_id");
	tap_ok(si.epoch != 0 && si.epoch == (uint32_t)fos_param("epoch"),
	       "space_info: epoch %#x nonzero and the epoch parameter",
	       si.epoch);
	tap_eq(si.max_caps, fos_param("max_caps"),
	       "space_info: max_caps is the parameter");
	tap_eq(si.ncaps, 0, "space_info: a new space holds nothing");
	m = mk(fd, PG);
	fos_dup(fd, m, &d);
	fos_dup(fd, m, &d);
	tap_eq(fos_ncaps(fd), 3, "space_info: ncaps counts 3");
	fos_close(fd, d);
	tap_eq(fos_ncaps(fd), 2, "space_info: ncaps after a close");
	tap_ok(!strcmp(fos_fdinfo(fd, "fractos-caps"), "2"),
	       "fdinfo: fractos-caps %s", fos_fdinfo(fd, "fractos-caps"));
	snprintf(want, sizeof(want), "%u", si.epoch);
	tap_ok(!strcmp(fos_fdinfo(fd, "fractos-epoch"), want),
	       "fdinfo: fractos-epoch %s", fos_fdinfo(fd, "fractos-epoch"));
	tap_errno(lseek(fd, 0, SEEK_SET), ESPIPE, "lseek on a space -> ESPIPE");
	close(fd);
	fos_counts_read(&c1);
	tap_ok(fos_counts_equal(&c0, &c1), "close: counters back");
}

static void test_sharing(void)
{
	struct fos_counts c0, c1;
	uint32_t m, d;
	int fd, fd2, st;
	pid_t pid;

	fos_counts_read(&c0);
	fd = xopen();
	m = mk(fd, PG);
	fd2 = dup(fd);
	tap_eq(fos_live("spaces") - c0.spaces, 1,
	       "dup(2): still one space");
	tap_errno(fos_dup(fd2, m, &d), 0, "dup(2): the cid works through it");
	close(fd);
	tap_eq(fos_copy(fd2, m, 0, d, 100, 10, NULL), 0,
	       "dup(2): the space lives while a descriptor is open");
	tap_eq(fos_live("pinned_pages"), c0.pinned_pages + 1,
	       "dup(2): its memory is still pinned");

	pid = fork();
	if (!pid)
		_exit(fos_dup(fd2, m, &d) ? 1 : d == 2 ? 0 : 2);
	waitpid(pid, &st, 0);
	tap_ok(WIFEXITED(st) && !WEXITSTATUS(st),
	       "fork: the child uses the shared space");
	tap_eq(fos_ncaps(fd2), 3,
	       "fork: the child's cid is in the parent's space");
	tap_eq(fos_copy(fd2, m, 0, d, 200, 1, NULL), 0,
	       "fork: the child's exit did not release the space");
	close(fd2);
	fos_counts_read(&c1);
	tap_ok(fos_counts_equal(&c0, &c1),
	       "dup(2)/fork: released at the last close");
}

static void test_release(void)
{
	struct fos_counts c0, c1;
	struct fractos_cap_info ci;
	uint32_t ma, ca, cb, mb, ib, bchild, achild, dst;
	int a, b, e1, e2;

	fos_counts_read(&c0);
	a = xopen();
	b = xopen();
	ma = mk(a, 2 * PG);
	if (fos_revtree(a, ma, &achild))
		tap_bail("revtree");
	ca = transfer(a, ma, b);
	cb = transfer(a, achild, b);
	if (fos_revtree(b, ca, &bchild))
		tap_bail("revtree");
	if (fos_mem_create(b, buf + 2 * PG, PG, RW, &mb))
		tap_bail("create");
	ib = transfer(b, mb, a);
	dst = mk(b, PG);	/* b's scratch destination (same pages) */
	tap_ok(!fos_copy(b, ca, 0, dst, 0, 1, NULL) &&
	       !fos_copy(b, bchild, 0, dst, 0, 1, NULL),
	       "release: b uses a's memory and its own child of it");

	close(a);
	tap_eq(fos_live("spaces") - c0.spaces, 1, "release: a is gone");
	tap_errno(fos_copy(b, ca, 0, dst, 0, 1, NULL), EKEYREVOKED,
		  "release: a's memory, imported in b -> EKEYREVOKED");
	tap_errno(fos_copy(b, cb, 0, dst, 0, 1, NULL), EKEYREVOKED,
		  "release: a's revtree child, imported in b -> EKEYREVOKED");
	tap_errno(fos_copy(b, bchild, 0, dst, 0, 1, NULL), EKEYREVOKED,
		  "release: b's own child of a's memory -> EKEYREVOKED");
	tap_ok(!fos_info(b, bchild, &ci) &&
	       (ci.info_flags & FRACTOS_INFO_REVOKED),
	       "release: cap_info in b says REVOKED");
	tap_errno(fos_copy(b, mb, 0, dst, 0, 1, NULL), 0,
		  "release: b's own memory (held by a too) is not revoked");
	fos_counts_read(&c1);
	tap_ok(c1.pinned_pages - c0.pinned_pages == 2 &&
	       c1.memories - c0.memories == 2,
	       "release: a's pages unpinned, b's still pinned (%lld pages)",
	       c1.pinned_pages - c0.pinned_pages);
	tap_eq(c1.caps - c0.caps, 5,
	       "release: a's caps dropped, b's 5 remain");
	close(b);
	fos_counts_read(&c1);
	tap_ok(fos_counts_equal(&c0, &c1), "release: nothing left");
	(void)ib;

	/* The other way round: a child b made of a's object dies with b. */
	a = xopen();
	b = xopen();
	ma = mk(a, PG);
	dst = mk(a, PG);
	ca = transfer(a, ma, b);
	if (fos_revtree(b, ca, &bchild))
		tap_bail("revtree");
	ib = transfer(b, bchild, a);
	close(b);
	e1 = fos_copy(a, ib, 0, dst, 0, 1, NULL) ? errno : 0;
	e2 = fos_copy(a, ma, 0, dst, 0, 1, NULL) ? errno : 0;
	tap_eq(e1, EKEYREVOKED,
	       "release: the child b created is revoked when b goes");
	tap_eq(e2, 0, "release: a's object itself is not");
	close(a);
	fos_counts_read(&c1);
	tap_ok(fos_counts_equal(&c0, &c1), "release: nothing left (2)");
}

#define NSPACES 256

static void test_many_spaces(void)
{
	struct fos_counts c0, c1;
	static int fds[NSPACES];
	int i, ok = 1;

	fos_counts_read(&c0);
	for (i = 0; i < NSPACES; i++) {
		uint32_t m;

		fds[i] = fos_open();
		if (fds[i] < 0 || fos_mem_create(fds[i], buf + (i % 3) * PG,
						  PG, RW, &m) || m != 0)
			ok = 0;
	}
	fos_counts_read(&c1);
	tap_ok(ok && c1.spaces - c0.spaces == NSPACES &&
	       c1.memories - c0.memories == NSPACES,
	       "many: %d spaces with a memory each", NSPACES);
	for (i = 0; i < NSPACES; i++)
		close(fds[i]);
	fos_counts_read(&c1);
	tap_ok(fos_counts_equal(&c0, &c1), "many: all released");
}

/* max_caps changed at run time; max_caps 0; max_pin_bytes. */
static void test_params(void)
{
	struct fos_counts c0, c1;
	uint32_t m, d, i;
	int fd, ok = 1, capfd;

	if (geteuid()) {
		for (i = 0; i < 13; i++)
			tap_skip("writing module parameters needs root");
		return;
	}
	fd = xopen();
	m = mk(fd, PG);
	for (i = 1; i < 10; i++)
		if (fos_dup(fd, m, &d) || d != i)
			ok = 0;
	tap_ok(ok, "params: 10 caps, cids 0..9");
	tap_errno(fos_set_param("max_caps", 8), 0, "params: max_caps = 8");
	tap_eq(fos_param("max_caps"), 8, "params: reads back 8");
	tap_errno(fos_dup(fd, m, NULL), EMFILE,
		  "params: over the lowered limit, dup -> EMFILE");
	fos_close(fd, 3);
	tap_ok(!fos_dup(fd, m, &d) && d == 3,
	       "params: a freed cid below the limit is reused (3)");
	fos_close(fd, 9);
	tap_errno(fos_dup(fd, m, NULL), EMFILE,
		  "params: cids >= max_caps are never handed out");
	if (fos_export(fd, m, 0, &capfd))
		tap_bail("export");
	fos_counts_read(&c0);
	tap_errno(fos_set_param("max_caps", 0), 0, "params: max_caps = 0");
	tap_ok(fos_mem_create(fd, buf, PG, RW, NULL) == -1 &&
	       errno == EMFILE &&
	       fos_import(fd, capfd, NULL) == -1 && errno == EMFILE &&
	       fos_revtree(fd, m, NULL) == -1 && errno == EMFILE,
	       "params: max_caps 0: create, import, revtree -> EMFILE");
	fos_counts_read(&c1);
	tap_ok(fos_counts_equal(&c0, &c1),
	       "params: EMFILE leaks no object, pin or cap");
	close(capfd);
	fos_set_param("max_caps", orig_max_caps);
	close(fd);

	/* max_pin_bytes */
	fd = xopen();
	tap_errno(fos_set_param("max_pin_bytes", 2 * PG), 0,
		  "params: max_pin_bytes = 8192");
	tap_errno(fos_mem_create(fd, buf, 2 * PG, RW, NULL), 0,
		  "params: 8192 bytes are allowed");
	tap_errno(fos_mem_create(fd, buf, 2 * PG + 1, RW, NULL), EINVAL,
		  "params: 8193 bytes -> EINVAL");
	fos_set_param("max_pin_bytes", 0);
	tap_errno(fos_mem_create(fd, buf, 3 * PG, RW, NULL), 0,
		  "params: max_pin_bytes 0 means no limit");
	fos_set_param("max_pin_bytes", orig_max_pin);
	close(fd);
}

/* Fill a space to max_caps, check EMFILE everywhere, time the close. */
static void test_million(void)
{
	unsigned int max, n = 0, lowered = 0;
	struct fractos_space_info si;
	struct fos_counts c0, c1;
	const char *env = getenv("FOS_BIG_CAPS");
	double t0, t, fill, tclose;
	uint32_t m, d;
	int fd, capfd, e = 0;

	fos_counts_read(&c0);
	max = fos_param("max_caps");
	if (env && geteuid() == 0) {
		max = strtoul(env, NULL, 0);
		fos_set_param("max_caps", max);
		lowered = 1;
		tap_diag("max_caps set to %u by FOS_BIG_CAPS", max);
	}
	tap_diag("max_caps parameter %u", max);
	fd = xopen();
	m = mk(fd, PG);
	if (fos_export(fd, m, 0, &capfd))
		tap_bail("export");
	n = 1;
	t0 = fos_now();
	while (n < max) {
		if (fos_dup(fd, m, &d)) {
			e = errno;
			break;
		}
		n++;
		if (n == FILL_PROBE && !lowered && geteuid() == 0) {
			t = fos_now() - t0;
			if (t / FILL_PROBE * max > FILL_BUDGET_S &&
			    FALLBACK_CAPS < max) {
				tap_diag("%d dups took %.2f s: a million would take ~%.0f s; lowering max_caps to %u",
					 FILL_PROBE, t, t / FILL_PROBE * max,
					 FALLBACK_CAPS);
				max = FALLBACK_CAPS;
				fos_set_param("max_caps", max);
				lowered = 1;
			}
		}
	}
	fill = fos_now() - t0;
	tap_ok(n == max && !e, "million: %u caps (max_caps) in one space", n);
	tap_diag("filled %u caps in %.2f s (%.2f us each)", n, fill,
		 fill / n * 1e6);
	if (e)
		tap_diag("stopped early with errno %d (%s)", e, strerror(e));
	tap_errno(fos_dup(fd, m, NULL), EMFILE, "million: one more dup -> EMFILE");
	fos_space_info(fd, &si);
	tap_eq(si.ncaps, max, "million: space_info.ncaps == max_caps");
	tap_eq(fos_live("caps") - c0.caps, max, "million: live caps counter");

	fos_counts_read(&c1);
	tap_errno(fos_mem_create(fd, buf, 4 * PG, RW, NULL), EMFILE,
		  "million: memory_create -> EMFILE");
	tap_errno(fos_revtree(fd, m, NULL), EMFILE,
		  "million: create_revtree -> EMFILE");
	tap_errno(fos_diminish(fd, m, 0, 0, 1, NULL), EMFILE,
		  "million: diminish -> EMFILE");
	tap_errno(fos_import(fd, capfd, NULL), EMFILE,
		  "million: import -> EMFILE");
	{
		struct fractos_request_create rc = {
			.base = FRACTOS_CID_INVALID,
		};
		long long r0 = fos_live("requests");

		tap_errno(ioctl(fd, FRACTOS_IOC_REQUEST_CREATE, &rc), EMFILE,
			  "million: request_create -> EMFILE");
		tap_eq(fos_live("requests"), r0,
		       "million: ...and leaks no Request");
	}
	{
		struct fos_counts c2;

		fos_counts_read(&c2);
		tap_ok(fos_counts_equal(&c1, &c2),
		       "million: failed creations leak no object or pin");
	}
	fos_close(fd, max / 2);
	tap_ok(!fos_dup(fd, m, &d) && d == max / 2,
	       "million: a freed cid in the middle is reused (%u)", d);
	tap_errno(fos_dup(fd, m, NULL), EMFILE, "million: full again");

	t0 = fos_now();
	close(fd);
	tclose = fos_now() - t0;
	tap_diag("closing the space with %u caps took %.3f s", max, tclose);
	/*
	 * Closing is linear in the caps: it may take CLOSE_BOUND_S, or, on a
	 * kernel slowed by KASAN and lockdep (where revoking costs more than
	 * a dup), twice as long as the fill.
	 */
	tap_ok(tclose < (2 * fill > CLOSE_BOUND_S ? 2 * fill : CLOSE_BOUND_S),
	       "million: close took %.3f s (< %.0f s, or twice the fill's %.0f s)",
	       tclose, CLOSE_BOUND_S, fill);
	fos_counts_read(&c1);
	tap_ok(c1.caps == c0.caps && c1.spaces == c0.spaces &&
	       c1.pinned_pages == c0.pinned_pages,
	       "million: caps, space and pin released");
	close(capfd);
	fos_counts_read(&c1);
	tap_ok(fos_counts_equal(&c0, &c1), "million: nothing left");
	if (lowered) {
		fos_set_param("max_caps", orig_max_caps);
		tap_diag("NOTE: ran with max_caps %u, not %lld", max,
			 orig_max_caps);
	}
}

int main(void)
{
	struct fos_counts b0, now;

	tap_plan(67);
	orig_max_caps = fos_param("max_caps");
	orig_max_pin = fos_param("max_pin_bytes");
	if (orig_max_caps < 0 || orig_max_pin < 0)
		tap_bail("module parameters not readable");
	atexit(restore_params);
	fos_counts_read(&b0);
	buf = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		tap_bail("mmap");
	memset(buf, 3, 4 * PG);

	test_info();
	test_sharing();
	test_release();
	test_many_spaces();
	test_params();
	test_million();

	restore_params();
	tap_eq(fos_param("max_caps"), orig_max_caps,
	       "params: max_caps restored (%lld)", orig_max_caps);
	tap_ok(fos_counts_wait(&b0, &now, 2000),
	       "space: every counter back to its value at start");
	if (!fos_counts_equal(&b0, &now)) {
		fos_counts_print("start", &b0);
		fos_counts_print("end", &now);
	}
	return tap_finish();
}
