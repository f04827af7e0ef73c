#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Host test of tools/bench-costs.py (tools/bench.sh --costs): a synthetic
# trace of two stints goes in; messages by type, work items by function,
# wake-ups, context switches and idle exits per operation must come out,
# and what falls outside a stint must not count.  No module needed.
# Usage: bench-costs-test.sh (from tools/)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$(dirname "$0")/tap.sh"

sw() { # CPU TS PREV_COMM PREV_PID NEXT_COMM NEXT_PID
	echo "          $3-$4     [00$1] d..2. $2: sched_switch: prev_comm=$3 prev_pid=$4 prev_prio=120 prev_state=R ==> next_comm=$5 next_pid=$6 next_prio=120"
}
{
	echo "# tracer: nop"
	echo "   fractos-bench-300     [000] ..... 1.000000: tracing_mark_write: fbench begin fabric invoke"
	echo "   fractos-bench-300     [000] ..... 1.000100: fos_msg_tx: node=0 qpn=17 invoke len=40 cookie=1"
	echo "   kworker/0:1H-50       [000] ..... 1.000200: workqueue_execute_start: work struct 00000000deadbeef: function ib_cq_poll_work"
	echo "   kworker/0:1H-50       [000] ..... 1.000300: fos_msg_tx: node=0 qpn=17 ack len=8 cookie=1"
	echo "   kworker/0:1H-50       [000] d..2. 1.000400: sched_wakeup: comm=fractos-bench pid=300 prio=120 target_cpu=001"
	sw 1 1.000500 swapper/1 0 fractos-bench 300
	sw 0 1.000600 kworker/0:1H 50 swapper/0 0
	echo "   fractos-bench-300     [001] ..... 1.000700: tracing_mark_write: fbench end fabric invoke|2"
	# outside any stint: not counted
	echo "   kworker/0:1H-50       [000] ..... 1.000800: fos_msg_tx: node=0 qpn=17 heartbeat len=0 cookie=0"
	sw 0 1.000900 swapper/0 0 kworker/0:1H 50
	echo "   fractos-bench-300     [001] ..... 1.001000: tracing_mark_write: fbench begin local invoke"
	echo "   fractos-bench-300     [001] ..... 1.001100: tracing_mark_write: fbench end local invoke|4"
} >"$tmp/trace"

python3 "$here/bench-costs.py" "$tmp/trace" >"$tmp/out" 2>"$tmp/err"
check "it reads the trace" [ $? = 0 ]
check "messages per operation, by type" \
	grep -q "messages sent  1: invoke 0.5, ack 0.5" "$tmp/out"
check "work items per operation, by function" \
	grep -q "work items     0.5: ib_cq_poll_work 0.5" "$tmp/out"
check "wake-ups, switches and idle exits per operation" \
	grep -q "wake-ups 0.5, context switches 1 (idle exits 0.5)" "$tmp/out"
check "an empty stint costs nothing" \
	sh -c "grep -A3 '^local invoke (4 ops)' '$tmp/out' | grep -q 'wake-ups 0, context switches 0 (idle exits 0)'"
python3 "$here/bench-costs.py" "$tmp/trace" -j >"$tmp/json" 2>"$tmp/err"
check "-j: JSON with idle_exits" \
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(not (r[0]["idle_exits"] == 0.5 and r[0]["ops"] == 2 and r[1]["msgs"] == 0))' "$tmp/json"
check "no argument: usage, failure" sh -c "! python3 '$here/bench-costs.py' 2>/dev/null"

# --timeline: three operations of two ioctls each (the timed process's);
# two share their order of events, the third has a stray wake-up and is
# left out; the peer's ioctls do not cut operations.
op() { # T0 (µs) RX_DELAY
	t=$1
	at() { printf '1.%06d' $((t + $1)); }
	echo "   fractos-bench-300     [000] ..... $(at 0): sys_ioctl(fd: 3, cmd: c030f70c, arg: 7ffd0)"
	echo "   fractos-bench-300     [000] ..... $(at 10): fos_msg_tx: node=0 qpn=17 invoke len=48 cookie=0"
	echo "   fractos-bench-300     [000] ..... $(at 12): sys_ioctl -> 0x0"
	echo "   fractos-bench-301     [001] ..... $(at 13): sys_ioctl(fd: 4, cmd: c030f70d, arg: 7ffd0)"
	echo "   fractos-bench-300     [000] ..... $(at 14): sys_ioctl(fd: 3, cmd: c030f70d, arg: 7ffd0)"
	sw 0 "$(at 15)" fractos-bench 300 kworker/0:1H 50
	echo "   kworker/0:1H-50       [000] ..... $(at $((15 + $2))): fos_msg_rx: node=0 qpn=18 invoke len=48 cookie=0"
	[ "${3:-}" ] && echo "   kworker/0:1H-50       [000] d..3. $(at $((16 + $2))): sched_wakeup: comm=sshd pid=9 prio=120 target_cpu=001"
	sw 0 "$(at $((20 + $2)))" kworker/0:1H 50 fractos-bench 300
	echo "   fractos-bench-300     [000] ..... $(at $((21 + $2))): sys_ioctl -> 0x0"
}
{
	echo "   fractos-bench-300     [000] ..... 1.000000: tracing_mark_write: fbench begin fabric noack"
	op 100 5
	op 200 9
	op 300 5 stray
	echo "   fractos-bench-300     [000] ..... 1.000400: tracing_mark_write: fbench end fabric noack|3"
} >"$tmp/tl"
python3 "$here/bench-costs.py" "$tmp/tl" --timeline noack >"$tmp/out" 2>"$tmp/err"
check "--timeline reads the trace" [ $? = 0 ]
check "--timeline keeps the operations in the usual order" \
	grep -q "^fabric noack: 2 of 3 operations in this order" "$tmp/out"
check "--timeline names the ioctls from the uAPI header" \
	grep -Eq "^ +0.0 +0.0  ioctl REQUEST_INVOKE in$" "$tmp/out"
check "--timeline: a step's median, and the running sum" \
	grep -Eq "^ +9.0 +24.0  rx invoke \(kworker\)$" "$tmp/out"
check "--timeline: the peer's ioctls are steps, not cuts" \
	grep -q "peer's ioctl REQUEST_RECEIVE in" "$tmp/out"
check "--timeline without a name: usage, failure" \
	sh -c "! python3 '$here/bench-costs.py' '$tmp/tl' --timeline 2>/dev/null"
tap_end
