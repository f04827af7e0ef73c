// SPDX-License-Identifier: GPL-2.0
/*
 * fractos selftest: limitrace - operations that fail at a limit while
 * another thread revokes what they just made.
 *
 * An operation that makes an object and then fails (the space is at
 * max_caps: EMFILE) must undo its work even though the object became
 * reachable to other threads' revocation the moment it was made: a Request
 * derived from a base is revoked with that base.  Before the fix,
 * REQUEST_CREATE's error path read the new Request's contents, which a
 * concurrent revocation had already taken: a NULL dereference any user
 * could trigger (issue 27).
 *
 * Each case runs a maker thread against a revoker thread for a few
 * seconds, with the space one capability short of its limit:
 *  - derive: REQUEST_CREATE from C, a revocation-tree child of a Request,
 *    with a Memory argument watched by MONITOR_DELEGATE (so the error path
 *    also hands delegations back), while the other thread revokes C,
 *    closes it and makes the next C;
 *  - revtree: CAP_CREATE_REVTREE of C, the same way;
 *  - receive: REQUEST_RECEIVE of a message with two capabilities, room for
 *    one, while the sender revokes what the message carries;
 *  - undo: REQUEST_RECEIVE into an unwritable cid buffer (EFAULT: the cids
 *    it installed are closed again) while another thread of the space
 *    closes the cid the receive takes and dups into it: the failed
 *    receive must close only what it installed, never the dup.
 * Every result must be one the uAPI header lists, the kernel must survive,
 * the delegate monitor must still fire exactly once when the last real
 * delegation ends, and nothing may be left behind.
 *
 * Usage: limitrace [-t SECONDS] [CASE...]   (per case; default 4 s, all)
 */
#define _GNU_SOURCE
#include "fos_proc.h"

#include <getopt.h>

static long old_max_caps = -1;
static double run_s = 4.0;

/* Run @a and @b on @arg for run_s seconds, then set *@stop and join. */
static void race2(void *(*a)(void *), void *(*b)(void *), void *arg,
		  volatile int *stop)
{
	double end = now_ms() + run_s * 1000;
	pthread_t ta, tb;

	*stop = 0;
	pthread_create(&ta, NULL, a, arg);
	pthread_create(&tb, NULL, b, arg);
	while (now_ms() < end)
		usleep(50000);
	__atomic_store_n(stop, 1, __ATOMIC_RELEASE);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
}

/*
 * undo: one thread fails REQUEST_RECEIVEs with EFAULT, the other closes
 * the cid they install (blindly: the lowest free one) and dups into it.
 */
struct urace {
	int fd;
	__u32 base, k;
	volatile int stop;
	long efault, other, dups, lost;
	int other_errno;
};

static void *ureceiver(void *p)
{
	struct urace *u = p;
	static char imm[64];

	while (!__atomic_load_n(&u->stop, __ATOMIC_ACQUIRE)) {
		struct fractos_request_receive a = {
			.flags = FRACTOS_RECV_NONBLOCK,
			.imms = (uintptr_t)imm, .imm_len = sizeof(imm),
			.caps = BADPTR, .ncaps = 4,
		};

		if (!ioctl(u->fd, FRACTOS_IOC_REQUEST_RECEIVE, &a) ||
		    errno != EFAULT) {
			u->other++;
			u->other_errno = errno;
			break;
		}
		u->efault++;
	}
	return NULL;
}

static void *uduper(void *p)
{
	struct urace *u = p;
	struct fractos_cap_info want, got;
	__u32 d;

	cap_info(u->fd, u->base, &want);
	while (!__atomic_load_n(&u->stop, __ATOMIC_ACQUIRE)) {
		cap_close(u->fd, u->k);		/* maybe the receive's */
		if (cap_op(u->fd, FRACTOS_IOC_CAP_DUP, u->base, &d))
			continue;
		u->dups++;
		if (cap_info(u->fd, d, &got) || got.oid.id != want.oid.id ||
		    cap_close(u->fd, d))
			u->lost++;	/* a failed receive closed our dup */
	}
	return NULL;
}

static void test_undo_vs_reuse(void)
{
	struct urace u = { 0 };
	struct snap before;
	static char page[4096];
	__u32 own, mem = 0, caps[1];
	int n0;

	snap_take(&before);
	u.fd = dev_open();
	tap_errno(req_new(u.fd, NONE, 3, NULL, 0, NULL, 0, &own), 0,
		  "undo: a Request to this space");
	tap_errno(mem_new(u.fd, page, sizeof(page), FRACTOS_PERM_ALL, &mem), 0,
		  "undo: a Memory");
	caps[0] = mem;
	tap_errno(invoke(u.fd, own, 0, "m", 1, caps, 1), 0,
		  "undo: a message carrying it, queued");
	u.base = own;
	n0 = space_ncaps(u.fd);
	u.k = n0;	/* the lowest free cid */

	race2(ureceiver, uduper, &u, &u.stop);
	printf("# undo: %ld receives failed with EFAULT, %ld dups\n", u.efault,
	       u.dups);
	tap_ok(u.efault > 1000 && u.dups > 1000, "undo: both threads ran");
	tap_ok(!u.other, "undo: every receive failed with EFAULT (%s)",
	       u.other ? strerror(u.other_errno) : "yes");
	tap_eq(u.lost, 0, "undo: no failed receive closed another thread's cid");
	tap_eq(space_ncaps(u.fd), n0, "undo: nothing left installed");
	close(u.fd);
	snap_check(&before, "undo");
}

