// SPDX-License-Identifier: GPL-2.0
/*
 * fractos selftest: concurrency - invokers racing a revoke, several
 * receivers on one queue, invoker processes racing a provider kill -9,
 * monitor registration racing revocation, derive/invoke/close racing
 * revocation.  No crash, every result is success or EKEYREVOKED, message
 * counts add up.
 */
#define _GNU_SOURCE
#include "fos_proc.h"

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
