/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fractos: the object model shared by the module's files - objects,
 * capabilities and spaces, their lifetimes and locking, and what the core
 * asks of the remote layer.  Each family of operations has a header of
 * its own: memory.h (Memory), request.h (Requests), queue.h (receive
 * queues), monitor.h (monitors), name.h (names) and ops.h (the operation
 * table and its front doors).
 */

/**
 * DOC: Object and capability lifetimes
 *
 * A *space* (struct fos_space) is one open file of /dev/fractos.  It maps
 * cids to capabilities in an xarray and keeps a list of the objects it
 * created (its *owned* list).
 *
 * A *capability* (struct fos_cap) is an immutable view of one object:
 * (object, offset, len, perms).  A capability held in a space, or carried
 * by an exported capability fd, holds one reference on its object.
 *
 * An *object* (struct fos_object) is reference counted with a kref.
 * References are held by capabilities, by revocation-tree children (a child
 * pins its parent, so the chain to the root stays walkable) and by
 * operations in flight.  Parents do not pin children: a child unlinks
 * itself from its parent's list when it is freed.
 *
 * Revocation is a state, not a free: fos_obj_revoke() marks the object and
 * every descendant revoked, removes them from their owners' lists and takes
 * the backing resource (the pinned pages of a Memory root) away from the
 * root.  Revoked objects stay allocated, a few bytes each, until the last
 * capability to them is dropped; every use checks the revoked flag and fails
 * with -EKEYREVOKED.
 *
 * What an object holds - the pinned pages of a Memory root (struct
 * fos_mem), the arguments of a Request (struct fos_req) - is its
 * *contents* (struct fos_contents), with a kref of its own and its type's
 * release hook (struct fos_contents_ops): object.c hands contents back
 * through the hook and knows no type's.  The object holds one reference
 * until it is revoked or freed; an operation in flight (memory_copy, an
 * invocation) holds another while it uses them.  So a copy racing a
 * revoke either completes on pages that stay pinned until it finishes, or
 * sees the revoked flag and fails; the pages are unpinned, and the
 * RLIMIT_MEMLOCK charge returned, by whoever drops the last reference.
 *
 * When a space is released, every object on its owned list is revoked, then
 * its capabilities are dropped.
 */

/**
 * DOC: Receive queues, monitors and events
 *
 * A receive queue (struct fos_ep) is freed when the last of these lets it
 * go: its space (until fos_ep_close()), each Request's contents naming it
 * (fos_req.ep), and each monitor registration delivering to it
 * (fos_monitor.ep).  A message on the queue, an event included, holds no
 * reference on it: a queued message is freed before its queue, because
 * fos_ep_close() drains the queue under ep->lock and marks it closed before
 * dropping the space's reference, and nothing is queued on a closed queue.
 * An event (fos_monitor.msg) is posted only by its registration, which
 * still holds its reference on the queue at that moment (fos_monitor_fire()
 * posts, then frees the registration); an event posted to a closed queue is
 * freed at once.
 *
 * A registration is on exactly one list at any time: its object's (monitors
 * or deleg, under fos_tree_lock) or one struct fos_dead list, where
 * revocation or freeing moves it under fos_tree_lock.  Whoever releases that
 * fos_dead list unlinks the registration before firing or dropping it, which
 * frees it; fos_dead_release() leaves every list of its struct empty, so a
 * struct fos_dead can be filled and released again (and is, in batches, by
 * a space being released).
 *
 * A registration is armed while it is on its object (fos_monitor.obj set,
 * and on its queue's regs list); taking it off, to fire or to drop it,
 * disarms it (fos_monitor_take_locked()), all under fos_tree_lock.
 *
 * A dying space: (1) revokes what it owns, firing the monitors of those
 * objects on their registrants' queues (its own included, still open);
 * (2) cancels its own registrations still armed on other spaces' objects;
 * (3) closes its queue, freeing what is queued, events and invocations
 * alike; (4) drops its capabilities, which may free objects whose
 * registrations then deliver to, or are dropped from, queues that are kept
 * allocated by those very registrations.
 */

