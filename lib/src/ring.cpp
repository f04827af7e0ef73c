// SPDX-License-Identifier: LGPL-2.1-or-later
// caladan::ring: fractos operations as IORING_OP_URING_CMD SQEs.
#include <caladan/ring.hpp>

#include "ioctl.hpp"

#include <cerrno>
#include <cstring>

namespace caladan {

namespace {

/* user_data of the ring's own SQEs: the top bit, then the slot index. */
constexpr std::uint64_t slot_bit = 1ULL << 63;
constexpr std::size_t max_arg = 80;

std::uint64_t ptr(const void *p) noexcept
{
	return reinterpret_cast<std::uintptr_t>(p);
}

/* The size of @p cmd's struct, or 0 if it is not a fractos operation. */
std::size_t arg_size(unsigned long cmd) noexcept
{
	if (_IOC_TYPE(cmd) != FRACTOS_IOC_MAGIC || _IOC_DIR(cmd) != (_IOC_READ | _IOC_WRITE))
		return 0;
	return _IOC_SIZE(cmd);
}

} // namespace

void prep_fractos_cmd(io_uring_sqe *sqe, int space_fd, unsigned long cmd, const void *arg) noexcept
{
	std::memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = space_fd;
	sqe->cmd_op = std::uint32_t(cmd);
	fractos_uring_cmd pdu{};
	pdu.arg = ptr(arg);
	static_assert(sizeof(pdu) == 16);
	std::memcpy(sqe->cmd, &pdu, sizeof(pdu));
}

fractos_uring_cmd fractos_cmd_of(const io_uring_sqe *sqe) noexcept
{
	fractos_uring_cmd pdu;
	std::memcpy(&pdu, sqe->cmd, sizeof(pdu));
	return pdu;
}

namespace detail {

struct ring_slot {
	unsigned long cmd = 0;
	std::uint64_t user_data = 0;
	std::uint32_t index = 0;
	bool owned_bufs = false; /* imms/cids are the ring's (prep_receive) */
	alignas(8) unsigned char arg[max_arg] = {};
	std::vector<std::byte> imms;
	std::vector<std::uint32_t> cids;
	io_uring_sqe *sqe = nullptr;
};

void ring_slot_deleter::operator()(ring_slot *s) const noexcept
{
	std::default_delete<ring_slot>()(s);
}

} // namespace detail

void ring::uring_deleter::operator()(io_uring *r) const noexcept
{
	io_uring_queue_exit(r);
	std::default_delete<io_uring>()(r);
}

ring::ring() noexcept = default;

ring::ring(ring &&o) noexcept
	: sp_(std::move(o.sp_)), ring_(std::move(o.ring_)), slots_(std::move(o.slots_)),
	  free_(std::move(o.free_)), in_flight_(std::exchange(o.in_flight_, 0))
{
}

ring &ring::operator=(ring &&o) noexcept
{
	if (this != &o) {
		drain();
		ring_.reset();
		sp_ = std::move(o.sp_);
		ring_ = std::move(o.ring_);
		slots_ = std::move(o.slots_);
		free_ = std::move(o.free_);
		in_flight_ = std::exchange(o.in_flight_, 0);
	}
	return *this;
}

ring::~ring()
{
	drain();
}

result<ring> ring::create(const space &sp, unsigned entries, unsigned flags) noexcept
{
	ring r;
	std::unique_ptr<io_uring, uring_deleter> u;
	{
		auto raw = std::make_unique<io_uring>();
		std::memset(raw.get(), 0, sizeof(io_uring));
		int ret = io_uring_queue_init(entries, raw.get(), flags);
		if (ret < 0)
			return errno_code(-ret);
		u.reset(raw.release());
	}
	r.sp_ = sp.ref();
	r.ring_ = std::move(u);
	return r;
}

result<detail::ring_slot *> ring::get_slot(unsigned long cmd, std::uint64_t user_data)
{
	if (!ring_)
		return errno_code(EBADF);
	if (free_.empty()) {
		slot_ptr s(std::make_unique<detail::ring_slot>().release());
		s->index = std::uint32_t(slots_.size());
		free_.push_back(s->index);
		slots_.push_back(std::move(s));
	}
	io_uring_sqe *sqe = io_uring_get_sqe(ring_.get());
	if (!sqe)
		return errno_code(EBUSY);
	detail::ring_slot *s = slots_[free_.back()].get();
	free_.pop_back();
	s->cmd = cmd;
	s->user_data = user_data;
	s->owned_bufs = false;
	s->sqe = sqe;
	std::memset(s->arg, 0, sizeof(s->arg));
	return s;
}

result<void> ring::queue(detail::ring_slot *s)
{
	prep_fractos_cmd(s->sqe, space_fd(), s->cmd, s->arg);
	s->sqe->user_data = slot_bit | s->index;
	s->sqe = nullptr;
	in_flight_++;
	return {};
}

result<void> ring::prep_raw(unsigned long cmd, const void *arg, std::size_t size,
			    std::uint64_t user_data)
{
	if (arg_size(cmd) != size || size > max_arg)
		return errno_code(EINVAL);
	auto s = get_slot(cmd, user_data);
	if (!s)
		return s.error();
	std::memcpy((*s)->arg, arg, size);
	return queue(*s);
}

result<void> ring::prep_invoke(const cap &req, std::span<const std::byte> imms,
			       std::span<const std::uint32_t> cids, std::uint32_t flags,
			       std::uint64_t user_data)
{
	if (req.space_fd() != space_fd())
		return errno_code(EXDEV);
	if (imms.size() > UINT32_MAX || cids.size() > UINT32_MAX)
		return errno_code(E2BIG);
	auto r = get_slot(FRACTOS_IOC_REQUEST_INVOKE, user_data);
	if (!r)
		return r.error();
	detail::ring_slot *s = *r;
	s->imms.assign(imms.begin(), imms.end());
	s->cids.assign(cids.begin(), cids.end());
	fractos_request_invoke a{};
	a.cid = req.cid();
	a.flags = flags;
	a.imms = s->imms.empty() ? 0 : ptr(s->imms.data());
	a.imm_len = std::uint32_t(s->imms.size());
	a.ncaps = std::uint32_t(s->cids.size());
	a.caps = s->cids.empty() ? 0 : ptr(s->cids.data());
	std::memcpy(s->arg, &a, sizeof(a));
	return queue(s);
}

template <class Arg>
result<void> ring::prep_built(const request_builder &b, unsigned long cmd, Arg a,
			      std::uint64_t user_data)
{
	if (b.error())
		return b.error();
	if (b.space_fd() != space_fd())
		return errno_code(EXDEV);
	auto r = get_slot(cmd, user_data);
	if (!r)
		return r.error();
	detail::ring_slot *s = *r;
	s->imms.assign(b.imms().begin(), b.imms().end());
	s->cids.assign(b.cids().begin(), b.cids().end());
	a.imms = s->imms.empty() ? 0 : ptr(s->imms.data());
	a.caps = s->cids.empty() ? 0 : ptr(s->cids.data());
	std::memcpy(s->arg, &a, sizeof(a));
	return queue(s);
}

result<void> ring::prep(const request_builder &b, std::uint64_t user_data)
{
	return prep_built(b, FRACTOS_IOC_REQUEST_INVOKE, b.invoke_arg(), user_data);
}

result<void> ring::prep_create(const request_builder &b, std::uint64_t user_data)
{
	return prep_built(b, FRACTOS_IOC_REQUEST_CREATE, b.create_arg(), user_data);
}

result<void> ring::prep_receive(std::uint32_t flags, std::uint64_t timeout_ns,
				std::uint64_t user_data)
{
	auto r = get_slot(FRACTOS_IOC_REQUEST_RECEIVE, user_data);
	if (!r)
		return r.error();
	detail::ring_slot *s = *r;
	s->owned_bufs = true;
	s->imms.resize(FRACTOS_REQ_MAX_IMM);
	s->cids.resize(FRACTOS_REQ_MAX_CAPS);
	fractos_request_receive a{};
	a.flags = flags;
	a.timeout_ns = timeout_ns;
	a.imms = ptr(s->imms.data());
	a.imm_len = FRACTOS_REQ_MAX_IMM;
	a.ncaps = FRACTOS_REQ_MAX_CAPS;
	a.caps = ptr(s->cids.data());
	std::memcpy(s->arg, &a, sizeof(a));
	return queue(s);
}

result<void> ring::prep_memory_copy(const cap &src, const cap &dst, const copy_opts &opts,
				    std::uint64_t user_data)
{
	if (src.space_fd() != space_fd() || dst.space_fd() != space_fd())
		return errno_code(EXDEV);
	fractos_memory_copy a{};
	a.src = src.cid();
	a.dst = dst.cid();
	a.src_offset = opts.src_offset;
	a.dst_offset = opts.dst_offset;
	a.len = opts.len;
	return prep(FRACTOS_IOC_MEMORY_COPY, a, user_data);
}

result<void> ring::prep_close(cap &&c, std::uint64_t user_data)
{
	if (c.space_fd() != space_fd())
		return errno_code(EXDEV);
	fractos_cap_arg a{};
	a.cid = c.cid();
	auto r = prep(FRACTOS_IOC_CAP_CLOSE, a, user_data);
	if (r)
		(void)c.release();
	return r;
}

result<unsigned> ring::submit() noexcept
{
	if (!ring_)
		return errno_code(EBADF);
	int ret = io_uring_submit(ring_.get());
	if (ret < 0)
		return errno_code(-ret);
	return unsigned(ret);
}

result<unsigned> ring::submit_and_wait(unsigned wait_nr) noexcept
{
	if (!ring_)
		return errno_code(EBADF);
	int ret = io_uring_submit_and_wait(ring_.get(), wait_nr);
	if (ret < 0)
		return errno_code(-ret);
	return unsigned(ret);
}

completion ring::finish(io_uring_cqe *cqe)
{
	completion c;
	c.res = cqe->res;
	if (!(cqe->user_data & slot_bit) ||
	    (cqe->user_data & ~slot_bit) >= slots_.size()) {
		c.user_data = cqe->user_data; /* not one of ours */
		return c;
	}
	detail::ring_slot *s = slots_[cqe->user_data & ~slot_bit].get();
	in_flight_--;
	c.user_data = s->user_data;
	c.cmd = s->cmd;
	std::memcpy(c.raw_, s->arg, sizeof(c.raw_));

	if (c.res >= 0) {
		switch (s->cmd) {
		case FRACTOS_IOC_MEMORY_CREATE:
			c.new_cap = cap(sp_, c.arg<fractos_memory_create>().cid);
			break;
		case FRACTOS_IOC_MEMORY_DIMINISH:
			c.new_cap = cap(sp_, c.arg<fractos_memory_diminish>().new_cid);
			break;
		case FRACTOS_IOC_CAP_DUP:
		case FRACTOS_IOC_CAP_CREATE_REVTREE:
			c.new_cap = cap(sp_, c.arg<fractos_cap_arg>().new_cid);
			break;
		case FRACTOS_IOC_CAP_IMPORT:
			c.new_cap = cap(sp_, c.arg<fractos_cap_import>().cid);
			break;
		case FRACTOS_IOC_REQUEST_CREATE:
			c.new_cap = cap(sp_, c.arg<fractos_request_create>().cid);
			break;
#ifdef FRACTOS_IOC_NAME_LOOKUP
		case FRACTOS_IOC_NAME_LOOKUP:
			c.new_cap = cap(sp_, c.arg<fractos_name>().cid);
			break;
#endif
		case FRACTOS_IOC_CAP_EXPORT:
			c.fd.reset(c.arg<fractos_cap_export>().fd);
			break;
		case FRACTOS_IOC_MEMORY_COPY:
			c.copied = c.arg<fractos_memory_copy>().copied;
			break;
		case FRACTOS_IOC_REQUEST_RECEIVE: {
			auto a = c.arg<fractos_request_receive>();
			std::vector<std::byte> imms;
			if (s->owned_bufs) {
				imms = std::move(s->imms);
			} else if (a.imm_len) {
				const auto *p = reinterpret_cast<const std::byte *>(a.imms);
				imms.assign(p, p + a.imm_len);
			}
			const auto *cids = s->owned_bufs
						   ? s->cids.data()
						   : reinterpret_cast<const std::uint32_t *>(a.caps);
			c.msg = detail::take_message(sp_, a, std::move(imms), cids);
			break;
		}
		default:
			break;
		}
	}
	s->owned_bufs = false;
	free_.push_back(s->index);
	return c;
}

result<std::size_t> ring::reap(std::vector<completion> &out, std::size_t min, std::size_t max,
			       std::chrono::nanoseconds timeout)
{
	using clock = std::chrono::steady_clock;
	if (!ring_)
		return errno_code(EBADF);
	if (min > in_flight_)
		min = in_flight_;
	if (min && io_uring_sq_ready(ring_.get())) {
		if (auto r = submit(); !r)
			return r.error();
	}
	const auto deadline = clock::now() + timeout;
	std::size_t n = 0;
	while (n < max) {
		io_uring_cqe *cqe = nullptr;
		int ret;
		if (n >= min) {
			ret = io_uring_peek_cqe(ring_.get(), &cqe);
			if (ret == -EAGAIN)
				break;
		} else if (timeout.count() > 0) {
			auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(
				deadline - clock::now());
			if (left.count() < 0)
				left = {};
			__kernel_timespec ts{};
			ts.tv_sec = left.count() / 1000000000;
			ts.tv_nsec = left.count() % 1000000000;
			ret = io_uring_wait_cqe_timeout(ring_.get(), &cqe, &ts);
			if (ret == -ETIME)
				return errno_code(ETIMEDOUT);
		} else {
			ret = io_uring_wait_cqe(ring_.get(), &cqe);
		}
		if (ret < 0)
			return errno_code(-ret);
		out.push_back(finish(cqe));
		io_uring_cqe_seen(ring_.get(), cqe);
		n++;
	}
	return n;
}

result<completion> ring::wait(std::chrono::nanoseconds timeout)
{
	std::vector<completion> one;
	if (in_flight_ == 0)
		return errno_code(ENOENT);
	auto r = reap(one, 1, 1, timeout);
	if (!r)
		return r.error();
	return std::move(one.front());
}

void ring::drain() noexcept
{
	if (!ring_ || in_flight_ == 0)
		return;
	io_uring *u = ring_.get();
	/*
	 * IORING_OP_ASYNC_CANCEL reaches what waits in io_uring's workers;
	 * a blocking receive parked by the kernel (Linux 6.7 on: the uAPI
	 * header's "io_uring") only ends with a message, or when the ring
	 * closes.  A cancel that finds nothing while completions are still
	 * owed means those are parked receives.
	 */
	bool parked = false;
	(void)io_uring_submit(u);
	for (int round = 0; round < 20 && in_flight_ && !parked; round++) {
		io_uring_sqe *sqe = io_uring_get_sqe(u);
		if (sqe) {
			io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY);
			sqe->user_data = 0;
			(void)io_uring_submit(u);
		}
		for (;;) {
			io_uring_cqe *cqe = nullptr;
			__kernel_timespec ts{};
			ts.tv_nsec = 500 * 1000 * 1000;
			int ret = io_uring_wait_cqe_timeout(u, &cqe, &ts);
			if (ret < 0)
				break;
			/* With CANCEL_ANY, 0 (or -ENOENT) cancelled. */
			if (cqe->user_data == 0 && cqe->res <= 0 && cqe->res != -EALREADY)
				parked = true;
			try {
				completion dropped = finish(cqe); /* closes what it made */
			} catch (...) {
			}
			io_uring_cqe_seen(u, cqe);
			if (!in_flight_ || parked)
				break;
		}
	}
	if (in_flight_) {
		/*
		 * The kernel may still write into the slots of what is in
		 * flight: they are leaked.  Parked receives end when the ring
		 * closes, so the ring may go; anything else may still post a
		 * completion into it, so the ring is leaked too.
		 */
		for (auto &s : slots_)
			(void)s.release();
		if (!parked)
			(void)ring_.release();
	}
}

} // namespace caladan
