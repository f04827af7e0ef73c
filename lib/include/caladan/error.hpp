// SPDX-License-Identifier: LGPL-2.1-or-later
/**
 * @file error.hpp
 * libcaladan: errors as values (std::error_code with the kernel's errno) and
 * result<T>.
 * Part of <caladan/caladan.hpp>, the header to include.
 */
#ifndef CALADAN_ERROR_HPP
#define CALADAN_ERROR_HPP

#include <linux/fractos.h>

#include <array>
#include <cassert>
#include <cerrno>
#include <compare>
#include <cstddef>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

/* The library is built with -fvisibility=hidden: what is declared here
 * is its API, exported (libcaladan.map, libcaladan.symbols). */
#pragma GCC visibility push(default)

namespace caladan {

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

/// The error_code for errno value @p e: {e, std::system_category()}.
/// It compares equal to the matching std::errc (e.g. std::errc::permission_denied).
inline std::error_code errno_code(int e) noexcept
{
	return {e, std::system_category()};
}

/// errno_code(errno): the error of the syscall that just failed.
inline std::error_code last_error() noexcept
{
	return errno_code(errno);
}

/// The symbolic name of an errno value ("EKEYREVOKED"), or nullptr if the
/// library does not know it.  Covers every errno of the fractos errno table.
const char *errno_name(int e) noexcept;

/// "EKEYREVOKED (Key has been revoked)" for a system_category code, else
/// ec.message().
std::string describe(std::error_code ec);

/// True if @p ec is EKEYREVOKED (the capability's object was revoked).
inline bool is_revoked(std::error_code ec) noexcept
{
	return ec == errno_code(EKEYREVOKED);
}

/**
 * result<T>: a T or a non-zero std::error_code (a small std::expected).
 *
 * Constructible implicitly from a T (success) or from a std::error_code
 * (failure; the code must be non-zero).  value() throws std::system_error on
 * an error result; operator* and operator-> do not check (asserted in debug
 * builds).  error() returns the empty std::error_code on success.
 */
template <class T>
class [[nodiscard]] result {
	static_assert(!std::is_reference_v<T>, "result<T&> is not supported");
	static_assert(!std::is_same_v<std::remove_cv_t<T>, std::error_code>,
		      "result<std::error_code> would be ambiguous");

public:
	using value_type = T;

	result(const T &v) requires std::is_copy_constructible_v<T>
		: v_(std::in_place_index<0>, v) {}
	result(T &&v) noexcept(std::is_nothrow_move_constructible_v<T>)
		: v_(std::in_place_index<0>, std::move(v)) {}
	result(std::error_code ec) noexcept : v_(std::in_place_index<1>, ec)
	{
		assert(ec && "result<T>: an error result needs a non-zero code");
	}

	/// True if this holds a value.
	bool has_value() const noexcept { return v_.index() == 0; }
	explicit operator bool() const noexcept { return has_value(); }

	/// The value; throws std::system_error(error()) if there is none.
	T &value() &
	{
		check();
		return *std::get_if<0>(&v_);
	}
	const T &value() const &
	{
		check();
		return *std::get_if<0>(&v_);
	}
	T &&value() &&
	{
		check();
		return std::move(*std::get_if<0>(&v_));
	}

	/// The value, unchecked.
	T &operator*() & noexcept { assert(has_value()); return *std::get_if<0>(&v_); }
	const T &operator*() const & noexcept { assert(has_value()); return *std::get_if<0>(&v_); }
	T &&operator*() && noexcept { assert(has_value()); return std::move(*std::get_if<0>(&v_)); }
	T *operator->() noexcept { assert(has_value()); return std::get_if<0>(&v_); }
	const T *operator->() const noexcept { assert(has_value()); return std::get_if<0>(&v_); }

	/// The value if there is one, else @p other.
	template <class U>
	T value_or(U &&other) const & requires std::is_copy_constructible_v<T>
	{
		return has_value() ? *std::get_if<0>(&v_) : static_cast<T>(std::forward<U>(other));
	}
	template <class U>
	T value_or(U &&other) &&
	{
		return has_value() ? std::move(*std::get_if<0>(&v_))
				   : static_cast<T>(std::forward<U>(other));
	}

	/// The error, or the empty std::error_code if this holds a value.
	std::error_code error() const noexcept
	{
		const std::error_code *ec = std::get_if<1>(&v_);
		return ec ? *ec : std::error_code{};
	}

private:
	void check() const
	{
		if (!has_value())
			throw std::system_error(*std::get_if<1>(&v_));
	}

	std::variant<T, std::error_code> v_;
};

/// result<void>: success, or a non-zero std::error_code.
template <>
class [[nodiscard]] result<void> {
public:
	using value_type = void;

	/// Success.
	result() noexcept = default;
	/// Failure; @p ec must be non-zero.
	result(std::error_code ec) noexcept : ec_(ec)
	{
		assert(ec && "result<void>: an error result needs a non-zero code");
	}

	bool has_value() const noexcept { return !ec_; }
	explicit operator bool() const noexcept { return has_value(); }
	/// Throws std::system_error(error()) on failure, else does nothing.
	void value() const
	{
		if (ec_)
			throw std::system_error(ec_);
	}
	std::error_code error() const noexcept { return ec_; }

private:
	std::error_code ec_;
};

} // namespace caladan

#pragma GCC visibility pop

#endif // CALADAN_ERROR_HPP
