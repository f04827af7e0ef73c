// SPDX-License-Identifier: GPL-2.0
/*
 * fractos selftest: continuations - synchronous RPC through a continuation
 * Request, a 3-stage chain across four processes, success/error
 * continuation pairs, dynamic composition by a service refining a device
 * Request, and kill -9 at every step of a chain.
 */
#define _GNU_SOURCE
#include "fos_proc.h"

/* ------------------------------------------------------------------ */

/*
 * Stage processes.  Each opens its own space, publishes one Request
 * through a socket and serves it: a message's last 8 immediate bytes are a
 * value, its first capability the continuation to invoke with the result.
 * A message without capabilities stops it.  Exit status: 10 + the number
 * of continuations that failed with EKEYREVOKED, 1..9 for anything else.
 */
enum {
	F_MUL3 = 1,	/* v * 3 + 1 */
	F_XOR,		/* v ^ 0xff00 */
	F_ADD,		/* v + 1000 */
	F_DOUBLE,	/* 2 v */
	F_CHECK,	/* caps [ok, err]: even -> ok(v / 2), odd -> err(v) */
	F_SERVICE,	/* refine the device's Request with the caller's args */
	F_DEVICE,	/* copy from the device's memory into caps[0], call caps[1] */
};

static __u64 apply(int f, __u64 v)
{
	switch (f) {
	case F_MUL3:
		return v * 3 + 1;
	case F_XOR:
		return v ^ 0xff00;
	case F_ADD:
		return v + 1000;
	case F_DOUBLE:
		return 2 * v;
	}
	return v;
}

#define DEV_LEN 8192
static unsigned char dev_mem[DEV_LEN];

static void fill(void *p, size_t n, unsigned int seed)
{
	unsigned char *c = p;
	size_t i;

	for (i = 0; i < n; i++)
		c[i] = (unsigned char)(seed * 131 + i * 7 + (i >> 8));
}

/* @peer: F_SERVICE receives the device's Request there, F_DEVICE sends it. */
static void __attribute__((noreturn))
stage_main(int sock, int peer, int f, __u64 tag)
{
	static struct msg m;
	__u32 r, next, dev = NONE, dmem = NONE, d;
	int s = dev_open(), errs = 0, ret;
	__u64 v, off, len;
	unsigned int i;

	if (req_new(s, NONE, tag, NULL, 0, NULL, 0, &r))
		_exit(2);
	if (f == F_DEVICE) {
		fill(dev_mem, DEV_LEN, 9);
		if (mem_new(s, dev_mem, DEV_LEN, FRACTOS_PERM_READ, &dmem) ||
		    send_cap(peer, s, r))
			_exit(2);
	} else if (send_cap(sock, s, r)) {
		_exit(2);
	}
	if (f == F_SERVICE && recv_cap(peer, s, &dev))
		_exit(2);

	for (;;) {
		if (recv_ms(s, &m, 60000))
			_exit(3);
		if (m.type != FRACTOS_MSG_REQUEST || m.tag != tag)
			_exit(4);
		if (!m.ncaps)
			break;
		ret = 0;
		if (f == F_SERVICE) {
			/* imms: off, len; caps: buf, continuation */
			if (m.imm_len != 16 || m.ncaps != 2)
				_exit(5);
			ret = req_new(s, dev, 0, m.imm, 16, m.caps, 2, &d);
			if (!ret) {
				ret = invoke(s, d, 0, NULL, 0, NULL, 0);
				cap_close(s, d);
			}
		} else if (f == F_DEVICE) {
			if (m.imm_len != 16 || m.ncaps != 2)
				_exit(5);
			memcpy(&off, m.imm, 8);
			memcpy(&len, m.imm + 8, 8);
			ret = mem_copy(s, dmem, off, m.caps[0], 0, len);
			v = ret ? (__u64)-errno : len;
			ret = invoke(s, m.caps[1], 0, &v, 8, NULL, 0);
		} else {
			if (m.imm_len < 8)
				_exit(5);
			memcpy(&v, m.imm + m.imm_len - 8, 8);
			next = m.caps[0];
			if (f == F_CHECK) {
				if (m.ncaps != 2)
					_exit(5);
				if (v % 2 == 0)
					v /= 2;
				else
					next = m.caps[1];
			} else {
				v = apply(f, v);
			}
			ret = invoke(s, next, 0, &v, 8, NULL, 0);
		}
		if (ret) {
			if (errno != EKEYREVOKED)
				_exit(6);
			errs++;
		}
		for (i = 0; i < m.ncaps; i++)
			cap_close(s, m.caps[i]);
		/* Tell the parent this stage is done with one message. */
		if (f != F_DEVICE && xwrite(sock, "f", 1))
			_exit(7);
	}
	_exit(10 + (errs > 50 ? 50 : errs));
}

