// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fractos-demo: three processes on one node share memory through
 * capabilities, using libcaladan.
 *
 *   1. A makes a Memory object over "hello from A", narrows it to a
 *      read-only view, wraps that in a revocation-tree child and sends it to
 *      B as a capability fd (SCM_RIGHTS).  B imports it and reads it by
 *      copying into its own Memory; writing into it fails (EACCES).
 *   2. Third-party copy: B and C each send A a capability to Memory they
 *      own; A copies from C's into B's, owning neither.
 *   3. A revokes the view B was given: B's next copy fails (EKEYREVOKED)
 *      while A's own object is untouched.
 *   4. C exits: the objects it created are revoked with its space, and
 *      A's capability to C's object fails (EKEYREVOKED).
 *
 * The processes run in lock-step over SOCK_SEQPACKET socketpairs: A sends
 * a command, the other side does its step, prints, and replies.  Only the
 * process whose turn it is prints, so the output reads in order.
 * Exit status 0 only if every step behaved as expected.
 */
#include <caladan/caladan.hpp>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using namespace caladan;

constexpr std::size_t buf_size = 4096;
constexpr std::uint64_t view_len = 32; // bytes of a buffer shared as a view
constexpr unsigned timeout_s = 30;

/* ---- output --------------------------------------------------------- */

void out(const std::string &s)
{
	std::string line = s + "\n";
	/* One write(2) per line: the processes share stdout. */
	if (::write(STDOUT_FILENO, line.data(), line.size()) < 0)
		return;
}

void say(char who, const std::string &s)
{
	out(std::string("  [") + who + "] " + s);
}

void heading(const std::string &s)
{
	out("\n" + s);
}

std::string quoted(const char *p)
{
	return "\"" + std::string(p, ::strnlen(p, view_len)) + "\"";
}

std::string yesno(bool b)
{
	return b ? "yes" : "no";
}

/* ---- a page of memory to back a Memory object ------------------------ */

class page {
public:
	page()
		: p_(::mmap(nullptr, buf_size, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))
	{
	}
	~page()
	{
		if (p_ != MAP_FAILED)
			::munmap(p_, buf_size);
	}
	page(const page &) = delete;
	page &operator=(const page &) = delete;

	explicit operator bool() const { return p_ != MAP_FAILED; }
	char *data() const { return static_cast<char *>(p_); }

private:
	void *p_;
};

/* ---- one process's view of the story --------------------------------- */

/* Checks and reports: every failed check is printed and remembered. */
class actor {
public:
	explicit actor(char name) : name_(name) {}

	char name() const { return name_; }
	bool ok() const { return ok_; }

	void say(const std::string &s) const { ::say(name_, s); }

	/* False (and printed) if @p cond does not hold. */
	bool check(bool cond, const std::string &what)
	{
		if (!cond) {
			say("UNEXPECTED: " + what);
			ok_ = false;
		}
		return cond;
	}

	/* The value of @p r, or a printed failure. */
	template <class T>
	bool got(const result<T> &r, const std::string &what)
	{
		return check(r.has_value(), what + " failed: " + describe(r.error()));
	}

	/* @p r must have failed with @p err. */
	template <class T>
	bool failed_with(const result<T> &r, int err, const std::string &what)
	{
		if (r.has_value())
			return check(false, what + " succeeded, expected " + errno_name(err));
		return check(r.error() == errno_code(err),
			     what + " failed with " + describe(r.error()) + ", expected " +
				     errno_name(err));
	}

	/* Sends @p tag, with @p fd attached if >= 0. */
	bool send(int sock, std::string_view tag, int fd = -1)
	{
		if (fd >= 0)
			return got(send_fd(sock, fd, tag), "sending " + std::string(tag));
		if (::send(sock, tag.data(), tag.size(), MSG_NOSIGNAL) == ssize_t(tag.size()))
			return true;
		return check(false, "sending " + std::string(tag) + ": " + describe(last_error()));
	}

	/* Receives a message that must be @p tag. */
	bool expect(int sock, std::string_view tag, received_fd *msg = nullptr)
	{
		auto r = recv_fd(sock);
		if (!r)
			return check(false, "waiting for \"" + std::string(tag) +
						    "\": " + describe(r.error()));
		if (!check(r->data == tag, "got \"" + r->data + "\", expected \"" +
						   std::string(tag) + "\""))
			return false;
		if (msg)
			*msg = std::move(*r);
		return true;
	}

private:
	char name_;
	bool ok_ = true;
};

