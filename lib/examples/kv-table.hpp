// SPDX-License-Identifier: 0BSD
/*
 * The key-value example's table: fixed slots in whole pages, so that the
 * pages themselves can change hands (steal, grant) and be mapped by the
 * next owner as they are.  No pointers inside: any mapping reads it.
 */
#ifndef KV_TABLE_HPP
#define KV_TABLE_HPP

#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <cstring>
#include <string_view>

namespace kv {

constexpr std::size_t table_bytes = 2 * 4096;
constexpr std::uint64_t magic = 0x6b762d7461626c65ULL; // "kv-table"

struct slot {
	char key[32];
	char value[96];
};

struct table {
	std::uint64_t magic;
	std::uint32_t count;
	std::uint32_t pad;
	slot slots[(table_bytes - 16) / sizeof(slot)];

	// Set @key to @value (each cut to its slot's size); false when full.
	bool put(std::string_view key, std::string_view value) noexcept
	{
		std::uint32_t i = 0;
		while (i < count && key != slots[i].key)
			i++;
		if (i == sizeof(slots) / sizeof(slots[0]))
			return false;
		slot &s = slots[i];
		std::memset(&s, 0, sizeof(s));
		std::memcpy(s.key, key.data(), std::min(key.size(), sizeof(s.key) - 1));
		std::memcpy(s.value, value.data(), std::min(value.size(), sizeof(s.value) - 1));
		if (i == count)
			count++;
		return true;
	}
};

static_assert(sizeof(table) <= table_bytes);

// The standby's two Requests: its contact (a note, maybe with the
// primary's table stolen) and its hand-over inbox (a granted table).
constexpr std::uint64_t tag_contact = 1;
constexpr std::uint64_t tag_handover = 2;

} // namespace kv

#endif
