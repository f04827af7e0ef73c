/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fractctl's shared parts: options, the JSON writer, a generic netlink
 * client (one family per socket, errors as values) and argument parsing,
 * for fractctl.cpp (status and the fabric) and fractctl-blk.cpp (the block
 * adaptor).
 */
#ifndef FRACTCTL_HPP
#define FRACTCTL_HPP

#include <caladan/caladan.hpp>

#include <linux/fractos_netlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

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

inline const char *progname = "fractctl";

/* Exit codes; usage errors share 1 with every other error. */
constexpr int exit_ok = 0;
constexpr int exit_error = 1;
constexpr int exit_usage = 1;

struct options {
	bool json = false;
	bool stats = false;
};

/* ---- output --------------------------------------------------------- */

/*
 * A minimal JSON writer: one top-level object or array, nested objects and
 * arrays, strings, numbers and booleans.  Keys are ignored inside arrays.
 */
class json_writer {
public:
	enum class top { object, array };

	explicit json_writer(top t = top::object)
	{
		out_.push_back(t == top::array ? '[' : '{');
		stack_.push_back({t == top::array, true});
	}

	void begin(std::string_view key = {})
	{
		this->key(key);
		out_ += '{';
		stack_.push_back({false, true});
	}
	void begin_array(std::string_view key = {})
	{
		this->key(key);
		out_ += '[';
		stack_.push_back({true, true});
	}
	void end()
	{
		out_ += stack_.back().array ? ']' : '}';
		stack_.pop_back();
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
		while (!stack_.empty())
			end();
		return out_;
	}

private:
	struct level {
		bool array;
		bool first;
	};

	void key(std::string_view k)
	{
		if (!stack_.back().first)
			out_ += ',';
		stack_.back().first = false;
		if (stack_.back().array)
			return;
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
	std::vector<level> stack_;
};

/* ---- generic netlink ------------------------------------------------ */

/*
 * Why a netlink operation failed.  @ec is an errno (system_category):
 * the kernel's for kind::kernel, else the closest one to libnl's reason,
 * which is then in @detail.  For kind::kernel, @detail is the extended ACK
 * message when the kernel sent one.
 */
struct nl_failure {
	enum class kind { no_family, local, kernel } what;
	std::error_code ec;
	std::string detail;
	std::string module;	/* no_family: the module that registers it */
};

/* A T or an nl_failure: errors are values, as result<T> in libcaladan. */
template <class T>
class [[nodiscard]] nl_result {
public:
	nl_result(T v) : v_(std::in_place_index<0>, std::move(v)) {}
	nl_result(nl_failure f) : v_(std::in_place_index<1>, std::move(f)) {}

	explicit operator bool() const noexcept { return v_.index() == 0; }
	T &operator*() noexcept { return *std::get_if<0>(&v_); }
	T *operator->() noexcept { return std::get_if<0>(&v_); }
	const nl_failure &error() const noexcept { return *std::get_if<1>(&v_); }

private:
	std::variant<T, nl_failure> v_;
};

using nl_status = nl_result<std::monostate>;

struct nl_sock_deleter {
	void operator()(nl_sock *s) const noexcept { nl_socket_free(s); }
};
/* Requests may carry a key (AUTH_SET): wiped before they are freed. */
struct nl_msg_deleter {
	void operator()(nl_msg *m) const noexcept
	{
		explicit_bzero(nlmsg_hdr(m), nlmsg_hdr(m)->nlmsg_len);
		nlmsg_free(m);
	}
};
struct nl_cb_deleter {
	void operator()(nl_cb *cb) const noexcept { nl_cb_put(cb); }
};
using nl_sock_ptr = std::unique_ptr<nl_sock, nl_sock_deleter>;
using nl_msg_ptr = std::unique_ptr<nl_msg, nl_msg_deleter>;
using nl_cb_ptr = std::unique_ptr<nl_cb, nl_cb_deleter>;

/* libnl's NLE_* codes as the nearest errno, keeping libnl's wording. */
inline nl_failure local_failure(int nle)
{
	int e = EIO;
	switch (nle < 0 ? -nle : nle) {
	case NLE_NOMEM:
		e = ENOMEM;
		break;
	case NLE_PERM:
		e = EPERM;
		break;
	case NLE_NOACCESS:
		e = EACCES;
		break;
	case NLE_AF_NOSUPPORT:
	case NLE_PROTO_MISMATCH:
		e = EAFNOSUPPORT;
		break;
	case NLE_INTR:
		e = EINTR;
		break;
	}
	return {nl_failure::kind::local, errno_code(e), nl_geterror(nle), {}};
}

/* One attribute of a request. */
struct nl_attr_out {
	int type;
	std::vector<unsigned char> data;
};

template <class T>
inline nl_attr_out attr(int type, const T &v)
{
	nl_attr_out a{type, std::vector<unsigned char>(sizeof(v))};
	std::memcpy(a.data.data(), &v, sizeof(v));
	return a;
}

inline nl_attr_out attr_bytes(int type, const void *p, std::size_t len)
{
	const auto *b = static_cast<const unsigned char *>(p);
	return {type, std::vector<unsigned char>(b, b + len)};
}

/*
 * The attributes of one reply message, with length-checked getters.  @tb
 * holds the last of each type (genlmsg_parse()); each() walks every one of
 * a type, for repeated attributes (nested tables of a dump).
 */
class nl_reply {
public:
	nl_reply(nlattr *const *tb, int maxattr, const nlattr *head, int len)
		: tb_(tb), max_(maxattr), head_(head), len_(len)
	{
	}

