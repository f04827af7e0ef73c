#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Host test of tools/bench.sh --plot (tools/bench-plot.py): synthetic
# fractos-bench JSON runs of two kernels go in; the summary must carry the
# median and the range over the runs, and gnuplot must draw one latency
# picture per kernel and the ratio bands.  No module needed.
# Usage: bench-plot-test.sh (from tools/)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$(dirname "$0")/tap.sh"

# run KERNEL FILE SCALE RATIO4K: a fabric run whose latencies are SCALE
# times a base curve and whose 4 KiB ratio is RATIO4K.
run() {
	mkdir -p "$(dirname "$2")"
	cat >"$2" <<EOF
{
  "tool": "fractos-bench", "kernel": "$1", "cpus": 2,
  "results": [
    {"name": "perftest ib_write_lat 1B", "source": "perftest", "iters": 2000, "t_avg_us": 20, "t_p50_us": $(echo "15 * $3" | bc), "t_p99_us": null},
    {"name": "perftest ib_write_lat 4KiB", "source": "perftest", "iters": 2000, "t_avg_us": 30, "t_p50_us": $(echo "25 * $3" | bc), "t_p99_us": null},
    {"name": "perftest ib_write_bw 64KiB (per MiB)", "source": "perftest", "iters": 1000, "t_avg_us": 9, "t_p50_us": 9, "t_p99_us": null},
    {"name": "fabric MEMORY_COPY 1B", "iters": 100, "t_avg_us": 900, "t_p50_us": $(echo "800 * $3" | bc), "t_p99_us": 2000},
    {"name": "fabric MEMORY_COPY 4KiB", "iters": 100, "t_avg_us": 300, "t_p50_us": $(echo "200 * $3" | bc), "t_p99_us": 500},
    {"name": "local MEMORY_COPY 1B", "iters": 100, "t_avg_us": 3, "t_p50_us": 3, "t_p99_us": 5},
    {"name": "local MEMORY_COPY 4KiB", "iters": 100, "t_avg_us": 4, "t_p50_us": 4, "t_p99_us": 6},
    {"name": "fabric MEMORY_COPY 64KiB", "skipped": "fabric copy: not available"}
  ],
  "ratios": [
    {"name": "fabric MEMORY_COPY / ib_write_lat 1B", "from_avg": 45, "from_p50": 53, "round_min": 40, "round_max": 60, "unit": "x"},
    {"name": "fabric MEMORY_COPY / ib_write_lat 4KiB", "from_avg": 10, "from_p50": $4, "round_min": 5, "round_max": 12, "unit": "x"}
  ],
  "wire": []
}
EOF
}

run 6.1.0-56-amd64 "$tmp/in/6.1-1/fabric.json" 1 8
run 6.1.0-56-amd64 "$tmp/in/6.1-2/fabric.json" 2 6
run 6.1.0-56-amd64 "$tmp/in/6.1-3/fabric.json" 3 9.5
run 6.12.95+deb12-amd64 "$tmp/in/6.12-1/fabric.json" 1 4
echo '{"path":"direct","bs":4096}' >"$tmp/in/blk.json"	# another tool's
echo 'not json' >"$tmp/in/broken.json"

sh "$here/bench.sh" --plot "$tmp/in" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "--plot exits 0" [ $rc -eq 0 ]
sum=$tmp/in/summary.txt
check "summary written" [ -s "$sum" ]
check "both kernels summarised" sh -c \
	"grep -q '^kernel 6.1.0-56-amd64: 3 run' '$sum' && grep -q '^kernel 6.12.95+deb12-amd64: 1 run' '$sum'"
# 6.1 fabric 4 KiB: 200, 400, 600 -> median 400, range 200..600
check "median and range over runs" grep -Eq '4 KiB +fabric +400.00 +200.00 +600.00 +3' "$sum"
check "perftest series" grep -Eq '1 B +perftest +30.00 +15.00 +45.00 +3' "$sum"
check "ratio band: median 8, range 6..9.5" grep -Eq '4 KiB +ratio +8.00 +6.00 +9.50 +3' "$sum"
check "skipped rows left out" sh -c "! grep -q '64 KiB' '$sum'"
check "broken file reported, not fatal" grep -q 'skipping .*broken.json' "$tmp/err"
for f in latency-6.1.0-56-amd64.svg latency-6.12.95+deb12-amd64.svg ratio.svg; do
	check "$f drawn" sh -c "grep -q '<svg' '$tmp/in/$f' && grep -q '</svg>' '$tmp/in/$f'"
done
check "latency picture names the three series" sh -c \
	"grep -q 'fabric (rxe)' '$tmp/in/latency-6.1.0-56-amd64.svg' && grep -q 'ib_write_lat' '$tmp/in/latency-6.1.0-56-amd64.svg' && grep -q 'local' '$tmp/in/latency-6.1.0-56-amd64.svg'"
check "ratio picture has a band per kernel" sh -c \
	"grep -q 'range over 3 run' '$tmp/in/ratio.svg' && grep -q 'range over 1 run' '$tmp/in/ratio.svg'"
check "no work files left" [ ! -e "$tmp/in/.plot-data" ]

mkdir "$tmp/empty"
sh "$here/bench.sh" --plot "$tmp/empty" >/dev/null 2>"$tmp/err"
rc=$?
check "no runs: exit 1 with a message" sh -c "[ $rc -eq 1 ] && grep -q 'no fractos-bench JSON' '$tmp/err'"
sh "$here/bench.sh" --plot >/dev/null 2>&1
rc=$?
check "--plot without a directory: usage error" [ $rc -eq 2 ]

tap_end
