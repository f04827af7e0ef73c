// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: remote objects - the owner's side of DERIVE: a Request derived
 * here for another node (FRACTOS_CREATE_AT_OWNER; "Derivation at the
 * owner" in remote.c).  The caller's side is fos_remote_derive(), call.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include "../fos.h"
#include "../request.h"
#include "../fabric.h"
#include "wire.h"
#include "pri.h"

/**
 * struct fos_derive_charge - a Request derived for a peer, counted
 * @charge: the core's handle (struct fos_req_charge)
 * @peer: the peer it counts against (a reference), one unit of its
 *	FOS_PEER_DERIVED (fabric_peer_derived) held while the Request lives
 */
struct fos_derive_charge {
	struct fos_req_charge charge;
	struct fos_peer *peer;
};

static void fos_derive_charge_release(struct fos_req_charge *charge)
{
	struct fos_derive_charge *dc = container_of(charge,
						    struct fos_derive_charge,
						    charge);

	fos_peer_res_put(dc->peer, FOS_PEER_DERIVED);
	fos_peer_put(dc->peer);
	kfree(dc);
}

/* A unit of @peer's bound, or NULL: ENOSPC (the bound) or ENOMEM. */
static struct fos_req_charge *fos_derive_charge(struct fos_peer *peer,
						int *err)
{
	struct fos_derive_charge *dc;

	*err = -ENOSPC;
	if (!fos_peer_res_get(peer, FOS_PEER_DERIVED))
		return NULL;
	*err = -ENOMEM;
	dc = kmalloc(sizeof(*dc), GFP_KERNEL);
	if (!dc) {
		fos_peer_res_put(peer, FOS_PEER_DERIVED);
		return NULL;
	}
	dc->charge.release = fos_derive_charge_release;
	dc->peer = fos_peer_get(peer);
	return &dc->charge;
}

/*
 * Derive from @base with @wc's capabilities (resolved here: each is
 * accounted for whatever happens) and @imm.  Return: the new Request
 * (a reference) or an ERR_PTR.
 */
static struct fos_object *fos_derive_make(struct fos_peer *peer,
					  struct fos_object *base,
					  const struct fos_wire_cap *wc,
					  u32 ncaps, const u8 *imm,
					  u32 imm_len)
{
	u32 i = 0, n = 0, from = fos_peer_node_id(peer);
	struct fos_object *obj = ERR_PTR(-ENOMEM);
	struct fos_req_charge *charge;
	struct fos_kcap **kcaps;
	struct fos_cap *caps;
	struct fos_cap bc = { .obj = base };
	int ret = 0;

	caps = kcalloc(max(ncaps, 1U), sizeof(*caps), GFP_KERNEL);
	kcaps = kcalloc(max(ncaps, 1U), sizeof(*kcaps), GFP_KERNEL);
	if (!caps || !kcaps)
		goto out;
	/* One that fails to resolve is disowned by it, those after below. */
	for (; i < ncaps && !ret; i++) {
		ret = fos_cap_resolve(peer, &wc[i], &caps[n]);
		if (!ret) {
			/* struct fos_kcap is a struct fos_cap and nothing else */
			kcaps[n] = container_of(&caps[n], struct fos_kcap, cap);
			n++;
		}
	}
	if (ret) {
		obj = ERR_PTR(ret);
		goto out;
	}
	charge = fos_derive_charge(peer, &ret);
	obj = charge ? fos_req_derive_for(&bc, imm, imm_len, kcaps, n,
					  charge) : ERR_PTR(ret);
out:
	while (n)
		fos_obj_put(caps[--n].obj);
	for (; i < ncaps; i++)
		fos_cap_disown(&wc[i], from);
	kfree(kcaps);
	kfree(caps);
	return obj;
}

/*
 * DERIVE (wire_check.h checked it), in the connection's work item: the
 * base is a Request of ours that @peer holds; the new one is exported to
 * @peer and answered with LOOKUP_REPLY.
 */
void fos_derive_recv(struct fos_peer *peer, const struct fos_rx_info *rx,
		     const void *payload, u32 len)
{
	const struct fos_wire_invoke *iv = payload;
	const struct fos_wire_cap *wc = (const void *)(iv + 1);
	u32 ncaps = le32_to_cpu(iv->ncaps), imm_len = le32_to_cpu(iv->imm_len);
	u32 node = fos_peer_node_id(peer), epoch = fos_peer_epoch(peer);
	struct fos_wire_lookup_reply r = {};
	struct fos_object *base = NULL, *obj;
	struct fos_cap cap = {};
	u32 i;
	int ret;

	if (le32_to_cpu(iv->epoch) == fos_epoch)
		base = fos_export_get(le64_to_cpu(iv->oid), peer, NULL);
	if (IS_ERR_OR_NULL(base)) {
		ret = base ? PTR_ERR(base) : -EKEYREVOKED;
		for (i = 0; i < ncaps; i++)
			fos_cap_disown(&wc[i], node);
		goto answer;
	}
	if (base->type != FRACTOS_OBJ_REQUEST) {
		for (i = 0; i < ncaps; i++)
			fos_cap_disown(&wc[i], node);
		ret = -EOPNOTSUPP;
		goto put_base;
	}
	obj = fos_derive_make(peer, base, wc, ncaps,
			      (const u8 *)(wc + ncaps), imm_len);
	ret = PTR_ERR_OR_ZERO(obj);
	if (!ret) {
		cap.obj = obj;
		ret = fos_cap_describe(&cap, node, epoch, &r.cap);
		if (ret)
			memset(&r.cap, 0, sizeof(r.cap));
		fos_obj_put(obj);	/* the export keeps it, or nothing */
	}
put_base:
	fos_obj_put(base);
answer:
	r.status = cpu_to_le32(-ret);
	if (fos_fabric_send(peer, FOS_WIRE_LOOKUP_REPLY, rx->cookie, &r,
			    sizeof(r), NULL, FOS_SEND_QUEUE) && !ret)
		fos_cap_undescribe(&r.cap, node, epoch);
}
