/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernels of the GPU service's built-in module "fractos"
 * (caladan/gpu.hpp): their arguments as a launch carries them, after
 * struct fgpu_launch.  Plain C, so that the daemon's kernels
 * (adaptors/gpu/kernels.hpp), compiled by g++ for the CPU backend and by
 * nvcc for the CUDA one, and clients in any language share one layout.
 *
 * A buffer argument is a *device address*: the address an alloc answered
 * with (struct fgpu_reply.addr) plus an offset into that buffer.  The
 * daemon checks, before a kernel runs, that every buffer argument lies in
 * one buffer of the launching context with the bytes the kernel touches
 * (given its element count) inside it: EFAULT otherwise.
 */
#ifndef CALADAN_GPU_ARGS_H
#define CALADAN_GPU_ARGS_H

#include <stdint.h>

/* A launch's immediates begin with this; the kernel's arguments follow. */
struct fgpu_launch {
	uint32_t grid;		/* blocks (1 to FGPU_MAX_GRID) */
	uint32_t block;		/* threads per block (1 to FGPU_MAX_BLOCK) */
};

#define FGPU_MAX_GRID	65535U
#define FGPU_MAX_BLOCK	1024U

/* fill_f32: out[i] = value, for i < n. */
struct fgpu_fill_f32 {
	uint64_t n;
	uint64_t out;		/* n floats, written */
	float value;
	uint32_t pad;		/* 0 */
};

/* add_f32: out[i] = a[i] + b[i], for i < n. */
struct fgpu_add_f32 {
	uint64_t n;
	uint64_t a;		/* n floats, read */
	uint64_t b;		/* n floats, read */
	uint64_t out;		/* n floats, written */
};

/*
 * verify_f32: face verification of n (reference, probe) pairs of dim
 * features each: score[i] is the cosine similarity of ref[i] and
 * probe[i] (0 where either is all zeros), verdict[i] is 1 where it is at
 * least threshold, else 0.  One thread per pair.
 */
struct fgpu_verify_f32 {
	uint64_t n;
	uint64_t dim;		/* 1 to FGPU_MAX_DIM */
	uint64_t ref;		/* n * dim floats, read */
	uint64_t probe;		/* n * dim floats, read */
	uint64_t score;		/* n floats, written */
	uint64_t verdict;	/* n uint32_t, written */
	float threshold;
	uint32_t pad;		/* 0 */
};

#define FGPU_MAX_DIM	4096U

#endif /* CALADAN_GPU_ARGS_H */
