/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dma-buf exporters for the selftests: vgem (a DRM driver's PRIME export,
 * the shape of a GPU's buffer objects; 6.1, 6.12 and the debug kernel),
 * udmabuf (a memfd's pages; 6.12 and the debug kernel, where 6.1's has no
 * kernel mapping to import) and the system DMA heap (6.12).
 * C and C++ (caladan_basic.cpp); C needs _GNU_SOURCE (memfd_create).
 */
#ifndef FOS_DMABUF_H
#define FOS_DMABUF_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
/*
 * The DRM uAPI from Debian's libdrm-dev (pkg-config libdrm: -I.../libdrm,
 * as libdrm's own users include it): Debian 12's linux-libc-dev (6.1) has
 * no drm/ headers, only bookworm-backports' one has.  udmabuf's and the
 * DMA heaps' uAPI are in linux-libc-dev 6.1 (since 4.20 and 5.6).
 */
#include <drm.h>
#include <drm_mode.h>
#include <linux/dma-heap.h>
#include <linux/udmabuf.h>
#include <sys/mman.h>
#include <linux/fractos.h>

#define FOS_DMABUF_PG	4096UL

/* One exporter: gives a dma-buf fd of @size bytes, or -1. */
struct fos_exporter {
	const char *name;
	int (*alloc)(size_t size, int writable);
	int can_readonly;	/* can export a dma-buf not open for writing */
};

/* vgem: the DRM driver without hardware, as IGT uses it (-1: none). */
static int fos_vgem_fd = -1;

static inline int fos_vgem_open(void)
{
	char path[32], name[16];
	int i, fd;

	/* A module, built in, or absent: the cards say which. */
	if (system("modprobe vgem >/dev/null 2>&1") == -1)
		return -1;
	for (i = 0; i < 16; i++) {
		struct drm_version v;

		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		memset(name, 0, sizeof(name));
		memset(&v, 0, sizeof(v));
		v.name_len = sizeof(name) - 1;
		v.name = name;
		if (!ioctl(fd, DRM_IOCTL_VERSION, &v) && !strcmp(name, "vgem"))
			return fd;
		close(fd);
	}
	return -1;
}

static inline int fos_vgem_alloc(size_t size, int writable)
{
	struct drm_mode_create_dumb cd;
	struct drm_prime_handle ph;
	struct drm_gem_close gc;

	memset(&cd, 0, sizeof(cd));
	memset(&ph, 0, sizeof(ph));
	memset(&gc, 0, sizeof(gc));
	cd.height = (uint32_t)(size / FOS_DMABUF_PG);
	cd.width = (uint32_t)FOS_DMABUF_PG;
	cd.bpp = 8;
	ph.flags = DRM_CLOEXEC;
	if (fos_vgem_fd < 0)
		fos_vgem_fd = fos_vgem_open();
	if (fos_vgem_fd < 0 || ioctl(fos_vgem_fd, DRM_IOCTL_MODE_CREATE_DUMB, &cd))
		return -1;
	ph.handle = cd.handle;
	if (writable)
		ph.flags |= DRM_RDWR;
	if (ioctl(fos_vgem_fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &ph))
		ph.fd = -1;
	/* The dma-buf holds the object: the handle can go at once. */
	gc.handle = cd.handle;
	ioctl(fos_vgem_fd, DRM_IOCTL_GEM_CLOSE, &gc);
	return ph.fd;
}

static inline int fos_udmabuf_alloc(size_t size, int writable)
{
	struct udmabuf_create uc;
	int dev, memfd, fd;

	memset(&uc, 0, sizeof(uc));
	uc.flags = UDMABUF_FLAGS_CLOEXEC;
	uc.size = size;

	(void)writable;		/* udmabuf's dma-bufs are always O_RDWR */
	dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return -1;
	memfd = memfd_create("fos-dmabuf", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (memfd < 0 || ftruncate(memfd, size) ||
	    fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK)) {
		if (memfd >= 0)
			close(memfd);
		close(dev);
		return -1;
	}
	uc.memfd = (uint32_t)memfd;
	fd = ioctl(dev, UDMABUF_CREATE, &uc);
	close(memfd);		/* udmabuf holds the memfd's pages */
	close(dev);
	return fd;
}

static inline int fos_heap_alloc(size_t size, int writable)
{
	struct dma_heap_allocation_data a;
	int heap = open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC);

	memset(&a, 0, sizeof(a));
	a.len = size;
	a.fd_flags = O_CLOEXEC | (writable ? O_RDWR : O_RDONLY);
	if (heap < 0)
		return -1;
	if (ioctl(heap, DMA_HEAP_IOCTL_ALLOC, &a))
		a.fd = -1;
	close(heap);
	return a.fd;
}

static const struct fos_exporter fos_exporters[] = {
	{ "vgem", fos_vgem_alloc, 1 },
	{ "udmabuf", fos_udmabuf_alloc, 0 },
	{ "dma-heap", fos_heap_alloc, 1 },
};

#define FOS_NEXPORTERS	(sizeof(fos_exporters) / sizeof(fos_exporters[0]))

/* MEMORY_CREATE with FRACTOS_MEMORY_DMABUF: 0 or -1 with errno. */
static inline int fos_mem_import(int sfd, int dmabuf, uint64_t off,
				 uint64_t len, uint32_t perms, uint32_t *cid)
{
	struct fractos_memory_create a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.addr = off;
	a.len = len;
	a.perms = perms;
	a.flags = FRACTOS_MEMORY_DMABUF;
	a.dmabuf_fd = dmabuf;
	ret = ioctl(sfd, FRACTOS_IOC_MEMORY_CREATE, &a);

	if (!ret && cid)
		*cid = a.cid;
	return ret;
}

/*
 * A writable dma-buf of @size bytes from the first exporter whose buffers
 * import (some have no kernel mapping), its Memory in *@cid: the fd, or -1.
 */
static inline int fos_dmabuf_import_any(int sfd, size_t size, uint32_t perms,
					uint32_t *cid, const char **name)
{
	unsigned int i;
	int fd;

	for (i = 0; i < FOS_NEXPORTERS; i++) {
		fd = fos_exporters[i].alloc(size, 1);
		if (fd < 0)
			continue;
		if (!fos_mem_import(sfd, fd, 0, size, perms, cid)) {
			*name = fos_exporters[i].name;
			return fd;
		}
		close(fd);
	}
	return -1;
}

#endif
