#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# pipeline1 (1 node, vm/run --nvme SIZE): the face-verification
# application of pipeline.sh on one guest, for time ratios.  Three TCG
# guests on a 2-core host share its CPUs, so their latencies measure the
# scheduling of the guests as much as the stacks; here the storage
# (fractos_nvme + fractos-fsd as fs0), the GPU service (fractos-gpud, CPU
# backend, as gpu0) and the application run in one guest, the node is its
# own peer and fabric_loopback=1 sends every invocation of a Request and
# every MEMORY_COPY through the node's RDMA connection to itself (rxe0),
# as the paper's loopback measurements do (Documentation/benchmarks.rst,
# "Fabric").  The baseline's NVMe-oF is the same guest's namespace
# exported by nvmet-rdma and mounted over nvme-rdma through rxe0.
#
# What crosses the loopback fabric per batch: the pipeline, the read
# Request's invocation, its continuation (the launch) and the launch's
# (the application's), and the GPU's read of the probes; the NVMe data
# goes by the bio straight into the GPU service's Memory.  The star: every
# invocation, and the features twice (the application's copy to the GPU's
# Memory, the verdicts back).  NVMe-oF: the features by nvme-rdma, then as
# the star.  No timing is checked (a benchmark's figures); every verdict
# is.  Printed: latency p50 per batch size, batches per second with 1 and
# 4 in flight, and the star's and NVMe-oF's times over the pipeline's.
. ./lib.sh

fctl=../../tools/fractctl
fscli=../../tools/fractos-fs
gpud=../../adaptors/gpu/fractos-gpud
app=../../tools/fractos-facever
ids=1024
dim=128
sizes="16 64 256"
nqn=fractos-facever1
mnt=/tmp/pl1-mnt

[ "$nodes" = 1 ] || { echo "Bail out! pipeline1 is for one node"; exit 1; }
add_peer 1
wait_up 1 60
echo 1 > "$PARAMS/fabric_loopback"
ok $? "node 1: fabric_loopback=1: local invocations and copies go through rxe0"

ssd_attach
fsd_serve /tmp/fsd-pl1.meta
fsd=$fsd_pid
modprobe vgem 2>/dev/null
$gpud serve -N gpu0 -w >/dev/null 2>/tmp/gpud1.err &
gpid=$!
out=$($app -i $ids -D $dim gen /tmp/pl1-refs 2>&1) &&
	out=$($fscli put /tmp/pl1-refs refs 2>&1)
