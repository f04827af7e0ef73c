/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fractos tracepoints: connection state changes, admission, protocol
 * errors, every message sent and received, remote invocations, copies and
 * revocations, so that perf trace or bpftrace can follow a request across
 * its path (e.g. "perf trace -e 'fractos:*'"): a call's messages carry its
 * cookie, which its answer echoes, so fos_msg_tx on the caller, fos_msg_rx
 * on the other node and back again share it.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM fractos

#if !defined(FRACTOS_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define FRACTOS_TRACE_H

#include <linux/tracepoint.h>
#include "../wire.h"

/* __assign_str() lost its second argument in 6.10 (Kbuild tests which). */
#ifndef FOS_ASSIGN_STR
#ifdef FOS_ASSIGN_STR_ONE_ARG
#define FOS_ASSIGN_STR(dst, src) __assign_str(dst)
#else
#define FOS_ASSIGN_STR(dst, src) __assign_str(dst, src)
#endif
#endif

/* fos_conn_state: what happened to a connection. */
#define FOS_TRACE_CONN_UP	0
#define FOS_TRACE_CONN_DOWN	1
#define FOS_TRACE_CONN_REFUSED	2
#define FOS_TRACE_CONN_AUTH_FAIL 3

TRACE_EVENT(fos_conn_state,
	TP_PROTO(u32 node, u32 qpn, u32 epoch, int what, int detail),
	TP_ARGS(node, qpn, epoch, what, detail),
	TP_STRUCT__entry(
		__field(u32, node)
		__field(u32, qpn)
		__field(u32, epoch)
		__field(int, what)
		__field(int, detail)
	),
	TP_fast_assign(
		__entry->node = node;
		__entry->qpn = qpn;
		__entry->epoch = epoch;
		__entry->what = what;
		__entry->detail = detail;
	),
	TP_printk("node=%u qpn=%u epoch=%#x %s detail=%d", __entry->node,
		  __entry->qpn, __entry->epoch,
		  __print_symbolic(__entry->what,
				   { FOS_TRACE_CONN_UP, "up" },
				   { FOS_TRACE_CONN_DOWN, "down" },
				   { FOS_TRACE_CONN_REFUSED, "refused" },
				   { FOS_TRACE_CONN_AUTH_FAIL, "auth_failed" }),
		  __entry->detail)
);

TRACE_DEFINE_ENUM(FOS_WIRE_CREDIT);
TRACE_DEFINE_ENUM(FOS_WIRE_HEARTBEAT);
TRACE_DEFINE_ENUM(FOS_WIRE_PING);
TRACE_DEFINE_ENUM(FOS_WIRE_PONG);
TRACE_DEFINE_ENUM(FOS_WIRE_INVOKE);
TRACE_DEFINE_ENUM(FOS_WIRE_ACK);
TRACE_DEFINE_ENUM(FOS_WIRE_REVOKE);
TRACE_DEFINE_ENUM(FOS_WIRE_REVOKE_REQ);
TRACE_DEFINE_ENUM(FOS_WIRE_IMPORT);
TRACE_DEFINE_ENUM(FOS_WIRE_LOOKUP);
TRACE_DEFINE_ENUM(FOS_WIRE_LOOKUP_REPLY);
TRACE_DEFINE_ENUM(FOS_WIRE_COPY);
TRACE_DEFINE_ENUM(FOS_WIRE_GRANT);
TRACE_DEFINE_ENUM(FOS_WIRE_GRANT_REPLY);
TRACE_DEFINE_ENUM(FOS_WIRE_RELEASE);
TRACE_DEFINE_ENUM(FOS_WIRE_GRANT_END);
TRACE_DEFINE_ENUM(FOS_WIRE_DROP);
TRACE_DEFINE_ENUM(FOS_WIRE_AUTH);

