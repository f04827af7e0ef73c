// SPDX-License-Identifier: GPL-2.0-or-later
// fractos-gpud: the service (gpud.hpp).
#include "gpud.hpp"

#include <cerrno>
#include <cstring>

namespace gpud {

using namespace caladan;

namespace {

/*
 * Tags: the kind in the top byte, the context in the next three, then
 * the buffer slot (free) or the kernel's index (launch).
 */
constexpr std::uint64_t kTagService = 0x4750550000000000ULL;	/* "GPU" */
enum kind : std::uint8_t {
	k_alloc = 1,
	k_load = 2,
	k_cleanup = 3,
	k_free = 4,
	k_launch = 5,
};

constexpr std::uint64_t tag_of(kind k, std::uint32_t ctx, std::uint32_t sub)
{
	return std::uint64_t(k) << 56 | std::uint64_t(ctx & 0xffffff) << 32 | sub;
}
constexpr kind kind_of(std::uint64_t tag) { return kind(tag >> 56); }
constexpr std::uint32_t ctx_of(std::uint64_t tag) { return (tag >> 32) & 0xffffff; }
constexpr std::uint32_t sub_of(std::uint64_t tag) { return std::uint32_t(tag); }

/* Device addresses: the buffer's slot above a 64 GiB offset. */
constexpr unsigned kSlotShift = 36;
constexpr std::uint64_t kPage = 4096;

const msg_layout call_layout = {1, 1, 0, 0, {obj_type::request}};
const msg_layout launch_layout = {1, 2, 0, 1, {obj_type::request, obj_type::request}};

} // namespace

service::service(const space &sp, std::unique_ptr<backend> be, limits lim)
	: sp_(sp), be_(std::move(be)), lim_(lim)
{
	worker_ = std::jthread([this](std::stop_token st) { worker(st); });
}

service::~service()
{
	worker_.request_stop();
	cv_.notify_all();
}

result<void> service::publish(std::string_view name, std::uint32_t flags)
{
	auto r = sp_.request().set_tag(kTagService).create();
	if (!r)
		return r.error();
	svc_ = std::move(*r);
	return name_publish(svc_, name, flags);
}

result<void> service::run()
{
	for (;;) {
		auto m = sp_.receive();
		if (!m) {
			if (m.error() == errno_code(EINTR))
				continue;
			return m.error();
		}
		dispatch(*m);
	}
}

void service::dispatch(message &m)
{
	if (m.type == msg_type::monitor_delegate) {
		on_released(m.tag);
		return;
	}
	if (m.type != msg_type::request)
		return;
	if (kind_of(m.tag) == k_launch)
		on_launch(m);
	else
		on_call(m);
}

/*
 * A status to a continuation: nothing here could act on its failure, so
 * another node's is sent without an ACK (FRACTOS_INVOKE_NOACK): the loop
 * does not wait a round trip per answer, and the fabric carries one
 * message, not two.  A refusal is counted by this node's module.
 */
void service::answer(const cap &to, int status)
{
	gpu::wire_reply r;
	r.status = status;
	(void)sp_.request(to).set_imm(r).set_noack().invoke();
}

/* ---- calls: [reply], immediates gpu::wire_req ---------------------------- */

void service::on_call(message &m)
{
	msg_conts c = find_conts(m, call_layout);
	if (!c.err)
		return;		/* nobody to answer */
	auto q = m.imm<gpu::wire_req>();
	if (!c.well_formed() || !q || q->flags) {
		answer(*c.err, -EINVAL);
		return;
	}
	const cap &reply = *c.done;
	if (m.tag == kTagService) {
		if (q->op != std::uint32_t(gpu::op::init) || m.imms.size() != sizeof(*q))
			answer(reply, -EINVAL);
		else
			op_init(m, reply);
		return;
	}
	auto it = contexts_.find(ctx_of(m.tag));
	if (it == contexts_.end()) {
		answer(reply, -EKEYREVOKED);	/* a Request of one cleaned up */
		return;
	}
	context &ctx = *it->second;
	static const gpu::op want[] = {gpu::op{}, gpu::op::alloc, gpu::op::load,
				       gpu::op::cleanup, gpu::op::free};
	kind k = kind_of(m.tag);
	if (k < k_alloc || k > k_free || q->op != std::uint32_t(want[k]) ||
	    (k != k_load && m.imms.size() != sizeof(*q))) {
		answer(reply, -EINVAL);
		return;
	}
	switch (k) {
	case k_alloc:
		op_alloc(m, ctx, reply);
		break;
	case k_load:
		op_load(m, ctx, reply);
		break;
	case k_free:
		op_free(ctx, sub_of(m.tag), reply);
		break;
	default:
		destroy(ctx.id);
		answer(reply, 0);
		break;
	}
}

void service::op_init(message &, const cap &reply)
{
	if (contexts_.size() >= lim_.max_contexts) {
		answer(reply, -ENOSPC);
		return;
	}
	auto c = std::make_shared<context>();
	do {	/* 24 bits of ids, far more than max_contexts */
		c->id = next_ctx_;
		next_ctx_ = next_ctx_ % 0xffffff + 1;
	} while (contexts_.count(c->id));
	auto mk = [&](kind k) { return sp_.request().set_tag(tag_of(k, c->id, 0)).create(); };
	auto a = mk(k_alloc), l = mk(k_load), cl = mk(k_cleanup);
	if (!a || !l || !cl) {
		answer(reply, -ENOMEM);
		return;
	}
	c->alloc = std::move(*a);
	c->load = std::move(*l);
	c->cleanup = std::move(*cl);
	contexts_.emplace(c->id, c);
	for (const cap *r : {&c->alloc, &c->load, &c->cleanup}) {
		if (auto w = monitor_delegate(*r, tag_of(k_alloc, c->id, 0)); !w) {
			destroy(c->id);
			answer(reply, -ENOMEM);
			return;
		}
		c->held++;
	}
	const std::uint32_t cids[] = {c->alloc.cid(), c->load.cid(), c->cleanup.cid()};
	gpu::wire_reply r;
	if (!sp_.request(reply).set_imm(r).set_cid(cids[0]).set_cid(cids[1]).set_cid(cids[2])
		     .invoke())
		destroy(c->id);		/* nobody got them */
}

void service::op_alloc(message &m, context &c, const cap &reply)
{
	std::uint64_t len = m.imm<gpu::wire_req>()->len;

	if (!len) {
		answer(reply, -EINVAL);
		return;
	}
	if (len > lim_.max_alloc) {
		answer(reply, -E2BIG);
		return;
	}
	len = (len + kPage - 1) / kPage * kPage;
	if (c.buffers.size() >= lim_.max_buffers || c.bytes + len > lim_.max_context_bytes) {
		answer(reply, -ENOSPC);
		return;
	}
	auto b = be_->alloc(sp_, len);
	if (!b) {
		answer(reply, -ENOMEM);
		return;
	}
	std::uint32_t slot = c.next_slot++;
	auto f = sp_.request().set_tag(tag_of(k_free, c.id, slot)).create();
	if (!f) {
		answer(reply, -ENOMEM);
		return;
	}
	buffer_slot &s = c.buffers[slot];
	s.buf = std::move(*b);
	s.free_req = std::move(*f);
	c.bytes += len;
	stats_.allocs++;

	gpu::wire_reply r;
	r.addr = std::uint64_t(slot) << kSlotShift;
	r.len = len;
	if (!sp_.request(reply).set_imm(r).set_cap(s.buf->mem()).set_cap(s.free_req).invoke())
		op_free(c, slot, cap());	/* nobody got it */
}

void service::op_free(context &c, std::uint32_t slot, const cap &reply)
{
	auto it = c.buffers.find(slot);
	if (it == c.buffers.end()) {
		if (reply)
			answer(reply, -EKEYREVOKED);
		return;
	}
	/* Every view of it fails from now on; a running kernel keeps the
	 * memory until it is done (its job holds the buffer). */
	(void)it->second.buf->mem().revoke();
	(void)it->second.free_req.revoke();
	c.bytes -= it->second.buf->size();
	c.buffers.erase(it);
	if (reply)
		answer(reply, 0);
}

void service::op_load(message &m, context &c, const cap &reply)
{
	std::string_view name = m.imm_string().substr(sizeof(gpu::wire_req));

	if (name.empty() || name.size() > gpu::max_module_name) {
		answer(reply, -EINVAL);
		return;
	}
	if (name != "fractos") {
		answer(reply, -ENOENT);
		return;
	}
	std::vector<gpu::wire_kernel> wk;
	std::vector<std::uint32_t> cids;
	std::size_t first = c.launches.size();
	for (std::uint32_t i = 0; i < std::size(fgpu::module_fractos); i++) {
		const fgpu::kernel_desc &k = fgpu::module_fractos[i];
		auto l = sp_.request().set_tag(tag_of(k_launch, c.id, i)).create();
		if (!l || !monitor_delegate(*l, tag_of(k_launch, c.id, i))) {
			for (std::size_t j = first; j < c.launches.size(); j++)
				(void)c.launches[j].revoke();
			c.launches.resize(first);
			answer(reply, -ENOMEM);
			return;
		}
		gpu::wire_kernel w;
		std::strncpy(w.name, k.name, sizeof(w.name) - 1);
		w.args_len = k.args_len;
		wk.push_back(w);
		cids.push_back(l->cid());
		c.launches.push_back(std::move(*l));
	}
	gpu::wire_reply r;
	r.count = std::uint32_t(wk.size());
	request_builder b = sp_.request(reply);
	b.set_imm(r).set_imm(std::as_bytes(std::span(wk)));
	for (std::uint32_t cid : cids)
		b.set_cid(cid);
	if (b.invoke()) {
		c.held += std::uint32_t(cids.size());
		return;
	}
	for (std::size_t j = first; j < c.launches.size(); j++)	/* nobody got them */
		(void)c.launches[j].revoke();
	c.launches.resize(first);
}

void service::destroy(std::uint32_t id)
{
	auto it = contexts_.find(id);
	if (it == contexts_.end())
		return;
	std::shared_ptr<context> c = it->second;
	contexts_.erase(it);
	/* Queued launches answer EKEYREVOKED; a running one finishes. */
	c->dead = true;
	for (const cap *r : {&c->alloc, &c->load, &c->cleanup})
		(void)r->revoke();
	for (const cap &l : c->launches)
		(void)l.revoke();
	while (!c->buffers.empty())
		op_free(*c, c->buffers.begin()->first, cap());
}

void service::on_released(std::uint64_t cookie)
{
	auto it = contexts_.find(ctx_of(cookie));
	if (it == contexts_.end())
		return;		/* cleaned up already */
	context &c = *it->second;
	if (c.held && --c.held == 0) {
		stats_.contexts_freed++;
		destroy(c.id);
	}
}

/* ---- launches ------------------------------------------------------------ */

/* @j's buffer argument @u: in one buffer of @c, with its bytes inside. */
int service::resolve(context &c, job &j, const fgpu::buf_use &u)
{
	std::uint64_t addr;

	std::memcpy(&addr, j.args.data() + u.field, sizeof(addr));
	if ((addr >> kSlotShift) > UINT32_MAX)
		return -EFAULT;
	auto it = c.buffers.find(std::uint32_t(addr >> kSlotShift));
	if (it == c.buffers.end())
		return -EFAULT;
	std::uint64_t off = addr & ((1ULL << kSlotShift) - 1);
	const dev_buffer &b = *it->second.buf;
	if (off > b.size() || u.bytes > b.size() - off)
		return -EFAULT;
	std::uint64_t p = b.ptr() + off;
	std::memcpy(j.args.data() + u.field, &p, sizeof(p));
	j.bufs.push_back(it->second.buf);
	return 0;
}

void service::on_launch(message &m)
{
	msg_conts mc = find_conts(m, launch_layout);
	if (!mc.err)
		return;
	auto fail = [&](int e) {
		stats_.launch_errors++;
		answer(*mc.err, e);
	};
	if (!mc.well_formed())
		return fail(-EINVAL);
	auto it = contexts_.find(ctx_of(m.tag));
	if (it == contexts_.end())
		return fail(-EKEYREVOKED);
	context &c = *it->second;
	std::uint32_t ki = sub_of(m.tag);
	if (ki >= std::size(fgpu::module_fractos))
		return fail(-EINVAL);

	job j;
	j.k = &fgpu::module_fractos[ki];
	auto g = m.imm<fgpu_launch>();
	std::size_t end = sizeof(fgpu_launch) + j.k->args_len;
	if (!g || (m.imms.size() != end && m.imms.size() != end + sizeof(std::int64_t)) ||
	    !g->grid || !g->block || g->grid > FGPU_MAX_GRID || g->block > FGPU_MAX_BLOCK)
		return fail(-EINVAL);
	/* A stage before us failed: its errno, and nothing runs. */
	if (auto prev = m.imm<std::int64_t>(end); prev && *prev < 0)
		return fail(*prev < -4095 ? -EIO : int(*prev));
	j.g = *g;
	j.args.assign(m.imms.begin() + sizeof(*g), m.imms.begin() + std::ptrdiff_t(end));
	fgpu::buf_use uses[fgpu::max_bufs];
	int n = j.k->uses(j.args.data(), uses);
	if (n < 0)
		return fail(n);
	for (int i = 0; i < n; i++)
		if (int e = resolve(c, j, uses[i]))
			return fail(e);
	if (c.inflight >= lim_.max_inflight)
		return fail(-EAGAIN);

	c.inflight++;
	j.ctx = it->second;
	bool two = mc.err != mc.done;
	j.done = std::move(m.caps[launch_layout.done]);
	if (two)
		j.err = std::move(m.caps[launch_layout.err]);
	{
		std::lock_guard lk(mu_);
		jobs_.push_back(std::move(j));
	}
	cv_.notify_one();
}

void service::worker(std::stop_token st)
{
	for (;;) {
		job j;
		{
			std::unique_lock lk(mu_);
			if (!cv_.wait(lk, st, [this] { return !jobs_.empty(); }))
				return;
			j = std::move(jobs_.front());
			jobs_.pop_front();
		}
		int status = 0;
		if (j.ctx->dead) {
			status = -EKEYREVOKED;
		} else {
			for (auto &b : j.bufs)
				b->begin_access();
			if (!be_->run(*j.k, j.g, j.args.data()))
				status = -EIO;
			for (auto &b : j.bufs)
				b->end_access();
		}
		if (status)
			stats_.launch_errors++;
		else
			stats_.launches++;
		answer(status && j.err ? j.err : j.done, status);
		j.ctx->inflight--;
	}
}

} // namespace gpud
