// SPDX-License-Identifier: GPL-2.0
/*
 * fractos selftest: monitors - monitor_receive (revocation, revocation-tree
 * ancestors, provider death), monitor_delegate (every kind of delegation
 * and its end), their limits and bad input, and the death of providers and
 * clients.
 */
#define _GNU_SOURCE
#include "fos_proc.h"

/* ------------------------------------------------------------------ */

/* Expect exactly one monitor event @type/@cookie, with no arguments. */
static int expect_event(int fd, __u32 type, __u64 cookie, int ms)
{
	static struct msg m;

	if (recv_ms(fd, &m, ms))
		return 0;
	return m.type == type && m.tag == cookie && !m.imm_len && !m.ncaps;
}

static int queue_empty(int fd)
{
	static struct msg m;

	return recv_msg(fd, FRACTOS_RECV_NONBLOCK, 0, &m) == -1 &&
	       errno == EAGAIN;
}

#define MR	FRACTOS_IOC_MONITOR_RECEIVE
#define MD	FRACTOS_IOC_MONITOR_DELEGATE
#define EV_R	FRACTOS_MSG_MONITOR_RECEIVE
#define EV_D	FRACTOS_MSG_MONITOR_DELEGATE

static char buf[4096];

static void test_receive_monitor(int fd)
{
	struct fractos_monitor a;
	__u32 m, c, c2, r;
	long mon_objs;
	int p;

	mem_new(fd, buf, 64, FRACTOS_PERM_ALL, &m);
	tap_errno(monitor(fd, MR, m, 0x11), 0, "mrecv: register on a Memory");
	tap_errno(monitor(fd, MR, m, 0x12), 0, "mrecv: a second registration");
	tap_ok(queue_empty(fd), "mrecv: nothing fires before revocation");
	tap_errno(cap_revoke(fd, m), 0, "mrecv: revoke");
	tap_ok(expect_event(fd, EV_R, 0x11, 1000),
	       "mrecv: event MONITOR_RECEIVE with the first cookie, no args");
	tap_ok(expect_event(fd, EV_R, 0x12, 1000),
	       "mrecv: and the second registration's event");
	tap_ok(queue_empty(fd), "mrecv: each fires once");
	tap_errno(monitor(fd, MR, m, 0x13), 0,
		  "mrecv: register on an already revoked cap");
	tap_ok(expect_event(fd, EV_R, 0x13, 0), "mrecv: fires at once");
	cap_close(fd, m);

	/* Revocation-tree ancestor. */
	mem_new(fd, buf, 64, FRACTOS_PERM_ALL, &m);
	cap_op(fd, FRACTOS_IOC_CAP_CREATE_REVTREE, m, &c);
	cap_op(fd, FRACTOS_IOC_CAP_CREATE_REVTREE, c, &c2);
	tap_errno(monitor(fd, MR, c2, 0x21), 0, "mrecv: register on a grandchild");
	tap_errno(monitor(fd, MR, c, 0x22), 0, "mrecv: and on the child");
	tap_errno(cap_revoke(fd, m), 0, "mrecv: revoke the root");
	tap_ok(expect_event(fd, EV_R, 0x22, 1000) ||
	       expect_event(fd, EV_R, 0x21, 0),
	       "mrecv: a descendant's monitor fired");
	tap_ok(expect_event(fd, EV_R, 0x21, 1000) ||
	       expect_event(fd, EV_R, 0x22, 0),
	       "mrecv: and the other one");
	tap_ok(queue_empty(fd), "mrecv: exactly two events");
	cap_close(fd, c2);
	cap_close(fd, c);
	cap_close(fd, m);

	/* Revoking a child does not fire the parent's monitor. */
	mem_new(fd, buf, 64, FRACTOS_PERM_ALL, &m);
	cap_op(fd, FRACTOS_IOC_CAP_CREATE_REVTREE, m, &c);
	monitor(fd, MR, m, 0x31);
	monitor(fd, MR, c, 0x32);
	cap_revoke(fd, c);
	tap_ok(expect_event(fd, EV_R, 0x32, 1000) && queue_empty(fd),
	       "mrecv: revoking a child fires only the child's monitor");

	/* Freed, not revoked: dropped silently. */
	mon_objs = live("objects");
	cap_close(fd, c);
	cap_close(fd, m);
	tap_ok(queue_empty(fd), "mrecv: object freed -> monitor dropped, no event");
	tap_eq(live("objects"), mon_objs - 2, "mrecv: both objects freed");

	/* A Request's provider going away. */
	p = dev_open();
	req_new(p, NONE, 1, NULL, 0, NULL, 0, &r);
	cap_move(p, r, fd, &r);
	tap_errno(monitor(fd, MR, r, 0x41), 0, "mrecv: register on an imported Request");
	close(p);
	tap_ok(expect_event(fd, EV_R, 0x41, 1000),
	       "mrecv: fires when the provider's space closes");
	cap_close(fd, r);

	/* The watcher going away first: nothing leaks, nothing fires. */
	p = dev_open();
	mem_new(fd, buf, 64, FRACTOS_PERM_ALL, &m);
	cap_move(fd, m, p, &c);
	tap_errno(monitor(p, MR, c, 0x51), 0, "mrecv: another space watches our Memory");
	close(p);
	tap_errno(cap_revoke(fd, m), 0, "mrecv: revoke after the watcher closed");
	tap_ok(queue_empty(fd), "mrecv: no event anywhere near us");
	cap_close(fd, m);

	/* EFAULT from a read-only struct means nothing was registered. */
	{
		struct fractos_monitor *ro;

		mem_new(fd, buf, 64, FRACTOS_PERM_ALL, &m);
		ro = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		memset(ro, 0, sizeof(*ro));
		ro->cid = m;
		ro->cookie = 0x61;
		mprotect(ro, 4096, PROT_READ);
		tap_errno(ioctl(fd, MR, ro), EFAULT,
			  "mrecv: read-only struct -> EFAULT");
		munmap(ro, 4096);
		cap_revoke(fd, m);
		tap_ok(queue_empty(fd), "mrecv: ... and nothing was registered");
		cap_close(fd, m);
	}

	/* Bad input. */
	mem_new(fd, buf, 64, FRACTOS_PERM_ALL, &m);
	tap_errno(monitor(fd, MR, 4444, 1), EBADF, "mrecv: unknown cid -> EBADF");
	tap_errno(monitor(fd, MR, NONE, 1), EBADF, "mrecv: CID_INVALID -> EBADF");
	memset(&a, 0, sizeof(a));
	a.cid = m;
	a.flags = 1;
	tap_errno(ioctl(fd, MR, &a), EINVAL, "mrecv: flags -> EINVAL");
	a.flags = 0;
	a.reserved[0] = 1;
	tap_errno(ioctl(fd, MR, &a), EINVAL, "mrecv: reserved -> EINVAL");
	cap_revoke(fd, m);
	tap_ok(queue_empty(fd), "mrecv: rejected registrations never fire");
	cap_close(fd, m);
}

