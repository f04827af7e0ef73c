// SPDX-License-Identifier: GPL-2.0
/*
 * The file-system service (adaptors/fs/fractos-fsd) on QEMU's NVMe device,
 * through libcaladan's client (caladan/fs.hpp) and the fractos-fs CLI:
 * every operation and its errors, every malformed capability list
 * answered once; FS-mode reads and writes at unaligned
 * offsets across extents; DAX opens whose Requests reach the device
 * directly, diminished to the open mode, revoked by close, unlink and the
 * daemon's death; SIGKILL of the daemon in the middle of writes loses
 * nothing it acknowledged; files survive a restart; fsck (the daemon's
 * and the offline one, with the device's volume list) after each part.
 * Needs vm/run --nvme SIZE.
 */
#include <caladan/fs.hpp>

#include "tap.h"
#include "fos_cxx.h"
#define FOS_BLK_NO_NL
#include "fos_blk.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <csignal>
#include <cstdio>
#include <string>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace caladan;
using namespace std::chrono_literals;
using namespace std::string_view_literals;

namespace {

const std::string fractctl = "../../tools/fractctl";
const std::string fsd_bin = "../../adaptors/fs/fractos-fsd";
const std::string fs_cli = "../../tools/fractos-fs";
const std::string state = "/tmp/fractos-fsd-test.meta";


unsigned char pattern(std::uint64_t off, unsigned int seed)
{
	return static_cast<unsigned char>(((off + seed) * 2654435761u) >> 11);
}

void fill(unsigned char *p, std::size_t len, std::uint64_t off, unsigned int seed)
{
	for (std::size_t i = 0; i < len; i++)
		p[i] = pattern(off + i, seed);
}

bool check_pattern(const unsigned char *p, std::size_t len, std::uint64_t off, unsigned int seed)
{
	for (std::size_t i = 0; i < len; i++)
		if (p[i] != pattern(off + i, seed))
			return false;
	return true;
}

/* The daemon, as a child process serving "fs0". */
pid_t fsd_start()
{
	pid_t pid = fork();

	if (!pid) {
		execl(fsd_bin.c_str(), "fractos-fsd", "serve", "fsblk", "-s", state.c_str(),
		      "-N", "fs0", static_cast<char *>(nullptr));
		_exit(127);
	}
	return pid;
}

/* Waits until "fs0" can be looked up (the daemon published it). */
result<fs::client> fsd_wait(const space &sp, pid_t pid)
{
	return fos_wait_published(pid, [&sp] { return fs::client::lookup(sp, "fs0"); });
}

void fsd_kill(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, nullptr, 0);
}

/* fractos-fsd fsck with the device's volume list: "N problems" line. */
std::string offline_fsck(int *rc)
{
	int lrc;
	std::string list = fos_run(fractctl + " -j blk list", &lrc);
	std::string ids;
	std::size_t pos = list.find("\"volumes\":[");
	while (pos != std::string::npos &&
	       (pos = list.find("{\"id\":", pos)) != std::string::npos) {
		pos += 6;
		ids += (ids.empty() ? "" : ",") + list.substr(pos, list.find_first_of(",}", pos) - pos);
	}
	return fos_run(fsd_bin + " fsck fsblk -s " + state + (ids.empty() ? "" : " -V " + ids) +
			   " 2>&1",
		   rc);
}

struct buf {
	unsigned char *p;
	std::size_t len;
	cap mem;

