// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fractctl config: the node's configuration as a file, for boot and for
 * people (fractos.conf(5)).
 *
 *   fractctl config check FILE       parse FILE; every error with its line
 *   fractctl [-j] config apply FILE  make the running module match FILE
 *   fractctl [-j] config show        the running configuration, as a FILE
 *
 * apply checks the whole file against the running module before it
 * changes anything: a bad line, a node-id or port other than the module's
 * load-time ones, an unreadable secret file, a bad row file or another
 * node's, or an unknown or read-only parameter fails it with nothing
 * changed.  Then it sets the parameters that differ, the secret and the
 * row's pair keys (the same keys again are a no-op in the kernel), and
 * makes the node list the file's: nodes the file lacks are
 * deleted (their proxies revoked), nodes whose address changed are
 * re-added, new ones added, unchanged ones left alone (their connections
 * stay up).  Each change is printed; the first one the kernel refuses
 * stops it (exit 1).  "show > FILE; apply FILE" changes nothing: show
 * prints no secret line (secrets cannot be read back), and a file
 * without one leaves the secret and the pair keys as they are.
 */
#include "fractctl.hpp"

#include <caladan/sysfs.hpp>

#include <arpa/inet.h>
#include <sys/stat.h>

#include <cinttypes>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace fractctl {
namespace {

struct conf_node {
	std::uint32_t id = 0;
	node_addr addr;
	bool trust_uids = false;
	unsigned line = 0;
};

struct conf_param {
	std::string name, value;
	unsigned line = 0;
};

enum class secret_kind { keep, file, insecure };

struct conf {
	std::optional<std::uint32_t> node_id;
	std::optional<std::uint16_t> port;
	unsigned node_id_line = 0, port_line = 0, secret_line = 0;
	secret_kind secret = secret_kind::keep;
	std::string secret_file;
	std::string secret_row; /* this node's pair keys (secret row); "": none */
	unsigned secret_row_line = 0;
	std::vector<conf_node> nodes;
	std::vector<conf_param> params;
	bool nodes_managed = false; /* "nodes managed": the node list is not ours */
	unsigned nodes_line = 0;
};

/* Errors as "FILE:LINE: text", all of them, in order. */
struct diag {
	std::string file;
	std::vector<std::string> errors;