/**
 * DOC: Locking
 *
 * The order of all the module's locks is in Documentation/locking.rst.
 *
 * - fos_tree_lock (a spinlock, taken with bottom halves off: an INVOKE
 *   delivered in the receive softirq takes it) protects, for all objects:
 *   the revoked flag (written under it, read locklessly as a hint only),
 *   the parent's children list and the sibling links, the owner pointer
 *   and owner_link,
 *   the owned lists of all spaces, fos_object.mem and fos_object.export
 *   (kernel/remote/ has the locks of the export and proxy tables).  Nothing
 *   under it sleeps.  It is global because revocation must see a whole
 *   tree at once; splitting it per tree is a later optimisation.
 * - A space's xarray lock protects its cid table.  It nests inside nothing
 *   and is never held while taking fos_tree_lock.
 */
#ifndef FRACTOS_FOS_H
#define FRACTOS_FOS_H

#include <linux/atomic.h>
#include <linux/fs.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/xarray.h>
#include <linux/fractos.h>
#include "core.h"

#define FOS_VERSION "0.1.0"

/*
 * Deepest revocation-tree depth (a root is 0).  Walks to the root and
 * revocation run under fos_tree_lock, so chains must stay short: creating
 * or delegating past it fails with -EMLINK.
 */
#define FOS_MAX_DEPTH	64

/* The limits (module parameters, main.c). */
extern unsigned int fos_max_caps;
extern unsigned long fos_max_pin_bytes;
extern unsigned int fos_max_queue;
extern unsigned int fos_max_names;

struct fos_ep;
struct fos_export;
struct fos_objmap;
struct fos_mem;
struct fos_monitor;
struct fos_proxy;
struct seq_file;
struct fos_reaper;
struct fos_req;

/**
 * struct fos_contents - what a type's object holds: Memory's pages, a
 *	Request's arguments (embedded in struct fos_mem, struct fos_req)
 * @ref: one for the object until it is revoked or freed, one per use in
 *	flight (fos_obj_get_mem(), fos_obj_get_req())
 * @ops: the type's
 * @dead: link on a list of contents to release outside fos_tree_lock
 *	(struct fos_dead), then on the list of contents being freed
 *	(refcount zero, struct fos_reaper)
 * @holder: the object whose contents these are, until it lets them go
 *	(revoked or freed); no reference.  Under fos_tree_lock.
 */
struct fos_contents {
	struct kref ref;
	const struct fos_contents_ops *ops;
	struct list_head dead;
	struct fos_object *holder;
};

/**
 * struct fos_contents_ops - an object type's release hook
 * @free: the last reference to @c is gone: free it (process context, may
 *	sleep).  References it held on objects are dropped with
 *	fos_reaper_obj_put() on @r, which frees those objects after, not
 *	inside, this call (no recursion however long the chain).
 *
 * object.c knows no type's contents but through this: it hands the
 * contents of a freed or revoked object back here.
 */
struct fos_contents_ops {
	void (*free)(struct fos_contents *c, struct fos_reaper *r);
};

/*
 * Things taken from objects under fos_tree_lock, dealt with after it is
 * dropped: resources of revoked objects, monitors to fire or to drop.
 * Filled under fos_tree_lock by its owner only (a local variable);
 * fos_dead_release() unlinks each entry before releasing it and leaves
 * every list empty, so the struct may be filled again afterwards.
 */
struct fos_dead {
	struct list_head contents;
	struct list_head fire;
	struct list_head drop;
	struct list_head names;
	struct list_head exports;
	struct list_head maps;
};