static void restore_limit(void)
{
	if (old_max_caps > 0)
		param_set("max_caps", old_max_caps);
}

struct race {
	int fd;
	__u32 base;		/* the root Request C is made from */
	__u32 child;		/* the cid C gets (the one free slot) */
	__u32 mem;		/* a Memory watched by MONITOR_DELEGATE */
	int op;			/* 0: derive, 1: revtree */
	volatile int stop;
	/* maker's results */
	long made, emfile, revoked, badf, other;
	int other_errno;
	/* revoker's results */
	long cycles, rfail;
	int rfail_errno;
};

/* Make from C until told to stop; whatever succeeds is closed again. */
static void *maker(void *p)
{
	struct race *r = p;
	__u32 caps[1] = { r->mem };
	__u32 cid;
	int ret;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		if (r->op == 0)
			ret = req_new(r->fd, r->child, 0, "x", 1, caps, 1,
				      &cid);
		else
			ret = cap_op(r->fd, FRACTOS_IOC_CAP_CREATE_REVTREE,
				     r->child, &cid);
		if (!ret) {
			r->made++;
			cap_close(r->fd, cid);
		} else if (errno == EMFILE) {
			r->emfile++;
		} else if (errno == EKEYREVOKED) {
			r->revoked++;
		} else if (errno == EBADF) {
			r->badf++;	/* between close and the next C */
		} else {
			r->other++;
			r->other_errno = errno;
		}
	}
	return NULL;
}

/* Make C in the free slot, revoke it, close it; again. */
static void *revoker(void *p)
{
	struct race *r = p;
	__u32 cid;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		if (cap_op(r->fd, FRACTOS_IOC_CAP_CREATE_REVTREE, r->base,
			   &cid)) {
			if (errno != EMFILE) {
				r->rfail++;
				r->rfail_errno = errno;
			}
			continue;	/* the maker holds the slot a moment */
		}
		if (cap_revoke(r->fd, cid)) {
			r->rfail++;
			r->rfail_errno = errno;
		}
		cap_close(r->fd, cid);
		r->cycles++;
	}
	return NULL;
}

static void test_make_vs_revoke(int op, const char *what)
{
	static char buf[4096];
	struct race r = { .op = op };
	struct snap before;
	struct msg m;
	__u32 cid, caps[1];
	int n0, events = 0;

	snap_take(&before);
	r.fd = dev_open();
	tap_errno(req_new(r.fd, NONE, 7, NULL, 0, NULL, 0, &r.base), 0,
		  "%s: root Request", what);
	tap_errno(mem_new(r.fd, buf, sizeof(buf), FRACTOS_PERM_ALL, &r.mem), 0,
		  "%s: Memory argument", what);
	tap_errno(monitor(r.fd, FRACTOS_IOC_MONITOR_DELEGATE, r.mem, 99), 0,
		  "%s: MONITOR_DELEGATE on it", what);
	n0 = space_ncaps(r.fd);
	r.child = n0;	/* the lowest free cid */
	tap_errno(param_set("max_caps", n0 + 1), 0,
		  "%s: max_caps lowered to %d (one free slot)", what, n0 + 1);

	race2(maker, revoker, &r, &r.stop);
	printf("# %s: %ld made, %ld EMFILE, %ld EKEYREVOKED, %ld EBADF, %ld other; %ld revocations\n",
	       what, r.made, r.emfile, r.revoked, r.badf, r.other, r.cycles);
	tap_ok(r.emfile > 0 && r.revoked + r.badf > 0,
	       "%s: the maker failed at the limit and on revoked bases", what);
	tap_ok(r.cycles > 100, "%s: %ld revocations raced it", what,
	       r.cycles);
	tap_ok(!r.other, "%s: every failure EMFILE, EKEYREVOKED or EBADF (other: %s)",
	       what, r.other ? strerror(r.other_errno) : "none");
	tap_ok(!r.rfail, "%s: every revocation succeeded (%s)", what,
	       r.rfail ? strerror(r.rfail_errno) : "ok");
	tap_eq(space_ncaps(r.fd), n0, "%s: only the set-up's caps are left",
	       what);

	tap_errno(param_set("max_caps", old_max_caps), 0,
		  "%s: max_caps restored", what);
	/*
	 * The delegation count of the Memory is right: the delegate monitor
	 * fires once in all, when the last real delegation has ended (during
	 * the race, if a revocation took a made Request with its delegation,
	 * or now).
	 */
	caps[0] = r.mem;
	tap_errno(req_new(r.fd, r.base, 0, NULL, 0, caps, 1, &cid), 0,
		  "%s: one real delegation of the Memory", what);
	tap_errno(cap_revoke(r.fd, cid), 0, "%s: ...revoked", what);
	cap_close(r.fd, cid);
	while (!recv_ms(r.fd, &m, 500)) {
		if (m.type == FRACTOS_MSG_MONITOR_DELEGATE && m.tag == 99)
			events++;
	}
	tap_eq(events, 1, "%s: the delegate monitor fired exactly once",
	       what);
	close(r.fd);
	snap_check(&before, what);
}