	template <class T>
	std::optional<T> get(int type) const
	{
		const nlattr *a = at(type);
		T v;
		if (!a || nla_len(a) != int(sizeof(T)))
			return std::nullopt;
		std::memcpy(&v, nla_data(a), sizeof(T));
		return v;
	}
	std::optional<std::string> str(int type) const
	{
		const nlattr *a = at(type);
		if (!a || nla_len(a) <= 0)
			return std::nullopt;
		const char *s = static_cast<const char *>(nla_data(a));
		return std::string(s, strnlen(s, std::size_t(nla_len(a))));
	}
	bool has(int type) const { return at(type) != nullptr; }
	std::optional<std::vector<unsigned char>> bytes(int type) const
	{
		const nlattr *a = at(type);
		if (!a)
			return std::nullopt;
		const auto *b = static_cast<const unsigned char *>(nla_data(a));
		return std::vector<unsigned char>(b, b + nla_len(a));
	}
	/* A nested table of u64 counters, indexed by attribute type. */
	std::vector<std::uint64_t> counters(int type, int max) const
	{
		return nested_counters(at(type), max);
	}
	/* A nested FRACTOS_STAT_* table: counters indexed by attribute type. */
	std::array<std::uint64_t, FRACTOS_STAT_MAX + 1> stats(int type) const
	{
		std::array<std::uint64_t, FRACTOS_STAT_MAX + 1> out{};
		auto v = counters(type, FRACTOS_STAT_MAX);
		std::copy(v.begin(), v.end(), out.begin());
		return out;
	}
	/* @fn(nested reply) for every attribute of @type, a nested table. */
	void each(int type, const std::function<void(const nl_reply &)> &fn) const
	{
		const nlattr *a;
		int rem;

		nla_for_each_attr(a, const_cast<nlattr *>(head_), len_, rem) {
			if (nla_type(a) != type)
				continue;
			std::vector<nlattr *> tb(std::size_t(max_) + 1);
			if (nla_parse_nested(tb.data(), max_, const_cast<nlattr *>(a), nullptr))
				continue;
			fn(nl_reply(tb.data(), max_, static_cast<const nlattr *>(nla_data(a)),
				    nla_len(a)));
		}
	}

	static std::vector<std::uint64_t> nested_counters(const nlattr *a, int max)
	{
		std::vector<std::uint64_t> out(std::size_t(max) + 1);
		std::vector<nlattr *> st(std::size_t(max) + 1);

		if (!a || nla_parse_nested(st.data(), max, const_cast<nlattr *>(a), nullptr))
			return out;
		for (int i = 0; i <= max; i++)
			if (st[i] && nla_len(st[i]) == 8)
				out[i] = nla_get_u64(st[i]);
		return out;
	}

private:
	const nlattr *at(int type) const { return type >= 0 && type <= max_ ? tb_[type] : nullptr; }

