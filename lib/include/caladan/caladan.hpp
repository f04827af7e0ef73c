// SPDX-License-Identifier: LGPL-2.1-or-later
/**
 * @file caladan.hpp
 * libcaladan: a thin C++20 layer over the /dev/fractos ioctl interface.
 *
 * Design (in the spirit of liburing):
 *  - One function per kernel operation, named after it; every function that
 *    talks to the kernel makes exactly the one ioctl its name says (plus, for
 *    space::open, the open(2)).  Nothing is cached, retried or batched.
 *  - Errors are values: result<T> holds either a T or a std::error_code in
 *    std::system_category() carrying the errno the kernel returned.  The
 *    library never throws, except result<T>::value() on an error result.
 *  - Every kernel resource has an owner: unique_fd closes its fd, space owns
 *    its /dev/fractos fd, cap closes its cid (FRACTOS_IOC_CAP_CLOSE).
 *
 * Lifetime rules:
 *  - A cap stores its space's fd as a plain, non-owning int.  The space must
 *    outlive every cap made in it (declare the space first, so that it is
 *    destroyed last).  Destroying a cap after its space has been closed
 *    issues CAP_CLOSE on a stale fd number: harmless if the number is
 *    unused (EBADF), wrong if it has been reused for another space.  The
 *    same holds for a message (it owns caps), a request_builder, a lease
 *    and a ring (ring.hpp): the space outlives them.
 *  - A Memory object's buffer must stay mapped while the object is in use
 *    (the kernel pins the pages; unmapping just stops aliasing them).
 *  - Caps are never shared between spaces: passing a cap of another space
 *    where a space is given fails with EXDEV before reaching the kernel.
 *
 * The API at a glance:
 *
 *     space sp = space::open().value();             // one /dev/fractos open
 *     cap mem = memory_create(sp, buf, len, perm::all).value();
 *     cap ro  = memory_diminish(mem, 0, 64, perm::write).value();
 *     cap kid = ro.create_revtree().value();         // individually revocable
 *     unique_fd fd = kid.export_fd().value();        // send_fd()/recv_fd()
 *     cap imp = import_fd(sp, fd.get()).value();
 *     memory_copy(sp, src, dst, {.len = 64});        // third-party copy
 *     kid.revoke();                                  // EKEYREVOKED for all
 *
 *     cap req = sp.request().set_tag(1).create().value();    // provider side
 *     sp.request(req).set_imm(x).set_cap(mem).invoke();      // client side
 *     cap k = sp.request(req).set_cap(cont).derive().value(); // continuation
 *     message m = sp.receive().value();     // also receive(timeout), try_receive()
 *     monitor_receive(mem, cookie);         // a message when mem is revoked
 *     name_publish(req, "svc"); name_lookup(sp, "svc");
 *
 *     // Bifröst: lend mem for one call, revoked when the reply arrives
 *     message r = sp.request(req).lease(mem).call_with_lease(1s).value();
 *
 *     // io_uring: see caladan/ring.hpp (ring::prep_*, submit, reap)
 *
 * Header-only parts: result<T>, perm, the value structs.  The rest lives in
 * libcaladan.a / libcaladan.so (ring.hpp needs -luring).
 */
#ifndef CALADAN_CALADAN_HPP
#define CALADAN_CALADAN_HPP

#include <linux/fractos.h>

#include <array>
#include <cassert>
#include <cerrno>
#include <compare>
#include <cstddef>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#define CALADAN_VERSION_MAJOR 0
#define CALADAN_VERSION_MINOR 1
#define CALADAN_VERSION_PATCH 0
#define CALADAN_VERSION "0.1.0"

