// SPDX-License-Identifier: LGPL-2.1-or-later
// The per-node name service.
#include "ioctl.hpp"

#include <cerrno>

#ifdef FRACTOS_IOC_NAME_PUBLISH
namespace caladan {

fractos_name name_arg(std::string_view name, std::uint32_t cid, std::uint32_t flags,
		      std::uint32_t node) noexcept
{
	fractos_name a{};
	a.cid = cid;
	a.flags = flags;
	a.name = reinterpret_cast<std::uintptr_t>(name.data());
	a.name_len = std::uint32_t(name.size());
	a.node = node;
	return a;
}

result<void> name_publish(const cap &c, std::string_view name, std::uint32_t flags) noexcept
{
	if (name.size() > UINT32_MAX)
		return errno_code(EINVAL);
	auto a = name_arg(name, c.cid(), flags);
	return detail::call<FRACTOS_IOC_NAME_PUBLISH>(c.space_fd(), a);
}

result<cap> name_lookup(const space &sp, std::string_view name, std::uint32_t flags,
			std::uint32_t node) noexcept
{
	if (name.size() > UINT32_MAX)
		return errno_code(EINVAL);
	auto a = name_arg(name, 0, flags, node);
	if (auto r = detail::call<FRACTOS_IOC_NAME_LOOKUP>(sp.fd(), a); !r)
		return r.error();
	return cap(sp, a.cid);
}

result<void> name_unpublish(const space &sp, std::string_view name) noexcept
{
	if (name.size() > UINT32_MAX)
		return errno_code(EINVAL);
	auto a = name_arg(name);
	return detail::call<FRACTOS_IOC_NAME_UNPUBLISH>(sp.fd(), a);
}

} // namespace caladan
#endif