/* Registrations are bounded by max_caps (ENOSPC) and events by nothing. */
static void test_monitor_limits(void)
{
	long oldmax = param_get("max_caps"), oldq = param_get("max_queue");
	int s = dev_open(), ok = 1, i;
	__u32 m, r;

	mem_new(s, buf, 64, FRACTOS_PERM_ALL, &m);
	tap_errno(param_set("max_caps", 3), 0, "limits: max_caps = 3");
	for (i = 0; i < 3; i++)
		ok &= !monitor(s, MR, m, 100 + i);
	tap_ok(ok, "limits: 3 registrations accepted");
	tap_errno(monitor(s, MR, m, 103), ENOSPC,
		  "limits: the 4th monitor_receive -> ENOSPC");
	tap_errno(monitor(s, MD, m, 104), ENOSPC,
		  "limits: monitor_delegate too -> ENOSPC");
	tap_errno(param_set("max_caps", oldmax), 0, "limits: max_caps restored");

	/* Events pass the queue bound. */
	tap_errno(param_set("max_queue", 2), 0, "limits: max_queue = 2");
	req_new(s, NONE, 9, NULL, 0, NULL, 0, &r);
	invoke(s, r, 0, NULL, 0, NULL, 0);
	invoke(s, r, 0, NULL, 0, NULL, 0);
	tap_errno(invoke(s, r, 0, NULL, 0, NULL, 0), EAGAIN,
		  "limits: queue full for invocations");
	cap_revoke(s, m);
	ok = 1;
	for (i = 0; i < 2; i++) {
		static struct msg msg;

		ok &= !recv_msg(s, FRACTOS_RECV_NONBLOCK, 0, &msg) &&
		      msg.type == FRACTOS_MSG_REQUEST;
	}
	tap_ok(ok, "limits: the two invocations first");
	ok = 1;
	for (i = 0; i < 3; i++)
		ok &= expect_event(s, EV_R, 100 + i, 0);
	tap_ok(ok, "limits: then all 3 events, queued past max_queue");
	tap_ok(queue_empty(s), "limits: nothing more");
	tap_errno(param_set("max_queue", oldq), 0, "limits: max_queue restored");
	close(s);
}

