/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * fractos: capability spaces, Memory objects and revocation trees.
 *
 * This header is the reference for the /dev/fractos user interface.
 */

/**
 * DOC: Model
 *
 * Every open() of /dev/fractos creates a capability space (a FractOS
 * Process).  A capability id (cid) is a small non-negative integer naming a
 * capability in that space, allocated lowest-free-first like a file
 * descriptor.  A capability references one object and carries a view of it:
 * for Memory, a byte range [offset, offset + len) and rights (perms).
 *
 * Objects are named cluster-wide by (node, epoch, id): the node that owns
 * the object, the epoch of that node (it changes every time the module is
 * loaded) and an id unique within the epoch.  Ids are not handed out in
 * order: they say nothing about how many objects a node made, and cannot
 * be guessed.
 *
 * Revocation is per object: cap_revoke() invalidates the object the
 * capability references and, recursively, every revocation-tree child
 * created from it with FRACTOS_IOC_CAP_CREATE_REVTREE.  Every capability to
 * a revoked object, in every space, fails with EKEYREVOKED afterwards.  Any
 * holder of a capability may revoke its object (the paper's caretaker
 * pattern): hand out revocation-tree children, not the object itself, to
 * holders you do not trust with that power.  memory_diminish() returns a
 * capability to the *same* object with a narrower view, so revoking a
 * diminished capability revokes the whole object; create a revocation tree
 * child from it to get an individually revocable view.
 *
 * When a space goes away (last close of its fd, exit, kill -9) its
 * contacts are told (see "Contacts"), its capabilities are dropped and
 * every object it created is revoked.
 */

/**
 * DOC: Remote objects
 *
 * Capabilities cross nodes as Request or invocation arguments and as the
 * answer of a NAME_LOOKUP on another node.  A capability received from
 * another node names a *proxy*: CAP_INFO reports the remote object's
 * (node, epoch, id), its type, and exactly the view and rights it was sent
 * with, plus FRACTOS_INFO_REMOTE.  A capability that comes back to the
 * node owning its object is the real object again (with the view it was
 * sent with, never more).  Forwarding a proxy names the original object:
 * it never chains through the forwarder.  REQUEST_INVOKE on a remote
 * Request (or on one derived from it) waits for the owner's answer, and
 * fails as a local invocation would (EKEYREVOKED, EAGAIN, E2BIG...) or
 * with the remote errors below; nothing is delivered when it fails.
 * CAP_REVOKE on a proxy asks the owner to revoke the object (as any local
 * holder may) and revokes the proxy in any case; revoking a local
 * revocation-tree child of a proxy stays local.  When the owner revokes
 * the object, when its node is lost (its connection ended, and none came
 * back within fabric_grace_ms), or when it restarts
 * (new epoch), every proxy of it is revoked: monitors fire and uses fail
 * with EKEYREVOKED, as for a local revocation.  MEMORY_COPY works on
 * Memory of any node, third-party copies included: the owner of the
 * destination moves the bytes with one-sided RDMA READs straight between
 * the pinned pages, from a range of the source that its owner registers
 * for the copy only (remote-read only, deregistered when the copy is
 * done, valid on the connection of the copying node alone, and addressed
 * from zero: no kernel address leaves the node); with fabric_loopback,
 * copies between local Memory go the same way through this node's
 * connection to itself.  A Request derived from a remote Request (or a
 * local revocation-tree child of one) may be sent to a third node: its
 * invocations there come to this node, which adds the derived arguments
 * and passes the call on to the provider's node (the ACK comes back the
 * same way; nothing reaches this node's processes).  With
 * FRACTOS_CREATE_AT_OWNER the owner derives it instead, and invocations
 * go to the owner's node straight from wherever they are made.  Not yet:
 * sending a Memory view that is a local child of a proxy to another node
 * (EOPNOTSUPP).
 */

/**
 * DOC: Calling convention
 *
 * Every operation is an ioctl whose argument is one struct.  The kernel
 * reads _IOC_SIZE(cmd) bytes: a struct shorter than the operation's first
 * version gives EINVAL; a longer one (from a newer header) is accepted only
 * if the bytes this kernel does not know are zero (else E2BIG).  When a
 * struct grows, the kernel will zero-extend the older, shorter versions.  Unknown flag bits
 * and non-zero reserved or padding fields give EINVAL.  Fields documented
 * as "out" only are ignored on input and written back only on success.
 */

