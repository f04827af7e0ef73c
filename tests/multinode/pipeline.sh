#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# pipeline (3 nodes, vm/run --nvme SIZE): the paper's end-to-end
# application (tools/fractos-facever) on three guests.  Node 3 is the
# storage node (fractos_nvme.ko, its NVMe namespace as "ssd", fractos-fsd
# serving it as fs0), node 2 the GPU node (fractos-gpud, CPU backend, as
# gpu0), node 1 the application: it generates the reference features of
# 1024 ids, puts them into the file service, then verifies 16 batches of
# 64 (id, probe) pairs in each shape:
#
#   pipeline  one DAX read per batch, into the GPU node's Memory, whose
#             continuation is the launch, whose continuation is the
#             application: node 3 -> node 2 -> node 1 (the read and the
#             launch derived once, at their owners);
#   pipefwd   the same with both derived on node 1 (fractos-facever -H):
#             the read carries its capabilities every batch (an IMPORT of
#             the GPU Memory to node 2) and node 3 invokes node 1's
#             launch, which node 1's kernel forwards to node 2;
#   star      the application reads, copies, launches and copies back;
#   nvmeof    the stack a user would build today: node 3's namespace
#             (an ext4 holding the same features) exported by nvmet-rdma,
#             mounted by node 1 over nvme-rdma and read there, then as
#             star: copy to the GPU, launch, copy back.
#
# Every verdict must equal the CPU reference.  Around each run every node
# snapshots its fabric counters (fosnet barrier carries them to node 1):
# the remote layer's messages it sent (tx_remote_msgs), the bytes it sent
# and the bytes it read from each peer (rdma_read_bytes: data flows from
# that peer to this node) and wrote into each (rdma_write_bytes: from
# this node to that peer).  Each shape runs with -n 0 (set-up and
# tear-down only) and -n 16: the difference over 16 is what a batch costs.
# For all three alike: the bytes eth0 sent and the SENDs rxe0 posted
# (control messages of fractos and of nvme-rdma).  Checked: in the
# pipeline the features go from node 3 to node 2 and never reach node 1,
# and the application wakes once per batch; in the star they cross into
# node 1 and out again, and it wakes twice; the pipeline moves fewer
# bytes than either, and sends fewer messages than the star and than
# pipefwd.  The messages, bytes and latency per batch of the
# three are printed side by side, and their latency for batches of 16, 64
# and 256 pairs.
#
# Node 1 took 390 s on a slow host when its summing up was about 1500
# processes under TCG (now one, pipeline_sum.py):
# timeout: 900
. ./lib.sh

fctl=../../tools/fractctl
fscli=../../tools/fractos-fs
gpud=../../adaptors/gpu/fractos-gpud
app=../../tools/fractos-facever
ids=1024
dim=128
bsz=64
nb=16
sizes="16 64 256"

[ "$nodes" = 3 ] || { echo "Bail out! pipeline needs 3 nodes"; exit 1; }
for i in 1 2 3; do [ "$i" = "$me" ] || add_peer "$i"; done
for i in 1 2 3; do [ "$i" = "$me" ] || wait_up "$i" 60; done

# snap: this node's "MSGS:BYTES:R1:R2:R3:WIRE:SENDS:W1:W2:W3":
# remote-layer messages sent and bytes moved (sent, read and written)
# over all its peers, the bytes read from node 1, 2 and 3; for every stack
# alike (NVMe-oF too), the bytes eth0 sent and the SENDs rxe0 posted (the
# control messages of both fractos and nvme-rdma; RDMA READs and WRITEs
# move data); then the bytes it wrote into node 1, 2 and 3's Memory
# (rdma_write_bytes: kept regions, "Kept regions" in kernel/remote/kept.c).
snap() {
	local wire sends
	wire=$(cat /sys/class/net/eth0/statistics/tx_bytes)
	sends=$(cat /sys/class/infiniband/rxe0/ports/1/hw_counters/rdma_sends)
	$fctl -j node list -s | python3 -c '
import json, sys
me = int(sys.argv[1])
msgs = moved = 0
rd = {1: 0, 2: 0, 3: 0}
wr = {1: 0, 2: 0, 3: 0}
for n in json.load(sys.stdin):
	if n["id"] == me:
		continue
	s = n["stats"]
	msgs += s["tx_remote_msgs"]
	moved += s["tx_bytes"] + s["rdma_read_bytes"] + s["rdma_write_bytes"]
	rd[n["id"]] = s["rdma_read_bytes"]
	wr[n["id"]] = s["rdma_write_bytes"]
print("%d:%d:%d:%d:%d:%s:%s:%d:%d:%d" % (msgs, moved, rd[1], rd[2], rd[3],
      sys.argv[2], sys.argv[3], wr[1], wr[2], wr[3]))' \
		"$me" "$wire" "$sends"
}

