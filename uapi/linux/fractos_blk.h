/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * fractos_blk.h - the block adaptor (fractos_nvme.ko): its generic netlink
 * family "fractos_blk" and the Requests it serves.
 */

/**
 * DOC: Administration (generic netlink, family FRACTOS_BLK_GENL_NAME)
 *
 * ATTACH (CAP_SYS_ADMIN) PATH: a block device's path (an NVMe namespace;
 *        any block device works); NAME: the name its management Request
 *        is published under (1 to FRACTOS_NAME_MAX bytes, 0x21-0x7e);
 *        UID (optional, default 0): the only uid that may look NAME up;
 *        FORMAT (flag): write a new, empty volume table first.
 *        The device is opened exclusively (nobody may mount it or open
 *        it exclusively meanwhile).  Returns DEV_ID.
 *        Errors: EPERM (no CAP_SYS_ADMIN), EINVAL (attributes),
 *        ENOENT/ENXIO (no such device), ENOTBLK, EBUSY (opened
 *        exclusively by someone else: mounted, attached), EMEDIUMTYPE (no
 *        volume table on it and no FORMAT; or a table of a newer format),
 *        EUCLEAN (a table that is damaged: checksum, overlaps, ids),
 *        ENOSPC (the device is under 2 MiB), EEXIST (NAME is published
 *        already), EIO, ENOMEM.
 * DETACH (CAP_SYS_ADMIN) DEV_ID or NAME: revokes the management Request
 *        and every volume Request, answers what was queued and waits for
 *        the I/O in flight (continuations get EKEYREVOKED where the I/O
 *        did not complete), then closes the device.  An invocation that
 *        raced the revocation may be dropped unanswered.  EPERM, ENOENT
 *        for an unknown device.
 * LIST   dump: one message per attached device: DEV_ID, PATH, NAME, UID,
 *        SIZE, BLOCK_SIZE, VOLUMES, FREE, INFLIGHT, and a nested STATS
 *        (FRACTOS_BLK_STAT_*), then a nested VOLUME per volume (VOL_ID,
 *        VOL_START, VOL_SIZE, VOL_INFLIGHT).  A device whose volumes do
 *        not fit one message comes in several consecutive ones, each
 *        with the device's attributes and the next volumes.
 */

/**
 * DOC: Answers, and malformed capability lists
 *
 * Every invocation whose capabilities name a continuation gets exactly one
 * answer, whatever else is wrong with it.  Capabilities are positional,
 * counted from the first, the Request's own (fixed by a derivation) before
 * the invoker's: a Request derived with the memory fixed is invoked with
 * [done] or [done, error], and one that fixes [memory, done] with [] or
 * [error].  A capability list of the wrong length, or with a capability
 * of the wrong type at a position (a Memory where a continuation goes, a
 * Request where the memory goes), is answered with EINVAL, and only that
 * (struct fractos_blk_done or struct fractos_blk_reply zero but for the
 * errno), on the Request at the error continuation's position (index 2 of
 * an I/O, 1 of a management call) if there is one there, else on the one
 * at done's (1; 0), else on the last Request of the list.  So [memory,
 * done, error, memory] is answered on error; a Request derived with the
 * memory fixed and invoked with [memory, done, error] (so [memory, memory,
 * done, error]) on done; [reply, error, anything] on error.  An invocation
 * with no Request among its capabilities has nobody to answer: it is
 * dropped and counted (STATS DROPPED).
 */

/**
 * DOC: The management Request
 *
 * Invoked with immediates struct fractos_blk_mgmt and capabilities
 * [reply] or [reply, error]: two Requests, the continuations.
 *
 * - FRACTOS_BLK_CREATE @size bytes (a multiple of the block size):
 *   allocates a volume, records it on the device (it survives a module
 *   reload and a reboot), and invokes reply with struct fractos_blk_reply
 *   and capabilities [read Request, write Request] for the volume.
 * - FRACTOS_BLK_OPEN @volume: the same reply for an existing volume; each
 *   OPEN makes new read and write Requests, revocable on their own.
 * - FRACTOS_BLK_DESTROY @volume: revokes every Request of the volume,
 *   waits for its I/O in flight, frees its blocks; reply with @volume and
 *   @size 0, no capabilities.
 *
 * A failure invokes error (or reply, if no error was given) with @status
 * the negative errno: EINVAL (bad struct or op, a size that is 0 or not a
 * multiple of the block size, a bad capability list: see "Answers"),
 * ENOSPC (no free range that large, or FRACTOS_BLK_MAX_VOLUMES volumes),
 * ENOENT (no such volume), EKEYREVOKED (the device is being detached),
 * EIO, ENOMEM.
 *
 * A CREATE whose reply cannot be delivered (the reply Request revoked
 * meanwhile) leaves the volume: LIST shows it, OPEN reaches it.  DESTROY
 * does not erase a volume's blocks: a later CREATE may see old bytes, as
 * with a new logical volume of LVM; clear what you must before DESTROY.
 */