/**
 * DOC: Errno table
 *
 * Every operation may return::
 *
 *   EFAULT       the argument (or a buffer it points to) is not accessible.
 *                An operation that installed a cid and then cannot write
 *                it back closes it again, unless another thread of the
 *                space closed it and a different capability took the cid
 *                meanwhile: a failed call never closes what it did not
 *                install.
 *   EINVAL       unknown flag bit, non-zero reserved/pad field, a struct
 *                shorter than the operation's, or a malformed value (zero
 *                length, offset + len overflow, ...).
 *   E2BIG        the struct is longer than this kernel knows and the
 *                unknown tail is not zero.
 *   ENOTTY       unknown ioctl number or wrong direction bits.
 *   ENOMEM       out of kernel memory.
 *
 * Operations taking a cid also return::
 *
 *   EBADF        the cid names no capability in this space.
 *   EKEYREVOKED  the capability's object has been revoked (explicitly, by a
 *                revocation-tree ancestor, or because its owner space went
 *                away).
 *   EOPNOTSUPP   the object has the wrong type for the operation.
 *
 * Operations creating a cid also return::
 *
 *   EMFILE       the space holds max_caps capabilities (module parameter,
 *                default 1048576; see FRACTOS_IOC_SPACE_INFO).
 *
 * Per operation::
 *
 *   MEMORY_CREATE   EINVAL  perms is zero or has unknown bits, len is 0,
 *                           addr + len overflows, the range is larger
 *                           than max_pin_bytes (module parameter), or it
 *                           spans more than INT_MAX / 8 pages (1 TiB with
 *                           4 KiB pages) even when max_pin_bytes is 0.
 *                   ENOMEM  the pin would take the pages pinned by all of
 *                           the caller's user's Memories past the caller's
 *                           RLIMIT_MEMLOCK (unless CAP_IPC_LOCK), as for
 *                           io_uring's registered buffers.
 *                   EFAULT  the range is not in the user address space,
 *                           not mapped, or not writable when
 *                           FRACTOS_PERM_WRITE is asked.
 *                   EINTR   a fatal signal arrived while pinning.
 *                   EOPNOTSUPP  the pages cannot be pinned long-term
 *                           (for example a file system DAX mapping).
 *                   With FRACTOS_MEMORY_DMABUF (no EFAULT, no ENOMEM
 *                   for RLIMIT_MEMLOCK):
 *                   EBADF   dmabuf_fd is not an open file descriptor.
 *                   EINVAL  also: dmabuf_fd is not a dma-buf; without
 *                           the flag, dmabuf_fd is not 0.
 *                   EACCES  FRACTOS_PERM_WRITE, but the dma-buf is not
 *                           open for writing.
 *                   ERANGE  addr + len passes the dma-buf's size.
 *                   EOPNOTSUPP  the exporter gives no kernel mapping.
 *                   EAGAIN  an exporter that moves its buffers moved
 *                           this one during the import: try again.
 *                   Device memory of such an exporter: also its
 *                           refusal to attach fractos (its errno).
 *   MEMORY_DIMINISH EINVAL  len is 0, offset + len overflows, unknown bits
 *                           in drop_perms.
 *                   ERANGE  [offset, offset + len) is not inside the view.
 *                   (Rights are only ever dropped: escalation is
 *                   impossible by construction.)
 *   MEMORY_COPY     EACCES  the source view lacks READ or the destination
 *                           view lacks WRITE.
 *                   ERANGE  a range lies outside its view.
 *                   EINVAL  both ranges overlap within the same memory.
 *                   EINTR   a fatal signal interrupted a long copy; a
 *                           prefix of the range may have been written.
 *                   ENOMEM  no page to stage device memory through.
 *                   EKEYREVOKED  also when device memory's exporter
 *                           moved the buffer (the object is revoked).
 *                   Another node's Memory (and fabric_loopback):
 *                   EKEYREVOKED also when an owner revoked the object
 *                           (before or during the copy: the range may
 *                           be partly written), or its node restarted
 *                           or went down;
 *                   EACCES, ERANGE  also from an owner's own checks;
 *                   EHOSTUNREACH  an owner's node is not configured or
 *                           not connected, or the connection failed
 *                           during the transfer (with fabric_loopback:
 *                           this node is not its own peer);
 *                   ETIMEDOUT  no answer within 10 s plus 1 s per MiB
 *                           plus fabric_grace_ms (the destination
 *                           range may be partly written);
 *                   EPROTO  an owner found a view inconsistent, or
 *                           answered a small copy with other bytes than
 *                           asked for (copy_inline_max);
 *                   and the errors every call to another node may give
 *                   (see "Calls to other nodes" below).
 *   CAP_REVOKE      no errors beyond the common ones; revoking an already
 *                   revoked object gives EKEYREVOKED.  On a proxy: the
 *                   owner's EKEYREVOKED, or an error of the call to
 *                   its node (see "Calls to other nodes"); the proxy is
 *                   revoked anyway.  On the owner, and on a proxy
 *                   whose owner answered, it returns once no other
 *                   node can read the object's pages: a copy to another
 *                   node that is reading them is stopped first (a wait
 *                   of at most 2 s).
 *   CAP_CREATE_REVTREE  EKEYREVOKED if the parent is revoked.
 *                   EMLINK  the child would be deeper than 64 (a root has
 *                           depth 0; see FRACTOS_IOC_CAP_INFO's depth).
 *   CAP_CLOSE       EBADF only.  Closing a revoked capability succeeds.
 *   CAP_DUP         EMFILE.  Duplicating a revoked capability succeeds
 *                   (the duplicate is revoked too).
 *   CAP_INFO        never EKEYREVOKED: reports FRACTOS_INFO_REVOKED.
 *   CAP_EXPORT      EMLINK  the object is watched by MONITOR_DELEGATE and
 *                           at depth 64, so its delegation child would be
 *                           too deep (the same for every delegation:
 *                           REQUEST_CREATE and REQUEST_INVOKE arguments,
 *                           NAME_PUBLISH); nothing is handed out.
 *                   EMFILE/ENFILE from the fd table.  A revoked capability
 *                   can be exported (and stays revoked).
 *   CAP_IMPORT      EBADF   fd is not an open file.
 *                   EINVAL  fd is not a fractos capability fd.
 *                   EMFILE  the space is full.
 *   REQUEST_CREATE  E2BIG   the arguments would pass FRACTOS_REQ_MAX_IMM
 *                           or FRACTOS_REQ_MAX_CAPS.
 *                   EBADF   a cid in the caps array (or @base) is unknown.
 *                   EOPNOTSUPP  @base is not a Request.
 *                   EINVAL  @tag is non-zero while deriving, or
 *                           @flags has an unknown bit, or
 *                           FRACTOS_CREATE_AT_OWNER without @base.
 *                   EMLINK  @base is at depth 64 (a derived Request is
 *                           its revocation-tree child), or an argument's
 *                           delegation would be too deep (see CAP_EXPORT).
 *                   With FRACTOS_CREATE_AT_OWNER and another node's
 *                   @base: the errors of "Calls to other nodes" below,
 *                   and the owner's: EKEYREVOKED (its Request is gone),
 *                   E2BIG, EMLINK, ENOSPC (the owner holds
 *                   fabric_peer_derived Requests derived for this node);
 *                   EOPNOTSUPP  @base is a local child of a proxy,
 *                   or an argument is a Memory being handed over
 *                   (MEMORY_GRANT) or a view that is a local child of a
 *                   proxy; EPROTO  the owner's answer is not a Request
 *                   of its own.
 *   REQUEST_INVOKE  EOPNOTSUPP  the cid is not a Request (e.g. Memory).
 *                   EKEYREVOKED the Request is revoked or its provider is
 *                           gone (a dead provider's Requests are revoked).
 *                   E2BIG   as for REQUEST_CREATE, counting the Request's
 *                           own arguments.
 *                   EBADF   a cid in the caps array is unknown.
 *                   EMLINK  an argument's delegation would be too deep
 *                           (see CAP_EXPORT); nothing is delivered.
 *                   EAGAIN  the provider's queue holds max_queue messages
 *                           (module parameter) and FRACTOS_INVOKE_WAIT is
 *                           not set.
 *                   EINVAL  flags has an unknown bit, or both
 *                           FRACTOS_INVOKE_WAIT and FRACTOS_INVOKE_NOACK.
 *                   EINTR   a signal handler ran while waiting (never
 *                           restarted, even with SA_RESTART; a signal
 *                           without handler, such as a stop and continue,
 *                           resumes the wait unseen).
 *                   Remote providers (and fabric_loopback, see below):
 *                   EKEYREVOKED also when the owner revoked the Request,
 *                           or its node was lost or restarted (the proxy
 *                           is revoked then);
 *                   EHOSTUNREACH  the provider's node is not configured
 *                           or not connected (with fabric_loopback: this
 *                           node is not its own peer);
 *                   EMSGSIZE  the arguments do not fit one fabric message
 *                           of the provider's node (never with this
 *                           module's 8 KiB buffers: any invocation
 *                           within the limits above fits);
 *                   EOPNOTSUPP  an argument is a Memory view that is a
 *                           local child of a proxy,
 *                           or the owner's object is not a Request with
 *                           a provider;
 *                   EPROTO  the owner found an argument inconsistent;
 *                   and the errors of "Calls to other nodes" below, also
 *                   for the call that first announces an argument owned
 *                   by a third node to that node (an argument whose
 *                   owner is gone, or does not know the receiver,
 *                   arrives revoked instead).
 *   REQUEST_RECEIVE EAGAIN  nothing queued and FRACTOS_RECV_NONBLOCK.
 *                   ETIMEDOUT  nothing arrived within timeout_ns.
 *                   EINTR   a signal handler ran while waiting (never
 *                           restarted, even with SA_RESTART: a restart
 *                           would start timeout_ns over; a signal without
 *                           handler resumes the wait unseen, with the
 *                           full timeout_ns again).
 *                   EMSGSIZE  a buffer is too small (message kept).
 *                   EMFILE  the capabilities do not fit (message kept).
 *                   EFAULT  a buffer is not writable (message kept, its
 *                           capabilities not installed).
 *   NAME_PUBLISH    EINVAL  the name is empty, longer than
 *                           FRACTOS_NAME_MAX, or has a byte outside
 *                           0x21..0x7e.
 *                   EPERM   this space did not create the object.
 *                   EMLINK  the delegation would be too deep (see
 *                           CAP_EXPORT).
 *                   EEXIST  the name is already published on this node.
 *                   ENOSPC  max_names (module parameter) are published.
 *   NAME_LOOKUP     ENOENT  no such name, or it is not visible to the
 *                           caller (same-uid names for other uids), or
 *                           its object was revoked.
 *                   EMFILE  the space is full.
 *                   With FRACTOS_NAME_NODE naming another node:
 *                   EOPNOTSUPP  the name's object is a local child of
 *                           a proxy there (it cannot be sent on);
 *                   EPROTO  the answer contradicts what this node knows;
 *                   and the errors of "Calls to other nodes" below.
 *   NAME_UNPUBLISH  ENOENT  no such name.
 *                   EPERM   this space did not create the object.
 *   MONITOR_*       ENOSPC  the space has max_caps monitors registered
 *                           (a fired monitor counts until its event is
 *                           received).
 *   MONITOR_DELEGATE  EPERM  this space did not create the object.
 *                   EBUSY   the object already has a delegate monitor.
 *                   EKEYREVOKED  the object is revoked.
 *   MEMORY_GRANT    EOPNOTSUPP  cid is not a Memory, or req not a
 *                           Request.
 *                   EPERM   the Memory is not a root this space created
 *                           (a revocation-tree child, another space's,
 *                           another node's).
 *                   EACCES  cid is not the whole buffer with every right.
 *                   EINVAL  user pages that do not start and end on page
 *                           boundaries.
 *                   EBUSY   another live process pinned the pages,
 *                           they are a file's, or they are mapped
 *                           elsewhere too.
 *                   With req: the errors of REQUEST_INVOKE, new_cid then
 *                           holding the Memory (see "Memory grant");
 *                           another node's req also those of its copy
 *                           there (EFBIG: over 1 GiB; ENOMEM, also past
 *                           the RLIMIT_MEMLOCK of the receiving space's
 *                           opener; EINVAL, EAGAIN, ETIMEDOUT).
 *   SPACE_CONTACT   EINVAL  op is not FRACTOS_CONTACT_ADD, _DEL, _STEAL
 *                           or _UNSTEAL; ADD with a non-zero id, DEL
 *                           with a non-zero cid.
 *                   EOPNOTSUPP  ADD: the cid is not a Request; STEAL:
 *                           not a Memory.
 *                   ENOSPC  ADD: the space has FRACTOS_MAX_CONTACTS;
 *                           STEAL: the contact has FRACTOS_MAX_STEAL
 *                           marks.
 *                   ENOENT  DEL, STEAL: no contact of this space has
 *                           that id; UNSTEAL: nor is the object marked
 *                           for it.
 *                   EPERM   STEAL: the Memory is not a root this space
 *                           created (a revocation-tree child, another
 *                           space's, another node's).
 *                   EBUSY   STEAL: the Memory is marked already (for
 *                           this contact or another).
 *
 * Calls to other nodes (REQUEST_INVOKE, MEMORY_COPY, CAP_REVOKE of a proxy,
 * NAME_LOOKUP with FRACTOS_NAME_NODE, REQUEST_CREATE with
 * FRACTOS_CREATE_AT_OWNER) may also fail with::
 *
 *                   EHOSTUNREACH  the node is not configured, not
 *                           connected, or its connection failed;
 *                   EINTR   a signal handler ran while the message waited
 *                           for a fabric credit (nothing was sent; never
 *                           restarted);
 *                   ETIMEDOUT  no credit within 5 s (nothing was sent), or
 *                           no answer within 10 s plus fabric_grace_ms
 *                           (delivery unknown);
 *                   EAGAIN  (MEMORY_COPY, NAME_LOOKUP) the other node
 *                           serves as many of this node's requests, or
 *                           holds as many of its grants, as its
 *                           fabric_peer_work / fabric_peer_grants allow;
 *                   EPROTO  the other node answered with a code that is
 *                           no errno a call can return (a kernel-internal
 *                           one, or EINPROGRESS);
 *                   ENOMEM.
 *
 * Link loss, node death, process death (Documentation/failures.rst has the
 * table, operation by operation).  Without the fabric_grace_ms module
 * parameter (0, the default), a connection that ends is a node that died:
 * its proxies are revoked (EKEYREVOKED, monitors fire), waiting calls fail,
 * and an INVOKE in flight was delivered at most once.  With it, the two
 * nodes' session outlives the connection for that long: invocations,
 * revocations, drops and lookups in flight are sent again on the next
 * connection and delivered exactly once, so the call returns the owner's
 * answer (a call waits that much longer for it); a MEMORY_COPY whose RDMA
 * READs were cut asks for the bytes again on the next connection (up to
 * four times, then EHOSTUNREACH: copy again).  When no connection comes
 * back in time, or
 * the node restarted (a new epoch), it is a node that died, as above.  A
 * process that dies takes its spaces along: its objects are revoked on
 * every node, its invocations already sent are delivered, its contacts
 * are told (see "Contacts").
 *
 * poll()/epoll on the space's fd reports EPOLLIN while a message is queued.
 */
