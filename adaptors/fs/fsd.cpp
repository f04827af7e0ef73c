// SPDX-License-Identifier: GPL-2.0-or-later
// fractos-fsd's service: the operations of caladan/fs.hpp over the block
// adaptor's volumes (fsd.hpp).
#include "fsd.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

using namespace caladan;
using caladan::fs::op;
using caladan::fs::wire_reply;
using caladan::fs::wire_req;

namespace fsd {

using namespace detail;

namespace {

/* Tags: the service Request, and each open's file Request (kTagFile, low
 * bits: the open's handle).  Lease replies use their own ("Bf" prefix). */
constexpr std::uint64_t kTagService = 0x4653000000000001ULL;
constexpr std::uint64_t kTagKindMask = 0xffff000000000000ULL;

/* Capabilities: [reply], or [memory, reply] for read and write (fs.hpp). */
const msg_layout kCallLayout{.min_caps = 1, .max_caps = 1, .done = 0, .err = 0, .types = {}};
const msg_layout kIoLayout{
	.min_caps = 2, .max_caps = 2, .done = 1, .err = 1, .types = {obj_type::memory}};

} // namespace

std::uint64_t detail::now_ns()
{
	timespec ts{};
	clock_gettime(CLOCK_REALTIME, &ts);
	return std::uint64_t(ts.tv_sec) * 1000000000ULL + std::uint64_t(ts.tv_nsec);
}

int detail::err_of(const std::error_code &ec)
{
	return ec.category() == std::system_category() && ec.value() ? ec.value() : EIO;
}

/* ---- mapping -------------------------------------------------------------- */

result<mapping> mapping::make(std::size_t len)
{
	mapping m;
	void *p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return last_error();
	m.p_ = p;
	m.len_ = len;
	return m;
}

mapping &mapping::operator=(mapping &&o) noexcept
{
	if (this != &o) {
		if (p_)
			munmap(p_, len_);
		p_ = std::exchange(o.p_, nullptr);
		len_ = o.len_;
	}
	return *this;
}

mapping::~mapping()
{
	if (p_)
		munmap(p_, len_);
}

/* ---- setup ---------------------------------------------------------------- */

result<std::uint64_t> service::format(const space &sp, const blk::device &dev)
{
	auto map = mapping::make(kMetaSize);
	if (!map)
		return map.error();
	auto mem = memory_create(sp, map->data(), map->size(), perm::all);
	if (!mem)
		return mem.error();
	auto v = dev.create(sp, kMetaSize, kBlockTimeout);
	if (!v)
		return v.error();
	image(map->span()).format(v->info().id, now_ns());
	auto w = v->write(sp, *mem, 0, kMetaSize, kBlockTimeout);
	if (!w) {
		(void)dev.destroy(sp, v->info().id, kBlockTimeout);
		return w.error();
	}
	return v->info().id;
}

result<std::unique_ptr<service>> service::open(const space &sp, blk::device dev,
					       std::uint64_t meta_id)
{
	auto s = std::make_unique<service>(key{}, sp, std::move(dev));
	auto r = s->load(meta_id);
	if (!r)
		return r.error();
	return s;
}

result<void> service::load(std::uint64_t meta_id)
{
	auto mm = mapping::make(kMetaSize);
	if (!mm)
		return mm.error();
	meta_map_ = std::move(*mm);
	auto bm = mapping::make(kBufSize);
	if (!bm)
		return bm.error();
	buf_map_ = std::move(*bm);
	auto mem = memory_create(sp_, meta_map_.data(), meta_map_.size(), perm::all);
	if (!mem)
		return mem.error();
	meta_mem_ = std::move(*mem);
	mem = memory_create(sp_, buf_map_.data(), buf_map_.size(), perm::all);
	if (!mem)
		return mem.error();
	buf_mem_ = std::move(*mem);

	auto v = dev_.open(sp_, meta_id, kBlockTimeout, &pending_);
	if (!v)
		return v.error();
	meta_ = std::move(*v);
	meta_id_ = meta_id;
	bs_ = meta_.info().block_size;
	if (meta_.info().size < kMetaSize || !bs_ || (kInodeSize % bs_ && bs_ % kInodeSize))
		return errno_code(EMEDIUMTYPE);
	auto n = meta_.read(sp_, meta_mem_, 0, kMetaSize, kBlockTimeout, &pending_);
	if (!n)
		return n.error();
	if (*n != kMetaSize)
		return errno_code(EIO);

	auto problems = check(meta_map_.span(), &inodes_);
	super s;
	if (problems.empty() && decode(image(meta_map_.span()).super_bytes(), &s) == bad::none &&
	    s.meta_volume != meta_id)
		problems.push_back({-1, "the superblock names volume " +
					    std::to_string(s.meta_volume)});
	if (!problems.empty()) {
		for (const problem &p : problems)
			std::fprintf(stderr, "fractos-fsd: inode %lld: %s\n",
				     static_cast<long long>(p.inode), p.what.c_str());
		return errno_code(EUCLEAN);
	}
	return {};
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
		message m;

		if (!pending_.empty()) {
			m = std::move(pending_.front());
			pending_.erase(pending_.begin());
		} else {
			auto r = sp_.receive();
			if (!r) {
				if (r.error() == errno_code(EINTR))
					continue;
				return r.error();
			}
			m = std::move(*r);
		}
		dispatch(m);
	}
}

