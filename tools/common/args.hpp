/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The tools' argument parsing (libftools): the program's name and exit
 * codes, usage errors, numbers, prefixes of command names, the words of a
 * line.
 */
#ifndef FTOOLS_ARGS_HPP
#define FTOOLS_ARGS_HPP

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ftools {

/* The name messages start with ("fractctl"); main() may change it. */
extern const char *progname;

/* Exit codes; usage errors share 1 with every other error. */
constexpr int exit_ok = 0;
constexpr int exit_error = 1;
constexpr int exit_usage = 1;

/*
 * "fractctl: node add: bad ..., try "fractctl node help"."  @fmt has one
 * %s, for @arg.
 */
int usage_error(const char *cmd, const char *fmt, const char *arg);

/* A decimal number in [lo, hi], nothing else (no sign, no blanks). */
std::optional<std::uint64_t> parse_uint(std::string_view s, std::uint64_t lo, std::uint64_t hi);

/* iproute2's matches(): @arg is a non-empty prefix of @name. */
bool matches(const char *arg, const char *name);

/*
 * The words of one line of fractos.conf(5) or of a row file: separated by
 * blanks, a word that starts with # ends the line.
 */
std::vector<std::string_view> words(std::string_view line);

/* A key id as people and JSON see it: eight hex digits. */
std::string hex32(std::uint32_t v);

} // namespace ftools

#endif /* FTOOLS_ARGS_HPP */