# mark TAG: every node snapshots as it enters the barrier, so the others
# first wait for node 1 at "go-RUN" and "ran-RUN" (node 1 does work
# between the runs: mounts, the application); node 1 keeps the
# snapshots in /tmp/pl.TAG
mark() {
	barrier "$1" "$(snap)" 120 > "/tmp/pl.$1"
}

# settle: up to 10 s for this node's objects to be gone (the peers and
# their connections stay), so that what the application's exit sends
# (drops, releases) is counted in the run it belongs to
settle() {
	local left
	left=$(left_but_fabric 10)
	[ -z "$left" ] || diag "node $me: still live after 10 s:$left"
}

# follow RUNS: a node other than 1 takes its snapshots around node 1's runs
follow() {
	local r
	for r in "$@"; do
		barrier "go-$r" - 300 >/dev/null
		mark "pre-$r"
		barrier "ran-$r" - 300 >/dev/null
		mark "post-$r"
	done
}

# the shapes and runs, the same list on every node (nvmeof last: node 3
# then serves its namespace over NVMe-oF instead)
runs="pipeline-0 pipeline-$nb pipefwd-0 pipefwd-$nb star-0 star-$nb"
nvmf_runs="nvmeof-0 nvmeof-$nb"
nqn=fractos-facever
mnt=/tmp/pl-mnt

case $me in
3)
	ssd_attach
	st=/tmp/fsd-pl.meta
	fsd_serve "$st"
	pid=$fsd_pid
	barrier served - 300 >/dev/null
	barrier put - 300 >/dev/null
	# shellcheck disable=SC2086
	follow $runs
	kill "$pid"
	wait "$pid" 2>/dev/null
	rm -f "$st"
	$fctl blk detach name ssd
	ok $? "node 3: detach"
	rmmod fractos_nvme
	ok $? "node 3: rmmod fractos_nvme"
	# The baseline's storage: the same features (the same generator) in a
	# file of an ext4 on the namespace, exported by nvmet-rdma on rxe0.
	mkdir -p $mnt
	ip=$(addr_of 3)
	mkfs.ext4 -q -F /dev/nvme0n1 && mount /dev/nvme0n1 $mnt &&
		$app -i $ids -D $dim gen $mnt/refs && umount $mnt &&
		nvmf_export $nqn "$ip"
	ok $? "node 3: ext4 with the features on nvme0n1, exported by nvmet-rdma at $ip:4420"
	barrier nvmf - 300 >/dev/null
	# shellcheck disable=SC2086
	follow $nvmf_runs
	barrier done - 300 >/dev/null
	nvmf_unexport $nqn
	ok $? "node 3: the NVMe-oF target removed"
	;;
2)
	# vgem's buffer objects back the device memory, as a GPU's would
	modprobe vgem 2>/dev/null
	$gpud serve -N gpu0 -w >/dev/null 2>/tmp/gpud.err &
	pid=$!
	barrier served - 300 >/dev/null
	barrier put - 300 >/dev/null
	# shellcheck disable=SC2086
	follow $runs
	barrier nvmf - 300 >/dev/null
	# shellcheck disable=SC2086
	follow $nvmf_runs
	barrier done - 300 >/dev/null
	kill "$pid"
	wait "$pid" 2>/dev/null
	[ ! -s /tmp/gpud.err ]
	ok $? "node 2: fractos-gpud said nothing on stderr $(head -c 300 /tmp/gpud.err)"
	;;
