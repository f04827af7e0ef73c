// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fractos-chain: a 3-stage pipeline across four processes, built two ways.
 *
 *   chain  The client builds the pipeline once out of continuations:
 *              k3 = stage3 derived with the client's reply Request,
 *              k2 = stage2 derived with k3,
 *          and invokes stage1 with k2 and the input.  Each stage computes
 *          and invokes the continuation it was handed; the client is not
 *          involved between stages and wakes up once, for the result.
 *   star   The client invokes each stage with its reply Request, waits for
 *          the reply and feeds it to the next stage: it mediates every hop.
 *
 * Stage i applies f_i (x+1, x*2, x+3) to the 8-byte immediate and invokes
 * its first capability argument with the result.  Both shapes compute the
 * same value; the program checks it and prints the time per iteration.
 *
 * Usage: fractos-chain [-n ITERATIONS] [-w WARMUP] [-s chain|star] [-t]
 *        fractos-chain -S STAGES
 *        fractos-chain -R NODES [-F] [-k | -X] [-n ...] [-w ...] [-s ...]
 * (-s: time one shape only, e.g. under a trace; both by default.  -t: the
 * stages are threads of this process, each with a space of its own, so
 * that no hop switches address spaces: Documentation/benchmarks.rst,
 * "Chain against star: what a hop costs")
 *
 * Across nodes: -S 1,3 serves stages 1 and 3 on this node (threads, each
 * Request published as "fractos-chain.sN"), until each is stopped.
 * -R 2,3,2 is the client of stages 1, 2 and 3 on nodes 2, 3 and 2 (looked
 * up there, for up to 30 s): it derives every continuation and every
 * star hop's Request once, at the owner of its stage
 * (FRACTOS_CREATE_AT_OWNER: each hop goes straight to the next stage's
 * node), or with -F here (each hop of the chain is forwarded through this
 * node); -k leaves the stages running, -X only stops them.
 */
#include <caladan/caladan.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

using namespace caladan;
using clk = std::chrono::steady_clock;

constexpr int nstages = 3;
constexpr std::uint64_t reply_tag = 0xc0;
constexpr unsigned watchdog_s = 120;

std::uint64_t stage_fn(int stage, std::uint64_t x)
{
	switch (stage) {
	case 1:
		return x + 1;
	case 2:
		return x * 2;
	default:
		return x + 3;
	}
}

std::uint64_t pipeline(std::uint64_t x)
{
	for (int s = 1; s <= nstages; s++)
		x = stage_fn(s, x);
	return x;
}

void die(const std::string &what, std::error_code ec)
{
	std::fprintf(stderr, "fractos-chain: %s: %s\n", what.c_str(), describe(ec).c_str());
	std::exit(1);
}

template <class T>
T must(result<T> r, const std::string &what)
{
	if (!r)
		die(what, r.error());
	return std::move(*r);
}

void must(result<void> r, const std::string &what)
{
	if (!r)
		die(what, r.error());
}

/* ---- a stage: its own process and space ------------------------------- */

std::string stage_name(int stage)
{
	return "fractos-chain.s" + std::to_string(stage);
}

/* A stage's Request goes to the client over @sock, or (-1) by its name. */
int run_stage(int stage, int sock)
{
	auto sp = must(space::open(), "stage: open " FRACTOS_DEVICE);
	auto req = must(sp.request().set_tag(std::uint64_t(stage)).create(), "stage: request_create");
	if (sock < 0) {
		/* Looked up by another node's client: any uid's. */
		must(name_publish(req, stage_name(stage), FRACTOS_NAME_WORLD),
		     "stage: name_publish");
	} else {
		::alarm(watchdog_s);
		auto fd = must(req.export_fd(), "stage: export_fd");
		must(send_fd(sock, fd.get(), "stage"), "stage: send_fd");
	}

	for (;;) {
		auto m = sp.receive();
		if (!m) {
			if (m.error() == errno_code(EINTR))
				continue;
			die("stage " + std::to_string(stage) + ": receive", m.error());
		}
		auto x = m->imm<std::uint64_t>();
		if (!x || m->caps.empty())
			return 0; /* the stop message: no input, no continuation */
		must(sp.request(m->caps[0]).set_imm(stage_fn(stage, *x)).invoke(),
		     "stage " + std::to_string(stage) + ": invoke the continuation");
	}
}

