// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fractos-bench's shared harness: what every benchmark group uses.
 * Errors (die, check_sys), the options, the watchdog, the fractos ioctl
 * helpers, the timing (measure/run_group, Result), the io_uring batch
 * sizes (the Ring itself is local.cpp's), the output and ratio tables (output.cpp) and the ping-pong
 * peer (pingpong.cpp) that the fabric groups fork too.  Defined in
 * harness.cpp unless noted; main.cpp says what the benchmark does.
 */
#ifndef FRACTOS_BENCH_HARNESS_HPP
#define FRACTOS_BENCH_HARNESS_HPP

#include <linux/fractos.h>

#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <functional>
#include <sched.h>
#include <string>
#include <sys/ioctl.h>
#include <sys/types.h>
#include <time.h>
#include <vector>

namespace fbench {

extern const char *prog;

/* ---- errors ------------------------------------------------------------ */

[[noreturn]] __attribute__((format(printf, 1, 2))) void die(const char *fmt, ...);
/* die() with the text of errno value @err appended. */
[[noreturn]] void die_err(const std::string &what, int err);
void check_sys(long ret, const std::string &what);

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
	bool trace = false;		/* -T: trace_marker around each stint */
};

extern Options opt;

bool group_enabled(const char *g);

/* ---- watchdog ---------------------------------------------------------- */

void on_alarm(int);
/* Arm the watchdog for one benchmark group. */
void watchdog(const char *what);

/* ---- fractos calls ----------------------------------------------------- */

const char *ioc_name(unsigned long cmd);

/* An ioctl that must succeed. */
inline void fos(int fd, unsigned long cmd, void *arg)
{
	if (__builtin_expect(ioctl(fd, cmd, arg) != 0, 0))
		die_err(std::string("ioctl ") + ioc_name(cmd), errno);
}

int space_open();
/* Close a space, first checking that it holds exactly @expect_caps caps. */
void space_close(int fd, uint32_t expect_caps, const char *who);
void cap_close(int fd, uint32_t cid);
uint32_t request_create(int fd, uint64_t tag);

inline void invoke(int fd, uint32_t cid, const uint64_t *imm,
		   const uint32_t *caps = nullptr, uint32_t ncaps = 0,
		   uint32_t flags = 0)
{
	struct fractos_request_invoke a {};

	a.cid = cid;
	a.flags = flags;
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

extern double timer_ns;	/* cost of one now_ns() */

void calibrate_timer();

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

extern std::vector<Result> results;

double pct(std::vector<double> &v, double p);

/*
 * Benchmarks are registered with measure() and run a group at a time by
 * run_group() (see harness.cpp); skip() records one that cannot run.
 * group_seq counts the groups run (Result::gid).
 */
extern unsigned group_seq;

void measure(const std::string &name, uint64_t per_unit,
	     std::function<void()> op, std::function<void()> enter = {},
	     std::function<void()> leave = {});
void run_group();
void skip(const std::string &name, const std::string &why);

/* ---- output (output.cpp) ----------------------------------------------- */

void print_header(const char *title);
void print_row(const Result &r);

struct Ratio {
	std::string name;
	double avg;	/* from t_avg */
	double p50;	/* from t_p50 */
	std::string unit;
	double rmin = NAN, rmax = NAN;	/* over the rounds, same group only */
};
extern std::vector<Ratio> ratios;

const Result *find(const std::string &name);
/* time(a) / time(b), from t_avg and from t_p50, if both ran */
void add_ratio(const std::string &label, const std::string &a,
	       const std::string &b);
/* Bandwidth of @name for @bytes per op, in GB/s. */
void add_bandwidth(const std::string &label, const std::string &name,
		   double bytes);
/* (time(a) - time(b)) / @d in us: the cost of each of @d extra units. */
void add_slope(const std::string &label, const std::string &a,
	       const std::string &b, double d);

/* Fabric messages and bytes sent per operation (node tx counters). */
struct Wire {
	std::string name;
	double msgs, bytes;
};
extern std::vector<Wire> wires;

void print_final();

/* io_uring SQEs per submit (the local groups; main.cpp's ratios name them) */
extern const unsigned batches[3];

/* ---- the ping-pong peer (pingpong.cpp), also the fabric groups' ---------- */

constexpr uint64_t QUIT = ~0ULL;
constexpr uint64_t HELLO = 0x48454c4c4fULL, READY = 0x5245414459ULL;
constexpr uint64_t TAG_REPLY = 0xc11eULL;

extern pid_t child_pid;

void on_sigchld(int);
void send_byte(int sock, char c, int fd = -1);
char recv_byte(int sock, int *fd = nullptr);

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
void place_pair(PingFds &f, cpu_set_t &old_mask);
void pin(int cpu, const char *who);
/* The service side; runs in the child and never returns. */
[[noreturn]] void pingpong_child(const PingFds &f);

/* ---- the groups (local.cpp, pingpong.cpp, copy.cpp, fabric.cpp, ...) ---- */

void bench_null();
void bench_invoke();
void bench_pingpong();
void bench_copy();
void load_baselines();
void bench_fabric();
void bench_fabric_copy();
extern const char *const fcopy_labels[5];	/* fabric copy sizes */
void bench_revoke();

} // namespace fbench

#endif /* FRACTOS_BENCH_HARNESS_HPP */
