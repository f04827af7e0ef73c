# SPDX-License-Identifier: GPL-2.0
#
# Helpers for the multi-node TAP scripts, sourced by each of them (run.sh
# runs them in this directory, on every node of vm/run --nodes N).
#
# Roles come from vm/run's environment: $me is FRACTOS_NODE (node ids are
# the vm/run node numbers: run.sh loads the module with node_id=$me),
# $nodes is FRACTOS_NODES.  Nodes synchronise with "fosnet barrier" (TCP
# over the test network, node 1 coordinates), which also exchanges one
# value per node: eval "$(barrier TAG VALUE)" sets N1, N2, ...

export PATH=/usr/sbin:/usr/bin:/sbin:/bin
me=${FRACTOS_NODE:?not a vm/run node}
nodes=${FRACTOS_NODES:-1}
test_name=${0##*/}
test_name=${test_name%.sh}
t_n=0
t_fail=0
CTL=../../vm/ctl
LIVE=/sys/class/misc/fractos/live
PARAMS=/sys/module/fractos/parameters

fosnet() { ./fosnet "$@"; }

# ok STATUS DESCRIPTION: one TAP line; STATUS 0 passes.
ok() {
	local rc=$1
	shift
	t_n=$((t_n + 1))
	if [ "$rc" = 0 ]; then
		echo "ok $t_n - $*"
	else
		echo "not ok $t_n - $*"
		t_fail=$((t_fail + 1))
	fi
	return "$rc"
}

# A known problem: reported, not counted as a failure.
todo() {
	local rc=$1
	shift
	t_n=$((t_n + 1))
	if [ "$rc" = 0 ]; then
		echo "ok $t_n - $* # TODO passes now"
	else
		echo "not ok $t_n - $* # TODO"
	fi
}

diag() { echo "# $*"; }

finish() {
	echo "1..$t_n"
	[ "$t_fail" = 0 ]
	exit
}

# Milliseconds of CLOCK_REALTIME (GNU date from the host's root).
ms() { date +%s%3N; }

addr_of() { echo "$FRACTOS_ADDRS" | cut -d' ' -f"$1"; }

# barrier TAG [VALUE [SECS]]: prints N1=.. N2=..; fails on a timeout.
barrier() {
	fosnet barrier "$test_name-$1" "${2:--}" "${3:-90}"
}

self_epoch() { cat $PARAMS/epoch; }

# The cluster secret of this vm/run (every node has the same one).
set_secret() { ../../tools/fractctl secret set "${FRACTOS_SECRET:?}"; }

hb_ms() { cat $PARAMS/fabric_heartbeat_ms; }

# RC QPs on this node (the fabric's; nothing else makes RC QPs here).
qp_count() { rdma res show qp 2>/dev/null | grep -c 'type RC'; }

live() { cat "$LIVE/$1"; }

# The RDMA devices' non-zero hw_counters, as NAME=VALUE on one line.
rdma_counters() {
	local f v
	for f in /sys/class/infiniband/*/ports/*/hw_counters/*; do
		[ -r "$f" ] || continue
		v=$(cat "$f")
		[ "$v" = 0 ] || printf '%s=%s ' "${f##*/}" "$v"
	done
	echo
}

# Wait up to $2 seconds for live counter $1 to be zero.
live_zero_within() {
	local i=0
	while [ "$(live "$1")" != 0 ]; do
		i=$((i + 1))
		[ $i -gt $(($2 * 10)) ] && return 1
		sleep 0.1
	done
}

# Forget every peer (ignore errors).
del_all() {
	local i
	for i in $(seq 1 "$nodes"); do
		fosnet del "$i" >/dev/null 2>&1
	done
}

# add_peer ID: configure node ID at its vm/run address.
add_peer() {
	local out
	out=$(fosnet add "$1" "$(addr_of "$1")")
	ok $? "node $me: add node $1 at $(addr_of "$1") $out"
}

