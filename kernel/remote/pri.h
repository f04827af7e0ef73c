/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fractos: the private header of kernel/remote/ (objects of other nodes,
 * see "Remote objects" in remote.c) - the structures, tables, queues and
 * functions that its files share.  Of the rest of the module it uses fos.h,
 * the family headers (memory.h, name.h, request.h) and fabric.h only.
 */
#ifndef FRACTOS_REMOTE_PRI_H
#define FRACTOS_REMOTE_PRI_H

#include <linux/completion.h>
#include <linux/list.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include "../fos.h"
#include "../fabric.h"
#include "wire.h"

/* How long an invoker waits for the owner's answer. */
#define FOS_REMOTE_TIMEOUT	(10 * HZ)

/*
 * How long the sender of an INVOKE that hands a Memory over waits: more,
 * since a node that forwards it may wait up to 5 s for a send credit
 * (FOS_SEND_WAIT) before the next node's grant_ms starts (handover.c).
 */
#define FOS_GRANT_TIMEOUT	(FOS_REMOTE_TIMEOUT + 5 * HZ)

/**
 * struct fos_view - what a description names of an object
 * @off: start (Memory; 0 for a Request)
 * @len: length (Memory; 0 for a Request)
 * @perms: FRACTOS_PERM_* (Memory; 0 for a Request)
 */
struct fos_view {
	u64 off;
	u64 len;
	u32 perms;
};

/**
 * struct fos_proxy - what a proxy object stands for
 * @hnode: in fos_proxies, under fos_proxy_lock
 * @nnode: in fos_proxy_nodes, the proxies by owner node (a node's death
 *	visits its own proxies only), under fos_proxy_lock
 * @obj: the proxy object; no reference (freeing it unhashes us first)
 * @node: the owner node
 * @epoch: the owner's epoch
 * @oid: the object id on the owner
 * @hashed: in fos_proxies and fos_proxy_nodes, under fos_proxy_lock
 * @units: descriptions of the object received into this proxy, under
 *	fos_proxy_lock; DROP gives them back
 * @drop: the DROP event, allocated with the proxy so that freeing it
 *	never fails to send one
 */
struct fos_proxy {
	struct hlist_node hnode;
	struct hlist_node nnode;
	struct fos_object *obj;
	u32 node;
	u32 epoch;
	u64 oid;
	bool hashed;
	u64 units;
	struct fos_event *drop;
};

/**
 * struct fos_rpc_wait - a call waiting for its answer (rpc.c)
 * @done: completed by the answer or by the node's death (fos_rpc())
 * @sent: the message was handed to the fabric (it may have arrived)
 * @answered: the answer arrived (@status is the peer's)
 * @node: the node that must answer
 * @reply: the message type of the answer (ACK, LOOKUP_REPLY, GRANT_REPLY)
 * @status: 0 or a negative errno
 * @cap: LOOKUP_REPLY: the capability, resolved on receipt (a reference
 *	the caller drops)
 * @grant: GRANT_REPLY: the grant
 * @data: fos_rpc_data(): where an inline GRANT_REPLY's bytes go, else NULL
 * @data_max: bytes at @data
 * @data_len: bytes the answer put at @data (0: it was not inline)
 * @fn: fos_rpc_async(): the callback that gets the answer, else NULL
 * @cookie: fos_rpc_async(): the call's key in fos_rpcs
 * @state: fos_rpc_async(): where the call is (rpc.c), under fos_rpcs'
 *	xa_lock
 * @work: fos_rpc_async(): runs @fn once answered
 * @timer: fos_rpc_async(): gives up after FOS_REMOTE_TIMEOUT plus the grace
 *	period
 */
struct fos_rpc_wait {
	struct completion done;
	bool sent;
	bool answered;
	u32 node;
	u8 reply;
	int status;
	struct fos_cap cap;
	struct fos_wire_grant_reply grant;
	void *data;
	u32 data_max;
	u32 data_len;
	void (*fn)(struct fos_rpc_wait *w);
	u32 cookie;
	u8 state;
	struct work_struct work;
	struct delayed_work timer;
};

enum fos_event_kind {
	FOS_EV_NOTICE,		/* send a REVOKE notice */
	FOS_EV_DOWN,		/* a node (epoch) is gone (on fos_downs) */
	FOS_EV_GRANT_END,	/* send GRANT_END */
	FOS_EV_DROP,		/* send DROP */
	FOS_EV_RELEASE,		/* send RELEASE */
	FOS_EV_SEND,		/* send @payload as message @type */
};