/* ---- helpers -------------------------------------------------------------- */

std::int64_t service::find(std::string_view name) const
{
	for (std::uint32_t i = 0; i < inodes_.size(); i++)
		if (inodes_[i].used() && inodes_[i].name == name)
			return i;
	return -1;
}

result<cap> service::view(const cap &mem, std::uint64_t off, std::uint64_t len) const
{
	return memory_diminish(mem, off, len, perm::none);
}

result<const blk::volume *> service::volume(std::uint64_t id)
{
	auto it = volumes_.find(id);
	if (it != volumes_.end())
		return &it->second;
	auto v = dev_.open(sp_, id, kBlockTimeout, &pending_);
	if (!v)
		return v.error();
	return &volumes_.emplace(id, std::move(*v)).first->second;
}

/*
 * Makes inodes_[@ino] durable: its record, then the device blocks that
 * hold it.  On failure the caller restores the inode (and calls this
 * again only with what the device had).
 */
result<void> service::write_inode(std::uint32_t ino)
{
	image img(meta_map_.span());
	std::uint64_t off = image::inode_offset(ino);
	std::uint64_t start = off / bs_ * bs_;
	std::uint64_t end = (off + kInodeSize + bs_ - 1) / bs_ * bs_;

	inodes_[ino].gen++;
	encode(inodes_[ino], img.inode_bytes(ino));
	auto v = view(meta_mem_, start, end - start);
	if (!v)
		return v.error();
	auto n = meta_.write(sp_, *v, start, end - start, kBlockTimeout, &pending_);
	if (!n)
		return n.error();
	return *n == end - start ? result<void>() : result<void>(errno_code(EIO));
}

/*
 * write_inode(@ino); on failure inodes_[@ino] is @old again (the device
 * has one or the other).
 */
result<void> service::commit(std::uint32_t ino, const inode &old)
{
	auto w = write_inode(ino);
	if (w)
		return {};
	std::uint64_t gen = inodes_[ino].gen;
	inodes_[ino] = old;
	inodes_[ino].gen = gen;
	encode(inodes_[ino], image(meta_map_.span()).inode_bytes(ino));
	return w.error();
}

/* Zeroes a new volume: the adaptor does not erase a destroyed one. */
result<void> service::zero(const blk::volume &v)
{
	std::uint64_t chunk = std::min<std::uint64_t>(fs::max_io, buf_map_.size());

	std::memset(buf_map_.data(), 0, chunk);
	for (std::uint64_t off = 0; off < v.info().size; off += chunk) {
		std::uint64_t n = std::min(chunk, v.info().size - off);
		auto b = view(buf_mem_, 0, n);
		if (!b)
			return b.error();
		auto w = v.write(sp_, *b, off, n, kBlockTimeout, &pending_);
		if (!w)
			return w.error();
		if (*w != n)
			return errno_code(EIO);
	}
	return {};
}

