// SPDX-License-Identifier: LGPL-2.1-or-later
/**
 * @file space.hpp
 * libcaladan: spaces, capabilities and the Memory operations.
 * Part of <caladan/caladan.hpp>, the header to include.
 */
#ifndef CALADAN_SPACE_HPP
#define CALADAN_SPACE_HPP

#include <caladan/fd.hpp>
#include <caladan/types.hpp>

#include <memory>

/* The library is built with -fvisibility=hidden: what is declared here
 * is its API, exported (libcaladan.map, libcaladan.symbols). */
#pragma GCC visibility push(default)

namespace caladan {

/* ------------------------------------------------------------------------ */
/* Spaces and capabilities                                                   */
/* ------------------------------------------------------------------------ */

/**
 * space_ref: shared ownership of a space's /dev/fractos fd.  A space holds
 * one, and so does every cap, request_builder, lease and ring made on it,
 * so that the fd stays open, and its number is not reused for another
 * file, while any of them lives.
 */
using space_ref = std::shared_ptr<const unique_fd>;

/// The fd @p sp owns, -1 if none.
inline int fd_of(const space_ref &sp) noexcept
{
	return sp ? sp->get() : -1;
}

/**
 * space: a capability space, i.e. one open file of /dev/fractos.
 * Move-only.  The file closes, which drops all of the space's
 * capabilities and revokes every object it created, when the space and
 * everything made on it (caps, messages, builders, leases, rings: they
 * share its space_ref) are gone.
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
	/// Adopts an already open /dev/fractos fd (throws std::bad_alloc
	/// when it cannot allocate the shared owner).
	static space from_fd(unique_fd fd) { return space(std::move(fd)); }

	space(space &&) noexcept = default;
	space &operator=(space &&) noexcept = default;
	space(const space &) = delete;
	space &operator=(const space &) = delete;

	/// The /dev/fractos fd (-1 if empty).
	int fd() const noexcept { return fd_of(fd_); }
	explicit operator bool() const noexcept { return fd_ && *fd_; }
	/// The shared owner of the fd (null if empty), for what is made on it.
	const space_ref &ref() const noexcept { return fd_; }

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

	/// FRACTOS_IOC_SPACE_CONTACT's ADD: name the Request @p req, a cap
	/// of this space, as a contact (invoked with a fractos_contact_note
	/// when the space goes away with it still named); its id.
	result<std::uint32_t> add_contact(const cap &req) const noexcept;
	/// ... DEL: this space's contact @p id is told nothing any more.
	result<void> remove_contact(std::uint32_t id) const noexcept;
	/// ... STEAL: the Memory @p mem (a root this space created) goes to
	/// contact @p id, as a capability of its note, if this space's
	/// process is killed.
	result<void> mark_stealable(std::uint32_t id, const cap &mem) const noexcept;
	/// ... UNSTEAL: take that mark back.
	result<void> unmark_stealable(std::uint32_t id, const cap &mem) const noexcept;

private:
	explicit space(unique_fd fd) : fd_(std::make_shared<const unique_fd>(std::move(fd))) {}
	space_ref fd_;
};

/**
 * cap: one capability (a cid) in a space.  Move-only; the destructor
 * closes the cid with FRACTOS_IOC_CAP_CLOSE (errors ignored, errno
 * preserved).  Shares the ownership of its space's fd (space_ref), so a
 * cap that outlives its space object still closes its cid in that space,
 * never in another file that took the fd's number.
 *
 * Operations on an empty cap reach the kernel with fd -1 and fail with EBADF.
 */
class cap {
public:
	/// An empty cap (no cid).
	cap() noexcept = default;
	/// Adopts @p cid of @p sp.
	cap(const space &sp, std::uint32_t cid) noexcept : sp_(sp.ref()), cid_(cid) {}
	/// Adopts @p cid of the space @p sp owns.
	cap(space_ref sp, std::uint32_t cid) noexcept : sp_(std::move(sp)), cid_(cid) {}
	~cap() { reset(); }

	cap(cap &&o) noexcept : sp_(std::move(o.sp_)), cid_(o.release()) {}
	cap &operator=(cap &&o) noexcept
	{
		if (this != &o) {
			reset();
			sp_ = std::move(o.sp_);
			cid_ = o.release();
		}
		return *this;
	}
	cap(const cap &) = delete;
	cap &operator=(const cap &) = delete;

	/// The capability id, FRACTOS_CID_INVALID if empty.
	std::uint32_t cid() const noexcept { return cid_; }
	/// The fd of the space the cid lives in (-1 if empty and moved from).
	int space_fd() const noexcept { return fd_of(sp_); }
	/// The shared owner of that fd.
	const space_ref &space_owner() const noexcept { return sp_; }
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

	space_ref sp_;
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

/**
 * mapping: a shared mapping of a Memory capability ("Mapping Memory" in
 * the uAPI header), unmapped by its destructor.  Move-only.  Its pages are
 * the Memory's: an access after the object's revocation raises SIGBUS.
 */
class mapping {
public:
	mapping() noexcept = default;
	mapping(mapping &&o) noexcept;
	mapping &operator=(mapping &&o) noexcept;
	mapping(const mapping &) = delete;
	mapping &operator=(const mapping &) = delete;
	~mapping();

	void *data() const noexcept { return addr_; }
	std::size_t size() const noexcept { return len_; }

private:
	friend result<mapping> memory_map(const cap &, std::size_t, bool,
					  std::uint64_t) noexcept;
	mapping(void *addr, std::size_t len) noexcept : addr_(addr), len_(len) {}
	void *addr_ = nullptr;
	std::size_t len_ = 0;
};

/**
 * mmap() of @p mem's capability fd: @p len bytes (whole pages) from page
 * offset @p offset of its view, writable if @p writable.  Errors: those of
 * CAP_EXPORT, and ENODEV, EINVAL, EACCES, ENXIO, EKEYREVOKED (see the uAPI
 * header).
 */
result<mapping> memory_map(const cap &mem, std::size_t len, bool writable = true,
			   std::uint64_t offset = 0) noexcept;

/**
 * FRACTOS_IOC_MEMORY_GRANT without a Request: the buffer of @p mem (the
 * whole of a root its space created, every right) moves to a new object;
 * every capability to the old one is revoked and the caller's mapping of
 * the pages removed.  Returns the one capability to the new object.
 */
result<cap> memory_grant(const cap &mem) noexcept;

/**
 * FRACTOS_IOC_MEMORY_GRANT to @p req (in @p mem's space): its provider
 * receives the one capability to the new object.  When that invocation
 * fails, the error is returned and the capability, kept in the space, is
 * handed to @p kept if given (else closed: the buffer is then lost).
 */
result<void> memory_grant(const cap &mem, const cap &req, cap *kept = nullptr) noexcept;

} // namespace caladan

#pragma GCC visibility pop

#endif // CALADAN_SPACE_HPP
