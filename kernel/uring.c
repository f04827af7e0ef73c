// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: the io_uring front door (IORING_OP_URING_CMD).
 *
 * The SQE names the operation in cmd_op and points at the same struct the
 * ioctl takes; everything after decoding is shared with the ioctl door.
 */
#include <linux/fs.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <linux/uaccess.h>
#include "fos.h"
#include "ops.h"
#include "queue.h"

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

/**
 * DOC: Asynchronous receive
 *
 * A blocking REQUEST_RECEIVE (neither FRACTOS_RECV_NONBLOCK nor
 * FRACTOS_RECV_TIMEOUT) submitted through io_uring does not park an io-wq
 * worker for its whole wait: when no message is queued, the command is
 * put on the space's receive wait queue (struct fos_uring_wait) and the
 * submission returns -EIOCBQUEUED.  The wake-up that a queued message
 * sends takes it off (one command per message, exclusive) and asks
 * io_uring to run the receive again in the submitting task
 * (io_uring_cmd_complete_in_task()), where the message is copied out and
 * its capabilities installed as by the ioctl; a receive that finds the
 * message taken by another receiver waits again.  The command is marked
 * cancelable: a ring that closes, or a task that exits, cancels it with
 * ECANCELED (IO_URING_F_CANCEL).  That needs cancelable uring_cmds (Linux
 * 6.7); older kernels, Debian 12's 6.1 among them, keep the worker, since
 * nothing would complete a parked command when its ring goes away.
 */
#ifdef IORING_URING_CMD_CANCELABLE
/**
 * struct fos_uring_wait - a parked REQUEST_RECEIVE
 * @wq: on the space's fos_ep.recv_wq (its lock) while parked
 * @cmd: the command; its pdu points back here
 * @ep: the space's receive queue
 * @arg: the user's struct fractos_request_receive
 *
 * Freed by whoever completes the command.
 */
struct fos_uring_wait {
	struct wait_queue_entry wq;
	struct io_uring_cmd *cmd;
	struct fos_ep *ep;
	void __user *arg;
};

static struct fos_uring_wait **fos_uring_waitp(struct io_uring_cmd *ioucmd)
{
	BUILD_BUG_ON(sizeof(struct fos_uring_wait *) > sizeof(ioucmd->pdu));
	return (struct fos_uring_wait **)ioucmd->pdu;
}

/* Take @w off its wait queue; whether it was on it. */
static bool fos_uring_unpark(struct fos_uring_wait *w)
{
	wait_queue_head_t *wqh = &w->ep->recv_wq;
	unsigned long flags;
	bool was = false;

	spin_lock_irqsave(&wqh->lock, flags);
	if (!list_empty(&w->wq.entry)) {
		list_del_init(&w->wq.entry);
		was = true;
	}
	spin_unlock_irqrestore(&wqh->lock, flags);
	return was;
}

static void fos_uring_recv_tw(struct io_uring_cmd *ioucmd,
			      unsigned int issue_flags);

/* A message was queued: run the receive in the submitter's context. */
static int fos_uring_wake(struct wait_queue_entry *wq, unsigned int mode,
			  int sync, void *key)
{
	struct fos_uring_wait *w = container_of(wq, struct fos_uring_wait, wq);

	list_del_init(&wq->entry);	/* under the wait queue's lock */
	io_uring_cmd_complete_in_task(w->cmd, fos_uring_recv_tw);
	return 1;
}

/* Wait for the next message (see "Asynchronous receive"). */
static void fos_uring_park(struct fos_uring_wait *w)
{
	wait_queue_head_t *wqh = &w->ep->recv_wq;
	unsigned long flags;

	spin_lock_irqsave(&wqh->lock, flags);
	__add_wait_queue_entry_tail(wqh, &w->wq);
	spin_unlock_irqrestore(&wqh->lock, flags);
	/*
	 * A message queued before we were on the queue woke nobody: the
	 * sender's wake-up took the lock we just released, so its ep->len
	 * is visible now.
	 */
	if (READ_ONCE(w->ep->len) && fos_uring_unpark(w))
		io_uring_cmd_complete_in_task(w->cmd, fos_uring_recv_tw);
}

