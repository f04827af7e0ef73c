// SPDX-License-Identifier: GPL-2.0
/*
 * The GPU service (adaptors/gpu/fractos-gpud) on its CPU backend, through
 * libcaladan's client (caladan/gpu.hpp): a context, device memory as
 * Memory (dma-buf backed: vgem), the module "fractos" and its kernels,
 * results equal to a CPU reference (fill, add, face verification by
 * cosine similarity); every call's and every launch's bad input answered
 * once with its errno, through the error continuation; the per-context
 * launch bound (EAGAIN); free and cleanup revoking what they free; a
 * client's death freeing its context, the daemon's death revoking what it
 * handed out; and every live counter back at the end.
 *
 * And the paper's pipeline on one node: a volume read of the block
 * adaptor (QEMU's NVMe: vm/run --nvme) into GPU Memory whose continuation
 * is a launch Request, whose continuation is the application's: the
 * features go from the device to the GPU and the verdicts are computed
 * without the application, which hears once, at the end; a failed read
 * goes to the application's error continuation, the kernel never run.
 */
#include <caladan/blk.hpp>
#include <caladan/gpu.hpp>

#include "tap.h"
#include "fos_cxx.h"
#define FOS_BLK_NO_NL
#include "fos_blk.h"

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace caladan;
using namespace std::chrono_literals;

namespace {

const std::string gpud_bin = "../../adaptors/gpu/fractos-gpud";
constexpr std::size_t N = 4096;		/* floats per vector */
constexpr std::uint32_t DIM = 128;	/* features per face */
constexpr std::uint32_t PAIRS = 64;

pid_t gpud_start()
{
	pid_t pid = fork();

	if (!pid) {
		execl(gpud_bin.c_str(), "fractos-gpud", "serve", "-N", "gpu0", "-I", "4", "-B",
		      "16", static_cast<char *>(nullptr));
		_exit(127);
	}
	return pid;
}

result<gpu::client> gpud_wait(const space &sp, pid_t pid)
{
	return fos_wait_published(pid, [&sp] { return gpu::client::lookup(sp, "gpu0"); });
}

/* Host memory of the client, and its Memory. */
struct host_buf {
	void *p = nullptr;
	std::size_t len = 0;
	cap mem;

