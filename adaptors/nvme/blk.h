/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fractos_nvme: the block adaptor's private definitions.
 */

/**
 * DOC: Objects and lifetimes
 *
 * A device (struct fblk_dev) is one attached block device with its own
 * kernel provider (provider.h).  Its management Request (tag
 * FBLK_TAG_MGMT) and, per volume, one root read and one root write
 * Request (tags fblk_tag(id, write)) are owned by that provider; what
 * clients hold are revocation-tree children of the roots, made by each
 * CREATE or OPEN, so that each can be revoked alone and all of a volume's
 * with its roots.
 *
 * The provider hands messages to fblk_receive() one at a time, so the
 * volume table changes (CREATE, DESTROY) and the I/O submissions never run
 * concurrently with each other; they take dev->lock only against the
 * netlink side (LIST, DETACH).
 *
 * A command (struct fblk_cmd) holds a reference on its device and counts
 * in its volume's and its device's @inflight (the queue depth, what LIST
 * shows) from submission until just before its continuation is invoked,
 * and in their @active until it is answered and freed: whoever got the
 * answer finds the slot free already, and DESTROY and DETACH answer only
 * after every command's answer.  A volume is freed only by DESTROY or
 * DETACH, after its @active reached zero; a device by its last reference,
 * after DETACH waited for its @active to reach zero.  Both wait on the
 * device's @idle_wq; completions touch neither the volume nor the wait
 * queue after their reference is gone (wake-up before kref_put).
 */
#ifndef FRACTOS_BLK_PRIV_H
#define FRACTOS_BLK_PRIV_H

#include <linux/bits.h>
#include <linux/blkdev.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <linux/fractos.h>
#include <linux/fractos_blk.h>
#include "provider.h"

/* ---- on the device: the label (volume table) ---- */

#define FBLK_MAGIC		"FOSBLK\0\1"
#define FBLK_LABEL_VERSION	1
/* The label's size on the device; volumes start at FBLK_DATA_START. */
#define FBLK_LABEL_BYTES	(32U << 10)
#define FBLK_DATA_START		BIT_ULL(20)
/*
 * Staging buffers (I/O on another node's Memory) in use per device at
 * most; over it, EAGAIN.
 */
#define FBLK_STAGE_MAX		(64ULL << 20)
/* Volume ids stay below this (tags are id << 1; 0 is the management's). */
#define FBLK_ID_LIMIT		BIT_ULL(62)
/* Volumes start at multiples of this (and of the logical block size). */
#define FBLK_ALIGN		4096ULL

/**
 * struct fblk_label_vol - one volume on the device (little endian)
 * @id: never reused on this device; 0 marks a free entry
 * @start: first byte on the device
 * @size: bytes
 */
struct fblk_label_vol {
	__le64 id;
	__le64 start;
	__le64 size;
};

/**
 * struct fblk_label - the first FBLK_LABEL_BYTES of an attached device
 * @magic: FBLK_MAGIC
 * @version: FBLK_LABEL_VERSION
 * @crc: crc32_le(~0) of the label with @crc zero
 * @dev_size: the device's size when formatted
 * @next_id: the next volume's id
 * @nvols: entries of @vols in use (the first @nvols, by start)
 * @reserved: zero
 * @vols: the volumes, sorted by start
 */
struct fblk_label {
	u8 magic[8];
	__le32 version;
	__le32 crc;
	__le64 dev_size;
	__le64 next_id;
	__le32 nvols;
	__le32 reserved[9];
	struct fblk_label_vol vols[FRACTOS_BLK_MAX_VOLUMES];
};

/* ---- in memory ---- */

#define FBLK_TAG_MGMT	0ULL

static inline u64 fblk_tag(u64 id, bool write)
{
	return id << 1 | write;
}

enum fblk_stat_idx {
	FBLK_READS,
	FBLK_WRITES,
	FBLK_READ_BYTES,
	FBLK_WRITE_BYTES,
	FBLK_ERRORS,
	FBLK_BUSY,
	FBLK_STAGED,
	FBLK_DROPPED,
	FBLK_CONT_FAILED,
	FBLK_NSTATS,
};

struct fblk_dev;

