// SPDX-License-Identifier: GPL-2.0
/*
 * fractos selftest: per-node identities (pair keys) and one connection per
 * identity and epoch (Documentation/security.rst, issue 28).
 *
 * The module is reloaded as node 5, which waits for the nodes below it to
 * connect: node 2 and node 3 are configured at two addresses this guest
 * adds to eth0, and the program plays both with wirepeer.c (the wire
 * protocol with OpenSSL's MACs and tags).  A master key is drawn; node 5
 * is given its row (the pair keys K(5,2) and K(5,3), computed here as
 * "fractctl secret derive" does) next to the run's cluster secret.  Then:
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
 *   from its address hold at most 4 slots, and node 3 gets in meanwhile.
 *
 * Every case fails on a module without pair keys (AUTH_PEER is refused).
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

static uint8_t master[32], k52[32], k53[32];
static struct sockaddr_in addr2, addr3;

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

	if (claim(p, &addr3, 3, epoch, key_id_of(k53, 32), k53, &acc_ok) ||
	    !acc_ok || send_auth(p, NULL) ||
	    hp_recv(p, W_CREDIT, 10000, NULL))
		return -1;
	return fos_nl_wait_up(3, 10) ? 0 : -1;
}

static void keys(void)
{
	uint32_t n2 = 2, n3 = 3;
	struct fos_nl_reply r;
	int ret;

	ret = auth_set(k52, 32, &n2);
	tap_eq(ret, 0, "AUTH_SET with AUTH_PEER: node 2's pair key");
	tap_eq(auth_set(k53, 32, &n3), 0, "AUTH_SET with AUTH_PEER: node 3's pair key");
	tap_eq(auth_set(secret, secret_len, NULL), 0,
	       "AUTH_SET: the run's cluster secret next to them");
	ret = fos_nl_request(NULL, FRACTOS_CMD_STATS, 0, NULL, &r);
	tap_ok(!ret && r.auth_pairs == 2, "STATS: 2 nodes with a pair key (%u)",
	       r.auth_pairs);
}

static void cross_keys(void)
{
	uint64_t s0, a0;
	int ret, acc_ok = 0;
	struct hp p;

	s0 = fab_stat(FRACTOS_STAT_REFUSED_AUTH);
	ret = claim(&p, &addr2, 2, 0x2001, key_id_of(k53, 32), k53, NULL);
	tap_eq(ret, REJ_AUTH,
	       "node 3's pair key claiming node 2 (from node 2's address): refused (reason %d)",
	       ret);
	tap_eq(fab_stat(FRACTOS_STAT_REFUSED_AUTH) - s0, 1, "counted");
	hp_close(&p);

	a0 = fab_stat(FRACTOS_STAT_AUTH_FAILURES);
	ret = claim(&p, &addr2, 2, 0x2002, key_id_of(k52, 32), k53, &acc_ok);
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
	uint64_t s0;
	int ret;
	struct hp p;

	ret = claim(&p, &addr2, 2, 0x2003, key_id_of(secret, secret_len),
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

	s0 = fab_stat(FRACTOS_STAT_REFUSED_AUTH);
	ret = claim(&p, &addr2, 2, 0x2004, key_id_of(secret, secret_len),
		    NULL, NULL);
	tap_eq(ret, REJ_AUTH, "then the cluster secret claiming node 2: refused (reason %d)",
	       ret);
	tap_eq(fab_stat(FRACTOS_STAT_REFUSED_AUTH) - s0, 1, "counted");
	hp_close(&p);
}

static void admitted_and_replayed(void)
{
	uint8_t recorded_auth[32], recorded_accept[32];
	struct w_hello recorded;
	int ret, acc_ok = 0;
	uint64_t s0;
	struct hp p;

	ret = claim(&p, &addr3, 3, 0x3001, key_id_of(k53, 32), k53, &acc_ok);
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
	if (!hp_open(&p, &addr3)) {
		p.key = k53;
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
	struct hp a, b, c, d;
	struct fos_nl_node n = { 0 };
	uint64_t s0, e0, p0;
	int ret, up, sent;

	up = !admit3(&a, 0x3002);
	tap_ok(up, "node 3 (epoch 0x3002) admitted: connection A");

	s0 = fab_stat(FRACTOS_STAT_REFUSED_CONNECTED);
	ret = claim(&b, &addr3, 3, 0x3002, key_id_of(k53, 32), k53, NULL);
	tap_eq(ret, REJ_CONNECTED,
	       "a second claim of node 3 with A's epoch: refused before any proof (reason %d)",
	       ret);
	tap_eq(fab_stat(FRACTOS_STAT_REFUSED_CONNECTED) - s0, 1, "counted");
	hp_close(&b);
	tap_ok(up && served(&a, 2), "A is still served");

	/* Two handshakes of a new epoch, both accepted; C proves first. */
	e0 = node_stat(3, FRACTOS_STAT_EPOCH_CHANGES);
	ret = claim(&c, &addr3, 3, 0x3003, key_id_of(k53, 32), k53, NULL);
	ret = ret ?: claim(&d, &addr3, 3, 0x3003, key_id_of(k53, 32), k53, NULL);
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

