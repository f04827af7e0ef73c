/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fractos: admission of peers - the cluster secrets, the pair keys and
 * the MACs of the connection handshake (wire.h, "Admission").  auth.c owns
 * the keys; cm.c and rx.c run the handshake with them.
 */
#ifndef FRACTOS_FABRIC_AUTH_H
#define FRACTOS_FABRIC_AUTH_H

#include <linux/siphash.h>
#include <linux/types.h>

struct fos_auth_key;
struct fos_wire_hello;

/*
 * The two halves of the handshake's transcript, as sent: the initiator's
 * hello and the responder's.
 */
struct fos_auth_transcript {
	const struct fos_wire_hello *init;
	const struct fos_wire_hello *resp;
};

/*
 * Which MAC: the responder's (in the accept), the initiator's (AUTH), or
 * one of the two session keys ("Channel binding" in wire.h).
 */
enum fos_auth_role {
	FOS_AUTH_ACCEPT,
	FOS_AUTH_INITIATOR,
	FOS_AUTH_KEY_I2R,
	FOS_AUTH_KEY_R2I,
};

/* What fos_auth_forget() forgets. */
enum fos_auth_forget {
	FOS_AUTH_FORGET_PREVIOUS,	/* every previous key */
	FOS_AUTH_FORGET_ALL,		/* every key, insecure mode too */
	FOS_AUTH_FORGET_CLUSTER,	/* the cluster secret, both slots */
	FOS_AUTH_FORGET_PAIR_PREVIOUS,	/* one node's previous pair key */
	FOS_AUTH_FORGET_PAIR,		/* both of one node's pair keys */
};

/* STATS: the cluster secrets' key ids (0: none), nodes with a pair key. */
struct fos_auth_info {
	u32 key_id;
	u32 prev_key_id;
	u32 pairs;
};

int fos_auth_set_secret(const u8 *secret, size_t len, bool pair, u32 node);
void fos_auth_set_insecure(void);
int fos_auth_forget(enum fos_auth_forget what, u32 node);
u8 fos_auth_mode(struct fos_auth_info *info);
void fos_auth_node_keys(u32 node, u32 *cur, u32 *prev);

int fos_auth_current(u32 node, struct fos_auth_key **key, u32 *alt_id);
int fos_auth_find(u32 node, u32 key_id, struct fos_auth_key **key);
void fos_auth_put(struct fos_auth_key *key);
u32 fos_auth_key_id(const struct fos_auth_key *key);

void fos_auth_mac(const struct fos_auth_key *key, enum fos_auth_role role,
		  const struct fos_auth_transcript *t, u8 *mac);
bool fos_auth_verify(const struct fos_auth_key *key, enum fos_auth_role role,
		     const struct fos_auth_transcript *t, const u8 *mac);
void fos_auth_session(const struct fos_auth_key *key,
		      const struct fos_auth_transcript *t,
		      siphash_key_t *i2r, siphash_key_t *r2i);

void fos_auth_exit(void);

#endif /* FRACTOS_FABRIC_AUTH_H */
