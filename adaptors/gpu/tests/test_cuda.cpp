// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fractos-gpud: the CUDA backend's own tests (cuda.hpp), on a real
 * NVIDIA GPU.  They need no fractos module: the backend's raw device
 * memory, host mappings and copies stand in for the Memory a daemon
 * would hand out.  Where no GPU is, each test skips and says why; with
 * FRACTOS_GPUD_REQUIRE_GPU=1 in the environment a missing GPU fails
 * instead (the run that records the results sets it).
 *
 * What they assert: the three kernels give the CPU backend's results
 * (bit for bit: nvcc builds them without fused multiply-add), threads
 * past n write nothing, device memory comes zeroed, the dma-buf export
 * is a dma-buf of the right size, registered host memory is what the
 * kernels write, and launches keep their order.  They print the launch
 * rate and the throughput of add_f32 against the CPU backend's.
 */
#include "../cuda.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <random>
#include <sstream>
#include <sys/mman.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

using gpud::cuda_alloc;
using gpud::cuda_backend;
using clk = std::chrono::steady_clock;

const fgpu::kernel_desc &k_fill = fgpu::module_fractos[0];
const fgpu::kernel_desc &k_add = fgpu::module_fractos[1];
const fgpu::kernel_desc &k_verify = fgpu::module_fractos[2];

struct gpu_state {
	std::unique_ptr<cuda_backend> be;
	std::string why;
};

const gpu_state &state()
{
	static gpu_state s = [] {
		gpu_state g;
		auto b = cuda_backend::open(0);

		if (b)
			g.be = std::move(*b);
		else
			g.why = b.error().message() + ": " + cuda_backend::why();
		return g;
	}();
	return s;
}

bool require_gpu()
{
	const char *r = std::getenv("FRACTOS_GPUD_REQUIRE_GPU");

	return r && !std::strcmp(r, "1");
}

#define NEED_GPU()                                                                   \
	cuda_backend *be = state().be.get();                                         \
	do {                                                                         \
		if (!be && require_gpu())                                            \
			FAIL() << "no GPU: " << state().why;                         \
		if (!be)                                                             \
			GTEST_SKIP() << "no GPU: " << state().why;                   \
	} while (0)

std::uint64_t host(const void *p)
{
	return std::uint64_t(std::uintptr_t(p));
}

std::uint32_t bits(float f)
{
	std::uint32_t u;

	std::memcpy(&u, &f, sizeof(u));
	return u;
}

/* @n floats of device memory, and 64 more that must stay 0xff. */
cuda_alloc with_canary(cuda_backend &be, std::uint64_t n)
{
	auto a = be.alloc_device((n + 64) * 4);
	EXPECT_TRUE(a) << cuda_backend::why();
	if (!a)
		return {};
	std::vector<std::uint8_t> ff((n + 64) * 4, 0xff);
	EXPECT_TRUE(be.copy_in(a->ptr(), ff.data(), ff.size()));
	return std::move(*a);
}

std::vector<float> read_floats(cuda_backend &be, const cuda_alloc &a, std::uint64_t n)
{
	std::vector<float> v(n);

	EXPECT_TRUE(be.copy_out(v.data(), a.ptr(), n * 4)) << cuda_backend::why();
	return v;
}

void expect_canary(cuda_backend &be, const cuda_alloc &a, std::uint64_t n)
{
	std::vector<std::uint32_t> c(64);

	ASSERT_TRUE(be.copy_out(c.data(), a.ptr() + n * 4, c.size() * 4));
	for (std::size_t i = 0; i < c.size(); i++)
		ASSERT_EQ(c[i], 0xffffffffU) << "thread " << n + i << " past n wrote";
}

std::vector<float> random_floats(std::uint64_t n, std::uint32_t seed)
{
	std::mt19937 rng(seed);
	std::uniform_real_distribution<float> d(-1000.0f, 1000.0f);
	std::vector<float> v(n);

	for (auto &x : v)
		x = d(rng);
	return v;
}

TEST(Cuda, OpenSaysWhatItFound)
{
	NEED_GPU();
	const auto &i = be->info();

	EXPECT_FALSE(i.name.empty());
	EXPECT_GE(i.cc_major, 7);
	EXPECT_GE(i.driver_version, 11020);
	RecordProperty("device", be->describe());
	std::printf("# %s\n", be->describe().c_str());
}

