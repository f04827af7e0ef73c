// SPDX-License-Identifier: GPL-2.0
/*
 * derive: FRACTOS_CREATE_AT_OWNER, derivation at the Request's owner
 * (kernel/remote/derive.c), in one guest.  The node is its own peer and
 * fabric_loopback=1 sends the derivation of a local Request through the
 * fabric to itself, as another node's would go: DERIVE, answered by
 * LOOKUP_REPLY with the owner's new Request.  Checked: bad input, the flag
 * on a local Request without the loopback (a plain derivation, no
 * message), the arguments (the base's, then the derivation's, then the
 * invocation's), derivations of derivations, revocation with the owner's
 * Request, the per-peer bound (fabric_peer_derived, ENOSPC), a space
 * with no cid left (EMFILE before any message, its argument's
 * monitor_delegate silent), a cid closed while the derivation that
 * reserved it waits (the reservation stays: no other capability is
 * overwritten) and that nothing is left.  Across nodes:
 * tests/multinode/chain3.sh.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include "tap.h"
#include "fos_util.h"
#include "fos_nl.h"
#include "fos_req.h"

static uint32_t self_id;
static long long peer_derived = -1, max_caps = -1;

static void restore(void)
{
	fos_set_param("fabric_loopback", 0);
	if (max_caps > 0)
		fos_set_param("max_caps", max_caps);
	if (peer_derived >= 0)
		fos_set_param("fabric_peer_derived", peer_derived);
	fos_nl_node_del(self_id);
}

static uint64_t tx_msgs(uint32_t id)
{
	struct fos_nl_node n;

	return fos_nl_node_get(id, &n) ? 0 : n.stats[FRACTOS_STAT_TX_MSGS];
}

static int derive_at(int fd, uint32_t base, uint32_t flags, const char *imm,
		     const uint32_t *caps, uint32_t ncaps, uint32_t *cid)
{
	struct fractos_request_create a = {
		.base = base, .flags = flags, .imms = (uintptr_t)imm,
		.imm_len = imm ? strlen(imm) : 0, .caps = (uintptr_t)caps,
		.ncaps = ncaps,
	};
	int ret = ioctl(fd, FRACTOS_IOC_REQUEST_CREATE, &a);

	if (!ret)
		*cid = a.cid;
	return ret;
}

/* Invoke @cid with @imm; the provider must get @want and @ncaps caps. */
static int delivers(int cli, int prov, uint32_t cid, const char *imm,
		    const char *want, uint32_t ncaps)
{
	struct msg m;
	int ok;

	if (invoke(cli, cid, imm, strlen(imm), NULL, 0) || receive(prov, &m))
		return 0;
	ok = m.tag == 7 && m.imm_len == strlen(want) &&
	     !memcmp(m.imm, want, m.imm_len) && m.ncaps == ncaps;
	if (!ok)
		tap_diag("got tag %llu, \"%.*s\", %u caps",
			 (unsigned long long)m.tag, (int)m.imm_len, m.imm,
			 m.ncaps);
	close_all(prov, &m);
	return ok;
}

/*
 * No cid left in the caller's space (max_caps): EMFILE before anything is
 * sent, so that the owner never derives a Request the caller could not
 * hold, and the argument's delegation, which reached nobody, does not
 * fire its monitor_delegate.
 */
static void no_cid(int prov)
{
	struct fractos_monitor mon = { .cookie = 0xd5 };
	struct fractos_request_receive rr = {
		.flags = FRACTOS_RECV_NONBLOCK,
	};
	uint32_t preq = ~0U, req = ~0U, mem = ~0U, d = ~0U;
	long long reqs;
	uint64_t tx0;
	int sp, ret, err, ok;

	sp = fos_open();
	ok = sp >= 0 && !client_request(prov, sp, 9, "q", &preq, &req) &&
	     fos_anon_mem(sp, 4096, &mem);
	mon.cid = mem;
	ok = ok && !ioctl(sp, FRACTOS_IOC_MONITOR_DELEGATE, &mon);
	ok = ok && !fos_set_param("max_caps", fos_ncaps(sp));
	tap_ok(ok, "a space holding the Request and a watched Memory, max_caps=%ld",
	       sp >= 0 ? fos_ncaps(sp) : -1L);
	reqs = fos_live("requests");
	tx0 = tx_msgs(self_id);
	ret = derive_at(sp, req, FRACTOS_CREATE_AT_OWNER, "x", &mem, 1, &d);
	err = errno;
	tap_ok(ret == -1 && err == EMFILE && tx_msgs(self_id) == tx0,
	       "no cid left: EMFILE, nothing sent (%s, %llu messages)",
	       strerror(err), (unsigned long long)(tx_msgs(self_id) - tx0));
	fos_set_param("max_caps", max_caps);
	usleep(200 * 1000);
	ret = ioctl(sp, FRACTOS_IOC_REQUEST_RECEIVE, &rr);
	err = errno;
	tap_ok(ret == -1 && err == EAGAIN && fos_live("requests") == reqs,
	       "its argument's monitor_delegate did not fire, no Request made (%s)",
	       ret ? strerror(err) : "a message");
	if (sp >= 0)
		close(sp);
	fos_close(prov, preq);
}

