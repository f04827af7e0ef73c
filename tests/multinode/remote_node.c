// SPDX-License-Identifier: GPL-2.0
/*
 * remote_node: one node's part of remote_2node.sh (vm/run --nodes 2 or 3).
 * The role comes from FRACTOS_NODE; the peers from FRACTOS_ADDRS.
 *
 * Node 1 (provider) publishes Request R("hello", [Mdim]) as "svc".
 * Node 2 (client) looks it up on node 1 (FRACTOS_NAME_NODE) and invokes
 * it with [Ndim, K]; node 1 sees its own argument first, then proxies
 * with the views node 2 sent, and answers through K with [Mdim2].  Node 2
 * sends Mdim2 back (node 1 must get its real local object) with K3, in
 * an invocation that asks for no ACK (FRACTOS_INVOKE_NOACK), then
 * revokes N (node 1's proxy and monitor must see it) while node 1 revokes
 * K through its proxy (node 2's monitor must see it).  Node 1's answer
 * also carries G, a Memory watched by monitor_delegate: node 2 closes its
 * capability, its kernel tells node 1's (DROP), and the monitor fires on
 * node 1 without any revocation.  With 3 nodes node 2
 * also forwards node 1's Mdim2 and R to node 3, which must see node 1's
 * names and reach node 1 directly.  Last, node 1 kills node 2 and its
 * proxy K3 must be revoked (monitor, EKEYREVOKED), and nothing may be left.
 * memory_copy crosses nodes with one-sided RDMA: node 1 copies from node
 * 2's Ndim, node 2 from node 1's Mdim2, and with 3 nodes node 1 copies node
 * 2's Ndim into node 3's Memory "n3mem" (a third-party copy: node 3 pulls
 * from node 2) and 40 bytes of its own Memory there (pushed with the
 * COPY), node 3 checks the bytes, and once node 2 revoked N the copy
 * fails.
 * Before its report, node 2 lets a child name R as a contact, mark a
 * Memory of its own stealable for it and die by SIGKILL: node 1 gets the
 * note with a proxy of that Memory (node 2's, owned by no space there)
 * and reads the child's bytes through it.  Then node 2 grants a Memory
 * of its own to R (MEMORY_GRANT): node 1 gets a copy in its own memory
 * (a local Memory its space owns, totals/grant_copies), maps it and reads
 * the bytes; node 2's own mapping of them is gone, and so, once node 1
 * dropped its capability to the source, is the source.
 * With 3 nodes node 2's report carries D, a Request it derived from node
 * 3's "n3": node 1 invokes D without an ACK, which node 2 forwards
 * without one, then grants a Memory to D, node 2 copies it and forwards the
 * invocation with its copy handed over in turn, and node 3 receives a copy
 * in its own memory while node 1's source is freed.
 * Other nodes report their failure count to node 1 in an invocation.
 */
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "../selftests/tap.h"
#include "../selftests/fos_util.h"
#include "../selftests/fos_nl.h"
#include "../selftests/fos_req.h"
#include "node.h"

#define TAG_R	0x1234
#define TAG_K	0x77
#define TAG_K3	0x78
/* What node 2 grants to R: three pages, the stolen Memory one. */
#define GRANT_LEN	(3 * 4096)
/* What node 1 grants to node 2's D, which node 2 forwards to node 3. */
#define GRANT3_LEN	(5 * 4096)

/* A capability to another node's object with this view. */
static int is_remote(int fd, uint32_t cid, uint32_t node, uint32_t type,
		     uint64_t off, uint64_t len, uint32_t perms)
{
	struct fractos_cap_info i;

	if (fos_info(fd, cid, &i))
		return 0;
	if (!(i.info_flags & FRACTOS_INFO_REMOTE) || i.oid.node != node ||
	    i.type != type || i.offset != off || i.len != len ||
	    i.perms != perms) {
		tap_diag("cid %u: flags %#x node %u type %u view %llu+%llu perms %u",
			 cid, i.info_flags, i.oid.node, i.type,
			 (unsigned long long)i.offset,
			 (unsigned long long)i.len, i.perms);
		return 0;
	}
	return 1;
}

/* Wait for the monitor event @cookie. */
static int event(int fd, uint64_t cookie, uint64_t secs)
{
	struct msg m;

	fos_req_timeout_ns = secs * 1000000000ULL;
	if (receive(fd, &m))
		return 0;
	return m.type == FRACTOS_MSG_MONITOR_RECEIVE && m.tag == cookie;
}

/*
 * Wait for @n monitor events in any order; seen[i] is set when one of
 * type @types[i] with cookie @cookies[i] arrived.  Return: how many
 * unexpected messages came instead.
 */