ok $? "node 1: the reference features of $ids ids in fs0 ($out)"
# gpud_wait [ARGS]: until a run of no batches finds gpu0 (10 s at most)
gpud_wait() {
	local i=0
	until $app -i $ids -D $dim -b 64 -n 0 "$@" run refs >/dev/null 2>&1 ||
		[ $i -ge 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}
gpud_wait -m pipeline

tx0=$(fosnet list 1)
# each MODE [ARGS]: 8 batches of each size (one of 64 first, not kept:
# the first use of every path), then 32 of 64 with 4 in flight
each() {
	local m=$1 b
	shift
	$app -j -i $ids -D $dim -b 64 -n 2 -m "$m" "$@" run refs >/dev/null 2>&1
	for b in $sizes; do
		$app -j -i $ids -D $dim -b "$b" -n 8 -m "$m" "$@" run refs \
			> "/tmp/pl1.b$b.$m" 2>&1 &&
			python3 -c 'import json,sys; j = json.load(sys.stdin); sys.exit(j["mismatches"] != 0 or j["pairs"] != 8 * int(sys.argv[1]))' \
				"$b" < "/tmp/pl1.b$b.$m"
		ok $? "node 1: $m, 8 batches of $b pairs: every verdict right"
	done
	$app -j -i $ids -D $dim -b 64 -n 32 -q 4 -m "$m" "$@" run refs > "/tmp/pl1.q4.$m" 2>&1 &&
		python3 -c 'import json,sys; j = json.load(sys.stdin); sys.exit(j["mismatches"] != 0)' \
			< "/tmp/pl1.q4.$m"
	ok $? "node 1: $m, 32 batches of 64, 4 in flight: every verdict right"
}
each pipeline
each star
tx1=$(fosnet list 1)
[ "$(kv tx_remote_msgs "$tx1")" -gt "$(kv tx_remote_msgs "$tx0")" ]
ok $? "node 1: the runs went through the loopback fabric ($(kv tx_remote_msgs "$tx0") -> $(kv tx_remote_msgs "$tx1") remote messages)"

kill "$gpid" "$fsd"
wait "$gpid" "$fsd" 2>/dev/null
$fctl blk detach name ssd && rmmod fractos_nvme
ok $? "node 1: fs0 stopped, ssd detached, fractos_nvme unloaded"

# The baseline: the same features in a file of an ext4 on the namespace,
# exported by nvmet-rdma on rxe0 and mounted from this guest over nvme-rdma.
ip=$(addr_of 1)
mkdir -p $mnt
mkfs.ext4 -q -F /dev/nvme0n1 && mount /dev/nvme0n1 $mnt &&
	$app -i $ids -D $dim gen $mnt/refs && umount $mnt &&
	nvmf_export $nqn "$ip"
ok $? "node 1: ext4 with the features on nvme0n1, exported by nvmet-rdma at $ip:4420"
nvmf_connect $nqn "$ip"
mount -o ro "$nvmf_dev" $mnt
ok $? "node 1: the namespace over NVMe-oF through rxe0 ($nvmf_dev), its ext4 mounted"
$gpud serve -N gpu0 -w >/dev/null 2>>/tmp/gpud1.err &
gpid=$!
gpud_wait -m nvmeof -P $mnt/refs
each nvmeof -P $mnt/refs
kill "$gpid"
wait "$gpid" 2>/dev/null
umount $mnt
nvmf_disconnect
nvmf_unexport $nqn
ok $? "node 1: the NVMe-oF host and target removed"
[ ! -s /tmp/gpud1.err ]
ok $? "node 1: fractos-gpud said nothing on stderr $(head -c 300 /tmp/gpud1.err)"

echo 0 > "$PARAMS/fabric_loopback"
p50() { python3 -c 'import json,sys; print("%.0f" % json.load(sys.stdin)["latency_us"]["p50"])' < "/tmp/pl1.b$1.$2"; }
bps() { python3 -c 'import json,sys; print("%.1f" % json.load(sys.stdin)["batches_per_s"])' < "$1"; }
ratio() { python3 -c 'import sys; print("%.2f" % (float(sys.argv[1]) / float(sys.argv[2])))' "$1" "$2"; }
diag "facever1: one guest, fabric_loopback=1; latency p50 us by pairs a batch (x: over the pipeline's)"
diag "facever1: pairs  pipeline      star         nvmeof"
for b in $sizes; do
	p=$(p50 "$b" pipeline) s=$(p50 "$b" star) n=$(p50 "$b" nvmeof)
	diag "$(printf 'facever1: %5s  %8s  %8s %5sx  %8s %5sx' "$b" "$p" "$s" "$(ratio "$s" "$p")" \
		"$n" "$(ratio "$n" "$p")")"
done
diag "facever1: batches/s of 64 pairs, 1 in flight (the 8 of 64) and 4 in flight (32):"
for m in pipeline star nvmeof; do
	diag "$(printf 'facever1: %-8s  %8s  %8s' $m "$(bps "/tmp/pl1.b64.$m")" "$(bps "/tmp/pl1.q4.$m")")"
done
rm -f /tmp/pl1-refs /tmp/pl1.* /tmp/fsd-pl1.meta /tmp/gpud1.err
fosnet del 1 >/dev/null 2>&1
finish
