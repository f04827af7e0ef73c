// SPDX-License-Identifier: 0BSD
/*
 * The client of hello-service: looks the service up by name, sends it a
 * text and a continuation (a Request of its own), and prints the answer
 * that arrives through it.  0BSD: copy it freely.
 *
 *   hello-client TEXT [NAME [NODE]]   NODE: the service runs on that node
 *   hello-client --stop [NAME]        ask the service to stop
 */
#include <caladan/caladan.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace caladan;
using namespace std::chrono_literals;

static int fail(const char *what, std::error_code ec)
{
	std::fprintf(stderr, "hello-client: %s: %s\n", what, ec.message().c_str());
	return 1;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		std::fprintf(stderr, "usage: hello-client TEXT [NAME [NODE]] | --stop [NAME]\n");
		return 2;
	}
	bool stop = !std::strcmp(argv[1], "--stop");
	const char *name = argc > 2 ? argv[2] : "hello";
	std::uint32_t node = argc > 3 ? std::uint32_t(std::strtoul(argv[3], nullptr, 10)) : 0;

	auto sp = space::open();
	if (!sp)
		return fail("open /dev/fractos", sp.error());
	auto svc = argc > 3 ? name_lookup(*sp, name, FRACTOS_NAME_NODE, node)
			    : name_lookup(*sp, name);
	if (!svc)
		return fail("look the service up", svc.error());
	if (stop)
		return sp->request(*svc).invoke() ? 0 : 1;

	// The continuation: a Request of ours; the service invokes it.
	auto reply = sp->request().set_tag(2).create();
	if (!reply)
		return fail("create the reply Request", reply.error());
	if (auto r = sp->request(*svc).set_imm(std::string_view(argv[1])).set_cap(*reply).invoke();
	    !r)
		return fail("invoke", r.error());
	auto m = sp->receive(5s);
	if (!m)
		return fail("wait for the answer", m.error());
	std::printf("%.*s\n", int(m->imm_string().size()), m->imm_string().data());
	return 0;
}
