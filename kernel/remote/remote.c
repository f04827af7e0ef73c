// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: objects of other nodes - the export table, proxies, remote
 * invocation, revocation across nodes and remote name lookups.
 */

/**
 * DOC: Remote objects
 *
 * An object is named by (node, epoch, oid), oid being its public id
 * (fos_oid_public(): unguessable).  When a capability to a local
 * object is sent to another node (an invocation argument, a name lookup's
 * answer), the object is entered in the *export table* (struct
 * fos_export, keyed by the object's own id) with a reference held, and the receiving node
 * is recorded as an *importer* of it, with a count of the descriptions
 * sent to it ("Holders" in wire.h).  A capability to a third node's object
 * is announced to its owner first (IMPORT, answered), which counts it for
 * the receiver the same way.  Entries go away when the object is revoked
 * (every importer is sent a REVOKE notice, best effort), when the
 * importers gave back every description (DROP: their last capability to
 * the object is gone) or when their nodes are gone.  So an object stays
 * exported exactly while another node may hold it, or a description of it
 * is on its way.  Names used for one operation only (the target of a
 * loopback invocation, the views of a memory_copy) are exported for the
 * call's duration.  An oid that is not in the table (never exported,
 * revoked, or given back) names nothing, and one that is names only the
 * views recorded for the node that sends it: an admitted peer is trusted
 * with nothing it was not sent (Documentation/protocol.rst, "Messages
 * after admission").
 *
 * A capability received from another node becomes a capability to a
 * *proxy* (struct fos_proxy hanging off a struct fos_object of the same
 * type, without owner, contents or parent) that records (node, epoch,
 * oid); the capability keeps the view (off, len, perms) it was sent with.
 * There is at most one live proxy per remote object on a node (the proxy
 * table), so a REVOKE notice finds it; it counts the descriptions it
 * received, and when it is freed unrevoked it gives them back to the owner
 * with DROP (preallocated: freeing never fails to send it).  A revoked
 * proxy sends nothing: the owner revoked the object, was asked to, or its
 * node is gone.  A descriptor that names this node and epoch resolves to
 * the real local object with the view it carries, so an owner that gets
 * its own Memory back uses it at full speed.  One naming a third node
 * makes a proxy to that node's object directly.  A description a message
 * carried but that was not made into a capability (the invocation was
 * refused, the caller of a lookup gave up) is given back at once.
 *
 * Invoking a Request capability whose object is a proxy (or a local
 * revocation-tree child of one, or a Request derived from one) sends
 * INVOKE to the owner and waits (process context) for its ACK: the owner
 * validates everything, resolves every capability, and queues on the
 * provider exactly what a local invocation would queue, or nothing and an
 * errno.  EAGAIN (full queue) is retried by the invoker when
 * FRACTOS_INVOKE_WAIT is set.  An owner answering EKEYREVOKED makes the
 * invoker revoke its proxy.
 *
 * Revocation: revoking a proxy (cap_revoke) asks the owner to revoke the
 * object (REVOKE_REQ, as any local holder may), then revokes the proxy
 * and its local subtree whatever the owner said.  Revoking a local
 * revocation-tree child of a proxy stays local.
 *
 * Node death: when a peer's connection goes down, its epoch changes or it
 * is deleted (the fabric calls fos_remote_node_down(), registered with
 * fos_fabric_set_node_down()), calls waiting on it
 * fail, every proxy of its objects (of that epoch) is revoked - monitors
 * fire as for a local revocation - and it stops being an importer of our
 * objects.  A node that comes back with the same epoch does not get them
 * back.
 *
 * Remote copies: memory_copy where either view is another node's Memory
 * (a proxy or a local child of one), or any memory_copy with
 * fabric_loopback, is done by the owner of the destination with one-sided
 * RDMA, straight from and into the pinned pages (no bounce buffer):
 *
 * - The caller checks the rights and ranges of its own capabilities as
 *   for a local copy.  If it owns the destination it pulls itself,
 *   otherwise it sends COPY (both views, offsets, length) to the
 *   destination's owner and waits for the ACK (10 s plus 1 s per MiB).
 *   So a third-party copy (caller on node 1, source on node 2,
 *   destination on node 3) is COPY 1 -> 3, then 3 pulls from 2.
 * - The puller checks the destination view against its object (WRITE,
 *   range) and, unless the source is its own (then it copies locally;
 *   with fabric_loopback it grants to itself), sends GRANT for the source
 *   range to its owner.  The owner checks the view (READ, range), takes
 *   a reference on the pinned pages and registers a fast-registration
 *   memory region over exactly the pages of that range, remote-read only,
 *   on the PD of its connection to the puller (fabric/rdma.c), and
 *   answers with its address, rkey, a grant id and the bytes granted
 *   (one region spans at most the device's fast-registration page list,
 *   4096 pages: the puller asks again for the rest).
 * - The puller RDMA-READs the granted bytes into its own pages (chunks of
 *   at most 1 MiB, 8 in flight), then sends RELEASE; the owner
 *   deregisters the region - the rkey is dead - and drops its page
 *   reference.  A grant its puller never releases is ended after
 *   FOS_GRANT_TTL (30 s), and all grants of a node's epoch are ended when
 *   that epoch goes down (a restarted node's new grants stay).  Nothing
 *   but granted ranges is ever registered for remote access.
 * - Revocation: a revoked object is not in the export table, so GRANT,
 *   COPY and a local copy all fail with EKEYREVOKED from then on.  A grant
 *   out at the revocation (of its view's object or of an ancestor) is
 *   ended: the owner sends GRANT_END to the puller, which posts no further
 *   READ for that copy (the copy fails with EKEYREVOKED) and sends RELEASE
 *   once the READs it posted have completed; the owner deregisters the
 *   region then.  CAP_REVOKE on the owner, and a holder's REVOKE_REQ
 *   (its wait on fos_copy_wq, answered after), wait for those RELEASEs, at
 *   most FOS_GRANT_END_WAIT (2 s), and deregister what is left themselves
 *   (fos_remote_grants_sync()): when they return, the keys are dead.  It
 *   does not deregister at once because an RDMA READ that hits a dead
 *   rkey is fatal to the RC connection (and so to every proxy of the
 *   node): READs already posted when the object was revoked complete, as
 *   a local copy racing a revoke does, and only a puller that ignores
 *   GRANT_END loses its connection.  Revocations that come from neither
 *   (a space's exit, a node's death) do not wait: their grants end when
 *   released, or FOS_GRANT_END_WAIT after GRANT_END was sent at the
 *   latest (not after it was queued: a send may wait for a credit, and a
 *   key that dies before its puller hears of the end fails its next
 *   READ, and with it the connection).
 * - The owners check everything again: views against their objects,
 *   rights, ranges; an epoch that is not theirs is EKEYREVOKED.  A node
 *   that goes down during a copy makes it fail with EKEYREVOKED (as for
 *   invoke) or EHOSTUNREACH (the connection failed under the READs).
 *   With a grace period (fabric_grace_ms) a connection that fails under
 *   the READs, or ends between a grant and its READs, is not the end of
 *   the copy: the puller releases that grant and asks for the window
 *   again, up to FOS_PULL_RETRIES times, each on the next connection
 *   (GRANT_REPLY names the connection its region is valid on:
 *   "Regions across connections" in fabric/rdma.c).
 *   Overlapping ranges of one remote object give unspecified bytes in the
 *   destination (locally, and with fabric_loopback, EINVAL).
 *
 * Forwarding: a Request derived from a proxy (or a revocation-tree child
 * of one) can be sent to a third node: it is exported as any local
 * object.  An INVOKE of it arrives here; its arguments are resolved in the
 * receive path as for any INVOKE, then a work item on fos_forward_wq (one
 * of the invoker's fabric_peer_work slots, EAGAIN without one) invokes it
 * as a local process would (fos_invoke_k(): the derived arguments
 * first, to the owner at its root), asynchronously, and the ACK to the
 * invoker carries the owner's answer.  The forward's own wait (a send
 * credit, an IMPORT per argument of a third node's, the owner's answer)
 * adds to the invoker's: a forward that starts FOS_REMOTE_TIMEOUT / 2
 * after its INVOKE arrived is answered ETIMEDOUT without being sent, and
 * an ACK that comes after the invoker gave up finds no call (cookies are
 * handed out cyclically, rpc.c), so it is dropped.  Forwards have a
 * workqueue of their own: a peer that never answers IMPORTs holds only
 * its own slots' workers, not those that serve copies.  So storage on node 3 can invoke node 1's
 * launch Request derived from node 2's GPU service: node 1's kernel adds
 * the launch's arguments and no process of node 1 wakes up.
 *
 * Derivation at the owner (FRACTOS_CREATE_AT_OWNER; derive.c): instead
 * of a local child whose invocations come back here to be forwarded, the
 * caller's node sends DERIVE to the owner of the proxy's Request (an
 * INVOKE's layout; a local child of a proxy is refused, as its revocation
 * here could not reach the result), and the owner derives from its
 * Request with the arguments, exports the result to
 * the caller's node and answers LOOKUP_REPLY with it, as a lookup is
 * answered; the caller installs the proxy.  The new Request belongs to no
 * space of the owner's: it lives while some node holds it and dies with
 * the owner's Request.  A peer may have fabric_peer_derived of them alive
 * at a time (a unit of FOS_PEER_DERIVED, given back when the Request is
 * freed; ENOSPC over it), so that a node that derives and never drops
 * cannot make the owner hold without bound.  So a client on node 1 can
 * build a chain whose stages are on nodes 2 and 3, each continuation
 * derived on the node of its stage, and every hop goes straight to the
 * next stage's node: N + 1 messages for N stages, none through node 1.
 *
 * Invocations without an answer (FRACTOS_INVOKE_NOACK): the INVOKE goes
 * with cookie 0, which no call is given (rpc.c), and the call returns
 * once it is sent (fos_invoke_post()): one message instead of two, and no
 * wait for the owner's handler.  The owner treats it as any INVOKE and
 * answers only a refusal: an ACK with cookie 0 and the errno, which the
 * invoker's node counts (totals/noack_refused) and traces
 * (fos_remote_refused).  A forwarder passes it on without an answer too
 * (one message a hop): a refusal further on is then counted and traced
 * by the forwarder's node, whose INVOKE it refused, and one of the
 * forwarder's own (no work slot, too late) by the invoker's.  Nothing
 * else changes: the arguments are described and
 * resolved, every bound holds (a full queue refuses), and a session's
 * retransmission delivers it once.  A looped-back target's export for the
 * call travels with the message, as an argument's description does, and
 * the receiver puts it.  A call that hands a Memory over waits all the
 * same: the answer decides who keeps it.
 *
 * Limits of this step: a Memory view that is a local child of a proxy
 * cannot be sent to another node (EOPNOTSUPP).  Counting errs on the side of
 * keeping objects exported: a DROP lost with its connection (or to
 * ENOMEM), or a description sent in a message the connection lost while
 * the receiver stayed up, keeps the export until the object is revoked or
 * either node goes away.  Every description is resolved in the receive
 * path, before the node-down sweep of its connection can run, so the
 * sweep revokes whatever the owner stops counting then.  One race is
 * left: a connection that comes back up before the owner's sweep of the
 * old one ran (a reconnect faster than fos_remote_wq) has the counts of
 * its first descriptions dropped with the old ones: unless another holder
 * keeps them exported, the receiver's later uses of those objects fail
 * with EKEYREVOKED.
 */

