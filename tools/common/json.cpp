// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The tools' JSON writer (libftools): json_writer's members.
 */
#include "json.hpp"

#include <cstdio>

namespace ftools {

json_writer::json_writer(top t)
{
	out_.push_back(t == top::array ? '[' : '{');
	stack_.push_back({t == top::array, true});
}

void json_writer::begin(std::string_view key)
{
	this->key(key);
	out_ += '{';
	stack_.push_back({false, true});
}

void json_writer::begin_array(std::string_view key)
{
	this->key(key);
	out_ += '[';
	stack_.push_back({true, true});
}

void json_writer::end()
{
	out_ += stack_.back().array ? ']' : '}';
	stack_.pop_back();
}

void json_writer::str(std::string_view key, std::string_view v)
{
	this->key(key);
	quote(v);
}

void json_writer::num(std::string_view key, std::uint64_t v)
{
	this->key(key);
	out_ += std::to_string(v);
}

void json_writer::raw(std::string_view key, std::string_view v)
{
	this->key(key);
	out_ += v;
}

void json_writer::boolean(std::string_view key, bool v)
{
	this->key(key);
	out_ += v ? "true" : "false";
}

std::string json_writer::finish()
{
	while (!stack_.empty())
		end();
	return out_;
}

void json_writer::key(std::string_view k)
{
	if (!stack_.back().first)
		out_ += ',';
	stack_.back().first = false;
	if (stack_.back().array)
		return;
	quote(k);
	out_ += ':';
}

void json_writer::quote(std::string_view s)
{
	out_ += '"';
	for (unsigned char c : s) {
		if (c == '"' || c == '\\') {
			out_ += '\\';
			out_ += char(c);
		} else if (c < 0x20) {
			char buf[8];
			std::snprintf(buf, sizeof(buf), "\\u%04x", c);
			out_ += buf;
		} else {
			out_ += char(c);
		}
	}
	out_ += '"';
}

} // namespace ftools
