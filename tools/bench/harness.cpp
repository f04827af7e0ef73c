// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fractos-bench's harness: errors, options, the watchdog, the fractos
 * ioctl helpers, the timer and the benchmark runner (measure, run_group,
 * skip), the io_uring batch sizes.  Declared in harness.hpp.
 */
#include "harness.hpp"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace fbench {

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

Options opt;

bool group_enabled(const char *g)
{
	std::string s = "," + opt.groups + ",";
	return s.find(std::string(",") + g + ",") != std::string::npos ||
	       s.find(",all,") != std::string::npos;
}

/* ---- watchdog ---------------------------------------------------------- */

namespace {

const char *volatile watchdog_what = "setup";

} // namespace

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

/* ---- timing ------------------------------------------------------------ */

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

std::vector<Result> results;

double pct(std::vector<double> &v, double p)
{
	size_t i = (size_t)std::floor(p * (double)(v.size() - 1) + 0.5);

	std::nth_element(v.begin(), v.begin() + i, v.end());
	return v[i];
}

namespace {

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

} // namespace

unsigned group_seq;

namespace {

/* -T: the kernel trace's marker file, opened once (-1: none). */
int trace_fd()
{
	static int fd = [] {
		int f = open("/sys/kernel/tracing/trace_marker", O_WRONLY | O_CLOEXEC);

		if (f < 0)
			f = open("/sys/kernel/debug/tracing/trace_marker", O_WRONLY | O_CLOEXEC);
		if (f < 0)
			die_err("-T: trace_marker", errno);
		return f;
	}();
	return fd;
}

void mark(const char *what, const std::string &name, uint64_t ops = 0)
{
	char line[256];
	int n = ops ? snprintf(line, sizeof(line), "fbench %s %s|%" PRIu64 "\n", what,
			       name.c_str(), ops)
		    : snprintf(line, sizeof(line), "fbench %s %s\n", what, name.c_str());

	if (opt.trace && n > 0 && write(trace_fd(), line, std::min<size_t>(n, sizeof(line) - 1)) < 0)
		die_err("-T: write trace_marker", errno);
}

} // namespace

void measure(const std::string &name, uint64_t per_unit,
	     std::function<void()> op, std::function<void()> enter,
	     std::function<void()> leave)
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
			uint64_t before = b.units;
			mark("begin", b.name);
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
			mark("end", b.name, (b.units - before) * b.per_unit);
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

const unsigned batches[] = {1, 16, 256};

} // namespace fbench
