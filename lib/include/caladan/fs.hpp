// SPDX-License-Identifier: LGPL-2.1-or-later
/**
 * @file fs.hpp
 * The file-system service of fractos (fractos-fsd, adaptors/fs/): its
 * Request interface and libcaladan's client of it.
 *
 *     space sp = space::open().value();
 *     auto svc = fs::client::lookup(sp, "fs0").value();
 *     svc.create(sp, "log");
 *     fs::file f = svc.open(sp, "log", fs::open_write).value();
 *     f.write(sp, mem, 0, n);                  // FS mode: through the daemon
 *     fs::file d = svc.open(sp, "log", fs::open_dax).value();
 *     d.read(sp, mem, 0, n);                   // DAX: straight to the device
 *
 * The service
 * -----------
 * fractos-fsd publishes one Request, the service.  Every operation is a
 * Bifröst call (request_builder::call_with_lease()): immediates struct
 * fs::wire_req, then for the operations on a name the name's bytes (1 to
 * fs::name_max of 0x21-0x7e but '/', no NUL); capabilities [reply], or
 * [memory, reply] for read and write; the reply's immediates are struct
 * fs::wire_reply (then the list entries for op::list).
 *
 *   op::create   a new, empty file.  EEXIST, ENOSPC (no free inode).
 *   op::open     reply caps [file Request, then with open_dax the extents'
 *                volume Requests: for each extent its read Request and,
 *                with open_write, its write Request], nextents, size,
 *                capacity and, after it, one wire_extent per extent.
 *                wire_req.len with open_write: capacity to have (extents
 *                are added, zeroed, to hold it).  Each open makes new
 *                Requests, revoked by close, by unlink of the file and
 *                (see DAX below) by the daemon's death.  ENOENT.
 *   op::stat     size, capacity, nextents, mtime_ns.  ENOENT.
 *   op::list     entries from cookie wire_req.offset (0: the first), as
 *                many as fit one reply; wire_reply.next: the cookie of the
 *                next call, 0 at the end.
 *   op::unlink   revokes every open of the file, frees its inode, then
 *                destroys its volumes.  ENOENT.
 *   op::fsck     the daemon re-reads its metadata from the device and
 *                checks it (and that it matches what it holds):
 *                wire_reply.next is the number of problems (0: clean).
 *
 * The file Request (from op::open; its tag names the open, so nothing
 * in an invocation can reach another file):
 *   op::read     wire_req.offset/len into [memory] (WRITE right), through
 *                the daemon: the device reads into the daemon's buffer,
 *                MEMORY_COPY into the caller's view (FS mode).  size: the
 *                bytes read (fewer at the end of the file, 0 past it).
 *   op::write    the same from [memory] (READ right) to the file: the
 *                data is durable, and the size grown, when answered.  No
 *                hole: an offset past the end of the file is EINVAL.
 *                EBADF on a read-only open.
 *   op::resize   wire_req.len becomes the size (write opens): grows the
 *                capacity as op::open does; what DAX writers call after
 *                writing past the end.  A shrink keeps the extents, and
 *                a later growth of the size shows what they hold: zeros
 *                where nothing was written, else this file's own bytes
 *                (extents are zeroed when made, never shared).
 *   op::fstat    as op::stat.
 *   op::close    revokes the file Request and its DAX Requests.
 *
 * Errors (wire_reply.status, a negative errno): EINVAL (a malformed
 * request, an unknown op, an offset past the end for a write),
 * ENAMETOOLONG, ENOENT, EEXIST, ENOSPC (no inode, or the device is full),
 * EFBIG (max_extents would not hold it), EMSGSIZE (len over max_io),
 * EBADF (a write through a read-only open), EIO (the device), and those
 * of MEMORY_COPY for the caller's memory (EACCES: the view lacks the
 * right; ERANGE, EKEYREVOKED).
 * A revoked file Request (closed, unlinked) fails the invocation itself
 * with EKEYREVOKED.
 *
 * Answers: every call whose capabilities name a Request is answered
 * exactly once, as the block adaptor's are (fractos_blk.h, "Answers";
 * find_conts() with [reply], or [memory, reply] for read and write).
 * Capabilities are positional from the first (a derived Request's own come
 * first).  A capability list of the wrong length or with the wrong type
 * at a position is answered with EINVAL (a wire_reply with only @status)
 * on the Request at the reply's position if there is one there, else on
 * the last Request of the list: [reply, extra] and [memory, reply, extra]
 * on reply, a read with [reply] only on reply, [memory, memory, reply] on
 * reply.  A call with no Request among its capabilities has nobody to
 * answer and is dropped.
 *
 * DAX: a DAX open's Requests are the block adaptor's (caladan/blk.hpp):
 * I/O through them goes straight to the device and never through the
 * daemon (aligned to the device's block size).  Writes past the size need
 * op::resize to be part of the file.  On the daemon's node's device they
 * are children the daemon derives (its objects: they die with it); on
 * another node's device they are a new OPEN of each volume (the kernel
 * does not send a local child of a proxy to a third node): close and
 * unlink revoke them there too, the daemon's death does not.
 */