/**
 * struct fos_object - a FractOS object (Memory, later Request)
 * @ref: see "Object and capability lifetimes"
 * @type: enum fractos_obj_type, immutable
 * @depth: revocation-tree depth, immutable
 * @id: object id within (fos_node_id, fos_epoch), immutable
 * @parent: revocation-tree parent (holds a reference) or NULL, immutable
 * @revoked: under fos_tree_lock
 * @children: revocation-tree children, under fos_tree_lock
 * @sibling: link in @parent's @children, under fos_tree_lock
 * @owner: the space that created the object, NULL once revoked or once
 *	that space is gone; under fos_tree_lock
 * @owner_link: link in @owner's owned list, under fos_tree_lock
 * @contents: Memory roots: the pinned pages (struct fos_mem); Requests
 *	made by request_create: their arguments (struct fos_req); NULL once
 *	revoked, and for revocation-tree children that are no derived
 *	Request and proxies; under fos_tree_lock
 * @monitors: monitor_receive registrations, under fos_tree_lock
 * @deleg: the monitor_delegate registration or NULL, under fos_tree_lock
 * @ndelegated: live delegatee children, under fos_tree_lock
 * @deleg_owed: a delegatee child stopped counting after being handed out
 *	while others still counted, so @deleg fires when @ndelegated drops
 *	to zero, even if the last one to go is a delegation taken back
 *	(fos_obj_undelegate()); under fos_tree_lock
 * @delegatee: this object stands for one delegation of its parent and
 *	counts in the parent's @ndelegated until revoked or freed; under
 *	fos_tree_lock
 * @names: published names of this object (name.c), under fos_tree_lock
 * @export: the export-table entry (remote/export.c) while another node may hold
 *	a capability to this object, NULL once revoked; under fos_tree_lock
 * @proxy: set (immutable) when this object stands for an object of another
 *	node (remote/proxy.c); such a proxy has no owner, no contents, no parent
 * @map: the inode of the object's mappable capability fds (memmap.c) or
 *	NULL; taken away, and its mappings unmapped, by revocation; under
 *	fos_tree_lock
 * @granting: a Memory MEMORY_GRANT made and is handing to another node's
 *	Request (or a copy of one that this node forwards, remote/handover.c):
 *	set and cleared by that call alone, before and after the invocation,
 *	while nobody else can reach the object; the INVOKE's description of
 *	it says so (FOS_WIRE_CAP_GRANTED), no other one
 * @grant_by: while @granting, jiffies by which the receiver's node must
 *	have delivered its copy; written with @granting
 * @work: scratch link used by revocation while holding fos_tree_lock
 * @reap: link on a local list of objects being freed (refcount zero)
 */
struct fos_object {
	struct kref ref;
	u32 type;
	u32 depth;
	u64 id;
	struct fos_object *parent;
	bool revoked;
	struct list_head children;
	struct list_head sibling;
	struct fos_space *owner;
	struct list_head owner_link;
	struct fos_contents *contents;
	struct list_head monitors;
	struct fos_monitor *deleg;
	u32 ndelegated;
	bool deleg_owed;
	bool delegatee;
	struct list_head names;
	struct fos_export *export;
	struct fos_proxy *proxy;
	struct fos_objmap *map;
	bool granting;
	unsigned long grant_by;
	struct list_head work;
	struct list_head reap;
};

/**
 * struct fos_cap - a capability: an immutable view of an object
 * @obj: the object, one reference held
 * @off: start of the view (Memory: bytes from the buffer's start)
 * @len: length of the view
 * @perms: FRACTOS_PERM_* rights
 */
struct fos_cap {
	struct fos_object *obj;
	u64 off;
	u64 len;
	u32 perms;
};

/**
 * struct fos_kcap - a capability held by kernel code (provider.h)
 * @cap: the capability; holds one reference on its object
 *
 * Allocated by provider.c, or lent by a received message (its caps[]
 * seen through fos_msg_kview()), which is why it holds nothing else.
 */
struct fos_kcap {
	struct fos_cap cap;
};

/**
 * struct fos_cap_slot - a cid reserved in a space (fos_cap_reserve())
 * @cid: the cid
 * @c: the capability's memory, filled by fos_cap_fill()
 */
struct fos_cap_slot {
	u32 cid;
	struct fos_cap *c;
};

/**
 * struct fos_space - a capability space, one per open file
 * @caps: cid -> struct fos_cap *, allocating xarray (its own lock)
 * @ncaps: number of entries in @caps
 * @owned: objects this space created, under fos_tree_lock
 * @ep: this space's receive queue
 * @contacts: id -> struct fos_contact * (a contact's Request and the Memory
 *	marked for it), allocating from 1 (contact.c; its own lock, which
 *	also guards each contact's marks)
 * @user: the user that opened the space (a reference), charged for the
 *	kernel pages other nodes' grants give it (remote/handover.c)
 * @memlock: the most pages @user may have charged then: RLIMIT_MEMLOCK of
 *	the opener at open, ULONG_MAX if it had CAP_IPC_LOCK; immutable
 */
struct fos_space {
	struct xarray caps;
	atomic_t ncaps;
	struct list_head owned;
	struct fos_ep *ep;
	struct xarray contacts;
	struct user_struct *user;
	unsigned long memlock;
};

/* memmap.c */
void fos_memmap_take_locked(struct fos_object *obj, struct fos_dead *dead);
void fos_memmap_release(struct list_head *maps);
struct file *fos_memmap_file(struct fos_cap *cap,
			     const struct file_operations *fops);
int fos_memmap_mmap(struct file *file, struct vm_area_struct *vma);

/* contact.c */
void fos_contacts_init(struct fos_space *s);
void fos_contacts_fire(struct fos_space *s);
void fos_contacts_show(struct fos_space *s, struct seq_file *m);

