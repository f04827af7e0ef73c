// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: admission - the secrets and the handshake's MACs.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

/**
 * DOC: Secrets and pair keys
 *
 * A node admits another only when both prove that they hold the same key
 * (wire.h, "Admission").  The admin sets keys over netlink (genl.c,
 * CAP_NET_ADMIN); each is kept only as an hmac(sha256) transform keyed
 * with it, and never leaves the kernel.  There are two kinds:
 *
 * - a *pair key*, shared with one node only (AUTH_SET with AUTH_PEER): the
 *   row of this node in a table that ``fractctl secret derive`` computes
 *   from a master key the admin keeps (Documentation/security.rst).  The
 *   pair key of nodes i and j is known to i and j alone, so holding one
 *   node's row never lets anyone be another node;
 * - the *cluster secret*, one key every node holds.  Any holder can claim
 *   any identity with it; it is kept for small or trusted clusters and for
 *   the move to pair keys without a partition.
 *
 * The keys that admit node j, in the order a connection offers them: j's
 * pair key, j's previous pair key, the cluster secret, the previous
 * cluster secret.  Once no node keeps a cluster secret, only pair keys
 * admit anyone.  The previous key of each slot stays accepted from
 * initiators that name it, so that a key can be rotated node by node
 * without a partition and without touching live connections.  A key id
 * (four bytes of an HMAC of the key) names a key on the wire and in STATS.
 *
 * Modes: NONE after load (every node is refused), SECRET (some key is
 * set), or INSECURE when the admin asked for it explicitly (only insecure
 * nodes are admitted, without any proof).
 *
 * Lifetime: a struct fos_auth_key is counted (kref): one reference for its
 * slot, one per connection handshake that uses it.
 * Locking: fos_auth_mutex protects the mode, the cluster slots and the
 * pair table; it is taken only in process context (netlink, rdma_cm
 * handlers, the connect work) and nothing is taken inside it.  Keys are
 * immutable once published, so that MACs are computed without any lock
 * (the hash state is on the caller's stack).
 */
#include <crypto/algapi.h>
#include <crypto/hash.h>
#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/xarray.h>
#include <linux/fractos_netlink.h>
#include "../core.h"
#include "wire.h"
#include "auth.h"

/**
 * struct fos_auth_key - one secret or pair key
 * @ref: see "Lifetime" above
 * @id: its key id, never 0
 * @tfm: hmac(sha256) keyed with the secret
 */
struct fos_auth_key {
	struct kref ref;
	u32 id;
	struct crypto_shash *tfm;
};

/**
 * struct fos_auth_slots - the keys of one kind: current and previous
 * @cur: what new connections offer, or NULL
 * @prev: the one @cur replaced, still accepted, or NULL
 */
struct fos_auth_slots {
	struct fos_auth_key *cur;
	struct fos_auth_key *prev;
};

static DEFINE_MUTEX(fos_auth_mutex);
/* Under fos_auth_mutex: */
static u8 fos_auth_state = FRACTOS_AUTH_NONE;
static struct fos_auth_slots fos_auth_cluster;
/* node id -> struct fos_auth_slots, never empty ones */
static DEFINE_XARRAY(fos_auth_pairs);
static unsigned int fos_auth_npairs;

static const char fos_auth_label_id[] = "fractos key id";
static const char *const fos_auth_labels[] = {
	[FOS_AUTH_ACCEPT] = "fractos v7 accept",
	[FOS_AUTH_INITIATOR] = "fractos v7 auth",
	[FOS_AUTH_KEY_I2R] = "fractos v7 key i2r",
	[FOS_AUTH_KEY_R2I] = "fractos v7 key r2i",
};

static void fos_auth_release(struct kref *ref)
{
	struct fos_auth_key *key = container_of(ref, struct fos_auth_key, ref);

	crypto_free_shash(key->tfm);
	kfree(key);
}

/**
 * fos_auth_put - drop a reference on a key
 * @key: the key, or NULL
 *
 * Process context: the last reference frees the transform.
 */