/**
 * struct fos_event - work deferred to fos_remote_wq, done in order
 * @link: on fos_events
 * @kind: enum fos_event_kind
 * @type: FOS_EV_NOTICE, FOS_EV_SEND: the message type
 * @node: the node concerned
 * @epoch: NOTICE, DROP: the object's epoch; DOWN: the dead epoch, 0 for
 *	all; GRANT_END: the grant id
 * @oid: NOTICE, DROP: the object id; GRANT_END: the puller's token;
 *	RELEASE: the grant id
 * @holder: DROP: the holder whose descriptions end
 * @count: DROP: how many
 * @len: SEND: bytes at @payload
 * @payload: SEND: the message
 */
struct fos_event {
	struct list_head link;
	u8 kind;
	u8 type;
	u32 node;
	u32 epoch;
	u64 oid;
	u32 holder;
	u64 count;
	u32 len;
	u8 payload[];
};

/* events.c: work deferred to fos_remote_wq, node deaths */
extern struct workqueue_struct *fos_remote_wq;
extern struct list_head fos_events;
extern struct work_struct fos_downs_work;
void fos_event_queue(u8 kind, u8 type, u32 node, u32 epoch, u64 oid,
		     gfp_t gfp);
void fos_drop_queue(struct fos_event *ev, u32 owner, u32 epoch,
		    u64 oid, u32 holder, u64 count);
void fos_events_flush(void);
/* What fos_event_queue_msg() queues at most when bounded. */
#define FOS_SENDS_QUEUED_MAX	4096
bool fos_event_queue_msg(u8 type, u32 node, const void *payload, u32 len,
			 bool bounded, gfp_t gfp);

/* armed.c: contacts of other nodes' spaces, told if that node is lost */
u64 fos_remote_contact_arm(const struct fos_cap *req, u32 id, u32 *node);
void fos_remote_contact_disarm(u32 node, u64 handle);
void fos_contact_recv(struct fos_peer *peer, const struct fos_rx_info *rx,
		      const void *payload, u32 len);
void fos_armed_node_lost(u32 node, u32 epoch);
void fos_armed_end_revoked(void);
void fos_armed_drop_all(void);

/* export.c: the export table */
extern struct xarray fos_exports;
int fos_export_add(struct fos_object *obj, u32 node, u32 epoch,
		   const struct fos_view *v);
struct fos_object *fos_export_get_atomic(u64 oid, struct fos_peer *peer);
struct fos_object *fos_export_get(u64 oid, struct fos_peer *peer,
				  const struct fos_view *v);
struct fos_object *fos_export_get_held(u64 oid, u32 node, u32 epoch,
				       const struct fos_view *v);
int fos_export_count(u64 oid, u32 node, u32 epoch,
		     const struct fos_view *v, struct fos_peer *from);
int fos_export_put(u64 oid, u32 node, u32 epoch, u64 count,
		   const u32 *by);
void fos_exports_drop_node(u32 node, u32 epoch);

/* proxy.c: the proxy table */
struct fos_object *fos_proxy_get(u32 node, u32 epoch, u64 oid,
				 u32 type);
void fos_proxies_revoke_node(u32 node, u32 epoch);
struct fos_object *fos_obj_root(struct fos_object *obj);

/* wirecap.c: capabilities on the wire */
int fos_cap_import(struct fos_object *obj, u32 node,
		   const struct fos_view *v);
void fos_wire_cap_name(struct fos_wire_cap *wc, struct fos_object *obj,
		       const struct fos_cap *cap);
int fos_cap_describe(const struct fos_cap *cap, u32 node, u32 epoch,
		     struct fos_wire_cap *wc);
void fos_cap_undescribe(const struct fos_wire_cap *wc, u32 node,
			u32 epoch);
void fos_export_put_looped(u64 oid, u32 epoch, u32 from);
struct fos_looped_put;
struct fos_looped_put *fos_looped_put_alloc(void);
void fos_looped_put_later(struct fos_looped_put *lp, u64 oid, u32 epoch);
void fos_looped_puts_flush(void);
void fos_cap_disown(const struct fos_wire_cap *wc, u32 from);
int fos_view_check(struct fos_object *obj, const struct fos_cap *cap);
int fos_cap_resolve(struct fos_peer *peer, const struct fos_wire_cap *wc,
		    struct fos_cap *out);

/* rpc.c: a message and its answer */
extern struct xarray fos_rpcs;
extern struct workqueue_struct *fos_rpc_wq;
int fos_rpc_post(struct fos_peer *peer, u8 type, const void *payload,
		 u32 len);
