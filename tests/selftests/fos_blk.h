/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the block adaptor's tests (blk.c and caladan_blk.cpp here,
 * tests/multinode/blk_node.c):
 * load fractos_nvme.ko, talk to its "fractos_blk" generic netlink family,
 * and speak its Request protocol (uapi/linux/fractos_blk.h).  Include after
 * fos_util.h and fos_req.h; link with libnl-genl-3.0.
 */
#ifndef FRACTOS_FOS_BLK_H
#define FRACTOS_FOS_BLK_H

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <linux/fractos_blk.h>

#define FOS_BLK_MAX_DEVS	8
#define FOS_BLK_MAX_VOLS	64

struct fos_blk_vol {
	uint64_t id, start, size;
	uint32_t inflight;
};

struct fos_blk_dev {
	uint32_t id, uid, lbs, nvols, inflight;
	uint64_t size, free;
	char path[256], name[64];
	uint64_t stats[FRACTOS_BLK_STAT_MAX + 1];
	int nv, nvtotal;	/* volumes kept, volumes listed */
	struct fos_blk_vol vol[FOS_BLK_MAX_VOLS];
};

/* The replies to one request: ATTACH's DEV_ID, LIST's devices. */
struct fos_blk_reply {
	uint32_t dev_id;
	int n;
	struct fos_blk_dev dev[FOS_BLK_MAX_DEVS];
};

/* The module's path: beside fractos.ko's build ($FRACTOS_KO). */
static inline const char *fos_blk_ko(void)
{
	static char path[PATH_MAX];
	const char *ko = getenv("FRACTOS_KO");
	char buf[PATH_MAX];

	if (!ko)
		return NULL;
	snprintf(buf, sizeof(buf), "%s", ko);
	snprintf(path, sizeof(path), "%s/../adaptors/nvme/fractos_nvme.ko",
		 dirname(buf));
	return path;
}

/* 0 when fractos_nvme is loaded (loading it if needed). */
static inline int fos_blk_load(void)
{
	char cmd[PATH_MAX + 32];
	const char *ko = fos_blk_ko();

	if (!access("/sys/module/fractos_nvme", F_OK))
		return 0;
	if (!ko)
		return -1;
	snprintf(cmd, sizeof(cmd), "insmod %s", ko);
	return system(cmd) ? -1 : 0;
}

static inline int fos_blk_unload(void)
{
	return system("rmmod fractos_nvme") ? -1 : 0;
}

/* The first NVMe namespace, its driver loaded if needed; NULL if none. */
static inline const char *fos_blk_nvme(void)
{
	static const char *dev = "/dev/nvme0n1";
	int i;

	if (access(dev, F_OK)) {
		if (system("modprobe nvme 2>/dev/null"))
			return NULL;
		for (i = 0; i < 100 && access(dev, F_OK); i++)
			usleep(100000);
	}
	return access(dev, F_OK) ? NULL : dev;
}

/*
 * The tests' start: the NVMe namespace, blanked (an earlier run's label
 * gone), with fractos_nvme loaded.  NULL, and *@why, if it cannot be had.
 */
static inline const char *fos_blk_setup(const char **why)
{
	const char *nvme = fos_blk_nvme();

	if (!nvme) {
		*why = "no NVMe namespace: run with vm/run --nvme SIZE";
		return NULL;
	}
	if (fos_blk_load()) {
		*why = "insmod fractos_nvme.ko failed";
		return NULL;
	}
	if (system("dd if=/dev/zero of=/dev/nvme0n1 bs=64k count=1 oflag=direct status=none")) {
		*why = "dd to blank the device failed";
		return NULL;
	}
	return nvme;
}

/*
 * The netlink part (C only: fos_nl.h): define FOS_BLK_NO_NL before
 * including this header to leave it out (the C++ tests use fractctl).
 */
#ifndef FOS_BLK_NO_NL
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

static inline int fos_blk_nl_open(struct nl_sock **sk, int *family)
{
	*sk = nl_socket_alloc();
	if (!*sk || genl_connect(*sk)) {
		if (*sk)
			nl_socket_free(*sk);
		*sk = NULL;
		return -EIO;
	}
	*family = genl_ctrl_resolve(*sk, FRACTOS_BLK_GENL_NAME);
	if (*family < 0) {
		nl_socket_free(*sk);
		*sk = NULL;
		return -ENOENT;
	}
	return 0;
}

static inline void fos_blk_parse_dev(struct nlattr **tb, struct fos_blk_dev *d)
{
	struct nlattr *st[FRACTOS_BLK_STAT_MAX + 1];
	int i;

	fos_nl_get(d->id, tb[FRACTOS_BLK_A_DEV_ID], u32);
	fos_nl_get(d->uid, tb[FRACTOS_BLK_A_UID], u32);
	fos_nl_get(d->lbs, tb[FRACTOS_BLK_A_BLOCK_SIZE], u32);
	fos_nl_get(d->nvols, tb[FRACTOS_BLK_A_VOLUMES], u32);
	fos_nl_get(d->inflight, tb[FRACTOS_BLK_A_INFLIGHT], u32);
	fos_nl_get(d->size, tb[FRACTOS_BLK_A_SIZE], u64);
	fos_nl_get(d->free, tb[FRACTOS_BLK_A_FREE], u64);
	if (tb[FRACTOS_BLK_A_PATH])
		snprintf(d->path, sizeof(d->path), "%s",
			 nla_get_string(tb[FRACTOS_BLK_A_PATH]));
	if (tb[FRACTOS_BLK_A_NAME])
		snprintf(d->name, sizeof(d->name), "%s",
			 nla_get_string(tb[FRACTOS_BLK_A_NAME]));
	if (tb[FRACTOS_BLK_A_STATS] &&
	    !nla_parse_nested(st, FRACTOS_BLK_STAT_MAX, tb[FRACTOS_BLK_A_STATS],
			      NULL))
		for (i = 0; i <= FRACTOS_BLK_STAT_MAX; i++)
			if (st[i] && nla_len(st[i]) == 8)
				d->stats[i] = nla_get_u64(st[i]);
}

