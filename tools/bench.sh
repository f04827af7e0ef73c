#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Run fractos-bench where the fractos module is loaded (the QEMU guest of
# vm/run, or any machine), from the repository root:
#
#   vm/run --kernel 6.1 -- tools/bench.sh [OPTIONS] [-- BENCH-ARGS...]
#
# Options:
#   --perftest     also run RDMA perftest baselines on the first RDMA
#                  device (vm/run's soft-RoCE rxe0; server and client in
#                  this machine, to eth0's address and its IPv4 GID, so the
#                  traffic goes through rxe as the fabric's does), or on a
#                  soft-iWARP device over lo if there is none: ib_send_lat
#                  8 B and 48 B (a fabric INVOKE with 8 immediate bytes),
#                  ib_write_lat 1 B..1 MiB, ib_read_lat 8 B, ib_write_bw
#                  64 KiB and 1 MiB (t_typical/t_avg, MiB/s); skipped with
#                  a note if perftest or a device is missing.
#   --fabric       fabric mode: configure this node as its own peer
#                  (fractctl node add NODE_ID ETH0_ADDR, wait until it is
#                  up) and run only fractos-bench's fabric and revoke groups:
#                  invoke round trip, invoke with 0/1/8/32 delegated caps
#                  and memory_copy (when a fabric copy works), each local
#                  vs through the RDMA path (fabric_loopback=1), and
#                  CAP_REVOKE of a capability held by 1000 spaces.  With
#                  --perftest the baselines run first and fractos-bench
#                  prints the ratios against them.  The node and
#                  fabric_loopback are restored at the end.
#   --costs        fabric mode, but instead of timing: run the fabric group
#                  once (-n 300 -r 1) under the kernel's trace (fractos-bench
#                  -T; fabric messages, work items, wake-ups and context
#                  switches) and print what each operation costs with
#                  tools/bench-costs.py (Documentation/benchmarks.rst,
#                  "Cost model"); --json FILE writes its JSON.  With
#                  BENCH_TIMELINE=SUBSTR in the environment it also traces
#                  fractos-bench's ioctls and prints, for each benchmark
#                  whose name contains SUBSTR, where one operation's time
#                  goes, step by step (bench-costs.py --timeline).
#   --ab PARAM=V1[,V2,...]
#                  fabric mode, A/B: run the fabric group (-r 1) once per
#                  value of module parameter PARAM, the values alternating,
#                  $AB_ROUNDS times (default 3); with --perftest the
#                  baselines run again at the start of every round, so
#                  that each round's ratios are against perftest measured
#                  in that round (interleaved, not one before the other;
#                  their output in the round's perftest-N.out, not shown);
#                  print each benchmark's p50 median and range per value
#                  and its ratio to V1's (tools/bench-ab.py; --json FILE
#                  writes its JSON).  PARAM is restored at the end.  E.g.
#                  --ab copy_inline_max=4096,0.  With one value, rounds of
#                  the same setting: AB_ROUNDS=5 ... --ab fabric_tx_bh=0
#                  gives five runs' medians and ranges, perftest
#                  interleaved.
#                  A parameter read when a connection is made
#                  (fabric_ring, fabric_rx_softirq) gets the node's
#                  connection to itself made again at each change.
#   --connect N    with --fabric: before the benchmark, time connection
#                  setup N times (node add until node show says up, polled
#                  every few ms) with the cluster secret ($FRACTOS_SECRET,
#                  as vm/run sets it) and N times in insecure mode, and
#                  print both series; the secret is set again afterwards.
#   --no-placements  skip the extra ping-pong runs with both processes on
#                  one CPU (-a same) and on two CPUs (-a split); by default
#                  they follow the main run, which leaves placement to the
#                  scheduler.
#   --json FILE    also write fractos-bench's JSON output to FILE (a second
#                  run with -j).
#   --plot DIR     do not benchmark: draw the runs whose --json files lie
#                  under DIR (any depth; one file per run, e.g. from
#                  vm/run --save) into DIR/latency-<release>.svg (copy
#                  latency against size, fabric vs perftest ib_write_lat
#                  vs local, median and range over the runs), DIR/ratio.svg
#                  (fabric / ib_write_lat, a band per kernel) and
#                  DIR/summary.txt, with tools/bench-plot.py and gnuplot.
#                  Needs neither the module nor root.
#   -h, --help     this text.
# BENCH-ARGS go to fractos-bench (-n ITERS, -t SECONDS, -b GROUPS, -j).
#
# The benchmark binary is $FRACTOS_BENCH, else tools/fractos-bench; if that
# is missing or older than a source file under tools/bench/ it is compiled
# into a temporary directory (the repository may be read-only).
#
# Exit status: non-zero if the benchmark fails or the module's live
# counters (/sys/class/misc/fractos/live) do not return to their values
# from before the run.
set -eu

