/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Request helpers for the remote-invocation tests (remote.c here,
 * tests/multinode/remote_node.c): create, invoke, receive into a struct
 * msg, and compare two capabilities.  Include after fos_util.h.
 */
#ifndef FRACTOS_FOS_REQ_H
#define FRACTOS_FOS_REQ_H

/* How long receive() waits. */
static uint64_t fos_req_timeout_ns = 5000000000ULL;

static inline int req_create(int fd, uint32_t base, uint64_t tag, const void *imm,
		      uint32_t imm_len, const uint32_t *caps, uint32_t ncaps,
		      uint32_t *cid)
{
	struct fractos_request_create a = {
		.base = base, .tag = tag, .imms = (uintptr_t)imm,
		.imm_len = imm_len, .caps = (uintptr_t)caps, .ncaps = ncaps,
	};
	int ret = ioctl(fd, FRACTOS_IOC_REQUEST_CREATE, &a);

	if (!ret)
		*cid = a.cid;
	return ret;
}

static inline int invoke_flags(int fd, uint32_t cid, uint32_t flags,
				const void *imm, uint32_t imm_len,
				const uint32_t *caps, uint32_t ncaps)
{
	struct fractos_request_invoke a = {
		.cid = cid, .flags = flags, .imms = (uintptr_t)imm,
		.imm_len = imm_len, .caps = (uintptr_t)caps, .ncaps = ncaps,
	};

	return ioctl(fd, FRACTOS_IOC_REQUEST_INVOKE, &a);
}

static inline int invoke(int fd, uint32_t cid, const void *imm, uint32_t imm_len,
		  const uint32_t *caps, uint32_t ncaps)
{
	return invoke_flags(fd, cid, 0, imm, imm_len, caps, ncaps);
}

struct msg {
	uint32_t type, imm_len, ncaps;
	uint64_t tag;
	char imm[4096];
	uint32_t caps[32];
};

static inline int receive(int fd, struct msg *m)
{
	struct fractos_request_receive a = {
		.flags = FRACTOS_RECV_TIMEOUT, .timeout_ns = fos_req_timeout_ns,
		.imms = (uintptr_t)m->imm, .imm_len = sizeof(m->imm),
		.caps = (uintptr_t)m->caps, .ncaps = 32,
	};
	int ret = ioctl(fd, FRACTOS_IOC_REQUEST_RECEIVE, &a);

	if (!ret) {
		m->type = a.type;
		m->tag = a.tag;
		m->imm_len = a.imm_len;
		m->ncaps = a.ncaps;
	}
	return ret;
}

/*
 * A Request of @prov (tag @tag, immediates @imm or none) that @cli holds
 * through a capability fd, as a client on another node would.  0 or -1.
 */
static inline int client_request(int prov, int cli, uint64_t tag,
				 const char *imm, uint32_t *r, uint32_t *c)
{
	int capfd = -1, ret;

	ret = req_create(prov, FRACTOS_CID_INVALID, tag, imm,
			 imm ? strlen(imm) : 0, NULL, 0, r) ||
	      fos_export(prov, *r, 0, &capfd) || fos_import(cli, capfd, c);
	if (capfd >= 0)
		close(capfd);
	return ret ? -1 : 0;
}

/* Same object, same view, no remote flag. */
static inline int same_cap(int fd1, uint32_t c1, int fd2, uint32_t c2)
{
	struct fractos_cap_info a, b;

	if (fos_info(fd1, c1, &a) || fos_info(fd2, c2, &b))
		return 0;
	return a.type == b.type && a.perms == b.perms &&
	       a.offset == b.offset && a.len == b.len &&
	       a.oid.node == b.oid.node && a.oid.epoch == b.oid.epoch &&
	       a.oid.id == b.oid.id && !(b.info_flags & FRACTOS_INFO_REMOTE);
}

static inline void close_all(int fd, const struct msg *m)
{
	uint32_t i;

	for (i = 0; i < m->ncaps; i++)
		fos_close(fd, m->caps[i]);
}

#endif /* FRACTOS_FOS_REQ_H */
