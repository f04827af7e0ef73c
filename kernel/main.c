// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: module setup, parameters, the misc device and live counters.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/sysfs.h>
#include "fos.h"
#include "fabric.h"
#include "memory.h"

unsigned int fos_max_caps = 1U << 20;
module_param_named(max_caps, fos_max_caps, uint, 0644);
MODULE_PARM_DESC(max_caps,
		 "Capabilities per space; past it, creating a cid fails with EMFILE (default 1048576)");

unsigned int fos_node_id;
module_param_named(node_id, fos_node_id, uint, 0444);
MODULE_PARM_DESC(node_id, "This node's id in the cluster (default 0)");

unsigned long fos_max_pin_bytes = 64ULL << 30;
module_param_named(max_pin_bytes, fos_max_pin_bytes, ulong, 0644);
MODULE_PARM_DESC(max_pin_bytes,
		 "Largest single Memory object in bytes, 0 for no limit (default 64 GiB); RLIMIT_MEMLOCK still applies");

unsigned int fos_max_queue = 1024;
module_param_named(max_queue, fos_max_queue, uint, 0644);
MODULE_PARM_DESC(max_queue,
		 "Messages a space's receive queue holds; past it, invoke fails with EAGAIN or waits (default 1024)");

unsigned int fos_max_names = 65536;
module_param_named(max_names, fos_max_names, uint, 0644);
MODULE_PARM_DESC(max_names,
		 "Names published on this node; past it, publish fails with ENOSPC (default 65536)");

/* Changes at every load: capabilities from an older epoch are stale. */
u32 fos_epoch;
module_param_named(epoch, fos_epoch, uint, 0444);
MODULE_PARM_DESC(epoch, "This node's epoch, chosen at load (read-only)");

atomic_long_t fos_live[FOS_LIVE_NR];
atomic_long_t fos_totals[FOS_TOTAL_NR];

/* One file of live/ or totals/: the counter it shows. */
struct fos_count_attr {
	struct device_attribute attr;
	atomic_long_t *count;
};

static ssize_t fos_count_show(struct device *dev, struct device_attribute *da,
			      char *buf)
{
	struct fos_count_attr *ca = container_of(da, struct fos_count_attr,
						 attr);

	return sysfs_emit(buf, "%ld\n", atomic_long_read(ca->count));
}

#define FOS_COUNT_ATTR(_name, _count) \
	{ .attr = __ATTR(_name, 0444, fos_count_show, NULL), \
	  .count = (_count) }
#define FOS_LIVE_ATTR(_name, _c)	FOS_COUNT_ATTR(_name, &fos_live[_c])
#define FOS_TOTAL_ATTR(_name, _t)	FOS_COUNT_ATTR(_name, &fos_totals[_t])

static struct fos_count_attr fos_live_attrs[] = {
	FOS_LIVE_ATTR(spaces, FOS_LIVE_SPACES),
	FOS_LIVE_ATTR(objects, FOS_LIVE_OBJECTS),
	FOS_LIVE_ATTR(caps, FOS_LIVE_CAPS),
	FOS_LIVE_ATTR(memories, FOS_LIVE_MEMORIES),
	FOS_LIVE_ATTR(pinned_pages, FOS_LIVE_PINNED_PAGES),
	FOS_LIVE_ATTR(capfds, FOS_LIVE_CAPFDS),
	FOS_LIVE_ATTR(requests, FOS_LIVE_REQUESTS),
	FOS_LIVE_ATTR(messages, FOS_LIVE_MESSAGES),
	FOS_LIVE_ATTR(names, FOS_LIVE_NAMES),
	FOS_LIVE_ATTR(peers, FOS_LIVE_PEERS),
	FOS_LIVE_ATTR(conns, FOS_LIVE_CONNS),
	FOS_LIVE_ATTR(exports, FOS_LIVE_EXPORTS),
	FOS_LIVE_ATTR(proxies, FOS_LIVE_PROXIES),
	FOS_LIVE_ATTR(grants, FOS_LIVE_GRANTS),
	FOS_LIVE_ATTR(monitors, FOS_LIVE_MONITORS),
	FOS_LIVE_ATTR(dmabufs, FOS_LIVE_DMABUFS),
	FOS_LIVE_ATTR(contacts, FOS_LIVE_CONTACTS),
	FOS_LIVE_ATTR(memmaps, FOS_LIVE_MEMMAPS),
	FOS_LIVE_ATTR(armed_contacts, FOS_LIVE_ARMED_CONTACTS),
	FOS_LIVE_ATTR(kept_regions, FOS_LIVE_KEPT),
};

