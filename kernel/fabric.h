/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fractos: the kernel-to-kernel RDMA fabric, as the rest of the module sees
 * it.  kernel/fabric/ owns devices, connections and flow control; its users
 * (ping.c, kernel/remote/) register the message types they handle
 * (fos_fabric_register()), send typed messages to a peer, and pull memory
 * with one-sided RDMA.  genl.c is the configuration front door.  The wire
 * format is in wire.h.
 */
#ifndef FRACTOS_FABRIC_H
#define FRACTOS_FABRIC_H

#include <linux/socket.h>
#include <linux/types.h>
#include <linux/fractos_netlink.h>

struct fos_peer;
struct fos_wire_hdr;

/**
 * struct fos_fabric_done - completion of one send
 * @fn: called once the message has left (status 0) or could not be
 *	delivered to the peer's QP (negative errno; the connection is then
 *	torn down).  Runs in the CQ's workqueue context; must not sleep.
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
void fos_peer_stat_inc(struct fos_peer *peer, unsigned int stat);

/* What a peer may make this node hold (limits: module parameters). */
enum fos_peer_res {
	FOS_PEER_WORK,		/* COPY, GRANT, LOOKUP being served */
	FOS_PEER_GRANTS,	/* grants out */
	FOS_PEER_NR_RES,
};

bool fos_peer_res_get(struct fos_peer *peer, unsigned int res);
void fos_peer_res_put(struct fos_peer *peer, unsigned int res);

/*
 * Receive handlers: one per message type, registered by the transport's
 * users (fos_fabric_register()).  They run in the CQ's workqueue context,
 * in order per connection, with the payload valid for the duration of the
 * call only.  The header and the payload (@check) have been validated.
 */
typedef void (*fos_recv_fn)(struct fos_peer *peer,
			    const struct fos_wire_hdr *hdr,
			    const void *payload, u32 len);

/**
 * struct fos_msg_type - one row of the transport's dispatch table
 * @type: the FOS_WIRE_* message type
 * @name: for logs and tracepoints
 * @check: validates the payload (wire.h); a failure ends the connection
 * @recv: the handler, NULL for messages the transport consumes itself
 * @held: a request served later, in process context: its receive credit
 *	is held until the handler calls fos_fabric_credit_done() ("Held
 *	credits" in fabric/rx.c)
 */
struct fos_msg_type {
	u8 type;
	const char *name;
	int (*check)(const void *payload, u32 len);
	fos_recv_fn recv;
	bool held;
};

int fos_fabric_register(const struct fos_msg_type *types, unsigned int n);
void fos_fabric_set_node_down(void (*fn)(u32 node, u32 epoch));
void fos_fabric_unregister(const struct fos_msg_type *types, unsigned int n);

/* One-sided RDMA for remote memory_copy ("One-sided RDMA" in fabric/rdma.c). */
struct sg_table;
struct fos_fabric_mr;

int fos_fabric_reg_mr(struct fos_peer *peer, struct sg_table *sgt,
		      u32 npages, struct fos_fabric_mr **out, u64 *addr,
		      u32 *rkey);
void fos_fabric_dereg_mr(struct fos_fabric_mr *m);
u32 fos_fabric_mr_max_pages(struct fos_peer *peer);
int fos_fabric_rdma_read(struct fos_peer *peer, struct sg_table *sgt,
			 u64 addr, u32 rkey, const bool *stop);

void fos_fabric_credit_done(struct fos_peer *peer);

/* ping.c */
int fos_ping(struct fos_peer *peer, u64 *rtt_ns);
int fos_ping_init(void);
void fos_ping_exit(void);

/* Configuration and introspection (genl.c). */
int fos_fabric_node_add(u32 node_id, const struct sockaddr_storage *addr,
			bool trust_uids);
u16 fos_fabric_default_port(void);
int fos_fabric_node_del(u32 node_id);
void fos_fabric_auth_changed(void);

/**
 * struct fos_node_info - a snapshot of one peer for NODE_LIST
 * @node_id: the peer's node id
 * @addr: its configured address and port
 * @state: enum fractos_node_state
 * @epoch: last epoch seen, 0 if never connected
 * @qpn: number of the QP messages go out on, 0 if not up
 * @credits: send credits now
 * @trust_uids: configured with NODE_TRUST_UIDS
 * @stats: FRACTOS_STAT_* counters
 */
struct fos_node_info {
	u32 node_id;
	struct sockaddr_storage addr;
	u8 state;
	u32 epoch;
	u32 qpn;
	u32 credits;
	bool trust_uids;
	u64 stats[__FRACTOS_STAT_MAX];
};

int fos_fabric_node_info(u32 *node_id, struct fos_node_info *ni);

/**
 * struct fos_link_info - a snapshot of one RDMA device for LINK_LIST
 * @name: device name
 * @index: device index
 * @ports: number of ports
 * @state: enum ib_port_state of port 1
 * @conns: connections on it
 */
struct fos_link_info {
	char name[64];
	u32 index;
	u32 ports;
	u8 state;
	u32 conns;
};

int fos_fabric_link_info(unsigned long pos, struct fos_link_info *li);

/**
 * struct fos_fabric_info - fabric-wide state for STATS
 * @port: the listening port, 0 if none
 * @nodes: configured peers
 * @links: RDMA devices
 * @stats: FRACTOS_STAT_* counters summed over all peers, alive or gone
 */
struct fos_fabric_info {
	u16 port;
	u32 nodes;
	u32 links;
	u64 stats[__FRACTOS_STAT_MAX];
};

void fos_fabric_info(struct fos_fabric_info *fi);

int fos_fabric_init(void);
void fos_fabric_exit(void);
int fos_genl_init(void);
void fos_genl_exit(void);

#endif /* FRACTOS_FABRIC_H */