namespace caladan {

/// The library's version string at run time (CALADAN_VERSION at build time).
const char *version() noexcept;

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

/// The error_code for errno value @p e: {e, std::system_category()}.
/// It compares equal to the matching std::errc (e.g. std::errc::permission_denied).
inline std::error_code errno_code(int e) noexcept
{
	return {e, std::system_category()};
}

/// errno_code(errno): the error of the syscall that just failed.
inline std::error_code last_error() noexcept
{
	return errno_code(errno);
}

/// The symbolic name of an errno value ("EKEYREVOKED"), or nullptr if the
/// library does not know it.  Covers every errno of the fractos errno table.
const char *errno_name(int e) noexcept;

/// "EKEYREVOKED (Key has been revoked)" for a system_category code, else
/// ec.message().
std::string describe(std::error_code ec);

/// True if @p ec is EKEYREVOKED (the capability's object was revoked).
inline bool is_revoked(std::error_code ec) noexcept
{
	return ec == errno_code(EKEYREVOKED);
}

/**
 * result<T>: a T or a non-zero std::error_code (a small std::expected).
 *
 * Constructible implicitly from a T (success) or from a std::error_code
 * (failure; the code must be non-zero).  value() throws std::system_error on
 * an error result; operator* and operator-> do not check (asserted in debug
 * builds).  error() returns the empty std::error_code on success.
 */
template <class T>
class [[nodiscard]] result {
	static_assert(!std::is_reference_v<T>, "result<T&> is not supported");
	static_assert(!std::is_same_v<std::remove_cv_t<T>, std::error_code>,
		      "result<std::error_code> would be ambiguous");

public:
	using value_type = T;

	result(const T &v) requires std::is_copy_constructible_v<T>
		: v_(std::in_place_index<0>, v) {}
	result(T &&v) noexcept(std::is_nothrow_move_constructible_v<T>)
		: v_(std::in_place_index<0>, std::move(v)) {}
	result(std::error_code ec) noexcept : v_(std::in_place_index<1>, ec)
	{
		assert(ec && "result<T>: an error result needs a non-zero code");
	}

	/// True if this holds a value.
	bool has_value() const noexcept { return v_.index() == 0; }
	explicit operator bool() const noexcept { return has_value(); }

	/// The value; throws std::system_error(error()) if there is none.
	T &value() &
	{
		check();
		return *std::get_if<0>(&v_);
	}
	const T &value() const &
	{
		check();
		return *std::get_if<0>(&v_);
	}
	T &&value() &&
	{
		check();
		return std::move(*std::get_if<0>(&v_));
	}

	/// The value, unchecked.
	T &operator*() & noexcept { assert(has_value()); return *std::get_if<0>(&v_); }
	const T &operator*() const & noexcept { assert(has_value()); return *std::get_if<0>(&v_); }
	T &&operator*() && noexcept { assert(has_value()); return std::move(*std::get_if<0>(&v_)); }
	T *operator->() noexcept { assert(has_value()); return std::get_if<0>(&v_); }
	const T *operator->() const noexcept { assert(has_value()); return std::get_if<0>(&v_); }

	/// The value if there is one, else @p other.
	template <class U>
	T value_or(U &&other) const & requires std::is_copy_constructible_v<T>
	{
		return has_value() ? *std::get_if<0>(&v_) : static_cast<T>(std::forward<U>(other));
	}
	template <class U>
	T value_or(U &&other) &&
	{
		return has_value() ? std::move(*std::get_if<0>(&v_))
				   : static_cast<T>(std::forward<U>(other));
	}

	/// The error, or the empty std::error_code if this holds a value.
	std::error_code error() const noexcept
	{
		const std::error_code *ec = std::get_if<1>(&v_);
		return ec ? *ec : std::error_code{};
	}

private:
	void check() const
	{
		if (!has_value())
			throw std::system_error(*std::get_if<1>(&v_));
	}

	std::variant<T, std::error_code> v_;
};

/// result<void>: success, or a non-zero std::error_code.
template <>
class [[nodiscard]] result<void> {
public:
	using value_type = void;

	/// Success.
	result() noexcept = default;
	/// Failure; @p ec must be non-zero.
	result(std::error_code ec) noexcept : ec_(ec)
	{
		assert(ec && "result<void>: an error result needs a non-zero code");
	}

