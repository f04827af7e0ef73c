// SPDX-License-Identifier: GPL-2.0
/*
 * libcaladan against the real module: RAII closes every capability (the
 * live "caps" counter returns to its baseline), errors are values, the
 * request builder, receive modes, monitors, fd export/import, and the
 * io_uring ring with batches of 16 and 256 invokes and receives,
 * memory_import_dmabuf() on a dma-buf of whichever exporter imports, and a
 * cap that outlives its space object (it shares the space's fd, so it
 * closes its cid in its own space, never in one that took the number).
 */
#include <caladan/caladan.hpp>
#include <caladan/ring.hpp>
#include <caladan/sysfs.hpp>

#include "tap.h"
#include "fos_dmabuf.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <string>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

using namespace caladan;
using namespace std::chrono_literals;
using namespace std::string_view_literals;

namespace {

std::uint64_t live(const char *name)
{
	auto v = sysfs::read_u64(std::string(sysfs::live_dir) + "/" + name);
	return v ? *v : ~0ULL;
}

template <class R>
bool ok(const R &r, const std::string &what)
{
	bool good = r.has_value();
	tap_ok(good, "%s", what.c_str());
	if (!good)
		tap_diag("  failed: %s", describe(r.error()).c_str());
	return good;
}

template <class R>
bool fails(const R &r, int err, const std::string &what)
{
	bool good = !r.has_value() && r.error() == errno_code(err);
	tap_ok(good, "%s: %s", what.c_str(), errno_name(err));
	if (!good)
		tap_diag("  got %s", r.has_value() ? "success" : describe(r.error()).c_str());
	return good;
}

/* An anonymous mapping for Memory objects. */
struct buffer {
	std::size_t len;
	char *p;
	explicit buffer(std::size_t n)
		: len(n), p(static_cast<char *>(::mmap(nullptr, n, PROT_READ | PROT_WRITE,
							MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)))
	{
		if (p == MAP_FAILED)
			tap_bail("mmap");
	}
	~buffer() { ::munmap(p, len); }
	buffer(const buffer &) = delete;
	buffer &operator=(const buffer &) = delete;
};

void test_raii(const space &sp, buffer &buf)
{
	const auto base = live("caps");
	{
		auto mem = memory_create(sp, buf.p, buf.len, perm::all);
		if (!ok(mem, "memory_create"))
			return;
		auto d = mem->dup();
		auto t = mem->create_revtree();
		auto ro = memory_diminish(*mem, 0, 64, perm::write);
		ok(d, "cap::dup");
		ok(t, "cap::create_revtree");
		ok(ro, "memory_diminish");
		tap_eq(live("caps"), base + 4, "four caps live");
		tap_eq(sp.info().value().ncaps, 4, "space_info counts four");

		cap moved = std::move(*d);
		tap_ok(!*d && moved, "a moved-from cap is empty");
		cap assigned;
		assigned = std::move(moved);
		tap_eq(live("caps"), base + 4, "moving does not close or dup");
	}
	tap_eq(live("caps"), base, "caps back to baseline after scope exit");
	tap_eq(sp.info().value().ncaps, 0, "space holds no caps");

	auto mem = memory_create(sp, buf.p, buf.len, perm::all).value();
	tap_ok(bool(mem.close()), "cap::close reports success");
	tap_ok(!mem, "a closed cap is empty");
	tap_eq(live("caps"), base, "explicit close closed it");
}

void test_errors(const space &sp, const space &sp2, buffer &buf)
{
	auto mem = memory_create(sp, buf.p, buf.len, perm::all).value();
	auto ro = memory_diminish(mem, 0, 64, perm::write).value();
	fails(memory_copy(sp, mem, ro), EACCES, "copy into a read-only view");
	fails(memory_diminish(mem, buf.len - 8, 64, perm::none), ERANGE, "diminish past the view");
	fails(memory_create(sp, buf.p, 0, perm::all), EINVAL, "zero-length memory_create");
	cap bogus(sp, 4000);
	fails(bogus.info(), EBADF, "info on an unknown cid");
	(void)bogus.release();

	auto child = mem.create_revtree().value();
	auto other = memory_create(sp, buf.p + 4096, 4096, perm::all).value();
	ok(memory_copy(sp, child, other, {0, 0, 128}), "copy through a revtree child");
	ok(child.revoke(), "revoke the child");
	auto r = memory_copy(sp, child, other, {0, 0, 128});
	fails(r, EKEYREVOKED, "copy from a revoked child");
	tap_ok(is_revoked(r.error()), "is_revoked()");
	tap_ok(child.info().value().revoked(), "cap_info reports revoked");
	tap_ok(!mem.info().value().revoked(), "the parent is not revoked");
	bool threw = false;
	try {
		(void)r.value();
	} catch (const std::system_error &e) {
		threw = e.code() == errno_code(EKEYREVOKED);
	}
	tap_ok(threw, "result::value() throws system_error(EKEYREVOKED)");
	fails(child.revoke(), EKEYREVOKED, "revoking twice");

	auto theirs = memory_create(sp2, buf.p, 64, perm::all).value();
	fails(memory_copy(sp, mem, theirs), EXDEV, "copy with a cap of another space");
}

void test_export(const space &sp, const space &sp2, buffer &buf)
{
	const auto fds = live("capfds");
	std::strcpy(buf.p, "exported");
	auto mem = memory_create(sp, buf.p, 4096, perm::all).value();
	auto fd = mem.export_fd();
	if (!ok(fd, "export_fd"))
		return;
	tap_eq(live("capfds"), fds + 1, "one capability fd");
	auto imp = import_fd(sp2, fd->get());
	if (!ok(imp, "import_fd into another space"))
		return;
	tap_ok(imp->info().value().oid == mem.info().value().oid, "same object");
	tap_ok(!imp->info().value().owned(), "not owned by the importer");
	auto local = memory_create(sp2, buf.p + 4096, 4096, perm::all).value();
	auto n = memory_copy(sp2, *imp, local, {0, 0, 9});
	tap_ok(n && std::strcmp(buf.p + 4096, "exported") == 0, "the importer copies from it");
	fd->reset();
	tap_eq(live("capfds"), fds, "closing the fd drops it");
}

void test_requests(const space &sp, const space &sp2, buffer &buf)
{
	auto mem = memory_create(sp, buf.p, 4096, perm::all).value();
	auto req = sp.request().set_tag(0x1234).set_imm(std::uint32_t{7}).create();
	if (!ok(req, "builder: create a Request"))
		return;
	tap_eq(std::uint32_t(req->info().value().type), FRACTOS_OBJ_REQUEST, "its type is Request");

	fails(sp.try_receive(), EAGAIN, "try_receive on an empty queue");
	auto t0 = std::chrono::steady_clock::now();
	fails(sp.receive(20ms), ETIMEDOUT, "receive with a 20 ms timeout");
	tap_ok(std::chrono::steady_clock::now() - t0 >= 15ms, "the timeout waited");

	ok(sp.request(*req).set_imm(std::uint64_t{42}).set_cap(mem).invoke(),
	   "builder: invoke with an immediate and a cap");
	{
		auto m = sp.receive(1s);
		if (ok(m, "receive")) {
			tap_ok(m->type == msg_type::request, "type request");
			tap_eq(m->tag, 0x1234, "the Request's tag");
			tap_eq(m->imms.size(), 12, "4 + 8 immediate bytes");
			tap_eq(m->imm<std::uint32_t>(0).value_or(0), 7, "the Request's immediate first");
			tap_eq(m->imm<std::uint64_t>(4).value_or(0), 42, "the invocation's after");
			fails(m->imm<std::uint64_t>(8), ERANGE, "message::imm past the end");
			tap_eq(m->caps.size(), 1, "one cap argument");
			if (m->caps.size() == 1)
				tap_eq(std::uint32_t(m->caps[0].info().value().type), FRACTOS_OBJ_MEMORY,
				       "it is the Memory");
		}
	}

	auto d = sp.request(*req).set_imm("abc"sv).derive();
	if (ok(d, "builder: derive"))
		ok(sp.request(*d).set_imm("x"sv).invoke(), "invoke the derived Request");
	{
		auto m = sp.receive(1s);
		if (ok(m, "receive the derived invocation"))
			tap_ok(m->imms.size() == 8 && m->imm_string().substr(4) == "abcx",
			       "inherited then appended immediates");
	}

	/* Another space invokes our Request through an exported fd. */
	{
		auto fd = req->export_fd().value();
		auto theirs = import_fd(sp2, fd.get()).value();
		ok(sp2.request(theirs).set_imm(std::uint64_t{99}).invoke(), "another space invokes it");
		auto m = sp.receive(1s);
		tap_ok(m && m->tag == 0x1234 && m->imm<std::uint64_t>(4).value_or(0) == 99,
		       "the provider receives the other space's invocation");
		fails(sp2.request(mem).invoke(), EXDEV, "builder with a cap of another space");
	}

	fails(sp.request(mem).invoke(), EOPNOTSUPP, "invoking a Memory cap");
	fails(sp.request().invoke(), EBADF, "invoke without a Request");
	ok(req->revoke(), "revoke the Request");
	fails(sp.request(*d).invoke(), EKEYREVOKED, "its derived child is revoked too");

	/* Monitors. */
	auto child = mem.create_revtree().value();
	ok(monitor_receive(child, 99), "monitor_receive");
	ok(child.revoke(), "revoke the watched child");
	auto ev = sp.try_receive();
	tap_ok(ev && ev->type == msg_type::monitor_receive && ev->tag == 99,
	       "monitor event with its cookie");
}

void test_names(const space &sp, const space &sp2)
{
#ifdef FRACTOS_IOC_NAME_PUBLISH
	const std::string name = "caladan_basic." + std::to_string(::getpid());
	auto req = sp.request().set_tag(0x4e).create().value();
	if (!ok(name_publish(req, name), "name_publish"))
		return;
	fails(name_publish(req, name), EEXIST, "publishing the name twice");
	auto found = name_lookup(sp2, name);
	if (ok(found, "name_lookup from another space")) {
		tap_eq(std::uint32_t(found->info().value().type), FRACTOS_OBJ_REQUEST,
		       "it is the Request");
		ok(sp2.request(*found).set_imm("hi"sv).invoke(), "invoke what the name gave");
		auto m = sp.receive(1s);
		tap_ok(m && m->tag == 0x4e && m->imm_string() == "hi", "the publisher receives it");
		fails(name_publish(*found, name + ".x"), EPERM, "publishing an object of another space");
	}
	fails(name_lookup(sp2, ""), EINVAL, "an empty name");
	ok(name_unpublish(sp, name), "name_unpublish");
	fails(name_lookup(sp2, name), ENOENT, "lookup after unpublish");
	ok(name_publish(req, name), "publish again");
	ok(req.revoke(), "revoke the published object");
	fails(name_lookup(sp2, name), ENOENT, "a revoked object's name vanishes");
#else
	(void)sp;
	(void)sp2;
	tap_skip("no name service in this uAPI");
#endif
}

void test_ring_batch(const space &sp, const cap &req, const cap &mem, unsigned n)
{
	auto rr = ring::create(sp, n);
	if (!ok(rr, "ring::create(" + std::to_string(n) + ")"))
		return;
	ring &r = *rr;
	const auto caps = live("caps");

	bool prepped = true;
	for (unsigned i = 0; i < n; i++) {
		std::uint32_t cid = mem.cid();
		prepped &= bool(r.prep_invoke(req, std::as_bytes(std::span(&i, 1)),
					      std::span(&cid, 1), 0, i));
	}
	tap_ok(prepped, "prepared %u invokes", n);
	fails(r.prep_receive(FRACTOS_RECV_NONBLOCK), EBUSY, "a full submission queue is EBUSY");
	auto s = r.submit();
	tap_ok(s && *s == n, "submitted %u", n);
	std::vector<completion> done;
	auto got = r.reap(done, n, n, 10s);
	tap_ok(got && *got == n, "reaped %u invoke completions", n);
	std::set<std::uint64_t> uds;
	bool all_ok = true;
	for (auto &c : done) {
		all_ok &= c.ok() && c.cmd == FRACTOS_IOC_REQUEST_INVOKE;
		uds.insert(c.user_data);
	}
	tap_ok(all_ok && uds.size() == n && *uds.rbegin() == n - 1,
	       "every invoke succeeded, user_data kept");
	tap_eq(r.in_flight(), 0, "nothing in flight");

	for (unsigned i = 0; i < n; i++)
		prepped &= bool(r.prep_receive(FRACTOS_RECV_NONBLOCK, 0, 1000 + i));
	tap_ok(prepped, "prepared %u receives", n);
	done.clear();
	got = r.reap(done, n, n, 10s); /* reap submits what is prepared */
	tap_ok(got && *got == n, "reaped %u receive completions", n);
	std::set<std::uint32_t> vals;
	all_ok = true;
	for (auto &c : done) {
		all_ok &= c.ok() && c.msg.caps.size() == 1 && c.msg.tag == 0x77;
		vals.insert(c.msg.imm<std::uint32_t>().value_or(~0U));
	}
	tap_ok(all_ok && vals.size() == n && *vals.rbegin() == n - 1,
	       "every message arrived once, with its immediate and cap");
	tap_eq(live("caps"), caps + n, "the messages' caps are owned by the completions");
	done.clear();
	tap_eq(live("caps"), caps, "dropping the completions closed them");
}

void test_ring_misc(const space &sp, const cap &req, buffer &buf)
{
	const auto caps = live("caps");
	auto rr = ring::create(sp, 16);
	if (!rr)
		return;
	ring &r = *rr;

	/* A blocking receive completes when the message arrives. */
	ok(r.prep_receive(0, 0, 1), "prepared a blocking receive");
	r.submit().value();
	ok(request_invoke(req, std::as_bytes(std::span("late", 4))), "invoke afterwards");
	auto c = r.wait(5s);
	tap_ok(c && c->ok() && c->user_data == 1 && c->msg.imm_string() == "late",
	       "the blocking receive completed with the message");

	/* Any operation through the generic prep(). */
	fractos_memory_create mc{};
	mc.addr = reinterpret_cast<std::uintptr_t>(buf.p);
	mc.len = 4096;
	mc.perms = FRACTOS_PERM_ALL;
	ok(r.prep(FRACTOS_IOC_MEMORY_CREATE, mc, 2), "prep(MEMORY_CREATE)");
	c = r.wait(5s);
	tap_ok(c && c->ok() && c->new_cap, "completion owns the new cap");
	if (c && c->new_cap) {
		fractos_cap_info ci{};
		ci.cid = c->new_cap.cid();
		r.prep(FRACTOS_IOC_CAP_INFO, ci, 3).value();
		auto ic = r.wait(5s);
		tap_ok(ic && ic->ok() && ic->arg<fractos_cap_info>().type == FRACTOS_OBJ_MEMORY &&
			       ic->arg<fractos_cap_info>().len == 4096,
		       "prep(CAP_INFO) output struct");
		r.prep_invoke(c->new_cap, {}, {}, 0, 4).value();
		auto bad = r.wait(5s);
		tap_ok(bad && bad->res == -EOPNOTSUPP && bad->error() == errno_code(EOPNOTSUPP),
		       "errors are values in completions too");
		ok(r.prep_close(std::move(c->new_cap), 5), "prep_close");
		auto cl = r.wait(5s);
		tap_ok(cl && cl->ok() && !c->new_cap, "closed through the ring");
	}
	fails(r.prep(FRACTOS_IOC_CAP_INFO, mc), EINVAL, "prep with the wrong struct");
	c = errno_code(ENOENT); /* drop the completion */
	tap_eq(live("caps"), caps, "no caps left behind");

	/* Destroying a ring with a blocking receive in flight cancels it. */
	{
		auto r2 = ring::create(sp, 8).value();
		r2.prep_receive(0, 0, 9).value();
		r2.submit().value();
		usleep(50 * 1000);
		auto t0 = std::chrono::steady_clock::now();
		r2 = ring();
		tap_ok(std::chrono::steady_clock::now() - t0 < 5s,
		       "destroying a ring cancels a pending receive");
	}
	fails(sp.try_receive(), EAGAIN, "the queue is empty afterwards");
}

} // namespace

