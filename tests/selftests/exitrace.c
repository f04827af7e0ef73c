// SPDX-License-Identifier: GPL-2.0
/*
 * fractos selftest: a dying space, its monitors and its queue (issue 13).
 *
 * A space being released revokes what it owns, which fires the monitors
 * that other spaces (and itself) registered on those objects, then closes
 * its queue, then drops its capabilities.  The release drops fos_tree_lock
 * and releases in batches when a reschedule is due, so these tests keep
 * both CPUs wanted (spinning threads) while a space with thousands of
 * monitored objects goes away, and kill a provider in a loop with varied
 * timing.  Every event must arrive exactly once, no more, no less, every
 * invoker must be told, and the live counters must come back.  A space
 * that goes away also takes the registrations it made on the objects of
 * others with it.
 *
 * Usage: exitrace [-n OBJECTS] [-i ITERATIONS] [-p PROVIDER_OBJECTS] [-s SEED]
 *                 [-t many|self|death]
 * (-t runs one part only; the default runs all three).  A SIGTERM (run_all's
 * timeout) restores the max_queue parameter the death loop lowers.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/resource.h>
#include "fos_proc.h"

/* run_all.sh reads this line from the binary: the loop is long on TCG. */
static const char run_all_timeout[] __attribute__((used)) =
	"\n# timeout: 900\n";

#define MR	FRACTOS_IOC_MONITOR_RECEIVE
#define MD	FRACTOS_IOC_MONITOR_DELEGATE
#define EV_R	FRACTOS_MSG_MONITOR_RECEIVE
#define EV_D	FRACTOS_MSG_MONITOR_DELEGATE

static unsigned int nobjs = 20000;
static unsigned int iters = 200;
static unsigned int seed;
static const char *only;

/* ---- CPU hogs: keep need_resched() true in the release path ---------- */

/*
 * One spinning thread per CPU, and the calling thread pinned to CPU 0
 * beside one of them, so that the tick finds another runnable task on
 * the releasing thread's CPU (left to itself the scheduler may put the
 * spinners on the other CPU).  Children forked meanwhile inherit the pin.
 */
#define NHOGS	2

static volatile int spin_stop;

static void *spin(void *p)
{
	volatile unsigned long n = 0;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET((int)(long)p, &set);
	sched_setaffinity(0, sizeof(set), &set);
	while (!__atomic_load_n(&spin_stop, __ATOMIC_RELAXED))
		n++;
	return NULL;
}

struct hogs {
	pthread_t th[NHOGS];
	cpu_set_t saved;
};

static void hogs_start(struct hogs *h)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;
	long i;

	sched_getaffinity(0, sizeof(h->saved), &h->saved);
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
	__atomic_store_n(&spin_stop, 0, __ATOMIC_RELAXED);
	for (i = 0; i < NHOGS; i++)
		if (pthread_create(&h->th[i], NULL, spin,
				   (void *)(i % (ncpu > 0 ? ncpu : 1))))
			tap_bail("pthread_create");
	usleep(20000);	/* let them run */
}

static void hogs_stop(struct hogs *h)
{
	unsigned int i;

	__atomic_store_n(&spin_stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < NHOGS; i++)
		pthread_join(h->th[i], NULL);
	sched_setaffinity(0, sizeof(h->saved), &h->saved);
}

/*
 * Receive every queued message of @fd without waiting.  Monitor events
 * whose cookie has @tagbit set are counted in @seen[cookie & ~tagbit];
 * returns the number of other messages, or -1 after an unexpected error.
 */
static long drain(int fd, __u64 tagbit, unsigned char *seen, unsigned int n,
		  unsigned int *bad)
{
	static struct msg m;
	long other = 0;

	for (;;) {
		if (recv_msg(fd, FRACTOS_RECV_NONBLOCK, 0, &m)) {
			if (errno == EAGAIN)
				return other;
			tap_diag("  receive: %s", strerror(errno));
			return -1;
		}
		if ((m.type == EV_R || m.type == EV_D) && (m.tag & tagbit) &&
		    (m.tag & ~tagbit) < n) {
			if (seen[m.tag & ~tagbit] < 255)
				seen[m.tag & ~tagbit]++;
		} else if (m.type == EV_R || m.type == EV_D) {
			(*bad)++;
		} else {
			other++;
		}
	}
}

