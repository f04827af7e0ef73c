// SPDX-License-Identifier: LGPL-2.1-or-later
// The block adaptor's client (caladan/blk.hpp).
#include <caladan/blk.hpp>

#include <cerrno>

namespace caladan::blk {

namespace {

fractos_blk_io io_arg(std::uint64_t offset, std::uint64_t len) noexcept
{
	fractos_blk_io a{};
	a.offset = offset;
	a.len = len;
	return a;
}

result<void> io_async(const cap &req, const cap &mem, std::uint64_t offset, std::uint64_t len,
		      const cap &done, const cap *error)
{
	if (!req)
		return errno_code(EBADF);
	request_builder b(req);
	b.set_imm(io_arg(offset, len)).set_cap(mem).set_cap(done);
	if (error)
		b.set_cap(*error);
	return b.invoke();
}

/* A lease call: [lent mem, reply]; the reply carries a fractos_blk_done. */
result<std::uint64_t> io_sync(const space &sp, const cap &req, const cap &mem,
			      std::uint64_t offset, std::uint64_t len,
			      std::chrono::nanoseconds timeout, std::vector<message> *others)
{
	if (!req)
		return errno_code(EBADF);
	auto m = sp.request(req).set_imm(io_arg(offset, len)).lease(mem).call_with_lease(timeout,
											 others);
	if (!m)
		return m.error();
	auto d = m->imm<fractos_blk_done>();
	if (!d)
		return errno_code(EPROTO);
	if (d->result < 0)
		return errno_code(int(-d->result));
	return std::uint64_t(d->result);
}

} // namespace

result<void> volume::read_async(const cap &mem, std::uint64_t offset, std::uint64_t len,
				const cap &done, const cap *error) const
{
	return io_async(rd_, mem, offset, len, done, error);
}

result<void> volume::write_async(const cap &mem, std::uint64_t offset, std::uint64_t len,
				 const cap &done, const cap *error) const
{
	return io_async(wr_, mem, offset, len, done, error);
}

result<std::uint64_t> volume::read(const space &sp, const cap &mem, std::uint64_t offset,
				   std::uint64_t len, std::chrono::nanoseconds timeout,
				   std::vector<message> *others) const
{
	return io_sync(sp, rd_, mem, offset, len, timeout, others);
}

result<std::uint64_t> volume::write(const space &sp, const cap &mem, std::uint64_t offset,
				    std::uint64_t len, std::chrono::nanoseconds timeout,
				    std::vector<message> *others) const
{
	return io_sync(sp, wr_, mem, offset, len, timeout, others);
}

result<cap> volume::fixed_range(bool write, std::uint64_t offset, std::uint64_t len) const
{
	const cap &base = write ? wr_ : rd_;
	if (!base)
		return errno_code(EBADF);
	return request_builder(base).set_imm(io_arg(offset, len)).derive();
}

result<device> device::lookup(const space &sp, std::string_view name, std::uint32_t node)
{
	auto c = node ? name_lookup(sp, name, FRACTOS_NAME_NODE, node) : name_lookup(sp, name);
	if (!c)
		return c.error();
	return device(std::move(*c));
}

result<message> device::call(const space &sp, std::uint32_t op, std::uint64_t size,
			     std::uint64_t id, std::chrono::nanoseconds timeout,
			     std::vector<message> *others) const
{
	fractos_blk_mgmt a{};
	a.op = op;
	a.size = size;
	a.volume = id;
	if (!mgmt_)
		return errno_code(EBADF);
	auto m = sp.request(mgmt_).set_imm(a).call_with_lease(timeout, others);
	if (!m)
		return m.error();
	auto r = m->imm<fractos_blk_reply>();
	if (!r)
		return errno_code(EPROTO);
	if (r->status < 0)
		return errno_code(-r->status);
	return m;
}

namespace {

result<volume> to_volume(result<message> m)
{
	if (!m)
		return m.error();
	auto r = m->imm<fractos_blk_reply>();
	if (!r || m->caps.size() != 2)
		return errno_code(EPROTO);
	volume_info info;
	info.id = r->volume;
	info.size = r->size;
	info.block_size = r->block_size;
	return volume(info, std::move(m->caps[0]), std::move(m->caps[1]));
}

} // namespace

result<volume> device::create(const space &sp, std::uint64_t size,
			      std::chrono::nanoseconds timeout, std::vector<message> *others) const
{
	return to_volume(call(sp, FRACTOS_BLK_CREATE, size, 0, timeout, others));
}

result<volume> device::open(const space &sp, std::uint64_t id,
			    std::chrono::nanoseconds timeout, std::vector<message> *others) const
{
	return to_volume(call(sp, FRACTOS_BLK_OPEN, 0, id, timeout, others));
}

result<void> device::destroy(const space &sp, std::uint64_t id,
			     std::chrono::nanoseconds timeout, std::vector<message> *others) const
{
	auto m = call(sp, FRACTOS_BLK_DESTROY, 0, id, timeout, others);
	if (!m)
		return m.error();
	return {};
}

} // namespace caladan::blk