/*
 * Files (kernel/remote/):
 * - remote.c: these comments, setup.
 * - pri.h: the structures, tables and functions the files share.
 * - events.c: the events deferred to fos_remote_wq (REVOKE notices,
 *   DROP, GRANT_END, RELEASE) and the node-down queue.
 * - export.c: the export table.
 * - proxy.c: the proxy table, and REVOKE notices received.
 * - wirecap.c: capabilities on the wire: describe, resolve, give back.
 * - rpc.c: a message and its answer, waited for or called back.
 * - call.c: invoke, revoke and lookup, the caller's side, and the
 *   answers received.
 * - owner.c: the owner's side: INVOKE (delivered or forwarded),
 *   REVOKE_REQ, IMPORT, DROP and LOOKUP received, and the ACK.
 * - grant.c: grants, the source owner's side of a remote copy.
 * - copy.c: memory_copy across nodes: the caller and the puller.
 * - serve.c: COPY, GRANT and LOOKUP served for other nodes, in process
 *   context (fos_copy_wq; the inline COPY and GRANT in the receive path).
 * - kept.c: the regions other nodes keep for this node's repeated copies.
 * - push.c: pushed copies (the bytes in the COPY), and those that carry
 *   their continuations; served in the receive path.
 * - handover.c: a Memory handed over by another node's MEMORY_GRANT,
 *   copied into this node's memory.
 * - armed.c: contacts told of node loss.
 * - trace.c: the tracepoints of trace.h.
 */

