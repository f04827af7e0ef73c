/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fractos selftests: device memory from tests/exporter's fractos_testbar,
 * a dma-buf exporter over QEMU's ivshmem BAR (vm/run --bar SIZE): memory
 * with no struct pages, as GPU VRAM is.
 */
#ifndef FRACTOS_FOS_TESTBAR_H
#define FRACTOS_FOS_TESTBAR_H

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "../exporter/testbar.h"

#define FOS_TESTBAR_DEV	"/dev/fractos_testbar"

/*
 * The exporter's device, fractos_testbar.ko loaded from beside the
 * fractos.ko under test ($FRACTOS_KO) if need be; -1 and *@why if there
 * is none (no BAR in this guest, no module).
 */
static inline int fos_testbar_open(const char **why)
{
	const char *ko = getenv("FRACTOS_KO");
	char path[PATH_MAX], cmd[PATH_MAX + 64], dir[PATH_MAX];
	int fd;

	fd = open(FOS_TESTBAR_DEV, O_RDWR | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	if (!ko || !*ko) {
		*why = "no FRACTOS_KO to find fractos_testbar.ko beside";
		return -1;
	}
	snprintf(dir, sizeof(dir), "%s", ko);
	/* $FRACTOS_KO is build/<release>/kernel/fractos.ko */
	snprintf(path, sizeof(path), "%s/tests/exporter/fractos_testbar.ko",
		 dirname(dirname(dir)));
	if (access(path, R_OK)) {
		*why = "fractos_testbar.ko was not built";
		return -1;
	}
	snprintf(cmd, sizeof(cmd), "insmod %s 2>/dev/null", path);
	if (system(cmd) && access("/sys/module/fractos_testbar", F_OK)) {
		*why = "insmod fractos_testbar.ko failed";
		return -1;
	}
	fd = open(FOS_TESTBAR_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		*why = "no ivshmem BAR in this guest: run with vm/run --bar SIZE";
	return fd;
}

static inline uint64_t fos_testbar_size(int bfd)
{
	struct fos_testbar_info i = { 0 };

	return ioctl(bfd, FOS_TESTBAR_INFO, &i) ? 0 : i.size;
}

/* A dma-buf over [@off, @off + @len) of the BAR, or -1 with errno. */
static inline int fos_testbar_export(int bfd, uint64_t off, uint64_t len,
				     uint32_t flags)
{
	struct fos_testbar_export a = {
		.offset = off, .len = len, .flags = flags, .fd = -1,
	};

	return ioctl(bfd, FOS_TESTBAR_EXPORT, &a) ? -1 : a.fd;
}

/* Move a dynamic buffer to @off of the BAR: 0 or -1 with errno. */
static inline int fos_testbar_move(int bfd, int dmabuf, uint64_t off)
{
	struct fos_testbar_move a = { .fd = dmabuf, .offset = off };

	return ioctl(bfd, FOS_TESTBAR_MOVE, &a);
}

#endif
