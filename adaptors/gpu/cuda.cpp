// SPDX-License-Identifier: GPL-2.0-or-later
// fractos-gpud: the CUDA backend (cuda.hpp).
#include "cuda.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

/*
 * The driver API's types and constants we use, from its documentation,
 * so that the daemon builds without the CUDA toolkit's headers.
 */
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = void *;
using CUmodule = void *;
using CUfunction = void *;
using CUstream = void *;

namespace {

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_INVALID_VALUE = 1;
constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
constexpr CUresult CUDA_ERROR_INVALID_DEVICE = 101;
constexpr CUresult CUDA_ERROR_NOT_SUPPORTED = 801;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr int CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 124;
constexpr int CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD = 1;
constexpr unsigned CU_MEMHOSTREGISTER_DEVICEMAP = 0x02;

} // namespace

#ifdef FGPU_CUDA_IMAGE
/* cuda_image.S: kernels.fatbin, as nvcc built it. */
extern "C" const unsigned char fgpu_cuda_image[];
#endif

namespace gpud {

/* libcuda's entry points, resolved once; the library stays loaded. */
struct cuda_driver {
#define FGPU_CU(ret, name, sym, ...) ret (*name)(__VA_ARGS__) = nullptr;
#include "cuda_calls.def"
#undef FGPU_CU
};

namespace {

using caladan::errno_code;
using caladan::result;
using caladan::unique_fd;

thread_local std::string last_why;

/* libcuda's entry points, or null; then @why says why, in every thread. */
const cuda_driver *driver()
{
	static std::string why;
	static const cuda_driver *drv = [] () -> const cuda_driver * {
		static cuda_driver d;
		void *lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);

		if (!lib) {
			why = ::dlerror();
			return nullptr;
		}
#define FGPU_CU(ret, name, sym, ...)                                          \
	d.name = reinterpret_cast<ret (*)(__VA_ARGS__)>(::dlsym(lib, sym));   \
	if (!d.name) {                                                         \
		why = std::string("libcuda.so.1 has no ") + sym;               \
		return nullptr;                                                \
	}
#include "cuda_calls.def"
#undef FGPU_CU
		return &d;
	}();
	if (!drv)
		last_why = why;
	return drv;
}

/* Records why @p call failed; returns the errno that stands for it. */
int fail(const cuda_driver *drv, const char *call, CUresult r)
{
	const char *name = nullptr;

	if (drv->cuGetErrorName(r, &name) != CUDA_SUCCESS || !name)
		name = "CUDA_ERROR_UNKNOWN";
	last_why = std::string(call) + ": " + name;
	switch (r) {
	case CUDA_ERROR_INVALID_VALUE:
		return EINVAL;
	case CUDA_ERROR_OUT_OF_MEMORY:
		return ENOMEM;
	case CUDA_ERROR_NO_DEVICE:
	case CUDA_ERROR_INVALID_DEVICE:
		return ENODEV;
	case CUDA_ERROR_NOT_SUPPORTED:
		return EOPNOTSUPP;
	default:
		return EIO;
	}
}

} // namespace

/* A retained primary context: whoever uses device memory holds one. */
struct cuda_ctx {
	const cuda_driver *drv;
	CUdevice dev;
	CUcontext ctx;

	cuda_ctx(const cuda_driver *d, CUdevice v, CUcontext c) noexcept : drv(d), dev(v), ctx(c) {}
	~cuda_ctx() { drv->cuDevicePrimaryCtxRelease(dev); }
	cuda_ctx(const cuda_ctx &) = delete;
	cuda_ctx &operator=(const cuda_ctx &) = delete;

	/* Every thread that calls the driver makes the context current. */
	int bind() const noexcept
	{
		CUresult r = drv->cuCtxSetCurrent(ctx);
		return r ? fail(drv, "cuCtxSetCurrent", r) : 0;
	}
};

void cuda_alloc::reset() noexcept
{
	if (p_ && !ctx_->bind())
		(void)ctx_->drv->cuMemFree(p_);
	p_ = 0;
	ctx_.reset();
}

