// SPDX-License-Identifier: GPL-2.0
/*
 * fractos selftest: per-node identities (pair keys) and one connection per
 * identity and epoch (Documentation/security.rst, issue 28).
 *
 * The module is reloaded as node 5, which waits for the nodes below it to
 * connect: nodes 0 to 4 are configured at five addresses this guest adds
 * to eth0, and the program plays them with wirepeer.c (the wire protocol
 * with OpenSSL's MACs and tags).  A master key is drawn; node 5 is given
 * its row (the pair keys K(5,0) to K(5,4), computed here as "fractctl
 * secret derive" does) next to the run's cluster secret.  Then:
 *
 * - node 3 with K(5,3) is admitted and served, and the accept proves K(5,3);
 * - node 3's row cannot make anyone node 2: K(5,3)'s key id claiming node
 *   2 is refused, and naming K(5,2) while proving with K(5,3) is cut off;
 * - the cluster secret still admits node 2 (the move to pair keys), and
 *   no longer once it is forgotten;
 * - a replayed handshake of node 3 is cut off;
 * - one connection per identity and epoch: a second claim of node 3 with
 *   the epoch of its live connection is refused before any proof, and a
 *   proven one (two handshakes raced to AUTH) is cut off, with a message
 *   posted behind its AUTH never served; a proven claim with another
 *   epoch is a restart and replaces the old connection;
 * - admission slots per host: 34 unproven connections claiming node 2
 *   from its address hold at most 4 slots, the others are refused with a
 *   cookie; node 3 gets in meanwhile, and so does node 2 with the cookie
 *   (a flood that forges an address keeps its node out no more); those
 *   with a cookie have 4 slots per address too;
 * - admission cookies: with 16 slots held, node 3 is refused with a
 *   cookie, a forged one and one of another node and address are refused,
 *   and node 3 comes in with its own.
 *
 * Every case fails on a module without pair keys (AUTH_PEER is refused),
 * and the last two on one without per-host slots or cookies.
 * At the end the module is loaded again as vm/run left it (the default
 * node id and the run's secret).  Prints TAP.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include "tap.h"
#include "fos_nl.h"
#include "fos_util.h"
#include "wirepeer.h"

#define ID_NODE		5	/* the module's node id here */
#define ID_GEN		1	/* the pair keys' generation */

#define ID_PEERS	5	/* nodes 0 to 4, each at an address of its own */

static uint8_t master[32], pk[ID_PEERS][32];	/* K(5, j) */
static struct sockaddr_in addr[ID_PEERS];

/* K(i,j,g) as "fractctl secret derive" computes it (security.rst). */
static void pair_key(uint32_t i, uint32_t j, uint32_t g, uint8_t out[32])
{
	uint8_t msg[15 + 12];
	uint32_t lo = i < j ? i : j, hi = i < j ? j : i;
	unsigned int len = 32;

	memcpy(msg, "fractos v7 pair", 15);
	/* little-endian hosts only, as wirepeer.h */
	memcpy(msg + 15, &lo, 4);
	memcpy(msg + 19, &hi, 4);
	memcpy(msg + 23, &g, 4);
	HMAC(EVP_sha256(), master, sizeof(master), msg, sizeof(msg), out, &len);
}

/* AUTH_SET: the cluster secret, or @peer's pair key (@peer not NULL). */
static int auth_set(const uint8_t *key, size_t len, const uint32_t *peer)
{
	struct fos_nl_attr a[] = {
		{ FRACTOS_A_AUTH_SECRET, (int)len, key },
		{ FRACTOS_A_AUTH_PEER, 4, peer },
		{ 0 },
	};

	if (!peer)
		a[1].type = 0;	/* the list ends there */

	return fos_nl_request(NULL, FRACTOS_CMD_AUTH_SET, 0, a, NULL);
}

static int forget_cluster(void)
{
	struct fos_nl_attr a[] = { { FRACTOS_A_AUTH_CLUSTER, 0, NULL }, { 0 } };

	return fos_nl_request(NULL, FRACTOS_CMD_AUTH_FORGET, 0, a, NULL);
}

