// SPDX-License-Identifier: GPL-2.0
/*
 * fractos: the "fractos" generic netlink family, the configuration front
 * door of the fabric (uapi/linux/fractos_netlink.h describes the commands).
 * Only init_net; changes need CAP_NET_ADMIN; attributes are validated
 * strictly against fos_nl_policy.
 */
#include <linux/in.h>
#include <linux/in6.h>
#include <net/genetlink.h>
#include "auth.h"
#include "pri.h"

static const struct nla_policy fos_nl_policy[FRACTOS_A_MAX + 1] = {
	[FRACTOS_A_NODE_ID]	= { .type = NLA_U32 },
	[FRACTOS_A_NODE_ADDR4]	= NLA_POLICY_EXACT_LEN(sizeof(struct in_addr)),
	[FRACTOS_A_NODE_ADDR6]	= NLA_POLICY_EXACT_LEN(sizeof(struct in6_addr)),
	[FRACTOS_A_NODE_PORT]	= NLA_POLICY_MIN(NLA_U16, 1),
	[FRACTOS_A_PING_COUNT]	= NLA_POLICY_RANGE(NLA_U32, 1, 10000),
	[FRACTOS_A_AUTH_SECRET]	= NLA_POLICY_RANGE(NLA_BINARY,
						   FRACTOS_AUTH_SECRET_MIN,
						   FRACTOS_AUTH_SECRET_MAX),
	[FRACTOS_A_AUTH_INSECURE] = { .type = NLA_FLAG },
	[FRACTOS_A_AUTH_ALL]	= { .type = NLA_FLAG },
	[FRACTOS_A_NODE_TRUST_UIDS] = { .type = NLA_FLAG },
	[FRACTOS_A_AUTH_PEER]	= { .type = NLA_U32 },
	[FRACTOS_A_AUTH_CLUSTER] = { .type = NLA_FLAG },
};

static struct genl_family fos_genl_family;

static int fos_nl_node_add(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;
	struct sockaddr_storage ss = {};
	u16 port = fos_fabric_default_port();

	if (GENL_REQ_ATTR_CHECK(info, FRACTOS_A_NODE_ID))
		return -EINVAL;
	if (!a[FRACTOS_A_NODE_ADDR4] == !a[FRACTOS_A_NODE_ADDR6]) {
		NL_SET_ERR_MSG(info->extack,
			       "exactly one of NODE_ADDR4 and NODE_ADDR6 is needed");
		return -EINVAL;
	}
	if (a[FRACTOS_A_NODE_PORT])
		port = nla_get_u16(a[FRACTOS_A_NODE_PORT]);
	if (a[FRACTOS_A_NODE_ADDR4]) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		nla_memcpy(&sin->sin_addr, a[FRACTOS_A_NODE_ADDR4],
			   sizeof(sin->sin_addr));
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		nla_memcpy(&sin6->sin6_addr, a[FRACTOS_A_NODE_ADDR6],
			   sizeof(sin6->sin6_addr));
	}
	return fos_fabric_node_add(nla_get_u32(a[FRACTOS_A_NODE_ID]), &ss,
				   nla_get_flag(a[FRACTOS_A_NODE_TRUST_UIDS]));
}

static int fos_nl_node_del(struct sk_buff *skb, struct genl_info *info)
{
	if (GENL_REQ_ATTR_CHECK(info, FRACTOS_A_NODE_ID))
		return -EINVAL;
	return fos_fabric_node_del(nla_get_u32(info->attrs[FRACTOS_A_NODE_ID]));
}

/* AUTH_PEER's node id, 0 without it (then nothing reads it). */
static u32 fos_nl_auth_peer(struct nlattr **a)
{
	return a[FRACTOS_A_AUTH_PEER] ? nla_get_u32(a[FRACTOS_A_AUTH_PEER]) : 0;
}

/*
 * AUTH_SET: the cluster secret, a node's pair key (AUTH_PEER), or insecure
 * mode.  The secret is copied into the HMAC transform only; the netlink
 * buffer is the caller's and goes away with the request.
 */
