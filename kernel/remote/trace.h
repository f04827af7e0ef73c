/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fractos tracepoints of the remote layer: remote invocations, copies and
 * revocations, in the "fractos" system with the transport's
 * (kernel/fabric/fos_trace.h: connections, every message, protocol
 * errors).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM fractos

#if !defined(FRACTOS_REMOTE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define FRACTOS_REMOTE_TRACE_H

#include <linux/tracepoint.h>

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

/* @node refused an invocation sent with FRACTOS_INVOKE_NOACK. */
TRACE_EVENT(fos_remote_refused,
	TP_PROTO(u32 node, int ret),
	TP_ARGS(node, ret),
	TP_STRUCT__entry(
		__field(u32, node)
		__field(int, ret)
	),
	TP_fast_assign(
		__entry->node = node;
		__entry->ret = ret;
	),
	TP_printk("node=%u ret=%d", __entry->node, __entry->ret)
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

#endif /* FRACTOS_REMOTE_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