static int sh(const char *fmt, const char *arg)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), fmt, arg);
	return system(cmd);
}

static int add_alias(struct sockaddr_in *a, unsigned int plus)
{
	*a = self_addr;
	a->sin_addr.s_addr = htonl(ntohl(self_addr.sin_addr.s_addr) + plus);
	return sh("ip addr add %s/24 dev eth0", inet_ntoa(a->sin_addr));
}

/* Load the module again (@params: its parameters); 0 or -1. */
static int reload(const char *params)
{
	const char *ko = getenv("FRACTOS_KO");
	char cmd[512];

	if (!ko)
		return -1;
	fos_nl_close(&fos_nl_default);
	snprintf(cmd, sizeof(cmd), "rmmod fractos && insmod '%s' %s", ko,
		 params);
	return system(cmd) ? -1 : 0;
}

/*
 * Connect as @node (@epoch) from @src naming @key_id and proving with
 * @key: 0 once accepted (the accept's MAC checked under @key into *@acc_ok),
 * else the refusal's reason or -1.  The AUTH is not sent.
 */
static int claim(struct hp *p, const struct sockaddr_in *src, uint32_t node,
		 uint32_t epoch, uint32_t key_id, const uint8_t *key,
		 int *acc_ok)
{
	uint8_t mac[32];
	int ret;

	if (hp_open(p, src))
		return -1;
	p->key = key;
	p->key_len = 32;
	hello_fill(&p->mine, node, epoch, key_id, 0);
	ret = hp_connect(p);
	if (!ret && acc_ok) {
		hmac3(key, 32, "fractos v7 accept", &p->mine, &p->acc.hello,
		      mac);
		*acc_ok = p->acc.hello.key_id == key_id &&
			  !memcmp(mac, p->acc.mac, 32);
	}
	return ret;
}

/* A claim (as claim()) refused with @reason, and counted in @stat. */
static void refused_claim(const char *what, const struct sockaddr_in *src,
			  uint32_t node, uint32_t epoch, uint32_t key_id,
			  const uint8_t *key, int reason, int stat)
{
	uint64_t s0 = fab_stat(stat);
	struct hp p;
	int ret;

	ret = claim(&p, src, node, epoch, key_id, key, NULL);
	tap_eq(ret, reason, "%s: refused (reason %d)", what, ret);
	tap_eq(fab_stat(stat) - s0, 1, "%s: counted", what);
	hp_close(&p);
}

/* The AUTH of a claim, under p->key; @mac (may be NULL) gets its MAC. */
static int send_auth(struct hp *p, uint8_t *mac)
{
	uint8_t m[32];

	hmac3(p->key, p->key_len, "fractos v7 auth", &p->mine, &p->acc.hello,
	      m);
	if (mac)
		memcpy(mac, m, 32);
	return hp_send(p, W_AUTH, 0, m, 32);
}

/* A PING on @p is served by the node (its PINGS_RX counts it). */
static int served(struct hp *p, uint32_t seq)
{
	struct w_ping ping = { .t0 = 1, .seq = seq };
	uint64_t s0 = fab_stat(FRACTOS_STAT_PINGS_RX);
	int i;

	if (hp_send(p, W_PING, seq, &ping, sizeof(ping)))
		return 0;
	for (i = 0; i < 250 && fab_stat(FRACTOS_STAT_PINGS_RX) == s0; i++)
		usleep(20 * 1000);
	return fab_stat(FRACTOS_STAT_PINGS_RX) == s0 + 1;
}

/* Node 3 admitted with K(5,3) and epoch @epoch, or -1. */
static int admit3(struct hp *p, uint32_t epoch)
{
	int acc_ok = 0;

	if (claim(p, &addr[3], 3, epoch, key_id_of(pk[3], 32), pk[3], &acc_ok) ||
	    !acc_ok || send_auth(p, NULL) ||
	    hp_recv(p, W_CREDIT, 10000, NULL))
		return -1;
	return fos_nl_wait_up(3, 10) ? 0 : -1;
}

