// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fractos-facever: the paper's end-to-end application (FractOS, §6), a
 * face-verification service over three nodes: the reference features of
 * every id lie in a file of the file-system service (fractos-fsd, its
 * storage behind the block adaptor), the GPU service (fractos-gpud) runs
 * the verification kernel (verify_f32: cosine similarity, threshold), and
 * this program is the application that asks, batch by batch, whether each
 * (id, probe) pair is the same face.
 *
 *   fractos-facever [OPTIONS] gen LOCAL    the reference features of every
 *                                          id, into LOCAL ("-": stdout),
 *                                          to put into the file service
 *   fractos-facever [OPTIONS] run NAME     verify batches against file NAME
 *
 * The two shapes of "run" (-m):
 *   pipeline  The paper's: per batch, the application copies its probes
 *             into GPU Memory and invokes the file's DAX read Request once,
 *             with the GPU Memory as destination and, as continuation, a
 *             launch Request derived with every argument fixed whose own
 *             continuation is the application's.  The storage node reads
 *             the features into the GPU node's memory and invokes the
 *             launch; the GPU node runs the kernel and invokes the
 *             application, which wakes up once and copies the verdicts.
 *             Each batch slot derives its Requests once, at their owners
 *             (FRACTOS_CREATE_AT_OWNER): the launch on the GPU node, with
 *             every argument fixed, and the file's read on the storage
 *             node with [GPU Memory, launch, error] fixed.  A batch is
 *             then one invocation with the offset only: nothing is
 *             exported or announced (IMPORT) for it, and the storage
 *             node invokes the launch on the GPU node directly.  (One
 *             read per slot and extent of the file: a peer may have
 *             fabric_peer_derived of them alive on the storage node,
 *             ENOSPC at set-up past that.)
 *   star      The centralized control flow on the same services: read
 *             the features into the application's memory and wait, copy
 *             them and the probes to the GPU, launch and wait, copy the
 *             verdicts back.  The data crosses twice and the application
 *             mediates every step.  Its read and launch are derived at
 *             their owners as the pipeline's are.
 *   nvmeof    The stack a user would build today: the features are a file
 *             (-P PATH, read with O_DIRECT) of a file system on an NVMe-oF
 *             namespace (nvme-rdma), then as star: copy, launch and wait,
 *             copy back.  The file service is not used (NAME is ignored).
 * Both check every verdict against a CPU reference (double precision,
 * from the same generator) and print the latency per batch.  A read that
 * fails, or a kernel that does, arrives on the application's error
 * continuation: the run stops with that errno.  The application watches
 * its services (monitor_receive on the launch Request and on the file's
 * read Requests): when one is revoked (its daemon or its node died) the
 * run stops with EKEYREVOKED, naming which, instead of waiting for an
 * answer that will not come.  A step that fails with EKEYREVOKED first
 * (another node saw the death before this one) waits up to 8 s for the
 * watch to say whose it was.
 *
 * The data set (-s SEED, -i IDS, -D DIM): reference features of id i are
 * DIM floats uniform in [-1, 1] from splitmix64(SEED, i, k); the file holds
 * them id after id.  A probe of batch b for id i is genuine (the reference
 * plus noise of amplitude 0.05) unless splitmix64(SEED, b, i) % 4 == 0,
 * then an impostor (an unrelated vector).  With DIM >= 64 the two lie far
 * from the threshold (0.9): the reference's verdict is also the label.
 *
 * Options: -F SERVICE and -f NODE (the file service, default fs0, this
 * node), -G SERVICE and -g NODE (the GPU service, default gpu0, this
 * node), -b BATCH (pairs per batch, default 64), -n BATCHES (default 16;
 * 0: set up and tear down only, for counting what a batch costs), -q
 * DEPTH (batches in flight, 1 to 16, default 1: each has its own buffers
 * and continuation; the latency of one counts from its start), -m
 * pipeline|star|nvmeof, -P PATH (nvmeof's file), -j (JSON: one object,
 * nlohmann::json as fractos-fs), -H (derive here: the launch is this
 * node's child of the GPU service's, whose invocation this node's kernel
 * forwards, and every read is invoked with its capabilities: the shape
 * before derivation at the owner, for comparison), -A (wait for the ACK
 * of each batch's calls: by default the read and the launch go with
 * FRACTOS_INVOKE_NOACK, since what they could refuse reaches the
 * application another way: the error continuation, the watch on the
 * services' Requests, or its 30 s timeout).
 * Exit status: 0; 1 on an error or a wrong verdict; 2 on usage.
 */
#include <caladan/blk.hpp>
#include <caladan/fs.hpp>
#include <caladan/gpu.hpp>

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <getopt.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace caladan;
using json = nlohmann::json;
using clk = std::chrono::steady_clock;

namespace {

constexpr std::chrono::seconds kTimeout{30};
/* How long a failure waits for the watch to name a dead service. */
constexpr std::chrono::seconds kLostWait{8};
constexpr std::uint64_t kDone = 0xfd0, kErr = 0xfe0;
/* Monitor cookies: the GPU service's or the storage's Request revoked. */
constexpr std::uint64_t kLostGpu = 0xf61, kLostStorage = 0xf62;
constexpr float kThreshold = 0.9f;
constexpr float kNoise = 0.05f;

enum class shape { pipeline, star, nvmeof };

const char *shape_name(shape m)
{
	return m == shape::pipeline ? "pipeline" : m == shape::star ? "star" : "nvmeof";
}

struct options {
	std::uint64_t seed = 1;
	std::uint32_t ids = 1024, dim = 128, batch = 64, batches = 16, depth = 1;
	std::string fs = "fs0", gpu = "gpu0", path;
	std::uint32_t fs_node = 0, gpu_node = 0;
	shape mode = shape::pipeline;
	bool json = false;
	bool here = false;		/* -H: derive on this node */
	bool ack = false;		/* -A: wait for each call's ACK */
};

[[noreturn]] void usage(int rc)
{
	std::fprintf(rc ? stderr : stdout,
		     "usage: fractos-facever [-s SEED] [-i IDS] [-D DIM] [-j] gen LOCAL\n"
		     "       fractos-facever [-s SEED] [-i IDS] [-D DIM] [-F FS] [-f NODE] [-G GPU]\n"
		     "                       [-g NODE] [-b BATCH] [-n BATCHES] [-q DEPTH]\n"
		     "                       [-m pipeline|star|nvmeof] [-P PATH] [-H] [-A] [-j]\n"
		     "                       run NAME\n");
	std::exit(rc);
}

int fail(const std::string &what, std::error_code ec)
{
	std::fprintf(stderr, "fractos-facever: %s: %s\n", what.c_str(), describe(ec).c_str());
	return 1;
}

/* ---- the data set ---- */

std::uint64_t splitmix64(std::uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

std::uint64_t mix(std::uint64_t seed, std::uint64_t a, std::uint64_t b)
{
	return splitmix64(splitmix64(splitmix64(seed) ^ a) ^ b);
}

/* Uniform in [-1, 1]. */
float unit(std::uint64_t h)
{
	return float(double(h >> 11) / double(1ULL << 53) * 2.0 - 1.0);
}

float ref_feature(const options &o, std::uint32_t id, std::uint32_t k)
{
	return unit(mix(o.seed, id, k));
}

bool genuine(const options &o, std::uint32_t b, std::uint32_t id)
{
	return mix(o.seed ^ 0x6a09e667f3bcc908ULL, b, id) % 4 != 0;
}

float probe_feature(const options &o, std::uint32_t b, std::uint32_t id, std::uint32_t k)
{
	std::uint64_t salt = mix(o.seed ^ 0xbb67ae8584caa73bULL, b, id);

	if (genuine(o, b, id))
		return ref_feature(o, id, k) + kNoise * unit(mix(salt, 1, k));
	return unit(mix(salt, 2, k));
}

/* The CPU reference of the kernel. */
bool reference_verdict(const options &o, std::uint32_t b, std::uint32_t id)
{
	double dot = 0, nr = 0, np = 0;

	for (std::uint32_t k = 0; k < o.dim; k++) {
		double r = ref_feature(o, id, k), p = probe_feature(o, b, id, k);
		dot += r * p;
		nr += r * r;
		np += p * p;
	}
	return nr > 0 && np > 0 && dot / (std::sqrt(nr) * std::sqrt(np)) >= kThreshold;
}

int gen(const options &o, const char *path)
{
	FILE *f = std::strcmp(path, "-") ? std::fopen(path, "wb") : stdout;
	std::vector<float> row(o.dim);

	if (!f)
		return fail(path, last_error());
	for (std::uint32_t id = 0; id < o.ids; id++) {
		for (std::uint32_t k = 0; k < o.dim; k++)
			row[k] = ref_feature(o, id, k);
		if (std::fwrite(row.data(), sizeof(float), o.dim, f) != o.dim)
			return fail(path, last_error());
	}
	if (f != stdout ? std::fclose(f) : std::fflush(f))
		return fail(path, last_error());
	if (o.json) {
		json j = {{"ids", o.ids}, {"dim", o.dim}, {"seed", o.seed},
			  {"bytes", std::uint64_t(o.ids) * o.dim * 4}};
		std::fprintf(stderr, "%s\n", j.dump().c_str());
	}
	return 0;
}

/* ---- the application ---- */

/* An anonymous buffer of this process and its Memory capability. */
class host_buffer {
public:
	host_buffer() = default;
	host_buffer(const host_buffer &) = delete;
	host_buffer &operator=(const host_buffer &) = delete;
	~host_buffer()
	{
		mem_ = cap();
		if (p_ != MAP_FAILED)
			munmap(p_, len_);
	}
	result<void> make(const space &sp, std::size_t n)
	{
		p_ = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p_ == MAP_FAILED)
			return last_error();
		len_ = n;
		auto m = memory_create(sp, p_, n, perm::all);
		if (!m)
			return m.error();
		mem_ = std::move(*m);
		return {};
	}
	const cap &mem() const noexcept { return mem_; }
	float *f() const noexcept { return static_cast<float *>(p_); }
	std::uint32_t *u() const noexcept { return static_cast<std::uint32_t *>(p_); }

private:
	void *p_ = MAP_FAILED;
	std::size_t len_ = 0;
	cap mem_;
};

/*
 * One batch in flight: its own device and host buffers, its continuation
 * and (pipeline) its launch Request, and where it is.
 */
struct slot {
	gpu::buffer ref, probe, out;	/* out: scores, then verdicts */
	host_buffer href, hprobe, hout;
	cap done;			/* tag kDone + its index */
	cap stage;			/* the launch, all fixed */
	std::vector<cap> reads;		/* per extent, all but io fixed (not -H) */
	enum { idle, reading, launched } phase = idle;
	std::uint32_t b = 0, first = 0;	/* the batch, its first id */
	clk::time_point t;		/* when it started */
};

/* What one run holds: the file, the GPU context, the slots. */
struct session {
	const options &o;
	space sp;
	fs::file file;
	gpu::context ctx;
	gpu::module mod;
	const cap *verify = nullptr;
	std::vector<std::unique_ptr<slot>> slots;
	cap err;			/* every batch's error continuation */
	std::uint64_t batch_bytes = 0;
	std::uint64_t wakeups = 0;	/* messages the application took */
	const char *lost = nullptr;	/* the service whose Request died */
	int fd = -1;			/* nvmeof: the file */

	explicit session(const options &opt) : o(opt) {}
	session(const session &) = delete;
	session &operator=(const session &) = delete;
	~session()
	{
		if (fd >= 0)
			::close(fd);
	}
};

result<void> copy(const space &sp, const cap &src, const cap &dst, std::uint64_t src_off,
		  std::uint64_t len)
{
	copy_opts c;
	c.src_offset = src_off;
	c.len = len;
	auto n = memory_copy(sp, src, dst, c);
	if (!n)
		return n.error();
	if (*n != len)
		return errno_code(EIO);
	return {};
}

/* The next message on done or err: an error from err (or a failed
 * status on done) becomes the result. */
result<message> await(session &s)
{
	auto m = request_receive(s.sp, FRACTOS_RECV_TIMEOUT,
				 std::uint64_t(std::chrono::nanoseconds(kTimeout).count()));
	if (!m)
		return m.error();
	s.wakeups++;
	if (m->type == msg_type::monitor_receive) {
		s.lost = m->tag == kLostGpu ? "the GPU service" : "the file service";
		return errno_code(EKEYREVOKED);
	}
	if (m->tag == kErr) {
		/* the storage's fractos_blk_done or the GPU's wire_reply:
		 * both begin with the errno */
		if (auto d = m->imm<fractos_blk_done>(); d && d->result < 0)
			return errno_code(int(-d->result));
		if (auto r = m->imm<gpu::wire_reply>(); r && r->status < 0)
			return errno_code(-r->status);
		return errno_code(EPROTO);
	}
	if (m->tag < kDone || m->tag >= kDone + s.slots.size())
		return errno_code(EPROTO);
	if (auto r = m->imm<gpu::wire_reply>(); r && r->status < 0)
		return errno_code(-r->status);
	if (auto d = m->imm<fractos_blk_done>(); d && d->result < 0)
		return errno_code(int(-d->result));
	return std::move(*m);
}

/* The extent that holds [off, off + len) of the file, and where in it. */
result<std::pair<std::size_t, std::uint64_t>> extent_of(const fs::file &f, std::uint64_t off,
							std::uint64_t len)
{
	std::uint64_t base = 0;
	std::size_t i = 0;

	for (const auto &e : f.extents()) {
		if (off >= base && off + len <= base + e.len)
			return std::pair<std::size_t, std::uint64_t>(i, off - base);
		if (off < base + e.len)
			break;
		base += e.len;
		i++;
	}
	return errno_code(ERANGE);
}

fgpu_verify_f32 verify_args(const options &o, const slot &sl)
{
	fgpu_verify_f32 v{};
	v.n = o.batch;
	v.dim = o.dim;
	v.ref = sl.ref.addr();
	v.probe = sl.probe.addr();
	v.score = sl.out.addr();
	v.verdict = sl.out.addr() + std::uint64_t(o.batch) * 4;
	v.threshold = kThreshold;
	return v;
}

/* Slot @i: its buffers, its continuation and (pipeline) its launch. */
result<void> setup_slot(session &s, std::size_t i)
{
	const options &o = s.o;
	auto sl = std::make_unique<slot>();

	for (auto b : {&sl->ref, &sl->probe, &sl->out}) {
		auto m = s.ctx.alloc(s.sp, b == &sl->out ? std::uint64_t(o.batch) * 8
							 : s.batch_bytes, kTimeout);
		if (!m)
			return m.error();
		*b = std::move(*m);
	}
	if (auto r = sl->hprobe.make(s.sp, s.batch_bytes); !r)
		return r;
	if (auto r = sl->hout.make(s.sp, std::uint64_t(o.batch) * 8); !r)
		return r;
	if (auto r = o.mode != shape::pipeline ? sl->href.make(s.sp, s.batch_bytes)
						: result<void>(); !r)
		return r;
	auto q = request_create(s.sp, kDone + i);
	if (!q)
		return q.error();
	sl->done = std::move(*q);
	bool pipe = o.mode == shape::pipeline;
	auto st = s.sp.request(*s.verify)
			  .set_imm(fgpu_launch{1, o.batch})
			  .set_imm(verify_args(o, *sl))
			  .set_cap(sl->done)
			  .set_cap(s.err)
			  .set_at_owner(!o.here)
			  .derive();
	if (!st)
		return st.error();
	sl->stage = std::move(*st);
	/*
	 * Every extent's read with all but the immediates fixed, at the
	 * storage node: the pipeline's into GPU Memory and on to the launch,
	 * the star's into our memory and back here.
	 */
	if (o.mode != shape::nvmeof && !o.here)
		for (const auto &e : s.file.extents()) {
			auto rd = s.sp.request(e.read)
					  .set_cap(pipe ? sl->ref.mem() : sl->href.mem())
					  .set_cap(pipe ? sl->stage : sl->done)
					  .set_cap(s.err)
					  .set_at_owner()
					  .derive();
			if (!rd)
				return rd.error();
			sl->reads.push_back(std::move(*rd));
		}
	s.slots.push_back(std::move(sl));
	return {};
}

result<void> setup(session &s, const std::string &name)
{
	const options &o = s.o;
	auto sp = space::open();
	if (!sp)
		return sp.error();
	s.sp = std::move(*sp);
	s.batch_bytes = std::uint64_t(o.batch) * o.dim * 4;
	std::uint64_t size;
	if (o.mode == shape::nvmeof) {
		struct stat st;
		s.fd = ::open(o.path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
		if (s.fd < 0 || fstat(s.fd, &st))
			return last_error();
		size = std::uint64_t(st.st_size);
	} else {
		auto fsc = fs::client::lookup(s.sp, o.fs, o.fs_node);
		if (!fsc)
			return fsc.error();
		auto f = fsc->open(s.sp, name, fs::open_dax, 0, kTimeout);
		if (!f)
			return f.error();
		s.file = std::move(*f);
		size = s.file.opened().size;
	}
	if (size < std::uint64_t(o.ids) * o.dim * 4)
		return errno_code(ERANGE);
	auto gc = gpu::client::lookup(s.sp, o.gpu, o.gpu_node);
	if (!gc)
		return gc.error();
	auto ctx = gc->init(s.sp, kTimeout);
	if (!ctx)
		return ctx.error();
	s.ctx = std::move(*ctx);
	auto mod = s.ctx.load(s.sp, "fractos", kTimeout);
	if (!mod)
		return mod.error();
	s.mod = std::move(*mod);
	s.verify = s.mod.find("verify_f32");
	if (!s.verify)
		return errno_code(ENOENT);
	/* a service that dies wakes us up */
	if (auto r = monitor_receive(*s.verify, kLostGpu); !r)
		return r;
	for (const auto &e : s.file.extents())
		if (auto r = monitor_receive(e.read, kLostStorage); !r)
			return r;
	auto err = request_create(s.sp, kErr);
	if (!err)
		return err.error();
	s.err = std::move(*err);
	for (std::size_t i = 0; i < o.depth; i++)
		if (auto r = setup_slot(s, i); !r)
			return r;
	return {};
}

/* The star's and nvmeof's second step: the features to the GPU, launch. */
result<void> launch(session &s, slot &sl)
{
	if (auto c = copy(s.sp, sl.href.mem(), sl.ref.mem(), 0, s.batch_bytes); !c)
		return c;
	sl.phase = slot::launched;
	return s.sp.request(sl.stage).set_noack(!s.o.ack).invoke();
}

/* Starts batch @b in the idle slot @sl. */
result<void> start(session &s, slot &sl, std::uint32_t b)
{
	const options &o = s.o;

	sl.b = b;
	sl.first = (b % (o.ids / o.batch)) * o.batch;
	sl.t = clk::now();
	std::uint64_t off = std::uint64_t(sl.first) * o.dim * 4;
	for (std::uint32_t j = 0; j < o.batch; j++)
		for (std::uint32_t k = 0; k < o.dim; k++)
			sl.hprobe.f()[std::size_t(j) * o.dim + k] =
				probe_feature(o, b, sl.first + j, k);
	if (auto r = copy(s.sp, sl.hprobe.mem(), sl.probe.mem(), 0, s.batch_bytes); !r)
		return r;
	if (o.mode == shape::nvmeof) {
		/* the block layer over nvme-rdma, into our memory */
		ssize_t n = pread(s.fd, sl.href.f(), s.batch_bytes, off_t(off));
		if (n < 0)
			return last_error();
		if (std::uint64_t(n) != s.batch_bytes)
			return errno_code(EIO);
		return launch(s, sl);
	}
	auto ext = extent_of(s.file, off, s.batch_bytes);
	if (!ext)
		return ext.error();
	auto [i, in] = *ext;
	fractos_blk_io io{};
	io.offset = in;
	io.len = s.batch_bytes;
	/* pipeline: one invocation, storage -> GPU -> here */
	bool pipe = o.mode == shape::pipeline;
	sl.phase = pipe ? slot::launched : slot::reading;
	if (!o.here)
		return s.sp.request(sl.reads.at(i)).set_imm(io).set_noack(!o.ack).invoke();
	return s.sp.request(s.file.extents()[i].read)
		.set_noack(!o.ack)
		.set_imm(io)
		.set_cap(pipe ? sl.ref.mem() : sl.href.mem())
		.set_cap(pipe ? sl.stage : sl.done)
		.set_cap(s.err)
		.invoke();
}

/* @m came for @sl: the next step, or the verdicts (true: they are in). */
result<bool> advance(session &s, slot &sl, const message &m)
{
	if (sl.phase == slot::reading) {
		if (auto d = m.imm<fractos_blk_done>(); !d || std::uint64_t(d->result) != s.batch_bytes)
			return errno_code(EIO);
		if (auto r = launch(s, sl); !r)
			return r.error();
		return false;
	}
	if (sl.phase != slot::launched)
		return errno_code(EPROTO);
	/* the verdicts (after the scores) */
	std::uint64_t n = std::uint64_t(s.o.batch) * 4;
	if (auto r = copy(s.sp, sl.out.mem(), sl.hout.mem(), n, n); !r)
		return r.error();
	sl.phase = slot::idle;
	return true;
}

int run(const options &o, const std::string &name)
{
	session s(o);
	std::vector<double> us;
	std::uint64_t mismatches = 0, impostors = 0, labels_off = 0;

	if (auto r = setup(s, name); !r)
		return fail("set-up", r.error());
	auto t0 = clk::now();
	auto failed = [&](std::uint32_t b, std::error_code ec) {
		/*
		 * EKEYREVOKED before the watch said whose death it was: a
		 * copy into a revoked buffer, or the storage node's error
		 * continuation when that node saw the GPU node die first.
		 * EHOSTUNREACH or ETIMEDOUT: an invoke or copy that met
		 * the dead node's connection before this node's verdict.
		 * This node's own verdict on the dead node (the heartbeat
		 * bound, seconds) fires the monitor: wait for it, up to
		 * kLostWait.
		 */
		auto until = clk::now() + kLostWait;
		auto peer_lost = [](std::error_code e) {
			return e.value() == EKEYREVOKED || e.value() == EHOSTUNREACH ||
			       e.value() == ETIMEDOUT;
		};
		while (peer_lost(ec) && !s.lost && clk::now() < until) {
			auto m = request_receive(s.sp, FRACTOS_RECV_TIMEOUT, 50'000'000);
			if (m && m->type == msg_type::monitor_receive)
				s.lost = m->tag == kLostGpu ? "the GPU service" : "the file service";
		}
		return fail("batch " + std::to_string(b) +
				    (s.lost ? std::string(": ") + s.lost + "'s Request was revoked" : ""),
			    ec);
	};
	/* up to -q batches in flight, each slot taking the next when done */
	for (std::uint32_t next = 0, finished = 0; finished < o.batches;) {
		for (auto &sl : s.slots) {
			if (sl->phase != slot::idle || next >= o.batches)
				continue;
			if (auto r = start(s, *sl, next); !r)
				return failed(next, r.error());
			next++;
		}
		auto m = await(s);
		if (!m)
			return failed(finished, m.error());
		slot &sl = *s.slots[m->tag - kDone];
		auto in = advance(s, sl, *m);
		if (!in)
			return failed(sl.b, in.error());
		if (!*in)
			continue;
		finished++;
		us.push_back(std::chrono::duration<double, std::micro>(clk::now() - sl.t).count());
		for (std::uint32_t j = 0; j < o.batch; j++) {
			std::uint32_t id = sl.first + j;
			bool want = reference_verdict(o, sl.b, id);
			mismatches += (sl.hout.u()[j] == 1) != want;
			labels_off += want != genuine(o, sl.b, id);
			impostors += !genuine(o, sl.b, id);
		}
	}
	double total = std::chrono::duration<double>(clk::now() - t0).count();
	auto r1 = s.ctx.cleanup(s.sp, kTimeout);
	auto r2 = o.mode == shape::nvmeof ? result<void>() : s.file.close(s.sp, kTimeout);
	if (!r1)
		return fail("cleanup", r1.error());
	if (!r2)
		return fail("close", r2.error());

	std::sort(us.begin(), us.end());
	double mean = 0;
	for (double v : us)
		mean += v;
	mean = us.empty() ? 0 : mean / double(us.size());
	auto pct = [&](double q) { return us.empty() ? 0.0 : us[std::size_t(q * double(us.size() - 1))]; };
	std::uint64_t pairs = std::uint64_t(o.batches) * o.batch;
	if (o.json) {
		json j = {
			{"mode", shape_name(o.mode)},
			{"derived", o.here ? "here" : "at the owners"},
			{"acked", o.ack},
			{"batches", o.batches},
			{"batch", o.batch},
			{"depth", o.depth},
			{"batches_per_s", total > 0 ? double(o.batches) / total : 0.0},
			{"dim", o.dim},
			{"pairs", pairs},
			{"impostors", impostors},
			{"mismatches", mismatches},
			{"labels_off", labels_off},
			{"wakeups", s.wakeups},
			{"seconds", total},
			{"latency_us", {{"mean", mean}, {"min", pct(0)}, {"p50", pct(0.5)},
					{"p90", pct(0.9)}, {"max", pct(1)}}},
		};
		std::printf("%s\n", j.dump().c_str());
	} else {
		std::printf("%s: %u batches of %u pairs (dim %u), %u in flight: %llu verdicts, "
			    "%llu wrong (%llu impostors); the application woke %llu times; "
			    "latency per batch mean %.0f us, p50 %.0f, max %.0f; %.1f batches/s\n",
			    shape_name(o.mode), o.batches, o.batch, o.dim, o.depth,
			    (unsigned long long)pairs, (unsigned long long)mismatches,
			    (unsigned long long)impostors, (unsigned long long)s.wakeups, mean,
			    pct(0.5), pct(1), total > 0 ? double(o.batches) / total : 0.0);
	}
	return mismatches ? 1 : 0;
}

bool number(const char *s, std::uint32_t &v, std::uint32_t lo, std::uint32_t hi)
{
	char *end;
	unsigned long long x = std::strtoull(s, &end, 0);

	if (!*s || *end || x < lo || x > hi)
		return false;
	v = std::uint32_t(x);
	return true;
}

} // namespace

int main(int argc, char **argv)
{
	options o;
	int c;

	while ((c = getopt(argc, argv, "s:i:D:F:f:G:g:b:n:q:m:P:HAjh")) != -1) {
		bool good = true;

		switch (c) {
		case 's':
			o.seed = std::strtoull(optarg, nullptr, 0);
			break;
		case 'i':
			good = number(optarg, o.ids, 1, 1U << 24);
			break;
		case 'D':
			good = number(optarg, o.dim, 1, FGPU_MAX_DIM);
			break;
		case 'F':
			o.fs = optarg;
			break;
		case 'f':
			good = number(optarg, o.fs_node, 1, ~0U);
			break;
		case 'G':
			o.gpu = optarg;
			break;
		case 'g':
			good = number(optarg, o.gpu_node, 1, ~0U);
			break;
		case 'b':
			good = number(optarg, o.batch, 1, FGPU_MAX_BLOCK);
			break;
		case 'n':
			good = number(optarg, o.batches, 0, 1U << 20);
			break;
		case 'q':
			good = number(optarg, o.depth, 1, 16);
			break;
		case 'm':
			good = false;
			for (shape m : {shape::pipeline, shape::star, shape::nvmeof})
				if (!std::strcmp(optarg, shape_name(m))) {
					o.mode = m;
					good = true;
				}
			break;
		case 'P':
			o.path = optarg;
			break;
		case 'j':
			o.json = true;
			break;
		case 'H':
			o.here = true;
			break;
		case 'A':
			o.ack = true;
			break;
		case 'h':
			usage(0);
		default:
			usage(2);
		}
		if (!good) {
			std::fprintf(stderr, "fractos-facever: bad value for -%c: %s\n", c, optarg);
			usage(2);
		}
	}
	if (argc - optind != 2)
		usage(2);
	std::string cmd = argv[optind];
	if (cmd == "gen")
		return gen(o, argv[optind + 1]);
	if (cmd != "run")
		usage(2);
	/* a batch is whole ids of the file, read in one I/O of whole blocks */
	if (o.ids % o.batch || (std::uint64_t(o.batch) * o.dim * 4) % 4096 ||
	    std::uint64_t(o.batch) * o.dim * 4 > FRACTOS_BLK_MAX_IO) {
		std::fprintf(stderr, "fractos-facever: -b BATCH must divide -i IDS, and BATCH x DIM "
				     "x 4 be a multiple of 4096 of at most %u bytes\n",
			     unsigned(FRACTOS_BLK_MAX_IO));
		return 2;
	}
	if ((o.mode == shape::nvmeof) != !o.path.empty()) {
		std::fprintf(stderr, "fractos-facever: -P PATH goes with -m nvmeof, and only there\n");
		return 2;
	}
	return run(o, argv[optind + 1]);
}