struct stage {
	pid_t pid;
	int sock;
	__u32 req;	/* its Request, in the parent's space */
};

static int stage_start(int fd, struct stage *st, int f, __u64 tag, int peer,
		       int other)
{
	int sv[2];

	socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);
	st->pid = fork();
	if (!st->pid) {
		close(sv[0]);
		if (other >= 0)
			close(other);
		stage_main(sv[1], peer, f, tag);
	}
	close(sv[1]);
	st->sock = sv[0];
	st->req = NONE;
	if (f == F_DEVICE)
		return 0;
	return recv_cap(sv[0], fd, &st->req);
}

/* Stop a stage (a message without caps) and return its exit status. */
static int stage_stop(int fd, struct stage *st)
{
	int rc;

	if (st->req != NONE) {
		invoke(fd, st->req, 0, NULL, 0, NULL, 0);
		cap_close(fd, st->req);
	}
	rc = reap(st->pid);
	close(st->sock);
	return rc;
}

static int get_u64(int fd, __u64 tag, __u64 *v, int ms)
{
	static struct msg m;

	if (recv_ms(fd, &m, ms) || m.type != FRACTOS_MSG_REQUEST ||
	    m.tag != tag || m.imm_len != 8 || m.ncaps)
		return -1;
	memcpy(v, m.imm, 8);
	return 0;
}

static int queue_empty(int fd)
{
	static struct msg m;

	return recv_msg(fd, FRACTOS_RECV_NONBLOCK, 0, &m) == -1 &&
	       errno == EAGAIN;
}

/* Synchronous RPC: A invokes B with its continuation, B invokes it. */
static void test_rpc(int fd)
{
	struct stage b;
	__u64 v = 21, got = 0;
	__u32 k;
	int i, ok = 1;

	tap_errno(stage_start(fd, &b, F_DOUBLE, 0xb, -1, -1), 0,
		  "rpc: service B published its Request");
	tap_errno(req_new(fd, NONE, 0xa1, NULL, 0, NULL, 0, &k), 0,
		  "rpc: continuation A' (our Request)");
	tap_errno(invoke(fd, b.req, 0, &v, 8, &k, 1), 0,
		  "rpc: invoke B(21, A')");
	tap_errno(get_u64(fd, 0xa1, &got, 20000), 0,
		  "rpc: A' invoked by B, received with our tag");
	tap_eq(got, 42, "rpc: result 42");
	for (i = 0; i < 5; i++) {
		v = 100 + i;
		ok &= !invoke(fd, b.req, 0, &v, 8, &k, 1) &&
		      !get_u64(fd, 0xa1, &got, 20000) && got == 2 * v;
	}
	tap_ok(ok, "rpc: five more round trips");
	tap_eq(stage_stop(fd, &b), 10, "rpc: B served without error");
	cap_close(fd, k);
}

