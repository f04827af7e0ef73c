// SPDX-License-Identifier: GPL-2.0-or-later
/**
 * @file fsd.hpp
 * fractos-fsd: the file-system service (caladan/fs.hpp says what it
 * serves, meta.hpp how it keeps it).  One thread, one space: a message at
 * a time, and the block calls it makes for one are synchronous; messages
 * that arrive meanwhile wait in a queue of the daemon's.
 */
#ifndef FRACTOS_FSD_FSD_HPP
#define FRACTOS_FSD_FSD_HPP

#include "meta.hpp"

#include <caladan/blk.hpp>
#include <caladan/fs.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <sys/mman.h>

namespace fsd {

/// An anonymous, page-aligned mapping (for Memory objects), unmapped on
/// destruction.
class mapping {
public:
	mapping() = default;
	static caladan::result<mapping> make(std::size_t len);
	mapping(mapping &&o) noexcept : p_(std::exchange(o.p_, nullptr)), len_(o.len_) {}
	mapping &operator=(mapping &&o) noexcept;
	mapping(const mapping &) = delete;
	mapping &operator=(const mapping &) = delete;
	~mapping();

	std::byte *data() const noexcept { return static_cast<std::byte *>(p_); }
	std::size_t size() const noexcept { return len_; }
	std::span<std::byte> span() const noexcept { return {data(), len_}; }

private:
	void *p_ = nullptr;
	std::size_t len_ = 0;
};

/// The daemon's state over one device.
class service {
public:
	/// Block calls time out after this (the device or its node gone).
	static constexpr std::chrono::seconds kBlockTimeout{30};
	/// The FS-mode buffer: the largest I/O plus a block each side.
	static constexpr std::size_t kBufSize = caladan::fs::max_io + (1 << 20);

	/**
	 * Opens the metadata volume @p meta_id of @p dev, reads it and checks
	 * it (problems: EUCLEAN, with the report on stderr).
	 */
	static caladan::result<std::unique_ptr<service>> open(const caladan::space &sp,
							      caladan::blk::device dev,
							      std::uint64_t meta_id);
	/// A new, empty file system on a new metadata volume of @p dev: the
	/// volume's id.
	static caladan::result<std::uint64_t> format(const caladan::space &sp,
						     const caladan::blk::device &dev);

	/// Publishes the service Request as @p name (@p flags: FRACTOS_NAME_*).
	caladan::result<void> publish(std::string_view name, std::uint32_t flags);
private:
	struct key {
		explicit key() = default;
	};

public:
	/// Only open() makes one (the key is private).
	service(key, const caladan::space &sp, caladan::blk::device dev)
		: sp_(sp), dev_(std::move(dev))
	{
	}

	/// Serves until the space fails (it does not return otherwise).
	caladan::result<void> run();

	/// Re-reads the metadata from the device and checks it; the problems.
	caladan::result<std::vector<problem>> check_device();

private:
	struct open_file {
		std::uint32_t ino = 0;
		std::uint32_t flags = 0;
		caladan::cap req;		///< the file Request
		std::vector<caladan::cap> dax;	///< the DAX Requests handed out
	};

	caladan::result<void> load(std::uint64_t meta_id);
	void dispatch(caladan::message &m);
	void reply(caladan::message &m, const caladan::fs::wire_reply &r,
		   std::span<const std::byte> extra = {},
		   std::span<const std::uint32_t> cids = {});
	void fail(caladan::message &m, int err);

	/* The operations; each answers @m. */
	void op_create(caladan::message &m, std::string_view name);
	void op_open(caladan::message &m, const caladan::fs::wire_req &q, std::string_view name);
	void op_stat(caladan::message &m, std::uint32_t ino);
	void op_list(caladan::message &m, const caladan::fs::wire_req &q);
	void op_unlink(caladan::message &m, std::string_view name);
	void op_fsck(caladan::message &m);
	void op_io(caladan::message &m, const caladan::fs::wire_req &q, open_file &f);
	void op_resize(caladan::message &m, const caladan::fs::wire_req &q, open_file &f);
	void op_close(caladan::message &m, std::uint64_t handle);

	/* Helpers. */
	std::int64_t find(std::string_view name) const;
	caladan::result<const caladan::blk::volume *> volume(std::uint64_t id);
	caladan::result<void> write_inode(std::uint32_t ino);
	caladan::result<void> commit(std::uint32_t ino, const inode &old);
	caladan::result<void> grow(std::uint32_t ino, std::uint64_t need);
	caladan::result<void> zero(const caladan::blk::volume &v);
	caladan::result<std::uint64_t> block_io(bool write, std::uint32_t ino, std::uint64_t off,
						std::uint64_t len, std::uint64_t buf_off);
	caladan::result<std::vector<caladan::cap>> dax_requests(std::uint64_t id, bool write);
	void revoke_opens(std::uint32_t ino);
	caladan::fs::wire_reply stat_reply(std::uint32_t ino) const;
	caladan::result<caladan::cap> view(const caladan::cap &mem, std::uint64_t off,
					   std::uint64_t len) const;

	const caladan::space &sp_;
	caladan::blk::device dev_;
	caladan::cap svc_;
	std::uint64_t meta_id_ = 0;
	caladan::blk::volume meta_;
	std::uint32_t bs_ = 512;		///< the device's logical block size
	mapping meta_map_;			///< the metadata image
	caladan::cap meta_mem_;
	mapping buf_map_;			///< FS-mode data
	caladan::cap buf_mem_;
	std::vector<inode> inodes_;
	std::map<std::uint64_t, caladan::blk::volume> volumes_;	///< opened extents
	std::map<std::uint64_t, open_file> opens_;		///< by handle
	std::uint64_t next_handle_ = 1;
	std::vector<caladan::message> pending_;	///< arrived during a block call
};

/* Shared by the service's two files (fsd.cpp, ops.cpp). */
namespace detail {

/* The tag of an open's file Request (low bits: the open's handle; fsd.cpp
 * has the others). */
constexpr std::uint64_t kTagFile = 0x4654000000000000ULL;

/* CLOCK_REALTIME in ns (a file's mtime). */
std::uint64_t now_ns();
/* The errno of @ec to answer with (EIO for anything else). */
int err_of(const std::error_code &ec);

} // namespace detail

} // namespace fsd

#endif // FRACTOS_FSD_FSD_HPP