	void at(unsigned line, const std::string &text)
	{
		errors.push_back(file + ":" + std::to_string(line) + ": " + text);
	}
	bool print() const
	{
		for (const auto &e : errors)
			std::fprintf(stderr, "%s: %s\n", progname, e.c_str());
		return errors.empty();
	}
};

/* The module's writable parameters a file may set: a boolean or a range. */
struct param_rule {
	const char *name;
	bool boolean;
	std::uint64_t lo, hi;
};

constexpr param_rule param_rules[] = {
	{"max_caps", false, 1, UINT32_MAX},
	{"max_pin_bytes", false, 0, UINT64_MAX},
	{"max_queue", false, 1, UINT32_MAX},
	{"max_names", false, 1, UINT32_MAX},
	{"fabric_ring", false, 1, UINT32_MAX},
	{"fabric_heartbeat_ms", false, 1, UINT32_MAX},
	{"fabric_grace_ms", false, 0, UINT32_MAX},
	{"fabric_peer_work", false, 1, UINT32_MAX},
	{"fabric_peer_grants", false, 1, UINT32_MAX},
	{"fabric_loopback", true, 0, 1},
};

const param_rule *find_rule(std::string_view name)
{
	for (const auto &r : param_rules)
		if (name == r.name)
			return &r;
	return nullptr;
}

/* Y/N as the kernel prints booleans; 1/0, y/n accepted. */
std::optional<std::string> normalize(const param_rule &r, std::string_view v)
{
	if (r.boolean) {
		if (v == "Y" || v == "y" || v == "1")
			return "Y";
		if (v == "N" || v == "n" || v == "0")
			return "N";
		return std::nullopt;
	}
	auto n = parse_uint(v, r.lo, r.hi);
	return n ? std::optional<std::string>(std::to_string(*n)) : std::nullopt;
}

std::string str(std::string_view s)
{
	return std::string(s);
}

conf parse(const std::string &text, diag &d)
{
	conf c;
	std::set<std::uint32_t> ids;
	std::set<std::string> pnames;
	std::istringstream in(text);
	std::string raw;
	unsigned n = 0;

	while (std::getline(in, raw)) {
		n++;
		if (raw.find('\0') != std::string::npos) {
			d.at(n, "a NUL byte");
			continue;
		}
		auto w = words(raw);
		if (w.empty())
			continue;
		std::string_view key = w[0];
		std::size_t argc = w.size() - 1;

		if (key == "node-id") {
			auto id = argc == 1 ? parse_node_id(w[1]) : std::nullopt;
			if (!id)
				d.at(n, "node-id takes one number, 0 to 4294967295");
			else if (c.node_id)
				d.at(n, "node-id again (first on line " + std::to_string(c.node_id_line) + ")");
			else
				c.node_id = *id, c.node_id_line = n;
		} else if (key == "port") {
			auto p = argc == 1 ? parse_uint(w[1], 1, 65535) : std::nullopt;
			if (!p)
				d.at(n, "port takes one number, 1 to 65535");
			else if (c.port)
				d.at(n, "port again (first on line " + std::to_string(c.port_line) + ")");
			else
				c.port = std::uint16_t(*p), c.port_line = n;
		} else if (key == "secret-file" || key == "secret") {
			bool file = key == "secret-file";
			if (c.secret != secret_kind::keep) {
				d.at(n, "a second secret line (first on line " +
					     std::to_string(c.secret_line) + ")");
			} else if (file && (argc != 1 || w[1][0] != '/')) {
				d.at(n, "secret-file takes one absolute path");
			} else if (!file && (argc != 1 || w[1] != "insecure")) {
				d.at(n, "secret takes \"insecure\" (or use secret-file PATH)");
			} else {
				c.secret = file ? secret_kind::file : secret_kind::insecure;
				c.secret_file = file ? str(w[1]) : "";
				c.secret_line = n;
			}
		} else if (key == "secret-row") {
			if (c.secret_row_line)
				d.at(n, "secret-row again (first on line " +
					     std::to_string(c.secret_row_line) + ")");
			else if (argc != 1 || w[1][0] != '/')
				d.at(n, "secret-row takes one absolute path");
			else
				c.secret_row = str(w[1]), c.secret_row_line = n;
		} else if (key == "node") {
			conf_node nd;
			nd.line = n;
			auto id = argc >= 2 ? parse_node_id(w[1]) : std::nullopt;
			auto addr = argc >= 2 ? parse_node_addr(w[2]) : std::nullopt;
			if (argc < 2 || argc > 3) {
				d.at(n, "node takes ID ADDR[:PORT] [trust-uids]");
			} else if (!id) {
				d.at(n, "bad node id \"" + str(w[1]) + "\" (0 to 4294967295)");
			} else if (!addr) {
				d.at(n, "bad address \"" + str(w[2]) +
					     "\" (IPV4[:PORT], IPV6 or [IPV6]:PORT)");
			} else if (argc == 3 && w[3] != "trust-uids") {
				d.at(n, "unexpected \"" + str(w[3]) + "\" (trust-uids?)");
			} else if (!ids.insert(*id).second) {
				d.at(n, "node " + std::to_string(*id) + " again");
			} else {
				nd.id = *id;
				nd.addr = *addr; /* port 0: the module's default, see apply */
				nd.trust_uids = argc == 3;
				c.nodes.push_back(nd);
			}
		} else if (key == "nodes") {
			if (argc != 1 || (w[1] != "managed" && w[1] != "static"))
				d.at(n, "nodes takes \"static\" (the node lines, the default) or "
					"\"managed\" (fractos-membershipd keeps the list)");
			else if (c.nodes_line)
				d.at(n, "nodes again (first on line " + std::to_string(c.nodes_line) + ")");
			else
				c.nodes_managed = w[1] == "managed", c.nodes_line = n;
		} else if (key == "param") {
			const param_rule *r = argc == 2 ? find_rule(w[1]) : nullptr;
			std::optional<std::string> v = r ? normalize(*r, w[2]) : std::nullopt;
			if (argc != 2)
				d.at(n, "param takes NAME VALUE");
			else if (!r)
				d.at(n, "unknown parameter \"" + str(w[1]) + "\"");
			else if (!v)
				d.at(n, "bad value \"" + str(w[2]) + "\" for " + r->name +
					     (r->boolean ? " (Y or N)" : ""));
			else if (!pnames.insert(str(w[1])).second)
				d.at(n, "param " + str(w[1]) + " again");
			else
				c.params.push_back({str(w[1]), *v, n});
		} else {
			d.at(n, "unknown keyword \"" + str(key) +
				     "\" (node-id, port, secret-file, secret-row, secret, node, nodes, "
				     "param)");
		}
	}
	/* Insecure mode forgets every key: a row beside it is a contradiction. */
	if (c.secret_row_line && c.secret == secret_kind::insecure)
		d.at(c.secret_row_line, "secret-row, but \"secret insecure\" (line " +
						std::to_string(c.secret_line) + ") forgets every key");
	if (c.nodes_managed)
		for (const auto &nd : c.nodes)
			d.at(nd.line, "a node line, but \"nodes managed\" (line " +
					      std::to_string(c.nodes_line) + ") leaves the list to " +
					      "fractos-membershipd");
	return c;
}

bool read_file(const std::string &path, std::string &out, diag &d)
{
	std::ifstream f(path, std::ios::binary);
	if (!f) {
		d.errors.push_back(path + ": " + std::strerror(errno));
		return false;
	}
	std::ostringstream ss;
	ss << f.rdbuf();
	out = ss.str();
	if (out.size() > (1u << 20)) {
		d.errors.push_back(path + ": larger than 1 MiB");
		return false;
	}
	return true;
}

bool read_secret_file(const conf &c, secret_buf &s, diag &d)
{
	std::unique_ptr<FILE, int (*)(FILE *)> f(std::fopen(c.secret_file.c_str(), "re"),
						&std::fclose);
	int err = f ? read_secret(f.get(), s) : errno;
	if (err == EMSGSIZE)
		d.at(c.secret_line, c.secret_file + ": a secret has " +
					    std::to_string(FRACTOS_AUTH_SECRET_MIN) + " to " +
					    std::to_string(FRACTOS_AUTH_SECRET_MAX) + " bytes");
	else if (err)
		d.at(c.secret_line, c.secret_file + ": " + std::strerror(err));
	return !err;
}

/* The row of secret-row, which must be this node's (@self). */
bool read_row_file(const conf &c, std::uint32_t self, pair_row &row, diag &d)
{
	std::unique_ptr<FILE, int (*)(FILE *)> f(std::fopen(c.secret_row.c_str(), "re"),
						&std::fclose);
	std::vector<row_error> errors;
	if (!f) {
		d.at(c.secret_row_line, c.secret_row + ": " + std::strerror(errno));
		return false;
	}
	std::setvbuf(f.get(), nullptr, _IONBF, 0); /* no copy of a key in stdio */
	if (!read_row(f.get(), row, errors)) {
		for (const auto &e : errors)
			d.at(c.secret_row_line, row_error_text(c.secret_row, e));
		return false;
	}
	if (auto m = row_mismatch(row, self)) {
		d.at(c.secret_row_line, c.secret_row + ": " + *m);
		return false;
	}
	return true;
}

/* ---- the running configuration ---------------------------------------- */

struct running {
	std::uint64_t node_id = 0, port = 0;
	std::map<std::string, std::string> params; /* the writable ones */
	std::vector<node_info> nodes;
	auth_state auth;
};

std::string param_path(const std::string &name)
{
	return rooted(sysfs::module_dir) + "/parameters/" + name;
}

bool param_writable(const std::string &name)
{
	struct stat st;
	return ::stat(param_path(name).c_str(), &st) == 0 && (st.st_mode & S_IWUSR);
}

nl_result<running> read_running(genl_nl &nl)
{
	running r;
	const std::string dir = rooted(sysfs::module_dir);
	auto ps = sysfs::module_params(dir.c_str());
	if (!ps)
		return nl_failure{nl_failure::kind::local, ps.error(), "module parameters", {}};
	for (auto &[name, value] : *ps) {
		if (name == "node_id")
			r.node_id = std::strtoull(value.c_str(), nullptr, 10);
		else if (name == "fabric_port")
			r.port = std::strtoull(value.c_str(), nullptr, 10);
		else if (find_rule(name) && param_writable(name))
			r.params[name] = value;
	}
	auto nodes = get_nodes(nl, std::nullopt);
	if (!nodes)
		return nodes.error();
	r.nodes = std::move(*nodes);
	std::sort(r.nodes.begin(), r.nodes.end(),
		  [](const node_info &a, const node_info &b) { return a.id < b.id; });
	auto a = query_auth(nl);
	if (!a)
		return a.error();
	r.auth = *a;
	return r;
}

/*
 * Whether setting @row changed a key, as far as the kernel shows it: the
 * number of nodes with a pair key, or the key id of a configured node.
 * (The keys of unconfigured peers are not listed anywhere.)
 */
bool row_changed(genl_nl &nl, const pair_row &row, const running &before)
{
	auto a = query_auth(nl);
	auto nodes = get_nodes(nl, std::nullopt);
	if (!a || !nodes || a->pairs != before.auth.pairs)
		return true;
	std::map<std::uint32_t, std::uint32_t> was;
	std::set<std::uint32_t> peers;
	for (const auto &n : before.nodes)
		was[n.id] = n.key_id;
	for (const auto &k : row.keys)
		peers.insert(k.peer);
	return std::any_of(nodes->begin(), nodes->end(), [&](const node_info &n) {
		auto it = was.find(n.id);
		return peers.count(n.id) && (it == was.end() || it->second != n.key_id);
	});
}

bool same_node(const conf_node &c, const node_info &n)
{
	return node_is_at(n, c.addr) && c.trust_uids == n.trust_uids;
}

std::string node_line(std::uint32_t id, int family, const void *addr, std::uint16_t port,
		      bool trust)
{
	return "node " + std::to_string(id) + " " + format_addr(family, addr, port) +
	       (trust ? " trust-uids" : "");
}

/* ---- the commands -------------------------------------------------------- */

int config_check(const options &, int argc, char **argv)
{
	if (argc != 1)
		return usage_error("config check", "%s", argc ? "too many arguments" : "needs FILE");
	diag d{argv[0], {}};
	std::string text;
	if (read_file(argv[0], text, d))
		parse(text, d);
	return d.print() ? exit_ok : exit_error;
}

int config_apply(const options &opts, int argc, char **argv)
{
	if (argc != 1)
		return usage_error("config apply", "%s", argc ? "too many arguments" : "needs FILE");
	diag d{argv[0], {}};
	std::string text;
	if (!read_file(argv[0], text, d))
		return d.print(), exit_error;
	conf c = parse(text, d);
	if (!d.print())
		return exit_error;

	auto nl = fabric_open();
	if (!nl) {
		report("config apply", nl.error());
		return exit_error;
	}
	auto run = read_running(*nl);
	if (!run) {
		report("config apply", run.error());
		return exit_error;
	}

	/* Everything checked before anything changes. */
	if (c.node_id && *c.node_id != run->node_id)
		d.at(c.node_id_line, "node-id " + std::to_string(*c.node_id) +
					     ", but the module was loaded with node_id=" +
					     std::to_string(run->node_id) +
					     " (a load-time option: /etc/modprobe.d/fractos.conf)");
	if (c.port && *c.port != run->port)
		d.at(c.port_line, "port " + std::to_string(*c.port) +
					  ", but the module was loaded with fabric_port=" +
					  std::to_string(run->port) +
					  " (a load-time option: /etc/modprobe.d/fractos.conf)");
	for (const auto &p : c.params)
		if (!run->params.count(p.name))
			d.at(p.line, "the module has no writable parameter " + p.name);
	/* A node without a port gets the kernel's default: the listen port. */
	for (auto &n : c.nodes)
		if (!n.addr.port)
			n.addr.port = std::uint16_t(run->port ? run->port : FRACTOS_FABRIC_PORT);
	secret_buf secret;
	if (c.secret == secret_kind::file)
		read_secret_file(c, secret, d);
	pair_row row;
	if (c.secret_row_line)
		read_row_file(c, std::uint32_t(run->node_id), row, d);
	if (!d.print())
		return exit_error;

	json_writer j(json_writer::top::array);
	auto changed = [&](const std::string &what) {
		if (opts.json)
			j.str({}, what);
		else
			std::printf("%s\n", what.c_str());
	};
	auto failed = [&](unsigned line, const std::string &what, const nl_failure &f) {
		if (opts.json)
			std::printf("%s\n", j.finish().c_str());
		std::string w = d.file + ":" + std::to_string(line) + ": " + what;
		report(w.c_str(), f);
		return exit_error;
	};

	for (const auto &p : c.params) {
		if (run->params[p.name] == p.value)
			continue;
		std::ofstream f(param_path(p.name));
		f << p.value << '\n';
		f.flush();
		if (!f) {
			nl_failure e{nl_failure::kind::local, errno_code(errno ? errno : EINVAL),
				     "writing " + param_path(p.name), {}};
			return failed(p.line, "param " + p.name, e);
		}
		changed("param " + p.name + " " + p.value);
	}

	if (c.secret == secret_kind::file) {
		auto st = auth_set(*nl, secret.bytes.data(), secret.bytes.size(), std::nullopt);
		if (!st)
			return failed(c.secret_line, "secret-file", st.error());
		auto a = query_auth(*nl);
		if (a && (a->key_id != run->auth.key_id || a->mode != run->auth.mode))
			changed("secret " + hex32(a->key_id));
	} else if (c.secret == secret_kind::insecure && run->auth.mode != FRACTOS_AUTH_INSECURE) {
		auto st = nl->request(FRACTOS_CMD_AUTH_SET, false,
				      {attr_bytes(FRACTOS_A_AUTH_INSECURE, nullptr, 0)});
		if (!st)
			return failed(c.secret_line, "secret insecure", st.error());
		changed("secret insecure");
	}
	if (c.secret_row_line) {
		std::uint32_t peer = 0;
		auto st = set_row(*nl, row, peer);
		if (!st)
			return failed(c.secret_row_line, "secret-row: peer " + std::to_string(peer),
				      st.error());
		if (row_changed(*nl, row, *run))
			changed("secret-row node " + std::to_string(row.node) + " generation " +
				std::to_string(row.generation) + " (" +
				std::to_string(row.keys.size()) + " pair keys)");
	}

	if (c.nodes_managed) {
		if (opts.json)
			std::printf("%s\n", j.finish().c_str());
		return exit_ok;
	}
	/* Deletions first: a node re-added with a new address is both. */
	std::map<std::uint32_t, const conf_node *> want;
	for (const auto &n : c.nodes)
		want[n.id] = &n;
	for (const auto &n : run->nodes) {
		auto it = want.find(n.id);
		if (it != want.end() && same_node(*it->second, n))
			continue;
		auto st = fabric_node_del(*nl, n.id);
		if (!st)
			return failed(it != want.end() ? it->second->line : 0,
				      "node del " + std::to_string(n.id), st.error());
		changed("del " + node_line(n.id, n.family, n.addr.data(), n.port, n.trust_uids));
	}
	for (const auto &n : c.nodes) {
		bool have = std::any_of(run->nodes.begin(), run->nodes.end(), [&](const node_info &r) {
			return r.id == n.id && same_node(n, r);
		});
		if (have)
			continue;
		auto st = fabric_node_add(*nl, n.id, n.addr, n.trust_uids);
		if (!st)
			return failed(n.line, "node add " + std::to_string(n.id), st.error());
		changed("add " + node_line(n.id, n.addr.family, n.addr.bytes.data(), n.addr.port,
					   n.trust_uids));
	}
	if (opts.json)
		std::printf("%s\n", j.finish().c_str());
	return exit_ok;
}

int config_show(const options &opts, int argc, char **argv)
{
	if (argc > 0)
		return usage_error("config show", "unexpected argument \"%s\"", argv[0]);
	auto nl = fabric_open();
	if (!nl) {
		report("config show", nl.error());
		return exit_error;
	}
	auto run = read_running(*nl);
	if (!run) {
		report("config show", run.error());
		return exit_error;
	}
	const std::string key = hex32(run->auth.key_id);
	const std::uint32_t pairs = run->auth.pairs.value_or(0);

	if (opts.json) {
		json_writer j;
		j.num("node_id", run->node_id);
		j.num("port", run->port);
		j.str("secret", auth_mode_name(run->auth.mode));
		if (run->auth.key_id)
			j.str("key_id", key);
		if (run->auth.pairs)
			j.num("pairs", pairs);
		j.begin_array("nodes");
		for (const auto &n : run->nodes) {
			char buf[INET6_ADDRSTRLEN] = "";
			inet_ntop(n.family, n.addr.data(), buf, sizeof(buf));
			j.begin(); /* as in node list -j */
			j.num("id", n.id);
			j.str("family", n.family == AF_INET6 ? "inet6" : "inet");
			j.str("address", buf);
			j.num("port", n.port);
			j.boolean("trust_uids", n.trust_uids);
			j.end();
		}
		j.end();
		j.begin("params");
		for (const auto &[name, value] : run->params)
			j.str(name, value);
		j.end();
		std::printf("%s\n", j.finish().c_str());
		return exit_ok;
	}
	std::printf("# the running configuration (fractctl config show); fractos.conf(5)\n");
	std::printf("node-id %" PRIu64 "\nport %" PRIu64 "\n", run->node_id, run->port);
	if (run->auth.mode == FRACTOS_AUTH_INSECURE)
		std::printf("secret insecure\n");
	else if (run->auth.key_id)
		std::printf("# a secret is set (key id %s): add \"secret-file PATH\" to set it\n",
			    key.c_str());
	if (pairs)
		std::printf("# pair keys of %" PRIu32 " node%s are set: add \"secret-row PATH\" "
			    "to set them\n",
			    pairs, pairs == 1 ? "" : "s");
	else if (run->auth.mode == FRACTOS_AUTH_NONE)
		std::printf("# no secret: every node is refused (secret-file PATH)\n");
	for (const auto &n : run->nodes)
		std::printf("%s\n",
			    node_line(n.id, n.family, n.addr.data(), n.port, n.trust_uids).c_str());
	for (const auto &[name, value] : run->params)
		std::printf("param %s %s\n", name.c_str(), value.c_str());
	return exit_ok;
}

void config_usage(FILE *f)
{
	std::fprintf(f,
		     "Usage: %s config check FILE\n"
		     "       %s [-j] config apply FILE\n"
		     "       %s [-j] config show\n"
		     "FILE (fractos.conf(5)), one directive per line, # comments:\n"
		     "  node-id ID            must be the module's node_id option\n"
		     "  port PORT             must be its fabric_port option\n"
		     "  secret-file PATH      the cluster secret (or: secret insecure)\n"
		     "  secret-row PATH       this node's pair keys (fractctl secret derive)\n"
		     "  node ID ADDR[:PORT] [trust-uids]   a peer; apply makes the node list\n"
		     "                        exactly these\n"
		     "  nodes managed         the node list is fractos-membershipd's (etcd)\n"
		     "  param NAME VALUE      a writable module parameter (max_caps, ...)\n",
		     progname, progname, progname);
}

int config_help(const options &, int, char **)
{
	config_usage(stdout);
	return exit_ok;
}

const subcommand config_commands[] = {
	{"check", config_check}, {"apply", config_apply}, {"show", config_show},
	{"help", config_help},
};

} // namespace

int do_config(const options &opts, int argc, char **argv)
{
	if (argc == 0)
		return config_show(opts, 0, argv);
	for (const auto &c : config_commands)
		if (matches(argv[0], c.name))
			return c.fn(opts, argc - 1, argv + 1);
	return usage_error("config", "unknown command \"%s\"", argv[0]);
}

} // namespace fractctl
