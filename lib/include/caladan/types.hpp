// SPDX-License-Identifier: LGPL-2.1-or-later
/**
 * @file types.hpp
 * libcaladan: the value types (rights, object types and ids, space and
 * capability info).
 * Part of <caladan/caladan.hpp>, the header to include.
 */
#ifndef CALADAN_TYPES_HPP
#define CALADAN_TYPES_HPP

#include <caladan/error.hpp>

/* The library is built with -fvisibility=hidden: what is declared here
 * is its API, exported (libcaladan.map, libcaladan.symbols). */
#pragma GCC visibility push(default)

namespace caladan {

/* ------------------------------------------------------------------------ */
/* Value types                                                               */
/* ------------------------------------------------------------------------ */

/// Memory rights: FRACTOS_PERM_* as a bit-mask type.
enum class perm : std::uint32_t {
	none = 0,
	read = FRACTOS_PERM_READ,
	write = FRACTOS_PERM_WRITE,
	all = FRACTOS_PERM_ALL,
};

constexpr perm operator|(perm a, perm b) noexcept
{
	return perm(std::uint32_t(a) | std::uint32_t(b));
}
constexpr perm operator&(perm a, perm b) noexcept
{
	return perm(std::uint32_t(a) & std::uint32_t(b));
}
constexpr perm operator~(perm a) noexcept
{
	return perm(~std::uint32_t(a) & FRACTOS_PERM_ALL);
}
/// True if every bit of @p want is in @p have.
constexpr bool has(perm have, perm want) noexcept
{
	return (have & want) == want;
}

/// "rw", "r-", "-w" or "--" (unknown bits are ignored).
std::string to_string(perm p);

/// Object types (fractos_cap_info.type).
enum class obj_type : std::uint32_t {
	none = FRACTOS_OBJ_NONE,
	memory = FRACTOS_OBJ_MEMORY,
	request = FRACTOS_OBJ_REQUEST,
};

/// "none", "memory", "request" or "unknown".
const char *to_string(obj_type t) noexcept;

/// The cluster-wide name of an object: (node, epoch, id).
struct object_id {
	std::uint32_t node = 0;
	std::uint32_t epoch = 0;
	std::uint64_t id = 0;

	friend constexpr auto operator<=>(const object_id &, const object_id &) = default;
};

/// "node:epoch:id", the format of the capability fds' fdinfo.
std::string to_string(const object_id &oid);

/// FRACTOS_IOC_SPACE_INFO output.
struct space_info {
	std::uint32_t abi_version = 0; ///< FRACTOS_ABI_VERSION of the module
	std::uint32_t node = 0;        ///< this node's id (module param node_id)
	std::uint32_t epoch = 0;       ///< changes at every module load
	std::uint32_t max_caps = 0;    ///< per-space capability limit
	std::uint32_t ncaps = 0;       ///< capabilities held by this space now
};

/// FRACTOS_IOC_CAP_INFO output.
struct cap_info {
	obj_type type = obj_type::none;
	perm perms = perm::none;
	std::uint64_t offset = 0;  ///< start of the view in the underlying memory
	std::uint64_t len = 0;     ///< length of the view
	object_id oid;
	std::uint32_t flags = 0;   ///< FRACTOS_INFO_*
	std::uint32_t depth = 0;   ///< revocation-tree depth (0: a root)

	bool revoked() const noexcept { return flags & FRACTOS_INFO_REVOKED; }
	bool revtree() const noexcept { return flags & FRACTOS_INFO_REVTREE; }
	bool owned() const noexcept { return flags & FRACTOS_INFO_OWNED; }
};

} // namespace caladan

#pragma GCC visibility pop

#endif // CALADAN_TYPES_HPP
