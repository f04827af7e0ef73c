// SPDX-License-Identifier: GPL-2.0
/*
 * fosfuzz: a grammar fuzzer of the fractos uAPI, run as root in a guest
 * with the module loaded (tests/fuzz/run boots one).
 *
 *   fosfuzz [--seed N] [--duration S] [--programs N] [--ops N]
 *           [--loopback | --peer NODE] [--replay FILE]... [--out DIR] [--uid UID]
 *           [--memlock BYTES] [--cov-sites N] [--no-minimize] [--low-limits] [-v]
 *
 * The driver generates programs (ops.c: lists of op seeds, from a master
 * generator seeded by --seed, so a run without coverage feedback is
 * deterministic) and runs each in a fresh worker process that drops to
 * --uid (default 65534) under RLIMIT_MEMLOCK --memlock.  Between programs
 * it checks the invariants:
 *   - no op returned an errno the header does not document for it, and no
 *     op that must fail succeeded (the worker exits FZ_EXIT_VIOLATION);
 *   - no worker hung (60 s) or died of anything but its own SIGKILLs;
 *   - no splat in the kernel log (BUG, WARNING, KASAN, UBSAN, KFENCE,
 *     lockdep, Oops, list corruption, refcount, hung task);
 *   - every live-object counter back to its value at start once every
 *     process of the program has exited (10 s grace for deferred work, 25 s
 *     with --loopback; releases slower than 2 s are counted and reported);
 *   - every 16 programs and at the end: the workers' user can pin exactly
 *     its RLIMIT_MEMLOCK again (no leaked pin charge).
 * A failing program is minimized (op seeds removed while it fails the same
 * way) and saved to DIR/fail-SEED-N.prog; replay it with --replay.  Saved
 * programs under tests/fuzz/regress/ are replayed by every run.
 *
 * With --peer NODE (two guests, tests/multinode/fuzz.sh: NODE runs
 * fosfuzz --peer back at the same time, the nodes already connected),
 * lookups with FRACTOS_NAME_NODE ask NODE, whose workers publish the same
 * names: the programs reach each other's objects through proxies.
 *
 * With --low-limits every limit of the module is lowered for the run (and
 * restored after it): max_caps 40, max_queue 6, max_names 4, max_pin_bytes
 * 256 KiB, fabric_peer_work 2, fabric_peer_grants 4, and the workers'
 * RLIMIT_MEMLOCK 256 KiB unless --memlock says otherwise.  Programs then
 * hit "over the limit" paths (EMFILE, EAGAIN, ENOSPC, ...) all the time
 * while other processes revoke, kill and close: the error paths that undo
 * work another thread can already see (issue 27's REQUEST_CREATE oops).
 *
 * With KCOV (the debug kernel), programs that reach new PCs of the module
 * are kept and mutated (coverage-guided); --cov-sites (the number of
 * instrumented sites in fractos.ko) turns the count into a percentage.
 *
 * Output is TAP: one line per replayed program, one for the fuzz run, one
 * for the final pin check, and a "# fosfuzz:" summary line.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "fuzz.h"
#include "../selftests/fos_util.h"
#include "../selftests/fos_nl.h"

struct fz_opts fz_opts = { .uid = 65534, .memlock = 8UL << 20 };
struct fz_stats *fz_stats;

static uint64_t master;
static const char *outdir = "/tmp/fosfuzz";
static unsigned int max_ops = 200;
static int minimize = 1;
static unsigned long cov_sites;
static int kmsg = -1;
static int tap_n, tap_bad;

static uint64_t mrand(void)
{
	uint64_t z = (master += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t mbelow(uint64_t n)
{
	return n ? mrand() % n : 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void tap(int ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void tap(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", ok ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (!ok)
		tap_bad++;
}

/* ---- results -------------------------------------------------------- */

enum fz_kind { RES_OK, RES_VIOLATION, RES_CRASH, RES_HANG, RES_SETUP, RES_LEAK, RES_SPLAT };
static const char *const kind_name[] = {
	"ok", "violation", "crash", "hang", "setup", "leak", "splat",
};

struct result {
	enum fz_kind kind;
	char why[512];
};

/* ---- the kernel log ------------------------------------------------- */