/* Three stages in three processes; the client only starts and ends it. */
static void test_chain(int fd)
{
	struct stage s[3];
	__u32 k, d3, d2, d1x, d3x;
	__u64 v, got = 0;
	int i, ok = 1;
	static const int fns[3] = { F_MUL3, F_XOR, F_ADD };

	for (i = 0; i < 3; i++)
		ok &= !stage_start(fd, &s[i], fns[i], 0x51 + i, -1, -1);
	tap_ok(ok, "chain: three stage processes published their Requests");
	req_new(fd, NONE, 0xc0, NULL, 0, NULL, 0, &k);
	/* S3' = S3 + [K]; S2' = S2 + [S3']; invoke S1(v, [S2']). */
	tap_errno(req_new(fd, s[2].req, 0, NULL, 0, &k, 1, &d3), 0,
		  "chain: S3' = derive(S3, K)");
	tap_errno(req_new(fd, s[1].req, 0, NULL, 0, &d3, 1, &d2), 0,
		  "chain: S2' = derive(S2, S3')");
	v = 7;
	tap_errno(invoke(fd, s[0].req, 0, &v, 8, &d2, 1), 0,
		  "chain: invoke S1(7, S2')");
	tap_errno(get_u64(fd, 0xc0, &got, 30000), 0,
		  "chain: the result came back on K");
	tap_eq(got, apply(F_ADD, apply(F_XOR, apply(F_MUL3, 7))),
	       "chain: f3(f2(f1(7)))");
	tap_ok(queue_empty(fd), "chain: the client got exactly one message");
	ok = 1;
	for (v = 1; v <= 4; v++)
		ok &= !invoke(fd, s[0].req, 0, &v, 8, &d2, 1) &&
		      !get_u64(fd, 0xc0, &got, 30000) &&
		      got == apply(F_ADD, apply(F_XOR, apply(F_MUL3, v)));
	tap_ok(ok, "chain: composed Requests are reusable");

	/* Compose the same stages in another order: S3 -> S1 -> S2. */
	req_new(fd, s[1].req, 0, NULL, 0, &k, 1, &d3x);
	req_new(fd, s[0].req, 0, NULL, 0, &d3x, 1, &d1x);
	v = 5;
	invoke(fd, s[2].req, 0, &v, 8, &d1x, 1);
	tap_ok(!get_u64(fd, 0xc0, &got, 30000) &&
	       got == apply(F_XOR, apply(F_MUL3, apply(F_ADD, 5))),
	       "chain: recomposed as S3 -> S1 -> S2");

	/* Revoking a link breaks the chain at that stage only. */
	cap_revoke(fd, d3);
	v = 9;
	invoke(fd, s[0].req, 0, &v, 8, &d2, 1);
	tap_errno(get_u64(fd, 0xc0, &got, 500), ETIMEDOUT,
		  "chain: with S3' revoked no result arrives");
	cap_close(fd, d1x);
	cap_close(fd, d3x);
	cap_close(fd, d2);
	cap_close(fd, d3);
	tap_eq(stage_stop(fd, &s[0]), 10, "chain: S1 clean");
	tap_eq(stage_stop(fd, &s[1]), 11,
	       "chain: S2 saw EKEYREVOKED once, on the revoked S3'");
	tap_eq(stage_stop(fd, &s[2]), 10, "chain: S3 clean");
	cap_close(fd, k);
}

/* A success / error continuation pair. */
static void test_ok_err(int fd)
{
	struct stage c;
	__u32 caps[2];
	__u64 v, got = 0;

	stage_start(fd, &c, F_CHECK, 0xcc, -1, -1);
	req_new(fd, NONE, 0x0c, NULL, 0, NULL, 0, &caps[0]);
	req_new(fd, NONE, 0xe7, NULL, 0, NULL, 0, &caps[1]);
	v = 10;
	tap_errno(invoke(fd, c.req, 0, &v, 8, caps, 2), 0,
		  "okerr: invoke with (ok, err), valid input");
	tap_ok(!get_u64(fd, 0x0c, &got, 20000) && got == 5,
	       "okerr: the success continuation got 5");
	v = 7;
	invoke(fd, c.req, 0, &v, 8, caps, 2);
	tap_ok(!get_u64(fd, 0xe7, &got, 20000) && got == 7,
	       "okerr: invalid input -> the error continuation");
	tap_ok(queue_empty(fd), "okerr: never both");
	/* Revoke the unused pair after the call, as a client would. */
	cap_revoke(fd, caps[1]);
	v = 3;
	invoke(fd, c.req, 0, &v, 8, caps, 2);
	tap_errno(get_u64(fd, 0xe7, &got, 500), ETIMEDOUT,
		  "okerr: a revoked error continuation is never delivered");
	tap_eq(stage_stop(fd, &c), 11, "okerr: the service saw EKEYREVOKED once");
	cap_close(fd, caps[0]);
	cap_close(fd, caps[1]);
}

/*
 * Dynamic composition: the service refines the device's Request (which
 * the client never sees) with the client's buffer and continuation.
 */