std::string describe_cap(const cap_info &i)
{
	return "rights " + to_string(i.perms) + ", view " + std::to_string(i.offset) + "+" +
	       std::to_string(i.len) + ", object " + to_string(i.oid) + ", owned by me: " +
	       yesno(i.owned()) + ", revoked: " + yesno(i.revoked());
}

/* Opens this process's own space. */
result<space> open_space(actor &me)
{
	auto sp = space::open();
	me.got(sp, "opening " FRACTOS_DEVICE);
	return sp;
}

/* ---- B: receives a read-only view, lends its own buffer --------------- */

int run_b(int sock)
{
	actor me('B');
	page buf;
	auto sp = open_space(me);
	if (!sp || !me.check(bool(buf), "mmap"))
		return 1;
	auto mine = memory_create(*sp, buf.data(), buf_size, perm::all);
	if (!me.got(mine, "memory_create"))
		return 1;

	/* Step 1: import A's view and read it. */
	received_fd msg;
	if (!me.expect(sock, "view", &msg))
		return 1;
	auto view = import_fd(*sp, msg.fd.get());
	if (!me.got(view, "import_fd"))
		return 1;
	msg.fd.reset();
	auto vi = view->info();
	if (!me.got(vi, "cap_info"))
		return 1;
	me.say("imported the fd as cid " + std::to_string(view->cid()) + ": " +
	       describe_cap(*vi));
	me.check(vi->perms == perm::read && !vi->owned(), "the view should be read-only, not mine");

	auto n = memory_copy(*sp, *view, *mine);
	if (me.got(n, "memory_copy from A's view")) {
		me.say("copied " + std::to_string(*n) + " bytes from A's view into my own Memory: " +
		       quoted(buf.data()));
		me.check(*n == view_len && std::strcmp(buf.data(), "hello from A") == 0,
			 "expected 32 bytes of \"hello from A\"");
	}
	auto w = memory_copy(*sp, *mine, *view);
	if (me.failed_with(w, EACCES, "writing into A's read-only view"))
		me.say("writing into A's read-only view is refused: " + describe(w.error()));
	if (!me.send(sock, me.ok() ? "ok" : "fail"))
		return 1;

	/* Step 2: lend A my buffer, then look at what landed in it. */
	if (!me.expect(sock, "inbox?"))
		return 1;
	auto fd = mine->export_fd();
	if (!me.got(fd, "export_fd"))
		return 1;
	me.say("exported my Memory (" + to_string(mine->info().value_or(cap_info{}).oid) +
	       ", rw) as an fd and sent it to A");
	if (!me.send(sock, "inbox", fd->get()))
		return 1;
	fd->reset();

	if (!me.expect(sock, "check"))
		return 1;
	me.say("my buffer now reads " + quoted(buf.data()) + " (I did not write it)");
	me.check(std::strcmp(buf.data(), "greetings from C") == 0,
		 "expected \"greetings from C\"");
	if (!me.send(sock, me.ok() ? "ok" : "fail"))
		return 1;

	/* Step 3: A has revoked the view. */
	if (!me.expect(sock, "revoked"))
		return 1;
	auto again = memory_copy(*sp, *view, *mine);
	if (me.failed_with(again, EKEYREVOKED, "copying from A's revoked view"))
		me.say("copying from A's view again fails: " + describe(again.error()));
	auto ri = view->info();
	if (me.got(ri, "cap_info")) {
		me.say("cap_info still works on it and says revoked: " + yesno(ri->revoked()));
		me.check(ri->revoked(), "cap_info should report the view revoked");
	}
	if (!me.send(sock, me.ok() ? "ok" : "fail"))
		return 1;

	if (!me.expect(sock, "bye"))
		return 1;
	return me.ok() ? 0 : 1;
}

/* ---- C: lends a read-only view of its buffer, then exits --------------- */