#define RACE_MEMS	64

/*
 * The cid a derivation at the owner reserved, closed by another thread
 * of the space while the DERIVE waits.  The closer (race_closer) closes
 * the cids from @k on that it does not hold (the derivation takes one of
 * them) and makes a Memory each time, keeping them: if a close freed the
 * reservation, one of its Memories would take that cid and the owner's
 * answer would be stored over it.
 */
struct race {
	int sp;
	uint32_t k;
	atomic_int done;
	uint32_t mems[RACE_MEMS];
	int n;
	unsigned char *buf;
};

static int race_owns(const struct race *r, uint32_t cid)
{
	int i;

	for (i = 0; i < r->n; i++)
		if (r->mems[i] == cid)
			return 1;
	return 0;
}

static void *race_closer(void *arg)
{
	struct race *r = arg;

	while (!atomic_load(&r->done) && r->n < RACE_MEMS) {
		uint32_t c, m;

		/* wherever the derivation's cid is: the next few */
		for (c = r->k; c < r->k + 4; c++)
			if (!race_owns(r, c))
				fos_close(r->sp, c);
		if (fos_mem_create(r->sp, r->buf, 4096, FRACTOS_PERM_ALL, &m))
			break;
		r->mems[r->n++] = m;
	}
	return NULL;
}

static void close_race(int prov)
{
	struct fractos_cap_info info;
	uint32_t preq = ~0U, req = ~0U, d;
	int round, i, bad = 0, ok, rounds = 0;
	struct race r = { .sp = -1 };
	long ncaps_bad = 0;

	r.sp = fos_open();
	r.buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ok = r.sp >= 0 && r.buf != MAP_FAILED &&
	     !client_request(prov, r.sp, 9, "q", &preq, &req);
	tap_ok(ok, "a space with another node's Request (cid %u)", req);
	for (round = 0; ok && round < 20; round++) {
		pthread_t t;
		int held = 0;

		r.k = (uint32_t)fos_ncaps(r.sp);	/* cids 0.. are taken */
		r.n = 0;
		atomic_store(&r.done, 0);
		if (pthread_create(&t, NULL, race_closer, &r))
			break;
		d = ~0U;
		if (derive_at(r.sp, req, FRACTOS_CREATE_AT_OWNER, "r", NULL, 0,
			      &d))
			d = ~0U;
		atomic_store(&r.done, 1);
		pthread_join(t, NULL);
		rounds++;
		for (i = 0; i < r.n; i++) {
			if (fos_info(r.sp, r.mems[i], &info) ||
			    info.type != FRACTOS_OBJ_MEMORY) {
				tap_diag("round %d: Memory at cid %u is now %s",
					 round, r.mems[i],
					 r.mems[i] == d ? "the derived Request" :
							  "something else");
				bad++;
			}
		}
		held = d != ~0U && !fos_info(r.sp, d, &info) &&
		       info.type == FRACTOS_OBJ_REQUEST;
		if (fos_ncaps(r.sp) != 1 + r.n + held)
			ncaps_bad++;
		for (i = 0; i < r.n; i++)
			fos_close(r.sp, r.mems[i]);
		if (held)
			fos_close(r.sp, d);
	}
	tap_ok(rounds == 20 && !bad && !ncaps_bad,
	       "a reserved cid closed meanwhile: no capability overwritten in %d rounds (%d overwritten, %ld counts off)",
	       rounds, bad, ncaps_bad);
	if (r.sp >= 0)
		close(r.sp);
	if (r.buf != MAP_FAILED)
		munmap(r.buf, 4096);
	fos_close(prov, preq);
}

