/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * fractos_testbar: a test dma-buf exporter over a PCI BAR (QEMU's
 * ivshmem-plain), for the tests of Memory without struct pages.  Shared by
 * the module (tests/exporter/testbar.c) and the selftests; not a uAPI of
 * fractos.
 *
 * /dev/fractos_testbar (root only):
 *   FOS_TESTBAR_INFO    the BAR's size
 *   FOS_TESTBAR_EXPORT  a dma-buf over [offset, offset + len) of the BAR;
 *                       FOS_TESTBAR_DYNAMIC: an exporter that may move it
 *                       (pin/unpin, move_notify), else a static one;
 *                       FOS_TESTBAR_NOMAP: no kernel mapping and no mmap,
 *                       only DMA attachments (the NVIDIA driver's
 *                       nv_dmabuf is so)
 *   FOS_TESTBAR_MOVE    move a dynamic buffer to another offset: tell the
 *                       importers (dma_buf_move_notify()), copy the bytes,
 *                       fill the old range with FOS_TESTBAR_POISON.  EBUSY
 *                       while an importer has it pinned, EINVAL onto a
 *                       range that overlaps its own.
 *
 * The dma-buf's kernel mapping (vmap) is I/O memory (no struct pages); its
 * attachments must allow peer-to-peer (else EOPNOTSUPP) and are mapped
 * with dma_map_resource(); mmap maps the BAR write-combined.
 */
#ifndef FOS_TESTBAR_H
#define FOS_TESTBAR_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define FOS_TESTBAR_DYNAMIC	0x1U
#define FOS_TESTBAR_NOMAP	0x2U
#define FOS_TESTBAR_POISON	0x5a

struct fos_testbar_info {
	__u64 size;
};

struct fos_testbar_export {
	__u64 offset;
	__u64 len;
	__u32 flags;
	__s32 fd;		/* out */
};

struct fos_testbar_move {
	__s32 fd;
	__u32 flags;		/* 0 */
	__u64 offset;
};

#define FOS_TESTBAR_INFO	_IOR('F', 0xe0, struct fos_testbar_info)
#define FOS_TESTBAR_EXPORT	_IOWR('F', 0xe1, struct fos_testbar_export)
#define FOS_TESTBAR_MOVE	_IOW('F', 0xe2, struct fos_testbar_move)

#endif /* FOS_TESTBAR_H */