static int events(int fd, unsigned int n, const uint32_t *types,
		  const uint64_t *cookies, int *seen, uint64_t secs)
{
	unsigned int got, i;
	int bad = 0;
	struct msg m;

	for (got = 0; got < n; got++) {
		fos_req_timeout_ns = secs * 1000000000ULL;
		if (receive(fd, &m))
			return bad + (int)(n - got);
		for (i = 0; i < n; i++)
			if (!seen[i] && m.type == types[i] && m.tag == cookies[i])
				break;
		if (i < n)
			seen[i] = 1;
		else
			bad++;
		close_all(fd, &m);
	}
	return bad;
}

/* The pinned pages, once @n fewer than @from (up to 3 s), or as they are. */
static long long pinned_fell(long long from, long long n)
{
	long long now = fos_live("pinned_pages");
	int i;

	for (i = 0; i < 300 && now > from - n; i++) {
		usleep(10000);
		now = fos_live("pinned_pages");
	}
	return now;
}

/*
 * Grant a Memory of ours to @d, node 2's Request derived from node 3's:
 * node 2 copies it and hands its copy over to node 3 in turn.
 */
/*
 * Kept regions, written (copy_cache_ms, "Kept regions" in
 * kernel/remote/kept.c): 20 copies of 100 bytes of ours (@local, at
 * @buf + 4096) into node 3's Memory @n3mem, past what node 3 checks: the
 * second asks node 3 to keep a region we write, the rest are RDMA WRITEs
 * with no message; the last is read back.
 */
static void kept_writes(int fd, char *buf, uint32_t local,
			uint32_t n3mem)
{
	long long kc0 = fos_total("kept_copies"), kc;
	struct fos_nl_node n0 = {}, n1 = {};
	unsigned char want[100];
	uint64_t copied = 0, wb, tx;
	long long ms = fos_param("copy_cache_ms");
	int i, ret = ms < 0 ? -1 : fos_set_param("copy_cache_ms", 1000);

	fos_nl_node_get(3, &n0);
	for (i = 0; i < 20 && !ret; i++) {
		fos_fill(buf + 4096 + 2048, 100, 20 + i);
		ret = fos_copy(fd, local, 2048, n3mem, 1024 + 100 * i, 100,
			       &copied);
	}
	fos_nl_node_get(3, &n1);
	kc = fos_total("kept_copies") - kc0;
	wb = n1.stats[FRACTOS_STAT_RDMA_WRITE_BYTES] -
	     n0.stats[FRACTOS_STAT_RDMA_WRITE_BYTES];
	tx = n1.stats[FRACTOS_STAT_TX_REMOTE_MSGS] -
	     n0.stats[FRACTOS_STAT_TX_REMOTE_MSGS];
	tap_ok(!ret && kc >= 18 && wb >= 1800 && tx <= 6,
	       "node 1: 20 copies of 100 bytes of ours into node 3's Memory: %lld through a region it keeps, %llu bytes written by RDMA WRITE, %llu messages (ret %d)",
	       kc, (unsigned long long)wb, (unsigned long long)tx, ret);
	fos_fill(want, sizeof(want), 39);
	memset(buf + 4096, 0, 100);
	ret = fos_copy(fd, n3mem, 1024 + 1900, local, 0, 100, &copied);
	tap_ok(!ret && !memcmp(buf + 4096, want, 100),
	       "node 1: the last of them reads back from node 3's Memory (ret %d)",
	       ret);
	if (ms >= 0)
		fos_set_param("copy_cache_ms", ms);
}

static void grant_forwarded(int fd, uint32_t d)
{
	struct fractos_memory_grant ga = { .req = d };
	unsigned char *gb = fos_anon_mem(fd, GRANT3_LEN, &ga.cid);
	long long pinned = fos_live("pinned_pages"), now;
	long long sent = fos_total("noack_invokes");
	int ret;

	/* First without an ACK: node 2 forwards it without one too. */
	ret = invoke_flags(fd, d, FRACTOS_INVOKE_NOACK, "nack", 4, NULL, 0);
	tap_ok(!ret && fos_total("noack_invokes") == sent + 1,
	       "node 1: invoke D without an ACK (ret %d)", ret);
	if (gb)
		fos_fill(gb, GRANT3_LEN, 8);
	ret = gb ? ioctl(fd, FRACTOS_IOC_MEMORY_GRANT, &ga) : -1;
	tap_ok(!ret && ga.new_cid == FRACTOS_CID_INVALID,
	       "node 1: MEMORY_GRANT to node 2's D, derived from node 3's Request: delivered (ret %d, errno %d)",
	       ret, ret ? errno : 0);
	/* Five pages, freed once node 2 has its copy and dropped ours. */
	now = pinned_fell(pinned, 5);
	tap_ok(now <= pinned - 5,
	       "node 1: the granted Memory is freed here (pinned pages %lld -> %lld)",
	       pinned, now);
}