/* fabric_peer_derived: the bound, and the count given back on free. */
static void bound(int prov, int cli, uint32_t cli_req)
{
	uint32_t d[3] = { ~0U, ~0U, ~0U };
	int ret, err, i;

	/* d1, d2 and d3 of main() are alive: room for two more. */
	tap_eq(fos_set_param("fabric_peer_derived", 5), 0,
	       "fabric_peer_derived=5, three Requests derived for us alive");
	ret = derive_at(cli, cli_req, FRACTOS_CREATE_AT_OWNER, "1", NULL, 0,
			&d[0]) ||
	      derive_at(cli, cli_req, FRACTOS_CREATE_AT_OWNER, "2", NULL, 0,
			&d[1]);
	tap_eq(ret, 0, "two derivations at the owner");
	ret = derive_at(cli, cli_req, FRACTOS_CREATE_AT_OWNER, "3", NULL, 0,
			&d[2]);
	err = errno;
	tap_ok(ret == -1 && err == ENOSPC,
	       "the third: ENOSPC (ret %d, %s)", ret, strerror(err));
	tap_ok(delivers(cli, prov, d[1], "", "ab2", 1),
	       "those made still deliver");
	/* Its export goes a grace period after its last description. */
	fos_close(cli, d[0]);
	for (i = 0; i < 200; i++) {
		ret = derive_at(cli, cli_req, FRACTOS_CREATE_AT_OWNER, "4",
				NULL, 0, &d[2]);
		if (!ret || errno != ENOSPC)
			break;
		usleep(10 * 1000);
	}
	tap_eq(ret, 0, "one closed (its Request freed): a derivation again");
	fos_close(cli, d[1]);
	fos_close(cli, d[2]);
	fos_set_param("fabric_peer_derived", peer_derived);
}