/* oid.c */
void fos_oid_init(void);
u64 fos_oid_public(u64 id);
u64 fos_oid_private(u64 pub);
void fos_obj_oid(struct fos_object *obj, struct fractos_oid *oid);

/* object.c */
extern spinlock_t fos_tree_lock;
int fos_object_init(void);
void fos_object_exit(void);
struct fos_object *fos_obj_create(u32 type, struct fos_space *owner,
				  struct fos_contents *contents);
struct fos_space *fos_req_receiver_locked(struct fos_object *req);
void fos_obj_move_owner_locked(struct fos_object *obj, struct fos_space *to);
void fos_obj_give_to_receiver(struct fos_object *obj, struct fos_object *req);
int fos_obj_hand_over(struct fos_object *old, struct fos_object *new,
		      struct fos_space *s);
struct fos_object *fos_obj_create_child(struct fos_object *parent,
					struct fos_space *owner,
					struct fos_contents *contents);
void fos_obj_get(struct fos_object *obj);
void fos_obj_put(struct fos_object *obj);
void fos_obj_put_atomic(struct fos_object *obj);
void fos_obj_put_flush(void);
void fos_reaper_obj_put(struct fos_reaper *r, struct fos_object *obj);
void fos_contents_init(struct fos_contents *c,
		       const struct fos_contents_ops *ops);
void fos_contents_put(struct fos_contents *c);
void fos_contents_put_atomic(struct fos_contents *c);
int fos_obj_revoke(struct fos_object *obj);
int fos_contents_revoke_holder(struct fos_contents *c);
void fos_space_revoke_owned(struct fos_space *s);
bool fos_obj_revoked(struct fos_object *obj);
bool fos_obj_remote(struct fos_object *obj);
struct fos_mem *fos_obj_get_mem(struct fos_object *obj);
struct fos_req *fos_obj_get_req(struct fos_object *obj);
bool fos_obj_owned_by(struct fos_object *obj, const struct fos_space *s);
int fos_obj_own_memory_root(struct fos_object *obj, const struct fos_space *s);
int fos_obj_delegate(struct fos_cap *cap);
void fos_obj_undelegate(struct fos_cap *cap);
void fos_dead_init(struct fos_dead *dead);
void fos_dead_release(struct fos_dead *dead);

/* provider.c */
int fos_provider_init(void);
void fos_provider_exit(void);

/**
 * struct fos_invoke_done - an invocation answered later (a forwarded
 *	invocation, a handover, a contact's note: fos_invoke_k() with one)
 * @fn: called once with the invocation's result, in process context
 */
struct fos_invoke_done {
	void (*fn)(struct fos_invoke_done *done, int result);
};

/**
 * struct fos_copy_then - the continuations of a copy (fos_kmem_copy_then())
 * @done: the Request invoked once the bytes are in
 * @done_imm: its immediates
 * @done_len: bytes at @done_imm
 * @err: the Request invoked when they could not be copied
 * @err_imm: its immediates, with the copy's errno (an s64) written at
 *	@errno_off
 * @err_len: bytes at @err_imm
 * @errno_off: where, at most @err_len - 8
 */
struct fos_copy_then {
	const struct fos_cap *done;
	const void *done_imm;
	u32 done_len;
	const struct fos_cap *err;
	const void *err_imm;
	u32 err_len;
	u32 errno_off;
};

