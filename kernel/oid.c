// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: the names objects have outside the kernel.
 */
#include <linux/random.h>
#include <linux/siphash.h>
#include "fos.h"

/*
 * Object ids outside the kernel.  Ids are handed out in order, which
 * says how many objects a node made and when, and would let a peer guess
 * the names of objects it was never given.  So what leaves the kernel -
 * CAP_INFO, fdinfo, every object id on the wire - is a keyed permutation
 * of the id: a four-round Feistel network over its two 32-bit halves with
 * SipHash as the round function, keyed afresh at every module load (as
 * the epoch is).  Distinct ids stay distinct, and an id the node never
 * gave out maps back to one it most likely never made.
 */
static siphash_key_t fos_oid_key __ro_after_init;

static u32 fos_oid_round(u32 half, unsigned int round)
{
	return (u32)siphash_2u32(half, round, &fos_oid_key);
}

/* The public name of object id @id. */
u64 fos_oid_public(u64 id)
{
	u32 l = upper_32_bits(id), r = lower_32_bits(id), t;
	unsigned int i;

	for (i = 0; i < 4; i++) {
		t = r;
		r = l ^ fos_oid_round(r, i);
		l = t;
	}
	return (u64)l << 32 | r;
}

/* The object id a public name stands for (fos_oid_public()'s inverse). */
u64 fos_oid_private(u64 pub)
{
	u32 l = upper_32_bits(pub), r = lower_32_bits(pub), t;
	unsigned int i;

	for (i = 4; i-- > 0;) {
		t = l;
		l = r ^ fos_oid_round(l, i);
		r = t;
	}
	return (u64)l << 32 | r;
}

/* The global name of @obj: (node, epoch, public id), a proxy's its owner's. */
void fos_obj_oid(struct fos_object *obj, struct fractos_oid *oid)
{
	if (obj->proxy) {
		fos_remote()->proxy_oid(obj->proxy, oid);
		return;
	}
	oid->node = fos_node_id;
	oid->epoch = fos_epoch;
	oid->id = fos_oid_public(obj->id);
}

/* A new key for this module load; before any object is named. */
void fos_oid_init(void)
{
	get_random_bytes(&fos_oid_key, sizeof(fos_oid_key));
}