1)
	barrier served - 300 >/dev/null
	out=$($app -i $ids -D $dim gen /tmp/pl-refs 2>&1) &&
		out=$($fscli -n 3 put /tmp/pl-refs refs 2>&1)
	ok $? "node 1: the reference features of $ids ids in fs0 on node 3 ($out)"
	barrier put - 300 >/dev/null
	# run R [ARGS]: the application, between node-wide snapshots
	run() {
		local r=$1 mode=${1%-*} n=${1#*-}
		shift
		[ "$mode" = pipefwd ] && set -- -H "$@" && mode=pipeline
		barrier "go-$r" - 300 >/dev/null
		mark "pre-$r"
		$app -j -i $ids -D $dim -b $bsz -n "$n" -m "$mode" -f 3 -g 2 "$@" run refs \
			> "/tmp/pl.out.$r" 2>&1
		ok $? "node 1: ${r%-*}, $n batches: $(cat "/tmp/pl.out.$r")"
		settle
		barrier "ran-$r" - 300 >/dev/null
		mark "post-$r"
	}
	# sizes SHAPE [ARGS]: latency per batch size, 8 batches of each of
	# $sizes pairs (not counted, and no timing is checked: a benchmark's
	# figures; every verdict is)
	sizes() {
		local m=$1 b
		shift
		for b in $sizes; do
			$app -j -i $ids -D $dim -b "$b" -n 8 -m "$m" -f 3 -g 2 "$@" run refs \
				> "/tmp/pl.b$b.$m" 2>&1 &&
				python3 -c 'import json,sys; j = json.load(sys.stdin); sys.exit(j["mismatches"] != 0 or j["pairs"] != 8 * int(sys.argv[1]))' \
					"$b" < "/tmp/pl.b$b.$m"
			ok $? "node 1: $m, 8 batches of $b pairs: every verdict right"
		done
	}
	# 4 batches in flight (not counted: throughput, and every verdict;
	# the others wait at the first run's barrier meanwhile)
	for m in pipeline star; do
		$app -j -i $ids -D $dim -b $bsz -n 32 -q 4 -m $m -f 3 -g 2 run refs \
			> "/tmp/pl.q4.$m" 2>&1
		ok $? "node 1: $m, 32 batches, 4 in flight: $(cat "/tmp/pl.q4.$m")"
	done
	for m in pipeline star; do sizes $m; done
	for r in $runs; do run "$r"; done
	# The baseline: the file system of node 3's namespace over nvme-rdma.
	barrier nvmf - 300 >/dev/null
	mkdir -p $mnt
	nvmf_connect $nqn "$(addr_of 3)"
	mount -o ro "$nvmf_dev" $mnt
	ok $? "node 1: node 3's namespace over NVMe-oF ($nvmf_dev), its ext4 mounted"
	# The file system's first use reads its metadata over NVMe-oF (a
	# megabyte here): once before the counted runs, as the others' set-up
	# is warm by then.
	$app -i $ids -D $dim -b $bsz -n 0 -m nvmeof -g 2 -P $mnt/refs run refs >/dev/null 2>&1
	for r in $nvmf_runs; do run "$r" -P $mnt/refs; done
	sizes nvmeof -P $mnt/refs
	$app -j -i $ids -D $dim -b $bsz -n 32 -q 4 -m nvmeof -g 2 -P $mnt/refs run refs \
		> /tmp/pl.q4.nvmeof 2>&1
	ok $? "node 1: nvmeof, 32 batches, 4 in flight: $(cat /tmp/pl.q4.nvmeof)"
	umount $mnt
	nvmf_disconnect
	barrier done - 300 >/dev/null
	# The checks of the counters and the figures, summed up by one
	# process (pipeline_sum.py: a line "ok<TAB>RC<TAB>TEXT" or
	# "diag<TAB>TEXT" each)
	tab=$(printf '\t')
	python3 ./pipeline_sum.py --nb $nb --bsz $bsz --dim $dim --sizes "$sizes" \
		--runs "$runs $nvmf_runs" > /tmp/pl.sum 2>&1
	ok $? "node 1: summed up the runs $(grep -v "^ok$tab\|^diag$tab" /tmp/pl.sum | head -c 300)"
	while IFS="$tab" read -r kind a b; do
		case $kind in
		ok) ok "$a" "$b" ;;
		diag) diag "$a" ;;
		esac
	done < /tmp/pl.sum
	rm -f /tmp/pl-refs /tmp/pl.*
	;;
esac
finish
