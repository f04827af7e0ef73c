// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: an opt-in busy poll before a caller sleeps for a message or an
 * answer.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/minmax.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/signal.h>
#include <linux/sched/stat.h>
#include "core.h"

/**
 * DOC: Busy polling
 *
 * A caller that waits for a message (``REQUEST_RECEIVE``) or for a remote
 * call's quick answer (an INVOKE's ACK, a LOOKUP_REPLY, the GRANT_REPLY
 * that carries a small copy's bytes) sleeps, and whoever brings it (the
 * fabric's completion work item, another process) must wake it: the
 * wake-up path, two context switches, and on an idle CPU its exit, for
 * every answer.  With the module parameter ``busy_poll_us`` set, such a
 * caller first spins for up to that many microseconds (1000 at most) on
 * the condition it would sleep on, as NAPI busy polling
 * (``net.core.busy_read``) does for a socket; only if nothing came by then
 * does it sleep as before.  It never spins ahead of other work on its CPU
 * (the answer's own completion work item may be it): whenever another
 * task is runnable there, it lets it run and then goes on spinning.  It
 * stops at a pending signal.  Answers that come only after real work do
 * not spin: a GRANT of a region (memory registered, then an RDMA READ that
 * dwarfs the wait), a REVOKE_REQ, a third-party COPY.
 *
 * It trades CPU time for latency, so it is off (0) by default: on a node
 * whose callers wait long, every wait would burn its whole budget.
 * ``totals/busy_polls`` counts the waits that ended while spinning (a
 * wake-up saved) and ``totals/busy_poll_misses`` those that spun out and
 * slept; many misses mean the budget is too short for the answers this
 * node waits for, or that they do not come quickly at all.  A nonblocking
 * call and io_uring's inline issue never spin (an operation io_uring
 * hands to its io-wq workers waits there as a system call would, spin
 * included).  The spin comes before a call's timeout starts, so a
 * receive's timeout may end up to the budget late.
 */
static unsigned int fos_busy_poll_us;
module_param_named(busy_poll_us, fos_busy_poll_us, uint, 0644);
MODULE_PARM_DESC(busy_poll_us,
		 "Spin up to this many microseconds (1000 at most) for a message or a remote call's answer before sleeping (default 0: never)");

#define FOS_BUSY_POLL_MAX_US	1000

/**
 * fos_busy_poll - spin for a condition before sleeping on it
 * @ready: the condition the caller would sleep on (no side effects)
 * @arg: its argument
 *
 * Context: process context that may sleep; no locks held.
 * Return: true if @ready held within the budget (the caller need not
 * sleep), false at once if busy polling is off, or after the budget or at
 * a pending signal.
 */
bool fos_busy_poll(bool (*ready)(void *arg), void *arg)
{
	u32 us = min_t(u32, READ_ONCE(fos_busy_poll_us), FOS_BUSY_POLL_MAX_US);
	u64 end;

	if (!us)
		return false;
	might_sleep();
	end = local_clock() + (u64)us * NSEC_PER_USEC;
	for (;;) {
		if (ready(arg)) {
			fos_total_add(FOS_TOTAL_BUSY_POLLS, 1);
			return true;
		}
		if (signal_pending(current) || local_clock() > end)
			break;
		/*
		 * Never ahead of other work on this CPU (the answer's own
		 * work item may be it): let it run, still runnable, and go
		 * on spinning when it is done or preempted.
		 */
		if (need_resched() || !single_task_running())
			schedule();
		else
			cpu_relax();
	}
	fos_total_add(FOS_TOTAL_BUSY_POLL_MISSES, 1);
	return false;
}
