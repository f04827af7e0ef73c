// SPDX-License-Identifier: LGPL-2.1-or-later
/**
 * @file gpu.hpp
 * The GPU service of fractos (fractos-gpud, adaptors/gpu/): its Request
 * interface, the paper's GPU adaptor (context init, memory alloc and free,
 * module load, kernel launch with a success and an error continuation,
 * cleanup), and libcaladan's client of it.
 *
 *     space sp = space::open().value();
 *     auto svc = gpu::client::lookup(sp, "gpu0").value();
 *     gpu::context ctx = svc.init(sp).value();
 *     gpu::buffer buf = ctx.alloc(sp, 1 << 20).value();  // buf.mem(): Memory
 *     gpu::module mod = ctx.load(sp, "fractos").value();
 *     fgpu_fill_f32 a{n, buf.addr(), 1.5f, 0};
 *     gpu::run(sp, *mod.find("fill_f32"), {1, 256}, a);  // or launch()
 *
 * The service
 * -----------
 * fractos-gpud publishes one Request, the service.  Its calls, and those
 * of the Requests it hands out, are Bifröst calls
 * (request_builder::call_with_lease()): immediates struct gpu::wire_req
 * (then, for op::load, the module's name), capabilities [reply]; the
 * reply's immediates are struct gpu::wire_reply, its status 0 or a
 * negative errno.
 *
 *   op::init     on the service: a new context.  Reply caps [alloc
 *                Request, load Request, cleanup Request], each bound to the
 *                context.  ENOSPC (max_contexts).
 *   op::alloc    on the alloc Request, wire_req.len bytes (1 to max_alloc)
 *                of device memory.  Reply caps [Memory (read and write),
 *                free Request]; wire_reply.addr: the buffer's device
 *                address (what kernel arguments name), .len: its size
 *                (rounded up to a page).  The Memory is device memory,
 *                dma-buf backed where the backend can: a MEMORY_COPY or a
 *                volume read may target it from any node.  E2BIG (over
 *                max_alloc), ENOSPC (max_buffers or max_context_bytes),
 *                ENOMEM (the device).
 *   op::free     on a free Request: the buffer's Memory is revoked (every
 *                holder's view of it fails with EKEYREVOKED), then the
 *                device memory freed.  Later calls: EKEYREVOKED.
 *   op::load     on the load Request, a module by name (the immediates
 *                after wire_req; the daemon's library: "fractos").  Reply
 *                caps: one launch Request per kernel; wire_reply.count:
 *                how many; after wire_reply, count wire_kernel.  ENOENT.
 *   op::cleanup  on the cleanup Request: the context's Requests and Memory
 *                are revoked and its device memory freed.
 *
 * A launch Request (one per kernel and load) is no Bifröst call: its
 * immediates are struct fgpu_launch (the geometry) then the kernel's
 * arguments (caladan/gpu_args.h: exactly that struct), its capabilities
 * [done] or [done, error].  A derived launch Request may fix the geometry
 * (and arguments), the holder adding the rest.  So that a launch can be
 * another stage's continuation, the arguments may be followed by that
 * stage's 8-byte result (a struct fractos_blk_done: bytes, or -errno): a
 * negative one is passed on to the error continuation, and nothing runs.  When the kernel has run,
 * done gets a wire_reply with status 0; a launch refused or failed goes
 * to error (else to done) with status -errno: EINVAL (geometry out of
 * range, arguments of the wrong size or with pad bytes set), EFAULT (a
 * buffer argument outside the context's buffers, or too short for what
 * the kernel touches), EAGAIN (max_inflight launches of the context are
 * queued), EIO (the device).  Kernels run in order per context.
 *
 * Lifetimes: a context lives until op::cleanup, or until none of its
 * Requests (alloc, load, cleanup, launches) is held outside the daemon
 * any more (monitor_delegate: a client that dies frees its contexts).
 * The daemon's death revokes everything it handed out.
 *
 * Answers: every call whose capabilities name a Request is answered
 * exactly once (find_conts(): [reply] for the calls, [done] or [done,
 * error] for a launch); a capability list of the wrong length or type is
 * answered with EINVAL on the error position, else the reply's, else the
 * last Request of the list; a call naming no Request is dropped.
 */
#ifndef CALADAN_GPU_HPP
#define CALADAN_GPU_HPP

#include <caladan/caladan.hpp>
#include <caladan/gpu_args.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

/* The library is built with -fvisibility=hidden: what is declared here
 * is its API, exported (libcaladan.map, libcaladan.symbols). */
#pragma GCC visibility push(default)

