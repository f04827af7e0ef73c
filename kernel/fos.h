/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fractos: private definitions shared by the module's files.
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
 * The pinned pages of a Memory root (struct fos_mem) have their own kref.
 * The root holds one reference until it is revoked or freed; an operation
 * in flight (memory_copy) holds another while it touches the pages.  So a
 * copy racing a revoke either completes on pages that stay pinned until it
 * finishes, or sees the revoked flag and fails; the pages are unpinned, and
 * the RLIMIT_MEMLOCK charge returned, by whoever drops the last reference.
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
 * - fos_tree_lock (a spinlock) protects, for all objects: the revoked flag
 *   (written under it, read locklessly as a hint only), the parent's
 *   children list and the sibling links, the owner pointer and owner_link,
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
#include <linux/iosys-map.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mm_types.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/types.h>
#include <linux/wait.h>
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

/**
 * struct fos_mem - the pinned pages behind a Memory root object
 * @ref: one for the root object until revoked, one per operation in flight
 * @pages: the pinned pages
 * @npages: number of entries in @pages
 * @first_off: offset of the buffer's first byte in pages[0]
 * @len: length of the buffer in bytes
 * @user: the user charged for the pin (locked_vm, against RLIMIT_MEMLOCK),
 *	a reference held with get_uid()
 * @mm: the mm the pin shows in (pinned_vm, not limited), grabbed with
 *	mmgrab()
 * @writable: pages were pinned with FOLL_WRITE (dma-buf: its file is
 *	open for writing and WRITE was asked)
 * @dmabuf: the dma-buf the pages are taken from (dmabuf.c), or NULL; its
 *	pages are neither pinned by us nor charged (@user is NULL)
 * @map: @dmabuf's kernel mapping, held as long as @pages are used
 * @dead: link on a local list of memories to release outside the lock
 */
struct fos_mem {
	struct kref ref;
	struct page **pages;
	unsigned long npages;
	unsigned long first_off;
	u64 len;
	struct user_struct *user;
	struct mm_struct *mm;
	bool writable;
	struct dma_buf *dmabuf;
	struct iosys_map map;
	struct list_head dead;
};

struct fos_space;
struct fos_cap;
struct fos_msg;
struct user_struct;

/**
 * struct fos_ep - a space's receive queue (the provider end of Requests)
 * @ref: one for the space, one per Request whose provider it is
 * @lock: protects @msgs, @len and @closed
 * @recv_wq: receivers and poll() wait here for a message
 * @send_wq: invokers wait here for room (FRACTOS_INVOKE_WAIT)
 * @msgs: queued struct fos_msg, oldest first
 * @len: number of entries in @msgs, at most fos_max_queue
 * @closed: the space is gone; nothing is queued any more
 * @nmonitors: monitor registrations delivering here, counted until their
 *	event is received or dropped (bounded by max_caps)
 * @recv_mutex: serialises receivers, so that the head message stays queued
 *	while its capabilities are installed (which may sleep)
 * @regs: monitor registrations delivering here that are still armed (on
 *	their object), linked by fos_monitor.ep_link; under fos_tree_lock.
 *	A dying space cancels them (fos_monitors_cancel()): nobody would
 *	receive their events, and they would otherwise stay allocated, and
 *	keep this queue allocated, as long as the objects they watch.
 */
struct fos_ep {
	struct kref ref;
	spinlock_t lock;		/* see @lock above */
	wait_queue_head_t recv_wq;
	wait_queue_head_t send_wq;
	struct list_head msgs;
	unsigned int len;
	bool closed;
	atomic_t nmonitors;
	struct mutex recv_mutex;	/* see @recv_mutex above */
	struct list_head regs;
};

/**
 * struct fos_msg - one queued invocation
 * @link: in the receiver's fos_ep.msgs
 * @type: enum fractos_msg_type
 * @imm_len: bytes at @imm
 * @ncaps: entries at @caps, each holding an object reference
 * @tag: the Request's tag
 * @caps: capability arguments
 * @imm: immediate bytes
 * @ev_ep: monitor events only: the queue whose nmonitors slot the event
 *	holds until it is freed (no reference: the monitor that posts it
 *	holds one, and a queued event is freed before its queue)
 */
