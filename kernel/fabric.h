/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fractos: the kernel-to-kernel RDMA fabric, as the rest of the module sees
 * it, and the only way into it.  kernel/fabric/ owns devices, connections,
 * admission, flow control, its configuration (the netlink family,
 * fabric/genl.c) and PING; its users (kernel/remote/) register the message
 * types they handle (fos_fabric_register()), send typed messages to a peer,
 * and pull memory with one-sided RDMA.  The transport's framing is
 * fabric/wire.h, private to it; a user's messages are its own (remote/wire.h)
 * and travel as payload.
 */
#ifndef FRACTOS_FABRIC_H
#define FRACTOS_FABRIC_H

#include <linux/socket.h>
#include <linux/types.h>
#include <linux/fractos_netlink.h>

struct fos_peer;

/*
 * The message types a user may register; the transport keeps the others
 * for its framing.  Fixed by the wire format (version 11): remote/wire.h
 * numbers all of them.
 */
#define FOS_FABRIC_TYPE_FIRST	5
#define FOS_FABRIC_TYPE_LAST	19

/*
 * The largest payload of one message.  A peer may take less (it announces
 * its receive buffers' size): fos_fabric_send() then says -EMSGSIZE.
 */
#define FOS_FABRIC_PAYLOAD_MAX	(8192 - 48)

/**
 * struct fos_fabric_done - completion of one send of the transport's own
 *	messages (a user's messages are retransmitted after a reconnection:
 *	their sends pass NULL)
 * @fn: called once the message has left (status 0) or could not be
 *	delivered to the peer's QP (negative errno; the connection is then
 *	torn down).  Runs in the CQ's context (its workqueue, or softirq
 *	with fabric_rx_softirq); must not sleep.
 */
struct fos_fabric_done {
	void (*fn)(struct fos_fabric_done *done, int status);
};

/* fos_fabric_send() flags */
#define FOS_SEND_WAIT	0x1	/* sleep (interruptibly, 5 s at most) for a credit */
#define FOS_SEND_QUEUE	0x2	/* no credit: queue behind earlier messages */

int fos_fabric_send(struct fos_peer *peer, u8 type, u64 cookie,
		    const void *payload, u32 len, struct fos_fabric_done *done,
		    unsigned int flags);

struct fos_peer *fos_peer_find(u32 node_id);
struct fos_peer *fos_peer_get(struct fos_peer *peer);
void fos_peer_put(struct fos_peer *peer);
u32 fos_peer_node_id(const struct fos_peer *peer);
u32 fos_peer_epoch(struct fos_peer *peer);
bool fos_peer_trusts_uids(const struct fos_peer *peer);
void fos_peer_proto_error(struct fos_peer *peer, const char *why);

/* What a peer may make this node hold (limits: module parameters). */
enum fos_peer_res {
	FOS_PEER_WORK,		/* COPY, GRANT, LOOKUP, ... being served */
	FOS_PEER_GRANTS,	/* grants out */
	FOS_PEER_KEPT,		/* kept grants out (FOS_GRANT_KEEP) */
	FOS_PEER_DERIVED,	/* Requests derived for it (DERIVE), alive */
	FOS_PEER_NR_RES,
};

bool fos_peer_res_get(struct fos_peer *peer, unsigned int res);
void fos_peer_res_put(struct fos_peer *peer, unsigned int res);

/**
 * struct fos_rx_info - what a handler learns of a message besides its payload
 * @type: its type
 * @cookie: the sender's token; a reply echoes its request's
 */
struct fos_rx_info {
	u8 type;
	u64 cookie;
};

/*
 * Receive handlers: one per message type, registered by the transport's
 * users (fos_fabric_register()).  They run in process context (the CQ's
 * workqueue, or with fabric_rx_softirq a work item of the connection's),
 * a row marked @atomic possibly in the CQ's softirq, in order per
 * connection, with the payload valid for the duration of the call only.
 * The header and the payload (@check) have been validated.
 */
typedef void (*fos_recv_fn)(struct fos_peer *peer,
			    const struct fos_rx_info *rx,
			    const void *payload, u32 len);

/* What a row's @recv_atomic returns to have @recv called instead. */
#define FOS_RX_DEFER	1

/*
 * A handler's attempt in the receive completion's softirq: 0 if it
 * handled the message, FOS_RX_DEFER (having done nothing) to have the
 * row's @recv handle it in process context, in order.
 */
typedef int (*fos_recv_atomic_fn)(struct fos_peer *peer,
				  const struct fos_rx_info *rx,
				  const void *payload, u32 len);

/**
 * struct fos_msg_type - one row of the transport's dispatch table
 * @type: the message type, FOS_FABRIC_TYPE_FIRST..FOS_FABRIC_TYPE_LAST
 *	(the transport's own rows: its framing's types)
 * @name: for logs and tracepoints
 * @check: validates the payload; a failure ends the connection
 * @recv: the handler, NULL for messages the transport consumes itself
 * @held: a request served later, in process context: its receive credit
 *	is held until the handler calls fos_fabric_credit_done() ("Held
 *	credits" in fabric/rx.c)
 * @atomic: @recv may run in the receive completion's softirq ("Receiving
 *	in softirq" in fabric/rx.c): it neither sleeps nor takes a lock that
 *	process context takes with bottom halves on
 * @recv_atomic: for a row that is not @atomic, nor @held: tried first in
 *	the completion's softirq, under @atomic's rules, where the message
 *	was verified; it may defer to @recv (FOS_RX_DEFER)
 */
struct fos_msg_type {
	u8 type;
	const char *name;
	int (*check)(const void *payload, u32 len);
	fos_recv_fn recv;
	bool held;
	bool atomic;
	fos_recv_atomic_fn recv_atomic;
};

int fos_fabric_register(const struct fos_msg_type *types, unsigned int n);
void fos_fabric_set_node_down(void (*fn)(u32 node, u32 epoch));
void fos_fabric_unregister(const struct fos_msg_type *types, unsigned int n);

/* One-sided RDMA for remote memory_copy ("One-sided RDMA" in fabric/rdma.c). */
struct sg_table;
struct fos_fabric_mr;

int fos_fabric_reg_mr(struct fos_peer *peer, struct sg_table *sgt,
		      u32 npages, struct fos_fabric_mr **out, u64 *addr,
		      u32 *rkey, u64 *tag, bool write);
void fos_fabric_dereg_mr(struct fos_fabric_mr *m);
bool fos_fabric_mr_stable(const struct fos_fabric_mr *m);
u32 fos_fabric_mr_max_pages(struct fos_peer *peer);
int fos_fabric_rdma_read(struct fos_peer *peer, struct sg_table *sgt,
			 u64 addr, u32 rkey, u64 tag, const bool *stop);
int fos_fabric_rdma_write(struct fos_peer *peer, struct sg_table *sgt,
			  u64 addr, u32 rkey, u64 tag, const bool *stop);
unsigned int fos_fabric_link_grace(void);

void fos_fabric_credit_done(struct fos_peer *peer);

/* Module load and unload (main.c): the fabric, its netlink family, PING. */
int fos_fabric_init(void);
void fos_fabric_exit(void);
bool fos_fabric_loopback(void);

#endif /* FRACTOS_FABRIC_H */