namespace caladan::gpu {

/// Limits of the daemon (fractos-gpud(8) can lower them).
inline constexpr std::uint64_t max_alloc = 64ULL << 20;
inline constexpr std::uint32_t max_module_name = 63;

/// Operations (wire_req.op).
enum class op : std::uint32_t {
	init = 1,
	alloc = 2,
	free = 3,
	load = 4,
	cleanup = 5,
};

/// The immediates of a call (op::load: the module's name follows).
struct wire_req {
	std::uint32_t op = 0;
	std::uint32_t flags = 0;	///< 0
	std::uint64_t len = 0;		///< op::alloc: bytes
};

/// The immediates of a reply, and of a launch's answer.
struct wire_reply {
	std::int32_t status = 0;	///< 0 or a negative errno
	std::uint32_t count = 0;	///< op::load: kernels
	std::uint64_t addr = 0;		///< op::alloc: the device address
	std::uint64_t len = 0;		///< op::alloc: the buffer's size
};

/// After an op::load reply's wire_reply: one per launch Request, in order.
struct wire_kernel {
	char name[32] = {};		///< NUL-terminated
	std::uint32_t args_len = 0;	///< bytes of its arguments struct
	std::uint32_t pad = 0;
};

/// A buffer of device memory: its Memory, its free Request, its address.
class buffer {
public:
	buffer() = default;
	buffer(cap mem, cap free_req, std::uint64_t addr, std::uint64_t size) noexcept
		: mem_(std::move(mem)), free_(std::move(free_req)), addr_(addr), size_(size)
	{
	}

	const cap &mem() const noexcept { return mem_; }
	const cap &free_request() const noexcept { return free_; }
	/// The device address kernel arguments name (plus an offset).
	std::uint64_t addr() const noexcept { return addr_; }
	std::uint64_t size() const noexcept { return size_; }
	/// op::free: the Memory is revoked, the device memory freed.
	result<void> free(const space &sp, std::chrono::nanoseconds timeout = {});

private:
	cap mem_;
	cap free_;
	std::uint64_t addr_ = 0;
	std::uint64_t size_ = 0;
};

/// One kernel of a loaded module.
struct kernel {
	std::string name;
	std::uint32_t args_len = 0;
	cap launch;		///< the launch Request
};

/// A loaded module: its kernels' launch Requests.
class module {
public:
	module() = default;
	explicit module(std::vector<kernel> k) noexcept : k_(std::move(k)) {}

	const std::vector<kernel> &kernels() const noexcept { return k_; }
	/// The launch Request of the kernel @p name, or null.
	const cap *find(std::string_view name) const noexcept;

private:
	std::vector<kernel> k_;
};

/// A context: its alloc, load and cleanup Requests.
class context {
public:
	context() = default;
	context(cap alloc, cap load, cap cleanup) noexcept
		: alloc_(std::move(alloc)), load_(std::move(load)), cleanup_(std::move(cleanup))
	{
	}

	const cap &alloc_request() const noexcept { return alloc_; }
	const cap &load_request() const noexcept { return load_; }
	const cap &cleanup_request() const noexcept { return cleanup_; }

	result<buffer> alloc(const space &sp, std::uint64_t size,
			     std::chrono::nanoseconds timeout = {}) const;
	result<module> load(const space &sp, std::string_view name,
			    std::chrono::nanoseconds timeout = {}) const;
	/// op::cleanup; the Requests are dropped whatever it returns.
	result<void> cleanup(const space &sp, std::chrono::nanoseconds timeout = {});

private:
	cap alloc_;
	cap load_;
	cap cleanup_;
};

/// The service: fractos-gpud's published Request.
class client {
public:
	client() = default;
	explicit client(cap svc) noexcept : svc_(std::move(svc)) {}

	/// The service published as @p name (on node @p node when not 0).
	static result<client> lookup(const space &sp, std::string_view name,
				     std::uint32_t node = 0);

	const cap &request() const noexcept { return svc_; }
	/// op::init: a new context.
	result<context> init(const space &sp, std::chrono::nanoseconds timeout = {}) const;

private:
	cap svc_;
};

/// Invokes the launch Request @p k with geometry @p g and @p args; its
/// answer goes to @p done (or @p err when given, for a failure).
result<void> launch(const space &sp, const cap &k, fgpu_launch g,
		    std::span<const std::byte> args, const cap &done,
		    const cap *err = nullptr);
template <imm_value A>
result<void> launch(const space &sp, const cap &k, fgpu_launch g, const A &args,
		    const cap &done, const cap *err = nullptr)
{
	return launch(sp, k, g, std::as_bytes(std::span<const A, 1>(&args, 1)), done, err);
}

/**
 * Launches and waits: two one-shot continuations of @p sp (done, error)
 * are made, the kernel launched with them, and the answer awaited; both
 * are revoked after.  Messages that are not the answer are appended to
 * @p others (dropped if null).  Returns the answer's error, if any;
 * ETIMEDOUT after @p timeout (0: no limit).
 */
result<void> run(const space &sp, const cap &k, fgpu_launch g,
		 std::span<const std::byte> args, std::chrono::nanoseconds timeout = {},
		 std::vector<message> *others = nullptr);
template <imm_value A>
result<void> run(const space &sp, const cap &k, fgpu_launch g, const A &args,
		 std::chrono::nanoseconds timeout = {}, std::vector<message> *others = nullptr)
{
	return run(sp, k, g, std::as_bytes(std::span<const A, 1>(&args, 1)), timeout, others);
}

/// One call: @p q and @p name as immediates; the reply (status checked).
result<message> call(const space &sp, const cap &req, const wire_req &q,
		     std::string_view name = {}, std::chrono::nanoseconds timeout = {});

} // namespace caladan::gpu

#pragma GCC visibility pop

#endif // CALADAN_GPU_HPP