	host_buf(const space &sp, std::size_t n) : len(n)
	{
		p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			tap_bail("mmap");
		auto m = memory_create(sp, p, n, perm::all);
		if (!m)
			tap_bail("memory_create: %s", m.error().message().c_str());
		mem = std::move(*m);
	}
	~host_buf()
	{
		mem = {};
		munmap(p, len);
	}
	float *f() const { return static_cast<float *>(p); }
	std::uint32_t *u() const { return static_cast<std::uint32_t *>(p); }
};

/* Copies @n bytes between a host buffer and a device buffer. */
bool to_dev(const space &sp, const host_buf &h, const gpu::buffer &d, std::size_t n)
{
	copy_opts o;
	o.len = n;
	return memory_copy(sp, h.mem, d.mem(), o).value_or(0) == n;
}

bool from_dev(const space &sp, const gpu::buffer &d, const host_buf &h, std::size_t n)
{
	copy_opts o;
	o.len = n;
	return memory_copy(sp, d.mem(), h.mem, o).value_or(0) == n;
}

/* The answer of a launch invoked raw, with [done, err] of tags 1 and 2:
 * the status, or 1 for "answered on done with 0". */
int raw_answer(const space &sp, std::uint64_t *tag)
{
	auto m = request_receive(sp, FRACTOS_RECV_TIMEOUT, 10'000'000'000ULL);
	if (!m)
		return -1000;
	*tag = m->tag;
	auto r = m->imm<gpu::wire_reply>();
	return r ? r->status : -1001;
}

/* The reference of verify_f32. */
float cosine_ref(const float *x, const float *y, std::uint32_t dim)
{
	float dot = 0, nx = 0, ny = 0;

	for (std::uint32_t k = 0; k < dim; k++) {
		dot += x[k] * y[k];
		nx += x[k] * x[k];
		ny += y[k] * y[k];
	}
	return nx > 0 && ny > 0 ? dot / (std::sqrt(nx) * std::sqrt(ny)) : 0.0f;
}

template <class T>
bool err_is(const result<T> &r, int e)
{
	return !r && fos_is_errno(r.error(), e);
}

void bad_launches(const space &sp, const gpu::module &mod, const gpu::buffer &a,
		  const gpu::buffer &freed_addr_holder)
{
	const cap &fill = *mod.find("fill_f32");
	fgpu_fill_f32 f{N, a.addr(), 1.0f, 0};

	tap_ok(err_is(gpu::run(sp, fill, {0, 1}, f, 10s), EINVAL), "launch, grid 0: EINVAL");
	tap_ok(err_is(gpu::run(sp, fill, {1, FGPU_MAX_BLOCK + 1}, f, 10s), EINVAL),
	       "launch, block over the maximum: EINVAL");
	std::byte shorter[sizeof(f) - 4] = {};
	tap_ok(err_is(gpu::run(sp, fill, {1, 1}, std::span<const std::byte>(shorter), 10s),
		      EINVAL),
	       "launch, arguments of the wrong size: EINVAL");
	fgpu_fill_f32 padded = f;
	padded.pad = 1;
	tap_ok(err_is(gpu::run(sp, fill, {1, 1}, padded, 10s), EINVAL),
	       "launch, pad bytes set: EINVAL");
	fgpu_fill_f32 longer = f;
	longer.n = a.size() / 4 + 1;
	tap_ok(err_is(gpu::run(sp, fill, {1, 1}, longer, 10s), EFAULT),
	       "launch touching past its buffer's end: EFAULT");
	fgpu_fill_f32 offset = f;
	offset.out = a.addr() + a.size() - 4;
	offset.n = 2;
	tap_ok(err_is(gpu::run(sp, fill, {1, 2}, offset, 10s), EFAULT),
	       "launch at an offset whose bytes cross the end: EFAULT");
	fgpu_fill_f32 wild = f;
	wild.out = 0x1000;
	tap_ok(err_is(gpu::run(sp, fill, {1, 1}, wild, 10s), EFAULT),
	       "launch with an address in no buffer: EFAULT");
	fgpu_fill_f32 gone = f;
	gone.out = freed_addr_holder.addr();
	tap_ok(err_is(gpu::run(sp, fill, {1, 1}, gone, 10s), EFAULT),
	       "launch on a freed buffer's address: EFAULT");

	/* A launch as a stage's continuation: that stage's result appended. */
	struct {
		fgpu_fill_f32 a;
		std::int64_t prev;
	} chained{f, -EIO};
	tap_ok(err_is(gpu::run(sp, fill, {1, 1}, chained, 10s), EIO),
	       "launch with a failed stage's result (-EIO) appended: EIO, nothing run");
	chained.prev = 4096;
	tap_ok(bool(gpu::run(sp, fill, {1, 1}, chained, 10s)),
	       "with a stage's byte count (4096) appended: it runs");

	/* Capability lists: [done, err, extra] answered EINVAL on err;
	 * none at all: dropped. */
	auto done = request_create(sp, 1).value();
	auto err = request_create(sp, 2).value();
	std::uint64_t tag = 0;
	auto r = sp.request(fill).set_imm(fgpu_launch{1, 1}).set_imm(f).set_cap(done)
			 .set_cap(err).set_cap(done).invoke();
	int st = r ? raw_answer(sp, &tag) : -1;
	tap_ok(st == -EINVAL && tag == 2, "launch with [done, err, extra]: EINVAL on err (%d)",
	       st);
	r = sp.request(fill).set_imm(fgpu_launch{1, 1}).set_imm(f).invoke();
	auto none = request_receive(sp, FRACTOS_RECV_TIMEOUT, 300'000'000ULL);
	tap_ok(r && !none && fos_is_errno(none.error(), ETIMEDOUT),
	       "launch naming no continuation: dropped, nothing answered");
	r = gpu::launch(sp, fill, {1, 1}, f, done);
	st = r ? raw_answer(sp, &tag) : -1;
	tap_ok(st == 0 && tag == 1, "launch with [done] only: answered on done");
}

void bad_calls(const space &sp, const gpu::client &svc, const gpu::context &ctx)
{
	tap_ok(err_is(ctx.alloc(sp, 0, 10s), EINVAL),
	       "alloc 0 bytes: EINVAL");
	tap_ok(err_is(ctx.alloc(sp, gpu::max_alloc + 1, 10s), E2BIG),
	       "alloc over max_alloc: E2BIG");
	tap_ok(err_is(ctx.load(sp, "nope", 10s), ENOENT),
	       "load of an unknown module: ENOENT");
	tap_ok(err_is(ctx.load(sp, std::string(64, 'x'), 10s),
		      EINVAL),
	       "load of a 64-byte name: EINVAL");
	gpu::wire_req q;
	q.op = std::uint32_t(gpu::op::load);
	tap_ok(err_is(gpu::call(sp, ctx.alloc_request(), q, {}, 10s),
		      EINVAL),
	       "op load on the alloc Request: EINVAL");
	q.op = std::uint32_t(gpu::op::alloc);
	q.len = 4096;
	tap_ok(err_is(gpu::call(sp, svc.request(), q, {}, 10s),
		      EINVAL),
	       "op alloc on the service: EINVAL");
	q.op = std::uint32_t(gpu::op::init);
	q.flags = 1;
	tap_ok(err_is(gpu::call(sp, svc.request(), q, {}, 10s),
		      EINVAL),
	       "init with flags: EINVAL");
}

/* The next message within 10 s, or an empty one. */
message next_message(const space &sp)
{
	auto m = request_receive(sp, FRACTOS_RECV_TIMEOUT, 10'000'000'000ULL);
	return m ? std::move(*m) : message();
}

/* NVMe -> GPU -> application, on this node. */
void pipeline(const space &sp, const gpu::context &ctx, const gpu::module &mod)
{
	const std::string fractctl = "../../tools/fractctl";
	const char *why = nullptr;
	const char *nvme = fos_blk_setup(&why);
	int rc;

	if (!nvme) {
		tap_skip("pipeline: %s", why);
		return;
	}
	fos_run(fractctl + " -j blk attach " + nvme + " name gblk format", &rc);
	auto dev = rc ? result<blk::device>(errno_code(ENODEV)) : blk::device::lookup(sp, "gblk");
	auto vol = dev ? dev->create(sp, 4 << 20, 10s) : result<blk::volume>(dev.error());
	constexpr std::size_t fb = PAIRS * DIM * 4;
	host_buf hr(sp, fb), hp(sp, fb), hv(sp, PAIRS * 4);
	std::srand(11);
	for (std::size_t i = 0; i < PAIRS * DIM; i++) {
		hr.f()[i] = float(std::rand() % 2001 - 1000) / 1000.0f;
		hp.f()[i] = (i / DIM) % 3 ? float(std::rand() % 2001 - 1000) / 1000.0f
					  : hr.f()[i];
	}
	auto w = vol ? vol->write(sp, hr.mem, 0, fb, 10s) : result<std::uint64_t>(vol.error());
	tap_ok(w && *w == fb, "pipeline: the reference features on an NVMe volume");

	auto ref = ctx.alloc(sp, fb, 10s), probe = ctx.alloc(sp, fb, 10s),
	     out = ctx.alloc(sp, PAIRS * 8, 10s);
	bool ok = ref && probe && out && to_dev(sp, hp, *probe, fb);
	auto app_done = request_create(sp, 0xd0).value();
	auto app_err = request_create(sp, 0xe0).value();
	/* The launch with everything fixed: the storage's answer runs it. */
	fgpu_verify_f32 v{PAIRS, DIM, ok ? ref->addr() : 0, ok ? probe->addr() : 0,
			  ok ? out->addr() : 0, ok ? out->addr() + PAIRS * 4 : 0, 0.99f, 0};
	auto stage = sp.request(*mod.find("verify_f32"))
			     .set_imm(fgpu_launch{1, PAIRS})
			     .set_imm(v)
			     .set_cap(app_done)
			     .set_cap(app_err)
			     .derive();
	ok = ok && stage && vol->read_async(ref->mem(), 0, fb, *stage, &app_err);
	message m = next_message(sp);
	auto r = m.imm<gpu::wire_reply>();
	tap_ok(ok && m.tag == 0xd0 && r && r->status == 0,
	       "pipeline: one read invoked; the application hears once, from the GPU");
	auto quiet = request_receive(sp, FRACTOS_RECV_NONBLOCK);
	tap_ok(!quiet, "and nothing else: no storage answer reached it");
	copy_opts o;
	o.src_offset = PAIRS * 4;
	o.len = PAIRS * 4;
	bool same = ok && memory_copy(sp, out->mem(), hv.mem, o).value_or(0) == PAIRS * 4;
	for (std::uint32_t i = 0; same && i < PAIRS; i++) {
		float s = cosine_ref(hr.f() + i * DIM, hp.f() + i * DIM, DIM);
		same = hv.u()[i] == (s >= 0.99f ? 1u : 0u) && (i % 3 || hv.u()[i] == 1);
	}
	tap_ok(same, "pipeline: the verdicts, from the device's bytes, equal the reference");

	/* A read past the volume's end fails at the storage: the
	 * application's error continuation, and no kernel. */
	ok = ok && vol->read_async(ref->mem(), 4 << 20, fb, *stage, &app_err);
	m = next_message(sp);
	auto d = m.imm<fractos_blk_done>();
	tap_ok(ok && m.tag == 0xe0 && d && d->result == -ERANGE,
	       "pipeline: a read past the end: ERANGE on the application's error continuation");

	fos_run(fractctl + " blk detach name gblk", &rc);
	tap_eq(rc, 0, "pipeline: detach");
	vol = errno_code(ENODEV);
	dev = errno_code(ENODEV);
	tap_eq(fos_blk_unload(), 0, "pipeline: rmmod fractos_nvme");
}

/* Everything but the counters: the daemon is dead and every cap closed
 * when this returns. */
void tests(long long dmabufs0)
{
	auto sp = space::open();
	if (!sp)
		tap_bail("open: %s", sp.error().message().c_str());
	pid_t pid = gpud_start();
	auto svc = gpud_wait(*sp, pid);
	if (!tap_ok(bool(svc), "fractos-gpud serves gpu0"))
		tap_bail("no daemon");

	auto ctx = svc->init(*sp, 10s);
	tap_ok(bool(ctx), "init: a context");
	auto a = ctx->alloc(*sp, N * 4, 10s), b = ctx->alloc(*sp, N * 4, 10s),
	     c = ctx->alloc(*sp, N * 4, 10s);
	tap_ok(a && b && c && a->size() == N * 4 && a->addr() != b->addr(),
	       "alloc: three buffers of %zu bytes, each its own address", N * 4);
	auto ia = a ? a->mem().info() : errno_code(EBADF);
	tap_ok(ia && ia->type == obj_type::memory && ia->len == N * 4 &&
		       ia->perms == perm::all,
	       "its Memory: read and write, the buffer's length");
	tap_ok(fos_live_count("dmabufs") >= dmabufs0 + 3, "dma-buf backed (vgem): %lld dma-bufs",
	       fos_live_count("dmabufs") - dmabufs0);
	auto mod = ctx->load(*sp, "fractos", 10s);
	tap_ok(mod && mod->kernels().size() == 3 && mod->find("fill_f32") &&
		       mod->find("add_f32") && mod->find("verify_f32") &&
		       mod->kernels()[2].args_len == sizeof(fgpu_verify_f32),
	       "load \"fractos\": fill_f32, add_f32, verify_f32");
	if (!a || !b || !c || !mod)
		tap_bail("setup");

	/* fill, add, and the bytes back through MEMORY_COPY. */
	host_buf h(*sp, N * 4), out(*sp, N * 4);
	for (std::size_t i = 0; i < N; i++)
		h.f()[i] = float(i);
	fgpu_fill_f32 fa{N, a->addr(), 2.5f, 0};
	tap_ok(bool(gpu::run(*sp, *mod->find("fill_f32"), {N / 256, 256}, fa, 10s)),
	       "fill_f32 on a: answered on done");
	tap_ok(to_dev(*sp, h, *b, N * 4), "MEMORY_COPY into b (device Memory)");
	fgpu_add_f32 ad{N, a->addr(), b->addr(), c->addr()};
	tap_ok(bool(gpu::run(*sp, *mod->find("add_f32"), {N / 256, 256}, ad, 10s)),
	       "add_f32 c = a + b");
	bool same = from_dev(*sp, *c, out, N * 4);
	for (std::size_t i = 0; same && i < N; i++)
		same = out.f()[i] == float(i) + 2.5f;
	tap_ok(same, "c read back: a + b, every element");

	/* Face verification against the reference. */
	{
		std::size_t fb = PAIRS * DIM * 4;
		auto ref = ctx->alloc(*sp, fb, 10s), probe = ctx->alloc(*sp, fb, 10s);
		host_buf hr(*sp, fb), hp(*sp, fb), hs(*sp, PAIRS * 4), hv(*sp, PAIRS * 4);
		std::srand(7);
		for (std::size_t i = 0; i < PAIRS * DIM; i++) {
			hr.f()[i] = float(std::rand() % 2001 - 1000) / 1000.0f;
			/* even pairs: the same face with noise; odd: another */
			std::size_t pair = i / DIM;
			hp.f()[i] = pair % 2 ? float(std::rand() % 2001 - 1000) / 1000.0f
					     : hr.f()[i] + float(std::rand() % 201 - 100) / 1000.0f;
		}
		bool ok = ref && probe && to_dev(*sp, hr, *ref, fb) && to_dev(*sp, hp, *probe, fb);
		fgpu_verify_f32 v{PAIRS, DIM, ok ? ref->addr() : 0, ok ? probe->addr() : 0,
				  a->addr(), b->addr(), 0.8f, 0};
		ok = ok && gpu::run(*sp, *mod->find("verify_f32"), {1, PAIRS}, v, 10s);
		ok = ok && from_dev(*sp, *a, hs, PAIRS * 4) && from_dev(*sp, *b, hv, PAIRS * 4);
		int match = 0, verdicts = 0;
		for (std::uint32_t i = 0; ok && i < PAIRS; i++) {
			float s = cosine_ref(hr.f() + i * DIM, hp.f() + i * DIM, DIM);
			match += std::fabs(s - hs.f()[i]) < 1e-5f &&
				 hv.u()[i] == (s >= 0.8f ? 1u : 0u);
			verdicts += hv.u()[i] == (i % 2 ? 0u : 1u);
		}
		tap_ok(ok && match == int(PAIRS),
		       "verify_f32: %d of %u scores and verdicts equal the CPU reference", match,
		       PAIRS);
		tap_ok(verdicts == int(PAIRS), "the same faces match, the others do not (%d of %u)",
		       verdicts, PAIRS);
	}

	pipeline(*sp, *ctx, *mod);

	/* Bad input, each answered once with its errno. */
	{
		auto tmp = ctx->alloc(*sp, 4096, 10s);
		gpu::buffer freed = tmp ? std::move(*tmp) : gpu::buffer();
		gpu::buffer addr_only(cap(), cap(), freed.addr(), freed.size());
		tap_ok(bool(freed.free(*sp, 10s)), "free a buffer");
		bad_launches(*sp, *mod, *a, addr_only);
		bad_calls(*sp, *svc, *ctx);
	}

	/* The per-context bound: -I 4 queued launches at once. */
	{
		constexpr std::uint64_t pairs = 256, dim = 4096;	/* 4 MiB each */
		auto r1 = ctx->alloc(*sp, pairs * dim * 4, 10s);
		auto r2 = ctx->alloc(*sp, pairs * dim * 4, 10s);
		auto done = request_create(*sp, 1).value();
		auto err = request_create(*sp, 2).value();
		fgpu_verify_f32 heavy{pairs, dim, r1 ? r1->addr() : 0, r2 ? r2->addr() : 0,
				      c->addr(), c->addr() + 4 * pairs, 0.5f, 0};
		int sent = 0, ok = 0, again = 0;
		for (int i = 0; i < 32; i++)
			sent += bool(gpu::launch(*sp, *mod->find("verify_f32"), {1, pairs}, heavy,
						 done, &err));
		for (int i = 0; i < sent; i++) {
			std::uint64_t tag = 0;
			int st = raw_answer(*sp, &tag);
			ok += st == 0 && tag == 1;
			again += st == -EAGAIN && tag == 2;
		}
		tap_ok(r1 && r2 && sent == 32 && ok + again == 32 && again > 0 && ok >= 4,
		       "32 launches of 256 x 4096 at once: %d run, %d refused EAGAIN (error continuation)",
		       ok, again);
		if (r1)
			(void)r1->free(*sp, 10s);
		if (r2)
			(void)r2->free(*sp, 10s);
	}

	/* free: the Memory revoked for every holder. */
	{
		auto d = ctx->alloc(*sp, 4096, 10s);
		auto view = d ? memory_diminish(d->mem(), 0, 1024, perm::write) : errno_code(EBADF);
		tap_ok(d && view && d->free(*sp, 10s), "alloc, a read-only view, free");
		auto vi = view ? view->info() : errno_code(EBADF);
		tap_ok(vi && (vi->flags & FRACTOS_INFO_REVOKED), "the view is revoked");
		host_buf hb(*sp, 1024);
		copy_opts o;
		tap_ok(view && fos_is_errno(memory_copy(*sp, *view, hb.mem, o).error(), EKEYREVOKED),
		       "MEMORY_COPY from it: EKEYREVOKED");
	}

	/* A client's death frees its context. */
	{
		long long mems0 = fos_live_count("memories");
		pid_t child = fork();
		if (!child) {
			auto csp = space::open();
			auto cl = csp ? gpu::client::lookup(*csp, "gpu0") : errno_code(EBADF);
			auto cc = cl ? cl->init(*csp, 10s) : errno_code(EBADF);
			auto cb = cc ? cc->alloc(*csp, 1 << 20, 10s) : errno_code(EBADF);
			_exit(cb ? 0 : 1);	/* dies holding them */
		}
		int status = fos_wait_child(child, 20000);
		bool back = false;
		for (int i = 0; i < 500 && !back; i++) {
			back = fos_live_count("memories") == mems0;
			usleep(10000);
		}
		tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		       "a client allocates 1 MiB and exits holding it");
		tap_ok(back, "its context is freed: memories back to %lld", mems0);
	}

	/* cleanup revokes the context's Requests and Memory. */
	{
		gpu::context other = svc->init(*sp, 10s).value_or(gpu::context());
		auto d = other.alloc(*sp, 4096, 10s);
		auto alloc_req = other.alloc_request().dup();
		tap_ok(d && alloc_req && other.cleanup(*sp, 10s), "a second context, cleaned up");
		auto mi = d ? d->mem().info() : errno_code(EBADF);
		tap_ok(mi && (mi->flags & FRACTOS_INFO_REVOKED), "its buffer's Memory is revoked");
		gpu::wire_req q;
		q.op = std::uint32_t(gpu::op::alloc);
		q.len = 4096;
		auto r = alloc_req ? sp->request(*alloc_req).set_imm(q).invoke()
				   : result<void>(errno_code(EBADF));
		tap_ok(err_is(r, EKEYREVOKED), "invoking its alloc Request: EKEYREVOKED");
	}

	/* The daemon's death revokes what it handed out. */
	kill(pid, SIGKILL);
	waitpid(pid, nullptr, 0);
	bool revoked = false;
	for (int i = 0; i < 500 && !revoked; i++) {
		auto ai = a->mem().info();
		revoked = ai && (ai->flags & FRACTOS_INFO_REVOKED);
		usleep(10000);
	}
	tap_ok(revoked, "the daemon killed: its Memory is revoked");
	fgpu_fill_f32 fz{1, a->addr(), 0.0f, 0};
	auto mine = request_create(*sp, 1).value();
	tap_ok(err_is(gpu::launch(*sp, *mod->find("fill_f32"), {1, 1}, fz, mine), EKEYREVOKED),
	       "and its launch Request: EKEYREVOKED");
	mine = {};
}

/* The backends by name: the guest has no GPU and no libcuda, and the
 * daemon says so rather than crash or pretend. */
void backends()
{
	int rc;
	std::string out = fos_run(gpud_bin + " info -j", &rc);

	tap_ok(rc == 0 && out.find("\"backend\":\"cpu\"") != std::string::npos,
	       "info -j: the cpu backend (%s)", out.substr(0, out.find('\n')).c_str());
	out = fos_run(gpud_bin + " serve -N gpuX -b cuda 2>&1", &rc);
	tap_ok(rc == 1 && out.find("libcuda.so.1") != std::string::npos,
	       "serve -b cuda without libcuda: exit 1, naming libcuda.so.1");
	out = fos_run(gpud_bin + " info -b cuda:x 2>&1", &rc);
	tap_eq(rc, 2, "info -b cuda:x: a usage error");
	out = fos_run(gpud_bin + " info -b tpu 2>&1", &rc);
	tap_eq(rc, 2, "info -b tpu: a usage error");
	tap_ok(!gpu::client::lookup(*space::open(), "gpuX"), "nothing published as gpuX");
}

} // namespace

int main()
{
	tap_plan_late();
	if (access("/sys/class/misc/fractos", F_OK))
		tap_bail("fractos.ko is not loaded");
	/* vgem's buffer objects back the device memory, as a GPU's would. */
	if (system("modprobe vgem >/dev/null 2>&1") == -1)
		tap_bail("system");
	fos_live_set before = fos_live_set::read();
	backends();
	tests(fos_live_count("dmabufs"));
	std::string left = fos_live_wait(before, 10000);
	tap_ok(left.empty(), "every live counter back%s", left.c_str());
	return tap_finish();
}