int main(void)
{
	uint32_t mem = 0, view = 0, req = 0, cli_req = ~0U, cmem = 0, d0 = ~0U,
		 d1 = ~0U, d2 = ~0U, d3 = ~0U;
	long long reqs0;
	struct fractos_cap_info info;
	struct in_addr addr;
	char *buf, big[4097];
	int prov, cli, ret, err, ok;
	uint64_t tx0;

	if (access("/sys/class/misc/fractos", F_OK)) {
		printf("1..0 # SKIP fractos.ko is not loaded\n");
		return 0;
	}
	if (!fos_nl_self_addr(&addr)) {
		printf("1..0 # SKIP no IPv4 address on eth0\n");
		return 0;
	}
	tap_plan(31);
	self_id = fos_param("node_id");
	peer_derived = fos_param("fabric_peer_derived");
	max_caps = fos_param("max_caps");
	atexit(restore);
	tap_ok(peer_derived == 4096, "fabric_peer_derived is 4096 by default");

	prov = fos_open();
	cli = fos_open();
	buf = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (prov < 0 || cli < 0 || buf == MAP_FAILED)
		tap_bail("open, mmap");
	/* The provider's Request (tag 7, "ab", a read-only view), held by cli. */
	ok = !fos_mem_create(prov, buf, 4096, FRACTOS_PERM_ALL, &mem) &&
	     !fos_diminish(prov, mem, FRACTOS_PERM_WRITE, 0, 64, &view) &&
	     !req_create(prov, FRACTOS_CID_INVALID, 7, "ab", 2, &view, 1, &req);
	if (ok) {
		int capfd = -1;

		ok = !fos_export(prov, req, 0, &capfd) &&
		     !fos_import(cli, capfd, &cli_req);
		if (capfd >= 0)
			close(capfd);
	}
	ok = ok && !fos_mem_create(cli, buf + 4096, 4096, FRACTOS_PERM_ALL,
				   &cmem);
	tap_ok(ok, "provider: Request(tag 7, \"ab\", a view); client holds it, and Memory");
	reqs0 = fos_live("requests");

	/* Bad input. */
	ret = derive_at(cli, cli_req, 0x2, "x", NULL, 0, &d0);
	err = errno;
	tap_ok(ret == -1 && err == EINVAL, "unknown flag: EINVAL (%s)",
	       strerror(err));
	ret = derive_at(cli, FRACTOS_CID_INVALID, FRACTOS_CREATE_AT_OWNER,
			"x", NULL, 0, &d0);
	err = errno;
	tap_ok(ret == -1 && err == EINVAL, "AT_OWNER without a base: EINVAL (%s)",
	       strerror(err));
	ret = derive_at(cli, cmem, FRACTOS_CREATE_AT_OWNER, "x", NULL, 0, &d0);
	err = errno;
	tap_ok(ret == -1 && err == EOPNOTSUPP,
	       "AT_OWNER from a Memory: EOPNOTSUPP (%s)", strerror(err));
	memset(big, 'b', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	ret = derive_at(cli, cli_req, FRACTOS_CREATE_AT_OWNER, big + 4096 - 4095,
			NULL, 0, &d0);
	err = errno;
	tap_ok(ret == -1 && err == E2BIG,
	       "4095 bytes more than the base's 2: E2BIG (%s)", strerror(err));

	/* This node's Request, no loopback: derived here, nothing sent. */
	tap_eq(fos_nl_node_add(self_id, addr), 0, "NODE_ADD node %u (this node)",
	       self_id);
	tap_ok(fos_nl_wait_up(self_id, 30), "node %u is UP", self_id);
	tx0 = tx_msgs(self_id);
	ret = derive_at(cli, cli_req, FRACTOS_CREATE_AT_OWNER, "cd", &cmem, 1,
			&d0);
	tap_ok(!ret && tx_msgs(self_id) == tx0 &&
	       delivers(cli, prov, d0, "ef", "abcdef", 2),
	       "without fabric_loopback: derived here, no message, delivers \"abcdef\" and 2 caps (ret %d)",
	       ret);

	/* Through the fabric, as another node's derivation. */
	tap_eq(fos_set_param("fabric_loopback", 1), 0, "fabric_loopback=1");
	tx0 = tx_msgs(self_id);
	ret = derive_at(cli, cli_req, FRACTOS_CREATE_AT_OWNER, "cd", &cmem, 1,
			&d1);
	tap_ok(!ret && tx_msgs(self_id) >= tx0 + 2,
	       "derived at the owner: %llu messages (DERIVE, LOOKUP_REPLY) (ret %d)",
	       (unsigned long long)(tx_msgs(self_id) - tx0), ret);
	ok = !ret && !fos_info(cli, d1, &info);
	tap_ok(ok && info.type == FRACTOS_OBJ_REQUEST &&
	       !(info.info_flags & FRACTOS_INFO_REMOTE) &&
	       info.oid.node == self_id,
	       "the answer resolved to the owner's own Request (node %u)",
	       ok ? info.oid.node : 0);
	tap_ok(fos_live("requests") == reqs0 + 2,
	       "one Request more at the owner (%lld, and d0)",
	       fos_live("requests") - reqs0);
	tap_ok(delivers(cli, prov, d1, "ef", "abcdef", 2),
	       "invoked: \"abcdef\" and 2 caps, the base's arguments first");
	ret = derive_at(cli, d1, FRACTOS_CREATE_AT_OWNER, "gh", NULL, 0, &d2);
	tap_ok(!ret && delivers(cli, prov, d2, "ij", "abcdghij", 2),
	       "derived at the owner from it: \"abcdghij\" (ret %d)", ret);
	/* A derivation of a Request derived here, at the owner. */
	ret = derive_at(cli, d0, FRACTOS_CREATE_AT_OWNER, "x", NULL, 0, &d3);
	tap_ok(!ret && delivers(cli, prov, d3, "y", "abcdxy", 2),
	       "from one derived here: its arguments go along, \"abcdxy\" (ret %d)",
	       ret);
	tap_eq(fos_live("exports"), 0,
	       "no export left (the answers came back to their owner)");

	no_cid(prov);
	bound(prov, cli, cli_req);
	close_race(prov);

	/* Revoked with the owner's Request. */
	tap_eq(fos_revoke(prov, req), 0, "the provider revokes its Request");
	ret = invoke(cli, d2, "z", 1, NULL, 0);
	err = errno;
	tap_ok(ret == -1 && err == EKEYREVOKED,
	       "a Request derived at the owner is revoked with it (%s)",
	       strerror(err));
	ret = derive_at(cli, cli_req, FRACTOS_CREATE_AT_OWNER, "x", NULL, 0,
			&d0);
	err = errno;
	tap_ok(ret == -1 && err == EKEYREVOKED,
	       "deriving from it now: EKEYREVOKED (%s)", strerror(err));

	close(cli);
	close(prov);
	tap_ok(!fos_live_settle("requests", 0) &&
	       !fos_live_settle("exports", 0) &&
	       !fos_live_settle("objects", 0),
	       "spaces closed: no Request, export or object left");
	return tap_finish();
}