TEST(Cuda, NoDeviceIsEnodev)
{
	NEED_GPU();
	auto b = cuda_backend::open(255);

	ASSERT_FALSE(b);
	EXPECT_EQ(b.error(), caladan::errno_code(ENODEV)) << cuda_backend::why();
}

TEST(Cuda, AKernelNotOfTheModuleIsRefused)
{
	NEED_GPU();
	fgpu::kernel_desc other = k_fill;
	fgpu_fill_f32 a{};

	auto r = be->run(other, fgpu_launch{1, 1}, &a);
	ASSERT_FALSE(r);
	EXPECT_EQ(r.error(), caladan::errno_code(EINVAL));
}

TEST(Cuda, DeviceMemoryComesZeroed)
{
	NEED_GPU();
	constexpr std::uint64_t len = 4 << 20;
	std::vector<std::uint8_t> v(len, 0xa5);

	/* Dirty some memory, free it, and allocate the same size again. */
	{
		auto a = be->alloc_device(len);
		ASSERT_TRUE(a) << cuda_backend::why();
		ASSERT_TRUE(be->copy_in(a->ptr(), v.data(), len));
	}
	auto b = be->alloc_device(len);
	ASSERT_TRUE(b) << cuda_backend::why();
	ASSERT_TRUE(be->copy_out(v.data(), b->ptr(), len));
	std::uint64_t nonzero = 0;
	for (auto x : v)
		nonzero += x != 0;
	EXPECT_EQ(nonzero, 0U);
}

TEST(Cuda, FillAndAddEqualTheCpuBackend)
{
	NEED_GPU();
	constexpr std::uint64_t n = 100003;	/* not a multiple of the block */
	const fgpu_launch g{std::uint32_t((n + 255) / 256 + 1), 256};	/* a block too many */
	auto cpu = gpud::make_cpu_backend();
	auto a = random_floats(n, 1), b = random_floats(n, 2);
	std::vector<float> want(n);

	auto da = be->alloc_device(n * 4), db = be->alloc_device(n * 4);
	ASSERT_TRUE(da && db) << cuda_backend::why();
	ASSERT_TRUE(be->copy_in(da->ptr(), a.data(), n * 4));
	ASSERT_TRUE(be->copy_in(db->ptr(), b.data(), n * 4));
	cuda_alloc out = with_canary(*be, n);
	ASSERT_TRUE(out);

	fgpu_add_f32 args{n, da->ptr(), db->ptr(), out.ptr()};
	auto r = be->run(k_add, g, &args);
	ASSERT_TRUE(r) << cuda_backend::why();
	fgpu_add_f32 cargs{n, host(a.data()), host(b.data()), host(want.data())};
	ASSERT_TRUE(cpu->run(k_add, fgpu_launch{std::uint32_t((n + 255) / 256), 256}, &cargs));
	auto got = read_floats(*be, out, n);
	for (std::uint64_t i = 0; i < n; i++)
		ASSERT_EQ(bits(got[i]), bits(want[i])) << "add_f32 at " << i;
	expect_canary(*be, out, n);

	fgpu_fill_f32 f{n, out.ptr(), -3.25f, 0};
	ASSERT_TRUE(be->run(k_fill, g, &f)) << cuda_backend::why();
	got = read_floats(*be, out, n);
	for (std::uint64_t i = 0; i < n; i++)
		ASSERT_EQ(got[i], -3.25f) << "fill_f32 at " << i;
	expect_canary(*be, out, n);
}