static const char *const splats[] = {
	"BUG:", "WARNING:", "KASAN", "UBSAN", "KFENCE", "Oops", "kernel BUG",
	"general protection fault", "possible circular locking",
	"possible recursive locking", "inconsistent lock state",
	"suspicious RCU usage", "corruption", "refcount_t:", "INFO: task",
	"sleeping function called from invalid context", "lock held when returning",
	"unreferenced object", "Call Trace",
};

static void kmsg_open(void)
{
	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (kmsg >= 0)
		lseek(kmsg, 0, SEEK_END);
}

/* 1 and the first splat line in @why if the log has one since last time. */
static int kmsg_splat(char *why, size_t len)
{
	char rec[2048];
	int found = 0;
	ssize_t n;
	size_t i;

	if (kmsg < 0)
		return 0;
	for (;;) {
		n = read(kmsg, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;
		if (n <= 0)
			break;
		rec[n] = 0;
		for (i = 0; i < sizeof(splats) / sizeof(splats[0]) && !found; i++)
			if (strstr(rec, splats[i])) {
				char *msg = strchr(rec, ';');

				snprintf(why, len, "kernel log: %s", msg ? msg + 1 : rec);
				why[strcspn(why, "\n")] = 0;
				found = 1;
			}
	}
	return found;
}

/* ---- live counters -------------------------------------------------- */

#define NLIVE 24
static char live_name[NLIVE][32];
static long long live_base[NLIVE];
static int nlive;

static void live_baseline(void)
{
	DIR *d = opendir(FOS_LIVE_DIR);
	struct dirent *e;

	nlive = 0;
	while (d && (e = readdir(d)) && nlive < NLIVE) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(live_name[nlive], sizeof(live_name[0]), "%s", e->d_name);
		live_base[nlive] = fos_live(e->d_name);
		nlive++;
	}
	if (d)
		closedir(d);
}

/*
 * 0 when every counter is back to its baseline within @secs; the counters
 * still off are listed in @why.  A release that takes longer than
 * SLOW_RELEASE_S (deferred work, a fabric call waiting out its timeout) is
 * counted in slow_releases.
 */
#define SLOW_RELEASE_S	2.0
static unsigned long slow_releases;
static double slowest_release;

/*
 * With --peer, another node's programs may hold our objects (exports keep
 * them, and their Memory, Requests and grants) while they run: only what
 * is ours alone is checked after each program.  The script running both
 * nodes checks everything once both are done (tests/multinode/fuzz.sh).
 */
static int live_checked(int i)
{
	static const char *const shared[] = {
		"exports", "objects", "memories", "requests", "grants",
		"pinned_pages",
	};
	unsigned int k;

	if (!fz_opts.peer)
		return 1;
	for (k = 0; k < sizeof(shared) / sizeof(shared[0]); k++)
		if (!strcmp(live_name[i], shared[k]))
			return 0;
	return 1;
}

static int live_settled(double secs, char *why, size_t len)
{
	double t0 = now(), t;
	int i, bad;
	size_t l;

	do {
		bad = -1;
		for (i = 0; i < nlive && bad < 0; i++)
			if (live_checked(i) && fos_live(live_name[i]) != live_base[i])
				bad = i;
		t = now() - t0;
		if (bad < 0) {
			if (t > SLOW_RELEASE_S)
				slow_releases++;
			if (t > slowest_release)
				slowest_release = t;
			return 0;
		}
		usleep(20000);
	} while (t < secs);
	snprintf(why, len, "%.0f s after the program:", secs);
	for (i = 0; i < nlive; i++) {
		long long v = fos_live(live_name[i]);

		l = strlen(why);
		if (v != live_base[i] && live_checked(i))
			snprintf(why + l, len - l, " live/%s %lld (was %lld)",
				 live_name[i], v, live_base[i]);
	}
	return -1;
}

/*
 * How long releases may take: 10 s, or with the fabric 25 s (a call to a
 * node waits up to 10 s for its answer plus 1 s per MiB, and what it holds
 * is released when it ends).
 */
static double settle_s(void)
{
	return fz_opts.loopback || fz_opts.peer ? 25 : 10;
}

/* ---- workers -------------------------------------------------------- */