/*
 * A monitor_receive on a revoked object fires at once.  Its event keeps
 * the registration's slot until it is received, so registering in a loop
 * without receiving stops at max_caps (ENOSPC) instead of queueing kernel
 * memory without bound.
 */
static void test_event_bound(void)
{
	long oldmax = param_get("max_caps"), msgs0 = live("messages");
	struct snap base;
	int s, ok = 1, i;
	__u32 m, d;

	snap_take(&base);
	s = dev_open();
	mem_new(s, buf, 64, FRACTOS_PERM_ALL, &m);
	cap_op(s, FRACTOS_IOC_CAP_DUP, m, &d);
	cap_revoke(s, m);
	tap_errno(param_set("max_caps", 8), 0, "bound: max_caps = 8");
	for (i = 0; i < 8; i++)
		ok &= !monitor(s, MR, d, 200 + i);
	tap_ok(ok, "bound: 8 registrations on a revoked cid fire at once");
	tap_errno(monitor(s, MR, d, 208), ENOSPC,
		  "bound: the 9th, with 8 events unreceived -> ENOSPC");
	for (i = 0; ok && i < 64; i++)
		ok = monitor(s, MR, d, 300 + i) == -1 && errno == ENOSPC;
	tap_ok(ok, "bound: and so on, nothing more is queued");
	tap_eq(live("messages"), msgs0 + 8, "bound: 8 events queued");
	tap_ok(expect_event(s, EV_R, 200, 0), "bound: receive one event");
	tap_errno(monitor(s, MR, d, 209), 0,
		  "bound: which frees one slot for a new registration");
	tap_errno(monitor(s, MD, d, 210), ENOSPC, "bound: but only one");
	tap_errno(param_set("max_caps", oldmax), 0, "bound: max_caps restored");
	cap_close(s, d);
	cap_close(s, m);
	close(s);
	snap_check(&base, "bound: close drops the queued events");
}

/* Hand @cid of @from to space @to through an invocation of @to's Request. */
static int deliver(int from, __u32 cid, int to, __u32 req_in_from,
		   __u32 *got)
{
	static struct msg msg;

	if (invoke(from, req_in_from, 0, NULL, 0, &cid, 1))
		return -1;
	if (recv_msg(to, FRACTOS_RECV_NONBLOCK, 0, &msg) || msg.ncaps != 1)
		return -1;
	*got = msg.caps[0];
	return 0;
}