live=/sys/class/misc/fractos/live
perftest=0
pt_iters=${PERFTEST_ITERS:-2000}
placements=1
fabric=0
costs=0
ab=
connect=0
json=
while [ $# -gt 0 ]; do
	case "$1" in
	--perftest) perftest=1 ;;
	--no-placements) placements=0 ;;
	--fabric) fabric=1 ;;
	--costs) fabric=1; costs=1 ;;
	--ab) case ${2:-} in
		?*=?*) ;;
		*) echo "bench.sh: --ab needs PARAM=V1[,V2,...]" >&2; exit 2 ;;
		esac
		fabric=1; ab=$2; shift ;;
	--connect) [ $# -ge 2 ] || { echo "bench.sh: --connect needs a count" >&2; exit 2; }
		connect=$2; shift ;;
	--json) [ $# -ge 2 ] || { echo "bench.sh: --json needs a file" >&2; exit 2; }
		json=$2; shift ;;
	--plot) [ $# -ge 2 ] || { echo "bench.sh: --plot needs a directory" >&2; exit 2; }
		exec python3 "$(dirname "$0")/bench-plot.py" "$2" ;;
	-h|--help) sed -n '3,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	--) shift; break ;;
	*) break ;;
	esac
	shift
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fractos-bench.XXXXXX")
cleanup() {
	if [ -n "${self_node:-}" ]; then
		echo 0 >/sys/module/fractos/parameters/fabric_loopback 2>/dev/null || :
		"$fractctl" node del "$self_node" >/dev/null 2>&1 || :
	fi
	if [ -n "${siw_dev:-}" ]; then
		rdma link delete "$siw_dev" 2>/dev/null || :
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- the binary ----------------------------------------------------------
src=tools/bench
bin=${FRACTOS_BENCH:-tools/fractos-bench}
if [ -z "${FRACTOS_BENCH:-}" ] && { [ ! -x "$bin" ] ||
	{ [ -d "$src" ] && [ -n "$(find "$src" -name '*.[ch]pp' -newer "$bin" 2>/dev/null)" ]; }; }; then
	command -v g++ >/dev/null 2>&1 || {
		echo "bench.sh: $bin is missing or stale and there is no g++;" \
		     "build it first: make -C tools fractos-bench" >&2
		exit 1
	}
	echo "bench.sh: compiling $src" >&2
	g++ -std=c++20 -O2 -Wall -Wextra -Werror -Iuapi -o "$tmp/fractos-bench" \
		"$src"/*.cpp -luring -pthread
	bin=$tmp/fractos-bench
fi
[ -x "$bin" ] || { echo "bench.sh: $bin is not executable" >&2; exit 1; }

# ---- the module ------------------------------------------------------------
[ -c /dev/fractos ] || { echo "bench.sh: /dev/fractos missing (module not loaded?)" >&2; exit 1; }
[ -d "$live" ] || { echo "bench.sh: $live missing" >&2; exit 1; }

snapshot() {
	for f in "$live"/*; do
		printf '%s=%s ' "${f##*/}" "$(cat "$f")"
	done
}
before=$(snapshot)

