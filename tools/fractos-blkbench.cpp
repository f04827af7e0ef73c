// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fractos-blkbench: random reads and writes through the block adaptor's
 * volume Requests (fractos_nvme.ko), or, with --raw, through O_DIRECT
 * io_uring on a block device (the local baseline, same pattern, same
 * clock; writes with RWF_DSYNC, as durable as the adaptor's FUA writes),
 * at a queue depth.
 *
 *   fractos-blkbench -d NAME [-s VOLSIZE] [OPTIONS]     a fractos volume
 *   fractos-blkbench --raw DEVICE [-s RANGE] [OPTIONS]  direct I/O baseline
 *   fractos-blkbench -F SERVICE [--dax] [-s SIZE] [OPTIONS]
 *                          a file of the file-system service (fractos-fsd):
 *                          through the daemon (FS mode, path "fs") or
 *                          straight to its extents (DAX, path "dax")
 *
 * Options:
 *   -m randread|randwrite  (randread)
 *   -b BYTES               I/O size (4096)
 *   -q DEPTH               I/Os in flight (1)
 *   -t SECONDS             how long (5), after 0.5 s of warm-up
 *   -n NODE                the device's node when it is another node's
 *   -A                     fractos mode: invoke the volume Requests with
 *                          FRACTOS_INVOKE_NOACK (the device's node sends
 *                          no ACK; a refusal would be counted there, not
 *                          answered, so a lost I/O ends the run by the
 *                          receive's 30 s timeout)
 *   -o OFFSET              --raw: the range starts there (0); keep the
 *                          adaptor's label (its first 32 KiB) out of it
 *   -j                     one JSON object instead of the text line
 *   -l LABEL               the output's "path" (default: fractos, or
 *                          direct with --raw; e.g. nvmf for --raw on an
 *                          NVMe-oF namespace)
 *   -c FILE                a counter (a file holding one integer, e.g. an
 *                          RDMA device's hw_counters/rdma_sends); may be
 *                          repeated: each one's increase over the counted
 *                          seconds, per I/O, is reported under its name
 *
 * fractos mode: creates a volume of VOLSIZE (64 MiB) on the device NAME,
 * one Memory of DEPTH x BYTES, and one continuation Request per slot
 * (the slot is the tag); each completion is received and the slot is
 * invoked again at a new random block-aligned offset.  The volume is
 * destroyed at the end.  The whole volume is written once first when
 * reading (so that reads hit written blocks).
 *
 * Output: mode, size, depth, IOPS, MiB/s and the latency percentiles
 * (p50, p99, max) in microseconds, from a monotonic clock around each I/O.
 * Exit status 1 on any error (printed).
 */
#include <caladan/blk.hpp>
#include <caladan/fs.hpp>

#include <liburing.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <random>
#include <string>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <linux/fs.h>
#include <map>
#include <unistd.h>
#include <vector>

using namespace caladan;
using namespace std::chrono_literals;
using clk = std::chrono::steady_clock;

namespace {

struct options {
	std::string name, raw;
	std::uint64_t size = 64 << 20;
	bool write = false;
	std::uint32_t bs = 4096, depth = 1, node = 0;
	bool noack = false;	/* -A */
	std::uint64_t offset = 0;	/* --raw: where the range starts */
	double secs = 5;
	bool json = false;
	std::string label;	/* the "path" of the output, if not the mode's */
	std::string fs;		/* -F: the file-system service */
	bool dax = false;	/* -F with --dax */
	std::vector<std::string> counters;	/* -c */
};

struct stats {
	std::vector<double> lat_us;
	std::uint64_t ios = 0;
	double elapsed = 0;
	std::vector<double> counted;	/* each -c counter's increase */
};

[[noreturn]] void die(const char *what, const std::error_code &ec)
{
	std::fprintf(stderr, "fractos-blkbench: %s: %s\n", what, ec.message().c_str());
	std::exit(1);
}

[[noreturn]] void usage()
{
	std::fprintf(stderr,
		     "usage: fractos-blkbench { -d NAME | --raw DEVICE | -F SERVICE [--dax] } [-s SIZE]\n"
		     "                        [-m randread|randwrite]\n"
		     "                        [-b BYTES] [-q DEPTH] [-t SECONDS] [-n NODE] [-A] [-o OFFSET] [-j] [-l LABEL]\n");
	std::exit(1);
}

double pct(std::vector<double> &v, double p)
{
	if (v.empty())
		return 0;
	std::size_t i = std::min(v.size() - 1, std::size_t(p * double(v.size())));
	std::nth_element(v.begin(), v.begin() + long(i), v.end());
	return v[i];
}

void report(const options &o, stats s)
{
	double iops = s.elapsed > 0 ? double(s.ios) / s.elapsed : 0;
	double mibs = iops * o.bs / (1024.0 * 1024.0);
	double p50 = pct(s.lat_us, 0.50), p99 = pct(s.lat_us, 0.99);
	double mx = s.lat_us.empty() ? 0 : *std::max_element(s.lat_us.begin(), s.lat_us.end());
	const char *path = !o.label.empty() ? o.label.c_str() :
			   !o.fs.empty()    ? (o.dax ? "dax" : "fs") :
			   o.raw.empty()    ? "fractos" : "direct";

	/* Each -c counter's increase per I/O, named by its file's name. */
	std::string per_io;
	for (std::size_t i = 0; i < s.counted.size(); i++) {
		std::string name = o.counters[i].substr(o.counters[i].find_last_of('/') + 1);
		char v[64];

		std::snprintf(v, sizeof(v), "%.2f", s.ios ? s.counted[i] / double(s.ios) : 0.0);
		per_io += o.json ? ",\"" + name + "_per_io\":" + v : "  " + name + "/io " + v;
	}
	if (o.json)
		std::printf("{\"path\":\"%s\",\"mode\":\"%s\",\"bs\":%u,\"qd\":%u,\"ios\":%" PRIu64
			    ",\"iops\":%.1f,\"mibs\":%.2f,\"p50_us\":%.1f,\"p99_us\":%.1f,"
			    "\"max_us\":%.1f%s}\n",
			    path, o.write ? "randwrite" : "randread", o.bs, o.depth, s.ios, iops, mibs,
			    p50, p99, mx, per_io.c_str());
	else
		std::printf("%-8s %-9s bs %7u qd %3u  %9.1f IOPS %8.2f MiB/s  p50 %8.1f us  p99 %8.1f "
			    "us  max %8.1f us%s\n",
			    path, o.write ? "randwrite" : "randread", o.bs, o.depth, iops, mibs, p50, p99,
			    mx, per_io.c_str());
}

/* The -c counters now (a counter that cannot be read dies). */
std::vector<double> read_counters(const options &o)
{
	std::vector<double> v;

	for (const auto &path : o.counters) {
		FILE *f = std::fopen(path.c_str(), "r");
		double x;

		if (!f)
			die(path.c_str(), errno_code(errno));
		int n = std::fscanf(f, "%lf", &x);
		std::fclose(f);
		if (n != 1)
			die(path.c_str(), errno_code(EINVAL));
		v.push_back(x);
	}
	return v;
}

double us_since(clk::time_point t)
{
	return std::chrono::duration<double, std::micro>(clk::now() - t).count();
}

/*
 * The measure loop of every path: @issue(slot) starts an I/O in that slot,
 * @wait() takes one completion and returns its slot (both die on an
 * error).  DEPTH I/Os in flight, 0.5 s of warm-up, then o.secs counted.
 */
template <class Issue, class Wait>
stats measure(const options &o, Issue issue, Wait wait)
{
	std::vector<clk::time_point> started(o.depth);
	stats s;
	auto t0 = clk::now(), warm = t0 + std::chrono::duration_cast<clk::duration>(500ms),
	     end = warm + std::chrono::duration_cast<clk::duration>(
				  std::chrono::duration<double>(o.secs));
	bool counting = false;
	clk::time_point tc;
	std::vector<double> c0;
	auto start = [&](std::uint32_t slot) {
		started[slot] = clk::now();
		issue(slot);
	};

	for (std::uint32_t i = 0; i < o.depth; i++)
		start(i);
	std::uint32_t inflight = o.depth;
	while (inflight) {
		std::uint32_t slot = wait();
		auto now = clk::now();
		if (!counting && now >= warm) {
			counting = true;
			tc = now;
			c0 = read_counters(o);
		}
		if (counting) {
			s.lat_us.push_back(us_since(started[slot]));
			s.ios++;
		}
		if (now < end)
			start(slot);
		else
			inflight--;
	}
	s.elapsed = std::chrono::duration<double>(clk::now() - tc).count();
	s.counted = read_counters(o);
	for (std::size_t i = 0; i < s.counted.size() && i < c0.size(); i++)
		s.counted[i] -= c0[i];
	return s;
}

/* ---- fractos: volume Requests, a continuation per slot ---- */

int run_fractos(const options &o)
{
	auto sp = space::open();
	if (!sp)
		die("open /dev/fractos", sp.error());
	auto dev = blk::device::lookup(*sp, o.name, o.node);
	if (!dev)
		die("look the device up", dev.error());
	auto vol = dev->create(*sp, o.size, 30s);
	if (!vol)
		die("create a volume", vol.error());
	std::uint64_t blocks = o.size / o.bs;
	if (!blocks || o.bs % vol->info().block_size)
		die("block size", errno_code(EINVAL));

	std::size_t len = std::size_t(o.bs) * o.depth;
	void *buf = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
			 -1, 0);
	if (buf == MAP_FAILED)
		die("mmap", errno_code(errno));
	std::memset(buf, 0x5a, len);
	auto mem = memory_create(*sp, buf, len, perm::all);
	if (!mem)
		die("memory_create", mem.error());

	std::vector<cap> views, conts;
	for (std::uint32_t i = 0; i < o.depth; i++) {
		auto v = memory_diminish(*mem, std::uint64_t(i) * o.bs, o.bs, perm{});
		auto c = sp->request().set_tag(i).create();
		if (!v || !c)
			die("slot", v ? c.error() : v.error());
		views.push_back(std::move(*v));
		conts.push_back(std::move(*c));
	}

	/* Reads hit written blocks: write the volume once, 1 MiB at a time. */
	if (!o.write) {
		const std::size_t chunk = std::min<std::uint64_t>(1 << 20, o.size);
		void *pb = mmap(nullptr, chunk, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (pb == MAP_FAILED)
			die("mmap", errno_code(errno));
		std::memset(pb, 0xa5, chunk);
		auto pm = memory_create(*sp, pb, chunk, perm::all);
		if (!pm)
			die("memory_create", pm.error());
		for (std::uint64_t off = 0; off + chunk <= o.size; off += chunk) {
			auto w = vol->write(*sp, *pm, off, chunk, 30s);
			if (!w)
				die("prefill", w.error());
		}
		munmap(pb, chunk);
	}

	std::mt19937_64 rng(12345);
	auto issue = [&](std::uint32_t slot) {
		std::uint64_t off = (rng() % blocks) * o.bs;
		fractos_blk_io io{};
		io.offset = off;
		io.len = o.bs;
		/* what write_async()/read_async() do, with -A's flag */
		auto r = sp->request(o.write ? vol->write_request() : vol->read_request())
				 .set_imm(io)
				 .set_cap(views[slot])
				 .set_cap(conts[slot])
				 .set_noack(o.noack)
				 .invoke();
		if (!r)
			die("invoke", r.error());
	};
	auto wait = [&]() {
		auto m = sp->receive(30s);
		if (!m)
			die("receive", m.error());
		auto d = m->imm<fractos_blk_done>();
		if (m->type != msg_type::request || m->tag >= o.depth || !d)
			die("an unexpected message", errno_code(EPROTO));
		if (d->result != o.bs)
			die("an I/O failed", errno_code(d->result < 0 ? int(-d->result) : EIO));
		return std::uint32_t(m->tag);
	};
	report(o, measure(o, issue, wait));

	auto dd = dev->destroy(*sp, vol->info().id, 30s);
	if (!dd)
		die("destroy the volume", dd.error());
	munmap(buf, len);
	return 0;
}

/* ---- a file of the file-system service, FS or DAX mode ---- */

int run_fs(const options &o)
{
	const std::string name = "fractos-blkbench";
	auto sp = space::open();
	if (!sp)
		die("open /dev/fractos", sp.error());
	auto svc = fs::client::lookup(*sp, o.fs, o.node);
	if (!svc)
		die("look the service up", svc.error());
	(void)svc->unlink(*sp, name, 30s);
	auto c = svc->create(*sp, name, 30s);
	if (!c)
		die("create the file", c.error());
	std::uint32_t flags = fs::open_write | (o.dax ? fs::open_dax : 0);
	auto f = svc->open(*sp, name, flags, o.size, 60s);
	if (!f)
		die("open the file", f.error());
	std::uint64_t blocks = o.size / o.bs;
	if (!blocks || o.bs > fs::max_io)
		die("block size", errno_code(EINVAL));

	std::size_t len = std::size_t(o.bs) * o.depth;
	void *buf = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
			 -1, 0);
	if (buf == MAP_FAILED)
		die("mmap", errno_code(errno));
	std::memset(buf, 0x5a, len);
	auto mem = memory_create(*sp, buf, len, perm::all);
	if (!mem)
		die("memory_create", mem.error());
	/* The file's size: its extents, zeroed by the daemon, all in it. */
	auto rs = f->resize(*sp, o.size, 60s);
	if (!rs)
		die("resize", rs.error());

	std::vector<cap> views, conts;
	for (std::uint32_t i = 0; i < o.depth; i++) {
		auto v = memory_diminish(*mem, std::uint64_t(i) * o.bs, o.bs, perm{});
		auto k = sp->request().set_tag(i).create();
		if (!v || !k)
			die("slot", v ? k.error() : v.error());
		views.push_back(std::move(*v));
		conts.push_back(std::move(*k));
	}

	/*
	 * DAX: the extent's volume Request, invoked with the slot's
	 * continuation, as in fractos mode.  FS mode: the file Request, a
	 * lease call per I/O, the replies matched to slots by their tags.
	 */
	std::mt19937_64 rng(12345);
	std::vector<lease> leases(o.depth);
	std::map<std::uint64_t, std::uint32_t> by_tag;
	auto issue = [&](std::uint32_t slot) {
		std::uint64_t off = (rng() % blocks) * o.bs;
		if (o.dax) {
			std::uint64_t base = 0;
			for (const fs::dax_extent &e : f->extents()) {
				if (off < base + e.len) {
					fractos_blk_io io{};
					io.offset = off - base;
					io.len = o.bs;
					auto r = sp->request(o.write ? e.write : e.read)
							 .set_imm(io)
							 .set_cap(views[slot])
							 .set_cap(conts[slot])
							 .invoke();
					if (!r)
						die("invoke", r.error());
					return;
				}
				base += e.len;
			}
			die("an offset past the extents", errno_code(ERANGE));
		}
		fs::wire_req q;
		q.op = std::uint32_t(o.write ? fs::op::write : fs::op::read);
		q.offset = off;
		q.len = o.bs;
		auto l = sp->request(f->request()).set_imm(q).lease(views[slot]).invoke_with_lease();
		if (!l)
			die("invoke", l.error());
		by_tag[l->tag()] = slot;
		leases[slot] = std::move(*l);
	};
	auto wait = [&]() {
		auto m = sp->receive(30s);
		if (!m)
			die("receive", m.error());
		std::uint32_t slot;
		std::int64_t result;
		if (o.dax) {
			auto d = m->imm<fractos_blk_done>();
			if (m->type != msg_type::request || m->tag >= o.depth || !d)
				die("an unexpected message", errno_code(EPROTO));
			slot = std::uint32_t(m->tag);
			result = d->result;
		} else {
			auto it = by_tag.find(m->tag);
			auto r = m->imm<fs::wire_reply>();
			if (m->type != msg_type::request || it == by_tag.end() || !r)
				die("an unexpected message", errno_code(EPROTO));
			slot = it->second;
			by_tag.erase(it);
			(void)leases[slot].complete();
			result = r->status < 0 ? r->status : std::int64_t(r->size);
		}
		if (result != o.bs)
			die("an I/O failed", errno_code(result < 0 ? int(-result) : EIO));
		return slot;
	};
	report(o, measure(o, issue, wait));
	(void)f->close(*sp, 30s);
	auto u = svc->unlink(*sp, name, 30s);
	if (!u)
		die("unlink the file", u.error());
	views.clear();
	mem = cap();
	munmap(buf, len);
	return 0;
}

/* ---- the baseline: O_DIRECT io_uring on the block device ---- */

int run_raw(const options &o)
{
	int fd = open(o.raw.c_str(), (o.write ? O_RDWR : O_RDONLY) | O_DIRECT);
	if (fd < 0)
		die(o.raw.c_str(), errno_code(errno));
	std::uint64_t devsize = 0;
	if (ioctl(fd, BLKGETSIZE64, &devsize))
		die("BLKGETSIZE64", errno_code(errno));
	if (o.offset >= devsize)
		die("offset", errno_code(EINVAL));
	std::uint64_t range = std::min<std::uint64_t>(o.size, devsize - o.offset);
	std::uint64_t blocks = range / o.bs;
	if (!blocks)
		die("size", errno_code(EINVAL));

	io_uring ring;
	int ret = io_uring_queue_init(std::max(o.depth, 2u), &ring, 0);
	if (ret < 0)
		die("io_uring_queue_init", errno_code(-ret));
	std::size_t len = std::size_t(o.bs) * o.depth;
	void *buf = nullptr;
	if (posix_memalign(&buf, 4096, len))
		die("posix_memalign", errno_code(ENOMEM));
	std::memset(buf, 0x5a, len);

	std::mt19937_64 rng(12345);
	auto issue = [&](std::uint32_t slot) {
		io_uring_sqe *sqe = io_uring_get_sqe(&ring);
		std::uint64_t off = o.offset + (rng() % blocks) * o.bs;
		char *p = static_cast<char *>(buf) + std::size_t(slot) * o.bs;
		if (o.write) {
			io_uring_prep_write(sqe, fd, p, o.bs, off);
			/* As durable as the adaptor's FUA writes. */
			sqe->rw_flags = RWF_DSYNC;
		} else
			io_uring_prep_read(sqe, fd, p, o.bs, off);
		io_uring_sqe_set_data64(sqe, slot);
		io_uring_submit(&ring);
	};
	auto wait = [&]() {
		io_uring_cqe *cqe;
		int r = io_uring_wait_cqe(&ring, &cqe);
		if (r < 0)
			die("io_uring_wait_cqe", errno_code(-r));
		if (cqe->res != int(o.bs))
			die("an I/O failed", errno_code(cqe->res < 0 ? -cqe->res : EIO));
		std::uint32_t slot = std::uint32_t(io_uring_cqe_get_data64(cqe));
		io_uring_cqe_seen(&ring, cqe);
		return slot;
	};
	report(o, measure(o, issue, wait));
	io_uring_queue_exit(&ring);
	free(buf);
	close(fd);
	return 0;
}

std::uint64_t parse_size(const char *s)
{
	char *end;
	unsigned long long v = std::strtoull(s, &end, 0);
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	}
	if (*end || !v)
		usage();
	return v;
}

} // namespace