#ifndef _UAPI_LINUX_FRACTOS_H
#define _UAPI_LINUX_FRACTOS_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define FRACTOS_DEVICE		"/dev/fractos"
#define FRACTOS_ABI_VERSION	1

/* A cid that names no capability; never returned by the kernel. */
#define FRACTOS_CID_INVALID	0xffffffffU

/* Object types (fractos_cap_info.type). */
enum fractos_obj_type {
	FRACTOS_OBJ_NONE	= 0,
	FRACTOS_OBJ_MEMORY	= 1,
	FRACTOS_OBJ_REQUEST	= 2,
};

/* Memory rights (perms, drop_perms). */
#define FRACTOS_PERM_READ	0x1U
#define FRACTOS_PERM_WRITE	0x2U
#define FRACTOS_PERM_ALL	(FRACTOS_PERM_READ | FRACTOS_PERM_WRITE)

/* The cluster-wide name of an object. */
struct fractos_oid {
	__u32 node;
	__u32 epoch;
	__u64 id;
};

/**
 * struct fractos_space_info - FRACTOS_IOC_SPACE_INFO: facts about this space
 * @abi_version: out, FRACTOS_ABI_VERSION of the running module
 * @node: out, this node's id (module parameter node_id)
 * @epoch: out, this node's epoch (changes at every module load)
 * @max_caps: out, the per-space capability limit
 * @ncaps: out, capabilities currently held by this space
 * @flags: in, must be 0
 * @__pad: must be 0
 * @reserved: must be 0
 */
struct fractos_space_info {
	__u32 abi_version;
	__u32 node;
	__u32 epoch;
	__u32 max_caps;
	__u32 ncaps;
	__u32 flags;
	__u64 __pad;
	__u64 reserved[2];
};