int run_c(int sock)
{
	actor me('C');
	page buf;
	if (!me.expect(sock, "object?"))
		return 1;
	auto sp = open_space(me);
	if (!sp || !me.check(bool(buf), "mmap"))
		return 1;
	std::strcpy(buf.data(), "greetings from C");
	auto mem = memory_create(*sp, buf.data(), buf_size, perm::all);
	if (!me.got(mem, "memory_create"))
		return 1;
	auto ro = memory_diminish(*mem, 0, view_len, perm::write);
	if (!me.got(ro, "memory_diminish"))
		return 1;
	auto fd = ro->export_fd();
	if (!me.got(fd, "export_fd"))
		return 1;
	me.say("created Memory " + to_string(mem->info().value_or(cap_info{}).oid) + " over " +
	       quoted(buf.data()) + ", sent A a read-only view of its first " +
	       std::to_string(view_len) + " bytes");
	if (!me.send(sock, "object", fd->get()))
		return 1;
	fd->reset();

	if (!me.expect(sock, "bye"))
		return 1;
	me.say("exiting: my space goes away and the objects I created are revoked");
	if (!me.send(sock, "bye"))
		return 1;
	return me.ok() ? 0 : 1;
}

/* ---- A: the narrator ------------------------------------------------- */

bool run_a(actor &me, int sock_b, int sock_c, pid_t pid_c)
{
	page buf;
	auto sp = open_space(me);
	if (!sp || !me.check(bool(buf), "mmap"))
		return false;

	heading("1. Sharing a read-only view");
	std::strcpy(buf.data(), "hello from A");
	auto mem = memory_create(*sp, buf.data(), buf_size, perm::all);
	if (!me.got(mem, "memory_create"))
		return false;
	auto mi = mem->info();
	if (!me.got(mi, "cap_info"))
		return false;
	me.say("created Memory " + to_string(mi->oid) + " over my buffer " + quoted(buf.data()) +
	       ": " + describe_cap(*mi));

	auto ro = memory_diminish(*mem, 0, view_len, perm::write);
	if (!me.got(ro, "memory_diminish"))
		return false;
	auto view = ro->create_revtree();
	if (!me.got(view, "create_revtree"))
		return false;
	auto vi = view->info();
	if (!me.got(vi, "cap_info"))
		return false;
	me.say("diminished it to a read-only view of bytes [0, " + std::to_string(view_len) +
	       "), and made that a revocation-tree child " + to_string(vi->oid) +
	       " so that B's access can be revoked alone");
	auto fd = view->export_fd();
	if (!me.got(fd, "export_fd"))
		return false;
	me.say("exported the child as fd " + std::to_string(fd->get()) +
	       " and sent it to B over a unix socket (SCM_RIGHTS)");
	if (!me.send(sock_b, "view", fd->get()))
		return false;
	fd->reset();
	if (!me.expect(sock_b, "ok"))
		return false;

	heading("2. Third-party copy");
	received_fd from_b, from_c;
	if (!me.send(sock_b, "inbox?") || !me.expect(sock_b, "inbox", &from_b))
		return false;
	if (!me.send(sock_c, "object?") || !me.expect(sock_c, "object", &from_c))
		return false;
	auto b_obj = import_fd(*sp, from_b.fd.get());
	auto c_obj = import_fd(*sp, from_c.fd.get());
	if (!me.got(b_obj, "import_fd (B)") || !me.got(c_obj, "import_fd (C)"))
		return false;
	from_b.fd.reset();
	from_c.fd.reset();
	auto bi = b_obj->info();
	auto ci = c_obj->info();
	if (!me.got(bi, "cap_info (B)") || !me.got(ci, "cap_info (C)"))
		return false;
	me.say("imported B's: " + describe_cap(*bi));
	me.say("imported C's: " + describe_cap(*ci));
	me.check(!bi->owned() && !ci->owned(), "A should own neither object");

	auto n = memory_copy(*sp, *c_obj, *b_obj);
	if (!me.got(n, "memory_copy C -> B"))
		return false;
	me.say("copied " + std::to_string(*n) + " bytes from C's object into B's object");
	me.check(*n == view_len, "expected a 32-byte copy");
	if (!me.send(sock_b, "check") || !me.expect(sock_b, "ok"))
		return false;

	heading("3. Revocation");
	if (!me.got(view->revoke(), "cap_revoke"))
		return false;
	auto after = mem->info();
	if (!me.got(after, "cap_info"))
		return false;
	me.say("revoked the child " + to_string(vi->oid) + " that B holds; my own Memory " +
	       to_string(after->oid) + " is untouched (revoked: " + yesno(after->revoked()) + ")");
	me.check(!after->revoked(), "A's own Memory should not be revoked");
	if (!me.send(sock_b, "revoked") || !me.expect(sock_b, "ok"))
		return false;

	heading("4. A space going away revokes what it created");
	if (!me.send(sock_c, "bye") || !me.expect(sock_c, "bye"))
		return false;
	int status = 0;
	if (!me.check(::waitpid(pid_c, &status, 0) == pid_c, "waitpid(C)"))
		return false;
	me.check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "C did not exit cleanly");
	auto stale = memory_copy(*sp, *c_obj, *b_obj);
	if (me.failed_with(stale, EKEYREVOKED, "copying from C's object after C exited"))
		me.say("C has exited; copying from its object now fails: " +
		       describe(stale.error()));

	return me.send(sock_b, "bye") && me.ok();
}

