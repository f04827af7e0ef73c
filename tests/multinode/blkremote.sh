#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# blkremote (2 nodes, vm/run --nvme 1G): a benchmark, not in the suite.
# A remote client's volume I/O against NVMe over Fabrics on the same link:
#
#   vm/run --kernel 6.1 --nodes 2 --smp 1 --nvme 1G --timeout 1800 -- \
#	tests/multinode/run.sh blkremote
#
# Node 2 owns the NVMe namespace: fractos_nvme.ko attaches it as "ssd" and
# nvmet-rdma exports it on rxe0.  Node 1 is the client, and its Memory is
# on node 1: each fractos I/O is an INVOKE of node 2's volume Request
# whose bytes cross the fabric (node 2 stages them, one RDMA transfer)
# and whose answer is node 1's continuation (fractos-blkbench -d ssd -n 2,
# path "remote"; with -A, path "noack", the client's INVOKE asks for no
# ACK, as the adaptor's answer does in both).  The alternative is what a user would build today: the
# namespace over nvme-rdma (fractos-blkbench --raw on it, path "nvmf", the
# same random pattern and clock).  Each covers 16 MiB: a volume of that
# size, and the range at 512 MiB for NVMe-oF, away from the volumes.  The
# three alternate in every one of 3 rounds, 3 s a run (BLK_ROUNDS,
# BLK_SECS): 4 KiB and 128 KiB, queue depth 1 and 16, random reads and
# random writes.  Every run must succeed (TAP); the ratios remote/nvmf of
# IOPS and of p50 latency (medians over rounds, with their ranges), and
# the SENDs and packets rxe0 carried per I/O, are printed as diagnostics.  Nothing is checked of the times.
#
# timeout: 1500
. ./lib.sh
# shellcheck source=tools/nvmf.sh
. ../../tools/nvmf.sh

fctl=../../tools/fractctl
bench=../../tools/fractos-blkbench
nqn=fractos-blkremote
secs=${BLK_SECS:-3}
rounds=${BLK_ROUNDS:-3}
out=/tmp/blkremote.json
hw=/sys/class/infiniband/rxe0/ports/1/hw_counters

# run LABEL ARGS...: one fractos-blkbench run, a JSON row in $out, with
# what rxe0 sent and received per I/O meanwhile (both kinds of traffic go
# through it alone during a run, the fabric's heartbeats aside).
run() {
	local l=$1
	shift
	$bench "$@" -j -l "$l" -c $hw/rdma_sends -c $hw/rdma_recvs \
		-c $hw/sent_pkts -c $hw/rcvd_pkts >> $out
}

[ "$nodes" = 2 ] || { echo "Bail out! blkremote needs 2 nodes"; exit 1; }
# BLK_COPY_CACHE_MS=N: copy_cache_ms on both nodes for the run (default
# 1000; 0 for none).  With kept regions ("Kept regions" in
# kernel/remote/kept.c) the storage node writes the client's Memory with
# RDMA WRITEs, and reads it for writes with RDMA READs, without a message.
if [ -n "${BLK_COPY_CACHE_MS:-}" ]; then
	cache0=$(cat "$PARAMS/copy_cache_ms")
	echo "$BLK_COPY_CACHE_MS" > "$PARAMS/copy_cache_ms"
	rc=$?
	ok $rc "node $me: copy_cache_ms=$BLK_COPY_CACHE_MS"
fi

case $me in
2)
	# Node 2 trusts node 1's uids: root there may look up "ssd", which
	# the adaptor publishes for uid 0 only.
	o=$($fctl node add 1 "$(addr_of 1)" trust-uids 2>&1)
	ok $? "node 2: add node 1, trusting its uids $o"
	wait_up 1 60
	ssd_attach
	nvmf_export $nqn "$(addr_of 2)"
	ok $? "node 2: /dev/nvme0n1 exported by nvmet-rdma at $(addr_of 2):4420"
	barrier ready - 300 >/dev/null
	barrier done - 3000 >/dev/null
	nvmf_unexport $nqn
	ok $? "node 2: NVMe-oF export removed"
	$fctl blk detach name ssd
	ok $? "node 2: detach"
	rmmod fractos_nvme
	ok $? "node 2: rmmod fractos_nvme"
	;;
