// SPDX-License-Identifier: LGPL-2.1-or-later
/**
 * @file sysfs.hpp
 * Reading the fractos module's sysfs files: whether it is loaded, its
 * version and parameters, and the live-object counters.  Plain file reads,
 * no ioctls; meant for tools and tests.
 */
#ifndef CALADAN_SYSFS_HPP
#define CALADAN_SYSFS_HPP

#include <caladan/caladan.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

/* The library is built with -fvisibility=hidden: what is declared here
 * is its API, exported (libcaladan.map, libcaladan.symbols). */
#pragma GCC visibility push(default)

namespace caladan::sysfs {

/// /sys/module/fractos: present while the module is loaded.
inline constexpr const char *module_dir = "/sys/module/fractos";
/// The live-object counters, one decimal file each.
inline constexpr const char *live_dir = "/sys/class/misc/fractos/live";

/// The live-object counters (see "Live-object counters" in the uAPI).
struct live_counters {
	std::uint64_t spaces = 0;
	std::uint64_t objects = 0;
	std::uint64_t caps = 0;
	std::uint64_t memories = 0;
	std::uint64_t pinned_pages = 0;
	std::uint64_t capfds = 0;
	std::uint64_t requests = 0;
	std::uint64_t messages = 0;
	std::uint64_t names = 0;
	std::uint64_t peers = 0;
	std::uint64_t conns = 0;
	std::uint64_t exports = 0;
	std::uint64_t proxies = 0;
	std::uint64_t grants = 0;
	std::uint64_t monitors = 0;
};

/// One counter: its file name under live_dir and its field.
struct live_counter_field {
	const char *name;
	std::uint64_t live_counters::*field;
};

/// Every counter, in the uAPI's order.
inline constexpr std::array<live_counter_field, 15> live_counter_fields{{
	{"spaces", &live_counters::spaces},
	{"objects", &live_counters::objects},
	{"caps", &live_counters::caps},
	{"memories", &live_counters::memories},
	{"pinned_pages", &live_counters::pinned_pages},
	{"capfds", &live_counters::capfds},
	{"requests", &live_counters::requests},
	{"messages", &live_counters::messages},
	{"names", &live_counters::names},
	{"peers", &live_counters::peers},
	{"conns", &live_counters::conns},
	{"exports", &live_counters::exports},
	{"proxies", &live_counters::proxies},
	{"grants", &live_counters::grants},
	{"monitors", &live_counters::monitors},
}};

/// The contents of a small text file, trailing newline removed.
result<std::string> read_string(const std::string &path);
/// A file holding one unsigned decimal number (EINVAL if it does not).
result<std::uint64_t> read_u64(const std::string &path);

/// True if @p dir (default: module_dir) exists.
bool module_loaded(const char *dir = module_dir) noexcept;
/// <module_dir>/version.
result<std::string> module_version(const char *dir = module_dir);
/// <module_dir>/parameters/<name>, e.g. "node_id", "epoch", "max_caps".
result<std::uint64_t> module_param(const std::string &name, const char *dir = module_dir);

/// Every file under <@p dir>/parameters: (name, contents), sorted by name.
result<std::vector<std::pair<std::string, std::string>>> module_params(const char *dir = module_dir);

/// Reads every counter under @p dir; fails on the first unreadable one.
result<live_counters> read_live_counters(const char *dir = live_dir);

} // namespace caladan::sysfs

#pragma GCC visibility pop

#endif // CALADAN_SYSFS_HPP