	bool has_value() const noexcept { return !ec_; }
	explicit operator bool() const noexcept { return has_value(); }
	/// Throws std::system_error(error()) on failure, else does nothing.
	void value() const
	{
		if (ec_)
			throw std::system_error(ec_);
	}
	std::error_code error() const noexcept { return ec_; }

private:
	std::error_code ec_;
};

/* ------------------------------------------------------------------------ */
/* File descriptors                                                          */
/* ------------------------------------------------------------------------ */

/**
 * unique_fd: owns one file descriptor and closes it exactly once.
 * Move-only; a moved-from or default unique_fd holds -1.  close(2) errors
 * are ignored (the fd is gone either way) and errno is preserved.
 */
class unique_fd {
public:
	unique_fd() noexcept = default;
	/// Takes ownership of @p fd (-1 for none).
	explicit unique_fd(int fd) noexcept : fd_(fd) {}
	~unique_fd() { reset(); }

	unique_fd(unique_fd &&o) noexcept : fd_(o.release()) {}
	unique_fd &operator=(unique_fd &&o) noexcept
	{
		if (this != &o)
			reset(o.release());
		return *this;
	}
	unique_fd(const unique_fd &) = delete;
	unique_fd &operator=(const unique_fd &) = delete;

	int get() const noexcept { return fd_; }
	explicit operator bool() const noexcept { return fd_ >= 0; }
	/// Gives up ownership and returns the fd (-1 if none).
	int release() noexcept { return std::exchange(fd_, -1); }
	/// Closes the current fd, if any, and takes ownership of @p fd.
	void reset(int fd = -1) noexcept;

private:
	int fd_ = -1;
};

/**
 * A message received by recv_fd(): the data bytes and the fd that came
 * with them (empty if the message carried none).
 */
struct received_fd {
	std::string data;
	unique_fd fd;
};

/**
 * Sends @p fd with SCM_RIGHTS over the unix socket @p sock, with @p data
 * as the message body (at least one byte; "" is sent as one NUL byte).
 * One sendmsg(2); not part of the fractos interface, a convenience for
 * passing exported capability fds between processes.
 */
result<void> send_fd(int sock, int fd, std::string_view data = {}) noexcept;

/**
 * Receives one message of at most @p max_data bytes and, if it carries
 * one, an fd (SCM_RIGHTS, MSG_CMSG_CLOEXEC).  One recvmsg(2).  EPIPE if the
 * peer has closed the socket; EMSGSIZE if the message or its control data
 * was truncated (any fds received are closed).
 */
result<received_fd> recv_fd(int sock, std::size_t max_data = 256);

/* ------------------------------------------------------------------------ */
/* Value types                                                               */
/* ------------------------------------------------------------------------ */

/// Memory rights: FRACTOS_PERM_* as a bit-mask type.
enum class perm : std::uint32_t {
	none = 0,
	read = FRACTOS_PERM_READ,
	write = FRACTOS_PERM_WRITE,
	all = FRACTOS_PERM_ALL,
};

constexpr perm operator|(perm a, perm b) noexcept
{
	return perm(std::uint32_t(a) | std::uint32_t(b));
}
constexpr perm operator&(perm a, perm b) noexcept
{
	return perm(std::uint32_t(a) & std::uint32_t(b));
}
constexpr perm operator~(perm a) noexcept
{
	return perm(~std::uint32_t(a) & FRACTOS_PERM_ALL);
}
/// True if every bit of @p want is in @p have.
constexpr bool has(perm have, perm want) noexcept
{
	return (have & want) == want;
}

/// "rw", "r-", "-w" or "--" (unknown bits are ignored).
std::string to_string(perm p);

/// Object types (fractos_cap_info.type).
enum class obj_type : std::uint32_t {
	none = FRACTOS_OBJ_NONE,
	memory = FRACTOS_OBJ_MEMORY,
	request = FRACTOS_OBJ_REQUEST,
};

/// "none", "memory", "request" or "unknown".
const char *to_string(obj_type t) noexcept;

/// The cluster-wide name of an object: (node, epoch, id).
struct object_id {
	std::uint32_t node = 0;
	std::uint32_t epoch = 0;
	std::uint64_t id = 0;

