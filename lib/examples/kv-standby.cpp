// SPDX-License-Identifier: 0BSD
/*
 * The key-value example's standby: it offers a contact Request (NAME) and
 * a hand-over inbox (NAME.handover), and waits for the primary's table:
 * stolen from a killed primary (a contact note with a Memory capability)
 * or granted by one that steps down.  It maps the very pages it got and
 * serves them: here, it prints the table.
 *
 *   kv-standby NAME     wait for one takeover, print the table, exit
 */
#include "kv-table.hpp"

#include <caladan/caladan.hpp>

#include <cstdio>
#include <string>

using namespace caladan;

static int fail(const char *what, std::error_code ec)
{
	std::fprintf(stderr, "kv-standby: %s: %s\n", what, ec.message().c_str());
	return 1;
}

int main(int argc, char **argv)
{
	const std::string name = argc > 1 ? argv[1] : "kv";

	auto sp = space::open();
	if (!sp)
		return fail("open /dev/fractos", sp.error());
	auto contact = sp->request().set_tag(kv::tag_contact).create();
	auto inbox = sp->request().set_tag(kv::tag_handover).create();
	if (!contact || !inbox)
		return fail("create the Requests", (contact ? inbox : contact).error());
	if (auto r = name_publish(*contact, name); !r)
		return fail("publish", r.error());
	if (auto r = name_publish(*inbox, name + ".handover"); !r)
		return fail("publish", r.error());
	std::printf("kv-standby: waiting as \"%s\"\n", name.c_str());
	std::fflush(stdout);

	for (;;) {
		auto m = sp->receive();
		if (!m)
			return fail("receive", m.error());
		const char *how = m->tag == kv::tag_handover ? "grant" : "steal";
		if (m->tag == kv::tag_contact) {
			auto note = m->imm<fractos_contact_note>();
			if (!note)
				continue;
			std::printf("kv-standby: the primary is gone (%s, signal %u)\n",
				    note->reason == FRACTOS_CONTACT_KILLED ? "killed" :
				    note->reason == FRACTOS_CONTACT_NODE_LOST ? "node lost" :
				    "closed",
				    note->signal);
			if (!note->stolen)
				continue; // closed on purpose: a hand-over follows
		}
		if (m->caps.empty())
			continue;
		// The table's pages, now ours: map them, no copy.
		auto map = memory_map(m->caps.back(), kv::table_bytes);
		if (!map)
			return fail("memory_map", map.error());
		const auto *t = static_cast<const kv::table *>(map->data());
		if (t->magic != kv::magic)
			return fail("not a table", std::make_error_code(std::errc::bad_message));
		std::printf("kv-standby: took the table over by %s: %u keys\n", how, t->count);
		for (std::uint32_t i = 0; i < t->count; i++)
			std::printf("kv-standby:   %s=%s\n", t->slots[i].key, t->slots[i].value);
		return 0;
	}
}