/* Adds zeroed extents until inode @ino holds @need bytes; durable. */
result<void> service::grow(std::uint32_t ino, std::uint64_t need)
{
	inode old = inodes_[ino];
	std::vector<std::uint64_t> made;
	std::error_code err;

	/* What max_extents cannot hold fails before anything is made. */
	inode plan = inodes_[ino];
	while (plan.capacity() < need) {
		if (plan.extents.size() >= fs::max_extents)
			return errno_code(EFBIG);
		plan.extents.push_back({0, next_extent(plan, need)});
	}
	while (inodes_[ino].capacity() < need) {
		std::uint64_t len = next_extent(inodes_[ino], need);
		auto v = dev_.create(sp_, len, kBlockTimeout, &pending_);
		if (!v) {
			err = v.error();
			break;
		}
		std::uint64_t id = v->info().id;
		made.push_back(id);
		auto z = zero(*v);
		if (!z) {
			err = z.error();
			break;
		}
		volumes_.emplace(id, std::move(*v));
		inodes_[ino].extents.push_back({id, len});
	}
	if (!err) {
		inodes_[ino].mtime_ns = now_ns();
		auto w = commit(ino, old);
		if (w)
			return {};
		/*
		 * The record may have reached the device all the same (a
		 * timeout): the new volumes stay, orphans at worst, never
		 * volumes that an inode names and that are gone.
		 */
		return w.error();
	}
	inodes_[ino] = old;	/* nothing was written */
	for (std::uint64_t id : made) {
		volumes_.erase(id);
		(void)dev_.destroy(sp_, id, kBlockTimeout, &pending_);
	}
	return err;
}

/*
 * Moves [@off, @off + @len) of inode @ino (block-aligned, within its
 * capacity) between the device and the FS-mode buffer at @buf_off.
 */
result<std::uint64_t> service::block_io(bool write, std::uint32_t ino, std::uint64_t off,
					std::uint64_t len, std::uint64_t buf_off)
{
	std::uint64_t done = 0;

	while (done < len) {
		std::size_t i;
		std::uint64_t in;

		if (!inodes_[ino].locate(off + done, &i, &in))
			return errno_code(ERANGE);
		const extent e = inodes_[ino].extents[i];
		std::uint64_t n = std::min(len - done, e.len - in);
		auto v = volume(e.volume);
		if (!v)
			return v.error();
		auto b = view(buf_mem_, buf_off + done, n);
		if (!b)
			return b.error();
		auto r = write ? (*v)->write(sp_, *b, in, n, kBlockTimeout, &pending_)
			       : (*v)->read(sp_, *b, in, n, kBlockTimeout, &pending_);
		if (!r)
			return r.error();
		if (*r != n)
			return errno_code(EIO);
		done += n;
	}
	return done;
}

/*
 * A DAX open's Requests for volume @id: its read Request and, when
 * @write, its write Request, revocable without the daemon's own.  On
 * this node's device they are children the daemon derives from its
 * Requests (its objects: they die with it).  On another node's device
 * they cannot be (the kernel does not send a local child of a proxy to
 * a third node), so they are a new OPEN of the volume, the adaptor's
 * objects: close and unlink revoke them, the daemon's death does not.
 */
result<std::vector<cap>> service::dax_requests(std::uint64_t id, bool write)
{
	std::vector<cap> out;
	auto v = volume(id);
	if (!v)
		return v.error();
	auto here = sp_.info();
	auto ci = (*v)->read_request().info();
	if (!here || !ci)
		return here ? ci.error() : here.error();
	if (ci->oid.node == here->node) {
		auto rd = request_derive((*v)->read_request());
		if (!rd)
			return rd.error();
		out.push_back(std::move(*rd));
		if (write) {
			auto w = request_derive((*v)->write_request());
			if (!w)
				return w.error();
			out.push_back(std::move(*w));
		}
		return out;
	}
	auto o = dev_.open(sp_, id, kBlockTimeout, &pending_);
	if (!o)
		return o.error();
	/* What is not handed out goes now. */
	auto [rd, w] = o->release();
	out.push_back(std::move(rd));
	if (write)
		out.push_back(std::move(w));
	else
		(void)w.revoke();
	return out;
}