static int fos_nl_auth_set(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;
	int ret;

	if (!a[FRACTOS_A_AUTH_SECRET] == !a[FRACTOS_A_AUTH_INSECURE]) {
		NL_SET_ERR_MSG(info->extack,
			       "exactly one of AUTH_SECRET and AUTH_INSECURE is needed");
		return -EINVAL;
	}
	if (a[FRACTOS_A_AUTH_ALL] || a[FRACTOS_A_AUTH_CLUSTER] ||
	    (a[FRACTOS_A_AUTH_INSECURE] && a[FRACTOS_A_AUTH_PEER])) {
		NL_SET_ERR_MSG(info->extack,
			       "AUTH_SET takes AUTH_SECRET with an optional AUTH_PEER, or AUTH_INSECURE");
		return -EINVAL;
	}
	if (a[FRACTOS_A_AUTH_INSECURE]) {
		fos_auth_set_insecure();
	} else {
		ret = fos_auth_set_secret(nla_data(a[FRACTOS_A_AUTH_SECRET]),
					  nla_len(a[FRACTOS_A_AUTH_SECRET]),
					  a[FRACTOS_A_AUTH_PEER],
					  fos_nl_auth_peer(a));
		if (ret)
			return ret;
	}
	fos_fabric_kick();	/* the keys changed: try every peer now */
	return 0;
}

/*
 * AUTH_FORGET: every previous key; with AUTH_ALL every key; with
 * AUTH_CLUSTER the cluster secrets; with AUTH_PEER that node's previous
 * pair key, or both of its pair keys with AUTH_ALL too.
 */
static int fos_nl_auth_forget(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;
	enum fos_auth_forget what = FOS_AUTH_FORGET_PREVIOUS;

	if (a[FRACTOS_A_AUTH_SECRET] || a[FRACTOS_A_AUTH_INSECURE] ||
	    (a[FRACTOS_A_AUTH_CLUSTER] &&
	     (a[FRACTOS_A_AUTH_ALL] || a[FRACTOS_A_AUTH_PEER]))) {
		NL_SET_ERR_MSG(info->extack,
			       "AUTH_FORGET takes AUTH_CLUSTER, or AUTH_PEER and AUTH_ALL, each optional");
		return -EINVAL;
	}
	if (a[FRACTOS_A_AUTH_PEER])
		what = a[FRACTOS_A_AUTH_ALL] ? FOS_AUTH_FORGET_PAIR :
					       FOS_AUTH_FORGET_PAIR_PREVIOUS;
	else if (a[FRACTOS_A_AUTH_ALL])
		what = FOS_AUTH_FORGET_ALL;
	else if (a[FRACTOS_A_AUTH_CLUSTER])
		what = FOS_AUTH_FORGET_CLUSTER;
	return fos_auth_forget(what, fos_nl_auth_peer(a));
}

static int fos_nl_put_auth(struct sk_buff *msg)
{
	struct fos_auth_info ai;
	u8 mode;

	mode = fos_auth_mode(&ai);
	if (nla_put_u8(msg, FRACTOS_A_AUTH_MODE, mode) ||
	    nla_put_u32(msg, FRACTOS_A_AUTH_KEY_ID, ai.key_id) ||
	    (ai.prev_key_id &&
	     nla_put_u32(msg, FRACTOS_A_AUTH_PREV_KEY_ID, ai.prev_key_id)) ||
	    nla_put_u32(msg, FRACTOS_A_AUTH_PAIRS, ai.pairs))
		return -EMSGSIZE;
	return 0;
}

static int fos_nl_put_stats(struct sk_buff *skb, int attr, const u64 *stats)
{
	struct nlattr *nest;
	int i;

	nest = nla_nest_start(skb, attr);
	if (!nest)
		return -EMSGSIZE;
	for (i = FRACTOS_STAT_TX_MSGS; i < __FRACTOS_STAT_MAX; i++)
		if (nla_put_u64_64bit(skb, i, stats[i], FRACTOS_STAT_PAD))
			goto cancel;
	nla_nest_end(skb, nest);
	return 0;

cancel:
	nla_nest_cancel(skb, nest);
	return -EMSGSIZE;
}