TEST(Cuda, VerifyEqualsTheCpuBackend)
{
	NEED_GPU();
	constexpr std::uint64_t n = 2048, dim = 512;
	constexpr float thr = 0.95f;
	auto cpu = gpud::make_cpu_backend();
	auto ref = random_floats(n * dim, 3), noise = random_floats(n * dim, 4);
	std::vector<float> probe(n * dim);

	/* Row r is ref plus noise scaled by r / n: early rows pass, late fail. */
	for (std::uint64_t r = 0; r < n; r++)
		for (std::uint64_t k = 0; k < dim; k++)
			probe[r * dim + k] = ref[r * dim + k] + noise[r * dim + k] * float(r) / n;
	auto dref = be->alloc_device(n * dim * 4), dprobe = be->alloc_device(n * dim * 4);
	ASSERT_TRUE(dref && dprobe) << cuda_backend::why();
	ASSERT_TRUE(be->copy_in(dref->ptr(), ref.data(), n * dim * 4));
	ASSERT_TRUE(be->copy_in(dprobe->ptr(), probe.data(), n * dim * 4));
	cuda_alloc score = with_canary(*be, n), verdict = with_canary(*be, n);
	ASSERT_TRUE(score && verdict);

	fgpu_verify_f32 args{n, dim, dref->ptr(), dprobe->ptr(), score.ptr(), verdict.ptr(), thr, 0};
	ASSERT_TRUE(be->run(k_verify, fgpu_launch{n / 128 + 1, 128}, &args)) << cuda_backend::why();
	std::vector<float> want_s(n);
	std::vector<std::uint32_t> want_v(n), got_v(n);
	fgpu_verify_f32 cargs{n, dim, host(ref.data()), host(probe.data()),
			      host(want_s.data()), host(want_v.data()), thr, 0};
	ASSERT_TRUE(cpu->run(k_verify, fgpu_launch{n / 128, 128}, &cargs));

	auto got_s = read_floats(*be, score, n);
	ASSERT_TRUE(be->copy_out(got_v.data(), verdict.ptr(), n * 4));
	std::uint64_t pass = 0;
	for (std::uint64_t i = 0; i < n; i++) {
		ASSERT_EQ(bits(got_s[i]), bits(want_s[i]))
			<< "score " << i << ": " << got_s[i] << " vs " << want_s[i];
		ASSERT_EQ(got_v[i], want_v[i]) << "verdict " << i;
		pass += got_v[i];
	}
	/* The data make both verdicts happen. */
	EXPECT_GT(pass, n / 8);
	EXPECT_LT(pass, n - n / 8);
	expect_canary(*be, score, n);
	expect_canary(*be, verdict, n);
}

