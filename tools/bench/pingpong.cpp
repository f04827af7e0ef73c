// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fractos-bench's pingpong group: a round trip between two processes,
 * fractos invoke/receive vs a pipe and an eventfd; and the peer process
 * (pingpong_child, Peer in fabric.cpp) with its control socket helpers.
 */
#include "harness.hpp"

#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fbench {

/* The tag of the ping-pong peer's service Request (pingpong_child()). */
constexpr uint64_t TAG_SERVICE = 0x5e41ULL;

/* ---- group: ping-pong between two processes ------------------------------ */

constexpr uint64_t EFD_PING = 1, EFD_QUIT = 2;

pid_t child_pid;

void on_sigchld(int)
{
	int st;

	if (waitpid(child_pid, &st, WNOHANG) == child_pid) {
		static const char m[] =
			"fractos-bench: ping-pong peer process died\n";
		(void)!write(STDERR_FILENO, m, sizeof(m) - 1);
		_exit(1);
	}
}

void send_byte(int sock, char c, int fd)
{
	struct msghdr mh {};
	struct iovec iov = {&c, 1};
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u {};

	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (fd >= 0) {
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof(u.buf);
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	ssize_t n;
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	check_sys(n, "sendmsg (control socket)");
}

char recv_byte(int sock, int *fd)
{
	char c = 0;
	struct msghdr mh {};
	struct iovec iov = {&c, 1};
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u {};

	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = u.buf;
	mh.msg_controllen = sizeof(u.buf);
	ssize_t n;
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	check_sys(n, "recvmsg (control socket)");
	if (n == 0)
		die("control socket: peer closed");
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
		int got;

		memcpy(&got, CMSG_DATA(cm), sizeof(int));
		if (fd)
			*fd = got;
		else
			close(got);
	} else if (fd) {
		die("control socket: expected a file descriptor");
	}
	return c;
}

namespace {

void rw8(bool wr, int fd, uint64_t *v, const char *what)
{
	ssize_t n;

	do
		n = wr ? write(fd, v, 8) : read(fd, v, 8);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		die_err(what, errno);
	if (n != 8)
		die("%s: short %s (%zd bytes)", what, wr ? "write" : "read", n);
}

} // namespace

/*
 * -a same|split: the CPUs of the two processes of a pair, from the ones
 * this process may use (saved in @old_mask, to be restored afterwards).
 */
void place_pair(PingFds &f, cpu_set_t &old_mask)
{
	check_sys(sched_getaffinity(0, sizeof(old_mask), &old_mask),
		  "sched_getaffinity");
	if (opt.affinity != "none") {
		int cpus[2] = {-1, -1}, n = 0;

		for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
			if (CPU_ISSET(c, &old_mask))
				cpus[n++] = c;
		if (opt.affinity == "split" && n < 2)
			die("-a split: needs two CPUs, this process may use %d", n);
		f.cpu_parent = cpus[0];
		f.cpu_child = opt.affinity == "split" ? cpus[1] : cpus[0];
	}
}

void pin(int cpu, const char *who)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0)
		die_err(std::string("sched_setaffinity (") + who + ")", errno);
}

/* The service side; runs in the child and never returns. */
[[noreturn]] void pingpong_child(const PingFds &f)
{
	prog = "fractos-bench (peer)";
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		die_err("prctl(PR_SET_PDEATHSIG)", errno);
	if (getppid() == 1)
		_exit(1);
	pin(f.cpu_child, "peer");
	int ctl = f.ctl[1];

	int sp = space_open();
	uint32_t service = request_create(sp, TAG_SERVICE);
	struct fractos_cap_export ex {};
	ex.cid = service;
	ex.flags = FRACTOS_EXPORT_CLOEXEC;
	fos(sp, FRACTOS_IOC_CAP_EXPORT, &ex);
	send_byte(ctl, 'S', ex.fd);
	check_sys(close(ex.fd), "close exported fd");

	/* The client's first invocation carries its reply Request. */
	uint32_t reply;
	if (receive(sp, 0, TAG_SERVICE, &reply, 1) != HELLO)
		die("ping-pong setup: bad hello");
	uint64_t v = READY;
	invoke(sp, reply, &v);

	for (;;) {
		char c = recv_byte(ctl);

		if (c == 'F' || c == 'N') {
			/* N: the replies want no answer (FRACTOS_INVOKE_NOACK) */
			uint32_t fl = c == 'N' ? FRACTOS_INVOKE_NOACK : 0;

			do {
				v = receive(sp, 0, TAG_SERVICE);
				invoke(sp, reply, &v, nullptr, 0, fl);
			} while (v != QUIT);
		} else if (c == 'P') {
			do {
				rw8(false, f.p2c[0], &v, "pipe read (peer)");
				rw8(true, f.c2p[1], &v, "pipe write (peer)");
			} while (v != QUIT);
		} else if (c == 'E') {
			do {
				rw8(false, f.e2c, &v, "eventfd read (peer)");
				rw8(true, f.e2p, &v, "eventfd write (peer)");
			} while (v != EFD_QUIT);
		} else if (c == 'Q') {
			break;
		} else {
			die("control socket: unknown command %#x", c);
		}
	}
	cap_close(sp, reply);
	cap_close(sp, service);
	space_close(sp, 0, "ping-pong peer");
	send_byte(ctl, 'D');
	fflush(stdout);
	_exit(0);
}