/**
 * DOC: Locking
 *
 * The order of all the module's locks is in Documentation/locking.rst.
 *
 * - fos_export_lock (a mutex) protects the export table's contents and
 *   every entry's importers list and @hashed flag; it is taken before
 *   fos_tree_lock, which protects fos_object.export.  An entry is freed by
 *   whoever took it off its object: a revocation (through struct fos_dead)
 *   or the loss of its last importer; a grace period late, since lookups
 *   read the table under RCU first ("Locking" in export.c).
 * - fos_proxy_lock (a spinlock) protects the proxy table and the proxies'
 *   @hashed flags.  Nothing nests inside it.
 * - fos_events_lock protects the deferred events list; fos_rpcs'
 *   xa_lock guards answering the calls in flight (rpc.c).  Both are taken
 *   in the receive softirq (an ACK or GRANT_REPLY, "Receiving in softirq"
 *   in fabric/rx.c), so with bottom halves off everywhere else.
 * - fos_grants' xa_lock guards taking a grant out of the table and its
 *   @ending flag; whoever takes it out frees it (after
 *   cancel_delayed_work_sync() of its TTL, unless the TTL work itself took
 *   it).  Only fos_events_lock nests inside it.
 * - fos_pulls' xa_lock guards the copies being pulled (struct fos_pull,
 *   on their pullers' stacks or in a kept region) and their @ended flags.
 *   Nothing nests inside it.
 * - fos_kept_lock (kept.c) guards the kept regions' list and their use
 *   counts ("Kept regions" in kept.c).  Nothing nests inside it.
 * - fos_armed_lock (armed.c) guards the contacts armed for node loss.
 *   Nothing nests inside it.
 * - Grant ids and pull tokens are handed out cyclically (as rpc.c's
 *   cookies): a RELEASE or GRANT_END that arrives after its grant or copy
 *   ended must not find the next one under the same number.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include "../fos.h"
#include "../fabric.h"
#include "wire.h"
#include "wire_check.h"
#include "pri.h"

/**
 * fos_remote_invoke_wanted - does invoking this local Request go by fabric?
 * @target: a Request object whose provider is on this node
 *
 * Return: whether the fabric loops this node's traffic back
 * (fos_fabric_loopback()): then the invocation goes to this node as to
 * another, and this node, as the owner, adds the Request's arguments.
 */
