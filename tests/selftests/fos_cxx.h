/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the C++ selftests share: running a command for its output and
 * comparing an error value to an errno.
 */
#ifndef FOS_CXX_H
#define FOS_CXX_H

#include <caladan/caladan.hpp>

#include <cstdio>
#include <string>
#include <sys/wait.h>

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

#endif /* FOS_CXX_H */
