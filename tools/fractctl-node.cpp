// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fractctl node: the fabric's nodes over the "fractos" generic netlink
 * family (uapi/linux/fractos_netlink.h).
 *
 *   fractctl [-j] [-s] node [ list | show ] [ ID ] [ stats ]
 *   fractctl [-j] node add ID ADDR[:PORT] [ trust-uids ]
 *   fractctl [-j] node del ID
 */
#include "fractctl.hpp"

#include <arpa/inet.h>

#include <cinttypes>

namespace fractctl {
namespace {

const char *node_state_name(unsigned s)
{
	switch (s) {
	case FRACTOS_NODE_DOWN:
		return "down";
	case FRACTOS_NODE_CONNECTING:
		return "connecting";
	case FRACTOS_NODE_WAITING:
		return "waiting";
	case FRACTOS_NODE_UP:
		return "up";
	}
	return "unknown";
}

/* The node's fields into the object open in @j. */
void json_node_fields(json_writer &j, const node_info &n, bool stats)
{
	char buf[INET6_ADDRSTRLEN] = "";

	inet_ntop(n.family, n.addr.data(), buf, sizeof(buf));
	j.num("id", n.id);
	j.str("family", n.family == AF_INET6 ? "inet6" : "inet");
	j.str("address", buf);
	j.num("port", n.port);
	j.str("state", node_state_name(n.state));
	j.num("epoch", n.epoch);
	j.num("qpn", n.qpn);
	j.num("credits", n.credits);
	j.boolean("trust_uids", n.trust_uids);
	j.boolean("rx_softirq", n.rx_softirq);
	if (n.key_id)
		j.str("key_id", hex32(n.key_id));
	if (n.prev_key_id)
		j.str("previous_key_id", hex32(n.prev_key_id));
	if (stats)
		json_counters(j, "stats", n.stats);
}

void json_node(json_writer &j, const node_info &n, bool stats)
{
	j.begin();
	json_node_fields(j, n, stats);
	j.end();
}

void print_nodes(const options &opts, const std::vector<node_info> &nodes)
{
	if (opts.json) {
		json_writer j(json_writer::top::array);
		for (const auto &n : nodes)
			json_node(j, n, opts.stats);
		std::printf("%s\n", j.finish().c_str());
		return;
	}
	if (nodes.empty())
		return;
	std::size_t w = std::strlen("ADDRESS");
	for (const auto &n : nodes)
		w = std::max(w, format_addr(n.family, n.addr.data(), n.port).size());
	std::printf("%-10s %-*s %-10s %10s %8s %7s %s\n", "ID", int(w), "ADDRESS", "STATE",
		    "EPOCH", "QPN", "CREDITS", "UIDS");
	for (const auto &n : nodes) {
		std::printf("%-10" PRIu32 " %-*s %-10s %10" PRIu32 " %8" PRIu32 " %7" PRIu32 " %s\n",
			    n.id, int(w), format_addr(n.family, n.addr.data(), n.port).c_str(),
			    node_state_name(n.state), n.epoch, n.qpn, n.credits,
			    n.trust_uids ? "trusted" : "-");
		/* Its pair key (secret row), under the line as the counters. */
		if (n.key_id)
			std::printf("    key %s%s%s\n", hex32(n.key_id).c_str(),
				    n.prev_key_id ? " previous " : "",
				    n.prev_key_id ? hex32(n.prev_key_id).c_str() : "");
		if (opts.stats) {
			std::printf("    completions in %s\n",
				    n.rx_softirq ? "softirq" : "a work item");
			print_counters("    ", n.stats);
		}
	}
}

/* NODE_LIST: every node (@id empty, a dump) or one (ENOENT if unknown). */

int node_help(const options &, int, char **);

int node_list(const options &o, int argc, char **argv)
{
	options opts = o;
	std::optional<std::uint32_t> id;

	for (; argc > 0; argc--, argv++) {
		if (!std::strcmp(argv[0], "-s") || !std::strcmp(argv[0], "stats")) {
			opts.stats = true;
		} else if (!id && (id = parse_node_id(argv[0]))) {
		} else {
			return usage_error("node list", "unexpected argument \"%s\"", argv[0]);
		}
	}
	auto nl = fabric_open();
	if (!nl) {
		report("node list", nl.error());
		return exit_error;
	}
	auto nodes = get_nodes(*nl, id);
	if (!nodes) {
		std::string what = id ? "node show " + std::to_string(*id) : "node list";
		report(what.c_str(), nodes.error(), {{ENOENT, "no such node"}});
		return exit_error;
	}
	print_nodes(opts, *nodes);
	return exit_ok;
}

int node_add(const options &opts, int argc, char **argv)
{
	bool trust_uids = false;

	if (argc == 3 && !std::strcmp(argv[2], "trust-uids")) {
		trust_uids = true;
		argc--;
	} else if (argc == 3) {
		return usage_error("node add", "unexpected argument \"%s\" (trust-uids?)", argv[2]);
	}
	if (argc != 2)
		return usage_error("node add", "%s", argc < 2 ? "needs ID and ADDR[:PORT]"
							  : "too many arguments");
	auto id = parse_node_id(argv[0]);
	if (!id)
		return usage_error("node add", "bad node id \"%s\" (0 to 4294967295)", argv[0]);
	auto addr = parse_node_addr(argv[1]);
	if (!addr)
		return usage_error("node add",
				   "bad address \"%s\" (IPV4[:PORT], IPV6 or [IPV6]:PORT; "
				   "port 1 to 65535)",
				   argv[1]);

	std::vector<nl_attr_out> attrs{attr(FRACTOS_A_NODE_ID, *id)};
	if (addr->family == AF_INET6)
		attrs.push_back(attr_bytes(FRACTOS_A_NODE_ADDR6, addr->bytes.data(), 16));
	else
		attrs.push_back(attr_bytes(FRACTOS_A_NODE_ADDR4, addr->bytes.data(), 4));
	if (addr->port)
		attrs.push_back(attr(FRACTOS_A_NODE_PORT, addr->port));
	if (trust_uids)
		attrs.push_back(attr_bytes(FRACTOS_A_NODE_TRUST_UIDS, nullptr, 0));

	std::string what = "node add " + std::to_string(*id);
	auto nl = fabric_open();
	if (!nl) {
		report(what.c_str(), nl.error());
		return exit_error;
	}
	auto st = nl->request(FRACTOS_CMD_NODE_ADD, false, attrs);
	if (!st) {
		report(what.c_str(), st.error(), {{EEXIST, "the node is configured already"}});
		return exit_error;
	}
	if (opts.json) {
		/* The node as the kernel now has it (default port filled in). */
		auto nodes = get_nodes(*nl, *id);
		json_writer j;
		if (nodes && nodes->size() == 1)
			json_node_fields(j, nodes->front(), false);
		else
			j.num("id", *id);
		std::printf("%s\n", j.finish().c_str());
	}
	return exit_ok;
}

int node_del(const options &opts, int argc, char **argv)
{
	if (argc != 1)
		return usage_error("node del", "%s", argc < 1 ? "needs ID" : "too many arguments");
	auto id = parse_node_id(argv[0]);
	if (!id)
		return usage_error("node del", "bad node id \"%s\" (0 to 4294967295)", argv[0]);

	std::string what = "node del " + std::to_string(*id);
	auto nl = fabric_open();
	if (!nl) {
		report(what.c_str(), nl.error());
		return exit_error;
	}
	auto st = nl->request(FRACTOS_CMD_NODE_DEL, false, {attr(FRACTOS_A_NODE_ID, *id)});
	if (!st) {
		report(what.c_str(), st.error(), {{ENOENT, "no such node"}});
		return exit_error;
	}
	if (opts.json) {
		json_writer j;
		j.num("id", *id);
		j.boolean("deleted", true);
		std::printf("%s\n", j.finish().c_str());
	}
	return exit_ok;
}

/* In order: the first match of a prefix wins ("s" is show, "d" delete). */
const subcommand node_commands[] = {
	{"list", node_list}, {"show", node_list}, {"add", node_add},
	{"delete", node_del}, {"help", node_help},
};

void node_usage(FILE *f)
{
	std::fprintf(f,
		     "Usage: %s [-j] [-s] node [ list | show ] [ ID ] [ stats ]\n"
		     "       %s [-j] node add ID ADDR[:PORT] [ trust-uids ]\n"
		     "       %s [-j] node del ID\n"
		     "ID := 0 to 4294967295, the node_id module parameter of that node\n"
		     "ADDR := { IPV4 | IPV6 | [IPV6] }, PORT defaults to %d\n"
		     "STATE := { connecting | waiting | up | down }\n"
		     "trust-uids: the node's uids are ours; without it, name lookups\n"
		     "from that node find world-visible names only\n",
		     progname, progname, progname, FRACTOS_FABRIC_PORT);
}

int node_help(const options &, int, char **)
{
	node_usage(stdout);
	return exit_ok;
}

} // namespace

int do_node(const options &opts, int argc, char **argv)
{
	if (argc == 0)
		return node_list(opts, 0, argv);
	for (const auto &c : node_commands)
		if (matches(argv[0], c.name))
			return c.fn(opts, argc - 1, argv + 1);
	/* "fractctl node 7" is "node show 7", as "ip link eth0" is not. */
	if (parse_node_id(argv[0]))
		return node_list(opts, argc, argv);
	return usage_error("node", "unknown command \"%s\"", argv[0]);
}

} // namespace fractctl