/**
 * struct fractos_memory_create - FRACTOS_IOC_MEMORY_CREATE
 * @addr: in, user address of the buffer (any alignment); with
 *	FRACTOS_MEMORY_DMABUF, the byte offset into the dma-buf
 * @len: in, length in bytes, > 0
 * @perms: in, FRACTOS_PERM_* rights holders get; at least one
 * @flags: in, 0 or FRACTOS_MEMORY_DMABUF
 * @cid: out, the new capability (view: whole buffer, @perms)
 * @dmabuf_fd: in, with FRACTOS_MEMORY_DMABUF the dma-buf's file
 *	descriptor; else must be 0
 * @reserved: must be 0
 *
 * Pins the pages long-term (FOLL_LONGTERM).  The pages a Memory spans are
 * charged to the caller's *user* (its real uid's locked_vm, shared with
 * io_uring) against the caller's RLIMIT_MEMLOCK, so forked children that
 * pin through an inherited space count together with their parent even
 * after they exit; they also show in the creating process's VmPin.  The
 * charge is returned, and the pages unpinned, when the object is revoked
 * (or its last capability dropped) and no copy is using them.
 *
 * With FRACTOS_MEMORY_DMABUF the Memory is [@addr, @addr + @len) of a
 * buffer another driver exports as a dma-buf (a GPU driver's buffer
 * object through PRIME, udmabuf, a DMA heap).  The kernel maps the buffer
 * (dma_buf_vmap(), which keeps it in place) and holds a reference on the
 * dma-buf until the Memory is released, so @dmabuf_fd may be closed at
 * once.  Such a Memory works everywhere a pinned one does (copies,
 * grants, other nodes, providers), needs the dma-buf open for writing for
 * FRACTOS_PERM_WRITE, and is charged where its exporter charges the
 * buffer, not to RLIMIT_MEMLOCK.  Exporters without a kernel mapping give
 * EOPNOTSUPP.
 *
 * Device memory (a buffer with no struct pages behind its kernel
 * mapping: a BAR, as GPU VRAM) is imported too.  The CPU reaches it
 * through that mapping; a copy to or from another node, or a provider's
 * I/O (an NVMe read into it), goes through staging pages, counted in
 * /sys/class/misc/fractos/totals/staged_bytes (a NIC's own attachment to
 * the buffer, GPUDirect RDMA, is not used).  When an exporter that moves
 * its buffers (a dynamic one) moves it, the Memory is revoked: its
 * holders get EKEYREVOKED and its monitors fire (totals/devmem_moves).
 */
struct fractos_memory_create {
	__u64 addr;
	__u64 len;
	__u32 perms;
	__u32 flags;
	__u32 cid;
	__s32 dmabuf_fd;
	__u64 reserved[2];
};

/* fractos_memory_create.flags */
#define FRACTOS_MEMORY_DMABUF	0x1U	/* import a dma-buf */

/**
 * struct fractos_memory_diminish - FRACTOS_IOC_MEMORY_DIMINISH
 * @cid: in, a Memory capability
 * @drop_perms: in, FRACTOS_PERM_* bits to remove
 * @offset: in, start of the new view, relative to @cid's view
 * @len: in, length of the new view, > 0
 * @flags: in, must be 0
 * @new_cid: out, capability to the same object with the narrower view
 * @reserved: must be 0
 */
struct fractos_memory_diminish {
	__u32 cid;
	__u32 drop_perms;
	__u64 offset;
	__u64 len;
	__u32 flags;
	__u32 new_cid;
	__u64 reserved[2];
};

/**
 * DOC: Mapping Memory
 *
 * A capability fd (CAP_EXPORT) of a Memory whose buffer is pages on this
 * node - pinned by MEMORY_CREATE, or a kernel provider's - can be
 * mmap()ed: MAP_SHARED only, whole pages of the capability's view (the
 * view must start on a page; file offset 0 is its first page, and a last
 * page the view only partly covers is not mapped), PROT_READ with
 * FRACTOS_PERM_READ, PROT_WRITE with FRACTOS_PERM_WRITE (the fd is
 * opened read-write only for a view that may write; a read-only mapping
 * cannot be made writable), never PROT_EXEC.  The mapping shows the
 * Memory's very pages: what the buffer's owner writes the mapping sees,
 * and the other way round.  It outlives its fd and is inherited by
 * fork().  When the fd's object is revoked (CAP_REVOKE of it or of an
 * ancestor, its creator's space closing, MEMORY_GRANT), every mapping
 * made through it is gone before the revocation returns, and the next
 * access raises SIGBUS; mappings made through other objects of the same
 * buffer stay.  The pages are mapped as page frames (VM_PFNMAP), counted
 * once (by the Memory): a mapping cannot back a MEMORY_CREATE (EFAULT).
 * The fd's link in /proc/PID/fd reads "fractos:[fractos-cap]".
 *
 * mmap() fails with ENODEV (no such Memory: a Request, another node's
 * Memory, a dma-buf, or an fd made while its object could not be mapped),
 * EINVAL (MAP_PRIVATE; a view that does not start on a page), EACCES
 * (PROT_EXEC; a right the view lacks), ENXIO (past the view's last whole
 * page) or EKEYREVOKED.
 */

/**
 * DOC: Memory grant
 *
 * MEMORY_GRANT hands a Memory's buffer over without copying it: a new
 * Memory object takes the buffer and the old one is revoked - every
 * capability to it and to its revocation-tree descendants, on every node,
 * and their mappings - so the grant is a move; the caller's own mapping
 * of the buffer's pages is removed (an access is SIGSEGV then).  The one
 * capability to the new object (the whole buffer, every right) goes to
 * @req's provider, as the one capability argument of an invocation after
 * the Request's own (as REQUEST_INVOKE without immediates or
 * FRACTOS_INVOKE_WAIT), and the new object belongs to the space that
 * created @req (FRACTOS_INFO_OWNED there); without @req it is installed
 * in the caller's space at @new_cid, and belongs to it.  The receiver
 * maps it with CAP_EXPORT and mmap() ("Mapping Memory").
 *
 * The caller must hold the whole of a root it created, with every right;
 * the buffer must start and end on page boundaries when it is user pages,
 * pinned by the caller's process, or by one that is gone (a stolen
 * Memory).  Refused with EBUSY: a buffer another live process pinned (its
 * mapping there cannot be taken away), a file's or shared memory's pages
 * (reachable through the file), and pages still mapped elsewhere once the
 * caller's mapping of the buffer's range is gone (moved with mremap():
 * that mapping is gone then, the Memory intact).  The caller's mapping is
 * found at the buffer's address whatever its protection; a range remapped
 * since keeps what it maps now.  Kernel pages and dma-bufs move the same
 * way, with nothing to unmap.  The capability is never visible to the
 * caller's other threads unless it stays with the caller.  When the invocation fails, nothing
 * is lost: the capability is installed in the caller's space, @new_cid
 * says where, and the call fails with the invocation's errno.
 *
 * With @req another node's Request, the receiver gets a copy in its own
 * node's memory: that node allocates kernel pages of the buffer's size,
 * reads the bytes from this node (RDMA), drops its capability to the
 * buffer, which this node then frees, and delivers the copy, which
 * belongs to the space that created @req; the call returns once that is
 * done, so it costs a copy of the buffer across the link.  When the copy
 * cannot be made (ENOMEM; EINVAL: larger than that node's max_pin_bytes;
 * EFBIG: larger than 1 GiB; EAGAIN: that node serves as many of this
 * node's requests as fabric_peer_work allows, or copies 1 GiB of grants
 * already; the link's errors; EKEYREVOKED: the Memory or the Request
 * revoked meanwhile) or is not done within 5 s of the invocation's
 * arrival (ETIMEDOUT), nothing is delivered and the capability stays with
 * the caller as above.  The caller waits 15 s plus fabric_grace_ms for
 * the answer.  One case is left open: a copy delivered whose answer the
 * link then loses for longer than the caller waits fails the call, the
 * receiver keeping its copy and the caller the Memory (so does, with a
 * forwarding node, an answer of the provider's node that the link loses
 * there, and a chain of more than one forwarding node whose sends each
 * wait long for a credit).  The copy's pages count as pinned there,
 * at most max_pin_bytes, and are charged as the receiver's own pins are:
 * to the user that opened the receiving space, against the RLIMIT_MEMLOCK
 * it had when it opened it (unless it had CAP_IPC_LOCK then), ENOMEM past
 * it, until the copy is freed.  A Request that node derived from a third
 * node's (forwarded there) gets the same: that node copies the buffer in
 * the first half of the time, hands its copy over in turn with the rest
 * of it, and drops its copy either way, so the bytes end in the memory of
 * the node of the Request's provider, at the cost of two copies.  The
 * module's total memory_grants counts grants, and grant_copies, on each
 * node that copies, the copies made.
 */