namespace {

/* VRAM as a Memory of the daemon's space, through its dma-buf. */
class vram_buffer final : public dev_buffer {
public:
	vram_buffer(cuda_alloc a, caladan::cap mem) noexcept
		: a_(std::move(a)), mem_(std::move(mem))
	{
	}

	std::uint64_t ptr() const noexcept override { return a_.ptr(); }
	std::uint64_t size() const noexcept override { return a_.size(); }
	const caladan::cap &mem() const noexcept override { return mem_; }
	const char *kind() const noexcept override { return "cuda"; }

private:
	/* Destroyed in reverse: our import goes before the memory does. */
	cuda_alloc a_;
	caladan::cap mem_;
};

/* Host pages the kernel pinned as Memory and the GPU maps too. */
class host_buffer final : public dev_buffer {
public:
	host_buffer(std::shared_ptr<cuda_ctx> ctx, void *p, std::uint64_t dptr, std::uint64_t len,
		    caladan::cap mem) noexcept
		: ctx_(std::move(ctx)), p_(p), dptr_(dptr), len_(len), mem_(std::move(mem))
	{
	}
	~host_buffer() override
	{
		if (!ctx_->bind())
			(void)ctx_->drv->cuMemHostUnregister(p_);
		mem_ = caladan::cap();
		::munmap(p_, len_);
	}

	std::uint64_t ptr() const noexcept override { return dptr_; }
	std::uint64_t size() const noexcept override { return len_; }
	const caladan::cap &mem() const noexcept override { return mem_; }
	const char *kind() const noexcept override { return "cuda-host"; }

private:
	std::shared_ptr<cuda_ctx> ctx_;
	void *p_;
	std::uint64_t dptr_, len_;
	caladan::cap mem_;
};

} // namespace

const std::string &cuda_backend::why() noexcept
{
	return last_why;
}

result<std::unique_ptr<cuda_backend>> cuda_backend::open(int ordinal)
{
	const cuda_driver *drv = driver();
	CUdevice dev;
	CUcontext ctx;
	CUresult r;
	cuda_info info;
	char name[256] = {};
	int dmabuf = 0;

	if (!drv)
		return errno_code(ENOENT);
	if ((r = drv->cuInit(0)))
		return errno_code(fail(drv, "cuInit", r));
	if ((r = drv->cuDeviceGet(&dev, ordinal)))
		return errno_code(fail(drv, "cuDeviceGet", r));
	info.ordinal = ordinal;
	if ((r = drv->cuDeviceGetName(name, sizeof(name) - 1, dev)) ||
	    (r = drv->cuDriverGetVersion(&info.driver_version)) ||
	    (r = drv->cuDeviceGetAttribute(&info.cc_major,
					   CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev)) ||
	    (r = drv->cuDeviceGetAttribute(&info.cc_minor,
					   CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev)))
		return errno_code(fail(drv, "cuDeviceGet*", r));
	info.name = name;
	/* Older drivers do not know the attribute: no dma-buf then. */
	if (!drv->cuDeviceGetAttribute(&dmabuf, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, dev))
		info.dmabuf = dmabuf != 0;
	if ((r = drv->cuDevicePrimaryCtxRetain(&ctx, dev)))
		return errno_code(fail(drv, "cuDevicePrimaryCtxRetain", r));
	auto c = std::make_shared<cuda_ctx>(drv, dev, ctx);
	if (int e = c->bind())
		return errno_code(e);

#ifdef FGPU_CUDA_IMAGE
	CUmodule mod;
	void *fns[std::size(fgpu::module_fractos)];

	if ((r = drv->cuModuleLoadData(&mod, fgpu_cuda_image))) {
		fail(drv, "cuModuleLoadData", r);
		return errno_code(ENOEXEC);
	}
	for (std::size_t i = 0; i < std::size(fns); i++) {
		std::string sym = std::string("fgpu_") + fgpu::module_fractos[i].name;

		if ((r = drv->cuModuleGetFunction(&fns[i], mod, sym.c_str()))) {
			fail(drv, "cuModuleGetFunction", r);
			last_why += " (" + sym + ")";
			(void)drv->cuModuleUnload(mod);
			return errno_code(ENOEXEC);
		}
	}
	return std::make_unique<cuda_backend>(std::move(c), std::move(info), mod, fns);
#else
	last_why = "this fractos-gpud was built without nvcc: it has no CUDA kernels";
	return errno_code(ENOEXEC);
#endif
}