struct fos_msg {
	struct list_head link;
	u32 type;
	u32 imm_len;
	u32 ncaps;
	u64 tag;
	struct fos_cap *caps;
	u8 *imm;
	struct fos_ep *ev_ep;
};

/**
 * struct fos_req - the immutable contents of a Request
 * @ref: one for the object until revoked, one per invocation in flight
 * @ep: the provider's receive queue (holds a reference)
 * @tag: the provider's opaque tag
 * @imm_len: bytes at @imm
 * @ncaps: entries at @caps
 * @dead: link on a local list of contents to release outside the lock,
 *	then on the list of contents being freed (refcount zero)
 * @caps: capability arguments, each holding an object reference
 * @imm: immediate bytes (stored after @caps)
 */
struct fos_req {
	struct kref ref;
	struct fos_ep *ep;
	u64 tag;
	u32 imm_len;
	u32 ncaps;
	struct list_head dead;
	struct fos_cap *caps;
	u8 *imm;
};

/**
 * struct fos_monitor - a monitor_receive or monitor_delegate registration
 * @link: on the object's monitors list, then on a struct fos_dead list;
 *	unlinked before the registration is fired or dropped (see "Receive
 *	queues, monitors and events")
 * @ep_link: on @ep's regs while armed; under fos_tree_lock
 * @obj: the watched object while armed (on its monitors list, or its deleg),
 *	NULL once taken off it; under fos_tree_lock
 * @ep: the receive queue the event goes to (holds a reference until the
 *	registration is freed, after its event is posted)
 * @cookie: delivered as the event's tag
 * @type: FRACTOS_MSG_MONITOR_RECEIVE or FRACTOS_MSG_MONITOR_DELEGATE
 * @msg: the event, preallocated so that firing cannot fail; it holds the
 *	registration's slot in @ep->nmonitors
 */
struct fos_monitor {
	struct list_head link;
	struct list_head ep_link;
	struct fos_object *obj;
	struct fos_ep *ep;
	u64 cookie;
	u32 type;
	struct fos_msg *msg;
};

/*
 * Things taken from objects under fos_tree_lock, dealt with after it is
 * dropped: resources of revoked objects, monitors to fire or to drop.
 * Filled under fos_tree_lock by its owner only (a local variable);
 * fos_dead_release() unlinks each entry before releasing it and leaves
 * every list empty, so the struct may be filled again afterwards.
 */
struct fos_dead {
	struct list_head mems;
	struct list_head reqs;
	struct list_head fire;
	struct list_head drop;
	struct list_head names;
	struct list_head exports;
};

struct fos_export;
struct fos_proxy;

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
 * @mem: Memory roots: the pinned pages, NULL once revoked; under
 *	fos_tree_lock
 * @req: Requests made by request_create: the contents, NULL once revoked
 *	(revocation-tree children of a Request have none); under
 *	fos_tree_lock
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
	struct fos_mem *mem;
	struct fos_req *req;
	struct list_head monitors;
	struct fos_monitor *deleg;
	u32 ndelegated;
	bool deleg_owed;
	bool delegatee;
	struct list_head names;
	struct fos_export *export;
	struct fos_proxy *proxy;
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
 * struct fos_space - a capability space, one per open file
 * @caps: cid -> struct fos_cap *, allocating xarray (its own lock)
 * @ncaps: number of entries in @caps
 * @owned: objects this space created, under fos_tree_lock
 * @ep: this space's receive queue
 */
struct fos_space {
	struct xarray caps;
	atomic_t ncaps;
	struct list_head owned;
	struct fos_ep *ep;
};