/**
 * struct fractos_memory_grant - FRACTOS_IOC_MEMORY_GRANT
 * @cid: in, a Memory capability of this space: the whole of a root it
 *	created, with every right
 * @req: in, a Request capability to invoke with the Memory, or
 *	FRACTOS_CID_INVALID
 * @flags: in, must be 0
 * @new_cid: out, the capability to the new object in this space (without
 *	@req, or when @req's invocation failed), else FRACTOS_CID_INVALID
 * @reserved: must be 0
 */
struct fractos_memory_grant {
	__u32 cid;
	__u32 req;
	__u32 flags;
	__u32 new_cid;
	__u64 reserved[2];
};

/**
 * struct fractos_memory_copy - FRACTOS_IOC_MEMORY_COPY
 * @src: in, Memory capability with FRACTOS_PERM_READ
 * @dst: in, Memory capability with FRACTOS_PERM_WRITE
 * @src_offset: in, offset in @src's view
 * @dst_offset: in, offset in @dst's view
 * @len: in, bytes to copy; 0 means "the rest of @src's view from
 *	@src_offset" (the paper's copy-all).  Both [offset, offset + len)
 *	ranges must lie inside their views (else ERANGE): the destination is
 *	never written past its view and the copy is never truncated.
 * @flags: in, must be 0
 * @__pad: must be 0
 * @copied: out, bytes copied (the effective @len)
 * @reserved: must be 0
 *
 * The caller needs capabilities to both objects, not ownership: a copy
 * between two objects created by other spaces (third-party copy) works,
 * and so does one where either or both objects live on other nodes (the
 * owners check the rights and ranges again).  Across nodes the bytes move
 * with one-sided RDMA READs issued by the destination's node straight into
 * its pinned pages; a failed remote copy may have written part of the
 * destination range.
 */
struct fractos_memory_copy {
	__u32 src;
	__u32 dst;
	__u64 src_offset;
	__u64 dst_offset;
	__u64 len;
	__u32 flags;
	__u32 __pad;
	__u64 copied;
	__u64 reserved[2];
};

/**
 * struct fractos_cap_arg - argument of the single-cid operations
 * @cid: in, the capability
 * @flags: in, must be 0
 * @new_cid: out (CAP_DUP, CAP_CREATE_REVTREE), else ignored
 * @__pad: must be 0
 * @reserved: must be 0
 *
 * Used by FRACTOS_IOC_CAP_REVOKE, FRACTOS_IOC_CAP_CLOSE, FRACTOS_IOC_CAP_DUP
 * and FRACTOS_IOC_CAP_CREATE_REVTREE.
 */
struct fractos_cap_arg {
	__u32 cid;
	__u32 flags;
	__u32 new_cid;
	__u32 __pad;
	__u64 reserved[2];
};

/* fractos_cap_info.info_flags */
#define FRACTOS_INFO_REVOKED	0x1U	/* object is revoked */
#define FRACTOS_INFO_REVTREE	0x2U	/* object is a revtree child */
#define FRACTOS_INFO_OWNED	0x4U	/* this space created the object */
#define FRACTOS_INFO_REMOTE	0x8U	/* a proxy: @oid names another node's */

/**
 * struct fractos_cap_info - FRACTOS_IOC_CAP_INFO
 * @cid: in
 * @flags: in, must be 0
 * @type: out, enum fractos_obj_type
 * @perms: out, FRACTOS_PERM_* of this capability
 * @offset: out, start of the view in the underlying memory
 * @len: out, length of the view
 * @oid: out, the object's cluster-wide name
 * @info_flags: out, FRACTOS_INFO_*
 * @depth: out, revocation-tree depth (0 for an object made by
 *	memory_create)
 * @reserved: must be 0
 */
struct fractos_cap_info {
	__u32 cid;
	__u32 flags;
	__u32 type;
	__u32 perms;
	__u64 offset;
	__u64 len;
	struct fractos_oid oid;
	__u32 info_flags;
	__u32 depth;
	__u64 reserved[2];
};

/* fractos_cap_export.flags */
#define FRACTOS_EXPORT_CLOEXEC	0x1U

/**
 * struct fractos_cap_export - FRACTOS_IOC_CAP_EXPORT
 * @cid: in, the capability to export (not consumed)
 * @flags: in, FRACTOS_EXPORT_*
 * @fd: out, a new file descriptor carrying a copy of the capability
 * @__pad: must be 0
 * @reserved: must be 0
 *
 * The fd can travel to another process (SCM_RIGHTS, pidfd_getfd, fork) and
 * be imported there; closing it drops the copy.  It does not keep the
 * object alive past revocation.
 */
struct fractos_cap_export {
	__u32 cid;
	__u32 flags;
	__s32 fd;
	__u32 __pad;
	__u64 reserved[2];
};

/**
 * struct fractos_cap_import - FRACTOS_IOC_CAP_IMPORT
 * @fd: in, a file descriptor made by FRACTOS_IOC_CAP_EXPORT
 * @flags: in, must be 0
 * @cid: out, a new capability in this space, same object and view
 * @__pad: must be 0
 * @reserved: must be 0
 */
struct fractos_cap_import {
	__s32 fd;
	__u32 flags;
	__u32 cid;
	__u32 __pad;
	__u64 reserved[2];
};

/* Limits of one Request (all its arguments, inherited ones included). */
#define FRACTOS_REQ_MAX_IMM	4096	/* immediate bytes */
#define FRACTOS_REQ_MAX_CAPS	32	/* capability arguments */

/*
 * FRACTOS_CREATE_AT_OWNER: when @base is another node's Request (a
 * proxy), the node that owns it derives the new Request there, from the
 * Request @base names, with the arguments given, and @cid names it (a
 * proxy).  Invoking it, here or on any node it is sent to, goes straight
 * to that node: no invocation passes through this one, and a chain of
 * continuations derived this way across nodes takes one message a hop
 * (unless the owner's Request is itself derived from a third node's,
 * which the owner then forwards).  It is a revocation-tree child of the
 * owner's Request: revoking that Request, or @base (CAP_REVOKE asks the
 * owner), revokes it; revoking it leaves @base alone.  A local child of a
 * proxy (a Request derived here from one, or a revocation-tree child) is
 * refused (EOPNOTSUPP): its revocation here could not reach what the
 * owner derives.  The call waits for the owner's answer; its cid is
 * taken first, so a full space fails (EMFILE) before anything is sent.
 * With a Request of this node (and no fabric_loopback) the flag changes
 * nothing: this node is the owner.
 */
#define FRACTOS_CREATE_AT_OWNER	0x1U

