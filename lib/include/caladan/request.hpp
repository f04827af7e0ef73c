// SPDX-License-Identifier: LGPL-2.1-or-later
/**
 * @file request.hpp
 * libcaladan: Requests, messages, monitors, the request builder and a
 * message's continuations.
 * Part of <caladan/caladan.hpp>, the header to include.
 */
#ifndef CALADAN_REQUEST_HPP
#define CALADAN_REQUEST_HPP

#include <caladan/space.hpp>

/* The library is built with -fvisibility=hidden: what is declared here
 * is its API, exported (libcaladan.map, libcaladan.symbols). */
#pragma GCC visibility push(default)

namespace caladan {

/* ------------------------------------------------------------------------ */
/* Requests and messages                                                     */
/* ------------------------------------------------------------------------ */

/// fractos_request_receive.type.
enum class msg_type : std::uint32_t {
	none = 0,
	request = FRACTOS_MSG_REQUEST,                   ///< an invocation
	monitor_receive = FRACTOS_MSG_MONITOR_RECEIVE,   ///< tag: the cookie
	monitor_delegate = FRACTOS_MSG_MONITOR_DELEGATE, ///< tag: the cookie
};

/// "request", "monitor_receive", "monitor_delegate" or "unknown".
const char *to_string(msg_type t) noexcept;

namespace detail {
template <class T>
struct is_span : std::false_type {};
template <class T, std::size_t N>
struct is_span<std::span<T, N>> : std::true_type {};
} // namespace detail

/// Values sent as their bytes by request_builder::set_imm() and read back by
/// message::imm(): trivially copyable, and not a pointer, span or
/// string_view (those are sent as what they point to, by other overloads).
template <class T>
concept imm_value = std::is_trivially_copyable_v<T> && !std::is_pointer_v<T> &&
		    !detail::is_span<std::remove_cv_t<T>>::value &&
		    !std::is_same_v<std::remove_cv_t<T>, std::string_view>;

/**
 * message: one received message.  Owns the capability arguments that the
 * kernel installed in the receiving space (closed on destruction).
 */
struct message {
	msg_type type = msg_type::none;
	/// The Request's tag (the cookie for monitor events).
	std::uint64_t tag = 0;
	/// The immediate bytes: the Request's, then the invocation's.
	std::vector<std::byte> imms;
	/// The capability arguments, in argument order.
	std::vector<cap> caps;

	/// The trivially copyable value at byte @p offset of the immediates,
	/// or ERANGE if it does not fit.
	template <imm_value T>
	result<T> imm(std::size_t offset = 0) const noexcept
	{
		if (offset > imms.size() || imms.size() - offset < sizeof(T))
			return errno_code(ERANGE);
		T v;
		std::memcpy(&v, imms.data() + offset, sizeof(T));
		return v;
	}
	/// The immediates as characters.
	std::string_view imm_string() const noexcept
	{
		return {reinterpret_cast<const char *>(imms.data()), imms.size()};
	}
};

/// FRACTOS_IOC_REQUEST_CREATE, new Request: provider @p sp, tag @p tag,
/// immediates @p imms and capability arguments @p cids (cids of @p sp).
result<cap> request_create(const space &sp, std::uint64_t tag,
			   std::span<const std::byte> imms = {},
			   std::span<const std::uint32_t> cids = {}) noexcept;
/// FRACTOS_IOC_REQUEST_CREATE, derived: a revocation-tree child of @p base
/// with its arguments plus @p imms and @p cids (cids of @p base's space).
result<cap> request_derive(const cap &base, std::span<const std::byte> imms = {},
			   std::span<const std::uint32_t> cids = {}) noexcept;
/// FRACTOS_IOC_REQUEST_INVOKE: queues one message on @p req's provider,
/// with @p imms and @p cids appended for this invocation only.
/// @p flags: FRACTOS_INVOKE_* (FRACTOS_INVOKE_WAIT waits for room;
/// FRACTOS_INVOKE_NOACK returns once another node's invocation is sent).
result<void> request_invoke(const cap &req, std::span<const std::byte> imms = {},
			    std::span<const std::uint32_t> cids = {},
			    std::uint32_t flags = 0) noexcept;
/**
 * FRACTOS_IOC_REQUEST_RECEIVE with @p flags (FRACTOS_RECV_*) and, with
 * FRACTOS_RECV_TIMEOUT, @p timeout_ns.  The buffers are sized for the
 * largest message (FRACTOS_REQ_MAX_IMM, FRACTOS_REQ_MAX_CAPS), so EMSGSIZE
 * cannot happen.  One ioctl.
 */
result<message> request_receive(const space &sp, std::uint32_t flags = 0,
				std::uint64_t timeout_ns = 0);

/// FRACTOS_IOC_MONITOR_RECEIVE: a FRACTOS_MSG_MONITOR_RECEIVE message with
/// tag @p cookie arrives in @p c's space when @p c's object is revoked.
result<void> monitor_receive(const cap &c, std::uint64_t cookie) noexcept;
/// FRACTOS_IOC_MONITOR_DELEGATE: delegations of @p c's object (created by
/// this space) hand out revocation-tree children; a
/// FRACTOS_MSG_MONITOR_DELEGATE message with tag @p cookie arrives when
/// they are all gone.
result<void> monitor_delegate(const cap &c, std::uint64_t cookie) noexcept;


class lease;



/**
 * request_builder: arguments gathered in the spirit of libfractos, then one
 * kernel call.
 *
 *     sp.request(req).set_imm(std::uint64_t{42}).set_cap(mem).invoke();
 *     cap d = sp.request(req).set_cap(cont).derive().value();
 *     cap r = sp.request().set_tag(7).set_imm("hi"sv).create().value();
 *
 * Arguments are appended in call order (the kernel never changes an
 * argument once set: a Request's arguments come first, an invocation's or
 * derivation's after).  Errors found while building (a cap of another
 * space: EXDEV) are kept and returned by the final call, which then does
 * not reach the kernel.  The builder does not own the caps it was given:
 * they must stay open until the final call.  A builder can be finished
 * more than once (e.g. invoke() in a loop).
 */
class request_builder {
public:
	/// A builder for a new Request of @p sp (no base).
	explicit request_builder(const space &sp) noexcept : sp_(sp.ref()) {}
	/// A builder on the Request @p cid of @p sp.
	request_builder(const space &sp, std::uint32_t cid) noexcept
		: sp_(sp.ref()), base_(cid)
	{
	}
	/// A builder on the Request @p base, in @p base's space.
	explicit request_builder(const cap &base) noexcept
		: sp_(base.space_owner()), base_(base.cid())
	{
	}
	/// A builder on the Request @p base, which must be a cap of @p sp
	/// (else the final call fails with EXDEV).
	request_builder(const space &sp, const cap &base) noexcept;