/**
 * struct fblk_vol - a volume
 * @dev: its device
 * @id: its id (the label's)
 * @start: first byte on the device
 * @size: bytes
 * @rd: the root read Request (owned by the device's provider)
 * @wr: the root write Request
 * @inflight: commands submitted and not yet answered (queue depth, LIST)
 * @active: commands not yet answered and freed (DESTROY waits for zero)
 * @dead: destroyed or detached: new commands fail with EKEYREVOKED and
 *	completions report it; set under dev->lock
 */
struct fblk_vol {
	struct fblk_dev *dev;
	u64 id;
	u64 start;
	u64 size;
	struct fos_kcap *rd;
	struct fos_kcap *wr;
	atomic_t inflight;
	atomic_t active;
	bool dead;
};

/**
 * struct fblk_dev - an attached block device
 * @ref: the device list's until DETACH, one per command in flight
 * @link: on fblk_devs, under fblk_devs_lock
 * @id: the adaptor's id for it (netlink DEV_ID)
 * @name: the published name of @mgmt
 * @path: the path it was attached by
 * @uid: who may look @name up
 * @bdev: the device, opened exclusively
 * @bdev_file: the open file of @bdev (kernels with bdev_file_open_by_path)
 * @lbs: logical block size
 * @size: bytes
 * @prov: its kernel provider
 * @mgmt: the management Request (root)
 * @mgmt_lock: serialises management operations (CREATE, OPEN, DESTROY,
 *	in the provider's callback) with DETACH's revocation of the volumes,
 *	so that neither walks a volume the other frees; taken before @lock
 * @staged: bytes of staging buffers in use (bounded by FBLK_STAGE_MAX)
 * @lock: protects @label, @vols' membership and @dead against the
 *	netlink side; held across label writes
 * @label: the label as on the device (FBLK_LABEL_BYTES, page-backed)
 * @label_pages: the pages under @label
 * @vols: volume id -> struct fblk_vol
 * @inflight: commands in flight on the device, as the volume's
 * @active: commands of the device not yet answered and freed
 * @idle_wq: DESTROY and DETACH wait here for @active to drop
 * @dead: DETACH has begun
 * @stats: FBLK_* counters
 */
struct fblk_dev {
	struct kref ref;
	struct list_head link;
	u32 id;
	char name[FRACTOS_NAME_MAX + 1];
	char path[256];
	kuid_t uid;
	struct block_device *bdev;
	struct file *bdev_file;
	u32 lbs;
	u64 size;
	struct fos_provider *prov;
	struct fos_kcap *mgmt;
	struct mutex mgmt_lock;	/* see @mgmt_lock above */
	atomic64_t staged;
	struct mutex lock;	/* see @lock above */
	struct fblk_label *label;
	struct page *label_pages;
	struct xarray vols;
	atomic_t inflight;
	atomic_t active;
	wait_queue_head_t idle_wq;
	bool dead;
	atomic64_t stats[FBLK_NSTATS];
};

static inline void fblk_stat(struct fblk_dev *dev, enum fblk_stat_idx i,
			     u64 v)
{
	atomic64_add(v, &dev->stats[i]);
}

/* main.c */
extern struct workqueue_struct *fblk_wq;
extern unsigned int fblk_qd_volume;
extern unsigned int fblk_qd_device;

/* dev.c */
extern struct mutex fblk_devs_lock;
extern struct list_head fblk_devs;
int fblk_attach(const char *path, const char *name, kuid_t uid, bool format,
		u32 *id);
int fblk_detach(u32 id, const char *name);
void fblk_detach_all(void);
void fblk_dev_put(struct fblk_dev *dev);
u64 fblk_free_bytes(struct fblk_dev *dev);
int fblk_conts(struct fblk_dev *dev, const struct fos_kmsg *m,
	       const struct fos_kmsg_layout *l, struct fos_kconts *c);
void fblk_mgmt(struct fblk_dev *dev, const struct fos_kmsg *m);
void fblk_answer(struct fblk_dev *dev, struct fos_kcap *to, const void *imm,
		 u32 len);
void fblk_reply_err(struct fblk_dev *dev, struct fos_kcap *ok,
		    struct fos_kcap *err, const void *imm, u32 len);

/* io.c */
void fblk_io(struct fblk_dev *dev, const struct fos_kmsg *m);

/* genl.c */
int fblk_genl_init(void);
void fblk_genl_exit(void);

#endif /* FRACTOS_BLK_PRIV_H */
