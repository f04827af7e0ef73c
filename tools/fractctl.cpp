// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fractctl: inspect the fractos module and configure its RDMA fabric.
 *
 *   fractctl [-j] status              module presence, version, node, epoch,
 *                                     limits and live-object counters (sysfs)
 *   fractctl [-j] [-s] node [list|show [ID]]
 *   fractctl node add ID ADDR[:PORT] [trust-uids]
 *                                     ADDR is IPv4, or [IPv6]:PORT;
 *                                     trust-uids: name lookups from the
 *                                     node may see its users' own names
 *   fractctl node del ID
 *   fractctl [-j] link [list]         RDMA devices the fabric uses
 *   fractctl [-j] stats               local node, listen port, counters
 *   fractctl [-j] ping ID [-c COUNT]  round trips to a node
 *   fractctl [-j] secret [show]       how this node admits others
 *   fractctl secret set [FILE]        the cluster secret, from FILE or stdin
 *   fractctl secret insecure          admit insecure nodes, unauthenticated
 *   fractctl secret forget [ all | cluster | node ID [ all ] ]
 *                                     previous keys, or every one, ...
 *   fractctl secret derive MASTER node ID peers LIST [generation G]
 *                                     a node's pair keys (its row), on the
 *                                     admin's machine
 *   fractctl secret row [FILE]        install this node's row
 *   fractctl [-j] space [list]        the spaces open on this node, their
 *                                     contacts and stealable Memory
 *   fractctl [-j] space contacts      every contact of every space
 *   fractctl [-j] [-s] blk [list]     block devices served as volumes
 *   fractctl blk attach DEVICE name NAME [uid UID] [format]
 *   fractctl blk detach {ID | name NAME}
 *   fractctl config check FILE       fractos.conf(5), errors with line numbers
 *   fractctl [-j] config apply FILE  make the running module match FILE
 *   fractctl [-j] config show        the running configuration, as a FILE
 *   fractctl help
 *
 * Subcommands are a table (commands[] below), matched by unique-enough
 * prefix as in iproute2 ("fractctl st" is "status", "fractctl n l" is
 * "node list").  node, link, stats and ping talk to the "fractos" generic
 * netlink family (uapi/linux/fractos_netlink.h) through libnl-genl-3.
 * node, secret, space, blk and config are in fractctl-*.cpp; the JSON writer,
 * the netlink client and argument parsing in common/ (libftools.a).
 *
 * Exit status: 0 on success, 1 on any error, usage errors included (as
 * "status" always did); "status" alone exits 2 when the module is not
 * loaded.
 */
#include "fractctl.hpp"

#include <caladan/sysfs.hpp>

#include <linux/fractos_netlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace fractctl {
namespace {

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
	std::optional<std::string> auth;
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

	rep.auth = status_auth();

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
		if (rep.auth) {
			auto colon = rep.auth->find(':');
			j.str("auth", rep.auth->substr(0, colon));
		}
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
	if (rep.auth)
		line("auth", rep.auth->substr(rep.auth->find(':') + 1));
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
		return exit_usage;
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

/* ---- names of states and counters ----------------------------------- */

/* enum ib_port_state, spelt as the rdma tool does. */
const char *port_state_name(unsigned s)
{
	static const char *const names[] = {"NOP", "DOWN", "INIT", "ARMED", "ACTIVE",
					    "ACTIVE_DEFER"};
	return s < std::size(names) ? names[s] : "UNKNOWN";
}

struct stat_name {
	int attr;
	const char *name;
};

const stat_name stat_names[] = {
	{FRACTOS_STAT_TX_MSGS, "tx_msgs"},
	{FRACTOS_STAT_TX_BYTES, "tx_bytes"},
	{FRACTOS_STAT_RX_MSGS, "rx_msgs"},
	{FRACTOS_STAT_RX_BYTES, "rx_bytes"},
	{FRACTOS_STAT_PINGS_TX, "pings_tx"},
	{FRACTOS_STAT_PINGS_RX, "pings_rx"},
	{FRACTOS_STAT_PONGS_RX, "pongs_rx"},
	{FRACTOS_STAT_CONNECTS, "connects"},
	{FRACTOS_STAT_DISCONNECTS, "disconnects"},
	{FRACTOS_STAT_CONNECT_ERRORS, "connect_errors"},
	{FRACTOS_STAT_HB_TIMEOUTS, "hb_timeouts"},
	{FRACTOS_STAT_EPOCH_CHANGES, "epoch_changes"},
	{FRACTOS_STAT_NO_CREDITS, "no_credits"},
	{FRACTOS_STAT_PROTO_ERRORS, "proto_errors"},
	{FRACTOS_STAT_REFUSED, "refused"},
	{FRACTOS_STAT_TX_STALLS, "tx_stalls"},
	{FRACTOS_STAT_REFUSED_MALFORMED, "refused_malformed"},
	{FRACTOS_STAT_REFUSED_VERSION, "refused_version"},
	{FRACTOS_STAT_REFUSED_UNKNOWN, "refused_unknown"},
	{FRACTOS_STAT_REFUSED_WRONG_NODE, "refused_wrong_node"},
	{FRACTOS_STAT_REFUSED_INITIATOR, "refused_initiator"},
	{FRACTOS_STAT_REFUSED_RESOURCES, "refused_resources"},
	{FRACTOS_STAT_REFUSED_AUTH, "refused_auth"},
	{FRACTOS_STAT_REFUSED_ADDRESS, "refused_address"},
	{FRACTOS_STAT_REFUSED_BUSY, "refused_busy"},
	{FRACTOS_STAT_AUTH_FAILURES, "auth_failures"},
	{FRACTOS_STAT_RDMA_READ_BYTES, "rdma_read_bytes"},
	{FRACTOS_STAT_REFUSED_CONNECTED, "refused_connected"},
	{FRACTOS_STAT_REFUSED_COOKIE, "refused_cookie"},
	{FRACTOS_STAT_TX_REMOTE_MSGS, "tx_remote_msgs"},
	{FRACTOS_STAT_RX_REMOTE_MSGS, "rx_remote_msgs"},
	{FRACTOS_STAT_RETRANSMITS, "retransmits"},
	{FRACTOS_STAT_DUPLICATES, "duplicates"},
	{FRACTOS_STAT_SESSION_ENDS, "session_ends"},
	{FRACTOS_STAT_LINK_GRACE, "link_grace"},
	{FRACTOS_STAT_RDMA_WRITE_BYTES, "rdma_write_bytes"},
};

} // namespace

