// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fractos-gpud: the module "fractos" for the CUDA backend, the kernels of
 * kernels.hpp wrapped as __global__ functions (one thread per global
 * index, as the CPU backend runs them).  Where nvcc is installed, the
 * Makefile builds it into kernels.fatbin, which cuda_image.S links into
 * fractos-gpud for the CUDA backend (cuda.cpp), and into kernels.ptx for
 * "make check".
 */
#include "kernels.hpp"

#define FGPU_GLOBAL(name, args)                                                   \
	extern "C" __global__ void fgpu_##name(args a)                            \
	{                                                                         \
		fgpu::name(a, uint64_t(blockIdx.x) * blockDim.x + threadIdx.x);   \
	}

FGPU_GLOBAL(fill_f32, fgpu_fill_f32)
FGPU_GLOBAL(add_f32, fgpu_add_f32)
FGPU_GLOBAL(verify_f32, fgpu_verify_f32)