static struct attribute *fos_live_attr_ptrs[ARRAY_SIZE(fos_live_attrs) + 1];

/*
 * staged_bytes: bytes of device memory (a dma-buf without struct pages)
 * that went through a staging buffer for a remote copy, not straight
 * between the NIC and the device; devmem_moves: device memory revoked
 * because its exporter moved it (move_notify); inline_copies: remote
 * copies inside a GRANT_REPLY or a COPY (copy_inline_max), no RDMA READ;
 * busy_polls, busy_poll_misses: waits that ended while spinning, and those
 * that spun out and slept (busy_poll_us, "Busy polling" in busypoll.c);
 * contact_notes, contact_notes_lost: notes of a space's contacts queued
 * (or answered by another node), and those that could not be
 * ("Contacts" in the uAPI header); stolen_memories: Memory objects
 * handed to a contact by a killed space's note (FRACTOS_CONTACT_STEAL);
 * memory_grants: buffers handed over by MEMORY_GRANT; pull_retries:
 * windows of remote copies (or transfers through kept regions) asked for
 * again because the connection of their region ended (with
 * fabric_grace_ms); grant_copies: buffers another node's MEMORY_GRANT
 * handed to a Request of ours, copied here
 * (kernel/remote/handover.c); noack_invokes, noack_refused: invocations
 * sent to another node with FRACTOS_INVOKE_NOACK, and those its owner
 * refused ("Invocations without an answer" in kernel/remote/remote.c);
 * kept_copies: remote copies read through a region the source's owner
 * kept for us, with no message ("Kept regions" in kernel/remote/kept.c);
 * softirq_invokes: invocations from other nodes delivered in the receive
 * softirq (fabric_rx_softirq, fos_invoke_recv_atomic()).
 */
static struct fos_count_attr fos_total_attrs[] = {
	FOS_TOTAL_ATTR(staged_bytes, FOS_TOTAL_STAGED_BYTES),
	FOS_TOTAL_ATTR(devmem_moves, FOS_TOTAL_DEVMEM_MOVES),
	FOS_TOTAL_ATTR(inline_copies, FOS_TOTAL_INLINE_COPIES),
	FOS_TOTAL_ATTR(busy_polls, FOS_TOTAL_BUSY_POLLS),
	FOS_TOTAL_ATTR(busy_poll_misses, FOS_TOTAL_BUSY_POLL_MISSES),
	FOS_TOTAL_ATTR(contact_notes, FOS_TOTAL_CONTACT_NOTES),
	FOS_TOTAL_ATTR(contact_notes_lost, FOS_TOTAL_CONTACT_NOTES_LOST),
	FOS_TOTAL_ATTR(stolen_memories, FOS_TOTAL_STOLEN_MEMORIES),
	FOS_TOTAL_ATTR(memory_grants, FOS_TOTAL_MEMORY_GRANTS),
	FOS_TOTAL_ATTR(pull_retries, FOS_TOTAL_PULL_RETRIES),
	FOS_TOTAL_ATTR(grant_copies, FOS_TOTAL_GRANT_COPIES),
	FOS_TOTAL_ATTR(noack_invokes, FOS_TOTAL_NOACK_INVOKES),
	FOS_TOTAL_ATTR(copy_then, FOS_TOTAL_COPY_THEN),
	FOS_TOTAL_ATTR(noack_refused, FOS_TOTAL_NOACK_REFUSED),
	FOS_TOTAL_ATTR(kept_copies, FOS_TOTAL_KEPT_COPIES),
	FOS_TOTAL_ATTR(softirq_invokes, FOS_TOTAL_SOFTIRQ_INVOKES),
};