static int fos_nl_fill_node(struct sk_buff *skb, u32 portid, u32 seq,
			    int flags, const struct fos_node_info *ni)
{
	u32 key_id, prev_key_id;
	void *hdr;
	int ret;

	fos_auth_node_keys(ni->node_id, &key_id, &prev_key_id);
	hdr = genlmsg_put(skb, portid, seq, &fos_genl_family, flags,
			  FRACTOS_CMD_NODE_LIST);
	if (!hdr)
		return -EMSGSIZE;
	if (ni->addr.ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const void *)&ni->addr;

		ret = nla_put_in_addr(skb, FRACTOS_A_NODE_ADDR4,
				      sin->sin_addr.s_addr) ||
		      nla_put_u16(skb, FRACTOS_A_NODE_PORT,
				  ntohs(sin->sin_port));
	} else {
		const struct sockaddr_in6 *sin6 = (const void *)&ni->addr;

		ret = nla_put_in6_addr(skb, FRACTOS_A_NODE_ADDR6,
				       &sin6->sin6_addr) ||
		      nla_put_u16(skb, FRACTOS_A_NODE_PORT,
				  ntohs(sin6->sin6_port));
	}
	if (ret ||
	    nla_put_u32(skb, FRACTOS_A_NODE_ID, ni->node_id) ||
	    nla_put_u8(skb, FRACTOS_A_NODE_STATE, ni->state) ||
	    nla_put_u32(skb, FRACTOS_A_NODE_EPOCH, ni->epoch) ||
	    nla_put_u32(skb, FRACTOS_A_NODE_QPN, ni->qpn) ||
	    nla_put_u32(skb, FRACTOS_A_NODE_CREDITS, ni->credits) ||
	    (ni->trust_uids &&
	     nla_put_flag(skb, FRACTOS_A_NODE_TRUST_UIDS)) ||
	    (ni->rx_softirq &&
	     nla_put_flag(skb, FRACTOS_A_NODE_RX_SOFTIRQ)) ||
	    (key_id && nla_put_u32(skb, FRACTOS_A_NODE_KEY_ID, key_id)) ||
	    (prev_key_id &&
	     nla_put_u32(skb, FRACTOS_A_NODE_PREV_KEY_ID, prev_key_id)) ||
	    fos_nl_put_stats(skb, FRACTOS_A_NODE_STATS, ni->stats)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

static int fos_nl_node_get(struct sk_buff *skb, struct genl_info *info)
{
	struct fos_node_info *ni;
	struct sk_buff *msg;
	u32 id;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, FRACTOS_A_NODE_ID))
		return -EINVAL;
	id = nla_get_u32(info->attrs[FRACTOS_A_NODE_ID]);
	ni = kmalloc(sizeof(*ni), GFP_KERNEL);
	if (!ni)
		return -ENOMEM;
	ret = fos_fabric_node_info(&id, ni);
	if (!ret && id != nla_get_u32(info->attrs[FRACTOS_A_NODE_ID]))
		ret = -ENOENT;
	if (ret)
		goto out;
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	ret = -ENOMEM;
	if (!msg)
		goto out;
	ret = fos_nl_fill_node(msg, info->snd_portid, info->snd_seq, 0, ni);
	if (ret) {
		nlmsg_free(msg);
		goto out;
	}
	ret = genlmsg_reply(msg, info);
out:
	kfree(ni);
	return ret;
}

/* cb->args[0]: the next node id to report; cb->args[1]: done. */
static int fos_nl_node_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct fos_node_info *ni;
	int ret = 0;

	if (cb->args[1])
		return 0;
	ni = kmalloc(sizeof(*ni), GFP_KERNEL);
	if (!ni)
		return -ENOMEM;
	for (;;) {
		u32 id = cb->args[0];

		if (fos_fabric_node_info(&id, ni)) {
			cb->args[1] = 1;
			break;
		}
		ret = fos_nl_fill_node(skb, NETLINK_CB(cb->skb).portid,
				       cb->nlh->nlmsg_seq, NLM_F_MULTI, ni);
		if (ret)
			break;
		if (id == U32_MAX) {
			cb->args[1] = 1;
			break;
		}
		cb->args[0] = id + 1;
	}
	kfree(ni);
	/* A full skb with something in it: come back for more. */
	return ret && skb->len ? skb->len : ret ? ret : skb->len;
}

static int fos_nl_link_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct fos_link_info li;
	void *hdr;

	while (!fos_fabric_link_info(cb->args[0], &li)) {
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, &fos_genl_family,
				  NLM_F_MULTI, FRACTOS_CMD_LINK_LIST);
		if (!hdr)
			break;
		if (nla_put_string(skb, FRACTOS_A_LINK_NAME, li.name) ||
		    nla_put_u32(skb, FRACTOS_A_LINK_INDEX, li.index) ||
		    nla_put_u32(skb, FRACTOS_A_LINK_PORTS, li.ports) ||
		    nla_put_u8(skb, FRACTOS_A_LINK_STATE, li.state) ||
		    nla_put_u32(skb, FRACTOS_A_LINK_CONNS, li.conns)) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
		cb->args[0]++;
	}
	return skb->len;
}

