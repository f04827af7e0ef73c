// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: capabilities as file descriptors.
 *
 * CAP_EXPORT wraps a copy of one capability in an anonymous-inode file, so
 * that local processes can hand capabilities to each other with SCM_RIGHTS;
 * CAP_IMPORT installs a copy of it in a space.  The file holds one object
 * reference; it never keeps an object alive past revocation.
 */
#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include "fos.h"
#include "ops.h"

static int fos_capfd_release(struct inode *inode, struct file *file)
{
	struct fos_cap *cap = file->private_data;

	fos_obj_put(cap->obj);
	kfree(cap);
	fos_live_add(FOS_LIVE_CAPFDS, -1);
	return 0;
}

static void fos_capfd_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct fos_cap *cap = file->private_data;

	seq_printf(m, "fractos-type:\t%u\n", cap->obj->type);
	seq_printf(m, "fractos-oid:\t%u:%u:%llu\n", fos_node_id, fos_epoch,
		   fos_oid_public(cap->obj->id));
	seq_printf(m, "fractos-perms:\t%#x\n", cap->perms);
	seq_printf(m, "fractos-view:\t%llu+%llu\n", cap->off, cap->len);
	seq_printf(m, "fractos-revoked:\t%d\n", fos_obj_revoked(cap->obj));
}

const struct file_operations fos_capfd_fops = {
	.owner		= THIS_MODULE,
	.release	= fos_capfd_release,
	.mmap		= fos_memmap_mmap,
	.show_fdinfo	= fos_capfd_show_fdinfo,
};

int fos_op_cap_export(struct fos_space *s, struct fos_call *c)
{
	struct fractos_cap_export *a = &c->args.cap_export;
	struct fos_cap *cap;
	struct file *file;
	int fd, ret;

	if ((a->flags & ~FRACTOS_EXPORT_CLOEXEC) || a->__pad ||
	    !fos_mem_is_zero(a->reserved, sizeof(a->reserved)))
		return -EINVAL;

	cap = kmalloc(sizeof(*cap), GFP_KERNEL_ACCOUNT);
	if (!cap)
		return -ENOMEM;
	ret = fos_cap_get(s, a->cid, cap);
	if (ret)
		goto err_free;
	ret = fos_obj_delegate(cap);
	if (ret < 0)
		goto err_put;
	c->pending_delegated = ret;
	ret = 0;

	fd = get_unused_fd_flags(O_RDONLY |
				 (a->flags & FRACTOS_EXPORT_CLOEXEC ?
				  O_CLOEXEC : 0));
	if (fd < 0) {
		ret = fd;
		goto err_put;
	}
	/* Memory that can be mapped: a file on the object's inode. */
	file = fos_memmap_file(cap, &fos_capfd_fops);
	if (!file)
		file = anon_inode_getfile("[fractos-cap]", &fos_capfd_fops, cap,
					  O_RDONLY);
	if (IS_ERR(file)) {
		ret = PTR_ERR(file);
		put_unused_fd(fd);
		goto err_put;
	}
	fos_live_add(FOS_LIVE_CAPFDS, 1);

	/* Installed by fos_call_finish() once the result is written back. */
	c->pending_file = file;
	c->pending_fd = fd;
	a->fd = fd;
	return 0;

err_put:
	if (c->pending_delegated)
		fos_obj_undelegate(cap);
	fos_obj_put(cap->obj);
err_free:
	kfree(cap);
	return ret;
}

int fos_op_cap_import(struct fos_space *s, struct fos_call *c)
{
	struct fractos_cap_import *a = &c->args.cap_import;
	struct file *file;
	int ret;

	if (a->flags || a->__pad ||
	    !fos_mem_is_zero(a->reserved, sizeof(a->reserved)))
		return -EINVAL;

	file = fget(a->fd);
	if (!file)
		return -EBADF;
	if (file->f_op != &fos_capfd_fops) {
		ret = -EINVAL;
		goto out;
	}
	ret = fos_cap_install(s, file->private_data, &a->cid);
	if (!ret)
		fos_call_new_cid(c, a->cid, file->private_data);
out:
	fput(file);
	return ret;
}
