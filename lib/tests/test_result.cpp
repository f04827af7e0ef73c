// SPDX-License-Identifier: LGPL-2.1-or-later
// result<T> and result<void> semantics.
#include <caladan/caladan.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <string>

using caladan::errno_code;
using caladan::result;

namespace {

result<int> half(int v)
{
	if (v % 2)
		return errno_code(EINVAL);
	return v / 2;
}

struct move_only {
	explicit move_only(int v) : p(std::make_unique<int>(v)) {}
	std::unique_ptr<int> p;
};

} // namespace

TEST(Result, HoldsValue)
{
	auto r = half(8);
	ASSERT_TRUE(r.has_value());
	EXPECT_TRUE(bool(r));
	EXPECT_EQ(r.value(), 4);
	EXPECT_EQ(*r, 4);
	EXPECT_FALSE(r.error());
	EXPECT_EQ(r.error(), std::error_code{});
}

TEST(Result, HoldsError)
{
	auto r = half(3);
	ASSERT_FALSE(r.has_value());
	EXPECT_FALSE(bool(r));
	EXPECT_EQ(r.error(), errno_code(EINVAL));
	EXPECT_EQ(r.error(), std::errc::invalid_argument);
	EXPECT_EQ(r.error().category(), std::system_category());
}

TEST(Result, ValueThrowsSystemErrorOnError)
{
	auto r = half(3);
	try {
		(void)r.value();
		FAIL() << "value() did not throw";
	} catch (const std::system_error &e) {
		EXPECT_EQ(e.code(), errno_code(EINVAL));
	}
	const auto &cr = r;
	EXPECT_THROW((void)cr.value(), std::system_error);
	EXPECT_THROW((void)std::move(r).value(), std::system_error);
}

TEST(Result, ValueOr)
{
	EXPECT_EQ(half(8).value_or(-1), 4);
	EXPECT_EQ(half(7).value_or(-1), -1);
	result<std::string> s = errno_code(ENOENT);
	EXPECT_EQ(std::move(s).value_or("none"), "none");
}

TEST(Result, MoveOnlyValue)
{
	result<move_only> r = move_only(5);
	ASSERT_TRUE(r);
	EXPECT_EQ(*r->p, 5);
	move_only m = std::move(r).value();
	EXPECT_EQ(*m.p, 5);

	result<move_only> r2 = move_only(6);
	result<move_only> r3 = std::move(r2);
	EXPECT_EQ(*r3->p, 6);
}

TEST(Result, ArrowAndMutation)
{
	result<std::string> r = std::string("abc");
	EXPECT_EQ(r->size(), 3u);
	*r += "d";
	EXPECT_EQ(r.value(), "abcd");
}

TEST(Result, CopyableValueCopies)
{
	result<std::string> a = std::string("x");
	result<std::string> b = a;
	*b += "y";
	EXPECT_EQ(*a, "x");
	EXPECT_EQ(*b, "xy");
}

TEST(Result, ErrorToValueAssignment)
{
	result<int> r = errno_code(EBADF);
	EXPECT_FALSE(r);
	r = 3;
	ASSERT_TRUE(r);
	EXPECT_EQ(*r, 3);
	r = errno_code(EMFILE);
	EXPECT_EQ(r.error(), std::errc::too_many_files_open);
}

TEST(ResultVoid, SuccessAndFailure)
{
	result<void> ok;
	EXPECT_TRUE(ok.has_value());
	EXPECT_TRUE(bool(ok));
	EXPECT_FALSE(ok.error());
	EXPECT_NO_THROW(ok.value());

	result<void> bad = errno_code(EKEYREVOKED);
	EXPECT_FALSE(bad.has_value());
	EXPECT_EQ(bad.error().value(), EKEYREVOKED);
	EXPECT_THROW(bad.value(), std::system_error);
}

TEST(ResultVoid, ReturnedFromFunction)
{
	auto f = [](bool fail) -> result<void> {
		if (fail)
			return errno_code(EACCES);
		return {};
	};
	EXPECT_TRUE(f(false));
	EXPECT_EQ(f(true).error(), std::errc::permission_denied);
}

#ifndef NDEBUG
TEST(ResultDeathTest, ZeroErrorCodeAsserts)
{
	EXPECT_DEATH({ result<int> r = std::error_code{}; (void)r; }, "non-zero");
}
#endif
