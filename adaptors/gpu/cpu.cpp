// SPDX-License-Identifier: GPL-2.0-or-later
// fractos-gpud: the CPU backend (backend.hpp).
#include "backend.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

/* The DRM uAPI from libdrm-dev (Debian 12's linux-libc-dev has none). */
#include <drm.h>
#include <drm_mode.h>
#include <linux/dma-buf.h>
#include <linux/dma-heap.h>
#include <linux/udmabuf.h>

namespace gpud {

namespace {

using caladan::errno_code;
using caladan::last_error;
using caladan::result;
using caladan::unique_fd;

/* A DRM card whose driver is vgem, or an empty fd. */
unique_fd open_vgem()
{
	for (int i = 0; i < 16; i++) {
		std::string path = "/dev/dri/card" + std::to_string(i);
		unique_fd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC));
		if (!fd)
			continue;
		char name[16] = {};
		drm_version v{};
		v.name_len = sizeof(name) - 1;
		v.name = name;
		if (!::ioctl(fd.get(), DRM_IOCTL_VERSION, &v) && !std::strcmp(name, "vgem"))
			return fd;
	}
	return unique_fd();
}

/* vgem's buffer object of @p len bytes as a read-write dma-buf. */
unique_fd vgem_alloc(std::uint64_t len)
{
	static unique_fd card = open_vgem();
	drm_mode_create_dumb cd{};
	drm_prime_handle ph{};
	drm_gem_close gc{};

	cd.width = 4096;
	cd.height = std::uint32_t(len / 4096);
	cd.bpp = 8;
	if (!card || ::ioctl(card.get(), DRM_IOCTL_MODE_CREATE_DUMB, &cd))
		return unique_fd();
	ph.handle = cd.handle;
	ph.flags = DRM_CLOEXEC | DRM_RDWR;
	if (::ioctl(card.get(), DRM_IOCTL_PRIME_HANDLE_TO_FD, &ph))
		ph.fd = -1;
	gc.handle = cd.handle;		/* the dma-buf holds the object */
	::ioctl(card.get(), DRM_IOCTL_GEM_CLOSE, &gc);
	return unique_fd(ph.fd);
}

unique_fd heap_alloc(std::uint64_t len)
{
	unique_fd heap(::open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC));
	dma_heap_allocation_data a{};

	a.len = len;
	a.fd_flags = O_CLOEXEC | O_RDWR;
	if (!heap || ::ioctl(heap.get(), DMA_HEAP_IOCTL_ALLOC, &a))
		return unique_fd();
	return unique_fd(int(a.fd));
}

unique_fd udmabuf_alloc(std::uint64_t len)
{
	unique_fd dev(::open("/dev/udmabuf", O_RDWR | O_CLOEXEC));
	if (!dev)
		return unique_fd();
	unique_fd memfd(::memfd_create("fractos-gpud", MFD_ALLOW_SEALING | MFD_CLOEXEC));
	if (!memfd || ::ftruncate(memfd.get(), off_t(len)) ||
	    ::fcntl(memfd.get(), F_ADD_SEALS, F_SEAL_SHRINK))
		return unique_fd();
	udmabuf_create uc{};
	uc.memfd = std::uint32_t(memfd.get());
	uc.flags = UDMABUF_FLAGS_CLOEXEC;
	uc.size = len;
	return unique_fd(::ioctl(dev.get(), UDMABUF_CREATE, &uc));
}

/* A mapping of device memory, its Memory, and the dma-buf if any. */
class cpu_buffer final : public dev_buffer {
public:
	cpu_buffer(void *p, std::uint64_t len, caladan::cap mem, unique_fd dmabuf,
		   const char *kind) noexcept
		: p_(p), len_(len), mem_(std::move(mem)), dmabuf_(std::move(dmabuf)), kind_(kind)
	{
	}
	~cpu_buffer() override
	{
		/* The kernel keeps what the Memory pinned until it is freed. */
		::munmap(p_, len_);
	}

	std::uint64_t ptr() const noexcept override { return std::uint64_t(std::uintptr_t(p_)); }
	std::uint64_t size() const noexcept override { return len_; }
	const caladan::cap &mem() const noexcept override { return mem_; }
	const char *kind() const noexcept override { return kind_; }
	void begin_access() noexcept override { sync(DMA_BUF_SYNC_START); }
	void end_access() noexcept override { sync(DMA_BUF_SYNC_END); }

private:
	void sync(std::uint64_t when) noexcept
	{
		dma_buf_sync s{};

		s.flags = when | DMA_BUF_SYNC_RW;
		if (dmabuf_)
			(void)::ioctl(dmabuf_.get(), DMA_BUF_IOCTL_SYNC, &s);
	}

	void *p_;
	std::uint64_t len_;
	caladan::cap mem_;
	unique_fd dmabuf_;
	const char *kind_;
};

class cpu_backend final : public backend {
public:
	const char *name() const noexcept override { return "cpu"; }
	std::string describe() const override
	{
		return "cpu: the kernels as host code, one thread; device memory from vgem, the"
		       " system DMA heap, udmabuf or pinned pages, the first that works";
	}

	result<std::unique_ptr<dev_buffer>> alloc(const caladan::space &sp,
						  std::uint64_t len) override
	{
		static const struct {
			const char *kind;
			unique_fd (*alloc)(std::uint64_t);
		} exporters[] = {
			{"vgem", vgem_alloc},
			{"dma-heap", heap_alloc},
			{"udmabuf", udmabuf_alloc},
		};

		for (const auto &e : exporters) {
			auto b = from_dmabuf(sp, e.alloc(len), len, e.kind);
			if (b)
				return b;
		}
		return from_pages(sp, len);
	}

	result<void> run(const fgpu::kernel_desc &k, fgpu_launch g, const void *args) override
	{
		std::uint64_t n = std::uint64_t(g.grid) * g.block;

		for (std::uint64_t i = 0; i < n; i++)
			k.cpu(args, i);
		return {};
	}

private:
	/* A Memory over the dma-buf @p fd (mapped for the kernels), or an
	 * error: then the next exporter is tried. */
	static result<std::unique_ptr<dev_buffer>> from_dmabuf(const caladan::space &sp,
							       unique_fd fd, std::uint64_t len,
							       const char *kind)
	{
		if (!fd)
			return errno_code(ENODEV);
		void *p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
		if (p == MAP_FAILED)
			return last_error();
		auto mem = caladan::memory_import_dmabuf(sp, fd.get(), 0, len, caladan::perm::all);
		if (!mem) {
			::munmap(p, len);
			return mem.error();
		}
		return std::unique_ptr<dev_buffer>(
			std::make_unique<cpu_buffer>(p, len, std::move(*mem), std::move(fd), kind));
	}

	static result<std::unique_ptr<dev_buffer>> from_pages(const caladan::space &sp,
							      std::uint64_t len)
	{
		auto h = map_host_memory(sp, len);
		if (!h)
			return h.error();
		return std::unique_ptr<dev_buffer>(std::make_unique<cpu_buffer>(
			h->p, len, std::move(h->mem), unique_fd(), "pages"));
	}
};

} // namespace

result<host_memory> map_host_memory(const caladan::space &sp, std::uint64_t len)
{
	void *p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return errno_code(ENOMEM);
	auto mem = caladan::memory_create(sp, p, len, caladan::perm::all);
	if (!mem) {
		::munmap(p, len);
		return mem.error();
	}
	return host_memory{p, std::move(*mem)};
}

std::unique_ptr<backend> make_cpu_backend()
{
	return std::make_unique<cpu_backend>();
}

} // namespace gpud