/* object.c */
extern spinlock_t fos_tree_lock;
int fos_object_init(void);
u64 fos_oid_public(u64 id);
u64 fos_oid_private(u64 pub);
void fos_obj_oid(struct fos_object *obj, struct fractos_oid *oid);
void fos_object_exit(void);
struct fos_object *fos_obj_create(u32 type, struct fos_space *owner,
				  struct fos_mem *mem, struct fos_req *req);
struct fos_object *fos_obj_create_child(struct fos_object *parent,
					struct fos_space *owner,
					struct fos_req *req);
void fos_obj_get(struct fos_object *obj);
void fos_obj_put(struct fos_object *obj);
int fos_obj_revoke(struct fos_object *obj);
void fos_space_revoke_owned(struct fos_space *s);
bool fos_obj_revoked(struct fos_object *obj);
struct fos_mem *fos_obj_get_mem(struct fos_object *obj);
struct fos_req *fos_obj_get_req(struct fos_object *obj);
bool fos_obj_owned_by(struct fos_object *obj, const struct fos_space *s);
int fos_obj_delegate(struct fos_cap *cap);
void fos_obj_undelegate(struct fos_cap *cap);
void fos_dead_init(struct fos_dead *dead);
void fos_dead_release(struct fos_dead *dead);

/* name.c */
int fos_name_get(const char *name, u32 len, kuid_t uid, struct fos_cap *out);
void fos_name_revoke_locked(struct fos_object *obj, struct fos_dead *dead);
void fos_name_release(struct list_head *list);

/* monitor.c */
void fos_monitor_fire(struct fos_monitor *m);
void fos_monitor_drop(struct fos_monitor *m);
void fos_monitor_take_locked(struct fos_monitor *m, struct list_head *to);
void fos_monitors_take_receive_locked(struct fos_object *obj,
				      struct list_head *to);
void fos_monitors_take_locked(struct fos_object *obj, struct list_head *to);
void fos_monitors_cancel(struct fos_ep *ep);

/* memory.c */
void fos_mem_put(struct fos_mem *mem);
/* The most pages one Memory spans: its page array fits kvmalloc(). */
#define FOS_MAX_PIN_PAGES	((u64)INT_MAX / sizeof(struct page *))

void fos_mem_init(struct fos_mem *mem, unsigned long npages,
		  unsigned long first_off, u64 len, bool writable);
struct fos_mem *fos_mem_alloc_kernel(u64 len);
struct fos_mem *fos_mem_import_dmabuf(int fd, u64 off, u64 len, bool writable);
void fos_mem_release_dmabuf(struct fos_mem *mem);
s64 fos_mem_copy(const struct fos_cap *src, u64 soff,
		 const struct fos_cap *dst, u64 doff, u64 len, bool nowait);
int fos_mem_copy_local(const struct fos_cap *src, u64 soff,
		       const struct fos_cap *dst, u64 doff, u64 len, bool dry);
struct sg_table;
s64 fos_mem_sgt(struct fos_mem *mem, u64 off, u64 len, u32 max_pages,
		struct sg_table *sgt);

void fos_req_put(struct fos_req *req);

/* request.c, queue.c */
int fos_req_deliver(struct fos_req *req, const u8 *imm, u32 imm_len,
		    const struct fos_cap *caps, u32 ncaps);
struct fos_ep *fos_ep_create(void);
void fos_ep_put(struct fos_ep *ep);
void fos_ep_close(struct fos_ep *ep);
struct fos_msg *fos_ep_event_alloc(struct fos_ep *ep, u32 type, u64 cookie);
void fos_ep_event_free(struct fos_msg *msg);
void fos_ep_post_event(struct fos_msg *msg);
__poll_t fos_ep_poll(struct fos_ep *ep, struct file *file,
		     struct poll_table_struct *wait);
struct fos_kmsg;
struct fos_msg *fos_msg_alloc(u32 ncaps, u32 imm_len);
void fos_msg_free(struct fos_msg *msg);
int fos_ep_send(struct fos_ep *ep, struct fos_msg *msg, bool wait,
		bool nowait);