1)
	add_peer 2
	wait_up 2 60
	barrier ready - 300 >/dev/null
	nvmf_connect $nqn "$(addr_of 2)"
	ok $? "node 1: node 2's namespace over nvme-rdma ($nvmf_dev)"
	: > $out
	for r in $(seq "$rounds"); do
		for bs in 4096 131072; do
			for qd in 1 16; do
				for m in randread randwrite; do
					run nvmf --raw "$nvmf_dev" -o 512M -s 16M -m $m \
						-b $bs -q $qd -t "$secs"
					ok $? "round $r: nvmf $m $bs B qd $qd"
					run remote -d ssd -n 2 -s 16M -m $m -b $bs -q $qd \
						-t "$secs"
					ok $? "round $r: remote volume $m $bs B qd $qd"
					run noack -d ssd -n 2 -A -s 16M -m $m -b $bs \
						-q $qd -t "$secs"
					ok $? "round $r: remote volume, no ACK, $m $bs B qd $qd"
				done
			done
		done
	done
	nvmf_disconnect
	barrier done - 3000 >/dev/null
	sed 's/^/# /' $out
	diag "remote volume (client Memory on node 1, device on node 2) / NVMe-oF"
	diag "(nvme-rdma to nvmet-rdma), same link, $rounds rounds of $secs s, $(uname -r)"
	python3 - "$out" <<'PY' | sed 's/^/# /'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]
keys = sorted({(r['mode'], r['bs'], r['qd']) for r in rows})
print("%-9s %7s %3s %9s %9s  %-18s %9s %9s  %-18s %s" % (
    "mode", "bs", "qd", "IOPS", "nvmf", "IOPS ratio (range)",
    "p50 us", "nvmf", "p50 ratio (range)", "msgs/pkts per I/O, nvmf"))
for path, k in [(p, k) for p in ('remote', 'noack') for k in keys]:
    if k == keys[0]:
        print("path %s:" % path)
    f = [r for r in rows if (r['mode'], r['bs'], r['qd']) == k and r['path'] == path]
    b = [r for r in rows if (r['mode'], r['bs'], r['qd']) == k and r['path'] == 'nvmf']
    io = [x['iops'] / y['iops'] for x, y in zip(f, b) if y['iops']]
    lat = [x['p50_us'] / y['p50_us'] for x, y in zip(f, b) if y['p50_us']]
    if not io or not lat:
        continue
    med = lambda rs, key: statistics.median(x[key] for x in rs)
    msgs = lambda rs: med(rs, 'rdma_sends_per_io') + med(rs, 'rdma_recvs_per_io')
    pkts = lambda rs: med(rs, 'sent_pkts_per_io') + med(rs, 'rcvd_pkts_per_io')
    print("%-9s %7d %3d %9.0f %9.0f  %.2f (%.2f-%.2f)  %9.0f %9.0f  %.2f (%.2f-%.2f)  %4.1f/%5.1f, %4.1f/%5.1f" % (
        k[0], k[1], k[2], med(f, 'iops'), med(b, 'iops'), statistics.median(io),
        min(io), max(io), med(f, 'p50_us'), med(b, 'p50_us'),
        statistics.median(lat), min(lat), max(lat), msgs(f), pkts(f), msgs(b), pkts(b)))
PY
	;;
esac
# The parameter goes back to what it was (run.sh waits for idle kept
# regions to be released before it counts live objects).
[ -z "${BLK_COPY_CACHE_MS:-}" ] || echo "$cache0" > "$PARAMS/copy_cache_ms"
finish