void json_counters(json_writer &j, std::string_view key, const counters &c)
{
	j.begin(key);
	for (const auto &s : stat_names)
		j.num(s.name, c[s.attr]);
	j.end();
}

/* Four "name value" pairs a line, each line starting with @indent. */
void print_counters(const char *indent, const counters &c)
{
	std::size_t i = 0;

	/* Columns as wide as the longest name, so that they line up. */
	int w = 0;
	for (const auto &s : stat_names)
		w = std::max(w, int(std::strlen(s.name)));
	for (const auto &s : stat_names) {
		bool last = (i + 1) % 4 == 0 || i + 1 == std::size(stat_names);
		std::printf("%s%-*s %-*s", i % 4 ? " " : indent, w, s.name, last ? 0 : 12,
			    std::to_string(c[s.attr]).c_str());
		if (last)
			std::printf("\n");
		i++;
	}
}

namespace {

/* ---- link ------------------------------------------------------------ */

int do_link(const options &opts, int argc, char **argv)
{
	if (argc > 0 && matches(argv[0], "help")) {
		std::printf("Usage: %s [-j] link [ list | show ]\n", progname);
		return exit_ok;
	}
	if (argc > 0 && (matches(argv[0], "list") || matches(argv[0], "show")))
		argc--, argv++;
	if (argc > 0)
		return usage_error("link", "unexpected argument \"%s\"", argv[0]);

	struct link {
		std::string name;
		std::uint32_t index, ports, conns;
		std::uint8_t state;
	};
	std::vector<link> links;
	auto nl = fabric_open();
	if (!nl) {
		report("link", nl.error());
		return exit_error;
	}
	auto st = nl->request(FRACTOS_CMD_LINK_LIST, true, {}, [&](const nl_reply &r) {
		links.push_back({r.str(FRACTOS_A_LINK_NAME).value_or(""),
				 r.get<std::uint32_t>(FRACTOS_A_LINK_INDEX).value_or(0),
				 r.get<std::uint32_t>(FRACTOS_A_LINK_PORTS).value_or(0),
				 r.get<std::uint32_t>(FRACTOS_A_LINK_CONNS).value_or(0),
				 r.get<std::uint8_t>(FRACTOS_A_LINK_STATE).value_or(0)});
	});
	if (!st) {
		report("link", st.error());
		return exit_error;
	}
	if (opts.json) {
		json_writer j(json_writer::top::array);
		for (const auto &l : links) {
			j.begin();
			j.str("name", l.name);
			j.num("index", l.index);
			j.num("ports", l.ports);
			j.str("state", port_state_name(l.state));
			j.num("conns", l.conns);
			j.end();
		}
		std::printf("%s\n", j.finish().c_str());
		return exit_ok;
	}
	if (links.empty())
		return exit_ok;
	std::printf("%-16s %6s %6s %-12s %6s\n", "NAME", "INDEX", "PORTS", "STATE", "CONNS");
	for (const auto &l : links)
		std::printf("%-16s %6" PRIu32 " %6" PRIu32 " %-12s %6" PRIu32 "\n", l.name.c_str(),
			    l.index, l.ports, port_state_name(l.state), l.conns);
	return exit_ok;
}

/* ---- stats ----------------------------------------------------------- */

int do_stats(const options &opts, int argc, char **argv)
{
	if (argc > 0 && matches(argv[0], "help")) {
		std::printf("Usage: %s [-j] stats\n", progname);
		return exit_ok;
	}
	if (argc > 0)
		return usage_error("stats", "unexpected argument \"%s\"", argv[0]);

	std::optional<std::uint32_t> node, epoch, nodes, links;
	std::optional<std::uint16_t> port;
	counters c{};
	auto nl = fabric_open();
	if (!nl) {
		report("stats", nl.error());
		return exit_error;
	}
	auto st = nl->request(FRACTOS_CMD_STATS, false, {}, [&](const nl_reply &r) {
		node = r.get<std::uint32_t>(FRACTOS_A_LOCAL_NODE_ID);
		epoch = r.get<std::uint32_t>(FRACTOS_A_LOCAL_EPOCH);
		port = r.get<std::uint16_t>(FRACTOS_A_LISTEN_PORT);
		nodes = r.get<std::uint32_t>(FRACTOS_A_NODES);
		links = r.get<std::uint32_t>(FRACTOS_A_LINKS);
		c = fabric_stats(r, FRACTOS_A_STATS);
	});
	if (!st) {
		report("stats", st.error());
		return exit_error;
	}
	if (opts.json) {
		json_writer j;
		auto opt = [&](const char *k, const auto &v) {
			if (v)
				j.num(k, *v);
		};
		opt("node", node);
		opt("epoch", epoch);
		opt("listen_port", port);
		opt("nodes", nodes);
		opt("links", links);
		json_counters(j, "stats", c);
		std::printf("%s\n", j.finish().c_str());
		return exit_ok;
	}
	auto line = [](const char *k, const auto &v, const char *zero = nullptr) {
		if (v)
			std::printf("%-14s %s\n", k,
				    *v == 0 && zero ? zero : std::to_string(*v).c_str());
	};
	line("node", node);
	line("epoch", epoch);
	line("listen_port", port, "0 (not listening)");
	line("nodes", nodes);
	line("links", links);
	std::printf("counters\n");
	print_counters("  ", c);
	return exit_ok;
}

/* ---- ping ------------------------------------------------------------ */

int do_ping(const options &opts, int argc, char **argv)
{
	std::optional<std::uint32_t> id;
	std::uint32_t count = 1;

	if (argc > 0 && matches(argv[0], "help")) {
		std::printf("Usage: %s [-j] ping ID [ -c COUNT ]   (COUNT 1 to 10000)\n", progname);
		return exit_ok;
	}
	for (; argc > 0; argc--, argv++) {
		if (!std::strcmp(argv[0], "-c") || !std::strcmp(argv[0], "count")) {
			if (argc < 2)
				return usage_error("ping", "%s needs a COUNT", argv[0]);
			argc--, argv++;
			auto v = parse_uint(argv[0], 1, 10000);
			if (!v)
				return usage_error("ping", "bad count \"%s\" (1 to 10000)", argv[0]);
			count = std::uint32_t(*v);
		} else if (!id && (id = parse_node_id(argv[0]))) {
		} else {
			return usage_error("ping", "unexpected argument \"%s\"", argv[0]);
		}
	}
	if (!id)
		return usage_error("ping", "%s", "needs a node ID");

	std::string what = "ping " + std::to_string(*id);
	std::optional<std::uint32_t> replies;
	std::optional<std::uint64_t> rmin, ravg, rmax;
	auto nl = fabric_open();
	if (!nl) {
		report(what.c_str(), nl.error());
		return exit_error;
	}
	auto st = nl->request(FRACTOS_CMD_PING, false,
			      {attr(FRACTOS_A_NODE_ID, *id), attr(FRACTOS_A_PING_COUNT, count)},
			      [&](const nl_reply &r) {
				      replies = r.get<std::uint32_t>(FRACTOS_A_PING_COUNT);
				      rmin = r.get<std::uint64_t>(FRACTOS_A_PING_RTT_MIN_NS);
				      ravg = r.get<std::uint64_t>(FRACTOS_A_PING_RTT_AVG_NS);
				      rmax = r.get<std::uint64_t>(FRACTOS_A_PING_RTT_MAX_NS);
			      });
	if (!st) {
		report(what.c_str(), st.error(),
		       {{ENOENT, "no such node"},
			{ENOTCONN, "the node is not up (see \"fractctl node list\")"},
			{ETIMEDOUT, "no reply within a second"}});
		return exit_error;
	}
	if (!replies || !rmin || !ravg || !rmax) {
		std::fprintf(stderr, "%s: %s: incomplete reply from the kernel\n", progname,
			     what.c_str());
		return exit_error;
	}
	if (opts.json) {
		json_writer j;
		j.num("node", *id);
		j.num("count", *replies);
		j.num("rtt_min_ns", *rmin);
		j.num("rtt_avg_ns", *ravg);
		j.num("rtt_max_ns", *rmax);
		std::printf("%s\n", j.finish().c_str());
		return exit_ok;
	}
	std::printf("node %" PRIu32 ": %" PRIu32 " round trip%s, rtt min/avg/max = "
		    "%.3f/%.3f/%.3f us\n",
		    *id, *replies, *replies == 1 ? "" : "s", double(*rmin) / 1e3,
		    double(*ravg) / 1e3, double(*rmax) / 1e3);
	return exit_ok;
}

/* ---- command table ---------------------------------------------------- */

int do_help(const options &, int, char **);

struct command {
	const char *name;
	int (*fn)(const options &, int argc, char **argv);
	const char *summary;
};

/* In order: the first match of a prefix wins ("st" is status, not stats). */
const command commands[] = {
	{"status", do_status, "module state, limits and live-object counters"},
	{"node", do_node, "fabric nodes: list, show, add, del"},
	{"link", do_link, "RDMA devices the fabric uses"},
	{"stats", do_stats, "local node, listen port and fabric-wide counters"},
	{"ping", do_ping, "round trips to a node: ping ID [-c COUNT]"},
	{"secret", do_secret, "admission: show, set, insecure, forget, derive, row"},
	{"space", do_space, "open spaces: process, caps, contacts, stealable Memory"},
	{"blk", do_blk, "block devices as volumes (fractos_nvme): list, attach, detach"},
	{"config", do_config, "the node's configuration file: check, apply, show"},
	{"help", do_help, "this text"},
};

void usage(FILE *f)
{
	std::fprintf(f,
		     "Usage: %s [ OPTIONS ] COMMAND\n"
		     "       %s help\n"
		     "OPTIONS := { -j[son] | -s[tats] | -V[ersion] | -h[elp] }\n"
		     "COMMAND := {",
		     progname, progname);
	for (std::size_t i = 0; i < std::size(commands); i++)
		std::fprintf(f, "%s %s", i ? " |" : "", commands[i].name);
	std::fprintf(f, " }\n\n");
	for (const auto &c : commands)
		std::fprintf(f, "  %-8s %s\n", c.name, c.summary);
	std::fprintf(f,
		     "\n"
		     "       %s [-j] [-s] node [ list | show ] [ ID ] [ stats ]\n"
		     "       %s [-j] node add ID ADDR[:PORT] [ trust-uids ]\n"
		     "       %s [-j] node del ID\n"
		     "       %s [-j] link [ list ]\n"
		     "       %s [-j] stats\n"
		     "       %s [-j] ping ID [ -c COUNT ]\n"
		     "       %s [-j] space [ list | contacts ]\n"
		     "       %s [-j] [-s] blk [ list ]\n"
		     "       %s blk attach DEVICE name NAME [ uid UID ] [ format ]\n"
		     "       %s blk detach { ID | name NAME }\n"
		     "ADDR := { IPV4 | IPV6 | [IPV6] }, PORT defaults to %d\n"
		     "\n"
		     "-s adds the per-node counters to node list.  node add, node del\n"
		     "and ping need CAP_NET_ADMIN.\n"
		     "Exit status: 0 on success, 1 on errors (usage errors and a module\n"
		     "that is not loaded included); status exits 2 if the module is not\n"
		     "loaded.\n",
		     progname, progname, progname, progname, progname, progname, progname,
		     progname, progname, progname, FRACTOS_FABRIC_PORT);
}

int do_help(const options &, int, char **)
{
	usage(stdout);
	return 0;
}

void print_version()
{
	std::printf("%s utility, libcaladan %s, uapi abi %d\n", progname, caladan::version(),
		    FRACTOS_ABI_VERSION);
}

} // namespace
} // namespace fractctl

int main(int argc, char **argv)
{
	using namespace fractctl;

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
		} else if (matches(opt, "stats") || matches(opt, "statistics")) {
			opts.stats = true;
		} else if (matches(opt, "Version")) {
			print_version();
			return 0;
		} else if (matches(opt, "help")) {
			usage(stdout);
			return 0;
		} else {
			std::fprintf(stderr, "%s: option \"%s\" is unknown, try \"%s help\".\n",
				     progname, argv[0], progname);
			return exit_usage;
		}
	}

	if (argc == 0) {
		usage(stderr);
		return exit_usage;
	}
	for (const auto &c : commands)
		if (matches(argv[0], c.name))
			return c.fn(opts, argc - 1, argv + 1);

	std::fprintf(stderr, "%s: unknown command \"%s\"\n", progname, argv[0]);
	usage(stderr);
	return exit_usage;
}
