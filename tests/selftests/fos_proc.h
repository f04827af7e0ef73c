/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fractos selftests: helpers shared by the Request, monitor, chain,
 * concurrency and io_uring programs (thin ioctl wrappers, live-object
 * snapshots, SCM_RIGHTS helpers, process reaping).  Every helper is
 * static and marked unused: each program is one translation unit and
 * takes what it needs.
 */
#ifndef FRACTOS_SELFTEST_FOS_PROC_H
#define FRACTOS_SELFTEST_FOS_PROC_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/fractos.h>
#include "tap.h"

/* ---- small local helpers (static: every test program is standalone) ---- */

#define NONE		FRACTOS_CID_INVALID
#define LIVE_DIR	"/sys/class/misc/fractos/live/"
#define PARAM_DIR	"/sys/module/fractos/parameters/"
#define BADPTR		((uintptr_t)8)	/* never mapped */

static __attribute__((unused)) int dev_open(void)
{
	int fd = open(FRACTOS_DEVICE, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		tap_bail("open " FRACTOS_DEVICE);
	return fd;
}

static __attribute__((unused)) int req_new(int fd, __u32 base, __u64 tag, const void *imm,
		   __u32 imm_len, const __u32 *caps, __u32 ncaps, __u32 *cid)
{
	struct fractos_request_create a = {
		.base = base, .tag = tag,
		.imms = (uintptr_t)imm, .imm_len = imm_len,
		.ncaps = ncaps, .caps = (uintptr_t)caps,
	};
	int r = ioctl(fd, FRACTOS_IOC_REQUEST_CREATE, &a);

	if (!r && cid)
		*cid = a.cid;
	return r;
}

static __attribute__((unused)) int invoke(int fd, __u32 cid, __u32 flags, const void *imm,
		  __u32 imm_len, const __u32 *caps, __u32 ncaps)
{
	struct fractos_request_invoke a = {
		.cid = cid, .flags = flags,
		.imms = (uintptr_t)imm, .imm_len = imm_len,
		.ncaps = ncaps, .caps = (uintptr_t)caps,
	};

	return ioctl(fd, FRACTOS_IOC_REQUEST_INVOKE, &a);
}

/* A thread blocked in an INVOKE_WAIT of @cid; @rc and @err its result. */
struct waiter {
	int fd;
	__u32 cid;
	int rc, err;
};

static __attribute__((unused)) void *wait_invoke(void *p)
{
	struct waiter *w = p;

	w->rc = invoke(w->fd, w->cid, FRACTOS_INVOKE_WAIT, NULL, 0, NULL, 0);
	w->err = errno;
	return NULL;
}

struct msg {
	__u32 type;
	__u64 tag;
	__u32 imm_len;
	__u32 ncaps;
	__u8 imm[FRACTOS_REQ_MAX_IMM];
	__u32 caps[FRACTOS_REQ_MAX_CAPS];
};

static __attribute__((unused)) int recv_msg(int fd, __u32 flags, __u64 timeout_ns, struct msg *m)
{
	struct fractos_request_receive a = {
		.flags = flags, .timeout_ns = timeout_ns,
		.imms = (uintptr_t)m->imm, .imm_len = sizeof(m->imm),
		.caps = (uintptr_t)m->caps, .ncaps = FRACTOS_REQ_MAX_CAPS,
	};
	int r = ioctl(fd, FRACTOS_IOC_REQUEST_RECEIVE, &a);

	if (!r) {
		m->type = a.type;
		m->tag = a.tag;
		m->imm_len = a.imm_len;
		m->ncaps = a.ncaps;
	}
	return r;
}

/* Receive with a timeout in milliseconds. */
static __attribute__((unused)) int recv_ms(int fd, struct msg *m, int ms)
{
	return recv_msg(fd, FRACTOS_RECV_TIMEOUT, (__u64)ms * 1000000ULL, m);
}

static __attribute__((unused)) int mem_new(int fd, void *addr, __u64 len, __u32 perms, __u32 *cid)
{
	struct fractos_memory_create a = {
		.addr = (uintptr_t)addr, .len = len, .perms = perms,
	};
	int r = ioctl(fd, FRACTOS_IOC_MEMORY_CREATE, &a);

	if (!r && cid)
		*cid = a.cid;
	return r;
}

static __attribute__((unused)) int mem_diminish(int fd, __u32 cid, __u32 drop, __u64 off, __u64 len,
			__u32 *new_cid)
{
	struct fractos_memory_diminish a = {
		.cid = cid, .drop_perms = drop, .offset = off, .len = len,
	};
	int r = ioctl(fd, FRACTOS_IOC_MEMORY_DIMINISH, &a);

	if (!r && new_cid)
		*new_cid = a.new_cid;
	return r;
}

static __attribute__((unused)) int mem_copy(int fd, __u32 src, __u64 soff, __u32 dst, __u64 doff,
		    __u64 len)
{
	struct fractos_memory_copy a = {
		.src = src, .dst = dst, .src_offset = soff,
		.dst_offset = doff, .len = len,
	};

	return ioctl(fd, FRACTOS_IOC_MEMORY_COPY, &a);
}

/* CAP_REVOKE, CAP_CLOSE, CAP_DUP, CAP_CREATE_REVTREE */
static __attribute__((unused)) int cap_op(int fd, unsigned long cmd, __u32 cid, __u32 *new_cid)
{
	struct fractos_cap_arg a = { .cid = cid };
	int r = ioctl(fd, cmd, &a);

	if (!r && new_cid)
		*new_cid = a.new_cid;
	return r;
}

static __attribute__((unused)) int cap_revoke(int fd, __u32 cid)
{
	return cap_op(fd, FRACTOS_IOC_CAP_REVOKE, cid, NULL);
}

static __attribute__((unused)) int cap_close(int fd, __u32 cid)
{
	return cap_op(fd, FRACTOS_IOC_CAP_CLOSE, cid, NULL);
}

static __attribute__((unused)) int cap_info(int fd, __u32 cid, struct fractos_cap_info *info)
{
	memset(info, 0, sizeof(*info));
	info->cid = cid;
	return ioctl(fd, FRACTOS_IOC_CAP_INFO, info);
}

static __attribute__((unused)) int cap_revoked(int fd, __u32 cid)
{
	struct fractos_cap_info i;

	if (cap_info(fd, cid, &i))
		return -1;
	return !!(i.info_flags & FRACTOS_INFO_REVOKED);
}

static __attribute__((unused)) int cap_export(int fd, __u32 cid)
{
	struct fractos_cap_export a = { .cid = cid };

	if (ioctl(fd, FRACTOS_IOC_CAP_EXPORT, &a))
		return -1;
	return a.fd;
}

static __attribute__((unused)) int cap_import(int fd, int capfd, __u32 *cid)
{
	struct fractos_cap_import a = { .fd = capfd };
	int r = ioctl(fd, FRACTOS_IOC_CAP_IMPORT, &a);

	if (!r && cid)
		*cid = a.cid;
	return r;
}

/* Export @cid of @from and import it into @to, closing the fd. */
static __attribute__((unused)) int cap_move(int from, __u32 cid, int to, __u32 *out)
{
	int efd = cap_export(from, cid), r;

	if (efd < 0)
		return -1;
	r = cap_import(to, efd, out);
	close(efd);
	return r;
}

static __attribute__((unused)) int monitor(int fd, unsigned long cmd, __u32 cid, __u64 cookie)
{
	struct fractos_monitor a = { .cid = cid, .cookie = cookie };

	return ioctl(fd, cmd, &a);
}

static __attribute__((unused)) int space_ncaps(int fd)
{
	struct fractos_space_info a = { 0 };

	if (ioctl(fd, FRACTOS_IOC_SPACE_INFO, &a))
		return -1;
	return a.ncaps;
}

static __attribute__((unused)) long read_long(const char *path)
{
	char buf[64] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? strtol(buf, NULL, 10) : -1;
}

static __attribute__((unused)) int write_long(const char *path, long v)
{
	char buf[64];
	int fd = open(path, O_WRONLY | O_CLOEXEC), n, r;

	if (fd < 0)
		return -1;
	n = snprintf(buf, sizeof(buf), "%ld\n", v);
	r = write(fd, buf, n) == n ? 0 : -1;
	close(fd);
	return r;
}

static __attribute__((unused)) long live(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), LIVE_DIR "%s", name);
	return read_long(path);
}