static void keys(void)
{
	uint32_t j, n2 = 2, n3 = 3;
	struct fos_nl_reply r;
	int ret = 0;

	tap_eq(auth_set(pk[2], 32, &n2), 0,
	       "AUTH_SET with AUTH_PEER: node 2's pair key");
	tap_eq(auth_set(pk[3], 32, &n3), 0,
	       "AUTH_SET with AUTH_PEER: node 3's pair key");
	for (j = 0; j < ID_PEERS; j++)
		if (j != 2 && j != 3)
			ret = ret ?: auth_set(pk[j], 32, &j);
	tap_eq(ret, 0, "and those of nodes 0, 1 and 4");
	tap_eq(auth_set(secret, secret_len, NULL), 0,
	       "AUTH_SET: the run's cluster secret next to them");
	ret = fos_nl_request(NULL, FRACTOS_CMD_STATS, 0, NULL, &r);
	tap_ok(!ret && r.auth_pairs == ID_PEERS,
	       "STATS: %d nodes with a pair key (%u)", ID_PEERS, r.auth_pairs);
}

static void cross_keys(void)
{
	int ret, acc_ok = 0;
	uint64_t a0;
	struct hp p;

	refused_claim("node 3's pair key claiming node 2 (from node 2's address)",
		      &addr[2], 2, 0x2001, key_id_of(pk[3], 32), pk[3],
		      REJ_AUTH, FRACTOS_STAT_REFUSED_AUTH);

	a0 = fab_stat(FRACTOS_STAT_AUTH_FAILURES);
	ret = claim(&p, &addr[2], 2, 0x2002, key_id_of(pk[2], 32), pk[3], &acc_ok);
	tap_ok(!ret && !acc_ok,
	       "naming node 2's key id: accepted, but the accept does not verify under node 3's key");
	tap_ok(!ret && !send_auth(&p, NULL) && hp_cut_off(&p, 20000),
	       "its AUTH under node 3's key: cut off");
	tap_eq(fab_stat(FRACTOS_STAT_AUTH_FAILURES) - a0, 1, "counted");
	hp_close(&p);
	tap_eq(node_stat(2, FRACTOS_STAT_CONNECTS), 0, "node 2 never came up");
}

static void cluster(void)
{
	uint8_t mac[32];
	int ret;
	struct hp p;

	ret = claim(&p, &addr[2], 2, 0x2003, key_id_of(secret, secret_len),
		    NULL, NULL);
	tap_eq(ret, 0, "the cluster secret claiming node 2 while it is set: accepted");
	if (!ret) {
		p.key = secret;
		p.key_len = secret_len;
	}
	tap_ok(!ret && !send_auth(&p, mac) && !hp_recv(&p, W_CREDIT, 10000, NULL),
	       "admitted with it (any holder of a cluster secret is any node)");
	hp_close(&p);
	tap_eq(forget_cluster(), 0, "AUTH_FORGET with AUTH_CLUSTER");

	refused_claim("then the cluster secret claiming node 2", &addr[2], 2,
		      0x2004, key_id_of(secret, secret_len), NULL, REJ_AUTH,
		      FRACTOS_STAT_REFUSED_AUTH);
}