/**
 * DOC: Volume Requests
 *
 * A read or write Request is invoked with immediates struct fractos_blk_io
 * and capabilities [memory, done] or [memory, done, error]:
 *
 * - read: @len bytes of the volume from @offset into the Memory view
 *   (which needs FRACTOS_PERM_WRITE); write: from the view (READ) to the
 *   volume.  @len bytes from the start of the view; the view may be
 *   longer.
 * - The I/O is served in the kernel: bios straight onto the Memory's
 *   pages when they are on this node, else through a staging buffer and
 *   one RDMA transfer.  When it completes, done is invoked with struct
 *   fractos_blk_done (@result the byte count); on failure error (or done
 *   if no error was given) with @result the negative errno.  A write is
 *   answered once it is durable (FUA).
 * - An I/O is answered only once the device is done with the view's
 *   pages (or when it never reached them), whatever the answer: the
 *   Memory revoked, the volume destroyed or the device detached mid-write
 *   included.  The buffer may be reused the moment the answer arrives;
 *   nothing written to it afterwards reaches the volume.
 * - The storage node dying answers nothing: the client learns it from
 *   its Requests of that node being revoked (monitors fire).
 * - A holder may derive a Request whose immediates fix @offset and @len
 *   (and whose capabilities may fix the memory): the derived Request does
 *   that range only, because more immediates than a struct fractos_blk_io
 *   make the invocation fail with EINVAL.
 *
 * Errors of an I/O, through its error continuation::
 *
 *   EINVAL  the immediates are not exactly one struct fractos_blk_io, a
 *           capability is missing, extra or of the wrong type (see
 *           "Answers" for which continuation gets it), @len is 0 or over
 *           FRACTOS_BLK_MAX_IO, or @offset, @len or the view's first byte
 *           is not a multiple of the device's logical block size
 *   ERANGE  @offset + @len is past the volume, or @len past the view
 *   EPERM   the view lacks the right the direction needs (a read into a
 *           read-only view, a write from a view without READ)
 *   EAGAIN  queue_depth_volume commands of the volume or
 *           queue_depth_device of the device are in flight (module
 *           parameters; at most FRACTOS_BLK_QD_VOLUME and _DEVICE), or
 *           64 MiB of staging buffers for other nodes' Memory are in use.
 *           A command leaves "in flight" (INFLIGHT, VOL_INFLIGHT) before
 *           its continuation is invoked: a client that sends its next
 *           command from the answer of the last finds the slot free.
 *   EKEYREVOKED  the volume was destroyed or the device detached (before
 *           or during the I/O), or the memory was revoked
 *   EIO     the device failed the command
 *   ENOMEM, and the fabric's errors for another node's memory
 *
 * An invocation with no Request among its capabilities is dropped (and
 * counted: STATS DROPPED); any other is answered (see "Answers").
 */
#ifndef _UAPI_LINUX_FRACTOS_BLK_H
#define _UAPI_LINUX_FRACTOS_BLK_H

#include <linux/types.h>

#define FRACTOS_BLK_GENL_NAME		"fractos_blk"
#define FRACTOS_BLK_GENL_VERSION	1

/*
 * Commands in flight at most, per volume and per device: the defaults and
 * the largest values of fractos_nvme's queue_depth_volume and
 * queue_depth_device parameters.
 */
#define FRACTOS_BLK_QD_VOLUME		64
#define FRACTOS_BLK_QD_DEVICE		256
/* Volumes per device. */
#define FRACTOS_BLK_MAX_VOLUMES		1000
/* The largest single I/O. */
#define FRACTOS_BLK_MAX_IO		(8U << 20)

enum fractos_blk_cmd {
	FRACTOS_BLK_CMD_UNSPEC,
	FRACTOS_BLK_CMD_ATTACH,
	FRACTOS_BLK_CMD_DETACH,
	FRACTOS_BLK_CMD_LIST,
	__FRACTOS_BLK_CMD_MAX,
};