cuda_backend::cuda_backend(std::shared_ptr<cuda_ctx> ctx, cuda_info info, void *module,
			   void *const *fns) noexcept
	: ctx_(std::move(ctx)), info_(std::move(info)), module_(module), vram_ok_(true)
{
	std::memcpy(fns_, fns, sizeof(fns_));
}

cuda_backend::~cuda_backend()
{
	if (!ctx_->bind())
		(void)ctx_->drv->cuModuleUnload(module_);
}

std::string cuda_backend::describe() const
{
	char s[512];

	std::snprintf(s, sizeof(s), "cuda %d: %s, compute %d.%d, driver %d.%d, dma-buf %s",
		      info_.ordinal, info_.name.c_str(), info_.cc_major, info_.cc_minor,
		      info_.driver_version / 1000, info_.driver_version % 1000 / 10,
		      info_.dmabuf ? "yes" : "no");
	return s;
}

result<cuda_alloc> cuda_backend::alloc_device(std::uint64_t len)
{
	const cuda_driver *drv = ctx_->drv;
	CUdeviceptr p;
	CUresult r;

	if (int e = ctx_->bind())
		return errno_code(e);
	if ((r = drv->cuMemAlloc(&p, len)))
		return errno_code(fail(drv, "cuMemAlloc", r));
	cuda_alloc a(ctx_, p, len);
	/* Nobody sees what the last owner of these bytes left. */
	if ((r = drv->cuMemsetD8(p, 0, len)) || (r = drv->cuCtxSynchronize()))
		return errno_code(fail(drv, "cuMemsetD8", r));
	return a;
}

