// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fractos-bench: micro-benchmarks of the /dev/fractos interface.
 *
 * Uses the uAPI header and plain syscalls (ioctl, io_uring through
 * liburing) only, so that it measures the kernel interface itself.
 *
 * Groups (select with -b, comma separated; default all):
 *   null      the cheapest operation (FRACTOS_IOC_SPACE_INFO) as an ioctl,
 *             a getppid() syscall for reference, and SPACE_INFO / NOP
 *             through io_uring in batches of 1, 16 and 256 SQEs per submit.
 *   pingpong  a round trip between two processes with separate spaces:
 *             the client invokes the service's Request with 8 immediate
 *             bytes, the service (which received the client's reply
 *             Request once, at setup) invokes it back with the same 8
 *             bytes.  Compared with a pipe and an eventfd ping-pong between
 *             the same two processes.
 *   invoke    invoke a Request into the own queue + receive it (8 bytes of
 *             immediates), as two ioctls or as io_uring URING_CMD batches
 *             of 1, 16 and 256 SQEs per submit (N invokes, then N
 *             receives).  One op = one invoke + its receive.
 *   copy      FRACTOS_IOC_MEMORY_COPY between two local Memory objects for
 *             1 B, 4 KiB, 64 KiB and 1 MiB, with memcpy() for reference.
 *   fabric    (not in the default set) the node configured as its own
 *             peer, fabric_loopback toggled around each turn: the
 *             invoke->receive->reply round trip between two processes,
 *             local vs through the RDMA fabric; invoke+receive in one
 *             process with 0, 1, 8 and 32 delegated capabilities, local vs
 *             fabric (slope = cost per delegated capability); memory_copy
 *             1 B..1 MiB local vs fabric when a probe shows that the fabric
 *             copies ("fabric copy: not available" otherwise).  With -B,
 *             ratios against perftest over the same RDMA device.
 *   revoke    (not in the default set) CAP_REVOKE of a Memory held by 1,
 *             10, 100 and -H (1000) spaces of this process.
 *
 * Timing: CLOCK_MONOTONIC around each sample.  A sample is one operation
 * unless the operation is so cheap that the clock read would weigh more
 * than 2% of it; then a sample groups several operations (column "grp")
 * and the percentiles are over those groups' per-op means.  Every
 * benchmark warms up first, then runs until -n operations are done or -t
 * seconds have passed, whichever comes first.  The benchmarks of a group
 * take turns in -r rounds (default 5), so that changes in background load
 * (a busy host under QEMU/TCG) hit all of them alike and the ratios
 * between them stay fair.  Besides the ratios of the whole-run means and
 * medians, the ratio table gives the lowest and highest ratio of the
 * per-round means of two benchmarks of the same group (each round's pair
 * ran back to back): a wide range says the host was noisy.
 *
 * Every return value is checked; on any error the tool prints what failed
 * and exits 1.  Everything it creates (capabilities, spaces, rings,
 * processes) is released before it exits, so the module's live counters
 * (/sys/class/misc/fractos/live) return to their earlier values.
 */
#include <linux/fractos.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <csignal>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <liburing.h>
#include <string>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <vector>