int main(int argc, char **argv)
{
	options o;

	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		auto next = [&]() -> const char * {
			if (i + 1 >= argc)
				usage();
			return argv[++i];
		};
		if (a == "-d")
			o.name = next();
		else if (a == "--raw")
			o.raw = next();
		else if (a == "-s")
			o.size = parse_size(next());
		else if (a == "-m") {
			std::string m = next();
			if (m != "randread" && m != "randwrite")
				usage();
			o.write = m == "randwrite";
		} else if (a == "-b")
			o.bs = std::uint32_t(parse_size(next()));
		else if (a == "-q")
			o.depth = std::uint32_t(std::strtoul(next(), nullptr, 0));
		else if (a == "-t")
			o.secs = std::strtod(next(), nullptr);
		else if (a == "-n")
			o.node = std::uint32_t(std::strtoul(next(), nullptr, 0));
		else if (a == "-A")
			o.noack = true;
		else if (a == "-o")
			o.offset = parse_size(next());
		else if (a == "-j")
			o.json = true;
		else if (a == "-l")
			o.label = next();
		else if (a == "-F")
			o.fs = next();
		else if (a == "--dax")
			o.dax = true;
		else if (a == "-c")
			o.counters.emplace_back(next());
		else
			usage();
	}
	if (int(!o.name.empty()) + int(!o.raw.empty()) + int(!o.fs.empty()) != 1 || !o.depth ||
	    o.depth > 256 || o.secs <= 0 || !o.bs || (o.dax && o.fs.empty()))
		usage();
	if (!o.fs.empty())
		return run_fs(o);
	return o.raw.empty() ? run_fractos(o) : run_raw(o);
}
