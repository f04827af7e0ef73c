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
# The volumes are 64 MiB each, where the adaptor puts them (from 1 MiB);
# the raw and NVMe-oF range is 64 MiB at 512 MiB (needs --nvme 1G), so
# that their random writes never reach a volume (the file system's
# metadata volume lives across the runs).
#
# NVMe over Fabrics, the alternative a user would pick: the same namespace
# exported by nvmet-rdma on this guest's rxe0 (configfs) and connected with
# nvme-rdma over it (/dev/nvme-fabrics, what nvme-cli's connect writes), then
# measured like the local device (fractos-blkbench --raw on the fabric
# namespace, path "nvmf").  -F also runs fio (Debian's fio, io_uring,
# direct) on the local and the fabric namespace, a cross-check of the
# baseline's numbers.  -N leaves NVMe-oF out.
#
# The file-system service (adaptors/fs/fractos-fsd on the same device): a
# 64 MiB file, random I/O through the daemon (FS mode: fractos-blkbench -F,
# path "fs") and straight to its extent (DAX: -F --dax, path "dax").  -S
# leaves it out.
set -eu
cd "$(dirname "$0")/.."
secs=3
rounds=3
nvmf=1
fio=0
fsmode=1
while [ $# -gt 0 ]; do
	case "$1" in
	-t) secs=$2; shift ;;
	-r) rounds=$2; shift ;;
	-N) nvmf=0 ;;
	-F) fio=1 ;;
	-S) fsmode=0 ;;
	*) echo "usage: bench-blk.sh [-t SECONDS] [-r ROUNDS] [-N] [-F] [-S]" >&2; exit 2 ;;
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
# shellcheck source=tools/nvmf.sh
. "$(dirname "$0")/nvmf.sh"
nqn=fractos-bench
fabric=

# The NVMe-oF target (nvmet-rdma on rxe0's address) and its host side.
nvmf_up() {
	local ip

	ip=$(ip -4 -o addr show dev eth0 | awk '{ sub("/.*", "", $4); print $4; exit }')
	nvmf_export $nqn "$ip" "$dev" && nvmf_connect $nqn "$ip" || return 1
	fabric=$nvmf_dev
	echo "# NVMe-oF: $fabric (rdma, $ip:4420, $nqn)"
}

nvmf_down() {
	nvmf_disconnect
	nvmf_unexport $nqn
}

# fio_run LABEL DEVICE MODE BS QD: one fio run as a blkbench-like JSON row
# (O_DSYNC: its writes as durable as the others').
fio_run() {
	fio --name=b --filename="$2" --direct=1 --ioengine=io_uring --rw="$3" \
		--bs="$4" --iodepth="$5" --offset=512M --size=64M --time_based \
		--ramp_time=0.5 --runtime="$secs" --randrepeat=0 --sync=dsync \
		--output-format=json 2>/dev/null |
	python3 -c '
import json, sys
label, mode, bs, qd = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
j = json.load(sys.stdin)["jobs"][0]
d = j["read" if mode == "randread" else "write"]
p = d["clat_ns"].get("percentile", {})
print(json.dumps({"path": label, "mode": mode, "bs": bs, "qd": qd, "iops": d["iops"],
                  "p50_us": p.get("50.000000", 0) / 1000.0}))' "$1" "$3" "$4" "$5"
}

fsd=adaptors/fs/fractos-fsd
fsd_state=$(mktemp -u)
fsd_pid=

# The daemon over "bench" (again after each attach: a detach revokes its
# Requests), serving "fsb".
fsd_start() {
	local i=0

	$fsd serve bench -s "$fsd_state" -N fsb >/dev/null &
	fsd_pid=$!
	until tools/fractos-fs -s fsb ls >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 100 ] || { echo "bench-blk.sh: fractos-fsd did not start" >&2; exit 1; }
		sleep 0.1
	done
}