	/// The tag of a new Request (create() without base only).
	request_builder &set_tag(std::uint64_t tag) noexcept
	{
		tag_ = tag;
		return *this;
	}
	/// Appends the bytes of @p v as immediates.
	template <imm_value T>
	request_builder &set_imm(const T &v)
	{
		return set_imm(std::as_bytes(std::span<const T, 1>(&v, 1)));
	}
	/// Appends @p bytes.
	request_builder &set_imm(std::span<const std::byte> bytes);
	/// Appends the characters of @p s (no terminating NUL).
	request_builder &set_imm(std::string_view s)
	{
		return set_imm(std::as_bytes(std::span<const char>(s.data(), s.size())));
	}
	/// Appends @p c as a capability argument (EXDEV later if @p c is not
	/// a cap of this builder's space).
	request_builder &set_cap(const cap &c);
	/// Appends a raw cid of this builder's space.
	request_builder &set_cid(std::uint32_t cid);
	/// Lends @p mem for one call: call_with_lease() / invoke_with_lease()
	/// pass a fresh revocation-tree child of it in this argument position
	/// and revoke it when the reply arrives.
	request_builder &lease(const cap &mem);
	/// FRACTOS_INVOKE_WAIT: invoke() waits for room in a full queue.
	request_builder &set_wait(bool wait = true) noexcept
	{
		flags_ = wait ? flags_ | FRACTOS_INVOKE_WAIT : flags_ & ~FRACTOS_INVOKE_WAIT;
		return *this;
	}
	/// FRACTOS_INVOKE_NOACK: invoke() returns once another node's
	/// invocation is sent; the owner's refusals are counted, not returned
	/// (the uAPI header says what is still returned).  Not with
	/// set_wait() (EINVAL).
	request_builder &set_noack(bool noack = true) noexcept
	{
		flags_ = noack ? flags_ | FRACTOS_INVOKE_NOACK : flags_ & ~FRACTOS_INVOKE_NOACK;
		return *this;
	}

	/// FRACTOS_CREATE_AT_OWNER: derive() has the node owning the base
	/// Request derive it there, so that invoking the result goes straight
	/// to that node (no effect on a Request of this node).
	request_builder &set_at_owner(bool at_owner = true) noexcept
	{
		create_flags_ = at_owner ? create_flags_ | FRACTOS_CREATE_AT_OWNER
					 : create_flags_ & ~FRACTOS_CREATE_AT_OWNER;
		return *this;
	}

	/// FRACTOS_IOC_REQUEST_INVOKE on the base Request.
	result<void> invoke() const noexcept;
	/// FRACTOS_IOC_REQUEST_CREATE deriving from the base Request (EINVAL
	/// without a base).
	result<cap> derive() const noexcept;
	/// FRACTOS_IOC_REQUEST_CREATE: a new Request with this builder's tag if
	/// there is no base, else the same as derive().
	result<cap> create() const noexcept;