/**
 * struct fos_remote_ops - what the core asks of objects of other nodes
 * @invoke_wanted: invocations of @target, a local Request, go through the
 *	remote layer too (the fabric loops this node back to itself)
 * @invoke: invoke @target, a proxy or a Request derived from one (or any
 *	Request that @invoke_wanted); may sleep.  With @done it returns once the
 *	message is sent: -EINPROGRESS, and @done->fn gets the owner's answer.
 *	@flags: FRACTOS_INVOKE_WAIT, or FRACTOS_INVOKE_NOACK (without @done:
 *	0 once sent, the owner answers only a refusal)
 * @revoke: CAP_REVOKE of a proxy: ask its owner, then revoke it; may sleep
 * @grants_out: some range of ours is registered for a peer (a racy hint)
 * @grants_sync: after a revocation, wait until no peer can read a revoked
 *	object's pages; may sleep
 * @lookup: look a name up on another node; may sleep
 * @derive: have the owner of @target (as for @invoke) derive a Request
 *	from it with these arguments (FRACTOS_CREATE_AT_OWNER): @out gets
 *	the capability to it, whose object the caller drops; may sleep
 * @proxy_oid: the (node, epoch, oid) a proxy stands for
 * @revoke_locked: @obj is being revoked: take its export entry onto @dead
 *	(under fos_tree_lock)
 * @exports_release: release the export entries revocation collected,
 *	notifying the importers; may sleep
 * @proxy_free: a proxy object is freed; may sleep
 * @copy_wanted: a memory_copy between these objects goes through the fabric
 * @copy: that copy; may sleep
 * @copy_then: that copy, small and from our Memory, sent with the
 *	continuations the destination's node invokes (0), or -EOPNOTSUPP or
 *	another errno, nothing sent: the caller copies and invokes; may sleep
 * @contact_arm: a space named @req as contact @id: if it is another node's
 *	Request, have that node tell it when this node is lost ("Node loss"
 *	under "Contacts" in the uAPI header); returns the arming's handle,
 *	and its node in @node, or 0 (not armed).  Atomic context: it only
 *	queues the message
 * @contact_disarm: end the arming @handle of @node; may sleep
 *
 * The core (object.c, memory.c, name.c, request.c, space.c, provider.c)
 * reaches other nodes through this vector only, which kernel/remote/
 * registers when it starts (fos_remote_set_ops()) and takes back when it
 * stops; until then every object is local (fos_remote_local in noremote.c:
 * no proxy, export or grant can exist, and calls that need another node
 * fail with EHOSTUNREACH).  So the core calls no function of the remote
 * layer by name, and the remote layer uses the core as any user of it.
 */
struct fos_remote_ops {
	bool (*invoke_wanted)(struct fos_object *target);
	int (*invoke)(struct fos_object *target, const u8 *imm, u32 imm_len,
		      const struct fos_cap *caps, u32 ncaps, u32 flags,
		      struct fos_invoke_done *done);
	int (*revoke)(struct fos_object *obj);
	bool (*grants_out)(void);
	void (*grants_sync)(void);
	int (*lookup)(u32 node, const char *name, u32 len,
		      struct fos_cap *out);
	int (*derive)(struct fos_object *target, const u8 *imm, u32 imm_len,
		      const struct fos_cap *caps, u32 ncaps,
		      struct fos_cap *out);
	void (*proxy_oid)(const struct fos_proxy *p, struct fractos_oid *oid);
	void (*revoke_locked)(struct fos_object *obj, struct fos_dead *dead);
	void (*exports_release)(struct list_head *list);
	void (*proxy_free)(struct fos_proxy *p);
	bool (*copy_wanted)(struct fos_object *src, struct fos_object *dst);
	int (*copy)(const struct fos_cap *src, u64 soff,
		    const struct fos_cap *dst, u64 doff, u64 len);
	int (*copy_then)(const struct fos_cap *src, u64 soff,
			 const struct fos_cap *dst, u64 doff, u64 len,
			 const struct fos_copy_then *then);
	u64 (*contact_arm)(const struct fos_cap *req, u32 id, u32 *node);
	void (*contact_disarm)(u32 node, u64 handle);
};

/* noremote.c: the registered vector (never NULL) */
extern const struct fos_remote_ops *fos_remote_cur;
void fos_remote_set_ops(const struct fos_remote_ops *ops);

static inline const struct fos_remote_ops *fos_remote(void)
{
	return READ_ONCE(fos_remote_cur);
}

/* kernel/remote/: objects of other nodes ("Remote objects" in remote.c) */
int fos_remote_init(void);
void fos_remote_exit(void);

/* space.c */
int fos_space_init(void);
void fos_space_exit(void);
int fos_cap_get(struct fos_space *s, u32 cid, struct fos_cap *out);
int fos_cap_install(struct fos_space *s, const struct fos_cap *c, u32 *cid);
int fos_cap_reserve(struct fos_space *s, struct fos_cap_slot *slot);
void fos_cap_fill(struct fos_space *s, struct fos_cap_slot *slot,
		  const struct fos_cap *tmpl);
void fos_cap_unreserve(struct fos_space *s, struct fos_cap_slot *slot);
int fos_cap_close(struct fos_space *s, u32 cid);
int fos_cap_close_if(struct fos_space *s, u32 cid, const struct fos_cap *want);
extern const struct file_operations fos_space_fops;

/* capfd.c */
extern const struct file_operations fos_capfd_fops;

#endif /* FRACTOS_FOS_H */
