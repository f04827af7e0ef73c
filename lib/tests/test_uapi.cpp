// SPDX-License-Identifier: LGPL-2.1-or-later
// The uAPI contract: struct layouts and ioctl numbers, checked at compile
// time (static_assert) so that a layout change breaks the build.
#include <linux/fractos.h>

#include <gtest/gtest.h>

#include <cstddef>
#include <initializer_list>
#include <sys/ioctl.h>

namespace {

struct field {
	std::size_t off, size;
};

// Fields listed in declaration order tile the struct with no gap and no
// tail padding, and each sits at its natural alignment (so i386, where
// __u64 is 4-aligned, sees the same layout).
constexpr bool tiles(std::initializer_list<field> fields, std::size_t total)
{
	std::size_t at = 0;
	for (const field &f : fields) {
		if (f.off != at || f.off % (f.size < 8 ? f.size : 8))
			return false;
		at += f.size;
	}
	return at == total && total % 8 == 0;
}

#define F(s, m) field{offsetof(s, m), sizeof(s::m)}

static_assert(tiles({F(fractos_oid, node), F(fractos_oid, epoch), F(fractos_oid, id)},
		    sizeof(fractos_oid)));
static_assert(tiles({F(fractos_space_info, abi_version), F(fractos_space_info, node),
		     F(fractos_space_info, epoch), F(fractos_space_info, max_caps),
		     F(fractos_space_info, ncaps), F(fractos_space_info, flags),
		     F(fractos_space_info, __pad), F(fractos_space_info, reserved)},
		    sizeof(fractos_space_info)));
static_assert(tiles({F(fractos_memory_create, addr), F(fractos_memory_create, len),
		     F(fractos_memory_create, perms), F(fractos_memory_create, flags),
		     F(fractos_memory_create, cid), F(fractos_memory_create, dmabuf_fd),
		     F(fractos_memory_create, reserved)},
		    sizeof(fractos_memory_create)));
static_assert(tiles({F(fractos_memory_diminish, cid), F(fractos_memory_diminish, drop_perms),
		     F(fractos_memory_diminish, offset), F(fractos_memory_diminish, len),
		     F(fractos_memory_diminish, flags), F(fractos_memory_diminish, new_cid),
		     F(fractos_memory_diminish, reserved)},
		    sizeof(fractos_memory_diminish)));
static_assert(tiles({F(fractos_memory_copy, src), F(fractos_memory_copy, dst),
		     F(fractos_memory_copy, src_offset), F(fractos_memory_copy, dst_offset),
		     F(fractos_memory_copy, len), F(fractos_memory_copy, flags),
		     F(fractos_memory_copy, __pad), F(fractos_memory_copy, copied),
		     F(fractos_memory_copy, reserved)},
		    sizeof(fractos_memory_copy)));
static_assert(tiles({F(fractos_cap_arg, cid), F(fractos_cap_arg, flags),
		     F(fractos_cap_arg, new_cid), F(fractos_cap_arg, __pad),
		     F(fractos_cap_arg, reserved)},
		    sizeof(fractos_cap_arg)));
static_assert(tiles({F(fractos_cap_info, cid), F(fractos_cap_info, flags),
		     F(fractos_cap_info, type), F(fractos_cap_info, perms),
		     F(fractos_cap_info, offset), F(fractos_cap_info, len),
		     F(fractos_cap_info, oid), F(fractos_cap_info, info_flags),
		     F(fractos_cap_info, depth), F(fractos_cap_info, reserved)},
		    sizeof(fractos_cap_info)));
static_assert(tiles({F(fractos_cap_export, cid), F(fractos_cap_export, flags),
		     F(fractos_cap_export, fd), F(fractos_cap_export, __pad),
		     F(fractos_cap_export, reserved)},
		    sizeof(fractos_cap_export)));
static_assert(tiles({F(fractos_cap_import, fd), F(fractos_cap_import, flags),
		     F(fractos_cap_import, cid), F(fractos_cap_import, __pad),
		     F(fractos_cap_import, reserved)},
		    sizeof(fractos_cap_import)));

static_assert(tiles({F(fractos_request_create, base), F(fractos_request_create, flags),
		     F(fractos_request_create, tag), F(fractos_request_create, imms),
		     F(fractos_request_create, imm_len), F(fractos_request_create, ncaps),
		     F(fractos_request_create, caps), F(fractos_request_create, cid),
		     F(fractos_request_create, __pad), F(fractos_request_create, reserved)},
		    sizeof(fractos_request_create)));
static_assert(tiles({F(fractos_request_invoke, cid), F(fractos_request_invoke, flags),
		     F(fractos_request_invoke, imms), F(fractos_request_invoke, imm_len),
		     F(fractos_request_invoke, ncaps), F(fractos_request_invoke, caps),
		     F(fractos_request_invoke, reserved)},
		    sizeof(fractos_request_invoke)));
static_assert(tiles({F(fractos_request_receive, flags), F(fractos_request_receive, type),
		     F(fractos_request_receive, timeout_ns), F(fractos_request_receive, tag),
		     F(fractos_request_receive, imms), F(fractos_request_receive, imm_len),
		     F(fractos_request_receive, ncaps), F(fractos_request_receive, caps),
		     F(fractos_request_receive, reserved)},
		    sizeof(fractos_request_receive)));
static_assert(tiles({F(fractos_monitor, cid), F(fractos_monitor, flags),
		     F(fractos_monitor, cookie), F(fractos_monitor, reserved)},
		    sizeof(fractos_monitor)));
static_assert(tiles({F(fractos_uring_cmd, arg), F(fractos_uring_cmd, reserved)},
		    sizeof(fractos_uring_cmd)));

// Frozen sizes of ABI version 1.
static_assert(sizeof(fractos_request_create) == 64);
static_assert(sizeof(fractos_request_invoke) == 48);
static_assert(sizeof(fractos_request_receive) == 64);
static_assert(sizeof(fractos_monitor) == 32);
static_assert(sizeof(fractos_space_contact) == 32);
static_assert(sizeof(fractos_contact_note) == 24);
static_assert(sizeof(fractos_memory_grant) == 32);
static_assert(sizeof(fractos_uring_cmd) == 16); // fits a 64-byte SQE's command area
static_assert(sizeof(fractos_oid) == 16);
static_assert(sizeof(fractos_space_info) == 48);
static_assert(sizeof(fractos_memory_create) == 48);
static_assert(sizeof(fractos_memory_diminish) == 48);
static_assert(sizeof(fractos_memory_copy) == 64);
static_assert(sizeof(fractos_cap_arg) == 32);
static_assert(sizeof(fractos_cap_info) == 72);
static_assert(sizeof(fractos_cap_export) == 32);
static_assert(sizeof(fractos_cap_import) == 32);

// Every operation: _IOWR, magic 0xF7, its number, its struct's size.
constexpr bool encodes(unsigned long cmd, unsigned nr, std::size_t size)
{
	return _IOC_DIR(cmd) == (_IOC_READ | _IOC_WRITE) && _IOC_TYPE(cmd) == 0xF7 &&
	       _IOC_NR(cmd) == nr && _IOC_SIZE(cmd) == size;
}

static_assert(FRACTOS_IOC_MAGIC == 0xF7);
static_assert(encodes(FRACTOS_IOC_SPACE_INFO, 0x00, sizeof(fractos_space_info)));
static_assert(encodes(FRACTOS_IOC_MEMORY_CREATE, 0x01, sizeof(fractos_memory_create)));
static_assert(encodes(FRACTOS_IOC_MEMORY_DIMINISH, 0x02, sizeof(fractos_memory_diminish)));
static_assert(encodes(FRACTOS_IOC_MEMORY_COPY, 0x03, sizeof(fractos_memory_copy)));
static_assert(encodes(FRACTOS_IOC_CAP_REVOKE, 0x04, sizeof(fractos_cap_arg)));
static_assert(encodes(FRACTOS_IOC_CAP_CREATE_REVTREE, 0x05, sizeof(fractos_cap_arg)));
static_assert(encodes(FRACTOS_IOC_CAP_CLOSE, 0x06, sizeof(fractos_cap_arg)));
static_assert(encodes(FRACTOS_IOC_CAP_DUP, 0x07, sizeof(fractos_cap_arg)));
static_assert(encodes(FRACTOS_IOC_CAP_INFO, 0x08, sizeof(fractos_cap_info)));
static_assert(encodes(FRACTOS_IOC_CAP_EXPORT, 0x09, sizeof(fractos_cap_export)));
static_assert(encodes(FRACTOS_IOC_CAP_IMPORT, 0x0a, sizeof(fractos_cap_import)));
static_assert(encodes(FRACTOS_IOC_REQUEST_CREATE, 0x0b, sizeof(fractos_request_create)));
static_assert(encodes(FRACTOS_IOC_REQUEST_INVOKE, 0x0c, sizeof(fractos_request_invoke)));
static_assert(encodes(FRACTOS_IOC_REQUEST_RECEIVE, 0x0d, sizeof(fractos_request_receive)));
static_assert(encodes(FRACTOS_IOC_MONITOR_RECEIVE, 0x0e, sizeof(fractos_monitor)));
static_assert(encodes(FRACTOS_IOC_MONITOR_DELEGATE, 0x0f, sizeof(fractos_monitor)));

// The numbers themselves, as a binary built against ABI 1 will send them.
static_assert(FRACTOS_IOC_SPACE_INFO == 0xC030F700UL);
static_assert(FRACTOS_IOC_MEMORY_CREATE == 0xC030F701UL);
static_assert(FRACTOS_IOC_MEMORY_DIMINISH == 0xC030F702UL);
static_assert(FRACTOS_IOC_MEMORY_COPY == 0xC040F703UL);
static_assert(FRACTOS_IOC_CAP_REVOKE == 0xC020F704UL);
static_assert(FRACTOS_IOC_CAP_CREATE_REVTREE == 0xC020F705UL);
static_assert(FRACTOS_IOC_CAP_CLOSE == 0xC020F706UL);
static_assert(FRACTOS_IOC_CAP_DUP == 0xC020F707UL);
static_assert(FRACTOS_IOC_CAP_INFO == 0xC048F708UL);
static_assert(FRACTOS_IOC_CAP_EXPORT == 0xC020F709UL);
static_assert(FRACTOS_IOC_CAP_IMPORT == 0xC020F70AUL);
static_assert(FRACTOS_IOC_REQUEST_CREATE == 0xC040F70BUL);
static_assert(FRACTOS_IOC_REQUEST_INVOKE == 0xC030F70CUL);
static_assert(FRACTOS_IOC_REQUEST_RECEIVE == 0xC040F70DUL);
static_assert(FRACTOS_IOC_MONITOR_RECEIVE == 0xC020F70EUL);
static_assert(FRACTOS_IOC_MONITOR_DELEGATE == 0xC020F70FUL);
static_assert(FRACTOS_REQ_MAX_IMM == 4096 && FRACTOS_REQ_MAX_CAPS == 32);
static_assert(FRACTOS_MSG_REQUEST == 1 && FRACTOS_MSG_MONITOR_RECEIVE == 2 &&
	      FRACTOS_MSG_MONITOR_DELEGATE == 3);
static_assert((FRACTOS_RECV_NONBLOCK & FRACTOS_RECV_TIMEOUT) == 0);

#ifdef FRACTOS_IOC_NAME_PUBLISH
static_assert(tiles({F(fractos_name, cid), F(fractos_name, flags), F(fractos_name, name),
		     F(fractos_name, name_len), F(fractos_name, node), F(fractos_name, reserved)},
		    sizeof(fractos_name)));
static_assert(sizeof(fractos_name) == 40);
static_assert(encodes(FRACTOS_IOC_NAME_PUBLISH, 0x10, sizeof(fractos_name)));
static_assert(encodes(FRACTOS_IOC_NAME_LOOKUP, 0x11, sizeof(fractos_name)));
static_assert(encodes(FRACTOS_IOC_NAME_UNPUBLISH, 0x12, sizeof(fractos_name)));
static_assert(encodes(FRACTOS_IOC_SPACE_CONTACT, 0x13, sizeof(fractos_space_contact)));
static_assert(encodes(FRACTOS_IOC_MEMORY_GRANT, 0x14, sizeof(fractos_memory_grant)));
static_assert(FRACTOS_NAME_MAX == 255);
#endif
static_assert(FRACTOS_ABI_VERSION == 1);
static_assert(FRACTOS_CID_INVALID == 0xffffffffU);
static_assert((FRACTOS_PERM_READ & FRACTOS_PERM_WRITE) == 0);
static_assert(FRACTOS_PERM_ALL == (FRACTOS_PERM_READ | FRACTOS_PERM_WRITE));
static_assert((FRACTOS_INFO_REVOKED | FRACTOS_INFO_REVTREE | FRACTOS_INFO_OWNED) == 7);

} // namespace