bool fos_remote_invoke_wanted(struct fos_object *target)
{
	return fos_fabric_loopback();
}

/* ---- setup ---- */

/* Our rows of the fabric's dispatch table. */
static const struct fos_msg_type fos_remote_types[] = {
	{ FOS_WIRE_INVOKE, "invoke", fos_wire_check_invoke, fos_invoke_recv,
	  .recv_atomic = fos_invoke_recv_atomic },
	/* Answers only: they complete a call (rpc.c) and may run in softirq. */
	{ FOS_WIRE_ACK, "ack", fos_wire_check_ack, fos_ack_recv,
	  .atomic = true },
	{ FOS_WIRE_REVOKE, "revoke", fos_wire_check_obj, fos_revoke_recv },
	{ FOS_WIRE_REVOKE_REQ, "revoke_req", fos_wire_check_obj,
	  fos_revoke_req_recv, true },
	{ FOS_WIRE_IMPORT, "import", fos_wire_check_import, fos_import_recv },
	{ FOS_WIRE_LOOKUP, "lookup", fos_wire_check_lookup, fos_lookup_recv,
	  true },
	{ FOS_WIRE_LOOKUP_REPLY, "lookup_reply", fos_wire_check_lookup_reply,
	  fos_lookup_reply_recv },
	{ FOS_WIRE_COPY, "copy", fos_wire_check_copy, fos_copy_recv, true },
	{ FOS_WIRE_GRANT, "grant", fos_wire_check_grant, fos_grant_recv, true },
	{ FOS_WIRE_GRANT_REPLY, "grant_reply", fos_wire_check_grant_reply,
	  fos_grant_reply_recv, .atomic = true },
	{ FOS_WIRE_RELEASE, "release", fos_wire_check_release,
	  fos_release_recv },
	{ FOS_WIRE_DROP, "drop", fos_wire_check_drop, fos_drop_recv },
	{ FOS_WIRE_GRANT_END, "grant_end", fos_wire_check_grant_end,
	  fos_grant_end_recv },
	{ FOS_WIRE_CONTACT, "contact", fos_wire_check_contact,
	  fos_contact_recv },
	{ FOS_WIRE_DERIVE, "derive", fos_wire_check_derive, fos_derive_recv },
};

