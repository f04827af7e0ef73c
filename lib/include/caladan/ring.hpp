// SPDX-License-Identifier: LGPL-2.1-or-later
/**
 * @file ring.hpp
 * caladan::ring: fractos operations through io_uring (IORING_OP_URING_CMD).
 *
 * Every operation can be prepared as one SQE on the space's fd: cmd_op is
 * the FRACTOS_IOC_* number and the 16-byte command area holds a
 * struct fractos_uring_cmd pointing at the operation's argument struct.
 * The kernel reads and writes that struct when the operation runs, which
 * for a waiting operation (a blocking receive, an invoke with
 * FRACTOS_INVOKE_WAIT) is long after submission.  So the ring copies each
 * argument struct, and the buffers it points to for the operations it
 * knows (invoke, create, receive), into a slot it owns until the CQE has
 * been reaped.  With prep() the struct is copied but any buffer it points
 * to is the caller's: keep it alive until the completion.
 *
 *     auto r = ring::create(sp, 256).value();
 *     for (int i = 0; i < 256; i++)
 *             r.prep_invoke(req, as_bytes(i), {}, 0, i).value();
 *     r.submit().value();
 *     std::vector<completion> done;
 *     r.reap(done, 256).value();          // done[k].user_data, .error()
 *
 * Like liburing, nothing is submitted behind the caller's back: prep_*()
 * fails with EBUSY when the submission queue is full; submit() and try
 * again.  Completions are values: each owns what its operation produced
 * (a new cap, an fd, a message with its caps), closed if dropped.
 *
 * A ring is bound to one space, whose fd it shares (space_ref).  Destroying a ring
 * with operations in flight cancels them (IORING_OP_ASYNC_CANCEL) and waits
 * for their completions, closing anything they produced.
 *
 * Link with -luring.
 */
#ifndef CALADAN_RING_HPP
#define CALADAN_RING_HPP

#include <caladan/caladan.hpp>

#include <liburing.h>

#include <chrono>
#include <memory>
#include <vector>

/* The library is built with -fvisibility=hidden: what is declared here
 * is its API, exported (libcaladan.map, libcaladan.symbols). */
#pragma GCC visibility push(default)

namespace caladan {

/**
 * Fills @p sqe as a fractos operation: IORING_OP_URING_CMD on @p space_fd,
 * cmd_op @p cmd, command area {arg = @p arg, reserved = 0}; user_data 0.
 * Pure encoding, no system call: liburing-style, for callers that manage
 * their own io_uring.
 */
void prep_fractos_cmd(io_uring_sqe *sqe, int space_fd, unsigned long cmd, const void *arg) noexcept;

/// The command area of a prepared SQE (what prep_fractos_cmd() wrote).
fractos_uring_cmd fractos_cmd_of(const io_uring_sqe *sqe) noexcept;

namespace detail {
struct ring_slot;
struct ring_slot_deleter {
	void operator()(ring_slot *s) const noexcept;
};
} // namespace detail

/**
 * completion: the result of one operation, as a value.
 */
struct completion {
	/// The user_data given when preparing.
	std::uint64_t user_data = 0;
	/// The FRACTOS_IOC_* operation.
	unsigned long cmd = 0;
	/// The CQE's res: 0 or -errno.
	int res = 0;

	/// The operation's error (empty on success).
	std::error_code error() const noexcept { return res < 0 ? errno_code(-res) : std::error_code{}; }
	bool ok() const noexcept { return res >= 0; }
	/// res as a result<void>.
	result<void> status() const noexcept
	{
		if (res < 0)
			return errno_code(-res);
		return {};
	}

	/// MEMORY_CREATE, MEMORY_DIMINISH, CAP_DUP, CAP_CREATE_REVTREE,
	/// CAP_IMPORT, REQUEST_CREATE, NAME_LOOKUP: the new capability (owned).
	cap new_cap;
	/// CAP_EXPORT: the new fd (owned).
	unique_fd fd;
	/// REQUEST_RECEIVE: the message (owning its caps).
	message msg;
	/// MEMORY_COPY: bytes copied.
	std::uint64_t copied = 0;

	/// The argument struct as the kernel left it (e.g. fractos_cap_info
	/// for CAP_INFO); T must be the operation's struct.
	template <class T>
	T arg() const noexcept
	{
		static_assert(sizeof(T) <= sizeof(raw_));
		T v;
		std::memcpy(&v, raw_, sizeof(T));
		return v;
	}

private:
	friend class ring;
	alignas(8) unsigned char raw_[80] = {};
};

/**
 * ring: an io_uring instance submitting fractos operations on one space.
 * Move-only.
 */
class ring {
public:
	ring() noexcept;
	ring(ring &&) noexcept;
	ring &operator=(ring &&) noexcept;
	~ring();