void fos_auth_put(struct fos_auth_key *key)
{
	might_sleep();
	if (key)
		kref_put(&key->ref, fos_auth_release);
}

u32 fos_auth_key_id(const struct fos_auth_key *key)
{
	return key ? key->id : 0;
}

static struct fos_auth_key *fos_auth_key_new(const u8 *secret, size_t len)
{
	u8 digest[FOS_WIRE_MAC_LEN];
	struct fos_auth_key *key;
	__le32 id;
	int ret;

	key = kzalloc(sizeof(*key), GFP_KERNEL);
	if (!key)
		return ERR_PTR(-ENOMEM);
	kref_init(&key->ref);
	key->tfm = crypto_alloc_shash("hmac(sha256)", 0, 0);
	if (IS_ERR(key->tfm)) {
		ret = PTR_ERR(key->tfm);
		kfree(key);
		return ERR_PTR(ret);
	}
	ret = crypto_shash_setkey(key->tfm, secret, len);
	if (!ret)
		ret = crypto_shash_tfm_digest(key->tfm, fos_auth_label_id,
					      sizeof(fos_auth_label_id) - 1,
					      digest);
	if (ret) {
		crypto_free_shash(key->tfm);
		kfree(key);
		return ERR_PTR(ret);
	}
	memcpy(&id, digest, sizeof(id));
	key->id = le32_to_cpu(id) ?: 1;
	memzero_explicit(digest, sizeof(digest));
	return key;
}

/* Forget the previous key of @s and, with @all, the current one too. */
static void fos_auth_slots_clear(struct fos_auth_slots *s, bool all)
{
	lockdep_assert_held(&fos_auth_mutex);
	fos_auth_put(s->prev);
	s->prev = NULL;
	if (all) {
		fos_auth_put(s->cur);
		s->cur = NULL;
	}
}

/* Drop @node's pair slots if they hold nothing any more. */
static void fos_auth_pair_gc(u32 node, struct fos_auth_slots *s)
{
	lockdep_assert_held(&fos_auth_mutex);
	if (s->cur || s->prev)
		return;
	xa_erase(&fos_auth_pairs, node);
	kfree(s);
	fos_auth_npairs--;
}

/* The mode once keys were added or removed (insecure stays insecure). */
static void fos_auth_update_state(void)
{
	lockdep_assert_held(&fos_auth_mutex);
	if (fos_auth_state == FRACTOS_AUTH_INSECURE)
		return;
	fos_auth_state = fos_auth_cluster.cur || fos_auth_cluster.prev ||
			 fos_auth_npairs ? FRACTOS_AUTH_SECRET :
					   FRACTOS_AUTH_NONE;
}

/**
 * fos_auth_set_secret - set the cluster secret or one node's pair key
 * @secret: FRACTOS_AUTH_SECRET_MIN to FRACTOS_AUTH_SECRET_MAX bytes
 * @len: its length
 * @pair: @secret is the key shared with node @node only
 * @node: with @pair, the node
 *
 * The current key of that slot becomes the previous one (the previous one
 * is forgotten), unless @secret is the current one already.  Insecure
 * mode ends.
 *
 * Return: 0, -ENOMEM, or an error of the crypto API (-ENOENT: no
 * hmac(sha256) in this kernel).
 */
int fos_auth_set_secret(const u8 *secret, size_t len, bool pair, u32 node)
{
	struct fos_auth_slots *s, *fresh = NULL;
	struct fos_auth_key *key;
	bool same;
	u32 id;
	int ret = 0;

	might_sleep();
	key = fos_auth_key_new(secret, len);
	if (IS_ERR(key))
		return PTR_ERR(key);
	id = key->id;
	mutex_lock(&fos_auth_mutex);
	s = pair ? xa_load(&fos_auth_pairs, node) : &fos_auth_cluster;
	if (!s) {
		fresh = kzalloc(sizeof(*fresh), GFP_KERNEL);
		ret = fresh ? xa_err(xa_store(&fos_auth_pairs, node, fresh,
					      GFP_KERNEL)) : -ENOMEM;
		if (ret)
			goto out;
		s = fresh;
		fresh = NULL;
		fos_auth_npairs++;
	}
	same = s->cur && s->cur->id == id;
	if (!same) {
		fos_auth_put(s->prev);
		s->prev = s->cur;
		s->cur = key;
		key = NULL;
	}
	if (fos_auth_state == FRACTOS_AUTH_INSECURE)
		fos_auth_state = FRACTOS_AUTH_NONE;
	fos_auth_update_state();
out:
	mutex_unlock(&fos_auth_mutex);
	kfree(fresh);
	fos_auth_put(key);
	if (ret)
		return ret;
	if (!same && pair)
		pr_info("pair key %08x of node %u set\n", id, node);
	else if (!same)
		pr_info("cluster secret %08x set\n", id);
	return 0;
}