/* How many entries of @seen are not exactly 1; the first is reported. */
static unsigned int not_once(const unsigned char *seen, unsigned int n,
			     const char *what)
{
	unsigned int i, wrong = 0;

	for (i = 0; i < n; i++) {
		if (seen[i] == 1)
			continue;
		if (!wrong)
			tap_diag("  %s: cookie %u seen %u times", what, i,
				 seen[i]);
		wrong++;
	}
	return wrong;
}

/* Exactly one message, a monitor event @type/@cookie, within 2 s. */
static int expect_one(int fd, __u32 type, __u64 cookie)
{
	static struct msg m;

	return !recv_ms(fd, &m, 2000) && m.type == type && m.tag == cookie;
}

/* ---- the many-monitors close ------------------------------------------ */

#define TAG_B	(1ULL << 40)	/* B's registrations */
#define TAG_A	(1ULL << 41)	/* A's own registrations */

/*
 * Space A creates @nobjs Requests; space B imports each one and registers
 * MONITOR_RECEIVE on it (every third one twice), A registers one on each
 * of every fifth of its own.  Two threads spin; A's fd is closed.
 * @b_first: B is closed before A, so that A's release fires B's
 * registrations on a closed queue (nothing to see: only the counters).
 */
static void many_monitors(unsigned int round, int b_first)
{
	unsigned char *seen = calloc(nobjs, 1);
	unsigned int i, bad = 0, want2 = 0, regs = 0;
	__u32 *bcid = calloc(nobjs, sizeof(*bcid));
	int a = dev_open(), b = dev_open(), ok = 1;
	static struct msg late;
	struct rusage ru0, ru1;
	struct hogs h;
	struct snap s0;
	long other;
	double t0;

	if (!seen || !bcid)
		tap_bail("calloc");
	snap_take(&s0);
	s0.v[0] -= 2;	/* both spaces are closed at the end */
	for (i = 0; i < nobjs && ok; i++) {
		__u32 r;

		ok = !req_new(a, NONE, i, NULL, 0, NULL, 0, &r) &&
		     !cap_move(a, r, b, &bcid[i]) &&
		     !monitor(b, MR, bcid[i], TAG_B | i);
		regs++;
		if (ok && i % 3 == 0) {
			ok = !monitor(b, MR, bcid[i], TAG_B | i);
			want2++;
			regs++;
		}
		if (ok && i % 5 == 0)
			ok = !monitor(a, MR, r, TAG_A | i);
	}
	if (!tap_ok(ok, "many[%u]: %u Requests of A imported and monitored "
		    "by B (%u registrations)", round, nobjs, regs))
		tap_diag("  at object %u: %s", i - 1, strerror(errno));

	if (b_first) {
		close(b);
		b = -1;
	}
	hogs_start(&h);
	getrusage(RUSAGE_THREAD, &ru0);
	t0 = now_ms();
	close(a);
	t0 = now_ms() - t0;
	getrusage(RUSAGE_THREAD, &ru1);
	hogs_stop(&h);
	tap_diag("many[%u]: A released in %.0f ms, preempted %ld times",
		 round, t0, ru1.ru_nivcsw - ru0.ru_nivcsw);

	if (b_first) {
		/* Nothing can receive: the counters say it all. */
		snap_check(&s0, "many (B closed first)");
		goto out;
	}
	other = drain(b, TAG_B, seen, nobjs, &bad);
	tap_eq(other, 0, "many[%u]: nothing but monitor events", round);
	tap_eq(bad, 0, "many[%u]: no event with a foreign cookie", round);
	for (i = 0; i < nobjs; i++)
		if (seen[i] == 2 && i % 3 == 0)
			seen[i] = 1;	/* registered twice */
	tap_eq(not_once(seen, nobjs, "B"), 0,
	       "many[%u]: every registration of B fired exactly once", round);
	tap_errno(invoke(b, bcid[nobjs - 1], 0, NULL, 0, NULL, 0),
		  EKEYREVOKED, "many[%u]: B's imported Request is revoked",
		  round);
	usleep(100000);
	tap_errno(recv_msg(b, FRACTOS_RECV_NONBLOCK, 0, &late), EAGAIN,
		  "many[%u]: no late event", round);
	close(b);
	snap_check(&s0, "many");
out:
	free(seen);
	free(bcid);
}

