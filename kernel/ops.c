// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: the operation table and the ioctl front door.
 *
 * One row per operation: the handler, the size of its struct, and whether
 * it may wait (FOS_OP_WAITS: for a message or for room in a queue) or call
 * another node (FOS_OP_REMOTE).  A front door decodes a command into a
 * struct fos_call, runs the handler and writes the result back; nothing
 * here knows about any single operation.  Only the handlers of flagged
 * rows see fos_call.nowait (io_uring's inline issue): they return -EAGAIN
 * instead of waiting, and io_uring issues them again from a worker; the
 * others never wait for long, so they always run inline.
 */
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/nospec.h>
#include <linux/uaccess.h>
#include "fos.h"
#include "ops.h"

struct fos_op {
	int (*fn)(struct fos_space *s, struct fos_call *c);
	size_t size;
	const char *name;
	unsigned int flags;
};

#define FOS_OP_WAITS	0x1	/* may wait for a message or for room */
#define FOS_OP_REMOTE	0x2	/* may call another node and wait for it */

#define FOS_OP(nr, func, type, fl) \
	[_IOC_NR(nr)] = { .fn = func, .size = sizeof(type), .name = #nr, \
			  .flags = fl }

static const struct fos_op fos_ops[] = {
	FOS_OP(FRACTOS_IOC_SPACE_INFO, fos_op_space_info,
	       struct fractos_space_info, 0),
	FOS_OP(FRACTOS_IOC_MEMORY_CREATE, fos_op_memory_create,
	       struct fractos_memory_create, 0),
	FOS_OP(FRACTOS_IOC_MEMORY_DIMINISH, fos_op_memory_diminish,
	       struct fractos_memory_diminish, 0),
	FOS_OP(FRACTOS_IOC_MEMORY_COPY, fos_op_memory_copy,
	       struct fractos_memory_copy, FOS_OP_REMOTE),
	FOS_OP(FRACTOS_IOC_CAP_REVOKE, fos_op_cap_revoke,
	       struct fractos_cap_arg, FOS_OP_REMOTE),
	FOS_OP(FRACTOS_IOC_CAP_CREATE_REVTREE, fos_op_cap_create_revtree,
	       struct fractos_cap_arg, 0),
	FOS_OP(FRACTOS_IOC_CAP_CLOSE, fos_op_cap_close,
	       struct fractos_cap_arg, 0),
	FOS_OP(FRACTOS_IOC_CAP_DUP, fos_op_cap_dup,
	       struct fractos_cap_arg, 0),
	FOS_OP(FRACTOS_IOC_CAP_INFO, fos_op_cap_info,
	       struct fractos_cap_info, 0),
	FOS_OP(FRACTOS_IOC_CAP_EXPORT, fos_op_cap_export,
	       struct fractos_cap_export, 0),
	FOS_OP(FRACTOS_IOC_CAP_IMPORT, fos_op_cap_import,
	       struct fractos_cap_import, 0),
	FOS_OP(FRACTOS_IOC_REQUEST_CREATE, fos_op_request_create,
	       struct fractos_request_create, FOS_OP_REMOTE),
	FOS_OP(FRACTOS_IOC_REQUEST_INVOKE, fos_op_request_invoke,
	       struct fractos_request_invoke, FOS_OP_WAITS | FOS_OP_REMOTE),
	FOS_OP(FRACTOS_IOC_REQUEST_RECEIVE, fos_op_request_receive,
	       struct fractos_request_receive, FOS_OP_WAITS),
	FOS_OP(FRACTOS_IOC_MONITOR_RECEIVE, fos_op_monitor_receive,
	       struct fractos_monitor, 0),
	FOS_OP(FRACTOS_IOC_MONITOR_DELEGATE, fos_op_monitor_delegate,
	       struct fractos_monitor, 0),
	FOS_OP(FRACTOS_IOC_NAME_PUBLISH, fos_op_name_publish,
	       struct fractos_name, 0),
	FOS_OP(FRACTOS_IOC_NAME_LOOKUP, fos_op_name_lookup,
	       struct fractos_name, FOS_OP_REMOTE),
	FOS_OP(FRACTOS_IOC_NAME_UNPUBLISH, fos_op_name_unpublish,
	       struct fractos_name, 0),
	FOS_OP(FRACTOS_IOC_SPACE_CONTACT, fos_op_space_contact,
	       struct fractos_space_contact, 0),
	FOS_OP(FRACTOS_IOC_MEMORY_GRANT, fos_op_memory_grant,
	       struct fractos_memory_grant, FOS_OP_REMOTE),
};

static const struct fos_op *fos_op_lookup(unsigned int cmd)
{
	unsigned int nr = _IOC_NR(cmd);

	if (_IOC_TYPE(cmd) != FRACTOS_IOC_MAGIC ||
	    _IOC_DIR(cmd) != (_IOC_READ | _IOC_WRITE) ||
	    nr >= ARRAY_SIZE(fos_ops))
		return NULL;
	nr = array_index_nospec(nr, ARRAY_SIZE(fos_ops));
	if (!fos_ops[nr].fn)
		return NULL;
	return &fos_ops[nr];
}

/*
 * Finish a call whose handler returned 0: @written tells whether the
 * result reached the caller.  If it did not, undo what cannot be seen:
 * close a new cid, remove a new contact, drop a reserved fd.  Otherwise
 * publish a new fd.
 */
static void fos_call_finish(struct fos_space *s, struct fos_call *c,
			    bool written)
{
	if (c->pending_file) {
		if (written) {
			fd_install(c->pending_fd, c->pending_file);
		} else {
			if (c->pending_delegated)
				fos_obj_undelegate(c->pending_file->private_data);
			put_unused_fd(c->pending_fd);
			fput(c->pending_file);
		}
		return;
	}
	if (!written && c->new_cid != FRACTOS_CID_INVALID)
		fos_cap_close_if(s, c->new_cid, &c->new_cap);
	if (!written && c->new_contact)
		fos_contact_undo(s, c->new_contact, c->new_contact_ptr);
}

/**
 * fos_call_user - run one operation on a user struct
 * @s: the space
 * @cmd: the FRACTOS_IOC_* command (its size field gives the struct size)
 * @uarg: the user struct, read in and written back
 * @nowait: the caller cannot sleep for long (io_uring's inline issue):
 *	operations that would wait return -EAGAIN instead, and the front
 *	door retries from a context that may block
 *
 * Return: 0 or a negative errno (see the uAPI header's table).
 */
int fos_call_user(struct fos_space *s, unsigned int cmd, void __user *uarg,
		  bool nowait)
{
	size_t usize = _IOC_SIZE(cmd);
	const struct fos_op *op;
	struct fos_call c;
	int ret;

	op = fos_op_lookup(cmd);
	if (!op)
		return -ENOTTY;

	memset(&c, 0, sizeof(c));
	c.new_cid = FRACTOS_CID_INVALID;
	c.nowait = nowait && (op->flags & (FOS_OP_WAITS | FOS_OP_REMOTE));
	/*
	 * Every operation is at its first version, so a shorter struct is
	 * malformed; a longer one must have a zero tail.
	 */
	if (usize < op->size)
		return -EINVAL;
	ret = copy_struct_from_user(&c.args, op->size, uarg, usize);
	if (ret)
		return ret;
	/*
	 * The struct is written back after the handler ran, when its effect
	 * (a revocation, a queued or dequeued message) cannot be undone.
	 * Check that it is writable first, by writing back what was read,
	 * so that EFAULT means the operation did nothing.
	 */
	if (copy_to_user(uarg, &c.args, op->size))
		return -EFAULT;

	ret = op->fn(s, &c);
	if (ret) {
		if (c.out_on_error &&
		    copy_to_user(uarg, &c.args, op->size))
			return -EFAULT;
		return ret;
	}

	if (copy_to_user(uarg, &c.args, op->size)) {
		fos_call_finish(s, &c, false);
		return -EFAULT;
	}
	fos_call_finish(s, &c, true);
	return 0;
}

long fos_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	return fos_call_user(file->private_data, cmd, (void __user *)arg,
			     false);
}