struct fos_msg *fos_ep_take(struct fos_ep *ep);
void fos_msg_kview(struct fos_msg *msg, struct fos_kmsg *km);
struct fos_object *fos_req_make_k(struct fos_space *s,
				  const struct fos_cap *base, u64 tag,
				  const void *imm, u32 imm_len,
				  struct fos_kcap *const *caps, u32 ncaps);
int fos_invoke_k(const struct fos_cap *cap, const void *imm, u32 imm_len,
		 struct fos_kcap *const *caps, u32 ncaps);

/* name.c */
int fos_name_add(const struct fos_space *owner, const struct fos_cap *cap,
		 const char *name, u32 len, kuid_t uid, u32 flags);
int fos_name_remove(const struct fos_space *owner, const char *name,
		    u32 len);

/* provider.c */
int fos_provider_init(void);
void fos_provider_exit(void);

/**
 * struct fos_remote_ops - what the core asks of objects of other nodes
 * @loopback: fabric_loopback is on: local invocations and copies go
 *	through the fabric to this node
 * @invoke: invoke @target, a proxy or a Request derived from one (or any
 *	Request with @loopback); may sleep
 * @revoke: CAP_REVOKE of a proxy: ask its owner, then revoke it; may sleep
 * @grants_out: some range of ours is registered for a peer (a racy hint)
 * @grants_sync: after a revocation, wait until no peer can read a revoked
 *	object's pages; may sleep
 * @lookup: look a name up on another node; may sleep
 * @proxy_oid: the (node, epoch, oid) a proxy stands for
 * @revoke_locked: @obj is being revoked: take its export entry onto @dead
 *	(under fos_tree_lock)
 * @exports_release: release the export entries revocation collected,
 *	notifying the importers; may sleep
 * @proxy_free: a proxy object is freed; may sleep
 * @copy_wanted: a memory_copy between these objects goes through the fabric
 * @copy: that copy; may sleep
 *
 * The core (object.c, memory.c, name.c, request.c, space.c, provider.c)
 * reaches other nodes through this vector only, which kernel/remote/
 * registers when it starts (fos_remote_set_ops()) and takes back when it
 * stops; until then every object is local (fos_remote_local in object.c:
 * no proxy, export or grant can exist, and calls that need another node
 * fail with EHOSTUNREACH).  So the core calls no function of the remote
 * layer by name, and the remote layer uses the core as any user of it.
 */
struct fos_remote_ops {
	bool (*loopback)(void);
	int (*invoke)(struct fos_object *target, const u8 *imm, u32 imm_len,
		      const struct fos_cap *caps, u32 ncaps, bool wait);
	int (*revoke)(struct fos_object *obj);
	bool (*grants_out)(void);
	void (*grants_sync)(void);
	int (*lookup)(u32 node, const char *name, u32 len,
		      struct fos_cap *out);
	void (*proxy_oid)(const struct fos_proxy *p, struct fractos_oid *oid);
	void (*revoke_locked)(struct fos_object *obj, struct fos_dead *dead);
	void (*exports_release)(struct list_head *list);
	void (*proxy_free)(struct fos_proxy *p);
	bool (*copy_wanted)(struct fos_object *src, struct fos_object *dst);
	int (*copy)(const struct fos_cap *src, u64 soff,
		    const struct fos_cap *dst, u64 doff, u64 len);
};

/* object.c: the registered vector (never NULL) */
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
int fos_cap_close(struct fos_space *s, u32 cid);
int fos_cap_close_if(struct fos_space *s, u32 cid, const struct fos_cap *want);
extern const struct file_operations fos_space_fops;

/* capfd.c */
extern const struct file_operations fos_capfd_fops;

/*
 * ops.c: the operation table.  Every front door (the ioctl, uring_cmd of
 * io_uring) decodes its command into a struct fos_call and runs it with
 * fos_call_user().
 */
