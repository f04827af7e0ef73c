// SPDX-License-Identifier: LGPL-2.1-or-later
// Internal: the one place that issues fractos ioctls.
#ifndef CALADAN_SRC_IOCTL_HPP
#define CALADAN_SRC_IOCTL_HPP

#include <caladan/caladan.hpp>

#include <functional>
#include <sys/ioctl.h>

namespace caladan::detail {

/// ioctl(@p fd, Cmd, &@p arg); the argument type must match Cmd's size.
template <unsigned long Cmd, class Arg>
inline result<void> call(int fd, Arg &arg) noexcept
{
	static_assert(_IOC_SIZE(Cmd) == sizeof(Arg), "ioctl argument size mismatch");
	static_assert(_IOC_TYPE(Cmd) == FRACTOS_IOC_MAGIC);
	if (::ioctl(fd, Cmd, &arg) < 0)
		return last_error();
	return {};
}

/// lease::wait() on the space @p sp owns.
result<message> lease_wait(lease &l, const space_ref &sp, std::chrono::nanoseconds timeout,
			   std::vector<message> *others);

/// Receives on @p sp until a message @p wanted accepts arrives: that
/// message; the others are appended to @p others (dropped if null).
/// @p timeout: 0 waits forever, else ETIMEDOUT.  EINTR is retried.
result<message> receive_until(const space_ref &sp, std::chrono::nanoseconds timeout,
			      const std::function<bool(const message &)> &wanted,
			      std::vector<message> *others);

/// call_with_lease() of @p b, and the reply's leading int32 status (the
/// services' wire replies begin with it): a negative one is the error.
result<message> status_call(const request_builder &b, std::chrono::nanoseconds timeout);

/// FRACTOS_IOC_REQUEST_RECEIVE on the space @p sp owns.
result<message> receive(const space_ref &sp, std::uint32_t flags, std::uint64_t timeout_ns);

/// The message of a successful REQUEST_RECEIVE @p a on space @p sp, with
/// @p imms the buffer @p a pointed at and @p cids its cid array: takes
/// ownership of the installed cids.
message take_message(const space_ref &sp, const fractos_request_receive &a,
		     std::vector<std::byte> &&imms,
		     const std::uint32_t *cids);

} // namespace caladan::detail

#endif
