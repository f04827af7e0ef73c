// SPDX-License-Identifier: GPL-2.0-or-later
/**
 * @file backend.hpp
 * fractos-gpud: what runs the kernels.  The service (gpud.hpp) speaks the
 * protocol and checks every argument; a backend only allocates device
 * memory, as a Memory of the daemon's space, and runs a checked kernel.
 *
 * - cpu (cpu.cpp): the kernels compiled as host code, over dma-buf memory
 *   from the first exporter that works here (vgem, the system DMA heap,
 *   udmabuf), else pinned anonymous pages.  What CI runs.
 * - cuda (cuda.hpp): the same kernels built by nvcc, on an NVIDIA GPU
 *   through the driver API (libcuda opened at run time).
 */
#ifndef FRACTOS_GPUD_BACKEND_HPP
#define FRACTOS_GPUD_BACKEND_HPP

#include "kernels.hpp"

#include <caladan/caladan.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace gpud {

/// Device memory: the backend's pointer to it, its Memory, what backs it.
class dev_buffer {
public:
	virtual ~dev_buffer() = default;
	/// The address the backend's kernels use (CPU: a host pointer).
	virtual std::uint64_t ptr() const noexcept = 0;
	virtual std::uint64_t size() const noexcept = 0;
	/// The root Memory capability (read and write) over it.
	virtual const caladan::cap &mem() const noexcept = 0;
	/// "vgem", "dma-heap", "udmabuf", "pages", "cuda", "cuda-host".
	virtual const char *kind() const noexcept = 0;
	/// Around a kernel: make what devices wrote visible, then what it
	/// wrote (dma-buf CPU access); no-ops where nothing is needed.
	virtual void begin_access() noexcept {}
	virtual void end_access() noexcept {}
};

class backend {
public:
	virtual ~backend() = default;
	virtual const char *name() const noexcept = 0;
	/// One line on the device, for logs and `fractos-gpud info`.
	virtual std::string describe() const { return name(); }
	/// @p len bytes (a multiple of the page size) of device memory.
	virtual caladan::result<std::unique_ptr<dev_buffer>> alloc(const caladan::space &sp,
								   std::uint64_t len) = 0;
	/// Runs @p k on grid x block threads with @p args, whose buffer
	/// fields are backend pointers already checked.  Blocks until done.
	virtual caladan::result<void> run(const fgpu::kernel_desc &k, fgpu_launch g,
					  const void *args) = 0;
};

/// Anonymous zeroed pages of the daemon and a Memory (read and write) over
/// them; the caller munmap()s @c p once the Memory is gone.
struct host_memory {
	void *p;
	caladan::cap mem;
};
caladan::result<host_memory> map_host_memory(const caladan::space &sp, std::uint64_t len);

/// The CPU backend.
std::unique_ptr<backend> make_cpu_backend();

/// The backend @p spec names ("cpu", "cuda", "cuda:N" for device N), or
/// an error; @p why is set to what went wrong.
caladan::result<std::unique_ptr<backend>> make_backend(const std::string &spec,
						       std::string &why);

} // namespace gpud

#endif // FRACTOS_GPUD_BACKEND_HPP