int fos_rpc_timeout(struct fos_peer *peer, u8 type,
		    const void *payload, u32 len,
		    struct fos_rpc_wait *w, unsigned long timeout);
int fos_rpc(struct fos_peer *peer, u8 type, const void *payload,
	    u32 len, struct fos_rpc_wait *w);
int fos_rpc_data(struct fos_peer *peer, u8 type, const void *payload,
		 u32 len, struct fos_rpc_wait *w, void *data, u32 data_max);
int fos_rpc_async(struct fos_peer *peer, u8 type, const void *payload,
		  u32 len, struct fos_rpc_wait *w);
bool fos_rpc_complete(struct fos_peer *peer, u8 reply, u64 cookie,
		      int status, const struct fos_cap *cap,
		      const struct fos_wire_grant_reply *grant,
		      const void *data, u32 data_len);
void fos_rpcs_fail_node(u32 node);

/* call.c: invoke, revoke and lookup; the owner's receive handlers */
int fos_send_ack(struct fos_peer *peer, u64 cookie, int status);
int fos_invoke_deliver(struct fos_peer *peer, u64 cookie,
		       const struct fos_wire_invoke *iv);
void fos_lookup_serve(struct fos_peer *peer, u64 cookie,
		      const struct fos_wire_lookup *l);

/* grant.c: grants, the source's side of a remote copy */
extern struct xarray fos_grants;
void fos_grants_end_revoked(void);
void fos_grants_drop_node(u32 node, u32 epoch);
void fos_grant_end_sent(u32 id, u32 node);
int fos_grant_serve(struct fos_peer *peer, const struct fos_wire_grant *w,
		    struct fos_wire_grant_reply *r);
int fos_grant_inline(struct fos_peer *peer, u64 cookie,
		     const struct fos_wire_grant *w);

/**
 * struct fos_pull - a copy being pulled, or a kept region, for GRANT_END
 * @node: the source's owner
 * @ended: GRANT_END arrived: post no further READ
 * @kept: a kept region's (kept.c): GRANT_END has it released
 *
 * On the puller's stack, or in its struct fos_kept, in fos_pulls (the
 * token is its index) while the copy runs or the region is kept.
 */
struct fos_pull {
	u32 node;
	bool ended;
	bool kept;
};

/* copy.c: memory_copy across nodes */
extern struct workqueue_struct *fos_copy_wq;
bool fos_copy_cut(int ret);
int fos_copy_pull(const struct fos_wire_cap *src, u64 soff,
		  const struct fos_cap *dst, u64 doff, u64 len,
		  unsigned long until, bool own);
int fos_pull_track(struct fos_pull *p, u32 *token);
void fos_pull_forget(u32 token);
int fos_copy_region(struct fos_peer *peer, struct fos_mem *mem, u64 moff,
		    u64 len, u64 addr, u32 rkey, u64 tag, const bool *ended,
		    bool write);
/* kept.c: the puller's kept regions ("Kept regions") */
int fos_kept_copy(struct fos_peer *peer, const struct fos_wire_cap *rv,
		  u64 roff, struct fos_mem *mem, u64 moff, u64 len, bool write);
void fos_kept_kick(void);
bool fos_kept_on(void);
int fos_kept_copy_to(struct fos_peer *peer, u32 node, u32 pepoch,
		     const struct fos_cap *src, u64 soff,
		     const struct fos_cap *dst, u64 doff, u64 len);
void fos_kept_drop_node(u32 node, u32 epoch);
void fos_kept_exit(void);
u64 fos_copy_inline_max(void);
int fos_copy_errno(int ret);
int fos_copy_describe(const struct fos_cap *cap, u32 node, u32 epoch,
		      struct fos_wire_cap *wc);
void fos_copy_undescribe(const struct fos_wire_cap *wc, u32 node, u32 epoch);
/* push.c: pushed copies, and those that carry their continuations */
int fos_copy_push(struct fos_peer *peer, u32 pepoch,
		  const struct fos_cap *src, u64 soff,
		  const struct fos_cap *dst, u64 doff, u64 len,
		  struct fos_wire_copy *c);
void fos_copy_recv_inline(struct fos_peer *peer, u64 cookie,
			  const struct fos_wire_copy *c);
void fos_copy_then_deliver(struct fos_peer *peer, u64 cookie,
			   const struct fos_wire_then *t, int status);
