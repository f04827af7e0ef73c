/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fractos tracepoints of the transport: connection state changes,
 * admission, protocol errors, every message sent and received, so that
 * perf trace or bpftrace can follow a request across its path (e.g.
 * "perf trace -e 'fractos:*'"): a call's messages carry its cookie, which
 * its answer echoes, so fos_msg_tx on the caller, fos_msg_rx on the other
 * node and back again share it.  The remote layer's own events (remote
 * invocations, copies, revocations) are in kernel/remote/trace.h, in the
 * same "fractos" system.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM fractos

#if !defined(FRACTOS_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define FRACTOS_TRACE_H

#include <linux/tracepoint.h>

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

/* fos_msg_tx, fos_msg_rx: one message, as posted or as received. */
DECLARE_EVENT_CLASS(fos_msg,
	TP_PROTO(u32 node, u32 qpn, const char *type, u32 len, u64 cookie),
	TP_ARGS(node, qpn, type, len, cookie),
	TP_STRUCT__entry(
		__field(u32, node)
		__field(u32, qpn)
		__string(type, type)
		__field(u32, len)
		__field(u64, cookie)
	),
	TP_fast_assign(
		__entry->node = node;
		__entry->qpn = qpn;
		FOS_ASSIGN_STR(type, type);
		__entry->len = len;
		__entry->cookie = cookie;
	),
	TP_printk("node=%u qpn=%u %s len=%u cookie=%#llx", __entry->node,
		  __entry->qpn, __get_str(type), __entry->len, __entry->cookie)
);

DEFINE_EVENT(fos_msg, fos_msg_tx,
	TP_PROTO(u32 node, u32 qpn, const char *type, u32 len, u64 cookie),
	TP_ARGS(node, qpn, type, len, cookie)
);

DEFINE_EVENT(fos_msg, fos_msg_rx,
	TP_PROTO(u32 node, u32 qpn, const char *type, u32 len, u64 cookie),
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

#endif /* FRACTOS_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE fos_trace
#include <trace/define_trace.h>
