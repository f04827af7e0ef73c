// SPDX-License-Identifier: GPL-2.0
/*
 * fosfuzz meta-ops: what is not an ioctl.  Open, close and dup() spaces;
 * close capability fds; pass capability and space fds over SCM_RIGHTS to
 * a peer process, which imports or adopts them and runs ops of its own;
 * fork children that share the spaces and run a few ops, SIGKILLed at a
 * random point or left to finish; SIGKILL a child or the peer; unmap and
 * map again memory under live Memories; poll a space.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/fractos.h>
#include "fuzz.h"
#include "fz_int.h"

static void send_fd(struct fz_state *st, int fd, uint64_t seed)
{
	char ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &seed, .iov_len = sizeof(seed) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	struct cmsghdr *cm;

	memset(ctl, 0, sizeof(ctl));
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	if (fd < 0) {
		mh.msg_control = NULL;
		mh.msg_controllen = 0;
	}
	sendmsg(st->sock, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
}

/*
 * The peer: receives fds over SCM_RIGHTS with a seed, imports capability
 * fds into its own space (or adopts a space fd) and runs a few ops on
 * them.  Exits when the socket closes.
 */
static void peer_main(struct fz_state *st, int sock)
{
	for (;;) {
		char ctl[CMSG_SPACE(sizeof(int))];
		uint64_t seed;
		struct iovec iov = { .iov_base = &seed, .iov_len = sizeof(seed) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = ctl, .msg_controllen = sizeof(ctl) };
		struct cmsghdr *cm;
		struct fractos_space_info si = { 0 };
		struct fractos_cap_import im = { 0 };
		struct rng r;
		int fd = -1, k, n;

		if (recvmsg(sock, &mh, MSG_CMSG_CLOEXEC) <= 0)
			_exit(0);
		cm = CMSG_FIRSTHDR(&mh);
		if (cm && cm->cmsg_type == SCM_RIGHTS)
			memcpy(&fd, CMSG_DATA(cm), sizeof(int));
		r.s = seed;
		if (fd >= 0 && !ioctl(fd, FRACTOS_IOC_SPACE_INFO, &si)) {
			k = below(&r, FZ_NSP);
			if (st->sp[k] >= 0)
				close(st->sp[k]);
			st->sp[k] = fd;
			fz_sp_reset(st, k);
		} else if (fd >= 0) {
			im.fd = fd;
			if (st->sp[0] >= 0 && !ioctl(st->sp[0], FRACTOS_IOC_CAP_IMPORT, &im))
				fz_cids_add(&st->any[0], im.cid);
			if (chance(&r, 50))
				close(fd);
			else
				fz_capfd_keep(st, &r, fd);
		}
		n = 1 + below(&r, 8);
		for (k = 0; k < n; k++)
			fz_run_op(st, rn(&r));
	}
}

static void spawn_peer(struct fz_state *st)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return;
	pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return;
	}
	if (!pid) {
		close(sv[0]);
		if (st->ring_ok)
			io_uring_queue_exit(&st->ring);
		st->ring_ok = 0;
		st->is_child = 1;
		st->who = "peer";
		st->sock = -1;
		st->peer = 0;
		memset(st->kids, 0, sizeof(st->kids));
		peer_main(st, sv[1]);
		_exit(0);
	}
	close(sv[1]);
	st->sock = sv[0];
	st->peer = pid;
}

static void kid_reap(struct fz_state *st, int i, int block)
{
	int status;

	if (st->kids[i] <= 0)
		return;
	if (waitpid(st->kids[i], &status, block ? 0 : WNOHANG) == st->kids[i]) {
		st->kids[i] = 0;
		if (WIFEXITED(status) && WEXITSTATUS(status) == FZ_EXIT_VIOLATION)
			fz_violation("a child saw a violation (above)");
	}
}

