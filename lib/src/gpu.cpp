// SPDX-License-Identifier: LGPL-2.1-or-later
// The GPU service's client (caladan/gpu.hpp).
#include <caladan/gpu.hpp>

#include "ioctl.hpp"

#include <atomic>
#include <cerrno>
#include <cstring>

namespace caladan::gpu {

result<message> call(const space &sp, const cap &req, const wire_req &q, std::string_view name,
		     std::chrono::nanoseconds timeout)
{
	if (!req)
		return errno_code(EBADF);
	request_builder b = sp.request(req);
	b.set_imm(q);
	if (!name.empty())
		b.set_imm(name);
	auto m = detail::status_call(b, timeout);
	if (m && !m->imm<wire_reply>())
		return errno_code(EPROTO);
	return m;
}

result<client> client::lookup(const space &sp, std::string_view name, std::uint32_t node)
{
	auto c = node ? name_lookup(sp, name, FRACTOS_NAME_NODE, node) : name_lookup(sp, name);
	if (!c)
		return c.error();
	return client(std::move(*c));
}

result<context> client::init(const space &sp, std::chrono::nanoseconds timeout) const
{
	wire_req q;
	q.op = std::uint32_t(op::init);
	auto m = call(sp, svc_, q, {}, timeout);
	if (!m)
		return m.error();
	/* [alloc, load, cleanup], then the lease's reply continuation */
	if (m->caps.size() < 3)
		return errno_code(EPROTO);
	return context(std::move(m->caps[0]), std::move(m->caps[1]), std::move(m->caps[2]));
}

result<buffer> context::alloc(const space &sp, std::uint64_t size,
			      std::chrono::nanoseconds timeout) const
{
	wire_req q;
	q.op = std::uint32_t(op::alloc);
	q.len = size;
	auto m = call(sp, alloc_, q, {}, timeout);
	if (!m)
		return m.error();
	auto r = *m->imm<wire_reply>();
	if (m->caps.size() < 2)
		return errno_code(EPROTO);
	return buffer(std::move(m->caps[0]), std::move(m->caps[1]), r.addr, r.len);
}

result<module> context::load(const space &sp, std::string_view name,
			     std::chrono::nanoseconds timeout) const
{
	wire_req q;
	q.op = std::uint32_t(op::load);
	if (name.empty())
		return errno_code(EINVAL);
	auto m = call(sp, load_, q, name, timeout);
	if (!m)
		return m.error();
	auto r = *m->imm<wire_reply>();
	if (m->caps.size() < r.count)
		return errno_code(EPROTO);
	std::vector<kernel> ks;
	for (std::uint32_t i = 0; i < r.count; i++) {
		auto w = m->imm<wire_kernel>(sizeof(wire_reply) + i * sizeof(wire_kernel));
		if (!w)
			return errno_code(EPROTO);
		kernel k;
		k.name.assign(w->name, strnlen(w->name, sizeof(w->name)));
		k.args_len = w->args_len;
		k.launch = std::move(m->caps[i]);
		ks.push_back(std::move(k));
	}
	return module(std::move(ks));
}

result<void> context::cleanup(const space &sp, std::chrono::nanoseconds timeout)
{
	wire_req q;
	q.op = std::uint32_t(op::cleanup);
	auto m = call(sp, cleanup_, q, {}, timeout);
	alloc_ = {};
	load_ = {};
	cleanup_ = {};
	if (!m)
		return m.error();
	return {};
}

result<void> buffer::free(const space &sp, std::chrono::nanoseconds timeout)
{
	wire_req q;
	q.op = std::uint32_t(op::free);
	auto m = call(sp, free_, q, {}, timeout);
	mem_ = {};
	free_ = {};
	if (!m)
		return m.error();
	return {};
}

const cap *module::find(std::string_view name) const noexcept
{
	for (const kernel &k : k_)
		if (k.name == name)
			return &k.launch;
	return nullptr;
}

result<void> launch(const space &sp, const cap &k, fgpu_launch g, std::span<const std::byte> args,
		    const cap &done, const cap *err)
{
	request_builder b = sp.request(k);
	b.set_imm(g).set_imm(args).set_cap(done);
	if (err)
		b.set_cap(*err);
	return b.invoke();
}

namespace {

/* Tags of run()'s continuations: unique within the process ("Gp" prefix,
 * the low bit telling done from error). */
std::uint64_t next_tag() noexcept
{
	static std::atomic<std::uint64_t> n{0};
	return 0x4770000000000000ULL | ((n.fetch_add(1, std::memory_order_relaxed) + 1) << 1);
}

/* The answer's error, or none. */
result<void> answer_of(const message &m)
{
	auto r = m.imm<wire_reply>();
	if (!r)
		return errno_code(EPROTO);
	if (r->status < 0)
		return errno_code(-r->status);
	return {};
}

} // namespace

result<void> run(const space &sp, const cap &k, fgpu_launch g, std::span<const std::byte> args,
		 std::chrono::nanoseconds timeout, std::vector<message> *others)
{
	const std::uint64_t tag = next_tag();

	auto done = request_create(sp, tag);
	if (!done)
		return done.error();
	auto err = request_create(sp, tag | 1);
	if (!err)
		return err.error();
	/* One-shot: whatever happens, neither can be invoked afterwards. */
	struct revoker {
		const cap &a, &b;
		~revoker()
		{
			(void)a.revoke();
			(void)b.revoke();
		}
	} rv{*done, *err};

	if (auto r = launch(sp, k, g, args, *done, &*err); !r)
		return r;
	auto m = detail::receive_until(
		sp.ref(), timeout,
		[tag](const message &a) {
			return a.type == msg_type::request && (a.tag | 1) == (tag | 1);
		},
		others);
	if (!m)
		return m.error();
	return answer_of(*m);
}

} // namespace caladan::gpu