/* ---- the client ------------------------------------------------------- */

struct timing {
	double mean_us;
	double median_us;
	double client_cpu_us; /* the client's own CPU time per iteration */
};

double cpu_us()
{
	rusage ru{};
	::getrusage(RUSAGE_THREAD, &ru); /* the client alone, with -t too */
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 + ru.ru_utime.tv_usec +
	       ru.ru_stime.tv_usec;
}

template <class Fn>
timing measure(unsigned warmup, unsigned n, Fn iteration)
{
	for (unsigned i = 0; i < warmup; i++)
		iteration(i);
	std::vector<double> us;
	us.reserve(n);
	const double cpu0 = cpu_us();
	for (unsigned i = 0; i < n; i++) {
		auto t0 = clk::now();
		iteration(warmup + i);
		us.push_back(std::chrono::duration<double, std::micro>(clk::now() - t0).count());
	}
	const double cpu = cpu_us() - cpu0;
	double sum = 0;
	for (double v : us)
		sum += v;
	std::sort(us.begin(), us.end());
	return {sum / n, us[n / 2], cpu / n};
}

std::uint64_t result_of(const space &sp, const std::string &what)
{
	auto m = must(sp.receive(std::chrono::seconds(30)), what + ": receive");
	if (m.tag != reply_tag)
		die(what + ": unexpected message", errno_code(EPROTO));
	return must(m.imm<std::uint64_t>(), what + ": reply immediate");
}

void check(std::uint64_t got, std::uint64_t want, const char *shape)
{
	if (got != want) {
		std::fprintf(stderr, "fractos-chain: %s computed %llu, expected %llu\n", shape,
			     (unsigned long long)got, (unsigned long long)want);
		std::exit(1);
	}
}

struct options {
	unsigned n = 1000, warmup = 100;
	std::string only;
};

/* Time the two shapes: @chain_once and @star_hop invoke; both then wait. */
template <class ChainFn, class StarFn>
void run_shapes(const space &sp, const options &o, ChainFn chain_once, StarFn star_hop)
{
	std::printf("\nrunning %u iterations (after %u warm-up) of x -> ((x + 1) * 2) + 3\n",
		    o.n, o.warmup);
	const bool do_chain = o.only != "star", do_star = o.only != "chain";
	timing chain{}, star{};
	if (do_chain)
		chain = measure(o.warmup, o.n, [&](unsigned i) {
			chain_once(std::uint64_t(i));
			check(result_of(sp, "chain"), pipeline(i), "chain");
		});
	if (do_star)
		star = measure(o.warmup, o.n, [&](unsigned i) {
			std::uint64_t x = i;
			for (int s = 0; s < nstages; s++) {
				star_hop(s, x);
				x = result_of(sp, "star");
			}
			check(x, pipeline(i), "star");
		});

	std::printf("                                          per iteration: median time"
		    " (mean)       client CPU (mean)  invokes  client syscalls\n");
	if (do_chain)
		std::printf("  chain (client not involved between stages): %9.1f us (%9.1f) %9.1f us"
			    "                4                2\n",
			    chain.median_us, chain.mean_us, chain.client_cpu_us);
	if (do_star)
		std::printf("  star  (client mediates every stage):        %9.1f us (%9.1f) %9.1f us"
			    "                6                6\n",
			    star.median_us, star.mean_us, star.client_cpu_us);
	if (do_chain && do_star)
		std::printf("  star / chain: %.2fx time (medians; %.2fx of the means), %.2fx client"
			    " CPU (means)\n",
			    star.median_us / chain.median_us, star.mean_us / chain.mean_us,
			    star.client_cpu_us / chain.client_cpu_us);
}

/* -S: serve @stages here, each a thread with its own space. */
int serve(const std::vector<int> &stages)
{
	std::vector<int> rc(stages.size(), 1);
	std::vector<std::thread> ts;
	for (std::size_t i = 0; i < stages.size(); i++)
		ts.emplace_back([&rc, &stages, i] { rc[i] = run_stage(stages[i], -1); });
	for (auto &t : ts)
		t.join();
	for (std::size_t i = 0; i < stages.size(); i++)
		std::printf("fractos-chain: stage %d stopped (%d)\n", stages[i], rc[i]);
	return std::count(rc.begin(), rc.end(), 0) == long(rc.size()) ? 0 : 1;
}

