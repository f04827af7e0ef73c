// SPDX-License-Identifier: GPL-2.0-or-later
/**
 * @file meta.hpp
 * fractos-fsd's metadata: the format of its metadata volume, in memory as
 * on the device, and the checks of fsck.  No I/O here: the daemon reads
 * and writes the image, these functions encode, decode and check it (and
 * are tested on the host, adaptors/fs/tests/).
 *
 * The metadata volume (1 MiB, a volume of the block adaptor like the
 * files' extents):
 *
 *     [0, 4 KiB)                 the superblock
 *     [4 KiB + i * 512, +512)    inode i, for i < ninodes (1024)
 *
 * Every record carries a CRC-32 (zlib's) of its bytes, computed with the
 * crc field zeroed; a free inode is a record too (flags 0), so that a
 * damaged table is told from an empty one.  Integers are little-endian
 * (the format is host-endian; x86-64 and arm64 are both little-endian,
 * and a big-endian host refuses the volume: EMEDIUMTYPE).
 *
 * A file is a list of extents, each one volume of the block adaptor (the
 * paper's extent-based files), at most max_extents, in file order.  The
 * daemon makes every change durable in this order: data (FUA writes),
 * then the inode (one record, one block write, FUA), then its answer.  A
 * new extent is zeroed before an inode names it (the adaptor does not
 * erase a destroyed volume), and an unlinked file's inode is freed before
 * its volumes are destroyed: a daemon killed anywhere leaves at worst a
 * volume no inode names (an orphan, listed by fsck with the device's
 * volume list), never an inode naming a volume that is gone.
 */
#ifndef FRACTOS_FSD_META_HPP
#define FRACTOS_FSD_META_HPP

#include <caladan/fs.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace fsd {

inline constexpr std::uint32_t kVersion = 1;
inline constexpr std::size_t kSuperSize = 4096;
inline constexpr std::size_t kInodeSize = 512;
inline constexpr std::uint32_t kInodes = 1024;
/// Bytes of the metadata volume (the superblock and the inode table,
/// rounded up to the extent granule).
inline constexpr std::uint64_t kMetaSize = 1 << 20;
/// Extents are multiples of this, and at least this.
inline constexpr std::uint64_t kGranule = 1 << 20;
/// The largest extent the daemon makes.
inline constexpr std::uint64_t kExtentMax = 256ULL << 20;
inline constexpr std::uint32_t kInodeUsed = 1;

static_assert(kSuperSize + std::size_t(kInodes) * kInodeSize <= kMetaSize);

/// One extent: a volume of the block adaptor, all of it in the file.
struct extent {
	std::uint64_t volume = 0;
	std::uint64_t len = 0;

	friend bool operator==(const extent &, const extent &) = default;
};

/// An inode, decoded.
struct inode {
	std::uint32_t flags = 0;	///< kInodeUsed or 0 (free)
	std::uint64_t gen = 0;		///< +1 at every write of the record
	std::uint64_t size = 0;		///< bytes of the file
	std::uint64_t mtime_ns = 0;	///< CLOCK_REALTIME of the last change
	std::string name;
	std::vector<extent> extents;

	bool used() const noexcept { return flags & kInodeUsed; }
	/// Bytes in the extents.
	std::uint64_t capacity() const noexcept;
	/// The extent holding byte @p off and @p off's offset in it; false
	/// past the capacity.
	bool locate(std::uint64_t off, std::size_t *index, std::uint64_t *in) const noexcept;
};

/// The superblock, decoded.
struct super {
	std::uint32_t version = kVersion;
	std::uint32_t ninodes = kInodes;
	std::uint64_t meta_volume = 0;	///< the volume this image lives on
	std::uint64_t created_ns = 0;
};

/// Why a record does not decode.
enum class bad {
	none,
	magic,		///< not a record of this format
	crc,		///< damaged
	version,	///< a format this daemon does not know
	field,		///< a field out of its range (name, extents)
};
const char *to_string(bad b) noexcept;

/// Encodes @p s into @p out (kSuperSize bytes).
void encode(const super &s, std::span<std::byte, kSuperSize> out) noexcept;
/// Encodes @p ino into @p out (kInodeSize bytes).
void encode(const inode &ino, std::span<std::byte, kInodeSize> out) noexcept;
bad decode(std::span<const std::byte, kSuperSize> in, super *s);
bad decode(std::span<const std::byte, kInodeSize> in, inode *ino);

/// True if @p name may name a file: 1 to caladan::fs::name_max bytes of
/// printable ASCII (0x21-0x7e) but '/'.
bool valid_name(std::string_view name) noexcept;

/// The image of the metadata volume in memory (kMetaSize bytes).
class image {
public:
	explicit image(std::span<std::byte> bytes) noexcept : bytes_(bytes) {}

	std::span<std::byte, kSuperSize> super_bytes() const noexcept
	{
		return bytes_.subspan<0, kSuperSize>();
	}
	std::span<std::byte, kInodeSize> inode_bytes(std::uint32_t i) const noexcept
	{
		return bytes_.subspan(inode_offset(i)).first<kInodeSize>();
	}
	static std::size_t inode_offset(std::uint32_t i) noexcept
	{
		return kSuperSize + std::size_t(i) * kInodeSize;
	}

	/// A new, empty file system: the superblock and kInodes free inodes.
	void format(std::uint64_t meta_volume, std::uint64_t now_ns) noexcept;

private:
	std::span<std::byte> bytes_;
};

/// One problem fsck found.
struct problem {
	std::int64_t inode = -1;	///< -1: the superblock or the whole
	std::string what;
};

/**
 * fsck of an image: every record decodes; names are valid and unique;
 * every extent is at least one granule, a multiple of it, at most
 * kExtentMax; no volume is named twice (nor the metadata volume); the
 * size is within the capacity.  With @p volumes (the device's volume
 * ids, e.g. from fractctl blk list), also every extent's volume exists
 * and every volume of the device that is not named is reported (orphans
 * are problems of type "orphan", not damage: @p orphans counts them).
 * Decoded inodes go to @p out (ninodes entries) when it is not null.
 */
std::vector<problem> check(std::span<const std::byte> bytes, std::vector<inode> *out = nullptr,
			   const std::vector<std::uint64_t> *volumes = nullptr,
			   std::size_t *orphans = nullptr);

/**
 * The next extent to add to @p ino to hold @p need bytes in all: at least
 * what is missing, at least the granule, and as large as the file so far
 * (the capacity doubles), at most kExtentMax, rounded to the granule.
 * 0 if @p need fits already.
 */
std::uint64_t next_extent(const inode &ino, std::uint64_t need) noexcept;

} // namespace fsd

#endif // FRACTOS_FSD_META_HPP
