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
#include "core.h"

/**
 * DOC: Busy polling
 *
 * A caller that waits for a message (``REQUEST_RECEIVE``) or for a remote
 * call's answer (an INVOKE's ACK, a GRANT_REPLY, a LOOKUP_REPLY) sleeps,
 * and whoever brings it (the fabric's completion work item, another
 * process) must wake it: a wake-up, two context switches and, on an idle
 * CPU, an inter-processor interrupt, for every answer.  With the module
 * parameter ``busy_poll_us`` set, such a caller first spins for up to that
 * many microseconds (1000 at most) on the condition it would sleep on, as
 * NAPI busy polling (``net.core.busy_read``) does for a socket; only if
 * nothing came by then does it sleep as before.  It spins with preemption
 * allowed and yields the CPU whenever something else is due there (the
 * completion work item itself may be), and stops at a pending signal.
 *
 * It trades CPU time for latency, so it is off (0) by default: on a node
 * whose callers wait a long time, every wait would burn its whole budget.
 * ``totals/busy_polls`` counts the waits that ended while spinning (a
 * wake-up saved) and ``totals/busy_poll_misses`` those that spun out and
 * slept; many misses mean the budget is too short for the answers this
 * node waits for, or that they do not come quickly at all.  A nonblocking
 * call and an io_uring submission never spin.
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
		/* The answer may be what is due on this CPU. */
		cond_resched();
		cpu_relax();
	}
	fos_total_add(FOS_TOTAL_BUSY_POLL_MISSES, 1);
	return false;
}