/* call.c: forwarded invocations ("Forwarding" in remote.c) */
extern struct workqueue_struct *fos_forward_wq;
/* handover.c: another node's MEMORY_GRANT, copied here on arrival */
struct fos_req;
int fos_handover_granted(struct fos_peer *peer, const struct fos_wire_cap *wc);
u32 fos_handover_ms_left(const struct fos_object *obj);
int fos_handover_queue(struct fos_peer *peer, u64 cookie,
		       struct fos_object *obj, struct fos_req *req,
		       const u8 *imm, u32 imm_len, struct fos_cap *caps,
		       u32 ncaps, u32 granted, u32 grant_ms);
int fos_copy_local_view(struct fos_peer *peer,
			const struct fos_wire_cap *wc, u32 perm,
			u64 off, u64 len, struct fos_cap *out);

/*
 * A node, or one epoch of it (@epoch), is gone - its connection went
 * down, it restarted, or it was deleted (@epoch 0: every epoch).  The
 * fabric calls it (fos_fabric_set_node_down()) in process context, under
 * no lock (it allocates with __GFP_NOFAIL).
 */
void fos_remote_node_down(u32 node, u32 epoch);

/* The entry points of struct fos_remote_ops (remote.c registers them). */
bool fos_remote_invoke_wanted(struct fos_object *target);
int fos_remote_invoke(struct fos_object *target, const u8 *imm, u32 imm_len,
		      const struct fos_cap *caps, u32 ncaps, u32 flags,
		      struct fos_invoke_done *done);
int fos_remote_revoke(struct fos_object *obj);
bool fos_remote_grants_out(void);
void fos_remote_grants_sync(void);
int fos_remote_lookup(u32 node, const char *name, u32 len,
		      struct fos_cap *out);
int fos_remote_derive(struct fos_object *target, const u8 *imm, u32 imm_len,
		      const struct fos_cap *caps, u32 ncaps,
		      struct fos_cap *out);
void fos_remote_proxy_oid(const struct fos_proxy *p, struct fractos_oid *oid);
void fos_remote_revoke_locked(struct fos_object *obj, struct fos_dead *dead);
void fos_remote_exports_release(struct list_head *list);
void fos_remote_proxy_free(struct fos_proxy *p);
bool fos_remote_copy_wanted(struct fos_object *src, struct fos_object *dst);
int fos_remote_copy(const struct fos_cap *src, u64 soff,
		    const struct fos_cap *dst, u64 doff, u64 len);
int fos_remote_copy_then(const struct fos_cap *src, u64 soff,
			 const struct fos_cap *dst, u64 doff, u64 len,
			 const struct fos_copy_then *then);
int fos_remote_copy_until(const struct fos_cap *src, u64 soff,
			  const struct fos_cap *dst, u64 doff, u64 len,
			  unsigned long until);

/* Receive handlers, registered with the fabric by remote.c. */
void fos_invoke_recv(struct fos_peer *peer, const struct fos_rx_info *rx,
		     const void *payload, u32 len);
int fos_invoke_recv_atomic(struct fos_peer *peer,
			   const struct fos_rx_info *rx, const void *payload,
			   u32 len);
void fos_ack_recv(struct fos_peer *peer, const struct fos_rx_info *rx,
		  const void *payload, u32 len);
void fos_revoke_recv(struct fos_peer *peer, const struct fos_rx_info *rx,
		     const void *payload, u32 len);
void fos_revoke_req_recv(struct fos_peer *peer, const struct fos_rx_info *rx,
			 const void *payload, u32 len);
void fos_import_recv(struct fos_peer *peer, const struct fos_rx_info *rx,
		     const void *payload, u32 len);
void fos_drop_recv(struct fos_peer *peer, const struct fos_rx_info *rx,
		   const void *payload, u32 len);
void fos_lookup_recv(struct fos_peer *peer, const struct fos_rx_info *rx,
		     const void *payload, u32 len);
void fos_derive_recv(struct fos_peer *peer, const struct fos_rx_info *rx,
		     const void *payload, u32 len);
void fos_lookup_reply_recv(struct fos_peer *peer,
			   const struct fos_rx_info *rx,
			   const void *payload, u32 len);
void fos_copy_recv(struct fos_peer *peer, const struct fos_rx_info *rx,
		   const void *payload, u32 len);
void fos_grant_recv(struct fos_peer *peer, const struct fos_rx_info *rx,
		    const void *payload, u32 len);
void fos_grant_reply_recv(struct fos_peer *peer,
			  const struct fos_rx_info *rx,
			  const void *payload, u32 len);
void fos_grant_end_recv(struct fos_peer *peer, const struct fos_rx_info *rx,
			const void *payload, u32 len);
void fos_release_recv(struct fos_peer *peer, const struct fos_rx_info *rx,
		      const void *payload, u32 len);

#endif /* FRACTOS_REMOTE_PRI_H */