	friend constexpr auto operator<=>(const object_id &, const object_id &) = default;
};

/// "node:epoch:id", the format of the capability fds' fdinfo.
std::string to_string(const object_id &oid);

/// FRACTOS_IOC_SPACE_INFO output.
struct space_info {
	std::uint32_t abi_version = 0; ///< FRACTOS_ABI_VERSION of the module
	std::uint32_t node = 0;        ///< this node's id (module param node_id)
	std::uint32_t epoch = 0;       ///< changes at every module load
	std::uint32_t max_caps = 0;    ///< per-space capability limit
	std::uint32_t ncaps = 0;       ///< capabilities held by this space now
};

/// FRACTOS_IOC_CAP_INFO output.
struct cap_info {
	obj_type type = obj_type::none;
	perm perms = perm::none;
	std::uint64_t offset = 0;  ///< start of the view in the underlying memory
	std::uint64_t len = 0;     ///< length of the view
	object_id oid;
	std::uint32_t flags = 0;   ///< FRACTOS_INFO_*
	std::uint32_t depth = 0;   ///< revocation-tree depth (0: a root)

	bool revoked() const noexcept { return flags & FRACTOS_INFO_REVOKED; }
	bool revtree() const noexcept { return flags & FRACTOS_INFO_REVTREE; }
	bool owned() const noexcept { return flags & FRACTOS_INFO_OWNED; }
};

/* ------------------------------------------------------------------------ */
/* Spaces and capabilities                                                   */
/* ------------------------------------------------------------------------ */

/**
 * space: a capability space, i.e. one open file of /dev/fractos.
 * Move-only; owns the fd.  Closing it (destruction) drops all of its
 * capabilities and revokes every object it created.
 *
 * A space fd inherited over fork() still names the parent's space: a child
 * that wants a space of its own opens one.
 */
class cap;
class request_builder;
struct message;

class space {
public:
	/// An empty space (fd() == -1).
	space() noexcept = default;

	/// open(@p path, O_RDWR | O_CLOEXEC): a new space.
	static result<space> open(const char *path = FRACTOS_DEVICE) noexcept;
	/// Adopts an already open /dev/fractos fd.
	static space from_fd(unique_fd fd) noexcept { return space(std::move(fd)); }

	/// The /dev/fractos fd (-1 if empty).
	int fd() const noexcept { return fd_.get(); }
	explicit operator bool() const noexcept { return bool(fd_); }

	/// FRACTOS_IOC_SPACE_INFO.
	result<space_info> info() const noexcept;

	/// A builder for a new Request whose provider is this space
	/// (request_builder::create()).
	request_builder request() const;
	/// A builder that invokes or derives the Request @p req, a cap of this
	/// space (EXDEV otherwise, reported by the builder's final call).
	request_builder request(const cap &req) const;
	/// The same for a raw cid of this space (not owned by the builder).
	request_builder request(std::uint32_t cid) const;

	/// FRACTOS_IOC_REQUEST_RECEIVE, waiting as long as it takes.
	result<message> receive() const;
	/// ... waiting at most @p timeout (ETIMEDOUT).
	result<message> receive(std::chrono::nanoseconds timeout) const;
	/// ... not waiting (EAGAIN if nothing is queued).
	result<message> try_receive() const;

private:
	explicit space(unique_fd fd) noexcept : fd_(std::move(fd)) {}
	unique_fd fd_;
};

/**
 * cap: one capability (a cid) in a space.  Move-only; the destructor
 * closes the cid with FRACTOS_IOC_CAP_CLOSE (errors ignored, errno
 * preserved).  Holds the space's fd as a non-owning int: the space must
 * outlive the cap.
 *
 * Operations on an empty cap reach the kernel with fd -1 and fail with EBADF.
 */
class cap {
public:
	/// An empty cap (no cid).
	cap() noexcept = default;
	/// Adopts @p cid of the space open on @p space_fd.
	cap(int space_fd, std::uint32_t cid) noexcept : fd_(space_fd), cid_(cid) {}
	~cap() { reset(); }

	cap(cap &&o) noexcept : fd_(o.fd_), cid_(o.release()) {}
	cap &operator=(cap &&o) noexcept
	{
		if (this != &o) {
			reset();
			fd_ = o.fd_;
			cid_ = o.release();
		}
		return *this;
	}
	cap(const cap &) = delete;
	cap &operator=(const cap &) = delete;