TEST(Cuda, DmabufExportIsADmabufOfTheAllocation)
{
	NEED_GPU();
	if (!be->info().dmabuf)
		GTEST_SKIP() << "the driver exports no dma-buf (it needs the open kernel modules)";
	constexpr std::uint64_t len = 2 << 20;
	auto a = be->alloc_device(len);
	ASSERT_TRUE(a) << cuda_backend::why();
	auto fd = be->export_dmabuf(*a);
	ASSERT_TRUE(fd) << fd.error().message() << ": " << cuda_backend::why();

	EXPECT_EQ(::fcntl(fd->get(), F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	char link[256] = {};
	std::string self = "/proc/self/fd/" + std::to_string(fd->get());
	ASSERT_GT(::readlink(self.c_str(), link, sizeof(link) - 1), 0);
	EXPECT_NE(std::string(link).find("dmabuf"), std::string::npos) << link;

	std::ifstream info("/proc/self/fdinfo/" + std::to_string(fd->get()));
	std::stringstream ss;
	ss << info.rdbuf();
	std::string fdinfo = ss.str();
	EXPECT_NE(fdinfo.find("size:\t" + std::to_string(len)), std::string::npos) << fdinfo;
	auto exp = fdinfo.find("exp_name:\t");
	ASSERT_NE(exp, std::string::npos) << fdinfo;
	std::string exporter = fdinfo.substr(exp + 10, fdinfo.find('\n', exp) - exp - 10);
	RecordProperty("exporter", exporter);
	std::printf("# dma-buf exporter: %s\n", exporter.c_str());

	/* A second export of the same memory, and the memory still works. */
	auto fd2 = be->export_dmabuf(*a);
	ASSERT_TRUE(fd2) << cuda_backend::why();
	fgpu_fill_f32 f{len / 4, a->ptr(), 7.0f, 0};
	ASSERT_TRUE(be->run(k_fill, fgpu_launch{std::uint32_t(len / 4 / 1024), 1024}, &f));
	float last;
	ASSERT_TRUE(be->copy_out(&last, a->ptr() + len - 4, 4));
	EXPECT_EQ(last, 7.0f);
}

TEST(Cuda, RegisteredHostMemoryIsWhatKernelsWrite)
{
	NEED_GPU();
	constexpr std::uint64_t len = 1 << 20, n = len / 4;
	void *p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(p, MAP_FAILED);
	auto d = be->map_host(p, len);
	ASSERT_TRUE(d) << cuda_backend::why();

	auto *f = static_cast<float *>(p);
	for (std::uint64_t i = 0; i < n; i++)
		f[i] = float(i);
	fgpu_add_f32 args{n, *d, *d, *d};	/* in place: f[i] = 2i */
	ASSERT_TRUE(be->run(k_add, fgpu_launch{n / 256, 256}, &args)) << cuda_backend::why();
	for (std::uint64_t i = 0; i < n; i++)
		ASSERT_EQ(f[i], float(2 * i)) << i;
	be->unmap_host(p);
	::munmap(p, len);
}

TEST(Cuda, LaunchRateAndOrder)
{
	NEED_GPU();
	constexpr int launches = 5000;
	constexpr std::uint64_t n = 256;
	auto cpu = gpud::make_cpu_backend();
	auto a = be->alloc_device(n * 4);
	ASSERT_TRUE(a) << cuda_backend::why();
	std::vector<float> h(n);

	/* Each launch waits for the kernel, as the daemon's worker does. */
	auto t0 = clk::now();
	for (int i = 0; i < launches; i++) {
		fgpu_fill_f32 f{n, a->ptr(), float(i), 0};
		ASSERT_TRUE(be->run(k_fill, fgpu_launch{1, 256}, &f)) << cuda_backend::why();
	}
	double gpu_s = std::chrono::duration<double>(clk::now() - t0).count();
	auto got = read_floats(*be, *a, n);
	for (auto x : got)
		ASSERT_EQ(x, float(launches - 1));

	t0 = clk::now();
	for (int i = 0; i < launches; i++) {
		fgpu_fill_f32 f{n, host(h.data()), float(i), 0};
		ASSERT_TRUE(cpu->run(k_fill, fgpu_launch{1, 256}, &f));
	}
	double cpu_s = std::chrono::duration<double>(clk::now() - t0).count();
	ASSERT_EQ(h[n - 1], float(launches - 1));

	char s[160];
	std::snprintf(s, sizeof(s), "%.0f launches/s (%.1f us each; cpu backend %.0f/s)",
		      launches / gpu_s, gpu_s * 1e6 / launches, launches / cpu_s);
	RecordProperty("launch_rate", s);
	std::printf("# launch rate: %s\n", s);
}

TEST(Cuda, AddThroughputAgainstTheCpuBackend)
{
	NEED_GPU();
	constexpr std::uint64_t n = 16 << 20;	/* 64 MiB a vector */
	auto cpu = gpud::make_cpu_backend();
	auto a = random_floats(n, 5), b = random_floats(n, 6);
	std::vector<float> out(n);
	auto da = be->alloc_device(n * 4), db = be->alloc_device(n * 4), dout = be->alloc_device(n * 4);
	ASSERT_TRUE(da && db && dout) << cuda_backend::why();
	ASSERT_TRUE(be->copy_in(da->ptr(), a.data(), n * 4));
	ASSERT_TRUE(be->copy_in(db->ptr(), b.data(), n * 4));
	const fgpu_launch g{std::uint32_t(n / 1024), 1024};
	fgpu_add_f32 args{n, da->ptr(), db->ptr(), dout->ptr()};
	ASSERT_TRUE(be->run(k_add, g, &args));	/* warm */

	constexpr int reps = 20;
	auto t0 = clk::now();
	for (int i = 0; i < reps; i++)
		ASSERT_TRUE(be->run(k_add, g, &args));
	double gpu_s = std::chrono::duration<double>(clk::now() - t0).count() / reps;
	fgpu_add_f32 cargs{n, host(a.data()), host(b.data()), host(out.data())};
	t0 = clk::now();
	ASSERT_TRUE(cpu->run(k_add, g, &cargs));
	double cpu_s = std::chrono::duration<double>(clk::now() - t0).count();

	auto got = read_floats(*be, *dout, n);
	for (std::uint64_t i = 0; i < n; i += 4099)
		ASSERT_EQ(bits(got[i]), bits(out[i])) << i;
	char s[200];
	std::snprintf(s, sizeof(s),
		      "add_f32 over 3 x 64 MiB: %.3f ms (%.0f GB/s); cpu backend %.1f ms (%.1fx)",
		      gpu_s * 1e3, 3.0 * n * 4 / gpu_s / 1e9, cpu_s * 1e3, cpu_s / gpu_s);
	RecordProperty("add_throughput", s);
	std::printf("# %s\n", s);
}

/* As the daemon does: memory allocated by its dispatch thread, kernels run
 * by its worker, the last reference dropped by a third thread. */
TEST(Cuda, ThreadsShareTheContext)
{
	NEED_GPU();
	constexpr std::uint64_t n = 1 << 16;
	auto a = be->alloc_device(n * 4);
	ASSERT_TRUE(a) << cuda_backend::why();
	auto shared = std::make_shared<cuda_alloc>(std::move(*a));
	bool ran = false;

	std::thread worker([&] {
		fgpu_fill_f32 f{n, shared->ptr(), 5.5f, 0};
		ran = bool(be->run(k_fill, fgpu_launch{n / 256, 256}, &f));
	});
	worker.join();
	ASSERT_TRUE(ran) << cuda_backend::why();
	auto got = read_floats(*be, *shared, n);
	for (std::uint64_t i = 0; i < n; i += 97)
		ASSERT_EQ(got[i], 5.5f) << i;
	std::thread dropper([s = std::move(shared)]() mutable { s.reset(); });
	dropper.join();
	/* The context still works after a free from another thread. */
	auto b = be->alloc_device(n * 4);
	ASSERT_TRUE(b) << cuda_backend::why();
}

/* What the "cuda-host" fallback costs: the same add over registered host
 * memory, which the GPU reads and writes over PCIe, against VRAM. */
TEST(Cuda, HostMemoryThroughputAgainstVram)
{
	NEED_GPU();
	constexpr std::uint64_t n = 4 << 20, len = n * 4;	/* 16 MiB a vector */
	void *p = ::mmap(nullptr, 3 * len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	ASSERT_NE(p, MAP_FAILED);
	auto *f = static_cast<float *>(p);
	for (std::uint64_t i = 0; i < 2 * n; i++)
		f[i] = float(i % 1000);
	auto d = be->map_host(p, 3 * len);
	ASSERT_TRUE(d) << cuda_backend::why();
	auto v = be->alloc_device(3 * len);
	ASSERT_TRUE(v) << cuda_backend::why();
	ASSERT_TRUE(be->copy_in(v->ptr(), p, 3 * len));
	const fgpu_launch g{std::uint32_t(n / 1024), 1024};

	auto time_add = [&](std::uint64_t base) {
		fgpu_add_f32 args{n, base, base + len, base + 2 * len};
		EXPECT_TRUE(be->run(k_add, g, &args));	/* warm */
		constexpr int reps = 10;
		auto t0 = clk::now();
		for (int i = 0; i < reps; i++)
			EXPECT_TRUE(be->run(k_add, g, &args));
		return std::chrono::duration<double>(clk::now() - t0).count() / reps;
	};
	double host_s = time_add(*d), vram_s = time_add(v->ptr());
	for (std::uint64_t i = 0; i < n; i += 997)
		ASSERT_EQ(f[2 * n + i], f[i] + f[n + i]) << i;
	be->unmap_host(p);
	::munmap(p, 3 * len);

	char s[200];
	std::snprintf(s, sizeof(s),
		      "add_f32 over 3 x 16 MiB: host memory %.2f ms (%.1f GB/s), VRAM %.3f ms (%.0fx)",
		      host_s * 1e3, 3.0 * len / host_s / 1e9, vram_s * 1e3, host_s / vram_s);
	RecordProperty("host_throughput", s);
	std::printf("# %s\n", s);
}

/* Runs anywhere: a failed open names its cause. */
TEST(Cuda, WithoutAGpuOpenSaysWhy)
{
	if (state().be)
		GTEST_SKIP() << "a GPU is here";
	auto b = cuda_backend::open(0);
	ASSERT_FALSE(b);
	EXPECT_TRUE(b.error() == caladan::errno_code(ENOENT) ||
		    b.error() == caladan::errno_code(ENODEV) ||
		    b.error() == caladan::errno_code(ENOEXEC) ||
		    b.error() == caladan::errno_code(EIO))
		<< b.error().message();
	EXPECT_FALSE(cuda_backend::why().empty());
	std::printf("# no GPU: %s: %s\n", b.error().message().c_str(),
		    cuda_backend::why().c_str());
}

} // namespace
