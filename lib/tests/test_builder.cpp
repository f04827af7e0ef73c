// SPDX-License-Identifier: LGPL-2.1-or-later
// The request builder's and the ring's encoding of argument structs, and
// the message / lease / completion values, without calling the kernel.
#include <caladan/caladan.hpp>
#include <caladan/ring.hpp>

#include <gtest/gtest.h>

#include <cstring>

#include <fcntl.h>
#include <unistd.h>

using namespace caladan;
using namespace std::string_view_literals;

namespace {

template <class T>
std::vector<T> at(std::uint64_t p, std::size_t n)
{
	const T *b = reinterpret_cast<const T *>(p);
	return std::vector<T>(b, b + n);
}

std::string str_at(std::uint64_t p, std::size_t n)
{
	return std::string(reinterpret_cast<const char *>(p), n);
}

/* A space on /dev/null: its own fd number, and no kernel behind it. */
space fake_space()
{
	int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
	EXPECT_GE(fd, 0);
	return space::from_fd(unique_fd(fd));
}

} // namespace

TEST(Builder, NewRequestEncoding)
{
	space sp; /* fd -1: nothing here reaches a kernel */
	request_builder b = sp.request();
	b.set_tag(0xabc).set_imm(std::uint32_t{0x01020304}).set_imm("xy"sv).set_cid(5).set_cid(9);

	fractos_request_create a = b.create_arg();
	EXPECT_EQ(a.base, FRACTOS_CID_INVALID);
	EXPECT_EQ(a.tag, 0xabcu);
	EXPECT_EQ(a.flags, 0u);
	ASSERT_EQ(a.imm_len, 6u);
	std::uint32_t v;
	std::memcpy(&v, reinterpret_cast<const void *>(a.imms), 4);
	EXPECT_EQ(v, 0x01020304u);
	EXPECT_EQ(str_at(a.imms + 4, 2), "xy");
	ASSERT_EQ(a.ncaps, 2u);
	EXPECT_EQ(at<std::uint32_t>(a.caps, 2), (std::vector<std::uint32_t>{5, 9}));
	EXPECT_EQ(a.cid, 0u);
	EXPECT_EQ(a.__pad, 0u);
	EXPECT_EQ(a.reserved[0] | a.reserved[1], 0u);
}

TEST(Builder, DeriveDropsTheTag)
{
	space sp = fake_space();
	request_builder b(sp, 7);
	b.set_tag(99).set_imm(std::uint8_t{1});
	fractos_request_create a = b.create_arg();
	EXPECT_EQ(a.base, 7u);
	EXPECT_EQ(a.tag, 0u); /* the kernel wants 0 when deriving */
	EXPECT_EQ(a.imm_len, 1u);
	EXPECT_EQ(a.ncaps, 0u);
	EXPECT_EQ(a.caps, 0u);
}

TEST(Builder, InvokeEncoding)
{
	space sp = fake_space();
	request_builder b(sp, 12);
	b.set_imm("hello"sv).set_cid(4).set_wait();
	fractos_request_invoke a = b.invoke_arg();
	EXPECT_EQ(a.cid, 12u);
	EXPECT_EQ(a.flags, FRACTOS_INVOKE_WAIT);
	EXPECT_EQ(str_at(a.imms, a.imm_len), "hello");
	EXPECT_EQ(at<std::uint32_t>(a.caps, a.ncaps), std::vector<std::uint32_t>{4});
	EXPECT_EQ(a.reserved[0] | a.reserved[1], 0u);
	b.set_wait(false);
	EXPECT_EQ(b.invoke_arg().flags, 0u);
	b.set_noack();
	EXPECT_EQ(b.invoke_arg().flags, FRACTOS_INVOKE_NOACK);
	b.set_noack(false);
	EXPECT_EQ(b.invoke_arg().flags, 0u);

	request_builder empty(sp, 12);
	fractos_request_invoke e = empty.invoke_arg();
	EXPECT_EQ(e.imms, 0u);
	EXPECT_EQ(e.imm_len, 0u);
	EXPECT_EQ(e.caps, 0u);
	EXPECT_EQ(e.ncaps, 0u);
}

TEST(Builder, BytesAndStructs)
{
	struct pair {
		std::uint16_t a;
		std::uint16_t b;
	};
	std::byte raw[] = {std::byte{1}, std::byte{2}};
	std::vector<std::byte> vec = {std::byte{3}};
	space sp = fake_space();
	request_builder b(sp, 1);
	b.set_imm(pair{7, 8}).set_imm(std::span<const std::byte>(raw)).set_imm(vec);
	ASSERT_EQ(b.imms().size(), 7u);
	EXPECT_EQ(b.imms()[4], std::byte{1});
	EXPECT_EQ(b.imms()[6], std::byte{3});
	static_assert(imm_value<pair>);
	static_assert(!imm_value<const char *>);
	static_assert(!imm_value<std::span<std::byte>>);
	static_assert(!imm_value<std::string_view>);
	static_assert(!imm_value<std::string>);
}

TEST(Builder, CapOfAnotherSpaceIsEXDEV)
{
	space other = fake_space(), sp = fake_space();
	cap c(other, 3); /* a cap of another space */
	request_builder b(sp, 1);
	b.set_cap(c);
	EXPECT_EQ(b.error(), errno_code(EXDEV));
	EXPECT_EQ(b.invoke().error(), errno_code(EXDEV)); /* kept, no kernel call */
	EXPECT_EQ(b.create().error(), errno_code(EXDEV));
	(void)c.release();

	cap same(sp, 3);
	request_builder ok(sp, 1);
	ok.set_cap(same);
	EXPECT_FALSE(ok.error());
	EXPECT_EQ(ok.cids()[0], 3u);
	(void)same.release();
}

