// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fractos-fsd: the file-system service of fractos, on the block adaptor.
 *
 *   fractos-fsd format DEVICE [options]   a new file system: its metadata
 *                                         volume on DEVICE, id recorded
 *   fractos-fsd serve DEVICE [options]    serve it (the foreground)
 *   fractos-fsd fsck DEVICE [options]     check it (not while served)
 *
 * DEVICE is the name the block device's management Request is published
 * under (fractctl blk attach ... name DEVICE).  Options:
 *   -n, --node NODE     DEVICE is published on node NODE (remote storage)
 *   -m, --meta ID       the metadata volume (else the state file's)
 *   -s, --state FILE    where format records the metadata volume's id
 *                       (default /var/lib/fractos/fsd-DEVICE.meta)
 *   -N, --name NAME     serve: publish the service as NAME (default fs0)
 *   -w, --world         serve: any uid may look NAME up (default: ours)
 *   -f, --force         format: even if the state file exists
 *   -V, --volumes LIST  fsck: the device's volume ids (comma-separated,
 *                       as fractctl -j blk list gives them): also report
 *                       missing and orphan volumes
 *
 * Exit status: 0, or 1 on an error (fsck: damage found), 2 on a usage
 * error.  serve runs until killed: everything it acknowledged is on the
 * device already, so SIGKILL loses nothing but the calls in flight, and
 * its space's closing revokes every Request it handed out.
 */
#include "fsd.hpp"

#include <getopt.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

using namespace caladan;