static void drop_privileges(void)
{
	struct rlimit rl = { fz_opts.memlock, fz_opts.memlock };

	if (setrlimit(RLIMIT_MEMLOCK, &rl) || setgroups(0, NULL) ||
	    setresgid(fz_opts.uid, fz_opts.uid, fz_opts.uid) ||
	    setresuid(fz_opts.uid, fz_opts.uid, fz_opts.uid)) {
		perror("fosfuzz: dropping privileges");
		_exit(FZ_EXIT_SETUP);
	}
}

static void worker(const struct fz_prog *p)
{
	struct fz_state st;
	unsigned int i;

	setpgid(0, 0);
	fz_kcov_open();
	drop_privileges();
	fz_state_init(&st, "worker");
	fz_state_populate(&st);
	fz_kcov_enable();
	for (i = 0; i < p->n; i++) {
		fz_run_op(&st, p->op[i]);
		fz_kcov_collect();
	}
	fz_state_fini(&st);
	fz_kcov_collect();
	_exit(0);
}

/* Every process of process group @pgid: state and kernel stack. */
static void dump_group(pid_t pgid)
{
	DIR *d = opendir("/proc");
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char path[300], buf[4096];
		int pid, pg;
		char st;

		pid = atoi(e->d_name);
		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		if (fos_read_text(path, buf, sizeof(buf)) < 0 || !strrchr(buf, ')') ||
		    sscanf(strrchr(buf, ')') + 2, "%c %*d %d", &st, &pg) != 2 || pg != pgid)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stack", pid);
		if (fos_read_text(path, buf, sizeof(buf)) < 0)
			buf[0] = 0;
		fprintf(stderr, "  pid %d state %c, kernel stack:\n%s", pid, st, buf);
	}
	if (d)
		closedir(d);
}

static void run_prog(const struct fz_prog *p, struct result *res)
{
	double t0 = now();
	int status = 0;
	pid_t pid, w;

	memset(res, 0, sizeof(*res));
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		res->kind = RES_SETUP;
		snprintf(res->why, sizeof(res->why), "fork: %s", strerror(errno));
		return;
	}
	if (!pid)
		worker(p);
	for (;;) {
		w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
		if (now() - t0 > 60) {
			fprintf(stderr, "fosfuzz: worker %d hung; its processes:\n", pid);
			dump_group(pid);
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			res->kind = RES_HANG;
			snprintf(res->why, sizeof(res->why), "worker hung for 60 s");
			break;
		}
		usleep(2000);
	}
	/* Whatever the program left running (children of children). */
	kill(-pid, SIGKILL);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	if (res->kind == RES_OK) {
		if (WIFSIGNALED(status)) {
			res->kind = RES_CRASH;
			snprintf(res->why, sizeof(res->why), "worker died of signal %d",
				 WTERMSIG(status));
		} else if (WEXITSTATUS(status) == FZ_EXIT_VIOLATION) {
			res->kind = RES_VIOLATION;
			snprintf(res->why, sizeof(res->why), "documented-errno violation (see stderr)");
		} else if (WEXITSTATUS(status)) {
			res->kind = RES_SETUP;
			snprintf(res->why, sizeof(res->why), "worker exited %d", WEXITSTATUS(status));
		}
	}
	if (kmsg_splat(res->why, sizeof(res->why)))
		res->kind = RES_SPLAT;
	else if (res->kind == RES_OK && live_settled(settle_s(), res->why, sizeof(res->why)))
		res->kind = RES_LEAK;
}

/*
 * The workers' user can pin exactly RLIMIT_MEMLOCK, and not one page more:
 * a leaked charge would make the first fail.  A charge still held may also
 * be one on its way back: a Memory the other node (--peer) still held
 * when our program ended is unpinned when that node's drop arrives, and a
 * release may be deferred (SLOW_RELEASE_S).  So a first pin that fails is
 * tried again until settle_s() has passed; pinning one page more than the
 * limit never becomes right by waiting.
 */
