// SPDX-License-Identifier: GPL-2.0
/*
 * fosfuzz coverage: KCOV (CONFIG_KCOV, the debug kernel) traces the kernel
 * PCs each worker's syscalls run through; the ones inside the module's
 * text go into a set shared by every worker (a MAP_SHARED open-addressing
 * table), so the driver learns which programs reached new code.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include "fuzz.h"

#define KCOV_INIT_TRACE	_IOR('c', 1, unsigned long)
#define KCOV_ENABLE	_IO('c', 100)
#define KCOV_TRACE_PC	0
#define COVER_SIZE	(1UL << 18)	/* PCs per op */
#define SLOTS		(1UL << 17)	/* distinct module PCs */

struct kcov_shared {
	uint64_t lo, hi;
	unsigned long covered;
	unsigned long newpcs;
	uint64_t slot[SLOTS];
};

static struct kcov_shared *shared;
static int kcov_fd = -1;
static unsigned long *area;

void fz_kcov_setup_shared(uint64_t text_start, uint64_t text_len)
{
	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED) {
		shared = NULL;
		return;
	}
	shared->lo = text_start;
	shared->hi = text_start + text_len;
}

/* In the worker, before it drops privileges: 0 or -1. */
int fz_kcov_open(void)
{
	if (!shared)
		return -1;
	kcov_fd = open("/sys/kernel/debug/kcov", O_RDWR | O_CLOEXEC);
	if (kcov_fd < 0)
		return -1;
	if (ioctl(kcov_fd, KCOV_INIT_TRACE, COVER_SIZE))
		goto fail;
	area = mmap(NULL, COVER_SIZE * sizeof(unsigned long),
		    PROT_READ | PROT_WRITE, MAP_SHARED, kcov_fd, 0);
	if (area == MAP_FAILED)
		goto fail;
	return 0;
fail:
	close(kcov_fd);
	kcov_fd = -1;
	area = NULL;
	return -1;
}

void fz_kcov_enable(void)
{
	if (kcov_fd < 0)
		return;
	if (ioctl(kcov_fd, KCOV_ENABLE, KCOV_TRACE_PC)) {
		perror("fosfuzz: KCOV_ENABLE");
		close(kcov_fd);
		kcov_fd = -1;
		return;
	}
	__atomic_store_n(&area[0], 0, __ATOMIC_RELAXED);
}

static void insert(uint64_t pc)
{
	uint64_t h = (pc * 0x9e3779b97f4a7c15ULL) >> 40;
	unsigned long i, k;

	for (k = 0; k < SLOTS; k++) {
		uint64_t expect = 0;

		i = (h + k) % SLOTS;
		if (__atomic_load_n(&shared->slot[i], __ATOMIC_RELAXED) == pc)
			return;
		if (__atomic_compare_exchange_n(&shared->slot[i], &expect, pc, 0,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
			__atomic_add_fetch(&shared->covered, 1, __ATOMIC_RELAXED);
			__atomic_add_fetch(&shared->newpcs, 1, __ATOMIC_RELAXED);
			return;
		}
		if (expect == pc)
			return;
	}
}

/* After each op of the worker (its own thread only). */
void fz_kcov_collect(void)
{
	unsigned long n, i;

	if (kcov_fd < 0)
		return;
	n = __atomic_load_n(&area[0], __ATOMIC_RELAXED);
	if (n >= COVER_SIZE)
		n = COVER_SIZE - 1;
	for (i = 0; i < n; i++) {
		uint64_t pc = area[i + 1];

		if (pc >= shared->lo && pc < shared->hi)
			insert(pc);
	}
	__atomic_store_n(&area[0], 0, __ATOMIC_RELAXED);
}

unsigned long fz_kcov_covered(void)
{
	return shared ? shared->covered : 0;
}

unsigned long fz_kcov_new(void)
{
	return shared ? shared->newpcs : 0;
}

void fz_kcov_reset_new(void)
{
	if (shared)
		shared->newpcs = 0;
}
