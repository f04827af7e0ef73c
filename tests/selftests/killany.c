// SPDX-License-Identifier: GPL-2.0
/*
 * fractos selftest: kill-anywhere.  A provider and a client run a
 * continuation loop: the client invokes the provider's Request with a
 * continuation Request K and a view of its Memory; the provider copies
 * 256 KiB of its own Memory into that view (a third-party memory_copy)
 * and invokes K with the round number.  The client checks the bytes and
 * goes on.  Each iteration SIGKILLs the provider, the client, or both, at
 * a random point (0..40 ms in: during a pin, a copy, a receive, an
 * invoke, a close), then checks:
 *   - every process is gone within 5 s of its SIGKILL (nothing hangs
 *     unkillable in the module);
 *   - a surviving client learns of its provider's death (its monitor on
 *     the Request fires; invoking it fails with EKEYREVOKED), and a
 *     surviving provider keeps serving (it exits when its queue stays
 *     empty);
 *   - every live counter is back to where it was within 2 s.
 *
 * Usage: killany [-i ITERATIONS] [-s SEED]   (200 iterations by default)
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include "tap.h"
#include "fos_util.h"
#include "fos_req.h"

#define COPY	(256 * 1024UL)
#define TAG_P	0x9001
#define TAG_K	0x9002
#define MON_P	0x9003

static uint64_t rs;

static uint64_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

static int send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char b = 'R';
	struct iovec iov = { .iov_base = &b, .iov_len = 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &mh, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	char b;
	struct iovec iov = { .iov_base = &b, .iov_len = 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int fd = -1;

	if (recvmsg(sock, &mh, 0) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&mh);
	if (cm && cm->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/* The provider: serves until its queue stays empty for 1 s. */
