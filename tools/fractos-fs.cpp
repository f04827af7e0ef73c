// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fractos-fs: a person's client of the file-system service (fractos-fsd),
 * on libcaladan's caladan/fs.hpp.
 *
 *   fractos-fs [OPTIONS] ls
 *   fractos-fs [OPTIONS] stat NAME
 *   fractos-fs [OPTIONS] put LOCAL NAME    LOCAL ("-": stdin) becomes NAME
 *   fractos-fs [OPTIONS] get NAME LOCAL    NAME into LOCAL ("-": stdout)
 *   fractos-fs [OPTIONS] rm NAME
 *   fractos-fs [OPTIONS] fsck              the daemon checks its metadata
 *
 * Options: -s SERVICE (the service's name, default fs0), -n NODE (it is
 * published on that node), -d (DAX: put and get go straight to the
 * device through the volume Requests the daemon hands out, not through
 * the daemon), -j (JSON output, one object or array).  The output of
 * JSON uses nlohmann::json (Debian's nlohmann-json3-dev): a maintained
 * encoder that gets escaping right, rather than one more of our own.
 * Exit status: 0, 1 on an error (fsck: problems found), 2 on usage.
 */
#include <caladan/fs.hpp>

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <getopt.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace caladan;
using json = nlohmann::json;

namespace {

constexpr std::chrono::seconds kTimeout{60};
/* DAX I/O is aligned to this (a multiple of every logical block size). */
constexpr std::uint64_t kAlign = 4096;

struct options {
	std::string service = "fs0";
	std::uint32_t node = 0;
	bool dax = false, json = false;
};

[[noreturn]] void usage(int rc)
{
	std::fprintf(rc ? stderr : stdout,
		     "usage: fractos-fs [-s SERVICE] [-n NODE] [-d] [-j] ls | stat NAME |\n"
		     "                  put LOCAL NAME | get NAME LOCAL | rm NAME | fsck\n");
	std::exit(rc);
}

int fail(const std::string &what, std::error_code ec)
{
	std::fprintf(stderr, "fractos-fs: %s: %s\n", what.c_str(), describe(ec).c_str());
	return 1;
}

/* An anonymous buffer and its Memory capability. */
struct buffer {
	void *p = MAP_FAILED;
	std::size_t len = 0;
	cap mem;

	~buffer()
	{
		mem = cap();
		if (p != MAP_FAILED)
			munmap(p, len);
	}
	result<void> make(const space &sp, std::size_t n)
	{
		len = n;
		p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return last_error();
		auto m = memory_create(sp, p, n, perm::all);
		if (!m)
			return m.error();
		mem = std::move(*m);
		return {};
	}
	char *data() const { return static_cast<char *>(p); }
};

/* Reads up to @n bytes (fewer only at the end of the file). */
result<std::size_t> read_full(int fd, char *p, std::size_t n)
{
	std::size_t got = 0;

	while (got < n) {
		ssize_t r = ::read(fd, p + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return last_error();
		if (!r)
			break;
		got += std::size_t(r);
	}
	return got;
}

result<void> write_full(int fd, const char *p, std::size_t n)
{
	while (n) {
		ssize_t r = ::write(fd, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return last_error();
		p += r;
		n -= std::size_t(r);
	}
	return {};
}

double since(std::chrono::steady_clock::time_point t0)
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void print_stat(const options &o, const std::string &name, const fs::file_stat &st)
{
	if (o.json) {
		std::printf("%s\n", json{{"name", name},
					 {"size", st.size},
					 {"capacity", st.capacity},
					 {"extents", st.nextents},
					 {"mtime_ns", st.mtime_ns}}
					    .dump()
					    .c_str());
		return;
	}
	std::printf("%s: %llu bytes, %u extents (%llu bytes)\n", name.c_str(),
		    static_cast<unsigned long long>(st.size), st.nextents,
		    static_cast<unsigned long long>(st.capacity));
}

void print_io(const options &o, const char *what, std::uint64_t bytes, double secs)
{
	if (o.json)
		std::printf("%s\n", json{{"op", what},
					 {"bytes", bytes},
					 {"mode", o.dax ? "dax" : "fs"},
					 {"seconds", secs}}
					    .dump()
					    .c_str());
	else
		std::fprintf(stderr, "%s %llu bytes (%s mode) in %.3f s\n", what,
			     static_cast<unsigned long long>(bytes), o.dax ? "DAX" : "FS", secs);
}

int cmd_put(const space &sp, const fs::client &svc, const options &o, const char *local,
	    const std::string &name)
{
	int fd = std::strcmp(local, "-") ? ::open(local, O_RDONLY | O_CLOEXEC) : 0;
	if (fd < 0)
		return fail(local, last_error());
	struct fd_closer {
		int fd;
		~fd_closer()
		{
			if (fd > 0)
				::close(fd);
		}
	} closer{fd};

	auto c = svc.create(sp, name, kTimeout);
	if (!c && c.error() != errno_code(EEXIST))
		return fail("create " + name, c.error());
	std::uint32_t flags = fs::open_write | (o.dax ? fs::open_dax : 0);
	/* DAX: the capacity up front (the extents come with the open). */
	std::uint64_t reserve = 0;
	struct stat st;
	if (o.dax) {
		if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
			std::fprintf(stderr, "fractos-fs: put -d needs a regular file (its size "
					     "is reserved up front)\n");
			return 1;
		}
		reserve = (std::uint64_t(st.st_size) + kAlign - 1) / kAlign * kAlign;
	}
	auto f = svc.open(sp, name, flags, reserve, kTimeout);
	if (!f)
		return fail("open " + name, f.error());
	buffer b;
	auto r = b.make(sp, fs::max_io);
	if (!r)
		return fail("buffer", r.error());

	auto t0 = std::chrono::steady_clock::now();
	std::uint64_t off = 0;
	for (;;) {
		auto n = read_full(fd, b.data(), b.len);
		if (!n)
			return fail(local, n.error());
		if (!*n)
			break;
		std::uint64_t len = *n;
		if (o.dax) {
			/* Whole blocks; the size says where the file ends. */
			std::uint64_t al = (len + kAlign - 1) / kAlign * kAlign;
			std::memset(b.data() + len, 0, al - len);
			if (off + al > f->opened().capacity)
				return fail("write " + name, errno_code(EFBIG));
			len = al;
		}
		auto w = f->write(sp, b.mem, off, len, kTimeout);
		if (!w)
			return fail("write " + name, w.error());
		off += *n;
		if (*n < b.len)
			break;
	}
	auto s = f->resize(sp, off, kTimeout);
	if (!s)
		return fail("resize " + name, s.error());
	(void)f->close(sp, kTimeout);
	print_io(o, "put", off, since(t0));
	return 0;
}

int cmd_get(const space &sp, const fs::client &svc, const options &o, const std::string &name,
	    const char *local)
{
	auto f = svc.open(sp, name, o.dax ? fs::open_dax : 0, 0, kTimeout);
	if (!f)
		return fail("open " + name, f.error());
	int fd = std::strcmp(local, "-") ?
			 ::open(local, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : 1;
	if (fd < 0)
		return fail(local, last_error());
	struct fd_closer {
		int fd;
		~fd_closer()
		{
			if (fd > 1)
				::close(fd);
		}
	} closer{fd};
	buffer b;
	auto r = b.make(sp, fs::max_io);
	if (!r)
		return fail("buffer", r.error());

	auto t0 = std::chrono::steady_clock::now();
	std::uint64_t size = f->opened().size, off = 0;
	while (off < size) {
		std::uint64_t want = std::min<std::uint64_t>(size - off, b.len);
		if (o.dax)
			want = (want + kAlign - 1) / kAlign * kAlign;
		auto n = f->read(sp, b.mem, off, want, kTimeout);
		if (!n)
			return fail("read " + name, n.error());
		if (!*n)
			break;
		std::uint64_t keep = std::min<std::uint64_t>(*n, size - off);
		auto w = write_full(fd, b.data(), keep);
		if (!w)
			return fail(local, w.error());
		off += keep;
	}
	(void)f->close(sp, kTimeout);
	print_io(o, "get", off, since(t0));
	return 0;
}

} // namespace

int main(int argc, char **argv)
{
	options o;
	int c;

	while ((c = getopt(argc, argv, "+s:n:djh")) != -1) {
		switch (c) {
		case 's':
			o.service = optarg;
			break;
		case 'n': {
			char *end;
			unsigned long v = std::strtoul(optarg, &end, 0);
			if (*end || !v || v > UINT32_MAX)
				usage(2);
			o.node = std::uint32_t(v);
			break;
		}
		case 'd':
			o.dax = true;
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
	if (optind >= argc)
		usage(2);
	std::string cmd = argv[optind];
	int nargs = argc - optind - 1;
	char **args = argv + optind + 1;
	int want = cmd == "ls" || cmd == "fsck" ? 0 :
		   cmd == "stat" || cmd == "rm" ? 1 :
		   cmd == "put" || cmd == "get" ? 2 : -1;
	if (want < 0 || nargs != want)
		usage(2);

	auto sp = space::open();
	if (!sp)
		return fail("open " FRACTOS_DEVICE, sp.error());
	auto svc = fs::client::lookup(*sp, o.service, o.node);
	if (!svc)
		return fail("look up " + o.service, svc.error());

	if (cmd == "ls") {
		auto l = svc->list(*sp, kTimeout);
		if (!l)
			return fail("ls", l.error());
		json j = json::array();
		for (const fs::entry &e : *l) {
			if (o.json)
				j.push_back({{"name", e.name},
					     {"inode", e.inode},
					     {"size", e.size},
					     {"mtime_ns", e.mtime_ns}});
			else
				std::printf("%12llu  %s\n", static_cast<unsigned long long>(e.size),
					    e.name.c_str());
		}
		if (o.json)
			std::printf("%s\n", j.dump().c_str());
		return 0;
	}
	if (cmd == "stat") {
		auto s = svc->stat(*sp, args[0], kTimeout);
		if (!s)
			return fail(std::string("stat ") + args[0], s.error());
		print_stat(o, args[0], *s);
		return 0;
	}
	if (cmd == "rm") {
		auto r = svc->unlink(*sp, args[0], kTimeout);
		if (!r)
			return fail(std::string("rm ") + args[0], r.error());
		return 0;
	}
	if (cmd == "fsck") {
		auto n = svc->fsck(*sp, kTimeout);
		if (!n)
			return fail("fsck", n.error());
		if (o.json)
			std::printf("%s\n", json{{"problems", *n}}.dump().c_str());
		else
			std::printf("%llu problems\n", static_cast<unsigned long long>(*n));
		return *n ? 1 : 0;
	}
	if (cmd == "put")
		return cmd_put(*sp, *svc, o, args[0], args[1]);
	return cmd_get(*sp, *svc, o, args[0], args[1]);
}