TEST(Cap, OutlivesItsSpace)
{
	cap c;
	int fd;
	{
		space sp = fake_space();
		fd = sp.fd();
		c = cap(sp, 3);
		request_builder b(c); /* a builder shares it too */
		EXPECT_EQ(b.space_fd(), fd);
	}
	/* The space object is gone; its file stays open while the cap lives,
	 * so the number is not given to another file. */
	EXPECT_EQ(c.space_fd(), fd);
	EXPECT_NE(::fcntl(fd, F_GETFD), -1);
	int next = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
	EXPECT_NE(next, fd);
	::close(next);
	(void)c.release(); /* no CAP_CLOSE on /dev/null */
	c = cap();         /* the last owner: the file closes */
	EXPECT_EQ(::fcntl(fd, F_GETFD), -1);
}

TEST(Builder, DeriveWithoutBaseIsEINVAL)
{
	space sp;
	EXPECT_EQ(sp.request().derive().error(), errno_code(EINVAL));
	EXPECT_EQ(sp.request().invoke().error(), errno_code(EBADF));
}

TEST(Message, ImmAccess)
{
	message m;
	std::uint64_t v = 0x1122334455667788ULL;
	m.imms.resize(12);
	std::memcpy(m.imms.data() + 4, &v, 8);
	EXPECT_EQ(m.imm<std::uint64_t>(4).value(), v);
	EXPECT_EQ(m.imm<std::uint64_t>(5).error(), errno_code(ERANGE));
	EXPECT_EQ(m.imm<std::uint32_t>(100).error(), errno_code(ERANGE));
	EXPECT_EQ(m.imm_string().size(), 12u);
	EXPECT_EQ(reply_cap(m), nullptr);
	EXPECT_STREQ(to_string(msg_type::monitor_delegate), "monitor_delegate");
	EXPECT_STREQ(to_string(obj_type::request), "request");
}

TEST(Message, FindContsWithoutRequests)
{
	message m;
	msg_layout l;

	/* No capability: nobody to answer. */
	msg_conts c = find_conts(m, l);
	EXPECT_FALSE(c.well_formed());
	EXPECT_EQ(c.err, nullptr);
	/* Capabilities whose info fails (no space here) are no Requests. */
	m.caps.resize(3);
	l.min_caps = 2;
	l.max_caps = 3;
	l.done = 1;
	l.err = 2;
	c = find_conts(m, l);
	EXPECT_EQ(c.done, nullptr);
	EXPECT_EQ(c.err, nullptr);
}

TEST(Lease, DefaultIsInactive)
{
	lease l;
	EXPECT_FALSE(l.active());
	EXPECT_TRUE(l.leases().empty());
	EXPECT_TRUE(l.complete()); /* idempotent, nothing to revoke */
	message m;
	m.type = msg_type::request;
	EXPECT_FALSE(l.is_reply(m));
}

TEST(Ring, SqeEncoding)
{
	io_uring_sqe sqe;
	std::memset(&sqe, 0xff, sizeof(sqe));
	fractos_cap_arg a{};
	prep_fractos_cmd(&sqe, 17, FRACTOS_IOC_CAP_DUP, &a);
	EXPECT_EQ(sqe.opcode, IORING_OP_URING_CMD);
	EXPECT_EQ(sqe.fd, 17);
	EXPECT_EQ(sqe.cmd_op, std::uint32_t(FRACTOS_IOC_CAP_DUP));
	EXPECT_EQ(sqe.flags, 0u);
	EXPECT_EQ(sqe.user_data, 0u);
	fractos_uring_cmd pdu = fractos_cmd_of(&sqe);
	EXPECT_EQ(pdu.arg, reinterpret_cast<std::uintptr_t>(&a));
	EXPECT_EQ(pdu.reserved, 0u);
	static_assert(offsetof(io_uring_sqe, cmd) + sizeof(fractos_uring_cmd) <= sizeof(io_uring_sqe));
}

TEST(Ring, EmptyRingFailsWithEBADF)
{
	ring r;
	EXPECT_FALSE(r);
	EXPECT_EQ(r.submit().error(), errno_code(EBADF));
	EXPECT_EQ(r.prep_receive().error(), errno_code(EBADF));
	fractos_cap_arg a{};
	EXPECT_EQ(r.prep(FRACTOS_IOC_CAP_INFO, a).error(), errno_code(EINVAL)); /* wrong size */
	EXPECT_EQ(r.wait().error(), errno_code(ENOENT));
}

TEST(Ring, CompletionValue)
{
	completion c;
	c.res = -EKEYREVOKED;
	EXPECT_FALSE(c.ok());
	EXPECT_EQ(c.error(), errno_code(EKEYREVOKED));
	EXPECT_EQ(c.status().error(), errno_code(EKEYREVOKED));
	c.res = 0;
	EXPECT_TRUE(c.status());
	EXPECT_EQ(c.arg<fractos_cap_info>().cid, 0u);
}

#ifdef FRACTOS_IOC_NAME_PUBLISH
TEST(Names, ArgEncoding)
{
	std::string_view name = "svc.echo";
	fractos_name a = name_arg(name, 5, FRACTOS_NAME_WORLD);
	EXPECT_EQ(a.cid, 5u);
	EXPECT_EQ(a.flags, FRACTOS_NAME_WORLD);
	EXPECT_EQ(str_at(a.name, a.name_len), "svc.echo");
	EXPECT_EQ(a.node, 0u);
	EXPECT_EQ(a.reserved[0] | a.reserved[1], 0u);
}
#endif
