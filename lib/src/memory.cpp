// SPDX-License-Identifier: LGPL-2.1-or-later
// Memory objects, copies and capability import.
#include "ioctl.hpp"

#include <cerrno>
#include <utility>

#include <sys/mman.h>
#include <unistd.h>

namespace caladan {

namespace {

/* MEMORY_CREATE: @addr is a user address, or with @flags' DMABUF an offset. */
result<cap> create(const space &sp, std::uint64_t addr, std::size_t len, perm perms,
		   std::uint32_t flags, int dmabuf_fd) noexcept
{
	fractos_memory_create a{};
	a.addr = addr;
	a.len = len;
	a.perms = std::uint32_t(perms);
	a.flags = flags;
	a.dmabuf_fd = dmabuf_fd;
	if (auto r = detail::call<FRACTOS_IOC_MEMORY_CREATE>(sp.fd(), a); !r)
		return r.error();
	return cap(sp, a.cid);
}

} // namespace

result<cap> memory_create(const space &sp, void *addr, std::size_t len, perm perms) noexcept
{
	return create(sp, reinterpret_cast<std::uintptr_t>(addr), len, perms, 0, 0);
}

result<cap> memory_import_dmabuf(const space &sp, int dmabuf_fd, std::uint64_t offset,
				 std::size_t len, perm perms) noexcept
{
	return create(sp, offset, len, perms, FRACTOS_MEMORY_DMABUF, dmabuf_fd);
}

result<cap> memory_diminish(const cap &c, std::uint64_t offset, std::uint64_t len,
			    perm drop_perms) noexcept
{
	fractos_memory_diminish a{};
	a.cid = c.cid();
	a.drop_perms = std::uint32_t(drop_perms);
	a.offset = offset;
	a.len = len;
	if (auto r = detail::call<FRACTOS_IOC_MEMORY_DIMINISH>(c.space_fd(), a); !r)
		return r.error();
	return cap(c.space_owner(), a.new_cid);
}

result<std::uint64_t> memory_copy(const space &sp, const cap &src, const cap &dst,
				  const copy_opts &opts) noexcept
{
	if (src.space_fd() != sp.fd() || dst.space_fd() != sp.fd())
		return errno_code(EXDEV);

	fractos_memory_copy a{};
	a.src = src.cid();
	a.dst = dst.cid();
	a.src_offset = opts.src_offset;
	a.dst_offset = opts.dst_offset;
	a.len = opts.len;
	if (auto r = detail::call<FRACTOS_IOC_MEMORY_COPY>(sp.fd(), a); !r)
		return r.error();
	return std::uint64_t(a.copied);
}

result<cap> import_fd(const space &sp, int fd) noexcept
{
	fractos_cap_import a{};
	a.fd = fd;
	if (auto r = detail::call<FRACTOS_IOC_CAP_IMPORT>(sp.fd(), a); !r)
		return r.error();
	return cap(sp, a.cid);
}

mapping::mapping(mapping &&o) noexcept
	: addr_(std::exchange(o.addr_, nullptr)), len_(std::exchange(o.len_, 0))
{
}

mapping &mapping::operator=(mapping &&o) noexcept
{
	if (this != &o) {
		if (addr_)
			::munmap(addr_, len_);
		addr_ = std::exchange(o.addr_, nullptr);
		len_ = std::exchange(o.len_, 0);
	}
	return *this;
}

mapping::~mapping()
{
	if (addr_)
		::munmap(addr_, len_);
}

result<mapping> memory_map(const cap &mem, std::size_t len, bool writable,
			   std::uint64_t offset) noexcept
{
	auto fd = mem.export_fd();
	if (!fd)
		return fd.error();
	int prot = PROT_READ | (writable ? PROT_WRITE : 0);
	void *p = ::mmap(nullptr, len, prot, MAP_SHARED, fd->get(),
			 off_t(offset * std::uint64_t(::sysconf(_SC_PAGESIZE))));
	if (p == MAP_FAILED)
		return errno_code(errno);
	return mapping(p, len);
}

result<cap> memory_grant(const cap &mem) noexcept
{
	fractos_memory_grant a{};
	a.cid = mem.cid();
	a.req = FRACTOS_CID_INVALID;
	if (auto r = detail::call<FRACTOS_IOC_MEMORY_GRANT>(mem.space_fd(), a); !r)
		return r.error();
	return cap(mem.space_owner(), a.new_cid);
}

result<void> memory_grant(const cap &mem, const cap &req, cap *kept) noexcept
{
	if (req.space_fd() != mem.space_fd())
		return errno_code(EXDEV);
	fractos_memory_grant a{};
	a.cid = mem.cid();
	a.req = req.cid();
	auto r = detail::call<FRACTOS_IOC_MEMORY_GRANT>(mem.space_fd(), a);
	if (!r && a.new_cid != FRACTOS_CID_INVALID) {
		cap c(mem.space_owner(), a.new_cid);
		if (kept)
			*kept = std::move(c);
	}
	return r;
}

} // namespace caladan