fsd_stop() {
	[ -z "$fsd_pid" ] || { kill "$fsd_pid" 2>/dev/null || :; wait "$fsd_pid" 2>/dev/null || :; }
	fsd_pid=
}

trap 'rm -f "$out" "$fsd_state"; fsd_stop; nvmf_down 2>/dev/null || :; $fractctl blk detach name bench >/dev/null 2>&1 || :; rmmod fractos_nvme 2>/dev/null || :' EXIT

dd if=/dev/zero of=$dev bs=64k count=1 oflag=direct status=none
if [ $nvmf = 1 ] && ! nvmf_up; then
	echo "bench-blk.sh: NVMe-oF could not be set up (-N to go without)" >&2
	exit 1
fi
$fractctl blk attach $dev name bench format >/dev/null
if [ $fsmode = 1 ]; then
	[ -x $fsd ] || { echo "bench-blk.sh: $fsd is not built (-S to go without)" >&2; exit 1; }
	$fsd format bench -s "$fsd_state" >/dev/null
fi

for r in $(seq "$rounds"); do
	for bs in 4096 131072; do
		for qd in 1 16; do
			for m in randread randwrite; do
				$fractctl blk detach name bench >/dev/null
				$bench --raw $dev -o 512M -s 64M -m $m -b $bs -q $qd -t "$secs" -j | tee -a "$out"
				[ -z "$fabric" ] ||
					$bench --raw "$fabric" -o 512M -s 64M -m $m -b $bs -q $qd -t "$secs" -j -l nvmf |
					tee -a "$out"
				if [ $fio = 1 ]; then
					fio_run fio-direct $dev $m $bs $qd | tee -a "$out"
					[ -z "$fabric" ] || fio_run fio-nvmf "$fabric" $m $bs $qd | tee -a "$out"
				fi
				$fractctl blk attach $dev name bench >/dev/null
				$bench -d bench -s 64M -m $m -b $bs -q $qd -t "$secs" -j | tee -a "$out"
				if [ $fsmode = 1 ]; then
					fsd_start
					$bench -F fsb -s 64M -m $m -b $bs -q $qd -t "$secs" -j | tee -a "$out"
					$bench -F fsb --dax -s 64M -m $m -b $bs -q $qd -t "$secs" -j | tee -a "$out"
					fsd_stop
				fi
			done
		done
	done
done
$fractctl -s blk list

echo "# ratios of each fractos path (volume Request, FS mode, DAX) to each baseline:"
echo "# IOPS (median of rounds, range over rounds) and p50 latency"
python3 - "$out" <<'PY'
import json, sys, statistics
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]
keys = sorted({(r['mode'], r['bs'], r['qd']) for r in rows})
bases = [b for b in ('direct', 'nvmf', 'fio-direct', 'fio-nvmf') if any(r['path'] == b for r in rows)]
print("%-9s %7s %3s %-7s %-10s %9s %9s  %-20s %s" % ("mode", "bs", "qd", "path", "vs", "IOPS",
                                                     "baseline", "IOPS ratio (range)", "p50 ratio"))
for k in keys:
    for p in ('fractos', 'fs', 'dax'):
        f = [r for r in rows if (r['mode'], r['bs'], r['qd']) == k and r['path'] == p]
        for b in bases:
            d = [r for r in rows if (r['mode'], r['bs'], r['qd']) == k and r['path'] == b]
            if not f or not d:
                continue
            ratios = [x['iops'] / y['iops'] for x, y in zip(f, d) if y['iops']]
            lat = [x['p50_us'] / y['p50_us'] for x, y in zip(f, d) if y['p50_us']]
            if not ratios:
                continue
            print("%-9s %7d %3d %-7s %-10s %9.0f %9.0f  %.2f (%.2f-%.2f)%6s %.2f" % (
                k[0], k[1], k[2], p, b, statistics.median(x['iops'] for x in f),
                statistics.median(x['iops'] for x in d), statistics.median(ratios),
                min(ratios), max(ratios), "", statistics.median(lat) if lat else 0))
PY