/*
 * Admission slots per host: unproven connections claiming node 2 from its
 * address (a flooder there) keep out nobody else.
 */
static void flood(void)
{
	static struct hp f[34];
	int i, r, busy = 0, acc = 0, up;
	struct hp p;

	for (i = 0; i < 34; i++) {
		if (hp_open(&f[i], &addr2))
			continue;
		hello_fill(&f[i].mine, 2, 0x2100, key_id_of(k52, 32), 0);
		r = hp_connect(&f[i]);
		busy += r == REJ_BUSY;
		acc += r == 0;
	}
	/* (a slot comes back when one times out: under load, a few more) */
	tap_ok(acc >= 4 && acc <= 8 && acc + busy == 34,
	       "34 unproven connections claiming node 2 from its address: %d accepted, %d refused busy",
	       acc, busy);
	up = !admit3(&p, 0x3010);
	tap_ok(up, "meanwhile node 3, from another address, is admitted");
	tap_ok(up && served(&p, 5), "and served");
	hp_close(&p);
	for (i = 0; i < 34; i++)
		hp_close(&f[i]);
}

int main(void)
{
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
	tap_plan(42);
	srand(getpid());
	self_addr.sin_family = AF_INET;

	/* (no heartbeat from us while we wait for the node: a long bound) */
	tap_eq(reload("node_id=5 fabric_heartbeat_ms=30000"), 0,
	       "the module loaded again as node %d", ID_NODE);
	self_id = fos_param("node_id");
	self_epoch = fos_param("epoch");
	if (RAND_bytes(master, sizeof(master)) != 1)
		return tap_finish();
	pair_key(ID_NODE, 2, ID_GEN, k52);
	pair_key(ID_NODE, 3, ID_GEN, k53);
	ret = add_alias(&addr2, 82) | add_alias(&addr3, 83);
	usleep(500 * 1000);	/* rxe learns the GIDs */
	tap_ok(!ret && !fos_nl_node_add(2, addr2.sin_addr) &&
	       !fos_nl_node_add(3, addr3.sin_addr),
	       "nodes 2 and 3 at two addresses of this guest's");

	keys();
	cross_keys();
	cluster();
	admitted_and_replayed();
	one_per_epoch();
	flood();

	tap_ok(tags_checked > 0 && !tags_bad,
	       "every message of the node carried the right seq and tag (%u checked, %u wrong)",
	       tags_checked, tags_bad);
	sh("ip addr del %s/24 dev eth0", inet_ntoa(addr2.sin_addr));
	sh("ip addr del %s/24 dev eth0", inet_ntoa(addr3.sin_addr));
	OPENSSL_cleanse(master, sizeof(master));
	OPENSSL_cleanse(k52, sizeof(k52));
	OPENSSL_cleanse(k53, sizeof(k53));
	ret = reload("");
	ret = ret ?: auth_set(secret, secret_len, NULL);
	tap_eq(ret, 0, "the module loaded again as before, with the run's secret");
	return tap_finish();
}
