// SPDX-License-Identifier: GPL-2.0
/*
 * fractos selftest: concurrency - invokers racing a revoke, several
 * receivers on one queue, invoker processes racing a provider kill -9,
 * monitor registration racing revocation, derive/invoke/close racing
 * revocation.  No crash, every result is success or EKEYREVOKED, message
 * counts add up.
 */
#define _GNU_SOURCE
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
	"requests", "messages",
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

/* ------------------------------------------------------------------ */

#define NINV	4
#define NRECV	4

struct inv_arg {
	int fd;
	__u32 cid;
	int id;
	long ok, revoked, other, after_revoked_ok;
	volatile int *stop;
};

/* Invoke until told to stop; after the first EKEYREVOKED every invoke
 * must fail the same way. */
static void *invoker(void *p)
{
	struct inv_arg *a = p;
	__u32 body[2] = { a->id, 0 };

	/* Until the revocation has been seen a few times (or a 30 s cap). */
	while (!__atomic_load_n(a->stop, __ATOMIC_ACQUIRE)) {
		int r = invoke(a->fd, a->cid, FRACTOS_INVOKE_WAIT, body,
			       sizeof(body), NULL, 0);

		if (!r) {
			if (a->revoked)
				a->after_revoked_ok++;
			__atomic_fetch_add(&a->ok, 1, __ATOMIC_RELEASE);
			body[1]++;
		} else if (errno == EKEYREVOKED) {
			__atomic_fetch_add(&a->revoked, 1, __ATOMIC_RELEASE);
			if (a->revoked > 20)
				break;
		} else {
			a->other++;
			break;
		}
	}
	return NULL;
}

struct rcv_arg {
	int fd;
	long got, bad;
	long *last;	/* per invoker: last sequence seen */
	volatile int *stop;
	long *seen;	/* optional: per-message id counter */
	long nseen;
	long *total;
	long want;
};