# Pinning 2 MiB needs a memlock limit above the 64 KiB some systems default to.
# shellcheck disable=SC3045 # dash, bash and busybox sh all have ulimit -l
ulimit -l unlimited 2>/dev/null || ulimit -l 65536 2>/dev/null || :

params=
for p in max_queue max_caps node_id; do
	[ -r /sys/module/fractos/parameters/$p ] &&
		params="$params $p=$(cat /sys/module/fractos/parameters/$p)"
done
echo "bench.sh: kernel $(uname -r), $(nproc) cpu(s), module:${params:- (no parameters visible)}"
# Which memcpy glibc picks (and so the memcpy reference) depends on these.
flags=
for fl in avx2 avx512f erms fsrm; do
	grep -qw $fl /proc/cpuinfo && flags="$flags $fl"
done
echo "bench.sh: cpu flags:${flags:- none of avx2 avx512f erms fsrm}"
echo "bench.sh: live before: $before"

# ---- optional perftest baselines -------------------------------------------------
# pt TOOL SIZE ITERS: run TOOL as server and client over $dev; prints the
# result lines and appends "lat NAME TYPICAL AVG" or "bw NAME MIB/S" to
# $tmp/baselines.
pt() {
	t=$1 size=$2 n=$3
	case $size in
	1048576) name=${t}_1MiB ;;
	65536) name=${t}_64KiB ;;
	4096) name=${t}_4KiB ;;
	*) name=${t}_${size}B ;;
	esac
	echo "== $t $size B ($n iterations)"
	# Under TCG perftest's clock calibration sometimes fails and it
	# prints inf: try once more.
	for try in 1 2; do
		# shellcheck disable=SC2086 # $gidopt is empty or "-x N"
		timeout 180 $t -d "$dev" $gidopt -F -s "$size" -n "$n" >"$tmp/$name.srv" 2>&1 &
		srv=$!
		sleep 1
		# The server may take more than a second to listen on a busy host.
		ok=0
		for c in 1 2 3; do
			# shellcheck disable=SC2086
			if timeout 180 $t -d "$dev" $gidopt -F -s "$size" -n "$n" "$pt_addr" >"$tmp/$name.cli" 2>&1; then
				ok=1
				break
			fi
			grep -q "Couldn't connect" "$tmp/$name.cli" || break
			[ $c = 3 ] || sleep 2
		done
		if [ $ok = 0 ]; then
			echo "perftest: $t -s $size failed:"; sed 's/^/  /' "$tmp/$name.cli"
			kill $srv 2>/dev/null || :
			wait $srv 2>/dev/null || :
			return 0
		fi
		wait $srv 2>/dev/null || :
		sed -n '/#bytes/,$p' "$tmp/$name.cli" | grep -v '^-*$'
		line=$(awk -v s="$size" '$1 == s { print; exit }' "$tmp/$name.cli")
		[ -n "$line" ] || return 0
		case $line in *inf*|*nan*) [ $try = 1 ] && echo "(inf: again)" ;; *) break ;; esac
	done
	# "KIND TOOL:LABEL VALUES" for fractos-bench -B
	label=${name#"${t}"_}
	case $t in
	*_bw) echo "$line" | awk -v n="$t:$label" '{ print "bw", n, $4 }' ;;
	*) echo "$line" | awk -v n="$t:$label" '{ print "lat", n, $5, $6 }' ;;
	esac >>"$tmp/baselines"
}

