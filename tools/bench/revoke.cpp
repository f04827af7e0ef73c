// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fractos-bench's revoke group: CAP_REVOKE of a Memory held by 1, 10, 100
 * and -H spaces of this process.
 */
#include "harness.hpp"

#include <algorithm>
#include <cmath>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

namespace fbench {

/* ---- group: revoke one capability held by N spaces ------------------------ */

/*
 * A Memory object of an owner space is exported once (CAP_EXPORT) and
 * imported into N other spaces (N opens of the device in this process);
 * the timed operation is the owner's CAP_REVOKE, which revokes every
 * holder's capability.  Set-up and the holders' CAP_CLOSEs are untimed.
 * N = 1, 10, 100 and -H (default 1000) take turns in -r rounds; each
 * round gives each N at least one revocation and at most 1/rounds of -t
 * (set-up included).  RLIMIT_NOFILE is raised to fit; if the hard limit
 * is too low, the larger N are skipped.
 */
void bench_revoke()
{
	watchdog("revoke");
	print_header("CAP_REVOKE of a Memory held by N spaces");

	std::vector<unsigned> ns;
	for (unsigned n : {1u, 10u, 100u})
		if (n < opt.holders)
			ns.push_back(n);
	ns.push_back(opt.holders);

	struct rlimit rl {};
	check_sys(getrlimit(RLIMIT_NOFILE, &rl), "getrlimit");
	rlim_t need = (rlim_t)opt.holders + 64;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
		rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ? need :
			      std::min(need, rl.rlim_max);
		check_sys(setrlimit(RLIMIT_NOFILE, &rl), "setrlimit");
	}
	unsigned maxn = opt.holders;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need)
		maxn = rl.rlim_cur > 64 ? (unsigned)(rl.rlim_cur - 64) : 0;

	int owner = space_open();
	std::vector<int> spaces;
	for (unsigned i = 0; i < std::min(maxn, opt.holders); i++)
		spaces.push_back(space_open());
	std::vector<uint32_t> held(spaces.size());
	char *buf = (char *)mmap(nullptr, 4096, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (buf == MAP_FAILED)
		die_err("mmap", errno);

	struct Acc {
		std::vector<double> samples;
		std::vector<uint64_t> rsum, rn;
	};
	std::vector<Acc> acc(ns.size());
	const uint64_t budget = (uint64_t)(opt.seconds * 1e9) / opt.rounds;
	const uint64_t most = std::max<uint64_t>(1, opt.iters / opt.rounds);

	for (size_t k = 0; k < ns.size(); k++) {
		acc[k].rsum.assign(opt.rounds, 0);
		acc[k].rn.assign(opt.rounds, 0);
	}
	/* rep < 0: one untimed warm-up round */
	for (int r = -1; r < (int)opt.rounds; r++) {
		for (size_t k = 0; k < ns.size(); k++) {
			unsigned n = ns[k];

			if (n > spaces.size())
				continue;
			uint64_t t0 = now_ns(), reps = 0;
			do {
				struct fractos_memory_create mc {};
				mc.addr = (uintptr_t)buf;
				mc.len = 4096;
				mc.perms = FRACTOS_PERM_ALL;
				fos(owner, FRACTOS_IOC_MEMORY_CREATE, &mc);
				struct fractos_cap_export ex {};
				ex.cid = mc.cid;
				ex.flags = FRACTOS_EXPORT_CLOEXEC;
				fos(owner, FRACTOS_IOC_CAP_EXPORT, &ex);
				for (unsigned i = 0; i < n; i++) {
					struct fractos_cap_import im {};

					im.fd = ex.fd;
					fos(spaces[i], FRACTOS_IOC_CAP_IMPORT, &im);
					held[i] = im.cid;
				}
				check_sys(close(ex.fd), "close exported fd");

				struct fractos_cap_arg rv {};
				rv.cid = mc.cid;
				uint64_t a = now_ns();
				fos(owner, FRACTOS_IOC_CAP_REVOKE, &rv);
				uint64_t e = now_ns();

				struct fractos_cap_info ci {};
				ci.cid = held[n - 1];
				fos(spaces[n - 1], FRACTOS_IOC_CAP_INFO, &ci);
				if (!(ci.info_flags & FRACTOS_INFO_REVOKED))
					die("revoke: holder %u's capability is not revoked", n);
				for (unsigned i = 0; i < n; i++)
					cap_close(spaces[i], held[i]);
				cap_close(owner, mc.cid);
				reps++;
				if (r >= 0) {
					acc[k].samples.push_back((double)(e - a));
					acc[k].rsum[r] += e - a;
					acc[k].rn[r]++;
				}
			} while (r >= 0 && now_ns() - t0 < budget && reps < most);
		}
	}
	group_seq++;
	for (size_t k = 0; k < ns.size(); k++) {
		std::string name = "CAP_REVOKE held by " + std::to_string(ns[k]) +
				   " spaces";
		if (ns[k] > spaces.size()) {
			skip(name, "RLIMIT_NOFILE hard limit " +
				   std::to_string((unsigned long long)rl.rlim_max) +
				   " is too low");
			continue;
		}
		Result res;
		uint64_t sum = 0, cnt = 0;
		res.name = name;
		for (unsigned r = 0; r < opt.rounds; r++) {
			sum += acc[k].rsum[r];
			cnt += acc[k].rn[r];
			res.round_ns.push_back(acc[k].rn[r] ?
				(double)acc[k].rsum[r] / (double)acc[k].rn[r] : NAN);
		}
		res.iters = cnt;
		res.avg_ns = (double)std::max<uint64_t>(sum, 1) / (double)cnt;
		res.p50_ns = pct(acc[k].samples, 0.50);
		res.p99_ns = pct(acc[k].samples, 0.99);
		res.gid = group_seq;
		results.push_back(res);
		print_row(results.back());
	}

	for (int s : spaces)
		space_close(s, 0, "revoke holder");
	space_close(owner, 0, "revoke owner");
	check_sys(munmap(buf, 4096), "munmap");
	watchdog(nullptr);
}

} // namespace fbench
