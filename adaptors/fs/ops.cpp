// SPDX-License-Identifier: GPL-2.0-or-later
// fractos-fsd's service: the operations themselves (create, open, stat,
// list, unlink, fsck, read and write, resize, close), each answering its
// message exactly once; fsd.cpp has the setup, the helpers and dispatch.
#include "fsd.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

using namespace caladan;
using caladan::fs::op;
using caladan::fs::wire_reply;
using caladan::fs::wire_req;

namespace fsd {

using namespace detail;

/* ---- the operations ------------------------------------------------------- */

void service::op_create(message &m, std::string_view name)
{
	if (find(name) >= 0)
		return fail(m, EEXIST);
	auto free = std::find_if(inodes_.begin(), inodes_.end(),
				 [](const inode &i) { return !i.used(); });
	if (free == inodes_.end())
		return fail(m, ENOSPC);
	std::uint32_t ino = std::uint32_t(free - inodes_.begin());
	inode old = *free;
	free->flags = kInodeUsed;
	free->size = 0;
	free->mtime_ns = now_ns();
	free->name.assign(name);
	free->extents.clear();
	auto w = commit(ino, old);
	if (!w)
		return fail(m, err_of(w.error()));
	return op_stat(m, ino);
}

void service::op_open(message &m, const wire_req &q, std::string_view name)
{
	std::int64_t i = find(name);

	if (q.flags & ~(fs::open_write | fs::open_dax))
		return fail(m, EINVAL);
	if (i < 0)
		return fail(m, ENOENT);
	std::uint32_t ino = std::uint32_t(i);
	bool wr = q.flags & fs::open_write;
	if (q.len && !wr)
		return fail(m, EINVAL);
	if (q.len > inodes_[ino].capacity()) {
		auto g = grow(ino, q.len);
		if (!g)
			return fail(m, err_of(g.error()));
	}

	open_file f;
	std::uint64_t handle = next_handle_++;
	f.ino = ino;
	f.flags = q.flags;
	auto req = sp_.request().set_tag(kTagFile | handle).create();
	if (!req)
		return fail(m, err_of(req.error()));
	f.req = std::move(*req);

	std::vector<std::uint32_t> cids{f.req.cid()};
	std::vector<std::byte> extra;
	if (q.flags & fs::open_dax) {
		for (const extent &e : inodes_[ino].extents) {
			auto rw = dax_requests(e.volume, wr);
			if (!rw)
				return fail(m, err_of(rw.error()));
			for (cap &c : *rw) {
				cids.push_back(c.cid());
				f.dax.push_back(std::move(c));
			}
			fs::wire_extent we;
			we.len = e.len;
			auto b = std::as_bytes(std::span<const fs::wire_extent, 1>(&we, 1));
			extra.insert(extra.end(), b.begin(), b.end());
		}
	}
	reply(m, stat_reply(ino), extra, cids);
	opens_.emplace(handle, std::move(f));
}

void service::op_stat(message &m, std::uint32_t ino)
{
	reply(m, stat_reply(ino));
}

void service::op_list(message &m, const wire_req &q)
{
	std::vector<std::byte> out;
	wire_reply r;
	std::uint64_t i = q.offset;

	for (; i < inodes_.size(); i++) {
		const inode &ino = inodes_[i];
		if (!ino.used())
			continue;
		if (sizeof(wire_reply) + out.size() + sizeof(fs::wire_entry) + ino.name.size() >
		    FRACTOS_REQ_MAX_IMM)
			break;
		fs::wire_entry e;
		e.size = ino.size;
		e.mtime_ns = ino.mtime_ns;
		e.inode = std::uint32_t(i);
		e.namelen = std::uint32_t(ino.name.size());
		auto b = std::as_bytes(std::span<const fs::wire_entry, 1>(&e, 1));
		out.insert(out.end(), b.begin(), b.end());
		auto n = std::as_bytes(std::span<const char>(ino.name.data(), ino.name.size()));
		out.insert(out.end(), n.begin(), n.end());
	}
	r.next = i < inodes_.size() ? i : 0;
	reply(m, r, out);
}

void service::op_unlink(message &m, std::string_view name)
{
	std::int64_t i = find(name);

	if (i < 0)
		return fail(m, ENOENT);
	std::uint32_t ino = std::uint32_t(i);
	inode old = inodes_[ino];
	inode &f = inodes_[ino];
	f.flags = 0;
	f.size = 0;
	f.mtime_ns = 0;
	f.name.clear();
	f.extents.clear();
	auto w = commit(ino, old);
	if (!w)
		return fail(m, err_of(w.error()));
	revoke_opens(ino);
	/* The inode is gone first: a failure here leaves an orphan volume. */
	for (const extent &e : old.extents) {
		volumes_.erase(e.volume);
		auto d = dev_.destroy(sp_, e.volume, kBlockTimeout, &pending_);
		if (!d)
			std::fprintf(stderr, "fractos-fsd: destroy volume %llu: %s\n",
				     static_cast<unsigned long long>(e.volume),
				     describe(d.error()).c_str());
	}
	reply(m, wire_reply{});
}

result<std::vector<problem>> service::check_device()
{
	auto map = mapping::make(kMetaSize);
	if (!map)
		return map.error();
	auto mem = memory_create(sp_, map->data(), map->size(), perm::all);
	if (!mem)
		return mem.error();
	auto n = meta_.read(sp_, *mem, 0, kMetaSize, kBlockTimeout, &pending_);
	if (!n)
		return n.error();
	if (*n != kMetaSize)
		return errno_code(EIO);
	std::vector<inode> disk;
	auto p = check(map->span(), &disk);
	for (std::uint32_t i = 0; i < disk.size() && i < inodes_.size(); i++) {
		const inode &a = disk[i], &b = inodes_[i];
		if (a.flags != b.flags || a.size != b.size || a.name != b.name ||
		    a.extents != b.extents)
			p.push_back({i, "the device's record differs from the daemon's"});
	}
	return p;
}

void service::op_fsck(message &m)
{
	auto p = check_device();
	wire_reply r;

	if (!p)
		return fail(m, err_of(p.error()));
	for (const problem &x : *p)
		std::fprintf(stderr, "fractos-fsd: fsck: inode %lld: %s\n",
			     static_cast<long long>(x.inode), x.what.c_str());
	r.next = p->size();
	reply(m, r);
}

void service::op_io(message &m, const wire_req &q, open_file &f)
{
	bool write = op(q.op) == op::write;
	std::uint32_t ino = f.ino;
	const cap &mem = m.caps[0];
	wire_reply r;

	if (write && !(f.flags & fs::open_write))
		return fail(m, EBADF);
	if (q.len > fs::max_io)
		return fail(m, EMSGSIZE);
	if (!q.len)
		return reply(m, r);
	std::uint64_t size = inodes_[ino].size;
	std::uint64_t len = q.len;
	if (!write) {
		if (q.offset >= size)
			return reply(m, r);	/* end of file: 0 bytes */
		len = std::min(len, size - q.offset);
	} else if (q.offset > size) {
		return fail(m, EINVAL);		/* no holes */
	}
	std::uint64_t end = q.offset + len;
	std::uint64_t a0 = q.offset / bs_ * bs_;
	std::uint64_t a1 = (end + bs_ - 1) / bs_ * bs_;

	if (!write) {
		auto n = block_io(false, ino, a0, a1 - a0, 0);
		if (!n)
			return fail(m, err_of(n.error()));
		copy_opts o;
		o.src_offset = q.offset - a0;
		o.len = len;
		auto c = memory_copy(sp_, buf_mem_, mem, o);
		if (!c)
			return fail(m, err_of(c.error()));
		r.size = *c;
		return reply(m, r);
	}

	if (a1 > inodes_[ino].capacity()) {
		auto g = grow(ino, a1);
		if (!g)
			return fail(m, err_of(g.error()));
	}
	/* Partial blocks at either end: read them first. */
	if (q.offset != a0) {
		auto n = block_io(false, ino, a0, bs_, 0);
		if (!n)
			return fail(m, err_of(n.error()));
	}
	if (end != a1 && (a1 - bs_ != a0 || q.offset == a0)) {
		auto n = block_io(false, ino, a1 - bs_, bs_, a1 - bs_ - a0);
		if (!n)
			return fail(m, err_of(n.error()));
	}
	copy_opts o;
	o.dst_offset = q.offset - a0;
	o.len = len;
	auto c = memory_copy(sp_, mem, buf_mem_, o);
	if (!c)
		return fail(m, err_of(c.error()));
	if (*c != len)
		return fail(m, EIO);
	auto n = block_io(true, ino, a0, a1 - a0, 0);
	if (!n)
		return fail(m, err_of(n.error()));
	if (end > size) {
		inode old = inodes_[ino];
		inodes_[ino].size = end;
		inodes_[ino].mtime_ns = now_ns();
		auto w = commit(ino, old);
		if (!w)
			return fail(m, err_of(w.error()));
	}
	r.size = len;
	reply(m, r);
}

void service::op_resize(message &m, const wire_req &q, open_file &f)
{
	std::uint32_t ino = f.ino;

	if (!(f.flags & fs::open_write))
		return fail(m, EBADF);
	if (q.offset)
		return fail(m, EINVAL);
	if (q.len > inodes_[ino].capacity()) {
		auto g = grow(ino, q.len);
		if (!g)
			return fail(m, err_of(g.error()));
	}
	inode old = inodes_[ino];
	inodes_[ino].size = q.len;
	inodes_[ino].mtime_ns = now_ns();
	auto w = commit(ino, old);
	if (!w)
		return fail(m, err_of(w.error()));
	op_stat(m, ino);
}

void service::op_close(message &m, std::uint64_t handle)
{
	auto it = opens_.find(handle);

	(void)it->second.req.revoke();
	for (cap &c : it->second.dax)
		(void)c.revoke();
	opens_.erase(it);
	reply(m, wire_reply{});
}

} // namespace fsd