/* fos_msg_tx, fos_msg_rx: one message, as posted or as received. */
DECLARE_EVENT_CLASS(fos_msg,
	TP_PROTO(u32 node, u32 qpn, u8 type, u32 len, u64 cookie),
	TP_ARGS(node, qpn, type, len, cookie),
	TP_STRUCT__entry(
		__field(u32, node)
		__field(u32, qpn)
		__field(u8, type)
		__field(u32, len)
		__field(u64, cookie)
	),
	TP_fast_assign(
		__entry->node = node;
		__entry->qpn = qpn;
		__entry->type = type;
		__entry->len = len;
		__entry->cookie = cookie;
	),
	TP_printk("node=%u qpn=%u %s len=%u cookie=%#llx", __entry->node,
		  __entry->qpn,
		  __print_symbolic(__entry->type,
				   { FOS_WIRE_CREDIT, "credit" },
				   { FOS_WIRE_HEARTBEAT, "heartbeat" },
				   { FOS_WIRE_PING, "ping" },
				   { FOS_WIRE_PONG, "pong" },
				   { FOS_WIRE_INVOKE, "invoke" },
				   { FOS_WIRE_ACK, "ack" },
				   { FOS_WIRE_REVOKE, "revoke" },
				   { FOS_WIRE_REVOKE_REQ, "revoke_req" },
				   { FOS_WIRE_IMPORT, "import" },
				   { FOS_WIRE_LOOKUP, "lookup" },
				   { FOS_WIRE_LOOKUP_REPLY, "lookup_reply" },
				   { FOS_WIRE_COPY, "copy" },
				   { FOS_WIRE_GRANT, "grant" },
				   { FOS_WIRE_GRANT_REPLY, "grant_reply" },
				   { FOS_WIRE_RELEASE, "release" },
				   { FOS_WIRE_GRANT_END, "grant_end" },
				   { FOS_WIRE_DROP, "drop" },
				   { FOS_WIRE_AUTH, "auth" }),
		  __entry->len, __entry->cookie)
);

DEFINE_EVENT(fos_msg, fos_msg_tx,
	TP_PROTO(u32 node, u32 qpn, u8 type, u32 len, u64 cookie),
	TP_ARGS(node, qpn, type, len, cookie)
);

DEFINE_EVENT(fos_msg, fos_msg_rx,
	TP_PROTO(u32 node, u32 qpn, u8 type, u32 len, u64 cookie),
	TP_ARGS(node, qpn, type, len, cookie)
);

TRACE_EVENT(fos_proto_error,
	TP_PROTO(u32 node, const char *why),
	TP_ARGS(node, why),
	TP_STRUCT__entry(
		__field(u32, node)
		__string(why, why)
	),
	TP_fast_assign(
		__entry->node = node;
		FOS_ASSIGN_STR(why, why);
	),
	TP_printk("node=%u why=%s", __entry->node, __get_str(why))
);

TRACE_EVENT(fos_remote_invoke,
	TP_PROTO(u32 node, u64 oid, u32 imm_len, u32 ncaps, int ret),
	TP_ARGS(node, oid, imm_len, ncaps, ret),
	TP_STRUCT__entry(
		__field(u32, node)
		__field(u64, oid)
		__field(u32, imm_len)
		__field(u32, ncaps)
		__field(int, ret)
	),
	TP_fast_assign(
		__entry->node = node;
		__entry->oid = oid;
		__entry->imm_len = imm_len;
		__entry->ncaps = ncaps;
		__entry->ret = ret;
	),
	TP_printk("node=%u oid=%llu imm_len=%u ncaps=%u ret=%d",
		  __entry->node, __entry->oid, __entry->imm_len,
		  __entry->ncaps, __entry->ret)
);

TRACE_EVENT(fos_remote_copy,
	TP_PROTO(u32 node, u64 len, int ret),
	TP_ARGS(node, len, ret),
	TP_STRUCT__entry(
		__field(u32, node)
		__field(u64, len)
		__field(int, ret)
	),
	TP_fast_assign(
		__entry->node = node;
		__entry->len = len;
		__entry->ret = ret;
	),
	TP_printk("node=%u len=%llu ret=%d", __entry->node, __entry->len,
		  __entry->ret)
);

TRACE_EVENT(fos_remote_revoke,
	TP_PROTO(u32 node, u64 oid, int ret),
	TP_ARGS(node, oid, ret),
	TP_STRUCT__entry(
		__field(u32, node)
		__field(u64, oid)
		__field(int, ret)
	),
	TP_fast_assign(
		__entry->node = node;
		__entry->oid = oid;
		__entry->ret = ret;
	),
	TP_printk("node=%u oid=%llu ret=%d", __entry->node, __entry->oid,
		  __entry->ret)
);

#endif /* FRACTOS_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE fos_trace
#include <trace/define_trace.h>
