// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: the io_uring front door (IORING_OP_URING_CMD).
 *
 * The SQE names the operation in cmd_op and points at the same struct the
 * ioctl takes; everything after decoding is shared with the ioctl door.
 */
#include <linux/fs.h>
#include <linux/uaccess.h>
#include "fos.h"

/*
 * The uring_cmd API moved to <linux/io_uring/cmd.h> in 6.7, with the
 * command bytes reached through the SQE; 6.1 has them in ioucmd->cmd.
 * kernel/Kbuild defines FOS_HAVE_IO_URING_CMD_H when the header exists.
 */
#ifdef FOS_HAVE_IO_URING_CMD_H
#include <linux/io_uring/cmd.h>

static const void *fos_uring_pdu(struct io_uring_cmd *ioucmd)
{
	return io_uring_sqe_cmd(ioucmd->sqe);
}
#else
#include <linux/io_uring.h>

static const void *fos_uring_pdu(struct io_uring_cmd *ioucmd)
{
	return ioucmd->cmd;
}
#endif

int fos_uring_cmd(struct io_uring_cmd *ioucmd, unsigned int issue_flags)
{
	const struct fractos_uring_cmd *pdu = fos_uring_pdu(ioucmd);
	u64 arg = READ_ONCE(pdu->arg);
	int ret;

	if (READ_ONCE(pdu->reserved))
		return -EINVAL;
	/*
	 * Inline issue may not wait: such operations return -EAGAIN and
	 * io_uring reissues them from a worker that may block.
	 */
	ret = fos_call_user(ioucmd->file->private_data, ioucmd->cmd_op,
			    u64_to_user_ptr(arg),
			    issue_flags & IO_URING_F_NONBLOCK);
	if (ret == -ERESTARTSYS || ret == -ERESTARTNOHAND)
		ret = -EINTR;
	return ret;
}
