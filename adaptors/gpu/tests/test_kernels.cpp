// SPDX-License-Identifier: GPL-2.0-or-later
// Host unit tests of the kernel library (kernels.hpp): what each kernel's
// argument check accepts and refuses, and the kernels run as the CPU
// backend runs them.
#include "../kernels.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace {

const fgpu::kernel_desc &kernel(const char *name)
{
	for (const auto &k : fgpu::module_fractos)
		if (!std::strcmp(k.name, name))
			return k;
	ADD_FAILURE() << "no kernel " << name;
	return fgpu::module_fractos[0];
}

std::uint64_t addr(const void *p)
{
	return std::uint64_t(reinterpret_cast<std::uintptr_t>(p));
}

void run_all(const fgpu::kernel_desc &k, const void *args, std::uint64_t threads)
{
	for (std::uint64_t i = 0; i < threads; i++)
		k.cpu(args, i);
}

TEST(Kernels, ModuleOrderAndSizes)
{
	ASSERT_EQ(std::size(fgpu::module_fractos), 3u);
	EXPECT_STREQ(fgpu::module_fractos[0].name, "fill_f32");
	EXPECT_STREQ(fgpu::module_fractos[1].name, "add_f32");
	EXPECT_STREQ(fgpu::module_fractos[2].name, "verify_f32");
	EXPECT_EQ(kernel("fill_f32").args_len, 24u);
	EXPECT_EQ(kernel("add_f32").args_len, 32u);
	EXPECT_EQ(kernel("verify_f32").args_len, 56u);
}

TEST(Kernels, FillUsesAndRuns)
{
	std::vector<float> out(100, 0.0f);
	fgpu_fill_f32 a{100, addr(out.data()), 3.0f, 0};
	fgpu::buf_use u[fgpu::max_bufs];

	ASSERT_EQ(kernel("fill_f32").uses(&a, u), 1);
	EXPECT_EQ(u[0].field, offsetof(fgpu_fill_f32, out));
	EXPECT_TRUE(u[0].write);
	EXPECT_EQ(u[0].bytes, 400u);
	run_all(kernel("fill_f32"), &a, 128);	/* threads past n do nothing */
	for (float f : out)
		EXPECT_EQ(f, 3.0f);

	a.pad = 1;
	EXPECT_EQ(kernel("fill_f32").uses(&a, u), -22);
	a.pad = 0;
	a.n = ~0ULL;	/* n * 4 overflows */
	EXPECT_EQ(kernel("fill_f32").uses(&a, u), -22);
}

TEST(Kernels, AddUsesAndRuns)
{
	std::vector<float> x(64), y(64), z(64);
	for (int i = 0; i < 64; i++) {
		x[i] = float(i);
		y[i] = float(2 * i);
	}
	fgpu_add_f32 a{64, addr(x.data()), addr(y.data()), addr(z.data())};
	fgpu::buf_use u[fgpu::max_bufs];

	ASSERT_EQ(kernel("add_f32").uses(&a, u), 3);
	EXPECT_FALSE(u[0].write);
	EXPECT_FALSE(u[1].write);
	EXPECT_TRUE(u[2].write);
	run_all(kernel("add_f32"), &a, 64);
	for (int i = 0; i < 64; i++)
		EXPECT_EQ(z[i], float(3 * i));
}

TEST(Kernels, VerifyUsesAndRuns)
{
	constexpr std::uint64_t n = 3, dim = 4;
	std::vector<float> ref = {1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0};
	std::vector<float> probe = {2, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0};
	std::vector<float> score(n);
	std::vector<std::uint32_t> verdict(n, 7);
	fgpu_verify_f32 a{n, dim, addr(ref.data()), addr(probe.data()), addr(score.data()),
			  addr(verdict.data()), 0.9f, 0};
	fgpu::buf_use u[fgpu::max_bufs];

	ASSERT_EQ(kernel("verify_f32").uses(&a, u), 4);
	EXPECT_EQ(u[0].bytes, n * dim * 4);
	EXPECT_EQ(u[2].bytes, n * 4);
	run_all(kernel("verify_f32"), &a, 4);
	EXPECT_FLOAT_EQ(score[0], 1.0f);	/* the same direction */
	EXPECT_FLOAT_EQ(score[1], 0.0f);	/* orthogonal */
	EXPECT_FLOAT_EQ(score[2], 0.0f);	/* an all-zero reference */
	EXPECT_EQ(verdict[0], 1u);
	EXPECT_EQ(verdict[1], 0u);
	EXPECT_EQ(verdict[2], 0u);

	fgpu_verify_f32 b = a;
	b.dim = 0;
	EXPECT_EQ(kernel("verify_f32").uses(&b, u), -22);
	b.dim = FGPU_MAX_DIM + 1;
	EXPECT_EQ(kernel("verify_f32").uses(&b, u), -22);
	b = a;
	b.threshold = NAN;
	EXPECT_EQ(kernel("verify_f32").uses(&b, u), -22);
	b = a;
	b.n = 1ULL << 40;	/* n * dim * 4 past any buffer */
	EXPECT_EQ(kernel("verify_f32").uses(&b, u), -22);
}

} // namespace
