// SPDX-License-Identifier: GPL-2.0-or-later
// Host tests of fractos-fsd's metadata format and fsck (meta.hpp).
#include "../meta.hpp"

#include <gtest/gtest.h>

#include <vector>

using namespace fsd;

namespace {

struct meta : ::testing::Test {
	std::vector<std::byte> bytes = std::vector<std::byte>(kMetaSize);
	image img{bytes};

	void SetUp() override { img.format(7, 1234); }

	void put(std::uint32_t i, const inode &ino) { encode(ino, img.inode_bytes(i)); }

	static inode file(const char *name, std::uint64_t size, std::vector<extent> ext)
	{
		inode i;
		i.flags = kInodeUsed;
		i.name = name;
		i.size = size;
		i.extents = std::move(ext);
		return i;
	}
};

} // namespace

TEST_F(meta, FormatIsClean)
{
	std::vector<inode> out;
	EXPECT_TRUE(check(bytes, &out).empty());
	ASSERT_EQ(out.size(), kInodes);
	for (const inode &i : out)
		EXPECT_FALSE(i.used());
	super s;
	ASSERT_EQ(decode(img.super_bytes(), &s), bad::none);
	EXPECT_EQ(s.meta_volume, 7U);
	EXPECT_EQ(s.created_ns, 1234U);
}

TEST_F(meta, InodeRoundTrip)
{
	inode a = file("a.dat", 3 << 20, {{11, 1 << 20}, {12, 2 << 20}});
	a.gen = 9;
	a.mtime_ns = 42;
	put(3, a);
	inode b;
	ASSERT_EQ(decode(img.inode_bytes(3), &b), bad::none);
	EXPECT_EQ(b.name, "a.dat");
	EXPECT_EQ(b.size, 3U << 20);
	EXPECT_EQ(b.gen, 9U);
	EXPECT_EQ(b.mtime_ns, 42U);
	EXPECT_EQ(b.extents, a.extents);
	EXPECT_EQ(b.capacity(), 3U << 20);
	EXPECT_TRUE(check(bytes).empty());
}

TEST_F(meta, EveryFlippedByteIsCaught)
{
	put(0, file("x", 10, {{20, 1 << 20}}));
	/* Any single byte of the record's fields changed: CRC mismatch. */
	for (std::size_t off = 4; off < 416; off += 13) {
		std::vector<std::byte> copy = bytes;
		copy[image::inode_offset(0) + off] ^= std::byte{0x40};
		auto p = check(copy);
		ASSERT_EQ(p.size(), 1U) << "byte " << off;
		EXPECT_EQ(p[0].inode, 0);
	}
	std::vector<std::byte> copy = bytes;
	copy[20] ^= std::byte{1};	/* the superblock */
	auto p = check(copy);
	ASSERT_EQ(p.size(), 1U);
	EXPECT_EQ(p[0].inode, -1);
}

TEST_F(meta, ZeroedTableIsDamageNotEmpty)
{
	std::fill(bytes.begin() + kSuperSize, bytes.end(), std::byte{0});
	EXPECT_EQ(check(bytes).size(), std::size_t(kInodes));
}

TEST_F(meta, DuplicatesAndRanges)
{
	put(0, file("same", 0, {{30, 1 << 20}}));
	put(1, file("same", 0, {}));
	put(2, file("v", 0, {{30, 1 << 20}}));		/* volume twice */
	put(3, file("big", (2 << 20) + 1, {{31, 2 << 20}}));	/* size past capacity */
	put(4, file("odd", 0, {{32, 4096}}));		/* extent under a granule */
	put(5, file("meta", 0, {{7, 1 << 20}}));		/* the metadata volume */
	put(6, file("bad/name", 0, {}));
	auto p = check(bytes);
	std::vector<std::int64_t> where;
	for (const problem &x : p)
		where.push_back(x.inode);
	EXPECT_EQ(where, (std::vector<std::int64_t>{1, 2, 3, 4, 5, 6}));
}

TEST_F(meta, MissingAndOrphanVolumes)
{
	put(0, file("a", 0, {{40, 1 << 20}, {41, 1 << 20}}));
	std::vector<std::uint64_t> vols{7, 40, 99};
	std::size_t orphans = 0;
	auto p = check(bytes, nullptr, &vols, &orphans);
	ASSERT_EQ(p.size(), 2U);
	EXPECT_EQ(orphans, 1U);
	EXPECT_NE(p[0].what.find("41"), std::string::npos);
	EXPECT_NE(p[1].what.find("orphan"), std::string::npos);
}

TEST_F(meta, FreeInodeWithContents)
{
	inode i = file("ghost", 0, {});
	i.flags = 0;
	put(9, i);
	auto p = check(bytes);
	ASSERT_EQ(p.size(), 1U);
	EXPECT_EQ(p[0].inode, 9);
}

TEST(meta_names, Valid)
{
	EXPECT_TRUE(valid_name("a"));
	EXPECT_TRUE(valid_name(std::string(caladan::fs::name_max, 'x')));
	EXPECT_FALSE(valid_name(""));
	EXPECT_FALSE(valid_name(std::string(caladan::fs::name_max + 1, 'x')));
	EXPECT_FALSE(valid_name("a/b"));
	EXPECT_FALSE(valid_name("a b"));
	EXPECT_FALSE(valid_name(std::string("a\0b", 3)));
}

TEST(meta_extents, GrowthDoublesWithinBounds)
{
	inode i;
	EXPECT_EQ(next_extent(i, 0), 0U);
	EXPECT_EQ(next_extent(i, 1), kGranule);
	i.extents.push_back({1, kGranule});
	EXPECT_EQ(next_extent(i, kGranule), 0U);
	EXPECT_EQ(next_extent(i, kGranule + 1), kGranule);	/* as large as the file */
	i.extents.push_back({2, kGranule});
	EXPECT_EQ(next_extent(i, 3 * kGranule), 2 * kGranule);
	EXPECT_EQ(next_extent(i, 10 * kGranule + 5), 9 * kGranule);	/* what is missing */
	i.extents.push_back({3, kExtentMax});
	EXPECT_EQ(next_extent(i, 4 * kExtentMax), kExtentMax);	/* capped */
}

TEST(meta_extents, Locate)
{
	inode i;
	i.extents = {{1, kGranule}, {2, 2 * kGranule}};
	std::size_t idx;
	std::uint64_t in;
	ASSERT_TRUE(i.locate(0, &idx, &in));
	EXPECT_EQ(idx, 0U);
	ASSERT_TRUE(i.locate(kGranule, &idx, &in));
	EXPECT_EQ(idx, 1U);
	EXPECT_EQ(in, 0U);
	ASSERT_TRUE(i.locate(3 * kGranule - 1, &idx, &in));
	EXPECT_EQ(in, 2 * kGranule - 1);
	EXPECT_FALSE(i.locate(3 * kGranule, &idx, &in));
}