static void test_compose(int fd)
{
	static unsigned char cbuf[DEV_LEN];
	struct stage svc, dev;
	__u64 args[2], got = 0;
	__u32 buf = NONE, view = NONE, k = NONE, caps[2];
	int sd[2], n;

	socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sd);
	stage_start(fd, &dev, F_DEVICE, 0xde, sd[1], sd[0]);
	tap_errno(stage_start(fd, &svc, F_SERVICE, 0x5e, sd[0], sd[1]), 0,
		  "compose: service published; device talks to it only");
	close(sd[0]);
	close(sd[1]);
	n = space_ncaps(fd);
	memset(cbuf, 0, sizeof(cbuf));
	mem_new(fd, cbuf, sizeof(cbuf), FRACTOS_PERM_ALL, &buf);
	/* Hand out a write-only window [1000, 4000) of the buffer. */
	tap_errno(mem_diminish(fd, buf, FRACTOS_PERM_READ, 1000, 3000, &view),
		  0, "compose: write-only window of our buffer");
	req_new(fd, NONE, 0x99, NULL, 0, NULL, 0, &k);
	args[0] = 123;
	args[1] = 3000;
	caps[0] = view;
	caps[1] = k;
	tap_errno(invoke(fd, svc.req, 0, args, 16, caps, 2), 0,
		  "compose: invoke service(off 123, len 3000, buf, K)");
	tap_errno(get_u64(fd, 0x99, &got, 30000), 0,
		  "compose: the device called our continuation");
	tap_eq(got, 3000, "compose: the device copied 3000 bytes");
	fill(dev_mem, DEV_LEN, 9);
	tap_ok(!memcmp(cbuf + 1000, dev_mem + 123, 3000),
	       "compose: data in our buffer is the device's, at the window");
	tap_ok(!cbuf[999] && !cbuf[4000] && !cbuf[122] && !cbuf[0],
	       "compose: nothing written outside the window");
	tap_eq(space_ncaps(fd), n + 3,
	       "compose: the client holds only buf, window, K: never the device");
	/* Larger than the window: the device's copy fails, reported by K. */
	args[1] = 3001;
	invoke(fd, svc.req, 0, args, 16, caps, 2);
	tap_ok(!get_u64(fd, 0x99, &got, 30000) && got == (__u64)-ERANGE,
	       "compose: out-of-window copy -> the device reports ERANGE");
	tap_eq(stage_stop(fd, &svc), 10, "compose: service clean");
	/* The device has no Request in our space: stop it via its peer gone. */
	kill_reap(dev.pid);
	close(dev.sock);
	cap_close(fd, k);
	cap_close(fd, view);
	cap_close(fd, buf);
}

/*
 * kill -9 at every step of a chain: each stage in turn is stopped while
 * the chain's message waits in its queue, then killed; last the client
 * dies mid-chain.  Nothing hangs, every survivor exits cleanly.
 */
/* Stop a stage and wait until it is stopped (not just signalled). */
static int stop_stage(pid_t pid)
{
	int st;

	kill(pid, SIGSTOP);
	return waitpid(pid, &st, WUNTRACED) == pid && WIFSTOPPED(st);
}

static int wait_messages(long want)
{
	int i;

	for (i = 0; i < 200; i++) {
		if (live("messages") == want)
			return 1;
		usleep(25000);
	}
	tap_diag("  messages %ld, expected %ld", live("messages"), want);
	return 0;
}