static void admitted_and_replayed(void)
{
	uint8_t recorded_auth[32], recorded_accept[32];
	struct w_hello recorded;
	int ret, acc_ok = 0;
	uint64_t s0;
	struct hp p;

	ret = claim(&p, &addr[3], 3, 0x3001, key_id_of(pk[3], 32), pk[3], &acc_ok);
	tap_ok(!ret && acc_ok,
	       "node 3 with its pair key: accepted, and the accept's MAC is HMAC-SHA256 under K(5,3)");
	recorded = p.mine;
	memcpy(recorded_accept, p.acc.mac, 32);
	tap_ok(!ret && !send_auth(&p, recorded_auth) &&
	       !hp_recv(&p, W_CREDIT, 10000, NULL),
	       "its AUTH is answered with its credit");
	tap_ok(!ret && served(&p, 1), "admitted: its PING is served");
	hp_close(&p);
	{
		struct fos_nl_node n;

		tap_ok(fos_nl_wait_state(3, 0, 20, &n),
		       "node 3 goes down when it disconnects");
	}

	s0 = fab_stat(FRACTOS_STAT_AUTH_FAILURES);
	ret = -1;
	if (!hp_open(&p, &addr[3])) {
		p.key = pk[3];
		p.key_len = 32;
		p.mine = recorded;
		ret = hp_connect(&p);
	}
	tap_ok(!ret && memcmp(p.acc.mac, recorded_accept, 32),
	       "a replayed hello of node 3 is answered with a fresh nonce");
	tap_ok(!ret && !hp_send(&p, W_AUTH, 0, recorded_auth, 32) &&
	       hp_cut_off(&p, 20000), "the replayed AUTH: cut off");
	tap_eq(fab_stat(FRACTOS_STAT_AUTH_FAILURES) - s0, 1, "counted");
	hp_close(&p);
}

static void one_per_epoch(void)
{
	struct hp a, c, d;
	struct fos_nl_node n = { 0 };
	uint64_t s0, e0, p0;
	int ret, up, sent;

	up = !admit3(&a, 0x3002);
	tap_ok(up, "node 3 (epoch 0x3002) admitted: connection A");

	refused_claim("a second claim of node 3 with A's epoch, before any proof",
		      &addr[3], 3, 0x3002, key_id_of(pk[3], 32), pk[3],
		      REJ_CONNECTED, FRACTOS_STAT_REFUSED_CONNECTED);
	tap_ok(up && served(&a, 2), "A is still served");

	/* Two handshakes of a new epoch, both accepted; C proves first. */
	e0 = node_stat(3, FRACTOS_STAT_EPOCH_CHANGES);
	ret = claim(&c, &addr[3], 3, 0x3003, key_id_of(pk[3], 32), pk[3], NULL);
	ret = ret ?: claim(&d, &addr[3], 3, 0x3003, key_id_of(pk[3], 32), pk[3], NULL);
	tap_eq(ret, 0, "two handshakes of node 3 with a new epoch (0x3003): both accepted");
	tap_ok(!ret && !send_auth(&c, NULL) && !hp_recv(&c, W_CREDIT, 10000, NULL),
	       "C proves it first: admitted (node 3 restarted)");

	/* At once: D must not wait past the admission timeout (5 s). */
	s0 = fab_stat(FRACTOS_STAT_REFUSED_CONNECTED);
	p0 = fab_stat(FRACTOS_STAT_PINGS_RX);
	{
		struct w_ping ping = { .t0 = 1, .seq = 3 };

		/*
		 * D's AUTH with a PING behind it (the takeover of issue 28).
		 * The node may have ended D before the PING arrives: then
		 * its send fails, and that is being cut off too.
		 */
		ret = ret ?: send_auth(&d, NULL);
		sent = !ret && !hp_send(&d, W_PING, 3, &ping, sizeof(ping));
	}
	tap_ok(!ret && (!sent || hp_cut_off(&d, 20000)),
	       "D proves the same identity and epoch while C is up: cut off (%s)",
	       sent ? "after its PING" : "its PING found the connection gone");
	tap_eq(fab_stat(FRACTOS_STAT_REFUSED_CONNECTED) - s0, 1, "counted");
	tap_eq(fab_stat(FRACTOS_STAT_PINGS_RX) - p0, 0,
	       "the PING D posted behind its AUTH was not served");

	tap_ok(hp_cut_off(&a, 20000), "A, of the old epoch, is cut off");
	tap_eq(node_stat(3, FRACTOS_STAT_EPOCH_CHANGES) - e0, 1,
	       "counted as node 3's restart");
	tap_ok(served(&c, 4), "C is still served");
	ret = fos_nl_node_get(3, &n);
	tap_ok(!ret && n.epoch == 0x3003 && n.state == FRACTOS_NODE_UP,
	       "node 3 is up with C's epoch (%#x)", n.epoch);
	hp_close(&d);
	hp_close(&c);
	hp_close(&a);
}

