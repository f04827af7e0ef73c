// SPDX-License-Identifier: LGPL-2.1-or-later
// The file-system service's client (caladan/fs.hpp).
#include <caladan/fs.hpp>

#include "ioctl.hpp"

#include <cerrno>
#include <algorithm>
#include <cstring>

namespace caladan::fs {

namespace {

file_stat to_stat(const wire_reply &r) noexcept
{
	file_stat st;
	st.size = r.size;
	st.capacity = r.capacity;
	st.nextents = r.nextents;
	st.mtime_ns = r.mtime_ns;
	return st;
}

result<file_stat> stat_of(result<message> m)
{
	if (!m)
		return m.error();
	return to_stat(*m->imm<wire_reply>());
}

result<void> void_of(result<message> m)
{
	if (!m)
		return m.error();
	return {};
}

} // namespace

result<message> call(const space &sp, const cap &req, const wire_req &q, std::string_view name,
		     const cap *mem, std::chrono::nanoseconds timeout)
{
	if (!req)
		return errno_code(EBADF);
	request_builder b = sp.request(req);
	b.set_imm(q);
	if (!name.empty())
		b.set_imm(name);
	if (mem)
		b.lease(*mem);
	auto m = detail::status_call(b, timeout);
	if (m && !m->imm<wire_reply>())
		return errno_code(EPROTO);
	return m;
}

/* ---- file --------------------------------------------------------------- */

result<std::uint64_t> file::dax_io(const space &sp, bool write, const cap &mem,
				   std::uint64_t offset, std::uint64_t len,
				   std::chrono::nanoseconds timeout) const
{
	std::uint64_t done = 0, base = 0;

	if (write && !writable())
		return errno_code(EBADF);
	/* One block I/O per extent touched, per FRACTOS_BLK_MAX_IO of it. */
	for (std::size_t i = 0; i < ext_.size() && done < len;) {
		const dax_extent &e = ext_[i];
		std::uint64_t pos = offset + done;

		if (pos >= base + e.len) {
			base += e.len;
			i++;
			continue;
		}
		std::uint64_t in = pos - base;
		std::uint64_t n = std::min({len - done, e.len - in,
					    std::uint64_t(FRACTOS_BLK_MAX_IO)});
		auto view = memory_diminish(mem, done, n, perm::none);
		if (!view)
			return view.error();
		fractos_blk_io io{};
		io.offset = in;
		io.len = n;
		auto m = sp.request(write ? e.write : e.read)
				 .set_imm(io)
				 .lease(*view)
				 .call_with_lease(timeout);
		if (!m)
			return m.error();
		auto d = m->imm<fractos_blk_done>();
		if (!d)
			return errno_code(EPROTO);
		if (d->result < 0)
			return errno_code(int(-d->result));
		done += std::uint64_t(d->result);
		if (std::uint64_t(d->result) != n)
			break;
	}
	if (len && !done)
		return errno_code(ERANGE);	/* offset past the extents */
	return done;
}

/* FS mode: one call of the daemon with @p mem lent; the bytes done. */
result<std::uint64_t> file::io(const space &sp, op o, const cap &mem, std::uint64_t offset,
			       std::uint64_t len, std::chrono::nanoseconds timeout) const
{
	wire_req q;
	q.op = std::uint32_t(o);
	q.offset = offset;
	q.len = len;
	auto m = call(sp, req_, q, {}, &mem, timeout);
	if (!m)
		return m.error();
	return m->imm<wire_reply>()->size;
}

result<std::uint64_t> file::read(const space &sp, const cap &mem, std::uint64_t offset,
				 std::uint64_t len, std::chrono::nanoseconds timeout) const
{
	if (dax())
		return dax_io(sp, false, mem, offset, len, timeout);
	return io(sp, op::read, mem, offset, len, timeout);
}

result<std::uint64_t> file::write(const space &sp, const cap &mem, std::uint64_t offset,
				  std::uint64_t len, std::chrono::nanoseconds timeout) const
{
	if (dax())
		return dax_io(sp, true, mem, offset, len, timeout);
	return io(sp, op::write, mem, offset, len, timeout);
}

result<file_stat> file::resize(const space &sp, std::uint64_t size,
			       std::chrono::nanoseconds timeout) const
{
	wire_req q;
	q.op = std::uint32_t(op::resize);
	q.len = size;
	return stat_of(call(sp, req_, q, {}, nullptr, timeout));
}

result<file_stat> file::stat(const space &sp, std::chrono::nanoseconds timeout) const
{
	wire_req q;
	q.op = std::uint32_t(op::fstat);
	return stat_of(call(sp, req_, q, {}, nullptr, timeout));
}

result<void> file::close(const space &sp, std::chrono::nanoseconds timeout)
{
	wire_req q;
	q.op = std::uint32_t(op::close);
	auto r = void_of(call(sp, req_, q, {}, nullptr, timeout));
	ext_.clear();
	(void)req_.close();
	return r;
}

/* ---- client ------------------------------------------------------------- */

result<client> client::lookup(const space &sp, std::string_view name, std::uint32_t node)
{
	auto c = node ? name_lookup(sp, name, FRACTOS_NAME_NODE, node) : name_lookup(sp, name);
	if (!c)
		return c.error();
	return client(std::move(*c));
}

result<void> client::create(const space &sp, std::string_view name,
			    std::chrono::nanoseconds timeout) const
{
	wire_req q;
	q.op = std::uint32_t(op::create);
	return void_of(call(sp, svc_, q, name, nullptr, timeout));
}

result<file> client::open(const space &sp, std::string_view name, std::uint32_t flags,
			  std::uint64_t reserve, std::chrono::nanoseconds timeout) const
{
	wire_req q;
	q.op = std::uint32_t(op::open);
	q.flags = flags;
	q.len = reserve;
	auto m = call(sp, svc_, q, name, nullptr, timeout);
	if (!m)
		return m.error();
	wire_reply r = *m->imm<wire_reply>();
	std::size_t per = flags & open_write ? 2 : 1;
	std::size_t want = 1 + (flags & open_dax ? per * r.nextents : 0);
	if (m->caps.size() != want || r.nextents > max_extents)
		return errno_code(EPROTO);
	std::vector<dax_extent> ext;
	if (flags & open_dax) {
		for (std::uint32_t i = 0; i < r.nextents; i++) {
			auto e = m->imm<wire_extent>(sizeof(wire_reply) + i * sizeof(wire_extent));
			if (!e)
				return errno_code(EPROTO);
			dax_extent d;
			d.len = e->len;
			d.read = std::move(m->caps[1 + i * per]);
			if (per == 2)
				d.write = std::move(m->caps[2 + i * per]);
			ext.push_back(std::move(d));
		}
	}
	return file(std::move(m->caps[0]), flags, to_stat(r), std::move(ext));
}

result<file_stat> client::stat(const space &sp, std::string_view name,
			       std::chrono::nanoseconds timeout) const
{
	wire_req q;
	q.op = std::uint32_t(op::stat);
	return stat_of(call(sp, svc_, q, name, nullptr, timeout));
}

result<std::vector<entry>> client::list(const space &sp, std::chrono::nanoseconds timeout) const
{
	std::vector<entry> all;
	wire_req q;
	q.op = std::uint32_t(op::list);
	do {
		auto m = call(sp, svc_, q, {}, nullptr, timeout);
		if (!m)
			return m.error();
		std::size_t off = sizeof(wire_reply);
		while (off < m->imms.size()) {
			auto w = m->imm<wire_entry>(off);
			if (!w || w->namelen > name_max ||
			    m->imms.size() - off - sizeof(wire_entry) < w->namelen)
				return errno_code(EPROTO);
			entry e;
			e.inode = w->inode;
			e.size = w->size;
			e.mtime_ns = w->mtime_ns;
			e.name.assign(m->imm_string().substr(off + sizeof(wire_entry), w->namelen));
			all.push_back(std::move(e));
			off += sizeof(wire_entry) + w->namelen;
		}
		q.offset = m->imm<wire_reply>()->next;
	} while (q.offset);
	return all;
}

result<void> client::unlink(const space &sp, std::string_view name,
			    std::chrono::nanoseconds timeout) const
{
	wire_req q;
	q.op = std::uint32_t(op::unlink);
	return void_of(call(sp, svc_, q, name, nullptr, timeout));
}

result<std::uint64_t> client::fsck(const space &sp, std::chrono::nanoseconds timeout) const
{
	wire_req q;
	q.op = std::uint32_t(op::fsck);
	auto m = call(sp, svc_, q, {}, nullptr, timeout);
	if (!m)
		return m.error();
	return m->imm<wire_reply>()->next;
}

} // namespace caladan::fs
