// SPDX-License-Identifier: GPL-2.0
/*
 * fractos_nvme: the "fractos_blk" generic netlink family (ATTACH, DETACH,
 * LIST; uapi/linux/fractos_blk.h).  Only init_net; ATTACH and DETACH need
 * CAP_SYS_ADMIN (they open and close block devices); attributes are
 * validated strictly against fblk_nl_policy.
 */
#include <linux/cred.h>
#include <net/genetlink.h>
#include "blk.h"

static const struct nla_policy fblk_nl_policy[FRACTOS_BLK_A_MAX + 1] = {
	[FRACTOS_BLK_A_DEV_ID]	= NLA_POLICY_MIN(NLA_U32, 1),
	[FRACTOS_BLK_A_PATH]	= { .type = NLA_NUL_STRING, .len = 255 },
	[FRACTOS_BLK_A_NAME]	= { .type = NLA_NUL_STRING,
				    .len = FRACTOS_NAME_MAX },
	[FRACTOS_BLK_A_UID]	= { .type = NLA_U32 },
	[FRACTOS_BLK_A_FORMAT]	= { .type = NLA_FLAG },
};

static struct genl_family fblk_genl_family;

static int fblk_nl_attach(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;
	kuid_t uid = GLOBAL_ROOT_UID;
	struct sk_buff *msg;
	void *hdr;
	u32 id;
	int ret;

	/* GENL_ADMIN_PERM is CAP_NET_ADMIN: opening disks needs more. */
	if (!netlink_capable(skb, CAP_SYS_ADMIN))
		return -EPERM;
	if (GENL_REQ_ATTR_CHECK(info, FRACTOS_BLK_A_PATH) ||
	    GENL_REQ_ATTR_CHECK(info, FRACTOS_BLK_A_NAME))
		return -EINVAL;
	if (a[FRACTOS_BLK_A_UID]) {
		uid = make_kuid(current_user_ns(),
				nla_get_u32(a[FRACTOS_BLK_A_UID]));
		if (!uid_valid(uid)) {
			NL_SET_ERR_MSG_ATTR(info->extack, a[FRACTOS_BLK_A_UID],
					    "no such uid");
			return -EINVAL;
		}
	}
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	ret = fblk_attach(nla_data(a[FRACTOS_BLK_A_PATH]),
			  nla_data(a[FRACTOS_BLK_A_NAME]), uid,
			  nla_get_flag(a[FRACTOS_BLK_A_FORMAT]), &id);
	if (ret) {
		nlmsg_free(msg);
		return ret;
	}
	hdr = genlmsg_put_reply(msg, info, &fblk_genl_family, 0,
				FRACTOS_BLK_CMD_ATTACH);
	if (!hdr || nla_put_u32(msg, FRACTOS_BLK_A_DEV_ID, id)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

static int fblk_nl_detach(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;

	if (!netlink_capable(skb, CAP_SYS_ADMIN))
		return -EPERM;
	if (!a[FRACTOS_BLK_A_DEV_ID] == !a[FRACTOS_BLK_A_NAME]) {
		NL_SET_ERR_MSG(info->extack,
			       "exactly one of DEV_ID and NAME is needed");
		return -EINVAL;
	}
	if (a[FRACTOS_BLK_A_DEV_ID])
		return fblk_detach(nla_get_u32(a[FRACTOS_BLK_A_DEV_ID]), NULL);
	return fblk_detach(0, nla_data(a[FRACTOS_BLK_A_NAME]));
}

static int fblk_nl_fill_stats(struct sk_buff *skb, struct fblk_dev *dev)
{
	struct nlattr *nest = nla_nest_start(skb, FRACTOS_BLK_A_STATS);
	int i;

	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < FBLK_NSTATS; i++)
		if (nla_put_u64_64bit(skb, FRACTOS_BLK_STAT_READS + i,
				      atomic64_read(&dev->stats[i]),
				      FRACTOS_BLK_STAT_UNSPEC)) {
			nla_nest_cancel(skb, nest);
			return -EMSGSIZE;
		}
	nla_nest_end(skb, nest);
	return 0;
}

/*
 * One message of device @dev: its attributes, then its volumes from id
 * *@vid on while they fit.  dev->lock held.  Returns 0 when every volume
 * went in, 1 when the message ended early (*@vid: the next volume),
 * -EMSGSIZE when not even the device fits.
 */
static int fblk_nl_fill_dev(struct sk_buff *skb, struct netlink_callback *cb,
			    struct fblk_dev *dev, unsigned long *vid)
{
	struct fblk_vol *v;
	void *hdr;

	hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			  &fblk_genl_family, NLM_F_MULTI, FRACTOS_BLK_CMD_LIST);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(skb, FRACTOS_BLK_A_DEV_ID, dev->id) ||
	    nla_put_string(skb, FRACTOS_BLK_A_PATH, dev->path) ||
	    nla_put_string(skb, FRACTOS_BLK_A_NAME, dev->name) ||
	    nla_put_u32(skb, FRACTOS_BLK_A_UID,
			from_kuid_munged(current_user_ns(), dev->uid)) ||
	    nla_put_u64_64bit(skb, FRACTOS_BLK_A_SIZE, dev->size,
			      FRACTOS_BLK_A_PAD) ||
	    nla_put_u32(skb, FRACTOS_BLK_A_BLOCK_SIZE, dev->lbs) ||
	    nla_put_u32(skb, FRACTOS_BLK_A_VOLUMES,
			le32_to_cpu(dev->label->nvols)) ||
	    nla_put_u64_64bit(skb, FRACTOS_BLK_A_FREE, fblk_free_bytes(dev),
			      FRACTOS_BLK_A_PAD) ||
	    nla_put_u32(skb, FRACTOS_BLK_A_INFLIGHT,
			atomic_read(&dev->inflight)) ||
	    fblk_nl_fill_stats(skb, dev)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	xa_for_each_start(&dev->vols, *vid, v, *vid) {
		struct nlattr *nest = nla_nest_start(skb, FRACTOS_BLK_A_VOLUME);

		if (!nest ||
		    nla_put_u64_64bit(skb, FRACTOS_BLK_A_VOL_ID, v->id,
				      FRACTOS_BLK_A_PAD) ||
		    nla_put_u64_64bit(skb, FRACTOS_BLK_A_VOL_START, v->start,
				      FRACTOS_BLK_A_PAD) ||
		    nla_put_u64_64bit(skb, FRACTOS_BLK_A_VOL_SIZE, v->size,
				      FRACTOS_BLK_A_PAD) ||
		    nla_put_u32(skb, FRACTOS_BLK_A_VOL_INFLIGHT,
				atomic_read(&v->inflight))) {
			/* The rest goes in the next message. */
			if (nest)
				nla_nest_cancel(skb, nest);
			genlmsg_end(skb, hdr);
			return 1;
		}
		nla_nest_end(skb, nest);
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/*
 * cb->args[0]: the id of the device to dump next; cb->args[1]: the id of
 * its volume to go on from (a device with many volumes takes several
 * messages, each with the device's attributes; userspace merges them).
 */
static int fblk_nl_list(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct fblk_dev *dev;
	int ret = 0;

	mutex_lock(&fblk_devs_lock);
	list_for_each_entry(dev, &fblk_devs, link) {
		unsigned long vid = cb->args[1];

		if (dev->id < cb->args[0])
			continue;
		mutex_lock(&dev->lock);
		ret = fblk_nl_fill_dev(skb, cb, dev, &vid);
		mutex_unlock(&dev->lock);
		if (ret) {
			cb->args[0] = dev->id;
			cb->args[1] = vid;
			break;
		}
		cb->args[0] = dev->id + 1;
		cb->args[1] = 0;
	}
	mutex_unlock(&fblk_devs_lock);
	/* Not even one device in an empty skb: it cannot be dumped. */
	if (ret < 0 && !skb->len)
		return ret;
	return skb->len;
}

static const struct genl_small_ops fblk_nl_ops[] = {
	{
		.cmd	= FRACTOS_BLK_CMD_ATTACH,
		.doit	= fblk_nl_attach,
		.flags	= GENL_ADMIN_PERM,
	},
	{
		.cmd	= FRACTOS_BLK_CMD_DETACH,
		.doit	= fblk_nl_detach,
		.flags	= GENL_ADMIN_PERM,
	},
	{
		.cmd	= FRACTOS_BLK_CMD_LIST,
		.dumpit	= fblk_nl_list,
	},
};

static struct genl_family fblk_genl_family __ro_after_init = {
	.name		= FRACTOS_BLK_GENL_NAME,
	.version	= FRACTOS_BLK_GENL_VERSION,
	.maxattr	= FRACTOS_BLK_A_MAX,
	.policy		= fblk_nl_policy,
	/* ATTACH and DETACH sleep on devices. */
	.parallel_ops	= true,
	.module		= THIS_MODULE,
	.small_ops	= fblk_nl_ops,
	.n_small_ops	= ARRAY_SIZE(fblk_nl_ops),
};

int fblk_genl_init(void)
{
	return genl_register_family(&fblk_genl_family);
}

void fblk_genl_exit(void)
{
	genl_unregister_family(&fblk_genl_family);
}