/* Node 2, from its address, with @cookie, proves itself: 1, or 0. */
static int admit2(struct hp *p, uint32_t epoch, uint64_t cookie)
{
	if (hp_open(p, &addr[2]))
		return 0;
	p->key = pk[2];
	p->key_len = 32;
	hello_fill(&p->mine, 2, epoch, key_id_of(pk[2], 32), 0);
	p->mine.cookie = cookie;
	return !hp_connect(p) && !send_auth(p, NULL) &&
	       !hp_recv(p, W_CREDIT, 10000, NULL);
}

/*
 * Admission slots per host: unproven connections claiming node 2 from its
 * address (a flooder there, or one that forges its address) keep out
 * nobody else, nor node 2, which proves its address with a cookie.
 */
static void flood(void)
{
	static struct hp f[34], g[5];
	int i, r, refused = 0, acc = 0, up, busy;
	uint64_t c2 = 0;
	struct hp p;

	for (i = 0; i < 34; i++) {
		if (hp_open(&f[i], &addr[2]))
			continue;
		hello_fill(&f[i].mine, 2, 0x2100, key_id_of(pk[2], 32), 0);
		r = hp_connect(&f[i]);
		if (r == REJ_COOKIE && f[i].cookie) {
			refused++;
			c2 = f[i].cookie;
		}
		acc += r == 0;
	}
	/* (a slot comes back when one times out: under load, a few more) */
	tap_ok(acc >= 4 && acc <= 8 && acc + refused == 34,
	       "34 unproven connections claiming node 2 from its address: %d accepted, %d refused with a cookie",
	       acc, refused);
	up = !admit3(&p, 0x3010);
	tap_ok(up, "meanwhile node 3, from another address, is admitted");
	tap_ok(up && served(&p, 5), "and served");
	hp_close(&p);

	up = admit2(&p, 0x2101, c2);
	tap_ok(up, "node 2 with the cookie, its address's slots held: admitted");
	tap_ok(up && served(&p, 7), "and served");
	hp_close(&p);

	/* Proven addresses have a limit too: 4 that never AUTH, then busy. */
	busy = -1;
	for (i = 0; i < 5; i++) {
		if (hp_open(&g[i], &addr[2]))
			break;
		hello_fill(&g[i].mine, 2, 0x2110 + i, key_id_of(pk[2], 32), 0);
		g[i].mine.cookie = c2;
		r = hp_connect(&g[i]);
		if (r) {
			busy = r == REJ_BUSY ? i : -1;
			break;
		}
	}
	tap_eq(busy, 4, "with the cookie, 4 that never prove themselves: the fifth is refused busy");
	for (i = 0; i < 5; i++)
		hp_close(&g[i]);
	for (i = 0; i < 34; i++)
		hp_close(&f[i]);
}

/*
 * Admission cookies: with half of the slots held (4 by each of nodes 0, 1
 * and 4, 3 by node 2 and 1 by node 3, none proven), a request without a
 * valid cookie is refused with one, and comes in with it.
 */
