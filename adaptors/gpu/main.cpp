// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fractos-gpud: the GPU service of fractos (caladan/gpu.hpp,
 * fractos-gpud(8)).
 *
 *   fractos-gpud serve [options]    serve (the foreground)
 *   fractos-gpud info [-b B] [-j]   open the backend, print its device
 *
 * Options:
 *   -N, --name NAME          publish the service as NAME (default gpu0)
 *   -w, --world              any uid may look NAME up (default: ours)
 *   -b, --backend B          what runs the kernels: cpu (default), cuda
 *                            (device 0) or cuda:N
 *   -j, --json               info: one JSON object
 *   -C, --max-contexts N     contexts at once (default 64)
 *   -B, --max-buffers N      buffers per context (default 64)
 *   -M, --max-context-mib N  device memory per context (default 256)
 *   -I, --max-inflight N     queued launches per context (default 16)
 *
 * Exit status: 1 on an error, 2 on a usage error; serve runs until
 * killed, and its space's closing revokes everything it handed out.
 */
#include "gpud.hpp"

#include <getopt.h>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace caladan;

namespace {

struct options {
	std::string cmd, name = "gpu0", backend = "cpu";
	bool world = false, json = false;
	gpud::limits lim;
};

[[noreturn]] void usage(int rc)
{
	std::fprintf(rc ? stderr : stdout,
		     "usage: fractos-gpud serve [-N NAME] [-w] [-b cpu|cuda[:N]] [-C N] [-B N] [-M MIB]"
		     " [-I N]\n"
		     "       fractos-gpud info [-b cpu|cuda[:N]] [-j]\n");
	std::exit(rc);
}

std::uint64_t number(const char *s, std::uint64_t max)
{
	char *end;

	errno = 0;
	std::uint64_t v = std::strtoull(s, &end, 0);
	if (errno || end == s || *end || *s == '-' || !v || v > max)
		usage(2);
	return v;
}

options parse(int argc, char **argv)
{
	static const option longs[] = {
		{"name", required_argument, nullptr, 'N'},
		{"world", no_argument, nullptr, 'w'},
		{"backend", required_argument, nullptr, 'b'},
		{"max-contexts", required_argument, nullptr, 'C'},
		{"max-buffers", required_argument, nullptr, 'B'},
		{"max-context-mib", required_argument, nullptr, 'M'},
		{"max-inflight", required_argument, nullptr, 'I'},
		{"json", no_argument, nullptr, 'j'},
		{"help", no_argument, nullptr, 'h'},
		{},
	};
	options o;
	int c;

	while ((c = getopt_long(argc, argv, "N:wb:C:B:M:I:jh", longs, nullptr)) != -1) {
		switch (c) {
		case 'N':
			o.name = optarg;
			break;
		case 'w':
			o.world = true;
			break;
		case 'b':
			o.backend = optarg;
			break;
		case 'C':
			o.lim.max_contexts = std::uint32_t(number(optarg, 1 << 20));
			break;
		case 'B':
			o.lim.max_buffers = std::uint32_t(number(optarg, 1 << 20));
			break;
		case 'M':
			o.lim.max_context_bytes = number(optarg, 1 << 20) << 20;
			break;
		case 'I':
			o.lim.max_inflight = std::uint32_t(number(optarg, 1 << 16));
			break;
		case 'j':
			o.json = true;
			break;
		case 'h':
			usage(0);
		default:
			usage(2);
		}
	}
	if (optind != argc - 1)
		usage(2);
	o.cmd = argv[optind];
	if ((o.cmd != "serve" && o.cmd != "info") || o.name.empty() ||
	    (o.json && o.cmd != "info"))
		usage(2);
	return o;
}

} // namespace

int main(int argc, char **argv)
{
	options o = parse(argc, argv);
	std::string why;
	auto be = gpud::make_backend(o.backend, why);

	if (!be) {
		std::fprintf(stderr, "fractos-gpud: backend %s: %s (%s)\n", o.backend.c_str(),
			     be.error().message().c_str(), why.c_str());
		return be.error() == errno_code(EINVAL) ? 2 : 1;
	}
	if (o.cmd == "info") {
		if (o.json)
			std::printf("%s\n", nlohmann::json{{"backend", (*be)->name()},
							   {"device", (*be)->describe()}}
						    .dump()
						    .c_str());
		else
			std::printf("%s\n", (*be)->describe().c_str());
		return 0;
	}
	auto sp = space::open();
	if (!sp) {
		std::fprintf(stderr, "fractos-gpud: %s: %s\n", FRACTOS_DEVICE,
			     sp.error().message().c_str());
		return 1;
	}
	gpud::service svc(*sp, std::move(*be), o.lim);
	if (auto r = svc.publish(o.name, o.world ? FRACTOS_NAME_WORLD : 0); !r) {
		std::fprintf(stderr, "fractos-gpud: publish %s: %s\n", o.name.c_str(),
			     r.error().message().c_str());
		return 1;
	}
	std::printf("fractos-gpud: serving %s (backend %s)\n", o.name.c_str(),
		    svc.device().describe().c_str());
	std::fflush(stdout);
	auto r = svc.run();
	std::fprintf(stderr, "fractos-gpud: %s\n", r ? "stopped" : r.error().message().c_str());
	return 1;
}
