// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The tools' argument parsing (libftools): progname, usage_error() and
 * the parsers of args.hpp.
 */
#include "args.hpp"

#include <cstdio>
#include <cstring>

namespace ftools {

const char *progname = "fractctl";

int usage_error(const char *cmd, const char *fmt, const char *arg)
{
	std::string_view top(cmd);

	top = top.substr(0, top.find(' '));
	std::fprintf(stderr, "%s: %s: ", progname, cmd);
	std::fprintf(stderr, fmt, arg);
	std::fprintf(stderr, ", try \"%s %.*s help\".\n", progname, int(top.size()),
		     top.data());
	return exit_usage;
}

std::optional<std::uint64_t> parse_uint(std::string_view s, std::uint64_t lo, std::uint64_t hi)
{
	std::uint64_t v = 0;

	if (s.empty() || s.size() > 20)
		return std::nullopt;
	for (char c : s) {
		if (c < '0' || c > '9')
			return std::nullopt;
		std::uint64_t d = std::uint64_t(c - '0');
		if (v > (UINT64_MAX - d) / 10)
			return std::nullopt;
		v = v * 10 + d;
	}
	if (v < lo || v > hi)
		return std::nullopt;
	return v;
}

bool matches(const char *arg, const char *name)
{
	std::size_t n = std::strlen(arg);
	return n && std::strncmp(arg, name, n) == 0;
}

std::vector<std::string_view> words(std::string_view line)
{
	std::vector<std::string_view> w;
	std::size_t i = 0;

	while (i < line.size()) {
		while (i < line.size() && (line[i] == ' ' || line[i] == '\t'))
			i++;
		if (i == line.size() || line[i] == '#')
			break;
		std::size_t j = i;
		while (j < line.size() && line[j] != ' ' && line[j] != '\t')
			j++;
		w.push_back(line.substr(i, j - i));
		i = j;
	}
	return w;
}

std::string hex32(std::uint32_t v)
{
	char buf[16];
	std::snprintf(buf, sizeof(buf), "%08x", unsigned(v));
	return buf;
}

} // namespace ftools
