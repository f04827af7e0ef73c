// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fractos-bench's copy group: FRACTOS_IOC_MEMORY_COPY between two local
 * Memory objects vs memcpy().
 */
#include "harness.hpp"

#include <cstring>
#include <sys/mman.h>

namespace fbench {

/* ---- group: memory_copy ------------------------------------------------- */

void bench_copy()
{
	watchdog("copy");
	print_header("memory_copy vs memcpy");

	const size_t max = 1 << 20;
	const size_t sizes[] = {1, 4096, 65536, max};
	const char *labels[] = {"1B", "4KiB", "64KiB", "1MiB"};
	void *src = mmap(nullptr, max, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (src == MAP_FAILED)
		die_err("mmap", errno);
	void *dst = mmap(nullptr, max, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (dst == MAP_FAILED)
		die_err("mmap", errno);
	memset(src, 0xa5, max);
	memset(dst, 0, max);

	int fd = space_open();
	uint32_t cids[2];
	void *bufs[2] = {src, dst};
	for (int i = 0; i < 2; i++) {
		struct fractos_memory_create mc {};

		mc.addr = (uintptr_t)bufs[i];
		mc.len = max;
		mc.perms = FRACTOS_PERM_ALL;
		if (ioctl(fd, FRACTOS_IOC_MEMORY_CREATE, &mc) != 0) {
			int err = errno;

			if (err == ENOMEM)
				die("MEMORY_CREATE of %zu bytes: %s (RLIMIT_MEMLOCK "
				    "too small? try ulimit -l unlimited)", max,
				    strerror(err));
			die_err("ioctl MEMORY_CREATE", err);
		}
		cids[i] = mc.cid;
	}

	struct fractos_memory_copy mcs[4] = {};
	for (size_t s = 0; s < 4; s++) {
		struct fractos_memory_copy &mc = mcs[s];
		size_t n = sizes[s];

		mc.src = cids[0];
		mc.dst = cids[1];
		mc.len = n;
		/* One checked copy first: the data must arrive. */
		memset(src, (int)(0x11 * (s + 1)), n);
		memset(dst, 0, n);
		fos(fd, FRACTOS_IOC_MEMORY_COPY, &mc);
		if (mc.copied != n || memcmp(src, dst, n) != 0)
			die("MEMORY_COPY of %zu bytes: data did not arrive "
			    "(copied %" PRIu64 ")", n, (uint64_t)mc.copied);
		measure(std::string("MEMORY_COPY ioctl ") + labels[s], 1,
			[fd, &mc] { fos(fd, FRACTOS_IOC_MEMORY_COPY, &mc); });
		measure(std::string("memcpy ") + labels[s], 1, [dst, src, n] {
			memcpy(dst, src, n);
			asm volatile("" : : "r"(dst), "r"(src) : "memory");
		});
	}
	run_group();

	cap_close(fd, cids[0]);
	cap_close(fd, cids[1]);
	space_close(fd, 0, "copy");
	check_sys(munmap(src, max), "munmap");
	check_sys(munmap(dst, max), "munmap");
	watchdog(nullptr);
}

} // namespace fbench