run_perftest() {
	for t in ib_send_lat ib_write_lat ib_read_lat ib_write_bw; do
		command -v $t >/dev/null 2>&1 || { echo "perftest: $t not installed, skipped"; return 0; }
	done
	command -v rdma >/dev/null 2>&1 || { echo "perftest: no rdma tool (iproute2), skipped"; return 0; }
	if [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
		ip link set lo up 2>/dev/null || :
		modprobe siw 2>/dev/null || :
		if rdma link add siw_lo type siw netdev lo 2>/dev/null; then
			siw_dev=siw_lo
		else
			echo "perftest: no RDMA device and siw on lo could not be created, skipped"
			return 0
		fi
	fi
	dev=$(ls /sys/class/infiniband | head -n 1)
	# Same path as the fabric: eth0's IPv4 address and its GID on $dev.
	pt_addr=127.0.0.1 gidopt='' gidnote=''
	a4=$(ip -4 -o addr show dev eth0 2>/dev/null | awk '{ sub("/.*", "", $4); print $4; exit }')
	if [ -n "$a4" ] && [ -z "${siw_dev:-}" ]; then
		pt_addr=$a4
		hex=$(echo "$a4" | awk -F. '{ printf "%02x%02x:%02x%02x", $1, $2, $3, $4 }')
		for g in /sys/class/infiniband/"$dev"/ports/1/gids/*; do
			if [ "$(cat "$g" 2>/dev/null)" = "0000:0000:0000:0000:0000:ffff:$hex" ]; then
				gidopt="-x ${g##*/}" gidnote=", GID index ${g##*/}"
				break
			fi
		done
	fi
	echo
	echo "perftest baselines on $dev (loopback to $pt_addr$gidnote)"
	: >"$tmp/baselines"
	pt ib_send_lat 8 "$pt_iters"
	pt ib_send_lat 48 "$pt_iters"
	pt ib_read_lat 8 "$pt_iters"
	for sz in 1 64 4096; do
		pt ib_write_lat $sz "$pt_iters"
	done
	pt ib_write_lat 65536 $((pt_iters / 10 > 20 ? pt_iters / 10 : 20))
	pt ib_write_lat 1048576 $((pt_iters / 40 > 20 ? pt_iters / 40 : 20))
	pt ib_write_bw 65536 1000
	pt ib_write_bw 1048576 200
}

# ---- fabric mode: this node as its own peer ----------------------------------------
# wait_up TRIES PAUSE: poll until node $id is up; sets $st.
wait_up() {
	n=0
	st=
	while [ $n -lt "$1" ]; do
		st=$("$fractctl" node show "$id" | awk 'NR == 2 { print $3 }')
		[ "$st" = up ] && return 0
		[ "$2" = 0 ] || sleep "$2"
		n=$((n + 1))
	done
	return 1
}

setup_fabric() {
	fractctl=${FRACTCTL:-tools/fractctl}
	[ -x "$fractctl" ] || fractctl=$(command -v fractctl) ||
		{ echo "bench.sh: --fabric needs fractctl (make -C tools)" >&2; return 1; }
	export FRACTCTL="$fractctl"
	[ -w /sys/module/fractos/parameters/fabric_loopback ] ||
		{ echo "bench.sh: --fabric: no writable fabric_loopback parameter (root? module too old?)" >&2; return 1; }
	id=$(cat /sys/module/fractos/parameters/node_id)
	a4=$(ip -4 -o addr show dev eth0 2>/dev/null | awk '{ sub("/.*", "", $4); print $4; exit }')
	[ -n "$a4" ] || { echo "bench.sh: --fabric: no IPv4 address on eth0" >&2; return 1; }
	"$fractctl" node add "$id" "$a4" || return 1
	self_node=$id
	wait_up 300 0.1 || :
	"$fractctl" node show "$id"
	[ "$st" = up ] || { echo "bench.sh: --fabric: node $id ($a4) did not come up" >&2; return 1; }
	# shellcheck disable=SC3045 # dash, bash and busybox sh all have ulimit -n
	echo "bench.sh: node $id ($a4) is its own peer; $(ulimit -n) open files allowed"
}

# ---- connection setup: node add until up, with and without the secret -------
# Prints "bench.sh: connect LABEL: N runs, ms: ..." (milliseconds, sorted).
time_connect() {
	label=$1
	i=0
	ms=
	while [ $i -lt "$connect" ]; do
		t0=$(date +%s%N)
		"$fractctl" node add "$id" "$a4" >/dev/null || return 1
		wait_up 2000 0 || :
		t1=$(date +%s%N)
		"$fractctl" node del "$id" >/dev/null || return 1
		[ "$st" = up ] || { echo "bench.sh: connect $label: not up" >&2; return 1; }
		ms="$ms $(( (t1 - t0) / 1000000 ))"
		i=$((i + 1))
	done
	echo "bench.sh: connect $label: $connect runs, ms:$(printf '%s\n' $ms | sort -n | tr '\n' ' ')"
}

run_connect() {
	[ -n "${FRACTOS_SECRET:-}" ] ||
		{ echo "bench.sh: --connect needs FRACTOS_SECRET (vm/run sets it)" >&2; return 1; }
	"$fractctl" node del "$self_node" >/dev/null || return 1
	time_connect authenticated || return 1
	"$fractctl" secret insecure >/dev/null || return 1
	time_connect insecure
	r=$?
	"$fractctl" secret set "$FRACTOS_SECRET" >/dev/null || r=1
	"$fractctl" node add "$id" "$a4" >/dev/null || r=1
	wait_up 300 0.1 || r=1
	return $r
}

# ---- costs: the fabric group under the kernel's trace --------------------------
cost_events="fractos/fos_msg_tx fractos/fos_msg_rx workqueue/workqueue_execute_start
sched/sched_wakeup sched/sched_switch ${BENCH_EVENTS:-}"
[ -z "${BENCH_TIMELINE:-}" ] ||
	cost_events="$cost_events syscalls/sys_enter_ioctl syscalls/sys_exit_ioctl"
run_costs() {
	local tr=/sys/kernel/tracing e r=0
	[ -d $tr/events ] || mount -t tracefs nodev $tr 2>/dev/null || tr=/sys/kernel/debug/tracing
	[ -w $tr/trace_marker ] || { echo "bench.sh: --costs: no tracefs" >&2; return 1; }
	echo 0 > $tr/tracing_on
	echo > $tr/trace
	echo 32768 > $tr/buffer_size_kb
	for e in $cost_events; do echo 1 > "$tr/events/$e/enable" || r=1; done
	echo 1 > $tr/tracing_on
	"$bin" -b fabric -T -n 300 -r 1 -t 2 "$@" > "$tmp/costs.out" || r=1
	echo 0 > $tr/tracing_on
	for e in $cost_events; do echo 0 > "$tr/events/$e/enable"; done
	cat $tr/trace > "$tmp/trace"
	# (BENCH_TRACE=FILE keeps the raw trace, for a timeline)
	[ -z "${BENCH_TRACE:-}" ] || cp "$tmp/trace" "$BENCH_TRACE"
	echo > $tr/trace
	echo 1408 > $tr/buffer_size_kb
	grep -E "^# entries-in-buffer" "$tmp/trace" | sed 's/^# /bench.sh: trace: /'
	python3 "$(dirname "$0")/bench-costs.py" "$tmp/trace" || r=1
	[ -z "$json" ] || python3 "$(dirname "$0")/bench-costs.py" "$tmp/trace" -j > "$json" || r=1
	[ -z "${BENCH_TIMELINE:-}" ] ||
		python3 "$(dirname "$0")/bench-costs.py" "$tmp/trace" --timeline "$BENCH_TIMELINE" || r=1
	[ $r = 0 ] || cat "$tmp/costs.out"
	return $r
}

# ---- A/B: the fabric group per value of a module parameter, alternating ----
run_ab() {
	local param=${ab%%=*} vals i v r=0 old
	local f=/sys/module/fractos/parameters/$param
	vals=$(echo "${ab#*=}" | tr ',' ' ')
	[ -w "$f" ] || { echo "bench.sh: --ab: no writable parameter $param" >&2; return 1; }
	old=$(cat "$f")
	i=1
	while [ $i -le "${AB_ROUNDS:-3}" ]; do
		if [ $perftest = 1 ]; then
			echo "bench.sh: --ab round $i: perftest baselines"
			run_perftest > "$tmp/perftest-$i.out" 2>&1
			grep -E '^perftest: ' "$tmp/perftest-$i.out" || :
			echo "bench.sh: --ab round $i: $(wc -l < "$tmp/baselines" 2>/dev/null || echo 0) baselines"
		fi
		for v in $vals; do
			echo "$v" > "$f" || { r=1; break 2; }
			echo "bench.sh: --ab round $i: $param=$v"
			# Read when a connection is made: make it again.
			case $param in
			fabric_ring|fabric_rx_softirq)
				"$fractctl" node del "$id" >/dev/null &&
					"$fractctl" node add "$id" "$a4" >/dev/null &&
					wait_up 300 0.1 ||
					{ echo "bench.sh: --ab: node $id did not come up again" >&2; r=1; break 2; } ;;
			esac
			if [ -s "$tmp/baselines" ]; then
				"$bin" -j -B "$tmp/baselines" -b fabric -r 1 "$@"
			else
				"$bin" -j -b fabric -r 1 "$@"
			fi > "$tmp/ab-$i-$v.json" || { r=1; break 2; }
		done
		i=$((i + 1))
	done
	echo "$old" > "$f"
	[ $r = 0 ] || return 1
	python3 "$(dirname "$0")/bench-ab.py" "$param" $vals -- "$tmp"/ab-*.json || return 1
	[ -z "$json" ] || python3 "$(dirname "$0")/bench-ab.py" -j "$param" $vals -- \
		"$tmp"/ab-*.json > "$json"
}

