#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Host test of tools/bench-ab.py (tools/bench.sh --ab): synthetic
# fractos-bench JSON runs of two parameter values go in; the medians, the
# ranges and the ratios to the first value must come out (of one value:
# no ratio), perftest lines stay out, and files that do not belong are
# refused.  No module needed.
# Usage: bench-ab-test.sh (from tools/)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$(dirname "$0")/tap.sh"

# run FILE COPY_US RATIO: one run whose 1 B copy took COPY_US at p50.
run() {
	cat >"$1" <<EOF
{
  "tool": "fractos-bench", "kernel": "6.1.0-56-amd64", "cpus": 2,
  "results": [
    {"name": "perftest ib_write_lat 1B", "source": "perftest", "t_p50_us": 9},
    {"name": "fabric MEMORY_COPY 1B", "t_avg_us": 1, "t_p50_us": $2},
    {"name": "fabric MEMORY_COPY 64KiB", "skipped": "not available"}
  ],
  "ratios": [
    {"name": "fabric MEMORY_COPY / ib_write_lat 1B", "from_p50": $3, "unit": "x"}
  ]
}
EOF
}

run "$tmp/ab-1-4096.json" 200 22
run "$tmp/ab-2-4096.json" 190 21
run "$tmp/ab-3-4096.json" 210 23
run "$tmp/ab-1-0.json" 400 44
run "$tmp/ab-2-0.json" 440 48
run "$tmp/ab-3-0.json" 420 46

python3 "$here/bench-ab.py" copy_inline_max 4096 0 -- "$tmp"/ab-*.json >"$tmp/out" 2>"$tmp/err"
check "it reads six runs of two values" [ $? = 0 ]
check "medians and ranges per value" \
	grep -q "fabric MEMORY_COPY 1B .*copy_inline_max=4096: 200 \[190-210\]  copy_inline_max=0: 420 \[400-440\] 2.10x" "$tmp/out"
check "the ratios too" \
	grep -q "ib_write_lat 1B .*=4096: 22 \[21-23\] .*=0: 46 \[44-48\] 2.09x" "$tmp/out"
check "perftest's own lines are not compared" sh -c "! grep -q '^  perftest' '$tmp/out'"
check "a skipped benchmark is left out" sh -c "! grep -q '64KiB' '$tmp/out'"
python3 "$here/bench-ab.py" -j copy_inline_max 4096 0 -- "$tmp"/ab-*.json >"$tmp/json"
check "-j: JSON with the ratio to the first value" python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
r = [x for x in d['results_p50_us'] if x['name'] == 'fabric MEMORY_COPY 1B'][0]
sys.exit(not (d['rounds'] == {'4096': 3, '0': 3} and abs(r['values']['0']['vs_first'] - 2.1) < 1e-9))
" "$tmp/json"
python3 "$here/bench-ab.py" copy_inline_max 4096 1 -- "$tmp"/ab-*.json >/dev/null 2>"$tmp/err"
check "a value with no run is refused" [ $? != 0 ]
cp "$tmp/ab-1-0.json" "$tmp/other.json"
python3 "$here/bench-ab.py" copy_inline_max 4096 0 -- "$tmp"/*.json >/dev/null 2>"$tmp/err"
check "a file that is not ab-ROUND-VALUE.json is refused" grep -q "other.json" "$tmp/err"
python3 "$here/bench-ab.py" copy_inline_max 4096 >/dev/null 2>&1
check "no files: usage" [ $? != 0 ]
python3 "$here/bench-ab.py" copy_inline_max 4096 -- "$tmp"/ab-*-4096.json >"$tmp/out" 2>"$tmp/err"
check "one value (rounds of one setting): medians and ranges, no ratio" \
	sh -c "grep -q 'fabric MEMORY_COPY 1B .*copy_inline_max=4096: 200 \[190-210\]\$' '$tmp/out'"
sh "$here/bench.sh" --ab copy_inline_max >/dev/null 2>"$tmp/err"
check "bench.sh --ab without a value: usage error" grep -q "needs PARAM=V1\[,V2" "$tmp/err"
sh "$here/bench.sh" --ab copy_inline_max= >/dev/null 2>"$tmp/err"
check "bench.sh --ab with an empty value: usage error" grep -q "needs PARAM=V1\[,V2" "$tmp/err"
tap_end
