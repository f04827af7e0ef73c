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

/*
 * This file: the ratio table's entries, the usage text and main().  The
 * shared harness is harness.hpp, harness.cpp and output.cpp; each group
 * has a file of its own: local.cpp (null, invoke), pingpong.cpp, copy.cpp,
 * fabric.cpp (fabric, perftest baselines) and revoke.cpp.
 */
#include "harness.hpp"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <sys/utsname.h>
#include <unistd.h>
#include <utility>

using namespace fbench;

namespace {

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
	/* FRACTOS_INVOKE_NOACK: one message per invocation, not two */
	add_ratio("fabric rt noack / ib_send_lat 8B x2",
		  "fabric invoke/receive rt noack", "perftest ib_send_lat 8B x2");
	add_ratio("fabric invoke+receive noack / ib_send_lat 8B x2",
		  "fabric invoke+receive 0 caps noack",
		  "perftest ib_send_lat 8B x2");
	add_ratio("fabric invoke+receive noack / ib_send_lat 8B",
		  "fabric invoke+receive 0 caps noack",
		  "perftest ib_send_lat 8B");
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
		"  -T          mark each timed stint in the kernel's trace\n"
		"              (trace_marker: \"fbench begin NAME\", \"fbench end\n"
		"              NAME OPS\"), for tools/bench-costs.py\n"
		"Each benchmark warms up, then runs until ITERS operations or\n"
		"SECONDS have passed, whichever comes first (in ROUNDS turns).\n",
		prog);
	exit(status);
}

} // namespace

int main(int argc, char **argv)
{
	int c;

	while ((c = getopt(argc, argv, "n:t:r:jJ:b:a:d:B:H:CTh")) != -1) {
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
		case 'T':
			opt.trace = true;
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
