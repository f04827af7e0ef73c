// SPDX-License-Identifier: GPL-2.0
/*
 * Bifröst lease calls with libcaladan against the real module.
 *
 * A client lends a Memory object to a provider process for one call
 * (request_builder::lease() + call_with_lease()): the provider gets a
 * revocation-tree child, copies from it while serving the call, replies
 * through the continuation, and afterwards its copy fails with
 * EKEYREVOKED, its monitor on the lease fires, and the one-shot reply
 * continuation is revoked.  The client's own Memory is untouched.  A call
 * that times out revokes the lease too.
 */
#include <caladan/caladan.hpp>
#include <caladan/sysfs.hpp>

#include "tap.h"

#include <chrono>
#include <thread>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace caladan;
using namespace std::chrono_literals;

namespace {

constexpr std::uint64_t provider_tag = 0x5e;
constexpr std::uint64_t monitor_cookie = 0xdead;
constexpr std::uint32_t cmd_reply = 1, cmd_no_reply = 2, cmd_exit = 3;

/* What the provider saw, sent back to the client after each call. */
struct report {
	int first_copy = -1;   /* errno of the copy while serving, 0: ok */
	std::uint64_t copied = 0;
	char data[32] = {};
	int second_copy = -1;  /* errno of the copy after the call */
	int reply_again = -1;  /* errno of invoking the continuation again */
	int monitor = -1;      /* 0: the lease's monitor event arrived */
	int late_reply = -1;   /* cmd_no_reply: errno of replying late */
};

int err_of(const result<void> &r)
{
	return r ? 0 : r.error().value();
}

template <class T>
int err_of(const result<T> &r)
{
	return r ? 0 : r.error().value();
}

bool read_all(int fd, void *p, std::size_t n)
{
	return ::read(fd, p, n) == ssize_t(n);
}

bool write_all(int fd, const void *p, std::size_t n)
{
	return ::write(fd, p, n) == ssize_t(n);
}

int provider(int sock)
{
	::alarm(60);
	auto sp = space::open();
	if (!sp)
		return 10;
	void *page = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return 11;
	auto mine = memory_create(*sp, page, 4096, perm::all);
	auto req = sp->request().set_tag(provider_tag).create();
	if (!mine || !req)
		return 12;
	auto fd = req->export_fd();
	if (!fd || !send_fd(sock, fd->get(), "req"))
		return 13;
	fd->reset();

	for (;;) {
		auto m = sp->receive(30s);
		if (!m || m->tag != provider_tag)
			return 14;
		auto cmd = m->imm<std::uint32_t>().value_or(0);
		if (cmd == cmd_exit)
			return 0;
		/* caps: [the lease, the reply continuation] */
		if (m->caps.size() != 2)
			return 15;
		const cap &lent = m->caps[0];
		const cap &reply = *reply_cap(*m);

		report rep;
		auto n = memory_copy(*sp, lent, *mine, {0, 0, 32});
		rep.first_copy = err_of(n);
		rep.copied = n.value_or(0);
		std::memcpy(rep.data, page, sizeof(rep.data));
		rep.monitor = err_of(monitor_receive(lent, monitor_cookie));

		if (cmd == cmd_reply)
			(void)sp->request(reply).set_imm(rep.copied).invoke();

		/* Wait for the client to finish its call. */
		char go;
		if (!read_all(sock, &go, 1))
			return 16;
		rep.second_copy = err_of(memory_copy(*sp, lent, *mine, {0, 0, 32}));
		rep.reply_again = err_of(sp->request(reply).set_imm(rep.copied).invoke());
		if (cmd == cmd_no_reply)
			rep.late_reply = rep.reply_again;
		if (rep.monitor == 0) {
			auto ev = sp->receive(2s);
			rep.monitor = ev && ev->type == msg_type::monitor_receive &&
						      ev->tag == monitor_cookie
					      ? 0
					      : ENOMSG;
		}
		if (!write_all(sock, &rep, sizeof(rep)))
			return 17;
	}
}

report finish_call(int sock)
{
	report rep;
	char go = 'g';
	if (!write_all(sock, &go, 1) || !read_all(sock, &rep, sizeof(rep)))
		tap_bail("provider is gone");
	return rep;
}

} // namespace