static void fos_uring_recv_tw(struct io_uring_cmd *ioucmd,
			      unsigned int issue_flags)
{
	struct fos_uring_wait *w = *fos_uring_waitp(ioucmd);
	int ret = -ECANCELED;

	/* An exiting task, or io_uring's fallback worker: no user memory. */
	if (!(current->flags & (PF_EXITING | PF_KTHREAD))) {
		ret = fos_call_user(ioucmd->file->private_data,
				    FRACTOS_IOC_REQUEST_RECEIVE, w->arg, true);
		if (ret == -EAGAIN) {
			fos_uring_park(w);
			return;
		}
		if (ret == -ERESTARTSYS || ret == -ERESTARTNOHAND)
			ret = -EINTR;
	}
	kfree(w);
	io_uring_cmd_done(ioucmd, ret, 0, issue_flags);
}

/* IO_URING_F_CANCEL: the ring or its task is going away. */
static void fos_uring_cancel(struct io_uring_cmd *ioucmd,
			     unsigned int issue_flags)
{
	struct fos_uring_wait *w = *fos_uring_waitp(ioucmd);

	/* Off the queue already: its task work completes it. */
	if (!fos_uring_unpark(w))
		return;
	kfree(w);
	io_uring_cmd_done(ioucmd, -ECANCELED, 0, issue_flags);
}

/*
 * A blocking REQUEST_RECEIVE: served now if a message is queued, else
 * parked.  Return: the receive's result, or -EIOCBQUEUED.
 */
static int fos_uring_recv(struct io_uring_cmd *ioucmd, void __user *uarg,
			  unsigned int issue_flags)
{
	struct fos_space *s = ioucmd->file->private_data;
	struct fos_uring_wait *w;
	int ret;

	ret = fos_call_user(s, FRACTOS_IOC_REQUEST_RECEIVE, uarg, true);
	if (ret != -EAGAIN)
		return ret;
	w = kzalloc(sizeof(*w), GFP_KERNEL_ACCOUNT);
	if (!w)
		return -ENOMEM;
	init_waitqueue_func_entry(&w->wq, fos_uring_wake);
	w->wq.flags |= WQ_FLAG_EXCLUSIVE;
	w->cmd = ioucmd;
	w->ep = s->ep;
	w->arg = uarg;
	*fos_uring_waitp(ioucmd) = w;
	io_uring_cmd_mark_cancelable(ioucmd, issue_flags);
	fos_uring_park(w);
	return -EIOCBQUEUED;
}

/* Whether @uarg asks for a receive that may wait without a bound. */
static bool fos_uring_recv_blocking(unsigned int cmd_op, void __user *uarg)
{
	u32 flags;

	if (cmd_op != FRACTOS_IOC_REQUEST_RECEIVE ||
	    get_user(flags, (u32 __user *)uarg))
		return false;
	return !(flags & (FRACTOS_RECV_NONBLOCK | FRACTOS_RECV_TIMEOUT));
}
#endif /* IORING_URING_CMD_CANCELABLE */

int fos_uring_cmd(struct io_uring_cmd *ioucmd, unsigned int issue_flags)
{
	const struct fractos_uring_cmd *pdu;
	void __user *uarg;
	int ret;

#ifdef IORING_URING_CMD_CANCELABLE
	if (issue_flags & IO_URING_F_CANCEL) {
		fos_uring_cancel(ioucmd, issue_flags);
		return 0;
	}
#endif
	pdu = fos_uring_pdu(ioucmd);
	if (READ_ONCE(pdu->reserved))
		return -EINVAL;
	uarg = u64_to_user_ptr(READ_ONCE(pdu->arg));
#ifdef IORING_URING_CMD_CANCELABLE
	if (fos_uring_recv_blocking(ioucmd->cmd_op, uarg))
		return fos_uring_recv(ioucmd, uarg, issue_flags);
#endif
	/*
	 * Inline issue may not wait: such operations return -EAGAIN and
	 * io_uring reissues them from a worker that may block.
	 */
	ret = fos_call_user(ioucmd->file->private_data, ioucmd->cmd_op, uarg,
			    issue_flags & IO_URING_F_NONBLOCK);
	if (ret == -ERESTARTSYS || ret == -ERESTARTNOHAND)
		ret = -EINTR;
	return ret;
}