# wait_up ID SECS [EPOCH]: a TAP check that node ID comes up.
wait_up() {
	local out rc
	out=$(fosnet wait "$1" up "$2" ${3:+"$3"} 2>&1)
	rc=$?
	ok $rc "node $me sees node $1 UP${3:+ with epoch $3} (after $(kv elapsed_ms "$out") ms: state $(kv state "$out"), epoch $(kv epoch "$out"), qpn $(kv qpn "$out"))"
	[ $rc = 0 ] || diag "$out"
	return $rc
}

# wait_ready FILE: until a background helper wrote "ready" in FILE (60 s).
wait_ready() {
	local i=0

	while ! grep -q ready "$1" 2>/dev/null && [ $i -lt 300 ]; do
		sleep 0.2
		i=$((i + 1))
	done
}

# grace_up (2 nodes): a 500 ms heartbeat and a 20 s grace period, the other
# node added and up, its epoch in $epoch, and both nodes past a barrier.
grace_up() {
	echo 500 > $PARAMS/fabric_heartbeat_ms
	echo 20000 > $PARAMS/fabric_grace_ms
	add_peer $other
	wait_up $other 30
	epoch=$(fosnet get $other epoch)
	barrier up >/dev/null
}

# stream_cut WHAT CUT RESTORE SECS TIMES (2 nodes, after grace_up): flap_node streams numbered
# invocations both ways, and node 1 copies node 2's Memory with its RDMA
# READs held back 200 ms, while node 1 runs CUT, waits SECS and runs
# RESTORE, TIMES times, 6 s apart (RESTORE's answers go to $cut_log).
# Every number must be served once on each side, the copies cut asked for
# again with the right bytes, and the session kept through the
# connections that ended, with the same epoch and no protocol error.
cut_log=/tmp/stream-cut.$$
stream_cut() {
	local what=$1 cut=$2 restore=$3 secs=$4 times=$5
	local done_file=/tmp/stream-done.$$ out rc cutter line i
	local delay=/sys/kernel/debug/fractos/fault_read_delay_ms
	local totals=/sys/class/misc/fractos/totals retries

	rm -f "$done_file" "$cut_log"
	retries=$(cat $totals/pull_retries)
	if [ $me = 1 ]; then
		echo 200 > $delay || ok 1 "node 1: debugfs fault_read_delay_ms"
		(
			sleep 3
			for i in $(seq 1 "$times"); do
				$cut >/dev/null
				sleep "$secs"
				$restore >> "$cut_log"
				sleep 6
			done
			touch "$done_file"
		) &
		cutter=$!
		out=$(./flap_node call "$done_file")
		rc=$?
		wait $cutter
		echo 0 > $delay
	else
		out=$(./flap_node serve)
		rc=$?
	fi
	echo "$out" | sed 's/^# //; s/^/# /'
	ok $rc "node $me: every invocation served once across $what"
	if [ $me = 1 ]; then
		retries=$(($(cat $totals/pull_retries) - retries))
		[ $retries -ge 1 ]
		ok $? "node $me: copies cut by the $what were asked for again ($retries windows) and brought the right bytes"
	fi
	session_kept $other "$epoch"
}

# session_kept ID EPOCH: two TAP checks that node ID's connections ended
# and its session was kept through them (same EPOCH, no protocol error);
# its fosnet line is left in $line.
session_kept() {
	line=$(fosnet list "$1")
	diag "$line"
	[ "$(kv disconnects "$line")" -ge 1 ] && [ "$(kv link_grace "$line")" -ge 1 ]
	ok $? "node $me: node $1's connections ended, the session kept ($(kv disconnects "$line") disconnects, $(kv link_grace "$line") grace periods, $(kv retransmits "$line") retransmitted, $(kv duplicates "$line") duplicates dropped)"
	[ "$(kv session_ends "$line")" = 0 ] && [ "$(kv epoch_changes "$line")" = 0 ] &&
		[ "$(kv proto_errors "$line")" = 0 ] && [ "$(kv epoch "$line")" = "$2" ]
	ok $? "node $me: node $1: no session ended, same epoch ($2), no protocol error"
}

