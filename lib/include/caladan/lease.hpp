// SPDX-License-Identifier: LGPL-2.1-or-later
/**
 * @file lease.hpp
 * libcaladan: Bifröst's leases: Memory lent for one call.
 * Part of <caladan/caladan.hpp>, the header to include.
 */
#ifndef CALADAN_LEASE_HPP
#define CALADAN_LEASE_HPP

#include <caladan/request.hpp>

/* The library is built with -fvisibility=hidden: what is declared here
 * is its API, exported (libcaladan.map, libcaladan.symbols). */
#pragma GCC visibility push(default)

namespace caladan {

class lease {
public:
	lease() = default;
	lease(lease &&) noexcept = default;
	lease &operator=(lease &&o) noexcept;
	~lease() { (void)complete(); }

	/// The reply continuation's tag.
	std::uint64_t tag() const noexcept { return tag_; }
	/// The reply continuation (a Request whose provider is this space).
	const cap &reply() const noexcept { return reply_; }
	/// The revocation-tree children lent, in argument order.
	std::span<const cap> leases() const noexcept { return leases_; }
	/// True if @p m is the invocation of this call's reply continuation.
	bool is_reply(const message &m) const noexcept
	{
		return m.type == msg_type::request && m.tag == tag_ && active();
	}
	/// True until complete().
	bool active() const noexcept { return bool(reply_); }

	/// Revokes every lease and the continuation and closes them; returns
	/// the first error (EKEYREVOKED from an already revoked lease is not
	/// one).  Idempotent.
	result<void> complete() noexcept;

	/// Receives until the reply arrives (see call_with_lease()).
	result<message> wait(const space &sp, std::chrono::nanoseconds timeout = {},
			     std::vector<message> *others = nullptr);

private:
	friend class request_builder;
	std::uint64_t tag_ = 0;
	cap reply_;
	std::vector<cap> leases_;
};

/**
 * call_with_lease(): sp.request(req) with @p imms, then each of @p mems
 * lent as in request_builder::lease(), then call_with_lease(@p timeout).
 */
result<message> call_with_lease(const space &sp, const cap &req,
				std::span<const cap *const> mems,
				std::span<const std::byte> imms = {},
				std::chrono::nanoseconds timeout = {});

/// The conventional reply path of a message sent by call_with_lease(): its

} // namespace caladan

#pragma GCC visibility pop

#endif // CALADAN_LEASE_HPP
