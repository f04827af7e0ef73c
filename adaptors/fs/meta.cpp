// SPDX-License-Identifier: GPL-2.0-or-later
// fractos-fsd's metadata format and fsck (meta.hpp).
#include "meta.hpp"

#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <map>
#include <set>

namespace fsd {

namespace {

/*
 * The records as stored.  Every field is naturally aligned and the
 * structs have no implicit padding (static_asserts below), so memcpy of
 * a struct is its encoding on a little-endian host.
 */
constexpr char kSuperMagic[8] = {'F', 'O', 'S', 'F', 'S', 'v', '1', '\0'};
constexpr std::uint32_t kInodeMagic = 0x4f4e4946;	// "FINO"

struct raw_super {
	char magic[8];
	std::uint32_t version;
	std::uint32_t ninodes;
	std::uint32_t inode_size;
	std::uint32_t max_extents;
	std::uint64_t meta_volume;
	std::uint64_t created_ns;
	std::uint32_t crc;
	std::uint32_t pad;
};
static_assert(sizeof(raw_super) == 48);

struct raw_extent {
	std::uint64_t volume;
	std::uint64_t len;
};

struct raw_inode {
	std::uint32_t magic;
	std::uint32_t flags;
	std::uint64_t gen;
	std::uint64_t size;
	std::uint64_t mtime_ns;
	std::uint32_t nextents;
	std::uint32_t namelen;
	char name[caladan::fs::name_max + 1];
	raw_extent ext[caladan::fs::max_extents];
	std::uint32_t crc;
	std::uint32_t pad;
};
static_assert(sizeof(raw_inode) == 416 && sizeof(raw_inode) <= kInodeSize);
static_assert(std::endian::native == std::endian::little,
	      "the metadata format is little-endian");

/* CRC-32 of @n bytes at @p, the crc field (at @crc_off) taken as zero. */
std::uint32_t record_crc(const std::byte *p, std::size_t n, std::size_t crc_off)
{
	std::uint32_t zero = 0;
	uLong c = crc32(0L, Z_NULL, 0);

	c = crc32(c, reinterpret_cast<const Bytef *>(p), uInt(crc_off));
	c = crc32(c, reinterpret_cast<const Bytef *>(&zero), sizeof(zero));
	c = crc32(c, reinterpret_cast<const Bytef *>(p + crc_off + sizeof(zero)),
		  uInt(n - crc_off - sizeof(zero)));
	return std::uint32_t(c);
}

} // namespace

const char *to_string(bad b) noexcept
{
	switch (b) {
	case bad::none: return "ok";
	case bad::magic: return "bad magic";
	case bad::crc: return "checksum mismatch";
	case bad::version: return "unknown version";
	case bad::field: return "field out of range";
	}
	return "?";
}

std::uint64_t inode::capacity() const noexcept
{
	std::uint64_t c = 0;

	for (const extent &e : extents)
		c += e.len;
	return c;
}

bool inode::locate(std::uint64_t off, std::size_t *index, std::uint64_t *in) const noexcept
{
	for (std::size_t i = 0; i < extents.size(); i++) {
		if (off < extents[i].len) {
			*index = i;
			*in = off;
			return true;
		}
		off -= extents[i].len;
	}
	return false;
}

bool valid_name(std::string_view name) noexcept
{
	if (name.empty() || name.size() > caladan::fs::name_max)
		return false;
	return std::all_of(name.begin(), name.end(),
			   [](char c) { return c >= 0x21 && c <= 0x7e && c != '/'; });
}

void encode(const super &s, std::span<std::byte, kSuperSize> out) noexcept
{
	raw_super r{};

	std::memcpy(r.magic, kSuperMagic, sizeof(r.magic));
	r.version = s.version;
	r.ninodes = s.ninodes;
	r.inode_size = kInodeSize;
	r.max_extents = caladan::fs::max_extents;
	r.meta_volume = s.meta_volume;
	r.created_ns = s.created_ns;
	std::memset(out.data(), 0, out.size());
	std::memcpy(out.data(), &r, sizeof(r));
	r.crc = record_crc(out.data(), sizeof(r), offsetof(raw_super, crc));
	std::memcpy(out.data(), &r, sizeof(r));
}

void encode(const inode &ino, std::span<std::byte, kInodeSize> out) noexcept
{
	raw_inode r{};

	r.magic = kInodeMagic;
	r.flags = ino.flags;
	r.gen = ino.gen;
	r.size = ino.size;
	r.mtime_ns = ino.mtime_ns;
	r.nextents = std::uint32_t(std::min<std::size_t>(ino.extents.size(),
							 caladan::fs::max_extents));
	r.namelen = std::uint32_t(std::min<std::size_t>(ino.name.size(), caladan::fs::name_max));
	std::memcpy(r.name, ino.name.data(), r.namelen);
	for (std::uint32_t i = 0; i < r.nextents; i++)
		r.ext[i] = {ino.extents[i].volume, ino.extents[i].len};
	std::memset(out.data(), 0, out.size());
	std::memcpy(out.data(), &r, sizeof(r));
	r.crc = record_crc(out.data(), sizeof(r), offsetof(raw_inode, crc));
	std::memcpy(out.data(), &r, sizeof(r));
}

bad decode(std::span<const std::byte, kSuperSize> in, super *s)
{
	raw_super r;

	std::memcpy(&r, in.data(), sizeof(r));
	if (std::memcmp(r.magic, kSuperMagic, sizeof(r.magic)))
		return bad::magic;
	if (r.crc != record_crc(in.data(), sizeof(r), offsetof(raw_super, crc)))
		return bad::crc;
	if (r.version != kVersion)
		return bad::version;
	if (r.ninodes != kInodes || r.inode_size != kInodeSize ||
	    r.max_extents != caladan::fs::max_extents)
		return bad::field;
	s->version = r.version;
	s->ninodes = r.ninodes;
	s->meta_volume = r.meta_volume;
	s->created_ns = r.created_ns;
	return bad::none;
}

bad decode(std::span<const std::byte, kInodeSize> in, inode *ino)
{
	raw_inode r;

	std::memcpy(&r, in.data(), sizeof(r));
	if (r.magic != kInodeMagic)
		return bad::magic;
	if (r.crc != record_crc(in.data(), sizeof(r), offsetof(raw_inode, crc)))
		return bad::crc;
	if (r.flags & ~kInodeUsed || r.nextents > caladan::fs::max_extents ||
	    r.namelen > caladan::fs::name_max)
		return bad::field;
	ino->flags = r.flags;
	ino->gen = r.gen;
	ino->size = r.size;
	ino->mtime_ns = r.mtime_ns;
	ino->name.assign(r.name, r.namelen);
	ino->extents.clear();
	for (std::uint32_t i = 0; i < r.nextents; i++)
		ino->extents.push_back({r.ext[i].volume, r.ext[i].len});
	return bad::none;
}

void image::format(std::uint64_t meta_volume, std::uint64_t now_ns) noexcept
{
	super s;

	s.meta_volume = meta_volume;
	s.created_ns = now_ns;
	std::fill(bytes_.begin(), bytes_.end(), std::byte{0});
	encode(s, super_bytes());
	for (std::uint32_t i = 0; i < kInodes; i++)
		encode(inode{}, inode_bytes(i));
}

std::vector<problem> check(std::span<const std::byte> bytes, std::vector<inode> *out,
			   const std::vector<std::uint64_t> *volumes, std::size_t *orphans)
{
	std::vector<problem> p;
	std::map<std::string, std::uint32_t, std::less<>> names;
	std::map<std::uint64_t, std::uint32_t> named;	// volume -> inode
	super s;
	bad b;

	if (orphans)
		*orphans = 0;
	if (out)
		out->assign(kInodes, inode{});
	if (bytes.size() < kMetaSize) {
		p.push_back({-1, "the metadata volume is smaller than 1 MiB"});
		return p;
	}
	image img(std::span<std::byte>(const_cast<std::byte *>(bytes.data()), bytes.size()));
	b = decode(img.super_bytes(), &s);
	if (b != bad::none) {
		p.push_back({-1, std::string("superblock: ") + to_string(b)});
		return p;
	}
	for (std::uint32_t i = 0; i < kInodes; i++) {
		inode ino;

		b = decode(img.inode_bytes(i), &ino);
		if (b != bad::none) {
			p.push_back({i, to_string(b)});
			continue;
		}
		if (!ino.used()) {
			if (!ino.extents.empty() || ino.size || !ino.name.empty())
				p.push_back({i, "a free inode with contents"});
			if (out)
				(*out)[i] = std::move(ino);
			continue;
		}
		if (!valid_name(ino.name))
			p.push_back({i, "invalid name"});
		else if (!names.emplace(ino.name, i).second)
			p.push_back({i, "name \"" + ino.name + "\" also in inode " +
					    std::to_string(names.find(ino.name)->second)});
		for (const extent &e : ino.extents) {
			if (e.len < kGranule || e.len % kGranule || e.len > kExtentMax)
				p.push_back({i, "extent of volume " + std::to_string(e.volume) +
						    ": length " + std::to_string(e.len)});
			if (e.volume == s.meta_volume)
				p.push_back({i, "extent on the metadata volume"});
			auto [it, fresh] = named.emplace(e.volume, i);
			if (!fresh)
				p.push_back({i, "volume " + std::to_string(e.volume) +
						    " also in inode " + std::to_string(it->second)});
			if (volumes && std::find(volumes->begin(), volumes->end(), e.volume) ==
					       volumes->end())
				p.push_back({i, "volume " + std::to_string(e.volume) +
						    " is not on the device"});
		}
		if (ino.size > ino.capacity())
			p.push_back({i, "size " + std::to_string(ino.size) + " past capacity " +
					    std::to_string(ino.capacity())});
		if (out)
			(*out)[i] = std::move(ino);
	}
	if (volumes) {
		for (std::uint64_t v : *volumes) {
			if (v == s.meta_volume || named.count(v))
				continue;
			p.push_back({-1, "orphan: volume " + std::to_string(v) +
						 " is in no inode"});
			if (orphans)
				++*orphans;
		}
	}
	return p;
}

std::uint64_t next_extent(const inode &ino, std::uint64_t need) noexcept
{
	std::uint64_t cap = ino.capacity(), len;

	if (need <= cap)
		return 0;
	len = std::max({need - cap, kGranule, cap});
	len = std::min(len, kExtentMax);
	return (len + kGranule - 1) / kGranule * kGranule;
}

} // namespace fsd