static int provider(void)
{
	uint32_t mem, mdim, mdim2 = ~0U, r, local, k, k3, nd, g = ~0U, i;
	uint32_t n3mem = ~0U, n3req = ~0U;
	struct fos_counts want = {}, now;
	char *buf, out[300], want2[4096];
	long long in0;
	unsigned int fails = 99;
	uint64_t copied = 0;
	struct msg m;
	int fd, ok, ret;

	tap_plan(29 + 3 * (nodes - 1) + 16 * (nodes == 3));
	peers_up();
	fd = fos_open();
	buf = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fd < 0 || buf == MAP_FAILED)
		tap_bail("open/mmap");
	fos_fill(buf, 4096, 1);
	ok = !fos_mem_create(fd, buf, 4096, FRACTOS_PERM_ALL, &mem) &&
	     !fos_diminish(fd, mem, FRACTOS_PERM_WRITE, 100, 200, &mdim) &&
	     !req_create(fd, FRACTOS_CID_INVALID, TAG_R, "hello", 5, &mdim, 1, &r) &&
	     !publish(fd, r, "svc") &&
	     !publish_mine(fd, r, "svc.mine") &&
	     !fos_mem_create(fd, buf + 4096, 4096, FRACTOS_PERM_ALL, &local);
	tap_ok(ok, "node 1: R(\"hello\", [Mdim]) published as \"svc\" (and \"svc.mine\", for our uid only)");

	fos_req_timeout_ns = 120000000000ULL;
	ret = receive(fd, &m);
	tap_ok(!ret && m.tag == TAG_R && m.imm_len == 10 &&
	       !memcmp(m.imm, "hellofrom2", 10) && m.ncaps == 3,
	       "node 1: node 2's invocation: tag, \"hellofrom2\", 3 caps (ret %d)", ret);
	nd = m.caps[1];
	k = m.caps[2];
	tap_ok(same_cap(fd, mdim, fd, m.caps[0]), "node 1: cap 0 is R's own argument");
	tap_ok(is_remote(fd, nd, 2, FRACTOS_OBJ_MEMORY, 8, 64, FRACTOS_PERM_READ),
	       "node 1: cap 1 is node 2's Memory, view [8, 72), read-only");
	tap_ok(is_remote(fd, k, 2, FRACTOS_OBJ_REQUEST, 0, 0, 0),
	       "node 1: cap 2 is node 2's Request");
	fos_fill(want2, sizeof(want2), 2);
	memset(buf + 4096, 0, 64);
	ret = fos_copy(fd, nd, 3, local, 5, 50, &copied);
	tap_ok(!ret && copied == 50 && !memcmp(buf + 4096 + 5, want2 + 8 + 3, 50),
	       "node 1: memory_copy from node 2's Memory (RDMA READ, ret %d)", ret);
	tap_errno(fos_copy(fd, local, 0, nd, 0, 8, NULL), EACCES,
		  "node 1: into node 2's read-only view: EACCES");
	if (nodes == 3) {
		/* A third-party copy: node 2's Ndim into node 3's Memory. */
		for (i = 0; i < 600; i++) {
			ret = lookup(fd, 3, "n3mem", &n3mem);
			if (!ret || errno != ENOENT)
				break;
			usleep(100000);
		}
		tap_eq(ret, 0, "node 1: NAME_LOOKUP \"n3mem\" on node 3");
		tap_eq(lookup(fd, 3, "n3", &n3req), 0,
		       "node 1: NAME_LOOKUP \"n3\" on node 3");
		ret = fos_copy(fd, nd, 0, n3mem, 100, 0, &copied);
		tap_ok(!ret && copied == 64,
		       "node 1: copy node 2's Ndim into node 3's Memory (ret %d)", ret);
		/* Ours into node 3's: 40 bytes pushed with the COPY. */
		in0 = fos_total("inline_copies");
		fos_fill(buf + 4096 + 1024, 40, 9);
		ret = fos_copy(fd, local, 1024, n3mem, 300, 40, &copied);
		tap_ok(!ret && copied == 40 && fos_total("inline_copies") == in0 + 1,
		       "node 1: copy 40 bytes of ours into node 3's Memory, pushed inline (ret %d)",
		       ret);
		tap_eq(invoke(fd, n3req, "copied", 6, NULL, 0), 0,
		       "node 1: tell node 3 to check it");
		kept_writes(fd, buf, local, n3mem);
	}
	tap_eq(monitor(fd, nd, 7), 0, "node 1: monitor_receive on the proxy");

	ok = !fos_diminish(fd, mem, FRACTOS_PERM_WRITE, 1000, 300, &mdim2) &&
	     !fos_mem_create(fd, buf + 2048, 64, FRACTOS_PERM_ALL, &g);
	if (ok) {
		struct fractos_monitor a = { .cid = g, .cookie = 13 };

		ok = !ioctl(fd, FRACTOS_IOC_MONITOR_DELEGATE, &a);
	}
	{
		uint32_t args[2] = { mdim2, g };

		tap_eq(ok ? invoke(fd, k, "reply", 5, args, 2) : -1, 0,
		       "node 1: invoke node 2's K with [Mdim2, G], G watched by monitor_delegate");
	}

	ret = receive(fd, &m);
	tap_ok(!ret && m.tag == TAG_R && m.imm_len == 9 &&
	       !memcmp(m.imm, "helloback", 9) && m.ncaps == 3,
	       "node 1: second invocation \"helloback\" with 3 caps (ret %d)", ret);
	k3 = m.caps[2];
	tap_ok(same_cap(fd, mdim2, fd, m.caps[1]),
	       "node 1: Mdim2 came back as the real local object, same view");
	ret = fos_copy(fd, m.caps[1], 0, local, 0, 0, &copied);
	tap_ok(!ret && copied == 300 && !memcmp(buf + 4096, buf + 1000, 300),
	       "node 1: memory_copy from it (local speed)");
	tap_ok(is_remote(fd, k3, 2, FRACTOS_OBJ_REQUEST, 0, 0, 0),
	       "node 1: cap 2 is node 2's K3");
	tap_eq(monitor(fd, k3, 9), 0, "node 1: monitor_receive on K3");

	{
		uint32_t types[2] = { FRACTOS_MSG_MONITOR_RECEIVE,
				      FRACTOS_MSG_MONITOR_DELEGATE };
		uint64_t cookies[2] = { 7, 13 };
		int seen[2] = { 0, 0 };

		ret = events(fd, 2, types, cookies, seen, 30);
		if (ret)
			tap_diag("node 1: %d unexpected message(s)", ret);
		tap_ok(seen[0], "node 1: node 2 revoked N: the proxy's monitor fires");
		tap_ok(seen[1] && !revoked(fd, g),
		       "node 1: node 2 closed G: monitor_delegate fires, G not revoked (DROP)");
	}
	tap_ok(revoked(fd, nd), "node 1: the proxy is revoked");
	if (nodes == 3) {
		tap_errno(fos_copy(fd, nd, 0, n3mem, 100, 0, NULL), EKEYREVOKED,
			  "node 1: node 2 revoked N: the third-party copy fails");
		fos_close(fd, n3mem);
		fos_close(fd, n3req);
	}
	tap_eq(fos_revoke(fd, k), 0, "node 1: revoke node 2's K through its proxy");
	tap_ok(revoked(fd, k), "node 1: the proxy of K is revoked");
	tap_errno(invoke(fd, k, NULL, 0, NULL, 0), EKEYREVOKED,
		  "node 1: invoke it: EKEYREVOKED");

	/*
	 * The others report their failures; with 3 nodes, node 3 also
	 * invokes R (forwarded by node 2) with Mdim2; node 2's killed child
	 * sends R's note, and node 2 grants a Memory to R.  Any order.
	 */
	for (i = 0; i < nodes + 1 + (nodes == 3); i++) {
		struct fractos_contact_note note;

		fos_req_timeout_ns = 120000000000ULL;
		ret = receive(fd, &m);
		if (!ret && m.imm_len == 5 + sizeof(note) &&
		    !memcmp(m.imm, "hello", 5)) {
			memcpy(&note, m.imm + 5, sizeof(note));
			tap_ok(note.reason == FRACTOS_CONTACT_KILLED &&
			       note.signal == SIGKILL && note.node == 2 &&
			       note.stolen == 1 && m.ncaps == 2 &&
			       same_cap(fd, mdim, fd, m.caps[0]) &&
			       is_remote(fd, m.caps[1], 2, FRACTOS_OBJ_MEMORY, 0,
					 4096, FRACTOS_PERM_ALL),
			       "node 1: R's note from node 2's killed child, with its stolen Memory (reason %u, stolen %u, %u caps)",
			       note.reason, note.stolen, m.ncaps);
			fos_fill(want2, sizeof(want2), 5);
			ret = m.ncaps == 2 ?
			      fos_copy(fd, m.caps[1], 0, local, 0, 4096, &copied) : -1;
			tap_ok(!ret && copied == 4096 &&
			       !memcmp(buf + 4096, want2, sizeof(want2)),
			       "node 1: it holds the bytes the child wrote (RDMA READ, ret %d)",
			       ret);
			close_all(fd, &m);
			continue;
		}
		if (!ret && m.imm_len == 10 && !memcmp(m.imm, "hellonode3", 10)) {
			tap_ok(m.ncaps == 2, "node 1: node 3 invoked the forwarded R");
			tap_ok(same_cap(fd, mdim2, fd, m.caps[1]),
			       "node 1: Mdim2 forwarded 1 -> 2 -> 3 -> 1 is the local object");
			close_all(fd, &m);
			continue;
		}
		if (!ret && m.imm_len == 5 && !memcmp(m.imm, "hello", 5)) {
			static unsigned char gwant[GRANT_LEN];
			struct fractos_cap_info gi = {};
			unsigned char *gm = MAP_FAILED;
			long long copies = fos_total("grant_copies");
			int gfd = -1, same;

			same = m.ncaps == 2 && same_cap(fd, mdim, fd, m.caps[0]);
			if (m.ncaps == 2)
				fos_info(fd, m.caps[1], &gi);
			tap_ok(same && gi.type == FRACTOS_OBJ_MEMORY &&
			       gi.oid.node == 1 && gi.offset == 0 &&
			       gi.len == GRANT_LEN && gi.perms == FRACTOS_PERM_ALL &&
			       gi.info_flags == FRACTOS_INFO_OWNED && copies == 1,
			       "node 1: node 2's MEMORY_GRANT to R brings a copy in our memory, ours (%u caps, node %u, %llu bytes, flags %#x, grant_copies %lld)",
			       m.ncaps, gi.oid.node, (unsigned long long)gi.len,
			       gi.info_flags, copies);
			fos_fill(gwant, sizeof(gwant), 6);
			if (m.ncaps == 2 && !fos_export(fd, m.caps[1], 0, &gfd))
				gm = mmap(NULL, GRANT_LEN, PROT_READ | PROT_WRITE,
					  MAP_SHARED, gfd, 0);
			tap_ok(gm != MAP_FAILED && !memcmp(gm, gwant, sizeof(gwant)),
			       "node 1: mapped, it holds node 2's bytes");
			if (gm != MAP_FAILED)
				munmap(gm, GRANT_LEN);
			if (gfd >= 0)
				close(gfd);
			close_all(fd, &m);
			continue;
		}
		fails = 99;
		if (!ret && m.imm_len > 9 && m.imm_len < 20) {
			memcpy(out, m.imm, m.imm_len);
			out[m.imm_len] = 0;
			sscanf(out, "hellodone%u", &fails);
		}
		tap_eq(fails, 0, "node 1: a node reports %u failure(s)", fails);
		if (!ret && nodes == 3 && m.ncaps == 2 &&
		    is_remote(fd, m.caps[1], 2, FRACTOS_OBJ_REQUEST, 0, 0, 0))
			grant_forwarded(fd, m.caps[1]);
		if (!ret)
			close_all(fd, &m);
	}
	ret = system("../../vm/ctl kill 2");
	tap_eq(ret, 0, "node 1: vm/ctl kill 2");
	tap_ok(event(fd, 9, 60), "node 1: node 2 is gone: K3's proxy monitor fires");
	tap_ok(revoked(fd, k3), "node 1: K3's proxy is revoked");
	tap_errno(invoke(fd, k3, NULL, 0, NULL, 0), EKEYREVOKED,
		  "node 1: invoke it: EKEYREVOKED");
	if (nodes == 3) {
		uint32_t n3 = ~0U;

		/* Node 3 checks that node 1's objects outlived node 2. */
		tap_eq(lookup(fd, 3, "n3", &n3), 0, "node 1: NAME_LOOKUP \"n3\" on node 3");
		tap_eq(invoke(fd, n3, "killed", 6, NULL, 0), 0,
		       "node 1: tell node 3 that node 2 is gone");
		fos_req_timeout_ns = 120000000000ULL;
		fails = 99;
		ret = receive(fd, &m);
		if (!ret && m.imm_len > 10 && m.imm_len < 20) {
			memcpy(out, m.imm, m.imm_len);
			out[m.imm_len] = 0;
			sscanf(out, "hellofinal%u", &fails);
		}
		tap_eq(fails, 0, "node 1: node 3 reports %u failure(s) at the end", fails);
	}

	close(fd);
	munmap(buf, 8192);
	for (ret = 2; ret <= (int)nodes; ret++)
		fos_nl_node_del(ret);
	ok = fos_counts_wait(&want, &now, 5000);
	if (!ok)
		fos_counts_print("left", &now);
	tap_ok(ok && fos_live("exports") == 0 && fos_live("proxies") == 0 &&
	       fos_live("messages") == 0 && fos_live("requests") == 0,
	       "node 1: nothing left (exports %lld, proxies %lld)",
	       fos_live("exports"), fos_live("proxies"));
	return tap_finish();
}