static void provider(int sock)
{
	int sp = fos_open(), capfd;
	unsigned char *src = mmap(NULL, COPY, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint32_t mem, req;
	static struct msg m;

	if (sp < 0 || src == MAP_FAILED)
		_exit(10);
	fos_fill(src, COPY, 7);
	if (fos_mem_create(sp, src, COPY, FRACTOS_PERM_READ, &mem) ||
	    req_create(sp, FRACTOS_CID_INVALID, TAG_P, NULL, 0, &mem, 1, &req) ||
	    fos_export(sp, req, 0, &capfd) || send_fd(sock, capfd))
		_exit(11);
	close(capfd);
	fos_req_timeout_ns = 300000000ULL;
	for (;;) {
		uint32_t round;

		if (receive(sp, &m))
			_exit(errno == ETIMEDOUT ? 0 : 12);
		/* [own view, K, client's view] + the round as immediate. */
		if (m.tag != TAG_P || m.ncaps != 3 || m.imm_len != 4) {
			printf("# provider: type %u tag %#llx ncaps %u imm_len %u\n",
				m.type, (unsigned long long)m.tag, m.ncaps, m.imm_len);
			fflush(stdout);
			_exit(13);
		}
		memcpy(&round, m.imm, 4);
		if (fos_copy(sp, m.caps[0], 0, m.caps[2], 0, COPY, NULL))
			round = ~0U;	/* the client may be dying: say so */
		invoke(sp, m.caps[1], &round, 4, NULL, 0);
		close_all(sp, &m);
	}
}

/* The client: rounds until its provider is gone (then exits 0). */
static void client(int sock)
{
	int sp = fos_open(), capfd = recv_fd(sock);
	unsigned char *dst = mmap(NULL, COPY, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char *want = malloc(COPY);
	struct fractos_monitor mo = { .cookie = MON_P };
	uint32_t mem, k, req, caps[2], round;
	static struct msg m;

	if (sp < 0 || capfd < 0 || dst == MAP_FAILED || !want)
		_exit(20);
	fos_fill(want, COPY, 7);
	if (fos_import(sp, capfd, &req) ||
	    fos_mem_create(sp, dst, COPY, FRACTOS_PERM_ALL, &mem) ||
	    req_create(sp, FRACTOS_CID_INVALID, TAG_K, NULL, 0, NULL, 0, &k))
		_exit(21);
	close(capfd);
	mo.cid = req;
	if (ioctl(sp, FRACTOS_IOC_MONITOR_RECEIVE, &mo))
		_exit(22);
	caps[0] = k;
	caps[1] = mem;
	fos_req_timeout_ns = 3000000000ULL;
	for (round = 0;; round++) {
		if (invoke(sp, req, &round, 4, caps, 2))
			_exit(errno == EKEYREVOKED ? 0 : 23);
		if (receive(sp, &m))
			_exit(24);
		if (m.type == FRACTOS_MSG_MONITOR_RECEIVE && m.tag == MON_P)
			_exit(0);	/* the provider died */
		if (m.tag != TAG_K || m.imm_len != 4 ||
		    memcmp(m.imm, &round, 4) || memcmp(dst, want, COPY))
			_exit(25);
		memset(dst, 0, COPY);
		close_all(sp, &m);
	}
}

static void dump_stack_of(pid_t pid)
{
	char path[64], buf[2048];

	snprintf(path, sizeof(path), "/proc/%d/stack", pid);
	if (fos_read_text(path, buf, sizeof(buf)) >= 0)
		tap_diag("pid %d kernel stack:\n%s", pid, buf);
}

int main(int argc, char **argv)
{
	unsigned int iters = 200, i, hangs = 0, bad_exit = 0, leaks = 0,
		     kp = 0, kc = 0, kb = 0, learned = 0;
	struct fos_counts c0, now;
	double worst = 0;
	int c;

	rs = (uint64_t)time(NULL) | 1;
	while ((c = getopt(argc, argv, "i:s:")) != -1) {
		if (c == 'i')
			iters = strtoul(optarg, NULL, 0);
		else if (c == 's')
			rs = strtoull(optarg, NULL, 0) | 1;
		else
			return 2;
	}
	if (access("/sys/class/misc/fractos", F_OK)) {
		printf("1..0 # SKIP fractos.ko is not loaded\n");
		return 0;
	}
	tap_plan(4);
	tap_diag("seed %llu (killany -s %llu reproduces the kill schedule)",
		 (unsigned long long)rs, (unsigned long long)rs);
	fos_counts_read(&c0);
	for (i = 0; i < iters; i++) {
		int sv[2], who = rnd() % 3, sp, sc;
		unsigned int delay = rnd() % 40000;
		pid_t p, cl;
		double t0;

		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
			tap_bail("socketpair");
		p = fork();
		if (!p) {
			close(sv[1]);
			provider(sv[0]);
		}
		cl = fork();
		if (!cl) {
			close(sv[0]);
			client(sv[1]);
		}
		close(sv[0]);
		close(sv[1]);
		usleep(delay);
		t0 = fos_now();
		/* 0: the provider, 1: the client, 2: both. */
		if (who != 1) {
			kill(p, SIGKILL);
			kp += who == 0;
		}
		if (who != 0) {
			kill(cl, SIGKILL);
			kc += who == 1;
		}
		kb += who == 2;
		sp = fos_reap_within(p, who == 1 ? 10000 : 5000);
		sc = fos_reap_within(cl, who == 0 ? 10000 : 5000);
		if (sp == -1 || sc == -1) {
			hangs++;
			if (sp == -1)
				dump_stack_of(p);
			if (sc == -1)
				dump_stack_of(cl);
			kill(p, SIGKILL);
			kill(cl, SIGKILL);
			waitpid(p, NULL, 0);
			waitpid(cl, NULL, 0);
			continue;
		}
		/*
		 * A survivor exits 0 by itself: the client once it learns its
		 * provider died, the provider once its queue stays empty.
		 * (Killed before it got going, it may have exited early with
		 * its setup failed against the dead partner: 11/20/21 are
		 * then fine too.)
		 */
		if (who == 0) {
			if (WIFEXITED(sc) && !WEXITSTATUS(sc))
				learned++;
			else if (!WIFEXITED(sc) || (WEXITSTATUS(sc) != 20 &&
						    WEXITSTATUS(sc) != 21)) {
				bad_exit++;
				tap_diag("iteration %u: client exit status %#x", i, sc);
			}
		} else if (who == 1) {
			if (!WIFEXITED(sp) || (WEXITSTATUS(sp) && WEXITSTATUS(sp) != 11)) {
				bad_exit++;
				tap_diag("iteration %u: provider exit status %#x", i, sp);
			}
		}
		if (!fos_counts_wait(&c0, &now, 2000)) {
			leaks++;
			fos_counts_print("after the kill", &now);
			fos_counts_wait(&c0, &now, 10000);
			c0 = now;
		}
		if (fos_now() - t0 > worst)
			worst = fos_now() - t0;
	}
	tap_ok(!hangs, "%u iterations: every process gone within 5 s of its SIGKILL (%u hung)",
	       iters, hangs);
	tap_ok(!bad_exit, "survivors: clients learned of the provider's death (%u), providers served on",
	       learned);
	tap_ok(!leaks, "nothing leaked: counters back within 2 s after every iteration (%u leaks)",
	       leaks);
	fos_counts_read(&now);
	tap_ok(fos_counts_equal(&c0, &now), "counters at their start values");
	tap_diag("killany: %u iterations: %u provider, %u client, %u both killed; slowest iteration %.2f s",
		 iters, kp, kc, kb, worst);
	return tap_finish();
}
