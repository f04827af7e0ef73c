// SPDX-License-Identifier: GPL-2.0-or-later
/**
 * @file cuda.hpp
 * fractos-gpud: the CUDA backend (backend.hpp) on the driver API.
 *
 * libcuda.so.1 is opened at run time (dlopen), so the daemon builds and
 * starts where there is no GPU and no CUDA; "-b cuda" then fails with a
 * message that says why.  The kernels are kernels.hpp's, built by nvcc
 * into a fat binary (SASS for sm_80 and sm_90, PTX for the rest) that
 * the build links in; a build without nvcc has no CUDA kernels and says
 * so (ENOEXEC).
 *
 * Device memory is cuMemAlloc'd, zeroed, exported as a dma-buf
 * (cuMemGetHandleForAddressRange) and imported into the daemon's space
 * as Memory.  Where the kernel cannot import that dma-buf (the NVIDIA
 * driver's exports have no kernel mapping, and the NIC's own attachment
 * is not written: Documentation/accelerators.rst), the backend says so
 * once and serves Memory over anonymous host pages registered with the
 * GPU (cuMemHostRegister, kind "cuda-host"), which kernels read and
 * write over PCIe.
 *
 * The class is public for the backend's own tests (tests/test_cuda.cpp),
 * which run where a GPU is and no fractos module is: they use the raw
 * allocations and copies below.
 */
#ifndef FRACTOS_GPUD_CUDA_HPP
#define FRACTOS_GPUD_CUDA_HPP

#include "backend.hpp"

#include <caladan/fd.hpp>

#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <utility>

namespace gpud {

struct cuda_ctx;

/// What the backend found, for logs and `fractos-gpud info`.
struct cuda_info {
	int ordinal = 0;
	std::string name;		///< cuDeviceGetName
	int driver_version = 0;		///< cuDriverGetVersion: 13000 is 13.0
	int cc_major = 0, cc_minor = 0;	///< compute capability
	bool dmabuf = false;		///< CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED
};

/// cuMemAlloc'd device memory, freed with the object.
class cuda_alloc {
public:
	cuda_alloc() noexcept = default;
	cuda_alloc(std::shared_ptr<cuda_ctx> ctx, std::uint64_t p, std::uint64_t len) noexcept
		: ctx_(std::move(ctx)), p_(p), len_(len)
	{
	}
	~cuda_alloc() { reset(); }
	cuda_alloc(cuda_alloc &&o) noexcept
		: ctx_(std::move(o.ctx_)), p_(std::exchange(o.p_, 0)), len_(o.len_)
	{
	}
	cuda_alloc &operator=(cuda_alloc &&o) noexcept
	{
		if (this != &o) {
			reset();
			ctx_ = std::move(o.ctx_);
			p_ = std::exchange(o.p_, 0);
			len_ = o.len_;
		}
		return *this;
	}
	cuda_alloc(const cuda_alloc &) = delete;
	cuda_alloc &operator=(const cuda_alloc &) = delete;

	/// The device address (CUdeviceptr).
	std::uint64_t ptr() const noexcept { return p_; }
	std::uint64_t size() const noexcept { return len_; }
	explicit operator bool() const noexcept { return p_ != 0; }
	void reset() noexcept;

private:
	std::shared_ptr<cuda_ctx> ctx_;
	std::uint64_t p_ = 0;
	std::uint64_t len_ = 0;
};

class cuda_backend final : public backend {
public:
	/// Device @p ordinal: ENOENT without libcuda.so.1, ENODEV without
	/// that device, ENOEXEC if its kernels do not load (a build without
	/// nvcc, or a driver older than the toolkit); why() says more.
	static caladan::result<std::unique_ptr<cuda_backend>> open(int ordinal);
	/// The last failure of this thread, as "cuCall: CUDA_ERROR_NAME".
	static const std::string &why() noexcept;

	const char *name() const noexcept override { return "cuda"; }
	std::string describe() const override;
	caladan::result<std::unique_ptr<dev_buffer>> alloc(const caladan::space &sp,
							   std::uint64_t len) override;
	caladan::result<void> run(const fgpu::kernel_desc &k, fgpu_launch g,
				  const void *args) override;

	const cuda_info &info() const noexcept { return info_; }
	/// @p len bytes of zeroed device memory.
	caladan::result<cuda_alloc> alloc_device(std::uint64_t len);
	/// A dma-buf fd over all of @p a (EOPNOTSUPP where the device or its
	/// driver cannot export one).
	caladan::result<caladan::unique_fd> export_dmabuf(const cuda_alloc &a);
	/// Maps @p len bytes of host memory at @p p (page aligned) into the
	/// GPU: the device address of @p p; unmap_host() undoes it.
	caladan::result<std::uint64_t> map_host(void *p, std::uint64_t len);
	void unmap_host(void *p) noexcept;
	caladan::result<void> copy_in(std::uint64_t dst, const void *src, std::uint64_t len);
	caladan::result<void> copy_out(void *dst, std::uint64_t src, std::uint64_t len);

	cuda_backend(std::shared_ptr<cuda_ctx> ctx, cuda_info info, void *module,
		     void *const *fns) noexcept;
	~cuda_backend() override;

private:
	caladan::result<std::unique_ptr<dev_buffer>> alloc_vram(const caladan::space &sp,
								std::uint64_t len);
	caladan::result<std::unique_ptr<dev_buffer>> alloc_host(const caladan::space &sp,
								std::uint64_t len);

	std::shared_ptr<cuda_ctx> ctx_;
	cuda_info info_;
	void *module_;			///< CUmodule
	void *fns_[std::size(fgpu::module_fractos)];	///< CUfunction, in table order
	bool vram_ok_;			///< cleared when the kernel refuses our dma-buf
};

} // namespace gpud

#endif // FRACTOS_GPUD_CUDA_HPP
