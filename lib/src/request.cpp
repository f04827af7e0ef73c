// SPDX-License-Identifier: LGPL-2.1-or-later
// Requests, messages, monitors and the request builder.
#include "ioctl.hpp"

#include <cerrno>

namespace caladan {

namespace {

std::uint64_t ptr(const void *p) noexcept
{
	return reinterpret_cast<std::uintptr_t>(p);
}

fractos_request_create create_arg(std::uint32_t base, std::uint64_t tag,
				  std::span<const std::byte> imms,
				  std::span<const std::uint32_t> cids) noexcept
{
	fractos_request_create a{};
	a.base = base;
	a.tag = tag;
	a.imms = imms.empty() ? 0 : ptr(imms.data());
	a.imm_len = std::uint32_t(imms.size());
	a.ncaps = std::uint32_t(cids.size());
	a.caps = cids.empty() ? 0 : ptr(cids.data());
	return a;
}

fractos_request_invoke invoke_arg(std::uint32_t cid, std::span<const std::byte> imms,
				  std::span<const std::uint32_t> cids,
				  std::uint32_t flags) noexcept
{
	fractos_request_invoke a{};
	a.cid = cid;
	a.flags = flags;
	a.imms = imms.empty() ? 0 : ptr(imms.data());
	a.imm_len = std::uint32_t(imms.size());
	a.ncaps = std::uint32_t(cids.size());
	a.caps = cids.empty() ? 0 : ptr(cids.data());
	return a;
}

/* Sizes that do not fit the struct's 32-bit fields would be truncated. */
bool too_big(std::span<const std::byte> imms, std::span<const std::uint32_t> cids) noexcept
{
	return imms.size() > UINT32_MAX || cids.size() > UINT32_MAX;
}

result<cap> do_create(const space_ref &sp, fractos_request_create &a) noexcept
{
	if (auto r = detail::call<FRACTOS_IOC_REQUEST_CREATE>(fd_of(sp), a); !r)
		return r.error();
	return cap(sp, a.cid);
}

} // namespace

const char *to_string(msg_type t) noexcept
{
	switch (t) {
	case msg_type::none:
		return "none";
	case msg_type::request:
		return "request";
	case msg_type::monitor_receive:
		return "monitor_receive";
	case msg_type::monitor_delegate:
		return "monitor_delegate";
	}
	return "unknown";
}

result<cap> request_create(const space &sp, std::uint64_t tag, std::span<const std::byte> imms,
			   std::span<const std::uint32_t> cids) noexcept
{
	if (too_big(imms, cids))
		return errno_code(E2BIG);
	auto a = create_arg(FRACTOS_CID_INVALID, tag, imms, cids);
	return do_create(sp.ref(), a);
}

result<cap> request_derive(const cap &base, std::span<const std::byte> imms,
			   std::span<const std::uint32_t> cids) noexcept
{
	if (too_big(imms, cids))
		return errno_code(E2BIG);
	auto a = create_arg(base.cid(), 0, imms, cids);
	return do_create(base.space_owner(), a);
}

result<void> request_invoke(const cap &req, std::span<const std::byte> imms,
			    std::span<const std::uint32_t> cids, std::uint32_t flags) noexcept
{
	if (too_big(imms, cids))
		return errno_code(E2BIG);
	auto a = invoke_arg(req.cid(), imms, cids, flags);
	return detail::call<FRACTOS_IOC_REQUEST_INVOKE>(req.space_fd(), a);
}

result<message> request_receive(const space &sp, std::uint32_t flags, std::uint64_t timeout_ns)
{
	return detail::receive(sp.ref(), flags, timeout_ns);
}

result<message> detail::receive(const space_ref &sp, std::uint32_t flags,
				std::uint64_t timeout_ns)
{
	message m;
	m.imms.resize(FRACTOS_REQ_MAX_IMM);
	std::uint32_t cids[FRACTOS_REQ_MAX_CAPS];

	fractos_request_receive a{};
	a.flags = flags;
	a.timeout_ns = timeout_ns;
	a.imms = ptr(m.imms.data());
	a.imm_len = FRACTOS_REQ_MAX_IMM;
	a.ncaps = FRACTOS_REQ_MAX_CAPS;
	a.caps = ptr(cids);
	if (auto r = detail::call<FRACTOS_IOC_REQUEST_RECEIVE>(fd_of(sp), a); !r)
		return r.error();
	return detail::take_message(sp, a, std::move(m.imms), cids);
}

message detail::take_message(const space_ref &sp, const fractos_request_receive &a,
			     std::vector<std::byte> &&imms, const std::uint32_t *cids)
{
	message m;
	m.type = msg_type(a.type);
	m.tag = a.tag;
	m.imms = std::move(imms);
	m.imms.resize(a.imm_len);
	m.caps.reserve(a.ncaps);
	for (std::uint32_t i = 0; i < a.ncaps; i++)
		m.caps.emplace_back(sp, cids[i]);
	return m;
}

result<message> space::receive() const
{
	return request_receive(*this);
}

result<message> space::receive(std::chrono::nanoseconds timeout) const
{
	auto ns = timeout.count();
	return request_receive(*this, FRACTOS_RECV_TIMEOUT, ns > 0 ? std::uint64_t(ns) : 0);
}

result<message> space::try_receive() const
{
	return request_receive(*this, FRACTOS_RECV_NONBLOCK);
}

result<void> monitor_receive(const cap &c, std::uint64_t cookie) noexcept
{
	fractos_monitor a{};
	a.cid = c.cid();
	a.cookie = cookie;
	return detail::call<FRACTOS_IOC_MONITOR_RECEIVE>(c.space_fd(), a);
}

result<void> monitor_delegate(const cap &c, std::uint64_t cookie) noexcept
{
	fractos_monitor a{};
	a.cid = c.cid();
	a.cookie = cookie;
	return detail::call<FRACTOS_IOC_MONITOR_DELEGATE>(c.space_fd(), a);
}

/* ---- request_builder ---------------------------------------------------- */

request_builder space::request() const
{
	return request_builder(*this);
}

request_builder space::request(const cap &req) const
{
	return request_builder(*this, req);
}

request_builder space::request(std::uint32_t cid) const
{
	return request_builder(*this, cid);
}

request_builder::request_builder(const space &sp, const cap &base) noexcept
	: sp_(sp.ref()), base_(base.cid())
{
	if (base.space_fd() != space_fd())
		fail(errno_code(EXDEV));
}

request_builder &request_builder::set_imm(std::span<const std::byte> bytes)
{
	imms_.insert(imms_.end(), bytes.begin(), bytes.end());
	return *this;
}

request_builder &request_builder::set_cap(const cap &c)
{
	if (c.space_fd() != space_fd())
		fail(errno_code(EXDEV));
	cids_.push_back(c.cid());
	return *this;
}

request_builder &request_builder::set_cid(std::uint32_t cid)
{
	cids_.push_back(cid);
	return *this;
}

request_builder &request_builder::lease(const cap &mem)
{
	leased_.push_back(cids_.size());
	return set_cap(mem);
}

fractos_request_invoke request_builder::invoke_arg() const noexcept
{
	return caladan::invoke_arg(base_, imms_, cids_, flags_);
}

fractos_request_create request_builder::create_arg() const noexcept
{
	auto a = caladan::create_arg(base_, base_ == FRACTOS_CID_INVALID ? tag_ : 0, imms_, cids_);
	a.flags = create_flags_;
	return a;
}

result<void> request_builder::invoke() const noexcept
{
	if (err_)
		return err_;
	if (base_ == FRACTOS_CID_INVALID)
		return errno_code(EBADF);
	auto a = invoke_arg();
	return detail::call<FRACTOS_IOC_REQUEST_INVOKE>(space_fd(), a);
}

result<cap> request_builder::derive() const noexcept
{
	if (base_ == FRACTOS_CID_INVALID)
		return errno_code(EINVAL);
	return create();
}

result<cap> request_builder::create() const noexcept
{
	if (err_)
		return err_;
	auto a = create_arg();
	return do_create(sp_, a);
}

msg_conts find_conts(const message &m, const msg_layout &l) noexcept
{
	std::size_t n = m.caps.size();
	msg_conts c;
	auto type = [&m](std::size_t i) {
		auto info = m.caps[i].info();
		return info ? info->type : obj_type::none;
	};
	auto is_req = [&](std::size_t i) { return i < n && type(i) == obj_type::request; };

	bool ok = n >= l.min_caps && n <= l.max_caps && n <= l.types.size();
	for (std::size_t i = 0; ok && i < n; i++) {
		obj_type want = i == l.done || i == l.err ? obj_type::request : l.types[i];
		ok = want == obj_type::none || type(i) == want;
	}
	if (ok && l.done < n) {
		c.done = &m.caps[l.done];
		c.err = l.err < n ? &m.caps[l.err] : c.done;
		return c;
	}
	if (is_req(l.err)) {
		c.err = &m.caps[l.err];
	} else if (is_req(l.done)) {
		c.err = &m.caps[l.done];
	} else {
		for (std::size_t i = n; i-- > 0;) {
			if (is_req(i)) {
				c.err = &m.caps[i];
				break;
			}
		}
	}
	return c;
}

} // namespace caladan
