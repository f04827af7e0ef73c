// SPDX-License-Identifier: GPL-2.0
/*
 * fractos fabric: a connection's completion queue, polled by a work item
 * or by a caller that busy-polls for a message.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>
#include "pri.h"

/**
 * DOC: Completions
 *
 * Each connection has one completion queue for its sends, receives and
 * RDMA operations, created with ib_create_cq() and polled here rather than
 * by the RDMA core's own work item (ib_alloc_cq()'s IB_POLL_WORKQUEUE), so
 * that someone else than that work item may poll it: a process that
 * busy-polls for a message or an invocation's ACK (``REQUEST_RECEIVE``,
 * ``REQUEST_INVOKE``, with ``busy_poll_us`` set: kernel/busypoll.c) takes
 * the completions that are waiting itself, as
 * NAPI busy polling does for a socket, instead of waiting for a kworker to
 * be woken and switched to.  ``fabric_busy_poll`` (on by default; it
 * changes nothing while ``busy_poll_us`` is 0) allows it.
 *
 * Whoever polls a queue *owns* it (FOS_CQ_OWNED, taken with
 * test_and_set_bit_lock()): one poller at a time, so that completions are
 * still handled one at a time in the order the queue gives them, as the
 * receive path requires (rx.c, the channel binding's @rx_seq).  The
 * driver's completion event marks the queue FOS_CQ_SCHED and, unless it is
 * owned, queues the work item; an owner clears FOS_CQ_SCHED before it
 * polls and, when it lets go, queues the work item if FOS_CQ_SCHED was set
 * again meanwhile (both sides set their bit, then test the other's, with
 * a full barrier between: one of them sees the other).  A poll that
 * emptied the queue re-arms it; if completions came between the last poll
 * and the arming (IB_CQ_REPORT_MISSED_EVENTS), the queue is marked and the
 * work item queued, as the RDMA core does.
 *
 * What runs in a busy poller's context is what ran in the work item: the
 * handlers of fos_rx_done() (which never wait for the fabric: they queue
 * work for that), fos_tx_done() and the RDMA completions.  So the poller
 * must be in process context with no lock held (fos_fabric_poll()), and
 * never be a fabric handler itself.  It handles at most
 * FOS_CQ_POLL_BUDGET completions a call; the rest are the work item's.
 *
 * Teardown (fos_cq_destroy(), after the QP was drained and destroyed):
 * FOS_CQ_DEAD is set under fos_conns_lock, under which a busy poller
 * takes ownership, so none takes it after; the owner of the moment, if
 * any, is waited for, then the work item is cancelled, then the queue
 * destroyed.
 */

enum {
	FOS_CQ_SCHED,	/* completions may be waiting: someone must poll */
	FOS_CQ_OWNED,	/* someone polls (the lock of the queue) */
	FOS_CQ_DEAD,	/* being destroyed: no busy poller may take it */
};

/* Completions taken from the queue at a time (conn->wcs). */
#define FOS_CQ_BATCH		16
/* ... by the work item before it yields to other work, and a busy poll. */
#define FOS_CQ_WORK_BUDGET	256
#define FOS_CQ_POLL_BUDGET	16

static bool fos_cq_busy = true;
module_param_named(fabric_busy_poll, fos_cq_busy, bool, 0644);
MODULE_PARM_DESC(fabric_busy_poll,
		 "A receiver that busy-polls (busy_poll_us) takes the fabric's waiting completions itself (default 1)");

static bool fos_cq_unbound;
module_param_named(fabric_cq_unbound, fos_cq_unbound, bool, 0644);
MODULE_PARM_DESC(fabric_cq_unbound,
		 "Poll completion queues from an unbound workqueue (default 0: on the CPU of the completion event)");

/* Like the RDMA core's ib_comp_wq: completions come before other work. */
static struct workqueue_struct *fos_cq_wq, *fos_cq_unbound_wq;

static void fos_cq_kick(struct fos_conn *conn)
{
	queue_work(READ_ONCE(fos_cq_unbound) ? fos_cq_unbound_wq : fos_cq_wq,
		   &conn->cq_work);
}

/* The driver's completion event, in any context (hard IRQ included). */
static void fos_cq_event(struct ib_cq *cq, void *ctx)
{
	struct fos_conn *conn = ctx;

	set_bit(FOS_CQ_SCHED, &conn->cq_flags);
	smp_mb__after_atomic();	/* pairs with fos_cq_unlock() */
	if (!test_bit(FOS_CQ_OWNED, &conn->cq_flags))
		fos_cq_kick(conn);
}

static bool fos_cq_trylock(struct fos_conn *conn)
{
	return !test_and_set_bit_lock(FOS_CQ_OWNED, &conn->cq_flags);
}

static void fos_cq_unlock(struct fos_conn *conn)
{
	clear_bit_unlock(FOS_CQ_OWNED, &conn->cq_flags);
	smp_mb__after_atomic();	/* pairs with fos_cq_event() */
	if (test_bit(FOS_CQ_SCHED, &conn->cq_flags))
		fos_cq_kick(conn);
	wake_up_bit(&conn->cq_flags, FOS_CQ_OWNED);
}

/*
 * Handle up to @budget completions of @conn's queue, which the caller
 * owns.  Return: how many; when fewer than @budget, the queue was empty
 * and is armed again (marked FOS_CQ_SCHED if completions were missed).
 */
