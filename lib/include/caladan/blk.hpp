// SPDX-License-Identifier: LGPL-2.1-or-later
/**
 * @file blk.hpp
 * libcaladan's client of the block adaptor (fractos_nvme.ko): a device's
 * management Request and its volumes' read and write Requests, as in
 * <linux/fractos_blk.h>.
 *
 *     space sp = space::open().value();
 *     auto dev = blk::device::lookup(sp, "ssd0").value();   // or on a node
 *     blk::volume v = dev.create(sp, 64 << 20).value();
 *     cap mem = memory_create(sp, buf, len, perm::all).value();
 *     v.write(sp, mem, 0, 4096);            // waits: bytes or the errno
 *     v.read_async(mem, 0, 4096, done);     // done invoked by the device
 *
 * The synchronous calls are Bifröst lease calls (call_with_lease()): the
 * Memory is lent as a revocation-tree child for the one I/O and revoked
 * when the device answers, through a one-shot continuation.  Every other
 * message that arrives meanwhile is appended to @p others (dropped if it
 * is null).  Errors are the adaptor's errnos (see the header), ETIMEDOUT,
 * or the kernel's for the invocation itself.
 */
#ifndef CALADAN_BLK_HPP
#define CALADAN_BLK_HPP

#include <caladan/caladan.hpp>
#include <linux/fractos_blk.h>

#include <chrono>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

/* The library is built with -fvisibility=hidden: what is declared here
 * is its API, exported (libcaladan.map, libcaladan.symbols). */
#pragma GCC visibility push(default)

namespace caladan::blk {

/// What a volume is.
struct volume_info {
	std::uint64_t id = 0;
	std::uint64_t size = 0;
	std::uint32_t block_size = 0;
};

/// A volume's read and write Requests (caps of one space).
class volume {
public:
	volume() = default;
	volume(volume_info info, cap rd, cap wr) noexcept
		: info_(info), rd_(std::move(rd)), wr_(std::move(wr))
	{
	}

	const volume_info &info() const noexcept { return info_; }
	const cap &read_request() const noexcept { return rd_; }
	const cap &write_request() const noexcept { return wr_; }
	/// Gives up the Requests (read, write); the volume is empty after.
	std::pair<cap, cap> release() noexcept { return {std::move(rd_), std::move(wr_)}; }

	/// Invokes the read Request: @p len bytes from @p offset into the
	/// view @p mem; the device invokes @p done with a fractos_blk_done,
	/// or @p error (or @p done) with the negative errno.
	result<void> read_async(const cap &mem, std::uint64_t offset, std::uint64_t len,
				const cap &done, const cap *error = nullptr) const;
	/// The same for a write from @p mem.
	result<void> write_async(const cap &mem, std::uint64_t offset, std::uint64_t len,
				 const cap &done, const cap *error = nullptr) const;

	/// Reads and waits for the device's answer: the bytes read.
	result<std::uint64_t> read(const space &sp, const cap &mem, std::uint64_t offset,
				   std::uint64_t len, std::chrono::nanoseconds timeout = {},
				   std::vector<message> *others = nullptr) const;
	/// Writes and waits: the bytes written (durable when answered).
	result<std::uint64_t> write(const space &sp, const cap &mem, std::uint64_t offset,
				    std::uint64_t len, std::chrono::nanoseconds timeout = {},
				    std::vector<message> *others = nullptr) const;

	/// A Request derived from the read (or write) Request with @p offset
	/// and @p len fixed: invoked with [memory, done(, error)] and no
	/// immediates, it does that range only.
	result<cap> fixed_range(bool write, std::uint64_t offset, std::uint64_t len) const;

private:
	volume_info info_;
	cap rd_;
	cap wr_;
};

/// An attached device: its management Request.
class device {
public:
	device() = default;
	explicit device(cap mgmt) noexcept : mgmt_(std::move(mgmt)) {}

	/// The management Request published as @p name: on this node when
	/// @p node is 0, else on node @p node.
	static result<device> lookup(const space &sp, std::string_view name,
				     std::uint32_t node = 0);

	const cap &request() const noexcept { return mgmt_; }

	/// FRACTOS_BLK_CREATE: a new volume of @p size bytes.  Other
	/// messages that arrive meanwhile go to @p others, as for I/O.
	result<volume> create(const space &sp, std::uint64_t size,
			      std::chrono::nanoseconds timeout = {},
			      std::vector<message> *others = nullptr) const;
	/// FRACTOS_BLK_OPEN: new Requests of volume @p id.
	result<volume> open(const space &sp, std::uint64_t id,
			    std::chrono::nanoseconds timeout = {},
			    std::vector<message> *others = nullptr) const;
	/// FRACTOS_BLK_DESTROY: revokes every Request of volume @p id and
	/// frees it.
	result<void> destroy(const space &sp, std::uint64_t id,
			     std::chrono::nanoseconds timeout = {},
			     std::vector<message> *others = nullptr) const;

private:
	result<message> call(const space &sp, std::uint32_t op, std::uint64_t size,
			     std::uint64_t id, std::chrono::nanoseconds timeout,
			     std::vector<message> *others) const;

	cap mgmt_;
};

} // namespace caladan::blk

#pragma GCC visibility pop

#endif // CALADAN_BLK_HPP