/* ---- registrations of a space that goes away ------------------------ */

/*
 * Space B registers monitors on A's objects and goes away while they live:
 * its registrations are cancelled at once (nothing could receive their
 * events), not kept as long as A's objects; A notices nothing.
 */
static void cancel_on_close(void)
{
	static char buf[4096];
	long mon0 = live("monitors");
	int a = dev_open(), b = dev_open(), ok = 1;
	__u32 r, m, br, bm, d;
	static struct msg ev;
	unsigned int i;

	if (req_new(a, NONE, 1, NULL, 0, NULL, 0, &r) ||
	    mem_new(a, buf, 64, FRACTOS_PERM_ALL, &m))
		tap_bail("cancel setup");
	tap_errno(monitor(a, MD, m, 0x42), 0,
		  "cancel: A watches its Memory's delegations");
	tap_errno(monitor(a, MR, r, 0x43), 0, "cancel: and its Request");
	if (cap_move(a, r, b, &br) || cap_move(a, m, b, &bm) ||
	    req_new(b, br, 0, "x", 1, NULL, 0, &d))
		tap_bail("cancel setup");
	for (i = 0; i < 1000 && ok; i++)
		ok = !monitor(b, MR, i % 2 ? br : bm, i) &&
		     !(i % 10 == 0 && monitor(b, MR, d, i));
	tap_ok(ok, "cancel: B registered 1100 monitors on A's objects");
	tap_eq(live("monitors") - mon0, 1102, "cancel: counted as live");
	close(b);
	/* A's monitor_delegate fired as B's delegation ended: one left. */
	tap_eq(live("monitors") - mon0, 1,
	       "cancel: B's registrations went with B, A's stay");
	tap_ok(expect_one(a, EV_D, 0x42),
	       "cancel: B's delegations ended: A's monitor_delegate fired");
	tap_errno(cap_revoke(a, r), 0, "cancel: A revokes its Request");
	tap_ok(expect_one(a, EV_R, 0x43), "cancel: A's own monitor fired");
	tap_errno(recv_msg(a, FRACTOS_RECV_NONBLOCK, 0, &ev), EAGAIN,
		  "cancel: and nothing else reached A");
	close(a);
	tap_eq(live("monitors"), mon0, "cancel: none left");
}

/* ---- provider death in a loop ----------------------------------------- */

/*
 * Extra objects of the provider, each monitored by itself: their revocation
 * spans a few scheduler ticks (~4 us each under TCG), and at nice 19 the
 * provider is due for preemption at each of them.
 */
/* Self-monitored objects of each provider of the death loop (-p). */
static unsigned int nown = 2000;

/* The provider: its Request goes to the parent; then it waits to die. */
static void provider(int sock)
{
	int s = dev_open();
	__u32 cid, x;
	unsigned int i;
	char c;

	if (req_new(s, NONE, 3, NULL, 0, NULL, 0, &cid) ||
	    monitor(s, MR, cid, 1))
		_exit(2);
	/* More objects to revoke, each firing into the dying queue. */
	for (i = 0; i < nown; i++)
		if (req_new(s, NONE, 4, NULL, 0, NULL, 0, &x) ||
		    monitor(s, MR, x, 2) || (i % 4 == 0 && monitor(s, MD, x, 3)))
			_exit(3);
	if (setpriority(PRIO_PROCESS, 0, 19) || send_cap(sock, s, cid))
		_exit(4);
	/* A byte from the parent: exit on our own; else wait to be killed. */
	if (read(sock, &c, 1) == 1)
		_exit(0);
	for (;;)
		pause();
}

