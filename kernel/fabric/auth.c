// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: admission - the cluster secrets and the handshake's MACs.
 *
 * DOC: Cluster secrets
 *
 * A node admits another only when both prove that they hold the same
 * cluster secret (wire.h, "Admission").  The admin sets it over netlink
 * (genl.c, CAP_NET_ADMIN); it is kept only as an hmac(sha256) transform
 * keyed with it, and never leaves the kernel.  Two are kept: the current
 * one, which this node's connection attempts use, and the one it replaced,
 * still accepted from initiators that name it, so that a secret can be
 * rotated node by node without a partition and without touching live
 * connections.  A key id (four bytes of an HMAC of the secret) names a
 * secret on the wire and in STATS.
 *
 * Modes: NONE after load (every node is refused), SECRET, or INSECURE
 * when the admin asked for it explicitly (only insecure nodes are
 * admitted, without any proof).
 *
 * Lifetime: a struct fos_auth_key is counted (kref): one reference for its
 * slot (current or previous), one per connection handshake that uses it.
 * Locking: fos_auth_lock, a leaf spinlock, protects the mode and the two
 * slots; keys themselves are immutable once published, so that MACs are
 * computed without any lock (the hash state is on the caller's stack).
 */
#include <crypto/algapi.h>
#include <crypto/hash.h>
#include <linux/kref.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/fractos_netlink.h>
#include "../fos.h"
#include "../wire.h"
#include "auth.h"

/**
 * struct fos_auth_key - one cluster secret
 * @ref: see "Lifetime" above
 * @id: its key id, never 0
 * @tfm: hmac(sha256) keyed with the secret
 */
struct fos_auth_key {
	struct kref ref;
	u32 id;
	struct crypto_shash *tfm;
};

static DEFINE_SPINLOCK(fos_auth_lock);
/* Under fos_auth_lock: */
static u8 fos_auth_state = FRACTOS_AUTH_NONE;
static struct fos_auth_key *fos_auth_cur;
static struct fos_auth_key *fos_auth_prev;

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

/**
 * fos_auth_set_secret - make @secret the cluster secret
 * @secret: FRACTOS_AUTH_SECRET_MIN to FRACTOS_AUTH_SECRET_MAX bytes
 * @len: its length
 *
 * The current secret becomes the previous one (the previous one is
 * forgotten), unless @secret is the current one already.
 *
 * Return: 0, -ENOMEM, or an error of the crypto API (-ENOENT: no
 * hmac(sha256) in this kernel).
 */
int fos_auth_set_secret(const u8 *secret, size_t len)
{
	struct fos_auth_key *key, *old = NULL;
	u32 id;
	bool same;

	key = fos_auth_key_new(secret, len);
	if (IS_ERR(key))
		return PTR_ERR(key);
	id = key->id;
	spin_lock(&fos_auth_lock);
	same = fos_auth_cur && fos_auth_cur->id == id;
	if (!same) {
		old = fos_auth_prev;
		fos_auth_prev = fos_auth_cur;
		fos_auth_cur = key;
		key = NULL;
	}
	fos_auth_state = FRACTOS_AUTH_SECRET;
	spin_unlock(&fos_auth_lock);
	fos_auth_put(old);
	fos_auth_put(key);
	if (!same)
		pr_info("fractos: cluster secret %08x set\n", id);
	return 0;
}

/*
 * Forget the previous secret and, with @all, the current one too, the
 * mode becoming @state.  Return: the mode before.
 */
static u8 fos_auth_drop(bool all, u8 state)
{
	struct fos_auth_key *cur = NULL, *prev;
	u8 was;

	spin_lock(&fos_auth_lock);
	was = fos_auth_state;
	prev = fos_auth_prev;
	fos_auth_prev = NULL;
	if (all) {
		cur = fos_auth_cur;
		fos_auth_cur = NULL;
		fos_auth_state = state;
	}
	spin_unlock(&fos_auth_lock);
	fos_auth_put(cur);
	fos_auth_put(prev);
	return was;
}

/* Insecure mode: no secret, only insecure nodes, no proof. */
void fos_auth_set_insecure(void)
{
	if (fos_auth_drop(true, FRACTOS_AUTH_INSECURE) != FRACTOS_AUTH_INSECURE)
		pr_warn("fractos: INSECURE mode: nodes are admitted without authentication\n");
}

/**
 * fos_auth_forget - forget the previous secret, or everything
 * @all: also the current secret and insecure mode: nobody is admitted
 */
void fos_auth_forget(bool all)
{
	fos_auth_drop(all, FRACTOS_AUTH_NONE);
	if (all)
		pr_info("fractos: cluster secrets forgotten: no node is admitted\n");
}

/**
 * fos_auth_mode - the admission mode now
 * @key_id: set to the current secret's id, 0 if none
 * @prev_key_id: set to the previous secret's id, 0 if none
 *
 * Return: enum fractos_auth_mode.
 */
u8 fos_auth_mode(u32 *key_id, u32 *prev_key_id)
{
	u8 mode;

	spin_lock(&fos_auth_lock);
	mode = fos_auth_state;
	*key_id = fos_auth_key_id(fos_auth_cur);
	*prev_key_id = fos_auth_key_id(fos_auth_prev);
	spin_unlock(&fos_auth_lock);
	return mode;
}

static struct fos_auth_key *fos_auth_get(struct fos_auth_key *key)
{
	lockdep_assert_held(&fos_auth_lock);
	if (key)
		kref_get(&key->ref);
	return key;
}

/**
 * fos_auth_current - the secrets a connection attempt of ours offers
 * @key: set to a reference on the current one (fos_auth_put()), NULL
 *	unless the mode is FRACTOS_AUTH_SECRET
 * @alt_id: set to the previous one's key id, 0 if none
 *
 * Return: enum fractos_auth_mode.
 */
int fos_auth_current(struct fos_auth_key **key, u32 *alt_id)
{
	int mode;

	spin_lock(&fos_auth_lock);
	mode = fos_auth_state;
	*key = fos_auth_get(fos_auth_cur);
	*alt_id = fos_auth_key_id(fos_auth_prev);
	spin_unlock(&fos_auth_lock);
	return mode;
}

/**
 * fos_auth_find - the secret an initiator named
 * @key_id: its key id
 * @key: set to a reference on the current or the previous secret with
 *	that id, or NULL if neither has it
 *
 * Return: enum fractos_auth_mode.
 */
int fos_auth_find(u32 key_id, struct fos_auth_key **key)
{
	struct fos_auth_key *k = NULL;
	int mode;

	spin_lock(&fos_auth_lock);
	mode = fos_auth_state;
	if (fos_auth_cur && fos_auth_cur->id == key_id)
		k = fos_auth_cur;
	else if (fos_auth_prev && fos_auth_prev->id == key_id)
		k = fos_auth_prev;
	*key = fos_auth_get(k);
	spin_unlock(&fos_auth_lock);
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
	fos_auth_drop(true, FRACTOS_AUTH_NONE);
}
