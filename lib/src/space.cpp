// SPDX-License-Identifier: LGPL-2.1-or-later
// space: one open file of /dev/fractos.
#include "ioctl.hpp"

#include <fcntl.h>

#include <new>

namespace caladan {

result<space> space::open(const char *path) noexcept
{
	int fd = ::open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return last_error();
	try {
		return space(unique_fd(fd));
	} catch (const std::bad_alloc &) {
		return errno_code(ENOMEM); /* unique_fd closed it */
	}
}

result<space_info> space::info() const noexcept
{
	fractos_space_info a{};
	if (auto r = detail::call<FRACTOS_IOC_SPACE_INFO>(fd(), a); !r)
		return r.error();
	space_info out;
	out.abi_version = a.abi_version;
	out.node = a.node;
	out.epoch = a.epoch;
	out.max_caps = a.max_caps;
	out.ncaps = a.ncaps;
	return out;
}

result<std::uint32_t> space::add_contact(const cap &req) const noexcept
{
	fractos_space_contact a{};
	a.op = FRACTOS_CONTACT_ADD;
	a.cid = req.cid();
	if (auto r = detail::call<FRACTOS_IOC_SPACE_CONTACT>(fd(), a); !r)
		return r.error();
	return a.id;
}

result<void> space::remove_contact(std::uint32_t id) const noexcept
{
	fractos_space_contact a{};
	a.op = FRACTOS_CONTACT_DEL;
	a.id = id;
	return detail::call<FRACTOS_IOC_SPACE_CONTACT>(fd(), a);
}

namespace {

/* SPACE_CONTACT's STEAL or UNSTEAL of @mem for contact @id. */
result<void> steal_op(int fd, std::uint32_t op, std::uint32_t id, const cap &mem) noexcept
{
	fractos_space_contact a{};
	a.op = op;
	a.id = id;
	a.cid = mem.cid();
	return detail::call<FRACTOS_IOC_SPACE_CONTACT>(fd, a);
}

} // namespace

result<void> space::mark_stealable(std::uint32_t id, const cap &mem) const noexcept
{
	return steal_op(fd(), FRACTOS_CONTACT_STEAL, id, mem);
}

result<void> space::unmark_stealable(std::uint32_t id, const cap &mem) const noexcept
{
	return steal_op(fd(), FRACTOS_CONTACT_UNSTEAL, id, mem);
}

} // namespace caladan