/* Involuntary context switches of a (stopped or sleeping) child so far. */
static long child_nivcsw(pid_t pid)
{
	char path[64], line[128];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "nonvoluntary_ctxt_switches: %ld", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* xorshift32: the loop's timing, reproducible from the seed. */
static unsigned int rnd(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 17;
	seed ^= seed << 5;
	return seed;
}

/* max_queue before the death loop lowered it, for the SIGTERM handler. */
static long saved_maxq = -1;

static void on_term(int sig)
{
	char v[24];
	int fd, n;

	if (saved_maxq >= 0) {
		n = snprintf(v, sizeof(v), "%ld\n", saved_maxq);
		fd = open(PARAM_DIR "max_queue", O_WRONLY);
		if (fd >= 0) {
			if (write(fd, v, n) != n)
				n = 0;
			close(fd);
		}
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static void provider_death_loop(int fd)
{
	long oldq = param_get("max_queue");
	unsigned int it, fail_setup = 0, fail_waiter = 0, fail_events = 0;
	unsigned int fail_later = 0, fail_msgs = 0, first = 0;
	long preempted = 0;
	long msgs0 = live("messages");
	static struct msg m;
	struct hogs h;
	struct snap s0;

	snap_take(&s0);
	saved_maxq = oldq;
	param_set("max_queue", 3);
	hogs_start(&h);
	for (it = 0; it < iters; it++) {
		struct waiter w = { .fd = fd, .rc = 0 };
		struct rusage ru;
		long nivcsw;
		unsigned int delay = rnd() % 4000, evr = 0, evd = 0, bad = 0;
		int sv[2], ok = 1, mode = it % 3;
		pthread_t th;
		__u32 r, d;
		pid_t pid;

		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
			tap_bail("socketpair");
		pid = fork();
		if (pid < 0)
			tap_bail("fork");
		if (!pid) {
			close(sv[0]);
			provider(sv[1]);
		}
		close(sv[1]);
		if (recv_cap(sv[0], fd, &r) || req_new(fd, r, 0, "d", 1, NULL,
						       0, &d) ||
		    monitor(fd, MR, r, 0xdead) || monitor(fd, MR, d, 0xdee)) {
			if (!fail_setup++)
				tap_diag("  iteration %u: setup: %s", it,
					 strerror(errno));
			kill_reap(pid);
			close(sv[0]);
			continue;
		}
		/* Fill the provider's queue; then one invoker waits. */
		for (unsigned int i = 0; i < 3; i++)
			ok &= !invoke(fd, d, 0, NULL, 0, NULL, 0);
		w.cid = r;
		pthread_create(&th, NULL, wait_invoke, &w);
		/*
		 * Vary where the end lands: SIGKILL right away (the waiter
		 * may not have blocked yet), SIGKILL after a random pause,
		 * or an exit of the provider's own after a random pause.
		 */
		if (mode)
			usleep(delay);
		nivcsw = child_nivcsw(pid);
		if (mode != 2 || write(sv[0], "x", 1) != 1)
			kill(pid, SIGKILL);
		if (wait4(pid, NULL, 0, &ru) == pid && nivcsw >= 0)
			preempted += ru.ru_nivcsw - nivcsw;
		pthread_join(th, NULL);
		if (!ok || w.rc != -1 || w.err != EKEYREVOKED) {
			if (!fail_waiter++ && !first)
				first = it + 1;
			if (fail_waiter == 1)
				tap_diag("  iteration %u: invokes %d, waiter "
					 "%d/%s", it, ok, w.rc,
					 strerror(w.err));
		}
		if (invoke(fd, d, 0, NULL, 0, NULL, 0) != -1 ||
		    errno != EKEYREVOKED)
			fail_later++;
		/* Exactly one event per registration, nothing else. */
		while (!recv_ms(fd, &m, evr && evd ? 0 : 2000)) {
			if (m.type == EV_R && m.tag == 0xdead)
				evr++;
			else if (m.type == EV_R && m.tag == 0xdee)
				evd++;
			else
				bad++;
		}
		if (evr != 1 || evd != 1 || bad) {
			if (!fail_events++)
				tap_diag("  iteration %u: events %u/%u, "
					 "%u others", it, evr, evd, bad);
			if (!first)
				first = it + 1;
		}
		if (live("messages") != msgs0)
			fail_msgs++;
		cap_close(fd, d);
		cap_close(fd, r);
		close(sv[0]);
		if ((it + 1) % 50 == 0)
			tap_diag("death loop: %u iterations, providers "
				 "preempted %ld times while exiting", it + 1,
				 preempted);
	}
	hogs_stop(&h);
	param_set("max_queue", oldq);
	saved_maxq = -1;
	tap_eq(fail_setup, 0, "death loop: %u providers set up", iters);
	tap_eq(fail_waiter, 0, "death loop: the waiting invoker fails "
	       "EKEYREVOKED and the queue was full, every time");
	tap_eq(fail_later, 0, "death loop: later invokes fail EKEYREVOKED");
	tap_eq(fail_events, 0, "death loop: both monitors fired exactly once, "
	       "every time");
	tap_eq(fail_msgs, 0, "death loop: pending invocations and events "
	       "dropped, every time");
	if (first)
		tap_diag("death loop: first failure at iteration %u (seed %u)",
			 first - 1, seed);
	snap_check(&s0, "death loop");
}

/* ---- a dying queue that holds what its own monitors watch ------------- */

/*
 * Space S has, on its own queue, an invocation carrying the only
 * capability to a Memory of its own whose monitor_delegate delivers to
 * that same queue, and an invocation carrying a Memory of another space T
 * watched by S.  S is closed, then T: the queue drains messages whose
 * objects' registrations deliver to, or are dropped from, the very queue
 * being closed.
 */
static void self_queue(void)
{
	static char buf[4096];
	int s = dev_open(), t = dev_open();
	struct snap s0;
	__u32 r, m, mt, mts;

	snap_take(&s0);
	s0.v[0] -= 2;	/* both spaces are closed at the end */
	if (req_new(s, NONE, 9, NULL, 0, NULL, 0, &r) ||
	    mem_new(s, buf, 64, FRACTOS_PERM_ALL, &m) ||
	    monitor(s, MD, m, 0x77) ||
	    mem_new(t, buf + 64, 64, FRACTOS_PERM_ALL, &mt) ||
	    cap_move(t, mt, s, &mts) || monitor(s, MR, mts, 0x78))
		tap_bail("self-queue setup");
	tap_errno(invoke(s, r, 0, NULL, 0, &m, 1), 0,
		  "self-queue: S invokes itself with its watched Memory");
	tap_errno(invoke(s, r, 0, NULL, 0, &mts, 1), 0,
		  "self-queue: and with T's watched Memory");
	cap_close(s, m);
	cap_close(s, mts);
	close(s);
	close(t);
	snap_check(&s0, "self-queue");
}

int main(int argc, char **argv)
{
	int opt, fd;

	seed = (unsigned int)time(NULL) ^ (unsigned int)getpid();
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	while ((opt = getopt(argc, argv, "n:i:p:s:t:")) != -1) {
		switch (opt) {
		case 'n':
			nobjs = strtoul(optarg, NULL, 0);
			break;
		case 'i':
			iters = strtoul(optarg, NULL, 0);
			break;
		case 'p':
			nown = strtoul(optarg, NULL, 0);
			break;
		case 's':
			seed = strtoul(optarg, NULL, 0);
			break;
		case 't':
			only = optarg;
			break;
		default:
			fprintf(stderr, "usage: %s [-n OBJECTS] [-i ITERATIONS]"
				" [-p PROVIDER_OBJECTS] [-s SEED] [-t many|self|death]\n",
				argv[0]);
			return 2;
		}
	}
	if (!seed)
		seed = 1;
	need_module();
	tap_start();
	tap_diag("objects %u, iterations %u, provider objects %u, seed %u",
		 nobjs, iters, nown, seed);

	if (!only || !strcmp(only, "many")) {
		many_monitors(0, 0);
		many_monitors(1, 0);
		many_monitors(2, 1);
	}
	if (!only || !strcmp(only, "self")) {
		self_queue();
		cancel_on_close();
	}
	if (!only || !strcmp(only, "death")) {
		fd = dev_open();
		provider_death_loop(fd);
		close(fd);
	}
	return tap_end();
}