	/// The capability id, FRACTOS_CID_INVALID if empty.
	std::uint32_t cid() const noexcept { return cid_; }
	/// The (non-owned) fd of the space the cid lives in.
	int space_fd() const noexcept { return fd_; }
	explicit operator bool() const noexcept { return cid_ != FRACTOS_CID_INVALID; }

	/// Gives up ownership: returns the cid, which the caller must close.
	std::uint32_t release() noexcept { return std::exchange(cid_, FRACTOS_CID_INVALID); }

	/// FRACTOS_IOC_CAP_CLOSE now, reporting its error; the cap is empty
	/// afterwards either way.
	result<void> close() noexcept;

	/// FRACTOS_IOC_CAP_INFO.  Never EKEYREVOKED: see cap_info::revoked().
	result<cap_info> info() const noexcept;
	/// FRACTOS_IOC_CAP_DUP: a second cid for the same capability.
	result<cap> dup() const noexcept;
	/// FRACTOS_IOC_CAP_REVOKE: revokes the *object* (and its revocation-tree
	/// descendants) for every holder in every space.  This cap stays open.
	result<void> revoke() const noexcept;
	/// FRACTOS_IOC_CAP_CREATE_REVTREE: a child object, same view, that can
	/// be revoked on its own and is revoked with this one.
	result<cap> create_revtree() const noexcept;
	/// FRACTOS_IOC_CAP_EXPORT: an fd carrying a copy of the capability.
	/// @p flags: FRACTOS_EXPORT_* (default: close-on-exec).
	result<unique_fd> export_fd(std::uint32_t flags = FRACTOS_EXPORT_CLOEXEC) const noexcept;

private:
	void reset() noexcept;

	int fd_ = -1;
	std::uint32_t cid_ = FRACTOS_CID_INVALID;
};

/**
 * FRACTOS_IOC_MEMORY_CREATE: pins [@p addr, @p addr + @p len) and returns
 * a capability to a new Memory object with rights @p perms.  The pages stay
 * pinned until the object is revoked or its last capability dropped; keep
 * the buffer mapped for that long if you want it to keep aliasing them.
 */
result<cap> memory_create(const space &sp, void *addr, std::size_t len, perm perms) noexcept;

/**
 * FRACTOS_IOC_MEMORY_CREATE with FRACTOS_MEMORY_DMABUF: a Memory over
 * [@p offset, @p offset + @p len) of the dma-buf @p dmabuf_fd (a GPU
 * driver's PRIME export, udmabuf, a DMA heap).  The kernel holds the
 * dma-buf for the Memory's life: the fd may be closed afterwards.  Errors:
 * EBADF, EINVAL (not a dma-buf), EACCES (perm::write on a dma-buf not open
 * for writing), ERANGE (past its end), EOPNOTSUPP (device memory, or an
 * exporter without a kernel mapping); EINVAL from kernels without it.
 */
result<cap> memory_import_dmabuf(const space &sp, int dmabuf_fd, std::uint64_t offset,
				 std::size_t len, perm perms) noexcept;

/**
 * FRACTOS_IOC_MEMORY_DIMINISH: a new capability, in @p c's space, to the
 * *same* object with the view [@p offset, @p offset + @p len) of @p c's view
 * and the rights of @p c minus @p drop_perms.  Revoking it revokes the
 * whole object: use cap::create_revtree() on it for a separately revocable
 * view.
 */
result<cap> memory_diminish(const cap &c, std::uint64_t offset, std::uint64_t len,
			    perm drop_perms) noexcept;

/// Options of memory_copy(); the defaults copy all of the source view to
/// the start of the destination view.
struct copy_opts {
	std::uint64_t src_offset = 0;
	std::uint64_t dst_offset = 0;
	/// Bytes to copy; 0: the rest of the source view from src_offset.
	std::uint64_t len = 0;
};

/**
 * FRACTOS_IOC_MEMORY_COPY in space @p sp: copies from @p src's view to
 * @p dst's view; returns the bytes copied.  The caller needs capabilities
 * to both objects, not ownership (third-party copy).  Both caps must live in
 * @p sp: if either's space_fd() is not sp.fd(), fails with EXDEV without
 * calling the kernel.
 */
result<std::uint64_t> memory_copy(const space &sp, const cap &src, const cap &dst,
				  const copy_opts &opts = {}) noexcept;

/// FRACTOS_IOC_CAP_IMPORT: a new capability in @p sp from a capability fd
/// made by cap::export_fd() (possibly in another process).  @p fd stays open.
result<cap> import_fd(const space &sp, int fd) noexcept;

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
/// @p flags: FRACTOS_INVOKE_* (FRACTOS_INVOKE_WAIT waits for room).
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

#ifdef FRACTOS_IOC_NAME_PUBLISH
/* ------------------------------------------------------------------------ */
/* Names (per-node name service)                                             */
/* ------------------------------------------------------------------------ */

/// FRACTOS_IOC_NAME_PUBLISH: publishes @p c (its object created by @p c's
/// space) under @p name; @p flags: FRACTOS_NAME_WORLD for every uid.
result<void> name_publish(const cap &c, std::string_view name, std::uint32_t flags = 0) noexcept;
/// FRACTOS_IOC_NAME_LOOKUP: a new cap in @p sp to what @p name names;
/// with FRACTOS_NAME_NODE in @p flags, asks node @p node.
result<cap> name_lookup(const space &sp, std::string_view name, std::uint32_t flags = 0,
			std::uint32_t node = 0) noexcept;
/// FRACTOS_IOC_NAME_UNPUBLISH.
result<void> name_unpublish(const space &sp, std::string_view name) noexcept;
/// The argument struct of the name operations (pointing into @p name).
fractos_name name_arg(std::string_view name, std::uint32_t cid = 0, std::uint32_t flags = 0,
		      std::uint32_t node = 0) noexcept;
#endif

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
	explicit request_builder(const space &sp) noexcept : fd_(sp.fd()) {}
	/// A builder on the Request @p cid of the space open on @p space_fd.
	request_builder(int space_fd, std::uint32_t cid) noexcept : fd_(space_fd), base_(cid) {}
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

