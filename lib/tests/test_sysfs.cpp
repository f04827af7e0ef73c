// SPDX-License-Identifier: LGPL-2.1-or-later
// sysfs readers, against a fake tree in a temporary directory.
#include <caladan/sysfs.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

using namespace caladan;
namespace fs = std::filesystem;

namespace {

class Sysfs : public ::testing::Test {
protected:
	fs::path root;

	void SetUp() override
	{
		std::string tmpl = (fs::temp_directory_path() / "caladan-sysfs-XXXXXX").string();
		ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
		root = tmpl;
		fs::create_directories(root / "module/parameters");
		fs::create_directories(root / "live");
		put("module/version", "0.1.0\n");
		put("module/parameters/node_id", "3\n");
		put("module/parameters/epoch", "4000000000\n");
		std::uint64_t v = 10;
		for (const auto &f : sysfs::live_counter_fields)
			put(std::string("live/") + f.name, std::to_string(v++) + "\n");
	}
	void TearDown() override { fs::remove_all(root); }

	void put(const std::string &rel, const std::string &content)
	{
		std::ofstream(root / rel) << content;
	}
	std::string at(const std::string &rel) const { return (root / rel).string(); }
};

} // namespace

TEST_F(Sysfs, ModuleLoadedAndVersion)
{
	EXPECT_TRUE(sysfs::module_loaded(at("module").c_str()));
	EXPECT_FALSE(sysfs::module_loaded(at("nope").c_str()));
	EXPECT_FALSE(sysfs::module_loaded(at("module/version").c_str()));
	auto v = sysfs::module_version(at("module").c_str());
	ASSERT_TRUE(v);
	EXPECT_EQ(*v, "0.1.0");
}

TEST_F(Sysfs, ModuleParams)
{
	EXPECT_EQ(sysfs::module_param("node_id", at("module").c_str()).value(), 3u);
	EXPECT_EQ(sysfs::module_param("epoch", at("module").c_str()).value(), 4000000000u);
	EXPECT_EQ(sysfs::module_param("missing", at("module").c_str()).error(),
		  errno_code(ENOENT));
}

TEST_F(Sysfs, AllModuleParams)
{
	auto p = sysfs::module_params(at("module").c_str());
	ASSERT_TRUE(p) << p.error().message();
	ASSERT_EQ(p->size(), 2u);
	EXPECT_EQ((*p)[0], (std::pair<std::string, std::string>{"epoch", "4000000000"}));
	EXPECT_EQ((*p)[1], (std::pair<std::string, std::string>{"node_id", "3"}));
	EXPECT_EQ(sysfs::module_params(at("nope").c_str()).error(), errno_code(ENOENT));
}

TEST_F(Sysfs, LiveCounters)
{
	auto c = sysfs::read_live_counters(at("live").c_str());
	ASSERT_TRUE(c) << c.error().message();
	EXPECT_EQ(c->spaces, 10u);
	EXPECT_EQ(c->objects, 11u);
	EXPECT_EQ(c->caps, 12u);
	EXPECT_EQ(c->memories, 13u);
	EXPECT_EQ(c->pinned_pages, 14u);
	EXPECT_EQ(c->capfds, 15u);
}

TEST_F(Sysfs, MissingCounterFails)
{
	fs::remove(root / "live/capfds");
	EXPECT_EQ(sysfs::read_live_counters(at("live").c_str()).error(), errno_code(ENOENT));
}

TEST_F(Sysfs, MalformedNumberIsEINVAL)
{
	for (const char *bad : {"-1\n", "12x\n", "\n", "99999999999999999999999\n"}) {
		put("live/caps", bad);
		EXPECT_EQ(sysfs::read_u64(at("live/caps")).error(), errno_code(EINVAL)) << bad;
	}
}

TEST_F(Sysfs, ReadStringTrimsNewline)
{
	put("s", "abc \n\n");
	EXPECT_EQ(sysfs::read_string(at("s")).value(), "abc");
}
