/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The tools' JSON writer (libftools): one top-level object or array,
 * nested objects and arrays, strings, numbers and booleans.
 */
#ifndef FTOOLS_JSON_HPP
#define FTOOLS_JSON_HPP

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ftools {

/*
 * A minimal JSON writer: one top-level object or array, nested objects and
 * arrays, strings, numbers and booleans.  Keys are ignored inside arrays.
 */
class json_writer {
public:
	enum class top { object, array };

	explicit json_writer(top t = top::object);

	void begin(std::string_view key = {});
	void begin_array(std::string_view key = {});
	void end();
	void str(std::string_view key, std::string_view v);
	void num(std::string_view key, std::uint64_t v);
	/* @p v must be valid JSON (e.g. a number). */
	void raw(std::string_view key, std::string_view v);
	void boolean(std::string_view key, bool v);
	std::string finish();

private:
	struct level {
		bool array;
		bool first;
	};

	void key(std::string_view k);
	void quote(std::string_view s);

	std::string out_;
	std::vector<level> stack_;
};

} // namespace ftools

#endif /* FTOOLS_JSON_HPP */
