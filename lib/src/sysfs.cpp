// SPDX-License-Identifier: LGPL-2.1-or-later
// Reading the module's sysfs files.
#include <caladan/sysfs.hpp>

#include <cerrno>
#include <algorithm>
#include <charconv>
#include <dirent.h>
#include <memory>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace caladan::sysfs {

result<std::string> read_string(const std::string &path)
{
	unique_fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
	if (!fd)
		return last_error();

	std::string s;
	char buf[4096];
	for (;;) {
		ssize_t n = ::read(fd.get(), buf, sizeof(buf));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return last_error();
		}
		if (n == 0)
			break;
		s.append(buf, std::size_t(n));
	}
	while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
		s.pop_back();
	return s;
}

result<std::uint64_t> read_u64(const std::string &path)
{
	auto s = read_string(path);
	if (!s)
		return s.error();
	std::uint64_t v = 0;
	const char *b = s->data(), *e = b + s->size();
	auto [p, ec] = std::from_chars(b, e, v);
	if (ec != std::errc() || p != e || b == e)
		return errno_code(EINVAL);
	return v;
}

bool module_loaded(const char *dir) noexcept
{
	struct stat st;
	return ::stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
}

result<std::string> module_version(const char *dir)
{
	return read_string(std::string(dir) + "/version");
}

result<std::uint64_t> module_param(const std::string &name, const char *dir)
{
	return read_u64(std::string(dir) + "/parameters/" + name);
}

result<std::vector<std::pair<std::string, std::string>>> module_params(const char *dir)
{
	const std::string pdir = std::string(dir) + "/parameters";
	std::unique_ptr<DIR, int (*)(DIR *)> d(::opendir(pdir.c_str()), ::closedir);
	if (!d)
		return last_error();
	std::vector<std::pair<std::string, std::string>> out;
	for (;;) {
		errno = 0;
		dirent *e = ::readdir(d.get());
		if (!e) {
			if (errno)
				return last_error();
			break;
		}
		std::string name = e->d_name;
		if (name == "." || name == "..")
			continue;
		auto v = read_string(pdir + "/" + name);
		if (!v)
			return v.error();
		out.emplace_back(std::move(name), std::move(*v));
	}
	std::sort(out.begin(), out.end());
	return out;
}

result<live_counters> read_live_counters(const char *dir)
{
	live_counters out;
	for (const auto &f : live_counter_fields) {
		auto v = read_u64(std::string(dir) + "/" + f.name);
		if (!v)
			return v.error();
		out.*f.field = *v;
	}
	return out;
}

} // namespace caladan::sysfs