namespace {

const char *prog = "fractos-bench";

/* ---- errors ------------------------------------------------------------ */

[[noreturn]] __attribute__((format(printf, 1, 2))) void die(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: %s\n", prog, buf);
	fflush(stdout);
	fflush(stderr);
	exit(1);
}

/* die() with the text of errno value @err appended. */
[[noreturn]] void die_err(const std::string &what, int err)
{
	die("%s: %s (errno %d)", what.c_str(), strerror(err), err);
}

void check_sys(long ret, const std::string &what)
{
	if (ret < 0)
		die_err(what, errno);
}

/* ---- options ----------------------------------------------------------- */

struct Options {
	uint64_t iters = 1000000;	/* -n: most timed operations per bench */
	double seconds = 1.0;		/* -t: most timed seconds per bench */
	bool json = false;		/* -j */
	std::string groups = "null,pingpong,invoke,copy";	/* -b */
	const char *dev = FRACTOS_DEVICE;	/* -d */
	std::string affinity = "none";	/* -a: ping-pong CPU placement */
	unsigned rounds = 5;		/* -r: interleaved rounds per group */
	std::string json_file;		/* -J: also write JSON there */
	std::string baselines;		/* -B: perftest baselines file */
	unsigned holders = 1000;	/* -H: most spaces holding a revoked cap */
	bool force_copy = false;	/* -C: trust a fabric-mode copy */
};

Options opt;

bool group_enabled(const char *g)
{
	std::string s = "," + opt.groups + ",";
	return s.find(std::string(",") + g + ",") != std::string::npos ||
	       s.find(",all,") != std::string::npos;
}

/* ---- watchdog ---------------------------------------------------------- */

const char *volatile watchdog_what = "setup";

void on_alarm(int)
{
	const char *w = watchdog_what;
	static const char m1[] = "fractos-bench: timed out in ";
	static const char m2[] = " (a peer is stuck?)\n";

	(void)!write(STDERR_FILENO, m1, sizeof(m1) - 1);
	(void)!write(STDERR_FILENO, w, strlen(w));
	(void)!write(STDERR_FILENO, m2, sizeof(m2) - 1);
	_exit(1);
}

/* Arm the watchdog for one benchmark group. */
void watchdog(const char *what)
{
	watchdog_what = what;
	alarm(what ? (unsigned)(120 + 20 * opt.seconds) : 0);
}

/* ---- fractos calls ----------------------------------------------------- */

const char *ioc_name(unsigned long cmd)
{
	switch (cmd) {
	case FRACTOS_IOC_SPACE_INFO: return "SPACE_INFO";
	case FRACTOS_IOC_MEMORY_CREATE: return "MEMORY_CREATE";
	case FRACTOS_IOC_MEMORY_COPY: return "MEMORY_COPY";
	case FRACTOS_IOC_CAP_CLOSE: return "CAP_CLOSE";
	case FRACTOS_IOC_CAP_EXPORT: return "CAP_EXPORT";
	case FRACTOS_IOC_CAP_IMPORT: return "CAP_IMPORT";
	case FRACTOS_IOC_REQUEST_CREATE: return "REQUEST_CREATE";
	case FRACTOS_IOC_REQUEST_INVOKE: return "REQUEST_INVOKE";
	case FRACTOS_IOC_REQUEST_RECEIVE: return "REQUEST_RECEIVE";
	default: return "FRACTOS_IOC_?";
	}
}

/* An ioctl that must succeed. */
inline void fos(int fd, unsigned long cmd, void *arg)
{
	if (__builtin_expect(ioctl(fd, cmd, arg) != 0, 0))
		die_err(std::string("ioctl ") + ioc_name(cmd), errno);
}

int space_open()
{
	int fd = open(opt.dev, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		int err = errno;

		die("open %s: %s%s", opt.dev, strerror(err),
		    err == ENOENT ? " (is the fractos module loaded?)" : "");
	}
	struct fractos_space_info si {};
	fos(fd, FRACTOS_IOC_SPACE_INFO, &si);
	if (si.abi_version != FRACTOS_ABI_VERSION)
		die("module ABI version %u, this tool speaks %u",
		    si.abi_version, FRACTOS_ABI_VERSION);
	return fd;
}

/* Close a space, first checking that it holds exactly @expect_caps caps. */
void space_close(int fd, uint32_t expect_caps, const char *who)
{
	struct fractos_space_info si {};

	fos(fd, FRACTOS_IOC_SPACE_INFO, &si);
	if (si.ncaps != expect_caps)
		die("%s: space holds %u capabilities at close, expected %u",
		    who, si.ncaps, expect_caps);
	check_sys(close(fd), std::string(who) + ": close space");
}

void cap_close(int fd, uint32_t cid)
{
	struct fractos_cap_arg a {};

	a.cid = cid;
	fos(fd, FRACTOS_IOC_CAP_CLOSE, &a);
}

uint32_t request_create(int fd, uint64_t tag)
{
	struct fractos_request_create a {};

	a.base = FRACTOS_CID_INVALID;
	a.tag = tag;
	fos(fd, FRACTOS_IOC_REQUEST_CREATE, &a);
	return a.cid;
}

inline void invoke(int fd, uint32_t cid, const uint64_t *imm,
		   const uint32_t *caps = nullptr, uint32_t ncaps = 0)
{
	struct fractos_request_invoke a {};

	a.cid = cid;
	a.imms = (uintptr_t)imm;
	a.imm_len = sizeof(*imm);
	a.caps = (uintptr_t)caps;
	a.ncaps = ncaps;
	fos(fd, FRACTOS_IOC_REQUEST_INVOKE, &a);
}

/*
 * Receive one Request message carrying exactly 8 immediate bytes and
 * @ncaps capabilities; returns the immediate.
 */
inline uint64_t receive(int fd, uint32_t flags, uint64_t tag,
			uint32_t *caps = nullptr, uint32_t ncaps = 0)
{
	struct fractos_request_receive a {};
	uint64_t imm = 0;

	a.flags = flags;
	a.imms = (uintptr_t)&imm;
	a.imm_len = sizeof(imm);
	a.caps = (uintptr_t)caps;
	a.ncaps = ncaps;
	fos(fd, FRACTOS_IOC_REQUEST_RECEIVE, &a);
	if (__builtin_expect(a.type != FRACTOS_MSG_REQUEST || a.tag != tag ||
			     a.imm_len != sizeof(imm) || a.ncaps != ncaps, 0))
		die("receive: unexpected message type %u tag %#" PRIx64
		    " imm_len %u ncaps %u (want type %u tag %#" PRIx64
		    " imm_len 8 ncaps %u)", a.type, (uint64_t)a.tag,
		    a.imm_len, a.ncaps, FRACTOS_MSG_REQUEST, tag, ncaps);
	return imm;
}

/* ---- timing ------------------------------------------------------------ */

inline uint64_t now_ns()
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

double timer_ns;	/* cost of one now_ns() */

void calibrate_timer()
{
	std::vector<double> v;

	for (int r = 0; r < 21; r++) {
		uint64_t t0 = now_ns();
		for (int i = 0; i < 100; i++)
			now_ns();
		v.push_back((now_ns() - t0) / 101.0);
	}
	std::sort(v.begin(), v.end());
	timer_ns = v[v.size() / 2];
}

struct Result {
	std::string name;
	uint64_t iters = 0;	/* timed operations */
	double avg_ns = 0, p50_ns = 0, p99_ns = 0;
	uint64_t group = 1;	/* operations per sample */
	unsigned gid = 0;	/* which run_group() measured it */
	std::vector<double> round_ns;	/* mean ns per op in each round, NaN if none */
	bool skipped = false;
	std::string note;
};

std::vector<Result> results;

double pct(std::vector<double> &v, double p)
{
	size_t i = (size_t)std::floor(p * (double)(v.size() - 1) + 0.5);

	std::nth_element(v.begin(), v.begin() + i, v.end());
	return v[i];
}

void print_row(const Result &r);

/*
 * Benchmarks are registered with measure() and run a group at a time by
 * run_group(): each warms up, then the group runs in opt.rounds rounds,
 * every benchmark taking its turn for 1/rounds of its budget in each, so
 * that a change in background load weighs on all of them alike and the
 * ratios between them stay fair.  @enter and @leave (optional) run around
 * every turn, outside the timing.
 */
struct Bench {
	std::string name;
	uint64_t per_unit;	/* operations per call of @op */
	std::function<void()> op, enter, leave;
	uint64_t k = 1;		/* calls per timed sample */
	uint64_t target = 1;	/* calls wanted in all */
	uint64_t units = 0, sum_ns = 0;
	std::vector<double> samples;	/* ns per operation */
	std::vector<uint64_t> rsum_ns, runits;	/* per round */
};

std::vector<Bench> group;
unsigned group_seq;

void measure(const std::string &name, uint64_t per_unit,
	     std::function<void()> op, std::function<void()> enter = {},
	     std::function<void()> leave = {})
{
	Bench b;

	b.name = name;
	b.per_unit = per_unit;
	b.op = std::move(op);
	b.enter = std::move(enter);
	b.leave = std::move(leave);
	group.push_back(std::move(b));
}

void run_group()
{
	const uint64_t budget = (uint64_t)(opt.seconds * 1e9);
	const unsigned rounds = opt.rounds;

	for (Bench &b : group) {
		b.target = std::max<uint64_t>(1, (opt.iters + b.per_unit - 1) /
						     b.per_unit);
		/* Warmup: a tenth of the budget (time or calls), a few at least. */
		uint64_t wmin = std::min<uint64_t>(b.target, 8);
		uint64_t wmax = std::max<uint64_t>(wmin, b.target / 10);
		if (b.enter)
			b.enter();
		uint64_t w = 0, t0 = now_ns(), t = t0;
		while (w < wmax && (w < wmin || t - t0 < budget / 10)) {
			b.op();
			w++;
			t = now_ns();
		}
		if (b.leave)
			b.leave();
		double unit_ns = (double)(t - t0) / (double)w;

		/* Group calls per sample so the clock weighs at most ~2%. */
		if (unit_ns > 0 && 50.0 * timer_ns > unit_ns)
			b.k = (uint64_t)std::ceil(50.0 * timer_ns / unit_ns);
		b.k = std::min<uint64_t>(b.k, 100000);
		b.samples.reserve(std::min<uint64_t>(b.target / b.k + rounds,
						     4000000));
		b.rsum_ns.assign(rounds, 0);
		b.runits.assign(rounds, 0);
	}
	group_seq++;

	for (unsigned r = 0; r < rounds; r++) {
		for (Bench &b : group) {
			uint64_t goal = b.target * (r + 1) / rounds;

			if (b.units >= goal)
				continue;
			if (b.enter)
				b.enter();
			uint64_t t0 = now_ns();
			while (b.units < goal) {
				uint64_t n = std::min(b.k, goal - b.units);
				uint64_t a = now_ns();
				for (uint64_t i = 0; i < n; i++)
					b.op();
				uint64_t e = now_ns();
				b.units += n;
				b.sum_ns += e - a;
				b.runits[r] += n;
				b.rsum_ns[r] += e - a;
				b.samples.push_back((double)(e - a) /
						    (double)(n * b.per_unit));
				if (e - t0 >= budget / rounds)
					break;
			}
			if (b.leave)
				b.leave();
		}
	}

	for (Bench &b : group) {
		Result res;

		res.name = b.name;
		res.iters = b.units * b.per_unit;
		/* max(): a clock too coarse to see it */
		res.avg_ns = (double)std::max<uint64_t>(b.sum_ns, 1) /
			     (double)res.iters;
		res.p50_ns = pct(b.samples, 0.50);
		res.p99_ns = pct(b.samples, 0.99);
		res.group = b.k * b.per_unit;
		res.gid = group_seq;
		for (unsigned r = 0; r < rounds; r++)
			res.round_ns.push_back(b.runits[r] ?
				(double)std::max<uint64_t>(b.rsum_ns[r], 1) /
				(double)(b.runits[r] * b.per_unit) : NAN);
		results.push_back(res);
		print_row(results.back());
	}
	group.clear();
}

void skip(const std::string &name, const std::string &why)
{
	Result r;

	r.name = name;
	r.skipped = true;
	r.note = why;
	results.push_back(r);
	print_row(results.back());
}

/* ---- output ------------------------------------------------------------ */

const char *rule =
	"-----------------------------------------------------------------------------------------------------";

void print_header(const char *title)
{
	if (opt.json)
		return;
	printf("\n%s\n %-44s %10s %10s %10s %10s %12s %6s\n%s\n", rule,
	       title, "iters", "t_avg[us]", "t_p50[us]", "t_p99[us]",
	       "ops/s", "grp", rule);
	fflush(stdout);
}

void print_row(const Result &r)
{
	if (opt.json)
		return;
	if (r.skipped)
		printf(" %-44s skipped: %s\n", r.name.c_str(), r.note.c_str());
	else if (std::isnan(r.p99_ns))	/* a perftest baseline */
		printf(" %-44s %10s %10.3f %10.3f %10s %12.0f %6s\n",
		       r.name.c_str(), r.note.c_str(), r.avg_ns / 1e3,
		       r.p50_ns / 1e3, "-", 1e9 / r.avg_ns, "-");
	else
		printf(" %-44s %10" PRIu64 " %10.3f %10.3f %10.3f %12.0f %6" PRIu64 "\n",
		       r.name.c_str(), r.iters, r.avg_ns / 1e3, r.p50_ns / 1e3,
		       r.p99_ns / 1e3, 1e9 / r.avg_ns, r.group);
	fflush(stdout);
}

struct Ratio {
	std::string name;
	double avg;	/* from t_avg */
	double p50;	/* from t_p50 */
	std::string unit;
	double rmin = NAN, rmax = NAN;	/* over the rounds, same group only */
};
std::vector<Ratio> ratios;

const Result *find(const std::string &name)
{
	for (const Result &r : results)
		if (r.name == name && !r.skipped)
			return &r;
	return nullptr;
}

/* time(a) / time(b), from t_avg and from t_p50, if both ran */
void add_ratio(const std::string &label, const std::string &a,
	       const std::string &b)
{
	const Result *ra = find(a), *rb = find(b);

	if (!ra || !rb)
		return;
	Ratio q {label, ra->avg_ns / rb->avg_ns, ra->p50_ns / rb->p50_ns, "x"};
	if (ra->gid == rb->gid && ra->round_ns.size() == rb->round_ns.size())
		for (size_t r = 0; r < ra->round_ns.size(); r++) {
			double x = ra->round_ns[r] / rb->round_ns[r];

			if (std::isnan(x))
				continue;
			q.rmin = std::isnan(q.rmin) ? x : std::min(q.rmin, x);
			q.rmax = std::isnan(q.rmax) ? x : std::max(q.rmax, x);
		}
	ratios.push_back(q);
}

/* Bandwidth of @name for @bytes per op, in GB/s. */
void add_bandwidth(const std::string &label, const std::string &name,
		   double bytes)
{
	const Result *r = find(name);

	if (!r)
		return;
	Ratio q {label, bytes / r->avg_ns, bytes / r->p50_ns, "GB/s"};
	for (double ns : r->round_ns) {
		double x = bytes / ns;

		if (std::isnan(x))
			continue;
		q.rmin = std::isnan(q.rmin) ? x : std::min(q.rmin, x);
		q.rmax = std::isnan(q.rmax) ? x : std::max(q.rmax, x);
	}
	ratios.push_back(q);
}

/* (time(a) - time(b)) / @d in us: the cost of each of @d extra units. */
void add_slope(const std::string &label, const std::string &a,
	       const std::string &b, double d)
{
	const Result *ra = find(a), *rb = find(b);

	if (!ra || !rb)
		return;
	Ratio q {label, (ra->avg_ns - rb->avg_ns) / d / 1e3,
		 (ra->p50_ns - rb->p50_ns) / d / 1e3, "us"};
	if (ra->gid == rb->gid && ra->round_ns.size() == rb->round_ns.size())
		for (size_t r = 0; r < ra->round_ns.size(); r++) {
			double x = (ra->round_ns[r] - rb->round_ns[r]) / d / 1e3;

			if (std::isnan(x))
				continue;
			q.rmin = std::isnan(q.rmin) ? x : std::min(q.rmin, x);
			q.rmax = std::isnan(q.rmax) ? x : std::max(q.rmax, x);
		}
	ratios.push_back(q);
}

void json_num(FILE *f, double x)
{
	if (std::isnan(x))
		fprintf(f, "null");
	else
		fprintf(f, "%.4f", x);
}

void json_str(FILE *f, const std::string &s)
{
	putc('"', f);
	for (char c : s) {
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if ((unsigned char)c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			putc(c, f);
	}
	putc('"', f);
}

/* Fabric messages and bytes sent per operation (node tx counters). */
struct Wire {
	std::string name;
	double msgs, bytes;
};
std::vector<Wire> wires;

void print_json(FILE *jf);

void print_final()
{
	if (!opt.json) {
		printf("\n%s\n %-54s %9s %9s %9s %9s\n%s\n", rule,
		       "ratios (time a / time b: < 1 means a is faster)",
		       "from avg", "from p50", "rnd min", "rnd max", rule);
		for (const Ratio &q : ratios) {
			printf(" %-54s %9.3f %9.3f", q.name.c_str(), q.avg, q.p50);
			if (std::isnan(q.rmin))
				printf(" %9s %9s", "-", "-");
			else
				printf(" %9.3f %9.3f", q.rmin, q.rmax);
			printf(" %s\n", q.unit.c_str());
		}
		printf("%s\n", rule);
		printf(" rnd min/max: lowest/highest ratio of the per-round means "
		       "(same group only; %u rounds)\n", opt.rounds);
		for (const Wire &w : wires)
			printf(" fabric wire: %-40s %6.2f msgs %8.1f bytes per op\n",
			       w.name.c_str(), w.msgs, w.bytes);
	} else {
		print_json(stdout);
	}
	if (!opt.json_file.empty()) {
		FILE *f = fopen(opt.json_file.c_str(), "w");

		if (!f)
			die_err("open " + opt.json_file, errno);
		print_json(f);
		if (fclose(f) != 0)
			die_err("write " + opt.json_file, errno);
	}
}

void print_json(FILE *jf)
{
	struct utsname u {};

	uname(&u);
	fprintf(jf, "{\n  \"tool\": \"fractos-bench\",\n  \"kernel\": ");
	json_str(jf, u.release);
	fprintf(jf, ",\n  \"cpus\": %ld", sysconf(_SC_NPROCESSORS_ONLN));
	fprintf(jf, ",\n  \"iters_max\": %" PRIu64 ",\n  \"seconds_max\": %g,\n"
	       "  \"rounds\": %u,\n  \"timer_ns\": %.1f,\n  \"pingpong_affinity\": ",
	       opt.iters, opt.seconds, opt.rounds, timer_ns);
	json_str(jf, opt.affinity);
	fprintf(jf, ",\n  \"results\": [");
	for (size_t i = 0; i < results.size(); i++) {
		const Result &r = results[i];

		fprintf(jf, "%s\n    {\"name\": ", i ? "," : "");
		json_str(jf, r.name);
		if (r.skipped) {
			fprintf(jf, ", \"skipped\": ");
			json_str(jf, r.note);
			fprintf(jf, "}");
			continue;
		}
		if (!r.note.empty()) {
			fprintf(jf, ", \"source\": ");
			json_str(jf, r.note);
		}
		fprintf(jf, ", \"iters\": %" PRIu64 ", \"t_avg_us\": %.4f, "
		       "\"t_p50_us\": %.4f, \"t_p99_us\": ",
		       r.iters, r.avg_ns / 1e3, r.p50_ns / 1e3);
		json_num(jf, r.p99_ns / 1e3);
		fprintf(jf, ", \"ops_per_s\": %.1f, \"ops_per_sample\": %" PRIu64
		       ", \"t_round_avg_us\": [", 1e9 / r.avg_ns, r.group);
		for (size_t k = 0; k < r.round_ns.size(); k++) {
			fprintf(jf, "%s", k ? ", " : "");
			json_num(jf, r.round_ns[k] / 1e3);
		}
		fprintf(jf, "]}");
	}
	fprintf(jf, "\n  ],\n  \"ratios\": [");
	for (size_t i = 0; i < ratios.size(); i++) {
		fprintf(jf, "%s\n    {\"name\": ", i ? "," : "");
		json_str(jf, ratios[i].name);
		fprintf(jf, ", \"from_avg\": %.4f, \"from_p50\": %.4f, \"round_min\": ",
		       ratios[i].avg, ratios[i].p50);
		json_num(jf, ratios[i].rmin);
		fprintf(jf, ", \"round_max\": ");
		json_num(jf, ratios[i].rmax);
		fprintf(jf, ", \"unit\": ");
		json_str(jf, ratios[i].unit);
		fprintf(jf, "}");
	}
	fprintf(jf, "\n  ],\n  \"wire\": [");
	for (size_t i = 0; i < wires.size(); i++) {
		fprintf(jf, "%s\n    {\"name\": ", i ? "," : "");
		json_str(jf, wires[i].name);
		fprintf(jf, ", \"msgs_per_op\": %.2f, \"bytes_per_op\": %.1f}",
			wires[i].msgs, wires[i].bytes);
	}
	fprintf(jf, "\n  ]\n}\n");
}

/* ---- io_uring helpers -------------------------------------------------- */

struct Ring {
	struct io_uring ring {};
	bool ok = false;
	int err = 0;

	explicit Ring(unsigned entries)
	{
		int ret = io_uring_queue_init(entries, &ring, 0);

		ok = ret == 0;
		err = -ret;
	}
	~Ring()
	{
		if (ok)
			io_uring_queue_exit(&ring);
	}
	Ring(const Ring &) = delete;
	Ring &operator=(const Ring &) = delete;

	struct io_uring_sqe *sqe()
	{
		struct io_uring_sqe *s = io_uring_get_sqe(&ring);

		if (!s)
			die("io_uring: submission queue full");
		return s;
	}

	/* Submit what is queued and reap exactly @n completions. */
	void submit_reap(unsigned n, const char *what)
	{
		int ret = io_uring_submit_and_wait(&ring, n);

		if (ret < 0)
			die_err(std::string("io_uring_submit_and_wait (") +
				what + ")", -ret);
		if ((unsigned)ret != n)
			die("io_uring_submit (%s): submitted %d of %u", what,
			    ret, n);
		unsigned seen = 0;
		while (seen < n) {
			struct io_uring_cqe *cqe;
			unsigned head, cnt = 0;

			io_uring_for_each_cqe(&ring, head, cqe) {
				if (__builtin_expect(cqe->res < 0, 0))
					die_err(std::string("io_uring ") + what +
						" (sqe " +
						std::to_string(cqe->user_data) +
						")", -cqe->res);
				cnt++;
			}
			io_uring_cq_advance(&ring, cnt);
			seen += cnt;
			if (seen < n) {
				ret = io_uring_wait_cqe(&ring, &cqe);
				if (ret < 0)
					die_err(std::string("io_uring_wait_cqe (") +
						what + ")", -ret);
			}
		}
	}
};

void prep_cmd(struct io_uring_sqe *sqe, int fd, unsigned long cmd, void *arg,
	      uint64_t user_data)
{
	struct fractos_uring_cmd c {};

	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, nullptr, 0, 0);
	sqe->cmd_op = (uint32_t)cmd;
	c.arg = (uintptr_t)arg;
	static_assert(sizeof(c) <= sizeof(sqe->addr3) + sizeof(sqe->__pad2),
		      "fractos_uring_cmd must fit a 64-byte SQE");
	memcpy(sqe->cmd, &c, sizeof(c));
	sqe->user_data = user_data;
}

const unsigned batches[] = {1, 16, 256};

/* ---- group: null operation ---------------------------------------------- */

void bench_null()
{
	watchdog("null");
	print_header("null operation");

	measure("getppid syscall", 1, [] {
		if (syscall(SYS_getppid) < 0)
			die_err("getppid", errno);
	});

	int fd = space_open();
	struct fractos_space_info si {};
	measure("SPACE_INFO ioctl", 1, [&] {
		fos(fd, FRACTOS_IOC_SPACE_INFO, &si);
	});

	{
		Ring ring(512);

		if (!ring.ok) {
			std::string why = std::string("io_uring_queue_init: ") +
					  strerror(ring.err);
			fprintf(stderr, "%s: warning: %s; io_uring benches skipped\n",
				prog, why.c_str());
			for (unsigned b : batches) {
				skip("NOP io_uring b" + std::to_string(b), why);
				skip("SPACE_INFO io_uring b" + std::to_string(b), why);
			}
			run_group();
		} else {
			std::vector<struct fractos_space_info> infos(256);

			for (unsigned b : batches)
				measure("NOP io_uring b" + std::to_string(b), b, [&, b] {
					for (unsigned i = 0; i < b; i++) {
						struct io_uring_sqe *s = ring.sqe();
						io_uring_prep_nop(s);
						s->user_data = i;
					}
					ring.submit_reap(b, "NOP");
				});
			for (unsigned b : batches)
				measure("SPACE_INFO io_uring b" + std::to_string(b), b, [&, b] {
					for (unsigned i = 0; i < b; i++)
						prep_cmd(ring.sqe(), fd,
							 FRACTOS_IOC_SPACE_INFO,
							 &infos[i], i);
					ring.submit_reap(b, "SPACE_INFO");
				});
			run_group();
			for (unsigned i = 0; i < 256; i++)
				if (infos[i].abi_version && infos[i].abi_version !=
							    FRACTOS_ABI_VERSION)
					die("SPACE_INFO via io_uring: abi_version %u",
					    infos[i].abi_version);
			if (infos[0].abi_version != FRACTOS_ABI_VERSION)
				die("SPACE_INFO via io_uring wrote nothing back");
		}
	}
	space_close(fd, 0, "null");
	watchdog(nullptr);
}

/* ---- group: invoke + receive, ioctl vs io_uring -------------------------- */

void bench_invoke()
{
	watchdog("invoke");
	print_header("invoke+receive (own queue, 8 B imm)");

	int fd = space_open();
	const uint64_t tag = 0x1f0cULL;
	uint32_t req = request_create(fd, tag);
	uint64_t seq = 0;

	measure("invoke+receive ioctl", 1, [&] {
		uint64_t v = ++seq;

		invoke(fd, req, &v);
		if (__builtin_expect(receive(fd, FRACTOS_RECV_NONBLOCK, tag) != v, 0))
			die("invoke+receive ioctl: payload mismatch");
	});

	{
		Ring ring(512);

		if (!ring.ok) {
			std::string why = std::string("io_uring_queue_init: ") +
					  strerror(ring.err);
			for (unsigned b : batches)
				skip("invoke+receive io_uring b" + std::to_string(b),
				     why);
			run_group();
		} else {
			std::vector<uint64_t> out(256), in(256);
			std::vector<struct fractos_request_invoke> inv(256);
			std::vector<struct fractos_request_receive> rcv(256);

			for (unsigned i = 0; i < 256; i++) {
				inv[i] = {};
				inv[i].cid = req;
				inv[i].imms = (uintptr_t)&out[i];
				inv[i].imm_len = sizeof(uint64_t);
			}
			for (unsigned b : batches)
				measure("invoke+receive io_uring b" + std::to_string(b),
					b, [&, b] {
					for (unsigned i = 0; i < b; i++) {
						out[i] = ++seq;
						prep_cmd(ring.sqe(), fd,
							 FRACTOS_IOC_REQUEST_INVOKE,
							 &inv[i], i);
					}
					ring.submit_reap(b, "REQUEST_INVOKE");
					for (unsigned i = 0; i < b; i++) {
						rcv[i] = {};
						rcv[i].flags = FRACTOS_RECV_NONBLOCK;
						rcv[i].imms = (uintptr_t)&in[i];
						rcv[i].imm_len = sizeof(uint64_t);
						prep_cmd(ring.sqe(), fd,
							 FRACTOS_IOC_REQUEST_RECEIVE,
							 &rcv[i], i);
					}
					ring.submit_reap(b, "REQUEST_RECEIVE");
					for (unsigned i = 0; i < b; i++)
						if (__builtin_expect(
							in[i] != out[i] ||
							rcv[i].tag != tag ||
							rcv[i].imm_len != 8 ||
							rcv[i].type != FRACTOS_MSG_REQUEST,
							0))
							die("invoke+receive io_uring b%u: "
							    "message %u mismatch (got %#"
							    PRIx64 " want %#" PRIx64 ")",
							    b, i, in[i], out[i]);
				});
			run_group();
		}
	}

	/* The queue must be empty now. */
	struct fractos_request_receive a {};
	a.flags = FRACTOS_RECV_NONBLOCK;
	if (ioctl(fd, FRACTOS_IOC_REQUEST_RECEIVE, &a) == 0 || errno != EAGAIN)
		die("invoke: receive queue not empty at the end");
	cap_close(fd, req);
	space_close(fd, 0, "invoke");
	watchdog(nullptr);
}

/* ---- group: ping-pong between two processes ------------------------------ */

constexpr uint64_t QUIT = ~0ULL;
constexpr uint64_t EFD_PING = 1, EFD_QUIT = 2;
constexpr uint64_t HELLO = 0x48454c4c4fULL, READY = 0x5245414459ULL;
constexpr uint64_t TAG_SERVICE = 0x5e41ULL, TAG_REPLY = 0xc11eULL;

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

void send_byte(int sock, char c, int fd = -1)
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

char recv_byte(int sock, int *fd = nullptr)
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

struct PingFds {
	int ctl[2];	/* [0] parent, [1] child */
	int p2c[2], c2p[2];	/* pipes: [0] read end, [1] write end */
	int e2c, e2p;	/* eventfds */
	int cpu_parent = -1, cpu_child = -1;	/* -a: where each runs */
};

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