void bench_pingpong()
{
	watchdog("pingpong");

	PingFds f;
	cpu_set_t old_mask;
	place_pair(f, old_mask);
	std::string title = "ping-pong round trip (2 processes";
	if (opt.affinity != "none")
		title += ", cpus " + std::to_string(f.cpu_parent) + "," +
			 std::to_string(f.cpu_child);
	print_header((title + ")").c_str());
	check_sys(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, f.ctl),
		  "socketpair");
	check_sys(pipe2(f.p2c, O_CLOEXEC), "pipe2");
	check_sys(pipe2(f.c2p, O_CLOEXEC), "pipe2");
	f.e2c = eventfd(0, EFD_CLOEXEC);
	check_sys(f.e2c, "eventfd");
	f.e2p = eventfd(0, EFD_CLOEXEC);
	check_sys(f.e2p, "eventfd");

	fflush(stdout);
	fflush(stderr);
	child_pid = fork();
	check_sys(child_pid, "fork");
	if (child_pid == 0)
		pingpong_child(f);
	pin(f.cpu_parent, "client");

	struct sigaction sa {};
	sa.sa_handler = on_sigchld;
	sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
	check_sys(sigaction(SIGCHLD, &sa, nullptr), "sigaction");

	int ctl = f.ctl[0];
	int sp = space_open();

	/* Import the service Request, introduce our reply Request. */
	int efd;
	if (recv_byte(ctl, &efd) != 'S')
		die("ping-pong setup: bad control message");
	struct fractos_cap_import im {};
	im.fd = efd;
	fos(sp, FRACTOS_IOC_CAP_IMPORT, &im);
	check_sys(close(efd), "close imported fd");
	uint32_t service = im.cid;
	uint32_t reply = request_create(sp, TAG_REPLY);
	uint64_t v = HELLO;
	invoke(sp, service, &v, &reply, 1);
	if (receive(sp, 0, TAG_REPLY) != READY)
		die("ping-pong setup: bad ready");

	/*
	 * Each mechanism's turn starts with a command to the peer, which
	 * then echoes on that mechanism until it sees the quit value.
	 */
	uint64_t seq = 0;
	measure("fractos invoke/receive rt", 1, [&] {
		uint64_t x = ++seq;

		invoke(sp, service, &x);
		if (__builtin_expect(receive(sp, 0, TAG_REPLY) != x, 0))
			die("fractos ping-pong: payload mismatch");
	}, [&] { send_byte(ctl, 'F'); }, [&] {
		uint64_t q = QUIT;

		invoke(sp, service, &q);
		if (receive(sp, 0, TAG_REPLY) != QUIT)
			die("fractos ping-pong: bad quit reply");
	});
	measure("pipe rt", 1, [&] {
		uint64_t x = ++seq, y;

		rw8(true, f.p2c[1], &x, "pipe write");
		rw8(false, f.c2p[0], &y, "pipe read");
		if (__builtin_expect(x != y, 0))
			die("pipe ping-pong: payload mismatch");
	}, [&] { send_byte(ctl, 'P'); }, [&] {
		uint64_t q = QUIT;

		rw8(true, f.p2c[1], &q, "pipe write");
		rw8(false, f.c2p[0], &q, "pipe read");
		if (q != QUIT)
			die("pipe ping-pong: bad quit reply");
	});
	measure("eventfd rt", 1, [&] {
		uint64_t x = EFD_PING;

		rw8(true, f.e2c, &x, "eventfd write");
		rw8(false, f.e2p, &x, "eventfd read");
		if (__builtin_expect(x != EFD_PING, 0))
			die("eventfd ping-pong: got %" PRIu64, x);
	}, [&] { send_byte(ctl, 'E'); }, [&] {
		uint64_t q = EFD_QUIT;

		rw8(true, f.e2c, &q, "eventfd write");
		rw8(false, f.e2p, &q, "eventfd read");
		if (q != EFD_QUIT)
			die("eventfd ping-pong: bad quit reply");
	});
	run_group();

	/* Tear down: our caps and space, then the peer's. */
	cap_close(sp, reply);
	cap_close(sp, service);
	space_close(sp, 0, "ping-pong");
	sa.sa_handler = SIG_DFL;
	check_sys(sigaction(SIGCHLD, &sa, nullptr), "sigaction");
	send_byte(ctl, 'Q');
	if (recv_byte(ctl) != 'D')
		die("ping-pong teardown: bad control message");
	int st;
	pid_t p;
	do
		p = waitpid(child_pid, &st, 0);
	while (p < 0 && errno == EINTR);
	check_sys(p, "waitpid");
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		die("ping-pong peer failed (status %#x)", st);
	for (int fd : {f.ctl[0], f.ctl[1], f.p2c[0], f.p2c[1], f.c2p[0],
		       f.c2p[1], f.e2c, f.e2p})
		check_sys(close(fd), "close");
	if (sched_setaffinity(0, sizeof(old_mask), &old_mask) != 0)
		die_err("sched_setaffinity (restore)", errno);
	watchdog(nullptr);
}

} // namespace fbench