union fos_args {
	struct fractos_space_info space_info;
	struct fractos_memory_create memory_create;
	struct fractos_memory_diminish memory_diminish;
	struct fractos_memory_copy memory_copy;
	struct fractos_cap_arg cap;
	struct fractos_cap_info cap_info;
	struct fractos_cap_export cap_export;
	struct fractos_cap_import cap_import;
	struct fractos_request_create request_create;
	struct fractos_request_invoke request_invoke;
	struct fractos_request_receive request_receive;
	struct fractos_monitor monitor;
	struct fractos_name name;
};

/**
 * struct fos_call - one decoded operation
 * @args: the operation's struct, zero-extended to the kernel's size
 * @new_cid: set by operations that installed a cid, so that the front door
 *	can close it again if the result cannot be written back
 * @new_cap: what was installed at @new_cid (no reference: compared only,
 *	so that the front door never closes a capability another thread of
 *	the space put at that cid meanwhile)
 * @pending_file: CAP_EXPORT: the file to install at @pending_fd on success
 * @pending_fd: CAP_EXPORT: the reserved descriptor
 * @pending_delegated: CAP_EXPORT: the file's capability is a new
 *	delegation (fos_obj_delegate() returned 1)
 * @nowait: do not wait; return -EAGAIN where the operation would sleep
 *	for an event (see fos_call_user())
 * @out_on_error: write @args back even though the handler failed (used by
 *	REQUEST_RECEIVE's EMSGSIZE to report the sizes it needs)
 */
struct fos_call {
	union fos_args args;
	u32 new_cid;
	struct fos_cap new_cap;
	struct file *pending_file;
	int pending_fd;
	bool pending_delegated;
	bool nowait;
	bool out_on_error;
};

int fos_call_user(struct fos_space *s, unsigned int cmd, void __user *uarg,
		  bool nowait);

/* An operation installed @cap at @cid (see &fos_call.new_cid). */
static inline void fos_call_new_cid(struct fos_call *c, u32 cid,
				    const struct fos_cap *cap)
{
	c->new_cid = cid;
	c->new_cap = *cap;
}

long fos_ioctl(struct file *file, unsigned int cmd, unsigned long arg);

/* uring.c */
struct io_uring_cmd;
int fos_uring_cmd(struct io_uring_cmd *ioucmd, unsigned int issue_flags);

/* Operation handlers, one family per file. */
int fos_op_space_info(struct fos_space *s, struct fos_call *c);
int fos_op_memory_create(struct fos_space *s, struct fos_call *c);
int fos_op_memory_diminish(struct fos_space *s, struct fos_call *c);
int fos_op_memory_copy(struct fos_space *s, struct fos_call *c);
int fos_op_cap_revoke(struct fos_space *s, struct fos_call *c);
int fos_op_cap_create_revtree(struct fos_space *s, struct fos_call *c);
int fos_op_cap_close(struct fos_space *s, struct fos_call *c);
int fos_op_cap_dup(struct fos_space *s, struct fos_call *c);
int fos_op_cap_info(struct fos_space *s, struct fos_call *c);
int fos_op_cap_export(struct fos_space *s, struct fos_call *c);
int fos_op_cap_import(struct fos_space *s, struct fos_call *c);
int fos_op_request_create(struct fos_space *s, struct fos_call *c);
int fos_op_request_invoke(struct fos_space *s, struct fos_call *c);
int fos_op_request_receive(struct fos_space *s, struct fos_call *c);
int fos_op_monitor_receive(struct fos_space *s, struct fos_call *c);
int fos_op_monitor_delegate(struct fos_space *s, struct fos_call *c);
int fos_op_name_publish(struct fos_space *s, struct fos_call *c);
int fos_op_name_lookup(struct fos_space *s, struct fos_call *c);
int fos_op_name_unpublish(struct fos_space *s, struct fos_call *c);

/* Helpers for argument checks. */
static inline bool fos_mem_is_zero(const void *p, size_t n)
{
	return !memchr_inv(p, 0, n);
}

#endif /* FRACTOS_FOS_H */