static void cookies(void)
{
	static const int per[ID_PEERS] = { 4, 4, 3, 1, 4 };
	static struct hp f[16];
	int i, j, n = 0, r, acc = 0, up;
	uint64_t s0, c3;
	struct hp p;

	for (j = 0; j < ID_PEERS; j++) {
		for (i = 0; i < per[j]; i++, n++) {
			if (hp_open(&f[n], &addr[j]))
				continue;
			hello_fill(&f[n].mine, j, 0x4000 + j,
				   key_id_of(pk[j], 32), 0);
			acc += !hp_connect(&f[n]);
		}
	}
	tap_eq(acc, 16, "16 unproven connections from five addresses: all accepted");

	s0 = fab_stat(FRACTOS_STAT_REFUSED_COOKIE);
	r = claim(&p, &addr[3], 3, 0x3020, key_id_of(pk[3], 32), pk[3], NULL);
	c3 = p.cookie;
	tap_ok(r == REJ_COOKIE && c3,
	       "then node 3 without a cookie: refused with one (reason %d)", r);
	hp_close(&p);
	tap_eq(fab_stat(FRACTOS_STAT_REFUSED_COOKIE) - s0, 1, "counted");

	r = -1;
	if (!hp_open(&p, &addr[3])) {
		hello_fill(&p.mine, 3, 0x3021, key_id_of(pk[3], 32), 0);
		p.mine.cookie = c3 ^ 1;
		r = hp_connect(&p);
	}
	tap_eq(r, REJ_COOKIE, "with a forged cookie: refused again");
	hp_close(&p);
	r = -1;
	if (!hp_open(&p, &addr[2])) {
		hello_fill(&p.mine, 2, 0x2022, key_id_of(pk[2], 32), 0);
		p.mine.cookie = c3;
		r = hp_connect(&p);
	}
	tap_eq(r, REJ_COOKIE,
	       "node 3's cookie claiming node 2 from node 2's address: refused");
	hp_close(&p);

	up = 0;
	if (!hp_open(&p, &addr[3])) {
		p.key = pk[3];
		p.key_len = 32;
		hello_fill(&p.mine, 3, 0x3023, key_id_of(pk[3], 32), 0);
		p.mine.cookie = c3;
		up = !hp_connect(&p) && !send_auth(&p, NULL) &&
		     !hp_recv(&p, W_CREDIT, 10000, NULL);
	}
	tap_ok(up, "node 3 again with its cookie: accepted and admitted");
	tap_ok(up && served(&p, 6), "and served");
	hp_close(&p);
	for (i = 0; i < n; i++)
		hp_close(&f[i]);
}

int main(void)
{
	unsigned int i;
	int ret;

	printf("TAP version 13\n");
	if (getuid() || fos_param("node_id") < 0 || !getenv("FRACTOS_KO")) {
		printf("1..0 # SKIP needs root, the module loaded and FRACTOS_KO\n");
		return 0;
	}
	if (read_secret() || !fos_nl_self_addr(&self_addr.sin_addr)) {
		printf("1..0 # SKIP needs FRACTOS_SECRET (vm/run) and eth0\n");
		return 0;
	}
	tap_plan(53);
	srand(getpid());
	self_addr.sin_family = AF_INET;

	/* (no heartbeat from us while we wait for the node: a long bound) */
	tap_eq(reload("node_id=5 fabric_heartbeat_ms=30000"), 0,
	       "the module loaded again as node %d", ID_NODE);
	self_id = fos_param("node_id");
	self_epoch = fos_param("epoch");
	if (RAND_bytes(master, sizeof(master)) != 1)
		return tap_finish();
	ret = 0;
	for (i = 0; i < ID_PEERS; i++) {
		pair_key(ID_NODE, i, ID_GEN, pk[i]);
		ret |= add_alias(&addr[i], 80 + i);
	}
	usleep(500 * 1000);	/* rxe learns the GIDs */
	for (i = 0; i < ID_PEERS; i++)
		ret = ret ?: fos_nl_node_add(i, addr[i].sin_addr);
	tap_ok(!ret, "nodes 0 to 4 at five addresses of this guest's");

	keys();
	cross_keys();
	cluster();
	admitted_and_replayed();
	one_per_epoch();
	flood();
	sleep(6);	/* its slots come back (the admission timeout) */
	cookies();

	tap_ok(tags_checked > 0 && !tags_bad,
	       "every message of the node carried the right seq and tag (%u checked, %u wrong)",
	       tags_checked, tags_bad);
	for (i = 0; i < ID_PEERS; i++)
		sh("ip addr del %s/24 dev eth0", inet_ntoa(addr[i].sin_addr));
	OPENSSL_cleanse(master, sizeof(master));
	OPENSSL_cleanse(pk, sizeof(pk));
	ret = reload("");
	ret = ret ?: auth_set(secret, secret_len, NULL);
	tap_eq(ret, 0, "the module loaded again as before, with the run's secret");
	return tap_finish();
}