int main()
{
	int sv[2];
	if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		tap_bail("socketpair");
	unique_fd mine_end(sv[0]), their_end(sv[1]);
	pid_t pid = ::fork();
	if (pid < 0)
		tap_bail("fork");
	if (pid == 0) {
		mine_end.reset();
		::_exit(provider(their_end.get()));
	}
	their_end.reset();
	::alarm(120);

	auto sp = space::open();
	if (!sp)
		tap_bail("open: %s", describe(sp.error()).c_str());
	auto msg = recv_fd(mine_end.get());
	if (!msg || !msg->fd)
		tap_bail("no Request from the provider");
	auto req = import_fd(*sp, msg->fd.get()).value();
	msg->fd.reset();

	void *page = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	std::strcpy(static_cast<char *>(page), "lent for one call");
	auto mem = memory_create(*sp, page, 4096, perm::read).value();
	const auto caps = sysfs::read_u64(std::string(sysfs::live_dir) + "/caps").value();

	/* 1. A call that is answered. */
	auto reply = sp->request(req).set_imm(cmd_reply).lease(mem).call_with_lease(10s);
	tap_ok(bool(reply), "call_with_lease returns the reply%s",
	       reply ? "" : (": " + describe(reply.error())).c_str());
	if (reply) {
		tap_ok(reply->type == msg_type::request, "the reply is an invocation");
		tap_eq(reply->imm<std::uint64_t>().value_or(0), 32, "with the provider's result");
	}
	report rep = finish_call(mine_end.get());
	tap_eq(rep.first_copy, 0, "the provider copied from the lease while serving");
	tap_ok(rep.copied == 32 && std::strcmp(rep.data, "lent for one call") == 0,
	       "and read the client's bytes");
	tap_eq(rep.second_copy, EKEYREVOKED, "after the reply, its copy fails with EKEYREVOKED");
	tap_eq(rep.monitor, 0, "its monitor on the lease fired");
	tap_eq(rep.reply_again, EKEYREVOKED, "the reply continuation is one-shot");
	auto mi = mem.info();
	tap_ok(mi && !mi->revoked(), "the client's own Memory is not revoked");
	reply = errno_code(ENOENT); /* drop the reply's caps */
	/*
	 * The counter is the module's: the provider, another process, may
	 * still be closing what it received after it reported.
	 */
	auto live_caps = [] {
		return sysfs::read_u64(std::string(sysfs::live_dir) + "/caps").value();
	};
	for (int i = 0; i < 500 && live_caps() != caps; i++)
		std::this_thread::sleep_for(10ms);
	tap_eq(live_caps(), caps, "the client holds no leftover lease caps");

	/* 2. A call that is not answered in time: the lease ends anyway. */
	const cap *mems[] = {&mem};
	std::uint32_t cmd = cmd_no_reply;
	auto t = call_with_lease(*sp, req, mems, std::as_bytes(std::span(&cmd, 1)), 200ms);
	tap_ok(!t && t.error() == errno_code(ETIMEDOUT), "an unanswered call times out");
	rep = finish_call(mine_end.get());
	tap_eq(rep.first_copy, 0, "the provider could copy during the call");
	tap_eq(rep.second_copy, EKEYREVOKED, "after the timeout, its copy fails with EKEYREVOKED");
	tap_eq(rep.late_reply, EKEYREVOKED, "a late reply is refused");
	tap_ok(sp->try_receive().error() == errno_code(EAGAIN), "no stray message for the client");

	/* 3. invoke_with_lease + explicit complete(). */
	{
		auto l = sp->request(req).set_imm(cmd_reply).lease(mem).invoke_with_lease();
		tap_ok(bool(l), "invoke_with_lease");
		if (l) {
			auto m = sp->receive(10s);
			tap_ok(m && l->is_reply(*m), "the reply matches the lease's tag");
			tap_ok(bool(l->complete()) && !l->active(), "complete() ends the lease");
		}
		rep = finish_call(mine_end.get());
		tap_eq(rep.second_copy, EKEYREVOKED, "the provider lost access");
	}

	std::uint32_t bye = cmd_exit;
	(void)request_invoke(req, std::as_bytes(std::span(&bye, 1)));
	int status = 0;
	::waitpid(pid, &status, 0);
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "provider exited cleanly (status %d)",
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1);

	std::printf("1..%d\n", tap_count);
	return tap_finish();
}