static int fos_nl_stats(struct sk_buff *skb, struct genl_info *info)
{
	struct fos_fabric_info *fi;
	struct sk_buff *msg;
	void *hdr;
	int ret = -ENOMEM;

	fi = kmalloc(sizeof(*fi), GFP_KERNEL);
	if (!fi)
		return -ENOMEM;
	fos_fabric_info(fi);
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		goto out;
	hdr = genlmsg_put_reply(msg, info, &fos_genl_family, 0,
				FRACTOS_CMD_STATS);
	if (!hdr ||
	    nla_put_u32(msg, FRACTOS_A_LOCAL_NODE_ID, fos_node_id) ||
	    nla_put_u32(msg, FRACTOS_A_LOCAL_EPOCH, fos_epoch) ||
	    nla_put_u16(msg, FRACTOS_A_LISTEN_PORT, fi->port) ||
	    nla_put_u32(msg, FRACTOS_A_NODES, fi->nodes) ||
	    nla_put_u32(msg, FRACTOS_A_LINKS, fi->links) ||
	    fos_nl_put_auth(msg) ||
	    fos_nl_put_stats(msg, FRACTOS_A_STATS, fi->stats)) {
		nlmsg_free(msg);
		ret = -EMSGSIZE;
		goto out;
	}
	genlmsg_end(msg, hdr);
	ret = genlmsg_reply(msg, info);
out:
	kfree(fi);
	return ret;
}

static int fos_nl_ping(struct sk_buff *skb, struct genl_info *info)
{
	u64 rtt, min = U64_MAX, max = 0, sum = 0;
	struct fos_peer *peer;
	struct sk_buff *msg;
	u32 i, count = 1;
	void *hdr;
	int ret = 0;

	if (GENL_REQ_ATTR_CHECK(info, FRACTOS_A_NODE_ID))
		return -EINVAL;
	if (info->attrs[FRACTOS_A_PING_COUNT])
		count = nla_get_u32(info->attrs[FRACTOS_A_PING_COUNT]);
	peer = fos_peer_find(nla_get_u32(info->attrs[FRACTOS_A_NODE_ID]));
	if (!peer)
		return -ENOENT;
	for (i = 0; i < count; i++) {
		ret = fos_ping(peer, &rtt);
		if (ret)
			break;
		min = min(min, rtt);
		max = max(max, rtt);
		sum += rtt;
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
	}
	fos_peer_put(peer);
	if (ret)
		return ret;

	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &fos_genl_family, 0,
				FRACTOS_CMD_PING);
	if (!hdr ||
	    nla_put_u32(msg, FRACTOS_A_PING_COUNT, count) ||
	    nla_put_u64_64bit(msg, FRACTOS_A_PING_RTT_MIN_NS, min,
			      FRACTOS_A_PAD) ||
	    nla_put_u64_64bit(msg, FRACTOS_A_PING_RTT_AVG_NS,
			      div_u64(sum, count), FRACTOS_A_PAD) ||
	    nla_put_u64_64bit(msg, FRACTOS_A_PING_RTT_MAX_NS, max,
			      FRACTOS_A_PAD)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

static const struct genl_small_ops fos_nl_ops[] = {
	{
		.cmd	= FRACTOS_CMD_NODE_ADD,
		.doit	= fos_nl_node_add,
		.flags	= GENL_ADMIN_PERM,
	},
	{
		.cmd	= FRACTOS_CMD_NODE_DEL,
		.doit	= fos_nl_node_del,
		.flags	= GENL_ADMIN_PERM,
	},
	{
		.cmd	= FRACTOS_CMD_NODE_LIST,
		.doit	= fos_nl_node_get,
		.dumpit	= fos_nl_node_dump,
	},
	{
		.cmd	= FRACTOS_CMD_LINK_LIST,
		.dumpit	= fos_nl_link_dump,
	},
	{
		.cmd	= FRACTOS_CMD_STATS,
		.doit	= fos_nl_stats,
	},
	{
		.cmd	= FRACTOS_CMD_PING,
		.doit	= fos_nl_ping,
		.flags	= GENL_ADMIN_PERM,
	},
	{
		.cmd	= FRACTOS_CMD_AUTH_SET,
		.doit	= fos_nl_auth_set,
		.flags	= GENL_ADMIN_PERM,
	},
	{
		.cmd	= FRACTOS_CMD_AUTH_FORGET,
		.doit	= fos_nl_auth_forget,
		.flags	= GENL_ADMIN_PERM,
	},
};

static struct genl_family fos_genl_family __ro_after_init = {
	.name		= FRACTOS_GENL_NAME,
	.version	= FRACTOS_GENL_VERSION,
	.maxattr	= FRACTOS_A_MAX,
	.policy		= fos_nl_policy,
	/* PING sleeps; do not hold genl_mutex for everyone meanwhile. */
	.parallel_ops	= true,
	.module		= THIS_MODULE,
	.small_ops	= fos_nl_ops,
	.n_small_ops	= ARRAY_SIZE(fos_nl_ops),
};

int fos_genl_init(void)
{
	return genl_register_family(&fos_genl_family);
}

void fos_genl_exit(void)
{
	genl_unregister_family(&fos_genl_family);
}