static inline int fos_blk_valid_cb(struct nl_msg *msg, void *arg)
{
	struct fos_blk_reply *r = arg;
	struct nlattr *tb[FRACTOS_BLK_A_MAX + 1], *a;
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct genlmsghdr *gh = nlmsg_data(nlh);
	struct fos_blk_dev *d;
	int rem;

	if (genlmsg_parse(nlh, 0, tb, FRACTOS_BLK_A_MAX, NULL))
		return NL_SKIP;
	if (gh->cmd == FRACTOS_BLK_CMD_ATTACH) {
		fos_nl_get(r->dev_id, tb[FRACTOS_BLK_A_DEV_ID], u32);
		return NL_OK;
	}
	d = NULL;
	/* A device with many volumes comes in several messages. */
	if (r->n && tb[FRACTOS_BLK_A_DEV_ID] &&
	    r->dev[r->n - 1].id == nla_get_u32(tb[FRACTOS_BLK_A_DEV_ID]))
		d = &r->dev[r->n - 1];
	if (!d) {
		if (r->n >= FOS_BLK_MAX_DEVS)
			return NL_OK;
		d = &r->dev[r->n++];
		fos_blk_parse_dev(tb, d);
	}
	nla_for_each_attr(a, genlmsg_attrdata(gh, 0), genlmsg_attrlen(gh, 0),
			  rem) {
		struct nlattr *vt[FRACTOS_BLK_A_MAX + 1];
		struct fos_blk_vol *v;

		if (nla_type(a) != FRACTOS_BLK_A_VOLUME ||
		    nla_parse_nested(vt, FRACTOS_BLK_A_MAX, a, NULL))
			continue;
		if (d->nv >= FOS_BLK_MAX_VOLS) {
			d->nvtotal++;
			continue;
		}
		v = &d->vol[d->nv++];
		d->nvtotal++;
		fos_nl_get(v->id, vt[FRACTOS_BLK_A_VOL_ID], u64);
		fos_nl_get(v->start, vt[FRACTOS_BLK_A_VOL_START], u64);
		fos_nl_get(v->size, vt[FRACTOS_BLK_A_VOL_SIZE], u64);
		fos_nl_get(v->inflight, vt[FRACTOS_BLK_A_VOL_INFLIGHT], u32);
	}
	return NL_OK;
}

/* Send @cmd with @attrs (a list ending with { 0 }): 0 or -errno. */
static inline int fos_blk_request(int cmd, int dump,
				  const struct fos_nl_attr *attrs,
				  struct fos_blk_reply *r)
{
	static struct fos_blk_reply dummy;
	struct nl_sock *sk;
	int err, family;

	err = fos_blk_nl_open(&sk, &family);
	if (err)
		return err;
	if (!r)
		r = &dummy;
	memset(r, 0, sizeof(*r));
	err = fos_nl_send(sk, family, FRACTOS_BLK_GENL_VERSION, cmd, dump, attrs,
			  fos_blk_valid_cb, r);
	nl_socket_free(sk);
	return err;
}

/* ATTACH: 0 and *@id, or -errno. */
static inline int fos_blk_attach(const char *path, const char *name,
				 uint32_t uid, int format, uint32_t *id)
{
	struct fos_nl_attr a[5] = {
		{ FRACTOS_BLK_A_PATH, (int)strlen(path) + 1, path },
		{ FRACTOS_BLK_A_NAME, (int)strlen(name) + 1, name },
		FOS_NL_A(FRACTOS_BLK_A_UID, uid),
	};
	struct fos_blk_reply r;
	int ret;

	if (format)
		a[3] = (struct fos_nl_attr){ FRACTOS_BLK_A_FORMAT, 0, NULL };
	ret = fos_blk_request(FRACTOS_BLK_CMD_ATTACH, 0, a, &r);
	if (!ret && id)
		*id = r.dev_id;
	return ret;
}

static inline int fos_blk_detach(uint32_t id)
{
	struct fos_nl_attr a[] = { FOS_NL_A(FRACTOS_BLK_A_DEV_ID, id), { 0 } };

	return fos_blk_request(FRACTOS_BLK_CMD_DETACH, 0, a, NULL);
}

/* Device @id from LIST into @d: 0, or -ENOENT. */
static inline int fos_blk_get(uint32_t id, struct fos_blk_dev *d)
{
	static struct fos_blk_reply r;
	int i, ret = fos_blk_request(FRACTOS_BLK_CMD_LIST, 1, NULL, &r);

	if (ret)
		return ret;
	for (i = 0; i < r.n; i++)
		if (r.dev[i].id == id) {
			*d = r.dev[i];
			return 0;
		}
	return -ENOENT;
}

#endif /* FOS_BLK_NO_NL */

#endif /* FRACTOS_FOS_BLK_H */
