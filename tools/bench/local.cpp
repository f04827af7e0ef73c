// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fractos-bench's local groups: null (the cheapest operation as an ioctl
 * and through io_uring, getppid for reference) and invoke (invoke +
 * receive on the own queue, ioctl vs io_uring batches).
 */
#include "harness.hpp"

#include <cstdio>
#include <cstring>
#include <liburing.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace fbench {

namespace {

/* ---- io_uring helpers -------------------------------------------------- */

struct Ring {
	struct io_uring ring {};
	bool ok = false;
	int err = 0;

	explicit Ring(unsigned entries)
	{
		int ret = io_uring_queue_init(entries, &ring, 0);

		ok = ret == 0;
		err = -ret;
	}
	~Ring()
	{
		if (ok)
			io_uring_queue_exit(&ring);
	}
	Ring(const Ring &) = delete;
	Ring &operator=(const Ring &) = delete;

	struct io_uring_sqe *sqe()
	{
		struct io_uring_sqe *s = io_uring_get_sqe(&ring);

		if (!s)
			die("io_uring: submission queue full");
		return s;
	}

	/* Submit what is queued and reap exactly @n completions. */
	void submit_reap(unsigned n, const char *what)
	{
		int ret = io_uring_submit_and_wait(&ring, n);

		if (ret < 0)
			die_err(std::string("io_uring_submit_and_wait (") +
				what + ")", -ret);
		if ((unsigned)ret != n)
			die("io_uring_submit (%s): submitted %d of %u", what,
			    ret, n);
		unsigned seen = 0;
		while (seen < n) {
			struct io_uring_cqe *cqe;
			unsigned head, cnt = 0;

			io_uring_for_each_cqe(&ring, head, cqe) {
				if (__builtin_expect(cqe->res < 0, 0))
					die_err(std::string("io_uring ") + what +
						" (sqe " +
						std::to_string(cqe->user_data) +
						")", -cqe->res);
				cnt++;
			}
			io_uring_cq_advance(&ring, cnt);
			seen += cnt;
			if (seen < n) {
				ret = io_uring_wait_cqe(&ring, &cqe);
				if (ret < 0)
					die_err(std::string("io_uring_wait_cqe (") +
						what + ")", -ret);
			}
		}
	}
};

/* One fractos operation as an IORING_OP_URING_CMD SQE. */
void prep_cmd(struct io_uring_sqe *sqe, int fd, unsigned long cmd, void *arg,
	      uint64_t user_data)
{
	struct fractos_uring_cmd c {};

	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, nullptr, 0, 0);
	sqe->cmd_op = (uint32_t)cmd;
	c.arg = (uintptr_t)arg;
	static_assert(sizeof(c) <= sizeof(sqe->addr3) + sizeof(sqe->__pad2),
		      "fractos_uring_cmd must fit a 64-byte SQE");
	memcpy(sqe->cmd, &c, sizeof(c));
	sqe->user_data = user_data;
}

} // namespace

/* ---- group: null operation ---------------------------------------------- */

void bench_null()
{
	watchdog("null");
	print_header("null operation");

	measure("getppid syscall", 1, [] {
		if (syscall(SYS_getppid) < 0)
			die_err("getppid", errno);
	});

	int fd = space_open();
	struct fractos_space_info si {};
	measure("SPACE_INFO ioctl", 1, [&] {
		fos(fd, FRACTOS_IOC_SPACE_INFO, &si);
	});

	{
		Ring ring(512);

		if (!ring.ok) {
			std::string why = std::string("io_uring_queue_init: ") +
					  strerror(ring.err);
			fprintf(stderr, "%s: warning: %s; io_uring benches skipped\n",
				prog, why.c_str());
			for (unsigned b : batches) {
				skip("NOP io_uring b" + std::to_string(b), why);
				skip("SPACE_INFO io_uring b" + std::to_string(b), why);
			}
			run_group();
		} else {
			std::vector<struct fractos_space_info> infos(256);

			for (unsigned b : batches)
				measure("NOP io_uring b" + std::to_string(b), b, [&, b] {
					for (unsigned i = 0; i < b; i++) {
						struct io_uring_sqe *s = ring.sqe();
						io_uring_prep_nop(s);
						s->user_data = i;
					}
					ring.submit_reap(b, "NOP");
				});
			for (unsigned b : batches)
				measure("SPACE_INFO io_uring b" + std::to_string(b), b, [&, b] {
					for (unsigned i = 0; i < b; i++)
						prep_cmd(ring.sqe(), fd,
							 FRACTOS_IOC_SPACE_INFO,
							 &infos[i], i);
					ring.submit_reap(b, "SPACE_INFO");
				});
			run_group();
			for (unsigned i = 0; i < 256; i++)
				if (infos[i].abi_version && infos[i].abi_version !=
							    FRACTOS_ABI_VERSION)
					die("SPACE_INFO via io_uring: abi_version %u",
					    infos[i].abi_version);
			if (infos[0].abi_version != FRACTOS_ABI_VERSION)
				die("SPACE_INFO via io_uring wrote nothing back");
		}
	}
	space_close(fd, 0, "null");
	watchdog(nullptr);
}