status=0
if [ $fabric = 1 ]; then
	# 1000 spaces are 1000 open files.
	# shellcheck disable=SC3045 # dash, bash and busybox sh all have ulimit -n
	ulimit -n 4096 2>/dev/null || :
	setup_fabric || status=1
	if [ $status -eq 0 ] && [ "$connect" -gt 0 ]; then
		run_connect || status=1
		echo
	fi
	# (--ab runs them in each of its rounds)
	if [ $status -eq 0 ] && [ $perftest = 1 ] && [ -z "$ab" ]; then
		run_perftest
		echo
	fi
	if [ $status -eq 0 ] && [ $costs = 1 ]; then
		run_costs "$@" || status=1
	elif [ $status -eq 0 ] && [ -n "$ab" ]; then
		run_ab "$@" || status=1
	elif [ $status -eq 0 ]; then
		set -- -b fabric,revoke "$@"
		[ -s "$tmp/baselines" ] && set -- -B "$tmp/baselines" "$@"
		[ -n "$json" ] && set -- -J "$json" "$@"
		"$bin" "$@" || status=$?
	fi
	echo 0 >/sys/module/fractos/parameters/fabric_loopback 2>/dev/null || :
	if [ -n "${self_node:-}" ]; then
		# Exports to the node itself hold their objects until it is gone.
		"$fractctl" node del "$self_node" || status=1
		self_node=
	fi
else
	"$bin" "$@" || status=$?
	if [ $placements = 1 ] && [ $status -eq 0 ]; then
		for a in same split; do
			[ $a = split ] && [ "$(nproc)" -lt 2 ] && continue
			echo
			echo "bench.sh: ping-pong again with -a $a"
			"$bin" "$@" -b pingpong -a $a || { status=$?; break; }
		done
	fi
	if [ -n "$json" ] && [ $status -eq 0 ]; then
		"$bin" -j "$@" >"$json" || status=$?
	fi
fi

# ---- live counters must come back --------------------------------------------
# Objects are freed after an RCU grace period, connections torn down by a
# worker: give them a moment.
i=0
after=$(snapshot)
while [ "$after" != "$before" ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
	after=$(snapshot)
done
echo "bench.sh: live after:  $after"
if [ "$after" != "$before" ]; then
	echo "bench.sh: FAIL: live counters did not return to their earlier values" >&2
	[ $status -ne 0 ] || status=1
fi

if [ $perftest = 1 ] && [ $fabric = 0 ] && [ $status -eq 0 ]; then
	run_perftest
fi

exit $status