static void test_delegate_monitor(int p)
{
	struct fractos_monitor a;
	struct fractos_cap_info mi, gi;
	__u32 m = NONE, m2 = NONE, rr = NONE, rp = NONE, g1 = NONE, g2 = NONE;
	__u32 rq = NONE, imp = NONE, c = NONE;
	char scratch[8];
	int r = dev_open(), efd, ok;

	/* R is a receiver; P (the creator) holds a Request to it. */
	req_new(r, NONE, 0xd0, NULL, 0, NULL, 0, &rr);
	cap_move(r, rr, p, &rp);
	mem_new(p, buf, 128, FRACTOS_PERM_ALL, &m);

	tap_errno(monitor(p, MD, m, 0xd1), 0, "mdeleg: register on own Memory");
	tap_errno(monitor(p, MD, m, 0xd2), EBUSY, "mdeleg: second -> EBUSY");
	tap_errno(monitor(p, MR, m, 0xd3), 0,
		  "mdeleg: monitor_receive still allowed next to it");
	tap_errno(deliver(p, m, r, rp, &g1), 0, "mdeleg: delegated once by invoke");
	tap_errno(deliver(p, m, r, rp, &g2), 0, "mdeleg: delegated twice");
	cap_info(p, m, &mi);
	cap_info(r, g1, &gi);
	tap_ok(gi.oid.id != mi.oid.id && (gi.info_flags & FRACTOS_INFO_REVTREE) &&
	       gi.depth == mi.depth + 1 && gi.offset == mi.offset &&
	       gi.len == mi.len && gi.perms == mi.perms,
	       "mdeleg: the holder got a revocation-tree child, same view");
	tap_ok(queue_empty(p), "mdeleg: no event while both are held");
	cap_close(r, g1);
	tap_ok(queue_empty(p), "mdeleg: one closed, the other still held");
	tap_errno(cap_revoke(r, g2), 0, "mdeleg: the holder revokes its copy");
	tap_ok(expect_event(p, EV_D, 0xd1, 1000),
	       "mdeleg: every delegation gone -> MONITOR_DELEGATE event");
	tap_ok(queue_empty(p), "mdeleg: the holder's revoke did not revoke the object");
	tap_ok(cap_revoked(p, m) == 0 && !mem_copy(p, m, 0, m, 64, 8),
	       "mdeleg: the creator's Memory still works");
	cap_close(r, g2);

	tap_errno(monitor(p, MD, m, 0xd4), 0,
		  "mdeleg: re-register after it fired");
	/* Delegation through an exported fd. */
	efd = cap_export(p, m);
	tap_ok(efd >= 0, "mdeleg: export counts as a delegation");
	tap_errno(cap_import(r, efd, &imp), 0, "mdeleg: imported by R");
	close(efd);
	tap_ok(queue_empty(p), "mdeleg: fd closed, the imported copy lives");
	tap_errno(monitor(r, MD, imp, 1), EPERM,
		  "mdeleg: a space that did not create it -> EPERM");
	cap_op(r, FRACTOS_IOC_CAP_DUP, imp, &c);
	cap_close(r, imp);
	tap_ok(queue_empty(p), "mdeleg: a dup keeps the delegation alive");
	cap_close(r, c);
	tap_ok(expect_event(p, EV_D, 0xd4, 1000),
	       "mdeleg: last copy of the exported child closed -> event");

	/* Delegation as a Request argument. */
	monitor(p, MD, m, 0xd5);
	tap_errno(req_new(p, NONE, 0, NULL, 0, &m, 1, &rq), 0,
		  "mdeleg: Memory as an argument of our own Request");
	tap_ok(queue_empty(p), "mdeleg: held by the Request");
	cap_close(p, rq);
	tap_ok(expect_event(p, EV_D, 0xd5, 1000),
	       "mdeleg: Request freed -> event");

	/* Revoking the object revokes every delegation. */
	monitor(p, MD, m, 0xd6);
	deliver(p, m, r, rp, &g1);
	tap_errno(cap_revoke(p, m), 0, "mdeleg: creator revokes the object");
	tap_ok(cap_revoked(r, g1) == 1, "mdeleg: the holder's copy is revoked");
	{
		static struct msg e1, e2;
		int ok2 = !recv_ms(p, &e1, 1000) && !recv_ms(p, &e2, 1000);

		/* Either order: they fire from the same revocation. */
		ok2 &= (e1.type == EV_D && e1.tag == 0xd6 && e2.type == EV_R &&
			e2.tag == 0xd3) ||
		       (e1.type == EV_R && e1.tag == 0xd3 && e2.type == EV_D &&
			e2.tag == 0xd6);
		tap_ok(ok2 && queue_empty(p),
		       "mdeleg: delegate and receive events, once each");
	}
	tap_errno(monitor(p, MD, m, 1), EKEYREVOKED,
		  "mdeleg: revoked object -> EKEYREVOKED");
	cap_close(r, g1);
	cap_close(p, m);

	/* No delegation at all: revocation fires it at once. */
	mem_new(p, buf, 128, FRACTOS_PERM_ALL, &m);
	monitor(p, MD, m, 0xd7);
	cap_revoke(p, m);
	tap_ok(expect_event(p, EV_D, 0xd7, 1000),
	       "mdeleg: revoked with no delegation -> event");
	cap_close(p, m);

	/* Failed delegations are not delegations. */
	mem_new(p, buf, 128, FRACTOS_PERM_ALL, &m);
	monitor(p, MD, m, 0xd8);
	{
		__u32 caps[2] = { m, 7777 };

		tap_errno(invoke(p, rp, 0, NULL, 0, caps, 2), EBADF,
			  "mdeleg: invoke with the Memory and a bad cid -> EBADF");
		tap_errno(invoke(p, rp, 0, (void *)BADPTR, 4, caps, 1), EFAULT,
			  "mdeleg: invoke with the Memory and bad imms -> EFAULT");
		tap_errno(req_new(p, NONE, 0, NULL, 0, caps, 2, NULL), EBADF,
			  "mdeleg: request_create with it and a bad cid -> EBADF");
	}
	tap_ok(queue_empty(p), "mdeleg: failed delegations fire nothing");
	tap_errno(monitor(p, MD, m, 0xd9), EBUSY,
		  "mdeleg: the registration is still armed");
	deliver(p, m, r, rp, &g1);
	cap_close(r, g1);
	tap_ok(expect_event(p, EV_D, 0xd8, 1000) && queue_empty(p),
	       "mdeleg: a real delegation then fires it once");
	cap_close(p, m);

	/* Diminished views are delegations too. */
	mem_new(p, buf, 128, FRACTOS_PERM_ALL, &m);
	mem_diminish(p, m, FRACTOS_PERM_WRITE, 8, 8, &m2);
	tap_errno(monitor(p, MD, m2, 0xda), 0,
		  "mdeleg: on a diminished cap of our own object");
	deliver(p, m2, r, rp, &g1);
	cap_info(r, g1, &gi);
	tap_ok(gi.offset == 8 && gi.len == 8 && gi.perms == FRACTOS_PERM_READ,
	       "mdeleg: the delegated child keeps the diminished view");
	ok = !mem_new(r, scratch, sizeof(scratch), FRACTOS_PERM_ALL, &c) &&
	     !mem_copy(r, g1, 0, c, 0, 8) && !memcmp(scratch, buf + 8, 8);
	tap_ok(ok, "mdeleg: and reads through it");
	cap_close(r, c);
	cap_close(r, g1);
	tap_ok(expect_event(p, EV_D, 0xda, 1000), "mdeleg: event");
	cap_close(p, m2);
	cap_close(p, m);

	/* Bad input. */
	mem_new(p, buf, 128, FRACTOS_PERM_ALL, &m);
	tap_errno(monitor(p, MD, 5555, 1), EBADF, "mdeleg: unknown cid -> EBADF");
	memset(&a, 0, sizeof(a));
	a.cid = m;
	a.flags = 2;
	tap_errno(ioctl(p, MD, &a), EINVAL, "mdeleg: flags -> EINVAL");
	a.flags = 0;
	a.reserved[1] = 3;
	tap_errno(ioctl(p, MD, &a), EINVAL, "mdeleg: reserved -> EINVAL");
	cap_close(p, m);
	tap_ok(queue_empty(p), "mdeleg: no stray events");

	cap_close(p, rp);
	close(r);
}