/* ---- group: invoke + receive, ioctl vs io_uring -------------------------- */

void bench_invoke()
{
	watchdog("invoke");
	print_header("invoke+receive (own queue, 8 B imm)");

	int fd = space_open();
	const uint64_t tag = 0x1f0cULL;
	uint32_t req = request_create(fd, tag);
	uint64_t seq = 0;

	measure("invoke+receive ioctl", 1, [&] {
		uint64_t v = ++seq;

		invoke(fd, req, &v);
		if (__builtin_expect(receive(fd, FRACTOS_RECV_NONBLOCK, tag) != v, 0))
			die("invoke+receive ioctl: payload mismatch");
	});

	{
		Ring ring(512);

		if (!ring.ok) {
			std::string why = std::string("io_uring_queue_init: ") +
					  strerror(ring.err);
			for (unsigned b : batches)
				skip("invoke+receive io_uring b" + std::to_string(b),
				     why);
			run_group();
		} else {
			std::vector<uint64_t> out(256), in(256);
			std::vector<struct fractos_request_invoke> inv(256);
			std::vector<struct fractos_request_receive> rcv(256);

			for (unsigned i = 0; i < 256; i++) {
				inv[i] = {};
				inv[i].cid = req;
				inv[i].imms = (uintptr_t)&out[i];
				inv[i].imm_len = sizeof(uint64_t);
			}
			for (unsigned b : batches)
				measure("invoke+receive io_uring b" + std::to_string(b),
					b, [&, b] {
					for (unsigned i = 0; i < b; i++) {
						out[i] = ++seq;
						prep_cmd(ring.sqe(), fd,
							 FRACTOS_IOC_REQUEST_INVOKE,
							 &inv[i], i);
					}
					ring.submit_reap(b, "REQUEST_INVOKE");
					for (unsigned i = 0; i < b; i++) {
						rcv[i] = {};
						rcv[i].flags = FRACTOS_RECV_NONBLOCK;
						rcv[i].imms = (uintptr_t)&in[i];
						rcv[i].imm_len = sizeof(uint64_t);
						prep_cmd(ring.sqe(), fd,
							 FRACTOS_IOC_REQUEST_RECEIVE,
							 &rcv[i], i);
					}
					ring.submit_reap(b, "REQUEST_RECEIVE");
					for (unsigned i = 0; i < b; i++)
						if (__builtin_expect(
							in[i] != out[i] ||
							rcv[i].tag != tag ||
							rcv[i].imm_len != 8 ||
							rcv[i].type != FRACTOS_MSG_REQUEST,
							0))
							die("invoke+receive io_uring b%u: "
							    "message %u mismatch (got %#"
							    PRIx64 " want %#" PRIx64 ")",
							    b, i, in[i], out[i]);
				});
			run_group();
		}
	}

	/* The queue must be empty now. */
	struct fractos_request_receive a {};
	a.flags = FRACTOS_RECV_NONBLOCK;
	if (ioctl(fd, FRACTOS_IOC_REQUEST_RECEIVE, &a) == 0 || errno != EAGAIN)
		die("invoke: receive queue not empty at the end");
	cap_close(fd, req);
	space_close(fd, 0, "invoke");
	watchdog(nullptr);
}

} // namespace fbench