void service::revoke_opens(std::uint32_t ino)
{
	for (auto it = opens_.begin(); it != opens_.end();) {
		if (it->second.ino != ino) {
			++it;
			continue;
		}
		(void)it->second.req.revoke();
		for (cap &c : it->second.dax)
			(void)c.revoke();
		it = opens_.erase(it);
	}
}

wire_reply service::stat_reply(std::uint32_t ino) const
{
	wire_reply r;
	const inode &i = inodes_[ino];

	r.size = i.size;
	r.capacity = i.capacity();
	r.nextents = std::uint32_t(i.extents.size());
	r.mtime_ns = i.mtime_ns;
	return r;
}

void service::reply(message &m, const wire_reply &r, std::span<const std::byte> extra,
		    std::span<const std::uint32_t> cids)
{
	const cap *to = reply_cap(m);

	if (!to)
		return;
	request_builder b = sp_.request(*to);
	b.set_imm(r);
	if (!extra.empty())
		b.set_imm(extra);
	for (std::uint32_t c : cids)
		b.set_cid(c);
	auto r2 = b.invoke();
	/*
	 * A client gone (its reply revoked) is not our failure; a reply that
	 * could not carry its capabilities is answered with the error.
	 */
	if (!r2 && !cids.empty() && r2.error() != errno_code(EKEYREVOKED)) {
		wire_reply e;
		e.status = -err_of(r2.error());
		(void)sp_.request(*to).set_imm(e).invoke();
	}
}

void service::fail(message &m, int err)
{
	wire_reply r;

	r.status = -err;
	reply(m, r);
}

/* ---- dispatch ------------------------------------------------------------- */

void service::dispatch(message &m)
{
	if (m.type != msg_type::request)
		return;
	bool svc = m.tag == kTagService;
	bool file = (m.tag & kTagKindMask) == kTagFile;
	if (!svc && !file)
		return;	/* a late block reply, after its call timed out */
	auto q = m.imm<wire_req>();
	op o = q ? op(q->op) : op(0);
	bool io = o == op::read || o == op::write;
	bool named = o == op::create || o == op::open || o == op::stat || o == op::unlink;
	/*
	 * Every call that names a reply is answered (fs.hpp, "Answers"): a
	 * malformed capability list with EINVAL; one with no Request at all
	 * has nobody to answer.
	 */
	msg_conts c = find_conts(m, io ? kIoLayout : kCallLayout);
	if (!c.err)
		return;
	if (!c.well_formed()) {
		wire_reply e;

		e.status = -EINVAL;
		(void)sp_.request(*c.err).set_imm(e).invoke();
		return;
	}
	/* Well formed: the reply is the last capability (reply_cap()). */
	if (!q)
		return fail(m, EINVAL);
	std::string_view name = m.imm_string().substr(sizeof(wire_req));

	if (!named && !name.empty())
		return fail(m, EINVAL);
	if (named && !valid_name(name))
		return fail(m, name.size() > fs::name_max ? ENAMETOOLONG : EINVAL);
	if (o != op::open && q->flags)
		return fail(m, EINVAL);

	if (svc) {
		switch (o) {
		case op::create:
			return op_create(m, name);
		case op::open:
			return op_open(m, *q, name);
		case op::stat: {
			std::int64_t i = find(name);
			if (i < 0)
				return fail(m, ENOENT);
			return op_stat(m, std::uint32_t(i));
		}
		case op::list:
			return op_list(m, *q);
		case op::unlink:
			return op_unlink(m, name);
		case op::fsck:
			return op_fsck(m);
		default:
			return fail(m, EINVAL);
		}
	}

	std::uint64_t handle = m.tag & ~kTagKindMask;
	auto it = opens_.find(handle);
	if (it == opens_.end())
		return fail(m, EKEYREVOKED);	/* raced its close */
	switch (o) {
	case op::read:
	case op::write:
		return op_io(m, *q, it->second);
	case op::resize:
		return op_resize(m, *q, it->second);
	case op::fstat:
		return op_stat(m, it->second.ino);
	case op::close:
		return op_close(m, handle);
	default:
		return fail(m, EINVAL);
	}
}

} // namespace fsd