/* Stage @stage's Request on node @node, as soon as it is published. */
cap lookup_stage(const space &sp, int stage, std::uint32_t node)
{
	for (int i = 0;; i++) {
		auto c = name_lookup(sp, stage_name(stage), FRACTOS_NAME_NODE, node);
		if (c)
			return std::move(*c);
		if (c.error() != errno_code(ENOENT) || i >= 300)
			die("lookup of stage " + std::to_string(stage) + " on node " +
				    std::to_string(node),
			    c.error());
		::usleep(100 * 1000);
	}
}

/* -R: the client of stages on other nodes. */
int run_remote(const std::vector<std::uint32_t> &nodes, const options &o, bool here, bool keep,
	       bool stop_only)
{
	auto sp = must(space::open(), "open " FRACTOS_DEVICE);
	std::vector<cap> stage;
	for (int s = 0; s < nstages; s++) {
		stage.push_back(lookup_stage(sp, s + 1, nodes[s]));
		std::printf("  stage %d: on node %u, cid %u\n", s + 1, nodes[s], stage.back().cid());
	}
	if (!stop_only) {
		auto reply = must(sp.request().set_tag(reply_tag).create(), "request_create (reply)");
		auto derive = [&](const cap &base, const cap &arg, const char *what) {
			return must(sp.request(base).set_cap(arg).set_at_owner(!here).derive(), what);
		};
		/*
		 * A Request derived here from a proxy cannot be derived at the
		 * owner (its revocation here could not reach the result).
		 */
		auto here_child = must(sp.request(stage[0]).set_imm(std::uint64_t(0)).derive(),
				       "derive here");
		auto refused = sp.request(here_child).set_at_owner().derive();
		if (refused || refused.error() != errno_code(EOPNOTSUPP))
			die("at the owner, from one derived here: not EOPNOTSUPP",
			    refused ? std::error_code{} : refused.error());
		/* Built once: k1 (stage1, k2) -> k2 (stage2, k3) -> k3 (stage3, reply). */
		auto k3 = derive(stage[2], reply, "derive k3");
		auto k2 = derive(stage[1], k3, "derive k2");
		auto k1 = derive(stage[0], k2, "derive k1");
		std::vector<cap> hop;
		for (int s = 0; s < nstages; s++)
			hop.push_back(derive(stage[s], reply, "derive a star hop"));
		std::printf("  client: continuations derived %s\n",
			    here ? "here (hops forwarded through this node)" : "at their owners");
		run_shapes(
			sp, o,
			[&](std::uint64_t x) {
				must(sp.request(k1).set_imm(x).invoke(), "chain: invoke stage 1");
			},
			[&](int s, std::uint64_t x) {
				must(sp.request(hop[s]).set_imm(x).invoke(),
				     "star: invoke stage " + std::to_string(s + 1));
			});
	}
	if (!keep)
		for (auto &s : stage)
			must(request_invoke(s), "stop a stage");
	return 0;
}

/* "2,3,2" -> {2, 3, 2}; empty on a bad list. */
std::vector<std::uint32_t> parse_list(const char *arg)
{
	std::vector<std::uint32_t> v;
	for (const char *p = arg; *p;) {
		char *end;
		unsigned long x = std::strtoul(p, &end, 0);
		if (end == p || x > 0xffffffffUL)
			return {};
		v.push_back(std::uint32_t(x));
		p = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return {};
	}
	return v;
}

} // namespace

