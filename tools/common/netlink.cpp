// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The tools' generic netlink client (libftools): replies, libnl's
 * callbacks, genl_nl's open() and request(), report().
 */
#include "netlink.hpp"

#include "args.hpp"

#include <caladan/error.hpp>

#include <linux/genetlink.h>
#include <netlink/genl/ctrl.h>

#include <sys/socket.h>

#include <cerrno>
#include <cstdio>

namespace ftools {

using caladan::describe;
using caladan::errno_code;

void nl_msg_deleter::operator()(nl_msg *m) const noexcept
{
	explicit_bzero(nlmsg_hdr(m), nlmsg_hdr(m)->nlmsg_len);
	nlmsg_free(m);
}

nl_failure local_failure(int nle)
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

nl_attr_out attr_bytes(int type, const void *p, std::size_t len)
{
	const auto *b = static_cast<const unsigned char *>(p);
	return {type, std::vector<unsigned char>(b, b + len)};
}

/* ---- replies --------------------------------------------------------- */

std::optional<std::string> nl_reply::str(int type) const
{
	const nlattr *a = at(type);
	if (!a || nla_len(a) <= 0)
		return std::nullopt;
	const char *s = static_cast<const char *>(nla_data(a));
	return std::string(s, strnlen(s, std::size_t(nla_len(a))));
}

std::optional<std::vector<unsigned char>> nl_reply::bytes(int type) const
{
	const nlattr *a = at(type);
	if (!a)
		return std::nullopt;
	const auto *b = static_cast<const unsigned char *>(nla_data(a));
	return std::vector<unsigned char>(b, b + nla_len(a));
}

std::vector<std::uint64_t> nl_reply::counters(int type, int max) const
{
	return nested_counters(at(type), max);
}

void nl_reply::each(int type, const std::function<void(const nl_reply &)> &fn) const
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

std::vector<std::uint64_t> nl_reply::nested_counters(const nlattr *a, int max)
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

/* ---- libnl's callbacks ----------------------------------------------- */

namespace {

/* Receive state shared with libnl's callbacks. */
struct recv_ctx {
	const reply_fn *fn;
	int maxattr;
	int err = 1;		/* 1: waiting; 0: done; < 0: -errno */
	std::string extack;
};

int valid_cb(nl_msg *msg, void *arg)
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

int error_cb(sockaddr_nl *, nlmsgerr *e, void *arg)
{
	auto *c = static_cast<recv_ctx *>(arg);

	c->err = e->error < 0 ? e->error : -EPROTO;
	c->extack = extack_message(e);
	return NL_STOP;
}

int ack_cb(nl_msg *, void *arg)
{
	static_cast<recv_ctx *>(arg)->err = 0;
	return NL_STOP;
}

/* NLMSG_DONE of a dump; it carries the dump's error, if any. */
int finish_cb(nl_msg *msg, void *arg)
{
	auto *c = static_cast<recv_ctx *>(arg);
	nlmsghdr *h = nlmsg_hdr(msg);
	int e = 0;

	if (nlmsg_datalen(h) >= int(sizeof(e)))
		std::memcpy(&e, nlmsg_data(h), sizeof(e));
	c->err = e < 0 ? e : 0;
	return NL_STOP;
}

} // namespace

std::string extack_message(const nlmsgerr *e)
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

/* ---- one family on one socket ---------------------------------------- */

nl_result<genl_nl> genl_nl::open(const char *name, int maxattr, std::uint8_t version,
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

nl_status genl_nl::request(std::uint8_t cmd, bool dump, const std::vector<nl_attr_out> &attrs,
			   const reply_fn &fn)
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

genl_nl::genl_nl(nl_sock_ptr sk, int family, int maxattr, std::uint8_t version)
	: sk_(std::move(sk)), family_(family), maxattr_(maxattr), version_(version)
{
}

/* ---- reporting -------------------------------------------------------- */

void report(const char *what, const nl_failure &f,
	    std::initializer_list<std::pair<int, const char *>> hints)
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

} // namespace ftools
