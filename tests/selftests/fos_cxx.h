/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the C++ selftests share: running a command for its output,
 * comparing an error value to an errno, and the module's live counters.
 */
#ifndef FOS_CXX_H
#define FOS_CXX_H

#include <caladan/caladan.hpp>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

/* Run @cmd; its stdout, and its exit status in *@rc (-1: not run). */
static inline std::string fos_run(const std::string &cmd, int *rc)
{
	std::string out;
	char buf[512];
	FILE *f = popen(cmd.c_str(), "r");

	if (!f) {
		*rc = -1;
		return out;
	}
	while (std::fgets(buf, sizeof(buf), f))
		out += buf;
	int st = pclose(f);
	*rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	return out;
}

/* True if @ec is errno @e. */
static inline bool fos_is_errno(const std::error_code &ec, int e)
{
	return ec == caladan::errno_code(e);
}

/* /sys/class/misc/fractos/live/@name, or -1. */
static inline long long fos_live_count(const char *name)
{
	std::ifstream f(std::string("/sys/class/misc/fractos/live/") + name);
	long long v = -1;

	f >> v;
	return f ? v : -1;
}

/* The counters a test leaves as it found them. */
struct fos_live_set {
	static constexpr std::array<const char *, 8> names = {
		"spaces", "objects", "caps", "memories", "pinned_pages", "requests",
		"monitors", "dmabufs",
	};
	std::array<long long, names.size()> v{};

	static fos_live_set read()
	{
		fos_live_set s;

		for (std::size_t i = 0; i < names.size(); i++)
			s.v[i] = fos_live_count(names[i]);
		return s;
	}
	/* "name a->b" for each that differs from @o. */
	std::string diff(const fos_live_set &o) const
	{
		std::string d;

		for (std::size_t i = 0; i < names.size(); i++)
			if (v[i] != o.v[i])
				d += std::string(" ") + names[i] + " " + std::to_string(v[i]) +
				     "->" + std::to_string(o.v[i]);
		return d;
	}
};

/* Waits up to @ms for the counters to be @want again (a dead process's
 * files are released asynchronously); the difference left, "" if none. */
static inline std::string fos_live_wait(const fos_live_set &want, int ms)
{
	for (;; ms -= 10) {
		std::string d = want.diff(fos_live_set::read());
		if (d.empty() || ms <= 0)
			return d;
		usleep(10000);
	}
}

/*
 * Waits up to 30 s for @lookup (a daemon's client lookup of the name it
 * publishes) to succeed: its result; ESRCH if the daemon @pid exited
 * first, ETIMEDOUT.
 */
template <class F>
static inline auto fos_wait_published(pid_t pid, F lookup) -> decltype(lookup())
{
	for (int i = 0; i < 300; i++) {
		auto c = lookup();
		if (c)
			return c;
		if (waitpid(pid, nullptr, WNOHANG) == pid)
			return caladan::errno_code(ESRCH);
		usleep(100000);
	}
	return caladan::errno_code(ETIMEDOUT);
}

/* waitpid() for @pid, up to @ms: its status, or -1. */
static inline int fos_wait_child(pid_t pid, int ms)
{
	int status;

	for (; ms > 0; ms -= 5) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;
		usleep(5000);
	}
	return -1;
}

#endif /* FOS_CXX_H */