/* Forget every key (pair keys too); the mode becomes @state. */
static void fos_auth_drop_all(u8 state)
{
	struct fos_auth_slots *s;
	unsigned long node;

	lockdep_assert_held(&fos_auth_mutex);
	fos_auth_slots_clear(&fos_auth_cluster, true);
	xa_for_each(&fos_auth_pairs, node, s) {
		fos_auth_slots_clear(s, true);
		fos_auth_pair_gc(node, s);
	}
	fos_auth_state = state;
}

/* Insecure mode: no secret, only insecure nodes, no proof. */
void fos_auth_set_insecure(void)
{
	u8 was;

	mutex_lock(&fos_auth_mutex);
	was = fos_auth_state;
	fos_auth_drop_all(FRACTOS_AUTH_INSECURE);
	mutex_unlock(&fos_auth_mutex);
	if (was != FRACTOS_AUTH_INSECURE)
		pr_warn("INSECURE mode: nodes are admitted without authentication\n");
}

/**
 * fos_auth_forget - forget keys
 * @what: which ones (enum fos_auth_forget)
 * @node: with FOS_AUTH_FORGET_PAIR*, the node
 *
 * FOS_AUTH_FORGET_PREVIOUS: every previous key (the cluster's and every
 * pair's).  FOS_AUTH_FORGET_ALL: every key and insecure mode: nobody is
 * admitted.  FOS_AUTH_FORGET_CLUSTER: the cluster secret, current and
 * previous; pair keys stay.  FOS_AUTH_FORGET_PAIR_PREVIOUS and
 * FOS_AUTH_FORGET_PAIR: @node's previous pair key, or both of them.
 * Live connections are not touched.
 *
 * Return: 0, or -ENOENT when @node has no pair key.
 */
int fos_auth_forget(enum fos_auth_forget what, u32 node)
{
	struct fos_auth_slots *s;
	unsigned long idx;
	int ret = 0;

	mutex_lock(&fos_auth_mutex);
	switch (what) {
	case FOS_AUTH_FORGET_PREVIOUS:
		fos_auth_slots_clear(&fos_auth_cluster, false);
		xa_for_each(&fos_auth_pairs, idx, s) {
			fos_auth_slots_clear(s, false);
			fos_auth_pair_gc(idx, s);
		}
		break;
	case FOS_AUTH_FORGET_ALL:
		fos_auth_drop_all(FRACTOS_AUTH_NONE);
		break;
	case FOS_AUTH_FORGET_CLUSTER:
		fos_auth_slots_clear(&fos_auth_cluster, true);
		break;
	case FOS_AUTH_FORGET_PAIR_PREVIOUS:
	case FOS_AUTH_FORGET_PAIR:
		s = xa_load(&fos_auth_pairs, node);
		if (!s) {
			ret = -ENOENT;
			break;
		}
		fos_auth_slots_clear(s, what == FOS_AUTH_FORGET_PAIR);
		fos_auth_pair_gc(node, s);
		break;
	}
	fos_auth_update_state();
	mutex_unlock(&fos_auth_mutex);
	if (what == FOS_AUTH_FORGET_ALL)
		pr_info("every secret forgotten: no node is admitted\n");
	else if (what == FOS_AUTH_FORGET_CLUSTER)
		pr_info("cluster secret forgotten: only pair keys admit nodes\n");
	return ret;
}