/*
 * A child names node 1's R as the contact of a space of its own, marks a
 * Memory over its own pages (seed 5) stealable for it, and is killed.
 */
static int steal_child(int fd, uint32_t r)
{
	int pfd[2], st = 0;
	pid_t pid;
	char b;

	if (pipe(pfd))
		return 0;
	pid = fork();
	if (pid < 0)
		return 0;
	if (!pid) {
		struct fractos_space_contact a = { .op = FRACTOS_CONTACT_ADD };
		int c = fos_open(), capfd = -1;
		unsigned char *mem;

		if (c < 0 || fos_export(fd, r, 0, &capfd) ||
		    fos_import(c, capfd, &a.cid) ||
		    ioctl(c, FRACTOS_IOC_SPACE_CONTACT, &a))
			_exit(1);
		close(capfd);
		a.op = FRACTOS_CONTACT_STEAL;
		mem = fos_anon_mem(c, 4096, &a.cid);
		if (!mem)
			_exit(2);
		fos_fill(mem, 4096, 5);
		if (ioctl(c, FRACTOS_IOC_SPACE_CONTACT, &a) ||
		    write(pfd[1], "x", 1) != 1)
			_exit(3);
		pause();
		_exit(0);
	}
	close(pfd[1]);
	if (read(pfd[0], &b, 1) != 1)
		tap_diag("node 2: the steal child failed");
	close(pfd[0]);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
}

