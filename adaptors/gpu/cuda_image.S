/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fractos-gpud: the CUDA backend's kernels (kernels.fatbin, built by nvcc
 * from kernels.cu) as the read-only bytes fgpu_cuda_image, for
 * cuModuleLoadData.  Built only where nvcc is (Makefile).
 */
	.section .rodata
	.balign 64
	.globl fgpu_cuda_image
	.type fgpu_cuda_image, @object
fgpu_cuda_image:
	.incbin "kernels.fatbin"
	.size fgpu_cuda_image, . - fgpu_cuda_image
	.section .note.GNU-stack, "", @progbits
