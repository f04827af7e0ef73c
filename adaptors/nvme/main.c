// SPDX-License-Identifier: GPL-2.0
/*
 * fractos_nvme: the block adaptor module.  Serves NVMe namespaces (any
 * block device) as fractos volumes through the core's provider API
 * (kernel/provider.h); administered over the "fractos_blk" generic netlink
 * family (uapi/linux/fractos_blk.h).
 */
#include <linux/module.h>
#include "blk.h"

/* Completions of commands: process context for the continuations. */
struct workqueue_struct *fblk_wq;

static int fblk_set_qd(const char *val, const struct kernel_param *kp)
{
	unsigned int v;
	int ret = kstrtouint(val, 0, &v);

	if (ret)
		return ret;
	if (!v || v > (kp->arg == &fblk_qd_volume ? FRACTOS_BLK_QD_VOLUME :
						      FRACTOS_BLK_QD_DEVICE))
		return -ERANGE;
	WRITE_ONCE(*(unsigned int *)kp->arg, v);
	return 0;
}

static const struct kernel_param_ops fblk_qd_ops = {
	.set = fblk_set_qd,
	.get = param_get_uint,
};

unsigned int fblk_qd_volume = FRACTOS_BLK_QD_VOLUME;
unsigned int fblk_qd_device = FRACTOS_BLK_QD_DEVICE;
module_param_cb(queue_depth_volume, &fblk_qd_ops, &fblk_qd_volume, 0644);
MODULE_PARM_DESC(queue_depth_volume,
		 "commands in flight per volume, over which EAGAIN (1-64, default 64)");
module_param_cb(queue_depth_device, &fblk_qd_ops, &fblk_qd_device, 0644);
MODULE_PARM_DESC(queue_depth_device,
		 "commands in flight per device, over which EAGAIN (1-256, default 256)");

static int __init fblk_init(void)
{
	int ret;

	fblk_wq = alloc_workqueue("fractos_blk", WQ_UNBOUND | WQ_MEM_RECLAIM,
				  0);
	if (!fblk_wq)
		return -ENOMEM;
	ret = fblk_genl_init();
	if (ret) {
		destroy_workqueue(fblk_wq);
		return ret;
	}
	return 0;
}

static void __exit fblk_exit(void)
{
	/* No new attach once the family is gone; then detach the rest. */
	fblk_genl_exit();
	fblk_detach_all();
	destroy_workqueue(fblk_wq);
}

module_init(fblk_init);
module_exit(fblk_exit);

MODULE_DESCRIPTION("fractos block adaptor: NVMe volumes as capability services");
MODULE_AUTHOR("The fractos developers");
MODULE_LICENSE("GPL");