static __attribute__((unused)) long param_get(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), PARAM_DIR "%s", name);
	return read_long(path);
}

static __attribute__((unused)) int param_set(const char *name, long v)
{
	char path[128];

	snprintf(path, sizeof(path), PARAM_DIR "%s", name);
	return write_long(path, v);
}

static const char *const live_names[] __attribute__((unused)) = {
	"spaces", "objects", "caps", "memories", "pinned_pages", "capfds",
	"requests", "messages", "monitors",
};
#define NLIVE (sizeof(live_names) / sizeof(live_names[0]))

struct snap {
	long v[NLIVE];
};

static __attribute__((unused)) void snap_take(struct snap *s)
{
	unsigned int i;

	for (i = 0; i < NLIVE; i++)
		s->v[i] = live(live_names[i]);
}

/*
 * Check that every live counter is back to @base, polling up to ~3 s for
 * deferred releases (io_uring ring teardown, exiting children).
 */
static __attribute__((unused)) int snap_check(const struct snap *base, const char *what)
{
	struct snap now;
	unsigned int i;
	int tries, ok = 0;

	for (tries = 0; tries < 60 && !ok; tries++) {
		if (tries)
			usleep(50000);
		snap_take(&now);
		ok = !memcmp(&now, base, sizeof(now));
	}
	tap_ok(ok, "%s: live counters back to baseline", what);
	for (i = 0; !ok && i < NLIVE; i++)
		if (now.v[i] != base->v[i])
			tap_diag("  %s: %ld, baseline %ld", live_names[i],
				 now.v[i], base->v[i]);
	return ok;
}