	nlattr *const *tb_;
	int max_;
	const nlattr *head_;
	int len_;
};

using reply_fn = std::function<void(const nl_reply &)>;

/* Receive state shared with libnl's callbacks. */
struct recv_ctx {
	const reply_fn *fn;
	int maxattr;
	int err = 1;		/* 1: waiting; 0: done; < 0: -errno */
	std::string extack;
};

inline int valid_cb(nl_msg *msg, void *arg)
{
	auto *c = static_cast<recv_ctx *>(arg);
	std::vector<nlattr *> tb(std::size_t(c->maxattr) + 1);
	nlmsghdr *nlh = nlmsg_hdr(msg);
	auto *gh = static_cast<genlmsghdr *>(nlmsg_data(nlh));

	if (genlmsg_parse(nlh, 0, tb.data(), c->maxattr, nullptr))
		return NL_SKIP;
	if (*c->fn)
		(*c->fn)(nl_reply(tb.data(), c->maxattr, genlmsg_attrdata(gh, 0),
				  genlmsg_attrlen(gh, 0)));
	return NL_OK;
}

/* The extended ACK message (NLMSGERR_ATTR_MSG) of an error, if any. */
inline std::string extack_message(const nlmsgerr *e)
{
	const auto *nlh = reinterpret_cast<const nlmsghdr *>(
		reinterpret_cast<const char *>(e) - NLMSG_HDRLEN);
	std::size_t off = sizeof(*e);
	nlattr *tb[NLMSGERR_ATTR_MAX + 1];

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return {};
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED) && e->msg.nlmsg_len > NLMSG_HDRLEN)
		off += e->msg.nlmsg_len - NLMSG_HDRLEN;
	off = NLMSG_ALIGN(off);
	if (nlh->nlmsg_len < NLMSG_HDRLEN + off)
		return {};
	auto *tlv = reinterpret_cast<nlattr *>(
		const_cast<char *>(reinterpret_cast<const char *>(e)) + off);
	if (nla_parse(tb, NLMSGERR_ATTR_MAX, tlv, int(nlh->nlmsg_len - NLMSG_HDRLEN - off),
		      nullptr) ||
	    !tb[NLMSGERR_ATTR_MSG] || nla_len(tb[NLMSGERR_ATTR_MSG]) <= 0)
		return {};
	const char *s = static_cast<const char *>(nla_data(tb[NLMSGERR_ATTR_MSG]));
	return std::string(s, strnlen(s, std::size_t(nla_len(tb[NLMSGERR_ATTR_MSG]))));
}

inline int error_cb(sockaddr_nl *, nlmsgerr *e, void *arg)
{
	auto *c = static_cast<recv_ctx *>(arg);

	c->err = e->error < 0 ? e->error : -EPROTO;
	c->extack = extack_message(e);
	return NL_STOP;
}

inline int ack_cb(nl_msg *, void *arg)
{
	static_cast<recv_ctx *>(arg)->err = 0;
	return NL_STOP;
}

/* NLMSG_DONE of a dump; it carries the dump's error, if any. */
inline int finish_cb(nl_msg *msg, void *arg)
{
	auto *c = static_cast<recv_ctx *>(arg);
	nlmsghdr *h = nlmsg_hdr(msg);
	int e = 0;

	if (nlmsg_datalen(h) >= int(sizeof(e)))
		std::memcpy(&e, nlmsg_data(h), sizeof(e));
	c->err = e < 0 ? e : 0;
	return NL_STOP;
}

/* One generic netlink family on one socket. */
class genl_nl {
public:
	/*
	 * Connect and resolve @name, whose attributes go up to @maxattr;
	 * @module is the kernel module that registers it (for messages).
	 */
	static nl_result<genl_nl> open(const char *name, int maxattr, std::uint8_t version,
				       const char *module)
	{
		nl_sock_ptr sk(nl_socket_alloc());
		int one = 1, ret;

		if (!sk)
			return local_failure(-NLE_NOMEM);
		ret = genl_connect(sk.get());
		if (ret < 0)
			return local_failure(ret);
		/* Best effort: older kernels just do not send the message. */
		setsockopt(nl_socket_get_fd(sk.get()), SOL_NETLINK, NETLINK_EXT_ACK, &one,
			   sizeof(one));
		ret = genl_ctrl_resolve(sk.get(), name);
		if (ret == -NLE_OBJ_NOTFOUND)
			return nl_failure{nl_failure::kind::no_family, errno_code(ENOENT), name,
					  module};
		if (ret < 0)
			return local_failure(ret);
		return genl_nl(std::move(sk), ret, maxattr, version);
	}