static int memlock_try(void)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (!pid) {
		size_t sz = fz_opts.memlock;
		unsigned char *b;
		int fd;

		drop_privileges();
		fd = fos_open();
		b = mmap(NULL, sz + 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (fd < 0 || b == MAP_FAILED)
			_exit(10);
		memset(b, 1, sz + 4096);
		if (fos_mem_create(fd, b, sz, FRACTOS_PERM_ALL, NULL))
			_exit(11);
		if (!fos_mem_create(fd, b + sz, 4096, FRACTOS_PERM_ALL, NULL) ||
		    errno != ENOMEM)
			_exit(12);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

static int memlock_check(char *why, size_t len)
{
	double t0 = now();
	int status;

	while ((status = memlock_try()) > 0 && WIFEXITED(status) &&
	       WEXITSTATUS(status) == 11 && now() - t0 < settle_s())
		usleep(100 * 1000);
	if (status < 0) {
		snprintf(why, len, "fork/wait failed");
		return -1;
	}
	if (WIFEXITED(status) && !WEXITSTATUS(status))
		return live_settled(settle_s(), why, len);
	snprintf(why, len, "uid %u cannot pin its RLIMIT_MEMLOCK (%lu bytes) exactly (status %#x, after %.1f s)",
		 fz_opts.uid, fz_opts.memlock, status, now() - t0);
	return -1;
}

/* ---- programs: files, generation, minimization ----------------------- */

static int prog_load(const char *path, struct fz_prog *p)
{
	FILE *f = fopen(path, "r");
	char line[256];

	if (!f)
		return -1;
	p->n = 0;
	while (fgets(line, sizeof(line), f) && p->n < FZ_MAX_OPS) {
		char *end;
		uint64_t v;

		if (line[0] == '#' || line[0] == '\n')
			continue;
		errno = 0;
		v = strtoull(line, &end, 0);
		if (errno || end == line)
			continue;
		p->op[p->n++] = v;
	}
	fclose(f);
	return 0;
}

static int prog_save(const char *path, const struct fz_prog *p,
		     const struct result *res)
{
	FILE *f = fopen(path, "w");
	unsigned int i;

	if (!f)
		return -1;
	fprintf(f, "# fosfuzz program: %u op seeds (replay: tests/fuzz/run --replay FILE)\n",
		p->n);
	fprintf(f, "# found: %s: %s\n", kind_name[res->kind], res->why);
	fprintf(f, "# loopback %d\n", fz_opts.loopback);
	for (i = 0; i < p->n; i++)
		fprintf(f, "%#llx\t# %s\n", (unsigned long long)p->op[i],
			fz_op_name(p->op[i]));
	return fclose(f);
}

static void prog_random(struct fz_prog *p)
{
	unsigned int i;

	p->n = 1 + mbelow(max_ops);
	for (i = 0; i < p->n; i++)
		p->op[i] = mrand();
}

#define CORPUS_MAX 256
static struct fz_prog *corpus;
static unsigned int ncorpus;

static void prog_mutate(struct fz_prog *p)
{
	const struct fz_prog *o;
	unsigned int i, k, at;

	*p = corpus[mbelow(ncorpus)];
	switch (mbelow(5)) {
	case 0:	/* append */
		k = 1 + mbelow(32);
		for (i = 0; i < k && p->n < max_ops; i++)
			p->op[p->n++] = mrand();
		break;
	case 1:	/* replace */
		k = 1 + mbelow(4);
		for (i = 0; i < k && p->n; i++)
			p->op[mbelow(p->n)] = mrand();
		break;
	case 2:	/* insert */
		k = 1 + mbelow(8);
		for (i = 0; i < k && p->n < max_ops; i++) {
			at = mbelow(p->n + 1);
			memmove(&p->op[at + 1], &p->op[at], (p->n - at) * 8);
			p->op[at] = mrand();
			p->n++;
		}
		break;
	case 3:	/* delete */
		if (p->n > 2) {
			at = mbelow(p->n);
			k = 1 + mbelow(p->n - at);
			if (k > p->n / 2)
				k = p->n / 2;
			memmove(&p->op[at], &p->op[at + k], (p->n - at - k) * 8);
			p->n -= k;
		}
		break;
	default: /* splice: our prefix, another's suffix */
		o = &corpus[mbelow(ncorpus)];
		at = mbelow(p->n + 1);
		k = o->n ? mbelow(o->n) : 0;
		for (i = k; i < o->n && at < max_ops; i++)
			p->op[at++] = o->op[i];
		p->n = at ? at : 1;
		break;
	}
}

/* Remove op seeds while the program fails the same way (bounded). */
static void prog_minimize(struct fz_prog *p, enum fz_kind kind)
{
	static struct fz_prog q;
	unsigned int chunk, i, tries = 0;
	struct result res;
	double t0 = now();

	for (chunk = p->n / 2; chunk >= 1; chunk /= 2) {
		for (i = 0; i + chunk <= p->n; ) {
			if (tries++ > 300 || now() - t0 > 300)
				return;
			q.n = p->n - chunk;
			memcpy(q.op, p->op, i * 8);
			memcpy(&q.op[i], &p->op[i + chunk], (p->n - i - chunk) * 8);
			run_prog(&q, &res);
			if (res.kind == kind) {
				*p = q;
				fprintf(stderr, "fosfuzz: minimized to %u ops\n", p->n);
			} else {
				i += chunk;
			}
			/* A failure of another kind ends it: keep what we have. */
			if (res.kind != RES_OK && res.kind != kind)
				return;
		}
	}
}

static void report(const struct fz_prog *p, struct result *res, uint64_t seed,
		   unsigned long idx)
{
	static struct fz_prog m;
	char path[512];

	m = *p;
	fprintf(stderr, "fosfuzz: program %lu (%u ops) failed: %s: %s\n", idx, p->n,
		kind_name[res->kind], res->why);
	if (minimize && (res->kind == RES_VIOLATION || res->kind == RES_LEAK ||
			 res->kind == RES_CRASH)) {
		prog_minimize(&m, res->kind);
		run_prog(&m, res);	/* its own message, for the file */
	}
	mkdir(outdir, 0755);
	snprintf(path, sizeof(path), "%s/fail-%llu-%lu.prog", outdir,
		 (unsigned long long)seed, idx);
	if (!prog_save(path, &m, res))
		fprintf(stderr, "fosfuzz: saved %u ops to %s (tests/fuzz/run --replay %s)\n",
			m.n, path, path);
}

/* ---- setup ---------------------------------------------------------- */

static void kcov_setup(void)
{
	long long start;
	long long size = fos_read_ll("/sys/module/fractos/coresize");
	FILE *f = fopen("/sys/module/fractos/sections/.text", "r");

	if (access("/sys/kernel/debug/kcov", R_OK | W_OK)) {
		if (f)
			fclose(f);
		return;
	}
	if (!f || fscanf(f, "%llx", &start) != 1 || size <= 0) {
		if (f)
			fclose(f);
		return;
	}
	fclose(f);
	/*
	 * KCOV records PCs less the KASLR offset (canonicalize_ip()): the
	 * offset is where _text is, less where x86-64 links it.
	 */
	f = fopen("/proc/kallsyms", "r");
	while (f) {
		char sym[128], type;
		unsigned long long a;

		if (fscanf(f, "%llx %c %127s%*[^\n]", &a, &type, sym) != 3)
			break;
		if (!strcmp(sym, "_text")) {
			start -= a - 0xffffffff81000000ULL;
			break;
		}
	}
	if (f)
		fclose(f);
	fz_kcov_setup_shared(start, size);
	fz_opts.kcov = 1;
}

static int loopback_on(void)
{
	struct in_addr addr;

	if (!fos_nl_self_addr(&addr)) {
		fprintf(stderr, "fosfuzz: --loopback needs an IPv4 address on eth0\n");
		return -1;
	}
	if (fos_nl_node_add(fz_opts.node, addr) || !fos_nl_wait_up(fz_opts.node, 30) ||
	    fos_set_param("fabric_loopback", 1)) {
		fprintf(stderr, "fosfuzz: could not make node %u its own peer\n",
			fz_opts.node);
		return -1;
	}
	return 0;
}

static void loopback_off(void)
{
	fos_set_param("fabric_loopback", 0);
	fos_nl_node_del(fz_opts.node);
}

/* --low-limits: each module parameter, its low value, and the saved one. */
static struct low_limit {
	const char *name;
	unsigned long long low;
	long long saved;
} low_limits[] = {
	{ "max_caps", 40, -1 },
	{ "max_queue", 6, -1 },
	{ "max_names", 4, -1 },
	{ "max_pin_bytes", 256 << 10, -1 },
	{ "fabric_peer_work", 2, -1 },
	{ "fabric_peer_grants", 4, -1 },
};
#define NLOW (sizeof(low_limits) / sizeof(low_limits[0]))
static pid_t low_set;	/* the driver that lowered them */

/* Only the driver restores: forked workers inherit its atexit handler. */
static void low_limits_restore(void)
{
	unsigned int i;

	if (low_set != getpid())
		return;
	for (i = 0; i < NLOW; i++)
		if (low_limits[i].saved >= 0)
			fos_set_param(low_limits[i].name, low_limits[i].saved);
	low_set = 0;
}

static void low_limits_sig(int sig)
{
	low_limits_restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

static int low_limits_apply(void)
{
	unsigned int i;

	for (i = 0; i < NLOW; i++) {
		low_limits[i].saved = fos_param(low_limits[i].name);
		if (low_limits[i].saved < 0) {
			fprintf(stderr, "fosfuzz: no parameter %s\n",
				low_limits[i].name);
			return -1;
		}
	}
	low_set = getpid();
	atexit(low_limits_restore);
	signal(SIGTERM, low_limits_sig);
	signal(SIGINT, low_limits_sig);
	for (i = 0; i < NLOW; i++) {
		if (fos_set_param(low_limits[i].name, low_limits[i].low)) {
			fprintf(stderr, "fosfuzz: cannot set %s\n",
				low_limits[i].name);
			return -1;
		}
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: fosfuzz [--seed N] [--duration S] [--programs N] [--ops N]\n"
		"               [--loopback | --peer NODE] [--replay FILE]... [--out DIR] [--uid UID]\n"
		"               [--memlock BYTES] [--cov-sites N] [--no-minimize] [--low-limits] [-v]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "duration", required_argument, NULL, 'd' },
		{ "programs", required_argument, NULL, 'p' },
		{ "ops", required_argument, NULL, 'o' },
		{ "loopback", no_argument, NULL, 'l' },
		{ "peer", required_argument, NULL, 'P' },
		{ "replay", required_argument, NULL, 'r' },
		{ "out", required_argument, NULL, 'O' },
		{ "uid", required_argument, NULL, 'u' },
		{ "memlock", required_argument, NULL, 'm' },
		{ "cov-sites", required_argument, NULL, 'c' },
		{ "no-minimize", no_argument, NULL, 'n' },
		{ "low-limits", no_argument, NULL, 'L' },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	const char *replay[64];
	unsigned int nreplay = 0, i;
	unsigned long programs = 0, maxprogs = 0, fails = 0, kept = 0;
	uint64_t seed = 0;
	int have_seed = 0, have_memlock = 0, low = 0, c, lb_ok = 0;
	double duration = 60, t0;
	static struct fz_prog p;
	struct result res;
	char why[512];

	while ((c = getopt_long(argc, argv, "v", lo, NULL)) != -1) {
		switch (c) {
		case 's': seed = strtoull(optarg, NULL, 0); have_seed = 1; break;
		case 'd': duration = atof(optarg); break;
		case 'p': maxprogs = strtoul(optarg, NULL, 0); break;
		case 'o': max_ops = strtoul(optarg, NULL, 0); break;
		case 'l': fz_opts.loopback = 1; break;
		case 'P': fz_opts.peer = strtoul(optarg, NULL, 0); break;
		case 'r':
			if (nreplay < 64)
				replay[nreplay++] = optarg;
			break;
		case 'O': outdir = optarg; break;
		case 'u': fz_opts.uid = strtoul(optarg, NULL, 0); break;
		case 'm':
			fz_opts.memlock = strtoul(optarg, NULL, 0);
			have_memlock = 1;
			break;
		case 'L': low = 1; break;
		case 'c': cov_sites = strtoul(optarg, NULL, 0); break;
		case 'n': minimize = 0; break;
		case 'v': fz_opts.verbose = 1; break;
		default: usage();
		}
	}
	if (optind != argc || !max_ops || max_ops > FZ_MAX_OPS)
		usage();
	if (geteuid()) {
		fprintf(stderr, "fosfuzz: run as root (in a guest: tests/fuzz/run)\n");
		return 2;
	}
	if (access("/sys/class/misc/fractos", F_OK)) {
		printf("1..0 # SKIP fractos.ko is not loaded\n");
		return 0;
	}
	if (!have_seed)
		seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	master = seed;
	fz_opts.node = fos_param("node_id");
	fz_stats = mmap(NULL, sizeof(*fz_stats), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	corpus = calloc(CORPUS_MAX, sizeof(*corpus));
	if (fz_stats == MAP_FAILED || !corpus)
		return 2;
	signal(SIGPIPE, SIG_IGN);
	kcov_setup();
	fz_ops_init();
	if (low && !have_memlock)
		fz_opts.memlock = 256 << 10;
	printf("TAP version 13\n1..%u\n", nreplay + 2);
	printf("# fosfuzz: seed %llu (reproduce: tests/fuzz/run --seed %llu%s%s), %s%s\n",
	       (unsigned long long)seed, (unsigned long long)seed,
	       fz_opts.loopback ? " --loopback" : "",
	       low ? " -- --low-limits" : "",
	       fz_opts.kcov ? "KCOV-guided" : "random (no KCOV)",
	       low ? ", every limit low" : "");
	fflush(stdout);
	if (fz_opts.loopback) {
		lb_ok = !loopback_on();
		if (!lb_ok)
			return 2;
	}
	if (low && low_limits_apply())
		return 2;
	live_baseline();
	kmsg_open();

	for (i = 0; i < nreplay; i++) {
		if (prog_load(replay[i], &p)) {
			tap(0, "replay %s: %s", replay[i], strerror(errno));
			continue;
		}
		run_prog(&p, &res);
		tap(res.kind == RES_OK, "replay %s (%u ops)%s%s", replay[i], p.n,
		    res.kind ? ": " : "", res.kind ? res.why : "");
	}

	t0 = now();
	while (now() - t0 < duration && (!maxprogs || programs < maxprogs)) {
		unsigned long before = fz_kcov_new();

		if (ncorpus && mbelow(4))
			prog_mutate(&p);
		else
			prog_random(&p);
		run_prog(&p, &res);
		programs++;
		if (fz_kcov_new() != before && ncorpus < CORPUS_MAX) {
			corpus[ncorpus++] = p;
			kept++;
		}
		if (res.kind == RES_OK && programs % 16 == 0 && !fz_opts.peer &&
		    memlock_check(res.why, sizeof(res.why)))
			res.kind = RES_LEAK;
		if (res.kind != RES_OK) {
			fails++;
			report(&p, &res, seed, programs);
			break;
		}
	}
	tap(!fails, "fuzz: %lu programs in %.0f s, no violation, hang, crash, leak or splat",
	    programs, now() - t0);
	why[0] = 0;
	c = memlock_check(why, sizeof(why));
	tap(!c, "the workers' user pins exactly its RLIMIT_MEMLOCK again, live counters at baseline%s%s",
	    c ? ": " : "", why);

	printf("# fosfuzz: seed %llu, %lu programs, %lu ops (%lu via io_uring, %lu failed with documented errnos), %lu forks, %lu kills, %lu fds passed, %.0f s",
	       (unsigned long long)seed, programs, fz_stats->ops, fz_stats->uring,
	       fz_stats->errs, fz_stats->forks, fz_stats->kills, fz_stats->sends,
	       now() - t0);
	if (fz_opts.kcov) {
		printf(", coverage %lu module PCs", fz_kcov_covered());
		if (cov_sites)
			printf(" of %lu sites (%.1f%%)", cov_sites,
			       100.0 * fz_kcov_covered() / cov_sites);
		printf(", corpus %lu", kept);
	}
	if (lb_ok) {
		struct fos_nl_node nn;

		if (!fos_nl_node_get(fz_opts.node, &nn))
			printf(", %llu fabric messages sent",
			       (unsigned long long)nn.stats[FRACTOS_STAT_TX_MSGS]);
	}
	printf(", %lu releases slower than %.0f s (slowest %.1f s)", slow_releases,
	       SLOW_RELEASE_S, slowest_release);
	printf(", failures %lu\n", fails);
	printf("# fosfuzz: per op, succeeded/run:");
	for (i = 0; i < fz_op_count(); i++)
		printf("%s %s %lu/%lu", i ? "," : "", fz_op_index_name(i),
		       fz_stats->op_ok[i], fz_stats->op_calls[i]);
	printf("\n");
	if (lb_ok)
		loopback_off();
	low_limits_restore();
	return tap_bad ? 1 : 0;
}
