// SPDX-License-Identifier: GPL-2.0
/*
 * remote: remote invocation in one guest.  The node is configured as its
 * own peer (rxe loopback) and fabric_loopback=1 sends invocations of local
 * Requests through the fabric to itself: the export table, INVOKE/ACK,
 * capability descriptors that resolve back to the real local objects (so
 * the provider sees exactly what a local invocation gives it), the errors
 * that come back from the receiving side, derived Requests, io_uring, a
 * space's contact told through the fabric, a MEMORY_GRANT that arrives as
 * a copy (kernel/remote/handover.c), and cleanup when the peer is
 * deleted.  (Proxies need a second node: see
 * tests/multinode/remote_2node.sh.)
 */
#include <liburing.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include "tap.h"
#include "fos_util.h"
#include "fos_nl.h"
#include "fos_req.h"

static uint64_t tx_msgs(uint32_t id)
{
	struct fos_nl_node n;

	return fos_nl_node_get(id, &n) ? 0 : n.stats[FRACTOS_STAT_TX_MSGS];
}

static long long qmax = -1, cache_ms = -1;
static uint32_t self_id;

/* Whatever happens, leave the module as the other tests expect it. */
static void restore(void)
{
	fos_set_debugfs("fault_read_delay_ms", 0);
	fos_set_param("fabric_loopback", 0);
	fos_set_param("busy_poll_us", 0);
	if (cache_ms >= 0)
		fos_set_param("copy_cache_ms", cache_ms);
	if (qmax > 0)
		fos_set_param("max_queue", qmax);
	fos_nl_node_del(self_id);
}

static uint64_t disconnects(uint32_t id)
{
	struct fos_nl_node n;

	return fos_nl_node_get(id, &n) ? ~0ULL :
	       n.stats[FRACTOS_STAT_DISCONNECTS] +
	       n.stats[FRACTOS_STAT_PROTO_ERRORS];
}

/*
 * The source of a copy is revoked while the copy reads it (READs slowed
 * down by fault_read_delay_ms): its grant ends at once - the puller posts
 * no further READ, the copy fails with EKEYREVOKED, the region is gone -
 * instead of living until the window is read or for the grant's TTL, and
 * the connection is not hurt.
 */
static void revoke_mid_copy(int cli, uint32_t sm, uint32_t dm, uint32_t id)
{
	const unsigned int delay_ms = 200;
	uint64_t disc0 = disconnects(id);
	struct { int ret, err; double t; } r = { -1, 0, 0 };
	double t0, t_gone = -1, t_rev;
	int p[2], ok, i;
	uint32_t lc = ~0U;
	pid_t pid;

	ok = !fos_revtree(cli, sm, &lc) && !pipe(p) &&
	     !fos_set_debugfs("fault_read_delay_ms", delay_ms);
	tap_ok(ok, "a lease child of the source; READs slowed to one per %u ms",
	       delay_ms);
	if (!ok)
		return;
	pid = fork();
	if (!pid) {
		uint64_t copied = 0;

		r.ret = fos_copy(cli, lc, 0, dm, 0, 3 << 20, &copied);
		r.err = r.ret ? errno : 0;
		r.t = fos_now();
		if (write(p[1], &r, sizeof(r)) != sizeof(r))
			_exit(1);
		_exit(0);
	}
	t0 = fos_now();
	while (!fos_live("grants") && fos_now() - t0 < 20)
		usleep(1000);
	tap_ok(fos_live("grants") > 0, "the copy holds a grant (after %.2f s)",
	       fos_now() - t0);
	usleep(delay_ms * 1000 / 2);
	t_rev = fos_now();
	tap_eq(fos_revoke(cli, lc), 0, "revoke the source while it is read");
	for (i = 0; i < 3000; i++) {
		if (!fos_live("grants")) {
			t_gone = fos_now();
			break;
		}
		usleep(1000);
	}
	if (read(p[0], &r, sizeof(r)) != sizeof(r))
		r.ret = -2;
	waitpid(pid, NULL, 0);
	fos_set_debugfs("fault_read_delay_ms", 0);
	tap_ok(r.ret == -1 && r.err == EKEYREVOKED && r.t - t_rev < 1.0,
	       "the copy stops with EKEYREVOKED %.2f s after the revocation (ret %d, %s)",
	       r.t - t_rev, r.ret, strerror(r.err));
	tap_ok(t_gone > 0 && t_gone - t_rev < 1.0,
	       "its grant (and rkey) is gone %.2f s after the revocation",
	       t_gone > 0 ? t_gone - t_rev : -1.0);
	tap_ok(disconnects(id) == disc0 &&
	       !fos_copy(cli, sm, 0, dm, 0, 4096, NULL),
	       "the connection is unharmed: the parent still copies");
	fos_close(cli, lc);
	close(p[0]);
	close(p[1]);
}

/* Wait up to @s seconds for live counter @name to reach 0. */
static long long settle0(const char *name, double s)
{
	double t0 = fos_now();

	while (fos_live(name) && fos_now() - t0 < s)
		usleep(10 * 1000);
	return fos_live(name);
}

/*
 * Kept regions (copy_cache_ms, "Kept regions" in kernel/remote/kept.c):
 * the second copy from a source asks its owner to keep the region, and
 * the copies after read it with no message, seeing the source's bytes as
 * they are now.  Revoking the source ends the region at once (GRANT_END,
 * then RELEASE: CAP_REVOKE does not wait 2 s for it), idle regions are
 * released, and so are all when the parameter is set to 0.  @sm is a
 * 3 MiB source of @sb, @dm a destination of @db.
 */