static void test_kills(int fd)
{
	static const int fns[3] = { F_MUL3, F_XOR, F_ADD };
	struct stage s[3];
	__u32 k, d3, d2;
	int kill_at, i, ok, rc, errs;
	long msgs0;
	char c;
	__u64 v = 1, got;
	pid_t client;

	for (kill_at = 0; kill_at < 3; kill_at++) {
		msgs0 = live("messages");
		ok = 1;
		for (i = 0; i < 3; i++) {
			ok &= !stage_start(fd, &s[i], fns[i], 0x61 + i, -1, -1);
			ok &= !monitor(fd, FRACTOS_IOC_MONITOR_RECEIVE,
				       s[i].req, 0x700 + i);
		}
		req_new(fd, NONE, 0xc1, NULL, 0, NULL, 0, &k);
		req_new(fd, s[2].req, 0, NULL, 0, &k, 1, &d3);
		req_new(fd, s[1].req, 0, NULL, 0, &d3, 1, &d2);
		if (!ok)
			tap_diag("  setup failed");
		ok &= stop_stage(s[kill_at].pid);
		if (invoke(fd, s[0].req, 0, &v, 8, &d2, 1)) {
			tap_diag("  invoke: %s", strerror(errno));
			ok = 0;
		}
		/* Earlier stages forwarded it: it sits in the stopped one. */
		for (i = 0; i < kill_at; i++)
			if (xread(s[i].sock, &c, 1)) {
				tap_diag("  no word from S%d", i + 1);
				ok = 0;
			}
		ok &= wait_messages(msgs0 + 1);
		if (!tap_ok(ok, "kill S%d: chain message waits in S%d's queue",
			    kill_at + 1, kill_at + 1)) {
			char cmd[128];

			for (i = 0; i < 3; i++) {
				snprintf(cmd, sizeof(cmd),
					 "grep State /proc/%d/status; cat /proc/%d/wchan; echo; cat /proc/%d/stack",
					 s[i].pid, s[i].pid, s[i].pid);
				fflush(stdout);
				if (system(cmd))
					tap_diag("system failed");
			}
		}
		kill(s[kill_at].pid, SIGKILL);
		rc = reap(s[kill_at].pid);
		tap_ok(rc == 128 + SIGKILL, "kill S%d: killed", kill_at + 1);
		{
			static struct msg m;

			tap_ok(!recv_ms(fd, &m, 5000) &&
			       m.type == FRACTOS_MSG_MONITOR_RECEIVE &&
			       m.tag == (__u64)0x700 + kill_at,
			       "kill S%d: its monitor fired", kill_at + 1);
		}
		tap_errno(get_u64(fd, 0xc1, &got, 300), ETIMEDOUT,
			  "kill S%d: no result, nothing hangs", kill_at + 1);
		tap_eq(live("messages"), msgs0,
		       "kill S%d: the pending message was dropped", kill_at + 1);
		tap_errno(invoke(fd, s[kill_at].req, 0, NULL, 0, NULL, 0),
			  EKEYREVOKED, "kill S%d: its Request -> EKEYREVOKED",
			  kill_at + 1);
		ok = 1;
		for (i = 0; i < 3; i++) {
			if (i == kill_at) {
				cap_close(fd, s[i].req);
				close(s[i].sock);
				continue;
			}
			rc = stage_stop(fd, &s[i]);
			if (rc != 10) {
				tap_diag("  stage %d exit %d", i + 1, rc);
				ok = 0;
			}
		}
		tap_ok(ok, "kill S%d: the other stages exit cleanly", kill_at + 1);
		/* Survivors' monitors fire when they exit: drain them. */
		while (!queue_empty(fd))
			;
		cap_close(fd, d2);
		cap_close(fd, d3);
		cap_close(fd, k);
	}

	/* The client dies while its chain is at S2. */
	msgs0 = live("messages");
	for (i = 0; i < 3; i++)
		stage_start(fd, &s[i], fns[i], 0x61 + i, -1, -1);
	{
		int e[3];

		for (i = 0; i < 3; i++)
			e[i] = cap_export(fd, s[i].req);
		stop_stage(s[1].pid);
		client = fork();
		if (!client) {
			int c = dev_open();
			__u32 r[3], kk, x3, x2;
			__u64 val = 2, res;

			for (i = 0; i < 3; i++)
				if (cap_import(c, e[i], &r[i]))
					_exit(2);
			if (req_new(c, NONE, 0xc2, NULL, 0, NULL, 0, &kk) ||
			    req_new(c, r[2], 0, NULL, 0, &kk, 1, &x3) ||
			    req_new(c, r[1], 0, NULL, 0, &x3, 1, &x2) ||
			    invoke(c, r[0], 0, &val, 8, &x2, 1))
				_exit(3);
			get_u64(c, 0xc2, &res, 60000);
			_exit(4);
		}
		for (i = 0; i < 3; i++)
			close(e[i]);
	}
	tap_ok(!xread(s[0].sock, &c, 1) && wait_messages(msgs0 + 1),
	       "kill client: chain message at S2");
	kill_reap(client);
	kill(s[1].pid, SIGCONT);
	errs = 0;
	ok = 1;
	for (i = 0; i < 3; i++) {
		rc = stage_stop(fd, &s[i]);
		if (rc < 10)
			ok = 0;
		else
			errs += rc - 10;
	}
	tap_ok(ok, "kill client: every stage exits normally, nothing hangs");
	tap_eq(errs, 1,
	       "kill client: exactly one stage found the dead client's chain revoked");
	tap_ok(queue_empty(fd), "kill client: nothing for us");
}

int main(void)
{
	struct snap base;
	int fd;

	need_module();
	tap_start();
	snap_take(&base);
	fd = dev_open();

	test_rpc(fd);
	test_chain(fd);
	test_ok_err(fd);
	test_compose(fd);
	test_kills(fd);

	tap_eq(space_ncaps(fd), 0, "every test closed its cids");
	tap_ok(queue_empty(fd), "no stray message");
	close(fd);
	snap_check(&base, "chain");
	return tap_end();
}