/*
 * Provider death: a child provides a Request; the parent holds it, has
 * invocations queued and a waiter blocked on the full queue, and watches
 * it.  kill -9 the child.
 */
static void test_provider_death(int fd)
{
	long oldq = param_get("max_queue");
	struct waiter w = { .fd = fd };
	long msgs0 = live("messages");
	int sv[2], ok, i;
	pthread_t th;
	pid_t pid;
	__u32 r, d;

	socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);
	pid = fork();
	if (!pid) {
		int s = dev_open();
		__u32 cid;

		close(sv[0]);
		if (req_new(s, NONE, 3, NULL, 0, NULL, 0, &cid) ||
		    send_cap(sv[1], s, cid))
			_exit(2);
		for (;;)
			pause();
	}
	close(sv[1]);
	tap_errno(recv_cap(sv[0], fd, &r), 0, "death: got the child's Request");
	req_new(fd, r, 0, "d", 1, NULL, 0, &d);
	tap_errno(monitor(fd, MR, r, 0xdead), 0, "death: monitor_receive on it");
	tap_errno(monitor(fd, MR, d, 0xdee), 0, "death: and on a derived one");
	param_set("max_queue", 3);
	ok = 1;
	for (i = 0; i < 3; i++)
		ok &= !invoke(fd, d, 0, NULL, 0, NULL, 0);
	tap_ok(ok, "death: three invocations pending in the child's queue");
	tap_eq(live("messages"), msgs0 + 3, "death: messages counter +3");
	w.cid = r;
	pthread_create(&th, NULL, wait_invoke, &w);
	usleep(300000);
	kill_reap(pid);
	pthread_join(th, NULL);
	tap_ok(w.rc == -1 && w.err == EKEYREVOKED,
	       "death: the waiting invoker fails EKEYREVOKED (got %d/%s)",
	       w.rc, strerror(w.err));
	tap_errno(invoke(fd, r, 0, NULL, 0, NULL, 0), EKEYREVOKED,
		  "death: later invokes -> EKEYREVOKED");
	tap_errno(invoke(fd, d, 0, NULL, 0, NULL, 0), EKEYREVOKED,
		  "death: derived Request too");
	ok = expect_event(fd, EV_R, 0xdead, 2000);
	ok &= expect_event(fd, EV_R, 0xdee, 2000);
	tap_ok(ok, "death: both monitors fired");
	tap_eq(live("messages"), msgs0, "death: pending invocations dropped");
	param_set("max_queue", oldq);
	cap_close(fd, d);
	cap_close(fd, r);
	close(sv[0]);
}