static int client(void)
{
	uint32_t n, ndim, k, k3, r = FRACTOS_CID_INVALID, mdim2, g = ~0U, sub, local,
		 cap[2], c2, d = FRACTOS_CID_INVALID;
	char *buf, done[32], want1[4096];
	uint64_t copied = 0;
	long long in0;
	struct msg m;
	int fd, ok, ret, i;

	tap_plan(19 + 2 * (nodes - 1) + 3 * (nodes == 3));
	peers_up();
	fd = fos_open();
	buf = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fd < 0 || buf == MAP_FAILED)
		tap_bail("open/mmap");
	fos_fill(buf, 4096, 2);
	ok = !fos_mem_create(fd, buf, 4096, FRACTOS_PERM_ALL, &n) &&
	     !fos_diminish(fd, n, FRACTOS_PERM_WRITE, 8, 64, &ndim) &&
	     !fos_mem_create(fd, buf + 4096, 4096, FRACTOS_PERM_ALL, &local) &&
	     !req_create(fd, FRACTOS_CID_INVALID, TAG_K, NULL, 0, NULL, 0, &k) &&
	     !req_create(fd, FRACTOS_CID_INVALID, TAG_K3, NULL, 0, NULL, 0, &k3) &&
	     !monitor(fd, k, 5);
	tap_ok(ok, "node 2: Memory N, view Ndim, Requests K and K3");

	for (i = 0; i < 600; i++) {
		ret = lookup(fd, 1, "svc", &r);
		if (!ret || errno != ENOENT)
			break;
		usleep(100000);
	}
	tap_eq(ret, 0, "node 2: NAME_LOOKUP \"svc\" on node 1");
	ret = lookup(fd, 1, "svc.mine", &c2);
	tap_ok(ret && errno == ENOENT,
	       "node 2: \"svc.mine\" (same uid, not world-visible) is not found: node 1 does not trust our uids (errno %d)",
	       ret ? errno : 0);
	tap_ok(is_remote(fd, r, 1, FRACTOS_OBJ_REQUEST, 0, 0, 0),
	       "node 2: it is a proxy of node 1's Request");
	cap[0] = ndim;
	cap[1] = k;
	tap_eq(invoke(fd, r, "from2", 5, cap, 2), 0, "node 2: invoke R with [Ndim, K]");

	fos_req_timeout_ns = 60000000000ULL;
	ret = receive(fd, &m);
	tap_ok(!ret && m.tag == TAG_K && m.imm_len == 5 && !memcmp(m.imm, "reply", 5) &&
	       m.ncaps == 2, "node 2: node 1 invoked K: \"reply\", 2 caps (ret %d)", ret);
	mdim2 = m.caps[0];
	g = m.caps[1];
	tap_ok(is_remote(fd, mdim2, 1, FRACTOS_OBJ_MEMORY, 1000, 300, FRACTOS_PERM_READ),
	       "node 2: Mdim2 is node 1's Memory, view [1000, 1300), read-only");
	fos_fill(want1, sizeof(want1), 1);
	ret = fos_copy(fd, mdim2, 0, local, 7, 0, &copied);
	tap_ok(!ret && copied == 300 && !memcmp(buf + 4096 + 7, want1 + 1000, 300),
	       "node 2: memory_copy from it, 300 bytes (RDMA READ, ret %d)", ret);
	ok = !fos_diminish(fd, mdim2, 0, 10, 20, &sub);
	tap_ok(ok && is_remote(fd, sub, 1, FRACTOS_OBJ_MEMORY, 1010, 20,
			       FRACTOS_PERM_READ),
	       "node 2: diminishing the proxy narrows the view");
	tap_errno(fos_diminish(fd, mdim2, 0, 290, 20, &sub), ERANGE,
		  "node 2: not past it (ERANGE)");
	cap[0] = mdim2;
	cap[1] = k3;
	/* Without an ACK (FRACTOS_INVOKE_NOACK): node 1's checks tell. */
	in0 = fos_total("noack_invokes");
	ret = invoke_flags(fd, r, FRACTOS_INVOKE_NOACK, "back", 4, cap, 2);
	tap_ok(!ret && fos_total("noack_invokes") == in0 + 1,
	       "node 2: invoke R with [Mdim2, K3] (Mdim2 goes home), no ACK asked (ret %d)",
	       ret);
	tap_eq(fos_revoke(fd, ndim), 0, "node 2: revoke N");
	tap_ok(is_remote(fd, g, 1, FRACTOS_OBJ_MEMORY, 0, 64, FRACTOS_PERM_ALL) &&
	       !fos_close(fd, g), "node 2: close node 1's G (its only copy here)");
	tap_ok(event(fd, 5, 30), "node 2: node 1 revoked K: our monitor fires");
	tap_ok(revoked(fd, k), "node 2: K is revoked");

	if (nodes == 3) {
		/* Forward R and Mdim2 (node 1's) to node 3 through its K. */
		uint32_t k_n3 = ~0U;

		for (i = 0; i < 600; i++) {
			ret = lookup(fd, 3, "n3", &k_n3);
			if (!ret || errno != ENOENT)
				break;
			usleep(100000);
		}
		cap[0] = r;
		cap[1] = mdim2;
		tap_eq(ret, 0, "node 2: NAME_LOOKUP \"n3\" on node 3");
		tap_eq(invoke(fd, k_n3, NULL, 0, cap, 2), 0,
		       "node 2: forward [R, Mdim2] to node 3");
		/* Node 1 grants to D with our report; we forward it. */
		tap_eq(req_create(fd, k_n3, 0, "via2", 4, NULL, 0, &d), 0,
		       "node 2: D(\"via2\") derived from node 3's Request");
	}

	tap_ok(steal_child(fd, r),
	       "node 2: a child named R as contact, marked its Memory and was killed");
	{
		struct fractos_memory_grant ga = { .req = r };
		unsigned char *gb = fos_anon_mem(fd, GRANT_LEN, &ga.cid);
		long long pinned = fos_live("pinned_pages"), now;
		uint32_t again;

		if (gb)
			fos_fill(gb, GRANT_LEN, 6);
		ret = gb ? ioctl(fd, FRACTOS_IOC_MEMORY_GRANT, &ga) : -1;
		tap_ok(!ret && ga.new_cid == FRACTOS_CID_INVALID &&
		       fos_mem_create(fd, gb, 4096, FRACTOS_PERM_ALL, &again) &&
		       errno == EFAULT,
		       "node 2: MEMORY_GRANT of a Memory to node 1's R; our mapping of it is gone (ret %d)",
		       ret);
		/*
		 * Its three pages go once node 1 has its copy and has dropped
		 * the source (the stolen Memory, one page, may go too).
		 */
		now = pinned_fell(pinned, 3);
		tap_ok(now <= pinned - 3,
		       "node 2: the granted Memory is freed here once node 1 has its copy (pinned pages %lld -> %lld)",
		       pinned, now);
	}

	/* Node 1 kills us once it has this: our plan is checked here. */
	snprintf(done, sizeof(done), "done%d", tap_failed_final(1));
	tap_eq(invoke(fd, r, done, strlen(done), &d,
		      d != FRACTOS_CID_INVALID), 0,
	       "node 2: report to node 1");
	tap_finish();
	fflush(stdout);
	/* Node 1 kills us now. */
	sleep(300);
	return 1;
}

