/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every program run by remote_2node.sh on each node shares: the
 * node's role (FRACTOS_NODE) and its peers' addresses (FRACTOS_ADDRS),
 * bringing the peers up, and the name, monitor and revocation checks the
 * programs make.  Include after fos_util.h and fos_nl.h.
 */
#ifndef FRACTOS_MULTINODE_NODE_H
#define FRACTOS_MULTINODE_NODE_H

/* This node's id, the number of nodes, their addresses (1-based). */
static uint32_t me, nodes;
static struct in_addr addrs[9];

/* Read FRACTOS_NODE and FRACTOS_ADDRS (vm/run --nodes N); bail if absent. */
static inline void node_args(void)
{
	const char *a = getenv("FRACTOS_ADDRS");
	char *copy, *tok, *save = NULL;

	me = getenv("FRACTOS_NODE") ? atoi(getenv("FRACTOS_NODE")) : 0;
	if (!a || !me)
		tap_bail("not a vm/run --nodes guest");
	copy = strdup(a);
	for (tok = strtok_r(copy, " ", &save); tok && nodes < 8;
	     tok = strtok_r(NULL, " ", &save))
		inet_pton(AF_INET, tok, &addrs[++nodes]);
	free(copy);
}

/* Configure every other node and wait until it is UP (2 TAP lines each). */
static inline void peers_up(void)
{
	uint32_t i;

	for (i = 1; i <= nodes; i++) {
		if (i == me)
			continue;
		tap_eq(fos_nl_node_add(i, addrs[i]), 0, "node %u: add node %u", me, i);
		tap_ok(fos_nl_wait_up(i, 60), "node %u: node %u is UP", me, i);
	}
}

/* NAME_LOOKUP of @name on node @node. */
static inline int lookup(int fd, uint32_t node, const char *name, uint32_t *cid)
{
	struct fractos_name a = {
		.flags = FRACTOS_NAME_NODE, .name = (uintptr_t)name,
		.name_len = strlen(name), .node = node,
	};
	int ret = ioctl(fd, FRACTOS_IOC_NAME_LOOKUP, &a);

	if (!ret)
		*cid = a.cid;
	return ret;
}

/* lookup(), waiting up to 90 s for the other node to publish @name. */
static inline int node_lookup_wait(int fd, uint32_t node, const char *name,
				   uint32_t *cid)
{
	int i, ret;

	for (i = 0; i < 900; i++) {
		ret = lookup(fd, node, name, cid);
		if (!ret || errno != ENOENT)
			break;
		usleep(100000);
	}
	return ret;
}

/*
 * Every node meets at @prefix-@tag (fosnet barrier, over TCP, node 1
 * coordinates), waiting at most @secs seconds.
 */
static inline int node_barrier(const char *prefix, const char *tag, int secs)
{
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "./fosnet barrier %s-%s - %d >/dev/null",
		 prefix, tag, secs);
	return system(cmd);
}

/* NAME_PUBLISH of @cid as @name, for every uid. */
static inline int publish(int fd, uint32_t cid, const char *name)
{
	struct fractos_name a = {
		.cid = cid, .flags = FRACTOS_NAME_WORLD,
		.name = (uintptr_t)name, .name_len = strlen(name),
	};

	return ioctl(fd, FRACTOS_IOC_NAME_PUBLISH, &a);
}

/* NAME_PUBLISH of @cid as @name, for our uid only. */
static inline int publish_mine(int fd, uint32_t cid, const char *name)
{
	struct fractos_name a = {
		.cid = cid, .name = (uintptr_t)name, .name_len = strlen(name),
	};

	return ioctl(fd, FRACTOS_IOC_NAME_PUBLISH, &a);
}

static inline int monitor(int fd, uint32_t cid, uint64_t cookie)
{
	struct fractos_monitor a = { .cid = cid, .cookie = cookie };

	return ioctl(fd, FRACTOS_IOC_MONITOR_RECEIVE, &a);
}

static inline int revoked(int fd, uint32_t cid)
{
	struct fractos_cap_info i;

	return !fos_info(fd, cid, &i) && (i.info_flags & FRACTOS_INFO_REVOKED);
}

#endif /* FRACTOS_MULTINODE_NODE_H */
