// SPDX-License-Identifier: GPL-2.0
/*
 * The block adaptor through the tools a person and a program use:
 * fractctl blk attach/list/detach (the real CLI, -j output parsed) and
 * libcaladan's blk client (caladan/blk.hpp): create and open volumes,
 * synchronous lease-call reads and writes checked byte for byte, errors
 * as values with the adaptor's errnos, a fixed-range Request, destroy.
 * Needs QEMU's NVMe device (vm/run --nvme SIZE).
 */
#include <caladan/blk.hpp>

#include "tap.h"
#include "fos_cxx.h"
#define FOS_BLK_NO_NL
#include "fos_blk.h"

#include <chrono>
#include <cstdio>
#include <string>
#include <sys/mman.h>

using namespace caladan;
using namespace std::chrono_literals;

namespace {

void fill(unsigned char *p, std::size_t len, unsigned int seed)
{
	for (std::size_t i = 0; i < len; i++)
		p[i] = static_cast<unsigned char>((i * 2654435761u + seed) >> 13);
}

} // namespace

int main()
{
	const std::string fractctl = "../../tools/fractctl";
	const char *nvme;
	int rc;

	tap_plan_late();
	const char *why = nullptr;
	nvme = fos_blk_setup(&why);
	if (!nvme)
		tap_bail("%s", why);

	/* fractctl, as an admin would. */
	std::string out = fos_run(fractctl + " blk attach " + nvme + " name cblk 2>&1", &rc);
	tap_ok(rc == 1 && out.find("format") != std::string::npos,
	       "fractctl blk attach of a blank device fails and says to format");
	out = fos_run(fractctl + " -j blk attach " + nvme + " name cblk format", &rc);
	tap_ok(rc == 0 && out.find("\"name\":\"cblk\"") != std::string::npos,
	       "fractctl -j blk attach ... format: %s", out.c_str());
	out = fos_run(fractctl + " -j blk scan", &rc);
	tap_ok(rc == 0 && out.find(std::string("\"device\":\"") + nvme + "\"") != std::string::npos &&
		       out.find("\"transport\":\"pcie\"") != std::string::npos &&
		       out.find("\"lba_size\":512") != std::string::npos &&
		       out.find("\"attached\":\"cblk\"") != std::string::npos,
	       "fractctl -j blk scan (libnvme): the namespace, its transport, LBA size and name: %s",
	       out.c_str());
	out = fos_run(fractctl + " blk attach " + nvme + " name cblk2 2>&1", &rc);
	tap_ok(rc == 1 && out.find("Device or resource busy") != std::string::npos,
	       "attach it again: busy");

	auto sp = space::open();
	if (!sp)
		tap_bail("space");
	auto dev = blk::device::lookup(*sp, "cblk");
	tap_ok(bool(dev), "blk::device::lookup(\"cblk\")");
	if (!dev)
		return tap_finish();
	auto bad = dev->create(*sp, 1000, 10s);
	tap_ok(!bad && fos_is_errno(bad.error(), EINVAL), "create of 1000 bytes: EINVAL as a value");
	auto vol = dev->create(*sp, 4 << 20, 10s);
	tap_ok(vol && vol->info().size == (4u << 20) && vol->info().block_size >= 512,
	       "create 4 MiB: volume %llu", vol ? (unsigned long long)vol->info().id : 0ULL);
	if (!vol)
		return tap_finish();

	const std::size_t len = 256 << 10;
	auto *a = static_cast<unsigned char *>(
		mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	auto *b = static_cast<unsigned char *>(
		mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	fill(a, len, 77);
	std::memset(b, 0, len);
	auto ma = memory_create(*sp, a, len, perm::all);
	auto mb = memory_create(*sp, b, len, perm::all);
	if (!ma || !mb)
		tap_bail("memory");

	auto w = vol->write(*sp, *ma, 8192, len, 10s);
	tap_ok(w && *w == len, "volume::write 256 KiB at 8 KiB");
	auto r = vol->read(*sp, *mb, 8192, len, 10s);
	tap_ok(r && *r == len && !std::memcmp(a, b, len), "volume::read: the same bytes");
	r = vol->read(*sp, *mb, 1, 512, 10s);
	tap_ok(!r && fos_is_errno(r.error(), EINVAL), "an unaligned read: EINVAL as a value");
	r = vol->read(*sp, *mb, 4 << 20, 512, 10s);
	tap_ok(!r && fos_is_errno(r.error(), ERANGE), "past the end: ERANGE");
	{
		auto ro = memory_diminish(*mb, 0, len, perm::write);
		auto rr = ro ? vol->read(*sp, *ro, 0, 512, 10s) : result<std::uint64_t>(ro.error());
		tap_ok(!rr && fos_is_errno(rr.error(), EPERM), "into a read-only view: EPERM");
	}
	{
		auto fixed = vol->fixed_range(false, 8192, 4096);
		tap_ok(bool(fixed), "fixed_range: a read of 4 KiB at 8 KiB");
		std::memset(b, 0, len);
		auto m = fixed ? sp->request(*fixed).lease(*mb).call_with_lease(10s)
			       : result<message>(fixed.error());
		auto d = m ? m->imm<fractos_blk_done>() : result<fractos_blk_done>(m.error());
		tap_ok(d && d->result == 4096 && !std::memcmp(a, b, 4096),
		       "invoked with only the memory: it reads its range");
	}

	/* The volume in fractctl's JSON. */
	out = fos_run(fractctl + " -j -s blk list", &rc);
	tap_ok(rc == 0 && out.find("\"volumes\":[{\"id\":" + std::to_string(vol->info().id)) !=
				  std::string::npos &&
	       out.find("\"writes\":") != std::string::npos,
	       "fractctl -j -s blk list shows the volume and the counters");

	auto again = dev->open(*sp, vol->info().id, 10s);
	tap_ok(again && again->info().size == vol->info().size, "open: new Requests");
	tap_ok(bool(dev->destroy(*sp, vol->info().id, 10s)), "destroy");
	w = again ? again->write(*sp, *ma, 0, 512, 10s) : result<std::uint64_t>(again.error());
	tap_ok(!w && fos_is_errno(w.error(), EKEYREVOKED), "its Requests are revoked: EKEYREVOKED");
	auto gone = dev->destroy(*sp, vol->info().id, 10s);
	tap_ok(!gone && fos_is_errno(gone.error(), ENOENT), "destroy again: ENOENT");

	out = fos_run(fractctl + " blk detach name nosuch 2>&1", &rc);
	tap_ok(rc == 1 && out.find("no such device") != std::string::npos,
	       "fractctl blk detach of an unknown name fails");
	out = fos_run(fractctl + " blk detach name cblk", &rc);
	tap_eq(rc, 0, "fractctl blk detach name cblk");
	auto late = dev->create(*sp, 4096, 10s);
	tap_ok(!late && fos_is_errno(late.error(), EKEYREVOKED), "the management Request is revoked");
	out = fos_run(fractctl + " -j blk list", &rc);
	tap_ok(rc == 0 && out == "[]\n", "fractctl -j blk list: empty");

	munmap(a, len);
	munmap(b, len);
	tap_eq(fos_blk_unload(), 0, "rmmod fractos_nvme");
	return tap_finish();
}