/* Node 1's NOACK invocation of D, which node 2 derived with "via2". */
static int is_nack(const struct msg *m)
{
	return m->imm_len == 8 && !memcmp(m->imm, "via2nack", 8) &&
	       !m->ncaps;
}

/* Node 3: gets node 1's objects forwarded by node 2. */
static int third(void)
{
	struct fractos_cap_info gi = {};
	uint32_t k, r, mdim2, mem, cap[1];
	char done[32], want2[4096], want1[40], *buf;
	struct msg m;
	int fd, ok, ret;
	int nack;

	tap_plan(18 + 2 * (nodes - 1));
	peers_up();
	fd = fos_open();
	buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ok = fd >= 0 && buf != MAP_FAILED &&
	     !fos_mem_create(fd, buf, 4096, FRACTOS_PERM_ALL, &mem) &&
	     !publish(fd, mem, "n3mem") &&
	     !req_create(fd, FRACTOS_CID_INVALID, 3, NULL, 0, NULL, 0, &k) &&
	     !publish(fd, k, "n3");
	tap_ok(ok, "node 3: Memory \"n3mem\" and Request \"n3\" published");
	fos_req_timeout_ns = 180000000000ULL;
	/* Node 1's third-party copy comes before node 2's forward. */
	ret = receive(fd, &m);
	fos_fill(want2, sizeof(want2), 2);
	fos_fill(want1, sizeof(want1), 9);
	tap_ok(!ret && m.imm_len == 6 && !memcmp(m.imm, "copied", 6) &&
	       !memcmp(buf + 100, want2 + 8, 64) && !buf[99] && !buf[164] &&
	       !memcmp(buf + 300, want1, 40) && !buf[299] && !buf[340],
	       "node 3: node 1 copied node 2's Ndim into n3mem, and 40 bytes of its own (ret %d)",
	       ret);
	ret = receive(fd, &m);
	tap_ok(!ret && m.ncaps == 2, "node 3: node 2 forwards 2 caps (ret %d)", ret);
	r = m.caps[0];
	mdim2 = m.caps[1];
	tap_ok(is_remote(fd, r, 1, FRACTOS_OBJ_REQUEST, 0, 0, 0),
	       "node 3: R names node 1 directly");
	tap_ok(is_remote(fd, mdim2, 1, FRACTOS_OBJ_MEMORY, 1000, 300, FRACTOS_PERM_READ),
	       "node 3: Mdim2 names node 1 directly, same view");
	cap[0] = mdim2;
	tap_eq(invoke(fd, r, "node3", 5, cap, 1), 0,
	       "node 3: invoke R on node 1 directly with [Mdim2]");
	tap_ok(!revoked(fd, r), "node 3: R is live");
	snprintf(done, sizeof(done), "done%u", tap_failed);
	tap_eq(invoke(fd, r, done, strlen(done), NULL, 0), 0,
	       "node 3: report to node 1");
	tap_eq(monitor(fd, r, 11), 0, "node 3: monitor_receive on R");
	/*
	 * Node 1's invocation of node 2's D without an ACK, then its grant
	 * to D: node 2 forwarded both, the grant with its copy handed over,
	 * and we get one in our own memory.  Two work items of node 2's
	 * forward them: in either order.
	 */
	ret = receive(fd, &m);
	nack = !ret && is_nack(&m);
	if (nack) {
		close_all(fd, &m);
		ret = receive(fd, &m);
	}
	if (!ret && m.ncaps == 1)
		fos_info(fd, m.caps[0], &gi);
	tap_ok(!ret && m.imm_len == 4 && !memcmp(m.imm, "via2", 4) &&
	       m.ncaps == 1 && gi.type == FRACTOS_OBJ_MEMORY &&
	       gi.oid.node == 3 && gi.len == GRANT3_LEN &&
	       gi.perms == FRACTOS_PERM_ALL &&
	       gi.info_flags == FRACTOS_INFO_OWNED &&
	       fos_total("grant_copies") == 1,
	       "node 3: node 1's grant to D, forwarded by node 2, is a copy in our memory, ours (ret %d, %u caps, node %u, %llu bytes, flags %#x)",
	       ret, m.ncaps, gi.oid.node, (unsigned long long)gi.len,
	       gi.info_flags);
	{
		static unsigned char gwant[GRANT3_LEN];
		unsigned char *gm = MAP_FAILED;
		int gfd = -1;

		fos_fill(gwant, sizeof(gwant), 8);
		if (!ret && m.ncaps == 1 && !fos_export(fd, m.caps[0], 0, &gfd))
			gm = mmap(NULL, GRANT3_LEN, PROT_READ, MAP_SHARED, gfd,
				  0);
		tap_ok(gm != MAP_FAILED && !memcmp(gm, gwant, sizeof(gwant)),
		       "node 3: mapped, it holds node 1's bytes");
		if (gm != MAP_FAILED)
			munmap(gm, GRANT3_LEN);
		if (gfd >= 0)
			close(gfd);
		if (!ret)
			close_all(fd, &m);
	}
	if (!nack) {
		ret = receive(fd, &m);
		nack = !ret && is_nack(&m);
		if (!ret)
			close_all(fd, &m);
	}
	tap_ok(nack, "node 3: node 1's invocation of D without an ACK, forwarded by node 2, arrives: \"via2nack\", no caps");
	/* Node 1 kills node 2, then tells us. */
	ret = receive(fd, &m);
	tap_ok(!ret && m.imm_len == 6 && !memcmp(m.imm, "killed", 6),
	       "node 3: node 1 says node 2 is gone (ret %d)", ret);
	tap_ok(!revoked(fd, r), "node 3: node 2's death leaves node 1's R alone");
	snprintf(done, sizeof(done), "final%u", tap_failed);
	tap_eq(invoke(fd, r, done, strlen(done), NULL, 0), 0,
	       "node 3: final report to node 1");
	/* Node 1 then unloads its module: its objects are gone for us. */
	tap_ok(event(fd, 11, 120), "node 3: node 1 left: R's monitor fires");
	tap_ok(revoked(fd, r), "node 3: R's proxy is revoked");
	close(fd);
	sleep(1);
	tap_eq(fos_live("proxies"), 0, "node 3: no proxies left");
	return tap_finish();
}

int main(void)
{
	node_args();
	if (me == 1)
		return provider();
	if (me == 2)
		return client();
	return third();
}