result<unique_fd> cuda_backend::export_dmabuf(const cuda_alloc &a)
{
	const cuda_driver *drv = ctx_->drv;
	int fd = -1;
	CUresult r;

	if (!info_.dmabuf) {
		last_why = "the device or its driver has no dma-buf export";
		return errno_code(EOPNOTSUPP);
	}
	if (int e = ctx_->bind())
		return errno_code(e);
	r = drv->cuMemGetHandleForAddressRange(&fd, a.ptr(), a.size(),
					       CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
	if (r)
		return errno_code(fail(drv, "cuMemGetHandleForAddressRange", r));
	unique_fd f(fd);
	/* The driver's fd is not close-on-exec. */
	if (::fcntl(f.get(), F_SETFD, FD_CLOEXEC))
		return caladan::last_error();
	return f;
}

result<void> cuda_backend::copy_in(std::uint64_t dst, const void *src, std::uint64_t len)
{
	CUresult r;

	if (int e = ctx_->bind())
		return errno_code(e);
	if ((r = ctx_->drv->cuMemcpyHtoD(dst, src, len)))
		return errno_code(fail(ctx_->drv, "cuMemcpyHtoD", r));
	return {};
}

result<void> cuda_backend::copy_out(void *dst, std::uint64_t src, std::uint64_t len)
{
	CUresult r;

	if (int e = ctx_->bind())
		return errno_code(e);
	if ((r = ctx_->drv->cuMemcpyDtoH(dst, src, len)))
		return errno_code(fail(ctx_->drv, "cuMemcpyDtoH", r));
	return {};
}

result<std::unique_ptr<dev_buffer>> cuda_backend::alloc(const caladan::space &sp,
							std::uint64_t len)
{
	if (vram_ok_ && info_.dmabuf) {
		auto b = alloc_vram(sp, len);
		if (b || b.error() == errno_code(ENOMEM))
			return b;
		/* The kernel cannot import it: say so once, then use host memory. */
		std::fprintf(stderr,
			     "fractos-gpud: cuda: device memory cannot be a Memory here (%s: %s);"
			     " serving registered host memory\n",
			     why().c_str(), b.error().message().c_str());
		vram_ok_ = false;
	}
	return alloc_host(sp, len);
}

result<std::unique_ptr<dev_buffer>> cuda_backend::alloc_vram(const caladan::space &sp,
							     std::uint64_t len)
{
	auto a = alloc_device(len);
	if (!a)
		return a.error();
	auto fd = export_dmabuf(*a);
	if (!fd)
		return fd.error();
	auto mem = caladan::memory_import_dmabuf(sp, fd->get(), 0, len, caladan::perm::all);
	if (!mem) {
		last_why = "FRACTOS_IOC_MEMORY_CREATE of its dma-buf";
		return mem.error();
	}
	/* The Memory holds the dma-buf; our fd is not needed any more. */
	return std::unique_ptr<dev_buffer>(std::make_unique<vram_buffer>(std::move(*a),
									 std::move(*mem)));
}

result<std::uint64_t> cuda_backend::map_host(void *p, std::uint64_t len)
{
	const cuda_driver *drv = ctx_->drv;
	CUdeviceptr dptr;
	CUresult r;

	if (int e = ctx_->bind())
		return errno_code(e);
	if ((r = drv->cuMemHostRegister(p, len, CU_MEMHOSTREGISTER_DEVICEMAP)))
		return errno_code(fail(drv, "cuMemHostRegister", r));
	if ((r = drv->cuMemHostGetDevicePointer(&dptr, p, 0))) {
		int e = fail(drv, "cuMemHostGetDevicePointer", r);

		(void)drv->cuMemHostUnregister(p);
		return errno_code(e);
	}
	return std::uint64_t(dptr);
}

void cuda_backend::unmap_host(void *p) noexcept
{
	if (!ctx_->bind())
		(void)ctx_->drv->cuMemHostUnregister(p);
}

result<std::unique_ptr<dev_buffer>> cuda_backend::alloc_host(const caladan::space &sp,
							     std::uint64_t len)
{
	auto h = map_host_memory(sp, len);
	if (!h)
		return h.error();
	auto dptr = map_host(h->p, len);
	if (!dptr) {
		h->mem = caladan::cap();
		::munmap(h->p, len);
		return dptr.error();
	}
	return std::unique_ptr<dev_buffer>(
		std::make_unique<host_buffer>(ctx_, h->p, *dptr, len, std::move(h->mem)));
}

result<void> cuda_backend::run(const fgpu::kernel_desc &k, fgpu_launch g, const void *args)
{
	const cuda_driver *drv = ctx_->drv;
	std::size_t i = 0;
	void *params[] = {const_cast<void *>(args)};
	CUresult r;

	while (i < std::size(fns_) && &fgpu::module_fractos[i] != &k)
		i++;
	if (i == std::size(fns_))
		return errno_code(EINVAL);
	if (int e = ctx_->bind())
		return errno_code(e);
	r = drv->cuLaunchKernel(fns_[i], g.grid, 1, 1, g.block, 1, 1, 0, nullptr, params,
				nullptr);
	if (r)
		return errno_code(fail(drv, "cuLaunchKernel", r));
	/* The launch's continuation goes once its writes are in memory. */
	if ((r = drv->cuCtxSynchronize()))
		return errno_code(fail(drv, "cuCtxSynchronize", r));
	return {};
}

result<std::unique_ptr<backend>> make_backend(const std::string &spec, std::string &why)
{
	if (spec == "cpu")
		return make_cpu_backend();
	if (spec.rfind("cuda", 0) == 0) {
		int ordinal = 0;

		if (spec.size() > 4) {
			char *end;
			const char *n = spec.c_str() + 5;

			errno = 0;
			long v = std::strtol(n, &end, 10);
			if (spec[4] != ':' || !*n || *end || errno || v < 0 || v > 255) {
				why = "bad device in " + spec;
				return errno_code(EINVAL);
			}
			ordinal = int(v);
		}
		auto b = cuda_backend::open(ordinal);
		if (!b) {
			why = cuda_backend::why();
			return b.error();
		}
		return std::unique_ptr<backend>(std::move(*b));
	}
	why = "no backend " + spec + " (cpu, cuda, cuda:N)";
	return errno_code(EINVAL);
}

} // namespace gpud