/* What the core calls us for (struct fos_remote_ops in fos.h). */
static const struct fos_remote_ops fos_remote_fabric_ops = {
	.invoke_wanted = fos_remote_invoke_wanted,
	.invoke = fos_remote_invoke,
	.revoke = fos_remote_revoke,
	.grants_out = fos_remote_grants_out,
	.grants_sync = fos_remote_grants_sync,
	.lookup = fos_remote_lookup,
	.derive = fos_remote_derive,
	.proxy_oid = fos_remote_proxy_oid,
	.revoke_locked = fos_remote_revoke_locked,
	.exports_release = fos_remote_exports_release,
	.proxy_free = fos_remote_proxy_free,
	.copy_wanted = fos_remote_copy_wanted,
	.copy = fos_remote_copy,
	.copy_then = fos_remote_copy_then,
	.contact_arm = fos_remote_contact_arm,
	.contact_disarm = fos_remote_contact_disarm,
};

/*
 * Before fos_fabric_init(): our message types are known from the start;
 * and before the device exists: the core finds us registered from its
 * first call.
 */
int fos_remote_init(void)
{
	int ret;

	fos_remote_wq = alloc_ordered_workqueue("fractos_remote", 0);
	if (!fos_remote_wq)
		return -ENOMEM;
	fos_copy_wq = alloc_workqueue("fractos_copy", WQ_UNBOUND, 0);
	if (!fos_copy_wq) {
		ret = -ENOMEM;
		goto err_remote_wq;
	}
	fos_rpc_wq = alloc_workqueue("fractos_rpc", WQ_UNBOUND, 0);
	if (!fos_rpc_wq) {
		ret = -ENOMEM;
		goto err_copy_wq;
	}
	fos_forward_wq = alloc_workqueue("fractos_forward", WQ_UNBOUND, 0);
	if (!fos_forward_wq) {
		ret = -ENOMEM;
		goto err_rpc_wq;
	}
	ret = fos_fabric_register(fos_remote_types,
				  ARRAY_SIZE(fos_remote_types));
	if (ret)
		goto err_forward_wq;
	fos_fabric_set_node_down(fos_remote_node_down);
	fos_remote_set_ops(&fos_remote_fabric_ops);
	return 0;

err_forward_wq:
	destroy_workqueue(fos_forward_wq);
err_rpc_wq:
	destroy_workqueue(fos_rpc_wq);
err_copy_wq:
	destroy_workqueue(fos_copy_wq);
err_remote_wq:
	destroy_workqueue(fos_remote_wq);
	return ret;
}

/* After fos_fabric_exit(): no peer is left to send to or hear from. */
void fos_remote_exit(void)
{
	struct fos_event *ev, *tmp;

	fos_fabric_set_node_down(NULL);
	fos_fabric_unregister(fos_remote_types, ARRAY_SIZE(fos_remote_types));
	/*
	 * Copy works and grants queue events on fos_remote_wq, and events
	 * may end grants: finish the copies (no peer is left to start
	 * more), end every grant (the peers are gone, so they should be
	 * already), and only then run the last events.
	 */
	fos_looped_puts_flush();
	flush_workqueue(fos_copy_wq);
	/*
	 * (a forward's call, if sent, ends on fos_rpc_wq, below; a handover's
	 * copy and delivery run in its work, drained here)
	 */
	destroy_workqueue(fos_forward_wq);
	flush_work(&fos_downs_work);
	fos_armed_drop_all();
	fos_grants_drop_node(U32_MAX, 0);
	fos_kept_exit();
	/*
	 * Exports freed a grace period late (export.c) put their objects
	 * from fos_copy_wq; a last put may queue events: before the flush.
	 */
	rcu_barrier();
	flush_workqueue(fos_copy_wq);
	fos_events_flush();
	destroy_workqueue(fos_remote_wq);	/* runs what is queued */
	list_for_each_entry_safe(ev, tmp, &fos_events, link)
		kfree(ev);
	/* (None should be left by now.) */
	rcu_barrier();
	destroy_workqueue(fos_copy_wq);
	/* The peers are gone: every call was answered, callbacks run here. */
	destroy_workqueue(fos_rpc_wq);
	WARN_ON(!xa_empty(&fos_grants));
	WARN_ON(!xa_empty(&fos_exports));
	WARN_ON(!xa_empty(&fos_rpcs));
	fos_remote_set_ops(NULL);
}