/**
 * fos_auth_mode - the admission mode now
 * @info: set: the cluster secrets' ids (0 if none) and the number of
 *	nodes with a pair key
 *
 * Return: enum fractos_auth_mode.
 */
u8 fos_auth_mode(struct fos_auth_info *info)
{
	u8 mode;

	mutex_lock(&fos_auth_mutex);
	mode = fos_auth_state;
	info->key_id = fos_auth_key_id(fos_auth_cluster.cur);
	info->prev_key_id = fos_auth_key_id(fos_auth_cluster.prev);
	info->pairs = fos_auth_npairs;
	mutex_unlock(&fos_auth_mutex);
	return mode;
}

/* A node's keys: its two pair keys and the two cluster secrets. */
#define FOS_AUTH_NODE_KEYS	4

/*
 * How @node is admitted, and the keys that admit it in the order a
 * connection offers them ("Secrets and pair keys"), *@n of them: the mode,
 * FRACTOS_AUTH_NONE too for a node no key admits.
 */
static int fos_auth_keys_of(u32 node, struct fos_auth_key *k[FOS_AUTH_NODE_KEYS],
			    unsigned int *n)
{
	struct fos_auth_slots *s;

	lockdep_assert_held(&fos_auth_mutex);
	*n = 0;
	if (fos_auth_state != FRACTOS_AUTH_SECRET)
		return fos_auth_state;
	s = xa_load(&fos_auth_pairs, node);
	if (s && s->cur)
		k[(*n)++] = s->cur;
	if (s && s->prev)
		k[(*n)++] = s->prev;
	if (fos_auth_cluster.cur)
		k[(*n)++] = fos_auth_cluster.cur;
	if (fos_auth_cluster.prev)
		k[(*n)++] = fos_auth_cluster.prev;
	return *n ? FRACTOS_AUTH_SECRET : FRACTOS_AUTH_NONE;
}

/**
 * fos_auth_node_keys - the pair keys of a node, for NODE_LIST
 * @node: the node
 * @cur: set to its pair key's id, 0 if none
 * @prev: set to its previous pair key's id, 0 if none
 */
void fos_auth_node_keys(u32 node, u32 *cur, u32 *prev)
{
	struct fos_auth_slots *s;

	mutex_lock(&fos_auth_mutex);
	s = xa_load(&fos_auth_pairs, node);
	*cur = s ? fos_auth_key_id(s->cur) : 0;
	*prev = s ? fos_auth_key_id(s->prev) : 0;
	mutex_unlock(&fos_auth_mutex);
}

/**
 * fos_auth_current - the keys a connection attempt of ours to @node offers
 * @node: the node we connect to
 * @key: set to a reference on the first (fos_auth_put()), NULL unless the
 *	mode is FRACTOS_AUTH_SECRET
 * @alt_id: set to the second one's key id, 0 if none
 *
 * Return: enum fractos_auth_mode, FRACTOS_AUTH_NONE too when no key
 * admits @node.
 */
int fos_auth_current(u32 node, struct fos_auth_key **key, u32 *alt_id)
{
	struct fos_auth_key *k[FOS_AUTH_NODE_KEYS];
	unsigned int n;
	int mode;

	might_sleep();
	mutex_lock(&fos_auth_mutex);
	mode = fos_auth_keys_of(node, k, &n);
	*key = n ? k[0] : NULL;
	if (*key)
		kref_get(&k[0]->ref);
	*alt_id = n > 1 ? k[1]->id : 0;
	mutex_unlock(&fos_auth_mutex);
	return mode;
}

/**
 * fos_auth_find - the key a connection with @node names
 * @node: the node at the other end
 * @key_id: the key id it named
 * @key: set to a reference on the key of @node's with that id, or NULL
 *	if none has it
 *
 * Return: enum fractos_auth_mode, FRACTOS_AUTH_NONE too when no key
 * admits @node.
 */