/* memory_import_dmabuf(): a dma-buf's bytes through a Memory, and its errors. */
void test_dmabuf(const space &sp, buffer &buf)
{
	constexpr std::size_t sz = 16384;

	fails(memory_import_dmabuf(sp, -1, 0, sz, perm::all), EBADF, "import_dmabuf(-1)");
	for (const auto &e : fos_exporters) {
		int fd = e.alloc(sz, 1);

		if (fd < 0)
			continue;
		auto m = memory_import_dmabuf(sp, fd, 0, sz, perm::all);
		if (!m) {
			::close(fd);
			continue;	/* EOPNOTSUPP: no kernel mapping (dmabuf.c checks) */
		}
		auto *map = static_cast<unsigned char *>(
			::mmap(nullptr, sz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
		::close(fd);	/* the Memory holds the dma-buf */
		if (map == MAP_FAILED)
			tap_bail("mmap of the dma-buf");
		for (std::size_t i = 0; i < sz; i++)
			buf.p[i] = char(i * 7 + 3);
		auto src = memory_create(sp, buf.p, sz, perm::read).value();
		auto n = memory_copy(sp, src, *m, {0, 0, sz});
		tap_ok(n && *n == sz && !std::memcmp(map, buf.p, sz),
		       "memory_import_dmabuf (%s): a copy into it is in the exporter's mmap", e.name);
		fails(memory_import_dmabuf(sp, fd, 0, sz, perm::all), EBADF,
		      "import_dmabuf of a closed fd");
		::munmap(map, sz);
		return;
	}
	tap_skip("no dma-buf exporter with a kernel mapping here");
	tap_skip("no dma-buf exporter with a kernel mapping here");
}

/*
 * A cap outlives the space object it was made in: the file stays open
 * (the cap shares it), so a space opened next gets another fd number, and
 * dropping the cap closes its cid there, not the same cid of the new
 * space.  (Before, a cap kept the number as a plain int: the new space
 * took it, and the old cap's CAP_CLOSE closed the new space's cap.)
 */
void test_cap_outlives_space(buffer &buf)
{
	cap kept;
	int old_fd;
	{
		auto s = space::open().value();
		old_fd = s.fd();
		kept = memory_create(s, buf.p, 4096, perm::read).value();
	}
	tap_ok(::fcntl(old_fd, F_GETFD) != -1, "the space object is gone, its file is not");
	auto s2 = space::open().value();
	tap_ok(s2.fd() != old_fd, "a new space gets another fd number (%d, not %d)", s2.fd(),
	       old_fd);
	auto mine = memory_create(s2, buf.p, 4096, perm::read).value();
	tap_eq(mine.cid(), kept.cid(), "the new space's first cap has the kept cap's cid");
	ok(kept.info(), "the kept cap still answers, in its own space");
	const auto caps = live("caps");
	kept = cap();
	tap_eq(live("caps"), caps - 1, "dropping it closes one cap");
	ok(mine.info(), "the new space's cap of the same cid is still open");
	tap_eq(s2.info().value().ncaps, 1, "the new space still holds its one cap");
}

/*
 * memory_map() and memory_grant(): a mapping shows the Memory's pages and
 * goes with its object; a grant moves the buffer to a new object (to this
 * space, then to a Request's provider, which maps the same bytes).
 */
void test_map_grant(const space &sp)
{
	buffer b(2 * 4096);
	for (std::size_t i = 0; i < b.len; i++)
		b.p[i] = char(i * 5 + 1);
	auto mem = memory_create(sp, b.p, b.len, perm::all).value();
	auto map = memory_map(mem, b.len);
	tap_ok(map && !std::memcmp(map->data(), b.p, b.len), "memory_map: the Memory's bytes");
	fails(memory_map(mem, 3 * 4096), ENXIO, "memory_map past the view");
	auto ro = memory_diminish(mem, 0, b.len, perm::write).value();
	fails(memory_map(ro, 4096, true), EACCES, "memory_map writable of a read-only view");
	auto mine = memory_grant(mem);
	if (!ok(mine, "memory_grant to this space"))
		return;
	tap_ok(mem.info().value().revoked() && mine->info().value().owned(),
	       "the old capability is revoked; the new one is ours");
	auto map2 = memory_map(*mine, b.len);
	tap_ok(map2 && static_cast<char *>(map2->data())[4097] == char(4097 * 5 + 1),
	       "the new one maps the same bytes");
	auto req = sp.request().set_tag(0x6a).create().value();
	ok(memory_grant(*mine, req), "memory_grant to a Request");
	auto m = sp.receive(1s);
	tap_ok(m && m->tag == 0x6a && m->caps.size() == 1, "its provider gets one capability");
	if (m && m->caps.size() == 1) {
		auto map3 = memory_map(m->caps[0], b.len);
		tap_ok(map3 && static_cast<char *>(map3->data())[5] == char(5 * 5 + 1),
		       "...which maps the buffer");
	} else {
		tap_ok(false, "...which maps the buffer");
	}
	auto again = memory_create(sp, b.p, 4096, perm::all);
	(void)again;	/* b.p is unmapped now: EFAULT, nothing to grant */
	fails(again, EFAULT, "the granted buffer is gone from this address space");
}

int main()
{
	auto sp = space::open();
	if (!sp)
		tap_bail("open %s: %s", FRACTOS_DEVICE, describe(sp.error()).c_str());
	auto sp2 = space::open().value();
	auto info = sp->info();
	tap_ok(info && info->abi_version == FRACTOS_ABI_VERSION, "space_info: ABI %d",
	       FRACTOS_ABI_VERSION);

	buffer buf(1 << 16);
	const auto caps = live("caps");
	test_raii(*sp, buf);
	test_errors(*sp, sp2, buf);
	test_export(*sp, sp2, buf);
	test_requests(*sp, sp2, buf);
	test_names(*sp, sp2);
	test_dmabuf(*sp, buf);
	test_cap_outlives_space(buf);
	test_map_grant(*sp);
	{
		auto mem = memory_create(*sp, buf.p, 4096, perm::read).value();
		auto req = sp->request().set_tag(0x77).create().value();
		test_ring_batch(*sp, req, mem, 16);
		test_ring_batch(*sp, req, mem, 256);
		test_ring_misc(*sp, req, buf);
	}
	tap_eq(live("caps"), caps, "every cap closed: live caps at baseline");
	tap_eq(sp->info().value().ncaps, 0, "the space is empty");

	std::printf("1..%d\n", tap_count);
	return tap_finish();
}