	/**
	 * Bifröst lease call, asynchronous half: creates a one-shot reply
	 * continuation (a new Request of this space with a fresh tag), turns
	 * each lease() argument into a new revocation-tree child, and invokes
	 * the base Request with the leased children in their positions and the
	 * continuation as the *last* capability argument.  The returned lease
	 * revokes the children (and the continuation) when lease::complete()
	 * is called or the lease is destroyed.
	 */
	result<caladan::lease> invoke_with_lease() const;
	/**
	 * Bifröst lease call: invoke_with_lease(), then receive until the
	 * reply continuation is invoked, revoke the leases, return the reply.
	 * Messages that are not the reply are appended to @p others (dropped
	 * if it is null).  @p timeout: 0 waits forever, else ETIMEDOUT (the
	 * leases are revoked then too).
	 */
	result<message> call_with_lease(std::chrono::nanoseconds timeout = {},
					std::vector<message> *others = nullptr) const;

	/// The argument struct invoke() passes to the kernel; its pointers
	/// refer to this builder's storage.
	fractos_request_invoke invoke_arg() const noexcept;
	/// The argument struct create()/derive() pass to the kernel.
	fractos_request_create create_arg() const noexcept;

	int space_fd() const noexcept { return fd_of(sp_); }
	std::uint32_t base() const noexcept { return base_; }
	std::span<const std::byte> imms() const noexcept { return imms_; }
	std::span<const std::uint32_t> cids() const noexcept { return cids_; }
	/// The first error found while building, empty if none.
	std::error_code error() const noexcept { return err_; }

private:
	void fail(std::error_code ec) noexcept
	{
		if (!err_)
			err_ = ec;
	}

	space_ref sp_;
	std::uint32_t base_ = FRACTOS_CID_INVALID;
	std::uint32_t flags_ = 0;
	std::uint32_t create_flags_ = 0;
	std::uint64_t tag_ = 0;
	std::vector<std::byte> imms_;
	std::vector<std::uint32_t> cids_;
	/// Positions in cids_ of leased Memory (whose cids are placeholders).
	std::vector<std::size_t> leased_;
	std::error_code err_;
};

/**
 * lease: a Bifröst call in flight (request_builder::invoke_with_lease()).
 * Owns the revocation-tree children lent to the provider and the one-shot
 * reply continuation; move-only.  complete() (or destruction) revokes them
 * all: the provider's copies of the leased Memory fail with EKEYREVOKED
 * afterwards, and a late reply fails too.
 */

/// last capability argument, or nullptr if it has none.
inline const cap *reply_cap(const message &m) noexcept
{
	return m.caps.empty() ? nullptr : &m.caps.back();
}

/**
 * Where a protocol puts its continuations among a message's capabilities
 * (what a kernel provider's struct fos_kmsg_layout says, for a user
 * provider).  Capabilities are positional, counted from the first: a
 * derived Request's own come before the invoker's.
 */
struct msg_layout {
	/// Capabilities of a well-formed message: at least, at most.
	std::size_t min_caps = 1;
	std::size_t max_caps = 1;
	/// Index of the success continuation (below min_caps).
	std::size_t done = 0;
	/// Index of the error continuation, or done for a protocol with one
	/// continuation; a well-formed message shorter than err + 1 has none.
	std::size_t err = 0;
	/// What each index holds in a well-formed message (obj_type::none:
	/// anything); done and err hold Requests whatever it says.
	std::array<obj_type, 8> types{};
};

/// A message's continuations, by find_conts().
struct msg_conts {
	/// The success continuation; null unless the message is well formed.
	const cap *done = nullptr;
	/// Where errors go (the error continuation, else done); null when the
	/// message names no continuation.
	const cap *err = nullptr;

	bool well_formed() const noexcept { return done != nullptr; }
};

/**
 * The rule every provider of fractos follows (the kernel's adaptors by
 * fos_kmsg_conts()): a message whose capabilities name a continuation is
 * answered exactly once, whatever else is wrong with it.  A well-formed
 * capability list (count and types as @p l says) gives its continuations:
 * serve or refuse the message and answer done or err.  A malformed one
 * gives only err, to answer with EINVAL: the Request at l.err, else the
 * one at l.done, else the last Request of the list.  A message with no
 * Request at all gives neither: nobody can be answered (drop it).  One
 * FRACTOS_IOC_CAP_INFO per capability (a capability whose info fails
 * counts as no Request).  The pointers are into @p m.
 */
msg_conts find_conts(const message &m, const msg_layout &l) noexcept;

} // namespace caladan

#pragma GCC visibility pop

#endif // CALADAN_REQUEST_HPP