	int space_fd() const noexcept { return fd_; }
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

	int fd_ = -1;
	std::uint32_t base_ = FRACTOS_CID_INVALID;
	std::uint32_t flags_ = 0;
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
class lease {
public:
	lease() = default;
	lease(lease &&) noexcept = default;
	lease &operator=(lease &&o) noexcept;
	~lease() { (void)complete(); }

	/// The reply continuation's tag.
	std::uint64_t tag() const noexcept { return tag_; }
	/// The reply continuation (a Request whose provider is this space).
	const cap &reply() const noexcept { return reply_; }
	/// The revocation-tree children lent, in argument order.
	std::span<const cap> leases() const noexcept { return leases_; }
	/// True if @p m is the invocation of this call's reply continuation.
	bool is_reply(const message &m) const noexcept
	{
		return m.type == msg_type::request && m.tag == tag_ && active();
	}
	/// True until complete().
	bool active() const noexcept { return bool(reply_); }

	/// Revokes every lease and the continuation and closes them; returns
	/// the first error (EKEYREVOKED from an already revoked lease is not
	/// one).  Idempotent.
	result<void> complete() noexcept;

	/// Receives until the reply arrives (see call_with_lease()).
	result<message> wait(const space &sp, std::chrono::nanoseconds timeout = {},
			     std::vector<message> *others = nullptr);

private:
	friend class request_builder;
	std::uint64_t tag_ = 0;
	cap reply_;
	std::vector<cap> leases_;
};

/**
 * call_with_lease(): sp.request(req) with @p imms, then each of @p mems
 * lent as in request_builder::lease(), then call_with_lease(@p timeout).
 */
result<message> call_with_lease(const space &sp, const cap &req,
				std::span<const cap *const> mems,
				std::span<const std::byte> imms = {},
				std::chrono::nanoseconds timeout = {});

/// The conventional reply path of a message sent by call_with_lease(): its
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

#endif // CALADAN_CALADAN_HPP