	/// io_uring_queue_init(@p entries, @p flags) for operations on @p sp.
	static result<ring> create(const space &sp, unsigned entries = 256,
				   unsigned flags = 0) noexcept;

	explicit operator bool() const noexcept { return bool(ring_); }
	/// The io_uring itself, for callers mixing in other operations (their
	/// user_data must have the top bit clear: the ring owns those with it set).
	io_uring *get() noexcept { return ring_.get(); }

	/**
	 * Prepares operation @p cmd with a copy of @p arg.  Buffers the struct
	 * points to are not copied: they must outlive the completion.
	 * EINVAL if sizeof(Arg) is not @p cmd's size; EBUSY if the
	 * submission queue is full.
	 */
	template <class Arg>
	result<void> prep(unsigned long cmd, const Arg &arg, std::uint64_t user_data = 0)
	{
		static_assert(std::is_trivially_copyable_v<Arg>);
		return prep_raw(cmd, &arg, sizeof(Arg), user_data);
	}
	/// prep() with the struct given as bytes.
	result<void> prep_raw(unsigned long cmd, const void *arg, std::size_t size,
			      std::uint64_t user_data = 0);

	/// REQUEST_INVOKE of @p req with @p imms and @p cids (copied).
	result<void> prep_invoke(const cap &req, std::span<const std::byte> imms = {},
				 std::span<const std::uint32_t> cids = {}, std::uint32_t flags = 0,
				 std::uint64_t user_data = 0);
	/// REQUEST_INVOKE (or, with @p create, REQUEST_CREATE) as built by @p b
	/// (its arguments are copied; EXDEV if @p b is not for this space).
	result<void> prep(const request_builder &b, std::uint64_t user_data = 0);
	result<void> prep_create(const request_builder &b, std::uint64_t user_data = 0);
	/// REQUEST_RECEIVE into ring-owned buffers sized for any message.
	/// @p flags: FRACTOS_RECV_*; a blocking receive completes when a
	/// message arrives (it ties up an io_uring worker meanwhile).
	result<void> prep_receive(std::uint32_t flags = 0, std::uint64_t timeout_ns = 0,
				  std::uint64_t user_data = 0);
	/// MEMORY_COPY from @p src to @p dst (caps of this ring's space).
	result<void> prep_memory_copy(const cap &src, const cap &dst, const copy_opts &opts = {},
				      std::uint64_t user_data = 0);
	/// CAP_CLOSE of @p c's cid: the cap is released (empty) at once.
	result<void> prep_close(cap &&c, std::uint64_t user_data = 0);

	/// io_uring_submit(): the number of SQEs submitted.
	result<unsigned> submit() noexcept;
	/// io_uring_submit_and_wait(@p wait_nr).
	result<unsigned> submit_and_wait(unsigned wait_nr) noexcept;

	/**
	 * Appends completions to @p out: waits until at least @p min have been
	 * reaped (0: only those already there), takes at most @p max.  With
	 * @p timeout > 0, ETIMEDOUT if @p min did not arrive in time (those
	 * reaped stay in @p out).  Returns the number appended.
	 */
	result<std::size_t> reap(std::vector<completion> &out, std::size_t min = 1,
				 std::size_t max = SIZE_MAX,
				 std::chrono::nanoseconds timeout = {});
	/// One completion, waiting for it.
	result<completion> wait(std::chrono::nanoseconds timeout = {});

	/// Operations prepared and not yet completed (submitted or not).
	std::size_t in_flight() const noexcept { return in_flight_; }
	/// The space's fd.
	int space_fd() const noexcept { return fd_of(sp_); }

private:
	struct uring_deleter {
		void operator()(io_uring *r) const noexcept;
	};
	using slot_ptr = std::unique_ptr<detail::ring_slot, detail::ring_slot_deleter>;

	result<detail::ring_slot *> get_slot(unsigned long cmd, std::uint64_t user_data);
	result<void> queue(detail::ring_slot *s);
	// A builder's Request, its arguments copied into the slot (ring.cpp);
	// instantiated there only, so never exported whatever the optimisation.
	template <class Arg>
	__attribute__((visibility("hidden")))
	result<void> prep_built(const request_builder &b, unsigned long cmd, Arg a,
				std::uint64_t user_data);
	completion finish(io_uring_cqe *cqe);
	void drain() noexcept;

	space_ref sp_;
	std::unique_ptr<io_uring, uring_deleter> ring_;
	std::vector<slot_ptr> slots_;
	std::vector<std::uint32_t> free_;
	std::size_t in_flight_ = 0;
};

} // namespace caladan

#pragma GCC visibility pop

#endif // CALADAN_RING_HPP