int fz_meta_op(struct fz_state *st, struct rng *r, unsigned int op, int s)
{
	int i, j, fd;

	switch (op) {
	case OP_RAW:
		return fz_raw_op(st, r, s);
	case OP_SPACE_OPEN:
		for (i = 0; i < FZ_NSP; i++)
			if (st->sp[i] < 0) {
				st->sp[i] = open(FRACTOS_DEVICE, O_RDWR | O_CLOEXEC);
				fz_sp_reset(st, i);
				break;
			}
		break;
	case OP_SPACE_CLOSE:
		i = below(r, FZ_NSP);
		if (st->sp[i] >= 0) {
			close(st->sp[i]);
			st->sp[i] = -1;
			fz_sp_reset(st, i);
		}
		break;
	case OP_SPACE_DUP:
		i = below(r, FZ_NSP);
		j = below(r, FZ_NSP);
		if (i != j && st->sp[i] >= 0) {
			fd = dup(st->sp[i]);
			if (fd < 0)
				break;
			if (st->sp[j] >= 0)
				close(st->sp[j]);
			st->sp[j] = fd;
			st->any[j] = st->any[i];
			st->mem[j] = st->mem[i];
			st->req[j] = st->req[i];
		}
		break;
	case OP_CAPFD_CLOSE:
		i = below(r, FZ_NCAPFD);
		if (st->capfd[i] >= 0) {
			close(st->capfd[i]);
			st->capfd[i] = -1;
		}
		break;
	case OP_SEND:
		if (st->is_child)
			break;
		if (st->sock < 0 && !st->peer)
			spawn_peer(st);
		if (st->sock < 0)
			break;
		fd = below(r, 4) ? st->capfd[below(r, FZ_NCAPFD)] : st->sp[s];
		send_fd(st, fd, rn(r));
		FZ_COUNT(sends);
		break;
	case OP_FORK: {
		pid_t pid;
		int n = 1 + below(r, 24);
		uint64_t cseed = rn(r);

		if (st->is_child)
			break;
		for (i = 0; i < FZ_NKIDS; i++)
			kid_reap(st, i, 0);
		for (i = 0; i < FZ_NKIDS && st->kids[i] > 0; i++)
			;
		if (i == FZ_NKIDS)
			break;
		fflush(NULL);
		pid = fork();
		if (pid < 0)
			break;
		if (!pid) {
			struct rng cr = { cseed };

			if (st->ring_ok)
				io_uring_queue_exit(&st->ring);
			st->ring_ok = 0;
			st->is_child = 1;
			st->who = "child";
			if (st->sock >= 0)
				close(st->sock);
			st->sock = -1;
			st->peer = 0;
			memset(st->kids, 0, sizeof(st->kids));
			for (j = 0; j < n; j++)
				fz_run_op(st, rn(&cr));
			_exit(0);
		}
		st->kids[i] = pid;
		FZ_COUNT(forks);
		/* Kill it at a random point, or let it run on. */
		if (chance(r, 50)) {
			usleep(below(r, 3000));
			kill(pid, SIGKILL);
			FZ_COUNT(kills);
		}
		break;
	}
	case OP_KILL:
		if (st->is_child)
			break;
		if (chance(r, 30) && st->peer > 0) {
			kill(st->peer, SIGKILL);
			FZ_COUNT(kills);
			waitpid(st->peer, NULL, 0);
			st->peer = 0;
			close(st->sock);
			st->sock = -1;
			break;
		}
		i = below(r, FZ_NKIDS);
		if (st->kids[i] > 0) {
			kill(st->kids[i], SIGKILL);
			FZ_COUNT(kills);
			kid_reap(st, i, 1);
		}
		break;
	case OP_REMAP: {
		/* Unmap part of the buffer under live Memories and map anew. */
		size_t off = below(r, FZ_BUF / 4096) * 4096;
		size_t len = (1 + below(r, 4)) * 4096;
		void *p;

		if (off + len > FZ_BUF)
			len = FZ_BUF - off;
		munmap(fz_buf_rw + off, len);
		p = mmap(fz_buf_rw + off, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		if (p == MAP_FAILED)
			fz_violation("remap failed");
		memset(p, (int)below(r, 256), len);
		break;
	}
	case OP_POLL: {
		struct pollfd pfd = { .fd = st->sp[s], .events = POLLIN };

		poll(&pfd, 1, 0);
		break;
	}
	}
	return 0;
}

/* The processes of a program's end: the peer exits on EOF, the children
 * are killed or waited for; a violation one of them saw is ours. */
void fz_procs_fini(struct fz_state *st)
{
	int i, status;

	if (st->sock >= 0)
		close(st->sock);
	st->sock = -1;
	if (st->peer > 0) {
		if (waitpid(st->peer, &status, 0) == st->peer &&
		    WIFEXITED(status) && WEXITSTATUS(status) == FZ_EXIT_VIOLATION)
			fz_violation("the peer saw a violation (above)");
	}
	for (i = 0; i < FZ_NKIDS; i++) {
		if (st->kids[i] > 0 && i % 2)
			kill(st->kids[i], SIGKILL);
		kid_reap(st, i, 1);
	}
}
