/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * fractos_netlink.h - the "fractos" generic netlink family: the node table
 * of the kernel-to-kernel RDMA fabric.
 *
 * Commands (FRACTOS_CMD_*) and their attributes (FRACTOS_A_*):
 *
 * NODE_ADD  (CAP_NET_ADMIN) NODE_ID, one of NODE_ADDR4 / NODE_ADDR6, and
 *           optionally NODE_PORT (default: the fabric_port module
 *           parameter, or FRACTOS_FABRIC_PORT when that is 0) and
 *           NODE_TRUST_UIDS (flag): the node's uids are ours.  Without
 *           it, NAME_LOOKUPs from that node find world-visible names
 *           (FRACTOS_NAME_WORLD) only: the uid a node states for its
 *           asker is believed only where the admin says that both nodes
 *           share one uid space.  EEXIST if the id is configured already.
 * NODE_DEL  (CAP_NET_ADMIN) NODE_ID.  Tears the connection down; returns
 *           when it is gone.  A connection that is up lingers first, up
 *           to 1 s, until the answers to what the node has received
 *           from it have left.  ENOENT for an unknown id.
 * NODE_LIST dump: one message per node with NODE_ID, NODE_ADDR4/6,
 *           NODE_PORT, NODE_STATE, NODE_EPOCH (0: never seen), NODE_QPN,
 *           NODE_CREDITS, NODE_TRUST_UIDS when set, NODE_KEY_ID and
 *           NODE_PREV_KEY_ID while the node has a pair key (AUTH_SET with
 *           AUTH_PEER), and a nested NODE_STATS (FRACTOS_STAT_*).
 *           A do request with NODE_ID returns that node only.
 * LINK_LIST dump: one message per RDMA device with LINK_NAME, LINK_INDEX,
 *           LINK_PORTS, LINK_STATE (of port 1, enum ib_port_state) and
 *           LINK_CONNS.
 * STATS     LOCAL_NODE_ID, LOCAL_EPOCH, LISTEN_PORT, NODES, LINKS and a
 *           nested STATS with the fabric-wide counters (FRACTOS_STAT_*).
 * PING      (CAP_NET_ADMIN) NODE_ID, optional PING_COUNT (1..10000, default
 *           1): round trips of a PING message; returns PING_COUNT (replies
 *           received) and PING_RTT_MIN/AVG/MAX_NS.  ENOTCONN if the node is
 *           not up, ETIMEDOUT if a reply does not come within a second.
 * AUTH_SET  (CAP_NET_ADMIN) exactly one of:
 *           AUTH_SECRET (16 to 128 bytes): the cluster secret, or with
 *             AUTH_PEER (a node id) the *pair key* this node shares with
 *             that node only (its row of the table "fractctl secret
 *             derive" makes: Documentation/security.rst).  A node is
 *             admitted with its pair key, its previous pair key, the
 *             cluster secret or the previous cluster secret, and our
 *             connections to it offer them in that order: once no node
 *             keeps a cluster secret (AUTH_FORGET with AUTH_CLUSTER),
 *             only pair keys admit, and one node's keys never make
 *             anyone another node.  New connections use a key from now
 *             on; the one it replaces in its slot stays accepted for
 *             connections that name it (a rolling rotation: set the new
 *             keys on every node, then AUTH_FORGET), and live
 *             connections are not touched.  Setting the current key of
 *             a slot again changes nothing.
 *           AUTH_INSECURE (flag): forget every secret and pair key and
 *             admit only nodes that are insecure too, without
 *             authentication.  The kernel log says so, and STATS
 *             reports it.
 *           Keys can never be read back.  EINVAL for none or both, or
 *           any other AUTH_ attribute, ERANGE for a secret of the wrong
 *           size, ENOENT if the kernel has no hmac(sha256), ENOMEM.
 * AUTH_FORGET (CAP_NET_ADMIN) forgets every previous key (the cluster's
 *           and every node's); with AUTH_ALL, every key and insecure
 *           mode: the node then admits nobody (the state after module
 *           load); with AUTH_CLUSTER (alone), both cluster secrets, pair
 *           keys staying; with AUTH_PEER, that node's previous pair key,
 *           or (with AUTH_ALL too) both of its pair keys.  ENOENT: that
 *           node has no pair key.  EINVAL: another combination.
 * STATS also carries AUTH_MODE (enum fractos_auth_mode), AUTH_KEY_ID and,
 *           while one is kept, AUTH_PREV_KEY_ID (u32 key ids of the
 *           cluster secrets: the first four bytes of
 *           HMAC-SHA256(secret, "fractos key id"), enough to tell whether
 *           two nodes hold the same secret), and AUTH_PAIRS (u32, the
 *           nodes this node holds a pair key for).
 *
 * Strict validation: unknown or output-only attributes, missing ones and
 * trailing data are rejected with EINVAL; values out of range (port 0,
 * PING_COUNT) and addresses of the wrong size with ERANGE (older kernels'
 * netlink core may say EINVAL for the latter).
 */
#ifndef _UAPI_LINUX_FRACTOS_NETLINK_H
#define _UAPI_LINUX_FRACTOS_NETLINK_H

#define FRACTOS_GENL_NAME	"fractos"
#define FRACTOS_GENL_VERSION	1

/* The rdma_cm port the fabric listens on unless told otherwise. */
#define FRACTOS_FABRIC_PORT	18525

enum fractos_nl_cmd {
	FRACTOS_CMD_UNSPEC,
	FRACTOS_CMD_NODE_ADD,
	FRACTOS_CMD_NODE_DEL,
	FRACTOS_CMD_NODE_LIST,
	FRACTOS_CMD_LINK_LIST,
	FRACTOS_CMD_STATS,
	FRACTOS_CMD_PING,
	FRACTOS_CMD_AUTH_SET,
	FRACTOS_CMD_AUTH_FORGET,
	__FRACTOS_CMD_MAX,
};

#define FRACTOS_CMD_MAX (__FRACTOS_CMD_MAX - 1)

enum fractos_nl_attr {
	FRACTOS_A_UNSPEC,
	FRACTOS_A_PAD,
	FRACTOS_A_NODE_ID,		/* u32 */
	FRACTOS_A_NODE_ADDR4,		/* struct in_addr, 4 bytes */
	FRACTOS_A_NODE_ADDR6,		/* struct in6_addr, 16 bytes */
	FRACTOS_A_NODE_PORT,		/* u16, host byte order, not 0 */
	FRACTOS_A_NODE_STATE,		/* u8, enum fractos_node_state */
	FRACTOS_A_NODE_EPOCH,		/* u32 */
	FRACTOS_A_NODE_QPN,		/* u32, 0 when not connected */
	FRACTOS_A_NODE_CREDITS,		/* u32, send credits now */
	FRACTOS_A_NODE_STATS,		/* nested, FRACTOS_STAT_* */
	FRACTOS_A_LINK_NAME,		/* string */
	FRACTOS_A_LINK_INDEX,		/* u32 */
	FRACTOS_A_LINK_PORTS,		/* u32 */
	FRACTOS_A_LINK_STATE,		/* u8, enum ib_port_state of port 1 */
	FRACTOS_A_LINK_CONNS,		/* u32 */
	FRACTOS_A_LOCAL_NODE_ID,	/* u32 */
	FRACTOS_A_LOCAL_EPOCH,		/* u32 */
	FRACTOS_A_LISTEN_PORT,		/* u16, 0: not listening */
	FRACTOS_A_NODES,		/* u32 */
	FRACTOS_A_LINKS,		/* u32 */
	FRACTOS_A_STATS,		/* nested, FRACTOS_STAT_* */
	FRACTOS_A_PING_COUNT,		/* u32 */
	FRACTOS_A_PING_RTT_MIN_NS,	/* u64 */
	FRACTOS_A_PING_RTT_AVG_NS,	/* u64 */
	FRACTOS_A_PING_RTT_MAX_NS,	/* u64 */
	FRACTOS_A_AUTH_SECRET,		/* binary, 16 to 128 bytes, write-only */
	FRACTOS_A_AUTH_INSECURE,	/* flag */
	FRACTOS_A_AUTH_ALL,		/* flag */
	FRACTOS_A_AUTH_MODE,		/* u8, enum fractos_auth_mode */
	FRACTOS_A_AUTH_KEY_ID,		/* u32 */
	FRACTOS_A_AUTH_PREV_KEY_ID,	/* u32 */
	FRACTOS_A_NODE_TRUST_UIDS,	/* flag */
	FRACTOS_A_AUTH_PEER,		/* u32, a node id */
	FRACTOS_A_AUTH_CLUSTER,		/* flag */
	FRACTOS_A_AUTH_PAIRS,		/* u32 */
	FRACTOS_A_NODE_KEY_ID,		/* u32 */
	FRACTOS_A_NODE_PREV_KEY_ID,	/* u32 */
	FRACTOS_A_NODE_RX_SOFTIRQ,	/* flag: its completions run in softirq */
	__FRACTOS_A_MAX,
};

#define FRACTOS_A_MAX (__FRACTOS_A_MAX - 1)

enum fractos_node_state {
	FRACTOS_NODE_DOWN,		/* backing off before a reconnect */
	FRACTOS_NODE_CONNECTING,	/* resolving or connecting */
	FRACTOS_NODE_WAITING,		/* the node connects to us */
	FRACTOS_NODE_UP,
};

#define FRACTOS_AUTH_SECRET_MIN	16
#define FRACTOS_AUTH_SECRET_MAX	128

/* How a node admits others (STATS: AUTH_MODE). */
enum fractos_auth_mode {
	FRACTOS_AUTH_NONE,		/* no secret: every node is refused */
	FRACTOS_AUTH_SECRET,		/* nodes that prove a key: pair, cluster */
	FRACTOS_AUTH_INSECURE,		/* insecure nodes, unauthenticated */
};

/* Counters, all u64; per node in NODE_STATS, fabric-wide in STATS. */
enum fractos_stat_attr {
	FRACTOS_STAT_UNSPEC,
	FRACTOS_STAT_PAD,
	FRACTOS_STAT_TX_MSGS,
	FRACTOS_STAT_TX_BYTES,
	FRACTOS_STAT_RX_MSGS,
	FRACTOS_STAT_RX_BYTES,
	FRACTOS_STAT_PINGS_TX,		/* PINGs sent */
	FRACTOS_STAT_PINGS_RX,		/* PINGs answered */
	FRACTOS_STAT_PONGS_RX,		/* PONGs received */
	FRACTOS_STAT_CONNECTS,		/* connections established */
	FRACTOS_STAT_DISCONNECTS,	/* connections torn down */
	FRACTOS_STAT_CONNECT_ERRORS,	/* attempts that failed */
	FRACTOS_STAT_HB_TIMEOUTS,	/* connections failed by the heartbeat */
	FRACTOS_STAT_EPOCH_CHANGES,	/* the node restarted */
	FRACTOS_STAT_NO_CREDITS,	/* sends refused for lack of credits */
	FRACTOS_STAT_PROTO_ERRORS,	/* malformed messages received */
	FRACTOS_STAT_REFUSED,		/* connection requests refused */
	FRACTOS_STAT_TX_STALLS,		/* send queue stalls (sends paused) */
	/*
	 * Refused connection requests by reason (REFUSED counts them all),
	 * fabric-wide only: before admission nothing is known about a peer.
	 */
	FRACTOS_STAT_REFUSED_MALFORMED,	/* bad hello */
	FRACTOS_STAT_REFUSED_VERSION,	/* another wire version */
	FRACTOS_STAT_REFUSED_UNKNOWN,	/* a node id not configured here */
	FRACTOS_STAT_REFUSED_WRONG_NODE, /* meant for another node */
	FRACTOS_STAT_REFUSED_INITIATOR,	/* that node must wait for us */
	FRACTOS_STAT_REFUSED_RESOURCES,	/* no device or memory here */
	FRACTOS_STAT_REFUSED_AUTH,	/* unknown secret, insecure mismatch */
	FRACTOS_STAT_REFUSED_ADDRESS,	/* not from the node's address */
	FRACTOS_STAT_REFUSED_BUSY,	/* too many admissions at once */
	/*
	 * Connections that failed authentication after the handshake: a MAC
	 * that does not verify, or no AUTH first (both ends count them).
	 */
	FRACTOS_STAT_AUTH_FAILURES,
	/*
	 * Bytes this node read from the node with one-sided RDMA READs (the
	 * data of copies and of staged I/O: a copy's destination node reads
	 * its source); the messages' bytes are RX_BYTES.
	 */
	FRACTOS_STAT_RDMA_READ_BYTES,
	/*
	 * A second connection of a node that is up with the epoch it claims
	 * (refused before its proof, or cut off at its AUTH): one connection
	 * per identity and epoch.
	 */
	FRACTOS_STAT_REFUSED_CONNECTED,
	/*
	 * Requests refused for want of a valid admission cookie, while half
	 * of the admission slots or more are held (counted in REFUSED too).
	 */
	FRACTOS_STAT_REFUSED_COOKIE,
	/*
	 * Messages of the remote layer (invocations and their answers, copies,
	 * exports, drops: wire types 5 to 17) sent to and received from the
	 * node; TX_MSGS and RX_MSGS count these and the transport's own
	 * (credits, heartbeats, pings, AUTH) together.
	 */
	FRACTOS_STAT_TX_REMOTE_MSGS,
	FRACTOS_STAT_RX_REMOTE_MSGS,
	/*
	 * Sessions (wire version 10): the remote layer's messages sent again
	 * on a new connection, those received twice and dropped, sessions
	 * ended (the node was then down for capabilities), and links down
	 * with the session kept (fabric_grace_ms).
	 */
	FRACTOS_STAT_RETRANSMITS,
	FRACTOS_STAT_DUPLICATES,
	FRACTOS_STAT_SESSION_ENDS,
	FRACTOS_STAT_LINK_GRACE,
	/*
	 * Bytes this node wrote to the node with one-sided RDMA WRITEs (a
	 * copy into a region the node keeps for us: "Kept regions").
	 */
	FRACTOS_STAT_RDMA_WRITE_BYTES,
	__FRACTOS_STAT_MAX,
};

#define FRACTOS_STAT_MAX (__FRACTOS_STAT_MAX - 1)

#endif /* _UAPI_LINUX_FRACTOS_NETLINK_H */
