// SPDX-License-Identifier: 0BSD
/*
 * Your first fractos service: it publishes a Request under a name, and for
 * every invocation it answers through the continuation the client sent,
 * with the client's text in capitals.  Copy it into your own code: it is
 * under the 0BSD licence (no conditions at all), unlike the rest of the
 * tree.
 *
 *   hello-service [NAME]        serve until killed, or until asked to stop
 *                               (an invocation without a continuation)
 *
 * The protocol, all of it:
 *   invoke: immediates = the text; capability 0 = the reply Request
 *   reply:  the reply Request is invoked with the text in capitals
 */
#include <caladan/caladan.hpp>

#include <cctype>
#include <cstdio>
#include <string>

using namespace caladan;

static int fail(const char *what, std::error_code ec)
{
	std::fprintf(stderr, "hello-service: %s: %s\n", what, ec.message().c_str());
	return 1;
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "hello";

	auto sp = space::open();
	if (!sp)
		return fail("open /dev/fractos", sp.error());
	// The service's Request: invocations arrive in this space's queue.
	auto svc = sp->request().set_tag(1).create();
	if (!svc)
		return fail("create the Request", svc.error());
	// Clients with our uid find it by name (FRACTOS_NAME_WORLD: everyone).
	if (auto r = name_publish(*svc, name); !r)
		return fail("publish", r.error());
	std::printf("hello-service: serving as \"%s\"\n", name);
	std::fflush(stdout);

	for (;;) {
		auto m = sp->receive();
		if (!m)
			return fail("receive", m.error());
		if (m->caps.empty())
			break; // no continuation: the stop request
		std::string text(m->imm_string());
		for (char &c : text)
			c = char(std::toupper(static_cast<unsigned char>(c)));
		// The answer goes wherever the client said: its continuation.
		if (auto r = sp->request(m->caps[0]).set_imm(std::string_view(text)).invoke(); !r)
			std::fprintf(stderr, "hello-service: reply: %s\n", r.error().message().c_str());
		// m's capabilities are closed when m goes: nothing to free.
	}
	return 0;
}