/**
 * struct fractos_request_create - FRACTOS_IOC_REQUEST_CREATE
 * @base: in, FRACTOS_CID_INVALID for a new Request whose provider is this
 *	space, else a Request capability to derive from: the new Request has
 *	the same provider and tag, inherits every argument of @base and
 *	appends the ones given here.  A derived Request is a revocation-tree
 *	child of @base: revoking @base revokes it.
 * @flags: in, FRACTOS_CREATE_* (0: derived here)
 * @tag: in, opaque provider tag delivered with every invocation (new
 *	Requests only; must be 0 when deriving)
 * @imms: in, user pointer to @imm_len immediate bytes to append
 * @imm_len: in, bytes at @imms
 * @ncaps: in, number of cids at @caps
 * @caps: in, user pointer to @ncaps __u32 cids to append as capability
 *	arguments (views and rights are captured as they are now)
 * @cid: out, the new Request capability
 * @__pad: must be 0
 * @reserved: must be 0
 *
 * Arguments are never changed once set; the total after appending must
 * stay within FRACTOS_REQ_MAX_IMM and FRACTOS_REQ_MAX_CAPS (else E2BIG).
 */
struct fractos_request_create {
	__u32 base;
	__u32 flags;
	__u64 tag;
	__u64 imms;
	__u32 imm_len;
	__u32 ncaps;
	__u64 caps;
	__u32 cid;
	__u32 __pad;
	__u64 reserved[2];
};

/* fractos_request_invoke.flags */
#define FRACTOS_INVOKE_WAIT	0x1U	/* wait while the receive queue is full */
#define FRACTOS_INVOKE_NOACK	0x2U	/* another node's: return once sent */

/**
 * struct fractos_request_invoke - FRACTOS_IOC_REQUEST_INVOKE
 * @cid: in, a Request capability
 * @flags: in, FRACTOS_INVOKE_*
 * @imms: in, extra immediate bytes appended for this invocation only
 * @imm_len: in, bytes at @imms
 * @ncaps: in, number of cids at @caps
 * @caps: in, extra capability arguments for this invocation only
 * @reserved: must be 0
 *
 * Queues one message on the provider's receive queue: the Request's tag,
 * its immediates followed by @imms, its capabilities followed by @caps.
 * The caller learns nothing about the provider.
 *
 * FRACTOS_INVOKE_NOACK: when the provider is on another node (or
 * fabric_loopback carries the call), return as soon as the invocation is
 * sent instead of waiting for the owner's answer: 0 means "sent", and
 * the arguments count as delegated from then on.  What only the owner can
 * find (EKEYREVOKED, EAGAIN for a full queue, ENOMEM, EPROTO, an argument
 * that does not resolve) is not returned: the owner answers only such a
 * refusal, which the invoker's node counts (totals/noack_refused) and
 * traces (fractos:fos_remote_refused); the invocation is then not
 * delivered, and its arguments are dropped.  An application that uses it
 * learns of failures another way: an error continuation the provider
 * invokes, a monitor on the Request (the owner's revocation reaches every
 * importer), its own timeout.  Every error of the invoker's own node is
 * returned as without the flag (EHOSTUNREACH, ETIMEDOUT and EINTR while
 * waiting for a fabric credit, EBADF, E2BIG, ...).  Calls that hand a
 * Memory over (MEMORY_GRANT) wait for the answer all the same, since it
 * decides who keeps the Memory.  A local provider's answer is known at
 * once: the flag changes nothing there.  It cannot be combined with
 * FRACTOS_INVOKE_WAIT (EINVAL), whose retries need the answer.
 */
struct fractos_request_invoke {
	__u32 cid;
	__u32 flags;
	__u64 imms;
	__u32 imm_len;
	__u32 ncaps;
	__u64 caps;
	__u64 reserved[2];
};

/* fractos_request_receive.type */
enum fractos_msg_type {
	FRACTOS_MSG_REQUEST		= 1,	/* an invocation */
	FRACTOS_MSG_MONITOR_RECEIVE	= 2,	/* tag: the cookie */
	FRACTOS_MSG_MONITOR_DELEGATE	= 3,	/* tag: the cookie */
};

/* fractos_request_receive.flags */
#define FRACTOS_RECV_NONBLOCK	0x1U	/* EAGAIN instead of waiting */
#define FRACTOS_RECV_TIMEOUT	0x2U	/* wait at most timeout_ns */

/**
 * struct fractos_request_receive - FRACTOS_IOC_REQUEST_RECEIVE
 * @flags: in, FRACTOS_RECV_*
 * @type: out, enum fractos_msg_type
 * @timeout_ns: in, with FRACTOS_RECV_TIMEOUT: longest wait (ETIMEDOUT)
 * @tag: out, the Request's tag
 * @imms: in, user buffer for the immediates
 * @imm_len: in, size of @imms; out, immediate bytes of the message
 * @ncaps: in, entries at @caps; out, capability arguments of the message
 * @caps: in, user buffer of __u32 receiving the new cids, in argument
 *	order; each keeps the view and rights it was sent with
 * @reserved: must be 0
 *
 * Takes the oldest message.  If @imms or @caps is too small (EMSGSIZE) or
 * the space cannot hold the capabilities (EMFILE), the message stays
 * queued and @imm_len / @ncaps tell what it needs: a receiver gets every
 * capability of a message or none.  A receive that must wait spins first
 * for up to the module parameter busy_poll_us microseconds (default 0:
 * it sleeps at once), as a remote REQUEST_INVOKE does for its answer; a
 * timeout counts from the end of that spin.
 */
struct fractos_request_receive {
	__u32 flags;
	__u32 type;
	__u64 timeout_ns;
	__u64 tag;
	__u64 imms;
	__u32 imm_len;
	__u32 ncaps;
	__u64 caps;
	__u64 reserved[2];
};

/**
 * struct fractos_monitor - FRACTOS_IOC_MONITOR_RECEIVE and _DELEGATE
 * @cid: in, the capability to watch
 * @flags: in, must be 0
 * @cookie: in, returned as the event's tag
 * @reserved: must be 0
 *
 * Events are messages on this space's receive queue, received with
 * REQUEST_RECEIVE (type FRACTOS_MSG_MONITOR_*, tag = @cookie, no
 * arguments).  Each registration fires at most once.  Events are queued
 * even when the queue is full; registrations per space are limited to
 * max_caps (ENOSPC), and a registration that fired counts until its event
 * is received (or the space is closed).
 *
 * MONITOR_RECEIVE: fires when @cid's object is revoked - explicitly, by a
 * revocation-tree ancestor, or because its owner (a Request's provider)
 * went away.  If it is already revoked, fires at once.  Dropped silently
 * if the object is freed because nobody holds it any more.
 *
 * MONITOR_DELEGATE: only the space that created the object may call it
 * (EPERM), once per object (EBUSY).  From then on every delegation of the
 * object (as a Request or invocation argument, or an exported fd) hands
 * out a new revocation-tree child of it; the event fires when every such
 * child is gone - revoked, or every copy of it closed, including by its
 * holder's death.  Revoking the object itself revokes them all.
 */
struct fractos_monitor {
	__u32 cid;
	__u32 flags;
	__u64 cookie;
	__u64 reserved[2];
};