# kv KEY LINE: the value of KEY=... in a fosnet line.
kv() { echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

# wait_down_bg ID SECS FILE: start waiting for node ID to go down, in the
# background (before the cut, so that since_rx_ms sees the last message).
wait_down_bg() {
	./fosnet wait "$1" down "$2" > "$3" 2>&1 &
	wait_pid=$!
}

# check_down ID FILE: the heartbeat bound.  fabric/main.c: a peer silent for
# FOS_HB_MISSES (4) intervals is dead, checked once per interval, so it is
# declared down 4-5 intervals after its last message.  Slack: 1 s late
# (TCG), and early by up to one interval (the QP's own retransmission
# limit may fail the connection first).
check_down() {
	local rc out s iv lo hi
	wait "$wait_pid"
	rc=$?
	out=$(cat "$2")
	iv=$(hb_ms)
	lo=$((3 * iv))
	hi=$((5 * iv + 1000))
	s=$(kv since_rx_ms "$out")
	[ $rc = 0 ] && [ "$s" -ge $lo ] && [ "$s" -le $hi ]
	ok $? "node $me: node $1 declared down $s ms after its last message (bound $lo..$hi ms; heartbeat $iv ms)"
	[ $rc = 0 ] || diag "$out"
	line=$(fosnet list "$1")
	diag "$line"
	[ "$(kv hb_timeouts "$line")" -ge 1 ] || [ "$(kv disconnects "$line")" -ge 1 ]
	ok $? "node $me: $(kv hb_timeouts "$line") heartbeat timeout(s), $(kv disconnects "$line") disconnect(s)"
}

# ssd_attach: load fractos_nvme, wait for the NVMe namespace of vm/run
# --nvme, and attach it (formatted) as "ssd" (two TAP lines).
ssd_attach() {
	local i=0
	insmod "$(dirname "$FRACTOS_KO")/../adaptors/nvme/fractos_nvme.ko"
	ok $? "node $me: insmod fractos_nvme"
	[ -e /dev/nvme0n1 ] || modprobe nvme
	while [ ! -e /dev/nvme0n1 ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	dd if=/dev/zero of=/dev/nvme0n1 bs=64k count=1 oflag=direct status=none
	out=$(../../tools/fractctl blk attach /dev/nvme0n1 name ssd format 2>&1)
	ok $? "node $me: attach /dev/nvme0n1 as ssd $out"
}

# fsd_serve STATEFILE [ARGS]: fractos-fsd formats ssd (ARGS: -n NODE for
# another node's) and serves it as fs0 for every uid, in the background
# ($fsd_pid); waits until it answers (two TAP lines).
fsd_serve() {
	local st=$1 i=0
	shift
	rm -f "$st"
	out=$(../../adaptors/fs/fractos-fsd format ssd "$@" -s "$st" 2>&1)
	ok $? "node $me: fractos-fsd format ssd $*: $out"
	../../adaptors/fs/fractos-fsd serve ssd "$@" -s "$st" -N fs0 -w >/dev/null &
	fsd_pid=$!
	until ../../tools/fractos-fs ls >/dev/null 2>&1 || [ $i -ge 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	../../tools/fractos-fs ls >/dev/null 2>&1
	ok $? "node $me: fractos-fsd serves fs0"
}

# The NVMe-oF baseline of pipeline.sh and pipeline1.sh: nvmf_export,
# nvmf_unexport, nvmf_connect, nvmf_disconnect.
. ../../tools/nvmf.sh

# live_left SECS [NAME...]: waits up to SECS for every live counter but
# the NAMEs to be zero; prints those that are not, as " NAME=VALUE...".
live_left() {
	local secs=$1 i f v left=""
	shift
	for i in $(seq 1 $((secs * 10))); do
		left=""
		for f in "$LIVE"/*; do
			case " $* " in *" ${f##*/} "*) continue ;; esac
			v=$(cat "$f")
			[ "$v" = 0 ] || left="$left ${f##*/}=$v"
		done
		[ -z "$left" ] && break
		sleep 0.1
	done
	echo "$left"
}

# left_but_fabric SECS: live_left but peers and conns (the survivors
# still know each other).
left_but_fabric() {
	live_left "$1" peers conns
}
