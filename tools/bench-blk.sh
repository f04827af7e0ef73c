#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Storage benchmarks in a guest with an NVMe namespace:
#
#   vm/run --kernel 6.1 --nvme 1G --timeout 900 -- tools/bench-blk.sh [-t SECONDS] [-r ROUNDS]
#
# For each of 4 KiB and 128 KiB, queue depth 1 and 16, random reads and
# random writes: the fractos volume Request (fractos-blkbench -d, through
# fractos_nvme.ko) and, on the same device, O_DIRECT io_uring
# (fractos-blkbench --raw: the local direct-I/O baseline, the same random
# pattern and clock).  The two alternate ROUNDS times (default 3), so that
# a busy host weighs on both alike; one line per run, then the ratios
# fractos/direct of IOPS and of the median latency (range over rounds).
# The volume and the raw range are 64 MiB at the start of the data area
# (1 MiB in: the adaptor's label stays intact).
set -eu
cd "$(dirname "$0")/.."
secs=3
rounds=3
while [ $# -gt 0 ]; do
	case "$1" in
	-t) secs=$2; shift ;;
	-r) rounds=$2; shift ;;
	*) echo "usage: bench-blk.sh [-t SECONDS] [-r ROUNDS]" >&2; exit 2 ;;
	esac
	shift
done
bench=tools/fractos-blkbench
fractctl=tools/fractctl
[ -x "$bench" ] || { echo "bench-blk.sh: $bench is not built (make -C tools)" >&2; exit 1; }
dev=/dev/nvme0n1
[ -e $dev ] || modprobe nvme 2>/dev/null || :
for i in 1 2 3 4 5 6 7 8 9 10; do [ -e $dev ] && break; sleep 0.5; done
[ -e $dev ] || { echo "bench-blk.sh: no $dev (vm/run --nvme SIZE)" >&2; exit 1; }
ko=$(dirname "${FRACTOS_KO:?}")/../adaptors/nvme/fractos_nvme.ko
grep -q '^fractos_nvme ' /proc/modules || insmod "$ko"
out=$(mktemp)
trap 'rm -f "$out"; $fractctl blk detach name bench >/dev/null 2>&1 || :; rmmod fractos_nvme 2>/dev/null || :' EXIT

dd if=/dev/zero of=$dev bs=64k count=1 oflag=direct status=none
$fractctl blk attach $dev name bench format >/dev/null

for r in $(seq "$rounds"); do
	for bs in 4096 131072; do
		for qd in 1 16; do
			for m in randread randwrite; do
				$fractctl blk detach name bench >/dev/null
				$bench --raw $dev -o 1M -s 64M -m $m -b $bs -q $qd -t "$secs" -j | tee -a "$out"
				$fractctl blk attach $dev name bench >/dev/null
				$bench -d bench -s 64M -m $m -b $bs -q $qd -t "$secs" -j | tee -a "$out"
			done
		done
	done
done
$fractctl -s blk list

echo "# ratios fractos/direct: IOPS (median of rounds, range) and p50 latency"
python3 - "$out" <<'PY'
import json, sys, statistics
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]
keys = sorted({(r['mode'], r['bs'], r['qd']) for r in rows})
print("%-9s %7s %3s  %9s %9s  %-22s %s" % ("mode", "bs", "qd", "fractos", "direct", "IOPS ratio (range)", "p50 ratio"))
for k in keys:
    f = [r for r in rows if (r['mode'], r['bs'], r['qd']) == k and r['path'] == 'fractos']
    d = [r for r in rows if (r['mode'], r['bs'], r['qd']) == k and r['path'] == 'direct']
    if not f or not d:
        continue
    ratios = [a['iops'] / b['iops'] for a, b in zip(f, d) if b['iops']]
    lat = [a['p50_us'] / b['p50_us'] for a, b in zip(f, d) if b['p50_us']]
    print("%-9s %7d %3d  %9.0f %9.0f  %.2f (%.2f-%.2f)%8s %.2f" % (
        k[0], k[1], k[2], statistics.median(x['iops'] for x in f),
        statistics.median(x['iops'] for x in d), statistics.median(ratios),
        min(ratios), max(ratios), "", statistics.median(lat)))
PY