	buf(const space &sp, std::size_t n) : len(n)
	{
		p = static_cast<unsigned char *>(mmap(nullptr, n, PROT_READ | PROT_WRITE,
						      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
		if (p == MAP_FAILED)
			tap_bail("mmap");
		auto m = memory_create(sp, p, n, perm::all);
		if (!m)
			tap_bail("memory_create");
		mem = std::move(*m);
	}
	~buf()
	{
		mem = cap();
		munmap(p, len);
	}
};

void fsck_clean(const space &sp, const fs::client &svc, const char *when)
{
	auto n = svc.fsck(sp, 30s);
	tap_ok(n && *n == 0, "fsck %s: %llu problems", when,
	       n ? (unsigned long long)*n : ~0ULL);
}

} // namespace

int main()
{
	int rc;

	tap_plan_late();
	const char *why = nullptr;
	const char *nvme = fos_blk_setup(&why);
	if (!nvme)
		tap_bail("%s", why);
	std::string out = fos_run(fractctl + " blk attach " + nvme + " name fsblk format", &rc);
	tap_eq(rc, 0, "fractctl blk attach %s name fsblk format", nvme);
	unlink(state.c_str());
	out = fos_run(fsd_bin + " format fsblk -s " + state, &rc);
	tap_ok(rc == 0 && out.find("metadata volume") == 0, "fractos-fsd format: %s", out.c_str());
	out = fos_run(fsd_bin + " format fsblk -s " + state + " 2>&1", &rc);
	tap_ok(rc == 1 && out.find("exists") != std::string::npos,
	       "format again without -f refuses");

	auto sp = space::open();
	if (!sp)
		tap_bail("space");
	pid_t pid = fsd_start();
	auto svc = fsd_wait(*sp, pid);
	tap_ok(bool(svc), "the daemon serves fs0");
	if (!svc) {
		fsd_kill(pid);
		return tap_finish();
	}

	/* ---- names and the service's errors ---- */
	tap_ok(bool(svc->create(*sp, "a", 10s)), "create a");
	auto e = svc->create(*sp, "a", 10s);
	tap_ok(!e && fos_is_errno(e.error(), EEXIST), "create a again: EEXIST");
	e = svc->create(*sp, "no/slash", 10s);
	tap_ok(!e && fos_is_errno(e.error(), EINVAL), "a name with '/': EINVAL");
	e = svc->create(*sp, std::string(fs::name_max + 1, 'n'), 10s);
	tap_ok(!e && fos_is_errno(e.error(), ENAMETOOLONG), "a name of %u bytes: ENAMETOOLONG",
	       fs::name_max + 1);
	auto st = svc->stat(*sp, "nosuch", 10s);
	tap_ok(!st && fos_is_errno(st.error(), ENOENT), "stat of no file: ENOENT");
	auto op = svc->open(*sp, "nosuch", 0, 0, 10s);
	tap_ok(!op && fos_is_errno(op.error(), ENOENT), "open of no file: ENOENT");
	{
		fs::wire_req q;
		q.op = 99;
		auto m = fs::call(*sp, svc->request(), q, {}, nullptr, 10s);
		tap_ok(!m && fos_is_errno(m.error(), EINVAL), "an unknown op: EINVAL");
		q.op = std::uint32_t(fs::op::read);
		m = fs::call(*sp, svc->request(), q, {}, nullptr, 10s);
		tap_ok(!m && fos_is_errno(m.error(), EINVAL), "a file op on the service: EINVAL");
		auto bare = sp->request(svc->request()).set_imm(q).invoke();
		tap_ok(bool(bare), "an invocation with no reply is dropped (the daemon goes on)");
	}

	/* ---- FS mode: unaligned writes across extents ---- */
	buf a(*sp, fs::max_io + 8192), b(*sp, fs::max_io + 8192);
	auto f = svc->open(*sp, "a", fs::open_write, 0, 10s);
	tap_ok(f && f->opened().size == 0 && f->opened().capacity == 0, "open a read-write");
	if (!f)
		tap_bail("open");
	const std::uint64_t total = (3 << 20) + 777;	/* spans 3 extents */
	std::uint64_t off = 0;
	bool ok = true;
	for (std::uint64_t chunk : {1, 510, 4097, (1 << 20) + 3, 300000}) {
		if (off >= total)
			break;
		chunk = std::min(chunk, total - off);
		fill(a.p, chunk, off, 1);
		auto w = f->write(*sp, a.mem, off, chunk, 30s);
		ok = ok && w && *w == chunk;
		off += chunk;
	}
	while (ok && off < total) {
		std::uint64_t chunk = std::min<std::uint64_t>(total - off, 999999);
		fill(a.p, chunk, off, 1);
		auto w = f->write(*sp, a.mem, off, chunk, 30s);
		ok = w && *w == chunk;
		off += chunk;
	}
	tap_ok(ok, "%llu bytes in writes of 1, 510, 4097, 1 MiB + 3, ... bytes",
	       (unsigned long long)total);
	st = f->stat(*sp, 10s);
	tap_ok(st && st->size == total && st->nextents >= 2 && st->capacity >= total,
	       "fstat: size %llu, %u extents, capacity %llu",
	       st ? (unsigned long long)st->size : 0ULL, st ? st->nextents : 0,
	       st ? (unsigned long long)st->capacity : 0ULL);
	ok = true;
	for (std::uint64_t o2 : {std::uint64_t(0), std::uint64_t(1), std::uint64_t(511),
				  std::uint64_t((1 << 20) - 5), total - 1000}) {
		std::uint64_t n = std::min<std::uint64_t>(200000, total - o2);
		std::memset(b.p, 0, n);
		auto r = f->read(*sp, b.mem, o2, n, 30s);
		ok = ok && r && *r == n && check_pattern(b.p, n, o2, 1);
	}
	tap_ok(ok, "reads at unaligned offsets, across extent edges, give the bytes written");
	auto r = f->read(*sp, b.mem, total - 10, 100, 10s);
	tap_ok(r && *r == 10, "a read over the end: the 10 bytes left");
	r = f->read(*sp, b.mem, total + 5, 100, 10s);
	tap_ok(r && *r == 0, "a read past the end: 0 bytes");
	auto w = f->write(*sp, a.mem, total + 1, 10, 10s);
	tap_ok(!w && fos_is_errno(w.error(), EINVAL), "a write that leaves a hole: EINVAL");
	w = f->write(*sp, a.mem, 0, fs::max_io + 1, 10s);
	tap_ok(!w && fos_is_errno(w.error(), EMSGSIZE), "a write over max_io: EMSGSIZE");
	{
		auto ro = memory_diminish(a.mem, 0, 4096, perm::write);
		auto rr = ro ? f->read(*sp, *ro, 0, 100, 10s) : result<std::uint64_t>(ro.error());
		tap_ok(!rr && fos_is_errno(rr.error(), EACCES),
		       "a read into a read-only view: MEMORY_COPY's EACCES");
	}
	auto fro = svc->open(*sp, "a", 0, 0, 10s);
	w = fro ? fro->write(*sp, a.mem, 0, 10, 10s) : result<std::uint64_t>(fro.error());
	tap_ok(!w && fos_is_errno(w.error(), EBADF), "a write through a read-only open: EBADF");
	/*
	 * Malformed capability lists (issue 27): each call that names a
	 * Request is answered exactly once, EINVAL on the Request at the
	 * reply's position, else the last one; one with none is dropped.
	 */
	{
		auto r1 = request_create(*sp, 0x7e51);
		auto r2 = request_create(*sp, 0x7e52);
		if (!r1 || !r2)
			tap_bail("reply Requests");
		auto none_queued = [&] {
			usleep(20000);
			auto x = request_receive(*sp, FRACTOS_RECV_NONBLOCK);
			return !x && fos_is_errno(x.error(), EAGAIN);
		};
		/* One answer: its tag and status, or tag 0 if none came in 5 s. */
		auto answer = [&](const cap &req, const fs::wire_req &q, std::string_view name,
				  std::initializer_list<const cap *> caps, std::int32_t *status) {
			request_builder b = sp->request(req);
			b.set_imm(q);
			if (!name.empty())
				b.set_imm(name);
			for (const cap *c : caps)
				b.set_cap(*c);
			if (!b.invoke())
				return std::uint64_t(1);
			auto m = request_receive(*sp, FRACTOS_RECV_TIMEOUT, 5000000000ULL);
			if (!m)
				return std::uint64_t(0);
			auto rep = m->imm<fs::wire_reply>();
			*status = rep ? rep->status : 1;
			return none_queued() ? m->tag : std::uint64_t(2);
		};
		fs::wire_req q;
		std::int32_t status = 0;
		std::uint64_t tag;

		q.op = std::uint32_t(fs::op::stat);
		tag = answer(svc->request(), q, "a", {&*r1, &a.mem}, &status);
		tap_ok(tag == 0x7e51 && status == -EINVAL,
		       "stat with [reply, mem]: EINVAL on reply (tag %#llx, %d)",
		       (unsigned long long)tag, status);
		tag = answer(svc->request(), q, "a", {&*r1, &*r2}, &status);
		tap_ok(tag == 0x7e51 && status == -EINVAL,
		       "stat with [reply, reply2]: EINVAL on reply, at the reply's position");
		tag = answer(svc->request(), q, "a", {&a.mem, &*r2, &a.mem}, &status);
		tap_ok(tag == 0x7e52 && status == -EINVAL,
		       "stat with [mem, reply, mem]: EINVAL on the only Request");
		q.op = std::uint32_t(fs::op::read);
		q.offset = 0;
		q.len = 10;
		tag = answer(f->request(), q, {}, {&b.mem, &*r1, &b.mem}, &status);
		tap_ok(tag == 0x7e51 && status == -EINVAL, "read with [mem, reply, mem]: EINVAL on reply");
		tag = answer(f->request(), q, {}, {&*r1}, &status);
		tap_ok(tag == 0x7e51 && status == -EINVAL, "read with [reply] only: EINVAL on reply");
		auto fixed = sp->request(f->request()).set_cap(b.mem).derive();
		tap_ok(bool(fixed), "derive the file Request with the Memory fixed");
		if (fixed) {
			std::memset(b.p, 0, 10);
			tag = answer(*fixed, q, {}, {&*r1}, &status);
			tap_ok(tag == 0x7e51 && status == 0 && check_pattern(b.p, 10, 0, 1),
			       "it, invoked with [reply]: reads");
			tag = answer(*fixed, q, {}, {&b.mem, &*r1}, &status);
			tap_ok(tag == 0x7e51 && status == -EINVAL,
			       "it, invoked with [mem, reply] (so [mem, mem, reply]): EINVAL on reply");
		}
		q.op = std::uint32_t(fs::op::stat);
		auto dropped = sp->request(svc->request()).set_imm(q).set_imm("a"sv)
				       .set_cap(a.mem).invoke();
		auto x = request_receive(*sp, FRACTOS_RECV_TIMEOUT, 1000000000ULL);
		tap_ok(dropped && !x && fos_is_errno(x.error(), ETIMEDOUT),
		       "stat with [mem]: no Request, dropped");
		auto st2 = svc->stat(*sp, "a", 10s);
		tap_ok(st2 && st2->size == total, "the daemon goes on");
	}
	fsck_clean(*sp, *svc, "after the FS-mode writes");

	/* ---- DAX ---- */
	auto dro = svc->open(*sp, "a", fs::open_dax, 0, 10s);
	bool shape = dro && dro->extents().size() == st->nextents;
	for (std::size_t i = 0; shape && i < dro->extents().size(); i++)
		shape = dro->extents()[i].read && !dro->extents()[i].write;
	tap_ok(shape, "a read-only DAX open: %zu extents, read Requests only",
	       dro ? dro->extents().size() : 0);
	std::memset(b.p, 0, 2 << 20);
	r = dro ? dro->read(*sp, b.mem, (1 << 20) - 4096, 2 << 20, 30s)
		: result<std::uint64_t>(dro.error());
	tap_ok(r && *r == (2u << 20) && check_pattern(b.p, 2 << 20, (1 << 20) - 4096, 1),
	       "a DAX read across an extent edge gives what FS mode wrote");
	w = dro ? dro->write(*sp, a.mem, 0, 4096, 10s) : result<std::uint64_t>(dro.error());
	tap_ok(!w && fos_is_errno(w.error(), EBADF), "no DAX write through a read-only open");
	tap_ok(bool(svc->create(*sp, "d", 10s)), "create d");
	auto drw = svc->open(*sp, "d", fs::open_write | fs::open_dax, 2 << 20, 10s);
	tap_ok(drw && drw->extents().size() >= 1 && drw->extents()[0].write &&
		       drw->opened().capacity >= (2u << 20),
	       "a read-write DAX open reserving 2 MiB: extents with write Requests");
	fill(a.p, 1 << 20, 0, 5);
	w = drw ? drw->write(*sp, a.mem, 4096, 1 << 20, 30s) : result<std::uint64_t>(drw.error());
	tap_ok(w && *w == (1u << 20), "a DAX write of 1 MiB at 4 KiB");
	auto rs = drw ? drw->resize(*sp, (1 << 20) + 4096, 10s)
		      : result<fs::file_stat>(drw.error());
	tap_ok(rs && rs->size == (1u << 20) + 4096, "resize: the size covers it");
	auto fd = svc->open(*sp, "d", 0, 0, 10s);
	std::memset(b.p, 0, 1 << 20);
	r = fd ? fd->read(*sp, b.mem, 4096, 1 << 20, 30s) : result<std::uint64_t>(fd.error());
	tap_ok(r && *r == (1u << 20) && check_pattern(b.p, 1 << 20, 0, 5),
	       "FS mode reads what DAX wrote");
	r = fd ? fd->read(*sp, b.mem, 0, 4096, 10s) : result<std::uint64_t>(fd.error());
	tap_ok(r && *r == 4096 && std::all_of(b.p, b.p + 4096, [](unsigned char c) { return !c; }),
	       "bytes never written read as zeros (new extents are zeroed)");
	/* A child of its first read Request: revoked with it. */
	cap kept_rd;
	if (drw && !drw->extents().empty())
		kept_rd = request_derive(drw->extents()[0].read).value_or(cap());
	tap_ok(drw && bool(drw->close(*sp, 10s)), "close the DAX open");
	{
		fractos_blk_io io{0, 4096};
		auto m = kept_rd ? sp->request(kept_rd).set_imm(io).lease(b.mem).call_with_lease(10s)
				 : result<message>(errno_code(EBADF));
		tap_ok(!m && fos_is_errno(m.error(), EKEYREVOKED), "its read Request is revoked: %s",
		       m ? "answered" : describe(m.error()).c_str());
	}
	tap_ok(bool(svc->unlink(*sp, "d", 10s)), "unlink d");
	r = fd ? fd->read(*sp, b.mem, 0, 4096, 10s) : result<std::uint64_t>(fd.error());
	tap_ok(!r && fos_is_errno(r.error(), EKEYREVOKED), "an open of d is revoked by the unlink");
	st = svc->stat(*sp, "d", 10s);
	tap_ok(!st && fos_is_errno(st.error(), ENOENT), "d is gone");
	fsck_clean(*sp, *svc, "after DAX and unlink");

	/* ---- the CLI ---- */
	{
		int frc;
		fos_run("head -c 3000000 /dev/urandom > /tmp/fs-in && : > /tmp/fs-empty", &frc);
		out = fos_run(fs_cli + " -j put /tmp/fs-in cli", &rc);
		tap_ok(rc == 0 && out.find("\"bytes\":3000000") != std::string::npos,
		       "fractos-fs -j put: %s", out.c_str());
		fos_run(fs_cli + " get cli /tmp/fs-out", &rc);
		fos_run("cmp -s /tmp/fs-in /tmp/fs-out", &frc);
		tap_ok(rc == 0 && frc == 0, "fractos-fs get gives the same bytes");
		fos_run(fs_cli + " -d put /tmp/fs-in cli-dax", &rc);
		tap_eq(rc, 0, "fractos-fs -d put (DAX)");
		fos_run(fs_cli + " -d get cli-dax /tmp/fs-out2", &rc);
		fos_run("cmp -s /tmp/fs-in /tmp/fs-out2", &frc);
		tap_ok(rc == 0 && frc == 0, "fractos-fs -d get (DAX) gives the same bytes");
		fos_run(fs_cli + " put /tmp/fs-empty cli", &rc);
		out = fos_run(fs_cli + " -j stat cli", &rc);
		tap_ok(rc == 0 && out.find("\"size\":0") != std::string::npos,
		       "put of an empty file truncates: %s", out.c_str());
		out = fos_run(fs_cli + " -j ls", &rc);
		tap_ok(rc == 0 && out.find("\"name\":\"a\"") != std::string::npos &&
			       out.find("\"name\":\"cli-dax\"") != std::string::npos,
		       "fractos-fs -j ls lists the files");
		fos_run(fs_cli + " rm cli", &rc);
		out = fos_run(fs_cli + " stat cli 2>&1", &rc);
		tap_ok(rc == 1 && out.find("ENOENT") != std::string::npos, "rm, then stat: ENOENT");
		out = fos_run(fs_cli + " -s nosuch ls 2>&1", &rc);
		tap_ok(rc == 1, "a service that is not there: exit 1");
		out = fos_run(fs_cli + " frob 2>&1", &rc);
		tap_eq(rc, 2, "an unknown command: exit 2");
	}

	/* ---- SIGKILL mid-write; the DAX Requests die with the daemon ---- */
	tap_ok(bool(svc->create(*sp, "k", 10s)), "create k");
	auto fk = svc->open(*sp, "k", fs::open_write, 0, 10s);
	auto dk = svc->open(*sp, "a", fs::open_dax, 0, 10s);
	tap_ok(fk && dk && !dk->extents().empty(), "open k read-write, a with DAX");
	/*
	 * The killer waits for 20 acknowledged writes, then kills the
	 * daemon at a random moment of the next ones.
	 */
	const std::uint64_t chunk = 100000;
	std::uint64_t acked = 0;
	int go[2];
	if (pipe(go))
		tap_bail("pipe");
	pid_t killer = fork();
	if (!killer) {
		char c;
		close(go[1]);
		if (read(go[0], &c, 1) == 1) {
			srand(unsigned(getpid()));
			usleep(10000 + rand() % 100000);
		}
		kill(pid, SIGKILL);
		_exit(0);
	}
	close(go[0]);
	std::error_code why_stop;
	for (unsigned int i = 0; fk && acked < (64 << 20); i++) {
		if (i == 20 && write(go[1], "k", 1) != 1)
			break;
		fill(a.p, chunk, acked, 9);
		auto wk = fk->write(*sp, a.mem, acked, chunk, 10s);
		if (!wk) {
			why_stop = wk.error();
			break;
		}
		acked += *wk;
	}
	close(go[1]);
	waitpid(killer, nullptr, 0);
	waitpid(pid, nullptr, 0);
	tap_ok(acked > 0 && why_stop, "the daemon killed after %llu bytes acknowledged (%s)",
	       (unsigned long long)acked, describe(why_stop).c_str());
	{
		fractos_blk_io io{0, 4096};
		auto m = dk && !dk->extents().empty()
				 ? sp->request(dk->extents()[0].read)
					   .set_imm(io)
					   .lease(b.mem)
					   .call_with_lease(10s)
				 : result<message>(errno_code(EBADF));
		tap_ok(!m && fos_is_errno(m.error(), EKEYREVOKED),
		       "a DAX Request of the dead daemon is revoked");
	}
	out = offline_fsck(&rc);
	tap_ok(rc == 0 && out.find(" 0 problems") != std::string::npos,
	       "offline fsck after the kill: %s", out.c_str());

	pid = fsd_start();
	svc = fsd_wait(*sp, pid);
	tap_ok(bool(svc), "the daemon restarts");
	if (!svc) {
		fsd_kill(pid);
		return tap_finish();
	}
	st = svc->stat(*sp, "k", 10s);
	tap_ok(st && st->size >= acked, "k has every acknowledged byte: size %llu >= %llu",
	       st ? (unsigned long long)st->size : 0ULL, (unsigned long long)acked);
	fk = svc->open(*sp, "k", 0, 0, 10s);
	ok = bool(fk);
	for (std::uint64_t o2 = 0; ok && o2 < acked; o2 += fs::max_io) {
		std::uint64_t n = std::min<std::uint64_t>(fs::max_io, acked - o2);
		auto rk = fk->read(*sp, b.mem, o2, n, 30s);
		ok = rk && *rk == n && check_pattern(b.p, n, o2, 9);
	}
	tap_ok(ok, "and they read back intact");
	auto l = svc->list(*sp, 10s);
	tap_ok(l && l->size() == 3, "the files survive the restart (%zu: a, cli-dax, k)",
	       l ? l->size() : 0);
	fsck_clean(*sp, *svc, "after the restart");
	for (const char *n : {"a", "cli-dax", "k"})
		(void)svc->unlink(*sp, n, 10s);
	l = svc->list(*sp, 10s);
	tap_ok(l && l->empty(), "every file unlinked");
	fsd_kill(pid);
	out = offline_fsck(&rc);
	tap_ok(rc == 0 && out.find("0 files, 0 problems") != std::string::npos,
	       "offline fsck at the end: %s", out.c_str());

	out = fos_run(fractctl + " blk detach name fsblk", &rc);
	tap_eq(rc, 0, "fractctl blk detach name fsblk");
	unlink(state.c_str());
	tap_eq(fos_blk_unload(), 0, "rmmod fractos_nvme");
	return tap_finish();
}
