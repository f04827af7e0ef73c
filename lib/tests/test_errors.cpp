// SPDX-License-Identifier: LGPL-2.1-or-later
// errno -> std::error_code mapping.
#include <caladan/caladan.hpp>

#include <gtest/gtest.h>

#include <cstring>

using namespace caladan;

TEST(Errors, ErrnoCodeIsSystemCategory)
{
	for (int e : {EFAULT, EINVAL, E2BIG, ENOTTY, ENOMEM, EBADF, EKEYREVOKED,
		      EOPNOTSUPP, EMFILE, ERANGE, EACCES, EINTR, ENFILE}) {
		auto ec = errno_code(e);
		EXPECT_EQ(ec.value(), e);
		EXPECT_EQ(ec.category(), std::system_category());
		EXPECT_TRUE(bool(ec));
		EXPECT_EQ(ec.message(), std::strerror(e));
	}
}

TEST(Errors, ComparesWithErrc)
{
	EXPECT_EQ(errno_code(EFAULT), std::errc::bad_address);
	EXPECT_EQ(errno_code(EINVAL), std::errc::invalid_argument);
	EXPECT_EQ(errno_code(E2BIG), std::errc::argument_list_too_long);
	EXPECT_EQ(errno_code(ENOTTY), std::errc::inappropriate_io_control_operation);
	EXPECT_EQ(errno_code(ENOMEM), std::errc::not_enough_memory);
	EXPECT_EQ(errno_code(EBADF), std::errc::bad_file_descriptor);
	EXPECT_EQ(errno_code(EOPNOTSUPP), std::errc::operation_not_supported);
	EXPECT_EQ(errno_code(EMFILE), std::errc::too_many_files_open);
	EXPECT_EQ(errno_code(ERANGE), std::errc::result_out_of_range);
	EXPECT_EQ(errno_code(EACCES), std::errc::permission_denied);
	EXPECT_EQ(errno_code(EINTR), std::errc::interrupted);
	EXPECT_NE(errno_code(EACCES), std::errc::operation_not_permitted);
}

TEST(Errors, LastErrorReadsErrno)
{
	errno = ERANGE;
	EXPECT_EQ(last_error(), errno_code(ERANGE));
}

TEST(Errors, IsRevoked)
{
	EXPECT_TRUE(is_revoked(errno_code(EKEYREVOKED)));
	EXPECT_FALSE(is_revoked(errno_code(EBADF)));
	EXPECT_FALSE(is_revoked(std::error_code{}));
}

TEST(Errors, NamesCoverTheUapiTable)
{
	struct {
		int e;
		const char *name;
	} table[] = {
		{EFAULT, "EFAULT"}, {EINVAL, "EINVAL"}, {E2BIG, "E2BIG"},
		{ENOTTY, "ENOTTY"}, {ENOMEM, "ENOMEM"}, {EBADF, "EBADF"},
		{EKEYREVOKED, "EKEYREVOKED"}, {EOPNOTSUPP, "EOPNOTSUPP"},
		{EMFILE, "EMFILE"}, {ENFILE, "ENFILE"}, {ERANGE, "ERANGE"},
		{EACCES, "EACCES"}, {EINTR, "EINTR"}, {EXDEV, "EXDEV"},
		{ENOENT, "ENOENT"}, {EPIPE, "EPIPE"}, {EMSGSIZE, "EMSGSIZE"},
		{EAGAIN, "EAGAIN"}, {ETIMEDOUT, "ETIMEDOUT"}, {ENOSPC, "ENOSPC"},
		{EPERM, "EPERM"}, {EBUSY, "EBUSY"}, {EEXIST, "EEXIST"},
		{EHOSTUNREACH, "EHOSTUNREACH"},
	};
	for (auto &t : table)
		EXPECT_STREQ(errno_name(t.e), t.name);
	EXPECT_EQ(errno_name(0), nullptr);
	EXPECT_EQ(errno_name(100000), nullptr);
}

TEST(Errors, Describe)
{
	EXPECT_EQ(describe(errno_code(EKEYREVOKED)),
		  std::string("EKEYREVOKED (") + std::strerror(EKEYREVOKED) + ")");
	auto generic = std::make_error_code(std::errc::invalid_argument);
	EXPECT_EQ(describe(generic), generic.message());
}

TEST(Perm, BitOps)
{
	EXPECT_EQ(perm::read | perm::write, perm::all);
	EXPECT_EQ(perm::all & perm::write, perm::write);
	EXPECT_EQ(~perm::read, perm::write);
	EXPECT_EQ(~perm::all, perm::none);
	EXPECT_TRUE(has(perm::all, perm::read));
	EXPECT_FALSE(has(perm::read, perm::write));
	EXPECT_TRUE(has(perm::read, perm::none));
	EXPECT_EQ(to_string(perm::all), "rw");
	EXPECT_EQ(to_string(perm::read), "r-");
	EXPECT_EQ(to_string(perm::write), "-w");
	EXPECT_EQ(to_string(perm::none), "--");
	EXPECT_EQ(std::uint32_t(perm::read), FRACTOS_PERM_READ);
	EXPECT_EQ(std::uint32_t(perm::write), FRACTOS_PERM_WRITE);
}

TEST(ObjectId, FormatAndOrder)
{
	object_id a{1, 2, 3}, b{1, 2, 4};
	EXPECT_EQ(to_string(a), "1:2:3");
	EXPECT_LT(a, b);
	EXPECT_EQ(a, (object_id{1, 2, 3}));
}

TEST(Version, MatchesHeader)
{
	EXPECT_STREQ(version(), CALADAN_VERSION);
}
