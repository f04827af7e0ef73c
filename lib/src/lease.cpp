// SPDX-License-Identifier: LGPL-2.1-or-later
// Bifröst lease calls: Memory lent as revocation-tree children, revoked
// when the reply continuation arrives.
#include "ioctl.hpp"

#include <atomic>
#include <cerrno>

namespace caladan {

namespace {

/* Tags of reply continuations: unique within the process ("Bf" prefix). */
std::uint64_t next_tag() noexcept
{
	static std::atomic<std::uint64_t> n{0};
	return 0x4266000000000000ULL | (n.fetch_add(1, std::memory_order_relaxed) + 1);
}

/* Revokes (EKEYREVOKED is fine: already done) and closes @p c. */
result<void> revoke_and_close(cap &c) noexcept
{
	if (!c)
		return {};
	auto r = c.revoke();
	auto cl = c.close();
	if (!r && r.error() != errno_code(EKEYREVOKED))
		return r;
	return cl;
}

} // namespace

lease &lease::operator=(lease &&o) noexcept
{
	if (this != &o) {
		(void)complete();
		tag_ = o.tag_;
		reply_ = std::move(o.reply_);
		leases_ = std::move(o.leases_);
	}
	return *this;
}

result<void> lease::complete() noexcept
{
	result<void> first;
	for (cap &c : leases_) {
		auto r = revoke_and_close(c);
		if (!r && first)
			first = r;
	}
	leases_.clear();
	auto r = revoke_and_close(reply_);
	if (!r && first)
		first = r;
	return first;
}

result<message> lease::wait(const space &sp, std::chrono::nanoseconds timeout,
			    std::vector<message> *others)
{
	return detail::lease_wait(*this, sp.ref(), timeout, others);
}

result<message> detail::receive_until(const space_ref &sp, std::chrono::nanoseconds timeout,
				      const std::function<bool(const message &)> &wanted,
				      std::vector<message> *others)
{
	using clock = std::chrono::steady_clock;
	const bool forever = timeout.count() <= 0;
	const auto deadline = clock::now() + (forever ? clock::duration{} : timeout);

	for (;;) {
		std::uint32_t flags = 0;
		std::uint64_t ns = 0;
		if (!forever) {
			auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(
				deadline - clock::now());
			flags = FRACTOS_RECV_TIMEOUT;
			ns = left.count() > 0 ? std::uint64_t(left.count()) : 0;
		}
		auto m = detail::receive(sp, flags, ns);
		if (!m) {
			if (m.error() == errno_code(EINTR))
				continue;
			return m.error();
		}
		if (wanted(*m))
			return m;
		if (others)
			others->push_back(std::move(*m));
	}
}

result<message> detail::lease_wait(lease &l, const space_ref &sp, std::chrono::nanoseconds timeout,
				   std::vector<message> *others)
{
	auto m = receive_until(
		sp, timeout, [&l](const message &r) { return l.is_reply(r); }, others);
	if (!m) {
		(void)l.complete();
		return m.error();
	}
	if (auto r = l.complete(); !r)
		return r.error();
	return m;
}

result<message> detail::status_call(const request_builder &b, std::chrono::nanoseconds timeout)
{
	auto m = b.call_with_lease(timeout);
	if (!m)
		return m.error();
	auto st = m->imm<std::int32_t>();
	if (!st)
		return errno_code(EPROTO);
	if (*st < 0)
		return errno_code(-*st);
	return m;
}

result<lease> request_builder::invoke_with_lease() const
{
	if (err_)
		return err_;
	if (base_ == FRACTOS_CID_INVALID)
		return errno_code(EBADF);

	caladan::lease l;
	l.tag_ = next_tag();
	fractos_request_create rc{};
	rc.base = FRACTOS_CID_INVALID;
	rc.tag = l.tag_;
	if (auto r = detail::call<FRACTOS_IOC_REQUEST_CREATE>(space_fd(), rc); !r)
		return r.error();
	l.reply_ = cap(sp_, rc.cid);

	std::vector<std::uint32_t> cids = cids_;
	l.leases_.reserve(leased_.size());
	for (std::size_t pos : leased_) {
		fractos_cap_arg a{};
		a.cid = cids_[pos];
		if (auto r = detail::call<FRACTOS_IOC_CAP_CREATE_REVTREE>(space_fd(), a); !r)
			return r.error(); /* ~lease revokes what was made */
		l.leases_.emplace_back(sp_, a.new_cid);
		cids[pos] = a.new_cid;
	}
	cids.push_back(l.reply_.cid());

	fractos_request_invoke a{};
	a.cid = base_;
	a.flags = flags_;
	a.imms = imms_.empty() ? 0 : reinterpret_cast<std::uintptr_t>(imms_.data());
	a.imm_len = std::uint32_t(imms_.size());
	a.ncaps = std::uint32_t(cids.size());
	a.caps = reinterpret_cast<std::uintptr_t>(cids.data());
	if (auto r = detail::call<FRACTOS_IOC_REQUEST_INVOKE>(space_fd(), a); !r)
		return r.error();
	return l;
}

result<message> request_builder::call_with_lease(std::chrono::nanoseconds timeout,
						 std::vector<message> *others) const
{
	auto l = invoke_with_lease();
	if (!l)
		return l.error();
	return detail::lease_wait(*l, sp_, timeout, others);
}

result<message> call_with_lease(const space &sp, const cap &req, std::span<const cap *const> mems,
				std::span<const std::byte> imms, std::chrono::nanoseconds timeout)
{
	request_builder b = sp.request(req);
	b.set_imm(imms);
	for (const cap *m : mems) {
		if (!m)
			return errno_code(EINVAL);
		b.lease(*m);
	}
	return b.call_with_lease(timeout);
}

} // namespace caladan