static __attribute__((unused)) int send_fd(int sock, int fd)
{
	char c = 'F';
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

	memset(&u, 0, sizeof(u));
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &mh, 0) == 1 ? 0 : -1;
}

static __attribute__((unused)) int recv_fd(int sock)
{
	char c;
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &mh, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&mh);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/* Send a capability of space @fd to the peer of @sock as an exported fd. */
static __attribute__((unused)) int send_cap(int sock, int fd, __u32 cid)
{
	int efd = cap_export(fd, cid), r;

	if (efd < 0)
		return -1;
	r = send_fd(sock, efd);
	close(efd);
	return r;
}

/* Receive a capability fd from @sock and import it into space @fd. */
static __attribute__((unused)) int recv_cap(int sock, int fd, __u32 *cid)
{
	int efd = recv_fd(sock), r;

	if (efd < 0)
		return -1;
	r = cap_import(fd, efd, cid);
	close(efd);
	return r;
}

static __attribute__((unused)) int xwrite(int fd, const void *buf, size_t len)
{
	return write(fd, buf, len) == (ssize_t)len ? 0 : -1;
}

static __attribute__((unused)) int xread(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);

		if (n <= 0)
			return -1;
		got += n;
	}
	return 0;
}

static __attribute__((unused)) double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Wait for a child, returning its exit status (or 128 + signal). */
static __attribute__((unused)) int reap(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static __attribute__((unused)) void kill_reap(pid_t pid)
{
	kill(pid, SIGKILL);
	reap(pid);
}

static __attribute__((unused)) void tap_start(void)
{
	printf("TAP version 13\n");
	fflush(stdout);
}

/* The plan goes last: the number of checks depends on the kernel. */
static __attribute__((unused)) int tap_end(void)
{
	printf("1..%d\n", tap_count);
	fflush(stdout);
	return tap_finish();
}

static __attribute__((unused)) void need_module(void)
{
	if (access(FRACTOS_DEVICE, R_OK | W_OK)) {
		printf("TAP version 13\n1..0 # SKIP " FRACTOS_DEVICE
		       " not available\n");
		exit(4);
	}
}

#endif /* FRACTOS_SELFTEST_FOS_PROC_H */
