/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fractos: what the module's rooms (kernel/fabric/, kernel/remote/) may use
 * of the core besides its object model: the live-object counters, this
 * node's id and its epoch.  The transport includes this and fabric.h only;
 * fos.h (objects, capabilities, spaces) includes it too.
 */
#ifndef FRACTOS_CORE_H
#define FRACTOS_CORE_H

#include <linux/atomic.h>
#include <linux/types.h>

/* Live-object counters, shown in /sys/class/misc/fractos/live/. */
enum fos_counter {
	FOS_LIVE_SPACES,
	FOS_LIVE_OBJECTS,
	FOS_LIVE_CAPS,
	FOS_LIVE_MEMORIES,
	FOS_LIVE_PINNED_PAGES,
	FOS_LIVE_CAPFDS,
	FOS_LIVE_REQUESTS,
	FOS_LIVE_MESSAGES,
	FOS_LIVE_NAMES,
	FOS_LIVE_PEERS,
	FOS_LIVE_CONNS,
	FOS_LIVE_EXPORTS,
	FOS_LIVE_PROXIES,
	FOS_LIVE_GRANTS,
	FOS_LIVE_MONITORS,
	FOS_LIVE_DMABUFS,
	FOS_LIVE_CONTACTS,
	FOS_LIVE_MEMMAPS,
	FOS_LIVE_ARMED_CONTACTS,
	FOS_LIVE_KEPT,
	FOS_LIVE_NR,
};

extern atomic_long_t fos_live[FOS_LIVE_NR];

static inline void fos_live_add(enum fos_counter c, long v)
{
	atomic_long_add(v, &fos_live[c]);
}

/* Running totals since the module was loaded: /sys/class/misc/fractos/totals/. */
enum fos_total {
	FOS_TOTAL_STAGED_BYTES,
	FOS_TOTAL_DEVMEM_MOVES,
	FOS_TOTAL_INLINE_COPIES,
	FOS_TOTAL_BUSY_POLLS,
	FOS_TOTAL_BUSY_POLL_MISSES,
	FOS_TOTAL_CONTACT_NOTES,
	FOS_TOTAL_CONTACT_NOTES_LOST,
	FOS_TOTAL_STOLEN_MEMORIES,
	FOS_TOTAL_MEMORY_GRANTS,
	FOS_TOTAL_PULL_RETRIES,
	FOS_TOTAL_GRANT_COPIES,
	FOS_TOTAL_NOACK_INVOKES,
	FOS_TOTAL_NOACK_REFUSED,
	FOS_TOTAL_COPY_THEN,
	FOS_TOTAL_KEPT_COPIES,
	FOS_TOTAL_SOFTIRQ_INVOKES,
	FOS_TOTAL_NR,
};

/* Longs, as the live counters: 64 bits on the 64-bit kernels we build for. */
extern atomic_long_t fos_totals[FOS_TOTAL_NR];

static inline void fos_total_add(enum fos_total t, long v)
{
	atomic_long_add(v, &fos_totals[t]);
}

/* This node's id (a module parameter) and epoch (new at every load): main.c. */
extern unsigned int fos_node_id;
extern u32 fos_epoch;

/* busypoll.c: spin for @ready up to the module's busy_poll_us budget. */
bool fos_busy_poll(bool (*ready)(void *arg), void *arg);

#endif /* FRACTOS_CORE_H */