/*
 * A receiver with room for one more cid receives a message with two
 * capabilities (EMFILE, the message stays queued) while the sender
 * revokes one of them and sends the next message.
 */
struct rrace {
	int snd, rcv;
	__u32 req;	/* the receiver's Request, in snd */
	volatile int stop;
	long sent, emfile, got, other, rother;
	int other_errno;
};

static void *rsender(void *p)
{
	struct rrace *r = p;
	static char page[4096];
	__u32 caps[2];

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		if (mem_new(r->snd, page, sizeof(page), FRACTOS_PERM_ALL,
			    &caps[0]))
			continue;
		if (cap_op(r->snd, FRACTOS_IOC_CAP_CREATE_REVTREE, caps[0],
			   &caps[1])) {
			cap_close(r->snd, caps[0]);
			continue;
		}
		if (!invoke(r->snd, r->req, 0, NULL, 0, caps, 2))
			r->sent++;
		else if (errno != EAGAIN)
			r->rother++;
		cap_revoke(r->snd, caps[1]);
		cap_revoke(r->snd, caps[0]);
		cap_close(r->snd, caps[1]);
		cap_close(r->snd, caps[0]);
	}
	return NULL;
}

static void *rreceiver(void *p)
{
	struct rrace *r = p;
	static struct msg m;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		if (!recv_ms(r->rcv, &m, 20)) {
			r->got++;	/* never: there is room for one */
			for (__u32 i = 0; i < m.ncaps; i++)
				cap_close(r->rcv, m.caps[i]);
		} else if (errno == EMFILE) {
			r->emfile++;
		} else if (errno != ETIMEDOUT && errno != EAGAIN) {
			r->other++;
			r->other_errno = errno;
		}
	}
	return NULL;
}

static void test_receive_vs_revoke(void)
{
	struct rrace r = { 0 };
	struct snap before;
	__u32 own, dup[2];
	int n0;

	snap_take(&before);
	r.snd = dev_open();
	r.rcv = dev_open();
	tap_errno(req_new(r.rcv, NONE, 5, NULL, 0, NULL, 0, &own), 0,
		  "receive: the receiver's Request");
	tap_errno(cap_move(r.rcv, own, r.snd, &r.req), 0,
		  "receive: given to the sender");
	/* max_caps is global: the sender needs 3 cids, the receiver n0 + 1 */
	tap_errno(cap_op(r.rcv, FRACTOS_IOC_CAP_DUP, own, &dup[0]) ||
		  cap_op(r.rcv, FRACTOS_IOC_CAP_DUP, own, &dup[1]), 0,
		  "receive: the receiver holds 3 cids");
	n0 = space_ncaps(r.rcv);
	tap_errno(param_set("max_caps", n0 + 1), 0,
		  "receive: max_caps lowered to %d", n0 + 1);

	race2(rsender, rreceiver, &r, &r.stop);
	printf("# receive: %ld sent, %ld EMFILE, %ld received\n", r.sent,
	       r.emfile, r.got);
	tap_ok(r.sent > 0 && r.emfile > 0,
	       "receive: messages sent and refused at the limit");
	tap_eq(r.got, 0, "receive: none received with room for one cid");
	tap_ok(!r.other && !r.rother,
	       "receive: no other error (%s)",
	       r.other ? strerror(r.other_errno) : "none");
	tap_eq(space_ncaps(r.rcv), n0, "receive: no cid left installed");
	tap_errno(param_set("max_caps", old_max_caps), 0,
		  "receive: max_caps restored");
	close(r.snd);
	close(r.rcv);
	snap_check(&before, "receive");
}

static int want(int argc, char **argv, const char *name)
{
	int i;

	if (optind >= argc)
		return 1;
	for (i = optind; i < argc; i++)
		if (!strcmp(argv[i], name))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	int c;

	while ((c = getopt(argc, argv, "t:")) != -1) {
		if (c == 't')
			run_s = atof(optarg);
		else
			return 2;
	}
	need_module();
	tap_start();
	old_max_caps = param_get("max_caps");
	if (old_max_caps <= 0)
		tap_bail("max_caps parameter");
	atexit(restore_limit);

	if (want(argc, argv, "derive"))
		test_make_vs_revoke(0, "derive");
	if (want(argc, argv, "revtree"))
		test_make_vs_revoke(1, "revtree");
	if (want(argc, argv, "receive"))
		test_receive_vs_revoke();
	if (want(argc, argv, "undo"))
		test_undo_vs_reuse();
	return tap_end();
}
