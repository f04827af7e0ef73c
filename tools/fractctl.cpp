// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fractctl: inspect the fractos module.
 *
 *   fractctl [-j] status    module presence, version, node, epoch, limits
 *                           and live-object counters
 *   fractctl help
 *
 * Subcommands are a table (commands[] below), matched by unique-enough
 * prefix as in iproute2 ("fractctl st" is "status").  Netlink-based
 * subcommands for the RDMA fabric will be added to the same table.
 */
#include <caladan/caladan.hpp>
#include <caladan/sysfs.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace caladan;

const char *progname = "fractctl";

struct options {
	bool json = false;
};

/* ---- output --------------------------------------------------------- */

/* A minimal JSON writer: one object, nested objects, strings and numbers. */
class json_writer {
public:
	json_writer() { out_ = "{"; first_.push_back(true); }

	void begin(std::string_view key)
	{
		this->key(key);
		out_ += '{';
		first_.push_back(true);
	}
	void end()
	{
		out_ += '}';
		first_.pop_back();
	}
	void str(std::string_view key, std::string_view v)
	{
		this->key(key);
		quote(v);
	}
	void num(std::string_view key, std::uint64_t v)
	{
		this->key(key);
		out_ += std::to_string(v);
	}
	/* @p v must be valid JSON (e.g. a number). */
	void raw(std::string_view key, std::string_view v)
	{
		this->key(key);
		out_ += v;
	}
	void boolean(std::string_view key, bool v)
	{
		this->key(key);
		out_ += v ? "true" : "false";
	}
	std::string finish()
	{
		while (!first_.empty())
			end();
		return out_;
	}

private:
	void key(std::string_view k)
	{
		if (!first_.back())
			out_ += ',';
		first_.back() = false;
		quote(k);
		out_ += ':';
	}
	void quote(std::string_view s)
	{
		out_ += '"';
		for (unsigned char c : s) {
			if (c == '"' || c == '\\') {
				out_ += '\\';
				out_ += char(c);
			} else if (c < 0x20) {
				char buf[8];
				std::snprintf(buf, sizeof(buf), "\\u%04x", c);
				out_ += buf;
			} else {
				out_ += char(c);
			}
		}
		out_ += '"';
	}

	std::string out_;
	std::vector<bool> first_;
};

/*
 * Paths can be moved under a prefix (FRACTCTL_ROOT) so that the tool can
 * be tested against a fake sysfs tree; unset in normal use.
 */
std::string rooted(const char *path)
{
	const char *root = std::getenv("FRACTCTL_ROOT");
	return root && *root ? std::string(root) + path : std::string(path);
}

/* ---- status --------------------------------------------------------- */

/* A plain unsigned decimal that JSON can carry as a number. */
bool is_number(const std::string &s)
{
	if (s.empty() || s.size() > 19 || (s.size() > 1 && s[0] == '0'))
		return false;
	for (char c : s)
		if (c < '0' || c > '9')
			return false;
	return true;
}

struct status_report {
	bool loaded = false;
	std::optional<std::string> version;
	std::optional<std::uint64_t> abi_version, node, epoch, max_caps;
	std::optional<std::vector<std::pair<std::string, std::string>>> params;
	std::optional<sysfs::live_counters> live;
	std::vector<std::pair<std::string, std::error_code>> errors;
};

template <class T, class R>
void take(std::optional<T> &dst, R &&r, const char *what, status_report &rep)
{
	if (r)
		dst = *r;
	else
		rep.errors.emplace_back(what, r.error());
}

status_report collect_status()
{
	status_report rep;
	const std::string moddir = rooted(sysfs::module_dir);

	rep.loaded = sysfs::module_loaded(moddir.c_str());
	if (!rep.loaded)
		return rep;

	/* Counters first: opening the device below adds a space of our own. */
	take(rep.live, sysfs::read_live_counters(rooted(sysfs::live_dir).c_str()), "live", rep);
	take(rep.version, sysfs::module_version(moddir.c_str()), "version", rep);
	take(rep.params, sysfs::module_params(moddir.c_str()), "params", rep);

	auto sp = space::open(rooted(FRACTOS_DEVICE).c_str());
	result<space_info> info = sp ? sp->info() : result<space_info>(sp.error());
	if (info) {
		rep.abi_version = info->abi_version;
		rep.node = info->node;
		rep.epoch = info->epoch;
		rep.max_caps = info->max_caps;
		return rep;
	}
	/* No usable device: fall back on the module parameters. */
	rep.errors.emplace_back("device", info.error());
	take(rep.node, sysfs::module_param("node_id", moddir.c_str()), "node", rep);
	take(rep.epoch, sysfs::module_param("epoch", moddir.c_str()), "epoch", rep);
	take(rep.max_caps, sysfs::module_param("max_caps", moddir.c_str()), "max_caps", rep);
	return rep;
}