namespace {

struct options {
	std::string cmd, device, state, name = "fs0";
	std::uint32_t node = 0;
	std::uint64_t meta = 0;
	bool world = false, force = false, have_volumes = false;
	std::vector<std::uint64_t> volumes;
};

[[noreturn]] void usage(int rc)
{
	std::fprintf(rc ? stderr : stdout,
		     "usage: fractos-fsd format|serve|fsck DEVICE [-n NODE] [-m ID] [-s FILE]\n"
		     "                   [-N NAME] [-w] [-f] [-V ID,ID...]\n");
	std::exit(rc);
}

bool parse_u64(const char *s, std::uint64_t *v)
{
	char *end;

	errno = 0;
	*v = std::strtoull(s, &end, 0);
	return !errno && end != s && !*end && *s != '-';
}

options parse(int argc, char **argv)
{
	static const option longs[] = {
		{"node", required_argument, nullptr, 'n'},
		{"meta", required_argument, nullptr, 'm'},
		{"state", required_argument, nullptr, 's'},
		{"name", required_argument, nullptr, 'N'},
		{"world", no_argument, nullptr, 'w'},
		{"force", no_argument, nullptr, 'f'},
		{"volumes", required_argument, nullptr, 'V'},
		{"help", no_argument, nullptr, 'h'},
		{},
	};
	options o;
	std::uint64_t v;
	int c;

	while ((c = getopt_long(argc, argv, "n:m:s:N:wfV:h", longs, nullptr)) != -1) {
		switch (c) {
		case 'n':
			if (!parse_u64(optarg, &v) || !v || v > UINT32_MAX)
				usage(2);
			o.node = std::uint32_t(v);
			break;
		case 'm':
			if (!parse_u64(optarg, &o.meta) || !o.meta)
				usage(2);
			break;
		case 's':
			o.state = optarg;
			break;
		case 'N':
			o.name = optarg;
			break;
		case 'w':
			o.world = true;
			break;
		case 'f':
			o.force = true;
			break;
		case 'V': {
			std::stringstream ss(optarg);
			std::string id;
			o.have_volumes = true;
			while (std::getline(ss, id, ','))
				if (!id.empty()) {
					if (!parse_u64(id.c_str(), &v))
						usage(2);
					o.volumes.push_back(v);
				}
			break;
		}
		case 'h':
			usage(0);
		default:
			usage(2);
		}
	}
	if (argc - optind != 2)
		usage(2);
	o.cmd = argv[optind];
	o.device = argv[optind + 1];
	if (o.state.empty())
		o.state = "/var/lib/fractos/fsd-" + o.device + ".meta";
	return o;
}

/* The metadata volume: -m, else the state file's "meta_volume ID". */
bool meta_id(options &o)
{
	if (o.meta)
		return true;
	std::ifstream f(o.state);
	std::string key;
	if (!(f >> key >> o.meta) || key != "meta_volume" || !o.meta) {
		std::fprintf(stderr, "fractos-fsd: no metadata volume: no -m and no usable %s\n",
			     o.state.c_str());
		return false;
	}
	return true;
}

int fail(const char *what, std::error_code ec)
{
	std::fprintf(stderr, "fractos-fsd: %s: %s\n", what, describe(ec).c_str());
	return 1;
}

int do_format(const space &sp, const blk::device &dev, options &o)
{
	struct stat st;

	if (!o.force && !stat(o.state.c_str(), &st)) {
		std::fprintf(stderr, "fractos-fsd: %s exists (a file system is there: -f to make another)\n",
			     o.state.c_str());
		return 1;
	}
	auto id = fsd::service::format(sp, dev);
	if (!id)
		return fail("format", id.error());
	std::string dir = o.state.substr(0, o.state.find_last_of('/'));
	if (o.state.find('/') != std::string::npos && !dir.empty())
		(void)mkdir(dir.c_str(), 0755);
	std::string tmp = o.state + ".tmp";
	{
		std::ofstream f(tmp, std::ios::trunc);
		f << "meta_volume " << *id << "\n";
		f.flush();
		if (!f) {
			std::fprintf(stderr, "fractos-fsd: cannot write %s\n", tmp.c_str());
			return 1;
		}
	}
	if (std::rename(tmp.c_str(), o.state.c_str()))
		return fail("rename the state file", last_error());
	std::printf("metadata volume %llu (%s)\n", static_cast<unsigned long long>(*id),
		    o.state.c_str());
	return 0;
}

int do_fsck(const space &sp, blk::device dev, options &o)
{
	auto map = fsd::mapping::make(fsd::kMetaSize);
	if (!map)
		return fail("mmap", map.error());
	auto mem = memory_create(sp, map->data(), map->size(), perm::all);
	if (!mem)
		return fail("memory", mem.error());
	auto v = dev.open(sp, o.meta, fsd::service::kBlockTimeout);
	if (!v)
		return fail("open the metadata volume", v.error());
	if (v->info().size < fsd::kMetaSize) {
		std::fprintf(stderr, "fractos-fsd: volume %llu is too small for metadata\n",
			     static_cast<unsigned long long>(o.meta));
		return 1;
	}
	auto n = v->read(sp, *mem, 0, fsd::kMetaSize, fsd::service::kBlockTimeout);
	if (!n)
		return fail("read the metadata volume", n.error());
	std::vector<fsd::inode> inodes;
	std::size_t orphans = 0;
	auto p = fsd::check(map->span(), &inodes, o.have_volumes ? &o.volumes : nullptr, &orphans);
	std::size_t files = 0;
	for (const fsd::inode &i : inodes)
		files += i.used();
	for (const fsd::problem &x : p)
		std::printf("%s%lld: %s\n", x.inode < 0 ? "" : "inode ",
			    static_cast<long long>(x.inode), x.what.c_str());
	std::printf("%zu files, %zu problems, %zu orphan volumes\n", files,
		    p.size() - orphans, orphans);
	return p.size() == orphans ? 0 : 1;
}

} // namespace

int main(int argc, char **argv)
{
	options o = parse(argc, argv);

	if (o.cmd != "format" && o.cmd != "serve" && o.cmd != "fsck")
		usage(2);
	auto sp = space::open();
	if (!sp)
		return fail("open " FRACTOS_DEVICE, sp.error());
	auto dev = blk::device::lookup(*sp, o.device, o.node);
	if (!dev)
		return fail(("look up " + o.device).c_str(), dev.error());
	if (o.cmd == "format")
		return do_format(*sp, *dev, o);
	if (!meta_id(o))
		return 1;
	if (o.cmd == "fsck")
		return do_fsck(*sp, std::move(*dev), o);

	auto svc = fsd::service::open(*sp, std::move(*dev), o.meta);
	if (!svc)
		return fail("load the file system", svc.error());
	auto r = (*svc)->publish(o.name, o.world ? FRACTOS_NAME_WORLD : 0);
	if (!r)
		return fail(("publish " + o.name).c_str(), r.error());
	std::printf("fractos-fsd: serving %s (metadata volume %llu)\n", o.name.c_str(),
		    static_cast<unsigned long long>(o.meta));
	std::fflush(stdout);
	r = (*svc)->run();
	return fail("receive", r.error());
}
