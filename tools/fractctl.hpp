/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fractctl's shared parts: its options, the "fractos" family, the fabric's
 * objects, pair keys and the commands of its other files.  The JSON
 * writer, the generic netlink client and argument parsing are libftools'
 * (common/), whose names namespace fractctl sees.
 */
#ifndef FRACTCTL_HPP
#define FRACTCTL_HPP

#include "common/args.hpp"
#include "common/json.hpp"
#include "common/netlink.hpp"

#include <caladan/caladan.hpp>

#include <linux/fractos_netlink.h>

#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
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

using namespace caladan;
using namespace ftools;

struct options {
	bool json = false;
	bool stats = false;
};

/*
 * The "fractos" family.  FRACTCTL_GENL_FAMILY overrides the name, so that
 * tests can ask for a family that cannot exist.
 */
inline nl_result<genl_nl> fabric_open()
{
	const char *env = std::getenv("FRACTCTL_GENL_FAMILY");
	return genl_nl::open(env && *env ? env : FRACTOS_GENL_NAME, FRACTOS_A_MAX,
			     FRACTOS_GENL_VERSION, "fractos");
}

/* ---- the fabric's objects (fractctl-fabric.cpp) ---------------------- */

using counters = std::array<std::uint64_t, FRACTOS_STAT_MAX + 1>;

/* A nested FRACTOS_STAT_* table of @r: counters indexed by attribute type. */
inline counters fabric_stats(const nl_reply &r, int type)
{
	counters out{};
	auto v = r.counters(type, FRACTOS_STAT_MAX);
	std::copy(v.begin(), v.end(), out.begin());
	return out;
}

/* A node's address: family, 4 or 16 bytes, and a port (0: not given). */
struct node_addr {
	int family = AF_INET;
	std::array<unsigned char, 16> bytes{};
	std::uint16_t port = 0;
};

/* A fabric node as NODE_LIST reports it. */
struct node_info {
	std::uint32_t id = 0;
	int family = AF_INET;
	std::array<unsigned char, 16> addr{};
	std::uint16_t port = 0;
	std::uint8_t state = 0;
	std::uint32_t epoch = 0, qpn = 0, credits = 0;
	bool trust_uids = false;
	/* Its connection's completions run in softirq (fabric_rx_softirq). */
	bool rx_softirq = false;
	/* Ids of its pair key and previous pair key; 0: none. */
	std::uint32_t key_id = 0, prev_key_id = 0;
	counters stats{};
};

/* How this node admits others. */
struct auth_state {
	std::uint8_t mode = FRACTOS_AUTH_NONE;
	std::uint32_t key_id = 0;	/* the cluster secret's; 0: none */
	std::optional<std::uint32_t> prev_key_id;
	std::optional<std::uint32_t> pairs; /* nodes with a pair key (newer modules) */
	std::uint32_t node = 0;		/* this node's id, whose keys these are */
};

std::optional<std::uint32_t> parse_node_id(std::string_view s);
/* IPV4, IPV4:PORT, IPV6 (no port) or [IPV6]:PORT; numeric only. */
std::optional<node_addr> parse_node_addr(std::string_view s);
/* "IPV4:PORT" or "[IPV6]:PORT" */
std::string format_addr(int family, const void *bytes, std::uint16_t port);
node_info parse_node(const nl_reply &r);
/* Every node, or the one of @id. */
nl_result<std::vector<node_info>> get_nodes(genl_nl &nl, std::optional<std::uint32_t> id);
const char *auth_mode_name(unsigned m);
nl_result<auth_state> query_auth(genl_nl &nl);
/* The node's address and port are @a's. */
bool node_is_at(const node_info &n, const node_addr &a);

/* Wipes what it held when it goes. */
struct secret_buf {
	std::vector<unsigned char> bytes;
	~secret_buf() { explicit_bzero(bytes.data(), bytes.size()); }
};

