/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The tools' generic netlink client (libftools) on libnl-genl-3: one
 * family per socket, errors as values (nl_result), requests as lists of
 * attributes, replies through length-checked getters, and report() of
 * a failure.  It knows no family: callers name theirs.
 */
#ifndef FTOOLS_NETLINK_HPP
#define FTOOLS_NETLINK_HPP

#include <linux/netlink.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <variant>
#include <vector>

namespace ftools {

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
	void operator()(nl_msg *m) const noexcept;
};
struct nl_cb_deleter {
	void operator()(nl_cb *cb) const noexcept { nl_cb_put(cb); }
};
using nl_sock_ptr = std::unique_ptr<nl_sock, nl_sock_deleter>;
using nl_msg_ptr = std::unique_ptr<nl_msg, nl_msg_deleter>;
using nl_cb_ptr = std::unique_ptr<nl_cb, nl_cb_deleter>;

/* libnl's NLE_* codes as the nearest errno, keeping libnl's wording. */
nl_failure local_failure(int nle);

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

nl_attr_out attr_bytes(int type, const void *p, std::size_t len);

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
	std::optional<std::string> str(int type) const;
	bool has(int type) const { return at(type) != nullptr; }
	std::optional<std::vector<unsigned char>> bytes(int type) const;
	/* A nested table of u64 counters, indexed by attribute type. */
	std::vector<std::uint64_t> counters(int type, int max) const;
	/* @fn(nested reply) for every attribute of @type, a nested table. */
	void each(int type, const std::function<void(const nl_reply &)> &fn) const;

	static std::vector<std::uint64_t> nested_counters(const nlattr *a, int max);

private:
	const nlattr *at(int type) const { return type >= 0 && type <= max_ ? tb_[type] : nullptr; }

	nlattr *const *tb_;
	int max_;
	const nlattr *head_;
	int len_;
};

using reply_fn = std::function<void(const nl_reply &)>;

/* The extended ACK message (NLMSGERR_ATTR_MSG) of an error, if any. */
std::string extack_message(const nlmsgerr *e);

/* One generic netlink family on one socket. */
class genl_nl {
public:
	/*
	 * Connect and resolve @name, whose attributes go up to @maxattr;
	 * @module is the kernel module that registers it (for messages).
	 */
	static nl_result<genl_nl> open(const char *name, int maxattr, std::uint8_t version,
				       const char *module);

	/*
	 * Send @cmd (a dump if @dump) with @attrs and wait for the end of the
	 * answer; every reply message goes to @fn.
	 */
	nl_status request(std::uint8_t cmd, bool dump, const std::vector<nl_attr_out> &attrs,
			  const reply_fn &fn = {});

private:
	genl_nl(nl_sock_ptr sk, int family, int maxattr, std::uint8_t version);

	nl_sock_ptr sk_;
	int family_;
	int maxattr_;
	std::uint8_t version_;
};

/*
 * Report @f for the operation @what ("node add 7"), with a hint for the
 * errors whose meaning depends on the command (@hints: errno, text).
 */
void report(const char *what, const nl_failure &f,
	    std::initializer_list<std::pair<int, const char *>> hints = {});

} // namespace ftools

#endif /* FTOOLS_NETLINK_HPP */