		if (c == 'F') {
			do {
				v = receive(sp, 0, TAG_SERVICE);
				invoke(sp, reply, &v);
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

/* ---- group: memory_copy ------------------------------------------------- */

void bench_copy()
{
	watchdog("copy");
	print_header("memory_copy vs memcpy");

	const size_t max = 1 << 20;
	const size_t sizes[] = {1, 4096, 65536, max};
	const char *labels[] = {"1B", "4KiB", "64KiB", "1MiB"};
	void *src = mmap(nullptr, max, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (src == MAP_FAILED)
		die_err("mmap", errno);
	void *dst = mmap(nullptr, max, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (dst == MAP_FAILED)
		die_err("mmap", errno);
	memset(src, 0xa5, max);
	memset(dst, 0, max);

	int fd = space_open();
	uint32_t cids[2];
	void *bufs[2] = {src, dst};
	for (int i = 0; i < 2; i++) {
		struct fractos_memory_create mc {};

		mc.addr = (uintptr_t)bufs[i];
		mc.len = max;
		mc.perms = FRACTOS_PERM_ALL;
		if (ioctl(fd, FRACTOS_IOC_MEMORY_CREATE, &mc) != 0) {
			int err = errno;

			if (err == ENOMEM)
				die("MEMORY_CREATE of %zu bytes: %s (RLIMIT_MEMLOCK "
				    "too small? try ulimit -l unlimited)", max,
				    strerror(err));
			die_err("ioctl MEMORY_CREATE", err);
		}
		cids[i] = mc.cid;
	}

	struct fractos_memory_copy mcs[4] = {};
	for (size_t s = 0; s < 4; s++) {
		struct fractos_memory_copy &mc = mcs[s];
		size_t n = sizes[s];

		mc.src = cids[0];
		mc.dst = cids[1];
		mc.len = n;
		/* One checked copy first: the data must arrive. */
		memset(src, (int)(0x11 * (s + 1)), n);
		memset(dst, 0, n);
		fos(fd, FRACTOS_IOC_MEMORY_COPY, &mc);
		if (mc.copied != n || memcmp(src, dst, n) != 0)
			die("MEMORY_COPY of %zu bytes: data did not arrive "
			    "(copied %" PRIu64 ")", n, (uint64_t)mc.copied);
		measure(std::string("MEMORY_COPY ioctl ") + labels[s], 1,
			[fd, &mc] { fos(fd, FRACTOS_IOC_MEMORY_COPY, &mc); });
		measure(std::string("memcpy ") + labels[s], 1, [dst, src, n] {
			memcpy(dst, src, n);
			asm volatile("" : : "r"(dst), "r"(src) : "memory");
		});
	}
	run_group();

	cap_close(fd, cids[0]);
	cap_close(fd, cids[1]);
	space_close(fd, 0, "copy");
	check_sys(munmap(src, max), "munmap");
	check_sys(munmap(dst, max), "munmap");
	watchdog(nullptr);
}

/* ---- fabric: the node as its own peer ------------------------------------- */

/*
 * The fabric groups need the node configured as its own peer and UP
 * (tools/bench.sh --fabric does that: fractctl node add NODE_ID ETH0_ADDR).
 * The benchmarks toggle /sys/module/fractos/parameters/fabric_loopback
 * around their turns (outside the timing): 1 sends invocations of local
 * Requests through the RDMA path to the node itself, 0 keeps them local,
 * so the local and the fabric variant of each benchmark take turns in the
 * same rounds.  Messages and bytes per operation come from the node's tx
 * counters (fractctl -j node show ID -s), in untimed runs of their own.
 */
const char *const param_dir = "/sys/module/fractos/parameters/";

bool param_read(const char *name, long long *v)
{
	std::string path = std::string(param_dir) + name;
	FILE *f = fopen(path.c_str(), "re");
	char buf[64] = "";

	if (!f)
		return false;
	bool ok = fgets(buf, sizeof(buf), f) != nullptr;
	fclose(f);
	if (!ok)
		return false;
	if (buf[0] == 'Y' || buf[0] == 'N') {
		*v = buf[0] == 'Y';
		return true;
	}
	char *end;
	errno = 0;
	*v = strtoll(buf, &end, 0);
	return !errno && end != buf;
}

void param_write(const char *name, long long v)
{
	std::string path = std::string(param_dir) + name;
	std::string s = std::to_string(v) + "\n";
	int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		die_err("open " + path, errno);
	if (write(fd, s.data(), s.size()) != (ssize_t)s.size())
		die_err("write " + path, errno);
	check_sys(close(fd), "close " + path);
}

void set_loopback(bool on)
{
	param_write("fabric_loopback", on);
}

std::string fractctl_path()
{
	const char *e = getenv("FRACTCTL");

	if (e && *e)
		return e;
	if (access("tools/fractctl", X_OK) == 0)
		return "tools/fractctl";
	return "fractctl";
}

struct NodeStat {
	std::string state;
	uint64_t tx_msgs = 0, tx_bytes = 0;
};

/* Node @id's state and tx counters, from fractctl's JSON; false if unknown. */
bool node_stat(uint32_t id, NodeStat *ns)
{
	std::string cmd = fractctl_path() + " -j node show " +
			  std::to_string(id) + " -s 2>/dev/null";
	FILE *p = popen(cmd.c_str(), "re");
	std::string out;
	char buf[4096];
	size_t n;

	if (!p)
		return false;
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
		out.append(buf, n);
	if (pclose(p) != 0)
		return false;
	auto value = [&](const char *key) -> size_t {
		size_t i = out.find(std::string("\"") + key + "\"");

		return i == std::string::npos ? i : out.find(':', i);
	};
	size_t i = value("state"), j;
	if (i == std::string::npos || (i = out.find('"', i)) == std::string::npos ||
	    (j = out.find('"', i + 1)) == std::string::npos)
		return false;
	ns->state = out.substr(i + 1, j - i - 1);
	if ((i = value("tx_msgs")) == std::string::npos)
		return false;
	ns->tx_msgs = strtoull(out.c_str() + i + 1, nullptr, 10);
	if ((i = value("tx_bytes")) == std::string::npos)
		return false;
	ns->tx_bytes = strtoull(out.c_str() + i + 1, nullptr, 10);
	return true;
}

uint32_t fabric_node;	/* this node's id, configured as its own peer */

/* Why the fabric groups cannot run here, or "" if they can. */
std::string fabric_unavailable()
{
	long long v;
	NodeStat ns;

	if (!param_read("fabric_loopback", &v))
		return "the module has no fabric_loopback parameter";
	if (!param_read("node_id", &v))
		return "the module has no node_id parameter";
	fabric_node = (uint32_t)v;
	if (!node_stat(fabric_node, &ns))
		return "node " + std::to_string(fabric_node) + " (this node) is not "
		       "configured as its own peer (" + fractctl_path() +
		       " node add " + std::to_string(fabric_node) +
		       " ETH0_ADDR; tools/bench.sh --fabric does it)";
	if (ns.state != "up")
		return "node " + std::to_string(fabric_node) + " is " + ns.state +
		       ", not up";
	return "";
}

/* Run @op @n times with fabric_loopback=1, untimed; record msgs/bytes per op. */
void wire_count(const std::string &name, unsigned n,
		const std::function<void()> &op,
		const std::function<void()> &enter = {},
		const std::function<void()> &leave = {})
{
	NodeStat a, b;

	set_loopback(true);
	if (enter)
		enter();
	if (!node_stat(fabric_node, &a))
		die("fractctl node show %u failed", fabric_node);
	for (unsigned i = 0; i < n; i++)
		op();
	if (!node_stat(fabric_node, &b))
		die("fractctl node show %u failed", fabric_node);
	if (leave)
		leave();
	set_loopback(false);
	wires.push_back({name, (double)(b.tx_msgs - a.tx_msgs) / n,
			 (double)(b.tx_bytes - a.tx_bytes) / n});
}

/*
 * perftest baselines (-B FILE, written by tools/bench.sh): lines
 *   lat TOOL:SIZE T_TYPICAL_US T_AVG_US
 *   bw TOOL:SIZE MIB_PER_S
 * Latencies become results "perftest TOOL SIZE" (t_p50 = t_typical; the
 * row's iters column says "perftest"), ib_send_lat also "... x2" (two
 * one-ways, i.e. perftest's round trip); bandwidths "perftest TOOL SIZE
 * (per MiB)" with the time per MiB.
 */
void load_baselines()
{
	if (opt.baselines.empty())
		return;
	FILE *f = fopen(opt.baselines.c_str(), "re");
	char line[256];
	bool header = false;

	if (!f)
		die_err("open " + opt.baselines, errno);
	while (fgets(line, sizeof(line), f)) {
		char kind[8], name[128];
		double a = 0, b = 0;
		int n = sscanf(line, "%7s %127s %lf %lf", kind, name, &a, &b);

		/* perftest prints inf when its clock calibration failed */
		if (n < 3 || !(a > 0) || !std::isfinite(a) ||
		    (n == 4 && (!(b > 0) || !std::isfinite(b))))
			continue;
		if (!header) {
			print_header("perftest baselines (tools/bench.sh, same device)");
			header = true;
		}
		std::replace(name, name + strlen(name), ':', ' ');
		Result r;
		r.note = "perftest";
		r.iters = 1;
		if (!strcmp(kind, "lat") && n == 4) {
			r.name = std::string("perftest ") + name;
			r.p50_ns = a * 1e3;
			r.avg_ns = b * 1e3;
			r.p99_ns = NAN;
			results.push_back(r);
			print_row(results.back());
			if (strncmp(name, "ib_send_lat", 11) != 0)
				continue;
			r.name += " x2";
			r.p50_ns *= 2;
			r.avg_ns *= 2;
			results.push_back(r);
			print_row(results.back());
		} else if (!strcmp(kind, "bw")) {
			/* ns per MiB */
			r.name = std::string("perftest ") + name + " (per MiB)";
			r.avg_ns = r.p50_ns = 1e9 / a;
			r.p99_ns = NAN;
			results.push_back(r);
			print_row(results.back());
		}
	}
	fclose(f);
}

/* Fork the ping-pong peer (pingpong_child) and set up both Requests. */
struct Peer {
	PingFds f {};
	int sp = -1;
	uint32_t service = 0, reply = 0;
	struct sigaction old {};
	cpu_set_t old_mask;

	/* -a same|split places the two processes as for the ping-pong group. */
	void start()
	{
		f.p2c[0] = f.p2c[1] = f.c2p[0] = f.c2p[1] = -1;
		f.e2c = f.e2p = -1;
		place_pair(f, old_mask);
		check_sys(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0,
				     f.ctl), "socketpair");
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
		check_sys(sigaction(SIGCHLD, &sa, &old), "sigaction");

		sp = space_open();
		int efd;
		if (recv_byte(f.ctl[0], &efd) != 'S')
			die("fabric ping-pong setup: bad control message");
		struct fractos_cap_import im {};
		im.fd = efd;
		fos(sp, FRACTOS_IOC_CAP_IMPORT, &im);
		check_sys(close(efd), "close imported fd");
		service = im.cid;
		reply = request_create(sp, TAG_REPLY);
		uint64_t v = HELLO;
		invoke(sp, service, &v, &reply, 1);
		if (receive(sp, 0, TAG_REPLY) != READY)
			die("fabric ping-pong setup: bad ready");
	}
	void rt(uint64_t x)
	{
		invoke(sp, service, &x);
		if (__builtin_expect(receive(sp, 0, TAG_REPLY) != x, 0))
			die("fabric ping-pong: payload mismatch");
	}
	void begin() { send_byte(f.ctl[0], 'F'); }
	void end() { rt(QUIT); }
	void stop()
	{
		cap_close(sp, reply);
		cap_close(sp, service);
		space_close(sp, 0, "fabric ping-pong");
		check_sys(sigaction(SIGCHLD, &old, nullptr), "sigaction");
		send_byte(f.ctl[0], 'Q');
		if (recv_byte(f.ctl[0]) != 'D')
			die("fabric ping-pong teardown: bad control message");
		int st;
		pid_t p;
		do
			p = waitpid(child_pid, &st, 0);
		while (p < 0 && errno == EINTR);
		check_sys(p, "waitpid");
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			die("fabric ping-pong peer failed (status %#x)", st);
		check_sys(close(f.ctl[0]), "close");
		check_sys(close(f.ctl[1]), "close");
		if (sched_setaffinity(0, sizeof(old_mask), &old_mask) != 0)
			die_err("sched_setaffinity (restore)", errno);
	}
};

const unsigned cap_counts[] = {0, 1, 8, 32};

void bench_fabric()
{
	watchdog("fabric");
	std::string why = fabric_unavailable();
	if (!why.empty()) {
		print_header("fabric (node as its own peer, fabric_loopback=1)");
		fprintf(stderr, "%s: fabric groups skipped: %s\n", prog, why.c_str());
		skip("fabric invoke/receive rt", why);
		skip("fabric invoke+receive 0 caps", why);
		skip("fabric MEMORY_COPY", why);
		watchdog(nullptr);
		return;
	}
	set_loopback(false);

	/* Round trip between two processes: local and through the fabric. */
	print_header(("invoke->receive->reply rt, 2 processes" +
		      (opt.affinity == "none" ? std::string() : ", -a " + opt.affinity) +
		      " (node " + std::to_string(fabric_node) +
		      " as its own peer)").c_str());
	{
		Peer p;
		uint64_t seq = 0;

		p.start();
		wire_count("fabric invoke/receive rt", 200, [&] { p.rt(++seq); },
			   [&] { p.begin(); }, [&] { p.end(); });
		measure("local invoke/receive rt", 1, [&] { p.rt(++seq); },
			[&] { p.begin(); }, [&] { p.end(); });
		measure("fabric invoke/receive rt", 1, [&] { p.rt(++seq); },
			[&] { set_loopback(true); p.begin(); },
			[&] { p.end(); set_loopback(false); });
		run_group();
		p.stop();
	}

	/* Invoke + receive in one process with 0..32 delegated capabilities. */
	print_header("invoke+receive with N delegated caps (1 process)");
	{
		const uint64_t tag = 0xca95;
		int sp = space_open();
		uint32_t req = request_create(sp, tag);
		const size_t page = 4096;
		char *buf = (char *)mmap(nullptr, 32 * page, PROT_READ | PROT_WRITE,
					 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
					 -1, 0);
		if (buf == MAP_FAILED)
			die_err("mmap", errno);
		uint32_t mems[32], got[32];
		for (unsigned i = 0; i < 32; i++) {
			struct fractos_memory_create mc {};

			mc.addr = (uintptr_t)(buf + i * page);
			mc.len = page;
			mc.perms = FRACTOS_PERM_ALL;
			fos(sp, FRACTOS_IOC_MEMORY_CREATE, &mc);
			mems[i] = mc.cid;
		}
		auto op = [sp, req, &mems, &got](unsigned n) {
			uint64_t imm = n;

			invoke(sp, req, &imm, mems, n);
			if (__builtin_expect(receive(sp, 0, tag, got, n) != n, 0))
				die("invoke+receive: payload mismatch");
			for (unsigned i = 0; i < n; i++)
				cap_close(sp, got[i]);
		};
		for (unsigned n : cap_counts)
			wire_count("fabric invoke+receive " + std::to_string(n) +
				   " caps", 100, [&op, n] { op(n); });
		for (unsigned n : cap_counts) {
			std::string ns = std::to_string(n);

			measure("local invoke+receive " + ns + " caps", 1,
				[&op, n] { op(n); });
			measure("fabric invoke+receive " + ns + " caps", 1,
				[&op, n] { op(n); }, [] { set_loopback(true); },
				[] { set_loopback(false); });
		}
		run_group();
		for (uint32_t m : mems)
			cap_close(sp, m);
		cap_close(sp, req);
		space_close(sp, 0, "fabric invoke");
		check_sys(munmap(buf, 32 * page), "munmap");
	}
	watchdog(nullptr);
}

/*
 * memory_copy through the fabric: probed with a 1-byte copy between two
 * Memory objects with fabric_loopback=1.  It counts as a fabric copy when
 * it succeeds and the node's tx counters moved (or with -C, which trusts a
 * success alone: for an implementation whose one-sided RDMA is not
 * counted); EOPNOTSUPP, another error or a copy that stayed local skip the
 * rows with "fabric copy: not available".
 */
const size_t fcopy_sizes[] = {1, 64, 4096, 65536, 1 << 20};
const char *const fcopy_labels[] = {"1B", "64B", "4KiB", "64KiB", "1MiB"};

void bench_fabric_copy()
{
	watchdog("fabric copy");
	if (!fabric_unavailable().empty()) {
		watchdog(nullptr);
		return;	/* bench_fabric() said why */
	}
	print_header("memory_copy through the fabric vs local");

	const size_t max = 1 << 20;
	char *src = (char *)mmap(nullptr, max, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	char *dst = (char *)mmap(nullptr, max, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (src == MAP_FAILED || dst == MAP_FAILED)
		die_err("mmap", errno);
	int fd = space_open();
	uint32_t cids[2];
	char *bufs[2] = {src, dst};
	for (int i = 0; i < 2; i++) {
		struct fractos_memory_create mc {};

		mc.addr = (uintptr_t)bufs[i];
		mc.len = max;
		mc.perms = FRACTOS_PERM_ALL;
		fos(fd, FRACTOS_IOC_MEMORY_CREATE, &mc);
		cids[i] = mc.cid;
	}

	/* The probe. */
	NodeStat a, b;
	struct fractos_memory_copy probe {};
	probe.src = cids[0];
	probe.dst = cids[1];
	probe.len = 1;
	src[0] = 0x5a;
	dst[0] = 0;
	if (!node_stat(fabric_node, &a))
		die("fractctl node show %u failed", fabric_node);
	set_loopback(true);
	int ret = ioctl(fd, FRACTOS_IOC_MEMORY_COPY, &probe), err = errno;
	set_loopback(false);
	if (!node_stat(fabric_node, &b))
		die("fractctl node show %u failed", fabric_node);
	std::string why;
	if (ret != 0)
		why = std::string("MEMORY_COPY with fabric_loopback=1: ") +
		      strerror(err) + (err == EOPNOTSUPP ? " (EOPNOTSUPP)" : "");
	else if (probe.copied != 1 || dst[0] != 0x5a)
		why = "MEMORY_COPY with fabric_loopback=1: data did not arrive";
	else if (b.tx_msgs == a.tx_msgs && !opt.force_copy)
		why = "MEMORY_COPY with fabric_loopback=1 sent no fabric message: "
		      "it stayed local (-C counts it anyway)";
	if (!why.empty()) {
		printf(" fabric copy: not available (%s)\n", why.c_str());
		for (const char *l : fcopy_labels)
			skip(std::string("fabric MEMORY_COPY ") + l,
			     "fabric copy: not available");
	} else {
		struct fractos_memory_copy mcs[5] = {};

		for (size_t s = 0; s < 5; s++) {
			struct fractos_memory_copy &mc = mcs[s];
			size_t n = fcopy_sizes[s];

			mc.src = cids[0];
			mc.dst = cids[1];
			mc.len = n;
			memset(src, (int)(0x11 * (s + 1)), n);
			memset(dst, 0, n);
			set_loopback(true);
			fos(fd, FRACTOS_IOC_MEMORY_COPY, &mc);
			set_loopback(false);
			if (mc.copied != n || memcmp(src, dst, n) != 0)
				die("fabric MEMORY_COPY of %zu bytes: data did not "
				    "arrive (copied %" PRIu64 ")", n,
				    (uint64_t)mc.copied);
			wire_count(std::string("fabric MEMORY_COPY ") +
				   fcopy_labels[s], n >= 65536 ? 10 : 50,
				   [fd, &mc] { fos(fd, FRACTOS_IOC_MEMORY_COPY, &mc); });
			measure(std::string("local MEMORY_COPY ") + fcopy_labels[s], 1,
				[fd, &mc] { fos(fd, FRACTOS_IOC_MEMORY_COPY, &mc); });
			measure(std::string("fabric MEMORY_COPY ") + fcopy_labels[s], 1,
				[fd, &mc] { fos(fd, FRACTOS_IOC_MEMORY_COPY, &mc); },
				[] { set_loopback(true); },
				[] { set_loopback(false); });
		}
		run_group();
	}
	cap_close(fd, cids[0]);
	cap_close(fd, cids[1]);
	space_close(fd, 0, "fabric copy");
	check_sys(munmap(src, max), "munmap");
	check_sys(munmap(dst, max), "munmap");
	watchdog(nullptr);
}

/* ---- group: revoke one capability held by N spaces ------------------------ */

/*
 * A Memory object of an owner space is exported once (CAP_EXPORT) and
 * imported into N other spaces (N opens of the device in this process);
 * the timed operation is the owner's CAP_REVOKE, which revokes every
 * holder's capability.  Set-up and the holders' CAP_CLOSEs are untimed.
 * N = 1, 10, 100 and -H (default 1000) take turns in -r rounds; each
 * round gives each N at least one revocation and at most 1/rounds of -t
 * (set-up included).  RLIMIT_NOFILE is raised to fit; if the hard limit
 * is too low, the larger N are skipped.
 */
void bench_revoke()
{
	watchdog("revoke");
	print_header("CAP_REVOKE of a Memory held by N spaces");

	std::vector<unsigned> ns;
	for (unsigned n : {1u, 10u, 100u})
		if (n < opt.holders)
			ns.push_back(n);
	ns.push_back(opt.holders);

	struct rlimit rl {};
	check_sys(getrlimit(RLIMIT_NOFILE, &rl), "getrlimit");
	rlim_t need = (rlim_t)opt.holders + 64;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
		rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ? need :
			      std::min(need, rl.rlim_max);
		check_sys(setrlimit(RLIMIT_NOFILE, &rl), "setrlimit");
	}
	unsigned maxn = opt.holders;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need)
		maxn = rl.rlim_cur > 64 ? (unsigned)(rl.rlim_cur - 64) : 0;

	int owner = space_open();
	std::vector<int> spaces;
	for (unsigned i = 0; i < std::min(maxn, opt.holders); i++)
		spaces.push_back(space_open());
	std::vector<uint32_t> held(spaces.size());
	char *buf = (char *)mmap(nullptr, 4096, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (buf == MAP_FAILED)
		die_err("mmap", errno);

	struct Acc {
		std::vector<double> samples;
		std::vector<uint64_t> rsum, rn;
	};
	std::vector<Acc> acc(ns.size());
	const uint64_t budget = (uint64_t)(opt.seconds * 1e9) / opt.rounds;
	const uint64_t most = std::max<uint64_t>(1, opt.iters / opt.rounds);

	for (size_t k = 0; k < ns.size(); k++) {
		acc[k].rsum.assign(opt.rounds, 0);
		acc[k].rn.assign(opt.rounds, 0);
	}
	/* rep < 0: one untimed warm-up round */
	for (int r = -1; r < (int)opt.rounds; r++) {
		for (size_t k = 0; k < ns.size(); k++) {
			unsigned n = ns[k];

			if (n > spaces.size())
				continue;
			uint64_t t0 = now_ns(), reps = 0;
			do {
				struct fractos_memory_create mc {};
				mc.addr = (uintptr_t)buf;
				mc.len = 4096;
				mc.perms = FRACTOS_PERM_ALL;
				fos(owner, FRACTOS_IOC_MEMORY_CREATE, &mc);
				struct fractos_cap_export ex {};
				ex.cid = mc.cid;
				ex.flags = FRACTOS_EXPORT_CLOEXEC;
				fos(owner, FRACTOS_IOC_CAP_EXPORT, &ex);
				for (unsigned i = 0; i < n; i++) {
					struct fractos_cap_import im {};

					im.fd = ex.fd;
					fos(spaces[i], FRACTOS_IOC_CAP_IMPORT, &im);
					held[i] = im.cid;
				}
				check_sys(close(ex.fd), "close exported fd");

				struct fractos_cap_arg rv {};
				rv.cid = mc.cid;
				uint64_t a = now_ns();
				fos(owner, FRACTOS_IOC_CAP_REVOKE, &rv);
				uint64_t e = now_ns();

				struct fractos_cap_info ci {};
				ci.cid = held[n - 1];
				fos(spaces[n - 1], FRACTOS_IOC_CAP_INFO, &ci);
				if (!(ci.info_flags & FRACTOS_INFO_REVOKED))
					die("revoke: holder %u's capability is not revoked", n);
				for (unsigned i = 0; i < n; i++)
					cap_close(spaces[i], held[i]);
				cap_close(owner, mc.cid);
				reps++;
				if (r >= 0) {
					acc[k].samples.push_back((double)(e - a));
					acc[k].rsum[r] += e - a;
					acc[k].rn[r]++;
				}
			} while (r >= 0 && now_ns() - t0 < budget && reps < most);
		}
	}
	group_seq++;
	for (size_t k = 0; k < ns.size(); k++) {
		std::string name = "CAP_REVOKE held by " + std::to_string(ns[k]) +
				   " spaces";
		if (ns[k] > spaces.size()) {
			skip(name, "RLIMIT_NOFILE hard limit " +
				   std::to_string((unsigned long long)rl.rlim_max) +
				   " is too low");
			continue;
		}
		Result res;
		uint64_t sum = 0, cnt = 0;
		res.name = name;
		for (unsigned r = 0; r < opt.rounds; r++) {
			sum += acc[k].rsum[r];
			cnt += acc[k].rn[r];
			res.round_ns.push_back(acc[k].rn[r] ?
				(double)acc[k].rsum[r] / (double)acc[k].rn[r] : NAN);
		}
		res.iters = cnt;
		res.avg_ns = (double)std::max<uint64_t>(sum, 1) / (double)cnt;
		res.p50_ns = pct(acc[k].samples, 0.50);
		res.p99_ns = pct(acc[k].samples, 0.99);
		res.gid = group_seq;
		results.push_back(res);
		print_row(results.back());
	}

	for (int s : spaces)
		space_close(s, 0, "revoke holder");
	space_close(owner, 0, "revoke owner");
	check_sys(munmap(buf, 4096), "munmap");
	watchdog(nullptr);
}

/* ---- main --------------------------------------------------------------- */

void compute_ratios()
{
	add_ratio("SPACE_INFO ioctl / getppid syscall", "SPACE_INFO ioctl",
		  "getppid syscall");
	for (unsigned b : batches) {
		std::string bs = std::to_string(b);
		add_ratio("SPACE_INFO io_uring b" + bs + " / SPACE_INFO ioctl (per op)",
			  "SPACE_INFO io_uring b" + bs, "SPACE_INFO ioctl");
	}
	for (unsigned b : batches) {
		std::string bs = std::to_string(b);
		add_ratio("SPACE_INFO io_uring b" + bs + " / NOP io_uring b" + bs,
			  "SPACE_INFO io_uring b" + bs, "NOP io_uring b" + bs);
	}
	for (unsigned b : batches) {
		std::string bs = std::to_string(b);
		add_ratio("invoke+receive io_uring b" + bs + " / ioctl (per op)",
			  "invoke+receive io_uring b" + bs, "invoke+receive ioctl");
	}
	add_ratio("invoke+receive ioctl / SPACE_INFO ioctl",
		  "invoke+receive ioctl", "SPACE_INFO ioctl");
	add_ratio("fractos rt / pipe rt", "fractos invoke/receive rt",
		  "pipe rt");
	add_ratio("fractos rt / eventfd rt", "fractos invoke/receive rt",
		  "eventfd rt");
	for (const char *l : {"1B", "4KiB", "64KiB", "1MiB"})
		add_ratio(std::string("MEMORY_COPY / memcpy ") + l,
			  std::string("MEMORY_COPY ioctl ") + l,
			  std::string("memcpy ") + l);
	for (auto [l, n] : {std::pair{"64KiB", 65536.0}, {"1MiB", 1048576.0}}) {
		add_bandwidth(std::string("MEMORY_COPY bandwidth ") + l,
			      std::string("MEMORY_COPY ioctl ") + l, n);
		add_bandwidth(std::string("memcpy bandwidth ") + l,
			      std::string("memcpy ") + l, n);
	}

	/* fabric (perftest names as tools/bench.sh writes them) */
	add_ratio("fabric rt / local rt (2 processes)",
		  "fabric invoke/receive rt", "local invoke/receive rt");
	add_ratio("fabric rt / ib_send_lat 8B x2",
		  "fabric invoke/receive rt", "perftest ib_send_lat 8B x2");
	add_ratio("fabric rt / ib_send_lat 48B x2",
		  "fabric invoke/receive rt", "perftest ib_send_lat 48B x2");
	add_ratio("fabric invoke+receive / local (0 caps)",
		  "fabric invoke+receive 0 caps", "local invoke+receive 0 caps");
	add_ratio("fabric invoke+receive 0 caps / ib_send_lat 8B x2",
		  "fabric invoke+receive 0 caps", "perftest ib_send_lat 8B x2");
	add_ratio("fabric invoke+receive 0 caps / ib_send_lat 48B x2",
		  "fabric invoke+receive 0 caps", "perftest ib_send_lat 48B x2");
	for (const char *w : {"local", "fabric"}) {
		std::string base = std::string(w) + " invoke+receive ";
		for (unsigned n : {1u, 8u, 32u})
			add_slope(std::string(w) + " per delegated cap (0->" +
				  std::to_string(n) + " caps)",
				  base + std::to_string(n) + " caps",
				  base + "0 caps", n);
	}
	add_ratio("fabric / local invoke+receive 32 caps",
		  "fabric invoke+receive 32 caps", "local invoke+receive 32 caps");
	for (const char *l : fcopy_labels) {
		add_ratio(std::string("fabric / local MEMORY_COPY ") + l,
			  std::string("fabric MEMORY_COPY ") + l,
			  std::string("local MEMORY_COPY ") + l);
		add_ratio(std::string("fabric MEMORY_COPY / ib_write_lat ") + l,
			  std::string("fabric MEMORY_COPY ") + l,
			  std::string("perftest ib_write_lat ") + l);
	}
	for (auto [l, n] : {std::pair{"64KiB", 65536.0}, {"1MiB", 1048576.0}}) {
		add_bandwidth(std::string("fabric MEMORY_COPY bandwidth ") + l,
			      std::string("fabric MEMORY_COPY ") + l, n);
		add_bandwidth(std::string("ib_write_bw bandwidth ") + l,
			      std::string("perftest ib_write_bw ") + l + " (per MiB)",
			      1048576.0);
	}
	/* time per byte: bandwidth(ib_write_bw) / bandwidth(fabric copy) */
	for (auto [l, n] : {std::pair{"64KiB", 65536.0}, {"1MiB", 1048576.0}}) {
		const Result *a = find(std::string("fabric MEMORY_COPY ") + l);
		const Result *b = find(std::string("perftest ib_write_bw ") + l +
				       " (per MiB)");
		if (a && b)
			ratios.push_back({std::string("fabric MEMORY_COPY / ib_write_bw ") +
					  l + " (time/byte)",
					  a->avg_ns / n / (b->avg_ns / 1048576.0),
					  a->p50_ns / n / (b->p50_ns / 1048576.0), "x"});
	}
	std::string big = "CAP_REVOKE held by " + std::to_string(opt.holders) + " spaces";
	add_ratio("CAP_REVOKE " + std::to_string(opt.holders) + " holders / 1 holder",
		  big, "CAP_REVOKE held by 1 spaces");
	add_slope("CAP_REVOKE per extra holder (1->" + std::to_string(opt.holders) + ")",
		  big, "CAP_REVOKE held by 1 spaces", opt.holders - 1.0);
	add_ratio("CAP_REVOKE " + std::to_string(opt.holders) +
		  " holders / fabric invoke+receive 0 caps", big,
		  "fabric invoke+receive 0 caps");
}

[[noreturn]] void usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: %s [-n ITERS] [-t SECONDS] [-r ROUNDS] [-j] [-J FILE] [-b GROUPS]\n"
		"       [-a none|same|split] [-d DEVICE] [-B FILE] [-H N] [-C]\n"
		"  -n ITERS    most timed operations per benchmark (default 1000000)\n"
		"  -t SECONDS  most timed seconds per benchmark (default 1)\n"
		"  -r ROUNDS   interleave the benchmarks of a group in ROUNDS turns\n"
		"              each (default 5), so load changes hit all alike\n"
		"  -j          print JSON instead of tables\n"
		"  -J FILE     also write the JSON to FILE\n"
		"  -b GROUPS   comma-separated: null,pingpong,invoke,copy,fabric,\n"
		"              revoke or all (default null,pingpong,invoke,copy);\n"
		"              fabric needs the node configured as its own peer\n"
		"              (tools/bench.sh --fabric), else it is skipped\n"
		"  -a MODE     ping-pong placement: none (the scheduler's choice,\n"
		"              default), same (both processes on one CPU) or split\n"
		"              (client and peer on two different CPUs)\n"
		"  -d DEVICE   the fractos device (default " FRACTOS_DEVICE ")\n"
		"  -B FILE     perftest baselines for the fabric ratios\n"
		"              (lines: lat NAME T_TYPICAL_US T_AVG_US | bw NAME MIB/S)\n"
		"  -H N        revoke: most spaces holding the capability (default 1000)\n"
		"  -C          fabric copy: count a copy made with fabric_loopback=1\n"
		"              as a fabric copy even if no fabric message was sent\n"
		"Each benchmark warms up, then runs until ITERS operations or\n"
		"SECONDS have passed, whichever comes first (in ROUNDS turns).\n",
		prog);
	exit(status);
}

} // namespace

int main(int argc, char **argv)
{
	int c;

	while ((c = getopt(argc, argv, "n:t:r:jJ:b:a:d:B:H:Ch")) != -1) {
		char *end;

		switch (c) {
		case 'n':
			errno = 0;
			opt.iters = strtoull(optarg, &end, 0);
			if (errno || *end || !opt.iters || optarg[0] == '-')
				die("-n: bad iteration count '%s'", optarg);
			break;
		case 't':
			errno = 0;
			opt.seconds = strtod(optarg, &end);
			if (errno || *end || !(opt.seconds > 0) ||
			    opt.seconds > 3600)
				die("-t: bad number of seconds '%s'", optarg);
			break;
		case 'r':
			errno = 0;
			opt.rounds = (unsigned)strtoul(optarg, &end, 0);
			if (errno || *end || !opt.rounds || opt.rounds > 1000 ||
			    optarg[0] == '-')
				die("-r: bad number of rounds '%s'", optarg);
			break;
		case 'j':
			opt.json = true;
			break;
		case 'J':
			opt.json_file = optarg;
			break;
		case 'B':
			opt.baselines = optarg;
			break;
		case 'C':
			opt.force_copy = true;
			break;
		case 'H':
			errno = 0;
			opt.holders = (unsigned)strtoul(optarg, &end, 0);
			if (errno || *end || opt.holders < 2 ||
			    opt.holders > 100000 || optarg[0] == '-')
				die("-H: bad number of holders '%s' (2..100000)", optarg);
			break;
		case 'b':
			opt.groups = optarg;
			break;
		case 'a':
			opt.affinity = optarg;
			if (opt.affinity != "none" && opt.affinity != "same" &&
			    opt.affinity != "split")
				die("-a: unknown placement '%s'", optarg);
			break;
		case 'd':
			opt.dev = optarg;
			break;
		case 'h':
			usage(0);
		default:
			usage(2);
		}
	}
	if (optind != argc)
		usage(2);
	for (size_t p = 0; p <= opt.groups.size();) {
		size_t q = opt.groups.find(',', p);
		if (q == std::string::npos)
			q = opt.groups.size();
		std::string g = opt.groups.substr(p, q - p);
		if (g != "null" && g != "pingpong" && g != "invoke" &&
		    g != "copy" && g != "fabric" && g != "revoke" && g != "all")
			die("-b: unknown group '%s'", g.c_str());
		p = q + 1;
	}

	signal(SIGALRM, on_alarm);
	signal(SIGPIPE, SIG_IGN);
	calibrate_timer();

	/* Fail early and clearly if the device is not there. */
	check_sys(close(space_open()), "close space");

	if (!opt.json) {
		struct utsname u {};

		uname(&u);
		printf("fractos-bench: kernel %s, %ld cpu(s), at most %" PRIu64
		       " ops or %g s per benchmark in %u interleaved rounds;"
		       " clock read %.0f ns\n"
		       "  grp = operations per timed sample (cheap operations "
		       "are timed in groups)\n",
		       u.release, sysconf(_SC_NPROCESSORS_ONLN), opt.iters,
		       opt.seconds, opt.rounds, timer_ns);
	}

	if (group_enabled("null"))
		bench_null();
	if (group_enabled("invoke"))
		bench_invoke();
	if (group_enabled("pingpong"))
		bench_pingpong();
	if (group_enabled("copy"))
		bench_copy();
	load_baselines();
	if (group_enabled("fabric")) {
		bench_fabric();
		bench_fabric_copy();
	}
	if (group_enabled("revoke"))
		bench_revoke();

	compute_ratios();
	print_final();
	if (fflush(stdout) != 0 || ferror(stdout))
		die_err("writing output", errno);
	return 0;
}