/*
 * The cluster secret from @f, as "secret set" and "secret-file" read it:
 * one trailing newline dropped.  Returns 0, an errno of the read, or
 * EMSGSIZE when it is not FRACTOS_AUTH_SECRET_MIN..MAX bytes.
 */
int read_secret(FILE *f, secret_buf &s);

/* ---- pair keys (fractctl-secret.cpp) --------------------------------- */

constexpr std::size_t pair_key_len = 32;	/* HMAC-SHA256 */
constexpr std::size_t max_row_peers = 65536;

struct pair_key {
	std::uint32_t peer;
	std::array<unsigned char, pair_key_len> key;
};

/*
 * Node @node's row of the pair-key table that "fractctl secret derive"
 * makes: the key it shares with each peer.  Wipes the keys when it goes
 * (read_row() reserves @keys once, so that they are never moved).
 */
struct pair_row {
	std::uint32_t node = 0, generation = 0;
	std::vector<pair_key> keys;

	pair_row() = default;
	pair_row(const pair_row &) = delete;
	pair_row &operator=(const pair_row &) = delete;
	~pair_row();
};

/* An error of a row file: its line (0: the file as a whole) and what. */
struct row_error {
	unsigned line;
	std::string text;
};

/*
 * Reads a row file from @f and parses it strictly (row format:
 * fractctl(8)); every error, in order, goes to @errors.  Returns whether
 * there were none.  No error quotes a key.
 */
bool read_row(FILE *f, pair_row &row, std::vector<row_error> &errors);
/* "FILE:LINE: text" ("FILE: text" for line 0). */
std::string row_error_text(std::string_view file, const row_error &e);

/*
 * AUTH_SET of a key: the cluster secret, or @peer's pair key.  Wipes the
 * request's copies of it.
 */
nl_status auth_set(genl_nl &nl, const unsigned char *key, std::size_t len,
		   std::optional<std::uint32_t> peer);

/*
 * AUTH_SET of each of @row's keys (AUTH_PEER), in order; the first one
 * the kernel refuses stops it, its peer in @failed.
 */
nl_status set_row(genl_nl &nl, const pair_row &row, std::uint32_t &failed);

/* Why @row is not for this node (@self), or nothing when it is. */
std::optional<std::string> row_mismatch(const pair_row &row, std::uint32_t self);

/* Status's auth line ("MODE:SUMMARY"): nothing when netlink does not answer. */
std::optional<std::string> status_auth();

/* NODE_ADD (port 0: the module's default) and NODE_DEL. */
nl_status fabric_node_add(genl_nl &nl, std::uint32_t id, const node_addr &a, bool trust_uids);
nl_status fabric_node_del(genl_nl &nl, std::uint32_t id);

/* A subcommand of a command's table, matched by prefix (matches()). */
struct subcommand {
	const char *name;
	int (*fn)(const options &, int argc, char **argv);
};

/*
 * Paths can be moved under a prefix (FRACTCTL_ROOT) so that the tool can
 * be tested against a fake sysfs tree; unset in normal use.
 */
inline std::string rooted(const char *path)
{
	const char *root = std::getenv("FRACTCTL_ROOT");
	return root && *root ? std::string(root) + path : std::string(path);
}

/* The fabric's counters (fractctl.cpp), as object @key of @j or as text. */
void json_counters(json_writer &j, std::string_view key, const counters &c);
/* Four "name value" pairs a line, each line starting with @indent. */
void print_counters(const char *indent, const counters &c);

/* The fabric's nodes (fractctl-node.cpp). */
int do_node(const options &opts, int argc, char **argv);
/* The block adaptor's command (fractctl-blk.cpp). */
int do_blk(const options &opts, int argc, char **argv);
/* The configuration file (fractctl-config.cpp). */
int do_config(const options &opts, int argc, char **argv);
/* Admission: the cluster secret and pair keys (fractctl-secret.cpp). */
int do_secret(const options &opts, int argc, char **argv);
/* The spaces open on this node (fractctl-space.cpp). */
int do_space(const options &opts, int argc, char **argv);

} // namespace fractctl

#endif /* FRACTCTL_HPP */
