// SPDX-License-Identifier: LGPL-2.1-or-later
// Errors, versions and small formatting helpers.
#include <caladan/caladan.hpp>

#include <cerrno>

namespace caladan {

const char *version() noexcept
{
	return CALADAN_VERSION;
}

const char *errno_name(int e) noexcept
{
	switch (e) {
#define E(x) case x: return #x
	E(EPERM); E(ENOENT); E(ESRCH); E(EINTR); E(EIO); E(ENXIO);
	E(E2BIG); E(ENOEXEC); E(EBADF); E(ECHILD); E(EAGAIN); E(ENOMEM);
	E(EACCES); E(EFAULT); E(EBUSY); E(EEXIST); E(EXDEV); E(ENODEV);
	E(ENOTDIR); E(EISDIR); E(EINVAL); E(ENFILE); E(EMFILE); E(ENOTTY);
	E(EFBIG); E(ENOSPC); E(ESPIPE); E(EROFS); E(EPIPE); E(ERANGE);
	E(ENOSYS); E(EOVERFLOW); E(EMSGSIZE); E(EOPNOTSUPP); E(ECONNRESET);
	E(ETIMEDOUT); E(EKEYREVOKED); E(ENOTCONN); E(ENOTSOCK);
	E(EHOSTUNREACH); E(EPROTO); E(ENOMSG); E(ETIME); E(ECANCELED);
#undef E
	default:
		return nullptr;
	}
}

std::string describe(std::error_code ec)
{
	if (ec.category() == std::system_category()) {
		if (const char *name = errno_name(ec.value()))
			return std::string(name) + " (" + ec.message() + ")";
	}
	return ec.message();
}

std::string to_string(perm p)
{
	std::string s;
	s += has(p, perm::read) ? 'r' : '-';
	s += has(p, perm::write) ? 'w' : '-';
	return s;
}

const char *to_string(obj_type t) noexcept
{
	switch (t) {
	case obj_type::none:
		return "none";
	case obj_type::memory:
		return "memory";
	case obj_type::request:
		return "request";
	}
	return "unknown";
}

std::string to_string(const object_id &oid)
{
	return std::to_string(oid.node) + ":" + std::to_string(oid.epoch) + ":" +
	       std::to_string(oid.id);
}

} // namespace caladan
