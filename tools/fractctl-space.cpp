// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fractctl space: the capability spaces open on this node, as ss -p shows
 * sockets.  Each open file of /dev/fractos is a space; its process's
 * /proc/PID/fdinfo/FD says how many capabilities it holds, how many
 * contacts it names and how much Memory it marked stealable, and has one
 * line per contact ("Contacts" in the uAPI header).  A process whose /proc
 * entries the caller may not read (another user's, unless root) is left
 * out and counted on stderr.
 *
 *   fractctl [-j] space [list]
 *   fractctl [-j] space contacts
 */
#include "fractctl.hpp"

#include <dirent.h>
#include <unistd.h>

#include <cinttypes>
#include <fstream>

namespace fractctl {
namespace {

/* One "fractos-contact:" line of a space's fdinfo. */
struct contact_row {
	std::uint64_t id = 0;
	std::uint64_t node = 0, epoch = 0, oid = 0; /* its Request's name */
	bool armed = false;
	std::uint64_t stealable = 0;
	bool revoked = false;
};

struct space_row {
	long pid = 0;
	int fd = -1;
	std::string comm;
	std::uint64_t caps = 0;
	std::uint64_t contacts = 0;
	std::uint64_t stealable = 0;
	std::vector<contact_row> contact_list;
};

/*
 * "ID NODE:EPOCH:OID armed A stealable N revoked R"; nullopt if the line
 * is not that (a newer module's format: left out rather than misread).
 */
std::optional<contact_row> parse_contact(std::string_view l)
{
	contact_row c;
	auto word = [&l]() {
		while (!l.empty() && (l[0] == ' ' || l[0] == '\t'))
			l.remove_prefix(1);
		std::size_t n = l.find_first_of(" \t");
		std::string_view w = l.substr(0, n);
		l.remove_prefix(n == std::string_view::npos ? l.size() : n);
		return w;
	};
	auto num = [&](std::string_view w, std::uint64_t hi, std::uint64_t &out) {
		auto v = parse_uint(w, 0, hi);
		if (v)
			out = *v;
		return v.has_value();
	};
	auto named = [&](std::string_view name, std::uint64_t hi, std::uint64_t &out) {
		return word() == name && num(word(), hi, out);
	};
	std::uint64_t armed, revoked;

	if (!num(word(), UINT32_MAX, c.id))
		return std::nullopt;
	std::string_view name = word();
	std::size_t a = name.find(':'), b = name.rfind(':');
	if (a == std::string_view::npos || a == b ||
	    !num(name.substr(0, a), UINT32_MAX, c.node) ||
	    !num(name.substr(a + 1, b - a - 1), UINT32_MAX, c.epoch) ||
	    !num(name.substr(b + 1), UINT64_MAX, c.oid))
		return std::nullopt;
	if (!named("armed", 1, armed) || !named("stealable", UINT32_MAX, c.stealable) ||
	    !named("revoked", 1, revoked) || !word().empty())
		return std::nullopt;
	c.armed = armed;
	c.revoked = revoked;
	return c;
}

/* A directory's numeric entries (pids, fds), in ascending order. */
std::vector<long> numeric_entries(const std::string &dir)
{
	std::vector<long> out;
	DIR *d = opendir(dir.c_str());

	if (!d)
		return out;
	while (const dirent *e = readdir(d)) {
		auto v = parse_uint(e->d_name, 0, INT32_MAX);
		if (v)
			out.push_back(long(*v));
	}
	closedir(d);
	std::sort(out.begin(), out.end());
	return out;
}

/* The fdinfo of one space: false if it is not readable or not a space's. */
bool read_fdinfo(const std::string &path, space_row &row)
{
	std::ifstream f(path);
	std::string line;
	bool caps = false;

	if (!f)
		return false;
	while (std::getline(f, line)) {
		auto field = [&](const char *key, std::uint64_t &out) {
			std::string_view l(line);
			std::size_t n = std::strlen(key);
			if (l.substr(0, n) != key)
				return false;
			l.remove_prefix(n);
			while (!l.empty() && (l[0] == ' ' || l[0] == '\t'))
				l.remove_prefix(1);
			auto v = parse_uint(l, 0, UINT64_MAX);
			if (v)
				out = *v;
			return v.has_value();
		};
		caps |= field("fractos-caps:", row.caps);
		field("fractos-contacts:", row.contacts);
		field("fractos-stealable:", row.stealable);
		constexpr std::string_view contact_key = "fractos-contact:";
		if (std::string_view(line).substr(0, contact_key.size()) == contact_key)
			if (auto c = parse_contact(std::string_view(line).substr(contact_key.size())))
				row.contact_list.push_back(*c);
	}
	return caps;
}

std::vector<space_row> list_spaces(unsigned &hidden)
{
	const std::string proc = rooted("/proc");
	std::vector<space_row> rows;

	hidden = 0;
	for (long pid : numeric_entries(proc)) {
		const std::string base = proc + "/" + std::to_string(pid);
		const std::string fddir = base + "/fd";
		if (access(fddir.c_str(), R_OK | X_OK)) {
			if (errno == EACCES)
				hidden++;
			continue;
		}
		std::string comm;
		for (long fd : numeric_entries(fddir)) {
			char target[256];
			const std::string link = fddir + "/" + std::to_string(fd);
			ssize_t n = readlink(link.c_str(), target, sizeof(target) - 1);
			if (n <= 0)
				continue;
			target[n] = '\0';
			if (std::strcmp(target, FRACTOS_DEVICE))
				continue;
			space_row row;
			row.pid = pid;
			row.fd = int(fd);
			if (!read_fdinfo(base + "/fdinfo/" + std::to_string(fd), row))
				continue; /* closed meanwhile */
			if (comm.empty()) {
				std::ifstream c(base + "/comm");
				std::getline(c, comm);
			}
			row.comm = comm;
			rows.push_back(std::move(row));
		}
	}
	return rows;
}

/* The spaces the caller may read; how many it may not, on stderr. */
std::vector<space_row> readable_spaces()
{
	unsigned hidden;
	auto rows = list_spaces(hidden);

	if (hidden)
		std::fprintf(stderr, "%s: space: %u processes not readable (not shown)\n",
			     progname, hidden);
	return rows;
}

/* The keys of a space's process and descriptor, in an open JSON object. */
void json_space(json_writer &j, const space_row &r)
{
	j.num("pid", std::uint64_t(r.pid));
	j.str("comm", r.comm);
	j.num("fd", std::uint64_t(r.fd));
}

int space_list(const options &opts, int argc, char **argv)
{
	if (argc > 0)
		return usage_error("space", "unexpected argument \"%s\"", argv[0]);
	auto rows = readable_spaces();
	if (opts.json) {
		json_writer j(json_writer::top::array);
		for (const auto &r : rows) {
			j.begin();
			json_space(j, r);
			j.num("caps", r.caps);
			j.num("contacts", r.contacts);
			j.num("stealable", r.stealable);
			j.end();
		}
		std::printf("%s\n", j.finish().c_str());
		return exit_ok;
	}
	for (const auto &r : rows)
		std::printf("pid %ld (%s) fd %d: caps %" PRIu64 " contacts %" PRIu64
			    " stealable %" PRIu64 "\n",
			    r.pid, r.comm.c_str(), r.fd, r.caps, r.contacts, r.stealable);
	return exit_ok;
}

/* Every contact of every space: one line (or object) each. */
int space_contacts(const options &opts, int argc, char **argv)
{
	if (argc > 0)
		return usage_error("space", "unexpected argument \"%s\"", argv[0]);
	auto rows = readable_spaces();
	if (opts.json) {
		json_writer j(json_writer::top::array);
		for (const auto &r : rows)
			for (const auto &c : r.contact_list) {
				j.begin();
				json_space(j, r);
				j.num("id", c.id);
				j.begin("request");
				j.num("node", c.node);
				j.num("epoch", c.epoch);
				j.num("oid", c.oid);
				j.end();
				j.boolean("armed", c.armed);
				j.num("stealable", c.stealable);
				j.boolean("revoked", c.revoked);
				j.end();
			}
		std::printf("%s\n", j.finish().c_str());
		return exit_ok;
	}
	for (const auto &r : rows)
		for (const auto &c : r.contact_list)
			std::printf("pid %ld (%s) fd %d contact %" PRIu64 ": request %" PRIu64
				    ":%" PRIu64 ":%" PRIu64 " armed %s stealable %" PRIu64
				    "%s\n",
				    r.pid, r.comm.c_str(), r.fd, c.id, c.node, c.epoch, c.oid,
				    c.armed ? "yes" : "no", c.stealable,
				    c.revoked ? " revoked" : "");
	return exit_ok;
}

int space_help(const options &, int, char **)
{
	std::printf("Usage: %s [-j] space [ list | contacts ]\n"
		    "Every open space of this node: its process, fd, capabilities,\n"
		    "contacts and Memory marked stealable; or every contact of every\n"
		    "space: its Request, whether another node keeps it armed for node\n"
		    "loss, the Memory marked for it, and whether it was revoked.\n",
		    progname);
	return exit_ok;
}

const subcommand space_subcommands[] = {
	{"list", space_list},
	{"show", space_list},
	{"contacts", space_contacts},
	{"help", space_help},
};

} // namespace

int do_space(const options &opts, int argc, char **argv)
{
	if (argc == 0)
		return space_list(opts, 0, argv);
	for (const auto &c : space_subcommands)
		if (matches(argv[0], c.name))
			return c.fn(opts, argc - 1, argv + 1);
	return usage_error("space", "unknown command \"%s\"", argv[0]);
}

} // namespace fractctl