#ifndef CALADAN_FS_HPP
#define CALADAN_FS_HPP

#include <caladan/blk.hpp>
#include <caladan/caladan.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

/* The library is built with -fvisibility=hidden: what is declared here
 * is its API, exported (libcaladan.map, libcaladan.symbols). */
#pragma GCC visibility push(default)

namespace caladan::fs {

/// Longest file name, in bytes.
inline constexpr std::uint32_t name_max = 127;
/// Extents per file.
inline constexpr std::uint32_t max_extents = 15;
/// Largest read or write through the daemon (FS mode).
inline constexpr std::uint64_t max_io = 4ULL << 20;

/// Operations (wire_req.op).
enum class op : std::uint32_t {
	create = 1,
	open = 2,
	stat = 3,
	list = 4,
	unlink = 5,
	fsck = 6,
	read = 16,
	write = 17,
	resize = 18,
	fstat = 19,
	close = 20,
};

/// Flags of op::open (wire_req.flags).
inline constexpr std::uint32_t open_write = 1;
inline constexpr std::uint32_t open_dax = 2;

/// The immediates of a call (a name follows for create, open, stat and
/// unlink).
struct wire_req {
	std::uint32_t op = 0;
	std::uint32_t flags = 0;
	std::uint64_t offset = 0;
	std::uint64_t len = 0;
};

/// The immediates of a reply.
struct wire_reply {
	std::int32_t status = 0;	///< 0 or a negative errno
	std::uint32_t nextents = 0;
	std::uint64_t size = 0;		///< the file's size; read/write: bytes
	std::uint64_t capacity = 0;	///< bytes in the extents
	std::uint64_t mtime_ns = 0;
	std::uint64_t next = 0;		///< list: next cookie; fsck: problems
};

/// After a DAX open's wire_reply: one per extent, in file order.
struct wire_extent {
	std::uint64_t len = 0;
};

/// After a list reply's wire_reply: one per file, each followed by its
/// name's bytes.
struct wire_entry {
	std::uint64_t size = 0;
	std::uint64_t mtime_ns = 0;
	std::uint32_t inode = 0;
	std::uint32_t namelen = 0;
};

/// What stat says.
struct file_stat {
	std::uint64_t size = 0;
	std::uint64_t capacity = 0;
	std::uint32_t nextents = 0;
	std::uint64_t mtime_ns = 0;
};

/// One file of a listing.
struct entry {
	std::string name;
	std::uint32_t inode = 0;
	std::uint64_t size = 0;
	std::uint64_t mtime_ns = 0;
};

/// A DAX open's extent: its length and its volume Requests (the write
/// one is empty on a read-only open).
struct dax_extent {
	std::uint64_t len = 0;
	cap read;
	cap write;
};

/// An open file: its file Request and, for a DAX open, its extents.
class file {
public:
	file() = default;
	file(cap req, std::uint32_t flags, file_stat st, std::vector<dax_extent> ext) noexcept
		: req_(std::move(req)), flags_(flags), st_(st), ext_(std::move(ext))
	{
	}

