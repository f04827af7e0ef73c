// SPDX-License-Identifier: GPL-2.0-or-later
/**
 * @file kernels.hpp
 * fractos-gpud: the kernels of the module "fractos", written once.  Each
 * kernel is the work of one thread (global index @p i, CUDA style: a
 * thread past the end does nothing); g++ compiles it for the CPU backend
 * (cpu.cpp runs every index of the grid), nvcc for the CUDA backend
 * (kernels.cu wraps each in a __global__ function).  The arguments are
 * caladan/gpu_args.h's structs, their buffer fields already translated
 * from device addresses to the backend's pointers.
 *
 * The host-side table (kernel_desc, below, not seen by nvcc's device
 * pass) says what each kernel's arguments must be and which bytes of
 * which buffers it touches, for the daemon to check before it runs.
 */
#ifndef FRACTOS_GPUD_KERNELS_HPP
#define FRACTOS_GPUD_KERNELS_HPP

#include <caladan/gpu_args.h>

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__CUDACC__)
#define FGPU_FN __host__ __device__ inline
#else
#define FGPU_FN inline
#endif

namespace fgpu {

template <class T>
FGPU_FN T *ptr(uint64_t a)
{
	return reinterpret_cast<T *>(static_cast<uintptr_t>(a));
}

FGPU_FN void fill_f32(const fgpu_fill_f32 &a, uint64_t i)
{
	if (i < a.n)
		ptr<float>(a.out)[i] = a.value;
}

FGPU_FN void add_f32(const fgpu_add_f32 &a, uint64_t i)
{
	if (i < a.n)
		ptr<float>(a.out)[i] = ptr<const float>(a.a)[i] + ptr<const float>(a.b)[i];
}

/* The cosine similarity of two vectors, 0 if either is all zeros. */
FGPU_FN float cosine(const float *x, const float *y, uint64_t dim)
{
	float dot = 0, nx = 0, ny = 0;

	for (uint64_t k = 0; k < dim; k++) {
		dot += x[k] * y[k];
		nx += x[k] * x[k];
		ny += y[k] * y[k];
	}
	return nx > 0 && ny > 0 ? dot / (sqrtf(nx) * sqrtf(ny)) : 0.0f;
}

FGPU_FN void verify_f32(const fgpu_verify_f32 &a, uint64_t i)
{
	if (i >= a.n)
		return;
	float s = cosine(ptr<const float>(a.ref) + i * a.dim,
			 ptr<const float>(a.probe) + i * a.dim, a.dim);
	ptr<float>(a.score)[i] = s;
	ptr<uint32_t>(a.verdict)[i] = s >= a.threshold ? 1 : 0;
}

#if !defined(__CUDA_ARCH__)

/// One buffer argument of a kernel: where its address field is, and how
/// many bytes from that address the kernel touches.
struct buf_use {
	uint32_t field;		///< byte offset of the address in the args
	bool write;
	uint64_t bytes;
};

/// The most buffer arguments a kernel has.
inline constexpr unsigned max_bufs = 4;

/// A kernel of the module, for the daemon.
struct kernel_desc {
	const char *name;
	uint32_t args_len;
	/// Checks the arguments (pads, sizes); fills @p u with the buffers
	/// and returns how many, or -errno.
	int (*uses)(const void *args, buf_use *u);
	/// One thread of it (the CPU backend).
	void (*cpu)(const void *args, uint64_t i);
};

namespace detail {

/* @n elements of @size bytes, or -1 past any buffer's size. */
inline int64_t bytes_of(uint64_t n, uint64_t size)
{
	return n > (1ULL << 40) / size ? -1 : int64_t(n * size);
}

inline int fill_uses(const void *p, buf_use *u)
{
	const auto *a = static_cast<const fgpu_fill_f32 *>(p);
	int64_t b = bytes_of(a->n, 4);

	if (a->pad || b < 0)
		return -22;	/* EINVAL */
	u[0] = {offsetof(fgpu_fill_f32, out), true, uint64_t(b)};
	return 1;
}

inline int add_uses(const void *p, buf_use *u)
{
	const auto *a = static_cast<const fgpu_add_f32 *>(p);
	int64_t b = bytes_of(a->n, 4);

	if (b < 0)
		return -22;
	u[0] = {offsetof(fgpu_add_f32, a), false, uint64_t(b)};
	u[1] = {offsetof(fgpu_add_f32, b), false, uint64_t(b)};
	u[2] = {offsetof(fgpu_add_f32, out), true, uint64_t(b)};
	return 3;
}

inline int verify_uses(const void *p, buf_use *u)
{
	const auto *a = static_cast<const fgpu_verify_f32 *>(p);
	int64_t v = bytes_of(a->n, 4), m;

	if (a->pad || !a->dim || a->dim > FGPU_MAX_DIM || v < 0 || isnan(a->threshold))
		return -22;
	m = bytes_of(a->n, 4 * a->dim);
	if (m < 0)
		return -22;
	u[0] = {offsetof(fgpu_verify_f32, ref), false, uint64_t(m)};
	u[1] = {offsetof(fgpu_verify_f32, probe), false, uint64_t(m)};
	u[2] = {offsetof(fgpu_verify_f32, score), true, uint64_t(v)};
	u[3] = {offsetof(fgpu_verify_f32, verdict), true, uint64_t(v)};
	return 4;
}

template <class A, void (*F)(const A &, uint64_t)>
void cpu_thread(const void *p, uint64_t i)
{
	F(*static_cast<const A *>(p), i);
}

} // namespace detail

/// The module "fractos", in launch-Request order.
inline const kernel_desc module_fractos[] = {
	{"fill_f32", sizeof(fgpu_fill_f32), detail::fill_uses,
	 detail::cpu_thread<fgpu_fill_f32, fill_f32>},
	{"add_f32", sizeof(fgpu_add_f32), detail::add_uses,
	 detail::cpu_thread<fgpu_add_f32, add_f32>},
	{"verify_f32", sizeof(fgpu_verify_f32), detail::verify_uses,
	 detail::cpu_thread<fgpu_verify_f32, verify_f32>},
};

#endif /* !__CUDA_ARCH__ */

} // namespace fgpu

#endif // FRACTOS_GPUD_KERNELS_HPP