/* ---- processes -------------------------------------------------------- */

struct channel {
	unique_fd a, other;

	static result<channel> make()
	{
		int sv[2];
		if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
			return last_error();
		return channel{unique_fd(sv[0]), unique_fd(sv[1])};
	}
};

/* Forks a child running @p fn on its end of @p ch; closes the rest. */
template <class Fn>
pid_t spawn(channel &ch, channel *unrelated, Fn fn)
{
	pid_t pid = ::fork();
	if (pid == 0) {
		ch.a.reset();
		if (unrelated) {
			unrelated->a.reset();
			unrelated->other.reset();
		}
		::_exit(fn(ch.other.get()));
	}
	ch.other.reset();
	return pid;
}

bool reap(actor &me, pid_t pid, char who)
{
	int status = 0;
	if (::waitpid(pid, &status, 0) != pid)
		return me.check(false, std::string("waitpid(") + who + ")");
	if (WIFSIGNALED(status))
		return me.check(false, std::string(1, who) + " was killed by signal " +
					       std::to_string(WTERMSIG(status)));
	return me.check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			std::string(1, who) + " exited with status " +
				std::to_string(WEXITSTATUS(status)));
}

} // namespace

int main(int argc, char **)
{
	if (argc > 1) {
		std::fprintf(stderr, "usage: fractos-demo\n");
		return 1;
	}
	::alarm(timeout_s); /* a watchdog; fork() does not inherit it, children set their own */

	{
		/* Check the device before starting anything, and introduce the node. */
		auto probe = space::open();
		if (!probe) {
			std::fprintf(stderr, "fractos-demo: cannot open %s: %s (is the module loaded?)\n",
				     FRACTOS_DEVICE, describe(probe.error()).c_str());
			return 1;
		}
		auto info = probe->info();
		if (!info) {
			std::fprintf(stderr, "fractos-demo: space_info: %s\n",
				     describe(info.error()).c_str());
			return 1;
		}
		out("fractos demo: processes A, B and C on node " + std::to_string(info->node) +
		    " (epoch " + std::to_string(info->epoch) + "), each with its own space");
	}

	auto ab = channel::make();
	auto ac = channel::make();
	if (!ab || !ac) {
		std::fprintf(stderr, "fractos-demo: socketpair: %s\n",
			     describe(ab ? ac.error() : ab.error()).c_str());
		return 1;
	}

	actor a('A');
	auto child = [](int (*fn)(int)) {
		return [fn](int sock) {
			::alarm(timeout_s);
			return fn(sock);
		};
	};
	pid_t pid_b = spawn(*ab, &*ac, child(run_b));
	if (!a.check(pid_b > 0, "fork B: " + describe(last_error())))
		return 1;
	pid_t pid_c = spawn(*ac, &*ab, child(run_c));
	if (!a.check(pid_c > 0, "fork C: " + describe(last_error())))
		return 1;

	bool ok = run_a(a, ab->a.get(), ac->a.get(), pid_c);

	/* Closing our ends releases children stuck after a failure. */
	ab->a.reset();
	ac->a.reset();
	ok = reap(a, pid_b, 'B') && ok;
	if (!ok) {
		int status;
		::waitpid(pid_c, &status, 0); /* C may already be reaped: ECHILD */
	}

	out(ok ? "\nfractos demo: every step behaved as expected"
	       : "\nfractos demo: FAILED (see UNEXPECTED lines above)");
	return ok ? 0 : 1;
}