/**
 * DOC: Names
 *
 * A per-node name service for bootstrapping without SCM_RIGHTS.  The space
 * that created an object may publish one of its capabilities to it under a
 * name; any space may then look the name up and receives a new cid with
 * the same view and rights (a delegation: monitor_delegate counts it).
 * A name is visible to spaces whose opener has the publisher's effective
 * uid, or to everybody with FRACTOS_NAME_WORLD.  Names vanish when their
 * object is revoked, including when the publishing space goes away.
 * Names are 1..FRACTOS_NAME_MAX bytes in 0x21..0x7e (no NUL terminator).
 * LOOKUP with FRACTOS_NAME_NODE asks another node's name service over the
 * fabric (with the asker's effective uid, as a number) and installs a
 * proxy of the object (see "Remote objects").
 */
#define FRACTOS_NAME_MAX	255

/* fractos_name.flags */
#define FRACTOS_NAME_WORLD	0x1U	/* publish: any uid may look it up */
#define FRACTOS_NAME_NODE	0x2U	/* lookup: ask node @node */

/**
 * struct fractos_name - FRACTOS_IOC_NAME_PUBLISH, _LOOKUP and _UNPUBLISH
 * @cid: PUBLISH: in, the capability to publish; LOOKUP: out, the new cid;
 *	UNPUBLISH: ignored
 * @flags: in, FRACTOS_NAME_WORLD (PUBLISH only), FRACTOS_NAME_NODE
 *	(LOOKUP only)
 * @name: in, user pointer to the name's bytes
 * @name_len: in, length of the name
 * @node: in, LOOKUP with FRACTOS_NAME_NODE: the node id to ask; else 0
 * @reserved: must be 0
 */
struct fractos_name {
	__u32 cid;
	__u32 flags;
	__u64 name;
	__u32 name_len;
	__u32 node;
	__u64 reserved[2];
};

/**
 * DOC: Contacts
 *
 * A space may name up to FRACTOS_MAX_CONTACTS Requests as its contacts
 * (the FractOS paper's emergency contacts): whoever provides them learns
 * that the space went away without saying goodbye.  When the space's last
 * file descriptor is released while it still has contacts - its process
 * exited or was killed, or it closed the fd - every contact is invoked
 * once, as REQUEST_INVOKE without FRACTOS_INVOKE_WAIT would, with a
 * struct fractos_contact_note appended to the Request's own immediates;
 * then the space's objects are revoked as always.  For a provider on this
 * node the note is queued before the events of the monitors of the
 * space's objects.  A process that ends on purpose removes its contacts
 * first (FRACTOS_CONTACT_DEL), and its contacts learn nothing.
 *
 * The note says FRACTOS_CONTACT_KILLED, with the signal's number, when the
 * last descriptor went with a process that a signal ended (SIGKILL, a
 * crash: the number as wait(2)'s WTERMSIG would report it), and
 * FRACTOS_CONTACT_CLOSED otherwise (the last close(), an exit(), an
 * exec() of a close-on-exec descriptor).  A space shared between
 * processes (fork, SCM_RIGHTS) is judged by the one that drops the last
 * reference.
 *
 * A contact holds its Request as the space's capability did (closing that
 * cid afterwards changes nothing); a contact whose Request is revoked by
 * then, or whose provider's queue is full (max_queue), or whose provider
 * is on a node that cannot be reached, is not told: the module's totals
 * contact_notes and contact_notes_lost count both outcomes.  Notes to
 * another node are sent without waiting for its answer.
 *
 * Node loss: a contact that is another node's Request (as received, not
 * one derived here) is also told when the space's whole node is lost,
 * which no note of the space's own can say.  ADD tells the Request's node,
 * which keeps the contact armed for the space's node; when that node is
 * declared down (its heartbeat stopped and no connection came back within
 * fabric_grace_ms, or it restarted: a new epoch, or it was deleted), the
 * Request's node invokes the contact itself with a note that says
 * FRACTOS_CONTACT_NODE_LOST, the lost node and the contact's id, and
 * carries no Memory.  DEL, and the space's own note, disarm it (after
 * that note, in order).  Arming is best effort, in the background: it is
 * not done when too many are on their way (4096 from a node) or the other
 * node keeps too many for this one (1024), and the live counter
 * armed_contacts says what a node keeps.  A contact that was armed hears
 * of its space at least once; a node lost right after its space's note
 * went out may add a second note, NODE_LOST, for the same id.  A Request
 * revoked meanwhile disarms what named it.
 *
 * Memory steal: FRACTOS_CONTACT_STEAL marks a Memory object the space
 * created (a root: made by MEMORY_CREATE, not a revocation-tree child) as
 * the contact's to take, up to FRACTOS_MAX_STEAL per contact, each object
 * for one contact only.  When the note says FRACTOS_CONTACT_KILLED, the
 * marked objects still standing are not revoked with the space: the note
 * carries them as capability arguments, after the Request's own, with
 * the views the marking capabilities had, and @stolen in the note counts
 * them.  Their contents are untouched: the same pages (or dma-buf), the
 * same bytes, and every other capability to them stays valid.  Each
 * object then belongs to the space that created the contact's Request:
 * FRACTOS_INFO_OWNED there, revoked when that space goes away; when the
 * Request is another node's, the object stays on this node, owned by no
 * space, and lives while a capability to it does.  Pinned pages stay
 * charged to the user who pinned them.  A note that cannot be queued
 * (see above) steals nothing, and a note for a space that was closed
 * (FRACTOS_CONTACT_CLOSED) carries no Memory: the marked objects are
 * revoked with the space's others.  FRACTOS_CONTACT_UNSTEAL takes a mark
 * back; removing the contact takes all of its marks back.  The Request's
 * own capabilities and the marks together must stay within
 * FRACTOS_REQ_MAX_CAPS, else the note is lost (E2BIG).  The module's
 * total stolen_memories counts the objects handed over.
 *
 * Seeing them: the space's fdinfo (/proc/PID/fdinfo/FD, readable by
 * whoever may ptrace the process) counts its contacts and marks
 * (fractos-contacts, fractos-stealable) and has one line per contact,
 * "fractos-contact: ID NODE:EPOCH:OID armed A stealable N revoked R":
 * the contact's id, its Request's name as FRACTOS_IOC_CAP_INFO gives it,
 * 1 if the Request's node was asked to keep it armed for node loss (best
 * effort, as above), the Memory marked for it, and 1 if the Request was
 * revoked since (such a contact is told nothing).  fractctl space
 * contacts lists them.
 */
#define FRACTOS_MAX_CONTACTS	8
#define FRACTOS_MAX_STEAL	8	/* Memory marks per contact */

/* fractos_space_contact.op */
#define FRACTOS_CONTACT_ADD	1U
#define FRACTOS_CONTACT_DEL	2U
#define FRACTOS_CONTACT_STEAL	3U
#define FRACTOS_CONTACT_UNSTEAL	4U

/**
 * struct fractos_space_contact - FRACTOS_IOC_SPACE_CONTACT
 * @op: in, FRACTOS_CONTACT_ADD, _DEL, _STEAL or _UNSTEAL
 * @cid: in, ADD: a Request capability of this space; DEL: must be 0;
 *	STEAL, UNSTEAL: a Memory capability of this space (its object is
 *	what is marked)
 * @id: ADD: in must be 0, out the contact's id (1..FRACTOS_MAX_CONTACTS,
 *	lowest free first); DEL, STEAL, UNSTEAL: in, the contact
 * @flags: in, must be 0
 * @reserved: must be 0
 */
struct fractos_space_contact {
	__u32 op;
	__u32 cid;
	__u32 id;
	__u32 flags;
	__u64 reserved[2];
};

