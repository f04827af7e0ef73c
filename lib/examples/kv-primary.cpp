// SPDX-License-Identifier: 0BSD
/*
 * The key-value example's primary: its table lives in pages of its own,
 * marked stealable for the standby, which it names as its contact.  If the
 * primary is killed, the standby takes the very pages over (steal); if it
 * steps down, it hands them over (grant).  Either way, nothing is copied.
 *
 *   kv-primary NAME crash KEY=VALUE...     fill the table, then die by SIGKILL
 *   kv-primary NAME handover KEY=VALUE...  fill it, then grant it and exit
 *
 * NAME is the standby's (kv-standby NAME): NAME is its contact Request,
 * NAME.handover its hand-over inbox.
 */
#include "kv-table.hpp"

#include <caladan/caladan.hpp>

#include <csignal>
#include <cstdio>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

using namespace caladan;

static int fail(const char *what, std::error_code ec)
{
	std::fprintf(stderr, "kv-primary: %s: %s\n", what, ec.message().c_str());
	return 1;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		std::fprintf(stderr, "usage: kv-primary NAME {crash|handover} KEY=VALUE...\n");
		return 2;
	}
	const std::string name = argv[1], how = argv[2];

	auto sp = space::open();
	if (!sp)
		return fail("open /dev/fractos", sp.error());
	// Whole pages: what changes hands is pages.
	void *pages = ::mmap(nullptr, kv::table_bytes, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pages == MAP_FAILED)
		return fail("mmap", std::error_code(errno, std::generic_category()));
	auto *t = static_cast<kv::table *>(pages);
	t->magic = kv::magic;
	auto mem = memory_create(*sp, pages, kv::table_bytes, perm::all);
	if (!mem)
		return fail("memory_create", mem.error());

	// The standby is our contact; the table is its to take if we are killed.
	auto contact = name_lookup(*sp, name);
	if (!contact)
		return fail(("lookup " + name).c_str(), contact.error());
	auto id = sp->add_contact(*contact);
	if (!id)
		return fail("add_contact", id.error());
	if (auto r = sp->mark_stealable(*id, *mem); !r)
		return fail("mark_stealable", r.error());

	for (int i = 3; i < argc; i++) {
		std::string_view kv = argv[i];
		auto eq = kv.find('=');
		if (eq == kv.npos || !t->put(kv.substr(0, eq), kv.substr(eq + 1)))
			std::fprintf(stderr, "kv-primary: skipped \"%s\"\n", argv[i]);
	}
	std::printf("kv-primary: %u keys\n", t->count);
	std::fflush(stdout);

	if (how == "crash") {
		// As a crash would: no goodbye, the kernel tells the contact.
		::raise(SIGKILL);
	}
	// Stepping down: hand the pages over, and leave without a note.
	auto inbox = name_lookup(*sp, name + ".handover");
	if (!inbox)
		return fail("lookup the hand-over inbox", inbox.error());
	if (auto r = memory_grant(*mem, *inbox); !r)
		return fail("memory_grant", r.error());
	if (auto r = sp->remove_contact(*id); !r)
		return fail("remove_contact", r.error());
	std::printf("kv-primary: handed the table over\n");
	return 0;
}