int fos_auth_find(u32 node, u32 key_id, struct fos_auth_key **key)
{
	struct fos_auth_key *k[FOS_AUTH_NODE_KEYS];
	unsigned int n, i;
	int mode;

	might_sleep();
	*key = NULL;
	mutex_lock(&fos_auth_mutex);
	mode = fos_auth_keys_of(node, k, &n);
	for (i = 0; i < n; i++) {
		if (k[i]->id == key_id) {
			kref_get(&k[i]->ref);
			*key = k[i];
			break;
		}
	}
	mutex_unlock(&fos_auth_mutex);
	return mode;
}

/**
 * fos_auth_mac - the MAC of one side of a handshake
 * @key: the secret, or NULL in insecure mode (the MAC is all zeroes)
 * @role: whose MAC
 * @t: both hellos, as sent
 * @mac: FOS_WIRE_MAC_LEN bytes, set
 */
void fos_auth_mac(const struct fos_auth_key *key, enum fos_auth_role role,
		  const struct fos_auth_transcript *t, u8 *mac)
{
	const char *label = fos_auth_labels[role];
	int ret;

	memset(mac, 0, FOS_WIRE_MAC_LEN);
	if (!key)
		return;
	{
		SHASH_DESC_ON_STACK(desc, key->tfm);

		desc->tfm = key->tfm;
		ret = crypto_shash_init(desc) ?:
		      crypto_shash_update(desc, label, strlen(label)) ?:
		      crypto_shash_update(desc, (const u8 *)t->init,
					  sizeof(*t->init)) ?:
		      crypto_shash_update(desc, (const u8 *)t->resp,
					  sizeof(*t->resp)) ?:
		      crypto_shash_final(desc, mac);
		shash_desc_zero(desc);
	}
	/* hmac(sha256) in software does not fail; if it did, no MAC verifies. */
	if (WARN_ON_ONCE(ret))
		get_random_bytes(mac, FOS_WIRE_MAC_LEN);
}

/**
 * fos_auth_verify - check the other side's MAC
 * @key: the secret, or NULL in insecure mode
 * @role: whose MAC @mac is
 * @t: both hellos, as sent
 * @mac: what the other side sent
 *
 * Return: it is the MAC of @t with @key (compared in constant time).
 */
bool fos_auth_verify(const struct fos_auth_key *key, enum fos_auth_role role,
		     const struct fos_auth_transcript *t, const u8 *mac)
{
	u8 want[FOS_WIRE_MAC_LEN];
	bool ok;

	fos_auth_mac(key, role, t, want);
	ok = !crypto_memneq(want, mac, FOS_WIRE_MAC_LEN);
	memzero_explicit(want, sizeof(want));
	return ok;
}

/**
 * fos_auth_session - the session keys of a connection
 * @key: the handshake's secret, or NULL in insecure mode (zero keys)
 * @t: both hellos, as sent
 * @i2r: set: the key of what the initiator sends
 * @r2i: set: the key of what the responder sends
 *
 * Each is the first 128 bits of the handshake MAC of its label, so that a
 * relay that forwarded the handshake without the secret knows neither.
 */
void fos_auth_session(const struct fos_auth_key *key,
		      const struct fos_auth_transcript *t,
		      siphash_key_t *i2r, siphash_key_t *r2i)
{
	__le64 mac[FOS_WIRE_MAC_LEN / sizeof(__le64)];

	fos_auth_mac(key, FOS_AUTH_KEY_I2R, t, (u8 *)mac);
	i2r->key[0] = le64_to_cpu(mac[0]);
	i2r->key[1] = le64_to_cpu(mac[1]);
	fos_auth_mac(key, FOS_AUTH_KEY_R2I, t, (u8 *)mac);
	r2i->key[0] = le64_to_cpu(mac[0]);
	r2i->key[1] = le64_to_cpu(mac[1]);
	memzero_explicit(mac, sizeof(mac));
}

void fos_auth_exit(void)
{
	mutex_lock(&fos_auth_mutex);
	fos_auth_drop_all(FRACTOS_AUTH_NONE);
	mutex_unlock(&fos_auth_mutex);
	xa_destroy(&fos_auth_pairs);
}