// The checks above are compile-time; this records that they ran.
TEST(Uapi, LayoutAndIoctlNumbersChecked)
{
	SUCCEED();
}

TEST(Uapi, IoctlNumbersAreDistinct)
{
	const unsigned long cmds[] = {
		FRACTOS_IOC_SPACE_INFO, FRACTOS_IOC_MEMORY_CREATE,
		FRACTOS_IOC_MEMORY_DIMINISH, FRACTOS_IOC_MEMORY_COPY,
		FRACTOS_IOC_CAP_REVOKE, FRACTOS_IOC_CAP_CREATE_REVTREE,
		FRACTOS_IOC_CAP_CLOSE, FRACTOS_IOC_CAP_DUP, FRACTOS_IOC_CAP_INFO,
		FRACTOS_IOC_CAP_EXPORT, FRACTOS_IOC_CAP_IMPORT,
		FRACTOS_IOC_REQUEST_CREATE, FRACTOS_IOC_REQUEST_INVOKE,
		FRACTOS_IOC_REQUEST_RECEIVE, FRACTOS_IOC_MONITOR_RECEIVE,
		FRACTOS_IOC_MONITOR_DELEGATE,
	};
	for (std::size_t i = 0; i < std::size(cmds); i++)
		for (std::size_t j = i + 1; j < std::size(cmds); j++)
			EXPECT_NE(cmds[i], cmds[j]);
}