int main(int argc, char **argv)
{
	options o;
	std::vector<std::uint32_t> serve_list, nodes;
	bool threads = false, here = false, keep = false, stop_only = false;
	int opt;
	while ((opt = ::getopt(argc, argv, "n:w:s:tS:R:FkXh")) != -1) {
		switch (opt) {
		case 'n':
			o.n = unsigned(std::strtoul(optarg, nullptr, 0));
			break;
		case 'w':
			o.warmup = unsigned(std::strtoul(optarg, nullptr, 0));
			break;
		case 't':
			threads = true;
			break;
		case 'S':
			serve_list = parse_list(optarg);
			if (serve_list.empty() ||
			    std::any_of(serve_list.begin(), serve_list.end(),
					[](std::uint32_t s) { return s < 1 || s > nstages; }))
				goto usage;
			break;
		case 'R':
			nodes = parse_list(optarg);
			if (nodes.size() != nstages)
				goto usage;
			break;
		case 'F':
			here = true;
			break;
		case 'k':
			keep = true;
			break;
		case 'X':
			stop_only = true;
			break;
		case 's':
			o.only = optarg;
			if (o.only == "chain" || o.only == "star")
				break;
			goto usage;
		default:
		usage:
			std::fprintf(stderr, "usage: fractos-chain [-n ITERATIONS] [-w WARMUP]"
					     " [-s chain|star] [-t]\n"
					     "       fractos-chain -S STAGES (e.g. 1,3)\n"
					     "       fractos-chain -R NODES (e.g. 2,3,2) [-F] [-k | -X]"
					     " [-n ...] [-w ...] [-s ...]\n");
			return opt == 'h' ? 0 : 1;
		}
	}
	if (o.n == 0)
		o.n = 1;
	if (!serve_list.empty())
		return serve({serve_list.begin(), serve_list.end()});
	::alarm(watchdog_s);
	if (!nodes.empty())
		return run_remote(nodes, o, here, keep, stop_only);

	/* Four processes (or threads): this client and three stages, each with a space. */
	std::vector<pid_t> pids;
	std::vector<std::thread> workers;
	std::vector<int> thread_rc(nstages, 1);
	std::vector<unique_fd> socks;
	for (int s = 1; s <= nstages; s++) {
		int sv[2];
		if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
			die("socketpair", last_error());
		if (threads) {
			workers.emplace_back([s, fd = unique_fd(sv[1]), &thread_rc] {
				thread_rc[s - 1] = run_stage(s, fd.get());
			});
			socks.emplace_back(sv[0]);
			continue;
		}
		std::fflush(stdout);
		pid_t pid = ::fork();
		if (pid < 0)
			die("fork", last_error());
		if (pid == 0) {
			::close(sv[0]);
			socks.clear();
			::_exit(run_stage(s, sv[1]));
		}
		::close(sv[1]);
		socks.emplace_back(sv[0]);
		pids.push_back(pid);
	}

	auto sp = must(space::open(), "open " FRACTOS_DEVICE);
	std::vector<cap> stage;
	for (int s = 0; s < nstages; s++) {
		auto msg = must(recv_fd(socks[s].get()), "receiving stage " + std::to_string(s + 1));
		stage.push_back(must(import_fd(sp, msg.fd.get()), "import_fd"));
		if (threads)
			std::printf("  stage %d: a thread, its Request imported as cid %u\n", s + 1,
				    stage.back().cid());
		else
			std::printf("  stage %d: process %d, its Request imported as cid %u\n",
				    s + 1, int(pids[s]), stage.back().cid());
	}
	auto reply = must(sp.request().set_tag(reply_tag).create(), "request_create (reply)");

	/* The chain, built once: stage1 -> k2 (stage2) -> k3 (stage3) -> reply. */
	auto k3 = must(sp.request(stage[2]).set_cap(reply).derive(), "derive k3");
	auto k2 = must(sp.request(stage[1]).set_cap(k3).derive(), "derive k2");
	std::printf("  client: continuation chain stage1 -> stage2 (cid %u) -> stage3 (cid %u) -> "
		    "client (cid %u)\n",
		    k2.cid(), k3.cid(), reply.cid());

	run_shapes(
		sp, o,
		[&](std::uint64_t x) {
			must(sp.request(stage[0]).set_cap(k2).set_imm(x).invoke(),
			     "chain: invoke stage 1");
		},
		[&](int s, std::uint64_t x) {
			must(sp.request(stage[s]).set_cap(reply).set_imm(x).invoke(),
			     "star: invoke stage " + std::to_string(s + 1));
		});

	/* Stop the stages: an invocation without input or continuation. */
	for (auto &s : stage)
		must(request_invoke(s), "stop a stage");
	int rc = 0;
	for (pid_t pid : pids) {
		int status = 0;
		if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
			rc = 1;
	}
	for (auto &w : workers)
		w.join();
	for (int r : thread_rc)
		if (threads && r)
			rc = 1;
	if (rc)
		std::fprintf(stderr, "fractos-chain: a stage failed\n");
	return rc;
}