struct deleg_waiter {
	int fd;
	__u32 req, arg;
	volatile int done;
	int rc, err;
};

static void *deleg_wait_invoke(void *p)
{
	struct deleg_waiter *w = p;

	w->rc = invoke(w->fd, w->req, FRACTOS_INVOKE_WAIT, NULL, 0, &w->arg,
		       1);
	w->err = errno;
	__atomic_store_n(&w->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static void on_usr1(int sig)
{
	(void)sig;
}

/*
 * The last delegation handed out ends while another one is pending in an
 * INVOKE_WAIT; when that invoke is then interrupted (its delegation taken
 * back), nothing is delegated any more: the event must fire.
 */
static void test_delegate_pending(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	struct deleg_waiter w = { 0 };
	long oldq = param_get("max_queue");
	static struct msg msg;
	int s = dev_open(), capfd, i;
	pthread_t th;
	__u32 m, r;

	sigaction(SIGUSR1, &sa, NULL);
	mem_new(s, buf, 64, FRACTOS_PERM_ALL, &m);
	tap_errno(monitor(s, MD, m, 0x5e), 0, "pending: delegate monitor");
	capfd = cap_export(s, m);
	tap_ok(capfd >= 0, "pending: exported as an fd (one delegation)");
	req_new(s, NONE, 8, NULL, 0, NULL, 0, &r);
	param_set("max_queue", 1);
	tap_errno(invoke(s, r, 0, NULL, 0, NULL, 0), 0,
		  "pending: the queue is full");
	w.fd = s;
	w.req = r;
	w.arg = m;
	pthread_create(&th, NULL, deleg_wait_invoke, &w);
	usleep(300000);
	tap_ok(!w.done, "pending: INVOKE_WAIT with the Memory blocks");
	close(capfd);
	usleep(100000);
	for (i = 0; i < 100 && !__atomic_load_n(&w.done, __ATOMIC_SEQ_CST);
	     i++) {
		pthread_kill(th, SIGUSR1);
		usleep(50000);
	}
	pthread_join(th, NULL);
	tap_ok(w.rc == -1 && w.err == EINTR,
	       "pending: the invoke is interrupted (got %d/%s)", w.rc,
	       strerror(w.err));
	tap_ok(!recv_msg(s, FRACTOS_RECV_NONBLOCK, 0, &msg) &&
	       msg.type == FRACTOS_MSG_REQUEST && msg.tag == 8,
	       "pending: the invocation that filled the queue");
	tap_ok(expect_event(s, EV_D, 0x5e, 1000),
	       "pending: then the MONITOR_DELEGATE event fires");
	tap_ok(queue_empty(s), "pending: nothing more");
	param_set("max_queue", oldq);
	cap_close(s, r);
	cap_close(s, m);
	close(s);
}

/* Client death fires the provider's monitor_delegate. */
static void test_client_death(int fd)
{
	int sv[2], ok;
	__u32 m, rp;
	pid_t pid;
	char c;

	mem_new(fd, buf, 256, FRACTOS_PERM_ALL, &m);
	tap_errno(monitor(fd, MD, m, 0xc1), 0, "cdeath: delegate monitor");
	socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);
	pid = fork();
	if (!pid) {
		int s = dev_open();
		__u32 cid, req;

		close(sv[0]);
		/* The client's own Request to receive the Memory by invoke. */
		if (recv_cap(sv[1], s, &cid) || req_new(s, NONE, 4, NULL, 0,
							NULL, 0, &req) ||
		    send_cap(sv[1], s, req))
			_exit(2);
		xwrite(sv[1], "r", 1);
		for (;;)
			pause();
	}
	close(sv[1]);
	ok = !send_cap(sv[0], fd, m);
	ok &= !recv_cap(sv[0], fd, &rp);
	ok &= !invoke(fd, rp, 0, NULL, 0, &m, 1);
	ok &= !xread(sv[0], &c, 1);
	tap_ok(ok, "cdeath: delegated to the client by fd and by a queued invoke");
	usleep(100000);
	tap_ok(queue_empty(fd), "cdeath: no event while the client lives");
	kill_reap(pid);
	tap_ok(expect_event(fd, EV_D, 0xc1, 2000),
	       "cdeath: client killed -> MONITOR_DELEGATE event");
	tap_ok(cap_revoked(fd, m) == 0, "cdeath: our Memory is intact");
	close(sv[0]);
	cap_close(fd, rp);
	cap_close(fd, m);
}

int main(void)
{
	struct snap base;
	int fd;

	need_module();
	tap_start();
	snap_take(&base);
	fd = dev_open();

	test_receive_monitor(fd);
	test_monitor_limits();
	test_event_bound();
	test_delegate_monitor(fd);
	test_provider_death(fd);
	test_client_death(fd);
	test_delegate_pending();

	tap_eq(space_ncaps(fd), 0, "every test closed its cids");
	tap_ok(queue_empty(fd), "no stray message");
	close(fd);
	snap_check(&base, "monitor");
	return tap_end();
}