/* fractos_contact_note.reason */
#define FRACTOS_CONTACT_CLOSED	1U	/* the last descriptor was closed */
#define FRACTOS_CONTACT_KILLED	2U	/* ... by a process a signal ended */
#define FRACTOS_CONTACT_NODE_LOST 3U	/* its node was lost (told by ours) */

/**
 * struct fractos_contact_note - the immediates a contact receives
 * @reason: FRACTOS_CONTACT_CLOSED, FRACTOS_CONTACT_KILLED or
 *	FRACTOS_CONTACT_NODE_LOST
 * @signal: with FRACTOS_CONTACT_KILLED the signal's number, else 0
 * @id: the contact's id, as FRACTOS_CONTACT_ADD returned it
 * @node: the node of the space that went away
 * @stolen: the Memory capabilities the note carries after the Request's
 *	own (FRACTOS_CONTACT_STEAL; only with FRACTOS_CONTACT_KILLED)
 * @reserved: 0
 *
 * Appended after the Request's own immediates: a contact Request made
 * without immediates receives exactly this struct.
 */
struct fractos_contact_note {
	__u32 reason;
	__u32 signal;
	__u32 id;
	__u32 node;
	__u32 stolen;
	__u32 reserved;
};

/**
 * DOC: io_uring
 *
 * Every operation can also be submitted with io_uring: sqe->opcode =
 * IORING_OP_URING_CMD, sqe->fd = the space's fd, sqe->cmd_op = the
 * FRACTOS_IOC_* number, and the SQE's command area holds this struct (it
 * fits a plain 64-byte SQE).  The CQE's res is 0 or -errno, with the same
 * meaning as the ioctl's; output fields are written to the struct at @arg,
 * which must stay valid until the CQE arrives.  Operations that wait
 * complete asynchronously and never block the submitter:
 *
 * - A blocking REQUEST_RECEIVE (neither FRACTOS_RECV_NONBLOCK nor
 *   FRACTOS_RECV_TIMEOUT) waits on the space itself and completes in the
 *   submitting task when a message arrives; it holds no io_uring worker.
 *   Closing the ring or exiting cancels it (ECANCELED).
 *   IORING_OP_ASYNC_CANCEL does not reach it (io_uring cannot cancel a
 *   URING_CMD by user_data): end it with a message, or use
 *   FRACTOS_RECV_TIMEOUT.  This needs Linux 6.7 (cancelable URING_CMDs);
 *   on older kernels it waits in an io_uring worker, as the next ones do.
 * - REQUEST_RECEIVE with FRACTOS_RECV_TIMEOUT, REQUEST_INVOKE with
 *   FRACTOS_INVOKE_WAIT, and the calls to other nodes (remote
 *   REQUEST_INVOKE, MEMORY_COPY, NAME_LOOKUP on another node, CAP_REVOKE
 *   of a proxy, CAP_REVOKE of an object a remote copy is reading,
 *   REQUEST_CREATE with FRACTOS_CREATE_AT_OWNER) go to an io_uring
 *   worker, where they wait as the ioctl would.
 *
 * The others complete inline.
 */

/**
 * struct fractos_uring_cmd - the command area of an IORING_OP_URING_CMD SQE
 * @arg: user pointer to the operation's struct, exactly as for ioctl()
 * @reserved: must be 0
 */
struct fractos_uring_cmd {
	__u64 arg;
	__u64 reserved;
};

#define FRACTOS_IOC_MAGIC	0xF7

#define FRACTOS_IOC_SPACE_INFO		_IOWR(FRACTOS_IOC_MAGIC, 0x00, struct fractos_space_info)
#define FRACTOS_IOC_MEMORY_CREATE	_IOWR(FRACTOS_IOC_MAGIC, 0x01, struct fractos_memory_create)
#define FRACTOS_IOC_MEMORY_DIMINISH \
	_IOWR(FRACTOS_IOC_MAGIC, 0x02, struct fractos_memory_diminish)
#define FRACTOS_IOC_MEMORY_COPY		_IOWR(FRACTOS_IOC_MAGIC, 0x03, struct fractos_memory_copy)
#define FRACTOS_IOC_CAP_REVOKE		_IOWR(FRACTOS_IOC_MAGIC, 0x04, struct fractos_cap_arg)
#define FRACTOS_IOC_CAP_CREATE_REVTREE	_IOWR(FRACTOS_IOC_MAGIC, 0x05, struct fractos_cap_arg)
#define FRACTOS_IOC_CAP_CLOSE		_IOWR(FRACTOS_IOC_MAGIC, 0x06, struct fractos_cap_arg)
#define FRACTOS_IOC_CAP_DUP		_IOWR(FRACTOS_IOC_MAGIC, 0x07, struct fractos_cap_arg)
#define FRACTOS_IOC_CAP_INFO		_IOWR(FRACTOS_IOC_MAGIC, 0x08, struct fractos_cap_info)
#define FRACTOS_IOC_CAP_EXPORT		_IOWR(FRACTOS_IOC_MAGIC, 0x09, struct fractos_cap_export)
#define FRACTOS_IOC_CAP_IMPORT		_IOWR(FRACTOS_IOC_MAGIC, 0x0a, struct fractos_cap_import)
#define FRACTOS_IOC_REQUEST_CREATE \
	_IOWR(FRACTOS_IOC_MAGIC, 0x0b, struct fractos_request_create)
#define FRACTOS_IOC_REQUEST_INVOKE \
	_IOWR(FRACTOS_IOC_MAGIC, 0x0c, struct fractos_request_invoke)
#define FRACTOS_IOC_REQUEST_RECEIVE \
	_IOWR(FRACTOS_IOC_MAGIC, 0x0d, struct fractos_request_receive)
#define FRACTOS_IOC_MONITOR_RECEIVE \
	_IOWR(FRACTOS_IOC_MAGIC, 0x0e, struct fractos_monitor)
#define FRACTOS_IOC_MONITOR_DELEGATE \
	_IOWR(FRACTOS_IOC_MAGIC, 0x0f, struct fractos_monitor)
#define FRACTOS_IOC_NAME_PUBLISH	_IOWR(FRACTOS_IOC_MAGIC, 0x10, struct fractos_name)
#define FRACTOS_IOC_NAME_LOOKUP		_IOWR(FRACTOS_IOC_MAGIC, 0x11, struct fractos_name)
#define FRACTOS_IOC_NAME_UNPUBLISH	_IOWR(FRACTOS_IOC_MAGIC, 0x12, struct fractos_name)
#define FRACTOS_IOC_SPACE_CONTACT \
	_IOWR(FRACTOS_IOC_MAGIC, 0x13, struct fractos_space_contact)
#define FRACTOS_IOC_MEMORY_GRANT \
	_IOWR(FRACTOS_IOC_MAGIC, 0x14, struct fractos_memory_grant)

/**
 * DOC: Live-object counters
 *
 * /sys/class/misc/fractos/live/ holds one read-only decimal file per
 * counter: spaces, objects, caps, memories, pinned_pages, capfds, requests,
 * messages, names, peers, conns, exports (local objects other nodes may
 * hold), proxies (other nodes' objects held here), grants (ranges of local
 * Memory registered for another node's RDMA READs by a memory_copy in
 * progress), monitors, dmabufs (dma-bufs imported as Memory) and
 * contacts (see "Contacts").  All are zero when nothing uses the module;
 * rmmod is refused (EBUSY) while any space or capability fd is open.
 */

#endif /* _UAPI_LINUX_FRACTOS_H */
