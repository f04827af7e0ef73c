// SPDX-License-Identifier: LGPL-2.1-or-later
// unique_fd, space::open errors and SCM_RIGHTS passing, with real fds.
#include <caladan/caladan.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace caladan;

namespace {

bool is_open(int fd)
{
	return ::fcntl(fd, F_GETFD) >= 0;
}

struct pipe_fds {
	unique_fd r, w;
	pipe_fds()
	{
		int p[2];
		if (::pipe2(p, O_CLOEXEC) == 0) {
			r.reset(p[0]);
			w.reset(p[1]);
		}
	}
};

} // namespace

TEST(UniqueFd, DefaultIsEmpty)
{
	unique_fd fd;
	EXPECT_FALSE(fd);
	EXPECT_EQ(fd.get(), -1);
	EXPECT_EQ(fd.release(), -1);
}

TEST(UniqueFd, ClosesOnDestruction)
{
	int raw;
	{
		pipe_fds p;
		ASSERT_TRUE(p.r && p.w);
		raw = p.r.get();
		EXPECT_TRUE(is_open(raw));
	}
	EXPECT_FALSE(is_open(raw));
	EXPECT_EQ(errno, EBADF);
}

TEST(UniqueFd, MoveTransfersAndClosesExactlyOnce)
{
	pipe_fds p;
	int raw = p.r.get();
	unique_fd moved(std::move(p.r));
	EXPECT_FALSE(p.r);
	EXPECT_EQ(moved.get(), raw);

	unique_fd assigned;
	assigned = std::move(moved);
	EXPECT_FALSE(moved);
	EXPECT_EQ(assigned.get(), raw);

	assigned.reset();
	EXPECT_FALSE(is_open(raw));

	// The number is free again: the next fd reuses it.  Destroying the
	// moved-from handles must not close this new, unrelated fd.
	unique_fd reuse(::open("/dev/null", O_RDONLY | O_CLOEXEC));
	ASSERT_EQ(reuse.get(), raw);
	{
		unique_fd a(std::move(moved));
		unique_fd b(std::move(p.r));
	}
	EXPECT_TRUE(is_open(raw));
}

TEST(UniqueFd, SelfMoveAssignKeepsFd)
{
	pipe_fds p;
	int raw = p.w.get();
	unique_fd &alias = p.w;
	p.w = std::move(alias);
	EXPECT_EQ(p.w.get(), raw);
	EXPECT_TRUE(is_open(raw));
}

TEST(UniqueFd, ReleaseGivesUpOwnership)
{
	int raw;
	{
		pipe_fds p;
		raw = p.w.release();
		EXPECT_FALSE(p.w);
	}
	EXPECT_TRUE(is_open(raw));
	::close(raw);
}

TEST(UniqueFd, ResetReplacesAndPreservesErrno)
{
	pipe_fds p;
	int a = p.r.get(), b = p.w.release();
	errno = ENOSPC;
	p.r.reset(b);
	EXPECT_EQ(errno, ENOSPC);
	EXPECT_FALSE(is_open(a));
	EXPECT_EQ(p.r.get(), b);
	p.r.reset(b); // resetting to the same fd does not close it
	EXPECT_TRUE(is_open(b));
}

TEST(Space, OpenMissingDeviceIsENOENT)
{
	auto sp = space::open("/nonexistent/fractos");
	ASSERT_FALSE(sp);
	EXPECT_EQ(sp.error(), errno_code(ENOENT));
	EXPECT_EQ(sp.error(), std::errc::no_such_file_or_directory);
}

TEST(Space, OpenIsCloexecAndOwnsFd)
{
	int raw;
	{
		auto sp = space::open("/dev/null");
		ASSERT_TRUE(sp) << sp.error().message();
		raw = sp->fd();
		EXPECT_TRUE(bool(*sp));
		EXPECT_EQ(::fcntl(raw, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
		EXPECT_EQ(::fcntl(raw, F_GETFL) & O_ACCMODE, O_RDWR);
		space moved = std::move(sp).value();
		EXPECT_EQ(moved.fd(), raw);
	}
	EXPECT_FALSE(is_open(raw));
}

TEST(Space, InfoOnNonFractosFdIsENOTTY)
{
	auto sp = space::open("/dev/null");
	ASSERT_TRUE(sp);
	auto info = sp->info();
	ASSERT_FALSE(info);
	EXPECT_EQ(info.error(), errno_code(ENOTTY));
}

TEST(Space, EmptySpaceFailsWithEBADF)
{
	space sp;
	EXPECT_FALSE(sp);
	EXPECT_EQ(sp.info().error(), errno_code(EBADF));
}

TEST(FdPassing, SendAndReceive)
{
	int sv[2];
	ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	unique_fd a(sv[0]), b(sv[1]);
	pipe_fds p;

	ASSERT_TRUE(send_fd(a.get(), p.w.get(), "pipe"));
	auto msg = recv_fd(b.get());
	ASSERT_TRUE(msg) << msg.error().message();
	EXPECT_EQ(msg->data, "pipe");
	ASSERT_TRUE(msg->fd);
	EXPECT_NE(msg->fd.get(), p.w.get());
	EXPECT_EQ(::fcntl(msg->fd.get(), F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);

	// The received fd is the pipe's write end.
	ASSERT_EQ(::write(msg->fd.get(), "x", 1), 1);
	char c = 0;
	ASSERT_EQ(::read(p.r.get(), &c, 1), 1);
	EXPECT_EQ(c, 'x');
}

TEST(FdPassing, EmptyDataSendsOneByte)
{
	int sv[2];
	ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	unique_fd a(sv[0]), b(sv[1]);
	pipe_fds p;
	ASSERT_TRUE(send_fd(a.get(), p.r.get()));
	auto msg = recv_fd(b.get());
	ASSERT_TRUE(msg);
	EXPECT_EQ(msg->data, std::string(1, '\0'));
	EXPECT_TRUE(msg->fd);
}

TEST(FdPassing, MessageWithoutFd)
{
	int sv[2];
	ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	unique_fd a(sv[0]), b(sv[1]);
	ASSERT_EQ(::send(a.get(), "hi", 2, 0), 2);
	auto msg = recv_fd(b.get());
	ASSERT_TRUE(msg);
	EXPECT_EQ(msg->data, "hi");
	EXPECT_FALSE(msg->fd);
}

TEST(FdPassing, TruncatedMessageIsEMSGSIZE)
{
	int sv[2];
	ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	unique_fd a(sv[0]), b(sv[1]);
	pipe_fds p;
	ASSERT_TRUE(send_fd(a.get(), p.r.get(), "0123456789"));
	auto msg = recv_fd(b.get(), 4);
	ASSERT_FALSE(msg);
	EXPECT_EQ(msg.error(), errno_code(EMSGSIZE));
}

TEST(FdPassing, PeerClosedIsEPIPE)
{
	int sv[2];
	ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	unique_fd a(sv[0]), b(sv[1]);
	a.reset();
	auto msg = recv_fd(b.get());
	ASSERT_FALSE(msg);
	EXPECT_EQ(msg.error(), errno_code(EPIPE));
	pipe_fds p;
	EXPECT_EQ(send_fd(b.get(), p.r.get()).error(), errno_code(EPIPE));
}

TEST(FdPassing, BadFdIsEBADF)
{
	int sv[2];
	ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	unique_fd a(sv[0]), b(sv[1]);
	EXPECT_EQ(send_fd(a.get(), -1).error(), errno_code(EBADF));
}
