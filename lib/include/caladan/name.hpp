// SPDX-License-Identifier: LGPL-2.1-or-later
/**
 * @file name.hpp
 * libcaladan: the per-node name service.
 * Part of <caladan/caladan.hpp>, the header to include.
 */
#ifndef CALADAN_NAME_HPP
#define CALADAN_NAME_HPP

#include <caladan/space.hpp>

/* The library is built with -fvisibility=hidden: what is declared here
 * is its API, exported (libcaladan.map, libcaladan.symbols). */
#pragma GCC visibility push(default)

namespace caladan {

#ifdef FRACTOS_IOC_NAME_PUBLISH
/* ------------------------------------------------------------------------ */
/* Names (per-node name service)                                             */
/* ------------------------------------------------------------------------ */

/// FRACTOS_IOC_NAME_PUBLISH: publishes @p c (its object created by @p c's
/// space) under @p name; @p flags: FRACTOS_NAME_WORLD for every uid.
result<void> name_publish(const cap &c, std::string_view name, std::uint32_t flags = 0) noexcept;
/// FRACTOS_IOC_NAME_LOOKUP: a new cap in @p sp to what @p name names;
/// with FRACTOS_NAME_NODE in @p flags, asks node @p node.
result<cap> name_lookup(const space &sp, std::string_view name, std::uint32_t flags = 0,
			std::uint32_t node = 0) noexcept;
/// FRACTOS_IOC_NAME_UNPUBLISH.
result<void> name_unpublish(const space &sp, std::string_view name) noexcept;
/// The argument struct of the name operations (pointing into @p name).
fractos_name name_arg(std::string_view name, std::uint32_t cid = 0, std::uint32_t flags = 0,
		      std::uint32_t node = 0) noexcept;
#endif

} // namespace caladan

#pragma GCC visibility pop

#endif // CALADAN_NAME_HPP