	const cap &request() const noexcept { return req_; }
	bool dax() const noexcept { return flags_ & open_dax; }
	bool writable() const noexcept { return flags_ & open_write; }
	/// What the open said (size and capacity then).
	const file_stat &opened() const noexcept { return st_; }
	const std::vector<dax_extent> &extents() const noexcept { return ext_; }

	/**
	 * Reads @p len bytes at @p offset into @p mem's view (from its start):
	 * the bytes read.  FS mode: one call of the daemon (len <= max_io);
	 * DAX: the extents' read Requests, a lease call per extent touched
	 * (per FRACTOS_BLK_MAX_IO of it), offset and len aligned to the
	 * device's block size, not clamped to the size.
	 */
	result<std::uint64_t> read(const space &sp, const cap &mem, std::uint64_t offset,
				   std::uint64_t len, std::chrono::nanoseconds timeout = {}) const;
	/// The same for a write from @p mem.  DAX writes past the size need
	/// resize().
	result<std::uint64_t> write(const space &sp, const cap &mem, std::uint64_t offset,
				    std::uint64_t len, std::chrono::nanoseconds timeout = {}) const;
	/// op::resize.
	result<file_stat> resize(const space &sp, std::uint64_t size,
				 std::chrono::nanoseconds timeout = {}) const;
	/// op::fstat.
	result<file_stat> stat(const space &sp, std::chrono::nanoseconds timeout = {}) const;
	/// op::close; the Requests are dropped whatever it returns.
	result<void> close(const space &sp, std::chrono::nanoseconds timeout = {});

private:
	result<std::uint64_t> io(const space &sp, op o, const cap &mem, std::uint64_t offset,
				 std::uint64_t len, std::chrono::nanoseconds timeout) const;
	result<std::uint64_t> dax_io(const space &sp, bool write, const cap &mem,
				     std::uint64_t offset, std::uint64_t len,
				     std::chrono::nanoseconds timeout) const;

	cap req_;
	std::uint32_t flags_ = 0;
	file_stat st_;
	std::vector<dax_extent> ext_;
};

/// The service: fractos-fsd's published Request.
class client {
public:
	client() = default;
	explicit client(cap svc) noexcept : svc_(std::move(svc)) {}

	/// The service published as @p name (on node @p node when not 0).
	static result<client> lookup(const space &sp, std::string_view name,
				     std::uint32_t node = 0);

	const cap &request() const noexcept { return svc_; }

	result<void> create(const space &sp, std::string_view name,
			    std::chrono::nanoseconds timeout = {}) const;
	/// op::open with @p flags (open_write, open_dax); @p reserve: the
	/// capacity a write open makes sure of.
	result<file> open(const space &sp, std::string_view name, std::uint32_t flags = 0,
			  std::uint64_t reserve = 0, std::chrono::nanoseconds timeout = {}) const;
	result<file_stat> stat(const space &sp, std::string_view name,
			       std::chrono::nanoseconds timeout = {}) const;
	/// Every file (as many calls of op::list as it takes).
	result<std::vector<entry>> list(const space &sp, std::chrono::nanoseconds timeout = {}) const;
	result<void> unlink(const space &sp, std::string_view name,
			    std::chrono::nanoseconds timeout = {}) const;
	/// op::fsck: the number of problems the daemon found.
	result<std::uint64_t> fsck(const space &sp, std::chrono::nanoseconds timeout = {}) const;

private:
	cap svc_;
};

/// One call: @p q and @p name as immediates, @p mem lent when given; the
/// reply (status checked: an error status is the error).
result<message> call(const space &sp, const cap &req, const wire_req &q,
		     std::string_view name = {}, const cap *mem = nullptr,
		     std::chrono::nanoseconds timeout = {});

} // namespace caladan::fs

#pragma GCC visibility pop

#endif // CALADAN_FS_HPP
