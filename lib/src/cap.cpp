// SPDX-License-Identifier: LGPL-2.1-or-later
// cap: the single-cid operations.
#include "ioctl.hpp"

#include <cerrno>

namespace caladan {

void cap::reset() noexcept
{
	if (cid_ == FRACTOS_CID_INVALID)
		return;
	int saved = errno;
	fractos_cap_arg a{};
	a.cid = release();
	(void)detail::call<FRACTOS_IOC_CAP_CLOSE>(space_fd(), a);
	sp_.reset();
	errno = saved;
}

result<void> cap::close() noexcept
{
	fractos_cap_arg a{};
	a.cid = release();
	auto r = detail::call<FRACTOS_IOC_CAP_CLOSE>(space_fd(), a);
	sp_.reset();
	return r;
}

result<cap_info> cap::info() const noexcept
{
	fractos_cap_info a{};
	a.cid = cid_;
	if (auto r = detail::call<FRACTOS_IOC_CAP_INFO>(space_fd(), a); !r)
		return r.error();
	cap_info out;
	out.type = obj_type(a.type);
	out.perms = perm(a.perms);
	out.offset = a.offset;
	out.len = a.len;
	out.oid = {a.oid.node, a.oid.epoch, a.oid.id};
	out.flags = a.info_flags;
	out.depth = a.depth;
	return out;
}

result<cap> cap::dup() const noexcept
{
	fractos_cap_arg a{};
	a.cid = cid_;
	if (auto r = detail::call<FRACTOS_IOC_CAP_DUP>(space_fd(), a); !r)
		return r.error();
	return cap(sp_, a.new_cid);
}

result<void> cap::revoke() const noexcept
{
	fractos_cap_arg a{};
	a.cid = cid_;
	return detail::call<FRACTOS_IOC_CAP_REVOKE>(space_fd(), a);
}

result<cap> cap::create_revtree() const noexcept
{
	fractos_cap_arg a{};
	a.cid = cid_;
	if (auto r = detail::call<FRACTOS_IOC_CAP_CREATE_REVTREE>(space_fd(), a); !r)
		return r.error();
	return cap(sp_, a.new_cid);
}

result<unique_fd> cap::export_fd(std::uint32_t flags) const noexcept
{
	fractos_cap_export a{};
	a.cid = cid_;
	a.flags = flags;
	if (auto r = detail::call<FRACTOS_IOC_CAP_EXPORT>(space_fd(), a); !r)
		return r.error();
	return unique_fd(a.fd);
}

} // namespace caladan