static void kept(int cli, char *sb, char *db, uint32_t sm, uint32_t dm,
		 uint32_t id)
{
	long long k0 = fos_total("kept_copies"), k1;
	uint64_t disc0 = disconnects(id), tx0, tx1;
	uint64_t copied = 0;
	uint32_t lc = ~0U;
	double t0, dt;
	int ret = -1, i, ok;

	ok = !fos_set_param("copy_cache_ms", 1000) &&
	     !fos_revtree(cli, sm, &lc);
	tap_ok(ok, "copy_cache_ms=1000; a lease child of the source");
	tx0 = tx_msgs(id);
	for (ret = 0, i = 0; ok && i < 20 && !ret; i++)
		ret = fos_copy(cli, lc, 5 * i, dm, 100 + i, 1, &copied);
	tx1 = tx_msgs(id);
	k1 = fos_total("kept_copies");
	tap_ok(!ret && db[119] == sb[95] && db[100] == sb[0] &&
	       tx1 - tx0 <= 8 && k1 - k0 >= 18 &&
	       fos_live("kept_regions") == 1 && fos_live("grants") == 1,
	       "20 copies of 1 byte: %llu messages (8 at most), %lld read through one kept region (ret %d)",
	       (unsigned long long)(tx1 - tx0), k1 - k0, ret);
	sb[15] ^= 0x5a;
	ret = fos_copy(cli, lc, 15, dm, 200, 1, &copied);
	tap_ok(!ret && db[200] == sb[15] &&
	       fos_total("kept_copies") == k1 + 1,
	       "a byte of the source written since: the kept region reads it as it is now (ret %d)",
	       ret);
	tx0 = tx_msgs(id);
	ret = fos_copy(cli, lc, 8192 + 3, dm, 4096, 65536, &copied);
	tap_ok(!ret && !memcmp(db + 4096, sb + 8192 + 3, 65536) &&
	       tx_msgs(id) - tx0 <= 2 && fos_total("kept_copies") == k1 + 2,
	       "64 KiB from elsewhere in the region: one READ, %llu messages (ret %d)",
	       (unsigned long long)(tx_msgs(id) - tx0), ret);
	t0 = fos_now();
	ret = fos_revoke(cli, lc);
	dt = fos_now() - t0;
	tap_ok(!ret && dt < 1.0,
	       "CAP_REVOKE of the source returns after %.2f s: the region was released at its GRANT_END (ret %d)",
	       dt, ret);
	tap_ok(!settle0("kept_regions", 2) && !settle0("grants", 2) &&
	       disconnects(id) == disc0 &&
	       !fos_copy(cli, sm, 0, dm, 0, 1, &copied) && db[0] == sb[0],
	       "the region and its grant are gone, the connection unharmed, the parent still copies");
	for (ret = 0, i = 0; i < 3 && !ret; i++)
		ret = fos_copy(cli, sm, i, dm, i, 1, &copied);
	ok = !ret && fos_live("kept_regions") == 1;
	t0 = fos_now();
	ok = ok && !settle0("kept_regions", 4) && !settle0("grants", 2);
	dt = fos_now() - t0;
	tap_ok(ok && dt > 0.5,
	       "a region idle for copy_cache_ms is released (after %.2f s)", dt);
	for (ret = 0, i = 0; i < 3 && !ret; i++)
		ret = fos_copy(cli, sm, i, dm, i, 1, &copied);
	ok = !ret && fos_live("kept_regions") == 1 &&
	     !fos_set_param("copy_cache_ms", 0);
	tap_ok(ok && !settle0("kept_regions", 1) && !settle0("grants", 2),
	       "copy_cache_ms=0 releases the regions kept");
	fos_close(cli, lc);
}

/*
 * Copies whose source is revoked at random points while the owner sets up
 * the grant: each ends with success or EKEYREVOKED, and no grant or peer
 * reference is left behind (a grant whose source was revoked between the
 * view check and the pinning once kept its peer forever: peers=1 at
 * rmmod).
 */
static void revoke_races(int cli, uint32_t sm, uint32_t dm)
{
	int i, bad = 0, n_ok = 0, n_rev = 0;

	for (i = 0; i < 300; i++) {
		uint32_t lc = ~0U;
		int st;
		pid_t pid;

		if (fos_revtree(cli, sm, &lc))
			break;
		pid = fork();
		if (!pid) {
			int r = fos_copy(cli, lc, 0, dm, 0, 4096, NULL);

			_exit(!r ? 0 : errno == EKEYREVOKED ? 1 : 2);
		}
		usleep(i % 50 * 20);
		fos_revoke(cli, lc);
		waitpid(pid, &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st) > 1)
			bad++;
		else if (WEXITSTATUS(st))
			n_rev++;
		else
			n_ok++;
		fos_close(cli, lc);
	}
	tap_ok(i == 300 && !bad, "300 copies raced by revocations: %d copied, %d EKEYREVOKED, "
	       "%d other", n_ok, n_rev, bad);
}

/*
 * An invocation whose message was received is answered even when the
 * receiver deletes the node at once: NODE_DEL lingers until the ACK has
 * left (the fabric's "Lingering").  A child invokes, the provider
 * receives and deletes the node (itself) straight away, then adds it
 * again for the next round.
 */
static void linger(int prov, int cli, uint32_t id, struct in_addr addr)
{
	const int rounds = 12;
	long slowest = 0;
	uint32_t r = ~0U, c = ~0U;
	int good = 0, got = 0, i, ok;
	struct { int ret, err; } res;
	struct msg m;

	ok = !client_request(prov, cli, 77, NULL, &r, &c);
	tap_ok(ok, "linger: the client holds a fresh Request");
	for (i = 0; ok && i < rounds; i++) {
		int p[2];
		pid_t pid;

		if (pipe(p))
			break;
		pid = fork();
		if (!pid) {
			res.ret = invoke(cli, c, "L", 1, NULL, 0);
			res.err = res.ret ? errno : 0;
			if (write(p[1], &res, sizeof(res)) != sizeof(res))
				_exit(1);
			_exit(0);
		}
		close(p[1]);
		if (!receive(prov, &m)) {
			struct timespec t0, t1;
			long ms;

			got++;
			clock_gettime(CLOCK_MONOTONIC, &t0);
			fos_nl_node_del(id);
			clock_gettime(CLOCK_MONOTONIC, &t1);
			ms = (t1.tv_sec - t0.tv_sec) * 1000 +
			     (t1.tv_nsec - t0.tv_nsec) / 1000000;
			if (ms > slowest)
				slowest = ms;
			close_all(prov, &m);
		}
		res.ret = -1;
		res.err = EIO;
		if (read(p[0], &res, sizeof(res)) == sizeof(res) && !res.ret)
			good++;
		else
			tap_diag("round %d: the invoke failed: %s", i, strerror(res.err));
		close(p[0]);
		waitpid(pid, NULL, 0);
		fos_nl_node_del(id);
		if (fos_nl_node_add(id, addr) || !fos_nl_wait_up(id, 30))
			break;
	}
	tap_ok(got == rounds && good == rounds,
	       "linger: %d of %d invocations answered though NODE_DEL followed their receipt (%d received)",
	       good, rounds, got);
	/* The linger ends when the ACK is done, not at its 1 s bound. */
	tap_ok(got && slowest < 900, "linger: the slowest NODE_DEL took %ld ms (under 900)",
	       slowest);
	fos_revoke(prov, r);
	fos_close(prov, r);
	fos_close(cli, c);
}