#define FRACTOS_BLK_CMD_MAX (__FRACTOS_BLK_CMD_MAX - 1)

enum fractos_blk_attr {
	FRACTOS_BLK_A_UNSPEC,
	FRACTOS_BLK_A_DEV_ID,		/* u32 */
	FRACTOS_BLK_A_PATH,		/* string */
	FRACTOS_BLK_A_NAME,		/* string */
	FRACTOS_BLK_A_UID,		/* u32 */
	FRACTOS_BLK_A_FORMAT,		/* flag */
	FRACTOS_BLK_A_SIZE,		/* u64, bytes */
	FRACTOS_BLK_A_BLOCK_SIZE,	/* u32, the logical block size */
	FRACTOS_BLK_A_VOLUMES,		/* u32 */
	FRACTOS_BLK_A_FREE,		/* u64, bytes not in a volume */
	FRACTOS_BLK_A_INFLIGHT,		/* u32 */
	FRACTOS_BLK_A_STATS,		/* nested FRACTOS_BLK_STAT_* (u64) */
	FRACTOS_BLK_A_VOLUME,		/* nested FRACTOS_BLK_A_VOL_* */
	FRACTOS_BLK_A_VOL_ID,		/* u64 */
	FRACTOS_BLK_A_VOL_START,	/* u64, bytes from the device's start */
	FRACTOS_BLK_A_VOL_SIZE,		/* u64, bytes */
	FRACTOS_BLK_A_VOL_INFLIGHT,	/* u32 */
	FRACTOS_BLK_A_PAD,
	__FRACTOS_BLK_A_MAX,
};

#define FRACTOS_BLK_A_MAX (__FRACTOS_BLK_A_MAX - 1)

enum fractos_blk_stat {
	FRACTOS_BLK_STAT_UNSPEC,
	FRACTOS_BLK_STAT_READS,		/* I/Os completed */
	FRACTOS_BLK_STAT_WRITES,
	FRACTOS_BLK_STAT_READ_BYTES,
	FRACTOS_BLK_STAT_WRITE_BYTES,
	FRACTOS_BLK_STAT_ERRORS,	/* I/Os failed, any errno */
	FRACTOS_BLK_STAT_BUSY,		/* I/Os refused with EAGAIN */
	FRACTOS_BLK_STAT_STAGED,	/* I/Os through a staging buffer */
	FRACTOS_BLK_STAT_DROPPED,	/* invocations with no Request: no answer */
	/*
	 * continuations that failed here or could not be sent; another
	 * node's are posted without an ACK (FRACTOS_INVOKE_NOACK), and its
	 * refusals counted in fractos's totals/noack_refused
	 */
	FRACTOS_BLK_STAT_CONT_FAILED,
	__FRACTOS_BLK_STAT_MAX,
};

#define FRACTOS_BLK_STAT_MAX (__FRACTOS_BLK_STAT_MAX - 1)

/* Management operations (struct fractos_blk_mgmt.op). */
enum fractos_blk_op {
	FRACTOS_BLK_CREATE	= 1,
	FRACTOS_BLK_OPEN	= 2,
	FRACTOS_BLK_DESTROY	= 3,
};

/**
 * struct fractos_blk_mgmt - immediates of a management invocation
 * @op: enum fractos_blk_op
 * @flags: must be 0
 * @size: CREATE: bytes, a multiple of the block size
 * @volume: OPEN, DESTROY: the volume's id
 */
struct fractos_blk_mgmt {
	__u32 op;
	__u32 flags;
	__u64 size;
	__u64 volume;
};

/**
 * struct fractos_blk_reply - immediates of a management reply
 * @status: 0 or a negative errno
 * @block_size: the device's logical block size
 * @volume: the volume's id
 * @size: the volume's size in bytes (0 after DESTROY)
 */
struct fractos_blk_reply {
	__s32 status;
	__u32 block_size;
	__u64 volume;
	__u64 size;
};

/**
 * struct fractos_blk_io - immediates of a volume read or write
 * @offset: bytes from the volume's start, a multiple of the block size
 * @len: bytes, a multiple of the block size, at most FRACTOS_BLK_MAX_IO
 */
struct fractos_blk_io {
	__u64 offset;
	__u64 len;
};

/**
 * struct fractos_blk_done - immediates of an I/O's continuation
 * @result: bytes transferred, or a negative errno
 */
struct fractos_blk_done {
	__s64 result;
};

#endif /* _UAPI_LINUX_FRACTOS_BLK_H */