void print_status_json(const status_report &rep)
{
	json_writer j;
	j.boolean("loaded", rep.loaded);
	if (rep.loaded) {
		j.str("device", FRACTOS_DEVICE);
		if (rep.version)
			j.str("version", *rep.version);
		auto opt = [&](const char *k, const std::optional<std::uint64_t> &v) {
			if (v)
				j.num(k, *v);
		};
		opt("abi_version", rep.abi_version);
		opt("node", rep.node);
		opt("epoch", rep.epoch);
		opt("max_caps", rep.max_caps);
		if (rep.params) {
			j.begin("params");
			for (const auto &[name, value] : *rep.params) {
				if (is_number(value))
					j.raw(name, value);
				else
					j.str(name, value);
			}
			j.end();
		}
		if (rep.live) {
			j.begin("live");
			for (const auto &f : sysfs::live_counter_fields)
				j.num(f.name, (*rep.live).*f.field);
			j.end();
		}
		if (!rep.errors.empty()) {
			j.begin("errors");
			for (const auto &[what, ec] : rep.errors)
				j.str(what, describe(ec));
			j.end();
		}
	}
	std::printf("%s\n", j.finish().c_str());
}

void print_status_text(const status_report &rep)
{
	auto line = [](const char *k, const std::string &v) {
		std::printf("%-14s %s\n", k, v.c_str());
	};
	auto opt = [&](const char *k, const std::optional<std::uint64_t> &v) {
		if (v)
			line(k, std::to_string(*v));
	};

	line("module", rep.loaded ? "loaded" : "not loaded");
	if (!rep.loaded)
		return;
	if (rep.version)
		line("version", *rep.version);
	opt("abi_version", rep.abi_version);
	opt("node", rep.node);
	opt("epoch", rep.epoch);
	opt("max_caps", rep.max_caps);
	if (rep.params) {
		std::printf("params\n");
		for (const auto &[name, value] : *rep.params)
			std::printf("  %-14s %s\n", name.c_str(), value.c_str());
	}
	if (rep.live) {
		std::printf("live\n");
		for (const auto &f : sysfs::live_counter_fields)
			std::printf("  %-14s %llu\n", f.name,
				    (unsigned long long)((*rep.live).*f.field));
	}
	for (const auto &[what, ec] : rep.errors)
		std::fprintf(stderr, "%s: %s: %s\n", progname, what.c_str(), describe(ec).c_str());
}

int do_status(const options &opts, int argc, char **argv)
{
	if (argc > 0) {
		std::fprintf(stderr, "%s: status: unexpected argument \"%s\"\n", progname, argv[0]);
		return 1;
	}
	status_report rep = collect_status();
	if (opts.json)
		print_status_json(rep);
	else
		print_status_text(rep);
	if (!rep.loaded) {
		std::fprintf(stderr,
			     "%s: the fractos module is not loaded (%s does not exist); "
			     "load it with \"insmod fractos.ko\" or \"modprobe fractos\"\n",
			     progname, rooted(sysfs::module_dir).c_str());
		return 2;
	}
	return rep.errors.empty() ? 0 : 1;
}

/* ---- command table ---------------------------------------------------- */

int do_help(const options &, int, char **);

struct command {
	const char *name;
	int (*fn)(const options &, int argc, char **argv);
	const char *summary;
};

const command commands[] = {
	{"status", do_status, "module state, limits and live-object counters"},
	{"help", do_help, "this text"},
};

void usage(FILE *f)
{
	std::fprintf(f,
		     "Usage: %s [ OPTIONS ] COMMAND\n"
		     "       %s help\n"
		     "OPTIONS := { -j[son] | -V[ersion] | -h[elp] }\n"
		     "COMMAND := {",
		     progname, progname);
	for (std::size_t i = 0; i < std::size(commands); i++)
		std::fprintf(f, "%s %s", i ? " |" : "", commands[i].name);
	std::fprintf(f, " }\n\n");
	for (const auto &c : commands)
		std::fprintf(f, "  %-8s %s\n", c.name, c.summary);
	std::fprintf(f,
		     "\n"
		     "status exits 0 if the module is loaded and everything was read,\n"
		     "2 if the module is not loaded, 1 on errors.\n");
}

int do_help(const options &, int, char **)
{
	usage(stdout);
	return 0;
}

/* iproute2's matches(): @arg is a non-empty prefix of @name. */
bool matches(const char *arg, const char *name)
{
	std::size_t n = std::strlen(arg);
	return n && std::strncmp(arg, name, n) == 0;
}

void print_version()
{
	std::printf("%s utility, libcaladan %s, uapi abi %d\n", progname, caladan::version(),
		    FRACTOS_ABI_VERSION);
}

} // namespace

int main(int argc, char **argv)
{
	options opts;

	for (--argc, ++argv; argc > 0 && argv[0][0] == '-'; --argc, ++argv) {
		const char *opt = argv[0] + 1;
		if (*opt == '-')
			opt++; /* --json == -json == -j */
		if (!*opt) {
			--argc, ++argv; /* "--" ends the options */
			break;
		}
		if (matches(opt, "json")) {
			opts.json = true;
		} else if (matches(opt, "Version")) {
			print_version();
			return 0;
		} else if (matches(opt, "help")) {
			usage(stdout);
			return 0;
		} else {
			std::fprintf(stderr, "%s: option \"%s\" is unknown, try \"%s help\".\n",
				     progname, argv[0], progname);
			return 1;
		}
	}

	if (argc == 0) {
		usage(stderr);
		return 1;
	}
	for (const auto &c : commands)
		if (matches(argv[0], c.name))
			return c.fn(opts, argc - 1, argv + 1);

	std::fprintf(stderr, "%s: unknown command \"%s\"\n", progname, argv[0]);
	usage(stderr);
	return 1;
}
