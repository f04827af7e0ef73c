// SPDX-License-Identifier: GPL-2.0-or-later
/**
 * @file gpud.hpp
 * fractos-gpud: the GPU service (caladan/gpu.hpp says what it serves).
 * One thread receives and answers the calls, and checks each launch; a
 * second runs the launches, in order, on the backend, and invokes their
 * continuations.  A launch's job holds the buffers it uses, so a buffer
 * freed meanwhile (its Memory revoked at once) goes back to the device
 * only after the kernel is done with it.
 */
#ifndef FRACTOS_GPUD_GPUD_HPP
#define FRACTOS_GPUD_GPUD_HPP

#include "backend.hpp"

#include <caladan/gpu.hpp>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace gpud {

/// What the daemon allows (fractos-gpud(8) options).
struct limits {
	std::uint32_t max_contexts = 64;
	std::uint32_t max_buffers = 64;		///< per context
	std::uint64_t max_context_bytes = 256ULL << 20;
	std::uint64_t max_alloc = caladan::gpu::max_alloc;
	std::uint32_t max_inflight = 16;	///< queued launches per context
};

/// What the daemon counts.
struct counters {
	std::atomic<std::uint64_t> launches{0};		///< kernels run
	std::atomic<std::uint64_t> launch_errors{0};	///< refused or failed
	std::atomic<std::uint64_t> allocs{0};
	std::atomic<std::uint64_t> contexts_freed{0};	///< by their clients' death
};

class service {
public:
	service(const caladan::space &sp, std::unique_ptr<backend> be, limits lim);
	~service();
	service(const service &) = delete;
	service &operator=(const service &) = delete;

	/// Publishes the service Request as @p name (FRACTOS_NAME_* @p flags).
	caladan::result<void> publish(std::string_view name, std::uint32_t flags);
	/// Serves until the space fails.
	caladan::result<void> run();

	const counters &stats() const noexcept { return stats_; }
	const backend &device() const noexcept { return *be_; }

private:
	struct buffer_slot {
		std::shared_ptr<dev_buffer> buf;
		caladan::cap free_req;
	};

	struct context {
		std::uint32_t id = 0;
		caladan::cap alloc, load, cleanup;
		std::vector<caladan::cap> launches;
		std::map<std::uint32_t, buffer_slot> buffers;	///< by slot
		std::uint32_t next_slot = 1;
		std::uint64_t bytes = 0;
		std::uint32_t held = 0;		///< Requests out (monitor_delegate)
		std::atomic<std::uint32_t> inflight{0};
		std::atomic<bool> dead{false};
	};

	struct job {
		std::shared_ptr<context> ctx;
		const fgpu::kernel_desc *k = nullptr;
		fgpu_launch g{};
		std::vector<std::byte> args;
		std::vector<std::shared_ptr<dev_buffer>> bufs;
		caladan::cap done, err;
	};

	void dispatch(caladan::message &m);
	void on_call(caladan::message &m);
	void on_launch(caladan::message &m);
	void on_released(std::uint64_t cookie);

	void op_init(caladan::message &m, const caladan::cap &reply);
	void op_alloc(caladan::message &m, context &c, const caladan::cap &reply);
	void op_free(context &c, std::uint32_t slot, const caladan::cap &reply);
	void op_load(caladan::message &m, context &c, const caladan::cap &reply);

	/// Revokes everything of @p c and forgets it.
	void destroy(std::uint32_t id);
	int resolve(context &c, job &j, const fgpu::buf_use &u);
	void answer(const caladan::cap &to, int status);
	void worker(std::stop_token st);

	const caladan::space &sp_;
	std::unique_ptr<backend> be_;
	limits lim_;
	counters stats_;
	caladan::cap svc_;
	std::map<std::uint32_t, std::shared_ptr<context>> contexts_;
	std::uint32_t next_ctx_ = 1;

	std::mutex mu_;				///< guards jobs_
	std::condition_variable_any cv_;
	std::deque<job> jobs_;
	std::jthread worker_;
};

} // namespace gpud

#endif // FRACTOS_GPUD_GPUD_HPP