static void *receiver(void *p)
{
	struct rcv_arg *a = p;
	static __thread struct msg m;

	for (;;) {
		if (a->want && __atomic_load_n(a->total, __ATOMIC_ACQUIRE) >=
			       a->want)
			break;
		if (recv_ms(a->fd, &m, 200)) {
			if (errno != ETIMEDOUT && errno != EAGAIN) {
				a->bad++;
				break;
			}
			if (__atomic_load_n(a->stop, __ATOMIC_ACQUIRE))
				break;
			continue;
		}
		if (m.type != FRACTOS_MSG_REQUEST || m.imm_len != 8) {
			a->bad++;
			continue;
		}
		{
			__u32 body[2];

			memcpy(body, m.imm, 8);
			if (a->last) {
				if (body[0] >= NINV ||
				    (long)body[1] <= a->last[body[0]])
					a->bad++;
				else
					a->last[body[0]] = body[1];
			}
			if (a->seen) {
				long id = (long)body[0] * 100000 + body[1];

				if (id < 0 || id >= a->nseen)
					a->bad++;
				else
					__atomic_fetch_add(&a->seen[id], 1,
							   __ATOMIC_RELAXED);
			}
		}
		a->got++;
		if (a->total)
			__atomic_fetch_add(a->total, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

/*
 * Several threads invoke (each its own derived Request of R) while another
 * thread revokes R; one thread receives.
 */
static void test_invoke_vs_revoke(void)
{
	int p = dev_open(), c = dev_open(), i, j, ok;
	struct inv_arg ia[NINV];
	struct rcv_arg ra = { 0 };
	long last[NINV], total_ok = 0, bad_after = 0, other = 0;
	volatile int stop_inv = 0, stop_rcv = 0;
	pthread_t ti[NINV], tr;
	__u32 r, rc;
	struct msg *m = malloc(sizeof(*m));

	req_new(p, NONE, 0x1, NULL, 0, NULL, 0, &r);
	cap_move(p, r, c, &rc);
	for (i = 0; i < NINV; i++) {
		memset(&ia[i], 0, sizeof(ia[i]));
		ia[i].fd = c;
		ia[i].id = i;
		ia[i].stop = &stop_inv;
		if (req_new(c, rc, 0, NULL, 0, NULL, 0, &ia[i].cid))
			ia[i].cid = rc;
		last[i] = -1;
	}
	ra.fd = p;
	ra.last = last;
	ra.stop = &stop_rcv;
	pthread_create(&tr, NULL, receiver, &ra);
	for (i = 0; i < NINV; i++)
		pthread_create(&ti[i], NULL, invoker, &ia[i]);
	/* Revoke once every invoker got some invocations through. */
	for (j = 0; j < 600; j++) {
		for (ok = 1, i = 0; i < NINV; i++)
			ok &= __atomic_load_n(&ia[i].ok, __ATOMIC_ACQUIRE) >= 10;
		if (ok)
			break;
		usleep(50000);
	}
	tap_errno(cap_revoke(c, rc), 0, "revoke: the holder revokes R mid-flight");
	for (j = 0; j < 600; j++) {
		for (ok = 1, i = 0; i < NINV; i++)
			ok &= __atomic_load_n(&ia[i].revoked, __ATOMIC_ACQUIRE) > 20 ||
			      ia[i].other;
		if (ok)
			break;
		usleep(50000);
	}
	__atomic_store_n(&stop_inv, 1, __ATOMIC_RELEASE);
	for (i = 0; i < NINV; i++) {
		pthread_join(ti[i], NULL);
		total_ok += ia[i].ok;
		bad_after += ia[i].after_revoked_ok;
		other += ia[i].other;
	}
	__atomic_store_n(&stop_rcv, 1, __ATOMIC_RELEASE);
	pthread_join(tr, NULL);
	/* Whatever the receiver left is still queued. */
	while (!recv_msg(p, FRACTOS_RECV_NONBLOCK, 0, m))
		ra.got++;
	tap_eq(other, 0, "revoke: every invoke succeeded or failed EKEYREVOKED");
	ok = 1;
	for (i = 0; i < NINV; i++)
		ok &= ia[i].revoked > 0;
	tap_ok(ok, "revoke: every invoker saw the revocation");
	tap_eq(bad_after, 0, "revoke: no invoke succeeded after one failed");
	tap_ok(total_ok > 0, "revoke: %ld invokes succeeded before", total_ok);
	tap_eq(ra.got, total_ok, "revoke: messages received == invokes succeeded");
	tap_eq(ra.bad, 0, "revoke: per-invoker FIFO order, no corruption");
	for (i = 0; i < NINV; i++)
		cap_close(c, ia[i].cid);
	cap_close(c, rc);
	close(c);
	close(p);
	free(m);
}

/* Several threads receive from one queue: each message exactly once. */
static void test_many_receivers(void)
{
	enum { PER = 60 };
	int p = dev_open(), i, j, ok;
	struct rcv_arg ra[NRECV];
	long *seen = calloc(NINV * 100000, sizeof(long)), total = 0, sum = 0;
	volatile int stop = 0;
	pthread_t tr[NRECV];
	__u32 r, body[2];

	req_new(p, NONE, 0x2, NULL, 0, NULL, 0, &r);
	for (i = 0; i < NRECV; i++) {
		memset(&ra[i], 0, sizeof(ra[i]));
		ra[i].fd = p;
		ra[i].stop = &stop;
		ra[i].seen = seen;
		ra[i].nseen = NINV * 100000;
		ra[i].total = &total;
		ra[i].want = NINV * PER;
		pthread_create(&tr[i], NULL, receiver, &ra[i]);
	}
	ok = 1;
	for (j = 0; j < PER; j++)
		for (i = 0; i < NINV; i++) {
			body[0] = i;
			body[1] = j;
			ok &= !invoke(p, r, FRACTOS_INVOKE_WAIT, body, 8, NULL,
				      0);
		}
	tap_ok(ok, "receivers: %d messages sent", NINV * PER);
	for (i = 0; i < 100 && __atomic_load_n(&total, __ATOMIC_ACQUIRE) <
				       NINV * PER; i++)
		usleep(50000);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	ok = 1;
	for (i = 0; i < NRECV; i++) {
		pthread_join(tr[i], NULL);
		sum += ra[i].got;
		ok &= !ra[i].bad;
	}
	tap_ok(ok, "receivers: no receive error");
	tap_eq(sum, NINV * PER, "receivers: all received");
	ok = 1;
	for (i = 0; i < NINV; i++)
		for (j = 0; j < PER; j++)
			ok &= seen[i * 100000 + j] == 1;
	tap_ok(ok, "receivers: each message exactly once");
	tap_errno(recv_msg(p, FRACTOS_RECV_NONBLOCK, 0,
			   &(struct msg){ 0 }), EAGAIN,
		  "receivers: queue empty");
	free(seen);
	close(p);
}

/*
 * Invokers in several processes while the provider (another process) is
 * killed -9: every invoke succeeds or fails EKEYREVOKED, never hangs.
 */
static void test_kill_provider(void)
{
	enum { NPROC = 3 };
	pid_t prov, inv[NPROC];
	int sv[2], pipes[NPROC][2], i, ok, efd, s = dev_open();
	long res[NPROC][3];
	__u32 r;

	socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);
	prov = fork();
	if (!prov) {
		int q = dev_open();
		__u32 cid;
		static struct msg m;

		close(sv[0]);
		if (req_new(q, NONE, 0x3, NULL, 0, NULL, 0, &cid) ||
		    send_cap(sv[1], q, cid))
			_exit(2);
		for (;;)	/* a slow provider: the queue fills up */
			if (!recv_ms(q, &m, 1000))
				usleep(1000);
	}
	close(sv[1]);
	recv_cap(sv[0], s, &r);
	efd = cap_export(s, r);
	for (i = 0; i < NPROC; i++) {
		pipe2(pipes[i], O_CLOEXEC);
		inv[i] = fork();
		if (!inv[i]) {
			int q = dev_open();
			long out[3] = { 0, 0, 0 };	/* ok, revoked, other */
			__u32 c;
			int k;

			if (cap_import(q, efd, &c))
				_exit(2);
			double t_end = now_ms() + 30000;

			for (k = 0; now_ms() < t_end; k++) {
				int rr = invoke(q, c, i == 0 ?
						FRACTOS_INVOKE_WAIT : 0,
						&k, 4, NULL, 0);

				if (!rr) {
					if (out[1])
						out[2]++;
					out[0]++;
				} else if (errno == EKEYREVOKED) {
					if (++out[1] > 20)
						break;
				} else if (errno != EAGAIN) {
					out[2]++;
					break;
				}
			}
			xwrite(pipes[i][1], out, sizeof(out));
			_exit(0);
		}
		close(pipes[i][1]);
	}
	close(efd);
	usleep(400000);
	kill_reap(prov);
	ok = 1;
	for (i = 0; i < NPROC; i++) {
		ok &= !xread(pipes[i][0], res[i], sizeof(res[i]));
		ok &= reap(inv[i]) == 0;
		close(pipes[i][0]);
	}
	tap_ok(ok, "kill provider: every invoker process finished");
	ok = 1;
	for (i = 0; i < NPROC; i++) {
		ok &= res[i][1] > 0 && res[i][2] == 0;
		if (res[i][2] || !res[i][1])
			tap_diag("  invoker %d: ok %ld revoked %ld other %ld", i,
				 res[i][0], res[i][1], res[i][2]);
	}
	tap_ok(ok, "kill provider: only success, then only EKEYREVOKED");
	tap_errno(invoke(s, r, 0, NULL, 0, NULL, 0), EKEYREVOKED,
		  "kill provider: EKEYREVOKED for us too");
	cap_close(s, r);
	close(sv[0]);
	close(s);
}

/* Monitors registered while the object is revoked: each fires once. */
struct mon_arg {
	int fd;
	__u32 cid;
	int id;
	long registered;
	volatile int *stop;
};

static void *registrar(void *p)
{
	struct mon_arg *a = p;

	while (!__atomic_load_n(a->stop, __ATOMIC_ACQUIRE) &&
	       a->registered < 2000) {
		if (monitor(a->fd, FRACTOS_IOC_MONITOR_RECEIVE, a->cid,
			    ((__u64)a->id << 32) | a->registered))
			break;
		__atomic_fetch_add(&a->registered, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void test_monitor_race(void)
{
	int w = dev_open(), o = dev_open(), i, ok, n;
	struct mon_arg ma[NINV];
	volatile int stop = 0;
	pthread_t t[NINV];
	static char buf[64];
	static long seen[NINV][2000];
	long total = 0, events = 0, dup = 0;
	__u32 m = NONE, mc = NONE;
	struct msg *msg = malloc(sizeof(*msg));

	mem_new(o, buf, sizeof(buf), FRACTOS_PERM_ALL, &m);
	cap_move(o, m, w, &mc);
	for (i = 0; i < NINV; i++) {
		ma[i] = (struct mon_arg){ .fd = w, .cid = mc, .id = i,
					  .stop = &stop };
		pthread_create(&t[i], NULL, registrar, &ma[i]);
	}
	for (n = 0; n < 600; n++) {
		for (ok = 1, i = 0; i < NINV; i++)
			ok &= __atomic_load_n(&ma[i].registered,
					      __ATOMIC_ACQUIRE) > 0;
		if (ok)
			break;
		usleep(10000);
	}
	tap_errno(cap_revoke(o, m), 0, "monrace: owner revokes while monitors are registered");
	usleep(20000);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < NINV; i++) {
		pthread_join(t[i], NULL);
		total += ma[i].registered;
	}
	n = 0;
	while (!recv_msg(w, FRACTOS_RECV_NONBLOCK, 0, msg)) {
		unsigned int id = msg->tag >> 32, k = (__u32)msg->tag;

		n++;
		if (msg->type != FRACTOS_MSG_MONITOR_RECEIVE || id >= NINV ||
		    k >= 2000 || seen[id][k]++)
			dup++;
		else
			events++;
	}
	tap_ok(total > 0, "monrace: %ld registrations", total);
	tap_eq(events, total, "monrace: one event per registration");
	tap_eq(dup, 0, "monrace: no duplicate or foreign event");
	ok = 1;
	for (i = 0; i < NINV; i++)
		ok &= ma[i].registered > 0;
	tap_ok(ok, "monrace: every registrar registered before the revoke");
	cap_close(w, mc);
	cap_close(o, m);
	close(o);
	close(w);
	free(msg);
}

/* Derive, invoke and close from threads while the base is revoked. */
struct der_arg {
	int fd;
	__u32 base;
	long ok, revoked, other;
};

static void *deriver(void *p)
{
	struct der_arg *a = p;
	int k;

	for (k = 0; k < 400; k++) {
		__u32 d;

		if (req_new(a->fd, a->base, 0, &k, 4, NULL, 0, &d)) {
			if (errno == EKEYREVOKED)
				a->revoked++;
			else
				a->other++;
			continue;
		}
		if (invoke(a->fd, d, 0, NULL, 0, NULL, 0)) {
			if (errno == EKEYREVOKED)
				a->revoked++;
			else if (errno != EAGAIN)
				a->other++;
		} else {
			a->ok++;
		}
		if (cap_close(a->fd, d))
			a->other++;
	}
	return NULL;
}

static void test_derive_race(void)
{
	int p = dev_open(), c = dev_open(), i;
	struct der_arg da[NINV];
	pthread_t t[NINV];
	long ok = 0, other = 0, got = 0;
	__u32 r, rc;
	struct msg *m = malloc(sizeof(*m));

	req_new(p, NONE, 0x4, NULL, 0, NULL, 0, &r);
	cap_move(p, r, c, &rc);
	for (i = 0; i < NINV; i++) {
		da[i] = (struct der_arg){ .fd = c, .base = rc };
		pthread_create(&t[i], NULL, deriver, &da[i]);
	}
	usleep(100000);
	cap_revoke(p, r);
	for (i = 0; i < NINV; i++) {
		pthread_join(t[i], NULL);
		ok += da[i].ok;
		other += da[i].other;
	}
	while (!recv_msg(p, FRACTOS_RECV_NONBLOCK, 0, m))
		got++;
	tap_eq(other, 0, "derive race: only EKEYREVOKED (or EAGAIN) failures");
	tap_eq(got, ok, "derive race: messages == successful invokes (%ld)", ok);
	tap_eq(space_ncaps(c), 1, "derive race: every derived cid closed");
	cap_close(c, rc);
	close(c);
	close(p);
	free(m);
}

int main(void)
{
	struct snap base;

	need_module();
	tap_start();
	snap_take(&base);

	test_invoke_vs_revoke();
	test_many_receivers();
	test_kill_provider();
	test_monitor_race();
	test_derive_race();

	snap_check(&base, "concurrency");
	return tap_end();
}
