// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fractos-bench's fabric groups (the node as its own peer, fabric_loopback
 * toggled around each turn): the two-process round trip and invoke with
 * delegated capabilities (bench_fabric), memory_copy (bench_fabric_copy);
 * and the perftest baselines (-B) they are compared with.
 */
#include "harness.hpp"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fbench {

/* ---- fabric: the node as its own peer ------------------------------------- */

namespace {

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

} // namespace

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

namespace {

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
	/* @flags: 0, or FRACTOS_INVOKE_NOACK after begin(true) */
	void rt(uint64_t x, uint32_t flags = 0)
	{
		invoke(sp, service, &x, nullptr, 0, flags);
		if (__builtin_expect(receive(sp, 0, TAG_REPLY) != x, 0))
			die("fabric ping-pong: payload mismatch");
	}
	/* @noack: the peer's replies go with FRACTOS_INVOKE_NOACK too */
	void begin(bool noack = false)
	{
		send_byte(f.ctl[0], noack ? 'N' : 'F');
	}
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

} // namespace

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
		/* Both invocations with FRACTOS_INVOKE_NOACK: two messages. */
		wire_count("fabric invoke/receive rt noack", 200,
			   [&] { p.rt(++seq, FRACTOS_INVOKE_NOACK); },
			   [&] { p.begin(true); }, [&] { p.end(); });
		measure("fabric invoke/receive rt noack", 1,
			[&] { p.rt(++seq, FRACTOS_INVOKE_NOACK); },
			[&] { set_loopback(true); p.begin(true); },
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
		auto op = [sp, req, &mems, &got](unsigned n, uint32_t fl = 0) {
			uint64_t imm = n;

			invoke(sp, req, &imm, mems, n, fl);
			if (__builtin_expect(receive(sp, 0, tag, got, n) != n, 0))
				die("invoke+receive: payload mismatch");
			for (unsigned i = 0; i < n; i++)
				cap_close(sp, got[i]);
		};
		for (unsigned n : cap_counts)
			wire_count("fabric invoke+receive " + std::to_string(n) +
				   " caps", 100, [&op, n] { op(n); });
		wire_count("fabric invoke+receive 0 caps noack", 100,
			   [&op] { op(0, FRACTOS_INVOKE_NOACK); });
		for (unsigned n : cap_counts) {
			std::string ns = std::to_string(n);

			measure("local invoke+receive " + ns + " caps", 1,
				[&op, n] { op(n); });
			measure("fabric invoke+receive " + ns + " caps", 1,
				[&op, n] { op(n); }, [] { set_loopback(true); },
				[] { set_loopback(false); });
		}
		measure("fabric invoke+receive 0 caps noack", 1,
			[&op] { op(0, FRACTOS_INVOKE_NOACK); },
			[] { set_loopback(true); }, [] { set_loopback(false); });
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

} // namespace fbench