static struct attribute *fos_total_attr_ptrs[ARRAY_SIZE(fos_total_attrs) + 1];

static const struct attribute_group fos_total_group = {
	.name	= "totals",
	.attrs	= fos_total_attr_ptrs,
};

static const struct attribute_group fos_live_group = {
	.name	= "live",
	.attrs	= fos_live_attr_ptrs,
};

static const struct attribute_group *fos_groups[] = {
	&fos_live_group,
	&fos_total_group,
	NULL,
};

static struct miscdevice fos_miscdev = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "fractos",
	.fops	= &fos_space_fops,
	.groups	= fos_groups,
	/* Spaces are safe for anyone: pins are charged to RLIMIT_MEMLOCK. */
	.mode	= 0666,
};

static int __init fos_init(void)
{
	int i, ret;

	BUILD_BUG_ON(ARRAY_SIZE(fos_live_attrs) != FOS_LIVE_NR);
	for (i = 0; i < ARRAY_SIZE(fos_live_attrs); i++)
		fos_live_attr_ptrs[i] = &fos_live_attrs[i].attr.attr;
	BUILD_BUG_ON(ARRAY_SIZE(fos_total_attrs) != FOS_TOTAL_NR);
	for (i = 0; i < ARRAY_SIZE(fos_total_attrs); i++)
		fos_total_attr_ptrs[i] = &fos_total_attrs[i].attr.attr;

	do {
		fos_epoch = get_random_u32();
	} while (!fos_epoch);

	ret = fos_object_init();
	if (ret)
		return ret;
	ret = fos_dmabuf_init();
	if (ret)
		goto err_obj;
	ret = fos_space_init();
	if (ret)
		goto err_dmabuf;
	ret = fos_provider_init();
	if (ret)
		goto err_space;
	ret = fos_remote_init();
	if (ret)
		goto err_prov;
	ret = fos_fabric_init();
	if (ret)
		goto err_remote;
	ret = misc_register(&fos_miscdev);
	if (ret)
		goto err_fabric;

	pr_info("version " FOS_VERSION ", node %u epoch %#x\n", fos_node_id,
		fos_epoch);
	return 0;

err_fabric:
	fos_fabric_exit();
	fos_obj_put_flush();
err_remote:
	fos_remote_exit();
err_prov:
	fos_provider_exit();
err_space:
	fos_space_exit();
err_dmabuf:
	fos_dmabuf_exit();
err_obj:
	fos_object_exit();
	return ret;
}

static void __exit fos_exit(void)
{
	int i;

	misc_deregister(&fos_miscdev);
	fos_fabric_exit();
	/* Last references put from the receive softirq. */
	fos_obj_put_flush();
	fos_remote_exit();
	/* Revocations for moved dma-bufs still queued drop their Memory. */
	fos_dmabuf_exit();
	/* Every space and capability fd pins the module: all must be gone. */
	for (i = 0; i < ARRAY_SIZE(fos_live_attrs); i++) {
		struct fos_count_attr *la = &fos_live_attrs[i];

		WARN(atomic_long_read(la->count),
		     "fractos: %ld %s still live at unload\n",
		     atomic_long_read(la->count), la->attr.attr.name);
	}
	fos_provider_exit();
	fos_space_exit();
	fos_object_exit();
}

/* The device dma-buf imports attach as (dmabuf.c). */
struct device *fos_device(void)
{
	return fos_miscdev.this_device;
}

module_init(fos_init);
module_exit(fos_exit);

MODULE_DESCRIPTION("FractOS capability spaces over RDMA");
MODULE_AUTHOR("The fractos developers");
MODULE_LICENSE("GPL");
MODULE_VERSION(FOS_VERSION);
