// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: PING/PONG, the transport's own round-trip probe
 * (FRACTOS_CMD_PING).  A PING's cookie names a waiter in fos_ping_waits;
 * the PONG echoes it.  A PONG counts only from the node
 * the PING went to, and the round trip is timed with our own clock: the
 * echoed payload is not trusted.
 */
#include <linux/completion.h>
#include <linux/ktime.h>
#include <linux/xarray.h>
#include "pri.h"

#define FOS_PING_TIMEOUT	HZ

/**
 * struct fos_ping_wait - one PING waiting for its PONG
 * @done: completed by the PONG
 * @node: the node pinged
 * @t0: when the PING went out (ktime_get_ns())
 * @rtt_ns: set with @done
 */
struct fos_ping_wait {
	struct completion done;
	u32 node;
	u64 t0;
	u64 rtt_ns;
};

static DEFINE_XARRAY_ALLOC(fos_ping_waits);

/**
 * fos_ping - one round trip to @peer
 * @peer: the peer
 * @rtt_ns: the round-trip time
 *
 * Return: 0, -ENOTCONN, -ETIMEDOUT (no PONG within a second), or another
 * error of fos_send().
 */
int fos_ping(struct fos_peer *peer, u64 *rtt_ns)
{
	struct fos_ping_wait w = {};
	struct fos_wire_ping p = {};
	u32 cookie;
	int ret;

	init_completion(&w.done);
	w.node = fos_peer_node_id(peer);
	w.t0 = ktime_get_ns();
	ret = xa_alloc(&fos_ping_waits, &cookie, &w, xa_limit_32b, GFP_KERNEL);
	if (ret)
		return ret;
	p.t0 = cpu_to_le64(w.t0);
	p.seq = cpu_to_le32(cookie);
	ret = fos_send(peer, FOS_WIRE_PING, cookie, &p, sizeof(p), NULL,
		       FOS_SEND_WAIT);
	if (!ret) {
		fos_stat_add(peer, FRACTOS_STAT_PINGS_TX, 1);
		if (!wait_for_completion_timeout(&w.done, FOS_PING_TIMEOUT))
			ret = -ETIMEDOUT;
	}
	/* After this, fos_pong_recv() cannot see @w any more. */
	xa_erase(&fos_ping_waits, cookie);
	if (!ret || try_wait_for_completion(&w.done)) {
		*rtt_ns = w.rtt_ns;
		ret = 0;
	}
	return ret;
}

static void fos_ping_recv(struct fos_peer *peer,
			  const struct fos_rx_info *rx,
			  const void *payload, u32 len)
{
	fos_stat_add(peer, FRACTOS_STAT_PINGS_RX, 1);
	/* Without a credit, the PONG waits on the backlog. */
	fos_send(peer, FOS_WIRE_PONG, rx->cookie, payload,
		 len, NULL, FOS_SEND_QUEUE);
}

static void fos_pong_recv(struct fos_peer *peer,
			  const struct fos_rx_info *rx,
			  const void *payload, u32 len)
{
	u64 cookie = rx->cookie;
	struct fos_ping_wait *w;

	fos_stat_add(peer, FRACTOS_STAT_PONGS_RX, 1);
	if (cookie > U32_MAX)
		return;
	xa_lock(&fos_ping_waits);
	w = xa_load(&fos_ping_waits, cookie);
	if (w && w->node == fos_peer_node_id(peer) &&
	    !completion_done(&w->done)) {
		w->rtt_ns = ktime_get_ns() - w->t0;
		complete(&w->done);
	}
	xa_unlock(&fos_ping_waits);
}

static const struct fos_msg_type fos_ping_types[] = {
	{ FOS_WIRE_PING, "ping", fos_wire_check_ping, fos_ping_recv },
	{ FOS_WIRE_PONG, "pong", fos_wire_check_ping, fos_pong_recv },
};

int fos_ping_init(void)
{
	return fos_rx_register_own(fos_ping_types, ARRAY_SIZE(fos_ping_types));
}

void fos_ping_exit(void)
{
	fos_fabric_unregister(fos_ping_types, ARRAY_SIZE(fos_ping_types));
}