static int fos_cq_poll_owned(struct fos_conn *conn, int budget)
{
	struct ib_cq *cq = conn->cq;
	int done = 0, n, i;

	clear_bit(FOS_CQ_SCHED, &conn->cq_flags);
	smp_mb__after_atomic();	/* the flag before what the queue holds */
	while (done < budget) {
		n = ib_poll_cq(cq, min(FOS_CQ_BATCH, budget - done),
			       conn->wcs);
		if (n <= 0)
			break;
		for (i = 0; i < n; i++) {
			struct ib_wc *wc = &conn->wcs[i];

			wc->wr_cqe->done(cq, wc);
		}
		done += n;
	}
	if (done >= budget)
		set_bit(FOS_CQ_SCHED, &conn->cq_flags);
	else if (ib_req_notify_cq(cq, IB_CQ_NEXT_COMP |
				  IB_CQ_REPORT_MISSED_EVENTS) > 0)
		set_bit(FOS_CQ_SCHED, &conn->cq_flags);
	return done;
}

static void fos_cq_work(struct work_struct *work)
{
	struct fos_conn *conn = container_of(work, struct fos_conn, cq_work);

	/* An owner queues this again if it leaves work behind. */
	if (!fos_cq_trylock(conn))
		return;
	fos_cq_poll_owned(conn, FOS_CQ_WORK_BUDGET);
	fos_cq_unlock(conn);
}

/**
 * fos_cq_create - make @conn's completion queue, armed
 * @conn: the connection, in its setup
 * @ibdev: its device
 * @cqe: entries
 *
 * Return: 0, or a negative errno; what was made is freed by
 * fos_cq_destroy() then.
 */
int fos_cq_create(struct fos_conn *conn, struct ib_device *ibdev, u32 cqe)
{
	struct ib_cq_init_attr attr = { .cqe = cqe };
	struct ib_cq *cq;
	int ret;

	conn->wcs = kcalloc(FOS_CQ_BATCH, sizeof(*conn->wcs), GFP_KERNEL);
	if (!conn->wcs)
		return -ENOMEM;
	cq = ib_create_cq(ibdev, fos_cq_event, NULL, conn, &attr);
	if (IS_ERR(cq))
		return PTR_ERR(cq);
	conn->cq = cq;
	ret = ib_req_notify_cq(cq, IB_CQ_NEXT_COMP);
	return ret < 0 ? ret : 0;
}

/* The QP is gone (drained first): no completion comes any more. */
void fos_cq_destroy(struct fos_conn *conn)
{
	might_sleep();
	if (conn->cq) {
		spin_lock(&fos_conns_lock);
		set_bit(FOS_CQ_DEAD, &conn->cq_flags);
		spin_unlock(&fos_conns_lock);
		wait_on_bit(&conn->cq_flags, FOS_CQ_OWNED,
			    TASK_UNINTERRUPTIBLE);
		cancel_work_sync(&conn->cq_work);
		ib_destroy_cq(conn->cq);
		conn->cq = NULL;
	}
	kfree(conn->wcs);
	conn->wcs = NULL;
}

void fos_cq_init(struct fos_conn *conn)
{
	INIT_WORK(&conn->cq_work, fos_cq_work);
}

/**
 * fos_fabric_poll - handle waiting completions in the caller's context
 *
 * For a receiver that busy-polls (kernel/busypoll.c): takes one
 * connection whose completion queue has completions waiting and nobody
 * polling it, and handles up to FOS_CQ_POLL_BUDGET of them, here.
 *
 * Context: process context that may sleep, no locks held, not in a
 * fabric handler (the handlers run here).
 * Return: true if it handled any.
 */
bool fos_fabric_poll(void)
{
	struct fos_conn *conn, *mine = NULL;
	int done;

	if (!READ_ONCE(fos_cq_busy))
		return false;
	might_sleep();
	spin_lock(&fos_conns_lock);
	list_for_each_entry(conn, &fos_conns, link) {
		unsigned long f = READ_ONCE(conn->cq_flags);

		if ((f & BIT(FOS_CQ_SCHED)) &&
		    !(f & (BIT(FOS_CQ_OWNED) | BIT(FOS_CQ_DEAD))) &&
		    fos_cq_trylock(conn)) {
			mine = conn;
			break;
		}
	}
	spin_unlock(&fos_conns_lock);
	if (!mine)
		return false;
	/* Owned: fos_cq_destroy() waits for it before the queue goes. */
	done = fos_cq_poll_owned(mine, FOS_CQ_POLL_BUDGET);
	fos_cq_unlock(mine);
	if (done)
		fos_total_add(FOS_TOTAL_POLLED_COMPLETIONS, done);
	return done > 0;
}

int fos_cq_init_wq(void)
{
	fos_cq_wq = alloc_workqueue("fractos_cq", WQ_HIGHPRI | WQ_MEM_RECLAIM,
				    0);
	if (!fos_cq_wq)
		return -ENOMEM;
	fos_cq_unbound_wq = alloc_workqueue("fractos_cq_unbound", WQ_UNBOUND |
					    WQ_HIGHPRI | WQ_MEM_RECLAIM, 0);
	if (!fos_cq_unbound_wq) {
		destroy_workqueue(fos_cq_wq);
		return -ENOMEM;
	}
	return 0;
}

void fos_cq_exit_wq(void)
{
	destroy_workqueue(fos_cq_unbound_wq);
	destroy_workqueue(fos_cq_wq);
}
