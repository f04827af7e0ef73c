// SPDX-License-Identifier: LGPL-2.1-or-later
/**
 * @file fd.hpp
 * libcaladan: owned file descriptors and passing them over a socket.
 * Part of <caladan/caladan.hpp>, the header to include.
 */
#ifndef CALADAN_FD_HPP
#define CALADAN_FD_HPP

#include <caladan/error.hpp>

/* The library is built with -fvisibility=hidden: what is declared here
 * is its API, exported (libcaladan.map, libcaladan.symbols). */
#pragma GCC visibility push(default)

namespace caladan {

/* ------------------------------------------------------------------------ */
/* File descriptors                                                          */
/* ------------------------------------------------------------------------ */

/**
 * unique_fd: owns one file descriptor and closes it exactly once.
 * Move-only; a moved-from or default unique_fd holds -1.  close(2) errors
 * are ignored (the fd is gone either way) and errno is preserved.
 */
class unique_fd {
public:
	unique_fd() noexcept = default;
	/// Takes ownership of @p fd (-1 for none).
	explicit unique_fd(int fd) noexcept : fd_(fd) {}
	~unique_fd() { reset(); }

	unique_fd(unique_fd &&o) noexcept : fd_(o.release()) {}
	unique_fd &operator=(unique_fd &&o) noexcept
	{
		if (this != &o)
			reset(o.release());
		return *this;
	}
	unique_fd(const unique_fd &) = delete;
	unique_fd &operator=(const unique_fd &) = delete;

	int get() const noexcept { return fd_; }
	explicit operator bool() const noexcept { return fd_ >= 0; }
	/// Gives up ownership and returns the fd (-1 if none).
	int release() noexcept { return std::exchange(fd_, -1); }
	/// Closes the current fd, if any, and takes ownership of @p fd.
	void reset(int fd = -1) noexcept;

private:
	int fd_ = -1;
};

/**
 * A message received by recv_fd(): the data bytes and the fd that came
 * with them (empty if the message carried none).
 */
struct received_fd {
	std::string data;
	unique_fd fd;
};

/**
 * Sends @p fd with SCM_RIGHTS over the unix socket @p sock, with @p data
 * as the message body (at least one byte; "" is sent as one NUL byte).
 * One sendmsg(2); not part of the fractos interface, a convenience for
 * passing exported capability fds between processes.
 */
result<void> send_fd(int sock, int fd, std::string_view data = {}) noexcept;

/**
 * Receives one message of at most @p max_data bytes and, if it carries
 * one, an fd (SCM_RIGHTS, MSG_CMSG_CLOEXEC).  One recvmsg(2).  EPIPE if the
 * peer has closed the socket; EMSGSIZE if the message or its control data
 * was truncated (any fds received are closed).
 */
result<received_fd> recv_fd(int sock, std::size_t max_data = 256);

} // namespace caladan

#pragma GCC visibility pop

#endif // CALADAN_FD_HPP