	/*
	 * Send @cmd (a dump if @dump) with @attrs and wait for the end of the
	 * answer; every reply message goes to @fn.
	 */
	nl_status request(std::uint8_t cmd, bool dump, const std::vector<nl_attr_out> &attrs,
			  const reply_fn &fn = {})
	{
		nl_msg_ptr msg(nlmsg_alloc());
		nl_cb_ptr cb(nl_cb_alloc(NL_CB_DEFAULT));
		recv_ctx ctx{&fn, maxattr_, 1, {}};

		if (!msg || !cb)
			return local_failure(-NLE_NOMEM);
		if (!genlmsg_put(msg.get(), NL_AUTO_PORT, NL_AUTO_SEQ, family_, 0,
				 dump ? NLM_F_DUMP : 0, cmd, version_))
			return local_failure(-NLE_NOMEM);
		for (const auto &a : attrs)
			if (nla_put(msg.get(), a.type, int(a.data.size()), a.data.data()))
				return local_failure(-NLE_NOMEM);
		nl_cb_set(cb.get(), NL_CB_VALID, NL_CB_CUSTOM, valid_cb, &ctx);
		nl_cb_set(cb.get(), NL_CB_ACK, NL_CB_CUSTOM, ack_cb, &ctx);
		nl_cb_set(cb.get(), NL_CB_FINISH, NL_CB_CUSTOM, finish_cb, &ctx);
		nl_cb_err(cb.get(), NL_CB_CUSTOM, error_cb, &ctx);

		int ret = nl_send_auto(sk_.get(), msg.get());
		if (ret < 0)
			return local_failure(ret);
		while (ctx.err > 0) {
			ret = nl_recvmsgs(sk_.get(), cb.get());
			if (ret < 0 && ctx.err > 0)
				return local_failure(ret);
		}
		if (ctx.err < 0)
			return nl_failure{nl_failure::kind::kernel, errno_code(-ctx.err),
					  std::move(ctx.extack), {}};
		return std::monostate{};
	}

private:
	genl_nl(nl_sock_ptr sk, int family, int maxattr, std::uint8_t version)
		: sk_(std::move(sk)), family_(family), maxattr_(maxattr), version_(version)
	{
	}

	nl_sock_ptr sk_;
	int family_;
	int maxattr_;
	std::uint8_t version_;
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

/*
 * Report @f for the operation @what ("node add 7"), with a hint for the
 * errors whose meaning depends on the command (@hints: errno, text).
 */
inline void report(const char *what, const nl_failure &f,
	    std::initializer_list<std::pair<int, const char *>> hints = {})
{
	switch (f.what) {
	case nl_failure::kind::no_family:
		std::fprintf(stderr,
			     "%s: %s: the %s module is not loaded "
			     "(no generic netlink family \"%s\")\n",
			     progname, what, f.module.c_str(), f.detail.c_str());
		return;
	case nl_failure::kind::local:
		std::fprintf(stderr, "%s: %s: netlink: %s (%s)\n", progname, what,
			     f.detail.c_str(), describe(f.ec).c_str());
		return;
	case nl_failure::kind::kernel:
		break;
	}
	if (f.ec == errno_code(EPERM)) {
		std::fprintf(stderr, "%s: %s: must be root (CAP_NET_ADMIN)\n", progname, what);
		return;
	}
	std::string msg = describe(f.ec);
	if (!f.detail.empty())
		msg += ": " + f.detail;
	for (const auto &[e, text] : hints)
		if (f.ec == errno_code(e)) {
			msg += "; ";
			msg += text;
		}
	std::fprintf(stderr, "%s: %s: %s\n", progname, what, msg.c_str());
}

/* ---- argument parsing ---------------------------------------------- */

/*
 * "fractctl: node add: bad ..., try "fractctl node help"."  @fmt has one
 * %s, for @arg.
 */
inline int usage_error(const char *cmd, const char *fmt, const char *arg)
{
	std::string_view top(cmd);

	top = top.substr(0, top.find(' '));
	std::fprintf(stderr, "%s: %s: ", progname, cmd);
	std::fprintf(stderr, fmt, arg);
	std::fprintf(stderr, ", try \"%s %.*s help\".\n", progname, int(top.size()),
		     top.data());
	return exit_usage;
}

/* A decimal number in [lo, hi], nothing else (no sign, no blanks). */
inline std::optional<std::uint64_t> parse_uint(std::string_view s, std::uint64_t lo, std::uint64_t hi)
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

/* iproute2's matches(): @arg is a non-empty prefix of @name. */
inline bool matches(const char *arg, const char *name)
{
	std::size_t n = std::strlen(arg);
	return n && std::strncmp(arg, name, n) == 0;
}

/*
 * The words of one line of fractos.conf(5) or of a row file: separated by
 * blanks, a word that starts with # ends the line.
 */
inline std::vector<std::string_view> words(std::string_view line)
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

/* A key id as people and JSON see it: eight hex digits. */
inline std::string hex32(std::uint32_t v)
{
	char buf[16];
	std::snprintf(buf, sizeof(buf), "%08x", unsigned(v));
	return buf;
}

/* ---- the fabric's objects (fractctl-fabric.cpp) ---------------------- */

using counters = std::array<std::uint64_t, FRACTOS_STAT_MAX + 1>;

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

/* The block adaptor's command (fractctl-blk.cpp). */
int do_blk(const options &opts, int argc, char **argv);
/* The configuration file (fractctl-config.cpp). */
int do_config(const options &opts, int argc, char **argv);
/* Admission: the cluster secret and pair keys (fractctl-secret.cpp). */
int do_secret(const options &opts, int argc, char **argv);

} // namespace fractctl

#endif /* FRACTCTL_HPP */
