// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The fabric's objects over generic netlink, shared by fractctl and
 * fractos-membershipd: node addresses, the node list, the admission state.
 */
#include "fractctl.hpp"

#include <arpa/inet.h>

#include <cinttypes>

namespace fractctl {

std::optional<std::uint32_t> parse_node_id(std::string_view s)
{
	auto v = parse_uint(s, 0, UINT32_MAX);
	return v ? std::optional<std::uint32_t>(std::uint32_t(*v)) : std::nullopt;
}

std::optional<node_addr> parse_node_addr(std::string_view s)
{
	node_addr a;
	std::string host;
	std::optional<std::string_view> port;

	if (!s.empty() && s[0] == '[') {
		auto close = s.find(']');
		if (close == std::string_view::npos)
			return std::nullopt;
		host = s.substr(1, close - 1);
		std::string_view rest = s.substr(close + 1);
		if (!rest.empty()) {
			if (rest[0] != ':')
				return std::nullopt;
			port = rest.substr(1);
		}
		a.family = AF_INET6;
	} else if (auto colon = s.find(':'); colon == std::string_view::npos) {
		host = s;
	} else if (s.find(':', colon + 1) == std::string_view::npos) {
		host = s.substr(0, colon);
		port = s.substr(colon + 1);
	} else {
		host = s; /* a bare IPv6 address */
		a.family = AF_INET6;
	}
	if (inet_pton(a.family, host.c_str(), a.bytes.data()) != 1)
		return std::nullopt;
	if (port) {
		auto p = parse_uint(*port, 1, 65535);
		if (!p)
			return std::nullopt;
		a.port = std::uint16_t(*p);
	}
	return a;
}

std::string format_addr(int family, const void *bytes, std::uint16_t port)
{
	char buf[INET6_ADDRSTRLEN] = "?";

	inet_ntop(family, bytes, buf, sizeof(buf));
	if (family == AF_INET6)
		return std::string("[") + buf + "]:" + std::to_string(port);
	return std::string(buf) + ":" + std::to_string(port);
}

node_info parse_node(const nl_reply &r)
{
	node_info n;

	n.id = r.get<std::uint32_t>(FRACTOS_A_NODE_ID).value_or(0);
	if (auto a = r.bytes(FRACTOS_A_NODE_ADDR6); a && a->size() == 16) {
		n.family = AF_INET6;
		std::memcpy(n.addr.data(), a->data(), 16);
	} else if (auto a4 = r.bytes(FRACTOS_A_NODE_ADDR4); a4 && a4->size() == 4) {
		std::memcpy(n.addr.data(), a4->data(), 4);
	}
	n.port = r.get<std::uint16_t>(FRACTOS_A_NODE_PORT).value_or(0);
	n.state = r.get<std::uint8_t>(FRACTOS_A_NODE_STATE).value_or(0);
	n.epoch = r.get<std::uint32_t>(FRACTOS_A_NODE_EPOCH).value_or(0);
	n.qpn = r.get<std::uint32_t>(FRACTOS_A_NODE_QPN).value_or(0);
	n.credits = r.get<std::uint32_t>(FRACTOS_A_NODE_CREDITS).value_or(0);
	n.trust_uids = r.has(FRACTOS_A_NODE_TRUST_UIDS);
	n.rx_softirq = r.has(FRACTOS_A_NODE_RX_SOFTIRQ);
	n.key_id = r.get<std::uint32_t>(FRACTOS_A_NODE_KEY_ID).value_or(0);
	n.prev_key_id = r.get<std::uint32_t>(FRACTOS_A_NODE_PREV_KEY_ID).value_or(0);
	n.stats = fabric_stats(r, FRACTOS_A_NODE_STATS);
	return n;
}

nl_result<std::vector<node_info>> get_nodes(genl_nl &nl, std::optional<std::uint32_t> id)
{
	std::vector<node_info> nodes;
	std::vector<nl_attr_out> attrs;

	if (id)
		attrs.push_back(attr(FRACTOS_A_NODE_ID, *id));
	auto st = nl.request(FRACTOS_CMD_NODE_LIST, !id, attrs,
			     [&](const nl_reply &r) { nodes.push_back(parse_node(r)); });
	if (!st)
		return st.error();
	return nodes;
}

const char *auth_mode_name(unsigned m)
{
	switch (m) {
	case FRACTOS_AUTH_NONE:
		return "none";
	case FRACTOS_AUTH_SECRET:
		return "secret";
	case FRACTOS_AUTH_INSECURE:
		return "insecure";
	}
	return "unknown";
}

nl_result<auth_state> query_auth(genl_nl &nl)
{
	std::optional<std::uint8_t> mode;
	std::optional<std::uint32_t> key, prev, pairs, self;

	auto st = nl.request(FRACTOS_CMD_STATS, false, {}, [&](const nl_reply &r) {
		mode = r.get<std::uint8_t>(FRACTOS_A_AUTH_MODE);
		key = r.get<std::uint32_t>(FRACTOS_A_AUTH_KEY_ID);
		prev = r.get<std::uint32_t>(FRACTOS_A_AUTH_PREV_KEY_ID);
		pairs = r.get<std::uint32_t>(FRACTOS_A_AUTH_PAIRS);
		self = r.get<std::uint32_t>(FRACTOS_A_LOCAL_NODE_ID);
	});
	if (!st)
		return st.error();
	if (!mode)
		return nl_failure{nl_failure::kind::kernel, errno_code(EPROTO),
				  "no AUTH_MODE in the reply (an older module?)", {}};
	return auth_state{*mode, key.value_or(0), prev, pairs, self.value_or(0)};
}

bool node_is_at(const node_info &n, const node_addr &a)
{
	std::size_t len = a.family == AF_INET6 ? 16 : 4;

	return n.family == a.family && !std::memcmp(n.addr.data(), a.bytes.data(), len) &&
	       n.port == a.port;
}

int read_secret(FILE *f, secret_buf &s)
{
	s.bytes.resize(FRACTOS_AUTH_SECRET_MAX + 2);
	std::size_t n = std::fread(s.bytes.data(), 1, s.bytes.size(), f);
	if (std::ferror(f))
		return errno ? errno : EIO;
	if (n && s.bytes[n - 1] == '\n')
		n--;
	explicit_bzero(s.bytes.data() + n, s.bytes.size() - n);
	s.bytes.resize(n);
	return n < FRACTOS_AUTH_SECRET_MIN || n > FRACTOS_AUTH_SECRET_MAX ? EMSGSIZE : 0;
}

nl_status fabric_node_add(genl_nl &nl, std::uint32_t id, const node_addr &a, bool trust_uids)
{
	std::vector<nl_attr_out> attrs{attr(FRACTOS_A_NODE_ID, id)};
	if (a.family == AF_INET6)
		attrs.push_back(attr_bytes(FRACTOS_A_NODE_ADDR6, a.bytes.data(), 16));
	else
		attrs.push_back(attr_bytes(FRACTOS_A_NODE_ADDR4, a.bytes.data(), 4));
	if (a.port)
		attrs.push_back(attr(FRACTOS_A_NODE_PORT, a.port));
	if (trust_uids)
		attrs.push_back(attr_bytes(FRACTOS_A_NODE_TRUST_UIDS, nullptr, 0));
	return nl.request(FRACTOS_CMD_NODE_ADD, false, attrs);
}

nl_status fabric_node_del(genl_nl &nl, std::uint32_t id)
{
	return nl.request(FRACTOS_CMD_NODE_DEL, false, {attr(FRACTOS_A_NODE_ID, id)});
}

} // namespace fractctl
