// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fractctl blk: the block adaptor (fractos_nvme.ko) over its generic
 * netlink family "fractos_blk" (uapi/linux/fractos_blk.h).
 *
 *   fractctl blk attach DEVICE name NAME [ uid UID ] [ format ]
 *   fractctl blk detach { ID | name NAME }
 *   fractctl [-j] [-s] blk [ list ]
 */
#include "fractctl.hpp"

#include <linux/fractos_blk.h>
/* libnvme's headers have no extern "C" of their own. */
extern "C" {
#include <nvme/tree.h>
}

#include <cinttypes>

namespace fractctl {
namespace {

struct blk_vol {
	std::uint64_t id = 0, start = 0, size = 0;
	std::uint32_t inflight = 0;
};

struct blk_dev {
	std::uint32_t id = 0, uid = 0, lbs = 0, nvols = 0, inflight = 0;
	std::uint64_t size = 0, free = 0;
	std::string path, name;
	std::vector<std::uint64_t> stats;
	std::vector<blk_vol> vols;
};

const char *const blk_stat_names[FRACTOS_BLK_STAT_MAX + 1] = {
	nullptr,
	"reads",
	"writes",
	"read_bytes",
	"write_bytes",
	"errors",
	"busy",
	"staged",
	"dropped",
	"cont_failed",
};

nl_result<genl_nl> blk_open()
{
	return genl_nl::open(FRACTOS_BLK_GENL_NAME, FRACTOS_BLK_A_MAX,
			     FRACTOS_BLK_GENL_VERSION, "fractos_nvme");
}

blk_dev parse_dev(const nl_reply &r)
{
	blk_dev d;

	d.id = r.get<std::uint32_t>(FRACTOS_BLK_A_DEV_ID).value_or(0);
	d.uid = r.get<std::uint32_t>(FRACTOS_BLK_A_UID).value_or(0);
	d.lbs = r.get<std::uint32_t>(FRACTOS_BLK_A_BLOCK_SIZE).value_or(0);
	d.nvols = r.get<std::uint32_t>(FRACTOS_BLK_A_VOLUMES).value_or(0);
	d.inflight = r.get<std::uint32_t>(FRACTOS_BLK_A_INFLIGHT).value_or(0);
	d.size = r.get<std::uint64_t>(FRACTOS_BLK_A_SIZE).value_or(0);
	d.free = r.get<std::uint64_t>(FRACTOS_BLK_A_FREE).value_or(0);
	d.path = r.str(FRACTOS_BLK_A_PATH).value_or("");
	d.name = r.str(FRACTOS_BLK_A_NAME).value_or("");
	d.stats = r.counters(FRACTOS_BLK_A_STATS, FRACTOS_BLK_STAT_MAX);
	r.each(FRACTOS_BLK_A_VOLUME, [&](const nl_reply &v) {
		d.vols.push_back({v.get<std::uint64_t>(FRACTOS_BLK_A_VOL_ID).value_or(0),
				  v.get<std::uint64_t>(FRACTOS_BLK_A_VOL_START).value_or(0),
				  v.get<std::uint64_t>(FRACTOS_BLK_A_VOL_SIZE).value_or(0),
				  v.get<std::uint32_t>(FRACTOS_BLK_A_VOL_INFLIGHT).value_or(0)});
	});
	return d;
}

void blk_usage(FILE *f)
{
	std::fprintf(f,
		     "Usage: %s blk attach DEVICE name NAME [ uid UID ] [ format ]\n"
		     "       %s blk detach { ID | name NAME }\n"
		     "       %s [-j] [-s] blk [ list ]\n"
		     "       %s [-j] blk scan\n"
		     "attach serves a block device (an NVMe namespace) as fractos volumes:\n"
		     "its management Request is published as NAME, for UID only (default 0).\n"
		     "format writes an empty volume table first (needed once per device).\n"
		     "detach revokes every Request of the device and closes it.\n"
		     "-s adds the counters to blk list.  scan lists the NVMe namespaces\n"
		     "of this host (libnvme: model, serial, transport, LBA format) and\n"
		     "the name each is attached as.  attach and detach need\n"
		     "CAP_SYS_ADMIN; the fractos_nvme module must be loaded.\n",
		     progname, progname, progname, progname);
}

int blk_help(const options &, int, char **)
{
	blk_usage(stdout);
	return exit_ok;
}

int blk_attach(const options &opts, int argc, char **argv)
{
	std::optional<std::uint32_t> uid;
	const char *name = nullptr;
	bool format = false;

	if (argc < 1)
		return usage_error("blk attach", "a DEVICE is needed%s", "");
	const char *path = argv[0];
	for (int i = 1; i < argc; i++) {
		if (!std::strcmp(argv[i], "name") && i + 1 < argc) {
			name = argv[++i];
		} else if (!std::strcmp(argv[i], "uid") && i + 1 < argc) {
			auto v = parse_uint(argv[++i], 0, UINT32_MAX - 1);
			if (!v)
				return usage_error("blk attach", "bad uid \"%s\"", argv[i]);
			uid = std::uint32_t(*v);
		} else if (!std::strcmp(argv[i], "format")) {
			format = true;
		} else {
			return usage_error("blk attach", "unexpected \"%s\"", argv[i]);
		}
	}
	if (!name)
		return usage_error("blk attach", "name NAME is needed%s", "");
	if (!*name || std::strlen(name) > FRACTOS_NAME_MAX)
		return usage_error("blk attach", "bad name \"%s\"", name);

	auto nl = blk_open();
	if (!nl) {
		report("blk attach", nl.error());
		return exit_error;
	}
	std::vector<nl_attr_out> attrs{attr_bytes(FRACTOS_BLK_A_PATH, path, std::strlen(path) + 1),
				       attr_bytes(FRACTOS_BLK_A_NAME, name, std::strlen(name) + 1)};
	if (uid)
		attrs.push_back(attr(FRACTOS_BLK_A_UID, *uid));
	if (format)
		attrs.push_back({FRACTOS_BLK_A_FORMAT, {}});
	std::uint32_t id = 0;
	auto st = nl->request(FRACTOS_BLK_CMD_ATTACH, false, attrs, [&](const nl_reply &r) {
		id = r.get<std::uint32_t>(FRACTOS_BLK_A_DEV_ID).value_or(0);
	});
	if (!st) {
		std::string what = std::string("blk attach ") + path;
		if (st.error().ec == errno_code(EPERM) && st.error().what == nl_failure::kind::kernel) {
			std::fprintf(stderr, "%s: %s: must be root (CAP_SYS_ADMIN)\n", progname,
				     what.c_str());
			return exit_error;
		}
		report(what.c_str(), st.error(),
		       {{EMEDIUMTYPE, "no fractos volume table on it: add \"format\" to make one "
				      "(an empty table: volumes on it are forgotten)"},
			{EBUSY, "it is mounted, attached or opened exclusively by someone"},
			{EEXIST, "that name is published already"},
			{EUCLEAN, "its volume table is damaged"}});
		return exit_error;
	}
	if (opts.json) {
		json_writer j;
		j.num("id", id);
		j.str("name", name);
		std::printf("%s\n", j.finish().c_str());
	} else {
		std::printf("attached %s as %s (device %" PRIu32 ")\n", path, name, id);
	}
	return exit_ok;
}

int blk_detach(const options &, int argc, char **argv)
{
	std::vector<nl_attr_out> attrs;

	if (argc == 1) {
		auto v = parse_uint(argv[0], 1, UINT32_MAX);
		if (!v)
			return usage_error("blk detach", "bad device id \"%s\"", argv[0]);
		attrs.push_back(attr(FRACTOS_BLK_A_DEV_ID, std::uint32_t(*v)));
	} else if (argc == 2 && !std::strcmp(argv[0], "name")) {
		attrs.push_back(attr_bytes(FRACTOS_BLK_A_NAME, argv[1], std::strlen(argv[1]) + 1));
	} else {
		return usage_error("blk detach", "ID or name NAME is needed%s", "");
	}
	auto nl = blk_open();
	if (!nl) {
		report("blk detach", nl.error());
		return exit_error;
	}
	auto st = nl->request(FRACTOS_BLK_CMD_DETACH, false, attrs);
	if (!st) {
		if (st.error().ec == errno_code(EPERM) && st.error().what == nl_failure::kind::kernel) {
			std::fprintf(stderr, "%s: blk detach: must be root (CAP_SYS_ADMIN)\n",
				     progname);
			return exit_error;
		}
		report("blk detach", st.error(), {{ENOENT, "no such device is attached"}});
		return exit_error;
	}
	return exit_ok;
}

void print_dev_json(json_writer &j, const blk_dev &d, bool stats)
{
	j.begin();
	j.num("id", d.id);
	j.str("path", d.path);
	j.str("name", d.name);
	j.num("uid", d.uid);
	j.num("size", d.size);
	j.num("block_size", d.lbs);
	j.num("free", d.free);
	j.num("inflight", d.inflight);
	j.begin_array("volumes");
	for (const auto &v : d.vols) {
		j.begin();
		j.num("id", v.id);
		j.num("start", v.start);
		j.num("size", v.size);
		j.num("inflight", v.inflight);
		j.end();
	}
	j.end();
	if (stats) {
		j.begin("stats");
		for (int i = 1; i <= FRACTOS_BLK_STAT_MAX; i++)
			j.num(blk_stat_names[i], i < int(d.stats.size()) ? d.stats[i] : 0);
		j.end();
	}
	j.end();
}

void print_dev_text(const blk_dev &d, bool stats)
{
	std::printf("%" PRIu32 ": %s name %s uid %" PRIu32 " size %" PRIu64
		    " block %" PRIu32 " free %" PRIu64 " volumes %" PRIu32
		    " inflight %" PRIu32 "\n",
		    d.id, d.path.c_str(), d.name.c_str(), d.uid, d.size, d.lbs, d.free, d.nvols,
		    d.inflight);
	for (const auto &v : d.vols)
		std::printf("    volume %" PRIu64 " start %" PRIu64 " size %" PRIu64
			    " inflight %" PRIu32 "\n",
			    v.id, v.start, v.size, v.inflight);
	if (!stats)
		return;
	std::printf("    ");
	for (int i = 1; i <= FRACTOS_BLK_STAT_MAX; i++)
		std::printf("%s%s %" PRIu64, i > 1 ? " " : "", blk_stat_names[i],
			    i < int(d.stats.size()) ? d.stats[i] : 0);
	std::printf("\n");
}

int blk_list(const options &opts, int argc, char **argv)
{
	if (argc > 0)
		return usage_error("blk list", "unexpected \"%s\"", argv[0]);
	auto nl = blk_open();
	if (!nl) {
		report("blk list", nl.error());
		return exit_error;
	}
	std::vector<blk_dev> devs;
	auto st = nl->request(FRACTOS_BLK_CMD_LIST, true, {}, [&](const nl_reply &r) {
		blk_dev d = parse_dev(r);
		/* A device with many volumes comes in several messages. */
		if (!devs.empty() && devs.back().id == d.id)
			devs.back().vols.insert(devs.back().vols.end(), d.vols.begin(),
						d.vols.end());
		else
			devs.push_back(std::move(d));
	});
	if (!st) {
		report("blk list", st.error());
		return exit_error;
	}
	if (opts.json) {
		json_writer j(json_writer::top::array);
		for (const auto &d : devs)
			print_dev_json(j, d, opts.stats);
		std::printf("%s\n", j.finish().c_str());
	} else {
		for (const auto &d : devs)
			print_dev_text(d, opts.stats);
	}
	return exit_ok;
}

/* One NVMe namespace, as libnvme's topology scan sees it. */
struct nvme_cand {
	std::string dev, model, serial, firmware, transport, attached;
	std::uint32_t nsid = 0;
	std::uint32_t lba = 0;
	std::uint64_t size = 0;
};

/*
 * The NVMe namespaces of this host, from libnvme (Debian's libnvme-dev, the
 * library of nvme-cli: it knows the sysfs layout of every kernel), each
 * with the name it is attached as (blk list), so that an admin sees what
 * can be attached.
 */
int blk_scan(const options &opts, int argc, char **argv)
{
	if (argc > 0)
		return usage_error("blk scan", "unexpected \"%s\"", argv[0]);
	std::vector<blk_dev> devs;
	if (auto nl = blk_open()) {
		(void)nl->request(FRACTOS_BLK_CMD_LIST, true, {}, [&](const nl_reply &r) {
			devs.push_back(parse_dev(r));
		});
	}
	nvme_root_t root = nvme_scan(nullptr);
	if (!root) {
		std::fprintf(stderr, "%s: blk scan: libnvme: %s\n", progname,
			     describe(last_error()).c_str());
		return exit_error;
	}
	std::vector<nvme_cand> cands;
	auto str = [](const char *p) { return std::string(p ? p : ""); };
	nvme_host_t h;
	nvme_subsystem_t sub;
	nvme_ctrl_t c;
	nvme_ns_t n;
	nvme_for_each_host(root, h) {
		nvme_for_each_subsystem(h, sub) {
			nvme_subsystem_for_each_ctrl(sub, c) {
				nvme_ctrl_for_each_ns(c, n) {
					nvme_cand x;
					x.dev = "/dev/" + str(nvme_ns_get_name(n));
					x.model = str(nvme_ctrl_get_model(c));
					x.serial = str(nvme_ctrl_get_serial(c));
					x.firmware = str(nvme_ctrl_get_firmware(c));
					x.transport = str(nvme_ctrl_get_transport(c));
					x.nsid = std::uint32_t(nvme_ns_get_nsid(n));
					x.lba = std::uint32_t(nvme_ns_get_lba_size(n));
					x.size = nvme_ns_get_lba_count(n) * x.lba;
					for (const auto &d : devs)
						if (d.path == x.dev)
							x.attached = d.name;
					cands.push_back(std::move(x));
				}
			}
		}
	}
	nvme_free_tree(root);
	if (opts.json) {
		json_writer j(json_writer::top::array);
		for (const auto &x : cands) {
			j.begin();
			j.str("device", x.dev);
			j.str("model", x.model);
			j.str("serial", x.serial);
			j.str("firmware", x.firmware);
			j.str("transport", x.transport);
			j.num("nsid", x.nsid);
			j.num("lba_size", x.lba);
			j.num("size", x.size);
			j.str("attached", x.attached);
			j.end();
		}
		std::printf("%s\n", j.finish().c_str());
		return exit_ok;
	}
	for (const auto &x : cands)
		std::printf("%s: %s serial %s fw %s %s nsid %" PRIu32 " lba %" PRIu32
			    " size %" PRIu64 "%s%s\n",
			    x.dev.c_str(), x.model.c_str(), x.serial.c_str(), x.firmware.c_str(),
			    x.transport.c_str(), x.nsid, x.lba, x.size,
			    x.attached.empty() ? "" : " attached as ", x.attached.c_str());
	return exit_ok;
}

const subcommand blk_subcommands[] = {
	{"list", blk_list},
	{"attach", blk_attach},
	{"detach", blk_detach},
	{"scan", blk_scan},
	{"help", blk_help},
};

} // namespace

int do_blk(const options &opts, int argc, char **argv)
{
	if (argc == 0)
		return blk_list(opts, 0, argv);
	for (const auto &c : blk_subcommands)
		if (matches(argv[0], c.name))
			return c.fn(opts, argc - 1, argv + 1);
	return usage_error("blk", "unknown command \"%s\"", argv[0]);
}

} // namespace fractctl
