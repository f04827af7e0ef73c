#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Run fractos-bench where the fractos module is loaded (the QEMU guest of
# vm/run, or any machine), from the repository root:
#
#   vm/run --kernel 6.1 -- tools/bench.sh [OPTIONS] [-- BENCH-ARGS...]
#
# Options:
#   --perftest     also run RDMA perftest baselines (ib_send_lat,
#                  ib_write_lat, ib_read_lat; 8-byte messages, loopback)
#                  on the first RDMA device (vm/run's soft-RoCE rxe0), or
#                  on a soft-iWARP device over lo if there is none; skipped
#                  with a note if perftest or a device is missing.
#   --no-placements  skip the extra ping-pong runs with both processes on
#                  one CPU (-a same) and on two CPUs (-a split); by default
#                  they follow the main run, which leaves placement to the
#                  scheduler.
#   --json FILE    also write fractos-bench's JSON output to FILE (a second
#                  run with -j).
#   -h, --help     this text.
# BENCH-ARGS go to fractos-bench (-n ITERS, -t SECONDS, -b GROUPS, -j).
#
# The benchmark binary is $FRACTOS_BENCH, else tools/fractos-bench; if that
# is missing or older than tools/fractos-bench.cpp it is compiled into a
# temporary directory (the repository may be read-only).
#
# Exit status: non-zero if the benchmark fails or the module's live
# counters (/sys/class/misc/fractos/live) do not return to their values
# from before the run.
set -eu

live=/sys/class/misc/fractos/live
perftest=0
pt_iters=${PERFTEST_ITERS:-2000}
placements=1
json=
while [ $# -gt 0 ]; do
	case "$1" in
	--perftest) perftest=1 ;;
	--no-placements) placements=0 ;;
	--json) [ $# -ge 2 ] || { echo "bench.sh: --json needs a file" >&2; exit 2; }
		json=$2; shift ;;
	-h|--help) sed -n '3,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	--) shift; break ;;
	*) break ;;
	esac
	shift
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fractos-bench.XXXXXX")
cleanup() {
	if [ -n "${siw_dev:-}" ]; then
		rdma link delete "$siw_dev" 2>/dev/null || :
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- the binary ----------------------------------------------------------
src=tools/fractos-bench.cpp
bin=${FRACTOS_BENCH:-tools/fractos-bench}
if [ -z "${FRACTOS_BENCH:-}" ] && { [ ! -x "$bin" ] ||
	{ [ -f "$src" ] && [ -n "$(find "$src" -newer "$bin" 2>/dev/null)" ]; }; }; then
	command -v g++ >/dev/null 2>&1 || {
		echo "bench.sh: $bin is missing or stale and there is no g++;" \
		     "build it first: make -C tools fractos-bench" >&2
		exit 1
	}
	echo "bench.sh: compiling $src" >&2
	g++ -std=c++20 -O2 -Wall -Wextra -Werror -Iuapi -o "$tmp/fractos-bench" \
		"$src" -luring -pthread
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

status=0
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

# ---- live counters must come back --------------------------------------------
# Objects are freed after an RCU grace period: give them a moment.
i=0
after=$(snapshot)
while [ "$after" != "$before" ] && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
	after=$(snapshot)
done
echo "bench.sh: live after:  $after"
if [ "$after" != "$before" ]; then
	echo "bench.sh: FAIL: live counters did not return to their earlier values" >&2
	[ $status -ne 0 ] || status=1
fi

# ---- optional perftest baselines -------------------------------------------------
run_perftest() {
	for t in ib_send_lat ib_write_lat ib_read_lat; do
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
	echo
	echo "perftest baselines on $dev (loopback; 8-byte messages)"
	for t in ib_send_lat ib_write_lat ib_read_lat; do
		echo "== $t"
		timeout 60 $t -d "$dev" -s 8 -n "$pt_iters" >"$tmp/$t.srv" 2>&1 &
		srv=$!
		sleep 1
		if ! timeout 60 $t -d "$dev" -s 8 -n "$pt_iters" 127.0.0.1 >"$tmp/$t.cli" 2>&1; then
			echo "perftest: $t failed:"; sed 's/^/  /' "$tmp/$t.cli"
		else
			sed -n '/#bytes/,$p' "$tmp/$t.cli"
		fi
		wait $srv 2>/dev/null || :
	done
}
if [ $perftest = 1 ] && [ $status -eq 0 ]; then
	run_perftest
fi

exit $status
