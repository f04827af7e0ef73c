// SPDX-License-Identifier: LGPL-2.1-or-later
// unique_fd and SCM_RIGHTS fd passing.
#include <caladan/caladan.hpp>

#include <cerrno>
#include <cstring>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

namespace caladan {

void unique_fd::reset(int fd) noexcept
{
	int old = std::exchange(fd_, fd);

	if (old >= 0 && old != fd) {
		int saved = errno;
		::close(old);
		errno = saved;
	}
}

result<void> send_fd(int sock, int fd, std::string_view data) noexcept
{
	char nul = '\0';
	iovec iov{};
	if (data.empty()) {
		iov.iov_base = &nul;
		iov.iov_len = 1;
	} else {
		iov.iov_base = const_cast<char *>(data.data());
		iov.iov_len = data.size();
	}

	alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
	msghdr msg{};
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = control;
	msg.msg_controllen = sizeof(control);

	cmsghdr *cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	std::memcpy(CMSG_DATA(cm), &fd, sizeof(int));

	ssize_t n;
	do
		n = ::sendmsg(sock, &msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return last_error();
	if (std::size_t(n) != iov.iov_len)
		return errno_code(EMSGSIZE);
	return {};
}

result<received_fd> recv_fd(int sock, std::size_t max_data)
{
	received_fd out;
	out.data.resize(max_data ? max_data : 1);

	iovec iov{out.data.data(), out.data.size()};
	/* Room for a few fds, so that a peer sending more cannot make us leak. */
	alignas(cmsghdr) char control[CMSG_SPACE(8 * sizeof(int))] = {};
	msghdr msg{};
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = control;
	msg.msg_controllen = sizeof(control);

	ssize_t n;
	do
		n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return last_error();

	/* Take ownership of everything received before judging the message. */
	bool extra = false;
	for (cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		std::size_t nfds = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (std::size_t i = 0; i < nfds; i++) {
			int fd;
			std::memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (!out.fd)
				out.fd.reset(fd);
			else {
				unique_fd drop(fd);
				extra = true;
			}
		}
	}

	if (n == 0 && !out.fd)
		return errno_code(EPIPE);
	if (extra || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
		return errno_code(EMSGSIZE);
	out.data.resize(std::size_t(n));
	return out;
}

} // namespace caladan