/* totals/busy_polls + totals/busy_poll_misses, taken together. */
struct spins {
	long long polls, misses;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static struct spins spins_now(void)
{
	return (struct spins){ fos_total("busy_polls"), fos_total("busy_poll_misses") };
}

/*
 * busy_poll_us (kernel/busypoll.c "Busy polling"): with a budget of 1 ms,
 * each fabric call's wait for its ACK ends once, while spinning or after
 * it (totals/busy_polls + busy_poll_misses), and most answers come inside
 * the budget; an inline copy's answer spins, a copy by READ does not; a
 * receive that times out spins out once and still times
 * out; a receiver that spins gets every message right; at 0 neither
 * counter moves.
 */
static void busy_poll(int prov, int cli)
{
	uint64_t saved = fos_req_timeout_ns;
	int i, ret, good = 0, st, spinning;
	uint32_t r = ~0U, c = ~0U;
	struct spins s0, s1, s2;
	double rt[10], t0;
	struct msg m;
	pid_t pid;

	ret = client_request(prov, cli, 42, "abc", &r, &c);
	/*
	 * How long an answer takes here without spinning (waking up
	 * included): only if it comes well inside the budget (3/4 of it) can
	 * most be taken spinning (a kernel slowed by KASAN and lockdep takes
	 * longer than the 1 ms there is).
	 */
	for (i = 0; i < 10 && !ret; i++) {
		t0 = fos_now();
		ret = invoke(cli, c, "b", 1, NULL, 0);
		rt[i] = fos_now() - t0;
		if (!ret && !receive(prov, &m))
			close_all(prov, &m);
	}
	qsort(rt, 10, sizeof(rt[0]), cmp_double);
	spinning = rt[5] < 750e-6;
	tap_ok(!ret && !fos_set_param("busy_poll_us", 1000),
	       "busy_poll_us=1000, and the client holds a fresh Request (answers in %.0f us without spinning)",
	       rt[5] * 1e6);
	s0 = spins_now();
	for (i = 0; i < 10 && !ret; i++)
		ret = invoke(cli, c, "b", 1, NULL, 0);
	s1 = spins_now();
	for (i = 0; i < 10 && !receive(prov, &m); i++) {
		good += m.tag == 42 && m.imm_len == 4 && !memcmp(m.imm, "abcb", 4);
		close_all(prov, &m);
	}
	tap_ok(!ret && good == 10 &&
	       (s1.polls - s0.polls) + (s1.misses - s0.misses) == 10 &&
	       (!spinning || s1.polls - s0.polls >= 5),
	       "busy poll: 10 fabric calls, %lld answers taken spinning, %lld slept, 10 delivered%s",
	       s1.polls - s0.polls, s1.misses - s0.misses,
	       spinning ? "" : " (answers near or beyond the budget here: most taken spinning not required)");

	/* An inline copy's answer spins; a GRANT of a region does not. */
	{
		char *sb = malloc(65536), *db = calloc(1, 65536);
		uint32_t sm = ~0U, dm = ~0U;
		int r1 = -1, r2 = -1;

		if (sb && db && !fos_mem_create(cli, sb, 65536, FRACTOS_PERM_READ, &sm) &&
		    !fos_mem_create(cli, db, 65536, FRACTOS_PERM_ALL, &dm)) {
			memset(sb, 0x5a, 65536);
			s0 = spins_now();
			r1 = fos_copy(cli, sm, 0, dm, 0, 65536, NULL);
			s1 = spins_now();
			r2 = fos_copy(cli, sm, 0, dm, 1, 1, NULL);
			s2 = spins_now();
			tap_ok(!r1 && !r2 && s1.polls == s0.polls && s1.misses == s0.misses &&
			       s2.polls + s2.misses == s1.polls + s1.misses + 1 &&
			       db[65535] == 0x5a,
			       "busy poll: a 64 KiB copy by READ does not spin, a 1 B inline copy spins once");
		} else {
			tap_ok(0, "busy poll: two Memory objects for a copy");
		}
		fos_revoke(cli, sm);
		fos_revoke(cli, dm);
		fos_close(cli, sm);
		fos_close(cli, dm);
		free(sb);
		free(db);
	}

	s0 = spins_now();
	fos_req_timeout_ns = 20000000;
	ret = receive(prov, &m);
	fos_req_timeout_ns = saved;
	s1 = spins_now();
	tap_ok(ret && errno == ETIMEDOUT && s1.misses == s0.misses + 1 &&
	       s1.polls == s0.polls,
	       "busy poll: an empty receive spins out once, then times out (ETIMEDOUT)");

	/* A receiver that spins while the calls come. */
	pid = fork();
	if (!pid) {
		for (i = 0; i < 10; i++) {
			usleep(300);
			if (invoke(cli, c, "s", 1, NULL, 0))
				_exit(1);
		}
		_exit(0);
	}
	for (good = 0, i = 0; i < 10 && !receive(prov, &m); i++) {
		good += m.tag == 42 && m.imm_len == 4 && !memcmp(m.imm, "abcs", 4);
		close_all(prov, &m);
	}
	st = -1;
	waitpid(pid, &st, 0);
	tap_ok(good == 10 && WIFEXITED(st) && !WEXITSTATUS(st),
	       "busy poll: a spinning receiver gets 10 of 10 calls in order (%lld spins answered)",
	       spins_now().polls - s1.polls);

	fos_set_param("busy_poll_us", 0);
	s0 = spins_now();
	for (ret = 0, i = 0; i < 5 && !ret; i++)
		ret = invoke(cli, c, "z", 1, NULL, 0);
	for (i = 0; i < 5 && !receive(prov, &m); i++)
		close_all(prov, &m);
	s1 = spins_now();
	tap_ok(!ret && i == 5 && s1.polls == s0.polls && s1.misses == s0.misses,
	       "busy_poll_us=0: 5 calls, nothing spun");
	fos_revoke(prov, r);
	fos_close(prov, r);
	fos_close(cli, c);
}

/*
 * A space's contact through the fabric (fabric_loopback): the client's
 * space goes, and the note reaches the provider as a remote invocation
 * does; its answer comes later and is counted in totals/contact_notes.
 */
static void contact(int prov)
{
	uint32_t req = FRACTOS_CID_INVALID;
	struct fractos_space_contact a = { .op = FRACTOS_CONTACT_ADD };
	long long notes0 = fos_total("contact_notes");
	uint64_t tx0 = tx_msgs(self_id);
	struct fractos_contact_note n = { 0 };
	int c = fos_open(), capfd = -1, ok, ret, i;
	static struct msg m;

	ok = c >= 0 &&
	     !req_create(prov, FRACTOS_CID_INVALID, 43, "abc", 3, NULL, 0, &req) &&
	     !fos_export(prov, req, 0, &capfd) &&
	     !fos_import(c, capfd, &a.cid) &&
	     !ioctl(c, FRACTOS_IOC_SPACE_CONTACT, &a);
	if (capfd >= 0)
		close(capfd);
	close(c);
	ret = receive(prov, &m);
	if (!ok || ret || m.imm_len != 3 + sizeof(n))
		tap_diag("contact: set up %d, receive %d (errno %d), tag %llu, %u bytes, %u caps",
			 ok, ret, ret ? errno : 0, (unsigned long long)m.tag,
			 m.imm_len, m.ncaps);
	if (!ret && m.imm_len == 3 + sizeof(n))
		memcpy(&n, m.imm + 3, sizeof(n));
	tap_ok(ok && !ret && m.tag == 43 && !memcmp(m.imm, "abc", 3) &&
	       !m.ncaps && n.reason == FRACTOS_CONTACT_CLOSED &&
	       n.id == a.id && n.node == self_id,
	       "contact: a client space's note came through the fabric (reason %u id %u node %u)",
	       n.reason, n.id, n.node);
	if (!ret)
		close_all(prov, &m);
	fos_close(prov, req);
	for (i = 0; i < 300 && fos_total("contact_notes") == notes0; i++)
		usleep(10000);
	tap_ok(fos_total("contact_notes") == notes0 + 1 && tx_msgs(self_id) >= tx0 + 2,
	       "contact: answered (totals/contact_notes +1), over the fabric (%llu messages)",
	       (unsigned long long)(tx_msgs(self_id) - tx0));
}

/*
 * Memory steal through the fabric (fabric_loopback): a child's space names
 * the contact, marks a Memory over its own pages and is killed.  The note
 * goes out and back in as a remote invocation, and brings the provider
 * that Memory (this node's own object, so not a proxy: owned by the
 * Request's creator, the provider), whose bytes a copy through the fabric
 * reads; it goes when the provider lets it go.
 */
static void steal(int prov)
{
	struct fractos_space_contact a = { .op = FRACTOS_CONTACT_ADD };
	long long mem0 = fos_live("memories");
	uint64_t tx0 = tx_msgs(self_id);
	struct fractos_contact_note n = { 0 };
	struct fractos_cap_info info;
	uint32_t req = FRACTOS_CID_INVALID, dst = FRACTOS_CID_INVALID;
	unsigned char *local, want[4096];
	int c = fos_open(), capfd = -1, pfd[2], ok, ret;
	static struct msg m;
	pid_t pid;

	ok = c >= 0 && !pipe(pfd) &&
	     !req_create(prov, FRACTOS_CID_INVALID, 44, NULL, 0, NULL, 0, &req) &&
	     !fos_export(prov, req, 0, &capfd) &&
	     !fos_import(c, capfd, &a.cid) &&
	     !ioctl(c, FRACTOS_IOC_SPACE_CONTACT, &a);
	if (capfd >= 0)
		close(capfd);
	if (!ok)
		tap_bail("steal: setup");
	pid = fork();
	if (pid < 0)
		tap_bail("fork");
	if (!pid) {
		struct fractos_space_contact st = {
			.op = FRACTOS_CONTACT_STEAL, .id = a.id,
		};
		unsigned char *buf;

		close(prov);
		buf = fos_anon_mem(c, 4096, &st.cid);
		if (!buf)
			_exit(1);
		fos_fill(buf, 4096, 44);
		if (ioctl(c, FRACTOS_IOC_SPACE_CONTACT, &st) ||
		    write(pfd[1], "x", 1) != 1)
			_exit(2);
		pause();
		_exit(0);
	}
	close(c);
	close(pfd[1]);
	ok = read(pfd[0], want, 1) == 1;
	close(pfd[0]);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	ret = receive(prov, &m);
	if (!ret && m.imm_len == sizeof(n))
		memcpy(&n, m.imm, sizeof(n));
	ok = ok && !ret && m.tag == 44 && n.reason == FRACTOS_CONTACT_KILLED &&
	     n.stolen == 1 && m.ncaps == 1 && !fos_info(prov, m.caps[0], &info);
	tap_ok(ok && info.type == FRACTOS_OBJ_MEMORY && info.len == 4096 &&
	       (info.info_flags & FRACTOS_INFO_OWNED) && tx_msgs(self_id) > tx0,
	       "steal: the killed space's Memory came through the fabric, owned by the provider (stolen %u, %u caps, flags %#x, %llu messages)",
	       n.stolen, ret ? 0 : m.ncaps, ok ? info.info_flags : 0,
	       (unsigned long long)(tx_msgs(self_id) - tx0));
	local = fos_anon_mem(prov, 4096, &dst);
	fos_fill(want, sizeof(want), 44);
	tap_ok(!ret && m.ncaps == 1 && local &&
	       !fos_copy(prov, m.caps[0], 0, dst, 0, 4096, NULL) &&
	       !memcmp(local, want, sizeof(want)),
	       "steal: a remote copy reads the bytes the killed process wrote");
	if (!ret)
		close_all(prov, &m);
	fos_close(prov, dst);
	fos_close(prov, req);
	if (local)
		munmap(local, 4096);
	tap_eq(fos_live_settle("memories", mem0), mem0,
	       "steal: the Memory went with the provider's capability");
}

static uint64_t read_bytes(uint32_t id)
{
	struct fos_nl_node n;

	return fos_nl_node_get(id, &n) ? 0 :
	       n.stats[FRACTOS_STAT_RDMA_READ_BYTES];
}

/*
 * MEMORY_GRANT to a Request through the fabric: the receiving side copies
 * the three pages into kernel pages of its own (RDMA READ), frees the
 * source, and delivers the copy, owned by the provider, which maps it.
 */
static void grant_across(int prov)
{
	struct fractos_memory_grant g = { 0 };
	long long mem0 = fos_live("memories"), copies0 = fos_total("grant_copies");
	uint64_t rd0 = read_bytes(self_id);
	struct fractos_cap_info info = { 0 };
	uint32_t req = FRACTOS_CID_INVALID;
	unsigned char *buf = NULL, *map = MAP_FAILED, want[3 * 4096];
	static unsigned char big[64 << 10];
	int c = fos_open(), capfd = -1, ok, ret, st = 0;
	static struct msg m;
	pid_t pid;

	ok = c >= 0 &&
	     !req_create(prov, FRACTOS_CID_INVALID, 45, NULL, 0, NULL, 0, &req) &&
	     !fos_export(prov, req, 0, &capfd) && !fos_import(c, capfd, &g.req);
	if (capfd >= 0)
		close(capfd);
	capfd = -1;
	if (ok)
		buf = fos_anon_mem(c, sizeof(want), &g.cid);
	if (!buf)
		tap_bail("grant: setup");
	fos_fill(buf, sizeof(want), 45);
	fos_fill(want, sizeof(want), 45);
	ret = ioctl(c, FRACTOS_IOC_MEMORY_GRANT, &g) ? -errno : 0;
	tap_ok(!ret && g.new_cid == FRACTOS_CID_INVALID &&
	       fos_total("grant_copies") == copies0 + 1 &&
	       read_bytes(self_id) >= rd0 + sizeof(want),
	       "grant: through the fabric, copied on arrival (ret %d, grant_copies +%lld, %llu bytes read)",
	       ret, fos_total("grant_copies") - copies0,
	       (unsigned long long)(read_bytes(self_id) - rd0));
	ret = receive(prov, &m);
	if (!ret && m.ncaps == 1)
		fos_info(prov, m.caps[0], &info);
	tap_ok(!ret && m.tag == 45 && m.ncaps == 1 &&
	       info.type == FRACTOS_OBJ_MEMORY && info.len == sizeof(want) &&
	       info.perms == FRACTOS_PERM_ALL &&
	       info.info_flags == FRACTOS_INFO_OWNED,
	       "grant: the provider gets the whole copy, with every right, its own (flags %#x)",
	       info.info_flags);
	if (!ret && m.ncaps == 1 && !fos_export(prov, m.caps[0], 0, &capfd))
		map = mmap(NULL, sizeof(want), PROT_READ | PROT_WRITE,
			   MAP_SHARED, capfd, 0);
	tap_ok(map != MAP_FAILED && !memcmp(map, want, sizeof(want)),
	       "grant: it maps the copy and reads the granter's bytes");
	if (map != MAP_FAILED)
		munmap(map, sizeof(want));
	if (capfd >= 0)
		close(capfd);
	if (!ret)
		close_all(prov, &m);
	fos_close(prov, req);
	tap_eq(fos_live_settle("memories", mem0), mem0,
	       "grant: the copy went with the provider's capability, the source with the grant");

	/*
	 * The Request revoked while its copy is read (READs held back 300
	 * ms; 64 KiB, more than a copy carries inline): nothing is
	 * delivered, the granter keeps its Memory.
	 */
	memset(&g, 0, sizeof(g));
	g.new_cid = FRACTOS_CID_INVALID;
	ok = !req_create(prov, FRACTOS_CID_INVALID, 46, NULL, 0, NULL, 0, &req) &&
	     !fos_export(prov, req, 0, &capfd) && !fos_import(c, capfd, &g.req);
	if (capfd >= 0)
		close(capfd);
	capfd = -1;
	buf = ok ? fos_anon_mem(c, sizeof(big), &g.cid) : NULL;
	if (!buf || fos_set_debugfs("fault_read_delay_ms", 300))
		tap_bail("grant: setup of the revoked case");
	fos_fill(buf, sizeof(big), 46);
	fos_fill(big, sizeof(big), 46);
	pid = fork();
	if (pid < 0)
		tap_bail("fork");
	if (!pid) {
		usleep(100 * 1000);
		_exit(fos_revoke(prov, req) ? 1 : 0);
	}
	ret = ioctl(c, FRACTOS_IOC_MEMORY_GRANT, &g) ? -errno : 0;
	waitpid(pid, &st, 0);
	fos_set_debugfs("fault_read_delay_ms", 0);
	tap_ok(ret == -EKEYREVOKED && WIFEXITED(st) && !WEXITSTATUS(st) &&
	       g.new_cid != FRACTOS_CID_INVALID,
	       "grant: the Request revoked during the copy: EKEYREVOKED, the Memory back at cid %u (ret %d)",
	       g.new_cid, ret);
	map = MAP_FAILED;
	if (g.new_cid != FRACTOS_CID_INVALID && !fos_export(c, g.new_cid, 0, &capfd))
		map = mmap(NULL, sizeof(big), PROT_READ | PROT_WRITE, MAP_SHARED,
			   capfd, 0);
	tap_ok(map != MAP_FAILED && !memcmp(map, big, sizeof(big)),
	       "grant: the granter maps its bytes again");
	if (map != MAP_FAILED)
		munmap(map, sizeof(big));
	if (capfd >= 0)
		close(capfd);
	fos_req_timeout_ns = 300000000ULL;
	tap_errno(receive(prov, &m), ETIMEDOUT,
		  "grant: the provider got nothing");
	fos_req_timeout_ns = 5000000000ULL;
	fos_close(prov, req);
	close(c);
	tap_eq(fos_live_settle("memories", mem0), mem0,
	       "grant: its copy and the granter's Memory gone with their spaces");
}

/*
 * A child of another user (nobody), RLIMIT_MEMLOCK 4 pages, receives
 * grants of 3 pages through the fabric: the copies are charged to it.
 * Its Request's cid in @c comes back on @up; then it reports each copy.
 */
static void charged_child(int c, int up, int down)
{
	struct rlimit rl = { 4 * 4096, 4 * 4096 };
	uint32_t req = FRACTOS_CID_INVALID;
	int p, capfd = -1, v, i;
	struct msg m;

	if (setgid(65534) || setuid(65534) || setrlimit(RLIMIT_MEMLOCK, &rl))
		_exit(1);
	p = fos_open();
	if (p < 0 ||
	    req_create(p, FRACTOS_CID_INVALID, 47, NULL, 0, NULL, 0, &req) ||
	    fos_export(p, req, 0, &capfd) || fos_import(c, capfd, &req))
		_exit(2);
	close(capfd);
	if (write(up, &req, sizeof(req)) != sizeof(req))
		_exit(3);
	/* The first copy, kept until told; then the second. */
	for (i = 0; i < 2; i++) {
		int got = !receive(p, &m) && m.ncaps == 1;

		if (write(up, &got, sizeof(got)) != sizeof(got) ||
		    read(down, &v, sizeof(v)) != sizeof(v))
			_exit(4);
		if (got)
			fos_close(p, m.caps[0]);
		/* Closed: the parent may count on the pages' charge back. */
		if (write(up, &got, sizeof(got)) != sizeof(got))
			_exit(5);
	}
	_exit(0);
}

/*
 * A grant through the fabric charges its copy to the user that opened the
 * receiving space, against the RLIMIT_MEMLOCK it had (nobody: 4 pages):
 * a second copy of 3 pages while the first is held is ENOMEM, the granter
 * keeps its Memory; once the first copy is closed, the same grant passes.
 */
static void grant_charged(void)
{
	struct fractos_memory_grant g = { 0 };
	long long mem0 = fos_live("memories");
	int c = fos_open(), up[2], down[2], v = 0, st = 0, ret;
	uint32_t req = FRACTOS_CID_INVALID, second;
	pid_t pid;

	if (c < 0 || pipe(up) || pipe(down))
		tap_bail("grant: charged: setup");
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		tap_bail("fork");
	if (!pid)
		charged_child(c, up[1], down[0]);
	if (read(up[0], &req, sizeof(req)) != sizeof(req))
		tap_bail("grant: charged: the child's Request");
	g.req = req;
	if (!fos_anon_mem(c, 3 * 4096, &g.cid))
		tap_bail("grant: charged: Memory");
	ret = ioctl(c, FRACTOS_IOC_MEMORY_GRANT, &g) ? -errno : 0;
	tap_ok(!ret && read(up[0], &v, sizeof(v)) == sizeof(v) && v,
	       "grant: charged: 3 pages to nobody's space (RLIMIT_MEMLOCK 4 pages) arrive (ret %d)",
	       ret);
	memset(&g, 0, sizeof(g));
	g.req = req;
	if (!fos_anon_mem(c, 3 * 4096, &g.cid))
		tap_bail("grant: charged: Memory");
	ret = ioctl(c, FRACTOS_IOC_MEMORY_GRANT, &g) ? -errno : 0;
	second = g.new_cid;
	tap_ok(ret == -ENOMEM && second != FRACTOS_CID_INVALID,
	       "grant: charged: 3 more while it holds them: ENOMEM, the Memory back at cid %u (ret %d)",
	       second, ret);
	/*
	 * The child closes its copy and says so; the copy's pages give their
	 * charge back when the Memory is freed, which the reaper may do a
	 * moment later: wait for only the refused Memory to be left.
	 */
	v = 1;
	if (write(down[1], &v, sizeof(v)) != sizeof(v) ||
	    read(up[0], &v, sizeof(v)) != sizeof(v))
		tap_bail("grant: charged: pipe");
	fos_live_settle("memories", mem0 + 1);
	memset(&g, 0, sizeof(g));
	g.req = req;
	g.cid = second;
	ret = second == FRACTOS_CID_INVALID ? -EINVAL :
	      ioctl(c, FRACTOS_IOC_MEMORY_GRANT, &g) ? -errno : 0;
	v = 0;
	tap_ok(!ret && read(up[0], &v, sizeof(v)) == sizeof(v) && v,
	       "grant: charged: the first copy closed, the same grant arrives (ret %d)",
	       ret);
	if (write(down[1], &v, sizeof(v)) != sizeof(v))
		tap_diag("grant: charged: pipe");
	waitpid(pid, &st, 0);
	close(c);
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
	tap_ok(WIFEXITED(st) && !WEXITSTATUS(st) &&
	       fos_live_settle("memories", mem0) == mem0,
	       "grant: charged: the child is done (status %#x), every copy gone",
	       st);
}

/*
 * FRACTOS_INVOKE_NOACK through the fabric: one message per invocation,
 * the call returns once it is sent, and what the owner refuses is counted
 * (totals/noack_refused) instead of returned; the target's export for the
 * call goes with the message and nothing is left behind.  Locally the
 * flag changes nothing.  (@req: the client's Request of @prov's, with
 * fabric_loopback=1.)
 */
static void noack(int cli, uint32_t req, int prov, const uint32_t *caps,
		  uint32_t id)
{
	long long sent0 = fos_total("noack_invokes");
	long long ref0 = fos_total("noack_refused");
	uint32_t rv = ~0U;
	uint64_t tx0;
	struct msg m;
	int i, ret, ok;

	tap_errno(invoke_flags(cli, req,
			       FRACTOS_INVOKE_NOACK | FRACTOS_INVOKE_WAIT,
			       NULL, 0, NULL, 0), EINVAL,
		  "noack: with FRACTOS_INVOKE_WAIT: EINVAL");
	tap_eq(invoke_flags(cli, req, FRACTOS_INVOKE_NOACK, "n", 1, caps, 2),
	       0, "noack: invoke with 2 caps returns once sent");
	ret = receive(prov, &m);
	tap_ok(!ret && m.imm_len == 4 && !memcmp(m.imm, "abcn", 4) &&
	       m.ncaps == 3 && same_cap(cli, caps[1], prov, m.caps[2]) &&
	       fos_total("noack_invokes") == sent0 + 1,
	       "noack: received \"abcn\" and the caps (ret %d)", ret);
	close_all(prov, &m);
	tap_eq(fos_live_settle("exports", 0), 0,
	       "noack: the target's export went with the message and is gone");

	/* One message each: 20 invocations, 20 INVOKEs and a few CREDITs. */
	tx0 = tx_msgs(id);
	for (ret = 0, i = 0; i < 20 && !ret; i++) {
		ret = invoke_flags(cli, req, FRACTOS_INVOKE_NOACK, "m", 1,
				   NULL, 0);
		ret = ret ?: receive(prov, &m);
		if (!ret)
			close_all(prov, &m);
	}
	tap_ok(!ret && tx_msgs(id) - tx0 >= 20 && tx_msgs(id) - tx0 <= 26,
	       "noack: 20 invocations, %llu messages (20 to 26; acked: 40)",
	       (unsigned long long)(tx_msgs(id) - tx0));

	/* A full queue refuses it: counted, not returned. */
	fos_set_param("max_queue", 1);
	ok = !invoke(cli, req, NULL, 0, NULL, 0);
	tap_eq(ok ? invoke_flags(cli, req, FRACTOS_INVOKE_NOACK, NULL, 0,
				 caps, 2) : -1, 0,
	       "noack: into a full queue, sent all the same");
	for (i = 0; i < 200 && fos_total("noack_refused") == ref0; i++)
		usleep(10000);
	tap_eq(fos_total("noack_refused") - ref0, 1,
	       "noack: the owner's refusal (EAGAIN) is counted");
	ret = receive(prov, &m);
	tap_ok(!ret && m.imm_len == 3 && m.ncaps == 1,
	       "noack: only the first, acked one was queued");
	close_all(prov, &m);
	fos_set_param("max_queue", qmax);
	tap_errno(receive(prov, &m), ETIMEDOUT, "noack: the refused one is not");

	/*
	 * (An owner's EKEYREVOKED cannot be staged with one node: a
	 * looped-back target is revoked here before it is sent.
	 * remote_2node's noack_revoked has it.)
	 */
	ok = !fos_revtree(cli, req, &rv);

	/* Locally the answer is known at once: the flag changes nothing. */
	fos_set_param("fabric_loopback", 0);
	ok = !fos_revoke(cli, rv);
	tap_errno(ok ? invoke_flags(cli, rv, FRACTOS_INVOKE_NOACK, NULL, 0,
				    NULL, 0) : -1, EKEYREVOKED,
		  "noack: a local revoked Request: EKEYREVOKED returned");
	fos_close(cli, rv);
	fos_set_param("fabric_loopback", 1);
}

int main(void)
{
	struct fractos_cap_info info;
	struct in_addr addr;
	struct msg m;
	uint32_t id, mem = 0, dim = 0, req = 0, cli_req = ~0U, der = ~0U, caps[32] = { 0 },
		 rcid = ~0U;
	char *buf, big[4096];
	int prov, cli, capfd = -1, ok, ret;
	uint64_t tx0;

	if (access("/sys/class/misc/fractos", F_OK)) {
		printf("1..0 # SKIP fractos.ko is not loaded\n");
		return 0;
	}
	if (!fos_nl_self_addr(&addr)) {
		printf("1..0 # SKIP no IPv4 address on eth0\n");
		return 0;
	}
	if (access(FOS_PARAM_DIR "fabric_loopback", F_OK)) {
		printf("1..0 # SKIP no fabric_loopback parameter\n");
		return 0;
	}
	tap_plan(104);
	id = fos_param("node_id");
	qmax = fos_param("max_queue");
	cache_ms = fos_param("copy_cache_ms");
	self_id = id;
	atexit(restore);
	/*
	 * The message counts below are those of copies without kept
	 * regions; kept() turns them on for its own tests.
	 */
	fos_set_param("copy_cache_ms", 0);

	tap_eq(fos_nl_node_add(id, addr), 0, "NODE_ADD node %u (this node)", id);
	tap_ok(fos_nl_wait_up(id, 30), "node %u is UP", id);

	prov = fos_open();
	cli = fos_open();
	if (prov < 0 || cli < 0)
		tap_bail("open");
	buf = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		tap_bail("mmap");
	fos_fill(buf, 8192, 3);

	/* Provider: a Request with an immediate and a diminished Memory. */
	ok = !fos_mem_create(prov, buf, 4096, FRACTOS_PERM_ALL, &mem) &&
	     !fos_diminish(prov, mem, FRACTOS_PERM_WRITE, 100, 200, &dim) &&
	     !req_create(prov, FRACTOS_CID_INVALID, 42, "abc", 3, &dim, 1, &req);
	tap_ok(ok, "provider: Memory, diminished view, Request(tag 42, \"abc\", view)");
	/* The client gets the Request through a capability fd. */
	ok = !fos_export(prov, req, 0, &capfd) &&
	     !fos_import(cli, capfd, &cli_req);
	close(capfd);
	tap_ok(ok, "client holds the Request");
	ok = !fos_mem_create(cli, buf + 4096, 4096, FRACTOS_PERM_ALL, &caps[0]) &&
	     !fos_diminish(cli, caps[0], FRACTOS_PERM_WRITE, 8, 16, &caps[1]);
	tap_ok(ok, "client: Memory and a read-only view [8, 24)");

	/* Locally first, as the reference. */
	tap_eq(invoke(cli, cli_req, "xyz", 3, caps, 2), 0, "local invoke");
	ret = receive(prov, &m);
	tap_ok(!ret && m.tag == 42 && m.imm_len == 6 && !memcmp(m.imm, "abcxyz", 6) &&
	       m.ncaps == 3, "local: tag 42, \"abcxyz\", 3 caps");
	close_all(prov, &m);

	/* Now through the fabric. */
	tap_eq(fos_set_param("fabric_loopback", 1), 0, "fabric_loopback=1");
	tx0 = tx_msgs(id);
	tap_eq(invoke(cli, cli_req, "xyz", 3, caps, 2), 0, "invoke through the fabric");
	tap_ok(tx_msgs(id) >= tx0 + 2, "it crossed the fabric (%llu messages sent)",
	       (unsigned long long)(tx_msgs(id) - tx0));
	tap_eq(fos_live("exports"), 0,
	       "no export left: the receiver took the descriptions, the target was named for the call only");
	ret = receive(prov, &m);
	tap_ok(!ret && m.type == FRACTOS_MSG_REQUEST && m.tag == 42 &&
	       m.imm_len == 6 && !memcmp(m.imm, "abcxyz", 6) && m.ncaps == 3,
	       "received: tag 42, \"abcxyz\", 3 caps (ret %d)", ret);
	tap_ok(same_cap(prov, dim, prov, m.caps[0]), "cap 0 is the Request's own view");
	tap_ok(same_cap(cli, caps[0], prov, m.caps[1]), "cap 1: the same object, whole view, RW");
	tap_ok(same_cap(cli, caps[1], prov, m.caps[2]),
	       "cap 2: the same object, view [8, 24), read-only (diminished view kept)");
	{
		uint32_t tmp;
		uint64_t copied = 0;

		/* The received view is the real local object: copy works. */
		ret = fos_mem_create(prov, buf + 2048, 16, FRACTOS_PERM_ALL, &tmp);
		ret = ret ?: fos_copy(prov, m.caps[2], 0, tmp, 0, 0, &copied);
		tap_ok(!ret && copied == 16 && !memcmp(buf + 2048, buf + 4096 + 8, 16),
		       "memory_copy from the received view (local object, full speed)");
		tap_errno(fos_copy(prov, tmp, 0, m.caps[2], 0, 1, NULL), EACCES,
			  "the received view is read-only");
		fos_revoke(prov, tmp);
		fos_close(prov, tmp);
	}
	close_all(prov, &m);

	/* A revoked argument arrives revoked. */
	{
		uint32_t rv;

		ok = !fos_revtree(cli, caps[0], &rv) && !fos_revoke(cli, rv);
		tap_eq(ok ? invoke(cli, cli_req, NULL, 0, &rv, 1) : -1, 0,
		       "invoke with a revoked argument");
		ret = receive(prov, &m);
		tap_ok(!ret && m.ncaps == 2 && !fos_info(prov, m.caps[1], &info) &&
		       (info.info_flags & FRACTOS_INFO_REVOKED),
		       "it arrives revoked");
		close_all(prov, &m);
		fos_close(cli, rv);
	}

	/* A derived Request: its arguments follow the base's. */
	ok = !req_create(cli, cli_req, 0, "DER", 3, NULL, 0, &der);
	tap_ok(ok, "client derives a Request (\"DER\")");
	tap_eq(invoke(cli, der, "!", 1, NULL, 0), 0, "invoke the derived Request");
	ret = receive(prov, &m);
	tap_ok(!ret && m.imm_len == 7 && !memcmp(m.imm, "abcDER!", 7) && m.ncaps == 1,
	       "received \"abcDER!\" and the base's cap");
	close_all(prov, &m);

	/* io_uring goes the same way (retried from a worker). */
	{
		struct fractos_request_invoke a = {
			.cid = cli_req, .imms = (uintptr_t)"U", .imm_len = 1,
		};
		struct fractos_uring_cmd *pdu;
		struct io_uring_sqe *sqe;
		struct io_uring_cqe *cqe;
		struct io_uring ring;
		int res = -1;

		if (!io_uring_queue_init(4, &ring, 0)) {
			sqe = io_uring_get_sqe(&ring);
			io_uring_prep_rw(IORING_OP_URING_CMD, sqe, cli, NULL, 0, 0);
			sqe->cmd_op = FRACTOS_IOC_REQUEST_INVOKE;
			pdu = (struct fractos_uring_cmd *)sqe->cmd;
			pdu->arg = (uintptr_t)&a;
			pdu->reserved = 0;
			io_uring_submit(&ring);
			if (!io_uring_wait_cqe(&ring, &cqe)) {
				res = cqe->res;
				io_uring_cqe_seen(&ring, cqe);
			}
			io_uring_queue_exit(&ring);
		}
		tap_eq(res, 0, "io_uring invoke through the fabric");
		ret = receive(prov, &m);
		tap_ok(!ret && m.imm_len == 4 && !memcmp(m.imm, "abcU", 4),
		       "received \"abcU\"");
		close_all(prov, &m);
	}

	noack(cli, cli_req, prov, caps, id);

	/* Errors come back from the receiving side. */
	fos_set_param("max_queue", 1);
	tap_eq(invoke(cli, cli_req, NULL, 0, NULL, 0), 0, "queue: one message");
	tap_errno(invoke(cli, cli_req, NULL, 0, caps, 2), EAGAIN,
		  "full queue on the receiving side: EAGAIN");
	ret = receive(prov, &m);
	close_all(prov, &m);
	fos_set_param("max_queue", qmax);
	memset(big, 'b', sizeof(big));
	{
		uint32_t many[31];
		int j;

		for (j = 0; j < 31; j++)
			many[j] = caps[j & 1];
		tap_eq(invoke(cli, cli_req, big, 4093, many, 31), 0,
		       "the largest invocation (4096 immediate bytes, 32 caps) crosses the fabric");
		ret = receive(prov, &m);
		tap_ok(!ret && m.imm_len == 4096 && !memcmp(m.imm, "abc", 3) &&
		       !memcmp(m.imm + 3, big, 4093) && m.ncaps == 32 &&
		       same_cap(cli, caps[0], prov, m.caps[31]) &&
		       same_cap(cli, caps[1], prov, m.caps[2]),
		       "received whole: 4096 bytes, 32 caps (ret %d)", ret);
		close_all(prov, &m);
	}
	tap_errno(invoke(cli, cli_req, big, 4094, NULL, 0), E2BIG,
		  "past FRACTOS_REQ_MAX_IMM with the Request's own: E2BIG");
	tap_eq(fos_revoke(prov, req), 0, "provider revokes the Request");
	tap_errno(invoke(cli, cli_req, NULL, 0, caps, 2), EKEYREVOKED,
		  "invoke a revoked Request: EKEYREVOKED");
	tap_errno(invoke(cli, der, NULL, 0, NULL, 0), EKEYREVOKED,
		  "invoke the derived one: EKEYREVOKED");
	tap_errno(receive(prov, &m), ETIMEDOUT, "nothing was delivered");
	tap_eq(fos_live("exports"), 0,
	       "refused invocations leave no export behind (%lld)",
	       fos_live("exports"));

	/* A Request whose provider is gone. */
	{
		int p2 = fos_open();
		uint32_t r2, c2 = ~0U;

		ok = p2 >= 0 && !req_create(p2, FRACTOS_CID_INVALID, 7, NULL, 0,
					    NULL, 0, &r2) &&
		     !fos_export(p2, r2, 0, &capfd) && !fos_import(cli, capfd, &c2);
		close(capfd);
		close(p2);
		tap_ok(ok, "a second provider hands out a Request and exits");
		tap_errno(invoke(cli, c2, NULL, 0, NULL, 0), EKEYREVOKED,
			  "invoke it: EKEYREVOKED");
		fos_close(cli, c2);
	}

	/* Names: another node that is not configured. */
	{
		struct fractos_name a = {
			.flags = FRACTOS_NAME_NODE, .name = (uintptr_t)"x",
			.name_len = 1, .node = id + 1,
		};

		tap_errno(ioctl(cli, FRACTOS_IOC_NAME_LOOKUP, &a), EHOSTUNREACH,
			  "NAME_LOOKUP on an unknown node: EHOSTUNREACH");
	}

	/*
	 * memory_copy with fabric_loopback: a self-grant and RDMA READs over
	 * the connection to ourselves, straight between the pinned pages.
	 */
	{
		size_t sz = 3 << 20;
		char *sb = mmap(NULL, sz, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		char *db = mmap(NULL, sz, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		uint32_t sm = ~0U, dm = ~0U, ro = ~0U, rv = ~0U;
		uint64_t copied = 0, big_len = (5 << 19) + 13;
		int i;

		if (sb == MAP_FAILED || db == MAP_FAILED)
			tap_bail("mmap");
		fos_fill(sb, sz, 11);
		memset(db, 0, sz);
		ok = !fos_mem_create(cli, sb, sz, FRACTOS_PERM_READ, &sm) &&
		     !fos_mem_create(cli, db, sz, FRACTOS_PERM_ALL, &dm) &&
		     !fos_diminish(cli, dm, FRACTOS_PERM_WRITE, 0, 4096, &ro);
		long long in0 = fos_total("inline_copies");

		tx0 = tx_msgs(id);
		ret = ok ? fos_copy(cli, sm, 5, dm, 7, 1, &copied) : -1;
		tap_ok(!ret && copied == 1 && db[7] == sb[5] && !db[6] && !db[8] &&
		       fos_total("inline_copies") == in0 + 1,
		       "copy 1 byte through the fabric, inline (ret %d, %llu messages)",
		       ret, (unsigned long long)(tx_msgs(id) - tx0));
		/*
		 * Inline: GRANT and its reply, 2 messages a copy; by RDMA
		 * READ 3 (RELEASE too).  Credits may add a few.
		 */
		tx0 = tx_msgs(id);
		for (ret = 0, i = 0; i < 20 && !ret; i++)
			ret = fos_copy(cli, sm, 3 * i, dm, 8 + i, 1, &copied);
		tap_ok(!ret && tx_msgs(id) - tx0 >= 40 && tx_msgs(id) - tx0 <= 48 &&
		       db[8 + 19] == sb[57],
		       "20 copies of 1 byte: %llu messages (40 to 48)",
		       (unsigned long long)(tx_msgs(id) - tx0));
		fos_set_param("copy_inline_max", 0);
		tx0 = tx_msgs(id);
		in0 = fos_total("inline_copies");
		for (ret = 0, i = 0; i < 20 && !ret; i++)
			ret = fos_copy(cli, sm, 3 * i + 1, dm, 8 + i, 1, &copied);
		tap_ok(!ret && tx_msgs(id) - tx0 >= 60 && db[8 + 19] == sb[58] &&
		       fos_total("inline_copies") == in0,
		       "copy_inline_max=0: by RDMA READ, %llu messages (60 or more)",
		       (unsigned long long)(tx_msgs(id) - tx0));
		fos_set_param("copy_inline_max", 4096);
		in0 = fos_total("inline_copies");
		ret = fos_copy(cli, sm, 4096, dm, 8192, 4096, &copied);
		tap_ok(!ret && copied == 4096 && !memcmp(db + 8192, sb + 4096, 4096) &&
		       fos_total("inline_copies") == in0 + 1,
		       "copy 4 KiB, page aligned, inline (ret %d)", ret);
		ret = fos_copy(cli, sm, 4096, dm, 8192 + 1, 4097, &copied);
		tap_ok(!ret && copied == 4097 && !memcmp(db + 8193, sb + 4096, 4097) &&
		       fos_total("inline_copies") == in0 + 1,
		       "copy 4 KiB + 1: by RDMA READ (ret %d)", ret);
		ret = fos_copy(cli, sm, 123, dm, 4095, (1 << 20) + 777, &copied);
		tap_ok(!ret && copied == (1 << 20) + 777 &&
		       !memcmp(db + 4095, sb + 123, (1 << 20) + 777),
		       "copy 1 MiB + 777 at odd offsets (ret %d)", ret);
		ret = fos_copy(cli, sm, 1, dm, 3, big_len, &copied);
		tap_ok(!ret && copied == big_len && !memcmp(db + 3, sb + 1, big_len),
		       "copy 2.5 MiB: several grants, pipelined READs (ret %d)", ret);
		tap_errno(fos_copy(cli, sm, 0, ro, 0, 16, NULL), EACCES,
			  "read-only destination: EACCES");
		tap_errno(fos_copy(cli, dm, 0, dm, 100, 200, NULL), EINVAL,
			  "overlapping ranges of one memory: EINVAL");
		ok = !fos_revtree(cli, sm, &rv) && !fos_revoke(cli, rv);
		tap_errno(ok ? fos_copy(cli, rv, 0, dm, 0, 16, NULL) : -1, EKEYREVOKED,
			  "revoked source: EKEYREVOKED");
		for (ret = 0; ret < 200 && fos_live("grants"); ret++)
			usleep(10000);
		tap_eq(fos_live("grants"), 0, "every grant was released");
		revoke_mid_copy(cli, sm, dm, id);
		revoke_races(cli, sm, dm);
		kept(cli, sb, db, sm, dm, id);
		fos_close(cli, rv);
		fos_close(cli, ro);
		fos_revoke(cli, sm);
		fos_revoke(cli, dm);
		fos_close(cli, sm);
		fos_close(cli, dm);
		munmap(sb, sz);
		munmap(db, sz);
	}

	contact(prov);
	steal(prov);
	grant_across(prov);
	grant_charged();
	busy_poll(prov, cli);
	linger(prov, cli, id, addr);

	/* Without the peer, loopback invocations cannot go anywhere. */
	tap_eq(fos_nl_node_del(id), 0, "NODE_DEL node %u", id);
	ok = !req_create(prov, FRACTOS_CID_INVALID, 9, NULL, 0, NULL, 0, &rcid);
	tap_errno(ok ? invoke(prov, rcid, NULL, 0, NULL, 0) : -1, EHOSTUNREACH,
		  "fabric_loopback without a peer: EHOSTUNREACH");
	for (ret = 0; ret < 200 && fos_live("exports"); ret++)
		usleep(10000);
	tap_eq(fos_live("exports"), 0, "the peer's exports are dropped");
	fos_set_param("fabric_loopback", 0);
	tap_eq(invoke(prov, rcid, NULL, 0, NULL, 0), 0, "fabric_loopback=0: local again");

	close(cli);
	close(prov);
	munmap(buf, 8192);
	{
		struct fos_counts want = {}, now;

		ok = fos_counts_wait(&want, &now, 2000);
		for (ret = 0; ret < 200 && fos_live("peers"); ret++)
			usleep(10000);
		if (!ok)
			fos_counts_print("left", &now);
		tap_ok(ok && fos_live("exports") == 0 && fos_live("proxies") == 0 &&
		       fos_live("messages") == 0 && fos_live("requests") == 0 &&
		       fos_live("grants") == 0 && fos_live("peers") == 0,
		       "nothing left: objects, caps, exports, proxies, messages, grants, peers");
	}
	return tap_finish();
}
